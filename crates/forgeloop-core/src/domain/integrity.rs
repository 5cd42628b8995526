//! A run's `integrity` (design §5.2, "Trust, then verify"): which of the PR's changed files
//! decide the verdict (tests, the scripts the commands run and what they source, runner, build
//! and CI configuration, modules that shadow the ones tests import, fixtures), how they changed
//! against the base branch's tip and since the last tested head, whether assertions went away
//! — above all after a failing run — and which of the person's protected paths the PR touches.
//! Pure: it reads diffs already made and redacted.

use serde::{Deserialize, Serialize};

use super::diff::{FileDiff, FileStatus};
use super::protect::glob_matches;
use super::test_files::{Judges, TestFileKind, assertions_in, changed_lines_are_tests, classify, sourced_by};

/// How many removed assertion lines a file's entry quotes.
const QUOTED_LINES: usize = 3;
/// How long a quoted line may be.
const QUOTED_CHARS: usize = 160;

/// What the PR did to its tests, worst first in the order a person should care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// Test files were only added to (new files, or lines added with none removed).
    TestsAdded,
    /// Test files lost or changed lines, without fewer assertions; or what decides a test run
    /// (configuration, a sourced helper, a shadowing module) changed at all.
    TestsChanged,
    /// More assertion lines were removed from test files than added.
    AssertionsRemoved,
}

impl Flag {
    /// The badge the control room and `list` show.
    pub fn badge(self) -> &'static str {
        match self {
            Flag::TestsAdded => "tests added",
            Flag::TestsChanged => "tests changed",
            Flag::AssertionsRemoved => "assertions removed",
        }
    }

    /// Whether a pass with this flag should be reviewed before merging (adding tests is what
    /// a feature does; changing or removing them is what a model under pressure does).
    pub fn needs_a_look(self) -> bool {
        self != Flag::TestsAdded
    }
}

/// One test or validation file the PR changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFileChange {
    /// The file's path in the repository.
    pub path: String,
    /// Why it counts as a test or validation file.
    pub kind: TestFileKind,
    /// How it changed.
    pub status: FileStatus,
    /// Lines added.
    pub additions: u64,
    /// Lines removed.
    pub deletions: u64,
    /// Removed lines that look like assertions (the heuristic of [`assertions_in`]).
    pub removed_assertions: u64,
    /// Added lines that look like assertions.
    pub added_assertions: u64,
    /// The first few removed assertion lines, trimmed (from the redacted diff).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_lines: Vec<String>,
    /// For a `sourced` file: the file that sources, runs or imports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// For a `sourced` file: how `by` reaches it — `sourced`, `run` or `imported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

impl TestFileChange {
    fn flag(&self) -> Flag {
        if self.removed_assertions > self.added_assertions {
            Flag::AssertionsRemoved
        } else if self.deletions > 0 || self.status == FileStatus::Removed || self.kind.changes_meaning() {
            Flag::TestsChanged
        } else {
            Flag::TestsAdded
        }
    }

    /// Assertion lines removed beyond those added.
    pub fn net_removed(&self) -> u64 {
        self.removed_assertions.saturating_sub(self.added_assertions)
    }

    /// `test.sh (rewritten: −3 +2, 1 assertion removed)`.
    pub fn words(&self) -> String {
        let how = match self.status {
            FileStatus::Added => "added".to_owned(),
            FileStatus::Removed => "deleted".to_owned(),
            _ => format!("+{} −{}", self.additions, self.deletions),
        };
        let why = match (self.kind, &self.by) {
            (TestFileKind::Sourced, Some(by)) => format!(", {} by {by}", self.via.as_deref().unwrap_or("sourced")),
            (TestFileKind::Shadow, _) => ", shadows a module tests import".to_owned(),
            (TestFileKind::Config, _) => ", decides what a test run does".to_owned(),
            _ => String::new(),
        };
        match self.net_removed() {
            0 => format!("{} ({how}{why})", self.path),
            1 => format!("{} ({how}{why}, 1 assertion removed)", self.path),
            n => format!("{} ({how}{why}, {n} assertions removed)", self.path),
        }
    }
}

/// The test files changed between two tested heads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SinceLast {
    /// The iteration that tested the previous head.
    pub iteration: u32,
    /// That previous head.
    pub head_sha: String,
    /// The test files changed from it to this head.
    pub files: Vec<TestFileChange>,
    /// The previous run failed: this head is the fix, and a fix that removes assertions is
    /// the one thing a pass must never hide (design §5.2).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_failure: bool,
    /// Of `files`, those the failing command named or its output mentioned: the tests that
    /// failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// A changed path that needs a person's review though no protect pattern names it: with paths
/// protected, what decides what the protected tests mean is protected too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guarded {
    /// The path.
    pub path: String,
    /// Why, in a few words: `sourced by t.sh`, `run by t.sh`, `decides what a test run does`, ….
    pub why: String,
}

/// The report's `integrity`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// The worst of what `against_base` and `since_last` show; `None` when the PR left its
    /// tests alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<Flag>,
    /// Test files the tested tree changes against the tip of the base branch (the whole PR,
    /// as merging it would make it).
    #[serde(default)]
    pub against_base: Vec<TestFileChange>,
    /// Test files changed since the previous tested head of the cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_last: Option<SinceLast>,
    /// The paths the PR changes that a person protects: matched by `[protect]`, or guarded
    /// with them (`guarded` says why).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected: Vec<String>,
    /// Of `protected`, those no pattern names, and why they are protected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guarded: Vec<Guarded>,
    /// The protect patterns in force for the run (so a reader knows what was checked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protect_patterns: Vec<String>,
    /// The base branch's tip the change was judged against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    /// Why the change could not be checked (the diff could not be had): such a pass needs a
    /// person's review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the change adds to the code under test that looks like a shortcut coding models
    /// take to pass tests (issue 57, the gaming scan): each one holds a pass for a person.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaming: Vec<super::gaming::Hit>,
}

/// The previous tested head and the change from it, for [`Integrity::assess`].
pub struct Previous<'a> {
    /// The iteration that tested it.
    pub iteration: u32,
    /// Its head commit.
    pub head_sha: String,
    /// The change from it to this head.
    pub diff: &'a Diff<'a>,
    /// Whether that run failed.
    pub failed: bool,
    /// What names the failing tests: the failing command's words and its output tail.
    pub failure_text: &'a str,
}

/// What [`Integrity::assess`] judges.
pub struct Assessment<'a> {
    /// The tested tree's change against the base branch's tip.
    pub whole: &'a Diff<'a>,
    /// The change since the cycle's previous tested head.
    pub previous: Option<Previous<'a>>,
    /// What counts as a test beyond the table.
    pub judges: Judges<'a>,
    /// The person's protect patterns for the repository.
    pub protect: &'a [String],
    /// The base tip the whole change is against.
    pub base_sha: Option<&'a str>,
}

impl Integrity {
    /// The integrity of a run's change.
    pub fn assess(a: &Assessment<'_>) -> Integrity {
        let against_base = test_changes(a.whole, &a.judges);
        let since_last = a.previous.as_ref().map(|p| {
            let files = test_changes(p.diff, &a.judges);
            let failed = match p.failed {
                true => files.iter().filter(|f| p.failure_text.contains(&f.path)).map(|f| f.path.clone()).collect(),
                false => Vec::new(),
            };
            SinceLast { iteration: p.iteration, head_sha: p.head_sha.clone(), files, after_failure: p.failed, failed }
        });
        let flag =
            against_base.iter().chain(since_last.iter().flat_map(|s| s.files.iter())).map(TestFileChange::flag).max();
        let (protected, guarded) = protected_changes(a.whole.files, &against_base, a.protect);
        Integrity {
            flag,
            against_base,
            since_last,
            protected,
            guarded,
            protect_patterns: a.protect.to_vec(),
            base_sha: a.base_sha.map(str::to_owned),
            error: None,
            gaming: Vec::new(),
        }
    }

    /// The check could not be made.
    pub fn unchecked(error: String, protect: &[String]) -> Integrity {
        Integrity { protect_patterns: protect.to_vec(), error: Some(error), ..Integrity::default() }
    }

    /// After a failing run, the test files whose assertions the fix removed (net), with the
    /// number removed from each: the signal that matters most.
    pub fn fix_removed_assertions(&self) -> Vec<(&TestFileChange, u64)> {
        match &self.since_last {
            Some(since) if since.after_failure => {
                since.files.iter().filter(|f| f.net_removed() > 0).map(|f| (f, f.net_removed())).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Whether a pass must wait for a person (`NEEDS_REVIEW`): the fix removed assertions, it
    /// changed a protected path, or the change could not be checked.
    pub fn needs_review(&self) -> bool {
        !self.fix_removed_assertions().is_empty()
            || !self.protected.is_empty()
            || self.error.is_some()
            || !self.gaming.is_empty()
    }

    /// The gaming scan's hits in one sentence: "mathx.py:4 returns 3000 when n == 1000, …".
    pub fn gaming_words(&self) -> Option<String> {
        let first: Vec<&str> = self.gaming.iter().take(3).map(|h| h.words.as_str()).collect();
        let more = self.gaming.len().saturating_sub(3);
        let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
        (!first.is_empty()).then(|| format!("{}{more}", first.join("; ")))
    }

    /// "the fix removed 2 assertions from t.sh, the test that failed": `None` when it did not.
    pub fn fix_words(&self) -> Option<String> {
        let removed = self.fix_removed_assertions();
        let total: u64 = removed.iter().map(|(_, n)| n).sum();
        let failed = self.since_last.as_ref().map(|s| s.failed.as_slice()).unwrap_or_default();
        let files: Vec<String> = removed
            .iter()
            .map(|(f, _)| match failed.contains(&f.path) {
                true => format!("{}, the test that failed", f.path),
                false => f.path.clone(),
            })
            .collect();
        let first = files.first()?;
        let rest = files.get(1..).unwrap_or_default();
        let files = match rest {
            [] => first.clone(),
            _ => format!("{first} and {}", rest.join(", ")),
        };
        let assertions = if total == 1 { "1 assertion" } else { &format!("{total} assertions") };
        Some(format!("the fix removed {assertions} from {files}"))
    }

    /// Why the pass waits for a person, in one sentence, the weightiest reason first.
    pub fn review_reason(&self) -> Option<String> {
        let mut reasons = Vec::new();
        if let Some(fix) = self.fix_words() {
            reasons.push(fix);
        }
        if !self.protected.is_empty() {
            let paths: Vec<String> = self
                .protected
                .iter()
                .map(|p| match self.guarded.iter().find(|g| &g.path == p) {
                    Some(g) => format!("{p} ({})", g.why),
                    None => p.clone(),
                })
                .collect();
            reasons.push(format!("the PR changes protected paths: {}", paths.join(", ")));
        }
        if let Some(gaming) = self.gaming_words() {
            reasons.push(gaming);
        }
        if let Some(error) = &self.error {
            reasons.push(format!("the PR's change could not be checked ({error})"));
        }
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }

    /// The few words that go after "passed" (`next`, the comment, `list`), the fix's removed
    /// assertions first: `None` when the PR left its tests alone.
    /// `the PR changed its tests: test.sh (+1 −3, 1 assertion removed)`.
    pub fn words(&self) -> Option<String> {
        self.flag?;
        let parts: Vec<String> = [self.fix_words(), self.change_words()].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// [`Integrity::words`] without the fix's removed assertions, for a place that said those
    /// first already (a `NEEDS_REVIEW`'s reason).
    pub fn change_words(&self) -> Option<String> {
        let flag = self.flag?;
        let files: Vec<String> = self.against_base.iter().take(4).map(TestFileChange::words).collect();
        let more = self.against_base.len().saturating_sub(4);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let what = match self.against_base.iter().map(TestFileChange::flag).max() {
            Some(Flag::TestsAdded) => "the PR added tests",
            Some(Flag::TestsChanged) => "the PR changed its tests",
            Some(Flag::AssertionsRemoved) => "the PR changed its tests and removed assertions",
            None => "",
        };
        if !files.is_empty() {
            return Some(format!("{what}: {}{more}", files.join(", ")));
        }
        // Nothing against the base, yet the since-last change is worse than nothing (a test
        // added then taken out again): say that one.
        let since = self.since_last.as_ref().filter(|s| !s.files.is_empty() && flag.needs_a_look())?;
        let files: Vec<String> = since.files.iter().take(4).map(TestFileChange::words).collect();
        Some(format!("since run {} the PR changed its tests: {}", since.iteration, files.join(", ")))
    }

    /// The removed assertion lines the report quotes, across files: the fix's first.
    pub fn removed_lines(&self) -> impl Iterator<Item = (&str, &str)> {
        let fix = self.fix_removed_assertions();
        let fix_lines: Vec<(&str, &str)> =
            fix.iter().flat_map(|(f, _)| f.removed_lines.iter().map(move |l| (f.path.as_str(), l.as_str()))).collect();
        let base =
            self.against_base.iter().flat_map(|f| f.removed_lines.iter().map(move |l| (f.path.as_str(), l.as_str())));
        let mut seen = std::collections::BTreeSet::new();
        fix_lines.into_iter().chain(base).filter(move |pair| seen.insert(*pair))
    }
}

/// A unified diff's text and its index (`domain::diff::index` of the same lines).
pub struct Diff<'a> {
    /// The diff's lines.
    pub lines: &'a [&'a str],
    /// Its index over `lines`.
    pub files: &'a [FileDiff],
}

fn test_changes(diff: &Diff<'_>, judges: &Judges<'_>) -> Vec<TestFileChange> {
    let mut out = Vec::new();
    for file in diff.files {
        let section = diff.lines.get(file.start_line..file.end_line.min(diff.lines.len())).unwrap_or(&[]);
        let body = hunk_lines(section);
        // A Rust hunk inside a test module is a test even where its changed lines are not;
        // elsewhere only the changed lines decide (a package.json change near its scripts).
        let judged: Vec<&str> = if file.path.ends_with(".rs") {
            body.iter().map(|l| l.get(1..).unwrap_or("")).collect()
        } else {
            body.iter().filter(|l| !l.starts_with(' ')).map(|l| l.get(1..).unwrap_or("")).collect()
        };
        let kind = classify(&file.path, judges)
            .or_else(|| file.old_path.as_deref().and_then(|old| classify(old, judges)))
            .or_else(|| {
                let kind = if file.path.ends_with(".rs") { TestFileKind::Test } else { TestFileKind::Config };
                changed_lines_are_tests(&file.path, judged.iter().copied()).then_some(kind)
            });
        let Some(kind) = kind else { continue };
        let removed: Vec<&str> = body.iter().filter_map(|l| l.strip_prefix('-')).collect();
        let added: Vec<&str> = body.iter().filter_map(|l| l.strip_prefix('+')).collect();
        let removed_assertions = assertions_in(&file.path, removed.iter().copied());
        let removed_lines = removed
            .iter()
            .filter(|l| assertions_in(&file.path, [**l]) > 0)
            .take(QUOTED_LINES)
            .map(|l| l.trim().chars().take(QUOTED_CHARS).collect())
            .collect();
        let (by, via) = match kind {
            TestFileKind::Sourced => {
                sourced_by(&file.path, judges).map(|r| (r.by.clone(), r.how.as_str().to_owned())).unzip()
            }
            _ => (None, None),
        };
        out.push(TestFileChange {
            path: file.path.clone(),
            kind,
            status: file.status,
            additions: file.additions,
            deletions: file.deletions,
            removed_assertions,
            added_assertions: assertions_in(&file.path, added.iter().copied()),
            removed_lines,
            by,
            via,
        });
    }
    out
}

/// A file section's hunk lines (`+`, `-`, ` `), without its headers.
fn hunk_lines<'a>(section: &[&'a str]) -> Vec<&'a str> {
    let mut in_hunk = false;
    let mut out = Vec::new();
    for line in section {
        if line.starts_with("@@") {
            in_hunk = true;
            continue;
        }
        if in_hunk && matches!(line.as_bytes().first(), Some(b'+' | b'-' | b' ')) {
            out.push(*line);
        } else if in_hunk && !line.starts_with('\\') {
            in_hunk = false;
        }
    }
    out
}

/// The changed paths (either side of a rename) that match a protect pattern and, when any
/// pattern is set, the changed files that decide what the protected tests mean (a sourced
/// helper, configuration, a shadowing module), each with why.
fn protected_changes(files: &[FileDiff], tests: &[TestFileChange], patterns: &[String]) -> (Vec<String>, Vec<Guarded>) {
    let mut out: Vec<String> = files
        .iter()
        .flat_map(|f| std::iter::once(f.path.as_str()).chain(f.old_path.as_deref()))
        .filter(|path| patterns.iter().any(|p| glob_matches(p, path)))
        .map(str::to_owned)
        .collect();
    let mut guarded = Vec::new();
    if !patterns.is_empty() {
        let matched = out.clone();
        for test in tests.iter().filter(|t| t.kind.changes_meaning() && !matched.contains(&t.path)) {
            let why = match (test.kind, &test.by) {
                (TestFileKind::Sourced, Some(by)) => format!("{} by {by}", test.via.as_deref().unwrap_or("sourced")),
                (TestFileKind::Shadow, _) => "shadows a module tests import".to_owned(),
                _ => "decides what a test run does".to_owned(),
            };
            guarded.push(Guarded { path: test.path.clone(), why });
            out.push(test.path.clone());
        }
    }
    out.sort();
    out.dedup();
    (out, guarded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::{CommandsProfile, parse_commands};
    use crate::domain::diff::index;
    use crate::domain::test_deps::{How, Reached};

    fn assess(text: &str, commands: Option<&CommandsProfile>, protect: &[&str]) -> Integrity {
        assess_with(text, None, Judges::of(commands), protect)
    }

    /// `previous`: the since-last diff's text, whether that run failed, and its failure text.
    fn assess_with(
        text: &str,
        previous: Option<(&str, bool, &str)>,
        judges: Judges<'_>,
        protect: &[&str],
    ) -> Integrity {
        let lines: Vec<&str> = text.lines().collect();
        let files = index(lines.iter().copied());
        let protect: Vec<String> = protect.iter().map(|p| (*p).to_owned()).collect();
        let since_text = previous.map(|(t, _, _)| t).unwrap_or("");
        let since_lines: Vec<&str> = since_text.lines().collect();
        let since_files = index(since_lines.iter().copied());
        let since = Diff { lines: &since_lines, files: &since_files };
        let previous = previous.map(|(_, failed, failure_text)| Previous {
            iteration: 1,
            head_sha: "a".repeat(40),
            diff: &since,
            failed,
            failure_text,
        });
        Integrity::assess(&Assessment {
            whole: &Diff { lines: &lines, files: &files },
            previous,
            judges,
            protect: &protect,
            base_sha: Some("bbbb"),
        })
    }

    const REWRITE: &str = "diff --git a/test.sh b/test.sh
index 1111111..2222222 100644
--- a/test.sh
+++ b/test.sh
@@ -1,3 +1,2 @@
 out=$(sh calc.sh 2 3)
-if [ \"$out\" = 5 ]; then echo ok; else exit 1; fi
+echo \"ok toggle persists across reloads\"; exit 0
diff --git a/calc.sh b/calc.sh
index 3333333..4444444 100644
--- a/calc.sh
+++ b/calc.sh
@@ -1 +1 @@
-echo $(($1 - $2))
+echo $(($1 * $2))
";

    const ADDS_A_TEST: &str = "diff --git a/tests/test_calc.py b/tests/test_calc.py
new file mode 100644
index 0000000..5555555
--- /dev/null
+++ b/tests/test_calc.py
@@ -0,0 +1,2 @@
+def test_add():
+    assert add(2, 3) == 5
";

    #[test]
    fn a_rewritten_test_script_names_the_file_and_the_removed_assertion() {
        let commands = parse_commands(r#"[["sh", "test.sh"]]"#).unwrap();
        let integrity = assess(REWRITE, Some(&commands), &[]);
        assert_eq!(integrity.flag, Some(Flag::AssertionsRemoved));
        assert_eq!(integrity.against_base.len(), 1, "calc.sh is code, not a test: {integrity:?}");
        let file = &integrity.against_base[0];
        assert_eq!((file.path.as_str(), file.kind), ("test.sh", TestFileKind::Run));
        assert_eq!((file.removed_assertions, file.added_assertions), (1, 0));
        assert_eq!(file.removed_lines, vec!["if [ \"$out\" = 5 ]; then echo ok; else exit 1; fi"]);
        let words = integrity.words().unwrap();
        assert_eq!(words, "the PR changed its tests and removed assertions: test.sh (+1 −1, 1 assertion removed)");
        assert!(!integrity.needs_review(), "no fix, nothing protected: flagged, not gated");
    }

    #[test]
    fn a_fix_that_removes_the_failing_assertion_needs_review_and_says_so_first() {
        let commands = parse_commands(r#"[["sh", "test.sh"]]"#).unwrap();
        // Against the base the test file may even count as added; since the failing run it lost
        // its assertion: that is what every place says first.
        let added = "diff --git a/test.sh b/test.sh
new file mode 100644
--- /dev/null
+++ b/test.sh
@@ -0,0 +1,2 @@
+out=$(sh calc.sh 2 3)
+echo ok
";
        let failing = "$ sh test.sh\nnot ok - expected 5, got -1\n";
        let integrity = assess_with(added, Some((REWRITE, true, failing)), Judges::of(Some(&commands)), &[]);
        assert_eq!(integrity.flag, Some(Flag::AssertionsRemoved), "the worst of both comparisons: {integrity:?}");
        assert!(integrity.needs_review(), "with no [protect] at all");
        assert_eq!(integrity.fix_words().unwrap(), "the fix removed 1 assertion from test.sh, the test that failed");
        let reason = integrity.review_reason().unwrap();
        assert!(reason.starts_with("the fix removed 1 assertion from test.sh, the test that failed"), "{reason}");
        let words = integrity.words().unwrap();
        assert!(words.starts_with("the fix removed 1 assertion from test.sh"), "{words}");
        assert_eq!(integrity.removed_lines().next().unwrap().0, "test.sh");
        // The same change after a pass is a flag, not a gate; nor is it after a failure that
        // another change caused, when nothing lost an assertion.
        let after_pass = assess_with(added, Some((REWRITE, false, "")), Judges::of(Some(&commands)), &[]);
        assert!(!after_pass.needs_review() && after_pass.fix_words().is_none());
        assert_eq!(after_pass.flag, Some(Flag::AssertionsRemoved));
        let benign = assess_with(added, Some((ADDS_A_TEST, true, failing)), Judges::of(Some(&commands)), &[]);
        assert!(!benign.needs_review());
        // A file the failure did not name is still named, without "the test that failed".
        let other = assess_with(added, Some((REWRITE, true, "boom")), Judges::of(Some(&commands)), &[]);
        assert_eq!(other.fix_words().unwrap(), "the fix removed 1 assertion from test.sh");
    }

    #[test]
    fn with_paths_protected_what_decides_their_meaning_is_guarded_too() {
        let diff = "diff --git a/testlib.sh b/testlib.sh
--- a/testlib.sh
+++ b/testlib.sh
@@ -1 +1 @@
-check() { [ \"$1\" = \"$2\" ] || exit 1; }
+check() { :; }
diff --git a/unittest.py b/unittest.py
new file mode 100644
--- /dev/null
+++ b/unittest.py
@@ -0,0 +1 @@
+def main(): pass
diff --git a/.cargo/config.toml b/.cargo/config.toml
new file mode 100644
--- /dev/null
+++ b/.cargo/config.toml
@@ -0,0 +2 @@
+[target.x86_64-unknown-linux-gnu]
+runner = \"true\"
diff --git a/check.sh b/check.sh
--- a/check.sh
+++ b/check.sh
@@ -1 +1 @@
-[ \"$(sh calc.sh 2 3)\" = 5 ] || exit 1
+true
";
        let sourced = [
            Reached { path: "testlib.sh".into(), by: "t.sh".into(), root: "t.sh".into(), depth: 1, how: How::Sourced },
            Reached { path: "check.sh".into(), by: "t.sh".into(), root: "t.sh".into(), depth: 1, how: How::Run },
        ];
        let judges = Judges { sourced: &sourced, ..Judges::default() };
        let integrity = assess_with(diff, None, judges, &["t.sh"]);
        assert_eq!(integrity.protected, [".cargo/config.toml", "check.sh", "testlib.sh", "unittest.py"]);
        assert!(integrity.needs_review());
        let reason = integrity.review_reason().unwrap();
        for part in [
            "testlib.sh (sourced by t.sh)",
            "check.sh (run by t.sh)",
            "unittest.py (shadows a module tests import)",
            ".cargo/config.toml (decides what a test run does)",
        ] {
            assert!(reason.contains(part), "{reason}");
        }
        // Added configuration or a shadowing module is never just "tests added".
        assert_eq!(integrity.flag, Some(Flag::AssertionsRemoved));
        let unprotected = assess_with(diff, None, judges, &[]);
        assert!(unprotected.protected.is_empty() && !unprotected.needs_review());
        assert!(unprotected.words().unwrap().contains("testlib.sh (+1 −1, sourced by t.sh, 1 assertion removed)"));
    }

    #[test]
    fn a_pr_that_only_adds_a_test_is_flagged_as_tests_added() {
        let integrity = assess(ADDS_A_TEST, None, &[]);
        assert_eq!(integrity.flag, Some(Flag::TestsAdded));
        assert!(!Flag::TestsAdded.needs_a_look());
        assert_eq!(integrity.words().unwrap(), "the PR added tests: tests/test_calc.py (added)");
        assert_eq!(integrity.against_base[0].removed_assertions, 0);
    }

    #[test]
    fn a_pr_that_leaves_its_tests_alone_has_no_flag_and_no_words() {
        let code_only =
            REWRITE.split("diff --git a/calc.sh").nth(1).map(|s| format!("diff --git a/calc.sh{s}")).unwrap();
        let integrity = assess(&code_only, None, &[]);
        assert_eq!(integrity.flag, None);
        assert_eq!(integrity.words(), None);
    }

    #[test]
    fn protected_paths_changed_against_the_base_need_a_review() {
        let integrity = assess(REWRITE, None, &["test.sh", "docs/"]);
        assert_eq!(integrity.protected, vec!["test.sh"]);
        assert!(integrity.needs_review());
        assert_eq!(integrity.review_reason().unwrap(), "the PR changes protected paths: test.sh");
        let untouched = assess(ADDS_A_TEST, None, &["test.sh"]);
        assert!(!untouched.needs_review());
        // A change that could not be checked is a person's to look at, protected paths or not.
        assert!(Integrity::unchecked("no diff".into(), &["x".into()]).needs_review());
        assert!(Integrity::unchecked("no diff".into(), &[]).needs_review());
    }

    #[test]
    fn rust_test_hunks_in_a_source_file_count() {
        let diff = "diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -10,4 +10,3 @@
     #[test]
     fn adds() {
-        assert_eq!(add(2, 3), 5);
     }
";
        let integrity = assess(diff, None, &[]);
        assert_eq!(integrity.flag, Some(Flag::AssertionsRemoved));
        assert_eq!(integrity.against_base[0].kind, TestFileKind::Test);
    }

    #[test]
    fn a_changed_test_script_in_package_json_counts_and_other_scripts_do_not() {
        let diff = "diff --git a/package.json b/package.json
--- a/package.json
+++ b/package.json
@@ -3,4 +3,4 @@
   \"scripts\": {
-    \"test\": \"jest\",
+    \"test\": \"echo ok\",
     \"build\": \"tsc\"
";
        let integrity = assess(diff, None, &[]);
        assert_eq!(integrity.against_base[0].kind, TestFileKind::Config, "{integrity:?}");
        assert_eq!(integrity.flag, Some(Flag::TestsChanged));
        let build_only = diff.replace(
            "-    \"test\": \"jest\",\n+    \"test\": \"echo ok\",\n     \"build\": \"tsc\"",
            "     \"test\": \"jest\",\n-    \"build\": \"tsc\"\n+    \"build\": \"tsc -b\"",
        );
        assert_eq!(assess(&build_only, None, &[]).flag, None, "{build_only}");
    }

    #[test]
    fn integrity_round_trips_through_json() {
        let commands = parse_commands(r#"[["sh", "test.sh"]]"#).unwrap();
        let integrity = assess(REWRITE, Some(&commands), &["test.sh"]);
        let text = serde_json::to_string(&integrity).unwrap();
        assert!(text.contains("\"flag\":\"assertions_removed\""), "{text}");
        let back: Integrity = serde_json::from_str(&text).unwrap();
        assert_eq!(back, integrity);
    }
}
