//! One writer per cycle (SPEC §3 rule 6). The lock is an OS file lock on `NAME.lock`, so it
//! vanishes with the process that held it: a crash never leaves a cycle locked.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another forgeloop process{} is working on this cycle; wait for it to finish", holder_text(.pid))]
    Busy { pid: Option<u32>, path: PathBuf },
    #[error("cannot open the lock file {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

fn holder_text(pid: &Option<u32>) -> String {
    pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
}

/// How often a lock apparently held by this process is retried (10 ms apart).
const SELF_RETRIES: u32 = 30;

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
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                other => return other,
            }
        }
    }

    fn try_once(path: &Path) -> Result<FileLock, LockError> {
        let io_err = |source| LockError::Io { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io_err)?;
        }
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io_err)?;
        match file.try_lock() {
            Ok(()) => {
                // Best effort: the pid is only informational for CYCLE_BUSY messages.
                let _ = file
                    .set_len(0)
                    .and_then(|_| file.seek(SeekFrom::Start(0)))
                    .and_then(|_| write!(file, "{}", std::process::id()));
                Ok(FileLock { _file: file, path: path.to_path_buf() })
            }
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                Err(LockError::Busy { pid: text.trim().parse().ok(), path: path.to_path_buf() })
            }
            Err(TryLockError::Error(source)) => Err(io_err(source)),
        }
    }

    /// Waits for the lock; only for short critical sections (the task-space index).
    pub fn acquire_blocking(path: &Path) -> Result<FileLock, LockError> {
        let io_err = |source| LockError::Io { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io_err)?;
        }
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io_err)?;
        file.lock().map_err(io_err)?;
        Ok(FileLock { _file: file, path: path.to_path_buf() })
    }

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
}
