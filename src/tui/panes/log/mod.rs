//! The log pane: which file is open, the window of lines read around the viewport,
//! following, wrapping, search and the first error. Its requests go to the log reader and
//! its replies ([`LogEvent`]s) come back here.

use std::cell::Cell;
use std::path::PathBuf;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::pager::log::{Anchor, FindKind, LogEvent, LogRequest, LogWindow};
use crate::tui::panes::run_rows::{RunResult, run_result_word};
use crate::tui::panes::{
    self as panes, Cx, Loaded, Pane, PaneWork, Request, RunsListed, SearchLine, SearchState, Selection,
};
use crate::tui::registry::Tab;

/// The Log tab: the run log open, the window read around the viewport, following, wrapping, search.
#[derive(Debug, Clone)]
pub struct LogPane {
    /// Bumped whenever another file is opened, so stale replies are dropped.
    pub generation: u64,
    /// The log open, if any.
    pub path: Option<PathBuf>,
    /// The cycle whose run log it is.
    pub cycle: Option<PathBuf>,
    /// The pane's title: the run's iteration, head and result, or the file's name.
    pub title: String,
    /// The lines last read.
    pub window: LogWindow,
    /// A window (or an error) came back for this file: until then the pane says it is loading.
    pub loaded: bool,
    /// Keep the end of the log in view as it grows (a live run's log starts so).
    pub follow: bool,
    /// Wrap long lines rather than scroll sideways.
    pub wrap: bool,
    /// Columns scrolled sideways, when not wrapping.
    pub hscroll: usize,
    /// The tab's search.
    pub search: SearchLine,
    /// A look for the first error line is under way.
    pub finding_error: bool,
    /// Why the log could not be read.
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
            search: SearchLine::default(),
            finding_error: false,
            error: None,
            height: Cell::new(20),
        }
    }
}

/// What an answer of the log reader leads to.
#[derive(Debug, Default)]
pub struct Reply {
    /// A window to read (to show a match).
    pub effect: Option<LogRequest>,
    /// The first-error search found none: say so.
    pub no_error_line: bool,
}

impl LogPane {
    /// A log is open.
    pub fn is_open(&self) -> bool {
        self.path.is_some()
    }

    /// A request for the window at `anchor`, as tall as the viewport.
    pub fn window_request(&self, anchor: Anchor) -> LogRequest {
        LogRequest::Window { generation: self.generation, anchor, height: usize::from(self.height.get().max(1)) }
    }

    /// The window to read again after the file changed: its end when following.
    pub fn refresh_request(&self) -> LogRequest {
        let anchor = if self.follow { Anchor::Tail } else { Anchor::Offset(self.window.top) };
        self.window_request(anchor)
    }

    /// Forgets the open file; late replies about it are dropped.
    pub fn close(&mut self) -> LogRequest {
        self.generation += 1;
        self.path = None;
        self.cycle = None;
        self.loaded = false;
        self.window = LogWindow::default();
        self.error = None;
        self.search.current = None;
        self.search.state = SearchState::Idle;
        self.finding_error = false;
        LogRequest::Close
    }

    /// Opens `path` (a log of `cycle`); a live run's log is followed.
    pub fn open(&mut self, path: PathBuf, cycle: Option<PathBuf>, title: String, live: bool) -> Vec<LogRequest> {
        self.generation += 1;
        self.path = Some(path.clone());
        self.cycle = cycle;
        self.title = title;
        self.loaded = false;
        self.window = LogWindow::default();
        self.error = None;
        self.search.current = None;
        self.search.state = SearchState::Idle;
        self.hscroll = 0;
        if live {
            self.follow = true;
        }
        let anchor = if self.follow { Anchor::Tail } else { Anchor::Offset(0) };
        vec![LogRequest::Open { generation: self.generation, path }, self.window_request(anchor)]
    }

    /// Scrolls by a movement command: the window to read, if any (sideways scrolling reads none).
    pub fn movement(&mut self, cmd: Cmd) -> Option<LogRequest> {
        if !self.is_open() {
            return None;
        }
        let page = i64::from(self.height.get().max(2)) - 1;
        let top = self.window.top;
        let anchor = match cmd {
            Cmd::Up => Anchor::Lines { from: top, delta: -1 },
            Cmd::Down => Anchor::Lines { from: top, delta: 1 },
            Cmd::PageUp => Anchor::Lines { from: top, delta: -page },
            Cmd::PageDown => Anchor::Lines { from: top, delta: page },
            Cmd::Top => Anchor::Offset(0),
            Cmd::Bottom => Anchor::Tail,
            Cmd::Left => {
                self.hscroll = self.hscroll.saturating_sub(8);
                return None;
            }
            Cmd::Right => {
                if !self.wrap {
                    self.hscroll = self.hscroll.saturating_add(8);
                }
                return None;
            }
            _ => return None,
        };
        // Scrolling away from the end stops following; going to the end does not start it.
        if !matches!(anchor, Anchor::Tail) {
            self.follow = false;
        }
        Some(self.window_request(anchor))
    }

    /// Starts or stops following; starting reads the end.
    pub fn toggle_follow(&mut self) -> Option<LogRequest> {
        self.follow = !self.follow;
        (self.follow && self.is_open()).then(|| self.window_request(Anchor::Tail))
    }

    /// Wraps long lines, or stops.
    pub fn toggle_wrap(&mut self) {
        self.wrap = !self.wrap;
        self.hscroll = 0;
    }

    /// Opens an empty search line.
    pub fn start_search_input(&mut self) {
        self.search.editing = true;
        self.search.input.clear();
    }

    /// Edits the search line; submitting starts the search.
    pub fn search_command(&mut self, cmd: Cmd) -> Option<LogRequest> {
        if !self.search.edit(cmd) {
            return None;
        }
        self.follow = false;
        let from = self.window.top;
        Some(self.start_search(from, true))
    }

    fn start_search(&mut self, from: u64, forward: bool) -> LogRequest {
        self.search.state = SearchState::Searching;
        self.search.wrapped = false;
        LogRequest::Search { generation: self.generation, query: self.search.query.clone(), from, forward }
    }

    /// The next (or previous) match after the current one.
    pub fn search_again(&mut self, forward: bool) -> Option<LogRequest> {
        if self.search.query.is_empty() || !self.is_open() {
            return None;
        }
        self.follow = false;
        // From just after (or before) the current match's line.
        let line_end = |at: u64| self.window.lines.iter().find(|l| l.offset == at).map_or(at + 1, |l| l.end);
        let from = match (self.search.current, forward) {
            (Some(at), true) => line_end(at),
            (Some(at), false) => at,
            (None, _) => self.window.top,
        };
        Some(self.start_search(from, forward))
    }

    /// Asks for the first line that reports a failure.
    pub fn find_first_error(&mut self) -> Option<LogRequest> {
        if !self.is_open() {
            return None;
        }
        self.finding_error = true;
        Some(LogRequest::FirstError { generation: self.generation })
    }

    /// Takes a reply from the log reader; `None` when it was about a file no longer open.
    pub fn reply(&mut self, event: LogEvent) -> Option<Reply> {
        match event {
            LogEvent::Window(window) => {
                if window.generation != self.generation {
                    return None;
                }
                self.window = window;
                self.loaded = true;
                self.error = None;
                Some(Reply::default())
            }
            LogEvent::Failed { generation, error } => {
                if generation != self.generation {
                    return None;
                }
                self.error = Some(error);
                self.loaded = true;
                Some(Reply::default())
            }
            LogEvent::Found { generation, kind, offset, wrapped } => {
                if generation != self.generation {
                    return None;
                }
                let mut reply = Reply::default();
                match kind {
                    FindKind::Search => {
                        self.search.state = if offset.is_some() { SearchState::Found } else { SearchState::NotFound };
                        self.search.wrapped = wrapped;
                        if offset.is_some() {
                            self.search.current = offset;
                        }
                    }
                    FindKind::Error => {
                        self.finding_error = false;
                        reply.no_error_line = offset.is_none();
                    }
                }
                if let Some(at) = offset {
                    self.follow = false;
                    let context = i64::from(self.height.get() / 3);
                    reply.effect = Some(self.window_request(Anchor::Lines { from: at, delta: -context }));
                }
                Some(reply)
            }
        }
    }
}

impl Pane for LogPane {
    type Msg = LogEvent;
    type Load = LogRequest;

    const CONTEXTS: &'static [Context] = &[Context::Tab(Tab::Log), Context::Detail, Context::Cycle, Context::Global];
    const KEYS: &'static [crate::tui::keymap::Binding] = keys::KEYS;

    fn command(&mut self, cmd: Cmd, cx: &mut Cx<LogRequest>) -> panes::Reply {
        let load = match cmd {
            Cmd::Up | Cmd::Down | Cmd::PageUp | Cmd::PageDown | Cmd::Top | Cmd::Bottom | Cmd::Left | Cmd::Right => {
                self.movement(cmd)
            }
            Cmd::Follow => self.toggle_follow(),
            Cmd::Wrap => {
                self.toggle_wrap();
                None
            }
            Cmd::Search => {
                self.start_search_input();
                None
            }
            Cmd::NextMatch | Cmd::PrevMatch => self.search_again(cmd == Cmd::NextMatch),
            Cmd::FirstError => self.find_first_error(),
            _ => return panes::Reply::NotMine,
        };
        cx.own.extend(load);
        panes::Reply::Done
    }

    fn available(&self, cmd: Cmd, _sel: &Selection, _loaded: &Loaded) -> Option<bool> {
        match cmd {
            Cmd::NextMatch | Cmd::PrevMatch => Some(!self.search.query.is_empty()),
            _ => None,
        }
    }

    /// Opens the run the Runs tab selected, unless it is open already.
    fn shown(&mut self, cx: &mut Cx<LogRequest>) {
        let Some(row) = cx.selected_run() else { return };
        let Some(path) = row.log.clone() else { return };
        if self.path.as_ref() == Some(&path) {
            return;
        }
        let title = match row.iteration {
            Some(i) => format!("iteration {i} · {} · {}", row.sha12, run_result_word(row.result)),
            None => path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        };
        let live = row.result == RunResult::Live;
        let cycle = cx.sel.entry.map(|e| e.path.clone());
        cx.own.extend(self.open(path, cycle, title, live));
    }

    fn forget(&mut self, cx: &mut Cx<LogRequest>) {
        if self.is_open() {
            cx.load(self.close());
        }
    }

    fn receive(&mut self, answer: LogEvent, cx: &mut Cx<LogRequest>) -> panes::Reply {
        let Some(reply) = self.reply(answer) else { return panes::Reply::Done };
        cx.own.extend(reply.effect);
        if reply.no_error_line { panes::Reply::Note("no error line in this log".into()) } else { panes::Reply::Done }
    }

    fn request(&mut self, request: &Request, cx: &mut Cx<LogRequest>) -> panes::Reply {
        match request {
            Request::OpenRunLog => panes::Reply::ShowMe,
            // The log shown is another run's now.
            Request::RunChosen => {
                if self.is_open() {
                    cx.load(self.close());
                }
                panes::Reply::Done
            }
            Request::DiffOf(_) => panes::Reply::NotMine,
        }
    }

    fn resized(&mut self, cx: &mut Cx<LogRequest>) {
        if self.follow && self.is_open() {
            cx.load(self.window_request(Anchor::Tail));
        }
    }

    /// The open log grew, or went: read its window again.
    fn run_files_changed(&mut self, paths: &[std::path::PathBuf], cx: &mut Cx<LogRequest>) {
        if self.path.as_ref().is_some_and(|l| paths.contains(l) || !l.exists()) {
            cx.load(self.refresh_request());
        }
    }

    /// A run started here (or one being followed) just created its log: show it live.
    fn runs_listed(&mut self, what: RunsListed, cx: &mut Cx<LogRequest>) -> panes::Reply {
        if what.fresh && (what.running || (self.follow && what.shown)) {
            cx.loaded.run = 0;
            self.follow = true;
            if what.runs_shown {
                cx.load(self.close());
                return panes::Reply::ShowMe;
            }
        }
        panes::Reply::Done
    }

    fn follows_runs(&self) -> bool {
        true
    }

    fn busy(&self) -> bool {
        self.search.state == SearchState::Searching || self.finding_error
    }

    fn search(&self) -> Option<&SearchLine> {
        Some(&self.search)
    }

    fn input(&mut self, cmd: Cmd, cx: &mut Cx<LogRequest>) {
        cx.own.extend(self.search_command(cmd));
    }

    fn paste(&mut self, text: &str) {
        self.search.input.push_str(text);
    }

    fn render(&self, draw: &super::Draw, _entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, frame, area);
    }

    fn work(load: LogRequest, _ctx: &crate::cycle::Ctx) -> PaneWork<LogEvent> {
        PaneWork::Reader(load)
    }

    fn from_reader(answer: &LogEvent) -> Option<LogEvent> {
        Some(answer.clone())
    }
}

pub mod keys;
pub mod view;
