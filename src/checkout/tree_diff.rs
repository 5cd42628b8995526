//! The change between two tested commits (`forgeloop diff --since-last`, design §6.7): a
//! tree-to-tree diff in the repository's mirror, so no history is needed and a force-pushed
//! fix shows its true change. A commit the mirror lacks (a `github-checks` cycle has no
//! mirror; `gc` may have pruned one) is fetched by its SHA at depth 1 first.

use std::path::Path;

use git2::{Diff, DiffFindOptions, DiffFormat, DiffOptions, Oid, Repository, Tree};

use super::error::CheckoutError;
use super::{check_clone_url, init_git_early, mirror};
use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;

/// What [`tree_diff`] needs.
pub struct TreeDiffRequest<'a> {
    /// `<home>/mirrors`, where the repository's mirror is.
    pub mirrors_root: &'a Path,
    /// The base repository.
    pub repo: &'a RepoName,
    /// The base repository's clone URL, to fetch a commit the mirror lacks; `None` diffs only
    /// what the mirror has (offline) and says which commit is missing.
    pub clone_url: Option<&'a str>,
    /// The GitHub token, sent only to the clone URL's host.
    pub token: Option<&'a str>,
    /// Allow `http` to loopback, `file://` and absolute paths: only when the API base is loopback.
    pub allow_insecure_local: bool,
    /// The earlier tested head (40 hex digits).
    pub old_sha: &'a str,
    /// The later tested head (40 hex digits).
    pub new_sha: &'a str,
}

/// The unified diff from `old_sha`'s tree to `new_sha`'s, renames detected as `git diff` does.
/// Blocking.
pub fn tree_diff(req: &TreeDiffRequest<'_>) -> Result<String, CheckoutError> {
    if let Some(url) = req.clone_url {
        check_clone_url(url, req.allow_insecure_local)?;
    }
    let old = oid(req.old_sha)?;
    let new = oid(req.new_sha)?;
    init_git_early();
    let paths = mirror::mirror_paths(req.mirrors_root, req.repo)?;
    let _lock = mirror::take(&paths, None)?;
    let (repo, _) = mirror::open_or_init(&paths.dir)?;
    mirror::touch_last_used(&paths.dir)?;
    let token = req.token.filter(|t| !t.is_empty());
    for wanted in [old, new] {
        mirror::fetch_commit(&repo, wanted, req.clone_url, token, "fetch of a tested commit")?;
    }
    diff_text(&repo, old, new)
}

fn oid(sha: &str) -> Result<Oid, CheckoutError> {
    let sha = normalize_sha(sha).ok_or_else(|| CheckoutError::InvalidSha(sha.to_owned()))?;
    Oid::from_str(&sha).map_err(|_| CheckoutError::InvalidSha(sha))
}

fn diff_text(repo: &Repository, old: Oid, new: Oid) -> Result<String, CheckoutError> {
    let git = |step: &'static str| move |e: git2::Error| CheckoutError::Git { step, detail: e.message().to_owned() };
    let old_tree = repo.find_commit(old).and_then(|c| c.tree()).map_err(git("reading the older commit"))?;
    let new_tree = repo.find_commit(new).and_then(|c| c.tree()).map_err(git("reading the newer commit"))?;
    trees_text(repo, &old_tree, &new_tree)
}

/// The unified diff from `old_tree` to `new_tree`, renames detected as `git diff` does.
pub(crate) fn trees_text(repo: &Repository, old_tree: &Tree<'_>, new_tree: &Tree<'_>) -> Result<String, CheckoutError> {
    let git = |step: &'static str| move |e: git2::Error| CheckoutError::Git { step, detail: e.message().to_owned() };
    let mut options = DiffOptions::new();
    options.context_lines(3).id_abbrev(40);
    let mut diff: Diff<'_> =
        repo.diff_tree_to_tree(Some(old_tree), Some(new_tree), Some(&mut options)).map_err(git("diffing the trees"))?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true))).map_err(git("finding renames"))?;
    let mut out: Vec<u8> = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin() as u8);
        }
        out.extend_from_slice(line.content());
        true
    })
    .map_err(git("writing the diff"))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// The +/- lines per file, the part of a diff both git and libgit2 must agree on.
    fn changes(diff: &str) -> Vec<(String, Vec<String>)> {
        crate::domain::diff::index(diff.lines())
            .iter()
            .map(|f| {
                let lines = diff.lines().skip(f.start_line).take(f.end_line - f.start_line);
                let body = lines.filter(|l| {
                    (l.starts_with('+') && !l.starts_with("+++")) || (l.starts_with('-') && !l.starts_with("---"))
                });
                (format!("{:?} {:?} {}", f.status, f.old_path, f.path), body.map(str::to_owned).collect())
            })
            .collect()
    }

    #[test]
    fn a_force_pushed_fix_shows_its_true_change_like_git_diff() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        git(&work, &["init", "-q"]);
        std::fs::write(work.join("calc.sh"), "a=$1\nb=$2\necho $((a - b))\n").unwrap();
        std::fs::write(work.join("notes.md"), (1..40).map(|i| format!("line {i}\n")).collect::<String>()).unwrap();
        git(&work, &["add", "."]);
        git(&work, &["commit", "-qm", "base"]);
        git(&work, &["checkout", "-qb", "pr"]);
        std::fs::write(work.join("calc.sh"), "a=$1\nb=$2\necho $((a * b))\n").unwrap();
        git(&work, &["commit", "-qam", "first try"]);
        let old = git(&work, &["rev-parse", "HEAD"]).trim().to_owned();
        // The fix is force-pushed: a sibling of the first try, with a rename and a new file.
        git(&work, &["reset", "-q", "--hard", "main"]);
        std::fs::write(work.join("calc.sh"), "a=$1\nb=$2\necho $((a + b))\n").unwrap();
        git(&work, &["mv", "notes.md", "docs.md"]);
        std::fs::write(work.join("tests.sh"), "check 5 add 2 3\n").unwrap();
        git(&work, &["add", "."]);
        git(&work, &["commit", "-qm", "the fix"]);
        let new = git(&work, &["rev-parse", "HEAD"]).trim().to_owned();
        git(&work, &["update-ref", "refs/pull/1/head", &old]);
        git(&work, &["update-ref", "refs/keep/new", &new]);

        let repo = RepoName::parse("acme/calc").unwrap();
        let mirrors = tmp.path().join("mirrors");
        let url = work.display().to_string();
        let offline = TreeDiffRequest {
            mirrors_root: &mirrors,
            repo: &repo,
            clone_url: None,
            token: None,
            allow_insecure_local: true,
            old_sha: &old,
            new_sha: &new,
        };
        assert!(matches!(tree_diff(&offline), Err(CheckoutError::CommitMissing { .. })));
        let req = TreeDiffRequest {
            mirrors_root: &mirrors,
            repo: &repo,
            clone_url: Some(&url),
            token: None,
            allow_insecure_local: true,
            old_sha: &old,
            new_sha: &new,
        };
        let ours = tree_diff(&req).unwrap();
        let theirs = git(&work, &["diff", "-M", &old, &new]);
        assert_eq!(changes(&ours), changes(&theirs), "ours:\n{ours}\ngit's:\n{theirs}");
        assert!(ours.contains("-echo $((a * b))\n+echo $((a + b))\n"), "{ours}");
        assert!(ours.contains("rename from notes.md\nrename to docs.md"), "{ours}");
        // Both commits were fetched by SHA into the mirror; now it works offline.
        assert_eq!(tree_diff(&offline).unwrap(), ours);
        let bad = TreeDiffRequest { old_sha: "not-a-sha", ..req };
        assert!(matches!(tree_diff(&bad), Err(CheckoutError::InvalidSha(_))));
    }
}
