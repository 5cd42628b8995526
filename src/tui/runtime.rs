//! The runtime: one channel carries terminal input, debounced file changes, background
//! results and (only while something animates) a spinner tick. Each turn drains the
//! channel, applies every message to the [`App`], carries out the effects, then draws once
//! if anything changed, at most once per frame interval. Nothing blocking runs on this task:
//! file reads go to a loader thread, the log to its worker, use cases to `spawn_blocking`.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cycle::Ctx;
use crate::cycle::actions::{self, EditedBrief};
use crate::domain::state::Actor;
use crate::store::layout::CyclePaths;

use super::app::{Action, App, Effect};
use super::clipboard;
use super::editor;
use super::effects;
use super::load;
use super::log_view::LogWorker;
use super::terminal;
use super::views;
use super::watch::{self as dirwatch, DirWatcher, Raw};

/// At most one frame per this interval (~60 fps).
pub const FRAME: Duration = Duration::from_millis(16);
const TICK: Duration = Duration::from_millis(100);
/// Ages are shown in minutes: redraw them this often when nothing else happens.
const CLOCK: Duration = Duration::from_secs(60);

/// What arrives on the runtime's channel.
#[derive(Debug)]
pub enum Msg {
    Action(Action),
    Input(TermEvent),
    Watch(Raw),
}

type Job = Box<dyn FnOnce() -> Action + Send>;

/// Runs file loads one after another, so results arrive in the order they were asked for
/// (a newer read of a state file is never overtaken by an older one).
struct Loader {
    tx: std_mpsc::Sender<Job>,
}

impl Loader {
    fn spawn(out: UnboundedSender<Msg>) -> Loader {
        let (tx, rx) = std_mpsc::channel::<Job>();
        let _ = std::thread::Builder::new().name("forgeloop-load".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                if out.send(Msg::Action(job())).is_err() {
                    return;
                }
            }
        });
        Loader { tx }
    }

    fn run(&self, job: impl FnOnce() -> Action + Send + 'static) {
        let _ = self.tx.send(Box::new(job));
    }
}

pub struct Runtime<B: Backend> {
    pub app: App,
    pub terminal: Terminal<B>,
    ctx: Ctx,
    extra_dirs: Vec<PathBuf>,
    tx: UnboundedSender<Msg>,
    rx: UnboundedReceiver<Msg>,
    watcher: Option<DirWatcher>,
    loader: Loader,
    log: LogWorker,
    cancels: HashMap<PathBuf, watch::Sender<bool>>,
    ticker: Option<JoinHandle<()>>,
    input: Option<JoinHandle<()>>,
    /// A real terminal: suspension, the editor and OSC 52 are possible.
    interactive: bool,
    last_draw: Option<Instant>,
    /// Frames drawn so far (for benchmarks and tests).
    pub frames: u64,
}

impl<B: Backend> Runtime<B> {
    /// Must be called inside a tokio runtime.
    pub fn new(ctx: Ctx, extra_dirs: Vec<PathBuf>, app: App, terminal: Terminal<B>, interactive: bool) -> Runtime<B> {
        let (tx, rx) = unbounded_channel();
        let (raw_tx, raw_rx) = dirwatch::channel();
        let watcher = match DirWatcher::new(raw_tx) {
            Ok(w) => Some(w),
            Err(err) => {
                let _ = tx.send(Msg::Action(Action::Watching { dirs: 0, problems: vec![err.to_string()] }));
                None
            }
        };
        let watch_out = tx.clone();
        dirwatch::debounce(raw_rx, move |raw| {
            let _ = watch_out.send(Msg::Watch(raw));
        });
        let log_out = tx.clone();
        let log = LogWorker::spawn(
            ctx.redactor.clone(),
            Box::new(move |action| {
                let _ = log_out.send(Msg::Action(action));
            }),
        );
        let loader = Loader::spawn(tx.clone());
        let mut runtime = Runtime {
            app,
            terminal,
            ctx,
            extra_dirs,
            tx,
            rx,
            watcher,
            loader,
            log,
            cancels: HashMap::new(),
            ticker: None,
            input: None,
            interactive,
            last_draw: None,
            frames: 0,
        };
        let init = runtime.app.init();
        runtime.execute(init);
        runtime
    }

    /// A sender for messages into the runtime (tests, benches, signal handlers).
    pub fn sender(&self) -> UnboundedSender<Msg> {
        self.tx.clone()
    }

    /// Starts reading terminal input.
    pub fn start_input(&mut self) {
        let tx = self.tx.clone();
        self.input = Some(tokio::spawn(async move {
            let mut stream = EventStream::new();
            loop {
                let next = std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut stream), cx)).await;
                match next {
                    Some(Ok(event)) => {
                        if tx.send(Msg::Input(event)).is_err() {
                            return;
                        }
                    }
                    Some(Err(_)) | None => return,
                }
            }
        }));
    }

    async fn stop_input(&mut self) {
        if let Some(handle) = self.input.take() {
            handle.abort();
            let _ = handle.await;
        }
    }

    /// Runs until the app quits.
    pub async fn run(mut self) -> std::io::Result<()> {
        self.draw()?;
        while self.step().await? {}
        for cancel in self.cancels.values() {
            let _ = cancel.send(true);
        }
        self.stop_input().await;
        Ok(())
    }

    /// One turn: wait for a message, drain the queue, draw if needed. `false` once quit.
    pub async fn step(&mut self) -> std::io::Result<bool> {
        match tokio::time::timeout(CLOCK, self.rx.recv()).await {
            Ok(Some(msg)) => self.handle(msg).await,
            Ok(None) => return Ok(false),
            Err(_) => {
                let now = self.ctx.clock.now();
                self.apply(Action::Clock(now)).await;
            }
        }
        while let Ok(msg) = self.rx.try_recv() {
            self.handle(msg).await;
            if self.app.quit {
                break;
            }
        }
        self.animate();
        if self.app.quit {
            return Ok(false);
        }
        if self.app.dirty {
            if let Some(last) = self.last_draw {
                let since = last.elapsed();
                if since < FRAME {
                    tokio::time::sleep(FRAME - since).await;
                }
            }
            self.draw()?;
        }
        Ok(true)
    }

    pub fn draw(&mut self) -> std::io::Result<()> {
        self.app.now = self.ctx.clock.now();
        let app = &self.app;
        self.terminal.draw(|frame| views::render(app, frame)).map_err(|e| std::io::Error::other(e.to_string()))?;
        self.app.dirty = false;
        self.last_draw = Some(Instant::now());
        self.frames += 1;
        Ok(())
    }

    /// The spinner ticks only while something runs.
    fn animate(&mut self) {
        let animating = self.app.animating();
        match (&self.ticker, animating) {
            (None, true) => {
                let tx = self.tx.clone();
                self.ticker = Some(tokio::spawn(async move {
                    let mut interval = tokio::time::interval(TICK);
                    loop {
                        interval.tick().await;
                        if tx.send(Msg::Action(Action::Tick)).is_err() {
                            return;
                        }
                    }
                }));
            }
            (Some(ticker), false) => {
                ticker.abort();
                self.ticker = None;
            }
            _ => {}
        }
    }

    async fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Action(action) => self.apply(action).await,
            Msg::Input(event) => {
                let action = match event {
                    TermEvent::Key(key) if key.kind != KeyEventKind::Release => Action::Key(key),
                    TermEvent::Mouse(mouse) => Action::Mouse(mouse),
                    TermEvent::Paste(text) => Action::Paste(text),
                    TermEvent::Resize(_, _) => Action::Resize,
                    _ => return,
                };
                self.apply(action).await;
            }
            Msg::Watch(Raw::Paths(mut paths)) => {
                if let Some(watcher) = &mut self.watcher
                    && watcher.affects(&paths)
                {
                    // Directories that just appeared may already hold files: look at them.
                    paths.extend(watcher.reconcile());
                    let (dirs, problems) = (watcher.watched(), watcher.problems().to_vec());
                    self.apply(Action::Watching { dirs, problems }).await;
                }
                self.apply(Action::FilesChanged(paths)).await;
            }
            Msg::Watch(Raw::Rescan) => {
                let mut paths: Vec<PathBuf> = self.app.cycles.iter().map(|c| c.path.clone()).collect();
                paths.push(self.app.roots.cycles_dir.clone());
                paths.push(self.app.roots.task_spaces_dir.clone());
                paths.push(self.app.roots.registry.clone());
                self.apply(Action::FilesChanged(paths)).await;
            }
            Msg::Watch(Raw::Error(error)) => {
                let dirs = self.watcher.as_ref().map_or(0, DirWatcher::watched);
                self.apply(Action::Watching { dirs, problems: vec![error] }).await;
            }
        }
    }

    async fn apply(&mut self, action: Action) {
        let effects = self.app.update(action);
        self.execute_async(effects).await;
    }

    /// Effects that need the terminal are awaited here; all others are started and return.
    async fn execute_async(&mut self, effects: Vec<Effect>) {
        let mut rest = Vec::new();
        for effect in effects {
            match effect {
                Effect::Suspend => self.suspend().await,
                Effect::EditBrief { path, text } => {
                    let result = self.edit(&text).await;
                    let effects = self.app.update(Action::EditorFinished { path, result });
                    rest.extend(effects);
                }
                other => rest.push(other),
            }
        }
        self.execute(rest);
    }

    fn send(&self, action: Action) {
        let _ = self.tx.send(Msg::Action(action));
    }

    fn execute(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Quit | Effect::Suspend | Effect::EditBrief { .. } => {}
                Effect::Discover => {
                    let ctx = self.ctx.clone();
                    let extra = self.extra_dirs.clone();
                    self.loader.run(move || Action::Discovered(load::discover(&ctx, &extra)));
                }
                Effect::LoadCycles(paths) => {
                    let redactor = self.ctx.redactor.clone();
                    self.loader.run(move || {
                        let mut loaded = Vec::new();
                        let mut gone = Vec::new();
                        for path in paths {
                            match load::load_entry(&redactor, &path) {
                                Some(entry) => loaded.push(entry),
                                None => gone.push(path),
                            }
                        }
                        Action::CyclesLoaded { loaded, gone }
                    });
                }
                Effect::LoadJournal(path) => {
                    let redactor = self.ctx.redactor.clone();
                    self.loader.run(move || {
                        let result = match CyclePaths::new(path.clone()) {
                            Ok(paths) => load::load_journal(&redactor, &paths.journal()),
                            Err(e) => Err(e.to_string()),
                        };
                        Action::JournalLoaded { path, result }
                    });
                }
                Effect::ListRuns(path) => self.loader.run(move || {
                    let runs = CyclePaths::new(path.clone()).map(|p| load::list_runs(&p.runs())).unwrap_or_default();
                    Action::RunsListed { path, runs }
                }),
                Effect::LoadRegistry => {
                    let redactor = self.ctx.redactor.clone();
                    let registry = self.ctx.registry.clone();
                    self.loader.run(move || Action::RegistryLoaded(load::load_registry(&redactor, &registry)));
                }
                Effect::LoadSources(repository) => {
                    let redactor = self.ctx.redactor.clone();
                    let registry = self.ctx.registry.clone();
                    self.loader.run(move || {
                        let sources = load::load_sources(&redactor, &registry, &repository);
                        Action::SourcesLoaded { repository, sources }
                    });
                }
                Effect::Watch(dirs) => {
                    if let Some(watcher) = &mut self.watcher {
                        let appeared = watcher.set(dirs);
                        let (dirs, problems) = (watcher.watched(), watcher.problems().to_vec());
                        self.send(Action::Watching { dirs, problems });
                        if !appeared.is_empty() {
                            self.send(Action::FilesChanged(appeared));
                        }
                    }
                }
                Effect::Log(request) => self.log.send(request),
                Effect::Confirm { path, edited } => self.use_case("confirm", path, move |ctx, paths| {
                    let edited =
                        edited.map(|(webgpt_question, intent_brief)| EditedBrief { webgpt_question, intent_brief });
                    actions::confirm(ctx, paths, edited, "tui", Actor::Human)
                        .map(|saved| format!("brief confirmed; the prompt is issued ({})", saved.state.status))
                }),
                Effect::Abort { path, reason } => self.use_case("abort", path, move |ctx, paths| {
                    actions::abort(ctx, paths, &reason, Actor::Human).map(|_| "cycle aborted".to_owned())
                }),
                Effect::Unblock { path } => self.use_case("unblock", path, |ctx, paths| {
                    actions::unblock(ctx, paths).map(|saved| format!("unblocked; now {}", saved.state.status))
                }),
                Effect::Extend { path, by } => self.use_case("extend", path, move |ctx, paths| {
                    actions::extend(ctx, paths, by).map(|saved| format!("cap raised to {}", saved.state.max_iterations))
                }),
                Effect::Rerun { path } => {
                    let (cancel_tx, cancel_rx) = watch::channel(false);
                    self.cancels.insert(path.clone(), cancel_tx);
                    let ctx = self.ctx.clone();
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        let result = match CyclePaths::new(path.clone()) {
                            Ok(paths) => effects::run_rerun(ctx.clone(), paths, cancel_rx).await,
                            Err(e) => Err(e.to_string()),
                        };
                        let result = result.map_err(|e| ctx.redactor.redact(&e).into_owned());
                        let _ = tx.send(Msg::Action(Action::RunFinished { path, result }));
                    });
                }
                Effect::CancelRun { path } => {
                    if let Some(cancel) = self.cancels.get(&path) {
                        let _ = cancel.send(true);
                    }
                }
                Effect::Copy(text) => {
                    let text = self.ctx.redactor.redact(&text).into_owned();
                    let result = if self.interactive {
                        let mut out = std::io::stdout();
                        out.write_all(clipboard::osc52(&text).as_bytes())
                            .and_then(|_| out.flush())
                            .map(|_| text.chars().count())
                            .map_err(|e| e.to_string())
                    } else {
                        Err("no terminal to copy through".into())
                    };
                    self.send(Action::Copied(result));
                }
                Effect::OpenUrl(url) => {
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        let result = effects::open_url(&url).await;
                        let _ = tx.send(Msg::Action(Action::Opened { url, result }));
                    });
                }
            }
        }
        self.cancels.retain(|path, _| self.app.live_runs.contains_key(path));
    }

    /// Runs a use case off the UI task; its outcome comes back as `UseCaseDone`.
    fn use_case<F>(&self, what: &'static str, path: PathBuf, call: F)
    where
        F: FnOnce(&Ctx, &CyclePaths) -> crate::error::Result<String> + Send + 'static,
    {
        let ctx = self.ctx.clone();
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let result = CyclePaths::new(path.clone())
                .map_err(crate::error::Error::from)
                .and_then(|paths| call(&ctx, &paths))
                .map_err(|e| ctx.redactor.redact(&e.to_string()).into_owned());
            let _ = tx.send(Msg::Action(Action::UseCaseDone { what: what.to_owned(), path, result }));
        });
    }

    async fn suspend(&mut self) {
        if !self.interactive {
            return;
        }
        self.stop_input().await;
        terminal::restore();
        terminal::suspend_process();
        let _ = terminal::enter(self.app.mouse);
        let _ = self.terminal.clear();
        self.start_input();
        self.app.dirty = true;
    }

    /// Suspends the screen, runs `$EDITOR` on a temp file holding `text`, returns the result.
    async fn edit(&mut self, text: &str) -> Result<String, String> {
        if !self.interactive {
            return Err("editing needs a terminal".into());
        }
        let file = editor::temp_file(text).map_err(|e| format!("cannot write the file to edit: {e}"))?;
        self.stop_input().await;
        terminal::restore();
        let status = editor::editor_command(&file).status();
        let _ = terminal::enter(self.app.mouse);
        let _ = self.terminal.clear();
        self.start_input();
        self.app.dirty = true;
        let result = match status {
            Ok(s) if s.success() => std::fs::read_to_string(&file).map_err(|e| e.to_string()),
            Ok(s) => Err(format!("the editor exited with {s}; nothing was changed")),
            Err(e) => Err(format!("cannot start the editor ($VISUAL/$EDITOR): {e}")),
        };
        let _ = std::fs::remove_file(&file);
        result
    }
}
