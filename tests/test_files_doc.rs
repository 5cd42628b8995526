//! The table of test files and the assertion markers in docs/testing.md are made from the
//! domain's own tables (`domain::test_files::{RULES, ASSERTION_MARKERS}`): a rule added or
//! changed without the docs following fails here. `UPDATE_DOCS=1` rewrites the table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use forgeloop::domain::test_files::{ASSERTION_MARKERS, RULES};

const BEGIN: &str =
    "<!-- test-files:begin (generated from domain/test_files.rs; UPDATE_DOCS=1 cargo test --test test_files_doc) -->";
const END: &str = "<!-- test-files:end -->";

fn rendered() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("\n| kind | a path that matches | e.g. |\n|---|---|---|\n");
    out.push_str("| `run` | a file the commands run or name, `package.json`'s `scripts.test` script, the Makefile `make` reads | `test.sh` for `[\"sh\", \"test.sh\"]` |\n");
    for rule in RULES {
        out.push_str(&format!("| `{}` | {} | `{}` |\n", rule.kind.as_str(), cell(rule.pattern), rule.example));
    }
    out.push_str("\n| language | a line is an assertion when it holds |\n|---|---|\n");
    for (language, words) in ASSERTION_MARKERS {
        let words: Vec<String> = words.iter().map(|w| format!("`{}`", cell(w))).collect();
        out.push_str(&format!("| {language} | {} |\n", words.join(" ")));
    }
    out
}

#[test]
fn the_docs_table_of_test_files_is_the_domains() {
    files::check_generated("docs/testing.md", BEGIN, END, &rendered(), "test_files_doc");
}
