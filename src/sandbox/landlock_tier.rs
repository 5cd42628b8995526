//! The second tier, for machines that refuse unprivileged user namespaces: the command runs
//! under Landlock (files; signals and ptrace to anything outside the run), a seccomp filter
//! (no network sockets), no capabilities and rlimits; the helper is its child subreaper and
//! kills every descendant when the command ends or the runner stops the run.

use super::cgroup::Limits;
use super::exec::{self, Ended};
use super::spec::Spec;
use super::{EXIT_SANDBOX_FAILED, reaper};

pub fn run(spec: &Spec, limits: &Limits) -> Result<Ended, String> {
    // SAFETY: prctl/sigprocmask/fork on a single-threaded process; the child only applies
    // restrictions and execs (or exits).
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(format!("cannot become a child subreaper: {}", std::io::Error::last_os_error()));
        }
        let mut watched: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut watched);
        for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut watched, signal);
        }
        let mut previous: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &watched, &mut previous);
        let helper = libc::getpid();
        let child = libc::fork();
        if child < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if child == 0 {
            libc::sigprocmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != helper {
                libc::_exit(EXIT_SANDBOX_FAILED);
            }
            libc::_exit(exec_in_sandbox(spec, limits));
        }
        let ended = wait_for(child, &watched);
        reaper::kill_descendants();
        Ok(ended)
    }
}

/// Applies the restrictions and execs the command; returns only on failure.
fn exec_in_sandbox(spec: &Spec, limits: &Limits) -> i32 {
    // Nothing of the helper's but stdin, stdout and stderr reaches the command. The report
    // pipe stays until `exec` (it is close-on-exec), so a failure below still reaches it.
    let keep = exec::report_fd().and_then(|fd| u32::try_from(fd).ok());
    let ranges = match keep {
        Some(fd) => [(3, fd - 1), (fd + 1, u32::MAX)],
        None => [(3, u32::MAX), (1, 0)],
    };
    for (first, last) in ranges.into_iter().filter(|(first, last)| first <= last) {
        // SAFETY: close_range with integer arguments.
        unsafe {
            libc::syscall(libc::SYS_close_range, first, last, 0u32);
        }
    }
    exec::exec_restricted(spec, limits.memory_by_cgroup())
}

/// Waits for the command (reaping orphans meanwhile); a stop signal from the runner ends the
/// wait at once and is passed on as how the command ended.
///
/// # Safety
/// `watched` must be blocked in this thread.
unsafe fn wait_for(child: libc::pid_t, watched: &libc::sigset_t) -> Ended {
    loop {
        // SAFETY: the caller blocked `watched`; sigwaitinfo writes the info we own.
        let signal = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::sigwaitinfo(watched, &mut info)
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
