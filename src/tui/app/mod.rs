//! The control room's state and its one transition function. `App::update` takes an
//! [`Event`] (a key, a file change, a finished background task) and returns the
//! [`Effect`]s the runtime must carry out; it never does I/O itself, so every behaviour is
//! testable as "events in, state and effects out".

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::cycle::allow_network;
use crate::cycle::files::CyclePaths;
use crate::domain::machine;
use crate::domain::state::CycleState;
use crate::domain::status::Status;

use super::keymap::{self, Cmd, Context};
use super::keys;
use super::model::CycleEntry;
use super::panes::run_rows;
pub use super::registry::Tab;
use super::theme::Theme;
pub use super::watch::WatchDir;

mod actions;
mod attention;
mod dialogs;
mod files;

pub use super::event::{Effect, Event, UseCase};
pub use super::panes::list::CycleList;
pub use super::panes::list::StatusGroup;
pub use super::panes::run_rows::{LIVE_IDLE_SECS, RunReport, RunResult, RunRow, run_result_word};
use super::panes::screens::ScreenAsked;
use super::panes::tabs::Asked;
pub use super::panes::{Draw, Focus, Pane, RegistryRead, Reply, Screens, Selection, SharedLoad, Tabs};
pub use super::panes::{SearchLine, SearchState};
pub use super::widgets::Hits;
pub use super::widgets::outbox_kind_name;
pub use attention::Attention;
pub use dialogs::{Answer, Ask, ConfirmDialog, InputPurpose, Popup, Popups, SayDialog};

/// The spinner's frames, one a tick (100 ms) while something runs.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const DEFAULT_ABORT_REASON: &str = "aborted by a person in the control room";

pub use super::model::Roots;
pub use super::registry::Screen;

/// Ready rows whose size the control room makes by itself in one session (design §6.7).
pub const SIZE_BUDGET: usize = 32;

/// Ticks (100 ms) between two looks at the runs in progress.
const LIVE_REFRESH_TICKS: usize = 10;

/// A rerun started from this control room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRun {
    /// The person asked to cancel it: its end is reported as a cancellation, not a failure.
    pub cancel_requested: bool,
    /// Abort once the run has stopped (the run holds the cycle lock until then).
    pub abort_after: Option<String>,
}

/// A one-line message in the status line, until the next key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toast {
    /// What it says.
    pub text: String,
    /// It reports a failure (drawn as an error).
    pub error: bool,
}

/// The control room: its settings, the panes (the tabs and the screens, each owning its state,
/// loads and logic; the app never names one), and what spans panes (the cycle list, popups,
/// focus, runs started here, the status line, the caches several panes read). `update` routes
/// each event to the panes it concerns.
pub struct App {
    /// Where it looks, fixed at start.
    pub roots: Roots,
    /// Everything drawn passes through it (design §7: TUI rendering is an output channel).
    pub redactor: crate::redact::Redactor,
    /// The colours (`--theme`, config `tui.theme`; `NO_COLOR` honoured).
    pub theme: Theme,
    /// Mouse input is on (`--mouse`, config `tui.mouse`); otherwise mouse events are ignored.
    pub mouse: bool,
    /// The clock as of the last draw or `Event::Clock`: ages and elapsed times are measured
    /// from it.
    pub now: DateTime<Utc>,
    /// Where PR pages live (`https://github.com`, an Enterprise host, the demo's emulator).
    pub web_base: String,
    /// The person turned the sandbox off (config): every screen says so.
    pub unsandboxed: bool,
    /// The cycle list: every cycle, the filter, the selection.
    pub list: CycleList,
    /// The detail pane's tabs.
    pub tabs: Tabs,
    /// What was read of the Project registry (the Projects screen, the Project tab).
    pub registry: RegistryRead,
    /// The screens besides the cycles.
    pub screens: Screens,
    /// The dialogs open over the screen.
    pub popups: Popups,
    /// The last file edited for a message to WebGPT, per cycle, until it is sent or emptied:
    /// `m` reopens it, so words refused or set aside are not lost.
    pub message_drafts: BTreeMap<PathBuf, String>,
    /// Which half of the cycles screen has the keys.
    pub focus: Focus,
    /// The screen shown.
    pub screen: Screen,
    /// The focused pane fills the screen.
    pub zoom: bool,
    /// Reruns this control room started, by state file, until they finish.
    pub live_runs: BTreeMap<PathBuf, LiveRun>,
    /// Ticks so far; picks the spinner's frame.
    pub spinner: usize,
    /// The status line's message, if any.
    pub toast: Option<Toast>,
    /// How many directories are watched, and what could not be.
    pub watching: (usize, Vec<String>),
    /// The first look for cycles has answered (before it, an empty list says "Loading…").
    pub discovered: bool,
    /// Bell and desktop notification when a cycle starts needing the person.
    pub attention: Attention,
    /// A `READY_TO_MERGE` cycle whose whole-PR diff is being made for its row's size (one at
    /// a time), and every (cycle, head) asked for once already.
    pub sizing: Option<PathBuf>,
    /// Every (cycle, head) whose size was asked for once already, at most [`SIZE_BUDGET`].
    pub sized: BTreeSet<(PathBuf, String)>,
    /// The person quit (or a signal came): the runtime stops.
    pub quit: bool,
    /// Where the last frame drew the list and the tabs, for mouse clicks.
    pub hits: Hits,
    /// Set when something visible changed; the runtime draws and clears it.
    pub dirty: bool,
}

impl App {
    /// A control room that has read nothing yet; [`App::init`] says what to do first.
    pub fn new(roots: Roots, theme: Theme, mouse: bool, now: DateTime<Utc>, redactor: crate::redact::Redactor) -> App {
        App {
            roots,
            redactor,
            theme,
            mouse,
            now,
            web_base: "https://github.com".to_owned(),
            unsandboxed: false,
            list: CycleList::default(),
            tabs: Tabs::default(),
            registry: RegistryRead::default(),
            screens: Screens::default(),
            popups: Popups::default(),
            message_drafts: BTreeMap::new(),
            focus: Focus::List,
            screen: Screen::Cycles,
            zoom: false,
            live_runs: BTreeMap::new(),
            spinner: 0,
            toast: None,
            watching: (0, Vec::new()),
            discovered: false,
            attention: Attention::default(),
            sizing: None,
            sized: BTreeSet::new(),
            quit: false,
            hits: Hits::default(),
            dirty: true,
        }
    }

    /// What the runtime does first.
    pub fn init(&mut self) -> Vec<Effect> {
        let mut fx = vec![Effect::Watch(self.watch_dirs()), Effect::Discover, Effect::LoadRegistry];
        self.with_screens(&mut fx, |screens, registry, asked| screens.started(registry, asked));
        fx
    }

    // ----- queries used by views and tests -----

    /// A path as it may be shown (home as `~`, secrets masked).
    pub fn shown(&self, path: &Path) -> String {
        self.redactor.redact(&path.display().to_string()).into_owned()
    }

    /// The selected cycle, if any.
    pub fn selected_entry(&self) -> Option<&CycleEntry> {
        self.list.selected_entry()
    }

    /// The selected cycle's state, when its file could be read.
    pub fn selected_state(&self) -> Option<&CycleState> {
        self.list.selected_state()
    }

    /// Position of the selection among the visible rows.
    pub fn selected_row(&self) -> Option<usize> {
        self.list.selected_row()
    }

    /// A test of this cycle is in progress, started here or by any other process.
    pub fn is_running(&self, path: &Path) -> bool {
        self.running_here(path) || self.run_elsewhere(path).is_some()
    }

    /// A rerun this control room started (it holds its cancel switch).
    pub fn running_here(&self, path: &Path) -> bool {
        self.live_runs.contains_key(path)
    }

    /// A run another process holds (an agent's `forge --pr`, the MCP server, another control
    /// room): stopping it means asking that process (design §6.6).
    pub fn run_elsewhere(&self, path: &Path) -> Option<&crate::cycle::live::LiveRun> {
        if self.running_here(path) {
            return None;
        }
        self.list.cycles.iter().find(|c| c.path == path).and_then(|c| c.live.as_ref())
    }

    /// True while something animates (the only reason to tick).
    pub fn animating(&self) -> bool {
        !self.live_runs.is_empty()
            || self.list.cycles.iter().any(|c| c.live.is_some())
            || self.tabs.busy()
            || self.popups.busy()
    }

    /// The spinner's frame to draw now.
    pub fn spinner_frame(&self) -> &'static str {
        SPINNER[self.spinner % SPINNER.len()]
    }

    /// The shown tab has the keys and its search line is open.
    fn searching(&self) -> bool {
        self.focus == Focus::Detail && self.tabs.editing()
    }

    /// The search line of the tab shown, if it has one.
    pub fn search(&self) -> Option<&SearchLine> {
        self.tabs.search()
    }

    /// What the panes draw with this frame (see [`Draw`]), its runs and the app's answers given.
    pub fn draw<'a>(
        &'a self,
        rows: &'a [RunRow],
        running: &'a dyn Fn(&Path) -> bool,
        available: &'a dyn Fn(Cmd) -> bool,
    ) -> Draw<'a> {
        Draw {
            theme: &self.theme,
            keys: keys::active(),
            redactor: &self.redactor,
            now: self.now,
            spinner: self.spinner_frame(),
            focus: self.focus,
            sel: self.selection(rows),
            loaded: &self.tabs.loaded,
            list: &self.list,
            registry: &self.registry,
            hits: &self.hits,
            discovered: self.discovered,
            unsandboxed: self.unsandboxed,
            cycles_dir: &self.roots.cycles_dir,
            registry_dir: &self.roots.registry,
            running,
            available,
        }
    }

    /// What the tabs see of the selected cycle, its runs given (see [`App::run_rows`]).
    fn selection<'a>(&'a self, rows: &'a [RunRow]) -> Selection<'a> {
        selection(&self.list, &self.live_runs, &self.registry, rows)
    }

    /// Calls the tabs with the selection (its run rows made now) and turns what the panes
    /// asked for into effects.
    fn with_tabs<R>(&mut self, fx: &mut Vec<Effect>, f: impl FnOnce(&mut Tabs, &Selection, &mut Asked) -> R) -> R {
        let rows = self.run_rows();
        // A run that went away cannot stay selected.
        self.tabs.loaded.run = self.tabs.loaded.run.min(rows.len().saturating_sub(1));
        let sel = selection(&self.list, &self.live_runs, &self.registry, &rows);
        let mut asked = Asked::default();
        let out = f(&mut self.tabs, &sel, &mut asked);
        fx.extend(asked.own.into_iter().map(Effect::Pane));
        fx.extend(asked.shared.into_iter().map(shared_effect));
        if let Some((title, body, load)) = asked.confirm {
            self.popups.push(Popup::YesNo { ask: Ask::Pane(load), title, body });
        }
        if let Some((title, prompt, load)) = asked.text {
            let purpose = InputPurpose::Pane(Box::new(load));
            self.popups.push(Popup::Input { purpose, title, prompt, value: String::new(), error: None });
        }
        out
    }

    /// Hands the shown tab a command and does what its reply leaves to the app.
    fn route(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) -> Reply {
        let reply = self.with_tabs(fx, |tabs, sel, asked| tabs.command(cmd, sel, asked));
        self.replied(&reply, fx);
        reply
    }

    /// What a tab's reply leaves to the app: the status line, a row to read again.
    fn replied(&mut self, reply: &Reply, fx: &mut Vec<Effect>) {
        match reply {
            Reply::Refused(why) => self.toast_error(why.clone()),
            Reply::Note(text) => self.toast = Some(Toast { text: text.clone(), error: false }),
            Reply::OpenUrl(url) => fx.push(Effect::OpenUrl(url.clone())),
            // A whole-PR diff just opened may be one the row of a ready cycle lacked.
            Reply::DiffMade(cycle) => {
                if self.list.cycles.iter().any(|c| {
                    &c.path == cycle
                        && c.diff_size.is_none()
                        && matches!(c.status(), Some(Status::ReadyToMerge | Status::NeedsReview))
                }) {
                    fx.push(Effect::LoadCycles(vec![cycle.clone()]));
                }
            }
            Reply::Saved(cycle, text) => {
                self.toast = Some(Toast { text: text.clone(), error: false });
                // The watcher reloads it too; this makes the result visible at once.
                fx.push(Effect::LoadCycles(vec![cycle.clone()]));
                if self.list.selected.as_ref() == Some(cycle) {
                    fx.push(Effect::LoadJournal(cycle.clone()));
                }
            }
            Reply::NotMine | Reply::Done | Reply::Ask(_) | Reply::ShowMe | Reply::Reload => {}
        }
    }

    /// Active keyboard contexts, most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        if let Some(context) = self.popups.context() {
            return vec![context];
        }
        if self.screen != Screen::Cycles {
            return Screens::contexts(self.screen).to_vec();
        }
        if self.list.filter_editing {
            return vec![Context::FilterInput];
        }
        if self.searching() {
            return vec![Context::SearchInput];
        }
        match self.focus {
            Focus::List => keymap::LIST_STACK.to_vec(),
            Focus::Detail => self.tabs.contexts().to_vec(),
        }
    }

    /// Whether a command makes sense now (footer hints hide the others).
    pub fn available(&self, cmd: Cmd) -> bool {
        let rows = if self.detail_has_keys() { self.run_rows() } else { Vec::new() };
        self.available_with(cmd, &rows)
    }

    /// The detail's tab has the keys (so it has a say in what is available).
    fn detail_has_keys(&self) -> bool {
        self.screen == Screen::Cycles && self.focus == Focus::Detail
    }

    /// [`App::available`] with the selected cycle's run rows made already: the footer asks
    /// for every hint of a frame, and the rows are made once for all of them.
    pub(crate) fn available_with(&self, cmd: Cmd, rows: &[RunRow]) -> bool {
        let state = self.selected_state();
        let status = state.map(|s| s.status);
        let running = self.list.selected.as_ref().is_some_and(|p| self.is_running(p));
        if self.detail_has_keys()
            && let Some(answer) = self.tabs.available(cmd, &self.selection(rows))
        {
            return answer;
        }
        if let Some(answer) = self.screens.available(self.screen, cmd, &self.registry) {
            return answer;
        }
        match cmd {
            Cmd::ConfirmBrief => state.is_some_and(|s| machine::can_confirm(s).is_ok()),
            // Status only (like the key's help): the dialog then says what else is missing.
            Cmd::Rerun => !running && state.is_some_and(|s| machine::rerun_allowed(s).is_ok()),
            Cmd::CancelRun => running,
            Cmd::Abort => status.is_some_and(|s| !s.is_final()),
            Cmd::Unblock => status.is_some_and(Status::is_unblockable),
            Cmd::Approve => {
                !running
                    && (status == Some(Status::NeedsReview)
                        || state.is_some_and(|s| s.dispute.as_ref().is_some_and(|d| d.acceptable())))
            }
            Cmd::AllowHosts => state.is_some_and(|s| allow_network::refused_hosts(s).is_some()),
            Cmd::DropMessage => state.is_some_and(|s| droppable(s).is_some()),
            Cmd::MessageWebgpt => state.is_some_and(|s| say_refusal(s).is_none()),
            Cmd::Extend => status.is_some_and(|s| !s.is_final()),
            Cmd::CopyOutbox => state.is_some_and(|s| outbox_text(s).is_some()),
            Cmd::OpenPr => state.is_some_and(|s| s.pr_ref.is_some()),
            Cmd::OpenConversation => state.is_some_and(|s| s.conversation_url.is_some()),
            Cmd::NextAttention => self.list.cycles.iter().any(CycleEntry::needs_human),
            _ => true,
        }
    }

    /// The footer's hints: the key and label of each command that makes sense now.
    pub fn hints(&self) -> Vec<(String, &'static str)> {
        let rows = if self.detail_has_keys() { self.run_rows() } else { Vec::new() };
        keys::hints(&self.contexts(), |cmd| self.available_with(cmd, &rows))
    }

    /// Rows of the Runs tab for the selected cycle, newest first.
    pub fn run_rows(&self) -> Vec<RunRow> {
        match self.selected_entry() {
            Some(entry) => run_rows::rows(entry, &self.tabs.loaded, self.is_running(&entry.path)),
            None => Vec::new(),
        }
    }

    /// Counts per status group for the status bar.
    pub fn counts(&self) -> [(StatusGroup, usize); 7] {
        self.list.counts()
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
        for dir in Screens::watched(&self.roots) {
            dirs.insert(flat(dir));
        }
        for entry in &self.list.cycles {
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

    /// The transition: applies `event` and returns what the runtime must carry out.
    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let mut fx = Vec::new();
        match event {
            Event::Key(key) => {
                self.toast = None;
                self.dirty = true;
                if let Some(cmd) = keys::resolve(&self.contexts(), &key) {
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
                self.with_tabs(&mut fx, |tabs, sel, asked| tabs.resized(sel, asked));
            }
            Event::Tick => {
                self.spinner = self.spinner.wrapping_add(1);
                self.dirty = true;
                // Once a second, look again at live runs: the command moves on, and a holder
                // that died released its lock without touching any file.
                if self.spinner.is_multiple_of(LIVE_REFRESH_TICKS) {
                    let live: Vec<PathBuf> =
                        self.list.cycles.iter().filter(|c| c.live.is_some()).map(|c| c.path.clone()).collect();
                    if !live.is_empty() {
                        fx.push(Effect::LoadCycles(live));
                    }
                }
            }
            Event::Clock(now) => {
                self.now = now;
                self.dirty = true;
            }
            Event::FilesChanged(paths) => self.files_changed(paths, &mut fx),
            Event::Discovered(paths) => self.discovered(paths, &mut fx),
            Event::CyclesLoaded { loaded, gone } => self.cycles_loaded(loaded, gone, &mut fx),
            Event::JournalLoaded { path, result } => {
                if self.list.selected.as_ref() == Some(&path) {
                    self.tabs.loaded.journal = Some((path, result));
                    self.dirty = true;
                }
            }
            Event::RunsListed { path, runs } => self.runs_listed(path, runs, &mut fx),
            Event::RunReportLoaded { path, iteration, result } => {
                if self.list.selected.as_ref() == Some(&path) {
                    let report = match result {
                        Ok(integrity) => RunReport::Loaded(integrity),
                        Err(error) => RunReport::Failed(error),
                    };
                    self.tabs.loaded.reports.insert(iteration, report);
                    self.with_tabs(&mut fx, |tabs, sel, asked| tabs.loaded_changed(sel, asked));
                    self.dirty = true;
                }
            }
            Event::Screen(msg) => {
                self.dirty = true;
                let reply =
                    self.with_screens(&mut fx, |screens, registry, asked| screens.receive(msg, registry, asked));
                self.replied(&reply, &mut fx);
            }
            Event::RegistryLoaded(records) => {
                self.registry.records = records;
                self.registry.read = true;
                self.screens.registry_read(&self.registry);
                self.dirty = true;
            }
            Event::SourcesLoaded { repository, sources } => {
                self.registry.sources.insert(repository, sources);
                self.dirty = true;
            }
            Event::Pane(msg) => {
                self.dirty = true;
                let reply = self.with_tabs(&mut fx, |tabs, sel, asked| tabs.receive(msg, sel, asked));
                self.replied(&reply, &mut fx);
            }
            Event::DiffSized { path, result } => {
                if self.sizing.as_ref() == Some(&path) {
                    self.sizing = None;
                }
                if result.is_ok() {
                    fx.push(Effect::LoadCycles(vec![path]));
                } else {
                    self.size_next(&mut fx);
                }
            }
            Event::UseCaseDone { what, path, result } => self.use_case_done(what, path, result, &mut fx),
            Event::RunFinished { path, result } => self.run_finished(path, result, &mut fx),
            Event::EditorFinished { path, result } => {
                self.dirty = true;
                self.popups.editor_finished(&path, result);
            }
            Event::MessageEdited { path, result } => self.message_edited(path, result),
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

    /// Routes a command: to the top popup, an open input line, the Projects screen, or the
    /// cycle screen's panes.
    fn command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        if !self.popups.is_empty() {
            match self.popups.command(cmd) {
                Answer::Nothing => {}
                Answer::Effect(effect) => fx.push(effect),
                Answer::Yes(ask) => self.answer_yes(ask, fx),
                Answer::Abort { path, reason } => self.abort(path, reason, fx),
            }
            return;
        }
        if self.list.filter_editing {
            let before = self.list.selected.clone();
            if self.list.filter_command(cmd) {
                self.reselected(before, fx);
            }
            return;
        }
        if self.searching() {
            self.with_tabs(fx, |tabs, sel, asked| tabs.input(cmd, sel, asked));
            return;
        }
        if self.screen != Screen::Cycles {
            self.screen_command(cmd, fx);
            return;
        }
        // The shown tab has the keys: its own commands first.
        if self.focus == Focus::Detail && self.route(cmd, fx) != Reply::NotMine {
            return;
        }
        match cmd {
            Cmd::Quit => self.ask_quit(fx),
            Cmd::Help => self.popups.push(Popup::Help { scroll: 0 }),
            Cmd::Suspend => fx.push(Effect::Suspend),
            Cmd::Screen(screen) => self.show_screen(screen, fx),
            Cmd::SwitchFocus => {
                self.focus = if self.focus == Focus::List { Focus::Detail } else { Focus::List };
                self.zoom = false;
                self.tab_shown(fx);
            }
            Cmd::Zoom => self.zoom = !self.zoom,
            Cmd::Tab(tab) => self.set_tab(tab, fx),
            Cmd::PrevTab => self.set_tab(self.tabs.tab.prev(), fx),
            Cmd::NextTab => self.set_tab(self.tabs.tab.next(), fx),
            Cmd::Filter => self.list.filter_editing = true,
            Cmd::NextAttention => self.next_attention(fx),
            Cmd::Back => match self.focus {
                Focus::Detail => {
                    self.focus = Focus::List;
                    self.zoom = false;
                }
                Focus::List if !self.list.filter.is_empty() => {
                    let before = self.list.selected.clone();
                    self.list.filter.clear();
                    self.list.refilter();
                    self.reselected(before, fx);
                }
                Focus::List => {}
            },
            Cmd::Open => {
                self.focus = Focus::Detail;
                self.tab_shown(fx);
            }
            Cmd::Up | Cmd::Down | Cmd::PageUp | Cmd::PageDown | Cmd::Top | Cmd::Bottom | Cmd::Left | Cmd::Right => {
                self.movement(cmd, fx)
            }
            Cmd::ConfirmBrief => self.open_confirm(),
            Cmd::Rerun => self.ask_rerun(),
            Cmd::CancelRun => self.ask_cancel_run(),
            Cmd::Abort => self.ask_abort(),
            Cmd::Unblock => self.ask_unblock(),
            Cmd::Approve => self.ask_approve(),
            Cmd::AllowHosts => self.ask_allow_hosts(),
            Cmd::DropMessage => self.ask_drop_message(),
            Cmd::MessageWebgpt => self.ask_message(fx),
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
                None => {
                    self.toast_error("this cycle has no conversation URL (attach it with `forgeloop project attach`)")
                }
            },
            _ => {}
        }
    }

    /// A command while a screen besides the cycles is shown: the screen's own first; its key
    /// again, or Esc, goes back to the cycles.
    fn screen_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        let screen = self.screen;
        let reply = self.with_screens(fx, |screens, registry, asked| screens.command(screen, cmd, registry, asked));
        if reply != Reply::NotMine {
            self.replied(&reply, fx);
            return;
        }
        match cmd {
            Cmd::Back => self.screen = Screen::Cycles,
            Cmd::Screen(other) if other == screen => self.screen = Screen::Cycles,
            Cmd::Screen(other) => self.show_screen(other, fx),
            Cmd::Quit => self.ask_quit(fx),
            Cmd::Help => self.popups.push(Popup::Help { scroll: 0 }),
            Cmd::Suspend => fx.push(Effect::Suspend),
            _ => {}
        }
    }

    /// Shows `screen`, which asks for what it shows.
    fn show_screen(&mut self, screen: Screen, fx: &mut Vec<Effect>) {
        self.screen = screen;
        self.with_screens(fx, |screens, registry, asked| screens.shown(screen, registry, asked));
    }

    /// Calls the screens and turns what they asked for into effects (and a question, into a
    /// dialog).
    fn with_screens<R>(
        &mut self,
        fx: &mut Vec<Effect>,
        f: impl FnOnce(&mut Screens, &RegistryRead, &mut ScreenAsked) -> R,
    ) -> R {
        let mut asked = ScreenAsked::default();
        let out = f(&mut self.screens, &self.registry, &mut asked);
        fx.extend(asked.own.into_iter().map(Effect::Screen));
        fx.extend(asked.shared.into_iter().map(shared_effect));
        if let Some((title, body, load)) = asked.confirm {
            self.popups.push(Popup::YesNo { ask: Ask::Screen(load), title, body });
        }
        out
    }

    // ----- selection and tabs -----

    fn select_row(&mut self, row: usize, fx: &mut Vec<Effect>) {
        if self.list.select_row(row) {
            self.selection_changed(fx);
        }
    }

    /// After the list changed: if the selection moved, the detail follows it.
    fn reselected(&mut self, before: Option<PathBuf>, fx: &mut Vec<Effect>) {
        if self.list.selected != before {
            self.selection_changed(fx);
        }
    }

    /// A new cycle is selected: drop its predecessor's detail and load what the tab needs.
    fn selection_changed(&mut self, fx: &mut Vec<Effect>) {
        self.with_tabs(fx, |tabs, sel, asked| tabs.forget(sel, asked));
        if let Some(path) = self.list.selected.clone() {
            fx.push(Effect::LoadJournal(path.clone()));
            fx.push(Effect::ListRuns(path));
        }
        self.tab_shown(fx);
        self.dirty = true;
    }

    /// Starts making the whole-PR diff of the next `READY_TO_MERGE` cycle whose row has no
    /// size yet, once per cycle and head, one at a time, in the background, at most
    /// [`SIZE_BUDGET`] a session (two GitHub requests each; opening a diff makes the others).
    fn size_next(&mut self, fx: &mut Vec<Effect>) {
        if self.sizing.is_some() || self.sized.len() >= SIZE_BUDGET {
            return;
        }
        let next = self.list.cycles.iter().find_map(|entry| {
            let state =
                entry.state.as_ref().filter(|s| matches!(s.status, Status::ReadyToMerge | Status::NeedsReview))?;
            let run = state.history.last()?;
            let key = (entry.path.clone(), run.head_sha.clone());
            (entry.diff_size.is_none() && !self.sized.contains(&key)).then_some((key, run.iteration))
        });
        if let Some((key, iteration)) = next {
            self.sizing = Some(key.0.clone());
            fx.push(Effect::SizeDiff { path: key.0.clone(), iteration });
            self.sized.insert(key);
        }
    }

    fn next_attention(&mut self, fx: &mut Vec<Effect>) {
        if self.list.visible.is_empty() {
            return;
        }
        match self.list.next_attention_row() {
            Some(row) => {
                self.focus = Focus::List;
                self.select_row(row, fx);
            }
            None => self.toast = Some(Toast { text: "no cycle needs you right now".into(), error: false }),
        }
    }

    fn paste(&mut self, text: &str, fx: &mut Vec<Effect>) {
        let clean: String = text.chars().filter(|c| !c.is_control()).collect();
        if self.list.filter_editing {
            let before = self.list.selected.clone();
            self.list.filter.push_str(&clean);
            self.list.refilter();
            self.reselected(before, fx);
        } else if self.searching() {
            self.tabs.paste(&clean);
        } else {
            self.popups.paste(&clean);
        }
        self.dirty = true;
    }

    fn movement(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        match self.focus {
            Focus::List => {
                if let Some(row) = self.list.target_row(cmd) {
                    self.select_row(row, fx);
                }
            }
            Focus::Detail => {
                self.route(cmd, fx);
            }
        }
    }

    fn set_tab(&mut self, tab: Tab, fx: &mut Vec<Effect>) {
        self.tabs.set_tab(tab);
        self.tab_shown(fx);
    }

    /// Loads what the visible tab needs.
    fn tab_shown(&mut self, fx: &mut Vec<Effect>) {
        self.with_tabs(fx, |tabs, sel, asked| tabs.shown(sel, asked));
    }

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
                    // Tab titles are drawn as " N Title ", separated by "│" when they fit.
                    let (_, dividers) = super::widgets::tab_bar(tabs.width);
                    let mut x = tabs.x;
                    for &tab in Tab::ALL {
                        let w = super::widgets::tab_cells(tab, dividers);
                        if event.column < x + w {
                            self.focus = Focus::Detail;
                            self.set_tab(tab, fx);
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

/// The effect that carries out a read the panes share.
fn shared_effect(load: SharedLoad) -> Effect {
    match load {
        SharedLoad::Report { path, iteration, report } => Effect::LoadRunReport { path, iteration, report },
        SharedLoad::Sources(repository) => Effect::LoadSources(repository),
        SharedLoad::Registry => Effect::LoadRegistry,
    }
}

/// What the tabs see, built from the app's fields so the shown tab can be borrowed beside it.
fn selection<'a>(
    list: &'a CycleList,
    live_runs: &'a BTreeMap<PathBuf, LiveRun>,
    registry: &'a RegistryRead,
    rows: &'a [RunRow],
) -> Selection<'a> {
    let entry = list.selected_entry();
    let running = entry.is_some_and(|e| live_runs.contains_key(&e.path) || e.live.is_some());
    Selection { entry, running, rows, sources: &registry.sources }
}

/// The message the coordinator must send next, if any.
/// The pending message a person may drop: not yet sent, and not the prompt that starts the
/// cycle (the domain's rule, `machine::drop_pending`).
pub(super) fn droppable(state: &CycleState) -> Option<&crate::domain::state::Outbox> {
    state.outbox.as_ref().filter(|o| o.sent_at.is_none() && o.kind != crate::domain::state::OutboxKind::Prompt)
}

fn outbox_text(state: &CycleState) -> Option<String> {
    state.outbox.as_ref().map(|o| o.text.clone()).filter(|t| !t.is_empty())
}

/// Why `forgeloop say` would refuse a message for this cycle now, if it would: the domain's
/// own rule, asked of a copy (the words do not matter to it once they are not empty).
pub fn say_refusal(state: &CycleState) -> Option<machine::Refusal> {
    let mut probe = state.clone();
    machine::say(&mut probe, "a message", "").err()
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
