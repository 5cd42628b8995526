//! The records forgeloop's recorders write (`src/results/support/`: Python's `sitecustomize`
//! for unittest, the pytest plugin, the `node --test` reporter), one JSON object a line, each
//! process to a file of its own in the command's results directory (`py-<pid>.jsonl`,
//! `node-<pid>.jsonl`).
//!
//! Version 1. Every record has `"v": 1`, `"r"` (the runner: `unittest`, `pytest`, `node`) and
//! `"k"` (its kind):
//!
//! | `k` | fields | meaning |
//! |---|---|---|
//! | `begin` | `pid` | the process began a run (unittest's `startTestRun`, pytest's session start, node loading the reporter) |
//! | `collected` | `n` | pytest collected `n` tests |
//! | `start` | `id` | a test (an attempt of it) started |
//! | `result` | `id`, `o` | it ended: `o` is `passed`, `failed`, `error`, `skipped`, `xfailed`, `xpassed`, or `rerun` (failed, and will run again) |
//! | `end` | `exit`, `ok`, `stopped`, `tests`, `failed`, `skipped` (each optional) | the run ended: the runner's exit status (`exit`) or success (`ok`), why it stopped early, its own totals |
//!
//! A run begun and never ended in the same file died early. Unknown kinds and fields are
//! ignored, so a later version can add some; a record of another version, or a line that is
//! not a record, counts as dropped.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::collect::{Collector, Reported};
use super::model::{Outcome, Runner};

/// The version of the records this reads.
pub const VERSION: u32 = 1;

#[derive(Deserialize)]
struct Record {
    v: u32,
    r: String,
    k: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    o: Option<String>,
    #[serde(default)]
    exit: Option<i64>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    stopped: Option<serde_json::Value>,
    #[serde(default)]
    tests: Option<u64>,
    #[serde(default)]
    failed: Option<u64>,
    #[serde(default)]
    skipped: Option<u64>,
}

/// Reads one file's records into a command's [`Collector`].
#[derive(Debug, Default)]
pub struct RecordReader {
    /// Runs begun in this file and not yet ended, per runner.
    open: BTreeMap<Runner, u64>,
}

impl RecordReader {
    /// A reader for a new file.
    pub fn new() -> RecordReader {
        RecordReader::default()
    }

    /// Takes one line of the file.
    pub fn line(&mut self, line: &str, into: &mut Collector) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let Ok(record) = serde_json::from_str::<Record>(line) else {
            into.drop_some(1);
            return;
        };
        if record.v != VERSION {
            into.drop_some(1);
            into.note(format!("records of version {} are not read (this forgeloop reads {VERSION})", record.v));
            return;
        }
        let Some(runner) = Runner::parse(&record.r) else {
            into.drop_some(1);
            return;
        };
        match record.k.as_str() {
            "begin" => {
                *self.open.entry(runner).or_insert(0) += 1;
                into.begin(runner);
            }
            "start" => match &record.id {
                Some(id) => into.start(runner, id),
                None => into.drop_some(1),
            },
            "result" => match (&record.id, record.o.as_deref().and_then(reported)) {
                (Some(id), Some(reported)) => into.result(runner, id, reported),
                _ => into.drop_some(1),
            },
            "end" => {
                // An end closes a run this file began; one without is not evidence of anything.
                let open = self.open.entry(runner).or_insert(0);
                if *open > 0 {
                    *open -= 1;
                    into.end(runner);
                }
                if let Some(exit) = record.exit.and_then(|e| i32::try_from(e).ok()) {
                    into.runner_exit(exit);
                } else if let Some(ok) = record.ok {
                    into.runner_exit(if ok { 0 } else { 1 });
                }
                match &record.stopped {
                    Some(serde_json::Value::String(why)) if !why.is_empty() => into.stopped_early(why),
                    Some(serde_json::Value::Bool(true)) => into.stopped_early("stopped at a failure"),
                    _ => {}
                }
                if let Some(tests) = record.tests {
                    into.totals(tests, record.failed.unwrap_or(0), record.skipped.unwrap_or(0));
                }
            }
            _ => {}
        }
    }
}

fn reported(outcome: &str) -> Option<Reported> {
    Some(Reported::Outcome(match outcome {
        "passed" => Outcome::Passed,
        "failed" => Outcome::Failed,
        "error" => Outcome::Error,
        "skipped" => Outcome::Skipped,
        "xfailed" => Outcome::Xfailed,
        "xpassed" => Outcome::Xpassed,
        "rerun" => return Some(Reported::Rerun),
        _ => return None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(files: &[&str]) -> super::super::model::CommandResults {
        let mut c = Collector::new();
        for file in files {
            let mut reader = RecordReader::new();
            for line in file.lines() {
                reader.line(line, &mut c);
            }
        }
        c.finish(0, vec!["python3".into(), "-m".into(), "pytest".into()])
    }

    /// Written by the pytest plugin under pytest 9.2.0 with pytest-rerunfailures: every kind of
    /// report.
    const PYTEST: &str = include_str!("fixtures/pytest_records.jsonl");
    /// The same suite with `-x`.
    const PYTEST_X: &str = include_str!("fixtures/pytest_x_records.jsonl");
    /// Written by the unittest recorder (Python 3.11): a failing test, a subtest, a skip, an
    /// expected failure.
    const UNITTEST: &str = include_str!("fixtures/unittest_records.jsonl");
    /// The same suite whose code under test calls `os._exit(0)` inside `test_big`.
    const UNITTEST_EXIT: &str = include_str!("fixtures/unittest_exit_records.jsonl");
    /// Written by the node reporter under `node --test` (Node 20.20): nested suites, a skip, a
    /// todo, a subtest.
    const NODE: &str = include_str!("fixtures/node_records.jsonl");

    #[test]
    fn pytest_records_every_outcome() {
        let r = read(&[PYTEST]);
        assert_eq!(r.runners, vec![Runner::Pytest]);
        assert_eq!((r.processes.begun, r.processes.ended), (1, 1));
        let outcome = |id: &str| r.test(id).unwrap_or_else(|| panic!("{id}: {:?}", r.tests)).outcome;
        assert_eq!(outcome("test_p.py::test_ok"), Outcome::Passed);
        assert_eq!(outcome("test_p.py::test_big"), Outcome::Failed);
        assert_eq!(outcome("test_p.py::test_skip"), Outcome::Skipped);
        assert_eq!(outcome("test_p.py::test_xf"), Outcome::Xfailed);
        assert_eq!(outcome("test_p.py::test_xp"), Outcome::Xpassed);
        assert_eq!(outcome("test_p.py::test_xp_strict"), Outcome::Failed);
        assert_eq!(outcome("test_p.py::test_setup_err"), Outcome::Error);
        assert_eq!(outcome("test_p.py::test_flaky"), Outcome::Passed);
        assert_eq!(outcome("test_p.py::test_param[<test_p.Obj object at 0x…>]"), Outcome::Passed);
        assert_eq!(r.counts.total(), 10);
        assert_eq!(r.counts.failures(), 3);
        assert_eq!(r.runner_exit, Some(1));
        assert_eq!(r.stopped_early, None);
    }

    #[test]
    fn pytest_first_failure_stop_is_recorded() {
        let r = read(&[PYTEST_X]);
        assert_eq!(r.stopped_early.as_deref(), Some("stopping after 1 failures"));
        assert_eq!(r.counts.total(), 2);
    }

    #[test]
    fn unittest_records_and_a_process_that_died_inside_a_test() {
        let r = read(&[UNITTEST]);
        assert_eq!(r.runners, vec![Runner::Unittest]);
        assert_eq!(r.counts.passed, 1);
        assert_eq!(r.counts.failed, 2, "{:?}", r.tests);
        assert_eq!(r.counts.skipped, 1);
        assert_eq!(r.counts.xfailed, 1);
        assert_eq!(r.runner_exit, Some(1));
        assert_eq!(r.processes.unended(), 0);
        assert_eq!(r.totals.map(|t| t.tests), Some(5));

        let died = read(&[UNITTEST_EXIT]);
        assert_eq!(died.processes.unended(), 1);
        assert_eq!(died.test("test_m.TestM.test_big").unwrap().outcome, Outcome::Unfinished);
    }

    #[test]
    fn node_records_name_the_enclosing_suites() {
        let r = read(&[NODE]);
        assert_eq!(r.runners, vec![Runner::Node]);
        assert_eq!(r.test("test/a.test.mjs > outer > inner > fails").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("test/a.test.mjs > outer > skipped").unwrap().outcome, Outcome::Skipped);
        assert_eq!(r.test("test/a.test.mjs > outer > todo").unwrap().outcome, Outcome::Xfailed);
        assert_eq!(r.test("test/b.test.mjs > b ok").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.counts.total(), 7);
        assert_eq!((r.processes.begun, r.processes.ended), (1, 1));
    }

    #[test]
    fn an_end_without_its_begin_hides_no_other_files_unended_run() {
        let r = read(&[r#"{"v":1,"r":"pytest","k":"begin","pid":1}"#, r#"{"v":1,"r":"pytest","k":"end","exit":0}"#]);
        assert_eq!(r.processes.unended(), 1);
    }

    #[test]
    fn garbage_and_other_versions_are_dropped_not_trusted() {
        let r = read(&["not json\n{\"v\":2,\"r\":\"pytest\",\"k\":\"result\",\"id\":\"a\",\"o\":\"passed\"}\n\
             {\"v\":1,\"r\":\"jest\",\"k\":\"result\",\"id\":\"a\",\"o\":\"passed\"}\n\
             {\"v\":1,\"r\":\"pytest\",\"k\":\"result\",\"id\":\"a\",\"o\":\"great\"}\n\
             {\"v\":1,\"r\":\"pytest\",\"k\":\"future\"}\n"]);
        assert_eq!(r.counts.total(), 0);
        assert_eq!(r.dropped, 4);
        assert_eq!(r.notes.len(), 1);
    }
}
