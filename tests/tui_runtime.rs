//! The runtime with its real watcher, loader and log worker, drawing into a TestBackend:
//! state changes and a growing (then shrinking) live log reach the screen without a key.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod tui_support;

use std::io::Write;
use std::time::{Duration, Instant};

use forgeloop::domain::status::Status;
use forgeloop::tui::Theme;
use forgeloop::tui::app::{App, Event};
use forgeloop::tui::keymap::Cmd;
use forgeloop::tui::registry::Tab;
use forgeloop::tui::runtime::Runtime;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tui_support::*;

/// Steps the runtime until `done` holds (bounded, so a bug fails instead of hanging).
async fn until(runtime: &mut Runtime<TestBackend>, what: &str, done: impl Fn(&App) -> bool) {
    let start = Instant::now();
    while !done(&runtime.app) {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        let _ = tokio::time::timeout(Duration::from_millis(200), runtime.step()).await;
    }
}

fn new_runtime(fx: &Fixture) -> Runtime<TestBackend> {
    let app = App::new(fx.roots(), Theme::builtin("dark").unwrap(), false, t0(), fx.ctx.redactor.clone());
    Runtime::new(fx.ctx.clone(), Vec::new(), app, Terminal::new(TestBackend::new(120, 40)).unwrap(), false)
}

fn send(runtime: &Runtime<TestBackend>, cmd: Cmd) {
    runtime.sender().send(Event::Cmd(cmd)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_on_disk_reach_the_screen() {
    let fx = Fixture::new();
    fx.start("one", false, 5);
    let mut runtime = new_runtime(&fx);
    until(&mut runtime, "the first cycle", |app| app.list.cycles.len() == 1).await;
    // A new cycle, a status change, an unreadable file and a removal, all from outside.
    fx.start("two", true, 5);
    until(&mut runtime, "the new cycle", |app| app.list.cycles.len() == 2).await;
    fx.block("one", Status::BlockedInfra, "unreachable");
    until(&mut runtime, "the status change", |app| {
        app.list.cycles.iter().any(|c| c.name() == "one" && c.status() == Some(Status::BlockedInfra))
    })
    .await;
    let torn = fx.garbage("torn.json", b"{\"status\":");
    until(&mut runtime, "the unreadable row", |app| {
        app.list.cycles.iter().any(|c| c.path == torn && c.error.is_some())
    })
    .await;
    std::fs::remove_file(&torn).unwrap();
    until(&mut runtime, "the removal", |app| !app.list.cycles.iter().any(|c| c.path == torn)).await;
    // The screen shows it after the last step.
    runtime.draw().unwrap();
    let text = format!("{}", runtime.terminal.backend());
    assert!(text.contains("✗ INFRA") && text.contains("◆ CONFIRM BRIEF"), "{text}");
    assert!(
        runtime.app.watching.0 >= 3,
        "cycles, task-space and runs directories are watched: {:?}",
        runtime.app.watching
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_log_is_followed_as_it_grows_and_after_it_shrinks() {
    let fx = Fixture::new();
    fx.start("live", false, 5);
    fx.sent("live");
    fx.reply("live", "PR_URL: https://github.com/acme/widget/pull/7");
    // A run in progress: its log exists in runs/ but is not in the history yet.
    let runs = fx.paths("live").runs();
    std::fs::create_dir_all(&runs).unwrap();
    let log = runs.join("1-0123456789ab.log");
    std::fs::write(&log, "$ pytest -q\n").unwrap();
    let mut runtime = new_runtime(&fx);
    until(&mut runtime, "the cycle", |app| app.list.cycles.len() == 1).await;
    send(&runtime, Cmd::Open);
    send(&runtime, Cmd::Tab(Tab::Log));
    until(&mut runtime, "the log", |app| app.tabs.log.loaded && !app.tabs.log.window.lines.is_empty()).await;
    assert!(runtime.app.tabs.log.follow, "a live run's log is followed");
    {
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        for i in 0..200 {
            writeln!(file, "line {i}").unwrap();
        }
    }
    until(&mut runtime, "the new tail", |app| app.tabs.log.window.lines.last().is_some_and(|l| l.text == "line 199"))
        .await;
    // The runner compacts the file (it shrinks): the follower starts over from the new content.
    std::fs::write(&log, "$ pytest -q\n[... forgeloop is cutting output here ...]\nline 500\n").unwrap();
    until(&mut runtime, "the shrunk tail", |app| {
        app.tabs.log.window.lines.last().is_some_and(|l| l.text == "line 500")
    })
    .await;
    assert_eq!(runtime.app.tabs.log.window.lines[0].text, "$ pytest -q");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_home_created_after_start_is_picked_up() {
    // Nothing exists yet: the watcher stands on the nearest existing ancestor, and files
    // written before a directory's own watch is in place are still found.
    let fx = Fixture::new();
    let mut runtime = new_runtime(&fx);
    until(&mut runtime, "the first discovery", |app| app.discovered).await;
    for i in 0..3 {
        fx.start(&format!("late-{i}"), false, 5);
    }
    until(&mut runtime, "the cycles created after start", |app| app.list.cycles.len() == 3).await;
}

/// The runtime and the tests' synchronous driver carry out effects with one executor: the
/// same confirmation gives the person the same message either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_and_the_sync_driver_share_one_executor() {
    let synced = Fixture::new();
    synced.start("one", true, 5);
    let (mut app, mut d) = synced.app("dark");
    cmd(&mut app, &mut d, Cmd::ConfirmBrief);
    cmd(&mut app, &mut d, Cmd::Yes);
    let by_sync = app.toast.clone().expect("a message after confirming");

    let live = Fixture::new();
    live.start("one", true, 5);
    let mut runtime = new_runtime(&live);
    until(&mut runtime, "the cycle", |app| app.list.cycles.len() == 1).await;
    send(&runtime, Cmd::ConfirmBrief);
    send(&runtime, Cmd::Yes);
    until(&mut runtime, "the confirmation's message", |app| app.toast.is_some()).await;
    let by_runtime = runtime.app.toast.clone().expect("the message");

    assert_eq!(by_sync, by_runtime);
    assert!(!by_sync.error && by_sync.text.contains("the prompt is issued"), "{by_sync:?}");
}
