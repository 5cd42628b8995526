//! Rust's libtest, as `cargo test` prints it (its stable, human output): cargo's target headers
//! (`Running unittests src/lib.rs (target/debug/deps/tiny-0123abcd)`, `Running tests/t.rs (…)`,
//! `Doc-tests tiny`), each binary's `running N tests`, `test a::b ... ok | FAILED | ignored`,
//! `test result: …` and cargo's fail-fast (`error: test failed, to rerun pass …` with no target
//! after it). A test's id is its target (the binary's name without cargo's hash, and its source)
//! and its name: `tiny src/lib.rs: tests::adds`, `t tests/t.rs: it_works`, `tiny doc-tests:
//! src/lib.rs - add` (a doc test's line number dropped: a line added above it moves it). A
//! target announced and never summed up (`test result:`) is a process that died early — a
//! constructor that exits, a test that calls `exit(0)`. Quiet output (`-q`: dots) itemises
//! nothing; its totals still count. libtest's JSON events (`--format json`) are read too.

use super::collect::{Collector, Reported};
use super::ids;
use super::model::{Outcome, Runner};

const RUNNER: Runner = Runner::Libtest;
/// The most names a `failures:` list keeps (it only resolves tests whose result line was lost
/// in their own output).
const MAX_FAILURES: usize = 1_000;

#[derive(Debug, Default)]
pub(super) struct Libtest {
    /// The current target's key, from cargo's header.
    target: Option<String>,
    /// A run (target or bare binary) begun and not yet summed up.
    open: bool,
    /// Inside a binary's run, after its `running N tests`.
    running: bool,
    /// The binary printed a line per test (not quiet).
    itemised: bool,
    /// A test whose result line was interrupted by its own output (`--nocapture`).
    pending: Option<String>,
    /// Reading a `failures:` list.
    in_failures: bool,
    failures: Vec<String>,
    /// cargo stopped after a failing target, unless another target follows.
    fail_fast: Option<String>,
}

impl Libtest {
    pub(super) fn line(&mut self, line: &str, into: &mut Collector) {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("Running ")
            && let Some(key) = target_key(rest)
        {
            self.open_target(Some(key), into);
            return;
        }
        if let Some(krate) = trimmed.strip_prefix("Doc-tests ")
            && !krate.is_empty()
            && !krate.contains(' ')
        {
            self.open_target(Some(format!("{krate} doc-tests")), into);
            return;
        }
        if trimmed.starts_with('{') && trimmed.contains("\"type\"") {
            self.json(trimmed, into);
            return;
        }
        if let Some(count) =
            line.strip_prefix("running ").and_then(|r| r.strip_suffix(" tests").or(r.strip_suffix(" test")))
            && count.bytes().all(|b| b.is_ascii_digit())
            && !count.is_empty()
        {
            if !self.open {
                self.open = true;
                into.begin(RUNNER);
            }
            self.running = true;
            self.itemised = false;
            self.failures.clear();
            return;
        }
        if let Some(summary) = line.strip_prefix("test result: ") {
            if self.open || self.running {
                self.summary(summary, into);
            }
            return;
        }
        if trimmed.starts_with("error: test failed, to rerun pass") {
            self.fail_fast = Some(format!("cargo stopped at the first failing test target ({trimmed})"));
            return;
        }
        if trimmed.starts_with("error: ")
            && (trimmed.ends_with(" target failed:") || trimmed.ends_with(" targets failed:"))
        {
            // `--no-fail-fast`'s closing list: every target ran.
            self.fail_fast = None;
            return;
        }
        if !self.running {
            return;
        }
        if line == "failures:" {
            self.in_failures = true;
            self.failures.clear();
            return;
        }
        if let Some(rest) = line.strip_prefix("test ")
            && let Some((name, result)) = rest.split_once(" ... ").or_else(|| Some((rest.strip_suffix(" ...")?, "")))
        {
            self.in_failures = false;
            let id = self.id(name);
            self.itemised = true;
            match verdict(result) {
                Some(outcome) => into.result(RUNNER, &id, Reported::Outcome(outcome)),
                None => {
                    into.start(RUNNER, &id);
                    self.pending = Some(id);
                }
            }
            return;
        }
        if let Some(id) = &self.pending
            && let Some(outcome) = verdict(trimmed)
        {
            into.result(RUNNER, id, Reported::Outcome(outcome));
            self.pending = None;
            return;
        }
        if self.in_failures
            && let Some(name) = line.strip_prefix("    ")
            && !name.starts_with(' ')
            && !name.is_empty()
            && self.failures.len() < MAX_FAILURES
        {
            self.failures.push(self.id(name));
        }
    }

    /// It reads lines whatever they start with: a result line its test's output interrupted,
    /// or a `failures:` list's names.
    pub(super) fn wants_every_line(&self) -> bool {
        self.pending.is_some() || self.in_failures
    }

    pub(super) fn finish(&mut self, into: &mut Collector) {
        if let Some(why) = self.fail_fast.take() {
            into.stopped_early(&why);
        }
    }

    fn open_target(&mut self, key: Option<String>, into: &mut Collector) {
        // A target still open here printed no summary: its process ended early, and stays
        // begun and not ended.
        self.target = key;
        self.open = true;
        self.running = false;
        self.pending = None;
        self.fail_fast = None;
        into.begin(RUNNER);
    }

    fn summary(&mut self, summary: &str, into: &mut Collector) {
        let number = |word: &str| -> u64 {
            summary
                .split(';')
                .filter_map(|part| {
                    part.trim().trim_start_matches("ok. ").trim_start_matches("FAILED. ").split_once(' ')
                })
                .find(|(_, what)| *what == word)
                .and_then(|(n, _)| n.parse().ok())
                .unwrap_or(0)
        };
        let (passed, failed, ignored) = (number("passed"), number("failed"), number("ignored"));
        into.totals(passed + failed + ignored, failed, ignored);
        if let Some(id) = self.pending.take() {
            // The binary summed up, so the test finished; its line was lost in its output.
            let outcome = if self.failures.contains(&id) { Outcome::Failed } else { Outcome::Passed };
            into.result(RUNNER, &id, Reported::Outcome(outcome));
        }
        into.end(RUNNER);
        self.open = false;
        self.running = false;
        self.in_failures = false;
        self.failures.clear();
    }

    fn id(&self, name: &str) -> String {
        let mut name = name.trim();
        for suffix in [" - should panic", " - compile fail", " - compile"] {
            name = name.strip_suffix(suffix).unwrap_or(name);
        }
        let name = ids::doc_test(name);
        match &self.target {
            Some(target) => format!("{target}: {name}"),
            None => name.to_owned(),
        }
    }

    /// libtest's `--format json` events.
    fn json(&mut self, line: &str, into: &mut Collector) {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { return };
        let kind = event.get("type").and_then(|v| v.as_str()).unwrap_or("");
        let what = event.get("event").and_then(|v| v.as_str()).unwrap_or("");
        match kind {
            "suite" if what == "started" => {
                if !self.open {
                    self.open = true;
                    into.begin(RUNNER);
                }
                self.running = true;
            }
            "suite" if matches!(what, "ok" | "failed") => {
                let n = |k: &str| event.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
                let (passed, failed, ignored) = (n("passed"), n("failed"), n("ignored"));
                into.totals(passed + failed + ignored, failed, ignored);
                if self.open {
                    into.end(RUNNER);
                }
                self.open = false;
                self.running = false;
            }
            "test" => {
                let Some(name) = event.get("name").and_then(|v| v.as_str()) else { return };
                let id = self.id(name);
                match what {
                    "started" => into.start(RUNNER, &id),
                    "ok" => into.result(RUNNER, &id, Reported::Outcome(Outcome::Passed)),
                    "failed" | "timeout" => into.result(RUNNER, &id, Reported::Outcome(Outcome::Failed)),
                    "ignored" => into.result(RUNNER, &id, Reported::Outcome(Outcome::Skipped)),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// A result word as libtest prints it after ` ... `.
fn verdict(result: &str) -> Option<Outcome> {
    let result = result.trim();
    match result {
        "ok" => Some(Outcome::Passed),
        "FAILED" => Some(Outcome::Failed),
        _ if result == "ignored" || result.starts_with("ignored, ") => Some(Outcome::Skipped),
        _ if result.starts_with("bench:") => Some(Outcome::Passed),
        _ => None,
    }
}

/// The key of a target from cargo's `Running …` header: `unittests src/lib.rs
/// (target/debug/deps/tiny-0123abcd)` → `tiny src/lib.rs`; an older cargo's `Running
/// target/debug/deps/tiny-0123abcd` → `tiny`. Anything else is not a header.
fn target_key(rest: &str) -> Option<String> {
    let (source, path) = match rest.rsplit_once(" (") {
        Some((source, path)) => (Some(source.trim()), path.strip_suffix(')')?),
        None => (None, rest.trim().trim_matches('`')),
    };
    if !(path.contains("/deps/") || path.contains("\\deps\\")) {
        return None;
    }
    let file = path.rsplit(['/', '\\']).next()?;
    let file = file.strip_suffix(".exe").unwrap_or(file);
    let stem = match file.rsplit_once('-') {
        Some((stem, hash)) if hash.len() >= 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => stem,
        _ => file,
    };
    Some(match source {
        Some(source) => format!("{stem} {}", source.strip_prefix("unittests ").unwrap_or(source)),
        None => stem.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::model::CommandResults;
    use super::*;

    fn parse(text: &str) -> CommandResults {
        let mut c = Collector::new();
        let mut p = Libtest::default();
        for line in text.lines() {
            p.line(line, &mut c);
        }
        p.finish(&mut c);
        c.finish(0, vec!["cargo".into(), "test".into()])
    }

    #[test]
    fn target_headers() {
        assert_eq!(
            target_key("unittests src/lib.rs (/t/debug/deps/tiny-b8411d1b6389d6df)").as_deref(),
            Some("tiny src/lib.rs")
        );
        assert_eq!(target_key("tests/t.rs (target/debug/deps/t-6da5c8410e7e8b0b)").as_deref(), Some("t tests/t.rs"));
        assert_eq!(target_key("target/debug/deps/tiny-0123456789abcdef").as_deref(), Some("tiny"));
        assert_eq!(target_key("the tests (not a path)"), None);
        assert_eq!(target_key("3 tests"), None);
    }

    #[test]
    fn a_passing_run_is_itemised_per_target() {
        let r = parse(include_str!("fixtures/libtest_pass.txt"));
        let ids: Vec<&str> = r.tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "t tests/t.rs: integration_ok",
                "tiny doc-tests: src/lib.rs - add",
                "tiny src/lib.rs: tests::adds",
                "tiny src/lib.rs: tests::fails_not",
                "tiny src/lib.rs: tests::online",
                "tiny src/lib.rs: tests::panics",
                "tiny src/lib.rs: tests::slow",
            ]
        );
        assert_eq!((r.counts.passed, r.counts.skipped), (5, 2));
        assert_eq!((r.processes.begun, r.processes.ended), (3, 3));
        assert_eq!(r.stopped_early, None);
        assert_eq!(r.totals.map(|t| (t.tests, t.failed, t.skipped)), Some((7, 0, 2)));
    }

    #[test]
    fn fail_fast_is_a_first_failure_stop() {
        let r = parse(include_str!("fixtures/libtest_fail_fast.txt"));
        assert_eq!(r.test("tiny src/lib.rs: tests::fails").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.counts.total(), 5);
        assert!(r.stopped_early.as_deref().unwrap().contains("--lib"), "{:?}", r.stopped_early);
        assert_eq!(r.processes.unended(), 0);

        let all = parse(include_str!("fixtures/libtest_no_fail_fast.txt"));
        assert_eq!(all.stopped_early, None);
        assert_eq!(all.counts.total(), 7);
        assert_eq!(all.counts.failed, 1);
    }

    #[test]
    fn output_inside_a_result_line_still_resolves() {
        let r = parse(include_str!("fixtures/libtest_nocapture.txt"));
        assert_eq!(r.test("tiny src/lib.rs: tests::adds").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("tiny src/lib.rs: tests::fails").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("tiny src/lib.rs: tests::panics").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.counts.unfinished, 0);
    }

    #[test]
    fn quiet_output_gives_totals_only() {
        let r = parse(include_str!("fixtures/libtest_quiet.txt"));
        assert_eq!(r.counts.total(), 0);
        assert!(r.itemised());
        assert_eq!(r.totals.map(|t| (t.tests, t.failed, t.skipped)), Some((7, 1, 2)));
        assert_eq!(r.ran(), 5);
    }

    #[test]
    fn a_constructor_that_exits_leaves_its_target_unended() {
        // tests/t.rs has an `.init_array` constructor calling exit(0): cargo goes on to the
        // doc tests, and the target's tests never ran.
        let r = parse(include_str!("fixtures/libtest_init_array.txt"));
        assert_eq!(r.processes.unended(), 1);
        assert!(r.test("t tests/t.rs: integration_ok").is_none());
    }

    #[test]
    fn a_binary_that_dies_inside_a_test_leaves_it_unfinished() {
        let r = parse("running 2 tests\ntest a ... ok\ntest b ... \n");
        assert_eq!(r.test("b").unwrap().outcome, Outcome::Unfinished);
        assert_eq!(r.processes.unended(), 1);
    }

    #[test]
    fn stray_lines_outside_a_run_are_not_tests() {
        let r = parse("test this ... ok\nrunning late\ntest result: ok. 1 passed;\n");
        assert_eq!(r.counts.total(), 0);
        assert!(!r.itemised());
    }

    #[test]
    fn json_events() {
        let r = parse(
            "{ \"type\": \"suite\", \"event\": \"started\", \"test_count\": 2 }\n\
             { \"type\": \"test\", \"event\": \"started\", \"name\": \"a\" }\n\
             { \"type\": \"test\", \"name\": \"a\", \"event\": \"ok\" }\n\
             { \"type\": \"test\", \"event\": \"started\", \"name\": \"b\" }\n\
             { \"type\": \"test\", \"name\": \"b\", \"event\": \"failed\" }\n\
             { \"type\": \"suite\", \"event\": \"failed\", \"passed\": 1, \"failed\": 1, \"ignored\": 0 }\n",
        );
        assert_eq!((r.counts.passed, r.counts.failed), (1, 1));
        assert_eq!(r.processes.unended(), 0);
    }
}
