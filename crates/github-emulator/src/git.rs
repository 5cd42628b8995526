//! The emulator's repository management through the `git` CLI (test infrastructure, so the
//! real tool is used rather than a library): bare repositories, commits made with plumbing
//! (no work tree), refs.
//!
//! Every command runs with a cleared environment and no user or system git config, so a
//! developer's `commit.gpgsign` or hooks cannot change what the emulator does. Uses only
//! `error`.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::error::EmulatorError;

const ZERO_OID: &str = "0000000000000000000000000000000000000000";

static INDEX_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The environment every emulator git process gets (besides PATH).
pub(crate) fn base_env() -> Vec<(&'static str, OsString)> {
    vec![
        ("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())),
        ("HOME", std::env::temp_dir().into_os_string()),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ("GIT_CONFIG_GLOBAL", "/dev/null".into()),
        ("GIT_TERMINAL_PROMPT", "0".into()),
        ("LANG", "C".into()),
        ("GIT_AUTHOR_NAME", "Forgeloop Emulator".into()),
        ("GIT_AUTHOR_EMAIL", "emulator@forgeloop.invalid".into()),
        ("GIT_COMMITTER_NAME", "Forgeloop Emulator".into()),
        ("GIT_COMMITTER_EMAIL", "emulator@forgeloop.invalid".into()),
    ]
}

/// Runs `git args` in `dir` and returns trimmed stdout, or the failure with git's stderr.
pub(crate) async fn run(
    dir: &Path,
    args: &[&str],
    extra_env: &[(&str, &std::ffi::OsStr)],
    stdin: Option<&[u8]>,
) -> Result<String, EmulatorError> {
    let mut command = Command::new("git");
    command.args(args).current_dir(dir).env_clear().kill_on_drop(true);
    command.envs(base_env()).envs(extra_env.iter().map(|(k, v)| (*k, *v)));
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(EmulatorError::GitMissing)?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // Inputs are small (file contents, messages); a failed write shows up as git's error.
        let _ = pipe.write_all(input).await;
        drop(pipe);
    }
    let output = child.wait_with_output().await.map_err(EmulatorError::GitMissing)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(EmulatorError::Git {
            args: args.join(" "),
            dir: dir.display().to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// How long one git command that reads a repository may take before it is killed: a client
/// waiting on a diff gets an error, never a hang.
const READ_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs `git args` in `dir` and returns its stdout byte for byte (a diff keeps its last newline
/// and any bytes that are not UTF-8). Both pipes are read at once, so a large output cannot
/// stall git; more than `limit` bytes, or more than [`READ_DEADLINE`], kills git and fails.
pub(crate) async fn run_bytes(dir: &Path, args: &[&str], limit: usize) -> Result<Vec<u8>, EmulatorError> {
    let failed = |stderr: String| EmulatorError::Git { args: args.join(" "), dir: dir.display().to_string(), stderr };
    let mut command = Command::new("git");
    command.args(args).current_dir(dir).env_clear().envs(base_env()).kill_on_drop(true);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(EmulatorError::GitMissing)?;
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(failed("no output pipes".to_owned()));
    };
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let read = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            stdout.take(cap).read_to_end(&mut out).await?;
            if out.len() > limit {
                // Stops reading stderr too; dropping the child then kills git.
                return Err(std::io::Error::other(format!("output larger than {limit} bytes")));
            }
            Ok(())
        };
        tokio::try_join!(read_out, stderr.read_to_end(&mut err))?;
        let status = child.wait().await?;
        Ok::<_, std::io::Error>((status, out, err))
    };
    match tokio::time::timeout(READ_DEADLINE, read).await {
        Err(_) => Err(failed(format!("killed after {}s", READ_DEADLINE.as_secs()))),
        Ok(Err(e)) => Err(failed(e.to_string())),
        Ok(Ok((status, out, _))) if status.success() => Ok(out),
        Ok(Ok((_, _, err))) => Err(failed(String::from_utf8_lossy(&err).trim().to_owned())),
    }
}

pub(crate) async fn init_bare(parent: &Path, dir: &Path, branch: &str) -> Result<(), EmulatorError> {
    let dir = dir.to_string_lossy();
    run(parent, &["init", "--quiet", "--bare", "--initial-branch", branch, dir.as_ref()], &[], None).await?;
    Ok(())
}

pub(crate) async fn clone_bare(parent: &Path, src: &Path, dst: &Path) -> Result<(), EmulatorError> {
    let (src, dst) = (src.to_string_lossy(), dst.to_string_lossy());
    run(parent, &["clone", "--quiet", "--bare", src.as_ref(), dst.as_ref()], &[], None).await?;
    Ok(())
}

/// The commit `rev` names, if any.
pub(crate) async fn rev_parse(dir: &Path, rev: &str) -> Option<String> {
    let spec = format!("{rev}^{{commit}}");
    run(dir, &["rev-parse", "--verify", "--quiet", &spec], &[], None).await.ok()
}

/// The best common ancestor of two commits (full SHAs), if they have one.
pub(crate) async fn merge_base(dir: &Path, a: &str, b: &str) -> Option<String> {
    let (a, b) = (oid(a).ok()?, oid(b).ok()?);
    run(dir, &["merge-base", a, b], &[], None).await.ok().filter(|sha| !sha.is_empty())
}

/// `sha` when it is a full commit SHA, so it can never read as a git option; the functions
/// that put user-named commits on a command line take only these.
pub(crate) fn oid(sha: &str) -> Result<&str, EmulatorError> {
    if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(sha)
    } else {
        Err(EmulatorError::Invalid(format!("{sha:?} is not a full commit SHA")))
    }
}

/// The test merge GitHub keeps at `refs/pull/N/merge`: `head` merged into `base` (full SHAs)
/// with git's own algorithm (`git merge-tree --write-tree`, ort: directory renames and all),
/// committed with the parents `[base, head]`. `None` when they conflict (exit 1).
pub(crate) async fn test_merge(dir: &Path, base: &str, head: &str) -> Result<Option<String>, EmulatorError> {
    let (base, head) = (oid(base)?, oid(head)?);
    let args = ["merge-tree", "--write-tree", "--no-messages", "--name-only", "-z", base, head];
    let mut command = Command::new("git");
    command.args(args).current_dir(dir).env_clear().envs(base_env()).kill_on_drop(true);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let output = command.output().await.map_err(EmulatorError::GitMissing)?;
    let tree = match output.status.code() {
        Some(0) => String::from_utf8_lossy(&output.stdout).split('\0').next().unwrap_or_default().trim().to_owned(),
        Some(1) => return Ok(None),
        _ => {
            return Err(EmulatorError::Git {
                args: args.join(" "),
                dir: dir.display().to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
    };
    let tree = oid(&tree)?;
    let message = format!("Merge {head} into {base}\n");
    run(dir, &["commit-tree", tree, "-p", base, "-p", head, "-F", "-"], &[], Some(message.as_bytes())).await.map(Some)
}

pub(crate) async fn update_ref(dir: &Path, name: &str, sha: &str) -> Result<(), EmulatorError> {
    run(dir, &["update-ref", name, sha], &[], None).await.map(drop)
}

pub(crate) async fn delete_ref(dir: &Path, name: &str) -> Result<(), EmulatorError> {
    run(dir, &["update-ref", "-d", name], &[], None).await.map(drop)
}

/// Copies commit `sha` (and its history) from `from` into `to` as ref `name`.
pub(crate) async fn push_commit(from: &Path, to: &Path, sha: &str, name: &str) -> Result<(), EmulatorError> {
    let to = to.to_string_lossy();
    let refspec = format!("+{sha}:{name}");
    run(from, &["push", "--quiet", "--no-verify", to.as_ref(), &refspec], &[], None).await.map(drop)
}

/// Commits `files` onto `branch` without a work tree and returns the new commit. A missing
/// branch starts from `start` (when given and present), else as a root commit.
pub(crate) async fn commit_files(
    dir: &Path,
    branch: &str,
    start: Option<&str>,
    files: &[(String, Vec<u8>)],
    message: &str,
) -> Result<String, EmulatorError> {
    let branch_ref = format!("refs/heads/{branch}");
    let current = rev_parse(dir, &branch_ref).await;
    let parent = match (&current, start) {
        (Some(sha), _) => Some(sha.clone()),
        (None, Some(start)) => rev_parse(dir, &format!("refs/heads/{start}")).await,
        (None, None) => None,
    };
    let index = dir.join(format!("forgeloop-emulator-{}.index", INDEX_COUNTER.fetch_add(1, Ordering::Relaxed)));
    let result = commit_with_index(dir, &index, parent.as_deref(), files, message).await;
    let _ = std::fs::remove_file(&index);
    let sha = result?;
    let old = current.as_deref().unwrap_or(ZERO_OID);
    run(dir, &["update-ref", &branch_ref, &sha, old], &[], None).await?;
    Ok(sha)
}

async fn commit_with_index(
    dir: &Path,
    index: &Path,
    parent: Option<&str>,
    files: &[(String, Vec<u8>)],
    message: &str,
) -> Result<String, EmulatorError> {
    let env = [("GIT_INDEX_FILE", index.as_os_str())];
    match parent {
        Some(parent) => run(dir, &["read-tree", parent], &env, None).await?,
        None => run(dir, &["read-tree", "--empty"], &env, None).await?,
    };
    for (path, contents) in files {
        let blob = run(dir, &["hash-object", "-w", "--stdin"], &env, Some(contents)).await?;
        let info = format!("100644,{blob},{path}");
        run(dir, &["update-index", "--add", "--cacheinfo", &info], &env, None).await?;
    }
    let tree = run(dir, &["write-tree"], &env, None).await?;
    let mut args = vec!["commit-tree", tree.as_str()];
    if let Some(parent) = parent {
        args.extend(["-p", parent]);
    }
    args.extend(["-F", "-"]);
    run(dir, &args, &env, Some(message.as_bytes())).await
}

/// A branch name the emulator accepts: what `git check-ref-format --branch` allows, roughly.
pub(crate) fn valid_branch(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && !name.chars().any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
}

/// A repository-relative file path with no way out of the tree.
pub(crate) fn valid_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.chars().any(|c| c.is_control())
        && path.split('/').all(|part| !part.is_empty() && part != "." && part != ".." && part != ".git")
}
