//! A small HTTP/1.1 client for the demo's scripted chat client: one request per connection
//! (`Connection: close`) on hyper's client connection, the answer read to its end, loopback
//! `http://` URLs only. Enough to talk to `forgeloop serve` as a remote client would.
//!
//! Why not rmcp's client transport: `transport-streamable-http-client` (with `client`) adds no
//! crate, but only a trait; its one TCP implementation, `-client-reqwest`, adds reqwest 0.13 and
//! ipnet to the build and wasm-streams to Cargo.lock (measured with `cargo tree`, rmcp 3.11).
//! The chat client's OAuth steps (the 401, registration, the pairing page) are plain HTTP
//! anyway, so its few JSON-RPC POSTs go through this client too.

use std::net::{IpAddr, SocketAddr};

use http::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use url::{Position, Url};

/// The most an answer may be: the connector's answers are bounded far below this.
const MAX_RESPONSE: usize = 4 * 1024 * 1024;

/// Why a request failed before an answer was read.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The connection failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The URL is not a loopback `http://host:port/path`.
    #[error("not a loopback http URL the demo's client can reach: {0}")]
    Url(String),
    /// The request could not be put together (a header name or value HTTP does not allow).
    #[error("the request cannot be sent: {0}")]
    Request(#[from] http::Error),
    /// The exchange failed, or the answer is not HTTP/1.1 as hyper reads it.
    #[error("{0}")]
    Http(#[from] hyper::Error),
    /// The answer is not one this client reads.
    #[error("the server's answer is malformed: {0}")]
    Malformed(&'static str),
}

/// A URL split into where to connect and what to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The server's address (`host:port`, a literal IP).
    pub addr: SocketAddr,
    /// The path and query, starting with `/`.
    pub path: String,
}

impl Target {
    /// `http://127.0.0.1:PORT/path?query`, read by the URL parser: the host must be a loopback
    /// IP literal (the demo talks only to the processes it started), with no user information.
    pub fn parse(text: &str) -> Result<Target, HttpError> {
        let refused = || HttpError::Url(text.to_owned());
        let url = Url::parse(text).map_err(|_| refused())?;
        if url.scheme() != "http" || !url.username().is_empty() || url.password().is_some() {
            return Err(refused());
        }
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            _ => return Err(refused()),
        };
        let port = url.port_or_known_default().ok_or_else(refused)?;
        if !ip.is_loopback() {
            return Err(refused());
        }
        let path = url[Position::BeforePath..Position::AfterQuery].to_owned();
        Ok(Target { addr: SocketAddr::new(ip, port), path })
    }
}

/// An answer: status, headers (names lowercased), body.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Every header, its name lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A request: method, target, extra headers and an optional body with its content type.
pub struct Request<'a> {
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// Where.
    pub target: &'a Target,
    /// Headers besides `Host`, `Connection` and the body's.
    pub headers: Vec<(&'a str, String)>,
    /// `(content type, bytes)`.
    pub body: Option<(&'a str, Vec<u8>)>,
}

/// Sends `request` and reads the whole answer.
pub async fn send(request: Request<'_>) -> Result<Response, HttpError> {
    let target = request.target;
    let mut builder = hyper::Request::builder()
        .method(request.method)
        .uri(target.path.as_str())
        .header(HOST, target.addr.to_string())
        .header(CONNECTION, "close");
    for (name, value) in &request.headers {
        builder = builder.header(*name, value.as_str());
    }
    let body = match request.body {
        Some((content_type, bytes)) => {
            builder = builder.header(CONTENT_TYPE, content_type).header(CONTENT_LENGTH, bytes.len());
            Bytes::from(bytes)
        }
        None if request.method == "POST" => {
            builder = builder.header(CONTENT_LENGTH, 0);
            Bytes::new()
        }
        None => Bytes::new(),
    };
    let request = builder.body(Full::new(body))?;
    let stream = TcpStream::connect(target.addr).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // The connection is driven beside the exchange and ends with it (the server closes it).
    let driver = tokio::spawn(connection);
    let answer = exchange(&mut sender, request).await;
    driver.abort();
    answer
}

async fn exchange(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    request: hyper::Request<Full<Bytes>>,
) -> Result<Response, HttpError> {
    let answer = sender.send_request(request).await?;
    let status = answer.status().as_u16();
    let headers = answer
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    let body = match Limited::new(answer.into_body(), MAX_RESPONSE).collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(error) if error.is::<LengthLimitError>() => {
            return Err(HttpError::Malformed("the answer is larger than the client reads"));
        }
        Err(error) => match error.downcast::<hyper::Error>() {
            Ok(error) => return Err(HttpError::Http(*error)),
            Err(_) => return Err(HttpError::Malformed("the body could not be read")),
        },
    };
    Ok(Response { status, headers, body })
}

/// `application/x-www-form-urlencoded` (also a query string).
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    crate::domain::form::encode(pairs)
}

/// The value of `name` in a query string (`+` and `%XX` decoded).
pub fn query_value(query: &str, name: &str) -> Option<String> {
    crate::domain::form::value(query, name)
}

/// A page's first form as a browser would submit it: its `action` and its hidden fields
/// (values unescaped).
pub fn first_form(html: &str) -> Option<(String, Vec<(String, String)>)> {
    let start = html.find("<form")?;
    let end = start + html[start..].find("</form>")?;
    let form = &html[start..end];
    let open_end = form.find('>')?;
    let action = attribute(&form[..open_end], "action")?;
    let mut fields = Vec::new();
    let mut rest = &form[open_end..];
    while let Some(i) = rest.find("<input") {
        rest = &rest[i..];
        let tag_end = rest.find('>')?;
        let tag = &rest[..tag_end];
        if attribute(tag, "type").as_deref() == Some("hidden")
            && let (Some(name), Some(value)) = (attribute(tag, "name"), attribute(tag, "value"))
        {
            fields.push((name, value));
        }
        rest = &rest[tag_end..];
    }
    Some((action, fields))
}

/// `name="value"` in a tag, unescaped.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(unescape(&tag[start..start + len]))
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// The JSON messages of a `text/event-stream` body: each event's `data:` lines, joined.
pub fn sse_messages(body: &str) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    let mut flush = |data: &mut Vec<&str>| {
        if !data.is_empty() {
            if let Ok(value) = serde_json::from_str(&data.join("\n")) {
                out.push(value);
            }
            data.clear();
        }
    };
    for line in body.lines() {
        if line.is_empty() {
            flush(&mut data);
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    flush(&mut data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers one request on a loopback port with `raw`; the request's head comes back on the
    /// channel.
    async fn serve_once(raw: &'static [u8]) -> (Target, tokio::sync::oneshot::Receiver<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before its head");
                seen.extend_from_slice(&buf[..n]);
            }
            let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
            stream.write_all(raw).await.unwrap();
            let _ = stream.shutdown().await;
        });
        (Target { addr, path: "/x?y=1".into() }, rx)
    }

    async fn get(raw: &'static [u8]) -> Result<Response, HttpError> {
        let (target, _) = serve_once(raw).await;
        let request = Request { method: "GET", target: &target, headers: Vec::new(), body: None };
        tokio::time::timeout(std::time::Duration::from_secs(10), send(request)).await.unwrap()
    }

    #[tokio::test]
    async fn answers_are_read_by_length_or_chunks() {
        let answer = get(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhelloEXTRA").await.unwrap();
        assert_eq!((answer.status, answer.text().as_str(), answer.header("x-a")), (200, "hello", Some("b")));
        let raw = b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(get(raw).await.unwrap().text(), "abcde");
        assert!(get(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").await.is_err());
        assert!(get(b"nonsense").await.is_err());
    }

    #[tokio::test]
    async fn requests_carry_their_host_body_and_close() {
        let (target, head) = serve_once(b"HTTP/1.1 204 No Content\r\n\r\n").await;
        let body = Some(("application/json", b"{}".to_vec()));
        let request = Request { method: "POST", target: &target, headers: vec![("Mcp-Session-Id", "s1".into())], body };
        assert_eq!(send(request).await.unwrap().status, 204);
        let head = head.await.unwrap().to_ascii_lowercase();
        assert!(head.starts_with("post /x?y=1 http/1.1\r\n"), "{head}");
        for line in [format!("host: {}", target.addr), "connection: close".into(), "content-length: 2".into()] {
            assert!(head.contains(&format!("\r\n{line}\r\n")), "{line}: {head}");
        }
        assert!(
            head.contains("\r\nmcp-session-id: s1\r\n") && head.contains("content-type: application/json"),
            "{head}"
        );
    }

    #[test]
    fn urls_forms_and_queries() {
        let target = Target::parse("http://127.0.0.1:8787/authorize?x=1").unwrap();
        assert_eq!((target.addr.port(), target.path.as_str()), (8787, "/authorize?x=1"));
        assert_eq!(Target::parse("http://127.0.0.1:9").unwrap().path, "/");
        assert_eq!(Target::parse("http://[::1]:9/a#b").unwrap().path, "/a");
        assert!(Target::parse("https://127.0.0.1:9/").is_err());
        assert!(Target::parse("http://example.com/").is_err());
        assert!(Target::parse("http://10.0.0.1:80/").is_err());
        // Judged by the host the URL names, not by what precedes an `@`.
        assert!(Target::parse("http://127.0.0.1@10.0.0.1:80/").is_err());
        assert!(Target::parse("http://user@127.0.0.1:80/").is_err());
        let encoded = form_encode(&[("a b", "c&d=e/é")]);
        assert_eq!(encoded, "a+b=c%26d%3De%2F%C3%A9");
        assert_eq!(query_value("code=x%2By&state=s+t", "code").as_deref(), Some("x+y"));
        assert_eq!(query_value("code=x%2By&state=s+t", "state").as_deref(), Some("s t"));
        assert_eq!(query_value("code=x", "state"), None);
    }

    #[test]
    fn a_form_s_hidden_fields_are_what_a_browser_submits() {
        let html = "<p>x</p><form method=\"post\" action=\"/authorize\"><input type=\"hidden\" name=\"state\" value=\"a&amp;b&quot;\">\
<input name=\"pairing_code\" autocomplete=\"off\"><input type=\"hidden\" name=\"client_id\" value=\"fl_1\"></form>";
        let (action, fields) = first_form(html).unwrap();
        assert_eq!(action, "/authorize");
        assert_eq!(fields, [("state".into(), "a&b\"".into()), ("client_id".into(), "fl_1".into())]);
        assert!(first_form("<p>no form</p>").is_none());
    }

    #[test]
    fn event_streams_yield_their_data() {
        let body =
            "id: 0\nretry: 3000\ndata:\n\n: ping\n\nevent: message\ndata: {\"id\":1,\n data\ndata: \"result\":{}}\n\n";
        // The second event's lines: `{"id":1,` and `"result":{}}` (a line not starting with
        // `data:` is not data).
        let messages = sse_messages(body);
        assert_eq!(messages, [serde_json::json!({"id": 1, "result": {}})]);
    }
}
