//! What both MCP servers (`forgeloop mcp` on stdio, `forgeloop serve`'s remote connector)
//! hold the same way: the context, GitHub reached on first use, a tool's blocking body run off
//! the async workers, and its answer redacted with everything known so far.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::cycle::Ctx;
use crate::cycle::context::Engine;
use crate::error::{Error, Result};
use crate::redact::Redactor;

/// GitHub, once a tool needed it: the context with the discovered token in its redactor.
pub struct Github {
    /// The server's context, its redactor knowing the token.
    pub ctx: Ctx,
    /// The connected client.
    pub engine: Engine,
}

/// One server's context and GitHub cell.
pub struct Host {
    ctx: Ctx,
    github: OnceCell<Arc<Github>>,
}

impl Host {
    /// A host for `ctx`; GitHub is found on first use (finding the token may run `gh`).
    pub fn new(ctx: Ctx) -> Host {
        Host { ctx, github: OnceCell::new() }
    }

    /// The server's context (its redactor without the token until GitHub was reached).
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// GitHub, connecting on the first call.
    pub async fn github(&self) -> Result<Arc<Github>> {
        let github = self
            .github
            .get_or_try_init(|| async {
                let ctx = self.ctx.clone();
                let (engine, _) = Engine::discover(&ctx)?;
                Ok::<_, Error>(Arc::new(Github { ctx, engine }))
            })
            .await?;
        Ok(github.clone())
    }

    /// The redactor that knows the most secrets so far (the discovered token once known).
    pub fn redactor(&self) -> Redactor {
        match self.github.get() {
            Some(github) => github.ctx.redactor.clone(),
            None => self.ctx.redactor.clone(),
        }
    }

    /// Runs `body` off the async workers; `Err` only when it could not finish (it panicked).
    pub async fn blocking<R: Send + 'static>(&self, body: impl FnOnce(&Ctx) -> R + Send + 'static) -> Result<R> {
        let ctx = self.ctx.clone();
        tokio::task::spawn_blocking(move || body(&ctx))
            .await
            .map_err(|e| Error::Invalid(format!("the tool failed: {e}")))
    }

    /// A tool's document as its MCP result, redacted; `failed` flags it `isError`.
    pub fn result(&self, mut value: Value, failed: bool) -> CallToolResult {
        self.redactor().redact_json(&mut value);
        tool_result(value, failed)
    }
}

/// A tool's document, already redacted, as its MCP result: pretty text and, for an object,
/// structured content; `failed` flags it `isError`.
fn tool_result(value: serde_json::Value, failed: bool) -> CallToolResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    let mut result = if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    if value.is_object() {
        result.structured_content = Some(value);
    }
    result
}
