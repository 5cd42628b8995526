//! Stopping a run another process holds (design §6.6). The person (control room) or the agent
//! (`forgeloop abort`) writes a [`StopRequest`] next to the cycle and signals the pid the kernel
//! names as the lock holder (SIGUSR1), after checking it is a forgeloop process testing this
//! cycle. The holder's [`Listener`] answers by deleting the request, stops the test's process
//! group, journals the cancelled run (not an iteration) or the abort, and releases the lock.
//! The requester waits a bounded time for each step and says which one did not happen.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::domain::event_data::EventData;
use crate::domain::state::{Actor, CycleState};
use crate::domain::stop::{StopAction, StopRequest};
use crate::error::{Error, Result, StopError};
use crate::store::atomic::write_atomic;
use crate::store::journal;
use crate::store::layout::CyclePaths;
use crate::store::lock::LockError;
use crate::store::state_file;

use super::actions;
use super::context::Ctx;
use super::live::{self, LiveRun};

/// The request file, in the cycle's directory.
const REQUEST_FILE: &str = "stop-request.json";
/// How long the holder has to take the request.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(3);
/// How long it then has to stop the tests (SIGTERM, SIGKILL after the runner's grace) and
/// release the cycle.
pub const FINISH_WITHIN: Duration = Duration::from_secs(12);
/// How long an abort waits for a short mutation (a `sent`, a `reply`) to release the lock.
const BUSY_WAIT: Duration = Duration::from_secs(2);
/// The holder also looks for a request this often, in case a signal was missed.
const POLL: Duration = Duration::from_millis(250);
const STEP: Duration = Duration::from_millis(20);

/// What a stop achieved.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The cycle afterwards.
    pub state: CycleState,
    /// The process that stopped its run, when one was running elsewhere.
    pub holder: Option<u32>,
}

/// `forgeloop abort` and the control room's `a`: aborts at once when the cycle is free; when
/// another process is testing it, asks that process to stop and abort.
pub fn abort(ctx: &Ctx, paths: &CyclePaths, reason: &str, by: Actor) -> Result<Stopped> {
    let started = Instant::now();
    loop {
        match actions::abort(ctx, paths, reason, by) {
            Ok(saved) => return Ok(Stopped { state: saved.state, holder: None }),
            Err(Error::Lock(LockError::Busy { .. })) if started.elapsed() < BUSY_WAIT => {}
            Err(err) => return Err(err),
        }
        let state = state_file::load(&paths.state)?;
        if let Some(run) = live::probe(paths, &state) {
            return match ask(ctx, paths, &run, StopAction::Abort, by, reason)? {
                Answer::Obeyed(state) => Ok(Stopped { state: *state, holder: Some(run.info.pid) }),
                // The run ended on its own (or died): the cycle is free, abort it here.
                Answer::FinishedFirst(_) | Answer::Gone => {
                    actions::abort(ctx, paths, reason, by).map(|saved| Stopped { state: saved.state, holder: None })
                }
            };
        }
        std::thread::sleep(STEP * 5);
    }
}

/// The control room's `x` on a run another process started.
pub fn cancel(ctx: &Ctx, paths: &CyclePaths, by: Actor, reason: &str) -> Result<Stopped> {
    let state = state_file::load(&paths.state)?;
    let run = live::probe(paths, &state).ok_or(Error::Stop(StopError::NoRun))?;
    match ask(ctx, paths, &run, StopAction::Cancel, by, reason)? {
        Answer::Obeyed(state) => Ok(Stopped { state: *state, holder: Some(run.info.pid) }),
        Answer::FinishedFirst(status) => Err(Error::Stop(StopError::FinishedFirst { status })),
        Answer::Gone => Err(Error::Stop(StopError::HolderGone { pid: run.info.pid })),
    }
}

enum Answer {
    Obeyed(Box<CycleState>),
    FinishedFirst(String),
    Gone,
}

/// Writes the request, signals the holder and waits for each step.
fn ask(ctx: &Ctx, paths: &CyclePaths, run: &LiveRun, action: StopAction, by: Actor, reason: &str) -> Result<Answer> {
    let pid = run.info.pid;
    if !is_forgeloop(pid) {
        return Err(Error::Stop(StopError::NotForgeloop { pid }));
    }
    let request = StopRequest {
        id: request_id(),
        action,
        by,
        reason: ctx.redactor.redact(reason).into_owned(),
        requested_at: ctx.now(),
        requester_pid: std::process::id(),
        target_pid: pid,
        iteration: run.info.iteration,
    };
    let file = request_path(paths);
    let text = serde_json::to_string_pretty(&request).unwrap_or_default() + "\n";
    write_atomic(&file, text.as_bytes())
        .map_err(|source| Error::Stop(StopError::Write { path: file.clone(), source }))?;
    // Let go only when two looks agree: one look at the kernel's table can miss a lock.
    let holds = || {
        live::holder(paths) == Some(pid) || {
            std::thread::sleep(STEP);
            live::holder(paths) == Some(pid)
        }
    };
    // SAFETY: kill only sends a signal; the pid was checked to be a forgeloop holder above.
    let sent = libc::pid_t::try_from(pid).is_ok_and(|p| unsafe { libc::kill(p, libc::SIGUSR1) } == 0);
    if sent {
        let asked = Instant::now();
        while file.exists() && holds() {
            if asked.elapsed() > ANSWER_WITHIN {
                let _ = std::fs::remove_file(&file);
                return Err(Error::Stop(StopError::NoAnswer { pid, seconds: ANSWER_WITHIN.as_secs() }));
            }
            std::thread::sleep(STEP);
        }
        let taken = Instant::now();
        while holds() {
            if taken.elapsed() > FINISH_WITHIN {
                return Err(Error::Stop(StopError::NotFinished { pid, seconds: FINISH_WITHIN.as_secs() }));
            }
            std::thread::sleep(STEP);
        }
    }
    let _ = std::fs::remove_file(&file);
    let state = state_file::load(&paths.state)?;
    if obeyed(paths, &request.id) {
        return Ok(Answer::Obeyed(Box::new(state)));
    }
    // A holder that finished cleanly cleared `running`; one that died left it behind.
    Ok(if state.running.is_none() { Answer::FinishedFirst(state.status.as_str().to_owned()) } else { Answer::Gone })
}

/// Whether the journal records this request's outcome.
fn obeyed(paths: &CyclePaths, id: &str) -> bool {
    let Ok(contents) = journal::read(&paths.journal()) else { return false };
    contents.events.iter().rev().take(16).any(|event| match event.typed() {
        Some(EventData::RunCancelled { request, .. } | EventData::Aborted { request, .. }) => {
            request.as_deref() == Some(id)
        }
        _ => false,
    })
}

fn request_path(paths: &CyclePaths) -> PathBuf {
    paths.sidecar().join(REQUEST_FILE)
}

fn request_id() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos:x}", std::process::id())
}

/// The process's executable is a forgeloop binary (any path: the agent's and the person's
/// may be installed apart), or this very program (tests run the use cases in-process).
fn is_forgeloop(pid: u32) -> bool {
    let proc_dir = Path::new("/proc");
    if !proc_dir.is_dir() {
        return live::is_alive(pid);
    }
    let Ok(exe) = std::fs::read_link(proc_dir.join(pid.to_string()).join("exe")) else { return false };
    let ours = std::env::current_exe().ok();
    let name = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.starts_with("forgeloop") || ours.is_some_and(|ours| same_program(&ours, &exe))
}

/// Paths of a running program may carry a ` (deleted)` suffix after a rebuild.
fn same_program(a: &Path, b: &Path) -> bool {
    let strip = |p: &Path| p.to_string_lossy().trim_end_matches(" (deleted)").to_owned();
    strip(a) == strip(b)
}

/// The holder's side: armed before the run is published as live, it turns a stop request
/// meant for this run (or the caller's own cancel, e.g. Ctrl-C) into the run's cancel switch.
pub struct Listener {
    cancel: watch::Receiver<bool>,
    accepted: Arc<Mutex<Option<StopRequest>>>,
    task: JoinHandle<()>,
}

impl Listener {
    /// Needs a tokio runtime. The caller holds the cycle lock, so a request already on disk
    /// is left over from an earlier run and is removed.
    pub fn arm(paths: &CyclePaths, iteration: u32, outer: Option<watch::Receiver<bool>>) -> Listener {
        let file = request_path(paths);
        let _ = std::fs::remove_file(&file);
        let (tx, cancel) = watch::channel(false);
        let accepted = Arc::new(Mutex::new(None));
        let slot = accepted.clone();
        // Registered here, before the run is visible: from then on SIGUSR1 can only wake us.
        let mut signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).ok();
        if outer.as_ref().is_some_and(|rx| *rx.borrow()) {
            let _ = tx.send(true);
        }
        let task = tokio::spawn(async move {
            let mut outer = outer;
            let mut poll = tokio::time::interval(POLL);
            loop {
                tokio::select! {
                    _ = async { match signal.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
                    _ = poll.tick() => {}
                    cancelled = changed(&mut outer) => {
                        if cancelled {
                            let _ = tx.send(true);
                        }
                        continue;
                    }
                }
                if let Some(request) = take(&file, iteration) {
                    if let Ok(mut slot) = slot.lock() {
                        *slot = Some(request);
                    }
                    let _ = tx.send(true);
                    return;
                }
            }
        });
        Listener { cancel, accepted, task }
    }

    /// The run's cancel switch.
    pub fn cancel(&self) -> watch::Receiver<bool> {
        self.cancel.clone()
    }

    /// The request this run obeyed, if any.
    pub fn accepted(&self) -> Option<StopRequest> {
        self.accepted.lock().ok().and_then(|slot| slot.clone())
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Resolves with the outer switch's value when it changes; never when there is none.
async fn changed(outer: &mut Option<watch::Receiver<bool>>) -> bool {
    let Some(rx) = outer.as_mut() else { return std::future::pending().await };
    if rx.changed().await.is_err() {
        *outer = None;
        return false;
    }
    *rx.borrow_and_update()
}

/// Takes (deletes) a request meant for this process's run of `iteration`.
fn take(file: &Path, iteration: u32) -> Option<StopRequest> {
    let text = std::fs::read_to_string(file).ok()?;
    let request: StopRequest = serde_json::from_str(&text).ok()?;
    if !request.is_for(std::process::id(), iteration) {
        return None;
    }
    std::fs::remove_file(file).ok()?;
    Some(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_path_matches_itself_after_a_rebuild() {
        assert!(same_program(Path::new("/t/forgeloop"), Path::new("/t/forgeloop (deleted)")));
        assert!(!same_program(Path::new("/t/forgeloop"), Path::new("/t/other")));
        assert!(is_forgeloop(std::process::id()), "this test binary is the program itself");
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        assert!(!is_forgeloop(child.id()), "sleep is not forgeloop");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
