//! The first tier, on the `hakoniwa` crate: new user, mount, PID, network, IPC and UTS
//! namespaces; a new root that holds only the view (system read-only, toolchains read-only,
//! the checkout and the private `/tmp` and `HOME` read-write); then, in the command's own
//! process, Landlock and the shared restrictions before `exec`. The command is PID 1 of its
//! namespace: when it ends, the kernel kills everything it left behind, and when the helper
//! dies (the runner's timeout or cancel), the parent-death signal takes the namespace down.

use std::path::Path;

use hakoniwa::{Container, MountOptions, Namespace};

use super::cgroup::Limits;
use super::exec::{self, Ended};
use super::restrict;
use super::spec::Spec;

/// The uid and gid a run started by root has inside: not 0, so the command holds no
/// capabilities even in its own namespaces (it cannot remount the read-only view).
const UNPRIVILEGED_ID: u32 = 1000;

pub fn run(spec: &Spec, limits: &Limits) -> Result<Ended, String> {
    let mut container = Container::new();
    // The new root is an empty directory beside the run's private ones, removed with them.
    let root = spec.private_home.with_file_name("root");
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    container.rootdir(&root);
    container.unshare(Namespace::Ipc).unshare(Namespace::Uts).hostname("forgeloop-sandbox");
    if !spec.network {
        container.unshare(Namespace::Network);
    }
    // SAFETY: getuid/getgid have no arguments and cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    container.uidmap(if uid == 0 { UNPRIVILEGED_ID } else { uid });
    container.gidmap(if gid == 0 { UNPRIVILEGED_ID } else { gid });

    for dir in &spec.view.system {
        match std::fs::read_link(dir) {
            Ok(target) => {
                container.symlink(&target.to_string_lossy(), &dir.to_string_lossy());
            }
            Err(_) => {
                container.bindmount_ro(&dir.to_string_lossy(), &dir.to_string_lossy());
            }
        }
    }
    container.devfsmount("/dev");
    container.bindmount_rw(&spec.private_tmp.to_string_lossy(), "/tmp");
    if let Some(home) = &spec.view.home {
        container.bindmount_rw(&spec.private_home.to_string_lossy(), &home.to_string_lossy());
    }
    for path in &spec.view.read {
        container.bindmount_ro(&path.to_string_lossy(), &path.to_string_lossy());
    }
    for path in spec.view.write.iter().chain(std::iter::once(&spec.checkout)) {
        container.bindmount_rw(&path.to_string_lossy(), &path.to_string_lossy());
    }
    // What must stay hidden inside the system trees (machine secrets, a home under /opt, …):
    // covered by an empty tmpfs or /dev/null. Landlock leaves them out too; the mounts matter
    // where the kernel has no Landlock. A file is covered only when this user owns it (hakoniwa
    // opens a file's mount point for writing, which inside the namespace only an owner can);
    // a file of another owner that is not world-readable is unreadable inside anyway.
    for hidden in &spec.view.hidden {
        let target = hidden.to_string_lossy();
        if hidden.is_dir() {
            let flags = MountOptions::NOSUID | MountOptions::NODEV | MountOptions::RDONLY;
            container.mount("tmpfs", &target, "tmpfs", flags, None);
        } else if owned_by(hidden, uid) {
            container.bindmount_ro("/dev/null", &target);
        }
    }

    let inner = spec.clone();
    let network = spec.network;
    let memory_by_cgroup = limits.memory_by_cgroup();
    // SAFETY: the closure runs in the forked child (the namespace's PID 1) of this
    // single-threaded helper; it only applies restrictions and execs.
    let mut command = unsafe {
        container.command_from_closure(move || {
            if !network && let Err(message) = restrict::loopback_up() {
                return exec::fail(&message);
            }
            exec::exec_restricted(&inner, memory_by_cgroup)
        })
    };
    command.envs(&spec.env).current_dir(&spec.checkout);
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    match status.exit_code {
        Some(code) => Ok(Ended::Exited(code)),
        None if status.code > 128 && status.code < 128 + 65 => Ok(Ended::Signalled(status.code - 128)),
        None => Err(status.reason),
    }
}

fn owned_by(path: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    path.symlink_metadata().is_ok_and(|m| m.is_file() && m.uid() == uid)
}
