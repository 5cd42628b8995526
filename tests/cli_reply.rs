//! `reply`, `sent` and `next` together: the ask-once rule, blocking, overrides, and no double
//! sends across a crash between steps.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::io::Write;
use std::process::Stdio;

use forgeloop::store::journal;
use support::Sandbox;

fn reply(sb: &Sandbox, state: &str, text: &str) -> support::Run {
    let mut child =
        sb.command(&["reply", "--state", state]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    support::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn started_and_sent(sb: &Sandbox) {
    assert_eq!(sb.start("c.json", &[]).code, 0);
    assert_eq!(sb.run(&["sent", "--state", "c.json"]).code, 0);
}

#[test]
fn a_reply_without_a_pr_gets_exactly_one_follow_up_then_blocks() {
    let sb = Sandbox::new();
    started_and_sent(&sb);
    let first = reply(&sb, "c.json", "Should the toggle live in the header?");
    assert_eq!(first.code, 0, "{}", first.stdout);
    let out = first.json();
    assert_eq!(out["classification"], "NO_PR_REFERENCE");
    assert_eq!(out["next"]["action"], "send");
    assert!(out["next"]["text"].as_str().unwrap().contains("PR_URL: <url>"));
    assert_eq!(sb.run(&["sent", "--state", "c.json"]).code, 0);
    let second = reply(&sb, "c.json", "PR_URL: NOT_CREATED\nI need the design first.");
    assert_eq!(second.code, 0);
    let out = second.json();
    assert_eq!(out["classification"], "PR_NOT_CREATED");
    assert_eq!(out["status"], "PR_NOT_CREATED", "reply's status is the classification");
    assert_eq!(out["cycle_status"], "BLOCKED_NO_PR");
    assert_eq!(out["next"]["action"], "stop");
    let state = sb.read_json(&sb.path("c.json"));
    assert_eq!(state["followups"], 1);
    assert_eq!(state["iteration"], 0);
}

#[test]
fn a_reply_before_the_message_was_recorded_as_sent_is_refused() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    let before = std::fs::read(sb.path("c.json")).unwrap();
    let run = reply(&sb, "c.json", "PR_URL: https://github.com/acme/widget/pull/1");
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["status"], "REFUSED");
    assert_eq!(std::fs::read(sb.path("c.json")).unwrap(), before);
}

#[test]
fn a_pr_found_makes_the_next_step_a_test_run() {
    let sb = Sandbox::new();
    started_and_sent(&sb);
    let run = reply(&sb, "c.json", "Opened it.\n\nPR_URL: https://github.com/acme/widget/pull/12");
    let out = run.json();
    assert_eq!(out["classification"], "PR_FOUND");
    assert_eq!(out["pr"], "acme/widget#12");
    assert_eq!(out["next"]["action"], "run");
    let command: Vec<String> = serde_json::from_value(out["next"]["command"].clone()).unwrap();
    assert_eq!(&command[..4], ["forgeloop", "forge", "--pr", "acme/widget#12"]);
    assert!(command.contains(&"--post-comment".to_owned()) && command.contains(&"--commands-json".to_owned()));
    let next = sb.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "run");
    // The reply is journaled (redacted) with its classification.
    let log = sb.run(&["log", "--state", "c.json"]).json();
    let recorded = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "reply_recorded").unwrap().clone();
    assert_eq!(recorded["data"]["class"], "PR_FOUND");
    assert!(recorded["data"]["text"].as_str().unwrap().contains("Opened it."));
}

#[test]
fn a_connector_denial_blocks_at_once() {
    let sb = Sandbox::new();
    started_and_sent(&sb);
    let out = reply(&sb, "c.json", "I don't have access to acme/widget through the GitHub connector.").json();
    assert_eq!(out["classification"], "CONNECTOR_DENIED");
    assert_eq!(out["cycle_status"], "BLOCKED_CONNECTOR_DENIED");
}

#[test]
fn the_coordinator_can_override_with_a_reason() {
    let sb = Sandbox::new();
    started_and_sent(&sb);
    let run =
        sb.run(&["reply", "--state", "c.json", "--file", "-", "--as", "PR_FOUND", "--reason", "the link was an image"]);
    assert_eq!(run.code, 2, "PR_FOUND without --pr is refused");
    std::fs::write(sb.path("r.txt"), "see the screenshot").unwrap();
    let run = sb.run(&[
        "reply",
        "--state",
        "c.json",
        "--file",
        "r.txt",
        "--as",
        "PR_FOUND",
        "--reason",
        "the PR link was in an image",
        "--pr",
        "acme/widget#4",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!((out["classification"].as_str(), out["overridden"].as_bool()), (Some("PR_FOUND"), Some(true)));
    let log = sb.run(&["log", "--state", "c.json"]).json();
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert!(last["data"]["reason"].as_str().unwrap().contains("image"));
    assert_eq!(sb.run(&["reply", "--state", "c.json", "--as", "MAYBE", "--reason", "x"]).code, 2);
}

#[test]
fn a_crash_between_reply_and_sent_never_sends_twice_or_loses_an_iteration() {
    let sb = Sandbox::new();
    started_and_sent(&sb);
    // The coordinator records a reply, then dies before typing the follow-up.
    assert_eq!(reply(&sb, "c.json", "Which branch should I use?").code, 0);
    // A restarted coordinator asks what to do: the follow-up is still pending, once.
    let next = sb.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "send");
    let sha = next["text_sha256"].clone();
    assert_eq!(sb.run(&["sent", "--state", "c.json"]).code, 0);
    let again = sb.run(&["sent", "--state", "c.json"]);
    assert_eq!(again.json()["status"], "ALREADY_SENT");
    assert_eq!(
        reply(&sb, "c.json", "PR_URL: https://github.com/acme/widget/pull/2").json()["classification"],
        "PR_FOUND"
    );
    let state = sb.read_json(&sb.path("c.json"));
    assert_eq!(state["iteration"], 0);
    let log = sb.run(&["log", "--state", "c.json"]).json();
    let sends: Vec<_> = log["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "message_sent").collect();
    assert_eq!(sends.len(), 2, "the prompt and the follow-up, each once");
    assert_eq!(sends[1]["data"]["sha256"], sha);
}

#[test]
fn a_reply_killed_at_any_moment_is_recorded_fully_or_not_at_all() {
    let sb = Sandbox::new();
    let mut recorded = 0;
    for i in 0..12 {
        let name = format!("c{i}.json");
        assert_eq!(sb.start(&name, &[]).code, 0);
        assert_eq!(sb.run(&["sent", "--state", &name]).code, 0);
        let mut child =
            sb.command(&["reply", "--state", &name]).stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"no PR here").unwrap();
        drop(stdin);
        std::thread::sleep(std::time::Duration::from_millis((i * 3) as u64));
        let _ = child.kill();
        child.wait().unwrap();
        let state = sb.read_json(&sb.path(&name));
        let contents = journal::verify(&sb.path(&format!("c{i}.d/events.jsonl"))).unwrap();
        let journaled = contents.events.iter().any(|e| e.kind == "reply_recorded");
        if state["last_reply"].is_object() {
            recorded += 1;
            assert_eq!(state["followups"], 1);
            assert_eq!(state["outbox"]["kind"], "followup");
        } else {
            assert!(!journaled, "journal says recorded but the state does not");
            assert!(state["followups"].is_null());
        }
    }
    let _ = recorded;
}

#[test]
fn a_reply_file_that_cannot_be_read_is_named_and_nothing_changes() {
    let sb = Sandbox::new();
    started_and_sent(&sb);
    let before = std::fs::read(sb.path("c.json")).unwrap();
    let missing = sb.path("replyy.txt");
    let run = sb.run(&["reply", "--state", "c.json", "--file", missing.to_str().unwrap()]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let error = run.json()["error"].as_str().unwrap_or_default().to_owned();
    // The path as printed: redacted (a path under the home reads `~/…`).
    assert!(error.starts_with("cannot read the reply ") && error.contains("/replyy.txt: "), "{}", run.stdout);
    assert_eq!(std::fs::read(sb.path("c.json")).unwrap(), before);
}
