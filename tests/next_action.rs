//! The state's `next_action` (the reference tool's field) always says what `forgeloop next`
//! says now — after the start, `sent`, `reply`, `project attach`, each `forge --pr` — and
//! `next` proposes the brief's backticked Validation commands for the first commands file.
//! Real processes against the GitHub emulator.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use serde_json::Value;
use support::QUESTION;
use support::world::{CALC_BUGGY, CALC_FIXED, World};

const BRIEF: &str = "Goal: fix calc.sh.\nSuccess: 2+3 prints 5.\nScope: calc.sh only.\nConstraints: POSIX sh.\nValidation: `sh test.sh` passes; do not run `sh test.sh | tee log.txt`.";

/// The stored `next_action` equals the `explanation` `next` prints; returns `next`'s answer.
fn agrees(w: &World, after: &str) -> Value {
    let file = w.sb.read_json(&w.sb.home().join("cycles/calc.json"));
    let next = w.run(&["next", "--state", "calc"]).json();
    assert_eq!(file["next_action"], next["explanation"], "after {after}: the state's next_action is stale");
    assert_eq!(file["custom"]["kept"], true, "after {after}: an unknown key was lost");
    next
}

fn reply(w: &World, text: &str) -> Value {
    std::fs::write(w.path("reply.txt"), text).unwrap();
    let run = w.run(&["reply", "--state", "calc", "--file", "reply.txt"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    run.json()
}

#[test]
fn next_action_is_never_stale_and_the_first_run_gets_proposed_commands() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let pr_url = |n: u64| format!("http://{}/acme/widget/pull/{n}", w.emu.web_host());
    let project = "https://chatgpt.com/g/g-p-widget/project";
    let bind =
        w.run(&["project", "bind", "--repository", "acme/widget", "--project-url", project, "--project-name", "w"]);
    assert_eq!(bind.code, 0, "{}", bind.stdout);

    let start = w.run(&[
        "forge",
        "--state",
        "calc",
        "--request",
        "Fix calc",
        "--webgpt-question",
        QUESTION,
        "--intent-brief",
        BRIEF,
    ]);
    assert_eq!(start.code, 0, "{}", start.stdout);
    // A key forgeloop does not know survives every rewrite below.
    let path = w.sb.home().join("cycles/calc.json");
    let mut file = w.sb.read_json(&path);
    file["custom"] = serde_json::json!({"kept": true});
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let step = agrees(&w, "start");
    assert_eq!(step["action"], "send");
    assert!(step["explanation"].as_str().unwrap().contains("new chat inside the repository's ChatGPT Project"));

    assert_eq!(w.run(&["project", "attach", "--repository", "acme/widget", "--state", "calc"]).code, 0);
    agrees(&w, "project attach");
    assert_eq!(w.run(&["sent", "--state", "calc"]).code, 0);
    let step = agrees(&w, "sent");
    assert_eq!(step["action"], "wait_for_reply");
    assert!(step["explanation"].as_str().unwrap().contains("--conversation-url"), "{step:#}");
    let conversation = "https://chatgpt.com/g/g-p-widget/c/calc-1";
    let attach = w.run(&[
        "project",
        "attach",
        "--repository",
        "acme/widget",
        "--state",
        "calc",
        "--conversation-url",
        conversation,
    ]);
    assert_eq!(attach.code, 0, "{}", attach.stdout);
    let step = agrees(&w, "attaching the conversation");
    assert!(!step["explanation"].as_str().unwrap().contains("--conversation-url"), "{step:#}");

    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    reply(&w, &format!("Opened.\nPR_URL: {}", pr_url(n)));
    let step = agrees(&w, "reply");
    assert_eq!(step["action"], "run");
    // The Validation's backticked command is proposed as argv; the piped one is not.
    assert_eq!(step["proposed_commands"], serde_json::json!([["sh", "test.sh"]]), "{step:#}");
    assert_eq!(step["not_proposed"][0]["text"], "sh test.sh | tee log.txt", "{step:#}");
    std::fs::write(w.path("proposed.json"), step["proposed_commands"].to_string()).unwrap();
    let pr = format!("acme/widget#{n}");
    let run = w.run(&["forge", "--pr", &pr, "--state", "calc", "--post-comment", "--commands-json", "proposed.json"]);
    assert_eq!((run.code, run.json()["status"].as_str()), (0, Some("AWAITING_WEBGPT_FIX")), "{}", run.stdout);
    assert_eq!(agrees(&w, "a failed forge --pr")["action"], "send");

    assert_eq!(w.run(&["sent", "--state", "calc"]).code, 0);
    assert!(agrees(&w, "sending the handoff")["explanation"].as_str().unwrap().contains("Waiting"));
    w.commit(&repo, "fix-calc", &[("calc.sh", CALC_FIXED)], "add");
    reply(&w, &format!("Fixed.\nPR_URL: {}", pr_url(n)));
    let step = agrees(&w, "the second reply");
    assert!(step.get("proposed_commands").is_none(), "the stored commands are reused: {step:#}");
    let run = w.run(&["forge", "--pr", &pr, "--state", "calc", "--post-comment"]);
    assert_eq!(run.json()["status"], "READY_TO_MERGE", "{}", run.stdout);
    assert_eq!(agrees(&w, "a passing forge --pr")["action"], "stop");
    assert_eq!(w.run(&["abort", "--state", "calc", "--reason", "done here"]).code, 0);
    assert_eq!(agrees(&w, "abort")["action"], "done");
}

#[test]
fn a_run_records_the_lockfiles_and_the_next_cycle_s_first_run_is_proposed_their_setup() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let lockfiles = [
        ("package-lock.json", "{}\n"),
        ("requirements.txt", "pytest\n"),
        ("node_modules/left-pad/package-lock.json", "{}\n"),
    ];
    w.commit(&repo, "main", &lockfiles, "lockfiles");
    let pr = |n: u64| format!("http://{}/acme/widget/pull/{n}", w.emu.web_host());
    let reply_to = |state: &str, text: &str| {
        std::fs::write(w.path("reply.txt"), text).unwrap();
        let run = w.run(&["reply", "--state", state, "--file", "reply.txt"]);
        assert_eq!(run.code, 0, "{}", run.stdout);
    };

    // Before forgeloop has fetched the repository, nothing is known: no setup is proposed.
    w.cycle("first", &[]);
    let n = w.pr(&repo, "fix-calc", CALC_FIXED);
    reply_to("first", &format!("Opened.\nPR_URL: {}", pr(n)));
    let step = w.run(&["next", "--state", "first"]).json();
    assert_eq!(step["action"], "run", "{step:#}");
    assert!(step.get("proposed_setup").is_none(), "{step:#}");

    std::fs::write(w.path("commands.json"), r#"[["sh", "test.sh"]]"#).unwrap();
    let run = w.forge_pr("first", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let state = run.json();
    assert_eq!(state["report"]["lockfiles"], serde_json::json!(["package-lock.json", "requirements.txt"]), "{state:#}");

    // The next cycle of the repository: its first run is proposed installs for those lockfiles.
    w.cycle("second", &[]);
    let m = w.pr(&repo, "more", CALC_FIXED);
    reply_to("second", &format!("Opened.\nPR_URL: {}", pr(m)));
    let step = w.run(&["next", "--state", "second"]).json();
    assert_eq!(step["action"], "run", "{step:#}");
    assert_eq!(
        step["proposed_setup"],
        serde_json::json!([
            ["npm", "ci"],
            ["python3", "-m", "venv", ".venv"],
            [".venv/bin/pip", "install", "-r", "requirements.txt"]
        ]),
        "{step:#}"
    );
    assert_eq!(step["lockfiles"], serde_json::json!(["package-lock.json", "requirements.txt"]));
    assert!(step["explanation"].as_str().unwrap().contains("\"setup\""), "{step:#}");
}
