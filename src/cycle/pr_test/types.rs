//! What the files of a PR test share, and nothing else: how a run is asked to go
//! ([`RunSettings`]), what it produced before anything is recorded ([`Executed`],
//! [`Completed`], [`Conflict`]), and where it is recorded ([`Pass`], [`LiveRun`]). A leaf: it
//! names none of its siblings.

use std::path::PathBuf;
use std::time::Instant;

use tokio::sync::watch;

use crate::checkout;
use crate::domain::commands::{CommandsProfile, Executor};
use crate::domain::egress::NetworkEvent;
use crate::domain::needs_network::NeedsNetwork;
use crate::domain::pr_ref::PrRef;
use crate::domain::report::BaselineUsed;
use crate::domain::report::{CheckResult, Environment, SandboxInfo};
use crate::domain::state::{Actor, CycleState};
use crate::domain::test_results::{Evidence, RunResults, Tripwire};
use crate::runner::{CommandStarted, RunOutcome};
use crate::store::layout::CyclePaths;

use super::super::context::Ctx;

/// What a run does beyond testing the head with the commands: the part of `RunOptions` (or of
/// a one-shot test) the checkout, the cache and the commands read.
pub(super) struct RunSettings {
    /// Also check out the PR's submodules.
    pub(super) submodules: bool,
    /// Keep the checkout under `<home>/kept/`.
    pub(super) keep_checkout: bool,
    /// Run without the repository's warm cache.
    pub(super) fresh: bool,
    /// A one-shot test: its cache layer is thrown away after it.
    pub(super) one_shot: bool,
    /// Turns `true` to cancel the run.
    pub(super) cancel: Option<watch::Receiver<bool>>,
    /// Told when each command starts.
    pub(super) progress: Option<tokio::sync::mpsc::UnboundedSender<CommandStarted>>,
    /// Held paths' versions the person accepted from the PR (path, blob): not held (issue 57).
    pub(super) accepted: Vec<(String, String)>,
}

/// The result of checking out and running, before anything is recorded.
pub(super) enum Executed {
    Cancelled(String),
    Completed(Box<Completed>),
    /// The run failed for want of network (design §5.6): its log stays; nothing is recorded.
    NeedsNetwork(Box<NeedsNetwork>),
}

pub(super) struct Completed {
    pub(super) outcome: RunOutcome,
    /// What the test runners reported, per test command (issue 57); empty when nothing ran
    /// here (a merge conflict, a `github-checks` run).
    pub(super) results: RunResults,
    /// Held paths that changed during the run (issue 57).
    pub(super) held_changed: Vec<String>,
    /// A failed held run's failures, when all lie in held tests the PR changed (issue 57).
    pub(super) disputed: Vec<crate::domain::dispute::DisputedTest>,
    /// `None` for a `github-checks` run: nothing was fetched.
    pub(super) fetch: Option<checkout::FetchStats>,
    /// A `github-checks` run's checks (design §5.7).
    pub(super) checks: Vec<CheckResult>,
    pub(super) environment: Environment,
    pub(super) started_at: String,
    pub(super) started: Instant,
    /// `--keep-checkout`: where the checkout was left.
    pub(super) kept: Option<PathBuf>,
    /// What the run's commands asked its egress proxy for.
    pub(super) network_log: Vec<NetworkEvent>,
    /// Destinations beyond the log's bound, counted only.
    pub(super) network_log_dropped: u64,
    /// The lockfiles in the tested tree.
    pub(super) lockfiles: Vec<String>,
    /// What the commands ran in and the change it is judged on: from the checkout, or for a
    /// `github-checks` run from the mirror alone; the reason when it could not be made.
    pub(super) tested: Result<checkout::Tested, String>,
    /// The head did not merge into the base tip: nothing ran (`MERGE_CONFLICT`).
    pub(super) conflict: Option<Conflict>,
    /// This run confirmed a pass that ran on a layer earlier iterations wrote (issue 57).
    pub(super) confirmation: Option<Confirmation>,
    /// A pass's evidence: its results judged against the base's (issue 57).
    pub(super) evidence: Option<Evidence>,
    /// The baseline that judgement used, or why there was none.
    pub(super) baseline: Option<BaselineUsed>,
    /// The tripwire's word on the test framework, after a pass.
    pub(super) tripwire: Option<Tripwire>,
}

/// The report's `confirmation`: the domain's record of a confirmed pass.
pub(super) use crate::domain::report::Confirmation;

/// A head that does not merge cleanly into its base branch's tip (design §5.2.1).
pub(super) struct Conflict {
    pub(super) base_ref: String,
    pub(super) base_sha: String,
    pub(super) paths: Vec<String>,
}

/// The environment a report records: this forgeloop, its libgit2, the machine, the commands'
/// hash, and what the run had of a tree and a sandbox.
pub(super) fn environment(
    commands: &CommandsProfile,
    tree_sha: Option<String>,
    sandbox: Option<SandboxInfo>,
    executor: Executor,
) -> Environment {
    Environment {
        forgeloop_version: env!("CARGO_PKG_VERSION").to_owned(),
        libgit2_version: checkout::libgit2_version(),
        os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        commands_sha256: commands.sha256(),
        tree_sha,
        sandbox,
        executor: Some(executor.as_str().to_owned()),
    }
}

/// The locked pass of `forge --pr` a run's end is recorded in: the cycle as it was read, the
/// PR and who asked.
#[derive(Clone, Copy)]
pub(super) struct Pass<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) paths: &'a CyclePaths,
    /// The state as loaded under the lock (what `session::persist` compares against).
    pub(super) before: &'a CycleState,
    pub(super) pr: &'a PrRef,
    pub(super) actor: Actor,
}

/// A run shown as live: the iteration it will count as and its log, relative to the cycle's
/// sidecar (`runs/<iteration>-<sha12>.log`) and absolute.
pub(super) struct LiveRun {
    pub(super) iteration: u32,
    pub(super) log_rel: String,
    pub(super) log_path: PathBuf,
}
