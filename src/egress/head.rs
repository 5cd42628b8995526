//! HTTP/1.x heads, as much as a forward proxy needs: the client's request line and headers
//! (`CONNECT host:port` or an absolute `http://` URL), the head sent on in origin form, and the
//! destination's response head rewritten to close the connection. Strict on purpose: CRLF line
//! ends, no folded lines, token names; anything else is a 400, never a guess.

use crate::domain::egress::Destination;

/// The largest request head the proxy reads (request line and headers).
pub(super) const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// Response heads larger than this are passed on as they are.
pub(super) const MAX_RESPONSE_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 128;

/// Just past the blank line that ends a head, when `buf` holds one.
pub(super) fn head_end(buf: &[u8]) -> Option<usize> {
    memchr::memmem::find(buf, b"\r\n\r\n").map(|at| at + 4)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// `CONNECT host:port`: a tunnel.
    Connect,
    /// `GET http://host[:port]/path`: sent on as `GET /path` with `Host: authority`.
    Absolute { authority: String, origin_form: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    pub method: String,
    pub version: &'static str,
    pub destination: Destination,
    pub target: Target,
    headers: Vec<(String, Vec<u8>)>,
}

/// Parses a complete request head (ending in the blank line). The error is one line for a 400.
pub(super) fn parse_request(head: &[u8]) -> Result<Request, String> {
    let body = head.strip_suffix(b"\r\n\r\n").ok_or("the request head does not end in a blank line")?;
    let mut lines = split_lines(body)?;
    let request_line = lines.next().ok_or("empty request")?;
    let (method, target, version) = parse_request_line(request_line)?;
    let mut headers = Vec::new();
    for line in lines {
        if headers.len() == MAX_HEADERS {
            return Err(format!("more than {MAX_HEADERS} header lines"));
        }
        headers.push(parse_header(line)?);
    }
    let (destination, target) = if method == "CONNECT" {
        (Destination::parse_authority(&target, None)?, Target::Connect)
    } else {
        parse_absolute(&target)?
    };
    Ok(Request { method, version, destination, target, headers })
}

fn split_lines(body: &[u8]) -> Result<impl Iterator<Item = &[u8]>, String> {
    // A CR or LF that is not part of a CRLF is how request smuggling starts: refused.
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    let last = lines.len().saturating_sub(1);
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.into_iter().enumerate() {
        let line = if i < last { line.strip_suffix(b"\r").ok_or("a bare LF in the request head")? } else { line };
        if line.contains(&b'\r') {
            return Err("a bare CR in the request head".into());
        }
        out.push(line);
    }
    Ok(out.into_iter())
}

fn parse_request_line(line: &[u8]) -> Result<(String, String, &'static str), String> {
    if !line.iter().all(|&b| (0x21..=0x7e).contains(&b) || b == b' ') {
        return Err("the request line is not printable ASCII".into());
    }
    let text = String::from_utf8_lossy(line);
    let parts: Vec<&str> = text.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Err("the request line is not METHOD TARGET HTTP/1.1".into());
    };
    if method.is_empty() || !method.bytes().all(is_tchar) {
        return Err("the request line is not METHOD TARGET HTTP/1.1".into());
    }
    if target.is_empty() {
        return Err("the request line has no target".into());
    }
    let version = match version {
        "HTTP/1.1" => "HTTP/1.1",
        "HTTP/1.0" => "HTTP/1.0",
        _ => return Err("only HTTP/1.1 (and 1.0) is spoken here".into()),
    };
    Ok((method.to_owned(), target.to_owned(), version))
}

fn parse_header(line: &[u8]) -> Result<(String, Vec<u8>), String> {
    if line.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
        return Err("a folded header line".into());
    }
    let colon = line.iter().position(|&b| b == b':').ok_or("a header line without a colon")?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().copied().all(is_tchar) {
        return Err("a header name that is not a token".into());
    }
    if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err("a control character in a header value".into());
    }
    let value = value.trim_ascii();
    Ok((String::from_utf8_lossy(name).into_owned(), value.to_vec()))
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn parse_absolute(target: &str) -> Result<(Destination, Target), String> {
    let scheme_end = target.find("://");
    let rest = match scheme_end.map(|at| (&target[..at], &target[at + 3..])) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => {
            return Err("an https:// URL goes through CONNECT host:443, not to the proxy as a URL".into());
        }
        _ => return Err("a proxy request names an absolute http:// URL, or is CONNECT host:port".into()),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let destination = Destination::parse_authority(authority, Some(80))?;
    let path = path.split('#').next().unwrap_or_default();
    let origin_form = match path.as_bytes().first() {
        None => "/".to_owned(),
        Some(b'?') => format!("/{path}"),
        Some(_) => path.to_owned(),
    };
    Ok((destination, Target::Absolute { authority: authority.to_owned(), origin_form }))
}

/// Headers a forward proxy never passes on: its own credentials and the hop's connection
/// management (the head sent on says `Connection: close`; `Host` is the URL's).
fn is_dropped(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("proxy-") || matches!(lower.as_str(), "host" | "connection" | "keep-alive")
}

impl Request {
    /// The head sent to the destination for an absolute-form request: origin form, `Host` from
    /// the URL, no `Proxy-*` headers, and `Connection: close` so that the connection carries this
    /// one request (a client reusing it for another host must not reach this one).
    pub(super) fn origin_head(&self) -> Option<Vec<u8>> {
        let Target::Absolute { authority, origin_form } = &self.target else {
            return None;
        };
        let mut head = format!("{} {origin_form} {}\r\nHost: {authority}\r\n", self.method, self.version).into_bytes();
        for (name, value) in self.headers.iter().filter(|(name, _)| !is_dropped(name)) {
            head.extend_from_slice(name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value);
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"Connection: close\r\n\r\n");
        Some(head)
    }
}

/// A destination's response head, rewritten for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Response {
    /// A 1xx other than 101: passed on as it is; the final head follows.
    Interim,
    /// The final head (or 101): passed on with `Connection: close` (101 as it is); the rest is
    /// body.
    Final(Vec<u8>),
}

/// `None`: not a head this proxy understands; it is passed on untouched.
pub(super) fn rewrite_response(head: &[u8]) -> Option<Response> {
    let body = head.strip_suffix(b"\r\n\r\n")?;
    let mut lines = body.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next()?;
    let rest = status_line.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    if !matches!(rest.first(), Some(b'0' | b'1')) || rest.get(1) != Some(&b' ') || !code.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    match code {
        b"101" => return Some(Response::Final(head.to_vec())),
        [b'1', ..] => return Some(Response::Interim),
        _ => {}
    }
    let mut out = status_line.to_vec();
    out.extend_from_slice(b"\r\n");
    for line in lines {
        let name = line.split(|&b| b == b':').next().unwrap_or_default().trim_ascii();
        let hop = [&b"connection"[..], b"keep-alive", b"proxy-connection"].iter().any(|h| name.eq_ignore_ascii_case(h));
        if !hop {
            out.extend_from_slice(line);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Some(Response::Final(out))
}

/// A complete answer from the proxy itself (403, 400, 502…), closing the connection.
pub(super) fn answer(status: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::egress::Host;

    fn parse(text: &str) -> Result<Request, String> {
        parse_request(text.as_bytes())
    }

    #[test]
    fn connect_and_absolute_requests_parse() {
        let connect = parse("CONNECT PyPI.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n").unwrap();
        assert_eq!(connect.target, Target::Connect);
        assert_eq!(connect.destination.to_string(), "pypi.org:443");
        assert_eq!(connect.origin_head(), None);
        let old = parse("CONNECT [::1]:8443 HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(old.version, "HTTP/1.0");
        assert_eq!(old.destination.host, Host::Ip("::1".parse().unwrap()));

        let get = parse(
            "GET http://127.0.0.1:8080/simple/pkg/?q=1#frag HTTP/1.1\r\nHost: evil.example\r\nUser-Agent: curl\r\n\
             Proxy-Authorization: Basic eA==\r\nProxy-Connection: Keep-Alive\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\n\
             Accept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!(get.destination.to_string(), "127.0.0.1:8080");
        let head = String::from_utf8(get.origin_head().unwrap()).unwrap();
        assert_eq!(
            head,
            "GET /simple/pkg/?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        for (target, origin, port) in [
            ("http://example.com", "/", 80),
            ("http://example.com?x=1", "/?x=1", 80),
            ("HTTP://example.com:8080/a", "/a", 8080),
            ("http://[fd00::1]:81/b", "/b", 81),
        ] {
            let request = parse(&format!("POST {target} HTTP/1.1\r\nContent-Length: 0\r\n\r\n")).unwrap();
            let Target::Absolute { origin_form, .. } = &request.target else { panic!("{target}") };
            assert_eq!((origin_form.as_str(), request.destination.port), (origin, port), "{target}");
            let head = String::from_utf8(request.origin_head().unwrap()).unwrap();
            assert!(head.starts_with(&format!("POST {origin} HTTP/1.1\r\n")), "{head}");
            assert!(head.contains("\r\nContent-Length: 0\r\n"), "{head}");
        }
    }

    #[test]
    fn malformed_requests_are_refused_with_a_reason() {
        let cases = [
            ("\r\n\r\n", "not METHOD TARGET"),
            ("GET / HTTP/1.1\r\n\r\n", "absolute http:// URL"),
            ("GET https://pypi.org/ HTTP/1.1\r\n\r\n", "CONNECT host:443"),
            ("GET ftp://pypi.org/ HTTP/1.1\r\n\r\n", "absolute http:// URL"),
            ("GET http://pypi.org/ HTTP/2.0\r\n\r\n", "only HTTP/1.1"),
            ("GET http://pypi.org/  HTTP/1.1\r\n\r\n", "not METHOD TARGET"),
            ("GET http://pypi.org/ HTTP/1.1 x\r\n\r\n", "not METHOD TARGET"),
            ("G(T http://pypi.org/ HTTP/1.1\r\n\r\n", "not METHOD TARGET"),
            ("GET http://pypi.org/\x01 HTTP/1.1\r\n\r\n", "not printable ASCII"),
            ("GET http://pypi.org/ HTTP/1.1\r\nA: b\nC: d\r\n\r\n", "bare LF"),
            ("GET http://pypi.org/ HTTP/1.1\r\nA: b\rC: d\r\n\r\n", "bare CR"),
            ("GET http://pypi.org/ HTTP/1.1\r\nA: b\r\n c\r\n\r\n", "folded"),
            ("GET http://pypi.org/ HTTP/1.1\r\nA b\r\n\r\n", "without a colon"),
            ("GET http://pypi.org/ HTTP/1.1\r\nA b: c\r\n\r\n", "not a token"),
            ("GET http://pypi.org/ HTTP/1.1\r\n: c\r\n\r\n", "not a token"),
            ("GET http://pypi.org/ HTTP/1.1\r\nA: \x00\r\n\r\n", "control character"),
            ("GET http://user@pypi.org/ HTTP/1.1\r\n\r\n", "user information"),
            ("GET http:///x HTTP/1.1\r\n\r\n", "no host"),
            ("GET http://bad_host/ HTTP/1.1\r\n\r\n", "cannot be in a host name"),
            ("CONNECT pypi.org HTTP/1.1\r\n\r\n", "port is required"),
            ("CONNECT pypi.org:99999 HTTP/1.1\r\n\r\n", "1 to 65535"),
            ("CONNECT http://pypi.org:443 HTTP/1.1\r\n\r\n", "not host:port"),
            ("GET http://pypi.org/ HTTP/1.1\r\n", "blank line"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: y\r\n")).collect();
        let err = parse(&format!("GET http://a.example/ HTTP/1.1\r\n{many}\r\n")).unwrap_err();
        assert!(err.contains("more than 128 header lines"), "{err}");
    }

    #[test]
    fn no_input_panics_the_parser() {
        // Every prefix and single-byte corruption of a valid head.
        let valid = b"GET http://[fd00::1]:81/a?b HTTP/1.1\r\nHost: x\r\nProxy-Authorization: y\r\n\r\n";
        for cut in 0..=valid.len() {
            let _ = parse_request(&valid[..cut]);
            let _ = rewrite_response(&valid[..cut]);
            for byte in [0u8, b'\r', b'\n', b':', b' ', b'[', b']', b'@', 0xff, b'%'] {
                let mut bad = valid.to_vec();
                if cut < bad.len() {
                    bad[cut] = byte;
                }
                if let Ok(request) = parse_request(&bad) {
                    let _ = request.origin_head();
                }
                let _ = rewrite_response(&bad);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn generated_heads_never_panic(parts in proptest::collection::vec(proptest::sample::select(vec![
            &b"GET "[..], b"CONNECT ", b"http://", b"a.example", b"[::1]", b":", b"443", b"/", b"?", b" HTTP/1.1",
            b"\r\n", b"\r", b"\n", b"Proxy-Authorization: x", b"Host: y", b": ", b"\t", b"\x00", b"\xff", b"HTTP/1.1 200",
        ]), 0..16)) {
            let mut head = parts.concat();
            head.extend_from_slice(b"\r\n\r\n");
            if let Ok(request) = parse_request(&head) {
                let _ = request.origin_head();
            }
            let _ = rewrite_response(&head);
        }
    }

    #[test]
    fn response_heads_are_made_to_close() {
        let head =
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX: y\r\n\r\n";
        let Some(Response::Final(out)) = rewrite_response(head) else { panic!() };
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: y\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(rewrite_response(b"HTTP/1.1 100 Continue\r\n\r\n"), Some(Response::Interim));
        let switching = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert_eq!(rewrite_response(switching), Some(Response::Final(switching.to_vec())));
        assert_eq!(rewrite_response(b"ICY 200 OK\r\n\r\n"), None);
        assert_eq!(rewrite_response(b"HTTP/1.1 2x0 OK\r\n\r\n"), None);
        assert_eq!(rewrite_response(b"HTTP/1.1 200 OK\r\n"), None);
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\n\r\nbody"), Some(19));
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\n"), None);
    }

    #[test]
    fn answers_are_complete_responses() {
        let text = String::from_utf8(answer(403, "Forbidden", "forgeloop refused x:1: no\n")).unwrap();
        assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"));
        assert!(text.contains("\r\nContent-Length: 26\r\nConnection: close\r\n\r\nforgeloop refused x:1: no\n"));
    }
}
