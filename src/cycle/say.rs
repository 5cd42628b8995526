//! `forgeloop say` and the control room's `m`: a person's own words to WebGPT — review
//! feedback, a scope breach, a clarification — put in the outbox, journaled with who wrote
//! them and their text (redacted like every outgoing text), not an iteration. `next` sends them
//! before anything else: a message already waiting is sent after them, as one message.

use crate::domain::event_data::EventData;
use crate::domain::machine::{self, Said};
use crate::domain::state::{Actor, OutboxKind};
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;

use super::context::Ctx;
use super::session::{Saved, mutate};

/// The longest message accepted: a chat message, not a document.
pub const MAX_MESSAGE_CHARS: usize = 20_000;

/// `by` is the person, or the agent relaying the person's words (the runbook's rule).
pub fn say(ctx: &Ctx, paths: &CyclePaths, words: &str, by: Actor) -> Result<Saved> {
    if words.chars().count() > MAX_MESSAGE_CHARS {
        return Err(Error::Invalid(format!("the message is longer than {MAX_MESSAGE_CHARS} characters")));
    }
    mutate(ctx, paths, by, |state, events, now| {
        let said = machine::say(state, words, now)?;
        let before = match said {
            Said::Alone => None,
            Said::BeforePending(kind) => Some(kind_name(kind).to_owned()),
        };
        events.push(NewEvent::of(by, EventData::MessageWritten { text: words.trim().to_owned(), before }));
        Ok(())
    })
}

fn kind_name(kind: OutboxKind) -> &'static str {
    match kind {
        OutboxKind::Prompt => "prompt",
        OutboxKind::Handoff => "handoff",
        OutboxKind::Followup => "follow-up",
        OutboxKind::Message => "message",
        OutboxKind::Challenge => "challenge",
        OutboxKind::Review => "review request",
    }
}
