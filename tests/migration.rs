//! Files of the reference tool (webgpt-orchestrator) driven forward by forgeloop: its states,
//! written here as its documentation describes them (field names, order and values; the
//! fixtures are this project's own), go through `next`-guided commands against the GitHub
//! emulator to their end, with no command refused. Its registry records sit beside
//! forgeloop's and the unusable ones say what is wrong and how to fix it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use support::world::{CALC_BUGGY, CALC_FIXED, World};

const PROMPT: &str = "## Confirmed WebGPT question\nImplement subtraction, open a PR, and report its URL.\n\n## Confirmed user intent\nGoal: calc.sh subtracts.\nSuccess: tests pass.\nScope / non-goals: calc.sh only.\nConstraints: sh only.\nValidation: sh test.sh\n\n## Implementation request\nMake calc.sh add.\n\nEnd your reply with PR_URL: <url>";

/// A state as `forge_loop.py forge --request` writes it (design §12.1): no schema version,
/// no timestamps, no outbox, no journal.
fn reference_fresh(stem: &str) -> Value {
    json!({
        "status": "AWAITING_WEBGPT_PR",
        "request": "Make calc.sh add.",
        "intent_brief": "Goal: calc.sh subtracts.\nSuccess: tests pass.\nScope / non-goals: calc.sh only.\nConstraints: sh only.\nValidation: sh test.sh",
        "webgpt_question": "Implement subtraction, open a PR, and report its URL.",
        "pr_ref": null,
        "iteration": 0,
        "max_iterations": 5,
        "task_space": format!("webgpt-orchestrator:{stem}"),
        "next_action": "Send webgpt_prompt to WebGPT in the task space, then resume with --pr.",
        "webgpt_prompt": PROMPT,
        "custom_notes": {"kept": true}
    })
}

/// The report the reference tool stores after a run (design §12.3).
fn reference_report(status: &str, repo: &str, n: u64, sha: &str) -> Value {
    json!({
        "status": status,
        "repository": repo,
        "pull_request": n,
        "head_sha": sha,
        "commands": [{"argv": ["sh", "test.sh"], "exit_code": if status == "TEST_PASSED" { 0 } else { 1 }, "duration_seconds": 0.01}],
        "comment_markdown": format!("## Forge Loop PR test: {status}"),
        "failure_output": if status == "TEST_PASSED" { Value::Null } else { json!("not ok - expected 5, got -1") },
        "comment_published": false
    })
}

fn write(w: &World, name: &str, state: &Value) {
    fs::write(w.path(name), serde_json::to_string_pretty(state).unwrap() + "\n").unwrap();
}

/// Runs `next`, asserting it succeeds; returns its document.
fn next(w: &World, state: &str) -> Value {
    let run = w.run(&["next", "--state", state]);
    assert_eq!(run.code, 0, "next refused: {}\n{}", run.stdout, run.stderr);
    run.json()
}

/// Follows `next` to the end like a coordinator: sends what it says, replies with `reply` for
/// the PR, runs what it says (with the commands file the first time). Every command must
/// succeed. Returns the final `next` document.
fn drive(w: &World, state: &str, reply: &str) -> Value {
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps < 20, "no end in sight");
        let doc = next(w, state);
        let command: Vec<String> = doc["command"]
            .as_array()
            .map(|c| c.iter().map(|p| p.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        match doc["action"].as_str().unwrap() {
            "send" => {
                assert!(!doc["text"].as_str().unwrap_or("").is_empty(), "{doc}");
                let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
                let run = w.run(&args);
                assert_eq!(run.code, 0, "{args:?} refused: {}", run.stdout);
            }
            "wait_for_reply" => {
                fs::write(w.path("REPLY.txt"), reply).unwrap();
                let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
                let run = w.run(&args);
                assert_eq!(run.code, 0, "{args:?} refused: {}", run.stdout);
            }
            "run" => {
                let args: Vec<String> = command[1..]
                    .iter()
                    .map(|a| if a == "COMMANDS.json" { "commands.json".to_owned() } else { a.clone() })
                    .collect();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = w.run(&args);
                assert_eq!(run.code, 0, "{args:?} refused: {}\n{}", run.stdout, run.stderr);
            }
            _ => return doc,
        }
    }
}

fn journal_kinds(w: &World, sidecar: &str) -> Vec<String> {
    fs::read_to_string(w.path(&format!("{sidecar}/events.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_fresh_reference_state_reaches_ready_to_merge_through_next_with_nothing_refused() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    write(&w, "old-s1.json", &reference_fresh("old-s1"));

    // The first `next` offers the prompt the reference tool wrote, and adopts it as the outbox.
    let first = next(&w, "old-s1.json");
    assert_eq!(first["action"], "send");
    assert_eq!(first["text"], PROMPT);
    let state: Value = w.sb.read_json(&w.path("old-s1.json"));
    assert_eq!(state["outbox"]["text"], PROMPT, "{state:#}");
    assert_eq!(journal_kinds(&w, "old-s1.d"), ["outbox_adopted"]);

    let end = drive(&w, "old-s1.json", &format!("Done.\nPR_URL: {}/pull/{n}", repo.html_url));
    assert_eq!(end["status"], "READY_TO_MERGE", "{end}");
    assert!(end["explanation"].as_str().unwrap().contains(&head), "{end}");
    let state: Value = w.sb.read_json(&w.path("old-s1.json"));
    assert_eq!(state["custom_notes"], json!({"kept": true}), "unknown keys survive every rewrite");
    assert_eq!(state["task_space"], "webgpt-orchestrator:old-s1");
    let kinds = journal_kinds(&w, "old-s1.d");
    for kind in ["outbox_adopted", "message_sent", "reply_recorded", "run_finished"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} missing from {kinds:?}");
    }
}

#[test]
fn sent_alone_adopts_the_pending_message_of_a_reference_state() {
    let w = World::new();
    write(&w, "old-s2.json", &reference_fresh("old-s2"));
    // A coordinator that skipped `next` (or whose `next` found the cycle busy).
    let run = w.run(&["sent", "--state", "old-s2.json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let state = run.json();
    assert_eq!(state["outbox"]["kind"], "prompt");
    assert!(state["outbox"]["sent_at"].is_string());
    assert_eq!(next(&w, "old-s2.json")["action"], "wait_for_reply");
}

#[test]
fn a_reference_awaiting_fix_state_sends_its_handoff_then_passes() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let old_head = w.emu.pr_head(&repo, n).unwrap();
    let handoff = format!(
        "## Forge Loop PR test: TEST_FAILED\n- Repository: `acme/widget`\n\nnot ok - expected 5, got -1\n\nPR_URL: {}/pull/{n}",
        repo.html_url
    );
    let mut state = reference_fresh("old-fix");
    state["status"] = json!("AWAITING_WEBGPT_FIX");
    state["pr_ref"] = json!(format!("acme/widget#{n}"));
    state["iteration"] = json!(1);
    state["report"] = reference_report("TEST_FAILED", "acme/widget", n, &old_head);
    state["webgpt_handoff"] = json!(handoff);
    write(&w, "old-fix.json", &state);

    let first = next(&w, "old-fix.json");
    assert_eq!((first["action"].as_str(), first["text"].as_str()), (Some("send"), Some(handoff.as_str())));
    // WebGPT pushes the fix to the same PR.
    w.commit(&repo, "fix", &[("calc.sh", CALC_FIXED)], "fix calc.sh");
    let end = drive(&w, "old-fix.json", &format!("Fixed.\nPR_URL: {}/pull/{n}", repo.html_url));
    assert_eq!(end["status"], "READY_TO_MERGE", "{end}");
    assert_eq!(end["iteration"], 2);
}

#[test]
fn ready_capped_and_blocked_reference_states_show_what_they_hold() {
    let w = World::new();
    let sha = "c".repeat(40);
    let mut ready = reference_fresh("old-ready");
    ready["status"] = json!("READY_TO_MERGE");
    ready["pr_ref"] = json!("https://github.com/acme/widget/pull/7");
    ready["iteration"] = json!(2);
    ready["report"] = reference_report("TEST_PASSED", "acme/widget", 7, &sha);
    ready["webgpt_handoff"] = json!("");
    write(&w, "old-ready.json", &ready);
    let doc = next(&w, "old-ready.json");
    assert_eq!(doc["action"], "stop");
    assert!(doc["explanation"].as_str().unwrap().contains(&sha), "the head SHA comes from the report: {doc}");

    let mut capped = reference_fresh("old-capped");
    capped["status"] = json!("BLOCKED_MAX_ITERATIONS");
    capped["pr_ref"] = json!("acme/widget#7");
    capped["iteration"] = json!(5);
    write(&w, "old-capped.json", &capped);
    let doc = next(&w, "old-capped.json");
    assert_eq!(doc["action"], "stop");
    assert!(doc["explanation"].as_str().unwrap().contains("5 of 5"), "{doc}");

    // A runbook status the reference tool's coordinator wrote by hand.
    let mut blocked = reference_fresh("old-blocked");
    blocked["status"] = json!("BLOCKED_MODEL_UNAVAILABLE");
    write(&w, "old-blocked.json", &blocked);
    let doc = next(&w, "old-blocked.json");
    assert_eq!(doc["action"], "stop");
    assert!(doc["explanation"].as_str().unwrap().contains("unblock"), "{doc}");
    // None of these had anything to adopt: no file was written, no journal started.
    for name in ["old-ready", "old-capped", "old-blocked"] {
        assert!(!w.path(&format!("{name}.d")).exists(), "{name} got a journal");
    }

    // `list` shows the repository from the report or the PR reference, and an age from the
    // file's modification time (the reference tool records no timestamps).
    let list = w.run(&["list", "--dir", w.sb.dir.path().to_str().unwrap()]).json();
    let rows = list.as_array().unwrap();
    let row =
        |stem: &str| rows.iter().find(|r| r["state"].as_str().unwrap().ends_with(&format!("{stem}.json"))).unwrap();
    assert_eq!(row("old-ready")["repository"], "acme/widget", "{list:#}");
    assert_eq!(row("old-capped")["repository"], "acme/widget", "{list:#}");
    for stem in ["old-ready", "old-capped", "old-blocked"] {
        assert!(row(stem)["updated_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{list:#}");
    }
}

/// A registry holding records of both tools: forgeloop reads the reference tool's valid
/// records as its own, and says of each unusable one exactly what is wrong and how to remove
/// it; `unbind` with the URL stored in it removes it.
#[test]
fn a_mixed_registry_lists_every_record_with_a_precise_reason_and_unusable_ones_can_go() {
    let w = World::new();
    let reg = w.path("registry");
    let record = |dir: &str, file: &str, repository: &str, url: &str, extra: Value| {
        let mut value = json!({"repository": repository, "project_url": url, "project_name": "Widget"});
        if let (Some(obj), Some(more)) = (value.as_object_mut(), extra.as_object()) {
            obj.extend(more.clone());
        }
        let path = reg.join(dir).join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    };
    let good = "https://chatgpt.com/g/g-p-abc123/project";
    record("acme", "old.json", "acme/old", good, json!({"written_by": "project_context.py"}));
    record("acme.co", "widget.json", "acme.co/widget", good, json!({}));
    let long_owner = "o".repeat(40);
    record(&long_owner, "r.json", &format!("{long_owner}/r"), good, json!({}));
    let long_repo = "r".repeat(101);
    record("acme", &format!("{long_repo}.json"), &format!("acme/{long_repo}"), good, json!({}));
    record("acme", "query.json", "acme/query", &format!("{good}?"), json!({}));
    record("acme", "fragment.json", "acme/fragment", &format!("{good}#"), json!({}));
    record("acme", "upper.json", "acme/upper", &good.replace("https://", "HTTPS://"), json!({}));
    record("acme", "spaces.json", "acme/spaces", &format!(" {good} "), json!({}));
    let bound =
        w.run(&["project", "bind", "--repository", "acme/new", "--project-url", good, "--project-name", "Widget"]);
    assert_eq!(bound.code, 0, "{}", bound.stdout);

    let list = w.run(&["project", "list"]).json();
    let records = list["records"].as_array().unwrap();
    let error = |repository: &str| {
        let row = records.iter().find(|r| r["repository"] == repository).unwrap_or_else(|| panic!("{repository}"));
        row["error"].as_str().map(str::to_owned)
    };
    assert_eq!(error("acme/old"), None, "a valid reference record is read as is");
    assert_eq!(error("acme/new"), None);
    for (repository, reason) in [
        ("acme.co/widget", "contains '.', which GitHub never allows in an owner"),
        (format!("{long_owner}/r").as_str(), "40 characters long; GitHub allows at most 39"),
        (format!("acme/{long_repo}").as_str(), "101 characters long; GitHub allows at most 100"),
        ("acme/query", "not even an empty '?' or '#'"),
        ("acme/fragment", "not even an empty '?' or '#'"),
        ("acme/upper", "must be lowercase"),
        ("acme/spaces", "surrounding whitespace"),
    ] {
        let message = error(repository).unwrap_or_else(|| panic!("{repository} should be flagged"));
        assert!(message.contains(reason), "{repository}: {message}");
        assert!(
            message.contains(&format!("forgeloop project unbind --repository {repository} --project-url")),
            "{message}"
        );
    }
    assert_eq!(list["invalid"], 7);

    // lookup says the same; the old message listed '.' as allowed in an owner.
    let lookup = w.run(&["project", "lookup", "--repository", "acme.co/widget"]);
    assert_eq!(lookup.code, 2);
    let message = lookup.json()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("never allows in an owner") && message.contains("project unbind"), "{message}");
    let lookup = w.run(&["project", "lookup", "--repository", "acme/query"]).json();
    assert!(lookup["error"].as_str().unwrap().contains("project unbind --repository acme/query"), "{lookup}");

    // unbind with the exact stored URL removes an unusable record, and only that.
    let wrong = w.run(&[
        "project",
        "unbind",
        "--repository",
        "acme.co/widget",
        "--project-url",
        "https://chatgpt.com/g/g-p-other/project",
    ]);
    assert_eq!(wrong.code, 2, "{}", wrong.stdout);
    assert!(reg.join("acme.co/widget.json").exists());
    for (repository, url) in
        [("acme.co/widget", good.to_owned()), ("acme/query", format!("{good}?")), ("acme/spaces", format!(" {good} "))]
    {
        let run = w.run(&["project", "unbind", "--repository", repository, "--project-url", &url]);
        assert_eq!(run.code, 0, "{repository}: {}", run.stdout);
    }
    assert!(!reg.join("acme.co/widget.json").exists() && !reg.join("acme/query.json").exists());
    let list = w.run(&["project", "list"]).json();
    assert_eq!(list["invalid"], 4, "{list:#}");
    // The reference record's unknown key is still there.
    let old: Value = serde_json::from_slice(&fs::read(reg.join("acme/old.json")).unwrap()).unwrap();
    assert_eq!(old["written_by"], "project_context.py");
    assert!(Path::new(&reg).join("acme/new.json").exists());
}
