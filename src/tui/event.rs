//! What goes into the app ([`Event`]) and what comes out ([`Effect`]), the runtime's and the
//! executor's whole vocabulary with it.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use crossterm::event::{KeyEvent, MouseEvent};

use crate::cycle::files::Event as JournalEvent;
use crate::domain::integrity::Integrity;
use crate::tui::keymap::Cmd;
use crate::tui::model::{CycleEntry, ProjectRecord, RunFile, Sources};
use crate::tui::panes::{PaneLoad, PaneMsg, ScreenLoad, ScreenMsg};
use crate::tui::watch::WatchDir;

/// Everything that can happen to the app: raw input (keys, mouse, paste, resize), the clock,
/// and what background work reports (files changed or loaded, log windows, finished use
/// cases). Its meaning is decided in [`crate::tui::App::update`], keys through the keymap's [`Cmd`]s.
#[derive(Debug, Clone)]
pub enum Event {
    /// A key pressed or repeated (the runtime drops releases); the keymap gives its command.
    Key(KeyEvent),
    /// A mouse event; ignored unless the mouse is on (`--mouse`, config `tui.mouse`).
    Mouse(MouseEvent),
    /// Text pasted: it goes to the open input line, control characters removed.
    Paste(String),
    /// The terminal's size changed: the diff window (and a followed log's) is read again for
    /// the new height.
    Resize,
    /// A command given directly (tests, benches), as if its key was pressed.
    Cmd(Cmd),
    /// Advances the spinner (sent only while something runs).
    Tick,
    /// The wall clock, for ages.
    Clock(DateTime<Utc>),
    /// Debounced paths that changed on disk.
    FilesChanged(Vec<PathBuf>),
    /// Every state file there is now (`Effect::Discover`): new ones are loaded, missing rows
    /// dropped.
    Discovered(Vec<PathBuf>),
    /// State files read (`Effect::LoadCycles`).
    CyclesLoaded {
        /// The entries read, each parsed or with its error.
        loaded: Vec<CycleEntry>,
        /// Paths whose file no longer exists: their rows go.
        gone: Vec<PathBuf>,
    },
    /// A cycle's journal read (`Effect::LoadJournal`); kept only while that cycle is selected.
    JournalLoaded {
        /// The cycle's state file.
        path: PathBuf,
        /// Its events, redacted, or why they could not be read.
        result: Result<Vec<JournalEvent>, String>,
    },
    /// The log files of a cycle's `runs/` (`Effect::ListRuns`).
    RunsListed {
        /// The cycle's state file.
        path: PathBuf,
        /// Its run logs.
        runs: Vec<RunFile>,
    },
    /// The registry's records (`Effect::LoadRegistry`), valid or not.
    RegistryLoaded(Vec<ProjectRecord>),
    /// An answer to a screen's load (`Effect::Screen`), for that screen only.
    Screen(ScreenMsg),
    /// A repository's sources manifest (`Effect::LoadSources`), for the Project tab.
    SourcesLoaded {
        /// The repository, `owner/repo`.
        repository: String,
        /// Its manifest, as far as it could be read.
        sources: Sources,
    },
    /// An answer to a pane's load (`Effect::Pane`), for that pane only.
    Pane(PaneMsg),
    /// An earlier run's report was read for the Runs tab: its `integrity` (design §5.2), if
    /// it has one.
    RunReportLoaded {
        /// The cycle's state file.
        path: PathBuf,
        /// The run whose report it is.
        iteration: u32,
        /// Its `integrity` (`None` for a report older than that check), or why the report could not
        /// be read.
        result: Result<Option<Box<Integrity>>, String>,
    },
    /// A `READY_TO_MERGE` cycle's whole-PR diff was made in the background: its size is on
    /// disk now (or it could not be made, and the row goes without).
    DiffSized {
        /// The cycle's state file.
        path: PathBuf,
        /// `Err` says why the diff could not be made.
        result: Result<(), String>,
    },
    /// A use case finished with its message for the person.
    UseCaseDone {
        /// The action.
        what: UseCase,
        /// The cycle's state file.
        path: PathBuf,
        /// The message for the person, or why the use case failed (redacted).
        result: Result<String, String>,
    },
    /// A rerun started here ended (`Effect::Rerun`), passed, failed or cancelled.
    RunFinished {
        /// The cycle's state file.
        path: PathBuf,
        /// A one-line summary of the run, or why it could not run or was cancelled (redacted).
        result: Result<String, String>,
    },
    /// `$EDITOR` returned on a brief being confirmed (`Effect::EditBrief`).
    EditorFinished {
        /// The cycle's state file.
        path: PathBuf,
        /// The file as the person left it, or why editing failed.
        result: Result<String, String>,
    },
    /// `$EDITOR` returned on a message for WebGPT (the whole file, comments and all).
    MessageEdited {
        /// The cycle's state file.
        path: PathBuf,
        /// The file as the person left it, or why editing failed.
        result: Result<String, String>,
    },
    /// The outcome of `Effect::Copy`: how many characters were copied, or why nothing was.
    Copied(Result<usize, String>),
    /// The browser was asked to open a page (`Effect::OpenUrl`).
    Opened {
        /// The page.
        url: String,
        /// `Err` says why it could not be opened (the person is shown the URL instead).
        result: Result<(), String>,
    },
    /// What the directory watcher covers now (the footer shows it and its problems).
    Watching {
        /// How many directories are watched.
        dirs: usize,
        /// What could not be watched, and why.
        problems: Vec<String>,
    },
    /// SIGTERM/SIGHUP: leave now, cancelling runs.
    Terminate,
}

/// The human actions that run a use case (journaled as `human`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseCase {
    /// Confirm a proposed brief, which issues the prompt (`forgeloop confirm`).
    Confirm,
    /// End the cycle for good (`forgeloop abort`).
    Abort,
    /// Stopping a run another process holds.
    Cancel,
    /// Return a `BLOCKED_*` cycle to the status it was blocked from (`forgeloop unblock`).
    Unblock,
    /// Raise the iteration cap (`forgeloop extend`).
    Extend,
    /// Allow, in the config, the hosts a `NEEDS_NETWORK` run was refused.
    AllowHosts,
    /// Drop the pending message (`forgeloop outbox --drop`).
    DropMessage,
    /// A person's message for WebGPT (`forgeloop say`).
    Say,
    /// A person approves a `NEEDS_REVIEW` pass (`forgeloop approve`).
    Approve,
}

impl UseCase {
    /// The word in "… failed: reason".
    pub fn as_str(self) -> &'static str {
        match self {
            UseCase::Confirm => "confirm",
            UseCase::Abort => "abort",
            UseCase::Cancel => "cancel",
            UseCase::Unblock => "unblock",
            UseCase::Extend => "extend",
            UseCase::AllowHosts => "allow hosts",
            UseCase::DropMessage => "drop message",
            UseCase::Say => "message",
            UseCase::Approve => "approve",
        }
    }
}

/// What the runtime must do; results come back as [`Event`]s.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Leave the control room (the app has set `quit`; reruns were cancelled first).
    Quit,
    /// Give the terminal back and stop the process (Ctrl-Z) until it is resumed.
    Suspend,
    /// Look for every state file to show (`Event::Discovered`).
    Discover,
    /// Read these state files (`Event::CyclesLoaded`).
    LoadCycles(Vec<PathBuf>),
    /// Read this cycle's journal (`Event::JournalLoaded`).
    LoadJournal(PathBuf),
    /// List this cycle's `runs/` (`Event::RunsListed`).
    ListRuns(PathBuf),
    /// Read the registry's records (`Event::RegistryLoaded`).
    LoadRegistry,
    /// A screen's own load, answered with `Event::Screen` to that screen.
    Screen(ScreenLoad),
    /// Read the sources manifest of this repository, `owner/repo` (`Event::SourcesLoaded`).
    LoadSources(String),
    /// Watch exactly these directories from now on (`Event::Watching`).
    Watch(Vec<WatchDir>),
    /// A pane's own load, answered with `Event::Pane` to that pane.
    Pane(PaneLoad),
    /// Read the `integrity` of run `iteration` from its report file (the Runs tab, for a run
    /// before the last: the state holds only the last run's report).
    LoadRunReport {
        /// The cycle's state file.
        path: PathBuf,
        /// The run.
        iteration: u32,
        /// Its report file.
        report: PathBuf,
    },
    /// Make the whole-PR diff of a `READY_TO_MERGE` cycle's last run so its row can show the
    /// size of the change.
    SizeDiff {
        /// The cycle's state file.
        path: PathBuf,
        /// Its last run, at whose head the diff is taken.
        iteration: u32,
    },
    /// Confirm the brief (`cycle::actions::confirm`, as `human` via `tui`).
    Confirm {
        /// The cycle's state file.
        path: PathBuf,
        /// The person's wording, `(webgpt_question, intent_brief)`; `None` confirms it as proposed.
        edited: Option<(String, String)>,
    },
    /// End the cycle for good (`cycle::stop::abort`, stopping a run another process holds first).
    Abort {
        /// The cycle's state file.
        path: PathBuf,
        /// Why, in the person's words (journaled).
        reason: String,
    },
    /// Return a `BLOCKED_*` cycle to where it was (`cycle::actions::unblock`).
    Unblock {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Add the hosts its last run was refused to the config (`cycle::allow_network`, as `human`).
    AllowHosts {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Drop the cycle's pending message (`cycle::outbox::drop_pending`, as `human`).
    DropMessage {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Raise the cycle's iteration cap (`cycle::actions::extend`).
    Extend {
        /// The cycle's state file.
        path: PathBuf,
        /// How many more iterations.
        by: u32,
    },
    /// Approve a `NEEDS_REVIEW` pass (`cycle::actions::approve`, as `human` via `tui`).
    Approve {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Test the cycle's PR again at its current head (`cycle::pr_test::rerun`); `CancelRun`
    /// stops it.
    Rerun {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Stop a rerun this control room started (its cancel switch); a no-op for any other.
    CancelRun {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Ring the bell and send a desktop notification (design §6.6).
    Notify(String),
    /// Ask the process holding a run of this cycle to stop it (design §6.6).
    StopRun {
        /// The cycle's state file.
        path: PathBuf,
    },
    /// Open `$EDITOR` on a brief being confirmed (`Event::EditorFinished`).
    EditBrief {
        /// The cycle's state file.
        path: PathBuf,
        /// What the file starts with: the question and the brief, or the last draft.
        text: String,
    },
    /// Open `$EDITOR` on a message for WebGPT (the template, or the last draft).
    EditMessage {
        /// The cycle's state file.
        path: PathBuf,
        /// What the file starts with.
        text: String,
    },
    /// Put the person's message in the cycle's outbox (`cycle::say`, as `human`).
    Say {
        /// The cycle's state file.
        path: PathBuf,
        /// The words to send (the edited file without its comment lines, trimmed).
        text: String,
    },
    /// Put this text on the clipboard through the terminal (OSC 52), redacted first.
    Copy(String),
    /// Open this page in the browser (http and https only).
    OpenUrl(String),
}
