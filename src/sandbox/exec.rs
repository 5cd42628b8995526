//! What both tiers share inside the sandbox: how a command ended, how a failure to build the
//! sandbox is reported, and the last step in the command's own process (restrict, then exec).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicI32, Ordering};

use super::spec::Spec;
use super::{EXIT_SANDBOX_FAILED, REPORT_FD_ENV, restrict};

/// How the sandboxed command ended.
pub enum Ended {
    Exited(i32),
    Signalled(i32),
}

/// The runner's report pipe (design §5.6): -1 until [`adopt_report_fd`] finds one.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);

/// Takes over the report pipe the runner passed (its number in [`REPORT_FD_ENV`]): marked
/// close-on-exec, so the command never holds it, and what [`fail`] writes there is known to
/// come from the helper, not from a test that exits 125 and prints the same words.
pub fn adopt_report_fd() {
    let Some(fd) = std::env::var(REPORT_FD_ENV).ok().and_then(|v| v.parse::<i32>().ok()).filter(|fd| *fd > 2) else {
        return;
    };
    // SAFETY: fcntl on an integer; a number that is not an open descriptor fails with EBADF.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == 0 {
        REPORT_FD.store(fd, Ordering::Relaxed);
    }
}

/// The report pipe, when the runner passed one.
pub fn report_fd() -> Option<i32> {
    Some(REPORT_FD.load(Ordering::Relaxed)).filter(|fd| *fd > 2)
}

/// Says why the sandbox could not be built (the run's log shows it, the report pipe tells the
/// runner) and gives the exit code.
pub fn fail(message: &str) -> i32 {
    eprintln!("forgeloop: the sandbox could not be built: {message}");
    if let Some(fd) = report_fd() {
        let line = format!("{message}\n");
        let mut rest = line.as_bytes();
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
    EXIT_SANDBOX_FAILED
}

/// The last step of both tiers, in the command's own process: the restrictions, then `exec`
/// with the command's environment in its checkout. Returns only on failure, with the exit code
/// to use (125 when the sandbox could not be built; 127/126, as a shell says, when the program
/// was not found or could not be executed).
pub fn exec_restricted(spec: &Spec, memory_by_cgroup: bool) -> i32 {
    if let Err(message) = restrict::apply(spec, memory_by_cgroup) {
        return fail(&message);
    }
    let error = std::process::Command::new(&spec.argv[0])
        .args(&spec.argv[1..])
        .env_clear()
        .envs(&spec.env)
        .current_dir(&spec.checkout)
        .exec();
    let _ = writeln!(std::io::stderr(), "forgeloop: could not start {:?}: {error}", spec.argv[0]);
    if error.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 }
}
