//! A control-room pane is a vertical slice (CONTRIBUTING, "A new tab or screen"): everything
//! about it lives in its folder under `src/tui/panes/`, and the one other place that names it
//! is its line in `src/tui/registry.rs`, from which the rest is generated. This test reads the
//! registry's lines and fails when a pane's names (its module path, its types, its tab or
//! screen variant, its field) appear anywhere else in `src/tui`'s product code, and when a
//! pane folder is neither registered nor one of the few that are not tabs or screens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::{Path, PathBuf};

/// Pane folders that are not tabs or screens, and why the app owns them.
const NOT_SLICES: &[(&str, &str)] = &[
    ("list", "the cycle list: the selection every tab and the app depend on"),
    ("help", "the help overlay: a popup drawn over any screen from the keymap in force"),
];

/// A registered pane: its variant, module and type, from its registry line.
#[derive(Debug)]
struct Registered {
    variant: String,
    module: String,
    pane: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The registry's lines: `Variant module::Type "Title" …;` inside the two list macros.
fn registered() -> Vec<Registered> {
    let text = std::fs::read_to_string(root().join("src/tui/registry.rs")).unwrap();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        let (Some(variant), Some(path)) = (words.next(), words.next()) else { continue };
        let Some((module, pane)) = path.split_once("::") else { continue };
        let is_ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if line.ends_with(';')
            && variant.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && is_ident(variant)
            && is_ident(module)
            && pane.ends_with("Pane")
            && is_ident(pane)
        {
            out.push(Registered { variant: variant.into(), module: module.into(), pane: pane.into() });
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Product code without comments: a file's `#[cfg(test)]` part and everything after `//` on a
/// line are left out (a unit test may name what it tests; prose may name a tab).
fn code_of(text: &str) -> String {
    let product = text.find("#[cfg(test)]").map_or(text, |at| &text[..at]);
    product.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Whether `word` occurs in `code` as a whole identifier path (not inside a longer name).
fn names(code: &str, word: &str) -> bool {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    code.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The names that mean pane `p` to a reader of the code.
fn names_of(p: &Registered) -> Vec<String> {
    let stem = p.pane.trim_end_matches("Pane");
    vec![
        format!("panes::{}", p.module),
        format!("super::{}", p.module),
        p.pane.clone(),
        format!("{stem}Load"),
        format!("{stem}Msg"),
        format!("Tab::{}", p.variant),
        format!("Screen::{}", p.variant),
        format!("tabs.{}", p.module),
        format!("screens.{}", p.module),
    ]
}

#[test]
fn a_panes_names_appear_only_in_its_folder_and_the_registry() {
    let panes = registered();
    assert!(panes.len() >= 8, "the registry's lines were not read: {panes:?}");
    let mut files = Vec::new();
    rust_files(&root().join("src/tui"), &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "src/tui/registry.rs" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for pane in &panes {
            if rel.starts_with(&format!("src/tui/panes/{}/", pane.module)) {
                continue;
            }
            for name in names_of(pane) {
                // `super::x` is a pane's name only one level up from its folder.
                if name.starts_with("super::") && !rel.starts_with("src/tui/panes/") {
                    continue;
                }
                if names(&code, &name) {
                    problems.push(format!("{rel} names {name} (the {} pane's)", pane.module));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "a pane is named outside its folder and the registry; move the code into the pane's folder, or make it generic (a Request, a hook of the Pane trait):\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_pane_folder_is_registered_or_said_why_not() {
    let panes = registered();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(root().join("src/tui/panes")).unwrap().flatten() {
        if !entry.path().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let listed = panes.iter().any(|p| p.module == name);
        let exempt = NOT_SLICES.iter().any(|(n, _)| *n == name);
        if listed == exempt {
            problems.push(format!("src/tui/panes/{name}: registered {listed}, listed as not a slice {exempt}"));
        }
    }
    for pane in &panes {
        if !root().join("src/tui/panes").join(&pane.module).join("mod.rs").exists() {
            problems.push(format!("{} is registered but has no folder", pane.module));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The third part of a new pane: its screens, committed (tests/tui_snapshots.rs).
#[test]
fn every_registered_pane_has_a_snapshot() {
    let snapshots: Vec<String> = std::fs::read_dir(root().join("tests/snapshots"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for pane in registered() {
        let prefix = format!("tui_snapshots__{}_", pane.module);
        assert!(
            snapshots.iter().any(|s| s.starts_with(&prefix) && s.ends_with(".snap")),
            "the {} pane has no snapshot (tests/snapshots/{prefix}*.snap)",
            pane.module
        );
    }
}

#[test]
fn the_checker_finds_a_name_and_ignores_prose_and_longer_names() {
    let pane = Registered { variant: "Diff".into(), module: "diff".into(), pane: "DiffPane".into() };
    let hit = |code: &str| names_of(&pane).iter().any(|n| names(&code_of(code), n));
    assert!(hit("let x = self.tabs.diff.top;"));
    assert!(hit("use crate::tui::panes::diff::DiffLoad;"));
    assert!(hit("if tab == Tab::Diff {"));
    assert!(!hit("// the Tab::Diff shows it"), "comments are prose");
    assert!(!hit("let d = Tab::DiffLike;"), "a longer name is another name");
    assert!(!hit("fn f() {}\n#[cfg(test)]\nmod tests { use Tab::Diff; }"), "unit tests may name it");
}
