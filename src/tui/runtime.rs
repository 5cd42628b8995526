//! The runtime: one channel carries terminal input and background results as [`Event`]s,
//! a second the watcher's debounced changes, and (only while something animates) a spinner
//! tick. Each turn drains them, applies every event to the [`App`], has the [`Executor`]
//! carry out the effects, then draws once if anything changed, at most once per frame
//! interval. Nothing blocking runs on this task: file reads go to a loader thread, the log to
//! its worker, use cases to `spawn_blocking`.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use crate::cycle::Ctx;

use super::app::{App, Effect, Event};
use super::editor;
use super::exec::{self, Executor, Job, Work};
use super::terminal;
use super::views;
use super::watch::{self as dirwatch, DirWatcher, WatchEvent};
use crate::tui::pager::log::LogWorker;
use crate::tui::panes::PaneMsg;

/// At most one frame per this interval (~60 fps).
pub const FRAME: Duration = Duration::from_millis(16);
const TICK: Duration = Duration::from_millis(100);
/// Ages are shown in minutes: redraw them this often when nothing else happens.
const CLOCK: Duration = Duration::from_secs(60);

/// Runs file loads one after another, so results arrive in the order they were asked for
/// (a newer read of a state file is never overtaken by an older one).
struct Loader {
    tx: std_mpsc::Sender<Job>,
}

impl Loader {
    fn spawn(out: UnboundedSender<Event>) -> Loader {
        let (tx, rx) = std_mpsc::channel::<Job>();
        let _ = std::thread::Builder::new().name("forgeloop-load".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                if out.send(job()).is_err() {
                    return;
                }
            }
        });
        Loader { tx }
    }

    fn run(&self, job: Job) {
        let _ = self.tx.send(job);
    }
}

/// What a terminal event means to the app (key releases and focus changes mean nothing).
fn input_event(event: TermEvent) -> Option<Event> {
    match event {
        TermEvent::Key(key) if key.kind != KeyEventKind::Release => Some(Event::Key(key)),
        TermEvent::Mouse(mouse) => Some(Event::Mouse(mouse)),
        TermEvent::Paste(text) => Some(Event::Paste(text)),
        TermEvent::Resize(_, _) => Some(Event::Resize),
        _ => None,
    }
}

/// One message from either channel.
enum Incoming {
    Event(Event),
    Watch(WatchEvent),
}

/// The live control room: the app, the terminal it draws on, and the threads and tasks that
/// feed it.
pub struct Runtime<B: Backend> {
    /// The state machine it drives.
    pub app: App,
    /// Where it draws (a test backend in tests and benches).
    pub terminal: Terminal<B>,
    exec: Executor,
    tx: UnboundedSender<Event>,
    rx: UnboundedReceiver<Event>,
    watch_rx: UnboundedReceiver<WatchEvent>,
    watcher: Option<DirWatcher>,
    loader: Loader,
    log: LogWorker,
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
                let _ = tx.send(Event::Watching { dirs: 0, problems: vec![err.to_string()] });
                None
            }
        };
        let (watch_tx, watch_rx) = unbounded_channel();
        dirwatch::debounce(raw_rx, move |event| {
            let _ = watch_tx.send(event);
        });
        let log_out = tx.clone();
        let log = LogWorker::spawn(
            ctx.redactor.clone(),
            Box::new(move |answer| {
                if let Some(msg) = PaneMsg::from_reader(&answer) {
                    let _ = log_out.send(Event::Pane(msg));
                }
            }),
        );
        let loader = Loader::spawn(tx.clone());
        let mut runtime = Runtime {
            app,
            terminal,
            exec: Executor::new(ctx, extra_dirs),
            tx,
            rx,
            watch_rx,
            watcher,
            loader,
            log,
            ticker: None,
            input: None,
            interactive,
            last_draw: None,
            frames: 0,
        };
        // The first effects (watch, discover, registry) need no terminal: start them now.
        for effect in runtime.app.init() {
            let work = runtime.exec.plan(effect);
            runtime.start(work);
        }
        runtime
    }

    /// A sender for events into the runtime (tests, benches, signal handlers).
    pub fn sender(&self) -> UnboundedSender<Event> {
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
                        if let Some(event) = input_event(event)
                            && tx.send(event).is_err()
                        {
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
        self.exec.cancel_all();
        self.stop_input().await;
        Ok(())
    }

    /// One turn: wait for a message, drain the queues, draw if needed. `false` once quit.
    pub async fn step(&mut self) -> std::io::Result<bool> {
        let next = tokio::time::timeout(CLOCK, async {
            tokio::select! {
                event = self.rx.recv() => event.map(Incoming::Event),
                Some(event) = self.watch_rx.recv() => Some(Incoming::Watch(event)),
            }
        })
        .await;
        match next {
            Ok(Some(incoming)) => self.handle(incoming).await,
            Ok(None) => return Ok(false),
            Err(_) => {
                let now = self.exec.ctx().clock.now();
                self.apply(Event::Clock(now)).await;
            }
        }
        loop {
            let incoming = match self.rx.try_recv() {
                Ok(event) => Incoming::Event(event),
                Err(_) => match self.watch_rx.try_recv() {
                    Ok(event) => Incoming::Watch(event),
                    Err(_) => break,
                },
            };
            self.handle(incoming).await;
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

    /// Draws the app now (clock updated) and clears its `dirty` flag.
    pub fn draw(&mut self) -> std::io::Result<()> {
        self.app.now = self.exec.ctx().clock.now();
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
                        if tx.send(Event::Tick).is_err() {
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

    async fn handle(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Event(event) => self.apply(event).await,
            Incoming::Watch(WatchEvent::Paths(mut paths)) => {
                if let Some(watcher) = &mut self.watcher
                    && watcher.affects(&paths)
                {
                    // Directories that just appeared may already hold files: look at them.
                    paths.extend(watcher.reconcile());
                    let (dirs, problems) = (watcher.watched(), watcher.problems().to_vec());
                    self.apply(Event::Watching { dirs, problems }).await;
                }
                self.apply(Event::FilesChanged(paths)).await;
            }
            Incoming::Watch(WatchEvent::Rescan) => {
                let mut paths: Vec<PathBuf> = self.app.list.cycles.iter().map(|c| c.path.clone()).collect();
                paths.push(self.app.roots.cycles_dir.clone());
                paths.push(self.app.roots.task_spaces_dir.clone());
                paths.push(self.app.roots.registry.clone());
                self.apply(Event::FilesChanged(paths)).await;
            }
            Incoming::Watch(WatchEvent::Error(error)) => {
                let dirs = self.watcher.as_ref().map_or(0, DirWatcher::watched);
                self.apply(Event::Watching { dirs, problems: vec![error] }).await;
            }
        }
    }

    async fn apply(&mut self, event: Event) {
        let effects = self.app.update(event);
        self.execute(effects).await;
    }

    /// Carries out effects in order: those that need the terminal are awaited here (and what
    /// they lead to is queued), all others are started and return.
    async fn execute(&mut self, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(effect) = queue.pop_front() {
            match self.exec.plan(effect) {
                Work::Terminal(Effect::Suspend) => self.suspend().await,
                Work::Terminal(Effect::EditBrief { path, text }) => {
                    let result = self.edit("brief", &text).await;
                    queue.extend(self.app.update(Event::EditorFinished { path, result }));
                }
                Work::Terminal(Effect::EditMessage { path, text }) => {
                    let result = self.edit("message", &text).await;
                    queue.extend(self.app.update(Event::MessageEdited { path, result }));
                }
                work => self.start(work),
            }
        }
        let live = &self.app.live_runs;
        self.exec.retain_runs(|path| live.contains_key(path));
    }

    /// Starts work that needs no terminal where it belongs; its outcome arrives as an event.
    fn start(&mut self, work: Work) {
        match work {
            // Quitting is the app's flag; the rest is awaited in `execute`.
            Work::Done | Work::Terminal(_) => {}
            Work::Load(job) => self.loader.run(job),
            Work::Blocking(job) => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(job());
                });
            }
            Work::Task(task) => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let _ = tx.send(task.await);
                });
            }
            Work::Log(request) => self.log.send(request),
            Work::Watch(dirs) => {
                if let Some(watcher) = &mut self.watcher {
                    let appeared = watcher.set(dirs);
                    let (dirs, problems) = (watcher.watched(), watcher.problems().to_vec());
                    let _ = self.tx.send(Event::Watching { dirs, problems });
                    if !appeared.is_empty() {
                        let _ = self.tx.send(Event::FilesChanged(appeared));
                    }
                }
            }
            Work::Notify(text) => {
                if self.interactive {
                    let mut stdout = std::io::stdout();
                    let _ = stdout.write_all(super::notify::sequence(&text).as_bytes()).and_then(|_| stdout.flush());
                }
            }
            Work::Copy(text) => {
                let mut stdout = std::io::stdout();
                let out: Option<&mut dyn Write> = if self.interactive { Some(&mut stdout) } else { None };
                let _ = self.tx.send(exec::copy(&text, out));
            }
        }
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

    /// Suspends the screen, runs `$EDITOR` on a temp file holding `text` (named after `what`),
    /// returns the result.
    async fn edit(&mut self, what: &str, text: &str) -> Result<String, String> {
        if !self.interactive {
            return Err("editing needs a terminal".into());
        }
        let file = editor::temp_file(what, text).map_err(|e| format!("cannot write the file to edit: {e}"))?;
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
