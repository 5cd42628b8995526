//! The cycle list pane: every cycle, in attention order, narrowed by the filter, with the
//! selection (kept by path, so it follows its cycle when the order changes).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::cycle::files::CyclePaths;
use crate::domain::state::CycleState;
use crate::tui::keymap::Cmd;
use crate::tui::model::CycleEntry;

use crate::domain::status::Status;

/// The cycle list: every cycle known, in attention order, the filter and the selection.
#[derive(Debug)]
pub struct CycleList {
    /// Every cycle known, those needing a person first, then the most recently changed.
    pub cycles: Vec<CycleEntry>,
    /// Indices into `cycles` that pass the filter, in display order.
    pub visible: Vec<usize>,
    /// The selected cycle's state file: the selection follows its cycle, not a row.
    pub selected: Option<PathBuf>,
    /// The filter's words: a row shows when each is in its name, path, status, repository, PR
    /// or request (case-insensitive).
    pub filter: String,
    /// The filter line is open and takes the keys.
    pub filter_editing: bool,
    /// Sidecar directory (`NAME.d`) → state path.
    sidecars: HashMap<PathBuf, PathBuf>,
    /// Lines in the list viewport at the last draw (set by the renderer).
    pub height: Cell<u16>,
}

impl Default for CycleList {
    fn default() -> Self {
        CycleList {
            cycles: Vec::new(),
            visible: Vec::new(),
            selected: None,
            filter: String::new(),
            filter_editing: false,
            sidecars: HashMap::new(),
            height: Cell::new(10),
        }
    }
}

impl CycleList {
    fn selected_index(&self) -> Option<usize> {
        let path = self.selected.as_ref()?;
        self.cycles.iter().position(|c| &c.path == path)
    }

    /// The selected cycle, if any.
    pub fn selected_entry(&self) -> Option<&CycleEntry> {
        self.selected_index().map(|i| &self.cycles[i])
    }

    /// The selected cycle's state, when its file could be read.
    pub fn selected_state(&self) -> Option<&CycleState> {
        self.selected_entry().and_then(|e| e.state.as_ref())
    }

    /// Position of the selection among the visible rows.
    pub fn selected_row(&self) -> Option<usize> {
        let index = self.selected_index()?;
        self.visible.iter().position(|&i| i == index)
    }

    /// `path` is a known cycle's state file.
    pub fn contains(&self, path: &Path) -> bool {
        self.cycles.iter().any(|c| c.path == path)
    }

    /// Applies the filter; a selection filtered out moves to the first visible row.
    pub fn refilter(&mut self) {
        let needle = self.filter.to_lowercase();
        self.visible =
            (0..self.cycles.len()).filter(|&i| needle.is_empty() || matches_filter(&self.cycles[i], &needle)).collect();
        if self.selected_row().is_none() {
            self.selected = self.visible.first().map(|&i| self.cycles[i].path.clone());
        }
    }

    /// Takes in (re)loaded entries and drops vanished ones, keeping the attention order.
    pub fn merge(&mut self, loaded: Vec<CycleEntry>, gone: &[PathBuf]) {
        self.cycles.retain(|c| !gone.contains(&c.path));
        for entry in loaded {
            match self.cycles.iter_mut().find(|c| c.path == entry.path) {
                Some(slot) => *slot = entry,
                None => self.cycles.push(entry),
            }
        }
        self.sort();
        self.refilter();
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

    /// The sidecar directory holding `path` and its cycle's state path.
    pub fn sidecar_of(&self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        path.ancestors().find_map(|a| self.sidecars.get(a).map(|state| (a.to_path_buf(), state.clone())))
    }

    /// Selects a visible row; `true` when the selection changed.
    pub fn select_row(&mut self, row: usize) -> bool {
        let Some(&index) = self.visible.get(row) else { return false };
        let path = &self.cycles[index].path;
        if self.selected.as_ref() == Some(path) {
            return false;
        }
        self.selected = Some(path.clone());
        true
    }

    /// The row a movement command leads to (`None` when the list is empty).
    pub fn target_row(&self, cmd: Cmd) -> Option<usize> {
        let count = self.visible.len();
        if count == 0 {
            return None;
        }
        let row = self.selected_row().unwrap_or(0);
        let page = usize::from(self.height.get().max(2)) - 1;
        Some(match cmd {
            Cmd::Up => row.saturating_sub(1),
            Cmd::Down => (row + 1).min(count - 1),
            Cmd::PageUp => row.saturating_sub(page),
            Cmd::PageDown => (row + page).min(count - 1),
            Cmd::Top => 0,
            Cmd::Bottom => count - 1,
            _ => row,
        })
    }

    /// The next visible row after the selection (wrapping) whose cycle needs a person.
    pub fn next_attention_row(&self) -> Option<usize> {
        let count = self.visible.len();
        let start = self.selected_row().map_or(0, |r| r + 1);
        (0..count).map(|k| (start + k) % count).find(|&row| self.cycles[self.visible[row]].needs_human())
    }

    /// Edits the filter line; `false` for a command that is not filter input.
    pub fn filter_command(&mut self, cmd: Cmd) -> bool {
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
            _ => return false,
        }
        self.refilter();
        true
    }

    /// Counts per status group for the status bar.
    pub fn counts(&self) -> [(StatusGroup, usize); 7] {
        let mut counts = [0usize; 7];
        for entry in &self.cycles {
            counts[StatusGroup::of(entry.status()) as usize] += 1;
        }
        StatusGroup::ALL.map(|g| (g, counts[g as usize]))
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
        // The row's badge: `tests changed`, `assertions removed`, `tests added`.
        if let Some(flag) = state.report.as_ref().and_then(|r| r.integrity.as_ref()).and_then(|i| i.flag) {
            hay.push(' ');
            hay.push_str(flag.badge());
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
    /// A brief awaits confirmation.
    Confirm = 0,
    /// A pass that changed protected paths (`NEEDS_REVIEW`), or a review's findings
    /// (`AWAITING_TRIAGE`), wait for a person.
    Review = 1,
    /// `BLOCKED_*`.
    Blocked = 2,
    /// `READY_TO_MERGE`, `REVIEW_DONE`.
    Ready = 3,
    /// Under way: waiting for WebGPT, the coordinator or a run.
    Waiting = 4,
    /// Aborted or superseded: nothing more happens.
    Ended = 5,
    /// The state file cannot be read.
    Unreadable = 6,
}

impl StatusGroup {
    /// Every group, in the status bar's order.
    pub const ALL: [StatusGroup; 7] = [
        StatusGroup::Confirm,
        StatusGroup::Review,
        StatusGroup::Blocked,
        StatusGroup::Ready,
        StatusGroup::Waiting,
        StatusGroup::Ended,
        StatusGroup::Unreadable,
    ];

    /// The group of a status; `None` (an unreadable file) is `Unreadable`.
    pub fn of(status: Option<Status>) -> StatusGroup {
        match status {
            None => StatusGroup::Unreadable,
            Some(Status::AwaitingBriefConfirmation) => StatusGroup::Confirm,
            // Findings waiting for the person's decision read like a pass waiting for review.
            Some(Status::NeedsReview | Status::TestsDisputed | Status::AwaitingTriage) => StatusGroup::Review,
            Some(s) if s.is_blocked() => StatusGroup::Blocked,
            // A finished review is done well, not stopped: it counts with the passes.
            Some(Status::ReadyToMerge | Status::ReviewDone) => StatusGroup::Ready,
            Some(s) if s.is_final() => StatusGroup::Ended,
            Some(_) => StatusGroup::Waiting,
        }
    }
}

pub mod view;
