//! The request side of the loop through the real binary: reference test cases F8–F23,
//! F32–F37 and forgeloop's new rules (never overwrite, continue-from, task spaces, busy
//! cycles, human-only actions, malformed states).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;

use forgeloop::store::lock::FileLock;
use serde_json::Value;
use support::{BRIEF, QUESTION, Sandbox, snapshot};

#[test]
fn reference_f8_to_f10_request_mode_creates_the_state() {
    let sb = Sandbox::new();
    let run = sb.start("cycle.json", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "AWAITING_WEBGPT_PR");
    assert_eq!(out["request"], "Add dark mode");
    assert!(out["next_action"].as_str().unwrap().contains("Project"));
    let file = sb.read_json(&sb.path("cycle.json"));
    assert_eq!(file["iteration"], 0);
    assert_eq!(file["intent_brief"], BRIEF);
    assert_eq!(file["webgpt_question"], QUESTION);
    let prompt = file["webgpt_prompt"].as_str().unwrap();
    assert!(prompt.contains(&format!("## Confirmed user intent\n{BRIEF}")));
    assert!(prompt.contains(&format!("## Confirmed WebGPT question\n{QUESTION}")));
    assert!(prompt.contains("PR_URL: <url>"), "reference F37");
}

#[test]
fn reference_f15_help_lists_forge_and_its_cycle_alias() {
    let sb = Sandbox::new();
    let run = sb.run(&["--help"]);
    assert_eq!(run.code, 0);
    for word in ["forge", "cycle", "handoff", "iterate", "next", "list"] {
        assert!(run.stdout.contains(word), "help lacks {word}:\n{}", run.stdout);
    }
    assert!(run.stdout.contains("[alias: cycle]") || run.stdout.contains("[aliases: cycle]"), "{}", run.stdout);
}

#[test]
fn reference_f16_the_cycle_alias_runs_request_mode() {
    let sb = Sandbox::new();
    let run = sb.run(&[
        "cycle",
        "--request",
        "Add dark mode",
        "--intent-brief",
        BRIEF,
        "--webgpt-question",
        QUESTION,
        "--state",
        "legacy-cycle.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "AWAITING_WEBGPT_PR");
    assert_eq!(sb.read_json(&sb.path("legacy-cycle.json"))["request"], "Add dark mode");
}

#[test]
fn reference_f17_f18_request_needs_a_confirmed_brief_and_question() {
    let sb = Sandbox::new();
    let run = sb.run(&["forge", "--request", "Add dark mode", "--state", "cycle.json"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"].as_str().unwrap().contains("--intent-brief"));
    let run = sb.run(&["forge", "--request", "Add dark mode", "--intent-brief", BRIEF, "--state", "cycle.json"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"].as_str().unwrap().contains("--webgpt-question"));
    assert!(!sb.path("cycle.json").exists());
}

/// Without a question, with a person to confirm in the control room: forgeloop proposes one
/// from the brief (Goal and Success), marked as proposed; nothing is sent before they confirm.
#[test]
fn without_a_question_a_person_confirms_one_proposed_from_the_brief() {
    let sb = Sandbox::new();
    let args = ["forge", "--request", "Add dark mode", "--intent-brief", BRIEF, "--state", "cycle.json"];
    let run = sb.run(&[&args[..], &["--await-confirmation"]].concat());
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let state = sb.read_json(&sb.path("cycle.json"));
    assert_eq!(state["status"], "AWAITING_BRIEF_CONFIRMATION");
    assert_eq!(state["webgpt_question_proposed"], true);
    let question = state["webgpt_question"].as_str().unwrap();
    assert!(question.starts_with("Implement this and open a pull request with it: "), "{question}");
    let brief = forgeloop::domain::brief::Brief::parse(BRIEF).unwrap();
    let goal = brief.goal.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(question.contains(goal.trim_end_matches('.')), "{question}");
    assert!(state["outbox"].is_null(), "nothing to send before a person confirms: {state:#}");
    // Without a person to confirm it, the question is still the agent's to bring.
    let run = sb.run(&["forge", "--request", "Add dark mode", "--intent-brief", BRIEF, "--state", "other.json"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"].as_str().unwrap().contains("--await-confirmation"), "{}", run.stdout);
    assert!(!sb.path("other.json").exists());
}

#[test]
fn reference_f19_f20_f23_blank_brief_question_and_bad_cap_are_refused() {
    let sb = Sandbox::new();
    let cases: [(&[&str], &str); 4] = [
        (&["--intent-brief", "   ", "--webgpt-question", QUESTION], "intent brief"),
        (&["--intent-brief", BRIEF, "--webgpt-question", "   "], "WebGPT question"),
        (&["--intent-brief", BRIEF, "--webgpt-question", QUESTION, "--max-iterations", "0"], "max_iterations"),
        (&["--intent-brief", BRIEF, "--webgpt-question", QUESTION, "--max-iterations", "-3"], "max_iterations"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["forge", "--request", "Add dark mode", "--state", "c.json"];
        args.extend_from_slice(extra);
        let run = sb.run(&args);
        assert_eq!(run.code, 2, "{extra:?}");
        let error = run.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(needle), "{extra:?}: {error}");
    }
    assert!(snapshot(sb.dir.path()).is_empty(), "a refused command creates no file");
}

#[test]
fn incomplete_brief_is_blocked_delegation_unconfirmed_naming_the_fields() {
    let sb = Sandbox::new();
    let run = sb.run(&[
        "forge",
        "--request",
        "r",
        "--intent-brief",
        "Goal: x\nScope: y",
        "--webgpt-question",
        "q",
        "--state",
        "c",
    ]);
    assert_eq!(run.code, 2);
    let out = run.json();
    assert_eq!(out["status"], "BLOCKED_DELEGATION_UNCONFIRMED");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("Success") && error.contains("Constraints") && error.contains("Validation"), "{error}");
}

#[test]
fn reference_f21_f22_task_space_and_cap() {
    let sb = Sandbox::new();
    let out = sb.start("add-dark-mode.json", &[]).json();
    assert_eq!(out["task_space"], "webgpt-orchestrator:add-dark-mode");
    assert_eq!(out["max_iterations"], 5);
    let out = sb.start("two.json", &["--max-iterations", "2"]).json();
    assert_eq!(out["max_iterations"], 2);
}

#[test]
fn reference_f32_to_f36_argument_validation_order() {
    let sb = Sandbox::new();
    let cases: [(&[&str], &str); 7] = [
        (&["--request", "do it", "--intent-brief", BRIEF, "--pr", "acme/widget#1"], "either --request or --pr"),
        (&["--pr", "acme/widget#1", "--new-repo", "widget"], "only valid with --request"),
        (&["--pr", "acme/widget#1", "--public"], "only valid with --request"),
        (&[], "requires --request or --pr"),
        (&["--intent-brief", BRIEF], "only valid with --request"),
        (&["--webgpt-question", QUESTION], "only valid with --request"),
        (&["--request", "", "--pr", ""], "requires --request or --pr"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["forge", "--state", "c.json"];
        args.extend_from_slice(extra);
        let run = sb.run(&args);
        assert_eq!(run.code, 2, "{extra:?}");
        let error = run.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(needle), "{extra:?}: {error}");
    }
}

#[test]
fn flags_the_reference_ignored_are_refused() {
    let sb = Sandbox::new();
    let base = ["forge", "--request", "r", "--intent-brief", BRIEF, "--webgpt-question", QUESTION, "--state", "c.json"];
    for extra in [
        &["--public"][..],
        &["--commands-json", "x.json"][..],
        &["--post-comment"][..],
        &["--new-repo", ""][..],
        &["--owner", "acme"][..],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let run = sb.run(&args);
        assert_eq!(run.code, 2, "{extra:?} should be refused: {}", run.stdout);
    }
    let run = sb.run(&["forge", "--pr", "acme/widget#1", "--max-iterations", "3", "--state", "c.json"]);
    assert_eq!(run.code, 2);
    assert!(!sb.path("c.json").exists());
}

#[test]
fn usage_errors_exit_2_with_clap_on_stderr() {
    let sb = Sandbox::new();
    let run = sb.run(&["forge"]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("--state"));
    assert_eq!(sb.run(&["frobnicate"]).code, 2);
}

#[test]
fn an_existing_state_is_never_overwritten_and_the_cap_never_reset() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--max-iterations", "2"]).code, 0);
    let mut state = sb.read_json(&sb.path("c.json"));
    state["iteration"] = Value::from(2);
    fs::write(sb.path("c.json"), serde_json::to_string(&state).unwrap()).unwrap();
    let before = snapshot(sb.dir.path());
    let run = sb.start("c.json", &[]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["status"], "STATE_EXISTS");
    assert_eq!(snapshot(sb.dir.path()), before);
}

#[test]
fn continue_from_carries_count_cap_binding_and_brief_and_supersedes() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("old.json", &["--max-iterations", "4"]).code, 0);
    let mut old = sb.read_json(&sb.path("old.json"));
    old["iteration"] = Value::from(3);
    old["repository"] = Value::from("acme/widget");
    old["project_url"] = Value::from("https://chatgpt.com/g/g-p-widget/project");
    fs::write(sb.path("old.json"), serde_json::to_string(&old).unwrap()).unwrap();

    let run =
        sb.run(&["forge", "--request", "Continue dark mode", "--state", "new.json", "--continue-from", "old.json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let new = run.json();
    assert_eq!(new["status"], "AWAITING_WEBGPT_PR");
    assert_eq!((new["iteration"].as_u64(), new["max_iterations"].as_u64()), (Some(3), Some(4)));
    assert_eq!(new["repository"], "acme/widget");
    assert_eq!(new["project_url"], "https://chatgpt.com/g/g-p-widget/project");
    assert_eq!(new["intent_brief"], BRIEF);
    assert_eq!(new["brief_confirmation"]["via"], "continued");
    let old = sb.read_json(&sb.path("old.json"));
    assert_eq!(old["status"], "SUPERSEDED");
    assert!(old["successor"].as_str().unwrap().ends_with("new.json"));
    // A finished cycle cannot be continued, and the cap cannot be reset on the way.
    let run = sb.run(&["forge", "--request", "again", "--state", "third.json", "--continue-from", "old.json"]);
    assert_eq!(run.code, 2);
    let run = sb.run(&[
        "forge",
        "--request",
        "x",
        "--state",
        "fourth.json",
        "--continue-from",
        "new.json",
        "--max-iterations",
        "9",
    ]);
    assert_eq!(run.code, 2);
    assert!(!sb.path("third.json").exists() && !sb.path("fourth.json").exists());
}

#[test]
fn two_live_cycles_cannot_share_a_task_space() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.path("a")).unwrap();
    fs::create_dir_all(sb.path("b")).unwrap();
    assert_eq!(sb.start("a/fix.json", &[]).code, 0);
    let run = sb.start("b/fix.json", &[]);
    assert_eq!(run.code, 2);
    let out = run.json();
    assert_eq!(out["status"], "TASK_SPACE_TAKEN");
    assert!(out["owner"].as_str().unwrap().ends_with("a/fix.json"));
    assert!(!sb.path("b/fix.json").exists());
    // Once the first cycle ends, its task space is free again.
    assert_eq!(sb.run(&["abort", "--state", "a/fix.json", "--reason", "done"]).code, 0);
    assert_eq!(sb.start("b/fix.json", &[]).code, 0);
}

#[test]
fn a_second_writer_gets_cycle_busy_with_the_holders_pid() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    let before = fs::read(sb.path("c.json")).unwrap();
    let _held = FileLock::try_acquire(&sb.path("c.lock")).unwrap();
    let run = sb.run(&["sent", "--state", "c.json"]);
    assert_eq!(run.code, 2);
    let out = run.json();
    assert_eq!(out["status"], "CYCLE_BUSY");
    assert_eq!(out["pid"], std::process::id());
    assert_eq!(fs::read(sb.path("c.json")).unwrap(), before);
}

#[test]
fn human_only_actions_are_refused_without_a_terminal() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--await-confirmation"]).code, 0);
    let before = snapshot(sb.dir.path());
    for args in [
        &["confirm", "--state", "c.json"][..],
        &["unblock", "--state", "c.json"][..],
        &["extend", "--state", "c.json", "--by", "2"][..],
    ] {
        let run = sb.run(args);
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(run.json()["status"], "NOT_A_TERMINAL", "{args:?}");
    }
    assert_eq!(snapshot(sb.dir.path()), before);
}

#[test]
fn malformed_states_give_exit_2_and_a_json_error_and_are_not_changed() {
    let sb = Sandbox::new();
    let cases: [(&str, &[u8]); 6] = [
        ("null-iteration.json", br#"{"status":"AWAITING_WEBGPT_PR","request":"r","iteration":null}"#),
        ("array.json", b"[1, 2, 3]"),
        ("utf8.json", b"{\"status\": \"\xff\xfe\"}"),
        ("empty.json", b""),
        ("torn.json", br#"{"status":"AWAITING_WEBGPT_PR","req"#),
        ("no-request.json", br#"{"status":"AWAITING_WEBGPT_PR"}"#),
    ];
    for (name, bytes) in cases {
        fs::write(sb.path(name), bytes).unwrap();
        for args in [
            &["next", "--state", name][..],
            &["sent", "--state", name][..],
            &["abort", "--state", name, "--reason", "x"][..],
        ] {
            let run = sb.run(args);
            assert_eq!(run.code, 2, "{name} {args:?}: {}", run.stdout);
            let out = run.json();
            assert_eq!(out["status"], "INVALID_STATE", "{name} {args:?}");
            assert!(!out["error"].as_str().unwrap().is_empty());
            assert!(run.stderr.is_empty() || !run.stderr.contains("panicked"), "{}", run.stderr);
        }
        assert_eq!(fs::read(sb.path(name)).unwrap(), bytes, "{name} was changed");
    }
    let run = sb.run(&["next", "--state", "missing.json"]);
    assert_eq!((run.code, run.json()["status"].as_str()), (2, Some("NO_STATE")));
}

#[test]
fn a_reference_tool_state_is_read_and_its_unknown_keys_survive() {
    let sb = Sandbox::new();
    let reference = r#"{
  "status": "AWAITING_WEBGPT_PR", "request": "Fix widget", "intent_brief": "Goal: a", "webgpt_question": "q",
  "pr_ref": null, "iteration": 1, "max_iterations": 5, "task_space": "webgpt-orchestrator:task",
  "next_action": "n", "webgpt_prompt": "the prompt", "custom": {"keep": true}
}"#;
    fs::write(sb.path("task.json"), reference).unwrap();
    let next = sb.run(&["next", "--state", "task.json"]).json();
    assert_eq!(next["action"], "send");
    assert_eq!(next["text"], "the prompt");
    let run = sb.run(&["abort", "--state", "task.json", "--reason", "test"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let file = sb.read_json(&sb.path("task.json"));
    assert_eq!(file["custom"]["keep"], true);
    assert_eq!(file["status"], "ABORTED");
    assert_eq!(file["schema_version"], 1);
    assert_eq!(file["iteration"], 1);
}

#[test]
fn sent_is_recorded_once_and_next_follows_the_outbox() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    let next = sb.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "send");
    let sha = next["text_sha256"].as_str().unwrap().to_owned();
    assert_eq!(sb.run(&["sent", "--state", "c.json"]).code, 0);
    let again = sb.run(&["sent", "--state", "c.json"]);
    assert_eq!(again.code, 2);
    assert_eq!(again.json()["status"], "ALREADY_SENT");
    let next = sb.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "wait_for_reply");
    assert!(next["waiting_since"].is_string());
    let log = sb.run(&["log", "--state", "c.json"]).json();
    let kinds: Vec<&str> = log["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["created", "brief_confirmed", "prompt_issued", "message_sent"]);
    assert_eq!(log["events"][3]["data"]["sha256"], sha.as_str());
}

#[test]
fn the_journal_verifies_and_detects_an_edited_line() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    assert_eq!(sb.run(&["sent", "--state", "c.json"]).code, 0);
    assert_eq!(
        sb.run(&["block", "--state", "c.json", "--status", "BLOCKED_MODEL_UNAVAILABLE", "--reason", "no 6 Pro"]).code,
        0
    );
    let ok = sb.run(&["log", "--state", "c.json", "--verify"]);
    assert_eq!(ok.code, 0);
    assert_eq!(ok.json()["events"], 6);
    let journal = sb.path("c.d/events.jsonl");
    let text = fs::read_to_string(&journal).unwrap();
    fs::write(&journal, text.replace("no 6 Pro", "no 5 Pro")).unwrap();
    let bad = sb.run(&["log", "--state", "c.json", "--verify"]);
    assert_eq!(bad.code, 2);
    assert_eq!(bad.json()["status"], "JOURNAL_DAMAGED");
}

#[test]
fn block_abort_and_list() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("first", &[]).code, 0);
    assert_eq!(sb.start("second", &["--await-confirmation"]).code, 0);
    let run = sb.run(&["block", "--state", "first", "--status", "BLOCKED_CONNECTOR_DENIED", "--reason", "no access"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.json()["status"], "BLOCKED_CONNECTOR_DENIED");
    let refused = sb.run(&["block", "--state", "second", "--status", "READY_TO_MERGE", "--reason", "x"]);
    assert_eq!(refused.code, 2);
    // Only forgeloop sets the cap's block (the same rule for the CLI, MCP and the control room).
    let before = std::fs::read(sb.home().join("cycles/second.json")).unwrap();
    let cap = sb.run(&["block", "--state", "second", "--status", "BLOCKED_MAX_ITERATIONS", "--reason", "x"]);
    assert_eq!((cap.code, cap.json()["status"].as_str()), (2, Some("REFUSED")));
    assert!(cap.json()["error"].as_str().unwrap().contains("set by forgeloop when the cap is reached"));
    assert_eq!(std::fs::read(sb.home().join("cycles/second.json")).unwrap(), before);
    let rows = sb.run(&["list"]).json();
    let statuses: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["AWAITING_BRIEF_CONFIRMATION", "BLOCKED_CONNECTOR_DENIED"]);
    assert_eq!(sb.run(&["abort", "--state", "first", "--reason", "stop"]).json()["status"], "ABORTED");
    let again = sb.run(&["abort", "--state", "first", "--reason", "stop"]);
    assert_eq!((again.code, again.json()["status"].as_str()), (2, Some("REFUSED")));
}

#[test]
fn handoff_and_iterate_print_text_and_refuse_bad_reports() {
    let sb = Sandbox::new();
    let report = serde_json::json!({
        "status": "TEST_FAILED", "repository": "acme/widget", "pull_request": 42, "head_sha": "d".repeat(40),
        "commands": [{"argv": ["pytest"], "exit_code": 1, "duration_seconds": 0.5}],
        "comment_markdown": "<!-- webgpt-orchestrator:forge-loop sha=x -->\n## Forge Loop PR test: TEST_FAILED", "comment_published": false
    });
    fs::write(sb.path("r.json"), report.to_string()).unwrap();
    let handoff = sb.run(&["handoff", "--result", "r.json"]);
    assert_eq!(handoff.code, 0);
    assert!(
        handoff.stdout.starts_with(&format!("WebGPT handoff: TEST_FAILED for acme/widget#42 at {}", "d".repeat(40)))
    );
    assert!(!handoff.stdout.contains("PR_URL"));
    let iterate = sb.run(&["iterate", "--result", "r.json"]);
    assert_eq!(iterate.code, 0);
    assert!(iterate.stdout.contains("## Forge Loop PR test: TEST_FAILED") && iterate.stdout.contains("PR_URL: <url>"));
    for (name, bytes) in [("arr.json", "[]"), ("bad.json", "{"), ("blocked.json", r#"{"status":"BLOCKED"}"#)] {
        fs::write(sb.path(name), bytes).unwrap();
        let run = sb.run(&["handoff", "--result", name]);
        assert_eq!(run.code, 2, "{name}");
        assert_eq!(run.json()["status"], "BLOCKED");
    }
    assert_eq!(sb.run(&["handoff", "--result", "missing.json"]).code, 2);
}

#[test]
fn secrets_in_the_request_never_reach_the_prompt_and_hashes_match_the_sent_text() {
    let sb = Sandbox::new();
    let token = format!("ghp_{}", "Ab3".repeat(12));
    let request = format!("Use the token {token} to call the API");
    let run = sb.run(&[
        "forge",
        "--request",
        &request,
        "--intent-brief",
        BRIEF,
        "--webgpt-question",
        QUESTION,
        "--state",
        "c.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(!run.stdout.contains(&token));
    let file = fs::read_to_string(sb.path("c.json")).unwrap();
    assert!(!file.contains(&token) && file.contains("[REDACTED:github-token]"));
    let next = sb.run(&["next", "--state", "c.json"]).json();
    let text = next["text"].as_str().unwrap();
    let sha = forgeloop::domain::state::sha256_hex(text.as_bytes());
    assert_eq!(next["text_sha256"], sha.as_str(), "the hash is of the text that is sent");
    let log = sb.run(&["log", "--state", "c.json"]).json();
    let issued = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "prompt_issued").unwrap().clone();
    assert_eq!(issued["data"]["sha256"], sha.as_str());
    assert!(!fs::read_to_string(sb.path("c.d/events.jsonl")).unwrap().contains(&token));
}
