//! The fetch of a client's metadata document (design §8.1): the one request `serve` makes to
//! the outside, to a URL an unauthenticated caller names. So it reaches only what the pure rules
//! (`domain::client_document`) allow: the name is resolved once, every address it resolves to
//! must be public, and the connection goes to one of those checked addresses (never resolved
//! again, so a name cannot turn private between the check and the connection); TLS verified
//! against the system's roots (`SSL_CERT_FILE`/`SSL_CERT_DIR` honoured); one GET, redirects not
//! followed, at most 5 KiB, 5 seconds for all of it, four fetches at a time. Documents are kept
//! as their answers say, within bounds; a failure is not kept.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::domain::client_document::{self as rules, ClientDocument, DocumentUrl, MAX_DOCUMENT_BYTES};
use crate::domain::egress::Host;

/// The time for one fetch: resolving, connecting, TLS, the answer and its body.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Documents kept at most (the soonest to expire forgotten first).
const MAX_KEPT: usize = 64;
/// Fetches at a time; one more is refused at once (the caller may try again).
const MAX_IN_FLIGHT: usize = 4;

/// Why a client's document cannot be used: one line for the error page and `serve`'s log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unusable(pub String);

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
            Reach::Public => rules::check_address(addr.ip()).map_err(Unusable),
            #[cfg(test)]
            Reach::Anything => Ok(()),
        }
    }
}

/// Fetches and keeps clients' metadata documents.
pub struct Documents {
    /// The TLS client (`None` only if rustls refused its default protocol versions).
    tls: Option<TlsConnector>,
    reach: Reach,
    timeout: Duration,
    kept: Mutex<HashMap<String, (ClientDocument, Instant)>>,
    in_flight: tokio::sync::Semaphore,
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
        Documents::with(roots, Reach::Public, FETCH_TIMEOUT)
    }

    fn with(roots: RootCertStore, reach: Reach, timeout: Duration) -> Documents {
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
            timeout,
            kept: Mutex::new(HashMap::new()),
            in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
        }
    }

    /// The client `client_id` (an https URL) describes, from the kept copy or fetched now.
    pub async fn get(&self, client_id: &str) -> Result<ClientDocument, Unusable> {
        let url = rules::parse_url(client_id).map_err(Unusable)?;
        let now = Instant::now();
        if let Some(kept) =
            self.kept.lock().ok().and_then(|k| k.get(client_id).filter(|(_, until)| *until > now).cloned())
        {
            return Ok(kept.0);
        }
        let Ok(_permit) = self.in_flight.try_acquire() else {
            return Err(Unusable("too many client documents are being fetched; try again in a moment".into()));
        };
        let (document, keep) = match tokio::time::timeout(self.timeout, self.fetch(&url)).await {
            Ok(fetched) => fetched?,
            Err(_) => return Err(Unusable(format!("fetching it took longer than {} s", self.timeout.as_secs_f32()))),
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

    /// One GET of the document; `(document, seconds to keep it)`.
    async fn fetch(&self, url: &DocumentUrl) -> Result<(ClientDocument, u64), Unusable> {
        let port = url.destination.port;
        let (addresses, server_name) = match &url.destination.host {
            Host::Ip(ip) => (vec![SocketAddr::new(*ip, port)], ServerName::IpAddress((*ip).into())),
            Host::Name(name) => {
                let found = tokio::net::lookup_host((name.as_str(), port))
                    .await
                    .map_err(|_| Unusable(format!("{name} does not resolve")))?;
                let server_name = ServerName::try_from(name.clone())
                    .map_err(|_| Unusable(format!("{name} is not a name TLS can verify")))?;
                (found.collect::<Vec<_>>(), server_name)
            }
        };
        if addresses.is_empty() {
            return Err(Unusable(format!("{} has no address", url.destination.host_text())));
        }
        // Every address, not only the one used: a name that answers with one private address
        // among public ones is refused as a whole.
        for addr in &addresses {
            self.reach.check(*addr)?;
        }
        let mut stream = None;
        for addr in &addresses {
            if let Ok(connected) = TcpStream::connect(addr).await {
                stream = Some(connected);
                break;
            }
        }
        // One message for every failure to reach it: the caller learns nothing about the
        // ports of a public host beyond "not a document server".
        let unreachable =
            || Unusable("it could not be fetched over https (no connection, or its certificate is not trusted)".into());
        let stream = stream.ok_or_else(unreachable)?;
        let connector = self.tls.as_ref().ok_or_else(unreachable)?;
        let tls = connector.connect(server_name, stream).await.map_err(|_| unreachable())?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tls))
            .await
            .map_err(|_| unreachable())?;
        let driver = AbortOnDrop(tokio::spawn(connection));
        let request = Request::get(url.target.as_str())
            .header(header::HOST, HeaderValue::from_str(&url.site()).map_err(|_| unreachable())?)
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, concat!("forgeloop/", env!("CARGO_PKG_VERSION")))
            .body(Empty::new())
            .map_err(|_| unreachable())?;
        let answer = sender.send_request(request).await.map_err(|_| unreachable())?;
        let status = answer.status();
        if status.is_redirection() {
            return Err(Unusable(format!("it answered a redirect ({status}), which is not followed")));
        }
        if status != StatusCode::OK {
            return Err(Unusable(format!("it answered {status}, not 200")));
        }
        let keep = rules::keep_secs(answer.headers().get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()));
        let body = Limited::new(answer.into_body(), MAX_DOCUMENT_BYTES)
            .collect()
            .await
            .map_err(|_| Unusable(format!("it is larger than {MAX_DOCUMENT_BYTES} bytes, or was cut off")))?
            .to_bytes();
        drop(driver);
        let document = rules::parse_document(url, &body).map_err(Unusable)?;
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
    //! A real TLS document server on 127.0.0.1 (a CA and a certificate made by the `openssl`
    //! CLI for this run) and the real fetch; only [`Reach::Anything`] lets it reach loopback,
    //! and the product's [`Reach::Public`] is shown refusing that server without connecting.
    use std::path::Path;
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    fn openssl(dir: &Path, args: &[&str]) {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("the openssl CLI runs");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// A CA, and a certificate it signed for `localhost` and 127.0.0.1.
    fn certificates(dir: &Path, ca: &str) {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        let ca_subject = format!("/CN={ca}");
        openssl(
            dir,
            &[
                &["req", "-x509"][..],
                &ec,
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "2",
                    "-subj",
                    &ca_subject,
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign",
                ],
            ]
            .concat(),
        );
        openssl(
            dir,
            &[&["req"][..], &ec, &["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"]].concat(),
        );
        std::fs::write(
            dir.join("leaf.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                "leaf.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "leaf.pem",
                "-days",
                "2",
                "-extfile",
                "leaf.ext",
            ],
        );
    }

    fn roots(ca: &Path) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        roots.add_parsable_certificates(CertificateDer::pem_file_iter(ca).unwrap().map(Result::unwrap));
        roots
    }

    /// What the server answers on a path: status line, headers, body, a delay first.
    fn answer(path: &str, port: u16) -> (String, Vec<u8>, u64) {
        let doc = |id: String, extra: &str| {
            format!(r#"{{"client_id":"{id}","client_name":"Test","redirect_uris":["http://127.0.0.1:9/cb"]{extra}}}"#)
                .into_bytes()
        };
        let own = format!("https://localhost:{port}{path}");
        match path {
            "/client.json" => ("200 OK\r\nCache-Control: max-age=60".into(), doc(own, ""), 0),
            "/fresh.json" => ("200 OK\r\nCache-Control: no-store".into(), doc(own, ""), 0),
            "/moved.json" => (format!("302 Found\r\nLocation: https://localhost:{port}/client.json"), Vec::new(), 0),
            "/big.json" => ("200 OK".into(), doc(own, &format!(r#","padding":"{}""#, "x".repeat(6000))), 0),
            "/slow.json" => ("200 OK".into(), doc(own, ""), 3),
            "/other.json" => ("200 OK".into(), doc(format!("https://localhost:{port}/client.json"), ""), 0),
            _ => ("404 Not Found".into(), b"no".to_vec(), 0),
        }
    }

    struct DocumentServer {
        port: u16,
        connections: Arc<AtomicUsize>,
        paths: Arc<Mutex<Vec<String>>>,
    }

    async fn document_server(dir: &Path) -> DocumentServer {
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
                    let line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_owned();
                    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
                    seen.lock().unwrap().push(path.clone());
                    let (status, body, delay) = answer(&path, port);
                    tokio::time::sleep(Duration::from_secs(delay)).await;
                    let reply =
                        format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                    let _ = tls.write_all(reply.as_bytes()).await;
                    let _ = tls.write_all(&body).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        DocumentServer { port, connections, paths }
    }

    fn url(server: &DocumentServer, path: &str) -> String {
        format!("https://localhost:{}{path}", server.port)
    }

    #[tokio::test]
    async fn a_document_is_fetched_over_verified_tls_and_kept_as_its_answer_says() {
        let dir = tempfile::tempdir().unwrap();
        certificates(dir.path(), "forgeloop test CA");
        let server = document_server(dir.path()).await;
        let documents = Documents::with(roots(&dir.path().join("ca.pem")), Reach::Anything, Duration::from_secs(2));

        let doc = documents.get(&url(&server, "/client.json")).await.unwrap();
        assert_eq!(doc.client_id, url(&server, "/client.json"));
        assert_eq!(doc.name, format!("Test (localhost:{})", server.port));
        assert_eq!(doc.redirect_uris, vec!["http://127.0.0.1:9/cb".to_owned()]);
        documents.get(&url(&server, "/client.json")).await.unwrap();
        assert_eq!(server.connections.load(Ordering::SeqCst), 1, "max-age=60: the second read is the kept copy");
        documents.get(&url(&server, "/fresh.json")).await.unwrap();
        documents.get(&url(&server, "/fresh.json")).await.unwrap();
        assert_eq!(server.connections.load(Ordering::SeqCst), 3, "no-store: fetched each time");

        // Another CA's certificate is not trusted.
        let other = tempfile::tempdir().unwrap();
        certificates(other.path(), "another CA");
        let untrusting = Documents::with(roots(&other.path().join("ca.pem")), Reach::Anything, Duration::from_secs(2));
        let err = untrusting.get(&url(&server, "/client.json")).await.unwrap_err();
        assert!(err.0.contains("could not be fetched over https"), "{err}");
    }

    #[tokio::test]
    async fn redirects_large_slow_and_foreign_documents_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        certificates(dir.path(), "forgeloop test CA");
        let server = document_server(dir.path()).await;
        let documents = Documents::with(roots(&dir.path().join("ca.pem")), Reach::Anything, Duration::from_millis(800));
        for (path, why) in [
            ("/moved.json", "redirect (302 Found), which is not followed"),
            ("/big.json", "larger than 5120 bytes"),
            ("/slow.json", "longer than 0.8 s"),
            ("/other.json", "client_id is not its own URL"),
            ("/missing.json", "answered 404 Not Found"),
        ] {
            let err = documents.get(&url(&server, path)).await.unwrap_err();
            assert!(err.0.contains(why), "{path}: {err}");
        }
        assert!(!server.paths.lock().unwrap().contains(&"/client.json".to_owned()), "the redirect was not followed");
        // A failure is not kept: the same URL is fetched again.
        let before = server.connections.load(Ordering::SeqCst);
        assert!(documents.get(&url(&server, "/other.json")).await.is_err());
        assert_eq!(server.connections.load(Ordering::SeqCst), before + 1);
    }

    #[tokio::test]
    async fn the_product_never_connects_to_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        certificates(dir.path(), "forgeloop test CA");
        let server = document_server(dir.path()).await;
        // The test's CA trusted, so only the address rule stands between the fetch and the server.
        let public_only = Documents::with(roots(&dir.path().join("ca.pem")), Reach::Public, Duration::from_secs(2));
        for target in [
            url(&server, "/client.json"),
            format!("https://127.0.0.1:{}/client.json", server.port),
            format!("https://[::ffff:127.0.0.1]:{}/client.json", server.port),
        ] {
            let err = public_only.get(&target).await.unwrap_err();
            assert!(err.0.contains("loopback") && err.0.contains("only from public addresses"), "{target}: {err}");
            let err = Documents::new().get(&target).await.unwrap_err();
            assert!(err.0.contains("loopback"), "{target}: {err}");
        }
        assert_eq!(server.connections.load(Ordering::SeqCst), 0, "no connection was made");
        let err = public_only.get("https://localhost/").await.unwrap_err();
        assert!(err.0.contains("no path"), "{err}");
    }
}
