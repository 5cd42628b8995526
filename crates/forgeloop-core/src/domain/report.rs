//! The test report (design §5.2.7): the reference tool's fields plus what makes a verdict
//! reproducible. Unknown keys survive a rewrite like everywhere else.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::egress::{NetworkEvent, NetworkMode};
use super::integrity::Integrity;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TestStatus {
    #[serde(rename = "TEST_PASSED")]
    Passed,
    #[serde(rename = "TEST_FAILED")]
    Failed,
    /// A `setup` command failed, so the tests did not run. The PR's dependency change can be
    /// at fault: it counts and is handed off like a failed test.
    #[serde(rename = "SETUP_FAILED")]
    SetupFailed,
}

impl TestStatus {
    pub const ALL: [TestStatus; 3] = [TestStatus::Passed, TestStatus::Failed, TestStatus::SetupFailed];

    pub fn as_str(self) -> &'static str {
        match self {
            TestStatus::Passed => "TEST_PASSED",
            TestStatus::Failed => "TEST_FAILED",
            TestStatus::SetupFailed => "SETUP_FAILED",
        }
    }

    /// A verdict against the PR: the tests or the setup failed.
    pub fn is_failure(self) -> bool {
        self != TestStatus::Passed
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// One command of a run. `exit_code` is negative when a signal ended the process (as in the
/// reference tool) and null when it timed out or was not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandResult {
    pub argv: Vec<String>,
    pub exit_code: Option<i32>,
    pub duration_seconds: f64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub not_run: bool,
}

impl CommandResult {
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.not_run
    }

    pub fn not_run(argv: Vec<String>) -> Self {
        CommandResult { argv, exit_code: None, duration_seconds: 0.0, timed_out: false, signal: None, not_run: true }
    }
}

/// What produced a verdict, so that a result can be reproduced and trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    pub forgeloop_version: String,
    pub libgit2_version: String,
    pub os: String,
    pub commands_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_sha: Option<String>,
    /// Absent in reports written before the sandbox existed (and by the reference tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxInfo>,
    /// `local` or `github-checks` (design §5.7); absent in reports written before executors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
}

/// Where a `github-checks` run's code ran, in the words the Runs tab and `next` show.
pub const ON_CI_LABEL: &str = "on the repository's CI (nothing ran here)";

/// One check run a `github-checks` run waited for (design §5.7), listed where a local run
/// lists its commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    /// `completed`, or the last status seen when the wait ended before a verdict.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The app that produced it (e.g. `github-actions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
}

/// What was in force for a run, as the report's `environment.sandbox` records it (design §5.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxInfo {
    /// `namespaces`, `landlock`, or `off`.
    pub kind: String,
    /// What the tests could reach: `off`, `allowlist` or `open` (reports before these modes
    /// said `false`/`true`, which read as `off`/`open`).
    pub network: NetworkMode,
    /// What the setup commands could reach, when the profile had some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_network: Option<NetworkMode>,
    /// How many hosts the run reached through its egress proxy (`allowlist`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_hosts: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_limit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_paths: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_paths: Vec<String>,
    /// The checkout's git directory was writable (the profile's `writable_git`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writable_git: bool,
    /// When forgeloop runs as root: the unprivileged account the commands ran as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as: Option<String>,
    /// The repository's warm cache slot the run used (`owner/repo/slot`); `None` ran cold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
}

impl SandboxInfo {
    pub fn off() -> SandboxInfo {
        SandboxInfo {
            kind: "off".into(),
            network: NetworkMode::Open,
            setup_network: None,
            network_hosts: None,
            landlock_abi: None,
            max_processes: None,
            process_limit: None,
            memory_mb: None,
            memory_limit: None,
            read_paths: Vec::new(),
            write_paths: Vec::new(),
            writable_git: false,
            run_as: None,
            cache: None,
        }
    }

    /// The words a person reads: the PR comment's `Sandbox:` line, the Runs tab, `next`.
    pub fn label(&self) -> String {
        match self.kind.as_str() {
            "off" => "unsandboxed".to_owned(),
            kind => {
                let hosts = match self.network_hosts {
                    Some(1) => " (1 host)".to_owned(),
                    Some(n) => format!(" ({n} hosts)"),
                    None => String::new(),
                };
                let net = match (self.network, self.setup_network) {
                    (NetworkMode::Off, Some(NetworkMode::Allowlist)) => {
                        format!("network: allowlist for setup{hosts}, none for the tests")
                    }
                    (NetworkMode::Off, _) => "no network".to_owned(),
                    (NetworkMode::Open, _) => "host network".to_owned(),
                    (NetworkMode::Allowlist, _) => format!("network: allowlist{hosts}"),
                };
                if kind == "landlock" { format!("isolated (Landlock), {net}") } else { format!("isolated, {net}") }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub status: TestStatus,
    pub repository: String,
    pub pull_request: u64,
    pub head_sha: String,
    /// The profile's setup commands (design §5.2.3), before `commands`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<CommandResult>,
    pub commands: Vec<CommandResult>,
    /// The check runs a `github-checks` run waited for; empty for local runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckResult>,
    pub comment_markdown: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_output: Option<String>,
    #[serde(default)]
    pub comment_published: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_repository: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_error: Option<String>,
    /// Where `--keep-checkout` left the checkout; the person removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_checkout: Option<String>,
    /// Set with `kept_checkout`: [`KEPT_CHECKOUT_WARNING`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_checkout_warning: Option<String>,
    /// Every destination the run's commands asked its egress proxy for (design §5.6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_log: Vec<NetworkEvent>,
    /// Destinations asked for beyond the log's bound (10 000): counted, not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub network_log_dropped: u64,
    /// The lockfiles in the tested tree (repository-relative): what a setup could install.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lockfiles: Vec<String>,
    /// What the PR did to its own tests and the person's protected paths (design §5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<Integrity>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a person must know before working in a kept checkout (design §5.2.9).
pub const KEPT_CHECKOUT_WARNING: &str = "the working tree holds files the PR's code wrote while its tests ran: \
     review them before you run anything there (a Makefile, .envrc or editor settings run on their own); \
     its .git was written by forgeloop afterwards (no hooks, no configuration from the PR)";

/// A 40-hex commit id, compared case-insensitively and stored lowercase.
pub fn normalize_sha(sha: &str) -> Option<String> {
    (sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_label_says_what_each_phase_could_reach() {
        let mut info: SandboxInfo =
            serde_json::from_value(serde_json::json!({"kind": "namespaces", "network": false})).unwrap();
        assert_eq!(info.label(), "isolated, no network");
        info.network = NetworkMode::Allowlist;
        info.network_hosts = Some(3);
        assert_eq!(info.label(), "isolated, network: allowlist (3 hosts)");
        info.network = NetworkMode::Off;
        info.setup_network = Some(NetworkMode::Allowlist);
        info.network_hosts = Some(1);
        assert_eq!(info.label(), "isolated, network: allowlist for setup (1 host), none for the tests");
        info.kind = "landlock".into();
        info.network = NetworkMode::Open;
        assert_eq!(info.label(), "isolated (Landlock), host network");
        info.kind = "off".into();
        assert_eq!(info.label(), "unsandboxed");
    }

    #[test]
    fn sha_normalization() {
        assert_eq!(normalize_sha(&"A".repeat(40)), Some("a".repeat(40)));
        assert_eq!(normalize_sha(&"a".repeat(39)), None);
        assert_eq!(normalize_sha(&"g".repeat(40)), None);
    }

    #[test]
    fn a_reference_report_reads_and_keeps_unknown_keys() {
        let text = r#"{"status":"TEST_FAILED","repository":"acme/widget","pull_request":7,"head_sha":"cccccccccccccccccccccccccccccccccccccccc",
            "commands":[{"argv":["pytest","-q"],"exit_code":1,"duration_seconds":0.02}],"comment_markdown":"x","failure_output":"boom",
            "comment_published":true,"custom":{"keep":1}}"#;
        let report: Report = serde_json::from_str(text).unwrap();
        assert_eq!(report.status, TestStatus::Failed);
        assert!(!report.commands[0].passed());
        let back = serde_json::to_value(&report).unwrap();
        assert_eq!(back["custom"]["keep"], 1);
        assert_eq!(back["comment_published"], true);
    }
}
