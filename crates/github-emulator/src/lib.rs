//! **GitHub emulator** — test and demo infrastructure, not GitHub. forgeloop's test suite and
//! `forgeloop demo` (design §9) use it; the product's GitHub adapter never does, and this crate
//! knows nothing of forgeloop.
//!
//! One HTTP server on 127.0.0.1 serving three things:
//! * the REST subset forgeloop's GitHub client calls (`GET /user`, `GET /repos/{o}/{r}`,
//!   `GET /repos/{o}/{r}/pulls/{n}` (with `Accept: application/vnd.github[.v3].diff` the PR's
//!   unified diff from the merge base, `git diff --full-index -M`, and with `.patch` its
//!   `format-patch` series), `GET /repos/{o}/{r}/pulls/{n}/files` (paginated, at most 3000),
//!   `GET /repos/{o}/{r}/compare/{base}...{head}` (or `..`; branches, tags or SHAs; `status`,
//!   `ahead_by`, `behind_by`, `merge_base_commit`, `commits`, `files`, or the diff by `Accept`),
//!   `GET|POST /repos/{o}/{r}/issues/{n}/comments` with
//!   `per_page`/`page` and `Link` headers, `PATCH /repos/{o}/{r}/issues/comments/{id}`,
//!   `POST /user/repos`, `POST /orgs/{org}/repos`, `GET /repos/{o}/{r}/commits/{sha}/check-runs`
//!   (`check_name`, `filter=latest|all`: the latest is a name's last run set; an `ETag`, and
//!   `304 Not Modified` without a body for a matching `If-None-Match`), `GET /rate_limit`), with
//!   GitHub's status codes and error JSON; an `/api/v3` prefix is accepted as on GitHub
//!   Enterprise. `GET /repos/{o}/{r}/actions/jobs/{id}/logs` answers `302` to a signed URL on
//!   a second listener, the log host (GitHub's log storage), which serves the text without
//!   credentials and records every request's header names
//!   ([`Emulator::log_host_requests`]). `GET /repos/{o}/{r}/commits/{sha}/check-suites` (one
//!   suite per app, with an `ETag` too), `GET /repos/{o}/{r}/actions/runs/{id}` and its `/jobs`
//!   (with `steps`, both with an `ETag`) serve what [`Emulator::create_actions_run`] scripted;
//!   [`Emulator::update_check_run`] on a job's check run moves the job and its run too.
//!   `POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs` (`201`; each failed job becomes a
//!   new queued job and check run with a new id; recorded, [`Emulator::reruns`]) and `/cancel`
//!   (`202`) act on a run. `GET /repos/{o}/{r}/branches/{b}/protection/required_status_checks`
//!   and `GET /repos/{o}/{r}/rules/branches/{b}` (a branch raw or `%2F`-encoded) serve what
//!   [`Emulator::set_required_checks`] set. `POST /repos/{o}/{r}/actions/workflows/{id}/dispatches`
//!   (`{"ref","inputs"}`, `ref` a branch or tag) answers `204`, is recorded
//!   ([`Emulator::dispatches`]) and starts a queued Actions run on the ref's commit. Every API answer carries `x-ratelimit-*` headers counting the answers so far
//!   (a 304 is not counted, as on GitHub; the emulator never refuses for the count);
//! * smart-HTTP git at `/{o}/{r}.git` through `git http-backend`: public repositories are
//!   readable anonymously, private ones and every push need HTTP Basic auth with the token as
//!   password; pushes move the heads of open PRs from that branch;
//! * an admin JSON API under `/_emulator/` mirroring the [`Emulator`] helpers (the table is in
//!   `admin.rs`), so other processes (Python, tmux tests) can drive it. Every admin request
//!   needs the per-run secret ([`Emulator::admin_secret`]) in [`ADMIN_SECRET_HEADER`], `Host`
//!   `127.0.0.1:PORT`, no `Origin`, and a JSON body type on writes: no other local user and no
//!   web page can push code through it.
//!
//! Bare repositories live on disk at `<root>/<owner>/<repo>.git`; the emulator keeps each PR's
//! `refs/pull/N/head` in its base repository, as GitHub does, and its test merge
//! `refs/pull/N/merge`: the head merged into the base branch's tip with git's own algorithm
//! (`git merge-tree --write-tree`, then `git commit-tree` with the parents base tip, head),
//! computed when the PR is opened and whenever its head changes, deleted when they conflict,
//! with `mergeable` (`true`/`false`) and `merge_commit_sha` in the PR's JSON. As on GitHub, a
//! base branch that moves leaves the merge ref stale until it is recomputed on request
//! ([`Emulator::recompute_pr_merge`]). Everything else is in memory.
//!
//! ```no_run
//! # async fn f() -> Result<(), github_emulator::EmulatorError> {
//! use github_emulator::{Emulator, EmulatorConfig};
//! let emulator = Emulator::start(EmulatorConfig {
//!     root: "/tmp/emulator".into(),
//!     token: Some("secret".into()),
//!     login: "octocat".into(),
//!     admin_secret: None,
//! })
//! .await?;
//! let repo = emulator.create_repo("octocat", "widget", true).await?;
//! emulator.commit_files(&repo, "fix", &[("README.md", "# widget\n")], "Fix").await?;
//! let number = emulator.open_pr(&repo, "fix", "main", "Fix").await?;
//! assert_eq!(emulator.comments("octocat/widget", number).len(), 0);
//! # Ok(()) }
//! ```
//!
//! Modules, each using only those after it: `emulator` (the handle) → `server` (accept loop,
//! request log, faults, dispatch) → the handlers `admin`, `api`, `git_http` → `http_util` (response
//! builders, body reading), `ops` (the operations), `diff` (changes between commits, for
//! `api`) → `git` (the git CLI), `state` (the
//! in-memory world and its JSON) → `model` (public data), `error` → `names` (GitHub's rules).

mod admin;
mod api;
mod diff;
mod emulator;
mod error;
mod git;
mod git_http;
mod http_util;
mod model;
mod names;
mod ops;
mod server;
mod state;

pub use emulator::{AsRepo, Emulator, run_standalone};
pub use error::EmulatorError;
pub use model::{
    ADMIN_SECRET_HEADER, ActionsJob, ActionsRun, CheckOutput, CheckRun, DEFAULT_LOGIN, EmulatedComment, EmulatorConfig,
    Fault, JobStep, LogHostRequest, LoggedRequest, RepoHandle, RequiredChecksSource, WorkflowDispatch,
};
pub use names::{NameError, RepoName};
