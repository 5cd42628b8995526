//! Python's own per-test results through forgeloop's recorders (issue 57), on real `python3`
//! processes: an honest unittest suite is itemised and its pass stands; code under test that
//! ends the process with exit 0 — at import, from an atexit hook after a failure, only on the
//! failing input — no longer passes unseen; the tripwire catches a monkeypatched
//! `assertEqual`; and the recorder changes nothing a suite can see (the shadowed
//! `sitecustomize` still runs, a suite a test runs itself is not the command's). With pytest
//! (a virtual environment named by `FORGELOOP_TEST_PYTEST`, or `target/pytest-venv`), the same
//! through the plugin.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod results_support;

use forgeloop::domain::report::TestStatus;
use forgeloop::domain::test_results::tripwire::{self, Tripwire};
use forgeloop::domain::test_results::{Finding, Outcome, Runner, Why};
use results_support::{Project, exits, judged};

const UNITTEST: &str = r#"[["python3", "-m", "unittest", "-v"]]"#;

const MATHX: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";

const TESTS: &str = "import unittest\n\nimport mathx\n\n\nclass TestMathx(unittest.TestCase):\n\
    \x20   def test_add(self):\n        self.assertEqual(mathx.add(2, 3), 5)\n\n\
    \x20   def test_mul_big(self):\n        self.assertEqual(mathx.mul(1000, 3), 3000)\n\n\
    \x20   def test_mul_small(self):\n        self.assertEqual(mathx.mul(2, 3), 6)\n";

fn project() -> Project {
    Project::new(&[("mathx.py", MATHX), ("test_mathx.py", TESTS)])
}

#[tokio::test]
async fn an_honest_suite_is_itemised_and_stands() {
    let p = project();
    let (outcome, merge, evidence) =
        judged(&p, UNITTEST, |p| p.write("mathx.py", &format!("{MATHX}\n# a refactor\nSCALE = 1\n"))).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    let results = &merge.commands[0];
    assert_eq!(results.runners, vec![Runner::Unittest]);
    assert_eq!(results.counts.passed, 3);
    assert_eq!((results.processes.begun, results.processes.ended), (1, 1));
    assert!(results.test("test_mathx.TestMathx.test_mul_big").is_some(), "{:?}", results.tests);
    assert!(evidence.stands, "{evidence:?}");
    assert_eq!(evidence.summary, "3 of 3 tests ran and passed (the base ran 3)");
}

#[tokio::test]
async fn exit_0_at_import_reports_nothing_and_is_held() {
    let p = project();
    let (outcome, merge, evidence) =
        judged(&p, UNITTEST, |p| p.write("mathx.py", &format!("import os\n\nos._exit(0)\n{MATHX}"))).await;
    // The exit code alone says the run passed.
    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(!merge.commands[0].itemised(), "{:?}", merge.commands[0]);
    assert!(!evidence.stands);
    assert_eq!(evidence.findings, vec![Finding::NothingReported]);
    assert!(evidence.summary.contains("reported no test results (the base reported 3 tests)"), "{}", evidence.summary);
}

#[tokio::test]
async fn an_atexit_exit_0_after_a_failure_disagrees() {
    let p = project();
    let broken = "import atexit\nimport os\n\natexit.register(lambda: os._exit(0))\n\n\n\
                  def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b + 1\n";
    let (outcome, merge, evidence) = judged(&p, UNITTEST, |p| p.write("mathx.py", broken)).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    assert_eq!(merge.commands[0].counts.failed, 2);
    assert!(!evidence.stands);
    assert!(evidence.findings.contains(&Finding::Disagrees), "{evidence:?}");
    assert!(
        evidence.summary.starts_with(
            "the run exited 0 but reported 2 failures: test_mathx.TestMathx.test_mul_big, test_mathx.TestMathx.test_mul_small"
        ),
        "{}",
        evidence.summary
    );
}

#[tokio::test]
async fn exit_0_only_on_the_failing_input_leaves_a_test_unfinished() {
    let p = project();
    let special = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\n\
                   def mul(a, b):\n    if (a, b) == (1000, 3):\n        os._exit(0)\n    return a * b\n";
    let (outcome, merge, evidence) = judged(&p, UNITTEST, |p| p.write("mathx.py", special)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    let results = &merge.commands[0];
    assert_eq!(results.test("test_mathx.TestMathx.test_mul_big").unwrap().outcome, Outcome::Unfinished);
    assert_eq!(results.processes.unended(), 1);
    assert!(!evidence.stands);
    assert!(evidence.findings.contains(&Finding::EndedEarly) && evidence.findings.contains(&Finding::DidNotRun));
    assert!(
        evidence.summary.contains(
            "test_mathx.TestMathx.test_mul_small (not run), test_mathx.TestMathx.test_mul_big (started, never finished)"
        ),
        "{}",
        evidence.summary
    );
    assert!(evidence.named.iter().any(|n| n.why == Why::Unfinished));
}

/// Runs the tripwire for `modules` the way the lead's use case does: its file at the
/// checkout's root, run with the command's runner through the same channel.
async fn tripwire(p: &Project, command: &[&str], modules: &[&str]) -> Tripwire {
    let modules: Vec<String> = modules.iter().map(|m| m.to_string()).collect();
    p.write(tripwire::PYTHON_FILE, &tripwire::python_file(&modules));
    let command: Vec<String> = command.iter().map(|a| a.to_string()).collect();
    let argv = tripwire::python_argv(&command, tripwire::PYTHON_FILE).unwrap();
    let (outcome, results) = p.run(&serde_json::to_string(&[argv]).unwrap()).await;
    p.remove(tripwire::PYTHON_FILE);
    tripwire::judge(&results.commands[0], outcome.commands[0].exit_code)
}

#[tokio::test]
async fn a_monkeypatched_assert_equal_passes_the_suite_and_trips_the_tripwire() {
    let p = project();
    let tampered = "import unittest\n\nunittest.TestCase.assertEqual = lambda self, first, second, msg=None: None\n\n\n\
                    def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return 0\n";
    let (outcome, _, evidence) = judged(&p, UNITTEST, |p| p.write("mathx.py", tampered)).await;
    // The person's suite passes: its assertions no longer assert.
    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(evidence.stands, "{evidence:?}");
    let verdict = tripwire(&p, &["python3", "-m", "unittest", "-v"], &["mathx"]).await;
    let Tripwire::Tampered(why) = verdict else { panic!("{verdict:?}") };
    assert!(why.starts_with("the test framework does not report failures faithfully"), "{why}");
    assert!(why.contains("test_must_fail_assert_equal passed"), "{why}");
}

#[tokio::test]
async fn the_tripwire_is_faithful_for_honest_code_and_catches_an_atexit_exit_0() {
    let p = project();
    assert_eq!(tripwire(&p, &["python3", "-m", "unittest"], &["mathx"]).await, Tripwire::Faithful);
    p.write("mathx.py", &format!("import atexit\nimport os\n\natexit.register(lambda: os._exit(0))\n{MATHX}"));
    let verdict = tripwire(&p, &["python3", "-m", "unittest"], &["mathx"]).await;
    assert!(
        matches!(&verdict, Tripwire::Tampered(why) if why.contains("exited 0 though 4 tests failed")),
        "{verdict:?}"
    );
    p.write("mathx.py", &format!("import os\n\nos._exit(0)\n{MATHX}"));
    let verdict = tripwire(&p, &["python3", "-m", "unittest"], &["mathx"]).await;
    assert!(matches!(&verdict, Tripwire::Tampered(why) if why.contains("reported no test")), "{verdict:?}");
}

#[tokio::test]
async fn the_shadowed_sitecustomize_still_runs() {
    let p = project();
    p.write("shadowed/sitecustomize.py", "import builtins\n\nbuiltins.FORGELOOP_CHAINED = True\n");
    p.write(
        "test_chain.py",
        "import builtins\nimport unittest\n\n\nclass TestChain(unittest.TestCase):\n\
         \x20   def test_chained(self):\n        self.assertTrue(getattr(builtins, 'FORGELOOP_CHAINED', False))\n",
    );
    let json = r#"{"commands": [{"argv": ["python3", "-m", "unittest", "-v"], "env": {"PYTHONPATH": "shadowed"}}]}"#;
    let (outcome, results) = p.run(json).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(1));
    assert_eq!(results.commands[0].test("test_chain.TestChain.test_chained").unwrap().outcome, Outcome::Passed);
}

#[tokio::test]
async fn a_suite_a_test_runs_itself_is_not_the_commands() {
    let p = project();
    p.write(
        "inner_fail.py",
        "import unittest\n\n\nclass Inner(unittest.TestCase):\n    def test_inner(self):\n        self.fail('inner')\n",
    );
    p.write(
        "test_runner_tests.py",
        "import subprocess\nimport sys\nimport unittest\n\nimport inner_fail\n\n\n\
         class TestRunners(unittest.TestCase):\n\
         \x20   def test_runs_a_suite_in_process(self):\n\
         \x20       result = unittest.TestResult()\n\
         \x20       unittest.defaultTestLoader.loadTestsFromTestCase(inner_fail.Inner).run(result)\n\
         \x20       self.assertEqual(len(result.failures), 1)\n\n\
         \x20   def test_runs_a_suite_in_a_process(self):\n\
         \x20       done = subprocess.run([sys.executable, '-m', 'unittest', 'inner_fail'], capture_output=True)\n\
         \x20       self.assertNotEqual(done.returncode, 0)\n",
    );
    let (outcome, merge, evidence) = judged(&p, UNITTEST, |_| {}).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    let results = &merge.commands[0];
    assert_eq!(results.counts.total(), 5, "{:?}", results.tests);
    assert!(results.tests.iter().all(|t| !t.id.contains("inner_fail")), "{:?}", results.tests);
    assert!(evidence.stands, "{evidence:?}");
}

#[tokio::test]
async fn setup_commands_are_not_tests_and_results_follow_the_test_commands() {
    let p = project();
    let json = r#"{"setup": [["python3", "-m", "unittest", "-v"]], "commands": [["python3", "-c", "print(1)"], ["python3", "-m", "unittest"]]}"#;
    let (outcome, results) = p.run(json).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    assert_eq!(results.commands.len(), 2);
    assert_eq!(results.commands[0].command, 0);
    assert!(!results.commands[0].itemised());
    assert_eq!(results.commands[1].command, 1);
    assert_eq!(results.commands[1].counts.passed, 3);
    // A failing first command leaves the second not run.
    let (outcome, results) =
        p.run(r#"[["python3", "-c", "raise SystemExit(3)"], ["python3", "-m", "unittest"]]"#).await;
    assert_eq!(exits(&outcome)[0], Some(3));
    assert!(results.commands[1].not_run);
}

// --- pytest --------------------------------------------------------------------------------

/// A Python with pytest installed: `FORGELOOP_TEST_PYTEST`, else `target/pytest-venv/bin/python`.
/// CI must provide one (the test fails there without it); elsewhere the pytest tests say they
/// are skipped.
fn pytest_python() -> Option<String> {
    let candidate = std::env::var("FORGELOOP_TEST_PYTEST")
        .ok()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/target/pytest-venv/bin/python").to_owned());
    let works =
        std::process::Command::new(&candidate).args(["-c", "import pytest"]).status().is_ok_and(|s| s.success());
    if works {
        return Some(candidate);
    }
    assert!(
        std::env::var("CI").is_err(),
        "CI runs the pytest tests: create {candidate} (python3 -m venv target/pytest-venv && target/pytest-venv/bin/pip install pytest) or set FORGELOOP_TEST_PYTEST"
    );
    eprintln!("skipped: no Python with pytest at {candidate}");
    None
}

const PYTEST_TESTS: &str = "import pytest\n\nimport mathx\n\n\nclass Box:\n    pass\n\n\n\
    def test_add():\n    assert mathx.add(2, 3) == 5\n\n\n\
    def test_mul_big():\n    assert mathx.mul(1000, 3) == 3000\n\n\n\
    @pytest.mark.xfail(reason='known')\ndef test_known_bug():\n    assert mathx.add(1, 1) == 3\n\n\n\
    @pytest.mark.parametrize('box', [Box()], ids=repr)\ndef test_param(box):\n    assert box is not None\n";

fn pytest_project() -> Project {
    Project::new(&[("mathx.py", MATHX), ("tests/test_mathx.py", PYTEST_TESTS)])
}

#[tokio::test]
async fn pytest_an_honest_suite_stands_with_xfail_and_changing_parametrised_ids() {
    let Some(python) = pytest_python() else { return };
    let p = pytest_project();
    let json = serde_json::to_string(&[[python.as_str(), "-m", "pytest", "-p", "no:cacheprovider"]]).unwrap();
    let (outcome, merge, evidence) = judged(&p, &json, |_| {}).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    let results = &merge.commands[0];
    assert_eq!(results.runners, vec![Runner::Pytest]);
    assert_eq!(results.test("tests/test_mathx.py::test_known_bug").unwrap().outcome, Outcome::Xfailed);
    assert!(results.tests.iter().any(|t| t.id.contains("0x…")), "{:?}", results.tests);
    assert!(evidence.stands, "{evidence:?}");
    assert_eq!(evidence.summary, "4 of 4 tests ran and passed (the base ran 4)");
}

#[tokio::test]
async fn pytest_an_atexit_exit_0_after_a_failure_disagrees_and_trips_the_tripwire() {
    let Some(python) = pytest_python() else { return };
    let p = pytest_project();
    let command = [python.as_str(), "-m", "pytest", "-p", "no:cacheprovider"];
    let json = serde_json::to_string(&[command]).unwrap();
    let broken = "import atexit\nimport os\n\natexit.register(lambda: os._exit(0))\n\n\n\
                  def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return 0\n";
    let (outcome, merge, evidence) = judged(&p, &json, |p| p.write("mathx.py", broken)).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    assert_eq!(merge.commands[0].runner_exit, Some(1));
    assert!(evidence.findings.contains(&Finding::Disagrees), "{evidence:?}");
    assert!(evidence.summary.contains("tests/test_mathx.py::test_mul_big"), "{}", evidence.summary);
    let verdict = tripwire(&p, &command, &["mathx"]).await;
    assert!(matches!(&verdict, Tripwire::Tampered(_)), "{verdict:?}");
}

#[tokio::test]
async fn pytest_a_first_failure_stop_is_recorded() {
    let Some(python) = pytest_python() else { return };
    let p = pytest_project();
    p.write("mathx.py", "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n");
    let json = serde_json::to_string(&[[python.as_str(), "-m", "pytest", "-x", "-p", "no:cacheprovider"]]).unwrap();
    let (outcome, results) = p.run(&json).await;
    assert_eq!(outcome.status, TestStatus::Failed);
    let results = &results.commands[0];
    assert_eq!(results.stopped_early.as_deref(), Some("stopping after 1 failures"));
    assert_eq!(results.counts.total(), 1);
    assert_eq!(tripwire(&p, &[python.as_str(), "-m", "pytest", "-x"], &["mathx"]).await, Tripwire::Faithful);
}
