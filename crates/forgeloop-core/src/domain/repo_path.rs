//! A path inside a repository's tree, as a person or an agent gives it to `forgeloop show`:
//! relative, `/`-separated, never leaving the repository.

use std::fmt;

/// A checked path inside a repository: no `..`, no absolute path, no empty or `.` segment
/// (leading `./` and trailing `/` are dropped), no NUL or backslash. The root is `""`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoPath(String);

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path:?} is not a path inside the repository: {why}")]
pub struct BadRepoPath {
    /// What was given.
    pub path: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl RepoPath {
    /// Checks `text` (`README.md`, `./scripts/test.sh`, `web/`; `""` or `.` for the root).
    pub fn parse(text: &str) -> Result<RepoPath, BadRepoPath> {
        let bad = |why| BadRepoPath { path: text.to_owned(), why };
        if text.starts_with('/') {
            return Err(bad("it is absolute; give it relative to the repository's root"));
        }
        if text.contains('\0') || text.contains('\\') {
            return Err(bad("it holds a NUL or a backslash"));
        }
        if text.len() > 4096 {
            return Err(bad("it is longer than 4096 bytes"));
        }
        let mut parts = Vec::new();
        for part in text.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(bad("it climbs out with `..`")),
                p => parts.push(p),
            }
        }
        Ok(RepoPath(parts.join("/")))
    }

    /// The path, `/`-separated; `""` for the root.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() { "." } else { &self.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_are_normalised() {
        for (given, want) in [
            ("README.md", "README.md"),
            ("./scripts//test.sh", "scripts/test.sh"),
            ("web/", "web"),
            ("", ""),
            (".", ""),
        ] {
            assert_eq!(RepoPath::parse(given).unwrap().as_str(), want, "{given}");
        }
    }

    #[test]
    fn paths_that_leave_the_repository_are_refused() {
        for given in ["/etc/passwd", "../other", "a/../../b", "a/..", "a\\b", "a\0b"] {
            assert!(RepoPath::parse(given).is_err(), "{given:?} was accepted");
        }
    }
}
