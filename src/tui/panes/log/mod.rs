//! The log pane: which file is open, the window of lines read around the viewport,
//! following, wrapping, search and the first error. Its requests go to the log reader and
//! its replies ([`LogEvent`]s) come back here.

use std::cell::Cell;
use std::path::PathBuf;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::keymap::{self, Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::pager::log::{Anchor, FindKind, LogEvent, LogRequest, LogWindow};
use crate::tui::panes::runs::{RunResult, run_result_word};
use crate::tui::panes::{self as panes, Pane, Selection};

use crate::tui::event::Effect;

/// Where a search of the Log or Diff tab stands (the search line says it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchState {
    /// No search, or an empty query.
    #[default]
    Idle,
    /// Asked; the reader scans (the spinner turns).
    Searching,
    /// The last search found a match.
    Found,
    /// The last search found none, anywhere.
    NotFound,
}

/// A tab's search: the line being typed and the query searched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogSearch {
    /// The query searched (smart case); empty for none.
    pub query: String,
    /// The search line as typed, before `Submit`.
    pub input: String,
    /// The search line is open and takes the keys.
    pub editing: bool,
    /// Offset of the line with the current match.
    pub current: Option<u64>,
    /// Where the search stands.
    pub state: SearchState,
    /// The last match was found past the end (or start), from the other side.
    pub wrapped: bool,
}

impl LogSearch {
    /// Edits the search line (the Log and Diff tabs share it); true when a non-empty query
    /// was just submitted and the search should start.
    pub fn edit(&mut self, cmd: Cmd) -> bool {
        match cmd {
            Cmd::Insert(c) => self.input.push(c),
            Cmd::Backspace => {
                self.input.pop();
            }
            Cmd::Cancel => {
                self.editing = false;
                self.input.clear();
            }
            Cmd::Submit => {
                self.editing = false;
                self.query = std::mem::take(&mut self.input);
                self.current = None;
                if self.query.is_empty() {
                    self.state = SearchState::Idle;
                } else {
                    return true;
                }
            }
            _ => {}
        }
        false
    }
}

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
    pub search: LogSearch,
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
            search: LogSearch::default(),
            finding_error: false,
            error: None,
            height: Cell::new(20),
        }
    }
}

/// What a reply from the log reader asks of the app.
#[derive(Debug, Default)]
pub struct Reply {
    /// A window to read (to show a match).
    pub effect: Option<Effect>,
    /// The first-error search found none: say so.
    pub no_error_line: bool,
}

impl LogPane {
    /// A log is open.
    pub fn is_open(&self) -> bool {
        self.path.is_some()
    }

    /// A request for the window at `anchor`, as tall as the viewport.
    pub fn window_request(&self, anchor: Anchor) -> Effect {
        Effect::Log(LogRequest::Window {
            generation: self.generation,
            anchor,
            height: usize::from(self.height.get().max(1)),
        })
    }

    /// The window to read again after the file changed: its end when following.
    pub fn refresh_request(&self) -> Effect {
        let anchor = if self.follow { Anchor::Tail } else { Anchor::Offset(self.window.top) };
        self.window_request(anchor)
    }

    /// Forgets the open file; late replies about it are dropped.
    pub fn close(&mut self) -> Effect {
        self.generation += 1;
        self.path = None;
        self.cycle = None;
        self.loaded = false;
        self.window = LogWindow::default();
        self.error = None;
        self.search.current = None;
        self.search.state = SearchState::Idle;
        self.finding_error = false;
        Effect::Log(LogRequest::Close)
    }

    /// Opens `path` (a log of `cycle`); a live run's log is followed.
    pub fn open(&mut self, path: PathBuf, cycle: Option<PathBuf>, title: String, live: bool) -> Vec<Effect> {
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
        vec![Effect::Log(LogRequest::Open { generation: self.generation, path }), self.window_request(anchor)]
    }

    /// Scrolls by a movement command: the window to read, if any (sideways scrolling reads none).
    pub fn movement(&mut self, cmd: Cmd) -> Option<Effect> {
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
    pub fn toggle_follow(&mut self) -> Option<Effect> {
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
    pub fn search_command(&mut self, cmd: Cmd) -> Option<Effect> {
        if !self.search.edit(cmd) {
            return None;
        }
        self.follow = false;
        let from = self.window.top;
        Some(self.start_search(from, true))
    }

    fn start_search(&mut self, from: u64, forward: bool) -> Effect {
        self.search.state = SearchState::Searching;
        self.search.wrapped = false;
        Effect::Log(LogRequest::Search { generation: self.generation, query: self.search.query.clone(), from, forward })
    }

    /// The next (or previous) match after the current one.
    pub fn search_again(&mut self, forward: bool) -> Option<Effect> {
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
    pub fn find_first_error(&mut self) -> Option<Effect> {
        if !self.is_open() {
            return None;
        }
        self.finding_error = true;
        Some(Effect::Log(LogRequest::FirstError { generation: self.generation }))
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
    fn contexts(&self) -> &'static [Context] {
        keymap::LOG_STACK
    }

    fn command(&mut self, cmd: Cmd, _sel: &Selection, fx: &mut Vec<Effect>) -> panes::Reply {
        match cmd {
            Cmd::Up | Cmd::Down | Cmd::PageUp | Cmd::PageDown | Cmd::Top | Cmd::Bottom | Cmd::Left | Cmd::Right => {
                fx.extend(self.movement(cmd))
            }
            Cmd::Follow => fx.extend(self.toggle_follow()),
            Cmd::Wrap => self.toggle_wrap(),
            Cmd::Search => self.start_search_input(),
            Cmd::NextMatch | Cmd::PrevMatch => fx.extend(self.search_again(cmd == Cmd::NextMatch)),
            Cmd::FirstError => fx.extend(self.find_first_error()),
            _ => return panes::Reply::NotMine,
        }
        panes::Reply::Done
    }

    fn available(&self, cmd: Cmd, _sel: &Selection) -> Option<bool> {
        match cmd {
            Cmd::NextMatch | Cmd::PrevMatch => Some(!self.search.query.is_empty()),
            _ => None,
        }
    }

    /// Opens the run the Runs tab selected, unless it is open already.
    fn shown(&mut self, sel: &Selection, fx: &mut Vec<Effect>) {
        let Some(row) = sel.selected_run() else { return };
        let Some(path) = row.log.clone() else { return };
        if self.path.as_ref() == Some(&path) {
            return;
        }
        let title = match row.iteration {
            Some(i) => format!("iteration {i} · {} · {}", row.sha12, run_result_word(row.result)),
            None => path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        };
        let live = row.result == RunResult::Live;
        fx.extend(self.open(path, sel.entry.map(|e| e.path.clone()), title, live));
    }

    fn forget(&mut self, fx: &mut Vec<Effect>) {
        if self.is_open() {
            fx.push(self.close());
        }
    }

    fn search(&self) -> Option<&LogSearch> {
        Some(&self.search)
    }

    fn input(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
        fx.extend(self.search_command(cmd));
    }

    fn paste(&mut self, text: &str) {
        self.search.input.push_str(text);
    }

    fn render(&self, draw: &super::Draw, _entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, frame, area);
    }
}

pub mod view;
