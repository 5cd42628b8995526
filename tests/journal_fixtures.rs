//! Journals written by the release before journal events were typed (the demo's seven cycles,
//! `tests/fixtures/journals/`) still verify, and every line reads as a typed `EventData`: the
//! types describe what journals have always held.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::Path;

use forgeloop::store::journal;

#[test]
fn journals_of_the_previous_release_verify_and_every_event_reads_typed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journals");
    let mut kinds = std::collections::BTreeSet::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        files += 1;
        let contents = journal::verify(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!contents.torn_tail, "{}", path.display());
        for event in &contents.events {
            let typed = event.typed();
            assert!(
                typed.is_some(),
                "{}: line {} ({}) does not read typed: {}",
                path.display(),
                event.seq,
                event.kind,
                event.data
            );
            assert_eq!(typed.map(|t| t.kind().as_str()), Some(event.kind.as_str()));
            kinds.insert(event.kind.clone());
        }
    }
    assert_eq!(files, 7);
    assert!(kinds.len() >= 15, "the fixtures cover most kinds: {kinds:?}");
}
