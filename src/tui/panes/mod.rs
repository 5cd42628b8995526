//! The control room's panes, one folder each: its state (`mod.rs`), its key handling (its
//! [`Pane`] implementation) and its drawing (`view.rs`). Panes do no I/O: what they need
//! read they ask for with an [`Effect`] (the log and diff windows come from `tui::pager`).
//!
//! The detail tabs sit behind the [`Pane`] trait: the app asks the shown tab for its keyboard
//! contexts, hands it the commands those contexts resolve, and draws it, without knowing
//! which tab it is. Adding a tab is a folder here, its variant in [`Tab`] and its field in
//! [`Tabs`], and one keymap row for its number key. The cycle list, the Projects screen and
//! the help overlay have folders too, but they are not tabs: the app owns what they change
//! (the selection, the screen, the popups).

pub mod brief;
pub mod connector;
pub mod conversation;
pub mod diff;
pub mod help;
pub mod list;
pub mod log;
pub mod project;
pub mod projects;
pub mod runs;
pub mod text;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::cycle::files::Event as JournalEvent;
use crate::redact::Redactor;
use crate::tui::event::Effect;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::{CycleEntry, RunFile, Sources};
use crate::tui::tab::Tab;
use crate::tui::theme::Theme;
use crate::tui::widgets::Hits;

/// Which half of the cycles screen has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The cycle list.
    List,
    /// The shown tab.
    Detail,
}

use self::log::LogSearch;
use self::runs::RunRow;

/// What a tab sees of the rest of the control room when it acts: the selected cycle, its
/// runs as the Runs tab lists them, and the one the Runs tab selected (the Log tab opens it).
pub struct Selection<'a> {
    /// The selected cycle, if any.
    pub entry: Option<&'a CycleEntry>,
    /// A test of it runs now (here or in another process).
    pub running: bool,
    /// Its runs, newest first.
    pub rows: &'a [RunRow],
    /// The Runs tab's selected row (an index into `rows`).
    pub run: usize,
    /// The repositories whose sources were read already (the Project tab asks once).
    pub sources: &'a HashMap<String, Sources>,
}

impl Selection<'_> {
    /// The run the Runs tab selected.
    pub fn selected_run(&self) -> Option<&RunRow> {
        self.rows.get(self.run)
    }
}

/// What a tab asks of the app after a command: what only the app can do, because it spans
/// tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The command is not this tab's: the app's own keys get it.
    NotMine,
    /// Done here.
    Done,
    /// Show another tab (the Runs tab's Enter opens the run's log).
    Show(Tab),
    /// The Runs tab's selection moved: the log shown is another run's now.
    RunChosen,
    /// Show the diff of run `iteration` (the Runs tab's `d`).
    DiffOf(Option<u32>),
    /// The command cannot be done here, and why (a toast).
    Refused(&'static str),
    /// What this tab shows changed in a way that needs loading again (the Diff tab's "since
    /// the last run").
    Reload,
}

/// A detail tab.
pub trait Pane {
    /// Its keyboard contexts while it has the keys, most specific first.
    fn contexts(&self) -> &'static [Context];

    /// A command its contexts resolved (and the movement keys, the mouse wheel).
    fn command(&mut self, cmd: Cmd, sel: &Selection, fx: &mut Vec<Effect>) -> Reply;

    /// Whether one of its commands makes sense now (the footer hides the others); `None` for a
    /// command it leaves to the app.
    fn available(&self, _cmd: Cmd, _sel: &Selection) -> Option<bool> {
        None
    }

    /// It became visible (its tab chosen, or the detail focused): ask for what it needs.
    fn shown(&mut self, _sel: &Selection, _fx: &mut Vec<Effect>) {}

    /// Its tab was chosen from another: start at the top.
    fn opened(&mut self) {}

    /// Another cycle was selected: forget what it held of the last one.
    fn forget(&mut self, _fx: &mut Vec<Effect>) {}

    /// Its search line, when it has one.
    fn search(&self) -> Option<&LogSearch> {
        None
    }

    /// Its search line is open, and takes every key and paste.
    fn editing(&self) -> bool {
        self.search().is_some_and(|s| s.editing)
    }

    /// A key while its search line is open.
    fn input(&mut self, _cmd: Cmd, _fx: &mut Vec<Effect>) {}

    /// Text pasted while its search line is open.
    fn paste(&mut self, _text: &str) {}

    /// Draws it for the selected cycle.
    fn render(&self, draw: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect);
}

/// What a pane draws with besides its own state, made from the app by the screen's layout
/// once a frame: the look, the clock, the selection and what the app knows of it. Panes never
/// see the app itself.
pub struct Draw<'a> {
    /// The colours.
    pub theme: &'a Theme,
    /// Everything drawn passes through it (design §7: the screen is an output channel).
    pub redactor: &'a Redactor,
    /// The clock, for ages and elapsed times.
    pub now: DateTime<Utc>,
    /// The spinner's frame.
    pub spinner: &'static str,
    /// Which half has the keys.
    pub focus: Focus,
    /// The selected cycle and its runs.
    pub sel: Selection<'a>,
    /// What was read for the selected cycle.
    pub loaded: &'a Loaded,
    /// The cycle list.
    pub list: &'a list::CycleList,
    /// The registry's projects and the sources read.
    pub projects: &'a projects::ProjectsPane,
    /// The connector's last look.
    pub connector: &'a connector::ConnectorPane,
    /// Where the last frame put the list and the tabs (mouse hits).
    pub hits: &'a Hits,
    /// The first look for cycles is done (before it, an empty list is "Loading…").
    pub discovered: bool,
    /// The person turned the sandbox off: every screen says so.
    pub unsandboxed: bool,
    /// Where the control room looks for cycles, and the registry.
    pub cycles_dir: &'a Path,
    /// The registry's directory.
    pub registry: &'a Path,
    /// A test of this cycle runs now (here or in another process).
    pub running: &'a dyn Fn(&Path) -> bool,
    /// Whether a command makes sense now (the app's answer, as the footer's).
    pub available: &'a dyn Fn(Cmd) -> bool,
}

impl Draw<'_> {
    /// A path as it may be shown (secrets masked).
    pub fn shown(&self, path: &Path) -> String {
        self.redactor.redact(&path.display().to_string()).into_owned()
    }

    /// A test of the cycle at `path` runs now.
    pub fn is_running(&self, path: &Path) -> bool {
        (self.running)(path)
    }

    /// Whether `cmd` makes sense now.
    pub fn available(&self, cmd: Cmd) -> bool {
        (self.available)(cmd)
    }
}

/// What was read for the selected cycle that more than one tab draws from.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The selected cycle's journal (the Conversation tab; the Runs tab's test flags).
    pub journal: Option<(PathBuf, Result<Vec<JournalEvent>, String>)>,
    /// The files of the selected cycle's `runs/` (the Runs and Log tabs).
    pub runs: Option<(PathBuf, Vec<RunFile>)>,
}

/// The detail pane: which tab is shown, and each tab's pane.
#[derive(Debug)]
pub struct Tabs {
    /// The tab shown.
    pub tab: Tab,
    /// What the selected cycle's tabs share.
    pub loaded: Loaded,
    /// The Brief tab.
    pub brief: brief::BriefPane,
    /// The Conversation tab.
    pub conversation: conversation::ConversationPane,
    /// The Runs tab.
    pub runs: runs::RunsPane,
    /// The Log tab.
    pub log: log::LogPane,
    /// The Diff tab (design §6.7).
    pub diff: diff::DiffPane,
    /// The Project tab.
    pub project: project::ProjectPane,
}

impl Default for Tabs {
    fn default() -> Self {
        Tabs {
            tab: Tab::Brief,
            loaded: Loaded::default(),
            brief: Default::default(),
            conversation: Default::default(),
            runs: Default::default(),
            log: Default::default(),
            diff: Default::default(),
            project: Default::default(),
        }
    }
}

impl Tabs {
    /// The pane of `tab`.
    pub fn pane(&self, tab: Tab) -> &dyn Pane {
        match tab {
            Tab::Brief => &self.brief,
            Tab::Conversation => &self.conversation,
            Tab::Runs => &self.runs,
            Tab::Log => &self.log,
            Tab::Diff => &self.diff,
            Tab::Project => &self.project,
        }
    }

    /// The pane of `tab`, to act on.
    pub fn pane_mut(&mut self, tab: Tab) -> &mut dyn Pane {
        match tab {
            Tab::Brief => &mut self.brief,
            Tab::Conversation => &mut self.conversation,
            Tab::Runs => &mut self.runs,
            Tab::Log => &mut self.log,
            Tab::Diff => &mut self.diff,
            Tab::Project => &mut self.project,
        }
    }

    /// The pane shown.
    pub fn current(&self) -> &dyn Pane {
        self.pane(self.tab)
    }

    /// Shows `tab`; a tab chosen from another starts at its top.
    pub fn set_tab(&mut self, tab: Tab) {
        if self.tab != tab {
            self.tab = tab;
            self.pane_mut(tab).opened();
        }
    }

    /// Another cycle is selected: every tab forgets the last one's.
    pub fn forget(&mut self, fx: &mut Vec<Effect>) {
        self.loaded = Loaded::default();
        for &tab in Tab::ALL {
            self.pane_mut(tab).forget(fx);
        }
    }

    /// The Runs tab's rows for `entry`, newest first.
    pub fn run_rows(&self, entry: &CycleEntry, running: bool) -> Vec<RunRow> {
        self.runs.rows(entry, &self.loaded, running)
    }
}
