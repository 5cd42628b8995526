//! The domain layer stays pure (design §2): no I/O, no clock, no network. This reads its
//! source and fails if any path reaches for the outside world.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`, but a directory module's unit tests (`tests.rs`) and fixtures.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "fixtures") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "tests.rs") {
            out.push(path);
        }
    }
}

const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
    "std::io",
    "std::thread",
    "SystemTime",
    "Instant::",
    "tokio::",
    "octocrab::",
    "git2::",
    "notify::",
    "chrono::",
    "Utc::now",
    "crate::store",
    "crate::cycle",
    "crate::cli",
];

#[test]
fn domain_modules_use_nothing_impure() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/forgeloop-core/src/domain");
    let mut checked = 0;
    let mut files = Vec::new();
    rust_files(Path::new(dir), &mut files);
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        // Only the module's own code, not its unit tests (which may build fixtures).
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            for word in FORBIDDEN {
                assert!(!line.contains(word), "{}:{}: domain code uses {word}: {line}", path.display(), n + 1);
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "expected the domain modules, found {checked}");
}
