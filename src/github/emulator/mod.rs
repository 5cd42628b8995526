//! **GitHub emulator** — test and demo infrastructure, not GitHub. Only the test suite and
//! `forgeloop demo` (SPEC §9) use it; nothing in the product talks to it otherwise.
//!
//! One HTTP server on 127.0.0.1 serving three things:
//! * the REST subset [`super::GithubClient`] calls (`GET /user`, `GET /repos/{o}/{r}`,
//!   `GET /repos/{o}/{r}/pulls/{n}`, `GET|POST /repos/{o}/{r}/issues/{n}/comments` with
//!   `per_page`/`page` and `Link` headers, `PATCH /repos/{o}/{r}/issues/comments/{id}`,
//!   `POST /user/repos`, `POST /orgs/{org}/repos`, `GET /repos/{o}/{r}/commits/{sha}/check-runs`,
//!   `GET /rate_limit`), with GitHub's status codes and error JSON; an `/api/v3` prefix is
//!   accepted as on GitHub Enterprise;
//! * smart-HTTP git at `/{o}/{r}.git` through `git http-backend`: public repositories are
//!   readable anonymously, private ones and every push need HTTP Basic auth with the token as
//!   password; pushes move the heads of open PRs from that branch;
//! * an admin JSON API under `/_emulator/` mirroring the [`Emulator`] helpers (see
//!   [`admin`](self::admin)), so other processes (Python, tmux tests) can drive it.
//!
//! Bare repositories live on disk at `<root>/<owner>/<repo>.git`; the emulator keeps each PR's
//! `refs/pull/N/head` in its base repository, as GitHub does. Everything else is in memory.

mod admin;
mod api;
mod git;
mod git_http;
mod ops;
mod server;
mod state;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::domain::pr_ref::RepoName;
use ops::Core;

pub use admin::run_standalone;

/// The login of the emulated authenticated user when none is configured.
pub const DEFAULT_LOGIN: &str = "forgeloop-user";

#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error("GitHub emulator: {action} {path}: {source}")]
    Io { action: &'static str, path: String, source: std::io::Error },
    #[error("GitHub emulator: cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    #[error("GitHub emulator: cannot run git ({0}); install git, the emulator drives it")]
    GitMissing(std::io::Error),
    #[error("GitHub emulator: `git {args}` failed in {dir}: {stderr}")]
    Git { args: String, dir: String, stderr: String },
    #[error("GitHub emulator: {0} not found")]
    NotFound(String),
    #[error("GitHub emulator: {0} already exists")]
    Exists(String),
    #[error("GitHub emulator: {0}")]
    Invalid(String),
}

#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Where the bare repositories go (`<root>/<owner>/<repo>.git`).
    pub root: PathBuf,
    /// The token the REST API and private git access require; `None` accepts anyone.
    pub token: Option<String>,
    /// The authenticated user every request acts as.
    pub login: String,
}

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

/// What the helpers accept as a repository: a [`RepoName`] or a [`RepoHandle`] (or a reference).
pub trait AsRepo {
    fn as_repo(&self) -> &RepoName;
}

impl AsRepo for RepoName {
    fn as_repo(&self) -> &RepoName {
        self
    }
}

impl AsRepo for RepoHandle {
    fn as_repo(&self) -> &RepoName {
        &self.repo
    }
}

impl<T: AsRepo + ?Sized> AsRepo for &T {
    fn as_repo(&self) -> &RepoName {
        (**self).as_repo()
    }
}

/// One check run of a commit (`status`: queued, in_progress, completed; `conclusion`:
/// success, failure, neutral, ... once completed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
}

impl CheckRun {
    pub fn completed(name: &str, conclusion: &str) -> Self {
        CheckRun { name: name.to_owned(), status: "completed".to_owned(), conclusion: Some(conclusion.to_owned()) }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmulatedComment {
    pub id: u64,
    pub author: String,
    pub body: String,
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

/// A running emulator. Dropping it stops the server; the repositories stay on disk.
pub struct Emulator {
    core: Arc<Core>,
    addr: SocketAddr,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(server) = &self.server {
            server.abort();
        }
    }
}

impl Emulator {
    /// Binds 127.0.0.1 on a free port and starts serving (needs a tokio runtime).
    pub async fn start(config: EmulatorConfig) -> Result<Emulator, EmulatorError> {
        crate::domain::pr_ref::validate_owner(&config.login)
            .map_err(|e| EmulatorError::Invalid(format!("login: {e}")))?;
        std::fs::create_dir_all(&config.root).map_err(|source| EmulatorError::Io {
            action: "creating",
            path: config.root.display().to_string(),
            source,
        })?;
        let root = std::fs::canonicalize(&config.root).map_err(|source| EmulatorError::Io {
            action: "resolving",
            path: config.root.display().to_string(),
            source,
        })?;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(EmulatorError::Bind)?;
        let addr = listener.local_addr().map_err(EmulatorError::Bind)?;
        let core = Arc::new(Core::new(root, config.token, config.login, format!("http://{addr}")));
        let server = tokio::spawn(server::serve(listener, core.clone()));
        Ok(Emulator { core, addr, server: Some(server) })
    }

    /// `http://127.0.0.1:P`: the `--github-api` for forgeloop.
    pub fn api_base(&self) -> String {
        self.core.base_url.clone()
    }

    /// `127.0.0.1:P`: the web host of its PR URLs (`http://127.0.0.1:P/o/r/pull/N`).
    pub fn web_host(&self) -> String {
        self.addr.to_string()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn login(&self) -> &str {
        &self.core.login
    }

    pub fn root(&self) -> &Path {
        &self.core.root
    }

    /// A bare repository with one commit (`README.md`) on `main`. `owner` other than the
    /// login is treated as an organization the user belongs to.
    pub async fn create_repo(&self, owner: &str, name: &str, private: bool) -> Result<RepoHandle, EmulatorError> {
        let org = !owner.eq_ignore_ascii_case(&self.core.login);
        self.core.create_repo(owner, name, private, org, true).await
    }

    /// A fork of `source` owned by user `owner` (same name), sharing its history.
    pub async fn fork_repo(&self, source: impl AsRepo, owner: &str) -> Result<RepoHandle, EmulatorError> {
        self.core.fork_repo(source.as_repo(), owner).await
    }

    /// Deletes a repository (as deleting a fork on GitHub: its PRs get `head.repo: null`).
    pub async fn delete_repo(&self, repo: impl AsRepo) -> Result<(), EmulatorError> {
        self.core.delete_repo(repo.as_repo()).await
    }

    /// Commits `files` (path, contents) onto `branch` (created from the default branch when
    /// missing) and returns the commit SHA. Open PRs from that branch follow it.
    pub async fn commit_files(
        &self,
        repo: impl AsRepo,
        branch: &str,
        files: &[(&str, &str)],
        message: &str,
    ) -> Result<String, EmulatorError> {
        let files: Vec<(String, Vec<u8>)> = files.iter().map(|(p, c)| (p.to_string(), c.as_bytes().to_vec())).collect();
        self.core.commit_files(repo.as_repo(), branch, &files, message).await
    }

    /// The bare repository behind `repo` (tests push to it with real git).
    pub fn repo_dir(&self, repo: impl AsRepo) -> Result<PathBuf, EmulatorError> {
        self.core.repo_dir(repo.as_repo()).map(|(dir, _)| dir)
    }

    /// Opens a PR from `head_branch` to `base_branch` of the same repository; returns its number.
    pub async fn open_pr(
        &self,
        repo: impl AsRepo,
        head_branch: &str,
        base_branch: &str,
        title: &str,
    ) -> Result<u64, EmulatorError> {
        let repo = repo.as_repo();
        self.core.open_pr(repo, repo, head_branch, base_branch, title, false).await
    }

    /// Opens a PR on `base_repo` from `head_branch` of another repository (a fork).
    pub async fn open_fork_pr(
        &self,
        base_repo: impl AsRepo,
        head_repo: impl AsRepo,
        head_branch: &str,
        base_branch: &str,
        title: &str,
    ) -> Result<u64, EmulatorError> {
        self.core.open_pr(base_repo.as_repo(), head_repo.as_repo(), head_branch, base_branch, title, false).await
    }

    /// Points PR `number`'s head (and `refs/pull/N/head`) at `sha`, a commit of the base or
    /// head repository: a force-push.
    pub async fn set_pr_head(&self, repo: impl AsRepo, number: u64, sha: &str) -> Result<(), EmulatorError> {
        self.core.set_pr_head(repo.as_repo(), number, sha).await
    }

    /// The current head SHA of a PR.
    pub fn pr_head(&self, repo: impl AsRepo, number: u64) -> Option<String> {
        self.core.pr_head(repo.as_repo(), number)
    }

    /// Deletes a branch; PRs from it keep their head and `refs/pull/N/head`.
    pub async fn delete_branch(&self, repo: impl AsRepo, branch: &str) -> Result<(), EmulatorError> {
        self.core.delete_branch(repo.as_repo(), branch).await
    }

    pub fn set_pr_draft(&self, repo: impl AsRepo, number: u64, draft: bool) -> Result<(), EmulatorError> {
        self.core.set_pr_draft(repo.as_repo(), number, draft)
    }

    pub fn close_pr(&self, repo: impl AsRepo, number: u64) -> Result<(), EmulatorError> {
        self.core.close_pr(repo.as_repo(), number, false)
    }

    /// Marks the PR merged and closed. The base branch is not moved (nothing in forgeloop
    /// reads it after a merge).
    pub fn merge_pr(&self, repo: impl AsRepo, number: u64) -> Result<(), EmulatorError> {
        self.core.close_pr(repo.as_repo(), number, true)
    }

    /// Replaces the check runs reported for commit `sha` (in any repository).
    pub fn set_check_runs(&self, sha: &str, runs: Vec<CheckRun>) -> Result<(), EmulatorError> {
        self.core.set_check_runs(sha, runs)
    }

    /// Adds a comment as `author` (for example another user), returning its id.
    pub fn add_comment(&self, repo: impl AsRepo, number: u64, author: &str, body: &str) -> Result<u64, EmulatorError> {
        self.core.add_comment(repo.as_repo(), number, author, body)
    }

    /// The comments of issue or PR `number`, oldest first.
    pub fn comments(&self, repo: impl AsRepo, number: u64) -> Vec<EmulatedComment> {
        self.core.comments(repo.as_repo(), number)
    }

    /// Deep-merges `patch` into every later JSON answer for this PR, to serve metadata GitHub
    /// could send but the emulator would not make (uppercase or short SHAs, odd names).
    pub fn override_pr_json(
        &self,
        repo: impl AsRepo,
        number: u64,
        patch: serde_json::Value,
    ) -> Result<(), EmulatorError> {
        self.core.override_pr_json(repo.as_repo(), number, patch)
    }

    /// Every request answered so far (REST and git), oldest first.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.core.requests()
    }

    pub fn clear_requests(&self) {
        self.core.clear_requests()
    }

    pub fn inject(&self, fault: Fault) {
        self.core.inject(fault)
    }

    /// Stops the server and waits for it (open connections are dropped).
    pub async fn shutdown(mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
            let _ = server.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo drives the emulator from spawned tasks.
    #[allow(dead_code)]
    fn futures_are_send(emulator: &Emulator, repo: &RepoName) {
        fn send<T: Send>(_: T) {}
        send(Emulator::start(EmulatorConfig { root: PathBuf::new(), token: None, login: String::new() }));
        send(emulator.commit_files(repo, "b", &[], "m"));
        send(emulator.open_pr(repo, "b", "main", "t"));
        send(emulator.set_pr_head(repo, 1, ""));
        send(run_standalone(Path::new(""), Path::new(""), None));
    }

    #[test]
    fn faults_read_from_admin_json() {
        let fault: Fault = serde_json::from_str(r#"{"kind":"status","path":"/user","status":500}"#).unwrap();
        assert_eq!(fault, Fault::Status { method: None, path: "/user".into(), status: 500, times: 1 });
        let fault: Fault = serde_json::from_str(r#"{"kind":"rate_limit","path":"/x","reset_after_secs":5}"#).unwrap();
        assert!(matches!(fault, Fault::RateLimit { status: 403, times: 1, .. }));
    }
}
