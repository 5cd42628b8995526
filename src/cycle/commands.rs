//! Loading and accepting a commands profile (design §5.2.3): every place a profile enters —
//! the CLI's `--commands-json` for `forge --pr`, `test` and `commands` ([`load`]), the MCP
//! server's configured profiles — calls [`accept`], so what a run stores is exactly what it
//! ran. A cycle's state is written redacted (`session::redact_state`); a profile the redactor would change would come back
//! different on the next iteration or the control room's rerun, with another
//! `commands_sha256`. Such a profile is refused, naming where (command and argument index, env
//! name), never echoing the value.

use std::path::Path;

use crate::domain::commands::{CommandsError, CommandsProfile, is_local_path_kind, parse_commands};
use crate::error::{Error, Result};
use crate::redact::Redactor;

/// The commands file is small; anything bigger is not one.
const MAX_COMMANDS_BYTES: u64 = 1024 * 1024;

/// Reads and parses a commands file and accepts it ([`accept`]: nothing the
/// redactor would mask, so the stored commands are the ones run).
pub fn load(redactor: &Redactor, path: &Path) -> Result<CommandsProfile> {
    use std::io::Read;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let fail = |reason: String| Error::CommandsFile { path: path.to_path_buf(), reason };
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_COMMANDS_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| fail(format!("{name}: {e}")))?;
    if text.len() as u64 > MAX_COMMANDS_BYTES {
        return Err(fail(format!("{name} is larger than {MAX_COMMANDS_BYTES} bytes")));
    }
    parse_commands(&text)
        .and_then(|profile| accept(redactor, profile))
        .map_err(|source| Error::Commands { path: path.to_path_buf(), source })
}

/// `profile` unchanged when redaction keeps every part of it; else the first place it would
/// change.
pub fn accept(redactor: &Redactor, profile: CommandsProfile) -> Result<CommandsProfile, CommandsError> {
    let refuse = |place: String, kind: String| Err(CommandsError::not_storable(place, kind));
    let steps = profile.setup.iter().enumerate().map(|(i, c)| (format!("setup command {}", i + 1), c));
    let steps = steps.chain(profile.commands.iter().enumerate().map(|(i, c)| (format!("command {}", i + 1), c)));
    for (step, command) in steps {
        for (j, arg) in command.argv.iter().enumerate() {
            if let Some(kind) = redactor.mask_kind(None, arg) {
                return refuse(format!("{step}, argument {}", j + 1), kind);
            }
        }
        for (name, value) in &command.env {
            if let Some(kind) = redactor.mask_kind(None, name) {
                return refuse(format!("{step}, the name of an env entry"), kind);
            }
            if let Some(kind) = redactor.mask_kind(Some(name), value) {
                return refuse(format!("{step}, env {name}"), kind);
            }
        }
    }
    let lists = [
        ("env_passthrough", &profile.env_passthrough),
        ("read_paths", &profile.read_paths),
        ("write_paths", &profile.write_paths),
    ];
    for (what, items) in lists {
        for (k, item) in items.iter().enumerate() {
            match redactor.mask_kind(None, item) {
                // A home in the sandbox's paths is the sandbox's to refuse, with its own
                // status (SANDBOX_PATH_REFUSED) and reason.
                Some(kind) if what != "env_passthrough" && is_local_path_kind(&kind) => {}
                Some(kind) => return refuse(format!("{what}, entry {}", k + 1), kind),
                None => {}
            }
        }
    }
    // Whatever the walk above missed: the stored form itself must survive redaction.
    let mut commands_only = profile.clone();
    commands_only.read_paths.clear();
    commands_only.write_paths.clear();
    if let Ok(stored) = serde_json::to_value(&commands_only) {
        let mut redacted = stored.clone();
        redactor.redact_json(&mut redacted);
        if redacted != stored {
            return refuse("the commands file".to_owned(), "unknown".to_owned());
        }
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::parse_commands;

    /// A secret-shaped value made at run time (never a committed literal).
    fn generated(prefix: &str) -> String {
        let seed = std::process::id() as u64 ^ 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
        let mut state = seed;
        let mut out = String::from(prefix);
        for i in 0..36 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            // Every third character a digit: a draw of letters only (this process's pid decides
            // the draw) would not look like a password to the redactor's rules, and the test
            // would fail for one pid in a few hundred.
            let pool: &[u8] = if i % 3 == 2 { b"23456789" } else { alphabet };
            out.push(pool[(state >> 33) as usize % pool.len()] as char);
        }
        out
    }

    #[test]
    fn a_secret_literal_is_refused_by_place_without_echoing_it() {
        let redactor = Redactor::default();
        let secret = generated("");
        let env = format!(r#"{{"commands": [["true"], {{"argv": ["make"], "env": {{"JWT_SECRET": "{secret}"}}}}]}}"#);
        let err = accept(&redactor, parse_commands(&env).unwrap()).unwrap_err();
        assert!(matches!(err, CommandsError::SecretLiteral { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("command 2, env JWT_SECRET") && text.contains("env_passthrough"), "{text}");
        assert!(!text.contains(&secret));

        let flag = format!(r#"[["true"], ["deploy", "--dry-run", "--password={secret}"]]"#);
        let text = accept(&redactor, parse_commands(&flag).unwrap()).unwrap_err().to_string();
        assert!(text.contains("command 2, argument 3") && !text.contains(&secret), "{text}");

        let token = generated("ghp_");
        let argv = format!(r#"[["curl", "-H", "x: {token}"]]"#);
        let text = accept(&redactor, parse_commands(&argv).unwrap()).unwrap_err().to_string();
        assert!(text.contains("command 1, argument 3") && text.contains("github") && !text.contains(&token), "{text}");
    }

    #[test]
    fn a_path_under_home_is_refused_as_a_path() {
        let redactor = Redactor::builder().home_dir(std::path::Path::new("/home/dev")).build();
        let profile = parse_commands(r#"[["/home/dev/bin/check", "-q"]]"#).unwrap();
        let err = accept(&redactor, profile).unwrap_err();
        assert!(matches!(err, CommandsError::LocalPath { .. }), "{err:?}");
        assert!(err.to_string().contains("command 1, argument 1"));
    }

    #[test]
    fn ordinary_profiles_and_passed_through_names_are_kept_as_they_are() {
        let redactor = Redactor::builder().home_dir(std::path::Path::new("/home/dev")).build();
        for text in [
            r#"[["pytest", "-q"], ["sh", "-c", "echo $HOME; test -n \"$FIXTURE_JWT\""]]"#,
            r#"{"commands": [{"argv": ["npm", "test"], "env": {"NODE_ENV": "test", "PASSWORD_MIN": "8"}}],
                "env_passthrough": ["FIXTURE_JWT"], "read_paths": ["/opt/data"], "timeout_s": 60}"#,
        ] {
            let profile = parse_commands(text).unwrap();
            assert_eq!(accept(&redactor, profile.clone()), Ok(profile));
        }
    }
}
