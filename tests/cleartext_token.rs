//! The token never crosses the network in clear text: a `http://` GitHub API base whose host is
//! not loopback is refused with `CleartextApiBase` before any request, whether it comes from
//! `--github-api`, `FORGELOOP_GITHUB_API` or config `github.api`; loopback (the emulator, a
//! tunnel) stays allowed.
//!
//! The "remote" API is `http://0.0.0.0:PORT`: not a loopback address, yet on Linux a connection
//! to it reaches a listener on 127.0.0.1, so the test can watch for the token arriving.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::Sandbox;
use support::world::{CALC_FIXED, World, fresh_secret};

/// A listener that records each request's head and answers 401, so a client never hangs on it.
fn recorder() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            log.lock().unwrap().push(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    (port, seen)
}

fn assert_refused(run: &support::Run, seen: &Mutex<Vec<String>>, token: &str) {
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let error = run.json()["error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("clear text") && error.contains("https://"), "{error}");
    let seen = seen.lock().unwrap();
    assert!(seen.is_empty(), "nothing may reach a cleartext API: {seen:?}");
    assert!(!run.stdout.contains(token) && !run.stderr.contains(token));
}

#[test]
fn a_plain_http_api_base_off_loopback_is_refused_before_the_token_is_sent() {
    let sb = Sandbox::new();
    let token = fresh_secret("ghp_");
    let (port, seen) = recorder();
    let base = format!("http://0.0.0.0:{port}");

    let mut by_env = sb.command(&["status", "--pr", "acme/widget#1"]);
    by_env.env("FORGELOOP_GITHUB_API", &base).env("GH_TOKEN", &token);
    assert_refused(&output(by_env), &seen, &token);

    let mut by_flag =
        sb.command(&["--github-api", &base, "test", "--pr", "acme/widget#1", "--commands-json", "c.json"]);
    by_flag.env("GH_TOKEN", &token);
    std::fs::write(sb.path("c.json"), r#"[["true"]]"#).unwrap();
    assert_refused(&output(by_flag), &seen, &token);

    let config = sb.path("xdg-config/forgeloop/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, format!("[github]\napi = \"{base}/api/v3\"\n")).unwrap();
    let mut by_config = sb.command(&["status", "--pr", "acme/widget#1"]);
    by_config.env("GH_TOKEN", &token);
    assert_refused(&output(by_config), &seen, &token);
}

#[test]
fn a_plain_http_api_base_on_loopback_still_works() {
    let w = World::new();
    let repo = w.project("acme", "widget", true);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    assert!(w.emu.api_base().starts_with("http://127.0.0.1:"));
    let run = w.run(&["status", "--pr", &format!("acme/widget#{n}")]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["head_sha"], w.emu.pr_head(&repo, n).unwrap().as_str());
}

fn output(mut cmd: std::process::Command) -> support::Run {
    let out = cmd.output().unwrap();
    support::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
