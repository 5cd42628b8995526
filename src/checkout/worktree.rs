//! The working tree a test runs in: a fresh repository that borrows the mirror's objects.
//!
//! Strategy: `git init` + `objects/info/alternates` pointing at the mirror, then a detached
//! checkout of the commit. Nothing is copied or hard-linked, so the cost is writing the files
//! and the index, independent of history size (measured in `benches/checkout.rs`; a libgit2
//! local clone instead hard-links or copies every pack and loose object of the mirror first).
//! The price: the checkout needs the mirror to stay in place, which it does (never pruned).

use std::fs;
use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, RepositoryInitOptions, Tree, TreeWalkMode, TreeWalkResult};

use super::error::CheckoutError;

/// Turns the empty directory `dir` into a repository with HEAD detached at `commit`, a clean
/// index and `origin` set to `clone_url` (relative submodule URLs resolve against it).
/// Returns the commit's tree id.
pub(crate) fn materialize(mirror_dir: &Path, dir: &Path, clone_url: &str, commit: Oid) -> Result<Oid, CheckoutError> {
    let git = |step| move |e: git2::Error| CheckoutError::Git { step, detail: e.to_string() };
    let mirror_objects = fs::canonicalize(mirror_dir.join("objects")).map_err(|source| CheckoutError::Disk {
        action: "resolving",
        path: mirror_dir.join("objects"),
        source,
    })?;
    let Some(objects) = mirror_objects.to_str().filter(|p| !p.contains('\n')) else {
        return Err(CheckoutError::Mirror {
            step: "alternates",
            path: mirror_dir.to_path_buf(),
            detail: "the mirrors path must be valid UTF-8 without newlines; choose another --home".to_owned(),
        });
    };

    // No external template: a site's init.templateDir (which may hold real hooks) is not copied in.
    let repo = Repository::init_opts(dir, RepositoryInitOptions::new().external_template(false))
        .map_err(git("init of the checkout"))?;
    let alternates = repo.path().join("objects").join("info").join("alternates");
    fs::write(&alternates, format!("{objects}\n")).map_err(|source| CheckoutError::Disk {
        action: "writing",
        path: alternates.clone(),
        source,
    })?;
    repo.remote("origin", clone_url).map_err(git("remote add origin"))?;
    drop(repo);

    // Reopen so the object database reads the alternates file.
    let repo = Repository::open(dir).map_err(git("open of the checkout"))?;
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

/// Gives the checkout the shallow mirror's roots, so git in it sees a shallow repository (whose
/// `git log` stops at the fetched commit) instead of missing parent objects.
pub(crate) fn copy_shallow_roots(mirror_dir: &Path, dir: &Path) -> Result<(), CheckoutError> {
    let from = mirror_dir.join("shallow");
    let to = dir.join(".git").join("shallow");
    fs::copy(&from, &to).map(drop).map_err(|source| CheckoutError::Disk {
        action: "copying the shallow roots to",
        path: to,
        source,
    })
}

/// Gives the checkout the mirror's tags (one `packed-refs` file; the objects are borrowed), so
/// `git describe` works in a full-history checkout.
pub(crate) fn copy_tags(mirror: &Repository, dir: &Path) -> Result<(), CheckoutError> {
    let git = |e: git2::Error| CheckoutError::Git { step: "listing the mirror's tags", detail: e.to_string() };
    let mut lines = String::from("# pack-refs with: sorted\n");
    let mut tags = Vec::new();
    for reference in mirror.references_glob("refs/tags/*").map_err(git)? {
        let reference = reference.map_err(git)?;
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
    let path = dir.join(".git").join("packed-refs");
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
