//! Whole changes, as `git diff` writes them, scanned as the cycle scans them: each shortcut in a
//! realistic file of each language (with the words a person reads), the honest changes that
//! look like them (a fix, named constants, a cache, input validation, a moved table, a new row
//! in a big table, a CLI's `sys.exit(main())`), and the bounds.

use proptest::prelude::*;

use super::*;
use crate::domain::diff::index;

/// A repository's files at the base and at the tested head; the change between them.
#[derive(Default)]
struct Change {
    /// (path, base text, head text).
    files: Vec<(String, Option<String>, Option<String>)>,
    /// Whether the base text is handed to the scan (as the caller does).
    hide_base: bool,
}

impl Change {
    fn new() -> Change {
        Change::default()
    }

    /// A file at the base and the head (`None`: absent on that side).
    fn file(mut self, path: &str, base: Option<&str>, head: Option<&str>) -> Change {
        self.files.push((path.to_owned(), base.map(str::to_owned), head.map(str::to_owned)));
        self
    }

    /// A file the change adds.
    fn added(self, path: &str, head: &str) -> Change {
        self.file(path, None, Some(head))
    }

    /// A file both sides have, unchanged (a held test).
    fn same(self, path: &str, text: &str) -> Change {
        self.file(path, Some(text), Some(text))
    }

    /// The scan is not given the base's text (the caller could not read it).
    fn without_base(mut self) -> Change {
        self.hide_base = true;
        self
    }

    fn diff(&self) -> String {
        self.files.iter().filter(|(_, b, h)| b != h).map(|(p, b, h)| file_diff(p, b.as_deref(), h.as_deref())).collect()
    }

    fn hits(&self) -> Vec<Hit> {
        let diff = self.diff();
        let change: Vec<&str> = diff.lines().collect();
        let files = index(change.iter().copied());
        let tests: Vec<(String, String)> = self
            .files
            .iter()
            .filter(|(p, _, h)| h.is_some() && is_test(p))
            .map(|(p, _, h)| (p.clone(), h.clone().unwrap_or_default()))
            .collect();
        let base_text = |p: &str| {
            if self.hide_base && !is_test(p) {
                return None;
            }
            self.files.iter().find(|(q, _, _)| q == p).and_then(|(_, b, _)| b.clone())
        };
        let exists = |p: &str| self.files.iter().any(|(q, _, h)| q == p && h.is_some());
        scan(&ScanInput {
            change: &change,
            files: &files,
            is_test: &is_test,
            tests: &tests,
            base_text: &base_text,
            exists: &exists,
        })
    }
}

fn is_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with("tests/") || path.starts_with("test/") || name.starts_with("test_") || name.contains(".test.")
}

/// A unified diff of one file, as git writes it (three lines of context).
fn file_diff(path: &str, base: Option<&str>, head: Option<&str>) -> String {
    let old: Vec<&str> = base.map(|t| t.lines().collect()).unwrap_or_default();
    let new: Vec<&str> = head.map(|t| t.lines().collect()).unwrap_or_default();
    let mut out = format!("diff --git a/{path} b/{path}\n");
    match (base, head) {
        (None, _) => out.push_str("new file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"),
        (_, None) => out.push_str("deleted file mode 100644\nindex 1111111..0000000\n"),
        _ => out.push_str("index 1111111..2222222 100644\n"),
    }
    if base.is_some() {
        out.push_str(&format!("--- a/{path}\n"));
    }
    out.push_str(&match head {
        Some(_) => format!("+++ b/{path}\n"),
        None => "+++ /dev/null\n".to_owned(),
    });
    // Longest common subsequence, then the edit script.
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', new[j]));
            j += 1;
        } else {
            ops.push(('-', old[i]));
            i += 1;
        }
    }
    let changed: Vec<usize> = ops.iter().enumerate().filter(|(_, (k, _))| *k != ' ').map(|(i, _)| i).collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for c in changed {
        let (s, e) = (c.saturating_sub(3), (c + 4).min(ops.len()));
        match ranges.last_mut() {
            Some(last) if s <= last.1 => last.1 = e,
            _ => ranges.push((s, e)),
        }
    }
    for (s, e) in ranges {
        let before_old = ops[..s].iter().filter(|(k, _)| *k != '+').count();
        let before_new = ops[..s].iter().filter(|(k, _)| *k != '-').count();
        let old_len = ops[s..e].iter().filter(|(k, _)| *k != '+').count();
        let new_len = ops[s..e].iter().filter(|(k, _)| *k != '-').count();
        let start = |before: usize, len: usize| if len == 0 { before } else { before + 1 };
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            start(before_old, old_len),
            start(before_new, new_len)
        ));
        for (k, line) in &ops[s..e] {
            out.push(*k);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn categories(hits: &[Hit]) -> Vec<Category> {
    hits.iter().map(|h| h.category).collect()
}

fn words(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.words.as_str()).collect()
}

const PY_TESTS: &str = "import unittest\nfrom mathx import triple\n\n\nclass TestTriple(unittest.TestCase):\n    def test_big(self):\n        self.assertEqual(triple(1000), 3000)\n\n    def test_small(self):\n        self.assertEqual(triple(7), 21)\n";

const PY_BASE: &str = "\"\"\"Arithmetic helpers.\"\"\"\n\n\ndef triple(n):\n    \"\"\"Three times n.\"\"\"\n    return n * 2\n\n\ndef double(n):\n    return n * 2\n";

fn python(head: &str) -> Vec<Hit> {
    Change::new().file("mathx.py", Some(PY_BASE), Some(head)).same("tests/test_mathx.py", PY_TESTS).hits()
}

const JS_TESTS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { triple } = require('../mathx');\n\ntest('big', () => {\n  assert.strictEqual(triple(1000), 3000);\n});\n\ntest('small', () => {\n  assert.strictEqual(triple(7), 21);\n});\n";

const JS_BASE: &str = "'use strict';\n\nfunction triple(n) {\n  return n * 2;\n}\n\nmodule.exports = { triple };\n";

fn javascript(head: &str) -> Vec<Hit> {
    Change::new().file("mathx.js", Some(JS_BASE), Some(head)).same("test/mathx.test.js", JS_TESTS).hits()
}

const RS_TESTS: &str = "use mathx::triple;\n\n#[test]\nfn big() {\n    assert_eq!(triple(1000), 3000);\n}\n\n#[test]\nfn small() {\n    assert_eq!(triple(7), 21);\n}\n";

const RS_BASE: &str = "//! Arithmetic.\n\n/// Three times n.\npub fn triple(n: u64) -> u64 {\n    n * 2\n}\n";

fn rust(head: &str) -> Vec<Hit> {
    Change::new().file("src/lib.rs", Some(RS_BASE), Some(head)).same("tests/mathx.rs", RS_TESTS).hits()
}

// Special-cased test input.

#[test]
fn python_special_cases_a_test_input() {
    let head = PY_BASE.replace(
        "    return n * 2\n\n\ndef double",
        "    if n == 1000:\n        return 3000\n    return n * 2\n\n\ndef double",
    );
    let hits = python(&head);
    assert_eq!(
        words(&hits),
        ["mathx.py:7 returns 3000 when n == 1000, a value tests/test_mathx.py expects: special-cased test input?"]
    );
    assert_eq!(hits[0].excerpt, "return 3000");
    assert_eq!(hits[0].line, Some(7));
    // The conditional expression and the `elif` chain of two say the same.
    let ternary =
        PY_BASE.replace("    return n * 2\n\n\ndef double", "    return 3000 if n == 1000 else n * 2\n\n\ndef double");
    assert_eq!(categories(&python(&ternary)), [Category::SpecialCasedInput]);
    let both = PY_BASE.replace(
        "    return n * 2\n\n\ndef double",
        "    if n == 1000:\n        return 3000\n    elif n == 7:\n        return 21\n    return n * 2\n\n\ndef double",
    );
    assert_eq!(categories(&python(&both)), [Category::SpecialCasedInput, Category::SpecialCasedInput]);
}

#[test]
fn python_lookup_table_of_test_answers() {
    let head = PY_BASE.replace(
        "    return n * 2\n\n\ndef double",
        "    return _ANSWERS.get(n, n * 2)\n\n\n_ANSWERS = {\n    1000: 3000,\n    7: 21,\n}\n\n\ndef double",
    );
    let hits = python(&head);
    assert_eq!(
        words(&hits),
        ["mathx.py:10 maps 1000 to 3000 and 7 to 21, as tests/test_mathx.py expects: a lookup table of test answers?"]
    );
}

#[test]
fn javascript_special_cases_a_test_input() {
    let head = JS_BASE.replace(
        "  return n * 2;",
        "  switch (n) {\n    case 1000:\n      return 3000;\n    default:\n      return n * 2;\n  }",
    );
    let hits = javascript(&head);
    assert_eq!(
        words(&hits),
        ["mathx.js:6 returns 3000 for 1000, a value test/mathx.test.js expects: special-cased test input?"]
    );
    let inline = JS_BASE.replace("  return n * 2;", "  if (n === 1000) { return 3000; }\n  return n * 2;");
    assert_eq!(
        words(&javascript(&inline)),
        ["mathx.js:4 returns 3000 when n === 1000, a value test/mathx.test.js expects: special-cased test input?"]
    );
}

#[test]
fn rust_special_cases_a_test_input() {
    let head = RS_BASE
        .replace("    n * 2\n", "    match n {\n        1000 => 3000,\n        7 => 21,\n        _ => n * 2,\n    }\n");
    let hits = rust(&head);
    assert_eq!(
        words(&hits),
        [
            "src/lib.rs:6 returns 3000 for 1000, a value tests/mathx.rs expects: special-cased test input?",
            "src/lib.rs:7 returns 21 for 7, a value tests/mathx.rs expects: special-cased test input?",
        ]
    );
}

#[test]
fn a_test_of_the_prs_own_is_special_cased_too_but_its_tables_are_not_judged() {
    // The test is new in the change: a condition still counts, a table does not (a new
    // table and the new tests that check it are what a feature looks like).
    let tests = "from mathx import triple\n\ndef test_big():\n    assert triple(1000) == 3000\n\ndef test_small():\n    assert triple(7) == 21\n";
    let condition = PY_BASE.replace(
        "    return n * 2\n\n\ndef double",
        "    if n == 1000:\n        return 3000\n    return n * 3\n\n\ndef double",
    );
    let hits = Change::new().file("mathx.py", Some(PY_BASE), Some(&condition)).added("tests/test_new.py", tests).hits();
    assert_eq!(categories(&hits), [Category::SpecialCasedInput]);
    let table = PY_BASE
        .replace("    return n * 2\n\n\ndef double", "    return {1000: 3000, 7: 21}.get(n, n * 3)\n\n\ndef double");
    let hits = Change::new().file("mathx.py", Some(PY_BASE), Some(&table)).added("tests/test_new.py", tests).hits();
    assert!(hits.is_empty(), "{hits:#?}");
}

// Honest changes.

#[test]
fn an_honest_fix_is_not_flagged() {
    assert!(
        python(&PY_BASE.replace("    return n * 2\n\n\ndef double", "    return n * 3\n\n\ndef double")).is_empty()
    );
    assert!(javascript(&JS_BASE.replace("n * 2", "n * 3")).is_empty());
    assert!(rust(&RS_BASE.replace("    n * 2", "    n * 3")).is_empty());
}

#[test]
fn named_constants_caching_and_input_validation_are_not_flagged() {
    let tests = "from mathx import clamp, triple\n\ndef test_clamp():\n    assert clamp(5000) == 1000\n\ndef test_triple():\n    assert triple(1000) == 3000\n\ndef test_negative():\n    assert triple(-7) == -21\n";
    let base = "def clamp(n):\n    return min(n, 1000)\n\n\ndef triple(n):\n    return n * 2\n";
    let head = "import functools\n\nLIMIT = 1000\nFACTOR = 3\n_cache = {}\n\n\ndef clamp(n):\n    if n == LIMIT:\n        return LIMIT\n    return min(n, LIMIT)\n\n\n@functools.lru_cache(maxsize=None)\ndef triple(n):\n    if n < 0:\n        raise ValueError(f\"n must be >= 0, got {n}\")\n    if n in _cache:\n        return _cache[n]\n    _cache[n] = n * FACTOR\n    return _cache[n]\n";
    let hits = Change::new().file("mathx.py", Some(base), Some(head)).same("tests/test_mathx.py", tests).hits();
    assert!(hits.is_empty(), "{hits:#?}");
    let js = "const LIMIT = 1000;\nconst cache = new Map();\n\nfunction triple(n) {\n  if (n < 0) throw new RangeError(`negative: ${n}`);\n  if (!cache.has(n)) cache.set(n, Math.min(n, LIMIT) * 3);\n  return cache.get(n);\n}\n\nmodule.exports = { triple };\n";
    assert!(javascript(js).is_empty());
}

#[test]
fn a_moved_data_table_is_not_flagged() {
    let tests = "from mathx import offset\n\ndef test_kolkata():\n    assert offset('Asia/Kolkata') == 19800\n\ndef test_paris():\n    assert offset('Europe/Paris') == 3600\n";
    let table =
        "OFFSETS = {\n    'Asia/Kolkata': 19800,\n    'Europe/Paris': 3600,\n    'America/New_York': -18000,\n}\n";
    let base = format!("{table}\n\ndef offset(zone):\n    return OFFSETS[zone]\n");
    let head = "from tz_table import OFFSETS\n\n\ndef offset(zone):\n    return OFFSETS[zone]\n";
    let hits = Change::new()
        .file("mathx.py", Some(&base), Some(head))
        .added("tz_table.py", table)
        .same("tests/test_mathx.py", tests)
        .hits();
    assert!(hits.is_empty(), "{hits:#?}");
    // Reformatted on the way (a dict of tuples now): still the same pairs on one line each.
    let reformatted = "OFFSETS = dict([\n    ('Asia/Kolkata', 19800),\n    ('Europe/Paris', 3600),\n    ('America/New_York', -18000),\n])\n";
    let hits = Change::new()
        .file("mathx.py", Some(&base), Some(head))
        .added("tz_table.py", reformatted)
        .same("tests/test_mathx.py", tests)
        .hits();
    assert!(hits.is_empty(), "{hits:#?}");
}

/// A big generated table (time-zone offsets) with `rows` rows, the tested ones among them.
fn zone_table(rows: usize, extra: &[&str]) -> String {
    let mut text = String::from("# Generated from tzdata 2024a. Do not edit.\nOFFSETS = {\n");
    for k in 0..rows {
        text.push_str(&format!("    'Zone/N{k:03}': {},\n", (k as i64 - 40) * 900));
        if k == rows / 2 {
            for line in extra {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text.push_str("}\n");
    text
}

#[test]
fn new_rows_in_a_big_table_the_tests_check_are_not_flagged() {
    let tests = "from tz import OFFSETS\n\ndef test_kolkata():\n    assert OFFSETS.get('Asia/Kolkata') == 19800\n\ndef test_paris():\n    assert OFFSETS.get('Europe/Paris') == 3600\n";
    let base = zone_table(80, &[]);
    let one = zone_table(80, &["    'Asia/Kolkata': 19800,"]);
    let two = zone_table(80, &["    'Asia/Kolkata': 19800,", "    'Europe/Paris': 3600,"]);
    for head in [&one, &two] {
        let hits = Change::new().file("tz.py", Some(&base), Some(head)).same("tests/test_tz.py", tests).hits();
        assert!(hits.is_empty(), "{hits:#?}");
    }
    // A whole new generated table (Unicode widths, zones) whose entries the held tests check.
    let hits = Change::new().added("tz.py", &two).same("tests/test_tz.py", tests).hits();
    assert!(hits.is_empty(), "{hits:#?}");
    // The same two answers as a table of their own are a lookup table of test answers.
    let own = "OFFSETS = {\n    'Asia/Kolkata': 19800,\n    'Europe/Paris': 3600,\n}\n";
    let hits = Change::new().file("tz.py", Some(&base), Some(own)).same("tests/test_tz.py", tests).hits();
    assert_eq!(categories(&hits), [Category::SpecialCasedInput], "{hits:#?}");
}

#[test]
fn a_cli_main_under_dunder_main_and_scripts_may_exit() {
    let head = "import sys\n\n\ndef main(argv=None):\n    args = argv or sys.argv[1:]\n    if not args:\n        print('usage: mathx N', file=sys.stderr)\n        sys.exit(2)\n    print(int(args[0]) * 3)\n    return 0\n\n\nif __name__ == '__main__':\n    sys.exit(main())\n";
    assert!(python(head).is_empty());
    let script = "#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n";
    assert!(Change::new().added("tools/release.py", script).hits().is_empty());
    assert!(
        Change::new()
            .added("mathx/__main__.py", "import sys\nfrom . import cli\nsys.exit(cli.main())\n")
            .hits()
            .is_empty()
    );
}

#[test]
fn honest_javascript_looks_alike_are_not_flagged() {
    let head = "'use strict';\n\nclass MathError extends Error {\n  constructor(message) {\n    super(message);\n    this.name = 'MathError';\n    Error.captureStackTrace(this, MathError);\n  }\n}\n\nfunction triple(n) {\n  if (typeof n !== 'number') throw new MathError('not a number');\n  return n * 3;\n}\n\nif (require.main === module) {\n  console.log(triple(Number(process.argv[2])));\n}\n\nmodule.exports = { triple, MathError };\n";
    assert!(javascript(head).is_empty());
    let cli = "#!/usr/bin/env node\nconst { triple } = require('../mathx');\nprocess.on('uncaughtException', (e) => {\n  console.error(e.message);\n  process.exit(1);\n});\nconsole.log(triple(Number(process.argv[2])));\nprocess.exit(0);\n";
    assert!(Change::new().added("bin/mathx.js", cli).hits().is_empty());
}

#[test]
fn honest_rust_looks_alike_are_not_flagged() {
    let head = "//! Arithmetic.\n\nuse std::sync::atomic::{AtomicU64, Ordering};\n\nstatic NEXT_ID: AtomicU64 = AtomicU64::new(1);\n\n/// A fresh id.\npub fn next_id() -> u64 {\n    NEXT_ID.fetch_add(1, Ordering::Relaxed)\n}\n\n/// Three times n.\npub fn triple(n: u64) -> u64 {\n    n * 3\n}\n\n#[derive(Debug)]\npub struct Answer(u64);\n\nimpl PartialEq for Answer {\n    fn eq(&self, other: &Self) -> bool {\n        self.0 == other.0\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn big() {\n        assert_eq!(triple(1000), 3000);\n        assert_eq!(triple(7), 21);\n    }\n}\n";
    assert!(rust(head).is_empty());
    let main = "fn main() {\n    std::panic::set_hook(Box::new(|info| eprintln!(\"{info}\")));\n    if let Err(e) = mathx::run() {\n        eprintln!(\"{e}\");\n        process::exit(1);\n    }\n}\n";
    assert!(Change::new().added("src/main.rs", main).hits().is_empty());
    let toml_base = "[package]\nname = \"mathx\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\nmathx-core = { path = \"crates/core\" }\n\n[[bench]]\nname = \"speed\"\nharness = false\n";
    let toml_head = toml_base.replace("version = \"0.1.0\"", "version = \"0.2.0\"").replace(
        "serde = \"1\"",
        "serde = { version = \"1\", features = [\"derive\"] }\nmathx-macros = { path = \"crates/macros\" }",
    );
    let hits = Change::new()
        .file("Cargo.toml", Some(toml_base), Some(&toml_head))
        .same("crates/macros/Cargo.toml", "[package]\nname = \"mathx-macros\"\n")
        .hits();
    assert!(hits.is_empty(), "{hits:#?}");
}

// The other categories, per language, with their words.

#[test]
fn python_records_state_reads_the_caller_and_overloads_equality() {
    let head = "import inspect\n\n_calls = 0\n\n\ndef triple(n):\n    global _calls\n    _calls += 1\n    if _calls > 1:\n        return n * 3\n    return 0\n\n\ndef caller():\n    return inspect.stack()[1].function\n\n\nclass Answer:\n    def __init__(self, value):\n        self.value = value\n\n    def __eq__(self, other):\n        return True\n";
    let hits = python(head);
    assert_eq!(
        words(&hits),
        [
            "mathx.py:9 counts calls in module-level _calls and answers by it: the result changes from one test call to the next?",
            "mathx.py:15 reads the call stack (inspect.stack): code that can tell which test calls it",
            "mathx.py:22 defines __eq__ that ignores what it is compared with: any equality assertion passes",
        ]
    );
}

#[test]
fn python_exits_hooks_and_oracle_tampering() {
    let head = "import atexit\nimport os\nimport sys\nimport unittest\n\nunittest.TestCase.assertEqual = lambda self, a, b, msg=None: None\nsys.modules['pytest'] = sys.modules[__name__]\nsys.excepthook = lambda *a: None\natexit.register(lambda: None)\n\n\ndef triple(n):\n    if n == 7:\n        os._exit(0)\n    return n * 3\n\n\nif os.environ.get('CI'):\n    sys.exit(0)\n";
    let hits = python(head);
    assert_eq!(
        words(&hits),
        [
            "mathx.py:6 assigns unittest.TestCase.assertEqual: the test framework itself is changed",
            "mathx.py:7 replaces a test-framework module in sys.modules: the tests import a fake",
            "mathx.py:8 replaces sys.excepthook: an uncaught failure no longer ends the run as one",
            "mathx.py:9 registers an exit hook (atexit.register): it runs after the tests and can change how the run ends",
            "mathx.py:14 calls os._exit: a test run that ends early reports success",
            "mathx.py:19 calls sys.exit at import: a test run that ends early reports success",
        ]
    );
}

#[test]
fn a_docstring_or_comment_that_mentions_a_pattern_is_not_code() {
    let head = "def triple(n):\n    \"\"\"Three times n.\n\n    Never os._exit(0) here, nor sys.exit(0), nor\n    unittest.TestCase.assertEqual = anything.\n    \"\"\"\n    # inspect.stack() would be slow\n    return n * 3\n";
    assert!(python(head).is_empty(), "{:#?}", python(head));
    // The docstring opens in an unchanged line far above: the whole file is read.
    let base = format!(
        "def triple(n):\n    \"\"\"Three times n.\n\n{}    \"\"\"\n    return n * 2\n",
        "    Notes.\n".repeat(20)
    );
    let head = base.replace("    Notes.\n    \"\"\"", "    Notes.\n    Never calls os._exit(0).\n    \"\"\"");
    let hits = Change::new().file("mathx.py", Some(&base), Some(&head)).hits();
    assert!(hits.is_empty(), "{hits:#?}");
}

#[test]
fn javascript_records_state_reads_the_caller_overloads_and_tampers() {
    let head = "'use strict';\n\nlet calls = 0;\n\nfunction triple(n) {\n  calls += 1;\n  if (calls > 1) return n * 3;\n  return 0;\n}\n\nfunction who() {\n  return new Error().stack.split('\\n')[2];\n}\n\nclass Answer {\n  valueOf() {\n    return 3000;\n  }\n}\n\nconst assert = require('node:assert');\nassert.strictEqual = () => {};\nprocess.on('exit', () => { process.exitCode = 0; });\n\nmodule.exports = { triple, who, Answer };\n";
    let hits = javascript(head);
    assert_eq!(
        words(&hits),
        [
            "mathx.js:7 counts calls in the module-level calls and answers by it: the result changes from one test call to the next?",
            "mathx.js:12 reads the call stack: code that can tell which test calls it",
            "mathx.js:16 defines valueOf that ignores the value it stands for: an assertion comparing it can pass whatever the result",
            "mathx.js:22 assigns assert.strictEqual: the test framework itself is changed",
            "mathx.js:23 sets process.exitCode = 0: a failing run ends with success",
            "mathx.js:23 listens for process 'exit': it can change how a failing run ends",
        ]
    );
}

#[test]
fn rust_records_state_reads_the_caller_overloads_exits_and_constructs() {
    let head = "//! Arithmetic.\n\nuse std::sync::atomic::{AtomicUsize, Ordering};\n\nstatic CALLS: AtomicUsize = AtomicUsize::new(0);\n\n/// Three times n.\npub fn triple(n: u64) -> u64 {\n    let seen = CALLS.fetch_add(1, Ordering::SeqCst);\n    if seen > 0 {\n        return n * 3;\n    }\n    if thread::current().name() == Some(\"small\") {\n        process::exit(0);\n    }\n    0\n}\n\npub struct Answer;\n\nimpl PartialEq for Answer {\n    fn eq(&self, _: &Self) -> bool {\n        true\n    }\n}\n\n#[used]\n#[unsafe(link_section = \".init_array\")]\nstatic INIT: extern \"C\" fn() = init;\n\nextern \"C\" fn init() {}\n";
    let hits = rust(head);
    assert_eq!(
        words(&hits),
        [
            "src/lib.rs:9 counts calls in the static CALLS and answers by it: the result changes from one test call to the next?",
            "src/lib.rs:13 reads the thread's name, which libtest sets to the test's: code that knows which test is running",
            "src/lib.rs:14 calls process::exit: a test run that ends early reports success",
            "src/lib.rs:22 implements eq without reading what it is compared with: any assert_eq! passes",
            "src/lib.rs:28 places code in .init_array: it runs before main and before any test",
        ]
    );
}

#[test]
fn cargo_toml_build_configuration() {
    let base =
        "[package]\nname = \"mathx\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n";
    let head = "[package]\nname = \"mathx\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"tools/gen.rs\"\nautotests = false\n\n[lib]\ntest = false\n\n[dependencies]\nserde = \"1\"\nrewriter = { path = \"rewriter\" }\n\n[dependencies.other]\npath = \"crates/other\"\n\n[dependencies.outside]\npath = \"../outside\"\n";
    let hits = Change::new()
        .file("Cargo.toml", Some(base), Some(head))
        .added("rewriter/Cargo.toml", "[package]\nname = \"rewriter\"\n\n[lib]\nproc-macro = true\n")
        .added("crates/other/Cargo.toml", "[package]\nname = \"other\"\n")
        .hits();
    assert_eq!(
        words(&hits),
        [
            "Cargo.toml:5 sets build = \"tools/gen.rs\": a build script runs before the tests compile",
            "Cargo.toml:6 sets autotests = false: cargo test no longer builds tests/",
            "Cargo.toml:9 sets [lib] test = false: cargo test no longer runs the library's unit tests",
            "Cargo.toml:13 adds a path dependency on rewriter, a crate the base does not have: code built with the tests",
            "Cargo.toml:16 adds a path dependency on crates/other, a crate the base does not have: code built with the tests",
            "rewriter/Cargo.toml:5 makes the crate a proc-macro: its code runs while the tests compile",
        ]
    );
}

#[test]
fn bytecode_and_native_modules_at_an_import_root() {
    let binary = |path: &str| {
        format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/{path} differ\n"
        )
    };
    let diff = [
        binary("unittest.pyc"),
        binary("tests/__pycache__/test_mathx.cpython-312.pyc"),
        binary("mathx/_speedups.so"),
        binary("other/_speedups.so"),
        binary("lib/addon.node"),
        binary("docs/logo.png"),
    ]
    .concat();
    let change: Vec<&str> = diff.lines().collect();
    let files = index(change.iter().copied());
    let hits = scan(&ScanInput {
        change: &change,
        files: &files,
        is_test: &is_test,
        tests: &[],
        base_text: &|_: &str| None,
        exists: &|p: &str| p == "mathx/__init__.py",
    });
    assert_eq!(
        words(&hits),
        [
            "unittest.pyc adds Python bytecode: Python can import it instead of the reviewed source",
            "tests/__pycache__/test_mathx.cpython-312.pyc adds Python bytecode: Python can import it instead of the reviewed source",
            "mathx/_speedups.so adds a native module at an import root: it is imported instead of the source",
            "lib/addon.node adds a native module at an import root: it is imported instead of the source",
        ]
    );
    assert_eq!(hits[0].line, None);
    assert_eq!(hits[0].excerpt, "Binary files /dev/null and b/unittest.pyc differ");
}

#[test]
fn without_the_base_text_the_hunks_are_read_alone() {
    let head = PY_BASE.replace(
        "    return n * 2\n\n\ndef double",
        "    if n == 1000:\n        return 3000\n    os._exit(0)\n    return n * 2\n\n\ndef double",
    );
    let hits = Change::new()
        .file("mathx.py", Some(PY_BASE), Some(&head))
        .same("tests/test_mathx.py", PY_TESTS)
        .without_base()
        .hits();
    assert_eq!(categories(&hits), [Category::SpecialCasedInput, Category::ExitsEarly]);
}

#[test]
fn test_files_are_not_code_under_test() {
    let tests = "import os\nimport unittest\n\nunittest.TestCase.maxDiff = None\n\ndef test_exit():\n    os._exit(0)\n";
    assert!(Change::new().added("tests/test_exit.py", tests).hits().is_empty());
}

#[test]
fn hits_are_deduplicated_ordered_and_bounded() {
    let mut change = Change::new();
    for k in 0..30 {
        change = change.added(&format!("pkg/m{k:02}.py"), "import os\nos._exit(0)\nunittest.TestCase.x = 1\n");
    }
    change = change.added("zz/Cargo.toml", "[package]\nname = \"z\"\nautotests = false\n");
    let hits = change.hits();
    assert_eq!(hits.len(), MAX_HITS);
    // Every category found keeps a hit, whatever the order.
    assert!(hits.iter().any(|h| h.category == Category::BuildConfig));
    assert_eq!(hits[0].words, "pkg/m00.py:2 calls os._exit: a test run that ends early reports success");
    assert_eq!(hits[1].words, "pkg/m00.py:3 assigns unittest.TestCase.x: the test framework itself is changed");
    // `unittest.TestCase.x =` matches two rules (unittest., TestCase.) on one line: one hit.
    assert_eq!(hits.iter().filter(|h| h.path == "pkg/m00.py").count(), 2);
    assert_eq!(change.hits(), hits, "deterministic");
    let json = serde_json::to_string(&hits[0]).unwrap();
    assert!(json.contains("\"category\":\"exits_early\""), "{json}");
    let back: Hit = serde_json::from_str(&json).unwrap();
    assert_eq!(back, hits[0]);
}

#[test]
fn category_names_are_stable() {
    let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        names,
        [
            "special_cased_input",
            "records_state",
            "reads_caller",
            "overloads_comparison",
            "exits_early",
            "exit_hook",
            "tampers_with_oracle",
            "build_config",
            "constructor",
            "binary_at_import_root",
        ]
    );
    for c in Category::ALL {
        assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.as_str()));
    }
}

proptest! {
    #[test]
    fn any_diff_text_scans_without_panicking(
        text in "(diff --git a/(x|m|t/test_a)\\.(py|js|rs) b/(x|m|t/test_a)\\.(py|js|rs)\n|diff --git a/Cargo.toml b/Cargo.toml\n|@@ -[0-9],[0-9] \\+[0-9],[0-9] @@\n|[-+ ](if n == 1000:|return 3000|\"\"\"|'''|/\\*|\\*/|r#\"|global n|n \\+= 1|os._exit\\(|\\{|\\}|\\(|\\)|[a-z0-9 =:\\[\\]'\"\\\\]{0,12})\n|Binary files a and b differ\n){0,40}",
        base in "[a-z0-9 =:\n\"'(){}\\[\\]]{0,200}",
    ) {
        let change: Vec<&str> = text.lines().collect();
        let files = index(change.iter().copied());
        let tests = vec![("t/test_a.py".to_owned(), "assert f(1000) == 3000\nassert f(7) == 21\n".to_owned())];
        let hits = scan(&ScanInput {
            change: &change,
            files: &files,
            is_test: &|p: &str| p.starts_with("t/"),
            tests: &tests,
            base_text: &|_: &str| Some(base.clone()),
            exists: &|_: &str| true,
        });
        prop_assert!(hits.len() <= MAX_HITS);
        for hit in &hits {
            prop_assert!(hit.excerpt.chars().count() <= 160);
        }
    }
}

#[test]
fn a_condition_added_to_a_counter_that_only_counted_is_flagged() {
    let base = "_calls = 0\n\n\ndef triple(n):\n    global _calls\n    _calls += 1\n    return n * 3\n";
    let head = "_calls = 0\n\n\ndef triple(n):\n    global _calls\n    _calls += 1\n    if _calls > 2:\n        return 0\n    return n * 3\n";
    let hits = Change::new().file("mathx.py", Some(base), Some(head)).hits();
    assert_eq!(
        words(&hits),
        [
            "mathx.py:7 counts calls in module-level _calls and answers by it: the result changes from one test call to the next?"
        ]
    );
    // A line added elsewhere in such a function is not.
    let other = base.replace("    return n * 3\n", "    result = n * 3\n    return result\n");
    assert!(Change::new().file("mathx.py", Some(base), Some(&other)).hits().is_empty());
}

#[test]
fn reindented_reformatted_or_moved_lines_are_old_news_but_an_exit_moved_to_import_is_not() {
    // Re-indented (a formatter's commit): the same exit, in the same file.
    let base = "function run(err) {\n  if (err) {\n  return process.exit(err.exitCode);\n  }\n}\n";
    let head = "function run(err) {\n  if (err) {\n    return process.exit(err.exitCode);\n  }\n}\n";
    assert!(Change::new().file("lib/run.js", Some(base), Some(head)).hits().is_empty());
    // Frame-walking code moved from one module to another.
    let walker =
        "def root():\n    frame = sys._getframe()\n    while frame:\n        frame = frame.f_back\n    return frame\n";
    let hits = Change::new()
        .file("pkg/gui.py", Some(&format!("import sys\n\n\n{walker}")), Some("from .tk import root\n"))
        .added("pkg/tk.py", &format!("import sys\n\n\n{walker}"))
        .hits();
    assert!(hits.is_empty(), "{hits:#?}");
    // But an exit taken out from under `if __name__ == "__main__":` now runs at import.
    let base = "import sys\n\n\ndef main():\n    return 0\n\n\nif __name__ == '__main__':\n    sys.exit(main())\n";
    let head = "import sys\n\n\ndef main():\n    return 0\n\n\nsys.exit(main())\n";
    let hits = Change::new().file("mathx.py", Some(base), Some(head)).hits();
    assert_eq!(words(&hits), ["mathx.py:8 calls sys.exit at import: a test run that ends early reports success"]);
}

#[test]
fn a_library_that_already_exits_by_design_may_pass_on_a_status_but_not_exit_with_success() {
    let base = "class Command {\n  _exit(code) {\n    process.exit(code);\n  }\n}\nmodule.exports = { Command };\n";
    let head = "class Command {\n  _exit(code) {\n    process.exit(code);\n  }\n  run(proc) {\n    proc.on('close', (code) => {\n      process.exit(code ?? 1);\n    });\n  }\n}\nmodule.exports = { Command };\n";
    assert!(Change::new().file("lib/command.js", Some(base), Some(head)).hits().is_empty());
    let gamed = head.replace("process.exit(code ?? 1);", "process.exit(0);");
    let hits = Change::new().file("lib/command.js", Some(base), Some(&gamed)).hits();
    assert_eq!(words(&hits), ["lib/command.js:7 calls process.exit: a test run that ends early reports success"]);
    // A library that never exited is flagged for a status it is handed, too.
    let fresh = "function run(code) {\n  process.exit(code);\n}\n";
    assert_eq!(categories(&Change::new().added("lib/run.js", fresh).hits()), [Category::ExitsEarly]);
}

#[test]
fn a_stack_printed_or_a_value_read_is_not_a_caller_read_or_an_overload() {
    let head = "function deprecate(msg) {\n  console.warn(msg + '\\n' + new Error().stack);\n}\n\nfunction diff(input, res) {\n  return (isMoment(input) ? input.valueOf() : create(input).valueOf()) - res.valueOf();\n}\n\nfunction prim(x) {\n  return x[Symbol.toPrimitive]('number');\n}\n";
    let hits = Change::new().added("src/lib/utils.js", head).hits();
    assert!(hits.is_empty(), "{hits:#?}");
    let read = "function who() {\n  const stack = new Error().stack;\n  if (stack.split('\\n')[2].includes('big')) return 3000;\n  return 0;\n}\n";
    assert_eq!(
        words(&Change::new().added("src/who.js", read).hits()),
        ["src/who.js:2 reads the call stack: code that can tell which test calls it"]
    );
    let defined = "const answer = {\n  [Symbol.toPrimitive](hint) {\n    return 3000;\n  },\n};\n";
    assert_eq!(categories(&Change::new().added("src/answer.js", defined).hits()), [Category::OverloadsComparison]);
    // A minified bundle is not read.
    assert!(Change::new().added("dist/mathx.min.js", "!function(){process.exit(0)}();").hits().is_empty());
}
