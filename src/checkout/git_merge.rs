//! git's own merge (ort: directory renames, rename/rename, file-location conflicts), run as
//! `git merge-tree --write-tree` in the bare mirror (design §5.2.1): the algorithm GitHub uses
//! for `refs/pull/N/merge`, which libgit2's `merge_trees` is not.
//!
//! The process is isolated like the emulator's: a cleared environment (only `PATH`), no system
//! or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), no hooks, no
//! replace refs, `GIT_DIR` the mirror, arguments as argv (never a shell). It only writes
//! objects into the mirror (the merged tree and blobs); forgeloop writes the merge commit.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use git2::Oid;

use super::error::CheckoutError;

/// The oldest git whose `merge-tree` forgeloop runs: `--write-tree` came in 2.38,
/// `--merge-base` (the base forgeloop found by deepening a shallow mirror) in 2.40.
pub(crate) const MIN_VERSION: (u32, u32) = (2, 40);

/// Why git's own merge cannot run here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoGit {
    /// No `git` on PATH, or it could not be started.
    Missing(String),
    /// A git older than [`MIN_VERSION`] (its `git version` line), or one that does not say.
    TooOld(String),
}

impl std::fmt::Display for NoGit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoGit::Missing(why) => write!(f, "git is not installed here (no `git` on PATH: {why})"),
            NoGit::TooOld(version) => write!(
                f,
                "the git installed here ({version}) is older than {}.{}, whose `git merge-tree` forgeloop needs",
                MIN_VERSION.0, MIN_VERSION.1
            ),
        }
    }
}

/// The merge base(s) git merges against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bases {
    /// The one merge base forgeloop found (`--merge-base`).
    One(Oid),
    /// Several (criss-cross merges): git finds them itself in the mirror and merges through a
    /// virtual base, as GitHub's merge does.
    Several,
    /// No common history: everything is an addition (`--allow-unrelated-histories`).
    Unrelated,
}

/// What git's merge gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Merged {
    /// The merged tree, written to the mirror.
    Clean(Oid),
    /// The paths that conflict: those git leaves unmerged and those its conflict messages name
    /// (a file that a directory rename would move names both places).
    Conflicts(BTreeSet<String>),
}

/// A git command on `git_dir` (none: no repository), isolated from everything but `PATH`.
fn command(program: &OsStr, git_dir: Option<&Path>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.envs([
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_NO_REPLACE_OBJECTS", "1"),
        ("GIT_OPTIONAL_LOCKS", "0"),
        ("LC_ALL", "C"),
    ]);
    if let Some(dir) = git_dir {
        cmd.env("GIT_DIR", dir).current_dir(dir);
    }
    cmd.args(["-c", "core.hooksPath=/dev/null"]);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

/// git's version when it is there and recent enough.
pub(crate) fn available(program: &OsStr) -> Result<(u32, u32), NoGit> {
    let output = command(program, None).arg("version").output().map_err(|e| NoGit::Missing(e.to_string()))?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() {
        return Err(NoGit::Missing(format!(
            "`git version` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    match parse_version(&text) {
        Some(version) if version >= MIN_VERSION => Ok(version),
        _ => Err(NoGit::TooOld(text)),
    }
}

/// `(major, minor)` of a `git version 2.47.3` line (vendor suffixes allowed).
fn parse_version(line: &str) -> Option<(u32, u32)> {
    let number = line.strip_prefix("git version ")?.split_whitespace().next()?;
    let mut parts = number.split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// Merges `head` into `base` with git's own algorithm in the bare repository `git_dir`.
pub(crate) fn merge(
    program: &OsStr,
    git_dir: &Path,
    base: Oid,
    head: Oid,
    bases: Bases,
) -> Result<Merged, CheckoutError> {
    let mut cmd = command(program, Some(git_dir));
    // Git's defaults, said: renames and directory renames followed, a file a directory rename
    // would move is a conflict (`file location`), as on GitHub.
    cmd.args(["-c", "merge.renames=true", "-c", "merge.directoryRenames=conflict"]);
    cmd.args(["merge-tree", "--write-tree", "--name-only", "-z"]);
    match bases {
        Bases::One(oid) => {
            cmd.arg(format!("--merge-base={oid}"));
        }
        Bases::Several => {}
        Bases::Unrelated => {
            cmd.arg("--allow-unrelated-histories");
        }
    }
    cmd.arg(base.to_string()).arg(head.to_string());
    let failed = |detail: String| CheckoutError::Git { step: "merging with git merge-tree", detail };
    let output = cmd.output().map_err(|e| failed(format!("cannot run git: {e}")))?;
    match output.status.code() {
        Some(0) => first_field(&output.stdout)
            .and_then(|tree| Oid::from_str(tree).ok())
            .map(Merged::Clean)
            .ok_or_else(|| failed(format!("no tree in its output {:?}", String::from_utf8_lossy(&output.stdout)))),
        Some(1) => Ok(Merged::Conflicts(conflicts(&output.stdout))),
        code => Err(failed(format!(
            "exit {}: {}",
            code.map_or_else(|| "by a signal".to_owned(), |c| c.to_string()),
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
    }
}

fn first_field(out: &[u8]) -> Option<&str> {
    std::str::from_utf8(out.split(|b| *b == 0).next()?).ok().map(str::trim)
}

/// The conflicting paths of `merge-tree --write-tree --name-only -z` output: the tree, each
/// unmerged path, an empty field, then messages (`<count> <paths…> <type> <text>`); the paths of
/// those whose type is a `CONFLICT` count too.
fn conflicts(out: &[u8]) -> BTreeSet<String> {
    let text = |field: &[u8]| String::from_utf8_lossy(field).into_owned();
    let mut fields = out.split(|b| *b == 0).skip(1);
    let mut paths: BTreeSet<String> = fields.by_ref().take_while(|f| !f.is_empty()).map(text).collect();
    while let Some(count) = fields.next().and_then(|f| std::str::from_utf8(f).ok()?.parse::<usize>().ok()) {
        let named: Vec<String> = fields.by_ref().take(count).map(text).collect();
        let kind = fields.next().map(text).unwrap_or_default();
        let _message = fields.next();
        if kind.starts_with("CONFLICT") {
            paths.extend(named);
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_the_version_line() {
        assert_eq!(parse_version("git version 2.47.3"), Some((2, 47)));
        assert_eq!(parse_version("git version 2.39.2 (Apple Git-143)"), Some((2, 39)));
        assert_eq!(parse_version("git version 2.45.1.windows.1"), Some((2, 45)));
        assert_eq!(parse_version("hub version 2.14.2"), None);
        assert!((2, 39) < MIN_VERSION && (3, 0) > MIN_VERSION);
    }

    #[test]
    fn conflicts_are_the_unmerged_paths_and_those_conflict_messages_name() {
        let out = b"ec2777dcf829450eb13d840a15f7e9ee808376f4\0pkg/b.py\0\0\
            2\0pkg/b.py\0lib/b.py\0CONFLICT (directory rename suggested)\0CONFLICT (file location): lib/b.py added\n\0\
            1\0x.txt\0Auto-merging\0Auto-merging x.txt\n\0";
        let paths: Vec<String> = conflicts(out).into_iter().collect();
        assert_eq!(paths, ["lib/b.py", "pkg/b.py"]);
        assert_eq!(first_field(out), Some("ec2777dcf829450eb13d840a15f7e9ee808376f4"));
    }

    #[test]
    fn a_missing_program_is_no_git() {
        let missing = available(OsStr::new("/nonexistent/forgeloop-no-git"));
        assert!(matches!(missing, Err(NoGit::Missing(_))), "{missing:?}");
        assert!(missing.unwrap_err().to_string().starts_with("git is not installed here"));
    }
}
