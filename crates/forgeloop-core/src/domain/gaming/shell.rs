//! Shell code under test: a trap that ends the script with success (`trap 'exit 0' EXIT`),
//! which turns any failure after it into a pass. A trap that cleans up is not one.

use super::view::FileView;
use super::{Category, Finding};

/// Exit traps in one shell file.
pub(crate) fn scan(view: &FileView, out: &mut Vec<Finding>) {
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() {
            continue;
        }
        let lexed = &line.lexed;
        let traps = lexed.find("trap", false).into_iter().any(|at| {
            let rest = lexed.text.get(at + "trap".len()..).unwrap_or("");
            rest.starts_with([' ', '\t']) && {
                let words: String = rest.split_whitespace().collect::<Vec<_>>().join(" ");
                words.contains("exit 0") || words.contains("exit;") || words.ends_with("exit' EXIT")
            }
        });
        if traps {
            out.push(Finding {
                anchored: false,
                category: Category::ExitHook,
                at: i,
                says: "traps the script's exit to exit 0: a failure after it ends with success".to_owned(),
            });
        }
    }
}
