//! `forgeloop serve` at the HTTP level, with a raw socket (what an HTTP client library hides):
//! a refusal answered without reading the request's body says `Connection: close`, so no
//! client sends its next request on a connection the server is closing. The whole connector
//! (the official SDK, OAuth, a cycle, every refusal) is tests/mcp/connector_test.py.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Serve {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Serve {
    fn start() -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_forgeloop"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir.path())
            .env("FORGELOOP_HOME", dir.path().join("home"))
            .env("FORGELOOP_REGISTRY", dir.path().join("registry"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let first: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(first["status"], "SERVING", "{line}");
        let addr = first["url"].as_str().unwrap().trim_start_matches("http://").to_owned();
        Serve { child, addr, _dir: dir }
    }

    /// Sends `head` (and nothing after it), returns everything the server wrote until it
    /// closed the connection.
    fn exchange(&self, head: &str) -> String {
        let mut socket = TcpStream::connect(&self.addr).unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        socket.write_all(head.as_bytes()).unwrap();
        let mut answer = Vec::new();
        socket.read_to_end(&mut answer).expect("the server closes the connection after a refusal");
        String::from_utf8_lossy(&answer).to_lowercase()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn refusals_with_an_unread_body_close_the_connection() {
    let serve = Serve::start();
    let host = &serve.addr;
    // A body is announced and never sent: the refusal does not wait for it.
    let unauthenticated = serve.exchange(&format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    ));
    assert!(unauthenticated.starts_with("http/1.1 401"), "{unauthenticated}");
    assert!(unauthenticated.contains("\r\nconnection: close\r\n"), "{unauthenticated}");
    assert!(unauthenticated.contains("www-authenticate: bearer resource_metadata="), "{unauthenticated}");

    let foreign = serve.exchange(&format!(
        "POST /register HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nContent-Length: 1000\r\n\r\n"
    ));
    assert!(foreign.starts_with("http/1.1 403"), "{foreign}");
    assert!(foreign.contains("\r\nconnection: close\r\n"), "{foreign}");

    let too_large = serve.exchange(&format!(
        "POST /register HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{}",
        17 * 1024,
        "x".repeat(17 * 1024)
    ));
    assert!(too_large.starts_with("http/1.1 413"), "{too_large}");
    assert!(too_large.contains("\r\nconnection: close\r\n"), "{too_large}");
}

#[test]
fn answers_that_read_the_request_keep_the_connection() {
    let serve = Serve::start();
    let host = &serve.addr;
    let mut socket = TcpStream::connect(host).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reader = BufReader::new(socket.try_clone().unwrap());
    for _ in 0..2 {
        socket
            .write_all(format!("GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
            .unwrap();
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let lower = line.to_lowercase();
            assert!(!lower.starts_with("connection: close"), "a served request keeps the connection");
            if let Some(n) = lower.strip_prefix("content-length:") {
                length = n.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(doc["resource"], format!("http://{host}/mcp"));
    }
}
