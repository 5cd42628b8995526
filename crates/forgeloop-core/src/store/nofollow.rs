//! Opening a file for writing without following a symlink at its last component (design §3,
//! rule 9).
//!
//! A lock file, a run log or a journal is opened in place (not replaced by rename), so a
//! symlink planted at its path by anyone who can write the directory would make forgeloop write
//! into the file it points to. [`open`] adds `O_NOFOLLOW`: the kernel refuses the link itself
//! (`ELOOP`), and the error says so. Atomic writes ([`super::atomic`]) need no flag: their temp
//! file is created with `create_new` (`O_EXCL`, which never follows a symlink either) and then
//! renamed over the target, which replaces a link instead of writing through it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What a refused symlink's error says (the callers' errors name the path).
pub const SYMLINK_REFUSED: &str = "it is a symbolic link, and forgeloop never writes through one (it could point at any \
     file of yours); remove the link and retry";

/// Opens `path` with `options` plus `O_NOFOLLOW`; a symlink at `path` is refused with an error
/// that says it is one ([`SYMLINK_REFUSED`]), even when it dangles.
pub fn open(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    match options.custom_flags(libc::O_NOFOLLOW).open(path) {
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) && is_symlink(path) => {
            Err(io::Error::new(err.kind(), SYMLINK_REFUSED))
        }
        other => other,
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_is_refused_and_its_target_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let link = dir.path().join("log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = open(OpenOptions::new().write(true).create(true).truncate(true), &link).unwrap_err();
        assert_eq!(err.to_string(), SYMLINK_REFUSED);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");

        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nothing"), &dangling).unwrap();
        let err = open(OpenOptions::new().write(true).create(true), &dangling).unwrap_err();
        assert_eq!(err.to_string(), SYMLINK_REFUSED);
        assert!(!dir.path().join("nothing").exists(), "nothing was created through the link");
    }

    #[test]
    fn a_plain_file_opens_as_usual() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain");
        let mut file = open(OpenOptions::new().write(true).create(true).truncate(true), &path).unwrap();
        io::Write::write_all(&mut file, b"ok").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ok");
    }
}
