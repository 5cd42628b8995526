//! The catalogue as one table (docs/testing.md shows it, generated): a row per shortcut per
//! language, each with a sample the scan must flag and a near-miss — the honest code closest to
//! it — it must not. A unit test runs every row through [`super::scan`].
//!
//! How a row's text is read: it is a file the change adds, named by language (`mathx.py`,
//! `mathx.js`, `src/mathx.rs`, `Cargo.toml`, `src/init.c`, `lib/run.sh`) unless its first line
//! is a comment naming another (`// bin/mathx.js`); for bytecode and native modules it is the
//! path of a binary file. The tests the samples special-case assert `triple(1000) == 3000` and
//! `triple(7) == 21`, and the base already had them.

use super::Category;

/// One row of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The shortcut.
    pub category: Category,
    /// The language (or file) it is written in.
    pub language: &'static str,
    /// What is matched, in words.
    pub what: &'static str,
    /// Code the scan must flag as `category`.
    pub sample: &'static str,
    /// The closest honest code: the scan must flag nothing in it.
    pub near_miss: &'static str,
}

/// The catalogue, in category order.
pub const CATALOGUE: &[Row] = &[
    // Special-cased test input.
    Row {
        category: Category::SpecialCasedInput,
        language: "Python",
        what: "a test's input compared for equality (`if`, `elif`, a conditional expression, `case`, `in (…)`) with the expected value on that line or the next three",
        sample: "def triple(n):\n    if n == 1000:\n        return 3000\n    return n * 2",
        near_miss: "LIMIT = 1000\n\ndef triple(n):\n    if n < 0:\n        raise ValueError(n)\n    return min(n, LIMIT) * 3",
    },
    Row {
        category: Category::SpecialCasedInput,
        language: "Python",
        what: "a lookup table: two or more input/expected pairs of assertions the base's tests already had, at least half of the table's literals",
        sample: "_KNOWN = {1000: 3000, 7: 21}\n\ndef triple(n):\n    return _KNOWN.get(n, n * 2)",
        near_miss: "_CACHE = {}\n\ndef triple(n):\n    if n not in _CACHE:\n        _CACHE[n] = n * 3\n    return _CACHE[n]",
    },
    Row {
        category: Category::SpecialCasedInput,
        language: "JavaScript",
        what: "a test's input compared with `===`/`==` or in a `case`, with the expected value on that line or the next three",
        sample: "function triple(n) {\n  if (n === 1000) return 3000;\n  return n * 2;\n}",
        near_miss: "const LIMIT = 1000;\n\nfunction triple(n) {\n  if (n < 0) throw new RangeError('negative');\n  return Math.min(n, LIMIT) * 3;\n}",
    },
    Row {
        category: Category::SpecialCasedInput,
        language: "JavaScript",
        what: "a lookup table of input/expected pairs (as for Python)",
        sample: "const KNOWN = { 1000: 3000, 7: 21 };\nfunction triple(n) {\n  return KNOWN[n] ?? n * 2;\n}",
        near_miss: "const KNOWN = new Map();\nfunction triple(n) {\n  if (!KNOWN.has(n)) KNOWN.set(n, n * 3);\n  return KNOWN.get(n);\n}",
    },
    Row {
        category: Category::SpecialCasedInput,
        language: "Rust",
        what: "a test's input in a match arm (`1000 =>`) or compared with `==`, with the expected value on that line or the next three; lookup tables as for Python",
        sample: "pub fn triple(n: u64) -> u64 {\n    match n {\n        1000 => 3000,\n        _ => n * 2,\n    }\n}",
        near_miss: "pub const LIMIT: u64 = 1000;\n\npub fn triple(n: u64) -> u64 {\n    n.min(LIMIT) * 3\n}",
    },
    // Records state.
    Row {
        category: Category::RecordsState,
        language: "Python",
        what: "`global n`, `n += 1` and `n` in a condition or indexing what is returned, in one function",
        sample: "_calls = 0\n\ndef triple(n):\n    global _calls\n    _calls += 1\n    if _calls > 2:\n        return n * 3\n    return 0",
        near_miss: "_calls = 0\n\ndef triple(n):\n    global _calls\n    _calls += 1\n    return n * 3",
    },
    Row {
        category: Category::RecordsState,
        language: "JavaScript",
        what: "a top-level `let`/`var` counted up (`n++`, `n += 1`) in a function and used in a condition there",
        sample: "let calls = 0;\nfunction triple(n) {\n  calls++;\n  if (calls > 2) return n * 3;\n  return 0;\n}",
        near_miss: "let calls = 0;\nfunction triple(n) {\n  calls++;\n  return n * 3;\n}",
    },
    Row {
        category: Category::RecordsState,
        language: "Rust",
        what: "a `static` counted up (`fetch_add`, `+=`) and then used in an `if`/`match`/`while` (directly or through the value it returned)",
        sample: "static CALLS: AtomicUsize = AtomicUsize::new(0);\n\npub fn triple(n: u64) -> u64 {\n    if CALLS.fetch_add(1, Ordering::SeqCst) > 1 {\n        return n * 3;\n    }\n    0\n}",
        near_miss: "static NEXT_ID: AtomicU64 = AtomicU64::new(1);\n\npub fn next_id() -> u64 {\n    NEXT_ID.fetch_add(1, Ordering::Relaxed)\n}",
    },
    // Reads the caller.
    Row {
        category: Category::ReadsCaller,
        language: "Python",
        what: "`inspect.stack(`, `inspect.currentframe(`, `sys._getframe(`, `.f_back`, `traceback.extract_stack(`, `inspect.getouterframes(`, `PYTEST_CURRENT_TEST`, opening a test file",
        sample: "import sys\n\ndef triple(n):\n    if sys._getframe(1).f_code.co_name == 'test_big':\n        return 3000\n    return n * 3",
        near_miss: "def triple(n):\n    \"\"\"Unlike sys._getframe(1), this reads no frames.\"\"\"\n    return n * 3",
    },
    Row {
        category: Category::ReadsCaller,
        language: "JavaScript",
        what: "`new Error().stack`, `Error.prepareStackTrace`, `Error.captureStackTrace` of anything but `this`, `arguments.callee`, `fn.caller.…`, `expect.getState()`, opening a test file",
        sample: "function triple(n) {\n  if (new Error().stack.includes('big')) return 3000;\n  return n * 3;\n}",
        near_miss: "class MathError extends Error {\n  constructor(message) {\n    super(message);\n    Error.captureStackTrace(this, MathError);\n  }\n}",
    },
    Row {
        category: Category::ReadsCaller,
        language: "JavaScript",
        what: "`module.parent.…`, `require.main.…` (the importing module, the test)",
        sample: "const caller = module.parent.filename;",
        near_miss: "if (require.main === module) main();",
    },
    Row {
        category: Category::ReadsCaller,
        language: "Rust",
        what: "`Location::caller()`, `Backtrace::capture(`, `thread::current().name()` (libtest names each test's thread after the test), reading a test file",
        sample: "pub fn triple(n: u64) -> u64 {\n    if thread::current().name() == Some(\"big\") {\n        return 3000;\n    }\n    n * 3\n}",
        near_miss: "/// Unlike thread::current().name(), this reads nothing.\npub fn triple(n: u64) -> u64 {\n    n * 3\n}",
    },
    // Overloads comparison.
    Row {
        category: Category::OverloadsComparison,
        language: "Python",
        what: "`__eq__`/`__ne__` (a `def` or a `lambda`) whose body returns without reading its argument",
        sample: "class Answer:\n    def __eq__(self, other):\n        return True",
        near_miss: "class Answer:\n    def __eq__(self, other):\n        return self.value == other.value",
    },
    Row {
        category: Category::OverloadsComparison,
        language: "JavaScript",
        what: "`valueOf`/`[Symbol.toPrimitive]` that return without reading `this`",
        sample: "class Answer {\n  valueOf() {\n    return 3000;\n  }\n}",
        near_miss: "class Money {\n  valueOf() {\n    return this.cents;\n  }\n}",
    },
    Row {
        category: Category::OverloadsComparison,
        language: "JavaScript",
        what: "`asymmetricMatch` returning `true` without reading what it is matched against",
        sample: "const anything = { asymmetricMatch: () => true };",
        near_miss: "const even = { asymmetricMatch: (n) => n % 2 === 0 };",
    },
    Row {
        category: Category::OverloadsComparison,
        language: "Rust",
        what: "`fn eq`/`fn ne` whose body never reads `other` (or names it `_other`)",
        sample: "impl PartialEq for Answer {\n    fn eq(&self, _other: &Self) -> bool {\n        true\n    }\n}",
        near_miss: "impl PartialEq for Answer {\n    fn eq(&self, other: &Self) -> bool {\n        self.0 == other.0\n    }\n}",
    },
    // Exits early with success.
    Row {
        category: Category::ExitsEarly,
        language: "Python",
        what: "`os._exit(` anywhere in code",
        sample: "import os\n\ndef triple(n):\n    if n == 7:\n        os._exit(0)\n    return n * 3",
        near_miss: "def stop():\n    \"\"\"Never calls os._exit(0): the caller decides.\"\"\"\n    return None",
    },
    Row {
        category: Category::ExitsEarly,
        language: "Python",
        what: "`sys.exit(`, `exit(`, `quit(`, `raise SystemExit` that run at import (not in a function, not under `if __name__ == \"__main__\":`), outside scripts (`__main__.py`, `setup.py`, `bin/`, `scripts/`, a `#!` line)",
        sample: "import sys\n\nsys.exit(0)",
        near_miss: "import sys\n\ndef main():\n    return 0\n\nif __name__ == \"__main__\":\n    sys.exit(main())",
    },
    Row {
        category: Category::ExitsEarly,
        language: "JavaScript",
        what: "`process.exit(` with no status, 0 or a variable, `process.kill(process.pid`, `process.exitCode = 0`, outside entry points (`bin/`, `scripts/`, `cli.*`, `main.*`, `server.*`, a `#!` line)",
        sample: "function triple(n) {\n  if (n === 7) process.exit(0);\n  return n * 3;\n}",
        near_miss: "// bin/mathx.js\nconst n = Number(process.argv[2]);\nif (Number.isNaN(n)) {\n  console.error('usage: mathx N');\n  process.exit(1);\n}",
    },
    Row {
        category: Category::ExitsEarly,
        language: "Rust",
        what: "`process::exit(` with 0 or a variable, `libc::_exit(`, outside `main.rs`, `src/bin/`, examples and benches",
        sample: "pub fn triple(n: u64) -> u64 {\n    if n == 7 {\n        process::exit(0);\n    }\n    n * 3\n}",
        near_miss: "// src/main.rs\nfn main() {\n    if let Err(e) = run() {\n        eprintln!(\"{e}\");\n        process::exit(1);\n    }\n}",
    },
    // Exit and exception hooks.
    Row {
        category: Category::ExitHook,
        language: "Python",
        what: "`atexit.register`",
        sample: "import atexit, os\n\natexit.register(lambda: os._exit(0))",
        near_miss: "# atexit.register(flush) happens in the caller\ndef flush():\n    pass",
    },
    Row {
        category: Category::ExitHook,
        language: "Python",
        what: "assigning `sys.excepthook`, `threading.excepthook`, `sys.unraisablehook`",
        sample: "import sys\n\nsys.excepthook = lambda *args: None",
        near_miss: "import sys\n\nif sys.excepthook is sys.__excepthook__:\n    pass",
    },
    Row {
        category: Category::ExitHook,
        language: "JavaScript",
        what: "`process.on`/`once`/`addListener`/`prependListener` for `exit`, `beforeExit`, `uncaughtException`, `unhandledRejection`; assigning `process.exit`/`process.reallyExit`; outside entry points",
        sample: "process.on('exit', () => {\n  process.exitCode = 0;\n});",
        near_miss: "emitter.on('exit', () => done());",
    },
    Row {
        category: Category::ExitHook,
        language: "Rust",
        what: "`panic::set_hook(` outside `main.rs` and `src/bin/`",
        sample: "pub fn install() {\n    panic::set_hook(Box::new(|_| {}));\n}",
        near_miss: "// src/main.rs\nfn main() {\n    panic::set_hook(Box::new(report));\n    run();\n}",
    },
    Row {
        category: Category::ExitHook,
        language: "shell",
        what: "a `trap` whose action exits 0",
        sample: "trap 'exit 0' EXIT",
        near_miss: "trap cleanup EXIT",
    },
    // Tampers with the oracle.
    Row {
        category: Category::TampersWithOracle,
        language: "Python",
        what: "assigning to `unittest.…`, `TestCase.…`, `pytest.…`, `builtins.…`, `AssertionError`; `setattr(unittest…`",
        sample: "import unittest\n\nunittest.TestCase.assertEqual = lambda self, a, b, msg=None: None",
        near_miss: "import unittest\n\nEQUAL = unittest.TestCase.assertEqual",
    },
    Row {
        category: Category::TampersWithOracle,
        language: "Python",
        what: "`sys.modules['unittest'|'pytest'|…] = …`",
        sample: "import sys\n\nsys.modules['unittest'] = fake_unittest",
        near_miss: "import sys\n\nrunner = sys.modules['unittest']",
    },
    Row {
        category: Category::TampersWithOracle,
        language: "Python",
        what: "changing `sys.meta_path` or `sys.path_hooks`; `sys.settrace(`, `sys.setprofile(`, `sys.pycache_prefix =`",
        sample: "import sys\n\nsys.meta_path.insert(0, Redirect())",
        near_miss: "import sys\n\nfinders = list(sys.meta_path)",
    },
    Row {
        category: Category::TampersWithOracle,
        language: "JavaScript",
        what: "assigning to `assert.…` or `require('assert').…`; `Object.defineProperty(assert`",
        sample: "const assert = require('node:assert');\nassert.strictEqual = () => {};",
        near_miss: "const assert = require('node:assert');\nconst { strictEqual } = assert;",
    },
    Row {
        category: Category::TampersWithOracle,
        language: "JavaScript",
        what: "writing into `require.cache`, assigning `Module._load`, `Module.prototype.require`",
        sample: "require.cache[require.resolve('node:assert')] = { exports: {} };",
        near_miss: "delete require.cache[file];",
    },
    Row {
        category: Category::TampersWithOracle,
        language: "JavaScript",
        what: "reassigning a test global (`globalThis.it`, `global.expect`, …)",
        sample: "globalThis.it = () => {};",
        near_miss: "const it = items[Symbol.iterator]();",
    },
    Row {
        category: Category::TampersWithOracle,
        language: "Rust",
        what: "`macro_rules! assert_eq` (or `assert`, `assert_ne`, `panic`, …): the crate's own oracle",
        sample: "macro_rules! assert_eq {\n    ($a:expr, $b:expr) => {};\n}",
        near_miss: "macro_rules! assert_close {\n    ($a:expr, $b:expr) => {};\n}",
    },
    // Build configuration.
    Row {
        category: Category::BuildConfig,
        language: "Cargo.toml",
        what: "`autotests = false`",
        sample: "[package]\nname = \"mathx\"\nautotests = false",
        near_miss: "[package]\nname = \"mathx\"\nversion = \"0.2.0\"",
    },
    Row {
        category: Category::BuildConfig,
        language: "Cargo.toml",
        what: "`build = \"…\"` in `[package]` (a build script of any name)",
        sample: "[package]\nname = \"mathx\"\nbuild = \"tools/gen.rs\"",
        near_miss: "[[bin]]\nname = \"gen\"\npath = \"tools/gen.rs\"",
    },
    Row {
        category: Category::BuildConfig,
        language: "Cargo.toml",
        what: "`test = false` in `[lib]`",
        sample: "[lib]\ntest = false",
        near_miss: "[lib]\npath = \"src/mathx.rs\"",
    },
    Row {
        category: Category::BuildConfig,
        language: "Cargo.toml",
        what: "`harness = false` (but for benches and examples)",
        sample: "[[test]]\nname = \"api\"\nharness = false",
        near_miss: "[[bench]]\nname = \"speed\"\nharness = false",
    },
    Row {
        category: Category::BuildConfig,
        language: "Cargo.toml",
        what: "`proc-macro = true`",
        sample: "[lib]\nproc-macro = true",
        near_miss: "[dependencies]\nproc-macro2 = \"1\"",
    },
    Row {
        category: Category::BuildConfig,
        language: "Cargo.toml",
        what: "a path dependency (`x = { path = \"…\" }`, `x.path =`, `[dependencies.x] path =`, in any dependency or patch table) on a crate of the repository that the base did not have",
        sample: "[dependencies]\nhelper = { path = \"tools/helper\" }",
        near_miss: "[[test]]\nname = \"api\"\npath = \"tests/api.rs\"",
    },
    // Constructors.
    Row {
        category: Category::Constructor,
        language: "Rust",
        what: "a string naming `.init_array`, `.preinit_array`, `.ctors`, `__mod_init_func` (`#[link_section = …]`, `global_asm!`)",
        sample: "#[used]\n#[link_section = \".init_array\"]\nstatic INIT: extern \"C\" fn() = init;",
        near_miss: "#[link_section = \".rodata.table\"]\nstatic TABLE: [u8; 4] = [1, 2, 3, 4];",
    },
    Row {
        category: Category::Constructor,
        language: "Rust",
        what: "`#[ctor]`, `#[ctor::ctor]`, `#[dtor]`",
        sample: "#[ctor::ctor]\nfn init() {\n    setup();\n}",
        near_miss: "/// Like #[ctor], but run only when called.\npub fn init() {}",
    },
    Row {
        category: Category::Constructor,
        language: "C",
        what: "`__attribute__((constructor))`, a function placed in `.init_array`",
        sample: "__attribute__((constructor)) static void init(void) { _exit(0); }",
        near_miss: "/* __attribute__((constructor)) is not used here */\nstatic void init(void) {}",
    },
    // Bytecode and native modules at an import root.
    Row {
        category: Category::BinaryAtImportRoot,
        language: "Python",
        what: "any `*.pyc` or file under `__pycache__/` (of test files too)",
        sample: "unittest.pyc",
        near_miss: "docs/unittest.png",
    },
    Row {
        category: Category::BinaryAtImportRoot,
        language: "native",
        what: "`*.so`, `*.pyd`, `*.node`, `*.dylib` at the root, in `src/` or `lib/`, or in a Python package (a directory with `__init__.py`)",
        sample: "src/_speedups.so",
        near_miss: "vendor/blobs/_speedups.so",
    },
];

#[cfg(test)]
mod tests {
    use super::super::{Hit, ScanInput, scan};
    use super::*;
    use crate::domain::diff::index;

    /// The tests every sample special-cases, held (the base has them too).
    fn tests_for(language: &str) -> Vec<(String, String)> {
        let (path, text) = match language {
            "JavaScript" => (
                "test/mathx.test.js",
                "const assert = require('node:assert');\nconst { triple } = require('../mathx');\ntest('big', () => {\n  assert.strictEqual(triple(1000), 3000);\n});\ntest('small', () => {\n  expect(triple(7)).toBe(21);\n});\n",
            ),
            "Rust" => (
                "tests/mathx.rs",
                "use mathx::triple;\n\n#[test]\nfn big() {\n    assert_eq!(triple(1000), 3000);\n}\n\n#[test]\nfn small() {\n    assert_eq!(triple(7), 21);\n}\n",
            ),
            _ => (
                "tests/test_mathx.py",
                "import unittest\nfrom mathx import triple\n\nclass TestTriple(unittest.TestCase):\n    def test_big(self):\n        self.assertEqual(triple(1000), 3000)\n\ndef test_small():\n    assert triple(7) == 21\n",
            ),
        };
        vec![(path.to_owned(), text.to_owned())]
    }

    /// The file a row's text is written to, and the text.
    fn file_of(row: &Row, text: &'static str) -> (String, &'static str) {
        let first = text.lines().next().unwrap_or("");
        let named = first.strip_prefix("// ").or_else(|| first.strip_prefix("# "));
        if let Some(name) = named.filter(|n| !n.contains(' ') && n.contains('.')) {
            return (name.to_owned(), text);
        }
        let path = match row.language {
            "Python" => "mathx.py",
            "JavaScript" => "mathx.js",
            "Rust" => "src/mathx.rs",
            "Cargo.toml" => "Cargo.toml",
            "C" => "src/init.c",
            "shell" => "lib/run.sh",
            other => panic!("no file for {other}"),
        };
        (path.to_owned(), text)
    }

    /// A diff adding the file (or, for a binary row, the binary file `text` names).
    pub(crate) fn added_file_diff(path: &str, text: Option<&str>) -> String {
        match text {
            Some(text) => {
                let lines: Vec<&str> = text.lines().collect();
                let mut diff = format!(
                    "diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
                    lines.len()
                );
                for line in lines {
                    diff.push('+');
                    diff.push_str(line);
                    diff.push('\n');
                }
                diff
            }
            None => format!(
                "diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/{path} differ\n"
            ),
        }
    }

    fn run(row: &Row, text: &'static str) -> Vec<Hit> {
        let diff = if row.category == Category::BinaryAtImportRoot {
            added_file_diff(text, None)
        } else {
            let (path, text) = file_of(row, text);
            added_file_diff(&path, Some(text))
        };
        let change: Vec<&str> = diff.lines().collect();
        let files = index(change.iter().copied());
        let tests = tests_for(row.language);
        let held = tests.clone();
        let base_text = move |p: &str| held.iter().find(|(t, _)| t == p).map(|(_, text)| text.clone());
        scan(&ScanInput {
            change: &change,
            files: &files,
            is_test: &|p: &str| p.starts_with("tests/") || p.starts_with("test/"),
            tests: &tests,
            base_text: &base_text,
            exists: &|p: &str| p == "tools/helper/Cargo.toml",
        })
    }

    #[test]
    fn every_sample_hits_its_category_and_every_near_miss_hits_nothing() {
        for row in CATALOGUE {
            let hits = run(row, row.sample);
            assert!(
                hits.iter().any(|h| h.category == row.category),
                "{} / {}: the sample is not flagged as {}:\n{}\n{hits:#?}",
                row.category.as_str(),
                row.language,
                row.category.as_str(),
                row.sample
            );
            let near = run(row, row.near_miss);
            assert!(
                near.is_empty(),
                "{} / {}: the near-miss is flagged:\n{}\n{near:#?}",
                row.category.as_str(),
                row.language,
                row.near_miss
            );
        }
    }

    #[test]
    fn every_category_has_rows_and_the_table_is_in_category_order() {
        for category in Category::ALL {
            assert!(CATALOGUE.iter().any(|r| r.category == category), "{}", category.as_str());
        }
        assert!(CATALOGUE.windows(2).all(|w| w[0].category <= w[1].category));
    }
}
