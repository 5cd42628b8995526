//! What commands that talk to GitHub share: a tokio runtime, the discovered token (which
//! the redactor then masks everywhere), the client, and Ctrl-C turned into a clean cancel.

use tokio::runtime::Runtime;
use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::cycle::pr_test::Engine;
use crate::cycle::reply::PullHead;
use crate::domain::pr_ref::PrRef;
use crate::error::{Error, Result};

pub(crate) struct Net {
    pub runtime: Runtime,
    pub engine: Engine,
}

pub(crate) fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))
}

/// Builds the client with the context's token. No token is `NO_TOKEN` at once: nothing is
/// asked of GitHub and nothing is recorded.
pub(crate) fn connect(ctx: &Ctx) -> Result<Net> {
    let runtime = runtime()?;
    let (engine, _source) = {
        let _entered = runtime.enter();
        Engine::discover(ctx)?
    };
    Ok(Net { runtime, engine })
}

/// A client without a token, for what may need no GitHub at all (a diff the mirror holds).
pub(crate) fn connect_without_token(ctx: &Ctx) -> Result<Net> {
    let runtime = runtime()?;
    let engine = {
        let _entered = runtime.enter();
        Engine::connect(&ctx.github_api, None)?
    };
    Ok(Net { runtime, engine })
}

/// A cancel channel that fires on Ctrl-C or SIGTERM, so a running test's process group is
/// stopped (it no longer shares our terminal's process group).
pub(crate) fn cancel_on_signals(runtime: &Runtime) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    runtime.spawn(async move {
        crate::signals::interrupted().await;
        let _ = tx.send(true);
    });
    rx
}

/// The head of `pr` on GitHub, for `reply` and `next` (their one question to it); why it could
/// not be read otherwise (no token, offline), in words for the output.
pub(crate) fn pull_head(ctx: &Ctx, pr: &PrRef) -> std::result::Result<PullHead, String> {
    let net = connect(ctx).map_err(|e| e.to_string())?;
    if net.engine.token.is_none() {
        return Err("no GitHub token (GH_TOKEN, GITHUB_TOKEN, `gh auth token` or [github] token_command; see `forgeloop doctor`)".into());
    }
    net.runtime.block_on(crate::cycle::reply::pull_head(&net.engine, pr)).map_err(|e| e.to_string())
}
