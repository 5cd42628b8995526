//! The ChatGPT Project registry through the real binary: the reference tool's cases P1–P9
//! (design §12.12) with their exact inputs, the 16-process bind race, path traversal and
//! injection, every attach refusal leaving the state byte-for-byte unchanged, the cycle
//! lock, unbind, list and the source manifest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use forgeloop::domain::state::CycleState;
use forgeloop::store::lock::FileLock;
use serde_json::{Value, json};
use support::{Run, Sandbox};

const EXAMPLE: &str = "https://chatgpt.com/g/g-p-example/project";
const GOOD: &str = "https://chatgpt.com/g/g-p-good/project";

/// The registry the reference tests pass with `--registry DIR`, appended last.
fn registry(sb: &Sandbox) -> PathBuf {
    sb.path("projects")
}

fn project(sb: &Sandbox, args: &[&str]) -> Run {
    let reg = registry(sb);
    let mut all = vec!["project"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--registry", reg.to_str().unwrap()]);
    sb.run(&all)
}

fn bind(sb: &Sandbox, repo: &str, url: &str, name: &str) -> Run {
    project(sb, &["bind", "--repository", repo, "--project-url", url, "--project-name", name])
}

fn attach(sb: &Sandbox, repo: &str, state: &Path, conversation: Option<&str>) -> Run {
    let mut args = vec!["attach", "--repository", repo, "--state", state.to_str().unwrap()];
    if let Some(c) = conversation {
        args.extend_from_slice(&["--conversation-url", c]);
    }
    project(sb, &args)
}

fn blocked(run: &Run) {
    assert_eq!(run.code, 2, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["status"], "BLOCKED_PROJECT_UNAVAILABLE", "{}", run.stdout);
}

/// Every directory and file (with bytes) under `dir`.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.push((path.clone(), None));
                stack.push(path);
            } else {
                out.push((path.clone(), Some(fs::read(&path).unwrap_or_default())));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn reference_p1_first_use_missing_then_reuses_binding_across_tasks() {
    let sb = Sandbox::new();
    let run = project(&sb, &["lookup", "--repository", "Acme/Widget"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "PROJECT_NOT_LINKED");
    assert_eq!(out["repository"], "acme/widget");
    let advice = out["next_action"].as_str().unwrap();
    for needle in ["Search", "existing ChatGPT Projects", "descriptive names", "acme/widget", "browser", "project bind"]
    {
        assert!(advice.contains(needle), "advice lacks {needle:?}: {advice}");
    }
    assert!(!registry(&sb).exists(), "lookup must not create the registry");

    let bound = bind(&sb, "Acme/Widget", "https://chatgpt.com/g/g-p-example/project", "Existing product research");
    assert_eq!(bound.code, 0, "{}", bound.stdout);
    let again = project(&sb, &["lookup", "--repository", "acme/widget"]);
    assert_eq!(again.code, 0);
    let out = again.json();
    assert_eq!(out["status"], "PROJECT_LINKED");
    assert_eq!(out["repository"], "acme/widget");
    assert_eq!(out["project_url"], bound.json()["project_url"]);
    assert_eq!(out["project_name"], "Existing product research");
    assert_eq!(
        out.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["status", "repository", "project_url", "project_name"]
    );
}

#[test]
fn reference_p2_attach_preserves_state_and_refuses_repository_or_project_switch() {
    let sb = Sandbox::new();
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    let task = sb.path("task.json");
    fs::write(&task, r#"{"request":"fix widget","iteration":2,"custom":{"keep":true}}"#).unwrap();

    // (a)
    let run = attach(&sb, "acme/widget", &task, None);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "PROJECT_LINKED");
    let state = sb.read_json(&task);
    assert_eq!(state["request"], "fix widget");
    assert_eq!(state["iteration"], 2);
    assert_eq!(state["custom"], json!({"keep": true}));
    assert_eq!(state["project_url"], EXAMPLE);
    assert_eq!(state["repository"], "acme/widget");
    assert_eq!(state["project_name"], "Widget");

    // (b)
    let run = attach(&sb, "acme/widget", &task, Some("https://chatgpt.com/g/g-p-example/c/task-1"));
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(sb.read_json(&task)["conversation_url"], "https://chatgpt.com/g/g-p-example/c/task-1");

    // (c)
    let before = fs::read(&task).unwrap();
    blocked(&attach(&sb, "acme/widget", &task, Some("https://chatgpt.com/g/g-p-other/c/task-2")));
    assert_eq!(fs::read(&task).unwrap(), before);

    // (d)
    blocked(&bind(&sb, "acme/widget", "https://chatgpt.com/g/g-p-other/project", "Wrong"));
    // (e) one Project may serve several repositories
    assert_eq!(bind(&sb, "acme/other", EXAMPLE, "Widget").code, 0);
    // (f)
    let run = attach(&sb, "acme/other", &task, None);
    blocked(&run);
    assert!(run.json()["error"].as_str().unwrap().contains("task belongs to a different repository"));
    assert_eq!(fs::read(&task).unwrap(), before);
}

#[test]
fn reference_p3_invalid_repository_does_not_create_records() {
    for repo in ["../widget", "acme/..", "/acme/widget", "acme/widget/extra"] {
        let sb = Sandbox::new();
        blocked(&bind(&sb, repo, GOOD, "Good"));
        assert!(!registry(&sb).exists(), "{repo}");
    }
}

#[test]
fn traversal_and_injection_keys_touch_nothing_inside_or_outside_the_registry() {
    let sb = Sandbox::new();
    assert_eq!(bind(&sb, "acme/widget", GOOD, "Good").code, 0);
    let task = sb.path("task.json");
    fs::write(&task, b"{}").unwrap();
    let before = tree(sb.dir.path());
    let long_owner = format!("{}/widget", "o".repeat(40));
    let long_repo = format!("acme/{}", "r".repeat(101));
    let huge = format!("acme/{}", "r".repeat(100_000));
    let keys = [
        "../x",
        "a/..",
        "a/b/c",
        "-rf/x",
        "acme/-rf",
        "../../etc/passwd",
        "acme/../../x",
        "./acme/widget",
        "acme/.",
        "acme/widget\n",
        "acme/wid\nget",
        "acme/wid\rget",
        " acme/widget",
        "acme\\widget",
        "acme/.hidden",
        "acme/.widget.json.tmp-1-2",
        long_owner.as_str(),
        long_repo.as_str(),
        huge.as_str(),
    ];
    for key in keys {
        let flag = format!("--repository={key}");
        let reg = format!("--registry={}", registry(&sb).display());
        for args in [
            vec!["project", "lookup", &flag],
            vec!["project", "bind", &flag, "--project-url", GOOD, "--project-name", "Good"],
            vec!["project", "unbind", &flag, "--project-url", GOOD],
            vec!["project", "attach", &flag, "--state", task.to_str().unwrap()],
            vec!["project", "sources", "list", &flag],
            vec!["project", "sources", "add", &flag, "--url", "https://example.com/", "--purpose", "x"],
        ] {
            let mut args = args.clone();
            args.push(&reg);
            let run = sb.run(&args);
            blocked(&run);
            assert!(run.json()["error"].as_str().unwrap().contains("is not a GitHub owner/repo: "), "{}", run.stdout);
        }
    }
    assert_eq!(tree(sb.dir.path()), before);
}

#[test]
fn reference_p4_invalid_project_url_does_not_create_records() {
    for url in [
        "https://chatgpt.com.evil/g/g-p-good/project",
        "http://chatgpt.com/g/g-p-good/project",
        "https://chatgpt.com/c/chat-1",
        "https://chatgpt.com/g/g-p-good/project?redirect=elsewhere",
        // look-alikes beyond the reference cases
        "https://evil.com/chatgpt.com/g/g-p-good/project",
        "https://chatgpt.com:443/g/g-p-good/project",
        "https://user@chatgpt.com/g/g-p-good/project",
        "https://www.chatgpt.com/g/g-p-good/project",
        "https://chatgpt.com/g/g-p-go_od/project",
        "https://chatgpt.com/g/g-p-good/project#x",
    ] {
        let sb = Sandbox::new();
        let run = bind(&sb, "acme/widget", url, "Good");
        blocked(&run);
        assert!(!registry(&sb).exists(), "{url}");
    }
}

#[test]
fn reference_p5_corrupt_mapping_is_blocked_not_treated_as_absent() {
    let sb = Sandbox::new();
    let record = registry(&sb).join("acme/widget.json");
    fs::create_dir_all(record.parent().unwrap()).unwrap();
    fs::write(&record, r#"{"repository":"#).unwrap();
    blocked(&project(&sb, &["lookup", "--repository", "acme/widget"]));
    blocked(&bind(&sb, "acme/widget", GOOD, "Good"));
    blocked(&project(&sb, &["unbind", "--repository", "acme/widget", "--project-url", GOOD]));
    let task = sb.path("task.json");
    fs::write(&task, b"{}").unwrap();
    blocked(&attach(&sb, "acme/widget", &task, None));
    assert_eq!(fs::read(&record).unwrap(), br#"{"repository":"#);
    assert_eq!(fs::read(&task).unwrap(), b"{}");
}

#[test]
fn reference_p6_missing_mapping_cannot_attach_or_create_task() {
    let sb = Sandbox::new();
    let task = sb.path("task.json");
    blocked(&attach(&sb, "acme/widget", &task, None));
    assert!(!task.exists());
    assert!(!sb.path("task.lock").exists(), "nothing is created beside a missing state");
    // Linked, but the state still does not exist.
    assert_eq!(bind(&sb, "acme/widget", GOOD, "Good").code, 0);
    blocked(&attach(&sb, "acme/widget", &task, None));
    assert!(!task.exists());
}

#[test]
fn reference_p7_invalid_task_routing_blocks_without_modification() {
    for state in [r#"{"project_url": 4}"#, r#"{"conversation_url": 4}"#] {
        let sb = Sandbox::new();
        assert_eq!(bind(&sb, "acme/widget", GOOD, "Good").code, 0);
        let task = sb.path("task.json");
        fs::write(&task, state).unwrap();
        blocked(&attach(&sb, "acme/widget", &task, None));
        assert_eq!(fs::read(&task).unwrap(), state.as_bytes());
    }
}

#[test]
fn reference_p8_concurrent_bindings_cannot_overwrite_each_other_with_16_processes() {
    let sb = Sandbox::new();
    let reg = registry(&sb);
    let children: Vec<_> = (0..16)
        .map(|i| {
            sb.command(&[
                "project",
                "bind",
                "--repository",
                "acme/widget",
                "--project-url",
                &format!("https://chatgpt.com/g/g-p-racer{i}/project"),
                "--project-name",
                &format!("racer {i}"),
                "--registry",
                reg.to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let mut codes: Vec<i32> = outputs.iter().map(|o| o.status.code().unwrap()).collect();
    codes.sort();
    let mut expected = vec![2; 15];
    expected.insert(0, 0);
    assert_eq!(codes, expected);
    let winner: Value =
        serde_json::from_slice(&outputs.iter().find(|o| o.status.code() == Some(0)).unwrap().stdout).unwrap();
    assert_eq!(winner["status"], "PROJECT_LINKED");
    for loser in outputs.iter().filter(|o| o.status.code() == Some(2)) {
        let out: Value = serde_json::from_slice(&loser.stdout).unwrap();
        assert_eq!(out["status"], "BLOCKED_PROJECT_UNAVAILABLE");
        assert!(out["error"].as_str().unwrap().contains("already linked to another ChatGPT Project"), "{out}");
    }
    let lookup = project(&sb, &["lookup", "--repository", "acme/widget"]);
    assert_eq!(lookup.code, 0);
    assert_eq!(lookup.json()["project_url"], winner["project_url"]);
    assert_eq!(lookup.json()["project_name"], winner["project_name"]);
    let names: Vec<_> = fs::read_dir(reg.join("acme")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["widget.json"], "no temp file survives the race");
}

#[test]
fn reference_p9_legacy_task_pr_cannot_be_attached_to_another_repository() {
    let sb = Sandbox::new();
    assert_eq!(bind(&sb, "acme/widget", GOOD, "Good").code, 0);
    let task = sb.path("task.json");
    fs::write(&task, r#"{"pr_ref":"acme/other#1"}"#).unwrap();
    let run = attach(&sb, "acme/widget", &task, None);
    blocked(&run);
    assert!(run.json()["error"].as_str().unwrap().contains("task PR belongs to a different repository"));
    assert_eq!(fs::read(&task).unwrap(), br#"{"pr_ref":"acme/other#1"}"#);
}

#[test]
fn every_attach_refusal_leaves_the_state_byte_for_byte_unchanged() {
    let sb = Sandbox::new();
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    assert_eq!(bind(&sb, "acme/shared", EXAMPLE, "Widget").code, 0);
    let c1 = "https://chatgpt.com/g/g-p-example/c/task-1";
    // (repository, state text, --conversation-url, expected words in the error)
    let cases: &[(&str, &str, Option<&str>, &str)] = &[
        ("acme/widget", "[1, 2]", None, "JSON object"),
        ("acme/widget", "null", None, "JSON object"),
        ("acme/widget", r#""text""#, None, "JSON object"),
        ("acme/widget", r#"{"request": "#, None, "not valid JSON"),
        ("acme/widget", "", None, "not valid JSON"),
        ("acme/widget", r#"{"repository": 4}"#, None, "invalid task repository"),
        ("acme/widget", r#"{"repository": ""}"#, None, "invalid task repository"),
        ("acme/widget", r#"{"repository": ["acme/widget"]}"#, None, "invalid task repository"),
        ("acme/widget", r#"{"project_url": 4}"#, None, "invalid task project_url"),
        ("acme/widget", r#"{"project_url": ""}"#, None, "invalid task project_url"),
        ("acme/widget", r#"{"conversation_url": 4}"#, None, "invalid task conversation_url"),
        ("acme/widget", r#"{"conversation_url": ""}"#, None, "invalid task conversation_url"),
        ("acme/widget", r#"{"repository": "../widget"}"#, None, "invalid task repository"),
        ("acme/widget", r#"{"repository": "acme/other"}"#, None, "different repository"),
        ("acme/shared", r#"{"repository": "acme/widget"}"#, None, "different repository"),
        // the binding is checked before anything else about the task or the registry
        ("acme/widget", r#"{"repository": "acme/other", "project_url": 4}"#, None, "different repository"),
        ("acme/nolink", r#"{"repository": "acme/widget"}"#, None, "different repository"),
        ("acme/nolink", r#"{"request": "r"}"#, None, "must be linked"),
        ("acme/widget", r#"{"pr_ref": "acme/other#1"}"#, None, "PR belongs to a different repository"),
        ("acme/widget", r#"{"pr_ref": "https://github.com/acme/other/pull/3"}"#, None, "different repository"),
        ("acme/widget", r#"{"pr_ref": 5}"#, None, "invalid task pr_ref"),
        ("acme/widget", r#"{"pr_ref": "not a pr"}"#, None, "invalid task pr_ref"),
        ("acme/widget", r#"{"project_url": "https://chatgpt.com/g/g-p-other/project"}"#, None, "different project"),
        ("acme/widget", r#"{"project_url": "http://chatgpt.com/g/g-p-example/project"}"#, None, "project_url"),
        ("acme/widget", "{}", Some("https://chatgpt.com/g/g-p-other/c/task-2"), "different project"),
        ("acme/widget", "{}", Some("https://chatgpt.com/g/g-p-example/c/task_2"), "conversation URL"),
        ("acme/widget", "{}", Some("https://chatgpt.com/g/g-p-example/project"), "conversation URL"),
        ("acme/widget", "{}", Some("https://chatgpt.com/c/task-2?x=1"), "conversation URL"),
        (
            "acme/widget",
            r#"{"conversation_url": "https://chatgpt.com/g/g-p-other/c/task-1"}"#,
            None,
            "different project",
        ),
        ("acme/widget", r#"{"conversation_url": "not a url"}"#, None, "conversation URL"),
        (
            "acme/widget",
            r#"{"conversation_url": "https://chatgpt.com/g/g-p-example/c/task-1"}"#,
            Some("https://chatgpt.com/g/g-p-example/c/task-2"),
            "already has the conversation",
        ),
        (
            "acme/widget",
            r#"{"conversation_url": "https://chatgpt.com/c/task-1"}"#,
            Some(c1),
            "already has the conversation",
        ),
    ];
    for (i, (repo, text, conversation, words)) in cases.iter().enumerate() {
        let task = sb.path(&format!("task-{i}.json"));
        fs::write(&task, text).unwrap();
        let run = attach(&sb, repo, &task, *conversation);
        blocked(&run);
        let error = run.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(words), "case {i} {text}: expected {words:?} in {error}");
        assert_eq!(fs::read(&task).unwrap(), text.as_bytes(), "case {i} changed the state");
        assert!(!sb.path(&format!("task-{i}.d")).exists(), "case {i} journaled");
    }
    // A state bigger than forgeloop reads is refused unread, and unchanged.
    let big = sb.path("big.json");
    let text = format!(r#"{{"pad":"{}"}}"#, "x".repeat(33 * 1024 * 1024));
    fs::write(&big, &text).unwrap();
    blocked(&attach(&sb, "acme/widget", &big, None));
    assert_eq!(fs::metadata(&big).unwrap().len(), text.len() as u64);
}

#[test]
fn attach_on_a_busy_cycle_is_cycle_busy_and_changes_nothing() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    let state = sb.path("c.json");
    let before = fs::read(&state).unwrap();
    let journal_before = fs::read(sb.path("c.d/events.jsonl")).unwrap();
    let _held = FileLock::try_acquire(&sb.path("c.lock")).unwrap();
    let run = attach(&sb, "acme/widget", &state, Some("https://chatgpt.com/g/g-p-example/c/task-1"));
    assert_eq!(run.code, 2);
    let out = run.json();
    assert_eq!(out["status"], "CYCLE_BUSY");
    assert_eq!(out["pid"], std::process::id());
    assert_eq!(fs::read(&state).unwrap(), before);
    assert_eq!(fs::read(sb.path("c.d/events.jsonl")).unwrap(), journal_before);
}

#[test]
fn attach_to_a_cycle_keeps_it_a_cycle_and_journals_once() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    let state = sb.path("c.json");
    let original = sb.read_json(&state);
    let c1 = "https://chatgpt.com/g/g-p-example/c/task-1";
    let run = attach(&sb, "Acme/Widget", &state, Some(c1));
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["changed"], true);
    assert_eq!(out["conversation_url"], c1);
    assert!(out.get("warning").is_none());

    let cycle = CycleState::from_bytes(&fs::read(&state).unwrap()).unwrap();
    assert_eq!(cycle.repository.as_deref(), Some("acme/widget"));
    assert_eq!(cycle.project_url.as_deref(), Some(EXAMPLE));
    assert_eq!(cycle.project_name.as_deref(), Some("Widget"));
    assert_eq!(cycle.conversation_url.as_deref(), Some(c1));
    let after = sb.read_json(&state);
    for (key, value) in original.as_object().unwrap() {
        // next_action follows the binding: it is what `next` says now.
        if key != "updated_at" && key != "next_action" {
            assert_eq!(&after[key], value, "{key} changed");
        }
    }
    assert_eq!(after["next_action"], sb.run(&["next", "--state", "c.json"]).json()["explanation"]);
    let log = sb.run(&["log", "--state", "c.json"]);
    let events = log.json()["events"].as_array().unwrap().clone();
    let attached: Vec<_> = events.iter().filter(|e| e["kind"] == "attached").collect();
    assert_eq!(attached.len(), 1);
    assert_eq!(attached[0]["data"]["conversation_url"], c1);
    assert_eq!(sb.run(&["log", "--state", "c.json", "--verify"]).code, 0);

    // The same attach again, even spelled with a trailing slash, changes and journals nothing.
    let bytes = fs::read(&state).unwrap();
    let again = attach(&sb, "acme/widget", &state, Some(&format!("{c1}/")));
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert_eq!(again.json()["changed"], false);
    assert_eq!(fs::read(&state).unwrap(), bytes);
    let events = sb.run(&["log", "--state", "c.json"]).json()["events"].as_array().unwrap().len();
    assert_eq!(events, log.json()["events"].as_array().unwrap().len());
}

#[test]
fn attach_warns_about_a_conversation_without_project_segment() {
    let sb = Sandbox::new();
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    let task = sb.path("task.json");
    fs::write(&task, "{}").unwrap();
    let run = attach(&sb, "acme/widget", &task, Some("https://chatgpt.com/c/plain-1"));
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.json()["warning"].as_str().unwrap().contains("confirm in the browser"));
    assert_eq!(sb.read_json(&task)["conversation_url"], "https://chatgpt.com/c/plain-1");
}

#[test]
fn bind_with_the_same_project_and_another_name_says_so() {
    let sb = Sandbox::new();
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "  Widget  ").code, 0);
    let record = registry(&sb).join("acme/widget.json");
    assert_eq!(
        fs::read_to_string(&record).unwrap(),
        r#"{"repository":"acme/widget","project_url":"https://chatgpt.com/g/g-p-example/project","project_name":"Widget"}"#,
        "the reference format: compact, no trailing newline, name trimmed"
    );
    let same = bind(&sb, "acme/widget", &format!("{EXAMPLE}/"), "Widget");
    assert_eq!(same.code, 0);
    assert!(same.json().get("note").is_none());
    assert_eq!(same.json()["project_url"], EXAMPLE, "the stored spelling wins");
    let renamed = bind(&sb, "acme/widget", EXAMPLE, "Widget v2");
    assert_eq!(renamed.code, 0);
    let out = renamed.json();
    assert_eq!(out["project_name"], "Widget");
    assert!(out["note"].as_str().unwrap().contains("Widget v2"), "{out}");
}

#[test]
fn unbind_needs_the_bound_project_and_rebinding_goes_through_it() {
    let sb = Sandbox::new();
    blocked(&project(&sb, &["unbind", "--repository", "acme/widget", "--project-url", EXAMPLE]));
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    let record = registry(&sb).join("acme/widget.json");
    let bytes = fs::read(&record).unwrap();
    for url in ["https://chatgpt.com/g/g-p-other/project", "https://chatgpt.com/g/g-p-example/c/x", "nonsense"] {
        blocked(&project(&sb, &["unbind", "--repository", "acme/widget", "--project-url", url]));
        assert_eq!(fs::read(&record).unwrap(), bytes, "{url}");
    }
    let run = project(&sb, &["unbind", "--repository", "Acme/Widget", "--project-url", &format!("{EXAMPLE}/")]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "PROJECT_UNBOUND");
    assert_eq!(run.json()["project_url"], EXAMPLE);
    assert!(!record.exists());
    assert_eq!(project(&sb, &["lookup", "--repository", "acme/widget"]).json()["status"], "PROJECT_NOT_LINKED");
    let rebound = bind(&sb, "acme/widget", "https://chatgpt.com/g/g-p-other/project", "Other");
    assert_eq!(rebound.code, 0);
    assert_eq!(rebound.json()["project_name"], "Other");
}

#[test]
fn records_written_by_the_reference_tool_keep_working() {
    let sb = Sandbox::new();
    let dir = registry(&sb).join("acme");
    fs::create_dir_all(&dir).unwrap();
    // Python's json.dumps default spacing, an unstripped name and a key forgeloop does not know.
    let text = r#"{"repository": "acme/widget", "project_url": "https://chatgpt.com/g/g-p-example/project/", "project_name": " Widget ", "extra": 1}"#;
    fs::write(dir.join("widget.json"), text).unwrap();
    let run = project(&sb, &["lookup", "--repository", "ACME/widget"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["project_url"], "https://chatgpt.com/g/g-p-example/project/");
    assert_eq!(run.json()["project_name"], " Widget ");
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0, "same Project by ID");
    assert_eq!(fs::read_to_string(dir.join("widget.json")).unwrap(), text, "never rewritten");
    let task = sb.path("task.json");
    fs::write(&task, "{}").unwrap();
    assert_eq!(attach(&sb, "acme/widget", &task, Some("https://chatgpt.com/g/g-p-example/c/t")).code, 0);
    assert_eq!(sb.read_json(&task)["project_name"], " Widget ");
}

#[test]
fn list_shows_every_record_and_flags_invalid_ones() {
    let sb = Sandbox::new();
    let empty = project(&sb, &["list"]);
    assert_eq!(empty.code, 0);
    assert_eq!(empty.json()["records"], json!([]));
    assert!(!registry(&sb).exists());

    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    assert_eq!(bind(&sb, "acme/gadget", EXAMPLE, "Widget").code, 0);
    let dir = registry(&sb).join("acme");
    fs::write(dir.join("broken.json"), b"{").unwrap();
    fs::write(
        dir.join("moved.json"),
        format!(r#"{{"repository":"acme/widget","project_url":"{EXAMPLE}","project_name":"W"}}"#),
    )
    .unwrap();
    fs::write(dir.join(".widget.json.tmp-999999999-0"), b"partial").unwrap();
    let run = project(&sb, &["list"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "PROJECTS");
    assert_eq!(out["invalid"], 2);
    let records = out["records"].as_array().unwrap();
    let names: Vec<_> = records.iter().map(|r| r["repository"].as_str().unwrap()).collect();
    assert_eq!(names, ["acme/broken", "acme/gadget", "acme/moved", "acme/widget"]);
    assert!(records[0]["error"].is_string());
    assert_eq!(records[1]["project_id"], "g-p-example");
    assert_eq!(records[1]["shared_with"], json!(["acme/widget"]));
    assert!(records[1].get("error").is_none());
    assert!(records[2]["error"].as_str().unwrap().contains("acme/widget"));
}

#[test]
fn registry_option_works_before_and_after_the_subcommand() {
    let sb = Sandbox::new();
    let reg = sb.path("elsewhere");
    let reg = reg.to_str().unwrap();
    let args = ["--repository", "acme/widget", "--project-url", EXAMPLE, "--project-name", "W"];
    let mut after = vec!["project", "bind"];
    after.extend_from_slice(&args);
    after.extend_from_slice(&["--registry", reg]);
    assert_eq!(sb.run(&after).code, 0);
    assert!(sb.path("elsewhere/acme/widget.json").exists());
    let before = sb.run(&["--registry", reg, "project", "lookup", "--repository", "acme/widget"]);
    assert_eq!(before.json()["status"], "PROJECT_LINKED");
    // Without the option, FORGELOOP_REGISTRY (the sandbox's default) is used: empty.
    let env = sb.run(&["project", "lookup", "--repository", "acme/widget"]);
    assert_eq!(env.json()["status"], "PROJECT_NOT_LINKED");
    assert!(!sb.path("registry").exists());
}

#[test]
fn a_stale_temp_file_from_a_crashed_bind_is_cleaned_up() {
    let sb = Sandbox::new();
    let dir = registry(&sb).join("acme");
    fs::create_dir_all(&dir).unwrap();
    let stale = dir.join(".widget.json.tmp-999999999-7");
    fs::write(&stale, b"{\"repository\":\"acme/wid").unwrap();
    assert_eq!(project(&sb, &["lookup", "--repository", "acme/widget"]).json()["status"], "PROJECT_NOT_LINKED");
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);
    assert!(!stale.exists());
    let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["widget.json"]);
}

#[test]
fn the_source_manifest_is_added_verified_and_superseded_never_deleted() {
    let sb = Sandbox::new();
    let notes = sb.path("notes.md");
    fs::write(&notes, b"first").unwrap();
    let notes_arg = notes.to_str().unwrap();
    let add = |extra: &[&str]| {
        let mut args = vec!["sources", "add", "--repository", "acme/widget", "--purpose", "API notes"];
        args.extend_from_slice(extra);
        project(&sb, &args)
    };
    blocked(&add(&["--path", notes_arg]));
    assert!(!registry(&sb).exists(), "sources need a linked repository");
    assert_eq!(bind(&sb, "acme/widget", EXAMPLE, "Widget").code, 0);

    let run = add(&["--path", notes_arg]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let item = run.json()["item"].clone();
    assert_eq!(item["id"], "s1");
    assert_eq!(item["status"], "pending");
    assert_eq!(item["sha256"], "a7937b64b8caa58f03721bb6bacf5c78cb235febe0e70b1b84cd99541461a08e");
    assert_eq!(item["project_id"], "g-p-example");
    assert!(item["observed_label"].is_null() && item["last_verified"].is_null());
    let dup = add(&["--path", notes_arg]);
    assert_eq!(dup.code, 2);
    assert_eq!(dup.json()["status"], "BLOCKED_PROJECT_SOURCES");

    let web =
        add(&["--url", "https://docs.example.com/api", "--excerpt", "GET /v1/widgets", "--retrieved-at", "2026-11-01"]);
    assert_eq!(web.code, 0, "{}", web.stdout);
    assert_eq!(web.json()["item"]["retrieved_at"], "2026-11-01");
    assert_eq!(web.json()["item"]["excerpt"], "GET /v1/widgets");
    let excerpt_on_file = add(&["--path", notes_arg, "--excerpt", "x"]);
    assert_eq!(excerpt_on_file.code, 2, "clap refuses --excerpt without --url");

    fs::write(&notes, b"second").unwrap();
    let verify = project(
        &sb,
        &[
            "sources",
            "verify",
            "--repository",
            "acme/widget",
            "--id",
            "s1",
            "--status",
            "verified",
            "--observed-label",
            "notes.md",
        ],
    );
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    let out = verify.json();
    assert_eq!(out["status"], "SOURCE_VERIFIED");
    assert_eq!(out["changed_since_added"], true);
    assert!(out["warning"].as_str().unwrap().contains("supersede s1"));
    assert_eq!(out["item"]["status"], "verified");
    assert_eq!(out["item"]["observed_label"], "notes.md");
    assert!(out["item"]["last_verified"].is_string());

    let failed = project(
        &sb,
        &["sources", "verify", "--repository", "acme/widget", "--id", "s2", "--status", "failed", "--note", "quota"],
    );
    assert_eq!(failed.json()["status"], "SOURCE_FAILED");
    let bad_status =
        project(&sb, &["sources", "verify", "--repository", "acme/widget", "--id", "s2", "--status", "pending"]);
    assert_eq!(bad_status.code, 2);

    let sup = project(&sb, &["sources", "supersede", "--repository", "acme/widget", "--id", "s1", "--by", "s2"]);
    assert_eq!(sup.code, 0, "{}", sup.stdout);
    assert_eq!(sup.json()["item"]["status"], "superseded");
    assert_eq!(sup.json()["item"]["superseded_by"], "s2");
    let readd = add(&["--path", notes_arg]);
    assert_eq!(readd.json()["item"]["id"], "s3");
    let missing = project(&sb, &["sources", "supersede", "--repository", "acme/widget", "--id", "s42"]);
    assert_eq!(missing.json()["status"], "BLOCKED_PROJECT_SOURCES");

    let list = project(&sb, &["sources", "list", "--repository", "acme/widget"]);
    let items = list.json()["items"].as_array().unwrap().clone();
    let states: Vec<_> = items.iter().map(|i| (i["id"].as_str().unwrap(), i["status"].as_str().unwrap())).collect();
    assert_eq!(states, [("s1", "superseded"), ("s2", "failed"), ("s3", "pending")]);
    let manifest = registry(&sb).join("acme/widget/sources.json");
    let on_disk: Value = serde_json::from_slice(&fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(on_disk["repository"], "acme/widget");
    assert_eq!(on_disk["items"].as_array().unwrap().len(), 3);

    fs::write(&manifest, b"{\"items\": [").unwrap();
    let corrupt = project(&sb, &["sources", "list", "--repository", "acme/widget"]);
    assert_eq!(corrupt.code, 2);
    assert_eq!(corrupt.json()["status"], "BLOCKED_PROJECT_SOURCES");
    let on_corrupt = add(&["--url", "https://example.com/x"]);
    assert_eq!(on_corrupt.code, 2);
    assert_eq!(on_corrupt.json()["status"], "BLOCKED_PROJECT_SOURCES");
    assert_eq!(fs::read(&manifest).unwrap(), b"{\"items\": [");
}
