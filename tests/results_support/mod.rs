//! Shared fixture for the test results tests (issue 57): a project in a temporary checkout,
//! run through the real runner without a sandbox but with a run directory (`RunDir`: `tmp`,
//! `home`, and the support directory the runner fills), so the recorders, the results
//! directories and the output parsers are the ones a sandboxed run uses.
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use forgeloop::domain::commands::parse_commands;
use forgeloop::domain::test_results::{Evidence, RunResults, judge};
use forgeloop::redact::Redactor;
use forgeloop::runner::{RunOutcome, RunRequest, run_with_results};
use forgeloop::sandbox::RunDir;

/// A generous guard so that a hang fails the test instead of blocking the suite; not a timing
/// assertion.
pub const HANG_GUARD: Duration = Duration::from_secs(300);

pub struct Project {
    pub dir: tempfile::TempDir,
    pub checkout: PathBuf,
    pub run_root: PathBuf,
    pub parent_env: BTreeMap<String, String>,
    runs: std::cell::Cell<u32>,
}

impl Project {
    pub fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("checkout");
        std::fs::create_dir(&checkout).unwrap();
        let run_root = dir.path().join("run");
        let mut parent_env = BTreeMap::new();
        parent_env.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()));
        parent_env.insert("HOME".to_owned(), dir.path().display().to_string());
        parent_env.insert("LC_ALL".to_owned(), "C.UTF-8".to_owned());
        for name in ["PYENV_ROOT", "PYENV_VERSION", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"] {
            if let Ok(value) = std::env::var(name) {
                parent_env.insert(name.to_owned(), value);
            }
        }
        let project = Project { dir, checkout, run_root, parent_env, runs: std::cell::Cell::new(0) };
        for (path, text) in files {
            project.write(path, text);
        }
        project
    }

    pub fn write(&self, path: &str, text: &str) {
        let path = self.checkout.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.checkout.join(path)).unwrap();
    }

    /// Runs the commands file `json` in the checkout, in a fresh run directory.
    pub async fn run(&self, json: &str) -> (RunOutcome, RunResults) {
        let profile = parse_commands(json).unwrap();
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let log_path = self.dir.path().join(format!("runs/{n}.log"));
        let run_dir = RunDir::create(&self.run_root).unwrap();
        let paths = run_dir.paths(&self.checkout, None);
        let redactor = Redactor::default();
        let mut req = RunRequest::new(&self.checkout, &profile, &log_path, &redactor, &self.parent_env);
        req.kill_grace = Duration::from_secs(1);
        req.results_paths = Some(&paths);
        let ran = tokio::time::timeout(HANG_GUARD, run_with_results(req)).await.expect("the run hung").unwrap();
        // The support directory was made beside the run's tmp, and goes with the run.
        assert!(
            paths.tmp.parent().unwrap().join(forgeloop::runner::SUPPORT_DIR).join("python/sitecustomize.py").is_file()
        );
        drop(run_dir);
        ran
    }

    pub fn log(&self, n: u32) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("runs/{n}.log"))).unwrap()
    }

    pub fn path(&self) -> &Path {
        &self.checkout
    }
}

/// The exit codes of a run's test commands, as the judgement takes them.
pub fn exits(outcome: &RunOutcome) -> Vec<Option<i32>> {
    outcome.commands.iter().map(|c| c.exit_code).collect()
}

/// Runs `json` at the base (the project as it is), applies `change`, runs it again (the
/// merge), and judges the merge against the base.
pub async fn judged(
    project: &Project,
    json: &str,
    change: impl FnOnce(&Project),
) -> (RunOutcome, RunResults, Evidence) {
    let (_, base) = project.run(json).await;
    change(project);
    let (outcome, merge) = project.run(json).await;
    let evidence = judge(Some(&base), &merge, &exits(&outcome));
    (outcome, merge, evidence)
}
