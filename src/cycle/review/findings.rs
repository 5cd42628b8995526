//! The reviewer's reply and the person's decisions: `review reply` parses the findings (what it
//! cannot parse is kept and named), `triage` decides each, `review fixed` records the passing
//! run of a PR cycle that fixed a `FIX` finding — the only way a finding is called fixed.

use crate::domain::event_data::EventData;
use crate::domain::findings::parse_findings;
use crate::domain::hash::sha256_hex;
use crate::domain::report::TestStatus;
use crate::domain::review::{Decision, Fixed, Route};
use crate::domain::review_machine;
use crate::domain::state::{Actor, OutboxKind};
use crate::domain::status::Status;
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::super::context::Ctx;
use super::super::session::{Saved, mutate};

/// The longest reply file read.
pub const MAX_REPLY_BYTES: u64 = 400_000;

/// What `review reply` recorded.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Replied {
    /// Findings added.
    pub added: usize,
    /// Parts of the reply that are not findings, with why.
    pub unparsed: Vec<crate::domain::findings::Unparsed>,
    /// The reply said `NO FINDINGS`.
    pub no_findings: bool,
    /// The cycle's status now.
    pub status: Status,
}

fn requested(state: &crate::domain::state::CycleState, events: &mut Vec<NewEvent>) {
    let pending = state.outbox.as_ref().is_some_and(|o| o.kind == OutboxKind::Review && o.sent_at.is_none());
    if pending {
        let route = state.review.as_ref().and_then(|r| r.route).unwrap_or(Route::LocalBundle);
        events.push(NewEvent::of(Actor::System, EventData::ReviewRequested { sha256: String::new(), route }));
    }
}

/// Records the reviewer's reply: its findings wait for triage.
pub fn reply(ctx: &Ctx, paths: &CyclePaths, text: &str) -> Result<(Saved, Replied)> {
    let parsed = parse_findings(text);
    let unparsed = parsed.unparsed.clone();
    let no_findings = parsed.no_findings;
    let mut added = 0;
    let saved = mutate(ctx, paths, Actor::Agent, |state, events, now| {
        added = review_machine::record_findings(state, parsed, now)?;
        events.push(NewEvent::of(
            Actor::Agent,
            EventData::FindingsRecorded {
                reply_sha256: sha256_hex(text.as_bytes()),
                added,
                unparsed: unparsed.len(),
                no_findings,
            },
        ));
        requested(state, events);
        Ok(())
    })?;
    let status = saved.state.status;
    Ok((saved, Replied { added, unparsed, no_findings, status }))
}

/// Decides finding `number`, journaled with who decided.
pub fn triage(
    ctx: &Ctx,
    paths: &CyclePaths,
    number: u32,
    decision: Decision,
    note: Option<&str>,
    by: Actor,
) -> Result<Saved> {
    mutate(ctx, paths, by, |state, events, now| {
        review_machine::triage(state, number, decision, note, by, now)?;
        let note = note.map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned);
        events.push(NewEvent::of(by, EventData::FindingTriaged { finding: number, decision, note }));
        requested(state, events);
        Ok(())
    })
}

/// Records that `number` (triaged `FIX`) was fixed by the PR cycle at `by_cycle`: refused
/// unless that cycle's last run passed, on the review's repository.
pub fn fixed(ctx: &Ctx, paths: &CyclePaths, number: u32, by_cycle: &str) -> Result<Saved> {
    let fixer_paths = ctx.cycle(by_cycle)?;
    let fixer = state_file::load(&fixer_paths.state)?;
    let (_, review) = super::load(paths)?;
    let last = fixer.history.last();
    let passed = last.filter(|run| run.status == TestStatus::Passed);
    let (Some(run), true) = (passed, matches!(fixer.status, Status::ReadyToMerge | Status::NeedsReview)) else {
        return Err(Error::Invalid(format!(
            "{} has no passing run: a finding is called fixed only by a tested run that says so",
            fixer_paths.state.display()
        )));
    };
    let repository = fixer.effective_repository().unwrap_or_default();
    if !repository.eq_ignore_ascii_case(&review.target.repository) {
        return Err(Error::Invalid(format!(
            "{} tests {repository}, not the reviewed {}",
            fixer_paths.state.display(),
            review.target.repository
        )));
    }
    let fixed = Fixed {
        cycle: fixer_paths.state.display().to_string(),
        pr: run.pr.clone(),
        head_sha: run.head_sha.clone(),
        at: String::new(),
    };
    mutate(ctx, paths, Actor::Agent, |state, events, now| {
        let fixed = Fixed { at: now.to_owned(), ..fixed.clone() };
        review_machine::mark_fixed(state, number, fixed.clone(), now)?;
        events.push(NewEvent::of(Actor::Agent, EventData::FindingFixed { finding: number, fixed }));
        Ok(())
    })
}
