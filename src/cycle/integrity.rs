//! A run's `integrity` (design §5.2, "Trust, then verify"): the PR's change against its base
//! and, in a cycle, since its last tested head, read for test files, removed assertions and the
//! person's protected paths. Made before the run is recorded, so a pass that changed a
//! protected path becomes `NEEDS_REVIEW` in the same write.

use crate::domain::commands::CommandsProfile;
use crate::domain::diff::FileDiff;
use crate::domain::integrity::{Diff, Integrity};
use crate::domain::pr_ref::PrRef;
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
    /// The commit tested (40 hex digits).
    pub head_sha: &'a str,
    /// The cycle's previous tested head and its iteration.
    pub previous: Option<(&'a str, u32)>,
    /// The commands the run ran, for the test files they name.
    pub commands: &'a CommandsProfile,
    /// `package.json`'s `scripts.test` at the head, when the run had a checkout.
    pub test_script: Option<&'a str>,
}

/// The integrity of a run. A diff GitHub would not give is said in `error` (never fails the
/// run); with protected paths configured such a pass then waits for a person.
pub async fn of_run(ctx: &Ctx, engine: &Engine, paths: &CyclePaths, tested: &Tested<'_>) -> Integrity {
    let protect = ctx.config.protect.for_repository(&tested.pr.repo.full_name());
    let diffs = diff::of_run(ctx, engine, paths, tested.pr, tested.iteration, tested.head_sha, tested.previous).await;
    let (whole, since) = match diffs {
        Ok(diffs) => diffs,
        Err(err) => {
            let why = ctx.redactor.redact(&err.to_string()).into_owned();
            return Integrity::unchecked(format!("the PR's diff could not be read: {why}"), &protect);
        }
    };
    let whole_lines: Vec<&str> = whole.text.lines().collect();
    let since_lines: Vec<&str> = since.as_ref().map(|v| v.text.lines().collect()).unwrap_or_default();
    let since = since.as_ref().map(|view| {
        let diff = Diff { lines: &since_lines, files: &view.files };
        (view.old_iteration.unwrap_or(0), view.old_sha.clone().unwrap_or_default(), diff)
    });
    Integrity::assess(
        &as_diff(&whole, &whole_lines),
        since.as_ref().map(|(k, sha, diff)| (*k, sha.clone(), diff)),
        Some(tested.commands),
        tested.test_script,
        &protect,
    )
}

/// The integrity of a run outside any cycle (`forgeloop test`, MCP `forge_test`): against the
/// base only, nothing cached.
pub async fn of_one_shot(
    ctx: &Ctx,
    engine: &Engine,
    pr: &PrRef,
    head_sha: &str,
    commands: &CommandsProfile,
    test_script: Option<&str>,
) -> Integrity {
    let protect = ctx.config.protect.for_repository(&pr.repo.full_name());
    match diff::whole_pr_at(ctx, engine, pr, head_sha).await {
        Ok(whole) => {
            let lines: Vec<&str> = whole.text.lines().collect();
            Integrity::assess(&as_diff(&whole, &lines), None, Some(commands), test_script, &protect)
        }
        Err(err) => {
            let why = ctx.redactor.redact(&err.to_string()).into_owned();
            Integrity::unchecked(format!("the PR's diff could not be read: {why}"), &protect)
        }
    }
}

fn as_diff<'a>(view: &'a DiffView, lines: &'a [&'a str]) -> Diff<'a> {
    let files: &[FileDiff] = &view.files;
    Diff { lines, files }
}
