//! The remote tools (design §8.1): eight, each a thin wrapper over a use case (`cycle::connector`,
//! and `cycle::review::shared` for the reviews the person shares), acting
//! for the grant the HTTP layer checked (it travels in the request's extensions). Inputs refuse
//! unknown fields, so a caller cannot slip in commands, paths, profiles or a cap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cycle::Ctx;
use crate::cycle::connector::CyclePaths;
use crate::cycle::connector::{self, CycleAnswer, Seen, StartInput};
use crate::cycle::review::shared;
use crate::domain::connector::{CallRecord, Grant};
use crate::error::{Error, Result};
use crate::mcp::host::Host;

const INSTRUCTIONS: &str = "forgeloop tests your pull requests on the person's machine. \
list_repositories shows where you may work. start_cycle opens a cycle for one change; it waits until \
the person confirms its brief (call wait or cycle_status). Then open your PR and call test_pr with the \
cycle and the PR: forgeloop runs the person's own test profile on the PR's head, in a sandbox, and \
returns the redacted report. Read the failure, push a fix to the same PR, call test_pr again, until \
it passes or the cycle's iteration cap is reached. Nothing here merges; the person reviews. When the person \
shares a review of a change with you, get_review shows its packet's manifest and their decision on each finding.";

/// The grant a request was made with, put in its extensions by the HTTP layer.
#[derive(Debug, Clone)]
pub struct Authed(pub Grant);

/// What each grant was last told of each of its cycles, so `wait` answers `changed` against
/// what the client saw, not against the moment it called. Shared by every session of one
/// `serve` (a client may open a session per call); in memory: after a restart a client passes
/// `since`.
pub type SeenByGrant = Arc<Mutex<HashMap<(String, String), Seen>>>;

struct Shared {
    host: Host,
    seen: SeenByGrant,
}

/// The remote MCP server: one per session, sharing the context.
#[derive(Clone)]
pub struct RemoteServer {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
}

/// `cycle`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct CycleArg {
    /// A cycle this client started (its name, from start_cycle)
    pub cycle: String,
}

/// `start_cycle`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct StartArgs {
    /// OWNER/REPO, one of list_repositories
    pub repository: String,
    /// Goal: what the change is for
    pub goal: String,
    /// Success: how to tell it worked
    pub success: String,
    /// Scope / non-goals: what is in scope and what is not
    pub scope: String,
    /// Constraints: what must not be broken or used
    pub constraints: String,
    /// Validation: how the change is checked (the tests)
    pub validation: String,
    /// The question or task, as you would be asked it
    pub question: String,
}

/// `get_review`'s argument.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ReviewArg {
    /// A review cycle the person shared with you (its name, as they gave it)
    pub review: String,
}

/// `wait`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// A cycle this client started
    pub cycle: String,
    /// Seconds to wait for a change (1 to 60; default 30)
    pub timeout_seconds: Option<u64>,
    /// The status you last saw (a status word from an earlier answer): wait returns at once
    /// when the cycle's differs. Without it, the last status forgeloop told you
    pub since: Option<String>,
}

/// `test_pr`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct TestArgs {
    /// A cycle this client started
    pub cycle: String,
    /// The pull request in the cycle's repository: OWNER/REPO#N or its URL
    pub pr: String,
}

impl RemoteServer {
    /// A session's server acting in `ctx`, remembering what grants saw in `seen` (the whole
    /// `serve`'s).
    pub fn new(ctx: Ctx, seen: SeenByGrant) -> RemoteServer {
        RemoteServer { shared: Arc::new(Shared { host: Host::new(ctx), seen }), tool_router: Self::tool_router() }
    }

    fn ctx(&self) -> &Ctx {
        self.shared.host.ctx()
    }

    /// The grant of this request, read again (its cycles change, it may have been revoked).
    fn grant(&self, context: &RequestContext<RoleServer>) -> Result<Grant> {
        let authed = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Authed>())
            .ok_or_else(|| Error::Invalid("this request carries no grant".into()))?;
        let grants = connector::files(self.ctx()).load_grants().map_err(|e| Error::Invalid(e.to_string()))?;
        grants
            .get(&authed.0.id)
            .filter(|g| g.revoked.is_none())
            .cloned()
            .ok_or_else(|| Error::Invalid("the grant was revoked".into()))
    }

    fn cycle(&self, grant: &Grant, name: &str) -> Result<CyclePaths> {
        connector::cycle_of(self.ctx(), grant, name)
    }

    /// Remembers what `grant` was told of a cycle.
    fn saw(&self, grant: &Grant, answer: &CycleAnswer) {
        if let (Some(seen), Ok(mut map)) = (answer.seen(), self.shared.seen.lock()) {
            map.insert((grant.id.clone(), answer.cycle.clone()), seen);
        }
    }

    /// What `grant` was last told of `cycle`.
    fn last_seen(&self, grant: &Grant, cycle: &str) -> Option<Seen> {
        self.shared.seen.lock().ok()?.get(&(grant.id.clone(), cycle.to_owned())).copied()
    }

    /// One tool call: the request's grant (nothing runs without a valid one), the tool's body
    /// with it, and the answer journaled with the client's name and redacted.
    async fn call<'a, Fut>(
        &'a self,
        tool: &str,
        context: &RequestContext<RoleServer>,
        body: impl FnOnce(Grant) -> Fut,
    ) -> CallToolResult
    where
        Fut: std::future::Future<Output = Result<Value>> + 'a,
    {
        let grant = self.grant(context);
        let outcome = match &grant {
            Ok(granted) => body(granted.clone()).await,
            Err(e) => Err(Error::Invalid(e.to_string())),
        };
        let (value, failed) = match outcome {
            Ok(value) => (value, false),
            Err(err) => (err.document(), true),
        };
        if let Ok(grant) = &grant {
            let line = CallRecord::Tool {
                at: self.ctx().now(),
                grant: grant.id.clone(),
                client: grant.client_name.clone(),
                tool: tool.to_owned(),
                ok: !failed,
                // A tool's own status, else its cycle's (test_pr answers with the cycle):
                // status words, nothing the redactor would mask.
                status: value
                    .get("status")
                    .or_else(|| value.pointer("/cycle/status"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            if let Err(e) = connector::files(self.ctx()).journal(&line) {
                tracing::error!("cannot journal a connector call: {e}");
            }
        }
        self.shared.host.result(value, failed)
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| Error::Invalid(format!("cannot encode the answer: {e}")))
}

#[tool_router]
impl RemoteServer {
    #[tool(
        description = "The repositories you may work in (allowed by the person), each with the test profile test_pr runs there and what it runs (runs: setup and test commands as argv arrays, the tests' network); no profile means tests cannot run there yet.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_repositories(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        self.call("list_repositories", &context, |_| async {
            self.shared.host.blocking(|ctx| to_value(&json!({ "repositories": connector::repositories(ctx) }))).await?
        })
        .await
    }

    #[tool(
        description = "Start a cycle for one change in a repository: the brief's five fields and your question. The cycle waits for the person to confirm the brief in forgeloop's control room; this returns at once with the cycle's name. Then call wait or cycle_status until it is confirmed.",
        output_schema = super::schemas::cycle(),
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn start_cycle(
        &self,
        Parameters(args): Parameters<StartArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("start_cycle", &context, move |grant| async move {
            let owner = grant.clone();
            let answer = self
                .shared
                .host
                .blocking(move |ctx| {
                    let random = crate::serve::auth::random_token(6).map_err(Error::Invalid)?;
                    let input = StartInput {
                        repository: args.repository,
                        fields: [args.goal, args.success, args.scope, args.constraints, args.validation],
                        question: args.question,
                    };
                    connector::start_cycle(ctx, &owner, input, &random)
                })
                .await??;
            self.saw(&grant, &answer);
            to_value(&answer)
        })
        .await
    }

    #[tool(
        description = "A cycle's status, iteration k of N, its PR, and what it waits for.",
        output_schema = super::schemas::cycle(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn cycle_status(
        &self,
        Parameters(args): Parameters<CycleArg>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("cycle_status", &context, move |grant| async move {
            let paths = self.cycle(&grant, &args.cycle)?;
            let answer = self.shared.host.blocking(move |ctx| connector::status(ctx, &args.cycle, &paths)).await??;
            self.saw(&grant, &answer);
            to_value(&answer)
        })
        .await
    }

    #[tool(
        description = "Wait until the cycle differs from what you last saw (the last answer forgeloop gave you about it, or `since`): at once when it already does or when it waits for nothing from the person, else when it changes, or after timeout_seconds (1 to 60). Returns the cycle, `changed`, and the `since` it compared with.",
        output_schema = super::schemas::wait(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn wait(
        &self,
        Parameters(args): Parameters<WaitArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("wait", &context, move |grant| async move {
            let paths = self.cycle(&grant, &args.cycle)?;
            let secs = args.timeout_seconds.unwrap_or(30).clamp(1, 60);
            let since = match args.since.as_deref() {
                Some(word) => Some(Seen {
                    status: connector::parse_client_status(word).ok_or_else(|| {
                        Error::Invalid(format!(
                            "since {word:?} is not a status: pass a status word an earlier answer gave"
                        ))
                    })?,
                    iteration: None,
                }),
                None => self.last_seen(&grant, &args.cycle),
            };
            let answer = connector::wait(self.ctx(), &args.cycle, &paths, Duration::from_secs(secs), since).await?;
            self.saw(&grant, &answer.cycle);
            to_value(&answer)
        })
        .await
    }

    #[tool(
        description = "Test the PR of a cycle you started: forgeloop runs the person's test profile for the cycle's repository on the PR's head, in a sandbox, counting one iteration (up to the cap). Returns the redacted report (the end of the run's output, a pass's too, and `integrity`: what the PR did to its own tests); when it failed, the failure output and the handoff to act on.",
        output_schema = super::schemas::test_pr(),
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = true)
    )]
    async fn test_pr(
        &self,
        Parameters(args): Parameters<TestArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("test_pr", &context, move |grant| async move {
            let paths = self.cycle(&grant, &args.cycle)?;
            let github = self.shared.host.github().await?;
            let answer = connector::test_pr(&github.ctx, &github.engine, &args.cycle, &paths, &args.pr).await?;
            self.saw(&grant, &answer.cycle);
            Ok(super::answers::test_pr(&answer))
        })
        .await
    }

    #[tool(
        description = "What the last tested head changed since the run before (the whole PR after the first run): redacted, bounded.",
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn get_diff(
        &self,
        Parameters(args): Parameters<CycleArg>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("get_diff", &context, move |grant| async move {
            let paths = self.cycle(&grant, &args.cycle)?;
            let github = self.shared.host.github().await?;
            Ok(super::answers::diff(&connector::diff(&github.ctx, &github.engine, &paths).await?))
        })
        .await
    }

    #[tool(
        description = "The handoff of the cycle's last failed run: what to fix, as forgeloop would have typed it to you.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_handoff(
        &self,
        Parameters(args): Parameters<CycleArg>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("get_handoff", &context, move |grant| async move {
            let paths = self.cycle(&grant, &args.cycle)?;
            let text = self.shared.host.blocking(move |ctx| connector::handoff(ctx, &paths)).await??;
            Ok(super::answers::handoff(&text))
        })
        .await
    }

    #[tool(
        description = "A review the person shared with you (they run `forgeloop serve --share`): its status, the commit reviewed, whether your connector's reading of it was proven, the review packet's manifest (each file, its hash, why it is in or out, the redactions) and each finding with the person's decision (FIX, DEFER, DISMISS, QUESTION) and the PR that fixed it. Read only.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_review(
        &self,
        Parameters(args): Parameters<ReviewArg>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call("get_review", &context, move |grant| async move {
            let paths = shared::shared_with(self.ctx(), &grant, &args.review)?;
            let answer = self.shared.host.blocking(move |_| shared::answer(&args.review, &paths)).await??;
            Ok(super::answers::review(&answer))
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RemoteServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("forgeloop", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
