//! The emulator's public data: its configuration, what it hands back (repositories, comments,
//! logged requests) and what it can be told to do wrong ([`Fault`]). Serde shapes double as
//! the admin API's JSON. Uses only [`names`](crate::names).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::names::RepoName;

/// The login of the emulated authenticated user when none is configured.
pub const DEFAULT_LOGIN: &str = "forgeloop-user";

#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Where the bare repositories go (`<root>/<owner>/<repo>.git`).
    pub root: PathBuf,
    /// The token the REST API and private git access require; `None` accepts anyone.
    pub token: Option<String>,
    /// The authenticated user every request acts as.
    pub login: String,
    /// The secret every `/_emulator/*` admin request must carry in [`ADMIN_SECRET_HEADER`];
    /// `None` makes a fresh random one at start (read it with `Emulator::admin_secret`).
    pub admin_secret: Option<String>,
}

/// The header that carries the admin secret (see `admin.rs` for what else an admin request
/// needs).
pub const ADMIN_SECRET_HEADER: &str = "x-emulator-secret";

/// A repository created in the emulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoHandle {
    pub repo: RepoName,
    /// The bare repository on disk.
    pub path: PathBuf,
    /// `http://127.0.0.1:P/owner/repo.git`
    pub clone_url: String,
    pub html_url: String,
    pub private: bool,
    pub default_branch: String,
}

/// One check run of a commit (`status`: queued, in_progress, completed; `conclusion`:
/// success, failure, neutral, ... once completed). Several runs may share a name: a later one
/// is a re-run. What is left unset is filled in when the run is set or published: `id` (the
/// Actions job id when `job_id` is set, as on GitHub), `started_at` (unless queued) and
/// `completed_at` (once completed), so the answers stay the same from one request to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub completed_at: Option<String>,
    /// The Actions job that made it: the run's id is the job's, `details_url` points at it.
    #[serde(default)]
    pub job_id: Option<u64>,
    /// The app's slug (default `github-actions`).
    #[serde(default)]
    pub app: Option<String>,
    #[serde(default)]
    pub output: Option<CheckOutput>,
}

/// A GitHub Actions workflow run, as a test scripts it: its jobs become check runs on
/// `head_sha` (each job's id is its check run's id).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionsRun {
    /// The workflow's name.
    pub name: String,
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: String,
    /// `push`, `pull_request`, `workflow_dispatch`, ... (default `push`).
    #[serde(default)]
    pub event: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub jobs: Vec<ActionsJob>,
}

/// One job of an [`ActionsRun`] (`id` is given, or assigned).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionsJob {
    #[serde(default)]
    pub id: Option<u64>,
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub completed_at: Option<String>,
    #[serde(default)]
    pub steps: Vec<JobStep>,
}

/// One step of an [`ActionsJob`]; `number` counts from 1 (left at 0, it is the step's place).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStep {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub number: u64,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub completed_at: Option<String>,
}

/// Where a branch's required status checks come from: classic branch protection (served at
/// `GET /repos/{o}/{r}/branches/{b}/protection/required_status_checks`) or a repository
/// ruleset (served as a rule at `GET /repos/{o}/{r}/rules/branches/{b}`). GitHub keeps the
/// two apart, so a client must read both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequiredChecksSource {
    #[default]
    BranchProtection,
    Ruleset,
}

/// A check run's `output`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckOutput {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

impl CheckRun {
    pub fn completed(name: &str, conclusion: &str) -> Self {
        CheckRun {
            name: name.to_owned(),
            status: "completed".to_owned(),
            conclusion: Some(conclusion.to_owned()),
            ..CheckRun::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmulatedComment {
    pub id: u64,
    pub author: String,
    pub body: String,
}

/// A `workflow_dispatch` the API accepted (`POST /repos/{o}/{r}/actions/workflows/{id}/dispatches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkflowDispatch {
    /// `owner/name` as the request spelled it.
    pub repo: String,
    /// The workflow's file name or id, as given.
    pub workflow: String,
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub inputs: serde_json::Map<String, serde_json::Value>,
    /// The queued Actions run it started (`event`: `workflow_dispatch`, on the ref's commit).
    pub run_id: u64,
}

/// One request the log host (the second listener, standing for GitHub's log storage) received:
/// the names of its headers, lower-cased (values are not kept), so a test can assert that no
/// `authorization` ever reached it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogHostRequest {
    pub method: String,
    pub path: String,
    pub header_names: Vec<String>,
    pub status: u16,
}

impl LogHostRequest {
    pub fn had_authorization(&self) -> bool {
        self.header_names.iter().any(|name| name == "authorization")
    }
}

/// One request the emulator answered (admin calls are not logged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoggedRequest {
    pub method: String,
    /// The path as received (with `/api/v3` when the client sent it).
    pub path: String,
    pub query: String,
    /// 0 while the request is still being answered.
    pub status: u16,
    /// The request carried an `Authorization` header (its value is never kept), so tests can
    /// tell where a client sent credentials.
    pub credentials: bool,
    /// Bytes of the response body (0 while it is being answered): what a git fetch received.
    pub response_bytes: u64,
    #[serde(skip)]
    pub(crate) seq: u64,
}

/// A misbehaviour to inject. `path` matches the request path without query and without an
/// `/api/v3` prefix, exactly, or by prefix when it ends with `*`; `method` `None` matches any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// Answer the next `times` matching requests with `status` and GitHub's error JSON
    /// (401 gives "Bad credentials").
    Status {
        #[serde(default)]
        method: Option<String>,
        path: String,
        status: u16,
        #[serde(default = "one")]
        times: u32,
    },
    /// Answer with a rate-limit error: `status` 403 (primary limit, `x-ratelimit-remaining: 0`)
    /// or 429, resetting `reset_after_secs` from now.
    RateLimit {
        #[serde(default)]
        method: Option<String>,
        path: String,
        #[serde(default = "one")]
        times: u32,
        reset_after_secs: u64,
        #[serde(default = "forbidden")]
        status: u16,
    },
    /// Answer 403 with `retry-after: retry_after_secs` and GitHub's secondary-rate-limit
    /// message (the counted `x-ratelimit-*` headers, `remaining` above 0): unlike the primary
    /// limit, a client must wait `retry-after`, not until `x-ratelimit-reset`.
    SecondaryRateLimit {
        #[serde(default)]
        method: Option<String>,
        path: String,
        #[serde(default = "one")]
        times: u32,
        retry_after_secs: u64,
    },
    /// Wait `delay_ms` before answering the next `times` matching requests.
    Delay {
        #[serde(default)]
        method: Option<String>,
        path: String,
        delay_ms: u64,
        #[serde(default = "one")]
        times: u32,
    },
    /// Right after answering the `after_gets`-th (at least 1st) GET of PR `repo#number`, counting
    /// from now, its head moves to `to_sha`: the "PR moved between resolve and fetch" race.
    MovePrHead { repo: String, number: u64, after_gets: u32, to_sha: String },
}

fn one() -> u32 {
    1
}

fn forbidden() -> u16 {
    403
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_read_from_admin_json() {
        let fault: Fault = serde_json::from_str(r#"{"kind":"status","path":"/user","status":500}"#).unwrap();
        assert_eq!(fault, Fault::Status { method: None, path: "/user".into(), status: 500, times: 1 });
        let fault: Fault = serde_json::from_str(r#"{"kind":"rate_limit","path":"/x","reset_after_secs":5}"#).unwrap();
        assert!(matches!(fault, Fault::RateLimit { status: 403, times: 1, .. }));
        let fault: Fault =
            serde_json::from_str(r#"{"kind":"secondary_rate_limit","path":"/x","retry_after_secs":7}"#).unwrap();
        assert_eq!(fault, Fault::SecondaryRateLimit { method: None, path: "/x".into(), times: 1, retry_after_secs: 7 });
        let source: RequiredChecksSource = serde_json::from_str(r#""ruleset""#).unwrap();
        assert_eq!(source, RequiredChecksSource::Ruleset);
    }
}
