//! The tripwire (issue 57): a tiny test of forgeloop's own that imports the modules a change
//! touched and then must fail in known ways — a failing `assertEqual`, `assertTrue(False)`, a
//! bare `assert`, a raised exception — and pass once. It runs in an invocation of its own,
//! after the person's suite and never inside it, with the same interpreter and runner. Code that
//! tampers with the test framework when imported (a monkeypatched `assertEqual`, an `atexit`
//! hook that forces exit 0, `os._exit(0)` at import) makes it report otherwise: a must-fail
//! test passes, the must-pass one fails, or the run exits 0 although failures were due.
//!
//! Where it goes: the file ([`PYTHON_FILE`], [`NODE_FILE`]) is written at the checkout's root
//! (so the project's root `conftest.py` applies, as to any test, and `python -m unittest`
//! can import it from the working directory), run with [`python_argv`] or [`node_argv`]
//! through forgeloop's results channel like a test command, then removed. Its results are
//! judged by [`judge`].

use serde::{Deserialize, Serialize};

use super::model::{CommandResults, Outcome};

/// The Python tripwire's file name, at the checkout's root (`*_test.py`: pytest collects it
/// under its default patterns too).
pub const PYTHON_FILE: &str = "forgeloop_tripwire_test.py";
/// The Node tripwire's file name, at the checkout's root.
pub const NODE_FILE: &str = "forgeloop-tripwire.test.mjs";

/// The Python tests that must fail, each a different way.
pub const PYTHON_MUST_FAIL: &[&str] = &[
    "test_must_fail_assert_equal",
    "test_must_fail_assert_true",
    "test_must_fail_bare_assert",
    "test_must_fail_raises",
];
/// The Python test that must pass.
pub const PYTHON_MUST_PASS: &str = "test_must_pass";
/// The Node tests that must fail.
pub const NODE_MUST_FAIL: &[&str] =
    &["must fail: assert.strictEqual", "must fail: assert.ok", "must fail: assert", "must fail: throws"];
/// The Node test that must pass.
pub const NODE_MUST_PASS: &str = "must pass";

/// What the tripwire's run says about the test framework.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "tripwire", content = "why", rename_all = "snake_case")]
pub enum Tripwire {
    /// Every must-fail test failed, the must-pass one passed, and the exit status said so.
    Faithful,
    /// The framework reported otherwise: the words say how.
    Tampered(String),
    /// The tripwire could not say (it did not run, was skipped, timed out): the words say why.
    NotRun(String),
}

/// The Python tripwire's text: it imports each of `modules` (dotted names; others are left
/// out) inside `try/except Exception` — an import that fails is the suite's business, while
/// `SystemExit` and `os._exit` are not caught — then defines the tests.
pub fn python_file(modules: &[String]) -> String {
    let names: Vec<String> = modules.iter().filter(|m| is_module_name(m)).map(|m| format!("\"{m}\"")).collect();
    format!(
        "# forgeloop's tripwire (issue 57): a test of forgeloop's own, run apart from your suite. It\n\
         # imports the modules the change touched; then four tests must fail and one must pass. A\n\
         # test framework that reports otherwise was changed by the code it imported.\n\
         import unittest\n\
         \n\
         for _forgeloop_module in [{}]:\n\
         \x20   try:\n\
         \x20       __import__(_forgeloop_module)\n\
         \x20   except Exception:\n\
         \x20       pass\n\
         \n\
         \n\
         class ForgeloopTripwire(unittest.TestCase):\n\
         \x20   def {}(self):\n\
         \x20       self.assertEqual(1, 2)\n\
         \n\
         \x20   def {}(self):\n\
         \x20       self.assertTrue(False)\n\
         \n\
         \x20   def {}(self):\n\
         \x20       assert 1 == 2\n\
         \n\
         \x20   def {}(self):\n\
         \x20       raise RuntimeError(\"forgeloop tripwire: this test must fail\")\n\
         \n\
         \x20   def {}(self):\n\
         \x20       self.assertEqual(2, 2)\n",
        names.join(", "),
        PYTHON_MUST_FAIL[0],
        PYTHON_MUST_FAIL[1],
        PYTHON_MUST_FAIL[2],
        PYTHON_MUST_FAIL[3],
        PYTHON_MUST_PASS,
    )
}

/// The modules to import for changed paths (relative to the checkout): `.py` files that are
/// code under test, as dotted names (`pkg/mod.py` → `pkg.mod`, `pkg/__init__.py` → `pkg`,
/// `src/pkg/mod.py` → `pkg.mod`). Tests, `conftest.py`, `setup.py`, `__main__.py` and what lives
/// under `scripts/`, `bin/`, `tools/`, `examples/` or `docs/` are left out: they are run, not
/// imported, and importing one may run a program.
pub fn python_modules(changed: &[String]) -> Vec<String> {
    const SKIPPED_FILES: &[&str] =
        &["setup.py", "conftest.py", "__main__.py", "noxfile.py", "fabfile.py", "manage.py", "wsgi.py", "asgi.py"];
    const SKIPPED_DIRS: &[&str] = &["tests", "test", "testing", "scripts", "bin", "tools", "examples", "docs", "doc"];
    let mut out: Vec<String> = Vec::new();
    for path in changed {
        let Some(stem) = path.strip_suffix(".py") else { continue };
        let parts: Vec<&str> = stem.split('/').collect();
        let Some(file) = parts.last() else { continue };
        let file_name = format!("{file}.py");
        if SKIPPED_FILES.contains(&file_name.as_str())
            || file.starts_with("test_")
            || file.ends_with("_test")
            || parts[..parts.len() - 1].iter().any(|d| SKIPPED_DIRS.contains(d))
        {
            continue;
        }
        let mut parts = parts;
        if parts.first() == Some(&"src") && parts.len() > 1 {
            parts.remove(0);
        }
        if parts.last() == Some(&"__init__") {
            parts.pop();
        }
        let name = parts.join(".");
        if is_module_name(&name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn is_module_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// How to run the Python tripwire `file` with the runner `command` uses: `pytest` (as
/// `python -m pytest` or the `pytest` program, after any wrapper such as `uv run`) with
/// `-p no:cacheprovider` and a `--maxfail` that outvotes an `-x` in the project's options;
/// otherwise the same interpreter's unittest. `None` when the command runs no Python.
pub fn python_argv(command: &[String], file: &str) -> Option<Vec<String>> {
    let at = command.iter().position(|arg| {
        let name = base_name(arg);
        is_python(name) || name == "pytest" || name == "py.test"
    })?;
    let mut argv: Vec<String> = command[..=at].to_vec();
    let program = base_name(&command[at]);
    let pytest_args = [file.to_owned(), "-p".into(), "no:cacheprovider".into(), "--maxfail=1000".into()];
    if program == "pytest" || program == "py.test" {
        argv.extend(pytest_args);
        return Some(argv);
    }
    let module = command[at + 1..].windows(2).find(|w| w[0] == "-m").map(|w| w[1].as_str());
    if matches!(module, Some("pytest" | "py.test")) {
        argv.extend(["-m".to_owned(), "pytest".to_owned()]);
        argv.extend(pytest_args);
    } else {
        argv.extend(["-m".to_owned(), "unittest".to_owned(), "-v".to_owned(), file.to_owned()]);
    }
    Some(argv)
}

fn is_python(name: &str) -> bool {
    name.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn base_name(arg: &str) -> &str {
    arg.rsplit('/').next().unwrap_or(arg)
}

/// The Node tripwire's text: it imports each of `modules` (paths relative to the checkout,
/// `.js`, `.mjs` or `.cjs`; others are left out) with `await import` in `try/catch`, then
/// defines the tests.
pub fn node_file(modules: &[String]) -> String {
    let paths: Vec<String> = modules
        .iter()
        .filter(|m| {
            (m.ends_with(".js") || m.ends_with(".mjs") || m.ends_with(".cjs"))
                && !m.split('/').any(|part| part == ".." || part.is_empty())
                && m.chars().all(|c| c.is_ascii_alphanumeric() || "._-/@+".contains(c))
        })
        .map(|m| format!("\"./{m}\""))
        .collect();
    format!(
        "// forgeloop's tripwire (issue 57): a test of forgeloop's own, run apart from your suite. It\n\
         // imports the modules the change touched; then four tests must fail and one must pass. A\n\
         // test framework that reports otherwise was changed by the code it imported.\n\
         import {{ test }} from 'node:test';\n\
         import assert from 'node:assert';\n\
         \n\
         for (const module of [{}]) {{\n\
         \x20 try {{\n\
         \x20   await import(new URL(module, import.meta.url));\n\
         \x20 }} catch {{\n\
         \x20   // An import that fails is the suite's business.\n\
         \x20 }}\n\
         }}\n\
         \n\
         test('{}', () => {{ assert.strictEqual(1, 2); }});\n\
         test('{}', () => {{ assert.ok(false); }});\n\
         test('{}', () => {{ assert(1 === 2); }});\n\
         test('{}', () => {{ throw new Error('forgeloop tripwire: this test must fail'); }});\n\
         test('{}', () => {{ assert.strictEqual(2, 2); }});\n",
        paths.join(", "),
        NODE_MUST_FAIL[0],
        NODE_MUST_FAIL[1],
        NODE_MUST_FAIL[2],
        NODE_MUST_FAIL[3],
        NODE_MUST_PASS,
    )
}

/// How to run the Node tripwire `file`: `node --test` (the command's own `node` when it runs
/// one).
pub fn node_argv(command: &[String], file: &str) -> Vec<String> {
    let node = command.iter().find(|arg| base_name(arg) == "node").cloned().unwrap_or_else(|| "node".to_owned());
    vec![node, "--test".to_owned(), file.to_owned()]
}

/// Judges the tripwire's run: its results (through forgeloop's channel) and its exit code.
pub fn judge(results: &CommandResults, exit: Option<i32>) -> Tripwire {
    let node = results.tests.iter().any(|t| t.id.contains(" > "));
    let (must_fail, must_pass) =
        if node { (NODE_MUST_FAIL, NODE_MUST_PASS) } else { (PYTHON_MUST_FAIL, PYTHON_MUST_PASS) };
    let outcome = |name: &str| -> Option<Outcome> {
        results
            .tests
            .iter()
            .find(|t| {
                t.id.strip_suffix(name).is_some_and(|before| before.is_empty() || before.ends_with(['.', ':', ' ']))
            })
            .map(|t| t.outcome)
    };
    if results.counts.total() == 0 {
        return match exit {
            Some(0) => {
                tampered("the tripwire's run exited 0 and reported no test: it ended before its tests ran".into())
            }
            Some(code) => Tripwire::NotRun(format!("the tripwire reported no test (exit {code})")),
            None => Tripwire::NotRun("the tripwire did not finish".into()),
        };
    }
    let mut wrong: Vec<String> = Vec::new();
    let mut absent: Vec<String> = Vec::new();
    let mut due = 0u64;
    for name in must_fail {
        match outcome(name) {
            Some(Outcome::Failed | Outcome::Error) => due += 1,
            Some(Outcome::Passed | Outcome::Xpassed | Outcome::Xfailed) => wrong.push(format!("{name} passed")),
            Some(Outcome::Skipped) => absent.push(format!("{name} was skipped")),
            Some(Outcome::Unfinished) => absent.push(format!("{name} never finished")),
            None => absent.push(format!("{name} did not run")),
        }
    }
    match outcome(must_pass) {
        Some(Outcome::Passed) => {}
        Some(Outcome::Failed | Outcome::Error) => wrong.push(format!("{must_pass} failed")),
        Some(Outcome::Skipped) => absent.push(format!("{must_pass} was skipped")),
        Some(other) => wrong.push(format!("{must_pass} ended {}", other.as_str())),
        None => absent.push(format!("{must_pass} did not run")),
    }
    if !wrong.is_empty() {
        return tampered(wrong.join(", "));
    }
    if exit == Some(0) {
        if due > 0 {
            return tampered(format!("the run exited 0 though {due} tests failed"));
        }
        if !absent.is_empty() {
            return tampered(format!("the run exited 0 though {}", absent.join(", ")));
        }
    }
    match exit {
        None => Tripwire::NotRun("the tripwire did not finish".into()),
        _ if !absent.is_empty() => Tripwire::NotRun(format!("the tripwire did not run whole: {}", absent.join(", "))),
        _ => Tripwire::Faithful,
    }
}

fn tampered(why: String) -> Tripwire {
    Tripwire::Tampered(format!("the test framework does not report failures faithfully: {why}"))
}

#[cfg(test)]
mod tests {
    use super::super::collect::{Collector, Reported};
    use super::super::model::Runner;
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn results(tests: &[(&str, Outcome)]) -> CommandResults {
        let mut c = Collector::new();
        c.begin(Runner::Unittest);
        for (name, outcome) in tests {
            let id = format!("forgeloop_tripwire_test.ForgeloopTripwire.{name}");
            c.result(Runner::Unittest, &id, Reported::Outcome(*outcome));
        }
        c.end(Runner::Unittest);
        c.finish(0, vec![])
    }

    fn faithful() -> Vec<(&'static str, Outcome)> {
        let mut tests: Vec<(&str, Outcome)> = PYTHON_MUST_FAIL.iter().map(|n| (*n, Outcome::Failed)).collect();
        tests.push((PYTHON_MUST_PASS, Outcome::Passed));
        tests
    }

    #[test]
    fn the_file_imports_only_module_names() {
        let text = python_file(&strings(&["mathx", "pkg.util", "evil\"]; import os; os._exit(0) #", "a-b"]));
        assert!(text.contains("for _forgeloop_module in [\"mathx\", \"pkg.util\"]:"), "{text}");
        assert!(!text.contains("evil"));
        for name in PYTHON_MUST_FAIL.iter().chain([&PYTHON_MUST_PASS]) {
            assert!(text.contains(&format!("def {name}(self):")));
        }
        assert!(text.contains("except Exception:"));
    }

    #[test]
    fn changed_paths_become_modules() {
        let changed = strings(&[
            "mathx.py",
            "pkg/__init__.py",
            "pkg/util.py",
            "src/lib/core.py",
            "tests/test_mathx.py",
            "test_x.py",
            "conftest.py",
            "setup.py",
            "scripts/run.py",
            "README.md",
            "my-tool/x.py",
        ]);
        assert_eq!(python_modules(&changed), strings(&["mathx", "pkg", "pkg.util", "lib.core"]));
    }

    #[test]
    fn argv_follows_the_commands_runner() {
        let f = PYTHON_FILE;
        assert_eq!(
            python_argv(&strings(&["python3", "-m", "pytest", "-x", "tests"]), f).unwrap(),
            strings(&["python3", "-m", "pytest", f, "-p", "no:cacheprovider", "--maxfail=1000"])
        );
        assert_eq!(
            python_argv(&strings(&[".venv/bin/python", "-m", "unittest", "discover"]), f).unwrap(),
            strings(&[".venv/bin/python", "-m", "unittest", "-v", f])
        );
        assert_eq!(
            python_argv(&strings(&["uv", "run", "pytest", "-q"]), f).unwrap(),
            strings(&["uv", "run", "pytest", f, "-p", "no:cacheprovider", "--maxfail=1000"])
        );
        assert_eq!(
            python_argv(&strings(&["python3.12", "runtests.py"]), f).unwrap(),
            strings(&["python3.12", "-m", "unittest", "-v", f])
        );
        assert_eq!(python_argv(&strings(&["cargo", "test"]), f), None);
        assert_eq!(node_argv(&strings(&["npm", "test"]), NODE_FILE), strings(&["node", "--test", NODE_FILE]));
    }

    #[test]
    fn node_file_imports_only_plain_relative_paths() {
        let text = node_file(&strings(&["lib/x.js", "../etc/passwd.js", "a\";process.exit(0)//.js", "b.mjs", "c.ts"]));
        assert!(text.contains("for (const module of [\"./lib/x.js\", \"./b.mjs\"])"), "{text}");
        for name in NODE_MUST_FAIL.iter().chain([&NODE_MUST_PASS]) {
            assert!(text.contains(&format!("test('{name}'")));
        }
    }

    #[test]
    fn a_faithful_framework() {
        assert_eq!(judge(&results(&faithful()), Some(1)), Tripwire::Faithful);
    }

    #[test]
    fn a_must_fail_test_that_passes_is_tampering() {
        let mut tests = faithful();
        tests[0].1 = Outcome::Passed;
        let Tripwire::Tampered(why) = judge(&results(&tests), Some(1)) else { panic!() };
        assert!(why.starts_with("the test framework does not report failures faithfully: "), "{why}");
        assert!(why.contains("test_must_fail_assert_equal passed"), "{why}");
    }

    #[test]
    fn a_must_pass_test_that_fails_is_tampering() {
        let mut tests = faithful();
        tests[4].1 = Outcome::Failed;
        assert!(
            matches!(judge(&results(&tests), Some(1)), Tripwire::Tampered(why) if why.contains("test_must_pass failed"))
        );
    }

    #[test]
    fn exit_0_while_failures_were_due_is_tampering() {
        let Tripwire::Tampered(why) = judge(&results(&faithful()), Some(0)) else { panic!() };
        assert!(why.contains("exited 0 though 4 tests failed"), "{why}");
        // Nothing reported and exit 0: the process ended before the tests.
        assert!(matches!(judge(&CommandResults::empty(0, vec![]), Some(0)), Tripwire::Tampered(_)));
    }

    #[test]
    fn a_tripwire_that_could_not_run_says_so() {
        assert!(matches!(judge(&CommandResults::empty(0, vec![]), Some(2)), Tripwire::NotRun(_)));
        assert!(matches!(judge(&results(&faithful()), None), Tripwire::NotRun(_)));
        let skipped: Vec<(&str, Outcome)> = faithful().into_iter().map(|(n, _)| (n, Outcome::Skipped)).collect();
        assert!(matches!(judge(&results(&skipped), Some(1)), Tripwire::NotRun(_)));
    }
}
