//! Crash-safe file writes: a reader sees the old bytes or the new bytes, never a mix.
//!
//! Temp files are siblings named `.NAME.tmp-PID-N`, so a crash leaves at most a stray temp
//! file that [`remove_stale_temps`] can clean up and that readers never open. Every file
//! written here is 0600 and every directory created for it 0700 ([`super::private`]): the
//! rename carries the temp file's mode, so a rewrite also tightens an older, looser file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::private;

static COUNTER: AtomicU64 = AtomicU64::new(0);

const TEMP_MARKER: &str = ".tmp-";

fn temp_path(target: &Path) -> io::Result<PathBuf> {
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "target has no file name"))?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    Ok(target.with_file_name(format!(".{name}{TEMP_MARKER}{}-{n}", std::process::id())))
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a rename or link in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn write_temp(target: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let temp = temp_path(target)?;
    let result = (|| {
        let mut file = private::new_file().write(true).create_new(true).open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    match result {
        Ok(()) => Ok(temp),
        Err(err) => {
            let _ = fs::remove_file(&temp);
            Err(err)
        }
    }
}

/// Replaces `target` with `bytes`: temp file in the same directory, fsync, rename, fsync
/// of the directory. Creates missing parent directories.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_of(target);
    private::create_dir_all(dir)?;
    let temp = write_temp(target, bytes)?;
    if let Err(err) = fs::rename(&temp, target) {
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    sync_dir(dir)
}

/// Creates `target` with `bytes` only if it does not exist yet, atomically: the file
/// appears complete or not at all. Returns `false` when it already existed.
///
/// Uses a hard link (atomic create-if-absent on every POSIX filesystem); where links are
/// not supported it falls back to `create_new`, which is still exclusive but could leave
/// a partial file after a crash mid-write — readers treat such a file as corrupt.
pub fn create_new_atomic(target: &Path, bytes: &[u8]) -> io::Result<bool> {
    let dir = parent_of(target);
    private::create_dir_all(dir)?;
    let temp = write_temp(target, bytes)?;
    let linked = fs::hard_link(&temp, target);
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            sync_dir(dir)?;
            Ok(true)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) if matches!(err.raw_os_error(), Some(code) if code == libc_eperm() || code == libc_enotsup()) => {
            match private::new_file().write(true).create_new(true).open(target) {
                Ok(mut file) => {
                    file.write_all(bytes)?;
                    file.sync_all()?;
                    sync_dir(dir)?;
                    Ok(true)
                }
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
                Err(err) => Err(err),
            }
        }
        Err(err) => Err(err),
    }
}

// EPERM and EOPNOTSUPP on Linux; link(2) reports these where hard links are unsupported.
const fn libc_eperm() -> i32 {
    1
}
const fn libc_enotsup() -> i32 {
    95
}

/// Whether `name` is one of our temp files (never a real state or record).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMP_MARKER)
}

/// Removes temp files in `dir` left by processes that no longer run. Returns how many.
pub fn remove_stale_temps(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_temp_name(name) {
            continue;
        }
        let pid = name
            .rsplit_once(TEMP_MARKER)
            .and_then(|(_, rest)| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        let alive = pid.is_some_and(|pid| pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists());
        if !alive && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sub/state.json");
        write_atomic(&target, b"one").unwrap();
        write_atomic(&target, b"two").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(target.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.json")]);
    }

    #[test]
    fn create_new_atomic_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("record.json");
        assert!(create_new_atomic(&target, b"first").unwrap());
        assert!(!create_new_atomic(&target, b"second").unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn stale_temps_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".state.json.tmp-999999999-0"), b"x").unwrap();
        fs::write(dir.path().join(format!(".state.json.tmp-{}-0", std::process::id())), b"x").unwrap();
        fs::write(dir.path().join("state.json"), b"{}").unwrap();
        assert_eq!(remove_stale_temps(dir.path()), 1);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
        assert!(is_temp_name(".a.json.tmp-1-2") && !is_temp_name("a.json"));
    }

    #[test]
    fn written_files_are_0600_in_new_0700_directories_and_a_rewrite_tightens() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("new/sub/state.json");
        write_atomic(&target, b"one").unwrap();
        assert_eq!(
            (mode(&target), mode(&dir.path().join("new")), mode(target.parent().unwrap())),
            (0o600, 0o700, 0o700)
        );
        fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&target, b"two").unwrap();
        assert_eq!(mode(&target), 0o600);
        let record = dir.path().join("record.json");
        assert!(create_new_atomic(&record, b"r").unwrap());
        assert_eq!(mode(&record), 0o600);
    }
}
