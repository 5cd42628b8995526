//! A run that failed for want of network (design §5.6): not the PR's fault, so not an
//! iteration and nothing for WebGPT — the person decides what the tests may reach. Two signs:
//! the run's egress proxy refused a host while it ran (`allowlist`), or, with no network at
//! all, the failing command printed what package managers print when they cannot reach their
//! registry ([`SIGNS`]).

use serde::{Deserialize, Serialize};

use super::egress::NetworkEvent;

/// What clients print when the network is missing, with what prints it. Matched as plain
/// substrings of the failing command's (redacted) output tail, case-sensitively: each is a
/// message of a resolver, a socket or a package manager, not of a test framework.
pub const SIGNS: &[(&str, &str)] = &[
    ("Temporary failure in name resolution", "glibc's resolver (curl, Python, git, …)"),
    ("Name or service not known", "glibc's resolver"),
    ("No address associated with hostname", "glibc's resolver"),
    ("Could not resolve host", "curl, git, cargo"),
    ("Network is unreachable", "the kernel (any client)"),
    ("getaddrinfo ENOTFOUND", "Node.js: npm, yarn, pnpm"),
    ("getaddrinfo EAI_AGAIN", "Node.js: npm, yarn, pnpm"),
    ("Could not fetch URL", "pip"),
    ("Failed to establish a new connection", "pip, requests, urllib3"),
    ("failed to download", "cargo"),
    ("failed to query replaced source registry", "cargo"),
    ("dial tcp: lookup", "go"),
    ("Could not transfer artifact", "Maven"),
    ("Could not resolve dependencies for project", "Maven"),
    ("Could not GET 'http", "Gradle"),
    ("Could not find a version that satisfies the requirement", "pip (no index reachable)"),
];

/// The first sign in `output` that the network was missing, with what prints it.
pub fn sign_in(output: &str) -> Option<(&'static str, &'static str)> {
    SIGNS.iter().find(|(sign, _)| output.contains(sign)).copied()
}

/// A run that ended `NEEDS_NETWORK`, as the cycle remembers it for `next` until a run of the
/// PR completes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeedsNetwork {
    /// The PR whose run it was (`owner/repo#N`).
    pub pr: String,
    /// The commit it ran.
    pub head_sha: String,
    /// `setup` or `test`: the phase whose command failed.
    pub phase: String,
    /// The `[network] allow` entries that would have permitted the refused destinations
    /// (empty when the run had no network and only its output said so).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Without network: the client message that showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign: Option<String>,
    /// The exact lines for the person's config.toml.
    pub config: String,
    /// The lockfiles in the tested tree: `next` proposes setup from them when the commands
    /// install nothing first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lockfiles: Vec<String>,
    /// When the person allowed `allow` for the repository (the control room writes their
    /// config): the agent runs again instead of asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_at: Option<String>,
    /// When it was recorded (RFC 3339, UTC).
    pub at: String,
}

/// The entries to allow: those the proxy named for each refused destination, once each, in order.
pub fn refused_entries(log: &[NetworkEvent]) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for event in log.iter().filter(|e| !e.allowed) {
        let entry = event.allow_with.clone().unwrap_or_else(|| format!("{}:{}", event.host, event.port));
        if !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    entries
}

/// The config.toml lines that allow `entries` for `repository`'s runs (TOML strings, escaped).
pub fn config_lines(repository: &str, entries: &[String]) -> String {
    let quoted: Vec<String> = entries.iter().map(|e| toml_string(e)).collect();
    format!("[network.repositories.{}]\nallow = [{}]\n", toml_string(repository), quoted.join(", "))
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(host: &str, port: u16, allowed: bool, allow_with: Option<&str>) -> NetworkEvent {
        NetworkEvent {
            host: host.into(),
            port,
            allowed,
            reason: (!allowed).then(|| "not allowed".into()),
            allow_with: allow_with.map(str::to_owned),
            address: None,
            error: None,
            bytes_up: 0,
            bytes_down: 0,
            phase: "setup".into(),
        }
    }

    #[test]
    fn every_sign_is_recognised_and_a_test_failure_is_not_one() {
        for (sign, _) in SIGNS {
            assert_eq!(sign_in(&format!("npm ERR! {sign} registry.npmjs.org")).map(|s| s.0), Some(*sign));
        }
        assert_eq!(sign_in("assertion failed: left == right\nFAILED tests/test_api.py::test_get"), None);
    }

    #[test]
    fn the_refused_hosts_become_one_config_table_for_the_repository() {
        let log = [
            event("pypi.org", 443, false, Some("pypi.org")),
            event("files.pythonhosted.org", 443, true, None),
            event("pypi.org", 443, false, Some("pypi.org")),
            event("127.0.0.1", 9000, false, Some("127.0.0.1:9000")),
        ];
        let entries = refused_entries(&log);
        assert_eq!(entries, ["pypi.org", "127.0.0.1:9000"]);
        assert_eq!(
            config_lines("acme/widget", &entries),
            "[network.repositories.\"acme/widget\"]\nallow = [\"pypi.org\", \"127.0.0.1:9000\"]\n"
        );
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
