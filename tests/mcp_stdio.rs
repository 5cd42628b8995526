//! `forgeloop mcp` driven over a raw stdio pipe (JSON lines), as an MCP client would, against
//! the GitHub emulator: protocol behaviour (design §8, design §12.11 items 11 and 12), the
//! repository and profile allowlists, concurrency, progress and cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::tmux::Tmux;
use support::world::{CALC_BUGGY, CALC_FIXED, World, fresh_secret};
use support::{BRIEF, QUESTION};

/// Only a guard against a hung server; no assertion depends on how long anything takes.
const HANG_GUARD: Duration = Duration::from_secs(120);

struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every message received, in order (for whole-session checks).
    transcript: Vec<Value>,
    /// Received but not yet consumed by `response`/`next`.
    backlog: VecDeque<Value>,
}

impl Mcp {
    fn start(w: &World, config: &str) -> Mcp {
        Mcp::spawn(w, config, w.command(&["mcp"]))
    }

    /// The server with no token source: no GH_TOKEN, and a PATH without `gh`.
    fn start_without_token(w: &World, config: &str) -> Mcp {
        let empty = w.path("empty-bin");
        std::fs::create_dir_all(&empty).unwrap();
        let mut cmd = w.command(&["mcp"]);
        cmd.env_remove("GH_TOKEN").env("PATH", &empty);
        Mcp::spawn(w, config, cmd)
    }

    fn spawn(w: &World, config: &str, mut cmd: std::process::Command) -> Mcp {
        std::fs::write(w.path("mcp.toml"), config).unwrap();
        cmd.env("FORGELOOP_CONFIG", w.path("mcp.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Mcp { child, stdin, lines, transcript: Vec::new(), backlog: VecDeque::new() }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// The next message from the server.
    fn next(&mut self) -> Value {
        if let Some(message) = self.backlog.pop_front() {
            return message;
        }
        self.receive().unwrap_or_else(|| panic!("the server closed stdout; transcript: {:#?}", self.transcript))
    }

    fn receive(&mut self) -> Option<Value> {
        match self.lines.recv_timeout(HANG_GUARD) {
            Ok(line) => {
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                self.transcript.push(value.clone());
                Some(value)
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => panic!("no message from the server; transcript: {:#?}", self.transcript),
        }
    }

    /// Waits for the response to `id`, keeping anything else for later.
    fn response(&mut self, id: i64) -> Value {
        if let Some(at) = self.backlog.iter().position(|m| m["id"] == json!(id) && m.get("method").is_none()) {
            return self.backlog.remove(at).unwrap();
        }
        loop {
            let message =
                self.receive().unwrap_or_else(|| panic!("no response to {id}; transcript: {:#?}", self.transcript));
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    fn initialize(&mut self) -> Value {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// Closes stdin, reads to the end and returns the exit code.
    fn finish(&mut self) -> i32 {
        drop(self.stdin.take());
        while self.receive().is_some() {}
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not exit after EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_text(response: &Value) -> Value {
    let text = response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{response:#}"));
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn is_error(response: &Value) -> bool {
    response["result"]["isError"] == json!(true)
}

const CONFIG: &str = r#"
[mcp]
allowed_repositories = ["acme/widget"]
[mcp.profiles.smoke]
commands = [["git", "diff", "--check"]]
[mcp.profiles.project]
commands = [["sh", "test.sh"]]
"#;

#[test]
fn protocol_errors_have_the_right_codes_and_the_server_outlives_bad_input() {
    let w = World::new();
    let mut mcp = Mcp::start(&w, CONFIG);
    // A notification before initialize is dropped, not fatal (rmcp alone would end here).
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // So is a malformed first line: parse error, and the server keeps serving.
    mcp.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 99, ");
    let parse = mcp.next();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);

    let init = mcp.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "forgeloop");
    assert_eq!(init["result"]["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"]["capabilities"]["tools"].is_object());

    let list = mcp.request(2, "tools/list", json!({}));
    let mut names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "forge_attest",
            "forge_attest_answer",
            "forge_block",
            "forge_cycle",
            "forge_cycles",
            "forge_diff",
            "forge_next",
            "forge_profiles",
            "forge_reply",
            "forge_review",
            "forge_review_prepare",
            "forge_review_reply",
            "forge_review_start",
            "forge_sent",
            "forge_start",
            "forge_test",
            "forge_triage",
            "project_attach",
            "project_bind",
            "project_lookup",
            "webgpt_pr_handoff",
            "webgpt_pr_status",
            "webgpt_pr_test"
        ]
    );
    let tools = list["result"]["tools"].as_array().unwrap();
    let test_tool = tools.iter().find(|t| t["name"] == "webgpt_pr_test").unwrap();
    assert_eq!(test_tool["inputSchema"]["required"], json!(["pr", "profile"]));
    assert!(test_tool["description"].as_str().unwrap().contains("Configured profiles: project, smoke."));
    let loop_test = tools.iter().find(|t| t["name"] == "forge_test").unwrap();
    assert_eq!(loop_test["inputSchema"]["required"], json!(["state", "pr"]), "the profile only the first time");
    assert!(loop_test["description"].as_str().unwrap().contains("Configured profiles: project, smoke."));
    assert_eq!(loop_test["inputSchema"]["additionalProperties"], false, "{loop_test}");

    // Human-only actions (docs/commands.md "Human-only commands", design §6.4) stay out of
    // MCP: no tool confirms, approves, unblocks, extends, allows hosts, reruns or widens, and
    // no tool takes commands, a cap or a confirmation switch.
    for name in &names {
        for human_only in ["confirm", "approve", "unblock", "extend", "allow", "rerun", "commands", "cap", "say"] {
            assert!(!name.contains(human_only), "{name} looks like the human-only action {human_only}");
        }
    }
    for tool in tools {
        let properties = tool["inputSchema"]["properties"].as_object().cloned().unwrap_or_default();
        for field in properties.keys() {
            assert!(
                !["commands", "commands_json", "argv", "max_iterations", "await_confirmation", "rerun", "by", "path"]
                    .contains(&field.as_str()),
                "{} takes {field}",
                tool["name"]
            );
        }
    }

    mcp.send_raw("this is not json");
    assert_eq!(mcp.next()["error"]["code"], -32700);
    mcp.send_raw("[1, 2]");
    assert_eq!(mcp.next()["error"]["code"], -32600);
    let unknown = mcp.request(3, "no/such/method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let bad_params = mcp.request(4, "tools/call", json!("not an object"));
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");
    let unknown_tool = mcp.call(5, "run_shell", json!({"cmd": "id"}));
    assert_eq!(unknown_tool["error"]["code"], -32602, "{unknown_tool}");
    assert!(unknown_tool["error"]["message"].as_str().unwrap().contains("webgpt_pr_test"));

    // Tool failures are results flagged isError, with a useful message.
    let partial = mcp.call(6, "webgpt_pr_handoff", json!({"report": {"status": "TEST_FAILED"}}));
    assert!(is_error(&partial), "{partial}");
    assert!(tool_text(&partial)["error"].as_str().unwrap().contains("missing field"), "{partial}");
    let missing_arg = mcp.call(7, "webgpt_pr_status", json!({}));
    assert!(is_error(&missing_arg), "{missing_arg}");

    // Notifications never get a reply: unknown ones, malformed ones, cancellations of nothing.
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/whatever"}));
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 7}));
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}}));
    assert_eq!(mcp.request(8, "ping", json!({}))["result"], json!({}));

    assert_eq!(mcp.finish(), 0, "EOF ends the server cleanly");
    // Exactly one response per request, and the only id-less messages are the three
    // answers to unparsable or batch lines.
    let mut ids: Vec<i64> = mcp.transcript.iter().filter_map(|m| m["id"].as_i64()).collect();
    ids.sort();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>(), "{:#?}", mcp.transcript);
    let anonymous = mcp.transcript.iter().filter(|m| m.get("method").is_none() && m["id"].is_null()).count();
    assert_eq!(anonymous, 3, "{:#?}", mcp.transcript);
}

#[test]
fn refused_repositories_and_profiles_make_no_github_request() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let other = w.project("stranger", "tool", false);
    let m = w.pr(&other, "x", CALC_BUGGY);
    w.emu.clear_requests();
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();

    let refused_repo = mcp.call(2, "webgpt_pr_test", json!({"pr": format!("stranger/tool#{m}"), "profile": "smoke"}));
    assert!(is_error(&refused_repo), "{refused_repo}");
    let doc = tool_text(&refused_repo);
    assert_eq!(doc["status"], "REFUSED");
    assert!(doc["error"].as_str().unwrap().contains("stranger/tool is not allowed"), "{doc}");

    let refused_profile = mcp.call(3, "webgpt_pr_test", json!({"pr": format!("acme/widget#{n}"), "profile": "rm-rf"}));
    assert!(is_error(&refused_profile), "{refused_profile}");
    let doc = tool_text(&refused_profile);
    assert!(doc["error"].as_str().unwrap().contains("unknown test profile \"rm-rf\""), "{doc}");
    assert!(doc["error"].as_str().unwrap().contains("project, smoke"), "{doc}");

    let bad_ref = mcp.call(4, "webgpt_pr_test", json!({"pr": "../..#1", "profile": "smoke"}));
    assert!(is_error(&bad_ref), "{bad_ref}");
    assert!(w.emu.requests().is_empty(), "refusals happen before any GitHub request: {:?}", w.emu.requests());

    // A bound repository is allowed without being listed.
    let bound = w.sb.run(&[
        "project",
        "bind",
        "--repository",
        "stranger/tool",
        "--project-url",
        "https://chatgpt.com/g/g-p-tool/project",
        "--project-name",
        "Tool",
    ]);
    assert_eq!(bound.code, 0, "{}", bound.stdout);
    let allowed = mcp.call(5, "webgpt_pr_test", json!({"pr": format!("stranger/tool#{m}"), "profile": "project"}));
    assert!(!is_error(&allowed), "{allowed}");
    assert_eq!(tool_text(&allowed)["status"], "TEST_FAILED");
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn status_test_and_handoff_against_the_emulator_with_progress_and_concurrency() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let head = w.emu.pr_head(&repo, n).unwrap();
    // The first command waits for a gate file the test creates, so "while the run is still
    // going" is a fact of ordering, not of timing.
    let gate = w.shared_dir().join("gate");
    let config = format!(
        "{CONFIG}[mcp.profiles.slow]\nread_paths = [\"{}\"]\ncommands = [[\"sh\", \"-c\", \"while [ ! -e '{}' ]; do sleep 0.05; done\"], [\"sh\", \"test.sh\"]]\n",
        w.shared_dir().display(),
        gate.display()
    );
    let mut mcp = Mcp::start(&w, &config);
    mcp.initialize();

    let status = mcp.call(2, "webgpt_pr_status", json!({"pr": format!("acme/widget#{n}")}));
    assert!(!is_error(&status), "{status}");
    let doc = &status["result"]["structuredContent"];
    assert_eq!(doc["state"], "open");
    assert_eq!(doc["head_sha"], head.as_str());
    assert_eq!(doc["repository"], "acme/widget");
    assert!(doc["checks"]["total"].is_u64());
    // The same document `forgeloop status` prints: one implementation.
    let cli = w.run(&["status", "--pr", &format!("acme/widget#{n}")]);
    assert_eq!(&cli.json(), doc);

    // A long test run with progress; other requests are answered while it runs.
    mcp.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "webgpt_pr_test", "arguments": {"pr": format!("acme/widget#{n}"), "profile": "slow"},
        "_meta": {"progressToken": "run-10"}}}));
    loop {
        let message = mcp.next();
        assert!(message.get("id") != Some(&json!(10)), "the run ended before its first command was seen: {message}");
        if message["method"] == "notifications/progress"
            && message["params"]["message"].as_str().unwrap_or("").starts_with("running command 1/2")
        {
            break;
        }
    }
    // The first command is running and cannot end before the gate exists: forge_cycles must
    // be answered meanwhile (a server that serialised requests would never answer it).
    mcp.send(json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "forge_cycles", "arguments": {}}}));
    let cycles = mcp.response(11);
    assert!(!is_error(&cycles), "{cycles}");
    assert!(
        !mcp.transcript.iter().any(|m| m["id"] == json!(10)),
        "the run cannot have finished before the gate was opened"
    );
    std::fs::write(&gate, "").unwrap();
    let run = mcp.response(10);
    let report = run["result"]["structuredContent"].clone();
    assert_eq!(report["status"], "TEST_FAILED", "{report:#}");
    assert_eq!(report["head_sha"], head.as_str());
    assert_eq!(report["comment_published"], false);
    assert!(w.comments(&repo, n).is_empty(), "the MCP server never posts comments");

    let progress: Vec<(f64, String)> = mcp
        .transcript
        .iter()
        .filter(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "run-10")
        .map(|m| (m["params"]["progress"].as_f64().unwrap(), m["params"]["message"].as_str().unwrap().to_owned()))
        .collect();
    assert!(progress.windows(2).all(|p| p[0].0 < p[1].0), "progress only grows: {progress:?}");
    let messages: Vec<&str> = progress.iter().map(|(_, m)| m.as_str()).collect();
    assert!(messages.iter().any(|m| m.starts_with("fetching")), "{messages:?}");
    assert!(messages.iter().any(|m| m.starts_with("running command 2/2: sh test.sh")), "{messages:?}");
    assert_eq!(messages.last(), Some(&"finished: TEST_FAILED"));

    let handoff = mcp.call(12, "webgpt_pr_handoff", json!({"report": report}));
    assert!(!is_error(&handoff), "{handoff}");
    let text = handoff["result"]["structuredContent"]["handoff"].as_str().unwrap();
    assert!(text.contains("## Forge Loop PR test: TEST_FAILED"), "{text}");
    assert!(text.contains("PR_URL:"), "{text}");
    assert!(!mcp.transcript.iter().any(|m| m.to_string().contains(&w.token)), "the token never leaves the server");
    assert_eq!(mcp.finish(), 0);
}

/// A report in the reference tool's shape, built by another client (no `comment_markdown`):
/// the handoff is built from its fields, as the reference tool builds it, and redacted.
#[test]
fn handoff_builds_the_comment_of_a_reference_shaped_report_and_redacts_it() {
    let w = World::new();
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let secret = fresh_secret("ghp_");
    let report = json!({
        "status": "TEST_FAILED",
        "repository": "acme/widget",
        "pull_request": 42,
        "head_sha": "a".repeat(40),
        "commands": [
            {"argv": ["pytest", "-q"], "exit_code": 1, "duration_seconds": 0.25}
        ],
        "failure_output": format!("FAILED test_foo.py::test_bar - AssertionError: expected 1 got 2 (token {secret})"),
        "comment_published": false
    });
    let handoff = mcp.call(2, "webgpt_pr_handoff", json!({"report": report}));
    assert!(!is_error(&handoff), "{handoff}");
    let doc = &handoff["result"]["structuredContent"];
    assert_eq!((doc["status"].as_str(), doc["pull_request"].as_u64()), (Some("TEST_FAILED"), Some(42)), "{doc:#}");
    let text = doc["handoff"].as_str().unwrap();
    for expected in [
        "## Forge Loop PR test: TEST_FAILED",
        "- Repository: `acme/widget`",
        "- PR: `#42`",
        &format!("- Head SHA: `{}`", "a".repeat(40)),
        "| `pytest` `-q` | 1 | 0.25s |",
        "Failure output (redacted):",
        "AssertionError: expected 1 got 2",
        "[REDACTED:",
        "PR_URL: <url>",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from:\n{text}");
    }
    assert!(!mcp.transcript.iter().any(|m| m.to_string().contains(&secret)), "the secret never leaves the server");
    // A report that passed has nothing to hand off, whatever its shape.
    let passed = json!({"status": "TEST_PASSED", "repository": "acme/widget", "pull_request": 42,
        "head_sha": "a".repeat(40), "commands": []});
    let refused = mcp.call(3, "webgpt_pr_handoff", json!({"report": passed}));
    assert!(is_error(&refused), "{refused}");
    assert_eq!(tool_text(&refused)["status"], "NOTHING_TO_SEND");
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn cycles_are_read_by_state_and_task_space() {
    let w = World::new();
    assert_eq!(w.sb.start("dark-mode", &[]).code, 0);
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();

    let cycles = mcp.call(2, "forge_cycles", json!({}));
    let rows = cycles["result"]["structuredContent"]["cycles"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1, "{cycles}");
    let task_space = rows[0]["task_space"].as_str().unwrap().to_owned();

    let by_name = mcp.call(3, "forge_cycle", json!({"state": "dark-mode"}));
    assert_eq!(by_name["result"]["structuredContent"]["status"], "AWAITING_WEBGPT_PR", "{by_name}");
    let by_space = mcp.call(4, "forge_cycle", json!({"task_space": task_space}));
    assert_eq!(by_space["result"]["structuredContent"], by_name["result"]["structuredContent"]);
    let next = mcp.call(5, "forge_next", json!({"task_space": task_space}));
    let step = &next["result"]["structuredContent"];
    assert_eq!(step["action"], "send", "{next}");
    let cli = w.sb.run(&["next", "--state", "dark-mode"]).json();
    assert_eq!(step["text"], cli["text"]);

    let outside = mcp.call(6, "forge_next", json!({"state": "/etc/passwd.json"}));
    assert!(is_error(&outside), "{outside}");
    assert_eq!(tool_text(&outside)["status"], "NO_STATE");
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn cancelling_a_run_kills_its_process_group_and_the_server_keeps_serving() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let (config, started, tag) = hang_profile(&w);
    let mut mcp = Mcp::start(&w, &config);
    mcp.initialize();
    mcp.send(json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {
        "name": "webgpt_pr_test", "arguments": {"pr": format!("acme/widget#{n}"), "profile": "hang"}}}));
    let deadline = Instant::now() + HANG_GUARD;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the profile's command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!support::processes_with(&tag).is_empty());
    mcp.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20, "reason": "test"}}),
    );
    let left = support::wait_until_gone(&tag, HANG_GUARD);
    assert!(left.is_empty(), "the cancelled run's processes {left:?} are still alive");
    assert_eq!(mcp.request(21, "ping", json!({}))["result"], json!({}), "the server still serves");
    assert_eq!(mcp.finish(), 0);
    assert!(
        !mcp.transcript.iter().any(|m| m["id"] == json!(20)),
        "a cancelled request gets no response: {:#?}",
        mcp.transcript
    );
}

#[test]
fn eof_during_a_run_stops_it_and_exits_cleanly() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let (config, started, tag) = hang_profile(&w);
    let mut mcp = Mcp::start(&w, &config);
    mcp.initialize();
    mcp.send(json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call", "params": {
        "name": "webgpt_pr_test", "arguments": {"pr": format!("acme/widget#{n}"), "profile": "hang"}}}));
    let deadline = Instant::now() + HANG_GUARD;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the profile's command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(mcp.finish(), 0);
    let left = support::wait_until_gone(&tag, Duration::from_secs(10));
    assert!(left.is_empty(), "the run's processes {left:?} outlived the server");
}

/// A profile whose command marks that it started (in a directory the profile grants) and
/// then hangs; its processes carry a tag in their command line.
fn hang_profile(w: &World) -> (String, std::path::PathBuf, String) {
    let tag = format!("hang-{}", support::world::fresh_secret("").to_lowercase());
    let started = w.shared_dir().join("started");
    let config = format!(
        "{CONFIG}[mcp.profiles.hang]\nwrite_paths = [\"{}\"]\ncommands = [[\"sh\", \"-c\", \"touch '{}'; sleep 300; :\", \"{tag}\"]]\n",
        w.shared_dir().display(),
        started.display()
    );
    (config, started, tag)
}

#[test]
fn a_github_checks_profile_waits_for_the_repositorys_ci_and_runs_nothing_here() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let head = w.emu.pr_head(&repo, n).unwrap();
    let config = format!(
        "[checks]\npoll_min_s = 0.05\npoll_max_s = 0.2\n{CONFIG}[mcp.profiles.ci]\nexecutor = \"github-checks\"\nchecks = [\"test\"]\n"
    );
    let mut mcp = Mcp::start(&w, &config);
    mcp.initialize();
    // The repository's CI: the `test` check runs, then fails.
    let check = github_emulator::CheckRun { name: "test".into(), status: "in_progress".into(), ..Default::default() };
    let id = w.emu.publish_check_run(&head, check).unwrap();
    mcp.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "webgpt_pr_test", "arguments": {"pr": format!("acme/widget#{n}"), "profile": "ci"},
        "_meta": {"progressToken": "ci-10"}}}));
    loop {
        let message = mcp.next();
        assert!(message.get("id") != Some(&json!(10)), "the run ended while its check was running: {message}");
        if message["params"]["message"].as_str().unwrap_or("").starts_with("check test: in_progress") {
            break;
        }
    }
    w.emu.update_check_run(id, "completed", Some("failure")).unwrap();
    let run = mcp.response(10);
    let report = run["result"]["structuredContent"].clone();
    assert_eq!(report["status"], "TEST_FAILED", "{report:#}");
    assert_eq!(report["environment"]["executor"], "github-checks");
    assert_eq!(report["commands"], json!([]));
    assert_eq!(report["checks"][0]["conclusion"], "failure");
    let progress: Vec<(f64, f64, String)> = mcp
        .transcript
        .iter()
        .filter(|m| m["params"]["progressToken"] == "ci-10")
        .map(|m| {
            let p = &m["params"];
            (p["progress"].as_f64().unwrap(), p["total"].as_f64().unwrap(), p["message"].as_str().unwrap().to_owned())
        })
        .collect();
    assert!(progress.windows(2).all(|p| p[0].0 < p[1].0), "progress only grows: {progress:?}");
    assert!(progress.iter().all(|(p, total, _)| p <= total), "{progress:?}");
    let messages: Vec<String> = progress.into_iter().map(|(_, _, m)| m).collect();
    assert!(messages.iter().any(|m| m.starts_with("waiting for the repository's CI")), "{messages:?}");
    assert!(!messages.iter().any(|m| m.starts_with("fetching") || m.starts_with("running command")), "{messages:?}");
    // Nothing was checked out or run here: the PR's objects are in the mirror only, where its
    // change against the base branch is read for its integrity.
    assert!(report["integrity"]["error"].is_null(), "{report:#}");
    let runs = std::fs::read_dir(w.sb.home().join("run")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(runs, 0, "no checkout or run directory on this machine");
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn forge_diff_shows_a_cycles_change_redacted_as_the_cli_does() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let secret = fresh_secret("ghp_");
    w.commit(&repo, "fix", &[("deploy.env", &format!("GITHUB_TOKEN={secret}\n"))], "config");
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("dark-mode", &[]);
    let run = w.forge_pr("dark-mode", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let diff = mcp.call(2, "forge_diff", json!({"state": "dark-mode"}));
    assert!(!is_error(&diff), "{diff}");
    let doc = &diff["result"]["structuredContent"];
    assert_eq!(doc["kind"], "whole_pr");
    assert_eq!(doc["masked"], 1);
    let text = doc["diff"].as_str().unwrap();
    assert!(text.contains("+GITHUB_TOKEN=[REDACTED") && !text.contains(&secret), "{text}");
    let paths: Vec<&str> = doc["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["deploy.env"], "main already has calc.sh as the PR leaves it: {text}");
    let cli = w.run(&["diff", "--state", "dark-mode", "--json"]).json();
    assert_eq!(&cli, doc);
    // One run: nothing to compare with, said as an error document.
    let since = mcp.call(3, "forge_diff", json!({"state": "dark-mode", "since_last": true}));
    assert!(is_error(&since) && tool_text(&since)["error"].as_str().unwrap().contains("first"), "{since}");
    assert!(!mcp.transcript.iter().any(|m| m.to_string().contains(&secret)));
    assert_eq!(mcp.finish(), 0);
}

/// A review cycle over MCP, as the runbook drives it: start, attest (no connector), the dry
/// run, the packet waiting for the person (no tool says yes), the findings, a triage.
#[test]
fn a_review_cycle_over_mcp_waits_for_the_person_before_its_packet_leaves() {
    let w = World::new();
    let repo = w.project("acme", "widget", true);
    let secret = fresh_secret("ghp_");
    w.commit(
        &repo,
        "feature",
        &[("src/app.py", "def main():\n    return 'widget'\n"), (".env", &format!("TOKEN={secret}\n"))],
        "feature",
    );
    let n = w.rt.block_on(w.emu.open_pr(&repo, "feature", "main", "feature")).unwrap();
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let started = mcp.call(2, "forge_review_start", json!({"state": "rv", "pr": format!("acme/widget#{n}")}));
    assert!(!is_error(&started), "{started}");
    assert_eq!(started["result"]["structuredContent"]["status"], "AWAITING_ATTESTATION");
    let attested = mcp.call(
        3,
        "forge_attest",
        json!({"state": "rv", "model": "GPT-5", "connector_attached": false, "conversation_url": "https://chatgpt.com/c/x"}),
    );
    assert_eq!(attested["result"]["structuredContent"]["status"], "AWAITING_PACKET", "{attested}");
    let dry = mcp.call(4, "forge_review_prepare", json!({"state": "rv", "dry_run": true}));
    let doc = &dry["result"]["structuredContent"];
    let env = doc["files"].as_array().unwrap().iter().find(|f| f["path"] == ".env").unwrap();
    assert_eq!(env["included"], false, "{doc}");
    let made = mcp.call(5, "forge_review_prepare", json!({"state": "rv"}));
    assert!(!is_error(&made), "{made}");
    let next = mcp.call(6, "forge_next", json!({"state": "rv"}));
    assert_eq!(next["result"]["structuredContent"]["action"], "wait_for_human", "{next}");
    let early = mcp.call(7, "forge_review_reply", json!({"state": "rv", "text": "NO FINDINGS"}));
    assert!(is_error(&early), "a reply before the request was sent: {early}");
    let review = mcp.call(8, "forge_review", json!({"state": "rv"}));
    assert_eq!(review["result"]["structuredContent"]["review"]["route"], "LOCAL_BUNDLE", "{review}");
    assert!(!mcp.transcript.iter().any(|m| m.to_string().contains(&secret)));
    assert_eq!(mcp.finish(), 0);
}

/// Without a token the tools that need GitHub give the CLI's NO_TOKEN error, word for word,
/// and ask GitHub nothing; the server keeps serving.
#[test]
fn without_a_token_the_github_tools_say_no_token_as_the_cli_does() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let pr = format!("acme/widget#{n}");
    let empty = w.path("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let cli = w.run_env(&["status", "--pr", &pr], &[("PATH", empty.to_str().unwrap())]);
    assert_eq!((cli.code, cli.json()["status"].as_str()), (2, Some("NO_TOKEN")), "{}", cli.stdout);
    w.emu.clear_requests();
    let mut mcp = Mcp::start_without_token(&w, CONFIG);
    mcp.initialize();
    let status = mcp.call(2, "webgpt_pr_status", json!({"pr": pr}));
    let test = mcp.call(3, "webgpt_pr_test", json!({"pr": pr, "profile": "project"}));
    for response in [&status, &test] {
        assert!(is_error(response), "{response}");
        let doc = tool_text(response);
        assert_eq!(doc["status"], "NO_TOKEN", "{doc:#}");
        assert_eq!(doc["error"], cli.json()["error"], "the CLI's words");
    }
    assert!(w.emu.requests().is_empty(), "GitHub was asked nothing: {:?}", w.emu.requests());
    let cycles = mcp.call(4, "forge_cycles", json!({}));
    assert!(!is_error(&cycles), "what needs no GitHub still works: {cycles}");
    assert_eq!(mcp.finish(), 0);
}

/// The relay loop an agent without a shell drives: start (a person confirms on a terminal),
/// next, sent, reply, a failing test, a fix pushed, a passing test, `READY_TO_MERGE`; the
/// same use cases as the CLI, journaled as the agent.
#[test]
fn a_whole_relay_loop_over_mcp_with_the_person_confirming_on_a_terminal() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();

    let started = mcp.call(
        2,
        "forge_start",
        json!({"state": "calc", "request": "Make calc.sh add", "webgpt_question": QUESTION, "intent_brief": BRIEF}),
    );
    assert!(!is_error(&started), "{started}");
    let state = &started["result"]["structuredContent"];
    assert_eq!(state["status"], "AWAITING_BRIEF_CONFIRMATION", "{state:#}");
    assert_eq!(state["max_iterations"], 5, "the default cap");
    assert!(w.sb.home().join("cycles/calc.json").exists());
    let waiting = mcp.call(3, "forge_next", json!({"state": "calc"}));
    assert_eq!(waiting["result"]["structuredContent"]["action"], "wait_for_human", "{waiting}");
    // Nothing to send, nothing to test before the person confirms; GitHub is not asked.
    w.emu.clear_requests();
    let early = mcp.call(4, "forge_sent", json!({"state": "calc"}));
    assert!(is_error(&early), "{early}");
    let early = mcp.call(5, "forge_test", json!({"state": "calc", "pr": "acme/widget#1", "profile": "project"}));
    assert!(is_error(&early), "{early}");
    assert_eq!(tool_text(&early)["status"], "REFUSED");
    assert!(tool_text(&early)["error"].as_str().unwrap().contains("brief must be confirmed"), "{early}");
    assert!(w.emu.requests().is_empty(), "{:?}", w.emu.requests());

    // The person confirms, on a terminal: MCP has no tool for it.
    let tmux = Tmux::start(&w.terminal("confirm --state calc"), 160, 40);
    tmux.wait_for("[y/N]", HANG_GUARD);
    tmux.send_keys(&["y", "Enter"]);
    tmux.wait_for("EXIT=0", HANG_GUARD);

    let send = mcp.call(6, "forge_next", json!({"state": "calc"}));
    let step = send["result"]["structuredContent"].clone();
    assert_eq!(step["action"], "send", "{send}");
    assert!(step["text"].as_str().unwrap().contains("## Confirmed user intent"), "{step:#}");
    let sent = mcp.call(7, "forge_sent", json!({"state": "calc"}));
    assert_eq!(sent["result"]["structuredContent"]["status"], "AWAITING_WEBGPT_PR", "{sent}");
    let again = mcp.call(8, "forge_sent", json!({"state": "calc"}));
    assert_eq!(tool_text(&again)["status"], "ALREADY_SENT", "{again}");

    // WebGPT opens a PR that does not fix it yet.
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let reply = mcp.call(
        9,
        "forge_reply",
        json!({"state": "calc", "text": format!("Opened it.\n\nPR_URL: https://github.com/acme/widget/pull/{n}")}),
    );
    let doc = &reply["result"]["structuredContent"];
    assert_eq!((doc["status"].as_str(), doc["next"]["action"].as_str()), (Some("PR_FOUND"), Some("run")), "{doc:#}");

    mcp.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "forge_test", "arguments": {"state": "calc", "pr": format!("acme/widget#{n}"), "profile": "project"},
        "_meta": {"progressToken": "loop-10"}}}));
    let failed = mcp.response(10);
    assert!(!is_error(&failed), "{failed}");
    let state = &failed["result"]["structuredContent"];
    assert_eq!(state["status"], "AWAITING_WEBGPT_FIX", "{state:#}");
    assert_eq!(state["report"]["status"], "TEST_FAILED");
    assert_eq!(state["iteration"], 1);
    assert!(
        mcp.transcript
            .iter()
            .any(|m| m["params"]["progressToken"] == "loop-10" && m["params"]["message"] == "finished: TEST_FAILED"),
        "{:#?}",
        mcp.transcript
    );
    // As the runbook's `forge --pr … --post-comment`: the result is on the PR.
    let comments = w.comments(&repo, n);
    assert!(comments.len() == 1 && comments[0].contains("TEST_FAILED"), "{comments:?}");

    let handoff = mcp.call(11, "forge_next", json!({"state": "calc"}));
    let step = &handoff["result"]["structuredContent"];
    assert_eq!(step["action"], "send", "{handoff}");
    assert!(step["text"].as_str().unwrap().contains("TEST_FAILED"), "{step:#}");
    assert!(!is_error(&mcp.call(12, "forge_sent", json!({"state": "calc"}))));

    // The fix is pushed; the reply names the PR again, and its head is looked at on GitHub.
    let fixed = w.commit(&repo, "fix", &[("calc.sh", CALC_FIXED)], "fix: add");
    let reply =
        mcp.call(13, "forge_reply", json!({"state": "calc", "text": format!("Pushed.\nPR_URL: acme/widget#{n}")}));
    let doc = &reply["result"]["structuredContent"];
    assert_eq!(doc["status"], "PR_FOUND", "{doc:#}");
    assert!(doc["head_check"].as_str().unwrap().starts_with(&format!("changed: {}", &fixed[..12])), "{doc:#}");

    // The second run names no profile: the cycle's stored commands are reused.
    let passed = mcp.call(14, "forge_test", json!({"state": "calc", "pr": format!("acme/widget#{n}")}));
    assert!(!is_error(&passed), "{passed}");
    let state = &passed["result"]["structuredContent"];
    assert_eq!(state["status"], "READY_TO_MERGE", "{state:#}");
    assert_eq!((state["report"]["status"].as_str(), state["iteration"].as_u64()), (Some("TEST_PASSED"), Some(2)));
    assert_eq!(state["report"]["head_sha"], fixed.as_str());
    assert!(w.comments(&repo, n).last().is_some_and(|c| c.contains("TEST_PASSED")), "{:?}", w.comments(&repo, n));

    // The same next step as the CLI's (one use case), and a passed cycle is not tested again.
    let next = mcp.call(15, "forge_next", json!({"state": "calc"}));
    assert_eq!(next["result"]["structuredContent"], w.run(&["next", "--state", "calc"]).json());
    w.emu.clear_requests();
    let refused =
        mcp.call(16, "forge_test", json!({"state": "calc", "pr": format!("acme/widget#{n}"), "profile": "project"}));
    assert_eq!(tool_text(&refused)["status"], "REFUSED", "{refused}");
    assert!(w.emu.requests().is_empty(), "{:?}", w.emu.requests());

    // Journaled as the agent, except the person's confirmation.
    let log = w.run(&["log", "--state", "calc"]).json();
    let events = log["events"].as_array().unwrap();
    let actor = |kind: &str| -> Vec<String> {
        events.iter().filter(|e| e["kind"] == kind).map(|e| e["actor"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(actor("brief_confirmed"), ["human"]);
    assert_eq!(actor("run_finished"), ["agent", "agent"]);
    assert_eq!(actor("reply_recorded"), ["agent", "agent"]);
    assert_eq!(actor("message_sent"), ["agent", "agent"]);
    assert!(!mcp.transcript.iter().any(|m| m.to_string().contains(&w.token)), "the token never leaves the server");
    assert_eq!(mcp.finish(), 0);
}

/// What a profile runs is readable before the first run: the agent picks the profile that runs
/// the project's tests from its commands, not from its name.
#[test]
fn forge_profiles_says_what_each_profile_runs_and_where() {
    let w = World::new();
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let listed = mcp.call(2, "forge_profiles", json!({}));
    assert!(!is_error(&listed), "{listed}");
    let doc = &listed["result"]["structuredContent"];
    let project = doc["profiles"].as_array().unwrap().iter().find(|p| p["name"] == "project").unwrap().clone();
    assert_eq!(project["commands"], json!([["sh", "test.sh"]]), "{doc:#}");
    assert_eq!((project["network"].as_str(), project["setup"].clone()), (Some("off"), json!([])), "{doc:#}");
    assert!(project["setup_network"].is_null(), "no setup, no setup network: {doc:#}");
    assert_eq!(doc["repositories"], json!([{"repository": "acme/widget", "allowed_by": "config"}]), "{doc:#}");
    assert_eq!(mcp.finish(), 0);
}

/// An agent without a shell stops a cycle for a reason the runbook names; the cap is never a
/// reason it may give, and the person lifts the block.
#[test]
fn forge_block_stops_a_cycle_for_the_runbooks_reasons_only() {
    let w = World::new();
    w.project("acme", "widget", false);
    w.cycle("blocked", &[]);
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let cap =
        mcp.call(2, "forge_block", json!({"state": "blocked", "status": "BLOCKED_MAX_ITERATIONS", "reason": "tired"}));
    assert_eq!(tool_text(&cap)["status"], "REFUSED", "{cap}");
    assert!(tool_text(&cap)["error"].as_str().unwrap().contains("forgeloop extend"), "{cap}");
    let silent =
        mcp.call(3, "forge_block", json!({"state": "blocked", "status": "BLOCKED_MODEL_UNAVAILABLE", "reason": " "}));
    assert!(is_error(&silent), "a block needs a reason: {silent}");
    let blocked = mcp.call(
        4,
        "forge_block",
        json!({"state": "blocked", "status": "BLOCKED_MODEL_UNAVAILABLE", "reason": "the model picker has no Pro model"}),
    );
    assert!(!is_error(&blocked), "{blocked}");
    assert_eq!(blocked["result"]["structuredContent"]["status"], "BLOCKED_MODEL_UNAVAILABLE");
    let log = w.run(&["log", "--state", "blocked"]).json();
    let event = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "blocked").unwrap().clone();
    assert_eq!(
        (event["actor"].as_str(), event["data"]["reason"].as_str()),
        (Some("agent"), Some("the model picker has no Pro model"))
    );
    // Only a person lifts it: no tool unblocks.
    assert_eq!(w.run(&["unblock", "--state", "blocked"]).json()["status"], "NOT_A_TERMINAL");
    assert_eq!(mcp.finish(), 0);
}

/// The cap holds over MCP: the run past it is not made, GitHub is not asked, the cycle is
/// blocked and only a person (`extend`, on a terminal) raises it.
#[test]
fn forge_test_enforces_the_cap() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    w.cycle("capped", &["--max-iterations", "1"]);
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let pr = format!("acme/widget#{n}");
    let reply = mcp.call(2, "forge_reply", json!({"state": "capped", "text": format!("PR_URL: {pr}")}));
    assert_eq!(reply["result"]["structuredContent"]["status"], "PR_FOUND", "{reply}");
    let first = mcp.call(3, "forge_test", json!({"state": "capped", "pr": pr, "profile": "project"}));
    assert_eq!(first["result"]["structuredContent"]["report"]["status"], "TEST_FAILED", "{first}");
    w.commit(&repo, "fix", &[("calc.sh", CALC_FIXED)], "fix: add");

    w.emu.clear_requests();
    let capped = mcp.call(4, "forge_test", json!({"state": "capped", "pr": pr, "profile": "project"}));
    assert!(is_error(&capped), "a cycle blocked by the run is an error result: {capped}");
    let state = tool_text(&capped);
    assert_eq!((state["status"].as_str(), state["iteration"].as_u64()), (Some("BLOCKED_MAX_ITERATIONS"), Some(1)));
    let after = mcp.call(5, "forge_test", json!({"state": "capped", "pr": pr, "profile": "project"}));
    assert_eq!(tool_text(&after)["status"], "REFUSED", "{after}");
    assert!(tool_text(&after)["error"].as_str().unwrap().contains("forgeloop extend"), "{after}");
    assert!(w.emu.requests().is_empty(), "past the cap GitHub is not asked: {:?}", w.emu.requests());
    assert_eq!(mcp.finish(), 0);
}

/// What the loop tools refuse, each before any GitHub request and without changing a file:
/// a profile that is not configured, a repository that is not allowed, commands or a cap from
/// the caller (unknown fields), a path for a new cycle, a cycle forgeloop does not know.
#[test]
fn the_loop_tools_refuse_before_any_github_request() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_BUGGY);
    let other = w.project("stranger", "tool", false);
    let m = w.pr(&other, "x", CALC_BUGGY);
    w.cycle("c", &[]);
    let mut mcp = Mcp::start(&w, CONFIG);
    mcp.initialize();
    let reply = mcp.call(2, "forge_reply", json!({"state": "c", "text": format!("PR_URL: stranger/tool#{m}")}));
    assert_eq!(reply["result"]["structuredContent"]["status"], "PR_FOUND", "{reply}");
    let snapshot = || {
        let mut files = Vec::new();
        for entry in walk(&w.sb.home()) {
            files.push((entry.clone(), std::fs::read(&entry).unwrap()));
        }
        files
    };
    let before = snapshot();
    w.emu.clear_requests();

    let mut id = 10;
    let mut refused = |mcp: &mut Mcp, tool: &str, arguments: Value, expected: &str| {
        id += 1;
        let answer = mcp.call(id, tool, arguments.clone());
        assert!(is_error(&answer), "{tool} {arguments}: {answer}");
        let text = match tool_text(&answer) {
            Value::String(text) => text,
            doc => format!("{} {}", doc["status"].as_str().unwrap(), doc["error"].as_str().unwrap()),
        };
        assert!(text.contains(expected), "{tool} {arguments}: {expected:?} not in {text}");
    };
    let foreign = format!("stranger/tool#{m}");
    let ours = format!("acme/widget#{n}");
    refused(
        &mut mcp,
        "forge_test",
        json!({"state": "c", "pr": foreign, "profile": "project"}),
        "stranger/tool is not allowed",
    );
    refused(
        &mut mcp,
        "forge_test",
        json!({"state": "c", "pr": ours, "profile": "rm-rf"}),
        "unknown test profile \"rm-rf\"",
    );
    refused(
        &mut mcp,
        "forge_test",
        json!({"state": "c", "pr": ours, "profile": "project", "commands": [["sh", "-c", "id"]]}),
        "unknown field `commands`",
    );
    refused(
        &mut mcp,
        "forge_test",
        json!({"state": "c", "pr": ours, "commands": [["sh", "-c", "id"]]}),
        "unknown field",
    );
    refused(&mut mcp, "forge_test", json!({"state": "/etc/passwd.json", "pr": ours, "profile": "project"}), "NO_STATE");
    let start = json!({"state": "n", "request": "r", "webgpt_question": QUESTION, "intent_brief": BRIEF});
    for (extra, value) in
        [("max_iterations", json!(50)), ("await_confirmation", json!(false)), ("continue_from", json!("c"))]
    {
        let mut arguments = start.clone();
        arguments[extra] = value;
        refused(&mut mcp, "forge_start", arguments, &format!("unknown field `{extra}`"));
    }
    for path in ["../escape", "/tmp/x.json", "x.json", "~/x"] {
        let mut arguments = start.clone();
        arguments["state"] = json!(path);
        refused(&mut mcp, "forge_start", arguments, "takes a bare cycle name");
    }
    refused(&mut mcp, "forge_sent", json!({"state": "/etc/passwd.json"}), "NO_STATE");
    refused(&mut mcp, "forge_reply", json!({"state": "c", "text": "x", "reason": "because"}), "only with a class");
    refused(
        &mut mcp,
        "forge_reply",
        json!({"state": "c", "text": "x", "as": "MERGED", "reason": "r"}),
        "unknown reply class",
    );
    assert!(w.emu.requests().is_empty(), "{:?}", w.emu.requests());
    assert_eq!(snapshot(), before, "no refusal changed a file");
    assert_eq!(mcp.finish(), 0);

    // Without profiles in the config, nothing is tested.
    let mut bare = Mcp::start(&w, "");
    bare.initialize();
    let none = bare.call(2, "forge_test", json!({"state": "c", "pr": ours, "profile": "project"}));
    assert!(tool_text(&none)["error"].as_str().unwrap().contains("no test profiles are configured"), "{none}");
    assert!(w.emu.requests().is_empty(), "{:?}", w.emu.requests());
    assert_eq!(bare.finish(), 0);
}

/// Every file under `dir`, sorted.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() { stack.push(path) } else { files.push(path) }
        }
    }
    files.sort();
    files
}
