//! The `github-checks` executor (design §5.7) through the binary: forgeloop runs nothing
//! locally, waits for the PR's CI on the emulator (real HTTP on 127.0.0.1), and turns the
//! check runs into the same report, comment and handoff as a local run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::thread;
use std::time::Duration;

use github_emulator::{ActionsJob, ActionsRun, Fault, JobStep, RepoHandle};
use serde_json::Value;
use support::world::{CALC_BUGGY, CALC_FIXED, World, fresh_secret};

const CI_PROFILE: &str =
    r#"{"executor": "github-checks", "checks": ["test"], "timeout_s": 60, "appear_timeout_s": 30}"#;

/// A world whose forgeloop polls fast (the defaults are 5 s and 60 s).
fn world() -> World {
    let w = World::new();
    let config = w.path("xdg-config/forgeloop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "[checks]\npoll_min_s = 0.05\npoll_max_s = 0.2\n").unwrap();
    fs::write(w.path("ci.json"), CI_PROFILE).unwrap();
    w
}

fn step(number: u64, name: &str, conclusion: Option<&str>) -> JobStep {
    JobStep {
        name: name.to_owned(),
        status: if conclusion.is_some() { "completed" } else { "in_progress" }.to_owned(),
        conclusion: conclusion.map(str::to_owned),
        number,
        ..JobStep::default()
    }
}

/// Scripts GitHub Actions for `sha`: the `test` job (id `job_id`) appears in progress after
/// `delays.0` ms, then completes with `conclusion` and `log` after `delays.1` ms more.
fn ci(w: &World, repo: &RepoHandle, sha: &str, job_id: u64, (conclusion, log): (&str, &str), delays: (u64, u64)) {
    let (appear, run) = delays;
    thread::sleep(Duration::from_millis(appear));
    let failed = conclusion != "success";
    let steps = vec![
        step(1, "Set up job", Some("success")),
        step(2, "Run sh test.sh", Some(if failed { "failure" } else { "success" })),
        step(3, "Complete job", Some(if failed { "skipped" } else { "success" })),
    ];
    let job = ActionsJob {
        id: Some(job_id),
        name: "test".to_owned(),
        status: "in_progress".to_owned(),
        steps,
        ..ActionsJob::default()
    };
    let run_def = ActionsRun {
        name: "CI".to_owned(),
        head_sha: sha.to_owned(),
        event: "pull_request".to_owned(),
        status: "in_progress".to_owned(),
        jobs: vec![job],
        ..ActionsRun::default()
    };
    w.emu.create_actions_run(repo, run_def).unwrap();
    thread::sleep(Duration::from_millis(run));
    w.emu.set_job_log(job_id, log);
    w.emu.update_check_run(job_id, "completed", Some(conclusion)).unwrap();
}

fn actions_log(lines: &[&str], failed: bool) -> String {
    let mut out = String::new();
    let mut push = |text: &str| out.push_str(&format!("2026-12-01T10:00:00.0000000Z {text}\n"));
    push("##[group]Run actions/checkout@v4");
    push("Syncing repository");
    push("##[endgroup]");
    push("##[group]Run sh test.sh");
    push("sh test.sh");
    push("##[endgroup]");
    for line in lines {
        push(line);
    }
    if failed {
        push("##[error]Process completed with exit code 1.");
    }
    push("Cleaning up orphan processes");
    out
}

#[test]
fn a_failing_ci_is_handed_back_with_its_failing_step_and_a_fixed_push_passes() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let pr = format!("acme/widget#{n}");
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    let secret = fresh_secret("ghp_");
    let log = actions_log(&[&format!("GH_TOKEN={secret}"), "not ok - expected 5, got -1"], true);

    let run = thread::scope(|s| {
        s.spawn(|| ci(&w, &repo, &head, 7_000_001, ("failure", &log), (300, 400)));
        w.run(&["forge", "--pr", &pr, "--state", "c.json", "--commands-json", "ci.json", "--post-comment"])
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "AWAITING_WEBGPT_FIX", "{out}");
    assert_eq!(out["iteration"], 1);
    let report = &out["report"];
    assert_eq!(report["status"], "TEST_FAILED");
    assert_eq!(report["head_sha"], head.as_str());
    assert_eq!(report["commands"], Value::Array(Vec::new()), "nothing ran here");
    assert_eq!(report["checks"][0]["name"], "test");
    assert_eq!(report["checks"][0]["conclusion"], "failure");
    assert_eq!(report["checks"][0]["app"], "github-actions");
    assert!(report["checks"][0]["url"].as_str().unwrap().starts_with("http"), "{report}");
    assert_eq!(report["environment"]["executor"], "github-checks");
    assert!(report["environment"].get("sandbox").is_none());

    // The handoff carries the failing step's name and its error lines, and no secret.
    let handoff = out["webgpt_handoff"].as_str().unwrap();
    assert!(handoff.contains("Failing step: Run sh test.sh"), "{handoff}");
    assert!(handoff.contains("not ok - expected 5, got -1"), "{handoff}");
    assert!(handoff.contains("Error: Process completed with exit code 1."), "{handoff}");
    assert!(!handoff.contains("Syncing repository"), "only the failing step: {handoff}");
    assert!(handoff.contains("| Check | Result |"), "{handoff}");
    let log_rel = format!("c.d/runs/1-{}.log", &head[..12]);
    let run_log = fs::read_to_string(w.path(&log_rel)).unwrap();
    assert!(run_log.contains("check test: not_reported"), "{run_log}");
    assert!(run_log.contains("check test: in_progress"), "{run_log}");
    assert!(run_log.contains("check test: failure"), "{run_log}");
    let comments = w.comments(&repo, n);
    assert_eq!(comments.len(), 1);
    let state_text = fs::read_to_string(w.path("c.json")).unwrap();
    for (name, text) in [
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
        ("log", &run_log),
        ("comment", &comments[0]),
        ("state", &state_text),
    ] {
        assert!(!text.contains(&secret), "{name} leaks the secret");
        assert!(!text.contains(&w.token), "{name} leaks the token");
    }
    // The log came from the log host, without the token.
    let log_host = w.emu.log_host_requests();
    assert!(!log_host.is_empty(), "the job log was downloaded");
    assert!(log_host.iter().all(|r| !r.had_authorization()), "{log_host:?}");
    // Unchanged answers were asked conditionally and came back as 304s.
    let not_modified = w.emu.requests().iter().filter(|r| r.path.contains("/check-runs") && r.status == 304).count();
    assert!(not_modified > 0, "{:?}", w.emu.requests());

    // WebGPT pushes a fix: a new head, a new CI run, a pass.
    let fixed = w.commit(&repo, "fix", &[("calc.sh", CALC_FIXED)], "fix: add");
    let pass_log = actions_log(&["ok - 2+3=5"], false);
    let run = thread::scope(|s| {
        s.spawn(|| ci(&w, &repo, &fixed, 7_000_002, ("success", &pass_log), (100, 200)));
        w.run(&["forge", "--pr", &pr, "--state", "c.json"])
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "READY_TO_MERGE", "{out}");
    assert_eq!(out["iteration"], 2);
    assert_eq!(out["report"]["head_sha"], fixed.as_str());
    assert_eq!(out["report"]["checks"][0]["conclusion"], "success");
    assert!(w.run(&["log", "--state", "c.json", "--verify"]).code == 0);
}

#[test]
fn a_check_that_never_appears_is_an_infra_failure_with_its_hint() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    w.cycle("c.json", &[]);
    fs::write(w.path("ci.json"), r#"{"executor": "github-checks", "checks": ["test"], "appear_timeout_s": 1}"#)
        .unwrap();
    // Another check exists; the wanted one never comes.
    let head = w.emu.pr_head(&repo, n).unwrap();
    let lint = github_emulator::CheckRun {
        name: "lint".into(),
        status: "completed".into(),
        conclusion: Some("success".into()),
        ..Default::default()
    };
    w.emu.publish_check_run(&head, lint).unwrap();
    let run = w.run(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "c.json", "--commands-json", "ci.json"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "INFRA_FAILURE", "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("no check run named test appeared"), "{error}");
    assert!(error.contains("fork") && error.contains("triggered"), "the hint: {error}");
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!(state["iteration"], 0, "not an iteration");
    assert_eq!(state["infra_failures"], 1);
    assert!(state["running"].is_null());
}

#[test]
fn the_cap_and_the_binding_refuse_before_any_waiting() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    let elsewhere = w.project("acme", "other", false);
    let other = w.pr(&elsewhere, "y", CALC_BUGGY);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &["--max-iterations", "1"]);
    let done = github_emulator::CheckRun {
        name: "test".into(),
        status: "completed".into(),
        conclusion: Some("failure".into()),
        ..Default::default()
    };
    w.emu.publish_check_run(&head, done).unwrap();
    let pr = format!("acme/widget#{n}");
    let first = w.run(&["forge", "--pr", &pr, "--state", "c.json", "--commands-json", "ci.json"]);
    assert_eq!(first.json()["status"], "AWAITING_WEBGPT_FIX", "{}", first.stdout);

    // The cap: blocked without a GitHub call.
    w.emu.clear_requests();
    let capped = w.run(&["forge", "--pr", &pr, "--state", "c.json"]);
    assert_eq!(capped.json()["status"], "BLOCKED_MAX_ITERATIONS", "{}", capped.stdout);
    assert!(w.emu.requests().is_empty(), "{:?}", w.emu.requests());

    // Bound to acme/widget by its first run: a PR of another repository is refused without a
    // GitHub call.
    w.cycle("d.json", &[]);
    let bound = w.run(&["forge", "--pr", &pr, "--state", "d.json", "--commands-json", "ci.json"]);
    assert_eq!(bound.json()["status"], "AWAITING_WEBGPT_FIX", "{}", bound.stdout);
    w.emu.clear_requests();
    let wrong = w.run(&["forge", "--pr", &format!("acme/other#{other}"), "--state", "d.json"]);
    assert_eq!((wrong.code, wrong.json()["status"].as_str()), (2, Some("REFUSED")), "{}", wrong.stdout);
    assert!(w.emu.requests().is_empty(), "{:?}", w.emu.requests());
}

#[test]
fn a_rate_limit_is_waited_out_and_other_providers_output_is_the_failure_text() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    let head = w.emu.pr_head(&repo, n).unwrap();
    let check = github_emulator::CheckRun {
        name: "test".into(),
        status: "completed".into(),
        conclusion: Some("failure".into()),
        app: Some("buildkite".into()),
        output: Some(github_emulator::CheckOutput {
            title: Some("2 tests failed".into()),
            summary: Some("calc_test: expected 5, got -1".into()),
            text: None,
        }),
        ..Default::default()
    };
    w.emu.publish_check_run(&head, check).unwrap();
    w.inject(Fault::RateLimit {
        method: Some("GET".into()),
        path: format!("/repos/acme/widget/commits/{head}/check-runs"),
        times: 2,
        reset_after_secs: 1,
        status: 403,
    });
    // Then GitHub's secondary limit, with `Retry-After`.
    w.inject(Fault::SecondaryRateLimit {
        method: Some("GET".into()),
        path: format!("/repos/acme/widget/commits/{head}/check-runs"),
        times: 1,
        retry_after_secs: 1,
    });
    let run = w.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", "ci.json"]);
    assert_eq!(run.code, 1, "a failed verdict: {}\n{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["status"], "TEST_FAILED");
    assert_eq!(report["checks"][0]["app"], "buildkite");
    let failure = report["failure_output"].as_str().unwrap();
    assert!(failure.contains("2 tests failed") && failure.contains("calc_test: expected 5, got -1"), "{failure}");
    assert!(w.emu.log_host_requests().is_empty(), "not an Actions job: no log download");
    let limited = w.emu.requests().iter().filter(|r| r.path.ends_with("/check-runs") && r.status == 403).count();
    assert_eq!(limited, 3, "every rate-limited answer was waited out: {:?}", w.emu.requests());
}

#[test]
fn a_person_stops_a_wait_for_ci_and_it_is_not_an_iteration() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    // CI starts and never finishes.
    let job =
        ActionsJob { id: Some(7_000_003), name: "test".into(), status: "in_progress".into(), ..Default::default() };
    let run_def = ActionsRun {
        name: "CI".into(),
        head_sha: head.clone(),
        status: "in_progress".into(),
        jobs: vec![job],
        ..Default::default()
    };
    w.emu.create_actions_run(&repo, run_def).unwrap();
    let pr = format!("acme/widget#{n}");
    let child = w
        .command(&["forge", "--pr", &pr, "--state", "c.json", "--commands-json", "ci.json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let log = w.path(&format!("c.d/runs/1-{}.log", &head[..12]));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !fs::read_to_string(&log).unwrap_or_default().contains("check test: in_progress") {
        assert!(std::time::Instant::now() < deadline, "the wait never showed the check in progress");
        thread::sleep(Duration::from_millis(50));
    }
    // The control room's view of it: a live CI wait with the check's state.
    let paths = forgeloop::store::layout::CyclePaths::new(w.path("c.json")).unwrap();
    let state: forgeloop::domain::state::CycleState =
        serde_json::from_slice(&fs::read(w.path("c.json")).unwrap()).unwrap();
    let live = forgeloop::cycle::live::probe(&paths, &state).expect("the wait is live");
    assert_eq!(live.checks, Some(vec![("test".to_owned(), "in_progress".to_owned())]));

    let abort = w.run(&["abort", "--state", "c.json", "--reason", "CI is stuck"]);
    assert_eq!(abort.code, 0, "{}\n{}", abort.stdout, abort.stderr);
    assert_eq!(abort.json()["status"], "ABORTED");
    let out = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "RUN_CANCELLED", "{doc}");
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!((state["status"].as_str(), state["iteration"].as_u64()), (Some("ABORTED"), Some(0)));
}

/// The control room's rerun of a failed CI verdict, in process as the control room calls it.
fn rerun(w: &World) -> Result<forgeloop::cycle::pr_test::Outcome, forgeloop::error::Error> {
    let mut ctx = w.ctx();
    ctx.config.checks.poll_min_s = Some(0.05);
    ctx.config.checks.poll_max_s = Some(0.2);
    let paths = forgeloop::store::layout::CyclePaths::new(w.path("c.json")).unwrap();
    let (_tx, cancel) = tokio::sync::watch::channel(false);
    w.rt.block_on(async {
        let engine = forgeloop::cycle::pr_test::Engine::connect(&ctx.github_api, Some(w.token.clone())).unwrap();
        forgeloop::cycle::pr_test::rerun(&ctx, &engine, &paths, cancel).await
    })
}

#[test]
fn rerun_asks_github_to_rerun_the_failed_jobs_or_says_why_it_cannot() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    // A flaky failure on the head.
    let flaky = actions_log(&["connection reset by peer"], true);
    ci(&w, &repo, &head, 7_000_020, ("failure", &flaky), (0, 0));
    let first =
        w.run(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "c.json", "--commands-json", "ci.json"]);
    assert_eq!(first.json()["status"], "AWAITING_WEBGPT_FIX", "{}", first.stdout);

    // A token that may not re-run workflows: said plainly, nothing recorded.
    let rerun_paths = "/repos/acme/widget/actions/runs/*".to_owned();
    w.inject(Fault::Status { method: Some("POST".into()), path: rerun_paths, status: 403, times: 1 });
    let before = fs::read(w.path("c.json")).unwrap();
    let refused = rerun(&w).err().expect("a 403 is an error").to_string();
    assert!(refused.contains("actions: write") && refused.contains("on GitHub"), "{refused}");
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before);

    // Allowed: GitHub queues a new run of the job; it passes this time.
    let outcome = thread::scope(|s| {
        s.spawn(|| {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            let queued = loop {
                let found = w.emu.check_runs(&head).into_iter().find(|r| r.name == "test" && r.status == "queued");
                if let Some(run) = found {
                    break run.id.unwrap();
                }
                assert!(std::time::Instant::now() < deadline, "no re-run was queued: {:?}", w.emu.check_runs(&head));
                thread::sleep(Duration::from_millis(20));
            };
            // It starts in a later second than the failed run (GitHub's times have whole
            // seconds; the test's job id is larger than the emulator's new ids, so a tie would
            // keep the old run): the emulator's clock moves on, no sleep.
            w.emu.advance_clock(2);
            w.emu.update_check_run(queued, "completed", Some("success")).unwrap();
        });
        rerun(&w)
    })
    .unwrap();
    assert_eq!(w.emu.reruns().len(), 1);
    assert_eq!(outcome.saved.state.status.as_str(), "READY_TO_MERGE", "{:?}", w.emu.check_runs(&head));
    assert_eq!(outcome.saved.state.iteration, 2);
}

#[test]
fn required_checks_come_from_the_base_branch_or_the_error_asks_for_names() {
    use github_emulator::RequiredChecksSource;
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    let pr = format!("acme/widget#{n}");
    fs::write(w.path("required.json"), r#"{"executor": "github-checks", "checks": "required", "appear_timeout_s": 5}"#)
        .unwrap();
    let test = |w: &World| w.run(&["test", "--pr", &pr, "--commands-json", "required.json"]);

    // Nothing required: refused with the fix, before any wait.
    let none = test(&w);
    assert_eq!(none.code, 2, "{}", none.stdout);
    let error = none.json()["error"].as_str().unwrap().to_owned();
    assert!(error.contains("requires no status checks") && error.contains("\"checks\": [\"test\"]"), "{error}");
    assert_eq!(w.requests_to("/check-runs"), 0);

    // Branch protection names `test`, a ruleset names `lint`: both are waited for.
    w.emu.set_required_checks(&repo, "main", vec!["test".into()], RequiredChecksSource::BranchProtection).unwrap();
    w.emu.set_required_checks(&repo, "main", vec!["lint".into()], RequiredChecksSource::Ruleset).unwrap();
    for name in ["test", "lint"] {
        let check = github_emulator::CheckRun {
            name: name.into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            ..Default::default()
        };
        w.emu.publish_check_run(&head, check).unwrap();
    }
    let passed = test(&w);
    assert_eq!(passed.code, 0, "{}\n{}", passed.stdout, passed.stderr);
    let report = passed.json();
    let names: Vec<&str> = report["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["test", "lint"]);

    // A token that may read neither: said so, with the fix.
    for path in
        ["/repos/acme/widget/branches/main/protection/required_status_checks", "/repos/acme/widget/rules/branches/main"]
    {
        w.inject(Fault::Status { method: None, path: path.into(), status: 403, times: 1 });
    }
    let forbidden = test(&w);
    assert_eq!(forbidden.code, 2, "{}", forbidden.stdout);
    let error = forbidden.json()["error"].as_str().unwrap().to_owned();
    assert!(error.contains("may not read the branch protection") && error.contains("name the checks"), "{error}");
}

#[test]
fn a_dispatch_starts_the_workflow_on_the_head_branch_and_a_fork_is_refused() {
    let w = world();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "feature/x", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    fs::write(
        w.path("dispatch.json"),
        r#"{"executor": "github-checks", "checks": ["test"], "dispatch": {"workflow": "forgeloop.yml", "inputs": {"suite": "full", "sha": "{head_sha}"}}}"#,
    )
    .unwrap();
    let pass = actions_log(&["ok - 2+3=5"], false);
    let run = thread::scope(|s| {
        s.spawn(|| {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while w.emu.dispatches().is_empty() {
                assert!(std::time::Instant::now() < deadline, "no dispatch");
                thread::sleep(Duration::from_millis(20));
            }
            ci(&w, &repo, &head, 7_000_030, ("success", &pass), (0, 100));
        });
        w.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", "dispatch.json"])
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["status"], "TEST_PASSED");
    let dispatches = w.emu.dispatches();
    assert_eq!(dispatches.len(), 1);
    assert_eq!((dispatches[0].workflow.as_str(), dispatches[0].git_ref.as_str()), ("forgeloop.yml", "feature/x"));
    assert_eq!(dispatches[0].inputs["suite"], "full");
    assert_eq!(dispatches[0].inputs["sha"], head.as_str(), "{{head_sha}} is the SHA under test");

    let fork = w.rt.block_on(w.emu.fork_repo(&repo, "contributor")).unwrap();
    w.commit(&fork, "patch", &[("calc.sh", CALC_FIXED)], "fix in a fork");
    let m = w.rt.block_on(w.emu.open_fork_pr(&repo, &fork, "patch", "main", "fork fix")).unwrap();
    let refused = w.run(&["test", "--pr", &format!("acme/widget#{m}"), "--commands-json", "dispatch.json"]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(refused.json()["error"].as_str().unwrap().contains("lives in a fork"), "{}", refused.stdout);
    assert_eq!(w.emu.dispatches().len(), 1, "nothing dispatched for the fork");
}
