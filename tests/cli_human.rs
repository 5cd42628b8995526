//! Human-only actions on a real terminal (tmux), and `wait` unblocking when a person acts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::process::Stdio;
use std::time::Duration;

use forgeloop::cycle::{Ctx, actions};
use forgeloop::domain::state::Actor;
use support::Sandbox;
use support::tmux::{Tmux, sh_quote};

fn terminal_command(sb: &Sandbox, args: &str) -> String {
    format!(
        "cd {} && FORGELOOP_HOME={} FORGELOOP_REGISTRY={} XDG_CONFIG_HOME={} {} {args} > out.json; echo EXIT=$?; sleep 30",
        sh_quote(&sb.dir.path().display().to_string()),
        sh_quote(&sb.home().display().to_string()),
        sh_quote(&sb.path("registry").display().to_string()),
        sh_quote(&sb.path("xdg").display().to_string()),
        sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
    )
}

#[test]
fn a_person_confirms_a_brief_on_a_terminal() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--await-confirmation"]).code, 0);
    let tmux = Tmux::start(&terminal_command(&sb, "confirm --state c.json"), 120, 40);
    let screen = tmux.wait_for("[y/N]", Duration::from_secs(20));
    assert!(screen.contains("Goal: add dark mode."), "{screen}");
    tmux.send_keys(&["y", "Enter"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(20));
    let state = sb.read_json(&sb.path("c.json"));
    assert_eq!(state["status"], "AWAITING_WEBGPT_PR");
    assert_eq!(state["brief_confirmation"]["by"], "human");
    assert_eq!(state["brief_confirmation"]["via"], "terminal");
    assert!(state["webgpt_prompt"].as_str().unwrap().contains("## Confirmed user intent"));
}

#[test]
fn declining_on_the_terminal_changes_nothing() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--await-confirmation"]).code, 0);
    let before = std::fs::read(sb.path("c.json")).unwrap();
    let tmux = Tmux::start(&terminal_command(&sb, "confirm --state c.json"), 120, 40);
    tmux.wait_for("[y/N]", Duration::from_secs(20));
    tmux.send_keys(&["n", "Enter"]);
    tmux.wait_for("EXIT=2", Duration::from_secs(20));
    assert_eq!(std::fs::read(sb.path("c.json")).unwrap(), before);
    let out: serde_json::Value = serde_json::from_slice(&std::fs::read(sb.path("out.json")).unwrap()).unwrap();
    assert_eq!(out["status"], "DECLINED");
}

#[test]
fn extend_on_a_terminal_raises_the_cap() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--max-iterations", "1"]).code, 0);
    let tmux = Tmux::start(&terminal_command(&sb, "extend --state c.json --by 2"), 120, 40);
    tmux.wait_for("Allow 2 more?", Duration::from_secs(20));
    tmux.send_keys(&["yes", "Enter"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(20));
    assert_eq!(sb.read_json(&sb.path("c.json"))["max_iterations"], 3);
}

#[test]
fn wait_returns_when_a_person_confirms() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--await-confirmation"]).code, 0);
    let waiter = sb
        .command(&["wait", "--state", "c.json", "--until", "AWAITING_WEBGPT_PR", "--timeout", "60"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let ctx = Ctx::for_home(sb.home());
    let paths = ctx.cycle(&sb.path("c.json").display().to_string()).unwrap();
    actions::confirm(&ctx, &paths, None, "tui", Actor::Human).unwrap();
    let output = waiter.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let state: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(state["status"], "AWAITING_WEBGPT_PR");
}

#[test]
fn wait_without_a_change_times_out() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--await-confirmation"]).code, 0);
    let run = sb.run(&["wait", "--state", "c.json", "--timeout", "1"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["status"], "TIMEOUT");
}

/// The person confirmed between the agent's `next` (which said wait_for_human) and its `wait`:
/// nothing is left to wait for, and `wait` says so at once instead of waiting for a change
/// that only the agent itself would make.
#[test]
fn wait_returns_at_once_when_the_person_acted_before_it_started() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &["--await-confirmation"]).code, 0);
    let next = sb.run(&["next", "--state", "c.json"]);
    assert_eq!(next.json()["action"], "wait_for_human");
    let ctx = Ctx::for_home(sb.home());
    let paths = ctx.cycle(&sb.path("c.json").display().to_string()).unwrap();
    actions::confirm(&ctx, &paths, None, "tui", Actor::Human).unwrap();
    let run = sb.run(&["wait", "--state", "c.json", "--timeout", "20"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "AWAITING_WEBGPT_PR");
    // A cycle that waits for no one at all: the same, at once.
    assert_eq!(sb.start("d.json", &[]).code, 0);
    let run = sb.run(&["wait", "--state", "d.json", "--timeout", "20"]);
    assert_eq!((run.code, run.json()["status"].as_str()), (0, Some("AWAITING_WEBGPT_PR")));
}
