//! Running a profile's commands in the sandbox over a checkout, with the run's egress proxy
//! when a phase may reach the person's allowlist (design §5.6): what a PR's run and the base
//! layer's warming both do.

use std::path::Path;

use tokio::sync::watch;

use crate::domain::commands::CommandsProfile;
use crate::domain::egress::{Allowlist, NetworkEvent};
use crate::egress::EgressProxy;
use crate::error::{Error, Result};
use crate::runner::{self, RunOutcome, RunRequest};
use crate::sandbox::{self, Phase, ProxyAccess, RunPaths};

use super::context::Ctx;

/// What a sandboxed run produced.
pub(super) struct Ran {
    pub outcome: RunOutcome,
    pub network_log: Vec<NetworkEvent>,
    pub network_log_dropped: u64,
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
    let plan = job.plan.for_checkout(job.gitdir);
    request.sandbox = Some((&plan, &paths));
    let ran = runner::run(request).await;
    let (network_log, network_log_dropped) = match proxy {
        Some(proxy) => {
            let log = proxy.log();
            let dropped = proxy.dropped_events();
            proxy.stop().await;
            (log, dropped)
        }
        None => (Vec::new(), 0),
    };
    let outcome = ran.map_err(Error::Runner)?;
    Ok(Ran { outcome, network_log, network_log_dropped, plan })
}
