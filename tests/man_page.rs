//! The manual pages in `man/` are what `forgeloop man` prints, made from the same clap
//! definitions as `--help`: a flag added without the pages following fails here.
//! `UPDATE_DOCS=1` rewrites them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::Path;

/// forgeloop(1) and forgeloop-COMMAND(1) for each command `--help` lists.
fn pages() -> Vec<(String, Vec<u8>)> {
    forgeloop::cli::man_pages().unwrap()
}

#[test]
fn the_man_pages_are_the_cli() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let pages = pages();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        for (name, page) in &pages {
            std::fs::write(dir.join(name), page).unwrap();
        }
    }
    let mut stale = Vec::new();
    for (name, page) in &pages {
        if std::fs::read(dir.join(name)).ok().as_ref() != Some(page) {
            stale.push(name.clone());
        }
    }
    let mut kept: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    kept.sort();
    let mut made: Vec<String> = pages.iter().map(|(n, _)| n.clone()).collect();
    made.sort();
    assert!(
        stale.is_empty() && kept == made,
        "man/ is stale ({stale:?}; kept {kept:?}): UPDATE_DOCS=1 cargo test --test man_page"
    );
}

#[test]
fn forgeloop_man_prints_the_page_and_names_an_unknown_command() {
    let bin = env!("CARGO_BIN_EXE_forgeloop");
    let out = std::process::Command::new(bin).args(["man", "review", "start"]).output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH forgeloop-review-start 1"), "{page}");
    assert!(page.contains("\\fBforgeloop review start\\fR"), "{page}");
    assert!(page.contains("\\-\\-range"), "its options are on it: {page}");
    let out = std::process::Command::new(bin).args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("is not a forgeloop command"));
}
