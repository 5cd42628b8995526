//! What goes into the app ([`Event`]) and what comes out ([`Effect`]), the runtime's and the
//! executor's whole vocabulary with it.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use crossterm::event::{KeyEvent, MouseEvent};

use crate::cycle::files::Event as JournalEvent;
use crate::domain::integrity::Integrity;
use crate::tui::keymap::Cmd;
use crate::tui::model::{CycleEntry, ProjectRecord, RunFile, Sources};
use crate::tui::pager::diff::DiffEvent;
use crate::tui::pager::log::{LogEvent, LogRequest};
use crate::tui::watch::WatchDir;

/// Everything that can happen to the app: raw input (keys, mouse, paste, resize), the clock,
/// and what background work reports (files changed or loaded, log windows, finished use
/// cases). Its meaning is decided in [`crate::tui::App::update`], keys through the keymap's [`Cmd`]s.
#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize,
    /// A command given directly (tests, benches), as if its key was pressed.
    Cmd(Cmd),
    /// Advances the spinner (sent only while something runs).
    Tick,
    /// The wall clock, for ages.
    Clock(DateTime<Utc>),
    /// Debounced paths that changed on disk.
    FilesChanged(Vec<PathBuf>),
    Discovered(Vec<PathBuf>),
    CyclesLoaded {
        loaded: Vec<CycleEntry>,
        gone: Vec<PathBuf>,
    },
    JournalLoaded {
        path: PathBuf,
        result: Result<Vec<JournalEvent>, String>,
    },
    RunsListed {
        path: PathBuf,
        runs: Vec<RunFile>,
    },
    RegistryLoaded(Vec<ProjectRecord>),
    SourcesLoaded {
        repository: String,
        sources: Sources,
    },
    /// What the log reader found (a window, a match, an error).
    Log(LogEvent),
    /// What the diff reader found (design §6.7).
    Diff(DiffEvent),
    /// An earlier run's report was read for the Runs tab: its `integrity` (design §5.2), if
    /// it has one.
    RunReportLoaded {
        path: PathBuf,
        iteration: u32,
        result: Result<Option<Integrity>, String>,
    },
    /// A `READY_TO_MERGE` cycle's whole-PR diff was made in the background: its size is on
    /// disk now (or it could not be made, and the row goes without).
    DiffSized {
        path: PathBuf,
        result: Result<(), String>,
    },
    /// A use case finished with its message for the person.
    UseCaseDone {
        what: UseCase,
        path: PathBuf,
        result: Result<String, String>,
    },
    RunFinished {
        path: PathBuf,
        result: Result<String, String>,
    },
    EditorFinished {
        path: PathBuf,
        result: Result<String, String>,
    },
    /// `$EDITOR` returned on a message for WebGPT (the whole file, comments and all).
    MessageEdited {
        path: PathBuf,
        result: Result<String, String>,
    },
    Copied(Result<usize, String>),
    Opened {
        url: String,
        result: Result<(), String>,
    },
    Watching {
        dirs: usize,
        problems: Vec<String>,
    },
    /// SIGTERM/SIGHUP: leave now, cancelling runs.
    Terminate,
}

/// The human actions that run a use case (journaled as `human`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseCase {
    Confirm,
    Abort,
    /// Stopping a run another process holds.
    Cancel,
    Unblock,
    Extend,
    AllowHosts,
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
            UseCase::Say => "message",
            UseCase::Approve => "approve",
        }
    }
}

/// What the runtime must do; results come back as [`Event`]s.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    Suspend,
    Discover,
    LoadCycles(Vec<PathBuf>),
    LoadJournal(PathBuf),
    ListRuns(PathBuf),
    LoadRegistry,
    LoadSources(String),
    Watch(Vec<WatchDir>),
    Log(LogRequest),
    /// Open the cached diff at `cache` (design §6.7): a file read, no network.
    OpenDiff {
        generation: u64,
        cache: PathBuf,
    },
    /// Make the diff of run `iteration` of the cycle at `path` (GitHub, and the mirror for
    /// since the last run; cached by `cycle::diff::of_cycle`), then open it.
    MakeDiff {
        generation: u64,
        path: PathBuf,
        iteration: u32,
        since_last: bool,
    },
    /// Read `count` lines of the diff at `path` from line `from`, starting at the checkpoint
    /// `(line, byte offset)` at or before it.
    DiffWindow {
        generation: u64,
        path: PathBuf,
        checkpoint: (usize, u64),
        from: usize,
        count: usize,
    },
    DiffSearch {
        generation: u64,
        path: PathBuf,
        checkpoints: Arc<[u64]>,
        query: String,
        from: usize,
        forward: bool,
    },
    /// Read the `integrity` of run `iteration` from its report file (the Runs tab, for a run
    /// before the last: the state holds only the last run's report).
    LoadRunReport {
        path: PathBuf,
        iteration: u32,
        report: PathBuf,
    },
    /// Make the whole-PR diff of a `READY_TO_MERGE` cycle's last run so its row can show the
    /// size of the change.
    SizeDiff {
        path: PathBuf,
        iteration: u32,
    },
    Confirm {
        path: PathBuf,
        edited: Option<(String, String)>,
    },
    Abort {
        path: PathBuf,
        reason: String,
    },
    Unblock {
        path: PathBuf,
    },
    AllowHosts {
        path: PathBuf,
    },
    Extend {
        path: PathBuf,
        by: u32,
    },
    /// Approve a `NEEDS_REVIEW` pass (`cycle::actions::approve`, as `human` via `tui`).
    Approve {
        path: PathBuf,
    },
    Rerun {
        path: PathBuf,
    },
    CancelRun {
        path: PathBuf,
    },
    /// Ring the bell and send a desktop notification (design §6.6).
    Notify(String),
    /// Ask the process holding a run of this cycle to stop it (design §6.6).
    StopRun {
        path: PathBuf,
    },
    EditBrief {
        path: PathBuf,
        text: String,
    },
    /// Open `$EDITOR` on a message for WebGPT (the template, or the last draft).
    EditMessage {
        path: PathBuf,
        text: String,
    },
    /// Put the person's message in the cycle's outbox (`cycle::say`, as `human`).
    Say {
        path: PathBuf,
        text: String,
    },
    Copy(String),
    OpenUrl(String),
}
