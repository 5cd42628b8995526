//! Reading and writing a cycle's state document.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::domain::state::{CycleState, StateError};

use super::atomic::write_atomic;

/// A state larger than this is refused rather than read into memory.
pub const MAX_STATE_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    #[error("no cycle state at {0}; create one with `forgeloop forge --request …`")]
    Missing(PathBuf),
    #[error("cannot read the state {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write the state {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("the state {path} is larger than {MAX_STATE_BYTES} bytes")]
    TooLarge { path: PathBuf },
    #[error("invalid state {path}: {source}")]
    Invalid { path: PathBuf, source: StateError },
}

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

pub fn load(path: &Path) -> Result<CycleState, StateFileError> {
    let bytes = read_bytes(path)?;
    CycleState::from_bytes(&bytes).map_err(|source| StateFileError::Invalid { path: path.to_path_buf(), source })
}

/// Writes the document as given; callers redact it first (see `cycle::session`).
pub fn save_text(path: &Path, text: &str) -> Result<(), StateFileError> {
    write_atomic(path, text.as_bytes()).map_err(|source| StateFileError::Write { path: path.to_path_buf(), source })
}
