//! Who holds a cycle lock right now, without taking it (design §6.6). Taking the lock to look
//! would make an agent's `forge --pr` fail with CYCLE_BUSY in that instant, so the kernel's own
//! table of file locks (`/proc/locks`) is read instead: it names the process holding a `flock`
//! on an inode, and it forgets the lock the moment that process dies — unlike the pid record
//! inside the lock file, which outlives its holder.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The kernel's lock table (Linux).
const PROC_LOCKS: &str = "/proc/locks";

/// The pid holding an exclusive `flock` on the file at `path`, or `None` when nobody does.
/// `Err(Unsupported)` where the kernel does not publish its lock table.
pub fn lock_holder(path: &Path) -> io::Result<Option<u32>> {
    let table = match read_table() {
        Ok(table) => table,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "this system has no /proc/locks"));
        }
        Err(err) => return Err(err),
    };
    let inode = match std::fs::metadata(path) {
        Ok(meta) => meta.ino(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    Ok(holder_in(&table, inode))
}

/// The table in one `read` call where it fits: the kernel builds each call's answer under its
/// lock-list lock, while several small reads (as `read_to_string` starts with) can each see a
/// different list and miss a lock that was there all along.
fn read_table() -> io::Result<String> {
    use std::io::Read;
    const ONE_READ: usize = 1 << 20;
    let mut file = std::fs::File::open(PROC_LOCKS)?;
    let mut bytes = vec![0u8; ONE_READ];
    let len = file.read(&mut bytes)?;
    bytes.truncate(len);
    if len == ONE_READ {
        file.read_to_end(&mut bytes)?;
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads one `/proc/locks` table: `N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END`.
/// Waiters (`N: -> FLOCK …`) hold nothing and are skipped. Only the inode is compared: on
/// overlay file systems the device the table shows is not the one `stat` reports, and the
/// callers check the pid against what the holder recorded anyway.
fn holder_in(table: &str, inode: u64) -> Option<u32> {
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, "FLOCK", _, "WRITE", pid, file, ..] => {
                let ino: u64 = file.rsplit(':').next()?.parse().ok()?;
                (ino == inode).then(|| pid.parse().ok()).flatten()
            }
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lock::FileLock;

    #[test]
    fn the_table_names_the_writer_and_skips_waiters_and_other_files() {
        let table = "1: FLOCK  ADVISORY  WRITE 4242 fe:00:77 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 5151 fe:00:88 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 6161 fe:00:88 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 7171 fe:00:99 0 EOF\n";
        assert_eq!(holder_in(table, 77), Some(4242));
        assert_eq!(holder_in(table, 88), None, "a waiter and a POSIX lock are not a cycle lock holder");
        assert_eq!(holder_in(table, 99), Some(7171));
        assert_eq!(holder_in(table, 1), None);
        assert_eq!(holder_in("garbage\n\n1:\n", 1), None);
    }

    #[test]
    fn a_held_lock_names_this_process_and_a_released_one_names_nobody() {
        if !Path::new(PROC_LOCKS).exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cycle.lock");
        let held = FileLock::try_acquire(&path).unwrap();
        assert_eq!(lock_holder(&path).unwrap(), Some(std::process::id()));
        drop(held);
        assert_eq!(lock_holder(&path).unwrap(), None, "the pid record is left behind, the kernel's table is not");
        assert_eq!(lock_holder(&dir.path().join("missing.lock")).unwrap(), None);
    }
}
