//! The environment a test command sees (design §5.2.4). PR code is untrusted, so it never
//! inherits the coordinator's environment (design §12.11 item 1): only the variables of
//! `domain::environment`'s table pass (the sandbox reads the same table for what it drops and
//! binds), plus what the commands file asks for by name, and nothing whose name looks like a
//! credential, whatever the list says.

use std::collections::BTreeMap;

use crate::domain::commands::{CommandSpec, CommandsProfile};
use crate::domain::environment;
use crate::domain::secret_names::looks_like_credential;

/// The complete environment of `command`, in the order of precedence: the
/// allowlisted and passed-through parent variables (credential-like names always dropped), then
/// the command's own `env` entries from the commands file (literal values its author wrote, so
/// they are applied as given), then `CI=true`, which always wins.
pub fn build_env(
    parent: &BTreeMap<String, String>,
    profile: &CommandsProfile,
    command: &CommandSpec,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = parent
        .iter()
        .filter(|(name, _)| is_inherited(name, profile) && !looks_like_credential(name))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    env.extend(command.env.iter().map(|(name, value)| (name.clone(), value.clone())));
    env.insert("CI".to_owned(), "true".to_owned());
    env
}

/// The values a run is given on purpose, as known values for its redactor (kind `env-value`):
/// each `env_passthrough` variable's value and every command's own `env` values. The test may
/// print them in any form; the redactor masks the ones it knows (design §7).
pub(super) fn given_values(parent: &BTreeMap<String, String>, profile: &CommandsProfile) -> Vec<(String, String)> {
    let passed = profile.env_passthrough.iter().filter_map(|name| parent.get(name));
    let own = profile.setup.iter().chain(&profile.commands).flat_map(|c| c.env.values());
    passed.chain(own).map(|value| ("env-value".to_owned(), value.clone())).collect()
}

fn is_inherited(name: &str, profile: &CommandsProfile) -> bool {
    environment::passes(name) || profile.env_passthrough.iter().any(|passed| passed == name)
}

/// A snapshot of this process's environment for [`super::RunRequest::parent_env`]; entries whose
/// name or value is not UTF-8 are skipped (no allowlisted variable needs them).
pub fn process_env() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::CommandSpec;

    fn profile(passthrough: &[&str], command_env: &[(&str, &str)]) -> CommandsProfile {
        let mut profile = CommandsProfile::of(vec![CommandSpec {
            argv: vec!["env".into()],
            timeout_s: None,
            env: command_env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }]);
        profile.env_passthrough = passthrough.iter().map(|s| s.to_string()).collect();
        profile
    }

    fn parent(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn allowlist_passes_and_everything_else_drops() {
        let parent = parent(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("CARGO_HOME", "/c"),
            ("GH_TOKEN", "x"),
            ("SSH_AUTH_SOCK", "/run/agent"),
            ("HTTPS_PROXY", "http://u:p@proxy"),
            ("PYTHONPATH", "/evil"),
            ("RANDOM_VAR", "1"),
        ]);
        let profile = profile(&[], &[]);
        let env = build_env(&parent, &profile, &profile.commands[0]);
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(names, ["CARGO_HOME", "CI", "HOME", "LC_ALL", "PATH"]);
        assert_eq!(env["CI"], "true");
    }

    #[test]
    fn passthrough_never_lets_a_credential_name_through() {
        let parent = parent(&[("NPM_CONFIG_REGISTRY", "r"), ("MY_API_KEY", "k"), ("GH_TOKEN", "t")]);
        // The commands parser refuses these names; a profile built in code must not bypass it.
        let profile = profile(&["NPM_CONFIG_REGISTRY", "MY_API_KEY", "GH_TOKEN"], &[]);
        let env = build_env(&parent, &profile, &profile.commands[0]);
        assert_eq!(env.get("NPM_CONFIG_REGISTRY").map(String::as_str), Some("r"));
        assert!(!env.contains_key("MY_API_KEY"));
        assert!(!env.contains_key("GH_TOKEN"));
    }

    #[test]
    fn allowlisted_names_are_still_checked_for_credentials() {
        // Every allowlisted name must be safe on its own; this keeps the list honest.
        for var in environment::VARS {
            assert!(!looks_like_credential(var.name), "{}", var.name);
        }
    }

    #[test]
    fn command_env_then_ci_take_precedence() {
        let parent = parent(&[("LANG", "C"), ("CI", "false")]);
        let with_env = profile(&[], &[("LANG", "en_US.UTF-8"), ("NODE_ENV", "test"), ("CI", "0")]);
        let env = build_env(&parent, &with_env, &with_env.commands[0]);
        assert_eq!(env["LANG"], "en_US.UTF-8");
        assert_eq!(env["NODE_ENV"], "test");
        assert_eq!(env["CI"], "true");
        // Another command of the profile gets its own entries, not these.
        let other = CommandSpec { argv: vec!["true".into()], timeout_s: None, env: BTreeMap::new() };
        assert_eq!(build_env(&parent, &profile(&[], &[("X", "1")]), &other).get("X"), None);
    }
}
