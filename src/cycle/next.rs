//! `forgeloop next` (and the MCP server's `forge_next`): the cycle's one next step. A
//! reference-tool state gets its outbox on first touch; when the step is to test again the PR
//! whose last run failed, its head on GitHub is looked at, so an unchanged head is said before
//! anything runs.

use crate::domain::next::{NextStep, note_head, recheck_target};
use crate::domain::pr_ref::parse_pr_ref;
use crate::error::{Error, Result};
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::actions;
use super::context::Ctx;
use super::reply::HeadLookup;

/// The next step of the cycle at `paths`. With `lookup` (the front end's one question to
/// GitHub), a step that would test the failed PR again carries `head_check`.
pub fn next(ctx: &Ctx, paths: &CyclePaths, lookup: Option<HeadLookup<'_>>) -> Result<NextStep> {
    // When another process holds the cycle, `next` still answers (from the same fields) and
    // `sent` adopts later.
    match actions::adopt_reference_outbox(ctx, paths) {
        Ok(_) | Err(Error::Lock(_)) => {}
        Err(err) => return Err(err),
    }
    let state = state_file::load(&paths.state)?;
    let mut step = ctx.next_step(&state, &paths.state.display().to_string());
    if let (Some(lookup), Some((pr, tested))) = (lookup, recheck_target(&state)) {
        let head = parse_pr_ref(&pr, &ctx.hosts).map_err(|e| e.to_string()).and_then(|p| lookup(&p));
        note_head(&mut step, &pr, &tested, head.as_ref().map(|h| h.sha.as_str()).map_err(String::as_str));
    }
    Ok(step)
}
