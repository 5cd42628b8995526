//! The cycle list and the Projects view: filtering, ordering, selection, movement, tabs, mouse.

use super::*;

impl App {
    pub(super) fn refilter(&mut self) {
        let needle = self.filter.to_lowercase();
        self.visible =
            (0..self.cycles.len()).filter(|&i| needle.is_empty() || matches_filter(&self.cycles[i], &needle)).collect();
        if self.selected_row().is_none() {
            self.selected = self.visible.first().map(|&i| self.cycles[i].path.clone());
        }
        self.dirty = true;
    }

    pub(super) fn sort(&mut self) {
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

    pub(super) fn select_row(&mut self, row: usize, fx: &mut Vec<Effect>) {
        let Some(&index) = self.visible.get(row) else { return };
        let path = self.cycles[index].path.clone();
        if self.selected.as_ref() != Some(&path) {
            self.selected = Some(path);
            self.selection_changed(fx);
        }
    }

    /// A new cycle is selected: drop its predecessor's detail and load what the tab needs.
    pub(super) fn selection_changed(&mut self, fx: &mut Vec<Effect>) {
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

    pub(super) fn next_attention(&mut self, fx: &mut Vec<Effect>) {
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

    pub(super) fn filter_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
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

    pub(super) fn paste(&mut self, text: &str, fx: &mut Vec<Effect>) {
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

    pub(super) fn movement(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
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

    pub(super) fn set_tab(&mut self, tab: Tab, fx: &mut Vec<Effect>) {
        if self.tab != tab {
            self.tab = tab;
            self.detail_scroll = 0;
        }
        self.tab_shown(fx);
    }

    /// Loads what the visible tab needs.
    pub(super) fn tab_shown(&mut self, fx: &mut Vec<Effect>) {
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

    pub(super) fn projects_command(&mut self, cmd: Cmd, fx: &mut Vec<Effect>) {
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

    pub(super) fn mouse_event(&mut self, event: MouseEvent, fx: &mut Vec<Effect>) {
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
                    for &tab in Tab::ALL {
                        let w = tab.title().len() as u16 + 4;
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
