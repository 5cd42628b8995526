//! The emulator's CI worker (the demo's stand-in for GitHub Actions, design §5.7): a failing
//! PR head gets a completed `failure` check run named `test` on exactly that SHA, with a job
//! log in GitHub Actions' format holding the failing output; a fixing push gets `success` on
//! its new SHA; a SHA is never run twice; a stop cancels a running job promptly. Real emulator
//! over HTTP on 127.0.0.1, real git repositories, real sandboxed processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply
#![cfg(all(feature = "demo", target_os = "linux"))]

mod github_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgeloop::demo::ci_worker::{CiConfig, CiRun, CiWorker};
use github_emulator::{Emulator, EmulatorConfig, RepoHandle};
use serde_json::Value;
use tokio::sync::watch;

const TEST_SH: &str = "#!/bin/sh\necho \"token in output: $(cat secret.txt)\"\nout=$(sh calc.sh 2 3)\nif [ \"$out\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $out\"; exit 1; fi\n";
const CALC_BUGGY: &str = "echo $(($1 - $2))\n";
const CALC_FIXED: &str = "echo $(($1 + $2))\n";

/// A GitHub-shaped token made at run time (every redaction rule applies to it).
fn fresh_token() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let mut state = nanos as u64 ^ (u64::from(std::process::id()) << 32);
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut out = String::from("ghp_");
    for _ in 0..36 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        out.push(alphabet[(state >> 33) as usize % alphabet.len()] as char);
    }
    out
}

struct World {
    dir: tempfile::TempDir,
    emulator: Arc<Emulator>,
    token: String,
    repo: RepoHandle,
}

impl World {
    /// The emulator with `acme/calc`: the test on `main`, the buggy calculator on `fix`, PR #1.
    async fn new(test_sh: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        let token = fresh_token();
        let emulator = Emulator::start(EmulatorConfig {
            root: dir.path().join("emulator"),
            token: Some(token.clone()),
            login: "acme".into(),
            admin_secret: None,
        })
        .await
        .unwrap();
        let repo = emulator.create_repo("acme", "calc", true).await.unwrap();
        emulator
            .commit_files(
                &repo,
                "main",
                &[("test.sh", test_sh), ("calc.sh", CALC_BUGGY), ("secret.txt", &token)],
                "project",
            )
            .await
            .unwrap();
        emulator.commit_files(&repo, "fix", &[("README.md", "# calc\n")], "fix: a start").await.unwrap();
        assert_eq!(emulator.open_pr(&repo, "fix", "main", "Fix").await.unwrap(), 1);
        World { dir, emulator: Arc::new(emulator), token, repo }
    }

    /// A worker on `acme/calc` in forgeloop's sandbox (its helper is `forgeloop-sandbox`, as
    /// beside an installed forgeloop; here `/proc/self/exe` is the test binary), with the
    /// emulator token in its redactor.
    fn config(&self) -> CiConfig {
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut ctx = forgeloop::cycle::Ctx::for_home(home);
        ctx.sandbox.helper = PathBuf::from(env!("CARGO_BIN_EXE_forgeloop-sandbox"));
        ctx.redactor = forgeloop::cycle::context::process_redactor(Some(&self.token));
        let mut config = CiConfig::from_ctx(&ctx, vec![self.repo.repo.clone()], self.dir.path().join("ci-mirrors"));
        config.poll_interval = Duration::from_millis(20);
        config
    }

    fn head(&self, number: u64) -> String {
        self.emulator.pr_head(&self.repo, number).unwrap()
    }

    /// An authenticated GET on the emulator's API; the status, the `Location` header and the body.
    async fn get(&self, path: &str) -> (u16, Option<String>, String) {
        get(self.emulator.addr().port(), Some(&self.token), path).await
    }

    async fn check_runs(&self, sha: &str) -> Vec<Value> {
        let (status, _, body) = self.get(&format!("/repos/acme/calc/commits/{sha}/check-runs?filter=all")).await;
        assert_eq!(status, 200, "{body}");
        let json: Value = serde_json::from_str(&body).unwrap();
        json["check_runs"].as_array().unwrap().clone()
    }

    /// The job's log as a client reads it: the API redirects to the log host, which needs no token.
    async fn job_log(&self, job_id: u64) -> String {
        let (status, location, body) = self.get(&format!("/repos/acme/calc/actions/jobs/{job_id}/logs")).await;
        assert_eq!(status, 302, "{body}");
        let location = location.unwrap();
        let rest = location.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, path) = rest.split_at(rest.find('/').unwrap());
        let (status, _, body) = get(port.parse().unwrap(), None, path).await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

async fn get(port: u16, token: Option<&str>, path: &str) -> (u16, Option<String>, String) {
    let answer = github_support::get_raw(port, token, path, &[]).await;
    (answer.status, answer.headers.get("location").cloned(), answer.body)
}

/// Waits until the worker's run for `sha` has completed.
async fn completed(worker: &CiWorker, sha: &str) -> CiRun {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(run) = worker.runs().into_iter().find(|r| r.head_sha == sha && r.conclusion.is_some()) {
            return run;
        }
        assert!(Instant::now() < deadline, "no completed run for {sha}: {:?} {:?}", worker.runs(), worker.errors());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the worker has started a run for `sha`.
async fn started(worker: &CiWorker, sha: &str) -> CiRun {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(run) = worker.runs().into_iter().find(|r| r.head_sha == sha) {
            return run;
        }
        assert!(Instant::now() < deadline, "no run for {sha}: {:?}", worker.errors());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_head_fails_its_check_a_fix_passes_and_no_sha_runs_twice() {
    let world = World::new(TEST_SH).await;
    let mut config = world.config();
    config.queue_delay = Duration::from_millis(400);
    let (_stop_tx, stop_rx) = watch::channel(false);
    let worker = CiWorker::start(world.emulator.clone(), config, stop_rx).await.unwrap();

    // The buggy head: queued first, then a completed failure on exactly that SHA.
    let first = world.head(1);
    let run = started(&worker, &first).await;
    let checks = world.check_runs(&first).await;
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!((checks[0]["name"].as_str(), checks[0]["status"].as_str()), (Some("test"), Some("queued")));
    let run_json = world.get(&format!("/repos/acme/calc/actions/runs/{}", run.run_id)).await.2;
    let run_json: Value = serde_json::from_str(&run_json).unwrap();
    assert_eq!((run_json["name"].as_str(), run_json["event"].as_str()), (Some("CI"), Some("pull_request")));
    assert_eq!(run_json["head_sha"].as_str(), Some(first.as_str()));

    let run = completed(&worker, &first).await;
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    let checks = world.check_runs(&first).await;
    assert_eq!(checks.len(), 1, "{checks:?}");
    let check = &checks[0];
    assert_eq!(check["name"], "test");
    assert_eq!(check["status"], "completed");
    assert_eq!(check["conclusion"], "failure");
    assert_eq!(check["id"].as_u64(), Some(run.job_id));
    assert_eq!(check["head_sha"].as_str().unwrap_or(&first), first);

    let log = world.job_log(run.job_id).await;
    let stamp = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ").unwrap();
    assert!(log.lines().all(|line| stamp.is_match(line)), "{log}");
    let bodies: Vec<&str> = log.lines().map(|line| &line[29..]).collect();
    let group = bodies.iter().position(|l| *l == "##[group]Run sh test.sh").unwrap_or_else(|| panic!("{log}"));
    assert!(bodies[group..].contains(&"##[endgroup]"), "{log}");
    assert!(bodies.contains(&"not ok - expected 5, got -1"), "{log}");
    assert!(bodies.contains(&"##[error]Process completed with exit code 1."), "{log}");
    assert!(bodies.contains(&format!("Checked out {first} (pull request #1)").as_str()), "{log}");
    assert!(!log.contains(&world.token), "the job log holds the token:\n{log}");
    assert!(bodies.iter().any(|l| l.starts_with("token in output: ") && l.len() > "token in output: ".len()), "{log}");
    let steps: Vec<_> = run.steps.iter().map(|s| (s.name.as_str(), s.conclusion.as_deref())).collect();
    assert_eq!(
        steps,
        [("Set up job", Some("success")), ("Run sh test.sh", Some("failure")), ("Complete job", Some("skipped"))]
    );

    // The fix: a new head, a success on it; the old SHA keeps its one run.
    let second = world
        .emulator
        .commit_files(&world.repo, "fix", &[("calc.sh", CALC_FIXED)], "fix: add, not subtract")
        .await
        .unwrap();
    assert_eq!(world.head(1), second);
    let run = completed(&worker, &second).await;
    assert_eq!(run.conclusion.as_deref(), Some("success"));
    let checks = world.check_runs(&second).await;
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!((checks[0]["name"].as_str(), checks[0]["conclusion"].as_str()), (Some("test"), Some("success")));
    let log = world.job_log(run.job_id).await;
    assert!(log.contains(" ok - 2+3=5\n") && !log.contains("##[error]"), "{log}");

    // A second PR on the same head, and more polls: nothing runs again.
    let bare = world.emulator.repo_dir(&world.repo).unwrap();
    let status = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&bare)
        .args(["branch", "again", &second])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(world.emulator.open_pr(&world.repo, "again", "main", "Again").await.unwrap(), 2);
    assert_eq!(world.head(2), second);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(world.check_runs(&first).await.len(), 1);
    assert_eq!(world.check_runs(&second).await.len(), 1);

    let summary = worker.stop().await;
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    let shas: Vec<&str> = summary.runs.iter().map(|r| r.head_sha.as_str()).collect();
    assert_eq!(shas, [first.as_str(), second.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_cancels_a_running_job_promptly() {
    let world = World::new("#!/bin/sh\necho started\nsleep 60\n").await;
    let mut config = world.config();
    config.run_delay = Duration::from_secs(60);
    let (stop_tx, stop_rx) = watch::channel(false);
    let worker = CiWorker::start(world.emulator.clone(), config, stop_rx).await.unwrap();
    let sha = world.head(1);
    let run = started(&worker, &sha).await;
    // Running (in progress) before the stop.
    let deadline = Instant::now() + Duration::from_secs(30);
    while world.check_runs(&sha).await[0]["status"] != "in_progress" {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Long enough for the job's first line on a loaded machine (the sandbox starts in ms).
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // The demo's stop signal ends it.
    let asked = Instant::now();
    stop_tx.send(true).unwrap();
    let run = completed(&worker, &run.head_sha).await;
    assert!(asked.elapsed() < Duration::from_secs(10), "{:?}", asked.elapsed());
    assert_eq!(run.conclusion.as_deref(), Some("cancelled"));
    let checks = world.check_runs(&sha).await;
    assert_eq!(
        (checks[0]["status"].as_str(), checks[0]["conclusion"].as_str()),
        (Some("completed"), Some("cancelled"))
    );
    let log = world.job_log(run.job_id).await;
    assert!(log.contains(" started\n") && log.contains("##[error]The operation was canceled."), "{log}");
    let summary = worker.stop().await;
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    assert_eq!(summary.runs.len(), 1);
}
