//! What an agent pays per headless call (design §10: `forgeloop next` ≤ 20 ms): the real
//! binary, process start included, run against a home holding 1,000 cycles made with the
//! use-case functions. `/bin/true` is timed the same way as the floor any process pays.
//!
//! Run: `cargo bench --bench next_list`. FORGELOOP_BENCH_CYCLES (default 1000) changes the
//! number of cycles; FORGELOOP_BENCH_DIR (default: the system temp dir) where the home lives.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use forgeloop::cycle::start::{StartRequest, start};
use forgeloop::cycle::{Ctx, actions, reply};
use forgeloop::domain::state::Actor;
use forgeloop::domain::status::Status;
use tempfile::TempDir;

const BRIEF: &str = "Goal: add dark mode.\nSuccess: preferences persist across reloads.\nScope: existing web app only.\nConstraints: keep accessibility contrast.\nValidation: run the frontend test suite.";
const QUESTION: &str = "Implement dark mode in the existing web app, open a PR, and report its URL.";

fn cycles() -> usize {
    std::env::var("FORGELOOP_BENCH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

/// A home with `n` cycles in a mix of states: fresh, prompt sent, a reply recorded, blocked.
fn populate(home: &Path, n: usize) -> Ctx {
    let ctx = Ctx::for_home(home.to_path_buf());
    for i in 0..n {
        let name = format!("cycle-{i:04}");
        start(
            &ctx,
            StartRequest {
                state: name.clone(),
                request: format!("Add dark mode to app {i}"),
                webgpt_question: Some(QUESTION.to_owned()),
                intent_brief: Some(BRIEF.to_owned()),
                max_iterations: 5,
                await_confirmation: i % 7 == 0,
                continue_from: None,
                new_repository: None,
                repository: None,
                driver: None,
            },
        )
        .unwrap();
        if i % 7 == 0 {
            continue;
        }
        let paths = ctx.cycle(&name).unwrap();
        if i % 2 == 0 {
            actions::sent(&ctx, &paths).unwrap();
        }
        if i % 4 == 0 {
            let text = format!("Done.\nPR_URL: https://github.com/acme/app{i}/pull/{}", i + 1);
            reply::reply(&ctx, &paths, &text, None, None).unwrap();
        }
        if i % 10 == 3 {
            actions::block(&ctx, &paths, Status::BlockedInfra, "GitHub unreachable three times", Actor::Agent).unwrap();
        }
    }
    ctx
}

fn forgeloop(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_forgeloop"));
    cmd.args(args)
        .env("FORGELOOP_HOME", home)
        .env("FORGELOOP_REGISTRY", home.join("registry"))
        .env("XDG_CONFIG_HOME", home.join("xdg-config"))
        .env_remove("FORGELOOP_CONFIG")
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// Runs the command to completion and returns its stdout length (so the output is consumed,
/// as an agent would).
fn run(cmd: &mut Command) -> usize {
    let out = cmd.output().expect("the command runs");
    assert!(out.status.success(), "{cmd:?} failed");
    out.stdout.len()
}

fn median_ms(mut cmd: impl FnMut() -> Command, rounds: usize) -> f64 {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            run(&mut cmd());
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn bench_next_list(c: &mut Criterion) {
    let n = cycles();
    let root = match std::env::var_os("FORGELOOP_BENCH_DIR") {
        Some(dir) => TempDir::new_in(dir).unwrap(),
        None => TempDir::new().unwrap(),
    };
    let home: PathBuf = root.path().join("home");
    let started = Instant::now();
    populate(&home, n);
    eprintln!("[next_list bench] created {n} cycles with the use cases in {:.1?}", started.elapsed());
    // A cycle in the middle of the directory listing, past its first `sent`.
    let state = format!("cycle-{:04}", (n / 2) & !1);
    let listed = run(&mut forgeloop(&home, &["list"]));
    let rows: serde_json::Value =
        serde_json::from_slice(&forgeloop(&home, &["list"]).output().unwrap().stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(n), "list shows every cycle");
    eprintln!("[next_list bench] `list` prints {listed} bytes for {n} cycles");

    // Interleaved medians first (a shared machine drifts), then criterion.
    let rounds = 30;
    let floor = median_ms(|| Command::new("/bin/true"), rounds);
    let next = median_ms(|| forgeloop(&home, &["next", "--state", &state]), rounds);
    let list = median_ms(|| forgeloop(&home, &["list"]), rounds.min(10));
    eprintln!(
        "[next_list bench] medians over {rounds} runs: /bin/true {floor:.2} ms, next {next:.2} ms (target ≤ 20 ms), list {list:.2} ms"
    );

    let mut group = c.benchmark_group("headless");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    group.bench_function("process_floor_bin_true", |b| b.iter(|| run(&mut Command::new("/bin/true"))));
    group.bench_function(format!("next_{n}_cycles"), |b| {
        b.iter(|| run(&mut forgeloop(&home, &["next", "--state", &state])))
    });
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.bench_function(format!("list_{n}_cycles"), |b| b.iter(|| run(&mut forgeloop(&home, &["list"]))));
    group.finish();
}

criterion_group!(benches, bench_next_list);
criterion_main!(benches);
