//! The runner adapter (design §5.2.3–6): runs a PR's test commands in its checkout, one after
//! another, each isolated in its own process group with a cleaned environment, a timeout and
//! a capped, redacted, live log. It fixes the reference tool's weaknesses 1 (inherited
//! credentials) and 17 (unbounded output, non-UTF-8 output failing the run), design §12.11.
//!
//! Log format (one section per command; output is stdout and stderr merged in the order they
//! were written, redacted, invalid UTF-8 replaced by U+FFFD):
//!
//! ```text
//! $ sh -c 'echo a; exit 1'
//! a
//! [exit 1 after 0.01s]
//!
//! [not run] $ cargo test
//! ```
//!
//! Footers: `[exit N after Ts]`, `[killed by signal N after Ts]`, `[timed out after Ns: process
//! group killed]`, `[cancelled after Ts: process group killed]`, `[not started: exit 127]`.
//! The file is capped (see `log.rs`); memory stays constant whatever a command prints: about
//! 64 KiB for reading, 64 KiB of log buffer, 64 KiB while compacting the log, 4 bytes per
//! failure-tail character, plus what the streaming redactor holds for one line, and for a test
//! command its results' line (16 KiB) and tests (at most 250,000 ids).
//!
//! Each test command's runners also report their per-test results ([`run_with_results`],
//! `collect.rs`, issue 57): through forgeloop's recorders in the run's support directory, and
//! from the output as it streams, before redaction.

mod collect;
mod env;
mod log;
mod output;
mod process;
mod section;

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

pub use collect::SUPPORT_DIR;
pub use env::{build_env, process_env};

use crate::domain::commands::{CommandSpec, CommandsProfile};
use crate::domain::report::{CommandResult, TestStatus};
use crate::domain::test_results::RunResults;
use crate::domain::test_results::ids::Renames;
use crate::domain::text::FAILURE_TAIL_CHARS;
use crate::egress::EgressProxy;
use crate::redact::Redactor;
use crate::sandbox::{Phase, Plan, RunPaths, Started};
use crate::store::private;
use log::CappedLog;
use output::{OutputSink, TailRing};
use process::{Cancel, ExecError, Outcome, Spawn};

/// Default cap of one run's log file (design §5.2.5).
pub const DEFAULT_LOG_CAP: u64 = 64 * 1024 * 1024;
/// Default time between SIGTERM and SIGKILL for a timed-out or cancelled process group.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);
/// Exit code recorded for a program that does not exist (as a POSIX shell reports it).
pub const EXIT_NOT_FOUND: i32 = 127;
/// Exit code recorded for a program that exists but cannot be started (permission, format).
pub const EXIT_CANNOT_EXECUTE: i32 = 126;

/// Everything one test run needs. Build it with [`RunRequest::new`] and adjust the fields.
pub struct RunRequest<'a> {
    /// The checkout to run in (cwd of every command); its path is shown as `<checkout>`.
    pub checkout: &'a Path,
    /// The commands to run, with their timeouts and environment.
    pub profile: &'a CommandsProfile,
    /// Created (with its directory) or truncated; readable by its owner only.
    pub log_path: &'a Path,
    /// The most the log may hold; beyond it, output is cut from the middle ([`DEFAULT_LOG_CAP`]).
    pub log_cap_bytes: u64,
    /// Masks secrets and local paths in the log and the failure tail.
    pub redactor: &'a Redactor,
    /// The environment to take allowlisted variables from, usually [`process_env`]; a
    /// parameter so tests need not touch the process environment.
    pub parent_env: &'a BTreeMap<String, String>,
    /// How much of the failing command's output the outcome keeps (characters, from the end).
    pub failure_tail_chars: usize,
    /// Time between SIGTERM and SIGKILL when a group is stopped.
    pub kill_grace: Duration,
    /// Cancellation: send `true` to stop the run; the current command's group is terminated
    /// (SIGTERM, then SIGKILL after `kill_grace`), later commands are not run, and the outcome
    /// says `cancelled`. A dropped sender does not cancel. `None`: not cancellable.
    pub cancel: Option<watch::Receiver<bool>>,
    /// Told when each command starts (for progress reports); a closed receiver is ignored.
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<CommandStarted>>,
    /// The sandbox every command runs in (design §5.6), with the run's directories (the
    /// checkout, private `/tmp` and `HOME`). `None` runs the commands directly: only the
    /// runner's own tests do that; the use cases always pass a plan (which may itself say "off"
    /// when the person configured it).
    pub sandbox: Option<(&'a Plan, &'a RunPaths)>,
    /// The run's egress proxy (design §5.6): a first-tier `allowlist` command hands it the
    /// socket it made inside its network namespace.
    pub egress: Option<&'a EgressProxy>,
    /// Without a sandbox: the run's directories for the test results channel (its support
    /// directory, and `tmp` for each test command's results). Sandboxed, the sandbox's
    /// `RunPaths` serve; with neither, only the output is read for results.
    pub results_paths: Option<&'a RunPaths>,
    /// The test files the change under test moved: their tests ran at the base under the old
    /// names (issue 57's judgement tells a moved test from one that stopped running).
    pub moved: Renames,
}

/// A command of the run is about to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandStarted {
    /// 0-based position in the profile.
    pub index: usize,
    /// How many commands the run has, setup commands included.
    pub total: usize,
    /// The command about to start.
    pub argv: Vec<String>,
    /// Instead of a command: a progress line of a wait for CI (`check test: in_progress 3m12s`).
    pub status_line: Option<String>,
}

impl<'a> RunRequest<'a> {
    /// A request with the default log cap, failure tail and kill grace, no cancel, no sandbox.
    pub fn new(
        checkout: &'a Path,
        profile: &'a CommandsProfile,
        log_path: &'a Path,
        redactor: &'a Redactor,
        parent_env: &'a BTreeMap<String, String>,
    ) -> RunRequest<'a> {
        RunRequest {
            checkout,
            profile,
            log_path,
            log_cap_bytes: DEFAULT_LOG_CAP,
            redactor,
            parent_env,
            failure_tail_chars: FAILURE_TAIL_CHARS,
            kill_grace: DEFAULT_KILL_GRACE,
            cancel: None,
            progress: None,
            sandbox: None,
            egress: None,
            results_paths: None,
            moved: Renames::default(),
        }
    }
}

/// How a run ended: its verdict, each command's result, and what the log holds.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Passed only when every command ran and exited 0 and the run was not cancelled;
    /// `SetupFailed` when a setup command failed (the tests then did not run).
    pub status: TestStatus,
    /// One per setup command of the profile, in order.
    pub setup: Vec<CommandResult>,
    /// One per command of the profile, in order; those after the first failure are `not_run`.
    pub commands: Vec<CommandResult>,
    /// The redacted tail of the failing (or cancelled) command's output; `None` when the run
    /// passed or that command printed nothing.
    pub failure_output: Option<String>,
    /// A command hit its timeout.
    pub timed_out: bool,
    /// The run was cancelled: its status is not a verdict on the PR and should not be
    /// published as one.
    pub cancelled: bool,
    /// Final size of the log file.
    pub log_bytes_written: u64,
    /// Output was cut from the middle of the log to respect the cap.
    pub log_truncated: bool,
    /// The destinations outside the sandbox the commands tried to reach, as the sandbox
    /// recorded them (design §5.6), in order, each once per phase.
    pub tried: Vec<Tried>,
}

/// A connection a sandboxed command tried to a destination outside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tried {
    /// The phase of the command that tried.
    pub phase: Phase,
    /// Where to.
    pub addr: std::net::SocketAddr,
}

/// Why the runner itself could not run the commands (a failing command is not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The checkout directory is not there.
    #[error("checkout {0} is not a directory; the checkout step must create it before tests run")]
    Checkout(PathBuf),
    /// The run log could not be created.
    #[error("cannot create the run log {path}: {source}; check that its directory is writable")]
    LogCreate {
        /// The run log's path.
        path: PathBuf,
        /// The underlying I/O error.
        source: io::Error,
    },
    /// The run log could not be written.
    #[error("cannot write the run log {path}: {source}; check free disk space and permissions")]
    LogWrite {
        /// The run log's path.
        path: PathBuf,
        /// The underlying I/O error.
        source: io::Error,
    },
    /// No pipe could be made for a command's output.
    #[error("cannot create the output pipe for a test command: {0}; the process may be out of file descriptors")]
    Pipe(io::Error),
    /// The sandbox helper could not build the sandbox for a command.
    #[error("the sandbox could not be built around a test command, so it did not run: {0}; run `forgeloop doctor`")]
    Sandbox(String),
    /// The test results channel could not be set up (issue 57).
    #[error("{0}")]
    Results(String),
}

/// Runs the profile's commands in order and reports how they ended. Must be called within a
/// tokio runtime with IO and time enabled. A command that fails, times out, is killed or
/// cannot be started makes a failed run, not an error; errors are only for the runner itself
/// (checkout missing, log not writable).
pub async fn run(req: RunRequest<'_>) -> Result<RunOutcome, RunnerError> {
    run_with_results(req).await.map(|(outcome, _)| outcome)
}

/// [`run`], with what each test command's runners reported about each test (issue 57): one
/// [`crate::domain::test_results::CommandResults`] per test command of the profile, in order
/// (`not_run` for those after the first failure).
pub async fn run_with_results(req: RunRequest<'_>) -> Result<(RunOutcome, RunResults), RunnerError> {
    if !req.checkout.is_dir() {
        return Err(RunnerError::Checkout(req.checkout.to_path_buf()));
    }
    let given = env::given_values(req.parent_env, req.profile);
    let mut redactor = req.redactor.with_checkout(req.checkout);
    // The path the sandbox shows the checkout at, when it is not the host's.
    if let Some((_, paths)) = req.sandbox
        && paths.checkout != req.checkout
    {
        redactor = redactor.with_checkout(&paths.checkout);
    }
    let redactor = if given.is_empty() { redactor } else { redactor.with_known_values(&given) };
    let log_error = |source| RunnerError::LogWrite { path: req.log_path.to_path_buf(), source };
    let mut log = CappedLog::new(open_log(req.log_path)?, req.log_cap_bytes);
    let mut cancel = Cancel::new(req.cancel.clone());
    let collecting = collect::Collecting::start(req.sandbox, req.results_paths)?;
    let sandbox = req.sandbox.map(|(plan, paths)| (plan, collecting.as_ref().and_then(|c| c.paths()).unwrap_or(paths)));
    let mut results = Vec::with_capacity(req.profile.commands.len());

    let mut setup = Vec::with_capacity(req.profile.setup.len());
    let mut commands = Vec::with_capacity(req.profile.commands.len());
    let mut failure_output = None;
    let mut failed: Option<Phase> = req.profile.commands.is_empty().then_some(Phase::Test);
    let mut timed_out = false;
    let mut cancelled = false;
    let mut tried: Vec<Tried> = Vec::new();
    let steps: Vec<(Phase, &CommandSpec)> = (req.profile.setup.iter().map(|c| (Phase::Setup, c)))
        .chain(req.profile.commands.iter().map(|c| (Phase::Test, c)))
        .collect();
    let total = steps.len();

    for (index, (phase, spec)) in steps.into_iter().enumerate() {
        let test_index = index.saturating_sub(req.profile.setup.len());
        let outcomes = match phase {
            Phase::Setup => &mut setup,
            Phase::Test => &mut commands,
        };
        if failed.is_none() && !cancelled && cancel.is_cancelled() {
            cancelled = true;
        }
        if failed.is_some() || cancelled {
            write_section_line(&mut log, &redactor.redact(&section::not_run(&spec.argv))).map_err(log_error)?;
            outcomes.push(CommandResult::not_run(spec.argv.clone()));
            if phase == Phase::Test {
                results.push(collect::not_run(test_index, spec.argv.clone()));
            }
            continue;
        }
        if !log.is_empty() {
            log.write_all(b"\n").map_err(log_error)?;
        }
        if phase == Phase::Setup && outcomes.is_empty() {
            write_section_line(&mut log, section::SETUP).map_err(log_error)?;
        } else if phase == Phase::Test && outcomes.is_empty() && !req.profile.setup.is_empty() {
            write_section_line(&mut log, section::TESTS).map_err(log_error)?;
        }
        write_section_line(&mut log, &redactor.redact(&section::header(&spec.argv))).map_err(log_error)?;
        if let Some(progress) = &req.progress {
            let started = CommandStarted { index, total, argv: spec.argv.clone(), status_line: None };
            let _ = progress.send(started);
        }

        let mut env = build_env(req.parent_env, req.profile, spec);
        let mut collect = match phase {
            Phase::Test => {
                Some(collect::CommandCollect::new(collecting.as_ref(), test_index, &spec.argv, req.checkout, &mut env)?)
            }
            Phase::Setup => None,
        };
        let started = match sandbox {
            Some((plan, run)) => plan.wrap(&spec.argv, run, env, phase),
            None => Started::direct(&spec.argv, req.checkout, env),
        };
        let timeout_s = req.profile.timeout_of(spec);
        let mut tail = TailRing::new(req.failure_tail_chars);
        let mut sink = OutputSink::new(&redactor, &mut log, &mut tail, collect.as_mut().map(|c| &mut c.parser));
        let spawn = Spawn {
            program: &started.program,
            args: &started.args,
            env: &started.env,
            cwd: &started.cwd,
            timeout: Duration::from_secs(timeout_s),
            grace: req.kill_grace,
            reports: started.reports,
            spec: started.spec.as_deref(),
            proxy: started.proxy_channel.then_some(req.egress).flatten().map(|proxy| (proxy, phase.as_str())),
        };
        let (result, footer) = match process::execute(spawn, &mut cancel, &mut sink).await {
            Err(ExecError::Log(source)) => return Err(log_error(source)),
            Err(ExecError::Pipe(source)) => return Err(RunnerError::Pipe(source)),
            Ok(Outcome::NotStarted(error)) => {
                let code = if error.kind() == io::ErrorKind::NotFound { EXIT_NOT_FOUND } else { EXIT_CANNOT_EXECUTE };
                let program = spec.argv.first().map_or("", String::as_str);
                sink.push_line(&format!("forgeloop: could not start {program:?}: {error}")).map_err(log_error)?;
                (command_result(spec.argv.clone(), Some(code), None, Duration::ZERO, false), section::not_started(code))
            }
            Ok(Outcome::Finished { sandbox_failure: Some(message), .. }) => {
                return Err(RunnerError::Sandbox(message));
            }
            Ok(Outcome::Finished {
                status,
                timed_out: hit_timeout,
                cancelled: was_cancelled,
                elapsed,
                tried: addrs,
                ..
            }) => {
                for addr in addrs {
                    let attempt = Tried { phase, addr };
                    if !tried.contains(&attempt) {
                        tried.push(attempt);
                    }
                }
                let signal = status.and_then(|s| s.signal());
                let code = status.and_then(|s| s.code().or(s.signal().map(|n| -n)));
                timed_out |= hit_timeout;
                cancelled |= was_cancelled;
                let footer = match (hit_timeout, was_cancelled, status) {
                    (true, _, _) => section::timed_out(timeout_s),
                    (_, true, _) => section::cancelled(elapsed),
                    (_, _, None) => section::status_unknown(elapsed),
                    (_, _, Some(s)) => match s.code() {
                        Some(code) => section::exited(code, elapsed),
                        None => section::signalled(signal.unwrap_or(0), elapsed),
                    },
                };
                let exit_code = if hit_timeout { None } else { code };
                (command_result(spec.argv.clone(), exit_code, signal, elapsed, hit_timeout), footer)
            }
        };
        sink.finish().map_err(log_error)?;
        if !log.at_line_start() {
            log.write_all(b"\n").map_err(log_error)?;
        }
        write_section_line(&mut log, &footer).map_err(log_error)?;

        if !result.passed() || cancelled {
            failed = Some(phase);
            failure_output = tail.text();
        }
        if let Some(collect) = collect {
            results.push(collect.finish(spec.argv.clone(), &req.moved));
        }
        let outcomes = match phase {
            Phase::Setup => &mut setup,
            Phase::Test => &mut commands,
        };
        outcomes.push(result);
    }

    let summary = log.finish().map_err(log_error)?;
    let status = match (failed, cancelled) {
        (Some(Phase::Setup), false) => TestStatus::SetupFailed,
        (Some(_), _) | (None, true) => TestStatus::Failed,
        (None, false) => TestStatus::Passed,
    };
    let outcome = RunOutcome {
        status,
        setup,
        commands,
        failure_output,
        timed_out,
        cancelled,
        log_bytes_written: summary.bytes,
        log_truncated: summary.cut > 0,
        tried,
    };
    Ok((outcome, RunResults::new(results)))
}

fn command_result(
    argv: Vec<String>,
    exit_code: Option<i32>,
    signal: Option<i32>,
    elapsed: Duration,
    timed_out: bool,
) -> CommandResult {
    // Milliseconds, as in the reference report.
    let duration_seconds = (elapsed.as_secs_f64() * 1000.0).round() / 1000.0;
    CommandResult { argv, exit_code, duration_seconds, timed_out, signal, not_run: false }
}

fn write_section_line(log: &mut CappedLog, line: &str) -> io::Result<()> {
    log.write_all(line.as_bytes())?;
    log.flush()
}

fn open_log(path: &Path) -> Result<File, RunnerError> {
    let create_error = |source| RunnerError::LogCreate { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        private::create_dir_all(dir).map_err(create_error)?;
    }
    // O_NOFOLLOW: a symlink planted at the log's path is refused, never written through.
    private::open(OpenOptions::new().write(true).read(true).create(true).truncate(true), path).map_err(create_error)
}
