//! stderr goes through the redactor too (design §7): clap's usage errors, which echo the
//! argument they refused, and the MCP server's tracing log, which at debug level echoes whole
//! requests. Each test runs the real binary with a secret made at run time and looks for it
//! on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use support::Sandbox;
use support::world::fresh_secret;

#[test]
fn clap_usage_errors_never_echo_a_secret() {
    let sb = Sandbox::new();
    let token = fresh_secret("ghp_");
    for args in [
        // An invalid value, echoed by clap.
        vec!["forge", "--state", "s", "--max-iterations", token.as_str()],
        // An unexpected positional argument, echoed.
        vec!["next", "--state", "s", token.as_str()],
        // An unknown flag after a secret value.
        vec!["test", "--pr", token.as_str(), "--commands-json", "c.json", "--bogus-flag"],
        // An unknown flag that carries the secret.
        vec!["status", &format!("--{token}")],
    ] {
        let run = sb.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("error:"), "{args:?}: clap's message is still printed: {}", run.stderr);
        assert!(
            !run.stderr.contains(&token) && !run.stdout.contains(&token),
            "{args:?} echoes the token:\n{}",
            run.stderr
        );
    }
    let run = sb.run(&["forge", "--state", "s", "--max-iterations", &token]);
    assert!(run.stderr.contains("[REDACTED:github-token]"), "{}", run.stderr);
    // Help and version are not errors: still printed to stdout, exit 0.
    let help = sb.run(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("Usage"), "{}", help.stdout);
}

#[test]
fn the_mcp_servers_log_on_stderr_is_redacted() {
    let sb = Sandbox::new();
    let token = fresh_secret("ghp_");
    let mut child = sb
        .command(&["mcp"])
        .env("FORGELOOP_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": token, "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        // rmcp logs every request it receives, arguments included, at debug level.
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "webgpt_pr_status", "arguments": {"pr": token}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    // A malformed line carrying the secret: the framing layer logs what it ignored.
    writeln!(stdin, "{{\"jsonrpc\": \"2.0\", \"method\": 5, \"note\": \"{token}\"}}").unwrap();
    stdin.flush().unwrap();
    // Wait for the tool's answer before closing the input (the answer proves the request was
    // received, hence logged).
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stdout = String::new();
    while !stdout.contains("\"id\":2") && Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            stdout.push_str(&line);
            stdout.push('\n');
        }
    }
    drop(stdin);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    stdout.extend(lines.try_iter().map(|line| line + "\n"));
    assert!(status.success(), "{stderr}");
    assert!(stdout.contains("\"id\":2"), "the tool call was answered:\n{stdout}");
    assert!(stderr.contains("received request"), "the request was logged at debug level:\n{stderr}");
    assert!(stderr.contains("[REDACTED:github-token]"), "{stderr}");
    assert!(!stderr.contains(&token), "the MCP log leaks the token:\n{stderr}");
    assert!(!stdout.contains(&token), "the MCP output leaks the token");
}
