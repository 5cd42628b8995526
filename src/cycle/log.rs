//! `forgeloop log`'s use case: a cycle's journal as written, or the check of its hash chain.

use serde::Serialize;

use crate::domain::word::Word;
use crate::error::Result;
use crate::store::journal::{self, Event};
use crate::store::layout::CyclePaths;

/// The journal's events, and whether its last line was torn (a crash mid-write).
#[derive(Debug, Serialize)]
pub struct Journal {
    /// Every event, oldest first.
    pub events: Vec<Event>,
    /// Whether the last line was cut off mid-write (it is left out of `events`).
    pub torn_tail: bool,
}

/// `log --verify`: the chain holds.
#[derive(Debug, Serialize)]
pub struct Verified {
    /// Always `JOURNAL_OK` (a broken chain is an error instead).
    pub status: Word,
    /// How many events the chain holds.
    pub events: usize,
    /// Whether the last line was cut off mid-write (a crash, not tampering).
    pub torn_tail: bool,
}

/// Every event of the cycle's journal, as written.
pub fn read(paths: &CyclePaths) -> Result<Journal> {
    let contents = journal::read(&paths.journal())?;
    Ok(Journal { events: contents.events, torn_tail: contents.torn_tail })
}

/// Every line's hash checked against the one before; an edited or missing line is an error
/// (`JOURNAL_DAMAGED`).
pub fn verify(paths: &CyclePaths) -> Result<Verified> {
    let contents = journal::verify(&paths.journal())?;
    Ok(Verified { status: Word::JournalOk, events: contents.events.len(), torn_tail: contents.torn_tail })
}
