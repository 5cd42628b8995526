//! What a run tests (design §5.2.1), made in the mirror before anything is checked out: the
//! PR's head merged into the tip of its base branch (or, with `"tree": "head"`, the head
//! alone), with the paths the person holds put back as the base tip has them; and the change
//! its integrity is judged on — that tree against the base tip, a tree diff of the mirror's own
//! objects, so no PR is too large to be read whole and no API caps it.
//!
//! The merge is libgit2's, against the merge base. A shallow mirror may not reach it yet: the
//! head's own header often names the base tip as its parent (a PR up to date with its base);
//! otherwise the two refs are deepened a few times, then fetched whole. The commits forgeloop
//! makes (the merge, the held tree) are written to the mirror with a fixed author and the
//! later of the two commits' times, so the same head and base give the same commit.

use std::collections::BTreeSet;
use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{
    Commit, ErrorCode, FileMode, ObjectType, Oid, Repository, Signature, Time, Tree, TreeWalkMode, TreeWalkResult,
};

use super::error::CheckoutError;
use super::mirror::Depth;
use super::{test_script, tree_diff};
use crate::domain::commands::{CommandsProfile, TreeMode};
use crate::domain::diff;
use crate::domain::protect::{self, PlanInput};
use crate::domain::test_deps::{self, Files, Reached};
use crate::domain::test_files::{self, Judges};

/// How many conflicting paths a `MERGE_CONFLICT` names.
pub const MAX_CONFLICTS: usize = 20;
/// The depths a shallow mirror is deepened to, in turn, before it is fetched whole.
const DEEPEN: [u16; 4] = [4, 32, 256, 2048];

/// How the run's tree is made and what judges it.
#[derive(Debug, Clone, Copy)]
pub struct TestedSpec<'a> {
    /// The merge (the default) or the head alone.
    pub tree: TreeMode,
    /// The commands that will run: the files they name are roots of what tests source.
    pub commands: &'a CommandsProfile,
    /// The person's protect patterns for the repository.
    pub protect: &'a [String],
    /// Restore the protected paths (and what they source) to the base tip's version.
    pub hold: bool,
}

/// What a run tests and the change it is judged on.
#[derive(Clone)]
pub struct Tested {
    /// The merge or the head.
    pub tree: TreeMode,
    /// The base branch.
    pub base_ref: String,
    /// Its tip (40 hex digits).
    pub base_sha: String,
    /// The merge commit forgeloop made; `None` for the head alone.
    pub merge_sha: Option<String>,
    /// The commit checked out: the merge, the head, or a commit on top of either with the
    /// held paths restored.
    pub commit_sha: String,
    /// The paths restored to the base tip's version (only those that differed).
    pub held: Vec<String>,
    /// The unified diff from the base tip's tree to the merge's (or the head's): the PR's
    /// change as merging would make it. Not redacted: the caller redacts it before use.
    pub change: String,
    /// What the run scripts, protected files and changed tests source or import.
    pub sourced: Vec<Reached>,
    /// `package.json`'s `scripts.test` in the merge (or the head).
    pub test_script: Option<String>,
    /// Fetches the merge base needed beyond the first.
    pub deepen_fetches: usize,
}

/// Shows everything but the change's text, which may hold secrets until it is redacted.
impl std::fmt::Debug for Tested {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tested")
            .field("tree", &self.tree)
            .field("base_ref", &self.base_ref)
            .field("base_sha", &self.base_sha)
            .field("merge_sha", &self.merge_sha)
            .field("commit_sha", &self.commit_sha)
            .field("held", &self.held)
            .field("change_bytes", &self.change.len())
            .field("sourced", &self.sourced)
            .field("test_script", &self.test_script)
            .field("deepen_fetches", &self.deepen_fetches)
            .finish()
    }
}

fn git(step: &'static str) -> impl Fn(git2::Error) -> CheckoutError {
    move |e: git2::Error| CheckoutError::Git { step, detail: e.message().to_owned() }
}

/// Makes what the run tests from `head` and the base tip `base` in the mirror `repo`.
/// `deepen` fetches both refs again at a depth when the merge base is not in the mirror yet.
pub(crate) fn make(
    repo: &Repository,
    head: Oid,
    base: Oid,
    base_ref: &str,
    spec: &TestedSpec<'_>,
    deepen: &mut dyn FnMut(Depth) -> Result<(), CheckoutError>,
) -> Result<Tested, CheckoutError> {
    let head_commit = repo.find_commit(head).map_err(git("reading the head"))?;
    let base_commit = repo.find_commit(base).map_err(git("reading the base branch"))?;
    let base_tree = base_commit.tree().map_err(git("reading the base branch"))?;
    let mut deepen_fetches = 0;
    let changed = match spec.tree {
        TreeMode::Head => head_commit.clone(),
        TreeMode::Merge => {
            let mut counted = |depth: Depth| {
                deepen_fetches += 1;
                deepen(depth)
            };
            let ancestor = merge_base(repo, &head_commit, &base_commit, &mut counted)?;
            let tree = merged_tree(repo, ancestor, &head_commit, &base_commit, base_ref)?;
            let message = format!(
                "forgeloop: merge {} into {base_ref} at {}\n\nWhat forgeloop tests: the pull request's head merged into the tip of its base branch.\n",
                short(head),
                short(base)
            );
            commit(repo, &tree, &[&base_commit, &head_commit], &message)?
        }
    };
    let merge_sha = (spec.tree == TreeMode::Merge).then(|| changed.id().to_string());
    let changed_tree = changed.tree().map_err(git("reading the tested tree"))?;
    let change = tree_diff::trees_text(repo, &base_tree, &changed_tree)?;
    let test_script = test_script::in_commit(repo, changed.id());

    let named = test_files::named_paths(Some(spec.commands), test_script.as_deref());
    let judges = Judges { commands: Some(spec.commands), test_script: test_script.as_deref(), sourced: &[] };
    let changed_tests: Vec<String> = diff::index(change.lines())
        .into_iter()
        .filter(|f| test_files::classify(&f.path, &judges).is_some())
        .map(|f| f.path)
        .collect();
    let input = PlanInput { named: &named, changed_tests: &changed_tests, protect: spec.protect, hold: spec.hold };
    let tested_files = TreeFiles::new(repo, &changed_tree);
    let base_files = TreeFiles::new(repo, &base_tree);
    let plan = protect::plan(&input, &tested_files, &base_files);

    let (commit_id, held) = match held_tree(repo, &changed_tree, &base_tree, &plan.hold)? {
        None => (changed.id(), Vec::new()),
        Some((tree, held)) => {
            let message = format!(
                "forgeloop: hold {} protected path{} at {base_ref} {}\n\nThe person's tests judge the pull request: these paths are as the base branch's tip has them.\n",
                held.len(),
                if held.len() == 1 { "" } else { "s" },
                short(base)
            );
            (commit(repo, &tree, &[&changed], &message)?.id(), held)
        }
    };
    Ok(Tested {
        tree: spec.tree,
        base_ref: base_ref.to_owned(),
        base_sha: base.to_string(),
        merge_sha,
        commit_sha: commit_id.to_string(),
        held,
        change,
        sourced: plan.sourced,
        test_script,
        deepen_fetches,
    })
}

fn short(id: Oid) -> String {
    id.to_string()[..12].to_owned()
}

/// The merge base of `head` and `base`, deepening a shallow mirror until it is there; `None`
/// when the two share no history at all.
fn merge_base(
    repo: &Repository,
    head: &Commit<'_>,
    base: &Commit<'_>,
    deepen: &mut dyn FnMut(Depth) -> Result<(), CheckoutError>,
) -> Result<Option<Oid>, CheckoutError> {
    // Most PRs descend from the base tip (or are already in it): in a shallow mirror the
    // commits' own headers say so through the objects it has, with no fetch.
    if repo.is_shallow() {
        if reaches(repo, head.id(), base.id()) {
            return Ok(Some(base.id()));
        }
        if reaches(repo, base.id(), head.id()) {
            return Ok(Some(head.id()));
        }
    }
    let steps = DEEPEN.iter().map(|n| Depth::Of(*n)).chain([Depth::Unshallow]);
    for step in steps.map(Some).chain([None]) {
        match repo.merge_base(head.id(), base.id()) {
            Ok(found) => return Ok(Some(found)),
            Err(e) if e.code() == ErrorCode::NotFound => {}
            Err(e) => return Err(git("finding the merge base")(e)),
        }
        match step {
            Some(depth) if repo.is_shallow() => deepen(depth)?,
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// How many commits [`reaches`] reads at most.
const REACH_LIMIT: usize = 4096;

/// Whether `target` is `from` or one of its ancestors through commits the mirror has, read by
/// the parents their own headers name (a shallow mirror hides them from libgit2's walk).
fn reaches(repo: &Repository, from: Oid, target: Oid) -> bool {
    let mut seen = BTreeSet::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(id) = queue.pop_front() {
        if id == target {
            return true;
        }
        if seen.len() >= REACH_LIMIT || !seen.insert(id) {
            continue;
        }
        if let Ok(commit) = repo.find_commit(id) {
            queue.extend(raw_parents(&commit));
        }
    }
    false
}

/// The parents a commit's own header names: there even when a shallow mirror hides them.
fn raw_parents(commit: &Commit<'_>) -> Vec<Oid> {
    let header = String::from_utf8_lossy(commit.raw_header_bytes());
    header.lines().filter_map(|l| l.strip_prefix("parent ")).filter_map(|hex| Oid::from_str(hex.trim()).ok()).collect()
}

/// The tree merging `head` into `base` gives, or the conflict.
fn merged_tree<'r>(
    repo: &'r Repository,
    ancestor: Option<Oid>,
    head: &Commit<'r>,
    base: &Commit<'r>,
    base_ref: &str,
) -> Result<Tree<'r>, CheckoutError> {
    let read = git("reading a tree to merge");
    match ancestor {
        Some(a) if a == base.id() => return head.tree().map_err(read),
        Some(a) if a == head.id() => return base.tree().map_err(read),
        _ => {}
    }
    let ancestor_tree = match ancestor {
        Some(a) => repo.find_commit(a).and_then(|c| c.tree()).map_err(&read)?,
        // No common history (`--allow-unrelated-histories`): everything is an addition.
        None => repo.treebuilder(None).and_then(|b| b.write()).and_then(|id| repo.find_tree(id)).map_err(&read)?,
    };
    let (base_tree, head_tree) = (base.tree().map_err(&read)?, head.tree().map_err(&read)?);
    let mut index = repo.merge_trees(&ancestor_tree, &base_tree, &head_tree, None).map_err(git("merging"))?;
    if index.has_conflicts() {
        let mut paths = BTreeSet::new();
        for conflict in index.conflicts().map_err(git("reading the conflicts"))? {
            let conflict = conflict.map_err(git("reading the conflicts"))?;
            for entry in [conflict.ancestor, conflict.our, conflict.their].into_iter().flatten() {
                paths.insert(String::from_utf8_lossy(&entry.path).into_owned());
            }
        }
        let total = paths.len();
        let mut paths: Vec<String> = paths.into_iter().take(MAX_CONFLICTS).collect();
        if total > MAX_CONFLICTS {
            paths.push(format!("and {} more", total - MAX_CONFLICTS));
        }
        return Err(CheckoutError::MergeConflict {
            base_ref: base_ref.to_owned(),
            base_sha: base.id().to_string(),
            head_sha: head.id().to_string(),
            paths,
        });
    }
    let id = index.write_tree_to(repo).map_err(git("writing the merged tree"))?;
    repo.find_tree(id).map_err(read)
}

/// A commit of forgeloop's own: a fixed author, the latest of its parents' times.
fn commit<'r>(
    repo: &'r Repository,
    tree: &Tree<'_>,
    parents: &[&Commit<'_>],
    message: &str,
) -> Result<Commit<'r>, CheckoutError> {
    let when = parents.iter().map(|p| p.time().seconds()).max().unwrap_or(0);
    let signature =
        Signature::new("forgeloop", "forgeloop@localhost", &Time::new(when, 0)).map_err(git("signing a commit"))?;
    let id = repo.commit(None, &signature, &signature, message, tree, parents).map_err(git("writing a commit"))?;
    repo.find_commit(id).map_err(git("writing a commit"))
}

/// `tested` with each of `hold` as `base` has it (removed where the base has no such file);
/// `None` when that changes nothing. Returns the tree and the paths that changed.
fn held_tree<'r>(
    repo: &'r Repository,
    tested: &Tree<'_>,
    base: &Tree<'_>,
    hold: &[String],
) -> Result<Option<(Tree<'r>, Vec<String>)>, CheckoutError> {
    let entry = |tree: &Tree<'_>, path: &str| {
        tree.get_path(Path::new(path))
            .ok()
            .filter(|e| e.kind() == Some(ObjectType::Blob))
            .map(|e| (e.id(), e.filemode()))
    };
    let mut update = TreeUpdateBuilder::new();
    let mut held = Vec::new();
    for path in hold {
        let (now, then) = (entry(tested, path), entry(base, path));
        if now == then {
            continue;
        }
        match then {
            Some((id, mode)) => {
                update.upsert(path.as_str(), id, file_mode(mode));
            }
            None => {
                update.remove(path.as_str());
            }
        }
        held.push(path.clone());
    }
    if held.is_empty() {
        return Ok(None);
    }
    let id = update.create_updated(repo, tested).map_err(git("holding the protected paths"))?;
    Ok(Some((repo.find_tree(id).map_err(git("holding the protected paths"))?, held)))
}

fn file_mode(mode: i32) -> FileMode {
    match mode {
        0o100755 => FileMode::BlobExecutable,
        0o120000 => FileMode::Link,
        _ => FileMode::Blob,
    }
}

/// A commit's tree as [`test_deps::Files`] and [`protect::Tree`] see it.
struct TreeFiles<'a> {
    repo: &'a Repository,
    tree: &'a Tree<'a>,
}

impl<'a> TreeFiles<'a> {
    fn new(repo: &'a Repository, tree: &'a Tree<'a>) -> TreeFiles<'a> {
        TreeFiles { repo, tree }
    }
}

impl Files for TreeFiles<'_> {
    fn is_file(&self, path: &str) -> bool {
        self.tree.get_path(Path::new(path)).is_ok_and(|e| e.kind() == Some(ObjectType::Blob))
    }

    fn read(&self, path: &str) -> Option<String> {
        let entry = self.tree.get_path(Path::new(path)).ok().filter(|e| e.kind() == Some(ObjectType::Blob))?;
        let blob = self.repo.find_blob(entry.id()).ok()?;
        let content = blob.content();
        Some(String::from_utf8_lossy(&content[..content.len().min(test_deps::MAX_READ)]).into_owned())
    }
}

impl protect::Tree for TreeFiles<'_> {
    fn list(&self) -> Vec<String> {
        let mut out = Vec::new();
        let _ = self.tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                out.push(format!("{dir}{name}"));
            }
            TreeWalkResult::Ok
        });
        out
    }
}
