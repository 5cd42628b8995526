//! design §10 control-room bars: a frame with 1,000 cycles (≤ 10 ms), state change to screen
//! (≤ 100 ms), and RSS with 1,000 cycles and a 1 GB log open (≤ 60 MB).
//!
//! Run with `cargo bench --bench tui`. The memory figures are printed before the criterion
//! groups; the 1 GB log is written to a temporary directory and deleted afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "../tests/tui_support/mod.rs"]
mod tui_support;

use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use forgeloop::domain::state::Actor;
use forgeloop::domain::status::Status;
use forgeloop::tui::app::{App, Event};
use forgeloop::tui::keymap::Cmd;
use forgeloop::tui::registry::Tab;
use forgeloop::tui::runtime::Runtime;
use forgeloop::tui::{Theme, views};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tui_support::{Fixture, t0};

/// Overridable for a quick trial run: FORGELOOP_BENCH_CYCLES, FORGELOOP_BENCH_LOG_MIB.
fn cycles() -> usize {
    std::env::var("FORGELOOP_BENCH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

fn log_bytes() -> u64 {
    std::env::var("FORGELOOP_BENCH_LOG_MIB").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(1024) << 20
}

fn progress(what: &str) {
    eprintln!("[tui bench] {what}");
}

/// One home with the cycles, built once (the use cases fsync every write, so this takes a
/// while) and removed at the end of `main`.
fn fixture() -> &'static Fixture {
    static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(thousand_cycles)
}

fn thousand_cycles() -> Fixture {
    let fx = Fixture::new();
    progress(&format!("creating {} cycles with the use cases", cycles()));
    for i in 0..cycles() {
        let name = format!("cycle-{i:04}");
        fx.start(&name, i % 7 == 0, 5);
        if i % 10 == 3 {
            fx.block(&name, Status::BlockedInfra, "GitHub unreachable three times");
        }
    }
    fx
}

fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn frame(c: &mut Criterion) {
    let fx = fixture();
    let (app, _) = fx.app("dark");
    assert_eq!(app.list.cycles.len(), cycles());
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    c.bench_function("tui frame, 1000 cycles, 200x60", |b| {
        b.iter(|| {
            terminal.draw(|f| views::render(&app, f)).unwrap();
        });
    });
    // The worst case for a diffing terminal: every cell changes (scrolling a page).
    // Detail loads for the new selection run on the loader thread in the real runtime, so
    // only the state change and the frame are measured here.
    let (mut app, _) = fx.app("dark");
    c.bench_function("tui frame after a page down, 1000 cycles, 200x60", |b| {
        b.iter(|| {
            let last = app.list.visible.len().saturating_sub(1);
            let cmd = if app.selected_row() == Some(last) { Cmd::Top } else { Cmd::PageDown };
            let _effects = app.update(Event::Cmd(cmd));
            terminal.draw(|f| views::render(&app, f)).unwrap();
        });
    });
}

/// Write a state file, measure until the runtime has redrawn with the new status.
fn latency(c: &mut Criterion) {
    let fx = fixture();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut runtime = rt.block_on(async {
        let app = App::new(fx.roots(), Theme::builtin("dark").unwrap(), false, t0(), fx.ctx.redactor.clone());
        let terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let mut runtime = Runtime::new(fx.ctx.clone(), Vec::new(), app, terminal, false);
        while runtime.app.list.cycles.len() < cycles() {
            runtime.step().await.unwrap();
        }
        runtime
    });
    let target = fx.state_path("cycle-0001");
    let paths = fx.paths("cycle-0001");
    let mut blocked = false;
    c.bench_function("tui state change to redraw, 1000 cycles", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                blocked = !blocked;
                let want = if blocked { Status::BlockedModelUnavailable } else { Status::AwaitingWebgptPr };
                if blocked {
                    forgeloop::cycle::actions::block(&fx.ctx, &paths, want, "bench", Actor::Agent).unwrap();
                } else {
                    forgeloop::cycle::actions::unblock(&fx.ctx, &paths).unwrap();
                }
                let start = Instant::now();
                let frames = runtime.frames;
                rt.block_on(async {
                    loop {
                        runtime.step().await.unwrap();
                        let shown =
                            runtime.app.list.cycles.iter().any(|e| e.path == target && e.status() == Some(want));
                        if shown && runtime.frames > frames && !runtime.app.dirty {
                            break;
                        }
                    }
                });
                total += start.elapsed();
            }
            total
        });
    });
}

/// RSS with 1,000 cycles loaded and a 1 GB log open, scrolled to its end and searched.
fn memory() {
    let fx = fixture();
    let name = "cycle-0003";
    let runs = fx.paths(name).runs();
    std::fs::create_dir_all(&runs).unwrap();
    let log_path = runs.join("1-0123456789ab.log");
    {
        let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&log_path).unwrap());
        let line = b"tests/test_module.py::test_something_long_enough_to_look_real PASSED [ 42%] \x1b[32mok\x1b[0m\n";
        let mut written = 0u64;
        progress("writing the log");
        while written < log_bytes() {
            file.write_all(line).unwrap();
            written += line.len() as u64;
        }
        file.write_all(b"E   AssertionError: the needle at the very end\n[exit 1 after 3600.0s]\n").unwrap();
    }
    let before = rss_kib();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let opened = Instant::now();
    let (after_open, after_search, open_time, search_time) = rt.block_on(async {
        let app = App::new(fx.roots(), Theme::builtin("dark").unwrap(), false, t0(), fx.ctx.redactor.clone());
        let terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let mut runtime = Runtime::new(fx.ctx.clone(), Vec::new(), app, terminal, false);
        progress("loading the cycles");
        while runtime.app.list.cycles.len() < cycles() {
            runtime.step().await.unwrap();
        }
        runtime.draw().unwrap();
        // Select the cycle, open its Log tab (the 1 GB file), go to the end.
        let sender = runtime.sender();
        let send = |e: Event| sender.send(e).unwrap();
        send(Event::Cmd(Cmd::Filter));
        for ch in name.chars() {
            send(Event::Cmd(Cmd::Insert(ch)));
        }
        send(Event::Cmd(Cmd::Submit));
        send(Event::Cmd(Cmd::Open));
        send(Event::Cmd(Cmd::Tab(Tab::Log)));
        let start = Instant::now();
        progress("opening the log");
        while !runtime.app.tabs.log.loaded {
            runtime.step().await.unwrap();
        }
        progress("going to its end");
        send(Event::Cmd(Cmd::Bottom));
        while !runtime.app.tabs.log.window.at_eof {
            runtime.step().await.unwrap();
        }
        runtime.draw().unwrap();
        let open_time = start.elapsed();
        let after_open = rss_kib();
        // Search from the top for the line at the very end: the whole file is scanned.
        send(Event::Cmd(Cmd::Top));
        while runtime.app.tabs.log.window.top != 0 {
            runtime.step().await.unwrap();
        }
        send(Event::Cmd(Cmd::Search));
        for ch in "needle".chars() {
            send(Event::Cmd(Cmd::Insert(ch)));
        }
        progress("searching");
        let start = Instant::now();
        send(Event::Cmd(Cmd::Submit));
        runtime.step().await.unwrap();
        while runtime.app.tabs.log.search.state == forgeloop::tui::app::SearchState::Searching {
            runtime.step().await.unwrap();
        }
        let search_time = start.elapsed();
        assert_eq!(runtime.app.tabs.log.search.state, forgeloop::tui::app::SearchState::Found);
        (after_open, rss_kib(), open_time, search_time)
    });
    let _ = opened;
    println!("machine: {} cores, {}", std::thread::available_parallelism().map_or(0, |n| n.get()), cpu_model());
    let (n, mib) = (cycles(), log_bytes() >> 20);
    println!("RSS before the runtime ({n} cycles on disk, fixture built): {} KiB", before.0);
    println!(
        "RSS with {n} cycles loaded and the {mib} MiB log open at its end: {} KiB (peak {} KiB)",
        after_open.0, after_open.1
    );
    println!("RSS after searching the whole {mib} MiB log: {} KiB (peak {} KiB)", after_search.0, after_search.1);
    println!("open the {mib} MiB log and show its end: {open_time:?}; search all of it: {search_time:?}");
    std::fs::remove_file(&log_path).unwrap();
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    targets = frame, latency
}

fn main() {
    // Memory first, in a fresh process state, so earlier groups do not inflate the peak.
    if std::env::args().all(|a| a != "--list") {
        memory();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    let _ = std::fs::remove_dir_all(fixture().root());
}
