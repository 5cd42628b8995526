//! The Diff tab (design §6.7): which run's change is shown — the whole PR at that run's head,
//! or the change since the run before —, the diff's table of contents, the selected file and
//! hunk, the window of lines read around the viewport, wrapping and search. Its loads
//! (`load.rs`: [`DiffLoad::Open`] first, the cache on disk; [`DiffLoad::Make`] only when the
//! diff was never made, which needs GitHub) are answered here as [`DiffEvent`]s; answers
//! about another diff than the one shown are dropped.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::cycle::files::CyclePaths;
use crate::domain::commands::CommandsProfile;
use crate::domain::diff::FileDiff;
use crate::domain::report::normalize_sha;
use crate::domain::state::CycleState;
use crate::domain::test_files::{Judges, classify};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::pager::diff::{DiffDoc, DiffEvent, DiffLine};
use crate::tui::panes::run_rows::integrity;
use crate::tui::panes::{Cx, Loaded, Pane, PaneWork, Reply, Request, SearchLine, SearchState, Selection};
use crate::tui::registry::Tab;

pub mod load;
pub use load::DiffLoad;

/// Lines read beyond the viewport on each side, so scrolling rarely waits for the disk.
pub const MARGIN: usize = 64;

/// The diff a run tested, resolved from the cycle's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffTarget {
    /// The cycle's state file.
    pub cycle: PathBuf,
    /// The run whose head is shown.
    pub iteration: u32,
    /// That head (40 hex digits).
    pub head_sha: String,
    /// Since the last run: the run before (its iteration and head).
    pub old: Option<(u32, String)>,
    /// Where `cycle::diff` caches it.
    pub cache: PathBuf,
}

/// Where the Diff tab's diff stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffState {
    /// Nothing to show, and why (no run yet, a first run has no "since last").
    Empty(String),
    /// Reading the cache.
    Loading,
    /// Asking GitHub (and the mirror, since the last run) to make it.
    Making,
    /// It could not be read or made, and why.
    Failed(String),
    /// Shown: `doc` holds its table of contents.
    Ready,
}

/// The Diff tab: the run's diff shown, its files and hunks, the window read around the
/// viewport, search.
#[derive(Debug, Clone)]
pub struct DiffPane {
    /// Bumped whenever another diff is asked for, so stale replies are dropped.
    pub generation: u64,
    /// The run asked for (`None`: the cycle's last).
    pub iteration: Option<u32>,
    /// Since the last run rather than the whole PR.
    pub since_last: bool,
    /// Only the files that count as tests (design §5.2): the filter "tests only".
    pub tests_only: bool,
    /// The files of the diff shown that count as tests (indices into the doc's files, in
    /// order): those the run's `integrity` names, and those the rules and the cycle's
    /// commands name by path.
    pub test_files: Vec<usize>,
    /// The paths the run's `integrity` names as tests, for the diff shown (set by the app).
    known_tests: BTreeSet<String>,
    /// The cycle's commands: a file they run is a test file.
    commands: Option<CommandsProfile>,
    /// The direction of the search in flight, and how many matches in files the filter
    /// hides it went past (at most one per file, so it ends).
    search_forward: bool,
    skipped: usize,
    /// The diff asked for, once resolved from the history.
    pub target: Option<DiffTarget>,
    /// Where it stands.
    pub state: DiffState,
    /// Its table of contents, once read.
    pub doc: Option<DiffDoc>,
    /// Selected file (index into the doc's files).
    pub file: usize,
    /// Current hunk of the selected file (`None` after scrolling by lines).
    pub hunk: Option<usize>,
    /// First line shown (a line number of the diff).
    pub top: usize,
    /// Lines read from disk, the first being line `window_first`: at most the viewport and
    /// a margin on each side, never the whole diff.
    pub window_first: usize,
    /// The lines read, from `window_first` on.
    pub window: Vec<DiffLine>,
    /// The last range asked for (`from..to`), so a request in flight is not repeated.
    pub asked: Option<(usize, usize)>,
    /// Wrap long lines rather than scroll sideways.
    pub wrap: bool,
    /// Columns scrolled sideways past the +/- column, when not wrapping.
    pub hscroll: usize,
    /// `current` holds the line number of the current match.
    pub search: SearchLine,
    /// Lines of the hunk pane at the last draw (set by the renderer).
    pub height: Cell<u16>,
}

impl Default for DiffPane {
    fn default() -> Self {
        DiffPane {
            generation: 0,
            iteration: None,
            since_last: false,
            tests_only: false,
            test_files: Vec::new(),
            known_tests: BTreeSet::new(),
            commands: None,
            search_forward: true,
            skipped: 0,
            target: None,
            state: DiffState::Empty(String::new()),
            doc: None,
            file: 0,
            hunk: None,
            top: 0,
            window_first: 0,
            window: Vec::new(),
            asked: None,
            wrap: false,
            hscroll: 0,
            search: SearchLine::default(),
            height: Cell::new(20),
        }
    }
}

/// The run to show and, since the last run, the one before, from the cycle's history; or
/// what to say instead.
pub fn resolve(
    cycle: &Path,
    state: &CycleState,
    iteration: Option<u32>,
    since_last: bool,
) -> Result<DiffTarget, String> {
    let history = &state.history;
    let position = match iteration {
        Some(k) => history
            .iter()
            .position(|r| r.iteration == k)
            .ok_or_else(|| format!("Run {k} is not in the cycle's history (it did not finish): it has no diff."))?,
        None => history
            .len()
            .checked_sub(1)
            .ok_or("No tested run yet: the diff of a PR is shown once a run has tested its head.")?,
    };
    let run = &history[position];
    let sha =
        |text: &str| normalize_sha(text).ok_or_else(|| format!("{text:?} in the cycle's history is not a commit SHA"));
    let head_sha = sha(&run.head_sha)?;
    let paths = CyclePaths::new(cycle.to_path_buf()).map_err(|e| e.to_string())?;
    let old = if since_last {
        let Some(previous) = position.checked_sub(1).map(|p| &history[p]) else {
            return Err(format!(
                "Unavailable: run {} is the cycle's first, so there is no earlier tested head to compare with. \
                 Press s for the whole PR.",
                run.iteration
            ));
        };
        Some((previous.iteration, sha(&previous.head_sha)?))
    } else {
        None
    };
    let cache = match &old {
        Some((_, old_sha)) => crate::cycle::diff::since_last_cache(&paths, old_sha, &head_sha),
        None => crate::cycle::diff::whole_pr_cache(&paths, &head_sha, run.base_sha.as_deref()),
    };
    Ok(DiffTarget { cycle: cycle.to_path_buf(), iteration: run.iteration, head_sha, old, cache })
}

impl DiffPane {
    /// A diff is shown.
    pub fn is_ready(&self) -> bool {
        self.state == DiffState::Ready && self.doc.is_some()
    }

    /// Forgets the diff shown (another cycle is selected); late replies are dropped.
    pub fn close(&mut self) {
        self.generation += 1;
        self.iteration = None;
        self.target = None;
        self.state = DiffState::Empty(String::new());
        self.forget_doc();
    }

    fn forget_doc(&mut self) {
        self.doc = None;
        self.test_files = Vec::new();
        self.file = 0;
        self.hunk = None;
        self.top = 0;
        self.window_first = 0;
        self.window = Vec::new();
        self.asked = None;
        self.hscroll = 0;
        self.search.current = None;
        self.search.state = SearchState::Idle;
    }

    /// Shows the diff of the cycle at `cycle` as asked (`iteration`, `since_last`): opens it
    /// unless it is the one shown. `retry` asks again after a failure (the tab shown anew).
    pub fn ensure(&mut self, cycle: Option<&Path>, state: Option<&CycleState>, retry: bool) -> Option<DiffLoad> {
        let resolved = match (cycle, state) {
            (Some(cycle), Some(state)) => resolve(cycle, state, self.iteration, self.since_last),
            _ => Err("This cycle's state cannot be read.".to_owned()),
        };
        match resolved {
            Err(reason) => {
                if self.target.is_some() || self.state != DiffState::Empty(reason.clone()) {
                    self.generation += 1;
                    self.target = None;
                    self.forget_doc();
                    self.state = DiffState::Empty(reason);
                }
                None
            }
            Ok(target) => {
                let failed = matches!(self.state, DiffState::Failed(_));
                if self.target.as_ref() == Some(&target) && !(failed && retry) {
                    return None;
                }
                self.generation += 1;
                self.forget_doc();
                let cache = target.cache.clone();
                self.target = Some(target);
                self.state = DiffState::Loading;
                Some(DiffLoad::Open { generation: self.generation, cache })
            }
        }
    }

    /// Whole PR ⇄ since the last run.
    pub fn toggle_since_last(&mut self) {
        self.since_last = !self.since_last;
    }

    /// Every file ⇄ only the test files; a file the filter hides gives way to the first shown.
    pub fn toggle_tests_only(&mut self) -> Option<DiffLoad> {
        self.tests_only = !self.tests_only;
        self.keep_shown()
    }

    /// What counts as a test file in the diff shown: the paths the run's `integrity` names
    /// (its whole-PR or since-last list, as shown) and the cycle's commands.
    pub fn set_tests(&mut self, known: BTreeSet<String>, commands: Option<CommandsProfile>) -> Option<DiffLoad> {
        if known == self.known_tests && commands == self.commands {
            return None;
        }
        self.known_tests = known;
        self.commands = commands;
        self.classify();
        self.keep_shown()
    }

    fn classify(&mut self) {
        let is_test = |f: &FileDiff| {
            std::iter::once(f.path.as_str()).chain(f.old_path.as_deref()).any(|path| {
                self.known_tests.contains(path) || classify(path, &Judges::of(self.commands.as_ref())).is_some()
            })
        };
        self.test_files = match &self.doc {
            Some(doc) => doc.files.iter().enumerate().filter(|(_, f)| is_test(f)).map(|(i, _)| i).collect(),
            None => Vec::new(),
        };
    }

    /// Whether file `index` is in the list (every file, or the filter is on and it is a test).
    pub fn is_shown(&self, index: usize) -> bool {
        !self.tests_only || self.test_files.binary_search(&index).is_ok()
    }

    /// The files in the list, as indices into the doc's.
    pub fn shown_files(&self) -> Vec<usize> {
        if self.tests_only { self.test_files.clone() } else { (0..self.file_count()).collect() }
    }

    /// How many files the list has.
    pub fn shown_count(&self) -> usize {
        if self.tests_only { self.test_files.len() } else { self.file_count() }
    }

    /// The filter is on and hides every file of a diff that has some.
    pub fn nothing_shown(&self) -> bool {
        self.tests_only && self.test_files.is_empty() && self.file_count() > 0
    }

    fn first_shown(&self) -> Option<usize> {
        (0..self.file_count()).find(|&i| self.is_shown(i))
    }

    fn next_shown(&self, after: usize) -> Option<usize> {
        (after + 1..self.file_count()).find(|&i| self.is_shown(i))
    }

    fn prev_shown(&self, before: usize) -> Option<usize> {
        (0..before).rev().find(|&i| self.is_shown(i))
    }

    /// With the filter on, a selected file it hides gives way to the first one shown.
    fn keep_shown(&mut self) -> Option<DiffLoad> {
        if self.doc.is_none() || self.is_shown(self.file) {
            return None;
        }
        let first = self.first_shown()?;
        self.select_file(first);
        self.window_request()
    }

    /// The selected file's lines (`start..end`); the whole text when it has no files.
    pub fn section(&self) -> (usize, usize) {
        match &self.doc {
            Some(doc) => match doc.files.get(self.file) {
                Some(f) => (f.start_line, f.end_line.max(f.start_line + 1)),
                None => (0, doc.lines),
            },
            None => (0, 0),
        }
    }

    fn page(&self) -> usize {
        usize::from(self.height.get().max(1))
    }

    fn clamp_top(&mut self) {
        let (start, end) = self.section();
        let last_top = end.saturating_sub(self.page()).max(start);
        self.top = self.top.clamp(start, last_top);
    }

    /// A read of the lines around the viewport, unless they were asked for already.
    pub fn window_request(&mut self) -> Option<DiffLoad> {
        let doc = self.doc.as_ref()?;
        let (start, end) = self.section();
        let need = (self.top, (self.top + self.page()).min(end));
        if let Some((from, to)) = self.asked
            && from <= need.0
            && need.1 <= to
        {
            return None;
        }
        let margin = self.page().max(MARGIN);
        let from = self.top.saturating_sub(margin).max(start);
        let to = (need.1 + margin).min(end).max(from);
        let effect = DiffLoad::Window {
            generation: self.generation,
            path: doc.path.clone(),
            checkpoint: doc.checkpoint(from),
            from,
            count: to - from,
        };
        self.asked = Some((from, to));
        Some(effect)
    }

    /// The loaded line `line`, if it is in the window.
    pub fn line(&self, line: usize) -> Option<&DiffLine> {
        line.checked_sub(self.window_first).and_then(|i| self.window.get(i))
    }

    /// Selects file `index` from its top.
    fn select_file(&mut self, index: usize) {
        let Some(file) = self.doc.as_ref().and_then(|d| d.files.get(index)) else { return };
        self.top = file.start_line;
        self.file = index;
        self.hunk = None;
        self.clamp_top();
    }

    fn hunks(&self, file: usize) -> &[usize] {
        self.doc.as_ref().and_then(|d| d.files.get(file)).map_or(&[], |f| f.hunks.as_slice())
    }

    fn file_count(&self) -> usize {
        self.doc.as_ref().map_or(0, |d| d.files.len())
    }

    /// Makes hunk `hunk` of file `file` current, its header at the top when it can be.
    fn select_hunk(&mut self, file: usize, hunk: Option<usize>) {
        if file != self.file {
            self.select_file(file);
        }
        self.hunk = hunk;
        if let Some(line) = hunk.and_then(|h| self.hunks(file).get(h).copied()) {
            self.top = line;
            self.clamp_top();
        }
    }

    /// The next hunk, on into the next file after the last one.
    fn next_hunk(&mut self) {
        let hunks = self.hunks(self.file);
        let next = match self.hunk {
            Some(h) => (h + 1 < hunks.len()).then_some(h + 1),
            None => hunks.iter().position(|&l| l > self.top),
        };
        match next {
            Some(h) => self.select_hunk(self.file, Some(h)),
            None => {
                if let Some(file) = self.next_shown(self.file) {
                    let first = (!self.hunks(file).is_empty()).then_some(0);
                    self.select_hunk(file, first);
                }
            }
        }
    }

    /// The previous hunk, back into the previous file before the first one.
    fn prev_hunk(&mut self) {
        let hunks = self.hunks(self.file);
        let prev = match self.hunk {
            Some(h) => h.checked_sub(1),
            None => hunks.iter().rposition(|&l| l < self.top),
        };
        match prev {
            Some(h) => self.select_hunk(self.file, Some(h)),
            None => {
                if let Some(file) = self.prev_shown(self.file) {
                    let last = self.hunks(file).len().checked_sub(1);
                    self.select_hunk(file, last);
                }
            }
        }
    }

    /// Files, hunks and scrolling; a read of new lines when the viewport moved off them.
    pub fn command(&mut self, cmd: Cmd) -> Option<DiffLoad> {
        if !self.is_ready() || self.nothing_shown() {
            return None;
        }
        let page = self.page().saturating_sub(1).max(1);
        match cmd {
            Cmd::NextFile => {
                if let Some(next) = self.next_shown(self.file) {
                    self.select_file(next);
                }
            }
            // On the first file: back to its top.
            Cmd::PrevFile => self.select_file(self.prev_shown(self.file).unwrap_or(self.file)),
            Cmd::NextHunk => self.next_hunk(),
            Cmd::PrevHunk => self.prev_hunk(),
            Cmd::Up | Cmd::Down | Cmd::PageUp | Cmd::PageDown | Cmd::Top | Cmd::Bottom => {
                let (start, end) = self.section();
                self.top = match cmd {
                    Cmd::Up => self.top.saturating_sub(1),
                    Cmd::Down => self.top + 1,
                    Cmd::PageUp => self.top.saturating_sub(page),
                    Cmd::PageDown => self.top + page,
                    Cmd::Top => start,
                    _ => end,
                };
                self.hunk = None;
                self.clamp_top();
            }
            Cmd::Left => self.hscroll = self.hscroll.saturating_sub(8),
            Cmd::Right if !self.wrap => self.hscroll = self.hscroll.saturating_add(8),
            _ => {}
        }
        self.window_request()
    }

    /// Wraps long lines, or stops.
    pub fn toggle_wrap(&mut self) {
        self.wrap = !self.wrap;
        self.hscroll = 0;
    }

    /// Opens the search line (once a diff is shown).
    pub fn start_search_input(&mut self) {
        if !self.is_ready() || self.nothing_shown() {
            return;
        }
        self.search.editing = true;
        self.search.input.clear();
    }

    /// Edits the search line; submitting starts the search.
    pub fn search_command(&mut self, cmd: Cmd) -> Option<DiffLoad> {
        if !self.search.edit(cmd) {
            return None;
        }
        self.start_search(self.top, true)
    }

    fn start_search(&mut self, from: usize, forward: bool) -> Option<DiffLoad> {
        self.search.wrapped = false;
        self.skipped = 0;
        self.search_forward = forward;
        self.search_from(from, forward)
    }

    fn search_from(&mut self, from: usize, forward: bool) -> Option<DiffLoad> {
        let doc = self.doc.as_ref()?;
        self.search.state = SearchState::Searching;
        Some(DiffLoad::Search {
            generation: self.generation,
            path: doc.path.clone(),
            checkpoints: doc.checkpoints.clone(),
            query: self.search.query.clone(),
            from,
            forward,
        })
    }

    /// The next (or previous) match after the current one.
    pub fn search_again(&mut self, forward: bool) -> Option<DiffLoad> {
        if self.search.query.is_empty() || !self.is_ready() || self.nothing_shown() {
            return None;
        }
        let from = match (self.search.current, forward) {
            (Some(at), true) => at as usize + 1,
            (Some(at), false) => at as usize,
            (None, _) => self.top,
        };
        self.start_search(from, forward)
    }

    /// Takes a reply from the diff reader; effects it leads to (making the diff when it is not
    /// cached, reading lines).
    pub fn reply(&mut self, event: DiffEvent) -> Vec<DiffLoad> {
        let mut fx = Vec::new();
        match event {
            DiffEvent::Opened { generation, result } if generation == self.generation => match result {
                Ok(Some(doc)) => {
                    self.doc = Some(doc);
                    self.state = DiffState::Ready;
                    self.classify();
                    self.select_file(self.first_shown().unwrap_or(0));
                    fx.extend(self.window_request());
                }
                Ok(None) => {
                    if let Some(target) = &self.target {
                        self.state = DiffState::Making;
                        fx.push(DiffLoad::Make {
                            generation,
                            path: target.cycle.clone(),
                            iteration: target.iteration,
                            since_last: target.old.is_some(),
                        });
                    }
                }
                Err(error) => self.state = DiffState::Failed(error),
            },
            DiffEvent::Window { generation, first, lines } if generation == self.generation => {
                self.window_first = first;
                self.window = lines;
            }
            DiffEvent::Found { generation, found } if generation == self.generation => {
                // A match in a file the filter hides: search on past that file.
                let hidden = found.and_then(|(line, wrapped)| {
                    let doc = self.doc.as_ref()?;
                    let file = doc.file_of(line).filter(|&f| !self.is_shown(f))?;
                    let section = &doc.files[file];
                    Some((if self.search_forward { section.end_line } else { section.start_line }, wrapped))
                });
                if let Some((from, wrapped)) = hidden {
                    self.search.wrapped |= wrapped;
                    self.skipped += 1;
                    if self.skipped <= self.file_count() {
                        fx.extend(self.search_from(from, self.search_forward));
                    } else {
                        self.search.state = SearchState::NotFound;
                    }
                    return fx;
                }
                self.search.state = if found.is_some() { SearchState::Found } else { SearchState::NotFound };
                if let Some((line, wrapped)) = found {
                    self.search.wrapped |= wrapped;
                    self.search.current = Some(line as u64);
                    if let Some(file) = self.doc.as_ref().and_then(|d| d.file_of(line)) {
                        self.select_file(file);
                    }
                    self.top = line.saturating_sub(self.page() / 3);
                    self.hunk = None;
                    self.clamp_top();
                    fx.extend(self.window_request());
                }
            }
            DiffEvent::Failed { generation, error } if generation == self.generation => {
                self.state = DiffState::Failed(error);
            }
            _ => {}
        }
        fx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;

    /// Three files: `a` with hunks at lines 2 and 5, a binary `b` (no hunk), `c` with one.
    const TEXT: &str = "diff --git a/a b/a\n--- a/a\n@@ -1 +1 @@\n-x\n+y\n@@ -9 +9 @@\n-p\n+q\n\
diff --git a/b b/b\nBinary files a/b and b/b differ\n\
diff --git a/c b/c\n--- a/c\n@@ -1 +1,2 @@\n+1\n+2\n";

    fn ready(height: u16) -> DiffPane {
        let files = crate::domain::diff::index(TEXT.lines());
        let doc = DiffDoc::from_text(PathBuf::from("/nonexistent.diff"), TEXT, files, 0, &Redactor::default());
        let mut pane = DiffPane { doc: Some(doc), state: DiffState::Ready, ..DiffPane::default() };
        pane.height.set(height);
        pane.select_file(0);
        pane
    }

    fn at(pane: &DiffPane) -> (usize, Option<usize>, usize) {
        (pane.file, pane.hunk, pane.top)
    }

    #[test]
    fn hunks_walk_through_files_and_back() {
        let mut pane = ready(2);
        let mut seen = Vec::new();
        for _ in 0..5 {
            pane.command(Cmd::NextHunk);
            seen.push(at(&pane));
        }
        // a's two hunks, the binary b (no hunk: its top), c's hunk, then it stays.
        assert_eq!(seen, [(0, Some(0), 2), (0, Some(1), 5), (1, None, 8), (2, Some(0), 12), (2, Some(0), 12)]);
        let mut back = Vec::new();
        for _ in 0..4 {
            pane.command(Cmd::PrevHunk);
            back.push(at(&pane));
        }
        assert_eq!(back, [(1, None, 8), (0, Some(1), 5), (0, Some(0), 2), (0, Some(0), 2)]);
    }

    #[test]
    fn scrolling_forgets_the_hunk_and_the_next_is_below_the_top() {
        let mut pane = ready(2);
        pane.command(Cmd::Down);
        pane.command(Cmd::Down);
        pane.command(Cmd::Down);
        assert_eq!(at(&pane), (0, None, 3));
        pane.command(Cmd::NextHunk);
        assert_eq!(at(&pane), (0, Some(1), 5));
        pane.command(Cmd::Up);
        pane.command(Cmd::PrevHunk);
        assert_eq!(at(&pane), (0, Some(0), 2));
        // The last lines reach the bottom and no further; files clamp at both ends.
        pane.command(Cmd::Bottom);
        assert_eq!(at(&pane), (0, None, 6));
        pane.command(Cmd::PrevFile);
        assert_eq!(at(&pane), (0, None, 0));
        for _ in 0..5 {
            pane.command(Cmd::NextFile);
        }
        assert_eq!(at(&pane), (2, None, 10));
    }

    #[test]
    fn windows_are_asked_once_and_only_around_the_viewport() {
        let mut pane = ready(2);
        let Some(DiffLoad::Window { from, count, .. }) = pane.window_request() else { panic!() };
        assert_eq!((from, count), (0, 8), "file a's section only");
        assert!(pane.window_request().is_none(), "in flight: not asked again");
        assert!(pane.command(Cmd::Down).is_none(), "still inside what was asked for");
        assert!(matches!(pane.command(Cmd::NextFile), Some(DiffLoad::Window { from: 8, count: 2, .. })));
    }

    #[test]
    fn stale_replies_are_dropped() {
        let mut pane = ready(2);
        let old = pane.generation;
        pane.generation += 1;
        pane.reply(DiffEvent::Failed { generation: old, error: "late".into() });
        assert_eq!(pane.state, DiffState::Ready);
        pane.reply(DiffEvent::Window { generation: old, first: 0, lines: Vec::new() });
        pane.reply(DiffEvent::Found { generation: old, found: Some((12, false)) });
        assert_eq!(at(&pane), (0, None, 0));
    }
}

impl DiffPane {
    /// Opens the diff it should show for the selected cycle, unless it is shown (`retry`: again
    /// after a failure), and says which of its files are tests.
    fn ensure_shown(&mut self, retry: bool, cx: &mut Cx<DiffLoad>) {
        let entry = cx.sel.entry;
        cx.own.extend(self.ensure(entry.map(|e| e.path.as_path()), entry.and_then(|e| e.state.as_ref()), retry));
        self.tests(cx);
    }

    /// Which files of the diff shown count as tests (design §5.2): those the run's `integrity`
    /// names, when it is at hand, and whatever the rules and the cycle's commands say of each
    /// path.
    fn tests(&mut self, cx: &mut Cx<DiffLoad>) {
        let entry = cx.sel.entry;
        let commands = entry.and_then(|e| e.state.as_ref()).and_then(|s| s.commands.clone());
        let mut known = BTreeSet::new();
        if let (Some(entry), Some(target)) = (entry, &self.target)
            && let Ok(Some(integrity)) = integrity(cx.loaded, entry, target.iteration)
        {
            let files = match &target.old {
                None => Some(&integrity.against_base),
                Some((_, old)) => integrity.since_last.as_ref().filter(|s| &s.head_sha == old).map(|s| &s.files),
            };
            known.extend(files.into_iter().flatten().map(|f| f.path.clone()));
        }
        cx.own.extend(self.set_tests(known, commands));
    }
}

impl Pane for DiffPane {
    type Msg = DiffEvent;
    type Load = DiffLoad;

    const CONTEXTS: &'static [Context] = &[Context::Tab(Tab::Diff), Context::Detail, Context::Cycle, Context::Global];
    const KEYS: &'static [crate::tui::keymap::Binding] = keys::KEYS;

    fn command(&mut self, cmd: Cmd, cx: &mut Cx<DiffLoad>) -> Reply {
        let load = match cmd {
            Cmd::Up
            | Cmd::Down
            | Cmd::PageUp
            | Cmd::PageDown
            | Cmd::Top
            | Cmd::Bottom
            | Cmd::Left
            | Cmd::Right
            | Cmd::NextFile
            | Cmd::PrevFile
            | Cmd::NextHunk
            | Cmd::PrevHunk => DiffPane::command(self, cmd),
            Cmd::Wrap => {
                self.toggle_wrap();
                None
            }
            Cmd::Search => {
                self.start_search_input();
                None
            }
            Cmd::NextMatch | Cmd::PrevMatch => self.search_again(cmd == Cmd::NextMatch),
            Cmd::ToggleSinceLast => {
                self.toggle_since_last();
                return Reply::Reload;
            }
            Cmd::TestsOnly => self.toggle_tests_only(),
            _ => return Reply::NotMine,
        };
        cx.own.extend(load);
        Reply::Done
    }

    fn available(&self, cmd: Cmd, sel: &Selection, _loaded: &Loaded) -> Option<bool> {
        match cmd {
            Cmd::NextHunk | Cmd::PrevHunk | Cmd::Search | Cmd::Wrap => Some(self.is_ready()),
            Cmd::NextFile | Cmd::PrevFile => Some(self.doc.is_some() && self.shown_count() > 1),
            Cmd::NextMatch | Cmd::PrevMatch => Some(!self.search.query.is_empty()),
            Cmd::ToggleSinceLast => {
                Some(sel.entry.and_then(|e| e.state.as_ref()).is_some_and(|s| !s.history.is_empty()))
            }
            _ => None,
        }
    }

    fn shown(&mut self, cx: &mut Cx<DiffLoad>) {
        self.ensure_shown(true, cx);
    }

    /// A new run may change the diff shown (the last run's).
    fn cycle_reloaded(&mut self, cx: &mut Cx<DiffLoad>) {
        self.ensure_shown(false, cx);
    }

    /// A report read may name the test files of the diff shown.
    fn loaded_changed(&mut self, cx: &mut Cx<DiffLoad>) {
        self.tests(cx);
    }

    fn forget(&mut self, _cx: &mut Cx<DiffLoad>) {
        self.close();
    }

    fn receive(&mut self, answer: DiffEvent, cx: &mut Cx<DiffLoad>) -> Reply {
        let made = matches!(&answer, DiffEvent::Opened { result: Ok(Some(_)), .. });
        cx.own.extend(self.reply(answer));
        self.tests(cx);
        // A whole-PR diff just opened may be one the row of a ready cycle lacked.
        match &self.target {
            Some(target) if made && target.old.is_none() => Reply::DiffMade(target.cycle.clone()),
            _ => Reply::Done,
        }
    }

    fn request(&mut self, request: &Request, _cx: &mut Cx<DiffLoad>) -> Reply {
        match request {
            Request::DiffOf(iteration) => {
                self.iteration = *iteration;
                Reply::ShowMe
            }
            Request::OpenRunLog | Request::RunChosen => Reply::NotMine,
        }
    }

    fn resized(&mut self, cx: &mut Cx<DiffLoad>) {
        cx.own.extend(self.window_request());
    }

    fn busy(&self) -> bool {
        self.state == DiffState::Making || self.search.state == SearchState::Searching
    }

    fn search(&self) -> Option<&SearchLine> {
        Some(&self.search)
    }

    fn input(&mut self, cmd: Cmd, cx: &mut Cx<DiffLoad>) {
        cx.own.extend(self.search_command(cmd));
    }

    fn paste(&mut self, text: &str) {
        self.search.input.push_str(text);
    }

    fn render(&self, draw: &super::Draw, _entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, frame, area);
    }

    fn work(load: DiffLoad, ctx: &crate::cycle::Ctx) -> PaneWork<DiffEvent> {
        load::work(load, ctx)
    }
}

pub mod keys;
pub mod view;
