//! The emulator's operations, shared by the Rust handle, the admin API and the REST API.
//!
//! The in-memory state sits behind a std `Mutex` that is never held across an `.await`;
//! git work on disk is serialized by one async lock so helpers and REST calls do not race.
//! Used by the handle and the handlers; uses `git`, `state` and the public data.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::error::EmulatorError;
use crate::git;
use crate::model::{
    ActionsJob, ActionsRun, CheckRun, EmulatedComment, Fault, JobStep, LoggedRequest, RepoHandle, RequiredChecksSource,
};
use crate::names::{RepoName, normalize_sha, validate_login};
use crate::state::{ActiveFault, CommentRec, PullRec, PullState, RepoRec, RequiredRec, RunRec, State, merge_json};

/// At most this many requests are kept in the log.
const MAX_LOGGED: usize = 100_000;

pub(crate) struct Core {
    pub root: PathBuf,
    pub token: Option<String>,
    pub login: String,
    /// `http://127.0.0.1:P`
    pub base_url: String,
    /// What every admin request must carry in `x-emulator-secret`.
    pub admin_secret: String,
    /// `http://127.0.0.1:Q`: the log host, a second listener standing for GitHub's log storage.
    pub log_base: String,
    state: Mutex<State>,
    git_lock: tokio::sync::Mutex<()>,
    /// Seconds the emulator's clock runs ahead of the system's: a test moves it on instead of
    /// sleeping until the next whole second (GitHub's times have whole seconds).
    clock_ahead: std::sync::atomic::AtomicI64,
}

fn not_found(what: impl std::fmt::Display) -> EmulatorError {
    EmulatorError::NotFound(what.to_string())
}

/// Why an action on an Actions run was refused; the REST API answers each as GitHub does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunRefusal {
    /// No such run in that repository (404).
    NotFound,
    /// A re-run of a run not completed yet (403 "This workflow is already running").
    Running,
    /// A re-run of failed jobs when none failed (403 "This workflow run cannot be retried").
    NothingToRetry,
    /// A cancel of a completed run (409).
    Completed,
}

/// Job conclusions that fail a run and that `rerun-failed-jobs` re-runs.
const FAILING: [&str; 4] = ["failure", "timed_out", "cancelled", "action_required"];

fn failing(conclusion: Option<&str>) -> bool {
    conclusion.is_some_and(|c| FAILING.contains(&c))
}

/// A job status before its runner picked it up.
fn not_started(status: &str) -> bool {
    matches!(status, "queued" | "waiting" | "pending" | "requested")
}

/// Derives a run's status and conclusion from its jobs, as GitHub does: completed once every
/// job is, failing if any job failed; in progress once any job started.
fn settle(run: &mut ActionsRun) {
    if run.jobs.is_empty() {
        return;
    }
    if run.jobs.iter().all(|job| job.status == "completed") {
        run.status = "completed".to_owned();
        let failed = run.jobs.iter().any(|job| failing(job.conclusion.as_deref()));
        run.conclusion = Some(if failed { "failure" } else { "success" }.to_owned());
    } else {
        let started = run.jobs.iter().any(|job| !not_started(&job.status));
        run.status = if started { "in_progress" } else { "queued" }.to_owned();
        run.conclusion = None;
    }
}

/// Steps left unnumbered (0) get their place, from 1.
fn number_steps(steps: Vec<JobStep>) -> Vec<JobStep> {
    let place = |i: usize| u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
    steps
        .into_iter()
        .enumerate()
        .map(|(i, step)| if step.number == 0 { JobStep { number: place(i), ..step } } else { step })
        .collect()
}

/// The job `job_id` of any Actions run, and that run (job ids are global, as on GitHub).
fn find_job(state: &mut State, job_id: u64) -> Option<(&mut ActionsRun, usize)> {
    state.actions_runs.values_mut().find_map(|rec| {
        let index = rec.run.jobs.iter().position(|job| job.id == Some(job_id))?;
        Some((&mut rec.run, index))
    })
}

impl Core {
    pub fn new(
        root: PathBuf,
        token: Option<String>,
        login: String,
        base_url: String,
        admin_secret: String,
        log_base: String,
    ) -> Self {
        Core {
            root,
            token,
            login,
            base_url,
            admin_secret,
            log_base,
            state: Mutex::new(State::default()),
            git_lock: tokio::sync::Mutex::new(()),
            clock_ahead: std::sync::atomic::AtomicI64::new(0),
        }
    }

    /// The emulator's time, as GitHub writes times: whole seconds, UTC.
    pub fn now(&self) -> String {
        let ahead = chrono::Duration::seconds(self.clock_ahead.load(std::sync::atomic::Ordering::SeqCst));
        (chrono::Utc::now() + ahead).format("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// Moves the emulator's clock `seconds` on.
    pub fn advance_clock(&self, seconds: i64) {
        self.clock_ahead.fetch_add(seconds, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn handle(&self, rec: &RepoRec) -> RepoHandle {
        RepoHandle {
            repo: rec.repo.clone(),
            path: rec.dir.clone(),
            clone_url: format!("{}/{}.git", self.base_url, rec.full_name()),
            html_url: format!("{}/{}", self.base_url, rec.full_name()),
            private: rec.private,
            default_branch: rec.default_branch.clone(),
        }
    }

    /// The directory and default branch of a live repository.
    pub fn repo_dir(&self, repo: &RepoName) -> Result<(PathBuf, String), EmulatorError> {
        let state = self.state();
        let rec = state.repos.get(&repo.key()).ok_or_else(|| not_found(format!("repository {repo}")))?;
        Ok((rec.dir.clone(), rec.default_branch.clone()))
    }

    pub async fn create_repo(
        &self,
        owner: &str,
        name: &str,
        private: bool,
        org: bool,
        initial_commit: bool,
    ) -> Result<RepoHandle, EmulatorError> {
        let repo = RepoName::new(owner, name)?;
        let _git = self.git_lock.lock().await;
        if self.state().repos.contains_key(&repo.key()) {
            return Err(EmulatorError::Exists(format!("repository {repo}")));
        }
        let dir = self.fresh_dir(&repo)?;
        git::init_bare(&self.root, &dir, "main").await?;
        if initial_commit {
            let readme = vec![("README.md".to_owned(), format!("# {name}\n").into_bytes())];
            git::commit_files(&dir, "main", None, &readme, "Initial commit").await?;
        }
        let mut state = self.state();
        let id = state.new_id();
        let rec = RepoRec {
            id,
            repo: repo.clone(),
            private,
            org,
            default_branch: "main".to_owned(),
            fork_of: None,
            next_number: 1,
            created_at: self.now(),
            dir,
        };
        let handle = self.handle(&rec);
        state.repos.insert(repo.key(), rec);
        Ok(handle)
    }

    pub async fn fork_repo(&self, source: &RepoName, owner: &str) -> Result<RepoHandle, EmulatorError> {
        let fork = RepoName::new(owner, source.name())?;
        let _git = self.git_lock.lock().await;
        let (src_dir, private, branch) = {
            let state = self.state();
            let src = state.repos.get(&source.key()).ok_or_else(|| not_found(format!("repository {source}")))?;
            if state.repos.contains_key(&fork.key()) {
                return Err(EmulatorError::Exists(format!("repository {fork}")));
            }
            (src.dir.clone(), src.private, src.default_branch.clone())
        };
        let dir = self.fresh_dir(&fork)?;
        git::clone_bare(&self.root, &src_dir, &dir).await?;
        let mut state = self.state();
        let id = state.new_id();
        let rec = RepoRec {
            id,
            repo: fork.clone(),
            private,
            org: false,
            default_branch: branch,
            fork_of: Some(source.key()),
            next_number: 1,
            created_at: self.now(),
            dir,
        };
        let handle = self.handle(&rec);
        state.repos.insert(fork.key(), rec);
        Ok(handle)
    }

    /// `<root>/<owner>/<name>.git`, which must not exist yet (deleted repositories are moved
    /// aside, so a namesake starts empty).
    fn fresh_dir(&self, repo: &RepoName) -> Result<PathBuf, EmulatorError> {
        let owner_dir = self.root.join(repo.owner());
        std::fs::create_dir_all(&owner_dir).map_err(|source| EmulatorError::Io {
            action: "creating",
            path: owner_dir.display().to_string(),
            source,
        })?;
        let dir = owner_dir.join(format!("{}.git", repo.name()));
        if dir.exists() {
            return Err(EmulatorError::Exists(format!("directory {}", dir.display())));
        }
        Ok(dir)
    }

    pub async fn delete_repo(&self, repo: &RepoName) -> Result<(), EmulatorError> {
        let _git = self.git_lock.lock().await;
        let rec = self.state().repos.remove(&repo.key()).ok_or_else(|| not_found(format!("repository {repo}")))?;
        let graveyard = self.root.join(".deleted");
        let target = graveyard.join(format!("{}-{}.git", rec.id, rec.repo.name()));
        std::fs::create_dir_all(&graveyard)
            .and_then(|_| std::fs::rename(&rec.dir, &target))
            .map_err(|source| EmulatorError::Io { action: "moving aside", path: rec.dir.display().to_string(), source })
    }

    pub async fn commit_files(
        &self,
        repo: &RepoName,
        branch: &str,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<String, EmulatorError> {
        if !git::valid_branch(branch) {
            return Err(EmulatorError::Invalid(format!("branch name {branch:?}")));
        }
        if let Some((bad, _)) = files.iter().find(|(path, _)| !git::valid_path(path)) {
            return Err(EmulatorError::Invalid(format!("file path {bad:?}")));
        }
        let (dir, default_branch) = self.repo_dir(repo)?;
        let sha = {
            let _git = self.git_lock.lock().await;
            git::commit_files(&dir, branch, Some(&default_branch), files, message).await?
        };
        self.sync_heads(repo).await?;
        Ok(sha)
    }

    pub async fn open_pr(
        &self,
        base: &RepoName,
        head: &RepoName,
        head_branch: &str,
        base_branch: &str,
        title: &str,
        draft: bool,
    ) -> Result<u64, EmulatorError> {
        let (base_dir, _) = self.repo_dir(base)?;
        let (head_dir, _) = self.repo_dir(head)?;
        let _git = self.git_lock.lock().await;
        let head_sha = git::rev_parse(&head_dir, &format!("refs/heads/{head_branch}"))
            .await
            .ok_or_else(|| not_found(format!("branch {head_branch} of {head}")))?;
        let base_sha = git::rev_parse(&base_dir, &format!("refs/heads/{base_branch}"))
            .await
            .ok_or_else(|| not_found(format!("branch {base_branch} of {base}")))?;
        let number = {
            let mut state = self.state();
            let rec = state.repos.get_mut(&base.key()).ok_or_else(|| not_found(format!("repository {base}")))?;
            let number = rec.next_number;
            rec.next_number += 1;
            number
        };
        self.point_pull_ref(&base_dir, &head_dir, number, &head_sha).await?;
        let merge = test_merge(&base_dir, number, base_branch, &head_sha).await;
        let base_sha = merge.base_sha.unwrap_or(base_sha);
        let mut state = self.state();
        let head_id =
            state.repos.get(&head.key()).map(|r| r.id).ok_or_else(|| not_found(format!("repository {head}")))?;
        let id = state.new_id();
        let created = self.now();
        state.pulls.insert(
            (base.key(), number),
            PullRec {
                id,
                number,
                title: title.to_owned(),
                author: self.login.clone(),
                head_repo: (head.key(), head_id),
                head_ref: head_branch.to_owned(),
                head_sha,
                base_ref: base_branch.to_owned(),
                base_sha,
                state: PullState::Open,
                merged: false,
                draft,
                created_at: created.clone(),
                updated_at: created,
                closed_at: None,
                merged_at: None,
                gets: 0,
                mergeable: merge.mergeable,
                merge_sha: merge.merge_sha,
            },
        );
        Ok(number)
    }

    /// Sets `refs/pull/N/head` in the base repository, copying the commit over from the head
    /// repository when it is not there yet (fork PRs).
    async fn point_pull_ref(
        &self,
        base_dir: &Path,
        head_dir: &Path,
        number: u64,
        sha: &str,
    ) -> Result<(), EmulatorError> {
        let name = format!("refs/pull/{number}/head");
        if git::rev_parse(base_dir, sha).await.is_some() {
            git::update_ref(base_dir, &name, sha).await
        } else if base_dir != head_dir && git::rev_parse(head_dir, sha).await.is_some() {
            git::push_commit(head_dir, base_dir, sha, &name).await
        } else {
            Err(not_found(format!("commit {sha}")))
        }
    }

    /// The head repository's directory of a PR, or the base's when the head repo is gone.
    fn pull_dirs(&self, repo: &RepoName, number: u64) -> Result<(PathBuf, PathBuf), EmulatorError> {
        let state = self.state();
        let pr =
            state.pulls.get(&(repo.key(), number)).ok_or_else(|| not_found(format!("pull request {repo}#{number}")))?;
        let base_dir = state.repos.get(&repo.key()).map(|r| r.dir.clone()).ok_or_else(|| not_found(repo))?;
        let head_dir = state
            .repos
            .get(&pr.head_repo.0)
            .filter(|r| r.id == pr.head_repo.1)
            .map(|r| r.dir.clone())
            .unwrap_or_else(|| base_dir.clone());
        Ok((base_dir, head_dir))
    }

    pub async fn set_pr_head(&self, repo: &RepoName, number: u64, sha: &str) -> Result<(), EmulatorError> {
        let sha =
            normalize_sha(sha).ok_or_else(|| EmulatorError::Invalid(format!("{sha:?} is not a 40-hex commit SHA")))?;
        let (base_dir, head_dir) = self.pull_dirs(repo, number)?;
        let base_branch = self.base_branch(repo, number)?;
        let merge = {
            let _git = self.git_lock.lock().await;
            self.point_pull_ref(&base_dir, &head_dir, number, &sha).await?;
            test_merge(&base_dir, number, &base_branch, &sha).await
        };
        let mut state = self.state();
        if let Some(pr) = state.pulls.get_mut(&(repo.key(), number)) {
            pr.head_sha = sha;
            pr.updated_at = self.now();
            merge.record(pr);
        }
        Ok(())
    }

    /// The base branch of PR `number`.
    fn base_branch(&self, repo: &RepoName, number: u64) -> Result<String, EmulatorError> {
        let state = self.state();
        let pr =
            state.pulls.get(&(repo.key(), number)).ok_or_else(|| not_found(format!("pull request {repo}#{number}")))?;
        Ok(pr.base_ref.clone())
    }

    /// Computes PR `number`'s test merge again, against its base branch's tip now: what GitHub
    /// does when asked (it does not when only the base branch moves). The merge commit, or
    /// `None` when the head does not merge (then there is no `refs/pull/N/merge`).
    pub async fn recompute_merge(&self, repo: &RepoName, number: u64) -> Result<Option<String>, EmulatorError> {
        let (base_dir, _) = self.pull_dirs(repo, number)?;
        let base_branch = self.base_branch(repo, number)?;
        let head = self.pr_head(repo, number).ok_or_else(|| not_found(format!("pull request {repo}#{number}")))?;
        let merge = {
            let _git = self.git_lock.lock().await;
            test_merge(&base_dir, number, &base_branch, &head).await
        };
        let merge_sha = merge.merge_sha.clone();
        if let Some(pr) = self.state().pulls.get_mut(&(repo.key(), number)) {
            merge.record(pr);
        }
        Ok(merge_sha)
    }

    /// PR `number`'s test merge commit (`refs/pull/N/merge`), if there is one.
    pub fn pr_merge(&self, repo: &RepoName, number: u64) -> Option<String> {
        self.state().pulls.get(&(repo.key(), number)).and_then(|pr| pr.merge_sha.clone())
    }

    pub fn pr_head(&self, repo: &RepoName, number: u64) -> Option<String> {
        self.state().pulls.get(&(repo.key(), number)).map(|pr| pr.head_sha.clone())
    }

    /// Moves the heads of open PRs whose head branch lives in `repo` to that branch's tip, as
    /// GitHub does after a push.
    pub async fn sync_heads(&self, repo: &RepoName) -> Result<(), EmulatorError> {
        let candidates: Vec<(String, u64, String, String, String)> = {
            let state = self.state();
            let Some(rec) = state.repos.get(&repo.key()) else { return Ok(()) };
            state
                .pulls
                .iter()
                .filter(|(_, pr)| pr.state == PullState::Open && pr.head_repo == (repo.key(), rec.id))
                .map(|((base, number), pr)| {
                    (base.clone(), *number, pr.head_ref.clone(), pr.head_sha.clone(), pr.base_ref.clone())
                })
                .collect()
        };
        let (head_dir, _) = self.repo_dir(repo)?;
        for (base_key, number, branch, old, base_branch) in candidates {
            let Some(tip) = git::rev_parse(&head_dir, &format!("refs/heads/{branch}")).await else { continue };
            if tip == old {
                continue;
            }
            let base_dir = match self.state().repos.get(&base_key) {
                Some(rec) => rec.dir.clone(),
                None => continue,
            };
            let merge = {
                let _git = self.git_lock.lock().await;
                self.point_pull_ref(&base_dir, &head_dir, number, &tip).await?;
                test_merge(&base_dir, number, &base_branch, &tip).await
            };
            if let Some(pr) = self.state().pulls.get_mut(&(base_key, number)) {
                pr.head_sha = tip;
                pr.updated_at = self.now();
                merge.record(pr);
            }
        }
        Ok(())
    }

    pub async fn delete_branch(&self, repo: &RepoName, branch: &str) -> Result<(), EmulatorError> {
        if !git::valid_branch(branch) {
            return Err(EmulatorError::Invalid(format!("branch name {branch:?}")));
        }
        let (dir, _) = self.repo_dir(repo)?;
        let _git = self.git_lock.lock().await;
        let name = format!("refs/heads/{branch}");
        if git::rev_parse(&dir, &name).await.is_none() {
            return Err(not_found(format!("branch {branch} of {repo}")));
        }
        git::delete_ref(&dir, &name).await
    }

    fn with_pull<T>(
        &self,
        repo: &RepoName,
        number: u64,
        f: impl FnOnce(&mut PullRec) -> T,
    ) -> Result<T, EmulatorError> {
        let mut state = self.state();
        let pr = state
            .pulls
            .get_mut(&(repo.key(), number))
            .ok_or_else(|| not_found(format!("pull request {repo}#{number}")))?;
        let result = f(pr);
        pr.updated_at = self.now();
        Ok(result)
    }

    pub fn set_pr_draft(&self, repo: &RepoName, number: u64, draft: bool) -> Result<(), EmulatorError> {
        self.with_pull(repo, number, |pr| pr.draft = draft)
    }

    pub fn close_pr(&self, repo: &RepoName, number: u64, merged: bool) -> Result<(), EmulatorError> {
        self.with_pull(repo, number, |pr| {
            let at = self.now();
            pr.state = PullState::Closed;
            pr.closed_at = Some(at.clone());
            if merged {
                pr.merged = true;
                pr.merged_at = Some(at);
            }
        })
    }

    pub fn set_check_runs(&self, sha: &str, runs: Vec<CheckRun>) -> Result<(), EmulatorError> {
        let sha =
            normalize_sha(sha).ok_or_else(|| EmulatorError::Invalid(format!("{sha:?} is not a 40-hex commit SHA")))?;
        let mut state = self.state();
        let now = self.now();
        let runs = runs.into_iter().map(|run| stamp(&mut state, run, &now)).collect();
        state.check_runs.insert(sha, runs);
        Ok(())
    }

    /// Adds one check run to commit `sha` (a re-run when the name is already there); its id.
    pub fn publish_check_run(&self, sha: &str, run: CheckRun) -> Result<u64, EmulatorError> {
        let sha =
            normalize_sha(sha).ok_or_else(|| EmulatorError::Invalid(format!("{sha:?} is not a 40-hex commit SHA")))?;
        let mut state = self.state();
        let run = stamp(&mut state, run, &self.now());
        let id = run.id.unwrap_or_default();
        state.check_runs.entry(sha).or_default().push(run);
        Ok(id)
    }

    /// Records an Actions run in `repo` and publishes each job as a check run on its head
    /// (ids assigned where unset); the run's id.
    pub fn create_actions_run(&self, repo: &RepoName, mut run: ActionsRun) -> Result<u64, EmulatorError> {
        let sha = normalize_sha(&run.head_sha)
            .ok_or_else(|| EmulatorError::Invalid(format!("{:?} is not a 40-hex commit SHA", run.head_sha)))?;
        run.head_sha = sha.clone();
        if run.event.is_empty() {
            run.event = "push".to_owned();
        }
        let mut state = self.state();
        let key = repo.key();
        if !state.repos.contains_key(&key) {
            return Err(not_found(format!("repository {repo}")));
        }
        let id = state.new_id();
        for job in &mut run.jobs {
            let job_id = match job.id {
                Some(job_id) => job_id,
                None => state.new_id(),
            };
            job.id = Some(job_id);
            job.steps = number_steps(std::mem::take(&mut job.steps));
            let check = CheckRun {
                name: job.name.clone(),
                status: job.status.clone(),
                conclusion: job.conclusion.clone(),
                started_at: job.started_at.clone(),
                completed_at: job.completed_at.clone(),
                job_id: Some(job_id),
                ..CheckRun::default()
            };
            let check = stamp(&mut state, check, &self.now());
            job.started_at = check.started_at.clone();
            job.completed_at = check.completed_at.clone();
            state.check_runs.entry(sha.clone()).or_default().push(check);
        }
        state.actions_runs.insert(id, RunRec { repo_key: key, run, attempt: 1 });
        Ok(id)
    }

    /// Moves check run `id` on: its status, and its conclusion once `completed` (times stamped).
    /// A check run of an Actions job moves that job the same way, and its run with it, so the
    /// checks and Actions APIs never disagree.
    pub fn update_check_run(&self, id: u64, status: &str, conclusion: Option<&str>) -> Result<(), EmulatorError> {
        let mut state = self.state();
        let run = state
            .check_runs
            .values_mut()
            .flat_map(|runs| runs.iter_mut())
            .find(|run| run.id == Some(id))
            .ok_or_else(|| not_found(format!("check run {id}")))?;
        run.status = status.to_owned();
        run.conclusion = conclusion.map(str::to_owned);
        if status != "queued" && run.started_at.is_none() {
            run.started_at = Some(self.now());
        }
        if status == "completed" && run.completed_at.is_none() {
            run.completed_at = Some(self.now());
        }
        let (job_id, started_at, completed_at) = (run.job_id, run.started_at.clone(), run.completed_at.clone());
        if let Some((actions_run, index)) = job_id.and_then(|job_id| find_job(&mut state, job_id)) {
            if let Some(job) = actions_run.jobs.get_mut(index) {
                job.status = status.to_owned();
                job.conclusion = conclusion.map(str::to_owned);
                job.started_at = started_at;
                job.completed_at = completed_at;
            }
            settle(actions_run);
        }
        Ok(())
    }

    /// Replaces the steps of Actions job `job_id`, so a scripted CI can say which step failed;
    /// a step numbered 0 is numbered by its place (from 1).
    pub fn set_job_steps(&self, job_id: u64, steps: Vec<JobStep>) -> Result<(), EmulatorError> {
        let mut state = self.state();
        let (run, index) = find_job(&mut state, job_id).ok_or_else(|| not_found(format!("Actions job {job_id}")))?;
        let job = run.jobs.get_mut(index).ok_or_else(|| not_found(format!("Actions job {job_id}")))?;
        job.steps = number_steps(steps);
        Ok(())
    }

    /// `rerun-failed-jobs`: each failing job of a completed run becomes a new queued job with a
    /// new id, published as a new check run on the same commit (the old check run stays, as on
    /// GitHub); the run is queued again, one attempt further. The new job ids.
    pub fn rerun_failed_jobs(&self, repo: &RepoName, run_id: u64) -> Result<Vec<u64>, RunRefusal> {
        let mut state = self.state();
        let rec =
            state.actions_runs.get(&run_id).filter(|rec| rec.repo_key == repo.key()).ok_or(RunRefusal::NotFound)?;
        if rec.run.status != "completed" {
            return Err(RunRefusal::Running);
        }
        let retry: Vec<usize> = rec
            .run
            .jobs
            .iter()
            .enumerate()
            .filter(|(_, job)| failing(job.conclusion.as_deref()))
            .map(|(index, _)| index)
            .collect();
        if retry.is_empty() {
            return Err(RunRefusal::NothingToRetry);
        }
        let sha = rec.run.head_sha.clone();
        let new_ids: Vec<u64> = retry.iter().map(|_| state.new_id()).collect();
        let rec = state.actions_runs.get_mut(&run_id).ok_or(RunRefusal::NotFound)?;
        let mut published = Vec::new();
        for (&index, &new_id) in retry.iter().zip(&new_ids) {
            let Some(job) = rec.run.jobs.get_mut(index) else { continue };
            *job = ActionsJob {
                id: Some(new_id),
                name: job.name.clone(),
                status: "queued".to_owned(),
                ..ActionsJob::default()
            };
            published.push(CheckRun {
                name: job.name.clone(),
                status: "queued".to_owned(),
                id: Some(new_id),
                job_id: Some(new_id),
                ..CheckRun::default()
            });
        }
        rec.run.status = "queued".to_owned();
        rec.run.conclusion = None;
        rec.attempt = rec.attempt.saturating_add(1);
        state.check_runs.entry(sha).or_default().extend(published);
        state.reruns.push(run_id);
        Ok(new_ids)
    }

    /// `cancel`: every job not completed yet (and its check run and unfinished steps) ends
    /// `cancelled`, and so does the run.
    pub fn cancel_run(&self, repo: &RepoName, run_id: u64) -> Result<(), RunRefusal> {
        let mut state = self.state();
        let rec =
            state.actions_runs.get_mut(&run_id).filter(|rec| rec.repo_key == repo.key()).ok_or(RunRefusal::NotFound)?;
        if rec.run.status == "completed" {
            return Err(RunRefusal::Completed);
        }
        let at = self.now();
        let mut cancelled = Vec::new();
        for job in rec.run.jobs.iter_mut().filter(|job| job.status != "completed") {
            job.status = "completed".to_owned();
            job.conclusion = Some("cancelled".to_owned());
            job.started_at.get_or_insert_with(|| at.clone());
            job.completed_at = Some(at.clone());
            for step in job.steps.iter_mut().filter(|step| step.status != "completed") {
                step.status = "completed".to_owned();
                step.conclusion = Some("cancelled".to_owned());
                step.completed_at = Some(at.clone());
            }
            cancelled.extend(job.id);
        }
        rec.run.status = "completed".to_owned();
        rec.run.conclusion = Some("cancelled".to_owned());
        let sha = rec.run.head_sha.clone();
        let checks = state.check_runs.get_mut(&sha).into_iter().flatten();
        for check in checks.filter(|c| c.status != "completed" && c.job_id.is_some_and(|j| cancelled.contains(&j))) {
            check.status = "completed".to_owned();
            check.conclusion = Some("cancelled".to_owned());
            check.started_at.get_or_insert_with(|| at.clone());
            check.completed_at = Some(at.clone());
        }
        Ok(())
    }

    pub fn reruns(&self) -> Vec<u64> {
        self.state().reruns.clone()
    }

    /// Every check run of commit `sha`, oldest first (re-runs included).
    pub fn check_runs(&self, sha: &str) -> Vec<CheckRun> {
        let Some(sha) = normalize_sha(sha) else { return Vec::new() };
        self.state().check_runs.get(&sha).cloned().unwrap_or_default()
    }

    /// Sets the status checks `branch` of `repo` requires through `source`; no contexts
    /// removes them (the branch is then unprotected by that source).
    pub fn set_required_checks(
        &self,
        repo: &RepoName,
        branch: &str,
        contexts: Vec<String>,
        source: RequiredChecksSource,
    ) -> Result<(), EmulatorError> {
        if branch.is_empty() {
            return Err(EmulatorError::Invalid("an empty branch name".to_owned()));
        }
        let mut state = self.state();
        if !state.repos.contains_key(&repo.key()) {
            return Err(not_found(format!("repository {repo}")));
        }
        let key = (repo.key(), branch.to_owned(), source);
        if contexts.is_empty() {
            state.required_checks.remove(&key);
            return Ok(());
        }
        let ruleset_id = match state.required_checks.get(&key) {
            Some(rec) => rec.ruleset_id,
            None => state.required_checks.values().map(|rec| rec.ruleset_id).max().unwrap_or(0).saturating_add(1),
        };
        state.required_checks.insert(key, RequiredRec { contexts, ruleset_id });
        Ok(())
    }

    pub fn add_comment(&self, repo: &RepoName, number: u64, author: &str, body: &str) -> Result<u64, EmulatorError> {
        validate_login(author).map_err(|e| EmulatorError::Invalid(format!("author: {e}")))?;
        let mut state = self.state();
        if !state.pulls.contains_key(&(repo.key(), number)) {
            return Err(not_found(format!("pull request {repo}#{number}")));
        }
        let id = state.new_id();
        let at = self.now();
        state.comments.insert(
            id,
            CommentRec {
                id,
                repo_key: repo.key(),
                number,
                author: author.to_owned(),
                body: body.to_owned(),
                created_at: at.clone(),
                updated_at: at,
            },
        );
        Ok(id)
    }

    pub fn comments(&self, repo: &RepoName, number: u64) -> Vec<EmulatedComment> {
        let state = self.state();
        let key = repo.key();
        state
            .comments
            .values()
            .filter(|c| c.repo_key == key && c.number == number)
            .map(|c| state.emulated_comment(c))
            .collect()
    }

    pub fn override_pr_json(
        &self,
        repo: &RepoName,
        number: u64,
        patch: serde_json::Value,
    ) -> Result<(), EmulatorError> {
        let mut state = self.state();
        let key = (repo.key(), number);
        if !state.pulls.contains_key(&key) {
            return Err(not_found(format!("pull request {repo}#{number}")));
        }
        let slot = state.overrides.entry(key).or_insert_with(|| serde_json::json!({}));
        merge_json(slot, &patch);
        Ok(())
    }

    /// Sets the log text of Actions job `job_id` (job ids are global, as on GitHub).
    pub fn set_job_log(&self, job_id: u64, text: String) {
        self.state().job_logs.insert(job_id, text);
    }

    /// The signature of a job log's URL on the log host: GitHub's log URLs are signed and need
    /// no credentials; this one is derived from the per-run secret.
    pub fn log_signature(&self, job_id: u64) -> String {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        (self.admin_secret.as_str(), job_id).hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }

    pub fn dispatches(&self) -> Vec<crate::model::WorkflowDispatch> {
        self.state().dispatches.clone()
    }

    pub fn log_requests(&self) -> Vec<crate::model::LogHostRequest> {
        self.state().log_requests.clone()
    }

    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.state().requests.clone()
    }

    pub fn clear_requests(&self) {
        self.state().requests.clear();
    }

    /// Starts a log entry; [`Core::finish_request`] fills in the status and size.
    pub fn log_request(&self, method: &str, path: &str, query: &str, credentials: bool) -> u64 {
        let mut state = self.state();
        state.next_request += 1;
        let seq = state.next_request;
        if state.requests.len() >= MAX_LOGGED {
            state.requests.remove(0);
        }
        state.requests.push(LoggedRequest {
            method: method.to_owned(),
            path: path.to_owned(),
            query: query.to_owned(),
            status: 0,
            credentials,
            response_bytes: 0,
            seq,
        });
        seq
    }

    pub fn finish_request(&self, seq: u64, status: u16, response_bytes: u64) {
        let mut state = self.state();
        if let Some(entry) = state.requests.iter_mut().rev().find(|r| r.seq == seq) {
            entry.status = status;
            entry.response_bytes = response_bytes;
        }
    }

    pub fn inject(&self, fault: Fault) {
        let remaining = match &fault {
            Fault::Status { times, .. }
            | Fault::RateLimit { times, .. }
            | Fault::SecondaryRateLimit { times, .. }
            | Fault::Delay { times, .. } => *times,
            Fault::MovePrHead { after_gets, .. } => (*after_gets).max(1),
        };
        self.state().faults.push(ActiveFault { fault, remaining });
    }
}

/// What computing a PR's test merge found.
struct TestMerge {
    /// The base branch's tip it was computed against (`None`: the branch is gone).
    base_sha: Option<String>,
    /// `None`: not computed (no base branch, or git failed), as GitHub's `null`.
    mergeable: Option<bool>,
    merge_sha: Option<String>,
}

impl TestMerge {
    /// Keeps it in the PR's record (its `base.sha` becomes the tip the merge was made with).
    fn record(self, pr: &mut PullRec) {
        if let Some(base) = self.base_sha {
            pr.base_sha = base;
        }
        pr.mergeable = self.mergeable;
        pr.merge_sha = self.merge_sha;
    }
}

/// Computes PR `number`'s test merge as GitHub does when the PR is opened and whenever its head
/// changes: `head` merged into `base_branch`'s tip now with git's own algorithm, kept at
/// `refs/pull/N/merge` (a normal ref, served over smart HTTP like the others), which is deleted
/// when they conflict. A base branch that later moves leaves the merge as it was (stale) until
/// [`Core::recompute_merge`]. Call with the git lock held.
async fn test_merge(base_dir: &Path, number: u64, base_branch: &str, head: &str) -> TestMerge {
    let name = format!("refs/pull/{number}/merge");
    let base = git::rev_parse(base_dir, &format!("refs/heads/{base_branch}")).await;
    let computed = match &base {
        Some(base) => git::test_merge(base_dir, base, head).await.ok(),
        None => None,
    };
    let (mergeable, merge_sha) = match computed {
        Some(Some(merge)) if git::update_ref(base_dir, &name, &merge).await.is_ok() => (Some(true), Some(merge)),
        Some(None) => (Some(false), None),
        _ => (None, None),
    };
    if merge_sha.is_none() {
        // No merge (or none computed): no stale one left behind either. Deleting a ref that is
        // not there succeeds.
        let _ = git::delete_ref(base_dir, &name).await;
    }
    TestMerge { base_sha: base, mergeable, merge_sha }
}

/// A check run as stored: its id (the job's, for an Actions job) and its times filled in.
fn stamp(state: &mut State, mut run: CheckRun, now: &str) -> CheckRun {
    if run.id.is_none() {
        run.id = Some(match run.job_id {
            Some(job) => job,
            None => state.new_id(),
        });
    }
    if run.status != "queued" && run.started_at.is_none() {
        run.started_at = Some(now.to_owned());
    }
    if run.status == "completed" && run.completed_at.is_none() {
        run.completed_at = Some(now.to_owned());
    }
    run
}
