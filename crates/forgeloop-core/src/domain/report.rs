//! The test report (design §5.2.7): the reference tool's fields plus what makes a verdict
//! reproducible. Unknown keys survive a rewrite like everywhere else.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::commands::TreeMode;
use super::egress::{NetworkEvent, NetworkMode};
use super::integrity::Integrity;

/// A completed run's verdict; the strings are the reference tool's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TestStatus {
    /// Every command exited 0 (or every wanted check succeeded).
    #[serde(rename = "TEST_PASSED")]
    Passed,
    /// A test command failed, timed out or was killed (or a wanted check failed).
    #[serde(rename = "TEST_FAILED")]
    Failed,
    /// A `setup` command failed, so the tests did not run. The PR's dependency change can be
    /// at fault: it counts and is handed off like a failed test.
    #[serde(rename = "SETUP_FAILED")]
    SetupFailed,
    /// The PR's head does not merge cleanly into the tip of its base branch, so nothing ran
    /// (design §5.2.1). The PR's to fix: it counts and is handed off like a failed test.
    #[serde(rename = "MERGE_CONFLICT")]
    MergeConflict,
}

impl TestStatus {
    /// Every verdict, in declaration order.
    pub const ALL: [TestStatus; 4] =
        [TestStatus::Passed, TestStatus::Failed, TestStatus::SetupFailed, TestStatus::MergeConflict];

    /// The string reports, comments and the journal hold.
    pub fn as_str(self) -> &'static str {
        match self {
            TestStatus::Passed => "TEST_PASSED",
            TestStatus::Failed => "TEST_FAILED",
            TestStatus::SetupFailed => "SETUP_FAILED",
            TestStatus::MergeConflict => "MERGE_CONFLICT",
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
    /// The command as run, one argument per element (redacted).
    pub argv: Vec<String>,
    /// Its exit code; negative for the signal that ended it, `None` when it timed out or was not run.
    pub exit_code: Option<i32>,
    /// How long it ran, in seconds (three decimals on disk).
    pub duration_seconds: f64,
    /// It hit its timeout and was killed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// An earlier command failed, so this one never started.
    #[serde(default, skip_serializing_if = "is_false")]
    pub not_run: bool,
}

impl CommandResult {
    /// It ran to the end and exited 0.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.not_run
    }

    /// A command skipped because an earlier one failed.
    pub fn not_run(argv: Vec<String>) -> Self {
        CommandResult { argv, exit_code: None, duration_seconds: 0.0, timed_out: false, signal: None, not_run: true }
    }
}

/// What produced a verdict, so that a result can be reproduced and trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// The forgeloop version that ran the test.
    pub forgeloop_version: String,
    /// The libgit2 that fetched and checked out the head.
    pub libgit2_version: String,
    /// The machine's `os-arch` (e.g. `linux-x86_64`).
    pub os: String,
    /// The hash of the commands that ran ([`super::commands::CommandsProfile::sha256`]).
    pub commands_sha256: String,
    /// The git tree the commands ran on; `None` for a CI run.
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
    /// The check's name as GitHub lists it.
    pub name: String,
    /// `completed`, or the last status seen when the wait ended before a verdict.
    pub status: String,
    /// GitHub's conclusion (`success`, `failure`, …) once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    /// How long the check ran, when GitHub said when it started and ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<f64>,
    /// The check's page on GitHub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The app that produced it (e.g. `github-actions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
}

impl Report {
    /// Why a pass must wait for a person, every reason in one sentence, the weightiest first:
    /// the change (its tests, what it protects, the shortcuts it looks like), then whether the
    /// tests really ran and the test framework reports faithfully (issue 57). `None`: it stands.
    pub fn review_reason(&self) -> Option<String> {
        let mut reasons = Vec::new();
        if let Some(reason) = self.integrity.as_ref().and_then(Integrity::review_reason) {
            reasons.push(reason);
        }
        if !self.held_changed.is_empty() {
            reasons.push(format!("held files changed during the run: {}", self.held_changed.join(", ")));
        }
        if let Some(super::test_results::Tripwire::Tampered(why)) = &self.tripwire {
            reasons.push(format!("the test framework does not report failures faithfully: {why}"));
        }
        if let Some(evidence) = self.evidence.as_ref().filter(|e| !e.stands) {
            reasons.push(evidence.summary.clone());
        }
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }

    /// Whether a pass waits for a person (`NEEDS_REVIEW`).
    pub fn needs_review(&self) -> bool {
        self.integrity.as_ref().is_some_and(Integrity::needs_review)
            || !self.held_changed.is_empty()
            || matches!(self.tripwire, Some(super::test_results::Tripwire::Tampered(_)))
            || self.evidence.as_ref().is_some_and(|e| !e.stands)
    }
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
    /// The Landlock ABI version the kernel offered, when Landlock was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// The cap on processes the commands could start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u64>,
    /// What enforced that cap: `cgroup`, `rlimit`, or `none` (root is exempt from the rlimit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_limit: Option<String>,
    /// The memory cap the profile asked for, in megabytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// What enforced the memory cap: `cgroup` or `rlimit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<String>,
    /// Extra paths the commands could read (the profile's `read_paths`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_paths: Vec<String>,
    /// Extra paths the commands could write (the profile's `write_paths`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_paths: Vec<String>,
    /// The checkout's git directory was writable (the profile's `writable_git`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writable_git: bool,
    /// When forgeloop runs as root: the unprivileged account the commands ran as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as: Option<String>,
    /// The writable cache layer the run used (`owner/repo/pr-N`, or a throw-away
    /// `owner/repo/tmp-…`); `None` ran cold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// Where that cache came from (design §5.6): the base layer under it and the layer's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_layers: Option<CacheLayers>,
}

/// A run's cache, as evidence: what the base branch left (read-only to the run) and how many
/// runs of this one cycle wrote the layer on top before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLayers {
    /// `cycle` (the PR's own, kept between its runs) or `throwaway` (one run, then removed).
    pub layer: String,
    /// `overlay` (the base layer under the run's, by an overlay mount) or `copy` (a copy of
    /// the base layer, where there are no mount namespaces).
    pub stack: String,
    /// Runs of the writable layer before this one (0: it started from the base layer alone).
    pub layer_runs: u32,
    /// The base layer under it; `None` when there was none to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<BaseLayer>,
    /// Why the warming this run tried failed (the run went on with the layer as it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_error: Option<String>,
}

/// Where a run's baseline came from (issue 57).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineUsed {
    /// The base commit whose results it holds (the one the run merged with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `warming` (the base layer's warming ran the commands there) or `on_demand` (this run
    /// ran the base tip for it); absent when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The base's own verdict at that commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TestStatus>,
    /// Why there is none ("the base's run took longer than 90 s", …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub none: Option<String>,
}

/// A pass on a cycle layer earlier iterations wrote, confirmed by this run from the base layer
/// and an empty layer (issue 57): the verdict is this run's, never the layered one's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// Runs of the cycle layer before the layered pass.
    pub layer_runs: u32,
    /// The layered pass's log, kept beside this run's (its file name).
    pub first_log: String,
    /// The layered run's verdict (a pass: only passes are confirmed).
    pub first_status: TestStatus,
    /// How long the layered run took, in seconds.
    pub first_seconds: f64,
}

/// The base layer a run started from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseLayer {
    /// The base branch commit its build ran at.
    pub commit: String,
    /// When it was warmed (RFC 3339).
    pub warmed_at: String,
    /// Commits from that commit to the base tip this run tested against, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<u32>,
    /// This run warmed it (before its own commands), taking `warm_ms`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmed_now: bool,
    /// How long this run's warming took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_ms: Option<u64>,
    /// It was due to be warmed (again), but another run held it, or this run was a one-shot
    /// test (which never warms): this run used it as it was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

impl SandboxInfo {
    /// What an unsandboxed run records: kind `off`, the host's network.
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
            cache_layers: None,
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

/// A run's report, `runs/<iteration>-<sha12>.json` (design §5.2.7): the reference tool's fields first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The verdict.
    pub status: TestStatus,
    /// The base repository (`owner/repo`).
    pub repository: String,
    /// The PR's number.
    pub pull_request: u64,
    /// The PR's head commit (40 hex digits, lowercase): what WebGPT pushed.
    pub head_sha: String,
    /// The tip of the base branch the head was merged into (or, with `"tree": "head"`, judged
    /// against) when it was tested; absent in reports made before forgeloop tested merges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    /// What the commands ran in (design §5.2.1): the merge, the head, the paths held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested: Option<TestedTree>,
    /// The profile's setup commands (design §5.2.3), before `commands`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<CommandResult>,
    /// The test commands, in order, with how each ended.
    pub commands: Vec<CommandResult>,
    /// The check runs a `github-checks` run waited for; empty for local runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckResult>,
    /// The PR comment's text (design §5.5), posted or not.
    pub comment_markdown: String,
    /// The failing command's redacted output tail (design §5.2.6); absent after a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_output: Option<String>,
    /// The comment reached the PR.
    #[serde(default)]
    pub comment_published: bool,
    /// The repository the head branch lives in (the base itself, or a fork); `None` when GitHub no longer knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_repository: Option<String>,
    /// A command hit its timeout.
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    /// The run's full redacted log, relative to the cycle's `NAME.d/` (absolute for a one-shot `test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_path: Option<String>,
    /// What produced the verdict; absent in reference-tool reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// The posted comment's web address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_url: Option<String>,
    /// Why posting the comment failed (redacted), until a retry succeeds.
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
    /// A held run that failed only on held tests the PR changed (issue 57): those tests, both
    /// versions. Its verdict is the person's (`TESTS_DISPUTED`), not a fix to ask for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disputed: Vec<super::dispute::DisputedTest>,
    /// Held paths that changed during the run: read-only in the first tier, only seen changing
    /// in the second (issue 57). A pass with any waits for a person.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_changed: Vec<String>,
    /// This pass confirmed one that ran on a layer earlier iterations of the cycle wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// What the test runners themselves reported, judged against the base's (issue 57); `None`
    /// when nothing was judged (a failing run, a `github-checks` run, an older report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<super::test_results::Evidence>,
    /// The base results the evidence was judged against, or why there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineUsed>,
    /// forgeloop's own test of the test framework, run after a pass (issue 57).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tripwire: Option<super::test_results::Tripwire>,
    /// Keys forgeloop does not know, kept on every rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The tree a run's commands ran in (design §5.2.1), so a verdict says what it judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestedTree {
    /// `merge` (the head merged into the base tip) or `head` (the head alone).
    pub tree: TreeMode,
    /// The base branch's name.
    pub base_ref: String,
    /// The merge commit forgeloop made (first parent the base tip, second the head); absent for
    /// `head`, and for a merge that conflicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_sha: Option<String>,
    /// Which merge ran: `github` (GitHub's own `refs/pull/N/merge`, computed against this base
    /// tip), `git` (`git merge-tree`) or `libgit2` (only where it is provably git's); absent for
    /// `head` and for a merge that conflicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_by: Option<String>,
    /// The commit the commands ran in: the merge, the head, or — when paths were held — a
    /// commit on top of either with those paths as the base tip has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_sha: Option<String>,
    /// Paths restored to the base tip's version before the commands ran (`[protect] mode =
    /// "hold"`): what the person's tests are made of, whatever the PR did to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<String>,
    /// The paths that conflicted (`MERGE_CONFLICT`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
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
