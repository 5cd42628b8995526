//! The Markdown documents the docs tests read, and terminal text made plain: shared by
//! docs_examples, docs_links and docs_media (each includes this file).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// README.md, CONTRIBUTING.md (when present) and every docs/*.md, in a stable order.
pub fn markdown_docs(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        ["README.md", "CONTRIBUTING.md"].iter().map(|f| root.join(f)).filter(|p| p.exists()).collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map(|entries| {
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect()
        })
        .unwrap_or_default();
    docs.sort();
    files.extend(docs);
    files
}

/// A generated part of a doc, between `begin` and `end` markers, must equal `wanted`; with
/// `UPDATE_DOCS` set it is rewritten instead. `test` names the test binary for the message.
pub fn check_generated(doc: &str, begin: &str, end: &str, wanted: &str, test: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {doc}: {e}"));
    let (Some(start), Some(stop)) = (text.find(begin), text.find(end)) else {
        panic!("{doc} has no generated part between {begin:?} and {end:?}");
    };
    if &text[start + begin.len()..stop] == wanted {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{begin}{wanted}{}", &text[..start], &text[stop..])).unwrap();
        return;
    }
    panic!("{doc}'s generated part is out of date; run UPDATE_DOCS=1 cargo test --test {test}\nwanted:\n{wanted}");
}

/// Terminal output without escape sequences and carriage returns, for matching and reports.
pub fn plain_text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ST.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                // Two-byte sequences such as ESC ( B, ESC =, ESC 7.
                Some('(' | ')') => {
                    chars.next();
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::plain_text;

    #[test]
    fn escapes_and_carriage_returns_are_dropped() {
        assert_eq!(plain_text("\u{1b}[?1049h\u{1b}[1;1H\u{1b}[38;5;2mOK\u{1b}(B\r\n\u{1b}]0;t\u{7}x"), "OK\nx");
    }
}
