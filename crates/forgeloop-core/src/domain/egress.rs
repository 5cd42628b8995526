//! Network egress of test runs (design §5.6, issue 28): the three network modes, the person's
//! allowlist as written in config, the class of an address, and the decision on each
//! destination the egress proxy is asked for. Pure: the proxy (`src/egress`) reads requests,
//! resolves names and connects; everything it refuses is refused here, so the rules are tested
//! as a table.
//!
//! The rules, in short: a name is reachable when an entry names it (exact, `*.` wildcard or the
//! built-in `registries`) on that port; its resolved addresses must then be public, unless an
//! entry names that exact `IP:port` (so `localhost` or an allowed name that resolves to a
//! private, loopback or metadata address is refused: DNS rebinding). A destination asked for by
//! IP literal is reachable only through an exact `IP:port` entry, public or not: the allowlist is
//! about names, and an address says nothing about which name it serves.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::address::{AddrClass, classify, describe};

/// What a run's commands may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NetworkMode {
    /// No network at all (the sandbox's own empty network namespace).
    #[default]
    Off,
    /// Only what the person's `[network] allow` permits, through forgeloop's egress proxy.
    Allowlist,
    /// The host's network (formerly `"network": true`); the person's config must permit it.
    Open,
}

/// A commands file's `network` value that is none of the modes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"network\" must be false, \"off\", \"allowlist\", true or \"open\" (got {0})")]
pub struct NetworkModeError(pub String);

impl NetworkMode {
    /// Every mode, narrowest first (a later one is wider).
    pub const ALL: [NetworkMode; 3] = [NetworkMode::Off, NetworkMode::Allowlist, NetworkMode::Open];

    /// The word commands files and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::Off => "off",
            NetworkMode::Allowlist => "allowlist",
            NetworkMode::Open => "open",
        }
    }

    /// No network at all (the default).
    pub fn is_off(&self) -> bool {
        *self == NetworkMode::Off
    }

    /// The mode a word names (`off`, `allowlist`, `open`); exact, lowercase.
    fn from_word(word: &str) -> Option<NetworkMode> {
        NetworkMode::ALL.into_iter().find(|mode| mode.as_str() == word)
    }

    /// A commands file's `network` value: `false`/`"off"`, `"allowlist"`, `true`/`"open"`.
    pub fn from_json(value: &Value) -> Result<NetworkMode, NetworkModeError> {
        match value {
            Value::Bool(false) => Ok(NetworkMode::Off),
            Value::Bool(true) => Ok(NetworkMode::Open),
            Value::String(word) => {
                NetworkMode::from_word(word).ok_or_else(|| NetworkModeError(truncate_for_message(&value.to_string())))
            }
            other => Err(NetworkModeError(truncate_for_message(&other.to_string()))),
        }
    }
}

fn truncate_for_message(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl fmt::Display for NetworkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for NetworkMode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Reads the three words and also the boolean that states and reports written before the modes
/// hold (`"network": false` / `true`), so old files keep reading.
impl<'de> Deserialize<'de> for NetworkMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NetworkMode, D::Error> {
        struct ModeVisitor;
        impl Visitor<'_> for ModeVisitor {
            type Value = NetworkMode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("false, \"off\", \"allowlist\", true or \"open\"")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<NetworkMode, E> {
                Ok(if v { NetworkMode::Open } else { NetworkMode::Off })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NetworkMode, E> {
                NetworkMode::from_word(v).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(ModeVisitor)
    }
}

/// The hosts `"registries"` stands for: the public package registries' download hosts, each
/// with the tool that uses it, reached on port 443 only (every one of these tools speaks HTTPS).
/// Registries only: no general code or file hosting (github.com, storage.googleapis.com), which
/// would open a way out to anyone's content.
pub const REGISTRIES: &[(&str, &str)] = &[
    ("index.crates.io", "cargo: the crates.io sparse index"),
    ("static.crates.io", "cargo: crate downloads"),
    ("pypi.org", "pip, uv, poetry: the PyPI simple index"),
    ("files.pythonhosted.org", "pip, uv, poetry: PyPI package downloads"),
    ("registry.npmjs.org", "npm, pnpm: the npm registry"),
    ("registry.yarnpkg.com", "yarn: its default mirror of the npm registry"),
    ("proxy.golang.org", "go: the module proxy"),
    ("sum.golang.org", "go: the checksum database"),
    ("repo.maven.apache.org", "Maven, Gradle (mavenCentral()): Maven Central"),
    ("repo1.maven.org", "Maven Central under its older name, still in many builds"),
    ("plugins.gradle.org", "Gradle: the plugin portal"),
    ("plugins-artifacts.gradle.org", "Gradle: plugin downloads the portal redirects to"),
    ("services.gradle.org", "Gradle wrapper: distributions"),
    ("downloads.gradle.org", "Gradle wrapper: the downloads services.gradle.org redirects to"),
    ("rubygems.org", "gem, Bundler: RubyGems and gem downloads"),
    ("index.rubygems.org", "Bundler: the compact index"),
    ("api.nuget.org", "dotnet, nuget: the NuGet v3 feed and package downloads"),
];

/// The port the `registries` hosts are allowed on.
pub const REGISTRIES_PORT: u16 = 443;

/// Ports an exact or wildcard host entry without a port allows: HTTP and HTTPS.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// One entry of `[network] allow`, parsed (hosts lowercase, addresses canonical).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AllowEntry {
    /// `"registries"`: [`REGISTRIES`] on port 443.
    Registries,
    /// `"pypi.internal.example.com"` or `"pypi.internal.example.com:8443"`.
    Host {
        /// The name, lowercase.
        name: String,
        /// The one port allowed; `None` allows 80 and 443.
        port: Option<u16>,
    },
    /// `"*.corp.example"` (with or without a port): every name below `domain`, at any depth,
    /// but not `domain` itself.
    Wildcard {
        /// The domain below which names are allowed, lowercase, without `*.`.
        domain: String,
        /// The one port allowed; `None` allows 80 and 443.
        port: Option<u16>,
    },
    /// `"10.0.4.7:3128"`, `"[fd00::1]:443"`: that address and port only.
    Address {
        /// The address, canonical.
        ip: IpAddr,
        /// The port.
        port: u16,
    },
}

/// A `[network] allow` entry that does not parse; config loading names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("allow entry {entry:?}: {reason}")]
pub struct EntryError {
    /// The entry as written (cut to 60 characters).
    pub entry: String,
    /// What is wrong with it.
    pub reason: String,
}

impl AllowEntry {
    /// Parses one entry as the person wrote it.
    pub fn parse(text: &str) -> Result<AllowEntry, EntryError> {
        parse_entry(text).map_err(|reason| EntryError { entry: truncate_for_message(text), reason })
    }

    /// The class of the address an `IP:port` entry names when it is not public (loopback,
    /// private, link-local, CGNAT, reserved, …): forgeloop never proposes such an entry nor
    /// adds one with a key; only a person writes it, by hand.
    pub fn non_public(&self) -> Option<&'static str> {
        match self {
            AllowEntry::Address { ip, .. } if classify(*ip) != AddrClass::Public => Some(describe(*ip)),
            _ => None,
        }
    }

    fn allows_name(&self, name: &str, port: u16) -> bool {
        let port_ok = |p: &Option<u16>| p.map_or(DEFAULT_PORTS.contains(&port), |p| p == port);
        match self {
            AllowEntry::Registries => port == REGISTRIES_PORT && REGISTRIES.iter().any(|(host, _)| *host == name),
            AllowEntry::Host { name: n, port: p } => n == name && port_ok(p),
            AllowEntry::Wildcard { domain, port: p } => is_below(name, domain) && port_ok(p),
            AllowEntry::Address { .. } => false,
        }
    }

    /// Names the host, whatever the port (to say "not on this port" rather than "not listed").
    fn names_host(&self, name: &str) -> bool {
        match self {
            AllowEntry::Registries => REGISTRIES.iter().any(|(host, _)| *host == name),
            AllowEntry::Host { name: n, .. } => n == name,
            AllowEntry::Wildcard { domain, .. } => is_below(name, domain),
            AllowEntry::Address { .. } => false,
        }
    }
}

fn is_below(name: &str, domain: &str) -> bool {
    name.len() > domain.len() + 1 && name.ends_with(domain) && name.as_bytes()[name.len() - domain.len() - 1] == b'.'
}

/// The canonical text, as the person would write it.
impl fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllowEntry::Registries => f.write_str("registries"),
            AllowEntry::Host { name, port: None } => f.write_str(name),
            AllowEntry::Host { name, port: Some(port) } => write!(f, "{name}:{port}"),
            AllowEntry::Wildcard { domain, port: None } => write!(f, "*.{domain}"),
            AllowEntry::Wildcard { domain, port: Some(port) } => write!(f, "*.{domain}:{port}"),
            AllowEntry::Address { ip, port } => f.write_str(&socket_text(*ip, *port)),
        }
    }
}

/// `1.2.3.4:80`, `[fd00::1]:443`.
pub fn socket_text(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    }
}

fn parse_entry(text: &str) -> Result<AllowEntry, String> {
    if text.is_empty() {
        return Err("is empty".into());
    }
    if !text.is_ascii() {
        return Err("is not ASCII: write an internationalised name in its punycode form (xn--…)".into());
    }
    if text.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err("contains a space or a control character".into());
    }
    if text.contains("://") {
        return Err("has a scheme: write the host alone, e.g. \"pypi.org\" or \"pypi.org:8443\"".into());
    }
    if text.contains('/') {
        return Err("has a path: write the host (and port) alone; the proxy cannot see paths inside TLS".into());
    }
    if text.contains('@') {
        return Err("has user information: write the host (and port) alone".into());
    }
    let lower = text.to_ascii_lowercase();
    if lower == "registries" {
        return Ok(AllowEntry::Registries);
    }
    let (host, port) = split_host_port(&lower)?;
    let port = port.map(parse_port).transpose()?;
    if host == "registries" {
        return Err("\"registries\" is the built-in list of package registries and takes no port".into());
    }
    if let Some(bracketed) = host.strip_prefix('[') {
        let inner = bracketed.strip_suffix(']').ok_or("has an unclosed \"[\"")?;
        let ip: Ipv6Addr = inner.parse().map_err(|_| format!("[{inner}] is not an IPv6 address"))?;
        let port = port.ok_or_else(|| format!("an IP address needs a port: \"[{inner}]:PORT\""))?;
        return Ok(AllowEntry::Address { ip: IpAddr::V6(ip).to_canonical(), port });
    }
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        let port = port.ok_or_else(|| format!("an IP address needs a port: \"{host}:PORT\""))?;
        return Ok(AllowEntry::Address { ip: IpAddr::V4(ip), port });
    }
    if let Some(domain) = host.strip_prefix("*.") {
        let domain = check_name(domain)?;
        if !domain.contains('.') {
            return Err(format!(
                "\"*.{domain}\" would allow a whole top-level domain: name a domain under it (\"*.example.{domain}\")"
            ));
        }
        return Ok(AllowEntry::Wildcard { domain, port });
    }
    if host.contains('*') {
        return Err("a wildcard may only be a leading \"*.\", as in \"*.corp.example\"".into());
    }
    let name = check_name(host)?;
    // "registries." is the keyword's name with the root's dot: as a host it would read back as
    // the keyword, which allows other hosts than the one written.
    if name == "registries" {
        return Err("\"registries\" is the built-in list of package registries, not a host name".into());
    }
    Ok(AllowEntry::Host { name, port })
}

/// Splits `host[:port]` and `[v6][:port]`; a bare IPv6 address (colons, no brackets) is an
/// error, since its last group would read as a port.
fn split_host_port(text: &str) -> Result<(&str, Option<&str>), String> {
    if text.starts_with('[') {
        return match text.find(']') {
            Some(end) => match &text[end + 1..] {
                "" => Ok((&text[..=end], None)),
                rest => match rest.strip_prefix(':') {
                    Some(port) => Ok((&text[..=end], Some(port))),
                    None => Err(format!("{rest:?} after the bracketed address is not \":PORT\"")),
                },
            },
            None => Err("has an unclosed \"[\"".into()),
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => text.split_once(':').map(|(h, p)| (h, Some(p))).ok_or_else(|| "has no host".into()),
        _ => Err("an IPv6 address is written in brackets with a port, as in \"[fd00::1]:443\"".into()),
    }
}

fn parse_port(text: &str) -> Result<u16, String> {
    if text.is_empty() {
        return Err("has an empty port after \":\"".into());
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 5 {
        return Err(format!("port {text:?} is not a number from 1 to 65535"));
    }
    match text.parse::<u32>() {
        Ok(port @ 1..=65535) => u16::try_from(port).map_err(|_| format!("port {port} is out of range")),
        _ => Err(format!("port {text} is not a number from 1 to 65535")),
    }
}

/// A DNS host name: ASCII letters, digits and hyphens in dot-separated labels of 1 to 63,
/// at most 253 in all, lowercase, one trailing dot dropped. A name whose last label is numeric
/// is refused: resolvers read `10.0.4` or `0x7f.1` as addresses.
fn check_name(text: &str) -> Result<String, String> {
    let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
    if name.is_empty() {
        return Err("has no host name".into());
    }
    if name.len() > 253 {
        return Err("the host name is longer than 253 characters".into());
    }
    if !name.is_ascii() {
        return Err("is not ASCII: write an internationalised name in its punycode form (xn--…)".into());
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '.')) {
        return Err(format!("{bad:?} cannot be in a host name (letters, digits, hyphens and dots only)"));
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err("has an empty label (two dots in a row, or a leading dot)".into());
        }
        if label.len() > 63 {
            return Err(format!("the label {label:?} is longer than 63 characters"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!("the label {label:?} starts or ends with a hyphen"));
        }
    }
    let last = name.rsplit('.').next().unwrap_or_default();
    let hex = last.strip_prefix("0x").is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if last.bytes().all(|b| b.is_ascii_digit()) || hex {
        return Err(format!("{name:?} looks like a numeric address but is not a valid IPv4 address (a.b.c.d)"));
    }
    Ok(name)
}

/// The person's allowlist for a run: the global `[network] allow` plus the repository's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    entries: Vec<AllowEntry>,
}

impl Allowlist {
    /// A list of `entries`, duplicates once.
    pub fn new(entries: Vec<AllowEntry>) -> Allowlist {
        let mut list = Allowlist::default();
        for entry in entries {
            list.push(entry);
        }
        list
    }

    /// Parses config entries; the first bad one is the error.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Allowlist, EntryError> {
        entries.iter().map(|e| AllowEntry::parse(e.as_ref())).collect::<Result<Vec<_>, _>>().map(Allowlist::new)
    }

    /// The entries, in the order first given.
    pub fn entries(&self) -> &[AllowEntry] {
        &self.entries
    }

    /// No entry: nothing is reachable.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many distinct entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds `entry` unless it is already there.
    pub fn push(&mut self, entry: AllowEntry) {
        if !self.entries.contains(&entry) {
            self.entries.push(entry);
        }
    }

    /// This list plus `other`'s entries (duplicates once).
    pub fn union(&self, other: &Allowlist) -> Allowlist {
        let mut list = self.clone();
        for entry in &other.entries {
            list.push(entry.clone());
        }
        list
    }

    fn allows_name(&self, name: &str, port: u16) -> bool {
        self.entries.iter().any(|e| e.allows_name(name, port))
    }

    fn allows_address(&self, ip: IpAddr, port: u16) -> bool {
        self.entries.iter().any(|e| matches!(e, AllowEntry::Address { ip: i, port: p } if *i == ip && *p == port))
    }
}

impl Serialize for Allowlist {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.entries.iter().map(ToString::to_string))
    }
}

/// Config holds parsed entries: a bad one fails the load, named.
impl<'de> Deserialize<'de> for Allowlist {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Allowlist, D::Error> {
        let texts = Vec::<String>::deserialize(deserializer)?;
        Allowlist::parse(&texts).map_err(de::Error::custom)
    }
}

/// Why a destination is refused: one line for the client's 403 and the run's log, and the
/// `[network] allow` entry that would permit it, when one would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// One line saying why, for the client's 403 and the run's log.
    pub reason: String,
    /// The `[network] allow` entry that would permit it, when one would.
    pub allow_with: Option<String>,
    /// The address (`IP:port`) refused by policy, not by the list: loopback, private,
    /// link-local, CGNAT, reserved. No entry is proposed for it.
    pub by_policy: Option<String>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A request's `host:port`, as CONNECT or an absolute URL gives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A valid DNS name, lowercase, without a trailing dot.
    Name(String),
    /// An IP literal (`1.2.3.4`, `[fd00::1]`), canonical (IPv4-mapped IPv6 as IPv4).
    Ip(IpAddr),
}

/// A host and port a run's command asked the egress proxy for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Destination {
    /// The name or IP literal.
    pub host: Host,
    /// The port.
    pub port: u16,
}

/// `name:port`, `1.2.3.4:port`, `[v6]:port`.
impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Host::Name(name) => write!(f, "{name}:{}", self.port),
            Host::Ip(ip) => f.write_str(&socket_text(*ip, self.port)),
        }
    }
}

impl Destination {
    /// The host as the run's log and a refusal name it (`[v6]` in brackets).
    pub fn host_text(&self) -> String {
        match &self.host {
            Host::Name(name) => name.clone(),
            Host::Ip(IpAddr::V4(v4)) => v4.to_string(),
            Host::Ip(IpAddr::V6(v6)) => format!("[{v6}]"),
        }
    }

    /// Parses an authority (`host:port`, `[v6]:port`, and without a port when `default_port`
    /// is given). The error is a one-line reason for a 400 answer.
    pub fn parse_authority(text: &str, default_port: Option<u16>) -> Result<Destination, String> {
        if text.is_empty() {
            return Err("no host".into());
        }
        if !text.is_ascii() || text.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
            return Err("the host is not printable ASCII".into());
        }
        if text.contains('@') {
            return Err("user information in the request target is not forwarded".into());
        }
        if text.contains(['/', '?', '#']) {
            return Err("the target is not host:port".into());
        }
        let (host, port) = split_host_port(text)?;
        let port = match port {
            Some(port) => parse_port(port)?,
            None => default_port.ok_or("a port is required (host:port)")?,
        };
        let host = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let ip: Ipv6Addr = inner.parse().map_err(|_| format!("[{inner}] is not an IPv6 address"))?;
            Host::Ip(IpAddr::V6(ip).to_canonical())
        } else if let Ok(v4) = host.parse::<Ipv4Addr>() {
            Host::Ip(IpAddr::V4(v4))
        } else {
            Host::Name(check_name(host)?)
        };
        Ok(Destination { host, port })
    }

    /// A destination from a host the `url` crate parsed (the proxy's request targets), held to
    /// the rules [`Destination::parse_authority`] applies: a name must be a DNS name, an IPv6
    /// address is made canonical, and port 0 is refused.
    pub fn from_url_host(host: url::Host<&str>, port: u16) -> Result<Destination, String> {
        if port == 0 {
            return Err("port 0 is not a number from 1 to 65535".into());
        }
        let host = match host {
            url::Host::Domain(name) => Host::Name(check_name(name)?),
            url::Host::Ipv4(v4) => Host::Ip(IpAddr::V4(v4)),
            url::Host::Ipv6(v6) => Host::Ip(IpAddr::V6(v6).to_canonical()),
        };
        Ok(Destination { host, port })
    }
}

/// Whether `name` (not an IP literal; see [`decide`]) may be asked for on `port`, before it is
/// resolved. Its addresses then go through [`decide_addr`].
fn decide_name(allowlist: &Allowlist, name: &str, port: u16) -> Result<(), Refusal> {
    let name = match check_name(name) {
        Ok(name) => name,
        Err(why) => {
            return Err(Refusal { reason: format!("not a valid host name: {why}"), allow_with: None, by_policy: None });
        }
    };
    if allowlist.allows_name(&name, port) {
        return Ok(());
    }
    let allow_with = Some(if DEFAULT_PORTS.contains(&port) { name.clone() } else { format!("{name}:{port}") });
    let reason = if allowlist.entries.iter().any(|e| e.names_host(&name)) {
        format!("{name} is in [network] allow, but not on port {port}")
    } else {
        format!("{name} is not in [network] allow")
    };
    Err(Refusal { reason, allow_with, by_policy: None })
}

/// Whether the proxy may connect to `ip:port`. `requested_by_name`: the address came from
/// resolving a name [`decide_name`] allowed (then a public address is fine); otherwise the
/// request named the address itself. Either way, an address that is not public is reachable
/// only through an exact `IP:port` entry — a name resolving to loopback, a private network or
/// the metadata endpoint is refused (DNS rebinding) — and an IP literal only through an exact
/// entry too.
pub fn decide_addr(allowlist: &Allowlist, requested_by_name: bool, ip: IpAddr, port: u16) -> Result<(), Refusal> {
    let ip = ip.to_canonical();
    if allowlist.allows_address(ip, port) {
        return Ok(());
    }
    let socket = socket_text(ip, port);
    let class = classify(ip);
    if class != AddrClass::Public {
        // Refused by policy: no entry is proposed (a PR must not be able to get one added with
        // a key, design §5.6); a person who trusts the address writes the entry by hand.
        let what = describe(ip);
        let reason = if requested_by_name {
            format!(
                "it resolves to {socket}, which is {what}: refused by policy (only an exact IP:port entry a person writes by hand in [network] allow permits that)"
            )
        } else {
            format!(
                "{socket} is {what}: refused by policy (only an exact IP:port entry a person writes by hand in [network] allow permits that)"
            )
        };
        return Err(Refusal { reason, allow_with: None, by_policy: Some(socket) });
    }
    let allow_with = Some(socket.clone());
    if requested_by_name {
        return Ok(());
    }
    Err(Refusal {
        reason: format!(
            "{socket} is an IP address, which only an exact IP:port entry in [network] allow permits (names are allowed by name)"
        ),
        allow_with,
        by_policy: None,
    })
}

/// The decision before any resolution: by name for a name, by address for an IP literal.
pub fn decide(allowlist: &Allowlist, destination: &Destination) -> Result<(), Refusal> {
    match &destination.host {
        Host::Name(name) => decide_name(allowlist, name, destination.port),
        Host::Ip(ip) => decide_addr(allowlist, false, *ip, destination.port),
    }
}

/// The variables that send a command's clients to the egress proxy at `host:port` (as the
/// command reaches it), for every client that reads one: curl, pip, uv, urllib, requests,
/// git, Go, gem and Bundler (`HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`, both cases), npm
/// (`npm_config_proxy`, `npm_config_https_proxy`), Yarn 2+ (`YARN_HTTP_PROXY`,
/// `YARN_HTTPS_PROXY`), cargo (`CARGO_HTTP_PROXY`), pip (`PIP_PROXY`), and the JVM (Maven,
/// Gradle), which reads none of them (`JAVA_TOOL_OPTIONS`; a caller keeping the person's own
/// options appends them). `NO_PROXY` is empty, so nothing bypasses the proxy; `GOPROXY` is left
/// alone (it names Go's module proxy, not an HTTP proxy). Go never proxies a loopback
/// destination whatever these say; the JVM's default `http.nonProxyHosts` (loopback) is
/// emptied here.
pub fn proxy_environment(host: &str, port: u16) -> Vec<(&'static str, String)> {
    let url = format!("http://{host}:{port}");
    let mut vars: Vec<(&'static str, String)> = [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "CARGO_HTTP_PROXY",
        "PIP_PROXY",
    ]
    .into_iter()
    .map(|name| (name, url.clone()))
    .collect();
    vars.push(("NO_PROXY", String::new()));
    vars.push(("no_proxy", String::new()));
    vars.push((
        "JAVA_TOOL_OPTIONS",
        format!(
            "-Dhttp.proxyHost={host} -Dhttp.proxyPort={port} -Dhttps.proxyHost={host} -Dhttps.proxyPort={port} -Dhttp.nonProxyHosts="
        ),
    ));
    vars
}

/// One destination a run's commands asked the egress proxy for (the report's `network_log`).
/// Never a path, a query or a header: URLs may hold credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkEvent {
    /// The name or IP literal asked for (an IPv6 literal in brackets).
    pub host: String,
    /// The port asked for.
    pub port: u16,
    /// The proxy let it through.
    pub allowed: bool,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The `[network] allow` entry that would have permitted a refused destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_with: Option<String>,
    /// The address (`IP:port`) refused by policy: not public, so no entry is proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_policy: Option<String>,
    /// The address the proxy connected to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Allowed, but the destination could not be resolved or reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Bytes from the client to the destination (after the proxy's own exchange for CONNECT).
    pub bytes_up: u64,
    /// Bytes from the destination to the client.
    pub bytes_down: u64,
    /// The run's phase it happened in (`setup`, `commands`).
    pub phase: String,
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn list(entries: &[&str]) -> Allowlist {
        Allowlist::parse(entries).unwrap()
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn network_modes_parse_from_the_commands_file_and_old_booleans() {
        let cases = [
            (serde_json::json!(false), Some(NetworkMode::Off)),
            (serde_json::json!("off"), Some(NetworkMode::Off)),
            (serde_json::json!("allowlist"), Some(NetworkMode::Allowlist)),
            (serde_json::json!(true), Some(NetworkMode::Open)),
            (serde_json::json!("open"), Some(NetworkMode::Open)),
            (serde_json::json!("Open"), None),
            (serde_json::json!("yes"), None),
            (serde_json::json!("true"), None),
            (serde_json::json!(1), None),
            (serde_json::json!(null), None),
            (serde_json::json!(["allowlist"]), None),
        ];
        for (value, expected) in cases {
            let got = NetworkMode::from_json(&value);
            assert_eq!(got.as_ref().ok().copied(), expected, "{value}");
            if let Err(err) = got {
                assert!(err.to_string().starts_with("\"network\" must be false, \"off\", \"allowlist\""), "{err}");
                assert!(err.to_string().contains(&value.to_string()), "{err}");
            }
        }
        for mode in NetworkMode::ALL {
            let text = serde_json::to_string(&mode).unwrap();
            assert_eq!(text, format!("\"{}\"", mode.as_str()));
            assert_eq!(serde_json::from_str::<NetworkMode>(&text).unwrap(), mode);
            assert_eq!(NetworkMode::from_word(mode.as_str()), Some(mode));
        }
        assert_eq!(serde_json::from_str::<NetworkMode>("false").unwrap(), NetworkMode::Off, "old states and reports");
        assert_eq!(serde_json::from_str::<NetworkMode>("true").unwrap(), NetworkMode::Open);
        assert!(serde_json::from_str::<NetworkMode>("\"maybe\"").is_err());
        assert!(serde_json::from_str::<NetworkMode>("0").is_err());
        assert_eq!(NetworkMode::default(), NetworkMode::Off);
        let long = serde_json::json!("x".repeat(500));
        assert!(NetworkMode::from_json(&long).unwrap_err().to_string().len() < 600);
    }

    #[test]
    fn allow_entries_parse_to_their_kinds() {
        let host = |name: &str, port| AllowEntry::Host { name: name.into(), port };
        let cases = [
            ("registries", AllowEntry::Registries),
            ("Registries", AllowEntry::Registries),
            ("pypi.internal.example.com", host("pypi.internal.example.com", None)),
            ("PyPI.Internal.Example.COM.", host("pypi.internal.example.com", None)),
            ("pypi.internal.example.com:8443", host("pypi.internal.example.com", Some(8443))),
            ("localhost:8080", host("localhost", Some(8080))),
            ("xn--bcher-kva.example", host("xn--bcher-kva.example", None)),
            ("*.corp.example:8443", AllowEntry::Wildcard { domain: "corp.example".into(), port: Some(8443) }),
            ("*.corp.example", AllowEntry::Wildcard { domain: "corp.example".into(), port: None }),
            ("10.0.4.7:3128", AllowEntry::Address { ip: ip("10.0.4.7"), port: 3128 }),
            ("[fd00::1]:443", AllowEntry::Address { ip: ip("fd00::1"), port: 443 }),
            ("[FD00::1]:443", AllowEntry::Address { ip: ip("fd00::1"), port: 443 }),
            ("[::ffff:10.0.4.7]:3128", AllowEntry::Address { ip: ip("10.0.4.7"), port: 3128 }),
        ];
        for (text, expected) in &cases {
            assert_eq!(&AllowEntry::parse(text).unwrap(), expected, "{text}");
        }
        // The canonical text reads back to the same entry.
        for (text, _) in cases {
            let entry = AllowEntry::parse(text).unwrap();
            assert_eq!(AllowEntry::parse(&entry.to_string()).unwrap(), entry, "{text} → {entry}");
        }
        assert_eq!(AllowEntry::parse("[::ffff:10.0.4.7]:3128").unwrap().to_string(), "10.0.4.7:3128");
    }

    #[test]
    fn bad_allow_entries_say_what_is_wrong() {
        let cases = [
            ("", "is empty"),
            ("pypi.org ", "space"),
            ("https://pypi.org", "has a scheme"),
            ("pypi.org/simple", "has a path"),
            ("user:pw@pypi.org", "user information"),
            ("bücher.example", "punycode"),
            ("pypi.org:", "empty port"),
            ("pypi.org:http", "not a number"),
            ("pypi.org:0", "not a number from 1 to 65535"),
            ("pypi.org:65536", "not a number from 1 to 65535"),
            ("pypi.org:99999999999", "not a number"),
            ("registries:443", "takes no port"),
            ("registries.", "not a host name"),
            ("10.0.4.7", "needs a port: \"10.0.4.7:PORT\""),
            ("[fd00::1]", "needs a port: \"[fd00::1]:PORT\""),
            ("fd00::1", "in brackets"),
            ("fd00::1:443", "in brackets"),
            ("[fd00::g]:443", "is not an IPv6 address"),
            ("[fd00::1:443", "unclosed"),
            ("[fd00::1]443", "is not \":PORT\""),
            ("[fe80::1%eth0]:443", "is not an IPv6 address"),
            ("10.0.4:80", "not a valid IPv4 address"),
            ("10.0.4.256:80", "not a valid IPv4 address"),
            ("0x7f.1:80", "not a valid IPv4 address"),
            ("*", "wildcard"),
            ("*.", "has no host name"),
            ("*.com", "whole top-level domain"),
            ("*.example.", "whole top-level domain"),
            ("foo.*.example", "leading \"*.\""),
            ("*foo.example", "leading \"*.\""),
            ("*.10.0.0.1:80", "not a valid IPv4 address"),
            ("my_host.example", "'_' cannot be in a host name"),
            ("a..example", "empty label"),
            (".example", "empty label"),
            ("-a.example", "hyphen"),
            ("a-.example", "hyphen"),
            (":443", "has no host name"),
        ];
        for (text, expected) in cases {
            let err = AllowEntry::parse(text).unwrap_err();
            let message = err.to_string();
            assert!(message.contains(expected), "{text:?}: {message}");
            assert!(message.starts_with(&format!("allow entry {:?}", err.entry)), "{message}");
        }
        let long = format!("{}.example", "a".repeat(64));
        assert!(AllowEntry::parse(&long).unwrap_err().reason.contains("longer than 63"));
        let huge = vec!["a".repeat(60); 5].join(".");
        assert!(AllowEntry::parse(&huge).unwrap_err().reason.contains("longer than 253"));
        let listed = Allowlist::parse(&["pypi.org", "bad entry"]).unwrap_err();
        assert_eq!(listed.entry, "bad entry", "the first bad entry is named");
    }

    #[test]
    fn the_allowlist_keeps_each_entry_once_and_round_trips_through_serde() {
        let global = list(&["registries", "pypi.internal.example.com"]);
        let repo = list(&["pypi.internal.example.com", "10.0.4.7:3128"]);
        let both = global.union(&repo);
        assert_eq!(both.len(), 3);
        assert!(!both.is_empty() && Allowlist::default().is_empty());
        let json = serde_json::to_string(&both).unwrap();
        assert_eq!(json, r#"["registries","pypi.internal.example.com","10.0.4.7:3128"]"#);
        assert_eq!(serde_json::from_str::<Allowlist>(&json).unwrap(), both);
        let err = serde_json::from_str::<Allowlist>(r#"["*.com"]"#).unwrap_err().to_string();
        assert!(err.contains("allow entry \"*.com\""), "{err}");
    }

    #[test]
    fn registries_are_public_hosts_on_443_and_no_code_hosting() {
        let registries = list(&["registries"]);
        for (host, what) in REGISTRIES {
            assert!(decide_name(&registries, host, 443).is_ok(), "{host}");
            assert!(decide_name(&registries, host, 80).is_err(), "{host} on 80");
            assert!(!what.is_empty());
            assert_eq!(check_name(host).as_deref(), Ok(*host), "a valid lowercase name");
        }
        for host in ["github.com", "objects.githubusercontent.com", "storage.googleapis.com", "crates.io.evil.example"]
        {
            assert!(decide_name(&registries, host, 443).is_err(), "{host}");
        }
    }

    #[test]
    fn names_are_decided_by_their_entries() {
        let allow = list(&[
            "registries",
            "pypi.internal.example.com",
            "git.example.com:8443",
            "*.corp.example:8443",
            "*.cdn.example",
            "localhost:8080",
            "10.0.4.7:3128",
        ]);
        // (name, port, allowed, part of the reason when refused, allow_with when refused)
        let cases: &[(&str, u16, bool, &str, Option<&str>)] = &[
            ("pypi.internal.example.com", 443, true, "", None),
            ("pypi.internal.example.com", 80, true, "", None),
            ("PYPI.internal.example.com.", 443, true, "", None),
            (
                "pypi.internal.example.com",
                8080,
                false,
                "is in [network] allow, but not on port 8080",
                Some("pypi.internal.example.com:8080"),
            ),
            ("git.example.com", 8443, true, "", None),
            ("git.example.com", 443, false, "but not on port 443", Some("git.example.com")),
            ("a.corp.example", 8443, true, "", None),
            ("a.b.c.corp.example", 8443, true, "", None),
            ("corp.example", 8443, false, "corp.example is not in [network] allow", Some("corp.example:8443")),
            ("evilcorp.example", 8443, false, "not in [network] allow", Some("evilcorp.example:8443")),
            ("a.corp.example", 443, false, "but not on port 443", Some("a.corp.example")),
            ("x.cdn.example", 443, true, "", None),
            ("x.cdn.example", 80, true, "", None),
            ("x.cdn.example", 8080, false, "not on port 8080", Some("x.cdn.example:8080")),
            ("localhost", 8080, true, "", None),
            ("localhost", 8081, false, "not on port 8081", Some("localhost:8081")),
            ("pypi.org", 443, true, "", None),
            ("example.com", 443, false, "example.com is not in [network] allow", Some("example.com")),
            ("exa_mple.com", 443, false, "not a valid host name", None),
            ("10.0.4", 80, false, "not a valid host name", None),
            ("", 80, false, "not a valid host name", None),
        ];
        for &(name, port, allowed, reason, allow_with) in cases {
            match decide_name(&allow, name, port) {
                Ok(()) => assert!(allowed, "{name}:{port} was allowed"),
                Err(refusal) => {
                    assert!(!allowed, "{name}:{port} was refused: {refusal}");
                    assert!(refusal.reason.contains(reason), "{name}:{port}: {refusal}");
                    assert_eq!(refusal.allow_with.as_deref(), allow_with, "{name}:{port}");
                    assert!(!refusal.reason.contains('\n'));
                }
            }
        }
        assert!(decide_name(&Allowlist::default(), "pypi.org", 443).is_err(), "an empty list allows nothing");
    }

    #[test]
    fn addresses_are_decided_by_class_and_exact_entries() {
        let allow = list(&["localhost:8080", "127.0.0.1:9000", "10.0.4.7:3128", "[fd00::1]:443", "93.184.215.14:443"]);
        // (address, port, asked by name, allowed, part of the reason when refused)
        let cases: &[(&str, u16, bool, bool, &str)] = &[
            // Exact entries permit what is not public, by literal and by an allowed name.
            ("127.0.0.1", 9000, false, true, ""),
            ("127.0.0.1", 9000, true, true, ""),
            ("::ffff:127.0.0.1", 9000, false, true, ""),
            ("10.0.4.7", 3128, false, true, ""),
            ("fd00::1", 443, true, true, ""),
            // Another port of a listed address is another destination.
            ("127.0.0.1", 9001, false, false, "127.0.0.1:9001 is loopback: refused by policy"),
            ("10.0.4.7", 3129, true, false, "it resolves to 10.0.4.7:3129, which is private (RFC 1918)"),
            // DNS rebinding: `localhost:8080` is allowed by name, its address is not.
            ("127.0.0.1", 8080, true, false, "it resolves to 127.0.0.1:8080, which is loopback"),
            ("::1", 8080, true, false, "it resolves to [::1]:8080, which is loopback"),
            (
                "169.254.169.254",
                80,
                false,
                false,
                "169.254.169.254:80 is link-local (cloud metadata): refused by policy (only an exact IP:port entry a person writes by hand",
            ),
            ("169.254.169.254", 80, true, false, "link-local (cloud metadata)"),
            ("::ffff:169.254.169.254", 80, true, false, "it resolves to 169.254.169.254:80"),
            ("100.100.100.200", 80, true, false, "CGNAT"),
            ("192.168.0.1", 443, true, false, "private (RFC 1918)"),
            ("fe80::1", 443, true, false, "link-local"),
            ("224.0.0.251", 5353, true, false, "multicast"),
            ("0.0.0.0", 8080, true, false, "unspecified"),
            ("255.255.255.255", 80, true, false, "broadcast"),
            ("64:ff9b::7f00:1", 80, true, false, "loopback"),
            // Public: fine behind an allowed name; by literal only with its exact entry.
            ("151.101.0.223", 443, true, true, ""),
            ("2606:4700:4700::1111", 443, true, true, ""),
            (
                "151.101.0.223",
                443,
                false,
                false,
                "151.101.0.223:443 is an IP address, which only an exact IP:port entry",
            ),
            ("93.184.215.14", 443, false, true, ""),
            ("93.184.215.14", 80, false, false, "is an IP address"),
        ];
        for &(addr, port, by_name, allowed, reason) in cases {
            match decide_addr(&allow, by_name, ip(addr), port) {
                Ok(()) => assert!(allowed, "{addr}:{port} (by name: {by_name}) was allowed"),
                Err(refusal) => {
                    assert!(!allowed, "{addr}:{port} (by name: {by_name}) was refused: {refusal}");
                    assert!(refusal.reason.contains(reason), "{addr}:{port}: {refusal}");
                    // What is not public is refused by policy, with no entry to propose; a
                    // public literal proposes its exact entry.
                    let public = classify(ip(addr)) == AddrClass::Public;
                    let expected_entry = public.then(|| socket_text(ip(addr).to_canonical(), port));
                    assert_eq!(refusal.allow_with, expected_entry, "{addr}:{port}");
                    assert_eq!(refusal.reason.contains("refused by policy"), !public, "{refusal}");
                    assert!(!refusal.reason.contains('\n'));
                }
            }
        }
    }

    #[test]
    fn authorities_parse_and_decide_routes_literals_to_addresses() {
        let dest = |text: &str, default| Destination::parse_authority(text, default);
        let name = |n: &str, port| Destination { host: Host::Name(n.into()), port };
        assert_eq!(dest("PyPI.org:443", None).unwrap(), name("pypi.org", 443));
        assert_eq!(dest("pypi.org.", Some(80)).unwrap(), name("pypi.org", 80));
        assert_eq!(dest("127.0.0.1:8080", None).unwrap().host, Host::Ip(ip("127.0.0.1")));
        assert_eq!(dest("[::ffff:127.0.0.1]:8080", None).unwrap().host, Host::Ip(ip("127.0.0.1")));
        let v6 = dest("[fd00::1]:443", None).unwrap();
        assert_eq!((v6.to_string(), v6.host_text()), ("[fd00::1]:443".to_owned(), "[fd00::1]".to_owned()));
        assert_eq!(dest("[fd00::1]", Some(80)).unwrap().port, 80);
        for bad in [
            "",
            "pypi.org",
            "pypi.org:",
            "pypi.org:0",
            "user@pypi.org:443",
            "fd00::1:443",
            "a b:80",
            "é.org:80",
            "10.0.4:80",
            "[x]:80",
            "bad_name:80",
            "http://a.example:80",
        ] {
            assert!(dest(bad, None).is_err(), "{bad:?}");
        }
        let allow = list(&["127.0.0.1:9000", "pypi.org"]);
        assert!(decide(&allow, &dest("127.0.0.1:9000", None).unwrap()).is_ok());
        assert!(decide(&allow, &dest("127.0.0.1:9001", None).unwrap()).is_err());
        assert!(decide(&allow, &dest("pypi.org:443", None).unwrap()).is_ok());
        assert!(decide(&allow, &dest("files.pythonhosted.org:443", None).unwrap()).is_err());

        // A host the url crate parsed is held to the same rules.
        let parsed = |text: &str| url::Url::parse(text).unwrap();
        let from = |url: &url::Url| Destination::from_url_host(url.host().unwrap(), url.port().unwrap_or(80));
        assert_eq!(from(&parsed("http://PyPI.org./")).unwrap(), name("pypi.org", 80));
        assert_eq!(from(&parsed("http://[::ffff:127.0.0.1]:8080/")).unwrap().host, Host::Ip(ip("127.0.0.1")));
        assert_eq!(from(&parsed("http://0x7f.1/")).unwrap().host, Host::Ip(ip("127.0.0.1")));
        for bad in ["http://bad_name/", "http://a.example:0/", "http://a..b/"] {
            assert!(from(&parsed(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_proxy_environment_points_every_client_at_the_proxy() {
        let vars = proxy_environment("127.0.0.1", 3128);
        let get = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str());
        for name in
            ["HTTP_PROXY", "https_proxy", "ALL_PROXY", "npm_config_https_proxy", "CARGO_HTTP_PROXY", "PIP_PROXY"]
        {
            assert_eq!(get(name), Some("http://127.0.0.1:3128"), "{name}");
        }
        assert_eq!((get("NO_PROXY"), get("no_proxy")), (Some(""), Some("")), "nothing bypasses the proxy");
        assert_eq!(get("GOPROXY"), None, "Go's module proxy setting is not an HTTP proxy");
        let java = get("JAVA_TOOL_OPTIONS").unwrap();
        assert!(java.contains("-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128"), "{java}");
        let names: std::collections::BTreeSet<_> = vars.iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), vars.len(), "each variable once");
    }

    /// Text made of the characters entries and authorities are built from, so that generated
    /// inputs often get past the first checks.
    fn arb_text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a",
            "Z",
            "0",
            "9",
            "-",
            ".",
            ":",
            "*",
            "[",
            "]",
            "::",
            "ffff",
            "127.0.0.1",
            "10",
            "x",
            "é",
            " ",
            "/",
            "@",
            "0x7f",
            "registries",
            "443",
            "65536",
        ]);
        prop::collection::vec(pieces, 0..12).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_entries_read_back_as_written(text in arb_text(), port in any::<u16>()) {
            if let Ok(entry) = AllowEntry::parse(&text) {
                prop_assert_eq!(AllowEntry::parse(&entry.to_string()), Ok(entry.clone()));
                let list = Allowlist::new(vec![entry]);
                let _ = decide_name(&list, &text, port);
            }
            if let Ok(destination) = Destination::parse_authority(&text, Some(80)) {
                prop_assert_eq!(Destination::parse_authority(&destination.to_string(), None), Ok(destination.clone()));
                let _ = decide(&Allowlist::default(), &destination);
            }
            let _ = decide_name(&Allowlist::default(), &text, port);
        }
    }

    #[test]
    fn network_events_serialize_without_empty_fields() {
        let event = NetworkEvent {
            host: "pypi.org".into(),
            port: 443,
            allowed: true,
            reason: None,
            allow_with: None,
            by_policy: None,
            address: Some("151.101.0.223:443".into()),
            error: None,
            bytes_up: 10,
            bytes_down: 20,
            phase: "setup".into(),
        };
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(
            json,
            r#"{"host":"pypi.org","port":443,"allowed":true,"address":"151.101.0.223:443","bytes_up":10,"bytes_down":20,"phase":"setup"}"#
        );
        assert_eq!(serde_json::from_str::<NetworkEvent>(&json).unwrap(), event);
    }
}
