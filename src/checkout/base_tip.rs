//! The base branch's tip, from a mirror a PR's fetch already brought it into: checked out for
//! warming the base layer of the repository's cache (design §5.6), and how far a layer warmed
//! at an older tip is behind it. Nothing is fetched here.

use std::path::Path;

use git2::{Oid, Repository};

use super::{Checkout, FetchStats, lockfiles, test_script};
use super::{CheckoutError, Container, mirror, objects, worktree};
use crate::domain::pr_ref::RepoName;

/// Checks out `sha` (already in the mirror of `repo`) detached into `into` (created, `0700`).
pub fn check_out(
    mirrors_root: &Path,
    repo: &RepoName,
    clone_url: &str,
    sha: &str,
    into: &Path,
    objects_for_others: bool,
) -> Result<Checkout, CheckoutError> {
    let oid = Oid::from_str(sha).map_err(|_| CheckoutError::InvalidSha(sha.to_owned()))?;
    super::init_git_early();
    let paths = mirror::mirror_paths(mirrors_root, repo)?;
    let lock = mirror::take(&paths, None)?;
    let (mirror_repo, _) = mirror::open_or_init(&paths.dir)?;
    if mirror_repo.find_commit(oid).is_err() {
        return Err(CheckoutError::Git { step: "base checkout", detail: format!("{sha} is not in the mirror") });
    }
    let dir = Container::exact(into)?;
    let work = dir.path().join("tree");
    let gitdir = dir.path().join("git");
    let tree = worktree::materialize(&paths.dir, &work, &gitdir, clone_url, oid)?;
    if mirror_repo.is_shallow() {
        worktree::copy_shallow_roots(&paths.dir, &gitdir)?;
    }
    if objects_for_others {
        objects::open_to_others(&paths.dir.join("objects"))?;
    }
    let lockfiles = lockfiles::in_commit(&mirror_repo, oid);
    let test_script = test_script::in_commit(&mirror_repo, oid);
    drop(mirror_repo);
    drop(lock);
    Ok(Checkout {
        _dir: dir,
        tree: work,
        gitdir,
        head_sha: sha.to_owned(),
        commit_sha: sha.to_owned(),
        tree_sha: tree.to_string(),
        tested: None,
        pr_ref_sha: sha.to_owned(),
        fetch: FetchStats::default(),
        mirror: paths.dir,
        lockfiles,
        test_script,
    })
}

/// How many commits the walk back from `tip` passes before it reaches `old`, up to `max`: `None` when `old` is not found within `max` commits (or not in the mirror at
/// all: a shallow mirror's history ends early), which callers read as "too far behind".
pub fn behind(mirrors_root: &Path, repo: &RepoName, old: &str, tip: &str, max: u32) -> Option<u32> {
    let (old, tip) = (Oid::from_str(old).ok()?, Oid::from_str(tip).ok()?);
    if old == tip {
        return Some(0);
    }
    let paths = mirror::mirror_paths(mirrors_root, repo).ok()?;
    let _lock = mirror::take(&paths, None).ok()?;
    let repo = Repository::open_bare(&paths.dir).ok()?;
    // By the parents the commits' own headers name: a shallow mirror (the base fetched at depth
    // 1, GitHub's merge used so nothing was deepened) hides them from a revwalk, yet the old
    // tip is often right there, a parent or two below.
    let mut level = vec![tip];
    let mut seen = std::collections::BTreeSet::new();
    for distance in 0..=max {
        if level.contains(&old) {
            return Some(distance);
        }
        let mut next = Vec::new();
        for id in level {
            if !seen.insert(id) {
                continue;
            }
            if let Ok(commit) = repo.find_commit(id) {
                let header = String::from_utf8_lossy(commit.raw_header_bytes()).into_owned();
                next.extend(
                    header
                        .lines()
                        .filter_map(|l| l.strip_prefix("parent "))
                        .filter_map(|h| Oid::from_str(h.trim()).ok()),
                );
            }
        }
        if next.is_empty() {
            return None;
        }
        level = next;
    }
    None
}
