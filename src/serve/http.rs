//! The HTTP front of `forgeloop serve` (design §8.1): every request is checked (Host, Origin,
//! limits, size) before it is read; the OAuth endpoints answer from [`AuthState`]; `/mcp` needs
//! a bearer token of a live grant for this resource and goes on to rmcp's Streamable HTTP
//! service with the grant in its extensions.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use crate::cycle::Ctx;
use crate::cycle::connector;

use crate::domain::client_document::{is_document_id, parse_url};
use crate::domain::connector::RefreshCheck;

use super::auth::{AuthRequest, AuthState, Client, Refusal, form_decode};
use super::client_document::Documents;
use super::limits::Limits;
use super::pages;
use super::tools::{Authed, RemoteServer, SeenByGrant};

/// The body of every answer.
pub type Body = BoxBody<Bytes, Infallible>;

/// Largest body of an MCP request.
pub const MAX_MCP_BODY: usize = 64 * 1024;
/// Largest body of an OAuth request.
pub const MAX_OAUTH_BODY: usize = 16 * 1024;

/// What the server knows: its context, its addresses, the authorization state, the limits
/// and rmcp's service.
pub struct Server {
    ctx: Ctx,
    /// The URL clients use (`--public-url`, else the listen URL), without a trailing slash.
    base: String,
    /// `Host` values accepted.
    hosts: Vec<String>,
    /// `Origin` values accepted (a request without one is a server-side client).
    origins: Vec<String>,
    /// Clients, pairing, tickets, codes.
    pub auth: Mutex<AuthState>,
    /// Poked when the pairing code in force was spent on a grant, so `serve` makes and shows
    /// the next one at once (not at its next timer tick).
    pub pairing_spent: tokio::sync::Notify,
    limits: Mutex<Limits>,
    /// Clients' metadata documents, fetched when a `client_id` is a URL; `None` when the
    /// person turned them off (`[connector] client_documents = false`).
    documents: Option<Documents>,
    mcp: StreamableHttpService<RemoteServer, LocalSessionManager>,
}

/// The authority (`host[:port]`, the port only when it is not the scheme's default) and origin
/// (`scheme://authority`) of an http(s) URL, as a browser and the `Host` header would say them:
/// from the parsed URL, so user information (`https://a@b`) cannot pass for a host.
pub fn authority_and_origin(url: &str) -> Option<(String, String)> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || !parsed.username().is_empty() || parsed.password().is_some() {
        return None;
    }
    let host = parsed.host_str().filter(|h| !h.is_empty())?;
    let authority = match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    Some((authority.clone(), format!("{}://{authority}", parsed.scheme())))
}

impl Server {
    /// A server for `ctx` listening at `listen_url` and reached at `base`.
    pub fn new(ctx: Ctx, listen_url: &str, base: &str, auth: AuthState) -> Server {
        let mut hosts = Vec::new();
        let mut origins = Vec::new();
        for url in [listen_url, base] {
            if let Some((authority, origin)) = authority_and_origin(url) {
                // `localhost:PORT` names the loopback listener too.
                if let Some(port) = authority.strip_prefix("127.0.0.1:") {
                    hosts.push(format!("localhost:{port}"));
                    origins.push(format!("http://localhost:{port}"));
                }
                hosts.push(authority);
                origins.push(origin);
            }
        }
        let documents = ctx.config.connector.client_documents.then(Documents::new);
        let server_ctx = ctx.clone();
        // What each grant was told of its cycles outlives a session: a client may open a new
        // MCP session for every call, and `wait` must still compare with what it last saw.
        let seen = SeenByGrant::default();
        let config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts.clone());
        let mcp = StreamableHttpService::new(
            move || Ok(RemoteServer::new(server_ctx.clone(), seen.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        Server {
            ctx,
            base: base.trim_end_matches('/').to_owned(),
            hosts,
            origins,
            auth: Mutex::new(auth),
            pairing_spent: tokio::sync::Notify::new(),
            limits: Mutex::new(Limits::default()),
            documents,
            mcp,
        }
    }

    /// `<base>/mcp`.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource", self.base)
    }

    /// Answers one request. A refusal made without reading the body closes the connection:
    /// the unread body cannot be told from the next request, and a client must not send one
    /// on it (hyper would close it after the answer anyway, racing the client's next request).
    pub async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Response<Body> {
        let mut answer = self.route(request).await;
        if closes_connection(answer.status()) {
            answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        answer
    }

    async fn route(self: Arc<Self>, request: Request<Incoming>) -> Response<Body> {
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        if let Some(refused) = self.refuse_origin(&request) {
            tracing::info!(%method, %path, "refused: {refused}");
            return text(StatusCode::FORBIDDEN, refused);
        }
        if path == "/mcp" {
            return self.mcp(request).await;
        }
        // Everything else is reached without a grant: one budget for all of it. `/token` counts
        // once its form is read: a refresh with a valid token is its grant's, so a flood of junk
        // cannot starve a client's refresh.
        let token_request = method == Method::POST && path == "/token";
        if !token_request && !self.limits.lock().map(|mut l| l.unauthenticated(Instant::now())).unwrap_or(false) {
            tracing::info!(%method, %path, "refused: over the unauthenticated request budget");
            return text(StatusCode::TOO_MANY_REQUESTS, "too many requests; try again in a minute");
        }
        tracing::info!(%method, %path, "request without a grant");
        // The authorization pages are pages: a browser loading one as an image, a script's
        // fetch or a frame says so (`Sec-Fetch-Dest`), and is refused before anything is read or
        // fetched, so a web page cannot make the person's browser drive them.
        if path.starts_with("/authorize")
            && let Some(dest) = request.headers().get("sec-fetch-dest")
            && dest.as_bytes() != b"document"
        {
            tracing::info!(%method, %path, "refused: the authorization page was loaded as a {dest:?}");
            return text(StatusCode::FORBIDDEN, "the authorization pages open only as a page of their own");
        }
        match (method, path.as_str()) {
            (Method::GET, "/.well-known/oauth-protected-resource" | "/.well-known/oauth-protected-resource/mcp") => {
                json_answer(
                    StatusCode::OK,
                    &json!({
                        "resource": self.resource(),
                        "authorization_servers": [self.base],
                        "bearer_methods_supported": ["header"],
                        "scopes_supported": ["forgeloop"],
                        "resource_name": "forgeloop",
                    }),
                )
            }
            (Method::GET, "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration") => {
                let mut metadata = json!({
                    "issuer": self.base,
                    "authorization_endpoint": format!("{}/authorize", self.base),
                    "token_endpoint": format!("{}/token", self.base),
                    "registration_endpoint": format!("{}/register", self.base),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": ["forgeloop"],
                });
                if self.documents.is_some() {
                    metadata["client_id_metadata_document_supported"] = json!(true);
                }
                json_answer(StatusCode::OK, &metadata)
            }
            (Method::POST, "/register") => {
                let body = match read_body(request, MAX_OAUTH_BODY).await {
                    Ok(body) => body,
                    Err(answer) => return answer,
                };
                let Ok(value) = serde_json::from_slice::<Value>(&body) else {
                    return oauth_error("invalid_client_metadata", "the body is not JSON");
                };
                let registered = match self.auth.lock() {
                    Ok(mut auth) => auth.register(&value, unix_now()),
                    Err(_) => Err(Refusal::OAuth("server_error", "the server's state is poisoned".into())),
                };
                match registered {
                    Ok(doc) => json_answer(StatusCode::CREATED, &doc),
                    Err(refusal) => refusal_answer(refusal),
                }
            }
            (Method::GET, "/authorize") => {
                let query = form_decode(request.uri().query().unwrap_or(""));
                self.authorize_page(&query).await
            }
            (Method::POST, "/authorize") => {
                let form = match read_form(request).await {
                    Ok(form) => form,
                    Err(answer) => return answer,
                };
                let (request, client) = match self.check_request(&form).await {
                    Ok(found) => found,
                    Err(refusal) => return refusal_page(refusal),
                };
                let typed = form.get("pairing_code").cloned().unwrap_or_default();
                let (paired, namesakes) = match self.auth.lock() {
                    Ok(mut auth) => {
                        let namesakes = auth.namesakes(&self.ctx, &request.client_id, &client.name);
                        (auth.pair(request, client.clone(), &typed, unix_now()), namesakes)
                    }
                    Err(_) => return text(StatusCode::INTERNAL_SERVER_ERROR, "poisoned"),
                };
                match paired {
                    Ok(ticket) => {
                        tracing::warn!(client = %client.name, "the pairing code was entered: asking for consent");
                        let repositories = connector::repositories(&self.ctx);
                        html(StatusCode::OK, pages::consent(&client, &namesakes, &ticket, &repositories))
                    }
                    Err(Refusal::Page(message)) => {
                        tracing::warn!(client = %client.name, "a wrong or spent pairing code was entered");
                        html(StatusCode::FORBIDDEN, pages::pairing(&client, &namesakes, &form, Some(&message)))
                    }
                    Err(refusal) => refusal_page(refusal),
                }
            }
            (Method::POST, "/authorize/consent") => {
                let form = match read_form(request).await {
                    Ok(form) => form,
                    Err(answer) => return answer,
                };
                let allow = form.get("decision").map(String::as_str) == Some("allow");
                let ticket = form.get("ticket").cloned().unwrap_or_default();
                let answered = match self.auth.lock() {
                    Ok(mut auth) => {
                        let answered = auth.consent(&ticket, allow, unix_now());
                        self.poke_if_spent(&auth);
                        answered
                    }
                    Err(_) => return text(StatusCode::INTERNAL_SERVER_ERROR, "poisoned"),
                };
                match answered {
                    Ok(location) => redirect(&location),
                    Err(refusal) => refusal_page(refusal),
                }
            }
            (Method::POST, "/token") => {
                let form = match read_form(request).await {
                    Ok(form) => form,
                    Err(answer) => return answer,
                };
                if !self.token_budget(&form) {
                    tracing::info!("refused: /token over the request budget");
                    return text(StatusCode::TOO_MANY_REQUESTS, "too many requests; try again in a minute");
                }
                // Writing the grant takes the grants lock: off the async workers.
                let server = self.clone();
                let issued = tokio::task::spawn_blocking(move || match server.auth.lock() {
                    Ok(mut auth) => auth.token(&server.ctx, &form, unix_now()),
                    Err(_) => Err(Refusal::OAuth("server_error", "the server's state is poisoned".into())),
                })
                .await
                .unwrap_or_else(|e| Err(Refusal::OAuth("server_error", e.to_string())));
                match issued {
                    Ok(doc) => json_answer(StatusCode::OK, &doc),
                    Err(refusal) => refusal_answer(refusal),
                }
            }
            _ => text(StatusCode::NOT_FOUND, "not found"),
        }
    }

    /// Counts a `/token` request: against its grant's budget when it refreshes with that
    /// grant's current refresh token, else against the budget of requests without a grant.
    fn token_budget(&self, form: &HashMap<String, String>) -> bool {
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or("");
        let grant = (get("grant_type") == "refresh_token")
            .then(|| connector::files(&self.ctx).load_grants().ok())
            .flatten()
            .and_then(|grants| match grants.check_refresh(get("refresh_token"), get("client_id"), unix_now()) {
                RefreshCheck::Current(id) => Some(id),
                _ => None,
            });
        let now = Instant::now();
        self.limits
            .lock()
            .map(|mut limits| match &grant {
                Some(id) => limits.granted(id, now),
                None => limits.unauthenticated(now),
            })
            .unwrap_or(false)
    }

    /// Asks `serve` for the next pairing code when the one in force was spent on a grant.
    fn poke_if_spent(&self, auth: &AuthState) {
        if auth.pairing.used {
            self.pairing_spent.notify_one();
        }
    }

    /// A request naming another host (DNS rebinding), or sent by a web page of another origin.
    fn refuse_origin<B>(&self, request: &Request<B>) -> Option<&'static str> {
        let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).map(str::to_ascii_lowercase);
        if !host.is_some_and(|h| self.hosts.contains(&h)) {
            return Some("the Host is not this server's");
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
            if !self.origins.contains(&origin) {
                return Some("the Origin is not this server's");
            }
        }
        None
    }

    async fn authorize_page(&self, query: &HashMap<String, String>) -> Response<Body> {
        match self.check_request(query).await {
            Ok((request, client)) => {
                let namesakes = match self.auth.lock() {
                    Ok(auth) => auth.namesakes(&self.ctx, &request.client_id, &client.name),
                    Err(_) => return text(StatusCode::INTERNAL_SERVER_ERROR, "poisoned"),
                };
                html(StatusCode::OK, pages::pairing(&client, &namesakes, query, None))
            }
            Err(refusal) => refusal_page(refusal),
        }
    }

    /// `/authorize`'s fields checked, the client's metadata document read first when its
    /// `client_id` is a URL (outside the lock: the fetch may take seconds).
    async fn check_request(&self, query: &HashMap<String, String>) -> Result<(AuthRequest, Client), Refusal> {
        let poisoned = || Refusal::OAuth("server_error", "the server's state is poisoned".into());
        let client_id = query.get("client_id").map(String::as_str).unwrap_or("");
        let document = if is_document_id(client_id) {
            // What needs no client first: a malformed request costs no fetch.
            self.auth.lock().map_err(|_| poisoned())?.check_fields(query)?;
            // The page repeats the URL only once it is known to be a short, printable one.
            if let Err(why) = parse_url(client_id) {
                return Err(Refusal::OAuth("invalid_client", format!("the client_id is not a document URL: {why}")));
            }
            let Some(documents) = &self.documents else {
                return Err(Refusal::OAuth(
                    "invalid_client",
                    "this server does not accept client metadata documents: register first".into(),
                ));
            };
            match documents.get(client_id).await {
                Ok(document) => Some(document),
                Err(why) => {
                    tracing::warn!(client_id, "a client's metadata document cannot be used: {}", why.detail);
                    return Err(Refusal::OAuth(
                        "invalid_client",
                        format!("the client's metadata document at {client_id} cannot be used: {}", why.shown),
                    ));
                }
            }
        } else {
            None
        };
        self.auth.lock().map_err(|_| poisoned())?.check_request(&self.ctx, query, document.as_ref())
    }

    /// `/mcp`: the bearer token first, then the grant's budget, the size, the journal, rmcp.
    async fn mcp(self: Arc<Self>, request: Request<Incoming>) -> Response<Body> {
        let token = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("bearer ")))
            .map(str::trim)
            .map(str::to_owned);
        let Some(token) = token else {
            tracing::info!("refused /mcp: no bearer token");
            return self.refuse_unauthenticated(None);
        };
        let grants = match connector::files(&self.ctx).load_grants() {
            Ok(grants) => grants,
            Err(e) => {
                tracing::error!("cannot read the grants: {e}");
                return text(StatusCode::SERVICE_UNAVAILABLE, "the grants cannot be read");
            }
        };
        let grant = match grants.check_access(&token, &self.resource(), unix_now()) {
            Ok(grant) => grant.clone(),
            Err(refusal) => {
                tracing::info!("refused /mcp: {refusal}");
                return self.refuse_unauthenticated(Some(&refusal.to_string()));
            }
        };
        if !self.limits.lock().map(|mut l| l.granted(&grant.id, Instant::now())).unwrap_or(false) {
            return text(StatusCode::TOO_MANY_REQUESTS, "too many requests for this grant; try again in a minute");
        }
        let (mut parts, body) = request.into_parts();
        let body = match Limited::new(body, MAX_MCP_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => return text(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large"),
        };
        let method = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
        let line = crate::domain::connector::CallRecord::Request {
            at: self.ctx.now(),
            grant: grant.id.clone(),
            client: grant.client_name.clone(),
            http: parts.method.as_str().to_owned(),
            method,
        };
        if let Err(e) = connector::files(&self.ctx).journal(&line) {
            tracing::error!("cannot journal a connector request: {e}");
        }
        parts.extensions.insert(Authed(grant));
        let ending = parts.method == Method::DELETE;
        let mut answer = self.mcp.handle(Request::from_parts(parts, Full::new(body))).await;
        // rmcp answers a session's DELETE with 202; the session is gone at once, which is 204
        // (the official SDKs log any other answer as a failed termination).
        if ending && answer.status() == StatusCode::ACCEPTED {
            *answer.status_mut() = StatusCode::NO_CONTENT;
        }
        answer
    }

    /// A request to `/mcp` without a valid grant: counted in the budget of requests without a
    /// grant (429 past it), else the 401 challenge.
    fn refuse_unauthenticated(&self, error: Option<&str>) -> Response<Body> {
        if !self.limits.lock().map(|mut l| l.unauthenticated(Instant::now())).unwrap_or(false) {
            return text(StatusCode::TOO_MANY_REQUESTS, "too many requests; try again in a minute");
        }
        self.challenge(error)
    }

    /// 401 with the challenge that points a client to the metadata (RFC 9728 §5.1).
    fn challenge(&self, error: Option<&str>) -> Response<Body> {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if let Some(error) = error {
            value.push_str(&format!(", error=\"invalid_token\", error_description=\"{}\"", error.replace('"', "'")));
        }
        let mut answer = text(StatusCode::UNAUTHORIZED, "a bearer token of a grant is required");
        if let Ok(header_value) = HeaderValue::from_str(&value) {
            answer.headers_mut().insert(header::WWW_AUTHENTICATE, header_value);
        }
        answer
    }
}

/// Whether an answer with `status` may have left the request's body unread: a refusal of
/// the caller (no or a bad grant, a foreign Host or Origin, too large, over the budget).
pub fn closes_connection(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::UNAUTHORIZED
            | StatusCode::FORBIDDEN
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::TOO_MANY_REQUESTS
    )
}

/// Seconds since the epoch (the domain's times).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

async fn read_body(request: Request<Incoming>, max: usize) -> Result<Bytes, Response<Body>> {
    match Limited::new(request.into_body(), max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(_) => Err(text(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large")),
    }
}

async fn read_form(request: Request<Incoming>) -> Result<HashMap<String, String>, Response<Body>> {
    let body = read_body(request, MAX_OAUTH_BODY).await?;
    Ok(form_decode(&String::from_utf8_lossy(&body)))
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn with_type(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut answer = Response::new(full(body));
    *answer.status_mut() = status;
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    answer
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    with_type(status, "text/plain; charset=utf-8", format!("{message}\n"))
}

fn html(status: StatusCode, page: String) -> Response<Body> {
    let mut answer = with_type(status, "text/html; charset=utf-8", page);
    let headers = answer.headers_mut();
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(
        "content-security-policy",
        // No form-action: a browser applies it to the redirect that answers the consent form,
        // which goes to the client's own address.
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    );
    answer
}

fn json_answer(status: StatusCode, value: &Value) -> Response<Body> {
    with_type(status, "application/json", value.to_string())
}

fn oauth_error(error: &str, description: &str) -> Response<Body> {
    json_answer(StatusCode::BAD_REQUEST, &json!({ "error": error, "error_description": description }))
}

fn refusal_answer(refusal: Refusal) -> Response<Body> {
    match refusal {
        Refusal::OAuth(error, description) => oauth_error(error, &description),
        Refusal::Page(message) => oauth_error("invalid_request", &message),
    }
}

fn refusal_page(refusal: Refusal) -> Response<Body> {
    match refusal {
        Refusal::OAuth(error, description) => {
            html(StatusCode::BAD_REQUEST, pages::error(&format!("{error}: {description}")))
        }
        Refusal::Page(message) => html(StatusCode::BAD_REQUEST, pages::error(&message)),
    }
}

fn redirect(location: &str) -> Response<Body> {
    let mut answer = text(StatusCode::FOUND, "redirecting to the client");
    if let Ok(value) = HeaderValue::from_str(location) {
        answer.headers_mut().insert(header::LOCATION, value);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_and_origins_are_read_from_urls() {
        assert_eq!(
            authority_and_origin("https://Abc.trycloudflare.com/x"),
            Some(("abc.trycloudflare.com".into(), "https://abc.trycloudflare.com".into()))
        );
        assert_eq!(
            authority_and_origin("http://127.0.0.1:8787"),
            Some(("127.0.0.1:8787".into(), "http://127.0.0.1:8787".into()))
        );
        assert_eq!(authority_and_origin("https://user@evil.example"), None);
        assert_eq!(authority_and_origin("nope"), None);
    }
}
