//! The typed results of [`super::GithubClient`], and their validation from GitHub's JSON.
//!
//! Everything read here ends up in API paths, git URLs, file names or comments, so names, SHAs,
//! refs and URLs are checked, and anything unsafe is refused as `GithubError::InvalidResponse`.

use serde::Deserialize;

use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;

/// What `GET /user` says about the token: its account, OAuth scopes (absent for
/// fine-grained tokens) and the rate limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The account's login name.
    pub login: String,
    /// The classic token's OAuth scopes (`X-OAuth-Scopes`); `None` for fine-grained tokens.
    pub scopes: Option<Vec<String>>,
    /// Requests allowed per rate-limit window (`X-RateLimit-Limit`).
    pub rate_limit: Option<u64>,
    /// Requests left in the current window (`X-RateLimit-Remaining`).
    pub rate_remaining: Option<u64>,
    /// Unix seconds.
    pub rate_reset: Option<u64>,
}

/// The account the token belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The account's login name.
    pub login: String,
}

/// A repository as GitHub reports it, its URLs checked to be on the configured web host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoInfo {
    /// As GitHub spells it now (it may differ in case from what was asked for).
    pub full_name: RepoName,
    /// The repository's page on the web.
    pub html_url: String,
    /// What git fetches from: `https://HOST/OWNER/REPO.git`.
    pub clone_url: String,
    /// Whether only invited accounts can see it.
    pub private: bool,
    /// The branch new PRs target by default (`main` when GitHub leaves it out).
    pub default_branch: String,
}

/// Whether a pull request is open; GitHub's merged PRs are `Closed` with `merged` set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrState {
    /// Still open: it can be tested and can change.
    Open,
    /// Closed or merged: nothing more comes of it.
    Closed,
}

/// A pull request as GitHub reports it, validated field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullInfo {
    /// The base repository, as GitHub names it.
    pub repository: RepoName,
    /// The PR number in its base repository.
    pub number: u64,
    /// The PR's title (empty when GitHub gives none).
    pub title: String,
    /// The PR's page on the web.
    pub html_url: String,
    /// Open or closed.
    pub state: PrState,
    /// Merged PRs are also `Closed`.
    pub merged: bool,
    /// Whether it is marked as a draft.
    pub draft: bool,
    /// The branch the PR would merge into.
    pub base_ref: String,
    /// The branch the PR comes from (in `head_repository`).
    pub head_ref: String,
    /// 40 lowercase hex digits; the only thing a test run may test (design §5.2.1).
    pub head_sha: String,
    /// `None` when the fork the PR came from was deleted; the head commit is still reachable
    /// through the base repository's `refs/pull/N/head`.
    pub head_repository: Option<RepoName>,
    /// Where `refs/pull/N/head` is fetched from.
    pub base_clone_url: String,
}

impl PullInfo {
    /// Whether the PR is still open.
    pub fn is_open(&self) -> bool {
        self.state == PrState::Open
    }
}

/// Check runs of one commit, counted by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckSummary {
    /// All check runs on the commit.
    pub total: u64,
    /// Completed with `success`.
    pub success: u64,
    /// failure, timed_out, cancelled, action_required, startup_failure.
    pub failure: u64,
    /// queued, in_progress, waiting, requested, pending (not completed yet).
    pub pending: u64,
    /// neutral, skipped, stale and anything new.
    pub other: u64,
}

/// An issue or PR conversation comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// GitHub's comment id (used to update it in place).
    pub id: u64,
    /// The comment's Markdown text (empty when GitHub gives none).
    pub body: String,
    /// The comment's page on the web.
    pub html_url: String,
    /// `ghost` when the author's account was deleted (GitHub's own convention).
    pub author_login: String,
}

/// The outcome of [`super::GithubClient::publish_comment`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The comment as it now stands on GitHub.
    pub comment: Comment,
    /// False when an existing comment was reused (updated in place or left as it was).
    pub created: bool,
}

// ---- wire formats: only the fields forgeloop reads ----

#[derive(Deserialize)]
pub(crate) struct WireUser {
    pub login: String,
}

#[derive(Deserialize)]
pub(crate) struct WirePermissions {
    #[serde(default)]
    pub push: Option<bool>,
}

#[derive(Deserialize)]
pub(crate) struct WireRepo {
    pub full_name: String,
    pub html_url: String,
    pub clone_url: String,
    pub private: bool,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub permissions: Option<WirePermissions>,
}

#[derive(Deserialize)]
struct WireRepoRef {
    full_name: String,
    #[serde(default)]
    clone_url: Option<String>,
}

#[derive(Deserialize)]
struct WireBranch {
    #[serde(rename = "ref")]
    ref_name: String,
    sha: String,
    repo: Option<WireRepoRef>,
}

#[derive(Deserialize)]
pub(crate) struct WirePull {
    number: u64,
    #[serde(default)]
    title: Option<String>,
    html_url: String,
    state: String,
    #[serde(default)]
    merged: Option<bool>,
    #[serde(default)]
    merged_at: Option<String>,
    #[serde(default)]
    draft: Option<bool>,
    head: WireBranch,
    base: WireBranch,
}

#[derive(Deserialize)]
pub(crate) struct WireComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    html_url: String,
    user: Option<WireUser>,
}

#[derive(Deserialize)]
pub(crate) struct WireCheckRuns {
    pub total_count: u64,
    pub check_runs: Vec<WireCheckRun>,
}

#[derive(Deserialize)]
pub(crate) struct WireCheckRun {
    status: String,
    conclusion: Option<String>,
}

/// A validation failure; the caller adds the action.
pub(crate) type Invalid = String;

pub(crate) fn repo_name(field: &str, text: &str) -> Result<RepoName, Invalid> {
    RepoName::parse(text).map_err(|e| format!("{field} is not a safe OWNER/REPO: {e}"))
}

/// An http(s) URL on `web_host` without credentials, spaces or control characters. The host
/// check matters for clone URLs: the token is sent to them.
pub(crate) fn web_url(field: &str, text: &str, web_host: &str) -> Result<String, Invalid> {
    let bad = |why: &str| Err(format!("{field} {text:?} {why}"));
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("contains whitespace or control characters");
    }
    if !text.contains("://") {
        return bad("is not an absolute URL");
    }
    let Ok(url) = url::Url::parse(text) else { return bad("is not an absolute URL") };
    if !matches!(url.scheme(), "https" | "http") {
        return bad("is not http(s)");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return bad("carries credentials");
    }
    if !same_host(&url, web_host) {
        return bad(&format!("is not on {web_host}, the web host of the configured GitHub API"));
    }
    Ok(text.to_owned())
}

/// Whether `url` is on `web_host` (`host[:port]`, the port the scheme's default when none is
/// written): both read by the same parser, so `GitHub.com:443` is `github.com`.
fn same_host(url: &url::Url, web_host: &str) -> bool {
    let Ok(web) = url::Url::parse(&format!("{}://{web_host}/", url.scheme())) else { return false };
    url.host().is_some() && url.host() == web.host() && url.port_or_known_default() == web.port_or_known_default()
}

/// A branch name GitHub reported: shown to people and used in refspecs by nobody but git.
fn ref_name(field: &str, text: &str) -> Result<String, Invalid> {
    let ok = !text.is_empty()
        && text.len() <= 255
        && !text.starts_with('-')
        && !text.contains("..")
        && !text.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok { Ok(text.to_owned()) } else { Err(format!("{field} {text:?} is not a safe git ref name")) }
}

pub(crate) fn sha(field: &str, text: &str) -> Result<String, Invalid> {
    normalize_sha(text).ok_or_else(|| format!("{field} {text:?} is not a 40-hex-digit commit SHA"))
}

impl WireRepo {
    pub(crate) fn validate(self, web_host: &str) -> Result<RepoInfo, Invalid> {
        let default_branch = match self.default_branch {
            Some(branch) => ref_name("default_branch", &branch)?,
            None => "main".to_owned(),
        };
        Ok(RepoInfo {
            full_name: repo_name("full_name", &self.full_name)?,
            html_url: web_url("html_url", &self.html_url, web_host)?,
            clone_url: web_url("clone_url", &self.clone_url, web_host)?,
            private: self.private,
            default_branch,
        })
    }
}

impl WirePull {
    pub(crate) fn validate(self, web_host: &str) -> Result<PullInfo, Invalid> {
        let state = match self.state.as_str() {
            "open" => PrState::Open,
            "closed" => PrState::Closed,
            other => return Err(format!("state {other:?} is neither open nor closed")),
        };
        let base_repo = self.base.repo.ok_or("base.repo is null")?;
        let base_clone_url = base_repo.clone_url.ok_or("base.repo.clone_url is missing")?;
        let head_repository = match self.head.repo {
            Some(repo) => Some(repo_name("head.repo.full_name", &repo.full_name)?),
            None => None,
        };
        Ok(PullInfo {
            repository: repo_name("base.repo.full_name", &base_repo.full_name)?,
            number: self.number,
            title: self.title.unwrap_or_default(),
            html_url: web_url("html_url", &self.html_url, web_host)?,
            state,
            merged: self.merged.unwrap_or(self.merged_at.is_some()),
            draft: self.draft.unwrap_or(false),
            base_ref: ref_name("base.ref", &self.base.ref_name)?,
            head_ref: ref_name("head.ref", &self.head.ref_name)?,
            head_sha: sha("head.sha", &self.head.sha)?,
            head_repository,
            base_clone_url: web_url("base.repo.clone_url", &base_clone_url, web_host)?,
        })
    }
}

impl WireComment {
    pub(crate) fn validate(self) -> Comment {
        Comment {
            id: self.id,
            body: self.body.unwrap_or_default(),
            html_url: self.html_url,
            author_login: self.user.map(|u| u.login).unwrap_or_else(|| "ghost".to_owned()),
        }
    }
}

impl WireCheckRuns {
    pub(crate) fn add_to(&self, summary: &mut CheckSummary) {
        for run in &self.check_runs {
            if run.status != "completed" {
                summary.pending += 1;
                continue;
            }
            match run.conclusion.as_deref() {
                Some("success") => summary.success += 1,
                Some("failure" | "timed_out" | "cancelled" | "action_required" | "startup_failure") => {
                    summary.failure += 1
                }
                _ => summary.other += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_on_the_api_web_host() {
        let host = "github.com";
        assert!(web_url("u", "https://github.com/a/b.git", host).is_ok());
        assert!(web_url("u", "https://GitHub.com:443/a/b.git", host).is_ok());
        assert!(web_url("u", "https://evil.example/a/b.git", host).is_err());
        assert!(web_url("u", "https://github.com.evil/a/b.git", host).is_err());
        assert!(web_url("u", "https://x:y@github.com/a/b.git", host).is_err());
        assert!(web_url("u", "file:///etc/passwd", host).is_err());
        assert!(web_url("u", "https://github.com/a b", host).is_err());
        assert!(web_url("u", "http://127.0.0.1:8080/a/b.git", "127.0.0.1:8080").is_ok());
    }

    #[test]
    fn ref_names_that_could_be_options_or_traversal_are_refused() {
        assert!(ref_name("r", "feature/x").is_ok());
        for bad in ["", "-x", "a..b", "a b", "a\nb"] {
            assert!(ref_name("r", bad).is_err(), "{bad:?}");
        }
    }
}
