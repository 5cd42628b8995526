//! `forgeloop gc`'s use case: what forgeloop may delete of its own, all in one pass — git
//! mirrors no cycle used for `unused_days` (those a running cycle holds are left alone), run
//! directories of runs whose forgeloop died before it could clean up, and the warm caches down
//! to `[cache] max_gb`, least recently used first.

use serde::Serialize;

use crate::cache::Trimmed;
use crate::checkout::MirrorInfo;
use crate::domain::word::Word;
use crate::error::{Error, Result};
use crate::sandbox::rundir::Swept;

pub use crate::checkout::DEFAULT_UNUSED_DAYS;

use super::context::Ctx;

/// What was (or, with `dry_run`, would be) deleted.
#[derive(Debug, Serialize)]
pub struct Collected {
    /// Always `GC_DONE`.
    pub status: Word,
    /// Whether this only listed what would be deleted.
    pub dry_run: bool,
    /// How many days unused made a mirror deletable (`--unused-days`).
    pub unused_days: u64,
    /// Mirrors deleted (or, with `dry_run`, that would be).
    pub removed: Vec<MirrorInfo>,
    /// Mirrors unused long enough but locked by a running cycle: left alone.
    pub in_use: Vec<MirrorInfo>,
    /// How many mirrors were used too recently to delete.
    pub kept: usize,
    /// Bytes the deleted mirrors took.
    pub freed_bytes: u64,
    /// Run directories of runs whose forgeloop died, swept.
    pub run_dirs: Swept,
    /// Warm caches trimmed to `[cache] max_gb`.
    pub caches: Trimmed,
}

/// Collects, or lists with `dry_run`.
pub fn collect(ctx: &Ctx, unused_days: u64, dry_run: bool) -> Result<Collected> {
    let mirrors =
        crate::checkout::collect_mirrors(&ctx.home.mirrors_dir(), unused_days, std::time::SystemTime::now(), dry_run)
            .map_err(Error::Checkout)?;
    let run_dirs = crate::sandbox::rundir::sweep(&ctx.home.runs_dir(), dry_run);
    let caches = crate::cache::trim(&ctx.home.caches_dir(), ctx.config.cache.max_bytes(), dry_run);
    Ok(Collected {
        status: Word::GcDone,
        dry_run,
        unused_days,
        removed: mirrors.removed,
        in_use: mirrors.in_use,
        kept: mirrors.kept,
        freed_bytes: mirrors.freed_bytes,
        run_dirs,
        caches,
    })
}
