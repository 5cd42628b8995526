//! Acceptance of design §6.6 in a real terminal: an agent's `forge --pr` is testing a PR with a
//! 60-second test; the person, in the control room, sees it as `▶ TESTING` and stops it with
//! `x`. The run is journaled as cancelled by a human, the iteration count does not move, the
//! test's process group is gone, and the agent's command exits with `RUN_CANCELLED`. Then the
//! cycle starts needing the person, and the terminal gets a bell and a desktop notification.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::tmux::{Tmux, sh_quote};
use support::wait_until_gone;
use support::world::{CALC_FIXED, World};

fn tui_command(w: &World) -> String {
    format!(
        "cd {} && FORGELOOP_HOME={} FORGELOOP_REGISTRY={} XDG_CONFIG_HOME={} {} tui; echo EXIT=$?; sleep 30",
        sh_quote(&w.sb.dir.path().display().to_string()),
        sh_quote(&w.sb.home().display().to_string()),
        sh_quote(&w.sb.path("registry").display().to_string()),
        sh_quote(&w.sb.path("xdg-config").display().to_string()),
        sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
    )
}

#[test]
fn a_person_stops_an_agents_run_from_the_control_room() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    w.cycle("live", &[]);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let marker = format!("t60-{}", nanos % 1_000_000);
    std::fs::write(w.path("commands.json"), format!(r#"[["sh", "-c", "sleep 60; echo {marker}"]]"#)).unwrap();

    let tmux = Tmux::start(&tui_command(&w), 160, 36);
    tmux.wait_for("AWAIT PR", Duration::from_secs(20));
    let agent = w
        .command(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "live", "--commands-json", "commands.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let screen = tmux.wait_for("▶ TESTING", Duration::from_secs(60));
    let screen = if screen.contains("$ sh -c") { screen } else { tmux.wait_for("$ sh -c", Duration::from_secs(10)) };
    assert!(screen.contains(&format!("echo {marker}")), "the row shows the command being run:\n{screen}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while support::processes_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the test never started");
        std::thread::sleep(Duration::from_millis(20));
    }

    // The Log tab follows the agent's live log.
    tmux.send_keys(&["4"]);
    let log = tmux.wait_for("[follow]", Duration::from_secs(10));
    assert!(log.contains(&format!("$ sh -c 'sleep 60; echo {marker}'")), "{log}");

    tmux.send_keys(&["x"]);
    let dialog = tmux.wait_for("Cancel the run?", Duration::from_secs(10));
    assert!(dialog.contains(&format!("forgeloop pid {}", agent.id())), "{dialog}");
    tmux.send_keys(&["y"]);
    let confirmed = Instant::now();
    let out = agent.wait_with_output().unwrap();
    let stopped_after = confirmed.elapsed();
    eprintln!("the agent's forge --pr exited {stopped_after:?} after the person confirmed");

    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(2), "{doc}");
    assert_eq!(doc["status"], "RUN_CANCELLED", "{doc}");
    assert_eq!(doc["cancelled_by"], "human");
    assert!(wait_until_gone(&marker, Duration::from_secs(5)).is_empty(), "the test's process group is gone");
    let state: Value = serde_json::from_slice(&std::fs::read(w.sb.home().join("cycles/live.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 0, "a cancelled run is not an iteration");
    let journal = std::fs::read_to_string(w.sb.home().join("cycles/live.d/events.jsonl")).unwrap();
    let cancelled: Value = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .rfind(|e| e["kind"] == "run_cancelled")
        .unwrap();
    assert_eq!(cancelled["actor"], "human", "{cancelled}");
    // The footer's message and the list's row redraw apart: both must come.
    tmux.wait_until("\"run cancelled\" without \"▶ TESTING\"", Duration::from_secs(10), |screen| {
        screen.contains("run cancelled") && !screen.contains("▶ TESTING")
    });

    // The cycle starts needing the person: one bell and one desktop notification.
    let output = w.path("terminal-output");
    tmux.record_output(&output);
    let blocked = w.run(&["block", "--state", "live", "--status", "BLOCKED_MODEL_UNAVAILABLE", "--reason", "no model"]);
    assert_eq!(blocked.code, 0, "{}", blocked.stdout);
    tmux.wait_for("NO MODEL", Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(10);
    let bytes = loop {
        let bytes = String::from_utf8_lossy(&std::fs::read(&output).unwrap_or_default()).into_owned();
        if bytes.contains("\x1b]777;") || Instant::now() > deadline {
            break bytes;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(bytes.contains('\x07'), "a bell");
    assert_eq!(bytes.matches("\x1b]9;forgeloop: live needs you: BLOCKED_MODEL_UNAVAILABLE").count(), 1, "{bytes:?}");
    assert_eq!(bytes.matches("\x1b]777;notify;forgeloop;live needs you").count(), 1, "{bytes:?}");
    tmux.send_keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(10));
}
