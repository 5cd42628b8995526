//! The MCP tool surface (design §8): each tool a thin wrapper over a use case. Every
//! result and every error message is redacted; tool failures are results with `isError`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, ErrorCode, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio::sync::{Notify, watch};

use crate::cycle::Ctx;
use crate::cycle::pr_status::pr_status;
use crate::cycle::pr_test::{self, OneShot, RunOptions, TestGate, forge_pr, test_once};
use crate::cycle::projects::Registry;
use crate::cycle::reply::{PullHead, pull_head};
use crate::domain::commands::CommandsProfile;
use crate::domain::pr_ref::{PrRef, parse_pr_ref};
use crate::domain::state::Actor;
use crate::domain::word::Word;
use crate::error::Error;
use crate::redact::Redactor;

use super::host::{Github, Host};

use super::policy::Policy;
use super::progress::{self, Reporter};
use super::review_tools::{
    self, AttestAnswerInput, AttestInput, PrepareInput, ReviewReplyInput, ReviewStartInput, TriageInput,
};
use super::tools::{
    self, AttachInput, BindInput, BlockInput, CycleInput, CycleTestInput, DiffInput, Failure, HandoffInput, Outcome,
    PrInput, PrTestInput, ReplyInput, RepositoryInput, StartInput, StateInput,
};

const INSTRUCTIONS: &str = "forgeloop: the WebGPT pull-request loop. webgpt_pr_status reads a PR; \
webgpt_pr_test tests a PR's head SHA in an isolated checkout with a test profile from the forgeloop \
config (only repositories bound in the Project registry or allowed in config; it never posts comments); \
webgpt_pr_handoff turns a failed report into the text to send WebGPT; forge_cycles, forge_cycle and \
forge_next read the cycles on this machine; forge_diff shows what a cycle's PR changed (redacted). \
The relay loop: forge_start (a person confirms the brief), then repeat forge_next and do what it says: \
send its text in the ChatGPT chat and call forge_sent, give WebGPT's reply to forge_reply, run the \
tests with forge_test (a configured profile the first time; it posts the result comment); on \
wait_for_human tell the person and ask forge_next again later; when the chat cannot go on (the model \
or the connector is not available) forge_block with the reason; stop on stop or done. \
Review cycles (forge_review_start, then forge_next as above): WebGPT reviews a change; the connector is proven with a challenge or the change goes as a DLP-checked packet; findings are triaged with the person's decisions. \
Nothing here merges, pushes, runs caller-given commands, confirms a brief, approves, unblocks, raises the cap or lets a packet leave the machine.";

/// How many test runs are in flight, so shutdown can wait for their process groups to go.
#[derive(Default)]
struct Runs {
    active: AtomicUsize,
    idle: Notify,
}

struct RunGuard(Arc<Shared>);

impl Drop for RunGuard {
    fn drop(&mut self) {
        if self.0.runs.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.runs.idle.notify_waiters();
        }
    }
}

/// A test run that passed every check: what it runs, with what, and how it reports.
struct PreparedRun {
    commands: CommandsProfile,
    github: Arc<Github>,
    reporter: Reporter,
    total: f64,
    cancel: watch::Receiver<bool>,
    /// Counts the run as in flight until it is dropped.
    _guard: RunGuard,
}

struct Shared {
    host: Host,
    policy: Policy,
    runs: Runs,
    /// Fires when the client is gone (stdin EOF): every run is cancelled at once.
    shutdown: watch::Sender<bool>,
}

/// The MCP server's tools (design §8), sharing one context, policy and GitHub client.
#[derive(Clone)]
pub struct ForgeServer {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
}

impl ForgeServer {
    /// A server for `ctx`, its `webgpt_pr_test` description naming the configured profiles.
    pub fn new(ctx: Ctx) -> ForgeServer {
        let policy = Policy::new(&ctx.config.mcp, Registry::new(ctx.registry.clone()));
        let names = policy.profile_names();
        let mut tool_router = Self::tool_router();
        let configured =
            if names.is_empty() { "none (add [mcp.profiles.NAME] to the config)".to_owned() } else { names.join(", ") };
        for tool in ["webgpt_pr_test", "forge_test"] {
            if let Some(route) = tool_router.map.get_mut(tool) {
                let description =
                    format!("{} Configured profiles: {configured}.", route.attr.description.as_deref().unwrap_or(""));
                route.attr.description = Some(description.into());
            }
        }
        let shared = Shared { host: Host::new(ctx), policy, runs: Runs::default(), shutdown: watch::channel(false).0 };
        ForgeServer { shared: Arc::new(shared), tool_router }
    }

    /// Cancels every test run (their process groups are killed) and waits, at most
    /// `grace`, for them to finish.
    pub async fn shut_down(&self, grace: Duration) {
        let _ = self.shared.shutdown.send(true);
        let idle = async {
            loop {
                let notified = self.shared.runs.idle.notified();
                if self.shared.runs.active.load(Ordering::SeqCst) == 0 {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(grace, idle).await;
    }

    /// The redactor that knows the most secrets so far (the discovered token once known).
    fn redactor(&self) -> Redactor {
        self.shared.host.redactor()
    }

    async fn github(&self) -> Result<Arc<Github>, Failure> {
        self.shared.host.github().await.map_err(Failure::from)
    }

    fn pr(&self, text: &str) -> Result<PrRef, Failure> {
        parse_pr_ref(text, &self.shared.host.ctx().hosts).map_err(|e| Failure::from(Error::from(e)))
    }

    /// Runs a blocking read-only body off the async workers.
    async fn blocking(&self, body: impl FnOnce(&Ctx) -> Outcome + Send + 'static) -> Outcome {
        self.shared.host.blocking(body).await.unwrap_or_else(|e| Err(Failure::from(e)))
    }

    fn finish(&self, outcome: Outcome) -> CallToolResult {
        match outcome {
            Ok(value) => self.result(value, false),
            Err(failure) => self.result(failure.document(), true),
        }
    }

    /// A tool's document as its result, redacted; `failed` flags it `isError`.
    fn result(&self, value: serde_json::Value, failed: bool) -> CallToolResult {
        self.shared.host.result(value, failed)
    }

    /// The checks of a test run that need no network, made before any GitHub request: the PR
    /// reference, the configured profile, the repository.
    fn check_locally(&self, pr_text: &str, profile: &str) -> Result<(PrRef, CommandsProfile), Failure> {
        let pr = self.pr(pr_text)?;
        let commands = self.shared.policy.profile(profile, &self.redactor())?;
        self.shared.policy.repository(&pr.repo)?;
        Ok((pr, commands))
    }

    /// A cycle's test without a profile: the commands the cycle stored (a profile's, or the
    /// person's correction), never the caller's; the first run needs a profile.
    fn check_stored(
        &self,
        pr_text: &str,
        stored: Option<CommandsProfile>,
    ) -> Result<(PrRef, CommandsProfile), Failure> {
        let pr = self.pr(pr_text)?;
        let commands = stored.ok_or_else(|| {
            Failure::from(Error::Invalid(
                "the cycle has no stored commands yet: the first forge_test names a profile".into(),
            ))
        })?;
        self.shared.policy.repository(&pr.repo)?;
        Ok((pr, commands))
    }

    /// The checks of a test run that ask GitHub, after [`Self::check_locally`]: the PR's
    /// metadata, its repository again (renamed or transferred) and its head repository.
    /// Reports the first two progress steps.
    async fn prepare_run(
        &self,
        (pr, commands): (PrRef, CommandsProfile),
        context: &RequestContext<RoleServer>,
    ) -> Result<PreparedRun, Failure> {
        let guard = {
            self.shared.runs.active.fetch_add(1, Ordering::SeqCst);
            RunGuard(self.shared.clone())
        };
        let cancel = self.cancel_channel(context);
        let github = self.github().await?;
        let reporter =
            Reporter::new(context.peer.clone(), context.meta.get_progress_token(), github.ctx.redactor.clone());
        // Resolving, fetching (or waiting for CI), then one step per command; a wait for CI
        // is one step its progress lines creep through.
        let total = commands.commands.len().max(1) as f64 + 2.0;
        reporter.report(0.0, total, &format!("resolving {pr}")).await;
        let pull = github.engine.github.pull_request(&pr.repo, pr.number).await.map_err(Error::from)?;
        if !pull.repository.same_as(&pr.repo) {
            // GitHub answered for another repository (renamed or transferred).
            self.shared.policy.repository(&pull.repository)?;
        }
        self.shared.policy.head(&pr.shorthand(), &pull.repository, pull.head_repository.as_ref())?;
        if *cancel.borrow() {
            return Err(Failure::new(Word::Cancelled, "the run was cancelled before it started"));
        }

        let sha12 = pull.head_sha.get(..12).unwrap_or(&pull.head_sha).to_owned();
        let step = match commands.executor {
            crate::domain::commands::Executor::Local => format!("fetching {sha12} and checking it out"),
            crate::domain::commands::Executor::GithubChecks => {
                format!("waiting for the repository's CI on {sha12} (nothing runs here)")
            }
        };
        reporter.report(1.0, total, &step).await;
        Ok(PreparedRun { commands, github, reporter, total, cancel, _guard: guard })
    }

    async fn run_test(&self, input: PrTestInput, context: RequestContext<RoleServer>) -> Outcome {
        // Every refusal is decided here, before any network call.
        let checked = self.check_locally(&input.pr, &input.profile)?;
        let run = self.prepare_run(checked, &context).await?;
        let (progress_tx, progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let follower = tokio::spawn(progress::forward(progress_rx, run.reporter.clone(), 2.0, run.total));
        let request = OneShot {
            pr: input.pr.clone(),
            commands: run.commands.clone(),
            post_comment: false,
            submodules: false,
            keep_checkout: false,
            fresh: false,
            cancel: Some(run.cancel.clone()),
            progress: run.reporter.wanted().then_some(progress_tx),
        };
        let result = test_once(&run.github.ctx, &run.github.engine, request).await;
        // The sender is gone with `request`: the forwarder drains what is left and ends.
        let _ = follower.await;
        let report = result?;
        run.reporter.report(run.total, run.total, &format!("finished: {}", report.status.as_str())).await;
        serde_json::to_value(&report).map_err(|e| Failure::new(Word::Blocked, format!("cannot encode the report: {e}")))
    }

    /// `forge_test`: `forge --pr` on a known cycle with a configured profile, as the agent.
    /// The document is what the CLI prints; `true` when the cycle ended up blocked (the CLI's
    /// exit 2), which the result flags as an error.
    async fn run_cycle_test(
        &self,
        input: CycleTestInput,
        context: RequestContext<RoleServer>,
    ) -> Result<(serde_json::Value, bool), Failure> {
        // Every refusal is decided before any network call: the cycle, the policy, then what
        // `forge_pr` decides first (status, binding, cap).
        let (ctx, state, pr) = (self.shared.host.ctx().clone(), input.state.clone(), input.pr.clone());
        let (paths, gate, stored) = tokio::task::spawn_blocking(move || {
            let path = tools::known_cycle(&ctx, Some(state), None)?;
            let paths = crate::cycle::files::CyclePaths::new(path).map_err(Error::from)?;
            let gate = pr_test::gate(&ctx, &paths, &pr, false)?;
            let stored = crate::cycle::files::load_state(&paths.state).map_err(Error::from)?.commands;
            Ok::<_, Failure>((paths, gate, stored))
        })
        .await
        .map_err(|e| Failure::new(Word::Blocked, e.to_string()))??;
        let checked = match input.profile.as_deref() {
            Some(profile) => self.check_locally(&input.pr, profile)?,
            None => self.check_stored(&input.pr, stored)?,
        };
        if gate == TestGate::CapReached {
            // `forge_pr` records the block and asks GitHub nothing.
            let github = self.github().await?;
            let outcome =
                forge_pr(&github.ctx, &github.engine, &paths, RunOptions::new(input.pr.clone(), Actor::Agent)).await?;
            return Ok((outcome.document(&github.ctx, &paths)?, outcome.blocked()));
        }
        let run = self.prepare_run(checked, &context).await?;
        let (progress_tx, progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let follower = tokio::spawn(progress::forward(progress_rx, run.reporter.clone(), 2.0, run.total));
        let mut opts = RunOptions::new(input.pr.clone(), Actor::Agent);
        opts.commands = Some(run.commands.clone());
        opts.post_comment = input.post_comment.unwrap_or(true);
        opts.cancel = Some(run.cancel.clone());
        opts.progress = run.reporter.wanted().then_some(progress_tx);
        let result = forge_pr(&run.github.ctx, &run.github.engine, &paths, opts).await;
        let _ = follower.await;
        let outcome = result?;
        let finished = match &outcome.report {
            Some(report) if outcome.already_tested.is_none() => report.status.as_str().to_owned(),
            _ => outcome.saved.state.status.as_str().to_owned(),
        };
        run.reporter.report(run.total, run.total, &format!("finished: {finished}")).await;
        Ok((outcome.document(&run.github.ctx, &paths)?, outcome.blocked()))
    }

    /// A look at a PR's head for `next` and `reply`, run on a blocking thread (the use cases
    /// are synchronous): the server's GitHub client, discovered on first use.
    fn head_lookup(&self) -> impl Fn(&PrRef) -> Result<PullHead, String> + Send + 'static {
        let server = self.clone();
        let handle = tokio::runtime::Handle::current();
        move |pr: &PrRef| {
            handle.block_on(async {
                let github = server.github().await.map_err(|f| f.message)?;
                pull_head(&github.engine, pr).await.map_err(|e| e.to_string())
            })
        }
    }

    /// A cancel channel for the runner that fires on the client's `notifications/cancelled`
    /// for this request or when the server shuts down.
    fn cancel_channel(&self, context: &RequestContext<RoleServer>) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        let ct = context.ct.clone();
        let mut shutdown = self.shared.shutdown.subscribe();
        tokio::spawn(async move {
            let server_gone = async {
                if shutdown.wait_for(|gone| *gone).await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = ct.cancelled() => {}
                _ = server_gone => {}
                // The run ended and dropped its receiver: nothing left to cancel.
                _ = tx.closed() => return,
            }
            let _ = tx.send(true);
        });
        rx
    }
}

#[tool_router]
impl ForgeServer {
    #[tool(
        description = "Read a pull request: title, URL, state (open/closed/merged), draft, base and head refs, head SHA, head repository, and the check-run summary of the head SHA.",
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn webgpt_pr_status(&self, Parameters(input): Parameters<PrInput>) -> CallToolResult {
        let outcome = async {
            let pr = self.pr(&input.pr)?;
            let github = self.github().await?;
            let status = pr_status(&github.engine, &pr).await?;
            serde_json::to_value(&status).map_err(|e| Failure::new(Word::Blocked, e.to_string()))
        }
        .await;
        self.finish(outcome)
    }

    #[tool(
        description = "Test a pull request's head SHA once, in an isolated checkout, with a test profile from the forgeloop config (never caller-given commands). Only repositories bound in the Project registry or listed in config mcp.allowed_repositories, and only PRs whose code comes from such a repository. Never posts a comment. Returns the test report; send progressToken for progress, cancel to stop the run.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = true)
    )]
    async fn webgpt_pr_test(
        &self,
        Parameters(input): Parameters<PrTestInput>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let outcome = self.run_test(input, context).await;
        self.finish(outcome)
    }

    #[tool(
        description = "The text to send WebGPT after a failed test report (the report's comment plus the PR_URL request), as `forgeloop iterate` prints it. A report without comment_markdown (the reference tool's shape) gets the comment built from status, repository, pull_request, head_sha, commands and failure_output. A passing report, or one missing those fields, is an error.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn webgpt_pr_handoff(&self, Parameters(input): Parameters<HandoffInput>) -> CallToolResult {
        self.finish(tools::handoff(input))
    }

    #[tool(
        description = "Every known forgeloop cycle (as `forgeloop list`): state path, status, task space, repository, PR, iteration and cap, whether a person is needed.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn forge_cycles(&self) -> CallToolResult {
        let outcome = self.blocking(tools::cycles).await;
        self.finish(outcome)
    }

    #[tool(
        description = "One cycle's state document, by state (name or path from forge_cycles) or task_space.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn forge_cycle(&self, Parameters(input): Parameters<CycleInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::cycle(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "What a cycle's PR changed at its last tested head (redacted unified diff, the files with +/- counts, masked spots), or with since_last the change from the previous tested head: what came back in answer to the handoff.",
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn forge_diff(&self, Parameters(input): Parameters<DiffInput>) -> CallToolResult {
        let outcome = async {
            let ctx = self.shared.host.ctx().clone();
            let (state, task_space) = (input.state.clone(), input.task_space.clone());
            let path = tokio::task::spawn_blocking(move || tools::known_cycle(&ctx, state, task_space))
                .await
                .map_err(|e| Failure::new(Word::Blocked, e.to_string()))??;
            let paths = crate::cycle::files::CyclePaths::new(path).map_err(Error::from)?;
            let github = self.github().await?;
            let view =
                crate::cycle::diff::of_cycle(&github.ctx, &github.engine, &paths, None, input.since_last).await?;
            let mut doc = serde_json::to_value(&view).map_err(|e| Failure::new(Word::Blocked, e.to_string()))?;
            doc["diff"] = serde_json::Value::String(view.text);
            Ok(doc)
        }
        .await;
        self.finish(outcome)
    }

    #[tool(
        description = "A cycle's single next action (as `forgeloop next`): what to send, what to run, or why to stop. By state or task_space. When the step is to test again the PR whose last run failed, its head is looked at on GitHub (head_check).",
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn forge_next(&self, Parameters(input): Parameters<CycleInput>) -> CallToolResult {
        let lookup = self.head_lookup();
        let outcome = self.blocking(move |ctx| tools::next(ctx, &input, Some(&lookup))).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Start a cycle (as `forgeloop forge --request … --await-confirmation`): the request, the question for WebGPT and the five-field brief (Goal, Success, Scope / non-goals, Constraints, Validation) as agreed with the user, under a bare name in the cycles directory. It always waits for a person to confirm the brief (forgeloop tui, or forgeloop confirm on a terminal): nothing here confirms it. The cap is forgeloop's default; only a person raises it. Returns the new cycle's state.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_start(&self, Parameters(input): Parameters<StartInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::start(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "The ChatGPT Project linked to a repository (as `forgeloop project lookup`): PROJECT_LINKED with its URL and name, or PROJECT_NOT_LINKED with next_action, what to search for in the browser before binding one.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn project_lookup(&self, Parameters(input): Parameters<RepositoryInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::project_lookup(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Record the Project you saw in the browser for a repository (as `forgeloop project bind`): its home URL (https://chatgpt.com/g/g-p-ID/project) and name, checked as the CLI checks them. A repository bound to another Project is refused, never overwritten; nothing here unbinds.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn project_bind(&self, Parameters(input): Parameters<BindInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::project_bind(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Put the repository's Project into a cycle (as `forgeloop project attach`), and once the prompt was sent the conversation's URL (conversation_url), so forge_next names the chat to use. Only cycles forge_cycles lists.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn project_attach(&self, Parameters(input): Parameters<AttachInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::project_attach(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "What this server may test and how: each test profile the person configured with what it runs (setup and test commands as argv arrays, the tests' network mode, setup's network, the timeout) and the repositories it may test (bound in the Project registry or listed in config mcp.allowed_repositories). Read it before the first forge_test to pick the profile that runs the project's tests.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn forge_profiles(&self) -> CallToolResult {
        let policy = self.shared.policy.clone();
        let outcome = self.blocking(move |_| Ok(policy.describe())).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Stop the cycle for a reason the runbook names (as `forgeloop block`): the model or the connector is not available in the chat, the Project or its sources are missing, no PR came. The status is a BLOCKED_* word and the reason is journaled for the person, who lifts it (`forgeloop unblock` or the control room). Never BLOCKED_MAX_ITERATIONS: the cap is forgeloop's. Returns the cycle's state.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_block(&self, Parameters(input): Parameters<BlockInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::block(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "The message forge_next said to send was typed into the ChatGPT chat (as `forgeloop sent`). A second call for the same message is refused with ALREADY_SENT. Returns the cycle's state.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_sent(&self, Parameters(input): Parameters<StateInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| tools::sent(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Record WebGPT's finished reply (as `forgeloop reply`): classified as PR_FOUND, PR_UNCHANGED, PR_NOT_CREATED, CONNECTOR_DENIED, PR_WRONG_REPOSITORY or NO_PR_REFERENCE (status), with cycle_status, head_check and next. `as` with `reason` (and `pr` for PR_FOUND) corrects a wrong classification, journaled.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn forge_reply(&self, Parameters(input): Parameters<ReplyInput>) -> CallToolResult {
        let lookup = self.head_lookup();
        let outcome = self.blocking(move |ctx| tools::reply(ctx, input, Some(&lookup))).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Test the cycle's PR and advance the cycle (as `forgeloop forge --pr … --state … --post-comment`), with a test profile from the forgeloop config (never caller-given commands; left out after the first run, the cycle's stored commands): only repositories bound in the Project registry or listed in config mcp.allowed_repositories, within the cycle's iteration cap, journaled as the agent. Posts the result comment on the PR unless post_comment is false. Returns the cycle's state (report.status is the verdict; a failure's handoff is in the outbox: forge_next), or ALREADY_TESTED; an error when the cycle ends up blocked. Send progressToken for progress, cancel to stop the run.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn forge_test(
        &self,
        Parameters(input): Parameters<CycleTestInput>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        match self.run_cycle_test(input, context).await {
            Ok((document, blocked)) => self.result(document, blocked),
            Err(failure) => self.result(failure.document(), true),
        }
    }

    #[tool(
        description = "Start a review cycle (as `forgeloop review start`): WebGPT reviews a change someone else wrote. Give pr, or repository with range BASE..HEAD; the change is fetched into forgeloop's mirror and the cycle is bound to its two commits. Then repeat forge_next: attest the connector (forge_attest), send the challenge, check its answer (forge_attest_answer); without a proven connector make the packet (forge_review_prepare, dry_run first), which waits for the person's yes in a terminal or the control room; record the reply (forge_review_reply); triage with the person's decisions (forge_triage).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn forge_review_start(&self, Parameters(input): Parameters<ReviewStartInput>) -> CallToolResult {
        let outcome = async {
            let change = review_tools::change(&input)?;
            let github = self.github().await?;
            let req = crate::cycle::review::StartReview {
                state: input.state.clone(),
                change,
                question: input.question.clone(),
            };
            let started = crate::cycle::review::start(&github.ctx, &github.engine, req).await?;
            tools::to_value(&started.state)
        }
        .await;
        self.finish(outcome)
    }

    #[tool(
        description = "Record what the browser shows for a review cycle's conversation (as `forgeloop attest`): the model picker's text, the reasoning mode, whether the GitHub connector is attached, the conversation URL. Returns the challenge to send (questions only a reader of the reviewed commit can answer) and its expiry; without a connector the review goes to the packet at once.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_attest(&self, Parameters(input): Parameters<AttestInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| review_tools::attest(ctx, input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Check the chat's answer to a review's challenge against the commit in forgeloop's mirror (as `forgeloop attest --answer`), with the URL of the conversation it was read in. Valid only for that conversation, mode, repository and commit, until it expires: the route is then CONNECTOR, else LOCAL_BUNDLE. Returns the verdict and each answer's judgement (never the expected answers).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_attest_answer(&self, Parameters(input): Parameters<AttestAnswerInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| review_tools::answer(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "The review packet for a chat whose connector is not proven (as `forgeloop review prepare`): with dry_run, each changed file in or out and why, bytes, a token estimate and the risks (secrets masked, files the DLP rules keep out, binary or generated files, links outside the change); without, the packet and its manifest are written and the request that carries it is issued, or it waits for the person's yes (the first packet for a repository, or any with risks).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_review_prepare(&self, Parameters(input): Parameters<PrepareInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| review_tools::prepare(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Record the reviewer's whole reply (as `forgeloop review reply`): its `FINDING n: [severity] path:line — text` lines become findings that wait for triage; what cannot be read as one is kept and named.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_review_reply(&self, Parameters(input): Parameters<ReviewReplyInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| review_tools::reply(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "Decide a review finding with the person's decision and words (as `forgeloop triage`, journaled as the agent): FIX, DEFER, DISMISS, or QUESTION with the question as note (it becomes the next message to the chat). Returns the review.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn forge_triage(&self, Parameters(input): Parameters<TriageInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| review_tools::triage(ctx, &input)).await;
        self.finish(outcome)
    }

    #[tool(
        description = "A review cycle's review (as `forgeloop review show`): target commits, route, attestation, packet, findings with their triage, and the FIX findings as one request.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn forge_review(&self, Parameters(input): Parameters<StateInput>) -> CallToolResult {
        let outcome = self.blocking(move |ctx| review_tools::show(ctx, &input.state)).await;
        self.finish(outcome)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ForgeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("forgeloop", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tool_router.has_route(&request.name) {
            let mut names: Vec<String> = self.tool_router.list_all().into_iter().map(|t| t.name.into_owned()).collect();
            names.sort();
            let message = format!("unknown tool {:?}; the tools are: {}", request.name, names.join(", "));
            return Err(ErrorData::invalid_params(self.redactor().redact(&message).into_owned(), None));
        }
        self.tool_router.call(ToolCallContext::new(self, request, context)).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let message = format!("Method not found: {}", request.method);
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, self.redactor().redact(&message).into_owned(), None))
    }
}
