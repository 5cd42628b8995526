//! Shared fixture for the runner tests: a temporary checkout and log path, a small parent
//! environment, and helpers to look at real processes.
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::time::Duration;

use forgeloop::domain::commands::{CommandsProfile, parse_commands};
use forgeloop::redact::Redactor;
use forgeloop::runner::{RunOutcome, RunRequest, RunnerError, run};

/// A generous guard so that a hang fails the test instead of blocking the suite; not a timing
/// assertion.
pub const HANG_GUARD: Duration = Duration::from_secs(120);

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub checkout: PathBuf,
    pub log_path: PathBuf,
    pub parent_env: BTreeMap<String, String>,
    pub redactor: Redactor,
    pub log_cap_bytes: u64,
    pub kill_grace: Duration,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("checkout");
        std::fs::create_dir(&checkout).unwrap();
        let log_path = dir.path().join("runs").join("1-0123456789ab.log");
        let mut parent_env = BTreeMap::new();
        parent_env.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()));
        parent_env.insert("HOME".to_owned(), dir.path().display().to_string());
        parent_env.insert("LC_ALL".to_owned(), "C".to_owned());
        Fixture {
            dir,
            checkout,
            log_path,
            parent_env,
            redactor: Redactor::default(),
            log_cap_bytes: forgeloop::runner::DEFAULT_LOG_CAP,
            kill_grace: Duration::from_secs(1),
        }
    }

    pub fn request<'a>(&'a self, profile: &'a CommandsProfile) -> RunRequest<'a> {
        let mut req = RunRequest::new(&self.checkout, profile, &self.log_path, &self.redactor, &self.parent_env);
        req.log_cap_bytes = self.log_cap_bytes;
        req.kill_grace = self.kill_grace;
        req
    }

    pub async fn try_run(&self, profile: &CommandsProfile) -> Result<RunOutcome, RunnerError> {
        tokio::time::timeout(HANG_GUARD, run(self.request(profile))).await.expect("the run hung")
    }

    pub async fn run(&self, profile: &CommandsProfile) -> RunOutcome {
        self.try_run(profile).await.unwrap()
    }

    pub fn log(&self) -> String {
        String::from_utf8(std::fs::read(&self.log_path).unwrap()).expect("the log is always valid UTF-8")
    }
}

pub fn profile(json: &str) -> CommandsProfile {
    parse_commands(json).unwrap()
}

/// A fresh value that looks like a GitHub token, made at run time so no secret is committed.
pub fn generated_secret(prefix: &str) -> String {
    let mut out = String::from(prefix);
    while out.len() < prefix.len() + 36 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_usize(out.len());
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out.truncate(prefix.len() + 36);
    out
}

/// Whether `pid` is a running (not zombie) process. `kill -0` is not enough here: an orphan
/// killed in a container whose init does not reap stays a zombie that `kill -0` still finds.
pub fn process_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
        !matches!(state, Some("Z") | Some("X") | None)
    })
}

/// The number on the output line that starts with `label` (e.g. `bg=` followed by `$!`); the
/// command's header mentions the label too, but not at a line start.
pub fn pid_after(log: &str, label: &str) -> i32 {
    let line = log.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} line in log:\n{log}"));
    line[label.len()..].parse().unwrap_or_else(|_| panic!("no pid in {line:?}"))
}

/// Kills a process the test knows escaped the runner, so the test leaves nothing behind.
pub fn cleanup(pid: i32) {
    let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
}
