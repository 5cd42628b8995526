//! The demo's connector cycle (design §8.1, §9): `forgeloop serve` runs on the demo's home as
//! its own process, and a scripted chat client — the stand-in for ChatGPT calling a remote MCP
//! server — connects to it as a real one would: discovery from the 401 challenge, dynamic
//! registration, the authorization page with the pairing code read from `serve`'s first line
//! (as the person would read it to the chat), PKCE S256, the token, then MCP over Streamable
//! HTTP: `list_repositories`, `start_cycle`, waiting for the person to confirm the brief,
//! `test_pr` (fails), a fix pushed to the PR, `test_pr` (passes). No relay, no coordinator.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::cycle::actions;
use crate::domain::state::Actor;

use super::DemoError;
use super::coordinator::{Confirmer, Demo, Finished};
use super::http::{self, HttpError, Request, Response, Target};
use super::scenarios::Scenario;
use super::webgpt::WebGpt;

/// The chat client's registered name: its cycles' driver is `connector:<this>`.
pub const CLIENT_NAME: &str = "demo-chat";
/// Where the authorization server sends the browser back (nothing listens: the client reads the
/// redirect's `Location` itself, as a browser hands it to the client).
const REDIRECT_URI: &str = "http://127.0.0.1:1/callback";
/// The MCP revision the client speaks (the one with an `initialize` handshake and sessions).
const PROTOCOL_VERSION: &str = "2025-06-18";
/// How long `serve` may take to print its first line.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long an ordinary request may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(30);
/// How long a `test_pr` may take (a fetch, a checkout and the tests in the sandbox).
const TEST_LIMIT: Duration = Duration::from_secs(180);
/// How long one `wait` call waits for the person, in seconds.
const WAIT_SECONDS: u64 = 5;

/// `serve`'s first line: where it serves and the pairing code.
#[derive(Debug, Clone)]
pub struct Serving {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `<url>/mcp`.
    pub mcp_url: String,
    /// `XXXX-XXXX`, as the person reads it.
    pub pairing_code: String,
}

/// The running `forgeloop serve` process.
pub struct ServeProcess {
    child: Child,
    /// What its first line said.
    pub serving: Serving,
}

impl ServeProcess {
    /// Starts `forgeloop serve --listen 127.0.0.1:0` on the demo's home (this same binary), with
    /// the emulator's API and token, and reads its first line. Its log goes to `serve.log` in
    /// the sandbox.
    pub async fn start(demo: &Demo, token: &str) -> Result<ServeProcess, DemoError> {
        let exe = std::env::current_exe().map_err(|e| DemoError::io("cannot find the forgeloop binary", e))?;
        let home = demo.ctx.home.root().to_path_buf();
        let config = demo.ctx.config_path.clone().unwrap_or_else(|| home.join("config.toml"));
        let log_path = home.join(LOG_FILE);
        let log = std::fs::File::create(&log_path)
            .map_err(|e| DemoError::io(format!("cannot create {}", log_path.display()), e))?;
        let mut command = Command::new(exe);
        command
            .arg("--home")
            .arg(&home)
            .arg("--registry")
            .arg(&demo.ctx.registry)
            .arg("--config")
            .arg(&config)
            .arg("--github-api")
            .arg(&demo.ctx.github_api)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .current_dir(&home)
            .env("GH_TOKEN", token)
            .env_remove("GITHUB_TOKEN")
            .env("FORGELOOP_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| DemoError::io("cannot start forgeloop serve", e))?;
        match first_line(&mut child).await {
            Ok(serving) => Ok(ServeProcess { child, serving }),
            Err(why) => {
                // Nothing of it outlives the demo, not even a zombie.
                let _ = child.kill().await;
                Err(DemoError::Serve(format!("{why} (its log: {})", log_path.display())))
            }
        }
    }

    /// Stops it as the person would (SIGTERM: it removes its `serving.json`), and waits; kills
    /// it if it does not end within a few seconds.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id().and_then(|pid| i32::try_from(pid).ok()) {
            // SAFETY: kill(2) on the pid of our own child, which we have not reaped yet.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
    }
}

/// Reads `serve`'s first line, as the person reads it on their terminal: where it serves and
/// the pairing code.
async fn first_line(child: &mut Child) -> Result<Serving, String> {
    let Some(stdout) = child.stdout.take() else {
        return Err("forgeloop serve has no stdout".into());
    };
    let mut lines = BufReader::new(stdout).lines();
    let first = tokio::time::timeout(START_LIMIT, lines.next_line()).await;
    // Whatever else it prints goes nowhere, but its stdout stays open until it ends.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let line = match first {
        Ok(Ok(Some(line))) => line,
        Ok(Ok(None)) => return Err("forgeloop serve exited without its first line".into()),
        Ok(Err(e)) => return Err(format!("cannot read forgeloop serve's first line: {e}")),
        Err(_) => return Err(format!("forgeloop serve said nothing within {START_LIMIT:?}")),
    };
    let doc: Value =
        serde_json::from_str(&line).map_err(|_| format!("forgeloop serve's first line is not JSON: {line}"))?;
    let field = |name: &str| doc.get(name).and_then(Value::as_str).map(str::to_owned);
    match (doc.get("status").and_then(Value::as_str), field("url"), field("mcp_url"), field("pairing_code")) {
        (Some("SERVING"), Some(url), Some(mcp_url), Some(pairing_code)) => Ok(Serving { url, mcp_url, pairing_code }),
        _ => Err(format!("forgeloop serve did not say SERVING: {line}")),
    }
}

/// `serve`'s log in the sandbox.
pub const LOG_FILE: &str = "serve.log";

/// Why the scripted client stopped short.
#[derive(Debug, thiserror::Error)]
enum ClientError {
    #[error("the demo was stopped")]
    Stopped,
    #[error("{what}: {source}")]
    Http { what: String, source: HttpError },
    #[error("{what}: no answer within {limit:?}")]
    Timeout { what: String, limit: Duration },
    #[error("{what}: HTTP {status}: {body}")]
    Status { what: String, status: u16, body: String },
    #[error("{0}")]
    Protocol(String),
    #[error("the tool {tool} failed: {text}")]
    Tool { tool: String, text: String },
    #[error("{0}")]
    Demo(String),
}

/// The scripted chat client's connection to `serve`.
struct Chat {
    stop: watch::Receiver<bool>,
    mcp: Target,
    token: Option<String>,
    session: Option<String>,
    next_id: u64,
}

impl Chat {
    /// One request, given up when the demo stops or `limit` passes.
    async fn send(
        &mut self,
        what: &str,
        request: Request<'_>,
        limit: Duration,
        want: &[u16],
    ) -> Result<Response, ClientError> {
        if *self.stop.borrow() {
            return Err(ClientError::Stopped);
        }
        let answer = tokio::select! {
            answer = tokio::time::timeout(limit, http::send(request)) => answer,
            _ = self.stop.wait_for(|stopped| *stopped) => return Err(ClientError::Stopped),
        };
        let answer = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(source)) => return Err(ClientError::Http { what: what.to_owned(), source }),
            Err(_) => return Err(ClientError::Timeout { what: what.to_owned(), limit }),
        };
        if !want.contains(&answer.status) {
            let mut body = answer.text();
            body.truncate(500);
            return Err(ClientError::Status { what: what.to_owned(), status: answer.status, body });
        }
        Ok(answer)
    }

    async fn get(&mut self, what: &str, url: &str, want: &[u16]) -> Result<Response, ClientError> {
        let target = target(what, url)?;
        let request = Request { method: "GET", target: &target, headers: Vec::new(), body: None };
        self.send(what, request, REQUEST_LIMIT, want).await
    }

    async fn post_form(&mut self, what: &str, url: &str, form: &[(&str, &str)]) -> Result<Response, ClientError> {
        let target = target(what, url)?;
        let body = Some(("application/x-www-form-urlencoded", http::form_encode(form).into_bytes()));
        let request = Request { method: "POST", target: &target, headers: Vec::new(), body };
        self.send(what, request, REQUEST_LIMIT, &[200, 302]).await
    }

    /// Everything a remote client does before its first tool call: discovery, registration,
    /// the authorization page with the pairing code, consent, the token, `initialize`.
    async fn connect(serving: &Serving, stop: watch::Receiver<bool>) -> Result<Chat, ClientError> {
        let mcp = target("the MCP URL", &serving.mcp_url)?;
        let mut chat = Chat { stop, mcp, token: None, session: None, next_id: 0 };

        // Unauthenticated, /mcp answers 401 and says where its metadata is (RFC 9728 §5.1).
        let challenge = chat.rpc_raw("initialize without a token", "initialize", initialize_params(), &[401]).await?;
        let www = challenge.header("www-authenticate").unwrap_or_default().to_owned();
        let metadata_url = www
            .split("resource_metadata=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .ok_or_else(|| ClientError::Protocol(format!("the 401 names no resource_metadata: {www:?}")))?
            .to_owned();
        let resource_doc = json_of(chat.get("the protected-resource metadata", &metadata_url, &[200]).await?)?;
        let resource = text_field(&resource_doc, "resource")?;
        if resource != serving.mcp_url {
            return Err(ClientError::Protocol(format!(
                "the metadata's resource {resource} is not {}",
                serving.mcp_url
            )));
        }
        let issuer = resource_doc
            .get("authorization_servers")
            .and_then(|a| a.get(0))
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::Protocol("no authorization server in the metadata".into()))?
            .trim_end_matches('/')
            .to_owned();
        let server_url = format!("{issuer}/.well-known/oauth-authorization-server");
        let server = json_of(chat.get("the authorization-server metadata", &server_url, &[200]).await?)?;
        let s256 = server
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
        if !s256 {
            return Err(ClientError::Protocol("the authorization server does not offer PKCE S256".into()));
        }
        let authorize = text_field(&server, "authorization_endpoint")?;
        let token_url = text_field(&server, "token_endpoint")?;
        let register_url = text_field(&server, "registration_endpoint")?;

        // Dynamic client registration (RFC 7591): a public client.
        let registration = json!({
            "client_name": CLIENT_NAME,
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        let target = target("registration", &register_url)?;
        let body = Some(("application/json", registration.to_string().into_bytes()));
        let request = Request { method: "POST", target: &target, headers: Vec::new(), body };
        let registered = json_of(chat.send("registration", request, REQUEST_LIMIT, &[201]).await?)?;
        let client_id = text_field(&registered, "client_id")?;

        // The authorization request, with PKCE S256 and the resource (RFC 8707).
        let verifier = random_urlsafe(32)?;
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = random_urlsafe(12)?;
        let query = http::form_encode(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT_URI),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
            ("resource", &serving.mcp_url),
        ]);
        let page = chat.get("the authorization page", &format!("{authorize}?{query}"), &[200]).await?.text();
        // The person types the pairing code `serve` printed into the page, and submits it.
        let (action, mut fields) = http::first_form(&page)
            .ok_or_else(|| ClientError::Protocol("the authorization page has no form".into()))?;
        fields.push(("pairing_code".into(), serving.pairing_code.clone()));
        let consent = chat.submit("the pairing code", &issuer, &action, &fields).await?;
        if consent.status != 200 {
            return Err(ClientError::Protocol(format!("the pairing code was refused (HTTP {})", consent.status)));
        }
        // The consent page: the person reads what the client may do, and allows it.
        let (action, mut fields) = http::first_form(&consent.text())
            .ok_or_else(|| ClientError::Protocol("the consent page has no form".into()))?;
        fields.push(("decision".into(), "allow".into()));
        let redirect = chat.submit("the consent", &issuer, &action, &fields).await?;
        let location = match (redirect.status, redirect.header("location")) {
            (302, Some(location)) => location.to_owned(),
            (status, _) => return Err(ClientError::Protocol(format!("the consent did not redirect (HTTP {status})"))),
        };
        // Where the browser was sent, read by the URL parser: the registered redirect, and its query.
        let redirected = url::Url::parse(&location)
            .ok()
            .filter(|url| url[..url::Position::AfterPath] == *REDIRECT_URI)
            .ok_or_else(|| ClientError::Protocol(format!("redirected elsewhere: {location}")))?;
        let query = redirected.query().unwrap_or_default();
        if http::query_value(query, "state").as_deref() != Some(state.as_str()) {
            return Err(ClientError::Protocol("the redirect's state is not the one sent".into()));
        }
        let code = http::query_value(query, "code")
            .ok_or_else(|| ClientError::Protocol("the redirect carries no code".into()))?;

        // The token, proving the verifier.
        let issued = chat
            .post_form(
                "the token exchange",
                &token_url,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", REDIRECT_URI),
                    ("client_id", &client_id),
                    ("code_verifier", &verifier),
                    ("resource", &serving.mcp_url),
                ],
            )
            .await?;
        let issued = json_of(issued)?;
        chat.token = Some(text_field(&issued, "access_token")?);

        // MCP: initialize (the session starts), then the initialized notification.
        let answer = chat.rpc_raw("initialize", "initialize", initialize_params(), &[200]).await?;
        chat.session = answer.header("mcp-session-id").map(str::to_owned);
        let id = chat.next_id;
        let result = rpc_result(&answer, id)?;
        let server_name = result.pointer("/serverInfo/name").and_then(Value::as_str).unwrap_or_default();
        if server_name != "forgeloop" {
            return Err(ClientError::Protocol(format!("the server says it is {server_name:?}, not forgeloop")));
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        chat.post_mcp("the initialized notification", &note, REQUEST_LIMIT, &[202, 200]).await?;
        Ok(chat)
    }

    /// Submits a form of a page served at `base` as a browser would.
    async fn submit(
        &mut self,
        what: &str,
        base: &str,
        action: &str,
        fields: &[(String, String)],
    ) -> Result<Response, ClientError> {
        let url = if action.starts_with('/') { format!("{base}{action}") } else { action.to_owned() };
        let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let target = target(what, &url)?;
        let body = Some(("application/x-www-form-urlencoded", http::form_encode(&pairs).into_bytes()));
        let request = Request { method: "POST", target: &target, headers: Vec::new(), body };
        self.send(what, request, REQUEST_LIMIT, &[200, 302, 403]).await
    }

    /// POSTs one JSON-RPC message to `/mcp` with the token, the session and the version.
    async fn post_mcp(
        &mut self,
        what: &str,
        message: &Value,
        limit: Duration,
        want: &[u16],
    ) -> Result<Response, ClientError> {
        let mut headers = vec![("Accept", "application/json, text/event-stream".to_owned())];
        headers.push(("MCP-Protocol-Version", PROTOCOL_VERSION.to_owned()));
        if let Some(token) = &self.token {
            headers.push(("Authorization", format!("Bearer {token}")));
        }
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session.clone()));
        }
        let mcp = self.mcp.clone();
        let body = Some(("application/json", message.to_string().into_bytes()));
        let request = Request { method: "POST", target: &mcp, headers, body };
        self.send(what, request, limit, want).await
    }

    async fn rpc_raw(
        &mut self,
        what: &str,
        method: &str,
        params: Value,
        want: &[u16],
    ) -> Result<Response, ClientError> {
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.post_mcp(what, &message, REQUEST_LIMIT, want).await
    }

    /// `tools/call`: the tool's structured answer; an error result is an error.
    async fn call(&mut self, tool: &str, arguments: Value, limit: Duration) -> Result<Value, ClientError> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        });
        let answer = self.post_mcp(tool, &message, limit, &[200]).await?;
        let result = rpc_result(&answer, id)?;
        let text = result.pointer("/content/0/text").and_then(Value::as_str).unwrap_or_default().to_owned();
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(ClientError::Tool { tool: tool.to_owned(), text });
        }
        match result.get("structuredContent") {
            Some(value) => Ok(value.clone()),
            None => serde_json::from_str(&text)
                .map_err(|_| ClientError::Protocol(format!("{tool} answered no JSON: {text}"))),
        }
    }
}

fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
    })
}

fn target(what: &str, url: &str) -> Result<Target, ClientError> {
    Target::parse(url).map_err(|source| ClientError::Http { what: what.to_owned(), source })
}

fn json_of(answer: Response) -> Result<Value, ClientError> {
    answer.json().ok_or_else(|| ClientError::Protocol(format!("not JSON: {}", answer.text())))
}

fn text_field(doc: &Value, name: &str) -> Result<String, ClientError> {
    doc.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ClientError::Protocol(format!("the answer has no {name}: {doc}")))
}

/// The JSON-RPC result for request `id`, from a JSON body or an event stream's `data:` lines.
fn rpc_result(answer: &Response, id: u64) -> Result<Value, ClientError> {
    let event_stream = answer.header("content-type").is_some_and(|t| t.starts_with("text/event-stream"));
    let messages = if event_stream { http::sse_messages(&answer.text()) } else { answer.json().into_iter().collect() };
    let message = messages
        .into_iter()
        .find(|m| m.get("id").and_then(Value::as_u64) == Some(id))
        .ok_or_else(|| ClientError::Protocol(format!("no answer to request {id}: {}", answer.text())))?;
    if let Some(error) = message.get("error") {
        return Err(ClientError::Protocol(format!("request {id} failed: {error}")));
    }
    message.get("result").cloned().ok_or_else(|| ClientError::Protocol(format!("request {id}: no result")))
}

fn random_urlsafe(n: usize) -> Result<String, ClientError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| ClientError::Demo(format!("no randomness: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The five fields of a brief written as `Label: value` lines, in order.
fn brief_fields(brief: &str) -> Option<[String; 5]> {
    let values: Vec<String> =
        brief.lines().filter_map(|line| line.split_once(": ").map(|(_, value)| value.trim().to_owned())).collect();
    values.try_into().ok()
}

/// Runs the connector scenario: connects to `serve`, starts the cycle, lets the person (or the
/// headless stand-in) confirm it, tests the PR, pushes the fix, tests again.
pub async fn drive(
    demo: Arc<Demo>,
    scenario: Scenario,
    serving: Result<Serving, String>,
    stop: watch::Receiver<bool>,
) -> Finished {
    let mut run = Run { demo, scenario, stop, cycle: None, steps: 0 };
    let result = match serving {
        Ok(serving) => run.run(&serving).await,
        Err(why) => Err(ClientError::Demo(why)),
    };
    let (steps, cycle) = (run.steps, run.cycle);
    match result {
        Ok(()) => Finished { error: None, stopped: false, steps, cycle },
        Err(ClientError::Stopped) => Finished { error: None, stopped: true, steps, cycle },
        Err(err) => {
            let message = run.demo.ctx.redactor.redact(&err.to_string()).into_owned();
            Finished { error: Some(message), stopped: false, steps, cycle }
        }
    }
}

struct Run {
    demo: Arc<Demo>,
    scenario: Scenario,
    stop: watch::Receiver<bool>,
    /// The cycle `start_cycle` made.
    cycle: Option<String>,
    steps: u32,
}

impl Run {
    async fn pause(&mut self, steps: f64) -> Result<(), ClientError> {
        let pace = self.demo.pace;
        pace.pause(steps, &mut self.stop).await.map_err(|_| ClientError::Stopped)
    }

    async fn run(&mut self, serving: &Serving) -> Result<(), ClientError> {
        self.pause(1.0 + self.scenario.start_after).await?;
        let mut chat = Chat::connect(serving, self.stop.clone()).await?;
        self.steps += 1;

        let listed = chat.call("list_repositories", json!({}), REQUEST_LIMIT).await?;
        let repository = self.demo.repo.repo.full_name();
        let usable = listed.get("repositories").and_then(Value::as_array).is_some_and(|repos| {
            repos.iter().any(|r| r["repository"].as_str() == Some(repository.as_str()) && r["profile"].is_string())
        });
        if !usable {
            return Err(ClientError::Protocol(format!("{repository} is not listed with a test profile: {listed}")));
        }

        self.pause(1.0).await?;
        let [goal, success, scope, constraints, validation] = brief_fields(&self.scenario.brief)
            .ok_or_else(|| ClientError::Demo("the scenario's brief does not have five fields".into()))?;
        let started = chat
            .call(
                "start_cycle",
                json!({
                    "repository": repository,
                    "goal": goal,
                    "success": success,
                    "scope": scope,
                    "constraints": constraints,
                    "validation": validation,
                    "question": self.scenario.question,
                }),
                REQUEST_LIMIT,
            )
            .await?;
        let cycle = text_field(&started, "cycle")?;
        self.cycle = Some(cycle.clone());
        self.steps += 1;

        // The brief waits for the person: in the control room they confirm it; headless, the
        // demo's stand-in does, with the same use case.
        if self.demo.confirmer == Confirmer::StandIn {
            self.pause(2.0).await?;
            let ctx = self.demo.ctx.clone();
            let paths = ctx.cycle(&cycle).map_err(|e| ClientError::Demo(e.to_string()))?;
            tokio::task::spawn_blocking(move || actions::confirm(&ctx, &paths, None, "demo", Actor::System))
                .await
                .map_err(|e| ClientError::Demo(format!("confirming stopped unexpectedly: {e}")))?
                .map_err(|e| ClientError::Demo(format!("cannot confirm the brief: {e}")))?;
        }
        loop {
            let status = chat.call("cycle_status", json!({"cycle": cycle}), REQUEST_LIMIT).await?;
            if status["status"] != "AWAITING_BRIEF_CONFIRMATION" {
                break;
            }
            let limit = REQUEST_LIMIT + Duration::from_secs(WAIT_SECONDS);
            chat.call("wait", json!({"cycle": cycle, "timeout_seconds": WAIT_SECONDS}), limit).await?;
        }
        self.steps += 1;

        // The chat opens its PR, tests it, reads the failure, pushes a fix, tests again.
        let mut webgpt = WebGpt::new(self.demo.emulator.clone(), self.demo.repo.clone(), self.scenario.persona.clone());
        self.pause(2.0).await?;
        webgpt.open_pr().await.map_err(|e| ClientError::Demo(e.to_string()))?;
        let pr = webgpt.pr_url().ok_or_else(|| ClientError::Demo("no PR was opened".into()))?;
        for _ in 0..self.scenario.persona.attempts.len() + 1 {
            self.pause(1.0).await?;
            let tested = chat.call("test_pr", json!({"cycle": cycle, "pr": pr}), TEST_LIMIT).await?;
            self.steps += 1;
            match tested.pointer("/cycle/status").and_then(Value::as_str) {
                Some("AWAITING_FIX") => {
                    let handoff = tested["handoff"].as_str().unwrap_or_default().to_owned();
                    self.pause(2.0).await?;
                    webgpt.push_fix(&handoff).await.map_err(|e| ClientError::Demo(e.to_string()))?;
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brief_s_five_fields_are_its_values() {
        let brief = "Goal: a\nSuccess: b: c\nScope / non-goals: d\nConstraints: e\nValidation: f";
        let fields = brief_fields(brief).unwrap();
        assert_eq!(fields, ["a", "b: c", "d", "e", "f"].map(String::from));
        assert!(brief_fields("Goal: a").is_none());
    }

    #[test]
    fn results_come_from_json_or_an_event_stream() {
        let sse = Response {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: b"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}\n\n".to_vec(),
        };
        assert_eq!(rpc_result(&sse, 3).unwrap(), json!({"ok": true}));
        assert!(rpc_result(&sse, 4).is_err());
        let plain = Response {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601}}".to_vec(),
        };
        assert!(rpc_result(&plain, 1).is_err());
    }
}
