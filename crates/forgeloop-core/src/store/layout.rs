//! Where things live on disk (design §2): the forgeloop home and a cycle's files.

use std::path::{Path, PathBuf};

use crate::domain::task_space;

/// `<home>`: cycles, the task-space index, git mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// The home at `root` (resolved by the front end: flag, environment, config, default).
    pub fn new(root: PathBuf) -> Home {
        Home { root }
    }

    /// The home directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<home>/cycles/`: where a bare `--state NAME` lives.
    pub fn cycles_dir(&self) -> PathBuf {
        self.root.join("cycles")
    }

    /// `<home>/task-spaces/`: the task-space index (design §3 rule 7).
    pub fn task_spaces_dir(&self) -> PathBuf {
        self.root.join("task-spaces")
    }

    /// `<home>/mirrors/`: a git mirror per repository, shared by its runs.
    pub fn mirrors_dir(&self) -> PathBuf {
        self.root.join("mirrors")
    }

    /// One directory per live test run: its checkout, private `/tmp` and `HOME` (design §5.6).
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    /// Warm caches per repository and slot (design §5.6).
    pub fn caches_dir(&self) -> PathBuf {
        self.root.join("caches")
    }

    /// The base branch's own per-test results, per repository, base commit and commands: what
    /// a run's evidence is judged against (issue 57).
    pub fn baselines_dir(&self) -> PathBuf {
        self.root.join("baselines")
    }

    /// The remote connector's grants, journal and what `serve` is serving (design §8.1).
    pub fn connector_dir(&self) -> PathBuf {
        self.root.join("connector")
    }

    /// Review cycles' shared records: the repositories a person already let a packet go out for.
    pub fn reviews_dir(&self) -> PathBuf {
        self.root.join("reviews")
    }

    /// Where `--keep-checkout` leaves checkouts.
    pub fn kept_dir(&self) -> PathBuf {
        self.root.join("kept")
    }

    /// Resolves a `--state` value: a bare name (no `/`, no `.json`) is a cycle in the
    /// cycles directory; anything else is a path, relative to the working directory.
    pub fn resolve_state(&self, arg: &str) -> Result<PathBuf, LayoutError> {
        let arg = arg.trim();
        if arg.is_empty() {
            return Err(LayoutError::Empty);
        }
        let is_bare = !arg.contains('/') && !arg.contains('\\') && !arg.ends_with(".json");
        let path = if is_bare {
            if arg == "." || arg == ".." {
                return Err(LayoutError::BadName(arg.to_owned()));
            }
            self.cycles_dir().join(format!("{arg}.json"))
        } else {
            PathBuf::from(expand_tilde(arg))
        };
        let path = std::path::absolute(&path).map_err(|_| LayoutError::BadName(arg.to_owned()))?;
        CyclePaths::new(path.clone())?;
        Ok(path)
    }
}

/// Paths written as `~/...` (home redacted away) point back into the home directory.
pub fn expand_tilde(text: &str) -> String {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest).to_string_lossy().into_owned(),
        _ => text.to_owned(),
    }
}

/// Why a `--state` value cannot name a cycle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// It is blank.
    #[error("--state is empty")]
    Empty,
    /// It cannot name a state file (`.`, `..`, a path without a file name).
    #[error("{0:?} cannot be a state file name")]
    BadName(String),
    /// It ends in `.d` or `.lock`, names a cycle's own files use.
    #[error("the state file may not end in .d or .lock (those names belong to a cycle's own files): {0}")]
    Reserved(String),
}

/// A cycle's files: `NAME.json`, `NAME.lock`, and `NAME.d/{events.jsonl,runs/}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CyclePaths {
    /// The state file, `NAME.json` (absolute when resolved from `--state`).
    pub state: PathBuf,
    /// The file name without its last extension: the task-space key's tail.
    pub stem: String,
}

impl CyclePaths {
    /// The files of the cycle whose state is at `state`; refuses names a cycle cannot have.
    pub fn new(state: PathBuf) -> Result<CyclePaths, LayoutError> {
        let display = state.display().to_string();
        let stem = task_space::stem(&state).ok_or_else(|| LayoutError::BadName(display.clone()))?;
        if matches!(state.extension().and_then(|e| e.to_str()), Some("d" | "lock")) {
            return Err(LayoutError::Reserved(display));
        }
        Ok(CyclePaths { state, stem })
    }

    /// The cycle's browser conversation key, `webgpt-orchestrator:<stem>`.
    pub fn task_space(&self) -> String {
        task_space::task_space(&self.stem)
    }

    /// `NAME.lock`, the writer lock (design §3 rule 6).
    pub fn lock(&self) -> PathBuf {
        self.state.with_extension("lock")
    }

    /// `NAME.d/`, the directory of the cycle's other files.
    pub fn sidecar(&self) -> PathBuf {
        self.state.with_extension("d")
    }

    /// `NAME.d/events.jsonl`, the journal.
    pub fn journal(&self) -> PathBuf {
        self.sidecar().join("events.jsonl")
    }

    /// `NAME.d/runs/`, each run's log and report.
    pub fn runs(&self) -> PathBuf {
        self.sidecar().join("runs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_go_to_the_cycles_dir_and_paths_stay_paths() {
        let home = Home::new(PathBuf::from("/h"));
        assert_eq!(home.resolve_state("dark-mode").unwrap(), PathBuf::from("/h/cycles/dark-mode.json"));
        assert_eq!(home.resolve_state("/tmp/c/x.json").unwrap(), PathBuf::from("/tmp/c/x.json"));
        let relative = home.resolve_state("cycle.json").unwrap();
        assert!(relative.is_absolute() && relative.ends_with("cycle.json"));
        assert!(home.resolve_state("").is_err());
        assert!(home.resolve_state("..").is_err());
        assert!(home.resolve_state("/tmp/x.lock").is_err());
    }

    #[test]
    fn cycle_files_sit_beside_the_state() {
        let paths = CyclePaths::new(PathBuf::from("/c/add-dark-mode.json")).unwrap();
        assert_eq!(paths.lock(), PathBuf::from("/c/add-dark-mode.lock"));
        assert_eq!(paths.journal(), PathBuf::from("/c/add-dark-mode.d/events.jsonl"));
        assert_eq!(paths.runs(), PathBuf::from("/c/add-dark-mode.d/runs"));
        assert_eq!(paths.task_space(), "webgpt-orchestrator:add-dark-mode");
    }
}
