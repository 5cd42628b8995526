//! The list of secret formats in docs/redaction.md is made from the formats table: a row added
//! without its line there (or a line left for a row that is gone) fails here. `UPDATE_DOCS=1`
//! rewrites the list.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use std::path::Path;

const BEGIN: &str =
    "<!-- formats:begin (generated from the formats table; UPDATE_DOCS=1 cargo test --test redact_formats_doc) -->";
const END: &str = "<!-- formats:end -->";

fn rendered() -> String {
    let mut out = String::new();
    let catalogue = forgeloop::redact::format_catalogue();
    let total: usize = catalogue.iter().map(|(_, ids)| ids.len()).sum();
    out.push_str(&format!("{total} built-in formats:\n\n"));
    for (family, ids) in catalogue {
        if ids.is_empty() {
            continue;
        }
        let names: Vec<String> = ids.iter().map(|id| format!("`{id}`")).collect();
        out.push_str(&format!("* **{family}** ({}): {}\n", ids.len(), names.join(", ")));
    }
    out
}

#[test]
fn the_docs_list_every_format_of_the_table() {
    let wanted = format!("\n{}", rendered());
    files::check_generated("docs/redaction.md", BEGIN, END, &wanted, "redact_formats_doc");
}

/// The README and the docs' index quote the number of formats; it follows the table.
#[test]
fn the_readme_quotes_the_number_of_formats_the_table_has() {
    let count: usize = forgeloop::redact::format_catalogue().iter().map(|(_, rows)| rows.len()).sum();
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let quoted = format!("{count} secret formats");
    assert!(readme.contains(&quoted), "README.md should say \"{quoted}\"");
    assert!(
        readme.contains(&format!("the {count} formats")),
        "README.md's reference table should say \"the {count} formats\""
    );
}
