//! The library's error type and its one mapping to the CLI contract: a `status` word, a
//! message, optional details, and exit code 2 (design §5).

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::domain::commands::CommandsError;
use crate::domain::machine::{ConfirmError, Refusal, SentError, StartError};
use crate::domain::pr_ref::{PrRefError, RepoNameError};
use crate::domain::state::Actor;
use crate::domain::status::Status;
use crate::domain::word::Word;
use crate::registry::RegistryError;
use crate::store::journal::JournalError;
use crate::store::layout::LayoutError;
use crate::store::lock::LockError;
use crate::store::state_file::StateFileError;
use crate::store::task_index::IndexError;

/// Everything a use case can fail with; each maps to one `status` word and exit code 2 (design §5).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input the front end should have caught: a flag combination, an unencodable value.
    #[error("{0}")]
    Invalid(String),
    /// The domain would not start a cycle (empty request, incomplete brief, zero cap).
    #[error(transparent)]
    Start(#[from] StartError),
    /// The cycle's status does not allow the asked action (design §3).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// `sent` was reported for no message, or for one already recorded as sent.
    #[error(transparent)]
    Sent(#[from] SentError),
    /// `forge` found a state at the path it would create; a cycle is never overwritten.
    #[error(
        "a cycle state already exists at {0}; forgeloop never overwrites one (the cap cannot be reset). Use another --state name, or --continue-from to carry this cycle on"
    )]
    StateExists(PathBuf),
    /// The state file is missing, unreadable, too large or invalid.
    #[error(transparent)]
    State(#[from] StateFileError),
    /// Another process holds the cycle's lock, or the lock file cannot be opened.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The task-space index refused the cycle (space taken by a live cycle) or could not be written.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The cycle's journal cannot be read or written, or its hash chain is broken.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// `--state` names no valid state file.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A pull request reference is neither a PR URL on the expected host nor `OWNER/REPO#N`.
    #[error(transparent)]
    PrRef(#[from] PrRefError),
    /// An `OWNER/REPO` is not a valid GitHub repository name.
    #[error(transparent)]
    RepoName(#[from] RepoNameError),
    /// The commands file could not be read.
    #[error("cannot read the commands file {path}: {reason}")]
    CommandsFile {
        /// The file named by `--commands`.
        path: PathBuf,
        /// The I/O error, as text.
        reason: String,
    },
    /// The commands file was read but does not parse or validate.
    #[error("invalid commands file {path}: {source}")]
    Commands {
        /// The file named by `--commands`.
        path: PathBuf,
        /// What is wrong with it.
        source: CommandsError,
    },
    /// A human-only command (named here) was run without a terminal on stdin.
    #[error(
        "`forgeloop {0}` is a human-only action: run it yourself in a terminal (stdin is not a terminal), or use `forgeloop tui`"
    )]
    NotATerminal(&'static str),
    /// New commands would widen the sandbox (how, here) and no person is at a terminal to allow it.
    #[error(
        "the new commands widen the sandbox ({0}): only a person may allow that, running `forgeloop commands` themselves in a terminal; nothing was changed"
    )]
    Widening(String),
    /// The person answered no at a confirmation prompt.
    #[error("not confirmed: nothing was changed")]
    Declined,
    /// `wait` saw no change to the cycle within its timeout (seconds, here).
    #[error("timed out after {0} s waiting for the cycle to change")]
    WaitTimeout(u64),
    /// A file or directory operation failed outside the store's own errors.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, as the message's first half ("cannot write …").
        context: String,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The configuration file cannot be read or is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// `forgeloop config set …` could not change the configuration file.
    #[error(transparent)]
    ConfigEdit(#[from] crate::config_edit::ConfigEditError),
    /// `wait` could not watch the cycle's directory for changes.
    #[error("cannot watch {path} for changes: {reason}")]
    Watch {
        /// The directory being watched.
        path: PathBuf,
        /// Why the watcher failed, as text.
        reason: String,
    },
    /// A GitHub API request failed (network, auth, rate limit, not found, …).
    #[error(transparent)]
    Github(#[from] crate::github::GithubError),
    /// A command that needs GitHub found no token in any source (design §2): it stopped before
    /// any request, and nothing was recorded. Not an infrastructure failure.
    #[error("{0}")]
    NoToken(crate::github::token::Missing),
    /// The throwaway checkout of the PR's head could not be made.
    #[error(transparent)]
    Checkout(crate::checkout::CheckoutError),
    /// The test commands could not be started or supervised (not a test failure).
    #[error(transparent)]
    Runner(crate::runner::RunnerError),
    /// Nothing ran: no sandbox here, or a commands file asked for a path it may not have.
    #[error(transparent)]
    Sandbox(crate::sandbox::SandboxError),
    /// A run failed for a reason outside the PR; after too many in a row the cycle blocks.
    #[error("the run could not complete ({infra_failures} in a row; the cycle stays {cycle_status}): {message}")]
    Infra {
        /// What went wrong.
        message: String,
        /// How many runs in a row have failed this way, this one included.
        infra_failures: u32,
        /// The cycle's status after this failure (`BLOCKED_INFRA` once the limit is reached).
        cycle_status: Status,
    },
    /// A run failed for want of network (design §5.6): not an iteration, nothing for WebGPT.
    #[error("{message}")]
    NeedsNetwork {
        /// The summary line for the agent.
        message: String,
        /// The hosts the run tried to reach, and the command that would allow them.
        needs: Box<crate::domain::needs_network::NeedsNetwork>,
        /// The run's log, when one was written.
        log_path: Option<String>,
    },
    /// The `github-checks` executor could not start waiting (design §5.7).
    #[error(transparent)]
    Checks(ChecksError),
    /// Everything `forgeloop project …` refuses; its status is the reference tool's
    /// `BLOCKED_PROJECT_UNAVAILABLE` (or `CYCLE_BUSY` / `BLOCKED_PROJECT_SOURCES`).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// `forgeloop stop` could not stop the run another process holds.
    #[error(transparent)]
    Stop(StopError),
    /// A run stopped before its verdict: by a stop request (design §6.6), Ctrl-C or SIGTERM.
    /// It was journaled and is not an iteration.
    #[error("{message}")]
    RunCancelled {
        /// What stopped it, for the agent.
        message: String,
        /// Who asked for the stop (a person, the coordinator, a signal).
        by: Actor,
        /// The cycle's status after the cancelled run was journaled.
        cycle_status: crate::domain::status::Status,
    },
}

impl From<ConfirmError> for Error {
    fn from(err: ConfirmError) -> Self {
        match err {
            ConfirmError::Refused(r) => Error::Refused(r),
            ConfirmError::Start(s) => Error::Start(s),
        }
    }
}

impl Error {
    /// An [`Error::Io`] with the context its message starts with.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { context: context.into(), source }
    }

    /// The `status` word of the JSON error document; agents branch on it.
    pub fn status(&self) -> Word {
        match self {
            Error::Start(e) if e.is_unconfirmed_delegation() => Word::Cycle(Status::BlockedDelegationUnconfirmed),
            Error::Refused(_) => Word::Refused,
            Error::Sent(SentError::AlreadySent { .. }) => Word::AlreadySent,
            Error::Sent(SentError::Nothing) => Word::NothingToSend,
            Error::StateExists(_) => Word::StateExists,
            Error::State(StateFileError::Invalid { .. } | StateFileError::TooLarge { .. }) => Word::InvalidState,
            Error::State(StateFileError::Missing(_)) => Word::NoState,
            Error::Lock(LockError::Busy { .. }) => Word::CycleBusy,
            Error::Index(IndexError::Taken { .. }) => Word::TaskSpaceTaken,
            Error::Journal(JournalError::Damaged { .. }) => Word::JournalDamaged,
            Error::NotATerminal(_) | Error::Widening(_) => Word::NotATerminal,
            Error::Declined => Word::Declined,
            Error::WaitTimeout(_) => Word::Timeout,
            Error::Infra { cycle_status, .. } if *cycle_status == Status::BlockedInfra => {
                Word::Cycle(Status::BlockedInfra)
            }
            Error::Infra { .. } => Word::InfraFailure,
            Error::NeedsNetwork { .. } => Word::NeedsNetwork,
            Error::NoToken(_) => Word::NoToken,
            Error::Registry(e) => e.status(),
            Error::Sandbox(e) => e.status(),
            Error::Stop(e) => e.status(),
            Error::RunCancelled { .. } => Word::RunCancelled,
            _ => Word::Blocked,
        }
    }

    /// The process exit code for this error; every error exits 2 (design §5).
    pub fn exit_code(&self) -> i32 {
        2
    }

    /// The JSON error document every front end gives out (the CLI prints it, MCP returns it,
    /// the demo prints it): `{"status", "error", ...details}`. Not yet redacted.
    pub fn document(&self) -> Value {
        document(self.status(), &self.to_string(), self.details())
    }

    /// Extra machine-readable fields beside `status` and `error`.
    pub fn details(&self) -> Map<String, Value> {
        let mut map = Map::new();
        match self {
            Error::Lock(LockError::Busy { pid, .. }) => {
                map.insert("pid".into(), json!(pid));
            }
            Error::Refused(refusal) => {
                map.insert("cycle_status".into(), json!(refusal.status.as_str()));
            }
            Error::Index(IndexError::Taken { owner, .. }) => {
                map.insert("owner".into(), json!(owner));
            }
            Error::Infra { infra_failures, cycle_status, .. } => {
                map.insert("infra_failures".into(), json!(infra_failures));
                map.insert("cycle_status".into(), json!(cycle_status.as_str()));
            }
            Error::NeedsNetwork { needs, log_path, .. } => {
                map.insert("needs_network".into(), json!(needs));
                if let Some(log) = log_path {
                    map.insert("log_path".into(), json!(log));
                }
            }
            Error::Registry(e) if e.status() == Word::CycleBusy => {
                map.insert("pid".into(), json!(e.busy_pid()));
            }
            Error::Stop(e) => {
                if let Some(pid) = e.pid() {
                    map.insert("pid".into(), json!(pid));
                }
            }
            Error::RunCancelled { by, cycle_status, .. } => {
                map.insert("cancelled_by".into(), json!(by.as_str()));
                map.insert("cycle_status".into(), json!(cycle_status.as_str()));
            }
            Error::Sandbox(crate::sandbox::SandboxError::Unavailable { causes, fixes }) => {
                map.insert("causes".into(), json!(causes));
                map.insert("fixes".into(), json!(fixes));
            }
            _ => {}
        }
        map
    }
}

/// A result whose error defaults to the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the `github-checks` executor could not give a verdict, or could not start (design §5.7).
#[derive(Debug, thiserror::Error)]
pub enum ChecksError {
    /// None of the wanted checks showed up on the head commit within `appear_timeout_s`.
    #[error(
        "no check run named {names} appeared on {sha} within {waited} s (appear_timeout_s); {hint} This is not a verdict on the PR."
    )]
    NeverAppeared {
        /// The wanted check names, joined for the message.
        names: String,
        /// The head commit that was watched.
        sha: String,
        /// How long it waited, in seconds.
        waited: u64,
        /// Why a check may never appear (workflow filters, a fork's PR, …).
        hint: &'static str,
    },
    /// The wanted checks appeared but were not all finished within `timeout_s`.
    #[error(
        "the checks {names} did not finish on {sha} within {waited} s (timeout_s in the commands file); raise it if the suite is that slow, or look at the repository's CI. This is not a verdict on the PR."
    )]
    TimedOut {
        /// The unfinished check names, joined for the message.
        names: String,
        /// The head commit that was watched.
        sha: String,
        /// How long it waited, in seconds.
        waited: u64,
    },
    /// `"checks": "required"` could not be resolved to names (no protection, or the token may not read it).
    #[error("\"checks\": \"required\": {0}; name the checks in the commands file instead, e.g. \"checks\": [\"test\"]")]
    Required(String),
    /// The profile's `workflow_dispatch` cannot run for this PR (its head is in a fork).
    #[error("\"dispatch\": {0}")]
    Dispatch(String),
    /// `--rerun-failed` could not re-run the failed checks (none failed, not Actions, not allowed).
    #[error("cannot re-run the failed checks: {0}")]
    Rerun(String),
    /// The run log could not be written.
    #[error("cannot write the run log {path}: {source}")]
    Log {
        /// The run log's path.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A GitHub request failed while waiting for the checks.
    #[error(transparent)]
    Github(#[from] crate::github::GithubError),
}

/// Why a run held by another process could not be stopped (design §6.6).
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    /// No run is in progress for the cycle.
    #[error("no test is running for this cycle; there is nothing to cancel")]
    NoRun,
    /// The run finished before the stop request reached its process.
    #[error("the run ended before the request reached it (the cycle is {status}); nothing was cancelled")]
    FinishedFirst {
        /// The cycle's status after that run.
        status: String,
    },
    /// The process holding the cycle's lock no longer exists.
    #[error(
        "the process testing this cycle (pid {pid}) is gone: it exited without recording the run; nothing is running now"
    )]
    HolderGone {
        /// The lock holder's process id.
        pid: u32,
    },
    /// The holder did not take the stop request in time (perhaps an older forgeloop).
    #[error(
        "pid {pid} holds this cycle but did not answer the stop request within {seconds} s; nothing was changed. \
         It may be an older forgeloop: `kill -TERM {pid}` stops its run"
    )]
    NoAnswer {
        /// The lock holder's process id.
        pid: u32,
        /// How long forgeloop waited, in seconds.
        seconds: u64,
    },
    /// The holder took the request but still holds the cycle after the grace period.
    #[error(
        "pid {pid} took the stop request but still holds the cycle after {seconds} s; its test processes may ignore \
         SIGTERM and are being killed"
    )]
    NotFinished {
        /// The lock holder's process id.
        pid: u32,
        /// How long forgeloop waited, in seconds.
        seconds: u64,
    },
    /// The lock's pid belongs to a process that is not forgeloop (a reused pid); nothing was signalled.
    #[error("the process holding this cycle (pid {pid}) is not a forgeloop process; nothing was signalled")]
    NotForgeloop {
        /// The process id recorded in the lock.
        pid: u32,
    },
    /// The stop request file could not be written.
    #[error("cannot write the stop request {path}: {source}")]
    Write {
        /// The stop request's path.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
}

impl StopError {
    /// The `status` word of the error document.
    pub fn status(&self) -> Word {
        match self {
            StopError::NoRun | StopError::FinishedFirst { .. } => Word::NoRun,
            StopError::HolderGone { .. } => Word::HolderGone,
            StopError::NoAnswer { .. } | StopError::NotFinished { .. } | StopError::NotForgeloop { .. } => {
                Word::StopUnanswered
            }
            StopError::Write { .. } => Word::Blocked,
        }
    }

    /// The process id to report beside the error, when one is known.
    pub fn pid(&self) -> Option<u32> {
        match self {
            StopError::HolderGone { pid }
            | StopError::NoAnswer { pid, .. }
            | StopError::NotFinished { pid, .. }
            | StopError::NotForgeloop { pid } => Some(*pid),
            _ => None,
        }
    }
}

/// The error document's shape, for errors that are not an [`Error`] (the MCP server's own
/// refusals, the demo's): `status` and `error` first, then the details.
pub fn document(status: Word, message: &str, details: Map<String, Value>) -> Value {
    let mut doc = Map::new();
    doc.insert("status".into(), Value::from(status.as_str()));
    doc.insert("error".into(), Value::from(message));
    for (key, value) in details {
        doc.insert(key, value);
    }
    Value::Object(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_front_end_gets_status_error_then_details() {
        let err = Error::Lock(LockError::Busy { pid: Some(42), path: PathBuf::from("/x.lock") });
        let doc = err.document();
        let keys: Vec<_> = doc.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
        assert_eq!(keys, ["status", "error", "pid"]);
        assert_eq!(doc["status"], "CYCLE_BUSY");
        assert_eq!(doc["pid"], 42);
    }
}
