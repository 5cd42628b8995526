//! Concurrent writers on one cycle (design §3 rule 6, §10): sixteen `forge --pr` processes at
//! once run one at a time, the rest get `CYCLE_BUSY` (exit 2) naming the holder; the cap is
//! never exceeded; no completed run is lost; and the control room's rerun (called in-process,
//! as the TUI does) and an agent's `forge --pr` (the binary) exclude each other both ways.
//!
//! The long-running test command is gated on a file the test creates, so "the holder is still
//! running while the others try" is arranged, not hoped for: no timing assumption.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use forgeloop::cycle::pr_test::{self, Engine};
use forgeloop::domain::state::{Actor, CycleState};
use forgeloop::error::Error;
use forgeloop::store::journal;
use forgeloop::store::layout::CyclePaths;
use forgeloop::store::lock::LockError;
use serde_json::{Value, json};
use support::world::{CALC_BUGGY, World};

const PROCESSES: usize = 16;

/// A commands file whose first command appends `start` to `trace`, waits (at most a minute)
/// for `release` to exist, appends `end`; then the project's failing test runs.
fn gated_commands(w: &World, name: &str, trace: &Path, release: &Path) -> PathBuf {
    let script = format!(
        "echo start >> '{t}'; i=0; while [ ! -e '{r}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; echo end >> '{t}'",
        t = trace.display(),
        r = release.display()
    );
    let path = w.path(name);
    // No warm cache: warming the base layer would run the gated script once more, at the base
    // tip, outside the cycle's lock (these tests count the runs the lock lets through).
    let commands =
        json!({"commands": [["sh", "-c", script], ["sh", "test.sh"]], "write_paths": [w.shared_dir()], "cache": false});
    fs::write(&path, commands.to_string()).unwrap();
    path
}

fn spawn_forge(w: &World, pr: &str, commands: &Path) -> Child {
    w.command(&["forge", "--pr", pr, "--state", "c.json", "--commands-json", commands.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

struct Exit {
    pid: u32,
    code: i32,
    out: Value,
    stderr: String,
}

fn reap(mut child: Child) -> Exit {
    let pid = child.id();
    let status = child.wait().unwrap();
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let out = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}\n{stderr}"));
    Exit { pid, code: status.code().unwrap_or(-1), out, stderr }
}

/// Waits until at least `n` children have exited (or a minute passed).
fn wait_for_exits(children: &mut [Child], n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let exited = children.iter_mut().map(|c| c.try_wait().unwrap().is_some()).filter(|done| *done).count();
        if exited >= n || Instant::now() > deadline {
            return;
        }
        sleep(Duration::from_millis(10));
    }
}

fn wait_for_lines(trace: &Path, word: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_lines(trace, word) < n {
        assert!(Instant::now() < deadline, "the gated command never reached {word} #{n}");
        sleep(Duration::from_millis(10));
    }
}

fn count_lines(trace: &Path, word: &str) -> usize {
    fs::read_to_string(trace).unwrap_or_default().lines().filter(|l| *l == word).count()
}

/// The test commands never overlapped: the trace is start, end, start, end, …
fn assert_one_at_a_time(trace: &Path) -> usize {
    let text = fs::read_to_string(trace).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(*line, if i % 2 == 0 { "start" } else { "end" }, "two runs overlapped:\n{text}");
    }
    assert_eq!(lines.len() % 2, 0, "a run never ended:\n{text}");
    lines.len() / 2
}

fn load(w: &World) -> (CycleState, Vec<journal::Event>) {
    let state = CycleState::from_bytes(&fs::read(w.path("c.json")).unwrap()).unwrap();
    let events = journal::verify(&w.path("c.d/events.jsonl")).unwrap().events;
    (state, events)
}

fn finished(events: &[journal::Event]) -> Vec<u64> {
    events.iter().filter(|e| e.kind == "run_finished").map(|e| e.data["iteration"].as_u64().unwrap()).collect()
}

#[test]
fn sixteen_forge_pr_processes_run_one_at_a_time_and_never_pass_the_cap() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("c.json", &["--max-iterations", "3"]);
    let (trace, release) = (w.shared_dir().join("trace"), w.shared_dir().join("release"));
    let commands = gated_commands(&w, "gated.json", &trace, &release);
    let pr = format!("acme/widget#{n}");

    for wave in 1..=5 {
        let _ = fs::remove_file(&release);
        // WebGPT pushed again: a head already tested would not run (ALREADY_TESTED).
        if wave > 1 {
            w.commit(&repo, "fix", &[("calc.sh", &format!("echo $(($1 - $2)) # {wave}\n"))], "another try");
        }
        let mut children: Vec<Child> = (0..PROCESSES).map(|_| spawn_forge(&w, &pr, &commands)).collect();
        // Everyone but the lock holder gives up at once; only then may the holder finish.
        wait_for_exits(&mut children, PROCESSES - 1);
        fs::write(&release, "").unwrap();
        let exits: Vec<Exit> = children.into_iter().map(reap).collect();
        let winners: Vec<&Exit> = exits.iter().filter(|e| e.code == 0).collect();
        let (state, _) = load(&w);
        if wave <= 3 {
            assert_eq!(winners.len(), 1, "wave {wave}: {} runs completed", winners.len());
            assert_eq!(winners[0].out["iteration"], wave);
            for busy in exits.iter().filter(|e| e.code != 0) {
                assert_eq!((busy.code, busy.out["status"].as_str()), (2, Some("CYCLE_BUSY")), "{}", busy.stderr);
                let error = busy.out["error"].as_str().unwrap();
                assert!(error.contains(&format!("pid {}", winners[0].pid)), "busy names the holder: {error}");
            }
        } else {
            assert!(winners.is_empty(), "wave {wave}: a run passed the cap");
            for e in &exits {
                let status = e.out["status"].as_str().unwrap();
                assert!(
                    e.code == 2 && ["CYCLE_BUSY", "BLOCKED_MAX_ITERATIONS", "REFUSED"].contains(&status),
                    "wave {wave}: exit {} {status}",
                    e.code
                );
            }
            assert_eq!(state.status.as_str(), "BLOCKED_MAX_ITERATIONS");
        }
        assert!(state.iteration <= 3 && state.iteration as usize == state.history.len());
    }
    assert_eq!(assert_one_at_a_time(&trace), 3, "exactly three runs executed their commands");
    let (state, events) = load(&w);
    assert_eq!(state.iteration, 3);
    assert_eq!(finished(&events), [1, 2, 3]);
    assert!(state.running.is_none());
}

#[test]
fn an_ungated_stampede_loses_no_update() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let cap = 6;
    w.cycle("c.json", &["--max-iterations", &cap.to_string()]);
    let trace = w.shared_dir().join("trace");
    let script = format!("echo start >> '{t}'; sh test.sh; r=$?; echo end >> '{t}'; exit $r", t = trace.display());
    let pr = format!("acme/widget#{n}");
    let mut completed = 0;
    for wave in 0..4 {
        // Each process its own commands (an argument the script ignores): the same head with
        // the same commands would not run twice (ALREADY_TESTED), and each one here must.
        let children: Vec<Child> = (0..PROCESSES)
            .map(|i| {
                let own = w.path(&format!("quick-{wave}-{i}.json"));
                let text = json!({"commands": [["sh", "-c", &script, format!("run-{wave}-{i}")]], "write_paths": [w.shared_dir()], "cache": false});
                fs::write(&own, text.to_string()).unwrap();
                spawn_forge(&w, &pr, &own)
            })
            .collect();
        for e in children.into_iter().map(reap) {
            let status = e.out["status"].as_str().unwrap_or("").to_owned();
            match e.code {
                0 => completed += 1,
                2 => assert!(
                    ["CYCLE_BUSY", "BLOCKED_MAX_ITERATIONS", "REFUSED"].contains(&status.as_str()),
                    "unexpected refusal {status}: {}",
                    e.out
                ),
                code => panic!("exit {code}: {}\n{}", e.out, e.stderr),
            }
        }
        let (state, events) = load(&w);
        assert_eq!(state.iteration, completed, "every completed run is counted, and only those");
        assert!(state.iteration <= cap);
        assert_eq!(finished(&events).len() as u32, completed);
    }
    eprintln!("{completed} of {} stampeding runs completed", 4 * PROCESSES);
    assert!(completed >= 1, "no run ever completed");
    assert_eq!(assert_one_at_a_time(&trace) as u32, completed);
}

#[test]
fn the_control_rooms_rerun_and_an_agents_forge_pr_exclude_each_other() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("c.json", &[]);
    let (trace, release) = (w.shared_dir().join("trace"), w.shared_dir().join("release"));
    let commands = gated_commands(&w, "gated.json", &trace, &release);
    let pr = format!("acme/widget#{n}");
    let api = w.emu.api_base();
    let ctx = w.ctx();
    let paths = CyclePaths::new(fs::canonicalize(w.path("c.json")).unwrap()).unwrap();
    let engine = w.rt.block_on(async { Engine::connect(&api, Some(w.token.clone())) }).unwrap();
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);

    // Run 1 (agent) completes: the cycle now has a PR and stored commands to rerun.
    fs::write(&release, "").unwrap();
    let first = reap(spawn_forge(&w, &pr, &commands));
    assert_eq!((first.code, first.out["iteration"].as_u64()), (0, Some(1)), "{}", first.stderr);

    // Run 2 (WebGPT pushed a new head): the agent holds the cycle; the TUI's rerun is refused
    // at once, nothing written.
    fs::remove_file(&release).unwrap();
    w.commit(&repo, "fix", &[("calc.sh", "echo $(($1 - $2)) # again\n")], "another try");
    let agent = spawn_forge(&w, &pr, &commands);
    wait_for_lines(&trace, "start", 2);
    let before = fs::read(w.path("c.json")).unwrap();
    match w.rt.block_on(pr_test::rerun(&ctx, &engine, &paths, cancel_rx.clone())) {
        Err(Error::Lock(LockError::Busy { pid, .. })) => assert_eq!(pid, Some(agent.id())),
        Err(other) => panic!("expected CYCLE_BUSY, got {other}"),
        Ok(_) => panic!("the rerun ran while the agent held the cycle"),
    }
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before, "the refused rerun wrote the state");
    fs::write(&release, "").unwrap();
    let agent = reap(agent);
    assert_eq!((agent.code, agent.out["iteration"].as_u64()), (0, Some(2)), "{}", agent.stderr);

    // Run 3: the TUI's rerun holds the cycle; the agent's forge --pr gets CYCLE_BUSY naming us.
    fs::remove_file(&release).unwrap();
    let rerun = {
        let (ctx, paths, cancel) = (ctx.clone(), paths.clone(), cancel_rx.clone());
        w.rt.spawn(async move { pr_test::rerun(&ctx, &engine, &paths, cancel).await })
    };
    wait_for_lines(&trace, "start", 3);
    let busy = reap(spawn_forge(&w, &pr, &commands));
    assert_eq!((busy.code, busy.out["status"].as_str()), (2, Some("CYCLE_BUSY")), "{}", busy.out);
    assert!(busy.out["error"].as_str().unwrap().contains(&format!("pid {}", std::process::id())));
    fs::write(&release, "").unwrap();
    let outcome = w.rt.block_on(rerun).unwrap().unwrap();
    assert_eq!(outcome.saved.state.iteration, 3);
    assert!(outcome.report.is_some());

    // Nothing lost: three runs, each counted once, by the actor that ran it.
    let (state, events) = load(&w);
    assert_eq!(state.iteration, 3);
    let actors: Vec<Actor> = state.history.iter().map(|h| h.actor).collect();
    assert_eq!(actors, [Actor::Agent, Actor::Agent, Actor::Human]);
    assert_eq!(finished(&events), [1, 2, 3]);
    assert_eq!(assert_one_at_a_time(&trace), 3);
}
