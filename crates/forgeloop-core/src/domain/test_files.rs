//! Which changed paths are the PR's own tests (design §5.2, "Trust, then verify"): a passing run
//! means "the head passes the head's tests", so a PR that changes what decides the verdict must
//! say so. A path counts when the commands run it directly, when it is a test by the common
//! conventions, when it configures a test runner or CI, or when it is a snapshot or fixture.
//! The rules are the [`RULES`] table (documented in docs/testing.md and checked against it);
//! the assertion count is a line-level heuristic, not a parser.

use serde::{Deserialize, Serialize};

use super::commands::CommandsProfile;
use super::test_deps::Reached;

/// Why a path counts as a test or validation file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestFileKind {
    /// A file the commands run or name directly (`sh test.sh` → `test.sh`), or the script
    /// `package.json`'s `scripts.test` names, or the Makefile a `make` command reads.
    Run,
    /// A test by the common conventions (`tests/`, `*_test.go`, `test_*.py`, `*.spec.ts`, …).
    Test,
    /// What decides what a test run does: a test runner's, the build's or CI's configuration
    /// (`pytest.ini`, `jest.config.js`, `.cargo/config.toml`, `build.rs`, `Makefile`,
    /// `.github/workflows/*`, …).
    Config,
    /// A snapshot or fixture the tests compare against.
    Fixture,
    /// A module at an import root named like a standard-library or test-runner module
    /// (`unittest.py`, `pytest.py`), or anything under a committed `node_modules/`: a test
    /// would import it instead of the real one.
    Shadow,
    /// A file a test or a run script sources or imports from the checkout
    /// ([`super::test_deps`]): what the test means is in it too.
    Sourced,
}

impl TestFileKind {
    /// The word reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            TestFileKind::Run => "run",
            TestFileKind::Test => "test",
            TestFileKind::Config => "config",
            TestFileKind::Fixture => "fixture",
            TestFileKind::Shadow => "shadow",
            TestFileKind::Sourced => "sourced",
        }
    }

    /// Whether the kind is about what a test run *means* rather than a test of its own: a
    /// change to it is never just "tests added", and with paths protected it needs a person's
    /// review (design §5.2).
    pub fn changes_meaning(self) -> bool {
        matches!(self, TestFileKind::Config | TestFileKind::Shadow | TestFileKind::Sourced)
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

/// Python's standard-library modules (`sys.stdlib_module_names` of CPython 3.11, sorted) and
/// the test runners' own: a module of one of these names at an import root is imported
/// instead of the real one. `test` (the standard library's own test package) is left out:
/// every other repository has a `test/` directory.
pub const PYTHON_SHADOWED: &[&str] = &[
    "__future__",
    "_abc",
    "_aix_support",
    "_ast",
    "_asyncio",
    "_bisect",
    "_blake2",
    "_bootsubprocess",
    "_bz2",
    "_codecs",
    "_codecs_cn",
    "_codecs_hk",
    "_codecs_iso2022",
    "_codecs_jp",
    "_codecs_kr",
    "_codecs_tw",
    "_collections",
    "_collections_abc",
    "_compat_pickle",
    "_compression",
    "_contextvars",
    "_crypt",
    "_csv",
    "_ctypes",
    "_curses",
    "_curses_panel",
    "_datetime",
    "_dbm",
    "_decimal",
    "_elementtree",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_functools",
    "_gdbm",
    "_hashlib",
    "_heapq",
    "_imp",
    "_io",
    "_json",
    "_locale",
    "_lsprof",
    "_lzma",
    "_markupbase",
    "_md5",
    "_msi",
    "_multibytecodec",
    "_multiprocessing",
    "_opcode",
    "_operator",
    "_osx_support",
    "_overlapped",
    "_pickle",
    "_posixshmem",
    "_posixsubprocess",
    "_py_abc",
    "_pydecimal",
    "_pyio",
    "_pytest",
    "_queue",
    "_random",
    "_scproxy",
    "_sha1",
    "_sha256",
    "_sha3",
    "_sha512",
    "_signal",
    "_sitebuiltins",
    "_socket",
    "_sqlite3",
    "_sre",
    "_ssl",
    "_stat",
    "_statistics",
    "_string",
    "_strptime",
    "_struct",
    "_symtable",
    "_thread",
    "_threading_local",
    "_tkinter",
    "_tokenize",
    "_tracemalloc",
    "_typing",
    "_uuid",
    "_warnings",
    "_weakref",
    "_weakrefset",
    "_winapi",
    "_zoneinfo",
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "coverage",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "hypothesis",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "mock",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nose",
    "nose2",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "pluggy",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "pytest",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdist",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// The module a `.py` path defines at an import root (the repository's root or `src/`): `x`
/// for `x.py` and `x/__init__.py` there, else `None`.
fn python_top_module<'a>(p: &'a Parts<'_>) -> Option<&'a str> {
    let (stem, ext) = p.stem_ext();
    if ext != "py" {
        return None;
    }
    let dirs: &[String] = match p.dirs.first().map(String::as_str) {
        Some("src") => &p.dirs[1..],
        _ => &p.dirs,
    };
    match (dirs, stem) {
        ([], stem) => Some(stem),
        ([package], "__init__") => Some(package.as_str()),
        _ => None,
    }
}

/// The table, in the order a path is tried (the first match names its kind).
pub static RULES: &[Rule] = &[
    Rule {
        kind: TestFileKind::Shadow,
        pattern: "a Python module at the root or in `src/` named like a standard-library or test-runner module (`unittest.py`, `pytest.py`, `json/__init__.py`, …), `sitecustomize.py`, `usercustomize.py`, `*.pth`, anything under `node_modules/`",
        example: "unittest.py",
        matches: |p| {
            p.in_dir(&["node_modules"])
                || matches!(p.lower.as_str(), "sitecustomize.py" | "usercustomize.py")
                || p.stem_ext().1 == "pth"
                || python_top_module(p).is_some_and(|m| PYTHON_SHADOWED.iter().any(|s| s.eq_ignore_ascii_case(m)))
        },
    },
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
        pattern: "`pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`, `noxfile.py`, `jest.config.*`, `jest.setup.*`, `setupTests.*`, `vitest.config.*`, `vitest.workspace.*`, `vitest.setup.*`, `karma.conf.*`, `.mocharc*`, `playwright.config.*`, `cypress.config.*`, `phpunit.xml*`, `.rspec`",
        example: "jest.config.js",
        matches: |p| {
            let l = p.lower.as_str();
            matches!(l, "pytest.ini" | "pyproject.toml" | "setup.cfg" | "tox.ini" | "noxfile.py" | ".rspec")
                || [
                    "jest.config.",
                    "jest.setup.",
                    "setuptests.",
                    "vitest.config.",
                    "vitest.workspace.",
                    "vitest.setup.",
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
    Rule {
        kind: TestFileKind::Config,
        pattern: "`.cargo/config`, `.cargo/config.toml`, `build.rs`, `rust-toolchain`, `rust-toolchain.toml`, `Makefile`, `GNUmakefile`, `*.mk`, `justfile`, `.npmrc`",
        example: ".cargo/config.toml",
        matches: |p| {
            let l = p.lower.as_str();
            (p.dirs.last().is_some_and(|d| d == ".cargo") && matches!(l, "config" | "config.toml"))
                || matches!(
                    l,
                    "build.rs"
                        | "rust-toolchain"
                        | "rust-toolchain.toml"
                        | "makefile"
                        | "gnumakefile"
                        | "justfile"
                        | ".justfile"
                        | ".npmrc"
                )
                || p.stem_ext().1 == "mk"
        },
    },
];

/// What decides which paths are tests beyond the [`RULES`] table: the commands that ran,
/// `package.json`'s `scripts.test` at the tested head, and the files tests source or import.
#[derive(Debug, Clone, Copy, Default)]
pub struct Judges<'a> {
    /// The commands of the run.
    pub commands: Option<&'a CommandsProfile>,
    /// `package.json`'s `scripts.test` in the tested tree.
    pub test_script: Option<&'a str>,
    /// What the run's scripts, the protected files and the changed tests source or import.
    pub sourced: &'a [Reached],
}

impl<'a> Judges<'a> {
    /// Judged by the commands alone.
    pub fn of(commands: Option<&'a CommandsProfile>) -> Judges<'a> {
        Judges { commands, ..Judges::default() }
    }
}

/// The kind of `path`, if it is a test or validation file: named by the commands (or by the
/// test script), reached from a test ([`Judges::sourced`]), else by [`RULES`]. Rust tests
/// inside a source file (`#[cfg(test)]` hunks), `Cargo.toml`'s `[[test]]`, `[patch]` and
/// `harness`, `go.mod`'s `replace` and `package.json`'s test scripts are decided from the
/// changed lines by [`changed_lines_are_tests`].
pub fn classify(path: &str, judges: &Judges<'_>) -> Option<TestFileKind> {
    let clean = path.trim_start_matches("./");
    if named_by(clean, judges.commands, judges.test_script) {
        return Some(TestFileKind::Run);
    }
    let parts = Parts::of(clean);
    let rule = RULES.iter().find(|rule| (rule.matches)(&parts)).map(|rule| rule.kind);
    // A sourced helper that the table calls a test or fixture is still what a test reads.
    match rule {
        Some(kind @ (TestFileKind::Shadow | TestFileKind::Config)) => Some(kind),
        _ if judges.sourced.iter().any(|r| r.path == clean) => Some(TestFileKind::Sourced),
        other => other,
    }
}

/// The names a file was reached through, for a report: `testlib.sh (sourced by t.sh)`.
pub fn sourced_by<'a>(path: &str, judges: &Judges<'a>) -> Option<&'a Reached> {
    judges.sourced.iter().find(|r| r.path == path)
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

/// The paths the commands (or the test script) name that could be files of the repository:
/// the roots of [`super::test_deps::closure`].
pub fn named_paths(commands: Option<&CommandsProfile>, test_script: Option<&str>) -> Vec<String> {
    let argvs = commands.into_iter().flat_map(|c| c.setup.iter().chain(c.commands.iter())).map(|c| &c.argv);
    let mut words: Vec<&str> = argvs.flat_map(|argv| argv.iter().skip(1)).map(String::as_str).collect();
    words.extend(test_script.into_iter().flat_map(str::split_whitespace));
    let mut out: Vec<String> = words
        .into_iter()
        .map(|w| w.split('=').next_back().unwrap_or(w).trim_start_matches("./"))
        .filter(|w| !w.is_empty() && !w.starts_with(['-', '/', '$']) && !w.contains("..") && w.contains('.'))
        .map(str::to_owned)
        .collect();
    if commands.is_some_and(|c| {
        c.setup.iter().chain(c.commands.iter()).any(|c| c.argv.first().is_some_and(|p| p.ends_with("make")))
    }) {
        out.extend(["Makefile", "makefile", "GNUmakefile"].map(str::to_owned));
    }
    out.sort();
    out.dedup();
    out
}

/// Whether the lines of a non-test file's change are tests themselves: Rust's
/// `#[test]`/`#[cfg(test)]` lines (a hunk's context counts: the hunk is inside a test module),
/// `Cargo.toml`'s `[[test]]` tables, `[patch…]` and `harness` (which decide what `cargo test`
/// builds and runs), `go.mod`'s `replace` (which swaps a dependency for other code), or
/// `package.json`'s test scripts and runner settings (changed lines only).
pub fn changed_lines_are_tests<'a>(path: &str, lines: impl IntoIterator<Item = &'a str>) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let markers: &[&str] = if path.ends_with(".rs") {
        &["#[test]", "#[cfg(test)]", "#[tokio::test", "mod tests"]
    } else if name == "Cargo.toml" {
        &["[[test]]", "[patch", "harness", "[profile.test"]
    } else if name == "go.mod" {
        &["replace ", "replace("]
    } else if name == "package.json" {
        &[
            "\"test\":",
            "\"test\" :",
            "\"pretest\":",
            "\"posttest\":",
            "\"test:",
            "\"jest\":",
            "\"mocha\":",
            "\"ava\":",
            "\"vitest\":",
        ]
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
            let kind = classify(rule.example, &Judges::default());
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
            ("pyproject.toml", Some(TestFileKind::Config)),
            ("setup.cfg", Some(TestFileKind::Config)),
            ("src/setupTests.ts", Some(TestFileKind::Config)),
            (".cargo/config", Some(TestFileKind::Config)),
            ("crates/x/.cargo/config.toml", Some(TestFileKind::Config)),
            ("build.rs", Some(TestFileKind::Config)),
            ("crates/sys/build.rs", Some(TestFileKind::Config)),
            ("rust-toolchain.toml", Some(TestFileKind::Config)),
            ("Makefile", Some(TestFileKind::Config)),
            ("sub/Makefile", Some(TestFileKind::Config)),
            ("mk/rules.mk", Some(TestFileKind::Config)),
            ("justfile", Some(TestFileKind::Config)),
            (".npmrc", Some(TestFileKind::Config)),
            ("unittest.py", Some(TestFileKind::Shadow)),
            ("pytest.py", Some(TestFileKind::Shadow)),
            ("src/json/__init__.py", Some(TestFileKind::Shadow)),
            ("_pytest/__init__.py", Some(TestFileKind::Shadow)),
            ("lib/sitecustomize.py", Some(TestFileKind::Shadow)),
            ("evil.pth", Some(TestFileKind::Shadow)),
            ("node_modules/jest/bin/jest.js", Some(TestFileKind::Shadow)),
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
            ("pkg/json.py", None),
            ("src/app/os.py", None),
            ("json/data.py", None),
            ("test.py", None),
            ("Cargo.toml", None),
            ("docs/config", None),
        ];
        for (path, kind) in cases {
            assert_eq!(classify(path, &Judges::default()), *kind, "{path}");
        }
    }

    #[test]
    fn what_the_commands_run_counts_first() {
        let commands =
            parse_commands(r#"[["sh", "test.sh"], ["python3", "./scripts/check.py", "--strict"], ["make", "test"]]"#)
                .unwrap();
        let judges = Judges::of(Some(&commands));
        assert_eq!(classify("test.sh", &judges), Some(TestFileKind::Run));
        assert_eq!(classify("scripts/check.py", &judges), Some(TestFileKind::Run));
        assert_eq!(classify("Makefile", &judges), Some(TestFileKind::Run));
        assert_eq!(classify("sub/Makefile", &judges), Some(TestFileKind::Config));
        assert_eq!(classify("calc.sh", &judges), None);
        // package.json's scripts.test names the file it runs.
        let script = |s| Judges { test_script: Some(s), ..Judges::default() };
        assert_eq!(
            classify("scripts/run-tests.mjs", &script("node scripts/run-tests.mjs --ci")),
            Some(TestFileKind::Run)
        );
        assert_eq!(classify("scripts/build.mjs", &script("node scripts/run-tests.mjs")), None);
        assert_eq!(
            named_paths(Some(&commands), Some("node scripts/run-tests.mjs --ci")),
            ["GNUmakefile", "Makefile", "makefile", "scripts/check.py", "scripts/run-tests.mjs", "test.sh"]
        );
    }

    #[test]
    fn a_file_a_test_sources_counts_as_sourced_unless_it_is_configuration() {
        let reached = |path: &str| Reached { path: path.into(), by: "t.sh".into(), root: "t.sh".into(), depth: 1 };
        let sourced = [reached("testlib.sh"), reached("tests/helpers.py"), reached("build.rs")];
        let judges = Judges { sourced: &sourced, ..Judges::default() };
        assert_eq!(classify("testlib.sh", &judges), Some(TestFileKind::Sourced));
        assert_eq!(classify("tests/helpers.py", &judges), Some(TestFileKind::Sourced));
        assert_eq!(classify("build.rs", &judges), Some(TestFileKind::Config));
        assert_eq!(classify("calc.sh", &judges), None);
        assert_eq!(sourced_by("testlib.sh", &judges).map(|r| r.by.as_str()), Some("t.sh"));
        assert!(TestFileKind::Sourced.changes_meaning() && !TestFileKind::Test.changes_meaning());
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
        assert!(changed_lines_are_tests("package.json", ["    \"pretest\": \"node fake.js\","]));
        assert!(changed_lines_are_tests("Cargo.toml", ["[patch.crates-io]"]));
        assert!(changed_lines_are_tests("Cargo.toml", ["harness = false"]));
        assert!(changed_lines_are_tests("go.mod", ["replace example.com/lib => ./fake"]));
        assert!(!changed_lines_are_tests("go.mod", ["require example.com/lib v1.2.3"]));
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
