//! Test commands that fight back (design §5.2 steps 4–5, §10), run through `forge --pr`:
//! * a command that leaves a background child in its group: the run returns, the child dies
//!   with the group;
//! * a daemon that left the group (`setsid`) and keeps the output pipe open: the run still
//!   returns, and the sandbox (design §5.6) takes the daemon down with the run;
//! * a command that ignores SIGTERM past its timeout: SIGKILLed after the grace period, the
//!   run is a failed, timed-out run;
//! * a command that prints gigabytes: forgeloop's memory stays bounded and the log is capped.
//!   FORGELOOP_HOSTILE_OUTPUT_MB sets the size (default 100, above the 64 MiB log cap;
//!   `.ci/run` runs 5,000 = 5 GB; a size that does not exceed the cap is refused).
//!
//! The watchdogs below only turn a hang into a failure; nothing asserts how fast anything is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use forgeloop::runner::DEFAULT_LOG_CAP;
use serde_json::{Value, json};
use support::world::{CALC_FIXED, World};

const HANG: Duration = Duration::from_secs(300);

fn setup() -> (World, String, String) {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    (w, format!("acme/widget#{n}"), head)
}

fn spawn_forge(w: &World, pr: &str, commands: &Value) -> Child {
    fs::write(w.path("hostile.json"), commands.to_string()).unwrap();
    w.command(&["forge", "--pr", pr, "--state", "c.json", "--commands-json", "hostile.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Peak resident memory of a running process, from /proc.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for the child (failing after HANG), sampling its peak RSS; returns (exit code,
/// stdout JSON, highest VmHWM seen in KiB).
fn finish(mut child: Child) -> (i32, Value, u64) {
    let deadline = Instant::now() + HANG;
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = peak.max(kib);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("forge --pr did not return within {HANG:?}");
        }
        sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    (status.code().unwrap_or(-1), json, peak)
}

/// A name for this test's processes: a sandboxed run's pids mean nothing outside it, so the
/// processes are found by their command line.
fn tag(what: &str) -> String {
    format!("{what}-{}", support::world::fresh_secret("").to_lowercase())
}

#[test]
fn a_background_child_in_the_group_dies_with_it_and_the_run_returns() {
    let (w, pr, _) = setup();
    let tag = tag("bg");
    let script = format!("sh -c 'sleep 300; :' {tag} & echo spawned a child; sh test.sh");
    let (code, out, _) = finish(spawn_forge(&w, &pr, &json!([["sh", "-c", script]])));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["report"]["status"], "TEST_PASSED");
    let left = support::wait_until_gone(&tag, Duration::from_secs(30));
    assert!(left.is_empty(), "the background child {left:?} outlived the run");
}

#[test]
fn a_daemon_that_left_the_group_cannot_hang_the_run_or_outlive_it() {
    let (w, pr, head) = setup();
    let tag = tag("daemon");
    // The daemon keeps the inherited output pipe open and lives in its own session; it says
    // it is alive (so "gone" below is not vacuous: it did run), the sandbox's PID namespace
    // (or the helper as subreaper) must take it down when the run ends.
    let script = format!(
        "setsid sh -c 'echo daemon alive in its own session; sleep 300; :' {tag} & sleep 0.5; echo daemon started; sh test.sh"
    );
    let (code, out, _) = finish(spawn_forge(&w, &pr, &json!([["sh", "-c", script]])));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["report"]["status"], "TEST_PASSED");
    assert_eq!(out["iteration"], 1);
    let log = fs::read_to_string(w.path(&format!("c.d/runs/1-{}.log", &head[..12]))).unwrap();
    assert!(log.contains("daemon alive in its own session"), "the daemon never ran:\n{log}");
    let left = support::wait_until_gone(&tag, Duration::from_secs(30));
    for pid in &left {
        // SAFETY: kill with integer arguments; cleans up what the test caused.
        unsafe {
            libc::kill(*pid, libc::SIGKILL);
        }
    }
    assert!(left.is_empty(), "the setsid daemon {left:?} outlived the run");
}

#[test]
fn a_command_ignoring_sigterm_is_sigkilled_after_its_timeout() {
    let (w, pr, _) = setup();
    let tag = tag("stubborn");
    let script = "trap '' TERM; echo stubborn; while :; do sleep 1; done";
    let commands = json!({"commands": [{"argv": ["sh", "-c", script, &tag], "timeout_s": 1}, ["sh", "test.sh"]]});
    let (code, out, _) = finish(spawn_forge(&w, &pr, &commands));
    assert_eq!(code, 0, "{out}");
    let report = &out["report"];
    assert_eq!(report["status"], "TEST_FAILED");
    assert_eq!(report["timed_out"], true);
    assert_eq!(report["commands"][0]["timed_out"], true);
    assert_eq!(report["commands"][1]["not_run"], true);
    assert_eq!(out["status"], "AWAITING_WEBGPT_FIX");
    let left = support::wait_until_gone(&tag, Duration::from_secs(30));
    assert!(left.is_empty(), "the SIGTERM-ignoring command {left:?} survived");
}

#[test]
fn gigabytes_of_output_keep_memory_bounded_and_the_log_capped() {
    // Less than the log cap would test neither the cap nor the cut.
    let floor = DEFAULT_LOG_CAP / 1_000_000 + 1;
    let mb =
        support::knob::knob("FORGELOOP_HOSTILE_OUTPUT_MB", 100, floor, "the output must exceed the 64 MiB log cap");
    let bytes = mb * 1_000_000;
    let (w, pr, head) = setup();
    let script = format!(
        "echo FIRST; yes 'hostile output line 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ' | head -c {bytes}; echo LAST"
    );
    let started = Instant::now();
    let (code, out, peak_kib) = finish(spawn_forge(&w, &pr, &json!([["sh", "-c", script]])));
    let took = started.elapsed();
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["report"]["status"], "TEST_PASSED");
    let log_path = w.path(&format!("c.d/runs/1-{}.log", &head[..12]));
    let log_len = fs::metadata(&log_path).unwrap().len();
    eprintln!(
        "{mb} MB of output through forge --pr in {took:.1?} ({:.0} MB/s): log {} MiB, forgeloop peak RSS {} MiB",
        mb as f64 / took.as_secs_f64(),
        log_len >> 20,
        peak_kib >> 10
    );
    assert!(log_len <= DEFAULT_LOG_CAP, "the log is {log_len} bytes");
    let log = fs::read(&log_path).unwrap();
    let head_text = String::from_utf8_lossy(&log[..4096]);
    let tail_text = String::from_utf8_lossy(&log[log.len() - 4096..]);
    assert!(head_text.contains("FIRST") && tail_text.contains("LAST"), "head and tail are kept");
    assert!(bytes > DEFAULT_LOG_CAP);
    assert!(String::from_utf8_lossy(&log).contains("[... forgeloop cut "), "the cut is marked");
    // Bounded: far below the output size, and the same bound for 100 MB as for 5 GB.
    assert!(peak_kib > 0, "the child's memory was never sampled");
    assert!(peak_kib < 96 * 1024, "forgeloop's peak RSS was {peak_kib} KiB");
}

#[test]
fn an_output_size_below_the_log_cap_is_refused() {
    for value in ["0", "1", "67"] {
        let (passed, out) = support::knob::run_self_with(
            "gigabytes_of_output_keep_memory_bounded_and_the_log_capped",
            "FORGELOOP_HOSTILE_OUTPUT_MB",
            value,
        );
        assert!(
            !passed && out.contains("FORGELOOP_HOSTILE_OUTPUT_MB"),
            "FORGELOOP_HOSTILE_OUTPUT_MB={value} passed:\n{out}"
        );
    }
}
