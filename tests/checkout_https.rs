//! HTTPS + token, offline: a throwaway self-signed certificate and a smart-git HTTPS server on
//! 127.0.0.1 (`tests/support/https_git_server.py` in front of `git http-backend`) that demands
//! HTTP Basic auth like GitHub does for a private repository (docs/design.md §13.4).
//!
//! Needs `python3` and the `openssl` CLI; if either is missing the test fails, it never skips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/checkout_fixture.rs"]
mod fixture;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use fixture::{Fixture, git, status};
use forgeloop::checkout::{CheckoutError, prepare};

fn need(tool: &str, version_arg: &str) {
    let ok = Command::new(tool).arg(version_arg).output().is_ok_and(|o| o.status.success());
    assert!(ok, "the HTTPS checkout test needs `{tool}` on PATH; install it (this test never skips)");
}

/// A throwaway CA and a server certificate for 127.0.0.1 it signed (a CA's own certificate is
/// not a server's: rustls refuses one used as an end entity, as browsers do). Unique CNs
/// (Debian's snakeoil cert is CN=localhost, which collides in hashed CA directories).
/// Returns the CA's certificate (to trust), the server's certificate and its key.
fn make_cert(dir: &Path, cn: &str) -> (PathBuf, PathBuf, PathBuf) {
    let file = |ext: &str| dir.join(format!("{cn}.{ext}"));
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").args(args).output().expect("openssl runs");
        assert!(out.status.success(), "openssl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    };
    let p = |path: &PathBuf| path.to_str().unwrap().to_owned();
    let (ca, ca_key, cert, key, csr, ext) =
        (file("ca.pem"), file("ca.key"), file("pem"), file("key"), file("csr"), file("ext"));
    let (ca_subject, subject) = (format!("/CN={cn} CA"), format!("/CN={cn}"));
    openssl(
        &["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", &ca_subject]
            .into_iter()
            .chain(["-keyout", &p(&ca_key), "-out", &p(&ca)])
            .collect::<Vec<_>>(),
    );
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&["req", "-newkey", "rsa:2048", "-nodes", "-subj", &subject, "-keyout", &p(&key), "-out", &p(&csr)]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        &p(&csr),
        "-CA",
        &p(&ca),
        "-CAkey",
        &p(&ca_key),
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        &p(&cert),
        "-extfile",
        &p(&ext),
    ]);
    (ca, cert, key)
}

/// The transport's trust is process-wide and additive: each test adds its own CA.
fn trust(cert: &Path) {
    static INIT: Once = Once::new();
    INIT.call_once(forgeloop::checkout::init_git_early);
    let added = forgeloop::checkout::add_trusted_certificates(&std::fs::read(cert).unwrap());
    assert_eq!(added, Ok(1), "trust the test certificate");
}

/// A random token made at run time (never a literal in the repository).
fn random_token() -> String {
    let mut bytes = [0u8; 20];
    File::open("/dev/urandom").unwrap().read_exact(&mut bytes).unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct Server {
    child: Child,
    log: PathBuf,
    port: u16,
}

impl Server {
    fn start(root: &Path, cert: &Path, key: &Path, token: Option<&str>, dir: &Path, name: &str) -> Server {
        Server::start_redirecting(root, cert, key, token, None, dir, name)
    }

    /// `redirect`: `PREFIX=TARGET`, a renamed repository (`https_git_server.py`).
    fn start_redirecting(
        root: &Path,
        cert: &Path,
        key: &Path,
        token: Option<&str>,
        redirect: Option<&str>,
        dir: &Path,
        name: &str,
    ) -> Server {
        let port_file = dir.join(format!("{name}.port"));
        let log = dir.join(format!("{name}.log"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/https_git_server.py");
        let mut cmd = Command::new("python3");
        cmd.arg(script).arg(root).arg(cert).arg(key).arg(&port_file);
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(File::create(&log).unwrap());
        cmd.env_remove("HTTPS_GIT_SERVER_TOKEN");
        if let Some(token) = token {
            cmd.env("HTTPS_GIT_SERVER_TOKEN", token);
        }
        cmd.env_remove("HTTPS_GIT_SERVER_REDIRECT");
        if let Some(redirect) = redirect {
            cmd.env("HTTPS_GIT_SERVER_REDIRECT", redirect);
        }
        let mut child = cmd.spawn().expect("python3 starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                return Server { child, log, port };
            }
            if let Ok(Some(exit)) = child.try_wait() {
                panic!("test HTTPS server exited ({exit}): {}", std::fs::read_to_string(&log).unwrap_or_default());
            }
            assert!(Instant::now() < deadline, "test HTTPS server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}/{path}", self.port)
    }

    /// Every line of the server's log.
    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap().lines().map(str::to_owned).collect()
    }

    /// The server's `auth user=… ok=…` lines: one per request that carried credentials.
    fn auth_lines(&self) -> Vec<String> {
        let log = std::fs::read_to_string(&self.log).unwrap();
        log.lines().filter(|l| l.starts_with("srv: auth ")).map(str::to_owned).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path).unwrap().windows(needle.len()).any(|w| w == needle.as_bytes()) {
                hits.push(path);
            }
        }
    }
    hits
}

#[test]
fn https_private_repository_with_token_offline() {
    need("python3", "--version");
    need("openssl", "version");
    let fx = Fixture::new();
    let certs = fx.tmp.path().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let (ca, cert, key) = make_cert(&certs, "forgeloop-checkout-https-test");
    trust(&ca);
    let token = random_token();
    let srv = Server::start(fx.tmp.path(), &cert, &key, Some(&token), &certs, "private");
    let url = srv.url("base.git");

    // 1. Private repository, right token: works, and the token is stored nowhere.
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    fx.commit("feature.txt", "feature\n", "feature");
    let sha = fx.push_pr(1);
    let mut req = fx.request(&url, 1, &sha);
    req.token = Some(&token);
    req.allow_insecure_local = false;
    let first = prepare(&req).unwrap();
    assert_eq!(git(first.path(), &["rev-parse", "HEAD"]), sha);
    assert_eq!(std::fs::read_to_string(first.path().join("feature.txt")).unwrap(), "feature\n");
    assert_eq!(status(first.path()), "");
    let auth = srv.auth_lines();
    assert!(!auth.is_empty(), "the server must have demanded and received credentials");
    assert!(auth.iter().all(|l| l == "srv: auth user=x-access-token ok=True"), "{auth:?}");
    for file in ["config", "FETCH_HEAD"] {
        let text = std::fs::read_to_string(first.mirror.join(file)).unwrap();
        assert!(!text.contains(&token), "token in mirror {file}: {text}");
    }
    assert!(std::fs::read_to_string(first.mirror.join("FETCH_HEAD")).unwrap().contains(&sha));
    assert_eq!(files_containing(&first.mirror, &token), Vec::<PathBuf>::new());
    assert_eq!(files_containing(first.gitdir(), &token), Vec::<PathBuf>::new());
    let first_received = first.fetch.received_objects;
    drop(first);

    // 2. Incremental over HTTPS: only the new commit's objects travel.
    fx.commit("feature.txt", "feature v2\n", "v2");
    let sha2 = fx.push_pr(1);
    let mut req = fx.request(&url, 1, &sha2);
    req.token = Some(&token);
    let second = prepare(&req).unwrap();
    assert!(second.fetch.fetched);
    assert_eq!(second.fetch.received_objects, 3, "commit, tree, blob: {:?}", second.fetch);
    assert!(second.fetch.received_objects < first_received);
    drop(second);

    // 3. No token: a clear "authentication required", no credentials sent.
    let before = srv.auth_lines().len();
    let err = prepare(&fx.request(&url, 1, &sha2)).unwrap_err();
    assert!(matches!(err, CheckoutError::AuthRequired { .. }), "{err:?}");
    assert!(err.to_string().contains("GH_TOKEN"), "{err}");
    assert_eq!(srv.auth_lines().len(), before);

    // 4. Wrong token: rejected once, not replayed 15 times; no token in the message.
    let wrong = random_token();
    let mut req = fx.request(&url, 1, &sha2);
    req.token = Some(&wrong);
    let err = prepare(&req).unwrap_err();
    match &err {
        CheckoutError::AuthFailed { credential_requests, .. } => assert_eq!(*credential_requests, 2),
        other => panic!("expected AuthFailed, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("lacks access"), "{msg}");
    assert!(!msg.contains(&wrong) && !msg.contains(&token), "{msg}");
    assert!(!format!("{err:?}").contains(&wrong));
    let tried: Vec<String> = srv.auth_lines().split_off(before);
    assert_eq!(tried, vec!["srv: auth user=x-access-token ok=False".to_owned()]);
    assert_eq!(fx.leftover_checkouts(), 0);

    // 5. A repository the server does not have.
    let missing_url = srv.url("nope.git");
    let mut req = fx.request(&missing_url, 1, &sha2);
    req.token = Some(&token);
    let err = prepare(&req).unwrap_err();
    assert!(matches!(err, CheckoutError::RepoNotFound { .. }), "{err:?}");

    // 6. Exact-SHA fetch of a force-pushed-away head, where the server allows any SHA.
    git(&fx.base, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    git(&fx.work, &["checkout", "-q", "-b", "other", "main"]);
    let gone = fx.commit("other.txt", "first attempt\n", "first attempt");
    fx.push_pr(2);
    git(&fx.work, &["reset", "-q", "--hard", "main"]);
    fx.commit("other.txt", "second attempt\n", "second attempt");
    fx.push_pr(2);
    let mut req = fx.request(&url, 2, &gone);
    req.token = Some(&token);
    assert!(matches!(prepare(&req), Err(CheckoutError::HeadMoved { .. })));
    req.fetch_exact_sha = true;
    let co = prepare(&req).unwrap();
    assert_eq!(std::fs::read_to_string(co.path().join("other.txt")).unwrap(), "first attempt\n");
    drop(co);

    // 7. A public server never asks, so the token is never sent.
    let public = Server::start(fx.tmp.path(), &cert, &key, None, &certs, "public");
    let public_url = public.url("base.git");
    let mut req = fx.request(&public_url, 1, &sha2);
    req.token = Some(&token);
    prepare(&req).unwrap();
    assert_eq!(public.auth_lines(), Vec::<String>::new());

    // 8. A certificate nobody trusts is refused with a certificate error.
    let (_, other_cert, other_key) = make_cert(&certs, "forgeloop-checkout-untrusted-test");
    let untrusted = Server::start(fx.tmp.path(), &other_cert, &other_key, None, &certs, "untrusted");
    let untrusted_url = untrusted.url("base.git");
    let err = prepare(&fx.request(&untrusted_url, 1, &sha2)).unwrap_err();
    assert!(matches!(err, CheckoutError::Certificate { .. }), "{err:?}");
    assert!(err.to_string().contains("SSL_CERT_FILE"), "{err}");

    // 9. Over https without the local permission, a PR's local-path submodule is refused.
    let sub = fx.tmp.path().join("sub.git");
    git(fx.tmp.path(), &["init", "-q", "--bare", sub.to_str().unwrap()]);
    git(&fx.work, &["push", "-q", sub.to_str().unwrap(), "main"]);
    git(&fx.work, &["checkout", "-q", "-b", "with-sub", "main"]);
    git(&fx.work, &["submodule", "add", "-q", sub.to_str().unwrap(), "vendor/sub"]);
    git(&fx.work, &["commit", "-q", "-m", "local submodule"]);
    let sha3 = fx.push_pr(3);
    let mut req = fx.request(&url, 3, &sha3);
    req.token = Some(&token);
    req.allow_insecure_local = false;
    req.submodules = true;
    let err = prepare(&req).unwrap_err();
    assert!(matches!(err, CheckoutError::Submodule { .. }), "{err:?}");
    assert!(err.to_string().contains("local paths are only allowed"), "{err}");
    assert_eq!(fx.leftover_checkouts(), 0);
}

/// A renamed repository: the advertisement is redirected and the fetch follows it on the same
/// origin, the token going where it went; a redirect down to plain http is refused; a redirect
/// to another origin gets no token, even when that server asks.
#[test]
fn redirects_are_followed_within_the_origin_and_never_carry_the_token_away() {
    need("python3", "--version");
    need("openssl", "version");
    let fx = Fixture::new();
    let certs = fx.tmp.path().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let (ca, cert, key) = make_cert(&certs, "forgeloop-checkout-redirect-test");
    trust(&ca);
    let token = random_token();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    fx.commit("feature.txt", "feature\n", "feature");
    let sha = fx.push_pr(1);

    // Another origin, which asks for the token too.
    let elsewhere = Server::start(fx.tmp.path(), &cert, &key, Some(&token), &certs, "elsewhere");
    let same =
        Server::start_redirecting(fx.tmp.path(), &cert, &key, Some(&token), Some("/old.git=/base.git"), &certs, "same");
    let old_url = same.url("old.git");
    let mut req = fx.request(&old_url, 1, &sha);
    req.token = Some(&token);
    let co = prepare(&req).unwrap();
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), sha);
    drop(co);
    let log = same.lines();
    assert!(log.iter().any(|l| l.starts_with("srv: redirect /old.git/info/refs")), "{log:?}");
    assert!(
        log.iter().any(|l| l.contains("POST /base.git/git-upload-pack")),
        "the fetch went where it was sent: {log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("POST /old.git")), "{log:?}");
    assert!(same.auth_lines().iter().all(|l| l == "srv: auth user=x-access-token ok=True"));

    let away = Server::start_redirecting(
        fx.tmp.path(),
        &cert,
        &key,
        None,
        Some(&format!("/away.git={}", elsewhere.url("base.git"))),
        &certs,
        "away",
    );
    let away_url = away.url("away.git");
    let mut req = fx.request(&away_url, 1, &sha);
    req.token = Some(&token);
    let err = prepare(&req).unwrap_err();
    assert!(err.to_string().contains("the token was withheld"), "{err}");
    assert_eq!(elsewhere.auth_lines(), Vec::<String>::new(), "the other origin never saw the token");

    let down = Server::start_redirecting(
        fx.tmp.path(),
        &cert,
        &key,
        None,
        Some("/down.git=http://127.0.0.1:9/base.git"),
        &certs,
        "down",
    );
    let err = prepare(&fx.request(&down.url("down.git"), 1, &sha)).unwrap_err();
    assert!(err.to_string().contains("redirect from") && err.to_string().contains("refused"), "{err}");
    assert_eq!(fx.leftover_checkouts(), 0);
}
