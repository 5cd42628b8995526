//! The system calls that make the first tier's mounts, shared by the new root
//! ([`super::mounts`]) and the held files ([`super::hold`]): by path (`mount`, restrictions
//! added with `mount_setattr` or a remount), and by descriptor, for what lies in a tree the run
//! writes (the checkout): there nothing is resolved by path, so a link planted by an earlier
//! command is never followed.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub(super) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(super) const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub(super) const MOUNT_ATTR_NODEV: u64 = 0x4;
pub(super) const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const AT_RECURSIVE: libc::c_uint = 0x8000;
/// `open_tree(2)`: a detached copy of the mount at the descriptor, not the mount itself.
const OPEN_TREE_CLONE: libc::c_uint = 0x1;
/// `move_mount(2)`: the source and the target are the descriptors themselves.
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

pub(super) fn cstring(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("{} holds a NUL byte", path.display()))
}

pub(super) fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), String> {
    let source_c = source.map(cstring).transpose()?;
    let target_c = cstring(target)?;
    let fstype_c = fstype.map(|f| CString::new(f).unwrap_or_default());
    let data_c = data.map(|d| CString::new(d).unwrap_or_default());
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is a NUL-terminated string that outlives the call, or null.
    let result = unsafe { libc::mount(ptr(&source_c), target_c.as_ptr(), ptr(&fstype_c), flags, ptr(&data_c).cast()) };
    if result != 0 {
        let what =
            source.map_or_else(|| target.display().to_string(), |s| format!("{} on {}", s.display(), target.display()));
        return Err(format!("mount {what}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Adds `flags` (`MOUNT_ATTR_*`) to the mount at `path` (and, `recursive`, those below it).
/// Only ever adds restrictions, so the flags the kernel locks on a mount seen from a user
/// namespace are never in the way. Kernels before 5.12 get a remount of the top mount instead.
pub(super) fn setattr(path: &Path, flags: u64, recursive: bool) -> Result<(), String> {
    let c = cstring(path)?;
    let attr = MountAttr { attr_set: flags, attr_clr: 0, propagation: 0, userns_fd: 0 };
    let at = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: the path is NUL-terminated and `attr` is a live `struct mount_attr` of the size given.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            at,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    if error.raw_os_error() != Some(libc::ENOSYS) {
        return Err(format!("restricting the mount {}: {error}", path.display()));
    }
    remount(path, flags)
}

/// The kernel's `ST_RELATIME` (statfs(2)): glibc's libc names it, musl's does not.
const ST_RELATIME: libc::c_ulong = 0x1000;

/// The older way to add restrictions: a remount that repeats the flags the mount already has.
fn remount(path: &Path, flags: u64) -> Result<(), String> {
    let c = cstring(path)?;
    // SAFETY: statvfs writes into the struct we own.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return Err(format!("statvfs {}: {}", path.display(), std::io::Error::last_os_error()));
    }
    let mut ms = libc::MS_REMOUNT | libc::MS_BIND;
    for (st, msf) in [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (ST_RELATIME, libc::MS_RELATIME),
    ] {
        if stat.f_flag & st != 0 {
            ms |= msf;
        }
    }
    for (attr, msf) in [
        (MOUNT_ATTR_RDONLY, libc::MS_RDONLY),
        (MOUNT_ATTR_NOSUID, libc::MS_NOSUID),
        (MOUNT_ATTR_NODEV, libc::MS_NODEV),
        (MOUNT_ATTR_NOEXEC, libc::MS_NOEXEC),
    ] {
        if flags & attr != 0 {
            ms |= msf;
        }
    }
    mount(None, path, None, ms, None)
}

/// An `O_PATH` descriptor of `name` in the directory `dir`, never following a link there: a
/// link is opened as itself, or, when `dir_only`, counts as nothing. `Ok(None)`: nothing there
/// (or, `dir_only`, a link or something else where a directory was asked for).
pub(super) fn open_at(dir: BorrowedFd<'_>, name: &CStr, dir_only: bool) -> std::io::Result<Option<OwnedFd>> {
    let mut flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    if dir_only {
        flags |= libc::O_DIRECTORY;
    }
    // SAFETY: openat reads the NUL-terminated name; a non-negative result is ours.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd >= 0 {
        // SAFETY: the descriptor was just returned to us.
        return Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }));
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENOENT) => Ok(None),
        Some(libc::ELOOP | libc::ENOTDIR) if dir_only => Ok(None),
        _ => Err(error),
    }
}

/// Binds what `source` (an `O_PATH` descriptor) refers to onto `name` in `dir` (found again
/// there without following a link), with the restrictions `flags` (`MOUNT_ATTR_*`). Binding a
/// path onto itself makes it a mount point: the kernel then refuses to remove or rename it
/// (`EBUSY`), and read-only, to change it in any way (`EROFS`). With the kernel's new mount
/// calls (Linux 5.12) no path is resolved and the mount is restricted before it is attached;
/// older kernels bind through `/proc/self/fd` and remount.
pub(super) fn bind_at(source: BorrowedFd<'_>, dir: BorrowedFd<'_>, name: &CStr, flags: u64) -> Result<(), String> {
    let what = || name.to_string_lossy().into_owned();
    let target = open_at(dir, name, false)
        .map_err(|e| format!("{}: {e}", what()))?
        .ok_or_else(|| format!("{} is gone", what()))?;
    match clone_restricted(source, flags) {
        Ok(tree) => {
            // SAFETY: both descriptors are live; the empty paths are NUL-terminated.
            let moved = unsafe {
                libc::syscall(
                    libc::SYS_move_mount,
                    tree.as_raw_fd(),
                    c"".as_ptr(),
                    target.as_raw_fd(),
                    c"".as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
                )
            };
            if moved != 0 {
                return Err(format!("mounting on {}: {}", what(), std::io::Error::last_os_error()));
            }
            Ok(())
        }
        Err(error) if error.raw_os_error() == Some(libc::ENOSYS) => {
            let fd_path = |fd: &dyn AsRawFd| std::path::PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
            mount(Some(&fd_path(&source)), &fd_path(&target), None, libc::MS_BIND, None)?;
            // The descriptor held before is the covered file: open the new mount on top.
            let top = open_at(dir, name, false)
                .map_err(|e| format!("{}: {e}", what()))?
                .ok_or_else(|| format!("{} is gone", what()))?;
            setattr(&fd_path(&top), flags, false)
        }
        Err(error) => Err(format!("copying the mount of {}: {error}", what())),
    }
}

/// A detached copy of the mount at `source` (not what is mounted below it), restricted by
/// `flags`. `ENOSYS` when the kernel lacks `open_tree` (5.2) or `mount_setattr` (5.12).
fn clone_restricted(source: BorrowedFd<'_>, flags: u64) -> std::io::Result<OwnedFd> {
    // SAFETY: open_tree on a live descriptor with an empty NUL-terminated path; a
    // non-negative result is a descriptor we own.
    let tree = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            source.as_raw_fd(),
            c"".as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint,
        )
    };
    let tree = i32::try_from(tree).ok().filter(|fd| *fd >= 0).ok_or_else(std::io::Error::last_os_error)?;
    // SAFETY: the descriptor was just returned to us.
    let tree = unsafe { OwnedFd::from_raw_fd(tree) };
    let attr = MountAttr { attr_set: flags, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: a live descriptor, an empty NUL-terminated path and a live `struct mount_attr`.
    let set = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if set != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(tree)
}

/// Mounts an empty read-only directory (a tmpfs of 4 KiB that nothing can write) on the
/// directory `name` in `dir`, found without following a link.
pub(super) fn empty_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<(), String> {
    let what = || name.to_string_lossy().into_owned();
    let target = open_at(dir, name, true)
        .map_err(|e| format!("{}: {e}", what()))?
        .ok_or_else(|| format!("{} is not a directory", what()))?;
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let at = std::path::PathBuf::from(format!("/proc/self/fd/{}", target.as_raw_fd()));
    mount(Some(Path::new("tmpfs")), &at, Some("tmpfs"), flags, Some("mode=0555,size=4k"))
        .map_err(|e| format!("{}: {e}", what()))
}

#[cfg(test)]
mod tests {
    /// Where libc names it (glibc), it is the value written out for musl.
    #[cfg(target_env = "gnu")]
    #[test]
    fn st_relatime_is_the_kernels() {
        assert_eq!(super::ST_RELATIME, libc::ST_RELATIME);
    }
}
