//! Finding every known cycle: the cycles directory, extra directories, and every state the
//! task-space index names. A file that cannot be read is listed with its error.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::integrity::Flag;
use crate::domain::state::CycleState;
use crate::domain::status::Status;
use crate::store::atomic::is_temp_name;
use crate::store::state_file;
use crate::store::task_index;

use super::context::Ctx;

/// One line of `list`: a state file and either its summary or why it could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct CycleRow {
    /// The state file's path (absolute when found by directory listing).
    pub state: PathBuf,
    /// The cycle's summary, flattened into the row; `None` when the file could not be read.
    #[serde(flatten)]
    pub summary: Option<CycleView>,
    /// Why the file could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One cycle as `list` and MCP `forge_cycles` show it: typed (the status is the domain's enum,
/// written as its word).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleView {
    /// Where the cycle is in the state machine (design §3).
    pub status: Status,
    /// The task space the cycle owns in the index (one live cycle per space).
    pub task_space: String,
    /// The repository the cycle works on: its binding, else its report's or PR's.
    pub repository: Option<String>,
    /// The PR under test, as given (`OWNER/REPO#N` or its URL), once there is one.
    pub pr_ref: Option<String>,
    /// Test runs so far that counted against the cap.
    pub iteration: u32,
    /// The iteration cap.
    pub max_iterations: u32,
    /// Whether the status waits on a person (confirm, unblock, review, merge).
    pub needs_human: bool,
    /// When the cycle last changed (RFC 3339); for old states, when it was created or the file written.
    pub updated_at: Option<String>,
    /// A test run in progress, by any process (design §6.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub testing: Option<Testing>,
    /// What the last tested head did to the PR's own tests (design §5.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestsChanged>,
}

/// A row's word on the PR's tests: the flag and the sentence `next` uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestsChanged {
    /// Which kind of change the PR made to its tests.
    pub flag: Flag,
    /// The sentence `next` says about it.
    pub summary: String,
}

/// A test run in progress, as its live record describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Testing {
    /// The process running the test.
    pub pid: u32,
    /// Who started it: `agent`, `human` or `system`.
    pub actor: String,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// The iteration the run will count as.
    pub iteration: u32,
    /// The commit under test (40 hex digits).
    pub head_sha: String,
    /// The command in progress; absent while the PR is fetched.
    pub command: Option<String>,
}

impl CycleView {
    /// The summary of `state`, with no live run looked up (`row` adds it).
    pub fn of(state: &CycleState) -> CycleView {
        CycleView {
            status: state.status,
            task_space: state.task_space.clone(),
            repository: state.effective_repository(),
            pr_ref: state.pr_ref.clone(),
            iteration: state.iteration,
            max_iterations: state.max_iterations,
            needs_human: state.status.needs_human(),
            updated_at: state.updated_at.clone(),
            testing: None,
            tests: state
                .report
                .as_ref()
                .and_then(|r| r.integrity.as_ref())
                .and_then(|i| Some(TestsChanged { flag: i.flag?, summary: i.words()? })),
        }
    }
}

/// Whether a directory entry name is a state file (not a temp file, lock or journal).
pub fn is_state_name(name: &str) -> bool {
    name.ends_with(".json") && !is_temp_name(name)
}

/// Every state path known: `*.json` in the given directories plus the index's states.
pub fn state_paths(ctx: &Ctx, extra_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths = BTreeSet::new();
    let mut dirs = vec![ctx.home.cycles_dir()];
    dirs.extend(extra_dirs.iter().cloned());
    for dir in &dirs {
        if let Ok(entries) = fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.file_name().to_str().is_some_and(is_state_name) && entry.path().is_file() {
                    paths.insert(std::path::absolute(entry.path()).unwrap_or_else(|_| entry.path()));
                }
            }
        }
    }
    for entry in task_index::entries(&ctx.home.task_spaces_dir()) {
        let path = entry.state_path();
        if path.exists() {
            paths.insert(path);
        }
    }
    paths.into_iter().collect()
}

/// When the file last changed, in the format forgeloop writes timestamps: what a reference-tool
/// state (which records no times) shows as its `updated_at`.
pub fn modified_at(path: &Path) -> Option<String> {
    let modified = fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(chrono::DateTime::<chrono::Utc>::from(modified).to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The row of one state file: its summary and live run, or its load error.
pub fn row(path: &Path) -> CycleRow {
    match state_file::load(path) {
        Ok(state) => {
            let mut summary = CycleView::of(&state);
            if summary.updated_at.is_none() {
                summary.updated_at = state.created_at.clone().or_else(|| modified_at(path));
            }
            let live = crate::store::layout::CyclePaths::new(path.to_path_buf())
                .ok()
                .and_then(|paths| super::live::probe(&paths, &state));
            summary.testing = live.map(|run| Testing {
                pid: run.info.pid,
                actor: run.info.actor.as_str().to_owned(),
                started_at: run.info.started_at,
                iteration: run.info.iteration,
                head_sha: run.info.head_sha,
                command: run.command,
            });
            CycleRow { state: path.to_path_buf(), summary: Some(summary), error: None }
        }
        Err(err) => CycleRow { state: path.to_path_buf(), summary: None, error: Some(err.to_string()) },
    }
}

/// Rows sorted with what needs a person first, then by most recent change.
pub fn list(ctx: &Ctx, extra_dirs: &[PathBuf]) -> Vec<CycleRow> {
    let mut rows: Vec<CycleRow> = state_paths(ctx, extra_dirs).iter().map(|p| row(p)).collect();
    rows.sort_by(|a, b| {
        let rank = |r: &CycleRow| r.summary.as_ref().map_or(0, |s| s.status.attention_rank() + 1);
        let updated = |r: &CycleRow| r.summary.as_ref().and_then(|s| s.updated_at.clone()).unwrap_or_default();
        rank(a).cmp(&rank(b)).then_with(|| updated(b).cmp(&updated(a))).then_with(|| a.state.cmp(&b.state))
    });
    rows
}
