//! `go test`, from its output (the format `go help test` and `go doc testing` describe): with
//! `-v`, `=== RUN   TestX` and `--- PASS: TestX (0.00s)` (`FAIL`, `SKIP`; subtests indented, as
//! `TestX/sub`); the package lines that end each package's binary (`ok`, a tab, the package, a
//! tab, the time; `FAIL` likewise, or with ` [build failed]`; `?` for a package without test
//! files); and `-json`'s events (one JSON object a line, `Action` `run`, `pass`, `fail`, `skip`,
//! with `Package` and `Test`). Without `-v` only failing tests are printed: the package itself
//! is then the item, passed or failed. A test's id is its package and its name
//! (`example.com/calc TestTable/one`); the package is named only on its closing line, so a
//! package's tests wait for it (bounded).

use super::collect::{Collector, Reported};
use super::model::{Outcome, Runner};

const RUNNER: Runner = Runner::Go;
/// The most test lines one package's tests may hold before its closing line names it.
const MAX_PENDING: usize = 100_000;

#[derive(Debug, Default)]
pub(super) struct GoTest {
    /// The current package's tests: started, and their outcomes.
    pending: Vec<(String, Option<Outcome>)>,
    /// The current package's binary printed `=== RUN` lines (`-v`).
    verbose: bool,
    /// The current package's binary began (a test line was seen).
    begun: bool,
    /// `-json`: the packages whose `start` was seen and whose end was not.
    started: std::collections::BTreeSet<String>,
}

impl GoTest {
    pub(super) fn line(&mut self, line: &str, into: &mut Collector) {
        if line.starts_with('{') {
            if line.contains("\"Action\"") {
                self.json(line, into);
            }
            return;
        }
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix("=== RUN ") {
            let name = name.trim();
            if !name.is_empty() {
                self.begin_package(into);
                self.verbose = true;
                if !self.pending.iter().any(|(n, _)| n == name) {
                    self.push(name.to_owned(), None, into);
                }
            }
            return;
        }
        if let Some(rest) = trimmed.strip_prefix("--- ") {
            let (word, rest) = rest.split_once(": ").unwrap_or(("", ""));
            let outcome = match word {
                "PASS" => Outcome::Passed,
                "FAIL" => Outcome::Failed,
                "SKIP" => Outcome::Skipped,
                _ => return,
            };
            let name = rest.rsplit_once(" (").map_or(rest, |(name, _)| name).trim();
            if name.is_empty() {
                return;
            }
            self.begin_package(into);
            match self.pending.iter_mut().rev().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = Some(outcome),
                None => self.push(name.to_owned(), Some(outcome), into),
            }
            return;
        }
        if let Some((outcome, package, note)) = package_line(line) {
            self.close_package(package, outcome, note, into);
        }
    }

    pub(super) fn finish(&mut self, into: &mut Collector) {
        // Tests of a package whose binary never printed its closing line: their process ended
        // early; they stay under no package.
        for (name, outcome) in std::mem::take(&mut self.pending) {
            match outcome {
                Some(outcome) => into.result(RUNNER, &name, Reported::Outcome(outcome)),
                None => into.start(RUNNER, &name),
            }
        }
    }

    fn begin_package(&mut self, into: &mut Collector) {
        if !self.begun {
            self.begun = true;
            into.begin(RUNNER);
        }
    }

    fn push(&mut self, name: String, outcome: Option<Outcome>, into: &mut Collector) {
        if self.pending.len() < MAX_PENDING {
            self.pending.push((name, outcome));
        } else {
            into.drop_some(1);
        }
    }

    fn close_package(&mut self, package: &str, outcome: Outcome, note: &str, into: &mut Collector) {
        let tests = std::mem::take(&mut self.pending);
        let had_tests = !tests.is_empty();
        for (name, result) in tests {
            let id = format!("{package} {name}");
            match result {
                Some(result) => into.result(RUNNER, &id, Reported::Outcome(result)),
                None => into.start(RUNNER, &id),
            }
        }
        if !self.verbose {
            // Without -v the package is the item (its failing tests, if any, are listed too).
            let outcome = match (outcome, note) {
                (Outcome::Passed, n) if n.contains("[no tests to run]") => Outcome::Skipped,
                (Outcome::Failed, n) if n.contains("[build failed]") || n.contains("[setup failed]") => Outcome::Error,
                (outcome, _) => outcome,
            };
            into.result(RUNNER, package, Reported::Outcome(outcome));
        } else if !had_tests && outcome == Outcome::Failed {
            into.result(RUNNER, package, Reported::Outcome(Outcome::Error));
        }
        if !self.begun {
            into.begin(RUNNER);
        }
        into.end(RUNNER);
        self.verbose = false;
        self.begun = false;
    }

    /// One `go test -json` event.
    fn json(&mut self, line: &str, into: &mut Collector) {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { return };
        let text = |key: &str| event.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let (action, package, test) = (text("Action"), text("Package"), text("Test"));
        if package.is_empty() {
            return;
        }
        if test.is_empty() {
            match action {
                "start" if self.started.len() < MAX_PENDING && self.started.insert(package.to_owned()) => {
                    into.begin(RUNNER);
                }
                "pass" | "fail" | "skip" => {
                    // Go before 1.20 sends no `start`: the end brings its own beginning.
                    if !self.started.remove(package) {
                        into.begin(RUNNER);
                    }
                    into.end(RUNNER);
                }
                _ => {}
            }
            return;
        }
        let id = format!("{package} {test}");
        match action {
            "run" => into.start(RUNNER, &id),
            "pass" => into.result(RUNNER, &id, Reported::Outcome(Outcome::Passed)),
            "fail" => into.result(RUNNER, &id, Reported::Outcome(Outcome::Failed)),
            "skip" => into.result(RUNNER, &id, Reported::Outcome(Outcome::Skipped)),
            _ => {}
        }
    }
}

/// A package's closing line: `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`.
/// `?   \tpkg\t[no test files]` closes nothing (no binary ran).
fn package_line(line: &str) -> Option<(Outcome, &str, &str)> {
    let (outcome, rest) = if let Some(rest) = line.strip_prefix("ok  \t") {
        (Outcome::Passed, rest)
    } else if let Some(rest) = line.strip_prefix("FAIL\t") {
        (Outcome::Failed, rest)
    } else {
        return None;
    };
    let (package, note) = match rest.split_once(['\t', ' ']) {
        Some((package, note)) => (package, note),
        None => (rest, ""),
    };
    (!package.is_empty()).then_some((outcome, package, note))
}

#[cfg(test)]
mod tests {
    use super::super::model::CommandResults;
    use super::*;

    fn parse(text: &str) -> CommandResults {
        let mut c = Collector::new();
        let mut p = GoTest::default();
        for line in text.lines() {
            p.line(line, &mut c);
        }
        p.finish(&mut c);
        c.finish(0, vec!["go".into(), "test".into()])
    }

    #[test]
    fn verbose_output_names_each_test_by_its_package() {
        let r = parse(include_str!("fixtures/go_v.txt"));
        let outcome = |id: &str| r.test(id).unwrap_or_else(|| panic!("{id}: {:?}", r.tests)).outcome;
        assert_eq!(outcome("example.com/calc TestAdd"), Outcome::Passed);
        assert_eq!(outcome("example.com/calc TestSub"), Outcome::Failed);
        assert_eq!(outcome("example.com/calc TestTable/one"), Outcome::Passed);
        assert_eq!(outcome("example.com/calc TestSkip"), Outcome::Skipped);
        assert_eq!(outcome("example.com/other TestOther"), Outcome::Passed);
        assert!(r.test("example.com/nothing").is_none());
        assert_eq!((r.processes.begun, r.processes.ended), (2, 2));
    }

    #[test]
    fn without_v_the_package_is_the_item() {
        let r = parse(include_str!("fixtures/go_plain.txt"));
        assert_eq!(r.test("example.com/calc").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("example.com/calc TestSub").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("example.com/other").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("example.com/broken").unwrap().outcome, Outcome::Error);
        assert_eq!(r.processes.unended(), 0);
    }

    #[test]
    fn json_events() {
        let r = parse(include_str!("fixtures/go_json.txt"));
        assert_eq!(r.test("example.com/calc TestAdd").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("example.com/calc TestSub").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("example.com/calc TestSkip").unwrap().outcome, Outcome::Skipped);
        assert_eq!(r.processes.unended(), 0);
    }

    #[test]
    fn a_binary_that_dies_leaves_its_tests_unfinished() {
        let r = parse("=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n");
        assert_eq!(r.test("TestB").unwrap().outcome, Outcome::Unfinished);
        assert_eq!(r.processes.unended(), 1);
    }
}
