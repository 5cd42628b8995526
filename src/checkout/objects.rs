//! A mirror's object store as a test running as another account needs it (forgeloop runs as
//! root and tests as `[runner] run_as`, design §5.6): its files readable and its directories
//! searchable by others. libgit2 writes them `0444`/`0755` less the umask, so a person with a
//! strict umask would otherwise leave the test's `git` unable to read a single commit. The
//! mirror's own directory stays private (`0700`): the sandbox's bind mount is the only way in.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::error::CheckoutError;

/// Adds read (files) and read+search (directories) for others where missing, below `objects`.
/// Never follows a symbolic link. Called under the mirror's lock.
pub(crate) fn open_to_others(objects: &Path) -> Result<(), CheckoutError> {
    walk(objects, 0)
}

fn walk(path: &Path, depth: usize) -> Result<(), CheckoutError> {
    let disk =
        |source| CheckoutError::Disk { action: "opening to the test's account", path: path.to_path_buf(), source };
    let meta = path.symlink_metadata().map_err(disk)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mode = meta.permissions().mode();
    let want = if meta.is_dir() { 0o005 } else { 0o004 };
    if mode & want != want {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | want)).map_err(disk)?;
    }
    if meta.is_dir() && depth < 4 {
        for entry in std::fs::read_dir(path).map_err(disk)? {
            walk(&entry.map_err(disk)?.path(), depth + 1)?;
        }
    }
    Ok(())
}
