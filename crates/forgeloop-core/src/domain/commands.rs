//! The commands file (design §5.2.3): what a test run executes. Always argv arrays, never a
//! shell string. Two formats are accepted:
//!
//! * the reference array: `[["pytest", "-q"], ["python3", "-m", "compileall", "src"]]`
//! * an object with per-command options:
//!   `{"commands": [["cargo", "test"], {"argv": ["npm", "test"], "timeout_s": 600,
//!   "env": {"NODE_ENV": "test"}}], "env_passthrough": ["NPM_CONFIG_REGISTRY"], "timeout_s": 900}`

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::egress::NetworkMode;
use super::secret_names::looks_like_credential;

/// A command's timeout when neither it nor the profile sets `timeout_s` (15 minutes).
pub const DEFAULT_TIMEOUT_S: u64 = 900;
/// The `github-checks` executor's defaults: the whole wait, and the wait for a check to appear.
pub const DEFAULT_CHECKS_TIMEOUT_S: u64 = 3600;
/// The second of those: how long a wanted check may take to appear (10 minutes).
pub const DEFAULT_APPEAR_TIMEOUT_S: u64 = 600;
const MAX_CHECKS: usize = 256;
/// Keys only the local executor reads; a `github-checks` profile refuses them.
const LOCAL_ONLY_KEYS: [&str; 10] = [
    "network",
    "read_paths",
    "write_paths",
    "memory_mb",
    "env_passthrough",
    "history",
    "writable_git",
    "setup",
    "cache",
    "tree",
];
/// Keys only the `github-checks` executor reads; a local profile refuses them.
const CHECKS_ONLY_KEYS: [&str; 3] = ["checks", "appear_timeout_s", "dispatch"];
const MAX_COMMANDS: usize = 256;
const MAX_ARGS: usize = 4096;
const MAX_TIMEOUT_S: u64 = 7 * 24 * 3600;
const MAX_PATHS: usize = 64;
const MAX_MEMORY_MB: u64 = 1 << 30;

/// One command: an argv run without a shell, with its own options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// The program and its arguments; the program is looked up on `PATH`.
    pub argv: Vec<String>,
    /// This command's timeout in seconds, over the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Variables set for this command only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// A validated list of commands plus the profile-level options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandsProfile {
    /// Run first, in the same checkout and private `HOME`, with the network the person's
    /// allowlist opens (design §5.6): installing the dependencies the tests then use offline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<CommandSpec>,
    /// The test commands, in order; the first failure stops the run.
    pub commands: Vec<CommandSpec>,
    /// Names of the person's environment variables the commands see (never a credential-looking one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_passthrough: Vec<String>,
    /// Each command's timeout in seconds unless it sets its own; for `github-checks`, the whole wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// What the tests may reach (design §5.6): nothing (the default), the person's allowlist
    /// through forgeloop's proxy, or the host's network (only where the person's config permits).
    #[serde(default, skip_serializing_if = "NetworkMode::is_off")]
    pub network: NetworkMode,
    /// Extra absolute paths the sandbox may read (never inside the denied set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_paths: Vec<String>,
    /// Extra absolute paths the sandbox may read and write (never inside the denied set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_paths: Vec<String>,
    /// A memory cap for the run, where the machine allows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Let the tests write the checkout's git directory (commits, stashes, `git config`);
    /// by default it is read-only to them (design §5.6).
    #[serde(default, skip_serializing_if = "is_false")]
    pub writable_git: bool,
    /// Use the repository's warm cache (design §5.6); `false` runs cold, as a fresh machine.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub cache: bool,
    /// How much history the checkout gets (design §5.2.2): the PR head alone (default) or all of it.
    #[serde(default, skip_serializing_if = "History::is_shallow")]
    pub history: History,
    /// Which tree the commands run in (design §5.2.1): the merge of the PR's head into the tip
    /// of its base branch (the default: what merging would give) or the head alone.
    #[serde(default, skip_serializing_if = "TreeMode::is_merge")]
    pub tree: TreeMode,
    /// What runs the test (design §5.7): these commands here (the default) or the repository's
    /// own CI, read back as check runs.
    #[serde(default, skip_serializing_if = "Executor::is_local")]
    pub executor: Executor,
    /// `github-checks` only: the check runs that decide the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Checks>,
    /// `github-checks` only: how long a wanted check may take to appear at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appear_timeout_s: Option<u64>,
    /// `github-checks` only: a `workflow_dispatch` to start before waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<Dispatch>,
}

/// The commands file's `"executor"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Executor {
    /// Run the commands here, in the sandbox (unless the person turned it off in config).
    #[default]
    Local,
    /// Run nothing here: wait for the repository's CI check runs on the head.
    GithubChecks,
}

impl Executor {
    fn is_local(&self) -> bool {
        *self == Executor::Local
    }

    /// The name the commands file and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Executor::Local => "local",
            Executor::GithubChecks => "github-checks",
        }
    }
}

/// The commands file's `"checks"`: named check runs, or the base branch's required status checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checks {
    /// These check runs, by name.
    Named(Vec<String>),
    /// The base branch's required status checks (`"required"`).
    Required,
}

impl Serialize for Checks {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Checks::Named(names) => names.serialize(serializer),
            Checks::Required => serializer.serialize_str("required"),
        }
    }
}

impl<'de> Deserialize<'de> for Checks {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        checks(&value).map_err(serde::de::Error::custom)
    }
}

/// The commands file's `"dispatch"`: the workflow (file name or id) and its inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dispatch {
    /// The workflow's file name or numeric id.
    pub workflow: String,
    /// The `workflow_dispatch` inputs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
}

/// The commands file's `"history"`: `"shallow"` (the default: the PR head commit fetched at
/// depth 1, enough to build and test its tree) or `"full"` (every ancestor, for suites that run
/// `git describe`, `git log` or changelog checks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum History {
    /// The PR head commit alone, at depth 1.
    #[default]
    Shallow,
    /// Every ancestor of the head.
    Full,
}

impl History {
    /// The default: only the head commit.
    pub fn is_shallow(&self) -> bool {
        *self == History::Shallow
    }

    /// The name the commands file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            History::Shallow => "shallow",
            History::Full => "full",
        }
    }
}

/// The commands file's `"tree"`: `"merge"` (the default: the PR's head merged into the current
/// tip of its base branch, as merging it would leave the branch) or `"head"` (the head commit
/// alone, as the PR's author last saw it). Testing the head alone lets a PR branched before the
/// person hardened a test run the older test, so asking for it widens (design §5.2.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeMode {
    /// The merge of the head into the base branch's tip.
    #[default]
    Merge,
    /// The head commit alone.
    Head,
}

impl TreeMode {
    /// The default: the merge.
    pub fn is_merge(&self) -> bool {
        *self == TreeMode::Merge
    }

    /// The name the commands file and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            TreeMode::Merge => "merge",
            TreeMode::Head => "head",
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_true(value: &bool) -> bool {
    *value
}

fn yes() -> bool {
    true
}

impl CommandsProfile {
    /// A profile of just these commands, every option at its default.
    pub fn of(commands: Vec<CommandSpec>) -> CommandsProfile {
        CommandsProfile {
            setup: Vec::new(),
            commands,
            env_passthrough: Vec::new(),
            timeout_s: None,
            network: NetworkMode::Off,
            read_paths: Vec::new(),
            write_paths: Vec::new(),
            memory_mb: None,
            writable_git: false,
            cache: true,
            history: History::Shallow,
            tree: TreeMode::Merge,
            executor: Executor::Local,
            checks: None,
            appear_timeout_s: None,
            dispatch: None,
        }
    }

    /// The `github-checks` executor's whole wait (`timeout_s`, default 3600).
    pub fn checks_timeout_s(&self) -> u64 {
        self.timeout_s.unwrap_or(DEFAULT_CHECKS_TIMEOUT_S)
    }

    /// The `github-checks` executor's wait for a wanted check to appear (default 600).
    pub fn appear_timeout_s(&self) -> u64 {
        self.appear_timeout_s.unwrap_or(DEFAULT_APPEAR_TIMEOUT_S)
    }

    /// The timeout of `command` (one of this profile's setup or test commands).
    pub fn timeout_of(&self, command: &CommandSpec) -> u64 {
        command.timeout_s.or(self.timeout_s).unwrap_or(DEFAULT_TIMEOUT_S)
    }

    /// The hash a run records (`environment.commands_sha256`): of the stored form.
    pub fn sha256(&self) -> String {
        super::hash::sha256_hex(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }

    /// What `new` lets the tests do that `self` did not, one phrase each: more network (a new
    /// setup step included: setup reaches the allowlist), a path to read or write, a larger or
    /// no memory cap, the git directory writable, more of the person's environment passed
    /// through. Empty when `new` widens nothing (design §5.6: a
    /// widening is the person's call).
    pub fn widening(&self, new: &CommandsProfile) -> Vec<String> {
        let rank = |mode: NetworkMode| NetworkMode::ALL.iter().position(|m| *m == mode).unwrap_or(0);
        let mut wider = Vec::new();
        if rank(new.network) > rank(self.network) {
            wider.push(format!("network {} instead of {}", new.network.as_str(), self.network.as_str()));
        }
        for path in new.read_paths.iter().filter(|p| !self.read_paths.contains(p) && !self.write_paths.contains(p)) {
            wider.push(format!("reads {path}"));
        }
        for path in new.write_paths.iter().filter(|p| !self.write_paths.contains(p)) {
            wider.push(format!("writes {path}"));
        }
        match (self.memory_mb, new.memory_mb) {
            (Some(old), None) => wider.push(format!("no memory cap (was {old} MB)")),
            (Some(old), Some(mb)) if mb > old => wider.push(format!("memory cap {mb} MB (was {old} MB)")),
            _ => {}
        }
        if new.writable_git && !self.writable_git {
            wider.push("the git directory writable".to_owned());
        }
        for name in new.env_passthrough.iter().filter(|n| !self.env_passthrough.contains(n)) {
            wider.push(format!("passes {name} through"));
        }
        // A setup step reaches the person's allowlist whatever `network` says: a new one is as
        // wide as asking for the allowlist.
        for step in new.setup.iter().filter(|step| !self.setup.iter().any(|old| old.argv == step.argv)) {
            wider.push(format!("runs setup step `{}` with the network allowlist", step.argv.join(" ")));
        }
        if new.tree == TreeMode::Head && self.tree == TreeMode::Merge {
            wider.push("tests the head alone instead of its merge into the base branch".to_owned());
        }
        wider
    }
}

/// Why a commands file was refused; the message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandsError {
    /// The text is not JSON (serde's message).
    #[error("commands JSON is not valid JSON: {0}")]
    Json(String),
    /// Not a non-empty list of non-empty argv arrays (what is wrong).
    #[error("commands JSON must be a non-empty array of non-empty argv arrays (or an object with \"commands\"): {0}")]
    Shape(String),
    #[error(
        "commands file sets an unknown option {0:?}; known: setup, commands, env_passthrough, timeout_s, network, read_paths, write_paths, memory_mb, writable_git, cache, history, tree, executor (and with \"executor\": \"github-checks\": checks, timeout_s, appear_timeout_s, dispatch; per command: argv, timeout_s, env)"
    )]
    /// The object sets an option forgeloop does not know (its name).
    UnknownKey(String),
    /// An `env` or `env_passthrough` entry is not a valid variable name.
    #[error("invalid environment variable name {0:?}")]
    EnvName(String),
    #[error(
        "env_passthrough may not pass {0:?}: its name looks like a credential, and test commands never see credentials"
    )]
    /// `env_passthrough` names a credential-looking variable.
    CredentialPassthrough(String),
    /// A `timeout_s` out of range or not a whole number.
    #[error("timeout_s must be a whole number of seconds from 1 to {MAX_TIMEOUT_S}")]
    Timeout,
    /// `read_paths` or `write_paths` (which one) is not a short list of absolute paths.
    #[error("{0} must be a list of at most {MAX_PATHS} absolute paths (starting with /, without NUL or ..)")]
    Paths(&'static str),
    /// `network` is none of the accepted values.
    #[error("\"network\" must be false, \"off\", \"allowlist\", true or \"open\"")]
    Network,
    /// `memory_mb` out of range or not a whole number.
    #[error("memory_mb must be a whole number of megabytes from 16 to {MAX_MEMORY_MB}")]
    Memory,
    #[error(
        "\"history\" must be \"shallow\" (the default: only the PR head commit) or \"full\" (all of its history, for git describe or changelog checks)"
    )]
    /// `history` is neither `shallow` nor `full`.
    History,
    #[error(
        "\"tree\" must be \"merge\" (the default: the PR's head merged into the tip of its base branch) or \"head\" (the head alone)"
    )]
    /// `tree` is neither `merge` nor `head`.
    Tree,
    #[error(
        "\"executor\" must be \"local\" (the default: run the commands here) or \"github-checks\" (read the repository's own CI)"
    )]
    /// `executor` is neither `local` nor `github-checks`.
    Executor,
    /// A `github-checks` profile sets an option only a local run reads (its name).
    #[error("{0:?} applies to the local executor only: a \"github-checks\" profile runs nothing here, so remove {0:?}")]
    LocalOnly(String),
    /// A local profile sets an option only `github-checks` reads (its name).
    #[error("{0:?} applies to the github-checks executor only: add \"executor\": \"github-checks\" or remove {0:?}")]
    ChecksOnly(String),
    #[error(
        "\"checks\" must be a non-empty list of at most {MAX_CHECKS} unique, non-empty check names, or \"required\" (the base branch's required status checks): {0}"
    )]
    /// `checks` is neither a list of unique names nor `"required"`.
    Checks(String),
    #[error(
        "\"dispatch\" must be {{\"workflow\": \"<file name or id>\", \"inputs\": {{\"<name>\": \"<string>\"}}}}: {0}"
    )]
    /// `dispatch` is not a workflow with string inputs.
    Dispatch(String),
    #[error(
        "the sandbox can only be turned off by the person, in config.toml ([runner] sandbox = \"off\"), never by a commands file"
    )]
    /// The file tries to turn the sandbox off, which only the person's config may do.
    SandboxOff,
    #[error(
        "{place} holds a literal the redactor masks as [REDACTED:{kind}]: a cycle's state is stored redacted, so a later run would get different commands. Refused: never write a secret in a commands file. If the test needs it, export it before starting forgeloop under a name without TOKEN, SECRET, PASSWORD, KEY, AUTH or the like, and list that name in \"env_passthrough\"; the command then reads it from its environment (it reaches the PR's code, so never pass a credential of yours)"
    )]
    /// A value the redactor would mask as a secret: stored redacted, a later run would differ.
    SecretLiteral {
        /// Where in the file, in words (`command 2, argument 3`).
        place: String,
        /// The redactor's mask kind for it.
        kind: String,
    },
    #[error(
        "{place} names a local path the redactor masks ({kind}): a cycle's state is stored redacted, so a later run would get different commands. Refused: name the program (it is looked up on PATH) or use a path outside your home"
    )]
    /// A local path the redactor would mask (the home, a checkout): stored redacted, a later run would differ.
    LocalPath {
        /// Where in the file, in words (`command 2, argument 3`).
        place: String,
        /// The redactor's mask kind for it (`home-dir`, `local-path`, `checkout-dir`).
        kind: String,
    },
}

/// Whether a redaction kind is a local path's (the redactor's `home-dir`, `local-path` and
/// `checkout-dir`) rather than a secret's.
pub fn is_local_path_kind(kind: &str) -> bool {
    matches!(kind, "home-dir" | "local-path" | "checkout-dir")
}

impl CommandsError {
    /// The refusal for a value at `place` that redaction would change, by the mask's kind.
    pub fn not_storable(place: String, kind: String) -> CommandsError {
        if is_local_path_kind(&kind) {
            CommandsError::LocalPath { place, kind }
        } else {
            CommandsError::SecretLiteral { place, kind }
        }
    }
}

/// Parses a commands file's text (either format) and checks every limit.
pub fn parse_commands(text: &str) -> Result<CommandsProfile, CommandsError> {
    let value: Value = serde_json::from_str(text).map_err(|e| CommandsError::Json(e.to_string()))?;
    commands_from_value(&value)
}

/// Reads an already-parsed commands value (either format) and checks every limit.
pub fn commands_from_value(value: &Value) -> Result<CommandsProfile, CommandsError> {
    match value {
        Value::Array(items) => Ok(CommandsProfile::of(parse_list(items)?)),
        Value::Object(map) => {
            for key in map.keys() {
                match key.as_str() {
                    "commands" | "setup" | "env_passthrough" | "timeout_s" | "network" | "read_paths"
                    | "write_paths" | "memory_mb" | "history" | "tree" | "writable_git" | "cache" | "executor"
                    | "checks" | "appear_timeout_s" | "dispatch" => {}
                    "sandbox" => return Err(CommandsError::SandboxOff),
                    _ => return Err(CommandsError::UnknownKey(key.clone())),
                }
            }
            let executor = match map.get("executor") {
                None => Executor::Local,
                Some(Value::String(word)) if word == "local" => Executor::Local,
                Some(Value::String(word)) if word == "github-checks" => Executor::GithubChecks,
                Some(_) => return Err(CommandsError::Executor),
            };
            if executor == Executor::GithubChecks {
                return github_checks_profile(map);
            }
            if let Some(key) = CHECKS_ONLY_KEYS.into_iter().find(|key| map.contains_key(*key)) {
                return Err(CommandsError::ChecksOnly(key.to_owned()));
            }
            let Some(Value::Array(items)) = map.get("commands") else {
                return Err(CommandsError::Shape("\"commands\" must be an array".into()));
            };
            let env_passthrough = match map.get("env_passthrough") {
                None => Vec::new(),
                Some(Value::Array(names)) => names.iter().map(passthrough_name).collect::<Result<_, _>>()?,
                Some(_) => return Err(CommandsError::Shape("\"env_passthrough\" must be an array of names".into())),
            };
            let network = match map.get("network") {
                None => NetworkMode::Off,
                Some(value) => NetworkMode::from_json(value).map_err(|_| CommandsError::Network)?,
            };
            let flag = |key: &str, default: bool| match map.get(key) {
                None => Ok(default),
                Some(Value::Bool(on)) => Ok(*on),
                Some(_) => Err(CommandsError::Shape(format!("\"{key}\" must be true or false"))),
            };
            let writable_git = flag("writable_git", false)?;
            let cache = flag("cache", true)?;
            let setup = match map.get("setup") {
                None => Vec::new(),
                Some(Value::Array(items)) => parse_list(items)?,
                Some(_) => return Err(CommandsError::Shape("\"setup\" must be an array of commands".into())),
            };
            let memory_mb = match map.get("memory_mb") {
                None => None,
                Some(value) => match value.as_u64() {
                    Some(n) if (16..=MAX_MEMORY_MB).contains(&n) => Some(n),
                    _ => return Err(CommandsError::Memory),
                },
            };
            let history = match map.get("history") {
                None => History::Shallow,
                Some(Value::String(word)) if word == "shallow" => History::Shallow,
                Some(Value::String(word)) if word == "full" => History::Full,
                Some(_) => return Err(CommandsError::History),
            };
            let tree = match map.get("tree") {
                None => TreeMode::Merge,
                Some(Value::String(word)) if word == "merge" => TreeMode::Merge,
                Some(Value::String(word)) if word == "head" => TreeMode::Head,
                Some(_) => return Err(CommandsError::Tree),
            };
            Ok(CommandsProfile {
                setup,
                commands: parse_list(items)?,
                env_passthrough,
                timeout_s: map.get("timeout_s").map(timeout).transpose()?,
                network,
                read_paths: paths(map.get("read_paths"), "read_paths")?,
                write_paths: paths(map.get("write_paths"), "write_paths")?,
                memory_mb,
                writable_git,
                cache,
                history,
                tree,
                executor: Executor::Local,
                checks: None,
                appear_timeout_s: None,
                dispatch: None,
            })
        }
        _ => Err(CommandsError::Shape("expected an array or an object".into())),
    }
}

/// A `"executor": "github-checks"` profile: `checks` required, no commands, no local-only keys.
fn github_checks_profile(map: &serde_json::Map<String, Value>) -> Result<CommandsProfile, CommandsError> {
    if let Some(key) = LOCAL_ONLY_KEYS.into_iter().find(|key| map.contains_key(*key)) {
        return Err(CommandsError::LocalOnly(key.to_owned()));
    }
    match map.get("commands") {
        None => {}
        Some(Value::Array(items)) if items.is_empty() => {}
        Some(_) => return Err(CommandsError::LocalOnly("commands".to_owned())),
    }
    let Some(wanted) = map.get("checks") else {
        return Err(CommandsError::Checks("a github-checks profile must say which checks decide".into()));
    };
    let dispatch = match map.get("dispatch") {
        None => None,
        Some(value) => Some(dispatch(value)?),
    };
    Ok(CommandsProfile {
        executor: Executor::GithubChecks,
        checks: Some(checks(wanted)?),
        timeout_s: map.get("timeout_s").map(timeout).transpose()?,
        appear_timeout_s: map.get("appear_timeout_s").map(timeout).transpose()?,
        dispatch,
        ..CommandsProfile::of(Vec::new())
    })
}

fn checks(value: &Value) -> Result<Checks, CommandsError> {
    let names = match value {
        Value::String(word) if word == "required" => return Ok(Checks::Required),
        Value::String(word) => {
            return Err(CommandsError::Checks(format!("the only word allowed is \"required\", not {word:?}")));
        }
        Value::Array(names) => names,
        _ => return Err(CommandsError::Checks("expected a list or \"required\"".into())),
    };
    if names.is_empty() || names.len() > MAX_CHECKS {
        return Err(CommandsError::Checks(format!("the list has {} names", names.len())));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let Value::String(name) = name else {
            return Err(CommandsError::Checks(format!("entry {} is not a string", i + 1)));
        };
        if name.trim().is_empty() || name.contains('\0') {
            return Err(CommandsError::Checks(format!("entry {} is empty", i + 1)));
        }
        if !seen.insert(name.as_str()) {
            return Err(CommandsError::Checks(format!("{name:?} is listed twice")));
        }
        out.push(name.clone());
    }
    Ok(Checks::Named(out))
}

fn dispatch(value: &Value) -> Result<Dispatch, CommandsError> {
    let Value::Object(map) = value else { return Err(CommandsError::Dispatch("not an object".into())) };
    if let Some(key) = map.keys().find(|key| !matches!(key.as_str(), "workflow" | "inputs")) {
        return Err(CommandsError::Dispatch(format!("unknown key {key:?}")));
    }
    let workflow = match map.get("workflow") {
        Some(Value::String(w)) if !w.trim().is_empty() && !w.contains('\0') => w.clone(),
        _ => return Err(CommandsError::Dispatch("\"workflow\" must be a non-empty string".into())),
    };
    let inputs = match map.get("inputs") {
        None => BTreeMap::new(),
        Some(Value::Object(inputs)) => inputs
            .iter()
            .map(|(name, value)| match value {
                Value::String(v) if !name.is_empty() && !v.contains('\0') => Ok((name.clone(), v.clone())),
                _ => Err(CommandsError::Dispatch(format!("input {name:?} must have a string value"))),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(CommandsError::Dispatch("\"inputs\" must be an object of strings".into())),
    };
    Ok(Dispatch { workflow, inputs })
}

fn parse_list(items: &[Value]) -> Result<Vec<CommandSpec>, CommandsError> {
    if items.is_empty() {
        return Err(CommandsError::Shape("the list of commands is empty".into()));
    }
    if items.len() > MAX_COMMANDS {
        return Err(CommandsError::Shape(format!("more than {MAX_COMMANDS} commands")));
    }
    items.iter().enumerate().map(|(i, item)| parse_command(i, item)).collect()
}

fn parse_command(index: usize, item: &Value) -> Result<CommandSpec, CommandsError> {
    match item {
        Value::Array(parts) => Ok(CommandSpec { argv: argv(index, parts)?, timeout_s: None, env: BTreeMap::new() }),
        Value::Object(map) => {
            for key in map.keys() {
                if !matches!(key.as_str(), "argv" | "timeout_s" | "env") {
                    return Err(CommandsError::UnknownKey(key.clone()));
                }
            }
            let Some(Value::Array(parts)) = map.get("argv") else {
                return Err(CommandsError::Shape(format!("command {} has no \"argv\" array", index + 1)));
            };
            let env = match map.get("env") {
                None => BTreeMap::new(),
                Some(Value::Object(vars)) => vars
                    .iter()
                    .map(|(name, value)| match value {
                        Value::String(v) if !v.contains('\0') => Ok((env_name(name)?, v.clone())),
                        _ => Err(CommandsError::Shape(format!("env value of {name:?} must be a string without NUL"))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(CommandsError::Shape("\"env\" must be an object of strings".into())),
            };
            Ok(CommandSpec {
                argv: argv(index, parts)?,
                timeout_s: map.get("timeout_s").map(timeout).transpose()?,
                env,
            })
        }
        _ => Err(CommandsError::Shape(format!("command {} is not an argv array", index + 1))),
    }
}

fn argv(index: usize, parts: &[Value]) -> Result<Vec<String>, CommandsError> {
    if parts.is_empty() || parts.len() > MAX_ARGS {
        return Err(CommandsError::Shape(format!("command {} has an empty or oversized argv", index + 1)));
    }
    parts
        .iter()
        .map(|part| match part {
            Value::String(s) if !s.is_empty() && !s.contains('\0') => Ok(s.clone()),
            _ => Err(CommandsError::Shape(format!(
                "command {} has an argument that is not a non-empty string",
                index + 1
            ))),
        })
        .collect()
}

/// Absolute, NUL-free, without `..` (so what is checked is what is mounted).
fn paths(value: Option<&Value>, what: &'static str) -> Result<Vec<String>, CommandsError> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let Value::Array(items) = value else { return Err(CommandsError::Paths(what)) };
    if items.len() > MAX_PATHS {
        return Err(CommandsError::Paths(what));
    }
    items
        .iter()
        .map(|item| match item {
            Value::String(p) if p.starts_with('/') && !p.contains('\0') && !p.split('/').any(|part| part == "..") => {
                Ok(p.clone())
            }
            _ => Err(CommandsError::Paths(what)),
        })
        .collect()
}

fn timeout(value: &Value) -> Result<u64, CommandsError> {
    match value.as_u64() {
        Some(n) if (1..=MAX_TIMEOUT_S).contains(&n) => Ok(n),
        _ => Err(CommandsError::Timeout),
    }
}

fn env_name(name: &str) -> Result<String, CommandsError> {
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if valid { Ok(name.to_owned()) } else { Err(CommandsError::EnvName(name.to_owned())) }
}

fn passthrough_name(value: &Value) -> Result<String, CommandsError> {
    let Value::String(name) = value else {
        return Err(CommandsError::Shape("\"env_passthrough\" must be an array of names".into()));
    };
    let name = env_name(name)?;
    if looks_like_credential(&name) {
        return Err(CommandsError::CredentialPassthrough(name));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_array_format() {
        let profile = parse_commands(r#"[["pytest", "-q"], ["python3", "-m", "compileall", "src"]]"#).unwrap();
        assert_eq!(profile.commands.len(), 2);
        assert_eq!(profile.commands[0].argv, ["pytest", "-q"]);
        assert_eq!(profile.timeout_of(&profile.commands[0]), DEFAULT_TIMEOUT_S);
        // Globs and metacharacters are literal: there is no shell.
        let glob = parse_commands(r#"[["bun","test","tests/*.test.ts"],["echo","$HOME;rm -rf /"]]"#).unwrap();
        assert_eq!(glob.commands[1].argv[1], "$HOME;rm -rf /");
        // Whitespace-only strings stay allowed, as in the reference tool.
        assert!(parse_commands(r#"[[" "]]"#).is_ok());
    }

    #[test]
    fn object_format_with_options() {
        let text = r#"{"commands": [["cargo", "test"], {"argv": ["npm", "test"], "timeout_s": 60, "env": {"NODE_ENV": "test"}}],
                        "env_passthrough": ["NPM_CONFIG_REGISTRY"], "timeout_s": 300}"#;
        let profile = parse_commands(text).unwrap();
        assert_eq!(profile.timeout_of(&profile.commands[0]), 300);
        assert_eq!(profile.timeout_of(&profile.commands[1]), 60);
        assert_eq!(profile.commands[1].env["NODE_ENV"], "test");
        assert_eq!(profile.env_passthrough, ["NPM_CONFIG_REGISTRY"]);
        // The stored form reads back identically, so a rerun repeats the same commands.
        let stored = serde_json::to_value(&profile).unwrap();
        assert_eq!(commands_from_value(&stored).unwrap(), profile);
    }

    #[test]
    fn malformed_files_are_refused() {
        for bad in [
            "",
            "{",
            "[]",
            "[[]]",
            "[[\"\"]]",
            "[[1]]",
            "[[null]]",
            "[\"pytest -q\"]",
            "\"pytest -q\"",
            "[[\"a\\u0000b\"]]",
            "{\"commands\": []}",
            "{\"cmds\": [[\"a\"]]}",
            "{\"commands\": [[\"a\"]], \"shell\": true}",
            "{\"commands\": [{\"argv\": [\"a\"], \"cwd\": \"/\"}]}",
            "{\"commands\": [[\"a\"]], \"timeout_s\": 0}",
            "{\"commands\": [[\"a\"]], \"timeout_s\": -5}",
            "{\"commands\": [[\"a\"]], \"timeout_s\": 1.5}",
            "{\"commands\": [{\"argv\": [\"a\"], \"env\": {\"A=B\": \"x\"}}]}",
            "{\"commands\": [{\"argv\": [\"a\"], \"env\": {\"A\": 1}}]}",
        ] {
            assert!(parse_commands(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn sandbox_options_widen_only_what_an_agent_may() {
        let text = r#"{"commands": [["a"]], "network": true, "read_paths": ["/opt/data"], "write_paths": ["/srv/out"], "memory_mb": 512}"#;
        let profile = parse_commands(text).unwrap();
        assert_eq!(profile.network, NetworkMode::Open);
        for (word, mode) in [
            ("false", NetworkMode::Off),
            (r#""off""#, NetworkMode::Off),
            (r#""allowlist""#, NetworkMode::Allowlist),
            (r#""open""#, NetworkMode::Open),
        ] {
            let text = format!(r#"{{"commands": [["a"]], "network": {word}}}"#);
            assert_eq!(parse_commands(&text).unwrap().network, mode, "{word}");
        }
        assert_eq!(profile.read_paths, ["/opt/data"]);
        assert_eq!(profile.write_paths, ["/srv/out"]);
        assert_eq!(profile.memory_mb, Some(512));
        let stored = serde_json::to_value(&profile).unwrap();
        assert_eq!(commands_from_value(&stored).unwrap(), profile);
        // Defaults stay out of the stored form, so existing states keep their exact commands.
        let plain = serde_json::to_value(parse_commands(r#"[["a"]]"#).unwrap()).unwrap();
        assert_eq!(plain, serde_json::json!({"commands": [{"argv": ["a"]}]}));
        for bad in [
            r#"{"commands": [["a"]], "network": "yes"}"#,
            r#"{"commands": [["a"]], "read_paths": ["relative"]}"#,
            r#"{"commands": [["a"]], "read_paths": "/etc"}"#,
            r#"{"commands": [["a"]], "write_paths": ["/srv/../root"]}"#,
            r#"{"commands": [["a"]], "memory_mb": 1}"#,
        ] {
            assert!(parse_commands(bad).is_err(), "{bad:?} should be refused");
        }
        let off = parse_commands(r#"{"commands": [["a"]], "sandbox": "off"}"#).unwrap_err();
        assert_eq!(off, CommandsError::SandboxOff);
    }

    #[test]
    fn history_is_shallow_unless_the_profile_asks_for_full() {
        assert_eq!(parse_commands(r#"[["a"]]"#).unwrap().history, History::Shallow);
        let full = parse_commands(r#"{"commands": [["a"]], "history": "full"}"#).unwrap();
        assert_eq!(full.history, History::Full);
        let stored = serde_json::to_value(&full).unwrap();
        assert_eq!(stored["history"], "full");
        assert_eq!(commands_from_value(&stored).unwrap(), full);
        let shallow = parse_commands(r#"{"commands": [["a"]], "history": "shallow"}"#).unwrap();
        assert_eq!(serde_json::to_value(&shallow).unwrap(), serde_json::json!({"commands": [{"argv": ["a"]}]}));
        for bad in [r#""deep""#, r#""Full""#, "1", "true", "null"] {
            let text = format!(r#"{{"commands": [["a"]], "history": {bad}}}"#);
            let err = parse_commands(&text).unwrap_err();
            assert_eq!(err, CommandsError::History, "{text}");
            assert!(err.to_string().contains("\"full\""), "{err}");
        }
    }

    #[test]
    fn credentials_cannot_be_passed_through() {
        let err = parse_commands(r#"{"commands": [["a"]], "env_passthrough": ["GH_TOKEN"]}"#).unwrap_err();
        assert_eq!(err, CommandsError::CredentialPassthrough("GH_TOKEN".into()));
    }

    #[test]
    fn a_github_checks_profile_names_its_checks() {
        let text = r#"{"executor": "github-checks", "checks": ["test", "lint"]}"#;
        let profile = parse_commands(text).unwrap();
        assert_eq!(profile.executor, Executor::GithubChecks);
        assert!(profile.commands.is_empty());
        assert_eq!(profile.checks, Some(Checks::Named(vec!["test".into(), "lint".into()])));
        assert_eq!(profile.checks_timeout_s(), DEFAULT_CHECKS_TIMEOUT_S);
        assert_eq!(profile.appear_timeout_s(), DEFAULT_APPEAR_TIMEOUT_S);
        assert_eq!(profile.dispatch, None);
        let stored = serde_json::to_value(&profile).unwrap();
        assert_eq!(
            stored,
            serde_json::json!({"commands": [], "executor": "github-checks", "checks": ["test", "lint"]})
        );
        assert_eq!(commands_from_value(&stored).unwrap(), profile);

        let full = r#"{"executor": "github-checks", "commands": [], "checks": "required", "timeout_s": 120,
                       "appear_timeout_s": 30, "dispatch": {"workflow": "forgeloop.yml", "inputs": {"suite": "fast"}}}"#;
        let profile = parse_commands(full).unwrap();
        assert_eq!(profile.checks, Some(Checks::Required));
        assert_eq!((profile.checks_timeout_s(), profile.appear_timeout_s()), (120, 30));
        let dispatch = profile.dispatch.clone().unwrap();
        assert_eq!((dispatch.workflow.as_str(), dispatch.inputs["suite"].as_str()), ("forgeloop.yml", "fast"));
        let stored = serde_json::to_value(&profile).unwrap();
        assert_eq!(stored["checks"], "required");
        assert_eq!(commands_from_value(&stored).unwrap(), profile);
        // "local" is the default, spelled out or not.
        let local = parse_commands(r#"{"executor": "local", "commands": [["a"]]}"#).unwrap();
        assert_eq!(local, parse_commands(r#"[["a"]]"#).unwrap());
    }

    #[test]
    fn a_github_checks_profile_refuses_what_it_cannot_honour() {
        let err = |text: &str| parse_commands(text).unwrap_err();
        let checks = |rest: &str| format!(r#"{{"executor": "github-checks", "checks": ["test"]{rest}}}"#);
        assert!(matches!(err(r#"{"executor": "github-checks"}"#), CommandsError::Checks(_)));
        for bad in [r#"[]"#, r#"[""]"#, r#"[" "]"#, r#"["a", "a"]"#, r#"[1]"#, r#""all""#, "true", "null"] {
            let text = format!(r#"{{"executor": "github-checks", "checks": {bad}}}"#);
            assert!(matches!(err(&text), CommandsError::Checks(_)), "{text}");
        }
        for (key, value) in [
            ("network", "true"),
            ("read_paths", r#"["/opt"]"#),
            ("write_paths", r#"["/srv"]"#),
            ("memory_mb", "512"),
            ("env_passthrough", r#"["CI"]"#),
            ("history", r#""full""#),
            ("commands", r#"[["cargo", "test"]]"#),
        ] {
            let e = err(&checks(&format!(r#", "{key}": {value}"#)));
            assert_eq!(e, CommandsError::LocalOnly(key.to_owned()));
            assert!(e.to_string().contains(key), "{e}");
        }
        for bad in [
            r#""forgeloop.yml""#,
            r#"{}"#,
            r#"{"workflow": ""}"#,
            r#"{"workflow": "f.yml", "ref": "main"}"#,
            r#"{"workflow": "f.yml", "inputs": {"a": 1}}"#,
            r#"{"workflow": "f.yml", "inputs": ["a"]}"#,
        ] {
            assert!(matches!(err(&checks(&format!(r#", "dispatch": {bad}"#))), CommandsError::Dispatch(_)), "{bad}");
        }
        assert_eq!(err(&checks(r#", "appear_timeout_s": 0"#)), CommandsError::Timeout);
        assert_eq!(err(&checks(r#", "timeout_s": "1h""#)), CommandsError::Timeout);
        assert_eq!(err(r#"{"executor": "ci", "commands": [["a"]]}"#), CommandsError::Executor);
        assert_eq!(err(r#"{"executor": 1, "commands": [["a"]]}"#), CommandsError::Executor);
    }

    #[test]
    fn a_local_profile_refuses_the_checks_keys() {
        for (key, value) in
            [("checks", r#"["test"]"#), ("appear_timeout_s", "60"), ("dispatch", r#"{"workflow": "f.yml"}"#)]
        {
            for executor in ["", r#""executor": "local", "#] {
                let text = format!(r#"{{{executor}"commands": [["a"]], "{key}": {value}}}"#);
                let e = parse_commands(&text).unwrap_err();
                assert_eq!(e, CommandsError::ChecksOnly(key.to_owned()), "{text}");
                assert!(e.to_string().contains("github-checks"), "{e}");
            }
        }
    }

    #[test]
    fn a_change_widens_the_sandbox_only_where_it_lets_the_tests_do_more() {
        let old = parse_commands(
            r#"{"commands": [["make", "test"]], "read_paths": ["/opt/a"], "write_paths": ["/srv/w"], "memory_mb": 512, "env_passthrough": ["LANG"]}"#,
        )
        .unwrap();
        let same_or_narrower = parse_commands(
            r#"{"commands": [["make", "check"]], "read_paths": ["/srv/w"], "memory_mb": 256, "env_passthrough": ["LANG"], "timeout_s": 9000}"#,
        )
        .unwrap();
        assert_eq!(old.widening(&same_or_narrower), Vec::<String>::new());
        let wider = parse_commands(
            r#"{"commands": [["make", "test"]], "setup": [["make", "deps"]], "network": "allowlist", "read_paths": ["/opt/a", "/opt/b"], "write_paths": ["/srv/w", "/srv/x"], "writable_git": true, "env_passthrough": ["LANG", "DATABASE_URL"]}"#,
        )
        .unwrap();
        assert_eq!(
            old.widening(&wider),
            [
                "network allowlist instead of off",
                "reads /opt/b",
                "writes /srv/x",
                "no memory cap (was 512 MB)",
                "the git directory writable",
                "passes DATABASE_URL through",
                "runs setup step `make deps` with the network allowlist",
            ]
        );
        // The same setup step again widens nothing.
        assert_eq!(wider.widening(&wider), Vec::<String>::new());
        let open = parse_commands(r#"{"commands": [["make", "test"]], "network": "open", "memory_mb": 1024}"#).unwrap();
        let allow =
            parse_commands(r#"{"commands": [["make", "test"]], "network": "allowlist", "memory_mb": 512}"#).unwrap();
        assert_eq!(allow.widening(&open), ["network open instead of allowlist", "memory cap 1024 MB (was 512 MB)"]);
        assert!(open.widening(&allow).is_empty());
        assert_ne!(old.sha256(), wider.sha256());
        assert_eq!(old.sha256(), old.clone().sha256());
    }

    #[test]
    fn the_merge_is_tested_unless_the_profile_asks_for_the_head_and_asking_widens() {
        let merge = parse_commands(r#"[["a"]]"#).unwrap();
        assert_eq!(merge.tree, TreeMode::Merge);
        // The default is not written, so every stored profile keeps its hash.
        assert_eq!(serde_json::to_value(&merge).unwrap(), serde_json::json!({"commands": [{"argv": ["a"]}]}));
        let head = parse_commands(r#"{"commands": [["a"]], "tree": "head"}"#).unwrap();
        assert_eq!(head.tree, TreeMode::Head);
        let stored = serde_json::to_value(&head).unwrap();
        assert_eq!(stored["tree"], "head");
        assert_eq!(commands_from_value(&stored).unwrap(), head);
        assert_eq!(parse_commands(r#"{"commands": [["a"]], "tree": "merge"}"#).unwrap(), merge);
        for bad in [r#""Head""#, r#""base""#, "1", "true", "null"] {
            let text = format!(r#"{{"commands": [["a"]], "tree": {bad}}}"#);
            assert_eq!(parse_commands(&text).unwrap_err(), CommandsError::Tree, "{text}");
        }
        let checks = parse_commands(r#"{"executor": "github-checks", "checks": ["ci"], "tree": "head"}"#).unwrap_err();
        assert_eq!(checks, CommandsError::LocalOnly("tree".into()));
        assert_eq!(merge.widening(&head), ["tests the head alone instead of its merge into the base branch"]);
        assert!(head.widening(&merge).is_empty());
    }
}
