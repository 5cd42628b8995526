//! The files a test reads from the checkout by its own words (design §5.2, "What counts as
//! tests"): what a shell script sources (`. ./testlib.sh`), what a Makefile includes, and the
//! test-support modules a Python, JavaScript or Ruby test imports. A PR that neuters such a
//! helper changes what the test means without touching the test, so these files count as
//! tests too, and a protected test's helpers are protected with it.
//!
//! Imports are followed only into test support — a path whose directories or name say
//! `test`, `spec`, `conftest`, `helper`, `fixture`, `mock`, `fake`, `stub` or `support` — because
//! a test also imports the code it tests, and that code is the PR's to change. Sourced shell
//! files and Makefile includes are followed whatever their name. The walk is bounded
//! ([`MAX_DEPTH`] levels, [`MAX_FILES`] files, [`MAX_READ`] bytes a file): a limit, said in
//! docs/testing.md, not a proof.

use std::collections::{BTreeSet, VecDeque};

/// How many levels of sourcing or importing are followed from a root.
pub const MAX_DEPTH: usize = 3;
/// How many files the walk reaches at most.
pub const MAX_FILES: usize = 64;
/// How much of a file is read for its references.
pub const MAX_READ: usize = 256 * 1024;

/// What a tree offers the walk: whether a path is a file, and its text. Implemented by the
/// checkout adapter over git objects.
pub trait Files {
    /// Whether `path` (repository-relative) is a file in the tree.
    fn is_file(&self, path: &str) -> bool;
    /// The file's text (lossy UTF-8, at most [`MAX_READ`] bytes), if it is a file.
    fn read(&self, path: &str) -> Option<String>;
}

/// How a reference reaches its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Read as part of the script (`. file`, `source file`, `include file`): followed always.
    Sourced,
    /// A language's import: followed only into test support ([`is_test_support`]).
    Imported,
}

/// One reference a file makes: the paths it may mean, in the order the language tries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// How it reads the file.
    pub how: How,
    /// Repository-relative candidates; the first that is a file is the one read.
    pub candidates: Vec<String>,
}

/// A file the walk reached.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reached {
    /// Its repository-relative path.
    pub path: String,
    /// The file that sources or imports it.
    pub by: String,
    /// The root the chain started from.
    pub root: String,
    /// Levels from the root (1: the root names it).
    pub depth: usize,
}

/// The files reachable from `roots` in `files`, breadth first, each once (a root itself is not
/// listed). Bounded by [`MAX_DEPTH`] and [`MAX_FILES`].
pub fn closure(roots: &[String], files: &dyn Files) -> Vec<Reached> {
    let mut seen: BTreeSet<String> = roots.iter().cloned().collect();
    let mut queue: VecDeque<(String, String, usize)> = roots.iter().map(|r| (r.clone(), r.clone(), 0)).collect();
    let mut out = Vec::new();
    while let Some((path, root, depth)) = queue.pop_front() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let Some(text) = files.read(&path) else { continue };
        for reference in references(&path, &text) {
            let Some(found) = reference.candidates.iter().find(|c| files.is_file(c)) else { continue };
            if reference.how == How::Imported && !is_test_support(found) {
                continue;
            }
            if !seen.insert(found.clone()) {
                continue;
            }
            if out.len() >= MAX_FILES {
                return out;
            }
            out.push(Reached { path: found.clone(), by: path.clone(), root: root.clone(), depth: depth + 1 });
            queue.push_back((found.clone(), root.clone(), depth + 1));
        }
    }
    out
}

/// Whether `path` is test support by its directories or its name (see the module's doc).
pub fn is_test_support(path: &str) -> bool {
    const WORDS: &[&str] = &["test", "spec", "conftest", "helper", "fixture", "mock", "fake", "stub", "support"];
    path.to_ascii_lowercase().split('/').any(|part| WORDS.iter().any(|w| part.contains(w)))
}

/// The references `path` makes in `text`, by its language (its extension, or a shell shebang).
pub fn references(path: &str, text: &str) -> Vec<Reference> {
    let text = text.get(..MAX_READ).unwrap_or(text);
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    match ext.as_str() {
        "sh" | "bash" | "bats" | "ksh" | "zsh" => shell(path, text),
        "py" => python(path, text),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => javascript(path, text),
        "rb" => ruby(path, text),
        "mk" => make(text),
        _ if matches!(lower.as_str(), "makefile" | "gnumakefile") => make(text),
        _ if text.starts_with("#!") && text.lines().next().is_some_and(|l| l.contains("sh")) => shell(path, text),
        _ => Vec::new(),
    }
}

/// The directory of a repository path (`""` at the root).
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `base/rel` with `.` and `..` resolved; `None` when it climbs out of the repository.
fn join(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn unquote(word: &str) -> &str {
    word.trim_matches(|c| c == '"' || c == '\'')
}

/// `. file` and `source file`, at the start of a command (a line, or after `;`, `&&`, `||`).
fn shell(path: &str, text: &str) -> Vec<Reference> {
    let dir = dir_of(path);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') {
            continue;
        }
        for command in line.split([';', '&', '|']) {
            let command = command.trim_start();
            let Some(rest) = command.strip_prefix(". ").or_else(|| command.strip_prefix("source ")) else { continue };
            if let Some(candidates) = shell_target(dir, first_shell_word(rest)) {
                out.push(Reference { how: How::Sourced, candidates });
            }
        }
    }
    out
}

/// The first word of `text` as a shell reads it: quotes and `$( … )` keep their spaces.
fn first_shell_word(text: &str) -> &str {
    let text = text.trim_start();
    let (mut quote, mut depth) = (None, 0usize);
    let mut prev = ' ';
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q && q == '\'' => quote = None,
            (Some('\''), _) => {}
            (_, '(') if prev == '$' => depth += 1,
            (_, ')') if depth > 0 => depth -= 1,
            (Some('"'), '"') if depth == 0 => quote = None,
            (None, '"' | '\'') if depth == 0 => quote = Some(c),
            (None, c) if c.is_whitespace() && depth == 0 => return &text[..i],
            _ => {}
        }
        prev = c;
    }
    text
}

/// Where a sourced word points: relative to the working directory (the checkout's root, where
/// the commands run) or, written through the script's own directory (`$(dirname "$0")/x`,
/// `"$DIR"/x`, `${BASH_SOURCE%/*}/x`), relative to the script.
fn shell_target(dir: &str, word: &str) -> Option<Vec<String>> {
    let word = unquote(word);
    if word.is_empty() {
        return None;
    }
    if word.contains('$') {
        // Everything up to the last `/` that follows the expansion is "the script's directory".
        let after = word.rfind([')', '}']).map_or_else(|| word.find('/'), |end| word[end..].find('/').map(|i| end + i));
        let rest = unquote(word.get(after? + 1..)?);
        if rest.is_empty() || rest.contains('$') {
            return None;
        }
        let candidates: Vec<String> = [join(dir, rest), join("", rest)].into_iter().flatten().collect();
        return (!candidates.is_empty()).then_some(candidates);
    }
    if word.starts_with('/') {
        return None;
    }
    let mut candidates: Vec<String> = [join("", word), join(dir, word)].into_iter().flatten().collect();
    candidates.dedup();
    (!candidates.is_empty()).then_some(candidates)
}

/// `include file` and `-include file` (also `sinclude`).
fn make(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if !matches!(words.next(), Some("include" | "-include" | "sinclude")) {
            continue;
        }
        for word in words.filter(|w| !w.contains(['$', '*', '%'])) {
            if let Some(path) = join("", word) {
                out.push(Reference { how: How::Sourced, candidates: vec![path] });
            }
        }
    }
    out
}

/// The import roots a Python test's absolute imports resolve against: its own directory
/// (pytest puts it first), the repository's root (`python -m` puts the working directory
/// first) and `src/`.
fn python_roots(dir: &str) -> Vec<String> {
    let mut roots = vec![dir.to_owned(), String::new(), "src".to_owned()];
    roots.dedup();
    roots
}

fn python_module(roots: &[String], module: &str) -> Vec<String> {
    let rel = module.replace('.', "/");
    roots
        .iter()
        .flat_map(|root| [join(root, &format!("{rel}.py")), join(root, &format!("{rel}/__init__.py"))])
        .flatten()
        .collect()
}

/// `import a.b`, `import a, b as c`, `from a.b import c` (also the submodule `a/b/c.py`),
/// `from . import x`, `from ..pkg.mod import y`.
fn python(path: &str, text: &str) -> Vec<Reference> {
    let dir = dir_of(path);
    let roots = python_roots(dir);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let module = part.split_whitespace().next().unwrap_or("");
                if is_module_name(module) {
                    out.push(Reference { how: How::Imported, candidates: python_module(&roots, module) });
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let mut words = rest.split_whitespace();
            let (Some(module), Some("import")) = (words.next(), words.next()) else { continue };
            let names: Vec<&str> = words
                .flat_map(|w| w.split(','))
                .map(|w| w.trim_matches(|c: char| c == '(' || c == ')'))
                .filter(|w| is_module_name(w) && *w != "as")
                .collect();
            let dots = module.len() - module.trim_start_matches('.').len();
            let module = &module[dots..];
            let bases: Vec<String> = if dots == 0 {
                roots.clone()
            } else {
                let mut base = Some(dir.to_owned());
                for _ in 1..dots {
                    base = base.and_then(|b| join(&b, ".."));
                }
                base.into_iter().collect()
            };
            if !module.is_empty() && !is_module_name(module) {
                continue;
            }
            if !module.is_empty() {
                out.push(Reference { how: How::Imported, candidates: python_module(&bases, module) });
            }
            for name in names {
                let sub = if module.is_empty() { name.to_owned() } else { format!("{module}.{name}") };
                out.push(Reference { how: How::Imported, candidates: python_module(&bases, &sub) });
            }
        }
    }
    out
}

fn is_module_name(word: &str) -> bool {
    !word.is_empty() && word.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Relative specifiers only (`./x`, `../x`): a bare name is a package, not the repository's.
fn javascript(path: &str, text: &str) -> Vec<Reference> {
    const EXTENSIONS: &[&str] = &["", ".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts"];
    let dir = dir_of(path);
    let mut out = Vec::new();
    for spec in quoted_after(text, &["require(", "from ", "import(", "import "]) {
        if !(spec.starts_with("./") || spec.starts_with("../")) {
            continue;
        }
        let Some(base) = join(dir, &spec) else { continue };
        let mut candidates: Vec<String> = EXTENSIONS.iter().map(|e| format!("{base}{e}")).collect();
        candidates.extend(["index.js", "index.ts", "index.mjs"].iter().map(|i| format!("{base}/{i}")));
        out.push(Reference { how: How::Imported, candidates });
    }
    out
}

/// `require_relative 'x'` against the file's directory; `require 'x'` against `test/`,
/// `spec/` and `lib/`.
fn ruby(path: &str, text: &str) -> Vec<Reference> {
    let dir = dir_of(path);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let (relative, rest) = match (line.strip_prefix("require_relative"), line.strip_prefix("require")) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            _ => continue,
        };
        let Some(spec) = first_quoted(rest) else { continue };
        let file = if spec.ends_with(".rb") { spec.clone() } else { format!("{spec}.rb") };
        let candidates: Vec<String> = match relative {
            true => join(dir, &file).into_iter().collect(),
            false => ["test", "spec", "lib"].iter().filter_map(|root| join(root, &file)).collect(),
        };
        if !candidates.is_empty() {
            out.push(Reference { how: How::Imported, candidates });
        }
    }
    out
}

/// The quoted strings that follow any of `openers` in `text`.
fn quoted_after(text: &str, openers: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        for opener in openers {
            let mut rest = line;
            while let Some(at) = rest.find(opener) {
                rest = &rest[at + opener.len()..];
                // `import x from './y'`: the specifier is the first quoted string on the line.
                if let Some(spec) = first_quoted(rest) {
                    out.push(spec);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn first_quoted(text: &str) -> Option<String> {
    let start = text.find(['\'', '"', '`'])?;
    let quote = text[start..].chars().next()?;
    let body = &text[start + 1..];
    let end = body.find(quote)?;
    Some(body[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    struct Tree(BTreeMap<String, String>);

    impl Tree {
        fn of(files: &[(&str, &str)]) -> Tree {
            Tree(files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect())
        }
    }

    impl Files for Tree {
        fn is_file(&self, path: &str) -> bool {
            self.0.contains_key(path)
        }
        fn read(&self, path: &str) -> Option<String> {
            self.0.get(path).cloned()
        }
    }

    fn reached(roots: &[&str], tree: &Tree) -> Vec<(String, String, usize)> {
        let roots: Vec<String> = roots.iter().map(|r| (*r).to_owned()).collect();
        closure(&roots, tree).into_iter().map(|r| (r.path, r.by, r.depth)).collect()
    }

    #[test]
    fn a_test_script_s_sourced_helper_is_reached_whatever_its_name() {
        let tree = Tree::of(&[
            ("t.sh", "#!/bin/sh\n. ./testlib.sh\nsource \"$(dirname \"$0\")/lib/more.sh\"\nsh calc.sh 2 3\n"),
            ("testlib.sh", "check() { [ \"$1\" = \"$2\" ] || exit 1; }\n. lib/common.sh\n"),
            ("lib/more.sh", ""),
            ("lib/common.sh", "# . never.sh\n"),
            ("calc.sh", "echo $(($1 + $2))\n"),
            ("never.sh", ""),
        ]);
        assert_eq!(
            reached(&["t.sh"], &tree),
            [
                ("testlib.sh".into(), "t.sh".into(), 1),
                ("lib/more.sh".into(), "t.sh".into(), 1),
                ("lib/common.sh".into(), "testlib.sh".into(), 2),
            ],
            "calc.sh is run, not sourced: it is the code under test; a comment sources nothing"
        );
    }

    #[test]
    fn script_relative_forms_resolve_against_the_script_s_directory() {
        for word in [
            "\"$(dirname \"$0\")/lib.sh\"",
            "$(dirname $0)/lib.sh",
            "\"$DIR\"/lib.sh",
            "$DIR/lib.sh",
            "\"${BASH_SOURCE%/*}/lib.sh\"",
            "./scripts/lib.sh",
        ] {
            let text = format!(". {word}\n");
            let refs = references("scripts/t.sh", &text);
            assert_eq!(refs.len(), 1, "{word}");
            assert!(refs[0].candidates.contains(&"scripts/lib.sh".to_owned()), "{word}: {refs:?}");
        }
        assert!(references("t.sh", ". /etc/profile\n. \"$X\"\n").is_empty());
        assert!(references("t.sh", ". ../../outside.sh\n").is_empty(), "nothing outside the repository");
    }

    #[test]
    fn python_imports_are_followed_into_test_support_only() {
        let tree = Tree::of(&[
            (
                "tests/test_calc.py",
                "import unittest\nfrom calc import add\nfrom helpers import check\nfrom .support import fixtures\n",
            ),
            ("calc.py", "def add(a, b): return a + b\n"),
            ("tests/helpers.py", "from testutil.asserts import same\n"),
            ("testutil/asserts.py", ""),
            ("tests/support/__init__.py", ""),
            ("tests/support/fixtures.py", ""),
        ]);
        let got = reached(&["tests/test_calc.py"], &tree);
        let paths: Vec<&str> = got.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["tests/helpers.py", "tests/support/__init__.py", "tests/support/fixtures.py", "testutil/asserts.py"],
            "calc.py is the code under test, not followed: {got:?}"
        );
    }

    #[test]
    fn javascript_ruby_and_make_references() {
        let js = references(
            "test/app.test.js",
            "const h = require('./helpers');\nimport { x } from \"../src/app\";\nimport 'jest';\n",
        );
        let first: Vec<&str> = js.iter().map(|r| r.candidates[0].as_str()).collect();
        assert_eq!(first, ["src/app", "test/helpers"]);
        assert!(js[1].candidates.contains(&"test/helpers.js".to_owned()));
        let rb = references("test/a_test.rb", "require_relative 'support/h'\nrequire 'test_helper'\n");
        assert_eq!(rb[0].candidates, ["test/support/h.rb"]);
        assert_eq!(rb[1].candidates, ["test/test_helper.rb", "spec/test_helper.rb", "lib/test_helper.rb"]);
        let mk = references("Makefile", "include common.mk\n-include $(DEPS)\ntest:\n\tsh t.sh\n");
        assert_eq!(mk, [Reference { how: How::Sourced, candidates: vec!["common.mk".into()] }]);
    }

    #[test]
    fn the_walk_is_bounded_in_depth_and_size_and_visits_a_file_once() {
        let mut files: Vec<(String, String)> =
            (0..10).map(|i| (format!("l{i}.sh"), format!(". l{}.sh\n", i + 1))).collect();
        files.push(("l10.sh".into(), String::new()));
        let tree = Tree(files.into_iter().collect());
        let got = reached(&["l0.sh"], &tree);
        assert_eq!(got.len(), MAX_DEPTH, "{got:?}");
        let wide: String = (0..200).map(|i| format!(". w{i}.sh\n")).collect();
        let mut files: BTreeMap<String, String> =
            (0..200).map(|i| (format!("w{i}.sh"), ". root.sh\n".into())).collect();
        files.insert("root.sh".into(), wide);
        let got = reached(&["root.sh"], &Tree(files));
        assert_eq!(got.len(), MAX_FILES);
        assert!(got.iter().all(|(p, _, _)| p != "root.sh"), "the root is not listed again");
    }

    #[test]
    fn test_support_is_named_by_its_directories_or_its_name() {
        for yes in ["tests/x.py", "testutil.py", "spec_helper.rb", "conftest.py", "fixtures/a.js", "support/h.sh"] {
            assert!(is_test_support(yes), "{yes}");
        }
        for no in ["calc.py", "src/app.js", "lib/parser.rb"] {
            assert!(!is_test_support(no), "{no}");
        }
    }
}
