//! Whole directory trees that hostile code may have shaped: removing one that a test made
//! unreadable (a `0000` directory stops a plain recursive remove), and handing one to another
//! account. Neither ever follows a symbolic link: a link is removed or re-owned itself.

use std::fmt;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How deep a tree may go before the walk gives up on the rest (a test can nest directories
/// far deeper than any real project; the leftover is then reported, never a stack overflow).
const MAX_DEPTH: usize = 512;

/// What could not be removed (or re-owned), for a message.
#[derive(Debug)]
pub struct Leftover {
    /// How many entries were left.
    pub count: usize,
    /// The first of them.
    pub first: PathBuf,
    /// Why it could not be handled.
    pub error: io::Error,
}

impl fmt::Display for Leftover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} entr{} could not be handled, the first {}: {}",
            self.count,
            if self.count == 1 { "y" } else { "ies" },
            self.first.display(),
            self.error
        )
    }
}

#[derive(Default)]
struct Errors {
    count: usize,
    first: Option<(PathBuf, io::Error)>,
}

impl Errors {
    fn push(&mut self, path: &Path, error: io::Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((path.to_path_buf(), error));
        }
    }

    fn into_result(self) -> Result<(), Leftover> {
        match self.first {
            None => Ok(()),
            Some((first, error)) => Err(Leftover { count: self.count, first, error }),
        }
    }
}

/// Removes `path` and everything below it. Each directory is made readable, writable and
/// searchable by its owner before it is entered (a test may leave a `0000` tree behind);
/// symbolic links are removed, never followed. A missing `path` is not an error.
pub fn remove_tree(path: &Path) -> Result<(), Leftover> {
    let mut errors = Errors::default();
    remove(path, 0, &mut errors);
    errors.into_result()
}

fn remove(path: &Path, depth: usize, errors: &mut Errors) {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return,
        Err(e) => return errors.push(path, e),
    };
    if !meta.is_dir() {
        if let Err(e) = std::fs::remove_file(path)
            && e.kind() != io::ErrorKind::NotFound
        {
            errors.push(path, e);
        }
        return;
    }
    if depth >= MAX_DEPTH {
        return errors.push(path, io::Error::other("nested too deeply"));
    }
    // `path` is a directory (lstat said so), so the chmod cannot land on a link's target.
    let mode = meta.permissions().mode();
    if mode & 0o700 != 0o700
        && let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o700))
    {
        errors.push(path, e);
    }
    match std::fs::read_dir(path) {
        Ok(entries) => {
            for entry in entries {
                match entry {
                    Ok(entry) => remove(&entry.path(), depth + 1, errors),
                    Err(e) => errors.push(path, e),
                }
            }
        }
        Err(e) => errors.push(path, e),
    }
    if let Err(e) = std::fs::remove_dir(path)
        && e.kind() != io::ErrorKind::NotFound
    {
        errors.push(path, e);
    }
}

/// Gives `path` and everything below it to `uid:gid` (`lchown`: a link is re-owned itself).
pub fn chown_tree(path: &Path, uid: u32, gid: u32) -> Result<(), Leftover> {
    let mut errors = Errors::default();
    chown(path, uid, gid, 0, &mut errors);
    errors.into_result()
}

fn chown(path: &Path, uid: u32, gid: u32, depth: usize, errors: &mut Errors) {
    if let Err(e) = std::os::unix::fs::lchown(path, Some(uid), Some(gid)) {
        return errors.push(path, e);
    }
    let Ok(meta) = path.symlink_metadata() else { return };
    if !meta.is_dir() {
        return;
    }
    if depth >= MAX_DEPTH {
        return errors.push(path, io::Error::other("nested too deeply"));
    }
    match std::fs::read_dir(path) {
        Ok(entries) => {
            for entry in entries.flatten() {
                chown(&entry.path(), uid, gid, depth + 1, errors);
            }
        }
        Err(e) => errors.push(path, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_tree_with_links_is_removed_without_touching_what_the_links_point_at() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b/c")).unwrap();
        std::fs::write(tree.join("a/b/c/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("a/link")).unwrap();
        for d in ["a/b/c", "a/b", "a"] {
            std::fs::set_permissions(tree.join(d), std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        assert!(outside.join("keep").exists(), "a link was followed");
        remove_tree(&tree).unwrap();
    }
}
