//! The emulator's admin JSON API under `/_emulator/`, for processes that cannot call the Rust
//! handle (Python or tmux tests, `forgeloop github-emulator`). It can push code that
//! `forgeloop demo` then runs, so 127.0.0.1 is not enough: [`refusal`] answers 403 to a request
//! without the per-run secret in `x-emulator-secret` (another local user), with an `Origin` or
//! `Sec-Fetch-Site` header (a web page), with a `Host` other than the bound `127.0.0.1:PORT`
//! (DNS rebinding), or a write whose `Content-Type` is not `application/json` (a form post).
//! Errors are `{"error": "..."}` with 400/403/404/422/500.
//! A handler: the server calls it; it uses `ops` and `http_util`.
//!
//! | request | body | answer |
//! |---|---|---|
//! | `GET /_emulator/health` | | `{"emulator":true,"api_base","web_host","login"}` |
//! | `POST /_emulator/repos` | `{"owner","name","private"}` | repo |
//! | `POST /_emulator/repos/{o}/{r}/fork` | `{"owner"}` | repo |
//! | `DELETE /_emulator/repos/{o}/{r}` | | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/commits` | `{"branch","files":{"path":"contents"},"message"}` | `{"sha"}` |
//! | `POST /_emulator/repos/{o}/{r}/delete-branch` | `{"branch"}` | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/pulls` | `{"head","base","title","head_repo"?,"draft"?}` | `{"number"}` |
//! | `POST /_emulator/repos/{o}/{r}/pulls/{n}/head` | `{"sha"}` | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/pulls/{n}/close` · `/merge` | | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/pulls/{n}/draft` | `{"draft"}` | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/pulls/{n}/merge-ref` | | `{"merge_sha"}` (`null`: conflicts) |
//! | `POST /_emulator/repos/{o}/{r}/pulls/{n}/override` | any JSON to merge into the PR | `{}` |
//! | `GET /_emulator/repos/{o}/{r}/pulls/{n}` | | `{"head_sha"}` |
//! | `GET`·`POST /_emulator/repos/{o}/{r}/issues/{n}/comments` | POST: `{"author","body"}` | list / `{"id"}` |
//! | `POST /_emulator/check-runs` | `{"sha","runs":[{"name","status","conclusion"}]}` | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/actions-runs` | an [`ActionsRun`] (`{"name","head_sha","status","jobs":[{"name","status","steps":[...]}]}`) | `{"id"}` |
//! | `POST /_emulator/check-runs/publish` | `{"sha","run":{"name","status","conclusion"?,"job_id"?,"started_at"?,"output"?...}}` | `{"id"}` |
//! | `POST /_emulator/check-runs/{id}` | `{"status","conclusion"?}` | `{}` |
//! | `POST /_emulator/jobs/{id}/steps` | `{"steps":[{"name","status","conclusion"?,"number"?}]}` | `{}` |
//! | `POST /_emulator/repos/{o}/{r}/required-checks` | `{"branch","contexts":[...],"source"?:"branch_protection"\|"ruleset"}` | `{}` |
//! | `GET /_emulator/reruns` | | list of run ids |
//! | `POST /_emulator/job-logs` | `{"job_id","text"}` | `{}` |
//! | `GET /_emulator/log-host-requests` | | list of `{"method","path","header_names","status"}` |
//! | `GET /_emulator/dispatches` | | list of `{"repo","workflow","ref","inputs","run_id"}` |
//! | `POST /_emulator/faults` | a [`Fault`] as JSON (`{"kind":"status",...}`) | `{}` |
//! | `GET`·`DELETE /_emulator/requests` | | list / `{}` |

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::EmulatorError;
use crate::http_util::{Resp, json_response};
use crate::model::{ADMIN_SECRET_HEADER, ActionsRun, CheckRun, Fault, JobStep, RepoHandle, RequiredChecksSource};
use crate::names::RepoName;
use crate::ops::Core;

/// The 403 to answer instead of serving an admin request, if it is not from a holder of the
/// secret talking to the bound address without a browser in between.
pub(crate) fn refusal(core: &Core, method: &Method, headers: &HeaderMap) -> Option<Resp> {
    let refuse = |why: &str| Some(json_response(StatusCode::FORBIDDEN, &json!({ "error": why })));
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    if header("origin").is_some() || header("sec-fetch-site").is_some() {
        return refuse("the admin API refuses requests from web pages (an Origin or Sec-Fetch-Site header)");
    }
    let bound = core.base_url.trim_start_matches("http://");
    if header("host") != Some(bound) {
        return refuse(&format!("the admin API answers only requests whose Host is {bound}, the bound address"));
    }
    let writes = !matches!(*method, Method::GET | Method::HEAD);
    let json_body = header("content-type")
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"));
    if writes && !json_body {
        return refuse("admin writes need Content-Type: application/json");
    }
    let secret_ok = header(ADMIN_SECRET_HEADER).is_some_and(|given| same_secret(given, &core.admin_secret));
    if !secret_ok {
        return refuse(&format!("the admin API needs this run's secret in the {ADMIN_SECRET_HEADER} header"));
    }
    None
}

/// Compares without stopping at the first difference, so timing does not reveal a prefix.
fn same_secret(given: &str, secret: &str) -> bool {
    use subtle::ConstantTimeEq;
    given.as_bytes().ct_eq(secret.as_bytes()).into()
}

pub(crate) async fn handle(core: &Arc<Core>, method: &Method, path: &str, _query: &str, body: Bytes) -> Resp {
    let segments: Vec<&str> = path.trim_start_matches("/_emulator").trim_start_matches('/').split('/').collect();
    match route(core, method, &segments, &body).await {
        Ok(value) => json_response(StatusCode::OK, &value),
        Err(AdminError::Emulator(e)) => {
            let status = match &e {
                EmulatorError::NotFound(_) => StatusCode::NOT_FOUND,
                EmulatorError::Exists(_) => StatusCode::UNPROCESSABLE_ENTITY,
                EmulatorError::Invalid(_) | EmulatorError::Name(_) => StatusCode::BAD_REQUEST,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            json_response(status, &json!({ "error": e.to_string() }))
        }
        Err(AdminError::BadRequest(message)) => json_response(StatusCode::BAD_REQUEST, &json!({ "error": message })),
        Err(AdminError::NoRoute) => json_response(
            StatusCode::NOT_FOUND,
            &json!({ "error": format!("no emulator admin route {method} {path}") }),
        ),
    }
}

enum AdminError {
    Emulator(EmulatorError),
    BadRequest(String),
    NoRoute,
}

impl From<EmulatorError> for AdminError {
    fn from(e: EmulatorError) -> Self {
        AdminError::Emulator(e)
    }
}

fn input<T: for<'de> Deserialize<'de>>(body: &Bytes) -> Result<T, AdminError> {
    let body: &[u8] = if body.is_empty() { b"{}" } else { body };
    serde_json::from_slice(body).map_err(|e| AdminError::BadRequest(format!("bad JSON body: {e}")))
}

fn repo(owner: &str, name: &str) -> Result<RepoName, AdminError> {
    RepoName::new(owner, name).map_err(|e| AdminError::BadRequest(e.to_string()))
}

fn number(text: &str) -> Result<u64, AdminError> {
    text.parse().map_err(|_| AdminError::BadRequest(format!("bad number {text:?}")))
}

fn repo_json(handle: &RepoHandle) -> Value {
    json!({
        "full_name": handle.repo.full_name(), "path": handle.path, "clone_url": handle.clone_url,
        "html_url": handle.html_url, "private": handle.private, "default_branch": handle.default_branch,
    })
}

#[derive(Deserialize)]
struct NewRepo {
    owner: String,
    name: String,
    #[serde(default)]
    private: bool,
}

#[derive(Deserialize)]
struct Owner {
    owner: String,
}

#[derive(Deserialize)]
struct Commit {
    branch: String,
    files: std::collections::BTreeMap<String, String>,
    #[serde(default = "default_message")]
    message: String,
}

fn default_message() -> String {
    "Update files".to_owned()
}

#[derive(Deserialize)]
struct Branch {
    branch: String,
}

#[derive(Deserialize)]
struct NewPull {
    head: String,
    base: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    head_repo: Option<String>,
    #[serde(default)]
    draft: bool,
}

#[derive(Deserialize)]
struct Sha {
    sha: String,
}

#[derive(Deserialize)]
struct Draft {
    draft: bool,
}

#[derive(Deserialize)]
struct NewComment {
    author: String,
    body: String,
}

#[derive(Deserialize)]
struct Publish {
    sha: String,
    run: CheckRun,
}

#[derive(Deserialize)]
struct Update {
    status: String,
    #[serde(default)]
    conclusion: Option<String>,
}

#[derive(Deserialize)]
struct JobLog {
    job_id: u64,
    text: String,
}

#[derive(Deserialize)]
struct Steps {
    steps: Vec<JobStep>,
}

#[derive(Deserialize)]
struct Required {
    branch: String,
    contexts: Vec<String>,
    #[serde(default)]
    source: RequiredChecksSource,
}

#[derive(Deserialize)]
struct Checks {
    sha: String,
    runs: Vec<CheckRun>,
}

async fn route(core: &Arc<Core>, method: &Method, segments: &[&str], body: &Bytes) -> Result<Value, AdminError> {
    let done = || Ok(json!({}));
    match (method, segments) {
        (&Method::GET, ["health"]) => Ok(json!({
            "emulator": true, "api_base": core.base_url,
            "web_host": core.base_url.trim_start_matches("http://"), "login": core.login,
        })),
        (&Method::POST, ["repos"]) => {
            let new: NewRepo = input(body)?;
            let org = !new.owner.eq_ignore_ascii_case(&core.login);
            Ok(repo_json(&core.create_repo(&new.owner, &new.name, new.private, org, true).await?))
        }
        (&Method::POST, ["repos", o, r, "fork"]) => {
            let fork: Owner = input(body)?;
            Ok(repo_json(&core.fork_repo(&repo(o, r)?, &fork.owner).await?))
        }
        (&Method::DELETE, ["repos", o, r]) => {
            core.delete_repo(&repo(o, r)?).await?;
            done()
        }
        (&Method::POST, ["repos", o, r, "commits"]) => {
            let commit: Commit = input(body)?;
            let files: Vec<(String, Vec<u8>)> = commit.files.into_iter().map(|(p, c)| (p, c.into_bytes())).collect();
            let sha = core.commit_files(&repo(o, r)?, &commit.branch, &files, &commit.message).await?;
            Ok(json!({ "sha": sha }))
        }
        (&Method::POST, ["repos", o, r, "delete-branch"]) => {
            let branch: Branch = input(body)?;
            core.delete_branch(&repo(o, r)?, &branch.branch).await?;
            done()
        }
        (&Method::POST, ["repos", o, r, "pulls"]) => {
            let new: NewPull = input(body)?;
            let base = repo(o, r)?;
            let head = match &new.head_repo {
                Some(full) => RepoName::parse(full).map_err(|e| AdminError::BadRequest(e.to_string()))?,
                None => base.clone(),
            };
            let number = core.open_pr(&base, &head, &new.head, &new.base, &new.title, new.draft).await?;
            Ok(json!({ "number": number }))
        }
        (&Method::GET, ["repos", o, r, "pulls", n]) => {
            let head = core.pr_head(&repo(o, r)?, number(n)?);
            head.map(|sha| json!({ "head_sha": sha }))
                .ok_or(AdminError::Emulator(EmulatorError::NotFound(format!("pull request {o}/{r}#{n}"))))
        }
        (&Method::POST, ["repos", o, r, "pulls", n, "merge-ref"]) => {
            let merge = core.recompute_merge(&repo(o, r)?, number(n)?).await?;
            Ok(json!({ "merge_sha": merge }))
        }
        (&Method::POST, ["repos", o, r, "pulls", n, action]) => {
            let (repo, n) = (repo(o, r)?, number(n)?);
            match *action {
                "head" => core.set_pr_head(&repo, n, &input::<Sha>(body)?.sha).await?,
                "close" => core.close_pr(&repo, n, false)?,
                "merge" => core.close_pr(&repo, n, true)?,
                "draft" => core.set_pr_draft(&repo, n, input::<Draft>(body)?.draft)?,
                "override" => core.override_pr_json(&repo, n, input::<Value>(body)?)?,
                _ => return Err(AdminError::NoRoute),
            }
            done()
        }
        (&Method::GET, ["repos", o, r, "issues", n, "comments"]) => Ok(json!(core.comments(&repo(o, r)?, number(n)?))),
        (&Method::POST, ["repos", o, r, "issues", n, "comments"]) => {
            let new: NewComment = input(body)?;
            Ok(json!({ "id": core.add_comment(&repo(o, r)?, number(n)?, &new.author, &new.body)? }))
        }
        (&Method::POST, ["check-runs"]) => {
            let checks: Checks = input(body)?;
            core.set_check_runs(&checks.sha, checks.runs)?;
            done()
        }
        (&Method::POST, ["repos", o, r, "actions-runs"]) => {
            let run: ActionsRun = input(body)?;
            Ok(json!({ "id": core.create_actions_run(&repo(o, r)?, run)? }))
        }
        (&Method::POST, ["check-runs", "publish"]) => {
            let publish: Publish = input(body)?;
            Ok(json!({ "id": core.publish_check_run(&publish.sha, publish.run)? }))
        }
        (&Method::POST, ["check-runs", id]) => {
            let update: Update = input(body)?;
            core.update_check_run(number(id)?, &update.status, update.conclusion.as_deref())?;
            done()
        }
        (&Method::POST, ["jobs", id, "steps"]) => {
            let steps = input::<Steps>(body)?.steps;
            core.set_job_steps(number(id)?, steps)?;
            done()
        }
        (&Method::POST, ["repos", o, r, "required-checks"]) => {
            let required: Required = input(body)?;
            core.set_required_checks(&repo(o, r)?, &required.branch, required.contexts, required.source)?;
            done()
        }
        (&Method::GET, ["reruns"]) => Ok(json!(core.reruns())),
        (&Method::POST, ["job-logs"]) => {
            let log: JobLog = input(body)?;
            core.set_job_log(log.job_id, log.text);
            done()
        }
        (&Method::GET, ["log-host-requests"]) => Ok(json!(core.log_requests())),
        (&Method::GET, ["dispatches"]) => Ok(json!(core.dispatches())),
        (&Method::POST, ["faults"]) => {
            core.inject(input::<Fault>(body)?);
            done()
        }
        (&Method::GET, ["requests"]) => Ok(json!(core.requests())),
        (&Method::DELETE, ["requests"]) => {
            core.clear_requests();
            done()
        }
        _ => Err(AdminError::NoRoute),
    }
}
