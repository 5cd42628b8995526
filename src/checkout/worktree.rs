//! The working tree a test runs in: a fresh repository that borrows the mirror's objects.
//!
//! Strategy: `git init` of a git directory beside the working tree (whose `.git` is then a
//! file naming it, so the sandbox can keep the git directory read-only while the tree is
//! writable) + `objects/info/alternates` pointing at the mirror, then a detached checkout of
//! the commit. Nothing is copied or hard-linked, so the cost is writing the files
//! and the index, independent of history size (measured in `benches/checkout.rs`; a libgit2
//! local clone instead hard-links or copies every pack and loose object of the mirror first).
//! The price: the checkout needs the mirror to stay in place, which it does (never pruned).

use std::fs;
use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, RepositoryInitOptions, Tree, TreeWalkMode, TreeWalkResult};

use super::error::CheckoutError;

fn git(step: &'static str) -> impl Fn(git2::Error) -> CheckoutError {
    move |e: git2::Error| CheckoutError::Git { step, detail: e.to_string() }
}

/// The mirror's object store, as an alternates line.
fn mirror_objects(mirror_dir: &Path) -> Result<String, CheckoutError> {
    let objects = fs::canonicalize(mirror_dir.join("objects")).map_err(|source| CheckoutError::Disk {
        action: "resolving",
        path: mirror_dir.join("objects"),
        source,
    })?;
    match objects.to_str().filter(|p| !p.contains('\n')) {
        Some(objects) => Ok(objects.to_owned()),
        None => Err(CheckoutError::Mirror {
            step: "alternates",
            path: mirror_dir.to_path_buf(),
            detail: "the mirrors path must be valid UTF-8 without newlines; choose another --home".to_owned(),
        }),
    }
}

/// A new repository at `path` (no template: a site's `init.templateDir` may hold real hooks)
/// whose objects are the mirror's, with `origin` set to `clone_url` when given.
fn init(
    path: &Path,
    options: &mut RepositoryInitOptions,
    mirror_dir: &Path,
    clone_url: Option<&str>,
) -> Result<Repository, CheckoutError> {
    let objects = mirror_objects(mirror_dir)?;
    let repo = Repository::init_opts(path, options.external_template(false)).map_err(git("init of the checkout"))?;
    let alternates = repo.path().join("objects").join("info").join("alternates");
    fs::write(&alternates, format!("{objects}\n")).map_err(|source| CheckoutError::Disk {
        action: "writing",
        path: alternates.clone(),
        source,
    })?;
    if let Some(url) = clone_url {
        repo.remote("origin", url).map_err(git("remote add origin"))?;
    }
    Ok(repo)
}

/// Makes the working tree `dir` with its git directory `gitdir` (both new), HEAD detached at
/// `commit`, a clean index and `origin` set to `clone_url` (relative submodule URLs resolve
/// against it). Returns the commit's tree id.
pub(crate) fn materialize(
    mirror_dir: &Path,
    dir: &Path,
    gitdir: &Path,
    clone_url: &str,
    commit: Oid,
) -> Result<Oid, CheckoutError> {
    let mut options = RepositoryInitOptions::new();
    options.workdir_path(dir).no_dotgit_dir(true).mkpath(true);
    drop(init(gitdir, &mut options, mirror_dir, Some(clone_url))?);

    // Reopen so the object database reads the alternates file.
    let repo = Repository::open(gitdir).map_err(git("open of the checkout"))?;
    let commit = repo.find_commit(commit).map_err(git("reading the commit"))?;
    let tree = commit.tree().map_err(git("reading the tree"))?;
    let mut options = CheckoutBuilder::new();
    options.force();
    // Filters (eol, ident) are driven only by attributes here: user/system config is isolated
    // (init_git_early) and the new repository's config sets none. Without any .gitattributes
    // they are a no-op, yet libgit2 still resolves attributes per file (half the checkout time
    // in benches/checkout.rs), so skip them then.
    if !has_gitattributes(&tree).map_err(git("reading the tree"))? {
        options.disable_filters(true);
    }
    repo.checkout_tree(tree.as_object(), Some(&mut options)).map_err(git("checkout"))?;
    repo.set_head_detached(commit.id()).map_err(git("detaching HEAD"))?;
    Ok(commit.tree_id())
}

/// Replaces whatever `.git` the working tree `dir` holds now with a repository forgeloop writes
/// itself, for a kept checkout (design §5.2.9): HEAD detached at `commit`, its index the
/// commit's tree (so `git status` shows what the test changed), objects borrowed from the
/// mirror, no hooks, and a configuration that keeps `git status` and `git diff` out of
/// submodule directories, whose `.git` the test may have written.
pub(crate) fn fresh_gitdir(mirror_dir: &Path, dir: &Path, commit: Oid) -> Result<(), CheckoutError> {
    let dotgit = dir.join(".git");
    crate::store::tree::remove_tree(&dotgit).map_err(|left| CheckoutError::Disk {
        action: "removing the test's",
        path: dotgit.clone(),
        source: left.error,
    })?;
    drop(init(dir, &mut RepositoryInitOptions::new(), mirror_dir, None)?);
    // Reopen so the object database reads the alternates file.
    let repo = Repository::open(dir).map_err(git("open of the kept checkout"))?;
    let mut config = repo.config().map_err(git("configuring the kept checkout"))?;
    for (key, value) in [("diff.ignoreSubmodules", "all"), ("submodule.recurse", "false"), ("core.fsmonitor", "false")]
    {
        config.set_str(key, value).map_err(git("configuring the kept checkout"))?;
    }
    let shallow = mirror_dir.join("shallow");
    if shallow.exists() {
        copy_shallow_roots(mirror_dir, &dotgit)?;
    }
    let tree = repo.find_commit(commit).and_then(|c| c.tree()).map_err(git("reading the commit"))?;
    let mut index = repo.index().map_err(git("the kept checkout's index"))?;
    index.read_tree(&tree).map_err(git("the kept checkout's index"))?;
    index.write().map_err(git("the kept checkout's index"))?;
    repo.set_head_detached(commit).map_err(git("detaching HEAD"))?;
    Ok(())
}

/// Gives the checkout the shallow mirror's roots, so git in it sees a shallow repository (whose
/// `git log` stops at the fetched commit) instead of missing parent objects.
pub(crate) fn copy_shallow_roots(mirror_dir: &Path, gitdir: &Path) -> Result<(), CheckoutError> {
    let from = mirror_dir.join("shallow");
    let to = gitdir.join("shallow");
    fs::copy(&from, &to).map(drop).map_err(|source| CheckoutError::Disk {
        action: "copying the shallow roots to",
        path: to,
        source,
    })
}

/// Gives the checkout the mirror's tags (one `packed-refs` file; the objects are borrowed), so
/// `git describe` works in a full-history checkout.
pub(crate) fn copy_tags(mirror: &Repository, gitdir: &Path) -> Result<(), CheckoutError> {
    let git = git("listing the mirror's tags");
    let mut lines = String::from("# pack-refs with: sorted\n");
    let mut tags = Vec::new();
    for reference in mirror.references_glob("refs/tags/*").map_err(&git)? {
        let reference = reference.map_err(&git)?;
        if let (Ok(name), Some(target)) = (reference.name(), reference.target())
            && !name.contains(['\n', ' '])
        {
            tags.push((name.to_owned(), target));
        }
    }
    if tags.is_empty() {
        return Ok(());
    }
    tags.sort();
    for (name, target) in tags {
        lines.push_str(&format!("{target} {name}\n"));
    }
    let path = gitdir.join("packed-refs");
    fs::write(&path, lines).map_err(|source| CheckoutError::Disk { action: "writing", path, source })
}

/// True if any directory of `tree` has a `.gitattributes` entry.
fn has_gitattributes(tree: &Tree<'_>) -> Result<bool, git2::Error> {
    let mut found = false;
    tree.walk(TreeWalkMode::PreOrder, |_, entry| {
        if entry.name_bytes() == b".gitattributes" {
            found = true;
            TreeWalkResult::Abort
        } else {
            TreeWalkResult::Ok
        }
    })
    // Aborting the walk surfaces as an error; it is only one if nothing was found.
    .or_else(|e| if found { Ok(()) } else { Err(e) })?;
    Ok(found)
}
