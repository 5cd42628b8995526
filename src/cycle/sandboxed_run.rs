//! Running a profile's commands in the sandbox over a checkout, with the run's egress proxy
//! when a phase may reach the person's allowlist (design §5.6): what a PR's run and the base
//! layer's warming both do.

use std::path::Path;

use tokio::sync::watch;

use crate::domain::commands::CommandsProfile;
use crate::domain::egress::{self, Allowlist, NetworkEvent};
use crate::domain::test_results::RunResults;
use crate::domain::test_results::ids::Renames;
use crate::egress::EgressProxy;
use crate::error::{Error, Result};
use crate::runner::{self, RunOutcome, RunRequest};
use crate::sandbox::{self, Phase, ProxyAccess, RunPaths};

use super::context::Ctx;

/// What a sandboxed run produced.
pub(super) struct Ran {
    pub outcome: RunOutcome,
    /// What the test runners reported, per test command (issue 57).
    pub results: RunResults,
    pub network_log: Vec<NetworkEvent>,
    pub network_log_dropped: u64,
    /// The connections to destinations outside the sandbox the commands tried, as the
    /// sandbox recorded them (not the proxy's log: design §5.6).
    pub recorded: Vec<NetworkEvent>,
    /// The plan the commands ran under (with the checkout's object stores readable).
    pub plan: sandbox::Plan,
}

/// Where and how to run.
pub(super) struct Job<'a> {
    pub plan: &'a sandbox::Plan,
    pub allow: &'a Allowlist,
    pub commands: &'a CommandsProfile,
    pub tree: &'a Path,
    pub gitdir: &'a Path,
    pub log_path: &'a Path,
    /// The test files the change moved (none for the base's own run).
    pub moved: Renames,
    pub cancel: Option<watch::Receiver<bool>>,
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<runner::CommandStarted>>,
}

/// Runs `job.commands` in the sandbox with `paths`, into `job.log_path` (redacted).
pub(super) async fn run(ctx: &Ctx, job: Job<'_>, mut paths: RunPaths) -> Result<Ran> {
    let phases: Vec<Phase> =
        (!job.commands.setup.is_empty()).then_some(Phase::Setup).into_iter().chain([Phase::Test]).collect();
    let access: Vec<(Phase, ProxyAccess)> = phases.iter().map(|p| (*p, job.plan.proxy_access(*p))).collect();
    let proxy = access.iter().any(|(_, a)| *a != ProxyAccess::None).then(|| EgressProxy::start(job.allow.clone()));
    if let Some(proxy) = &proxy {
        // Second tier: a listener on the host's loopback per phase, the only TCP port Landlock
        // lets that phase's commands reach.
        for (phase, _) in access.iter().filter(|(_, a)| *a == ProxyAccess::HostLoopback) {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| Error::io("cannot listen for the run's egress proxy on 127.0.0.1", e))?;
            let addr = proxy.serve(listener, phase.as_str()).map_err(|e| Error::Invalid(e.to_string()))?;
            paths.proxy_ports.insert(phase.as_str().to_owned(), addr.port());
        }
    }
    let parent_env = runner::process_env();
    let mut request = RunRequest::new(job.tree, job.commands, job.log_path, &ctx.redactor, &parent_env);
    request.cancel = job.cancel;
    request.progress = job.progress;
    request.egress = proxy.as_ref();
    request.moved = job.moved;
    let plan = job.plan.for_checkout(job.gitdir);
    request.sandbox = Some((&plan, &paths));
    let ran = runner::run_with_results(request).await;
    let (network_log, network_log_dropped) = match proxy {
        Some(proxy) => {
            let log = proxy.log();
            let dropped = proxy.dropped_events();
            proxy.stop().await;
            (log, dropped)
        }
        None => (Vec::new(), 0),
    };
    let (outcome, results) = ran.map_err(Error::Runner)?;
    let recorded = outcome.tried.iter().map(recorded_event).collect();
    Ok(Ran { outcome, results, network_log, network_log_dropped, recorded, plan })
}

/// A recorded connection as the report's `network_log` shows it: refused, with the entry that
/// would allow it — none for an address that is not public, which only a person writes.
fn recorded_event(tried: &runner::Tried) -> NetworkEvent {
    let (ip, port) = (tried.addr.ip(), tried.addr.port());
    let refusal = egress::decide_addr(&Allowlist::default(), false, ip, port).err();
    let reason = refusal.as_ref().map_or_else(|| "outside the sandbox".to_owned(), |r| r.reason.clone());
    NetworkEvent {
        host: match ip {
            std::net::IpAddr::V4(v4) => v4.to_string(),
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        },
        port,
        allowed: false,
        reason: Some(format!("{RECORDED_BY_SANDBOX}: {reason}")),
        allow_with: refusal.as_ref().and_then(|r| r.allow_with.clone()),
        by_policy: refusal.and_then(|r| r.by_policy),
        address: None,
        error: None,
        bytes_up: 0,
        bytes_down: 0,
        phase: tried.phase.as_str().to_owned(),
    }
}

/// How a recorded connection's reason begins in the report.
const RECORDED_BY_SANDBOX: &str = "recorded by the sandbox, whose network mode has no way there";
