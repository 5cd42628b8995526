//! `forgeloop attest`: what the agent saw in the browser, and a challenge only a reader of the
//! review's commit can answer; `attest --answer` judges the chat's reply against the mirror.

use chrono::{Duration, SecondsFormat};

use crate::domain::challenge::{self, Judged, QUESTIONS, Question};
use crate::domain::event_data::EventData;
use crate::domain::hash::sha256_hex;
use crate::domain::review::{DEFAULT_ATTESTATION_TTL_MINUTES, Route, Seen, Verdict};
use crate::domain::review_machine;
use crate::domain::state::Actor;
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;

use super::super::context::Ctx;
use super::super::session::{Saved, mutate};
use super::{all_candidates, candidates, change_of, load};

/// The longest answer file read: a chat reply, not a document.
pub const MAX_ANSWER_BYTES: u64 = 200_000;

/// What `attest` recorded.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Attested {
    /// The attestation's verdict so far (`pending` until the answer is checked).
    pub verdict: Verdict,
    /// The questions asked.
    pub questions: Vec<Question>,
    /// The challenge to type into the conversation (`None` without a connector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenge: Option<String>,
    /// When the attestation stops being valid.
    pub expires_at: String,
    /// The cycle's status now.
    pub status: crate::domain::status::Status,
}

/// Checks the fields of what was seen: short, printable, and an https conversation URL.
fn checked(seen: Seen) -> Result<Seen> {
    let fields =
        [("--surface", &seen.surface), ("--model", &seen.model), ("--conversation-url", &seen.conversation_url)];
    for (flag, value) in fields.into_iter().chain(seen.mode.as_ref().map(|m| ("--mode", m))) {
        if value.trim().is_empty() || value.chars().count() > 300 || value.chars().any(char::is_control) {
            return Err(Error::Invalid(format!("{flag} must be one line of at most 300 characters")));
        }
    }
    let url = url::Url::parse(seen.conversation_url.trim())
        .map_err(|e| Error::Invalid(format!("--conversation-url is not a URL: {e}")))?;
    if url.scheme() != "https" || url.host_str().is_none() {
        return Err(Error::Invalid("--conversation-url must be the conversation's https URL".into()));
    }
    Ok(Seen { conversation_url: seen.conversation_url.trim().to_owned(), ..seen })
}

/// Records what was seen and issues the challenge (none without a connector: the review goes
/// to the packet). The questions are picked at random among the change's files at the head.
pub fn attest(ctx: &Ctx, paths: &CyclePaths, seen: Seen) -> Result<(Saved, Attested)> {
    let seen = checked(seen)?;
    let (_, review) = load(paths)?;
    let change = change_of(ctx, &review.target)?;
    let pool = candidates(ctx, &change);
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed).map_err(|e| Error::Invalid(format!("no randomness from the operating system: {e}")))?;
    // A question whose answer the redactor would mask could not be read back, and would have
    // the chat quote a secret.
    let usable = |path: &str, line: &str| ctx.redactor.redact(path) == path && ctx.redactor.redact(line) == line;
    let questions = match seen.connector_attached {
        true => challenge::pick(&pool, u64::from_le_bytes(seed), QUESTIONS, &usable),
        false => Vec::new(),
    };
    let text = challenge::render(&review.target.repository, &review.target.head, &questions);
    let minutes = ctx.config.review.attestation_ttl_minutes.unwrap_or(DEFAULT_ATTESTATION_TTL_MINUTES);
    let expires_at =
        (ctx.clock.now() + Duration::minutes(i64::from(minutes))).to_rfc3339_opts(SecondsFormat::Secs, true);
    let saved = mutate(ctx, paths, Actor::Agent, |state, events, now| {
        review_machine::record_attestation(
            state,
            seen.clone(),
            questions.clone(),
            text.clone(),
            expires_at.clone(),
            now,
        )?;
        events.push(NewEvent::of(
            Actor::Agent,
            EventData::AttestationRecorded {
                seen: seen.clone(),
                repository: review.target.repository.clone(),
                commit: review.target.head.clone(),
                questions: questions.clone(),
                expires_at: expires_at.clone(),
                sha256: None,
            },
        ));
        Ok(())
    })?;
    let attestation = saved.state.review.as_ref().and_then(|r| r.attestation.clone());
    let attested = Attested {
        verdict: attestation.as_ref().map_or(Verdict::Pending, |a| a.verdict.clone()),
        questions,
        challenge: saved.state.outbox.as_ref().filter(|o| o.sent_at.is_none()).map(|o| o.text.clone()),
        expires_at,
        status: saved.state.status,
    };
    Ok((saved, attested))
}

/// What `attest --answer` judged.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Answered {
    /// The verdict.
    pub verdict: Verdict,
    /// Each question's judgement (what was given; never what was expected).
    pub judged: Vec<Judged>,
    /// The route `next` takes now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    /// The cycle's status now.
    pub status: crate::domain::status::Status,
}

/// Judges the chat's `reply` to the challenge, read in conversation `from`, against the
/// commit re-read from the mirror.
pub fn answer(ctx: &Ctx, paths: &CyclePaths, reply: &str, from: &str) -> Result<(Saved, Answered)> {
    let (_, review) = load(paths)?;
    let questions = review.attestation.as_ref().map(|a| a.questions.clone()).unwrap_or_default();
    let change = change_of(ctx, &review.target)?;
    let answers = challenge::parse_answers(reply);
    let judged = challenge::judge(&questions, &all_candidates(&change), &answers);
    let passes = challenge::passes(&judged, &answers);
    let from = from.trim().to_owned();
    let saved = mutate(ctx, paths, Actor::Agent, |state, events, now| {
        let verdict = review_machine::judge_attestation(state, judged.clone(), passes, &from, now)?;
        events.push(NewEvent::of(
            Actor::Agent,
            EventData::AttestationJudged {
                verdict: verdict.clone(),
                from: from.clone(),
                judged: judged.clone(),
                answer_sha256: sha256_hex(reply.as_bytes()),
            },
        ));
        if matches!(verdict, Verdict::Valid { .. }) {
            events.push(NewEvent::of(
                Actor::System,
                EventData::ReviewRequested { sha256: String::new(), route: Route::Connector },
            ));
        }
        Ok(())
    })?;
    let review = saved.state.review.as_ref();
    let answered = Answered {
        verdict: review.and_then(|r| r.attestation.as_ref()).map_or(Verdict::Pending, |a| a.verdict.clone()),
        judged,
        route: review.and_then(|r| r.route),
        status: saved.state.status,
    };
    Ok((saved, answered))
}
