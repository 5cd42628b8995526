//! What commands that talk to GitHub share: a tokio runtime, the discovered token (which
//! the redactor then masks everywhere), the client, and Ctrl-C turned into a clean cancel.

use tokio::runtime::Runtime;
use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::cycle::pr_test::Engine;
use crate::error::{Error, Result};
use crate::github::{token, web_host_for};

pub struct Net {
    pub runtime: Runtime,
    pub engine: Engine,
    /// Where the token came from (`GH_TOKEN`, `gh auth token`, …), for `doctor`.
    pub token_source: Option<&'static str>,
}

pub fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))
}

/// Discovers the token, adds it to the redactor, and builds the client.
pub fn connect(ctx: &mut Ctx) -> Result<Net> {
    let runtime = runtime()?;
    let web_host = web_host_for(&ctx.github_api)?;
    let found = token::discover(&|name| std::env::var(name).ok(), &web_host, ctx.config.github.token_command.as_deref());
    let token_source = found.as_ref().map(|t| t.source);
    let token = found.map(|t| t.value);
    if let Some(value) = &token {
        ctx.redactor = super::redactor_with_token(Some(value));
    }
    let engine = {
        let _entered = runtime.enter();
        Engine::connect(&ctx.github_api, token)?
    };
    Ok(Net { runtime, engine, token_source })
}

/// A cancel channel that fires on Ctrl-C or SIGTERM, so a running test's process group is
/// stopped (it no longer shares our terminal's process group).
pub fn cancel_on_signals(runtime: &Runtime) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    runtime.spawn(async move {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
        }
        let _ = tx.send(true);
    });
    rx
}
