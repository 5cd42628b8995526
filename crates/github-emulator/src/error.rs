//! The emulator's one error type; a name GitHub would refuse ([`NameError`]) is one of its cases.
//! Uses only `names`.

use crate::names::NameError;

#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error("GitHub emulator: {action} {path}: {source}")]
    Io { action: &'static str, path: String, source: std::io::Error },
    #[error("GitHub emulator: cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    #[error("GitHub emulator: cannot run git ({0}); install git, the emulator drives it")]
    GitMissing(std::io::Error),
    #[error("GitHub emulator: `git {args}` failed in {dir}: {stderr}")]
    Git { args: String, dir: String, stderr: String },
    #[error("GitHub emulator: {0} not found")]
    NotFound(String),
    #[error("GitHub emulator: {0} already exists")]
    Exists(String),
    /// A repository name or login GitHub would not have.
    #[error("GitHub emulator: {0}")]
    Name(#[from] NameError),
    #[error("GitHub emulator: {0}")]
    Invalid(String),
}
