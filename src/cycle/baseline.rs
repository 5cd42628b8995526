//! The baseline (issue 57, design §5.2 "Evidence that the tests ran"): the same commands' own
//! per-test results at the exact base commit a run merged with. A pass is judged against it:
//! a test that ran at the base and not at the merge, or a run that reports nothing where the
//! base reported, holds the pass for a person.
//!
//! Where it comes from, in order: a file the base layer's warming or an earlier run wrote
//! (`<home>/baselines/<owner>/<repo>/<base>-<commands>.json`, shared by every cycle of the
//! repository); else the base tip run now, on demand, in the same sandbox, within a bound; else
//! nothing, and the report says "no baseline" and the pass waits for the person.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::domain::commands::CommandsProfile;
use crate::domain::pr_ref::RepoName;
use crate::domain::report::TestStatus;
use crate::domain::test_results::RunResults;
use crate::store::atomic::write_atomic;

use super::context::Ctx;

/// The on-disk format's version.
const FORMAT: u32 = 1;
/// Baselines kept per repository (oldest first out).
const KEPT: usize = 64;
/// The bound of an on-demand base run: this many times the run's own test time, plus
/// [`BOUND_EXTRA`], within [`BOUND_MIN`] and [`BOUND_MAX`].
const BOUND_FACTOR: u32 = 3;
const BOUND_EXTRA: Duration = Duration::from_secs(30);
const BOUND_MIN: Duration = Duration::from_secs(60);
const BOUND_MAX: Duration = Duration::from_secs(30 * 60);

/// How a baseline was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Source {
    /// The base layer's warming ran the commands at that commit.
    Warming,
    /// A run needed it and ran the base tip for it.
    OnDemand,
}

/// The base's results for one set of commands at one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Baseline {
    /// [`FORMAT`].
    pub(super) format: u32,
    /// The base commit.
    pub(super) commit: String,
    /// The commands' hash.
    pub(super) commands_sha256: String,
    /// How it was made.
    pub(super) source: Source,
    /// When (RFC 3339).
    pub(super) at: String,
    /// The base's own verdict (its results count for the tests that ran even when it failed).
    pub(super) status: TestStatus,
    /// How long the base's commands took, in seconds.
    pub(super) seconds: f64,
    /// Its per-test results.
    pub(super) results: RunResults,
}

fn path(ctx: &Ctx, repo: &RepoName, commit: &str, commands: &CommandsProfile) -> PathBuf {
    let sha = commands.sha256();
    ctx.home
        .baselines_dir()
        .join(repo.owner().to_ascii_lowercase())
        .join(repo.name().to_ascii_lowercase())
        .join(format!("{commit}-{}.json", &sha[..sha.len().min(16)]))
}

/// The stored baseline of `commands` at `commit`, when there is a readable one.
pub(super) fn load(ctx: &Ctx, repo: &RepoName, commit: &str, commands: &CommandsProfile) -> Option<Baseline> {
    let text = std::fs::read(path(ctx, repo, commit, commands)).ok()?;
    let baseline: Baseline = serde_json::from_slice(&text).ok()?;
    (baseline.format == FORMAT && baseline.commit == commit && baseline.commands_sha256 == commands.sha256())
        .then_some(baseline)
}

/// Keeps `baseline` for every later run of the repository; the oldest beyond [`KEPT`] go.
pub(super) fn save(ctx: &Ctx, repo: &RepoName, commands: &CommandsProfile, baseline: &Baseline) {
    let file = path(ctx, repo, &baseline.commit, commands);
    let Some(dir) = file.parent() else { return };
    let written = crate::store::private::create_dir_all(dir)
        .and_then(|()| serde_json::to_vec(baseline).map_err(std::io::Error::other))
        .and_then(|bytes| write_atomic(&file, &bytes));
    if let Err(err) = written {
        eprintln!("forgeloop: the baseline {} was not kept: {err}", file.display());
        return;
    }
    let mut kept: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if kept.len() > KEPT {
        kept.sort();
        for (_, old) in kept.iter().take(kept.len() - KEPT) {
            let _ = std::fs::remove_file(old);
        }
    }
}

/// A baseline made of a finished base-tip run.
pub(super) fn of_run(
    ctx: &Ctx,
    commit: &str,
    commands: &CommandsProfile,
    source: Source,
    status: TestStatus,
    seconds: f64,
    results: RunResults,
) -> Baseline {
    Baseline {
        format: FORMAT,
        commit: commit.to_owned(),
        commands_sha256: commands.sha256(),
        source,
        at: ctx.now(),
        status,
        seconds,
        results,
    }
}

/// How long an on-demand base run may take, for a run whose test commands took `tests`.
pub(super) fn bound(tests: Duration) -> Duration {
    (tests * BOUND_FACTOR + BOUND_EXTRA).clamp(BOUND_MIN, BOUND_MAX)
}

/// A cancel signal that turns `true` when `parent` does or `bound` has passed; the second value
/// says which (read it once the run ended).
pub(super) fn bounded_cancel(
    parent: Option<watch::Receiver<bool>>,
    bound: Duration,
) -> (watch::Receiver<bool>, BoundWatch) {
    let (tx, rx) = watch::channel(false);
    let started = Instant::now();
    let task = tokio::spawn(async move {
        let parent_cancelled = async move {
            match parent {
                Some(mut rx) => loop {
                    if *rx.borrow_and_update() {
                        return;
                    }
                    if rx.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                },
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = parent_cancelled => {}
            () = tokio::time::sleep(bound) => {}
        }
        let _ = tx.send(true);
    });
    (rx, BoundWatch { started, bound, task })
}

/// What [`bounded_cancel`] started: whether the bound, not the person, ended the run.
pub(super) struct BoundWatch {
    started: Instant,
    bound: Duration,
    task: tokio::task::JoinHandle<()>,
}

impl BoundWatch {
    /// Whether the bound had passed (the run was stopped for it), ending the watch.
    pub(super) fn timed_out(self) -> bool {
        self.task.abort();
        self.started.elapsed() >= self.bound
    }

    /// The bound, in whole seconds.
    pub(super) fn seconds(&self) -> u64 {
        self.bound.as_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_grows_with_the_run_and_stays_within_its_limits() {
        assert_eq!(bound(Duration::from_secs(1)), BOUND_MIN);
        assert_eq!(bound(Duration::from_secs(100)), Duration::from_secs(330));
        assert_eq!(bound(Duration::from_secs(3600)), BOUND_MAX);
    }
}
