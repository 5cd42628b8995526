//! `forgeloop serve` (design §8.1): the remote connector. A chat client that calls remote MCP
//! servers (ChatGPT's connectors) asks forgeloop itself to start a cycle and test its PR, with
//! OAuth 2.1 and a pairing code only the person sees; the sandbox, the cap, redaction and the
//! journal stay forgeloop's. Front end: it parses, calls `cycle::connector`, and prints.

pub mod answers;
pub mod auth;
pub mod client_document;
pub mod http;
pub mod limits;
pub mod pages;
mod schemas;
pub mod tools;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::cycle::Ctx;
use crate::cycle::connector;
use crate::cycle::connector::Serving;
use crate::domain::connector::format_pairing;
use crate::domain::word::Word;
use crate::error::{Error, Result};

use self::auth::AuthState;
use self::http::{Server, unix_now};

/// Where `serve` listens unless told.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// What `forgeloop serve` was asked.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The tunnel's public https URL, when there is one.
    pub public_url: Option<String>,
}

/// Whether `listen` may be used with `public_url` without asking the person: a loopback
/// address. Otherwise the front end needs an https public URL and the person's yes.
pub fn exposure(listen: &SocketAddr, public_url: Option<&str>) -> Result<bool> {
    if listen.ip().is_loopback() {
        return Ok(false);
    }
    match public_url {
        Some(url) if url.starts_with("https://") => Ok(true),
        _ => Err(Error::Invalid(format!(
            "--listen {listen} is reachable from other machines: forgeloop serve listens there only behind an https --public-url, and only when you confirm on a terminal"
        ))),
    }
}

/// Checks `--public-url`: an absolute https URL with no path, query or user. Plain http only
/// for a loopback host (a local test): ChatGPT's tokens cross the tunnel in that URL. The
/// answer is the parsed URL's origin (the host lowercased, a default port dropped).
pub fn check_public_url(url: &str) -> Result<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = url::Url::parse(trimmed)
        .ok()
        .filter(|u| u.path() == "/" && u.query().is_none() && u.fragment().is_none() && !u.cannot_be_a_base());
    let Some((parsed, (_, origin))) = parsed.and_then(|u| http::authority_and_origin(u.as_str()).map(|a| (u, a)))
    else {
        return Err(Error::Invalid(format!(
            "--public-url {url:?} is not a base URL like https://forge.example.com (no path, query or user)"
        )));
    };
    if parsed.scheme() == "http" && !is_loopback(&parsed) {
        return Err(Error::Invalid(format!(
            "--public-url {url:?} is not https: ChatGPT's tokens would cross the tunnel in the clear; give the tunnel's https URL"
        )));
    }
    Ok(origin)
}

/// Whether `url`'s host is a loopback address or `localhost`: only this machine reaches it.
pub fn is_loopback_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| is_loopback(&u))
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `serve --grants`: every grant, without its token hashes.
pub fn grants(ctx: &Ctx) -> Result<Value> {
    let grants = connector::files(ctx).load_grants().map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(json!({ "status": Word::Ok, "grants": connector::grant_rows(&grants, unix_now()) }))
}

/// `serve --revoke GRANT|all`: the grant's tokens stop working at once.
pub fn revoke(ctx: &Ctx, which: &str) -> Result<Value> {
    Ok(json!({ "status": Word::Revoked, "grants": connector::revoke(ctx, which)? }))
}

/// `serve --share REVIEW --grant ID` (or `--unshare`): what the grant's client may read now.
pub fn share(ctx: &Ctx, grant: &str, review: &str, share: bool) -> Result<Value> {
    let sharing = crate::cycle::review::shared::share(ctx, grant, review, share)?;
    Ok(json!({ "status": Word::Ok, "grant": sharing.grant, "client": sharing.client, "shared": sharing.shared }))
}

/// `serve --new-code`: asks the running `serve` for a new pairing code.
pub fn new_code(ctx: &Ctx) -> Result<Value> {
    connector::new_pairing_code(ctx)?;
    Ok(
        json!({ "status": Word::Ok, "message": "forgeloop serve made a new pairing code: it prints it on stderr and the control room shows it" }),
    )
}

/// Serves until SIGINT or SIGTERM; exit code 0 then.
pub fn run(ctx: Ctx, opts: ServeOptions) -> Result<i32> {
    crate::mcp::init_logging(&ctx.redactor);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the server's async runtime", e))?;
    let served = runtime.block_on(serve(ctx, opts));
    runtime.shutdown_timeout(Duration::from_millis(500));
    served.map(|()| 0)
}

async fn serve(ctx: Ctx, opts: ServeOptions) -> Result<()> {
    let listener =
        TcpListener::bind(opts.listen).await.map_err(|e| Error::io(format!("cannot listen on {}", opts.listen), e))?;
    let local = listener.local_addr().map_err(|e| Error::io("cannot read the listening address", e))?;
    let url = format!("http://{local}");
    let base = opts.public_url.clone().unwrap_or_else(|| url.clone());
    let files = connector::files(&ctx);
    files.create().map_err(|e| Error::Invalid(e.to_string()))?;
    let auth = AuthState::new(format!("{base}/mcp"), unix_now()).map_err(Error::Invalid)?;
    let server = Arc::new(Server::new(ctx.clone(), &url, &base, auth));
    let started_at = ctx.now();
    let record = |server: &Server| -> Option<String> {
        let auth = server.auth.lock().ok()?;
        let code = format_pairing(&auth.pairing.code);
        let expires = chrono::DateTime::from_timestamp(auth.pairing.expires_at, 0)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let serving = Serving {
            pid: std::process::id(),
            url: url.clone(),
            mcp_url: server.resource(),
            pairing_code: Some(code.clone()),
            pairing_expires_at: expires,
            started_at: started_at.clone(),
        };
        if let Err(e) = files.write_serving(&serving) {
            tracing::error!("cannot write serving.json: {e}");
        }
        Some(code)
    };
    let code = record(&server).unwrap_or_default();
    let mut line = json!({ "status": Word::Serving, "url": url, "mcp_url": server.resource(), "pairing_code": code });
    if is_loopback_url(&server.resource()) {
        // What the person pastes into ChatGPT must be reachable from OpenAI's servers.
        line["loopback_only"] = json!(true);
        line["note"] = json!(
            "this MCP URL is on loopback: ChatGPT cannot reach it. Run a tunnel to this address and start serve again with --public-url https://<the tunnel's host>"
        );
    }
    crate::output::line(&ctx.redactor, &line);
    eprintln!(
        "forgeloop serve: the pairing code is {code} (valid 10 minutes, used once; each wrong code typed makes the next try wait longer, up to a minute, and never voids it)"
    );

    let mut renew = tokio::time::interval(Duration::from_secs(5));
    let mut usr1 = signal(tokio::signal::unix::SignalKind::user_defined1())?;
    let mut term = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let server = server.clone();
                connections.spawn(async move {
                    let service = service_fn(move |request| {
                        let server = server.clone();
                        async move { Ok::<_, Infallible>(server.handle(request).await) }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
                while connections.try_join_next().is_some() {}
            }
            _ = renew.tick() => renew_pairing(&server, false, &record),
            _ = server.pairing_spent.notified() => renew_pairing(&server, false, &record),
            _ = usr1.recv() => renew_pairing(&server, true, &record),
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    files.remove_serving();
    connections.abort_all();
    Ok(())
}

/// A new pairing code when the one in force was used or expired (or the person asked).
fn renew_pairing(server: &Server, force: bool, record: &impl Fn(&Server) -> Option<String>) {
    let renewed = server.auth.lock().ok().and_then(|mut auth| auth.renew_pairing(unix_now(), force).ok());
    if renewed == Some(true)
        && let Some(code) = record(server)
    {
        eprintln!("forgeloop serve: the pairing code is now {code}");
    }
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(kind).map_err(|e| Error::io("cannot watch signals", e))
}

#[cfg(test)]
mod tests {

    #[test]
    fn loopback_urls_are_told_apart_from_reachable_ones() {
        for url in ["http://127.0.0.1:8787", "http://localhost", "http://[::1]:9/mcp", "http://127.9.9.9"] {
            assert!(super::is_loopback_url(url), "{url}");
        }
        for url in ["https://forge.example.com", "http://10.0.0.1:80", "http://[2001:db8::1]", "http://localhost.evil"]
        {
            assert!(!super::is_loopback_url(url), "{url}");
        }
        assert!(super::check_public_url("http://127.0.0.1:9").is_ok());
        assert!(super::check_public_url("http://forge.example.com").is_err());
    }

    use super::*;

    #[test]
    fn only_loopback_is_served_without_asking() {
        let loopback: SocketAddr = "127.0.0.1:8787".parse().unwrap();
        let anywhere: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert!(!exposure(&loopback, None).unwrap());
        assert!(exposure(&anywhere, None).is_err());
        assert!(exposure(&anywhere, Some("http://x.example")).is_err());
        assert!(exposure(&anywhere, Some("https://x.example")).unwrap());
    }

    #[test]
    fn public_urls_are_bases() {
        assert_eq!(check_public_url("https://forge.example.com/").unwrap(), "https://forge.example.com");
        assert!(check_public_url("https://forge.example.com/mcp").is_err());
        assert!(check_public_url("https://a@forge.example.com").is_err());
        assert!(check_public_url("forge.example.com").is_err());
        assert!(check_public_url("https://forge.example.com?x=1").is_err());
    }
}
