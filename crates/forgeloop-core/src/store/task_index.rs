//! The task-space index (design §3 rule 7): `<home>/task-spaces/<stem>.json` names the state
//! that owns a browser conversation key, so two live cycles can never share one, and the
//! control room can find states kept outside the cycles directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::{is_temp_name, write_atomic};
use super::layout::expand_tilde;
use super::lock::{FileLock, LockError};
use super::private;
use super::state_file;

/// One index file: which state owns a task space.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The browser conversation key, `webgpt-orchestrator:<stem>`.
    pub task_space: String,
    /// Absolute path of the owning state.
    pub state: String,
    /// When the entry was (re)written (RFC 3339, UTC).
    pub created_at: String,
}

impl Entry {
    /// The owning state's path (a redacted `~/` expanded back).
    pub fn state_path(&self) -> PathBuf {
        PathBuf::from(expand_tilde(&self.state))
    }
}

/// Why a task space could not be claimed (`TASK_SPACE_TAKEN`, or the index failed).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Another live (or unreadable) cycle owns the key: starting would share its chat.
    #[error(
        "task space {task_space} is already used by the live cycle {owner}; give this cycle a different state file name"
    )]
    Taken {
        /// The key.
        task_space: String,
        /// The state that owns it.
        owner: String,
    },
    /// Reading or writing the index failed.
    #[error("cannot update the task-space index {path}: {source}")]
    Io {
        /// The index file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The index lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
}

fn entry_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.json"))
}

fn read_entry(path: &Path) -> Option<Entry> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// Whether the state an entry names is still a live cycle (exists, parses, not final).
fn is_live(entry: &Entry) -> bool {
    match state_file::load(&entry.state_path()) {
        Ok(state) => !state.status.is_final(),
        // A state that exists but cannot be read still holds its name: never steal it.
        Err(state_file::StateFileError::Missing(_)) => false,
        Err(_) => true,
    }
}

/// Serialises index updates across processes; hold it from the ownership check until the
/// new entry is recorded.
pub fn lock(dir: &Path) -> Result<FileLock, IndexError> {
    private::create_dir_all(dir).map_err(|source| IndexError::Io { path: dir.to_path_buf(), source })?;
    Ok(FileLock::acquire_blocking(&dir.join(".lock"))?)
}

/// Records `state` as the owner of `stem`. The caller holds [`lock`] and has checked
/// [`live_owner`].
pub fn record(dir: &Path, stem: &str, task_space: &str, state: &Path, now: &str) -> Result<(), IndexError> {
    let entry =
        Entry { task_space: task_space.to_owned(), state: state.display().to_string(), created_at: now.to_owned() };
    let text = serde_json::to_string_pretty(&entry).unwrap_or_default() + "\n";
    write_atomic(&entry_path(dir, stem), text.as_bytes())
        .map_err(|source| IndexError::Io { path: dir.to_path_buf(), source })
}

/// Who holds `stem`, if anyone live does (used before creating a cycle, so a refusal
/// changes no file).
pub fn live_owner(dir: &Path, stem: &str, state: &Path) -> Option<String> {
    let existing = read_entry(&entry_path(dir, stem))?;
    (existing.state_path() != state && is_live(&existing)).then_some(existing.state)
}

/// Every readable entry.
pub fn entries(dir: &Path) -> Vec<Entry> {
    let Ok(read) = fs::read_dir(dir) else { return Vec::new() };
    let mut entries: Vec<Entry> = read
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".json") && !is_temp_name(n)))
        .filter_map(|e| read_entry(&e.path()))
        .collect();
    entries.sort_by(|a, b| a.task_space.cmp(&b.task_space));
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_state(path: &Path, status: &str) {
        fs::write(path, format!(r#"{{"status":"{status}","request":"r"}}"#)).unwrap();
    }

    #[test]
    fn a_live_owner_keeps_its_task_space_and_an_ended_one_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("task-spaces");
        let a = dir.path().join("a/x.json");
        let b = dir.path().join("b/x.json");
        fs::create_dir_all(a.parent().unwrap()).unwrap();
        fs::create_dir_all(b.parent().unwrap()).unwrap();
        write_state(&a, "AWAITING_WEBGPT_PR");
        let _guard = lock(&index).unwrap();
        record(&index, "x", "webgpt-orchestrator:x", &a, "t").unwrap();
        assert_eq!(live_owner(&index, "x", &a), None, "its own entry does not block a state");
        assert_eq!(live_owner(&index, "x", &b).as_deref(), Some(a.display().to_string().as_str()));
        write_state(&a, "ABORTED");
        assert_eq!(live_owner(&index, "x", &b), None);
        record(&index, "x", "webgpt-orchestrator:x", &b, "t").unwrap();
        assert_eq!(entries(&index)[0].state_path(), b);
        // b's state file was never written: a vanished owner holds nothing.
        assert_eq!(live_owner(&index, "x", &a), None);
    }

    #[test]
    fn an_unreadable_owner_is_not_stolen() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("task-spaces");
        let a = dir.path().join("a.json");
        write_state(&a, "AWAITING_WEBGPT_PR");
        record(&index, "a", "webgpt-orchestrator:a", &a, "t").unwrap();
        fs::write(&a, b"{ torn").unwrap();
        assert!(live_owner(&index, "a", &dir.path().join("other/a.json")).is_some());
    }
}
