//! `forgeloop wait`: block until a cycle's status changes, by watching its directory
//! (never the file itself: atomic renames replace the inode) — no polling loop. Without
//! `--until` it waits for a person, and only while the cycle waits for one: a person who acted
//! between the agent's `next` and its `wait` (a quick confirmation in the control room) is not
//! missed, which would leave the agent waiting for a change that never comes.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use crate::domain::next;
use crate::domain::state::CycleState;
use crate::domain::status::Status;
use crate::error::{Error, Result};
use crate::store::layout::CyclePaths;
use crate::store::state_file::{self, StateFileError};

/// What to wait for: one of `until`; without it, while the cycle waits for a person, any
/// status other than the current one (or, for a run that needed network, the person allowing
/// it: the status stays); when it waits for no one, nothing: the state at once.
pub fn wait(paths: &CyclePaths, until: &[Status], timeout: Option<Duration>) -> Result<CycleState> {
    let initial = state_file::load(&paths.state)?;
    if until.is_empty() && !next::waits_for_person(&initial) {
        return Ok(initial);
    }
    let allowed = |state: &CycleState| state.needs_network.as_ref().map(|n| n.allowed_at.clone());
    let done = |state: &CycleState| {
        if until.is_empty() {
            state.status != initial.status || allowed(state) != allowed(&initial)
        } else {
            until.contains(&state.status)
        }
    };
    if !until.is_empty() && done(&initial) {
        return Ok(initial);
    }
    let dir = paths.state.parent().unwrap_or(Path::new("."));
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .map_err(|e| Error::Watch { path: dir.to_path_buf(), reason: e.to_string() })?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(|e| Error::Watch { path: dir.to_path_buf(), reason: e.to_string() })?;

    let deadline = timeout.map(|t| Instant::now() + t);
    // Re-read once the watch is in place: a change that happened in between is not missed.
    if let Some(state) = current(paths)?.filter(|s| done(s)) {
        return Ok(state);
    }
    loop {
        let remaining = match deadline {
            Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                Some(left) => left,
                None => return Err(Error::WaitTimeout(timeout.map_or(0, |t| t.as_secs()))),
            },
            None => Duration::from_secs(3600),
        };
        match rx.recv_timeout(remaining) {
            Ok(Ok(event)) => {
                let relevant = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_))
                    && event.paths.iter().any(|p| p.file_name() == paths.state.file_name());
                if relevant && let Some(state) = current(paths)?.filter(|s| done(s)) {
                    return Ok(state);
                }
            }
            Ok(Err(err)) => return Err(Error::Watch { path: dir.to_path_buf(), reason: err.to_string() }),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::Watch { path: dir.to_path_buf(), reason: "the watcher stopped".into() });
            }
        }
    }
}

/// The state now; a half-visible or briefly missing file is "no news", not an error.
fn current(paths: &CyclePaths) -> Result<Option<CycleState>> {
    match state_file::load(&paths.state) {
        Ok(state) => Ok(Some(state)),
        Err(StateFileError::Missing(_) | StateFileError::Invalid { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}
