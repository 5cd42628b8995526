//! Testing PRs for real through the binary, against the GitHub emulator over HTTP and real
//! git repositories: reference cases F1, F6, F7, F11, F24, F38, F41 and design §3/§5.2 rules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;

use github_emulator::Fault;
use serde_json::Value;
use support::world::{CALC_BUGGY, CALC_FIXED, World, fresh_secret};

fn marker_line(body: &str) -> &str {
    body.lines().next().unwrap_or("")
}

#[test]
fn reference_f6_f11_a_passing_pr_reaches_the_merge_gate_at_its_exact_head() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "dark-mode", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    // Routing fields written by `project attach` survive the run (reference F11).
    let mut state = w.sb.read_json(&w.path("c.json"));
    state["repository"] = Value::from("acme/widget");
    state["project_url"] = Value::from("https://chatgpt.com/g/g-p-widget/project");
    state["conversation_url"] = Value::from("https://chatgpt.com/g/g-p-widget/c/task-1");
    fs::write(w.path("c.json"), serde_json::to_string(&state).unwrap()).unwrap();
    // The command proves what was checked out: a detached HEAD at the merge of the API's SHA
    // into the base branch's tip (its second parent), as merging would leave the branch.
    let commands = r#"[["sh", "test.sh"], ["git", "rev-parse", "HEAD^2"], ["git", "status", "--porcelain"]]"#;
    fs::write(w.path("commands.json"), commands).unwrap();

    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "READY_TO_MERGE", "{:#}", out["report"]);
    assert_eq!(out["iteration"], 1);
    assert_eq!(out["report"]["status"], "TEST_PASSED");
    assert_eq!(out["report"]["head_sha"], head.as_str());
    assert_eq!(out["report"]["base_sha"].as_str(), Some(w.tip(&repo, "main").as_str()), "{:#}", out["report"]);
    assert_eq!(out["report"]["tested"]["tree"], "merge");
    assert_eq!(out["report"]["tested"]["base_ref"], "main");
    assert!(out["next_action"].as_str().unwrap().contains("merge"));
    for key in ["repository", "project_url", "conversation_url"] {
        assert_eq!(out[key], state[key], "{key}");
    }
    let log = fs::read_to_string(w.path(&format!("c.d/runs/1-{}.log", &head[..12]))).unwrap();
    assert!(log.contains(&head), "the checkout is the merge of the head SHA:\n{log}");
    assert!(log.contains("$ sh test.sh") && log.contains("ok - 2+3=5"));
    let comments = w.comments(&repo, n);
    assert_eq!(comments.len(), 1);
    assert!(comments[0].contains("## Forge Loop PR test: TEST_PASSED"));
    assert!(marker_line(&comments[0]).contains("iteration=1"));
    assert!(!comments[0].contains("PR_URL"));
    let report: Value =
        serde_json::from_slice(&fs::read(w.path(&format!("c.d/runs/1-{}.json", &head[..12]))).unwrap()).unwrap();
    assert_eq!(report["comment_published"], true);
    assert_eq!(report["environment"]["forgeloop_version"], env!("CARGO_PKG_VERSION"));
    assert!(report["environment"]["tree_sha"].as_str().unwrap().len() == 40);
    assert!(w.run(&["log", "--state", "c.json", "--verify"]).code == 0);
}

#[test]
fn reference_f7_f38_f41_a_failure_is_handed_back_and_commented_only_when_asked() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("c.json", &[]);
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "AWAITING_WEBGPT_FIX");
    assert_eq!(out["report"]["status"], "TEST_FAILED");
    assert_eq!(w.requests_to("/comments"), 0, "no comment without --post-comment");
    let comment = out["report"]["comment_markdown"].as_str().unwrap();
    assert!(comment.contains("not ok - expected 5, got -1"), "F41: failure output reaches the comment");
    assert!(!comment.contains("PR_URL"), "F38: the trailer stays out of the comment");
    let handoff = out["webgpt_handoff"].as_str().unwrap();
    assert!(handoff.contains("PR_URL: <url>") && handoff.contains("not ok"));
    assert_eq!(out["outbox"]["kind"], "handoff");
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "send");
    assert_eq!(next["text"], out["webgpt_handoff"]);

    // WebGPT pushes a fix; the next run posts when asked, and passes.
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    w.commit(&repo, "fix", &[("calc.sh", CALC_FIXED)], "fix the sum");
    let run = w.forge_pr(
        "c.json",
        &format!("https://github.com/acme/widget/pull/{n}")
            .replace("github.com", &w.emu.web_host())
            .replace("https://", "http://"),
        &["--post-comment"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "READY_TO_MERGE");
    let comments = w.comments(&repo, n);
    assert_eq!(comments.len(), 1);
    assert!(marker_line(&comments[0]).contains("iteration=2"));
}

#[test]
fn reference_f1_another_repository_is_refused_before_any_network_call() {
    let w = World::new();
    w.cycle("task.json", &[]);
    let mut state = w.sb.read_json(&w.path("task.json"));
    state["repository"] = Value::from("acme/widget");
    fs::write(w.path("task.json"), serde_json::to_string(&state).unwrap()).unwrap();
    let before = fs::read(w.path("task.json")).unwrap();
    w.emu.clear_requests();
    let run = w.forge_pr("task.json", "acme/other#1", &["--post-comment"]);
    assert_eq!(run.code, 2);
    let out = run.json();
    assert_eq!(out["status"], "REFUSED");
    assert!(out["error"].as_str().unwrap().contains("repository"));
    assert!(w.emu.requests().is_empty(), "no GitHub call: {:?}", w.emu.requests());
    assert_eq!(fs::read(w.path("task.json")).unwrap(), before);
}

#[test]
fn reference_f24_the_cap_blocks_without_touching_github() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    w.cycle("c.json", &["--max-iterations", "1"]);
    let first = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(
        (first.code, first.json()["status"].as_str(), first.json()["iteration"].as_u64()),
        (0, Some("AWAITING_WEBGPT_FIX"), Some(1))
    );
    w.emu.clear_requests();
    let second = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(second.code, 2);
    let out = second.json();
    assert_eq!(out["status"], "BLOCKED_MAX_ITERATIONS");
    assert!(out["next_action"].as_str().unwrap().contains("max_iterations"));
    assert_eq!(out["iteration"], 1);
    assert!(w.emu.requests().is_empty());
    assert_eq!(w.sb.read_json(&w.path("c.json"))["status"], "BLOCKED_MAX_ITERATIONS");
    // Refused from now on, with the reason.
    let third = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!((third.code, third.json()["status"].as_str()), (2, Some("REFUSED")));
}

#[test]
fn a_fork_pr_and_a_deleted_head_branch_are_tested_through_refs_pull() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let fork = w.rt.block_on(w.emu.fork_repo(&repo, "contributor")).unwrap();
    w.commit(&fork, "patch", &[("calc.sh", CALC_FIXED)], "fix in a fork");
    let n = w.rt.block_on(w.emu.open_fork_pr(&repo, &fork, "patch", "main", "fork fix")).unwrap();
    w.rt.block_on(w.emu.delete_branch(&fork, "patch")).unwrap();
    w.cycle("c.json", &[]);
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "READY_TO_MERGE");
    assert_eq!(out["report"]["head_repository"], "contributor/widget");
    assert_eq!(out["report"]["repository"], "acme/widget");
}

#[test]
fn a_head_that_moves_mid_run_is_an_infra_failure_retried_next_time() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    let newer = w.commit(&repo, "other", &[("calc.sh", CALC_BUGGY)], "unrelated");
    w.cycle("c.json", &[]);
    w.inject(Fault::MovePrHead { repo: "acme/widget".into(), number: n, after_gets: 1, to_sha: newer });
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "INFRA_FAILURE");
    assert_eq!(out["infra_failures"], 1);
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!(state["iteration"], 0, "an incomplete run is not an iteration");
    assert_eq!(state["status"], "AWAITING_WEBGPT_PR");
    assert!(
        state["last_error"].as_str().unwrap().contains("moved")
            || state["last_error"].as_str().unwrap().contains("head")
    );
    // Next call: the head is stable again and the run completes (the moved head fails the test).
    let again = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    let out = again.json();
    assert_eq!(out["iteration"], 1);
    assert!(out["infra_failures"].is_null(), "a completed run resets the counter");
}

#[test]
fn three_infra_failures_in_a_row_block_the_cycle() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    w.cycle("c.json", &[]);
    w.inject(Fault::Status {
        method: Some("GET".into()),
        path: format!("/repos/acme/widget/pulls/{n}"),
        status: 502,
        times: 9,
    });
    let mut last = None;
    for expected in ["INFRA_FAILURE", "INFRA_FAILURE", "BLOCKED_INFRA"] {
        let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
        assert_eq!(run.code, 2);
        assert_eq!(run.json()["status"], expected);
        last = Some(run);
    }
    assert!(last.unwrap().json()["error"].as_str().unwrap().contains("502"));
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!((state["status"].as_str(), state["iteration"].as_u64()), (Some("BLOCKED_INFRA"), Some(0)));
}

#[test]
fn a_private_repository_needs_the_token() {
    let w = World::new();
    let repo = w.project("acme", "secret-sauce", true);
    let n = w.pr(&repo, "x", CALC_FIXED);
    w.cycle("c.json", &[]);
    let denied = w.run_env(
        &["forge", "--pr", &format!("acme/secret-sauce#{n}"), "--state", "c.json", "--commands-json", "commands.json"],
        &[("PATH", "/usr/bin:/bin")],
    );
    assert_eq!(denied.code, 2, "{}", denied.stdout);
    assert!(denied.json()["error"].as_str().unwrap().contains("token"));
    let run = w.forge_pr("c.json", &format!("acme/secret-sauce#{n}"), &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "READY_TO_MERGE");
    // The token never lands in the mirror's files.
    let mirror = w.sb.home().join("mirrors/acme/secret-sauce.git");
    for (path, bytes) in support::snapshot(&mirror) {
        assert!(!String::from_utf8_lossy(&bytes).contains(&w.token), "{} holds the token", path.display());
    }
}

#[test]
fn a_timeout_is_a_failed_run_with_the_group_killed() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    w.cycle("c.json", &[]);
    let commands =
        r#"{"commands": [{"argv": ["sh", "-c", "echo started; sleep 30"], "timeout_s": 1}, ["sh", "test.sh"]]}"#;
    fs::write(w.path("slow.json"), commands).unwrap();
    let run =
        w.run(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "c.json", "--commands-json", "slow.json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["report"]["status"], "TEST_FAILED");
    assert_eq!(out["report"]["timed_out"], true);
    assert_eq!(out["report"]["commands"][0]["timed_out"], true);
    assert_eq!(out["report"]["commands"][1]["not_run"], true);
    assert!(out["report"]["comment_markdown"].as_str().unwrap().contains("timed out"));
}

#[test]
fn a_comment_that_fails_to_post_keeps_the_run_and_comment_retries_once() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    w.cycle("c.json", &[]);
    w.inject(Fault::Status {
        method: Some("POST".into()),
        path: format!("/repos/acme/widget/issues/{n}/comments"),
        status: 500,
        times: 1,
    });
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["iteration"], 1, "the run counts although the comment failed");
    assert_eq!(out["report"]["comment_published"], false);
    assert!(out["report"]["comment_error"].as_str().unwrap().contains("500"));
    assert!(w.comments(&repo, n).is_empty());
    let posts = w.emu.requests().iter().filter(|r| r.method == "POST" && r.path.ends_with("/comments")).count();
    assert_eq!(posts, 1, "a failed POST is never retried automatically");
    let retry = w.run(&["comment", "--state", "c.json"]);
    assert_eq!(retry.code, 0, "{}", retry.stdout);
    assert_eq!(retry.json()["report"]["comment_published"], true);
    assert_eq!(w.comments(&repo, n).len(), 1);
    let again = w.run(&["comment", "--state", "c.json"]);
    assert_eq!(again.code, 2, "already published");
    assert_eq!(w.comments(&repo, n).len(), 1);
}

#[test]
fn a_crash_mid_comment_never_double_posts() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    w.cycle("c.json", &[]);
    w.inject(Fault::Delay {
        method: Some("POST".into()),
        path: format!("/repos/acme/widget/issues/{n}/comments"),
        delay_ms: 4000,
        times: 1,
    });
    let mut child = w
        .command(&[
            "forge",
            "--pr",
            &format!("acme/widget#{n}"),
            "--state",
            "c.json",
            "--commands-json",
            "commands.json",
            "--post-comment",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill the process while its comment POST is in flight.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !w.emu.requests().iter().any(|r| r.method == "POST" && r.path.ends_with("/comments")) {
        assert!(std::time::Instant::now() < deadline, "the POST never came");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!(state["iteration"], 1, "the run was recorded before posting");
    // Retrying publishes at most one comment for that iteration, whatever the POST did.
    std::thread::sleep(std::time::Duration::from_secs(5));
    let _ = w.run(&["comment", "--state", "c.json"]);
    let _ = w.run(&["comment", "--state", "c.json"]);
    let comments = w.comments(&repo, n);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    // A new iteration (a new head: the same one is not tested twice) posts its own comment,
    // still one per marker.
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    w.commit(&repo, "x", &[("calc.sh", CALC_FIXED)], "fix");
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let comments = w.comments(&repo, n);
    let markers: std::collections::BTreeSet<&str> = comments.iter().map(|c| marker_line(c)).collect();
    assert_eq!((comments.len(), markers.len()), (2, 2));
}

#[test]
fn a_closed_pr_is_not_tested() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    w.emu.merge_pr(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 2);
    let out = run.json();
    assert_eq!(out["status"], "BLOCKED_PR_CLOSED");
    assert!(out["last_error"].as_str().unwrap().contains("merged"));
    assert_eq!(out["iteration"], 0);
    assert!(w.comments(&repo, n).is_empty());
    assert!(!w.sb.home().join("mirrors/acme/widget.git").exists(), "nothing was fetched");
}

#[test]
fn the_second_iteration_fetches_only_new_objects() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    for i in 0..30 {
        w.commit(&repo, "main", &[(&format!("history/{i}.txt"), &format!("line {i}\n").repeat(50))], "history");
    }
    let n = w.pr(&repo, "x", CALC_BUGGY);
    w.cycle("c.json", &[]);
    assert_eq!(w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]).code, 0);
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    w.commit(&repo, "x", &[("calc.sh", CALC_FIXED)], "fix");
    assert_eq!(w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]).code, 0);
    let log = w.run(&["log", "--state", "c.json"]).json();
    let fetches: Vec<Value> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "run_finished")
        .map(|e| e["data"]["fetch"].clone())
        .collect();
    assert_eq!(fetches.len(), 2);
    assert_eq!(fetches[0]["mirror_created"], true);
    assert_eq!(fetches[1]["mirror_created"], false);
    let (first, second) =
        (fetches[0]["received_objects"].as_u64().unwrap(), fetches[1]["received_objects"].as_u64().unwrap());
    // Both at depth 1 (design §5.2.2): the first brings one commit with its trees and blobs (the
    // 30 history files, the project's few), not the 30 earlier commits; the second only what is new.
    assert_eq!((fetches[0]["depth"].as_u64(), fetches[1]["depth"].as_u64()), (Some(1), Some(1)));
    assert_eq!((fetches[0]["shallow"].as_bool(), fetches[1]["shallow"].as_bool()), (Some(true), Some(true)));
    assert!((31..=45).contains(&first) && second > 0 && second <= 5, "first fetch {first} objects, second {second}");
}

#[test]
fn a_full_history_profile_gets_the_history_and_tags_git_describe_needs() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let tagged = std::process::Command::new("git")
        .current_dir(&repo.path)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid", "tag", "-a", "v0.1", "-m", "v0.1", "main"])
        .status()
        .unwrap();
    assert!(tagged.success());
    for i in 0..3 {
        w.commit(&repo, "main", &[(&format!("history/{i}.txt"), "x\n")], "history");
    }
    let n = w.pr(&repo, "x", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    let commands = r#"{"commands": [["sh", "test.sh"], ["git", "rev-list", "--count", "HEAD"], ["git", "describe"]],
                       "history": "full"}"#;
    fs::write(w.path("commands.json"), commands).unwrap();
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["report"]["status"], "TEST_PASSED");
    let log = fs::read_to_string(w.path(&format!("c.d/runs/1-{}.log", &head[..12]))).unwrap();
    // The emulator's initial commit, project, 3 history commits, the PR's and forgeloop's merge
    // of it into main: 7; the merge is 5 past the tag.
    assert!(log.contains("\n7\n") && log.contains("v0.1-5-g"), "{log}");
    let events = w.run(&["log", "--state", "c.json"]).json();
    let fetch =
        events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "run_finished").unwrap()["data"]["fetch"]
            .clone();
    assert_eq!((fetch["depth"].is_null(), &fetch["shallow"]), (true, &Value::Bool(false)), "{fetch}");
}

#[test]
fn a_secret_in_the_environment_and_output_reaches_no_output_channel() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    let env_secret = fresh_secret("sk-proj-");
    let printed = fresh_secret("ghp_");
    w.cycle("c.json", &[]);
    // The commands print the GitHub token's value and another token, both reaching them
    // through variables the commands file passes on (a commands file may not hold a secret
    // literal); the parent environment carries another credential the commands must never see.
    let commands = r#"{"commands": [{"argv": ["sh", "-c", "echo token=$LEAK_A; echo own=$LEAK_B; env; exit 1"]}],
                       "env_passthrough": ["LEAK_A", "LEAK_B"]}"#;
    fs::write(w.path("leaky.json"), commands).unwrap();
    let run = w.run_env(
        &[
            "forge",
            "--pr",
            &format!("acme/widget#{n}"),
            "--state",
            "c.json",
            "--commands-json",
            "leaky.json",
            "--post-comment",
        ],
        &[("GH_TOKEN", &w.token), ("OPENAI_API_KEY", &env_secret), ("LEAK_A", &w.token), ("LEAK_B", &printed)],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert!(out["report"]["failure_output"].as_str().unwrap().contains("[REDACTED"));
    let mut channels: Vec<(String, String)> =
        vec![("stdout".into(), run.stdout.clone()), ("stderr".into(), run.stderr.clone())];
    for body in w.comments(&repo, n) {
        channels.push(("comment".into(), body));
    }
    for (path, bytes) in support::snapshot(w.sb.dir.path()) {
        // The emulator's repositories and the test's own input are not forgeloop output.
        if path.starts_with(w.path("emulator")) || path == w.path("leaky.json") {
            continue;
        }
        channels.push((path.display().to_string(), String::from_utf8_lossy(&bytes).into_owned()));
    }
    assert!(channels.len() > 5);
    for (name, text) in channels {
        for secret in [&w.token, &printed, &env_secret] {
            assert!(!text.contains(secret.as_str()), "{name} leaks a secret");
        }
    }
}

#[test]
fn a_secret_literal_in_a_commands_file_is_refused_and_a_passed_through_one_is_run_the_same_twice() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_BUGGY);
    let pr = format!("acme/widget#{n}");
    w.cycle("c.json", &[]);
    // Made at run time, never committed: a value the redactor masks under a secret's name.
    let secret = fresh_secret("");
    let literal =
        format!(r#"{{"commands": [["true"], {{"argv": ["sh", "test.sh"], "env": {{"JWT_SECRET": "{secret}"}}}}]}}"#);
    fs::write(w.path("literal.json"), literal).unwrap();
    fs::write(w.path("flag.json"), format!(r#"[["sh", "test.sh", "--password={secret}"]]"#)).unwrap();
    let before = fs::read(w.path("c.json")).unwrap();
    w.emu.clear_requests();
    for (file, place) in [("literal.json", "command 2, env JWT_SECRET"), ("flag.json", "command 1, argument 3")] {
        for args in [
            vec!["forge", "--pr", &pr, "--state", "c.json", "--commands-json", file],
            vec!["test", "--pr", &pr, "--commands-json", file],
        ] {
            let run = w.run(&args);
            assert_eq!(run.code, 2, "{args:?}: {}\n{}", run.stdout, run.stderr);
            let error = run.json()["error"].as_str().unwrap().to_owned();
            assert!(error.contains(place) && error.contains("env_passthrough"), "{args:?}: {error}");
            assert!(!run.stdout.contains(&secret) && !run.stderr.contains(&secret), "{args:?} echoes the secret");
        }
    }
    assert!(w.emu.requests().is_empty(), "refused before any GitHub call: {:?}", w.emu.requests());
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before, "a refused profile changes nothing");

    // The same value passed through the environment: stored as written, run again unchanged.
    let passed = r#"{"commands": [{"argv": ["sh", "-c", "test -n \"$FIXTURE_JWT\" && echo fixture-seen && sh test.sh"], "env": {"NODE_ENV": "test"}}],
                     "env_passthrough": ["FIXTURE_JWT"]}"#;
    fs::write(w.path("passed.json"), passed).unwrap();
    let env = [("GH_TOKEN", w.token.as_str()), ("FIXTURE_JWT", secret.as_str())];
    let first = w.run_env(&["forge", "--pr", &pr, "--state", "c.json", "--commands-json", "passed.json"], &env);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let first = first.json();
    assert_eq!(first["report"]["status"], "TEST_FAILED");
    let written: Value = serde_json::from_str(passed).unwrap();
    assert_eq!(w.sb.read_json(&w.path("c.json"))["commands"], written, "stored exactly as given");
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    w.commit(&repo, "x", &[("calc.sh", CALC_FIXED)], "fix");
    let second = w.run_env(&["forge", "--pr", &pr, "--state", "c.json"], &env);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    let second = second.json();
    assert_eq!((second["status"].as_str(), second["iteration"].as_u64()), (Some("READY_TO_MERGE"), Some(2)));
    let sha = |out: &Value| out["report"]["environment"]["commands_sha256"].as_str().unwrap().to_owned();
    assert_eq!(sha(&first), sha(&second), "iteration 2 ran exactly the first run's commands");
    assert_eq!(second["commands"], written);
    for (i, out) in [&first, &second].into_iter().enumerate() {
        let head = out["report"]["head_sha"].as_str().unwrap();
        let log = fs::read_to_string(w.path(&format!("c.d/runs/{}-{}.log", i + 1, &head[..12]))).unwrap();
        assert!(log.contains("fixture-seen"), "run {} got the passed-through value:\n{log}", i + 1);
    }
}

#[test]
fn one_shot_test_status_and_exit_codes() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let good = w.pr(&repo, "good", CALC_FIXED);
    let bad = w.pr(&repo, "bad", CALC_BUGGY);
    let run = w.run(&[
        "test",
        "--pr",
        &format!("acme/widget#{good}"),
        "--commands-json",
        "commands.json",
        "--result",
        "r.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(w.sb.read_json(&w.path("r.json"))["status"], "TEST_PASSED");
    let run =
        w.run(&["test", "--pr", &format!("acme/widget#{bad}"), "--commands-json", "commands.json", "--post-comment"]);
    assert_eq!(run.code, 1);
    assert_eq!(w.comments(&repo, bad).len(), 1);
    let run =
        w.run(&["test", "--pr", &format!("acme/widget#{bad}"), "--commands-json", "commands.json", "--post-comment"]);
    assert_eq!(run.code, 1);
    assert_eq!(w.comments(&repo, bad).len(), 1, "same SHA, same marker: updated, not reposted");
    let missing = w.run(&["test", "--pr", "acme/widget#999", "--commands-json", "commands.json"]);
    assert_eq!(missing.code, 2);
    let status = w.run(&["status", "--pr", &format!("acme/widget#{good}")]);
    assert_eq!(status.code, 0, "{}", status.stdout);
    let out = status.json();
    assert_eq!((out["state"].as_str(), out["draft"].as_bool()), (Some("open"), Some(false)));
    assert_eq!(out["head_sha"].as_str().unwrap().len(), 40);
    assert!(out["checks"]["total"].is_u64());
    let bad_commands = w.run(&["test", "--pr", "acme/widget#1", "--commands-json", "nope.json"]);
    assert_eq!(bad_commands.code, 2);
    assert!(bad_commands.json()["error"].as_str().unwrap().contains("nope.json"));
}

#[test]
fn reference_f25_to_f31_repository_provisioning() {
    let w = World::new();
    let brief = support::BRIEF;
    let q = support::QUESTION;
    // F31: no --new-repo, no GitHub call at all.
    let run =
        w.run(&["forge", "--request", "r", "--intent-brief", brief, "--webgpt-question", q, "--state", "plain.json"]);
    assert_eq!(run.code, 0);
    assert!(w.emu.requests().is_empty());
    // F27/F28: unsafe names are refused before any call.
    for bad in ["../evil", "-h", "--help", ".."] {
        let arg = format!("--new-repo={bad}");
        let run = w.run(&[
            "forge",
            "--request",
            "r",
            "--intent-brief",
            brief,
            "--webgpt-question",
            q,
            "--state",
            "x.json",
            &arg,
        ]);
        assert_eq!(run.code, 2, "{bad}");
        assert!(run.json()["error"].as_str().unwrap().contains("repository name"), "{bad}");
    }
    assert!(w.emu.requests().is_empty());
    // F25/F30: private by default, verified, recorded as the binding, named in the prompt.
    let run = w.run(&[
        "forge",
        "--request",
        "r",
        "--intent-brief",
        brief,
        "--webgpt-question",
        q,
        "--state",
        "new.json",
        "--new-repo",
        "widget",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    let full = format!("{}/widget", support::world::LOGIN);
    assert_eq!(out["repository"], full.as_str());
    assert_eq!(out["new_repository"]["private"], true);
    let prompt = out["webgpt_prompt"].as_str().unwrap();
    assert!(prompt.contains(&full) && prompt.contains("Do not create a new repository"));
    assert!(w.emu.requests().iter().any(|r| r.method == "POST" && r.path == "/user/repos"));
    // Rerunning with the same name adopts the repository instead of failing.
    let again = w.run(&[
        "forge",
        "--request",
        "r",
        "--intent-brief",
        brief,
        "--webgpt-question",
        q,
        "--state",
        "again.json",
        "--new-repo",
        "widget",
    ]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert_eq!(again.json()["repository"], full.as_str());
    // The same state twice: refused before any network call.
    w.emu.clear_requests();
    let same = w.run(&[
        "forge",
        "--request",
        "r",
        "--intent-brief",
        brief,
        "--webgpt-question",
        q,
        "--state",
        "new.json",
        "--new-repo",
        "widget",
    ]);
    assert_eq!((same.code, same.json()["status"].as_str()), (2, Some("STATE_EXISTS")));
    assert!(w.emu.requests().is_empty());
    // F26: --public; and an organization owner.
    let run = w.run(&[
        "forge",
        "--request",
        "r",
        "--intent-brief",
        brief,
        "--webgpt-question",
        q,
        "--state",
        "pub.json",
        "--new-repo",
        "open",
        "--public",
        "--owner",
        "acme",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["new_repository"]["private"], false);
    assert!(w.emu.requests().iter().any(|r| r.method == "POST" && r.path == "/orgs/acme/repos"));
    // F29: a failing creation is an error and creates no state.
    w.inject(Fault::Status { method: Some("POST".into()), path: "/user/repos".into(), status: 500, times: 1 });
    let run = w.run(&[
        "forge",
        "--request",
        "r",
        "--intent-brief",
        brief,
        "--webgpt-question",
        q,
        "--state",
        "fail.json",
        "--new-repo",
        "broken",
    ]);
    assert_eq!(run.code, 2);
    assert!(!w.path("fail.json").exists());
}

/// The kept checkout's path as the output shows it (the home may be written as `~`).
fn kept_path(shown: &Value) -> std::path::PathBuf {
    let shown = shown.as_str().unwrap_or_else(|| panic!("no path in the output"));
    match shown.strip_prefix("~/") {
        Some(rest) => std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(rest),
        None => std::path::PathBuf::from(shown),
    }
}

#[test]
fn keep_checkout_says_where_in_the_output_and_the_report() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    let one =
        w.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", "commands.json", "--keep-checkout"]);
    assert_eq!(one.code, 0, "{}\n{}", one.stdout, one.stderr);
    let kept = kept_path(&one.json()["kept_checkout"]);
    assert_eq!(fs::read_to_string(kept.join("calc.sh")).unwrap(), CALC_FIXED, "the PR's tree is there");
    fs::remove_dir_all(&kept).unwrap();
    w.cycle("c.json", &[]);
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--keep-checkout"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let kept = kept_path(&run.json()["report"]["kept_checkout"]);
    assert!(kept.join("test.sh").is_file(), "{}", kept.display());
    let head = w.emu.pr_head(&repo, n).unwrap();
    let report: Value =
        serde_json::from_slice(&fs::read(w.path(&format!("c.d/runs/1-{}.json", &head[..12]))).unwrap()).unwrap();
    assert!(report["kept_checkout"].is_string(), "the report file says it too: {report}");
    fs::remove_dir_all(&kept).unwrap();
    // Without the flag nothing is kept, and nothing is said.
    let plain = w.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", "commands.json"]);
    assert!(plain.json().get("kept_checkout").is_none());
}

#[test]
fn two_one_shot_runs_of_one_pr_at_once_write_logs_and_reports_of_their_own() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    let pr = format!("acme/widget#{n}");
    let spawn = || {
        w.command(&["test", "--pr", &pr, "--commands-json", "commands.json"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let docs: Vec<Value> =
        [a, b].into_iter().map(|c| serde_json::from_slice(&c.wait_with_output().unwrap().stdout).unwrap()).collect();
    let logs: Vec<&str> = docs.iter().map(|d| d["log_path"].as_str().unwrap()).collect();
    assert_ne!(logs[0], logs[1], "each run has its own log");
    for doc in &docs {
        assert_eq!(doc["status"], "TEST_PASSED", "{doc}");
        let log = kept_path(&doc["log_path"]);
        let text = fs::read_to_string(&log).unwrap();
        assert_eq!(text.matches("$ sh test.sh").count(), 1, "no interleaving: {text}");
        assert!(log.with_extension("json").is_file(), "its own report");
    }
}
