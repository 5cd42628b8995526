//! The review cycle's tools (docs/review.md): their inputs and bodies, thin over
//! `cycle::review`. The person's yes to a packet is not among them (a terminal or the control
//! room only); triage through them is the agent's, with the person's words.

use rmcp::schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::cycle::Ctx;
use crate::cycle::review::{self, MAX_ANSWER_BYTES, MAX_REPLY_BYTES};
use crate::domain::review::{Decision, Seen};
use crate::domain::state::Actor;
use crate::error::Error;

use super::tools::{Failure, Outcome, known_cycle, paths, to_value};

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewStartInput {
    /// The new cycle's name: a bare name (letters, digits, dashes), created in the cycles directory
    pub(crate) state: String,
    /// The pull request: https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N
    #[serde(default)]
    pub(crate) pr: Option<String>,
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[serde(default)]
    pub(crate) repository: Option<String>,
    /// BASE..HEAD of repository: branch names or 40-hex commits
    #[serde(default)]
    pub(crate) range: Option<String>,
    /// What the person most wants the reviewer to look at, in their words
    #[serde(default)]
    pub(crate) question: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct AttestInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// The model picker's text, as shown in the browser
    pub(crate) model: String,
    /// The reasoning mode shown, if the surface shows one
    #[serde(default)]
    pub(crate) mode: Option<String>,
    /// Where the chat runs (default chatgpt-web)
    #[serde(default)]
    pub(crate) surface: Option<String>,
    /// Whether the GitHub connector shows as attached to the conversation
    pub(crate) connector_attached: bool,
    /// The task's conversation: https://chatgpt.com/g/g-p-ID/c/ID (or /c/ID)
    pub(crate) conversation_url: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct AttestAnswerInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// The chat's whole reply to the challenge, as copied
    pub(crate) answer: String,
    /// The task's conversation: https://chatgpt.com/g/g-p-ID/c/ID (or /c/ID)
    pub(crate) conversation_url: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct PrepareInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// Say what the packet would hold (each file in or out and why, bytes, tokens, risks) and write nothing
    #[serde(default)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewReplyInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// WebGPT's whole finished reply, as copied from the chat
    pub(crate) text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct TriageInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// The finding's number
    pub(crate) finding: u32,
    /// The person's decision: FIX, DEFER, DISMISS or QUESTION
    pub(crate) decision: String,
    /// The person's words; for QUESTION, the question to ask the reviewer
    #[serde(default)]
    pub(crate) note: Option<String>,
}

fn review_paths(ctx: &Ctx, state: &str) -> Result<crate::cycle::files::CyclePaths, Failure> {
    paths(known_cycle(ctx, Some(state.to_owned()), None)?)
}

/// `forge_review_start`'s change, checked before any network call.
pub(crate) fn change(input: &ReviewStartInput) -> Result<review::ChangeSpec, Failure> {
    let given = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    match (given(&input.pr), given(&input.repository), given(&input.range)) {
        (Some(pr), None, None) => Ok(review::ChangeSpec::Pr(pr)),
        (None, Some(repository), Some(range)) => Ok(review::ChangeSpec::Range { repository, range }),
        _ => Err(Failure::from(Error::Invalid("give either pr, or repository with range".into()))),
    }
}

/// `forge_attest`: what the browser shows, and the challenge to send.
pub(crate) fn attest(ctx: &Ctx, input: AttestInput) -> Outcome {
    let paths = review_paths(ctx, &input.state)?;
    let seen = Seen {
        surface: input.surface.unwrap_or_else(|| "chatgpt-web".into()),
        model: input.model,
        mode: input.mode,
        connector_attached: input.connector_attached,
        conversation_url: input.conversation_url,
    };
    to_value(&review::attest(ctx, &paths, seen)?.1)
}

/// `forge_attest_answer`: the challenge's answer judged against the commit.
pub(crate) fn answer(ctx: &Ctx, input: &AttestAnswerInput) -> Outcome {
    if input.answer.len() as u64 > MAX_ANSWER_BYTES {
        return Err(Failure::from(Error::Invalid(format!("the answer is larger than {MAX_ANSWER_BYTES} bytes"))));
    }
    let paths = review_paths(ctx, &input.state)?;
    to_value(&review::answer(ctx, &paths, &input.answer, &input.conversation_url)?.1)
}

/// `forge_review_prepare`: the dry run, or the packet.
pub(crate) fn prepare(ctx: &Ctx, input: &PrepareInput) -> Outcome {
    let paths = review_paths(ctx, &input.state)?;
    to_value(&review::prepare(ctx, &paths, input.dry_run)?.1)
}

/// `forge_review_reply`: the reviewer's findings recorded.
pub(crate) fn reply(ctx: &Ctx, input: &ReviewReplyInput) -> Outcome {
    if input.text.len() as u64 > MAX_REPLY_BYTES {
        return Err(Failure::from(Error::Invalid(format!("the reply is larger than {MAX_REPLY_BYTES} bytes"))));
    }
    let paths = review_paths(ctx, &input.state)?;
    to_value(&review::reply(ctx, &paths, &input.text)?.1)
}

/// `forge_triage`: a finding decided, as the agent relaying the person's decision.
pub(crate) fn triage(ctx: &Ctx, input: &TriageInput) -> Outcome {
    let decision = Decision::parse(&input.decision).ok_or_else(|| {
        Failure::from(Error::Invalid(format!(
            "decision must be FIX, DEFER, DISMISS or QUESTION, not {:?}",
            input.decision
        )))
    })?;
    let paths = review_paths(ctx, &input.state)?;
    review::triage(ctx, &paths, input.finding, decision, input.note.as_deref(), Actor::Agent)?;
    to_value(&review::show(&paths)?)
}

/// `forge_review`: the review as it stands.
pub(crate) fn show(ctx: &Ctx, state: &str) -> Outcome {
    let paths = review_paths(ctx, state)?;
    let shown: Value = to_value(&review::show(&paths)?)?;
    Ok(shown)
}
