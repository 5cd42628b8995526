//! The Rust handle of a running emulator ([`Emulator`]): start, the helpers tests and the
//! demo drive it with, shutdown; and [`run_standalone`], the same as a process of its own.
//! Uses the server, the operations and the public data; nothing below uses it.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::EmulatorError;
use crate::model::{
    ActionsRun, CheckRun, DEFAULT_LOGIN, EmulatedComment, EmulatorConfig, Fault, JobStep, LogHostRequest,
    LoggedRequest, RepoHandle, RequiredChecksSource, WorkflowDispatch,
};
use crate::names::{NameError, RepoName, validate_login};
use crate::ops::Core;
use crate::server;

/// What the helpers accept as a repository: a [`RepoName`], a [`RepoHandle`], or its
/// `"owner/name"` text (a `&str` or `String`), or a reference to any of these. Text that is not
/// a repository name makes the helper fail with [`EmulatorError::Name`] (or find nothing).
pub trait AsRepo {
    fn to_repo(&self) -> Result<Cow<'_, RepoName>, NameError>;
}

impl AsRepo for RepoName {
    fn to_repo(&self) -> Result<Cow<'_, RepoName>, NameError> {
        Ok(Cow::Borrowed(self))
    }
}

impl AsRepo for RepoHandle {
    fn to_repo(&self) -> Result<Cow<'_, RepoName>, NameError> {
        Ok(Cow::Borrowed(&self.repo))
    }
}

impl AsRepo for str {
    fn to_repo(&self) -> Result<Cow<'_, RepoName>, NameError> {
        RepoName::parse(self).map(Cow::Owned)
    }
}

impl AsRepo for String {
    fn to_repo(&self) -> Result<Cow<'_, RepoName>, NameError> {
        self.as_str().to_repo()
    }
}

impl<T: AsRepo + ?Sized> AsRepo for &T {
    fn to_repo(&self) -> Result<Cow<'_, RepoName>, NameError> {
        (**self).to_repo()
    }
}

/// A running emulator. Dropping it stops the server; the repositories stay on disk.
pub struct Emulator {
    core: Arc<Core>,
    addr: SocketAddr,
    server: Option<tokio::task::JoinHandle<()>>,
    /// The log host: a second listener standing for GitHub's log storage.
    log_server: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        for server in [&self.server, &self.log_server].into_iter().flatten() {
            server.abort();
        }
    }
}

impl Emulator {
    /// Binds 127.0.0.1 on a free port and starts serving (needs a tokio runtime).
    pub async fn start(config: EmulatorConfig) -> Result<Emulator, EmulatorError> {
        validate_login(&config.login).map_err(|e| EmulatorError::Invalid(format!("login: {e}")))?;
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
        let admin_secret = match config.admin_secret {
            Some(secret) if secret.len() < 16 || !secret.bytes().all(|b| b.is_ascii_graphic()) => {
                return Err(EmulatorError::Invalid(
                    "admin secret: at least 16 visible ASCII characters, so it cannot be guessed".into(),
                ));
            }
            Some(secret) => secret,
            None => random_secret()?,
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(EmulatorError::Bind)?;
        let addr = listener.local_addr().map_err(EmulatorError::Bind)?;
        let log_listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(EmulatorError::Bind)?;
        let log_addr = log_listener.local_addr().map_err(EmulatorError::Bind)?;
        let core = Arc::new(Core::new(
            root,
            config.token,
            config.login,
            format!("http://{addr}"),
            admin_secret,
            format!("http://{log_addr}"),
        ));
        let server = tokio::spawn(server::serve(listener, core.clone()));
        let log_server = tokio::spawn(server::serve_logs(log_listener, core.clone()));
        Ok(Emulator { core, addr, server: Some(server), log_server: Some(log_server) })
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

    /// The secret the admin API (`/_emulator/*`) requires in [`crate::ADMIN_SECRET_HEADER`].
    pub fn admin_secret(&self) -> &str {
        &self.core.admin_secret
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
        self.core.fork_repo(&*source.to_repo()?, owner).await
    }

    /// Deletes a repository (as deleting a fork on GitHub: its PRs get `head.repo: null`).
    pub async fn delete_repo(&self, repo: impl AsRepo) -> Result<(), EmulatorError> {
        self.core.delete_repo(&*repo.to_repo()?).await
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
        self.core.commit_files(&*repo.to_repo()?, branch, &files, message).await
    }

    /// The bare repository behind `repo` (tests push to it with real git).
    pub fn repo_dir(&self, repo: impl AsRepo) -> Result<PathBuf, EmulatorError> {
        self.core.repo_dir(&*repo.to_repo()?).map(|(dir, _)| dir)
    }

    /// Opens a PR from `head_branch` to `base_branch` of the same repository; returns its number.
    pub async fn open_pr(
        &self,
        repo: impl AsRepo,
        head_branch: &str,
        base_branch: &str,
        title: &str,
    ) -> Result<u64, EmulatorError> {
        let repo = repo.to_repo()?;
        self.core.open_pr(&repo, &repo, head_branch, base_branch, title, false).await
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
        self.core.open_pr(&*base_repo.to_repo()?, &*head_repo.to_repo()?, head_branch, base_branch, title, false).await
    }

    /// Points PR `number`'s head (and `refs/pull/N/head`) at `sha`, a commit of the base or
    /// head repository: a force-push.
    pub async fn set_pr_head(&self, repo: impl AsRepo, number: u64, sha: &str) -> Result<(), EmulatorError> {
        self.core.set_pr_head(&*repo.to_repo()?, number, sha).await
    }

    /// The current head SHA of a PR.
    pub fn pr_head(&self, repo: impl AsRepo, number: u64) -> Option<String> {
        repo.to_repo().ok().and_then(|repo| self.core.pr_head(&repo, number))
    }

    /// Computes PR `number`'s test merge again (`refs/pull/N/merge`, `mergeable`) against its
    /// base branch's tip now, as GitHub does when asked. The emulator computes it on its own
    /// when the PR is opened and whenever its head changes, never when only the base branch
    /// moves: the merge ref then stays as it was, stale, as GitHub's does until asked. Returns
    /// the merge commit, or `None` when the head does not merge (there is then no merge ref).
    pub async fn recompute_pr_merge(&self, repo: impl AsRepo, number: u64) -> Result<Option<String>, EmulatorError> {
        self.core.recompute_merge(&*repo.to_repo()?, number).await
    }

    /// PR `number`'s test merge commit (`refs/pull/N/merge`: first parent the base branch's tip
    /// it was computed against, second the head), if there is one.
    pub fn pr_merge(&self, repo: impl AsRepo, number: u64) -> Option<String> {
        repo.to_repo().ok().and_then(|repo| self.core.pr_merge(&repo, number))
    }

    /// Deletes a branch; PRs from it keep their head and `refs/pull/N/head`.
    pub async fn delete_branch(&self, repo: impl AsRepo, branch: &str) -> Result<(), EmulatorError> {
        self.core.delete_branch(&*repo.to_repo()?, branch).await
    }

    pub fn set_pr_draft(&self, repo: impl AsRepo, number: u64, draft: bool) -> Result<(), EmulatorError> {
        self.core.set_pr_draft(&*repo.to_repo()?, number, draft)
    }

    pub fn close_pr(&self, repo: impl AsRepo, number: u64) -> Result<(), EmulatorError> {
        self.core.close_pr(&*repo.to_repo()?, number, false)
    }

    /// Marks the PR merged and closed. The base branch is not moved (nothing in forgeloop
    /// reads it after a merge).
    pub fn merge_pr(&self, repo: impl AsRepo, number: u64) -> Result<(), EmulatorError> {
        self.core.close_pr(&*repo.to_repo()?, number, true)
    }

    /// Replaces the check runs reported for commit `sha` (in any repository); unset ids and
    /// times are filled in (see [`CheckRun`]).
    pub fn set_check_runs(&self, sha: &str, runs: Vec<CheckRun>) -> Result<(), EmulatorError> {
        self.core.set_check_runs(sha, runs)
    }

    /// Adds a check run to commit `sha` (a re-run when its name is there already); its id.
    pub fn publish_check_run(&self, sha: &str, run: CheckRun) -> Result<u64, EmulatorError> {
        self.core.publish_check_run(sha, run)
    }

    /// Records a GitHub Actions run in `repo` (its jobs become check runs on its head); its id.
    pub fn create_actions_run(&self, repo: impl AsRepo, run: ActionsRun) -> Result<u64, EmulatorError> {
        self.core.create_actions_run(&*repo.to_repo()?, run)
    }

    /// Moves check run `id` to `status` (and `conclusion`), stamping its times. When an Actions
    /// job made it, the job follows, and its run becomes `in_progress`, then `completed` with
    /// `failure` (a job failed, timed out, was cancelled or needs action) or `success`.
    pub fn update_check_run(&self, id: u64, status: &str, conclusion: Option<&str>) -> Result<(), EmulatorError> {
        self.core.update_check_run(id, status, conclusion)
    }

    /// Moves the emulator's clock `seconds` on (GitHub's times have whole seconds: a test that
    /// needs a later time says so rather than sleeping).
    pub fn advance_clock(&self, seconds: i64) {
        self.core.advance_clock(seconds);
    }

    /// Replaces the steps of Actions job `job_id` (a step numbered 0 gets its place, from 1),
    /// so a scripted CI can say which step failed.
    pub fn set_job_steps(&self, job_id: u64, steps: Vec<JobStep>) -> Result<(), EmulatorError> {
        self.core.set_job_steps(job_id, steps)
    }

    /// The run ids of every `rerun-failed-jobs` the API accepted, oldest first.
    pub fn reruns(&self) -> Vec<u64> {
        self.core.reruns()
    }

    /// Every check run of commit `sha`, oldest first (re-runs included): what a scripted CI
    /// moves on with [`Emulator::update_check_run`].
    pub fn check_runs(&self, sha: &str) -> Vec<CheckRun> {
        self.core.check_runs(sha)
    }

    /// Makes `branch` of `repo` require the status checks `contexts` through `source` (branch
    /// protection or a ruleset; the REST API serves each where GitHub does). An empty list
    /// removes that source's requirement.
    pub fn set_required_checks(
        &self,
        repo: impl AsRepo,
        branch: &str,
        contexts: Vec<String>,
        source: RequiredChecksSource,
    ) -> Result<(), EmulatorError> {
        self.core.set_required_checks(&*repo.to_repo()?, branch, contexts, source)
    }

    /// Adds a comment as `author` (for example another user), returning its id.
    pub fn add_comment(&self, repo: impl AsRepo, number: u64, author: &str, body: &str) -> Result<u64, EmulatorError> {
        self.core.add_comment(&*repo.to_repo()?, number, author, body)
    }

    /// The comments of issue or PR `number`, oldest first.
    pub fn comments(&self, repo: impl AsRepo, number: u64) -> Vec<EmulatedComment> {
        repo.to_repo().map(|repo| self.core.comments(&repo, number)).unwrap_or_default()
    }

    /// Deep-merges `patch` into every later JSON answer for this PR, to serve metadata GitHub
    /// could send but the emulator would not make (uppercase or short SHAs, odd names).
    pub fn override_pr_json(
        &self,
        repo: impl AsRepo,
        number: u64,
        patch: serde_json::Value,
    ) -> Result<(), EmulatorError> {
        self.core.override_pr_json(&*repo.to_repo()?, number, patch)
    }

    /// `http://127.0.0.1:Q`: the log host, where `GET /repos/{o}/{r}/actions/jobs/{id}/logs`
    /// redirects (signed URLs, no credentials needed).
    pub fn log_base(&self) -> String {
        self.core.log_base.clone()
    }

    /// Sets the log of Actions job `job_id`; its `logs` endpoint then redirects to the log host.
    pub fn set_job_log(&self, job_id: u64, text: &str) {
        self.core.set_job_log(job_id, text.to_owned())
    }

    /// Every `workflow_dispatch` the API accepted, oldest first.
    pub fn dispatches(&self) -> Vec<WorkflowDispatch> {
        self.core.dispatches()
    }

    /// Every request the log host received, oldest first (header names only).
    pub fn log_host_requests(&self) -> Vec<LogHostRequest> {
        self.core.log_requests()
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

    /// Stops the servers and waits for them (open connections are dropped).
    pub async fn shutdown(mut self) {
        for server in [self.server.take(), self.log_server.take()].into_iter().flatten() {
            server.abort();
            let _ = server.await;
        }
    }
}

/// Runs an emulator as a process of its own (the hidden `forgeloop github-emulator`): binds a
/// free port on 127.0.0.1, writes it to `port_file` atomically (temp file + rename) once
/// listening, and serves until the process is killed. The user is [`DEFAULT_LOGIN`]; the admin
/// API requires `admin_secret`, which the caller chose and so can send.
pub async fn run_standalone(
    root: &Path,
    port_file: &Path,
    token: Option<String>,
    admin_secret: String,
) -> Result<(), EmulatorError> {
    let config = EmulatorConfig {
        root: root.to_path_buf(),
        token,
        login: DEFAULT_LOGIN.to_owned(),
        admin_secret: Some(admin_secret),
    };
    let emulator = Emulator::start(config).await?;
    let io = |action, source| EmulatorError::Io { action, path: port_file.display().to_string(), source };
    let mut temp = port_file.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = std::path::PathBuf::from(temp);
    std::fs::write(&temp, emulator.addr().port().to_string()).map_err(|e| io("writing", e))?;
    std::fs::rename(&temp, port_file).map_err(|e| io("renaming into", e))?;
    std::future::pending::<()>().await;
    drop(emulator);
    Ok(())
}

/// 32 random bytes from the kernel, as hex.
fn random_secret() -> Result<String, EmulatorError> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|source| EmulatorError::Io { action: "reading", path: "/dev/urandom".into(), source })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo drives the emulator from spawned tasks.
    #[allow(dead_code)]
    fn futures_are_send(emulator: &Emulator, repo: &RepoName) {
        fn send<T: Send>(_: T) {}
        send(Emulator::start(EmulatorConfig {
            root: PathBuf::new(),
            token: None,
            login: String::new(),
            admin_secret: None,
        }));
        send(emulator.commit_files(repo, "b", &[], "m"));
        send(emulator.open_pr(repo, "b", "main", "t"));
        send(emulator.open_pr("o/r", "b", "main", "t"));
        send(emulator.set_pr_head(repo, 1, ""));
        send(emulator.recompute_pr_merge(repo, 1));
        send(run_standalone(Path::new(""), Path::new(""), None, String::new()));
    }

    #[test]
    fn repositories_are_named_by_value_handle_or_text() {
        let name = RepoName::new("acme", "widget").unwrap();
        let handle = RepoHandle {
            repo: name.clone(),
            path: PathBuf::new(),
            clone_url: String::new(),
            html_url: String::new(),
            private: false,
            default_branch: "main".into(),
        };
        let text = String::from("acme/widget");
        for repo in [name.to_repo(), handle.to_repo(), "acme/widget".to_repo(), text.to_repo(), (&&name).to_repo()] {
            assert_eq!(repo.unwrap().as_ref(), &name);
        }
        assert_eq!("acme".to_repo(), Err(NameError::Shape("acme".into())));
    }
}
