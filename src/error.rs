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

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Start(#[from] StartError),
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Sent(#[from] SentError),
    #[error(
        "a cycle state already exists at {0}; forgeloop never overwrites one (the cap cannot be reset). Use another --state name, or --continue-from to carry this cycle on"
    )]
    StateExists(PathBuf),
    #[error(transparent)]
    State(#[from] StateFileError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    PrRef(#[from] PrRefError),
    #[error(transparent)]
    RepoName(#[from] RepoNameError),
    #[error("cannot read the commands file {path}: {reason}")]
    CommandsFile { path: PathBuf, reason: String },
    #[error("invalid commands file {path}: {source}")]
    Commands { path: PathBuf, source: CommandsError },
    #[error(
        "`forgeloop {0}` is a human-only action: run it yourself in a terminal (stdin is not a terminal), or use `forgeloop tui`"
    )]
    NotATerminal(&'static str),
    #[error(
        "the new commands widen the sandbox ({0}): only a person may allow that, running `forgeloop commands` themselves in a terminal; nothing was changed"
    )]
    Widening(String),
    #[error("not confirmed: nothing was changed")]
    Declined,
    #[error("timed out after {0} s waiting for the cycle to change")]
    WaitTimeout(u64),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    ConfigEdit(#[from] crate::config_edit::ConfigEditError),
    #[error("cannot watch {path} for changes: {reason}")]
    Watch { path: PathBuf, reason: String },
    #[error(transparent)]
    Github(#[from] crate::github::GithubError),
    /// A command that needs GitHub found no token in any source (design §2): it stopped before
    /// any request, and nothing was recorded. Not an infrastructure failure.
    #[error("{0}")]
    NoToken(crate::github::token::Missing),
    #[error(transparent)]
    Checkout(crate::checkout::CheckoutError),
    #[error(transparent)]
    Runner(crate::runner::RunnerError),
    /// Nothing ran: no sandbox here, or a commands file asked for a path it may not have.
    #[error(transparent)]
    Sandbox(crate::sandbox::SandboxError),
    #[error("the run could not complete ({infra_failures} in a row; the cycle stays {cycle_status}): {message}")]
    Infra { message: String, infra_failures: u32, cycle_status: Status },
    /// A run failed for want of network (design §5.6): not an iteration, nothing for WebGPT.
    #[error("{message}")]
    NeedsNetwork { message: String, needs: Box<crate::domain::needs_network::NeedsNetwork>, log_path: Option<String> },
    /// The `github-checks` executor could not start waiting (design §5.7).
    #[error(transparent)]
    Checks(ChecksError),
    /// Everything `forgeloop project …` refuses; its status is the reference tool's
    /// `BLOCKED_PROJECT_UNAVAILABLE` (or `CYCLE_BUSY` / `BLOCKED_PROJECT_SOURCES`).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Stop(StopError),
    /// A run stopped before its verdict: by a stop request (design §6.6), Ctrl-C or SIGTERM.
    /// It was journaled and is not an iteration.
    #[error("{message}")]
    RunCancelled { message: String, by: Actor, cycle_status: crate::domain::status::Status },
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

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the `github-checks` executor could not give a verdict, or could not start (design §5.7).
#[derive(Debug, thiserror::Error)]
pub enum ChecksError {
    #[error(
        "no check run named {names} appeared on {sha} within {waited} s (appear_timeout_s); {hint} This is not a verdict on the PR."
    )]
    NeverAppeared { names: String, sha: String, waited: u64, hint: &'static str },
    #[error(
        "the checks {names} did not finish on {sha} within {waited} s (timeout_s in the commands file); raise it if the suite is that slow, or look at the repository's CI. This is not a verdict on the PR."
    )]
    TimedOut { names: String, sha: String, waited: u64 },
    #[error("\"checks\": \"required\": {0}; name the checks in the commands file instead, e.g. \"checks\": [\"test\"]")]
    Required(String),
    #[error("\"dispatch\": {0}")]
    Dispatch(String),
    #[error("cannot re-run the failed checks: {0}")]
    Rerun(String),
    #[error("cannot write the run log {path}: {source}")]
    Log { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Github(#[from] crate::github::GithubError),
}

/// Why a run held by another process could not be stopped (design §6.6).
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("no test is running for this cycle; there is nothing to cancel")]
    NoRun,
    #[error("the run ended before the request reached it (the cycle is {status}); nothing was cancelled")]
    FinishedFirst { status: String },
    #[error(
        "the process testing this cycle (pid {pid}) is gone: it exited without recording the run; nothing is running now"
    )]
    HolderGone { pid: u32 },
    #[error(
        "pid {pid} holds this cycle but did not answer the stop request within {seconds} s; nothing was changed. \
         It may be an older forgeloop: `kill -TERM {pid}` stops its run"
    )]
    NoAnswer { pid: u32, seconds: u64 },
    #[error(
        "pid {pid} took the stop request but still holds the cycle after {seconds} s; its test processes may ignore \
         SIGTERM and are being killed"
    )]
    NotFinished { pid: u32, seconds: u64 },
    #[error("the process holding this cycle (pid {pid}) is not a forgeloop process; nothing was signalled")]
    NotForgeloop { pid: u32 },
    #[error("cannot write the stop request {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
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
