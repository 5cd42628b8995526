//! The one effect executor. [`Executor::plan`] turns each [`Effect`] into [`Work`]: the file
//! reads, use cases (with the messages the person sees), the panes' own loads (each pane says
//! what its loads take; the answer goes back to it as `Event::Pane`), the rerun, sizing a
//! diff and the browser, as closures and futures that end in the [`Event`] the app
//! gets back. Where that work runs is the driver's choice: the runtime (`runtime.rs`) uses its
//! loader thread, `spawn_blocking`, tasks and the terminal; the synchronous driver of tests
//! and benches (`sync.rs`) runs the same closures at once. So what tests exercise is what
//! people run.

use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::cycle::actions::{self, EditedBrief};
use crate::cycle::allow_network;
use crate::cycle::files::CyclePaths;
use crate::cycle::outbox;
use crate::cycle::say;
use crate::cycle::stop;
use crate::domain::state::Actor;

use super::app::{Effect, Event, UseCase};
use super::clipboard;
use super::effects;
use super::load;
use super::watch::WatchDir;
use crate::tui::pager::log::LogRequest;
use crate::tui::panes::PaneWork;

/// Blocking work whose outcome is an event.
pub type Job = Box<dyn FnOnce() -> Event + Send>;
/// Waiting work (a process, the network) whose outcome is an event.
pub type Task = Pin<Box<dyn Future<Output = Event> + Send>>;

/// An effect, ready to be carried out; each kind says what it needs, not where it runs.
pub enum Work {
    /// Nothing left to do (a cancel already signalled).
    Done,
    /// A file read: results must arrive in the order asked (a newer read of a state file is
    /// never overtaken by an older one).
    Load(Job),
    /// A use case: takes the cycle lock and fsyncs, so it blocks.
    Blocking(Job),
    /// Waits on a process or the network: the rerun, the browser.
    Task(Task),
    /// For the log reader, which keeps the open file between requests.
    Log(LogRequest),
    /// The directories to watch.
    Watch(Vec<WatchDir>),
    /// Text for the clipboard through the terminal (OSC 52), already redacted; see [`copy`].
    Copy(String),
    /// A bell and desktop notification through the terminal, already redacted.
    Notify(String),
    /// Needs the terminal itself: quit, suspend, the editor.
    Terminal(Effect),
}

/// Carries out effects: owns what outlives one effect (the context, the cancel switches of
/// reruns in flight).
pub struct Executor {
    ctx: Ctx,
    extra_dirs: Vec<PathBuf>,
    cancels: HashMap<PathBuf, watch::Sender<bool>>,
}

impl Executor {
    /// An executor for effects in `ctx`; `extra_dirs` are searched for cycles too.
    pub fn new(ctx: Ctx, extra_dirs: Vec<PathBuf>) -> Executor {
        Executor { ctx, extra_dirs, cancels: HashMap::new() }
    }

    /// The context effects run in.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// What carrying out `effect` takes.
    pub fn plan(&mut self, effect: Effect) -> Work {
        let redactor = self.ctx.redactor.clone();
        match effect {
            Effect::Quit | Effect::Suspend | Effect::EditBrief { .. } | Effect::EditMessage { .. } => {
                Work::Terminal(effect)
            }
            Effect::Discover => {
                let ctx = self.ctx.clone();
                let extra = self.extra_dirs.clone();
                Work::Load(Box::new(move || Event::Discovered(load::discover(&ctx, &extra))))
            }
            Effect::LoadCycles(paths) => Work::Load(Box::new(move || {
                let mut loaded = Vec::new();
                let mut gone = Vec::new();
                for path in paths {
                    match load::load_entry(&redactor, &path) {
                        Some(entry) => loaded.push(entry),
                        None => gone.push(path),
                    }
                }
                Event::CyclesLoaded { loaded, gone }
            })),
            Effect::LoadJournal(path) => Work::Load(Box::new(move || {
                let result = match CyclePaths::new(path.clone()) {
                    Ok(paths) => load::load_journal(&redactor, &paths.journal()),
                    Err(e) => Err(e.to_string()),
                };
                Event::JournalLoaded { path, result }
            })),
            Effect::ListRuns(path) => Work::Load(Box::new(move || {
                let runs = CyclePaths::new(path.clone()).map(|p| load::list_runs(&p.runs())).unwrap_or_default();
                Event::RunsListed { path, runs }
            })),
            Effect::Screen(load) => match load.work(&self.ctx) {
                PaneWork::Load(job) => Work::Load(Box::new(move || Event::Screen(job()))),
                PaneWork::Blocking(job) => Work::Blocking(Box::new(move || Event::Screen(job()))),
                PaneWork::Task(task) => Work::Task(Box::pin(async move { Event::Screen(task.await) })),
                PaneWork::Reader(request) => Work::Log(request),
            },
            Effect::LoadRegistry => {
                let registry = self.ctx.registry.clone();
                Work::Load(Box::new(move || Event::RegistryLoaded(load::load_registry(&redactor, &registry))))
            }
            Effect::LoadSources(repository) => {
                let registry = self.ctx.registry.clone();
                Work::Load(Box::new(move || {
                    let sources = load::load_sources(&redactor, &registry, &repository);
                    Event::SourcesLoaded { repository, sources }
                }))
            }
            Effect::LoadRunReport { path, iteration, report } => Work::Load(Box::new(move || {
                let result = load::load_integrity(&redactor, &report);
                Event::RunReportLoaded { path, iteration, result }
            })),
            Effect::Pane(load) => match load.work(&self.ctx) {
                PaneWork::Load(job) => Work::Load(Box::new(move || Event::Pane(job()))),
                PaneWork::Blocking(job) => Work::Blocking(Box::new(move || Event::Pane(job()))),
                PaneWork::Task(task) => Work::Task(Box::pin(async move { Event::Pane(task.await) })),
                PaneWork::Reader(request) => Work::Log(request),
            },
            Effect::SizeDiff { path, iteration } => {
                let ctx = self.ctx.clone();
                Work::Task(Box::pin(async move {
                    let result = match CyclePaths::new(path.clone()) {
                        Ok(paths) => effects::make_diff(ctx, paths, iteration, false).await.map(drop),
                        Err(e) => Err(e.to_string()),
                    };
                    Event::DiffSized { path, result }
                }))
            }
            Effect::Watch(dirs) => Work::Watch(dirs),
            Effect::Confirm { path, edited } => self.use_case(UseCase::Confirm, path, move |ctx, paths| {
                let edited =
                    edited.map(|(webgpt_question, intent_brief)| EditedBrief { webgpt_question, intent_brief });
                actions::confirm(ctx, paths, edited, "tui", Actor::Human)
                    .map(|saved| format!("brief confirmed; the prompt is issued ({})", saved.state.status))
            }),
            Effect::Abort { path, reason } => self.use_case(UseCase::Abort, path, move |ctx, paths| {
                stop::abort(ctx, paths, &reason, Actor::Human).map(|stopped| match stopped.holder {
                    Some(pid) => format!("forgeloop pid {pid} stopped its run; the cycle is aborted"),
                    None => "cycle aborted".to_owned(),
                })
            }),
            Effect::StopRun { path } => self.use_case(UseCase::Cancel, path, |ctx, paths| {
                stop::cancel(ctx, paths, Actor::Human, "cancelled from the control room").map(|stopped| {
                    format!(
                        "run cancelled: forgeloop pid {} stopped it (not an iteration; the cycle is {})",
                        stopped.holder.unwrap_or_default(),
                        stopped.state.status
                    )
                })
            }),
            Effect::Unblock { path } => self.use_case(UseCase::Unblock, path, |ctx, paths| {
                actions::unblock(ctx, paths).map(|saved| format!("unblocked; now {}", saved.state.status))
            }),
            Effect::AllowHosts { path } => self.use_case(UseCase::AllowHosts, path, |ctx, paths| {
                allow_network::allow_refused_hosts(ctx, paths, Actor::Human).map(|allowed| {
                    format!(
                        "allowed {} for {} in {} ({}); the next run may reach them",
                        allowed.entries.join(", "),
                        allowed.repository,
                        allowed.config.display(),
                        allowed.table
                    )
                })
            }),
            Effect::DropMessage { path } => self.use_case(UseCase::DropMessage, path, |ctx, paths| {
                outbox::drop_pending(ctx, paths, Actor::Human).map(|saved| {
                    let kind = saved
                        .state
                        .withdrawn
                        .as_ref()
                        .map_or("message", |w| crate::tui::widgets::outbox_kind_name(w.kind));
                    format!("dropped the pending {kind}: WebGPT will not be sent it")
                })
            }),
            Effect::Say { path, text } => self.use_case(UseCase::Say, path, move |ctx, paths| {
                say::say(ctx, paths, &text, Actor::Human)
                    .map(|_| "message for WebGPT is in the outbox; the coordinator sends it next".to_owned())
            }),
            Effect::Approve { path } => self.use_case(UseCase::Approve, path, |ctx, paths| {
                actions::approve(ctx, paths, "tui").map(|saved| format!("approved; now {}", saved.state.status))
            }),
            Effect::Extend { path, by } => self.use_case(UseCase::Extend, path, move |ctx, paths| {
                actions::extend(ctx, paths, by).map(|saved| format!("cap raised to {}", saved.state.max_iterations))
            }),
            Effect::Rerun { path } => {
                let (cancel_tx, cancel_rx) = watch::channel(false);
                self.cancels.insert(path.clone(), cancel_tx);
                let ctx = self.ctx.clone();
                Work::Task(Box::pin(async move {
                    let result = match CyclePaths::new(path.clone()) {
                        Ok(paths) => effects::run_rerun(ctx.clone(), paths, cancel_rx).await,
                        Err(e) => Err(e.to_string()),
                    };
                    let result = result.map_err(|e| ctx.redactor.redact(&e).into_owned());
                    Event::RunFinished { path, result }
                }))
            }
            Effect::CancelRun { path } => {
                if let Some(cancel) = self.cancels.get(&path) {
                    let _ = cancel.send(true);
                }
                Work::Done
            }
            Effect::Copy(text) => Work::Copy(redactor.redact(&text).into_owned()),
            Effect::Notify(text) => Work::Notify(redactor.redact(&text).into_owned()),
            Effect::OpenUrl(url) => Work::Task(Box::pin(async move {
                let result = effects::open_url(&url).await;
                Event::Opened { url, result }
            })),
        }
    }

    /// A use case as blocking work; its outcome (errors redacted) comes back as `UseCaseDone`.
    fn use_case<F>(&self, what: UseCase, path: PathBuf, call: F) -> Work
    where
        F: FnOnce(&Ctx, &CyclePaths) -> crate::error::Result<String> + Send + 'static,
    {
        let ctx = self.ctx.clone();
        Work::Blocking(Box::new(move || {
            let result = CyclePaths::new(path.clone())
                .map_err(crate::error::Error::from)
                .and_then(|paths| call(&ctx, &paths))
                .map_err(|e| ctx.redactor.redact(&e.to_string()).into_owned());
            Event::UseCaseDone { what, path, result }
        }))
    }

    /// Forgets the cancel switches of runs the app no longer tracks.
    pub fn retain_runs(&mut self, live: impl Fn(&Path) -> bool) {
        self.cancels.retain(|path, _| live(path));
    }

    /// Cancels every rerun in flight (the control room is closing).
    pub fn cancel_all(&self) {
        for cancel in self.cancels.values() {
            let _ = cancel.send(true);
        }
    }
}

/// Copies `text` through the terminal `out` (OSC 52), or says why it cannot.
pub fn copy(text: &str, out: Option<&mut dyn Write>) -> Event {
    let result = match out {
        Some(out) => out
            .write_all(clipboard::osc52(text).as_bytes())
            .and_then(|_| out.flush())
            .map(|_| text.chars().count())
            .map_err(|e| e.to_string()),
        None => Err("no terminal to copy through".into()),
    };
    Event::Copied(result)
}
