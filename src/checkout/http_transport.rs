//! git's smart HTTP protocol for libgit2, carried by hyper over rustls (design §13.4).
//! Registered for `http` and `https` by `init_git_early`, so libgit2 is built without a TLS
//! library of its own: no OpenSSL in the build, one TLS stack (the GitHub client's) in the
//! binary, and the emulator's plain-http tests run the same code as GitHub's https.
//!
//! libgit2 speaks the protocol; this moves its bytes: `GET …/info/refs?service=git-upload-pack`
//! for the advertisement, `POST …/git-upload-pack` with what libgit2 wrote. Each request runs on
//! a thread of its own with a small runtime, its body handed to libgit2 as it arrives, so a
//! fetch blocks only itself. A 401 is answered by the fetch's [`Auth`] (set for the thread by
//! [`with_auth`]): once, with the token, and only inside its scope. The initial advertisement
//! may be redirected (a renamed repository), never from https to http; the later requests go
//! where it went. A proxy in the environment is used as git and curl use it ([`Proxies`]).
//! Only fetching is served: forgeloop never pushes.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::auth::Auth;

/// What servers see: GitHub serves the smart protocol to agents whose name starts `git/`.
const USER_AGENT: &str = concat!("git/2.0 (forgeloop ", env!("CARGO_PKG_VERSION"), ")");
/// Redirects of the first request followed at most.
const MAX_REDIRECTS: usize = 5;
/// Chunks of a response body in flight between its thread and libgit2.
const BODY_CHUNKS: usize = 8;

/// How long a connection may take, and a response (its head, then each chunk of its body).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub connect: Duration,
    pub io: Duration,
}

/// The proxies of the environment, read as curl and git read them: `https_proxy` for https,
/// `http_proxy` for http, `all_proxy` for both (lower case first, then upper case; an upper
/// case `HTTP_PROXY` is not read, as curl does not, since a CGI's request can set it), and
/// `no_proxy`: hosts (and their subdomains; `*`: every host) reached directly. A proxy is an
/// `http://[user:password@]host:port` URL; https to it goes through `CONNECT`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Proxies {
    http: Option<url::Url>,
    https: Option<url::Url>,
    no_proxy: Vec<String>,
}

impl Proxies {
    /// From the process's environment.
    pub(crate) fn from_env() -> Proxies {
        Proxies::from_vars(|name| std::env::var(name).ok())
    }

    /// From the variables `var` gives.
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Proxies {
        let first = |names: &[&str]| {
            names.iter().find_map(|n| var(n).filter(|v| !v.trim().is_empty())).and_then(|v| {
                let v = v.trim();
                let v = if v.contains("://") { v.to_owned() } else { format!("http://{v}") };
                url::Url::parse(&v).ok()
            })
        };
        let all = first(&["all_proxy", "ALL_PROXY"]);
        let no_proxy = var("no_proxy")
            .or_else(|| var("NO_PROXY"))
            .map(|list| {
                list.split(',')
                    .map(|h| {
                        let h = h.trim().trim_start_matches('.').to_ascii_lowercase();
                        // `host:port` names the host.
                        match h.rsplit_once(':') {
                            Some((host, port)) if !host.contains(':') && port.parse::<u16>().is_ok() => host.to_owned(),
                            _ => h,
                        }
                    })
                    .filter(|h| !h.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Proxies {
            http: first(&["http_proxy"]).or_else(|| all.clone()),
            https: first(&["https_proxy", "HTTPS_PROXY"]).or(all),
            no_proxy,
        }
    }

    /// The proxy for `url`, if one is set and the host is not in `no_proxy`.
    fn for_url(&self, url: &url::Url) -> Option<url::Url> {
        let proxy = match url.scheme() {
            "https" => self.https.as_ref(),
            _ => self.http.as_ref(),
        }?;
        let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let direct = self.no_proxy.iter().any(|entry| {
            let entry = entry.trim_start_matches('[').trim_end_matches(']');
            entry == "*" || host == entry || host.strip_suffix(entry).is_some_and(|rest| rest.ends_with('.'))
        });
        (!direct).then(|| proxy.clone())
    }
}

thread_local! {
    /// The `Auth` of the fetch running on this thread.
    static SESSION: RefCell<Option<Auth>> = const { RefCell::new(None) };
}

/// Runs `fetch` (a libgit2 call that may reach an http(s) remote) with `auth` answering the
/// servers' 401s and noting an untrusted certificate.
pub(crate) fn with_auth<T>(auth: &Auth, fetch: impl FnOnce() -> T) -> T {
    let previous = SESSION.with(|s| s.replace(Some(auth.clone())));
    let out = fetch();
    SESSION.with(|s| s.replace(previous));
    out
}

/// A TLS failure of the certificate, told apart from the other failures of a connection.
#[derive(Debug)]
struct Untrusted(String);

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Untrusted {}

fn note_untrusted(detail: &str) {
    SESSION.with(|s| {
        if let Some(auth) = s.borrow().as_ref() {
            auth.note_untrusted(detail);
        }
    });
}

/// The fetch's `Auth`, or one without a token (nothing set: a 401 is answered "no token").
fn current_auth(url: &str) -> Auth {
    SESSION.with(|s| s.borrow().clone()).unwrap_or_else(|| Auth::new(None, super::auth::TokenScope::origin_of(url)))
}

/// Registers the transport for `http` and `https`.
///
/// # Safety
/// libgit2's transport registry is unsynchronised: call once (`init_git_early`'s `Once`),
/// before any fetch can run.
pub(crate) unsafe fn register(timeouts: Timeouts, proxies: Proxies) -> Result<(), git2::Error> {
    let proxies = Arc::new(proxies);
    for scheme in ["http", "https"] {
        // SAFETY: the caller's contract (once, before any fetch).
        unsafe {
            let proxies = proxies.clone();
            git2::transport::register(scheme, move |remote| {
                let shared = Arc::new(Mutex::new(Remembered::default()));
                Transport::smart(remote, true, Smart { timeouts, proxies: proxies.clone(), shared })
            })?;
        }
    }
    Ok(())
}

/// Certificates trusted besides the system's, for every later connection (the HTTPS test's
/// own CA, as `git -c http.sslCAInfo` would): PEM, one or more.
pub fn add_trusted_certificates(pem: &[u8]) -> Result<usize, String> {
    let certs: Vec<CertificateDer<'static>> = pem_certificates(pem)?;
    let added = certs.len();
    extra_roots().lock().map_err(|_| "the trusted certificates are unreadable".to_owned())?.extend(certs);
    Ok(added)
}

fn pem_certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>().map_err(|e| format!("not PEM certificates: {e}"))
}

fn extra_roots() -> &'static Mutex<Vec<CertificateDer<'static>>> {
    static EXTRA: OnceLock<Mutex<Vec<CertificateDer<'static>>>> = OnceLock::new();
    EXTRA.get_or_init(|| Mutex::new(Vec::new()))
}

/// The system's roots (`SSL_CERT_FILE`/`SSL_CERT_DIR` honoured, as by git and curl), or the
/// bundled Mozilla roots when the system has none; read once.
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        if roots.is_empty() {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        roots
    })
}

fn tls() -> io::Result<TlsConnector> {
    let mut roots = system_roots().clone();
    if let Ok(extra) = extra_roots().lock() {
        roots.add_parsable_certificates(extra.iter().cloned());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

/// One remote's subtransport.
struct Smart {
    timeouts: Timeouts,
    proxies: Arc<Proxies>,
    shared: Arc<Mutex<Remembered>>,
}

/// What a remote's requests learn for the ones after them.
#[derive(Default)]
struct Remembered {
    /// Where the advertisement was redirected: the repository's URL for the requests after.
    moved_to: Option<String>,
    /// The `Authorization` a request was accepted with: the next ones send it at once (within
    /// the token's scope), as libgit2's own transport did.
    authorization: Option<String>,
}

impl SmartSubtransport for Smart {
    fn action(&self, url: &str, action: Service) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let base = url.trim_end_matches('/');
        let (method, path, post) = match action {
            Service::UploadPackLs => (Method::GET, "/info/refs?service=git-upload-pack", false),
            Service::UploadPack => (Method::POST, "/git-upload-pack", true),
            Service::ReceivePackLs | Service::ReceivePack => {
                return Err(git2::Error::from_str("forgeloop never pushes"));
            }
        };
        let moved = self.shared.lock().ok().and_then(|m| m.moved_to.clone());
        let base = match (post, moved) {
            (true, Some(moved)) => moved,
            _ => base.to_owned(),
        };
        Ok(Box::new(Stream {
            url: format!("{base}{path}"),
            repository: base,
            path,
            method,
            timeouts: self.timeouts,
            proxies: self.proxies.clone(),
            shared: self.shared.clone(),
            sent: Vec::new(),
            body: None,
        }))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// One request: what libgit2 writes is its body; its first read sends it.
struct Stream {
    /// The request's URL: the repository's and the service's path.
    url: String,
    /// The repository's URL: what the token's scope is checked against, as git does.
    repository: String,
    path: &'static str,
    method: Method,
    timeouts: Timeouts,
    proxies: Arc<Proxies>,
    shared: Arc<Mutex<Remembered>>,
    sent: Vec<u8>,
    body: Option<Body>,
}

/// A response body arriving from its thread.
struct Body {
    chunks: Receiver<io::Result<Bytes>>,
    chunk: Bytes,
    io: Duration,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.body.is_none() {
            self.body = Some(self.send()?);
        }
        let Some(body) = self.body.as_mut() else { return Ok(0) };
        while body.chunk.is_empty() {
            match body.chunks.recv_timeout(body.io) {
                Ok(Ok(chunk)) => body.chunk = chunk,
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Disconnected) => return Ok(0),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "the server stopped sending"));
                }
            }
        }
        let n = buf.len().min(body.chunk.len());
        buf[..n].copy_from_slice(&body.chunk.split_to(n));
        Ok(n)
    }
}

impl Write for Stream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.body.is_some() {
            return Err(io::Error::other("libgit2 wrote after reading the answer"));
        }
        self.sent.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Stream {
    /// Sends the request (answering a 401 once, following the advertisement's redirects) and
    /// returns its body once the server said 200.
    fn send(&mut self) -> io::Result<Body> {
        let auth = current_auth(&self.url);
        let accepted = self.shared.lock().ok().and_then(|r| r.authorization.clone());
        let mut authorization = accepted.filter(|_| auth.scope().allows(&self.repository));
        let mut redirects = 0;
        let body = Bytes::from(std::mem::take(&mut self.sent));
        loop {
            let proxy = url::Url::parse(&self.url).ok().and_then(|u| self.proxies.for_url(&u));
            let answer = exchange(Outgoing {
                url: self.url.clone(),
                method: self.method.clone(),
                body: body.clone(),
                authorization: authorization.clone(),
                proxy,
                timeouts: self.timeouts,
            })
            .inspect_err(|e| {
                if let Some(untrusted) = e.get_ref().and_then(|inner| inner.downcast_ref::<Untrusted>()) {
                    note_untrusted(&untrusted.0);
                }
            })?;
            match answer.status {
                StatusCode::OK => {
                    self.check_content_type(&answer.headers)?;
                    if let (Some(value), Ok(mut remembered)) = (&authorization, self.shared.lock()) {
                        remembered.authorization = Some(value.clone());
                    }
                    return Ok(Body { chunks: answer.body, chunk: Bytes::new(), io: self.timeouts.io });
                }
                StatusCode::UNAUTHORIZED => {
                    let basic =
                        answer.headers.get_all(header::WWW_AUTHENTICATE).iter().any(|v| {
                            v.to_str().is_ok_and(|v| v.trim_start().to_ascii_lowercase().starts_with("basic"))
                        });
                    authorization = Some(auth.answer(&self.repository, basic).map_err(io::Error::other)?);
                }
                status if status.is_redirection() && self.method == Method::GET => {
                    redirects += 1;
                    if redirects > MAX_REDIRECTS {
                        return Err(io::Error::other(format!("more than {MAX_REDIRECTS} redirects from {}", self.url)));
                    }
                    let (to, repository) = self.redirect(&answer.headers)?;
                    // The token was offered for the old URL; the new one earns it again.
                    authorization = None;
                    self.url = to;
                    self.repository = repository;
                }
                status => {
                    return Err(io::Error::other(format!(
                        "unexpected HTTP status code: {} ({}) from {}",
                        status.as_u16(),
                        status.canonical_reason().unwrap_or("?"),
                        self.url
                    )));
                }
            }
        }
    }

    /// Where a redirect goes: same path suffix, never from https down to http; the requests
    /// after the advertisement follow it.
    fn redirect(&self, headers: &HeaderMap) -> io::Result<(String, String)> {
        let refuse = |why: String| io::Error::other(format!("redirect from {} refused: {why}", self.url));
        let location =
            headers.get(header::LOCATION).and_then(|v| v.to_str().ok()).ok_or_else(|| refuse("no Location".into()))?;
        let from = url::Url::parse(&self.url).map_err(|e| refuse(e.to_string()))?;
        let to = from.join(location).map_err(|e| refuse(e.to_string()))?;
        if !matches!(to.scheme(), "http" | "https") || (from.scheme() == "https" && to.scheme() != "https") {
            return Err(refuse(format!("it goes to {}", to.scheme())));
        }
        let to = to.to_string();
        let base = to.strip_suffix(self.path).ok_or_else(|| refuse("it is not a git repository's URL".into()))?;
        if let Ok(mut remembered) = self.shared.lock() {
            remembered.moved_to = Some(base.to_owned());
        }
        Ok((to.clone(), base.to_owned()))
    }

    /// A server that answers the advertisement with anything else is not a smart git server
    /// (a login page, a dumb server).
    fn check_content_type(&self, headers: &HeaderMap) -> io::Result<()> {
        let expected = match self.method {
            Method::GET => "application/x-git-upload-pack-advertisement",
            _ => "application/x-git-upload-pack-result",
        };
        let got = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        if got.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case(expected)) {
            Ok(())
        } else {
            Err(io::Error::other(format!("{} is not a git smart HTTP server (content type {got:?})", self.url)))
        }
    }
}

/// A request to make.
struct Outgoing {
    url: String,
    method: Method,
    body: Bytes,
    authorization: Option<String>,
    /// The proxy to go through (`http://` only).
    proxy: Option<url::Url>,
    timeouts: Timeouts,
}

/// A response: its status and head now, its body as it arrives.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Receiver<io::Result<Bytes>>,
}

/// Makes `request` on a thread of its own (its own small runtime: whatever thread libgit2 runs
/// on, a runtime's or not); waits for the head.
fn exchange(request: Outgoing) -> io::Result<Answer> {
    let wait = request.timeouts.connect + request.timeouts.io;
    let (head_tx, head_rx) = sync_channel(1);
    let (body_tx, body_rx) = sync_channel(BODY_CHUNKS);
    std::thread::Builder::new().name("forgeloop-git-http".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => {
                let _ = head_tx.send(Err(e));
                return;
            }
        };
        runtime.block_on(run(request, head_tx, body_tx));
    })?;
    match head_rx.recv_timeout(wait) {
        Ok(Ok((status, headers))) => Ok(Answer { status, headers, body: body_rx }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "no answer from the server")),
    }
}

type Head = (StatusCode, HeaderMap);

async fn run(request: Outgoing, head: SyncSender<io::Result<Head>>, body: SyncSender<io::Result<Bytes>>) {
    let io_timeout = request.timeouts.io;
    let response = match tokio::time::timeout(io_timeout + request.timeouts.connect, send(request)).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => {
            let _ = head.send(Err(e));
            return;
        }
        Err(_) => {
            let _ = head.send(Err(io::Error::new(io::ErrorKind::TimedOut, "no answer from the server")));
            return;
        }
    };
    let (parts, mut incoming) = response.into_parts();
    if head.send(Ok((parts.status, parts.headers))).is_err() {
        return;
    }
    loop {
        let chunk = match tokio::time::timeout(io_timeout, incoming.frame()).await {
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) if data.is_empty() => continue,
                Ok(data) => Ok(data),
                Err(_) => continue,
            },
            Ok(None) => return,
            Ok(Some(Err(e))) => Err(io::Error::other(format!("the answer was cut off: {e}"))),
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "the server stopped sending")),
        };
        let last = chunk.is_err();
        // A closed receiver: libgit2 is done with this answer.
        if body.send(chunk).is_err() || last {
            return;
        }
    }
}

/// Connects (TLS for https), sends, and returns the response with its body still to come.
async fn send(request: Outgoing) -> io::Result<http::Response<hyper::body::Incoming>> {
    let url = url::Url::parse(&request.url).map_err(|e| io::Error::other(format!("{}: {e}", request.url)))?;
    let host = url.host_str().ok_or_else(|| io::Error::other(format!("{} names no host", request.url)))?.to_owned();
    let port = url.port_or_known_default().ok_or_else(|| io::Error::other(format!("{} names no port", request.url)))?;
    // `[::1]` in a URL is `::1` to connect to.
    let bare = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    let https = url.scheme() == "https";
    let proxy = match &request.proxy {
        Some(proxy) if proxy.scheme() != "http" => {
            return Err(io::Error::other(format!(
                "the proxy {} is not http:// (the only kind supported)",
                proxy_name(proxy)
            )));
        }
        Some(proxy) => Some(proxy),
        None => None,
    };
    let (to_host, to_port) = match proxy {
        Some(p) => (
            p.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned(),
            p.port_or_known_default().unwrap_or(80),
        ),
        None => (bare.clone(), port),
    };
    let mut tcp = tokio::time::timeout(request.timeouts.connect, TcpStream::connect((to_host.as_str(), to_port)))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, format!("cannot connect to {to_host}:{to_port} in time")))?
        .map_err(|e| io::Error::new(e.kind(), format!("cannot connect to {to_host}:{to_port}: {e}")))?;
    let _ = tcp.set_nodelay(true);
    if let (Some(proxy), true) = (proxy, https) {
        tunnel(&mut tcp, proxy, &host, port).await?;
    }
    // Origin-form (`/path?query`), what a server expects; absolute-form to an http proxy.
    let target = match proxy {
        Some(_) if !https => url[..url::Position::AfterQuery].to_owned(),
        _ => url[url::Position::BeforePath..].to_owned(),
    };
    let mut builder = Request::builder()
        .method(request.method.clone())
        .uri(target)
        .header(header::HOST, url.port().map_or_else(|| host.clone(), |p| format!("{host}:{p}")))
        .header(header::USER_AGENT, USER_AGENT)
        .header("Git-Protocol", "version=0");
    builder = if request.method == Method::POST {
        builder
            .header(header::CONTENT_TYPE, "application/x-git-upload-pack-request")
            .header(header::ACCEPT, "application/x-git-upload-pack-result")
    } else {
        builder.header(header::ACCEPT, "*/*")
    };
    if let Some(value) = &request.authorization {
        builder = builder.header(header::AUTHORIZATION, value);
    }
    if let (Some(proxy), false) = (proxy, https)
        && let Some(value) = proxy_authorization(proxy)
    {
        builder = builder.header(header::PROXY_AUTHORIZATION, value);
    }
    let http_request = builder.body(Full::new(request.body.clone())).map_err(io::Error::other)?;
    if https {
        let name = ServerName::try_from(bare.clone()).map_err(|e| io::Error::other(format!("{host}: {e}")))?;
        let tls = tls()?.connect(name, tcp).await.map_err(|e| {
            let certificate = e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                .is_some_and(|inner| matches!(inner, rustls::Error::InvalidCertificate(_)));
            let message = format!("TLS with {host}:{port}: {e}");
            if certificate {
                io::Error::new(io::ErrorKind::InvalidData, Untrusted(message))
            } else {
                io::Error::new(e.kind(), message)
            }
        })?;
        over(TokioIo::new(tls), http_request).await
    } else {
        over(TokioIo::new(tcp), http_request).await
    }
}

/// A proxy as messages name it: its host and port, never its credentials.
fn proxy_name(proxy: &url::Url) -> String {
    format!("{}:{}", proxy.host_str().unwrap_or("?"), proxy.port_or_known_default().unwrap_or(80))
}

/// `Proxy-Authorization` for a proxy URL with a user (percent-decoded, as curl reads it).
fn proxy_authorization(proxy: &url::Url) -> Option<String> {
    use base64::Engine as _;
    if proxy.username().is_empty() {
        return None;
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let pair = format!("{}:{}", decode(proxy.username()), decode(proxy.password().unwrap_or("")));
    Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
}

/// The most a proxy's answer to `CONNECT` may take before its blank line.
const MAX_CONNECT_HEAD: usize = 8 * 1024;

/// `CONNECT host:port` through `proxy` on `tcp`: afterwards `tcp` reaches the host.
async fn tunnel(tcp: &mut TcpStream, proxy: &url::Url, host: &str, port: u16) -> io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut head = format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: {USER_AGENT}\r\n");
    if let Some(value) = proxy_authorization(proxy) {
        head.push_str(&format!("Proxy-Authorization: {value}\r\n"));
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).await?;
    // Byte by byte: what follows the blank line is the server's TLS, not the proxy's.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() >= MAX_CONNECT_HEAD {
            return Err(io::Error::other(format!("the proxy {} sent no end of its answer", proxy_name(proxy))));
        }
        let mut byte = [0u8; 1];
        if tcp.read(&mut byte).await? == 0 {
            return Err(io::Error::other(format!("the proxy {} closed the connection", proxy_name(proxy))));
        }
        answer.push(byte[0]);
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut parsed = httparse::Response::new(&mut headers);
    let code = match parsed.parse(&answer) {
        Ok(httparse::Status::Complete(_)) => parsed.code.unwrap_or(0),
        _ => 0,
    };
    if (200..300).contains(&code) {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "the proxy {} refused CONNECT {host}:{port} ({code} {})",
            proxy_name(proxy),
            parsed.reason.unwrap_or("")
        )))
    }
}

/// HTTP/1.1 over an established connection, driven in the background.
async fn over<T>(io: T, request: Request<Full<Bytes>>) -> io::Result<http::Response<hyper::body::Incoming>>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await.map_err(io::Error::other)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender.send_request(request).await.map_err(|e| io::Error::other(format!("the request failed: {e}")))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    #[test]
    fn what_servers_see_names_git_first() {
        assert!(USER_AGENT.starts_with("git/2.0 (forgeloop "), "{USER_AGENT}");
    }

    fn vars(pairs: &[(&str, &str)]) -> Proxies {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Proxies::from_vars(|name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    fn parsed(url: &str) -> url::Url {
        url::Url::parse(url).unwrap()
    }

    #[test]
    fn proxies_are_read_as_curl_reads_them_and_no_proxy_names_hosts_and_their_subdomains() {
        // Credentials made at run time: a literal one is what the redactor's own budget test catches.
        let web = format!("http://{}@web.corp:8080", ["u", "p"].join(":"));
        let p = vars(&[
            ("https_proxy", "proxy.corp:3128"),
            ("http_proxy", &web),
            ("no_proxy", "localhost, .internal.corp,10.0.0.7:443"),
        ]);
        let via = |url: &str| p.for_url(&parsed(url)).map(|u| u.to_string());
        assert_eq!(via("https://github.com/a/b.git").as_deref(), Some("http://proxy.corp:3128/"));
        assert_eq!(via("http://example.org/a.git").as_deref(), Some(format!("{web}/").as_str()));
        for direct in [
            "https://localhost:8443/a.git",
            "https://git.internal.corp/a.git",
            "https://internal.corp/a",
            "https://10.0.0.7/a",
        ] {
            assert_eq!(via(direct), None, "{direct}");
        }
        assert!(via("https://notinternal.corp/a").is_some(), "a suffix is a subdomain, not a substring");
        assert_eq!(
            vars(&[("HTTP_PROXY", "http://evil:1")]).for_url(&parsed("http://a/b")),
            None,
            "HTTP_PROXY is a CGI's"
        );
        assert!(vars(&[("ALL_PROXY", "http://all:1")]).for_url(&parsed("https://a/b")).is_some());
        assert_eq!(vars(&[("https_proxy", "http://p:1"), ("no_proxy", "*")]).for_url(&parsed("https://a/b")), None);
        assert_eq!(vars(&[]), Proxies::default());
    }

    /// A proxy on 127.0.0.1 that answers one connection with `answer` and hands back what it read.
    fn fake_proxy(answer: &'static [u8]) -> (u16, std::thread::JoinHandle<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut byte = [0u8; 1];
            while !seen.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap() == 1 {
                seen.push(byte[0]);
            }
            conn.write_all(answer).unwrap();
            String::from_utf8(seen).unwrap()
        });
        (port, handle)
    }

    fn request(url: &str, proxy: &str) -> Outgoing {
        Outgoing {
            url: url.to_owned(),
            method: Method::GET,
            body: Bytes::new(),
            authorization: None,
            proxy: Some(parsed(proxy)),
            timeouts: Timeouts { connect: Duration::from_secs(5), io: Duration::from_secs(5) },
        }
    }

    #[test]
    fn http_goes_to_the_proxy_in_absolute_form_with_its_credentials() {
        let (port, proxy) = fake_proxy(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nContent-Length: 5\r\n\r\nhello",
        );
        let url = "http://git.example:8000/r.git/info/refs?service=git-upload-pack";
        let answer =
            exchange(request(url, &format!("http://{}@127.0.0.1:{port}", ["me", "s%40cret"].join(":")))).unwrap();
        assert_eq!(answer.status, StatusCode::OK);
        let body: Vec<Bytes> = answer.body.iter().map(Result::unwrap).collect();
        assert_eq!(body.concat(), b"hello");
        let seen = proxy.join().unwrap();
        assert!(seen.starts_with(&format!("GET {url} HTTP/1.1\r\n")), "{seen}");
        let expected = base64::engine::general_purpose::STANDARD.encode("me:s@cret");
        assert!(
            seen.to_ascii_lowercase()
                .contains(&format!("proxy-authorization: basic {}", expected.to_ascii_lowercase())),
            "{seen}"
        );
    }

    #[test]
    fn https_goes_through_connect_and_a_refusal_says_so_without_the_credentials() {
        let (port, proxy) = fake_proxy(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        let url = "https://git.example/r.git/info/refs?service=git-upload-pack";
        let err = exchange(request(url, &format!("http://{}@127.0.0.1:{port}", ["me", "hunter2"].join(":"))))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains(&format!("the proxy 127.0.0.1:{port} refused CONNECT git.example:443 (403 Forbidden)")),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
        let seen = proxy.join().unwrap();
        assert!(seen.starts_with("CONNECT git.example:443 HTTP/1.1\r\n"), "{seen}");
        assert!(seen.to_ascii_lowercase().contains("proxy-authorization: basic "), "{seen}");
    }

    #[test]
    fn pem_that_is_not_a_certificate_is_refused() {
        assert!(add_trusted_certificates(b"not pem").map(|n| n == 0).unwrap_or(true));
        assert!(pem_certificates(b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n").is_err());
    }
}
