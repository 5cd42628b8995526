//! The `github-checks` executor (design §5.7): the required CI checks a profile names, asked
//! for and waited on at the head SHA instead of running anything here; the change CI tested is
//! judged from the mirror alone.

use std::path::Path;
use std::time::Instant;

use crate::checkout;
use crate::domain::commands::{CommandsProfile, Executor};
use crate::error::{Error, Result};
use crate::github::PullInfo;
use crate::runner::RunOutcome;

use super::super::ci_wait::{self, ChecksError, WaitPlan, Waited};
use super::super::context::{Ctx, Engine};
use super::checkout_job::CheckoutJob;
use super::types::{Completed, Executed, RunSettings, environment};

/// A checks error as the run reports it: GitHub's trouble as GitHub's, the rest as the checks'.
pub(super) fn checks_error(e: ChecksError) -> Error {
    match e {
        ChecksError::Github(err) => Error::Github(err),
        other => Error::Checks(other),
    }
}

/// The check names a `github-checks` profile waits for; none for a local one.
pub(super) async fn wanted_checks(
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
) -> std::result::Result<Vec<String>, ChecksError> {
    match commands.executor {
        Executor::Local => Ok(Vec::new()),
        Executor::GithubChecks => {
            ci_wait::check_dispatch(pull, commands)?;
            ci_wait::wanted_checks(&engine.github, pull, commands).await
        }
    }
}

/// The `github-checks` executor: asks for the dispatch when the profile has one, then waits
/// for the wanted checks on the head SHA. A wait that ends without a verdict (no check
/// appeared, timeout) is an infra failure; GitHub's refusals too.
pub(super) async fn execute_checks(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
    wanted: Vec<String>,
    log_path: &Path,
    settings: &RunSettings,
) -> Result<Executed> {
    let started_at = ctx.now();
    let started = Instant::now();
    ci_wait::dispatch(&engine.github, pull, commands).await.map_err(checks_error)?;
    let plan = WaitPlan {
        wanted,
        timeout: std::time::Duration::from_secs(commands.checks_timeout_s()),
        appear_timeout: std::time::Duration::from_secs(commands.appear_timeout_s()),
        poll: ctx.config.checks.poll_bounds(),
        log_path,
        redactor: &ctx.redactor,
        cancel: settings.cancel.clone(),
        progress: settings.progress.clone(),
    };
    let verdict = match ci_wait::wait(&engine.github, pull, plan).await.map_err(checks_error)? {
        Waited::Verdict(verdict) => verdict,
        Waited::Cancelled(message) => return Ok(Executed::Cancelled(message)),
    };
    // What CI ran is judged like a local run: its change against the base tip, from the mirror.
    let tested = judge_in_mirror(ctx, engine, pull, commands).await;
    let outcome = RunOutcome {
        status: verdict.status,
        setup: Vec::new(),
        commands: Vec::new(),
        failure_output: verdict.failure_output,
        timed_out: false,
        cancelled: false,
        log_bytes_written: verdict.log_bytes,
        log_truncated: false,
        tried: Vec::new(),
    };
    Ok(Executed::Completed(Box::new(Completed {
        outcome,
        results: Default::default(),
        held_changed: Vec::new(),
        disputed: Vec::new(),
        fetch: None,
        checks: verdict.checks,
        environment: environment(commands, None, None, Executor::GithubChecks),
        started_at,
        started,
        kept: None,
        network_log: Vec::new(),
        network_log_dropped: 0,
        lockfiles: Vec::new(),
        tested,
        conflict: None,
        confirmation: None,
        evidence: None,
        baseline: None,
        tripwire: None,
    })))
}

/// The change a `github-checks` run is judged on: the head and the base branch fetched into
/// the mirror and merged there (nothing is checked out or run); the reason when it cannot be.
async fn judge_in_mirror(
    ctx: &Ctx,
    engine: &Engine,
    pull: &PullInfo,
    commands: &CommandsProfile,
) -> std::result::Result<checkout::Tested, String> {
    let mut job = CheckoutJob::new(ctx, engine, pull, commands);
    // CI ran what it ran: nothing is held here.
    job.hold = false;
    let judged = tokio::task::spawn_blocking(move || checkout::judge(&job.request())).await;
    match judged {
        Ok(Ok(tested)) => Ok(tested),
        Ok(Err(err)) => Err(err.to_string()),
        Err(err) => Err(format!("the judging task failed: {err}")),
    }
}
