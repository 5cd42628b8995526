//! The emulator's check-run list as the `github-checks` executor will poll it (design §5.7):
//! `check_name` and `filter`, an `ETag` answered by `304 Not Modified`, and rate-limit headers
//! that count every answer but a 304; job logs behind a redirect to a second host that never
//! sees the token. Real HTTP on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod github_support;

use github_emulator::CheckRun;
use github_support::{Answer, get_raw, setup};
use serde_json::Value;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// A GET with the token and any extra header lines; the whole answer, headers included.
async fn get(port: u16, token: &str, path: &str, extra: &[String]) -> Answer {
    get_raw(port, Some(token), path, extra).await
}

async fn get_with(port: u16, token: Option<&str>, path: &str, extra: &[String]) -> Answer {
    get_raw(port, token, path, extra).await
}

fn names(answer: &Answer) -> Vec<(String, String)> {
    answer.json()["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| (run["name"].as_str().unwrap().to_owned(), run["conclusion"].as_str().unwrap_or("").to_owned()))
        .collect()
}

#[tokio::test]
async fn check_runs_filter_by_name_and_keep_the_latest_rerun_unless_asked_for_all() {
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let runs = vec![
        CheckRun::completed("unit tests", "failure"),
        CheckRun::completed("lint", "success"),
        CheckRun::completed("unit tests", "success"),
    ];
    s.emulator.set_check_runs(SHA, runs).unwrap();
    let base = format!("/repos/acme/widget/commits/{SHA}/check-runs");
    let pair = |name: &str, word: &str| (name.to_owned(), word.to_owned());

    let latest = get(port, &s.token, &base, &[]).await;
    assert_eq!(latest.status, 200, "{}", latest.body);
    assert_eq!(names(&latest), [pair("lint", "success"), pair("unit tests", "success")]);
    assert_eq!(latest.json()["total_count"], 2);
    let all = get(port, &s.token, &format!("{base}?filter=all"), &[]).await;
    assert_eq!(names(&all), [pair("unit tests", "failure"), pair("lint", "success"), pair("unit tests", "success")]);
    let one = get(port, &s.token, &format!("{base}?check_name=unit+tests&filter=all"), &[]).await;
    assert_eq!(names(&one), [pair("unit tests", "failure"), pair("unit tests", "success")]);
    let encoded = get(port, &s.token, &format!("{base}?check_name=unit%20tests"), &[]).await;
    assert_eq!(names(&encoded), [pair("unit tests", "success")]);
    let none = get(port, &s.token, &format!("{base}?check_name=docs"), &[]).await;
    assert_eq!((none.json()["total_count"].as_u64(), names(&none).len()), (Some(0), 0));
}

#[tokio::test]
async fn an_unchanged_list_is_a_free_304_and_every_other_answer_counts() {
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    s.emulator
        .set_check_runs(SHA, vec![CheckRun { name: "ci".into(), status: "queued".into(), ..CheckRun::default() }])
        .unwrap();
    let path = format!("/repos/acme/widget/commits/{SHA}/check-runs");
    let used = |a: &Answer| -> (u64, u64) {
        (a.header("x-ratelimit-used").parse().unwrap(), a.header("x-ratelimit-remaining").parse().unwrap())
    };

    let first = get(port, &s.token, &path, &[]).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.header("x-ratelimit-limit"), "5000");
    assert!(first.header("x-ratelimit-reset").parse::<i64>().is_ok());
    let (used_first, remaining_first) = used(&first);
    assert_eq!(used_first + remaining_first, 5000);
    let etag = first.header("etag").to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");

    let cached = get(port, &s.token, &path, &[format!("If-None-Match: {etag}")]).await;
    assert_eq!(cached.status, 304);
    assert!(cached.body.is_empty(), "a 304 has no body: {:?}", cached.body);
    assert_eq!(cached.header("etag"), etag);
    assert_eq!(used(&cached), (used_first, remaining_first), "a 304 costs nothing");

    let other_tag = get(port, &s.token, &path, &["If-None-Match: W/\"0000\"".to_owned()]).await;
    assert_eq!(other_tag.status, 200);
    assert_eq!(used(&other_tag), (used_first + 1, remaining_first - 1));

    // A change makes a new body, a new tag, and a 200 again for the old one.
    s.emulator.set_check_runs(SHA, vec![CheckRun::completed("ci", "success")]).unwrap();
    let changed = get(port, &s.token, &path, &[format!("If-None-Match: {etag}")]).await;
    assert_eq!(changed.status, 200);
    assert_ne!(changed.header("etag"), etag);
    assert_eq!(names(&changed), [("ci".to_owned(), "success".to_owned())]);
    assert_eq!(used(&changed), (used_first + 2, remaining_first - 2));

    // Other API answers carry the counted headers too.
    let repo = get(port, &s.token, "/repos/acme/widget", &[]).await;
    assert_eq!(repo.status, 200);
    assert_eq!(used(&repo), (used_first + 3, remaining_first - 3));
    let limits = get(port, &s.token, "/rate_limit", &[]).await;
    assert_eq!(limits.json()["rate"]["used"], used_first + 3, "the count before this request");
    assert_eq!(used(&limits), (used_first + 4, remaining_first - 4));
}

/// Follows redirects the way the executor must: the token goes to the API host only.
async fn get_following(api_port: u16, token: &str, path: &str) -> (Vec<u16>, Answer) {
    let (mut port, mut path) = (api_port, path.to_owned());
    let mut statuses = Vec::new();
    loop {
        let answer = get_with(port, (port == api_port).then_some(token), &path, &[]).await;
        statuses.push(answer.status);
        if answer.status != 302 || statuses.len() > 5 {
            return (statuses, answer);
        }
        let rest = answer.header("location").strip_prefix("http://127.0.0.1:").unwrap().to_owned();
        let (next_port, next_path) = rest.split_at(rest.find('/').unwrap());
        (port, path) = (next_port.parse().unwrap(), next_path.to_owned());
    }
}

#[tokio::test]
async fn a_job_log_is_a_redirect_to_the_log_host_which_never_sees_the_token() {
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let api_port = s.emulator.addr().port();
    s.emulator.set_job_log(4242, "2026-01-01T10:00:00Z ##[group]Run cargo test\ntest calc ... FAILED\n");
    let path = "/repos/acme/widget/actions/jobs/4242/logs";

    let redirect = get(api_port, &s.token, path, &[]).await;
    assert_eq!(redirect.status, 302, "{}", redirect.body);
    let location = redirect.header("location").to_owned();
    assert!(location.starts_with(&format!("{}/logs/4242?", s.emulator.log_base())), "{location}");
    assert_ne!(s.emulator.log_base(), s.emulator.api_base(), "a second host");
    assert!(s.emulator.log_host_requests().is_empty(), "nothing followed yet");

    let (statuses, log) = get_following(api_port, &s.token, path).await;
    assert_eq!(statuses, [302, 200]);
    assert!(log.body.contains("test calc ... FAILED"), "{}", log.body);
    let seen = s.emulator.log_host_requests();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!((seen[0].method.as_str(), seen[0].status), ("GET", 200));
    assert!(seen[0].header_names.iter().any(|name| name == "host"), "header names are recorded: {seen:?}");
    assert!(seen.iter().all(|r| !r.had_authorization()), "the token reached the log host: {seen:?}");
    assert!(s.emulator.requests().iter().filter(|r| r.path == path).all(|r| r.credentials), "the API got the token");

    // The URL's signature is its only credential; the API wants the token as ever.
    let log_port: u16 = s.emulator.log_base().rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(get_with(log_port, None, "/logs/4242?sig=0", &[]).await.status, 403);
    assert_eq!(get_with(api_port, None, path, &[]).await.status, 401);
    assert_eq!(get(api_port, &s.token, "/repos/acme/widget/actions/jobs/7/logs", &[]).await.status, 404);
    assert_eq!(get(api_port, &s.token, "/repos/acme/gone/actions/jobs/4242/logs", &[]).await.status, 404);
    assert!(s.emulator.log_host_requests().iter().all(|r| !r.had_authorization()));
}

#[tokio::test]
async fn a_workflow_dispatch_is_a_204_and_is_recorded() {
    use github_support::http;
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let headers = [format!("Host: 127.0.0.1:{port}"), format!("Authorization: Bearer {}", s.token)];
    let path = "/repos/acme/widget/actions/workflows/forgeloop.yml/dispatches";
    let body = r#"{"ref": "main", "inputs": {"suite": "fast", "pr": "7"}}"#;
    let (status, text) = http(port, "POST", path, &headers, Some(body)).await;
    assert_eq!(status, 204, "{text}");
    assert!(text.is_empty());
    let recorded = s.emulator.dispatches();
    assert_eq!(recorded.len(), 1);
    let d = &recorded[0];
    assert_eq!((d.repo.as_str(), d.workflow.as_str(), d.git_ref.as_str()), ("acme/widget", "forgeloop.yml", "main"));
    assert_eq!((d.inputs["suite"].as_str(), d.inputs["pr"].as_str()), (Some("fast"), Some("7")));
    // It started a queued run on the branch's commit.
    let main = github_support::git_ok(&s.emulator.repo_dir("acme/widget").unwrap(), &["rev-parse", "main"]).await;
    let run = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{}", d.run_id), &[]).await.json();
    assert_eq!((run["status"].as_str(), run["event"].as_str()), (Some("queued"), Some("workflow_dispatch")));
    assert_eq!((run["head_sha"].as_str(), run["head_branch"].as_str()), (Some(main.as_str()), Some("main")));

    for (bad, want) in [
        (r#"{"inputs": {}}"#, 422),
        (r#"{"ref": "no-such-branch"}"#, 422),
        (r#"{"ref": "--output=/tmp/x"}"#, 422),
        (r#"{"ref": "main", "inputs": ["x"]}"#, 422),
        ("not json", 400),
    ] {
        assert_eq!(http(port, "POST", path, &headers, Some(bad)).await.0, want, "{bad}");
    }
    let gone = "/repos/acme/gone/actions/workflows/forgeloop.yml/dispatches";
    assert_eq!(http(port, "POST", gone, &headers, Some(body)).await.0, 404);
    assert_eq!(http(port, "POST", path, &headers[..1], Some(body)).await.0, 401);
    assert_eq!(s.emulator.dispatches().len(), 1, "refused dispatches are not recorded");
}

#[tokio::test]
async fn published_runs_carry_githubs_fields_and_a_rerun_replaces_its_name_in_the_latest() {
    use github_emulator::CheckOutput;
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let job = CheckRun {
        name: "test".into(),
        status: "completed".into(),
        conclusion: Some("failure".into()),
        job_id: Some(9001),
        started_at: Some("2026-01-01T10:00:00Z".into()),
        output: Some(CheckOutput { title: Some("1 failed".into()), summary: Some("calc".into()), text: None }),
        ..CheckRun::default()
    };
    assert_eq!(s.emulator.publish_check_run(SHA, job).unwrap(), 9001, "an Actions run's id is its job's");
    let rerun = CheckRun { name: "test".into(), status: "queued".into(), ..CheckRun::default() };
    let rerun_id = s.emulator.publish_check_run(SHA, rerun).unwrap();
    assert_ne!(rerun_id, 9001);
    let path = format!("/repos/acme/widget/commits/{SHA}/check-runs");

    let all = get(port, &s.token, &format!("{path}?filter=all"), &[]).await.json();
    let first = &all["check_runs"][0];
    assert_eq!(first["id"], 9001);
    assert_eq!((first["status"].as_str(), first["conclusion"].as_str()), (Some("completed"), Some("failure")));
    assert_eq!(first["started_at"], "2026-01-01T10:00:00Z");
    assert!(first["completed_at"].is_string(), "{first}");
    assert!(first["details_url"].as_str().unwrap().ends_with("/actions/jobs/9001"), "{first}");
    assert!(first["html_url"].as_str().unwrap().ends_with("/checks/9001"), "{first}");
    assert_eq!(first["app"], serde_json::json!({ "slug": "github-actions", "name": "GitHub Actions" }));
    assert_eq!(first["output"], serde_json::json!({ "title": "1 failed", "summary": "calc", "text": null }));
    let queued = &all["check_runs"][1];
    assert_eq!((queued["status"].as_str(), queued["started_at"].is_null()), (Some("queued"), true));

    // The queued re-run is the latest; once it passes, it is still the one listed.
    let latest = get(port, &s.token, &path, &[]).await;
    assert_eq!(latest.json()["check_runs"][0]["id"], rerun_id);
    s.emulator.update_check_run(rerun_id, "completed", Some("success")).unwrap();
    let done = get(port, &s.token, &path, &[]).await.json();
    assert_eq!(done["total_count"], 1);
    let run = &done["check_runs"][0];
    assert_eq!((run["id"].as_u64(), run["conclusion"].as_str()), (Some(rerun_id), Some("success")));
    assert!(run["started_at"].is_string() && run["completed_at"].is_string(), "{run}");
    assert!(s.emulator.update_check_run(123_456_789, "completed", None).is_err());
}

#[tokio::test]
async fn an_actions_run_lists_its_jobs_with_steps_and_they_are_check_runs_and_suites() {
    use github_emulator::{ActionsJob, ActionsRun, JobStep};
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let step = |number: u64, name: &str, conclusion: &str| JobStep {
        name: name.into(),
        status: "completed".into(),
        conclusion: Some(conclusion.into()),
        number,
        ..JobStep::default()
    };
    let run = ActionsRun {
        name: "CI".into(),
        head_sha: SHA.into(),
        head_branch: "feature".into(),
        status: "in_progress".into(),
        jobs: vec![
            ActionsJob {
                id: Some(501),
                name: "test".into(),
                status: "completed".into(),
                conclusion: Some("failure".into()),
                steps: vec![step(1, "Set up job", "success"), step(2, "cargo test", "failure")],
                ..ActionsJob::default()
            },
            ActionsJob { name: "lint".into(), status: "in_progress".into(), ..ActionsJob::default() },
        ],
        ..ActionsRun::default()
    };
    let run_id = s.emulator.create_actions_run("acme/widget", run).unwrap();

    let got = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{run_id}"), &[]).await.json();
    assert_eq!(
        (got["id"].as_u64(), got["name"].as_str(), got["event"].as_str()),
        (Some(run_id), Some("CI"), Some("push"))
    );
    assert_eq!((got["head_sha"].as_str(), got["status"].as_str()), (Some(SHA), Some("in_progress")));
    let jobs = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{run_id}/jobs"), &[]).await.json();
    assert_eq!(jobs["total_count"], 2);
    let test = &jobs["jobs"][0];
    assert_eq!((test["id"].as_u64(), test["run_id"].as_u64()), (Some(501), Some(run_id)));
    assert_eq!(test["steps"][1]["name"], "cargo test");
    assert_eq!(
        (test["steps"][1]["number"].as_u64(), test["steps"][1]["conclusion"].as_str()),
        (Some(2), Some("failure"))
    );
    assert!(test["started_at"].is_string() && test["completed_at"].is_string(), "{test}");
    let lint_id = jobs["jobs"][1]["id"].as_u64().unwrap();
    // One job by its id, as the executor reads it to name the failing step.
    let one = get(port, &s.token, "/repos/acme/widget/actions/jobs/501", &[]).await.json();
    assert_eq!(one, *test);
    for missing in [
        "/repos/acme/widget/actions/jobs/999999",
        "/repos/acme/widget/actions/jobs/x",
        "/repos/acme/other/actions/jobs/501",
    ] {
        assert_eq!(get(port, &s.token, missing, &[]).await.status, 404, "{missing}");
    }

    // Each job is a check run whose id is the job's.
    let checks = get(port, &s.token, &format!("/repos/acme/widget/commits/{SHA}/check-runs"), &[]).await.json();
    let ids: Vec<u64> = checks["check_runs"].as_array().unwrap().iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [501, lint_id]);
    let suites = get(port, &s.token, &format!("/repos/acme/widget/commits/{SHA}/check-suites"), &[]).await;
    assert_eq!(suites.status, 200);
    let etag = suites.header("etag").to_owned();
    let suite = &suites.json()["check_suites"][0];
    assert_eq!((suite["status"].as_str(), suite["conclusion"].as_str()), (Some("in_progress"), None));
    assert_eq!(
        (suite["app"]["slug"].as_str(), suite["latest_check_runs_count"].as_u64()),
        (Some("github-actions"), Some(2))
    );
    let path = format!("/repos/acme/widget/commits/{SHA}/check-suites");
    assert_eq!(get(port, &s.token, &path, &[format!("If-None-Match: {etag}")]).await.status, 304);
    s.emulator.update_check_run(lint_id, "completed", Some("success")).unwrap();
    let done = get(port, &s.token, &path, &[format!("If-None-Match: {etag}")]).await;
    assert_eq!(done.status, 200);
    assert_eq!(done.json()["check_suites"][0]["conclusion"], "failure");

    assert_eq!(get(port, &s.token, "/repos/acme/widget/actions/runs/999999", &[]).await.status, 404);
    s.emulator.create_repo("acme", "other", false).await.unwrap();
    assert_eq!(get(port, &s.token, &format!("/repos/acme/other/actions/runs/{run_id}"), &[]).await.status, 404);
    assert!(
        s.emulator
            .create_actions_run("acme/gone", ActionsRun { head_sha: SHA.into(), ..ActionsRun::default() })
            .is_err()
    );
}

/// `(status, conclusion)` of a JSON object, as strings ("" for null).
fn state_of(value: &Value) -> (String, String) {
    let text = |key: &str| value[key].as_str().unwrap_or("").to_owned();
    (text("status"), text("conclusion"))
}

fn pair(status: &str, conclusion: &str) -> (String, String) {
    (status.to_owned(), conclusion.to_owned())
}

/// The REST headers of a POST: the bound Host and the token.
fn api_headers(port: u16, token: &str) -> Vec<String> {
    vec![format!("Host: 127.0.0.1:{port}"), format!("Authorization: Bearer {token}")]
}

/// The check run `id` among every run of [`SHA`].
async fn check_run(port: u16, token: &str, id: u64) -> Value {
    let all = get(port, token, &format!("/repos/acme/widget/commits/{SHA}/check-runs?filter=all"), &[]).await.json();
    let runs = all["check_runs"].as_array().unwrap();
    runs.iter().find(|run| run["id"] == id).cloned().unwrap_or_else(|| panic!("no check run {id}: {all}"))
}

fn job(name: &str, status: &str, conclusion: Option<&str>) -> github_emulator::ActionsJob {
    github_emulator::ActionsJob {
        name: name.into(),
        status: status.into(),
        conclusion: conclusion.map(Into::into),
        ..github_emulator::ActionsJob::default()
    }
}

fn actions_run(
    status: &str,
    conclusion: Option<&str>,
    jobs: Vec<github_emulator::ActionsJob>,
) -> github_emulator::ActionsRun {
    github_emulator::ActionsRun {
        name: "CI".into(),
        head_sha: SHA.into(),
        status: status.into(),
        conclusion: conclusion.map(Into::into),
        jobs,
        ..github_emulator::ActionsRun::default()
    }
}

#[tokio::test]
async fn updating_a_jobs_check_run_moves_the_job_and_its_run() {
    use github_emulator::JobStep;
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let run = actions_run("queued", None, vec![job("test", "queued", None), job("lint", "queued", None)]);
    let run_id = s.emulator.create_actions_run("acme/widget", run).unwrap();
    let run_path = format!("/repos/acme/widget/actions/runs/{run_id}");
    let jobs_path = format!("{run_path}/jobs");
    let jobs = get(port, &s.token, &jobs_path, &[]).await.json();
    let (test_id, lint_id) = (jobs["jobs"][0]["id"].as_u64().unwrap(), jobs["jobs"][1]["id"].as_u64().unwrap());

    s.emulator.update_check_run(test_id, "in_progress", None).unwrap();
    let run = get(port, &s.token, &run_path, &[]).await.json();
    assert_eq!(state_of(&run), pair("in_progress", ""), "{run}");
    let jobs = get(port, &s.token, &jobs_path, &[]).await.json();
    let test = &jobs["jobs"][0];
    assert_eq!(state_of(test), pair("in_progress", ""));
    assert!(test["started_at"].is_string(), "{test}");
    assert_eq!(test["started_at"], check_run(port, &s.token, test_id).await["started_at"]);
    assert_eq!(state_of(&jobs["jobs"][1]), pair("queued", ""), "the other job stays");

    s.emulator.update_check_run(test_id, "completed", Some("failure")).unwrap();
    let run = get(port, &s.token, &run_path, &[]).await.json();
    assert_eq!(state_of(&run), pair("in_progress", ""), "lint has not run yet: {run}");
    s.emulator.update_check_run(lint_id, "in_progress", None).unwrap();
    s.emulator.update_check_run(lint_id, "completed", Some("success")).unwrap();
    let run = get(port, &s.token, &run_path, &[]).await.json();
    assert_eq!(state_of(&run), pair("completed", "failure"), "one job failed: {run}");
    let jobs = get(port, &s.token, &jobs_path, &[]).await.json();
    assert_eq!(state_of(&jobs["jobs"][0]), pair("completed", "failure"));
    assert_eq!(state_of(&jobs["jobs"][1]), pair("completed", "success"));
    for (index, id) in [(0, test_id), (1, lint_id)] {
        let check = check_run(port, &s.token, id).await;
        let job = &jobs["jobs"][index];
        assert!(job["completed_at"].is_string(), "{job}");
        assert_eq!((&job["started_at"], &job["completed_at"]), (&check["started_at"], &check["completed_at"]));
    }

    // Every other failing conclusion fails the run too; all passing is a success.
    for (conclusion, want) in
        [("timed_out", "failure"), ("cancelled", "failure"), ("action_required", "failure"), ("neutral", "success")]
    {
        let run = actions_run("queued", None, vec![job("a", "queued", None), job("b", "queued", None)]);
        let id = s.emulator.create_actions_run("acme/widget", run).unwrap();
        let jobs = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{id}/jobs"), &[]).await.json();
        let ids: Vec<u64> = jobs["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_u64().unwrap()).collect();
        s.emulator.update_check_run(ids[0], "completed", Some("success")).unwrap();
        s.emulator.update_check_run(ids[1], "completed", Some(conclusion)).unwrap();
        let run = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{id}"), &[]).await.json();
        assert_eq!(state_of(&run), pair("completed", want), "{conclusion}");
    }

    // A scripted CI names the failing step, from Rust or through the admin API.
    let step = |name: &str, conclusion: &str| JobStep {
        name: name.into(),
        status: "completed".into(),
        conclusion: Some(conclusion.into()),
        ..JobStep::default()
    };
    s.emulator.set_job_steps(test_id, vec![step("Set up job", "success"), step("cargo test", "failure")]).unwrap();
    let steps = get(port, &s.token, &jobs_path, &[]).await.json()["jobs"][0]["steps"].clone();
    assert_eq!((steps[1]["name"].as_str(), steps[1]["conclusion"].as_str()), (Some("cargo test"), Some("failure")));
    assert_eq!((steps[0]["number"].as_u64(), steps[1]["number"].as_u64()), (Some(1), Some(2)), "numbered in order");
    let admin = github_support::admin_headers(port, s.emulator.admin_secret());
    let body = r#"{"steps": [{"name": "clippy", "status": "completed", "conclusion": "failure", "number": 4}]}"#;
    let (status, text) =
        github_support::http(port, "POST", &format!("/_emulator/jobs/{lint_id}/steps"), &admin, Some(body)).await;
    assert_eq!(status, 200, "{text}");
    let lint = get(port, &s.token, &jobs_path, &[]).await.json()["jobs"][1].clone();
    assert_eq!(lint["steps"].as_array().unwrap().len(), 1);
    assert_eq!((lint["steps"][0]["name"].as_str(), lint["steps"][0]["number"].as_u64()), (Some("clippy"), Some(4)));
    assert!(s.emulator.set_job_steps(987_654_321, vec![]).is_err());
    let (status, _) = github_support::http(port, "POST", "/_emulator/jobs/987654321/steps", &admin, Some(body)).await;
    assert_eq!(status, 404);

    // A check run naming a job no run has still updates alone.
    let lone = CheckRun { name: "solo".into(), status: "queued".into(), job_id: Some(55_555), ..CheckRun::default() };
    let lone_id = s.emulator.publish_check_run(SHA, lone).unwrap();
    s.emulator.update_check_run(lone_id, "completed", Some("success")).unwrap();
    assert_eq!(state_of(&check_run(port, &s.token, lone_id).await), pair("completed", "success"));
}

#[tokio::test]
async fn required_status_checks_come_from_branch_protection_or_a_ruleset() {
    use github_emulator::{Fault, RequiredChecksSource};
    use github_support::{admin_headers, http};
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let protection = |branch: &str| format!("/repos/acme/widget/branches/{branch}/protection/required_status_checks");
    let rules = |branch: &str| format!("/repos/acme/widget/rules/branches/{branch}");

    let none = get(port, &s.token, &protection("main"), &[]).await;
    assert_eq!((none.status, none.json()["message"].as_str()), (404, Some("Branch not protected")));
    let empty = get(port, &s.token, &rules("main"), &[]).await;
    assert_eq!((empty.status, empty.json()), (200, serde_json::json!([])));

    let contexts = vec!["test".to_owned(), "lint".to_owned()];
    s.emulator.set_required_checks("acme/widget", "main", contexts, RequiredChecksSource::BranchProtection).unwrap();
    let got = get(port, &s.token, &protection("main"), &[]).await;
    assert_eq!(got.status, 200, "{}", got.body);
    let got = got.json();
    assert_eq!(got["contexts"], serde_json::json!(["test", "lint"]));
    assert_eq!(
        got["checks"],
        serde_json::json!([{ "context": "test", "app_id": null }, { "context": "lint", "app_id": null }])
    );
    assert_eq!(got["strict"], false);
    assert!(got["url"].as_str().unwrap().ends_with(&protection("main")), "{got}");
    assert_eq!(get(port, &s.token, &rules("main"), &[]).await.json(), serde_json::json!([]), "not a ruleset");

    // A ruleset on a branch with a slash, asked for raw or %2F-encoded.
    s.emulator
        .set_required_checks("acme/widget", "feature/x", vec!["test".into()], RequiredChecksSource::Ruleset)
        .unwrap();
    let raw = get(port, &s.token, &rules("feature/x"), &[]).await;
    let encoded = get(port, &s.token, &rules("feature%2Fx"), &[]).await;
    assert_eq!((raw.status, encoded.status), (200, 200));
    assert_eq!(raw.json(), encoded.json());
    let rule = &raw.json()[0];
    assert_eq!(raw.json().as_array().unwrap().len(), 1);
    assert_eq!(rule["type"], "required_status_checks");
    assert_eq!(
        (rule["ruleset_source_type"].as_str(), rule["ruleset_source"].as_str()),
        (Some("Repository"), Some("acme/widget"))
    );
    assert!(rule["ruleset_id"].as_u64().is_some(), "{rule}");
    assert_eq!(
        rule["parameters"],
        serde_json::json!({
            "strict_required_status_checks_policy": false, "do_not_enforce_on_create": false,
            "required_status_checks": [{ "context": "test" }],
        })
    );
    assert_eq!(get(port, &s.token, &protection("feature%2Fx"), &[]).await.status, 404, "not branch protection");
    assert_eq!(get(port, &s.token, &rules("feature"), &[]).await.json(), serde_json::json!([]));
    s.emulator.set_required_checks("acme/widget", "feature/x", vec![], RequiredChecksSource::Ruleset).unwrap();
    assert_eq!(get(port, &s.token, &rules("feature/x"), &[]).await.json(), serde_json::json!([]), "cleared");

    // The admin API sets them too (a ruleset here; branch protection by default).
    let admin = admin_headers(port, s.emulator.admin_secret());
    let body = r#"{"branch": "release/1.0", "contexts": ["ci / build"], "source": "ruleset"}"#;
    let (status, text) = http(port, "POST", "/_emulator/repos/acme/widget/required-checks", &admin, Some(body)).await;
    assert_eq!(status, 200, "{text}");
    let rule = get(port, &s.token, &rules("release%2F1.0"), &[]).await.json();
    assert_eq!(rule[0]["parameters"]["required_status_checks"], serde_json::json!([{ "context": "ci / build" }]));
    let body = r#"{"branch": "dev", "contexts": ["x"]}"#;
    assert_eq!(http(port, "POST", "/_emulator/repos/acme/widget/required-checks", &admin, Some(body)).await.0, 200);
    assert_eq!(get(port, &s.token, &protection("dev"), &[]).await.json()["contexts"], serde_json::json!(["x"]));
    let (status, _) = http(port, "POST", "/_emulator/repos/acme/gone/required-checks", &admin, Some(body)).await;
    assert_eq!(status, 404);
    assert!(
        s.emulator.set_required_checks("acme/gone", "main", vec!["x".into()], RequiredChecksSource::Ruleset).is_err()
    );
    assert_eq!(get(port, &s.token, "/repos/acme/gone/rules/branches/main", &[]).await.status, 404);
    assert_eq!(get(port, &s.token, "/repos/acme/widget/rules/branches/", &[]).await.status, 200);

    // Faults reach these paths, a `/` in the branch matching its %2F form.
    s.emulator.inject(Fault::Status { method: None, path: rules("feature/x"), status: 403, times: 1 });
    let refused = get(port, &s.token, &rules("feature%2Fx"), &[]).await;
    assert_eq!((refused.status, refused.json()["message"].as_str()), (403, Some("Forbidden")));
    assert_eq!(get(port, &s.token, &rules("feature%2Fx"), &[]).await.status, 200, "spent");
    s.emulator.inject(Fault::Status { method: Some("GET".into()), path: protection("main"), status: 404, times: 1 });
    assert_eq!(get(port, &s.token, &protection("main"), &[]).await.status, 404);
    assert_eq!(get(port, &s.token, &protection("main"), &[]).await.status, 200);
}

#[tokio::test]
async fn rerunning_failed_jobs_queues_new_check_runs_and_cancel_ends_a_run() {
    use github_support::{admin_headers, http};
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    s.emulator.create_repo("acme", "other", false).await.unwrap();
    let port = s.emulator.addr().port();
    let headers = api_headers(port, &s.token);
    let failed = |mut job: github_emulator::ActionsJob, id: u64| {
        job.id = Some(id);
        job
    };
    let run = actions_run(
        "completed",
        Some("failure"),
        vec![
            failed(job("test", "completed", Some("failure")), 701),
            failed(job("lint", "completed", Some("success")), 702),
        ],
    );
    let run_id = s.emulator.create_actions_run("acme/widget", run).unwrap();
    let running = s
        .emulator
        .create_actions_run("acme/widget", actions_run("in_progress", None, vec![job("slow", "in_progress", None)]))
        .unwrap();
    let rerun = |id: u64| format!("/repos/acme/widget/actions/runs/{id}/rerun-failed-jobs");

    let (status, text) = http(port, "POST", &rerun(running), &headers, None).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("This workflow is already running"), "{text}");
    assert!(s.emulator.reruns().is_empty(), "a refusal is not a rerun");

    let (status, text) = http(port, "POST", &rerun(run_id), &headers, None).await;
    assert_eq!((status, text.as_str()), (201, ""));
    assert_eq!(s.emulator.reruns(), [run_id]);

    // The failed job's old check run stays; a new queued one, unstarted, has a new id.
    let all = get(port, &s.token, &format!("/repos/acme/widget/commits/{SHA}/check-runs?filter=all"), &[]).await.json();
    let tests: Vec<&Value> = all["check_runs"].as_array().unwrap().iter().filter(|r| r["name"] == "test").collect();
    assert_eq!(tests.len(), 2, "{all}");
    assert_eq!((tests[0]["id"].as_u64(), state_of(tests[0])), (Some(701), pair("completed", "failure")));
    let new_id = tests[1]["id"].as_u64().unwrap();
    assert!(![701, 702].contains(&new_id));
    assert_eq!(state_of(tests[1]), pair("queued", ""));
    assert!(tests[1]["started_at"].is_null(), "{}", tests[1]);
    assert!(tests[1]["details_url"].as_str().unwrap().ends_with(&format!("/actions/jobs/{new_id}")));
    let latest =
        get(port, &s.token, &format!("/repos/acme/widget/commits/{SHA}/check-runs?check_name=test"), &[]).await;
    assert_eq!(latest.json()["check_runs"][0]["id"], new_id, "the rerun is the latest");
    let lints = all["check_runs"].as_array().unwrap().iter().filter(|r| r["name"] == "lint").count();
    assert_eq!(lints, 1, "a passing job is not rerun");

    let run_path = format!("/repos/acme/widget/actions/runs/{run_id}");
    let run = get(port, &s.token, &run_path, &[]).await.json();
    assert_eq!((state_of(&run), run["run_attempt"].as_u64()), (pair("queued", ""), Some(2)));
    let jobs = get(port, &s.token, &format!("{run_path}/jobs"), &[]).await.json();
    let test = &jobs["jobs"][0];
    assert_eq!((test["id"].as_u64(), state_of(test)), (Some(new_id), pair("queued", "")));
    assert!(test["started_at"].is_null() && test["steps"].as_array().unwrap().is_empty(), "{test}");
    assert_eq!((jobs["jobs"][1]["id"].as_u64(), state_of(&jobs["jobs"][1])), (Some(702), pair("completed", "success")));

    // Not again while it runs; the new check run drives the job and the run.
    assert_eq!(http(port, "POST", &rerun(run_id), &headers, None).await.0, 403);
    s.emulator.update_check_run(new_id, "completed", Some("success")).unwrap();
    assert_eq!(state_of(&get(port, &s.token, &run_path, &[]).await.json()), pair("completed", "success"));
    let (status, text) = http(port, "POST", &rerun(run_id), &headers, None).await;
    assert_eq!(status, 403, "nothing failed: {text}");
    assert_eq!(s.emulator.reruns(), [run_id]);

    for path in [
        rerun(999_999),
        "/repos/acme/widget/actions/runs/nope/rerun-failed-jobs".to_owned(),
        format!("/repos/acme/other/actions/runs/{run_id}/rerun-failed-jobs"),
        format!("/repos/acme/gone/actions/runs/{run_id}/rerun-failed-jobs"),
    ] {
        assert_eq!(http(port, "POST", &path, &headers, None).await.0, 404, "{path}");
    }
    assert_eq!(http(port, "POST", &rerun(run_id), &headers[..1], None).await.0, 401);

    // Cancel: unfinished jobs, their steps and check runs end cancelled; finished ones stay.
    let mut busy = job("build", "in_progress", None);
    busy.steps = vec![
        github_emulator::JobStep {
            name: "checkout".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            ..Default::default()
        },
        github_emulator::JobStep { name: "make".into(), status: "in_progress".into(), ..Default::default() },
    ];
    let jobs = vec![busy, job("deploy", "queued", None), job("fmt", "completed", Some("success"))];
    let cancel_id = s.emulator.create_actions_run("acme/widget", actions_run("in_progress", None, jobs)).unwrap();
    let cancel = format!("/repos/acme/widget/actions/runs/{cancel_id}/cancel");
    let (status, text) = http(port, "POST", &cancel, &headers, None).await;
    assert_eq!(status, 202, "{text}");
    let run = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{cancel_id}"), &[]).await.json();
    assert_eq!(state_of(&run), pair("completed", "cancelled"));
    let jobs = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{cancel_id}/jobs"), &[]).await.json();
    let states: Vec<(String, String)> = jobs["jobs"].as_array().unwrap().iter().map(state_of).collect();
    assert_eq!(states, [pair("completed", "cancelled"), pair("completed", "cancelled"), pair("completed", "success")]);
    let steps: Vec<(String, String)> = jobs["jobs"][0]["steps"].as_array().unwrap().iter().map(state_of).collect();
    assert_eq!(steps, [pair("completed", "success"), pair("completed", "cancelled")]);
    for job in jobs["jobs"].as_array().unwrap() {
        let check = check_run(port, &s.token, job["id"].as_u64().unwrap()).await;
        assert_eq!(state_of(&check), state_of(job), "{check}");
        assert!(check["completed_at"].is_string(), "{check}");
    }
    assert_eq!(http(port, "POST", &cancel, &headers, None).await.0, 409, "already completed");
    assert_eq!(http(port, "POST", "/repos/acme/widget/actions/runs/999999/cancel", &headers, None).await.0, 404);

    // Cancelled jobs are failed ones to a rerun; the admin API lists reruns.
    assert_eq!(http(port, "POST", &rerun(cancel_id), &headers, None).await.0, 201);
    let jobs = get(port, &s.token, &format!("/repos/acme/widget/actions/runs/{cancel_id}/jobs"), &[]).await.json();
    let states: Vec<(String, String)> = jobs["jobs"].as_array().unwrap().iter().map(state_of).collect();
    assert_eq!(states, [pair("queued", ""), pair("queued", ""), pair("completed", "success")]);
    let admin = admin_headers(port, s.emulator.admin_secret());
    let (status, text) = http(port, "GET", "/_emulator/reruns", &admin, None).await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), serde_json::json!([run_id, cancel_id]));
}

#[tokio::test]
async fn a_secondary_rate_limit_is_a_403_with_retry_after_until_it_is_spent() {
    use github_emulator::Fault;
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    s.emulator.inject(Fault::SecondaryRateLimit {
        method: Some("GET".into()),
        path: "/repos/acme/widget".into(),
        times: 2,
        retry_after_secs: 30,
    });
    for _ in 0..2 {
        let limited = get(port, &s.token, "/repos/acme/widget", &[]).await;
        assert_eq!(limited.status, 403, "{}", limited.body);
        assert_eq!(limited.header("retry-after"), "30");
        assert_eq!(limited.json()["message"], message);
        let remaining: u64 = limited.header("x-ratelimit-remaining").parse().unwrap();
        assert!(remaining > 0, "a secondary limit leaves the primary count alone");
    }
    let served = get(port, &s.token, "/repos/acme/widget", &[]).await;
    assert_eq!(served.status, 200, "spent after `times`");
    assert!(!served.headers.contains_key("retry-after"));

    // Method and path must match; the admin API's JSON form works, with an /api/v3 prefix too.
    s.emulator.inject(Fault::SecondaryRateLimit {
        method: Some("POST".into()),
        path: "/repos/acme/widget".into(),
        times: 1,
        retry_after_secs: 1,
    });
    assert_eq!(get(port, &s.token, "/repos/acme/widget", &[]).await.status, 200);
    let admin = github_support::admin_headers(port, s.emulator.admin_secret());
    let fault = r#"{"kind": "secondary_rate_limit", "path": "/repos/acme/*", "retry_after_secs": 5}"#;
    assert_eq!(github_support::http(port, "POST", "/_emulator/faults", &admin, Some(fault)).await.0, 200);
    assert_eq!(get(port, &s.token, "/user", &[]).await.status, 200, "another path");
    let limited = get(port, &s.token, "/api/v3/repos/acme/widget/pulls/1", &[]).await;
    assert_eq!((limited.status, limited.header("retry-after")), (403, "5"));
    assert_eq!(get(port, &s.token, "/repos/acme/widget", &[]).await.status, 200, "times defaults to 1");
}

#[tokio::test]
async fn an_actions_run_and_its_jobs_answer_a_free_304_while_unchanged() {
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let run_id = s
        .emulator
        .create_actions_run("acme/widget", actions_run("queued", None, vec![job("test", "queued", None)]))
        .unwrap();
    let used = |a: &Answer| -> u64 { a.header("x-ratelimit-used").parse().unwrap() };
    let run_path = format!("/repos/acme/widget/actions/runs/{run_id}");
    let jobs_path = format!("{run_path}/jobs");
    let mut tags = Vec::new();
    for path in [&run_path, &jobs_path] {
        let first = get(port, &s.token, path, &[]).await;
        assert_eq!(first.status, 200);
        let etag = first.header("etag").to_owned();
        assert!(etag.starts_with("W/\""), "{etag}");
        let cached = get(port, &s.token, path, &[format!("If-None-Match: {etag}")]).await;
        assert_eq!(cached.status, 304, "{path}");
        assert!(cached.body.is_empty());
        assert_eq!(cached.header("etag"), etag);
        assert_eq!(used(&cached), used(&first), "a 304 costs nothing");
        tags.push(etag);
    }
    let job_id = get(port, &s.token, &jobs_path, &[]).await.json()["jobs"][0]["id"].as_u64().unwrap();
    s.emulator.update_check_run(job_id, "in_progress", None).unwrap();
    for (path, etag) in [&run_path, &jobs_path].into_iter().zip(&tags) {
        let changed = get(port, &s.token, path, &[format!("If-None-Match: {etag}")]).await;
        assert_eq!(changed.status, 200, "{path} changed with its job");
        assert_ne!(changed.header("etag"), etag);
    }
}
