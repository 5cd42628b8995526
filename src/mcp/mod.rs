//! `forgeloop mcp` (design §8): a deliberately narrow MCP server on stdin/stdout, built on
//! rmcp. Tools read PRs and cycles, test a PR with a configured profile in an allowed
//! repository, and build handoff text; nothing merges, pushes, posts or runs caller-given
//! commands. Logs go to stderr; stdout carries only protocol messages.

pub mod framing;
pub mod policy;
pub mod progress;
pub mod server;
pub mod tools;

use std::time::Duration;

use crate::cycle::Ctx;
use crate::error::{Error, Result};

pub use server::ForgeServer;

/// Serves until stdin ends; exit code 0 then.
pub fn run(ctx: Ctx) -> Result<i32> {
    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the MCP server's async runtime", e))?;
    let redactor = ctx.redactor.clone();
    let server = ForgeServer::new(ctx);
    let served = runtime.block_on(async {
        let (input, output) = rmcp::transport::io::stdio_pipes();
        framing::serve(input, output, server, redactor).await
    });
    // A blocking stdin read (stdin not a pipe) cannot be interrupted; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(500));
    served.map_err(|e| Error::io("the MCP server's standard input failed", e))?;
    Ok(0)
}

/// `FORGELOOP_LOG=error|warn|info|debug|trace` (default error: rmcp logs every error
/// response it sends as a warning), always to stderr.
fn init_logging() {
    let level = match std::env::var("FORGELOOP_LOG").unwrap_or_default().to_ascii_lowercase().as_str() {
        "warn" => tracing::Level::WARN,
        "info" => tracing::Level::INFO,
        "debug" => tracing::Level::DEBUG,
        "trace" => tracing::Level::TRACE,
        _ => tracing::Level::ERROR,
    };
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).try_init();
}
