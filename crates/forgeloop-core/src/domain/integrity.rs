//! A run's `integrity` (design §5.2, "Trust, then verify"): which of the PR's changed files
//! decide the verdict (tests, the scripts the commands run, runner and CI configuration,
//! fixtures), how they changed against the base and since the last tested head, whether
//! assertions went away, and which of the person's protected paths the head touches. Pure: it
//! reads diffs already fetched and redacted.

use serde::{Deserialize, Serialize};

use super::commands::CommandsProfile;
use super::diff::{FileDiff, FileStatus};
use super::test_files::{TestFileKind, assertions_in, changed_lines_are_tests, classify};

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
    /// Test files lost or changed lines, without fewer assertions.
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
}

impl TestFileChange {
    fn flag(&self) -> Flag {
        if self.removed_assertions > self.added_assertions {
            Flag::AssertionsRemoved
        } else if self.deletions > 0 || self.status == FileStatus::Removed {
            Flag::TestsChanged
        } else {
            Flag::TestsAdded
        }
    }

    /// `test.sh (rewritten: −3 +2, 1 assertion removed)`.
    pub fn words(&self) -> String {
        let how = match self.status {
            FileStatus::Added => "added".to_owned(),
            FileStatus::Removed => "deleted".to_owned(),
            _ => format!("+{} −{}", self.additions, self.deletions),
        };
        let net = self.removed_assertions.saturating_sub(self.added_assertions);
        match net {
            0 => format!("{} ({how})", self.path),
            1 => format!("{} ({how}, 1 assertion removed)", self.path),
            n => format!("{} ({how}, {n} assertions removed)", self.path),
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
}

/// The report's `integrity`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// The worst of what `against_base` shows; `None` when the PR left its tests alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<Flag>,
    /// Test files the tested head changes against the base branch (the whole PR).
    #[serde(default)]
    pub against_base: Vec<TestFileChange>,
    /// Test files changed since the previous tested head of the cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_last: Option<SinceLast>,
    /// The person's protected paths (`[protect]`) the head changes against the base.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected: Vec<String>,
    /// The protect patterns in force for the run (so a reader knows what was checked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protect_patterns: Vec<String>,
    /// Why the change could not be checked (the diff could not be had); with protected paths
    /// configured such a pass needs a person's review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Integrity {
    /// From the whole-PR diff (and the since-last one, when there is a previous tested head).
    pub fn assess(
        whole: &Diff<'_>,
        since_last: Option<(u32, String, &Diff<'_>)>,
        commands: Option<&CommandsProfile>,
        test_script: Option<&str>,
        protect: &[String],
    ) -> Integrity {
        let against_base = test_changes(whole, commands, test_script);
        let flag = against_base.iter().map(TestFileChange::flag).max();
        let since_last = since_last.map(|(iteration, head_sha, diff)| SinceLast {
            iteration,
            head_sha,
            files: test_changes(diff, commands, test_script),
        });
        Integrity {
            flag,
            against_base,
            since_last,
            protected: protected_changes(whole.files, protect),
            protect_patterns: protect.to_vec(),
            error: None,
        }
    }

    /// The check could not be made.
    pub fn unchecked(error: String, protect: &[String]) -> Integrity {
        Integrity { protect_patterns: protect.to_vec(), error: Some(error), ..Integrity::default() }
    }

    /// Whether a pass must wait for a person (`NEEDS_REVIEW`): it changed a protected path, or
    /// paths are protected and the change could not be checked.
    pub fn needs_review(&self) -> bool {
        !self.protected.is_empty() || (self.error.is_some() && !self.protect_patterns.is_empty())
    }

    /// Why the pass waits for a person, in one sentence.
    pub fn review_reason(&self) -> Option<String> {
        if !self.protected.is_empty() {
            return Some(format!("the PR changes protected paths: {}", self.protected.join(", ")));
        }
        match &self.error {
            Some(error) if !self.protect_patterns.is_empty() => {
                Some(format!("paths are protected and the PR's change could not be checked ({error})"))
            }
            _ => None,
        }
    }

    /// The few words that go after "passed" (`next`, the comment, `list`): `None` when the PR
    /// left its tests alone. `the PR changed its tests: test.sh (+1 −3, 1 assertion removed)`.
    pub fn words(&self) -> Option<String> {
        let flag = self.flag?;
        let files: Vec<String> = self.against_base.iter().take(4).map(TestFileChange::words).collect();
        let more = self.against_base.len().saturating_sub(4);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let what = match flag {
            Flag::TestsAdded => "the PR added tests",
            Flag::TestsChanged => "the PR changed its tests",
            Flag::AssertionsRemoved => "the PR changed its tests and removed assertions",
        };
        Some(format!("{what}: {}{more}", files.join(", ")))
    }

    /// The removed assertion lines the report quotes, across files.
    pub fn removed_lines(&self) -> impl Iterator<Item = (&str, &str)> {
        self.against_base.iter().flat_map(|f| f.removed_lines.iter().map(move |l| (f.path.as_str(), l.as_str())))
    }
}

/// A unified diff's text and its index (`domain::diff::index` of the same lines).
pub struct Diff<'a> {
    /// The diff's lines.
    pub lines: &'a [&'a str],
    /// Its index over `lines`.
    pub files: &'a [FileDiff],
}

fn test_changes(diff: &Diff<'_>, commands: Option<&CommandsProfile>, test_script: Option<&str>) -> Vec<TestFileChange> {
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
        let kind = classify(&file.path, commands, test_script)
            .or_else(|| file.old_path.as_deref().and_then(|old| classify(old, commands, test_script)))
            .or_else(|| {
                let kind = if file.path.ends_with(".rs") { TestFileKind::Test } else { TestFileKind::Config };
                changed_lines_are_tests(&file.path, judged.iter().copied()).then_some(kind)
            });
        let Some(kind) = kind else { continue };
        let removed: Vec<&str> = body.iter().filter_map(|l| l.strip_prefix('-')).collect();
        let added: Vec<&str> = body.iter().filter_map(|l| l.strip_prefix('+')).collect();
        let removed_assertions = assertions_in(removed.iter().copied());
        let removed_lines = removed
            .iter()
            .filter(|l| assertions_in([**l]) > 0)
            .take(QUOTED_LINES)
            .map(|l| l.trim().chars().take(QUOTED_CHARS).collect())
            .collect();
        out.push(TestFileChange {
            path: file.path.clone(),
            kind,
            status: file.status,
            additions: file.additions,
            deletions: file.deletions,
            removed_assertions,
            added_assertions: assertions_in(added.iter().copied()),
            removed_lines,
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

/// The changed paths (either side of a rename) that match a protect pattern.
fn protected_changes(files: &[FileDiff], patterns: &[String]) -> Vec<String> {
    let mut out: Vec<String> = files
        .iter()
        .flat_map(|f| std::iter::once(f.path.as_str()).chain(f.old_path.as_deref()))
        .filter(|path| patterns.iter().any(|p| glob_matches(p, path)))
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether `path` (repository-relative) matches `pattern`: `*` and `?` within one path
/// component, `**` across components, a trailing `/` for everything under a directory, and a
/// pattern without `/` matches the file name at any depth (as `.gitignore` reads it).
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let path = path.trim_start_matches("./");
    if pattern.is_empty() {
        return false;
    }
    if let Some(dir) = pattern.strip_suffix('/') {
        return glob_matches(&format!("{dir}/**"), path);
    }
    let anchored = pattern.starts_with('/');
    let pattern = pattern.trim_start_matches('/');
    if !anchored && !pattern.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return wildcard(pattern.as_bytes(), name.as_bytes()) || wildcard(pattern.as_bytes(), path.as_bytes());
    }
    wildcard(pattern.as_bytes(), path.as_bytes())
}

fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    match pattern {
        [] => text.is_empty(),
        [b'*', b'*', b'/', rest @ ..] => {
            // Zero or more whole directories.
            wildcard(rest, text) || text.iter().enumerate().any(|(i, b)| *b == b'/' && wildcard(rest, &text[i + 1..]))
        }
        [b'*', b'*', rest @ ..] => (0..=text.len()).any(|i| wildcard(rest, &text[i..])),
        [b'*', rest @ ..] => {
            let stop = text.iter().position(|b| *b == b'/').unwrap_or(text.len());
            (0..=stop).any(|i| wildcard(rest, &text[i..]))
        }
        [b'?', rest @ ..] => text.first().is_some_and(|b| *b != b'/') && wildcard(rest, &text[1..]),
        [c, rest @ ..] => text.first() == Some(c) && wildcard(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::parse_commands;
    use crate::domain::diff::index;

    fn assess(text: &str, commands: Option<&CommandsProfile>, protect: &[&str]) -> Integrity {
        let lines: Vec<&str> = text.lines().collect();
        let files = index(lines.iter().copied());
        let protect: Vec<String> = protect.iter().map(|p| (*p).to_owned()).collect();
        Integrity::assess(&Diff { lines: &lines, files: &files }, None, commands, None, &protect)
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
        assert!(!integrity.needs_review());
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
        // Unchecked with protected paths: a person looks; without, nothing to protect.
        assert!(Integrity::unchecked("no diff".into(), &["x".into()]).needs_review());
        assert!(!Integrity::unchecked("no diff".into(), &[]).needs_review());
    }

    #[test]
    fn globs_read_as_gitignore_does() {
        let cases = [
            ("test.sh", "test.sh", true),
            ("test.sh", "sub/test.sh", true),
            ("/test.sh", "sub/test.sh", false),
            ("tests/", "tests/a/b.py", true),
            ("tests/", "src/tests.py", false),
            ("tests/**", "tests/x.rs", true),
            ("*.snap", "a/b/c.snap", true),
            ("src/*.rs", "src/lib.rs", true),
            ("src/*.rs", "src/a/lib.rs", false),
            ("src/**/*.rs", "src/lib.rs", true),
            ("src/**/*.rs", "src/a/b/lib.rs", true),
            (".github/workflows/*", ".github/workflows/ci.yml", true),
            ("t?st.sh", "test.sh", true),
            ("t?st.sh", "t/st.sh", false),
            ("", "anything", false),
        ];
        for (pattern, path, want) in cases {
            assert_eq!(glob_matches(pattern, path), want, "{pattern} vs {path}");
        }
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
