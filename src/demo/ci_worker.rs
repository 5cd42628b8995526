//! The GitHub emulator's **CI worker**: a stand-in for GitHub Actions in the demo and the
//! tests, so forgeloop's `github-checks` executor (design §5.7) has real check runs to wait
//! for. Like the emulator itself it is test and demo infrastructure, not GitHub.
//!
//! It watches the pull requests of the repositories it serves and, for every head SHA it has
//! not seen yet, does what a `pull_request` workflow would:
//!
//! 1. records an Actions run (workflow `CI`, event `pull_request`) with one job, `test`, whose
//!    steps are `Set up job`, `Run sh test.sh` and `Complete job`; the emulator publishes the
//!    job as a queued check run named `test` on that exact SHA (its id is the job's);
//! 2. after the scripted `queue_delay` (and once a runner slot is free) moves it to
//!    `in_progress`;
//! 3. checks out exactly that commit the way forgeloop does (`checkout::prepare`, fetching the
//!    PR's `refs/pull/N/head` from the emulator's bare repository on disk into the worker's own
//!    mirrors) and runs the argv there in forgeloop's sandbox (design §5.6) with the runner;
//! 4. waits out what is left of `run_delay`, writes the job log in GitHub Actions' format
//!    (`2026-01-02T03:04:05.1234567Z text` lines, `##[group]Run sh test.sh` … `##[endgroup]`,
//!    the command's output, and on failure `##[error]Process completed with exit code N.`), and
//!    completes the check run with `success` or `failure` (`cancelled` when it was stopped).
//!
//! Everything it hands the emulator (logs, errors) goes through the redactor first, and the
//! command's output was already redacted by the runner. A SHA is run once, ever: a second PR
//! or a re-poll never runs it again.
//!
//! ```no_run
//! # async fn f(emulator: std::sync::Arc<github_emulator::Emulator>, ctx: &forgeloop::cycle::Ctx)
//! # -> Result<(), forgeloop::demo::ci_worker::CiError> {
//! use forgeloop::demo::ci_worker::{CiConfig, CiWorker};
//! let repo = github_emulator::RepoName::new("forgeloop-demo", "calc").unwrap();
//! let config = CiConfig::from_ctx(ctx, vec![repo], ctx.home.root().join("ci-mirrors"));
//! let (_stop_tx, stop_rx) = tokio::sync::watch::channel(false);
//! let worker = CiWorker::start(emulator, config, stop_rx).await?;
//! // ... PRs are opened and pushed; check runs named `test` appear on their heads ...
//! let summary = worker.stop().await;
//! assert!(summary.errors.is_empty());
//! # Ok(()) }
//! ```
//!
//! Limitation: the emulator's Rust handle tells a PR's head ([`Emulator::pr_head`]) but not
//! whether the PR is still open, so a PR closed before the worker first saw it is run once.
//! The job's steps as they ended are published (`set_job_steps`), so the executor can name the
//! failing step; completing the check run moves the Actions job and its run with it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use github_emulator::{ActionsJob, ActionsRun, Emulator, EmulatorError, JobStep, RepoName};
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::checkout::{self, CheckoutError, CheckoutRequest};
use crate::cycle::Ctx;
use crate::domain::commands::{CommandsError, CommandsProfile, parse_commands};
use crate::domain::egress::NetworkMode;
use crate::domain::pr_ref;
use crate::domain::report::TestStatus;
use crate::redact::Redactor;
use crate::runner::{self, RunOutcome, RunRequest};
use crate::sandbox::{self, SandboxError};

use super::DemoError;

/// The workflow's name.
pub const WORKFLOW: &str = "CI";
/// The one job's name, and so its check run's.
pub const JOB: &str = "test";
/// What a job runs unless told otherwise.
pub const DEFAULT_ARGV: [&str; 2] = ["sh", "test.sh"];
/// How often the PRs' heads are looked at.
pub const DEFAULT_POLL: Duration = Duration::from_millis(50);
/// The per-run timeout unless told otherwise (the run then fails, as a step's timeout would).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Polls are never closer than this, whatever the configuration says (no busy loop).
const MIN_POLL: Duration = Duration::from_millis(10);
/// PR numbers looked past a missing one before a repository's scan ends.
const MAX_GAP: u64 = 5;
/// A job's log is capped at this much of the command's output (head and tail kept).
const LOG_CAP: u64 = 1024 * 1024;
/// SIGTERM to SIGKILL when a running job is stopped.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// Job ids are chosen here, shaped like GitHub's and far above the emulator's own counter
/// (which starts at 1), so the worker knows its job's check run id without asking.
const JOB_ID_BASE: u64 = 40_000_000_000;
static NEXT_JOB_ID: AtomicU64 = AtomicU64::new(JOB_ID_BASE);

/// What the worker serves and how it behaves; [`CiConfig::new`] or [`CiConfig::from_ctx`]
/// give the defaults.
#[derive(Clone)]
pub struct CiConfig {
    /// The repositories whose pull requests it builds.
    pub repos: Vec<RepoName>,
    /// The command each job runs in the checkout (default `sh test.sh`); never a shell string.
    pub argv: Vec<String>,
    /// How long a new run stays `queued` before it starts.
    pub queue_delay: Duration,
    /// The least time a run stays `in_progress` (the command's own time counts toward it).
    pub run_delay: Duration,
    /// How often the PRs' heads are looked at (at least 10 ms).
    pub poll_interval: Duration,
    /// The command's timeout.
    pub timeout: Duration,
    /// Jobs running at once (at least 1); the others wait `queued`.
    pub max_parallel: usize,
    /// The worker's own mirrors (keep them apart from forgeloop's, whose fetch statistics a
    /// demo or test may look at).
    pub mirrors_dir: PathBuf,
    /// What everything leaving the worker goes through.
    pub redactor: Redactor,
    /// The sandbox jobs run in, as forgeloop's own test runs do.
    pub sandbox: sandbox::Settings,
    /// forgeloop's own files, never visible to a job (see [`Ctx::protected_paths`]).
    pub protected: Vec<PathBuf>,
}

impl CiConfig {
    /// The defaults: `sh test.sh`, no scripted delays, a 50 ms poll, two jobs at once, the
    /// default sandbox (its helper is this very binary) and an empty redactor.
    pub fn new(repos: Vec<RepoName>, mirrors_dir: PathBuf) -> CiConfig {
        CiConfig {
            repos,
            argv: DEFAULT_ARGV.iter().map(|s| s.to_string()).collect(),
            queue_delay: Duration::ZERO,
            run_delay: Duration::ZERO,
            poll_interval: DEFAULT_POLL,
            timeout: DEFAULT_TIMEOUT,
            max_parallel: 2,
            mirrors_dir: mirrors_dir.clone(),
            redactor: Redactor::default(),
            sandbox: sandbox::Settings::new(mirrors_dir.with_file_name("ci-runs")),
            protected: Vec::new(),
        }
    }

    /// The defaults with `ctx`'s redactor, sandbox settings and protected paths.
    pub fn from_ctx(ctx: &Ctx, repos: Vec<RepoName>, mirrors_dir: PathBuf) -> CiConfig {
        CiConfig {
            redactor: ctx.redactor.clone(),
            sandbox: ctx.sandbox.clone(),
            protected: ctx.protected_paths(),
            ..CiConfig::new(repos, mirrors_dir)
        }
    }
}

/// Why the CI worker could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum CiError {
    /// The worker's command is not a valid commands profile.
    #[error("the CI worker's command is invalid: {0}")]
    Commands(#[from] CommandsError),
    /// No sandbox can be built for the jobs.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A request to the emulator failed.
    #[error("the CI worker could not talk to the GitHub emulator: {0}")]
    Emulator(#[from] EmulatorError),
    /// A worker task panicked or was cancelled.
    #[error("a CI worker task failed: {0}")]
    Task(String),
}

impl From<CiError> for DemoError {
    fn from(err: CiError) -> DemoError {
        use crate::error::Error;
        match err {
            CiError::Commands(e) => DemoError::Commands(e),
            CiError::Sandbox(e) => DemoError::Forgeloop(Error::Sandbox(e)),
            CiError::Emulator(e) => DemoError::Emulator(e),
            CiError::Task(message) => DemoError::Forgeloop(Error::Invalid(message)),
        }
    }
}

/// One run the worker started: on `repo`, for PR `pr` at `head_sha`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiRun {
    /// The repository the run is on.
    pub repo: RepoName,
    /// The PR it tests.
    pub pr: u64,
    /// The head commit it tests (40 hex digits).
    pub head_sha: String,
    /// The Actions run's id.
    pub run_id: u64,
    /// The job's id, which is also its check run's.
    pub job_id: u64,
    /// `success`, `failure` or `cancelled` once completed; `None` while queued or running.
    pub conclusion: Option<String>,
    /// The job's steps as they ended (empty until then).
    pub steps: Vec<JobStep>,
}

/// What a stopped worker did.
#[derive(Debug, Clone, Default)]
pub struct CiSummary {
    /// Every run the worker started, in order.
    pub runs: Vec<CiRun>,
    /// What went wrong along the way (redacted); a job that failed to start or finish.
    pub errors: Vec<String>,
}

#[derive(Default)]
struct Shared {
    runs: Mutex<Vec<CiRun>>,
    errors: Mutex<Vec<String>>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running worker. [`CiWorker::stop`] ends it and waits for it; dropping it only raises the
/// stop signal (its jobs then cancel themselves in the background).
pub struct CiWorker {
    stop: Arc<watch::Sender<bool>>,
    task: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl CiWorker {
    /// Checks the command and builds the sandbox (an error when no sandbox can be built here),
    /// then starts watching on the current tokio runtime. `stop` (for example the demo's
    /// stop signal) ends the worker when it turns `true`; a dropped sender does not.
    pub async fn start(
        emulator: Arc<Emulator>,
        config: CiConfig,
        stop: watch::Receiver<bool>,
    ) -> Result<CiWorker, CiError> {
        let profile = profile(&config.argv, config.timeout)?;
        let (settings, checked, protected) = (config.sandbox.clone(), profile.clone(), config.protected.clone());
        let plan = tokio::task::spawn_blocking(move || {
            sandbox::prepare(&settings, &checked, NetworkMode::Off, &runner::process_env(), &protected)
        })
        .await
        .map_err(|e| CiError::Task(format!("the sandbox check failed: {e}")))??;
        let (stop_tx, stop_rx) = watch::channel(false);
        let stop_tx = Arc::new(stop_tx);
        let shared = Arc::new(Shared::default());
        let worker =
            Worker { emulator, config, profile, plan, shared: shared.clone(), stop: stop_rx, stop_tx: stop_tx.clone() };
        let task = tokio::spawn(Arc::new(worker).serve(stop));
        Ok(CiWorker { stop: stop_tx, task: Some(task), shared })
    }

    /// The runs started so far, oldest first.
    pub fn runs(&self) -> Vec<CiRun> {
        locked(&self.shared.runs).clone()
    }

    /// What went wrong so far (redacted).
    pub fn errors(&self) -> Vec<String> {
        locked(&self.shared.errors).clone()
    }

    /// Stops watching, cancels the runs still queued or running (their check runs complete as
    /// `cancelled`), waits for that, and says what was done.
    pub async fn stop(mut self) -> CiSummary {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take()
            && let Err(err) = task.await
        {
            locked(&self.shared.errors).push(format!("the CI worker failed: {err}"));
        }
        CiSummary { runs: self.runs(), errors: self.errors() }
    }
}

impl Drop for CiWorker {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// The commands profile of a job: `argv`, with the timeout.
fn profile(argv: &[String], timeout: Duration) -> Result<CommandsProfile, CommandsError> {
    let timeout_s = timeout.as_secs().max(1);
    parse_commands(&serde_json::json!({"commands": [{"argv": argv, "timeout_s": timeout_s}]}).to_string())
}

struct Worker {
    emulator: Arc<Emulator>,
    config: CiConfig,
    profile: CommandsProfile,
    plan: sandbox::Plan,
    shared: Arc<Shared>,
    /// The worker's own stop signal, which every job listens to.
    stop: watch::Receiver<bool>,
    stop_tx: Arc<watch::Sender<bool>>,
}

/// How a job ended.
enum Verdict {
    /// The command ran (to its end, or until it was cancelled); `output` is its redacted
    /// output without the runner's header and footer lines.
    Ran { outcome: RunOutcome, output: String },
    /// Nothing ran: the checkout or the runner failed.
    SetupFailed(String),
    /// Stopped before the command started.
    Cancelled,
}

impl Verdict {
    fn conclusion(&self) -> &'static str {
        match self {
            Verdict::Ran { outcome, .. } if outcome.cancelled => "cancelled",
            Verdict::Ran { outcome, .. } if outcome.status == TestStatus::Passed => "success",
            Verdict::Ran { .. } | Verdict::SetupFailed(_) => "failure",
            Verdict::Cancelled => "cancelled",
        }
    }

    /// The conclusions of `Set up job`, the run step and `Complete job`.
    fn step_conclusions(&self) -> [&'static str; 3] {
        match (self, self.conclusion()) {
            (Verdict::Ran { .. }, "success") => ["success", "success", "success"],
            (Verdict::Ran { .. }, "cancelled") => ["success", "cancelled", "skipped"],
            (Verdict::Ran { .. }, _) => ["success", "failure", "skipped"],
            (Verdict::SetupFailed(_), _) => ["failure", "skipped", "skipped"],
            (Verdict::Cancelled, _) => ["cancelled", "skipped", "skipped"],
        }
    }
}

impl Worker {
    async fn serve(self: Arc<Self>, mut external: watch::Receiver<bool>) {
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut jobs = JoinSet::new();
        let slots = Arc::new(Semaphore::new(self.config.max_parallel.max(1)));
        let poll = self.config.poll_interval.max(MIN_POLL);
        let mut stop = self.stop.clone();
        let mut external_live = true;
        loop {
            if *stop.borrow() || (external_live && *external.borrow()) {
                break;
            }
            for (repo, number, sha) in self.heads() {
                if seen.insert((repo.key(), sha.clone())) {
                    jobs.spawn(self.clone().job(repo, number, sha, slots.clone()));
                }
            }
            while let Some(done) = jobs.try_join_next() {
                self.reap(done);
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = stop.changed() => {}
                changed = external.changed(), if external_live => {
                    // A dropped sender does not stop the worker.
                    external_live = changed.is_ok();
                }
            }
        }
        let _ = self.stop_tx.send(true);
        while let Some(done) = jobs.join_next().await {
            self.reap(done);
        }
    }

    fn reap(&self, done: Result<(), tokio::task::JoinError>) {
        if let Err(err) = done {
            self.error(format!("a CI job failed: {err}"));
        }
    }

    fn error(&self, message: String) {
        let message = self.config.redactor.redact(&message).into_owned();
        locked(&self.shared.errors).push(message);
    }

    /// Every PR of the served repositories with its current head (PR numbers count from 1 in
    /// each repository; the scan of one ends after a few missing numbers).
    fn heads(&self) -> Vec<(RepoName, u64, String)> {
        let mut out = Vec::new();
        for repo in &self.config.repos {
            let (mut number, mut missing) = (1u64, 0u64);
            while missing < MAX_GAP {
                match self.emulator.pr_head(repo, number) {
                    Some(sha) => {
                        missing = 0;
                        out.push((repo.clone(), number, sha));
                    }
                    None => missing += 1,
                }
                number += 1;
            }
        }
        out
    }

    async fn job(self: Arc<Self>, repo: RepoName, number: u64, sha: String, slots: Arc<Semaphore>) {
        if let Err(err) = self.run_job(&repo, number, &sha, &slots).await {
            self.error(format!("CI for {repo}#{number} at {sha}: {err}"));
        }
    }

    async fn run_job(&self, repo: &RepoName, number: u64, sha: &str, slots: &Arc<Semaphore>) -> Result<(), CiError> {
        let job_id = NEXT_JOB_ID.fetch_add(1, Ordering::Relaxed);
        let step = step_name(&self.config.argv);
        let queued: Vec<JobStep> = ["Set up job", step.as_str(), "Complete job"]
            .iter()
            .zip(1..)
            .map(|(name, number)| JobStep {
                name: name.to_string(),
                status: "queued".into(),
                number,
                ..JobStep::default()
            })
            .collect();
        let run_id = self.emulator.create_actions_run(
            repo,
            ActionsRun {
                name: WORKFLOW.into(),
                head_sha: sha.to_owned(),
                head_branch: String::new(),
                event: "pull_request".into(),
                status: "queued".into(),
                conclusion: None,
                jobs: vec![ActionsJob {
                    id: Some(job_id),
                    name: JOB.into(),
                    status: "queued".into(),
                    steps: queued,
                    ..ActionsJob::default()
                }],
            },
        )?;
        locked(&self.shared.runs).push(CiRun {
            repo: repo.clone(),
            pr: number,
            head_sha: sha.to_owned(),
            run_id,
            job_id,
            conclusion: None,
            steps: Vec::new(),
        });

        let mut stop = self.stop.clone();
        let permit = if pause(self.config.queue_delay, &mut stop).await {
            tokio::select! {
                permit = slots.clone().acquire_owned() => permit.ok(),
                _ = stopped(&mut stop) => None,
            }
        } else {
            None
        };
        let verdict = match permit {
            None => Verdict::Cancelled,
            Some(_permit) => {
                self.emulator.update_check_run(job_id, "in_progress", None)?;
                let started = Instant::now();
                let verdict = self.execute(repo, number, sha).await;
                // Stopping cuts the scripted delay short; the verdict stands.
                let _ = pause(self.config.run_delay.saturating_sub(started.elapsed()), &mut stop).await;
                verdict
            }
        };

        let lines = log_lines(&LogInput {
            head_sha: sha,
            pr: number,
            argv: &self.config.argv,
            sandbox: &self.plan.info().label(),
            verdict: &verdict,
        });
        let log = self.config.redactor.redact(&stamped(&lines, &log_time)).into_owned();
        self.emulator.set_job_log(job_id, &log);
        let steps = final_steps(&step, &verdict);
        self.emulator.set_job_steps(job_id, steps.clone())?;
        let conclusion = verdict.conclusion();
        self.emulator.update_check_run(job_id, "completed", Some(conclusion))?;
        if let Some(run) = locked(&self.shared.runs).iter_mut().find(|r| r.job_id == job_id) {
            run.conclusion = Some(conclusion.to_owned());
            run.steps = steps;
        }
        Ok(())
    }

    /// Checks out exactly `sha` of PR `number` and runs the argv there, in the sandbox.
    async fn execute(&self, repo: &RepoName, number: u64, sha: &str) -> Verdict {
        let bare = match self.emulator.repo_dir(repo) {
            Ok(dir) => dir,
            Err(err) => return Verdict::SetupFailed(format!("the repository is gone: {err}")),
        };
        let Some(clone_url) = bare.to_str().map(str::to_owned) else {
            return Verdict::SetupFailed(format!("the repository's path is not UTF-8: {}", bare.display()));
        };
        let forge_repo = match pr_ref::RepoName::new(repo.owner(), repo.name()) {
            Ok(name) => name,
            Err(err) => return Verdict::SetupFailed(format!("the repository name {repo} is refused: {err}")),
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let forwarder = {
            let (flag, mut stop) = (cancel.clone(), self.stop.clone());
            tokio::spawn(async move {
                stopped(&mut stop).await;
                flag.store(true, Ordering::SeqCst);
            })
        };
        let run_dir = match sandbox::RunDir::create(self.plan.run_root()) {
            Ok(dir) => dir,
            Err(err) => return Verdict::SetupFailed(format!("cannot create the job's run directory: {err}")),
        };
        let (mirrors, sha_owned, history) = (self.config.mirrors_dir.clone(), sha.to_owned(), self.profile.history);
        let (into, objects_for_others) = (run_dir.path().to_path_buf(), self.plan.run_as().is_some());
        let prepared = tokio::task::spawn_blocking(move || {
            checkout::prepare(&CheckoutRequest {
                mirrors_root: &mirrors,
                repo: &forge_repo,
                clone_url: &clone_url,
                pr_number: number,
                expected_sha: &sha_owned,
                token: None,
                allow_insecure_local: true,
                submodules: false,
                base_ref: None,
                submodule_token_owners: &[],
                // The PR may have moved on since: this run is for `sha` all the same.
                fetch_exact_sha: true,
                checkouts_root: Some(&into),
                exact_dir: None,
                history,
                cancel: Some(cancel),
                objects_for_others,
                tested: None,
            })
        })
        .await;
        forwarder.abort();
        let checkout = match prepared {
            Ok(Ok(checkout)) => checkout,
            Ok(Err(CheckoutError::Cancelled)) => return Verdict::Cancelled,
            Ok(Err(err)) => return Verdict::SetupFailed(format!("checking out {sha} failed: {err}")),
            Err(err) => return Verdict::SetupFailed(format!("the checkout task failed: {err}")),
        };
        let logs = match tempfile::Builder::new().prefix("forgeloop-ci-").tempdir() {
            Ok(dir) => dir,
            Err(err) => return Verdict::SetupFailed(format!("cannot create the job's log directory: {err}")),
        };
        let log_path = logs.path().join("job.log");
        let env = runner::process_env();
        let paths = run_dir.paths(checkout.path(), Some(checkout.gitdir()));
        if let Some(account) = self.plan.run_as()
            && let Err(left) = run_dir.hand_over(&paths, account)
        {
            return Verdict::SetupFailed(format!("cannot give the job's directories to its account: {left}"));
        }
        let plan = self.plan.for_checkout(checkout.gitdir());
        let mut request = RunRequest::new(checkout.path(), &self.profile, &log_path, &self.config.redactor, &env);
        request.cancel = Some(self.stop.clone());
        request.log_cap_bytes = LOG_CAP;
        request.kill_grace = KILL_GRACE;
        request.sandbox = Some((&plan, &paths));
        match runner::run(request).await {
            Ok(outcome) => {
                let output = read_output(&log_path).await;
                Verdict::Ran { outcome, output }
            }
            Err(err) => Verdict::SetupFailed(err.to_string()),
        }
    }
}

/// Waits `delay` unless stopped first; false when stopped.
async fn pause(delay: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    if *stop.borrow() {
        return false;
    }
    if delay.is_zero() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(delay) => !*stop.borrow(),
        _ = stopped(stop) => false,
    }
}

/// Resolves once `stop` is `true`; never when its sender is gone.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        if stop.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// `Run sh test.sh`, on one line.
fn step_name(argv: &[String]) -> String {
    let line: String = argv.join(" ").chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    format!("Run {line}")
}

/// The command's output from the runner's log: without its `$ argv` header and its
/// `[exit …]`-style footer (cosmetic only: the verdict never comes from the log).
async fn read_output(log_path: &Path) -> String {
    let path = log_path.to_path_buf();
    let Ok(Ok(bytes)) = tokio::task::spawn_blocking(move || std::fs::read(path)).await else { return String::new() };
    command_output(&String::from_utf8_lossy(&bytes))
}

fn command_output(log: &str) -> String {
    let mut lines: Vec<&str> = log.lines().collect();
    if lines.first().is_some_and(|l| l.starts_with("$ ")) {
        lines.remove(0);
    }
    const FOOTERS: [&str; 6] = [
        "[exit ",
        "[killed by signal ",
        "[timed out after ",
        "[cancelled after ",
        "[exit status unknown",
        "[not started:",
    ];
    if lines.last().is_some_and(|l| FOOTERS.iter().any(|f| l.starts_with(f))) {
        lines.pop();
    }
    lines.join("\n")
}

struct LogInput<'a> {
    head_sha: &'a str,
    pr: u64,
    argv: &'a [String],
    sandbox: &'a str,
    verdict: &'a Verdict,
}

/// The job log's lines, before their timestamps.
fn log_lines(input: &LogInput<'_>) -> Vec<String> {
    let mut lines = vec![
        format!("Current runner version: 'forgeloop-ci-worker {}'", env!("CARGO_PKG_VERSION")),
        "Runner: the GitHub emulator's CI worker (forgeloop demo and tests; not GitHub Actions)".to_owned(),
        format!("Sandbox: {}", input.sandbox),
        format!("Complete job name: {JOB}"),
    ];
    let canceled = "##[error]The operation was canceled.".to_owned();
    match input.verdict {
        Verdict::Cancelled => lines.push(canceled),
        Verdict::SetupFailed(message) => {
            let one_line: String = message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            lines.push(format!("##[error]{one_line}"));
        }
        Verdict::Ran { outcome, output } => {
            lines.push(format!("Checked out {} (pull request #{})", input.head_sha, input.pr));
            lines.push(format!("##[group]{}", step_name(input.argv)));
            lines.push(step_name(input.argv)["Run ".len()..].to_owned());
            lines.push("##[endgroup]".to_owned());
            lines.extend(output.lines().map(str::to_owned));
            if outcome.cancelled {
                lines.push(canceled);
            } else if outcome.timed_out {
                lines.push("##[error]The action has timed out.".to_owned());
            } else if outcome.status != TestStatus::Passed {
                let code = outcome
                    .commands
                    .iter()
                    .find(|c| !c.passed())
                    .and_then(|c| c.exit_code.or(c.signal.map(|s| 128 + s)))
                    .unwrap_or(1);
                lines.push(format!("##[error]Process completed with exit code {code}."));
            }
            lines.push("Cleaning up orphan processes".to_owned());
        }
    }
    lines
}

/// Each line prefixed with a timestamp, as GitHub Actions' logs are.
fn stamped(lines: &[String], now: &dyn Fn() -> String) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(&now());
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `2026-01-02T03:04:05.1234567Z`: GitHub Actions' log time (seven fractional digits).
fn log_time() -> String {
    let now = chrono::Utc::now();
    let tenths_of_micros = now.timestamp_subsec_nanos().min(999_999_999) / 100;
    format!("{}.{tenths_of_micros:07}Z", now.format("%Y-%m-%dT%H:%M:%S"))
}

/// The job's steps as they ended.
fn final_steps(run_step: &str, verdict: &Verdict) -> Vec<JobStep> {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    ["Set up job", run_step, "Complete job"]
        .iter()
        .zip(verdict.step_conclusions())
        .zip(1..)
        .map(|((name, conclusion), number)| {
            let ran = conclusion != "skipped";
            JobStep {
                name: name.to_string(),
                status: "completed".into(),
                conclusion: Some(conclusion.into()),
                number,
                started_at: ran.then(|| now.clone()),
                completed_at: ran.then(|| now.clone()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::report::CommandResult;

    fn argv() -> Vec<String> {
        DEFAULT_ARGV.iter().map(|s| s.to_string()).collect()
    }

    fn ran(exit_code: i32, output: &str) -> Verdict {
        let passed = exit_code == 0;
        let command = CommandResult {
            argv: argv(),
            exit_code: Some(exit_code),
            duration_seconds: 0.1,
            timed_out: false,
            signal: None,
            not_run: false,
        };
        Verdict::Ran {
            outcome: RunOutcome {
                setup: Vec::new(),
                status: if passed { TestStatus::Passed } else { TestStatus::Failed },
                commands: vec![command],
                failure_output: None,
                timed_out: false,
                cancelled: false,
                log_bytes_written: 0,
                log_truncated: false,
                tried: Vec::new(),
            },
            output: output.to_owned(),
        }
    }

    fn log(verdict: &Verdict) -> String {
        let lines =
            log_lines(&LogInput { head_sha: &"a".repeat(40), pr: 3, argv: &argv(), sandbox: "isolated", verdict });
        stamped(&lines, &log_time)
    }

    #[test]
    fn a_failing_job_log_is_in_github_actions_format() {
        let text = log(&ran(1, "ok   calc add 2 3 = 5\nFAIL calc sub 5 3: expected 2, got 8"));
        let stamp = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ").unwrap();
        assert!(text.lines().all(|l| stamp.is_match(l)), "{text}");
        let bodies: Vec<&str> = text.lines().map(|l| &l[29..]).collect();
        let group = bodies.iter().position(|l| *l == "##[group]Run sh test.sh").unwrap();
        assert_eq!(bodies[group + 1..group + 3], ["sh test.sh", "##[endgroup]"]);
        assert_eq!(bodies[group + 4], "FAIL calc sub 5 3: expected 2, got 8");
        assert_eq!(bodies[group + 5], "##[error]Process completed with exit code 1.");
    }

    #[test]
    fn a_passing_job_log_has_no_error_and_steps_follow_the_verdict() {
        let verdict = ran(0, "all tests passed");
        assert!(!log(&verdict).contains("##[error]"));
        assert_eq!(verdict.conclusion(), "success");
        let failed = ran(2, "");
        assert_eq!(failed.conclusion(), "failure");
        let steps = final_steps("Run sh test.sh", &failed);
        let conclusions: Vec<_> = steps.iter().map(|s| s.conclusion.as_deref().unwrap()).collect();
        assert_eq!(conclusions, ["success", "failure", "skipped"]);
        assert_eq!(steps.iter().map(|s| s.number).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(steps[2].started_at.is_none() && steps[1].completed_at.is_some());
        assert!(log(&failed).contains("##[error]Process completed with exit code 2."));
        let setup = Verdict::SetupFailed("no\nsuch commit".into());
        assert_eq!(setup.conclusion(), "failure");
        assert!(log(&setup).contains("##[error]no such commit\n"));
        assert_eq!(Verdict::Cancelled.conclusion(), "cancelled");
        assert!(log(&Verdict::Cancelled).contains("##[error]The operation was canceled."));
    }

    #[test]
    fn the_runner_header_and_footer_are_not_command_output() {
        assert_eq!(command_output("$ sh test.sh\na\nb\n[exit 1 after 0.01s]\n"), "a\nb");
        assert_eq!(command_output("$ sh test.sh\n[not started: exit 127]\n"), "");
        assert_eq!(command_output(""), "");
        assert_eq!(step_name(&["sh".into(), "a\nb".into()]), "Run sh a b");
    }

    #[test]
    fn log_times_have_seven_fractional_digits() {
        let t = log_time();
        assert_eq!(t.len(), "2026-01-02T03:04:05.1234567Z".len(), "{t}");
        assert!(t.ends_with('Z'));
    }

    #[test]
    fn a_bad_argv_is_refused() {
        assert!(profile(&[], DEFAULT_TIMEOUT).is_err());
        assert!(profile(&["".into()], DEFAULT_TIMEOUT).is_err());
        assert!(profile(&argv(), Duration::ZERO).is_ok());
    }
}
