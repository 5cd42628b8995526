//! A run that failed for want of network (design §5.6): not the PR's fault, so not an
//! iteration and nothing for WebGPT — the person decides what the tests may reach. Two signs:
//! the run's egress proxy refused a host while it ran (`allowlist`), or, with no network at
//! all, the failing command printed what package managers print when they cannot reach their
//! registry ([`SIGNS`]).

use serde::{Deserialize, Serialize};

use super::egress::{AllowEntry, NetworkEvent};

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
    /// Destinations refused by policy (`host:port → IP:port`): not public, so nothing is
    /// proposed for them and no key adds them; a person who trusts one writes it by hand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_by_policy: Vec<String>,
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
    /// What decided it; absent in state files of an older forgeloop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// When it was recorded (RFC 3339, UTC).
    pub at: String,
}

/// What showed that a run needed network, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The run's egress proxy refused a destination (`allowlist`).
    EgressProxy,
    /// The sandbox recorded the run's connections and one went outside it.
    ConnectionRecord,
    /// Neither had anything; the failing command printed a sign ([`SIGNS`]), the fallback
    /// where the record cannot be had (a kernel without Landlock's network rules).
    PrintedSign,
}

impl DecidedBy {
    /// As `needs_network.decided_by` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::EgressProxy => "egress_proxy",
            DecidedBy::ConnectionRecord => "connection_record",
            DecidedBy::PrintedSign => "printed_sign",
        }
    }
}

impl NeedsNetwork {
    /// Why the run needed network, for `next`, the error and the journal: what the proxy
    /// refused (and what it refused by policy), or the client message of a run without network.
    pub fn what(&self) -> String {
        const NOT_PUBLIC: &str = "not a public address: forgeloop proposes no entry for it; a person who trusts it writes the exact IP:port by hand";
        let allow = self.allow.join(", ");
        let policy = self.refused_by_policy.join(", ");
        if self.decided_by == Some(DecidedBy::ConnectionRecord) {
            let tried = [allow, policy.clone()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(", ");
            let note = if policy.is_empty() { String::new() } else { format!("; {policy}: {NOT_PUBLIC}") };
            return format!("it tried to reach {tried}, outside its sandbox (recorded by the sandbox){note}");
        }
        let policy = if policy.is_empty() { policy } else { format!("refused by policy {policy} ({NOT_PUBLIC})") };
        match (&self.sign, allow.is_empty(), policy.is_empty()) {
            (_, false, true) => format!("its egress proxy refused {allow}"),
            (_, false, false) => format!("its egress proxy refused {allow}, and {policy}"),
            (_, true, false) => format!("its egress proxy {policy}"),
            (Some(sign), true, true) => format!("it ran without network and printed {sign:?}"),
            (None, true, true) => "it had no network".to_owned(),
        }
    }

    /// Whether a person can allow what was refused with one key: some entry is proposable.
    pub fn has_proposal(&self) -> bool {
        self.allow.iter().any(|e| proposable(e))
    }
}

/// The entries to allow: those the proxy named for each refused destination, once each, in
/// order. Never one for an address that is not public (design §5.6): a PR that asks for the
/// metadata endpoint must not get it proposed, and then added with one key.
pub fn refused_entries(log: &[NetworkEvent]) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for event in log.iter().filter(|e| !e.allowed && e.by_policy.is_none()) {
        let Some(entry) = event.allow_with.as_deref().filter(|e| proposable(e)) else { continue };
        if !entries.iter().any(|e| e == entry) {
            entries.push(entry.to_owned());
        }
    }
    entries
}

/// The destinations the proxy refused by policy, as `host:port` (and `→ IP:port` when a name
/// resolved to it), once each, in order.
pub fn refused_by_policy(log: &[NetworkEvent]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for event in log.iter().filter(|e| !e.allowed) {
        let Some(socket) = &event.by_policy else { continue };
        let asked = super::egress::Destination::parse_authority(&format!("{}:{}", event.host, event.port), None)
            .map(|d| d.to_string())
            .unwrap_or_else(|_| format!("{}:{}", event.host, event.port));
        let line = if &asked == socket { asked } else { format!("{asked} → {socket}") };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// Whether forgeloop may propose `entry` (and the control room add it with a key): any entry
/// but an `IP:port` of an address that is not public. Entries from state files an older
/// forgeloop wrote go through this too.
pub fn proposable(entry: &str) -> bool {
    AllowEntry::parse(entry).is_ok_and(|e| e.non_public().is_none())
}

/// What the person's config.toml would need when the only refusals were by policy: no entry,
/// a comment saying why and what they may write by hand.
pub fn policy_lines(refused: &[String]) -> String {
    let mut out = String::from(
        "# Refused by policy: not a public address, so forgeloop proposes no entry and no key adds one.\n# If you trust it, write its exact \"IP:port\" into [network.repositories.\"OWNER/REPO\"] allow by hand.\n",
    );
    for line in refused {
        out.push_str(&format!("#   {line}\n"));
    }
    out
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
            by_policy: None,
            address: None,
            error: None,
            bytes_up: 0,
            bytes_down: 0,
            phase: "setup".into(),
        }
    }

    #[test]
    fn what_is_not_public_is_refused_by_policy_and_never_proposed() {
        let policy = |host: &str, port: u16, socket: &str| NetworkEvent {
            by_policy: Some(socket.into()),
            ..event(host, port, false, None)
        };
        let log = [
            policy("169.254.169.254", 80, "169.254.169.254:80"),
            policy("localhost", 9000, "127.0.0.1:9000"),
            policy("169.254.169.254", 80, "169.254.169.254:80"),
            // An older proxy's record, or a forged one: an entry for a private address.
            event("10.0.0.7", 5432, false, Some("10.0.0.7:5432")),
            event("pypi.org", 443, false, Some("pypi.org")),
        ];
        assert_eq!(refused_entries(&log), ["pypi.org"]);
        assert_eq!(refused_by_policy(&log), ["169.254.169.254:80", "localhost:9000 → 127.0.0.1:9000"]);
        for (entry, ok) in [
            ("pypi.org", true),
            ("151.101.0.223:443", true),
            ("registries", true),
            ("127.0.0.1:9000", false),
            ("169.254.169.254:80", false),
            ("[fd00::1]:443", false),
            ("100.64.0.1:80", false),
            ("[::ffff:10.0.0.1]:80", false),
            ("not an entry!", false),
        ] {
            assert_eq!(proposable(entry), ok, "{entry}");
        }
        let lines = policy_lines(&refused_by_policy(&log));
        assert!(lines.lines().all(|l| l.starts_with('#')), "{lines}");
        assert!(lines.contains("169.254.169.254:80") && lines.contains("by hand"), "{lines}");
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
            event("151.101.0.223", 443, false, Some("151.101.0.223:443")),
        ];
        let entries = refused_entries(&log);
        assert_eq!(entries, ["pypi.org", "151.101.0.223:443"]);
        assert_eq!(
            config_lines("acme/widget", &entries),
            "[network.repositories.\"acme/widget\"]\nallow = [\"pypi.org\", \"151.101.0.223:443\"]\n"
        );
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
