//! Review cycles' records (docs/review.md): WebGPT as an advisory critic of a change someone
//! else wrote. The local side keeps the authority: the chat's reading of the commit is proven by
//! a challenge before its connector is trusted, the packet that replaces the connector is bound
//! to the commit, and every finding is decided here, never by the model. The transitions are in
//! `review_machine`, `next`'s part in `review_step`.
//!
//! A review cycle is a `CycleState` whose `review` is set; it shares the state file, lock,
//! journal, outbox and control room with PR cycles and has its own statuses.

use serde::{Deserialize, Serialize};

use super::actor::Actor;
use super::challenge::{Judged, Question};
use super::findings::{Severity, Unparsed};

/// How long an attestation stays valid without `[review] attestation_ttl_minutes`.
pub const DEFAULT_ATTESTATION_TTL_MINUTES: u32 = 60;

/// The change a review is about, bound to commits: whatever the chat says is about these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// `owner/repo`, lowercase.
    pub repository: String,
    /// The base commit (40 hex).
    pub base: String,
    /// The head commit (40 hex): the commit reviewed.
    pub head: String,
    /// The PR, when the review is of one (`owner/repo#N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// How the range was given (`main..feature`), for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
}

/// How the chat reads the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Route {
    /// Through its GitHub connector, proven by a passed challenge.
    Connector,
    /// From the review packet the agent uploads into the chat.
    LocalBundle,
}

impl Route {
    /// The name `next` and the journal use.
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Connector => "CONNECTOR",
            Route::LocalBundle => "LOCAL_BUNDLE",
        }
    }
}

/// What the agent saw in the browser (`forgeloop attest`): claims, until the challenge passes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// Where the chat runs: `chatgpt-web`, `chatgpt-desktop`, …
    pub surface: String,
    /// The model picker's text, as shown.
    pub model: String,
    /// The reasoning mode shown, if the surface shows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Whether the GitHub connector showed as attached to the conversation.
    pub connector_attached: bool,
    /// The conversation's URL.
    pub conversation_url: String,
}

/// Whether an attestation holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The challenge was issued; no answer was checked yet.
    Pending,
    /// Every answer matched the commit read from the mirror.
    Valid {
        /// When it was judged.
        at: String,
    },
    /// The connector is absent, an answer was wrong, or the answer came from elsewhere.
    Invalid {
        /// When it was judged.
        at: String,
        /// Why, in words (never the expected answers).
        why: String,
    },
}

/// An attestation: what was seen, the challenge bound to repository and commit, and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// What the agent saw.
    pub seen: Seen,
    /// The repository the challenge is about.
    pub repository: String,
    /// The commit the challenge is about (the review's head).
    pub commit: String,
    /// The questions asked (the answers are never stored: they are re-read from the mirror).
    pub questions: Vec<Question>,
    /// When it was recorded.
    pub recorded_at: String,
    /// When it stops being valid (RFC 3339, UTC).
    pub expires_at: String,
    /// The judgement.
    pub verdict: Verdict,
    /// Each question's judgement, once answered (without the expected answers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<Judged>,
}

impl Attestation {
    /// Why this attestation does not hold for `conversation`, `mode`, `repository`, `commit` at
    /// `now`; `None` when it does. RFC 3339 UTC times of one format compare as text.
    pub fn invalid_for(&self, conversation: &str, mode: Option<&str>, target: &Target, now: &str) -> Option<String> {
        if let Verdict::Invalid { why, .. } = &self.verdict {
            return Some(why.clone());
        }
        if self.verdict == Verdict::Pending {
            return Some("its challenge is not answered yet".into());
        }
        if self.seen.conversation_url != conversation {
            return Some(format!("it was made in another conversation ({})", self.seen.conversation_url));
        }
        if self.seen.mode.as_deref() != mode {
            return Some("it was made in another reasoning mode".into());
        }
        if self.repository != target.repository || self.commit != target.head {
            return Some(format!("it is about {}@{}, not this commit", self.repository, short(&self.commit)));
        }
        if now >= self.expires_at.as_str() {
            return Some(format!("it expired at {}", self.expires_at));
        }
        None
    }
}

/// The packet made for the chat when its connector is not proven (the manifest is a file; the
/// state keeps what people and `next` need).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// The packet file (absolute path) the agent uploads.
    pub path: String,
    /// The manifest file beside it.
    pub manifest: String,
    /// The sha256 of the packet file.
    pub sha256: String,
    /// Files in the packet.
    pub files: u32,
    /// Its size in bytes.
    pub bytes: u64,
    /// An estimate of its tokens (bytes / 4).
    pub tokens: u64,
    /// Risks found: secrets masked, files excluded, binary or generated files, paths outside the change.
    pub risks: u32,
    /// The person must say yes before it is sent: the first packet for the repository, or risks.
    pub needs_approval: bool,
    /// Who said yes, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<Approval>,
    /// When it was made.
    pub prepared_at: String,
}

/// A person's yes to a packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// Who: a person (`human`), or the demo's stand-in for one (`system`).
    pub by: Actor,
    /// When.
    pub at: String,
}

/// A decision on a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// It is right and will be fixed (by a new PR cycle or a local agent).
    Fix,
    /// It is right but not now.
    Defer,
    /// It is wrong or not worth it.
    Dismiss,
    /// Ask the reviewer: the note becomes the next message to the chat.
    Question,
}

impl Decision {
    /// Every decision.
    pub const ALL: [Decision; 4] = [Decision::Fix, Decision::Defer, Decision::Dismiss, Decision::Question];

    /// The name the CLI takes and the journal writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Fix => "FIX",
            Decision::Defer => "DEFER",
            Decision::Dismiss => "DISMISS",
            Decision::Question => "QUESTION",
        }
    }

    /// Reads a decision, in any case.
    pub fn parse(word: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.as_str().eq_ignore_ascii_case(word.trim()))
    }
}

/// A finding's decision, with who made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triage {
    /// The decision.
    pub decision: Decision,
    /// The person's words (a `QUESTION`'s question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Who decided.
    pub by: Actor,
    /// When.
    pub at: String,
    /// A `QUESTION` that went to the chat.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asked: bool,
}

/// The tested run that fixed a `FIX` finding: the only way a finding is called fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fixed {
    /// The PR cycle's state file.
    pub cycle: String,
    /// Its PR.
    pub pr: String,
    /// The head that passed.
    pub head_sha: String,
    /// When it was recorded.
    pub at: String,
}

/// One finding of the review, with its decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// forgeloop's number (1, 2, …, across replies).
    pub number: u32,
    /// How serious the reviewer says it is.
    pub severity: Severity,
    /// The file it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What the reviewer says.
    pub text: String,
    /// The decision, once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage: Option<Triage>,
    /// The passing run that fixed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<Fixed>,
}

impl Finding {
    /// Where it points, `path:line`, `path` or `—`.
    pub fn location(&self) -> String {
        match (&self.path, self.line) {
            (Some(p), Some(l)) => format!("{p}:{l}"),
            (Some(p), None) => p.clone(),
            _ => "—".into(),
        }
    }
}

/// A review cycle's own record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The change.
    pub target: Target,
    /// The person's question for the reviewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// How the chat reads the change, once decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    /// The last attestation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation: Option<Attestation>,
    /// The last packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<Packet>,
    /// Every finding, in order.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// What replies held that was not a finding, named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unparsed: Vec<Unparsed>,
    /// Replies recorded.
    #[serde(default)]
    pub replies: u32,
}

impl Review {
    /// Findings still waiting for a decision.
    pub fn untriaged(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.triage.is_none())
    }

    /// The `FIX` findings: the list for a local agent, or a new PR cycle's request.
    pub fn fixes(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.triage.as_ref().is_some_and(|t| t.decision == Decision::Fix))
    }
}

/// `base..head` in words, with the PR when there is one.
pub fn describe(target: &Target) -> String {
    let range = format!("{}..{}", short(&target.base), short(&target.head));
    match &target.pr {
        Some(pr) => format!("{pr} ({range})"),
        None => range,
    }
}

pub(crate) fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
