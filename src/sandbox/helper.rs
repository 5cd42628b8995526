//! The sandbox helper: `forgeloop __sandbox-exec`, its spec on an inherited descriptor. The
//! runner starts it instead of the test command (same pipe, same process group); it builds the
//! sandbox the spec describes, runs the command in it, and exits the way the command did (the
//! same exit code, or killed by the same signal). It runs before any thread exists, which is
//! what makes forking and entering namespaces here safe.

use std::io::Write;

use super::exec::{self, Ended, fail};
use super::spec::{Built, Spec, Tier};
use super::{cgroup, connects, landlock_tier, ns_tier, restrict};

/// Entry point, when the process was started as `forgeloop __sandbox-exec`.
pub fn main() -> i32 {
    exec::adopt_report_fd();
    let spec: Spec = match exec::take_spec() {
        Ok(spec) => spec,
        Err(message) => return fail(&message),
    };
    if spec.argv.is_empty() {
        return fail("empty argv");
    }
    if let Some(conflict) = spec.support_conflict() {
        return fail(&conflict);
    }
    // SAFETY: geteuid has no arguments and cannot fail.
    if spec.tier == Tier::Landlock && unsafe { libc::geteuid() } == 0 {
        return fail("the landlock tier never runs a test as root");
    }
    // If forgeloop dies (even by SIGKILL), the helper is told to stop, and takes the run down
    // with it instead of leaving it running without a timeout.
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
    }
    let limits = cgroup::Limits::enter(spec.max_processes, spec.memory_mb, spec.run_as.is_some());
    // The report says what the probe found; a run that cannot build the same does not run.
    if !spec.probe && spec.expect_process_limit.as_deref().is_some_and(|want| want != limits.process_limit()) {
        return fail(&format!("the process limit ({}) could not be set up for this command", limits.process_limit()));
    }
    if spec.probe {
        let built = Built {
            landlock_abi: restrict::landlock_abi(),
            process_limit: limits.process_limit().to_owned(),
            memory_limit: limits.memory_limit().to_owned(),
        };
        if spec.tier == Tier::Landlock && built.landlock_abi == 0 {
            return fail("the kernel has no Landlock (CONFIG_SECURITY_LANDLOCK, lsm=landlock)");
        }
        if spec.tier == Tier::Landlock && built.landlock_abi < 6 {
            return fail(&format!(
                "the kernel's Landlock ABI is {}; without ABI 6 (Linux 6.12) it cannot keep a test from signalling your processes",
                built.landlock_abi
            ));
        }
        println!("{}", serde_json::to_string(&built).unwrap_or_default());
        let _ = std::io::stdout().flush();
    }
    let channel = connects::channel(&spec);
    if let Some(channel) = &channel {
        exec::keep_connects_fd(channel.theirs());
    }
    let ended = match spec.tier {
        Tier::Namespaces => ns_tier::run(&spec, &limits, channel),
        Tier::Landlock => landlock_tier::run(&spec, &limits, channel),
    };
    limits.leave();
    // What the command tried to reach, for the runner (read whatever the exit code).
    if let Ok((_, tried)) = &ended
        && !tried.is_empty()
    {
        exec::report(&connects::report_lines(tried));
    }
    match ended.map(|(ended, _)| ended) {
        Ok(Ended::Exited(code)) => code,
        Ok(Ended::Signalled(signal)) => die_by(signal),
        Err(message) => fail(&message),
    }
}

/// Ends this process with `signal`, so the runner sees what the command saw.
fn die_by(signal: i32) -> i32 {
    // SAFETY: plain libc calls on integers; this process is single-threaded.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    128 + signal
}
