//! The fetch of a client's metadata document (design §8.1): the one request `serve` makes to
//! the outside, to a URL an unauthenticated caller names. So it reaches only what the pure rules
//! (`domain::client_document`) allow: the name is resolved once, every address it resolves to
//! must be public, and the connection goes to one of those checked addresses (never resolved
//! again, so a name cannot turn private between the check and the connection), and not to this
//! machine's own address; TLS verified against the system's roots (`SSL_CERT_FILE`/`SSL_CERT_DIR`
//! honoured); one GET, redirects not followed, at most 5 KiB, 5 seconds for all of it, four
//! fetches at a time (a fetch holds its place until its name lookup returns, even one given up
//! on). Documents are kept as their answers say, within bounds; a failure is not kept.
//!
//! A refusal says what the caller may learn: what is wrong with the URL or the document they
//! wrote; never what a name resolves to or how a connection failed (those go to `serve`'s log).

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsConnector;

use crate::domain::client_document::{self as rules, ClientDocument, DocumentUrl, MAX_DOCUMENT_BYTES};
use crate::domain::egress::Host;

/// The time for one fetch: resolving, connecting, TLS, the answer and its body.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The time for one connection attempt; at most [`MAX_ADDRESSES`] are tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Addresses of a name tried at most: a name with a hundred addresses is not a hundred probes.
const MAX_ADDRESSES: usize = 2;
/// Documents kept at most (the soonest to expire forgotten first).
const MAX_KEPT: usize = 64;
/// Fetches at a time; one more is refused at once (the caller may try again).
const MAX_IN_FLIGHT: usize = 4;
/// What a caller is told for every failure to resolve, reach, verify or hear from the host in
/// time: the same words, so the answer does not map a network.
const UNREACHABLE: &str =
    "it could not be fetched over https from a public address (the name, the connection, the certificate or the time)";

/// Why a client's document cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{shown}")]
pub struct Unusable {
    /// What the caller's error page says.
    pub shown: String,
    /// What `serve`'s log says (the resolved address, the network error).
    pub detail: String,
}

impl Unusable {
    /// A fault of the URL or the document: the caller wrote it, the caller may read it.
    fn theirs(why: impl Into<String>) -> Unusable {
        let why = why.into();
        Unusable { shown: why.clone(), detail: why }
    }

    /// A fault of the network or an address: the caller is told only [`UNREACHABLE`].
    fn network(detail: impl Into<String>) -> Unusable {
        Unusable { shown: UNREACHABLE.to_owned(), detail: detail.into() }
    }
}

/// Which addresses a document may be fetched from.
#[derive(Debug, Clone, Copy)]
enum Reach {
    /// Public addresses only: the product.
    Public,
    /// Anything, loopback included: this module's own tests, whose TLS server is on 127.0.0.1.
    /// It exists only in test builds, so no configuration can ask for it.
    #[cfg(test)]
    Anything,
}

impl Reach {
    fn check(self, addr: SocketAddr) -> Result<(), Unusable> {
        match self {
            Reach::Public => rules::check_address(addr.ip()).map_err(Unusable::network),
            #[cfg(test)]
            Reach::Anything => Ok(()),
        }
    }

    /// Whether a connection from `local` to `peer` reached this machine's own address (its
    /// public address is public, and routed to itself past any firewall).
    fn to_itself(self, local: SocketAddr, peer: SocketAddr) -> bool {
        match self {
            Reach::Public => local.ip().to_canonical() == peer.ip().to_canonical(),
            #[cfg(test)]
            Reach::Anything => false,
        }
    }
}

/// How a name becomes addresses: the system's resolver; the tests give their own, so they can
/// tell that the connection went to what was resolved and checked, not to a second lookup.
type Resolver = Arc<dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync>;

/// Fetches and keeps clients' metadata documents.
pub struct Documents {
    /// The TLS client (`None` only if rustls refused its default protocol versions).
    tls: Option<TlsConnector>,
    reach: Reach,
    resolve: Resolver,
    timeout: Duration,
    kept: Mutex<HashMap<String, (ClientDocument, Instant)>>,
    in_flight: Arc<Semaphore>,
}

impl Documents {
    /// Verifying against the system's roots (the variables `SSL_CERT_FILE` and `SSL_CERT_DIR`
    /// name others, as for git and curl), or the bundled Mozilla roots when the system has
    /// none; public addresses only.
    pub fn new() -> Documents {
        let mut roots = RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        if roots.is_empty() {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        let resolve: Resolver = Arc::new(|name, port| Ok((name, port).to_socket_addrs()?.collect::<Vec<_>>()));
        Documents::with(roots, Reach::Public, resolve, FETCH_TIMEOUT)
    }

    fn with(roots: RootCertStore, reach: Reach, resolve: Resolver, timeout: Duration) -> Documents {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        // ring supports the default versions, so this is `Some`; were it not, nothing would be
        // fetched (a refusal), never a panic or an unverified connection.
        let tls = rustls::ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions().ok().map(
            |builder| {
                let mut config = builder.with_root_certificates(roots).with_no_client_auth();
                config.alpn_protocols = vec![b"http/1.1".to_vec()];
                TlsConnector::from(Arc::new(config))
            },
        );
        Documents {
            tls,
            reach,
            resolve,
            timeout,
            kept: Mutex::new(HashMap::new()),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        }
    }

    /// The client `client_id` (an https URL) describes, from the kept copy or fetched now.
    pub async fn get(&self, client_id: &str) -> Result<ClientDocument, Unusable> {
        let url = rules::parse_url(client_id).map_err(Unusable::theirs)?;
        let now = Instant::now();
        if let Some(kept) =
            self.kept.lock().ok().and_then(|k| k.get(client_id).filter(|(_, until)| *until > now).cloned())
        {
            return Ok(kept.0);
        }
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            return Err(Unusable::theirs("too many client documents are being fetched; try again in a moment"));
        };
        let (document, keep) = match tokio::time::timeout(self.timeout, self.fetch(&url, permit)).await {
            Ok(fetched) => fetched?,
            Err(_) => return Err(Unusable::network(format!("no document within {:?}", self.timeout))),
        };
        if keep > 0
            && let Ok(mut kept) = self.kept.lock()
        {
            let now = Instant::now();
            kept.retain(|_, (_, until)| *until > now);
            if kept.len() >= MAX_KEPT
                && let Some(soonest) = kept.iter().min_by_key(|(_, (_, until))| *until).map(|(id, _)| id.clone())
            {
                kept.remove(&soonest);
            }
            kept.insert(client_id.to_owned(), (document.clone(), now + Duration::from_secs(keep)));
        }
        Ok(document)
    }

    /// The addresses of `url`'s host, every one checked. The lookup runs on a blocking thread
    /// that no timeout can stop; the fetch's place (`permit`) goes with it and comes back only
    /// when it returns, so a name server that never answers cannot pile up lookups.
    async fn addresses(
        &self,
        url: &DocumentUrl,
        permit: OwnedSemaphorePermit,
    ) -> Result<(Vec<SocketAddr>, OwnedSemaphorePermit), Unusable> {
        let port = url.destination.port;
        let (found, permit) = match &url.destination.host {
            Host::Ip(ip) => (vec![SocketAddr::new(*ip, port)], permit),
            Host::Name(name) => {
                let (resolve, name) = (self.resolve.clone(), name.clone());
                let lookup = tokio::task::spawn_blocking(move || {
                    let found = resolve(&name, port).map_err(|e| format!("{name} does not resolve: {e}"));
                    (found, permit)
                });
                let (found, permit) = lookup.await.map_err(|e| Unusable::network(e.to_string()))?;
                (found.map_err(Unusable::network)?, permit)
            }
        };
        if found.is_empty() {
            return Err(Unusable::network(format!("{} has no address", url.destination.host_text())));
        }
        // Every address, not only the ones tried: a name that answers with one private address
        // among public ones is refused as a whole.
        for addr in &found {
            self.reach.check(*addr)?;
        }
        Ok((found, permit))
    }

    /// One GET of the document; `(document, seconds to keep it)`.
    async fn fetch(&self, url: &DocumentUrl, permit: OwnedSemaphorePermit) -> Result<(ClientDocument, u64), Unusable> {
        let (addresses, _permit) = self.addresses(url, permit).await?;
        let server_name = match &url.destination.host {
            Host::Ip(ip) => ServerName::IpAddress((*ip).into()),
            Host::Name(name) => ServerName::try_from(name.clone())
                .map_err(|_| Unusable::theirs(format!("{name} is not a name TLS can verify")))?,
        };
        let mut stream = None;
        let mut failures = Vec::new();
        for addr in addresses.iter().take(MAX_ADDRESSES) {
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
                Ok(Ok(connected)) => {
                    stream = Some(connected);
                    break;
                }
                Ok(Err(e)) => failures.push(format!("{addr}: {e}")),
                Err(_) => failures.push(format!("{addr}: no connection within {CONNECT_TIMEOUT:?}")),
            }
        }
        let stream = stream.ok_or_else(|| Unusable::network(failures.join("; ")))?;
        if let (Ok(local), Ok(peer)) = (stream.local_addr(), stream.peer_addr())
            && self.reach.to_itself(local, peer)
        {
            return Err(Unusable::network(format!("{peer} is this machine's own address")));
        }
        let connector = self.tls.as_ref().ok_or_else(|| Unusable::network("no TLS client"))?;
        let tls = connector.connect(server_name, stream).await.map_err(|e| Unusable::network(format!("TLS: {e}")))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tls))
            .await
            .map_err(|e| Unusable::network(format!("HTTP: {e}")))?;
        let driver = AbortOnDrop(tokio::spawn(connection));
        let request = Request::get(url.target.as_str())
            .header(header::HOST, HeaderValue::from_str(&url.site()).map_err(|e| Unusable::network(e.to_string()))?)
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, "forgeloop")
            .body(Empty::new())
            .map_err(|e| Unusable::network(e.to_string()))?;
        let answer = sender.send_request(request).await.map_err(|e| Unusable::network(format!("HTTP: {e}")))?;
        let status = answer.status();
        if status.is_redirection() {
            return Err(Unusable::theirs(format!("it answered a redirect ({status}), which is not followed")));
        }
        if status != StatusCode::OK {
            return Err(Unusable::theirs(format!("it answered {status}, not 200")));
        }
        let keep = rules::keep_secs(answer.headers().get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()));
        let body = Limited::new(answer.into_body(), MAX_DOCUMENT_BYTES)
            .collect()
            .await
            .map_err(|_| Unusable::theirs(format!("it is larger than {MAX_DOCUMENT_BYTES} bytes, or was cut off")))?
            .to_bytes();
        drop(driver);
        let document = rules::parse_document(url, &body).map_err(Unusable::theirs)?;
        Ok((document, keep))
    }
}

impl Default for Documents {
    fn default() -> Documents {
        Documents::new()
    }
}

/// Ends the connection's task when the fetch is done or dropped (a timeout).
struct AbortOnDrop(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    //! A real TLS document server on 127.0.0.1 (a CA and certificates made by the `openssl` CLI
    //! for this run) and the real fetch; only [`Reach::Anything`] lets it reach loopback, and
    //! the product's [`Reach::Public`] is shown refusing that server without connecting.
    use std::path::Path;
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// Names the test's resolver answers for, with the document server's address; the
    /// system's resolver knows none of them (`.test` is reserved, RFC 6761).
    const NAMED: &str = "docs.forgeloop.test";

    fn openssl(dir: &Path, args: &[&str]) {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("the openssl CLI runs");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// A CA, and a certificate it signed for `names` (`subjectAltName` entries).
    fn certificates(dir: &Path, ca: &str, names: &str) {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        let ca_subject = format!("/CN={ca}");
        let ca_args = ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", &ca_subject];
        let ca_ext = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"];
        openssl(dir, &[&["req", "-x509"][..], &ec, &ca_args, &ca_ext].concat());
        openssl(dir, &[&["req"][..], &ec, &["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=leaf"]].concat());
        let ext = format!("subjectAltName={names}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
        std::fs::write(dir.join("leaf.ext"), ext).unwrap();
        let sign = ["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "leaf.ext"];
        openssl(dir, &[&["x509", "-req", "-in", "leaf.csr", "-out", "leaf.pem"][..], &sign].concat());
    }

    /// The roots that trust what [`certificates`] made in `dir`: its CA alone.
    fn roots_of(dir: &Path) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        let ca = CertificateDer::pem_file_iter(dir.join("ca.pem")).unwrap().map(Result::unwrap);
        roots.add_parsable_certificates(ca);
        roots
    }

    /// A resolver that answers every name with `to` and counts its calls.
    fn pinned(to: SocketAddr, calls: Arc<AtomicUsize>) -> Resolver {
        Arc::new(move |_, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(vec![to])
        })
    }

    /// What the server answers on a path: the head after the status line's `HTTP/1.1 `, the
    /// body, how to send it.
    enum Send {
        /// With a Content-Length, after `delay` seconds.
        Whole(u64),
        /// Chunked, no length.
        Chunked,
        /// No length: the body ends when the connection closes.
        UntilClose,
        /// With a Content-Length, one byte every 200 ms.
        Dribbled,
    }

    fn answer(path: &str, host: &str) -> (String, Vec<u8>, Send) {
        let doc = |id: String, extra: &str| {
            format!(r#"{{"client_id":"{id}","client_name":"Test","redirect_uris":["http://127.0.0.1:9/cb"]{extra}}}"#)
                .into_bytes()
        };
        let own = format!("https://{host}{path}");
        let big = format!(r#","padding":"{}""#, "x".repeat(6000));
        match path {
            "/client.json" => ("200 OK\r\nCache-Control: max-age=60".into(), doc(own, ""), Send::Whole(0)),
            "/fresh.json" => ("200 OK\r\nCache-Control: no-store".into(), doc(own, ""), Send::Whole(0)),
            "/moved.json" => (format!("302 Found\r\nLocation: https://{host}/client.json"), Vec::new(), Send::Whole(0)),
            "/big.json" => ("200 OK".into(), doc(own.clone(), &big), Send::Whole(0)),
            "/big-chunked.json" => ("200 OK".into(), doc(own.clone(), &big), Send::Chunked),
            "/big-unframed.json" => ("200 OK".into(), doc(own.clone(), &big), Send::UntilClose),
            "/slow.json" => ("200 OK".into(), doc(own, ""), Send::Whole(3)),
            "/dribbled.json" => ("200 OK".into(), doc(own, ""), Send::Dribbled),
            "/other.json" => ("200 OK".into(), doc(format!("https://{host}/client.json"), ""), Send::Whole(0)),
            _ => ("404 Not Found".into(), b"no".to_vec(), Send::Whole(0)),
        }
    }

    struct DocumentServer {
        /// Its CA and certificate, for [`DocumentServer::roots`].
        dir: tempfile::TempDir,
        port: u16,
        connections: Arc<AtomicUsize>,
        paths: Arc<Mutex<Vec<String>>>,
    }

    /// A CA called `ca`, a certificate it signed for `names`, and a server presenting it.
    async fn document_server(ca: &str, names: &str) -> DocumentServer {
        let tmp = tempfile::tempdir().unwrap();
        certificates(tmp.path(), ca, names);
        let dir = tmp.path();
        let certs: Vec<_> = CertificateDer::pem_file_iter(dir.join("leaf.pem")).unwrap().map(Result::unwrap).collect();
        let key = PrivateKeyDer::from_pem_file(dir.join("leaf.key")).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (counted, seen) = (connections.clone(), paths.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let (acceptor, seen) = (acceptor.clone(), seen.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(socket).await else { return };
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tls.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
                    let host = head
                        .lines()
                        .find_map(|l| l.strip_prefix("host: ").or_else(|| l.strip_prefix("Host: ")))
                        .unwrap_or_default()
                        .to_owned();
                    seen.lock().unwrap().push(path.clone());
                    let (status, body, send) = answer(&path, &host);
                    let mut out = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
                    match send {
                        Send::Whole(delay) => {
                            tokio::time::sleep(Duration::from_secs(delay)).await;
                            out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
                            let _ = tls.write_all(out.as_bytes()).await;
                            let _ = tls.write_all(&body).await;
                        }
                        Send::Chunked => {
                            out.push_str("Transfer-Encoding: chunked\r\n\r\n");
                            let _ = tls.write_all(out.as_bytes()).await;
                            for chunk in body.chunks(1000) {
                                let _ = tls.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).await;
                                let _ = tls.write_all(chunk).await;
                                let _ = tls.write_all(b"\r\n").await;
                            }
                            let _ = tls.write_all(b"0\r\n\r\n").await;
                        }
                        Send::UntilClose => {
                            out.push_str("\r\n");
                            let _ = tls.write_all(out.as_bytes()).await;
                            let _ = tls.write_all(&body).await;
                        }
                        Send::Dribbled => {
                            out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
                            let _ = tls.write_all(out.as_bytes()).await;
                            for byte in &body {
                                if tls.write_all(&[*byte]).await.is_err() || tls.flush().await.is_err() {
                                    return;
                                }
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                        }
                    }
                    let _ = tls.shutdown().await;
                });
            }
        });
        DocumentServer { dir: tmp, port, connections, paths }
    }

    impl DocumentServer {
        /// Roots that trust this server's CA alone.
        fn roots(&self) -> RootCertStore {
            roots_of(self.dir.path())
        }
    }

    fn url(server: &DocumentServer, path: &str) -> String {
        format!("https://{NAMED}:{}{path}", server.port)
    }

    fn local(server: &DocumentServer) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], server.port))
    }

    /// The test's resolver, sending [`NAMED`] to `server`.
    fn to(server: &DocumentServer) -> Resolver {
        pinned(local(server), Arc::default())
    }

    #[tokio::test]
    async fn a_document_is_fetched_over_verified_tls_and_kept_as_its_answer_says() {
        let server = document_server("forgeloop test CA", &format!("DNS:{NAMED},IP:127.0.0.1")).await;
        let calls = Arc::new(AtomicUsize::new(0));
        let documents = Documents::with(
            server.roots(),
            Reach::Anything,
            pinned(local(&server), calls.clone()),
            Duration::from_secs(2),
        );

        let doc = documents.get(&url(&server, "/client.json")).await.unwrap();
        assert_eq!(doc.client_id, url(&server, "/client.json"));
        assert_eq!(doc.display_name(), format!("Test ({NAMED}:{})", server.port));
        assert_eq!(doc.redirect_uris, vec!["http://127.0.0.1:9/cb".to_owned()]);
        documents.get(&url(&server, "/client.json")).await.unwrap();
        assert_eq!(server.connections.load(Ordering::SeqCst), 1, "max-age=60: the second read is the kept copy");
        documents.get(&url(&server, "/fresh.json")).await.unwrap();
        documents.get(&url(&server, "/fresh.json")).await.unwrap();
        assert_eq!(server.connections.load(Ordering::SeqCst), 3, "no-store: fetched each time");

        // One lookup a fetch, and the connection goes to what it answered and was checked: the
        // system cannot resolve the name, so a second lookup (a connection by name) would fail.
        assert_eq!(calls.load(Ordering::SeqCst), 3);

        // A certificate must name the host: this one does not name the pinned name.
        let misnamed = document_server("forgeloop test CA 2", "DNS:elsewhere.forgeloop.test,IP:127.0.0.1").await;
        let wrong = Documents::with(
            misnamed.roots(),
            Reach::Anything,
            pinned(local(&misnamed), Arc::default()),
            Duration::from_secs(2),
        );
        let err = wrong.get(&format!("https://{NAMED}:{}/client.json", misnamed.port)).await.unwrap_err();
        assert_eq!(err.shown, UNREACHABLE, "{}", err.detail);
        assert!(err.detail.contains("TLS"), "{}", err.detail);
        // Another CA's certificate is not trusted.
        let untrusting = Documents::with(misnamed.roots(), Reach::Anything, to(&server), Duration::from_secs(2));
        let err = untrusting.get(&url(&server, "/client.json")).await.unwrap_err();
        assert!(err.shown == UNREACHABLE && err.detail.contains("TLS"), "{err:?}");
    }

    #[tokio::test]
    async fn redirects_large_slow_and_foreign_documents_are_refused() {
        let server = document_server("forgeloop test CA", &format!("DNS:{NAMED},IP:127.0.0.1")).await;
        let documents = Documents::with(server.roots(), Reach::Anything, to(&server), Duration::from_millis(900));
        for (path, why) in [
            ("/moved.json", "redirect (302 Found), which is not followed"),
            ("/big.json", "larger than 5120 bytes"),
            ("/big-chunked.json", "larger than 5120 bytes"),
            ("/big-unframed.json", "larger than 5120 bytes"),
            ("/slow.json", UNREACHABLE),
            ("/dribbled.json", UNREACHABLE),
            ("/other.json", "client_id is not its own URL"),
            ("/missing.json", "answered 404 Not Found"),
        ] {
            let err = documents.get(&url(&server, path)).await.unwrap_err();
            assert!(err.shown.contains(why), "{path}: {err:?}");
        }
        assert!(!server.paths.lock().unwrap().contains(&"/client.json".to_owned()), "the redirect was not followed");
        // A failure is not kept: the same URL is fetched again.
        let before = server.connections.load(Ordering::SeqCst);
        assert!(documents.get(&url(&server, "/other.json")).await.is_err());
        assert_eq!(server.connections.load(Ordering::SeqCst), before + 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn four_fetches_at_a_time_and_a_lookup_holds_its_place_until_it_returns() {
        let server = document_server("forgeloop test CA", &format!("DNS:{NAMED},IP:127.0.0.1")).await;
        // A resolver that hangs for 1.5 s, far past the fetch's 300 ms.
        let hanging: Resolver = {
            let to = local(&server);
            Arc::new(move |_, _| {
                std::thread::sleep(Duration::from_millis(1500));
                Ok(vec![to])
            })
        };
        let documents = Arc::new(Documents::with(server.roots(), Reach::Anything, hanging, Duration::from_millis(300)));
        for n in 0..MAX_IN_FLIGHT {
            let err = documents.get(&url(&server, &format!("/fresh.json?{n}"))).await.unwrap_err();
            assert_eq!(err.shown, UNREACHABLE, "{err:?}");
        }
        // Every lookup still runs: their places are taken, so the next fetch is refused at once.
        let err = documents.get(&url(&server, "/fresh.json")).await.unwrap_err();
        assert!(err.shown.contains("too many client documents"), "{err:?}");
        tokio::time::sleep(Duration::from_millis(1600)).await;
        let free = Documents::with(server.roots(), Reach::Anything, to(&server), Duration::from_secs(2));
        assert!(free.get(&url(&server, "/fresh.json")).await.is_ok());
        assert!(documents.in_flight.available_permits() == MAX_IN_FLIGHT, "the places came back");
    }

    #[tokio::test]
    async fn the_product_never_connects_to_this_machine_and_says_nothing_of_it() {
        let server = document_server("forgeloop test CA", &format!("DNS:{NAMED},IP:127.0.0.1")).await;
        // The test's CA trusted, so only the address rule stands between the fetch and the server.
        let public_only = Documents::with(server.roots(), Reach::Public, to(&server), Duration::from_secs(2));
        for target in [
            format!("https://127.0.0.1:{}/client.json", server.port),
            format!("https://[::ffff:127.0.0.1]:{}/client.json", server.port),
        ] {
            for documents in [&public_only, &Documents::new()] {
                let err = documents.get(&target).await.unwrap_err();
                assert_eq!(err.shown, UNREACHABLE, "{target}: the caller learns nothing of the address");
                assert!(err.detail.contains("loopback") && err.detail.contains("only from public"), "{err:?}");
            }
        }
        // A name that resolves to loopback is refused the same way.
        let err = public_only.get(&url(&server, "/client.json")).await.unwrap_err();
        assert!(err.shown == UNREACHABLE && err.detail.contains("loopback"), "{err:?}");
        assert_eq!(server.connections.load(Ordering::SeqCst), 0, "no connection was made");
        let err = public_only.get("https://docs.example/").await.unwrap_err();
        assert!(err.shown.contains("no path"), "{err:?}");
        let err = public_only.get(&format!("https://localhost:{}/client.json", server.port)).await.unwrap_err();
        assert!(err.shown.contains("single name"), "{err:?}");
        // This machine's own address is refused even when it counts as public.
        let me: SocketAddr = "1.2.3.4:50000".parse().unwrap();
        assert!(Reach::Public.to_itself(me, "1.2.3.4:443".parse().unwrap()));
        assert!(Reach::Public.to_itself("[::ffff:1.2.3.4]:1".parse().unwrap(), "1.2.3.4:443".parse().unwrap()));
        assert!(!Reach::Public.to_itself(me, "1.2.3.5:443".parse().unwrap()));
    }
}
