//! The person's protected paths (design §5.2, `[protect]`): which paths a pattern names, and
//! what a run holds — the protected paths and the files they source or import, as the base
//! branch's tip has them — so that the PR's code is judged by the person's tests.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::test_deps::{Files, Reached, closure};

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
/// protected files present on either side and what they reach.
pub fn plan(input: &PlanInput<'_>, tested: &dyn Tree, base: &dyn Tree) -> Plan {
    let mut protected = BTreeSet::new();
    if !input.protect.is_empty() {
        for path in tested.list().into_iter().chain(base.list()) {
            if input.protect.iter().any(|p| glob_matches(p, &path)) {
                protected.insert(path);
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
            hold.into_iter().collect()
        }
        false => Vec::new(),
    };
    Plan { sourced, hold }
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
    fn holding_takes_the_protected_files_of_both_sides_and_what_they_source() {
        let base = tree(&[
            ("t.sh", ". ./testlib.sh\nsh calc.sh\n"),
            ("testlib.sh", ""),
            ("calc.sh", ""),
            ("tests/old.sh", ""),
        ]);
        let tested = tree(&[
            ("t.sh", ". ./testlib.sh\n. ./extra.sh\n"),
            ("testlib.sh", ""),
            ("extra.sh", ""),
            ("calc.sh", ""),
            ("tests/new.sh", ""),
        ]);
        let protect = vec!["t.sh".to_owned(), "tests/".to_owned()];
        let named = vec!["run.sh".to_owned()];
        let input = PlanInput { named: &named, changed_tests: &[], protect: &protect, hold: true };
        let plan = plan(&input, &tested, &base);
        assert_eq!(plan.hold, ["extra.sh", "t.sh", "testlib.sh", "tests/new.sh", "tests/old.sh"]);
        let sourced: Vec<&str> = plan.sourced.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(sourced, ["testlib.sh", "extra.sh"], "calc.sh is run, not sourced");
        let flag = PlanInput { hold: false, ..input };
        assert!(super::plan(&flag, &tested, &base).hold.is_empty());
        let none = PlanInput { protect: &[], ..flag };
        assert!(super::plan(&none, &tested, &base).sourced.is_empty(), "no roots: run.sh is not in the tree");
    }
}
