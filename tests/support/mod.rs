//! Shared helpers for integration tests: a sandboxed forgeloop home and a way to run the
//! real binary in it.
#![allow(dead_code)]

pub mod accounts;
pub mod knob;
pub mod tmux;
pub mod world;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub const BRIEF: &str = "Goal: add dark mode.\nSuccess: preferences persist across reloads.\nScope: existing web app only.\nConstraints: keep accessibility contrast.\nValidation: run the frontend test suite.";
pub const QUESTION: &str = "Implement dark mode in the existing web app, open a PR, and report its URL.";

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// A command for the real binary with home, registry and config inside the sandbox
    /// and no GitHub token from the developer's environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_forgeloop"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("FORGELOOP_HOME", self.home())
            .env("FORGELOOP_REGISTRY", self.path("registry"))
            .env("XDG_CONFIG_HOME", self.path("xdg-config"))
            .env_remove("FORGELOOP_CONFIG")
            .env_remove("FORGELOOP_GITHUB_API")
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let output: Output = self.command(args).output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `forge --request` with the reference test brief and question.
    pub fn start(&self, state: &str, extra: &[&str]) -> Run {
        let mut args = vec![
            "forge",
            "--request",
            "Add dark mode",
            "--intent-brief",
            BRIEF,
            "--webgpt-question",
            QUESTION,
            "--state",
            state,
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    pub fn read_json(&self, path: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }
}

/// Every regular file under `dir` with its bytes, to prove a command changed nothing.
/// `git` in `dir` with the user's and system config ignored and a fixed identity (local
/// `file://` pushes allowed): its trimmed stdout; panics with its stderr when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid", "-c", "protocol.file.allow=always"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

/// Live (non-zombie) processes on the machine whose command line contains `needle`: how tests
/// find what a sandboxed run left behind (its own pids mean nothing outside its namespace).
pub fn processes_with(needle: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// Waits (bounded) until no process matches `needle`; returns those still there.
pub fn wait_until_gone(needle: &str, within: std::time::Duration) -> Vec<i32> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = processes_with(needle);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
