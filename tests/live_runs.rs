//! Live runs (design §6.6): a run another process holds is visible to everyone, and a person
//! or an explicit `abort` stops it — the holder kills the test's process group, journals who
//! stopped it (not an iteration), releases the cycle and exits with `RUN_CANCELLED`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use forgeloop::cycle::{live, stop};
use forgeloop::domain::state::Actor;
use forgeloop::store::layout::CyclePaths;
use forgeloop::store::state_file;
use serde_json::Value;
use support::world::{CALC_FIXED, World};
use support::{processes_with, wait_until_gone};

/// A test that runs until stopped, findable by a marker unique to this test.
fn long_commands(w: &World, marker: &str) {
    let commands = format!(r#"[["sh", "-c", "sleep 600; echo {marker}"]]"#);
    std::fs::write(w.path("commands.json"), commands).unwrap();
}

fn marker(name: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{name}-{nanos}")
}

/// The agent's `forge --pr`, as its own process.
fn spawn_forge(w: &World, state: &str, pr: &str) -> Child {
    w.command(&["forge", "--pr", pr, "--state", state, "--commands-json", "commands.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn paths(w: &World, state: &str) -> CyclePaths {
    CyclePaths::new(w.path(state)).unwrap()
}

/// Waits until another process's run of the cycle is live and its command started.
fn wait_live(w: &World, state: &str, child: &mut Child) -> live::LiveRun {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let paths = paths(w, state);
        if let Ok(loaded) = state_file::load(&paths.state)
            && let Some(run) = live::probe(&paths, &loaded)
            && run.command.is_some()
        {
            return run;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            if let Some(stdout) = child.stdout.as_mut() {
                std::io::Read::read_to_string(stdout, &mut out).unwrap();
            }
            panic!("forge exited ({status}) before its run was live:\n{out}");
        }
        assert!(Instant::now() < deadline, "the run never showed as live");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finish(child: Child) -> (i32, Value) {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), doc)
}

fn events(w: &World, state: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(paths(w, state).journal()).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A world where an agent's `forge --pr` (its own process) is testing cycle `c.json` with a
/// test that runs until stopped; returns the world, that process, its marker and the PR number.
fn agent_testing(name: &str) -> (World, Child, String, u64) {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    w.cycle("c.json", &[]);
    let mark = marker(name);
    long_commands(&w, &mark);
    let mut child = spawn_forge(&w, "c.json", &format!("acme/widget#{n}"));
    wait_live(&w, "c.json", &mut child);
    // The log header is written just before the sandbox starts the command; wait for the
    // command itself (a kill inside the spawn would leave the lock with the forked child).
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_with(&mark).is_empty() {
        assert!(Instant::now() < deadline, "the test never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    (w, child, mark, n)
}

#[test]
fn an_agents_run_is_live_to_every_process_with_its_command_and_log() {
    let (w, child, mark, n) = agent_testing("visible");
    let state = state_file::load(&w.path("c.json")).unwrap();
    let run = live::probe(&paths(&w, "c.json"), &state).unwrap();
    assert_eq!(run.info.pid, child.id(), "the live run is the agent's process");
    assert_eq!(run.info.iteration, 1);
    assert_eq!(run.command.as_deref(), Some(format!("sh -c 'sleep 600; echo {mark}'").as_str()));
    assert!(run.log.starts_with(w.path("c.d/runs")) && run.log.exists(), "{}", run.log.display());
    // `list` says so too, for agents.
    let listed = w.run(&["list"]).json();
    let row =
        listed.as_array().unwrap().iter().find(|r| r["task_space"].as_str().unwrap_or("").ends_with("c")).unwrap();
    assert_eq!(row["testing"]["pid"], child.id(), "{row}");
    assert_eq!(row["testing"]["iteration"], 1);
    assert!(row["testing"]["command"].as_str().unwrap().contains(&mark), "{row}");
    // Stopping it from here: the same use case the control room's `x` calls.
    let ctx = w.ctx();
    let stopped = stop::cancel(&ctx, &paths(&w, "c.json"), Actor::Human, "looked stuck").unwrap();
    assert_eq!(stopped.holder, Some(child.id()));
    let (code, doc) = finish(child);
    assert_eq!(code, 2, "{doc}");
    assert_eq!(doc["status"], "RUN_CANCELLED", "{doc}");
    assert_eq!(doc["cancelled_by"], "human");
    assert_eq!(doc["cycle_status"], "AWAITING_WEBGPT_PR");
    assert!(wait_until_gone(&mark, Duration::from_secs(5)).is_empty(), "the test's process group is gone");
    // Nothing stale is left: no live run, the iteration was not counted, the journal says who.
    let state = state_file::load(&w.path("c.json")).unwrap();
    assert_eq!(live::probe(&paths(&w, "c.json"), &state), None);
    assert_eq!(state.iteration, 0, "a cancelled run is not an iteration");
    let journal = events(&w, "c.json");
    let cancelled = journal.iter().rfind(|e| e["kind"] == "run_cancelled").expect("run_cancelled journaled");
    assert_eq!(cancelled["actor"], "human");
    assert_eq!(cancelled["data"]["counted"], false);
    assert!(cancelled["data"]["reason"].as_str().unwrap().contains("looked stuck"));
    // The cycle is free again: the next run counts as iteration 1.
    std::fs::write(w.path("commands.json"), support::world::COMMANDS).unwrap();
    let again = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert_eq!(again.json()["iteration"], 1);
    assert!(w.run(&["log", "--state", "c.json", "--verify"]).code == 0);
}

#[test]
fn headless_abort_stops_a_run_held_by_another_process_and_ends_the_cycle() {
    let (w, child, mark, _) = agent_testing("abort");
    let abort = w.run(&["abort", "--state", "c.json", "--reason", "wrong approach"]);
    assert_eq!(abort.code, 0, "{}\n{}", abort.stdout, abort.stderr);
    assert_eq!(abort.json()["status"], "ABORTED");
    assert_eq!(abort.json()["abort"]["reason"], "wrong approach");
    let (code, doc) = finish(child);
    assert_eq!(
        (code, doc["status"].as_str(), doc["cycle_status"].as_str()),
        (2, Some("RUN_CANCELLED"), Some("ABORTED"))
    );
    assert!(doc["error"].as_str().unwrap().contains("the cycle was aborted"), "{doc}");
    assert!(wait_until_gone(&mark, Duration::from_secs(5)).is_empty(), "the test's process group is gone");
    let state = state_file::load(&w.path("c.json")).unwrap();
    assert_eq!((state.iteration, state.running.is_none()), (0, true));
    let kinds: Vec<String> = events(&w, "c.json").iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect();
    let tail: Vec<&str> = kinds.iter().rev().take(3).map(String::as_str).collect();
    assert_eq!(tail, ["status_changed", "aborted", "run_cancelled"], "{kinds:?}");
}

#[test]
fn a_run_whose_holder_died_is_not_live_and_abort_needs_no_answer() {
    let (w, mut child, mark, _) = agent_testing("crash");
    child.kill().unwrap();
    child.wait().unwrap();
    let state = state_file::load(&w.path("c.json")).unwrap();
    assert!(state.running.is_some(), "a killed holder leaves its `running` entry behind");
    assert_eq!(live::probe(&paths(&w, "c.json"), &state), None, "but the kernel dropped its lock: not live");
    let ctx = w.ctx();
    let err = stop::cancel(&ctx, &paths(&w, "c.json"), Actor::Human, "x").unwrap_err();
    assert_eq!(err.status(), "NO_RUN", "{err}");
    let abort = w.run(&["abort", "--state", "c.json", "--reason", "gone"]);
    assert_eq!(abort.json()["status"], "ABORTED", "{}", abort.stdout);
    // The orphaned test (its holder was SIGKILLed) is still the kernel's to reap; clean up.
    for pid in processes_with(&mark) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[test]
fn a_lock_holder_that_is_not_forgeloop_is_never_signalled() {
    let w = World::new();
    w.cycle("c.json", &[]);
    let paths = paths(&w, "c.json");
    // Another program holds the cycle's lock file, and a forged `running` entry names it.
    let mut holder = std::process::Command::new("python3")
        .args(["-c", "import fcntl,sys,time; f=open(sys.argv[1],'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"])
        .arg(paths.lock())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()), &mut line).unwrap();
    assert_eq!(line.trim(), "held");
    let mut state: Value = w.sb.read_json(&paths.state);
    state["running"] = serde_json::json!({"pid": holder.id(), "started_at": "2026-12-01T00:00:00Z", "pr": "acme/widget#1",
        "head_sha": "0".repeat(40), "iteration": 1, "log_path": "runs/1-000000000000.log", "actor": "agent"});
    std::fs::write(&paths.state, state.to_string()).unwrap();
    let loaded = state_file::load(&paths.state).unwrap();
    assert!(live::probe(&paths, &loaded).is_some(), "it looks live");
    let ctx = w.ctx();
    let err = stop::cancel(&ctx, &paths, Actor::Human, "x").unwrap_err();
    assert_eq!(err.status(), "STOP_UNANSWERED");
    assert!(err.to_string().contains("not a forgeloop process"), "{err}");
    assert!(holder.try_wait().unwrap().is_none(), "the other program was not signalled");
    holder.kill().unwrap();
    holder.wait().unwrap();
}

/// This test process plays a forgeloop holding cycle `c.json` for a run of its own (its pid in
/// `running`, the cycle lock held), with SIGUSR1 caught so the request's signal is harmless.
fn play_holder(w: &World) -> (CyclePaths, tokio::runtime::Runtime, forgeloop::store::lock::FileLock) {
    w.cycle("c.json", &[]);
    let paths = paths(w, "c.json");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let signal = rt.block_on(async { tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()) });
    std::mem::forget(signal);
    let lock = forgeloop::store::lock::FileLock::try_acquire(&paths.lock()).unwrap();
    let mut state: Value = w.sb.read_json(&paths.state);
    state["running"] = serde_json::json!({"pid": std::process::id(), "started_at": "2026-12-01T00:00:00Z",
        "pr": "acme/widget#1", "head_sha": "0".repeat(40), "iteration": 1, "log_path": "runs/1-000000000000.log",
        "actor": "agent"});
    std::fs::write(&paths.state, state.to_string()).unwrap();
    (paths, rt, lock)
}

#[test]
fn a_holder_that_takes_the_request_but_never_lets_go_is_named_after_the_wait() {
    let w = World::new();
    let (paths, _rt, _lock) = play_holder(&w);
    // The holder's side: it takes (deletes) the request, as a forgeloop does before stopping
    // its tests, and then stays stuck holding the cycle.
    let request: PathBuf = paths.sidecar().join("stop-request.json");
    let taker = {
        let request = request.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if std::fs::remove_file(&request).is_ok() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            false
        })
    };
    let asked = Instant::now();
    let err = stop::cancel(&w.ctx(), &paths, Actor::Human, "x").unwrap_err();
    assert!(taker.join().unwrap(), "the request was never written");
    assert_eq!(err.status(), "STOP_UNANSWERED");
    assert!(err.to_string().contains("took the stop request but still holds the cycle after 12 s"), "{err}");
    assert!(err.to_string().contains(&std::process::id().to_string()), "{err}");
    assert!(asked.elapsed() >= stop::FINISH_WITHIN, "gave up before the wait was over");
    let state = state_file::load(&paths.state).unwrap();
    assert!(state.running.is_some(), "the requester changed the cycle");
}

#[test]
fn a_forgeloop_holder_that_does_not_answer_is_named_within_seconds() {
    let w = World::new();
    // An older version, or a stuck one, that never reads requests.
    let (paths, _rt, _lock) = play_holder(&w);
    let err = stop::cancel(&w.ctx(), &paths, Actor::Human, "x").unwrap_err();
    assert_eq!(err.status(), "STOP_UNANSWERED");
    assert!(err.to_string().contains("did not answer the stop request within 3 s"), "{err}");
    let request: PathBuf = paths.sidecar().join("stop-request.json");
    assert!(!request.exists(), "an unanswered request is withdrawn");
}
