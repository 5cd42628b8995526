//! Stopping commands with real processes: timeouts, SIGTERM-proof groups, leftover background
//! processes, a pipe held open by an escaped daemon, and cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod runner_support;

use std::time::Duration;

use forgeloop::domain::report::TestStatus;
use forgeloop::runner::run;
use runner_support::{Fixture, HANG_GUARD, cleanup, pid_after, process_running, profile};

#[tokio::test]
async fn a_timeout_kills_the_whole_group() {
    let fx = Fixture::new();
    let commands =
        profile(r#"{"commands": [["sh", "-c", "sleep 30 & echo bg=$!; sleep 30"], ["true"]], "timeout_s": 1}"#);
    let outcome = fx.run(&commands).await;
    assert_eq!(outcome.status, TestStatus::Failed);
    assert!(outcome.timed_out);
    let first = &outcome.commands[0];
    assert!(first.timed_out);
    assert_eq!(first.exit_code, None);
    // The shell honoured SIGTERM.
    assert_eq!(first.signal, Some(15));
    assert!(outcome.commands[1].not_run);
    let log = fx.log();
    assert!(log.contains("bg="), "{log}");
    assert!(log.contains("[timed out after 1s: process group killed]\n"), "{log}");
    let background = pid_after(&log, "bg=");
    assert!(!process_running(background), "background sleep {background} survived the timeout");
}

#[tokio::test]
async fn a_group_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let fx = Fixture::new();
    // The ignored disposition is inherited by `sleep`, so the whole group ignores SIGTERM.
    let commands = profile(r#"{"commands": [["sh", "-c", "trap '' TERM; echo pid=$$; sleep 30"]], "timeout_s": 1}"#);
    let outcome = fx.run(&commands).await;
    assert!(outcome.timed_out);
    assert_eq!(outcome.commands[0].signal, Some(9));
    let log = fx.log();
    assert!(log.contains("[timed out after 1s: process group killed]"), "{log}");
    assert!(!process_running(pid_after(&log, "pid=")));
}

#[tokio::test]
async fn a_background_child_does_not_outlive_or_hang_the_run() {
    let fx = Fixture::new();
    // The background sleep keeps the output pipe open; the run must not wait for it.
    let outcome = fx.run(&profile(r#"[["sh", "-c", "sleep 300 & echo bg=$!; echo started"], ["true"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    assert_eq!(outcome.commands[0].exit_code, Some(0));
    let log = fx.log();
    assert!(log.contains("started\n[exit 0 after "), "{log}");
    let background = pid_after(&log, "bg=");
    assert!(!process_running(background), "background sleep {background} was left running");
}

#[tokio::test]
async fn a_background_child_that_ignores_sigterm_is_killed_too() {
    let fx = Fixture::new();
    let commands = profile(r#"[["sh", "-c", "(trap '' TERM; exec sleep 300) & echo bg=$!"]]"#);
    let outcome = fx.run(&commands).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(!process_running(pid_after(&fx.log(), "bg=")));
}

#[tokio::test]
async fn a_daemon_that_left_the_group_cannot_hang_the_run() {
    let fx = Fixture::new();
    // `setsid` puts the sleep in a new session, out of reach of the group kill, but it still
    // holds the output pipe: the runner stops reading after a short drain.
    let commands = profile(r#"[["sh", "-c", "setsid sleep 300 & echo bg=$!; echo done"]]"#);
    let outcome = fx.run(&commands).await;
    let log = fx.log();
    let escaped = pid_after(&log, "bg=");
    cleanup(escaped);
    assert_eq!(outcome.status, TestStatus::Passed, "{log}");
    assert!(log.contains("done\n[exit 0 after "), "{log}");
}

#[tokio::test]
async fn cancellation_kills_the_running_group_and_returns() {
    let fx = Fixture::new();
    let commands = profile(r#"[["sh", "-c", "sleep 300 & echo bg=$!; echo started; wait"], ["true"]]"#);
    let (cancel, cancel_rx) = tokio::sync::watch::channel(false);
    let mut req = fx.request(&commands);
    req.cancel = Some(cancel_rx);
    let running = run(req);
    let follow = async {
        // Follow the log like the TUI would; the output is there while the command runs.
        loop {
            if std::fs::read_to_string(&fx.log_path).is_ok_and(|log| log.contains("started\n")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.send(true).unwrap();
    };
    let (outcome, ()) = tokio::time::timeout(HANG_GUARD, async { tokio::join!(running, follow) }).await.unwrap();
    let outcome = outcome.unwrap();
    assert!(outcome.cancelled);
    assert!(!outcome.timed_out);
    assert_eq!(outcome.status, TestStatus::Failed);
    assert_eq!(outcome.commands[0].signal, Some(15));
    assert!(outcome.commands[1].not_run);
    let log = fx.log();
    assert!(log.contains("[cancelled after "), "{log}");
    assert!(!process_running(pid_after(&log, "bg=")));
}

#[tokio::test]
async fn a_run_cancelled_before_it_starts_runs_nothing() {
    let fx = Fixture::new();
    let commands = profile(r#"[["sh", "-c", "echo should-not-run"], ["true"]]"#);
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(true);
    let mut req = fx.request(&commands);
    req.cancel = Some(cancel_rx);
    let outcome = run(req).await.unwrap();
    assert!(outcome.cancelled);
    assert!(outcome.commands.iter().all(|c| c.not_run));
    assert!(!fx.log().contains("should-not-run\n"));
}

#[tokio::test]
async fn a_dropped_cancel_sender_does_not_cancel() {
    let fx = Fixture::new();
    let commands = profile(r#"[["sh", "-c", "sleep 0.2; echo finished"]]"#);
    let (cancel, cancel_rx) = tokio::sync::watch::channel(false);
    drop(cancel);
    let mut req = fx.request(&commands);
    req.cancel = Some(cancel_rx);
    let outcome = run(req).await.unwrap();
    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(!outcome.cancelled);
}

#[tokio::test]
async fn dropping_the_run_kills_the_group() {
    let fx = Fixture::new();
    let commands = profile(r#"[["sh", "-c", "echo pid=$$; sleep 300"]]"#);
    let running = run(fx.request(&commands));
    // Abandon the run once the command is up, as a caller's own timeout would.
    let waited = tokio::time::timeout(Duration::from_secs(3), running).await;
    assert!(waited.is_err(), "the command cannot finish on its own");
    let pid = pid_after(&fx.log(), "pid=");
    // SIGKILL is delivered asynchronously; give the kernel a moment (bounded, not a timing
    // assertion: the loop just waits for the state to change).
    for _ in 0..200 {
        if !process_running(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the command's shell {pid} survived the dropped run");
}
