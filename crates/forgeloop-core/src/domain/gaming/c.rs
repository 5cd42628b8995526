//! C and C++ sources (a native extension, a `cc`-built helper): constructors, which run when
//! the library loads, before any test (`__attribute__((constructor))`, a function placed in
//! `.init_array`).

use super::rust::init_section;
use super::view::FileView;
use super::{Category, Finding};

/// Constructors in one C or C++ file.
pub(crate) fn scan(view: &FileView, out: &mut Vec<Finding>) {
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() {
            continue;
        }
        let code: String = line.lexed.code.chars().filter(|c| !c.is_whitespace()).collect();
        if code.contains("__attribute__((constructor") || code.contains("__attribute__((__constructor__") {
            out.push(Finding {
                anchored: false,
                category: Category::Constructor,
                at: i,
                says: "marks a constructor (__attribute__((constructor))): it runs when the library loads, before any test"
                    .to_owned(),
            });
        } else if let Some(section) = init_section(&line.lexed) {
            out.push(Finding {
                anchored: false,
                category: Category::Constructor,
                at: i,
                says: format!("places code in {section}: it runs when the library loads, before any test"),
            });
        }
    }
}
