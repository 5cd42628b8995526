//! What a run's test runners said, per command: which runners reported, each test's final
//! outcome, the tests that started and never finished, whether each reporting process ended
//! its run, whether the runner stopped at a first failure, and the runner's own totals.
//! Serialisable (reports and the base's baseline file carry it) and bounded: a suite of up to
//! [`LIST_ALL`] tests is listed whole; a larger one keeps its counts, a digest of the tests that
//! ran ([`RanDigest`]) and the notable ones (not passed) by name.

use std::collections::BTreeSet;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// The version of the serialised form ([`RunResults::format`]).
pub const FORMAT: u32 = 1;
/// A command's tests are listed by name up to this many; beyond, a digest stands for them.
pub const LIST_ALL: usize = 2_000;
/// Beyond [`LIST_ALL`], the tests that did not pass are still listed by name, up to this many.
pub const LIST_NOTABLE: usize = 500;

/// A test runner whose own per-test results forgeloop reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    /// Python's unittest, through forgeloop's `sitecustomize` recorder.
    Unittest,
    /// pytest, through forgeloop's plugin.
    Pytest,
    /// `node --test` and `node:test`, through forgeloop's reporter.
    Node,
    /// Rust's libtest (`cargo test`), from its output.
    Libtest,
    /// cargo-nextest, from its output.
    Nextest,
    /// `go test` (`-v`, `-json`, or its package lines), from its output.
    Go,
    /// Any TAP producer, from its output.
    Tap,
}

impl Runner {
    /// The runner's name in records, reports and words.
    pub fn as_str(self) -> &'static str {
        match self {
            Runner::Unittest => "unittest",
            Runner::Pytest => "pytest",
            Runner::Node => "node",
            Runner::Libtest => "libtest",
            Runner::Nextest => "nextest",
            Runner::Go => "go",
            Runner::Tap => "tap",
        }
    }

    /// The runner a record names, if forgeloop knows it.
    pub fn parse(name: &str) -> Option<Runner> {
        [Runner::Unittest, Runner::Pytest, Runner::Node, Runner::Libtest, Runner::Nextest, Runner::Go, Runner::Tap]
            .into_iter()
            .find(|runner| runner.as_str() == name)
    }
}

/// How a test ended, as its runner reported it (the last attempt's outcome, for a retried one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It ran and passed.
    Passed,
    /// It ran and an assertion failed.
    Failed,
    /// It could not run to its end: a setup, teardown or unexpected error.
    Error,
    /// The runner did not run it (skipped, ignored, filtered by a marker).
    Skipped,
    /// An expected failure that failed: it ran, and it is not a failure.
    Xfailed,
    /// An expected failure that passed (a strict one is reported `Failed` by its runner).
    Xpassed,
    /// It started and never finished: the process ended inside it.
    Unfinished,
}

impl Outcome {
    /// Its name in reports and words.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Error => "error",
            Outcome::Skipped => "skipped",
            Outcome::Xfailed => "xfailed",
            Outcome::Xpassed => "xpassed",
            Outcome::Unfinished => "unfinished",
        }
    }

    /// The test ran to an outcome (not skipped, not cut short).
    pub fn ran(self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Failed | Outcome::Error | Outcome::Xfailed | Outcome::Xpassed)
    }

    /// A failure the run's exit status must reflect.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::Error)
    }

    /// It ran and nothing failed.
    pub fn ok(self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Xfailed | Outcome::Xpassed)
    }

    /// Which of two reports of one test (without a retry between them) stands: the worse.
    pub(crate) fn severity(self) -> u8 {
        match self {
            Outcome::Skipped => 0,
            Outcome::Xfailed => 1,
            Outcome::Passed => 2,
            Outcome::Xpassed => 3,
            Outcome::Unfinished => 4,
            Outcome::Failed => 5,
            Outcome::Error => 6,
        }
    }
}

/// One test and how it ended. Its id is the runner's own (a pytest node id, a unittest id, a
/// libtest path with its target), normalised ([`super::ids`]) and unique within its command.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Test {
    /// The test's id.
    pub id: String,
    /// How it ended.
    pub outcome: Outcome,
}

/// How many tests ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Ran and passed.
    pub passed: u64,
    /// Ran and failed.
    pub failed: u64,
    /// Ran into an error.
    pub error: u64,
    /// Not run by the runner.
    pub skipped: u64,
    /// Expected failures that failed.
    pub xfailed: u64,
    /// Expected failures that passed.
    pub xpassed: u64,
    /// Started and never finished.
    pub unfinished: u64,
}

impl Counts {
    /// Counts one more test.
    pub fn add(&mut self, outcome: Outcome) {
        let slot = match outcome {
            Outcome::Passed => &mut self.passed,
            Outcome::Failed => &mut self.failed,
            Outcome::Error => &mut self.error,
            Outcome::Skipped => &mut self.skipped,
            Outcome::Xfailed => &mut self.xfailed,
            Outcome::Xpassed => &mut self.xpassed,
            Outcome::Unfinished => &mut self.unfinished,
        };
        *slot += 1;
    }

    /// Every test reported.
    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.error + self.skipped + self.xfailed + self.xpassed + self.unfinished
    }

    /// The tests that ran to an outcome ([`Outcome::ran`]).
    pub fn ran(&self) -> u64 {
        self.passed + self.failed + self.error + self.xfailed + self.xpassed
    }

    /// The tests that ran and did not fail ([`Outcome::ok`]).
    pub fn ok(&self) -> u64 {
        self.passed + self.xfailed + self.xpassed
    }

    /// Failures and errors.
    pub fn failures(&self) -> u64 {
        self.failed + self.error
    }
}

/// What a runner itself counted (its summary line or its end record), summed over its runs,
/// for what it does not itemise (libtest's quiet output, go's package lines).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Tests the runner said it ran (or collected, when that is all it said).
    pub tests: u64,
    /// Of them, failed (errors included).
    pub failed: u64,
    /// Skipped or ignored.
    pub skipped: u64,
}

/// The reporting processes of one command: a process that began a run (a unittest
/// `startTestRun`, a pytest session, a node reporter, a libtest binary's `running N tests`…)
/// and never ended it died early.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Processes {
    /// Runs begun.
    pub begun: u64,
    /// Of them, ended with the runner's own end (a summary, an end record).
    pub ended: u64,
}

impl Processes {
    /// Runs begun and never ended.
    pub fn unended(&self) -> u64 {
        self.begun.saturating_sub(self.ended)
    }
}

/// What one test command's runners reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResults {
    /// The command's 0-based index among the run's test commands (setup commands are not
    /// tests): with it, two commands' tests never collide.
    pub command: usize,
    /// The command as run.
    pub argv: Vec<String>,
    /// It did not run (an earlier command failed).
    #[serde(default, skip_serializing_if = "is_false")]
    pub not_run: bool,
    /// The runners that reported, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runners: Vec<Runner>,
    /// Every test, by outcome.
    pub counts: Counts,
    /// The reporting processes' runs.
    pub processes: Processes,
    /// Why the runner stopped at a first failure (`-x`, `--maxfail`, cargo's fail-fast, a TAP
    /// `Bail out!`), when it did: the tests after it did not run, and that says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// The exit status the runner itself ended with (pytest's `exitstatus`; 0 or 1 for a
    /// unittest run by whether it was successful), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_exit: Option<i32>,
    /// The runners' own totals, when they gave some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
    /// The tests, sorted by id: every one when `listed_all`, else the notable ones (not
    /// passed), at most [`LIST_NOTABLE`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<Test>,
    /// `tests` lists every test.
    #[serde(default)]
    pub listed_all: bool,
    /// When not every test is listed: the tests that ran, as a digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_digest: Option<RanDigest>,
    /// The tests that ran in a file the change moved, under the names the base gave them
    /// ([`super::ids::Renames`]): the same tests, not tests that stopped running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_moved: Option<RanDigest>,
    /// Test results forgeloop could not keep (beyond its memory bound) or records it could not
    /// read; they are in no count.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
    /// What forgeloop could not do for this command (e.g. a node command that chose its own
    /// reporter), for the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl CommandResults {
    /// An empty result for a command (nothing reported yet).
    pub fn empty(command: usize, argv: Vec<String>) -> CommandResults {
        CommandResults { command, argv, listed_all: true, ..CommandResults::default() }
    }

    /// Some runner reported something: tests, or at least totals.
    pub fn itemised(&self) -> bool {
        self.counts.total() > 0 || self.totals.is_some_and(|t| t.tests > 0)
    }

    /// How many tests ran to an outcome: counted, or the runner's totals when it itemised none.
    pub fn ran(&self) -> u64 {
        match (self.counts.total(), self.totals) {
            (0, Some(totals)) => totals.tests.saturating_sub(totals.skipped),
            _ => self.counts.ran(),
        }
    }

    /// The keys ([`super::ids::key`]) of the tests that ran.
    pub fn ran_keys(&self) -> BTreeSet<u32> {
        match (&self.ran_digest, self.listed_all) {
            (Some(digest), false) => digest.keys().into_iter().collect(),
            _ => self.tests.iter().filter(|t| t.outcome.ran()).map(|t| super::ids::key(&t.id)).collect(),
        }
    }

    /// The base's keys of the tests that ran in a moved file.
    pub fn moved_keys(&self) -> BTreeSet<u32> {
        self.ran_moved.as_ref().map(|d| d.keys().into_iter().collect()).unwrap_or_default()
    }

    /// The listed test with this id.
    pub fn test(&self, id: &str) -> Option<&Test> {
        self.tests.binary_search_by(|t| t.id.as_str().cmp(id)).ok().and_then(|i| self.tests.get(i))
    }

    /// The listed tests that failed or erred, in id order.
    pub fn failures(&self) -> impl Iterator<Item = &Test> {
        self.tests.iter().filter(|t| t.outcome.is_failure())
    }
}

/// Every test command of one run, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunResults {
    /// The serialised form's version ([`FORMAT`]).
    pub format: u32,
    /// One per test command of the profile.
    pub commands: Vec<CommandResults>,
}

impl RunResults {
    /// The results of `commands`, in the current format.
    pub fn new(commands: Vec<CommandResults>) -> RunResults {
        RunResults { format: FORMAT, commands }
    }

    /// The command with this index, when there is one.
    pub fn command(&self, index: usize) -> Option<&CommandResults> {
        self.commands.iter().find(|c| c.command == index)
    }
}

/// The tests of a command that ran, as sorted 32-bit keys of their ids ([`super::ids::key`]),
/// delta-encoded as LEB128 varints, in base64: about 3 bytes a test for a suite of 100,000.
/// Two different ids share a key once in four billion pairs; the judgement can then miss that
/// one of them did not run, never invent a test that did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RanDigest(pub String);

impl RanDigest {
    /// The digest of `keys` (in any order; duplicates count once).
    pub fn of(keys: impl IntoIterator<Item = u32>) -> RanDigest {
        let sorted: BTreeSet<u32> = keys.into_iter().collect();
        let mut bytes = Vec::with_capacity(sorted.len() * 3);
        let mut previous = 0u32;
        for key in sorted {
            let mut delta = key - previous;
            previous = key;
            loop {
                let low = (delta & 0x7f) as u8;
                delta >>= 7;
                if delta == 0 {
                    bytes.push(low);
                    break;
                }
                bytes.push(low | 0x80);
            }
        }
        RanDigest(STANDARD.encode(bytes))
    }

    /// The keys it holds, ascending; a damaged digest gives the keys before the damage.
    pub fn keys(&self) -> Vec<u32> {
        let bytes = STANDARD.decode(&self.0).unwrap_or_default();
        let mut keys = Vec::new();
        let mut previous = 0u32;
        let mut delta = 0u32;
        let mut shift = 0u32;
        for byte in bytes {
            if shift > 28 {
                break;
            }
            delta |= u32::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                let Some(key) = previous.checked_add(delta).filter(|k| keys.is_empty() || *k > previous) else {
                    break;
                };
                keys.push(key);
                previous = key;
                delta = 0;
                shift = 0;
            } else {
                shift += 7;
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_round_trip_and_stay_small() {
        let keys: Vec<u32> = (0..100_000u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let digest = RanDigest::of(keys.iter().copied());
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(digest.keys(), sorted);
        // About 4 base64 characters a test for 100,000 tests: well under a megabyte.
        assert!(digest.0.len() < 450_000, "{}", digest.0.len());
        assert_eq!(RanDigest::of([]).keys(), Vec::<u32>::new());
        assert_eq!(RanDigest::of([0, u32::MAX, 7]).keys(), vec![0, 7, u32::MAX]);
        // Damage gives nothing or a prefix, never a panic.
        assert!(RanDigest("%%%".into()).keys().is_empty());
        assert!(RanDigest("////////".into()).keys().len() <= 6);
    }

    #[test]
    fn runners_and_outcomes_have_their_names() {
        for runner in [Runner::Unittest, Runner::Pytest, Runner::Node, Runner::Libtest, Runner::Nextest, Runner::Go] {
            assert_eq!(Runner::parse(runner.as_str()), Some(runner));
            assert_eq!(serde_json::to_value(runner).unwrap(), runner.as_str());
        }
        assert_eq!(Runner::parse("jest"), None);
        assert_eq!(serde_json::to_value(Outcome::Xfailed).unwrap(), "xfailed");
        assert!(Outcome::Xfailed.ran() && Outcome::Xfailed.ok() && !Outcome::Xfailed.is_failure());
        assert!(!Outcome::Skipped.ran() && !Outcome::Unfinished.ran());
    }
}
