//! A dispute about the tests (issue 57): WebGPT says the tests contradict the brief (a
//! `TESTS_CONTRADICT:` reply), or its fix failed only on held tests it had corrected. Neither is
//! a fix the model could honestly make, so no fix is asked for: the cycle waits
//! (`TESTS_DISPUTED`) for the person, who either tells WebGPT what holds (`say`) or accepts the
//! PR's version of the disputed tests (`approve`), after which the same head is tested again with
//! those versions as the person's own.

use serde::{Deserialize, Serialize};

/// Where a dispute came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisputeSource {
    /// WebGPT's reply said `TESTS_CONTRADICT:` and named no PR.
    Reply,
    /// A held run failed only on held tests the PR had changed.
    HeldRun,
}

/// A held test the PR changed, on which alone its run failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisputedTest {
    /// The test file.
    pub path: String,
    /// Its blob at the base tip (the version that ran).
    pub base_blob: String,
    /// Its blob in the PR (the version the PR proposes).
    pub pr_blob: String,
    /// The tests of this file that failed, as the runner named them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// The person's line the PR changed (`self.assertEqual(area(3), 1090)`), redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yours: Option<String>,
    /// The PR's line in its place (`self.assertEqual(area(3), 1080)`), redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theirs: Option<String>,
}

impl DisputedTest {
    /// "tests/test_area.py: the PR says `…1080)`, your test says `…1090)`".
    pub fn words(&self) -> String {
        match (&self.theirs, &self.yours) {
            (Some(theirs), Some(yours)) => {
                format!("{}: the PR says `{}`, your test says `{}`", self.path, theirs.trim(), yours.trim())
            }
            _ => format!("{}: the PR changed this held test", self.path),
        }
    }
}

/// What the person is asked to decide while the cycle is `TESTS_DISPUTED`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dispute {
    /// A reply or a held run.
    pub source: DisputeSource,
    /// When it arose (RFC 3339).
    pub at: String,
    /// WebGPT's own words (the `TESTS_CONTRADICT:` line and the quote after it), redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub says: Option<String>,
    /// The run that failed only on held tests the PR changed: its iteration and head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    /// That run's head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// The held tests the PR changed, on which alone the run failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<DisputedTest>,
}

impl Dispute {
    /// One sentence for `next`, the control room and the journal.
    pub fn words(&self) -> String {
        match self.source {
            DisputeSource::Reply => format!(
                "WebGPT says the tests contradict the brief: {}",
                self.says.as_deref().map(one_line).unwrap_or_else(|| "(no words given)".into())
            ),
            DisputeSource::HeldRun => {
                let tests: Vec<String> = self.tests.iter().map(DisputedTest::words).collect();
                format!(
                    "the run failed only on held tests the PR corrected — {}{}",
                    tests.join("; "),
                    self.says.as_deref().map(|s| format!(" (WebGPT: {})", one_line(s))).unwrap_or_default()
                )
            }
        }
    }

    /// Whether `approve` can settle it: only a run with the PR's own version of the tests to
    /// accept (a reply has none).
    pub fn acceptable(&self) -> bool {
        self.source == DisputeSource::HeldRun && !self.tests.is_empty()
    }
}

/// A version of a held path the person accepted as theirs (`approve` on a disputed run): runs
/// of this cycle no longer hold that path while the PR has exactly this blob there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptedTest {
    /// The path.
    pub path: String,
    /// The accepted blob (the PR's version).
    pub blob: String,
    /// When the person accepted it.
    pub at: String,
    /// The iteration of the run that disputed it: runs up to it do not count as testing the
    /// head with the accepted version.
    pub after_iteration: u32,
}

/// A held path the PR had changed, as [`disputed_tests`] reads it.
pub struct HeldChange<'a> {
    /// The path.
    pub path: &'a str,
    /// Its blob at the base tip.
    pub base_blob: &'a str,
    /// Its blob in the PR.
    pub pr_blob: &'a str,
}

/// The disputed held tests of a failed held run: every failing test belongs to a held file the
/// PR had changed (and still has), so the PR's version was never the one that ran. Empty when
/// any failure lies elsewhere, or when nothing itemised says which tests failed: then it is an
/// ordinary failure. `change` is the PR's whole change as a unified diff (redacted), from which
/// both versions' lines are quoted.
pub fn disputed_tests(failing: &[&str], held: &[HeldChange<'_>], change: &[&str]) -> Vec<DisputedTest> {
    if failing.is_empty() {
        return Vec::new();
    }
    let files = super::diff::index(change.iter().copied());
    let section = |path: &str| {
        files
            .iter()
            .find(|f| f.path == path)
            .and_then(|f| change.get(f.start_line..f.end_line.min(change.len())))
            .unwrap_or(&[])
    };
    let mut by_file: Vec<(&HeldChange<'_>, Vec<String>)> = Vec::new();
    for id in failing {
        let Some(file) = held.iter().find(|h| belongs(id, h.path)) else { return Vec::new() };
        // The failing test itself must be one the PR changed, not merely one in a file it did.
        if !changed_functions(section(file.path)).iter().any(|f| f == test_name(id)) {
            return Vec::new();
        }
        match by_file.iter_mut().find(|(h, _)| h.path == file.path) {
            Some((_, ids)) => ids.push((*id).to_owned()),
            None => by_file.push((file, vec![(*id).to_owned()])),
        }
    }
    by_file
        .into_iter()
        .map(|(held, failing)| {
            let (yours, theirs) = first_changed_pair(section(held.path));
            DisputedTest {
                path: held.path.to_owned(),
                base_blob: held.base_blob.to_owned(),
                pr_blob: held.pr_blob.to_owned(),
                failing,
                yours,
                theirs,
            }
        })
        .collect()
}

/// The test's own name in a runner's id: the last of `::`, ` > ` or `.`-separated parts, without
/// a parametrisation (`tests/t.py::T::test_big[2]` → `test_big`, `t.T.test_big` → `test_big`).
fn test_name(id: &str) -> &str {
    // unittest's ids are dotted; the others' names may hold dots of their own.
    let dotted = !id.contains("::") && !id.contains(" > ");
    let last = id.rsplit("::").next().unwrap_or(id);
    let last = last.rsplit(" > ").next().unwrap_or(last);
    let last = if dotted { last.rsplit('.').next().unwrap_or(last) } else { last };
    last.split(['[', '(']).next().unwrap_or(last).trim()
}

/// The functions (or named tests) the changed lines of a file's diff section lie in: for each
/// changed line, the nearest definition above it in the section — a hunk's own lines or its
/// header's context (`@@ … @@ def test_three(self):`). A changed line with none above it in its
/// hunk names nothing: such a failure is not taken for a dispute.
fn changed_functions(section: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in section {
        if let Some(header) = line.strip_prefix("@@") {
            current = header.split_once("@@").and_then(|(_, context)| definition(context));
            continue;
        }
        let Some(first) = line.chars().next().filter(|c| matches!(c, ' ' | '+' | '-')) else { continue };
        let text = &line[first.len_utf8()..];
        if let Some(name) = definition(text) {
            current = Some(name);
        }
        if first != ' '
            && let Some(name) = &current
            && !out.contains(name)
        {
            out.push(name.clone());
        }
    }
    out
}

/// The name a line defines, when it starts a function or a named test: `def name(`, `fn name(`,
/// `function name(`, `test('name'`, `it("name"`.
fn definition(line: &str) -> Option<String> {
    let line = line.trim_start();
    for keyword in ["async def ", "def ", "pub fn ", "fn ", "async function ", "function "] {
        if let Some(rest) = line.strip_prefix(keyword) {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            return (!name.is_empty()).then_some(name);
        }
    }
    for call in ["test(", "it(", "test.only(", "it.only("] {
        if let Some(rest) = line.strip_prefix(call) {
            let quote = rest.chars().next().filter(|c| matches!(c, '\'' | '"' | '`'))?;
            let name: String = rest[1..].chars().take_while(|c| *c != quote).collect();
            return Some(name);
        }
    }
    None
}

/// Whether test `id` (as a runner named it) is one of `path`'s: pytest's `tests/t.py::T::x`,
/// node's `tests/t.test.mjs > x`, a libtest target, or unittest's dotted `tests.t.T.x`.
pub fn belongs(id: &str, path: &str) -> bool {
    if id.contains(path) {
        return true;
    }
    let module = path.strip_suffix(".py").map(|m| m.replace('/', "."));
    module.is_some_and(|m| id == m || id.starts_with(&format!("{m}.")))
}

/// The first removed line and the first added line of a file's diff section (headers skipped):
/// the person's version and the PR's, as the dispute quotes them.
fn first_changed_pair(section: &[&str]) -> (Option<String>, Option<String>) {
    let body = section.iter().skip_while(|l| !l.starts_with("@@"));
    let mut yours = None;
    let mut theirs = None;
    for line in body {
        if yours.is_none()
            && let Some(text) = line.strip_prefix('-').filter(|t| !t.trim().is_empty())
        {
            yours = Some(clip(text.trim()));
        }
        if theirs.is_none()
            && let Some(text) = line.strip_prefix('+').filter(|t| !t.trim().is_empty())
        {
            theirs = Some(clip(text.trim()));
        }
        if yours.is_some() && theirs.is_some() {
            break;
        }
    }
    (yours, theirs)
}

fn clip(text: &str) -> String {
    text.chars().take(200).collect()
}

fn one_line(text: &str) -> String {
    let joined: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let line = joined.join(" ");
    if line.chars().count() > 240 { format!("{}…", line.chars().take(240).collect::<String>()) } else { line }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(theirs: Option<&str>) -> Dispute {
        Dispute {
            source: DisputeSource::HeldRun,
            at: "2026-12-07T00:00:00Z".into(),
            says: None,
            iteration: Some(2),
            head_sha: Some("a".repeat(40)),
            tests: vec![DisputedTest {
                path: "tests/test_area.py".into(),
                base_blob: "1".repeat(40),
                pr_blob: "2".repeat(40),
                failing: vec!["tests/test_area.py::test_big".into()],
                yours: Some("        self.assertEqual(area(3), 1090)".into()),
                theirs: theirs.map(str::to_owned),
            }],
        }
    }

    const CHANGE: &str = "diff --git a/tests/test_area.py b/tests/test_area.py
--- a/tests/test_area.py
+++ b/tests/test_area.py
@@ -10,3 +10,3 @@ class T(unittest.TestCase):
     def test_big(self):
-        self.assertEqual(area(3), 1090)
+        self.assertEqual(area(3), 1080)
diff --git a/area.py b/area.py
--- a/area.py
+++ b/area.py
@@ -1 +1 @@
-def area(n): return 0
+def area(n): return 120 * n
";

    #[test]
    fn a_failure_only_in_held_tests_the_pr_changed_is_disputed_with_both_lines() {
        let lines: Vec<&str> = CHANGE.lines().collect();
        let b = "1".repeat(40);
        let p = "2".repeat(40);
        let held = [HeldChange { path: "tests/test_area.py", base_blob: &b, pr_blob: &p }];
        for id in ["tests/test_area.py::T::test_big", "tests.test_area.T.test_big"] {
            let disputed = disputed_tests(&[id], &held, &lines);
            assert_eq!(disputed.len(), 1, "{id}");
            assert_eq!(disputed[0].yours.as_deref(), Some("self.assertEqual(area(3), 1090)"));
            assert_eq!(disputed[0].theirs.as_deref(), Some("self.assertEqual(area(3), 1080)"));
            assert_eq!(disputed[0].failing, [id]);
        }
        // A failure elsewhere makes it an ordinary failure; so does nothing itemised.
        assert!(
            disputed_tests(&["tests/test_area.py::T::test_big", "tests/test_other.py::x"], &held, &lines).is_empty()
        );
        assert!(disputed_tests(&[], &held, &lines).is_empty());
        assert!(!belongs("tests.test_area_more.T.x", "tests/test_area.py"));
        // A failure in the same file, in a test the PR did not change, is an ordinary failure.
        assert!(disputed_tests(&["tests/test_area.py::T::test_one"], &held, &lines).is_empty());
        let both = ["tests/test_area.py::T::test_big", "tests/test_area.py::T::test_one"];
        assert!(disputed_tests(&both, &held, &lines).is_empty());
        assert_eq!(test_name("tests/t.py::T::test_big[2-3]"), "test_big");
        assert_eq!(test_name("test/a.test.js > suite > big"), "big");
        assert_eq!(test_name("test/a.test.js > handles 1.5"), "handles 1.5");
        assert_eq!(test_name("tests.test_area.T.test_big"), "test_big");
    }

    #[test]
    fn a_held_run_dispute_names_both_versions() {
        let words = held(Some("self.assertEqual(area(3), 1080)")).words();
        assert_eq!(
            words,
            "the run failed only on held tests the PR corrected — tests/test_area.py: the PR says `self.assertEqual(area(3), 1080)`, your test says `self.assertEqual(area(3), 1090)`"
        );
        assert!(held(None).words().contains("tests/test_area.py: the PR changed this held test"));
        assert!(held(None).acceptable());
    }

    #[test]
    fn a_reply_dispute_quotes_the_model_on_one_line_and_cannot_be_approved() {
        let dispute = Dispute {
            source: DisputeSource::Reply,
            at: "t".into(),
            says: Some("tests/test_area.py:12 expects 1090\n\nbut the docstring says 1080".into()),
            iteration: None,
            head_sha: None,
            tests: Vec::new(),
        };
        assert_eq!(
            dispute.words(),
            "WebGPT says the tests contradict the brief: tests/test_area.py:12 expects 1090 but the docstring says 1080"
        );
        assert!(!dispute.acceptable());
    }
}
