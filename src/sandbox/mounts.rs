//! The first tier's root filesystem, assembled by PID 1 of the new namespaces in the run's
//! empty `root` directory, then made `/` with `pivot_root`: the system trees read-only, the
//! toolchains and `read_paths` read-only, the checkout, the private `/tmp` and `HOME` and
//! `write_paths` read-write, the git directory read-only (unless the profile asks otherwise),
//! the machine's secrets covered, a minimal `/dev` and a `/proc` of the run's own processes.
//! Every mount is `nosuid,nodev` (devices are the five bound nodes of `/dev`), and a granted
//! path is checked, once mounted, to be the very file the run was planned with. forgeloop's
//! support directory for the run is bound read-only at its own path, and over the mounted
//! checkout the held files are made read-only ([`super::hold`]).
//!
//! Mount points are made on disk in the run directory, not in a tmpfs of the namespace: when
//! forgeloop is root, this process's uid (root) has no mapping inside until it becomes uid
//! 1000, and the kernel refuses to create files for an unmapped uid in a filesystem the
//! namespace owns. The root is rebuilt for each command of a run, and some mount points lie
//! inside trees an earlier command could write (a toolchain inside `HOME`, the checkout inside
//! forgeloop's home inside `HOME`): they are made one component at a time without ever
//! following a symbolic link, so a link planted there stops the run instead of leading this
//! process — still with root's uid, when forgeloop is root — to create files elsewhere.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::hold;
use super::mount_calls::{
    MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, cstring, mount, setattr,
};
use super::spec::{CacheMount, INSIDE_ID, Spec};
use super::view::Pin;

/// Device nodes bound into `/dev`. No `/dev/tty`: a run has no controlling terminal.
const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

enum Kind {
    ReadOnly,
    ReadWrite,
    /// An empty read-only tmpfs over a directory that must stay hidden.
    HideDir,
    /// `/dev/null` over a file that must stay hidden.
    HideFile,
    /// A system directory that is a symlink on this machine (`/bin` → `usr/bin`).
    Symlink(PathBuf),
    /// The run's cache: the base layer (`source`) read-only under the cycle's layer.
    Overlay {
        upper: PathBuf,
        work: PathBuf,
    },
}

struct Mount {
    source: PathBuf,
    target: PathBuf,
    kind: Kind,
}

/// Builds the root and makes it `/`. The working directory is then `/`.
pub(super) fn build_root(spec: &Spec) -> Result<(), String> {
    let root = spec.run.root.as_path();
    // No mount made here may propagate back to the host.
    mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    mount(Some(root), root, None, libc::MS_BIND | libc::MS_REC, None)?;
    let mut plan = plan(spec);
    plan.sort_by(|a, b| a.target.cmp(&b.target));
    for item in &plan {
        apply(root, item, &spec.view.pins)?;
    }
    // Over the mounted checkout: the held files read-only, their directories pinned.
    hold::hold(root, spec)?;
    devices(root)?;
    let proc = inside(root, Path::new("/proc"));
    mount_point(root, Path::new("/proc"), true)?;
    mount(Some(Path::new("proc")), &proc, Some("proc"), libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC, None)?;
    pivot(root)?;
    // The skeleton itself (mount points, /dev's entries) is not the test's to change.
    setattr(Path::new("/"), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false)
}

/// Everything to mount, in no particular order.
fn plan(spec: &Spec) -> Vec<Mount> {
    let view = &spec.view;
    let mut plan = Vec::new();
    let mut add = |source: &Path, target: &Path, kind| {
        plan.push(Mount { source: source.to_path_buf(), target: target.to_path_buf(), kind });
    };
    for dir in &view.system {
        match std::fs::read_link(dir) {
            Ok(link) => add(dir, dir, Kind::Symlink(link)),
            Err(_) => add(dir, dir, Kind::ReadOnly),
        }
    }
    add(&spec.run.tmp, Path::new("/tmp"), Kind::ReadWrite);
    if let Some(home) = &view.home {
        add(&spec.run.home, home, Kind::ReadWrite);
    }
    for path in &view.read {
        add(path, path, Kind::ReadOnly);
    }
    for path in &view.write {
        add(path, path, Kind::ReadWrite);
    }
    add(spec.run.checkout_source.as_ref().unwrap_or(&spec.run.checkout), &spec.run.checkout, Kind::ReadWrite);
    if let Some(cache) = &spec.run.cache {
        match &spec.run.cache_mount {
            None => add(cache, cache, Kind::ReadWrite),
            Some(CacheMount::Bind { source }) => add(source, cache, Kind::ReadWrite),
            Some(CacheMount::Overlay { lower, upper, work }) => {
                add(lower, cache, Kind::Overlay { upper: upper.clone(), work: work.clone() });
            }
        }
    }
    if let Some(gitdir) = &spec.run.gitdir {
        add(gitdir, gitdir, if spec.writable_git { Kind::ReadWrite } else { Kind::ReadOnly });
    }
    // forgeloop's own files for the run (the result recorders): no command may change them.
    if let Some(support) = &spec.run.support {
        add(support, support, Kind::ReadOnly);
    }
    for hidden in &view.hidden {
        match hidden.symlink_metadata() {
            Ok(meta) if meta.is_dir() => add(hidden, hidden, Kind::HideDir),
            Ok(meta) if !meta.file_type().is_symlink() => add(hidden, hidden, Kind::HideFile),
            _ => {}
        }
    }
    plan
}

fn apply(root: &Path, item: &Mount, pins: &[Pin]) -> Result<(), String> {
    let target = inside(root, &item.target);
    match &item.kind {
        Kind::Symlink(link) => symlink(link, &target),
        Kind::ReadOnly | Kind::ReadWrite => {
            let is_dir =
                std::fs::metadata(&item.source).map_err(|e| format!("{}: {e}", item.source.display()))?.is_dir();
            mount_point(root, &item.target, is_dir)?;
            mount(Some(&item.source), &target, None, libc::MS_BIND | libc::MS_REC, None)?;
            let mut flags = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
            if matches!(item.kind, Kind::ReadOnly) {
                flags |= MOUNT_ATTR_RDONLY;
            }
            setattr(&target, flags, true)?;
            if let Some(pin) = pins.iter().find(|pin| pin.path == item.source) {
                let now = std::fs::metadata(&target).map_err(|e| format!("{}: {e}", item.source.display()))?;
                if !pin.matches(&now) {
                    return Err(format!("{} is no longer the file it was when the run began", item.source.display()));
                }
            }
            Ok(())
        }
        Kind::Overlay { upper, work } => {
            mount_point(root, &item.target, true)?;
            overlay(&item.source, upper, work, &target)
        }
        Kind::HideDir => {
            mount_point(root, &item.target, true)?;
            let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            mount(Some(Path::new("tmpfs")), &target, Some("tmpfs"), flags, Some("mode=0755,size=4k"))
        }
        Kind::HideFile => {
            mount_point(root, &item.target, false)?;
            mount(Some(Path::new("/dev/null")), &target, None, libc::MS_BIND, None)
        }
    }
}

/// Mounts an overlay of `lower` (read-only) and `upper` at `target`, as uid 1000 of the
/// namespace: overlayfs does what a run asks of it with its mounter's credentials, and copies a
/// lower file up as the mounter, so the mounter must be the account the run's files belong to
/// (this process's own uid has no mapping when forgeloop is root). The directories are opened
/// here, where every parent can be walked, and named to the mount by descriptor: the account
/// could not walk forgeloop's private home to them. `userxattr`: overlayfs keeps its markers
/// in `user.` attributes, the only ones a user namespace may write.
fn overlay(lower: &Path, upper: &Path, work: &Path, target: &Path) -> Result<(), String> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let open = |path: &Path| -> Result<OwnedFd, String> {
        let c = cstring(path)?;
        // SAFETY: open reads the NUL-terminated path; a non-negative result is ours.
        let fd =
            unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(format!("{}: {}", path.display(), std::io::Error::last_os_error()));
        }
        // SAFETY: the descriptor was just returned to us.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let (l, u, w, t) = (open(lower)?, open(upper)?, open(work)?, open(target)?);
    let fd = |f: &OwnedFd| format!("/proc/self/fd/{}", f.as_raw_fd());
    let data = CString::new(format!("lowerdir={},upperdir={},workdir={},userxattr", fd(&l), fd(&u), fd(&w)))
        .map_err(|_| "overlay options hold a NUL byte".to_owned())?;
    let target_c = cstring(Path::new(&fd(&t)))?;
    // SAFETY: this process is single-threaded; the child only makes system calls on memory
    // prepared above, then `_exit`s.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(format!("fork for the cache's overlay: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        // SAFETY: plain system calls on live NUL-terminated strings; _exit never returns.
        unsafe {
            libc::setfsgid(INSIDE_ID);
            libc::setfsuid(INSIDE_ID);
            let flags = libc::MS_NOSUID | libc::MS_NODEV;
            let done =
                libc::mount(c"overlay".as_ptr(), target_c.as_ptr(), c"overlay".as_ptr(), flags, data.as_ptr().cast());
            let code =
                if done == 0 { 0 } else { std::io::Error::last_os_error().raw_os_error().unwrap_or(1).clamp(1, 255) };
            libc::_exit(code)
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    if unsafe { libc::waitpid(child, &mut status, 0) } != child {
        return Err(format!("waiting for the cache's overlay: {}", std::io::Error::last_os_error()));
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, errno) => Err(format!(
            "mounting the cache's overlay on {}: {}",
            target.display(),
            std::io::Error::from_raw_os_error(errno)
        )),
        _ => Err(format!("mounting the cache's overlay on {}: the mounting process died", target.display())),
    }
}

/// A symlink of the skeleton, made once per run (the skeleton outlives a command).
fn symlink(link: &Path, at: &Path) -> Result<(), String> {
    match std::fs::read_link(at) {
        Ok(existing) if existing == link => Ok(()),
        Ok(_) => Err(format!("{} already links elsewhere", at.display())),
        Err(_) => std::os::unix::fs::symlink(link, at).map_err(|e| format!("symlink {}: {e}", at.display())),
    }
}

/// `/dev`: the five harmless devices, a private `/dev/shm` and `/dev/pts`, and the usual links.
fn devices(root: &Path) -> Result<(), String> {
    let dev = inside(root, Path::new("/dev"));
    mount_point(root, Path::new("/dev"), true)?;
    for name in DEVICES {
        let source = Path::new("/dev").join(name);
        if !source.exists() {
            continue;
        }
        mount_point(root, &source, false)?;
        let target = dev.join(name);
        mount(Some(&source), &target, None, libc::MS_BIND, None)?;
        setattr(&target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false)?;
    }
    let shm = dev.join("shm");
    mount_point(root, Path::new("/dev/shm"), true)?;
    mount(Some(Path::new("tmpfs")), &shm, Some("tmpfs"), libc::MS_NOSUID | libc::MS_NODEV, Some("mode=1777"))?;
    let pts = dev.join("pts");
    mount_point(root, Path::new("/dev/pts"), true)?;
    mount(
        Some(Path::new("devpts")),
        &pts,
        Some("devpts"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=620"),
    )?;
    for (link, to) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        symlink(Path::new(to), &dev.join(link))?;
    }
    Ok(())
}

/// Makes `root` the root of this mount namespace and drops the old one.
fn pivot(root: &Path) -> Result<(), String> {
    let dot = c".";
    std::env::set_current_dir(root).map_err(|e| format!("chdir {}: {e}", root.display()))?;
    // SAFETY: pivot_root and umount2 read the given NUL-terminated strings.
    unsafe {
        if libc::syscall(libc::SYS_pivot_root, dot.as_ptr(), dot.as_ptr()) != 0 {
            return Err(format!("pivot_root: {}", std::io::Error::last_os_error()));
        }
        if libc::umount2(dot.as_ptr(), libc::MNT_DETACH) != 0 {
            return Err(format!("detaching the old root: {}", std::io::Error::last_os_error()));
        }
    }
    std::env::set_current_dir("/").map_err(|e| format!("chdir /: {e}"))
}

/// `root` + absolute `path`.
fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Makes `path` (absolute, as seen inside) exist below `root` as a directory (`dir`) or a file
/// to mount on, one component at a time from `root`, never following a symbolic link: a link,
/// or a file where a directory should be, is an error.
fn mount_point(root: &Path, path: &Path, dir: bool) -> Result<(), String> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let fail = |what: &str| format!("cannot make the mount point {}: {what}", path.display());
    let open = |at: libc::c_int, name: &CString, flags: libc::c_int| -> Option<OwnedFd> {
        // SAFETY: openat reads the NUL-terminated name; a non-negative result is ours.
        let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let root_c = cstring(root)?;
    let mut current = open(libc::AT_FDCWD, &root_c, libc::O_PATH | libc::O_DIRECTORY)
        .ok_or_else(|| fail(&std::io::Error::last_os_error().to_string()))?;
    let names: Vec<_> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let name_c = CString::new(name.as_bytes()).map_err(|_| fail("a NUL byte"))?;
        let last = i + 1 == names.len();
        if last && !dir {
            // SAFETY: as above; O_EXCL never follows a link, and an existing name is checked below.
            let made = unsafe {
                libc::openat(
                    current.as_raw_fd(),
                    name_c.as_ptr(),
                    libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                )
            };
            if made >= 0 {
                // SAFETY: the descriptor was just returned to us.
                drop(unsafe { OwnedFd::from_raw_fd(made) });
                return Ok(());
            }
            let file =
                open(current.as_raw_fd(), &name_c, libc::O_PATH).ok_or_else(|| fail("it is a link or unreachable"))?;
            let meta = std::fs::File::from(file).metadata().map_err(|e| fail(&e.to_string()))?;
            return if meta.is_dir() { Err(fail("a directory is in the way")) } else { Ok(()) };
        }
        let next = match open(current.as_raw_fd(), &name_c, libc::O_PATH | libc::O_DIRECTORY) {
            Some(fd) => fd,
            None => {
                // SAFETY: mkdirat reads the NUL-terminated name.
                unsafe { libc::mkdirat(current.as_raw_fd(), name_c.as_ptr(), 0o755) };
                open(current.as_raw_fd(), &name_c, libc::O_PATH | libc::O_DIRECTORY)
                    .ok_or_else(|| fail(&format!("{} is a link or not a directory", name.to_string_lossy())))?
            }
        };
        current = next;
    }
    Ok(())
}
