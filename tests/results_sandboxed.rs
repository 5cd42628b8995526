//! The test results channel inside the real sandbox (issue 57, design §5.6): the support
//! directory is shown read-only at its own path, each test command's results directory lies
//! in the run's private `/tmp` as the command sees it, and Debian's own `python3` (whose
//! `sitecustomize` forgeloop's shadows and chains to) records its unittest results there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::{Path, PathBuf};
use std::time::Duration;

use forgeloop::domain::commands::parse_commands;
use forgeloop::domain::egress::NetworkMode;
use forgeloop::domain::report::TestStatus;
use forgeloop::domain::test_results::{Finding, Outcome, RunResults, Runner, judge};
use forgeloop::redact::Redactor;
use forgeloop::runner::{RunOutcome, RunRequest, run_with_results};
use forgeloop::sandbox::{self, RunDir, Settings};

const MATHX: &str = "def mul(a, b):\n    return a * b\n";
const TESTS: &str = "import unittest\n\nimport mathx\n\n\nclass TestMathx(unittest.TestCase):\n\
    \x20   def test_mul(self):\n        self.assertEqual(mathx.mul(2, 3), 6)\n\n\
    \x20   def test_support_is_read_only(self):\n\
    \x20       import forgeloop_results, os\n\
    \x20       with self.assertRaises(OSError):\n\
    \x20           open(os.path.join(os.path.dirname(forgeloop_results.__file__), 'planted'), 'w')\n";

/// The interpreter: Debian's, whose `sitecustomize` is shadowed, where there is one.
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" }
}

/// Runs `json` in the sandbox over a checkout holding `files`.
async fn run(home: &Path, files: &[(&str, &str)], json: &str) -> (RunOutcome, RunResults) {
    let profile = parse_commands(json).unwrap();
    let parent = forgeloop::runner::process_env();
    let mut settings = Settings::new(home.join("run"));
    settings.helper = PathBuf::from(env!("CARGO_BIN_EXE_forgeloop-sandbox"));
    let plan = sandbox::prepare(&settings, &profile, NetworkMode::Off, &parent, &[])
        .unwrap_or_else(|err| panic!("no sandbox here: {err}"));
    let run_dir = RunDir::create(&settings.run_root).unwrap();
    let checkout = run_dir.path().join("checkout");
    std::fs::create_dir(&checkout).unwrap();
    for (path, text) in files {
        std::fs::write(checkout.join(path), text).unwrap();
    }
    let paths = run_dir.paths(&checkout, None);
    if let Some(account) = plan.run_as() {
        run_dir.hand_over(&paths, account).unwrap();
    }
    let log_path = home.join("run.log");
    let redactor = Redactor::default();
    let mut req = RunRequest::new(&checkout, &profile, &log_path, &redactor, &parent);
    req.kill_grace = Duration::from_secs(1);
    req.sandbox = Some((&plan, &paths));
    let ran = tokio::time::timeout(Duration::from_secs(300), run_with_results(req)).await.unwrap().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(!log.is_empty());
    ran
}

#[tokio::test]
async fn results_are_recorded_inside_the_sandbox_and_held_when_missing() {
    let home = tempfile::tempdir().unwrap();
    let json = serde_json::to_string(&[[python(), "-m", "unittest", "-v"]]).unwrap();
    let files = [("mathx.py", MATHX), ("test_mathx.py", TESTS)];
    let (outcome, base) = run(home.path(), &files, &json).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", std::fs::read_to_string(home.path().join("run.log")).unwrap());
    let results = &base.commands[0];
    assert_eq!(results.runners, vec![Runner::Unittest]);
    assert_eq!(results.test("test_mathx.TestMathx.test_mul").unwrap().outcome, Outcome::Passed);
    assert_eq!(results.test("test_mathx.TestMathx.test_support_is_read_only").unwrap().outcome, Outcome::Passed);
    assert_eq!(results.processes.unended(), 0);

    let exits_early = format!("import os\n\nos._exit(0)\n{MATHX}");
    let (outcome, merge) = run(home.path(), &[("mathx.py", &exits_early), ("test_mathx.py", TESTS)], &json).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    let evidence = judge(Some(&base), &merge, &[outcome.commands[0].exit_code]);
    assert!(!evidence.stands);
    assert_eq!(evidence.findings, vec![Finding::NothingReported]);
}
