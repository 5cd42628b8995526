//! The `local` executor (design §5.2, §5.6): what a run's commands may reach and the sandbox
//! they run in, then the run itself: the cache layer claimed, the head fetched and checked out
//! (or found not to merge), the cache made ready, the commands run in the sandbox, whether a
//! failure was for want of network, and the checkout kept when asked.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::cache::{Layers, Scope};
use crate::checkout::{self, Checkout, CheckoutError};
use crate::domain::commands::CommandSpec;
use crate::domain::commands::{CommandsProfile, Executor};
use crate::domain::dispute::{self, DisputedTest, HeldChange};
use crate::domain::egress::{Allowlist, NetworkEvent, NetworkMode};
use crate::domain::needs_network::{self as needs_net, DecidedBy, NeedsNetwork};
use crate::domain::pr_ref::RepoName;
use crate::domain::report::BaselineUsed;
use crate::domain::report::{CacheLayers, SandboxInfo, TestStatus};
use crate::domain::test_results::ids::{Edited, Renames};
use crate::domain::test_results::{self, RunResults, Runner, Tripwire, tripwire};
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::runner::{self, RunOutcome};
use crate::sandbox::{self, HeldSnapshot, Phase, RunDir, RunPaths};
use crate::store::atomic::write_atomic;

use super::super::baseline::{self, Baseline};
use super::super::context::{Ctx, Engine};
use super::super::{cache_layers, sandboxed_run};
use super::checkout_job::CheckoutJob;
use super::types::{Completed, Confirmation, Conflict, Executed, RunSettings, environment};

/// How a local run's commands are isolated: the sandbox, and the allowlist of its egress proxy.
pub(super) struct LocalRun {
    plan: sandbox::Plan,
    allow: Allowlist,
}

/// The sandbox a local profile runs in, with the allowlist its proxy enforces; `None` for a
/// `github-checks` profile, which runs nothing here (design §5.7).
pub(super) async fn local_sandbox(ctx: &Ctx, commands: &CommandsProfile, repo: &RepoName) -> Result<Option<LocalRun>> {
    match commands.executor {
        Executor::Local => {
            let (setup, allow) = network_policy(ctx, commands, repo)?;
            Ok(Some(LocalRun { plan: sandbox_plan(ctx, commands, setup).await?, allow }))
        }
        Executor::GithubChecks => Ok(None),
    }
}

/// What `repo`'s runs may reach, from the person's config (design §5.6): the allowlist its
/// proxy enforces, and the setup commands' mode (`allowlist`, or `off` when the allowlist is
/// empty). A commands file's `"open"` is refused unless the config permits it for `repo`.
fn network_policy(ctx: &Ctx, commands: &CommandsProfile, repo: &RepoName) -> Result<(NetworkMode, Allowlist)> {
    let policy = ctx.network_config().for_repository(&repo.full_name());
    if commands.network == NetworkMode::Open && !policy.open_permitted {
        return Err(Error::Invalid(format!(
            "the commands file asks for \"network\": \"open\" (the host's whole network), which only your config can permit for {repo}: [network.repositories.\"{}\"] open = true; use \"network\": \"allowlist\" with the hosts the tests need in [network] allow instead",
            repo.full_name()
        )));
    }
    let setup = if policy.allow.is_empty() { NetworkMode::Off } else { NetworkMode::Allowlist };
    Ok((setup, policy.allow))
}

/// Checks the sandbox settings of `commands` and builds a sandbox of the best tier here
/// (design §5.6); blocking work, so it runs off the async threads.
async fn sandbox_plan(ctx: &Ctx, commands: &CommandsProfile, setup_network: NetworkMode) -> Result<sandbox::Plan> {
    let settings = ctx.sandbox.clone();
    let profile = commands.clone();
    let protected = ctx.protected_paths();
    tokio::task::spawn_blocking(move || {
        sandbox::prepare(&settings, &profile, setup_network, &runner::process_env(), &protected)
    })
    .await
    .map_err(|e| Error::Invalid(format!("the sandbox check failed: {e}")))?
    .map_err(Error::Sandbox)
}

/// Fetches and checks out the PR head, then runs the commands into `log_path`. A pass that ran
/// on a cycle layer an earlier iteration wrote is confirmed by a second run from the base layer
/// and an empty layer before it counts (issue 57): whatever an earlier iteration planted there
/// (build output dated in the future, a test binary swapped for `exit 0`, a registry source
/// with a build script of its own) cannot decide the verdict. That run's outcome is the run's.
pub(super) async fn execute(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
    local: &LocalRun,
    log_path: &Path,
    settings: &RunSettings,
) -> Result<Executed> {
    let run = Execution { ctx, engine, pull, commands, local, log_path, settings };
    let started_at = ctx.now();
    let started = Instant::now();
    let layered = match run.attempt(Layering::Cycle, &started_at, started).await? {
        Attempt::Done(executed) => return Ok(executed),
        Attempt::Ran(ran) => ran,
    };
    let from_earlier = layered.layer_runs_before.filter(|runs| *runs > 0);
    let (Some(layer_runs), TestStatus::Passed) = (from_earlier, layered.done.outcome.status) else {
        return run.with_evidence(layered.done).await;
    };
    // The pass stands only if a run that nothing earlier wrote passes too: its log takes the
    // run's name (live followers re-read it), the layered run's is kept beside it.
    let first_log = layered_log_path(log_path);
    std::fs::rename(log_path, &first_log)
        .map_err(|e| Error::io(format!("cannot keep the layered run's log as {}", first_log.display()), e))?;
    let confirmation = Confirmation {
        layer_runs,
        first_log: first_log.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        first_status: layered.done.outcome.status,
        first_seconds: round3(layered.ran_for.as_secs_f64()),
    };
    match run.attempt(Layering::Fresh, &started_at, started).await? {
        Attempt::Done(Executed::Completed(mut done)) | Attempt::Ran(Ran { mut done, .. }) => {
            done.confirmation = Some(confirmation);
            run.with_evidence(done).await
        }
        Attempt::Done(other) => Ok(other),
    }
}

/// Which writable layer an attempt runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layering {
    /// The cycle's own (kept between its runs), or a throw-away one for a one-shot test.
    Cycle,
    /// An empty throw-away layer on the base layer: nothing an earlier run wrote.
    Fresh,
}

/// What one attempt came to: a run to judge, or an end the caller passes on as it is.
enum Attempt {
    Ran(Ran),
    Done(Executed),
}

/// A completed attempt, with what the caller needs to decide whether to confirm it.
struct Ran {
    done: Box<Completed>,
    /// Runs of the writable layer before this attempt (`None`: no cache).
    layer_runs_before: Option<u32>,
    /// How long the attempt took.
    ran_for: std::time::Duration,
}

/// What a run of the commands found beside their outcome (issue 57).
struct Checked {
    /// Held paths that changed during the run (the second tier can only see it).
    held_changed: Vec<String>,
    /// The tripwire's word, after a pass.
    tripwire: Option<Tripwire>,
}

/// How long the tripwire may take.
const TRIPWIRE_TIMEOUT_S: u64 = 120;

/// `runs/1-abc.log` → `runs/1-abc.base.log`: the on-demand base run's output.
fn base_log_path(log_path: &Path) -> PathBuf {
    let stem = log_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    log_path.with_file_name(format!("{stem}.base.log"))
}

/// `runs/1-abc.log` → `runs/1-abc.tripwire.log`: the tripwire's own output.
fn tripwire_log_path(log_path: &Path) -> PathBuf {
    let stem = log_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    log_path.with_file_name(format!("{stem}.tripwire.log"))
}

/// A failed held run's disputed tests (issue 57): every failing test in a held file the PR had
/// changed, both versions quoted from the (redacted) change.
fn disputed_tests(ctx: &Ctx, results: &RunResults, tested: &checkout::Tested) -> Vec<DisputedTest> {
    let held: Vec<HeldChange<'_>> = tested
        .held_blobs
        .iter()
        .filter_map(|b| Some(HeldChange { path: &b.path, base_blob: b.base.as_deref()?, pr_blob: b.pr.as_deref()? }))
        .collect();
    if held.is_empty() {
        return Vec::new();
    }
    let failing: Vec<&str> = results.commands.iter().flat_map(|c| c.failures()).map(|t| t.id.as_str()).collect();
    let change = ctx.redactor.redact(&tested.change);
    let lines: Vec<&str> = change.lines().collect();
    dispute::disputed_tests(&failing, &held, &lines)
}

/// `runs/1-abc.log` → `runs/1-abc.layered.log`: where a confirmed pass's first log is kept.
fn layered_log_path(log_path: &Path) -> PathBuf {
    let stem = log_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    log_path.with_file_name(format!("{stem}.layered.log"))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// What an on-demand base run came to.
enum BaseRan {
    Found(Baseline),
    None(String),
    Cancelled,
}

impl Execution<'_> {
    /// The deciding run, with a pass's evidence judged (issue 57): its runners' results against
    /// the base's at the commit it merged with — stored, or run now within a bound.
    async fn with_evidence(&self, mut done: Box<Completed>) -> Result<Executed> {
        if done.outcome.status != TestStatus::Passed {
            return Ok(Executed::Completed(done));
        }
        let found = match &done.tested {
            Ok(tested) => match baseline::load(self.ctx, &self.pull.repository, &tested.base_sha, self.commands) {
                Some(found) => BaseRan::Found(found),
                None => {
                    let tests: f64 = done.outcome.commands.iter().map(|c| c.duration_seconds).sum();
                    let rust = done.lockfiles.iter().any(|l| l.ends_with("Cargo.lock"));
                    self.baseline_now(&tested.base_sha.clone(), Duration::from_secs_f64(tests.max(0.0)), rust).await?
                }
            },
            Err(why) => BaseRan::None(format!("the tested tree is not known ({why})")),
        };
        let exits: Vec<Option<i32>> = done.outcome.commands.iter().map(|c| c.exit_code).collect();
        let (base, used) = match &found {
            BaseRan::Cancelled => {
                return Ok(Executed::Cancelled(
                    "the run was cancelled while the base branch ran for its baseline; it does not count as an iteration"
                        .into(),
                ));
            }
            BaseRan::Found(found) => (
                Some(&found.results),
                BaselineUsed {
                    commit: Some(found.commit.clone()),
                    source: Some(match found.source {
                        baseline::Source::Warming => "warming".to_owned(),
                        baseline::Source::OnDemand => "on_demand".to_owned(),
                    }),
                    status: Some(found.status),
                    none: None,
                },
            ),
            BaseRan::None(why) => {
                (None, BaselineUsed { commit: None, source: None, status: None, none: Some(why.clone()) })
            }
        };
        let edited = edited_files(done.tested.as_ref().ok());
        done.evidence = Some(test_results::judge_edited(base, &done.results, &exits, &edited));
        done.baseline = Some(used);
        Ok(Executed::Completed(done))
    }

    /// Runs the base tip now for its per-test results, bounded by [`baseline::bound`] of this
    /// run's test time, and keeps them for every later run of the repository.
    async fn baseline_now(&self, base: &str, tests: Duration, rust: bool) -> Result<BaseRan> {
        let ctx = self.ctx;
        let bound = baseline::bound(tests);
        let (cancel, watch) = baseline::bounded_cancel(self.settings.cancel.clone(), bound);
        let mut layers = match self.commands.cache && !self.settings.fresh {
            true => Some(cache_layers::claim(ctx, self.pull, &self.local.plan, Scope::Throwaway)?),
            false => None,
        };
        let log = base_log_path(self.log_path);
        let person_cargo = if rust { person_cargo_home() } else { None };
        let run = cache_layers::BaseRun {
            plan: &self.local.plan,
            allow: &self.local.allow,
            commands: self.commands,
            pull: self.pull,
            tip: base,
            person_cargo: person_cargo.as_deref(),
            log: &log,
            cancel: Some(cancel),
        };
        let started = Instant::now();
        let cache = match layers.as_mut() {
            Some(layers) => cache_layers::BaseCache::Over(layers),
            None => cache_layers::BaseCache::Cold,
        };
        let ran = cache_layers::run_base_tip(ctx, &run, cache).await;
        drop(layers);
        let seconds = watch.seconds();
        let timed_out = watch.timed_out();
        Ok(match ran {
            Ok(ran) if ran.outcome.cancelled && timed_out => BaseRan::None(format!(
                "the base branch's run for it took longer than {seconds} s, the bound for this run (three times its tests' time and 30 s, at least a minute)"
            )),
            Ok(ran) if ran.outcome.cancelled => BaseRan::Cancelled,
            Ok(ran) => {
                let took = started.elapsed().as_secs_f64();
                let status = ran.outcome.status;
                let found =
                    baseline::of_run(ctx, base, self.commands, baseline::Source::OnDemand, status, took, ran.results);
                baseline::save(ctx, &self.pull.repository, self.commands, &found);
                BaseRan::Found(found)
            }
            Err(err) => BaseRan::None(format!(
                "the base branch could not be run for it: {}",
                ctx.redactor.redact(&err.to_string())
            )),
        })
    }

    /// One checkout and run of the commands on `layering`'s cache.
    async fn attempt(&self, layering: Layering, started_at: &str, started: Instant) -> Result<Attempt> {
        let (ctx, pull, commands, log_path, settings) =
            (self.ctx, self.pull, self.commands, self.log_path, self.settings);
        let began = Instant::now();
        let mut layers = self.claim_cache(layering)?;
        let layer_runs_before = layers.as_ref().map(Layers::runs);
        let run_dir = self.run_dir(layers.as_ref())?;
        // Whatever a warming wrote after this moment may be newer than the checkout's files.
        let checked_out = SystemTime::now();
        let checkout = match self.check_out(&run_dir).await? {
            Ok(checkout) => checkout,
            Err(CheckoutError::Cancelled) => {
                return Ok(Attempt::Done(Executed::Cancelled("the run was cancelled during the fetch".into())));
            }
            Err(CheckoutError::MergeConflict { base_ref, base_sha, head_sha: _, paths }) => {
                let _ = run_dir.remove();
                let conflict = Conflict { base_ref, base_sha, paths };
                let done = merge_conflict(ctx, commands, conflict, log_path, started_at.to_owned(), started)?;
                return Ok(Attempt::Done(Executed::Completed(done)));
            }
            Err(err) => return Err(Error::Checkout(err)),
        };
        let (paths, cache_used) = self.ready_paths(&run_dir, &checkout, layers.as_mut(), checked_out).await?;
        let (ran, checked) = self.run_commands(&checkout, paths, layers.as_ref()).await?;
        let sandboxed_run::Ran { outcome, results, mut network_log, network_log_dropped, recorded, plan: sandbox } =
            ran;
        let disputed = match (outcome.status, &checkout.tested) {
            (TestStatus::Failed, Some(tested)) if !outcome.timed_out => disputed_tests(ctx, &results, tested),
            _ => Vec::new(),
        };
        let info = sandbox_info(&sandbox, commands, &network_log, layers.as_ref(), cache_used);
        let mut needs = needs_network_of(&outcome, (&network_log, &recorded), &sandbox, pull, &ctx.now());
        network_log.extend(recorded);
        if let Some(needs) = &mut needs {
            needs.lockfiles = checkout.lockfiles.clone();
        }
        let lockfiles = checkout.lockfiles.clone();
        let tested = checkout.tested.clone().ok_or_else(|| "the checkout made nothing to judge".to_owned());
        let environment = environment(commands, Some(checkout.tree_sha.clone()), Some(info), Executor::Local);
        let fetch = checkout.fetch.clone();
        let kept = if settings.keep_checkout {
            Some(keep(ctx, checkout, &pull.head_sha, sandbox.run_as().is_some())?)
        } else {
            drop(checkout);
            None
        };
        // Whatever the test left (a `0000` tree included) goes now; what cannot is said, and `gc`
        // takes it later.
        if let Err(left) = run_dir.remove() {
            eprintln!("forgeloop: the run directory was not removed completely ({left}); `forgeloop gc` retries");
        }
        drop(layers);
        if outcome.cancelled {
            return Ok(Attempt::Done(Executed::Cancelled(
                "the run was cancelled; it does not count as an iteration".into(),
            )));
        }
        if let Some(needs) = needs {
            return Ok(Attempt::Done(Executed::NeedsNetwork(Box::new(needs))));
        }
        let done = Box::new(Completed {
            outcome,
            results,
            held_changed: checked.held_changed,
            disputed,
            fetch: Some(fetch),
            checks: Vec::new(),
            environment,
            started_at: started_at.to_owned(),
            started,
            kept,
            network_log,
            network_log_dropped,
            lockfiles,
            tested,
            conflict: None,
            confirmation: None,
            evidence: None,
            baseline: None,
            tripwire: checked.tripwire,
        });
        Ok(Attempt::Ran(Ran { done, layer_runs_before, ran_for: began.elapsed() }))
    }
}

/// One local run's inputs, for the steps of [`execute`].
struct Execution<'a> {
    ctx: &'a Ctx,
    engine: &'a Engine,
    pull: &'a PullInfo,
    commands: &'a CommandsProfile,
    local: &'a LocalRun,
    log_path: &'a Path,
    settings: &'a RunSettings,
}

impl Execution<'_> {
    /// The run's cache layer (its cycle's, or a throw-away one), unless asked to run cold.
    fn claim_cache(&self, layering: Layering) -> Result<Option<Layers>> {
        if !self.commands.cache || self.settings.fresh {
            return Ok(None);
        }
        let scope = match (layering, self.settings.one_shot) {
            (Layering::Cycle, false) => Scope::Cycle(self.pull.number),
            _ => Scope::Throwaway,
        };
        cache_layers::claim(self.ctx, self.pull, &self.local.plan, scope).map(Some)
    }

    /// The run's directory; with a cache layer, it has the layer's stable name (design §5.6).
    fn run_dir(&self, layers: Option<&Layers>) -> Result<RunDir> {
        let root = self.local.plan.run_root();
        match layers {
            Some(layers) => RunDir::create_at(root, &layers.key()),
            None => RunDir::create(root),
        }
        .map_err(|e| Error::io(format!("cannot create a run directory in {}", root.display()), e))
    }

    /// Fetches the head and checks it out into `run_dir` (a blocking task, cancelled with the
    /// run); the checkout's own error is the caller's to sort.
    async fn check_out(&self, run_dir: &RunDir) -> Result<std::result::Result<Checkout, CheckoutError>> {
        let cancel_flag = Arc::new(AtomicBool::new(false));
        let forwarder = self.settings.cancel.clone().map(|rx| forward_cancel(rx, cancel_flag.clone()));
        let mut job = CheckoutJob::new(self.ctx, self.engine, self.pull, self.commands);
        job.submodules = self.settings.submodules;
        job.cancel = cancel_flag;
        job.into = run_dir.path().join("checkout");
        job.objects_for_others = self.local.plan.run_as().is_some();
        job.accepted = self.settings.accepted.clone();
        let prepared = tokio::task::spawn_blocking(move || checkout::prepare(&job.request()))
            .await
            .map_err(|e| Error::Invalid(format!("the checkout task failed: {e}")))?;
        if let Some(forwarder) = forwarder {
            forwarder.abort();
        }
        Ok(prepared)
    }

    /// What the commands see: the checkout, the cache made ready over it (warmed first when
    /// due) and the directories handed to the account tests run as; with what the report
    /// records of where the cache came from.
    async fn ready_paths(
        &self,
        run_dir: &RunDir,
        checkout: &Checkout,
        layers: Option<&mut Layers>,
        checked_out: SystemTime,
    ) -> Result<(RunPaths, Option<CacheLayers>)> {
        let sandbox = &self.local.plan;
        let mut paths = run_dir.paths(checkout.path(), Some(checkout.gitdir()));
        paths.held = checkout.tested.as_ref().map(|t| t.hold_paths.clone()).unwrap_or_default();
        let mut cache_used = None;
        let mut view = None;
        if let Some(layers) = layers {
            // A Rust project finds the crates the person already downloaded (read-only).
            let person_cargo = checkout.path().join("Cargo.toml").is_file().then(person_cargo_home).flatten();
            let warm = cache_layers::Warm {
                plan: sandbox,
                allow: &self.local.allow,
                commands: self.commands,
                pull: self.pull,
                base_sha: checkout.tested.as_ref().map(|t| t.base_sha.as_str()),
                person_cargo: person_cargo.as_deref(),
                cancel: self.settings.cancel.clone(),
                live_log: self.log_path,
                may_warm: !self.settings.one_shot,
            };
            let (prepared, base, warm_error) = cache_layers::ready(self.ctx, layers, warm).await?;
            // This run's warming, or another's that ended meanwhile, built after the checkout began.
            if base.is_some() && layers.base_warmed_after(checked_out) {
                checkout.touch_all().map_err(|e| Error::io("cannot mark the checkout newer than the base layer", e))?;
            }
            cache_layers::use_cache(&mut paths, prepared);
            cache_used = Some(cache_layers::provenance(layers, base, warm_error));
            view = cache_layers::stable_checkout(sandbox, layers, checkout.gitdir())?;
        }
        if let Some(account) = sandbox.run_as() {
            run_dir.hand_over(&paths, account).map_err(|left| {
                Error::Invalid(format!("cannot give the run's directories to the account tests run as: {left}"))
            })?;
        }
        cache_layers::use_stable_checkout(&mut paths, view);
        Ok((paths, cache_used))
    }

    /// Runs the commands in the sandbox over the checkout; what the run left in the cache layer
    /// that configures a tool goes afterwards, whatever happened.
    ///
    /// The held paths are checked before and after (the first tier keeps them read-only; the
    /// second can only see them change), and a pass of a Python or Node suite is followed by
    /// the tripwire, in an invocation of its own (issue 57).
    async fn run_commands(
        &self,
        checkout: &Checkout,
        paths: RunPaths,
        layers: Option<&Layers>,
    ) -> Result<(sandboxed_run::Ran, Checked)> {
        let job = sandboxed_run::Job {
            plan: &self.local.plan,
            allow: &self.local.allow,
            commands: self.commands,
            tree: checkout.path(),
            gitdir: checkout.gitdir(),
            log_path: self.log_path,
            moved: moved_files(checkout),
            cancel: self.settings.cancel.clone(),
            progress: self.settings.progress.clone(),
        };
        let before = HeldSnapshot::take(&paths);
        let ran = sandboxed_run::run(self.ctx, job, paths.clone()).await;
        let mut checked = Checked { held_changed: before.changed(&paths), tripwire: None };
        if let Ok(ran) = &ran
            && ran.outcome.status == TestStatus::Passed
            && !ran.outcome.cancelled
        {
            checked.tripwire = self.tripwire(checkout, &paths, ran).await;
        }
        if let Some(layers) = layers
            && let Err(err) = layers.finish()
        {
            eprintln!("forgeloop: the cache layer {} was not cleaned after the run: {err}", layers.key().display());
        }
        ran.map(|ran| (ran, checked))
    }

    /// Runs forgeloop's own test of the test framework after a pass (issue 57): with the
    /// interpreter and runner of the first test command a Python (or Node) runner reported
    /// for, importing the modules the change touched. `None` when no such runner reported.
    async fn tripwire(&self, checkout: &Checkout, paths: &RunPaths, ran: &sandboxed_run::Ran) -> Option<Tripwire> {
        let tested = checkout.tested.as_ref()?;
        let changed: Vec<String> = crate::domain::diff::index(tested.change.lines())
            .into_iter()
            .filter(|f| f.status != crate::domain::diff::FileStatus::Removed)
            .map(|f| f.path)
            .collect();
        let reported = |wanted: &[Runner]| {
            ran.results.commands.iter().find(|c| c.runners.iter().any(|r| wanted.contains(r))).map(|c| c.command)
        };
        let (index, file, text, argv) = if let Some(index) = reported(&[Runner::Unittest, Runner::Pytest]) {
            let spec = self.commands.commands.get(index)?;
            let argv = tripwire::python_argv(&spec.argv, tripwire::PYTHON_FILE)?;
            (index, tripwire::PYTHON_FILE, tripwire::python_file(&tripwire::python_modules(&changed)), argv)
        } else {
            let index = reported(&[Runner::Node])?;
            let spec = self.commands.commands.get(index)?;
            let scripts: Vec<String> = changed
                .into_iter()
                .filter(|p| !p.contains(".test.") && !p.starts_with("test/") && !p.starts_with("tests/"))
                .collect();
            let argv = tripwire::node_argv(&spec.argv, tripwire::NODE_FILE);
            (index, tripwire::NODE_FILE, tripwire::node_file(&scripts), argv)
        };
        let spec = self.commands.commands.get(index)?;
        let host_file = checkout.path().join(file);
        if let Err(err) = std::fs::write(&host_file, text) {
            return Some(Tripwire::NotRun(format!("its file could not be written: {err}")));
        }
        let _ = std::fs::set_permissions(&host_file, std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let mut profile = self.commands.clone();
        profile.setup = Vec::new();
        profile.commands = vec![CommandSpec { argv, timeout_s: Some(TRIPWIRE_TIMEOUT_S), env: spec.env.clone() }];
        let log = tripwire_log_path(self.log_path);
        let job = sandboxed_run::Job {
            plan: &self.local.plan,
            allow: &self.local.allow,
            commands: &profile,
            tree: checkout.path(),
            gitdir: checkout.gitdir(),
            log_path: &log,
            moved: Renames::default(),
            cancel: self.settings.cancel.clone(),
            progress: None,
        };
        let ran = sandboxed_run::run(self.ctx, job, paths.clone()).await;
        let _ = std::fs::remove_file(&host_file);
        Some(match ran {
            Ok(ran) if ran.outcome.cancelled => Tripwire::NotRun("the run was cancelled".into()),
            Ok(ran) => match (ran.results.commands.first(), ran.outcome.commands.first()) {
                (Some(results), Some(command)) => tripwire::judge(results, command.exit_code),
                _ => Tripwire::NotRun("it reported nothing".into()),
            },
            Err(err) => Tripwire::NotRun(self.ctx.redactor.redact(&err.to_string()).into_owned()),
        })
    }
}

/// The files the change under test moved, for telling a test that moved with its file from one
/// that stopped running.
fn moved_files(checkout: &Checkout) -> Renames {
    let Some(tested) = checkout.tested.as_ref() else { return Renames::default() };
    let files = crate::domain::diff::index(tested.change.lines());
    Renames::new(
        files
            .iter()
            .filter(|f| f.status == crate::domain::diff::FileStatus::Renamed)
            .filter_map(|f| f.old_path.as_deref().map(|old| (old, f.path.as_str()))),
    )
}

/// The files the change under test edited in the tree that ran: modified, removed or moved,
/// but not held (the base's version of a held file ran).
fn edited_files(tested: Option<&checkout::Tested>) -> Edited {
    let Some(tested) = tested else { return Edited::default() };
    let files = crate::domain::diff::index(tested.change.lines());
    Edited::new(
        files
            .iter()
            .filter(|f| f.status != crate::domain::diff::FileStatus::Added)
            .filter(|f| !tested.held.contains(&f.path))
            .flat_map(|f| [Some(f.path.as_str()), f.old_path.as_deref()])
            .flatten(),
    )
}

/// Forwards a cancel request to the (blocking) fetch.
fn forward_cancel(mut rx: tokio::sync::watch::Receiver<bool>, flag: Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if *rx.borrow_and_update() {
                flag.store(true, Ordering::SeqCst);
                break;
            }
            if rx.changed().await.is_err() {
                break;
            }
        }
    })
}

/// What the report says of the sandbox the commands ran in: its tier, the cache, the setup
/// phase's network and how many allowed hosts the tests reached.
fn sandbox_info(
    sandbox: &sandbox::Plan,
    commands: &CommandsProfile,
    network_log: &[NetworkEvent],
    layers: Option<&Layers>,
    cache_used: Option<CacheLayers>,
) -> SandboxInfo {
    let mut info = sandbox.info();
    info.cache = layers.map(|l| l.key().display().to_string());
    info.cache_layers = cache_used;
    if !commands.setup.is_empty() {
        info.setup_network = Some(sandbox.network(Phase::Setup));
    }
    if sandbox.network(Phase::Test) == NetworkMode::Allowlist || !network_log.is_empty() {
        let mut hosts: Vec<&str> = network_log.iter().filter(|e| e.allowed).map(|e| e.host.as_str()).collect();
        hosts.sort();
        hosts.dedup();
        info.network_hosts = Some(hosts.len());
    }
    info
}

/// A head that does not merge into its base branch's tip: nothing ran; the log says why, and
/// the run is the PR's to fix (design §5.2.1).
fn merge_conflict(
    ctx: &Ctx,
    commands: &CommandsProfile,
    conflict: Conflict,
    log_path: &Path,
    started_at: String,
    started: Instant,
) -> Result<Box<Completed>> {
    let message = format!(
        "The pull request's head does not merge cleanly into {} at {}: nothing was run.\nConflicting paths: {}.\nBring the branch up to date with {}: merge it (or rebase onto it), resolve the conflicts, and push.",
        conflict.base_ref,
        &conflict.base_sha[..12.min(conflict.base_sha.len())],
        conflict.paths.join(", "),
        conflict.base_ref
    );
    let message = ctx.redactor.redact(&message).into_owned();
    if let Some(dir) = log_path.parent() {
        crate::store::private::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let log = format!("{message}\n");
    write_atomic(log_path, log.as_bytes())
        .map_err(|e| Error::io(format!("cannot write the run log {}", log_path.display()), e))?;
    let not_run = |c: &crate::domain::commands::CommandSpec| {
        crate::domain::report::CommandResult::not_run(
            c.argv.iter().map(|a| ctx.redactor.redact(a).into_owned()).collect(),
        )
    };
    let outcome = RunOutcome {
        status: TestStatus::MergeConflict,
        setup: commands.setup.iter().map(not_run).collect(),
        commands: commands.commands.iter().map(not_run).collect(),
        failure_output: Some(message),
        timed_out: false,
        cancelled: false,
        log_bytes_written: log.len() as u64,
        log_truncated: false,
        tried: Vec::new(),
    };
    Ok(Box::new(Completed {
        outcome,
        results: Default::default(),
        held_changed: Vec::new(),
        disputed: Vec::new(),
        fetch: None,
        checks: Vec::new(),
        environment: environment(commands, None, None, Executor::Local),
        started_at,
        started,
        kept: None,
        network_log: Vec::new(),
        network_log_dropped: 0,
        lockfiles: Vec::new(),
        tested: Err("the head did not merge into its base branch".to_owned()),
        conflict: Some(conflict),
        confirmation: None,
        evidence: None,
        baseline: None,
        tripwire: None,
    }))
}

/// Whether a failed run failed for want of network (design §5.6): its proxy refused a host, or
/// — sandboxed without network — its failing command printed what clients print then.
fn needs_network_of(
    outcome: &RunOutcome,
    (proxied, recorded): (&[NetworkEvent], &[NetworkEvent]),
    plan: &sandbox::Plan,
    pull: &PullInfo,
    now: &str,
) -> Option<NeedsNetwork> {
    let phase = match outcome.status {
        TestStatus::Passed | TestStatus::MergeConflict => return None,
        TestStatus::SetupFailed => Phase::Setup,
        TestStatus::Failed => Phase::Test,
    };
    // The proxy's refusals first, then the sandbox's record of connections; the printed signs
    // only when neither has anything (whatever the run printed, a refused destination decides).
    let refused = |log: &[NetworkEvent]| log.iter().any(|e| !e.allowed);
    let (log, decided_by) = match (refused(proxied), refused(recorded)) {
        (true, _) => ([proxied, recorded].concat(), DecidedBy::EgressProxy),
        (false, true) => (recorded.to_vec(), DecidedBy::ConnectionRecord),
        (false, false) => (Vec::new(), DecidedBy::PrintedSign),
    };
    let allow = needs_net::refused_entries(&log);
    let refused_by_policy = needs_net::refused_by_policy(&log);
    let sign = match plan.is_sandboxed() && plan.network(phase) == NetworkMode::Off {
        true => outcome.failure_output.as_deref().and_then(needs_net::sign_in).map(|(sign, _)| sign.to_owned()),
        false => None,
    };
    let config = match (allow.is_empty(), sign.is_some()) {
        (false, _) => needs_net::config_lines(&pull.repository.full_name(), &allow),
        (true, true) => needs_net::config_lines(&pull.repository.full_name(), &["registries".to_owned()]),
        (true, false) if !refused_by_policy.is_empty() => needs_net::policy_lines(&refused_by_policy),
        (true, false) => return None,
    };
    Some(NeedsNetwork {
        pr: format!("{}#{}", pull.repository.full_name(), pull.number),
        head_sha: pull.head_sha.clone(),
        phase: phase.as_str().to_owned(),
        config,
        lockfiles: Vec::new(),
        allowed_at: None,
        allow,
        sign,
        refused_by_policy,
        decided_by: Some(decided_by),
        at: now.to_owned(),
    })
}

/// The person's own cargo home (`CARGO_HOME`, else `~/.cargo`), when it exists.
fn person_cargo_home() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    home.is_dir().then_some(home)
}

/// `--keep-checkout`: the working tree moves to `<home>/kept/`, with a `.git` forgeloop wrote
/// afterwards, and back to the person's own account when the test ran as another.
fn keep(ctx: &Ctx, checkout: Checkout, head_sha: &str, handed_over: bool) -> Result<PathBuf> {
    let stamp = ctx.clock.now().format("%Y%m%dT%H%M%SZ");
    let dest = ctx.home.kept_dir().join(format!("{}-{stamp}-{}", &head_sha[..12], std::process::id()));
    if handed_over {
        // SAFETY: geteuid/getegid have no arguments and cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        crate::store::tree::chown_tree(checkout.path(), uid, gid)
            .map_err(|left| Error::Invalid(format!("cannot take the kept checkout back: {left}")))?;
    }
    checkout.keep(&dest).map_err(Error::Checkout)
}
