//! What the Review tab asks for: a finding triaged (a question with its words), the packet approved; each through the same
//! use case as the CLI (`forgeloop triage`, `forgeloop review approve`), as the person, and
//! answered to the tab as a [`ReviewMsg`].

use std::path::PathBuf;

use crate::cycle::Ctx;
use crate::cycle::files::CyclePaths;
use crate::cycle::review;
use crate::domain::review::Decision;
use crate::domain::state::Actor;
use crate::tui::panes::PaneWork;

/// A load of the Review tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewLoad {
    /// Decide finding `number` of the cycle at `path` (`cycle::review::triage`, as `human`).
    Triage {
        /// The cycle's state file.
        path: PathBuf,
        /// The finding's number.
        number: u32,
        /// The decision.
        decision: Decision,
        /// Its note: for `QUESTION`, the question (written in the dialog the tab asks for).
        note: Option<String>,
    },
    /// A person's yes to the cycle's packet (`cycle::review::approve`, via `tui`).
    ApprovePacket {
        /// The cycle's state file.
        path: PathBuf,
    },
}

/// An answer to one of its loads.
#[derive(Debug, Clone)]
pub enum ReviewMsg {
    /// An action on the cycle at `path` finished: what to say, or why it was refused (redacted).
    Done {
        /// The cycle's state file.
        path: PathBuf,
        /// What to say, or why it failed.
        result: Result<String, String>,
    },
}

/// The work a load takes: a use case, off the event loop.
pub fn work(load: ReviewLoad, ctx: &Ctx) -> PaneWork<ReviewMsg> {
    let ctx = ctx.clone();
    PaneWork::Blocking(Box::new(move || {
        let (path, result) = match load {
            ReviewLoad::Triage { path, number, decision, note } => {
                let result = on_cycle(&ctx, &path, "triage", |ctx, paths| {
                    review::triage(ctx, paths, number, decision, note.as_deref(), Actor::Human).map(|saved| {
                        format!("finding {number}: {}; the review is {}", decision.as_str(), saved.state.status)
                    })
                });
                (path, result)
            }
            ReviewLoad::ApprovePacket { path } => {
                let result = on_cycle(&ctx, &path, "approve packet", |ctx, paths| {
                    review::approve(ctx, paths, "tui")
                        .map(|saved| format!("packet approved; the review is {}", saved.state.status))
                });
                (path, result)
            }
        };
        ReviewMsg::Done { path, result }
    }))
}

/// Runs `call` on the cycle at `path`; a failure says what failed, redacted.
fn on_cycle(
    ctx: &Ctx,
    path: &std::path::Path,
    what: &str,
    call: impl FnOnce(&Ctx, &CyclePaths) -> crate::error::Result<String>,
) -> Result<String, String> {
    CyclePaths::new(path.to_path_buf())
        .map_err(crate::error::Error::from)
        .and_then(|paths| call(ctx, &paths))
        .map_err(|e| format!("{what} failed: {}", ctx.redactor.redact(&e.to_string())))
}
