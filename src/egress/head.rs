//! HTTP/1.x heads, as much as a forward proxy needs: the client's request head, read by
//! `httparse` (request line, headers, where the head ends), its target read by `url` (an
//! absolute `http://` URL, or CONNECT's `host:port`) and judged on the parsed value, the head
//! sent on in origin form, and the destination's response head rewritten to close the
//! connection. Strict on purpose: CRLF line ends, no folded lines, token names, no user
//! information; anything else is a 400, never a guess.

use std::cell::Cell;

use url::{Position, SyntaxViolation, Url};

use crate::domain::egress::Destination;

/// The largest request head the proxy reads (request line and headers).
pub(super) const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// Response heads larger than this are passed on as they are.
pub(super) const MAX_RESPONSE_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 128;

const NOT_A_REQUEST_LINE: &str = "the request line is not METHOD TARGET HTTP/1.1";
const NOT_A_PROXY_TARGET: &str = "a proxy request names an absolute http:// URL, or is CONNECT host:port";

/// Just past the blank line that ends a response head, when `buf` holds one.
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

/// What a client has sent so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Parsed {
    /// Not a whole head yet: read on.
    Partial,
    /// A whole head, `len` bytes long; what follows it is the body or the tunnel's first bytes.
    Complete { request: Request, len: usize },
}

/// Parses the start of what a client sent. The error is one line for a 400.
pub(super) fn parse_request(buf: &[u8]) -> Result<Parsed, String> {
    // httparse skips blank lines before the request line (RFC 9112 §2.2 allows it); a proxy
    // that only speaks to the tools in a run has no reason to.
    if buf.first().is_some_and(|b| matches!(b, b'\r' | b'\n')) {
        return Err(NOT_A_REQUEST_LINE.into());
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let len = match parsed.parse(buf) {
        Ok(httparse::Status::Partial) => return Ok(Parsed::Partial),
        Ok(httparse::Status::Complete(len)) => len,
        Err(error) => {
            crlf_only(buf)?;
            return Err(refusal(error, parsed.method.is_some()));
        }
    };
    crlf_only(buf.get(..len).unwrap_or(buf))?;
    let (Some(method), Some(target), Some(version)) = (parsed.method, parsed.path, parsed.version) else {
        return Err(NOT_A_REQUEST_LINE.into());
    };
    let version = match version {
        1 => "HTTP/1.1",
        0 => "HTTP/1.0",
        _ => return Err(format!("{NOT_A_REQUEST_LINE}: only HTTP/1.1 (and 1.0) is spoken here")),
    };
    let headers = parsed.headers.iter().map(|h| (h.name.to_owned(), h.value.to_vec())).collect();
    let (destination, target) =
        if method == "CONNECT" { (parse_connect(target)?, Target::Connect) } else { parse_absolute(target)? };
    let request = Request { method: method.to_owned(), version, destination, target, headers };
    Ok(Parsed::Complete { request, len })
}

/// httparse takes a bare LF as a line end, and a CR or LF that is not part of a CRLF is how
/// request smuggling starts: refused. A CR last in `head` may be a CRLF cut by a read.
fn crlf_only(head: &[u8]) -> Result<(), String> {
    for at in memchr::memchr2_iter(b'\r', b'\n', head) {
        let before = at.checked_sub(1).and_then(|i| head.get(i));
        match (head.get(at), head.get(at + 1)) {
            (Some(b'\n'), _) if before != Some(&b'\r') => return Err("a bare LF in the request head".into()),
            (Some(b'\r'), Some(next)) if *next != b'\n' => return Err("a bare CR in the request head".into()),
            _ => {}
        }
    }
    Ok(())
}

/// httparse's error as a reason. It does not say which header line is wrong, so a bad header
/// name is described by what httparse refuses there.
fn refusal(error: httparse::Error, has_method: bool) -> String {
    match error {
        httparse::Error::Token if has_method => "the request target is missing, or not printable ASCII".into(),
        httparse::Error::Token | httparse::Error::NewLine | httparse::Error::Status => NOT_A_REQUEST_LINE.into(),
        httparse::Error::Version => format!("{NOT_A_REQUEST_LINE}: only HTTP/1.1 (and 1.0) is spoken here"),
        httparse::Error::HeaderName => {
            "a header line that is not NAME: value (a folded line, a line without a colon, or a name that is not a token)"
                .into()
        }
        httparse::Error::HeaderValue => "a control character in a header value".into(),
        httparse::Error::TooManyHeaders => format!("more than {MAX_HEADERS} header lines"),
    }
}

/// Parses `text` with the URL parser, refusing what it reads only by correcting the text: no
/// double slash after the scheme (`http:/x`, `http:///x`), a backslash, user information.
/// Spelling it percent-encodes in the path or query (`|`, `{`, a bad `%`) is fine: what is sent
/// on is the parsed URL.
fn parse_url(text: &str) -> Result<Url, String> {
    let refused = Cell::new(None);
    let note = |violation| {
        if !matches!(violation, SyntaxViolation::NonUrlCodePoint | SyntaxViolation::PercentDecode) {
            refused.set(refused.get().or(Some(violation)));
        }
    };
    let parsed = Url::options().syntax_violation_callback(Some(&note)).parse(text);
    let url = match parsed {
        Ok(url) => url,
        Err(url::ParseError::RelativeUrlWithoutBase) => return Err(NOT_A_PROXY_TARGET.into()),
        Err(url::ParseError::EmptyHost) => return Err("no host".into()),
        Err(url::ParseError::InvalidPort) => return Err("the port is not a number from 1 to 65535".into()),
        Err(error) => return Err(format!("the target is not a URL: {error}")),
    };
    match refused.get() {
        None => Ok(url),
        Some(SyntaxViolation::EmbeddedCredentials | SyntaxViolation::UnencodedAtSign) => Err(match url.host_str() {
            // The real host, so that a person reading the refusal sees where it was going.
            Some(host) => format!("user information in the request target is not forwarded (the host is {host})"),
            None => "user information in the request target is not forwarded".into(),
        }),
        Some(SyntaxViolation::ExpectedDoubleSlash) => Err("no host right after http:// in the URL".into()),
        Some(violation) => Err(format!("the URL is ambiguous: {}", violation.description())),
    }
}

/// `CONNECT host:port`. Anything that would make the URL parser read it as more than an
/// authority is refused first, with the reasons [`Destination::parse_authority`] gives.
fn parse_connect(authority: &str) -> Result<Destination, String> {
    if authority.is_empty() {
        return Err("no host".into());
    }
    if !authority.is_ascii() || authority.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err("the host is not printable ASCII".into());
    }
    if authority.contains('@') {
        return Err("user information in the request target is not forwarded".into());
    }
    if authority.contains(['/', '?', '#', '\\']) {
        return Err("the target is not host:port".into());
    }
    let url = parse_url(&format!("http://{authority}"))?;
    let host = url.host().ok_or("no host")?;
    // The parser drops a scheme's default port: 80 reads as no port under http, 443 under
    // https. Read under https as well, a port that was written is found under one of the two.
    let port = match url.port() {
        Some(port) => port,
        None => parse_url(&format!("https://{authority}"))?.port().ok_or("a port is required (host:port)")?,
    };
    Destination::from_url_host(host, port)
}

/// `http://host[:port]/path?query`: the destination, and what is sent on (`Host` and origin
/// form), both taken from the parsed URL so that what is judged is what is reached.
fn parse_absolute(target: &str) -> Result<(Destination, Target), String> {
    let url = parse_url(target)?;
    match url.scheme() {
        "http" => {}
        "https" => return Err("an https:// URL goes through CONNECT host:443, not to the proxy as a URL".into()),
        _ => return Err(NOT_A_PROXY_TARGET.into()),
    }
    let host = url.host().ok_or("no host")?;
    let destination = Destination::from_url_host(host, url.port().unwrap_or(80))?;
    let authority = url[Position::BeforeHost..Position::AfterPort].to_owned();
    let origin_form = url[Position::BeforePath..Position::AfterQuery].to_owned();
    Ok((destination, Target::Absolute { authority, origin_form }))
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

    /// A whole head, and nothing after it.
    fn parse(text: &str) -> Result<Request, String> {
        match parse_request(text.as_bytes())? {
            Parsed::Complete { request, len } => {
                assert_eq!(len, text.len(), "{text:?}");
                Ok(request)
            }
            Parsed::Partial => Err("the request head does not end in a blank line".into()),
        }
    }

    fn complete(result: Result<Parsed, String>) -> Option<Request> {
        match result {
            Ok(Parsed::Complete { request, .. }) => Some(request),
            _ => None,
        }
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
    fn targets_are_judged_by_the_host_the_url_parser_reads() {
        // The old parser sliced at "://" and the first "/": these are where slicing and a URL
        // parser disagree about the host.
        let err = parse("GET http://127.0.0.1@evil.example/ HTTP/1.1\r\n\r\n").unwrap_err();
        assert!(err.contains("user information") && err.contains("evil.example"), "{err}");
        assert!(!err.contains("127.0.0.1"), "{err}");
        for (target, expected) in [
            ("http://evil.example\\@127.0.0.1/", "ambiguous"),
            ("http:\\\\127.0.0.1/", "no host right after"),
            ("http:/127.0.0.1/", "no host right after"),
            ("http://:@127.0.0.1/", "user information"),
            ("http://a.example:0/", "1 to 65535"),
            ("http://a..example/", "empty label"),
        ] {
            let err = parse(&format!("GET {target} HTTP/1.1\r\n\r\n")).unwrap_err();
            assert!(err.contains(expected), "{target}: {err}");
        }
        // What is judged is what is sent on: the parsed host, port and path.
        for (target, destination, host, origin) in [
            ("http://ex%41mple.com/", "example.com:80", "example.com", "/"),
            ("http://0x7f.1:8080/a/../b", "127.0.0.1:8080", "127.0.0.1:8080", "/b"),
            ("http://a.example:80/x?y|z", "a.example:80", "a.example", "/x?y|z"),
            ("http://a.example/{x}", "a.example:80", "a.example", "/%7Bx%7D"),
        ] {
            let request = parse(&format!("GET {target} HTTP/1.1\r\nHost: other\r\n\r\n")).unwrap();
            assert_eq!(request.destination.to_string(), destination, "{target}");
            let head = String::from_utf8(request.origin_head().unwrap()).unwrap();
            assert!(head.starts_with(&format!("GET {origin} HTTP/1.1\r\nHost: {host}\r\n")), "{target}: {head}");
            assert!(!head.contains("other"), "{head}");
        }
        // CONNECT's port, 80 and 443 included (the URL parser drops a scheme's default).
        for (authority, port) in [("a.example:80", 80), ("a.example:443", 443), ("a.example:8443", 8443)] {
            let request = parse(&format!("CONNECT {authority} HTTP/1.1\r\n\r\n")).unwrap();
            assert_eq!(request.destination.port, port, "{authority}");
        }
        for (authority, expected) in [
            ("a.example:", "port is required"),
            ("[::1]", "port is required"),
            ("a.example:0", "1 to 65535"),
            (":443", "no host"),
            ("a.example\\x:443", "not host:port"),
            ("a.example:443#x", "not host:port"),
        ] {
            let err = parse(&format!("CONNECT {authority} HTTP/1.1\r\n\r\n")).unwrap_err();
            assert!(err.contains(expected), "{authority}: {err}");
        }
    }

    #[test]
    fn header_names_and_line_ends_are_strict() {
        for (text, expected) in [
            ("GET http://a.example/ HTTP/1.1\r\nA : b\r\n\r\n", "not a token"),
            ("GET http://a.example/ HTTP/1.1\r\nA\tB: c\r\n\r\n", "not a token"),
            ("GET http://a.example/ HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n", "folded"),
            ("GET http://a.example/ HTTP/1.1\r\n A: b\r\n\r\n", "folded"),
            // httparse would take a bare LF as a line end, and this as a whole head.
            ("GET http://a.example/ HTTP/1.1\n\n", "bare LF"),
            ("\nGET http://a.example/ HTTP/1.1\r\n\r\n", "not METHOD TARGET"),
        ] {
            let err = parse_request(text.as_bytes()).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
        let valid = parse_request(b"GET http://a.example/ HTTP/1.1\r\nA:\tb \r\n\r\n");
        let request = complete(valid).unwrap();
        assert_eq!(request.headers, [("A".to_owned(), b"b".to_vec())]);
    }

    #[test]
    fn a_head_split_across_reads_is_partial_until_its_blank_line() {
        let head = "POST http://a.example/up HTTP/1.1\r\nContent-Length: 4\r\n\r\n";
        let sent = format!("{head}body");
        for cut in 0..head.len() {
            // An empty buffer, or a cut inside the head: read on (nothing is refused early).
            assert_eq!(parse_request(&sent.as_bytes()[..cut]), Ok(Parsed::Partial), "{cut}");
        }
        let Ok(Parsed::Complete { request, len }) = parse_request(sent.as_bytes()) else { panic!() };
        assert_eq!((len, request.destination.to_string().as_str()), (head.len(), "a.example:80"));
        assert_eq!(
            parse("GET http://a.example/ HTTP/1.1\r\n").unwrap_err(),
            "the request head does not end in a blank line"
        );
    }

    #[test]
    fn no_input_panics_the_parser() {
        // Every prefix and single-byte corruption of a valid head.
        let valid = b"GET http://[fd00::1]:81/a?b HTTP/1.1\r\nHost: x\r\nProxy-Authorization: y\r\n\r\n";
        for cut in 0..=valid.len() {
            let _ = parse_request(&valid[..cut]);
            let _ = rewrite_response(&valid[..cut]);
            for byte in [0u8, b'\r', b'\n', b':', b' ', b'[', b']', b'@', 0xff, b'%', b'\\', b'/', b'\t'] {
                let mut bad = valid.to_vec();
                if cut < bad.len() {
                    bad[cut] = byte;
                }
                if let Some(request) = complete(parse_request(&bad)) {
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
            b"@", b"\\", b"%41", b"#",
        ]), 0..16)) {
            let mut head = parts.concat();
            head.extend_from_slice(b"\r\n\r\n");
            if let Some(request) = complete(parse_request(&head)) {
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
