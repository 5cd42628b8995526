//! Review cycles (docs/review.md): WebGPT reviews a change someone else wrote. `start` binds
//! the cycle to the change's commits (fetched into the mirror); `attest` proves (or not) that
//! the chat's connector reads that commit; `prepare` makes the packet when it does not; the
//! reply's findings are triaged here. Every step after `start` reads the commits from the
//! mirror only: nothing the chat says is checked against anything but the commit itself.

mod attest;
mod findings;
mod packet;
pub mod shared;

pub use attest::{Answered, Attested, MAX_ANSWER_BYTES, answer, attest};
pub use findings::{MAX_REPLY_BYTES, Replied, fixed, reply, triage};
pub use packet::{Plan, PlannedFile, Prepared, Risk, approve, approve_as, prepare};

use std::path::PathBuf;

use crate::checkout::review_change::{self, Change, Rev, Source};
use crate::checkout::{self, CheckoutError};
use crate::domain::challenge::Candidate;
use crate::domain::event_data::EventData;
use crate::domain::packet::{self as dlp, Changed, EntryKind, MAX_FILE_BYTES};
use crate::domain::pr_ref::{RepoName, parse_pr_ref};
use crate::domain::report::normalize_sha;
use crate::domain::review::{Review, Target};
use crate::domain::review_machine::{self, NewReview};
use crate::domain::state::{Actor, CycleState};
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::context::{Ctx, Engine};
use super::session::{self, redact_state};
use super::start::{Started, create};

/// The longest `--question`: a sentence or two for the reviewer.
pub const MAX_QUESTION_CHARS: usize = 2_000;

/// What `review start` reviews.
#[derive(Debug, Clone)]
pub enum ChangeSpec {
    /// A pull request: its head against its base branch's tip.
    Pr(String),
    /// `BASE..HEAD` of a repository: each a branch name or a 40-hex commit.
    Range {
        /// `owner/repo`.
        repository: String,
        /// `BASE..HEAD`.
        range: String,
    },
}

/// What `review start` needs.
#[derive(Debug, Clone)]
pub struct StartReview {
    /// The state file to create.
    pub state: String,
    /// The change.
    pub change: ChangeSpec,
    /// The person's question for the reviewer.
    pub question: Option<String>,
}

enum End {
    Sha(String),
    Branch(String),
    PrHead(u64, String),
}

impl End {
    fn rev(&self) -> Rev<'_> {
        match self {
            End::Sha(sha) => Rev::Sha(sha),
            End::Branch(branch) => Rev::Branch(branch),
            End::PrHead(number, sha) => Rev::PrHead(*number, sha),
        }
    }

    fn parse(text: &str) -> Result<End> {
        if let Some(sha) = normalize_sha(text) {
            return Ok(End::Sha(sha));
        }
        let bad = text.is_empty()
            || text.starts_with('-')
            || text.contains("..")
            || text
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '~' | '^' | ':' | '?' | '*' | '[' | '\\'));
        if bad {
            return Err(Error::Invalid(format!(
                "{text:?} is neither a branch name nor a 40-hex commit (give the range as BASE..HEAD)"
            )));
        }
        Ok(End::Branch(text.to_owned()))
    }
}

/// Starts a review cycle: the change is fetched into the mirror and bound to its two commits;
/// the cycle waits for the connector's attestation.
pub async fn start(ctx: &Ctx, engine: &Engine, req: StartReview) -> Result<Started> {
    let paths = ctx.cycle(&req.state)?;
    if paths.state.exists() {
        return Err(Error::StateExists(paths.state.clone()));
    }
    let question = req.question.as_deref().map(str::trim).filter(|q| !q.is_empty()).map(str::to_owned);
    if question.as_ref().is_some_and(|q| q.chars().count() > MAX_QUESTION_CHARS) {
        return Err(Error::Invalid(format!("--question is longer than {MAX_QUESTION_CHARS} characters")));
    }
    let (repo, clone_url, base, head, pr, range) = match &req.change {
        ChangeSpec::Pr(text) => {
            let pr = parse_pr_ref(text, &ctx.hosts)?;
            let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
            if !pull.is_open() {
                return Err(Error::Invalid(format!("{} is closed: review an open pull request", pr.shorthand())));
            }
            let base = End::Branch(pull.base_ref.clone());
            let head = End::PrHead(pr.number, pull.head_sha.clone());
            (pull.repository, pull.base_clone_url, base, head, Some(pr.shorthand()), None)
        }
        ChangeSpec::Range { repository, range } => {
            let repo = RepoName::parse(repository).map_err(|e| Error::Invalid(e.to_string()))?;
            let (base, head) = match range.split_once("..") {
                Some((base, head)) if !head.starts_with('.') => (End::parse(base.trim())?, End::parse(head.trim())?),
                _ => return Err(Error::Invalid(format!("--range {range:?} must be BASE..HEAD (two dots)"))),
            };
            let info = engine.github.repository(&repo).await?;
            (info.full_name, info.clone_url, base, head, None, Some(range.trim().to_owned()))
        }
    };
    let job = (ctx.home.mirrors_dir(), repo.clone(), clone_url, engine.token.clone(), engine.github.is_loopback());
    let change = tokio::task::spawn_blocking(move || {
        let (mirrors, repo, url, token, loopback) = job;
        let source = Source {
            mirrors_root: &mirrors,
            repo: &repo,
            clone_url: Some(&url),
            token: token.as_deref(),
            allow_insecure_local: loopback,
        };
        review_change::read(&source, base.rev(), head.rev())
    })
    .await
    .map_err(|e| Error::Invalid(format!("the fetch task failed: {e}")))?
    .map_err(Error::Checkout)?;
    if change.files.is_empty() {
        return Err(Error::Invalid(format!(
            "nothing to review: {}..{} changes no file",
            &change.base[..12],
            &change.head[..12]
        )));
    }
    let target =
        Target { repository: repo.full_name().to_ascii_lowercase(), base: change.base, head: change.head, pr, range };
    let now = ctx.now();
    let state =
        review_machine::start(NewReview { target: target.clone(), question, task_space: paths.task_space() }, &now);
    let mut state = redact_state(ctx, &state);
    session::refresh_next_action(ctx, &paths, &mut state);
    let event = NewEvent::of(
        Actor::Agent,
        EventData::ReviewStarted {
            target,
            question: state.review.as_ref().and_then(|r| r.question.clone()),
            task_space: state.task_space.clone(),
        },
    );
    create(ctx, &paths, &state, &now, vec![event])?;
    Ok(Started { path: paths.state.clone(), state })
}

/// A review cycle's state and its review, read without the lock.
pub(crate) fn load(paths: &CyclePaths) -> Result<(CycleState, Review)> {
    let state = state_file::load(&paths.state)?;
    let review = state.review.clone().ok_or_else(|| {
        Error::Invalid(format!(
            "{} is not a review cycle (start one with `forgeloop review start`)",
            paths.state.display()
        ))
    })?;
    Ok((state, review))
}

/// The change, read again from the mirror only (`start` fetched it): what the chat says is
/// judged against the commit, never against what forgeloop remembers.
pub(crate) fn change_of(ctx: &Ctx, target: &Target) -> Result<Change> {
    let repo = RepoName::parse(&target.repository).map_err(|e| Error::Invalid(e.to_string()))?;
    let mirrors = ctx.home.mirrors_dir();
    let source =
        Source { mirrors_root: &mirrors, repo: &repo, clone_url: None, token: None, allow_insecure_local: false };
    review_change::read(&source, Rev::Sha(&target.base), Rev::Sha(&target.head)).map_err(|e| match e {
        CheckoutError::CommitMissing { sha } => Error::Invalid(format!(
            "commit {sha} is no longer in forgeloop's mirror of {} (was it collected by `forgeloop gc`?): start the review again",
            target.repository
        )),
        e => Error::Checkout(e),
    })
}

/// Whether a changed file is one the packet keeps out (the DLP rules).
pub(crate) fn excluded(
    ctx: &Ctx,
    change: &Change,
    file: &checkout::review_change::ChangedFile,
) -> Option<dlp::Exclusion> {
    let in_change = |p: &str| change.files.iter().any(|f| f.path == p && f.kind == EntryKind::File);
    let changed = Changed { path: &file.path, kind: file.kind, bytes: file.bytes, head: &file.content };
    dlp::exclusion(&changed, &ctx.config.review.exclude, &change.ignores, &in_change)
}

/// The files a challenge may ask about: text files the change adds or modifies at the head,
/// none the packet would keep out (asking for a line of `.env` would have the chat quote it).
pub(crate) fn candidates(ctx: &Ctx, change: &Change) -> Vec<Candidate> {
    change
        .files
        .iter()
        .filter(|f| f.kind == EntryKind::File && f.bytes <= MAX_FILE_BYTES && excluded(ctx, change, f).is_none())
        .filter_map(|f| {
            let text = std::str::from_utf8(&f.content).ok()?;
            Some(Candidate {
                path: f.path.clone(),
                blob: f.blob.clone()?,
                lines: text.lines().map(str::to_owned).collect(),
            })
        })
        .collect()
}

/// Every file of the change at the head as a candidate, for judging answers: the questions
/// were picked from [`candidates`], and a rule changed since then must not turn a right
/// answer wrong.
pub(crate) fn all_candidates(change: &Change) -> Vec<Candidate> {
    change
        .files
        .iter()
        .filter(|f| f.kind == EntryKind::File)
        .filter_map(|f| {
            let lines =
                std::str::from_utf8(&f.content).map(|t| t.lines().map(str::to_owned).collect()).unwrap_or_default();
            Some(Candidate { path: f.path.clone(), blob: f.blob.clone()?, lines })
        })
        .collect()
}

/// `forgeloop review show`: the review as it stands, with the `FIX` list for a local agent.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Shown {
    /// The state file.
    pub state: PathBuf,
    /// The cycle's status.
    pub status: crate::domain::status::Status,
    /// The review.
    pub review: Review,
    /// The `FIX` findings as one request (for a new PR cycle or a local agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_request: Option<String>,
    /// Findings still waiting for a decision.
    pub untriaged: Vec<u32>,
}

/// The review of the cycle at `paths`.
pub fn show(paths: &CyclePaths) -> Result<Shown> {
    let (state, review) = load(paths)?;
    Ok(Shown {
        state: paths.state.clone(),
        status: state.status,
        fix_request: review_machine::fix_request(&review),
        untriaged: review.untriaged().map(|f| f.number).collect(),
        review,
    })
}

/// The implementation request of a PR cycle that fixes the review's `FIX` findings
/// (`forge --request-from-review`): refused until the review is done and has some.
pub fn fix_request_of(ctx: &Ctx, state_arg: &str) -> Result<(String, String)> {
    let paths = ctx.cycle(state_arg)?;
    let (state, review) = load(&paths)?;
    if state.status != crate::domain::status::Status::ReviewDone {
        return Err(Error::Invalid(format!(
            "the review {} is {}: triage every finding first",
            paths.state.display(),
            state.status
        )));
    }
    let request = review_machine::fix_request(&review)
        .ok_or_else(|| Error::Invalid("the review has no finding triaged FIX: nothing to implement".into()))?;
    Ok((request, review.target.repository))
}
