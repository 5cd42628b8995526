//! The authorization server's moving parts (design §8.1): registered clients, the pairing
//! code, consent tickets and authorization codes live in memory; a grant is written to
//! `connector/grants.json` only when a code the person allowed is redeemed. So a caller
//! without a grant changes no file, and a restart forgets every half-finished authorization.

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::cycle::Ctx;
use crate::cycle::connector;
use crate::domain::client_document::{self as documents, ClientDocument};
use crate::domain::connector::{
    self as rules, ACCESS_TTL_SECS, CODE_TTL_SECS, Grant, PAIRING_LEN, PAIRING_MAX_WAIT_SECS, PAIRING_TTL_SECS,
    REFRESH_TTL_SECS, RefreshCheck, Revoked, Token,
};
use crate::domain::form;
/// The form decoder the endpoints use (`domain::form`).
pub use crate::domain::form::decode as form_decode;

/// Registered clients kept at most (oldest forgotten first): registration is open to anyone.
const MAX_CLIENTS: usize = 256;
/// Consent tickets and codes kept at most.
const MAX_PENDING: usize = 64;
/// How long a consent page stays good.
const TICKET_TTL_SECS: i64 = 10 * 60;

/// `n` random bytes from the operating system, base64url: tokens, codes, ids.
pub fn random_token(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness from the operating system: {e}"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A client: registered here (RFC 7591) or known by its metadata document.
#[derive(Debug, Clone)]
pub struct Client {
    /// The name grants, the journal and the control room use; for a client known by its
    /// document, with the site it came from (`Acme (acme.example)`).
    pub name: String,
    /// The name as the client gave it, its own claim; the pages show it apart from where it
    /// came from.
    pub claimed_name: Option<String>,
    /// The URL of its metadata document; `None` for a client that registered here.
    pub document: Option<String>,
    /// Where it may be sent back.
    pub redirect_uris: Vec<String>,
    /// When it registered (Unix seconds), to forget the oldest first.
    pub registered_at: i64,
}

/// An authorization request, as `/authorize` checked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRequest {
    /// The client.
    pub client_id: String,
    /// Where the code goes.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub challenge: String,
    /// The client's `state`, returned as is.
    pub state: Option<String>,
}

/// A request the person gave the right pairing code for, waiting for Allow or Deny.
#[derive(Debug, Clone)]
struct Ticket {
    request: AuthRequest,
    /// The client as the consent page named it: the grant records this one.
    client: Client,
    expires_at: i64,
}

/// An authorization code the person allowed, until it is redeemed (once).
#[derive(Debug, Clone)]
struct Code {
    request: AuthRequest,
    client: Client,
    expires_at: i64,
}

/// The pairing code in force.
#[derive(Debug, Clone)]
pub struct Pairing {
    /// The code (canonical form, no dash).
    pub code: String,
    /// When it stops working (Unix seconds).
    pub expires_at: i64,
    /// Wrong codes so far: each doubles the wait before the next try.
    pub wrong: u32,
    /// No code is checked before this (Unix seconds).
    pub next_try_at: i64,
    /// It was used for a grant: the next one is made.
    pub used: bool,
}

impl Pairing {
    /// Whether it can still be typed: not used, not expired (wrong tries only slow it down).
    fn usable(&self, now: i64) -> bool {
        !self.used && now < self.expires_at
    }

    /// The wait after the `wrong`-th wrong code: 1, 2, 4… seconds, at most a minute.
    fn wait_after(wrong: u32) -> i64 {
        1i64.checked_shl(wrong.saturating_sub(1)).unwrap_or(i64::MAX).min(PAIRING_MAX_WAIT_SECS)
    }
}

/// Why an authorization step is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An OAuth error for the client (`error`, `error_description`), HTTP 400.
    OAuth(&'static str, String),
    /// The page is shown again with this message (a wrong pairing code).
    Page(String),
}

fn oauth(error: &'static str, description: impl Into<String>) -> Refusal {
    Refusal::OAuth(error, description.into())
}

/// The authorization server's state.
#[derive(Debug)]
pub struct AuthState {
    /// `<base>/mcp`: the only resource tokens are issued for.
    pub resource: String,
    clients: HashMap<String, Client>,
    tickets: HashMap<String, Ticket>,
    codes: HashMap<String, Code>,
    /// The pairing code in force.
    pub pairing: Pairing,
}

impl AuthState {
    /// A fresh state with a first pairing code.
    pub fn new(resource: String, now: i64) -> Result<AuthState, String> {
        Ok(AuthState {
            resource,
            clients: HashMap::new(),
            tickets: HashMap::new(),
            codes: HashMap::new(),
            pairing: new_pairing(now)?,
        })
    }

    /// Makes the next pairing code when the one in force is used or expired (or the person
    /// asked: `force`); `true` when it did (the caller shows it). Wrong tries never void a code
    /// (a guesser could otherwise keep the person from pairing): each makes the next wait
    /// longer, and a failed try changes no file.
    pub fn renew_pairing(&mut self, now: i64, force: bool) -> Result<bool, String> {
        let done = self.pairing.used || now >= self.pairing.expires_at;
        if force || done {
            self.pairing = new_pairing(now)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Other clients that call themselves what `client_id` does (registered here, or holding
    /// a grant), each as the hosts it redirects to: a name is only a claim, so the pages warn.
    pub fn namesakes(&self, ctx: &Ctx, client_id: &str, name: &str) -> Vec<String> {
        let hosts = |uris: &[String]| uris.iter().map(|u| rules::redirect_host(u)).collect::<Vec<_>>().join(", ");
        let mut found: Vec<String> = self
            .clients
            .iter()
            .filter(|(id, c)| id.as_str() != client_id && c.name == name)
            .map(|(_, c)| hosts(&c.redirect_uris))
            .collect();
        if let Ok(grants) = connector::files(ctx).load_grants() {
            found.extend(
                grants
                    .grants
                    .iter()
                    .filter(|g| g.client_id != client_id && g.client_name == name && g.revoked.is_none())
                    .map(|g| hosts(&g.redirect_uris)),
            );
        }
        found.sort();
        found.dedup();
        found
    }

    /// RFC 7591: registers a public client; answers the registration document.
    pub fn register(&mut self, body: &Value, now: i64) -> Result<Value, Refusal> {
        let claimed_name = body.get("client_name").and_then(Value::as_str).and_then(documents::clean_name);
        let name = claimed_name.clone().unwrap_or_else(|| "an unnamed client".to_owned());
        let uris: Vec<String> = match body.get("redirect_uris").and_then(Value::as_array) {
            Some(list) if !list.is_empty() && list.len() <= 8 => {
                list.iter().filter_map(Value::as_str).map(str::to_owned).collect()
            }
            _ => return Err(oauth("invalid_redirect_uri", "redirect_uris: one to eight URIs")),
        };
        for uri in &uris {
            rules::check_redirect_uri(uri).map_err(|e| oauth("invalid_redirect_uri", e.to_string()))?;
        }
        if let Some(method) = body.get("token_endpoint_auth_method").and_then(Value::as_str)
            && method != "none"
        {
            return Err(oauth(
                "invalid_client_metadata",
                "only public clients (token_endpoint_auth_method \"none\", with PKCE) are accepted",
            ));
        }
        if self.clients.len() >= MAX_CLIENTS
            && let Some(oldest) = self.clients.iter().min_by_key(|(_, c)| c.registered_at).map(|(id, _)| id.clone())
        {
            self.clients.remove(&oldest);
        }
        let id = format!("fl_{}", random_token(18).map_err(|e| oauth("server_error", e))?);
        let client = Client {
            name: name.clone(),
            claimed_name,
            document: None,
            redirect_uris: uris.clone(),
            registered_at: now,
        };
        self.clients.insert(id.clone(), client);
        Ok(json!({
            "client_id": id,
            "client_id_issued_at": now,
            "client_name": name,
            "redirect_uris": uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }))
    }

    /// The client, registered here or holding a grant (a client granted before a restart).
    /// A client known by its metadata document is looked up here only to refresh a grant;
    /// authorizing one always reads its document ([`AuthState::check_request`]).
    pub fn client(&self, ctx: &Ctx, client_id: &str) -> Option<Client> {
        if let Some(client) = self.clients.get(client_id) {
            return Some(client.clone());
        }
        let grants = connector::files(ctx).load_grants().ok()?;
        let grant = grants.grants.iter().rev().find(|g| g.client_id == client_id && g.revoked.is_none())?;
        Some(Client {
            name: grant.client_name.clone(),
            claimed_name: Some(grant.client_name.clone()),
            document: documents::is_document_id(client_id).then(|| client_id.to_owned()),
            redirect_uris: grant.redirect_uris.clone(),
            registered_at: 0,
        })
    }

    /// Checks `/authorize`'s query. A `client_id` that is an https URL is a client known by its
    /// metadata document, which the caller fetched (`document`; design §8.1); any other is one
    /// registered here. Every refusal is shown on a page, never redirected to: the redirect
    /// URI is not trusted until the client and its redirect URIs are known.
    pub fn check_request(
        &self,
        ctx: &Ctx,
        query: &HashMap<String, String>,
        document: Option<&ClientDocument>,
    ) -> Result<(AuthRequest, Client), Refusal> {
        let get = |k: &str| query.get(k).map(String::as_str).unwrap_or("");
        let client_id = get("client_id");
        let client = if documents::is_document_id(client_id) {
            match document.filter(|d| d.client_id == client_id) {
                Some(d) => Client {
                    name: d.display_name(),
                    claimed_name: d.claimed_name.clone(),
                    document: Some(d.client_id.clone()),
                    redirect_uris: d.redirect_uris.clone(),
                    registered_at: 0,
                },
                None => return Err(oauth("invalid_client", "the client's metadata document was not read")),
            }
        } else {
            match self.client(ctx, client_id) {
                Some(client) => client,
                None => return Err(oauth("invalid_client", "unknown client_id: register first")),
            }
        };
        let redirect_uri = get("redirect_uri");
        if !client.redirect_uris.iter().any(|u| u == redirect_uri) {
            return Err(oauth("invalid_request", "redirect_uri is not one the client registered"));
        }
        self.check_fields(query)?;
        let request = AuthRequest {
            client_id: client_id.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            challenge: get("code_challenge").to_owned(),
            state: query.get("state").cloned(),
        };
        Ok((request, client))
    }

    /// The checks of `/authorize`'s query that need no client: `response_type`, PKCE and
    /// `resource`. Made first, so a malformed request costs no fetch of a client's document.
    pub fn check_fields(&self, query: &HashMap<String, String>) -> Result<(), Refusal> {
        let get = |k: &str| query.get(k).map(String::as_str).unwrap_or("");
        if get("response_type") != "code" {
            return Err(oauth("unsupported_response_type", "response_type must be code"));
        }
        if get("code_challenge_method") != "S256" || !rules::is_s256_challenge(get("code_challenge")) {
            return Err(oauth("invalid_request", "PKCE with code_challenge_method S256 is required"));
        }
        let resource = get("resource");
        if !resource.is_empty() && resource != self.resource {
            return Err(oauth("invalid_target", format!("resource must be {}", self.resource)));
        }
        Ok(())
    }

    /// The pairing code typed on the page: right → a consent ticket; wrong → the page again.
    pub fn pair(&mut self, request: AuthRequest, client: Client, typed: &str, now: i64) -> Result<String, Refusal> {
        if !self.pairing.usable(now) {
            return Err(Refusal::Page(
                "This pairing code is no longer valid. Ask the person running forgeloop for a new one (forgeloop serve --new-code, or wait for the next)."
                    .into(),
            ));
        }
        if now < self.pairing.next_try_at {
            let wait = self.pairing.next_try_at - now;
            return Err(Refusal::Page(format!(
                "Too many wrong pairing codes: try again in {wait} s. Nothing was checked."
            )));
        }
        let typed = rules::normalize_pairing(typed);
        if typed.len() != PAIRING_LEN || !rules::constant_time_eq(typed.as_bytes(), self.pairing.code.as_bytes()) {
            self.pairing.wrong = self.pairing.wrong.saturating_add(1);
            let wait = Pairing::wait_after(self.pairing.wrong);
            self.pairing.next_try_at = now + wait;
            return Err(Refusal::Page(format!("Wrong pairing code. Wait {wait} s before the next try.")));
        }
        self.tickets.retain(|_, t| t.expires_at > now);
        if self.tickets.len() >= MAX_PENDING {
            return Err(oauth("temporarily_unavailable", "too many pending authorizations"));
        }
        let ticket = random_token(24).map_err(|e| oauth("server_error", e))?;
        self.tickets.insert(ticket.clone(), Ticket { request, client, expires_at: now + TICKET_TTL_SECS });
        Ok(ticket)
    }

    /// The consent page's answer: Allow → the redirect with a code; Deny → with
    /// `access_denied`. The ticket is used once either way.
    pub fn consent(&mut self, ticket: &str, allow: bool, now: i64) -> Result<String, Refusal> {
        let Some(found) = self.tickets.remove(ticket).filter(|t| t.expires_at > now) else {
            return Err(Refusal::Page(
                "This page expired or was already answered. Start again from the client.".into(),
            ));
        };
        let Ticket { request, client, .. } = found;
        let mut query = Vec::new();
        if allow {
            self.codes.retain(|_, c| c.expires_at > now);
            if self.codes.len() >= MAX_PENDING {
                return Err(oauth("temporarily_unavailable", "too many pending authorizations"));
            }
            let code = random_token(24).map_err(|e| oauth("server_error", e))?;
            self.codes.insert(
                rules::token_hash(&code),
                Code { request: request.clone(), client, expires_at: now + CODE_TTL_SECS },
            );
            // The code is spent on this client: the next person's pairing needs a new one.
            self.pairing.used = true;
            query.push(("code", code));
        } else {
            query.push(("error", "access_denied".to_owned()));
        }
        if let Some(state) = &request.state {
            query.push(("state", state.clone()));
        }
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let encoded = form::encode(&pairs);
        let sep = if request.redirect_uri.contains('?') { '&' } else { '?' };
        Ok(format!("{}{sep}{encoded}", request.redirect_uri))
    }

    /// `/token`: redeems a code (PKCE checked) or rotates a refresh token; writes the grant.
    pub fn token(&mut self, ctx: &Ctx, form: &HashMap<String, String>, now: i64) -> Result<Value, Refusal> {
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or("");
        match get("grant_type") {
            "authorization_code" => {
                let Some(code) = self.codes.remove(&rules::token_hash(get("code"))).filter(|c| c.expires_at > now)
                else {
                    return Err(oauth("invalid_grant", "the code is unknown, expired or used"));
                };
                let Code { request, client, .. } = code;
                if get("client_id") != request.client_id || get("redirect_uri") != request.redirect_uri {
                    return Err(oauth("invalid_grant", "client_id or redirect_uri differ from the authorization"));
                }
                if !rules::pkce_s256_matches(get("code_verifier"), &request.challenge) {
                    return Err(oauth("invalid_grant", "the code_verifier does not match the code_challenge"));
                }
                let resource = get("resource");
                if !resource.is_empty() && resource != self.resource {
                    return Err(oauth("invalid_target", format!("resource must be {}", self.resource)));
                }
                self.issue(ctx, None, &request.client_id, &client, now)
            }
            "refresh_token" => {
                let client_id = get("client_id");
                // RFC 8707 §2.2: a refresh names at most the resource the grant is for.
                let resource = get("resource");
                if !resource.is_empty() && resource != self.resource {
                    return Err(oauth("invalid_target", format!("resource must be {}", self.resource)));
                }
                let files = connector::files(ctx);
                let grants = files.load_grants().map_err(|e| oauth("server_error", e.to_string()))?;
                match grants.check_refresh(get("refresh_token"), client_id, now) {
                    RefreshCheck::Current(id) => {
                        let client =
                            self.client(ctx, client_id).ok_or_else(|| oauth("invalid_client", "unknown client"))?;
                        self.issue(ctx, Some(id), client_id, &client, now)
                    }
                    RefreshCheck::Reused(id) => {
                        let at = ctx.now();
                        let _ = files.update_grants(|g| {
                            if let Some(grant) = g.get_mut(&id) {
                                grant.revoked = Some(Revoked { at, reason: "refresh_reuse".into() });
                            }
                            Ok::<_, ()>(())
                        });
                        tracing::warn!(grant = %id, "a used refresh token came back: the grant is revoked");
                        Err(oauth("invalid_grant", "this refresh token was used already; the grant is revoked"))
                    }
                    RefreshCheck::Invalid => {
                        Err(oauth("invalid_grant", "the refresh token is unknown, expired or revoked"))
                    }
                }
            }
            _ => Err(oauth("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")),
        }
    }

    /// New tokens for a new grant (`grant` `None`) or the grant `grant` (rotation: its old
    /// refresh token joins the used ones).
    fn issue(
        &self,
        ctx: &Ctx,
        grant: Option<String>,
        client_id: &str,
        client: &Client,
        now: i64,
    ) -> Result<Value, Refusal> {
        let err = |e: String| oauth("server_error", e);
        let access = random_token(32).map_err(err)?;
        let refresh = random_token(32).map_err(err)?;
        let access_token = Token { hash: rules::token_hash(&access), expires_at: now + ACCESS_TTL_SECS };
        let refresh_token = Token { hash: rules::token_hash(&refresh), expires_at: now + REFRESH_TTL_SECS };
        let new_id = format!("g_{}", &rules::token_hash(&random_token(16).map_err(err)?)[..12]);
        let created_at = ctx.now();
        let resource = self.resource.clone();
        let written = connector::files(ctx).update_grants(|grants| {
            grants.prune(now);
            match &grant {
                Some(id) => {
                    let Some(g) = grants.get_mut(id) else { return Err("the grant is gone") };
                    if let Some(old) = g.refresh.take() {
                        g.used_refresh.push(old.hash);
                    }
                    g.access.push(access_token);
                    g.refresh = Some(refresh_token);
                    Ok(g.id.clone())
                }
                None => {
                    grants.grants.push(Grant {
                        id: new_id.clone(),
                        client_id: client_id.to_owned(),
                        client_name: client.name.clone(),
                        redirect_uris: client.redirect_uris.clone(),
                        resource,
                        created_at,
                        access: vec![access_token],
                        refresh: Some(refresh_token),
                        used_refresh: Vec::new(),
                        cycles: Vec::new(),
                        shared: Vec::new(),
                        revoked: None,
                        extra: Default::default(),
                    });
                    Ok(new_id.clone())
                }
            }
        });
        let id = written.map_err(|e| oauth("server_error", e.to_string()))?.map_err(|e| oauth("invalid_grant", e))?;
        tracing::info!(grant = %id, client = %client.name, "tokens issued");
        Ok(json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL_SECS,
            "refresh_token": refresh,
            "scope": "forgeloop",
        }))
    }
}

fn new_pairing(now: i64) -> Result<Pairing, String> {
    let mut random = [0u8; PAIRING_LEN];
    getrandom::fill(&mut random).map_err(|e| format!("no randomness from the operating system: {e}"))?;
    Ok(Pairing {
        code: rules::pairing_from(&random),
        expires_at: now + PAIRING_TTL_SECS,
        wrong: 0,
        next_try_at: 0,
        used: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESOURCE: &str = "http://127.0.0.1:8787/mcp";
    const REDIRECT: &str = "http://127.0.0.1:9/cb";
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

    fn form(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    /// A client registered and authorized by the person: (the state, its client id, a code).
    fn authorized(ctx: &Ctx, now: i64) -> (AuthState, String, String) {
        let mut auth = AuthState::new(RESOURCE.into(), now).unwrap();
        let client = auth.register(&json!({"client_name": "c", "redirect_uris": [REDIRECT]}), now).unwrap();
        let client_id = client["client_id"].as_str().unwrap().to_owned();
        let challenge = rules::s256(VERIFIER);
        let query = form(&[
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", "st"),
        ]);
        let (request, client) = auth.check_request(ctx, &query, None).unwrap();
        // As the person types it: any case, with the dash.
        let typed = rules::format_pairing(&auth.pairing.code).to_lowercase();
        let ticket = auth.pair(request, client, &typed, now).unwrap();
        let location = auth.consent(&ticket, true, now).unwrap();
        let query = form_decode(location.split_once('?').unwrap().1);
        (auth, client_id, query["code"].clone())
    }

    #[test]
    fn wrong_pairing_codes_slow_the_next_try_down_and_never_void_the_code() {
        let now = 1_000;
        let mut auth = AuthState::new(RESOURCE.into(), now).unwrap();
        let request = AuthRequest {
            client_id: "x".into(),
            redirect_uri: REDIRECT.into(),
            challenge: rules::s256(VERIFIER),
            state: None,
        };
        let client = Client {
            name: "x".into(),
            claimed_name: None,
            document: None,
            redirect_uris: vec![REDIRECT.into()],
            registered_at: 0,
        };
        assert_eq!(auth.renew_pairing(now, false), Ok(false), "a live code stays");
        let right = auth.pairing.code.clone();
        let page = |r: Result<String, Refusal>| match r {
            Err(Refusal::Page(message)) => message,
            other => panic!("expected the page again, got {other:?}"),
        };
        // Each wrong code doubles the wait; a try during it is not even checked.
        let mut at = now;
        for wait in [1, 2, 4, 8, 16, 32, 60, 60] {
            let message = page(auth.pair(request.clone(), client.clone(), "AAAA-AAAA", at));
            assert!(message.contains(&format!("Wait {wait} s")), "{message}");
            let early = page(auth.pair(request.clone(), client.clone(), &right, at + wait - 1));
            assert!(early.contains("try again in 1 s"), "{early}");
            at += wait;
        }
        // Eight wrong codes later, the right one still works: guessing never voids it.
        assert!(auth.pairing.usable(at));
        assert_eq!(auth.renew_pairing(at, false), Ok(false), "no new code for the guesser");
        assert!(auth.pair(request.clone(), client, &right, at).is_ok(), "the person's code was voided");
        let expiry = auth.pairing.expires_at;
        assert_eq!(auth.renew_pairing(expiry, false), Ok(true), "the next code comes when it expires");
        assert!(auth.pairing.usable(expiry));
        assert_eq!(auth.pairing.wrong, 0);
    }

    #[test]
    fn tokens_are_issued_once_per_code_and_refresh_only_for_this_resource() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::for_home(dir.path().join("home"));
        let now = crate::serve::http::unix_now();
        let (mut auth, client_id, code) = authorized(&ctx, now);
        assert!(!auth.pairing.usable(now), "the code is spent on the grant");
        let redeem = form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", VERIFIER),
            ("resource", RESOURCE),
        ]);
        let tokens = auth.token(&ctx, &redeem, now).unwrap();
        assert!(matches!(auth.token(&ctx, &redeem, now), Err(Refusal::OAuth("invalid_grant", _))), "once");
        let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
        let elsewhere = form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
            ("resource", "https://elsewhere.example/mcp"),
        ]);
        let before = std::fs::read(connector::files(&ctx).grants_path()).unwrap();
        assert!(matches!(auth.token(&ctx, &elsewhere, now), Err(Refusal::OAuth("invalid_target", _))));
        assert_eq!(std::fs::read(connector::files(&ctx).grants_path()).unwrap(), before, "nothing written");
        let here = form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
            ("resource", RESOURCE),
        ]);
        assert!(auth.token(&ctx, &here, now).is_ok(), "the refresh token was not spent by the refusal");
    }

    #[test]
    fn forms_round_trip() {
        let encoded = form::encode(&[("code", "a b/c"), ("state", "x&y=z")]);
        let decoded = form_decode(&encoded);
        assert_eq!(decoded["code"], "a b/c");
        assert_eq!(decoded["state"], "x&y=z");
        assert_eq!(form_decode("a=%zz&b=%4")["a"], "%zz");
        assert_eq!(form_decode("a=%zz&b=%4")["b"], "%4");
        assert_eq!(form_decode("k=1+2%2B3")["k"], "1 2+3");
    }

    #[test]
    fn a_client_known_by_its_document_is_granted_as_its_document_says() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::for_home(dir.path().join("home"));
        let now = crate::serve::http::unix_now();
        let mut auth = AuthState::new(RESOURCE.into(), now).unwrap();
        let url = "https://client.example/oauth/client.json";
        let challenge = rules::s256(VERIFIER);
        let query = form(&[
            ("client_id", url),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ]);
        let document = ClientDocument {
            client_id: url.into(),
            claimed_name: Some("Acme".into()),
            site: "client.example".into(),
            redirect_uris: vec![REDIRECT.into()],
        };
        // Without its document, or with another client's, a URL is no client.
        let unread = auth.check_request(&ctx, &query, None).unwrap_err();
        assert!(matches!(&unread, Refusal::OAuth("invalid_client", why) if why.contains("not read")), "{unread:?}");
        let other = ClientDocument { client_id: "https://client.example/other.json".into(), ..document.clone() };
        assert!(auth.check_request(&ctx, &query, Some(&other)).is_err());
        // A redirect URI the document does not list is refused.
        let mut elsewhere = query.clone();
        elsewhere.insert("redirect_uri".into(), "http://127.0.0.1:10/cb".into());
        assert!(auth.check_request(&ctx, &elsewhere, Some(&document)).is_err());

        let (request, client) = auth.check_request(&ctx, &query, Some(&document)).unwrap();
        assert_eq!(client.name, "Acme (client.example)");
        assert_eq!((client.claimed_name.as_deref(), client.document.as_deref()), (Some("Acme"), Some(url)));
        let ticket = auth.pair(request, client, &auth.pairing.code.clone(), now).unwrap();
        let location = auth.consent(&ticket, true, now).unwrap();
        let code = form_decode(location.split_once('?').unwrap().1)["code"].clone();
        let redeem = form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", url),
            ("code_verifier", VERIFIER),
        ]);
        let tokens = auth.token(&ctx, &redeem, now).unwrap();
        let grants = connector::files(&ctx).load_grants().unwrap();
        let grant = &grants.grants[0];
        assert_eq!((grant.client_id.as_str(), grant.client_name.as_str()), (url, "Acme (client.example)"));
        assert_eq!(grant.redirect_uris, vec![REDIRECT.to_owned()]);
        // A refresh needs no document: the grant says who the client is.
        let refresh = form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", url),
        ]);
        assert!(auth.token(&ctx, &refresh, now + 1).is_ok());
    }
}
