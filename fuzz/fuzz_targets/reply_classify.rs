//! Reply classification never panics on any text, with or without a bound repository, and
//! a found PR is always one the classifier could parse back.
#![no_main]

use forgeloop::domain::pr_ref::{WebHosts, parse_pr_ref};
use forgeloop::domain::reply::{ReplyClass, classify};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let hosts = WebHosts::with(Some("ghe.example.com"));
    let bound = match selector % 3 {
        0 => None,
        1 => Some("acme/widget"),
        _ => Some("Acme/Widget.js"),
    };
    let c = classify(&text, &hosts, bound);
    if let Some(pr) = &c.pr {
        parse_pr_ref(&pr.shorthand(), &hosts).expect("the classified PR is a valid reference");
    }
    if c.class == ReplyClass::PrFound {
        assert!(c.pr.is_some(), "PR_FOUND without a PR");
    }
});
