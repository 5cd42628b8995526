//! Test commands that fight back (SPEC §5.2 steps 4–5, §10), run through `forge --pr`:
//! * a command that leaves a background child in its group: the run returns, the child dies
//!   with the group;
//! * a daemon that left the group (`setsid`) and keeps the output pipe open: the run still
//!   returns (the daemon is outside forgeloop's reach; the test kills it itself);
//! * a command that ignores SIGTERM past its timeout: SIGKILLed after the grace period, the
//!   run is a failed, timed-out run;
//! * a command that prints gigabytes: forgeloop's memory stays bounded and the log is capped.
//!   FORGELOOP_HOSTILE_OUTPUT_MB sets the size (default 100, above the 64 MiB log cap;
//!   `.ci/run` runs 5,000 = 5 GB).
//!
//! The watchdogs below only turn a hang into a failure; nothing asserts how fast anything is.

mod support;

use std::fs;
use std::path::Path;
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

/// Whether `pid` is a live (non-zombie) process.
fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn read_pid(path: &Path) -> i32 {
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// Waits (bounded) for `pid` to be gone: a killed process may take a moment to be reaped.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn a_background_child_in_the_group_dies_with_it_and_the_run_returns() {
    let (w, pr, _) = setup();
    let pidf = w.path("bg.pid");
    let script = format!("sleep 300 & echo $! > '{}'; echo spawned a child; sh test.sh", pidf.display());
    let (code, out, _) = finish(spawn_forge(&w, &pr, &json!([["sh", "-c", script]])));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["report"]["status"], "TEST_PASSED");
    let pid = read_pid(&pidf);
    assert!(gone(pid), "the background child {pid} outlived the run");
}

#[test]
fn a_daemon_that_left_the_group_cannot_hang_the_run() {
    let (w, pr, _) = setup();
    let pidf = w.path("daemon.pid");
    // The daemon keeps the inherited output pipe open and lives in its own session.
    let script = format!(
        "setsid sh -c 'echo $$ > \"{}\"; exec sleep 300' & sleep 0.2; echo daemon started; sh test.sh",
        pidf.display()
    );
    let (code, out, _) = finish(spawn_forge(&w, &pr, &json!([["sh", "-c", script]])));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["report"]["status"], "TEST_PASSED");
    assert_eq!(out["iteration"], 1);
    let pid = read_pid(&pidf);
    eprintln!("the setsid daemon {pid} is {} after the run", if alive(pid) { "still alive" } else { "gone" });
    // It is outside forgeloop's process group; the test cleans up the process it caused.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

#[test]
fn a_command_ignoring_sigterm_is_sigkilled_after_its_timeout() {
    let (w, pr, _) = setup();
    let pidf = w.path("stubborn.pid");
    let script = format!("trap '' TERM; echo $$ > '{}'; echo stubborn; while :; do sleep 1; done", pidf.display());
    let commands = json!({"commands": [{"argv": ["sh", "-c", script], "timeout_s": 1}, ["sh", "test.sh"]]});
    let (code, out, _) = finish(spawn_forge(&w, &pr, &commands));
    assert_eq!(code, 0, "{out}");
    let report = &out["report"];
    assert_eq!(report["status"], "TEST_FAILED");
    assert_eq!(report["timed_out"], true);
    assert_eq!(report["commands"][0]["timed_out"], true);
    assert_eq!(report["commands"][1]["not_run"], true);
    assert_eq!(out["status"], "AWAITING_WEBGPT_FIX");
    let pid = read_pid(&pidf);
    assert!(gone(pid), "the SIGTERM-ignoring command {pid} survived");
}

#[test]
fn gigabytes_of_output_keep_memory_bounded_and_the_log_capped() {
    let mb: u64 = std::env::var("FORGELOOP_HOSTILE_OUTPUT_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
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
    if bytes > DEFAULT_LOG_CAP {
        assert!(String::from_utf8_lossy(&log).contains("[... forgeloop cut "), "the cut is marked");
    }
    // Bounded: far below the output size, and the same bound for 100 MB as for 5 GB.
    assert!(peak_kib > 0, "the child's memory was never sampled");
    assert!(peak_kib < 96 * 1024, "forgeloop's peak RSS was {peak_kib} KiB");
}
