//! Loading a commands file never panics; an accepted profile has at least one command, each
//! a non-empty argv of non-empty strings (never a shell string), and survives a JSON round trip.
#![no_main]

use forgeloop::domain::commands::{commands_from_value, parse_commands};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(profile) = parse_commands(text) {
        assert!(!profile.commands.is_empty());
        for command in &profile.commands {
            assert!(!command.argv.is_empty() && command.argv.iter().all(|a| !a.is_empty()));
        }
        let value = serde_json::to_value(&profile).expect("a profile serializes");
        let again = commands_from_value(&value).expect("a profile we wrote loads");
        assert_eq!(again, profile);
    }
});
