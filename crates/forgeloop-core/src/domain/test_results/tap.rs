//! TAP (the Test Anything Protocol, versions 12 to 14): `ok 1 - name`, `not ok 2 - name`,
//! `# SKIP` and `# TODO` directives, the plan `1..N` (first or last), `Bail out!`, YAML
//! diagnostics between `---` and `...`, and subtests indented by four spaces, named by a
//! preceding `# Subtest: name` (node's TAP reporter, TAP 14). Output counts as TAP only once a
//! `TAP version` line or a top-level plan shows it is (a script that prints `ok - 2+3=5` is not
//! a TAP producer): until then test points wait, bounded. A test's id is its enclosing
//! subtests' names and its description, joined by ` > `; a test point that closes a group of
//! subtests is a summary of them and counts only when it fails on its own (a hook). A stream
//! whose leading plan promised more tests than it gave, or that never gave its trailing plan,
//! ended early.

use super::collect::{Collector, Reported};
use super::model::{Outcome, Runner};

const RUNNER: Runner = Runner::Tap;
/// The most test points that wait for the stream to show it is TAP.
const MAX_UNCONFIRMED: usize = 10_000;
/// The deepest subtest level tracked.
const MAX_LEVEL: usize = 32;

#[derive(Debug, Default)]
pub(super) struct Tap {
    /// The stream showed it is TAP.
    confirmed: bool,
    /// Test points seen before that.
    waiting: Vec<(String, Outcome)>,
    /// Inside a YAML diagnostic block.
    yaml: bool,
    /// The last line was a test point (a `---` after it opens YAML).
    after_test: bool,
    /// `# Subtest:` names by level.
    names: Vec<Option<String>>,
    /// Per level: test points seen since the enclosing level's last one, and whether one failed.
    children: Vec<(bool, bool)>,
    /// The current stream began and has not ended.
    open: bool,
    /// Its leading plan.
    planned: Option<u64>,
    /// Its top-level test points.
    top: u64,
}

impl Tap {
    pub(super) fn line(&mut self, line: &str, into: &mut Collector) {
        let indent = line.bytes().take_while(|b| *b == b' ').count();
        let content = line[indent..].trim_end();
        let level = (indent / 4).min(MAX_LEVEL);
        if self.yaml {
            if content == "..." {
                self.yaml = false;
            }
            return;
        }
        if content == "---" && self.after_test {
            self.yaml = true;
            self.after_test = false;
            return;
        }
        self.after_test = false;
        if let Some(version) = content.strip_prefix("TAP version ") {
            if indent == 0 && version.bytes().all(|b| b.is_ascii_digit()) {
                self.start_stream(into);
            }
            return;
        }
        if let Some(count) = plan(content) {
            if level == 0 {
                if self.top == 0 && !self.open_with_tests() {
                    self.start_stream(into);
                    self.planned = Some(count);
                    if count == 0 {
                        self.end_stream(into);
                    }
                } else {
                    if !self.confirmed {
                        self.start_stream(into);
                    }
                    self.end_stream(into);
                }
            }
            return;
        }
        if content.starts_with("Bail out!") {
            if self.confirmed {
                into.stopped_early(content);
            }
            return;
        }
        if let Some(name) = content.strip_prefix("# Subtest:") {
            self.set_name(level, name.trim());
            return;
        }
        let Some((failed, description, directive)) = test_point(content) else { return };
        self.after_test = true;
        let outcome = match (failed, directive) {
            (_, Some(Directive::Skip)) => Outcome::Skipped,
            (true, Some(Directive::Todo)) => Outcome::Xfailed,
            (false, Some(Directive::Todo)) => Outcome::Xpassed,
            (true, None) => Outcome::Failed,
            (false, None) => Outcome::Passed,
        };
        // A test point that closes a group of subtests sums them up.
        let (had_children, child_failed) = self.take_children(level + 1);
        let summary_only = had_children && (!failed || child_failed);
        let id = self.id(level, description);
        self.clear_names_from(level);
        self.mark_child(level, outcome.is_failure());
        if level == 0 {
            self.top += 1;
        }
        if !summary_only {
            if self.confirmed {
                into.result(RUNNER, &id, Reported::Outcome(outcome));
            } else if self.waiting.len() < MAX_UNCONFIRMED {
                self.waiting.push((id, outcome));
            }
        }
        if level == 0 && self.open && self.planned.is_some_and(|p| self.top >= p) {
            self.end_stream(into);
        }
    }

    pub(super) fn finish(&mut self, _into: &mut Collector) {
        // A stream never shown to be TAP gives nothing; one begun and never ended stays so.
        self.waiting.clear();
    }

    fn open_with_tests(&self) -> bool {
        self.open && self.top > 0
    }

    fn start_stream(&mut self, into: &mut Collector) {
        if self.open && self.top == 0 {
            // `TAP version` then a leading plan: one stream.
            self.confirm(into);
            return;
        }
        self.open = true;
        self.planned = None;
        self.top = 0;
        self.names.clear();
        self.children.clear();
        into.begin(RUNNER);
        self.confirm(into);
    }

    fn confirm(&mut self, into: &mut Collector) {
        self.confirmed = true;
        for (id, outcome) in std::mem::take(&mut self.waiting) {
            into.result(RUNNER, &id, Reported::Outcome(outcome));
        }
    }

    fn end_stream(&mut self, into: &mut Collector) {
        if self.open {
            into.end(RUNNER);
        }
        self.open = false;
        self.planned = None;
        self.top = 0;
    }

    fn set_name(&mut self, level: usize, name: &str) {
        if self.names.len() <= level {
            self.names.resize(level + 1, None);
        }
        self.names[level] = Some(name.to_owned());
    }

    fn clear_names_from(&mut self, level: usize) {
        self.names.truncate(level);
    }

    fn take_children(&mut self, level: usize) -> (bool, bool) {
        match self.children.get_mut(level) {
            Some(slot) => std::mem::take(slot),
            None => (false, false),
        }
    }

    fn mark_child(&mut self, level: usize, failed: bool) {
        if self.children.len() <= level {
            self.children.resize(level + 1, (false, false));
        }
        let slot = &mut self.children[level];
        slot.0 = true;
        slot.1 |= failed;
    }

    fn id(&self, level: usize, description: &str) -> String {
        let mut parts: Vec<&str> =
            (0..level).map(|l| self.names.get(l).and_then(|n| n.as_deref()).unwrap_or("(subtest)")).collect();
        parts.push(description);
        parts.join(" > ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    Skip,
    Todo,
}

/// `1..N`, optionally with a directive: the plan's count.
fn plan(content: &str) -> Option<u64> {
    let rest = content.strip_prefix("1..")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = rest[digits.len()..].trim_start();
    if digits.is_empty() || !(after.is_empty() || after.starts_with('#')) {
        return None;
    }
    digits.parse().ok()
}

/// A test point: whether it failed, its description (or its number), its directive.
fn test_point(content: &str) -> Option<(bool, &str, Option<Directive>)> {
    let (failed, rest) = if let Some(rest) = content.strip_prefix("not ok") {
        (true, rest)
    } else if let Some(rest) = content.strip_prefix("ok") {
        (false, rest)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let rest = rest.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = rest.split_at(digits);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix("- ").or_else(|| rest.strip_prefix('-')).unwrap_or(rest);
    // The directive follows the last unescaped `#`.
    let (description, directive) = match unescaped_hash(rest) {
        Some(at) => {
            let word = rest[at + 1..].trim_start().to_ascii_lowercase();
            let directive = if word.starts_with("skip") {
                Some(Directive::Skip)
            } else if word.starts_with("todo") {
                Some(Directive::Todo)
            } else {
                None
            };
            (rest[..at].trim_end(), directive)
        }
        None => (rest.trim_end(), None),
    };
    let description = if description.is_empty() { number } else { description };
    Some((failed, description, directive))
}

fn unescaped_hash(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).rev().find(|&i| bytes[i] == b'#' && (i == 0 || bytes[i - 1] != b'\\'))
}

#[cfg(test)]
mod tests {
    use super::super::model::CommandResults;
    use super::*;

    fn parse(text: &str) -> CommandResults {
        let mut c = Collector::new();
        let mut p = Tap::default();
        for line in text.lines() {
            p.line(line, &mut c);
        }
        p.finish(&mut c);
        c.finish(0, vec![])
    }

    #[test]
    fn node_tap_with_nested_subtests() {
        // `node --test --test-reporter=tap` (Node 20.20): suites, a skip, a todo, a subtest.
        let r = parse(include_str!("fixtures/node_tap.txt"));
        let outcome = |id: &str| r.test(id).unwrap_or_else(|| panic!("{id}: {:?}", r.tests)).outcome;
        assert_eq!(outcome("outer > inner > works"), Outcome::Passed);
        assert_eq!(outcome("outer > inner > fails"), Outcome::Failed);
        assert_eq!(outcome("outer > skipped"), Outcome::Skipped);
        assert_eq!(outcome("outer > todo"), Outcome::Xfailed);
        assert_eq!(outcome("top > sub1"), Outcome::Passed);
        assert_eq!(outcome("b ok"), Outcome::Passed);
        // The suites' and the parent test's lines sum up their subtests.
        assert!(r.test("outer").is_none() && r.test("outer > inner").is_none() && r.test("top").is_none());
        assert_eq!(r.counts.total(), 6);
        assert_eq!((r.processes.begun, r.processes.ended), (1, 1));
    }

    #[test]
    fn plain_tap_with_directives_and_a_leading_plan() {
        let r =
            parse("1..4\nok 1 - adds\nnot ok 2 - subtracts\nok 3 - divides # SKIP no floats\nnot ok 4 # TODO later\n");
        assert_eq!(r.test("adds").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("subtracts").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.test("divides").unwrap().outcome, Outcome::Skipped);
        assert_eq!(r.test("4").unwrap().outcome, Outcome::Xfailed);
        assert_eq!(r.processes.unended(), 0);
    }

    #[test]
    fn a_stream_short_of_its_plan_ended_early() {
        let r = parse("1..3\nok 1 - a\nok 2 - b\n");
        assert_eq!(r.processes.unended(), 1);
        let r = parse("TAP version 14\nok 1 - a\n");
        assert_eq!(r.processes.unended(), 1);
    }

    #[test]
    fn output_that_only_looks_like_tap_is_not() {
        let r = parse("ok - 2+3=5\nall good\n");
        assert_eq!(r.counts.total(), 0);
        assert!(!r.itemised());
    }

    #[test]
    fn a_trailing_plan_confirms_what_came_before() {
        let r = parse("ok 1 - a\nnot ok 2 - b \\# not a directive\n1..2\n");
        assert_eq!(r.counts.total(), 2);
        assert_eq!(r.test("b \\# not a directive").unwrap().outcome, Outcome::Failed);
        assert_eq!(r.processes.unended(), 0);
    }

    #[test]
    fn bail_out_is_a_first_failure_stop() {
        let r = parse("1..3\nnot ok 1 - a\nBail out! database down\n");
        assert_eq!(r.stopped_early.as_deref(), Some("Bail out! database down"));
    }

    #[test]
    fn yaml_blocks_hide_what_looks_like_tests() {
        let r = parse("TAP version 13\nnot ok 1 - a\n  ---\n  message: |\n    ok 7 - fake\n  ...\n1..1\n");
        assert_eq!(r.counts.total(), 1);
    }
}
