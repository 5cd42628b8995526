//! A completed run's report (design §5.2): where its log and report go, the integrity of its
//! change, the report built (with what the commands ran in), saved next to the log, the run
//! recorded in the cycle, and the comment published.

use std::path::Path;

use serde_json::{Map, json};

use crate::domain::commands::{CommandsProfile, TreeMode};
use crate::domain::event_data::{EventData, Message};
use crate::domain::integrity::Integrity;
use crate::domain::machine;
use crate::domain::pr_ref::RepoName;
use crate::domain::report::{KEPT_CHECKOUT_WARNING, Report, TestedTree};
use crate::domain::state::{Actor, CycleState, RunSummary};
use crate::domain::text::{self, CommentInput, Marker};
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::store::atomic::write_atomic;
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;

use super::super::context::{Ctx, Engine};
use super::super::integrity;
use super::super::session::{self, Saved};
use super::types::{Completed, LiveRun, Pass};

/// The log of a new run, relative to the cycle's sidecar: `runs/<iteration>-<sha12>.log` for
/// the first run of that iteration and head, then `…-2.log`, `…-3.log`: a run that did not
/// count (NEEDS_NETWORK, cancelled) and the run after it keep a log (and report) each. A
/// symbolic link planted at a name does not take it: the name is chosen and the log's
/// `O_NOFOLLOW` open refuses it, naming the path, rather than the run quietly moving on.
pub(super) fn run_log_name(sidecar: &Path, iteration: u32, sha12: &str) -> String {
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

/// Records a completed run of the cycle: the integrity of its change judged, its report saved
/// next to its log, the iteration counted and `RUN_FINISHED` journaled (with the handoff it
/// issues). The run counts before anything is posted: a failed post never loses it (design
/// §5.2.8).
pub(super) async fn record_run(
    pass: &Pass<'_>,
    engine: &Engine,
    mut state: CycleState,
    pull: &PullInfo,
    commands: CommandsProfile,
    done: &Completed,
    live: &LiveRun,
) -> Result<Saved> {
    let Pass { ctx, paths, pr, actor, .. } = *pass;
    let (iteration, log_rel) = (live.iteration, &live.log_rel);
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
                pr,
                iteration,
                head_sha: &pull.head_sha,
                previous: previous_run(&state),
                commands: &commands,
                change: done.tested.as_ref().map_err(Clone::clone),
            };
            Some(integrity::of_run(ctx, engine, paths, &tested).await)
        }
    };
    let mut report = build_report(ctx, pull, done, &marker, Some(&log_hint), integrity);
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
        actor,
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
    let finished = finished_event(pass, &commands, done, &report, live, &report_rel);
    state.commands = Some(commands);
    machine::record_run(&mut state, pr, report, summary, &now);
    let mut events = vec![finished];
    if let Some(outbox) = &state.outbox {
        events.push(NewEvent::of(Actor::System, EventData::HandoffIssued(Message::of(outbox))));
    }
    session::persist(ctx, paths, Some(pass.before), &state, actor, events, &now)
}

/// `RUN_FINISHED`: the run's verdict, its log and report, what was fetched and what the
/// integrity of its change found.
fn finished_event(
    pass: &Pass<'_>,
    commands: &CommandsProfile,
    done: &Completed,
    report: &Report,
    live: &LiveRun,
    report_rel: &str,
) -> NewEvent {
    let fetch = done.fetch.as_ref().map(|f| {
        json!({"mirror_created": f.mirror_created, "fetched": f.fetched, "depth": f.depth, "shallow": f.shallow,
               "deepened": f.deepened, "received_objects": f.received_objects, "received_bytes": f.received_bytes})
    });
    NewEvent::of(
        pass.actor,
        EventData::RunFinished {
            iteration: live.iteration,
            pr: pass.pr.shorthand(),
            head_sha: report.head_sha.clone(),
            status: report.status,
            log: live.log_rel.clone(),
            report: report_rel.to_owned(),
            log_truncated: done.outcome.log_truncated,
            executor: Some(commands.executor.as_str().to_owned()),
            fetch: fetch.unwrap_or(serde_json::Value::Null),
            tests: report.integrity.as_ref().and_then(|i| i.flag),
            protected: report.integrity.as_ref().map(|i| i.protected.clone()).unwrap_or_default(),
            base_sha: report.base_sha.clone(),
            tree: report.tested.as_ref().filter(|t| t.tree == TreeMode::Head).map(|t| t.tree.as_str().to_owned()),
            held: report.tested.as_ref().map(|t| t.held.clone()).unwrap_or_default(),
        },
    )
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

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The report of a completed run (what it ran and saw, the integrity of its change); its
/// comment text is redacted as a whole.
pub(super) fn build_report(
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
    let mut report = Report {
        status: outcome.status,
        repository,
        pull_request: pull.number,
        head_sha: pull.head_sha.clone(),
        base_sha,
        tested,
        setup: outcome.setup.clone(),
        commands: outcome.commands.clone(),
        checks: checks.to_vec(),
        comment_markdown: String::new(),
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
        disputed: done.disputed.clone(),
        held_changed: done.held_changed.clone(),
        confirmation: done.confirmation.clone(),
        evidence: done.evidence.clone(),
        baseline: done.baseline.clone(),
        tripwire: done.tripwire.clone(),
        extra: Map::new(),
    };
    // The comment says what the report holds, every reason a pass waits included.
    let comment_markdown = text::comment_markdown(&CommentInput {
        marker,
        status: report.status,
        repository: &report.repository,
        pull_request: report.pull_request,
        head_sha: &report.head_sha,
        setup: &report.setup,
        commands: &report.commands,
        failure_output: outcome.failure_output.as_deref(),
        log_hint,
        sandbox: sandbox.as_deref(),
        checks,
        integrity: report.integrity.as_ref(),
        tested: report.tested.as_ref().zip(report.base_sha.as_deref()),
        proof: Some(text::Proof::of(&report)),
    });
    report.comment_markdown = ctx.redactor.redact(&comment_markdown).into_owned();
    // Everything a report holds passes the redactor: test ids, argv and the words about them
    // come from what the PR's code printed (design §7).
    match serde_json::to_value(&report) {
        Ok(mut value) => {
            ctx.redactor.redact_json(&mut value);
            serde_json::from_value(value).unwrap_or(report)
        }
        Err(_) => report,
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
            merge_by: None,
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
        merge_by: tested.merge_by.clone(),
        commit_sha: Some(tested.commit_sha.clone()),
        held: tested.held.clone(),
        conflicts: Vec::new(),
    })
}

pub(super) fn save_report(path: &Path, report: &Report) -> Result<()> {
    let text = serde_json::to_string_pretty(report).unwrap_or_default() + "\n";
    write_atomic(path, text.as_bytes()).map_err(|e| Error::io(format!("cannot write the report {}", path.display()), e))
}

/// Publishes the comment of the cycle's last report; idempotent through the marker. A failure
/// is recorded in the report (`comment_error`) and does not undo the run.
pub(super) async fn publish(
    ctx: &Ctx,
    engine: &Engine,
    paths: &CyclePaths,
    state: CycleState,
) -> Result<(Saved, bool)> {
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

/// A one-shot test's comment, published when asked; a failure is recorded in the report.
pub(super) async fn publish_one_shot(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    marker: &Marker,
    report: &mut Report,
) {
    match engine.github.publish_comment(&pull.repository, pull.number, marker, &report.comment_markdown).await {
        Ok(published) => {
            report.comment_published = true;
            report.comment_url = Some(published.comment.html_url);
        }
        Err(err) => report.comment_error = Some(ctx.redactor.redact(&err.to_string()).into_owned()),
    }
}
