//! `forgeloop mcp` (design §8): a deliberately narrow MCP server on stdin/stdout, built on
//! rmcp. Tools read PRs and cycles, test a PR with a configured profile in an allowed
//! repository, and build handoff text; nothing merges, pushes, posts or runs caller-given
//! commands. Logs go to stderr; stdout carries only protocol messages.

pub mod framing;
pub mod host;
pub mod policy;
pub mod progress;
pub mod review_tools;
pub mod server;
pub mod tools;

use std::io::Write;
use std::sync::RwLock;
use std::time::Duration;

use crate::cycle::Ctx;
use crate::error::{Error, Result};
use crate::redact::Redactor;

pub use server::ForgeServer;

/// Serves until stdin ends; exit code 0 then.
pub fn run(ctx: Ctx) -> Result<i32> {
    init_logging(&ctx.redactor);
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
/// response it sends as a warning), always to stderr, every line through the redactor: the
/// process's at first, the one that knows the discovered token once GitHub is set up
/// ([`log_with`]).
pub(crate) fn init_logging(redactor: &Redactor) {
    let level = match std::env::var("FORGELOOP_LOG").unwrap_or_default().to_ascii_lowercase().as_str() {
        "warn" => tracing::Level::WARN,
        "info" => tracing::Level::INFO,
        "debug" => tracing::Level::DEBUG,
        "trace" => tracing::Level::TRACE,
        _ => tracing::Level::ERROR,
    };
    log_with(redactor);
    let _ = tracing_subscriber::fmt().with_writer(|| RedactingStderr).with_max_level(level).try_init();
}

/// The redactor log lines go through.
static LOG_REDACTOR: RwLock<Option<Redactor>> = RwLock::new(None);

/// Log lines from now on go through `redactor` (one that knows more secrets).
pub(crate) fn log_with(redactor: &Redactor) {
    if let Ok(mut slot) = LOG_REDACTOR.write() {
        *slot = Some(redactor.clone());
    }
}

/// stderr, redacted. The fmt layer writes each event as one formatted buffer, so every write
/// is whole lines and a secret is never split between two writes.
struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let redactor = LOG_REDACTOR.read().ok().and_then(|slot| slot.clone()).unwrap_or_default();
        std::io::stderr().lock().write_all(redactor.redact_lossy(buf).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
