//! Gathering one command's results from every source (the recorders' records, the output's
//! lines) into a [`CommandResults`]: retries resolve to the last attempt, two reports of one
//! attempt to the worse, a test started and not finished since is [`Outcome::Unfinished`], and
//! memory stays bounded whatever a command reports.

use std::collections::{BTreeMap, BTreeSet};

use super::ids;
use super::model::{
    CommandResults, Counts, LIST_ALL, LIST_NOTABLE, Outcome, Processes, RanDigest, Runner, Test, Totals,
};

/// The most distinct tests one command's results hold in memory; results for further ids are
/// counted as dropped.
pub const MAX_TESTS: usize = 250_000;
/// The most notes one command keeps.
const MAX_NOTES: usize = 8;

/// A test's outcome as a runner reports it: an outcome, or a failed attempt that will be run
/// again (pytest-rerunfailures' `rerun`, nextest's `TRY 1 FAIL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reported {
    /// The attempt ended so.
    Outcome(Outcome),
    /// The attempt failed and the test will be retried.
    Rerun,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The last attempt's outcome so far.
    outcome: Option<Reported>,
    /// An attempt started and has no outcome yet.
    open: bool,
}

/// One command's results as they come in.
#[derive(Debug, Default)]
pub struct Collector {
    tests: BTreeMap<String, Slot>,
    runners: BTreeSet<Runner>,
    processes: Processes,
    stopped_early: Option<String>,
    runner_exit: Option<i32>,
    totals: Option<Totals>,
    dropped: u64,
    notes: Vec<String>,
}

impl Collector {
    /// Nothing collected yet.
    pub fn new() -> Collector {
        Collector::default()
    }

    /// A runner began a run (a process started reporting).
    pub fn begin(&mut self, runner: Runner) {
        self.runners.insert(runner);
        self.processes.begun += 1;
    }

    /// A runner ended a run it began.
    pub fn end(&mut self, runner: Runner) {
        self.runners.insert(runner);
        self.processes.ended += 1;
    }

    /// A test started (an attempt of it, when it is retried).
    pub fn start(&mut self, runner: Runner, id: &str) {
        self.runners.insert(runner);
        if let Some(slot) = self.slot(id) {
            slot.open = true;
        }
    }

    /// A test's attempt ended so. After a start (or a rerun) it replaces what the test had; a
    /// second report of the same attempt (a teardown error after the call, a duplicate name)
    /// keeps the worse of the two.
    pub fn result(&mut self, runner: Runner, id: &str, reported: Reported) {
        self.runners.insert(runner);
        let Some(slot) = self.slot(id) else { return };
        slot.outcome = match (slot.outcome, reported, slot.open) {
            (Some(Reported::Outcome(old)), Reported::Outcome(new), false) if old.severity() > new.severity() => {
                Some(Reported::Outcome(old))
            }
            _ => Some(reported),
        };
        slot.open = false;
    }

    /// The runner stopped at a first failure; `why` in its words.
    pub fn stopped_early(&mut self, why: &str) {
        if self.stopped_early.is_none() {
            self.stopped_early = Some(why.chars().take(200).collect());
        }
    }

    /// The exit status the runner itself ended with; a failing one wins over a passing one.
    pub fn runner_exit(&mut self, code: i32) {
        if self.runner_exit.is_none_or(|old| old == 0) {
            self.runner_exit = Some(code);
        }
    }

    /// Adds a runner's own totals.
    pub fn totals(&mut self, tests: u64, failed: u64, skipped: u64) {
        let totals = self.totals.get_or_insert_with(Totals::default);
        totals.tests = totals.tests.saturating_add(tests);
        totals.failed = totals.failed.saturating_add(failed);
        totals.skipped = totals.skipped.saturating_add(skipped);
    }

    /// Counts results that could not be kept or read.
    pub fn drop_some(&mut self, count: u64) {
        self.dropped = self.dropped.saturating_add(count);
    }

    /// A note for the report (bounded).
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if self.notes.len() < MAX_NOTES && !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// How many distinct tests it holds.
    pub fn len(&self) -> usize {
        self.tests.len()
    }

    /// It holds no test.
    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    fn slot(&mut self, raw: &str) -> Option<&mut Slot> {
        let id = ids::normalise(raw);
        if !self.tests.contains_key(&id) && self.tests.len() >= MAX_TESTS {
            self.dropped = self.dropped.saturating_add(1);
            return None;
        }
        Some(self.tests.entry(id).or_insert(Slot { outcome: None, open: false }))
    }

    /// The command's results, bounded ([`LIST_ALL`], [`LIST_NOTABLE`]).
    pub fn finish(self, command: usize, argv: Vec<String>) -> CommandResults {
        self.finish_moved(command, argv, &ids::Renames::default())
    }

    /// The command's results, with the base's names of the tests that ran in files the change
    /// moved (`renames`), for the judgement.
    pub fn finish_moved(self, command: usize, argv: Vec<String>, renames: &ids::Renames) -> CommandResults {
        let mut counts = Counts::default();
        let mut all: Vec<Test> = Vec::with_capacity(self.tests.len());
        for (id, slot) in self.tests {
            let outcome = match (slot.open, slot.outcome) {
                (true, _) | (false, None) => Outcome::Unfinished,
                (false, Some(Reported::Rerun)) => Outcome::Failed,
                (false, Some(Reported::Outcome(outcome))) => outcome,
            };
            counts.add(outcome);
            all.push(Test { id, outcome });
        }
        let moved: Vec<u32> = if renames.is_empty() {
            Vec::new()
        } else {
            all.iter().filter(|t| t.outcome.ran()).filter_map(|t| renames.back(&t.id)).map(|id| ids::key(&id)).collect()
        };
        let ran_moved = (!moved.is_empty()).then(|| RanDigest::of(moved));
        let listed_all = all.len() <= LIST_ALL;
        let (tests, ran_digest) = if listed_all {
            (all, None)
        } else {
            let digest = RanDigest::of(all.iter().filter(|t| t.outcome.ran()).map(|t| ids::key(&t.id)));
            let mut notable: Vec<Test> = all.into_iter().filter(|t| t.outcome != Outcome::Passed).collect();
            // The worst first when they must be cut, then back in id order.
            notable.sort_by(|a, b| b.outcome.severity().cmp(&a.outcome.severity()).then_with(|| a.id.cmp(&b.id)));
            notable.truncate(LIST_NOTABLE);
            notable.sort();
            (notable, Some(digest))
        };
        CommandResults {
            command,
            argv,
            not_run: false,
            runners: self.runners.into_iter().collect(),
            counts,
            processes: self.processes,
            stopped_early: self.stopped_early,
            runner_exit: self.runner_exit,
            totals: self.totals,
            tests,
            listed_all,
            ran_digest,
            ran_moved,
            dropped: self.dropped,
            notes: self.notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: Runner = Runner::Pytest;

    #[test]
    fn retries_resolve_to_the_last_attempt() {
        let mut c = Collector::new();
        c.start(PY, "t::flaky");
        c.result(PY, "t::flaky", Reported::Rerun);
        c.start(PY, "t::flaky");
        c.result(PY, "t::flaky", Reported::Outcome(Outcome::Passed));
        // A test reported twice with a start between: the later report stands.
        c.start(PY, "t::twice");
        c.result(PY, "t::twice", Reported::Outcome(Outcome::Failed));
        c.start(PY, "t::twice");
        c.result(PY, "t::twice", Reported::Outcome(Outcome::Passed));
        // A rerun then the final report without a start of its own.
        c.result(PY, "t::quiet", Reported::Rerun);
        c.result(PY, "t::quiet", Reported::Outcome(Outcome::Passed));
        let r = c.finish(0, vec![]);
        assert_eq!(r.counts.passed, 3);
        assert_eq!(r.counts.total(), 3);
    }

    #[test]
    fn two_reports_of_one_attempt_keep_the_worse() {
        let mut c = Collector::new();
        c.start(PY, "t::teardown");
        c.result(PY, "t::teardown", Reported::Outcome(Outcome::Passed));
        c.result(PY, "t::teardown", Reported::Outcome(Outcome::Error));
        c.result(Runner::Libtest, "doc", Reported::Outcome(Outcome::Failed));
        c.result(Runner::Libtest, "doc", Reported::Outcome(Outcome::Passed));
        let r = c.finish(0, vec![]);
        assert_eq!(r.test("t::teardown").unwrap().outcome, Outcome::Error);
        assert_eq!(r.test("doc").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.runners, vec![Runner::Pytest, Runner::Libtest]);
    }

    #[test]
    fn a_test_started_and_not_finished_is_unfinished() {
        let mut c = Collector::new();
        c.begin(PY);
        c.start(PY, "t::ok");
        c.result(PY, "t::ok", Reported::Outcome(Outcome::Passed));
        c.start(PY, "t::dies");
        // A retry that never finished is unfinished too.
        c.start(PY, "t::retried");
        c.result(PY, "t::retried", Reported::Rerun);
        c.start(PY, "t::retried");
        let r = c.finish(2, vec!["pytest".into()]);
        assert_eq!(r.test("t::dies").unwrap().outcome, Outcome::Unfinished);
        assert_eq!(r.test("t::retried").unwrap().outcome, Outcome::Unfinished);
        assert_eq!(r.counts.unfinished, 2);
        assert_eq!(r.processes.unended(), 1);
        assert_eq!(r.command, 2);
        assert!(r.listed_all);
    }

    #[test]
    fn parametrised_ids_with_addresses_are_one_test() {
        let mut c = Collector::new();
        c.start(PY, "t.py::test_p[<O object at 0x7f0000001>]");
        c.result(PY, "t.py::test_p[<O object at 0x7f0000002>]", Reported::Outcome(Outcome::Passed));
        let r = c.finish(0, vec![]);
        assert_eq!(r.counts.passed, 1);
        assert_eq!(r.counts.total(), 1);
    }

    #[test]
    fn a_large_suite_is_kept_as_a_digest_with_its_notable_tests_named() {
        let mut c = Collector::new();
        for i in 0..100_000 {
            let outcome = if i % 1000 == 0 { Outcome::Failed } else { Outcome::Passed };
            c.result(PY, &format!("tests/test_big.py::test_{i:06}"), Reported::Outcome(outcome));
        }
        let r = c.finish(0, vec![]);
        assert!(!r.listed_all);
        assert_eq!(r.counts.failed, 100);
        assert_eq!(r.tests.len(), 100);
        assert!(r.tests.iter().all(|t| t.outcome == Outcome::Failed));
        assert_eq!(r.ran_keys().len(), 100_000);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.len() < 600_000, "{} bytes", json.len());
        let back: CommandResults = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn memory_is_bounded() {
        let mut c = Collector::new();
        for i in 0..MAX_TESTS + 10 {
            c.result(PY, &format!("t{i}"), Reported::Outcome(Outcome::Passed));
        }
        assert_eq!(c.len(), MAX_TESTS);
        let r = c.finish(0, vec![]);
        assert_eq!(r.dropped, 10);
    }
}
