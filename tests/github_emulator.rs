//! The emulator as a process of its own would run it: `run_standalone` writes its port file,
//! and the admin JSON API drives everything the Rust handle can.

mod github_support;

use std::time::Duration;

use forgeloop::domain::pr_ref::RepoName;
use forgeloop::github::{GithubClient, GithubConfig, GithubError, PrState};
use github_emulator::run_standalone;
use github_support::{fresh_token, http};
use serde_json::{Value, json};

async fn admin(port: u16, method: &str, path: &str, body: Value) -> (u16, Value) {
    let body = (!body.is_null()).then(|| body.to_string());
    let (status, text) = http(port, method, &format!("/_emulator{path}"), body.as_deref()).await;
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
}

async fn ok(port: u16, method: &str, path: &str, body: Value) -> Value {
    let (status, value) = admin(port, method, path, body).await;
    assert_eq!(status, 200, "{method} {path}: {value}");
    value
}

#[tokio::test]
async fn a_standalone_emulator_is_driven_through_its_admin_api() {
    let dir = tempfile::tempdir().unwrap();
    let port_file = dir.path().join("run/port");
    std::fs::create_dir_all(port_file.parent().unwrap()).unwrap();
    let token = fresh_token();
    let server = tokio::spawn({
        let (root, port_file, token) = (dir.path().join("repos"), port_file.clone(), token.clone());
        async move { run_standalone(&root, &port_file, Some(token)).await }
    });
    while !port_file.exists() {
        assert!(!server.is_finished(), "the emulator stopped: {:?}", server.await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let port: u16 = std::fs::read_to_string(&port_file).unwrap().parse().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(port_file.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "only the port file, no temp file");

    let health = ok(port, "GET", "/health", Value::Null).await;
    assert_eq!(health["emulator"], true);
    assert_eq!(health["api_base"], format!("http://127.0.0.1:{port}"));

    let repo = ok(port, "POST", "/repos", json!({ "owner": "acme", "name": "widget", "private": true })).await;
    assert_eq!(repo["clone_url"], format!("http://127.0.0.1:{port}/acme/widget.git"));
    let commit = json!({ "branch": "feature", "files": { "src/a.txt": "a\n" }, "message": "Add a" });
    let sha = ok(port, "POST", "/repos/acme/widget/commits", commit).await["sha"].as_str().unwrap().to_owned();
    let pull = json!({ "head": "feature", "base": "main", "title": "Add a" });
    assert_eq!(ok(port, "POST", "/repos/acme/widget/pulls", pull).await["number"], 1);

    let client = GithubClient::new(GithubConfig {
        api_base: format!("http://127.0.0.1:{port}"),
        token: Some(token.clone()),
        timeout: Duration::from_secs(20),
    })
    .unwrap();
    let widget = RepoName::parse("acme/widget").unwrap();
    assert_eq!(client.pull_request(&widget, 1).await.unwrap().head_sha, sha);

    let fault =
        json!({ "kind": "status", "method": "POST", "path": "/repos/acme/widget/issues/1/comments", "status": 500 });
    ok(port, "POST", "/faults", fault).await;
    assert!(matches!(client.create_comment(&widget, 1, "x").await, Err(GithubError::Server { .. })));
    let requests = ok(port, "GET", "/requests", Value::Null).await;
    let posts: Vec<&Value> = requests.as_array().unwrap().iter().filter(|r| r["method"] == "POST").collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0]["status"], 500);

    ok(port, "POST", "/repos/acme/widget/issues/1/comments", json!({ "author": "reviewer", "body": "looks odd" }))
        .await;
    let comments = ok(port, "GET", "/repos/acme/widget/issues/1/comments", Value::Null).await;
    assert_eq!(comments[0]["author"], "reviewer");
    assert_eq!(client.issue_comments(&widget, 1).await.unwrap()[0].author_login, "reviewer");

    let next = json!({ "branch": "other", "files": { "b": "b" } });
    let other = ok(port, "POST", "/repos/acme/widget/commits", next).await["sha"].as_str().unwrap().to_owned();
    ok(port, "POST", "/repos/acme/widget/pulls/1/head", json!({ "sha": other })).await;
    assert_eq!(ok(port, "GET", "/repos/acme/widget/pulls/1", Value::Null).await["head_sha"], other.as_str());
    ok(port, "POST", "/repos/acme/widget/pulls/1/close", Value::Null).await;
    let pr = client.pull_request(&widget, 1).await.unwrap();
    assert_eq!((pr.state, pr.head_sha.as_str()), (PrState::Closed, other.as_str()));

    ok(port, "POST", "/check-runs", json!({ "sha": other, "runs": [{ "name": "ci", "status": "queued" }] })).await;
    assert_eq!(client.check_runs(&widget, &other).await.unwrap().pending, 1);

    ok(port, "DELETE", "/requests", Value::Null).await;
    assert_eq!(ok(port, "GET", "/requests", Value::Null).await, json!([]));
    server.abort();
}

#[tokio::test]
async fn admin_errors_are_json_with_fitting_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let emulator = github_emulator::Emulator::start(github_emulator::EmulatorConfig {
        root: dir.path().to_path_buf(),
        token: None,
        login: "someone".into(),
    })
    .await
    .unwrap();
    let port = emulator.addr().port();
    let (status, value) = admin(port, "GET", "/nothing", Value::Null).await;
    assert_eq!(status, 404);
    assert!(value["error"].as_str().unwrap().contains("no emulator admin route"));
    let (status, _) = admin(port, "POST", "/repos", json!({ "owner": "acme" })).await;
    assert_eq!(status, 400);
    let (status, _) = admin(port, "POST", "/repos/acme/none/pulls", json!({ "head": "a", "base": "main" })).await;
    assert_eq!(status, 404);
    ok(port, "POST", "/repos", json!({ "owner": "acme", "name": "w" })).await;
    let (status, value) = admin(port, "POST", "/repos", json!({ "owner": "acme", "name": "w" })).await;
    assert_eq!((status, value["error"].as_str().unwrap().contains("already exists")), (422, true));
    let (status, _) =
        admin(port, "POST", "/repos/acme/w/commits", json!({ "branch": "x", "files": { "../up": "" } })).await;
    assert_eq!(status, 400);
    assert!(emulator.requests().is_empty(), "admin calls are not logged");
    emulator.shutdown().await;
    assert!(!answers_http(port).await, "the emulator still answers after shutdown");
}

/// Whether anything answers an HTTP request on `port`. (A bare connect is not a test: a child
/// process forked by a parallel test may briefly hold a copy of a closed listener.)
async fn answers_http(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else { return false };
    let request = b"GET /_emulator/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if stream.write_all(request).await.is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/")
}
