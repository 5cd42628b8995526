//! The stdio line layer in front of rmcp (design §12.11 items 11 and 12).
//!
//! rmcp 3.11's stdio transport ignores a line that is not JSON (no `-32700` reply), answers
//! JSON it cannot read as a message with an id-less `-32600` even when the request had an
//! id, and ends the whole session when a notification or a response arrives before
//! `initialize`. So every line is judged here first: a line rmcp can read goes on to it; a
//! malformed one gets the JSON-RPC error it deserves (parse error, invalid request, invalid
//! params, with the request's id when it has one) or, for a notification, nothing at all.
//! Only end of input ends the server. Everything written to stdout passes through the
//! redactor once more on the way out.

use std::io;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams, JsonRpcRequest,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::redact::Redactor;

use super::server::ForgeServer;

/// Longest accepted input line; longer ones are discarded and answered with an error.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// How long shutdown waits for cancelled test runs to stop their process groups.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(15);

/// JSON-RPC's code for a line that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a request whose parameters are wrong.
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one input line.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// rmcp can read it; `initialize` says whether it is the `initialize` request.
    Forward {
        /// Whether the line is the `initialize` request.
        initialize: bool,
    },
    /// Answer it ourselves with this JSON-RPC error response.
    Reply(Value),
    /// Say nothing (notifications never get replies); the reason is logged.
    Ignore(&'static str),
}

fn error_response(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Judges one line (without its newline). `initialized`: an `initialize` request has gone
/// to rmcp already.
pub fn judge(line: &[u8], initialized: bool) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore("blank line");
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return Verdict::Reply(error_response(Value::Null, PARSE_ERROR, format!("Parse error: {e}"))),
    };
    let Value::Object(object) = &value else {
        let why = if value.is_array() {
            "Invalid Request: batches are not supported; send one JSON-RPC message per line"
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object"
        };
        return Verdict::Reply(error_response(Value::Null, INVALID_REQUEST, why.to_owned()));
    };
    let id = object.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64()).cloned();
    let method = object.get("method").and_then(Value::as_str);
    if let (Some(method), Some(id), Some(params)) = (method, &id, object.get("params"))
        && !params.is_object()
    {
        let message = format!("Invalid params for {method}: params must be an object");
        return Verdict::Reply(error_response(id.clone(), INVALID_PARAMS, message));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        // rmcp reads a standard method with unreadable params as a custom request and would
        // answer "method not found".
        Ok(ClientJsonRpcMessage::Request(JsonRpcRequest { request: ClientRequest::CustomRequest(custom), id, .. }))
            if STANDARD_METHODS.contains(&custom.method.as_str()) =>
        {
            let detail = params_error(&custom.method, object.get("params"));
            let message = format!("Invalid params for {}: {detail}", custom.method);
            Verdict::Reply(error_response(json!(id), INVALID_PARAMS, message))
        }
        Ok(ClientJsonRpcMessage::Request(_)) => Verdict::Forward { initialize: method == Some("initialize") },
        Ok(_) if !initialized => Verdict::Ignore("a notification or response before initialize"),
        Ok(_) => Verdict::Forward { initialize: false },
        Err(e) => match (method, id) {
            (Some(_), None) if !object.contains_key("id") => Verdict::Ignore("a malformed notification"),
            (None, Some(_)) if !object.contains_key("method") => Verdict::Ignore("a malformed response"),
            (Some(method), Some(id)) if object.get("jsonrpc") == Some(&json!("2.0")) => {
                Verdict::Reply(error_response(id, INVALID_PARAMS, format!("Invalid params for {method}: {e}")))
            }
            (_, id) => Verdict::Reply(error_response(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "Invalid Request: expected a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\", a string or integer \"id\", a \"method\")".to_owned(),
            )),
        },
    }
}

/// Client-to-server request methods of the MCP specification.
const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// Why `params` do not fit `method`, as precisely as serde can say for the common ones.
fn params_error(method: &str, params: Option<&Value>) -> String {
    let params = params.cloned().unwrap_or_else(|| json!({}));
    let err = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        _ => None,
    };
    match err {
        Some(err) => err.to_string(),
        None => "they do not match the MCP schema of this method".to_owned(),
    }
}

enum Line {
    Full(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads one line of at most `max` bytes; a longer one is consumed and reported as such.
async fn next_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, max: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            // A last line without a newline still counts.
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::Eof,
                (false, false) => Line::Full(line),
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        let found = done > chunk.len();
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(done);
        if found {
            return Ok(if too_long { Line::TooLong } else { Line::Full(line) });
        }
    }
}

/// Writes whole lines to the real output, redacted. Keeps draining after a write error so
/// nothing upstream blocks on a client that went away.
async fn write_lines<W: AsyncWrite + Unpin>(mut out: W, mut lines: mpsc::Receiver<Vec<u8>>, redactor: Redactor) {
    let mut broken = false;
    while let Some(line) = lines.recv().await {
        if broken {
            continue;
        }
        let mut bytes = match serde_json::from_slice::<Value>(&line) {
            Ok(mut value) => {
                redactor.redact_json(&mut value);
                serde_json::to_vec(&value).unwrap_or_default()
            }
            // Not JSON (never expected): still never unredacted.
            Err(_) => redactor.redact_lossy(&line).into_bytes(),
        };
        bytes.push(b'\n');
        if out.write_all(&bytes).await.is_err() || out.flush().await.is_err() {
            tracing::warn!("stdout is closed; dropping output until input ends");
            broken = true;
        }
    }
}

/// Moves rmcp's output lines to the writer.
async fn forward_lines<R: AsyncRead + Unpin>(from: R, to: mpsc::Sender<Vec<u8>>) {
    let mut reader = BufReader::new(from);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                if to.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Serves MCP on `input`/`output` until `input` ends, then cancels running tests and
/// waits for every response to be written.
pub async fn serve<R, W>(input: R, output: W, server: ForgeServer, redactor: Redactor) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(256);
    let writer = tokio::spawn(write_lines(output, out_rx, redactor.clone()));
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let forwarder = tokio::spawn(forward_lines(from_rmcp, out_tx.clone()));
    let session = {
        let server = server.clone();
        tokio::spawn(async move {
            match server.serve((rmcp_in, rmcp_out)).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(err) => tracing::info!("the MCP session ended before it started: {err}"),
            }
        })
    };

    let mut reader = BufReader::new(input);
    let mut initialized = false;
    let mut result = Ok(());
    loop {
        let line = match next_line(&mut reader, MAX_LINE_BYTES).await {
            Ok(Line::Full(line)) => line,
            Ok(Line::TooLong) => {
                let message = format!("Invalid Request: message longer than {MAX_LINE_BYTES} bytes");
                let reply = error_response(Value::Null, INVALID_REQUEST, message);
                let _ = out_tx.send(reply.to_string().into_bytes()).await;
                continue;
            }
            Ok(Line::Eof) => break,
            Err(err) => {
                result = Err(err);
                break;
            }
        };
        match judge(&line, initialized) {
            Verdict::Forward { initialize } => {
                initialized |= initialize;
                let mut bytes = line;
                bytes.push(b'\n');
                if to_rmcp.write_all(&bytes).await.is_err() {
                    tracing::error!("the MCP session stopped reading its input; shutting down");
                    break;
                }
            }
            Verdict::Reply(reply) => {
                let _ = out_tx.send(reply.to_string().into_bytes()).await;
            }
            Verdict::Ignore(why) => tracing::debug!("ignored input line: {why}"),
        }
    }

    // The client is gone: stop test runs now rather than let them run to the end.
    server.shut_down(SHUTDOWN_GRACE).await;
    drop(to_rmcp);
    let _ = session.await;
    let _ = forwarder.await;
    drop(out_tx);
    let _ = writer.await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(verdict: &Verdict) -> (i64, Value) {
        match verdict {
            Verdict::Reply(v) => (v["error"]["code"].as_i64().unwrap(), v["id"].clone()),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error_with_a_null_id() {
        for line in [&b"{"[..], b"not json", b"{\"jsonrpc\":\"2.0\",\"id\":1,", b"\xff\xfe"] {
            assert_eq!(code(&judge(line, true)), (PARSE_ERROR, Value::Null), "{line:?}");
        }
        assert_eq!(judge(b"   \r", true), Verdict::Ignore("blank line"));
    }

    #[test]
    fn shapes_that_are_not_messages_are_invalid_requests() {
        assert_eq!(code(&judge(b"[]", true)).0, INVALID_REQUEST);
        assert_eq!(code(&judge(b"42", true)).0, INVALID_REQUEST);
        assert_eq!(code(&judge(br#"{"id":3,"method":"tools/list"}"#, true)), (INVALID_REQUEST, json!(3)));
        assert_eq!(code(&judge(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, true)), (INVALID_REQUEST, Value::Null));
    }

    #[test]
    fn bad_params_keep_the_request_id() {
        let line = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{}}}"#;
        let verdict = judge(line, true);
        assert_eq!(code(&verdict), (INVALID_PARAMS, json!("a")));
        let Verdict::Reply(reply) = verdict else { unreachable!() };
        assert!(reply["error"]["message"].as_str().unwrap().contains("name"), "{reply}");
        let no_params = br#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#;
        assert_eq!(code(&judge(no_params, false)), (INVALID_PARAMS, json!(2)));
        let scalar = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":5}"#;
        assert_eq!(code(&judge(scalar, true)), (INVALID_PARAMS, json!(3)));
    }

    #[test]
    fn requests_go_on_and_early_notifications_are_dropped() {
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(judge(init, false), Verdict::Forward { initialize: true });
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(judge(note, false), Verdict::Ignore(_)));
        assert_eq!(judge(note, true), Verdict::Forward { initialize: false });
        let unknown = br#"{"jsonrpc":"2.0","id":9,"method":"no/such/method","params":{}}"#;
        assert_eq!(judge(unknown, true), Verdict::Forward { initialize: false }, "rmcp answers -32601 itself");
        let bad_note = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#;
        assert!(matches!(judge(bad_note, true), Verdict::Ignore(_)), "notifications never get replies");
    }

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let data = b"0123456789\nabc\ntoo-long-line-here\nlast".to_vec();
        let mut reader = BufReader::with_capacity(4, &data[..]);
        let mut seen = Vec::new();
        loop {
            match next_line(&mut reader, 10).await.unwrap() {
                Line::Full(l) => seen.push(String::from_utf8(l).unwrap()),
                Line::TooLong => seen.push("<too long>".into()),
                Line::Eof => break,
            }
        }
        assert_eq!(seen, ["0123456789", "abc", "<too long>", "last"]);
    }
}
