//! The emulator's REST subset, answering as GitHub does: status codes, error JSON, `Link`
//! pagination (with GitHub's `/repositories/{id}/...` next-page URLs), rate-limit headers.
//! A handler: the server calls it; it uses `ops`, `state` and `http_util`.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::{Value, json};

use crate::http_util::{DOCS, Resp, error_json, json_response, json_response_etag, percent_decode, plain};
use crate::model::{ActionsJob, ActionsRun, CheckRun, Fault, RequiredChecksSource, WorkflowDispatch};
use crate::names::{RepoName, normalize_sha};
use crate::ops::{Core, RunRefusal};
use crate::state::{CommentRec, Render};

mod changes;

const DEFAULT_PER_PAGE: usize = 30;
const MAX_PER_PAGE: usize = 100;

pub(crate) async fn handle(
    core: &Arc<Core>,
    method: &Method,
    prefix: &str,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Resp {
    if !authorized(core, headers) {
        let mut response = error_json(StatusCode::UNAUTHORIZED, "Bad credentials");
        let used = core.state().rate_used;
        add_rate_headers(&mut response, used);
        return response;
    }
    let api = format!("{}{prefix}", core.base_url);
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ctx = Ctx { core, api: &api, headers };
    let mut response = route(&ctx, method, &segments, query, &body).await;
    // A 304 is free, as on GitHub: a conditional request that finds nothing new costs nothing.
    let used = {
        let mut state = core.state();
        if response.status() != StatusCode::NOT_MODIFIED {
            state.rate_used = state.rate_used.saturating_add(1);
        }
        state.rate_used
    };
    add_rate_headers(&mut response, used);
    response
}

struct Ctx<'a> {
    core: &'a Arc<Core>,
    api: &'a str,
    /// The request's headers (`If-None-Match`).
    headers: &'a HeaderMap,
}

impl Ctx<'_> {
    fn render(&self) -> Render<'_> {
        Render { api: self.api, web: &self.core.base_url, viewer: &self.core.login }
    }
}

fn authorized(core: &Core, headers: &HeaderMap) -> bool {
    let Some(token) = &core.token else { return true };
    let Some(value) = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else { return false };
    let Some((scheme, given)) = value.trim().split_once(' ') else { return false };
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token")) && given.trim() == token
}

async fn route(ctx: &Ctx<'_>, method: &Method, segments: &[&str], query: &str, body: &Bytes) -> Resp {
    // GitHub's pagination links name repositories by id: /repositories/{id}/...
    if let ["repositories", id, rest @ ..] = segments {
        let full = id.parse::<u64>().ok().and_then(|id| ctx.core.state().repo_by_id(id).map(|r| r.full_name()));
        let Some(full) = full else { return not_found() };
        let mut rewritten: Vec<&str> = vec!["repos"];
        rewritten.extend(full.split('/'));
        rewritten.extend(rest);
        return Box::pin(route(ctx, method, &rewritten, query, body)).await;
    }
    match (method, segments) {
        (&Method::GET, ["user"]) => {
            let mut state = ctx.core.state();
            json_response(StatusCode::OK, &ctx.render().user(&mut state, &ctx.core.login, false))
        }
        (&Method::GET, ["rate_limit"]) => rate_limit(ctx),
        (&Method::POST, ["user", "repos"]) => create_repo(ctx, &ctx.core.login.clone(), false, body).await,
        (&Method::POST, ["orgs", org, "repos"]) => {
            if org.eq_ignore_ascii_case(&ctx.core.login) {
                return not_found();
            }
            create_repo(ctx, org, true, body).await
        }
        (&Method::GET, ["repos", owner, name]) => match lookup(ctx, owner, name) {
            Some(key) => {
                let mut state = ctx.core.state();
                json_response(StatusCode::OK, &ctx.render().repo(&mut state, &key))
            }
            None => not_found(),
        },
        (&Method::GET, ["repos", owner, name, "pulls", number]) => match changes::media(ctx.headers) {
            changes::Media::Json => get_pull(ctx, owner, name, number).await,
            media => changes::pull_text(ctx, owner, name, number, media).await,
        },
        (&Method::GET, ["repos", owner, name, "pulls", number, "files"]) => {
            changes::pull_files(ctx, owner, name, number, query).await
        }
        (&Method::GET, ["repos", owner, name, "compare", basehead @ ..]) if !basehead.is_empty() => {
            changes::compare(ctx, owner, name, basehead, query).await
        }
        (&Method::GET, ["repos", owner, name, "issues", number, "comments"]) => {
            list_comments(ctx, owner, name, number, query)
        }
        (&Method::POST, ["repos", owner, name, "issues", number, "comments"]) => {
            create_comment(ctx, owner, name, number, body)
        }
        (&Method::PATCH, ["repos", owner, name, "issues", "comments", id]) => {
            update_comment(ctx, owner, name, id, body)
        }
        (&Method::GET, ["repos", owner, name, "actions", "jobs", job, "logs"]) => job_logs(ctx, owner, name, job),
        (&Method::GET, ["repos", owner, name, "actions", "jobs", job]) => actions_job(ctx, owner, name, job),
        (&Method::GET, ["repos", owner, name, "actions", "runs", id]) => actions_run(ctx, owner, name, id, false),
        (&Method::GET, ["repos", owner, name, "actions", "runs", id, "jobs"]) => {
            actions_run(ctx, owner, name, id, true)
        }
        (&Method::POST, ["repos", owner, name, "actions", "runs", id, "rerun-failed-jobs"]) => {
            rerun_failed_jobs(ctx, owner, name, id)
        }
        (&Method::POST, ["repos", owner, name, "actions", "runs", id, "cancel"]) => cancel_run(ctx, owner, name, id),
        (&Method::GET, ["repos", owner, name, "branches", branch @ .., "protection", "required_status_checks"])
            if !branch.is_empty() =>
        {
            protection_checks(ctx, owner, name, branch)
        }
        (&Method::GET, ["repos", owner, name, "rules", "branches", branch @ ..]) if !branch.is_empty() => {
            branch_rules(ctx, owner, name, branch)
        }
        (&Method::GET, ["repos", owner, name, "commits", sha, "check-suites"]) => check_suites(ctx, owner, name, sha),
        (&Method::POST, ["repos", owner, name, "actions", "workflows", workflow, "dispatches"]) => {
            dispatch(ctx, owner, name, workflow, body).await
        }
        (&Method::GET, ["repos", owner, name, "commits", sha, "check-runs"]) => {
            check_runs(ctx, owner, name, sha, query)
        }
        _ => not_found(),
    }
}

fn not_found() -> Resp {
    error_json(StatusCode::NOT_FOUND, "Not Found")
}

/// The state key of a live repository named in a path.
fn lookup(ctx: &Ctx<'_>, owner: &str, name: &str) -> Option<String> {
    let key = RepoName::new(owner, name).ok()?.key();
    ctx.core.state().repos.contains_key(&key).then_some(key)
}

/// Errors are boxed answers: a `Response` is large and the error path is rare.
fn parse_json(body: &Bytes) -> Result<Value, Box<Resp>> {
    serde_json::from_slice(body).map_err(|_| Box::new(error_json(StatusCode::BAD_REQUEST, "Problems parsing JSON")))
}

fn validation_failed(field: &str, code: &str, message: &str) -> Resp {
    json_response(
        StatusCode::UNPROCESSABLE_ENTITY,
        &json!({
            "message": "Validation Failed",
            "errors": [{ "resource": "Issue", "code": code, "field": field, "message": message }],
            "documentation_url": DOCS, "status": "422",
        }),
    )
}

async fn create_repo(ctx: &Ctx<'_>, owner: &str, org: bool, body: &Bytes) -> Resp {
    let input = match parse_json(body) {
        Ok(value) => value,
        Err(response) => return *response,
    };
    let Some(name) = input.get("name").and_then(Value::as_str) else {
        return validation_failed("name", "missing_field", "name is missing");
    };
    let private = input.get("private").and_then(Value::as_bool).unwrap_or(false);
    let auto_init = input.get("auto_init").and_then(Value::as_bool).unwrap_or(false);
    let Ok(repo) = RepoName::new(owner, name) else {
        return validation_failed("name", "custom", "name is invalid");
    };
    if ctx.core.state().repos.contains_key(&repo.key()) {
        return json_response(
            StatusCode::UNPROCESSABLE_ENTITY,
            &json!({
                "message": "Repository creation failed.",
                "errors": [{ "resource": "Repository", "code": "custom", "field": "name",
                             "message": "name already exists on this account" }],
                "documentation_url": "https://docs.github.com/rest/repos/repos#create-a-repository-for-the-authenticated-user",
                "status": "422",
            }),
        );
    }
    match ctx.core.create_repo(owner, name, private, org, auto_init).await {
        Ok(_) => {
            let mut state = ctx.core.state();
            let value = ctx.render().repo(&mut state, &repo.key());
            let mut response = json_response(StatusCode::CREATED, &value);
            if let Some(url) = value.get("url").and_then(Value::as_str).and_then(|u| HeaderValue::from_str(u).ok()) {
                response.headers_mut().insert(http::header::LOCATION, url);
            }
            response
        }
        Err(e) => error_json(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn get_pull(ctx: &Ctx<'_>, owner: &str, name: &str, number: &str) -> Resp {
    let (Some(key), Ok(number)) = (lookup(ctx, owner, name), number.parse::<u64>()) else { return not_found() };
    let (value, fire) = {
        let mut state = ctx.core.state();
        let value = ctx.render().pull(&mut state, &key, number);
        if value.is_null() {
            return not_found();
        }
        if let Some(pr) = state.pulls.get_mut(&(key.clone(), number)) {
            pr.gets += 1;
        }
        let mut fire = None;
        for active in state.faults.iter_mut() {
            if let Fault::MovePrHead { repo, number: n, to_sha, .. } = &active.fault
                && repo.eq_ignore_ascii_case(&key)
                && *n == number
                && active.remaining > 0
            {
                active.remaining -= 1;
                if active.remaining == 0 {
                    fire = Some(to_sha.clone());
                }
            }
        }
        state.faults.retain(|f| f.remaining > 0);
        (value, fire)
    };
    if let (Some(sha), Ok(repo)) = (fire, RepoName::parse(&key))
        && let Err(e) = ctx.core.set_pr_head(&repo, number, &sha).await
    {
        return error_json(StatusCode::INTERNAL_SERVER_ERROR, &format!("emulator fault move_pr_head: {e}"));
    }
    json_response(StatusCode::OK, &value)
}

/// The first value of `key` in the query, `+` and `%XX` decoded (check names hold spaces).
fn query_param(query: &str, key: &str) -> Option<String> {
    let raw = query.split('&').find_map(|pair| match pair.split_once('=') {
        Some((k, v)) if k == key => Some(v),
        _ => None,
    })?;
    Some(percent_decode(raw, true))
}

/// `per_page` (default 30, at most 100) and `page` (from 1) of a query string.
fn page_params(query: &str) -> (usize, usize) {
    let mut per_page = DEFAULT_PER_PAGE;
    let mut page = 1;
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (key, value.parse::<usize>()) {
            ("per_page", Ok(n)) => per_page = n.clamp(1, MAX_PER_PAGE),
            ("page", Ok(n)) => page = n.max(1),
            _ => {}
        }
    }
    (per_page, page)
}

/// GitHub's `Link` header for page `page` of `total` items.
fn link_header(url: &str, per_page: usize, page: usize, total: usize) -> Option<HeaderValue> {
    let last = total.div_ceil(per_page).max(1);
    let link = |p: usize, rel: &str| format!("<{url}?per_page={per_page}&page={p}>; rel=\"{rel}\"");
    let mut parts = Vec::new();
    if page > 1 {
        parts.push(link(page - 1, "prev"));
    }
    if page < last {
        parts.push(link(page + 1, "next"));
        parts.push(link(last, "last"));
    }
    if page > 1 {
        parts.push(link(1, "first"));
    }
    (!parts.is_empty()).then(|| HeaderValue::from_str(&parts.join(", ")).ok()).flatten()
}

fn list_comments(ctx: &Ctx<'_>, owner: &str, name: &str, number: &str, query: &str) -> Resp {
    let (Some(key), Ok(number)) = (lookup(ctx, owner, name), number.parse::<u64>()) else { return not_found() };
    let (per_page, page) = page_params(query);
    let mut state = ctx.core.state();
    if !state.pulls.contains_key(&(key.clone(), number)) {
        return not_found();
    }
    let ids: Vec<u64> =
        state.comments.values().filter(|c| c.repo_key == key && c.number == number).map(|c| c.id).collect();
    let render = ctx.render();
    let items: Vec<Value> = ids
        .iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .map(|id| render.comment(&mut state, *id))
        .collect();
    let repo_id = state.repos.get(&key).map(|r| r.id).unwrap_or_default();
    let mut response = json_response(StatusCode::OK, &Value::Array(items));
    let url = format!("{}/repositories/{repo_id}/issues/{number}/comments", ctx.api);
    if let Some(link) = link_header(&url, per_page, page, ids.len()) {
        response.headers_mut().insert(http::header::LINK, link);
    }
    response
}

fn comment_body(body: &Bytes) -> Result<String, Box<Resp>> {
    let input = parse_json(body)?;
    match input.get("body").and_then(Value::as_str) {
        Some(text) if !text.is_empty() => Ok(text.to_owned()),
        _ => Err(Box::new(validation_failed("body", "missing_field", "body wasn't supplied."))),
    }
}

fn create_comment(ctx: &Ctx<'_>, owner: &str, name: &str, number: &str, body: &Bytes) -> Resp {
    let (Some(key), Ok(number)) = (lookup(ctx, owner, name), number.parse::<u64>()) else { return not_found() };
    let text = match comment_body(body) {
        Ok(text) => text,
        Err(response) => return *response,
    };
    let mut state = ctx.core.state();
    if !state.pulls.contains_key(&(key.clone(), number)) {
        return not_found();
    }
    let id = state.new_id();
    let at = ctx.core.now();
    let author = ctx.core.login.clone();
    state.comments.insert(
        id,
        CommentRec { id, repo_key: key, number, author, body: text, created_at: at.clone(), updated_at: at },
    );
    let value = ctx.render().comment(&mut state, id);
    let mut response = json_response(StatusCode::CREATED, &value);
    if let Some(url) = value.get("url").and_then(Value::as_str).and_then(|u| HeaderValue::from_str(u).ok()) {
        response.headers_mut().insert(http::header::LOCATION, url);
    }
    response
}

fn update_comment(ctx: &Ctx<'_>, owner: &str, name: &str, id: &str, body: &Bytes) -> Resp {
    let (Some(key), Ok(id)) = (lookup(ctx, owner, name), id.parse::<u64>()) else { return not_found() };
    let text = match comment_body(body) {
        Ok(text) => text,
        Err(response) => return *response,
    };
    let mut state = ctx.core.state();
    match state.comments.get_mut(&id) {
        Some(comment) if comment.repo_key == key => {
            comment.body = text;
            comment.updated_at = ctx.core.now();
        }
        _ => return not_found(),
    }
    json_response(StatusCode::OK, &ctx.render().comment(&mut state, id))
}

/// `GET .../actions/runs/{id}` (or its `/jobs`, every job with its steps).
/// One Actions job as GitHub shows it (in a run's job list and at `actions/jobs/{id}`).
fn job_json(job: &ActionsJob, run: &ActionsRun, run_id: u64, attempt: u32, web: &str, api: &str) -> Value {
    let job_id = job.id.unwrap_or_default();
    json!({
        "id": job_id, "run_id": run_id, "run_attempt": attempt, "name": job.name, "head_sha": run.head_sha,
        "status": job.status,
        "conclusion": job.conclusion, "started_at": job.started_at, "completed_at": job.completed_at,
        "html_url": format!("{web}/actions/runs/{run_id}/job/{job_id}"),
        "check_run_url": format!("{api}/check-runs/{job_id}"),
        "steps": job.steps.iter().map(|step| json!({
            "name": step.name, "status": step.status, "conclusion": step.conclusion, "number": step.number,
            "started_at": step.started_at, "completed_at": step.completed_at,
        })).collect::<Vec<_>>(),
    })
}

/// `GET actions/jobs/{id}`: the job with its steps (the executor names the failing one).
fn actions_job(ctx: &Ctx<'_>, owner: &str, name: &str, job: &str) -> Resp {
    let Some(key) = lookup(ctx, owner, name) else { return not_found() };
    let Ok(job_id) = job.parse::<u64>() else { return not_found() };
    let found = ctx.core.state().actions_runs.iter().find_map(|(run_id, rec)| {
        let job = rec.run.jobs.iter().find(|j| j.id == Some(job_id))?;
        (rec.repo_key == key).then(|| (job.clone(), rec.run.clone(), *run_id, rec.attempt))
    });
    let Some((job, run, run_id, attempt)) = found else { return not_found() };
    let web = format!("{}/{owner}/{name}", ctx.core.base_url);
    let api = format!("{}/repos/{owner}/{name}", ctx.api);
    json_response_etag(&job_json(&job, &run, run_id, attempt, &web, &api), ctx.headers)
}

fn actions_run(ctx: &Ctx<'_>, owner: &str, name: &str, id: &str, jobs: bool) -> Resp {
    let Some(key) = lookup(ctx, owner, name) else { return not_found() };
    let Ok(id) = id.parse::<u64>() else { return not_found() };
    let (run, attempt) = match ctx.core.state().actions_runs.get(&id) {
        Some(rec) if rec.repo_key == key => (rec.run.clone(), rec.attempt),
        _ => return not_found(),
    };
    let web = format!("{}/{owner}/{name}", ctx.core.base_url);
    let api = format!("{}/repos/{owner}/{name}", ctx.api);
    if !jobs {
        return json_response_etag(
            &json!({
                "id": id, "name": run.name, "head_branch": run.head_branch, "head_sha": run.head_sha,
                "event": run.event, "status": run.status, "conclusion": run.conclusion, "run_attempt": attempt,
                "html_url": format!("{web}/actions/runs/{id}"), "jobs_url": format!("{api}/actions/runs/{id}/jobs"),
                "logs_url": format!("{api}/actions/runs/{id}/logs"),
            }),
            ctx.headers,
        );
    }
    let items: Vec<Value> = run.jobs.iter().map(|job| job_json(job, &run, id, attempt, &web, &api)).collect();
    json_response_etag(&json!({ "total_count": items.len(), "jobs": items }), ctx.headers)
}

/// `201` with no body, as GitHub; a run still going is refused with its 403, as is a run with
/// no failed job to re-run.
fn rerun_failed_jobs(ctx: &Ctx<'_>, owner: &str, name: &str, id: &str) -> Resp {
    let (Ok(repo), Ok(id)) = (RepoName::new(owner, name), id.parse::<u64>()) else { return not_found() };
    match ctx.core.rerun_failed_jobs(&repo, id) {
        Ok(_) => {
            let mut response = plain(StatusCode::CREATED, "");
            response.headers_mut().remove(http::header::CONTENT_TYPE);
            response
        }
        Err(refusal) => run_refused(refusal),
    }
}

/// `202 {}`; a completed run cannot be cancelled (409).
fn cancel_run(ctx: &Ctx<'_>, owner: &str, name: &str, id: &str) -> Resp {
    let (Ok(repo), Ok(id)) = (RepoName::new(owner, name), id.parse::<u64>()) else { return not_found() };
    match ctx.core.cancel_run(&repo, id) {
        Ok(()) => json_response(StatusCode::ACCEPTED, &json!({})),
        Err(refusal) => run_refused(refusal),
    }
}

fn run_refused(refusal: RunRefusal) -> Resp {
    match refusal {
        RunRefusal::NotFound => not_found(),
        RunRefusal::Running => error_json(StatusCode::FORBIDDEN, "This workflow is already running"),
        RunRefusal::NothingToRetry => error_json(StatusCode::FORBIDDEN, "This workflow run cannot be retried"),
        RunRefusal::Completed => error_json(StatusCode::CONFLICT, "Cannot cancel a workflow run that is completed."),
    }
}

/// A branch named by the rest of a path: raw (`feature/x` spans segments) or `%2F`-encoded.
fn branch_name(segments: &[&str]) -> String {
    percent_decode(&segments.join("/"), false)
}

/// The contexts `branch` requires through `source`, if any.
fn required(ctx: &Ctx<'_>, key: &str, branch: &str, source: RequiredChecksSource) -> Option<(Vec<String>, u64)> {
    let state = ctx.core.state();
    let rec = state.required_checks.get(&(key.to_owned(), branch.to_owned(), source))?;
    Some((rec.contexts.clone(), rec.ruleset_id))
}

/// `GET .../branches/{branch}/protection/required_status_checks`: classic branch protection.
fn protection_checks(ctx: &Ctx<'_>, owner: &str, name: &str, branch: &[&str]) -> Resp {
    let Some(key) = lookup(ctx, owner, name) else { return not_found() };
    let branch = branch_name(branch);
    let Some((contexts, _)) = required(ctx, &key, &branch, RequiredChecksSource::BranchProtection) else {
        return error_json(StatusCode::NOT_FOUND, "Branch not protected");
    };
    let url = format!("{}/repos/{owner}/{name}/branches/{branch}/protection/required_status_checks", ctx.api);
    let checks: Vec<Value> = contexts.iter().map(|c| json!({ "context": c, "app_id": null })).collect();
    json_response(
        StatusCode::OK,
        &json!({
            "url": url, "strict": false, "contexts": contexts,
            "contexts_url": format!("{url}/contexts"), "checks": checks,
        }),
    )
}

/// `GET .../rules/branches/{branch}`: the active ruleset rules (branch protection is not
/// among them, as on GitHub); `[]` when none.
fn branch_rules(ctx: &Ctx<'_>, owner: &str, name: &str, branch: &[&str]) -> Resp {
    let Some(key) = lookup(ctx, owner, name) else { return not_found() };
    let branch = branch_name(branch);
    let rules: Vec<Value> = match required(ctx, &key, &branch, RequiredChecksSource::Ruleset) {
        Some((contexts, ruleset_id)) => vec![json!({
            "type": "required_status_checks", "ruleset_source_type": "Repository",
            "ruleset_source": format!("{owner}/{name}"), "ruleset_id": ruleset_id,
            "parameters": {
                "strict_required_status_checks_policy": false, "do_not_enforce_on_create": false,
                "required_status_checks": contexts.iter().map(|c| json!({ "context": c })).collect::<Vec<_>>(),
            },
        })],
        None => Vec::new(),
    };
    json_response(StatusCode::OK, &Value::Array(rules))
}

/// `GET .../commits/{sha}/check-suites`: one suite per app among the commit's check runs.
fn check_suites(ctx: &Ctx<'_>, owner: &str, name: &str, sha: &str) -> Resp {
    if lookup(ctx, owner, name).is_none() {
        return not_found();
    }
    let Some(sha) = normalize_sha(sha) else {
        return validation_failed("ref", "invalid", "No commit found for SHA");
    };
    let runs = ctx.core.state().check_runs.get(&sha).cloned().unwrap_or_default();
    let mut apps: std::collections::BTreeMap<String, Vec<&CheckRun>> = std::collections::BTreeMap::new();
    for run in &runs {
        apps.entry(run.app.clone().unwrap_or_else(|| "github-actions".to_owned())).or_default().push(run);
    }
    let suites: Vec<Value> = apps
        .iter()
        .enumerate()
        .map(|(i, (slug, runs))| {
            let completed = runs.iter().all(|run| run.status == "completed");
            let failing = runs
                .iter()
                .any(|run| !matches!(run.conclusion.as_deref(), Some("success" | "neutral" | "skipped") | None));
            let status = if completed {
                "completed"
            } else if runs.iter().any(|r| r.status != "queued") {
                "in_progress"
            } else {
                "queued"
            };
            let conclusion = completed.then_some(if failing { "failure" } else { "success" });
            let app_name = if slug == "github-actions" { "GitHub Actions" } else { slug.as_str() };
            json!({
                "id": i + 1, "head_sha": sha, "status": status, "conclusion": conclusion,
                "app": { "slug": slug, "name": app_name }, "latest_check_runs_count": runs.len(),
            })
        })
        .collect();
    json_response_etag(&json!({ "total_count": suites.len(), "check_suites": suites }), ctx.headers)
}

/// Records a `workflow_dispatch` (any workflow name or id is accepted), starts a queued Actions
/// run on the ref's commit, and answers `204`.
async fn dispatch(ctx: &Ctx<'_>, owner: &str, name: &str, workflow: &str, body: &Bytes) -> Resp {
    let Some(key) = lookup(ctx, owner, name) else { return not_found() };
    if workflow.is_empty() {
        return not_found();
    }
    let input = match parse_json(body) {
        Ok(value) => value,
        Err(response) => return *response,
    };
    let Some(git_ref) = input.get("ref").and_then(Value::as_str).filter(|r| !r.is_empty()) else {
        return error_json(StatusCode::UNPROCESSABLE_ENTITY, "Invalid request.\n\n\"ref\" wasn't supplied.");
    };
    let inputs = match input.get("inputs") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(inputs)) => inputs.clone(),
        Some(_) => {
            return error_json(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid request.\n\nFor 'properties/inputs', it is not an object.",
            );
        }
    };
    // A branch or tag name (never an option to git), as GitHub resolves `ref`.
    let dir = ctx.core.state().repos.get(&key).map(|rec| rec.dir.clone());
    let mut head_sha = None;
    if let (Some(dir), true) = (dir, crate::git::valid_branch(git_ref)) {
        for full in [format!("refs/heads/{git_ref}"), format!("refs/tags/{git_ref}")] {
            if let Some(sha) = crate::git::rev_parse(&dir, &full).await {
                head_sha = Some(sha);
                break;
            }
        }
    }
    let Some(head_sha) = head_sha else {
        return error_json(StatusCode::UNPROCESSABLE_ENTITY, &format!("No ref found for: {git_ref}"));
    };
    let run = ActionsRun {
        name: workflow.to_owned(),
        head_sha,
        head_branch: git_ref.to_owned(),
        event: "workflow_dispatch".to_owned(),
        status: "queued".to_owned(),
        ..ActionsRun::default()
    };
    let Ok(repo) = RepoName::new(owner, name) else { return not_found() };
    let Ok(run_id) = ctx.core.create_actions_run(&repo, run) else { return not_found() };
    let record = WorkflowDispatch {
        repo: format!("{owner}/{name}"),
        workflow: workflow.to_owned(),
        git_ref: git_ref.to_owned(),
        inputs,
        run_id,
    };
    ctx.core.state().dispatches.push(record);
    let mut response = plain(StatusCode::NO_CONTENT, "");
    response.headers_mut().remove(http::header::CONTENT_TYPE);
    response
}

/// GitHub's answer: `302 Found` to a signed URL on the log host, which needs no credentials
/// (a client must not send its token there).
fn job_logs(ctx: &Ctx<'_>, owner: &str, name: &str, job: &str) -> Resp {
    if lookup(ctx, owner, name).is_none() {
        return not_found();
    }
    let Ok(job) = job.parse::<u64>() else { return not_found() };
    if !ctx.core.state().job_logs.contains_key(&job) {
        return not_found();
    }
    let location = format!("{}/logs/{job}?sig={}", ctx.core.log_base, ctx.core.log_signature(job));
    let mut response = plain(StatusCode::FOUND, "");
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(http::header::LOCATION, value);
    }
    response
}

/// The order of re-runs: a run not started yet is the newest.
fn age(run: &CheckRun) -> (bool, &str, u64) {
    (run.started_at.is_none(), run.started_at.as_deref().unwrap_or(""), run.id.unwrap_or(0))
}

fn check_runs(ctx: &Ctx<'_>, owner: &str, name: &str, sha: &str, query: &str) -> Resp {
    if lookup(ctx, owner, name).is_none() {
        return not_found();
    }
    let Some(sha) = normalize_sha(sha) else {
        return validation_failed("ref", "invalid", "No commit found for SHA");
    };
    let (per_page, page) = page_params(query);
    let state = ctx.core.state();
    let all = state.check_runs.get(&sha).cloned().unwrap_or_default();
    drop(state);
    // `check_name=` keeps one name; `filter=latest` (the default) keeps each name's latest run
    // (greatest `started_at`, a queued one without it counting as newest, ties to the higher
    // id), `filter=all` every run.
    let check_name = query_param(query, "check_name");
    let latest = query_param(query, "filter").is_none_or(|f| f != "all");
    let runs: Vec<(usize, &CheckRun)> = all
        .iter()
        .enumerate()
        .filter(|(_, run)| check_name.as_deref().is_none_or(|n| run.name == n))
        .filter(|(_, run)| !latest || !all.iter().any(|other| other.name == run.name && age(other) > age(run)))
        .collect();
    let render = ctx.render();
    let start = (page - 1).saturating_mul(per_page);
    let items: Vec<Value> =
        runs.iter().skip(start).take(per_page).map(|(i, run)| render.check_run(*i, &sha, run)).collect();
    let mut response = json_response_etag(&json!({ "total_count": runs.len(), "check_runs": items }), ctx.headers);
    let url = format!("{}/repos/{owner}/{name}/commits/{sha}/check-runs", ctx.api);
    if let Some(link) = link_header(&url, per_page, page, runs.len()) {
        response.headers_mut().insert(http::header::LINK, link);
    }
    response
}

fn rate_limit(ctx: &Ctx<'_>) -> Resp {
    let reset = chrono::Utc::now().timestamp() + 3600;
    let used = ctx.core.state().rate_used;
    let core =
        json!({ "limit": RATE_LIMIT, "used": used, "remaining": RATE_LIMIT.saturating_sub(used), "reset": reset });
    json_response(StatusCode::OK, &json!({ "resources": { "core": core }, "rate": core }))
}

/// The core limit an emulated token has.
const RATE_LIMIT: u64 = 5000;

/// GitHub's rate-limit headers, counted: `used` requests so far (the emulator never refuses for
/// them; a `Fault::RateLimit` answer keeps its own headers).
pub(crate) fn add_rate_headers(response: &mut Resp, used: u64) {
    if response.headers().contains_key("x-ratelimit-remaining") {
        return;
    }
    let reset = (chrono::Utc::now().timestamp() + 3600).to_string();
    let headers = response.headers_mut();
    headers.insert("x-ratelimit-limit", HeaderValue::from(RATE_LIMIT));
    headers.insert("x-ratelimit-remaining", HeaderValue::from(RATE_LIMIT.saturating_sub(used)));
    headers.insert("x-ratelimit-used", HeaderValue::from(used));
    if let Ok(value) = HeaderValue::from_str(&reset) {
        headers.insert("x-ratelimit-reset", value);
    }
    headers.insert("x-ratelimit-resource", HeaderValue::from_static("core"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(
            query_param("a=1&check_name=unit+tests%2Flinux&filter=all", "check_name").unwrap(),
            "unit tests/linux"
        );
        assert_eq!(query_param("filter=all", "filter").unwrap(), "all");
        assert_eq!(query_param("x=%zz%4", "x").unwrap(), "%zz%4");
        assert_eq!(query_param("filter=all", "check_name"), None);
    }

    #[test]
    fn pages_and_links() {
        assert_eq!(page_params(""), (30, 1));
        assert_eq!(page_params("per_page=500&page=0"), (100, 1));
        assert_eq!(page_params("page=3&per_page=2"), (2, 3));
        let link = link_header("http://h/x", 100, 1, 250).unwrap();
        let text = link.to_str().unwrap();
        assert!(text.contains("<http://h/x?per_page=100&page=2>; rel=\"next\""), "{text}");
        assert!(text.contains("page=3>; rel=\"last\""), "{text}");
        assert!(link_header("http://h/x", 100, 1, 100).is_none());
        let last = link_header("http://h/x", 100, 3, 250).unwrap();
        assert!(!last.to_str().unwrap().contains("next"));
    }
}
