//! `status --pr` and the MCP `webgpt_pr_status` tool: what the reference tool printed plus
//! open/closed/merged, draft, base ref, head repository and the head SHA's check runs.

use serde::Serialize;

use crate::domain::pr_ref::PrRef;
use crate::error::Result;
use crate::github::CheckSummary;

use super::context::Engine;

/// One pull request as forgeloop sees it; the field order is the printed order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrStatus {
    /// The base repository, `OWNER/REPO` as GitHub spells it.
    pub repository: String,
    /// The PR number.
    pub number: u64,
    /// The PR's title.
    pub title: String,
    /// The PR's page on GitHub.
    pub html_url: String,
    /// `open`, `closed` or `merged`.
    pub state: &'static str,
    /// Whether it was merged (a merged PR's `state` is `merged`).
    pub merged: bool,
    /// Whether it is marked as a draft.
    pub draft: bool,
    /// The branch the PR would merge into.
    pub base_ref: String,
    /// The branch the PR comes from.
    pub head_ref: String,
    /// The commit a test would test (40 hex digits).
    pub head_sha: String,
    /// `None` when the fork the PR came from was deleted.
    pub head_repository: Option<String>,
    /// The head commit's check runs, counted.
    pub checks: Checks,
}

/// Check runs of the head SHA, counted by outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// All check runs on the head commit.
    pub total: u64,
    /// Completed with `success`.
    pub success: u64,
    /// Failed, timed out, cancelled, or needing action.
    pub failure: u64,
    /// Not completed yet.
    pub pending: u64,
    /// Neutral, skipped, stale or anything else.
    pub other: u64,
}

impl From<CheckSummary> for Checks {
    fn from(c: CheckSummary) -> Checks {
        Checks { total: c.total, success: c.success, failure: c.failure, pending: c.pending, other: c.other }
    }
}

/// Two GETs: the pull request, then the check runs of its head SHA.
pub async fn pr_status(engine: &Engine, pr: &PrRef) -> Result<PrStatus> {
    let github = &engine.github;
    let pull = github.pull_request(&pr.repo, pr.number).await?;
    let checks = github.check_runs(&pull.repository, &pull.head_sha).await?;
    let state = if pull.merged {
        "merged"
    } else if pull.is_open() {
        "open"
    } else {
        "closed"
    };
    Ok(PrStatus {
        repository: pull.repository.full_name(),
        number: pull.number,
        title: pull.title,
        html_url: pull.html_url,
        state,
        merged: pull.merged,
        draft: pull.draft,
        base_ref: pull.base_ref,
        head_ref: pull.head_ref,
        head_sha: pull.head_sha,
        head_repository: pull.head_repository.as_ref().map(|r| r.full_name()),
        checks: checks.into(),
    })
}
