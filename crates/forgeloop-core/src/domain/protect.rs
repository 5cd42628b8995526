//! The person's protected paths (design §5.2, `[protect]`): which paths a pattern names, and
//! what a run holds — the protected paths and the files they source, run or import, as the
//! base branch's tip has them, with the compiled forms of the Python files among them — so
//! that the PR's code is judged by the person's tests.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::test_deps::{Files, Reached, closure, compiled_forms};

/// What a run does with the person's protected paths (`[protect] mode`, design §5.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtectMode {
    /// The tested tree has the protected paths (and what they source) as the base branch's tip
    /// has them: the PR's code is judged by the person's tests, whatever the PR did to them.
    #[default]
    Hold,
    /// The PR's own version runs; a pass that changed one waits for a person.
    Flag,
}

impl ProtectMode {
    /// The word the config and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtectMode::Hold => "hold",
            ProtectMode::Flag => "flag",
        }
    }
}

/// What a run's tree is checked against: the files tests read, and the paths it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// What the run scripts, the protected files and the changed tests source or import, in
    /// the tested tree or the base's.
    pub sourced: Vec<Reached>,
    /// The paths to restore to the base tip's version (empty unless holding).
    pub hold: Vec<String>,
}

/// What [`plan`] starts from.
pub struct PlanInput<'a> {
    /// Paths the commands and the test script name ([`super::test_files::named_paths`]).
    pub named: &'a [String],
    /// Changed paths that are tests by the table.
    pub changed_tests: &'a [String],
    /// The person's patterns for the repository.
    pub protect: &'a [String],
    /// Whether the run holds them (`[protect] mode = "hold"`).
    pub hold: bool,
}

/// A tree the plan reads: its files' text, and every file's path.
pub trait Tree: Files {
    /// Every file's repository-relative path.
    fn list(&self) -> Vec<String>;
}

/// Works out what tests read (in either tree) and, holding, which paths are the person's: the
/// protected files present on either side and what they reach — and, for each Python file
/// among them, its compiled and native forms in either tree (`__pycache__/t.cpython-311.pyc`
/// would be run instead of the held `t.py`).
pub fn plan(input: &PlanInput<'_>, tested: &dyn Tree, base: &dyn Tree) -> Plan {
    let (tested, base) = (&Listed::new(tested), &Listed::new(base));
    let mut protected = BTreeSet::new();
    if !input.protect.is_empty() {
        for path in tested.listed().iter().chain(base.listed()) {
            if input.protect.iter().any(|p| glob_matches(p, path)) {
                protected.insert(path.clone());
            }
        }
    }
    let mut roots: Vec<String> = input.named.iter().chain(input.changed_tests).cloned().collect();
    roots.extend(protected.iter().cloned());
    roots.sort();
    roots.dedup();
    let mut sourced: Vec<Reached> = Vec::new();
    for reached in closure(&roots, tested).into_iter().chain(closure(&roots, base)) {
        if !sourced.iter().any(|r| r.path == reached.path) {
            sourced.push(reached);
        }
    }
    let hold = match input.hold && !protected.is_empty() {
        true => {
            let roots: Vec<String> = protected.iter().cloned().collect();
            let mut hold = protected;
            hold.extend(closure(&roots, tested).into_iter().chain(closure(&roots, base)).map(|r| r.path));
            let python: Vec<&str> = hold.iter().filter_map(|p| p.strip_suffix(".py")).collect();
            let compiled: Vec<String> = python
                .iter()
                .flat_map(|stem| compiled_forms(stem, tested).into_iter().chain(compiled_forms(stem, base)))
                .collect();
            hold.extend(compiled);
            hold.into_iter().collect()
        }
        false => Vec::new(),
    };
    Plan { sourced, hold }
}

/// A tree with its list of files read once, and its files' names by directory: what lets the
/// walk find compiled and native modules under their tagged names.
struct Listed<'a> {
    tree: &'a dyn Tree,
    list: OnceCell<Vec<String>>,
    dirs: OnceCell<BTreeMap<String, BTreeSet<String>>>,
}

impl<'a> Listed<'a> {
    fn new(tree: &'a dyn Tree) -> Listed<'a> {
        Listed { tree, list: OnceCell::new(), dirs: OnceCell::new() }
    }

    fn listed(&self) -> &[String] {
        self.list.get_or_init(|| self.tree.list())
    }
}

impl Files for Listed<'_> {
    fn is_file(&self, path: &str) -> bool {
        self.tree.is_file(path)
    }

    fn read(&self, path: &str) -> Option<String> {
        self.tree.read(path)
    }

    fn names_in(&self, dir: &str, prefix: &str) -> Vec<String> {
        let dirs = self.dirs.get_or_init(|| {
            let mut dirs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for path in self.listed() {
                let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
                dirs.entry(dir.to_owned()).or_default().insert(name.to_owned());
            }
            dirs
        });
        let Some(names) = dirs.get(dir) else { return Vec::new() };
        names.range(prefix.to_owned()..).take_while(|n| n.starts_with(prefix)).cloned().collect()
    }
}

/// Whether `path` (repository-relative) matches `pattern`: `*` and `?` within one path
/// component, `**` across components, a trailing `/` for everything under a directory, and a
/// pattern without `/` matches the file name at any depth (as `.gitignore` reads it).
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let path = path.trim_start_matches("./");
    if pattern.is_empty() {
        return false;
    }
    if let Some(dir) = pattern.strip_suffix('/') {
        return glob_matches(&format!("{dir}/**"), path);
    }
    let anchored = pattern.starts_with('/');
    let pattern = pattern.trim_start_matches('/');
    if !anchored && !pattern.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return wildcard(pattern.as_bytes(), name.as_bytes()) || wildcard(pattern.as_bytes(), path.as_bytes());
    }
    wildcard(pattern.as_bytes(), path.as_bytes())
}

fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    match pattern {
        [] => text.is_empty(),
        [b'*', b'*', b'/', rest @ ..] => {
            // Zero or more whole directories.
            wildcard(rest, text) || text.iter().enumerate().any(|(i, b)| *b == b'/' && wildcard(rest, &text[i + 1..]))
        }
        [b'*', b'*', rest @ ..] => (0..=text.len()).any(|i| wildcard(rest, &text[i..])),
        [b'*', rest @ ..] => {
            let stop = text.iter().position(|b| *b == b'/').unwrap_or(text.len());
            (0..=stop).any(|i| wildcard(rest, &text[i..]))
        }
        [b'?', rest @ ..] => text.first().is_some_and(|b| *b != b'/') && wildcard(rest, &text[1..]),
        [c, rest @ ..] => text.first() == Some(c) && wildcard(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    struct Files(BTreeMap<String, String>);

    impl super::Files for Files {
        fn is_file(&self, path: &str) -> bool {
            self.0.contains_key(path)
        }
        fn read(&self, path: &str) -> Option<String> {
            self.0.get(path).cloned()
        }
    }

    impl Tree for Files {
        fn list(&self) -> Vec<String> {
            self.0.keys().cloned().collect()
        }
    }

    fn tree(files: &[(&str, &str)]) -> Files {
        Files(files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect())
    }

    #[test]
    fn globs_read_as_gitignore_does() {
        let cases = [
            ("test.sh", "test.sh", true),
            ("test.sh", "sub/test.sh", true),
            ("/test.sh", "sub/test.sh", false),
            ("tests/", "tests/a/b.py", true),
            ("tests/", "src/tests.py", false),
            ("tests/**", "tests/x.rs", true),
            ("*.snap", "a/b/c.snap", true),
            ("src/*.rs", "src/lib.rs", true),
            ("src/*.rs", "src/a/lib.rs", false),
            ("src/**/*.rs", "src/lib.rs", true),
            ("src/**/*.rs", "src/a/b/lib.rs", true),
            (".github/workflows/*", ".github/workflows/ci.yml", true),
            ("t?st.sh", "test.sh", true),
            ("t?st.sh", "t/st.sh", false),
            ("", "anything", false),
        ];
        for (pattern, path, want) in cases {
            assert_eq!(glob_matches(pattern, path), want, "{pattern} vs {path}");
        }
    }

    #[test]
    fn holding_takes_the_protected_files_of_both_sides_and_what_they_source_or_run() {
        let base = tree(&[
            ("t.sh", ". ./testlib.sh\nout=$(sh calc.sh)\nsh check.sh\n"),
            ("testlib.sh", ""),
            ("check.sh", "[ \"$(sh calc.sh)\" = 5 ]\n"),
            ("calc.sh", ""),
            ("tests/old.sh", ""),
        ]);
        let tested = tree(&[
            ("t.sh", ". ./testlib.sh\n. ./extra.sh\n"),
            ("testlib.sh", ""),
            ("extra.sh", ""),
            ("check.sh", "true\n"),
            ("calc.sh", ""),
            ("tests/new.sh", ""),
        ]);
        let protect = vec!["t.sh".to_owned(), "tests/".to_owned()];
        let named = vec!["run.sh".to_owned()];
        let input = PlanInput { named: &named, changed_tests: &[], protect: &protect, hold: true };
        let plan = plan(&input, &tested, &base);
        assert_eq!(plan.hold, ["check.sh", "extra.sh", "t.sh", "testlib.sh", "tests/new.sh", "tests/old.sh"]);
        let sourced: Vec<&str> = plan.sourced.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(sourced, ["testlib.sh", "extra.sh", "check.sh"], "calc.sh is run for its output: the code");
        let flag = PlanInput { hold: false, ..input };
        assert!(super::plan(&flag, &tested, &base).hold.is_empty());
        let none = PlanInput { protect: &[], ..flag };
        assert!(super::plan(&none, &tested, &base).sourced.is_empty(), "no roots: run.sh is not in the tree");
    }

    #[test]
    fn a_held_python_file_is_held_with_its_compiled_forms_and_shadows_it_imports() {
        let test = "import unittest\nfrom calc import add\nfrom tests_support import check\n";
        let base = tree(&[("test_calc.py", test), ("calc.py", ""), ("tests_support.py", "")]);
        let tested = tree(&[
            ("test_calc.py", test),
            ("calc.py", ""),
            ("tests_support.py", ""),
            ("__pycache__/test_calc.cpython-311.pyc", "bytecode that passes"),
            ("__pycache__/tests_support.cpython-312.pyc", ""),
            ("unittest.cpython-311-x86_64-linux-gnu.so", ""),
            ("unittest.pyc", ""),
            ("calc.pyc", ""),
            ("__pycache__/calc.cpython-311.pyc", ""),
            ("docs/test_calc.pyc.md", ""),
        ]);
        let protect = vec!["test_calc.py".to_owned()];
        let input = PlanInput { named: &[], changed_tests: &[], protect: &protect, hold: true };
        assert_eq!(
            plan(&input, &tested, &base).hold,
            [
                "__pycache__/test_calc.cpython-311.pyc",
                "__pycache__/tests_support.cpython-312.pyc",
                "test_calc.py",
                "tests_support.py",
                "unittest.cpython-311-x86_64-linux-gnu.so",
                "unittest.pyc",
            ],
            "calc is the code under test, compiled or not"
        );
    }
}
