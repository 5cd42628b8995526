//! Walking a layer a run wrote, as forgeloop (root, perhaps) does before and after runs:
//! never through a link. A run leaves what it likes in its layer — a link where a directory
//! was, a file where a directory should be — and forgeloop must neither follow it nor create
//! anything where it points; a directory forgeloop makes belongs to the account tests run as,
//! so the next run can use it.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use crate::store::tree;

/// Who owns what forgeloop makes in a layer: the tests' account (`uid`, `gid`) when forgeloop
/// is root, `None` (forgeloop's own) otherwise.
pub type Owner = Option<(u32, u32)>;

/// `top/rel` as a real directory, made one component at a time below `top` (which forgeloop
/// made): a component that is a link or not a directory is removed first (it is the run's,
/// in a layer of its own), never followed. Every directory made is `owner`'s.
pub(super) fn ensure_dir(top: &Path, rel: &Path, owner: Owner) -> io::Result<PathBuf> {
    let mut at = top.to_path_buf();
    for part in rel.components() {
        let Component::Normal(part) = part else {
            return Err(io::Error::other(format!("{} is not a plain relative path", rel.display())));
        };
        at.push(part);
        match at.symlink_metadata() {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => tree::remove_tree(&at).map_err(|left| io::Error::other(left.to_string()))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&at) {
            Ok(()) => give(&at, owner)?,
            // Another run of the repository made it first: fine if it is a directory.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && at.symlink_metadata()?.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(at)
}

/// Gives `path` itself (a link is re-owned, never followed) to `owner`.
pub(super) fn give(path: &Path, owner: Owner) -> io::Result<()> {
    match owner {
        Some((uid, gid)) => std::os::unix::fs::lchown(path, Some(uid), Some(gid)),
        None => Ok(()),
    }
}

/// Copies `from` to `to` (which must not exist; its parent must): directories recreated,
/// files copied with their mode and modification time (builds compare them), links recreated
/// as links, anything else (devices, sockets) left out. Never follows a link, on either side.
/// A missing `from` copies nothing.
pub(super) fn copy_nofollow(from: &Path, to: &Path) -> io::Result<u64> {
    let meta = match from.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)?;
        return Ok(0);
    }
    if kind.is_file() {
        let mut source = std::fs::File::open(from)?;
        let mut dest = std::fs::OpenOptions::new().write(true).create_new(true).open(to)?;
        let bytes = io::copy(&mut source, &mut dest)?;
        dest.set_permissions(meta.permissions())?;
        dest.set_modified(meta.modified()?)?;
        return Ok(bytes);
    }
    if !kind.is_dir() {
        return Ok(0);
    }
    std::fs::DirBuilder::new().mode(meta.mode() & 0o7777).create(to)?;
    let mut bytes = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        bytes += copy_nofollow(&entry.path(), &to.join(entry.file_name()))?;
    }
    std::fs::File::open(to)?.set_modified(meta.modified()?)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_by_a_directory_and_its_target_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let (top, outside) = (dir.path().join("layer"), dir.path().join("outside"));
        std::fs::create_dir_all(top.join("cargo-home")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("cargo-home/registry")).unwrap();
        let made = ensure_dir(&top, Path::new("cargo-home/registry/cache/idx"), None).unwrap();
        assert!(made.is_dir() && !top.join("cargo-home/registry").is_symlink());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something was made through the link");
        assert!(ensure_dir(&top, Path::new("../x"), None).is_err());
    }

    #[test]
    fn a_copy_keeps_links_as_links_and_times_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        std::fs::create_dir_all(from.join("d")).unwrap();
        std::fs::write(from.join("d/f"), "data").unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options().write(true).open(from.join("d/f")).unwrap().set_modified(old).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", from.join("l")).unwrap();
        let to = dir.path().join("to");
        assert_eq!(copy_nofollow(&from, &to).unwrap(), 4);
        assert_eq!(std::fs::read_link(to.join("l")).unwrap(), Path::new("/etc/passwd"));
        assert_eq!(std::fs::metadata(to.join("d/f")).unwrap().modified().unwrap(), old);
        assert_eq!(copy_nofollow(&dir.path().join("missing"), &dir.path().join("x")).unwrap(), 0);
    }
}
