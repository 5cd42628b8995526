//! The second tier, for machines that refuse unprivileged user namespaces (never for a
//! forgeloop started by root: see [`super::probe_tiers`]): the command runs under Landlock
//! (files; signals and ptrace to anything outside the run), the seccomp filter (no network
//! sockets), no capabilities and rlimits; the helper is its child subreaper and kills every
//! descendant when the command ends or the runner stops the run.

use std::net::SocketAddr;

use super::cgroup::Limits;
use super::connects::{Channel, Watcher};
use super::exec::{self, Ended};
use super::spec::Spec;
use super::{EXIT_SANDBOX_FAILED, reaper};

/// How the command ended, and the destinations it tried ([`super::connects`]).
pub(super) fn run(spec: &Spec, limits: &Limits, channel: Option<Channel>) -> Result<(Ended, Vec<SocketAddr>), String> {
    // SAFETY: prctl on integers.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(format!("cannot become a child subreaper: {}", std::io::Error::last_os_error()));
    }
    let watched = exec::stop_signals();
    // SAFETY: getpid/fork on a single-threaded process; the child only applies restrictions
    // and execs (or exits).
    let (helper, child) = unsafe { (libc::getpid(), libc::fork()) };
    if child < 0 {
        let error = std::io::Error::last_os_error();
        exec::unblock(&watched);
        return Err(format!("fork: {error}"));
    }
    if child == 0 {
        exec::unblock(&watched);
        // SAFETY: prctl/getppid/_exit with integers.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != helper {
                libc::_exit(EXIT_SANDBOX_FAILED);
            }
            // The run's cgroups, if any were made (this tier never runs for root, so none are).
            if let Err(message) = limits.admit(libc::getpid()) {
                libc::_exit(exec::fail(&message));
            }
            libc::_exit(exec::exec_restricted(spec, limits.memory_by_cgroup()));
        }
    }
    let watcher = channel.map(|channel| channel.watch(spec));
    // SAFETY: the stop signals are blocked in this thread (and in the watcher's, which
    // inherited the mask).
    let ended = unsafe { exec::wait_for(child, &watched) };
    reaper::kill_descendants();
    Ok((ended, watcher.map(Watcher::finish).unwrap_or_default()))
}
