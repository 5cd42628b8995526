//! Client ID metadata documents (design §8.1; the MCP authorization specification's way for a
//! client to be known without registering, draft-ietf-oauth-client-id-metadata-document): a
//! client whose `client_id` is an https URL publishes its registration at that URL, and the
//! authorization server fetches it. Pure: which URLs may be fetched and from which addresses,
//! what a fetched document must say, and how long it is kept. The fetch itself is
//! `serve::client_document`; an unauthenticated caller names the URL, so every rule here is
//! about not letting that caller point forgeloop at anything but a small public document.

use core::net::IpAddr;

use serde_json::Value;

use super::address::{AddrClass, classify, describe};
use super::connector::check_redirect_uri;
use super::egress::{Destination, Host};
use super::terminal;

/// The longest `client_id` URL fetched.
pub const MAX_URL_LEN: usize = 512;
/// The largest document read; a longer answer is refused, not cut.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// The most redirect URIs a document may list (as many as a registration may).
pub const MAX_REDIRECT_URIS: usize = 8;
/// How long a document is kept when its answer says nothing about caching.
pub const DEFAULT_KEEP_SECS: u64 = 5 * 60;
/// The longest a document is kept, whatever its answer says.
pub const MAX_KEEP_SECS: u64 = 60 * 60;
/// The longest a client's name is shown.
const MAX_NAME_CHARS: usize = 80;

/// Whether `client_id` names a metadata document (else it is an id this server registered).
pub fn is_document_id(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

/// A `client_id` URL that may be fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentUrl {
    /// The URL as the client wrote it: the document's `client_id` must equal it byte for byte.
    pub url: String,
    /// Its host and port (443 when none is written).
    pub destination: Destination,
    /// The path and query, for the request line.
    pub target: String,
}

impl DocumentUrl {
    /// The host as the person reads it on the consent page: `host`, or `host:port` for a port
    /// other than 443.
    pub fn site(&self) -> String {
        match self.destination.port {
            443 => self.destination.host_text(),
            port => format!("{}:{port}", self.destination.host_text()),
        }
    }
}

/// Checks a `client_id` URL: https (lowercase, as the draft's examples and every client write
/// it), a host and optional port, a path other than `/`, no dot segments (plain or
/// percent-encoded), no fragment, no user information, printable ASCII, at most
/// [`MAX_URL_LEN`]. A host name must have a dot: a single label (`jenkins`, `router`) is a
/// name of the local network, resolved through its search domains. The error says why, in a
/// few words.
pub fn parse_url(url: &str) -> Result<DocumentUrl, String> {
    if url.len() > MAX_URL_LEN {
        return Err(format!("the URL is longer than {MAX_URL_LEN} characters"));
    }
    if !url.is_ascii() || url.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err("the URL is not printable ASCII".into());
    }
    if !url.starts_with("https:") {
        return Err("the URL is not https".into());
    }
    if url.contains('#') {
        return Err("the URL has a fragment".into());
    }
    if url.starts_with("https:///") {
        return Err("the host: the URL has none".into());
    }
    // Dot segments as written (plain or percent-encoded): the parser would resolve them, and the
    // document would then be fetched from another path than the one the client named.
    let written_path = url.split('?').next().unwrap_or_default().split('/').skip(3);
    if written_path.map(|s| s.to_ascii_lowercase().replace("%2e", ".")).any(|s| s == "." || s == "..") {
        return Err("the URL's path has a \".\" or \"..\" segment".into());
    }
    let parsed = url::Url::parse(url).map_err(|e| format!("the host: {e}"))?;
    if parsed.scheme() != "https" {
        return Err("the URL is not https".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("the URL has user information".into());
    }
    let host = parsed.host().ok_or("the host: the URL has none")?;
    let destination =
        Destination::from_url_host(host, parsed.port().unwrap_or(443)).map_err(|e| format!("the host: {e}"))?;
    if matches!(&destination.host, Host::Name(name) if !name.contains('.')) {
        return Err("the host is a single name without a dot, a name of the local network".into());
    }
    if parsed.path() == "/" {
        return Err("the URL has no path (a document lives at a path, not at the site's root)".into());
    }
    // What is checked and fetched is the parsed URL; the client must have written it that way
    // (the document names its URL byte for byte), so a name or path the parser reads otherwise
    // than it is written (a default port spelled out, an upper-case host) is refused.
    // An IP literal is read in its canonical form (`0x7f.1` is 127.0.0.1) and then judged by
    // `check_address`, which says nothing of which address it was.
    if matches!(destination.host, Host::Name(_)) && parsed.as_str() != url {
        return Err(format!("the host or path is read otherwise than written: {parsed}"));
    }
    let target = match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_owned(),
    };
    Ok(DocumentUrl { url: url.to_owned(), destination, target })
}

/// Whether the document may be fetched from `ip`: only a public address. A name that resolves to
/// loopback, a private network, link-local (the cloud metadata endpoint) or anything else not
/// globally routable is refused, whatever the name; so is an IP literal of those.
pub fn check_address(ip: IpAddr) -> Result<(), String> {
    match classify(ip) {
        AddrClass::Public => Ok(()),
        _ => Err(format!(
            "{} is {}; client documents are fetched only from public addresses",
            ip.to_canonical(),
            describe(ip)
        )),
    }
}

/// A client as its metadata document describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientDocument {
    /// The URL, which is the client's id.
    pub client_id: String,
    /// The document's `client_name`, cleaned: the client's own claim.
    pub claimed_name: Option<String>,
    /// The site the document was read from (`acme.example`, `host:port`): not a claim.
    pub site: String,
    /// Where the client may be sent back, each as a registration would be checked.
    pub redirect_uris: Vec<String>,
}

impl ClientDocument {
    /// The name grants, logs and the control room use: `Acme (acme.example)`, or the site
    /// alone. The pages show the claim and the document's URL apart.
    pub fn display_name(&self) -> String {
        match &self.claimed_name {
            Some(name) => format!("{name} ({})", self.site),
            None => self.site.clone(),
        }
    }
}

/// Checks a fetched document against its URL: a JSON object whose `client_id` is the URL,
/// a public client (no secret; `token_endpoint_auth_method` absent or `none`), one to
/// [`MAX_REDIRECT_URIS`] redirect URIs a registration would accept.
pub fn parse_document(url: &DocumentUrl, body: &[u8]) -> Result<ClientDocument, String> {
    if body.len() > MAX_DOCUMENT_BYTES {
        return Err(format!("the document is larger than {MAX_DOCUMENT_BYTES} bytes"));
    }
    let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(body) else {
        return Err("the document is not a JSON object".into());
    };
    if doc.get("client_id").and_then(Value::as_str) != Some(url.url.as_str()) {
        return Err("the document's client_id is not its own URL".into());
    }
    if doc.contains_key("client_secret") || doc.contains_key("client_secret_expires_at") {
        return Err("the document has a client secret; only public clients (with PKCE) are accepted".into());
    }
    match doc.get("token_endpoint_auth_method") {
        None => {}
        Some(Value::String(method)) if method == "none" => {}
        Some(_) => {
            return Err(
                "token_endpoint_auth_method must be \"none\": only public clients (with PKCE) are accepted".into()
            );
        }
    }
    let uris: Vec<String> = match doc.get("redirect_uris").and_then(Value::as_array) {
        Some(list) if !list.is_empty() && list.len() <= MAX_REDIRECT_URIS => list
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or("redirect_uris: strings only")?,
        _ => return Err(format!("redirect_uris: one to {MAX_REDIRECT_URIS} URIs")),
    };
    for uri in &uris {
        check_redirect_uri(uri).map_err(|e| format!("redirect_uris: {e}"))?;
    }
    Ok(ClientDocument {
        client_id: url.url.clone(),
        claimed_name: doc.get("client_name").and_then(Value::as_str).and_then(clean_name),
        site: url.site(),
        redirect_uris: uris,
    })
}

/// A client's self-declared name as it may be shown: control characters and bidi controls
/// dropped (a right-to-left override would make `ia.edualc.gg` read as `gg.claude.ai`), at
/// most [`MAX_NAME_CHARS`] characters, `None` when nothing printable is left.
pub fn clean_name(name: &str) -> Option<String> {
    let clean: String =
        name.chars().filter(|c| !c.is_control() && !terminal::is_control(*c)).take(MAX_NAME_CHARS).collect();
    (!clean.trim().is_empty()).then_some(clean)
}

/// How long a document is kept, in seconds, from its answer's `Cache-Control`: `no-store` or
/// `no-cache` → 0 (fetched again next time), `max-age=N` → N up to [`MAX_KEEP_SECS`], else
/// [`DEFAULT_KEEP_SECS`].
pub fn keep_secs(cache_control: Option<&str>) -> u64 {
    let Some(header) = cache_control else { return DEFAULT_KEEP_SECS };
    let mut keep = DEFAULT_KEEP_SECS;
    for directive in header.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-store" || directive == "no-cache" {
            return 0;
        }
        if let Some(age) = directive.strip_prefix("max-age=") {
            keep = age.trim_matches('"').parse::<u64>().map_or(0, |secs| secs.min(MAX_KEEP_SECS));
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://client.example/oauth/client.json";

    fn url(text: &str) -> DocumentUrl {
        parse_url(text).unwrap()
    }

    fn doc(value: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    #[test]
    fn a_url_is_https_with_a_host_and_a_path() {
        let ok = url("https://client.example:8443/oauth/client.json?v=2");
        assert_eq!(ok.destination.to_string(), "client.example:8443");
        assert_eq!(ok.target, "/oauth/client.json?v=2");
        assert_eq!(ok.site(), "client.example:8443");
        assert_eq!(url(URL).site(), "client.example");
        assert_eq!(url("https://[2606:4700::1]/c").site(), "[2606:4700::1]");
        let refused = [
            ("http://client.example/c", "not https"),
            ("HTTPS://client.example/c", "not https"),
            ("https://client.example", "no path"),
            ("https://client.example/", "no path"),
            ("https://client.example/?x=1", "no path"),
            ("https://client.example/a#b", "fragment"),
            ("https://someone@client.example/c", "user information"),
            ("https://client.example@127.0.0.1/c", "user information"),
            ("https://client.example/a/../c", "segment"),
            ("https://client.example/./c", "segment"),
            ("https://client.example/a/%2E%2e/c", "segment"),
            ("https://client.example/a b", "printable"),
            ("https://client.exämple/c", "printable"),
            ("https:///c", "the host"),
            ("https://client.example:0/c", "the host"),
            ("https://client.example:99999/c", "the host"),
            ("https://fd00::1/c", "the host"),
            ("https://jenkins/c", "single name"),
            ("https://jenkins./c", "single name"),
        ];
        for (text, why) in refused {
            let err = parse_url(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
        // An IP literal is read as the address it means, which check_address then judges.
        assert_eq!(url("https://0x7f.1/c").destination.to_string(), "127.0.0.1:443");
        let long = format!("https://client.example/{}", "a".repeat(MAX_URL_LEN));
        assert!(parse_url(&long).unwrap_err().contains("longer"));
        assert!(is_document_id(URL) && !is_document_id("fl_abc") && !is_document_id("http://x/y"));
    }

    #[test]
    fn only_public_addresses_are_fetched_from() {
        for ok in ["1.2.3.4", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
            assert!(check_address(ok.parse().unwrap()).is_ok(), "{ok}");
        }
        for (bad, what) in [
            ("127.0.0.1", "loopback"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("192.168.0.1", "private"),
            ("fd00::1", "private"),
            ("169.254.169.254", "cloud metadata"),
            ("fe80::1", "link-local"),
            ("100.64.0.1", "CGNAT"),
            ("0.0.0.0", "unspecified"),
            ("2002:7f00:1::", "loopback"),
            ("64:ff9b::a00:1", "private"),
        ] {
            let err = check_address(bad.parse().unwrap()).unwrap_err();
            assert!(err.contains(what) && err.contains("only from public addresses"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_document_names_its_own_url_and_a_public_client() {
        let u = url(URL);
        let good = serde_json::json!({
            "client_id": URL,
            "client_name": "Acme\u{7} Chat",
            "redirect_uris": ["https://acme.example/callback", "http://127.0.0.1:33418/cb"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
        });
        let parsed = parse_document(&u, &doc(good.clone())).unwrap();
        assert_eq!(parsed.client_id, URL);
        assert_eq!(parsed.claimed_name.as_deref(), Some("Acme Chat"));
        assert_eq!(parsed.display_name(), "Acme Chat (client.example)");
        assert_eq!(parsed.redirect_uris.len(), 2);
        let mut unnamed = good.clone();
        unnamed.as_object_mut().unwrap().remove("client_name");
        unnamed.as_object_mut().unwrap().remove("token_endpoint_auth_method");
        assert_eq!(parse_document(&u, &doc(unnamed)).unwrap().display_name(), "client.example");

        let with = |key: &str, value: serde_json::Value| {
            let mut changed = good.clone();
            changed[key] = value;
            doc(changed)
        };
        let refused = [
            (with("client_id", "https://client.example/oauth/other.json".into()), "not its own URL"),
            (with("client_id", "https://client.example/oauth/client.json/".into()), "not its own URL"),
            (with("client_secret", "s3cr3t".into()), "client secret"),
            (with("token_endpoint_auth_method", "client_secret_basic".into()), "public clients"),
            (with("token_endpoint_auth_method", "private_key_jwt".into()), "public clients"),
            (with("redirect_uris", serde_json::json!([])), "one to 8"),
            (with("redirect_uris", serde_json::json!(["http://evil.example/cb"])), "redirect_uris"),
            (with("redirect_uris", serde_json::json!(["http://127.0.0.1@evil.example/cb"])), "redirect_uris"),
            (with("redirect_uris", serde_json::json!([1])), "strings only"),
            (with("redirect_uris", serde_json::json!(vec!["https://a.example/cb"; 9])), "one to 8"),
            (b"[1, 2]".to_vec(), "not a JSON object"),
            (b"{\"client_id\":".to_vec(), "not a JSON object"),
            (vec![b' '; MAX_DOCUMENT_BYTES + 1], "larger than"),
        ];
        for (body, why) in refused {
            let err = parse_document(&u, &body).unwrap_err();
            assert!(err.contains(why), "{}: {err}", String::from_utf8_lossy(&body[..body.len().min(120)]));
        }
    }

    #[test]
    fn a_document_is_kept_as_its_answer_says_within_bounds() {
        assert_eq!(keep_secs(None), DEFAULT_KEEP_SECS);
        assert_eq!(keep_secs(Some("public, max-age=120")), 120);
        assert_eq!(keep_secs(Some("Max-Age=\"90\"")), 90);
        assert_eq!(keep_secs(Some("max-age=31536000")), MAX_KEEP_SECS);
        assert_eq!(keep_secs(Some("max-age=soon")), 0);
        assert_eq!(keep_secs(Some("max-age=600, no-store")), 0);
        assert_eq!(keep_secs(Some("no-cache")), 0);
        assert_eq!(keep_secs(Some("private")), DEFAULT_KEEP_SECS);
    }

    #[test]
    fn names_are_cleaned_and_bounded() {
        assert_eq!(clean_name("a\u{1b}[31mb"), Some("a[31mb".into()));
        assert_eq!(clean_name("Claude \u{202e}ia.edualc.gg\u{2066}"), Some("Claude ia.edualc.gg".into()));
        assert_eq!(clean_name("\u{9b}x\u{7f}"), Some("x".into()));
        assert_eq!(clean_name(" \n\t"), None);
        assert_eq!(clean_name(&"x".repeat(200)).unwrap().chars().count(), MAX_NAME_CHARS);
    }
}
