//! `forgeloop serve` from outside: its first line and `serving.json`, a new pairing code on
//! request, a clean stop; the exposure rule; the grant commands; and the HTTP checks a caller
//! without a grant meets (the whole OAuth flow with the official MCP SDK is
//! tests/mcp/connector_test.py).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::{Sandbox, snapshot};

/// A running `serve` and its first line.
struct Serving {
    child: Child,
    line: serde_json::Value,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(sb: &Sandbox) -> Serving {
    let mut child =
        sb.command(&["serve", "--listen", "127.0.0.1:0"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let line = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first:?}"));
    Serving { child, line }
}

/// One HTTP/1.1 request; the status line's code, the head and the body.
fn http(url: &str, request: &str) -> (u16, String, String) {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream.write_all(request.replace("HOST", authority).as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let code = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, head.to_ascii_lowercase(), body.to_owned())
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serve_prints_its_line_records_itself_renews_the_code_on_request_and_stops_cleanly() {
    let sb = Sandbox::new();
    let mut server = serve(&sb);
    assert_eq!(server.line["status"], "SERVING");
    let url = server.line["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(server.line["mcp_url"], format!("{url}/mcp"));
    // Said plainly: ChatGPT cannot reach a loopback URL.
    assert_eq!(server.line["loopback_only"], true, "{}", server.line);
    assert!(server.line["note"].as_str().unwrap().contains("--public-url https://"), "{}", server.line);
    let code = server.line["pairing_code"].as_str().unwrap().to_owned();
    assert!(code.len() == 9 && code.as_bytes()[4] == b'-', "XXXX-XXXX: {code}");

    let record = sb.home().join("connector/serving.json");
    let read = || serde_json::from_slice::<serde_json::Value>(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(read()["pairing_code"], code.as_str());
    assert_eq!(read()["pid"], server.child.id());

    let asked = sb.run(&["serve", "--new-code"]);
    assert_eq!(asked.code, 0, "{}{}", asked.stdout, asked.stderr);
    assert_eq!(asked.json()["status"], "OK");
    wait_until("a new pairing code", || read()["pairing_code"] != code.as_str());

    // SIGTERM: the server ends and says it no longer serves.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!record.exists(), "serving.json is removed when serve stops");
    let again = sb.run(&["serve", "--new-code"]);
    assert_eq!(again.code, 2, "no serve is running: {}", again.stdout);
}

#[test]
fn a_reachable_address_needs_an_https_public_url_and_a_person() {
    let sb = Sandbox::new();
    let bare = sb.run(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(bare.code, 2);
    assert!(bare.stdout.contains("--public-url"), "{}", bare.stdout);
    let http_url = sb.run(&["serve", "--listen", "0.0.0.0:0", "--public-url", "http://forge.example.com"]);
    assert_eq!(http_url.code, 2);
    // Not https is refused on a loopback listener too: the tunnel would carry tokens in clear.
    let http_tunnel = sb.run(&["serve", "--public-url", "http://forge.example.com"]);
    assert_eq!(http_tunnel.code, 2, "{}", http_tunnel.stdout);
    assert!(http_tunnel.json()["error"].as_str().unwrap().contains("not https"), "{}", http_tunnel.stdout);
    // https, but nobody at a terminal to say yes.
    let no_person = sb.run(&["serve", "--listen", "0.0.0.0:0", "--public-url", "https://forge.example.com"]);
    assert_eq!(no_person.code, 2);
    assert_eq!(no_person.json()["status"], "NOT_A_TERMINAL", "{}", no_person.stdout);
    let path = sb.run(&["serve", "--public-url", "https://forge.example.com/mcp"]);
    assert_eq!(path.code, 2, "a public URL is a base, not a path: {}", path.stdout);
}

#[test]
fn grants_are_listed_and_revoking_nothing_is_refused() {
    let sb = Sandbox::new();
    let listed = sb.run(&["serve", "--grants"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert_eq!(listed.json()["grants"], serde_json::json!([]));
    let revoked = sb.run(&["serve", "--revoke", "all"]);
    assert_eq!(revoked.code, 2, "{}", revoked.stdout);
}

#[test]
fn callers_without_a_grant_get_challenges_and_refusals_and_change_no_file() {
    let sb = Sandbox::new();
    let server = serve(&sb);
    let url = server.line["url"].as_str().unwrap().to_owned();
    let before = snapshot(&sb.home());

    let (code, head, body) =
        http(&url, "GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n");
    assert_eq!(code, 200, "{head}");
    let metadata: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(metadata["resource"], format!("{url}/mcp"));
    assert_eq!(metadata["authorization_servers"][0], url.as_str());

    let (code, head, _) =
        http(&url, "GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n");
    assert_eq!(code, 200, "{head}");

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let post = |auth: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: HOST\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
            init.len()
        )
    };
    let (code, head, _) = http(&url, &post(""));
    assert_eq!(code, 401);
    assert!(
        head.contains(&format!(
            "www-authenticate: bearer resource_metadata=\"{url}/.well-known/oauth-protected-resource\""
        )),
        "{head}"
    );
    let (code, head, _) = http(&url, &post("Authorization: Bearer not-a-token\r\n"));
    assert_eq!(code, 401);
    assert!(head.contains("error=\"invalid_token\""), "{head}");

    // DNS rebinding and cross-site pages.
    let (code, _, _) = http(
        &url,
        "GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(code, 403);
    let (code, _, _) = http(
        &url,
        "GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: HOST\r\nOrigin: https://evil.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(code, 403);

    // A registration too large, one with a plain-http redirect to another host, a token
    // request with a made-up code.
    let big = format!("{{\"client_name\":\"{}\"}}", "x".repeat(20 * 1024));
    let (code, _, _) = http(
        &url,
        &format!(
            "POST /register HTTP/1.1\r\nHost: HOST\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{big}",
            big.len()
        ),
    );
    assert_eq!(code, 413);
    let bad = r#"{"client_name":"x","redirect_uris":["http://evil.example/cb"]}"#;
    let (code, _, body) = http(
        &url,
        &format!(
            "POST /register HTTP/1.1\r\nHost: HOST\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{bad}",
            bad.len()
        ),
    );
    assert_eq!(code, 400);
    assert!(body.contains("invalid_redirect_uri"), "{body}");
    let form = "grant_type=authorization_code&code=made-up&client_id=x&redirect_uri=x&code_verifier=x";
    let (code, _, body) = http(
        &url,
        &format!(
            "POST /token HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
            form.len()
        ),
    );
    assert_eq!(code, 400);
    assert!(body.contains("invalid_grant"), "{body}");

    assert_eq!(snapshot(&sb.home()), before, "no request without a grant changed a file");
}
