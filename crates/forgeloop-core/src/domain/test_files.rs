//! Which changed paths are the PR's own tests (design §5.2, "Trust, then verify"): a passing run
//! means "the head passes the head's tests", so a PR that changes what decides the verdict must
//! say so. A path counts when the commands run it directly, when it is a test by the common
//! conventions, when it configures a test runner or CI, or when it is a snapshot or fixture.
//! The rules are the [`RULES`] table (documented in docs/testing.md and checked against it).
//! How many assertions a change removes or adds is read from the test's code by its language
//! ([`ASSERTION_MARKERS`], [`assertions_in`]): a small lexer per family of languages blanks
//! string literals and comments first, so words in an `echo "…"` or a comment never count.

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
    /// (`unittest.py`, `pytest.py`, or compiled: `unittest.pyc`, `unittest.abi3.so`), Python
    /// bytecode anywhere (`__pycache__/`), a Node addon, or anything under a committed
    /// `node_modules/`: a test would import it instead of the real one.
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

/// The module a path defines at an import root (the repository's root or `src/`) in the form
/// `forms` names: `x` for `x.py` and `x/__init__.py` there (`forms` = `["py"]`), or for a
/// native module's `x.so`, `x.cpython-311-x86_64-linux-gnu.so`, `x.abi3.so`, `x.pyd` (the
/// interpreter's tag dropped); else `None`.
fn python_top_module<'a>(p: &'a Parts<'_>, forms: &[&str]) -> Option<&'a str> {
    let (stem, ext) = p.stem_ext();
    if !forms.contains(&ext) {
        return None;
    }
    let stem = stem.split('.').next().unwrap_or(stem);
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

/// Whether a module of this name is one tests import from the standard library or a runner.
fn is_shadowed(module: &str) -> bool {
    PYTHON_SHADOWED.iter().any(|s| s.eq_ignore_ascii_case(module))
}

/// The table, in the order a path is tried (the first match names its kind).
pub static RULES: &[Rule] = &[
    Rule {
        kind: TestFileKind::Shadow,
        pattern: "a Python module at the root or in `src/` named like a standard-library or test-runner module (`unittest.py`, `pytest.py`, `json/__init__.py`, …), `sitecustomize.py`, `usercustomize.py`, `*.pth`",
        example: "unittest.py",
        matches: |p| {
            matches!(p.lower.as_str(), "sitecustomize.py" | "usercustomize.py")
                || p.stem_ext().1 == "pth"
                || python_top_module(p, &["py"]).is_some_and(is_shadowed)
        },
    },
    Rule {
        kind: TestFileKind::Shadow,
        pattern: "Python bytecode: `*.pyc` anywhere (a `.pyc` with no source beside it is imported like one), anything under `__pycache__/` (where a held test's own compiled form is read from)",
        example: "__pycache__/test_calc.cpython-311.pyc",
        matches: |p| p.in_dir(&["__pycache__"]) || matches!(p.stem_ext().1, "pyc" | "pyo"),
    },
    Rule {
        kind: TestFileKind::Shadow,
        pattern: "a native module at the root or in `src/` named like one of those (`unittest.cpython-311-x86_64-linux-gnu.so`, `unittest.abi3.so`, `unittest.pyd`: imported ahead of any `.py`), a Node addon (`*.node`, which `require` loads), anything under `node_modules/`",
        example: "unittest.abi3.so",
        matches: |p| {
            p.in_dir(&["node_modules"])
                || p.stem_ext().1 == "node"
                || python_top_module(p, &["so", "pyd"]).is_some_and(is_shadowed)
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

/// The rows of [`ASSERTION_MARKERS`], by the language they are for.
const RUST: &str = "Rust";
const PYTHON: &str = "Python";
const JAVASCRIPT: &str = "JavaScript/TypeScript";
const GO: &str = "Go";
const OTHERS: &str = "Ruby/Java/others";
/// Shell's words count only where a command starts (`[ "$out" = 5 ] || exit 1`), not as the
/// arguments of one (`cargo test`).
const SHELL: &str = "shell (where a command starts)";

/// Words that make a line of a test an assertion, per language (docs/testing.md's table is
/// made from this one). A file's language is its extension's (a shebang for a file without
/// one); a word counts only in code — never inside a string literal or a comment — and only at
/// the start of a name (`assert` is not in `reassert`). Data, documentation and `Makefile`s
/// hold no assertions; a file of no known language is read with every row.
pub const ASSERTION_MARKERS: &[(&str, &[&str])] = &[
    (RUST, &["assert!", "assert_eq!", "assert_ne!", "debug_assert", "#[test]", "#[should_panic"]),
    (PYTHON, &["assert ", "assert(", "assert_", "self.assert", "pytest.raises", "pytest.fail(", "self.fail("]),
    (
        JAVASCRIPT,
        &[
            "expect(",
            "assert.",
            "assert(",
            ".should",
            "t.is(",
            "t.deepEqual(",
            "t.equal(",
            "t.ok(",
            "t.true(",
            "t.false(",
            "t.throws(",
        ],
    ),
    (GO, &["t.Error", "t.Fatal", "t.Fail", "require.", "assert."]),
    (OTHERS, &["assert", "refute", "expect", "should", "verify("]),
    (SHELL, &["exit 1", "test ", "[ ", "[[ ", "assert"]),
];

/// How many of `lines` are assertions in the test file at `path` ([`ASSERTION_MARKERS`]).
/// `lines` are read as one text, in order — a whole file, or a diff's removed (or added) lines
/// — so a string, comment or heredoc opened on one line is still open on the next; one that a
/// fragment opens and never closes (a diff that changes only a docstring's first line) is
/// not taken to swallow the lines after it.
pub fn assertions_in<'a>(path: &str, lines: impl IntoIterator<Item = &'a str>) -> u64 {
    assertion_lines(path, lines).into_iter().filter(|is| *is).count() as u64
}

/// Which of `lines` are assertions, line by line (see [`assertions_in`]).
pub fn assertion_lines<'a>(path: &str, lines: impl IntoIterator<Item = &'a str>) -> Vec<bool> {
    let lines: Vec<&str> = lines.into_iter().collect();
    let Some(syntax) = Syntax::of(path, lines.first().copied()) else { return vec![false; lines.len()] };
    code_of(syntax, &lines).iter().map(|code| holds_a_marker(syntax, code)).collect()
}

/// The lexical families the assertion count knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Rust,
    Python,
    JavaScript,
    Go,
    Shell,
    Ruby,
    /// `//` and `/* */` comments, `"…"`, `'…'` and `"""…"""` (Java, Kotlin, C#, C, PHP, …).
    CLike,
    /// `#` comments (Perl, Elixir, R, Julia, …).
    Hash,
    /// `--` comments (Lua, Haskell, SQL).
    DashDash,
    /// No known language: `//` and `#` comments, quoted strings, every row's words.
    Unknown,
}

impl Syntax {
    /// The language of `path` by its name, else (no extension) by the shebang of `first`;
    /// `None` for files that hold no assertions: data, documentation, configuration,
    /// `Makefile`s, compiled files.
    fn of(path: &str, first: Option<&str>) -> Option<Syntax> {
        let lower = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "makefile" | "gnumakefile" | "justfile" | "dockerfile" | "jenkinsfile" | "cmakelists.txt"
        ) {
            return None;
        }
        if matches!(lower.as_str(), "rakefile" | "gemfile" | "guardfile") {
            return Some(Syntax::Ruby);
        }
        let ext = match lower.rsplit_once('.') {
            Some(("", _)) => return None, // a dotfile: configuration
            Some((_, ext)) => ext,
            None => "",
        };
        Some(match ext {
            "rs" => Syntax::Rust,
            "py" | "pyi" | "pyw" => Syntax::Python,
            "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => Syntax::JavaScript,
            "go" => Syntax::Go,
            "sh" | "bash" | "bats" | "ksh" | "zsh" | "dash" | "ash" => Syntax::Shell,
            "rb" | "rake" | "gemspec" => Syntax::Ruby,
            "java" | "kt" | "kts" | "scala" | "sc" | "groovy" | "cs" | "fs" | "swift" | "c" | "cc" | "cpp" | "cxx"
            | "h" | "hh" | "hpp" | "m" | "mm" | "dart" | "php" => Syntax::CLike,
            "pl" | "pm" | "t" | "ex" | "exs" | "r" | "jl" | "cr" | "nim" | "tcl" | "ps1" | "coffee" => Syntax::Hash,
            "lua" | "hs" | "sql" | "elm" => Syntax::DashDash,
            "" => Syntax::by_shebang(first),
            "mk" | "json" | "jsonc" | "json5" | "toml" | "yaml" | "yml" | "ini" | "cfg" | "conf" | "md"
            | "markdown" | "rst" | "txt" | "adoc" | "snap" | "golden" | "lock" | "xml" | "html" | "htm" | "css"
            | "scss" | "less" | "csv" | "tsv" | "svg" | "properties" | "env" | "sum" | "mod" | "pth" | "pyc"
            | "pyo" | "so" | "pyd" | "node" | "dll" | "dylib" | "a" | "o" | "png" | "jpg" | "jpeg" | "gif" | "ico"
            | "pdf" | "zip" | "gz" | "tar" | "wasm" => return None,
            _ => Syntax::Unknown,
        })
    }

    fn by_shebang(first: Option<&str>) -> Syntax {
        let Some(line) = first.and_then(|l| l.strip_prefix("#!")) else { return Syntax::Unknown };
        if line.contains("python") {
            Syntax::Python
        } else if line.contains("node") || line.contains("deno") || line.contains("bun") {
            Syntax::JavaScript
        } else if line.contains("ruby") {
            Syntax::Ruby
        } else if line.contains("perl") {
            Syntax::Hash
        } else if line.contains("sh") {
            Syntax::Shell
        } else {
            Syntax::Unknown
        }
    }

    /// The rows of [`ASSERTION_MARKERS`] that apply.
    fn rows(self) -> &'static [&'static str] {
        match self {
            Syntax::Rust => &[RUST],
            Syntax::Python => &[PYTHON],
            Syntax::JavaScript => &[JAVASCRIPT],
            Syntax::Go => &[GO],
            Syntax::Shell => &[SHELL],
            Syntax::Ruby | Syntax::CLike | Syntax::Hash | Syntax::DashDash => &[OTHERS],
            Syntax::Unknown => &[RUST, PYTHON, JAVASCRIPT, GO, OTHERS, SHELL],
        }
    }
}

/// Whether a line's code (strings and comments blanked) holds one of its language's words.
fn holds_a_marker(syntax: Syntax, code: &str) -> bool {
    ASSERTION_MARKERS.iter().filter(|(row, _)| syntax.rows().contains(row)).any(|(row, words)| {
        words.iter().any(|word| {
            code.match_indices(word).any(|(at, _)| {
                let before = &code[..at];
                let starts_a_name = !word.starts_with(is_name_char) || !before.ends_with(is_name_char);
                starts_a_name && (*row != SHELL || syntax != Syntax::Shell || starts_a_command(before))
            })
        })
    })
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a shell command starts after `before` (a line's code up to a word).
fn starts_a_command(before: &str) -> bool {
    let before = before.trim_end();
    if before.is_empty() || before.ends_with([';', '&', '|', '(', '{', '!', '`']) {
        return true;
    }
    let word = before.rsplit(|c: char| c.is_whitespace() || ";&|(){}".contains(c)).next().unwrap_or("");
    matches!(word, "if" | "then" | "elif" | "else" | "do" | "while" | "until" | "time" | "exec" | "command")
}

/// How many times, at most, [`code_of`] starts again after a construct a fragment never
/// closes; past it, the remaining lines are read one by one.
const MAX_RESTARTS: usize = 16;

/// Each line's code: what is inside a string literal or a comment becomes spaces. Read as one
/// text; a construct still open at the end was opened by a fragment that does not hold its
/// end, so the lines after its opening line are read again without it.
fn code_of(syntax: Syntax, lines: &[&str]) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let mut start = 0;
    for _ in 0..MAX_RESTARTS {
        let mut lexer = Lexer::new(syntax);
        let mut open_since = None;
        let mut code = Vec::with_capacity(lines.len() - start);
        for (k, line) in lines[start..].iter().enumerate() {
            code.push(lexer.line(line));
            if lexer.open() {
                open_since.get_or_insert(k);
            } else {
                open_since = None;
            }
        }
        match open_since {
            None => {
                out.extend(code);
                return out;
            }
            Some(k) => {
                out.extend(code.into_iter().take(k + 1));
                start += k + 1;
            }
        }
    }
    out.extend(lines[start..].iter().map(|line| Lexer::new(syntax).line(line)));
    out
}

/// The most `#`s a Rust raw string's delimiter may have (rustc's own limit).
const RAW_HASHES: usize = 255;

/// What the lexer is inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// Code: the file's own, or inside an interpolation or a substitution that `close` ends
    /// (`depth`: brackets opened inside it; `arithmetic`: shell's `$(( … ))`).
    Code { close: Option<char>, depth: u32, arithmetic: bool },
    /// A string literal.
    Str { end: End, escapes: bool, multiline: bool, interpolation: Interpolation },
    /// A block comment (`nested`: Rust's nest).
    Block { nested: bool, depth: u32 },
    /// A JavaScript regular expression literal (`class`: inside `[…]`).
    Regex { class: bool },
}

/// How a string literal ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Quote(char),
    Triple(char),
    /// Rust's raw string: `"` and this many `#`.
    Raw(usize),
}

/// What opens code inside a string literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interpolation {
    None,
    /// Python's f-strings: `{…}` (`{{` is a brace).
    Brace,
    /// JavaScript's template literals: `${…}`.
    DollarBrace,
    /// Ruby: `#{…}`.
    HashBrace,
    /// Shell's double quotes: `$(…)` and backquotes.
    Shell,
}

/// A small lexer for one family: it blanks what is inside string literals and comments, line
/// by line, carrying what is open from one line to the next.
struct Lexer {
    syntax: Syntax,
    stack: Vec<Frame>,
    /// Shell heredocs announced on the current line: (delimiter, leading tabs stripped).
    heredocs: std::collections::VecDeque<(String, bool)>,
    /// The heredoc whose body is being read.
    heredoc: Option<(String, bool)>,
    /// Inside Ruby's `=begin` … `=end`.
    ruby_doc: bool,
}

const CODE: Frame = Frame::Code { close: None, depth: 0, arithmetic: false };

impl Lexer {
    fn new(syntax: Syntax) -> Lexer {
        Lexer { syntax, stack: vec![CODE], heredocs: std::collections::VecDeque::new(), heredoc: None, ruby_doc: false }
    }

    /// Whether something opened on an earlier line is still open.
    fn open(&self) -> bool {
        self.stack.len() > 1 || self.heredoc.is_some() || !self.heredocs.is_empty() || self.ruby_doc
    }

    /// Whether what is read now is inside a literal or a comment (interpolated code included).
    fn in_literal(&self) -> bool {
        self.stack.iter().any(|f| !matches!(f, Frame::Code { .. }))
    }

    /// One line's code.
    fn line(&mut self, line: &str) -> String {
        if let Some((delimiter, strip)) = &self.heredoc {
            let body = if *strip { line.trim_start_matches('\t') } else { line };
            if body == delimiter {
                self.heredoc = self.heredocs.pop_front();
            }
            return blank(line);
        }
        if self.syntax == Syntax::Ruby && self.stack.len() == 1 && (self.ruby_doc || line.starts_with("=begin")) {
            self.ruby_doc = !line.starts_with("=end");
            return blank(line);
        }
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::with_capacity(line.len());
        let mut i = 0;
        while i < chars.len() {
            let taken = self.step(&chars, i, &mut out).max(1);
            i += taken;
        }
        // What cannot span lines ends with the line (an unterminated string, a regex).
        while matches!(self.stack.last(), Some(Frame::Str { multiline: false, .. } | Frame::Regex { .. })) {
            self.stack.pop();
        }
        if self.heredoc.is_none() {
            self.heredoc = self.heredocs.pop_front();
        }
        out
    }

    /// Reads what starts at `chars[i]`, writes it (blanked or not) to `out`, and says how many
    /// characters it took.
    fn step(&mut self, chars: &[char], i: usize, out: &mut String) -> usize {
        let Some(top) = self.stack.last().copied() else {
            self.stack.push(CODE);
            return 0;
        };
        match top {
            Frame::Code { close, depth, arithmetic } => self.code(chars, i, out, close, depth, arithmetic),
            Frame::Str { end, escapes, interpolation, .. } => self.string(chars, i, out, end, escapes, interpolation),
            Frame::Block { nested, depth } => {
                let taken = if at(chars, i, "*/") {
                    match depth {
                        0 => {
                            self.stack.pop();
                            2
                        }
                        _ => self.set_top(Frame::Block { nested, depth: depth - 1 }, 2),
                    }
                } else if nested && at(chars, i, "/*") {
                    self.set_top(Frame::Block { nested, depth: depth + 1 }, 2)
                } else {
                    1
                };
                emit(out, chars, i, taken, true)
            }
            Frame::Regex { class } => {
                let taken = match chars[i] {
                    '\\' => 2,
                    '[' => self.set_top(Frame::Regex { class: true }, 1),
                    ']' => self.set_top(Frame::Regex { class: false }, 1),
                    '/' if !class => {
                        self.stack.pop();
                        1
                    }
                    _ => 1,
                };
                emit(out, chars, i, taken, true)
            }
        }
    }

    fn set_top(&mut self, frame: Frame, taken: usize) -> usize {
        if let Some(top) = self.stack.last_mut() {
            *top = frame;
        }
        taken
    }

    fn push(&mut self, frame: Frame, out: &mut String, chars: &[char], i: usize, taken: usize) -> usize {
        let masked = self.in_literal() || !matches!(frame, Frame::Code { .. });
        self.stack.push(frame);
        emit(out, chars, i, taken, masked)
    }

    fn code(
        &mut self,
        chars: &[char],
        i: usize,
        out: &mut String,
        close: Option<char>,
        depth: u32,
        arithmetic: bool,
    ) -> usize {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let masked = self.in_literal();
        if let Some(close) = close {
            if c == close && depth == 0 {
                self.stack.pop();
                let masked = self.in_literal();
                return emit(out, chars, i, 1, masked);
            }
            if matches!(c, '(' | '[' | '{') {
                self.set_top(Frame::Code { close: Some(close), depth: depth + 1, arithmetic }, 0);
            } else if matches!(c, ')' | ']' | '}') && depth > 0 {
                self.set_top(Frame::Code { close: Some(close), depth: depth - 1, arithmetic }, 0);
            }
        }
        let rest = chars.len() - i;
        let string = |end: End, escapes: bool, multiline: bool, interpolation: Interpolation| Frame::Str {
            end,
            escapes,
            multiline,
            interpolation,
        };
        let quote = |q: char| End::Quote(q);
        let triple = next == Some(c) && chars.get(i + 2) == Some(&c);
        match self.syntax {
            Syntax::Rust => {
                if at(chars, i, "//") {
                    return emit(out, chars, i, rest, true);
                }
                if at(chars, i, "/*") {
                    return self.push(Frame::Block { nested: true, depth: 0 }, out, chars, i, 2);
                }
                if c == '"' {
                    return self.push(string(quote('"'), true, true, Interpolation::None), out, chars, i, 1);
                }
                if c == 'r' && raw_prefix_allowed(chars, i) {
                    let hashes = chars[i + 1..].iter().take(RAW_HASHES + 1).take_while(|h| **h == '#').count();
                    if hashes <= RAW_HASHES && chars.get(i + 1 + hashes) == Some(&'"') {
                        let frame = string(End::Raw(hashes), false, true, Interpolation::None);
                        return self.push(frame, out, chars, i, hashes + 2);
                    }
                }
                if c == '\'' {
                    if next == Some('\\') {
                        let end = chars[i + 3.min(rest)..].iter().position(|q| *q == '\'').map_or(rest, |p| p + 4);
                        return emit(out, chars, i, end.min(rest), true);
                    }
                    if chars.get(i + 2) == Some(&'\'') {
                        return emit(out, chars, i, 3, true);
                    }
                }
            }
            Syntax::Python => {
                if c == '#' {
                    return emit(out, chars, i, rest, true);
                }
                if c == '"' || c == '\'' {
                    let prefix = python_prefix(chars, i);
                    let interpolation =
                        if prefix.contains(['f', 't']) { Interpolation::Brace } else { Interpolation::None };
                    let (end, taken) = if triple { (End::Triple(c), 3) } else { (quote(c), 1) };
                    return self.push(string(end, true, triple, interpolation), out, chars, i, taken);
                }
            }
            Syntax::JavaScript => {
                if at(chars, i, "//") {
                    return emit(out, chars, i, rest, true);
                }
                if at(chars, i, "/*") {
                    return self.push(Frame::Block { nested: false, depth: 0 }, out, chars, i, 2);
                }
                if c == '"' || c == '\'' {
                    return self.push(string(quote(c), true, false, Interpolation::None), out, chars, i, 1);
                }
                if c == '`' {
                    return self.push(string(quote(c), true, true, Interpolation::DollarBrace), out, chars, i, 1);
                }
                if c == '/' && regex_may_start(chars, i) {
                    return self.push(Frame::Regex { class: false }, out, chars, i, 1);
                }
            }
            Syntax::Go => {
                if at(chars, i, "//") {
                    return emit(out, chars, i, rest, true);
                }
                if at(chars, i, "/*") {
                    return self.push(Frame::Block { nested: false, depth: 0 }, out, chars, i, 2);
                }
                if c == '"' || c == '\'' {
                    return self.push(string(quote(c), true, false, Interpolation::None), out, chars, i, 1);
                }
                if c == '`' {
                    return self.push(string(quote(c), false, true, Interpolation::None), out, chars, i, 1);
                }
            }
            Syntax::Shell => return self.shell(chars, i, out, masked, arithmetic),
            Syntax::Ruby => {
                if c == '#' {
                    return emit(out, chars, i, rest, true);
                }
                if c == '"' || c == '`' {
                    return self.push(string(quote(c), true, true, Interpolation::HashBrace), out, chars, i, 1);
                }
                if c == '\'' {
                    return self.push(string(quote(c), true, true, Interpolation::None), out, chars, i, 1);
                }
            }
            Syntax::CLike | Syntax::Hash | Syntax::DashDash | Syntax::Unknown => {
                let comment = match self.syntax {
                    Syntax::CLike => at(chars, i, "//"),
                    Syntax::Hash => c == '#',
                    Syntax::DashDash => at(chars, i, "--"),
                    _ => at(chars, i, "//") || (c == '#' && word_starts(chars, i)),
                };
                if comment {
                    return emit(out, chars, i, rest, true);
                }
                if self.syntax == Syntax::CLike && at(chars, i, "/*") {
                    return self.push(Frame::Block { nested: false, depth: 0 }, out, chars, i, 2);
                }
                if c == '"' && triple && matches!(self.syntax, Syntax::CLike | Syntax::Hash) {
                    return self.push(string(End::Triple('"'), true, true, Interpolation::None), out, chars, i, 3);
                }
                if c == '"' || c == '\'' {
                    return self.push(string(quote(c), true, false, Interpolation::None), out, chars, i, 1);
                }
            }
        }
        emit(out, chars, i, 1, masked)
    }

    /// Shell code: `#` comments at a word's start, quotes, `$(…)`, `${…}`, backquotes, heredocs.
    fn shell(&mut self, chars: &[char], i: usize, out: &mut String, masked: bool, arithmetic: bool) -> usize {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let rest = chars.len() - i;
        match c {
            '#' if word_starts(chars, i) => emit(out, chars, i, rest, true),
            '\\' => emit(out, chars, i, 2.min(rest), masked),
            '\'' => {
                let ansi = i > 0 && chars[i - 1] == '$';
                let frame = Frame::Str {
                    end: End::Quote('\''),
                    escapes: ansi,
                    multiline: true,
                    interpolation: Interpolation::None,
                };
                self.push(frame, out, chars, i, 1)
            }
            '"' => {
                let frame = Frame::Str {
                    end: End::Quote('"'),
                    escapes: true,
                    multiline: true,
                    interpolation: Interpolation::Shell,
                };
                self.push(frame, out, chars, i, 1)
            }
            '$' if next == Some('(') => {
                let arithmetic = chars.get(i + 2) == Some(&'(');
                let frame = Frame::Code { close: Some(')'), depth: u32::from(arithmetic), arithmetic };
                self.push(frame, out, chars, i, if arithmetic { 3 } else { 2 })
            }
            '$' if next == Some('{') => {
                self.push(Frame::Code { close: Some('}'), depth: 0, arithmetic: false }, out, chars, i, 2)
            }
            '`' => self.push(Frame::Code { close: Some('`'), depth: 0, arithmetic: false }, out, chars, i, 1),
            '<' if at(chars, i, "<<<") => emit(out, chars, i, 3, masked),
            '<' if next == Some('<') && !arithmetic && !self.in_arithmetic() => {
                let (heredoc, taken) = heredoc_at(chars, i);
                if let Some(heredoc) = heredoc {
                    self.heredocs.push_back(heredoc);
                }
                emit(out, chars, i, taken, masked)
            }
            _ => emit(out, chars, i, 1, masked),
        }
    }

    fn in_arithmetic(&self) -> bool {
        self.stack.iter().any(|f| matches!(f, Frame::Code { arithmetic: true, .. }))
    }

    fn string(
        &mut self,
        chars: &[char],
        i: usize,
        out: &mut String,
        end: End,
        escapes: bool,
        interpolation: Interpolation,
    ) -> usize {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if escapes && c == '\\' {
            return emit(out, chars, i, 2.min(chars.len() - i), true);
        }
        let code = |close| Frame::Code { close: Some(close), depth: 0, arithmetic: false };
        match interpolation {
            Interpolation::Brace if c == '{' => {
                return match next {
                    Some('{') => emit(out, chars, i, 2, true),
                    _ => self.push(code('}'), out, chars, i, 1),
                };
            }
            Interpolation::DollarBrace if c == '$' && next == Some('{') => {
                return self.push(code('}'), out, chars, i, 2);
            }
            Interpolation::HashBrace if c == '#' && next == Some('{') => return self.push(code('}'), out, chars, i, 2),
            Interpolation::Shell if c == '$' && next == Some('(') => {
                let arithmetic = chars.get(i + 2) == Some(&'(');
                let frame = Frame::Code { close: Some(')'), depth: u32::from(arithmetic), arithmetic };
                return self.push(frame, out, chars, i, if arithmetic { 3 } else { 2 });
            }
            Interpolation::Shell if c == '`' => return self.push(code('`'), out, chars, i, 1),
            _ => {}
        }
        let taken = match end {
            End::Quote(q) if c == q => 1,
            End::Triple(q) if c == q && next == Some(q) && chars.get(i + 2) == Some(&q) => 3,
            End::Raw(hashes)
                if c == '"' && chars[i + 1..].iter().take(hashes).filter(|h| **h == '#').count() == hashes =>
            {
                hashes + 1
            }
            _ => return emit(out, chars, i, 1, true),
        };
        self.stack.pop();
        emit(out, chars, i, taken, true)
    }
}

/// Writes `chars[i..i + n]` to `out`, as spaces when `masked`; returns `n` (at least 1).
fn emit(out: &mut String, chars: &[char], i: usize, n: usize, masked: bool) -> usize {
    let n = n.clamp(1, chars.len().saturating_sub(i).max(1));
    for c in chars.iter().skip(i).take(n) {
        out.push(if masked { ' ' } else { *c });
    }
    n
}

fn blank(line: &str) -> String {
    " ".repeat(line.chars().count())
}

/// Whether `chars[i..]` starts with `text`.
fn at(chars: &[char], i: usize, text: &str) -> bool {
    (i..).zip(text.chars()).all(|(k, c)| chars.get(k) == Some(&c))
}

/// Whether a word starts at `chars[i]` (shell's `#` begins a comment only there: `$#` and
/// `a#b` are not comments).
fn word_starts(chars: &[char], i: usize) -> bool {
    i == 0 || chars[i - 1].is_whitespace() || ";&|()".contains(chars[i - 1])
}

/// Rust: whether the `r` at `chars[i]` may begin a raw string (`r"`, `br#"`, `cr"`), not end
/// a name (`for"` is no such thing, but `bar"` would be).
fn raw_prefix_allowed(chars: &[char], i: usize) -> bool {
    match i.checked_sub(1).map(|p| chars[p]) {
        None => true,
        Some('b' | 'c') => i < 2 || !is_name_char(chars[i - 2]),
        Some(p) => !is_name_char(p),
    }
}

/// Python: the letters before a quote when they are a string prefix (`f`, `rb`, …), lowercase.
fn python_prefix(chars: &[char], i: usize) -> String {
    let start = (0..i).rev().take(3).take_while(|k| chars[*k].is_ascii_alphabetic()).last().unwrap_or(i);
    let prefix: String = chars[start..i].iter().collect::<String>().to_ascii_lowercase();
    let valid = matches!(prefix.as_str(), "r" | "u" | "b" | "f" | "t" | "br" | "rb" | "fr" | "rf" | "tr" | "rt");
    let after_name = start > 0 && is_name_char(chars[start - 1]);
    if valid && !after_name { prefix } else { String::new() }
}

/// JavaScript: whether a `/` at `chars[i]` begins a regular expression rather than divides,
/// by what comes before it on the line.
fn regex_may_start(chars: &[char], i: usize) -> bool {
    let Some(last) = (0..i).rev().find(|k| !chars[*k].is_whitespace()) else { return true };
    if "(,=:[!&|?{};+-*%<>~^".contains(chars[last]) {
        return true;
    }
    // The word before it, read back no further than the longest keyword.
    let start = (0..=last).rev().take(7).take_while(|k| is_name_char(chars[*k])).last().unwrap_or(last + 1);
    let whole = start == 0 || !is_name_char(chars[start - 1]);
    let word: String = chars[start..=last].iter().collect();
    whole
        && matches!(
            word.as_str(),
            "return"
                | "typeof"
                | "case"
                | "do"
                | "else"
                | "in"
                | "of"
                | "new"
                | "delete"
                | "void"
                | "throw"
                | "yield"
                | "await"
        )
}

/// Shell: the heredoc `<<` at `chars[i]` announces — its delimiter (quotes removed) and whether
/// leading tabs are stripped (`<<-`) — and how many characters the operator and word take.
fn heredoc_at(chars: &[char], i: usize) -> (Option<(String, bool)>, usize) {
    let mut k = i + 2;
    let strip = chars.get(k) == Some(&'-');
    if strip {
        k += 1;
    }
    while chars.get(k).is_some_and(|c| *c == ' ' || *c == '\t') {
        k += 1;
    }
    let mut delimiter = String::new();
    while let Some(c) = chars.get(k).copied() {
        if c.is_whitespace() || ";&|<>()".contains(c) {
            break;
        }
        if !matches!(c, '\'' | '"' | '\\') {
            delimiter.push(c);
        }
        k += 1;
    }
    ((!delimiter.is_empty()).then_some((delimiter, strip)), k - i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::parse_commands;

    #[test]
    fn every_row_matches_its_own_example_and_is_the_first_to() {
        for (i, rule) in RULES.iter().enumerate() {
            let kind = classify(rule.example, &Judges::default());
            assert_eq!(kind, Some(rule.kind), "{} ({})", rule.example, rule.pattern);
            let first = RULES.iter().position(|r| (r.matches)(&Parts::of(rule.example)));
            assert_eq!(first, Some(i), "{} is matched first by another row", rule.example);
        }
    }

    #[test]
    fn compiled_and_native_modules_shadow_like_their_source() {
        let shadows = [
            "unittest.pyc",
            "src/unittest.pyc",
            "__pycache__/unittest.cpython-311.pyc",
            "__pycache__/test_calc.cpython-311.pyc",
            "tests/__pycache__/test_calc.cpython-312.opt-1.pyc",
            "lib/deep/helpers.pyc",
            "unittest.cpython-311-x86_64-linux-gnu.so",
            "unittest.abi3.so",
            "unittest.so",
            "unittest.pyd",
            "src/json/__init__.cpython-311-x86_64-linux-gnu.so",
            "json/__init__.abi3.so",
            "pytest.cp311-win_amd64.pyd",
            "build/Release/addon.node",
            "test/helpers.node",
        ];
        for path in shadows {
            assert_eq!(classify(path, &Judges::default()), Some(TestFileKind::Shadow), "{path}");
        }
        let look_alikes: &[(&str, Option<TestFileKind>)] = &[
            ("docs/unittest.pyc.md", None),
            ("docs/__pycache__.md", None),
            ("pycache/notes.txt", None),
            ("mathx.cpython-311-x86_64-linux-gnu.so", None),
            ("lib/unittest.abi3.so", None),
            ("unittest.soap", None),
            ("libunittest.so", None),
            ("src/app/json.so", None),
            ("node.js", None),
            ("docs/addon.node.md", None),
            ("tests/unittest.so", Some(TestFileKind::Test)),
        ];
        for (path, kind) in look_alikes {
            assert_eq!(classify(path, &Judges::default()), *kind, "{path}");
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
            ("docs/unittest.pyc.md", None),
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
        let reached = |path: &str| Reached {
            path: path.into(),
            by: "t.sh".into(),
            root: "t.sh".into(),
            depth: 1,
            how: crate::domain::test_deps::How::Sourced,
        };
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

    /// Which of `text`'s lines (from 1) are assertions in a file at `path`.
    fn marked(path: &str, text: &str) -> Vec<usize> {
        let lines: Vec<&str> = text.lines().collect();
        assertion_lines(path, lines).iter().enumerate().filter(|(_, is)| **is).map(|(i, _)| i + 1).collect()
    }

    #[test]
    fn assertions_are_counted_by_the_file_s_language() {
        assert_eq!(assertions_in("tests/add.rs", ["    assert_eq!(add(2, 3), 5);", "    let x = 1;"]), 1);
        assert_eq!(assertions_in("test/app.test.js", ["  expect(toggle()).toBe(true);", "  t.is(a, 1);"]), 2);
        assert_eq!(assertions_in("tests/test_x.py", ["    self.assertEqual(x, 1)", "    assert(x)", "x = 1"]), 2);
        assert_eq!(assertions_in("t.sh", ["if [ \"$out\" = 5 ]; then echo ok; else exit 1; fi", "exit 0"]), 1);
        assert_eq!(assertions_in("pkg/x_test.go", ["\tif got != 5 { t.Errorf(\"got %d\", got) }"]), 1);
        assert_eq!(assertions_in("spec/a_spec.rb", ["    expect(a).to eq(1)", "    assert_equal 1, a"]), 2);
        assert_eq!(assertions_in("src/FooTest.java", ["    assertEquals(1, foo());"]), 1);
        // Another language's words are not this one's.
        assert_eq!(assertions_in("t.sh", ["expect_dark_theme", "t.Fatal(x)", "should_pass"]), 0, "shell");
        assert_eq!(assertions_in("t.sh", ["assert_eq \"$a\" 5", "echo assert"]), 1, "a shell function named assert…");
        assert_eq!(assertions_in("tests/test_x.py", ["expect(page).to_be_visible()", "t.Fatal(x)"]), 0, "python");
        // Makefiles, data and documentation hold none.
        assert_eq!(assertions_in("Makefile", ["test:", "\t[ -f x ] || exit 1"]), 0);
        assert_eq!(assertions_in("tests/fixtures/x.json", ["{\"assert\": \"exit 1\"}"]), 0);
        assert_eq!(assertions_in("tests/README.md", ["    assert x == 1"]), 0);
        assert_eq!(assertions_in("src/__snapshots__/a.snap", ["exports[`a`] = `expect(x)`;"]), 0);
        // A file without an extension: its shebang, else every language's words.
        assert_eq!(assertions_in("check", ["#!/bin/sh", "echo \"expected 5\"", "[ -f x ] || exit 1"]), 1);
        assert_eq!(assertions_in("check", ["#!/usr/bin/env python3", "assert f() == 1  # exit 1"]), 1);
        assert_eq!(assertions_in("check", ["    assert f() == 1", "echo \"expected 5\""]), 1);
    }

    #[test]
    fn words_in_a_shell_string_or_comment_are_not_assertions() {
        // The run that showed "+2 −1" beside "0 removed": echo lines counted through "expect".
        assert_eq!(assertions_in("t.sh", ["echo \"FAIL theme: expected dark, got $theme\""]), 0);
        let text = r#"#!/bin/sh
# exit 1 if it fails
echo "not ok: [ $a = $b ] failed; exit 1"
echo 'test it: [[ x ]]'
printf '%s\n' "assert nothing"
out=$(sh calc.sh 2 3) # [ is not a test here
[ "$out" = 5 ] || { echo "FAIL: expected 5"; exit 1; }
if [[ "$(sh calc.sh 1 1)" != 2 ]]; then exit 1; fi
test -f out.txt && echo "test passed"
cargo test --quiet
go test ./...
run_test "[ x ]"
x="$(echo "[ nested ]")"
exit 10
"#;
        assert_eq!(marked("t.sh", text), [7, 8, 9, 14]);
    }

    #[test]
    fn a_shell_heredoc_is_text_not_code() {
        let text = "cat <<EOF > expected.txt\n[ -f x ] || exit 1\nEOF\n[ -f y ] || exit 1\ncat <<-'END'\n\texit 1\n\tEND\nexit 1\nx=$((1 << 2))\n[ \"$x\" = 4 ] || exit 1\n";
        assert_eq!(marked("tests/h.sh", text), [4, 8, 10]);
        let two = "diff - <<A <<B\nexit 1\nA\n[ y ]\nB\n[ z ]\n";
        assert_eq!(marked("t.sh", two), [6], "two heredocs on one line");
    }

    #[test]
    fn words_in_python_strings_and_comments_are_not_assertions() {
        let text = r#"def test_x(self):
    """Checks that assert works.

    assert x == 1 is what the docs say.
    """
    # assert nothing
    print("assert x")
    msg = f"expected {self.assertEqual.__name__} {'assert '}"
    self.assertEqual(f(1), 2)
    s = '''
    self.assertTrue(x)
    '''
    assert f(2) == 3, "assert message"
    reassert(x)
    data = {"assert ": 1}; assert data
"#;
        assert_eq!(marked("tests/test_x.py", text), [9, 13, 15]);
        assert_eq!(marked("tests/test_x.py", "x = rb'\\'  # '\nassert x\n"), [2], "a raw string's backslash");
        assert_eq!(marked("tests/test_x.py", "x = f\"{d[\"k\"]}\"; assert x\n"), [1], "3.12's nested quotes");
    }

    #[test]
    fn words_in_javascript_strings_comments_and_templates_are_not_assertions() {
        let text = r#"// expect(a).toBe(b)
/* expect(x)
   assert.equal(1, 2) */
const s = "expect(1)"; const t = 'assert(2)';
const u = `template ${expect(3)} and ${`nested expect(4)`}
  expect(5) still inside`;
expect(s).toBe("x");
const re = /expect\(/; assert.ok(re);
const half = a / 2; expect(half).toBe(1);
"#;
        assert_eq!(marked("test/a.test.ts", text), [7, 8, 9]);
    }

    #[test]
    fn words_in_rust_strings_comments_and_raw_strings_are_not_assertions() {
        let text = r##"// assert!(false)
/* outer /* assert!(nested) */ still assert!(x) */
let s = "assert_eq!(a, b)";
let r = r#"assert!("raw")"#;
let multi = "first
    assert!(inside)
";
let c = '"'; assert!(true);
fn f<'a>(x: &'a str) { assert_eq!(x, "a"); }
#[test]
"##;
        assert_eq!(marked("tests/a.rs", text), [8, 9, 10]);
    }

    #[test]
    fn go_raw_strings_and_other_families() {
        assert_eq!(marked("x_test.go", "s := `t.Errorf(\"no\")\nt.Fatal(x)`\nt.Fatal(y)\n"), [3]);
        let ruby = "=begin\nexpect(1)\n=end\n# expect(2)\nputs \"expect #{1}\"\nexpect(3)\n";
        assert_eq!(marked("spec/a_spec.rb", ruby), [6]);
        assert_eq!(marked("t/basic.t", "# ok(assert)\nprint \"assert\";\nassert_ok($x);\n"), [3]);
        assert_eq!(marked("tests/a.lua", "-- assert(x)\nassert(y)\n"), [2]);
        assert_eq!(marked("src/ATest.kt", "val s = \"\"\"\nassertEquals(1, 2)\n\"\"\"\nassertEquals(3, 4)\n"), [4]);
    }

    #[test]
    fn a_fragment_that_opens_a_string_and_never_closes_it_does_not_hide_the_lines_after_it() {
        // A diff's removed lines: a docstring's first line changed, an assertion elsewhere.
        let removed = ["    \"\"\"Checks the sum.", "    assert add(2, 3) == 5"];
        assert_eq!(assertions_in("tests/test_x.py", removed), 1);
        // A docstring's last line and an assertion: the closing quotes open nothing.
        assert_eq!(assertions_in("tests/test_x.py", ["    more words.\"\"\"", "    assert x"]), 1);
        // An unclosed heredoc and template literal, the same.
        assert_eq!(assertions_in("t.sh", ["cat <<EOF", "[ -f x ] || exit 1"]), 1);
        assert_eq!(assertions_in("a.test.js", ["const s = `start", "expect(x).toBe(1);"]), 1);
        // Closed within the fragment, a string is a string.
        assert_eq!(assertions_in("tests/test_x.py", ["    \"\"\"", "    assert x", "    \"\"\""]), 0);
        // Many unclosed openers stay bounded and still count what follows them.
        let many: Vec<String> = (0..100).map(|i| format!("cat <<E{i}")).chain(["exit 1".to_owned()]).collect();
        assert_eq!(assertions_in("t.sh", many.iter().map(String::as_str)), 1);
    }

    #[test]
    fn every_language_names_a_row_of_the_table() {
        for syntax in [
            Syntax::Rust,
            Syntax::Python,
            Syntax::JavaScript,
            Syntax::Go,
            Syntax::Shell,
            Syntax::Ruby,
            Syntax::CLike,
            Syntax::Hash,
            Syntax::DashDash,
            Syntax::Unknown,
        ] {
            for row in syntax.rows() {
                assert!(ASSERTION_MARKERS.iter().any(|(name, _)| name == row), "{syntax:?}: {row}");
            }
        }
        assert_eq!(Syntax::Unknown.rows().len(), ASSERTION_MARKERS.len());
    }
    #[test]
    fn long_and_odd_lines_are_read_whole() {
        let slashes = format!("x = a{} ; expect(x).toBe(1);", " / b".repeat(50_000));
        assert_eq!(assertions_in("a.test.js", [slashes.as_str()]), 1);
        let hashes = format!("let s = r{}\"assert!(x)\"{}; assert!(y);", "#".repeat(300), "#".repeat(300));
        assert_eq!(assertions_in("tests/a.rs", [hashes.as_str()]), 1, "past rustc's limit it is no raw string");
        let quotes = "\"".repeat(100_001);
        assert_eq!(assertions_in("tests/test_x.py", [quotes.as_str(), "assert x"]), 1);
    }
}
