//! `forgeloop demo` (design §9): the whole product working on a machine with no GitHub account
//! and no browser. A sandbox home, the built-in **GitHub emulator** (test and demo
//! infrastructure, not GitHub) on 127.0.0.1 with a token made for this run, a small project
//! whose tests need only `sh` and `git`, a scripted stand-in for WebGPT, seven cycles driven
//! concurrently by a scripted coordinator through the same use cases as the CLI — real fetches,
//! checkouts, test processes and PR comments — and one driven through `forgeloop serve` (the
//! remote connector, run as its own process on the demo's home) by a scripted chat client over
//! HTTP, and two review cycles ([`reviewer`], docs/review.md): one whose chat proves its
//! connector, one that gets the packet. The control room opens on the sandbox; with `--headless` the same runs to the end and a
//! JSON summary says whether each cycle ended where it should.
//!
//! Layout: [`sandbox`] (the directory and the token), [`project`] (the calculator),
//! [`scenarios`] (the eight cycles), [`webgpt`] (the scripted WebGPT), [`coordinator`] (the
//! scripted agent following `next`), [`connector`] (`serve` and the scripted chat client, over
//! [`http`]), [`pace`] (pauses and the stop signal), [`summary`].

pub mod ci_worker;
pub mod connector;
pub mod coordinator;
pub mod http;
pub mod pace;
pub mod package_index;
pub mod project;
pub mod reviewer;
pub mod sandbox;
pub mod scenarios;
pub mod summary;
pub mod webgpt;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use github_emulator::{Emulator, EmulatorConfig, EmulatorError};
use serde_json::json;
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cycle::Ctx;
use crate::cycle::context::{Settings, process_redactor};
use crate::cycle::pr_test::Engine;
use crate::domain::commands::{CommandsError, parse_commands};
use crate::domain::word::Word;
use crate::redact::Redactor;

use coordinator::{Confirmer, Demo, Finished};
use pace::Pace;
use sandbox::Sandbox;
use summary::Summary;

/// `--headless` gives up (stopping every cycle) after this long; the demo needs seconds.
const WATCHDOG: Duration = Duration::from_secs(120);
/// How long stopped drivers get to wind down (a running test is cancelled) before they are
/// aborted.
const GRACE: Duration = Duration::from_secs(10);

/// `forgeloop demo`'s options, as the command line gave them.
#[derive(Debug, Clone, Default)]
pub struct DemoOptions {
    /// Keep the sandbox here (`--home`); a temporary one is removed at the end.
    pub home: Option<PathBuf>,
    /// No control room: run to the end and print the summary (`--headless`).
    pub headless: bool,
    /// `--speed N`: N times the default pace.
    pub speed: Option<f64>,
}

/// Why the demo could not run, or failed on the way.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// `--speed` is not a positive number.
    #[error("--speed must be a positive number (1 is the default pace, 4 four times faster); got {0}")]
    Speed(f64),
    /// The control-room demo was asked for without a terminal.
    #[error(
        "the demo opens the control room, which needs a terminal; run `forgeloop demo --headless` for the same demo with a JSON summary"
    )]
    NotATerminal,
    /// `--home` cannot be the demo's sandbox (not empty, and not a previous demo sandbox).
    #[error("cannot use {path} as the demo sandbox: {reason}")]
    Home {
        /// The `--home` given.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// A file or directory operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, as the message's first half.
        context: String,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The GitHub emulator failed.
    #[error(transparent)]
    Emulator(#[from] EmulatorError),
    /// A forgeloop use case failed (the demo drives the real ones).
    #[error(transparent)]
    Forgeloop(#[from] crate::error::Error),
    /// The control room failed.
    #[error("the control room failed: {0}")]
    Tui(#[from] crate::tui::TuiError),
    /// The demo's own commands file is invalid (a bug).
    #[error("the demo's commands file is invalid: {0}")]
    Commands(#[from] CommandsError),
    /// `forgeloop serve` (the connector cycle's server) did not start.
    #[error("forgeloop serve did not start: {0}")]
    Serve(String),
    /// `git` or its `http-backend` is missing; the emulator needs both.
    #[error(
        "the demo needs `git` on PATH: its GitHub emulator builds the demo repository with git and serves it through `git http-backend`; {0}. Install git (for example `apt-get install git`) and run the demo again"
    )]
    NoGit(String),
}

impl DemoError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> DemoError {
        DemoError::Io { context: context.into(), source }
    }

    /// The JSON error document, with a forgeloop error's details (a busy lock's pid, …).
    pub fn document(&self) -> serde_json::Value {
        let details = match self {
            DemoError::Forgeloop(err) => err.details(),
            _ => serde_json::Map::new(),
        };
        crate::error::document(self.status(), &self.to_string(), details)
    }

    /// The `status` word of the JSON error document.
    pub fn status(&self) -> Word {
        match self {
            DemoError::Speed(_) | DemoError::NotATerminal | DemoError::Home { .. } | DemoError::NoGit(_) => {
                Word::Refused
            }
            _ => Word::DemoFailed,
        }
    }
}

/// Runs the demo and prints its JSON summary (headless) or a few lines of it (after the
/// control room), or its error; returns the exit code: 0 when every cycle ended where expected
/// (with the control room: whenever the person quit normally), 2 otherwise.
pub fn main(mut opts: DemoOptions) -> i32 {
    // Only an explicit `--home` keeps a sandbox: `FORGELOOP_HOME` names the person's real
    // forgeloop home, which must never become (or be refused as) a demo sandbox.
    let flag = std::env::args_os().any(|a| a == "--home" || a.to_string_lossy().starts_with("--home="));
    if !flag {
        opts.home = None;
    }
    match run(&opts) {
        Ok((redactor, summary)) if opts.headless => {
            crate::output::json(&redactor, &summary);
            if summary.all_ok() { 0 } else { 2 }
        }
        // Back from the control room: a few lines, not a page of JSON, in the person's terminal.
        Ok((redactor, summary)) => {
            print!("{}", redactor.redact(&summary.brief()));
            0
        }
        Err(err) => {
            let redactor = process_redactor(None);
            crate::output::json(&redactor, &err.document());
            2
        }
    }
}

fn run(opts: &DemoOptions) -> Result<(Redactor, Summary), DemoError> {
    if let Some(speed) = opts.speed
        && !(speed.is_finite() && speed > 0.0)
    {
        return Err(DemoError::Speed(speed));
    }
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !opts.headless && !terminal {
        return Err(DemoError::NotATerminal);
    }
    require_git()?;
    let started = Instant::now();
    let token = sandbox::fresh_token();
    if !opts.headless {
        // The control room's rerun finds its token like every forgeloop command (GH_TOKEN
        // first): point it at this run's emulator token, so `r` works in the demo. Test
        // commands never see it (their environment is an allowlist).
        // SAFETY: no other thread exists yet (the runtimes start below), so nothing reads the
        // environment concurrently.
        unsafe { std::env::set_var("GH_TOKEN", &token) };
    }
    let sandbox = Sandbox::create(opts.home.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("forgeloop-demo")
        .enable_all()
        .build()
        .map_err(|e| DemoError::io("cannot start the async runtime", e))?;
    let result = run_on(&runtime, &sandbox, opts, token);
    // Nothing of the demo outlives this: drivers were joined, the emulator stopped; what is
    // left (idle connections) goes with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(2));
    let kept = sandbox.kept();
    let root = sandbox.root().display().to_string();
    let removed = sandbox.finish();
    let (redactor, mut summary) = result?;
    removed?;
    summary.sandbox = root;
    summary.sandbox_kept = kept;
    summary.elapsed_seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    Ok((redactor, summary))
}

/// The emulator runs `git` (to build repositories) and `git http-backend` (to serve them):
/// both must be there before anything starts, or the demo would fail half-way with a less
/// helpful message.
fn require_git() -> Result<(), DemoError> {
    let out = std::process::Command::new("git")
        .arg("--exec-path")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| DemoError::NoGit(format!("running `git` failed: {e}")))?;
    if !out.status.success() {
        return Err(DemoError::NoGit(format!("`git --exec-path` failed ({})", out.status)));
    }
    let exec_path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !exec_path.join("git-http-backend").is_file() {
        return Err(DemoError::NoGit(format!("this git has no http-backend in {}", exec_path.display())));
    }
    Ok(())
}

fn run_on(
    runtime: &Runtime,
    sandbox: &Sandbox,
    opts: &DemoOptions,
    token: String,
) -> Result<(Redactor, Summary), DemoError> {
    let confirmer = if opts.headless { Confirmer::StandIn } else { Confirmer::Person };
    let pace = Pace::new(opts.headless, opts.speed);
    let demo = runtime.block_on(setup(sandbox, confirmer, pace, token.clone()))?;
    let scenarios = scenarios::all();
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    // The repository's CI (design §5.7): runs `sh test.sh` for every PR head, as GitHub
    // Actions would; the `on_ci` cycle reads its check runs instead of testing locally.
    let mut ci = ci_worker::CiConfig::from_ctx(
        &demo.ctx,
        vec![demo.repo.repo.clone()],
        sandbox.emulator_root().join(".ci-mirrors"),
    );
    ci.queue_delay = demo.pace.unit().mul_f64(0.5);
    ci.run_delay = demo.pace.unit();
    let ci = runtime.block_on(ci_worker::CiWorker::start(demo.emulator.clone(), ci, stop_rx.clone()))?;
    // The remote connector, as the person runs it (design §8.1): its own process on this home.
    // Should it not start, the connector cycle says why and the others run on.
    let serve = if scenarios.iter().any(|s| s.connector) {
        Some(runtime.block_on(connector::ServeProcess::start(&demo, &token)).map_err(|e| e.to_string()))
    } else {
        None
    };
    let serving = match &serve {
        Some(Ok(process)) => Ok(process.serving.clone()),
        Some(Err(why)) => Err(why.clone()),
        None => Err("forgeloop serve was not started".to_owned()),
    };
    let handles: Vec<JoinHandle<Finished>> = scenarios
        .iter()
        .map(|s| {
            if s.review.is_some() {
                runtime.spawn(reviewer::drive(demo.clone(), s.clone(), stop_rx.clone()))
            } else if s.connector {
                runtime.spawn(connector::drive(demo.clone(), s.clone(), serving.clone(), stop_rx.clone()))
            } else {
                runtime.spawn(coordinator::drive(demo.clone(), s.clone(), stop_rx.clone()))
            }
        })
        .collect();

    let (finished, tui) = if opts.headless {
        runtime.spawn(stop_on_signals(stop_tx.clone()));
        (runtime.block_on(join(handles, &stop_tx, WATCHDOG)), Ok(()))
    } else {
        let tui = crate::tui::run(demo.ctx.clone(), crate::tui::TuiOptions::default());
        let _ = stop_tx.send(true);
        (runtime.block_on(join(handles, &stop_tx, GRACE)), tui)
    };

    // Before the emulator goes: the worker holds a handle to it.
    runtime.block_on(ci.stop());
    if let Some(Ok(process)) = serve {
        runtime.block_on(process.stop());
    }
    let cycles = summary::cycles(&demo, &scenarios, &finished);
    let api = demo.emulator.api_base();
    let redactor = demo.ctx.redactor.clone();
    let emulator = demo.emulator.clone();
    drop(demo);
    let stopped = match Arc::try_unwrap(emulator) {
        Ok(emulator) => {
            runtime.block_on(emulator.shutdown());
            true
        }
        // A clone is still held somewhere: dropping ours does not stop it; the runtime's
        // shutdown does.
        Err(_) => false,
    };
    tui?;
    let mut summary = Summary {
        status: Word::DemoOk,
        mode: if opts.headless { "headless" } else { "tui" },
        sandbox: String::new(),
        sandbox_kept: false,
        emulator: json!({
            "api": api,
            "what": "the built-in GitHub emulator (demo and tests only; not GitHub)",
            "stopped": stopped,
        }),
        elapsed_seconds: 0.0,
        cycles,
    };
    if !summary.all_ok() {
        let stopped_early = finished.iter().any(|f| f.stopped);
        summary.status = if stopped_early { Word::DemoStopped } else { Word::DemoUnexpected };
    }
    Ok((redactor, summary))
}

/// The emulator with the project on `main`, the commands file, the context and the client.
async fn setup(sandbox: &Sandbox, confirmer: Confirmer, pace: Pace, token: String) -> Result<Arc<Demo>, DemoError> {
    let emulator = Emulator::start(EmulatorConfig {
        root: sandbox.emulator_root(),
        token: Some(token.clone()),
        login: project::LOGIN.to_owned(),
        // A fresh random secret nobody is told: the demo drives the emulator through its Rust
        // handle, so no one can use the admin API to push code the demo would then run.
        admin_secret: None,
    })
    .await?;
    let repo = emulator.create_repo(project::LOGIN, project::REPO_NAME, true).await?;
    let files = project::main_files();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    emulator
        .commit_files(&repo, &repo.default_branch, &files, "calc: the add operation, its test and the test runner")
        .await?;

    let commands_path = sandbox.root().join("commands.json");
    crate::store::atomic::write_atomic(&commands_path, project::COMMANDS_JSON.as_bytes())
        .map_err(|e| DemoError::io(format!("cannot write {}", commands_path.display()), e))?;
    let commands = parse_commands(project::COMMANDS_JSON)?;
    let ci_commands = parse_commands(project::CI_COMMANDS_JSON)?;
    // The team's package index (design §5.6): checklib as a git repository on 127.0.0.1, which
    // the sandbox's config does not allow until the person says so.
    let checklib = package_index::GitPackage {
        name: "checklib".into(),
        files: vec![("lib.sh".into(), project::CHECKLIB_SH.into())],
    };
    let package_index = package_index::PackageIndex::start_with(&[], &[checklib])
        .map_err(|e| DemoError::io("cannot start the demo's package index", e))?;
    let dependency_commands = parse_commands(&project::dependency_commands_json(&package_index.git_url("checklib")))?;
    let config_path = sandbox.root().join("config.toml");
    crate::store::atomic::write_atomic(&config_path, project::CONFIG_TOML.as_bytes())
        .map_err(|e| DemoError::io(format!("cannot write {}", config_path.display()), e))?;

    let mut settings = Settings::for_home(sandbox.root().to_path_buf()).with_github_api(&emulator.api_base());
    settings.config = crate::config::Config::load(&config_path, true).map_err(crate::error::Error::from)?;
    settings.config_path = Some(config_path);
    // The emulator answers at once: poll its check runs often (GitHub's defaults are 5 s to 60 s).
    settings.config.checks.poll_min_s = Some(0.1);
    settings.config.checks.poll_max_s = Some(pace.unit().as_secs_f64().clamp(0.2, 2.0));
    let found = crate::github::token::Token { value: token.clone(), source: "the demo's emulator" };
    let ctx = Ctx::new(settings, Some(found))?;
    crate::store::private::create_dir_all(&ctx.home.cycles_dir())
        .map_err(|e| DemoError::io("cannot create the sandbox's cycles directory", e))?;
    // The person bound the demo repository to a Project: the connector may only use
    // repositories bound in the registry (design §8.1).
    let key = crate::registry::RepoKey::parse(&repo.repo.full_name())
        .map_err(|e| crate::error::Error::Invalid(format!("the demo repository's key: {e}")))?;
    crate::registry::Registry::new(ctx.registry.clone())
        .bind(&key, project::PROJECT_URL, "calc (the demo's Project)")
        .map_err(crate::error::Error::from)?;
    let engine = Engine::connect(&ctx.github_api, Some(token))?;
    Ok(Arc::new(Demo {
        ctx,
        engine,
        emulator: Arc::new(emulator),
        repo,
        commands,
        ci_commands,
        dependency_commands,
        package_index,
        pace,
        confirmer,
    }))
}

/// Waits for every driver until `limit`; then raises the stop signal and gives them
/// [`GRACE`] to wind down before aborting what is left.
async fn join(handles: Vec<JoinHandle<Finished>>, stop: &watch::Sender<bool>, limit: Duration) -> Vec<Finished> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut out = Vec::with_capacity(handles.len());
    for mut handle in handles {
        let joined = match tokio::time::timeout_at(deadline, &mut handle).await {
            Ok(joined) => joined,
            Err(_) => {
                let _ = stop.send(true);
                match tokio::time::timeout(GRACE, &mut handle).await {
                    Ok(joined) => joined,
                    Err(_) => {
                        handle.abort();
                        let _ = handle.await;
                        out.push(Finished {
                            error: Some("the cycle's driver did not stop in time".into()),
                            stopped: true,
                            steps: 0,
                            cycle: None,
                        });
                        continue;
                    }
                }
            }
        };
        out.push(joined.unwrap_or_else(|e| Finished {
            error: Some(format!("the cycle's driver failed: {e}")),
            ..Finished::default()
        }));
    }
    out
}

/// Ctrl-C or SIGTERM stops a headless demo cleanly (running tests are cancelled).
async fn stop_on_signals(stop: Arc<watch::Sender<bool>>) {
    crate::signals::interrupted().await;
    let _ = stop.send(true);
}

#[cfg(test)]
mod document_tests {
    use super::*;

    #[test]
    fn a_forgeloop_error_keeps_its_details_in_the_demo_document() {
        let lock = crate::store::lock::LockError::Busy { pid: Some(7), path: PathBuf::from("/c.lock") };
        let doc = DemoError::Forgeloop(crate::error::Error::Lock(lock)).document();
        assert_eq!(doc["status"], "DEMO_FAILED");
        assert_eq!(doc["pid"], 7);
        assert!(doc["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
}
