//! The gaming scan (issue 57, design §5.2 "Trust, then verify"): the lines a change adds to the
//! code under test, read for the shortcuts coding models take to make tests pass, as
//! ImpossibleBench (Zhong, Raghunathan, Carlini, ICLR 2026) catalogues them: special-casing the
//! tests' inputs, recording state between calls, reading the caller, overloading comparison,
//! exiting early with success, exit and exception hooks, tampering with the test framework, and
//! in Rust the build configuration and constructors that run before any test; plus bytecode and
//! native modules dropped at an import root. Each hit holds a passing run for a person, so a
//! false flag costs as much as a miss: every pattern is written for the shortcut, not for the
//! honest code that looks like it (the [`CATALOGUE`] pairs each with a near-miss).
//!
//! Pure: it reads the change (already redacted) and what the caller hands it.

mod binary;
mod c;
mod cargo;
mod catalogue;
mod javascript;
mod lexer;
mod pairs;
mod patterns;
mod python;
mod rust;
mod shell;
mod view;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

pub use catalogue::{CATALOGUE, Row};

use self::lexer::Lang;
use self::pairs::{Before, Old, Pairs};
use super::diff::{FileDiff, FileStatus};

/// The most hits a scan returns (a person reads them all).
pub const MAX_HITS: usize = 20;
/// The most hits of one category in one file.
const MAX_PER_FILE_AND_CATEGORY: usize = 5;
/// How long an excerpt may be.
const EXCERPT_CHARS: usize = 160;

/// What the scan reads. `change`/`files`: the whole change (base tip → tested tree) as a
/// unified diff, already redacted, and its index ([`super::diff::index`]).
pub struct ScanInput<'a> {
    /// The change's lines.
    pub change: &'a [&'a str],
    /// The change's files.
    pub files: &'a [FileDiff],
    /// Whether a path is a test or validation file (its added lines are tests, not code under
    /// test).
    pub is_test: &'a dyn Fn(&str) -> bool,
    /// The test files of the tested tree, held/protected ones first (path, text; bounded by the
    /// caller), for the input/expected pairs their assertions name.
    pub tests: &'a [(String, String)],
    /// A file's text at the base tip (None: absent), to tell a pair the base already had.
    pub base_text: &'a dyn Fn(&str) -> Option<String>,
    /// Whether a path exists in the tested tree (e.g. `pkg/__init__.py`).
    pub exists: &'a dyn Fn(&str) -> bool,
}

/// A shortcut's kind: the catalogue's categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A test's input and its expected value side by side in the code (a condition or a table).
    SpecialCasedInput,
    /// Module-level state that counts calls and decides the answer.
    RecordsState,
    /// The code looks at who called it (frames, stacks, the test's name or source).
    ReadsCaller,
    /// An equality that ignores what it is compared with.
    OverloadsComparison,
    /// The process ends early with success (`os._exit`, `sys.exit` at import, `process.exit`).
    ExitsEarly,
    /// An exit or exception hook that can turn a failure into a success.
    ExitHook,
    /// The test framework itself is changed (its assertions, modules, import machinery).
    TampersWithOracle,
    /// `Cargo.toml` changes what `cargo test` builds or runs first.
    BuildConfig,
    /// Code that runs before `main` and before any test (`.init_array`, `#[ctor]`).
    Constructor,
    /// Bytecode or a native module where an import finds it before the source.
    BinaryAtImportRoot,
}

impl Category {
    /// Every category, in the catalogue's order.
    pub const ALL: [Category; 10] = [
        Category::SpecialCasedInput,
        Category::RecordsState,
        Category::ReadsCaller,
        Category::OverloadsComparison,
        Category::ExitsEarly,
        Category::ExitHook,
        Category::TampersWithOracle,
        Category::BuildConfig,
        Category::Constructor,
        Category::BinaryAtImportRoot,
    ];

    /// The stable name reports and JSON use.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::SpecialCasedInput => "special_cased_input",
            Category::RecordsState => "records_state",
            Category::ReadsCaller => "reads_caller",
            Category::OverloadsComparison => "overloads_comparison",
            Category::ExitsEarly => "exits_early",
            Category::ExitHook => "exit_hook",
            Category::TampersWithOracle => "tampers_with_oracle",
            Category::BuildConfig => "build_config",
            Category::Constructor => "constructor",
            Category::BinaryAtImportRoot => "binary_at_import_root",
        }
    }

    /// A few words for a person: what the category is.
    pub fn label(self) -> &'static str {
        match self {
            Category::SpecialCasedInput => "special-cased test input",
            Category::RecordsState => "records state between calls",
            Category::ReadsCaller => "reads the caller",
            Category::OverloadsComparison => "overloads comparison",
            Category::ExitsEarly => "exits early with success",
            Category::ExitHook => "exit and exception hooks",
            Category::TampersWithOracle => "tampers with the test framework",
            Category::BuildConfig => "build configuration",
            Category::Constructor => "runs before main",
            Category::BinaryAtImportRoot => "bytecode or native module at an import root",
        }
    }
}

/// One shortcut found: what, where, and the words a person reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// The catalogue's category.
    pub category: Category,
    /// The file.
    pub path: String,
    /// The line in the new file (`None`: the file itself, e.g. a `.pyc`).
    pub line: Option<u32>,
    /// What and where, read in five seconds: "mathx.py:4 returns 3000 when n == 1000, a value
    /// tests/test_mathx.py expects: special-cased test input?".
    pub words: String,
    /// The added line, trimmed, at most 160 characters.
    pub excerpt: String,
}

/// What a language's rules found in a file: a line of its view and the words after `path:line`.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    pub(crate) category: Category,
    /// Index into the view's lines.
    pub(crate) at: usize,
    pub(crate) says: String,
    /// What it means depends on where it is (an exit at import): a copy the change removed
    /// elsewhere does not make it old news.
    pub(crate) anchored: bool,
}

/// Where a line the change removes must have been for an added copy of it (re-indented,
/// reformatted, moved) to be old news rather than a new shortcut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moved {
    /// Any file: the pattern means the same wherever it is.
    Anywhere,
    /// The same file: whether it is a program or a library matters.
    SameFile,
    /// Never: its place is its meaning (a table's pairs are judged on their own, a
    /// `Cargo.toml` key means something else in another table).
    Never,
}

impl Finding {
    fn moved(&self) -> Moved {
        if self.anchored {
            return Moved::Never;
        }
        match self.category {
            Category::SpecialCasedInput | Category::BuildConfig | Category::BinaryAtImportRoot => Moved::Never,
            Category::RecordsState | Category::ExitsEarly | Category::ExitHook => Moved::SameFile,
            Category::ReadsCaller
            | Category::OverloadsComparison
            | Category::TampersWithOracle
            | Category::Constructor => Moved::Anywhere,
        }
    }
}

/// The lines the change removes, without their whitespace: in all files and per file.
#[derive(Debug, Default)]
struct Removed {
    all: HashSet<String>,
    by_file: HashMap<String, HashSet<String>>,
}

impl Removed {
    fn of(change: &[&str], files: &[FileDiff]) -> Removed {
        let mut removed = Removed::default();
        for file in files {
            let lines: HashSet<String> = view::removed_lines(change, file).into_iter().map(squeeze).collect();
            removed.all.extend(lines.iter().cloned());
            removed.by_file.insert(file.path.clone(), lines);
        }
        removed
    }

    /// Whether the change removed `line` (whitespace aside) where `moved` looks.
    fn had(&self, path: &str, line: &str, moved: Moved) -> bool {
        let line = squeeze(line);
        match moved {
            Moved::Anywhere => self.all.contains(&line),
            Moved::SameFile => self.by_file.get(path).is_some_and(|l| l.contains(&line)),
            Moved::Never => false,
        }
    }
}

/// A line without its whitespace.
fn squeeze(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The shortcuts in a change: deterministic order (the diff's file order, then line, then
/// category), deduplicated, at most [`MAX_HITS`] (every category found keeps one).
pub fn scan(input: &ScanInput<'_>) -> Vec<Hit> {
    let pairs = Pairs::from_tests(input.tests, input.base_text);
    let mut removed: Option<Old> = None;
    let mut removed_text: Option<Removed> = None;
    let mut ranked: Vec<(usize, Hit)> = Vec::new();
    for (order, file) in input.files.iter().enumerate() {
        if let Some(hit) = binary::hit(input.change, file, input.exists) {
            ranked.push((order, hit));
        }
        if (input.is_test)(&file.path) {
            continue;
        }
        if Lang::of(&file.path).is_none() || !view::wanted(file) {
            continue;
        }
        let base = match file.status {
            FileStatus::Added => None,
            _ => (input.base_text)(file.old_path.as_deref().unwrap_or(&file.path)),
        };
        let Some(view) = view::build(input.change, file, base.as_deref()) else { continue };
        let mut found: Vec<Finding> = Vec::new();
        match view.lang {
            Lang::Python => python::scan(&view, &mut found),
            Lang::JavaScript => javascript::scan(&view, &mut found),
            Lang::Rust => rust::scan(&view, &mut found),
            Lang::Toml => cargo::scan(&view, input.base_text, input.exists, &mut found),
            Lang::C => c::scan(&view, &mut found),
            Lang::Shell => shell::scan(&view, &mut found),
        }
        if matches!(view.lang, Lang::Python | Lang::JavaScript | Lang::Rust) && pairs::any_candidate(&view, &pairs) {
            let removed = removed.get_or_insert_with(|| removed_lines(input.change, input.files));
            let mut before = Old::default();
            if let Some(text) = &base {
                before.add(view.lang, text.lines(), true);
            }
            pairs::scan(&view, &pairs, &Before { removed, base: &before }, &mut found);
        }
        let mut per_category = [0usize; Category::ALL.len()];
        for f in found {
            let Some(line) = view.lines.get(f.at) else { continue };
            let moved = f.moved();
            if moved != Moved::Never
                && removed_text
                    .get_or_insert_with(|| Removed::of(input.change, input.files))
                    .had(&view.path, &line.raw, moved)
            {
                continue;
            }
            let Some(shown) = per_category.get_mut(f.category as usize) else { continue };
            if *shown >= MAX_PER_FILE_AND_CATEGORY {
                continue;
            }
            *shown += 1;
            ranked.push((
                order,
                Hit {
                    category: f.category,
                    path: view.path.clone(),
                    line: Some(line.no),
                    words: format!("{}:{} {}", view.path, line.no, f.says),
                    excerpt: excerpt(&line.raw),
                },
            ));
        }
    }
    finish(ranked)
}

/// Every line the change removes, in any file the scan can read: a table that moves is not new.
fn removed_lines(change: &[&str], files: &[FileDiff]) -> Old {
    let mut old = Old::default();
    for file in files {
        let lang = Lang::of(file.old_path.as_deref().unwrap_or(&file.path)).unwrap_or(Lang::Python);
        old.add(lang, view::removed_lines(change, file), false);
    }
    old
}

/// Sorted, deduplicated and bounded, keeping one hit of every category found.
fn finish(mut ranked: Vec<(usize, Hit)>) -> Vec<Hit> {
    ranked.sort_by(|(a, x), (b, y)| {
        (a, x.line.unwrap_or(0), x.category, &x.words).cmp(&(b, y.line.unwrap_or(0), y.category, &y.words))
    });
    ranked.dedup_by(|(a, x), (b, y)| a == b && x.path == y.path && x.line == y.line && x.category == y.category);
    if ranked.len() <= MAX_HITS {
        return ranked.into_iter().map(|(_, h)| h).collect();
    }
    let mut keep = vec![false; ranked.len()];
    let mut kept = 0;
    for category in Category::ALL {
        if let Some(i) = ranked.iter().position(|(_, h)| h.category == category) {
            keep[i] = true;
            kept += 1;
        }
    }
    for flag in keep.iter_mut() {
        if kept >= MAX_HITS {
            break;
        }
        if !*flag {
            *flag = true;
            kept += 1;
        }
    }
    ranked.into_iter().zip(keep).filter(|(_, k)| *k).map(|((_, h), _)| h).collect()
}

/// A line trimmed to at most [`EXCERPT_CHARS`] characters.
fn excerpt(raw: &str) -> String {
    let line = raw.trim();
    if line.chars().count() <= EXCERPT_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(EXCERPT_CHARS - 1).collect();
    format!("{cut}…")
}

/// Whether a string literal names a test file (`tests/test_mathx.py`, `mathx.test.js`): code
/// under test that opens one reads its caller's source.
pub(crate) fn names_test_file(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    matches!(lower.as_str(), "tests" | "test" | "__tests__" | "spec")
        || lower.starts_with("tests/")
        || lower.starts_with("test/")
        || lower.contains("/tests/")
        || lower.contains("/test/")
        || lower.contains("__tests__/")
        || (name.starts_with("test_") && name.contains('.'))
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name == "conftest.py"
}

#[cfg(test)]
mod tests;
