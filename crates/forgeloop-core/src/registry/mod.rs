//! The ChatGPT Project registry (design §5.1, design §12.5): which ChatGPT Project a GitHub
//! repository's WebGPT work lives in.
//!
//! On disk it is the reference tool's layout, so both tools share one registry:
//! `<registry>/<owner>/<repo>.json` holds `{"repository","project_url","project_name"}`
//! (lowercase names), and `<registry>/<owner>/<repo>/sources.json` is the Project's source
//! manifest. Records are published with atomic create-if-absent, so concurrent binds can
//! never overwrite each other; a record that cannot be read is an error, never "absent".

pub mod key;
pub mod record;
pub mod sources;
pub mod urls;

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::domain::status::Status;
use crate::domain::word::Word;
use crate::store::atomic::{create_new_atomic, is_temp_name, remove_stale_temps, sync_dir};
use crate::store::journal::JournalError;
use crate::store::layout::LayoutError;
use crate::store::lock::LockError;
use crate::store::private;

pub use key::{KeyError, RepoKey};
pub use record::{Record, RecordError};
pub use sources::SourcesError;
pub use urls::{ConversationUrl, ProjectUrl, UrlError};

/// Why a registry command failed; its [`status`](RegistryError::status) word says which kind.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The repository name is not a valid registry key.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The Project or conversation URL is not one forgeloop accepts.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The Project name given to `bind` is unusable (blank, too long, control characters).
    #[error("{0}")]
    Name(RecordError),
    /// `hint`: how to remove it ([`repair_hint`]), made when the record was read.
    #[error(
        "the registry record {path} is unusable: {source}. forgeloop never treats a broken record as absent: {hint}"
    )]
    Record {
        /// The record file.
        path: PathBuf,
        /// What is wrong with it.
        source: RecordError,
        /// How to remove it.
        hint: String,
    },
    /// A record the reference tool accepted under a name GitHub never allows.
    #[error(
        "{key_error}. The registry holds {path} for it, which the reference tool accepted, but no GitHub repository can have this name, so no PR will ever match it: {hint}"
    )]
    Unusable {
        /// The GitHub rule the name breaks.
        key_error: KeyError,
        /// The record file.
        path: PathBuf,
        /// How to remove it.
        hint: String,
    },
    /// Reading or writing a registry file failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done, in words.
        action: &'static str,
        /// The file or directory it was done to.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// `bind` of a repository already linked to another Project: never overwritten.
    #[error(
        "{repository} is already linked to another ChatGPT Project ({bound_url}, project {bound_name:?}); the mapping must be resolved explicitly: if {requested_url} is right, run `forgeloop project unbind --repository {repository} --project-url {bound_url}` and bind again"
    )]
    AlreadyLinked {
        /// The repository (`owner/repo`).
        repository: String,
        /// The Project it is linked to.
        bound_url: String,
        /// That Project's name.
        bound_name: String,
        /// The Project `bind` was asked for.
        requested_url: String,
    },
    /// A command that needs the repository's Project found no record.
    #[error(
        "{repository} is not linked to a ChatGPT Project; the repository must be linked (`forgeloop project lookup`, then `forgeloop project bind`) before {action}"
    )]
    NotLinked {
        /// The repository (`owner/repo`).
        repository: String,
        /// What needs the link, in words.
        action: &'static str,
    },
    /// `unbind` of an unusable record with a URL other than the one stored in it.
    #[error(
        "the unusable record {path} is removed only with the exact project_url stored in it, {stored:?}; nothing was removed"
    )]
    UnusableMismatch {
        /// The unusable record.
        path: PathBuf,
        /// The `project_url` stored in it, which `unbind` must be given.
        stored: String,
    },
    /// `unbind` with the URL of a Project the repository is not linked to.
    #[error(
        "{repository} is linked to {bound_url} (project {bound_id}), not to Project {given_id}; nothing was removed. Pass the currently bound Project URL to unbind it"
    )]
    UnbindMismatch {
        /// The repository (`owner/repo`).
        repository: String,
        /// The Project it is linked to.
        bound_url: String,
        /// That Project's id.
        bound_id: String,
        /// The id of the Project `unbind` was given.
        given_id: String,
    },
    /// Another process changed the record during `bind` or `unbind`; nothing was changed.
    #[error(
        "the registry record {path} changed while forgeloop was {action}; nothing was changed by this run: look it up and try again"
    )]
    Changed {
        /// The record file.
        path: PathBuf,
        /// What forgeloop was doing (`binding`, `unbinding`).
        action: &'static str,
    },
    /// `project attach` named a task state that does not exist (the path); it creates none.
    #[error("no task state at {0}; attach merges the mapping into an existing JSON task state and creates nothing")]
    StateMissing(PathBuf),
    /// `project attach` could not read the task state, or it is not JSON.
    #[error("cannot read the task state {path}: {reason}")]
    StateRead {
        /// The task state.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// `project attach` refused what the task state holds (another binding, a bad field).
    #[error("{reason} (task state {path}); nothing was changed")]
    Task {
        /// The task state.
        path: PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// `project attach` could not write the task state back.
    #[error("cannot write the task state {path}: {source}")]
    StateWrite {
        /// The task state.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The task state's path is not one a cycle may have.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A lock could not be taken: the cycle is busy (`CYCLE_BUSY`), or locking failed.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Appending the `attached` event to the cycle's journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A source-manifest problem (`BLOCKED_PROJECT_SOURCES`).
    #[error(transparent)]
    Sources(#[from] SourcesError),
}

impl RegistryError {
    /// The `status` word: a busy cycle is `CYCLE_BUSY` (as everywhere in forgeloop),
    /// manifest problems are `BLOCKED_PROJECT_SOURCES`, everything else is the reference
    /// tool's `BLOCKED_PROJECT_UNAVAILABLE`.
    pub fn status(&self) -> Word {
        match self {
            RegistryError::Lock(LockError::Busy { .. }) => Word::CycleBusy,
            RegistryError::Sources(_) => Word::Cycle(Status::BlockedProjectSources),
            _ => Word::Cycle(Status::BlockedProjectUnavailable),
        }
    }

    /// The pid holding a busy cycle, for the error document.
    pub fn busy_pid(&self) -> Option<u32> {
        match self {
            RegistryError::Lock(LockError::Busy { pid, .. }) => *pid,
            _ => None,
        }
    }
}

/// How to get rid of a record that cannot be used: `unbind` takes it with the exact
/// `project_url` stored in it (even one that is not valid), so nothing else is removed.
fn repair_hint(path: &Path, bytes: &[u8]) -> String {
    let repo = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let owner = path.parent().and_then(Path::file_name).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let url =
        stored_project_url(bytes).map_or_else(|| "<the project_url stored in it>".to_owned(), |u| format!("{u:?}"));
    format!(
        "remove it with `forgeloop project unbind --repository {owner}/{repo} --project-url {url}`, then bind the right repository with the Project URL as the browser shows it"
    )
}

/// The `project_url` string a record holds, valid or not.
fn stored_project_url(bytes: &[u8]) -> Option<String> {
    let value = serde_json::from_slice::<serde_json::Value>(bytes).ok()?;
    value.get("project_url")?.as_str().map(str::to_owned)
}

impl RegistryError {
    /// The error for a record stored under a name GitHub never allows (read once, for its URL).
    pub fn unusable(key_error: KeyError, path: PathBuf) -> RegistryError {
        let hint = repair_hint(&path, &fs::read(&path).unwrap_or_default());
        RegistryError::Unusable { key_error, path, hint }
    }
}

/// The result of `bind`: the stored record (which may be the pre-existing one) and, when
/// the request differed from it in a way that was not applied, a note saying so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The record now stored.
    pub record: Record,
    /// This call created it (`false`: it was there already).
    pub created: bool,
    /// What in the request differed from the stored record and was not applied.
    pub note: Option<String>,
}

/// One row of `project list`: a readable record or the reason it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// `owner/repo` as derived from the file's path.
    pub repository: String,
    /// The record file.
    pub path: PathBuf,
    /// The record, or why it cannot be used.
    pub outcome: Result<Record, String>,
}

static ASIDE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A registry rooted at a directory (which need not exist: lookups never create it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    root: PathBuf,
}

impl Registry {
    /// The registry at `root`; nothing is created until a record is written.
    pub fn new(root: impl Into<PathBuf>) -> Registry {
        Registry { root: root.into() }
    }

    /// The registry's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<registry>/<owner>/`: the directory of an owner's records.
    pub fn owner_dir(&self, key: &RepoKey) -> PathBuf {
        self.root.join(key.owner())
    }

    fn record_path(&self, key: &RepoKey) -> PathBuf {
        self.owner_dir(key).join(format!("{}.json", key.repo()))
    }

    /// `<owner>/<repo>/`: the repository's own files (the source manifest).
    pub fn repo_dir(&self, key: &RepoKey) -> PathBuf {
        self.owner_dir(key).join(key.repo())
    }

    /// The record for `key`, `None` when there is none. Never creates anything.
    pub fn lookup(&self, key: &RepoKey) -> Result<Option<Record>, RegistryError> {
        Ok(self.read(key)?.map(|(record, _)| record))
    }

    /// For a name [`RepoKey`] refuses: the file of a record the reference tool may have stored
    /// under its looser rule, when one exists (so `lookup` can say what is wrong with it).
    pub fn unusable_file(&self, text: &str) -> Option<PathBuf> {
        let (owner, repo) = key::reference_key(text)?;
        let path = self.root.join(owner).join(format!("{repo}.json"));
        path.is_file().then_some(path)
    }

    /// Removes an unusable record (a name GitHub never allows, or contents that do not
    /// parse) when `url_text` is exactly the `project_url` stored in it.
    pub fn remove_unusable(&self, path: &Path, url_text: &str) -> Result<String, RegistryError> {
        let io_err = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| RegistryError::Io { action, path, source }
        };
        let bytes = fs::read(path).map_err(io_err("read the registry record", path))?;
        let stored = stored_project_url(&bytes);
        if stored.as_deref() != Some(url_text) {
            return Err(RegistryError::UnusableMismatch {
                path: path.to_path_buf(),
                stored: stored.unwrap_or_else(|| "(none)".into()),
            });
        }
        let aside = path.with_file_name(format!(
            ".{}.tmp-{}-{}-unbind",
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            std::process::id(),
            ASIDE_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::rename(path, &aside).map_err(io_err("remove the registry record", path))?;
        if fs::read(&aside).ok().as_deref() != Some(bytes.as_slice()) {
            let _ = fs::hard_link(&aside, path);
            let _ = fs::remove_file(&aside);
            return Err(RegistryError::Changed { path: path.to_path_buf(), action: "unbinding" });
        }
        fs::remove_file(&aside).map_err(io_err("remove the registry record", &aside))?;
        if let Some(dir) = path.parent() {
            let _ = sync_dir(dir);
        }
        Ok(url_text.to_owned())
    }

    /// Like [`Registry::lookup`], but a missing record is an error naming `action`.
    pub fn require(&self, key: &RepoKey, action: &'static str) -> Result<Record, RegistryError> {
        self.lookup(key)?.ok_or_else(|| RegistryError::NotLinked { repository: key.to_string(), action })
    }

    fn read(&self, key: &RepoKey) -> Result<Option<(Record, Vec<u8>)>, RegistryError> {
        let path = self.record_path(key);
        let Some(bytes) = read_capped(&path)? else { return Ok(None) };
        match Record::parse(&bytes, key) {
            Ok(record) => Ok(Some((record, bytes))),
            Err(source) => {
                let hint = repair_hint(&path, &bytes);
                Err(RegistryError::Record { path, source, hint })
            }
        }
    }

    /// Publishes `key → url, name` unless a record exists (design §12.8 bind, in its
    /// validation order: key, existing record, URL, name). The same Project again is
    /// success with the stored record; a different Project is refused. `name` is stored
    /// trimmed.
    pub fn bind(&self, key: &RepoKey, url: &str, name: &str) -> Result<Bound, RegistryError> {
        let existing = self.read(key)?;
        let url = ProjectUrl::parse(url)?;
        let name = record::clean_name(name).map_err(RegistryError::Name)?;
        if let Some((record, _)) = existing {
            return same_project(key, record, &url, &name);
        }
        let path = self.record_path(key);
        let owner_dir = self.owner_dir(key);
        let io_err = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| RegistryError::Io { action, path, source }
        };
        let created_dirs = !owner_dir.is_dir();
        private::create_dir_all(&owner_dir).map_err(io_err("create the registry directory", &owner_dir))?;
        if created_dirs {
            // Make the new owner directory itself durable, not just the record inside it.
            let _ = sync_dir(&self.root);
        }
        remove_stale_temps(&owner_dir);
        let record = Record::new(key, &url, &name);
        let created =
            create_new_atomic(&path, &record.to_bytes()).map_err(io_err("publish the registry record", &path))?;
        if created {
            return Ok(Bound { record, created: true, note: None });
        }
        // Someone else published first: their record stands; compare by Project.
        match self.read(key)? {
            Some((winner, _)) => same_project(key, winner, &url, &name),
            None => Err(RegistryError::Changed { path, action: "binding" }),
        }
    }

    /// Removes the record, only if it is bound to the Project `url` names (compared by
    /// Project ID), so nothing is unbound by accident. Returns the removed record.
    ///
    /// The record is first renamed aside and re-checked, so a record that a concurrent
    /// unbind + bind replaced in between is put back instead of being removed.
    pub fn unbind(&self, key: &RepoKey, url: &str) -> Result<Record, RegistryError> {
        let url = ProjectUrl::parse(url)?;
        let path = self.record_path(key);
        let (record, bytes) =
            self.read(key)?.ok_or(RegistryError::NotLinked { repository: key.to_string(), action: "unbinding it" })?;
        let bound_id = record.project_id();
        if bound_id != url.id() {
            return Err(RegistryError::UnbindMismatch {
                repository: key.to_string(),
                bound_url: record.project_url,
                bound_id,
                given_id: url.id().to_owned(),
            });
        }
        let owner_dir = self.owner_dir(key);
        remove_stale_temps(&owner_dir);
        let aside = owner_dir.join(format!(
            ".{}.json.tmp-{}-{}-unbind",
            key.repo(),
            std::process::id(),
            ASIDE_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let io_err = |action, path: PathBuf| move |source| RegistryError::Io { action, path, source };
        match fs::rename(&path, &aside) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(RegistryError::Changed { path, action: "unbinding" });
            }
            Err(err) => return Err(io_err("remove the registry record", path)(err)),
        }
        let moved = fs::read(&aside).map_err(io_err("read the registry record", aside.clone()))?;
        if moved == bytes {
            fs::remove_file(&aside).map_err(io_err("remove the registry record", aside.clone()))?;
            sync_dir(&owner_dir).map_err(io_err("sync the registry directory", owner_dir.clone()))?;
            return Ok(record);
        }
        // Not the record we checked: put it back (only if nothing new appeared meanwhile).
        let restored = fs::hard_link(&aside, &path);
        let _ = fs::remove_file(&aside);
        let _ = sync_dir(&owner_dir);
        match restored {
            Ok(()) => Err(RegistryError::Changed { path, action: "unbinding" }),
            Err(source) => Err(RegistryError::Io { action: "restore the concurrently changed record", path, source }),
        }
    }

    /// Every record in the registry, sorted by repository; unreadable ones carry their
    /// error. A missing registry is empty (and is not created).
    pub fn list(&self) -> Result<Vec<Listed>, RegistryError> {
        let owners = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(RegistryError::Io { action: "read the registry", path: self.root.clone(), source });
            }
        };
        let mut rows = Vec::new();
        for owner in owners.flatten() {
            let owner_name = owner.file_name().to_string_lossy().into_owned();
            if owner_name.starts_with('.') || !owner.path().is_dir() {
                continue;
            }
            let Ok(files) = fs::read_dir(owner.path()) else {
                rows.push(Listed {
                    repository: format!("{owner_name}/*"),
                    path: owner.path(),
                    outcome: Err("the owner directory cannot be read".into()),
                });
                continue;
            };
            for file in files.flatten() {
                let file_name = file.file_name().to_string_lossy().into_owned();
                let Some(stem) = file_name.strip_suffix(".json") else { continue };
                if file_name.starts_with('.') || is_temp_name(&file_name) || file.path().is_dir() {
                    continue;
                }
                rows.push(self.listed(&owner_name, stem, file.path()));
            }
        }
        rows.sort_by(|a, b| a.repository.cmp(&b.repository).then_with(|| a.path.cmp(&b.path)));
        Ok(rows)
    }

    fn listed(&self, owner: &str, stem: &str, path: PathBuf) -> Listed {
        let repository = format!("{owner}/{stem}");
        let outcome = match RepoKey::parse(&repository) {
            Err(key_error) => Err(RegistryError::unusable(key_error, path.clone()).to_string()),
            Ok(key) if key.to_string() != repository => {
                Err(format!("the path is not lowercase; lookups of {key} read {}", self.record_path(&key).display()))
            }
            Ok(key) => match self.read(&key) {
                Ok(Some((record, _))) => Ok(record),
                Ok(None) => Err("the record vanished while listing".into()),
                Err(err @ RegistryError::Record { .. }) => Err(err.to_string()),
                Err(err) => Err(err.to_string()),
            },
        };
        Listed { repository, path, outcome }
    }
}

/// Compares a stored record with a bind request by Project ID.
fn same_project(key: &RepoKey, stored: Record, url: &ProjectUrl, name: &str) -> Result<Bound, RegistryError> {
    if stored.project_id() != url.id() {
        return Err(RegistryError::AlreadyLinked {
            repository: key.to_string(),
            bound_url: stored.project_url,
            bound_name: stored.project_name,
            requested_url: url.as_str().to_owned(),
        });
    }
    let note = (stored.project_name.trim() != name).then(|| {
        format!(
            "{key} was already linked to this Project under the name {:?}; the stored name was kept, not {name:?}. If the Project was renamed, unbind and bind again to record the new name",
            stored.project_name
        )
    });
    Ok(Bound { record: stored, created: false, note })
}

/// Reads a small file, `None` when it does not exist; anything else unreadable is an error.
pub(crate) fn read_capped(path: &Path) -> Result<Option<Vec<u8>>, RegistryError> {
    let io_err = |source| RegistryError::Io { action: "read the registry record", path: path.to_path_buf(), source };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_err(err)),
    };
    let mut bytes = Vec::new();
    file.take(record::MAX_RECORD_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(io_err)?;
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://chatgpt.com/g/g-p-example/project";

    fn key(text: &str) -> RepoKey {
        RepoKey::parse(text).unwrap()
    }

    #[test]
    fn lookup_of_a_missing_registry_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path().join("registry"));
        assert_eq!(registry.lookup(&key("acme/widget")).unwrap(), None);
        assert!(!registry.root().exists());
        assert!(registry.list().unwrap().is_empty());
    }

    #[test]
    fn bind_publishes_once_and_reports_a_different_name() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path());
        let k = key("Acme/Widget");
        let first = registry.bind(&k, URL, "  Widget research ").unwrap();
        assert!(first.created && first.note.is_none());
        assert_eq!(first.record.project_name, "Widget research");
        let bytes = fs::read(registry.record_path(&k)).unwrap();
        let again = registry.bind(&k, "https://chatgpt.com/g/g-p-example/project/", "Widget research").unwrap();
        assert!(!again.created && again.note.is_none());
        assert_eq!(again.record.project_url, URL, "the stored spelling wins");
        let renamed = registry.bind(&k, URL, "Renamed").unwrap();
        assert!(renamed.note.unwrap().contains("Renamed"));
        assert_eq!(renamed.record.project_name, "Widget research");
        let other = registry.bind(&k, "https://chatgpt.com/g/g-p-other/project", "Other").unwrap_err();
        assert!(matches!(other, RegistryError::AlreadyLinked { .. }), "{other}");
        assert_eq!(fs::read(registry.record_path(&k)).unwrap(), bytes);
    }

    #[test]
    fn unbind_needs_the_bound_project_and_then_allows_a_rebind() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path());
        let k = key("acme/widget");
        assert!(matches!(registry.unbind(&k, URL), Err(RegistryError::NotLinked { .. })));
        registry.bind(&k, URL, "Widget").unwrap();
        let wrong = registry.unbind(&k, "https://chatgpt.com/g/g-p-other/project").unwrap_err();
        assert!(matches!(wrong, RegistryError::UnbindMismatch { .. }), "{wrong}");
        assert!(registry.lookup(&k).unwrap().is_some());
        let removed = registry.unbind(&k, "https://chatgpt.com/g/g-p-example/project/").unwrap();
        assert_eq!(removed.project_url, URL);
        assert_eq!(registry.lookup(&k).unwrap(), None);
        assert_eq!(fs::read_dir(registry.owner_dir(&k)).unwrap().count(), 0, "no temp file is left");
        registry.bind(&k, "https://chatgpt.com/g/g-p-other/project", "Other").unwrap();
        assert_eq!(registry.lookup(&k).unwrap().unwrap().project_id(), "g-p-other");
    }

    #[test]
    fn stale_temps_are_removed_and_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path());
        let k = key("acme/widget");
        fs::create_dir_all(registry.owner_dir(&k)).unwrap();
        let stale = registry.owner_dir(&k).join(".widget.json.tmp-999999999-0");
        fs::write(&stale, b"{}").unwrap();
        assert!(registry.list().unwrap().is_empty());
        registry.bind(&k, URL, "Widget").unwrap();
        assert!(!stale.exists());
        assert_eq!(registry.list().unwrap().len(), 1);
    }

    #[test]
    fn list_reports_invalid_records_with_their_error() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path());
        registry.bind(&key("acme/widget"), URL, "Widget").unwrap();
        registry.bind(&key("acme/gadget"), URL, "Widget").unwrap();
        fs::write(dir.path().join("acme/broken.json"), b"{\"repository\":").unwrap();
        fs::write(
            dir.path().join("acme/moved.json"),
            format!(r#"{{"repository":"acme/widget","project_url":"{URL}","project_name":"x"}}"#),
        )
        .unwrap();
        fs::create_dir_all(dir.path().join("Acme")).unwrap();
        fs::write(dir.path().join("Acme/Upper.json"), b"{}").unwrap();
        fs::create_dir_all(dir.path().join("acme/widget")).unwrap();
        fs::write(dir.path().join("acme/widget/sources.json"), b"{}").unwrap();
        let rows = registry.list().unwrap();
        let names: Vec<_> = rows.iter().map(|r| r.repository.as_str()).collect();
        assert_eq!(names, ["Acme/Upper", "acme/broken", "acme/gadget", "acme/moved", "acme/widget"]);
        assert!(rows[0].outcome.as_ref().unwrap_err().contains("lowercase"));
        assert!(rows[1].outcome.is_err());
        assert!(rows[2].outcome.is_ok(), "one Project may serve several repositories");
        assert!(rows[3].outcome.as_ref().unwrap_err().contains("acme/widget"));
        assert!(rows[4].outcome.is_ok());
    }

    #[test]
    fn a_corrupt_record_blocks_bind_and_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path());
        let k = key("acme/widget");
        fs::create_dir_all(registry.owner_dir(&k)).unwrap();
        fs::write(registry.record_path(&k), b"").unwrap();
        assert!(matches!(registry.lookup(&k), Err(RegistryError::Record { .. })));
        assert!(matches!(registry.bind(&k, URL, "W"), Err(RegistryError::Record { .. })));
        assert_eq!(fs::read(registry.record_path(&k)).unwrap(), b"");
    }
}
