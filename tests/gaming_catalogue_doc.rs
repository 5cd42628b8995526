//! The gaming scan's catalogue in docs/testing.md is made from the domain's own table
//! (`domain::gaming::CATALOGUE`): a row added or changed without the docs following fails here.
//! `UPDATE_DOCS=1` rewrites the region.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use forgeloop::domain::gaming::CATALOGUE;

const BEGIN: &str =
    "<!-- gaming:begin (generated from domain/gaming; UPDATE_DOCS=1 cargo test --test gaming_catalogue_doc) -->";
const END: &str = "<!-- gaming:end -->";

/// A table cell's `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Code as one code span, its lines joined with ⏎ (a table cell holds one line).
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    format!("`{}`", cell(&lines.join(" ⏎ ")))
}

fn rendered() -> String {
    let mut out = String::from(
        "\n| category | language | what is flagged | flagged, e.g. | not flagged, e.g. |\n|---|---|---|---|---|\n",
    );
    for row in CATALOGUE {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            row.category.as_str(),
            row.language,
            cell(row.what),
            code(row.sample),
            code(row.near_miss)
        ));
    }
    out
}

#[test]
fn the_docs_catalogue_of_the_gaming_scan_is_the_domains() {
    files::check_generated("docs/testing.md", BEGIN, END, &rendered(), "gaming_catalogue_doc");
}
