//! SIGKILL at random moments (design §10 reliability): `forge --pr` against the emulator,
//! `project attach`, `project bind`, and `reply`/`sent`, killed FORGELOOP_CRASH_KILLS times in
//! total (default 120, spread over the four kinds; `.ci/run` runs 500; under 10 is refused). After every kill every
//! state, registry record, report and journal must parse, and every journal chain must verify
//! (a torn last line is allowed: the reader reports and ignores it). The kill moment is drawn
//! over the length of an unkilled run of the same command, measured first (see [`delay`]).
//!
//! The counting invariant, derived from `cycle::pr_test::forge_pr` and `cycle::session::persist`
//! (which writes the state, then appends the journal):
//! * `iteration == history.len()` and the history's iterations are exactly `1..=iteration`:
//!   `record_run` increments both in the one atomic state write, under the cycle lock, from the
//!   state it loaded — so no run is ever counted twice or lost once written.
//! * the journal's `run_finished` iterations are distinct and increasing, each one is in the
//!   history, and each follows a `run_started` of the same iteration (the same process appended
//!   both). `iteration - #run_finished` is the number of runs killed after their state write
//!   and before their journal append — at most the number of kills, usually 0.
//! * a `message_sent` is journaled at most once per outbox message (sha256): `sent` after a
//!   crash is refused, not recorded twice.
//! * the PR carries at most one forgeloop comment per iteration (the marker makes posting
//!   idempotent), whatever moment a `--post-comment` run died at.
//!
//! After all the kills, one more unkilled run of each kind must succeed: nothing is wedged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use forgeloop::cycle::start::{StartRequest, start};
use forgeloop::cycle::{Ctx, actions};
use forgeloop::domain::state::CycleState;
use forgeloop::domain::status::Status;
use forgeloop::registry::{Registry, RepoKey};
use forgeloop::store::atomic::is_temp_name;
use forgeloop::store::journal::{self, Event};
use forgeloop::store::layout::CyclePaths;
use serde_json::Value;
use support::world::{CALC_BUGGY, World};
use support::{BRIEF, QUESTION};

const PROJECT_URL: &str = "https://chatgpt.com/g/g-p-example/project";

/// At least 10, so each of the four kinds is killed at least twice.
fn kills() -> usize {
    support::knob::knob("FORGELOOP_CRASH_KILLS", 120, 10, "every kind of command must be killed at least twice")
        as usize
}

/// Small deterministic generator for kill delays (seed: FORGELOOP_CRASH_SEED).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound.max(1)
    }
}

/// Spawns `cmd`, SIGKILLs it after `delay` (unless it finished), and reaps it. Returns
/// whether it was still running when killed.
fn kill_after(mut cmd: Command, delay: Duration) -> bool {
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    sleep(delay);
    let killed = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    child.wait().unwrap();
    killed
}

/// How long an unkilled run of `cmd` takes; kill moments are drawn over 1.2× that.
fn calibrate(mut cmd: Command) -> Duration {
    let started = Instant::now();
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "calibration run failed:\n{}", String::from_utf8_lossy(&out.stdout));
    started.elapsed()
}

/// Half the kills land anywhere in [0, 1.2×span]; the other half in [0.6, 1.2]×span, where
/// short commands do their writes (process start dominates the first half).
fn delay(rng: &mut Lcg, span: Duration) -> Duration {
    let span = span.as_micros() as u64;
    let late = rng.next(2) == 1;
    let from = if late { span * 3 / 5 } else { 0 };
    Duration::from_micros(from + rng.next(span * 6 / 5 - from))
}

/// Everything a cycle has on disk parses; returns the state and the verified journal.
fn check_cycle(state_path: &Path) -> (CycleState, Vec<Event>, bool) {
    let paths = CyclePaths::new(state_path.to_path_buf()).unwrap();
    let bytes = fs::read(&paths.state).unwrap();
    let state = CycleState::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("{} does not parse after a kill: {e}", paths.state.display()));
    let contents = journal::verify(&paths.journal())
        .unwrap_or_else(|e| panic!("the journal of {} does not verify after a kill: {e}", paths.state.display()));
    if let Ok(entries) = fs::read_dir(paths.runs()) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !is_temp_name(&name) {
                let report: Value = serde_json::from_slice(&fs::read(entry.path()).unwrap())
                    .unwrap_or_else(|e| panic!("report {name} does not parse after a kill: {e}"));
                assert!(report["head_sha"].is_string(), "{name}");
            }
        }
    }
    (state, contents.events, contents.torn_tail)
}

/// The counting invariant of the module doc; returns iteration − #run_finished.
fn check_counting(state: &CycleState, events: &[Event], sidecar: &Path) -> u32 {
    assert_eq!(state.iteration as usize, state.history.len(), "iteration and history disagree");
    let history: Vec<u32> = state.history.iter().map(|h| h.iteration).collect();
    assert_eq!(history, (1..=state.iteration).collect::<Vec<_>>(), "a run was counted twice or lost");
    for run in &state.history {
        for rel in [&run.log_path, &run.report_path].into_iter().flatten() {
            assert!(sidecar.join(rel).is_file(), "history names {rel}, which does not exist");
        }
    }
    let mut started = BTreeSet::new();
    let mut finished = Vec::new();
    for event in events {
        let iteration = event.data["iteration"].as_u64().map(|i| i as u32);
        match event.kind.as_str() {
            "run_started" => {
                started.insert(iteration.unwrap());
            }
            "run_finished" => {
                let i = iteration.unwrap();
                assert!(started.contains(&i), "run_finished {i} without its run_started");
                finished.push(i);
            }
            _ => {}
        }
    }
    assert!(finished.windows(2).all(|w| w[0] < w[1]), "run_finished iterations repeat: {finished:?}");
    assert!(finished.iter().all(|i| history.contains(i)), "journal ahead of the state: {finished:?}");
    state.iteration - finished.len() as u32
}

/// Sent messages are journaled at most once each.
fn check_sent_once(events: &[Event]) {
    let mut seen = BTreeSet::new();
    for event in events.iter().filter(|e| e.kind == "message_sent") {
        let sha = event.data["sha256"].as_str().unwrap().to_owned();
        assert!(seen.insert(sha.clone()), "message {sha} recorded as sent twice");
    }
}

struct Tally {
    kills: usize,
    interrupted: usize,
    torn_tails: usize,
}

impl Tally {
    fn new() -> Tally {
        Tally { kills: 0, interrupted: 0, torn_tails: 0 }
    }
}

fn kill_forge_pr(w: &World, rng: &mut Lcg, count: usize) -> Tally {
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("c.json", &["--max-iterations", "100000"]);
    let tmp = w.path("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let pr = format!("acme/widget#{n}");
    // Each call has commands of its own: the same head with the same commands is not run
    // twice (ALREADY_TESTED), and every call here must really run.
    let calls = std::cell::Cell::new(0usize);
    let forge = |post: bool| {
        calls.set(calls.get() + 1);
        let file = format!("commands-{}.json", calls.get());
        fs::write(w.path(&file), format!(r#"[["sh", "test.sh"], ["echo", "call {}"]]"#, calls.get())).unwrap();
        let mut args = vec!["forge", "--pr", &pr, "--state", "c.json", "--commands-json", &file];
        if post {
            args.push("--post-comment");
        }
        let mut cmd = w.command(&args);
        cmd.env("TMPDIR", &tmp);
        cmd
    };
    // The first run creates the mirror; the second measures an ordinary later iteration.
    calibrate(forge(true));
    let span = calibrate(forge(true));
    let mut tally = Tally::new();
    let mut gap_total = 0;
    for i in 0..count {
        tally.interrupted += usize::from(kill_after(forge(i % 2 == 0), delay(rng, span)));
        tally.kills += 1;
        let (state, events, torn) = check_cycle(&w.path("c.json"));
        tally.torn_tails += usize::from(torn);
        assert_eq!(state.status, Status::AwaitingWebgptFix, "a kill moved the cycle: {:?}", state.last_error);
        gap_total = check_counting(&state, &events, &w.path("c.d"));
    }
    assert!(gap_total as usize <= count, "more uncounted runs than kills");
    // Nothing is wedged (mirror locks, cycle lock, stale `running`): the next run completes.
    let before = check_cycle(&w.path("c.json")).0.iteration;
    fs::write(w.path("commands.json"), r#"[["sh", "test.sh"], ["echo", "after the kills"]]"#).unwrap();
    let out = w.forge_pr("c.json", &pr, &["--post-comment"]);
    assert_eq!(out.code, 0, "the run after the kills failed:\n{}\n{}", out.stdout, out.stderr);
    let (state, events, _) = check_cycle(&w.path("c.json"));
    assert_eq!(state.iteration, before + 1);
    assert!(state.running.is_none());
    check_counting(&state, &events, &w.path("c.d"));
    // At most one comment per iteration, and the last run's is there.
    let mut per_marker: BTreeMap<String, usize> = BTreeMap::new();
    for body in w.comments(&repo, n) {
        *per_marker.entry(body.lines().next().unwrap_or("").to_owned()).or_default() += 1;
    }
    assert!(per_marker.values().all(|&c| c == 1), "a marker was posted twice: {per_marker:#?}");
    assert!(per_marker.keys().any(|m| m.contains(&format!("iteration={}", state.iteration))));
    eprintln!(
        "forge --pr: {} kills ({} mid-run), {} iterations recorded, {} runs killed between state write and journal append, {} comments",
        tally.kills,
        tally.interrupted,
        state.iteration,
        gap_total,
        per_marker.len()
    );
    tally
}

fn ctx_for(w: &World) -> Ctx {
    let mut ctx = Ctx::for_home(w.sb.home());
    ctx.registry = w.path("registry");
    ctx
}

fn new_cycle(ctx: &Ctx, path: &Path) {
    start(
        ctx,
        StartRequest {
            state: path.display().to_string(),
            request: "Add dark mode".into(),
            webgpt_question: Some(QUESTION.into()),
            intent_brief: Some(BRIEF.into()),
            max_iterations: 5,
            await_confirmation: false,
            continue_from: None,
            new_repository: None,
            repository: None,
            driver: None,
        },
    )
    .unwrap();
}

fn kill_attach(w: &World, rng: &mut Lcg, count: usize) -> Tally {
    let ctx = ctx_for(w);
    let key = RepoKey::parse("acme/widget").unwrap();
    Registry::new(w.path("registry")).bind(&key, PROJECT_URL, "Widget").unwrap();
    let dir = w.path("attach");
    let attach = |path: &Path, i: usize| {
        let conversation = format!("https://chatgpt.com/g/g-p-example/c/task-{i}");
        w.sb.command(&[
            "project",
            "attach",
            "--repository",
            "acme/widget",
            "--state",
            path.to_str().unwrap(),
            "--conversation-url",
            &conversation,
        ])
    };
    let path = |i: usize| dir.join(format!("a{i}.json"));
    new_cycle(&ctx, &path(usize::MAX));
    let span = calibrate(attach(&path(usize::MAX), usize::MAX));
    let mut tally = Tally::new();
    for i in 0..count {
        new_cycle(&ctx, &path(i));
        tally.interrupted += usize::from(kill_after(attach(&path(i), i), delay(rng, span)));
        tally.kills += 1;
        let (state, events, torn) = check_cycle(&path(i));
        tally.torn_tails += usize::from(torn);
        // One atomic write: all of the routing or none of it.
        let fields = [&state.repository, &state.project_url, &state.conversation_url];
        assert!(fields.iter().all(|f| f.is_some()) || fields.iter().all(|f| f.is_none()), "{fields:?}");
        let attached = events.iter().filter(|e| e.kind == "attached").count();
        assert!(attached <= usize::from(state.repository.is_some()), "journal ahead of the state");
        // The retry completes and is idempotent.
        let again = attach(&path(i), i).output().unwrap();
        assert!(again.status.success(), "attach after a kill failed: {}", String::from_utf8_lossy(&again.stdout));
        let (state, events, _) = check_cycle(&path(i));
        assert_eq!(state.repository.as_deref(), Some("acme/widget"));
        assert!(events.iter().filter(|e| e.kind == "attached").count() <= 1);
    }
    eprintln!("project attach: {} kills ({} before exit)", tally.kills, tally.interrupted);
    tally
}

fn kill_bind(w: &World, rng: &mut Lcg, count: usize) -> Tally {
    let root = w.path("registry");
    let registry = Registry::new(&root);
    let bind = |repo: &str| {
        w.sb.command(&[
            "project",
            "bind",
            "--repository",
            repo,
            "--project-url",
            PROJECT_URL,
            "--project-name",
            "Gadget",
        ])
    };
    let span = calibrate(bind("acme/calibration"));
    let mut tally = Tally::new();
    for i in 0..count {
        let repo = format!("acme/gadget{}", i % 5);
        let key = RepoKey::parse(&repo).unwrap();
        tally.interrupted += usize::from(kill_after(bind(&repo), delay(rng, span)));
        tally.kills += 1;
        match registry.lookup(&key) {
            Ok(Some(record)) => {
                assert_eq!(record.project_url, PROJECT_URL);
                registry.unbind(&key, PROJECT_URL).unwrap();
            }
            Ok(None) => {}
            Err(e) => panic!("record for {repo} is damaged after a kill: {e}"),
        }
        let listed = registry.list().unwrap_or_else(|e| panic!("registry list fails after a kill: {e}"));
        assert!(!listed.is_empty());
    }
    // A completed bind leaves no temp file of a dead process behind.
    let out = bind("acme/gadget0").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let names: Vec<PathBuf> = fs::read_dir(root.join("acme")).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(
        names.iter().all(|p| !is_temp_name(&p.file_name().unwrap().to_string_lossy())),
        "stray temp files: {names:?}"
    );
    eprintln!("project bind: {} kills ({} before exit)", tally.kills, tally.interrupted);
    tally
}

fn kill_reply_sent(w: &World, rng: &mut Lcg, count: usize) -> Tally {
    let ctx = ctx_for(w);
    let dir = w.path("replies");
    fs::create_dir_all(&dir).unwrap();
    let no_pr = dir.join("no-pr.txt");
    let with_pr = dir.join("pr.txt");
    fs::write(&no_pr, "I am still working on it and have not opened anything yet.\n").unwrap();
    fs::write(&with_pr, "Done, tests added.\n\nPR_URL: https://github.com/acme/widget/pull/7\n").unwrap();
    let reply = |state: &Path, file: &Path| {
        w.sb.command(&["reply", "--state", state.to_str().unwrap(), "--file", file.to_str().unwrap()])
    };
    let sent = |state: &Path| w.sb.command(&["sent", "--state", state.to_str().unwrap()]);
    let mut generation = 0;
    let fresh = |generation: usize| {
        let path = dir.join(format!("r{generation}.json"));
        new_cycle(&ctx, &path);
        path
    };
    let calibration = fresh(usize::MAX);
    let sent_span = calibrate(sent(&calibration));
    let reply_span = calibrate(reply(&calibration, &no_pr));
    let mut path = fresh(generation);
    let mut tally = Tally::new();
    for _ in 0..count {
        let (state, _, _) = check_cycle(&path);
        let pending = state.outbox.as_ref().is_some_and(|o| o.sent_at.is_none());
        let (cmd, span) = if pending {
            (sent(&path), sent_span)
        } else if state.followups == 0 {
            (reply(&path, &no_pr), reply_span)
        } else {
            (reply(&path, &with_pr), reply_span)
        };
        tally.interrupted += usize::from(kill_after(cmd, delay(rng, span)));
        tally.kills += 1;
        let (state, events, torn) = check_cycle(&path);
        tally.torn_tails += usize::from(torn);
        check_sent_once(&events);
        assert!(state.followups <= 1, "the follow-up was asked twice");
        assert!(
            matches!(state.status, Status::AwaitingWebgptPr),
            "a kill moved the cycle to {} ({:?})",
            state.status,
            state.last_error
        );
        if pending {
            // Recording the same message again after a crash is refused or records it once.
            let again = sent(&path).output().unwrap();
            assert!(again.status.code() == Some(0) || again.status.code() == Some(2));
            let (state, events, _) = check_cycle(&path);
            check_sent_once(&events);
            assert!(state.outbox.as_ref().is_some_and(|o| o.sent_at.is_some()));
        }
        if state.last_reply.as_ref().is_some_and(|r| r.pr.is_some()) {
            generation += 1;
            path = fresh(generation);
        }
    }
    // Nothing is wedged: the protocol continues on the last cycle.
    actions::abort(&ctx, &ctx.cycle(path.to_str().unwrap()).unwrap(), "done", forgeloop::domain::state::Actor::Agent)
        .unwrap();
    eprintln!("reply/sent: {} kills ({} before exit) over {} cycles", tally.kills, tally.interrupted, generation + 1);
    tally
}

#[test]
fn random_sigkills_leave_every_file_parseable_and_nothing_double_counted() {
    let total = kills();
    let seed = std::env::var("FORGELOOP_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_c0de);
    eprintln!("{total} kills, seed {seed} (FORGELOOP_CRASH_KILLS, FORGELOOP_CRASH_SEED)");
    let mut rng = Lcg(seed);
    let w = World::new();
    // forge --pr is the slowest and has the most states to land in: 40%, the rest 20% each.
    let forge = total * 2 / 5;
    let attach = total / 5;
    let bind = total / 5;
    let replies = total - forge - attach - bind;
    let started = Instant::now();
    let tallies = [
        kill_forge_pr(&w, &mut rng, forge),
        kill_attach(&w, &mut rng, attach),
        kill_bind(&w, &mut rng, bind),
        kill_reply_sent(&w, &mut rng, replies),
    ];
    let kills: usize = tallies.iter().map(|t| t.kills).sum();
    let interrupted: usize = tallies.iter().map(|t| t.interrupted).sum();
    let torn: usize = tallies.iter().map(|t| t.torn_tails).sum();
    eprintln!(
        "{kills} kills in {:.1?}: {interrupted} processes were still running when killed; {torn} journals showed a torn last line",
        started.elapsed()
    );
    assert_eq!(kills, total);
    // The test proves something only if kills landed mid-run.
    assert!(interrupted * 4 >= kills, "too few kills landed while the process ran ({interrupted}/{kills})");
}

#[test]
fn a_kill_count_that_would_empty_the_test_is_refused() {
    for value in ["0", "9", "many"] {
        let (passed, out) = support::knob::run_self_with(
            "random_sigkills_leave_every_file_parseable_and_nothing_double_counted",
            "FORGELOOP_CRASH_KILLS",
            value,
        );
        assert!(!passed && out.contains("FORGELOOP_CRASH_KILLS"), "FORGELOOP_CRASH_KILLS={value} passed:\n{out}");
    }
}
