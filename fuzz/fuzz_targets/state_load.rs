//! Loading a state file never panics on any bytes; an accepted state serializes to JSON that
//! loads again and serializes identically (a rewrite loses nothing, unknown keys included).
#![no_main]

use forgeloop::domain::state::CycleState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = CycleState::from_bytes(data) {
        let json = state.to_json();
        let again = CycleState::from_bytes(json.as_bytes()).expect("a state we wrote loads");
        assert_eq!(again.to_json(), json, "rewrite is not stable");
    }
});
