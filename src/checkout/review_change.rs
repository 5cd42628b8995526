//! The change a review cycle is about, read from the repository's mirror (docs/review.md):
//! its base and head resolved to commits (fetched at depth 1 when the mirror lacks them), and
//! each changed path with its entry at the head, its blob, its bytes and its own patch. The
//! challenge's candidates, its check, the dry run and the packet all read this one value.

use std::collections::BTreeSet;
use std::path::Path;

use git2::{Delta, DiffFindOptions, DiffOptions, ObjectType, Oid, Patch, Repository, Tree};

use super::error::CheckoutError;
use super::{check_clone_url, init_git_early, mirror};
use crate::domain::hash::sha256_hex;
use crate::domain::packet::{EntryKind, Ignores, MAX_FILE_BYTES};
use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;

/// One end of the change.
#[derive(Debug, Clone, Copy)]
pub enum Rev<'a> {
    /// A commit, fetched by its SHA when the mirror lacks it.
    Sha(&'a str),
    /// A branch's tip on the server, as it is now.
    Branch(&'a str),
    /// A PR's head: its number and the SHA GitHub gave.
    PrHead(u64, &'a str),
}

/// Where the mirror is and how to reach the server.
pub struct Source<'a> {
    /// `<home>/mirrors`.
    pub mirrors_root: &'a Path,
    /// The repository.
    pub repo: &'a RepoName,
    /// Its clone URL; `None` reads only what the mirror has.
    pub clone_url: Option<&'a str>,
    /// The token, sent only to the clone URL's origin.
    pub token: Option<&'a str>,
    /// Allow `http` to loopback, `file://` and paths: only when the API base is loopback.
    pub allow_insecure_local: bool,
}

/// A changed path, as the head has it.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// The path at the head (the old path when deleted).
    pub path: String,
    /// The path it was renamed from.
    pub old_path: Option<String>,
    /// `added`, `modified`, `deleted`, `renamed`, `type-changed`.
    pub status: &'static str,
    /// What it is at the head.
    pub kind: EntryKind,
    /// Its blob id at the head (40 hex).
    pub blob: Option<String>,
    /// Its size at the head.
    pub bytes: u64,
    /// The sha256 of its bytes at the head (files and links).
    pub sha256: Option<String>,
    /// Its whole content when at most [`MAX_FILE_BYTES`], else its first 8 KiB; a link's target.
    pub content: Vec<u8>,
    /// Its own patch, base to head.
    pub patch: String,
}

/// The change, resolved and read.
#[derive(Debug, Clone)]
pub struct Change {
    /// The base commit.
    pub base: String,
    /// The head commit.
    pub head: String,
    /// Every changed path, in the diff's order.
    pub files: Vec<ChangedFile>,
    /// The `.gitignore` files at the head that govern the changed paths.
    pub ignores: Ignores,
}

/// Resolves `base` and `head` to commits, fetching what the mirror lacks, and reads the change.
/// Blocking.
pub fn read(source: &Source<'_>, base: Rev<'_>, head: Rev<'_>) -> Result<Change, CheckoutError> {
    if let Some(url) = source.clone_url {
        check_clone_url(url, source.allow_insecure_local)?;
    }
    init_git_early();
    let paths = mirror::mirror_paths(source.mirrors_root, source.repo)?;
    let _lock = mirror::take(&paths, None)?;
    let (repo, _) = mirror::open_or_init(&paths.dir)?;
    mirror::touch_last_used(&paths.dir)?;
    let base = resolve(&repo, source, base)?;
    let head = resolve(&repo, source, head)?;
    change(&repo, base, head)
}

fn resolve(repo: &Repository, source: &Source<'_>, rev: Rev<'_>) -> Result<Oid, CheckoutError> {
    let token = source.token.filter(|t| !t.is_empty());
    match rev {
        Rev::Sha(sha) => {
            let oid = oid(sha)?;
            mirror::fetch_commit(repo, oid, source.clone_url, token, "fetch of a reviewed commit")?;
            Ok(oid)
        }
        Rev::PrHead(number, sha) => {
            let oid = oid(sha)?;
            if repo.find_commit(oid).is_err() {
                let url = source.clone_url.ok_or(CheckoutError::CommitMissing { sha: sha.to_owned() })?;
                let refs = (format!("refs/pull/{number}/head"), mirror::pr_ref_name(number));
                let step = "fetch of the pull request's head";
                mirror::fetch_ref_tip(repo, (&refs.0, &refs.1), url, token, step)?;
                repo.find_commit(oid).map_err(|_| CheckoutError::Git {
                    step,
                    detail: format!("the head moved past {sha} while it was read: run the command again"),
                })?;
            }
            Ok(oid)
        }
        Rev::Branch(branch) => {
            let local = format!("refs/forgeloop/branch/{branch}");
            match source.clone_url {
                Some(url) => mirror::fetch_ref_tip(
                    repo,
                    (&format!("refs/heads/{branch}"), &local),
                    url,
                    token,
                    "fetch of the branch",
                ),
                None => mirror::ref_target(repo, &local).ok_or(CheckoutError::Git {
                    step: "reading the branch",
                    detail: format!("{branch} was never fetched into the mirror"),
                }),
            }
        }
    }
}

fn oid(sha: &str) -> Result<Oid, CheckoutError> {
    let sha = normalize_sha(sha).ok_or_else(|| CheckoutError::InvalidSha(sha.to_owned()))?;
    Oid::from_str(&sha).map_err(|_| CheckoutError::InvalidSha(sha))
}

fn git(step: &'static str) -> impl Fn(git2::Error) -> CheckoutError {
    move |e| CheckoutError::Git { step, detail: e.message().to_owned() }
}

fn change(repo: &Repository, base: Oid, head: Oid) -> Result<Change, CheckoutError> {
    let base_tree = repo.find_commit(base).and_then(|c| c.tree()).map_err(git("reading the base commit"))?;
    let head_tree = repo.find_commit(head).and_then(|c| c.tree()).map_err(git("reading the head commit"))?;
    let mut options = DiffOptions::new();
    options.context_lines(3).id_abbrev(40).ignore_submodules(false);
    let mut diff = repo
        .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut options))
        .map_err(git("diffing the trees"))?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true))).map_err(git("finding renames"))?;
    let mut files = Vec::new();
    for (index, delta) in diff.deltas().enumerate() {
        let status = match delta.status() {
            Delta::Added | Delta::Copied => "added",
            Delta::Deleted => "deleted",
            Delta::Renamed => "renamed",
            Delta::Typechange => "type-changed",
            _ => "modified",
        };
        let new = delta.new_file();
        let old = delta.old_file();
        let deleted = delta.status() == Delta::Deleted;
        let side = if deleted { delta.old_file() } else { delta.new_file() };
        let path = side.path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        let old_path =
            (delta.status() == Delta::Renamed).then(|| old.path().map(|p| p.to_string_lossy().into_owned())).flatten();
        let mut file = ChangedFile {
            path,
            old_path,
            status,
            kind: EntryKind::Deleted,
            blob: None,
            bytes: 0,
            sha256: None,
            content: Vec::new(),
            patch: String::new(),
        };
        if !deleted {
            read_head_entry(repo, new.id(), u32::from(new.mode()), &mut file);
        }
        if let Ok(Some(mut patch)) = Patch::from_diff(&diff, index)
            && let Ok(buf) = patch.to_buf()
        {
            file.patch = String::from_utf8_lossy(&buf).into_owned();
        }
        files.push(file);
    }
    let ignores = ignores(repo, &head_tree, &files);
    Ok(Change { base: base.to_string(), head: head.to_string(), files, ignores })
}

fn read_head_entry(repo: &Repository, id: Oid, mode: u32, file: &mut ChangedFile) {
    file.blob = Some(id.to_string());
    match mode {
        0o160000 => file.kind = EntryKind::Submodule,
        0o120000 => {
            file.kind = EntryKind::Link;
            if let Ok(blob) = repo.find_blob(id) {
                file.content = blob.content().to_vec();
                file.bytes = blob.size() as u64;
                file.sha256 = Some(sha256_hex(blob.content()));
            }
        }
        _ => {
            file.kind = EntryKind::File;
            if let Ok(blob) = repo.find_blob(id) {
                let bytes = blob.content();
                file.bytes = bytes.len() as u64;
                file.sha256 = Some(sha256_hex(bytes));
                let keep = if file.bytes <= MAX_FILE_BYTES { bytes.len() } else { bytes.len().min(8192) };
                file.content = bytes[..keep].to_vec();
            }
        }
    }
}

/// The `.gitignore` at the root and in every directory above a changed path, at the head.
fn ignores(repo: &Repository, head: &Tree<'_>, files: &[ChangedFile]) -> Ignores {
    let mut dirs = BTreeSet::from([String::new()]);
    for file in files {
        let mut dir = String::new();
        let parts: Vec<&str> = file.path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(part);
            dirs.insert(dir.clone());
        }
    }
    let mut ignores = Ignores::default();
    for dir in dirs {
        let path = if dir.is_empty() { ".gitignore".to_owned() } else { format!("{dir}/.gitignore") };
        let Ok(entry) = head.get_path(Path::new(&path)) else { continue };
        if entry.kind() != Some(ObjectType::Blob) {
            continue;
        }
        if let Ok(blob) = repo.find_blob(entry.id()) {
            ignores.add(&dir, &String::from_utf8_lossy(blob.content()));
        }
    }
    ignores
}
