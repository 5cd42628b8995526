//! How much the caches hold, and trimming them to `[cache] max_gb`, least recently used layer
//! first (base and cycle layers alike), never one a run holds.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::LAST_USED;
use crate::store::tree;

/// The caches below a root: every layer (base and cycle), its size and when a run last used it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Usage {
    /// All layers together, in bytes.
    pub bytes: u64,
    /// Every layer, least recently used first (the key says `slot`, as before layers).
    pub slots: Vec<SlotUsage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SlotUsage {
    /// `owner/repo/base` or `owner/repo/pr-N`.
    pub slot: String,
    pub bytes: u64,
    #[serde(skip)]
    pub path: PathBuf,
    #[serde(skip)]
    pub last_used: SystemTime,
}

/// What [`trim`] removed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Trimmed {
    /// The layers deleted (`owner/repo/layer`); with a dry run, those that would be.
    pub removed: Vec<String>,
    /// Bytes the deleted layers took.
    pub freed_bytes: u64,
    /// Layers over the bound that a run holds now, left alone.
    pub in_use: Vec<String>,
    /// Layers that could not be deleted, each with why.
    pub failed: Vec<String>,
}

/// Every layer below `root` (`<owner>/<repo>/<layer>`) with its size on disk (symlinks count as
/// themselves, not what they point at).
pub fn usage(root: &Path) -> Usage {
    let mut out = Usage::default();
    for owner in dirs(root) {
        for repo in dirs(&owner) {
            for slot in dirs(&repo) {
                let bytes = size(&slot);
                let last_used =
                    slot.join(LAST_USED).metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
                let name = [&owner, &repo, &slot]
                    .iter()
                    .filter_map(|p| p.file_name())
                    .map(|n| n.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                out.bytes += bytes;
                out.slots.push(SlotUsage { slot: name, bytes, path: slot, last_used });
            }
        }
    }
    out.slots.sort_by_key(|s| s.last_used);
    out
}

/// Removes whole layers, least recently used first, until the caches hold at most `max_bytes`.
/// A layer whose lock a run holds (a base layer's: any run of the repository) is skipped; `dry_run` only says what would go.
pub fn trim(root: &Path, max_bytes: u64, dry_run: bool) -> Trimmed {
    let usage = usage(root);
    let mut total = usage.bytes;
    let mut out = Trimmed::default();
    for slot in usage.slots {
        if total <= max_bytes {
            break;
        }
        let lock_path = slot.path.with_extension("lock");
        let lock = std::fs::OpenOptions::new().write(true).open(&lock_path);
        let free = match &lock {
            Ok(file) => file.try_lock().is_ok(),
            Err(_) => true,
        };
        if !free {
            out.in_use.push(slot.slot);
            continue;
        }
        if !dry_run && let Err(left) = tree::remove_tree(&slot.path) {
            out.failed.push(format!("{}: {left}", slot.slot));
            continue;
        }
        total -= slot.bytes;
        out.freed_bytes += slot.bytes;
        out.removed.push(slot.slot);
    }
    out
}

fn dirs(path: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(path) else { return Vec::new() };
    let mut out: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir())).collect();
    out.sort();
    out
}

/// Bytes on disk below `path`, never following a link.
fn size(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = path.symlink_metadata() else { return 0 };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return own };
    own + entries.flatten().map(|e| size(&e.path())).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{Layers, Scope, Stack};
    use crate::domain::pr_ref::RepoName;

    #[test]
    fn trimming_removes_the_least_recently_used_layers_never_a_held_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let claim = |repo: &str| {
            let layers =
                Layers::claim(root, &RepoName::parse(repo).unwrap(), Scope::Cycle(1), Stack::Copy, None).unwrap();
            let path = root.join(layers.key());
            std::fs::write(path.join("blob"), vec![7u8; 400 * 1024]).unwrap();
            (layers, path)
        };
        let long_ago =
            std::fs::FileTimes::new().set_modified(SystemTime::now() - std::time::Duration::from_secs(86_400));
        let age = |path: &Path| {
            std::fs::File::options().write(true).open(path.join(LAST_USED)).unwrap().set_times(long_ago).unwrap()
        };
        let (old, old_path) = claim("a/old");
        drop(old);
        age(&old_path);
        let (held, held_path) = claim("a/held");
        age(&held_path);
        let (new, new_path) = claim("a/new");
        drop(new);

        let before = usage(root);
        assert_eq!(before.slots.len(), 3);
        assert!(before.bytes >= 1200 * 1024, "{before:?}");
        // Removing the oldest leaves 800 KiB: the held one is skipped, so the newest goes too.
        let dry = trim(root, 500 * 1024, true);
        assert_eq!(dry.removed, ["a/old/pr-1", "a/new/pr-1"]);
        assert!(old_path.exists(), "a dry run removed something");
        let done = trim(root, 500 * 1024, false);
        assert_eq!(done.removed, ["a/old/pr-1", "a/new/pr-1"], "{done:?}");
        assert_eq!(done.in_use, ["a/held/pr-1"]);
        assert!(!old_path.exists() && !new_path.exists() && held_path.exists());
        drop(held);
    }
}
