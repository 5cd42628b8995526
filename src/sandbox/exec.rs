//! What both tiers share inside the sandbox: how a command ended, how a failure to build the
//! sandbox is reported, and the last step in the command's own process (restrict, then exec).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicI32, Ordering};

use super::spec::Spec;
use super::{EXIT_SANDBOX_FAILED, PROXY_FD_ENV, REPORT_FD_ENV, SPEC_FD_ENV, restrict};

/// How the sandboxed command ended.
pub(super) enum Ended {
    Exited(i32),
    Signalled(i32),
}

/// The runner's report pipe (design §5.6): -1 until [`adopt_report_fd`] finds one.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);
/// The channel for the egress proxy's socket: -1 until [`adopt_report_fd`] finds one.
static PROXY_FD: AtomicI32 = AtomicI32::new(-1);
/// The command's end of the connection record's channel ([`super::connects`]): -1 without one.
static CONNECTS_FD: AtomicI32 = AtomicI32::new(-1);

/// Takes over the report pipe the runner passed (its number in [`REPORT_FD_ENV`]): marked
/// close-on-exec, so the command never holds it, and what [`fail`] writes there is known to
/// come from the helper, not from a test that exits 125 and prints the same words.
pub(super) fn adopt_report_fd() {
    for (name, slot) in [(REPORT_FD_ENV, &REPORT_FD), (PROXY_FD_ENV, &PROXY_FD)] {
        let Some(fd) = std::env::var(name).ok().and_then(|v| v.parse::<i32>().ok()).filter(|fd| *fd > 2) else {
            continue;
        };
        // SAFETY: fcntl on an integer; a number that is not an open descriptor fails with EBADF.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == 0 {
            slot.store(fd, Ordering::Relaxed);
        }
    }
}

/// The channel on which the egress proxy's socket goes to the runner, when it passed one.
pub(super) fn proxy_fd() -> Option<i32> {
    Some(PROXY_FD.load(Ordering::Relaxed)).filter(|fd| *fd > 2)
}

/// Keeps the connection record's channel (close-on-exec) through [`close_inherited`].
pub(super) fn keep_connects_fd(fd: i32) {
    CONNECTS_FD.store(fd, Ordering::Relaxed);
}

/// The command's end of the connection record's channel, when the helper made one.
pub(super) fn connects_fd() -> Option<i32> {
    Some(CONNECTS_FD.load(Ordering::Relaxed)).filter(|fd| *fd > 2)
}

/// Reads the spec from the sealed memory file the runner passed (its number in
/// [`SPEC_FD_ENV`]) and closes it.
pub(super) fn take_spec() -> Result<Spec, String> {
    let fd = std::env::var(SPEC_FD_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|fd| *fd > 2)
        .ok_or("the helper was started without a spec")?;
    // SAFETY: the runner passed this descriptor for the helper alone; it is read once, here,
    // and closed when the File drops.
    let mut file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text).map_err(|e| format!("reading the spec: {e}"))?;
    // Unknown fields are refused: a helper of another build must not skip a defence it does
    // not know (`cargo build` builds both binaries; `cargo run` only forgeloop).
    let spec: Spec = serde_json::from_str(&text).map_err(|e| {
        format!("the spec is not valid: {e} (a forgeloop-sandbox of another build? install both binaries of one build)")
    })?;
    if spec.version != super::spec::SPEC_VERSION {
        return Err(format!(
            "this sandbox helper is version {} and the spec was written by forgeloop {}: install both binaries of one release",
            super::spec::SPEC_VERSION,
            if spec.version.is_empty() { "of an older release" } else { &spec.version }
        ));
    }
    Ok(spec)
}

/// The report pipe, when the runner passed one.
pub(super) fn report_fd() -> Option<i32> {
    Some(REPORT_FD.load(Ordering::Relaxed)).filter(|fd| *fd > 2)
}

/// Says why the sandbox could not be built (the run's log shows it, the report pipe tells the
/// runner) and gives the exit code.
pub(super) fn fail(message: &str) -> i32 {
    eprintln!("forgeloop: the sandbox could not be built: {message}");
    report(&format!("{message}\n"));
    EXIT_SANDBOX_FAILED
}

/// Writes `text` on the report pipe, when the runner passed one.
pub(super) fn report(text: &str) {
    if let Some(fd) = report_fd() {
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            // SAFETY: writes from a live buffer of the given length.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            let Ok(n) = usize::try_from(n) else { break };
            if n == 0 {
                break;
            }
            rest = &rest[n..];
        }
    }
}

/// The last step of both tiers, in the command's own process: the restrictions, then `exec`
/// with the command's environment in its checkout. Returns only on failure, with the exit code
/// to use (125 when the sandbox could not be built; 127/126, as a shell says, when the program
/// was not found or could not be executed).
pub(super) fn exec_restricted(spec: &Spec, memory_by_cgroup: bool) -> i32 {
    close_inherited();
    if let Err(message) = restrict::apply(spec, memory_by_cgroup, connects_fd()) {
        return fail(&message);
    }
    let error = std::process::Command::new(&spec.argv[0])
        .args(&spec.argv[1..])
        .env_clear()
        .envs(&spec.env)
        .current_dir(&spec.run.checkout)
        .exec();
    let _ = writeln!(std::io::stderr(), "forgeloop: could not start {:?}: {error}", spec.argv[0]);
    if error.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 }
}

/// Nothing of the helper's but stdin, stdout and stderr reaches the command. The report pipe
/// and the connection record's channel stay until `exec` (both are close-on-exec), so a
/// failure before then still reaches the runner and the record's listener can be handed over.
fn close_inherited() {
    let mut keep: Vec<u32> =
        [report_fd(), connects_fd()].into_iter().flatten().filter_map(|fd| u32::try_from(fd).ok()).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut ranges = Vec::new();
    let mut first = 3u32;
    for fd in keep {
        if fd > first {
            ranges.push((first, fd - 1));
        }
        first = first.max(fd.saturating_add(1));
    }
    ranges.push((first, u32::MAX));
    for (first, last) in ranges.into_iter().filter(|(first, last)| first <= last) {
        // SAFETY: close_range with integer arguments.
        unsafe {
            libc::syscall(libc::SYS_close_range, first, last, 0u32);
        }
    }
}

/// The signals that stop a run (and SIGCHLD, to wait), blocked in this thread so they can be
/// waited for; the previous mask is kept for the child to restore.
pub(super) struct Watched {
    set: libc::sigset_t,
    previous: libc::sigset_t,
}

pub(super) fn stop_signals() -> Watched {
    // SAFETY: sigset operations on sets we own; sigprocmask on this (only) thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        let mut previous: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut previous);
        Watched { set, previous }
    }
}

/// Restores the mask from before [`stop_signals`] (a child does, before it execs).
pub(super) fn unblock(watched: &Watched) {
    // SAFETY: sigprocmask with a set we own.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, &watched.previous, std::ptr::null_mut());
    }
}

/// Waits for `child` (reaping any other child meanwhile); a stop signal from the runner ends the
/// wait at once and is passed on as how the command ended.
///
/// # Safety
/// The signals of `watched` must be blocked in this thread.
pub(super) unsafe fn wait_for(child: libc::pid_t, watched: &Watched) -> Ended {
    loop {
        // SAFETY: the caller blocked the set; sigwaitinfo writes the info we own.
        let signal = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::sigwaitinfo(&watched.set, &mut info)
        };
        if signal < 0 {
            continue;
        }
        if signal != libc::SIGCHLD {
            return Ended::Signalled(signal);
        }
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status we own.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            if pid == child {
                return if libc::WIFSIGNALED(status) {
                    Ended::Signalled(libc::WTERMSIG(status))
                } else {
                    Ended::Exited(libc::WEXITSTATUS(status))
                };
            }
        }
    }
}
