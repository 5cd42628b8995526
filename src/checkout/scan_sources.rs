//! What the gaming scan reads besides the change (issue 57, design §5.2): the tested tree's test
//! files (the person's held ones first), whose assertions name the inputs and expected values a
//! shortcut would special-case; each changed code file as the base tip had it (a pair the base
//! already had is not the PR's doing); and the package directories of the tested tree. Read from
//! the mirror's objects, never from a working tree a test could have written, and bounded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git2::{ObjectType, Repository, Tree, TreeWalkMode, TreeWalkResult};

use crate::domain::diff::{FileStatus, index};

/// The most test files read.
const MAX_TEST_FILES: usize = 200;
/// The most bytes of test text read in all.
const MAX_TEST_BYTES: usize = 2 * 1024 * 1024;
/// The most changed files whose base version is read.
const MAX_BASE_FILES: usize = 64;
/// The most bytes read of one file.
const MAX_FILE_BYTES: usize = 256 * 1024;

/// The scan's inputs beyond the change. Not redacted: the caller redacts before use.
#[derive(Clone, Default)]
pub struct ScanSources {
    /// Test files of the tested tree (path, text), held ones first.
    pub tests: Vec<(String, String)>,
    /// Changed files' text at the base tip (absent: the base had no such file).
    pub base_texts: BTreeMap<String, String>,
    /// The tested tree's `__init__.py` files: Python package directories.
    pub packages: BTreeSet<String>,
}

/// Shows the counts only: the texts may hold secrets until redacted.
impl std::fmt::Debug for ScanSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanSources")
            .field("tests", &self.tests.len())
            .field("base_texts", &self.base_texts.len())
            .field("packages", &self.packages.len())
            .finish()
    }
}

/// Gathers them from `tested` and `base` (trees of the mirror `repo`): the test files are those
/// `is_test` names, `first` (the held paths) before the rest; `change` is the unified diff from
/// `base` to `tested`.
pub(crate) fn gather(
    repo: &Repository,
    tested: &Tree<'_>,
    base: &Tree<'_>,
    change: &str,
    is_test: &dyn Fn(&str) -> bool,
    first: &[String],
) -> ScanSources {
    let mut paths = Vec::new();
    let mut packages = BTreeSet::new();
    let _ = tested.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(ObjectType::Blob)
            && let Ok(name) = entry.name()
        {
            let path = format!("{dir}{name}");
            if name == "__init__.py" {
                packages.insert(path.clone());
            }
            if is_test(&path) {
                paths.push(path);
            }
        }
        TreeWalkResult::Ok
    });
    paths.sort_by_key(|p| (!first.contains(p), p.clone()));
    let mut tests = Vec::new();
    let mut bytes = 0;
    for path in paths.into_iter().take(MAX_TEST_FILES) {
        let Some(text) = text_of(repo, tested, &path) else { continue };
        bytes += text.len();
        if bytes > MAX_TEST_BYTES {
            break;
        }
        tests.push((path, text));
    }
    let mut base_texts = BTreeMap::new();
    let changed = index(change.lines()).into_iter().filter(|f| f.status != FileStatus::Added && !is_test(&f.path));
    for file in changed.take(MAX_BASE_FILES) {
        let path = file.old_path.unwrap_or(file.path);
        if let Some(text) = text_of(repo, base, &path) {
            base_texts.insert(path, text);
        }
    }
    ScanSources { tests, base_texts, packages }
}

/// A file's text in `tree` (its first [`MAX_FILE_BYTES`]), `None` for a missing or binary one.
fn text_of(repo: &Repository, tree: &Tree<'_>, path: &str) -> Option<String> {
    let entry = tree.get_path(Path::new(path)).ok().filter(|e| e.kind() == Some(ObjectType::Blob))?;
    let blob = repo.find_blob(entry.id()).ok()?;
    let content = blob.content();
    let content = &content[..content.len().min(MAX_FILE_BYTES)];
    (!content.contains(&0)).then(|| String::from_utf8_lossy(content).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(repo: &Repository, files: &[(&str, &str)]) -> git2::Oid {
        let mut index = git2::Index::new().unwrap();
        for (path, text) in files {
            let id = repo.blob(text.as_bytes()).unwrap();
            let entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: text.len() as u32,
                id,
                flags: path.len() as u16,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            index.add(&entry).unwrap();
        }
        index.write_tree_to(repo).unwrap()
    }

    #[test]
    fn held_tests_come_first_base_texts_are_the_changed_code_and_packages_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let base =
            commit(&repo, &[("m.py", "def f(n):\n    return n\n"), ("tests/test_a.py", "a"), ("t/test_b.py", "b")]);
        let tested = commit(
            &repo,
            &[
                ("m.py", "def f(n):\n    return n * 3\n"),
                ("new.py", "x = 1\n"),
                ("pkg/__init__.py", ""),
                ("tests/test_a.py", "assert f(2) == 6"),
                ("t/test_b.py", "b"),
                ("bin.dat", "\0\0"),
            ],
        );
        let (base, tested) = (repo.find_tree(base).unwrap(), repo.find_tree(tested).unwrap());
        let change = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(n):\n-    return n\n+    return n * 3\ndiff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n";
        let is_test = |p: &str| p.contains("test_");
        let found = gather(&repo, &tested, &base, change, &is_test, &["t/test_b.py".to_owned()]);
        let order: Vec<&str> = found.tests.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(order, ["t/test_b.py", "tests/test_a.py"]);
        assert_eq!(found.base_texts.keys().collect::<Vec<_>>(), ["m.py"], "added files have no base version");
        assert_eq!(found.base_texts["m.py"], "def f(n):\n    return n\n");
        assert!(found.packages.contains("pkg/__init__.py"));
        assert!(!format!("{found:?}").contains("return"), "Debug shows no text");
    }
}
