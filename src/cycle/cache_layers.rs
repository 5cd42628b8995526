//! A run's cache (design §5.6), as a use case: its writable layer claimed before the checkout
//! (a cycle's own, or a throw-away one), the base layer warmed from the base branch's tip when
//! it is missing or too far behind, the writable layer made ready, and what the report records
//! of where the cache came from.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::sync::watch;

use crate::cache::{BaseRecord, Layers, Mount, Prepared, Scope, Stack};
use crate::checkout;
use crate::domain::commands::CommandsProfile;
use crate::domain::egress::Allowlist;
use crate::domain::report::{BaseLayer, CacheLayers};
use crate::domain::test_results::ids::Renames;
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::sandbox::{self, CacheMount, RunPaths, Tier};

use super::baseline::{self, Source};
use super::context::Ctx;
use super::sandboxed_run::{self, Job};

/// The writable layer of `scope` for `pull`'s repository: stacked by overlay where the commands
/// run in mount namespaces, copied otherwise; the tests' account's when forgeloop is root.
pub(super) fn claim(ctx: &Ctx, pull: &PullInfo, plan: &sandbox::Plan, scope: Scope) -> Result<Layers> {
    let stack = if plan.tier() == Some(Tier::Namespaces) { Stack::Overlay } else { Stack::Copy };
    let owner = plan.run_as().map(|a| (a.uid, a.gid));
    Layers::claim(&ctx.home.caches_dir(), &pull.repository, scope, stack, owner)
        .map_err(|e| Error::io(format!("cannot open the cache of {}", pull.repository), e))
}

/// What the warming needs beyond the layers.
pub(super) struct Warm<'a> {
    pub plan: &'a sandbox::Plan,
    pub allow: &'a Allowlist,
    pub commands: &'a CommandsProfile,
    pub pull: &'a PullInfo,
    /// The base tip this run tests against, when the checkout knows it.
    pub base_sha: Option<&'a str>,
    pub person_cargo: Option<&'a Path>,
    pub cancel: Option<watch::Receiver<bool>>,
    /// The run's own log: a warming writes there while it lasts, so the control room and
    /// `list` show what runs (the run's commands then start it afresh), and keeps a copy in
    /// `base/warm.log`.
    pub live_log: &'a Path,
    /// A cycle's run may warm the base layer; a one-shot test uses it as it is (warming would
    /// run the commands twice for one answer).
    pub may_warm: bool,
}

/// The base layer under this run, warmed first when due, and the writable layer made ready.
/// A warming that fails leaves the run to go on with the layer as it was; the third value says
/// why (redacted), for the report.
pub(super) async fn ready(
    ctx: &Ctx,
    layers: &mut Layers,
    warm: Warm<'_>,
) -> Result<(Prepared, Option<BaseLayer>, Option<String>)> {
    let max = ctx.config.cache.base_max_behind();
    let record = layers.base_record();
    let behind = match (&record, warm.base_sha) {
        (Some(record), Some(tip)) => {
            checkout::base_tip::behind(&ctx.home.mirrors_dir(), &warm.pull.repository, &record.commit, tip, max)
        }
        _ => None,
    };
    let due = warm.base_sha.is_some() && behind.is_none();
    let mut base = None;
    let mut warm_error = None;
    if due
        && warm.may_warm
        && let Some(tip) = warm.base_sha
        && layers.try_warm()
    {
        match warm_base(ctx, layers, &warm, tip).await {
            Ok(Some(record)) => {
                base = Some(BaseLayer {
                    commit: record.commit.clone(),
                    warmed_at: record.warmed_at.clone(),
                    behind: Some(0),
                    warmed_now: true,
                    warm_ms: Some(record.millis),
                    deferred: false,
                });
            }
            Ok(None) => {}
            Err(err) => warm_error = Some(ctx.redactor.redact(&err.to_string()).into_owned()),
        }
    }
    let held = layers.hold_base();
    if base.is_none()
        && held
        && let Some(record) = layers.base_record()
    {
        let behind = if record.commit == warm.base_sha.unwrap_or_default() { Some(0) } else { behind };
        base = Some(BaseLayer {
            commit: record.commit,
            warmed_at: record.warmed_at,
            behind,
            warmed_now: false,
            warm_ms: None,
            deferred: due,
        });
    }
    if !held {
        base = None;
    }
    let prepared = layers
        .prepare(warm.person_cargo)
        .map_err(|e| Error::io(format!("cannot prepare the cache of {}", warm.pull.repository), e))?;
    Ok((prepared, base, warm_error))
}

/// The report's record of the cache a run used, read before the run counts itself.
pub(super) fn provenance(layers: &Layers, base: Option<BaseLayer>, warm_error: Option<String>) -> CacheLayers {
    CacheLayers {
        layer: layers.kind().to_owned(),
        stack: layers.stack_name().to_owned(),
        layer_runs: layers.runs(),
        base,
        warm_error,
    }
}

/// Warms the base layer (held exclusively by the caller): the profile's setup and test
/// commands run over the base tip with the base layer as their cache, its record written, and
/// what they reported kept as the baseline at that commit (issue 57). `None`: cancelled,
/// nothing recorded.
async fn warm_base(ctx: &Ctx, layers: &mut Layers, warm: &Warm<'_>, tip: &str) -> Result<Option<BaseRecord>> {
    let started = Instant::now();
    let run = BaseRun {
        plan: warm.plan,
        allow: warm.allow,
        commands: warm.commands,
        pull: warm.pull,
        tip,
        person_cargo: warm.person_cargo,
        log: warm.live_log,
        cancel: warm.cancel.clone(),
    };
    let ran = run_base_tip(ctx, &run, BaseCache::Warming(layers)).await;
    let kept: PathBuf = ctx.home.caches_dir().join(layers.base_key()).join("warm.log");
    let _ = std::fs::copy(warm.live_log, &kept);
    let ran = ran?;
    if ran.outcome.cancelled {
        return Ok(None);
    }
    let seconds = started.elapsed().as_secs_f64();
    let status = ran.outcome.status;
    let found = baseline::of_run(ctx, tip, warm.commands, Source::Warming, status, seconds, ran.results);
    baseline::save(ctx, &warm.pull.repository, warm.commands, &found);
    let record = BaseRecord {
        commit: tip.to_owned(),
        warmed_at: ctx.now(),
        millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        outcome: status.as_str().to_owned(),
        extra: Default::default(),
    };
    layers.finish_warm(&record).map_err(|e| Error::io("cannot record the base layer", e))?;
    Ok(Some(record))
}

/// A run of the profile over the base tip: the base layer's warming, or a baseline made on
/// demand (issue 57).
pub(super) struct BaseRun<'a> {
    pub plan: &'a sandbox::Plan,
    pub allow: &'a Allowlist,
    pub commands: &'a CommandsProfile,
    pub pull: &'a PullInfo,
    /// The base commit.
    pub tip: &'a str,
    pub person_cargo: Option<&'a Path>,
    /// Where its redacted output goes.
    pub log: &'a Path,
    pub cancel: Option<watch::Receiver<bool>>,
}

/// The cache a base-tip run uses.
pub(super) enum BaseCache<'l> {
    /// The base layer itself, read-write (the caller holds it exclusively).
    Warming(&'l mut Layers),
    /// A throw-away layer over the base layer, which stays read-only.
    Over(&'l mut Layers),
    /// None.
    Cold,
}

/// Checks the base tip out from the mirror and runs the profile over it in the sandbox.
pub(super) async fn run_base_tip(ctx: &Ctx, run: &BaseRun<'_>, cache: BaseCache<'_>) -> Result<sandboxed_run::Ran> {
    let repo = &run.pull.repository;
    let run_dir = match &cache {
        BaseCache::Warming(layers) => sandbox::RunDir::create_at(run.plan.run_root(), &layers.base_key()),
        BaseCache::Over(layers) => sandbox::RunDir::create_at(run.plan.run_root(), &layers.key()),
        BaseCache::Cold => sandbox::RunDir::create(run.plan.run_root()),
    }
    .map_err(|e| Error::io("cannot create a run directory for the base branch's run", e))?;
    let (mirrors, clone_url) = (ctx.home.mirrors_dir(), run.pull.base_clone_url.clone());
    let (repo_owned, sha, into) = (repo.clone(), run.tip.to_owned(), run_dir.path().join("checkout"));
    let for_others = run.plan.run_as().is_some();
    let checkout = tokio::task::spawn_blocking(move || {
        checkout::base_tip::check_out(&mirrors, &repo_owned, &clone_url, &sha, &into, for_others)
    })
    .await
    .map_err(|e| Error::Invalid(format!("the base checkout task failed: {e}")))?
    .map_err(Error::Checkout)?;
    let mut paths = run_dir.paths(checkout.path(), Some(checkout.gitdir()));
    let view = match cache {
        BaseCache::Warming(layers) => {
            let prepared =
                layers.prepare_base(run.person_cargo).map_err(|e| Error::io("cannot prepare the base layer", e))?;
            use_cache(&mut paths, prepared);
            stable_checkout(run.plan, layers, checkout.gitdir())?
        }
        BaseCache::Over(layers) => {
            layers.hold_base();
            let prepared =
                layers.prepare(run.person_cargo).map_err(|e| Error::io("cannot prepare a layer for the base", e))?;
            use_cache(&mut paths, prepared);
            stable_checkout(run.plan, layers, checkout.gitdir())?
        }
        BaseCache::Cold => None,
    };
    if let Some(account) = run.plan.run_as() {
        run_dir.hand_over(&paths, account).map_err(|left| {
            Error::Invalid(format!("cannot give the base branch's run directories to the account tests run as: {left}"))
        })?;
    }
    use_stable_checkout(&mut paths, view);
    let job = Job {
        plan: run.plan,
        allow: run.allow,
        commands: run.commands,
        tree: checkout.path(),
        gitdir: checkout.gitdir(),
        log_path: run.log,
        moved: Renames::default(),
        cancel: run.cancel.clone(),
        progress: None,
    };
    let ran = sandboxed_run::run(ctx, job, paths).await;
    drop(checkout);
    if let Err(left) = run_dir.remove() {
        eprintln!(
            "forgeloop: the base branch's run directory was not removed completely ({left}); `forgeloop gc` retries"
        );
    }
    ran
}

/// First tier: shows the checkout at one path for every run of `repo` (the base layer's
/// warming included), `<run root>/<owner>/<repo>/checkout`, which only the sandbox has.
/// Compilers key their incremental caches and build tools their dependency files by source
/// path: a new PR's first build on the base layer then reuses what the base branch's built.
/// The checkout's git directory names that path as its working tree (libgit2 wrote the host
/// path there), so git inside finds it. Returns the path, for [`use_stable_checkout`] once the
/// run's directories are handed over (they are host paths).
pub(super) fn stable_checkout(plan: &sandbox::Plan, layers: &Layers, gitdir: &Path) -> Result<Option<PathBuf>> {
    if plan.tier() != Some(Tier::Namespaces) {
        return Ok(None);
    }
    let view = plan.run_root().join(layers.base_key()).with_file_name("checkout");
    checkout::set_worktree(gitdir, &view).map_err(Error::Checkout)?;
    Ok(Some(view))
}

/// Shows the checkout at `view` (from [`stable_checkout`]).
pub(super) fn use_stable_checkout(paths: &mut RunPaths, view: Option<PathBuf>) {
    if let Some(view) = view {
        paths.checkout_source = Some(std::mem::replace(&mut paths.checkout, view));
    }
}

/// Points the run's paths at its prepared cache.
pub(super) fn use_cache(paths: &mut RunPaths, prepared: Prepared) {
    paths.cache = Some(prepared.view);
    paths.cache_env = prepared.env;
    paths.cache_mount = prepared.mount.map(|mount| match mount {
        Mount::Bind { source } => CacheMount::Bind { source },
        Mount::Overlay { lower, upper, work } => CacheMount::Overlay { lower, upper, work },
    });
}
