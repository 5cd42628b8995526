//! The remote connector's files in `<home>/connector/` (design §8.1): `grants.json` (changed
//! only under `grants.lock`, written atomically), `journal.jsonl` (one line per call made with
//! a grant, appended) and `serving.json` (what a running `serve` serves, for the control room).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::domain::connector::{CallRecord, Grants};

use super::atomic::write_atomic;
use super::lock::{FileLock, LockError};
use super::private;

/// Why a connector file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorFileError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The file is not what forgeloop writes.
    #[error("{path} is not a valid connector file: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The grants lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
}

/// The files of `<home>/connector/`.
#[derive(Debug, Clone)]
pub struct ConnectorFiles {
    dir: PathBuf,
}

impl ConnectorFiles {
    /// The connector's files in `dir`.
    pub fn new(dir: PathBuf) -> ConnectorFiles {
        ConnectorFiles { dir }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `grants.json`.
    pub fn grants_path(&self) -> PathBuf {
        self.dir.join("grants.json")
    }

    /// `journal.jsonl`.
    pub fn journal_path(&self) -> PathBuf {
        self.dir.join("journal.jsonl")
    }

    /// `serving.json`.
    pub fn serving_path(&self) -> PathBuf {
        self.dir.join("serving.json")
    }

    /// Creates the directory (0700).
    pub fn create(&self) -> Result<(), ConnectorFileError> {
        private::create_dir_all(&self.dir).map_err(|source| ConnectorFileError::Io { path: self.dir.clone(), source })
    }

    /// The grants; none when the file does not exist.
    pub fn load_grants(&self) -> Result<Grants, ConnectorFileError> {
        let path = self.grants_path();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| ConnectorFileError::Invalid { path: path.clone(), reason: e.to_string() }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Grants::default()),
            Err(source) => Err(ConnectorFileError::Io { path, source }),
        }
    }

    /// Changes the grants under their lock and writes them back atomically, unless `change`
    /// returns an error (then nothing is written).
    pub fn update_grants<T, E>(
        &self,
        change: impl FnOnce(&mut Grants) -> Result<T, E>,
    ) -> Result<Result<T, E>, ConnectorFileError> {
        self.create()?;
        let _lock = FileLock::acquire_blocking(&self.dir.join("grants.lock"))?;
        let mut grants = self.load_grants()?;
        let out = match change(&mut grants) {
            Ok(out) => out,
            Err(e) => return Ok(Err(e)),
        };
        let path = self.grants_path();
        let mut text = serde_json::to_string_pretty(&grants)
            .map_err(|e| ConnectorFileError::Invalid { path: path.clone(), reason: e.to_string() })?;
        text.push('\n');
        write_atomic(&path, text.as_bytes()).map_err(|source| ConnectorFileError::Io { path, source })?;
        Ok(Ok(out))
    }

    /// Appends one line (already redacted by the caller) to the journal.
    pub fn journal(&self, line: &CallRecord) -> Result<(), ConnectorFileError> {
        let path = self.journal_path();
        let io_err = |source| ConnectorFileError::Io { path: path.clone(), source };
        let mut file = private::open(std::fs::OpenOptions::new().create(true).append(true), &path).map_err(io_err)?;
        let mut text = serde_json::to_string(line).map_err(|e| io_err(std::io::Error::other(e)))?;
        text.push('\n');
        file.write_all(text.as_bytes()).map_err(io_err)
    }

    /// The journal's last `max` lines that parse (oldest first); a line of a kind this version
    /// does not know is left out.
    pub fn journal_tail(&self, max: usize) -> Vec<CallRecord> {
        let Ok(text) = std::fs::read_to_string(self.journal_path()) else { return Vec::new() };
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.len().saturating_sub(max);
        lines[start..].iter().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Records what `serve` serves now.
    pub fn write_serving(&self, serving: &Serving) -> Result<(), ConnectorFileError> {
        let path = self.serving_path();
        let text = serde_json::to_string_pretty(serving)
            .map_err(|e| ConnectorFileError::Invalid { path: path.clone(), reason: e.to_string() })?;
        write_atomic(&path, text.as_bytes()).map_err(|source| ConnectorFileError::Io { path, source })
    }

    /// What a `serve` recorded, if it did (it may have died since: check `pid`).
    pub fn read_serving(&self) -> Option<Serving> {
        let bytes = std::fs::read(self.serving_path()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// `serve` stopped: it serves nothing now.
    pub fn remove_serving(&self) {
        let _ = std::fs::remove_file(self.serving_path());
    }
}

/// `serving.json`: what a running `forgeloop serve` serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Serving {
    /// The process.
    pub pid: u32,
    /// Where it listens (`http://127.0.0.1:8787`).
    pub url: String,
    /// The MCP endpoint clients are given (`<public url>/mcp`).
    pub mcp_url: String,
    /// The pairing code in force (`XXXX-XXXX`), if one is.
    pub pairing_code: Option<String>,
    /// When it stops working (RFC 3339).
    pub pairing_expires_at: Option<String>,
    /// When `serve` started (RFC 3339).
    pub started_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_round_trip_under_the_lock_and_a_refused_change_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let files = ConnectorFiles::new(dir.path().join("connector"));
        assert_eq!(files.load_grants().unwrap(), Grants::default());
        let out: Result<(), &str> = files.update_grants(|_| Err("no")).unwrap();
        assert_eq!(out, Err("no"));
        assert!(!files.grants_path().exists(), "a refused change writes no file");
        files
            .update_grants(|g| {
                g.extra.insert("k".into(), serde_json::json!(1));
                Ok::<_, ()>(())
            })
            .unwrap()
            .unwrap();
        assert_eq!(files.load_grants().unwrap().extra["k"], 1);
    }

    #[test]
    fn the_journal_appends_and_reads_its_tail_typed() {
        let dir = tempfile::tempdir().unwrap();
        let files = ConnectorFiles::new(dir.path().to_path_buf());
        let tool = |i: usize| CallRecord::Tool {
            at: format!("2026-12-05T00:00:0{i}Z"),
            grant: "g1".into(),
            client: "c".into(),
            tool: "wait".into(),
            ok: i.is_multiple_of(2),
            status: Some("AWAITING_PR".into()),
        };
        for i in 0..5 {
            files.journal(&tool(i)).unwrap();
        }
        // A line of a kind this version does not know is left out, not an error.
        std::fs::write(
            files.journal_path(),
            std::fs::read_to_string(files.journal_path()).unwrap() + "{\"kind\":\"future\"}\n",
        )
        .unwrap();
        assert_eq!(files.journal_tail(3), vec![tool(3), tool(4)]);
        let written = std::fs::read_to_string(files.journal_path()).unwrap();
        let first: serde_json::Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
        assert_eq!(first["kind"], "tool", "{first}");
        assert_eq!(first["status"], "AWAITING_PR", "{first}");
    }
}
