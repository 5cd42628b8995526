//! The ends of `forge --pr` short of a verdict, each recorded in the cycle its own way: the cap
//! reached or the PR closed (blocked), the head already tested (nothing runs), the run
//! cancelled, the run in need of network, and an infra failure (design §3 rule 3).

use crate::domain::event_data::{EventData, Message};
use crate::domain::machine;
use crate::domain::needs_network::NeedsNetwork;
use crate::domain::state::{Actor, CycleState, RunSummary};
use crate::domain::stop::{StopAction, StopRequest};
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::store::journal::NewEvent;

use super::super::session::{self, Saved};
use super::types::Pass;

/// The cap is reached: the block is recorded and nothing remote is touched.
pub(super) fn cap_reached(pass: &Pass<'_>, mut state: CycleState) -> Result<Saved> {
    let now = pass.ctx.now();
    machine::reach_cap(&mut state, pass.pr, &now);
    let event = blocked_event(&state, "max_iterations reached; nothing was fetched or run");
    session::persist(pass.ctx, pass.paths, Some(pass.before), &state, pass.actor, vec![event], &now)
}

/// The PR was merged or closed: forgeloop only tests open pull requests; the cycle is blocked.
pub(super) fn pr_closed(pass: &Pass<'_>, mut state: CycleState, pull: &PullInfo) -> Result<Saved> {
    let now = pass.ctx.now();
    let why = if pull.merged { "the PR was merged" } else { "the PR is closed" };
    machine::pr_closed(&mut state, pass.pr, &format!("{why}; forgeloop only tests open pull requests"), &now);
    let event = blocked_event(&state, why);
    session::persist(pass.ctx, pass.paths, Some(pass.before), &state, pass.actor, vec![event], &now)
}

/// `forge --pr` on a head already tested (in `run`): nothing runs or counts; a cycle waiting
/// for a fix of that head gets the `PR_UNCHANGED` note for WebGPT (journaled), else nothing is
/// written.
pub(super) fn already_tested(
    pass: &Pass<'_>,
    mut state: CycleState,
    pull: &PullInfo,
    run: &RunSummary,
) -> Result<Saved> {
    let now = pass.ctx.now();
    let Some(effect) = machine::already_tested(&mut state, pass.pr, &pull.head_sha, Some(&pull.head_ref), run, &now)
    else {
        return Ok(Saved { state: pass.before.clone(), events: Vec::new() });
    };
    let mut events = vec![NewEvent::of(
        Actor::System,
        EventData::PrUnchanged {
            via: "forge".into(),
            pr: pass.pr.shorthand(),
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
    session::persist(pass.ctx, pass.paths, Some(pass.before), &state, pass.actor, events, &now)
}

/// Records a run that stopped before its verdict: not an iteration; journaled with who stopped
/// it; with an abort request, the cycle ends too. The caller learns it as `RUN_CANCELLED`.
pub(super) fn cancelled<T>(
    pass: &Pass<'_>,
    mut state: CycleState,
    iteration: u32,
    request: Option<StopRequest>,
    fallback: String,
) -> Result<T> {
    let now = pass.ctx.now();
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
        None => (pass.actor, fallback),
    };
    state.last_error = Some(message.clone());
    state.updated_at = Some(now.clone());
    let data = EventData::RunCancelled {
        pr: pass.pr.shorthand(),
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
    let saved = session::persist(pass.ctx, pass.paths, Some(pass.before), &state, by, events, &now)?;
    Err(Error::RunCancelled { message, by, cycle_status: saved.state.status })
}

/// Records a run that failed for want of network: not an iteration, not an infra failure, no
/// handoff; `next` then says what the person can allow (design §5.6).
pub(super) fn needs_network<T>(
    pass: &Pass<'_>,
    mut state: CycleState,
    needs: NeedsNetwork,
    log_rel: &str,
) -> Result<T> {
    let now = pass.ctx.now();
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
    session::persist(pass.ctx, pass.paths, Some(pass.before), &state, pass.actor, vec![event], &now)?;
    Err(Error::NeedsNetwork { message, needs: Box::new(needs), log_path: Some(log_rel.to_owned()) })
}

/// What a run in need of network tells the caller: why it is not an iteration, and what to allow.
pub(super) fn needs_message(needs: &NeedsNetwork) -> String {
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

/// design §3 rule 3: the status stays, the failure is counted, three in a row block.
pub(super) fn infra_failure<T>(pass: &Pass<'_>, mut state: CycleState, err: Error) -> Result<T> {
    let ctx = pass.ctx;
    let now = ctx.now();
    let message = ctx.redactor.redact(&err.to_string()).into_owned();
    machine::record_infra_failure(&mut state, &message, &now);
    let event = NewEvent::of(
        Actor::System,
        EventData::RunFailed { pr: pass.pr.shorthand(), error: message.clone(), infra_failures: state.infra_failures },
    );
    session::persist(ctx, pass.paths, Some(pass.before), &state, pass.actor, vec![event], &now)?;
    Err(Error::Infra { message, infra_failures: state.infra_failures, cycle_status: state.status })
}

fn blocked_event(state: &CycleState, reason: &str) -> NewEvent {
    NewEvent::of(Actor::System, EventData::Blocked { status: state.status, reason: Some(reason.to_owned()) })
}
