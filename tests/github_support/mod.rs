//! Shared setup for the github_* integration tests: an emulator in a temp dir with a token
//! generated at run time, and a client pointed at it.
#![allow(dead_code)]

use std::path::Path;
use std::process::Output;

use std::time::Duration;
use tokio::process::Command;

use forgeloop::domain::pr_ref::RepoName;
use forgeloop::github::{GithubClient, GithubConfig};
use github_emulator::{Emulator, EmulatorConfig, RepoHandle};

pub const LOGIN: &str = "octo-tester";

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub emulator: Emulator,
    pub token: String,
}

/// What a well-behaved admin client sends: the bound Host, a JSON body type and the secret.
pub fn admin_headers(port: u16, secret: &str) -> Vec<String> {
    vec![
        format!("Host: 127.0.0.1:{port}"),
        "Content-Type: application/json".to_owned(),
        format!("{}: {secret}", github_emulator::ADMIN_SECRET_HEADER),
    ]
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
        admin_secret: None,
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

/// forgeloop's name for a repository of the emulator (each crate has its own `RepoName`; they
/// meet as `owner/name`).
pub fn forge_repo(handle: &RepoHandle) -> RepoName {
    RepoName::parse(&handle.repo.full_name()).unwrap()
}

/// The git CLI, isolated from the user's and system's config and never prompting. Async, so the
/// emulator running in the same (single-thread) test runtime can answer it.
pub async fn git(dir: &Path, args: &[&str]) -> Output {
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
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

/// `git` that must succeed; returns trimmed stdout.
pub async fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args).await;
    assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// One HTTP/1.1 request over a fresh connection (for the emulator's admin API) with exactly the
/// given header lines (`Name: value`) plus `Content-Length` and `Connection: close`; returns the
/// status and body.
pub async fn http(port: u16, method: &str, path: &str, headers: &[String], body: Option<&str>) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let body = body.unwrap_or("");
    let headers: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    let request = format!(
        "{method} {path} HTTP/1.1\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8(response).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// An HTTP answer with its headers (names lowercase).
pub struct Answer {
    pub status: u16,
    pub headers: std::collections::HashMap<String, String>,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or_else(|| panic!("no {name}: {:?}", self.headers))
    }
}

/// A GET over a fresh connection, with the token when given and any extra header lines; the
/// whole answer, headers included (a redirect is not followed).
pub async fn get_raw(port: u16, token: Option<&str>, path: &str, extra: &[String]) -> Answer {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let extra: String = extra.iter().map(|h| format!("{h}\r\n")).collect();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}{extra}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8(response).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}
