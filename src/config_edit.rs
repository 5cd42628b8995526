//! Edits of the person's config.toml that forgeloop makes on the person's word (the control
//! room's "allow these hosts", design §5.6): in place, so their comments, order and layout
//! survive (toml_edit), checked to still load before anything is written, written atomically
//! under a lock beside the file, through a symbolic link to where the file really is.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};

use crate::config::Config;
use crate::domain::egress::AllowEntry;
use crate::store::atomic::write_atomic;
use crate::store::lock::FileLock;

/// Why forgeloop could not edit the person's config file; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ConfigEditError {
    /// Reading or writing the file failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done (`read`, `write`, …).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The lock beside the file could not be taken.
    #[error("cannot take the lock {path}: {reason}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why, as text.
        reason: String,
    },
    /// The file is not valid TOML.
    #[error("{path} is not valid TOML ({reason}); fix it by hand first")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The TOML parser's message.
        reason: String,
    },
    /// The file is valid TOML but a table or key forgeloop must extend has another type.
    #[error("{path}: {reason}; fix it by hand first")]
    Shape {
        /// The file.
        path: PathBuf,
        /// Which key, and what it is instead.
        reason: String,
    },
    /// An entry to add is not a valid allowlist entry.
    #[error("not an allowlist entry: {0}")]
    Entry(String),
    /// The edited file would fail to load as a config (so it was not written).
    #[error("the edited config would not load ({0}); nothing was written")]
    WouldNotLoad(String),
}

/// What an edit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The file written (the link's target when the config is a symbolic link).
    pub path: PathBuf,
    /// The table the entries went into, as written in the file.
    pub table: String,
    /// The entries added (those already there are not repeated).
    pub added: Vec<String>,
}

/// Adds `entries` to `[network.repositories."owner/repo"] allow` in the config at `path`
/// (created when missing). A table the file already has for the repository under another
/// case is the one extended: the config refuses two.
pub fn allow_for_repository(path: &Path, repository: &str, entries: &[String]) -> Result<Edited, ConfigEditError> {
    for entry in entries {
        let parsed = AllowEntry::parse(entry).map_err(|e| ConfigEditError::Entry(format!("{entry:?}: {e}")))?;
        // Never written for the person: such an entry is theirs to write by hand (design §5.6).
        if let Some(class) = parsed.non_public() {
            return Err(ConfigEditError::Entry(format!(
                "{entry:?} is {class}: forgeloop writes no entry for an address that is not public"
            )));
        }
    }
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let lock_path = lock_path(&target);
    let _lock = FileLock::acquire_blocking(&lock_path)
        .map_err(|e| ConfigEditError::Lock { path: lock_path.clone(), reason: e.to_string() })?;
    let text = match std::fs::read_to_string(&target) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ConfigEditError::Io { action: "read", path: target, source }),
    };
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| ConfigEditError::Unreadable {
        path: target.clone(),
        reason: e.to_string(),
    })?;
    let shape = |reason: String| ConfigEditError::Shape { path: target.clone(), reason };

    let network = table_in(doc.as_table_mut(), "network", false).map_err(shape)?;
    let repositories = table_in(network, "repositories", true).map_err(shape)?;
    let key = repositories
        .iter()
        .map(|(k, _)| k.to_owned())
        .find(|k| k.eq_ignore_ascii_case(repository))
        .unwrap_or_else(|| repository.to_ascii_lowercase());
    let table_name = format!("[network.repositories.\"{key}\"]");
    let own = table_in(repositories, &key, false).map_err(shape)?;
    let allow = match own.entry("allow").or_insert_with(|| Item::Value(Value::Array(Array::new()))) {
        Item::Value(Value::Array(array)) => array,
        _ => return Err(shape(format!("{table_name} allow is not an array of strings"))),
    };
    let mut added = Vec::new();
    for entry in entries {
        let present = allow.iter().any(|v| v.as_str() == Some(entry.as_str()));
        if !present && !added.contains(entry) {
            allow.push(entry.as_str());
            added.push(entry.clone());
        }
    }
    let edited = doc.to_string();
    toml::from_str::<Config>(&edited).map_err(|e| ConfigEditError::WouldNotLoad(e.to_string()))?;
    if !added.is_empty() {
        write_atomic(&target, edited.as_bytes()).map_err(|source| ConfigEditError::Io {
            action: "write",
            path: target.clone(),
            source,
        })?;
    }
    Ok(Edited { path: target, table: table_name, added })
}

/// `name` under `parent` as a table, created (as a `[header]` table, or implicit when it only
/// holds tables) when missing.
fn table_in<'a>(parent: &'a mut Table, name: &str, implicit: bool) -> Result<&'a mut Table, String> {
    let item = parent.entry(name).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(implicit);
        Item::Table(table)
    });
    match item {
        Item::Table(table) => Ok(table),
        _ => Err(format!("{name} is not a table")),
    }
}

/// `config.toml` → `.config.toml.lock` beside it.
fn lock_path(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "config.toml".into());
    target.with_file_name(format!(".{name}.lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[&str]) -> Vec<String> {
        list.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn entries_go_into_the_repository_s_table_and_the_person_s_text_survives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my settings\n[runner]\nmax_processes = 512 # enough\n\n[network]\nallow = [\"registries\"]\n";
        std::fs::write(&path, before).unwrap();
        let edited =
            allow_for_repository(&path, "Acme/Widget", &entries(&["151.101.0.223:8080", "pypi.example.com"])).unwrap();
        assert_eq!(edited.added, ["151.101.0.223:8080", "pypi.example.com"]);
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.starts_with(before), "{after}");
        assert!(
            after.contains(
                "[network.repositories.\"acme/widget\"]\nallow = [\"151.101.0.223:8080\", \"pypi.example.com\"]"
            ),
            "{after}"
        );
        let config = Config::load(&path, true).unwrap();
        let policy = config.network.for_repository("acme/widget");
        assert_eq!(policy.allow.entries().len(), 3);
        // Again, and with one new entry: nothing repeated.
        let again =
            allow_for_repository(&path, "acme/widget", &entries(&["pypi.example.com", "files.example.com"])).unwrap();
        assert_eq!(again.added, ["files.example.com"]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("pypi.example.com").count(), 1, "{text}");
    }

    #[test]
    fn a_table_under_another_case_is_extended_a_missing_file_is_created_and_a_link_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-config.toml");
        std::fs::write(&real, "[network.repositories.\"ACME/Widget\"]\nallow = [\"a.example.com\"]\n").unwrap();
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let edited = allow_for_repository(&link, "acme/widget", &entries(&["b.example.com"])).unwrap();
        assert_eq!(edited.path, real.canonicalize().unwrap());
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "the link stays a link");
        assert!(std::fs::read_to_string(&real).unwrap().contains("allow = [\"a.example.com\", \"b.example.com\"]"));
        let fresh = dir.path().join("new/config.toml");
        allow_for_repository(&fresh, "acme/widget", &entries(&["c.example.com:8443"])).unwrap();
        assert!(Config::load(&fresh, true).unwrap().network.for_repository("acme/widget").allow.entries().len() == 1);
    }

    #[test]
    fn a_bad_entry_or_a_file_that_would_not_load_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[network]\nallow = \"registries\"\n").unwrap();
        let before = std::fs::read(&path).unwrap();
        assert!(matches!(
            allow_for_repository(&path, "acme/widget", &entries(&["*.com"])),
            Err(ConfigEditError::Entry(_))
        ));
        // An address that is not public is the person's to write by hand, never forgeloop's.
        for entry in ["169.254.169.254:80", "127.0.0.1:8080", "[fd00::1]:443"] {
            assert!(matches!(
                allow_for_repository(&path, "acme/widget", &entries(&["pypi.org", entry])),
                Err(ConfigEditError::Entry(why)) if why.contains("not public")
            ));
        }
        assert!(matches!(
            allow_for_repository(&path, "acme/widget", &entries(&["x.example.com"])),
            Err(ConfigEditError::WouldNotLoad(_))
        ));
        std::fs::write(&path, "network = 3\n").unwrap();
        assert!(matches!(
            allow_for_repository(&path, "acme/widget", &entries(&["x.example.com"])),
            Err(ConfigEditError::Shape { .. })
        ));
        std::fs::write(&path, &before).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
