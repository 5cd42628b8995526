//! What the Diff tab asks to be read or made, and the work that does it: opening the cached
//! diff (a file read), making it (GitHub and the mirror, through `cycle::diff`), reading a
//! window of lines and searching. Each ends in a [`DiffEvent`] for this tab.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cycle::Ctx;
use crate::cycle::files::CyclePaths;
use crate::tui::effects;
use crate::tui::pager::diff::{self as diff_view, DiffEvent};
use crate::tui::panes::PaneWork;

/// A load the Diff tab asks for; each carries the tab's generation when asked, and an answer
/// for an older one is dropped.
#[derive(Debug, Clone, PartialEq)]
pub enum DiffLoad {
    /// Open the cached diff at `cache` (design §6.7): a file read, no network.
    Open {
        /// The tab's generation when asked.
        generation: u64,
        /// The cached diff file.
        cache: PathBuf,
    },
    /// Make the diff of run `iteration` of the cycle at `path` (GitHub, and the mirror for
    /// since the last run; cached by `cycle::diff::of_cycle`), then open it.
    Make {
        /// The tab's generation when asked.
        generation: u64,
        /// The cycle's state file.
        path: PathBuf,
        /// The run whose head the diff is taken at.
        iteration: u32,
        /// From the previous run's head rather than from the base branch.
        since_last: bool,
    },
    /// Read `count` lines of the diff at `path` from line `from`, starting at the checkpoint
    /// `(line, byte offset)` at or before it.
    Window {
        /// The tab's generation when asked.
        generation: u64,
        /// The diff file.
        path: PathBuf,
        /// The nearest checkpoint at or before `from`: `(line, byte offset)`.
        checkpoint: (usize, u64),
        /// The first line wanted.
        from: usize,
        /// How many lines.
        count: usize,
    },
    /// Find the next (or previous) match of `query` from line `from`, wrapping around once.
    Search {
        /// The tab's generation when asked.
        generation: u64,
        /// The diff file.
        path: PathBuf,
        /// The diff's checkpoints (`DiffDoc::checkpoints`), to turn lines into offsets and back.
        checkpoints: Arc<[u64]>,
        /// What to find (smart case).
        query: String,
        /// The line the search starts from.
        from: usize,
        /// Towards the end (`true`) or the start.
        forward: bool,
    },
}

/// The work a load takes.
pub fn work(load: DiffLoad, ctx: &Ctx) -> PaneWork<DiffEvent> {
    let redactor = ctx.redactor.clone();
    match load {
        DiffLoad::Open { generation, cache } => PaneWork::Load(Box::new(move || {
            let result = diff_view::open_cached(&cache, &redactor);
            DiffEvent::Opened { generation, result }
        })),
        DiffLoad::Make { generation, path, iteration, since_last } => {
            let ctx = ctx.clone();
            PaneWork::Task(Box::pin(async move {
                let result = match CyclePaths::new(path) {
                    Ok(paths) => effects::make_diff(ctx, paths, iteration, since_last).await.map(Some),
                    Err(e) => Err(e.to_string()),
                };
                DiffEvent::Opened { generation, result }
            }))
        }
        DiffLoad::Window { generation, path, checkpoint, from, count } => {
            PaneWork::Load(Box::new(move || match diff_view::read_lines(&path, checkpoint, from, count, &redactor) {
                Ok(lines) => DiffEvent::Window { generation, first: from, lines },
                Err(e) => DiffEvent::Failed { generation, error: format!("cannot read the diff: {e}") },
            }))
        }
        // A search scans the whole diff: not on the loader, whose reads must stay quick.
        DiffLoad::Search { generation, path, checkpoints, query, from, forward } => {
            PaneWork::Blocking(Box::new(move || match diff_view::search(&path, &checkpoints, &query, from, forward) {
                Ok(found) => DiffEvent::Found { generation, found },
                Err(e) => DiffEvent::Failed { generation, error: format!("cannot search the diff: {e}") },
            }))
        }
    }
}
