//! The control room's state and its one transition function. `App::update` takes an
//! [`Action`] (a key, a file change, a finished background task) and returns the
//! [`Effect`]s the runtime must carry out; it never does I/O itself, so every behaviour is
//! testable as "actions in, state and effects out".

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::domain::state::CycleState;
use crate::domain::status::Status;
use crate::store::journal::Event;
use crate::store::layout::CyclePaths;

use super::editor;
use super::keymap::{self, Cmd, Context};
use super::log_view::{Anchor, FindKind, LogRequest, LogWindow};
use super::model::{CycleEntry, ProjectRecord, RunFile, Sources};
use super::theme::Theme;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Brief,
    Conversation,
    Runs,
    Log,
    Project,
}

impl Tab {
    pub const ALL: [Tab; 5] = [Tab::Brief, Tab::Conversation, Tab::Runs, Tab::Log, Tab::Project];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Brief => "Brief",
            Tab::Conversation => "Conversation",
            Tab::Runs => "Runs",
            Tab::Log => "Log",
            Tab::Project => "Project",
        }
    }

    fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }
}

/// A directory the runtime should watch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchDir {
    pub path: PathBuf,
    pub recursive: bool,
}

/// Where the control room looks, fixed at start.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub cycles_dir: PathBuf,
    pub task_spaces_dir: PathBuf,
    pub registry: PathBuf,
    pub extra_dirs: Vec<PathBuf>,
}

/// Everything a key or a background task can tell the app.
#[derive(Debug, Clone)]
pub enum Action {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize,
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
        result: Result<Vec<Event>, String>,
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
    LogWindow(LogWindow),
    LogFound {
        generation: u64,
        kind: FindKind,
        offset: Option<u64>,
        wrapped: bool,
    },
    LogFailed {
        generation: u64,
        error: String,
    },
    /// A use case finished (`what` names it for messages).
    UseCaseDone {
        what: String,
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

/// What the runtime must do; results come back as [`Action`]s.
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
    pub journal: Option<(PathBuf, Result<Vec<Event>, String>)>,
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
            Cmd::ConfirmBrief => status == Some(Status::AwaitingBriefConfirmation),
            Cmd::Rerun => !running && matches!(status, Some(Status::AwaitingWebgptFix | Status::ReadyToMerge)),
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

    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut fx = Vec::new();
        match action {
            Action::Key(key) => {
                self.toast = None;
                self.dirty = true;
                if let Some(cmd) = keymap::resolve(&self.contexts(), &key) {
                    self.command(cmd, &mut fx);
                }
            }
            Action::Cmd(cmd) => {
                self.dirty = true;
                self.command(cmd, &mut fx);
            }
            Action::Paste(text) => self.paste(&text, &mut fx),
            Action::Mouse(event) => self.mouse_event(event, &mut fx),
            Action::Resize => {
                self.dirty = true;
                if self.log.follow && self.log.path.is_some() {
                    fx.push(self.log_window(Anchor::Tail));
                }
            }
            Action::Tick => {
                self.spinner = self.spinner.wrapping_add(1);
                self.dirty = true;
            }
            Action::Clock(now) => {
                self.now = now;
                self.dirty = true;
            }
            Action::FilesChanged(paths) => self.files_changed(paths, &mut fx),
            Action::Discovered(paths) => self.discovered(paths, &mut fx),
            Action::CyclesLoaded { loaded, gone } => self.cycles_loaded(loaded, gone, &mut fx),
            Action::JournalLoaded { path, result } => {
                if self.selected.as_ref() == Some(&path) {
                    self.journal = Some((path, result));
                    self.dirty = true;
                }
            }
            Action::RunsListed { path, runs } => self.runs_listed(path, runs, &mut fx),
            Action::RegistryLoaded(records) => {
                self.projects = records;
                self.projects_loaded = true;
                self.project_sel = self.project_sel.min(self.projects.len().saturating_sub(1));
                self.dirty = true;
            }
            Action::SourcesLoaded { repository, sources } => {
                self.sources.insert(repository, sources);
                self.dirty = true;
            }
            Action::LogWindow(window) => {
                if window.generation == self.log.generation {
                    self.log.window = window;
                    self.log.loaded = true;
                    self.log.error = None;
                    self.dirty = true;
                }
            }
            Action::LogFound { generation, kind, offset, wrapped } => {
                self.log_found(generation, kind, offset, wrapped, &mut fx)
            }
            Action::LogFailed { generation, error } => {
                if generation == self.log.generation {
                    self.log.error = Some(error);
                    self.log.loaded = true;
                    self.dirty = true;
                }
            }
            Action::UseCaseDone { what, path, result } => self.use_case_done(what, path, result, &mut fx),
            Action::RunFinished { path, result } => self.run_finished(path, result, &mut fx),
            Action::EditorFinished { path, result } => self.editor_finished(path, result),
            Action::Copied(result) => {
                self.toast = Some(match result {
                    Ok(n) => Toast { text: format!("copied {n} characters to the clipboard (OSC 52)"), error: false },
                    Err(e) => Toast { text: format!("could not copy: {e}"), error: true },
                });
                self.dirty = true;
            }
            Action::Opened { url, result } => {
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
            Action::Watching { dirs, problems } => {
                self.watching = (dirs, problems);
                self.dirty = true;
            }
            Action::Terminate => {
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
            Cmd::Tab(i) => self.set_tab(Tab::ALL[usize::from(i).min(4)], fx),
            Cmd::PrevTab => self.set_tab(Tab::ALL[(self.tab.index() + 4) % 5], fx),
            Cmd::NextTab => self.set_tab(Tab::ALL[(self.tab.index() + 1) % 5], fx),
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

    fn refilter(&mut self) {
        let needle = self.filter.to_lowercase();
        self.visible =
            (0..self.cycles.len()).filter(|&i| needle.is_empty() || matches_filter(&self.cycles[i], &needle)).collect();
        if self.selected_row().is_none() {
            self.selected = self.visible.first().map(|&i| self.cycles[i].path.clone());
        }
        self.dirty = true;
    }

    fn sort(&mut self) {
        self.cycles.sort_by(|a, b| {
            a.attention_rank()
                .cmp(&b.attention_rank())
                .then_with(|| b.updated_at().unwrap_or("").cmp(a.updated_at().unwrap_or("")))
                .then_with(|| a.path.cmp(&b.path))
        });
        self.sidecars = self
            .cycles
            .iter()
            .filter_map(|c| CyclePaths::new(c.path.clone()).ok().map(|p| (p.sidecar(), c.path.clone())))
            .collect();
    }

    fn select_row(&mut self, row: usize, fx: &mut Vec<Effect>) {
        let Some(&index) = self.visible.get(row) else { return };
        let path = self.cycles[index].path.clone();
        if self.selected.as_ref() != Some(&path) {
            self.selected = Some(path);
            self.selection_changed(fx);
        }
    }

    /// A new cycle is selected: drop its predecessor's detail and load what the tab needs.
    fn selection_changed(&mut self, fx: &mut Vec<Effect>) {
        self.journal = None;
        self.runs = None;
        self.run_sel = 0;
        self.detail_scroll = 0;
        if let Some(path) = self.selected.clone() {
            fx.push(Effect::LoadJournal(path.clone()));
            fx.push(Effect::ListRuns(path));
        }
        if self.log.path.is_some() {
            self.close_log(fx);
        }
        self.tab_shown(fx);
        self.dirty = true;
    }

    fn next_attention(&mut self, fx: &mut Vec<Effect>) {
        let count = self.visible.len();
        if count == 0 {
            return;
        }
        let start = self.selected_row().map_or(0, |r| r + 1);
        let found = (0..count).map(|k| (start + k) % count).find(|&row| self.cycles[self.visible[row]].needs_human());
        match found {
            Some(row) => {
                self.focus = Focus::List;
                self.select_row(row, fx);
            }
            None => self.toast = Some(Toast { text: "no cycle needs you right now".into(), error: false }),
        }
    }

    fn filter_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        let before = self.selected.clone();
        match cmd {
            Cmd::Insert(c) => self.filter.push(c),
            Cmd::Backspace => {
                self.filter.pop();
            }
            Cmd::Submit => self.filter_editing = false,
            Cmd::Cancel => {
                self.filter.clear();
                self.filter_editing = false;
            }
            _ => return,
        }
        self.refilter();
        if self.selected != before {
            self.selection_changed(fx);
        }
    }

    fn paste(&mut self, text: &str, fx: &mut Vec<Effect>) {
        let clean: String = text.chars().filter(|c| !c.is_control()).collect();
        if self.filter_editing {
            let before = self.selected.clone();
            self.filter.push_str(&clean);
            self.refilter();
            if self.selected != before {
                self.selection_changed(fx);
            }
        } else if self.log.search.editing {
            self.log.search.input.push_str(&clean);
        } else if let Some(Popup::Input { value, .. }) = self.popups.last_mut() {
            value.push_str(&clean);
        }
        self.dirty = true;
    }

    fn movement(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        match self.focus {
            Focus::List => {
                let count = self.visible.len();
                if count == 0 {
                    return;
                }
                let row = self.selected_row().unwrap_or(0);
                let page = usize::from(self.list_height.get().max(2)) - 1;
                let target = match cmd {
                    Cmd::Up => row.saturating_sub(1),
                    Cmd::Down => (row + 1).min(count - 1),
                    Cmd::PageUp => row.saturating_sub(page),
                    Cmd::PageDown => (row + page).min(count - 1),
                    Cmd::Top => 0,
                    Cmd::Bottom => count - 1,
                    _ => row,
                };
                self.select_row(target, fx);
            }
            Focus::Detail => match self.tab {
                Tab::Log => self.log_movement(cmd, fx),
                Tab::Runs => {
                    let count = self.run_rows().len();
                    if count == 0 {
                        return;
                    }
                    let before = self.run_sel;
                    self.run_sel = match cmd {
                        Cmd::Up => self.run_sel.saturating_sub(1),
                        Cmd::Down => (self.run_sel + 1).min(count - 1),
                        Cmd::Top | Cmd::PageUp => 0,
                        Cmd::Bottom | Cmd::PageDown => count - 1,
                        _ => self.run_sel,
                    };
                    if before != self.run_sel && self.log.path.is_some() {
                        self.close_log(fx);
                    }
                }
                _ => {
                    let page = self.detail_height.get().max(2) - 1;
                    self.detail_scroll = match cmd {
                        Cmd::Up => self.detail_scroll.saturating_sub(1),
                        Cmd::Down => self.detail_scroll.saturating_add(1),
                        Cmd::PageUp => self.detail_scroll.saturating_sub(page),
                        Cmd::PageDown => self.detail_scroll.saturating_add(page),
                        Cmd::Top => 0,
                        Cmd::Bottom => u16::MAX,
                        _ => self.detail_scroll,
                    };
                }
            },
        }
    }

    fn set_tab(&mut self, tab: Tab, fx: &mut Vec<Effect>) {
        if self.tab != tab {
            self.tab = tab;
            self.detail_scroll = 0;
        }
        self.tab_shown(fx);
    }

    /// Loads what the visible tab needs.
    fn tab_shown(&mut self, fx: &mut Vec<Effect>) {
        match self.tab {
            Tab::Log => self.ensure_log(fx),
            Tab::Project => {
                if let Some(repo) = self.selected_state().and_then(|s| s.repository.clone())
                    && !self.sources.contains_key(&repo)
                {
                    fx.push(Effect::LoadSources(repo));
                }
            }
            _ => {}
        }
    }

    // ----- files and loading -----

    fn files_changed(&mut self, paths: Vec<PathBuf>, fx: &mut Vec<Effect>) {
        let mut discover = false;
        let mut load = BTreeSet::new();
        let mut journal = false;
        let mut runs = false;
        let mut log = false;
        let mut registry = false;
        let mut sources = BTreeSet::new();
        let selected = self.selected.clone();
        for path in paths {
            if path.starts_with(&self.roots.registry) {
                registry = true;
                if path.file_name().is_some_and(|n| n == "sources.json")
                    && let Ok(rel) = path.strip_prefix(&self.roots.registry)
                {
                    let parts: Vec<_> =
                        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                    if parts.len() == 3 {
                        sources.insert(format!("{}/{}", parts[0], parts[1]));
                    }
                }
                continue;
            }
            if path.parent() == Some(self.roots.task_spaces_dir.as_path()) || path == self.roots.task_spaces_dir {
                discover = true;
                continue;
            }
            if self.cycles.iter().any(|c| c.path == path) {
                load.insert(path);
                continue;
            }
            if let Some((sidecar, state)) = self.sidecar_of(&path) {
                let rel = path.strip_prefix(&sidecar).map(Path::to_path_buf).unwrap_or_default();
                if rel.as_os_str().is_empty() || rel.starts_with("events.jsonl") {
                    load.insert(state.clone());
                    journal |= Some(&state) == selected.as_ref();
                }
                if rel.starts_with("runs") || rel.as_os_str().is_empty() {
                    runs |= Some(&state) == selected.as_ref();
                    log |= self.log.path.as_ref().is_some_and(|l| l == &path || !l.exists());
                }
                continue;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let in_state_dir = path
                .parent()
                .is_some_and(|p| p == self.roots.cycles_dir || self.roots.extra_dirs.iter().any(|d| d == p));
            if (in_state_dir && crate::cycle::list::is_state_name(&name))
                || path == self.roots.cycles_dir
                || self.roots.extra_dirs.contains(&path)
            {
                discover = true;
            }
        }
        if discover {
            fx.push(Effect::Discover);
        }
        if !load.is_empty() {
            fx.push(Effect::LoadCycles(load.into_iter().collect()));
        }
        if let Some(path) = selected {
            if journal {
                fx.push(Effect::LoadJournal(path.clone()));
            }
            if runs {
                fx.push(Effect::ListRuns(path));
            }
        }
        if log && self.log.path.is_some() {
            let anchor = if self.log.follow { Anchor::Tail } else { Anchor::Offset(self.log.window.top) };
            fx.push(self.log_window(anchor));
        }
        if registry {
            fx.push(Effect::LoadRegistry);
        }
        for repo in sources {
            fx.push(Effect::LoadSources(repo));
        }
    }

    fn sidecar_of(&self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        path.ancestors().find_map(|a| self.sidecars.get(a).map(|state| (a.to_path_buf(), state.clone())))
    }

    fn discovered(&mut self, paths: Vec<PathBuf>, fx: &mut Vec<Effect>) {
        self.discovered = true;
        let known: BTreeSet<&PathBuf> = self.cycles.iter().map(|c| &c.path).collect();
        let found: BTreeSet<&PathBuf> = paths.iter().collect();
        let new: Vec<PathBuf> = paths.iter().filter(|p| !known.contains(p)).cloned().collect();
        let gone: Vec<PathBuf> =
            self.cycles.iter().filter(|c| !found.contains(&c.path)).map(|c| c.path.clone()).collect();
        if !gone.is_empty() {
            self.cycles_loaded(Vec::new(), gone, fx);
        }
        if !new.is_empty() {
            fx.push(Effect::LoadCycles(new));
        }
        self.dirty = true;
    }

    fn cycles_loaded(&mut self, loaded: Vec<CycleEntry>, gone: Vec<PathBuf>, fx: &mut Vec<Effect>) {
        let before = self.cycles.len();
        self.cycles.retain(|c| !gone.contains(&c.path));
        for entry in loaded {
            match self.cycles.iter_mut().find(|c| c.path == entry.path) {
                Some(slot) => *slot = entry,
                None => self.cycles.push(entry),
            }
        }
        self.sort();
        let had_selection = self.selected.clone();
        self.refilter();
        if self.selected != had_selection {
            self.selection_changed(fx);
        }
        // The set of cycles changed: watch their directories (the watcher skips no-ops).
        if self.cycles.len() != before || !gone.is_empty() {
            fx.push(Effect::Watch(self.watch_dirs()));
        }
        self.dirty = true;
    }

    fn runs_listed(&mut self, path: PathBuf, runs: Vec<RunFile>, fx: &mut Vec<Effect>) {
        if self.selected.as_ref() != Some(&path) {
            return;
        }
        let before: Vec<PathBuf> =
            self.runs.as_ref().map(|(_, r)| r.iter().map(|f| f.path.clone()).collect()).unwrap_or_default();
        let fresh = self.runs.is_some() && runs.iter().any(|f| !before.contains(&f.path));
        self.runs = Some((path.clone(), runs));
        // A run started here (or one being followed) just created its log: show it live.
        if fresh && (self.is_running(&path) || (self.log.follow && self.tab == Tab::Log)) {
            self.run_sel = 0;
            self.log.follow = true;
            if self.tab == Tab::Log || self.tab == Tab::Runs {
                self.close_log(fx);
                self.tab = Tab::Log;
            }
        }
        if self.tab == Tab::Log {
            self.ensure_log(fx);
        }
        self.dirty = true;
    }

    // ----- log pane -----

    fn log_window(&self, anchor: Anchor) -> Effect {
        Effect::Log(LogRequest::Window {
            generation: self.log.generation,
            anchor,
            height: usize::from(self.log.height.get().max(1)),
        })
    }

    fn close_log(&mut self, fx: &mut Vec<Effect>) {
        self.log.generation += 1;
        self.log.path = None;
        self.log.cycle = None;
        self.log.loaded = false;
        self.log.window = LogWindow::default();
        self.log.error = None;
        self.log.search.current = None;
        self.log.search.state = SearchState::Idle;
        self.log.finding_error = false;
        fx.push(Effect::Log(LogRequest::Close));
    }

    /// Opens the selected run's log if another (or none) is open.
    fn ensure_log(&mut self, fx: &mut Vec<Effect>) {
        let rows = self.run_rows();
        self.run_sel = self.run_sel.min(rows.len().saturating_sub(1));
        let Some(row) = rows.get(self.run_sel) else { return };
        let Some(path) = row.log.clone() else { return };
        if self.log.path.as_ref() == Some(&path) {
            return;
        }
        self.log.generation += 1;
        self.log.path = Some(path.clone());
        self.log.cycle = self.selected.clone();
        self.log.title = match row.iteration {
            Some(i) => format!("iteration {i} · {} · {}", row.sha12, run_result_word(row.result)),
            None => path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        };
        self.log.loaded = false;
        self.log.window = LogWindow::default();
        self.log.error = None;
        self.log.search.current = None;
        self.log.search.state = SearchState::Idle;
        self.log.hscroll = 0;
        if row.result == RunResult::Live {
            self.log.follow = true;
        }
        fx.push(Effect::Log(LogRequest::Open { generation: self.log.generation, path }));
        let anchor = if self.log.follow { Anchor::Tail } else { Anchor::Offset(0) };
        fx.push(self.log_window(anchor));
    }

    fn log_movement(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        if self.log.path.is_none() {
            return;
        }
        let page = i64::from(self.log.height.get().max(2)) - 1;
        let top = self.log.window.top;
        let anchor = match cmd {
            Cmd::Up => Anchor::Lines { from: top, delta: -1 },
            Cmd::Down => Anchor::Lines { from: top, delta: 1 },
            Cmd::PageUp => Anchor::Lines { from: top, delta: -page },
            Cmd::PageDown => Anchor::Lines { from: top, delta: page },
            Cmd::Top => Anchor::Offset(0),
            Cmd::Bottom => Anchor::Tail,
            Cmd::Left => {
                self.log.hscroll = self.log.hscroll.saturating_sub(8);
                return;
            }
            Cmd::Right => {
                if !self.log.wrap {
                    self.log.hscroll = self.log.hscroll.saturating_add(8);
                }
                return;
            }
            _ => return,
        };
        // Scrolling away from the end stops following; going to the end does not start it.
        if !matches!(anchor, Anchor::Tail) {
            self.log.follow = false;
        }
        fx.push(self.log_window(anchor));
    }

    fn search_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        let search = &mut self.log.search;
        match cmd {
            Cmd::Insert(c) => search.input.push(c),
            Cmd::Backspace => {
                search.input.pop();
            }
            Cmd::Cancel => {
                search.editing = false;
                search.input.clear();
            }
            Cmd::Submit => {
                search.editing = false;
                search.query = std::mem::take(&mut search.input);
                search.current = None;
                if search.query.is_empty() {
                    search.state = SearchState::Idle;
                } else {
                    self.log.follow = false;
                    let from = self.log.window.top;
                    self.start_search(from, true, fx);
                }
            }
            _ => {}
        }
    }

    fn start_search(&mut self, from: u64, forward: bool, fx: &mut Vec<Effect>) {
        self.log.search.state = SearchState::Searching;
        self.log.search.wrapped = false;
        fx.push(Effect::Log(LogRequest::Search {
            generation: self.log.generation,
            query: self.log.search.query.clone(),
            from,
            forward,
        }));
    }

    fn search_again(&mut self, forward: bool, fx: &mut Vec<Effect>) {
        if self.log.search.query.is_empty() || self.log.path.is_none() {
            return;
        }
        self.log.follow = false;
        // From just after (or before) the current match's line.
        let line_end = |at: u64| self.log.window.lines.iter().find(|l| l.offset == at).map_or(at + 1, |l| l.end);
        let from = match (self.log.search.current, forward) {
            (Some(at), true) => line_end(at),
            (Some(at), false) => at,
            (None, _) => self.log.window.top,
        };
        self.start_search(from, forward, fx);
    }

    fn log_found(&mut self, generation: u64, kind: FindKind, offset: Option<u64>, wrapped: bool, fx: &mut Vec<Effect>) {
        if generation != self.log.generation {
            return;
        }
        self.dirty = true;
        match kind {
            FindKind::Search => {
                self.log.search.state = if offset.is_some() { SearchState::Found } else { SearchState::NotFound };
                self.log.search.wrapped = wrapped;
                if offset.is_some() {
                    self.log.search.current = offset;
                }
            }
            FindKind::Error => {
                self.log.finding_error = false;
                if offset.is_none() {
                    self.toast = Some(Toast { text: "no error line in this log".into(), error: false });
                }
            }
        }
        if let Some(at) = offset {
            self.log.follow = false;
            let context = i64::from(self.log.height.get() / 3);
            fx.push(self.log_window(Anchor::Lines { from: at, delta: -context }));
        }
    }

    // ----- projects screen -----

    fn projects_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        let count = self.projects.len();
        match cmd {
            Cmd::Projects | Cmd::Back => self.screen = Screen::Cycles,
            Cmd::Quit => self.ask_quit(fx),
            Cmd::Help => self.popups.push(Popup::Help { scroll: 0 }),
            Cmd::Suspend => fx.push(Effect::Suspend),
            Cmd::Up => self.project_sel = self.project_sel.saturating_sub(1),
            Cmd::Down => self.project_sel = (self.project_sel + 1).min(count.saturating_sub(1)),
            Cmd::Top | Cmd::PageUp => self.project_sel = 0,
            Cmd::Bottom | Cmd::PageDown => self.project_sel = count.saturating_sub(1),
            Cmd::Open => {
                if let Some(url) = self.projects.get(self.project_sel).and_then(|p| p.project_url.clone()) {
                    fx.push(Effect::OpenUrl(url));
                }
            }
            _ => {}
        }
    }

    // ----- dialogs -----

    fn open_confirm(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let Some(state) = &entry.state else {
            self.toast_error("this state file cannot be read; nothing to confirm");
            return;
        };
        if state.status != Status::AwaitingBriefConfirmation {
            self.toast_error(format!(
                "only a brief awaiting confirmation can be confirmed; this cycle is {}",
                state.status
            ));
            return;
        }
        let fields = match &state.brief {
            Some(brief) => {
                crate::domain::brief::Field::ALL.iter().map(|f| (f.label(), brief.get(*f).to_owned())).collect()
            }
            None => vec![("Intent brief", state.intent_brief.clone())],
        };
        let dialog = ConfirmDialog {
            path: entry.path.clone(),
            name: entry.name(),
            question: state.webgpt_question.clone(),
            fields,
            edited: None,
            draft: None,
            error: None,
            busy: false,
            scroll: 0,
        };
        self.popups.push(Popup::ConfirmBrief(dialog));
    }

    fn ask_rerun(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let path = entry.path.clone();
        let Some(state) = &entry.state else {
            self.toast_error("this state file cannot be read");
            return;
        };
        if self.is_running(&path) {
            self.toast_error("a rerun started here is already running for this cycle");
            return;
        }
        let override_pass = match state.status {
            Status::AwaitingWebgptFix => false,
            Status::ReadyToMerge => true,
            other => {
                self.toast_error(format!(
                    "rerun is allowed on AWAITING_WEBGPT_FIX and, as an override, READY_TO_MERGE; this cycle is {other}"
                ));
                return;
            }
        };
        let Some(pr) = state.pr_ref.clone() else {
            self.toast_error("this cycle has no PR to rerun");
            return;
        };
        if state.commands.is_none() {
            self.toast_error(
                "this cycle has no stored commands; run `forgeloop forge --pr … --commands-json F` once first",
            );
            return;
        }
        let mut body = format!(
            "Test {pr} again at its current head with the stored commands.\nThis counts as iteration {} of {}.",
            state.iteration.saturating_add(1),
            state.max_iterations
        );
        if override_pass {
            body.push_str("\n\nThe last run PASSED: this is a human override of READY_TO_MERGE.");
        }
        if state.iteration >= state.max_iterations {
            body.push_str(
                "\n\nThe cap is already reached: the cycle will move to BLOCKED_MAX_ITERATIONS instead of running.",
            );
        }
        self.popups.push(Popup::YesNo { ask: Ask::Rerun(path), title: "Rerun the tests?".into(), body });
    }

    fn ask_abort(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        match entry.status() {
            Some(s) if !s.is_final() => {}
            Some(s) => {
                self.toast_error(format!("this cycle has already ended ({s})"));
                return;
            }
            None => {
                self.toast_error("this state file cannot be read");
                return;
            }
        }
        let running = self.is_running(&entry.path);
        let prompt = format!(
            "Abort {} for good? This cannot be undone.{}\nReason (journaled):",
            entry.name(),
            if running { " The rerun started here is cancelled first." } else { "" }
        );
        self.popups.push(Popup::Input {
            purpose: InputPurpose::Abort(entry.path.clone()),
            title: "Abort the cycle".into(),
            prompt,
            value: DEFAULT_ABORT_REASON.into(),
            error: None,
        });
    }

    fn ask_unblock(&mut self) {
        let Some(state) = self.selected_state() else { return };
        let status = state.status;
        if !status.is_unblockable() {
            let hint = if status == Status::BlockedMaxIterations {
                "the cap is lifted with extend (+), not unblock"
            } else {
                "only a BLOCKED_* cycle can be unblocked"
            };
            self.toast_error(format!("{hint}; this cycle is {status}"));
            return;
        }
        let why = state.last_error.clone().unwrap_or_else(|| "no reason recorded".into());
        let back = state.blocked_from.map_or("the status before the block".to_owned(), |s| s.as_str().to_owned());
        let path = self.selected.clone().unwrap_or_default();
        self.popups.push(Popup::YesNo {
            ask: Ask::Unblock(path),
            title: "Unblock the cycle?".into(),
            body: format!("It is {status}: {why}\n\nIt returns to {back}. Journaled as you (human)."),
        });
    }

    fn ask_extend(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let Some(state) = &entry.state else { return };
        if state.status.is_final() {
            self.toast_error(format!("this cycle has already ended ({})", state.status));
            return;
        }
        let prompt = format!(
            "{} has used {} of {} iterations. Allow how many more?",
            entry.name(),
            state.iteration,
            state.max_iterations
        );
        self.popups.push(Popup::Input {
            purpose: InputPurpose::Extend(entry.path.clone()),
            title: "Extend the iteration cap".into(),
            prompt,
            value: "1".into(),
            error: None,
        });
    }

    fn ask_quit(&mut self, fx: &mut Vec<Effect>) {
        if self.live_runs.is_empty() {
            self.quit = true;
            fx.push(Effect::Quit);
        } else {
            let n = self.live_runs.len();
            self.popups.push(Popup::YesNo {
                ask: Ask::Quit,
                title: "Quit while a rerun is running?".into(),
                body: format!(
                    "{n} rerun{} started here {} still running. Quitting cancels {}.",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "is" } else { "are" },
                    if n == 1 { "it" } else { "them" }
                ),
            });
        }
    }

    fn popup_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        let Some(popup) = self.popups.last_mut() else { return };
        match popup {
            Popup::Help { scroll } => match cmd {
                Cmd::Cancel => {
                    self.popups.pop();
                }
                Cmd::Down => *scroll = scroll.saturating_add(1),
                Cmd::Up => *scroll = scroll.saturating_sub(1),
                Cmd::PageDown => *scroll = scroll.saturating_add(10),
                Cmd::PageUp => *scroll = scroll.saturating_sub(10),
                Cmd::Top => *scroll = 0,
                Cmd::Bottom => *scroll = u16::MAX,
                _ => {}
            },
            Popup::Message { copy, .. } => match cmd {
                Cmd::Cancel => {
                    self.popups.pop();
                }
                Cmd::CopyOutbox => {
                    if let Some(text) = copy.clone() {
                        fx.push(Effect::Copy(text));
                    }
                }
                _ => {}
            },
            Popup::YesNo { ask, .. } => match cmd {
                Cmd::Yes => {
                    let ask = ask.clone();
                    self.popups.pop();
                    self.answer_yes(ask, fx);
                }
                Cmd::No | Cmd::Cancel => {
                    self.popups.pop();
                }
                _ => {}
            },
            Popup::Input { purpose, value, error, .. } => match cmd {
                Cmd::Insert(c) => {
                    let numeric = matches!(purpose, InputPurpose::Extend(_));
                    if !numeric || c.is_ascii_digit() {
                        value.push(c);
                        *error = None;
                    }
                }
                Cmd::Backspace => {
                    value.pop();
                }
                Cmd::Cancel => {
                    self.popups.pop();
                }
                Cmd::Submit => match purpose.clone() {
                    InputPurpose::Extend(path) => match value.trim().parse::<u32>() {
                        Ok(by) if by >= 1 => {
                            self.popups.pop();
                            fx.push(Effect::Extend { path, by });
                        }
                        _ => *error = Some("enter a whole number of at least 1".into()),
                    },
                    InputPurpose::Abort(path) => {
                        let reason = value.trim().to_owned();
                        if reason.is_empty() {
                            *error = Some("say why (it is journaled)".into());
                        } else {
                            self.popups.pop();
                            self.abort(path, reason, fx);
                        }
                    }
                },
                _ => {}
            },
            Popup::ConfirmBrief(dialog) => match cmd {
                Cmd::Yes if !dialog.busy => {
                    dialog.busy = true;
                    dialog.error = None;
                    fx.push(Effect::Confirm { path: dialog.path.clone(), edited: dialog.edited.clone() });
                }
                Cmd::Edit if !dialog.busy => {
                    let text = dialog.draft.clone().unwrap_or_else(|| {
                        let (question, brief) = match &dialog.edited {
                            Some((q, b)) => (q.clone(), b.clone()),
                            None => (
                                dialog.question.clone(),
                                dialog
                                    .fields
                                    .iter()
                                    .map(|(l, t)| format!("{l}: {}", t.replace('\n', "\n  ")))
                                    .collect::<Vec<_>>()
                                    .join("\n"),
                            ),
                        };
                        editor::compose(&question, &brief)
                    });
                    fx.push(Effect::EditBrief { path: dialog.path.clone(), text });
                }
                Cmd::No | Cmd::Cancel if !dialog.busy => {
                    self.popups.pop();
                }
                Cmd::Down => dialog.scroll = dialog.scroll.saturating_add(1),
                Cmd::Up => dialog.scroll = dialog.scroll.saturating_sub(1),
                Cmd::PageDown => dialog.scroll = dialog.scroll.saturating_add(10),
                Cmd::PageUp => dialog.scroll = dialog.scroll.saturating_sub(10),
                _ => {}
            },
        }
    }

    fn answer_yes(&mut self, ask: Ask, fx: &mut Vec<Effect>) {
        match ask {
            Ask::Quit => {
                for path in self.live_runs.keys() {
                    fx.push(Effect::CancelRun { path: path.clone() });
                }
                self.quit = true;
                fx.push(Effect::Quit);
            }
            Ask::Rerun(path) => {
                self.live_runs.insert(path.clone(), LiveRun { cancel_requested: false, abort_after: None });
                self.toast = Some(Toast { text: "rerun started; its log appears in the Log tab".into(), error: false });
                fx.push(Effect::Rerun { path: path.clone() });
                if self.selected.as_ref() == Some(&path) {
                    fx.push(Effect::ListRuns(path));
                }
            }
            Ask::CancelRun(path) => {
                if let Some(run) = self.live_runs.get_mut(&path) {
                    run.cancel_requested = true;
                    fx.push(Effect::CancelRun { path });
                }
            }
            Ask::Unblock(path) => fx.push(Effect::Unblock { path }),
        }
    }

    fn abort(&mut self, path: PathBuf, reason: String, fx: &mut Vec<Effect>) {
        match self.live_runs.get_mut(&path) {
            Some(run) => {
                // The run holds the cycle lock: cancel it, abort when it has stopped.
                run.cancel_requested = true;
                run.abort_after = Some(reason);
                fx.push(Effect::CancelRun { path });
                self.toast = Some(Toast {
                    text: "cancelling the rerun; the cycle is aborted when it stops".into(),
                    error: false,
                });
            }
            None => fx.push(Effect::Abort { path, reason }),
        }
    }

    fn editor_finished(&mut self, path: PathBuf, result: Result<String, String>) {
        self.dirty = true;
        let Some(Popup::ConfirmBrief(dialog)) = self.popups.last_mut() else { return };
        if dialog.path != path {
            return;
        }
        match result {
            Err(error) => dialog.error = Some(error),
            Ok(text) => {
                dialog.draft = Some(text.clone());
                match editor::parse(&text) {
                    Ok((question, brief)) => {
                        dialog.question = question.clone();
                        dialog.fields = crate::domain::brief::Field::ALL
                            .iter()
                            .map(|f| (f.label(), brief.get(*f).to_owned()))
                            .collect();
                        dialog.edited = Some((question, brief.render()));
                        dialog.error = None;
                    }
                    Err(error) => {
                        dialog.error = Some(format!("{error}. Nothing was changed; press e to fix it."));
                    }
                }
            }
        }
    }

    fn use_case_done(&mut self, what: String, path: PathBuf, result: Result<String, String>, fx: &mut Vec<Effect>) {
        self.dirty = true;
        let confirm_dialog = matches!(self.popups.last(), Some(Popup::ConfirmBrief(d)) if d.path == path);
        match result {
            Ok(message) => {
                if what == "confirm" && confirm_dialog {
                    self.popups.pop();
                }
                self.toast = Some(Toast { text: message, error: false });
                // The watcher reloads it too; this makes the result visible at once.
                fx.push(Effect::LoadCycles(vec![path.clone()]));
                if self.selected.as_ref() == Some(&path) {
                    fx.push(Effect::LoadJournal(path));
                }
            }
            Err(error) => {
                if what == "confirm"
                    && confirm_dialog
                    && let Some(Popup::ConfirmBrief(dialog)) = self.popups.last_mut()
                {
                    dialog.busy = false;
                    dialog.error = Some(error);
                    return;
                }
                self.toast_error(format!("{what} failed: {error}"));
            }
        }
    }

    fn run_finished(&mut self, path: PathBuf, result: Result<String, String>, fx: &mut Vec<Effect>) {
        self.dirty = true;
        let run = self.live_runs.remove(&path);
        match &result {
            Ok(summary) => self.toast = Some(Toast { text: format!("rerun finished: {summary}"), error: false }),
            Err(error) if run.as_ref().is_some_and(|r| r.cancel_requested) => {
                self.toast = Some(Toast { text: format!("rerun cancelled: {error}"), error: false })
            }
            Err(error) => self.toast_error(format!("rerun failed: {error}")),
        }
        if let Some(reason) = run.and_then(|r| r.abort_after) {
            fx.push(Effect::Abort { path: path.clone(), reason });
        }
        fx.push(Effect::LoadCycles(vec![path.clone()]));
        if self.selected.as_ref() == Some(&path) {
            fx.push(Effect::ListRuns(path));
        }
    }

    // ----- mouse -----

    fn mouse_event(&mut self, event: MouseEvent, fx: &mut Vec<Effect>) {
        if !self.mouse || !self.popups.is_empty() {
            return;
        }
        let inside = |r: Rect| {
            event.column >= r.x && event.column < r.x + r.width && event.row >= r.y && event.row < r.y + r.height
        };
        let list = self.hits.list.get();
        let detail = self.hits.detail.get();
        let tabs = self.hits.tabs.get();
        match event.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let cmd = if event.kind == MouseEventKind::ScrollDown { Cmd::Down } else { Cmd::Up };
                if inside(list) {
                    self.focus = Focus::List;
                } else if inside(detail) {
                    self.focus = Focus::Detail;
                } else {
                    return;
                }
                for _ in 0..3 {
                    self.movement(cmd, fx);
                }
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if inside(tabs) {
                    // Tab titles are drawn as " Title " separated by "│".
                    let mut x = tabs.x;
                    for (i, tab) in Tab::ALL.iter().enumerate() {
                        let w = tab.title().len() as u16 + 4;
                        if event.column < x + w {
                            self.focus = Focus::Detail;
                            self.set_tab(Tab::ALL[i], fx);
                            break;
                        }
                        x += w;
                    }
                } else if inside(list) {
                    self.focus = Focus::List;
                    // Row 0 is the border, row 1 the header.
                    let row = usize::from(event.row.saturating_sub(list.y + 2)) + self.hits.list_offset.get();
                    if event.row >= list.y + 2 {
                        self.select_row(row, fx);
                    }
                } else if inside(detail) {
                    self.focus = Focus::Detail;
                }
            }
            _ => return,
        }
        self.dirty = true;
    }
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
