//! The control room's state and its one transition function. `App::update` takes an
//! [`Event`] (a key, a file change, a finished background task) and returns the
//! [`Effect`]s the runtime must carry out; it never does I/O itself, so every behaviour is
//! testable as "events in, state and effects out".

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::domain::machine;
use crate::domain::state::CycleState;
use crate::domain::status::Status;
use crate::store::journal::Event as JournalEvent;
use crate::store::layout::CyclePaths;

use super::editor;
use super::keymap::{self, Cmd, Context};
use super::log_view::{Anchor, FindKind, LogEvent, LogRequest, LogWindow};
use super::model::{CycleEntry, ProjectRecord, RunFile, Sources};
pub use super::tab::Tab;
use super::theme::Theme;
pub use super::watch::WatchDir;

mod dialogs;
mod files;
mod list;
mod log;

pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// A log file in `runs/` not yet in the history and written to this recently is "live".
pub const LIVE_IDLE_SECS: u64 = 120;
const DEFAULT_ABORT_REASON: &str = "aborted by a person in the control room";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    List,
    Detail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Cycles,
    Projects,
}

/// Where the control room looks, fixed at start.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub cycles_dir: PathBuf,
    pub task_spaces_dir: PathBuf,
    pub registry: PathBuf,
    pub extra_dirs: Vec<PathBuf>,
}

/// Everything that can happen to the app: raw input (keys, mouse, paste, resize), the clock,
/// and what background work reports (files changed or loaded, log windows, finished use
/// cases). Its meaning is decided in [`App::update`], keys through the keymap's [`Cmd`]s.
#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize,
    /// A command given directly (tests, benches), as if its key was pressed.
    Cmd(Cmd),
    /// Advances the spinner (sent only while something runs).
    Tick,
    /// The wall clock, for ages.
    Clock(DateTime<Utc>),
    /// Debounced paths that changed on disk.
    FilesChanged(Vec<PathBuf>),
    Discovered(Vec<PathBuf>),
    CyclesLoaded {
        loaded: Vec<CycleEntry>,
        gone: Vec<PathBuf>,
    },
    JournalLoaded {
        path: PathBuf,
        result: Result<Vec<JournalEvent>, String>,
    },
    RunsListed {
        path: PathBuf,
        runs: Vec<RunFile>,
    },
    RegistryLoaded(Vec<ProjectRecord>),
    SourcesLoaded {
        repository: String,
        sources: Sources,
    },
    /// What the log reader found (a window, a match, an error).
    Log(LogEvent),
    /// A use case finished with its message for the person.
    UseCaseDone {
        what: UseCase,
        path: PathBuf,
        result: Result<String, String>,
    },
    RunFinished {
        path: PathBuf,
        result: Result<String, String>,
    },
    EditorFinished {
        path: PathBuf,
        result: Result<String, String>,
    },
    Copied(Result<usize, String>),
    Opened {
        url: String,
        result: Result<(), String>,
    },
    Watching {
        dirs: usize,
        problems: Vec<String>,
    },
    /// SIGTERM/SIGHUP: leave now, cancelling runs.
    Terminate,
}

/// The human actions that run a use case (journaled as `human`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseCase {
    Confirm,
    Abort,
    Unblock,
    Extend,
}

impl UseCase {
    /// The word in "… failed: reason".
    pub fn as_str(self) -> &'static str {
        match self {
            UseCase::Confirm => "confirm",
            UseCase::Abort => "abort",
            UseCase::Unblock => "unblock",
            UseCase::Extend => "extend",
        }
    }
}

/// What the runtime must do; results come back as [`Event`]s.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    Suspend,
    Discover,
    LoadCycles(Vec<PathBuf>),
    LoadJournal(PathBuf),
    ListRuns(PathBuf),
    LoadRegistry,
    LoadSources(String),
    Watch(Vec<WatchDir>),
    Log(LogRequest),
    Confirm { path: PathBuf, edited: Option<(String, String)> },
    Abort { path: PathBuf, reason: String },
    Unblock { path: PathBuf },
    Extend { path: PathBuf, by: u32 },
    Rerun { path: PathBuf },
    CancelRun { path: PathBuf },
    EditBrief { path: PathBuf, text: String },
    Copy(String),
    OpenUrl(String),
}

/// The confirm-brief dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmDialog {
    pub path: PathBuf,
    pub name: String,
    pub question: String,
    /// Label and text of the five fields, as they will be confirmed.
    pub fields: Vec<(&'static str, String)>,
    /// The wording after an edit (question, brief text); `None` confirms as proposed.
    pub edited: Option<(String, String)>,
    /// The last text from the editor, reopened on the next edit so no work is lost.
    pub draft: Option<String>,
    pub error: Option<String>,
    pub busy: bool,
    pub scroll: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Quit,
    Rerun(PathBuf),
    CancelRun(PathBuf),
    Unblock(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPurpose {
    Abort(PathBuf),
    Extend(PathBuf),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    ConfirmBrief(ConfirmDialog),
    YesNo { ask: Ask, title: String, body: String },
    Input { purpose: InputPurpose, title: String, prompt: String, value: String, error: Option<String> },
    Help { scroll: u16 },
    Message { title: String, text: String, copy: Option<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchState {
    Idle,
    Searching,
    Found,
    NotFound,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogSearch {
    pub query: String,
    pub input: String,
    pub editing: bool,
    /// Offset of the line with the current match.
    pub current: Option<u64>,
    pub state: SearchState,
    pub wrapped: bool,
}

/// The log pane: a window of lines read from disk around the viewport.
#[derive(Debug, Clone)]
pub struct LogPane {
    /// Bumped whenever another file is opened, so stale replies are dropped.
    pub generation: u64,
    pub path: Option<PathBuf>,
    pub cycle: Option<PathBuf>,
    pub title: String,
    pub window: LogWindow,
    pub loaded: bool,
    pub follow: bool,
    pub wrap: bool,
    pub hscroll: usize,
    pub search: LogSearch,
    pub finding_error: bool,
    pub error: Option<String>,
    /// Lines visible at the last draw (set by the renderer).
    pub height: Cell<u16>,
}

impl Default for LogPane {
    fn default() -> Self {
        LogPane {
            generation: 0,
            path: None,
            cycle: None,
            title: String::new(),
            window: LogWindow::default(),
            loaded: false,
            follow: false,
            wrap: false,
            hscroll: 0,
            search: LogSearch {
                query: String::new(),
                input: String::new(),
                editing: false,
                current: None,
                state: SearchState::Idle,
                wrapped: false,
            },
            finding_error: false,
            error: None,
            height: Cell::new(20),
        }
    }
}

/// A rerun started from this control room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRun {
    pub cancel_requested: bool,
    /// Abort once the run has stopped (the run holds the cycle lock until then).
    pub abort_after: Option<String>,
}

/// One row of the Runs tab.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub iteration: Option<u32>,
    pub sha12: String,
    pub result: RunResult,
    pub duration: Option<f64>,
    pub started_at: Option<String>,
    pub actor: Option<String>,
    pub comment_url: Option<String>,
    /// What the run's commands ran in ("isolated, no network", "unsandboxed").
    pub sandbox: Option<String>,
    pub log: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunResult {
    Passed,
    Failed,
    Live,
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toast {
    pub text: String,
    pub error: bool,
}

/// Screen areas from the last draw, for mouse hits.
#[derive(Debug, Default, Clone)]
pub struct Hits {
    pub list: Cell<Rect>,
    pub list_offset: Cell<usize>,
    pub tabs: Cell<Rect>,
    pub detail: Cell<Rect>,
}

pub struct App {
    pub roots: Roots,
    /// Everything drawn passes through it (SPEC §7: TUI rendering is an output channel).
    pub redactor: crate::redact::Redactor,
    pub theme: Theme,
    pub mouse: bool,
    pub now: DateTime<Utc>,
    /// Where PR pages live (`https://github.com`, an Enterprise host, the demo's emulator).
    pub web_base: String,
    /// The person turned the sandbox off (config): every screen says so.
    pub unsandboxed: bool,
    pub cycles: Vec<CycleEntry>,
    /// Indices into `cycles` that pass the filter, in display order.
    pub visible: Vec<usize>,
    pub selected: Option<PathBuf>,
    pub filter: String,
    pub filter_editing: bool,
    pub focus: Focus,
    pub screen: Screen,
    pub tab: Tab,
    pub zoom: bool,
    pub popups: Vec<Popup>,
    pub journal: Option<(PathBuf, Result<Vec<JournalEvent>, String>)>,
    pub runs: Option<(PathBuf, Vec<RunFile>)>,
    pub run_sel: usize,
    pub detail_scroll: u16,
    pub log: LogPane,
    pub projects: Vec<ProjectRecord>,
    pub projects_loaded: bool,
    pub project_sel: usize,
    pub sources: HashMap<String, Sources>,
    pub live_runs: BTreeMap<PathBuf, LiveRun>,
    pub spinner: usize,
    pub toast: Option<Toast>,
    pub watching: (usize, Vec<String>),
    pub discovered: bool,
    pub quit: bool,
    pub hits: Hits,
    /// Set when something visible changed; the runtime draws and clears it.
    pub dirty: bool,
    /// Sidecar directory (`NAME.d`) → state path.
    sidecars: HashMap<PathBuf, PathBuf>,
    /// Lines in the list viewport at the last draw.
    pub list_height: Cell<u16>,
    pub detail_height: Cell<u16>,
}

fn status_of(entry: &CycleEntry) -> Option<Status> {
    entry.status()
}

impl App {
    pub fn new(roots: Roots, theme: Theme, mouse: bool, now: DateTime<Utc>, redactor: crate::redact::Redactor) -> App {
        App {
            roots,
            redactor,
            theme,
            mouse,
            now,
            web_base: "https://github.com".to_owned(),
            unsandboxed: false,
            cycles: Vec::new(),
            visible: Vec::new(),
            selected: None,
            filter: String::new(),
            filter_editing: false,
            focus: Focus::List,
            screen: Screen::Cycles,
            tab: Tab::Brief,
            zoom: false,
            popups: Vec::new(),
            journal: None,
            runs: None,
            run_sel: 0,
            detail_scroll: 0,
            log: LogPane::default(),
            projects: Vec::new(),
            projects_loaded: false,
            project_sel: 0,
            sources: HashMap::new(),
            live_runs: BTreeMap::new(),
            spinner: 0,
            toast: None,
            watching: (0, Vec::new()),
            discovered: false,
            quit: false,
            hits: Hits::default(),
            dirty: true,
            sidecars: HashMap::new(),
            list_height: Cell::new(10),
            detail_height: Cell::new(10),
        }
    }

    /// What the runtime does first.
    pub fn init(&self) -> Vec<Effect> {
        vec![Effect::Watch(self.watch_dirs()), Effect::Discover, Effect::LoadRegistry]
    }

    // ----- queries used by views and tests -----

    /// A path as it may be shown (home as `~`, secrets masked).
    pub fn shown(&self, path: &Path) -> String {
        self.redactor.redact(&path.display().to_string()).into_owned()
    }

    pub fn selected_index(&self) -> Option<usize> {
        let path = self.selected.as_ref()?;
        self.cycles.iter().position(|c| &c.path == path)
    }

    pub fn selected_entry(&self) -> Option<&CycleEntry> {
        self.selected_index().map(|i| &self.cycles[i])
    }

    pub fn selected_state(&self) -> Option<&CycleState> {
        self.selected_entry().and_then(|e| e.state.as_ref())
    }

    /// Position of the selection among the visible rows.
    pub fn selected_row(&self) -> Option<usize> {
        let index = self.selected_index()?;
        self.visible.iter().position(|&i| i == index)
    }

    pub fn is_running(&self, path: &Path) -> bool {
        self.live_runs.contains_key(path)
    }

    /// True while something animates (the only reason to tick).
    pub fn animating(&self) -> bool {
        !self.live_runs.is_empty()
            || self.log.search.state == SearchState::Searching
            || self.log.finding_error
            || self.popups.iter().any(|p| matches!(p, Popup::ConfirmBrief(d) if d.busy))
    }

    pub fn spinner_frame(&self) -> &'static str {
        SPINNER[self.spinner % SPINNER.len()]
    }

    /// Active keyboard contexts, most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        if let Some(popup) = self.popups.last() {
            return vec![match popup {
                Popup::ConfirmBrief(_) => Context::ConfirmBrief,
                Popup::YesNo { .. } => Context::YesNo,
                Popup::Input { .. } => Context::TextInput,
                Popup::Help { .. } => Context::Help,
                Popup::Message { .. } => Context::Message,
            }];
        }
        if self.screen == Screen::Projects {
            return vec![Context::Projects, Context::Global];
        }
        if self.filter_editing {
            return vec![Context::FilterInput];
        }
        if self.focus == Focus::Detail && self.tab == Tab::Log && self.log.search.editing {
            return vec![Context::SearchInput];
        }
        match (self.focus, self.tab) {
            (Focus::List, _) => vec![Context::List, Context::Cycle, Context::Global],
            (Focus::Detail, Tab::Log) => vec![Context::Log, Context::Detail, Context::Cycle, Context::Global],
            (Focus::Detail, Tab::Runs) => vec![Context::Runs, Context::Detail, Context::Cycle, Context::Global],
            (Focus::Detail, _) => vec![Context::Detail, Context::Cycle, Context::Global],
        }
    }

    /// Whether a command makes sense now (footer hints hide the others).
    pub fn available(&self, cmd: Cmd) -> bool {
        let state = self.selected_state();
        let status = state.map(|s| s.status);
        let running = self.selected.as_ref().is_some_and(|p| self.is_running(p));
        match cmd {
            Cmd::ConfirmBrief => state.is_some_and(|s| machine::can_confirm(s).is_ok()),
            // Status only (like the key's help): the dialog then says what else is missing.
            Cmd::Rerun => !running && state.is_some_and(|s| machine::rerun_allowed(s).is_ok()),
            Cmd::CancelRun => running,
            Cmd::Abort => status.is_some_and(|s| !s.is_final()),
            Cmd::Unblock => status.is_some_and(Status::is_unblockable),
            Cmd::Extend => status.is_some_and(|s| !s.is_final()),
            Cmd::CopyOutbox => state.is_some_and(|s| outbox_text(s).is_some()),
            Cmd::OpenPr => state.is_some_and(|s| s.pr_ref.is_some()),
            Cmd::OpenConversation => state.is_some_and(|s| s.conversation_url.is_some()),
            Cmd::NextAttention => self.cycles.iter().any(CycleEntry::needs_human),
            Cmd::NextMatch | Cmd::PrevMatch => !self.log.search.query.is_empty(),
            Cmd::Open if self.screen == Screen::Projects => {
                self.projects.get(self.project_sel).is_some_and(|p| p.project_url.is_some())
            }
            Cmd::Open if self.tab == Tab::Runs => !self.run_rows().is_empty(),
            _ => true,
        }
    }

    pub fn hints(&self) -> Vec<(String, &'static str)> {
        keymap::hints(&self.contexts(), |cmd| self.available(cmd))
    }

    /// Rows of the Runs tab for the selected cycle, newest first.
    pub fn run_rows(&self) -> Vec<RunRow> {
        let Some(entry) = self.selected_entry() else { return Vec::new() };
        let Some(state) = &entry.state else { return Vec::new() };
        let runs_dir = CyclePaths::new(entry.path.clone()).map(|p| p.runs()).ok();
        let files: &[RunFile] = match &self.runs {
            Some((path, files)) if path == &entry.path => files,
            _ => &[],
        };
        let mut rows: Vec<RunRow> = state
            .history
            .iter()
            .map(|run| {
                let sha12: String = run.head_sha.chars().take(12).collect();
                let by_name = runs_dir.as_ref().map(|d| d.join(format!("{}-{sha12}.log", run.iteration)));
                let log = run
                    .log_path
                    .as_ref()
                    .map(|p| PathBuf::from(crate::store::layout::expand_tilde(p)))
                    .filter(|p| files.iter().any(|f| &f.path == p) || p.exists())
                    .or(by_name);
                RunRow {
                    iteration: Some(run.iteration),
                    sha12,
                    result: match run.status {
                        crate::domain::report::TestStatus::Passed => RunResult::Passed,
                        crate::domain::report::TestStatus::Failed => RunResult::Failed,
                    },
                    duration: Some(run.duration_seconds),
                    started_at: Some(run.started_at.clone()),
                    actor: Some(run.actor.as_str().to_owned()),
                    comment_url: run.comment_url.clone(),
                    sandbox: run.sandbox.clone(),
                    log,
                }
            })
            .collect();
        let running_here = self.is_running(&entry.path);
        for file in files {
            if rows.iter().any(|r| r.log.as_ref() == Some(&file.path)) {
                continue;
            }
            let live = running_here || file.idle_secs.is_some_and(|s| s < LIVE_IDLE_SECS);
            let stem = file.name.trim_end_matches(".log");
            let (iteration, sha) = stem.split_once('-').unwrap_or((stem, ""));
            rows.push(RunRow {
                iteration: iteration.parse().ok(),
                sha12: sha.chars().take(12).collect(),
                result: if live { RunResult::Live } else { RunResult::Incomplete },
                duration: None,
                started_at: None,
                actor: None,
                comment_url: None,
                sandbox: None,
                log: Some(file.path.clone()),
            });
        }
        rows.sort_by(|a, b| {
            b.iteration
                .cmp(&a.iteration)
                .then_with(|| (b.result == RunResult::Live).cmp(&(a.result == RunResult::Live)))
        });
        rows
    }

    /// Counts per status group for the status bar.
    pub fn counts(&self) -> [(StatusGroup, usize); 6] {
        let mut counts = [0usize; 6];
        for entry in &self.cycles {
            counts[StatusGroup::of(entry.status()) as usize] += 1;
        }
        StatusGroup::ALL.map(|g| (g, counts[g as usize]))
    }

    /// Directories to watch: the roots, and each known cycle's directory, sidecar and runs.
    pub fn watch_dirs(&self) -> Vec<WatchDir> {
        let mut dirs = BTreeSet::new();
        let flat = |path: PathBuf| WatchDir { path, recursive: false };
        dirs.insert(flat(self.roots.cycles_dir.clone()));
        dirs.insert(flat(self.roots.task_spaces_dir.clone()));
        for dir in &self.roots.extra_dirs {
            dirs.insert(flat(dir.clone()));
        }
        dirs.insert(WatchDir { path: self.roots.registry.clone(), recursive: true });
        for entry in &self.cycles {
            if let Some(parent) = entry.path.parent() {
                dirs.insert(flat(parent.to_path_buf()));
            }
            if let Ok(paths) = CyclePaths::new(entry.path.clone()) {
                dirs.insert(flat(paths.sidecar()));
                dirs.insert(flat(paths.runs()));
            }
        }
        dirs.into_iter().collect()
    }

    // ----- the transition function -----

    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let mut fx = Vec::new();
        match event {
            Event::Key(key) => {
                self.toast = None;
                self.dirty = true;
                if let Some(cmd) = keymap::resolve(&self.contexts(), &key) {
                    self.command(cmd, &mut fx);
                }
            }
            Event::Cmd(cmd) => {
                self.dirty = true;
                self.command(cmd, &mut fx);
            }
            Event::Paste(text) => self.paste(&text, &mut fx),
            Event::Mouse(mouse) => self.mouse_event(mouse, &mut fx),
            Event::Resize => {
                self.dirty = true;
                if self.log.follow && self.log.path.is_some() {
                    fx.push(self.log_window(Anchor::Tail));
                }
            }
            Event::Tick => {
                self.spinner = self.spinner.wrapping_add(1);
                self.dirty = true;
            }
            Event::Clock(now) => {
                self.now = now;
                self.dirty = true;
            }
            Event::FilesChanged(paths) => self.files_changed(paths, &mut fx),
            Event::Discovered(paths) => self.discovered(paths, &mut fx),
            Event::CyclesLoaded { loaded, gone } => self.cycles_loaded(loaded, gone, &mut fx),
            Event::JournalLoaded { path, result } => {
                if self.selected.as_ref() == Some(&path) {
                    self.journal = Some((path, result));
                    self.dirty = true;
                }
            }
            Event::RunsListed { path, runs } => self.runs_listed(path, runs, &mut fx),
            Event::RegistryLoaded(records) => {
                self.projects = records;
                self.projects_loaded = true;
                self.project_sel = self.project_sel.min(self.projects.len().saturating_sub(1));
                self.dirty = true;
            }
            Event::SourcesLoaded { repository, sources } => {
                self.sources.insert(repository, sources);
                self.dirty = true;
            }
            Event::Log(LogEvent::Window(window)) => {
                if window.generation == self.log.generation {
                    self.log.window = window;
                    self.log.loaded = true;
                    self.log.error = None;
                    self.dirty = true;
                }
            }
            Event::Log(LogEvent::Found { generation, kind, offset, wrapped }) => {
                self.log_found(generation, kind, offset, wrapped, &mut fx)
            }
            Event::Log(LogEvent::Failed { generation, error }) => {
                if generation == self.log.generation {
                    self.log.error = Some(error);
                    self.log.loaded = true;
                    self.dirty = true;
                }
            }
            Event::UseCaseDone { what, path, result } => self.use_case_done(what, path, result, &mut fx),
            Event::RunFinished { path, result } => self.run_finished(path, result, &mut fx),
            Event::EditorFinished { path, result } => self.editor_finished(path, result),
            Event::Copied(result) => {
                self.toast = Some(match result {
                    Ok(n) => Toast { text: format!("copied {n} characters to the clipboard (OSC 52)"), error: false },
                    Err(e) => Toast { text: format!("could not copy: {e}"), error: true },
                });
                self.dirty = true;
            }
            Event::Opened { url, result } => {
                match result {
                    Ok(()) => self.toast = Some(Toast { text: format!("opened {url}"), error: false }),
                    Err(e) => self.popups.push(Popup::Message {
                        title: "Could not open the browser".into(),
                        text: format!("{e}\n\nOpen it yourself:\n{url}"),
                        copy: Some(url),
                    }),
                }
                self.dirty = true;
            }
            Event::Watching { dirs, problems } => {
                self.watching = (dirs, problems);
                self.dirty = true;
            }
            Event::Terminate => {
                for path in self.live_runs.keys() {
                    fx.push(Effect::CancelRun { path: path.clone() });
                }
                self.quit = true;
                fx.push(Effect::Quit);
            }
        }
        fx
    }

    fn toast_error(&mut self, text: impl Into<String>) {
        self.toast = Some(Toast { text: text.into(), error: true });
    }

    fn command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        if !self.popups.is_empty() {
            self.popup_command(cmd, fx);
            return;
        }
        if self.filter_editing {
            self.filter_command(cmd, fx);
            return;
        }
        if self.log.search.editing && self.focus == Focus::Detail && self.tab == Tab::Log {
            self.search_command(cmd, fx);
            return;
        }
        if self.screen == Screen::Projects {
            self.projects_command(cmd, fx);
            return;
        }
        match cmd {
            Cmd::Quit => self.ask_quit(fx),
            Cmd::Help => self.popups.push(Popup::Help { scroll: 0 }),
            Cmd::Suspend => fx.push(Effect::Suspend),
            Cmd::Projects => {
                self.screen = Screen::Projects;
                fx.push(Effect::LoadRegistry);
            }
            Cmd::SwitchFocus => {
                self.focus = if self.focus == Focus::List { Focus::Detail } else { Focus::List };
                self.zoom = false;
                self.tab_shown(fx);
            }
            Cmd::Zoom => self.zoom = !self.zoom,
            Cmd::Tab(tab) => self.set_tab(tab, fx),
            Cmd::PrevTab => self.set_tab(self.tab.prev(), fx),
            Cmd::NextTab => self.set_tab(self.tab.next(), fx),
            Cmd::Filter => self.filter_editing = true,
            Cmd::NextAttention => self.next_attention(fx),
            Cmd::Back => match self.focus {
                Focus::Detail => {
                    self.focus = Focus::List;
                    self.zoom = false;
                }
                Focus::List if !self.filter.is_empty() => {
                    let before = self.selected.clone();
                    self.filter.clear();
                    self.refilter();
                    if self.selected != before {
                        self.selection_changed(fx);
                    }
                }
                Focus::List => {}
            },
            Cmd::Open => match (self.focus, self.tab) {
                (Focus::Detail, Tab::Runs) => {
                    self.set_tab(Tab::Log, fx);
                }
                _ => {
                    self.focus = Focus::Detail;
                    self.tab_shown(fx);
                }
            },
            Cmd::Up | Cmd::Down | Cmd::PageUp | Cmd::PageDown | Cmd::Top | Cmd::Bottom | Cmd::Left | Cmd::Right => {
                self.movement(cmd, fx)
            }
            Cmd::ConfirmBrief => self.open_confirm(),
            Cmd::Rerun => self.ask_rerun(),
            Cmd::CancelRun => match self.selected.clone().filter(|p| self.is_running(p)) {
                Some(path) => self.popups.push(Popup::YesNo {
                    ask: Ask::CancelRun(path),
                    title: "Cancel the rerun?".into(),
                    body: "The test process group is stopped (SIGTERM, then SIGKILL). A cancelled run is not a verdict on the PR.".into(),
                }),
                None => self.toast_error("no rerun started here is running for this cycle"),
            },
            Cmd::Abort => self.ask_abort(),
            Cmd::Unblock => self.ask_unblock(),
            Cmd::Extend => self.ask_extend(),
            Cmd::CopyOutbox => match self.selected_state().and_then(outbox_text) {
                Some(text) => fx.push(Effect::Copy(text)),
                None => self.toast_error("this cycle has no message to send"),
            },
            Cmd::OpenPr => match self.selected_state().and_then(|s| s.pr_ref.clone()) {
                Some(pr) => fx.push(Effect::OpenUrl(pr_url(&pr, &self.web_base))),
                None => self.toast_error("this cycle has no PR yet"),
            },
            Cmd::OpenConversation => match self.selected_state().and_then(|s| s.conversation_url.clone()) {
                Some(url) => fx.push(Effect::OpenUrl(url)),
                None => self.toast_error("this cycle has no conversation URL (attach it with `forgeloop project attach`)"),
            },
            Cmd::Follow => {
                self.log.follow = !self.log.follow;
                if self.log.follow && self.log.path.is_some() {
                    fx.push(self.log_window(Anchor::Tail));
                }
            }
            Cmd::Wrap => {
                self.log.wrap = !self.log.wrap;
                self.log.hscroll = 0;
            }
            Cmd::Search => {
                self.log.search.editing = true;
                self.log.search.input.clear();
            }
            Cmd::NextMatch | Cmd::PrevMatch => self.search_again(cmd == Cmd::NextMatch, fx),
            Cmd::FirstError if self.log.path.is_some() => {
                self.log.finding_error = true;
                fx.push(Effect::Log(LogRequest::FirstError { generation: self.log.generation }));
            }
            _ => {}
        }
    }

    // ----- list -----
}

/// The message the coordinator must send next, if any.
pub fn outbox_text(state: &CycleState) -> Option<String> {
    state.outbox.as_ref().map(|o| o.text.clone()).filter(|t| !t.is_empty())
}

/// `owner/repo#N` (or a URL) → the PR's web URL on `web_base` (`https://github.com`, an
/// Enterprise host, or the demo's emulator).
pub fn pr_url(pr: &str, web_base: &str) -> String {
    if pr.starts_with("https://") || pr.starts_with("http://") {
        return pr.to_owned();
    }
    let base = web_base.trim_end_matches('/');
    match pr.split_once('#') {
        Some((repo, number)) => format!("{base}/{repo}/pull/{number}"),
        None => format!("{base}/{pr}"),
    }
}

pub fn run_result_word(result: RunResult) -> &'static str {
    match result {
        RunResult::Passed => "passed",
        RunResult::Failed => "failed",
        RunResult::Live => "running",
        RunResult::Incomplete => "incomplete",
    }
}

fn matches_filter(entry: &CycleEntry, needle: &str) -> bool {
    let mut hay = entry.name().to_lowercase();
    hay.push(' ');
    hay.push_str(&entry.path.to_string_lossy().to_lowercase());
    if let Some(state) = &entry.state {
        for part in [
            Some(state.status.as_str()),
            state.repository.as_deref(),
            state.pr_ref.as_deref(),
            Some(state.request.as_str()),
        ]
        .into_iter()
        .flatten()
        {
            hay.push(' ');
            hay.push_str(&part.to_lowercase());
        }
    }
    if entry.error.is_some() {
        hay.push_str(" error unreadable");
    }
    needle.split_whitespace().all(|word| hay.contains(word))
}

/// Status groups of the status bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusGroup {
    Confirm = 0,
    Blocked = 1,
    Ready = 2,
    Waiting = 3,
    Ended = 4,
    Unreadable = 5,
}

impl StatusGroup {
    pub const ALL: [StatusGroup; 6] = [
        StatusGroup::Confirm,
        StatusGroup::Blocked,
        StatusGroup::Ready,
        StatusGroup::Waiting,
        StatusGroup::Ended,
        StatusGroup::Unreadable,
    ];

    pub fn of(status: Option<Status>) -> StatusGroup {
        match status {
            None => StatusGroup::Unreadable,
            Some(Status::AwaitingBriefConfirmation) => StatusGroup::Confirm,
            Some(s) if s.is_blocked() => StatusGroup::Blocked,
            Some(Status::ReadyToMerge) => StatusGroup::Ready,
            Some(s) if s.is_final() => StatusGroup::Ended,
            Some(_) => StatusGroup::Waiting,
        }
    }
}

pub fn entry_status(entry: &CycleEntry) -> Option<Status> {
    status_of(entry)
}
