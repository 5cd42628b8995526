//! What both tiers share inside the sandbox: how a command ended, how a failure to build the
//! sandbox is reported, and the last step in the command's own process (restrict, then exec).

use std::io::Write;
use std::os::unix::process::CommandExt;

use super::spec::Spec;
use super::{EXIT_SANDBOX_FAILED, restrict};

/// How the sandboxed command ended.
pub enum Ended {
    Exited(i32),
    Signalled(i32),
}

/// Says why the sandbox could not be built (the run's log shows it) and gives the exit code.
pub fn fail(message: &str) -> i32 {
    eprintln!("forgeloop: the sandbox could not be built: {message}");
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
