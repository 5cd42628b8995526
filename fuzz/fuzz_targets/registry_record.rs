//! Loading a Project registry record never panics; an accepted record writes bytes that load
//! to the same record.
#![no_main]

use forgeloop::registry::{Record, RepoKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let key = RepoKey::parse("acme/widget").expect("a valid key");
    if let Ok(record) = Record::parse(data, &key) {
        let bytes = record.to_bytes();
        let again = Record::parse(&bytes, &key).expect("a record we wrote loads");
        assert_eq!(again.to_bytes(), bytes);
    }
});
