//! The one way a cycle changes: take its lock, load, apply a domain transition, redact,
//! write atomically, journal. A refused transition writes nothing.

use crate::domain::event_data::EventData;
use crate::domain::state::{Actor, CycleState, sha256_hex};
use crate::error::{Error, Result};
use crate::store::journal::{self, Event, NewEvent};
use crate::store::layout::CyclePaths;
use crate::store::lock::FileLock;
use crate::store::state_file;
use crate::store::tighten;

use super::context::Ctx;

/// The result of a mutation: the saved (redacted) state and the journaled events.
#[derive(Debug, Clone)]
pub struct Saved {
    /// The state as written to disk, redacted.
    pub state: CycleState,
    /// The events appended to the journal, in order.
    pub events: Vec<Event>,
}

/// Redacts a state document the way it is persisted. The outbox hash is recomputed so it is
/// the hash of the text the coordinator actually sends.
pub fn redact_state(ctx: &Ctx, state: &CycleState) -> CycleState {
    let Ok(mut value) = serde_json::to_value(state) else { return state.clone() };
    ctx.redactor.redact_json(&mut value);
    let mut redacted = CycleState::from_value(value).unwrap_or_else(|_| state.clone());
    if let Some(outbox) = redacted.outbox.as_mut() {
        outbox.sha256 = sha256_hex(outbox.text.as_bytes());
    }
    redacted
}

/// Sets the state's `next_action` (the reference tool's field) to what `forgeloop next` says
/// for it now, redacted as `next` prints it. Every write of a cycle state calls this, so the
/// stored sentence is never stale (design §3).
pub fn refresh_next_action(ctx: &Ctx, paths: &CyclePaths, state: &mut CycleState) {
    let step = ctx.next_step(state, &paths.state.display().to_string());
    state.next_action = ctx.redactor.redact(&step.explanation).into_owned();
}

/// Writes the state and appends `events` (plus `status_changed` when the status moved).
/// The caller holds the cycle lock.
pub fn persist(
    ctx: &Ctx,
    paths: &CyclePaths,
    before: Option<&CycleState>,
    state: &CycleState,
    actor: Actor,
    mut events: Vec<NewEvent>,
    now: &str,
) -> Result<Saved> {
    let mut state = redact_state(ctx, state);
    refresh_next_action(ctx, paths, &mut state);
    state_file::save_text(&paths.state, &state.to_json())?;
    if let Some(before) = before.filter(|b| b.status != state.status) {
        events.push(NewEvent::of(actor, EventData::StatusChanged { from: before.status, to: state.status }));
    }
    for event in &mut events {
        ctx.redactor.redact_json(&mut event.data);
        // An issued message is journaled with the hash of the (redacted) text that is sent.
        if event.kind.issues_message()
            && let Some(outbox) = &state.outbox
        {
            event.data["sha256"] = serde_json::Value::from(outbox.sha256.clone());
        }
    }
    let events = journal::append(&paths.journal(), &events, now)?;
    // A sidecar an older forgeloop left open to others, beside a state outside the home (which
    // the home's walk does not reach), is made private once; a private one costs one lstat.
    let _ = tighten::tighten_if_loose(&paths.sidecar());
    Ok(Saved { state, events })
}

/// Locks, loads, applies `change`, and persists. `change` pushes the events it wants
/// journaled; returning an error leaves every file as it was.
pub fn mutate<F>(ctx: &Ctx, paths: &CyclePaths, actor: Actor, change: F) -> Result<Saved>
where
    F: FnOnce(&mut CycleState, &mut Vec<NewEvent>, &str) -> Result<()>,
{
    let _lock = lock(paths)?;
    let before = state_file::load(&paths.state)?;
    let mut state = before.clone();
    let now = ctx.now();
    let mut events = Vec::new();
    change(&mut state, &mut events, &now)?;
    persist(ctx, paths, Some(&before), &state, actor, events, &now)
}

/// Takes the cycle lock, refusing at once with CYCLE_BUSY. A state that does not exist
/// is reported as missing before any lock file is created.
pub fn lock(paths: &CyclePaths) -> Result<FileLock> {
    if !paths.state.exists() {
        return Err(Error::State(state_file::StateFileError::Missing(paths.state.clone())));
    }
    Ok(FileLock::try_acquire(&paths.lock())?)
}
