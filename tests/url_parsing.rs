//! URLs are parsed once, by the `url` crate, and every check on a URL works on the parsed value
//! (design §8.1): a check that slices a string at `://` and the browser (or libgit2, or the
//! proxy) that reads the same URL can disagree about its host, which is how a check is walked
//! around (`http://127.0.0.1@evil.example`). This test fails on a new such slicing in product
//! code. The files still listed below are known debt, each with why it is there; the list may
//! only shrink (a listed file that no longer slices fails too, so the entry goes).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::{Path, PathBuf};

const SLICING: &[&str] = &[
    "split_once(\"://\")",
    "split(\"://\")",
    "find(\"://\")",
    "strip_prefix(\"https://\")",
    "strip_prefix(\"http://\")",
];

/// Files that still slice, and why they have not moved to `url` yet.
const KNOWN: &[(&str, &str)] = &[(
    "crates/forgeloop-core/src/redact/known.rs",
    "the redactor scanning text for credentials in URLs: not a URL check",
)];

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

/// Product code only: a file's `#[cfg(test)] mod tests` and everything after it is left out.
fn product_part(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

#[test]
fn no_url_is_parsed_by_slicing_outside_the_known_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates/forgeloop-core/src"), &mut files);
    let mut slicing = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in product_part(&text).lines().enumerate() {
            if SLICING.iter().any(|p| line.contains(p)) {
                slicing.push((rel.clone(), n + 1, line.trim().to_owned()));
            }
        }
    }
    let new: Vec<_> = slicing.iter().filter(|(f, _, _)| !KNOWN.iter().any(|(k, _)| k == f)).collect();
    assert!(new.is_empty(), "parse these with the url crate (url::Url) and check the parsed value: {new:#?}");
    for (known, _) in KNOWN {
        assert!(
            slicing.iter().any(|(f, _, _)| f == known),
            "{known} no longer slices URLs: take it off KNOWN in tests/url_parsing.rs"
        );
    }
}
