//! `forgeloop show` (design §5.3): a file (or a directory's listing) of a PR's head, its base
//! branch, or a repository's default branch, from forgeloop's mirror — redacted and
//! size-bounded — so an agent learns a project's test command from its README, scripts and
//! lockfiles without cloning it with the token itself.

use serde::Serialize;

use crate::checkout::show::{At, Entry, ShowRequest, Shown};
use crate::checkout::{self, CheckoutError};
use crate::domain::pr_ref::{RepoName, parse_pr_ref};
use crate::domain::repo_path::RepoPath;
use crate::error::{Error, Result};

use super::context::{Ctx, Engine};

/// The most of a file `show` prints: enough for any README or lockfile an agent reads whole;
/// beyond it the text is cut at a line's end and `truncated` says so.
pub const MAX_BYTES: usize = 256 * 1024;

/// Whose tree to read.
#[derive(Debug, Clone)]
pub enum Target {
    /// A PR's head, or with `base` the tip of the branch it targets.
    Pr {
        /// `owner/repo#N` or its URL.
        pr: String,
        /// The base branch's tip instead of the head.
        base: bool,
    },
    /// A repository's default branch, at its tip.
    Repository(String),
}

/// What `show` printed, as `--json` gives it.
#[derive(Debug, Clone, Serialize)]
pub struct Showing {
    /// `owner/repo`.
    pub repository: String,
    /// What was read: `head of owner/repo#N`, `base branch main`, `default branch main`.
    pub at: String,
    /// The commit read (40 hex digits).
    pub commit: String,
    /// The path, `.` for the root.
    pub path: String,
    /// What is there.
    #[serde(flatten)]
    pub content: Content,
}

/// A file's text or a directory's entries.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Content {
    /// A file's (redacted) text.
    File {
        /// The file's whole size in bytes.
        size: u64,
        /// The text shown was cut at [`MAX_BYTES`].
        truncated: bool,
        /// A file with NUL bytes: its text is not shown.
        binary: bool,
        /// A symbolic link: `text` is where it points.
        symlink: bool,
        /// Spots the redactor masked.
        masked: usize,
        /// The redacted text (empty for a binary file).
        text: String,
    },
    /// A directory's entries.
    Dir {
        /// Name, kind (`file`, `dir`, `symlink`, `submodule`) and a file's size.
        entries: Vec<Entry>,
    },
}

/// Reads `path` (a directory's listing with `list`) from `target`'s tree in the mirror.
pub async fn show(ctx: &Ctx, engine: &Engine, target: &Target, path: &str, list: bool) -> Result<Showing> {
    let path = RepoPath::parse(path).map_err(|e| Error::Invalid(e.to_string()))?;
    let (repo, clone_url, at, label) = match target {
        Target::Pr { pr, base } => {
            let pr = parse_pr_ref(pr, &ctx.hosts)?;
            let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
            let (tip, label) = match base {
                false => (Tip::PrHead(pr.number, pull.head_sha), format!("head of {}", pr.shorthand())),
                true => {
                    let label = format!("base branch {} of {}", pull.base_ref, pr.shorthand());
                    (Tip::Branch(pull.base_ref), label)
                }
            };
            (pr.repo, pull.base_clone_url, tip, label)
        }
        Target::Repository(name) => {
            let repo = RepoName::parse(name).map_err(|e| Error::Invalid(e.to_string()))?;
            let info = engine.github.repository(&repo).await?;
            let label = format!("default branch {}", info.default_branch);
            (info.full_name, info.clone_url, Tip::Branch(info.default_branch), label)
        }
    };
    let job = (ctx.home.mirrors_dir(), repo.clone(), clone_url, engine.token.clone(), engine.github.is_loopback());
    let wanted = path.clone();
    let shown = tokio::task::spawn_blocking(move || {
        let (mirrors, repo, url, token, loopback) = job;
        let at = match &at {
            Tip::PrHead(number, sha) => At::PrHead(*number, sha),
            Tip::Branch(branch) => At::Branch(branch),
        };
        checkout::show::show(&ShowRequest {
            mirrors_root: &mirrors,
            repo: &repo,
            clone_url: &url,
            token: token.as_deref(),
            allow_insecure_local: loopback,
            at,
            path: &wanted,
            list,
            max_bytes: MAX_BYTES,
        })
    })
    .await
    .map_err(|e| Error::Invalid(format!("the show task failed: {e}")))?
    .map_err(|e| match e {
        CheckoutError::NotInTree { .. } | CheckoutError::WrongKind { .. } => Error::Invalid(e.to_string()),
        e => Error::Checkout(e),
    })?;
    let (commit, content) = match shown {
        Shown::Dir { commit, entries } => (commit, Content::Dir { entries }),
        Shown::File { commit, size, bytes, symlink } => (commit, file_content(ctx, size, &bytes, symlink)),
    };
    Ok(Showing { repository: repo.full_name(), at: label, commit, path: path.to_string(), content })
}

enum Tip {
    PrHead(u64, String),
    Branch(String),
}

/// The redacted text of a file's first bytes; a cut file ends at its last whole line.
fn file_content(ctx: &Ctx, size: u64, bytes: &[u8], symlink: bool) -> Content {
    let binary = bytes.iter().take(8000).any(|b| *b == 0);
    let truncated = (bytes.len() as u64) < size;
    let raw = match (binary, truncated) {
        (true, _) => String::new(),
        (false, false) => String::from_utf8_lossy(bytes).into_owned(),
        (false, true) => {
            let end = bytes.iter().rposition(|b| *b == b'\n').map_or(bytes.len(), |i| i + 1);
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        }
    };
    let text = ctx.redactor.redact(&raw).into_owned();
    let masked = text.matches("[REDACTED").count().saturating_sub(raw.matches("[REDACTED").count());
    Content::File { size, truncated, binary, symlink, masked, text }
}
