//! The environment a test command sees (design §5.2.4). PR code is untrusted, so it never
//! inherits the coordinator's environment (design §12.11 item 1): only an allowlist of
//! locale, shell and toolchain variables passes, plus what the commands file asks for by name,
//! and nothing whose name looks like a credential, whatever the list says.

use std::collections::BTreeMap;

use crate::domain::commands::{CommandSpec, CommandsProfile};
use crate::domain::secret_names::looks_like_credential;

/// Variables passed from the coordinator's environment when set there.
///
/// Deliberately left out (a commands file can still name them in `env_passthrough`):
/// `PYTHONPATH` and `NODE_PATH` (they change which code a test imports: the checkout's own
/// dependencies should decide), `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` (proxy URLs often embed
/// a password), `XDG_RUNTIME_DIR`, `SSH_AUTH_SOCK`, `DBUS_SESSION_BUS_ADDRESS`, `DISPLAY`
/// (doors to agents and keyrings), and everything `GH_*`, `GITHUB_*`, `AWS_*` and the like.
pub const ALLOWED_NAMES: &[&str] = &[
    // Shell and user basics.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TZ",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
    // Where tools keep caches and configuration, so builds reuse them.
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    // Certificate bundles, needed behind corporate TLS proxies; paths, not secrets.
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    // Rust.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    // Go.
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOCACHE",
    "GOMODCACHE",
    // JVM.
    "JAVA_HOME",
    "GRADLE_USER_HOME",
    "MAVEN_HOME",
    "M2_HOME",
    // Python.
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "CONDA_PREFIX",
    // JavaScript runtimes.
    "NVM_DIR",
    "NVM_BIN",
    "PNPM_HOME",
    "BUN_INSTALL",
    "VOLTA_HOME",
    "DENO_DIR",
    "DENO_INSTALL_ROOT",
    // Ruby and .NET.
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "DOTNET_ROOT",
];

/// Name prefixes passed like [`ALLOWED_NAMES`] (the locale categories).
pub const ALLOWED_PREFIXES: &[&str] = &["LC_"];

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

fn is_inherited(name: &str, profile: &CommandsProfile) -> bool {
    ALLOWED_NAMES.contains(&name)
        || ALLOWED_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        || profile.env_passthrough.iter().any(|passed| passed == name)
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
        for name in ALLOWED_NAMES {
            assert!(!looks_like_credential(name), "{name}");
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
