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
    pub repository: String,
    pub number: u64,
    pub title: String,
    pub html_url: String,
    /// `open`, `closed` or `merged`.
    pub state: &'static str,
    pub merged: bool,
    pub draft: bool,
    pub base_ref: String,
    pub head_ref: String,
    pub head_sha: String,
    /// `None` when the fork the PR came from was deleted.
    pub head_repository: Option<String>,
    pub checks: Checks,
}

/// Check runs of the head SHA, counted by outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Checks {
    pub total: u64,
    pub success: u64,
    pub failure: u64,
    pub pending: u64,
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
