//! The mirrors on disk (design §5.2.2): what `doctor` reports and what `forgeloop gc` deletes.
//!
//! A mirror's last use is the mtime of its `forgeloop-last-used` file, touched under the
//! mirror's lock by every checkout (mirrors made before that file existed fall back to their
//! `FETCH_HEAD`, then to the directory). `gc` deletes a mirror unused for the given number of
//! days only while holding its lock, and checks the last use again under it, so a mirror a
//! cycle is using, or started using meanwhile, is never deleted. The lock file stays: removing
//! it could let two processes hold "the" lock on two different files.

use std::fs::{self, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::error::CheckoutError;
use super::mirror::LAST_USED_FILE;
use crate::store::private;

/// The default for `forgeloop gc --unused-days` and `doctor`'s count.
pub const DEFAULT_UNUSED_DAYS: u64 = 30;

const DAY: Duration = Duration::from_secs(24 * 3600);

/// One mirror on disk.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorInfo {
    /// `owner/repo` as on disk (lowercase).
    pub repository: String,
    /// The mirror's directory (`<root>/<owner>/<repo>.git`).
    pub path: PathBuf,
    /// Its size on disk.
    pub bytes: u64,
    /// Whole days since the last use (0 when used in the last 24 hours, or in the future).
    pub unused_days: u64,
    /// Its history is truncated (depth-1 fetches).
    pub shallow: bool,
}

/// What `gc` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GcOutcome {
    /// Deleted (with `dry_run`: would be deleted).
    pub removed: Vec<MirrorInfo>,
    /// Unused long enough, but locked by a running cycle: left alone.
    pub in_use: Vec<MirrorInfo>,
    /// How many mirrors were used recently enough to keep.
    pub kept: usize,
    /// Bytes the deleted mirrors took (with `dry_run`: would free).
    pub freed_bytes: u64,
}

/// Every mirror under `root` (`<root>/<owner>/<repo>.git`), sorted by name. A missing root is
/// no mirrors.
pub fn survey(root: &Path, now: SystemTime) -> Result<Vec<MirrorInfo>, CheckoutError> {
    let mut mirrors = Vec::new();
    for owner in read_dir(root)? {
        if !is_real_dir(&owner) {
            continue;
        }
        for dir in read_dir(&owner)? {
            let Some(name) = dir.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".git")) else {
                continue;
            };
            if !is_real_dir(&dir) {
                continue;
            }
            let owner_name = owner.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            mirrors.push(MirrorInfo {
                repository: format!("{owner_name}/{name}"),
                bytes: size_of(&dir),
                unused_days: unused_days_of(&dir, now),
                shallow: dir.join("shallow").is_file(),
                path: dir,
            });
        }
    }
    mirrors.sort_by(|a, b| a.repository.cmp(&b.repository));
    Ok(mirrors)
}

/// Deletes the mirrors under `root` unused for at least `unused_days` days, each under its
/// lock; a locked one is skipped. `dry_run` only says what would be deleted.
pub fn collect(root: &Path, unused_days: u64, now: SystemTime, dry_run: bool) -> Result<GcOutcome, CheckoutError> {
    let mut outcome = GcOutcome::default();
    for mirror in survey(root, now)? {
        if mirror.unused_days < unused_days {
            outcome.kept += 1;
            continue;
        }
        let lock_path = mirror.path.with_extension("git.lock");
        let file = private::open(OpenOptions::new().create(true).truncate(false).write(true), &lock_path).map_err(
            |source| CheckoutError::Disk { action: "opening the mirror lock", path: lock_path.clone(), source },
        )?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                outcome.in_use.push(mirror);
                continue;
            }
            Err(TryLockError::Error(source)) => {
                return Err(CheckoutError::Disk { action: "locking", path: lock_path, source });
            }
        }
        // Used between the survey and the lock: keep it.
        if unused_days_of(&mirror.path, now) < unused_days {
            outcome.kept += 1;
            continue;
        }
        if !dry_run {
            fs::remove_dir_all(&mirror.path).map_err(|source| CheckoutError::Disk {
                action: "deleting the unused mirror",
                path: mirror.path.clone(),
                source,
            })?;
        }
        outcome.freed_bytes += mirror.bytes;
        outcome.removed.push(mirror);
        drop(file);
    }
    Ok(outcome)
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, CheckoutError> {
    match fs::read_dir(dir) {
        Ok(entries) => Ok(entries.filter_map(|e| e.ok().map(|e| e.path())).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(CheckoutError::Disk { action: "listing", path: dir.to_path_buf(), source }),
    }
}

fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Days since the last use recorded in `dir`.
fn unused_days_of(dir: &Path, now: SystemTime) -> u64 {
    let modified = |p: PathBuf| fs::symlink_metadata(p).and_then(|m| m.modified()).ok();
    let last = modified(dir.join(LAST_USED_FILE))
        .or_else(|| modified(dir.join("FETCH_HEAD")))
        .or_else(|| modified(dir.to_path_buf()));
    last.and_then(|t| now.duration_since(t).ok()).map_or(0, |age| age.as_secs() / DAY.as_secs())
}

/// Bytes of the files under `dir` (symlinks not followed).
fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = fs::read_dir(&next) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total += meta.len();
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    fn mirror(root: &Path, name: &str, age_days: u64, now: SystemTime) -> PathBuf {
        let dir = root.join("acme").join(format!("{name}.git"));
        fs::create_dir_all(dir.join("objects/pack")).unwrap();
        fs::write(dir.join("objects/pack/p.pack"), vec![0u8; 1000]).unwrap();
        let marker = File::create(dir.join(LAST_USED_FILE)).unwrap();
        marker.set_modified(now - DAY * u32::try_from(age_days).unwrap() - Duration::from_secs(60)).unwrap();
        dir
    }

    #[test]
    fn gc_deletes_old_mirrors_and_keeps_fresh_and_locked_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let now = SystemTime::now();
        let old = mirror(root, "old", 40, now);
        let fresh = mirror(root, "fresh", 3, now);
        let busy = mirror(root, "busy", 90, now);
        let held = File::create(root.join("acme/busy.git.lock")).unwrap();
        held.lock().unwrap();

        let listed = survey(root, now).unwrap();
        let days: Vec<(&str, u64)> = listed.iter().map(|m| (m.repository.as_str(), m.unused_days)).collect();
        assert_eq!(days, [("acme/busy", 90), ("acme/fresh", 3), ("acme/old", 40)]);
        assert!(listed.iter().all(|m| m.bytes >= 1000));

        let dry = collect(root, 30, now, true).unwrap();
        assert_eq!(dry.removed.len(), 1);
        assert!(old.exists());

        let done = collect(root, 30, now, false).unwrap();
        let names = |list: &[MirrorInfo]| list.iter().map(|m| m.repository.clone()).collect::<Vec<_>>();
        assert_eq!(
            (names(&done.removed), names(&done.in_use), done.kept),
            (vec!["acme/old".into()], vec!["acme/busy".into()], 1)
        );
        assert!(done.freed_bytes >= 1000);
        assert!(!old.exists() && fresh.exists() && busy.exists());
        // The lock file stays (deleting it would split the lock).
        assert!(root.join("acme/old.git.lock").exists());

        drop(held);
        assert!(crate::checkout::lock_frees_soon(&File::open(root.join("acme/busy.git.lock")).unwrap()));
        let later = collect(root, 30, now, false).unwrap();
        assert_eq!(names(&later.removed), ["acme/busy"]);
        assert!(!busy.exists() && fresh.exists());
    }

    #[test]
    fn a_missing_mirrors_directory_is_no_mirrors() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(survey(&tmp.path().join("none"), SystemTime::now()).unwrap().is_empty());
        assert_eq!(collect(&tmp.path().join("none"), 30, SystemTime::now(), false).unwrap().kept, 0);
    }
}
