//! A synchronous stand-in for the runtime: carries out loading, log and use-case effects at
//! once, on the calling thread, with the same loaders. Tests and benchmarks use it to bring
//! an [`App`] to a settled state without a terminal, threads or timing.

use std::path::PathBuf;

use crate::cycle::Ctx;
use crate::cycle::actions::{self, EditedBrief};
use crate::domain::state::Actor;
use crate::store::layout::CyclePaths;

use super::app::{Action, App, Effect};
use super::load;
use super::log_view::{self, FindKind, LogDoc, LogRequest};

pub struct SyncDriver {
    pub ctx: Ctx,
    pub extra_dirs: Vec<PathBuf>,
    log_path: Option<PathBuf>,
    generation: u64,
    /// Effects the driver does not carry out (rerun, copy, open, quit…), in order.
    pub unhandled: Vec<Effect>,
}

impl SyncDriver {
    pub fn new(ctx: Ctx, extra_dirs: Vec<PathBuf>) -> SyncDriver {
        SyncDriver { ctx, extra_dirs, log_path: None, generation: 0, unhandled: Vec::new() }
    }

    /// Applies `action`, then every effect it causes, until nothing is left to do.
    pub fn apply(&mut self, app: &mut App, action: Action) {
        let effects = app.update(action);
        self.settle(app, effects);
    }

    /// Starts the app (watch set, discovery, registry) and settles it.
    pub fn start(&mut self, app: &mut App) {
        let effects = app.init();
        self.settle(app, effects);
    }

    pub fn settle(&mut self, app: &mut App, effects: Vec<Effect>) {
        let mut queue: std::collections::VecDeque<Effect> = effects.into();
        let mut budget = 10_000;
        while let Some(effect) = queue.pop_front() {
            budget -= 1;
            if budget == 0 {
                break;
            }
            for action in self.carry_out(effect) {
                queue.extend(app.update(action));
            }
        }
    }

    fn carry_out(&mut self, effect: Effect) -> Vec<Action> {
        let ctx = &self.ctx;
        let r = &ctx.redactor;
        match effect {
            Effect::Discover => vec![Action::Discovered(load::discover(ctx, &self.extra_dirs))],
            Effect::LoadCycles(paths) => {
                let mut loaded = Vec::new();
                let mut gone = Vec::new();
                for path in paths {
                    match load::load_entry(r, &path) {
                        Some(entry) => loaded.push(entry),
                        None => gone.push(path),
                    }
                }
                vec![Action::CyclesLoaded { loaded, gone }]
            }
            Effect::LoadJournal(path) => {
                let result = match CyclePaths::new(path.clone()) {
                    Ok(paths) => load::load_journal(r, &paths.journal()),
                    Err(e) => Err(e.to_string()),
                };
                vec![Action::JournalLoaded { path, result }]
            }
            Effect::ListRuns(path) => {
                let runs = CyclePaths::new(path.clone()).map(|p| load::list_runs(&p.runs())).unwrap_or_default();
                vec![Action::RunsListed { path, runs }]
            }
            Effect::LoadRegistry => vec![Action::RegistryLoaded(load::load_registry(r, &ctx.registry))],
            Effect::LoadSources(repository) => {
                let sources = load::load_sources(r, &ctx.registry, &repository);
                vec![Action::SourcesLoaded { repository, sources }]
            }
            Effect::Watch(_) => Vec::new(),
            Effect::Log(request) => self.log(request),
            Effect::Confirm { path, edited } => self.use_case("confirm", path, |ctx, paths| {
                let edited =
                    edited.map(|(webgpt_question, intent_brief)| EditedBrief { webgpt_question, intent_brief });
                actions::confirm(ctx, paths, edited, "tui", Actor::Human)
                    .map(|s| format!("brief confirmed ({})", s.state.status))
            }),
            Effect::Abort { path, reason } => self.use_case("abort", path, |ctx, paths| {
                actions::abort(ctx, paths, &reason, Actor::Human).map(|_| "cycle aborted".to_owned())
            }),
            Effect::Unblock { path } => self.use_case("unblock", path, |ctx, paths| {
                actions::unblock(ctx, paths).map(|s| format!("unblocked; now {}", s.state.status))
            }),
            Effect::Extend { path, by } => self.use_case("extend", path, |ctx, paths| {
                actions::extend(ctx, paths, by).map(|s| format!("cap raised to {}", s.state.max_iterations))
            }),
            other => {
                self.unhandled.push(other);
                Vec::new()
            }
        }
    }

    fn use_case(
        &self,
        what: &str,
        path: PathBuf,
        call: impl FnOnce(&Ctx, &CyclePaths) -> crate::error::Result<String>,
    ) -> Vec<Action> {
        let result = CyclePaths::new(path.clone())
            .map_err(crate::error::Error::from)
            .and_then(|paths| call(&self.ctx, &paths))
            .map_err(|e| e.to_string());
        vec![Action::UseCaseDone { what: what.to_owned(), path, result }]
    }

    fn log(&mut self, request: LogRequest) -> Vec<Action> {
        let fail = |generation, e: std::io::Error| vec![Action::LogFailed { generation, error: e.to_string() }];
        match request {
            LogRequest::Close => {
                self.log_path = None;
                Vec::new()
            }
            LogRequest::Open { generation, path } => {
                self.generation = generation;
                self.log_path = Some(path);
                Vec::new()
            }
            LogRequest::Window { generation, anchor, height } => {
                let Some(path) = self.log_path.clone().filter(|_| generation == self.generation) else {
                    return Vec::new();
                };
                match LogDoc::open(&path).and_then(|mut d| d.window(&anchor, height, &self.ctx.redactor)) {
                    Ok(mut window) => {
                        window.generation = generation;
                        vec![Action::LogWindow(window)]
                    }
                    Err(e) => fail(generation, e),
                }
            }
            LogRequest::Search { generation, query, from, forward } => {
                let Some(path) = self.log_path.clone().filter(|_| generation == self.generation) else {
                    return Vec::new();
                };
                match LogDoc::open(&path)
                    .and_then(|mut d| log_view::search(&mut d, &query, from, forward, &mut || false))
                {
                    Ok(Some((offset, wrapped))) => {
                        vec![Action::LogFound { generation, kind: FindKind::Search, offset, wrapped }]
                    }
                    Ok(None) => Vec::new(),
                    Err(e) => fail(generation, e),
                }
            }
            LogRequest::FirstError { generation } => {
                let Some(path) = self.log_path.clone().filter(|_| generation == self.generation) else {
                    return Vec::new();
                };
                match LogDoc::open(&path).and_then(|d| log_view::first_error(&d, &mut || false)) {
                    Ok(Some(offset)) => {
                        vec![Action::LogFound { generation, kind: FindKind::Error, offset, wrapped: false }]
                    }
                    Ok(None) => Vec::new(),
                    Err(e) => fail(generation, e),
                }
            }
        }
    }
}
