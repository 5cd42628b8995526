//! cargo-nextest's human output (as documented at nexte.st): `Starting N tests across M
//! binaries`, a status line per test (`PASS [   0.003s] tiny tests::adds`, `FAIL`, `SKIP`,
//! `SIGSEGV`, `TIMEOUT`, `LEAK`, `FLAKY 2/3`, `TRY 2 PASS`, `START`; newer versions put a
//! `(3/14)` counter before the test), `Cancelling due to test failure` (a first-failure stop)
//! and the `Summary [ … ] N tests run: …` line that ends the run. A test's id is nextest's own:
//! its binary id and its name.

use super::collect::{Collector, Reported};
use super::model::{Outcome, Runner};

const RUNNER: Runner = Runner::Nextest;

#[derive(Debug, Default)]
pub(super) struct Nextest {
    open: bool,
}

impl Nextest {
    pub(super) fn line(&mut self, line: &str, into: &mut Collector) {
        let trimmed = line.trim();
        if trimmed.starts_with("Starting ") && (trimmed.contains(" tests across ") || trimmed.contains(" test across "))
        {
            if !self.open {
                self.open = true;
                into.begin(RUNNER);
            }
            return;
        }
        if trimmed.starts_with("Cancelling due to test failure") || trimmed.starts_with("Canceling due to test failure")
        {
            into.stopped_early("nextest stopped at the first failure (fail-fast)");
            return;
        }
        let Some((status, after)) = trimmed.split_once(" [") else { return };
        let Some((bracket, rest)) = after.split_once("] ") else { return };
        if !bracket.bytes().all(|b| b.is_ascii_digit() || b" .s>".contains(&b)) {
            return;
        }
        if status == "Summary" {
            if self.open {
                self.summary(rest, into);
                self.open = false;
            }
            return;
        }
        if !self.open {
            return;
        }
        let id = strip_counter(rest).trim();
        if id.is_empty() || !id.contains(' ') {
            return;
        }
        let words: Vec<&str> = status.split_whitespace().collect();
        let (retried, word) = match words.as_slice() {
            ["TRY", n, word] if n.bytes().all(|b| b.is_ascii_digit()) => (true, *word),
            ["FLAKY", _] => (false, "PASS"),
            [word] => (false, *word),
            _ => return,
        };
        let outcome = match word {
            "START" => return into.start(RUNNER, id),
            "PASS" | "LEAK" => Outcome::Passed,
            "SKIP" => Outcome::Skipped,
            "FAIL" | "LEAK-FAIL" | "TIMEOUT" | "ABORT" => Outcome::Failed,
            _ if word.starts_with("SIG") && word.len() > 3 && word.bytes().all(|b| b.is_ascii_uppercase()) => {
                Outcome::Failed
            }
            _ => return,
        };
        let reported = if retried && outcome == Outcome::Failed { Reported::Rerun } else { Reported::Outcome(outcome) };
        into.result(RUNNER, id, reported);
    }

    fn summary(&self, rest: &str, into: &mut Collector) {
        // `14 tests run: 13 passed, 1 failed, 177 skipped`
        let Some((run, parts)) = rest.split_once(" run: ") else {
            into.end(RUNNER);
            return;
        };
        let number = |text: &str| text.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
        let tests = number(run);
        let (mut failed, mut skipped) = (0, 0);
        for part in parts.split(',').map(str::trim) {
            let n = number(part);
            if part.ends_with(" skipped") {
                skipped += n;
            } else if !part.ends_with(" passed") && !part.contains("flaky") && !part.contains("leaky") {
                failed += n;
            }
        }
        into.totals(tests + skipped, failed, skipped);
        into.end(RUNNER);
    }

    /// Inside a run (between `Starting` and `Summary`).
    pub(super) fn is_open(&self) -> bool {
        self.open
    }

    pub(super) fn finish(&mut self, _into: &mut Collector) {}
}

/// Drops a `(3/14) ` progress counter.
fn strip_counter(rest: &str) -> &str {
    if let Some(inner) = rest.strip_prefix('(')
        && let Some((counter, after)) = inner.split_once(") ")
        && counter.bytes().all(|b| b.is_ascii_digit() || b == b'/')
    {
        return after;
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::super::model::CommandResults;
    use super::*;

    fn parse(text: &str) -> CommandResults {
        let mut c = Collector::new();
        let mut p = Nextest::default();
        for line in text.lines() {
            p.line(line, &mut c);
        }
        p.finish(&mut c);
        c.finish(0, vec![])
    }

    /// nextest's documented output (nexte.st, "Running tests"), with a failure, a retried test,
    /// a skip and a newer version's counter.
    const RUN: &str = include_str!("fixtures/nextest.txt");

    #[test]
    fn status_lines_and_summary() {
        let r = parse(RUN);
        assert_eq!(r.test("nextest-runner reporter::tests::no_capture_settings").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("tiny tests::fails").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("tiny tests::flaky").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("tiny tests::slow").unwrap().outcome, Outcome::Skipped);
        assert_eq!(r.test("tiny tests::segv").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("tiny tests::counted").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.processes.unended(), 0);
        assert_eq!(r.totals.map(|t| t.failed), Some(2));
        assert!(r.stopped_early.is_some());
    }

    #[test]
    fn a_run_that_never_sums_up_is_unended() {
        let r = parse("    Starting 2 tests across 1 binary\n        START [         ] tiny a\n");
        assert_eq!(r.processes.unended(), 1);
        assert_eq!(r.test("tiny a").unwrap().outcome, Outcome::Unfinished);
    }

    #[test]
    fn lines_before_a_run_are_not_tests() {
        assert_eq!(parse("        PASS [   0.003s] tiny a\n").counts.total(), 0);
    }
}
