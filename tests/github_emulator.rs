//! The emulator as a process of its own would run it: `run_standalone` writes its port file,
//! and the admin JSON API drives everything the Rust handle can — for a holder of the run's
//! secret talking to the bound address, never for another local user or a web page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod github_support;

use std::time::Duration;

use forgeloop::domain::pr_ref::RepoName;
use forgeloop::github::{GithubClient, GithubConfig, GithubError, PrState};
use github_emulator::run_standalone;
use github_support::{admin_headers, fresh_token, http};
use serde_json::{Value, json};

/// Where the admin API is and the secret it wants.
struct Admin {
    port: u16,
    secret: String,
}

async fn admin(a: &Admin, method: &str, path: &str, body: Value) -> (u16, Value) {
    admin_with(a.port, &admin_headers(a.port, &a.secret), method, path, body).await
}

async fn admin_with(port: u16, headers: &[String], method: &str, path: &str, body: Value) -> (u16, Value) {
    let body = (!body.is_null()).then(|| body.to_string());
    let (status, text) = http(port, method, &format!("/_emulator{path}"), headers, body.as_deref()).await;
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
}

async fn ok(a: &Admin, method: &str, path: &str, body: Value) -> Value {
    let (status, value) = admin(a, method, path, body).await;
    assert_eq!(status, 200, "{method} {path}: {value}");
    value
}

#[tokio::test]
async fn a_standalone_emulator_is_driven_through_its_admin_api() {
    let dir = tempfile::tempdir().unwrap();
    let port_file = dir.path().join("run/port");
    std::fs::create_dir_all(port_file.parent().unwrap()).unwrap();
    let token = fresh_token();
    let secret = format!("admin-{}", fresh_token());
    let server = tokio::spawn({
        let (root, port_file, token) = (dir.path().join("repos"), port_file.clone(), token.clone());
        let secret = secret.clone();
        async move { run_standalone(&root, &port_file, Some(token), secret).await }
    });
    while !port_file.exists() {
        assert!(!server.is_finished(), "the emulator stopped: {:?}", server.await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let port: u16 = std::fs::read_to_string(&port_file).unwrap().parse().unwrap();
    let a = Admin { port, secret };
    let leftovers: Vec<_> = std::fs::read_dir(port_file.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "only the port file, no temp file");

    let health = ok(&a, "GET", "/health", Value::Null).await;
    assert_eq!(health["emulator"], true);
    assert_eq!(health["api_base"], format!("http://127.0.0.1:{port}"));

    let repo = ok(&a, "POST", "/repos", json!({ "owner": "acme", "name": "widget", "private": true })).await;
    assert_eq!(repo["clone_url"], format!("http://127.0.0.1:{port}/acme/widget.git"));
    let commit = json!({ "branch": "feature", "files": { "src/a.txt": "a\n" }, "message": "Add a" });
    let sha = ok(&a, "POST", "/repos/acme/widget/commits", commit).await["sha"].as_str().unwrap().to_owned();
    let pull = json!({ "head": "feature", "base": "main", "title": "Add a" });
    assert_eq!(ok(&a, "POST", "/repos/acme/widget/pulls", pull).await["number"], 1);

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
    ok(&a, "POST", "/faults", fault).await;
    assert!(matches!(client.create_comment(&widget, 1, "x").await, Err(GithubError::Server { .. })));
    let requests = ok(&a, "GET", "/requests", Value::Null).await;
    let posts: Vec<&Value> = requests.as_array().unwrap().iter().filter(|r| r["method"] == "POST").collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0]["status"], 500);

    ok(&a, "POST", "/repos/acme/widget/issues/1/comments", json!({ "author": "reviewer", "body": "looks odd" })).await;
    let comments = ok(&a, "GET", "/repos/acme/widget/issues/1/comments", Value::Null).await;
    assert_eq!(comments[0]["author"], "reviewer");
    assert_eq!(client.issue_comments(&widget, 1).await.unwrap()[0].author_login, "reviewer");

    let next = json!({ "branch": "other", "files": { "b": "b" } });
    let other = ok(&a, "POST", "/repos/acme/widget/commits", next).await["sha"].as_str().unwrap().to_owned();
    ok(&a, "POST", "/repos/acme/widget/pulls/1/head", json!({ "sha": other })).await;
    assert_eq!(ok(&a, "GET", "/repos/acme/widget/pulls/1", Value::Null).await["head_sha"], other.as_str());
    ok(&a, "POST", "/repos/acme/widget/pulls/1/close", Value::Null).await;
    let pr = client.pull_request(&widget, 1).await.unwrap();
    assert_eq!((pr.state, pr.head_sha.as_str()), (PrState::Closed, other.as_str()));

    ok(&a, "POST", "/check-runs", json!({ "sha": other, "runs": [{ "name": "ci", "status": "queued" }] })).await;
    assert_eq!(client.check_runs(&widget, &other).await.unwrap().pending, 1);
    let published = ok(
        &a,
        "POST",
        "/check-runs/publish",
        json!({ "sha": other, "run": { "name": "lint", "status": "in_progress", "job_id": 77 } }),
    )
    .await;
    assert_eq!(published["id"], 77);
    let run = json!({ "name": "CI", "head_sha": other, "status": "queued", "jobs": [{ "id": 88, "name": "docs", "status": "queued" }] });
    let run_id = ok(&a, "POST", "/repos/acme/widget/actions-runs", run).await["id"].as_u64().unwrap();
    let auth = [format!("Authorization: token {token}")];
    let jobs = http(port, "GET", &format!("/repos/acme/widget/actions/runs/{run_id}/jobs"), &auth, None).await;
    assert_eq!(serde_json::from_str::<Value>(&jobs.1).unwrap()["jobs"][0]["id"], 88, "{}", jobs.1);
    ok(&a, "POST", "/check-runs/88", json!({ "status": "completed", "conclusion": "success" })).await;
    ok(&a, "POST", "/check-runs/77", json!({ "status": "completed", "conclusion": "success" })).await;
    assert_eq!(client.check_runs(&widget, &other).await.unwrap().success, 2);

    assert_eq!(ok(&a, "GET", "/dispatches", Value::Null).await, json!([]));
    ok(&a, "POST", "/job-logs", json!({ "job_id": 31, "text": "step 1\nok\n" })).await;
    let logs =
        http(port, "GET", "/repos/acme/widget/actions/jobs/31/logs", &[format!("Authorization: token {token}")], None)
            .await;
    assert_eq!(logs.0, 302, "{}", logs.1);
    assert_eq!(ok(&a, "GET", "/log-host-requests", Value::Null).await, json!([]), "the redirect was not followed");

    ok(&a, "DELETE", "/requests", Value::Null).await;
    assert_eq!(ok(&a, "GET", "/requests", Value::Null).await, json!([]));
    server.abort();
}

#[tokio::test]
async fn admin_errors_are_json_with_fitting_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let emulator = github_emulator::Emulator::start(github_emulator::EmulatorConfig {
        root: dir.path().to_path_buf(),
        token: None,
        login: "someone".into(),
        admin_secret: None,
    })
    .await
    .unwrap();
    let port = emulator.addr().port();
    let a = Admin { port, secret: emulator.admin_secret().to_owned() };
    let (status, value) = admin(&a, "GET", "/nothing", Value::Null).await;
    assert_eq!(status, 404);
    assert!(value["error"].as_str().unwrap().contains("no emulator admin route"));
    let (status, _) = admin(&a, "POST", "/repos", json!({ "owner": "acme" })).await;
    assert_eq!(status, 400);
    let (status, _) = admin(&a, "POST", "/repos/acme/none/pulls", json!({ "head": "a", "base": "main" })).await;
    assert_eq!(status, 404);
    ok(&a, "POST", "/repos", json!({ "owner": "acme", "name": "w" })).await;
    let (status, value) = admin(&a, "POST", "/repos", json!({ "owner": "acme", "name": "w" })).await;
    assert_eq!((status, value["error"].as_str().unwrap().contains("already exists")), (422, true));
    let (status, _) =
        admin(&a, "POST", "/repos/acme/w/commits", json!({ "branch": "x", "files": { "../up": "" } })).await;
    assert_eq!(status, 400);
    assert!(emulator.requests().is_empty(), "admin calls are not logged");
    emulator.shutdown().await;
    assert!(!answers_http(port).await, "the emulator still answers after shutdown");
}

#[tokio::test]
async fn the_admin_api_refuses_other_users_and_web_pages_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let emulator = github_emulator::Emulator::start(github_emulator::EmulatorConfig {
        root: dir.path().to_path_buf(),
        token: Some(fresh_token()),
        login: "someone".into(),
        admin_secret: None,
    })
    .await
    .unwrap();
    let port = emulator.addr().port();
    let secret = emulator.admin_secret().to_owned();
    assert!(secret.len() >= 32, "a fresh random secret per run");
    let good = admin_headers(port, &secret);
    let host = format!("Host: 127.0.0.1:{port}");
    let json_type = "Content-Type: application/json".to_owned();
    let with_secret = format!("{}: {secret}", github_emulator::ADMIN_SECRET_HEADER);
    let wrong_secret = format!("{}: {}", github_emulator::ADMIN_SECRET_HEADER, "x".repeat(secret.len()));
    let plus = |extra: &str| [good.clone(), vec![extra.to_owned()]].concat();
    let attacks: Vec<(&str, Vec<String>)> = vec![
        ("no secret (another local user)", vec![host.clone(), json_type.clone()]),
        ("a wrong secret", vec![host.clone(), json_type.clone(), wrong_secret]),
        ("a web page's Origin", plus("Origin: http://evil.example")),
        ("a null Origin", plus("Origin: null")),
        ("a browser's fetch metadata", plus("Sec-Fetch-Site: cross-site")),
        ("a form post", vec![host.clone(), "Content-Type: text/plain".into(), with_secret.clone()]),
        (
            "an urlencoded form",
            vec![host.clone(), "Content-Type: application/x-www-form-urlencoded".into(), with_secret.clone()],
        ),
        ("no content type", vec![host.clone(), with_secret.clone()]),
        ("a rebound DNS name", vec![format!("Host: evil.example:{port}"), json_type.clone(), with_secret.clone()]),
        (
            "localhost instead of the bound address",
            vec![format!("Host: localhost:{port}"), json_type.clone(), with_secret.clone()],
        ),
        ("no Host", vec![json_type.clone(), with_secret.clone()]),
    ];
    let new_repo = json!({ "owner": "mallory", "name": "pushed", "private": false });
    for (what, headers) in &attacks {
        let (status, value) = admin_with(port, headers, "POST", "/repos", new_repo.clone()).await;
        assert_eq!(status, 403, "{what}: {value}");
        assert!(value["error"].is_string(), "{what}: {value}");
    }
    let (status, _) = admin_with(port, std::slice::from_ref(&host), "GET", "/health", Value::Null).await;
    assert_eq!(status, 403, "reads need the secret too");
    let (status, _) = admin_with(
        port,
        &[host.clone(), "Origin: http://evil.example".into(), with_secret.clone()],
        "GET",
        "/requests",
        Value::Null,
    )
    .await;
    assert_eq!(status, 403, "a web page cannot read the request log either");
    assert!(emulator.repo_dir("mallory/pushed").is_err(), "no refused request created anything");
    assert!(!dir.path().join("mallory").exists());

    let a = Admin { port, secret };
    ok(&a, "POST", "/repos", new_repo).await;
    assert!(emulator.repo_dir("mallory/pushed").is_ok(), "with the secret it works");
    let charset = vec![host, "Content-Type: Application/JSON; charset=utf-8".to_owned(), with_secret];
    let (status, value) = admin_with(port, &charset, "POST", "/repos", json!({ "owner": "acme", "name": "w" })).await;
    assert_eq!(status, 200, "a JSON type with parameters is JSON: {value}");
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
