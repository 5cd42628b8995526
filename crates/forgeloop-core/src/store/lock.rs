//! One writer per cycle (design §3 rule 6). The lock is an OS file lock on `NAME.lock`, so it
//! vanishes with the process that held it: a crash never leaves a cycle locked.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::private;

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it (`CYCLE_BUSY`); nothing waited.
    #[error("another forgeloop process{} is working on this cycle; wait for it to finish", holder_text(.pid))]
    Busy {
        /// The holder, when its pid could be read and it is alive.
        pid: Option<u32>,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file could not be created, opened (a symlink is refused) or locked.
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

fn holder_text(pid: &Option<u32>) -> String {
    pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
}

/// How often a lock apparently held by this process is retried (10 ms apart).
const SELF_RETRIES: u32 = 30;

/// The holder's pid is written as one fixed-width record at offset 0 (never truncate + write),
/// so a reader sees a whole pid, never a prefix. The record is left behind on release: a
/// process that finds its own pid there is in the fork window described at `try_acquire`.
/// A record naming a dead process is stale; a live previous holder can still be named in the
/// microseconds before a new holder writes its pid, which only affects the message.
const PID_WIDTH: usize = 10;
/// How long a busy reader waits for a fresh holder to finish writing its pid (2 ms apart).
const PID_READS: u32 = 50;

fn pid_record(pid: u32) -> [u8; PID_WIDTH + 1] {
    let mut record = [b' '; PID_WIDTH + 1];
    let digits = pid.to_string();
    record[..digits.len()].copy_from_slice(digits.as_bytes());
    record[PID_WIDTH] = b'\n';
    record
}

/// A pid counts only while that process is alive; a crashed holder's record is stale.
fn live_pid(file: &File) -> Option<u32> {
    let mut record = [0u8; PID_WIDTH + 1];
    let read = file.read_at(&mut record, 0).ok()?;
    let pid: u32 = std::str::from_utf8(&record[..read]).ok()?.trim().parse().ok()?;
    let proc_root = Path::new("/proc");
    (!proc_root.is_dir() || proc_root.join(pid.to_string()).exists()).then_some(pid)
}

/// Held for the whole mutation; released on drop. The lock file itself is never deleted
/// (deleting it would let two processes lock two different inodes).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    path: PathBuf,
}

impl FileLock {
    /// Takes the lock or fails at once with the holder's pid; never waits for another process.
    ///
    /// One exception: when the holder is this very process, the lock may only look held
    /// because a thread just forked a child that still carries a copy of a released lock's
    /// descriptor until it execs. That window is short, so it is retried briefly.
    pub fn try_acquire(path: &Path) -> Result<FileLock, LockError> {
        let mut attempts = 0;
        loop {
            match FileLock::try_once(path) {
                Err(LockError::Busy { pid: Some(pid), .. }) if pid == std::process::id() && attempts < SELF_RETRIES => {
                    attempts += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => return other,
            }
        }
    }

    fn try_once(path: &Path) -> Result<FileLock, LockError> {
        let io_err = |source| LockError::Io { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            private::create_dir_all(parent).map_err(io_err)?;
        }
        let file = private::open(OpenOptions::new().read(true).write(true).create(true).truncate(false), path)
            .map_err(io_err)?;
        match file.try_lock() {
            Ok(()) => {
                // Best effort: the pid is only informational for CYCLE_BUSY messages.
                let _ = file.write_all_at(&pid_record(std::process::id()), 0);
                Ok(FileLock { _file: file, path: path.to_path_buf() })
            }
            Err(TryLockError::WouldBlock) => {
                // A holder that has just taken the lock may not have written its pid yet.
                let mut pid = live_pid(&file);
                for _ in 0..PID_READS {
                    if pid.is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                    pid = live_pid(&file);
                }
                Err(LockError::Busy { pid, path: path.to_path_buf() })
            }
            Err(TryLockError::Error(source)) => Err(io_err(source)),
        }
    }

    /// Waits for the lock; only for short critical sections (the task-space index).
    pub fn acquire_blocking(path: &Path) -> Result<FileLock, LockError> {
        let io_err = |source| LockError::Io { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            private::create_dir_all(parent).map_err(io_err)?;
        }
        let file = private::open(OpenOptions::new().read(true).write(true).create(true).truncate(false), path)
            .map_err(io_err)?;
        file.lock().map_err(io_err)?;
        Ok(FileLock { _file: file, path: path.to_path_buf() })
    }

    /// The lock file held.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_pid_and_the_lock_is_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cycle.lock");
        let first = FileLock::try_acquire(&path).unwrap();
        match FileLock::try_acquire(&path) {
            Err(LockError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(first);
        assert!(FileLock::try_acquire(&path).is_ok());
    }

    #[test]
    fn a_record_naming_a_dead_process_is_not_reported_as_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cycle.lock");
        let _held = FileLock::try_acquire(&path).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        OpenOptions::new().write(true).open(&path).unwrap().write_all_at(&pid_record(dead), 0).unwrap();
        match FileLock::try_acquire(&path) {
            Err(LockError::Busy { pid, .. }) => assert_eq!(pid, None),
            other => panic!("expected Busy, got {other:?}"),
        }
    }
}
