//! Testing a PR for real (design §5.2): resolve its head SHA, fetch exactly that commit, run the
//! commands in isolation, record the report and the redacted log, publish the comment. Shared
//! by `forge --pr`, `test`, the control room's rerun, the MCP server and the demo.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{Map, json};
use tokio::sync::watch;

use crate::checkout::{self, CheckoutError, CheckoutRequest, TestedSpec};
use crate::domain::commands::{CommandsProfile, Executor, TreeMode};
use crate::domain::egress::{Allowlist, NetworkEvent, NetworkMode};
use crate::domain::event_data::{EventData, Message};
use crate::domain::integrity::Integrity;
use crate::domain::machine;
pub use crate::domain::machine::TestGate;
use crate::domain::needs_network::{self as needs_net, DecidedBy, NeedsNetwork};
use crate::domain::pr_ref::{PrRef, RepoName, parse_pr_ref};
use crate::domain::protect::ProtectMode;
use crate::domain::report::{CheckResult, Environment, KEPT_CHECKOUT_WARNING, Report, TestStatus, TestedTree};
use crate::domain::state::{Actor, CycleState, RunSummary, RunningInfo};
use crate::domain::stop::{StopAction, StopRequest};
use crate::domain::text::{self, CommentInput, Marker};
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::runner::{self, RunOutcome};
use crate::sandbox;
use crate::sandbox::Phase;
use crate::store::atomic::write_atomic;
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::ci_wait::{self, ChecksError, WaitPlan, Waited};
use super::context::Ctx;
use super::integrity;
use super::session::{self, Saved};
use super::stop;
use super::{cache_layers, sandboxed_run};
use crate::cache::Scope;

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

/// The result of checking out and running, before anything is recorded.
enum Executed {
    Cancelled(String),
    Completed(Box<Completed>),
    /// The run failed for want of network (design §5.6): its log stays; nothing is recorded.
    NeedsNetwork(Box<NeedsNetwork>),
}

struct Completed {
    outcome: RunOutcome,
    /// `None` for a `github-checks` run: nothing was fetched.
    fetch: Option<checkout::FetchStats>,
    /// A `github-checks` run's checks (design §5.7).
    checks: Vec<CheckResult>,
    environment: Environment,
    started_at: String,
    started: Instant,
    /// `--keep-checkout`: where the checkout was left.
    kept: Option<PathBuf>,
    /// What the run's commands asked its egress proxy for.
    network_log: Vec<NetworkEvent>,
    /// Destinations beyond the log's bound, counted only.
    network_log_dropped: u64,
    /// The lockfiles in the tested tree.
    lockfiles: Vec<String>,
    /// What the commands ran in and the change it is judged on: from the checkout, or for a
    /// `github-checks` run from the mirror alone; the reason when it could not be made.
    tested: Result<checkout::Tested, String>,
    /// The head did not merge into the base tip: nothing ran (`MERGE_CONFLICT`).
    conflict: Option<Conflict>,
}

/// A head that does not merge cleanly into its base branch's tip (design §5.2.1).
struct Conflict {
    base_ref: String,
    base_sha: String,
    paths: Vec<String>,
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
    let mut state = before.clone();
    // We hold the lock: a `running` entry left by a killed process is stale.
    state.running = None;
    // Status, binding and cap are decided before any network call.
    if machine::gate_test(&state, &pr, opts.human_override)? == TestGate::CapReached {
        let now = ctx.now();
        machine::reach_cap(&mut state, &pr, &now);
        let event = blocked_event(&state, "max_iterations reached; nothing was fetched or run");
        let saved = session::persist(ctx, paths, Some(&before), &state, opts.actor, vec![event], &now)?;
        return Ok(Outcome { saved, report: None, already_tested: None });
    }
    let commands = opts.commands.clone().or_else(|| state.commands.clone()).ok_or_else(|| {
        Error::Invalid("PR mode needs --commands-json the first time; later runs reuse the cycle's commands".into())
    })?;
    // No sandbox, no run: refused before any network call, and the cycle does not move.
    let sandbox = local_sandbox(ctx, &commands, &pr.repo).await?;

    let pull = match engine.github.pull_request(&pr.repo, pr.number).await {
        Ok(pull) => pull,
        Err(err) => return infra_failure(ctx, paths, &before, state, &pr, &opts, Error::Github(err)),
    };
    if !pull.is_open() {
        let now = ctx.now();
        let why = if pull.merged { "the PR was merged" } else { "the PR is closed" };
        machine::pr_closed(&mut state, &pr, &format!("{why}; forgeloop only tests open pull requests"), &now);
        let event = blocked_event(&state, why);
        let saved = session::persist(ctx, paths, Some(&before), &state, opts.actor, vec![event], &now)?;
        return Ok(Outcome { saved, report: None, already_tested: None });
    }

    // The same head with the same commands is a known result: not run again, not counted.
    if !opts.rerun
        && let Some(run) = machine::tested_run(&state, &pr.shorthand(), &pull.head_sha, &commands.sha256()).cloned()
    {
        return already_tested(ctx, paths, &before, state, &pr, &pull, run, opts.actor);
    }

    // Which checks decide, before the run shows as live; GitHub's trouble is an infra failure,
    // a profile that names none is refused and the cycle does not move.
    let wanted = match wanted_checks(engine, &pull, &commands).await {
        Ok(wanted) => wanted,
        Err(ChecksError::Github(err)) => {
            return infra_failure(ctx, paths, &before, state, &pr, &opts, Error::Github(err));
        }
        Err(err) => return Err(Error::Checks(err)),
    };

    let iteration = state.iteration + 1;
    let log_rel = run_log_name(&paths.sidecar(), iteration, &pull.head_sha[..12]);
    let log_path = paths.sidecar().join(&log_rel);
    // Listening for a person's stop request before the run shows as live (design §6.6).
    let listener = stop::Listener::arm(paths, iteration, opts.cancel.clone());
    let mut opts = opts;
    opts.cancel = Some(listener.cancel());
    // Show the run as live (control room, `list`) before the slow parts.
    let now = ctx.now();
    // A person asked for the run again: the failure handoff still queued is moot.
    let why = "a person asked for the run again: its result decides what WebGPT is told";
    let withdrawn = match (opts.rerun, opts.actor) {
        (true, Actor::Human) => super::outbox::withdraw_moot_handoff(&mut state, why, opts.actor, &now),
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
    session::persist(ctx, paths, Some(&before), &live, opts.actor, events, &now)?;

    let executed = match &sandbox {
        Some(sandbox) => execute(ctx, engine, &pull, &commands, sandbox, &log_path, &opts).await,
        None => execute_checks(ctx, engine, &pull, &commands, wanted, &log_path, &opts).await,
    };
    let done = match executed {
        Ok(Executed::Completed(done)) => done,
        Ok(Executed::Cancelled(message)) => {
            return cancelled(ctx, paths, &before, state, &pr, iteration, &opts, listener.accepted(), message);
        }
        Ok(Executed::NeedsNetwork(needs)) => {
            // The commands ran: kept, so the rerun once the person allowed the hosts needs none.
            state.commands = Some(commands);
            return needs_network(ctx, paths, &before, state, *needs, &log_rel, opts.actor);
        }
        Err(err) => return infra_failure(ctx, paths, &before, state, &pr, &opts, err),
    };

    let marker = Marker {
        task_space: Some(state.task_space.clone()),
        iteration: Some(iteration),
        head_sha: pull.head_sha.clone(),
    };
    let log_hint = format!("`{log_rel}` of cycle `{}`", paths.stem);
    // What the PR did to its own tests, judged before the verdict is recorded (design §5.2); a
    // head that did not merge ran nothing, so there is nothing to judge.
    let integrity = match done.conflict {
        Some(_) => None,
        None => {
            let tested = integrity::Tested {
                pr: &pr,
                iteration,
                head_sha: &pull.head_sha,
                previous: previous_run(&state),
                commands: &commands,
                change: done.tested.as_ref().map_err(Clone::clone),
            };
            Some(integrity::of_run(ctx, engine, paths, &tested).await)
        }
    };
    let mut report = build_report(ctx, &pull, &done, &marker, Some(&log_hint), integrity);
    report.log_path = Some(log_rel.clone());
    let report_rel = log_rel.replace(".log", ".json");
    save_report(&paths.sidecar().join(&report_rel), &report)?;

    let now = ctx.now();
    let summary = RunSummary {
        iteration,
        pr: pr.shorthand(),
        head_sha: report.head_sha.clone(),
        status: report.status,
        started_at: done.started_at.clone(),
        finished_at: now.clone(),
        duration_seconds: round3(done.started.elapsed().as_secs_f64()),
        actor: opts.actor,
        log_path: Some(log_rel.clone()),
        report_path: Some(report_rel.clone()),
        comment_url: None,
        commands_sha256: Some(commands.sha256()),
        base_sha: report.base_sha.clone(),
        merge_sha: report.tested.as_ref().and_then(|t| t.merge_sha.clone()),
        sandbox: match &done.environment.sandbox {
            Some(sandbox) => Some(sandbox.label()),
            None if done.fetch.is_none() => Some(crate::domain::report::ON_CI_LABEL.to_owned()),
            None => None,
        },
    };
    let fetch = done.fetch.as_ref().map(|f| {
        json!({"mirror_created": f.mirror_created, "fetched": f.fetched, "depth": f.depth, "shallow": f.shallow,
               "deepened": f.deepened, "received_objects": f.received_objects, "received_bytes": f.received_bytes})
    });
    let executor = commands.executor.as_str();
    state.commands = Some(commands);
    machine::record_run(&mut state, &pr, report.clone(), summary, &now);
    let event = NewEvent::of(
        opts.actor,
        EventData::RunFinished {
            iteration,
            pr: pr.shorthand(),
            head_sha: report.head_sha.clone(),
            status: report.status,
            log: log_rel.clone(),
            report: report_rel.clone(),
            log_truncated: done.outcome.log_truncated,
            executor: Some(executor.to_owned()),
            fetch: fetch.unwrap_or(serde_json::Value::Null),
            tests: report.integrity.as_ref().and_then(|i| i.flag),
            protected: report.integrity.as_ref().map(|i| i.protected.clone()).unwrap_or_default(),
            base_sha: report.base_sha.clone(),
            tree: report.tested.as_ref().filter(|t| t.tree == TreeMode::Head).map(|t| t.tree.as_str().to_owned()),
            held: report.tested.as_ref().map(|t| t.held.clone()).unwrap_or_default(),
        },
    );
    let mut events = vec![event];
    if let Some(outbox) = &state.outbox {
        events.push(NewEvent::of(Actor::System, EventData::HandoffIssued(Message::of(outbox))));
    }
    // The run counts before anything is posted: a failed post never loses it (design §5.2.8).
    let mut saved = session::persist(ctx, paths, Some(&before), &state, opts.actor, events, &now)?;
    if opts.post_comment {
        saved = publish(ctx, engine, paths, saved.state).await?.0;
    }
    let report = saved.state.report.clone();
    Ok(Outcome { saved, report, already_tested: None })
}

/// The cycle's last run, as the integrity of the next reads it: a fix after a failure is
/// judged for the assertions it removed from the tests that failed.
fn previous_run(state: &CycleState) -> Option<integrity::PreviousRun<'_>> {
    let run = state.history.last()?;
    let report = state.report.as_ref().filter(|r| r.head_sha == run.head_sha);
    let failing =
        report.iter().flat_map(|r| r.setup.iter().chain(r.commands.iter())).filter(|c| !c.passed() && !c.not_run);
    let mut failure_text: String = failing.flat_map(|c| c.argv.iter()).map(|w| format!("{w} ")).collect();
    if let Some(output) = report.and_then(|r| r.failure_output.as_deref()) {
        failure_text.push_str(output);
    }
    Some(integrity::PreviousRun {
        head_sha: &run.head_sha,
        iteration: run.iteration,
        failed: run.status.is_failure(),
        failure_text,
    })
}

/// `forge --pr` on a head already tested: nothing runs or counts; a cycle waiting for a fix of
/// that head gets the `PR_UNCHANGED` note for WebGPT (journaled), else nothing is written.
#[allow(clippy::too_many_arguments)]
fn already_tested(
    ctx: &Ctx,
    paths: &CyclePaths,
    before: &CycleState,
    mut state: CycleState,
    pr: &PrRef,
    pull: &PullInfo,
    run: RunSummary,
    actor: Actor,
) -> Result<Outcome> {
    let now = ctx.now();
    let saved = match machine::already_tested(&mut state, pr, &pull.head_sha, Some(&pull.head_ref), &run, &now) {
        None => Saved { state: before.clone(), events: Vec::new() },
        Some(effect) => {
            let mut events = vec![NewEvent::of(
                Actor::System,
                EventData::PrUnchanged {
                    via: "forge".into(),
                    pr: pr.shorthand(),
                    head_sha: pull.head_sha.clone(),
                    branch: Some(pull.head_ref.clone()),
                    tested_in: Some(run.iteration),
                    tested: Some(run.status),
                },
            )];
            match (effect, &state.outbox) {
                (machine::ReplyEffect::FollowUp, Some(outbox)) => {
                    events.push(NewEvent::of(Actor::System, EventData::FollowupIssued(Message::of(outbox))))
                }
                (machine::ReplyEffect::Blocked, _) => events.push(blocked_event(&state, "no fix was pushed")),
                _ => {}
            }
            session::persist(ctx, paths, Some(before), &state, actor, events, &now)?
        }
    };
    Ok(Outcome { saved, report: None, already_tested: Some(run) })
}

/// Records a run that stopped before its verdict: not an iteration; journaled with who stopped
/// it; with an abort request, the cycle ends too. The caller learns it as `RUN_CANCELLED`.
#[allow(clippy::too_many_arguments)]
fn cancelled(
    ctx: &Ctx,
    paths: &CyclePaths,
    before: &CycleState,
    mut state: CycleState,
    pr: &PrRef,
    iteration: u32,
    opts: &RunOptions,
    request: Option<StopRequest>,
    fallback: String,
) -> Result<Outcome> {
    let now = ctx.now();
    let (by, message) = match &request {
        Some(r) => (
            r.by,
            format!(
                "the run was cancelled by {} (forgeloop pid {}): {}; it does not count as an iteration",
                r.by.as_str(),
                r.requester_pid,
                r.reason
            ),
        ),
        None => (opts.actor, fallback),
    };
    state.last_error = Some(message.clone());
    state.updated_at = Some(now.clone());
    let data = EventData::RunCancelled {
        pr: pr.shorthand(),
        iteration,
        reason: message.clone(),
        counted: false,
        request: request.as_ref().map(|r| r.id.clone()),
        requested_by_pid: request.as_ref().map(|r| r.requester_pid),
    };
    let mut events = vec![NewEvent::of(by, data)];
    let mut message = message;
    if let Some(r) = request.as_ref().filter(|r| r.action == StopAction::Abort) {
        machine::abort(&mut state, &r.reason, by, &now)?;
        events.push(NewEvent::of(by, EventData::Aborted { reason: r.reason.clone(), request: Some(r.id.clone()) }));
        message = format!("{message}; the cycle was aborted");
    }
    let saved = session::persist(ctx, paths, Some(before), &state, by, events, &now)?;
    Err(Error::RunCancelled { message, by, cycle_status: saved.state.status })
}

/// The log of a new run, relative to the cycle's sidecar: `runs/<iteration>-<sha12>.log` for
/// the first run of that iteration and head, then `…-2.log`, `…-3.log`: a run that did not
/// count (NEEDS_NETWORK, cancelled) and the run after it keep a log (and report) each. A
/// symbolic link planted at a name does not take it: the name is chosen and the log's
/// `O_NOFOLLOW` open refuses it, naming the path, rather than the run quietly moving on.
fn run_log_name(sidecar: &std::path::Path, iteration: u32, sha12: &str) -> String {
    let present = |rel: &str| match sidecar.join(rel).symlink_metadata() {
        Ok(meta) => !meta.file_type().is_symlink(),
        Err(_) => false,
    };
    let taken = |rel: &str| present(rel) || present(&rel.replace(".log", ".json"));
    let first = format!("runs/{iteration}-{sha12}.log");
    if !taken(&first) {
        return first;
    }
    (2u32..).map(|n| format!("runs/{iteration}-{sha12}-{n}.log")).find(|rel| !taken(rel)).unwrap_or(first)
}

/// Records a run that failed for want of network: not an iteration, not an infra failure, no
/// handoff; `next` then says what the person can allow (design §5.6).
fn needs_network(
    ctx: &Ctx,
    paths: &CyclePaths,
    before: &CycleState,
    mut state: CycleState,
    needs: NeedsNetwork,
    log_rel: &str,
    actor: Actor,
) -> Result<Outcome> {
    let now = ctx.now();
    let message = needs_message(&needs);
    let data = EventData::RunNeedsNetwork {
        pr: needs.pr.clone(),
        head_sha: needs.head_sha.clone(),
        phase: needs.phase.clone(),
        allow: needs.allow.clone(),
        sign: needs.sign.clone(),
        refused_by_policy: needs.refused_by_policy.clone(),
        log: log_rel.to_owned(),
        counted: false,
    };
    machine::needs_network(&mut state, needs.clone(), &now);
    let event = NewEvent::of(Actor::System, data);
    session::persist(ctx, paths, Some(before), &state, actor, vec![event], &now)?;
    Err(Error::NeedsNetwork { message, needs: Box::new(needs), log_path: Some(log_rel.to_owned()) })
}

fn needs_message(needs: &NeedsNetwork) -> String {
    let what = needs.what();
    // The tests themselves never have network: what they fetch belongs in a setup step.
    let or_setup = if needs.phase == "test" { " or install it in a \"setup\" step" } else { "" };
    format!(
        "the run of {} failed in its {} phase because {what}: not the PR's fault, so not an iteration and nothing for WebGPT; allow what it needs in your config.toml ({}){or_setup}, then run again",
        needs.pr,
        needs.phase,
        needs.config.trim_end().replace('\n', " ")
    )
}

fn blocked_event(state: &CycleState, reason: &str) -> NewEvent {
    NewEvent::of(Actor::System, EventData::Blocked { status: state.status, reason: Some(reason.to_owned()) })
}

/// design §3 rule 3: the status stays, the failure is counted, three in a row block.
fn infra_failure(
    ctx: &Ctx,
    paths: &CyclePaths,
    before: &CycleState,
    mut state: CycleState,
    pr: &PrRef,
    opts: &RunOptions,
    err: Error,
) -> Result<Outcome> {
    let now = ctx.now();
    let message = ctx.redactor.redact(&err.to_string()).into_owned();
    machine::record_infra_failure(&mut state, &message, &now);
    let event = NewEvent::of(
        Actor::System,
        EventData::RunFailed { pr: pr.shorthand(), error: message.clone(), infra_failures: state.infra_failures },
    );
    session::persist(ctx, paths, Some(before), &state, opts.actor, vec![event], &now)?;
    Err(Error::Infra { message, infra_failures: state.infra_failures, cycle_status: state.status })
}

/// What `repo`'s runs may reach, from the person's config (design §5.6): the allowlist its
/// proxy enforces, and the setup commands' mode (`allowlist`, or `off` when the allowlist is
/// empty). A commands file's `"open"` is refused unless the config permits it for `repo`.
fn network_policy(ctx: &Ctx, commands: &CommandsProfile, repo: &RepoName) -> Result<(NetworkMode, Allowlist)> {
    let policy = ctx.network_config().for_repository(&repo.full_name());
    if commands.network == NetworkMode::Open && !policy.open_permitted {
        return Err(Error::Invalid(format!(
            "the commands file asks for \"network\": \"open\" (the host's whole network), which only your config can permit for {repo}: [network.repositories.\"{}\"] open = true; use \"network\": \"allowlist\" with the hosts the tests need in [network] allow instead",
            repo.full_name()
        )));
    }
    let setup = if policy.allow.is_empty() { NetworkMode::Off } else { NetworkMode::Allowlist };
    Ok((setup, policy.allow))
}

/// Checks the sandbox settings of `commands` and builds a sandbox of the best tier here
/// (design §5.6); blocking work, so it runs off the async threads.
async fn sandbox_plan(ctx: &Ctx, commands: &CommandsProfile, setup_network: NetworkMode) -> Result<sandbox::Plan> {
    let settings = ctx.sandbox.clone();
    let profile = commands.clone();
    let protected = ctx.protected_paths();
    tokio::task::spawn_blocking(move || {
        sandbox::prepare(&settings, &profile, setup_network, &runner::process_env(), &protected)
    })
    .await
    .map_err(|e| Error::Invalid(format!("the sandbox check failed: {e}")))?
    .map_err(Error::Sandbox)
}

/// The sandbox a local profile runs in, with the allowlist its proxy enforces; `None` for a
/// `github-checks` profile, which runs nothing here (design §5.7).
async fn local_sandbox(ctx: &Ctx, commands: &CommandsProfile, repo: &RepoName) -> Result<Option<LocalRun>> {
    match commands.executor {
        Executor::Local => {
            let (setup, allow) = network_policy(ctx, commands, repo)?;
            Ok(Some(LocalRun { plan: sandbox_plan(ctx, commands, setup).await?, allow }))
        }
        Executor::GithubChecks => Ok(None),
    }
}

/// How a local run's commands are isolated: the sandbox, and the allowlist of its egress proxy.
struct LocalRun {
    plan: sandbox::Plan,
    allow: Allowlist,
}

/// The check names a `github-checks` profile waits for; none for a local one.
async fn wanted_checks(
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
) -> std::result::Result<Vec<String>, ChecksError> {
    match commands.executor {
        Executor::Local => Ok(Vec::new()),
        Executor::GithubChecks => {
            ci_wait::check_dispatch(pull, commands)?;
            ci_wait::wanted_checks(&engine.github, pull, commands).await
        }
    }
}

/// The `github-checks` executor: asks for the dispatch when the profile has one, then waits
/// for the wanted checks on the head SHA. A wait that ends without a verdict (no check
/// appeared, timeout) is an infra failure; GitHub's refusals too.
async fn execute_checks(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
    wanted: Vec<String>,
    log_path: &Path,
    opts: &RunOptions,
) -> Result<Executed> {
    let started_at = ctx.now();
    let started = Instant::now();
    let checks_error = |e: ChecksError| match e {
        ChecksError::Github(err) => Error::Github(err),
        other => Error::Checks(other),
    };
    ci_wait::dispatch(&engine.github, pull, commands).await.map_err(checks_error)?;
    let plan = WaitPlan {
        wanted,
        timeout: std::time::Duration::from_secs(commands.checks_timeout_s()),
        appear_timeout: std::time::Duration::from_secs(commands.appear_timeout_s()),
        poll: ctx.config.checks.poll_bounds(),
        log_path,
        redactor: &ctx.redactor,
        cancel: opts.cancel.clone(),
        progress: opts.progress.clone(),
    };
    let verdict = match ci_wait::wait(&engine.github, pull, plan).await.map_err(checks_error)? {
        Waited::Verdict(verdict) => verdict,
        Waited::Cancelled(message) => return Ok(Executed::Cancelled(message)),
    };
    // What CI ran is judged like a local run: its change against the base tip, from the mirror.
    let tested = judge_in_mirror(ctx, engine, pull, commands).await;
    let outcome = RunOutcome {
        status: verdict.status,
        setup: Vec::new(),
        commands: Vec::new(),
        failure_output: verdict.failure_output,
        timed_out: false,
        cancelled: false,
        log_bytes_written: verdict.log_bytes,
        log_truncated: false,
        tried: Vec::new(),
    };
    let environment = Environment {
        forgeloop_version: env!("CARGO_PKG_VERSION").to_owned(),
        libgit2_version: checkout::libgit2_version(),
        os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        commands_sha256: commands.sha256(),
        tree_sha: None,
        sandbox: None,
        executor: Some(Executor::GithubChecks.as_str().to_owned()),
    };
    Ok(Executed::Completed(Box::new(Completed {
        outcome,
        fetch: None,
        checks: verdict.checks,
        environment,
        started_at,
        started,
        kept: None,
        network_log: Vec::new(),
        network_log_dropped: 0,
        lockfiles: Vec::new(),
        tested,
        conflict: None,
    })))
}

/// The change a `github-checks` run is judged on: the head and the base branch fetched into
/// the mirror and merged there (nothing is checked out or run); the reason when it cannot be.
async fn judge_in_mirror(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
) -> std::result::Result<checkout::Tested, String> {
    let mut job = CheckoutJob::new(ctx, engine, pull, commands);
    // CI ran what it ran: nothing is held here.
    job.hold = false;
    let judged = tokio::task::spawn_blocking(move || checkout::judge(&job.request())).await;
    match judged {
        Ok(Ok(tested)) => Ok(tested),
        Ok(Err(err)) => Err(err.to_string()),
        Err(err) => Err(format!("the judging task failed: {err}")),
    }
}

/// Fetches and checks out the PR head, then runs the commands into `log_path`.
async fn execute(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
    local: &LocalRun,
    log_path: &Path,
    opts: &RunOptions,
) -> Result<Executed> {
    let sandbox = &local.plan;
    let started_at = ctx.now();
    let started = Instant::now();
    let cancel_flag = Arc::new(AtomicBool::new(false));
    // Forward a cancel request to the (blocking) fetch.
    let forwarder = opts.cancel.clone().map(|mut rx| {
        let flag = cancel_flag.clone();
        tokio::spawn(async move {
            loop {
                if *rx.borrow_and_update() {
                    flag.store(true, Ordering::SeqCst);
                    break;
                }
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
    });
    // The run's cache layer (its cycle's, or a throw-away one), unless asked to run cold; with
    // it, the run directory has the layer's stable name (design §5.6).
    let mut layers = if commands.cache && !opts.fresh {
        let scope = if opts.one_shot { Scope::Throwaway } else { Scope::Cycle(pull.number) };
        Some(cache_layers::claim(ctx, pull, sandbox, scope)?)
    } else {
        None
    };
    let run_dir = match &layers {
        Some(layers) => sandbox::RunDir::create_at(sandbox.run_root(), &layers.key()),
        None => sandbox::RunDir::create(sandbox.run_root()),
    }
    .map_err(|e| Error::io(format!("cannot create a run directory in {}", sandbox.run_root().display()), e))?;
    let mut job = CheckoutJob::new(ctx, engine, pull, commands);
    job.submodules = opts.submodules;
    job.cancel = cancel_flag;
    job.into = run_dir.path().join("checkout");
    job.objects_for_others = sandbox.run_as().is_some();
    // Whatever a warming wrote after this moment may be newer than the checkout's files.
    let checked_out = std::time::SystemTime::now();
    let prepared = tokio::task::spawn_blocking(move || checkout::prepare(&job.request()))
        .await
        .map_err(|e| Error::Invalid(format!("the checkout task failed: {e}")))?;
    if let Some(forwarder) = forwarder {
        forwarder.abort();
    }
    let checkout = match prepared {
        Ok(checkout) => checkout,
        Err(CheckoutError::Cancelled) => {
            return Ok(Executed::Cancelled("the run was cancelled during the fetch".into()));
        }
        Err(CheckoutError::MergeConflict { base_ref, base_sha, head_sha: _, paths }) => {
            let _ = run_dir.remove();
            let conflict = Conflict { base_ref, base_sha, paths };
            return merge_conflict(ctx, commands, conflict, log_path, started_at, started).map(Executed::Completed);
        }
        Err(err) => return Err(Error::Checkout(err)),
    };

    let mut paths = run_dir.paths(checkout.path(), Some(checkout.gitdir()));
    let mut cache_used = None;
    if let Some(layers) = &mut layers {
        // A Rust project finds the crates the person already downloaded (read-only).
        let person_cargo = checkout.path().join("Cargo.toml").is_file().then(person_cargo_home).flatten();
        let warm = cache_layers::Warm {
            plan: sandbox,
            allow: &local.allow,
            commands,
            pull,
            base_sha: checkout.tested.as_ref().map(|t| t.base_sha.as_str()),
            person_cargo: person_cargo.as_deref(),
            cancel: opts.cancel.clone(),
            live_log: log_path,
            may_warm: !opts.one_shot,
        };
        let (prepared, base, warm_error) = cache_layers::ready(ctx, layers, warm).await?;
        // This run's warming, or another's that ended meanwhile, built after the checkout began.
        if base.is_some() && layers.base_warmed_after(checked_out) {
            checkout.touch_all().map_err(|e| Error::io("cannot mark the checkout newer than the base layer", e))?;
        }
        cache_layers::use_cache(&mut paths, prepared);
        cache_used = Some(cache_layers::provenance(layers, base, warm_error));
    }
    let view = match &layers {
        Some(layers) => cache_layers::stable_checkout(sandbox, layers, checkout.gitdir())?,
        None => None,
    };
    if let Some(account) = sandbox.run_as() {
        run_dir.hand_over(&paths, account).map_err(|left| {
            Error::Invalid(format!("cannot give the run's directories to the account tests run as: {left}"))
        })?;
    }
    cache_layers::use_stable_checkout(&mut paths, view);
    let job = sandboxed_run::Job {
        plan: sandbox,
        allow: &local.allow,
        commands,
        tree: checkout.path(),
        gitdir: checkout.gitdir(),
        log_path,
        cancel: opts.cancel.clone(),
        progress: opts.progress.clone(),
    };
    let ran = sandboxed_run::run(ctx, job, paths).await;
    // What the run left that configures a tool goes now, whatever happened.
    if let Some(layers) = &layers
        && let Err(err) = layers.finish()
    {
        eprintln!("forgeloop: the cache layer {} was not cleaned after the run: {err}", layers.key().display());
    }
    let sandboxed_run::Ran { outcome, mut network_log, network_log_dropped, recorded, plan: sandbox } = ran?;
    let mut info = sandbox.info();
    info.cache = layers.as_ref().map(|l| l.key().display().to_string());
    info.cache_layers = cache_used;
    if !commands.setup.is_empty() {
        info.setup_network = Some(sandbox.network(Phase::Setup));
    }
    if sandbox.network(Phase::Test) == NetworkMode::Allowlist || !network_log.is_empty() {
        let mut hosts: Vec<&str> = network_log.iter().filter(|e| e.allowed).map(|e| e.host.as_str()).collect();
        hosts.sort();
        hosts.dedup();
        info.network_hosts = Some(hosts.len());
    }
    let mut needs = needs_network_of(&outcome, (&network_log, &recorded), &sandbox, pull, &ctx.now());
    network_log.extend(recorded);
    if let Some(needs) = &mut needs {
        needs.lockfiles = checkout.lockfiles.clone();
    }
    let lockfiles = checkout.lockfiles.clone();
    let tested = checkout.tested.clone().ok_or_else(|| "the checkout made nothing to judge".to_owned());
    let environment = Environment {
        forgeloop_version: env!("CARGO_PKG_VERSION").to_owned(),
        libgit2_version: checkout::libgit2_version(),
        os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        commands_sha256: commands.sha256(),
        tree_sha: Some(checkout.tree_sha.clone()),
        sandbox: Some(info),
        executor: Some(Executor::Local.as_str().to_owned()),
    };
    let fetch = checkout.fetch.clone();
    let kept = if opts.keep_checkout {
        Some(keep(ctx, checkout, &pull.head_sha, sandbox.run_as().is_some())?)
    } else {
        drop(checkout);
        None
    };
    // Whatever the test left (a `0000` tree included) goes now; what cannot is said, and `gc`
    // takes it later.
    if let Err(left) = run_dir.remove() {
        eprintln!("forgeloop: the run directory was not removed completely ({left}); `forgeloop gc` retries");
    }
    if outcome.cancelled {
        return Ok(Executed::Cancelled("the run was cancelled; it does not count as an iteration".into()));
    }
    if let Some(needs) = needs {
        return Ok(Executed::NeedsNetwork(Box::new(needs)));
    }
    Ok(Executed::Completed(Box::new(Completed {
        outcome,
        fetch: Some(fetch),
        checks: Vec::new(),
        environment,
        started_at,
        started,
        kept,
        network_log,
        network_log_dropped,
        lockfiles,
        tested,
        conflict: None,
    })))
}

/// A head that does not merge into its base branch's tip: nothing ran; the log says why, and
/// the run is the PR's to fix (design §5.2.1).
fn merge_conflict(
    ctx: &Ctx,
    commands: &CommandsProfile,
    conflict: Conflict,
    log_path: &Path,
    started_at: String,
    started: Instant,
) -> Result<Box<Completed>> {
    let message = format!(
        "The pull request's head does not merge cleanly into {} at {}: nothing was run.\nConflicting paths: {}.\nBring the branch up to date with {}: merge it (or rebase onto it), resolve the conflicts, and push.",
        conflict.base_ref,
        &conflict.base_sha[..12.min(conflict.base_sha.len())],
        conflict.paths.join(", "),
        conflict.base_ref
    );
    let message = ctx.redactor.redact(&message).into_owned();
    if let Some(dir) = log_path.parent() {
        crate::store::private::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let log = format!("{message}\n");
    write_atomic(log_path, log.as_bytes())
        .map_err(|e| Error::io(format!("cannot write the run log {}", log_path.display()), e))?;
    let not_run = |c: &crate::domain::commands::CommandSpec| {
        crate::domain::report::CommandResult::not_run(
            c.argv.iter().map(|a| ctx.redactor.redact(a).into_owned()).collect(),
        )
    };
    let outcome = RunOutcome {
        status: TestStatus::MergeConflict,
        setup: commands.setup.iter().map(not_run).collect(),
        commands: commands.commands.iter().map(not_run).collect(),
        failure_output: Some(message),
        timed_out: false,
        cancelled: false,
        log_bytes_written: log.len() as u64,
        log_truncated: false,
        tried: Vec::new(),
    };
    let environment = Environment {
        forgeloop_version: env!("CARGO_PKG_VERSION").to_owned(),
        libgit2_version: checkout::libgit2_version(),
        os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        commands_sha256: commands.sha256(),
        tree_sha: None,
        sandbox: None,
        executor: Some(Executor::Local.as_str().to_owned()),
    };
    Ok(Box::new(Completed {
        outcome,
        fetch: None,
        checks: Vec::new(),
        environment,
        started_at,
        started,
        kept: None,
        network_log: Vec::new(),
        network_log_dropped: 0,
        lockfiles: Vec::new(),
        tested: Err("the head did not merge into its base branch".to_owned()),
        conflict: Some(conflict),
    }))
}

/// Whether a failed run failed for want of network (design §5.6): its proxy refused a host, or
/// — sandboxed without network — its failing command printed what clients print then.
fn needs_network_of(
    outcome: &RunOutcome,
    (proxied, recorded): (&[NetworkEvent], &[NetworkEvent]),
    plan: &sandbox::Plan,
    pull: &PullInfo,
    now: &str,
) -> Option<NeedsNetwork> {
    let phase = match outcome.status {
        TestStatus::Passed | TestStatus::MergeConflict => return None,
        TestStatus::SetupFailed => Phase::Setup,
        TestStatus::Failed => Phase::Test,
    };
    // The proxy's refusals first, then the sandbox's record of connections; the printed signs
    // only when neither has anything (whatever the run printed, a refused destination decides).
    let refused = |log: &[NetworkEvent]| log.iter().any(|e| !e.allowed);
    let (log, decided_by) = match (refused(proxied), refused(recorded)) {
        (true, _) => ([proxied, recorded].concat(), DecidedBy::EgressProxy),
        (false, true) => (recorded.to_vec(), DecidedBy::ConnectionRecord),
        (false, false) => (Vec::new(), DecidedBy::PrintedSign),
    };
    let allow = needs_net::refused_entries(&log);
    let refused_by_policy = needs_net::refused_by_policy(&log);
    let sign = match plan.is_sandboxed() && plan.network(phase) == NetworkMode::Off {
        true => outcome.failure_output.as_deref().and_then(needs_net::sign_in).map(|(sign, _)| sign.to_owned()),
        false => None,
    };
    let config = match (allow.is_empty(), sign.is_some()) {
        (false, _) => needs_net::config_lines(&pull.repository.full_name(), &allow),
        (true, true) => needs_net::config_lines(&pull.repository.full_name(), &["registries".to_owned()]),
        (true, false) if !refused_by_policy.is_empty() => needs_net::policy_lines(&refused_by_policy),
        (true, false) => return None,
    };
    Some(NeedsNetwork {
        pr: format!("{}#{}", pull.repository.full_name(), pull.number),
        head_sha: pull.head_sha.clone(),
        phase: phase.as_str().to_owned(),
        config,
        lockfiles: Vec::new(),
        allowed_at: None,
        allow,
        sign,
        refused_by_policy,
        decided_by: Some(decided_by),
        at: now.to_owned(),
    })
}

/// What the blocking checkout task needs, owned.
struct CheckoutJob {
    mirrors: PathBuf,
    repo: RepoName,
    clone_url: String,
    number: u64,
    sha: String,
    token: Option<String>,
    allow_insecure_local: bool,
    submodules: bool,
    cancel: Arc<AtomicBool>,
    owners: Vec<String>,
    history: crate::domain::commands::History,
    into: PathBuf,
    objects_for_others: bool,
    base_ref: String,
    /// What to test and judge: the merge or the head, the commands, the held paths.
    tree: TreeMode,
    commands: CommandsProfile,
    protect: Vec<String>,
    hold: bool,
}

impl CheckoutJob {
    fn request(&self) -> CheckoutRequest<'_> {
        CheckoutRequest {
            mirrors_root: &self.mirrors,
            repo: &self.repo,
            clone_url: &self.clone_url,
            pr_number: self.number,
            expected_sha: &self.sha,
            token: self.token.as_deref(),
            allow_insecure_local: self.allow_insecure_local,
            submodules: self.submodules,
            base_ref: Some(&self.base_ref),
            submodule_token_owners: &self.owners,
            fetch_exact_sha: false,
            checkouts_root: None,
            exact_dir: Some(&self.into),
            history: self.history,
            cancel: Some(self.cancel.clone()),
            objects_for_others: self.objects_for_others,
            tested: Some(TestedSpec {
                tree: self.tree,
                commands: &self.commands,
                protect: &self.protect,
                hold: self.hold,
            }),
        }
    }
}

impl CheckoutJob {
    /// A job for `pull` with `commands`, the person's protected paths and mode for its repository.
    fn new(ctx: &Ctx, engine: &Engine, pull: &PullInfo, commands: &CommandsProfile) -> CheckoutJob {
        let repository = pull.repository.full_name();
        CheckoutJob {
            mirrors: ctx.home.mirrors_dir(),
            repo: pull.repository.clone(),
            clone_url: pull.base_clone_url.clone(),
            number: pull.number,
            sha: pull.head_sha.clone(),
            token: engine.token.clone(),
            allow_insecure_local: engine.github.is_loopback(),
            submodules: false,
            cancel: Arc::new(AtomicBool::new(false)),
            owners: ctx.config.checkout.submodule_token_owners.clone(),
            history: commands.history,
            into: PathBuf::new(),
            objects_for_others: false,
            base_ref: pull.base_ref.clone(),
            tree: commands.tree,
            commands: commands.clone(),
            protect: ctx.config.protect.for_repository(&repository),
            hold: ctx.config.protect.mode_for(&repository) == ProtectMode::Hold,
        }
    }
}

/// The person's own cargo home (`CARGO_HOME`, else `~/.cargo`), when it exists.
fn person_cargo_home() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    home.is_dir().then_some(home)
}

/// `--keep-checkout`: the working tree moves to `<home>/kept/`, with a `.git` forgeloop wrote
/// afterwards, and back to the person's own account when the test ran as another.
fn keep(ctx: &Ctx, checkout: checkout::Checkout, head_sha: &str, handed_over: bool) -> Result<PathBuf> {
    let stamp = ctx.clock.now().format("%Y%m%dT%H%M%SZ");
    let dest = ctx.home.kept_dir().join(format!("{}-{stamp}-{}", &head_sha[..12], std::process::id()));
    if handed_over {
        // SAFETY: geteuid/getegid have no arguments and cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        crate::store::tree::chown_tree(checkout.path(), uid, gid)
            .map_err(|left| Error::Invalid(format!("cannot take the kept checkout back: {left}")))?;
    }
    checkout.keep(&dest).map_err(Error::Checkout)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The report of a completed run (what it ran and saw, the integrity of its change); its
/// comment text is redacted as a whole.
fn build_report(
    ctx: &Ctx,
    pull: &PullInfo,
    done: &Completed,
    marker: &Marker,
    log_hint: Option<&str>,
    integrity: Option<Integrity>,
) -> Report {
    let (outcome, checks, environment) = (&done.outcome, done.checks.as_slice(), done.environment.clone());
    let repository = pull.repository.full_name();
    let sandbox = environment.sandbox.as_ref().map(|s| s.label());
    let tested = tested_tree(done);
    let base_sha = match (&done.conflict, &done.tested) {
        (Some(conflict), _) => Some(conflict.base_sha.clone()),
        (None, Ok(tested)) => Some(tested.base_sha.clone()),
        (None, Err(_)) => None,
    };
    let comment_markdown = text::comment_markdown(&CommentInput {
        marker,
        status: outcome.status,
        repository: &repository,
        pull_request: pull.number,
        head_sha: &pull.head_sha,
        setup: &outcome.setup,
        commands: &outcome.commands,
        failure_output: outcome.failure_output.as_deref(),
        log_hint,
        sandbox: sandbox.as_deref(),
        checks,
        integrity: integrity.as_ref(),
        tested: tested.as_ref().zip(base_sha.as_deref()),
    });
    Report {
        status: outcome.status,
        repository,
        pull_request: pull.number,
        head_sha: pull.head_sha.clone(),
        base_sha,
        tested,
        setup: outcome.setup.clone(),
        commands: outcome.commands.clone(),
        checks: checks.to_vec(),
        comment_markdown: ctx.redactor.redact(&comment_markdown).into_owned(),
        failure_output: outcome.failure_output.clone().filter(|_| outcome.status.is_failure()),
        comment_published: false,
        head_repository: pull.head_repository.as_ref().map(RepoName::full_name),
        timed_out: outcome.timed_out,
        log_path: None,
        environment: Some(environment),
        comment_url: None,
        comment_error: None,
        kept_checkout: done.kept.as_ref().map(|p| p.display().to_string()),
        kept_checkout_warning: done.kept.as_ref().map(|_| KEPT_CHECKOUT_WARNING.to_owned()),
        network_log: done.network_log.clone(),
        network_log_dropped: done.network_log_dropped,
        lockfiles: done.lockfiles.clone(),
        integrity,
        extra: Map::new(),
    }
}

/// The report's record of what the commands ran in (design §5.2.1); `None` for a
/// `github-checks` run (CI decided what it ran).
fn tested_tree(done: &Completed) -> Option<TestedTree> {
    if let Some(conflict) = &done.conflict {
        return Some(TestedTree {
            tree: TreeMode::Merge,
            base_ref: conflict.base_ref.clone(),
            merge_sha: None,
            commit_sha: None,
            held: Vec::new(),
            conflicts: conflict.paths.clone(),
        });
    }
    let tested = done.tested.as_ref().ok().filter(|_| done.fetch.is_some())?;
    Some(TestedTree {
        tree: tested.tree,
        base_ref: tested.base_ref.clone(),
        merge_sha: tested.merge_sha.clone(),
        commit_sha: Some(tested.commit_sha.clone()),
        held: tested.held.clone(),
        conflicts: Vec::new(),
    })
}

fn save_report(path: &Path, report: &Report) -> Result<()> {
    let text = serde_json::to_string_pretty(report).unwrap_or_default() + "\n";
    write_atomic(path, text.as_bytes()).map_err(|e| Error::io(format!("cannot write the report {}", path.display()), e))
}

/// Publishes the comment of the cycle's last report; idempotent through the marker. A failure
/// is recorded in the report (`comment_error`) and does not undo the run.
async fn publish(ctx: &Ctx, engine: &Engine, paths: &CyclePaths, state: CycleState) -> Result<(Saved, bool)> {
    let (Some(mut report), Some(report_rel)) =
        (state.report.clone(), state.history.last().and_then(|h| h.report_path.clone()))
    else {
        return Err(Error::Invalid("the cycle has no completed run to comment on".into()));
    };
    let repo = RepoName::parse(&report.repository)?;
    let body = ctx.redactor.redact(&report.comment_markdown).into_owned();
    let marker =
        Marker::find(&body).ok_or_else(|| Error::Invalid("the report's comment has no forgeloop marker".into()))?;
    let result = engine.github.publish_comment(&repo, report.pull_request, &marker, &body).await;
    let before = state.clone();
    let mut state = state;
    let now = ctx.now();
    let (event, ok) = match result {
        Ok(published) => {
            report.comment_published = true;
            report.comment_url = Some(published.comment.html_url.clone());
            report.comment_error = None;
            if let Some(last) = state.history.last_mut() {
                last.comment_url = Some(published.comment.html_url.clone());
            }
            let data = EventData::CommentPublished {
                url: published.comment.html_url.clone(),
                created: published.created,
                iteration: marker.iteration,
            };
            (NewEvent::of(Actor::System, data), true)
        }
        Err(err) => {
            let message = ctx.redactor.redact(&err.to_string()).into_owned();
            report.comment_published = false;
            report.comment_error = Some(message.clone());
            (NewEvent::of(Actor::System, EventData::CommentFailed { error: message }), false)
        }
    };
    save_report(&paths.sidecar().join(report_rel), &report)?;
    state.report = Some(report);
    state.updated_at = Some(now.clone());
    let saved = session::persist(ctx, paths, Some(&before), &state, Actor::System, vec![event], &now)?;
    Ok((saved, ok))
}

/// `forgeloop comment`: retry publishing the last run's comment.
pub async fn retry_comment(ctx: &Ctx, engine: &Engine, paths: &CyclePaths) -> Result<Saved> {
    let _lock = session::lock(paths)?;
    let state = state_file::load(&paths.state)?;
    if state.report.as_ref().is_some_and(|r| r.comment_published) {
        return Err(Error::Invalid("the last run's comment is already published".into()));
    }
    let (saved, ok) = publish(ctx, engine, paths, state).await?;
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
            ci_wait::rerun_failed(&engine.github, &pull, &wanted, ctx.config.checks.poll_bounds().0).await.map_err(
                |e| match e {
                    ChecksError::Github(err) => Error::Github(err),
                    other => Error::Checks(other),
                },
            )?;
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

/// Tests the PR's current head once with `req.commands`, outside any cycle, and returns the report.
pub async fn test_once(ctx: &Ctx, engine: &Engine, req: OneShot) -> Result<Report> {
    let pr = parse_pr_ref(&req.pr, &ctx.hosts)?;
    let sandbox = local_sandbox(ctx, &req.commands, &pr.repo).await?;
    let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
    if !pull.is_open() {
        let why = if pull.merged { "merged" } else { "closed" };
        return Err(Error::Invalid(format!("{pr} is {why}; forgeloop only tests open pull requests")));
    }
    let wanted = wanted_checks(engine, &pull, &req.commands).await.map_err(|e| match e {
        ChecksError::Github(err) => Error::Github(err),
        other => Error::Checks(other),
    })?;
    let stamp = ctx.clock.now().format("%Y%m%dT%H%M%SZ");
    // The pid and a per-process count keep two runs of one PR in the same second (two agents,
    // two MCP requests) in files of their own.
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
    let log_path: PathBuf = ctx.home.root().join("tests").join(format!("{name}.log"));
    let mut opts = RunOptions::new(req.pr.clone(), Actor::Agent);
    opts.submodules = req.submodules;
    opts.keep_checkout = req.keep_checkout;
    opts.fresh = req.fresh;
    opts.one_shot = true;
    opts.cancel = req.cancel.clone();
    opts.progress = req.progress.clone();
    let executed = match &sandbox {
        Some(sandbox) => execute(ctx, engine, &pull, &req.commands, sandbox, &log_path, &opts).await?,
        None => execute_checks(ctx, engine, &pull, &req.commands, wanted, &log_path, &opts).await?,
    };
    let done = match executed {
        Executed::Completed(done) => done,
        Executed::Cancelled(message) => return Err(Error::Invalid(message)),
        Executed::NeedsNetwork(needs) => {
            let log_path = Some(log_path.display().to_string());
            return Err(Error::NeedsNetwork { message: needs_message(&needs), needs, log_path });
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
    let mut report = build_report(ctx, &pull, &done, &marker, Some(&log_hint), integrity);
    report.log_path = Some(log_path.display().to_string());
    if req.post_comment {
        match engine.github.publish_comment(&pull.repository, pull.number, &marker, &report.comment_markdown).await {
            Ok(published) => {
                report.comment_published = true;
                report.comment_url = Some(published.comment.html_url);
            }
            Err(err) => report.comment_error = Some(ctx.redactor.redact(&err.to_string()).into_owned()),
        }
    }
    save_report(&log_path.with_extension("json"), &report)?;
    Ok(report)
}
