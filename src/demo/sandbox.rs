//! The demo's sandbox: a directory that is the forgeloop home (cycles, task spaces, mirrors),
//! the Project registry and the emulator's repositories all at once, so nothing outside it is
//! touched. A temporary one is removed at the end; `--home DIR` keeps it for a look afterwards
//! (`forgeloop tui --home DIR`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::DemoError;
use crate::store::atomic::write_atomic;
use crate::store::{private, tighten};

/// Marks a directory as a demo sandbox, so `--home` may reuse it and nothing else.
pub const MARKER: &str = ".forgeloop-demo";

/// What the demo creates in a sandbox; reusing a sandbox removes exactly these.
const OWNED: &[&str] = &[
    "cycles",
    "task-spaces",
    "mirrors",
    "registry",
    "github",
    "tests",
    "run",
    "baselines",
    "kept",
    "caches",
    "connector",
    "reviews",
    "serve.log",
    "commands.json",
    "config.toml",
    ".config.toml.lock",
    tighten::MARKER,
];

/// The demo's own directory: its forgeloop home, the emulator's repositories and everything else
/// it makes. Temporary (removed at the end) unless `--home` named it.
pub struct Sandbox {
    root: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl Sandbox {
    /// A fresh temporary sandbox, or `home` (created when missing; refused when it holds
    /// anything but a previous demo sandbox, which is replaced).
    pub fn create(home: Option<&Path>) -> Result<Sandbox, DemoError> {
        let sandbox = match home {
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("forgeloop-demo-")
                    .tempdir()
                    .map_err(|e| DemoError::io("cannot create a temporary sandbox", e))?;
                Sandbox { root: temp.path().to_path_buf(), temp: Some(temp) }
            }
            Some(dir) => {
                let root = std::path::absolute(dir).map_err(|e| DemoError::io("cannot resolve --home", e))?;
                prepare_dir(&root)?;
                Sandbox { root, temp: None }
            }
        };
        let marker = format!(
            "This directory is a forgeloop demo sandbox (forgeloop {}).\n\
Running `forgeloop demo --home {}` again replaces what the demo made in it.\n",
            env!("CARGO_PKG_VERSION"),
            sandbox.root.display()
        );
        write_atomic(&sandbox.root.join(MARKER), marker.as_bytes())
            .map_err(|e| DemoError::io("cannot mark the sandbox", e))?;
        Ok(sandbox)
    }

    /// The sandbox's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the sandbox stays after the demo (`--home` was given).
    pub fn kept(&self) -> bool {
        self.temp.is_none()
    }

    /// Where the emulator keeps its bare repositories.
    pub fn emulator_root(&self) -> PathBuf {
        self.root.join("github")
    }

    /// Removes a temporary sandbox; keeps one given with `--home`. Through the sandbox's own
    /// remover: the warm caches' overlay work directories are `0000` (overlayfs makes them so),
    /// which a plain recursive remove by anyone but root stops at.
    pub fn finish(self) -> Result<(), DemoError> {
        match self.temp {
            Some(temp) => {
                let path = temp.keep();
                crate::store::tree::remove_tree(&path).map_err(|left| {
                    DemoError::io(
                        format!("cannot remove the temporary sandbox {} ({left})", path.display()),
                        left.error,
                    )
                })
            }
            None => Ok(()),
        }
    }
}

fn prepare_dir(root: &Path) -> Result<(), DemoError> {
    if !root.exists() {
        return private::create_dir_all(root).map_err(|e| DemoError::io("cannot create the --home directory", e));
    }
    if !root.is_dir() {
        return Err(DemoError::Home { path: root.to_path_buf(), reason: "it is not a directory".into() });
    }
    let entries = names(root)?;
    if entries.is_empty() {
        return Ok(());
    }
    if !entries.iter().any(|n| n == MARKER) {
        return Err(DemoError::Home {
            path: root.to_path_buf(),
            reason: format!(
                "it is not empty and not a previous demo sandbox (no {MARKER}); pick a new or empty directory, or omit --home for a temporary sandbox"
            ),
        });
    }
    for name in OWNED {
        let path = root.join(name);
        // A run directory may hold what a test made unreadable: the sandbox's own remover.
        crate::store::tree::remove_tree(&path).map_err(|left| {
            DemoError::io(format!("cannot clear {} of the previous demo ({left})", path.display()), left.error)
        })?;
    }
    let left: Vec<String> = names(root)?.into_iter().filter(|n| n != MARKER).collect();
    if !left.is_empty() {
        return Err(DemoError::Home {
            path: root.to_path_buf(),
            reason: format!(
                "it holds files the demo did not make ({}); move them or pick another directory",
                left.join(", ")
            ),
        });
    }
    Ok(())
}

fn names(dir: &Path) -> Result<Vec<String>, DemoError> {
    let read = std::fs::read_dir(dir).map_err(|e| DemoError::io(format!("cannot list {}", dir.display()), e))?;
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| DemoError::io(format!("cannot list {}", dir.display()), e))?;
        out.push(entry.file_name().to_string_lossy().into_owned());
    }
    out.sort();
    Ok(out)
}

/// A token for this run of the emulator, shaped like a GitHub token (so every redaction rule
/// applies to it) and made fresh each time: never a literal.
pub fn fresh_token() -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut seed = [0u8; 32];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut seed)).is_ok();
    if !from_os {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let mut hasher = Sha256::new();
        hasher.update(nanos.to_le_bytes());
        hasher.update(std::process::id().to_le_bytes());
        hasher.update(CALLS.fetch_add(1, Ordering::Relaxed).to_le_bytes());
        seed.copy_from_slice(&hasher.finalize());
    }
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut out = String::from("ghp_");
    let mut block = Sha256::digest(seed);
    for i in 0..36 {
        if i == 32 {
            block = Sha256::digest(block);
        }
        out.push(char::from(ALPHABET[usize::from(block[i % 32]) % ALPHABET.len()]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_token_shaped() {
        let (a, b) = (fresh_token(), fresh_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 40);
        assert!(a.starts_with("ghp_") && a[4..].chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn home_must_be_new_empty_or_a_previous_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("sb");
        let sb = Sandbox::create(Some(&home)).unwrap();
        assert!(sb.kept() && home.join(MARKER).exists());
        std::fs::create_dir_all(home.join("cycles/x.d")).unwrap();
        std::fs::write(home.join("commands.json"), "[]").unwrap();
        // A previous sandbox is cleared of what the demo made.
        Sandbox::create(Some(&home)).unwrap();
        assert!(!home.join("cycles").exists() && !home.join("commands.json").exists());
        // Something the demo did not make is never removed.
        std::fs::write(home.join("notes.txt"), "mine").unwrap();
        let err = Sandbox::create(Some(&home)).err().unwrap().to_string();
        assert!(err.contains("notes.txt"), "{err}");
        assert!(home.join("notes.txt").exists());
        // A non-empty directory that is not a sandbox is refused and left alone.
        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("keep"), "x").unwrap();
        let err = Sandbox::create(Some(&other)).err().unwrap().to_string();
        assert!(err.contains("not a previous demo sandbox"), "{err}");
        assert!(!other.join(MARKER).exists());
    }

    #[test]
    fn a_temporary_sandbox_is_removed() {
        let sb = Sandbox::create(None).unwrap();
        let root = sb.root().to_path_buf();
        assert!(root.join(MARKER).exists() && !sb.kept());
        sb.finish().unwrap();
        assert!(!root.exists());
    }
}
