//! Reading and writing a cycle's state document.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::domain::state::{CycleState, StateError};

use super::atomic::write_atomic;

/// A state larger than this is refused rather than read into memory.
pub const MAX_STATE_BYTES: u64 = 32 * 1024 * 1024;

/// Why a state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// No file at the path (`NO_STATE`).
    #[error("no cycle state at {0}; create one with `forgeloop forge --request …`")]
    Missing(PathBuf),
    /// The file exists but could not be read.
    #[error("cannot read the state {path}: {source}")]
    Read {
        /// The state file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The atomic write failed; the old file is intact.
    #[error("cannot write the state {path}: {source}")]
    Write {
        /// The state file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The file is larger than [`MAX_STATE_BYTES`]; it was not read.
    #[error("the state {path} is larger than {MAX_STATE_BYTES} bytes")]
    TooLarge {
        /// The state file.
        path: PathBuf,
    },
    /// The bytes are not a cycle state (`INVALID_STATE`).
    #[error("invalid state {path}: {source}")]
    Invalid {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        source: StateError,
    },
}

/// The state file's bytes, at most [`MAX_STATE_BYTES`] of them.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, StateFileError> {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(StateFileError::Missing(path.to_path_buf())),
        Err(source) => return Err(StateFileError::Read { path: path.to_path_buf(), source }),
    };
    let mut bytes = Vec::new();
    file.take(MAX_STATE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| StateFileError::Read { path: path.to_path_buf(), source })?;
    if bytes.len() as u64 > MAX_STATE_BYTES {
        return Err(StateFileError::TooLarge { path: path.to_path_buf() });
    }
    Ok(bytes)
}

/// Reads and parses the state file at `path`.
pub fn load(path: &Path) -> Result<CycleState, StateFileError> {
    let bytes = read_bytes(path)?;
    CycleState::from_bytes(&bytes).map_err(|source| StateFileError::Invalid { path: path.to_path_buf(), source })
}

/// Writes the document as given; callers redact it first (see `cycle::session`).
pub fn save_text(path: &Path, text: &str) -> Result<(), StateFileError> {
    write_atomic(path, text.as_bytes()).map_err(|source| StateFileError::Write { path: path.to_path_buf(), source })
}
