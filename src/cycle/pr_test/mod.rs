//! Testing a PR for real (design §5.2): resolve its head SHA, fetch exactly that commit, run the
//! commands in isolation, record the report and the redacted log, publish the comment. Shared
//! by `forge --pr`, `test`, the control room's rerun, the MCP server and the demo.
//!
//! This file holds the gate and the entry points (`forge_pr`, `rerun`, `retry_comment`,
//! `test_once`) and reads as their steps; each concern lives in a file of its own:
//! - `local_run`: the `local` executor — network policy and sandbox, the cache layer, the
//!   checkout (or its merge conflict), the commands in the sandbox, needs-network detection,
//!   keeping the checkout;
//! - `github_checks`: the `github-checks` executor — the required CI checks, waited on, and
//!   the change judged in the mirror;
//! - `checkout_job`: what the blocking checkout task of either executor needs;
//! - `report`: the report built, saved and recorded in the cycle, the comment published;
//! - `ended_early`: the ends short of a verdict — blocked, already tested, cancelled, needs
//!   network, infra failure;
//! - `types`: what those files share (a leaf: the children never import this file).

mod checkout_job;
mod ended_early;
mod github_checks;
mod local_run;
mod report;
mod types;

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use serde_json::json;
use tokio::sync::watch;

use crate::domain::commands::{CommandsProfile, Executor};
use crate::domain::event_data::EventData;
use crate::domain::machine;
pub use crate::domain::machine::TestGate;
use crate::domain::pr_ref::parse_pr_ref;
use crate::domain::report::Report;
use crate::domain::state::{Actor, CycleState, RunSummary, RunningInfo};
use crate::domain::text::Marker;
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::runner;
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::ci_wait::{self, ChecksError};
use super::context::Ctx;
use super::integrity;
use super::session::{self, Saved};
use super::stop;
use github_checks::{checks_error, execute_checks, wanted_checks};
use local_run::{execute, local_sandbox};
use types::{Executed, LiveRun, Pass, RunSettings};

/// Kept here too: `Engine` was born in this file and callers outside the crate name it so.
pub use super::context::Engine;
/// What a run tells a watcher as each command starts (MCP progress).
pub use crate::runner::CommandStarted;

/// How a run was asked for.
pub struct RunOptions {
    /// The PR reference as given (`OWNER/REPO#N` or a URL).
    pub pr: String,
    /// Commands from `--commands-json`; `None` reuses the cycle's stored commands.
    pub commands: Option<CommandsProfile>,
    /// Publish the result as a PR comment (`--post-comment`).
    pub post_comment: bool,
    /// Also check out the PR's submodules (`--submodules`).
    pub submodules: bool,
    /// Keep the checkout under `<home>/kept/` for debugging (`--keep-checkout`).
    pub keep_checkout: bool,
    /// Run without the repository's warm cache (`--fresh`).
    pub fresh: bool,
    /// A one-shot `forgeloop test`: its cache layer is thrown away after it (a cycle's is
    /// kept for the PR's next run).
    pub one_shot: bool,
    /// Who asked for the run (journaled with it).
    pub actor: Actor,
    /// The control room's rerun may re-test a `READY_TO_MERGE` cycle.
    pub human_override: bool,
    /// A person's rerun (the control room's, `forge --pr --rerun` on a terminal): a head
    /// already tested with the same commands runs again (flaky tests are a person's call).
    pub rerun: bool,
    /// Turns `true` to cancel the run (a stop request, Ctrl-C): journaled, not counted.
    pub cancel: Option<watch::Receiver<bool>>,
    /// Told when each command starts (MCP progress notifications).
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<runner::CommandStarted>>,
}

impl RunOptions {
    /// Options for testing `pr` as `actor`, everything else off.
    pub fn new(pr: impl Into<String>, actor: Actor) -> RunOptions {
        RunOptions {
            pr: pr.into(),
            commands: None,
            post_comment: false,
            submodules: false,
            keep_checkout: false,
            fresh: false,
            one_shot: false,
            actor,
            human_override: false,
            rerun: false,
            cancel: None,
            progress: None,
        }
    }

    /// What the run itself reads of these options.
    fn settings(&self) -> RunSettings {
        RunSettings {
            submodules: self.submodules,
            keep_checkout: self.keep_checkout,
            fresh: self.fresh,
            one_shot: self.one_shot,
            cancel: self.cancel.clone(),
            progress: self.progress.clone(),
            accepted: Vec::new(),
        }
    }
}

/// What one `forge --pr` did: a recorded run, a block (cap reached, PR closed), or nothing
/// because the head was already tested.
pub struct Outcome {
    /// The state as written and the events journaled.
    pub saved: Saved,
    /// The completed run's report; `None` when nothing ran.
    pub report: Option<Report>,
    /// The head was already tested with these commands: that run, not run again or counted.
    pub already_tested: Option<RunSummary>,
}

impl Outcome {
    /// Nothing ran: the cycle was blocked (cap reached, PR closed) before the run.
    fn nothing_ran(saved: Saved) -> Outcome {
        Outcome { saved, report: None, already_tested: None }
    }

    /// Whether the cycle ended up blocked (the CLI exits 2).
    pub fn blocked(&self) -> bool {
        self.saved.state.status.is_blocked()
    }

    /// What `forge --pr` answers (the CLI prints it, the MCP server's `forge_test` returns it):
    /// the cycle's state, or `ALREADY_TESTED` with the run that tested this head before.
    pub fn document(&self, ctx: &Ctx, paths: &CyclePaths) -> Result<serde_json::Value> {
        let state = &self.saved.state;
        let Some(run) = &self.already_tested else {
            return serde_json::to_value(state).map_err(|e| Error::Invalid(format!("cannot encode the state: {e}")));
        };
        let report_path = run.report_path.as_ref().map(|rel| paths.sidecar().join(rel).display().to_string());
        Ok(json!({
            "status": crate::domain::word::Word::AlreadyTested,
            "pr": run.pr,
            "head_sha": run.head_sha,
            "tested": run.status,
            "tested_in_iteration": run.iteration,
            "report_path": report_path,
            "explanation": "this head was already tested with these commands: nothing ran and no iteration was counted (a person may test it again with --rerun on a terminal, or rerun in forgeloop tui)",
            "cycle_status": state.status,
            "iteration": state.iteration,
            "max_iterations": state.max_iterations,
            "next": ctx.next_step(state, &paths.state.display().to_string()),
        }))
    }
}

/// What [`forge_pr`] will decide first, read without the lock and without the network: a
/// refusal (status, binding), the cap reached (it then records the block and touches nothing
/// remote), or go on. For a front end that has checks of its own that ask GitHub (the MCP
/// server's repository policy), so a cycle that cannot be tested is refused before them.
pub fn gate(ctx: &Ctx, paths: &CyclePaths, pr: &str, human_override: bool) -> Result<TestGate> {
    let state = state_file::load(&paths.state)?;
    let pr = parse_pr_ref(pr, &ctx.hosts)?;
    Ok(machine::gate_test(&state, &pr, human_override)?)
}

/// `forge --pr` (and the control room's rerun): one locked pass through design §3's rules and
/// §5.2's steps. The lock is held for the whole run, so a second writer gets `CYCLE_BUSY`.
pub async fn forge_pr(ctx: &Ctx, engine: &Engine, paths: &CyclePaths, opts: RunOptions) -> Result<Outcome> {
    let _lock = session::lock(paths)?;
    let before = state_file::load(&paths.state)?;
    let pr = parse_pr_ref(&opts.pr, &ctx.hosts)?;
    let pass = Pass { ctx, paths, before: &before, pr: &pr, actor: opts.actor };
    let mut state = before.clone();
    // We hold the lock: a `running` entry left by a killed process is stale.
    state.running = None;
    // Status, binding and cap are decided before any network call.
    if machine::gate_test(&state, &pr, opts.human_override)? == TestGate::CapReached {
        return ended_early::cap_reached(&pass, state).map(Outcome::nothing_ran);
    }
    let commands = opts.commands.clone().or_else(|| state.commands.clone()).ok_or_else(|| {
        Error::Invalid("PR mode needs --commands-json the first time; later runs reuse the cycle's commands".into())
    })?;
    // No sandbox, no run: refused before any network call, and the cycle does not move.
    let sandbox = local_sandbox(ctx, &commands, &pr.repo).await?;

    let pull = match engine.github.pull_request(&pr.repo, pr.number).await {
        Ok(pull) => pull,
        Err(err) => return ended_early::infra_failure(&pass, state, Error::Github(err)),
    };
    if !pull.is_open() {
        return ended_early::pr_closed(&pass, state, &pull).map(Outcome::nothing_ran);
    }

    // The same head with the same commands is a known result: not run again, not counted.
    if !opts.rerun
        && let Some(run) = machine::tested_run(&state, &pr.shorthand(), &pull.head_sha, &commands.sha256()).cloned()
    {
        let saved = ended_early::already_tested(&pass, state, &pull, &run)?;
        return Ok(Outcome { saved, report: None, already_tested: Some(run) });
    }

    // Which checks decide, before the run shows as live; GitHub's trouble is an infra failure,
    // a profile that names none is refused and the cycle does not move.
    let wanted = match wanted_checks(engine, &pull, &commands).await {
        Ok(wanted) => wanted,
        Err(ChecksError::Github(err)) => return ended_early::infra_failure(&pass, state, Error::Github(err)),
        Err(err) => return Err(Error::Checks(err)),
    };

    let iteration = state.iteration + 1;
    // Listening for a person's stop request before the run shows as live (design §6.6).
    let listener = stop::Listener::arm(paths, iteration, opts.cancel.clone());
    let mut opts = opts;
    opts.cancel = Some(listener.cancel());
    let live = show_live(&pass, &mut state, &pull, &commands, &opts, iteration)?;

    let mut settings = opts.settings();
    settings.accepted = state.accepted_tests.iter().map(|a| (a.path.clone(), a.blob.clone())).collect();
    let executed = match &sandbox {
        Some(sandbox) => execute(ctx, engine, &pull, &commands, sandbox, &live.log_path, &settings).await,
        None => execute_checks(ctx, engine, &pull, &commands, wanted, &live.log_path, &settings).await,
    };
    let done = match executed {
        Ok(Executed::Completed(done)) => done,
        Ok(Executed::Cancelled(message)) => {
            return ended_early::cancelled(&pass, state, iteration, listener.accepted(), message);
        }
        Ok(Executed::NeedsNetwork(needs)) => {
            // The commands ran: kept, so the rerun once the person allowed the hosts needs none.
            state.commands = Some(commands);
            return ended_early::needs_network(&pass, state, *needs, &live.log_rel);
        }
        Err(err) => return ended_early::infra_failure(&pass, state, err),
    };

    // The run counts before anything is posted: a failed post never loses it (design §5.2.8).
    let mut saved = report::record_run(&pass, engine, state, &pull, commands, &done, &live).await?;
    if opts.post_comment {
        saved = report::publish(ctx, engine, paths, saved.state).await?.0;
    }
    let report = saved.state.report.clone();
    Ok(Outcome { saved, report, already_tested: None })
}

/// Shows the run as live (control room, `list`) before the slow parts: its log chosen, a
/// failure handoff a person's rerun made moot withdrawn, `RUN_STARTED` journaled.
fn show_live(
    pass: &Pass<'_>,
    state: &mut CycleState,
    pull: &PullInfo,
    commands: &CommandsProfile,
    opts: &RunOptions,
    iteration: u32,
) -> Result<LiveRun> {
    let Pass { ctx, paths, pr, .. } = *pass;
    let log_rel = report::run_log_name(&paths.sidecar(), iteration, &pull.head_sha[..12]);
    let log_path = paths.sidecar().join(&log_rel);
    let now = ctx.now();
    // A person asked for the run again: the failure handoff still queued is moot.
    let why = "a person asked for the run again: its result decides what WebGPT is told";
    let withdrawn = match (opts.rerun, opts.actor) {
        (true, Actor::Human) => super::outbox::withdraw_moot_handoff(state, why, opts.actor, &now),
        _ => None,
    };
    let mut live = state.clone();
    live.running = Some(RunningInfo {
        pid: std::process::id(),
        started_at: now.clone(),
        pr: pr.shorthand(),
        head_sha: pull.head_sha.clone(),
        iteration,
        log_path: log_rel.clone(),
        actor: opts.actor,
        executor: (commands.executor == Executor::GithubChecks).then(|| commands.executor.as_str().to_owned()),
    });
    let event = NewEvent::of(
        opts.actor,
        EventData::RunStarted { pr: pr.shorthand(), head_sha: pull.head_sha.clone(), iteration, log: log_rel.clone() },
    );
    let events: Vec<NewEvent> = withdrawn.into_iter().chain([event]).collect();
    session::persist(ctx, paths, Some(pass.before), &live, opts.actor, events, &now)?;
    Ok(LiveRun { iteration, log_rel, log_path })
}

/// `forgeloop comment`: retry publishing the last run's comment.
pub async fn retry_comment(ctx: &Ctx, engine: &Engine, paths: &CyclePaths) -> Result<Saved> {
    let _lock = session::lock(paths)?;
    let state = state_file::load(&paths.state)?;
    if state.report.as_ref().is_some_and(|r| r.comment_published) {
        return Err(Error::Invalid("the last run's comment is already published".into()));
    }
    let (saved, ok) = report::publish(ctx, engine, paths, state).await?;
    if ok {
        Ok(saved)
    } else {
        let message = saved.state.report.as_ref().and_then(|r| r.comment_error.clone()).unwrap_or_default();
        Err(Error::Invalid(format!("publishing the comment failed again: {message}")))
    }
}

/// The control room's rerun: the cycle's stored PR and commands, the PR's current head. For a
/// `github-checks` cycle whose last run failed on the head that is still current, GitHub is
/// first asked to re-run the failed jobs (design §5.7); otherwise waiting would only read the
/// same verdict again.
pub async fn rerun(ctx: &Ctx, engine: &Engine, paths: &CyclePaths, cancel: watch::Receiver<bool>) -> Result<Outcome> {
    let state = state_file::load(&paths.state)?;
    let pr = state.pr_ref.clone().ok_or_else(|| Error::Invalid("the cycle has no PR to rerun yet".into()))?;
    let on_ci = state.commands.as_ref().is_some_and(|c| c.executor == Executor::GithubChecks);
    if let (true, Some(report)) = (on_ci, state.report.as_ref().filter(|r| r.status.is_failure())) {
        let parsed = parse_pr_ref(&pr, &ctx.hosts)?;
        let pull = engine.github.pull_request(&parsed.repo, parsed.number).await?;
        if pull.head_sha == report.head_sha {
            let wanted: Vec<String> = report.checks.iter().map(|c| c.name.clone()).collect();
            ci_wait::rerun_failed(&engine.github, &pull, &wanted, ctx.config.checks.poll_bounds().0)
                .await
                .map_err(checks_error)?;
        }
    }
    let mut opts = RunOptions::new(pr, Actor::Human);
    opts.post_comment = true;
    opts.human_override = true;
    opts.rerun = true;
    opts.cancel = Some(cancel);
    forge_pr(ctx, engine, paths, opts).await
}

/// Numbers this process's one-shot runs (their log names).
static ONE_SHOT_SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// `forgeloop test`: a one-shot run outside any cycle (exit 0/1/2 decided by the caller).
pub struct OneShot {
    /// The PR reference as given (`OWNER/REPO#N` or a URL).
    pub pr: String,
    /// The commands to run (`--commands-json`).
    pub commands: CommandsProfile,
    /// Publish the result as a PR comment (`--post-comment`).
    pub post_comment: bool,
    /// Also check out the PR's submodules.
    pub submodules: bool,
    /// Keep the checkout under `<home>/kept/` for debugging.
    pub keep_checkout: bool,
    /// Without the repository's warm cache.
    pub fresh: bool,
    /// Turns `true` to cancel the run.
    pub cancel: Option<watch::Receiver<bool>>,
    /// Told when each command starts (MCP progress notifications).
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<runner::CommandStarted>>,
}

impl OneShot {
    /// What the run itself reads of this request.
    fn settings(&self) -> RunSettings {
        RunSettings {
            submodules: self.submodules,
            keep_checkout: self.keep_checkout,
            fresh: self.fresh,
            one_shot: true,
            cancel: self.cancel.clone(),
            progress: self.progress.clone(),
            accepted: Vec::new(),
        }
    }
}

/// Tests the PR's current head once with `req.commands`, outside any cycle, and returns the report.
pub async fn test_once(ctx: &Ctx, engine: &Engine, req: OneShot) -> Result<Report> {
    let pr = parse_pr_ref(&req.pr, &ctx.hosts)?;
    let sandbox = local_sandbox(ctx, &req.commands, &pr.repo).await?;
    let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
    if !pull.is_open() {
        let why = if pull.merged { "merged" } else { "closed" };
        return Err(Error::Invalid(format!("{pr} is {why}; forgeloop only tests open pull requests")));
    }
    let wanted = wanted_checks(engine, &pull, &req.commands).await.map_err(checks_error)?;
    let log_path = one_shot_log(ctx, &pull);
    let settings = req.settings();
    let executed = match &sandbox {
        Some(sandbox) => execute(ctx, engine, &pull, &req.commands, sandbox, &log_path, &settings).await?,
        None => execute_checks(ctx, engine, &pull, &req.commands, wanted, &log_path, &settings).await?,
    };
    let done = match executed {
        Executed::Completed(done) => done,
        Executed::Cancelled(message) => return Err(Error::Invalid(message)),
        Executed::NeedsNetwork(needs) => {
            let log_path = Some(log_path.display().to_string());
            return Err(Error::NeedsNetwork { message: ended_early::needs_message(&needs), needs, log_path });
        }
    };
    let marker = Marker { task_space: None, iteration: None, head_sha: pull.head_sha.clone() };
    let log_hint = format!("`{}`", log_path.display());
    let integrity = match done.conflict {
        Some(_) => None,
        None => Some(integrity::of_one_shot(
            ctx,
            &pr,
            &pull.head_sha,
            &req.commands,
            done.tested.as_ref().map_err(Clone::clone),
        )),
    };
    let mut report = report::build_report(ctx, &pull, &done, &marker, Some(&log_hint), integrity);
    report.log_path = Some(log_path.display().to_string());
    if req.post_comment {
        report::publish_one_shot(ctx, engine, &pull, &marker, &mut report).await;
    }
    report::save_report(&log_path.with_extension("json"), &report)?;
    Ok(report)
}

/// A one-shot run's log, under `<home>/tests/`. The pid and a per-process count keep two runs
/// of one PR in the same second (two agents, two MCP requests) in files of their own.
fn one_shot_log(ctx: &Ctx, pull: &PullInfo) -> PathBuf {
    let stamp = ctx.clock.now().format("%Y%m%dT%H%M%SZ");
    let seq = ONE_SHOT_SEQ.fetch_add(1, Ordering::Relaxed);
    let name = format!(
        "{}-{}-{}-{}-{stamp}-{}-{seq}",
        pull.repository.owner(),
        pull.repository.name(),
        pull.number,
        &pull.head_sha[..12],
        std::process::id()
    )
    .to_ascii_lowercase();
    ctx.home.root().join("tests").join(format!("{name}.log"))
}
