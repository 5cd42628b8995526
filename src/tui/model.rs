//! What the control room knows about the files it watches: one entry per cycle, the
//! registry's records, a cycle's run logs. Built by `load` on a background thread, already
//! redacted, so rendering never touches the disk or the redactor's inputs twice.

use std::path::PathBuf;

use crate::domain::state::{Actor, CycleState};
use crate::domain::status::Status;

/// One state file: parsed, or the reason it could not be (never a crash).
#[derive(Debug, Clone, PartialEq)]
pub struct CycleEntry {
    /// The state file: the cycle's identity throughout the control room.
    pub path: PathBuf,
    /// Its parsed state, redacted; `None` when the file could not be read (see `error`).
    pub state: Option<CycleState>,
    /// The cycle as `forgeloop list` and MCP show it (`cycle::list::CycleView`): the row's
    /// status, repository or PR, iteration and tests flag come from it.
    pub view: Option<crate::cycle::list::CycleView>,
    /// Why the state file could not be read or parsed (redacted): the row shows it.
    pub error: Option<String>,
    /// The journal's last event, for the list's "last event" column.
    pub last_event: Option<EventLine>,
    /// The file's modification time: the age of a state that records none (reference tool).
    pub modified_at: Option<String>,
    /// A run in progress, by whichever process (design §6.6).
    pub live: Option<crate::cycle::live::LiveRun>,
    /// A `READY_TO_MERGE` cycle's change (`3 files +40 −2`), when its whole-PR diff at the
    /// last tested head was made (design §6.7).
    pub diff_size: Option<crate::domain::diff::DiffSize>,
}

impl CycleEntry {
    /// Its status; `None` when the state file could not be read.
    pub fn status(&self) -> Option<Status> {
        self.state.as_ref().map(|s| s.status)
    }

    /// Lower sorts first: the status's own rank, with an unreadable file after the blocked
    /// cycles and before those ready to merge (a person should look at it).
    pub fn attention_rank(&self) -> u8 {
        // Right after briefs to confirm: a run refused network waits for the person too.
        if self.needs_network() {
            return 1;
        }
        self.status().map_or(5, |s| s.attention_rank() * 2)
    }

    /// It waits for a person: its status asks for one, its file is unreadable, or its last run
    /// was refused network.
    pub fn needs_human(&self) -> bool {
        self.state.as_ref().is_none_or(|s| s.status.needs_human()) || self.needs_network()
    }

    /// Its last run was refused network the person has not allowed yet (design §5.6): it
    /// waits for them whatever its status says.
    pub fn needs_network(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.needs_network.as_ref().is_some_and(|n| n.allowed_at.is_none()))
    }

    /// The name people use for a cycle: its task space, else the file stem.
    pub fn name(&self) -> String {
        let stem = self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        match &self.state {
            Some(state) if !state.task_space.is_empty() => state
                .task_space
                .strip_prefix(crate::domain::task_space::TASK_SPACE_PREFIX)
                .unwrap_or(&state.task_space)
                .to_owned(),
            _ => stem,
        }
    }

    /// When it last changed: the state's `updated_at`, else its `created_at`, else the file's
    /// modification time.
    pub fn updated_at(&self) -> Option<&str> {
        let state = self.state.as_ref()?;
        state.updated_at.as_deref().or(state.created_at.as_deref()).or(self.modified_at.as_deref())
    }
}

/// A journal event reduced to one line.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLine {
    /// When it was journaled (RFC 3339).
    pub at: String,
    /// The event's kind as journaled (`run_finished`, …).
    pub kind: String,
    /// Who caused it.
    pub actor: Actor,
    /// What it says, in one line of at most 200 characters (`load::summarize`), redacted.
    pub summary: String,
}

/// A registry record `<registry>/<owner>/<repo>.json`, valid or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRecord {
    /// The record's file (the registry's directory when the registry itself cannot be listed).
    pub path: PathBuf,
    /// `owner/repo` from the file's location (lowercase).
    pub key: String,
    /// The `repository` the record names, when it could be read.
    pub repository: Option<String>,
    /// The address of the ChatGPT Project the repository is linked to.
    pub project_url: Option<String>,
    /// That Project's name.
    pub project_name: Option<String>,
    /// Why the record could not be read (redacted); the other fields are `None` then.
    pub error: Option<String>,
}

/// One item of `<registry>/<owner>/<repo>/sources.json`, read leniently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceItem {
    /// The local file's path or the web reference's address.
    pub what: String,
    /// Why the source is in the Project, in the coordinator's words.
    pub purpose: String,
    /// Where it stands (`pending`, `verified`, `failed`, `superseded`).
    pub status: String,
    /// What the browser showed the upload as, else the item's id.
    pub label: String,
    /// When it was last looked for in the browser (RFC 3339), or empty.
    pub verified: String,
}

/// A cycle's sources manifest: absent, read, or unreadable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sources {
    /// The repository has no `sources.json`.
    Missing,
    /// Its items, in the manifest's order, redacted.
    Items(Vec<SourceItem>),
    /// Why the manifest could not be read (redacted).
    Invalid(String),
}

/// A file in a cycle's `runs/` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFile {
    /// The log file.
    pub path: PathBuf,
    /// Its file name, `<iteration>-<sha12>.log`.
    pub name: String,
    /// Its size in bytes when listed.
    pub len: u64,
    /// Seconds since it was last written, as measured when listed.
    pub idle_secs: Option<u64>,
}

/// Where the control room looks, fixed at start.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// `<home>/cycles/`, where a bare `--state NAME` lives.
    pub cycles_dir: PathBuf,
    /// `<home>/task-spaces/`, the task-space index: the states it names are shown too.
    pub task_spaces_dir: PathBuf,
    /// The Project registry's directory (the Projects screen, the Project tab).
    pub registry: PathBuf,
    /// More directories of state files (`--dir`, config `tui.watch`), absolute.
    pub extra_dirs: Vec<PathBuf>,
    /// The remote connector's files (`<home>/connector`): the Connector screen.
    pub connector_dir: PathBuf,
}
