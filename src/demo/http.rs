//! A small HTTP/1.1 client for the demo's scripted chat client: one request per connection
//! (`Connection: close`), the answer read to its end (chunked or by length), loopback
//! `http://` URLs only. Enough to talk to `forgeloop serve` as a remote client would, without a
//! client crate.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most an answer may be: the connector's answers are bounded far below this.
const MAX_RESPONSE: u64 = 4 * 1024 * 1024;

/// Why a request failed before an answer was read.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The connection or the transfer failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The URL is not a loopback `http://host:port/path`.
    #[error("not a loopback http URL the demo's client can reach: {0}")]
    Url(String),
    /// The answer is not HTTP/1.1 as this client reads it.
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
    /// `http://127.0.0.1:PORT/path?query`.
    pub fn parse(url: &str) -> Result<Target, HttpError> {
        let rest = url.strip_prefix("http://").ok_or_else(|| HttpError::Url(url.to_owned()))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let addr: SocketAddr = authority.parse().map_err(|_| HttpError::Url(url.to_owned()))?;
        if !addr.ip().is_loopback() {
            return Err(HttpError::Url(url.to_owned()));
        }
        Ok(Target { addr, path: path.to_owned() })
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
    let mut head =
        format!("{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", request.method, target.path, target.addr);
    for (name, value) in &request.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = match &request.body {
        Some((content_type, bytes)) => {
            head.push_str(&format!("Content-Type: {content_type}\r\nContent-Length: {}\r\n", bytes.len()));
            bytes.as_slice()
        }
        None if request.method == "POST" => {
            head.push_str("Content-Length: 0\r\n");
            &[][..]
        }
        None => &[][..],
    };
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(target.addr).await?;
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await?;
    let mut raw = Vec::new();
    (&mut stream).take(MAX_RESPONSE + 1).read_to_end(&mut raw).await?;
    if raw.len() as u64 > MAX_RESPONSE {
        return Err(HttpError::Malformed("the answer is larger than the client reads"));
    }
    parse(&raw)
}

/// Reads a whole HTTP/1.1 answer.
pub fn parse(raw: &[u8]) -> Result<Response, HttpError> {
    let end = find(raw, b"\r\n\r\n").ok_or(HttpError::Malformed("no end of headers"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| HttpError::Malformed("headers are not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or(HttpError::Malformed("no status line"))?;
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| status_line.strip_prefix("HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or(HttpError::Malformed("no status code"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let rest = &raw[end + 4..];
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let body = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        dechunk(rest)?
    } else if let Some(length) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        rest.get(..length).ok_or(HttpError::Malformed("the body is shorter than its length"))?.to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Response { status, headers, body })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::new();
    loop {
        let line_end = find(rest, b"\r\n").ok_or(HttpError::Malformed("a chunk has no size line"))?;
        let size_text = std::str::from_utf8(&rest[..line_end]).map_err(|_| HttpError::Malformed("chunk size"))?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| HttpError::Malformed("chunk size"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = rest.get(..size).ok_or(HttpError::Malformed("a chunk is cut short"))?;
        out.extend_from_slice(chunk);
        rest = rest.get(size + 2..).ok_or(HttpError::Malformed("a chunk is cut short"))?;
    }
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

    #[test]
    fn answers_are_read_by_length_or_chunks() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhelloEXTRA";
        let answer = parse(raw).unwrap();
        assert_eq!((answer.status, answer.text().as_str(), answer.header("x-a")), (200, "hello", Some("b")));
        let raw = b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(raw).unwrap().text(), "abcde");
        assert!(parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").is_err());
        assert!(parse(b"nonsense").is_err());
    }

    #[test]
    fn urls_forms_and_queries() {
        let target = Target::parse("http://127.0.0.1:8787/authorize?x=1").unwrap();
        assert_eq!((target.addr.port(), target.path.as_str()), (8787, "/authorize?x=1"));
        assert_eq!(Target::parse("http://127.0.0.1:9").unwrap().path, "/");
        assert!(Target::parse("https://127.0.0.1:9/").is_err());
        assert!(Target::parse("http://example.com/").is_err());
        assert!(Target::parse("http://10.0.0.1:80/").is_err());
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
