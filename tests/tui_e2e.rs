//! The real binary in a real terminal (tmux): the control room sees a cycle created from
//! outside without a key press, and a person confirms its brief with keys.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::time::{Duration, Instant};

use support::Sandbox;
use support::tmux::{Tmux, sh_quote};

fn tui_command(sb: &Sandbox, env: &str) -> String {
    format!(
        "cd {} && {env} FORGELOOP_HOME={} FORGELOOP_REGISTRY={} XDG_CONFIG_HOME={} {} tui; echo EXIT=$?; sleep 30",
        sh_quote(&sb.dir.path().display().to_string()),
        sh_quote(&sb.home().display().to_string()),
        sh_quote(&sb.path("registry").display().to_string()),
        sh_quote(&sb.path("xdg").display().to_string()),
        sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
    )
}

fn wait_for_file(path: &std::path::Path, what: &str, check: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let start = Instant::now();
    loop {
        if let Some(value) = std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok())
            && check(&value)
        {
            return value;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{what} did not happen in {}", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_cycle_created_outside_appears_live_and_is_confirmed_with_keys() {
    let sb = Sandbox::new();
    let tmux = Tmux::start(&tui_command(&sb, ""), 120, 40);
    tmux.wait_for("No cycles yet", Duration::from_secs(20));

    // The coordinator creates a cycle from another process; no key is pressed.
    let run = sb.start("dark-mode", &["--await-confirmation"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let screen = tmux.wait_for("CONFIRM BRIEF", Duration::from_secs(10));
    assert!(screen.contains("dark-mode"), "{screen}");
    assert!(screen.contains("◆ 1 confirm"), "{screen}");

    tmux.send_keys(&["c"]);
    let dialog = tmux.wait_for("Confirm the delegation brief", Duration::from_secs(10));
    assert!(dialog.contains("add dark mode."), "{dialog}");
    tmux.send_keys(&["y"]);

    let state_path = sb.home().join("cycles/dark-mode.json");
    let state = wait_for_file(&state_path, "confirmation", |s| s["status"] == "AWAITING_WEBGPT_PR");
    assert_eq!(state["brief_confirmation"]["by"], "human");
    assert_eq!(state["brief_confirmation"]["via"], "tui");
    assert!(state["webgpt_prompt"].as_str().unwrap().contains("## Confirmed user intent"));
    tmux.wait_for("AWAIT PR", Duration::from_secs(10));

    // An outside change shows up too: the agent records the prompt as sent.
    assert_eq!(sb.run(&["sent", "--state", "dark-mode"]).code, 0);
    tmux.send_keys(&["2"]);
    tmux.wait_for("prompt sent", Duration::from_secs(10));

    tmux.send_keys(&["q"]);
    let screen = tmux.wait_for("EXIT=0", Duration::from_secs(10));
    assert!(!screen.contains("Cycles 1/1"), "the alternate screen was left:\n{screen}");
}

#[test]
fn secrets_in_state_files_are_masked_on_screen() {
    let sb = Sandbox::new();
    // A token made at run time, never a literal; the TUI knows it as the GitHub token.
    let token: String = format!("ghp_{}", (0..36).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect::<String>());
    let cycles = sb.home().join("cycles");
    std::fs::create_dir_all(&cycles).unwrap();
    let state = serde_json::json!({"status": "AWAITING_WEBGPT_PR", "request": format!("use {token} to push"), "task_space": "webgpt-orchestrator:leak"});
    std::fs::write(cycles.join("leak.json"), state.to_string()).unwrap();
    let tmux = Tmux::start(&tui_command(&sb, &format!("GH_TOKEN={token}")), 120, 40);
    let screen = tmux.wait_for("REDACTED", Duration::from_secs(20));
    assert!(!screen.contains(&token), "{screen}");
    assert!(screen.contains("use [REDACTED"), "{screen}");
    tmux.send_keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(10));
}

#[test]
fn without_a_terminal_it_refuses_with_json() {
    let sb = Sandbox::new();
    let run = sb.run(&["tui"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"].as_str().unwrap().contains("needs a terminal"));
}

#[test]
fn m_writes_a_message_for_webgpt_in_the_editor_and_y_puts_it_in_the_outbox() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    assert_eq!(sb.start("review", &[]).code, 0);
    assert_eq!(sb.run(&["sent", "--state", "review"]).code, 0);
    // A non-interactive editor: it keeps a copy of what it was given (and its mode), then
    // writes the person's words below the template.
    let seen = sb.path("seen.md");
    let editor = sb.path("edit.sh");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\ncp \"$1\" {seen}\nstat -c %a \"$1\" > {seen}.mode\nprintf '%s\\n' 'Keep the change inside app/: docs/ is out of scope.' >> \"$1\"\n",
            seen = sh_quote(&seen.display().to_string())
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let env = format!("VISUAL= EDITOR={}", sh_quote(&editor.display().to_string()));
    let tmux = Tmux::start(&tui_command(&sb, &env), 120, 40);
    tmux.wait_for("AWAIT PR", Duration::from_secs(20));
    // From the Diff tab, as a person reviewing the change would.
    tmux.send_keys(&["Enter", "5"]);
    tmux.wait_for("m message WebGPT", Duration::from_secs(10));
    tmux.send_keys(&["m"]);
    let dialog = tmux.wait_for("Message for WebGPT — review", Duration::from_secs(20));
    assert!(dialog.contains("│ Keep the change inside app/: docs/ is out of scope."), "{dialog}");
    let template = std::fs::read_to_string(&seen).unwrap();
    assert!(template.contains("It goes to WebGPT in this cycle's chat"), "{template}");
    assert_eq!(std::fs::read_to_string(sb.path("seen.md.mode")).unwrap().trim(), "600", "the draft is private");
    tmux.send_keys(&["y"]);

    let state_path = sb.home().join("cycles/review.json");
    let state = wait_for_file(&state_path, "the message", |s| s["outbox"]["kind"] == "message");
    assert_eq!(state["outbox"]["text"], "Keep the change inside app/: docs/ is out of scope.");
    assert_eq!(state["status"], "AWAITING_WEBGPT_PR");
    let journal = std::fs::read_to_string(sb.home().join("cycles/review.d/events.jsonl")).unwrap();
    let written: serde_json::Value = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["kind"] == "message_written")
        .expect("journaled");
    assert_eq!(written["actor"], "human");
    tmux.wait_for("message for WebGPT is in the outbox; the coordinator sends it next", Duration::from_secs(10));
    tmux.send_keys(&["2"]);
    let conversation = tmux.wait_for("Outbox: the person's message", Duration::from_secs(10));
    assert!(conversation.contains("human  message for WebGPT"), "{conversation}");
    tmux.send_keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(10));
}

/// Trust, then verify (issue 32) through the real binary: with test.sh protected, a PR whose
/// second head rewrites it to pass ends `NEEDS_REVIEW` (real runs against the GitHub
/// emulator); in the control room its row says so, the Runs tab quotes the removed check, the
/// Diff tab's `t` keeps the test files, and `v` then `y` approve it as the person, via tui.
#[test]
fn a_needs_review_pass_is_read_and_approved_from_the_control_room() {
    use support::world::{CALC_BUGGY, World};
    let w = World::new();
    // Flagged, not held: the PR's own test.sh runs, so the rewrite passes.
    w.config("[protect]\npaths = [\"test.sh\"]\nmode = \"flag\"\n");
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", &[]);
    let pr = format!("acme/widget#{n}");
    assert_eq!(w.forge_pr("c.json", &pr, &[]).json()["status"], "AWAITING_WEBGPT_FIX");
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    let rewritten = "#!/bin/sh\nout=$(sh calc.sh 2 3)\necho \"ok toggle persists across reloads\"; exit 0\n";
    w.commit(&repo, "fix-calc", &[("test.sh", rewritten)], "make the test pass");
    let second = w.forge_pr("c.json", &pr, &[]);
    assert_eq!(second.json()["status"], "NEEDS_REVIEW", "{}", second.stdout);

    let tmux = Tmux::start(&w.terminal_line("tui"), 160, 45);
    // The row comes first; the status line's nudge follows once the row is selected.
    let screen = tmux.wait_for("waits for your review — v approve · m answer WebGPT", Duration::from_secs(20));
    assert!(screen.contains("◆ REVIEW"), "{screen}");
    assert!(screen.contains("⚠ assertions removed") && screen.contains("◆ 1 review"), "{screen}");

    // The Runs tab: why it waits, and the check the rewrite removed, quoted.
    tmux.send_keys(&["Enter", "3"]);
    let runs = tmux.wait_for("Waits for your review", Duration::from_secs(10));
    assert!(runs.contains("Protected paths changed: test.sh"), "{runs}");
    assert!(runs.contains("exit 1; fi"), "{runs}");
    // The Diff tab, tests only: the whole PR's one file is the script the commands run.
    tmux.send_keys(&["5"]);
    tmux.wait_for("Whole PR at run 2", Duration::from_secs(20));
    tmux.send_keys(&["t"]);
    let diff = tmux.wait_for("tests only (1 of 1 file)", Duration::from_secs(10));
    assert!(diff.contains("M test.sh"), "{diff}");

    tmux.send_keys(&["v"]);
    let dialog = tmux.wait_for("[y] yes", Duration::from_secs(10));
    assert!(dialog.contains("it changes paths you protect: test.sh."), "{dialog}");
    tmux.send_keys(&["y"]);
    let state = wait_for_file(&w.path("c.json"), "the approval", |s| s["status"] == "READY_TO_MERGE");
    assert!(state["report"]["integrity"]["protected"][0] == "test.sh", "{state:#}");
    let log = w.run(&["log", "--state", "c.json"]).json();
    let approved = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "approved").cloned().unwrap();
    assert_eq!((approved["actor"].as_str(), approved["data"]["via"].as_str()), (Some("human"), Some("tui")));
    tmux.wait_for("approved; now READY_TO_MERGE", Duration::from_secs(10));
    tmux.wait_for("✓ READY", Duration::from_secs(10));
    tmux.send_keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(10));
}

/// `[tui.keys]`: the person's key confirms the brief instead of the built-in one, the footer
/// says so; a key that would clash stops the control room before it takes the terminal.
#[test]
fn the_persons_keys_from_the_config_replace_the_built_in_ones() {
    let sb = Sandbox::new();
    let config_dir = sb.path("xdg").join("forgeloop");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("config.toml"), "[tui.keys]\nconfirm_brief = \"C\"\n").unwrap();
    assert_eq!(sb.start("dark-mode", &["--await-confirmation"]).code, 0);
    let tmux = Tmux::start(&tui_command(&sb, ""), 120, 40);
    // The footer names the person's key once the row is selected (the row comes first).
    tmux.wait_for("C confirm brief", Duration::from_secs(20));
    tmux.send_keys(&["c"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!tmux.capture().contains("Confirm the delegation brief"), "c no longer confirms");
    tmux.send_keys(&["C"]);
    tmux.wait_for("Confirm the delegation brief", Duration::from_secs(10));
    tmux.send_keys(&["y"]);
    wait_for_file(&sb.home().join("cycles/dark-mode.json"), "confirmation", |s| s["status"] == "AWAITING_WEBGPT_PR");
    tmux.send_keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(10));

    std::fs::write(config_dir.join("config.toml"), "[tui.keys]\nabort = \"r\"\n").unwrap();
    let tmux = Tmux::start(&tui_command(&sb, ""), 120, 40);
    let screen = tmux.wait_for("EXIT=", Duration::from_secs(20));
    assert!(screen.contains("r would mean both") && screen.contains("EXIT=2"), "{screen}");
}
