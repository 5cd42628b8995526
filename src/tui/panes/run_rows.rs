//! A cycle's runs as the detail tabs see them: one row per run (its history, and logs in
//! `runs/` the history does not know yet), what each tested, and earlier runs' `integrity`
//! read from their reports. Shared by the tabs that show runs, their logs and their diffs; the
//! rows are made from [`Loaded`], which the control room keeps for the selected cycle.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cycle::files::CyclePaths;
use crate::domain::event::EventKind;
use crate::domain::integrity::{Flag, Integrity};
use crate::tui::model::{CycleEntry, RunFile};

use super::Loaded;

/// A log file in `runs/` not yet in the history and written to this recently is "live".
pub const LIVE_IDLE_SECS: u64 = 120;

/// One run of a cycle, as the tabs show it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Its iteration; `None` for a log whose name gives none.
    pub iteration: Option<u32>,
    /// The head it tested, its first 12 hex digits (empty when unknown).
    pub sha12: String,
    /// How it ended, or that it runs.
    pub result: RunResult,
    /// How long it took, in seconds (runs in the history).
    pub duration: Option<f64>,
    /// When it started (RFC 3339; runs in the history).
    pub started_at: Option<String>,
    /// Who ran it (`agent`, `human`).
    pub actor: Option<String>,
    /// The PR comment that reported it, if one was posted.
    pub comment_url: Option<String>,
    /// What the run's commands ran in ("isolated, no network", "unsandboxed").
    pub sandbox: Option<String>,
    /// Its log file, if it has one.
    pub log: Option<PathBuf>,
    /// Destinations the run's egress proxy refused (`host:port`), and, for a NEEDS_NETWORK
    /// run, when the person allowed them.
    pub refused: Vec<String>,
    /// When the person allowed them (RFC 3339), for a `NEEDS_NETWORK` run.
    pub allowed_at: Option<String>,
    /// What the run's head did to the PR's tests (design §5.2): from the last run's report,
    /// an earlier run's report once read, or the journal's `run_finished`.
    pub tests: Option<Flag>,
    /// The run's report file, where its `integrity` is (`None` for a run not in the history).
    pub report: Option<PathBuf>,
}

/// An earlier run's report, as far as the Runs tab read it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunReport {
    /// Being read.
    Loading,
    /// Its `integrity`: `None` for a report made before forgeloop checked it.
    Loaded(Option<Box<Integrity>>),
    /// Why it could not be read.
    Failed(String),
}

/// How a run ended, as the tabs show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunResult {
    /// Its tests passed.
    Passed,
    /// Its tests (or setup) failed.
    Failed,
    /// It runs now: a test in progress, or a log in `runs/` written in the last [`LIVE_IDLE_SECS`].
    Live,
    /// A log the history does not know, no longer written: the run died or was cancelled.
    Incomplete,
    /// Failed for want of network (design §5.6): not an iteration.
    NeedsNetwork,
}

/// The word the Runs tab and the Log tab's title use for `result`.
pub fn run_result_word(result: RunResult) -> &'static str {
    match result {
        RunResult::Passed => "passed",
        RunResult::Failed => "failed",
        RunResult::Live => "running",
        RunResult::Incomplete => "incomplete",
        RunResult::NeedsNetwork => "needs network",
    }
}

/// The destinations a network log refused, once each, as `host:port`.
fn refused_of(log: &[crate::domain::egress::NetworkEvent]) -> Vec<String> {
    let mut refused: Vec<String> = Vec::new();
    for event in log.iter().filter(|e| !e.allowed) {
        let what = format!("{}:{}", event.host, event.port);
        if !refused.contains(&what) {
            refused.push(what);
        }
    }
    refused
}

/// The flag each run's `run_finished` event journaled (`tests`), by iteration, when the
/// journal loaded is `entry`'s.
fn journaled_flags(loaded: &Loaded, entry: &CycleEntry) -> BTreeMap<u32, Flag> {
    let Some((path, Ok(events))) = &loaded.journal else { return BTreeMap::new() };
    if path != &entry.path {
        return BTreeMap::new();
    }
    events
        .iter()
        .filter(|e| e.event_kind() == Some(EventKind::RunFinished))
        .filter_map(|e| {
            let iteration = u32::try_from(e.data.get("iteration")?.as_u64()?).ok()?;
            let flag: Flag = serde_json::from_value(e.data.get("tests")?.clone()).ok()?;
            Some((iteration, flag))
        })
        .collect()
}

/// The logs of runs that ended NEEDS_NETWORK (file name → what was refused), from the
/// journal loaded when it is `entry`'s: each keeps its own log, so an earlier one still
/// reads as what it was after later runs.
fn needs_network_logs(loaded: &Loaded, entry: &CycleEntry) -> BTreeMap<String, Vec<String>> {
    let Some((path, Ok(events))) = &loaded.journal else { return BTreeMap::new() };
    if path != &entry.path {
        return BTreeMap::new();
    }
    let strings = |value: Option<&serde_json::Value>| -> Vec<String> {
        value
            .and_then(|v| v.as_array())
            .map_or_else(Vec::new, |a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
    };
    events
        .iter()
        .filter(|e| e.event_kind() == Some(EventKind::RunNeedsNetwork))
        .filter_map(|e| {
            let log = e.data.get("log")?.as_str()?;
            let name = log.rsplit('/').next()?.to_owned();
            let mut refused = strings(e.data.get("allow"));
            refused.extend(strings(e.data.get("refused_by_policy")));
            Some((name, refused))
        })
        .collect()
}

/// The `integrity` of run `iteration` of `entry`, when it is at hand: the last run's from
/// the state's report, an earlier one's once its report was read. `Err` says why not.
pub fn integrity<'a>(
    loaded: &'a Loaded,
    entry: &'a CycleEntry,
    iteration: u32,
) -> Result<Option<&'a Integrity>, String> {
    let Some(state) = &entry.state else { return Ok(None) };
    let last = state.history.last().filter(|r| r.iteration == iteration);
    if let Some(run) = last {
        return Ok(state.report.as_ref().filter(|r| r.head_sha == run.head_sha).and_then(|r| r.integrity.as_ref()));
    }
    match loaded.reports.get(&iteration) {
        Some(RunReport::Loaded(integrity)) => Ok(integrity.as_deref()),
        Some(RunReport::Failed(error)) => Err(error.clone()),
        Some(RunReport::Loading) => Err("reading the run's report…".to_owned()),
        None => Ok(None),
    }
}

/// The run rows of `entry`, newest first: its history, then logs in `runs/`
/// the history does not know (live while `running` or recently written).
pub fn rows(entry: &CycleEntry, loaded: &Loaded, running: bool) -> Vec<RunRow> {
    let Some(state) = &entry.state else { return Vec::new() };
    let runs_dir = CyclePaths::new(entry.path.clone()).map(|p| p.runs()).ok();
    let files: &[RunFile] = match &loaded.runs {
        Some((path, files)) if path == &entry.path => files,
        _ => &[],
    };
    let journaled = journaled_flags(loaded, entry);
    let needed_network = needs_network_logs(loaded, entry);
    let sidecar = CyclePaths::new(entry.path.clone()).map(|p| p.sidecar()).ok();
    let mut rows: Vec<RunRow> = state
        .history
        .iter()
        .map(|run| {
            let tests = match integrity(loaded, entry, run.iteration) {
                Ok(Some(integrity)) => integrity.flag,
                _ => journaled.get(&run.iteration).copied(),
            };
            let report = run
                .report_path
                .as_ref()
                .zip(sidecar.as_ref())
                .map(|(rel, sidecar)| sidecar.join(crate::cycle::files::expand_tilde(rel)));
            let sha12: String = run.head_sha.chars().take(12).collect();
            // The recorded log's own name in this cycle's `runs/` (a later run of one
            // iteration and head is `…-2.log`), else the first run's name.
            let recorded_name = run.log_path.as_deref().and_then(|p| std::path::Path::new(p).file_name());
            let by_name = runs_dir.as_ref().map(|d| match recorded_name {
                Some(name) => d.join(name),
                None => d.join(format!("{}-{sha12}.log", run.iteration)),
            });
            let log = run
                .log_path
                .as_ref()
                .map(|p| PathBuf::from(crate::cycle::files::expand_tilde(p)))
                .filter(|p| files.iter().any(|f| &f.path == p) || p.exists())
                .or(by_name);
            // The last run's report has its network log.
            let refused = state
                .report
                .as_ref()
                .filter(|r| r.head_sha == run.head_sha && state.history.last().is_some_and(|l| std::ptr::eq(l, run)))
                .map(|r| refused_of(&r.network_log))
                .unwrap_or_default();
            RunRow {
                iteration: Some(run.iteration),
                sha12,
                result: match run.status {
                    crate::domain::report::TestStatus::Passed => RunResult::Passed,
                    crate::domain::report::TestStatus::Failed
                    | crate::domain::report::TestStatus::SetupFailed
                    | crate::domain::report::TestStatus::MergeConflict => RunResult::Failed,
                },
                duration: Some(run.duration_seconds),
                started_at: Some(run.started_at.clone()),
                actor: Some(run.actor.as_str().to_owned()),
                comment_url: run.comment_url.clone(),
                sandbox: run.sandbox.clone(),
                log,
                refused,
                allowed_at: None,
                tests,
                report,
            }
        })
        .collect();
    for file in files {
        if rows.iter().any(|r| r.log.as_ref() == Some(&file.path)) {
            continue;
        }
        let stem = file.name.trim_end_matches(".log");
        let (iteration, rest) = stem.split_once('-').unwrap_or((stem, ""));
        // `<iteration>-<sha12>` or, for a later run of that iteration and head, `…-<n>`.
        let sha = rest.split('-').next().unwrap_or("");
        let iteration: Option<u32> = iteration.parse().ok();
        // The run that ended NEEDS_NETWORK wrote the log of the iteration it would have been.
        let needs = state.needs_network.as_ref().filter(|n| {
            !running && iteration == Some(state.iteration + 1) && !sha.is_empty() && n.head_sha.starts_with(sha)
        });
        // An earlier NEEDS_NETWORK run, as its journal entry names its log.
        let earlier = needed_network.get(&file.name).filter(|_| needs.is_none());
        let live =
            running || (needs.is_none() && earlier.is_none() && file.idle_secs.is_some_and(|s| s < LIVE_IDLE_SECS));
        let result = match (live, needs.is_some() || earlier.is_some()) {
            (true, _) => RunResult::Live,
            (false, true) => RunResult::NeedsNetwork,
            (false, false) => RunResult::Incomplete,
        };
        rows.push(RunRow {
            iteration,
            sha12: sha.chars().take(12).collect(),
            result,
            duration: None,
            started_at: None,
            actor: None,
            comment_url: None,
            sandbox: None,
            log: Some(file.path.clone()),
            refused: match (needs, earlier) {
                (Some(n), _) => n.allow.iter().chain(&n.refused_by_policy).cloned().collect(),
                (None, Some(refused)) => refused.clone(),
                (None, None) => Vec::new(),
            },
            allowed_at: needs.and_then(|n| n.allowed_at.clone()),
            tests: None,
            report: None,
        });
    }
    rows.sort_by(|a, b| {
        b.iteration.cmp(&a.iteration).then_with(|| (b.result == RunResult::Live).cmp(&(a.result == RunResult::Live)))
    });
    rows
}
