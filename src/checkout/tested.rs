//! What a run tests (design §5.2.1), made in the mirror before anything is checked out: the
//! PR's head merged into the tip of its base branch (or, with `"tree": "head"`, the head
//! alone), with the paths the person holds put back as the base tip has them; and the change
//! its integrity is judged on — that tree against the base tip, a tree diff of the mirror's own
//! objects, so no PR is too large to be read whole and no API caps it.
//!
//! The merge is the one GitHub's `pull_request` event tests, in this order: GitHub's own
//! `refs/pull/N/merge`, fetched with the head and the base, when its parents are exactly the
//! base tip fetched and the head (GitHub computed it against this tip); otherwise git's own
//! algorithm, `git merge-tree` ([`git_merge`]) against the merge base; without a usable git,
//! libgit2's `merge_trees` only where [`merge_proof`] shows it equals git's, and otherwise
//! [`CheckoutError::MergeUnproven`]: not a guess. `Tested::merge_by` says which.
//!
//! The merge base comes from a shallow mirror that may not reach it yet: the head's own header
//! often names the base tip as its parent (a PR up to date with its base); otherwise the two
//! refs are deepened a few times, then fetched whole. The commits forgeloop makes (the merge,
//! the held tree) are written to the mirror with a fixed author and the later of the two
//! commits' times, so the same head and base give the same commit.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{
    Commit, ErrorCode, FileMode, ObjectType, Oid, Repository, Signature, Time, Tree, TreeWalkMode, TreeWalkResult,
};

use super::error::CheckoutError;
use super::git_merge::{self, Bases, Merged};
use super::mirror::Depth;
use super::scan_sources::{self, ScanSources};
use super::{merge_proof, test_script, tree_diff};
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
    /// Versions of held paths the person accepted from the PR (path, blob id): such a path is
    /// not restored while the tested tree has exactly that blob there (issue 57).
    pub accepted: &'a [(String, String)],
}

/// A held path the PR had changed: both versions' blob ids (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBlob {
    /// The path.
    pub path: String,
    /// Its blob at the base tip: the version that ran.
    pub base: Option<String>,
    /// Its blob in the PR's tree (the merge or the head).
    pub pr: Option<String>,
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
    /// The merge commit tested: GitHub's (`refs/pull/N/merge`) or the one forgeloop made;
    /// `None` for the head alone.
    pub merge_sha: Option<String>,
    /// Which merge that is: `"github"` (GitHub's own merge ref, computed against this base
    /// tip), `"git"` (`git merge-tree`, git's own algorithm) or `"libgit2"` (only where it is
    /// provably git's); `None` for the head alone.
    pub merge_by: Option<String>,
    /// The commit checked out: the merge, the head, or a commit on top of either with the
    /// held paths restored.
    pub commit_sha: String,
    /// The paths restored to the base tip's version (only those that differed).
    pub held: Vec<String>,
    /// Every held path, changed or not: read-only inside the sandbox (issue 57).
    pub hold_paths: Vec<String>,
    /// Of `held`, both versions' blobs: a failure only on these is the person's call.
    pub held_blobs: Vec<HeldBlob>,
    /// What the gaming scan reads besides the change (issue 57).
    pub scan: ScanSources,
    /// Held paths the person accepted the PR's version of (and the PR still has it): neither
    /// held nor a reason for review.
    pub accepted: Vec<String>,
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
            .field("merge_by", &self.merge_by)
            .field("commit_sha", &self.commit_sha)
            .field("held", &self.held)
            .field("hold_paths", &self.hold_paths)
            .field("scan", &self.scan)
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

/// Who made the merge a run tests (`Tested::merge_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MergeBy {
    /// GitHub's own `refs/pull/N/merge`, computed against the base tip fetched.
    Github,
    /// git's own algorithm, `git merge-tree`.
    Git,
    /// libgit2's `merge_trees`, where it is provably git's.
    Libgit2,
}

impl MergeBy {
    fn as_str(self) -> &'static str {
        match self {
            MergeBy::Github => "github",
            MergeBy::Git => "git",
            MergeBy::Libgit2 => "libgit2",
        }
    }
}

/// The git program forgeloop merges with: `git`, found on PATH.
const GIT: &str = "git";

/// Makes what the run tests from `head` and the base tip `base` in the mirror `repo`.
/// `github_merge` is what the server's `refs/pull/N/merge` pointed at in the same fetch, if
/// it has one. `deepen` fetches both refs again at a depth when the merge base is not in the
/// mirror yet.
pub(crate) fn make(
    repo: &Repository,
    (head, base, github_merge): (Oid, Oid, Option<Oid>),
    base_ref: &str,
    spec: &TestedSpec<'_>,
    deepen: &mut dyn FnMut(Depth) -> Result<(), CheckoutError>,
) -> Result<Tested, CheckoutError> {
    make_with(repo, OsStr::new(GIT), (head, base, github_merge), base_ref, spec, deepen)
}

/// [`make`] with git's program named (a test names one that is not there).
fn make_with(
    repo: &Repository,
    git_program: &OsStr,
    (head, base, github_merge): (Oid, Oid, Option<Oid>),
    base_ref: &str,
    spec: &TestedSpec<'_>,
    deepen: &mut dyn FnMut(Depth) -> Result<(), CheckoutError>,
) -> Result<Tested, CheckoutError> {
    let head_commit = repo.find_commit(head).map_err(git("reading the head"))?;
    let base_commit = repo.find_commit(base).map_err(git("reading the base branch"))?;
    let base_tree = base_commit.tree().map_err(git("reading the base branch"))?;
    let mut deepen_fetches = 0;
    let (changed, merge_by) = match spec.tree {
        TreeMode::Head => (head_commit.clone(), None),
        TreeMode::Merge => match github_merge.and_then(|merge| current_github_merge(repo, merge, base, head)) {
            Some(merge) => {
                // Its parents came in the same fetch: git in the checkout sees them.
                super::mirror::unshallow_with_parents(repo, merge.id(), &[base, head])?;
                (merge, Some(MergeBy::Github))
            }
            None => {
                let mut counted = |depth: Depth| {
                    deepen_fetches += 1;
                    deepen(depth)
                };
                let bases = merge_bases(repo, &head_commit, &base_commit, &mut counted)?;
                let pair = Pair { head: &head_commit, base: &base_commit, base_ref };
                let (tree, by) = merged_tree(repo, git_program, &bases, &pair)?;
                let message = format!(
                    "forgeloop: merge {} into {base_ref} at {}\n\nWhat forgeloop tests: the pull request's head merged into the tip of its base branch.\n",
                    short(head),
                    short(base)
                );
                (commit(repo, &tree, &[&base_commit, &head_commit], &message)?, Some(by))
            }
        },
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
    let mut plan = protect::plan(&input, &tested_files, &base_files);
    // What the person accepted from the PR is theirs while the PR keeps exactly that version.
    let accepted_paths: Vec<String> = spec
        .accepted
        .iter()
        .filter(|(path, blob)| changed_tree.get_path(Path::new(path)).ok().is_some_and(|e| e.id().to_string() == *blob))
        .map(|(path, _)| path.clone())
        .collect();
    plan.hold.retain(|path| !accepted_paths.contains(path));
    let is_test = |path: &str| test_files::classify(path, &judges).is_some() || plan.hold.iter().any(|h| h == path);
    let scan = scan_sources::gather(repo, &changed_tree, &base_tree, &change, &is_test, &plan.hold);

    let blob_in = |tree: &Tree<'_>, path: &str| tree.get_path(Path::new(path)).ok().map(|e| e.id().to_string());
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
        merge_by: merge_by.map(|by| by.as_str().to_owned()),
        commit_sha: commit_id.to_string(),
        held_blobs: held
            .iter()
            .map(|path| HeldBlob {
                path: path.clone(),
                base: blob_in(&base_tree, path),
                pr: blob_in(&changed_tree, path),
            })
            .collect(),
        held,
        hold_paths: plan.hold,
        scan,
        accepted: accepted_paths,
        change,
        sourced: plan.sourced,
        test_script,
        deepen_fetches,
    })
}

fn short(id: Oid) -> String {
    id.to_string()[..12].to_owned()
}

/// GitHub's merge commit `merge` when it is the merge of `head` into this `base` tip: its own
/// header names exactly `[base, head]` as parents (first the base tip, as GitHub writes it).
/// An older one (the base moved since GitHub computed it) or anything else is not used.
fn current_github_merge(repo: &Repository, merge: Oid, base: Oid, head: Oid) -> Option<Commit<'_>> {
    let commit = repo.find_commit(merge).ok()?;
    (raw_parents(&commit) == [base, head]).then_some(commit)
}

/// The merge bases of `head` and `base`, deepening a shallow mirror until one is there; none
/// when the two share no history at all.
fn merge_bases(
    repo: &Repository,
    head: &Commit<'_>,
    base: &Commit<'_>,
    deepen: &mut dyn FnMut(Depth) -> Result<(), CheckoutError>,
) -> Result<Vec<Oid>, CheckoutError> {
    // Most PRs descend from the base tip (or are already in it): in a shallow mirror the
    // commits' own headers say so through the objects it has, with no fetch.
    if repo.is_shallow() {
        if reaches(repo, head.id(), base.id()) {
            return Ok(vec![base.id()]);
        }
        if reaches(repo, base.id(), head.id()) {
            return Ok(vec![head.id()]);
        }
    }
    let steps = DEEPEN.iter().map(|n| Depth::Of(*n)).chain([Depth::Unshallow]);
    for step in steps.map(Some).chain([None]) {
        match repo.merge_bases(head.id(), base.id()) {
            Ok(found) => return Ok(found.iter().copied().collect()),
            Err(e) if e.code() == ErrorCode::NotFound => {}
            Err(e) => return Err(git("finding the merge base")(e)),
        }
        match step {
            Some(depth) if repo.is_shallow() => deepen(depth)?,
            _ => return Ok(Vec::new()),
        }
    }
    Ok(Vec::new())
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

/// The two commits merged, and the base branch's name (for the errors).
struct Pair<'a, 'r> {
    head: &'a Commit<'r>,
    base: &'a Commit<'r>,
    base_ref: &'a str,
}

impl Pair<'_, '_> {
    /// `MERGE_CONFLICT` naming `paths` (at most [`MAX_CONFLICTS`], then how many more).
    fn conflict(&self, paths: BTreeSet<String>) -> CheckoutError {
        let total = paths.len();
        let mut paths: Vec<String> = paths.into_iter().take(MAX_CONFLICTS).collect();
        if total > MAX_CONFLICTS {
            paths.push(format!("and {} more", total - MAX_CONFLICTS));
        }
        CheckoutError::MergeConflict {
            base_ref: self.base_ref.to_owned(),
            base_sha: self.base.id().to_string(),
            head_sha: self.head.id().to_string(),
            paths,
        }
    }

    /// The merge that cannot be made as git would make it, and why.
    fn unproven(&self, why: String) -> CheckoutError {
        CheckoutError::MergeUnproven {
            base_ref: self.base_ref.to_owned(),
            base_sha: self.base.id().to_string(),
            head_sha: self.head.id().to_string(),
            why,
        }
    }
}

/// The tree merging the head into the base tip over `bases` gives, and who merged: git when
/// it is here, else libgit2 where that is provably git's result; or the conflict.
fn merged_tree<'r>(
    repo: &'r Repository,
    git_program: &OsStr,
    bases: &[Oid],
    pair: &Pair<'_, 'r>,
) -> Result<(Tree<'r>, MergeBy), CheckoutError> {
    let no_git = match git_merge::available(git_program) {
        Ok(_) => {
            let how = match bases {
                [] => Bases::Unrelated,
                [one] => Bases::One(*one),
                _ => Bases::Several,
            };
            return match git_merge::merge(git_program, repo.path(), pair.base.id(), pair.head.id(), how)? {
                Merged::Clean(tree) => {
                    Ok((repo.find_tree(tree).map_err(git("reading git's merged tree"))?, MergeBy::Git))
                }
                Merged::Conflicts(paths) => Err(pair.conflict(paths)),
            };
        }
        Err(no_git) => no_git,
    };
    libgit2_merge(repo, bases, pair)
        .map_err(|e| match e {
            Libgit2Merge::Failed(e) => e,
            Libgit2Merge::Unproven(why) => pair.unproven(format!("{no_git}, and {why}")),
        })
        .map(|tree| (tree, MergeBy::Libgit2))
}

/// Why libgit2's merge was not made.
enum Libgit2Merge {
    /// It could differ from git's: why.
    Unproven(String),
    /// A conflict, or git trouble.
    Failed(CheckoutError),
}

impl From<CheckoutError> for Libgit2Merge {
    fn from(e: CheckoutError) -> Self {
        Libgit2Merge::Failed(e)
    }
}

/// libgit2's merge, where it is provably git's: one side an ancestor of the other, or one
/// merge base (or none) and nothing [`merge_proof`] finds that ort would do otherwise.
fn libgit2_merge<'r>(repo: &'r Repository, bases: &[Oid], pair: &Pair<'_, 'r>) -> Result<Tree<'r>, Libgit2Merge> {
    let read = git("reading a tree to merge");
    let (head, base) = (pair.head, pair.base);
    let ancestor_tree = match bases {
        [a] if *a == base.id() => return Ok(head.tree().map_err(read)?),
        [a] if *a == head.id() => return Ok(base.tree().map_err(read)?),
        [a] => repo.find_commit(*a).and_then(|c| c.tree()).map_err(&read)?,
        // No common history (`--allow-unrelated-histories`): everything is an addition.
        [] => repo.treebuilder(None).and_then(|b| b.write()).and_then(|id| repo.find_tree(id)).map_err(&read)?,
        several => {
            return Err(Libgit2Merge::Unproven(format!(
                "the head and the base branch have {} merge bases (criss-cross merges), which git merges through a virtual base and libgit2 does not",
                several.len()
            )));
        }
    };
    let (base_tree, head_tree) = (base.tree().map_err(&read)?, head.tree().map_err(&read)?);
    if let Some(why) = merge_proof::why_not(repo, &ancestor_tree, &base_tree, &head_tree)? {
        return Err(Libgit2Merge::Unproven(format!("{why}, which libgit2's merge does not handle as git's does")));
    }
    let mut index = repo.merge_trees(&ancestor_tree, &base_tree, &head_tree, None).map_err(git("merging"))?;
    if index.has_conflicts() {
        let mut paths = BTreeSet::new();
        for conflict in index.conflicts().map_err(git("reading the conflicts"))? {
            let conflict = conflict.map_err(git("reading the conflicts"))?;
            for entry in [conflict.ancestor, conflict.our, conflict.their].into_iter().flatten() {
                paths.insert(String::from_utf8_lossy(&entry.path).into_owned());
            }
        }
        return Err(Libgit2Merge::Failed(pair.conflict(paths)));
    }
    let id = index.write_tree_to(repo).map_err(git("writing the merged tree"))?;
    Ok(repo.find_tree(id).map_err(read)?)
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

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::domain::commands::parse_commands;

    /// A repository made with the git CLI; commits by branch.
    struct Repo {
        _tmp: tempfile::TempDir,
        dir: std::path::PathBuf,
    }

    impl Repo {
        fn new() -> Repo {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("r");
            let repo = Repo { _tmp: tmp, dir };
            std::fs::create_dir_all(&repo.dir).unwrap();
            repo.git(&["init", "-q", "-b", "main"]);
            repo
        }

        fn git(&self, args: &[&str]) -> String {
            let out = Command::new("git")
                .current_dir(&self.dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        }

        /// Writes `files` (a `None` body removes the file) on the checked-out branch and commits.
        fn commit(&self, files: &[(&str, Option<&str>)]) -> Oid {
            for (path, body) in files {
                let file = self.dir.join(path);
                match body {
                    Some(body) => {
                        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                        std::fs::write(&file, body).unwrap();
                    }
                    None => std::fs::remove_file(&file).unwrap(),
                }
            }
            self.git(&["add", "-A"]);
            self.git(&["commit", "-q", "--allow-empty", "-m", "change"]);
            Oid::from_str(&self.git(&["rev-parse", "HEAD"])).unwrap()
        }

        /// Makes the merge of `head` into `base` with `program` as git.
        fn make(&self, program: &str, head: Oid, base: Oid) -> Result<Tested, CheckoutError> {
            let repo = Repository::open(&self.dir).unwrap();
            let commands = parse_commands(r#"[["true"]]"#).unwrap();
            let spec =
                TestedSpec { tree: TreeMode::Merge, commands: &commands, protect: &[], hold: false, accepted: &[] };
            make_with(&repo, OsStr::new(program), (head, base, None), "main", &spec, &mut |_| Ok(()))
        }

        fn tree_of(&self, commit: &str) -> String {
            self.git(&["rev-parse", &format!("{commit}^{{tree}}")])
        }
    }

    const NO_GIT: &str = "/nonexistent/forgeloop-test-no-git";
    const LINES: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

    #[test]
    fn without_git_a_merge_without_renames_is_libgit2_s_and_the_same_tree_as_git_s() {
        let r = Repo::new();
        r.commit(&[("lib/a.txt", Some(LINES)), ("keep.txt", Some("k\n")), ("gone.txt", Some("g\n"))]);
        r.git(&["checkout", "-q", "-b", "pr"]);
        let head = r.commit(&[("lib/a.txt", Some(&LINES.replace("two", "TWO"))), ("lib/new.txt", Some("n\n"))]);
        r.git(&["checkout", "-q", "main"]);
        let base = r.commit(&[("lib/a.txt", Some(&LINES.replace("nine", "NINE"))), ("gone.txt", None)]);

        let by_libgit2 = r.make(NO_GIT, head, base).unwrap();
        assert_eq!(by_libgit2.merge_by.as_deref(), Some("libgit2"));
        let by_git = r.make("git", head, base).unwrap();
        assert_eq!(by_git.merge_by.as_deref(), Some("git"));
        // One head and base give one commit, whoever merged: the trees are the same.
        assert_eq!(by_libgit2.merge_sha, by_git.merge_sha);
        let merged = by_git.merge_sha.unwrap();
        assert_eq!(
            r.git(&["show", &format!("{merged}:lib/a.txt")]),
            LINES.replace("two", "TWO").replace("nine", "NINE").trim()
        );
        let git_tree = r.git(&["merge-tree", "--write-tree", &base.to_string(), &head.to_string()]);
        assert_eq!(r.tree_of(&merged), git_tree);

        // A head on the base tip is its own tree, with or without git.
        r.git(&["checkout", "-q", "-b", "on-tip"]);
        let on_tip = r.commit(&[("x.txt", Some("x\n"))]);
        let trivial = r.make(NO_GIT, on_tip, base).unwrap();
        assert_eq!(trivial.merge_by.as_deref(), Some("libgit2"));
        assert_eq!(r.tree_of(trivial.merge_sha.as_deref().unwrap()), r.tree_of(&on_tip.to_string()));
    }

    #[test]
    fn without_git_a_rename_on_either_side_is_not_guessed() {
        let r = Repo::new();
        r.commit(&[("lib/a.py", Some(LINES)), ("test_a.py", Some("from lib.a import *\n"))]);
        r.git(&["checkout", "-q", "-b", "pr"]);
        let head = r.commit(&[("lib/b.py", Some("B = 2\n"))]);
        r.git(&["checkout", "-q", "main"]);
        r.git(&["mv", "lib", "pkg"]);
        let base = r.commit(&[]);
        match r.make(NO_GIT, head, base) {
            Err(e @ CheckoutError::MergeUnproven { .. }) => {
                let text = e.to_string();
                for said in
                    ["git is not installed here", "the base branch renamed lib/a.py to pkg/a.py", "install git 2.40"]
                {
                    assert!(text.contains(said), "{said:?} in {text}");
                }
            }
            other => panic!("expected an unproven merge, got {other:?}"),
        }
        // With git: git's conflict (the file a directory rename would move).
        assert!(
            matches!(r.make("git", head, base), Err(CheckoutError::MergeConflict { paths, .. }) if paths == ["lib/b.py", "pkg/b.py"])
        );

        // The PR's own rename counts the same.
        r.git(&["checkout", "-q", "-b", "pr-renames", "pr"]);
        r.git(&["mv", "test_a.py", "test_first.py"]);
        let renaming = r.commit(&[]);
        r.git(&["checkout", "-q", "-b", "main-moves", "pr~1"]);
        let moved = r.commit(&[("README", Some("r\n"))]);
        let err = r.make(NO_GIT, renaming, moved).unwrap_err().to_string();
        assert!(err.contains("the pull request renamed test_a.py to test_first.py"), "{err}");
    }

    #[test]
    fn without_git_a_file_against_a_directory_and_criss_cross_merges_are_not_guessed() {
        let r = Repo::new();
        r.commit(&[("a.txt", Some("a\n"))]);
        r.git(&["checkout", "-q", "-b", "pr"]);
        let head = r.commit(&[("conf", Some("a file\n"))]);
        r.git(&["checkout", "-q", "main"]);
        let base = r.commit(&[("conf/x", Some("in a directory\n"))]);
        let err = r.make(NO_GIT, head, base).unwrap_err().to_string();
        assert!(err.contains("conf changed on one side and conf/x below it"), "{err}");

        // Two branches that merged each other: two merge bases.
        let r = Repo::new();
        let root = r.commit(&[("a.txt", Some("a\n"))]);
        r.git(&["checkout", "-q", "-b", "x"]);
        let x1 = r.commit(&[("x.txt", Some("x\n"))]);
        r.git(&["checkout", "-q", "-b", "y", &root.to_string()]);
        let y1 = r.commit(&[("y.txt", Some("y\n"))]);
        r.git(&["merge", "-q", "--no-edit", &x1.to_string()]);
        let head = r.commit(&[("y2.txt", Some("y\n"))]);
        r.git(&["checkout", "-q", "x"]);
        r.git(&["merge", "-q", "--no-edit", &y1.to_string()]);
        let base = r.commit(&[("x2.txt", Some("x\n"))]);
        let err = r.make(NO_GIT, head, base).unwrap_err().to_string();
        assert!(err.contains("2 merge bases (criss-cross merges)"), "{err}");
        assert_eq!(r.make("git", head, base).unwrap().merge_by.as_deref(), Some("git"));
    }

    #[test]
    fn without_git_a_real_conflict_is_still_a_merge_conflict() {
        let r = Repo::new();
        r.commit(&[("a.txt", Some("a\n"))]);
        r.git(&["checkout", "-q", "-b", "pr"]);
        let head = r.commit(&[("a.txt", Some("the PR's\n"))]);
        r.git(&["checkout", "-q", "main"]);
        let base = r.commit(&[("a.txt", Some("main's\n"))]);
        for program in [NO_GIT, "git"] {
            match r.make(program, head, base) {
                Err(CheckoutError::MergeConflict { paths, .. }) => assert_eq!(paths, ["a.txt"], "{program}"),
                other => panic!("{program}: expected a conflict, got {other:?}"),
            }
        }
    }
}
