//! The runbook (skills/webgpt-orchestrator/SKILL.md) followed end to end against the GitHub
//! emulator, with a scripted WebGPT reply at each chat step; and every forgeloop command the
//! runbook names exists.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::collections::BTreeSet;
use std::fs;

use serde_json::Value;
use support::world::{CALC_BUGGY, CALC_FIXED, World};
use support::{BRIEF, QUESTION};

const SKILL: &str = include_str!("../skills/webgpt-orchestrator/SKILL.md");

/// Follows `next` like a coordinator would, checking the action it expects.
fn next(w: &World, state: &str, expected: &str) -> Value {
    let next = w.run(&["next", "--state", state]).json();
    assert_eq!(next["action"], expected, "{next:#}");
    next
}

fn reply(w: &World, state: &str, text: &str) -> Value {
    fs::write(w.path("reply.txt"), text).unwrap();
    let run = w.run(&["reply", "--state", state, "--file", "reply.txt"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    run.json()
}

/// Runs the command `next` gave, with the commands file filled in.
fn run_next_command(w: &World, next: &Value) -> Value {
    let mut args: Vec<String> = serde_json::from_value(next["command"].clone()).unwrap();
    assert_eq!(args[0], "forgeloop");
    for arg in &mut args {
        if arg == "COMMANDS.json" {
            *arg = "commands.json".into();
        }
    }
    let refs: Vec<&str> = args[1..].iter().map(String::as_str).collect();
    let run = w.run(&refs);
    assert_eq!(run.code, 0, "{refs:?}: {}", run.stdout);
    run.json()
}

#[test]
fn the_runbook_drives_a_cycle_from_brief_to_ready_to_merge() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let pr_url = |n: u64| format!("http://{}/acme/widget/pull/{n}", w.emu.web_host());

    // 1. The Project: not linked yet, bound after the (scripted) browser search.
    let lookup = w.run(&["project", "lookup", "--repository", "acme/widget"]).json();
    assert_eq!(lookup["status"], "PROJECT_NOT_LINKED");
    let project = "https://chatgpt.com/g/g-p-widget/project";
    let bind = w.run(&[
        "project",
        "bind",
        "--repository",
        "acme/widget",
        "--project-url",
        project,
        "--project-name",
        "acme/widget",
    ]);
    assert_eq!(bind.json()["status"], "PROJECT_LINKED");

    // 2. Start the cycle with the confirmed brief, attach the Project.
    let start = w.run(&[
        "forge",
        "--state",
        "dark-mode",
        "--request",
        "Fix calc.sh",
        "--webgpt-question",
        QUESTION,
        "--intent-brief",
        BRIEF,
    ]);
    assert_eq!(start.code, 0, "{}", start.stdout);
    let state = start.json()["task_space"].as_str().unwrap().to_owned();
    assert_eq!(state, "webgpt-orchestrator:dark-mode");
    assert_eq!(w.run(&["project", "attach", "--repository", "acme/widget", "--state", "dark-mode"]).code, 0);

    // Reading the project: its test script from forgeloop's mirror, not a clone of the agent's.
    let script = w.run(&["show", "--repository", "acme/widget", "test.sh"]);
    assert_eq!(script.code, 0, "{}", script.stderr);
    assert_eq!(script.stdout, support::world::TEST_SH);

    // 3. The loop. Send the prompt, record it, attach the conversation.
    let step = next(&w, "dark-mode", "send");
    assert!(step["text"].as_str().unwrap().contains("## Confirmed WebGPT question"));
    run_next_command(&w, &step);
    let conversation = "https://chatgpt.com/g/g-p-widget/c/dark-mode-1";
    let attach = w.run(&[
        "project",
        "attach",
        "--repository",
        "acme/widget",
        "--state",
        "dark-mode",
        "--conversation-url",
        conversation,
    ]);
    assert_eq!(attach.code, 0, "{}", attach.stdout);

    // WebGPT asks a question instead of opening a PR: one follow-up. Every chat step names the
    // chat (several cycles at once: the agent opens that one).
    let step = next(&w, "dark-mode", "wait_for_reply");
    assert_eq!(step["conversation_url"], conversation);
    let r = reply(&w, "dark-mode", "Before I start: should the fix keep the old behaviour behind a flag?");
    assert_eq!(r["classification"], "NO_PR_REFERENCE");
    let step = next(&w, "dark-mode", "send");
    assert!(step["text"].as_str().unwrap().contains("PR_URL: <url>"));
    assert_eq!(step["conversation_url"], conversation);
    run_next_command(&w, &step);

    // WebGPT opens a (buggy) PR and answers with the trailer.
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    let r = reply(&w, "dark-mode", &format!("I opened the PR.\n\nPR_URL: {}", pr_url(n)));
    assert_eq!(r["classification"], "PR_FOUND");
    let step = next(&w, "dark-mode", "run");
    let listing = w.run(&["show", "--pr", &format!("acme/widget#{n}"), "--list"]);
    assert!(listing.stdout.lines().any(|l| l.starts_with("calc.sh\t")), "{}", listing.stdout);
    let state = run_next_command(&w, &step);
    assert_eq!(state["status"], "AWAITING_WEBGPT_FIX");
    // What waits to be sent is the handoff, as `outbox` shows it.
    assert_eq!(w.run(&["outbox", "--state", "dark-mode"]).json()["pending"]["kind"], "handoff");
    // The fields the runbook tells the agent to read are where it says they are.
    assert_eq!(
        (r["status"].as_str(), r["cycle_status"].as_str(), state["report"]["status"].as_str()),
        (Some("PR_FOUND"), Some("AWAITING_WEBGPT_PR"), Some("TEST_FAILED"))
    );
    for field in [
        "`status`",
        "`cycle_status`",
        "`report.status`",
        "`proposed_commands`",
        "`not_proposed`",
        "right after the first `sent`",
        "PR_UNCHANGED",
        "ALREADY_TESTED",
    ] {
        assert!(SKILL.contains(field), "the runbook should say where to find {field}");
    }

    // The failure handoff goes back into the same conversation. WebGPT blames the environment
    // and pushes nothing: PR_UNCHANGED, no run; the note for WebGPT is sent like a handoff.
    let step = next(&w, "dark-mode", "send");
    assert!(step["text"].as_str().unwrap().contains("## Forge Loop PR test: TEST_FAILED"));
    run_next_command(&w, &step);
    let tested = state["report"]["head_sha"].as_str().unwrap().to_owned();
    let r =
        reply(&w, "dark-mode", &format!("That failure is the environment's; I pushed nothing.\nPR_URL: {}", pr_url(n)));
    assert_eq!((r["status"].as_str(), r["cycle_status"].as_str()), (Some("PR_UNCHANGED"), Some("AWAITING_WEBGPT_FIX")));
    assert_eq!(r["head_check"], format!("unchanged: {}", &tested[..12]));
    let step = next(&w, "dark-mode", "send");
    let note = step["text"].as_str().unwrap();
    assert!(note.contains(&tested[..12]) && note.contains("`fix-calc`") && note.contains("PR_URL: <url>"), "{note}");
    run_next_command(&w, &step);
    w.commit(&repo, "fix-calc", &[("calc.sh", CALC_FIXED)], "use addition");
    let r = reply(&w, "dark-mode", &format!("Pushed a fix.\nPR_URL: {}", pr_url(n)));
    assert_eq!(r["status"], "PR_FOUND");
    assert!(r["head_check"].as_str().unwrap().starts_with("changed: "), "{r:#}");
    let step = next(&w, "dark-mode", "run");
    assert!(
        !step["command"].as_array().unwrap().iter().any(|a| a == "--commands-json"),
        "the stored commands are reused"
    );
    let state = run_next_command(&w, &step);
    assert_eq!(state["status"], "READY_TO_MERGE");

    // 5. Stop and report; never merge.
    let step = next(&w, "dark-mode", "stop");
    assert!(step["explanation"].as_str().unwrap().contains("READY_TO_MERGE"));
    let status = w.run(&["status", "--pr", &format!("acme/widget#{n}")]).json();
    assert_eq!(status["state"], "open", "forgeloop never merges");
    // Nothing but reading, fetching and commenting: no merge, no push, no ref update.
    let writes: Vec<String> = w
        .emu
        .requests()
        .into_iter()
        .filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD"))
        .filter(|r| !(r.path.ends_with("/git-upload-pack") || r.path.contains("/comments")))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "requests that change the repository: {writes:?}");
    assert!(
        w.emu.requests().iter().any(|r| r.method == "POST" && r.path.ends_with("/comments")),
        "the allowlist above is exercised"
    );
    assert_eq!(w.comments(&repo, n).len(), 2, "one comment per tested iteration");
    let file = w.sb.read_json(&w.sb.home().join("cycles/dark-mode.json"));
    assert_eq!(file["conversation_url"], conversation);
    assert_eq!(file["project_url"], project);
    assert_eq!(w.run(&["log", "--state", "dark-mode", "--verify"]).code, 0);
}

/// SKILL.md's one rule after a failure that was the environment's: the agent asked WebGPT,
/// WebGPT answered with the same head (`PR_UNCHANGED`, a note queued), then the person
/// corrected the commands: the note is withdrawn unsent, `next` says `run`, and the same head
/// with the new commands is a new test.
#[test]
fn after_an_unchanged_head_corrected_commands_run_instead_of_the_note() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_FIXED);
    let pr_url = format!("http://{}/acme/widget/pull/{n}", w.emu.web_host());
    w.cycle("c", &[]);
    reply(&w, "c", &format!("Opened.\n\nPR_URL: {pr_url}"));
    // The first commands file names a script the repository does not have: the run fails.
    fs::write(w.path("commands.json"), r#"[["sh", "tests.sh"]]"#).unwrap();
    let step = next(&w, "c", "run");
    let state = run_next_command(&w, &step);
    assert_eq!(state["report"]["status"], "TEST_FAILED");
    run_next_command(&w, &next(&w, "c", "send"));
    // WebGPT pushed nothing: the same head again.
    let r = reply(&w, "c", &format!("It works for me.\n\nPR_URL: {pr_url}"));
    assert_eq!(r["classification"], "PR_UNCHANGED", "{r:#}");
    let note = next(&w, "c", "send");
    assert!(note["text"].as_str().unwrap().contains("nothing new was tested"), "{note:#}");
    // The person sees the failure is the commands', not the PR's, and corrects them.
    fs::write(w.path("fixed.json"), r#"[["sh", "test.sh"]]"#).unwrap();
    let run = w.run(&["commands", "--state", "c", "--commands-json", "fixed.json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let step = next(&w, "c", "run");
    assert!(step["explanation"].as_str().unwrap().contains("corrected the commands"), "{step:#}");
    let state = run_next_command(&w, &step);
    assert_eq!((state["status"].as_str(), state["iteration"].as_u64()), (Some("READY_TO_MERGE"), Some(2)), "{state:#}");
    let log = w.run(&["log", "--state", "c"]).json();
    let withdrawn: Vec<&Value> =
        log["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "message_withdrawn").collect();
    assert_eq!(withdrawn.len(), 1, "{log:#}");
    assert_eq!(withdrawn[0]["data"]["kind"], "followup");
    assert_eq!(withdrawn[0]["data"]["sha256"], note["text_sha256"]);
    // The rule is written once, in the runbook.
    assert!(
        SKILL.contains("The one rule: a failure handoff or `PR_UNCHANGED` note not yet sent is"),
        "SKILL.md lost the rule"
    );
}

#[test]
fn the_runbook_stop_conditions_and_blocks() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    // A connector denial stops the loop.
    let start = w.run(&[
        "forge",
        "--state",
        "denied",
        "--request",
        "r",
        "--webgpt-question",
        QUESTION,
        "--intent-brief",
        BRIEF,
    ]);
    assert_eq!(start.code, 0);
    run_next_command(&w, &next(&w, "denied", "send"));
    let r = reply(&w, "denied", "I don't have access to acme/widget through the GitHub connector.");
    assert_eq!(
        (r["status"].as_str(), r["cycle_status"].as_str()),
        (Some("CONNECTOR_DENIED"), Some("BLOCKED_CONNECTOR_DENIED"))
    );
    next(&w, "denied", "stop");
    // The coordinator records what it saw in the browser.
    let start =
        w.run(&["forge", "--state", "model", "--request", "r", "--webgpt-question", QUESTION, "--intent-brief", BRIEF]);
    assert_eq!(start.code, 0);
    let block = w.run(&[
        "block",
        "--state",
        "model",
        "--status",
        "BLOCKED_MODEL_UNAVAILABLE",
        "--reason",
        "no 6 Pro in the picker",
    ]);
    assert_eq!(block.json()["status"], "BLOCKED_MODEL_UNAVAILABLE");
    assert!(next(&w, "model", "stop")["explanation"].as_str().unwrap().contains("no 6 Pro"));
    // The one-shot commands of the runbook's aliases.
    let n = w.pr(&repo, "x", CALC_FIXED);
    assert_eq!(w.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", "commands.json"]).code, 0);
    // --await-confirmation + wait: the coordinator waits for the person.
    let start = w.run(&[
        "forge",
        "--state",
        "waiting",
        "--request",
        "r",
        "--webgpt-question",
        QUESTION,
        "--intent-brief",
        BRIEF,
        "--await-confirmation",
    ]);
    assert_eq!(start.code, 0);
    let step = next(&w, "waiting", "wait_for_human");
    assert_eq!(step["command"][1], "wait");
    let timeout = w.run(&["wait", "--state", "waiting", "--timeout", "1"]);
    assert_eq!(timeout.json()["status"], "TIMEOUT");
    // --continue-from carries the count and the cap.
    let cont = w.run(&["forge", "--state", "denied-2", "--request", "continue", "--continue-from", "model"]);
    assert_eq!(cont.code, 0, "{}", cont.stdout);
}

#[test]
fn every_command_the_runbook_names_exists() {
    let w = World::new();
    // Commands are what the runbook shows as code: fenced blocks and `inline` spans.
    let mut code = Vec::new();
    let mut in_fence = false;
    for line in SKILL.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            code.push(line.to_owned());
        } else {
            code.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
        }
    }
    let mut named = BTreeSet::new();
    for span in &code {
        let mut words = span.split_whitespace();
        while let Some(word) = words.next() {
            if word == "forgeloop"
                && let Some(sub) = words.next()
                && !sub.is_empty()
                && sub.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            {
                named.insert(sub.to_owned());
            }
        }
    }
    for expected in [
        "forge", "next", "sent", "reply", "wait", "project", "block", "status", "test", "extend", "unblock", "show",
        "outbox",
    ] {
        assert!(named.contains(expected), "the runbook should name `forgeloop {expected}`: {named:?}");
    }
    for sub in &named {
        let help = w.run(&[sub.as_str(), "--help"]);
        assert_eq!(help.code, 0, "`forgeloop {sub}` does not exist: {}", help.stderr);
    }
}
