//! The control room (`forgeloop tui`, design §6): a live view of every cycle, its
//! conversation, runs and logs, and the human-only actions — all through the same use-case
//! functions as the CLI, journaled with actor `human`.
//!
//! Layout of the module: [`app`] is the pure state machine (events in, effects out);
//! [`panes`] holds each pane's state, keys and view in its own folder (the detail tabs behind
//! the [`panes::Pane`] trait); [`exec`] carries out the app's effects, for the [`runtime`] that
//! feeds it (and for [`sync`], the tests' driver); [`views`] lays the screen out; [`keymap`] is
//! the one table of keys (commands); [`watch`] and [`load`] read the disk and report in their
//! own event types, as the log and diff pagers (`pager::log`, `pager::diff`) do.

pub mod app;
pub mod clipboard;
pub mod editor;
pub mod effects;
pub mod event;
pub mod exec;
pub mod key_overrides;
pub mod keymap;
pub mod keys;
pub mod load;
pub mod model;
pub mod notify;
pub mod pager;
pub mod panes;
pub mod registry;
pub mod runtime;
pub mod sanitize;
pub mod sync;
pub mod terminal;
pub mod theme;
pub mod views;
pub mod watch;
pub mod widgets;

use std::io::IsTerminal;
use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::cycle::Ctx;

pub use app::{App, Effect, Event, Roots};
pub use theme::Theme;

/// How `forgeloop tui` was asked to run, before the config fills in the rest.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// Extra directories of state files (`--dir`), besides config `tui.watch`.
    pub dirs: Vec<PathBuf>,
    /// `--theme NAME|PATH`; config `tui.theme` when absent.
    pub theme: Option<String>,
    /// `--mouse`: take mouse input (config `tui.mouse` may turn it on too).
    pub mouse: bool,
}

/// Why the control room could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// stdout or stdin is not a terminal.
    #[error("the control room needs a terminal: stdout is not a TTY (run `forgeloop list` for JSON)")]
    NotATerminal,
    /// The theme asked for cannot be used.
    #[error(transparent)]
    Theme(#[from] theme::ThemeError),
    /// The terminal could not be set up, drawn to or restored.
    #[error("terminal error: {0}")]
    Io(#[from] std::io::Error),
    /// `[tui.keys]` names an unknown command, an unreadable key, or a clash.
    #[error("{0}")]
    Keys(String),
}

/// Everything the app is configured with, resolved from the context and the options.
pub fn prepare(ctx: &Ctx, opts: &TuiOptions) -> Result<(Roots, Theme, bool), TuiError> {
    // The person's keys are checked before the terminal is taken over, and then are the
    // keymap the keys, the footer and the help use.
    keys::install(key_overrides::keymap(&ctx.config.tui.keys).map_err(TuiError::Keys)?);
    let spec = opts.theme.clone().or_else(|| ctx.config.tui.theme.clone());
    let mut theme = Theme::select(spec.as_deref())?;
    if Theme::no_color_requested() {
        theme = theme.without_color();
    }
    let mut extra_dirs: Vec<PathBuf> = Vec::new();
    for dir in ctx.config.tui.watch.iter().chain(&opts.dirs) {
        let dir = PathBuf::from(crate::cycle::files::expand_tilde(&dir.to_string_lossy()));
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        if !extra_dirs.contains(&dir) {
            extra_dirs.push(dir);
        }
    }
    let roots = Roots {
        cycles_dir: ctx.home.cycles_dir(),
        task_spaces_dir: ctx.home.task_spaces_dir(),
        registry: std::path::absolute(&ctx.registry).unwrap_or_else(|_| ctx.registry.clone()),
        extra_dirs,
        connector_dir: ctx.home.connector_dir(),
    };
    Ok((roots, theme, opts.mouse || ctx.config.tui.mouse))
}

/// Runs the control room on this terminal until the person quits.
pub fn run(ctx: Ctx, opts: TuiOptions) -> Result<(), TuiError> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    let (roots, theme, mouse) = prepare(&ctx, &opts)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    terminal::install_panic_hook();
    let result = runtime.block_on(async move {
        let _guard = terminal::Guard;
        terminal::enter(mouse)?;
        let term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
        let mut app = App::new(roots.clone(), theme, mouse, ctx.clock.now(), ctx.redactor.clone());
        if let Ok(base) = crate::cycle::context::web_base_for(&ctx.github_api) {
            app.web_base = base;
        }
        app.unsandboxed = !ctx.sandbox.enabled;
        app.attention.enabled = ctx.config.tui.notify();
        let mut rt = runtime::Runtime::new(ctx, roots.extra_dirs.clone(), app, term, true);
        rt.start_input();
        signals(rt.sender());
        rt.run().await
    });
    terminal::restore();
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result.map_err(TuiError::from)
}

/// SIGTERM and SIGHUP end the control room cleanly (terminal restored, runs cancelled).
fn signals(tx: tokio::sync::mpsc::UnboundedSender<Event>) {
    use tokio::signal::unix::{SignalKind, signal};
    for kind in [SignalKind::terminate(), SignalKind::hangup()] {
        let tx = tx.clone();
        if let Ok(mut stream) = signal(kind) {
            tokio::spawn(async move {
                if stream.recv().await.is_some() {
                    let _ = tx.send(Event::Terminate);
                }
            });
        }
    }
}
