//! Small transitions shared by the CLI and the control room: confirm, sent, abort, block,
//! unblock, extend, approve. Each is one locked, journaled mutation.

use crate::domain::event_data::{EventData, Message};
use crate::domain::machine;
use crate::domain::state::Actor;
use crate::domain::status::Status;
use crate::error::Result;
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;

use super::context::Ctx;
use super::session::{Saved, mutate};

/// The wording a person confirmed, when they edited it.
pub struct EditedBrief {
    /// The question for WebGPT as the person left it.
    pub webgpt_question: String,
    /// The brief as the person left it.
    pub intent_brief: String,
}

/// Confirms a brief awaiting confirmation and issues the prompt. `via` says where
/// (`tui`, `terminal`, `demo`).
pub fn confirm(ctx: &Ctx, paths: &CyclePaths, edited: Option<EditedBrief>, via: &str, by: Actor) -> Result<Saved> {
    mutate(ctx, paths, by, |state, events, now| {
        let edited_any = edited.is_some();
        machine::confirm_brief(state, edited.map(|e| (e.webgpt_question, e.intent_brief)), via, by, now)?;
        events.push(NewEvent::of(by, EventData::BriefConfirmed { via: via.to_owned(), edited: Some(edited_any) }));
        if let Some(outbox) = &state.outbox {
            events.push(NewEvent::of(Actor::System, EventData::PromptIssued(Message::of(outbox))));
        }
        Ok(())
    })
}

/// Records that the outbox message was typed into the chat; refused the second time.
pub fn sent(ctx: &Ctx, paths: &CyclePaths) -> Result<Saved> {
    mutate(ctx, paths, Actor::Agent, |state, events, now| {
        if let Some(kind) = machine::adopt_reference_outbox(state, now) {
            events.push(adopted_event(kind));
        }
        let outbox = machine::mark_sent(state, now)?;
        events.push(NewEvent::of(Actor::Agent, EventData::MessageSent(Message::of(&outbox))));
        Ok(())
    })
}

/// A reference-tool state (no outbox) gets the outbox its pending message belongs in, under
/// the cycle lock, journaled. `Ok(None)`: nothing to adopt (the usual case; nothing written).
pub fn adopt_reference_outbox(ctx: &Ctx, paths: &CyclePaths) -> Result<Option<Saved>> {
    let current = crate::store::state_file::load(&paths.state)?;
    if machine::reference_message(&current).is_none() {
        return Ok(None);
    }
    mutate(ctx, paths, Actor::System, |state, events, now| {
        if let Some(kind) = machine::adopt_reference_outbox(state, now) {
            events.push(adopted_event(kind));
        }
        Ok(())
    })
    .map(Some)
}

fn adopted_event(kind: crate::domain::state::OutboxKind) -> NewEvent {
    NewEvent::of(
        Actor::System,
        EventData::OutboxAdopted {
            kind: Some(kind),
            from: "a reference-tool state (webgpt-orchestrator): the pending message was in its old fields".into(),
        },
    )
}

/// Stops the cycle for good (`ABORTED`), journaling `reason` and who asked.
pub fn abort(ctx: &Ctx, paths: &CyclePaths, reason: &str, by: Actor) -> Result<Saved> {
    mutate(ctx, paths, by, |state, events, now| {
        machine::abort(state, reason, by, now)?;
        events.push(NewEvent::of(by, EventData::Aborted { reason: reason.to_owned(), request: None }));
        Ok(())
    })
}

/// Moves the cycle to the `BLOCKED_*` `status` with `reason`, journaled.
pub fn block(ctx: &Ctx, paths: &CyclePaths, status: Status, reason: &str, by: Actor) -> Result<Saved> {
    mutate(ctx, paths, by, |state, events, now| {
        machine::block(state, status, reason, now)?;
        events.push(NewEvent::of(by, EventData::Blocked { status, reason: Some(reason.to_owned()) }));
        Ok(())
    })
}

/// Human-only (design §6.4): the caller has established that a person is acting.
pub fn unblock(ctx: &Ctx, paths: &CyclePaths) -> Result<Saved> {
    mutate(ctx, paths, Actor::Human, |state, events, now| {
        let from = machine::unblock(state, now)?;
        events.push(NewEvent::of(Actor::Human, EventData::Unblocked { from }));
        Ok(())
    })
}

/// Human-only (design §6.4).
pub fn extend(ctx: &Ctx, paths: &CyclePaths, by: u32) -> Result<Saved> {
    mutate(ctx, paths, Actor::Human, |state, events, now| {
        let old = state.max_iterations;
        machine::extend(state, by, now)?;
        events.push(NewEvent::of(Actor::Human, EventData::CapExtended { from: old, to: state.max_iterations }));
        Ok(())
    })
}

/// Human-only (design §6.4): a person approves a pass that changed protected paths
/// (`NEEDS_REVIEW` → `READY_TO_MERGE`). Nothing is run or posted.
pub fn approve(ctx: &Ctx, paths: &CyclePaths, via: &str) -> Result<Saved> {
    mutate(ctx, paths, Actor::Human, |state, events, now| {
        let head = state.tested_head_sha().map(str::to_owned);
        let protected = state.report.as_ref().and_then(|r| r.integrity.as_ref()).map(|i| i.protected.clone());
        machine::approve(state, now)?;
        let protected = protected.unwrap_or_default();
        events.push(NewEvent::of(Actor::Human, EventData::Approved { via: via.to_owned(), head_sha: head, protected }));
        Ok(())
    })
}
