//! A process killed at any moment leaves the old file or the new file, never a torn one
//! (design §10 reliability). Children are SIGKILLed at pseudo-random moments in a loop.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

use forgeloop::domain::state::CycleState;
use forgeloop::store::{atomic, journal};
use support::{BRIEF, QUESTION, Sandbox};

const TARGET_ENV: &str = "FORGELOOP_TEST_CRASH_TARGET";

/// Small deterministic generator for kill delays (a crate would be overkill).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

fn state_json(generation: u64) -> String {
    let request = format!("{}-generation-{generation}", "x".repeat(300_000));
    let text = format!(r#"{{"status":"AWAITING_WEBGPT_PR","request":"{request}","iteration":{generation}}}"#);
    CycleState::from_bytes(text.as_bytes()).unwrap().to_json()
}

/// Not a test on its own: the child process body, run by `killed_writers_never_leave_a_torn_state`.
#[test]
#[ignore]
fn child_rewrites_a_state_forever() {
    let Some(target) = std::env::var_os(TARGET_ENV) else { return };
    let target = Path::new(&target);
    for generation in 1.. {
        atomic::write_atomic(target, state_json(generation).as_bytes()).unwrap();
    }
}

#[test]
fn killed_writers_never_leave_a_torn_state() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("state.json");
    atomic::write_atomic(&target, state_json(0).as_bytes()).unwrap();
    let mut rng = Lcg(0x5eed);
    let mut generations_seen = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_rewrites_a_state_forever", "--ignored", "--test-threads", "1"])
            .env(TARGET_ENV, &target)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        sleep(Duration::from_millis(20 + rng.next(120)));
        child.kill().unwrap();
        child.wait().unwrap();
        let bytes = fs::read(&target).unwrap();
        let state = CycleState::from_bytes(&bytes).unwrap_or_else(|e| panic!("torn state after kill: {e}"));
        let generation = u64::from(state.iteration);
        assert!(state.request.ends_with(&format!("-generation-{generation}")), "mixed generations in one file");
        generations_seen.insert(generation);
    }
    assert!(generations_seen.len() > 1, "the children never managed to write; the test proves nothing");
    atomic::remove_stale_temps(dir.path());
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["state.json"], "stray temp files are cleaned up");
}

/// Half the kills land at a random moment after the start, half just after the state file
/// appeared (so inside the window between the state write and the journal append); a kill
/// counts as landing after the state only if the state existed before it and the process
/// died of it (it was still running). Some must, or the test proves only "no state yet".
#[test]
fn killed_request_mode_leaves_no_state_or_a_complete_one() {
    use std::os::unix::process::ExitStatusExt;
    let sb = Sandbox::new();
    let request = "r".repeat(100_000);
    let mut rng = Lcg(42);
    let (mut landed, mut landed_after_state) = (0, 0);
    for i in 0..20 {
        let name = format!("c{i}.json");
        let path = sb.path(&name);
        let mut child = sb
            .command(&[
                "forge",
                "--request",
                &request,
                "--intent-brief",
                BRIEF,
                "--webgpt-question",
                QUESTION,
                "--state",
                &name,
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        if i % 2 == 0 {
            sleep(Duration::from_millis(rng.next(40)));
        } else {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !path.exists() && std::time::Instant::now() < deadline {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                sleep(Duration::from_micros(100));
            }
        }
        let state_before_kill = path.exists();
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.signal() == Some(libc::SIGKILL) {
            landed += 1;
            if state_before_kill {
                landed_after_state += 1;
            }
        }
        if path.exists() {
            let state = CycleState::from_bytes(&fs::read(&path).unwrap()).expect("a created state is complete");
            assert_eq!(state.request.len(), request.len());
            // The journal may lag the state after a kill, but is never damaged.
            journal::verify(&sb.path(&format!("c{i}.d/events.jsonl"))).unwrap();
        }
        // Whatever happened, a second attempt either creates it or refuses to overwrite it.
        let again = sb.run(&[
            "forge",
            "--request",
            "again",
            "--intent-brief",
            BRIEF,
            "--webgpt-question",
            QUESTION,
            "--state",
            &name,
        ]);
        assert!(again.code == 0 || again.json()["status"] == "STATE_EXISTS", "{}", again.stdout);
        assert!(CycleState::from_bytes(&fs::read(&path).unwrap()).is_ok());
    }
    eprintln!("{landed} of 20 kills landed while forge --request ran, {landed_after_state} after its state existed");
    assert!(landed >= 5, "too few kills landed while the process ran: {landed}/20");
    assert!(landed_after_state >= 2, "too few kills landed after the state file existed: {landed_after_state}");
}
