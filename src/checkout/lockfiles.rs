//! The lockfiles in a commit's tree, read from git objects (never from a working tree a test
//! may have changed): what the run records in its report and what `next` proposes setup
//! commands from (design §5.6, `domain::lockfiles`).

use std::path::Path;

use git2::{ObjectType, Oid, Repository, Tree};

use crate::domain::lockfiles::is_lockfile;
use crate::domain::pr_ref::RepoName;

use super::mirror;

/// Directories whose lockfiles are someone else's (vendored code, installed packages).
const SKIPPED: &[&str] = &["node_modules", "vendor", "third_party", "target", "dist", "build"];

/// How deep below the root a lockfile is looked for (`web/`, `services/api/`).
const DEPTH: usize = 2;

/// At most this many paths: a hostile tree cannot make the report or `next` large.
const MAX: usize = 32;

/// Repository-relative paths of the lockfiles in `commit`'s tree: the root first, then each
/// directory's in name order, at most [`DEPTH`] levels down, hidden and vendored directories
/// skipped.
pub fn in_commit(repo: &Repository, commit: Oid) -> Vec<String> {
    let Ok(tree) = repo.find_commit(commit).and_then(|c| c.tree()) else { return Vec::new() };
    let mut found = Vec::new();
    walk(repo, &tree, "", 0, &mut found);
    found
}

fn walk(repo: &Repository, tree: &Tree<'_>, prefix: &str, depth: usize, found: &mut Vec<String>) {
    let mut dirs = Vec::new();
    for entry in tree.iter() {
        let Ok(name) = entry.name() else { continue };
        match entry.kind() {
            Some(ObjectType::Blob) if is_lockfile(name) && found.len() < MAX => found.push(format!("{prefix}{name}")),
            Some(ObjectType::Tree) if depth < DEPTH && !name.starts_with('.') && !SKIPPED.contains(&name) => {
                dirs.push((name.to_owned(), entry.id()));
            }
            _ => {}
        }
    }
    for (name, id) in dirs {
        if let Ok(sub) = repo.find_tree(id) {
            walk(repo, &sub, &format!("{prefix}{name}/"), depth + 1, found);
        }
    }
}

/// The lockfiles of `repo` as forgeloop last fetched it: the tree of the highest-numbered PR
/// its mirror holds (a PR's head carries the repository's files), with that PR's number.
/// `None` before forgeloop has fetched the repository, or when the mirror cannot be read.
pub fn last_fetched(mirrors: &Path, repo: &RepoName) -> Option<(u64, Vec<String>)> {
    let paths = mirror::mirror_paths(mirrors, repo).ok()?;
    if !paths.dir.is_dir() {
        return None;
    }
    let git = Repository::open_bare(&paths.dir).ok()?;
    let newest = git
        .references_glob("refs/forgeloop/pull/*")
        .ok()?
        .filter_map(|r| r.ok())
        .filter_map(|r| {
            let number = r.name().ok()?.rsplit('/').next()?.parse::<u64>().ok()?;
            Some((number, r.target()?))
        })
        .max_by_key(|(number, _)| *number)?;
    Some((newest.0, in_commit(&git, newest.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_with(repo: &Repository, files: &[&str]) -> Oid {
        let mut index = git2::Index::new().unwrap();
        for file in files {
            let blob = repo.blob(b"x").unwrap();
            let entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: 1,
                id: blob,
                flags: 0,
                flags_extended: 0,
                path: file.as_bytes().to_vec(),
            };
            index.add(&entry).unwrap();
        }
        let tree = repo.find_tree(index.write_tree_to(repo).unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        repo.commit(None, &sig, &sig, "c", &tree, &[]).unwrap()
    }

    #[test]
    fn lockfiles_are_found_at_the_root_and_two_levels_down_but_not_in_vendored_or_hidden_trees() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let commit = commit_with(
            &repo,
            &[
                "Cargo.lock",
                "README.md",
                "web/package-lock.json",
                "services/api/go.sum",
                "services/api/deep/yarn.lock",
                "node_modules/x/package-lock.json",
                ".github/requirements.txt",
                "vendor/Gemfile.lock",
            ],
        );
        assert_eq!(in_commit(&repo, commit), ["Cargo.lock", "services/api/go.sum", "web/package-lock.json"]);
    }
}
