//! The instructions the forgeloop process hands to the sandbox helper for one command: the
//! tier, the view, the limits and the argv. Serialized as JSON into a sealed memory file whose
//! descriptor the helper inherits ([`super::spec_fd`]): nothing of it shows in the helper's
//! command line, which every local account can read in `/proc`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::view::View;
use crate::domain::egress::NetworkMode;

/// Inside a first-tier run's own network namespace, where `"network": "allowlist"` commands
/// find the egress proxy (a socket forgeloop binds there; nothing else of the host's network).
pub const INSIDE_PROXY_PORT: u16 = 3128;

/// The uid and gid of a first-tier command inside its namespace.
pub(super) const INSIDE_ID: u32 = 1000;

/// Which defences are built (design §5.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// User, mount, PID, network, IPC and UTS namespaces, plus Landlock where the kernel has it.
    Namespaces,
    /// Where user namespaces are refused: Landlock, a seccomp filter, and the helper as child
    /// subreaper killing every descendant. Never for a forgeloop started by root.
    Landlock,
}

impl Tier {
    /// The tier's name in reports and the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Namespaces => "namespaces",
            Tier::Landlock => "landlock",
        }
    }
}

/// Which part of a run a command belongs to (design §5.2.3): the profile's `setup` commands
/// (they may get the person's allowlisted network to install dependencies) or its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The profile's `setup` commands.
    Setup,
    /// The test commands proper.
    Test,
}

impl Phase {
    /// The phase's name in reports and proxy-port keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Test => "test",
        }
    }
}

/// An account of the host: who PR code runs as when forgeloop itself is root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    /// The account's user id.
    pub uid: u32,
    /// The account's primary group id.
    pub gid: u32,
}

/// The directories of one run (see [`super::rundir`]), all beneath a directory only the
/// person (and, when forgeloop is root, the run's account) can enter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunPaths {
    /// The checkout's working tree: read-write, and the working directory.
    pub checkout: PathBuf,
    /// First tier: the directory on the host mounted at `checkout`, which is then a path only
    /// the sandbox has (the same for every run of a repository, so builds see one source path
    /// whichever layer they run on); `None`: `checkout` itself.
    #[serde(default)]
    pub checkout_source: Option<PathBuf>,
    /// The checkout's git directory (outside the working tree): read-only unless the profile
    /// asks for `writable_git`.
    pub gitdir: Option<PathBuf>,
    /// Private, empty per run: `/tmp` and `HOME` (first tier), or `TMPDIR` and `HOME` (second).
    pub tmp: PathBuf,
    /// Private, empty per run: the command's `HOME`.
    pub home: PathBuf,
    /// First tier: the empty directory the new root is assembled in.
    pub root: PathBuf,
    /// The repository's warm cache (read-write), when the run uses it.
    #[serde(default)]
    pub cache: Option<PathBuf>,
    /// The variables that point the ecosystems' caches into it.
    #[serde(default)]
    pub cache_env: BTreeMap<String, String>,
    /// First tier: what is mounted at `cache` (which then exists only inside the sandbox);
    /// `None` binds `cache` itself.
    #[serde(default)]
    pub cache_mount: Option<CacheMount>,
    /// Second tier, `allowlist`: the port of the run's egress proxy on the host's loopback, per
    /// phase (`setup`, `test`).
    #[serde(default)]
    pub proxy_ports: BTreeMap<String, u16>,
}

/// What the first tier mounts at a run's cache path (design §5.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheMount {
    /// One directory, read-write (warming the base layer, or a layer with no base under it).
    Bind {
        /// The directory.
        source: PathBuf,
    },
    /// The base layer read-only under the cycle's writable layer: what the run writes lands in
    /// `upper` alone.
    Overlay {
        /// The base layer.
        lower: PathBuf,
        /// The cycle's layer.
        upper: PathBuf,
        /// overlayfs's own scratch directory, beside `upper` on the same file system.
        work: PathBuf,
    },
}

/// The version a spec is written for: the helper refuses a spec of another build's version
/// (a `forgeloop-sandbox` left beside a newer `forgeloop` must not silently ignore a defence
/// the newer spec asks for).
pub const SPEC_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything the sandbox helper needs to build the sandbox for one command and run it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// [`SPEC_VERSION`] of the forgeloop that wrote it.
    #[serde(default)]
    pub version: String,
    /// Which defences to build.
    pub tier: Tier,
    /// What the command may see of the file system.
    pub view: View,
    /// The run's own directories.
    pub run: RunPaths,
    /// What this command may reach (its phase's mode).
    pub network: NetworkMode,
    /// `allowlist` in the second tier: the host loopback port of the run's egress proxy, the
    /// only TCP port the command may connect to.
    #[serde(default)]
    pub proxy_port: Option<u16>,
    /// The profile's `writable_git`: the git directory is writable too.
    #[serde(default)]
    pub writable_git: bool,
    /// First tier, forgeloop started by root: the account the run's uid 1000 maps to.
    #[serde(default)]
    pub run_as: Option<Account>,
    /// The bound on processes and threads in the run.
    pub max_processes: u64,
    /// The profile's memory bound in MiB, if it sets one.
    pub memory_mb: Option<u64>,
    /// The probe: report what could be built on stdout, then run the command.
    #[serde(default)]
    pub probe: bool,
    /// The command to run, `argv[0]` first.
    pub argv: Vec<String>,
    /// The command's whole environment (the helper itself runs with none).
    pub env: BTreeMap<String, String>,
    /// How the probe bounded processes (`cgroup`, `rlimit`, `none`), as the report will say:
    /// a command for which the helper cannot set up the same does not run.
    #[serde(default)]
    pub expect_process_limit: Option<String>,
}

/// What the helper could build, as it reports it when probing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Built {
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: u32,
    /// How processes are bounded: `cgroup` (pids controller), `rlimit`, or `none`.
    pub process_limit: String,
    /// How memory is capped when asked: `cgroup`, `rlimit` (data segment per process), or `none`.
    pub memory_limit: String,
}
