//! The cycle's pending message as a person sees and governs it (`forgeloop outbox`, the
//! control room's conversation view): what waits to be typed into the chat, what was taken
//! out unsent and why, and dropping it — a person's decision, never the agent's.

use serde::Serialize;

use crate::domain::event_data::EventData;
use crate::domain::machine;
use crate::domain::state::{Actor, CycleState, Outbox, Withdrawn};
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::context::Ctx;
use super::session::{Saved, mutate};

/// What `forgeloop outbox` prints.
#[derive(Debug, Clone, Serialize)]
pub struct OutboxView {
    /// The cycle's status.
    pub status: String,
    /// The message waiting to be sent, if any.
    pub pending: Option<Outbox>,
    /// The last message sent, while no reply has replaced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<Outbox>,
    /// The last message taken out unsent, while nothing replaced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Withdrawn>,
}

/// The cycle's outbox as it stands.
pub fn view(paths: &CyclePaths) -> Result<OutboxView> {
    Ok(view_of(&state_file::load(&paths.state)?))
}

/// The outbox of `state`.
pub fn view_of(state: &CycleState) -> OutboxView {
    let (pending, sent) = match state.outbox.clone() {
        Some(o) if o.sent_at.is_none() => (Some(o), None),
        other => (None, other),
    };
    OutboxView { status: state.status.as_str().to_owned(), pending, sent, withdrawn: state.withdrawn.clone() }
}

/// A person drops the pending message: WebGPT is not sent it, the journal says so
/// (`message_withdrawn`), and `next` waits for the person. Not the cycle's first prompt.
pub fn drop_pending(ctx: &Ctx, paths: &CyclePaths, by: Actor) -> Result<Saved> {
    if by == Actor::Agent {
        return Err(Error::Invalid("only a person drops a pending message".into()));
    }
    mutate(ctx, paths, by, |state, events, now| {
        let dropped = machine::drop_pending(state, by, now)?;
        let why = state.withdrawn.as_ref().map(|w| w.why.clone()).unwrap_or_default();
        events.push(NewEvent::of(by, EventData::MessageWithdrawn { kind: dropped.kind, sha256: dropped.sha256, why }));
        Ok(())
    })
}

/// Takes the pending failure handoff out of the outbox when a person made its run moot (they
/// corrected the commands, allowed the hosts it lacked, asked for the run again), with the
/// journal event that says why; `None` when nothing such was pending.
pub(crate) fn withdraw_moot_handoff(state: &mut CycleState, why: &str, by: Actor, now: &str) -> Option<NewEvent> {
    let withdrawn = machine::withdraw_pending_handoff(state, why, by, now)?;
    Some(NewEvent::of(
        by,
        EventData::MessageWithdrawn { kind: withdrawn.kind, sha256: withdrawn.sha256, why: why.into() },
    ))
}
