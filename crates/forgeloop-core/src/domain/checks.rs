//! The `github-checks` executor's verdict (design §5.7): from the check runs observed on a
//! commit and the names a profile wants, whether the test passed, failed or is still pending.
//! Pure: the caller fetches the runs (and resolves `"checks": "required"` into names).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One check run as observed on the commit (GitHub's check-run fields the verdict needs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedCheck {
    /// GitHub's check run id (for Actions runs, the job id); breaks ties between re-runs.
    pub id: u64,
    /// The check's name, as a profile's `checks` names it.
    pub name: String,
    /// `queued`, `in_progress`, `completed` (or another word GitHub adds: not completed).
    pub status: String,
    /// Set once `status` is `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    /// RFC 3339 in UTC (`2026-01-02T03:04:05Z`, as GitHub writes it), so text order is time order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it completed (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Where a person can read it (`html_url`, else `details_url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The app that made it (its slug, e.g. `github-actions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
}

/// A completed check's conclusion, by the verdict's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conclusion {
    /// `success`, `neutral` or `skipped`.
    Passing(String),
    /// `failure`, `timed_out`, `cancelled`, `action_required` or `stale`.
    Failing(String),
    /// A word GitHub may add later (or none at all): treated as failing, named as it came.
    Unknown(String),
}

impl Conclusion {
    /// The conclusion GitHub's word stands for; none at all is `Unknown`.
    pub fn of(word: Option<&str>) -> Conclusion {
        match word {
            Some(w @ ("success" | "neutral" | "skipped")) => Conclusion::Passing(w.to_owned()),
            Some(w @ ("failure" | "timed_out" | "cancelled" | "action_required" | "stale")) => {
                Conclusion::Failing(w.to_owned())
            }
            Some(other) => Conclusion::Unknown(other.to_owned()),
            None => Conclusion::Unknown("(none)".to_owned()),
        }
    }
}

/// A wanted check whose latest run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    /// The check's name.
    pub name: String,
    /// The conclusion word as GitHub sent it.
    pub conclusion: String,
    /// Whether the word is one the verdict does not know (treated as a failure).
    pub unknown: bool,
    /// Where a person can read it.
    pub url: Option<String>,
}

/// What the wanted checks say about the head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every wanted check's latest run completed `success`, `neutral` or `skipped`.
    Passed,
    /// At least one wanted check's latest run failed (decided even while others still run).
    Failed {
        /// Each wanted check whose latest run failed.
        failures: Vec<CheckFailure>,
    },
    /// Nothing failed yet, but some wanted checks have no run (`missing`) or have not
    /// completed (`in_progress`). An empty wanted list is always pending: nothing proves a pass.
    Pending {
        /// Wanted checks with no run on the head yet.
        missing: Vec<String>,
        /// Wanted checks whose latest run has not completed.
        in_progress: Vec<String>,
    },
}

/// The latest run of each name: greatest `started_at` (a run not started yet counts as the
/// newest: GitHub queues a re-run without one), ties broken by the higher id.
pub fn latest_by_name(runs: &[ObservedCheck]) -> BTreeMap<&str, &ObservedCheck> {
    let mut latest: BTreeMap<&str, &ObservedCheck> = BTreeMap::new();
    for run in runs {
        let newer = match latest.get(run.name.as_str()) {
            None => true,
            Some(kept) => order_key(run) > order_key(kept),
        };
        if newer {
            latest.insert(run.name.as_str(), run);
        }
    }
    latest
}

fn order_key(run: &ObservedCheck) -> (bool, &str, u64) {
    // `None` (queued, not started) sorts after every time.
    (run.started_at.is_none(), run.started_at.as_deref().unwrap_or(""), run.id)
}

/// The verdict for `wanted` (names, each once) over the observed `runs`; runs of other names
/// are ignored.
pub fn verdict(wanted: &[String], runs: &[ObservedCheck]) -> Verdict {
    let latest = latest_by_name(runs);
    let mut failures = Vec::new();
    let mut missing = Vec::new();
    let mut in_progress = Vec::new();
    for name in wanted {
        let Some(run) = latest.get(name.as_str()) else {
            missing.push(name.clone());
            continue;
        };
        if run.status != "completed" {
            in_progress.push(name.clone());
            continue;
        }
        match Conclusion::of(run.conclusion.as_deref()) {
            Conclusion::Passing(_) => {}
            Conclusion::Failing(word) => failures.push(CheckFailure {
                name: name.clone(),
                conclusion: word,
                unknown: false,
                url: run.url.clone(),
            }),
            Conclusion::Unknown(word) => failures.push(CheckFailure {
                name: name.clone(),
                conclusion: word,
                unknown: true,
                url: run.url.clone(),
            }),
        }
    }
    if !failures.is_empty() {
        Verdict::Failed { failures }
    } else if wanted.is_empty() || !missing.is_empty() || !in_progress.is_empty() {
        Verdict::Pending { missing, in_progress }
    } else {
        Verdict::Passed
    }
}

/// `3m12s`, `45s`, `1h02m`: how long a check has been running, in a progress line.
fn elapsed_words(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}h{m:02}m")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}s")
    }
}

/// One progress line of the live run log: `check test: in_progress 3m12s`.
pub fn progress_line(name: &str, status: &str, elapsed_seconds: Option<u64>) -> String {
    let name: String = name.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    match elapsed_seconds {
        Some(secs) => format!("check {name}: {status} {}", elapsed_words(secs)),
        None => format!("check {name}: {status}"),
    }
}

/// Why no wanted check appeared on the commit, for the infra failure's message.
pub const NEVER_APPEARED_HINT: &str = "is a workflow triggered by this event (pull_request on this base branch, with these paths)? Does a fork's PR await a maintainer's approval to run workflows? Do the check names in the commands file match the jobs' names?";

/// The part of a GitHub Actions job log a model can act on: the first failing step's last
/// lines before its `##[error]`. `failed_step` is the step's name from the jobs API.
///
/// Timestamps are dropped, `##[group]`/`##[endgroup]` markers become plain words, at most
/// `max_lines` lines before the error are kept, then the error lines themselves. Without an
/// `##[error]` line the log's last `max_lines` lines are kept.
pub fn job_log_excerpt(log: &str, failed_step: Option<&str>, max_lines: usize) -> String {
    let lines: Vec<&str> = log.lines().map(strip_timestamp).collect();
    let first_error = lines.iter().position(|l| l.starts_with("##[error]"));
    let (start, end) = match first_error {
        Some(err) => {
            // The error's own step begins at the last `##[group]` at or before it.
            let step_start = lines[..err].iter().rposition(|l| l.starts_with("##[group]")).unwrap_or(0);
            let from = err.saturating_sub(max_lines).max(step_start);
            let errors_end =
                lines[err..].iter().position(|l| !l.starts_with("##[error]")).map_or(lines.len(), |n| err + n);
            (from, errors_end)
        }
        None => (lines.len().saturating_sub(max_lines), lines.len()),
    };
    let mut out = Vec::new();
    if let Some(step) = failed_step {
        out.push(format!("Failing step: {step}"));
    }
    for line in &lines[start..end] {
        if line.starts_with("##[endgroup]") {
            continue;
        }
        out.push(match (line.strip_prefix("##[group]"), line.strip_prefix("##[error]")) {
            (Some(rest), _) => rest.to_owned(),
            (_, Some(rest)) => format!("Error: {rest}"),
            _ => (*line).to_owned(),
        });
    }
    out.join("\n")
}

/// `2026-01-02T03:04:05.1234567Z text` → `text` (GitHub Actions' line prefix); other lines as they are.
fn strip_timestamp(line: &str) -> &str {
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    let Some((stamp, rest)) = line.split_once(' ') else {
        return if looks_like_stamp(line) { "" } else { line };
    };
    if looks_like_stamp(stamp) { rest } else { line }
}

fn looks_like_stamp(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 20 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[10] == b'T' && word.ends_with('Z')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(id: u64, name: &str, status: &str, conclusion: Option<&str>, started: Option<&str>) -> ObservedCheck {
        ObservedCheck {
            id,
            name: name.to_owned(),
            status: status.to_owned(),
            conclusion: conclusion.map(str::to_owned),
            started_at: started.map(str::to_owned),
            completed_at: None,
            url: Some(format!("https://example.invalid/runs/{id}")),
            app: Some("github-actions".to_owned()),
        }
    }

    fn done(id: u64, name: &str, conclusion: &str, started: &str) -> ObservedCheck {
        run(id, name, "completed", Some(conclusion), Some(started))
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    const T1: &str = "2026-01-01T10:00:00Z";
    const T2: &str = "2026-01-01T11:00:00Z";

    #[test]
    fn all_passing_conclusions_pass() {
        let runs = [done(1, "test", "success", T1), done(2, "lint", "neutral", T1), done(3, "docs", "skipped", T1)];
        assert_eq!(verdict(&names(&["test", "lint", "docs"]), &runs), Verdict::Passed);
    }

    #[test]
    fn a_rerun_replaces_the_earlier_result() {
        let failed_then_passed = [done(1, "test", "failure", T1), done(2, "test", "success", T2)];
        assert_eq!(verdict(&names(&["test"]), &failed_then_passed), Verdict::Passed);
        // Order in the list does not matter, only started_at.
        let passed_then_failed = [done(2, "test", "failure", T2), done(1, "test", "success", T1)];
        assert!(matches!(verdict(&names(&["test"]), &passed_then_failed), Verdict::Failed { .. }));
        // Same start: the higher id wins.
        let tie = [done(7, "test", "success", T1), done(3, "test", "failure", T1)];
        assert_eq!(verdict(&names(&["test"]), &tie), Verdict::Passed);
        // A queued re-run (no start yet) replaces a finished failure and makes it pending.
        let requeued = [done(1, "test", "failure", T1), run(2, "test", "queued", None, None)];
        assert_eq!(
            verdict(&names(&["test"]), &requeued),
            Verdict::Pending { missing: vec![], in_progress: names(&["test"]) }
        );
    }

    #[test]
    fn a_failure_decides_while_others_are_pending() {
        for word in ["failure", "timed_out", "cancelled", "action_required", "stale"] {
            let runs = [done(1, "lint", word, T1), run(2, "test", "in_progress", None, Some(T1))];
            let Verdict::Failed { failures } = verdict(&names(&["test", "lint", "docs"]), &runs) else {
                panic!("{word} should fail");
            };
            assert_eq!(failures.len(), 1);
            assert_eq!((failures[0].name.as_str(), failures[0].conclusion.as_str()), ("lint", word));
            assert!(!failures[0].unknown);
        }
    }

    #[test]
    fn missing_and_running_names_are_pending() {
        let runs =
            [done(1, "test", "success", T1), run(2, "lint", "queued", None, None), done(3, "other", "failure", T1)];
        assert_eq!(
            verdict(&names(&["test", "lint", "docs"]), &runs),
            Verdict::Pending { missing: names(&["docs"]), in_progress: names(&["lint"]) }
        );
        assert_eq!(verdict(&[], &runs), Verdict::Pending { missing: vec![], in_progress: vec![] });
        assert_eq!(
            verdict(&names(&["test"]), &[]),
            Verdict::Pending { missing: names(&["test"]), in_progress: vec![] }
        );
    }

    #[test]
    fn an_unknown_conclusion_fails_and_is_named() {
        let runs = [done(1, "test", "exploded", T1), run(2, "lint", "completed", None, Some(T1))];
        let Verdict::Failed { failures } = verdict(&names(&["test", "lint"]), &runs) else { panic!("should fail") };
        assert_eq!(failures[0].conclusion, "exploded");
        assert!(failures[0].unknown);
        assert_eq!(failures[1].conclusion, "(none)");
        assert!(failures[1].unknown);
    }

    fn arb_run() -> impl Strategy<Value = ObservedCheck> {
        let names = prop::sample::select(vec!["a", "b", "c"]);
        let words = prop::sample::select(vec!["success", "neutral", "skipped", "failure", "cancelled", "odd"]);
        let statuses = prop::sample::select(vec!["queued", "in_progress", "completed"]);
        (0u64..20, names, statuses, words, prop::option::of(0u8..5)).prop_map(|(id, name, status, word, start)| {
            let started = start.map(|h| format!("2026-01-01T1{h}:00:00Z"));
            run(id, name, status, Some(word), started.as_deref())
        })
    }

    proptest! {
        #[test]
        fn verdict_depends_only_on_each_names_latest_run(runs in prop::collection::vec(arb_run(), 0..12)) {
            let wanted = names(&["a", "b"]);
            let expected = verdict(&wanted, &runs);
            // Order-independent, unless two runs share name, start and id (then the first wins).
            let mut reversed = runs.clone();
            reversed.reverse();
            let keys: Vec<_> = runs.iter().map(|r| (&r.name, &r.started_at, r.id)).collect();
            let distinct = keys.iter().collect::<std::collections::BTreeSet<_>>().len() == keys.len();
            if distinct {
                prop_assert_eq!(verdict(&wanted, &reversed), expected.clone());
            }
            // Only the latest runs matter.
            let latest: Vec<ObservedCheck> = latest_by_name(&runs).into_values().cloned().collect();
            prop_assert_eq!(verdict(&wanted, &latest), expected.clone());
            // Passed means every wanted name's latest run completed with a passing word.
            if expected == Verdict::Passed {
                let by_name = latest_by_name(&runs);
                for name in &wanted {
                    let run = by_name[name.as_str()];
                    prop_assert_eq!(run.status.as_str(), "completed");
                    prop_assert!(matches!(Conclusion::of(run.conclusion.as_deref()), Conclusion::Passing(_)));
                }
            }
        }
    }

    #[test]
    fn the_excerpt_is_the_failing_steps_last_lines_and_its_error() {
        let log = "2026-01-02T03:04:05.1000000Z ##[group]Run actions/checkout@v4\n\
2026-01-02T03:04:05.2000000Z checking out\n\
2026-01-02T03:04:05.3000000Z ##[endgroup]\n\
2026-01-02T03:04:06.0000000Z ##[group]Run sh test.sh\n\
2026-01-02T03:04:06.1000000Z sh test.sh\n\
2026-01-02T03:04:06.2000000Z ##[endgroup]\n\
2026-01-02T03:04:06.3000000Z ok - 2+3=5\n\
2026-01-02T03:04:06.4000000Z not ok - expected 5, got -1\n\
2026-01-02T03:04:06.5000000Z ##[error]Process completed with exit code 1.\n\
2026-01-02T03:04:07.0000000Z Post job cleanup.\n";
        let excerpt = job_log_excerpt(log, Some("Run sh test.sh"), 50);
        assert_eq!(
            excerpt,
            "Failing step: Run sh test.sh\nRun sh test.sh\nsh test.sh\nok - 2+3=5\nnot ok - expected 5, got -1\nError: Process completed with exit code 1."
        );
        // Fewer lines asked: the last ones before the error, never the earlier step.
        let short = job_log_excerpt(log, None, 2);
        assert_eq!(short, "ok - 2+3=5\nnot ok - expected 5, got -1\nError: Process completed with exit code 1.");
        // No error marker: the tail.
        assert_eq!(job_log_excerpt("a\nb\nc\n", None, 2), "b\nc");
        assert_eq!(job_log_excerpt("", None, 5), "");
    }

    #[test]
    fn progress_lines_read_as_the_issue_shows_them() {
        assert_eq!(progress_line("test", "in_progress", Some(192)), "check test: in_progress 3m12s");
        assert_eq!(progress_line("lint\nx", "queued", None), "check lint x: queued");
        assert_eq!(elapsed_words(45), "45s");
        assert_eq!(elapsed_words(3720), "1h02m");
    }

    proptest! {
        #[test]
        fn the_excerpt_never_panics(log in ".{0,400}", max in 0usize..20) {
            let _ = job_log_excerpt(&log, Some("s"), max);
        }
    }
}
