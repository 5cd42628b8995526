//! One file or one directory of a commit, read from the repository's mirror (`forgeloop show`,
//! design §5.3): how an agent reads a project's README, test scripts and lockfiles without a
//! clone of its own (and without handling the token). What the mirror lacks is fetched at depth
//! 1 first: a PR's head by its SHA, a branch's tip by name.

use std::path::Path;

use git2::{ObjectType, Oid, Repository};

use super::error::CheckoutError;
use super::{check_clone_url, init_git_early, mirror};
use crate::domain::pr_ref::RepoName;
use crate::domain::repo_path::RepoPath;

/// Which commit to read.
#[derive(Debug, Clone, Copy)]
pub enum At<'a> {
    /// A PR's head: its number and the SHA GitHub gave for it.
    PrHead(u64, &'a str),
    /// A branch's tip on the server, as it is now.
    Branch(&'a str),
}

/// What [`show`] needs.
pub struct ShowRequest<'a> {
    /// `<home>/mirrors`.
    pub mirrors_root: &'a Path,
    /// The base repository.
    pub repo: &'a RepoName,
    /// Its clone URL, to fetch what the mirror lacks.
    pub clone_url: &'a str,
    /// The GitHub token, sent only to the clone URL's host.
    pub token: Option<&'a str>,
    /// Allow `http` to loopback, `file://` and absolute paths: only when the API base is loopback.
    pub allow_insecure_local: bool,
    /// The commit to read.
    pub at: At<'a>,
    /// The file or directory (the root when empty).
    pub path: &'a RepoPath,
    /// List a directory rather than read a file.
    pub list: bool,
    /// The most bytes of a file to return.
    pub max_bytes: usize,
}

/// A file's bytes or a directory's entries, at `commit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A file (or a symbolic link).
    File {
        /// The commit read (40 hex digits).
        commit: String,
        /// Its whole size.
        size: u64,
        /// At most `max_bytes` of it.
        bytes: Vec<u8>,
        /// A symbolic link: `bytes` is its target.
        symlink: bool,
    },
    /// A directory's listing.
    Dir {
        /// The commit read (40 hex digits).
        commit: String,
        /// Its entries, in the tree's order.
        entries: Vec<Entry>,
    },
}

/// One entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The entry's name in its directory.
    pub name: String,
    /// `file`, `dir`, `symlink` or `submodule`.
    pub kind: &'static str,
    /// A file's size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Reads `req.path` at `req.at` from the mirror (fetching the commit first when it lacks it).
/// Blocking.
pub fn show(req: &ShowRequest<'_>) -> Result<Shown, CheckoutError> {
    check_clone_url(req.clone_url, req.allow_insecure_local)?;
    init_git_early();
    let paths = mirror::mirror_paths(req.mirrors_root, req.repo)?;
    let _lock = mirror::take(&paths, None)?;
    let (repo, _) = mirror::open_or_init(&paths.dir)?;
    mirror::touch_last_used(&paths.dir)?;
    let token = req.token.filter(|t| !t.is_empty());
    let commit = match req.at {
        At::PrHead(number, sha) => {
            let oid = Oid::from_str(sha).map_err(|_| CheckoutError::InvalidSha(sha.to_owned()))?;
            if repo.find_commit(oid).is_err() {
                let refs = (format!("refs/pull/{number}/head"), mirror::pr_ref_name(number));
                let step = "fetch of the pull request's head";
                mirror::fetch_ref_tip(&repo, (&refs.0, &refs.1), req.clone_url, token, step)?;
                repo.find_commit(oid).map_err(|_| CheckoutError::Git {
                    step,
                    detail: format!("the head moved past {sha} while it was read: run the command again"),
                })?;
            }
            oid
        }
        At::Branch(branch) => {
            let refs = (format!("refs/heads/{branch}"), format!("refs/forgeloop/branch/{branch}"));
            mirror::fetch_ref_tip(&repo, (&refs.0, &refs.1), req.clone_url, token, "fetch of the branch")?
        }
    };
    read(&repo, commit, req.path, req.list, req.max_bytes)
}

fn read(repo: &Repository, commit: Oid, path: &RepoPath, list: bool, max_bytes: usize) -> Result<Shown, CheckoutError> {
    let git = |step: &'static str| move |e: git2::Error| CheckoutError::Git { step, detail: e.message().to_owned() };
    let root = repo.find_commit(commit).and_then(|c| c.tree()).map_err(git("reading the commit"))?;
    let sha = commit.to_string();
    let missing = || CheckoutError::NotInTree { path: path.as_str().to_owned(), sha: sha.clone() };
    let (kind, id, mode) = match path.as_str() {
        "" => (Some(ObjectType::Tree), root.id(), 0o040000),
        p => {
            let entry = root.get_path(Path::new(p)).map_err(|_| missing())?;
            (entry.kind(), entry.id(), entry.filemode())
        }
    };
    match (kind, list) {
        (Some(ObjectType::Tree), true) => {
            let tree = repo.find_tree(id).map_err(git("reading the directory"))?;
            let entries = tree
                .iter()
                .map(|e| {
                    let kind = entry_kind(e.kind(), e.filemode());
                    let size = (kind == "file").then(|| repo.find_blob(e.id()).map(|b| b.size() as u64).ok()).flatten();
                    Entry { name: String::from_utf8_lossy(e.name_bytes()).into_owned(), kind, size }
                })
                .collect();
            Ok(Shown::Dir { commit: sha, entries })
        }
        (Some(ObjectType::Tree), false) => {
            Err(CheckoutError::WrongKind { path: path.as_str().to_owned(), what: "a directory: list it with --list" })
        }
        (Some(ObjectType::Blob), false) => {
            let blob = repo.find_blob(id).map_err(git("reading the file"))?;
            let content = blob.content();
            Ok(Shown::File {
                commit: sha,
                size: content.len() as u64,
                bytes: content[..content.len().min(max_bytes)].to_vec(),
                symlink: mode == 0o120000,
            })
        }
        (Some(ObjectType::Blob), true) => {
            Err(CheckoutError::WrongKind { path: path.as_str().to_owned(), what: "a file: read it without --list" })
        }
        _ => Err(CheckoutError::WrongKind {
            path: path.as_str().to_owned(),
            what: "a submodule: forgeloop shows this repository's own files only",
        }),
    }
}

fn entry_kind(kind: Option<ObjectType>, mode: i32) -> &'static str {
    match kind {
        Some(ObjectType::Tree) => "dir",
        Some(ObjectType::Blob) if mode == 0o120000 => "symlink",
        Some(ObjectType::Blob) => "file",
        _ => "submodule",
    }
}
