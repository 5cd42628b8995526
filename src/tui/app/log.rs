//! The Log tab: which window of the log is shown, following, search and the first error.

use super::*;

impl App {
    pub(super) fn log_window(&self, anchor: Anchor) -> Effect {
        Effect::Log(LogRequest::Window {
            generation: self.log.generation,
            anchor,
            height: usize::from(self.log.height.get().max(1)),
        })
    }

    pub(super) fn close_log(&mut self, fx: &mut Vec<Effect>) {
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
    pub(super) fn ensure_log(&mut self, fx: &mut Vec<Effect>) {
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

    pub(super) fn log_movement(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
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

    pub(super) fn search_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
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

    pub(super) fn start_search(&mut self, from: u64, forward: bool, fx: &mut Vec<Effect>) {
        self.log.search.state = SearchState::Searching;
        self.log.search.wrapped = false;
        fx.push(Effect::Log(LogRequest::Search {
            generation: self.log.generation,
            query: self.log.search.query.clone(),
            from,
            forward,
        }));
    }

    pub(super) fn search_again(&mut self, forward: bool, fx: &mut Vec<Effect>) {
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

    pub(super) fn log_found(
        &mut self,
        generation: u64,
        kind: FindKind,
        offset: Option<u64>,
        wrapped: bool,
        fx: &mut Vec<Effect>,
    ) {
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
}
