//! `forgeloop reply`: classify WebGPT's finished reply, record it (redacted) in the journal,
//! and apply the ask-once rule (design §3 rule 8, §5.3).

use serde::Serialize;

use crate::domain::event_data::{EventData, Message};
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

/// Replies larger than this are refused rather than read.
pub const MAX_REPLY_BYTES: u64 = 4 * 1024 * 1024;

/// A coordinator's correction of the classifier, journaled with its reason.
pub struct Override {
    /// The class the coordinator says is right (`--as`).
    pub class: ReplyClass,
    /// Why it is right (`--reason`), journaled.
    pub reason: String,
    /// The PR, with `PR_FOUND` (`--pr`).
    pub pr: Option<String>,
}

impl Override {
    /// The coordinator's correction from its parts as a front end takes them (`--as CLASS
    /// --reason TEXT [--pr REF]`): `None` without a class; a reason or PR without one, or an
    /// unknown class, is refused. The rest is checked against the cycle by [`reply`].
    pub fn from_parts(class: Option<&str>, reason: Option<String>, pr: Option<String>) -> Result<Option<Override>> {
        let Some(class) = class else {
            if reason.is_some() || pr.is_some() {
                return Err(Error::Invalid(
                    "a reason or PR overrides the classification only with a class (--as)".into(),
                ));
            }
            return Ok(None);
        };
        let class = ReplyClass::parse(class).ok_or_else(|| Error::Invalid(format!("unknown reply class {class:?}")))?;
        Ok(Some(Override { class, reason: reason.unwrap_or_default(), pr }))
    }
}

/// The output of `reply`. `status` is the classification (`PR_FOUND`, `PR_UNCHANGED`, …; also
/// in `classification`), `cycle_status` the cycle's status afterwards.
#[derive(Debug, Serialize)]
pub struct ReplyOutcome {
    /// The classification's word (the same as `classification`).
    pub status: crate::domain::word::Word,
    /// What the reply was classified as.
    pub classification: ReplyClass,
    /// Why: the classifier's reason, or the override's.
    pub reason: String,
    /// The PR the reply points at, as `OWNER/REPO#N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// Whether the coordinator's `--as` replaced the classifier's verdict.
    pub overridden: bool,
    /// What GitHub said of the PR's head when the reply pointed at the PR whose last run
    /// failed: `unchanged: …`, `changed: …` or `could not check: …`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_check: Option<String>,
    /// The cycle's status after the reply was recorded.
    pub cycle_status: String,
    /// The one next step for the coordinator.
    pub next: crate::domain::next::NextStep,
}

/// The head of a PR on GitHub: its SHA and branch, or why it could not be read (no token,
/// offline). Given by the front end, which owns the network.
pub type HeadLookup<'a> = &'a dyn Fn(&PrRef) -> std::result::Result<PullHead, String>;

/// A PR's current head on GitHub, as the head lookup reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullHead {
    /// The head commit (40 hex digits).
    pub sha: String,
    /// The head branch.
    pub branch: String,
}

/// The head of `pr` on GitHub, as a front end's head lookup reports it.
pub async fn pull_head(engine: &super::context::Engine, pr: &PrRef) -> Result<PullHead> {
    let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
    Ok(PullHead { sha: pull.head_sha, branch: pull.head_ref })
}

/// What the head lookup found, decided before the cycle is locked (no network under the lock).
enum HeadSeen {
    NotAsked,
    Unchanged { pr: String, head: PullHead },
    Changed(String),
    Unknown(String),
}

/// Classifies `text` (or takes `correction`), records it and applies the ask-once rule.
/// With `lookup`, a reply naming the PR whose last run failed is checked against its head
/// first: an unchanged head makes it `PR_UNCHANGED`.
pub fn reply(
    ctx: &Ctx,
    paths: &CyclePaths,
    text: &str,
    correction: Option<Override>,
    lookup: Option<HeadLookup<'_>>,
) -> Result<(ReplyOutcome, Saved)> {
    let seen = match lookup {
        Some(lookup) => look_at_head(ctx, paths, text, correction.as_ref(), lookup)?,
        None => HeadSeen::NotAsked,
    };
    let mut outcome: Option<(Classification, bool)> = None;
    let saved = mutate(ctx, paths, Actor::Agent, |state, events, now| {
        let (mut classification, overridden) = match &correction {
            None => (classify(text, &ctx.hosts, state.repository.as_deref()), false),
            Some(fix) => (corrected(ctx, fix, state.repository.as_deref())?, true),
        };
        let unchanged = match &seen {
            // Still the same failed head under the lock (another process may have run it since).
            HeadSeen::Unchanged { pr, head }
                if classification.class == ReplyClass::PrFound
                    && crate::domain::next::recheck_target_after(state, pr)
                        .is_some_and(|tested| tested.eq_ignore_ascii_case(&head.sha)) =>
            {
                classification.class = ReplyClass::PrUnchanged;
                classification.reason = format!(
                    "{} (its head is still {}, the commit whose run failed)",
                    classification.reason,
                    head.sha.get(..12).unwrap_or(&head.sha)
                );
                Some(head.clone())
            }
            _ => None,
        };
        let record = LastReply {
            class: classification.class,
            pr: classification.pr.as_ref().map(PrRef::shorthand),
            reason: classification.reason.clone(),
            sha256: sha256_hex(text.as_bytes()),
            at: now.to_owned(),
            overridden,
            contradiction: classification.contradiction.as_deref().map(|t| ctx.redactor.redact(t).into_owned()),
        };
        let effect = match &unchanged {
            Some(head) => machine::record_unchanged_reply(state, record.clone(), &head.sha, Some(&head.branch), now)?,
            None => machine::record_reply(state, record.clone(), now)?,
        };
        let kept: String = text.chars().take(JOURNAL_TEXT_LIMIT).collect();
        let truncated = kept.len() < text.len();
        events.push(NewEvent::of(
            Actor::Agent,
            EventData::ReplyRecorded {
                class: record.class,
                reason: record.reason.clone(),
                pr: record.pr.clone(),
                sha256: record.sha256.clone(),
                overridden,
                text: kept,
                truncated,
            },
        ));
        if let Some(head) = &unchanged {
            events.push(NewEvent::of(
                Actor::System,
                EventData::PrUnchanged {
                    via: "reply".into(),
                    pr: record.pr.clone().unwrap_or_default(),
                    head_sha: head.sha.clone(),
                    branch: Some(head.branch.clone()),
                    tested_in: None,
                    tested: None,
                },
            ));
        }
        if effect == ReplyEffect::FollowUp
            && let Some(outbox) = &state.outbox
        {
            events.push(NewEvent::of(Actor::System, EventData::FollowupIssued(Message::of(outbox))));
        }
        if effect == ReplyEffect::Blocked {
            events.push(NewEvent::of(
                Actor::System,
                EventData::Blocked { status: state.status, reason: state.last_error.clone() },
            ));
        }
        outcome = Some((classification, overridden));
        Ok(())
    })?;
    let (classification, overridden) = outcome.ok_or_else(|| Error::Invalid("the reply was not recorded".into()))?;
    let next = crate::domain::next::next_step(&saved.state, &paths.state.display().to_string());
    let head_check = match seen {
        HeadSeen::NotAsked => None,
        HeadSeen::Unchanged { head, .. } => Some(format!("unchanged: {}", head.sha.get(..12).unwrap_or(&head.sha))),
        HeadSeen::Changed(text) => Some(text),
        HeadSeen::Unknown(why) => Some(format!("could not check: {why}")),
    };
    Ok((
        ReplyOutcome {
            status: crate::domain::word::Word::Reply(classification.class),
            classification: classification.class,
            reason: classification.reason,
            pr: classification.pr.as_ref().map(PrRef::shorthand),
            overridden,
            head_check,
            cycle_status: saved.state.status.as_str().to_owned(),
            next,
        },
        saved,
    ))
}

/// Classifies the reply against the state as it is now (unlocked) and, when it points at the
/// PR whose last run failed, asks GitHub for that PR's head.
fn look_at_head(
    ctx: &Ctx,
    paths: &CyclePaths,
    text: &str,
    correction: Option<&Override>,
    lookup: HeadLookup<'_>,
) -> Result<HeadSeen> {
    let state = crate::store::state_file::load(&paths.state)?;
    let classification = match correction {
        None => classify(text, &ctx.hosts, state.repository.as_deref()),
        Some(fix) => match corrected(ctx, fix, state.repository.as_deref()) {
            Ok(classification) => classification,
            // The locked pass reports the mistake.
            Err(_) => return Ok(HeadSeen::NotAsked),
        },
    };
    let Some(pr) = classification.pr.filter(|_| classification.class == ReplyClass::PrFound) else {
        return Ok(HeadSeen::NotAsked);
    };
    let Some(tested) = crate::domain::next::recheck_target_after(&state, &pr.shorthand()) else {
        return Ok(HeadSeen::NotAsked);
    };
    Ok(match lookup(&pr) {
        Ok(head) if head.sha.eq_ignore_ascii_case(&tested) => HeadSeen::Unchanged { pr: pr.shorthand(), head },
        Ok(head) => HeadSeen::Changed(format!(
            "changed: {} (last tested {})",
            head.sha.get(..12).unwrap_or(&head.sha),
            tested.get(..12).unwrap_or(&tested)
        )),
        Err(why) => HeadSeen::Unknown(why),
    })
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
        (_, ReplyClass::PrUnchanged) => {
            return Err(Error::Invalid(
                "PR_UNCHANGED is decided by forgeloop from the PR's head on GitHub; use --as PR_FOUND --pr …".into(),
            ));
        }
        (Some(_), _) => return Err(Error::Invalid("--pr only goes with --as PR_FOUND".into())),
        (None, _) => None,
    };
    if let (ReplyClass::PrFound, Some(pr), Some(bound)) = (fix.class, &pr, bound)
        && !bound.eq_ignore_ascii_case(&pr.repo.full_name())
    {
        return Err(Error::Invalid(format!("{pr} is not in {bound}, the repository this cycle is bound to")));
    }
    Ok(Classification {
        class: fix.class,
        pr,
        reason: format!("overridden by the coordinator: {}", fix.reason.trim()),
        contradiction: (fix.class == ReplyClass::TestsContradict).then(|| fix.reason.trim().to_owned()),
    })
}
