//! The optional config file (`$XDG_CONFIG_HOME/forgeloop/config.toml`). Unknown keys are
//! errors, so a typo never silently turns a setting off.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::domain::commands::{CommandsProfile, commands_from_value};
use crate::domain::egress::Allowlist;
use crate::domain::pr_ref::RepoName;
use crate::domain::protect::ProtectMode;
use crate::redact::UserRules;

/// The whole config file, one field per `[table]`; every table may be left out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[paths]`: where the home and the registry live when no flag or variable says.
    #[serde(default)]
    pub paths: PathsConfig,
    /// `[github]`: the API base and how to find a token.
    #[serde(default)]
    pub github: GithubConfig,
    /// `[tui]`: the control room's theme, extra watched directories, mouse, notifications, keys.
    #[serde(default)]
    pub tui: TuiConfig,
    /// `[mcp]`: what the MCP server may test, and with which profiles.
    #[serde(default)]
    pub mcp: McpConfig,
    /// `[runner]`: the sandbox switch and the limits test commands run under.
    #[serde(default)]
    pub runner: RunnerConfig,
    /// `[redact]`: the organisation's own secret formats.
    #[serde(default)]
    pub redact: RedactConfig,
    /// `[checkout]`: which submodule owners get the token.
    #[serde(default)]
    pub checkout: CheckoutConfig,
    /// `[checks]`: how often the `github-checks` executor polls.
    #[serde(default)]
    pub checks: ChecksConfig,
    /// `[cache]`: the bound on the warm caches.
    #[serde(default)]
    pub cache: CacheConfig,
    /// `[network]`: what test runs may reach.
    #[serde(default)]
    pub network: NetworkConfig,
    /// `[protect]`: paths a passing PR may not change without review.
    #[serde(default)]
    pub protect: ProtectConfig,
    /// `[connector]`: the profile `forgeloop serve`'s `test_pr` runs for each repository.
    #[serde(default)]
    pub connector: ConnectorConfig,
    /// `[review]`: what a review packet keeps out, and how long an attestation holds.
    #[serde(default)]
    pub review: ReviewConfig,
}

/// `[review]` (docs/review.md): the person's own exclusions from a review packet (globs as
/// `domain::protect::glob_matches` reads them, over the built-in rules) and how long a verified
/// attestation stays valid.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewConfig {
    /// Globs kept out of every packet.
    #[serde(default, deserialize_with = "patterns")]
    pub exclude: Vec<String>,
    /// Minutes an attestation stays valid (default 60).
    #[serde(default)]
    pub attestation_ttl_minutes: Option<u32>,
}

/// `[connector]` (design §8.1): which of the `[mcp.profiles]` the remote connector's `test_pr`
/// runs, per repository; the caller never names one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectorConfig {
    /// Repositories the connector may use without a ChatGPT Project bound in the registry
    /// (`OWNER/REPO`, stored lowercase): for a person who only uses the connector.
    #[serde(default, deserialize_with = "connector_repositories")]
    pub repositories: Vec<String>,
    /// The profile for a bound repository not listed in `profiles`.
    #[serde(default)]
    pub default_profile: Option<String>,
    /// `"owner/repo" = "PROFILE"`: a repository's own profile.
    #[serde(default)]
    pub profiles: BTreeMap<String, String>,
    /// Whether `serve` accepts clients known by a client ID metadata document, which it fetches
    /// from the URL the client names (so anyone with the URL can make it send one https GET to
    /// a public address); `false`: clients must register, and the metadata does not offer it.
    #[serde(default = "yes")]
    pub client_documents: bool,
}

impl Default for ConnectorConfig {
    fn default() -> ConnectorConfig {
        ConnectorConfig {
            repositories: Vec::new(),
            default_profile: None,
            profiles: BTreeMap::new(),
            client_documents: true,
        }
    }
}

fn yes() -> bool {
    true
}

impl ConnectorConfig {
    /// Whether `[connector] repositories` lists `repository` (`owner/repo`, any case).
    pub fn lists(&self, repository: &str) -> bool {
        self.repositories.iter().any(|r| r.eq_ignore_ascii_case(repository))
    }

    /// The profile name for `repository` (`owner/repo`, any case), if one is configured.
    pub fn profile_for(&self, repository: &str) -> Option<&str> {
        self.profiles
            .iter()
            .find(|(repo, _)| repo.eq_ignore_ascii_case(repository))
            .map(|(_, name)| name.as_str())
            .or(self.default_profile.as_deref())
    }
}

/// `[protect]`: paths a passing PR may not change without a person's review (design §5.2,
/// `NEEDS_REVIEW`). Globs as `domain::protect::glob_matches` reads them; checked at load.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectConfig {
    /// For every repository.
    #[serde(default, deserialize_with = "patterns")]
    pub paths: Vec<String>,
    /// What a run does with the protected paths: `"hold"` (the default) tests the PR's code
    /// against the base tip's version of them; `"flag"` runs the PR's own version.
    #[serde(default)]
    pub mode: Option<ProtectMode>,
    /// `[protect.repositories."owner/repo"]`, keyed by the lowercase `owner/repo`.
    #[serde(default, deserialize_with = "protect_repository_keys")]
    pub repositories: BTreeMap<String, ProtectedPaths>,
}

/// One repository's protected paths, added to `[protect] paths`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectedPaths {
    /// Globs added for this repository.
    #[serde(default, deserialize_with = "patterns")]
    pub paths: Vec<String>,
    /// This repository's mode, over `[protect] mode`.
    #[serde(default)]
    pub mode: Option<ProtectMode>,
}

impl ProtectConfig {
    /// The patterns protecting `repository` (`owner/repo`, any case).
    pub fn for_repository(&self, repository: &str) -> Vec<String> {
        let own = self.repositories.get(&repository.to_ascii_lowercase()).map(|r| r.paths.as_slice()).unwrap_or(&[]);
        let mut all: Vec<String> = Vec::new();
        for pattern in self.paths.iter().chain(own) {
            if !all.contains(pattern) {
                all.push(pattern.clone());
            }
        }
        all
    }

    /// The mode for `repository` (`owner/repo`, any case): its own, else `[protect] mode`,
    /// else `hold`.
    pub fn mode_for(&self, repository: &str) -> ProtectMode {
        let own = self.repositories.get(&repository.to_ascii_lowercase()).and_then(|r| r.mode);
        own.or(self.mode).unwrap_or_default()
    }
}

/// Protect patterns: non-empty, relative, without `..` (a pattern that can never match would
/// silently protect nothing).
fn patterns<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let list = Vec::<String>::deserialize(deserializer)?;
    for pattern in &list {
        let trimmed = pattern.trim();
        if trimmed.is_empty() || trimmed.split('/').any(|c| c == "..") || trimmed.contains('\\') {
            return Err(serde::de::Error::custom(format!(
                "protected path {pattern:?}: write a repository-relative glob such as \"tests/\" or \"*.snap\""
            )));
        }
    }
    Ok(list.into_iter().map(|p| p.trim().to_owned()).collect())
}

/// The bound on all warm caches together when `[cache] max_gb` says nothing.
pub const DEFAULT_CACHE_MAX_GB: f64 = 10.0;

/// The warm caches per repository (design §5.6).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// All caches together at most this many GB (default 10); `gc` trims the least recently
    /// used first.
    pub max_gb: Option<f64>,
    /// How many commits the base branch may move past the commit a repository's base layer
    /// was warmed at before a run warms it again (default 20).
    pub base_max_behind: Option<u32>,
}

/// `[cache] base_max_behind` when the file says nothing.
pub const DEFAULT_BASE_MAX_BEHIND: u32 = 20;

impl CacheConfig {
    /// The distance after which the base layer is warmed again.
    pub fn base_max_behind(&self) -> u32 {
        self.base_max_behind.unwrap_or(DEFAULT_BASE_MAX_BEHIND)
    }

    /// The bound in bytes (a missing, negative or non-finite `max_gb` means the default).
    pub fn max_bytes(&self) -> u64 {
        let gb = self.max_gb.filter(|g| g.is_finite() && *g >= 0.0).unwrap_or(DEFAULT_CACHE_MAX_GB);
        (gb * 1e9) as u64
    }
}

/// What test runs may reach (design §5.6): the person's allowlist for `"network": "allowlist"`
/// runs, and which repositories may use `"network": "open"`. Entries are parsed while the file
/// is read, so a bad one fails the load with the entry named.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    /// `[network] allow`: for every repository.
    #[serde(default)]
    pub allow: Allowlist,
    /// `[network.repositories."owner/repo"]`, keyed by the lowercase `owner/repo`.
    #[serde(default, deserialize_with = "repository_keys")]
    pub repositories: BTreeMap<String, RepositoryNetwork>,
}

/// One repository's additions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositoryNetwork {
    /// Added to `[network] allow` for this repository's runs.
    #[serde(default)]
    pub allow: Allowlist,
    /// Permits a commands file's `"network": "open"` (the host's whole network) here.
    #[serde(default)]
    pub open: bool,
}

/// The network a repository's runs may have, from the person's config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    /// `[network] allow` plus the repository's own `allow`.
    pub allow: Allowlist,
    /// `[network.repositories."owner/repo"] open = true`.
    pub open_permitted: bool,
}

impl NetworkConfig {
    /// The effective allowlist of `repository` (`owner/repo`, any case) and whether it may
    /// run with the host's network.
    pub fn for_repository(&self, repository: &str) -> NetworkPolicy {
        match self.repositories.get(&repository.to_ascii_lowercase()) {
            Some(own) => NetworkPolicy { allow: self.allow.union(&own.allow), open_permitted: own.open },
            None => NetworkPolicy { allow: self.allow.clone(), open_permitted: false },
        }
    }
}

/// Keys are `owner/repo`, compared as GitHub does (case-insensitively); two spellings of one
/// repository would make one table silently win, so they are an error.
fn repository_keys<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, RepositoryNetwork>, D::Error> {
    keyed_by_repository("network", deserializer)
}

/// `[protect.repositories."owner/repo"]`, read as [`repository_keys`] reads the network's.
fn connector_repositories<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let mut out: Vec<String> = Vec::new();
    for given in Vec::<String>::deserialize(deserializer)? {
        let name = RepoName::parse(&given)
            .map_err(|e| serde::de::Error::custom(format!("[connector] repositories: {given:?}: {e}")))?;
        if !out.contains(&name.key()) {
            out.push(name.key());
        }
    }
    Ok(out)
}

fn protect_repository_keys<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, ProtectedPaths>, D::Error> {
    keyed_by_repository("protect", deserializer)
}

fn keyed_by_repository<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    table: &str,
    deserializer: D,
) -> Result<BTreeMap<String, T>, D::Error> {
    let tables = BTreeMap::<String, T>::deserialize(deserializer)?;
    let mut out = BTreeMap::new();
    for (key, entry) in tables {
        let name = RepoName::parse(&key)
            .map_err(|e| serde::de::Error::custom(format!("[{table}.repositories.{key:?}]: {e}")))?;
        if name.full_name() != key {
            return Err(serde::de::Error::custom(format!(
                "[{table}.repositories.{key:?}]: write the repository as OWNER/REPO without spaces"
            )));
        }
        if out.insert(name.key(), entry).is_some() {
            return Err(serde::de::Error::custom(format!(
                "[{table}.repositories.{key:?}]: this repository has another table under a differently cased name"
            )));
        }
    }
    Ok(out)
}

/// How the `github-checks` executor polls (design §5.7): the wait between two reads of a
/// commit's check runs starts at `poll_min_s` after a change and doubles up to `poll_max_s`
/// while nothing changes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksConfig {
    /// Default 5 seconds.
    pub poll_min_s: Option<f64>,
    /// Default 60 seconds.
    pub poll_max_s: Option<f64>,
}

impl ChecksConfig {
    /// `(min, max)`, each at least 10 ms, `max` at least `min`.
    pub fn poll_bounds(&self) -> (std::time::Duration, std::time::Duration) {
        let secs = |v: Option<f64>, default: f64| {
            let v = v.filter(|v| v.is_finite()).unwrap_or(default).clamp(0.01, 86_400.0);
            std::time::Duration::from_secs_f64(v)
        };
        let min = secs(self.poll_min_s, 5.0);
        (min, secs(self.poll_max_s, 60.0).max(min))
    }
}

/// How PRs are fetched (design §5.2.2).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckoutConfig {
    /// With `--submodules`, owners (besides the PR's repository's) whose repositories on the
    /// same scheme, host and port as the PR's get the GitHub token. Every other submodule URL is
    /// fetched without credentials.
    #[serde(default)]
    pub submodule_token_owners: Vec<String>,
}

/// The redactor's additions. Rules are compiled while the file is read, so a bad regex, a
/// missing keyword or a reused id fails the load with the rule named.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactConfig {
    /// `[[redact.rules]]`: an organisation's own token formats, masked as `[REDACTED:<id>]`.
    #[serde(default)]
    pub rules: UserRules,
}

/// How test commands run. Only the person edits this file: a commands file or the MCP server
/// can widen the sandbox in small ways, never turn it off (design §5.6).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerConfig {
    /// `"on"` (default) or `"off"`: run PR code without the sandbox, at your own risk.
    pub sandbox: Option<SandboxSwitch>,
    /// Processes and threads one run may have at once (default 4096).
    pub max_processes: Option<u64>,
    /// When forgeloop runs as root: the unprivileged account test commands run as (a name,
    /// `UID` or `UID:GID`; default `nobody`). A dedicated account is better: `nobody` may be
    /// shared with other services.
    pub run_as: Option<String>,
}

/// `[runner] sandbox`: whether test commands run inside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSwitch {
    /// The default: every run is sandboxed.
    On,
    /// Runs use the host as it is; the person's own risk.
    Off,
}

/// Defaults for `--home` and `--registry`; the flags and their variables win.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathsConfig {
    /// The forgeloop home (cycles, index, mirrors).
    pub home: Option<PathBuf>,
    /// The ChatGPT Project registry directory.
    pub registry: Option<PathBuf>,
}

/// How forgeloop reaches GitHub.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GithubConfig {
    /// REST API base, e.g. `https://ghe.example.com/api/v3`.
    pub api: Option<String>,
    /// A command (argv) that prints a token, tried after GH_TOKEN, GITHUB_TOKEN and `gh`.
    pub token_command: Option<Vec<String>>,
}

/// The control room's settings; `forgeloop tui` flags win over them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiConfig {
    /// A built-in theme name or a theme TOML file (default `dark`).
    pub theme: Option<String>,
    /// Extra directories of state files to watch.
    #[serde(default)]
    pub watch: Vec<PathBuf>,
    /// Mouse support, as `--mouse` turns it on.
    #[serde(default)]
    pub mouse: bool,
    /// Bell and desktop notification when a cycle starts needing a person (default on).
    pub notify: Option<bool>,
    /// The person's own keys: a command's name (the help's, in snake case) → its key or keys,
    /// replacing the built-in ones (checked when the control room starts).
    #[serde(default)]
    pub keys: BTreeMap<String, KeyList>,
}

/// One key (`"C"`) or several (`["q", "Ctrl-q"]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum KeyList {
    /// A single key.
    One(String),
    /// Several keys for one command.
    Many(Vec<String>),
}

impl KeyList {
    /// The keys as a list, one or many.
    pub fn as_slice(&self) -> &[String] {
        match self {
            KeyList::One(key) => std::slice::from_ref(key),
            KeyList::Many(keys) => keys,
        }
    }
}

impl TuiConfig {
    /// Whether to ring and notify when a cycle starts needing a person (on unless set false).
    pub fn notify(&self) -> bool {
        self.notify.unwrap_or(true)
    }
}

/// The MCP server's limits (design §8).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Repositories the MCP server may test besides those bound in the registry.
    #[serde(default)]
    pub allowed_repositories: Vec<String>,
    /// Named command profiles: the same type and formats as a commands file, parsed when the
    /// config loads (a bad profile fails the load with its name, as a bad redaction rule does).
    #[serde(default, deserialize_with = "profiles")]
    pub profiles: BTreeMap<String, CommandsProfile>,
}

fn profiles<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, CommandsProfile>, D::Error> {
    let tables = BTreeMap::<String, toml::Value>::deserialize(deserializer)?;
    let mut out = BTreeMap::new();
    for (name, table) in tables {
        let bad = |reason: String| {
            serde::de::Error::custom(format!("[mcp.profiles.{name}] is not a valid commands profile: {reason}"))
        };
        let json = serde_json::to_value(&table).map_err(|e| bad(e.to_string()))?;
        let profile = commands_from_value(&json).map_err(|e| bad(e.to_string()))?;
        out.insert(name, profile);
    }
    Ok(out)
}

/// The config file could not be read or is not valid (a bad redaction rule included).
#[derive(Debug, thiserror::Error)]
#[error("{} {path}: {reason}", if *.unreadable { "cannot read the config" } else { "invalid config" })]
pub struct ConfigError {
    /// The config file that was read.
    pub path: PathBuf,
    /// What is wrong with it (I/O error, TOML error, bad rule or profile).
    pub reason: String,
    /// It could not be read (missing, a directory, no permission): nothing is wrong with
    /// what it says.
    pub unreadable: bool,
}

impl Config {
    /// Loads `path`; a missing file is the default config only when it was not asked for.
    pub fn load(path: &Path, explicit: bool) -> Result<Config, ConfigError> {
        let fail = |reason: String, unreadable: bool| ConfigError { path: path.to_path_buf(), reason, unreadable };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && !explicit => return Ok(Config::default()),
            Err(err) => return Err(fail(err.to_string(), true)),
        };
        toml::from_str(&text).map_err(|e| fail(e.to_string(), false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_combine_per_repository_and_bad_patterns_fail_the_load() {
        let config: Config = toml::from_str(
            "[protect]\npaths = [\"tests/\", \" test.sh \"]\n[protect.repositories.\"Acme/Widget\"]\npaths = [\"*.snap\"]\n",
        )
        .unwrap();
        assert_eq!(config.protect.for_repository("acme/widget"), ["tests/", "test.sh", "*.snap"]);
        assert_eq!(config.protect.for_repository("someone/else"), ["tests/", "test.sh"]);
        assert_eq!(config.protect.mode_for("acme/widget"), ProtectMode::Hold, "hold is the default");
        let modes: Config = toml::from_str(
            "[protect]\nmode = \"flag\"\n[protect.repositories.\"acme/widget\"]\nmode = \"hold\"\npaths = []\n",
        )
        .unwrap();
        assert_eq!(modes.protect.mode_for("Acme/Widget"), ProtectMode::Hold);
        assert_eq!(modes.protect.mode_for("someone/else"), ProtectMode::Flag);
        assert!(toml::from_str::<Config>("[protect]\nmode = \"skip\"").is_err());
        for bad in ["[protect]\npaths = [\"\"]", "[protect]\npaths = [\"../x\"]", "[protect]\npathz = []"] {
            assert!(toml::from_str::<Config>(bad).is_err(), "{bad}");
        }
        let err = toml::from_str::<Config>("[protect.repositories.\"not a repo\"]\npaths = []").unwrap_err();
        assert!(err.to_string().contains("[protect.repositories."), "{err}");
    }

    #[test]
    fn the_documented_config_example_loads() {
        let doc = include_str!("../docs/configuration.md");
        let start = doc.find("```toml\n").map(|i| i + 8).unwrap();
        let end = start + doc[start..].find("```").unwrap();
        let config: Config = toml::from_str(&doc[start..end]).unwrap();
        assert_eq!(config.protect.for_repository("acme/widget").len(), 4);
    }

    /// The reference in docs/configuration.md is a config that loads, every section of it.
    #[test]
    fn the_documented_config_loads() {
        let doc = include_str!("../docs/configuration.md");
        let block = doc.split("```toml\n").nth(1).and_then(|rest| rest.split("\n```").next()).unwrap();
        let config: Config = toml::from_str(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
        assert_eq!(config.cache.max_gb, Some(10.0));
        assert_eq!(config.network.for_repository("acme/widget").allow.entries().len(), 3);
    }

    #[test]
    fn parses_every_section_and_refuses_typos() {
        let text = r#"
[paths]
home = "/h"
[github]
api = "https://ghe.example.com/api/v3"
token_command = ["pass", "show", "gh"]
[tui]
theme = "light"
watch = ["/w"]
notify = false
[mcp]
allowed_repositories = ["acme/widget"]
[mcp.profiles.smoke]
commands = [["git", "diff", "--check"]]
[runner]
sandbox = "off"
max_processes = 512
[checkout]
submodule_token_owners = ["acme-libs"]
[network]
allow = ["registries"]
[network.repositories."acme/widget"]
open = true
[[redact.rules]]
id = "acme-token"
regex = '(acme_[A-Za-z0-9]{32})\b'
keywords = ["acme_"]
entropy = 3.5
"#;
        let config: Config = toml::from_str(text).unwrap();
        assert_eq!(config.github.token_command.as_deref().unwrap()[0], "pass");
        assert!(config.mcp.profiles.contains_key("smoke"));
        assert_eq!(config.runner.sandbox, Some(SandboxSwitch::Off));
        assert_eq!(config.runner.max_processes, Some(512));
        assert_eq!(config.checkout.submodule_token_owners, ["acme-libs"]);
        assert!(config.network.for_repository("acme/widget").open_permitted);
        assert!(toml::from_str::<Config>("[network]\nallowlist = []").is_err());
        assert!(toml::from_str::<Config>("[checkout]\nsubmodule_owners = []").is_err());
        assert_eq!(config.redact.rules.specs()[0].id, "acme-token");
        assert!(!config.tui.notify(), "notifications can be turned off");
        assert!(Config::default().tui.notify(), "and are on by default");
        assert!(toml::from_str::<Config>("[github]\napi_url = \"x\"").is_err());
        // A typo never leaves the sandbox in an unknown state.
        assert!(toml::from_str::<Config>("[runner]\nsandbox = \"of\"").is_err());
    }

    #[test]
    fn the_documented_config_examples_load_and_checks_polling_has_sane_bounds() {
        let readme = include_str!("../docs/configuration.md");
        let section = readme.split("\n## Configuration\n").nth(1).and_then(|r| r.split("\n## ").next()).unwrap();
        let blocks: Vec<&str> =
            section.split("```toml\n").skip(1).filter_map(|rest| rest.split_once("\n```").map(|(b, _)| b)).collect();
        assert!(blocks.len() >= 2, "the Configuration section's examples");
        for block in &blocks {
            toml::from_str::<Config>(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
        }
        let config: Config = toml::from_str(blocks[0]).unwrap();
        let secs = |d: std::time::Duration| d.as_secs_f64();
        let (min, max) = config.checks.poll_bounds();
        assert_eq!((secs(min), secs(max)), (5.0, 60.0));
        let (min, max) = ChecksConfig::default().poll_bounds();
        assert_eq!((secs(min), secs(max)), (5.0, 60.0), "the defaults docs/configuration.md states");
        let odd = ChecksConfig { poll_min_s: Some(-1.0), poll_max_s: Some(f64::NAN) };
        let (min, max) = odd.poll_bounds();
        assert_eq!((secs(min), secs(max)), (0.01, 60.0));
        assert!(toml::from_str::<Config>("[checks]\npoll_every = 1").is_err());
    }

    #[test]
    fn a_config_that_cannot_be_read_is_not_called_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("confg.toml");
        let err = Config::load(&missing, true).unwrap_err().to_string();
        assert!(err.starts_with(&format!("cannot read the config {}: ", missing.display())), "{err}");
        std::fs::write(&missing, "[mcp\n").unwrap();
        let err = Config::load(&missing, true).unwrap_err().to_string();
        assert!(err.starts_with("invalid config "), "{err}");
    }

    #[test]
    fn a_bad_redaction_rule_fails_the_load_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let rule = "[[redact.rules]]\nid = \"acme-token\"\nregex = 'acme_[a-z'\nkeywords = [\"acme_\"]\n";
        std::fs::write(&path, rule).unwrap();
        let err = Config::load(&path, true).unwrap_err().to_string();
        assert!(err.contains("redact rule \"acme-token\": the regex does not compile"), "{err}");
        std::fs::write(&path, "[[redact.rules]]\nid = \"acme-token\"\nregex = 'x'\nkeywords = []\n").unwrap();
        let err = Config::load(&path, true).unwrap_err().to_string();
        assert!(err.contains("redact rule \"acme-token\": needs at least one keyword"), "{err}");
        std::fs::write(&path, "[[redact.rules]]\nid = \"acme-token\"\nregex = 'x'\nkeyword = [\"abc\"]\n").unwrap();
        assert!(Config::load(&path, true).is_err(), "a misspelt field is an error");
    }

    #[test]
    fn network_allowlists_combine_per_repository_and_bad_entries_fail_the_load() {
        let text = r#"
[network]
allow = ["registries", "pypi.internal.example.com", "*.corp.example:8443", "10.0.4.7:3128"]
[network.repositories."Acme/Widget"]
allow = ["[fd00::1]:443", "pypi.internal.example.com"]
open = true
[network.repositories."acme/gadget"]
allow = ["git.example.com:8080"]
"#;
        let config: Config = toml::from_str(text).unwrap();
        let entries =
            |policy: &NetworkPolicy| policy.allow.entries().iter().map(ToString::to_string).collect::<Vec<_>>();
        let widget = config.network.for_repository("acme/widget");
        assert_eq!(
            entries(&widget),
            ["registries", "pypi.internal.example.com", "*.corp.example:8443", "10.0.4.7:3128", "[fd00::1]:443"],
            "global entries first, the repository's added once"
        );
        assert!(widget.open_permitted);
        assert_eq!(config.network.for_repository("ACME/WIDGET"), widget, "repository names are case-insensitive");
        let gadget = config.network.for_repository("acme/gadget");
        assert_eq!(entries(&gadget).last().map(String::as_str), Some("git.example.com:8080"));
        assert!(!gadget.open_permitted, "open is off unless the repository's table says so");
        let other = config.network.for_repository("someone/else");
        assert_eq!((other.allow.len(), other.open_permitted), (4, false));
        let none = Config::default().network.for_repository("acme/widget");
        assert!(none.allow.is_empty() && !none.open_permitted, "nothing is reachable by default");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let cases = [
            (
                "[network]\nallow = [\"*.com\"]\n",
                "allow entry \"*.com\": \"*.com\" would allow a whole top-level domain",
            ),
            ("[network]\nallow = [\"https://pypi.org\"]\n", "allow entry \"https://pypi.org\": has a scheme"),
            ("[network]\nallow = [\"10.0.4.7\"]\n", "an IP address needs a port"),
            ("[network.repositories.\"acme/widget\"]\nallow = [\"bad host\"]\n", "allow entry \"bad host\""),
            ("[network]\nalow = []\n", "unknown field `alow`"),
            ("[network.repositories.\"acme/widget\"]\nopen = \"yes\"\n", "open"),
            ("[network.repositories.\"acme/widget\"]\nallowed = []\n", "unknown field `allowed`"),
            ("[network.repositories.\"widget\"]\nopen = true\n", "expected GitHub OWNER/REPO"),
            ("[network.repositories.\" acme/widget\"]\nopen = true\n", "without spaces"),
            (
                "[network.repositories.\"acme/widget\"]\nopen = true\n[network.repositories.\"Acme/Widget\"]\nopen = false\n",
                "differently cased",
            ),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, text).unwrap();
            let err = Config::load(&path, true).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn missing_file_is_default_unless_explicit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope.toml");
        assert_eq!(Config::load(&path, false).unwrap(), Config::default());
        assert!(Config::load(&path, true).is_err());
    }
}
