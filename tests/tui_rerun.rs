//! The control room's rerun runs the real test path (fetch, checkout, processes, comment)
//! against the GitHub emulator, counts as an iteration, and is journaled as the human's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::time::{Duration, Instant};

use support::tmux::{Tmux, sh_quote};
use support::world::{CALC_BUGGY, CALC_FIXED, World};

#[test]
fn a_rerun_from_the_control_room_tests_the_current_head() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("fix", &[]);
    let first = w.forge_pr("fix", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(first.json()["status"], "AWAITING_WEBGPT_FIX");
    // WebGPT pushed a fix; a person reruns from the control room instead of waiting.
    w.commit(&repo, "fix", &[("calc.sh", CALC_FIXED)], "fix");

    let command = format!(
        "cd {} && FORGELOOP_HOME={} FORGELOOP_REGISTRY={} XDG_CONFIG_HOME={} FORGELOOP_GITHUB_API={} GH_TOKEN={} {} tui; echo EXIT=$?; sleep 30",
        sh_quote(&w.sb.dir.path().display().to_string()),
        sh_quote(&w.sb.home().display().to_string()),
        sh_quote(&w.path("registry").display().to_string()),
        sh_quote(&w.path("xdg").display().to_string()),
        sh_quote(&w.emu.api_base()),
        sh_quote(&w.token),
        sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
    );
    let tmux = Tmux::start(&command, 120, 40);
    tmux.wait_for("fix", Duration::from_secs(20));
    tmux.send_keys(&["r"]);
    tmux.wait_for("Rerun the tests?", Duration::from_secs(10));
    tmux.send_keys(&["y"]);

    let path = w.sb.home().join("cycles/fix.json");
    let start = Instant::now();
    let state = loop {
        let state = w.sb.read_json(&path);
        if state["status"] == "READY_TO_MERGE" {
            break state;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the rerun did not finish:\n{}", tmux.capture());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(state["iteration"], 2);
    assert_eq!(state["history"][1]["actor"], "human");
    // The verdict is saved before its comment is posted: wait for the comment, not a moment.
    while w.comments(&repo, n).len() < 2 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(w.comments(&repo, n).len(), 2, "the rerun publishes its own comment");
    tmux.wait_for("rerun finished", Duration::from_secs(10));
    tmux.send_keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(10));
}
