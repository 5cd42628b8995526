//! The per-repository source manifest (design §5.1, design §12.10):
//! `<registry>/<owner>/<repo>/sources.json`, the coordinator's record of what it added to
//! the ChatGPT Project's Sources and whether the upload was seen in the browser.
//!
//! Items are never deleted: a replaced source is `superseded`. Every change holds a lock on
//! the manifest and is written atomically, so concurrent agents never lose an item.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::redact::Redactor;
use crate::store::atomic::{remove_stale_temps, write_atomic};
use crate::store::layout::expand_tilde;
use crate::store::lock::FileLock;

use super::{Registry, RegistryError, RepoKey};

/// The manifest's file name inside `<registry>/<owner>/<repo>/`.
pub const MANIFEST_NAME: &str = "sources.json";
const LOCK_NAME: &str = ".sources.lock";
/// A manifest larger than this is refused rather than read into memory.
const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// Why a source manifest could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum SourcesError {
    /// The manifest exists but is not one: bad JSON, too large, another repository's, a
    /// repeated id.
    #[error(
        "the source manifest {path} is unusable: {reason}; forgeloop never treats a broken manifest as empty: fix it by hand"
    )]
    Corrupt {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing the manifest failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done, in words.
        action: &'static str,
        /// The file it was done to.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// `verify` or `supersede` named an id the manifest does not hold.
    #[error("no source {id:?} in the manifest of {repository}; `forgeloop project sources list` shows the ids")]
    NoItem {
        /// The manifest's repository (`owner/repo`).
        repository: String,
        /// The id asked for.
        id: String,
    },
    /// `add` of a file or URL a live item already records.
    #[error(
        "{what} is already in the manifest as {id} ({status}); verify that item, or supersede it and add the new version"
    )]
    Duplicate {
        /// The path or URL added again.
        what: String,
        /// The item that holds it.
        id: String,
        /// That item's status.
        status: SourceStatus,
    },
    /// A change to, or by, an item already superseded (its id).
    #[error("source {0} is superseded; items are never reused, add a new one")]
    Superseded(String),
    /// A flag's value is unusable (blank, a bad URL, an unreadable file); the message says which.
    #[error("{0}")]
    Input(String),
}

/// Where an item stands: added, then seen (or not) in the Project's Sources in the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceStatus {
    /// Added; nobody has looked for it in the browser yet.
    Pending,
    /// The browser showed it in the Project's Sources.
    Verified,
    /// The browser did not show it (or showed an error).
    Failed,
    /// Replaced by another item; kept for the record, never changed again.
    Superseded,
}

impl SourceStatus {
    /// The name the manifest stores.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceStatus::Pending => "pending",
            SourceStatus::Verified => "verified",
            SourceStatus::Failed => "failed",
            SourceStatus::Superseded => "superseded",
        }
    }
}

impl std::fmt::Display for SourceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One source: a local file (`path`, with the `sha256` forgeloop computed) or a web
/// reference (`url`, with its retrieval date and an excerpt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceItem {
    /// Its id in the manifest (`s1`, `s2`, …), never reused.
    pub id: String,
    /// A local file's absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A web reference's address (http or https, no credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Why the source is in the Project, in the coordinator's words.
    pub purpose: String,
    /// A local file's sha256 when it was added.
    #[serde(default)]
    pub sha256: Option<String>,
    /// The source's version, when it has one worth naming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What the browser showed the upload as in the Project's Sources.
    #[serde(default)]
    pub observed_label: Option<String>,
    /// When it was last looked for in the browser (RFC 3339, UTC).
    #[serde(default)]
    pub last_verified: Option<String>,
    /// Where it stands.
    pub status: SourceStatus,
    /// When it was added (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_at: Option<String>,
    /// The Project the repository was linked to when the item was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// When a web reference was retrieved (defaults to when it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieved_at: Option<String>,
    /// A web reference's relevant passage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// What the coordinator noted when it last verified the item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The item that replaced it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// When it was superseded (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_at: Option<String>,
    /// Keys forgeloop does not know, kept on every rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One repository's `sources.json`: its items, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The repository it belongs to (`owner/repo`, lowercase); must match its location.
    pub repository: String,
    /// Every item ever added, superseded ones included.
    #[serde(default)]
    pub items: Vec<SourceItem>,
    /// Keys forgeloop does not know, kept on every rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where a new item comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A local file (`--path`), hashed when added.
    Path(PathBuf),
    /// A web reference (`--url`).
    Url(String),
}

/// An item to add (`project sources add`), before it is checked and redacted.
#[derive(Debug, Clone)]
pub struct NewSource {
    /// The local file or web reference.
    pub origin: Origin,
    /// Why it is in the Project.
    pub purpose: String,
    /// What the browser showed it as, if already known.
    pub observed_label: Option<String>,
    /// The source's version, if any.
    pub version: Option<String>,
    /// For web references: the relevant passage.
    pub excerpt: Option<String>,
    /// For web references; defaults to now.
    pub retrieved_at: Option<String>,
}

/// What `verify` found besides the updated item.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The item as now recorded.
    pub item: SourceItem,
    /// For local files: whether the file's sha256 differs from the one recorded at add.
    pub changed: Option<bool>,
    /// For local files: the sha256 the file has now.
    pub current_sha256: Option<String>,
    /// For local files that can no longer be read.
    pub file_error: Option<String>,
}

fn manifest_path(registry: &Registry, key: &RepoKey) -> PathBuf {
    registry.repo_dir(key).join(MANIFEST_NAME)
}

/// The manifest, or an empty one when there is none. Never creates anything.
pub fn list(registry: &Registry, key: &RepoKey) -> Result<Manifest, RegistryError> {
    Ok(read(&manifest_path(registry, key), key)?)
}

fn read(path: &Path, key: &RepoKey) -> Result<Manifest, SourcesError> {
    let corrupt = |reason: String| SourcesError::Corrupt { path: path.to_path_buf(), reason };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(Manifest { repository: key.to_string(), items: Vec::new(), extra: Map::new() });
        }
        Err(source) => return Err(SourcesError::Io { action: "read the source manifest", path: path.into(), source }),
    };
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES + 1).read_to_end(&mut bytes).map_err(|source| SourcesError::Io {
        action: "read the source manifest",
        path: path.into(),
        source,
    })?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(corrupt(format!("it is larger than {MAX_MANIFEST_BYTES} bytes")));
    }
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    if manifest.repository != key.to_string() {
        return Err(corrupt(format!("its repository is {:?}, not {key}", manifest.repository)));
    }
    let mut seen = std::collections::BTreeSet::new();
    for item in &manifest.items {
        if !seen.insert(item.id.as_str()) {
            return Err(corrupt(format!("the id {} appears twice", item.id)));
        }
    }
    Ok(manifest)
}

/// Runs `change` on the manifest under its lock and writes the result atomically.
fn update<T>(
    registry: &Registry,
    key: &RepoKey,
    change: impl FnOnce(&mut Manifest) -> Result<T, SourcesError>,
) -> Result<T, RegistryError> {
    let dir = registry.repo_dir(key);
    let path = dir.join(MANIFEST_NAME);
    let _lock = FileLock::acquire_blocking(&dir.join(LOCK_NAME))?;
    remove_stale_temps(&dir);
    let mut manifest = read(&path, key)?;
    let result = change(&mut manifest)?;
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    write_atomic(&path, text.as_bytes()).map_err(|source| SourcesError::Io {
        action: "write the source manifest",
        path,
        source,
    })?;
    Ok(result)
}

fn next_id(manifest: &Manifest) -> String {
    let highest =
        manifest.items.iter().filter_map(|i| i.id.strip_prefix('s').and_then(|n| n.parse::<u64>().ok())).max();
    format!("s{}", highest.unwrap_or(0) + 1)
}

fn nonblank(flag: &str, text: &str) -> Result<String, SourcesError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(SourcesError::Input(format!("{flag} is blank")));
    }
    Ok(trimmed.to_owned())
}

fn optional(flag: &str, text: Option<&str>, redactor: &Redactor) -> Result<Option<String>, SourcesError> {
    text.map(|t| nonblank(flag, t).map(|t| redactor.redact(&t).into_owned())).transpose()
}

/// A web reference: http(s), a host, no credentials, no whitespace.
fn check_url(url: &str) -> Result<(), SourcesError> {
    let bad = |why: &str| Err(SourcesError::Input(format!("invalid source URL {url:?}: {why}")));
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("it contains whitespace or control characters");
    }
    // `https:///x` would be read as the host `x`: a slash where the host goes is no host.
    if url.contains(":///") {
        return bad("it has no host");
    }
    let parsed = match url::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "https" | "http") => parsed,
        Ok(_) => return bad("it must start with https:// or http://"),
        Err(url::ParseError::EmptyHost) => return bad("it has no host"),
        Err(_) if !url.contains("://") => return bad("it must start with https:// or http://"),
        Err(e) => return bad(&format!("it cannot be read as a URL ({e})")),
    };
    if parsed.host_str().is_none_or(str::is_empty) {
        return bad("it has no host");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return bad("it carries credentials; record the URL without them");
    }
    Ok(())
}

/// Streams a file through sha256 (any size, bounded memory).
fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Adds a `pending` item. The repository must be linked: sources belong to its Project.
pub fn add(
    registry: &Registry,
    key: &RepoKey,
    source: NewSource,
    now: &str,
    redactor: &Redactor,
) -> Result<SourceItem, RegistryError> {
    let record = registry.require(key, "sources can be recorded for its Project")?;
    let purpose = redactor.redact(&nonblank("--purpose", &source.purpose)?).into_owned();
    let observed_label = optional("--observed-label", source.observed_label.as_deref(), redactor)?;
    let version = optional("--version", source.version.as_deref(), redactor)?;
    let excerpt = optional("--excerpt", source.excerpt.as_deref(), redactor)?;
    let retrieved_at = optional("--retrieved-at", source.retrieved_at.as_deref(), redactor)?;
    let (path, url, sha256) = match &source.origin {
        Origin::Path(path) => {
            let input_err =
                |e: io::Error| SourcesError::Input(format!("cannot use {} as a source: {e}", path.display()));
            let absolute = fs::canonicalize(path).map_err(input_err)?;
            if !absolute.is_file() {
                return Err(SourcesError::Input(format!("{} is not a regular file", path.display())).into());
            }
            let text = absolute
                .to_str()
                .ok_or_else(|| SourcesError::Input(format!("{} is not valid UTF-8", absolute.display())))?
                .to_owned();
            let sha = sha256_file(&absolute).map_err(input_err)?;
            (Some(text), None, Some(sha))
        }
        Origin::Url(url) => {
            check_url(url)?;
            (None, Some(redactor.redact(url).into_owned()), None)
        }
    };
    if path.is_some() && (excerpt.is_some() || retrieved_at.is_some()) {
        return Err(SourcesError::Input("--excerpt and --retrieved-at are for web references (--url)".into()).into());
    }
    let retrieved_at = if url.is_some() { retrieved_at.or_else(|| Some(now.to_owned())) } else { None };
    let project_id = record.project_id();
    update(registry, key, |manifest| {
        if let Some(existing) = manifest.items.iter().find(|i| {
            i.status != SourceStatus::Superseded
                && ((path.is_some() && i.path == path) || (url.is_some() && i.url == url))
        }) {
            let what = path.clone().or_else(|| url.clone()).unwrap_or_default();
            return Err(SourcesError::Duplicate { what, id: existing.id.clone(), status: existing.status });
        }
        let item = SourceItem {
            id: next_id(manifest),
            path,
            url,
            purpose,
            sha256,
            version,
            observed_label,
            last_verified: None,
            status: SourceStatus::Pending,
            added_at: Some(now.to_owned()),
            project_id: Some(project_id),
            retrieved_at,
            excerpt,
            note: None,
            superseded_by: None,
            superseded_at: None,
            extra: Map::new(),
        };
        manifest.items.push(item.clone());
        Ok(item)
    })
}

/// What the browser showed for one item.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The item looked for.
    pub id: &'a str,
    /// `verified` (the upload is in the Project's Sources list) or `failed`.
    pub status: SourceStatus,
    /// What the browser showed it as.
    pub observed_label: Option<&'a str>,
    /// Anything worth recording about what was seen.
    pub note: Option<&'a str>,
}

/// Records an observation. For local files the sha256 is recomputed and a change since
/// `add` is reported.
pub fn verify(
    registry: &Registry,
    key: &RepoKey,
    seen: Observation,
    now: &str,
    redactor: &Redactor,
) -> Result<Verified, RegistryError> {
    let status = seen.status;
    if !matches!(status, SourceStatus::Verified | SourceStatus::Failed) {
        return Err(SourcesError::Input("--status must be verified or failed".into()).into());
    }
    registry.require(key, "its sources can be verified")?;
    let observed_label = optional("--observed-label", seen.observed_label, redactor)?;
    let note = optional("--note", seen.note, redactor)?;
    update(registry, key, |manifest| {
        let item = find(manifest, key, seen.id)?;
        if item.status == SourceStatus::Superseded {
            return Err(SourcesError::Superseded(item.id.clone()));
        }
        let (mut changed, mut current_sha256, mut file_error) = (None, None, None);
        if let Some(path) = &item.path {
            match sha256_file(Path::new(&expand_tilde(path))) {
                Ok(sha) => {
                    changed = Some(item.sha256.as_deref() != Some(sha.as_str()));
                    current_sha256 = Some(sha);
                }
                Err(e) => file_error = Some(format!("cannot read {path}: {e}")),
            }
        }
        item.status = status;
        item.last_verified = Some(now.to_owned());
        if observed_label.is_some() {
            item.observed_label = observed_label;
        }
        if note.is_some() {
            item.note = note;
        }
        Ok(Verified { item: item.clone(), changed, current_sha256, file_error })
    })
}

/// Marks an item superseded (optionally by another item); it stays in the manifest.
pub fn supersede(
    registry: &Registry,
    key: &RepoKey,
    id: &str,
    by: Option<&str>,
    now: &str,
) -> Result<SourceItem, RegistryError> {
    registry.require(key, "its sources can be changed")?;
    update(registry, key, |manifest| {
        if let Some(by) = by {
            if by == id {
                return Err(SourcesError::Input("an item cannot supersede itself".into()));
            }
            let successor = find(manifest, key, by)?;
            if successor.status == SourceStatus::Superseded {
                return Err(SourcesError::Superseded(successor.id.clone()));
            }
        }
        let item = find(manifest, key, id)?;
        if item.status == SourceStatus::Superseded {
            return Err(SourcesError::Superseded(item.id.clone()));
        }
        item.status = SourceStatus::Superseded;
        item.superseded_by = by.map(str::to_owned);
        item.superseded_at = Some(now.to_owned());
        Ok(item.clone())
    })
}

fn find<'m>(manifest: &'m mut Manifest, key: &RepoKey, id: &str) -> Result<&'m mut SourceItem, SourcesError> {
    manifest
        .items
        .iter_mut()
        .find(|i| i.id == id)
        .ok_or_else(|| SourcesError::NoItem { repository: key.to_string(), id: id.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://chatgpt.com/g/g-p-example/project";

    fn setup() -> (tempfile::TempDir, Registry, RepoKey) {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path().join("registry"));
        let key = RepoKey::parse("acme/widget").unwrap();
        registry.bind(&key, URL, "Widget").unwrap();
        (dir, registry, key)
    }

    fn seen<'a>(id: &'a str, status: SourceStatus, observed_label: Option<&'a str>) -> Observation<'a> {
        Observation { id, status, observed_label, note: None }
    }

    fn file_source(path: &Path) -> NewSource {
        NewSource {
            origin: Origin::Path(path.to_path_buf()),
            purpose: "API notes".into(),
            observed_label: None,
            version: None,
            excerpt: None,
            retrieved_at: None,
        }
    }

    #[test]
    fn sha256_streams_known_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, b"abc").unwrap();
        assert_eq!(sha256_file(&path).unwrap(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn add_verify_supersede_keeps_every_item() {
        let (dir, registry, key) = setup();
        let r = Redactor::default();
        let notes = dir.path().join("notes.md");
        fs::write(&notes, b"v1").unwrap();
        let first = add(&registry, &key, file_source(&notes), "t1", &r).unwrap();
        assert_eq!((first.id.as_str(), first.status), ("s1", SourceStatus::Pending));
        assert_eq!(first.sha256.as_deref(), Some(sha256_file(&notes).unwrap().as_str()));
        let dup = add(&registry, &key, file_source(&notes), "t1", &r).unwrap_err();
        assert!(matches!(dup, RegistryError::Sources(SourcesError::Duplicate { .. })), "{dup}");

        fs::write(&notes, b"v2").unwrap();
        let verified = verify(&registry, &key, seen("s1", SourceStatus::Verified, Some("notes.md")), "t2", &r).unwrap();
        assert_eq!(verified.changed, Some(true));
        assert_eq!(verified.item.last_verified.as_deref(), Some("t2"));
        assert_eq!(verified.item.observed_label.as_deref(), Some("notes.md"));

        let web = NewSource {
            origin: Origin::Url("https://docs.example.com/api".into()),
            purpose: "upstream API".into(),
            observed_label: None,
            version: None,
            excerpt: Some("GET /v1/widgets".into()),
            retrieved_at: None,
        };
        let second = add(&registry, &key, web, "t3", &r).unwrap();
        assert_eq!(second.retrieved_at.as_deref(), Some("t3"));
        let superseded = supersede(&registry, &key, "s1", Some("s2"), "t4").unwrap();
        assert_eq!(superseded.status, SourceStatus::Superseded);
        assert!(supersede(&registry, &key, "s1", None, "t5").is_err());
        assert!(verify(&registry, &key, seen("s1", SourceStatus::Verified, None), "t5", &r).is_err());
        let third = add(&registry, &key, file_source(&notes), "t6", &r).unwrap();
        assert_eq!(third.id, "s3", "a superseded path may be added again");
        let manifest = list(&registry, &key).unwrap();
        assert_eq!(manifest.items.len(), 3);
        assert!(matches!(
            verify(&registry, &key, seen("s9", SourceStatus::Failed, None), "t", &r),
            Err(RegistryError::Sources(SourcesError::NoItem { .. }))
        ));
    }

    #[test]
    fn sources_need_a_linked_repository_and_valid_input() {
        let (dir, registry, _) = setup();
        let r = Redactor::default();
        let other = RepoKey::parse("acme/other").unwrap();
        let notes = dir.path().join("n");
        fs::write(&notes, b"x").unwrap();
        assert!(matches!(add(&registry, &other, file_source(&notes), "t", &r), Err(RegistryError::NotLinked { .. })));
        assert!(!registry.repo_dir(&other).exists());
        let key = RepoKey::parse("acme/widget").unwrap();
        for origin in [
            Origin::Url("ftp://x/y".into()),
            Origin::Url("https://user:pw@example.com/".into()),
            Origin::Url("https:///nohost".into()),
            Origin::Path(dir.path().join("missing")),
            Origin::Path(dir.path().to_path_buf()),
        ] {
            let source = NewSource { origin, ..file_source(&notes) };
            assert!(add(&registry, &key, source, "t", &r).is_err());
        }
        assert!(list(&registry, &key).unwrap().items.is_empty());
    }

    #[test]
    fn a_corrupt_manifest_is_an_error_and_is_left_alone() {
        let (_dir, registry, key) = setup();
        fs::create_dir_all(registry.repo_dir(&key)).unwrap();
        let path = registry.repo_dir(&key).join(MANIFEST_NAME);
        fs::write(&path, b"{\"repository\":").unwrap();
        assert!(matches!(list(&registry, &key), Err(RegistryError::Sources(SourcesError::Corrupt { .. }))));
        assert!(supersede(&registry, &key, "s1", None, "t").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"{\"repository\":");
    }
}
