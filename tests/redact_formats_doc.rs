//! The list of secret formats in docs/redaction.md is made from the formats table: a row added
//! without its line there (or a line left for a row that is gone) fails here. `UPDATE_DOCS=1`
//! rewrites the list.

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
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/redaction.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (Some(start), Some(end)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("docs/redaction.md has no generated formats list between {BEGIN:?} and {END:?}");
    };
    let current = &readme[start + BEGIN.len()..end];
    let wanted = format!("\n{}", rendered());
    if current == wanted {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{BEGIN}{wanted}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    panic!(
        "docs/redaction.md's formats list is out of date; run UPDATE_DOCS=1 cargo test --test redact_formats_doc\nwanted:\n{wanted}"
    );
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
