//! `parse_pr_ref` never panics, and an accepted reference survives a round trip through its
//! shorthand (`OWNER/REPO#N`) unchanged.
#![no_main]

use forgeloop::domain::pr_ref::{WebHosts, parse_pr_ref};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let hosts = WebHosts::with(Some("ghe.example.com:8443"));
    if let Ok(pr) = parse_pr_ref(text, &hosts) {
        assert!(pr.number >= 1, "PR number 0 accepted from {text:?}");
        let again = parse_pr_ref(&pr.shorthand(), &hosts).expect("a shorthand we printed parses");
        assert_eq!(again.shorthand(), pr.shorthand());
        assert_eq!(again.number, pr.number);
    }
});
