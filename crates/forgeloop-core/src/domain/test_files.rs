//! Which changed paths are the PR's own tests (design §5.2, "Trust, then verify"): a passing run
//! means "the head passes the head's tests", so a PR that changes what decides the verdict must
//! say so. A path counts when the commands run it directly, when it is a test by the common
//! conventions, when it configures a test runner or CI, or when it is a snapshot or fixture.
//! The rules are the [`RULES`] table (documented in docs/testing.md and checked against it);
//! the assertion count is a line-level heuristic, not a parser.

use serde::{Deserialize, Serialize};

use super::commands::CommandsProfile;

/// Why a path counts as a test or validation file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestFileKind {
    /// A file the commands run or name directly (`sh test.sh` → `test.sh`), or the script
    /// `package.json`'s `scripts.test` names, or the Makefile a `make` command reads.
    Run,
    /// A test by the common conventions (`tests/`, `*_test.go`, `test_*.py`, `*.spec.ts`, …).
    Test,
    /// A test runner's or CI's configuration (`pytest.ini`, `jest.config.js`,
    /// `.github/workflows/*`, …).
    Config,
    /// A snapshot or fixture the tests compare against.
    Fixture,
}

impl TestFileKind {
    /// The word reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            TestFileKind::Run => "run",
            TestFileKind::Test => "test",
            TestFileKind::Config => "config",
            TestFileKind::Fixture => "fixture",
        }
    }
}

/// One row of the table: what it matches, in words and as a predicate on the path.
pub struct Rule {
    /// What a path matching it counts as.
    pub kind: TestFileKind,
    /// How docs/testing.md writes the pattern.
    pub pattern: &'static str,
    /// A path it matches (a unit test checks each row matches its own first).
    pub example: &'static str,
    /// Whether a path matches.
    pub matches: fn(&Parts<'_>) -> bool,
}

/// A repository-relative path taken apart once.
pub struct Parts<'a> {
    /// The directories, lowercase.
    pub dirs: Vec<String>,
    /// The file name as written.
    pub name: &'a str,
    /// The file name, lowercase.
    pub lower: String,
}

impl<'a> Parts<'a> {
    /// Splits a repository-relative path (a leading `./` dropped).
    pub fn of(path: &'a str) -> Parts<'a> {
        let path = path.trim_start_matches("./");
        let (dirs, name) = match path.rsplit_once('/') {
            Some((dirs, name)) => (dirs.split('/').map(str::to_ascii_lowercase).collect(), name),
            None => (Vec::new(), path),
        };
        Parts { dirs, name, lower: name.to_ascii_lowercase() }
    }

    fn in_dir(&self, names: &[&str]) -> bool {
        self.dirs.iter().any(|d| names.contains(&d.as_str()))
    }

    /// The name without its last extension, and that extension.
    fn stem_ext(&self) -> (&str, &str) {
        match self.lower.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => (stem, ext),
            _ => (self.lower.as_str(), ""),
        }
    }
}

const CODE_EXTENSIONS: &[&str] = &[
    "py", "rs", "go", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "rb", "java", "kt", "kts", "scala", "cs",
    "fs", "php", "swift", "c", "cc", "cpp", "h", "hpp", "ex", "exs", "sh", "bash", "lua", "dart", "clj", "hs", "ml",
];

fn is_code(parts: &Parts<'_>) -> bool {
    CODE_EXTENSIONS.contains(&parts.stem_ext().1)
}

/// The table, in the order a path is tried (the first match names its kind).
pub static RULES: &[Rule] = &[
    Rule {
        kind: TestFileKind::Fixture,
        pattern: "`__snapshots__/`, `*.snap`, `*.golden`, `fixtures/`, `testdata/`, `__fixtures__/`",
        example: "src/__snapshots__/app.test.ts.snap",
        matches: |p| {
            p.in_dir(&["__snapshots__", "fixtures", "testdata", "__fixtures__", "snapshots"])
                || matches!(p.stem_ext().1, "snap" | "golden")
        },
    },
    Rule {
        kind: TestFileKind::Test,
        pattern: "a file under `tests/`, `test/`, `spec/`, `__tests__/`",
        example: "tests/test_widget.py",
        matches: |p| p.in_dir(&["tests", "test", "spec", "specs", "__tests__"]),
    },
    Rule {
        kind: TestFileKind::Test,
        pattern: "`*_test.*`, `*_spec.*` (code)",
        example: "pkg/widget_test.go",
        matches: |p| {
            let stem = p.stem_ext().0;
            is_code(p) && (stem.ends_with("_test") || stem.ends_with("_spec") || stem.ends_with("_tests"))
        },
    },
    Rule {
        kind: TestFileKind::Test,
        pattern: "`test_*.py`, `conftest.py`",
        example: "test_widget.py",
        matches: |p| p.lower == "conftest.py" || (p.lower.starts_with("test_") && p.lower.ends_with(".py")),
    },
    Rule {
        kind: TestFileKind::Test,
        pattern: "`*.spec.*`, `*.test.*` (code)",
        example: "src/app.spec.ts",
        matches: |p| is_code(p) && (p.stem_ext().0.ends_with(".spec") || p.stem_ext().0.ends_with(".test")),
    },
    Rule {
        kind: TestFileKind::Config,
        pattern: "`.github/workflows/*`, `.gitlab-ci.yml`, `.circleci/*`, `Jenkinsfile`, `azure-pipelines.yml`",
        example: ".github/workflows/ci.yml",
        matches: |p| {
            (p.dirs.len() >= 2 && p.dirs[0] == ".github" && p.dirs[1] == "workflows")
                || p.dirs.first().is_some_and(|d| d == ".circleci")
                || matches!(p.lower.as_str(), ".gitlab-ci.yml" | "jenkinsfile" | "azure-pipelines.yml")
        },
    },
    Rule {
        kind: TestFileKind::Config,
        pattern: "`pytest.ini`, `tox.ini`, `noxfile.py`, `jest.config.*`, `vitest.config.*`, `karma.conf.*`, `.mocharc*`, `playwright.config.*`, `cypress.config.*`, `phpunit.xml*`, `.rspec`",
        example: "jest.config.js",
        matches: |p| {
            let l = p.lower.as_str();
            matches!(l, "pytest.ini" | "tox.ini" | "noxfile.py" | ".rspec")
                || [
                    "jest.config.",
                    "vitest.config.",
                    "karma.conf.",
                    ".mocharc",
                    "playwright.config.",
                    "cypress.config.",
                    "phpunit.xml",
                ]
                .iter()
                .any(|prefix| l.starts_with(prefix))
        },
    },
];

/// The kind of `path`, if it is a test or validation file: named by `commands` (or by
/// `test_script`, `package.json`'s `scripts.test` at the tested head), else by [`RULES`].
/// Rust tests inside a source file (`#[cfg(test)]` hunks) and `Cargo.toml`'s `[[test]]` are
/// decided from the changed lines by [`changed_lines_are_tests`].
pub fn classify(path: &str, commands: Option<&CommandsProfile>, test_script: Option<&str>) -> Option<TestFileKind> {
    let clean = path.trim_start_matches("./");
    if named_by(clean, commands, test_script) {
        return Some(TestFileKind::Run);
    }
    let parts = Parts::of(clean);
    RULES.iter().find(|rule| (rule.matches)(&parts)).map(|rule| rule.kind)
}

/// Whether a command's words, or the test script's, name `path` (or a `make` command reads it).
fn named_by(path: &str, commands: Option<&CommandsProfile>, test_script: Option<&str>) -> bool {
    let names = |word: &str| {
        let word = word.trim_start_matches("./");
        !word.is_empty() && (word == path || word.split('=').next_back() == Some(path))
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    let argvs = commands.into_iter().flat_map(|c| c.setup.iter().chain(c.commands.iter())).map(|c| &c.argv);
    for argv in argvs {
        if argv.iter().any(|w| names(w)) {
            return true;
        }
        let runs_make = argv.first().is_some_and(|p| p.rsplit('/').next() == Some("make"));
        if runs_make && !path.contains('/') && matches!(name, "Makefile" | "makefile" | "GNUmakefile") {
            return true;
        }
    }
    test_script.is_some_and(|script| script.split_whitespace().any(names))
}

/// Whether the lines of a non-test file's change are tests themselves: Rust's
/// `#[test]`/`#[cfg(test)]` lines (a hunk's context counts: the hunk is inside a test module),
/// `Cargo.toml`'s `[[test]]` tables, or `package.json`'s `"test"` script (changed lines only).
pub fn changed_lines_are_tests<'a>(path: &str, lines: impl IntoIterator<Item = &'a str>) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let markers: &[&str] = if path.ends_with(".rs") {
        &["#[test]", "#[cfg(test)]", "#[tokio::test", "mod tests"]
    } else if name == "Cargo.toml" {
        &["[[test]]"]
    } else if name == "package.json" {
        &["\"test\":", "\"test\" :"]
    } else {
        return false;
    };
    lines.into_iter().any(|line| markers.iter().any(|m| line.trim_start().starts_with(m)))
}

/// Words that make a line an assertion, per language family (a heuristic: a line, not a parse).
pub const ASSERTION_MARKERS: &[(&str, &[&str])] = &[
    ("Rust", &["assert!", "assert_eq!", "assert_ne!", "debug_assert", "#[test]", "#[should_panic"]),
    ("Python", &["assert ", "self.assert", "pytest.raises", "self.fail("]),
    ("JavaScript/TypeScript", &["expect(", "assert.", "assert(", ".should", "t.is(", "t.deepEqual("]),
    ("Go", &["t.Error", "t.Fatal", "require.", "assert."]),
    ("Ruby/Java/others", &["assert", "expect", "should", "verify("]),
    ("shell", &["exit 1", "test ", "[ "]),
];

/// How many of `removed` lines (a diff's `-` lines, without the sign) look like assertions.
pub fn assertions_in<'a>(removed: impl IntoIterator<Item = &'a str>) -> u64 {
    removed
        .into_iter()
        .filter(|line| {
            let line = line.trim_start();
            !line.is_empty()
                && !line.starts_with("//")
                && !line.starts_with("# ")
                && ASSERTION_MARKERS.iter().any(|(_, words)| words.iter().any(|w| line.contains(w)))
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::parse_commands;

    #[test]
    fn every_row_matches_its_own_example_and_is_the_first_to() {
        for rule in RULES {
            let kind = classify(rule.example, None, None);
            assert_eq!(kind, Some(rule.kind), "{} ({})", rule.example, rule.pattern);
            assert!((rule.matches)(&Parts::of(rule.example)), "{}", rule.example);
        }
    }

    #[test]
    fn each_convention_counts_and_look_alikes_do_not() {
        let cases: &[(&str, Option<TestFileKind>)] = &[
            ("tests/integration.rs", Some(TestFileKind::Test)),
            ("crates/core/tests/api.rs", Some(TestFileKind::Test)),
            ("test/widget.js", Some(TestFileKind::Test)),
            ("spec/models/user_spec.rb", Some(TestFileKind::Test)),
            ("src/__tests__/App.tsx", Some(TestFileKind::Test)),
            ("pkg/server_test.go", Some(TestFileKind::Test)),
            ("test_widget.py", Some(TestFileKind::Test)),
            ("app/conftest.py", Some(TestFileKind::Test)),
            ("src/app.spec.ts", Some(TestFileKind::Test)),
            ("src/button.test.jsx", Some(TestFileKind::Test)),
            ("pytest.ini", Some(TestFileKind::Config)),
            ("tox.ini", Some(TestFileKind::Config)),
            ("jest.config.ts", Some(TestFileKind::Config)),
            (".github/workflows/ci.yml", Some(TestFileKind::Config)),
            (".gitlab-ci.yml", Some(TestFileKind::Config)),
            ("src/__snapshots__/a.snap", Some(TestFileKind::Fixture)),
            ("tests/fixtures/data.json", Some(TestFileKind::Fixture)),
            ("testdata/golden.txt", Some(TestFileKind::Fixture)),
            ("out/render.golden", Some(TestFileKind::Fixture)),
            // Look-alikes.
            ("src/contest.py", None),
            ("src/testing.rs", None),
            ("docs/test_plan.md", None),
            ("src/latest.ts", None),
            ("attest.go", None),
            ("README.md", None),
            ("src/widget.py", None),
            (".github/CODEOWNERS", None),
        ];
        for (path, kind) in cases {
            assert_eq!(classify(path, None, None), *kind, "{path}");
        }
    }

    #[test]
    fn what_the_commands_run_counts_first() {
        let commands =
            parse_commands(r#"[["sh", "test.sh"], ["python3", "./scripts/check.py", "--strict"], ["make", "test"]]"#)
                .unwrap();
        assert_eq!(classify("test.sh", Some(&commands), None), Some(TestFileKind::Run));
        assert_eq!(classify("scripts/check.py", Some(&commands), None), Some(TestFileKind::Run));
        assert_eq!(classify("Makefile", Some(&commands), None), Some(TestFileKind::Run));
        assert_eq!(classify("sub/Makefile", Some(&commands), None), None);
        assert_eq!(classify("calc.sh", Some(&commands), None), None);
        // package.json's scripts.test names the file it runs.
        assert_eq!(
            classify("scripts/run-tests.mjs", None, Some("node scripts/run-tests.mjs --ci")),
            Some(TestFileKind::Run)
        );
        assert_eq!(classify("scripts/build.mjs", None, Some("node scripts/run-tests.mjs")), None);
    }

    #[test]
    fn rust_tests_inside_source_and_cargo_test_tables_are_decided_by_their_lines() {
        assert!(changed_lines_are_tests("src/lib.rs", ["    #[test]", "    fn adds() {}"]));
        assert!(changed_lines_are_tests("src/lib.rs", ["#[cfg(test)]"]));
        assert!(!changed_lines_are_tests("src/lib.rs", ["pub fn add(a: i32) -> i32 { a }"]));
        assert!(changed_lines_are_tests("Cargo.toml", ["[[test]]", "name = \"x\""]));
        assert!(!changed_lines_are_tests("Cargo.toml", ["serde = \"1\""]));
        assert!(!changed_lines_are_tests("src/app.py", ["#[test]"]));
        assert!(changed_lines_are_tests("package.json", ["    \"test\": \"echo ok\","]));
        assert!(!changed_lines_are_tests("package.json", ["    \"build\": \"tsc\","]));
    }

    #[test]
    fn removed_assertions_are_counted_line_by_line() {
        let removed = [
            "    assert_eq!(add(2, 3), 5);",
            "  expect(toggle()).toBe(true);",
            "    self.assertEqual(x, 1)",
            "if [ \"$out\" = 5 ]; then echo ok; else exit 1; fi",
            "    let x = 1;",
            "// assert nothing in a comment",
            "",
        ];
        assert_eq!(assertions_in(removed), 4);
        assert_eq!(assertions_in(["echo \"ok toggle persists\"", "exit 0"]), 0);
    }
}
