//! The emulator's test merge, as GitHub's: `refs/pull/N/merge` (parents: the base tip, the
//! head; the tree git's own merge gives) made when a PR is opened and whenever its head moves,
//! kept as it was when only the base branch moves, deleted while the two conflict; `mergeable`
//! and `merge_commit_sha` in the PR's JSON; served over smart HTTP like every ref; recomputed
//! on request through the Rust handle and the admin API.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use github_emulator::{ADMIN_SECRET_HEADER, Emulator, EmulatorConfig};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A fresh directory under the system's temp directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("emulator-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn git(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = tokio::process::Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .output()
        .await
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

async fn git_ok(dir: &Path, args: &[&str]) -> String {
    let (ok, out) = git(dir, args).await;
    assert!(ok, "git {args:?}");
    out
}

/// One HTTP/1.1 request; the status and the JSON body.
async fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut text =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

async fn pull(emulator: &Emulator, number: u64) -> Value {
    let (status, json) = request(emulator.addr(), "GET", &format!("/repos/acme/widget/pulls/{number}"), &[], "").await;
    assert_eq!(status, 200);
    json
}

#[tokio::test]
async fn the_test_merge_follows_the_head_stays_when_the_base_moves_and_goes_while_they_conflict() {
    let scratch = Scratch::new("merge-ref");
    let config = EmulatorConfig { root: scratch.0.join("emu"), token: None, login: "acme".into(), admin_secret: None };
    let emulator = Emulator::start(config).await.unwrap();
    let repo = emulator.create_repo("acme", "widget", false).await.unwrap();
    let dir = repo.path.clone();
    emulator.commit_files(&repo, "main", &[("a.txt", "a\n"), ("b.txt", "b\n")], "project").await.unwrap();
    let head = emulator.commit_files(&repo, "feature", &[("a.txt", "feature\n")], "feature").await.unwrap();
    let n = emulator.open_pr(&repo, "feature", "main", "feature").await.unwrap();

    // Opened: the merge of the head into main's tip, with git's tree.
    let main = git_ok(&dir, &["rev-parse", "main"]).await;
    let merge = emulator.pr_merge(&repo, n).unwrap();
    assert_eq!(git_ok(&dir, &["rev-parse", "refs/pull/1/merge"]).await, merge);
    assert_eq!(
        git_ok(&dir, &["rev-parse", "refs/pull/1/merge^1", "refs/pull/1/merge^2"]).await,
        format!("{main}\n{head}")
    );
    let expected_tree = git_ok(&dir, &["merge-tree", "--write-tree", &main, &head]).await;
    assert_eq!(git_ok(&dir, &["rev-parse", "refs/pull/1/merge^{tree}"]).await, expected_tree);
    let json = pull(&emulator, n).await;
    assert_eq!((json["mergeable"].as_bool(), json["mergeable_state"].as_str()), (Some(true), Some("clean")));
    assert_eq!(json["merge_commit_sha"], merge.as_str());
    assert_eq!(json["base"]["sha"], main.as_str());
    // Served over smart HTTP like the other refs.
    let listed = git_ok(&dir, &["ls-remote", &repo.clone_url, "refs/pull/1/*"]).await;
    assert!(listed.contains(&format!("{merge}\trefs/pull/1/merge")), "{listed}");
    assert!(listed.contains(&format!("{head}\trefs/pull/1/head")), "{listed}");

    // main moves: GitHub does not recompute until asked, so the merge is the old one.
    let moved = emulator.commit_files(&repo, "main", &[("b.txt", "main moved\n")], "main moves").await.unwrap();
    assert_eq!(emulator.pr_merge(&repo, n), Some(merge.clone()));
    assert_eq!(git_ok(&dir, &["rev-parse", "refs/pull/1/merge^1"]).await, main);
    // A new head: computed again, against main's tip now.
    let head = emulator.commit_files(&repo, "feature", &[("c.txt", "c\n")], "more").await.unwrap();
    let merge = emulator.pr_merge(&repo, n).unwrap();
    assert_eq!(
        git_ok(&dir, &["rev-parse", "refs/pull/1/merge^1", "refs/pull/1/merge^2"]).await,
        format!("{moved}\n{head}")
    );

    // A head that conflicts with main: no merge ref, `mergeable: false`.
    emulator.commit_files(&repo, "feature", &[("b.txt", "the PR's\n")], "clash").await.unwrap();
    assert_eq!(emulator.pr_merge(&repo, n), None);
    assert!(!git(&dir, &["rev-parse", "--verify", "--quiet", "refs/pull/1/merge"]).await.0);
    let json = pull(&emulator, n).await;
    assert_eq!((json["mergeable"].as_bool(), json["mergeable_state"].as_str()), (Some(false), Some("dirty")));
    assert!(json["merge_commit_sha"].is_null());
    let _ = merge;

    // main takes the PR's line: asked again (the admin API here), it merges.
    emulator.commit_files(&repo, "main", &[("b.txt", "the PR's\n")], "agree").await.unwrap();
    assert_eq!(emulator.pr_merge(&repo, n), None, "not until asked");
    let secret = emulator.admin_secret().to_owned();
    let headers = [(ADMIN_SECRET_HEADER, secret.as_str()), ("Content-Type", "application/json")];
    let path = format!("/_emulator/repos/acme/widget/pulls/{n}/merge-ref");
    let (status, answer) = request(emulator.addr(), "POST", &path, &headers, "{}").await;
    assert_eq!(status, 200, "{answer}");
    let merge = emulator.pr_merge(&repo, n).unwrap();
    assert_eq!(answer["merge_sha"], merge.as_str());
    assert_eq!(pull(&emulator, n).await["mergeable"], true);
    // The Rust handle recomputes too; the same base and head give the same tree.
    let again = emulator.recompute_pr_merge(&repo, n).await.unwrap().unwrap();
    assert_eq!(
        git_ok(&dir, &["rev-parse", &format!("{again}^{{tree}}")]).await,
        git_ok(&dir, &["rev-parse", &format!("{merge}^{{tree}}")]).await
    );
}
