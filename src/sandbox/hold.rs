//! The first tier's held files (issue 57): the paths of
//! [`RunPaths::held`](super::spec::RunPaths::held) — the person's
//! protected tests and what they source or run, as the base branch has them — stay exactly as
//! checked out for every command of the run, setup steps included, so a build script, a
//! proc-macro, a module a test imports or `pip install -e .` cannot rewrite them first.
//!
//! Over the mounted checkout, by PID 1 of the run's namespaces before anything of the PR runs:
//!
//! * each held file (or link) is bound onto itself read-only: writing, truncating, appending,
//!   `chmod` and `touch` get `EROFS`; removing it, renaming or hard-linking over it, `EBUSY`
//!   (a mount point cannot be removed or replaced);
//! * each directory on its way, from the checkout's root down, is bound onto itself read-write:
//!   the run still writes in it, but cannot rename or remove it (`EBUSY`), so
//!   `mv tests tests.old; mkdir tests; cp …` cannot swap the directory a held file lives in;
//! * beside each held `.py` file, `__pycache__` becomes an empty read-only directory (made
//!   first when missing; anything else there is covered by an unreadable file): no compiled
//!   form can be planted for a held module, or read, so Python runs the held source.
//!
//! The checkout is the PR's tree, and earlier commands of the run wrote in it: every name is
//! looked up one at a time from the checkout's mount, never following a link. A held path that
//! is missing (the base has no such file), or that a link or a file stands in the way of, holds
//! nothing and is not followed: [`super::HeldSnapshot`] reports such a path when it changes. The
//! run's own user namespace cannot undo the mounts (no capabilities, Landlock), and one it makes
//! inside gets them locked.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::mount_calls::{
    MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, bind_at, empty_dir_at, open_at,
};
use super::spec::{Spec, held_names};

/// Where Python keeps a module's compiled form, beside its source.
const PYCACHE: &std::ffi::CStr = c"__pycache__";

/// Holds every path of `spec.run.held` in the checkout mounted below `root` (the new root, not
/// yet `/`).
pub(super) fn hold(root: &Path, spec: &Spec) -> Result<(), String> {
    if spec.run.held.is_empty() {
        return Ok(());
    }
    let mut held = BTreeSet::new();
    for path in &spec.run.held {
        held.insert(held_names(path).ok_or_else(|| format!("the held path {path:?} is not a path in the checkout"))?);
    }
    let checkout = open_inside(root, &spec.run.checkout)?;
    // The directories walked so far (relative to the checkout), each pinned, by the descriptor
    // of the mount on top of it.
    let mut dirs: BTreeMap<Vec<&str>, OwnedFd> = BTreeMap::new();
    dirs.insert(Vec::new(), checkout);
    let mut python_dirs = BTreeSet::new();
    for names in &held {
        let Some((file, parents)) = names.split_last() else { continue };
        if !pin_dirs(parents, &mut dirs)? {
            continue;
        }
        let Some(dir) = dirs.get(parents) else { continue };
        let name = c_name(file)?;
        let found = open_at(dir.as_fd(), &name, false).map_err(|e| fail(names, &e.to_string()))?;
        let Some(found) = found else { continue };
        bind_at(found.as_fd(), dir.as_fd(), &name, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
            .map_err(|e| fail(names, &e))?;
        if file.ends_with(".py") {
            python_dirs.insert(parents.to_vec());
        }
    }
    for parents in python_dirs {
        if let Some(dir) = dirs.get(&parents) {
            no_bytecode(dir).map_err(|e| format!("cannot keep compiled Python out of {:?}: {e}", parents.join("/")))?;
        }
    }
    Ok(())
}

/// Pins each directory of `parents` (from the checkout's root down) not pinned yet. `false`
/// when one is missing, a link or not a directory: nothing below it is held.
fn pin_dirs<'a>(parents: &[&'a str], dirs: &mut BTreeMap<Vec<&'a str>, OwnedFd>) -> Result<bool, String> {
    for depth in 1..=parents.len() {
        let key = parents[..depth].to_vec();
        if dirs.contains_key(&key) {
            continue;
        }
        let Some(parent) = dirs.get(&parents[..depth - 1]) else { return Ok(false) };
        let name = c_name(parents[depth - 1])?;
        let found = open_at(parent.as_fd(), &name, true).map_err(|e| fail(&key, &e.to_string()))?;
        let Some(found) = found else { return Ok(false) };
        bind_at(found.as_fd(), parent.as_fd(), &name, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
            .map_err(|e| fail(&key, &e))?;
        // Further down through the new mount, not the directory it covers.
        let top = open_at(parent.as_fd(), &name, true)
            .map_err(|e| fail(&key, &e.to_string()))?
            .ok_or_else(|| fail(&key, "gone once pinned"))?;
        dirs.insert(key, top);
    }
    Ok(true)
}

/// `__pycache__` in `dir` becomes an empty read-only directory: made when missing; a link or a
/// file there (Python would follow the one, and a later command could swap the other) is
/// covered by `/dev/null` on a `nodev` mount, which no lookup can pass.
fn no_bytecode(dir: &OwnedFd) -> Result<(), String> {
    let dir = dir.as_fd();
    let existing = open_at(dir, PYCACHE, false).map_err(|e| e.to_string())?;
    let is_dir = match &existing {
        None => {
            // SAFETY: mkdirat reads the NUL-terminated name.
            if unsafe { libc::mkdirat(dir.as_raw_fd(), PYCACHE.as_ptr(), 0o755) } != 0 {
                return Err(format!("making __pycache__: {}", std::io::Error::last_os_error()));
            }
            true
        }
        Some(fd) => std::fs::File::from(fd.try_clone().map_err(|e| e.to_string())?)
            .metadata()
            .map_err(|e| e.to_string())?
            .is_dir(),
    };
    if is_dir {
        return empty_dir_at(dir, PYCACHE);
    }
    let null = c"/dev/null";
    // SAFETY: open reads the NUL-terminated path; a non-negative result is ours.
    let fd = unsafe { libc::open(null.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("/dev/null: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the descriptor was just returned to us.
    let null = unsafe { OwnedFd::from_raw_fd(fd) };
    let flags = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    bind_at(null.as_fd(), dir, PYCACHE, flags)
}

/// The directory at `path` (absolute, as seen inside) below `root`, walked one name at a time
/// without following a link: the checkout's mount, on top of its mount point.
fn open_inside(root: &Path, path: &Path) -> Result<OwnedFd, String> {
    let fail = |what: &str| format!("cannot reach the checkout {} to hold files in it: {what}", path.display());
    let root_c = CString::new(root.as_os_str().as_bytes()).map_err(|_| fail("a NUL byte"))?;
    // SAFETY: open reads the NUL-terminated path; a non-negative result is ours.
    let fd = unsafe { libc::open(root_c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(fail(&std::io::Error::last_os_error().to_string()));
    }
    // SAFETY: the descriptor was just returned to us.
    let mut current = unsafe { OwnedFd::from_raw_fd(fd) };
    for component in path.components() {
        let std::path::Component::Normal(name) = component else { continue };
        let name = CString::new(name.as_bytes()).map_err(|_| fail("a NUL byte"))?;
        current = open_at(current.as_fd(), &name, true)
            .map_err(|e| fail(&e.to_string()))?
            .ok_or_else(|| fail(&format!("{} is missing or a link", name.to_string_lossy())))?;
    }
    Ok(current)
}

fn c_name(name: &str) -> Result<CString, String> {
    CString::new(name).map_err(|_| format!("the held name {name:?} holds a NUL byte"))
}

fn fail(names: &[&str], why: &str) -> String {
    format!("cannot hold {} read-only: {why}", names.join("/"))
}
