//! A run's `integrity` (design §5.2, "Trust, then verify"): the PR's change as merging would
//! make it (the tested tree against the base branch's tip, from the mirror: no API cap hides a
//! path) and, in a cycle, since its last tested head, read for test files, removed assertions
//! — above all in a fix after a failing run — and the person's protected paths. Made before
//! the run is recorded, so a pass that needs a person becomes `NEEDS_REVIEW` in the same write.

use crate::checkout;
use crate::domain::commands::CommandsProfile;
use crate::domain::gaming::{self, Hit, ScanInput};
use crate::domain::integrity::{Assessment, Diff, Integrity, Previous};
use crate::domain::pr_ref::PrRef;
use crate::domain::test_files::{self, Judges};
use crate::store::layout::CyclePaths;

use super::context::Ctx;
use super::context::Engine;
use super::diff::{self, DiffView};

/// What the run tested.
pub struct Tested<'a> {
    /// The PR that was tested.
    pub pr: &'a PrRef,
    /// The iteration the run counts as.
    pub iteration: u32,
    /// The PR's head commit (40 hex digits).
    pub head_sha: &'a str,
    /// The cycle's previous run.
    pub previous: Option<PreviousRun<'a>>,
    /// The commands the run ran, for the test files they name.
    pub commands: &'a CommandsProfile,
    /// What the checkout made of the head (the change against the base tip, what tests
    /// source); the reason when it could not be had.
    pub change: Result<&'a checkout::Tested, String>,
}

/// The cycle's previous tested run, as integrity reads it.
pub struct PreviousRun<'a> {
    /// Its head commit.
    pub head_sha: &'a str,
    /// Its iteration.
    pub iteration: u32,
    /// Whether it failed (its fix is this head).
    pub failed: bool,
    /// What names the tests that failed: the failing command's words and its output tail.
    pub failure_text: String,
}

/// The integrity of a run. A change that cannot be had is said in `error` (never fails the
/// run) and makes a pass wait for a person.
pub async fn of_run(ctx: &Ctx, engine: &Engine, paths: &CyclePaths, tested: &Tested<'_>) -> Integrity {
    let protect = ctx.config.protect.for_repository(&tested.pr.repo.full_name());
    let change = match tested.change {
        Ok(change) => change,
        Err(ref why) => return unchecked(ctx, why, &protect),
    };
    let whole = match diff::whole_of_run(ctx, paths, tested.pr, tested.iteration, change, tested.head_sha) {
        Ok(whole) => whole,
        Err(err) => return unchecked(ctx, &err.to_string(), &protect),
    };
    let since = match &tested.previous {
        Some(p) => {
            let previous = (p.head_sha, p.iteration);
            diff::since_last_of_run(ctx, engine, paths, tested.pr, tested.iteration, tested.head_sha, previous).await
        }
        None => None,
    };
    assess(ctx, &whole, since.as_ref().zip(tested.previous.as_ref()), tested.commands, change, &protect)
}

/// The integrity of a run outside any cycle (`forgeloop test`, MCP `forge_test`): against the
/// base tip only, nothing cached.
pub fn of_one_shot(
    ctx: &Ctx,
    pr: &PrRef,
    head_sha: &str,
    commands: &CommandsProfile,
    change: Result<&checkout::Tested, String>,
) -> Integrity {
    let protect = ctx.config.protect.for_repository(&pr.repo.full_name());
    match change {
        Ok(change) => assess(ctx, &diff::whole_of_change(ctx, pr, head_sha, change), None, commands, change, &protect),
        Err(why) => unchecked(ctx, &why, &protect),
    }
}

fn unchecked(ctx: &Ctx, why: &str, protect: &[String]) -> Integrity {
    let why = ctx.redactor.redact(why).into_owned();
    Integrity::unchecked(format!("the PR's change could not be read from the mirror: {why}"), protect)
}

/// The gaming scan of the change's additions to the code under test (issue 57), reading the
/// tested tree's tests and the base's versions the checkout gathered, redacted like the change.
fn gaming(ctx: &Ctx, whole: &DiffView, commands: &CommandsProfile, change: &checkout::Tested) -> Vec<Hit> {
    let judges =
        Judges { commands: Some(commands), test_script: change.test_script.as_deref(), sourced: &change.sourced };
    let is_test =
        |path: &str| test_files::classify(path, &judges).is_some() || change.hold_paths.iter().any(|h| h == path);
    let redact = |text: &str| ctx.redactor.redact(text).into_owned();
    let tests: Vec<(String, String)> = change.scan.tests.iter().map(|(p, t)| (p.clone(), redact(t))).collect();
    let base_text = |path: &str| change.scan.base_texts.get(path).map(|t| redact(t));
    let exists = |path: &str| change.scan.packages.contains(path);
    let lines: Vec<&str> = whole.text.lines().collect();
    gaming::scan(&ScanInput {
        change: &lines,
        files: &whole.files,
        is_test: &is_test,
        tests: &tests,
        base_text: &base_text,
        exists: &exists,
    })
}

fn assess(
    ctx: &Ctx,
    whole: &DiffView,
    since: Option<(&DiffView, &PreviousRun<'_>)>,
    commands: &CommandsProfile,
    change: &checkout::Tested,
    protect: &[String],
) -> Integrity {
    let whole_lines: Vec<&str> = whole.text.lines().collect();
    let whole_diff = Diff { lines: &whole_lines, files: &whole.files };
    let since_lines: Vec<&str> = since.map(|(view, _)| view.text.lines().collect()).unwrap_or_default();
    let since_diff = since.map(|(view, _)| Diff { lines: &since_lines, files: &view.files });
    let previous = since.zip(since_diff.as_ref()).map(|((view, run), diff)| Previous {
        iteration: view.old_iteration.unwrap_or(run.iteration),
        head_sha: view.old_sha.clone().unwrap_or_else(|| run.head_sha.to_owned()),
        diff,
        failed: run.failed,
        failure_text: &run.failure_text,
    });
    let mut integrity = Integrity::assess(&Assessment {
        whole: &whole_diff,
        previous,
        judges: Judges {
            commands: Some(commands),
            test_script: change.test_script.as_deref(),
            sourced: &change.sourced,
        },
        protect,
        base_sha: Some(&change.base_sha),
    });
    integrity.gaming = gaming(ctx, whole, commands, change);
    // The person accepted the PR's version of these (a dispute): they decided already.
    integrity.protected.retain(|p| !change.accepted.contains(p));
    integrity.guarded.retain(|g| !change.accepted.contains(&g.path));
    integrity
}
