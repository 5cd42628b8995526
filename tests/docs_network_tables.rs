//! docs/sandbox.md's two network tables are the code's: the hosts `"registries"` stands for
//! (`domain::egress::REGISTRIES`) and the client messages that make a run `NEEDS_NETWORK`
//! (`domain::needs_network::SIGNS`), each listed once, nothing more and nothing less.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::collections::BTreeSet;

use forgeloop::domain::egress::REGISTRIES;
use forgeloop::domain::needs_network::SIGNS;

fn sandbox_doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/sandbox.md")).unwrap()
}

/// The backticked items of the first cells of the table whose header row starts with `header`.
fn first_cells(doc: &str, header: &str) -> BTreeSet<String> {
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(header)).skip(2);
    let mut items = BTreeSet::new();
    for line in lines.by_ref().take_while(|l| l.starts_with('|')) {
        let cell = line.trim_start_matches('|').split(" | ").next().unwrap_or("");
        for (i, part) in cell.split('`').enumerate() {
            if i % 2 == 1 {
                assert!(items.insert(part.to_owned()), "{part:?} is listed twice under {header:?}");
            }
        }
    }
    assert!(!items.is_empty(), "no table under {header:?}");
    items
}

#[test]
fn the_registries_table_is_the_list_the_proxy_allows() {
    let documented = first_cells(&sandbox_doc(), "| host | used by |");
    let code: BTreeSet<String> = REGISTRIES.iter().map(|(host, _)| (*host).to_owned()).collect();
    assert_eq!(documented, code);
}

#[test]
fn the_signs_table_is_the_list_needs_network_matches() {
    let documented = first_cells(&sandbox_doc(), "| printed | by |");
    let code: BTreeSet<String> = SIGNS.iter().map(|(sign, _)| (*sign).to_owned()).collect();
    assert_eq!(documented, code);
}
