//! The first tier: new user, mount, PID, IPC and UTS namespaces (and network, unless the
//! profile shares the host's), a new root holding only the view ([`super::mounts`]), then, in
//! the command's own process, the shared restrictions before `exec`.
//!
//! The helper `clone`s the command's process straight into the new namespaces, so it is PID 1
//! there: when it ends, the kernel kills everything it left behind. The helper, outside,
//! writes the user namespace's id maps: inside, the command is uid and gid 1000, which outside
//! is the person, or — when forgeloop runs as root — the unprivileged account of `[runner]
//! run_as` (only a process outside the namespace, with root's `CAP_SETUID`, may map another
//! account). The root filesystem is assembled before that switch, still with the helper's
//! credentials, so root's toolchains and forgeloop's private home can be bound in, while the
//! command then holds nobody's files but its own and the world-readable ones.

use std::io::{Read, Write};
use std::net::SocketAddr;

use super::cgroup::Limits;
use super::connects::{Channel, Watcher};
use super::exec::{self, Ended};
use super::mounts;
use super::spec::{Account, INSIDE_ID, INSIDE_PROXY_PORT, Spec};
use crate::domain::egress::NetworkMode;

/// How the command ended, and the destinations it tried ([`super::connects`]).
pub(super) fn run(spec: &Spec, limits: &Limits, channel: Option<Channel>) -> Result<(Ended, Vec<SocketAddr>), String> {
    // SAFETY: getuid/getgid/geteuid have no arguments and cannot fail.
    let (uid, gid, euid) = unsafe { (libc::getuid(), libc::getgid(), libc::geteuid()) };
    let outside = match (euid, spec.run_as) {
        (0, Some(account)) => account,
        (0, None) => {
            return Err("forgeloop runs as root, and no unprivileged account to run the test as was given".into());
        }
        _ => Account { uid, gid },
    };
    if euid == 0 {
        // The command must not carry root's supplementary groups (group 0 can read files that
        // others cannot) into the namespace.
        // SAFETY: setgroups with a zero-length list reads no memory.
        if unsafe { libc::setgroups(0, std::ptr::null()) } != 0 {
            return Err(format!("setgroups: {}", std::io::Error::last_os_error()));
        }
    }
    let (ready_r, ready_w) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    if spec.network != NetworkMode::Open {
        flags |= libc::CLONE_NEWNET;
    }
    let watched = exec::stop_signals();
    // SAFETY: this process is single-threaded (design §5.6), so the child may do anything the
    // parent could; raw clone without a new stack behaves like fork. The signal mask is the
    // caller's (exec::stop_signals blocked the stop signals; the child restores them).
    let child = unsafe {
        libc::syscall(libc::SYS_clone, (flags | libc::SIGCHLD) as libc::c_ulong, 0usize, 0usize, 0usize, 0usize)
    };
    if child < 0 {
        let error = std::io::Error::last_os_error();
        exec::unblock(&watched);
        return Err(format!("cannot create the namespaces: {error}"));
    }
    if child == 0 {
        drop(ready_w);
        exec::unblock(&watched);
        // SAFETY: _exit never returns; nothing of the helper's state needs unwinding.
        unsafe { libc::_exit(inside(spec, limits, ready_r)) }
    }
    let child = child as libc::pid_t;
    drop(ready_r);
    // The command's process joins the run's cgroup before it runs anything (it waits for the
    // ready byte), and its children inherit it.
    if let Err(message) = write_maps(child, outside).and_then(|()| limits.admit(child)) {
        // SAFETY: kill/waitpid on our own child.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        }
        exec::unblock(&watched);
        return Err(message);
    }
    // No fork or clone after this: the watcher is a thread.
    let watcher = channel.map(|channel| channel.watch(spec));
    let mut ready_w = ready_w;
    let _ = ready_w.write_all(&[1]);
    drop(ready_w);
    // SAFETY: the stop signals are blocked in this thread (exec::stop_signals) and in the
    // watcher's, which inherited the mask.
    let ended = unsafe { exec::wait_for(child, &watched) };
    if matches!(ended, Ended::Signalled(_)) {
        // A stop signal: PID 1's death takes the whole namespace down.
        // SAFETY: kill/waitpid on our own child.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        }
    }
    Ok((ended, watcher.map(Watcher::finish).unwrap_or_default()))
}

/// The helper's side of the user namespace: uid and gid 1000 inside are `outside` outside.
fn write_maps(child: libc::pid_t, outside: Account) -> Result<(), String> {
    let proc = format!("/proc/{child}");
    let write = |file: &str, text: String| {
        std::fs::write(format!("{proc}/{file}"), text).map_err(|e| format!("writing the namespace's {file}: {e}"))
    };
    write("uid_map", format!("{INSIDE_ID} {} 1\n", outside.uid))?;
    write("setgroups", "deny".into())?;
    write("gid_map", format!("{INSIDE_ID} {} 1\n", outside.gid))
}

/// PID 1 of the new namespaces: waits for the id maps, builds the root, becomes uid 1000 and
/// execs the command. Returns only on failure, with the exit code.
fn inside(spec: &Spec, limits: &Limits, ready: std::io::PipeReader) -> i32 {
    // Set before waiting: if the helper dies now, this dies too (and so the namespace).
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    let mut ready = ready;
    let mut byte = [0u8; 1];
    if ready.read_exact(&mut byte).is_err() {
        return exec::fail("the helper did not set up the user namespace");
    }
    drop(ready);
    if let Err(message) = mounts::build_root(spec) {
        return exec::fail(&message);
    }
    // SAFETY: sethostname reads the given bytes.
    unsafe {
        let name = b"forgeloop-sandbox";
        libc::sethostname(name.as_ptr().cast(), name.len());
    }
    if spec.network != NetworkMode::Open
        && let Err(message) = super::restrict::loopback_up()
    {
        return exec::fail(&message);
    }
    if spec.network == NetworkMode::Allowlist
        && let Err(message) = hand_proxy_listener()
    {
        return exec::fail(&message);
    }
    if let Err(message) = become_inside_user() {
        return exec::fail(&message);
    }
    exec::exec_restricted(spec, limits.memory_by_cgroup())
}

/// `allowlist`: the run's only way out is the egress proxy, reached at
/// `127.0.0.1:INSIDE_PROXY_PORT` in this (otherwise empty) network namespace. The socket is
/// made here and handed to the forgeloop process, which serves it from outside.
fn hand_proxy_listener() -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let channel = exec::proxy_fd().ok_or("the helper was given no channel for the proxy's socket")?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", INSIDE_PROXY_PORT))
        .map_err(|e| format!("cannot listen for the egress proxy on 127.0.0.1:{INSIDE_PROXY_PORT}: {e}"))?;
    super::fdpass::send(channel, listener.as_raw_fd()).map_err(|e| format!("cannot hand over the proxy's socket: {e}"))
}

/// uid and gid 1000 of the namespace, for good. The parent-death signal is set again after the
/// switch (the kernel clears it when the uid changes).
fn become_inside_user() -> Result<(), String> {
    // SAFETY: plain integer system calls.
    unsafe {
        if libc::setresgid(INSIDE_ID, INSIDE_ID, INSIDE_ID) != 0 {
            return Err(format!("setresgid: {}", std::io::Error::last_os_error()));
        }
        if libc::setresuid(INSIDE_ID, INSIDE_ID, INSIDE_ID) != 0 {
            return Err(format!("setresuid: {}", std::io::Error::last_os_error()));
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
    Ok(())
}
