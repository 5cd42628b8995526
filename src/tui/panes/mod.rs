//! The control room's panes, one folder each: its state and its [`Pane`] implementation
//! (`mod.rs`: keys, loads, what it does with their answers), its loads (`load.rs`, where it has
//! any) and its drawing (`view.rs`). Panes do no I/O: they ask for loads through their
//! [`Cx`], the executor carries them out, and the answer comes back to the pane that asked, as
//! its own message type.
//!
//! The detail tabs are listed once, in `tui/registry.rs`; `tabs.rs` generates from that list
//! the struct holding them and the dispatch to the one concerned, so the app never names a
//! tab. What tabs share sits here: the selection ([`Selection`]), the caches of the selected
//! cycle ([`Loaded`]), the run rows (`run_rows.rs`), the search line (`search.rs`). The cycle
//! list, the Projects and Connector screens and the help overlay have folders too, but they
//! are not tabs: the app owns what they change (the selection, the screen, the popups).

pub mod brief;
pub mod connector;
pub mod conversation;
pub mod diff;
pub mod files;
pub mod help;
pub mod list;
pub mod log;
pub mod project;
pub mod projects;
pub mod review;
pub mod run_rows;
pub mod runs;
pub mod screens;
pub mod search;
pub mod tabs;
pub mod text;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use chrono::{DateTime, Utc};

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::cycle::Ctx;
use crate::cycle::files::Event as JournalEvent;
use crate::redact::Redactor;
use crate::tui::keymap::{Binding, Cmd, Context, Keymap};
use crate::tui::model::{CycleEntry, ProjectRecord, Roots, RunFile, Sources};
use crate::tui::pager::log::{LogEvent, LogRequest};
use crate::tui::theme::Theme;
use crate::tui::widgets::Hits;

pub use self::run_rows::{RunReport, RunRow};
pub use self::screens::{ScreenLoad, ScreenMsg, Screens};
pub use self::search::{SearchLine, SearchState};
pub use self::tabs::{PaneLoad, PaneMsg, Tabs};

/// Which half of the cycles screen has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The cycle list.
    List,
    /// The shown tab.
    Detail,
}

/// What a tab sees of the rest of the control room when it acts: the selected cycle and its
/// runs as the tabs list them.
pub struct Selection<'a> {
    /// The selected cycle, if any.
    pub entry: Option<&'a CycleEntry>,
    /// A test of it runs now (here or in another process).
    pub running: bool,
    /// Its runs, newest first.
    pub rows: &'a [RunRow],
    /// The repositories whose sources were read already (the Project tab asks once).
    pub sources: &'a HashMap<String, Sources>,
}

/// A pane's wish that another pane acts, by purpose rather than by name (gitui's internal
/// events): the tabs offer it to every pane, and the one that takes it may ask to be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Open the selected run's log (the Runs tab's Enter).
    OpenRunLog,
    /// Another run was selected: what showed the last one's is stale.
    RunChosen,
    /// Show the change run `iteration` tested (the Runs tab's `d`).
    DiffOf(Option<u32>),
}

/// What a tab asks of the app after a command or a message: what only the app can do,
/// because it spans tabs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The command is not this tab's: the app's own keys get it.
    NotMine,
    /// Done here.
    Done,
    /// Another pane should act (see [`Request`]).
    Ask(Request),
    /// Show this pane (it took a request, or a live run's log it follows).
    ShowMe,
    /// The command cannot be done here, and why (an error in the status line).
    Refused(String),
    /// Something to tell the person (the status line).
    Note(String),
    /// Open this page in the browser.
    OpenUrl(String),
    /// What this tab shows changed in a way that needs loading again (the Diff tab's "since
    /// the last run").
    Reload,
    /// A whole-PR diff of this cycle exists now: its row may show the change's size.
    DiffMade(PathBuf),
    /// A use case changed the cycle at this path (a person's action from a tab): say this, and
    /// read its state and journal again at once.
    Saved(PathBuf, String),
}

/// A read several tabs share the result of, kept in [`Loaded`] by the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedLoad {
    /// An earlier run's report, for its `integrity` (the state holds only the last run's).
    Report {
        /// The cycle's state file.
        path: PathBuf,
        /// The run.
        iteration: u32,
        /// Its report file.
        report: PathBuf,
    },
    /// The sources manifest of a repository, `owner/repo`.
    Sources(String),
    /// The Project registry's records.
    Registry,
}

/// What was read of the Project registry: its records (the Projects screen, the Project tab)
/// and the sources manifests read per repository (the Project tab).
#[derive(Debug, Default)]
pub struct RegistryRead {
    /// The registry's records, valid or not.
    pub records: Vec<ProjectRecord>,
    /// The registry has been read at least once (until then "loading", not "empty").
    pub read: bool,
    /// `owner/repo` → its sources manifest.
    pub sources: HashMap<String, Sources>,
}

/// The message or load type of a pane that has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Nothing {}

/// Blocking work whose outcome is `M`.
pub type Job<M> = Box<dyn FnOnce() -> M + Send>;

/// The work a pane's load takes; where it runs is the executor's choice, and its outcome goes
/// back to that pane only.
pub enum PaneWork<M> {
    /// A quick file read, in order with the others.
    Load(Job<M>),
    /// A long scan or a use case.
    Blocking(Job<M>),
    /// Waits on the network or a process.
    Task(Pin<Box<dyn Future<Output = M> + Send>>),
    /// A request for the log reader, which keeps the open file between requests; its answers
    /// come back through [`Pane::from_reader`].
    Reader(LogRequest),
}

impl<M: Send + 'static> PaneWork<M> {
    /// The same work, its outcome wrapped (into the message of the pane that asked).
    pub fn map<N: Send + 'static>(self, wrap: fn(M) -> N) -> PaneWork<N> {
        match self {
            PaneWork::Load(job) => PaneWork::Load(Box::new(move || wrap(job()))),
            PaneWork::Blocking(job) => PaneWork::Blocking(Box::new(move || wrap(job()))),
            PaneWork::Task(task) => PaneWork::Task(Box::pin(async move { wrap(task.await) })),
            PaneWork::Reader(request) => PaneWork::Reader(request),
        }
    }
}

/// Where a movement command takes the selection `sel` of a list of `count` rows; `None` for a
/// command that is not a movement.
pub fn moved(sel: usize, cmd: Cmd, count: usize) -> Option<usize> {
    let last = count.saturating_sub(1);
    Some(match cmd {
        Cmd::Up => sel.saturating_sub(1),
        Cmd::Down => (sel + 1).min(last),
        Cmd::Top | Cmd::PageUp => 0,
        Cmd::Bottom | Cmd::PageDown => last,
        _ => return None,
    })
}

/// What a pane acts with: the selection, the caches the tabs share, and where its loads go.
pub struct Cx<'a, L> {
    /// The selected cycle and its runs.
    pub sel: &'a Selection<'a>,
    /// What was read for the selected cycle that several tabs use.
    pub loaded: &'a mut Loaded,
    /// This pane's own loads, carried out by the executor and answered to it.
    pub(crate) own: Vec<L>,
    /// Reads the tabs share.
    pub(crate) shared: Vec<SharedLoad>,
    /// A question for the person, and the load a yes carries out.
    pub(crate) confirm: Option<(String, String, L)>,
    /// A line the person is asked to write, and the load it completes.
    pub(crate) text: Option<(String, String, L)>,
}

impl<'a, L> Cx<'a, L> {
    /// A context for one call.
    pub fn new(sel: &'a Selection<'a>, loaded: &'a mut Loaded) -> Self {
        Cx { sel, loaded, own: Vec::new(), shared: Vec::new(), confirm: None, text: None }
    }

    /// Asks the person for one line (`title`, `prompt` above it); what they submit, not empty,
    /// completes `load` through [`Pane::with_text`] and is carried out.
    pub fn ask_text(&mut self, title: String, prompt: String, load: L) {
        self.text = Some((title, prompt, load));
    }

    /// Asks the person `title` (explained by `body`) first; a yes carries out `load` (a
    /// person's action that must not happen on one stray key).
    pub fn confirm(&mut self, title: String, body: String, load: L) {
        self.confirm = Some((title, body, load));
    }

    /// Asks for one of this pane's loads.
    pub fn load(&mut self, load: L) {
        self.own.push(load);
    }

    /// Asks for a read the tabs share.
    pub fn read(&mut self, load: SharedLoad) {
        self.shared.push(load);
    }

    /// The run the Runs tab selected.
    pub fn selected_run(&self) -> Option<&'a RunRow> {
        self.sel.rows.get(self.loaded.run)
    }
}

/// What changed under the runs of the selected cycle (the app lists `runs/` again).
#[derive(Debug, Clone, Copy)]
pub struct RunsListed {
    /// A log appeared that was not there before.
    pub fresh: bool,
    /// A test of the cycle runs now.
    pub running: bool,
    /// This pane is the one shown.
    pub shown: bool,
    /// The tab shown is one that shows runs ([`Pane::follows_runs`]).
    pub runs_shown: bool,
}

/// A detail tab: its state, keys, loads and drawing. The app never names a tab; the registry
/// (`tui/registry.rs`) lists them and `tabs.rs` dispatches to the one concerned.
pub trait Pane {
    /// What its loads answer.
    type Msg: std::fmt::Debug + Clone + Send + 'static;
    /// What it asks to be read or made.
    type Load: std::fmt::Debug + Clone + PartialEq + Send + 'static;

    /// Its keyboard contexts while it has the keys, most specific first.
    const CONTEXTS: &'static [Context];

    /// Its own rows of the keymap (for its own context), if it has keys of its own.
    const KEYS: &'static [Binding] = &[];

    /// Its keyboard contexts while it has the keys.
    fn contexts(&self) -> &'static [Context] {
        Self::CONTEXTS
    }

    /// A command its contexts resolved (and the movement keys, the mouse wheel).
    fn command(&mut self, cmd: Cmd, cx: &mut Cx<Self::Load>) -> Reply;

    /// Whether one of its commands makes sense now (the footer hides the others); `None` for a
    /// command it leaves to the app.
    fn available(&self, _cmd: Cmd, _sel: &Selection, _loaded: &Loaded) -> Option<bool> {
        None
    }

    /// It became visible (its tab chosen, or the detail focused): ask for what it needs.
    fn shown(&mut self, _cx: &mut Cx<Self::Load>) {}

    /// `load`, asked for with [`Cx::ask_text`], completed with the line the person wrote.
    fn with_text(load: Self::Load, _text: String) -> Self::Load {
        load
    }

    /// Its tab was chosen from another: start at the top.
    fn opened(&mut self) {}

    /// Another cycle was selected: forget what it held of the last one.
    fn forget(&mut self, _cx: &mut Cx<Self::Load>) {}

    /// One of its loads answered.
    fn receive(&mut self, _msg: Self::Msg, _cx: &mut Cx<Self::Load>) -> Reply {
        Reply::Done
    }

    /// Another pane's [`Request`]: `NotMine` unless it takes it.
    fn request(&mut self, _request: &Request, _cx: &mut Cx<Self::Load>) -> Reply {
        Reply::NotMine
    }

    /// The terminal's size changed.
    fn resized(&mut self, _cx: &mut Cx<Self::Load>) {}

    /// Files of runs changed on disk (logs written, created, removed).
    fn run_files_changed(&mut self, _paths: &[PathBuf], _cx: &mut Cx<Self::Load>) {}

    /// The selected cycle's `runs/` was listed again.
    fn runs_listed(&mut self, _what: RunsListed, _cx: &mut Cx<Self::Load>) -> Reply {
        Reply::Done
    }

    /// The selected cycle's state was read again, and this pane is shown.
    fn cycle_reloaded(&mut self, _cx: &mut Cx<Self::Load>) {}

    /// A cache in [`Loaded`] changed (a report read).
    fn loaded_changed(&mut self, _cx: &mut Cx<Self::Load>) {}

    /// It shows runs, so a live run's log may take its place.
    fn follows_runs(&self) -> bool {
        false
    }

    /// It waits for something (the spinner turns).
    fn busy(&self) -> bool {
        false
    }

    /// Its search line, when it has one.
    fn search(&self) -> Option<&SearchLine> {
        None
    }

    /// Its search line is open, and takes every key and paste.
    fn editing(&self) -> bool {
        self.search().is_some_and(|s| s.editing)
    }

    /// A key while its search line is open.
    fn input(&mut self, _cmd: Cmd, _cx: &mut Cx<Self::Load>) {}

    /// Text pasted while its search line is open.
    fn paste(&mut self, _text: &str) {}

    /// Draws it for the selected cycle.
    fn render(&self, draw: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect);

    /// The work one of its loads takes.
    fn work(load: Self::Load, ctx: &Ctx) -> PaneWork<Self::Msg>;

    /// Its message for an answer of the log reader, if it reads logs.
    fn from_reader(_answer: &LogEvent) -> Option<Self::Msg> {
        None
    }
}

/// What a screen acts with: the registry read, and where its loads go.
pub struct ScreenCx<'a, L> {
    /// What was read of the Project registry.
    pub registry: &'a RegistryRead,
    /// This screen's own loads.
    pub(crate) own: Vec<L>,
    /// Reads the panes share.
    pub(crate) shared: Vec<SharedLoad>,
    /// A question for the person, and the load a yes carries out.
    pub(crate) confirm: Option<(String, String, L)>,
}

impl<'a, L> ScreenCx<'a, L> {
    /// A context for one call.
    pub fn new(registry: &'a RegistryRead) -> Self {
        ScreenCx { registry, own: Vec::new(), shared: Vec::new(), confirm: None }
    }

    /// Asks for one of this screen's loads.
    pub fn load(&mut self, load: L) {
        self.own.push(load);
    }

    /// Asks for a read the panes share.
    pub fn read(&mut self, load: SharedLoad) {
        self.shared.push(load);
    }

    /// Asks the person `title` (explained by `body`) first; a yes carries out `load`.
    pub fn confirm(&mut self, title: String, body: String, load: L) {
        self.confirm = Some((title, body, load));
    }
}

/// A screen besides the cycles: its state, keys, loads and drawing, as a tab's (see [`Pane`]),
/// but over the whole body and without a selected cycle. The registry lists them; `screens.rs`
/// dispatches to the one concerned.
pub trait ScreenPane {
    /// What its loads answer.
    type Msg: std::fmt::Debug + Clone + Send + 'static;
    /// What it asks to be read or done.
    type Load: std::fmt::Debug + Clone + PartialEq + Send + 'static;

    /// Its keyboard contexts while shown, most specific first.
    const CONTEXTS: &'static [Context];

    /// Its own rows of the keymap.
    const KEYS: &'static [Binding] = &[];

    /// A command while it is shown; `NotMine` leaves it to the app (quit, help, leaving).
    fn command(&mut self, cmd: Cmd, cx: &mut ScreenCx<Self::Load>) -> Reply;

    /// Whether one of its commands makes sense now; `None` for one it leaves to the app.
    fn available(&self, _cmd: Cmd) -> Option<bool> {
        None
    }

    /// As [`ScreenPane::available`], for a screen that looks at the registry read.
    fn available_with(&self, cmd: Cmd, _registry: &RegistryRead) -> Option<bool> {
        self.available(cmd)
    }

    /// The control room starts.
    fn started(&mut self, _cx: &mut ScreenCx<Self::Load>) {}

    /// It is shown.
    fn shown(&mut self, _cx: &mut ScreenCx<Self::Load>) {}

    /// The directory whose changes concern it, if any.
    fn watched(_roots: &Roots) -> Option<PathBuf> {
        None
    }

    /// Something changed in its directory.
    fn files_changed(&mut self, _cx: &mut ScreenCx<Self::Load>) {}

    /// The registry was read again.
    fn registry_read(&mut self, _registry: &RegistryRead) {}

    /// One of its loads answered.
    fn receive(&mut self, _msg: Self::Msg, _cx: &mut ScreenCx<Self::Load>) -> Reply {
        Reply::Done
    }

    /// What the header shows of it from any screen, `(compact, full)`, if anything.
    fn badge(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Draws it.
    fn render(&self, draw: &Draw, frame: &mut Frame, area: Rect);

    /// The work one of its loads takes.
    fn work(load: Self::Load, ctx: &Ctx) -> PaneWork<Self::Msg>;
}

/// What a pane draws with besides its own state, made from the app by the screen's layout
/// once a frame: the look, the clock, the selection and what the app knows of it. Panes never
/// see the app itself.
pub struct Draw<'a> {
    /// The colours.
    pub theme: &'a Theme,
    /// The keymap in force, for text that names a key.
    pub keys: &'a Keymap,
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
    /// What was read of the Project registry.
    pub registry: &'a RegistryRead,
    /// Where the last frame put the list and the tabs (mouse hits).
    pub hits: &'a Hits,
    /// The first look for cycles is done (before it, an empty list is "Loading…").
    pub discovered: bool,
    /// The person turned the sandbox off: every screen says so.
    pub unsandboxed: bool,
    /// Where the control room looks for cycles, and the registry.
    pub cycles_dir: &'a Path,
    /// The registry's directory.
    pub registry_dir: &'a Path,
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

/// What was read for the selected cycle that more than one tab uses, and the run selected.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The selected cycle's journal (the Conversation tab; the run rows' test flags).
    pub journal: Option<(PathBuf, Result<Vec<JournalEvent>, String>)>,
    /// The files of the selected cycle's `runs/` (the run rows).
    pub runs: Option<(PathBuf, Vec<RunFile>)>,
    /// The run selected (an index into the run rows): the Runs tab moves it, the Log tab opens
    /// its log.
    pub run: usize,
    /// Earlier runs' `integrity`, read from their report files when selected (the state holds
    /// only the last run's report).
    pub reports: BTreeMap<u32, RunReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selection_moves_within_the_rows() {
        assert_eq!(moved(0, Cmd::Up, 3), Some(0));
        assert_eq!(moved(0, Cmd::Down, 3), Some(1));
        assert_eq!(moved(2, Cmd::Down, 3), Some(2));
        assert_eq!(moved(1, Cmd::Bottom, 3), Some(2));
        assert_eq!(moved(2, Cmd::PageUp, 3), Some(0));
        assert_eq!(moved(0, Cmd::Down, 0), Some(0), "no rows, no move");
        assert_eq!(moved(1, Cmd::Open, 3), None, "not a movement");
    }
}
