//! forgeloop's files are its owner's alone (design §2.4): states, journals, run logs and
//! reports hold briefs, conversation URLs, failure output and PR data.
//!
//! Directories are created 0700 and files 0600 by asking for that mode at creation, not by
//! trusting the umask (which can only take bits away, so any umask gives the same result).
//! Directories that already exist keep their mode: a parent the person chose is theirs. A file
//! opened in place ([`open`]) that an older forgeloop made looser is tightened as it is opened.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::nofollow;

/// The mode of every directory forgeloop creates.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every file forgeloop writes.
pub const FILE_MODE: u32 = 0o600;
/// Group and other bits: any of them lets another account read, enter or write.
const OTHERS: u32 = 0o077;

/// Whether a mode gives another account any access.
pub fn is_loose(mode: u32) -> bool {
    mode & OTHERS != 0
}

/// Creates `dir` and its missing parents, each new one 0700.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)
}

/// Options for a new file: 0600 whatever the umask.
pub fn new_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

/// Opens a file of forgeloop's in place (a lock, a journal, a run log) without following a
/// symlink ([`nofollow::open`]), creating it 0600; an existing looser one becomes 0600.
pub fn open(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    let file = nofollow::open(options.mode(FILE_MODE), path)?;
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && is_loose(meta.permissions().mode())
    {
        // Best effort: a file owned by someone else stays as it is, and the open still counts.
        let _ = file.set_permissions(Permissions::from_mode(FILE_MODE));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn new_directories_are_0700_and_an_existing_parent_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let chosen = dir.path().join("chosen");
        fs::create_dir(&chosen).unwrap();
        fs::set_permissions(&chosen, Permissions::from_mode(0o755)).unwrap();
        create_dir_all(&chosen.join("a/b")).unwrap();
        assert_eq!(mode(&chosen), 0o755, "a directory forgeloop did not create keeps its mode");
        assert_eq!((mode(&chosen.join("a")), mode(&chosen.join("a/b"))), (0o700, 0o700));
    }

    #[test]
    fn files_opened_in_place_are_0600_and_a_loose_one_is_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.lock");
        drop(open(OpenOptions::new().write(true).create(true).truncate(false), &new).unwrap());
        assert_eq!(mode(&new), 0o600);
        let old = dir.path().join("old.jsonl");
        fs::write(&old, "x\n").unwrap();
        fs::set_permissions(&old, Permissions::from_mode(0o644)).unwrap();
        assert!(is_loose(mode(&old)), "the observation can fail: a 0644 file is loose");
        drop(open(OpenOptions::new().append(true), &old).unwrap());
        assert_eq!(mode(&old), 0o600);
        assert!(!is_loose(0o600) && !is_loose(0o700) && is_loose(0o604) && is_loose(0o710));
    }
}
