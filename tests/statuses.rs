//! The status table of docs/commands.md is the contract agents branch on: it names exactly the `status`
//! words the code can print (`forgeloop::domain::word::Word::all()`, which every printer goes
//! through), and no printer spells a status word of its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use forgeloop::domain::word::Word;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The backticked words of the first column of the docs/commands.md table headed `| status | meaning |`.
fn readme_words() -> BTreeSet<String> {
    let readme = std::fs::read_to_string(root().join("docs/commands.md")).unwrap();
    let mut lines = readme.lines().skip_while(|l| l.trim() != "| status | meaning |");
    assert!(lines.next().is_some(), "docs/commands.md has no `| status | meaning |` table");
    let mut words = BTreeSet::new();
    for line in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let first = line.split('|').nth(1).unwrap_or_default();
        for word in first.split('`').skip(1).step_by(2) {
            assert!(words.insert(word.to_owned()), "the status table lists `{word}` twice");
        }
    }
    words
}

#[test]
fn the_docs_status_table_names_every_word_the_code_can_print() {
    let code: BTreeSet<String> = Word::all().iter().map(|w| w.as_str().to_owned()).collect();
    let readme = readme_words();
    let undocumented: Vec<_> = code.difference(&readme).collect();
    let unknown: Vec<_> = readme.difference(&code).collect();
    assert!(
        undocumented.is_empty(),
        "status words the code prints but the table in docs/commands.md does not list: {undocumented:?}"
    );
    assert!(unknown.is_empty(), "docs/commands.md status rows the code never prints: {unknown:?}");
    for word in ["PROBLEMS", "OK", "JOURNAL_OK", "READY_TO_MERGE", "TEST_FAILED", "PROJECT_NOT_LINKED"] {
        assert!(readme.contains(word), "{word}");
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A printer that wrote `"status": "SOME_WORD"` (or inserted a literal under `status`) would
/// bypass `Word`, and so the table above. Unit-test modules (from `#[cfg(test)]` on) may.
#[test]
fn no_printer_spells_a_status_word_outside_word() {
    let mut files = Vec::new();
    for dir in ["src", "crates/forgeloop-core/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    let literal = regex::Regex::new(r#""status"\s*(:|\.into\(\)\s*,\s*(Value::from\(|json!\())\s*"[A-Z]"#).unwrap();
    let constructor = regex::Regex::new(r#"(Failure::new|error::document|document)\(\s*"[A-Z]"#).unwrap();
    let mut offenders = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if literal.is_match(line) || constructor.is_match(line) {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(offenders.is_empty(), "status words spelled outside domain::word::Word:\n{}", offenders.join("\n"));
}
