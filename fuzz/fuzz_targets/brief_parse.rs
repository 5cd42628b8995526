//! Brief parsing never panics; a parsed brief renders to text that parses to the same brief.
#![no_main]

use forgeloop::domain::brief::Brief;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(brief) = Brief::parse(text) {
        let rendered = brief.render();
        let again = Brief::parse(&rendered).expect("a rendered brief parses");
        assert_eq!(again, brief, "render/parse round trip changed the brief");
    }
});
