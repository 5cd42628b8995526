//! The `github-checks` executor (design §5.7): nothing runs here; forgeloop waits for the
//! PR's own CI on the exact head SHA and turns the wanted check runs into a verdict.
//!
//! Waiting is polite: the check-runs list is read with `If-None-Match` (a `304` is free), the
//! pause between reads starts at `[checks] poll_min_s` after a change and doubles up to
//! `poll_max_s` while nothing changes, and a rate limit (primary, or secondary with
//! `Retry-After`) is waited out rather than counted as a failure. Progress goes to the live run
//! log as `check test: in_progress 3m12s` lines, so the control room and MCP show it.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::domain::checks::{self, NEVER_APPEARED_HINT, Verdict};
use crate::domain::commands::{Checks, CommandsProfile};
use crate::domain::report::{CheckResult, TestStatus};
use crate::domain::text;
use crate::github::{CheckRunInfo, GithubClient, GithubError, Polled, PullInfo};
use crate::redact::Redactor;
use crate::runner::CommandStarted;

pub use crate::error::ChecksError;

/// Lines of a failing job's log kept before its error (the excerpt's length).
const LOG_LINES_BEFORE_ERROR: usize = 60;
/// At most this much of the failing checks' excerpts goes to the run log (a job log's lines
/// can be very long).
const LOG_EXCERPT_CHARS: usize = 256 * 1024;
/// A check's state is written again after this long without a change.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);
/// The state of a wanted check GitHub has no run of (yet), written like GitHub's words.
pub const NOT_REPORTED: &str = "not_reported";
/// How long a re-run's new check runs may take to show.
const RERUN_APPEAR: Duration = Duration::from_secs(60);
/// Consecutive failed reads (network, 5xx) before the wait gives up as an infra failure.
const MAX_READ_FAILURES: u32 = 5;

/// What the wait ended with.
pub enum Waited {
    /// Every wanted check finished: the run's verdict.
    Verdict(ChecksVerdict),
    /// The wait was cancelled (a stop request, Ctrl-C); the text says by what.
    Cancelled(String),
}

/// What the wanted check runs add up to, as a run's result.
pub struct ChecksVerdict {
    /// Passed only when every wanted check succeeded.
    pub status: TestStatus,
    /// Each wanted check's outcome, with its link.
    pub checks: Vec<CheckResult>,
    /// Redacted: each failing check's log excerpt (or its output text), capped.
    pub failure_output: Option<String>,
    /// How many bytes the run log holds.
    pub log_bytes: u64,
}

/// How to wait; from the profile and the config.
pub struct WaitPlan<'a> {
    /// The check names to wait for.
    pub wanted: Vec<String>,
    /// How long the checks may take once they appear (`timeout_s`).
    pub timeout: Duration,
    /// How long the checks may take to appear at all (`appear_timeout_s`).
    pub appear_timeout: Duration,
    /// The shortest and longest wait between two reads of the check runs.
    pub poll: (Duration, Duration),
    /// Where the wait's own log goes.
    pub log_path: &'a Path,
    /// Masks secrets in the log and failure excerpts.
    pub redactor: &'a Redactor,
    /// Turns `true` to stop waiting.
    pub cancel: Option<watch::Receiver<bool>>,
    /// Told each time the checks' progress line changes.
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<CommandStarted>>,
}

/// The names a profile waits for: its list, or the base branch's required checks.
pub async fn wanted_checks(
    github: &GithubClient,
    pull: &PullInfo,
    profile: &CommandsProfile,
) -> Result<Vec<String>, ChecksError> {
    match &profile.checks {
        Some(Checks::Named(names)) => Ok(names.clone()),
        Some(Checks::Required) => {
            let names = github.required_checks(&pull.repository, &pull.base_ref).await.map_err(|e| match e {
                GithubError::Forbidden { .. } => ChecksError::Required(format!(
                    "the token may not read the branch protection or rulesets of {} ({e})",
                    pull.repository
                )),
                other => ChecksError::Github(other),
            })?;
            if names.is_empty() {
                return Err(ChecksError::Required(format!(
                    "branch {} of {} requires no status checks (no branch protection or ruleset names one)",
                    pull.base_ref, pull.repository
                )));
            }
            Ok(names)
        }
        None => Err(ChecksError::Required("the profile names no checks".to_owned())),
    }
}

/// Whether the profile's dispatch can run for `pull`: only a PR whose head branch lives in the
/// base repository can be dispatched there. Checked before the run shows as live, so a fork's
/// PR is refused rather than counted as an infra failure.
pub fn check_dispatch(pull: &PullInfo, profile: &CommandsProfile) -> Result<(), ChecksError> {
    let same_repo = pull.head_repository.as_ref().is_none_or(|head| head.same_as(&pull.repository));
    if profile.dispatch.is_some() && !same_repo {
        return Err(ChecksError::Dispatch(format!(
            "the PR's head branch lives in a fork; a workflow_dispatch can only run on a branch of {}",
            pull.repository
        )));
    }
    Ok(())
}

/// Asks for the profile's `workflow_dispatch` on the PR's head branch. `{head_sha}` in an
/// input's value becomes the SHA under test, so the workflow can check out exactly that commit.
pub async fn dispatch(github: &GithubClient, pull: &PullInfo, profile: &CommandsProfile) -> Result<(), ChecksError> {
    let Some(dispatch) = &profile.dispatch else { return Ok(()) };
    check_dispatch(pull, profile)?;
    let inputs: BTreeMap<String, String> =
        dispatch.inputs.iter().map(|(k, v)| (k.clone(), v.replace("{head_sha}", &pull.head_sha))).collect();
    github.dispatch_workflow(&pull.repository, &dispatch.workflow, &pull.head_ref, &inputs).await?;
    Ok(())
}

/// Asks GitHub to re-run the failed jobs behind the failing wanted checks on `pull`'s head
/// (the control room's rerun of a `github-checks` cycle): once per Actions run. A failing check
/// another app made cannot be re-run from here; a token without `actions: write` is told so.
/// Returns the Actions runs asked to re-run.
pub async fn rerun_failed(
    github: &GithubClient,
    pull: &PullInfo,
    wanted: &[String],
    poll: Duration,
) -> Result<Vec<u64>, ChecksError> {
    let runs = match github.poll_check_runs(&pull.repository, &pull.head_sha, None).await? {
        Polled::Changed { value, .. } => value,
        Polled::NotModified => Vec::new(),
    };
    let observed: Vec<_> = runs.iter().map(|r| r.observed.clone()).collect();
    let Verdict::Failed { failures } = checks::verdict(wanted, &observed) else {
        return Err(ChecksError::Rerun(
            "no wanted check has failed on the PR's head; there is nothing to re-run".into(),
        ));
    };
    let mut asked: Vec<u64> = Vec::new();
    for failure in &failures {
        let id = latest_id(&observed, &failure.name);
        let Some(job) = runs.iter().find(|r| Some(r.observed.id) == id).and_then(|r| r.actions_job) else {
            return Err(ChecksError::Rerun(format!(
                "check {} was not made by GitHub Actions; re-run it where it runs, then rerun here",
                failure.name
            )));
        };
        let run_id = github.actions_job(&pull.repository, job).await?.run_id;
        let Some(run_id) = run_id.filter(|id| !asked.contains(id)) else { continue };
        github.rerun_failed_jobs(&pull.repository, run_id).await.map_err(|e| match e {
            GithubError::Forbidden { .. } => ChecksError::Rerun(format!(
                "GitHub refused ({e}); the token needs permission to re-run workflows (actions: write). Re-run the failed jobs on GitHub, then rerun here"
            )),
            other => ChecksError::Github(other),
        })?;
        asked.push(run_id);
    }
    // GitHub queues the new check runs a moment later; until they show, the old failure is
    // still the latest and a wait would read it again.
    let before: Vec<(String, Option<u64>)> =
        failures.iter().map(|f| (f.name.clone(), latest_id(&observed, &f.name))).collect();
    let started = Instant::now();
    loop {
        let now = match github.poll_check_runs(&pull.repository, &pull.head_sha, None).await? {
            Polled::Changed { value, .. } => value.into_iter().map(|r| r.observed).collect::<Vec<_>>(),
            Polled::NotModified => Vec::new(),
        };
        if before.iter().all(|(name, old)| latest_id(&now, name) != *old) {
            return Ok(asked);
        }
        if started.elapsed() >= RERUN_APPEAR {
            return Err(ChecksError::Rerun(format!(
                "GitHub accepted the re-run but no new check run showed within {} s; rerun again in a moment",
                RERUN_APPEAR.as_secs()
            )));
        }
        tokio::time::sleep(poll).await;
    }
}

/// Polls the check runs of `pull`'s head until the wanted ones decide, the wait times out, or
/// a cancel arrives.
pub async fn wait(github: &GithubClient, pull: &PullInfo, plan: WaitPlan<'_>) -> Result<Waited, ChecksError> {
    let mut log = RunLog::create(plan.log_path, plan.redactor)?;
    log.line(&format!(
        "forgeloop: waiting for the repository's CI on {} (checks: {}; timeout {} s, a check must appear within {} s)",
        pull.head_sha,
        plan.wanted.join(", "),
        plan.timeout.as_secs(),
        plan.appear_timeout.as_secs()
    ))?;
    let started = Instant::now();
    let (min, max) = plan.poll;
    let mut pause = min;
    let mut etag: Option<String> = None;
    let mut runs: Vec<CheckRunInfo> = Vec::new();
    let mut failures_in_a_row = 0;
    let mut shown: BTreeMap<String, (String, Instant)> = BTreeMap::new();
    let mut running_since: BTreeMap<String, Instant> = BTreeMap::new();
    let mut cancel = plan.cancel.clone();
    let mut lines_sent = 0usize;
    let mut waiting_for_one_to_appear;
    loop {
        if cancel.as_ref().is_some_and(|rx| *rx.borrow()) {
            log.line("forgeloop: the wait was cancelled")?;
            return Ok(Waited::Cancelled("the wait for CI was cancelled; it does not count as an iteration".into()));
        }
        match github.poll_check_runs(&pull.repository, &pull.head_sha, etag.as_deref()).await {
            Ok(Polled::NotModified) => {
                failures_in_a_row = 0;
                pause = (pause * 2).min(max);
            }
            Ok(Polled::Changed { etag: new, value }) => {
                failures_in_a_row = 0;
                etag = new;
                runs = value;
                pause = min;
            }
            Err(GithubError::RateLimited { reset_at, .. }) => {
                let until = reset_at.and_then(|at| (at - chrono::Utc::now()).to_std().ok()).unwrap_or(max).max(min);
                log.line(&format!("forgeloop: GitHub's rate limit: waiting {} s", until.as_secs().max(1)))?;
                pause = until;
            }
            Err(err) if err.is_transient() && failures_in_a_row + 1 < MAX_READ_FAILURES => {
                failures_in_a_row += 1;
                log.line(&format!("forgeloop: reading the checks failed ({err}); trying again"))?;
                pause = (pause * 2).min(max);
            }
            Err(err) => return Err(err.into()),
        }

        let observed: Vec<_> = runs.iter().map(|r| r.observed.clone()).collect();
        let latest = checks::latest_by_name(&observed);
        for name in &plan.wanted {
            let status = latest.get(name.as_str()).map_or(NOT_REPORTED, |run| run.status.as_str()).to_owned();
            if status == "in_progress" {
                running_since.entry(name.clone()).or_insert_with(Instant::now);
            }
            let due = match shown.get(name) {
                None => true,
                Some((last, at)) => *last != status || at.elapsed() >= PROGRESS_EVERY,
            };
            if due && status != "completed" {
                // How long it has run by GitHub's clock, else since this wait first saw it run.
                let by_github = latest
                    .get(name.as_str())
                    .and_then(|run| run.started_at.as_deref())
                    .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                    .and_then(|t| (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).to_std().ok());
                let elapsed = match (status.as_str(), by_github) {
                    ("in_progress", Some(d)) => Some(d.as_secs()),
                    _ => running_since.get(name).map(|t| t.elapsed().as_secs()),
                };
                let line = checks::progress_line(name, &status, elapsed);
                log.line(&line)?;
                if let Some(tx) = &plan.progress {
                    lines_sent += 1;
                    let _ = tx.send(CommandStarted {
                        index: lines_sent,
                        total: 0,
                        argv: Vec::new(),
                        status_line: Some(line),
                    });
                }
                shown.insert(name.clone(), (status, Instant::now()));
            }
        }

        match checks::verdict(&plan.wanted, &observed) {
            Verdict::Passed => {
                let results = results(&plan.wanted, &runs);
                log.results(&results)?;
                return Ok(Waited::Verdict(ChecksVerdict {
                    status: TestStatus::Passed,
                    checks: results,
                    failure_output: None,
                    log_bytes: log.bytes,
                }));
            }
            Verdict::Failed { failures } => {
                let results = results(&plan.wanted, &runs);
                log.results(&results)?;
                let mut parts = Vec::new();
                for failure in &failures {
                    let run = runs.iter().find(|r| Some(r.observed.id) == latest_id(&observed, &failure.name));
                    let excerpt = match run {
                        Some(run) => failure_text(github, pull, run).await,
                        None => String::new(),
                    };
                    let heading = format!("check {}: {}", failure.name, failure.conclusion);
                    parts.push(if excerpt.is_empty() { heading } else { format!("{heading}\n{excerpt}") });
                }
                let joined = plan.redactor.redact(&parts.join("\n\n")).into_owned();
                log.line("")?;
                log.line(&text::failure_tail(&joined, LOG_EXCERPT_CHARS))?;
                let output = text::failure_tail(&joined, text::FAILURE_TAIL_CHARS);
                return Ok(Waited::Verdict(ChecksVerdict {
                    status: TestStatus::Failed,
                    checks: results,
                    failure_output: Some(output),
                    log_bytes: log.bytes,
                }));
            }
            Verdict::Pending { missing, in_progress } => {
                let waited = started.elapsed();
                waiting_for_one_to_appear = !missing.is_empty();
                if !missing.is_empty() && waited >= plan.appear_timeout {
                    log.line("forgeloop: a wanted check never appeared; giving up")?;
                    return Err(ChecksError::NeverAppeared {
                        names: missing.join(", "),
                        sha: pull.head_sha.clone(),
                        waited: waited.as_secs(),
                        hint: NEVER_APPEARED_HINT,
                    });
                }
                if waited >= plan.timeout {
                    log.line("forgeloop: the checks did not finish in time; giving up")?;
                    let mut names = missing;
                    names.extend(in_progress);
                    return Err(ChecksError::TimedOut {
                        names: names.join(", "),
                        sha: pull.head_sha.clone(),
                        waited: waited.as_secs(),
                    });
                }
            }
        }

        // Never sleep past a deadline: the wait ends on time.
        let deadline = if waiting_for_one_to_appear { plan.appear_timeout.min(plan.timeout) } else { plan.timeout };
        let left = deadline.saturating_sub(started.elapsed()).max(Duration::from_millis(10));
        let sleep = tokio::time::sleep(pause.min(left));
        match cancel.as_mut() {
            Some(rx) => {
                tokio::select! {
                    () = sleep => {}
                    changed = rx.changed() => {
                        if changed.is_err() {
                            cancel = None;
                        }
                    }
                }
            }
            None => sleep.await,
        }
    }
}

fn latest_id(observed: &[checks::ObservedCheck], name: &str) -> Option<u64> {
    checks::latest_by_name(observed).get(name).map(|run| run.id)
}

/// Each wanted check's latest run, as the report lists it.
fn results(wanted: &[String], runs: &[CheckRunInfo]) -> Vec<CheckResult> {
    let observed: Vec<_> = runs.iter().map(|r| r.observed.clone()).collect();
    let latest = checks::latest_by_name(&observed);
    wanted
        .iter()
        .map(|name| match latest.get(name.as_str()) {
            Some(run) => CheckResult {
                name: name.clone(),
                status: run.status.clone(),
                conclusion: run.conclusion.clone(),
                duration_seconds: duration(run.started_at.as_deref(), run.completed_at.as_deref()),
                url: run.url.clone(),
                app: run.app.clone(),
            },
            None => CheckResult {
                name: name.clone(),
                status: NOT_REPORTED.to_owned(),
                conclusion: None,
                duration_seconds: None,
                url: None,
                app: None,
            },
        })
        .collect()
}

fn duration(started: Option<&str>, completed: Option<&str>) -> Option<f64> {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let (a, b) = (parse(started?)?, parse(completed?)?);
    let millis = (b - a).num_milliseconds();
    (millis >= 0).then(|| millis as f64 / 1000.0)
}

/// What a model can act on for one failing check: an Actions job's failing step and the lines
/// before its error, or another app's `output` text. Best effort: a log that cannot be read
/// falls back to the output text, which may be empty.
async fn failure_text(github: &GithubClient, pull: &PullInfo, run: &CheckRunInfo) -> String {
    if let Some(job) = run.actions_job {
        let step = github.actions_job(&pull.repository, job).await.ok();
        let failing = step.as_ref().and_then(|s| s.first_failing()).map(str::to_owned);
        if let Ok(log) = github.job_log(&pull.repository, job).await {
            return checks::job_log_excerpt(&log, failing.as_deref(), LOG_LINES_BEFORE_ERROR);
        }
    }
    run.output.iter().filter(|part| !part.trim().is_empty()).cloned().collect::<Vec<_>>().join("\n")
}

/// The live run log of a wait: plain lines, each redacted, flushed as written so a follower
/// (the control room) sees them at once.
struct RunLog<'a> {
    file: File,
    path: PathBuf,
    redactor: &'a Redactor,
    bytes: u64,
}

impl<'a> RunLog<'a> {
    fn create(path: &Path, redactor: &'a Redactor) -> Result<RunLog<'a>, ChecksError> {
        let err = |source| ChecksError::Log { path: path.to_path_buf(), source };
        if let Some(dir) = path.parent() {
            crate::store::private::create_dir_all(dir).map_err(err)?;
        }
        let file = crate::store::private::open(OpenOptions::new().create(true).truncate(true).write(true), path)
            .map_err(err)?;
        Ok(RunLog { file, path: path.to_path_buf(), redactor, bytes: 0 })
    }

    fn line(&mut self, text: &str) -> Result<(), ChecksError> {
        let mut line = self.redactor.redact(text).into_owned();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|source| ChecksError::Log { path: self.path.clone(), source })?;
        self.bytes += line.len() as u64;
        Ok(())
    }

    fn results(&mut self, results: &[CheckResult]) -> Result<(), ChecksError> {
        for check in results {
            let conclusion = check.conclusion.as_deref().unwrap_or(&check.status);
            let took = check.duration_seconds.map(|s| format!(" in {}", text::format_duration(s))).unwrap_or_default();
            let url = check.url.as_deref().map(|u| format!(" {u}")).unwrap_or_default();
            self.line(&format!("check {}: {conclusion}{took}{url}", check.name))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_come_from_githubs_timestamps() {
        assert_eq!(duration(Some("2026-01-02T03:04:05Z"), Some("2026-01-02T03:07:17Z")), Some(192.0));
        assert_eq!(duration(Some("2026-01-02T03:04:05Z"), None), None);
        assert_eq!(duration(Some("x"), Some("2026-01-02T03:07:17Z")), None);
        assert_eq!(duration(Some("2026-01-02T03:07:17Z"), Some("2026-01-02T03:04:05Z")), None);
    }
}
