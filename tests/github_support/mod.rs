//! Shared setup for the github_* integration tests: an emulator in a temp dir with a token
//! generated at run time, and a client pointed at it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use forgeloop::github::emulator::{Emulator, EmulatorConfig};
use forgeloop::github::{GithubClient, GithubConfig};

pub const LOGIN: &str = "octo-tester";

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub emulator: Emulator,
    pub token: String,
}

/// A token-shaped secret that exists only for this run.
pub fn fresh_token() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("emu{}x{nanos:09}", std::process::id())
}

pub async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let token = fresh_token();
    let emulator = Emulator::start(EmulatorConfig {
        root: dir.path().join("repos"),
        token: Some(token.clone()),
        login: LOGIN.to_owned(),
    })
    .await
    .unwrap();
    Setup { dir, emulator, token }
}

impl Setup {
    pub fn client(&self) -> GithubClient {
        self.client_with(Some(self.token.clone()), Duration::from_secs(20))
    }

    pub fn client_with(&self, token: Option<String>, timeout: Duration) -> GithubClient {
        GithubClient::new(GithubConfig { api_base: self.emulator.api_base(), token, timeout }).unwrap()
    }

    pub fn count(&self, method: &str, path: &str) -> usize {
        self.emulator.requests().iter().filter(|r| r.method == method && r.path == path).count()
    }
}

/// The git CLI, isolated from the user's and system's config and never prompting.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("HOME", dir)
        .env_remove("GIT_ASKPASS")
        .env_remove("SSH_ASKPASS")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap()
}

/// `git` that must succeed; returns trimmed stdout.
pub fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
