//! When libgit2's merge is provably git's (design §5.2.1). Without a usable git, forgeloop
//! merges with libgit2 only where the two algorithms cannot differ: libgit2 has no
//! directory-rename detection and resolves neither directory/file clashes nor submodules as
//! ort does, so with one merge base a three-way merge is taken only when neither side renamed
//! anything since the merge base (rename detection on both sides' tree diffs, without a limit
//! that would skip it), no path one side changed is a directory below which the other side
//! changed something (a file against a directory), and no submodule changed on both sides. Anything else is not a guess: the caller fails the run as
//! an infrastructure outcome.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode, Repository, Tree};

use super::error::CheckoutError;

/// Rename detection reads every candidate pair up to this many files per side (libgit2's
/// default, 1,000, would silently skip detection on a larger change and prove nothing).
const RENAME_LIMIT: usize = 1 << 20;

/// One side's change since the merge base: each path it touched, and whether a submodule
/// (gitlink) was involved.
struct Side {
    paths: BTreeMap<String, bool>,
}

fn git(step: &'static str) -> impl Fn(git2::Error) -> CheckoutError {
    move |e: git2::Error| CheckoutError::Git { step, detail: e.message().to_owned() }
}

/// Why libgit2's three-way merge of `ours` (the base branch) and `theirs` (the head) over
/// `ancestor` might not be git's; `None` when it is.
pub(crate) fn why_not(
    repo: &Repository,
    ancestor: &Tree<'_>,
    ours: &Tree<'_>,
    theirs: &Tree<'_>,
) -> Result<Option<String>, CheckoutError> {
    let base = match side(repo, ancestor, ours, "the base branch")? {
        Ok(side) => side,
        Err(renamed) => return Ok(Some(renamed)),
    };
    let head = match side(repo, ancestor, theirs, "the pull request")? {
        Ok(side) => side,
        Err(renamed) => return Ok(Some(renamed)),
    };
    for (path, gitlink) in &base.paths {
        if *gitlink && head.paths.get(path).is_some_and(|other| *other) {
            return Ok(Some(format!("the submodule {path} changed on both sides")));
        }
    }
    for (one, other) in [(&base, &head), (&head, &base)] {
        if let Some((dir, path)) = one.paths.keys().find_map(|path| under_changed(path, other).map(|dir| (dir, path))) {
            return Ok(Some(format!(
                "{dir} changed on one side and {path} below it on the other (a file against a directory)"
            )));
        }
    }
    Ok(None)
}

/// The paths `tree` changed since `ancestor`, or (the inner error) the first rename, said.
fn side(
    repo: &Repository,
    ancestor: &Tree<'_>,
    tree: &Tree<'_>,
    who: &str,
) -> Result<Result<Side, String>, CheckoutError> {
    let mut options = DiffOptions::new();
    options.ignore_submodules(false);
    let mut diff = repo
        .diff_tree_to_tree(Some(ancestor), Some(tree), Some(&mut options))
        .map_err(git("reading a side's change"))?;
    let mut find = DiffFindOptions::new();
    find.renames(true).rename_limit(RENAME_LIMIT);
    diff.find_similar(Some(&mut find)).map_err(git("looking for renames"))?;
    let mut paths = BTreeMap::new();
    for delta in diff.deltas() {
        let name = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        if delta.status() == Delta::Renamed {
            return Ok(Err(format!(
                "{who} renamed {} to {} since the merge base",
                name(delta.old_file()),
                name(delta.new_file())
            )));
        }
        let gitlink = [delta.old_file(), delta.new_file()].iter().any(|f| f.mode() == FileMode::Commit);
        for path in [name(delta.old_file()), name(delta.new_file())] {
            if !path.is_empty() {
                *paths.entry(path).or_insert(false) |= gitlink;
            }
        }
    }
    Ok(Ok(Side { paths }))
}

/// A parent directory of `path` (changed on one side) that the other side changed as a path
/// of its own: a file on one side where the other has a directory, which ort resolves by
/// moving the file aside and libgit2 does not.
fn under_changed(path: &str, other: &Side) -> Option<String> {
    Path::new(path)
        .ancestors()
        .skip(1)
        .filter_map(|dir| dir.to_str())
        .find(|dir| !dir.is_empty() && other.paths.contains_key(*dir))
        .map(str::to_owned)
}
