//! The remote connector's rules (design §8.1), pure: PKCE, which redirect URIs a client may
//! register, the pairing code's form, and the grants file's model with the checks a bearer
//! token must pass. Times are Unix seconds given by the caller; randomness is the caller's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::hash::sha256_hex;

/// How long an access token lives: short, so a leaked one is worth little.
pub const ACCESS_TTL_SECS: i64 = 15 * 60;
/// How long a refresh token lives (it rotates at each use).
pub const REFRESH_TTL_SECS: i64 = 30 * 24 * 60 * 60;
/// How long an authorization code lives (used once).
pub const CODE_TTL_SECS: i64 = 60;
/// How long a pairing code lives (used once).
pub const PAIRING_TTL_SECS: i64 = 10 * 60;
/// The longest wait a wrong pairing code imposes before the next try (the waits double from
/// one second): guessing one of 31⁸ codes in its ten minutes is hopeless, and no flood of
/// wrong codes can void the person's code.
pub const PAIRING_MAX_WAIT_SECS: i64 = 60;
/// Characters of a pairing code: no look-alikes (0/O, 1/I/L), so it is read off a screen.
pub const PAIRING_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Characters in a pairing code.
pub const PAIRING_LEN: usize = 8;

/// Whether `verifier` is a PKCE code verifier (RFC 7636 §4.1: 43–128 unreserved characters)
/// whose S256 challenge is `challenge`.
pub fn pkce_s256_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    well_formed && constant_time_eq(s256(verifier).as_bytes(), challenge.as_bytes())
}

/// The S256 challenge of a verifier: base64url (no padding) of its SHA-256.
pub fn s256(verifier: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether a code challenge has the form S256 gives (43 base64url characters).
pub fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What a token is stored as: its SHA-256, hex. A stolen grants file holds no usable token.
pub fn token_hash(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// Compares without stopping at the first difference, so timing says nothing of a secret
/// (`subtle`'s comparison, which the optimizer is kept from shortening; a length differs in
/// the open).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

/// One line of the connector's journal (`connector/journal.jsonl`), typed as a cycle's journal
/// is: what `serve` writes and the control room's Connector screen reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallRecord {
    /// An MCP request made with a valid grant.
    Request {
        /// When.
        at: String,
        /// The grant's id.
        grant: String,
        /// The client's registered name.
        client: String,
        /// The HTTP method.
        http: String,
        /// The JSON-RPC method, when the body had one (the client's own text).
        method: Option<String>,
    },
    /// A tool's answer.
    Tool {
        /// When.
        at: String,
        /// The grant's id.
        grant: String,
        /// The client's registered name.
        client: String,
        /// The tool.
        tool: String,
        /// It answered without an error.
        ok: bool,
        /// The answer's status word (the tool's, else its cycle's).
        status: Option<String>,
    },
}

/// Why a redirect URI cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectError {
    /// Not an absolute http(s) URI.
    #[error("{0:?} is not an absolute https URI")]
    NotAbsolute(String),
    /// Plain http to a host that is not this machine.
    #[error("{0:?} is plain http to another host: only https, or http to a loopback address")]
    PlainHttp(String),
    /// A fragment, which OAuth forbids in a redirect URI.
    #[error("{0:?} has a fragment, which a redirect URI may not have")]
    Fragment(String),
}

/// A redirect URI a client may register: https anywhere, or http to a loopback host (a
/// native client's local listener, RFC 8252 §7.3); never a fragment. Judged on the parsed URI,
/// as the browser that follows it will read it (`http://127.0.0.1@evil.example` goes to
/// evil.example).
pub fn check_redirect_uri(uri: &str) -> Result<(), RedirectError> {
    if uri.contains('#') {
        return Err(RedirectError::Fragment(uri.to_owned()));
    }
    let Ok(parsed) = url::Url::parse(uri) else {
        return Err(RedirectError::NotAbsolute(uri.to_owned()));
    };
    let loopback = match parsed.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err(RedirectError::NotAbsolute(uri.to_owned())),
    };
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(RedirectError::PlainHttp(uri.to_owned())),
        _ => Err(RedirectError::NotAbsolute(uri.to_owned())),
    }
}

/// Where a redirect URI sends the person's browser back to: its host (`chatgpt.com`), or the
/// whole URI when it has none (a custom scheme).
pub fn redirect_host(uri: &str) -> String {
    match url::Url::parse(uri).ok().and_then(|u| u.host_str().filter(|h| !h.is_empty()).map(str::to_owned)) {
        Some(host) => host,
        None => uri.to_owned(),
    }
}

/// A pairing code as typed (any case, spaces and dashes ignored), in its canonical form.
pub fn normalize_pairing(typed: &str) -> String {
    typed.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_uppercase()).collect()
}

/// `XXXXXXXX` → `XXXX-XXXX`, as shown.
pub fn format_pairing(code: &str) -> String {
    if code.len() == PAIRING_LEN && code.is_ascii() {
        format!("{}-{}", &code[..4], &code[4..])
    } else {
        code.to_owned()
    }
}

/// A pairing code from random bytes (one character per byte, by the alphabet; the bias of
/// 256 mod 31 is a fraction of a bit over 40).
pub fn pairing_from(random: &[u8; PAIRING_LEN]) -> String {
    random.iter().map(|b| char::from(PAIRING_ALPHABET[usize::from(*b) % PAIRING_ALPHABET.len()])).collect()
}

/// A token's hash and when it stops working.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    /// [`token_hash`] of the token.
    pub hash: String,
    /// Unix seconds.
    pub expires_at: i64,
}

/// One client's grant: what the person allowed, with the pairing code, on the consent page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// Its id (`g_` and 12 hex characters): what `serve --revoke` and the control room name.
    pub id: String,
    /// The client's id, given at registration.
    pub client_id: String,
    /// The name the client registered with (as the person saw it on the consent page).
    pub client_name: String,
    /// Where the client may be sent back.
    pub redirect_uris: Vec<String>,
    /// The resource the tokens are for (`<base>/mcp`): the audience a token is checked against.
    pub resource: String,
    /// When the person allowed it (RFC 3339).
    pub created_at: String,
    /// The live access tokens (expired ones are dropped when the file is rewritten).
    #[serde(default)]
    pub access: Vec<Token>,
    /// The refresh token in force.
    #[serde(default)]
    pub refresh: Option<Token>,
    /// Refresh tokens already used: one presented again means it was stolen, and the grant ends.
    #[serde(default)]
    pub used_refresh: Vec<String>,
    /// The cycles this client started (the only ones its tools reach).
    #[serde(default)]
    pub cycles: Vec<String>,
    /// Review cycles the person shared with this client (`serve --share`): only `get_review`
    /// reads them, and only what a review's status, manifest and findings say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// When it was revoked, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<Revoked>,
    /// Keys a newer forgeloop wrote: kept on rewrite.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// How a grant ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    /// When (RFC 3339).
    pub at: String,
    /// Why: `person` (revoked by the person), `refresh_reuse` (a used refresh token came back).
    pub reason: String,
}

/// `connector/grants.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grants {
    /// Every grant, revoked ones included (the control room shows them).
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// Keys a newer forgeloop wrote: kept on rewrite.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Why a bearer token is refused (the 401's `error_description`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenRefusal {
    /// No grant holds it.
    #[error("the access token is not known")]
    Unknown,
    /// It expired.
    #[error("the access token expired")]
    Expired,
    /// Its grant was revoked.
    #[error("the grant was revoked")]
    Revoked,
    /// It was issued for another resource.
    #[error("the access token was issued for another resource")]
    WrongAudience,
}

impl Grants {
    /// The grant an access token belongs to, if the token is live, unrevoked and for `resource`.
    pub fn check_access(&self, token: &str, resource: &str, now: i64) -> Result<&Grant, TokenRefusal> {
        let hash = token_hash(token);
        let found = self.grants.iter().find_map(|g| {
            g.access.iter().find(|t| constant_time_eq(t.hash.as_bytes(), hash.as_bytes())).map(|t| (g, t))
        });
        let Some((grant, token)) = found else { return Err(TokenRefusal::Unknown) };
        if grant.revoked.is_some() {
            return Err(TokenRefusal::Revoked);
        }
        if token.expires_at <= now {
            return Err(TokenRefusal::Expired);
        }
        if grant.resource != resource {
            return Err(TokenRefusal::WrongAudience);
        }
        Ok(grant)
    }

    /// The grant by id.
    pub fn get(&self, id: &str) -> Option<&Grant> {
        self.grants.iter().find(|g| g.id == id)
    }

    /// The grant by id, to change.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Grant> {
        self.grants.iter_mut().find(|g| g.id == id)
    }

    /// Drops expired access tokens (they can never be accepted again).
    pub fn prune(&mut self, now: i64) {
        for grant in &mut self.grants {
            grant.access.retain(|t| t.expires_at > now);
        }
    }
}

/// What a refresh token presented to `/token` turns out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshCheck {
    /// The grant's current refresh token, live: rotate it.
    Current(String),
    /// One already used: the grant must end (it was stolen, or the client is confused).
    Reused(String),
    /// Not known, expired, revoked, or another client's.
    Invalid,
}

impl Grants {
    /// Checks a refresh token presented by `client_id`.
    pub fn check_refresh(&self, token: &str, client_id: &str, now: i64) -> RefreshCheck {
        let hash = token_hash(token);
        for grant in &self.grants {
            if grant.used_refresh.iter().any(|h| constant_time_eq(h.as_bytes(), hash.as_bytes())) {
                return RefreshCheck::Reused(grant.id.clone());
            }
            let current = grant.refresh.as_ref().is_some_and(|t| constant_time_eq(t.hash.as_bytes(), hash.as_bytes()));
            if current {
                let live = grant.refresh.as_ref().is_some_and(|t| t.expires_at > now);
                return if grant.revoked.is_none() && live && grant.client_id == client_id {
                    RefreshCheck::Current(grant.id.clone())
                } else {
                    RefreshCheck::Invalid
                };
            }
        }
        RefreshCheck::Invalid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

    #[test]
    fn pkce_matches_the_rfc_7636_example() {
        assert_eq!(s256(VERIFIER), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert!(pkce_s256_matches(VERIFIER, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(is_s256_challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
    }

    #[test]
    fn pkce_refuses_a_wrong_or_malformed_verifier() {
        let challenge = s256(VERIFIER);
        assert!(!pkce_s256_matches("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXx", &challenge));
        // "plain": the challenge itself as the verifier.
        assert!(!pkce_s256_matches(&challenge, &challenge));
        assert!(!pkce_s256_matches("short", &s256("short")));
        let bad = format!("{VERIFIER}!");
        assert!(!pkce_s256_matches(&bad, &s256(&bad)));
        assert!(!is_s256_challenge("plain-challenge"));
    }

    #[test]
    fn redirect_uris_are_https_or_loopback_http() {
        assert!(check_redirect_uri("https://chatgpt.com/connector_platform_oauth_redirect").is_ok());
        assert!(check_redirect_uri("http://127.0.0.1:33418/callback").is_ok());
        assert!(check_redirect_uri("http://localhost/cb").is_ok());
        assert!(check_redirect_uri("http://[::1]:9/cb").is_ok());
        assert!(matches!(check_redirect_uri("http://evil.example/cb"), Err(RedirectError::PlainHttp(_))));
        assert!(matches!(check_redirect_uri("http://localhost.evil.example/cb"), Err(RedirectError::PlainHttp(_))));
        assert!(matches!(check_redirect_uri("http://127.0.0.1@evil.example/cb"), Err(RedirectError::PlainHttp(_))));
        // What the browser will reach is what is judged and shown: the parsed host.
        assert_eq!(redirect_host("https://127.0.0.1@Evil.Example/cb"), "evil.example");
        assert_eq!(redirect_host("https://chatgpt.com/connector_platform_oauth_redirect"), "chatgpt.com");
        assert_eq!(redirect_host("com.example.app:/cb"), "com.example.app:/cb");
        assert!(check_redirect_uri("HTTP://LOCALHOST:9/cb").is_ok());
        assert!(matches!(check_redirect_uri("javascript:alert(1)"), Err(RedirectError::NotAbsolute(_))));
        // A browser reads `https:///x` as https://x/ (the WHATWG parser skips the extra
        // slash): judged, and shown to the person, as that host.
        assert!(check_redirect_uri("https:///x").is_ok());
        assert_eq!(redirect_host("https:///x"), "x");
        assert!(matches!(check_redirect_uri("https://"), Err(RedirectError::NotAbsolute(_))));
        assert!(matches!(check_redirect_uri("http:///127.0.0.1.evil.example/cb"), Err(RedirectError::PlainHttp(_))));
        assert!(matches!(check_redirect_uri("https://a.example/cb#x"), Err(RedirectError::Fragment(_))));
    }

    #[test]
    fn pairing_codes_are_read_forgivingly() {
        let code = pairing_from(&[0, 1, 2, 3, 30, 31, 255, 100]);
        assert_eq!(code.len(), PAIRING_LEN);
        assert!(code.bytes().all(|b| PAIRING_ALPHABET.contains(&b)));
        let shown = format_pairing(&code);
        assert_eq!(shown.len(), 9);
        assert_eq!(normalize_pairing(&shown.to_lowercase()), code);
        assert_eq!(normalize_pairing(" abcd - efgh "), "ABCDEFGH");
    }

    fn grant(id: &str, access: &str, refresh: &str) -> Grant {
        Grant {
            id: id.into(),
            client_id: "c1".into(),
            client_name: "ChatGPT".into(),
            redirect_uris: vec![],
            resource: "https://x.example/mcp".into(),
            created_at: "2026-12-02T00:00:00Z".into(),
            access: vec![Token { hash: token_hash(access), expires_at: 1000 }],
            refresh: Some(Token { hash: token_hash(refresh), expires_at: 5000 }),
            used_refresh: vec![token_hash("old-refresh")],
            cycles: vec![],
            shared: vec![],
            revoked: None,
            extra: BTreeMap::new(),
        }
    }

    #[test]
    fn an_access_token_is_checked_for_expiry_revocation_and_audience() {
        let mut grants = Grants { grants: vec![grant("g1", "tok", "ref")], extra: BTreeMap::new() };
        assert_eq!(grants.check_access("tok", "https://x.example/mcp", 999).map(|g| g.id.as_str()), Ok("g1"));
        assert_eq!(grants.check_access("tok", "https://x.example/mcp", 1000).err(), Some(TokenRefusal::Expired));
        assert_eq!(grants.check_access("tok", "https://y.example/mcp", 10).err(), Some(TokenRefusal::WrongAudience));
        assert_eq!(grants.check_access("nope", "https://x.example/mcp", 10).err(), Some(TokenRefusal::Unknown));
        grants.grants[0].revoked = Some(Revoked { at: "t".into(), reason: "person".into() });
        assert_eq!(grants.check_access("tok", "https://x.example/mcp", 10).err(), Some(TokenRefusal::Revoked));
    }

    #[test]
    fn a_refresh_token_rotates_and_a_reused_one_is_caught() {
        let grants = Grants { grants: vec![grant("g1", "tok", "ref")], extra: BTreeMap::new() };
        assert_eq!(grants.check_refresh("ref", "c1", 10), RefreshCheck::Current("g1".into()));
        assert_eq!(grants.check_refresh("ref", "c2", 10), RefreshCheck::Invalid);
        assert_eq!(grants.check_refresh("ref", "c1", 5000), RefreshCheck::Invalid);
        assert_eq!(grants.check_refresh("old-refresh", "c1", 10), RefreshCheck::Reused("g1".into()));
        assert_eq!(grants.check_refresh("never", "c1", 10), RefreshCheck::Invalid);
    }

    #[test]
    fn unknown_keys_survive_a_round_trip() {
        let text = r#"{"grants":[],"future":{"a":1}}"#;
        let grants: Grants = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&grants).unwrap(), text);
    }
}
