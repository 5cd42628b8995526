//! `forgeloop commands`: corrects a cycle's stored commands between runs (a wrong network
//! setting, a missing setup step); the next run uses them. Journaled with both hashes and what
//! the change widens. A change that widens the sandbox is the person's: the front end asks
//! them on a terminal and says so with `widening_confirmed`.

use crate::domain::commands::CommandsProfile;
use crate::domain::event_data::EventData;
use crate::domain::machine;
use crate::domain::state::Actor;
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::context::Ctx;
use super::session::{Saved, mutate};

/// What the new commands would widen against the stored ones (empty: nothing).
pub fn widening(paths: &CyclePaths, new: &CommandsProfile) -> Result<Vec<String>> {
    let state = state_file::load(&paths.state)?;
    Ok(state.commands.as_ref().map(|old| old.widening(new)).unwrap_or_default())
}

/// `commands` went through [`super::commands::accept`] (`commands::load` does).
pub fn replace(
    ctx: &Ctx,
    paths: &CyclePaths,
    commands: CommandsProfile,
    by: Actor,
    widening_confirmed: bool,
) -> Result<Saved> {
    mutate(ctx, paths, by, |state, events, now| {
        // Checked again under the lock: the stored commands may have changed since the person saw them.
        let widened = state.commands.as_ref().map(|old| old.widening(&commands)).unwrap_or_default();
        let person_agreed = widening_confirmed && by == Actor::Human;
        if !widened.is_empty() && !person_agreed {
            return Err(Error::Widening(widened.join(", ")));
        }
        let after = commands.sha256();
        let before = machine::replace_commands(state, commands.clone(), now)?;
        if before.as_deref() == Some(after.as_str()) {
            return Err(Error::Invalid("the commands are the ones stored already; nothing changed".into()));
        }
        events.push(NewEvent::of(
            by,
            EventData::CommandsChanged { before_sha256: before, after_sha256: after, widened: widened.clone() },
        ));
        // The failure handoff still queued reports a run of the old commands: moot now.
        let why = "the commands changed after the run it reports: the next run, with the new commands, decides what WebGPT is told";
        events.extend(super::outbox::withdraw_moot_handoff(state, why, by, now));
        Ok(())
    })
}
