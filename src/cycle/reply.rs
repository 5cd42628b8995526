//! `forgeloop reply`: classify WebGPT's finished reply, record it (redacted) in the journal,
//! and apply the ask-once rule (design §3 rule 8, §5.3).

use serde::Serialize;
use serde_json::json;

use crate::domain::event::EventKind;
use crate::domain::machine::{self, ReplyEffect};
use crate::domain::pr_ref::{PrRef, parse_pr_ref};
use crate::domain::reply::{Classification, ReplyClass, classify};
use crate::domain::state::{Actor, LastReply, sha256_hex};
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;

use super::context::Ctx;
use super::session::{Saved, mutate};

/// The longest reply text kept in the journal; the rest is summarised by its hash.
const JOURNAL_TEXT_LIMIT: usize = 64 * 1024;

/// A coordinator's correction of the classifier, journaled with its reason.
pub struct Override {
    pub class: ReplyClass,
    pub reason: String,
    pub pr: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ReplyOutcome {
    pub classification: ReplyClass,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    pub overridden: bool,
    pub status: String,
    pub next: crate::domain::next::NextStep,
}

pub fn reply(ctx: &Ctx, paths: &CyclePaths, text: &str, correction: Option<Override>) -> Result<(ReplyOutcome, Saved)> {
    let mut outcome: Option<(Classification, bool)> = None;
    let saved = mutate(ctx, paths, Actor::Agent, |state, events, now| {
        let (classification, overridden) = match &correction {
            None => (classify(text, &ctx.hosts, state.repository.as_deref()), false),
            Some(fix) => (corrected(ctx, fix, state.repository.as_deref())?, true),
        };
        let record = LastReply {
            class: classification.class,
            pr: classification.pr.as_ref().map(PrRef::shorthand),
            reason: classification.reason.clone(),
            sha256: sha256_hex(text.as_bytes()),
            at: now.to_owned(),
            overridden,
        };
        let effect = machine::record_reply(state, record.clone(), now)?;
        let kept: String = text.chars().take(JOURNAL_TEXT_LIMIT).collect();
        events.push(NewEvent::new(
            EventKind::ReplyRecorded,
            Actor::Agent,
            json!({
                "class": record.class,
                "reason": record.reason,
                "pr": record.pr,
                "sha256": record.sha256,
                "overridden": overridden,
                "text": kept,
                "truncated": kept.len() < text.len(),
            }),
        ));
        if effect == ReplyEffect::FollowUp
            && let Some(outbox) = &state.outbox
        {
            events.push(NewEvent::new(EventKind::FollowupIssued, Actor::System, json!({"sha256": outbox.sha256})));
        }
        if effect == ReplyEffect::Blocked {
            events.push(NewEvent::new(
                EventKind::Blocked,
                Actor::System,
                json!({"status": state.status.as_str(), "reason": state.last_error}),
            ));
        }
        outcome = Some((classification, overridden));
        Ok(())
    })?;
    let (classification, overridden) = outcome.ok_or_else(|| Error::Invalid("the reply was not recorded".into()))?;
    let next = crate::domain::next::next_step(&saved.state, &paths.state.display().to_string());
    Ok((
        ReplyOutcome {
            classification: classification.class,
            reason: classification.reason,
            pr: classification.pr.as_ref().map(PrRef::shorthand),
            overridden,
            status: saved.state.status.as_str().to_owned(),
            next,
        },
        saved,
    ))
}

fn corrected(ctx: &Ctx, fix: &Override, bound: Option<&str>) -> Result<Classification> {
    if fix.reason.trim().is_empty() {
        return Err(Error::Invalid("--as needs --reason: say why the classification is wrong".into()));
    }
    let pr = match (&fix.pr, fix.class) {
        (Some(text), ReplyClass::PrFound | ReplyClass::PrWrongRepository) => Some(parse_pr_ref(text, &ctx.hosts)?),
        (None, ReplyClass::PrFound) => {
            return Err(Error::Invalid("--as PR_FOUND needs --pr: name the pull request you found".into()));
        }
        (Some(_), _) => return Err(Error::Invalid("--pr only goes with --as PR_FOUND".into())),
        (None, _) => None,
    };
    if let (ReplyClass::PrFound, Some(pr), Some(bound)) = (fix.class, &pr, bound)
        && !bound.eq_ignore_ascii_case(&pr.repo.full_name())
    {
        return Err(Error::Invalid(format!("{pr} is not in {bound}, the repository this cycle is bound to")));
    }
    Ok(Classification { class: fix.class, pr, reason: format!("overridden by the coordinator: {}", fix.reason.trim()) })
}
