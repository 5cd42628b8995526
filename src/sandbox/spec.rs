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
    /// Paths of files in the checkout (relative to it) the run must not change: the held and
    /// protected paths and what they source or run (issue 57). Read-only inside the sandbox.
    #[serde(default)]
    pub held: Vec<String>,
    /// forgeloop's own files for the run (the test runners' result recorders), read-only
    /// inside the sandbox at this same path.
    #[serde(default)]
    pub support: Option<PathBuf>,
}

/// The names of a held path (relative to the checkout), or `None` when it is not a plain
/// relative path inside it (absolute, empty, `.`, `..`, a NUL byte): such a path is never held,
/// and the helper refuses a spec that names one.
pub(super) fn held_names(path: &str) -> Option<Vec<&str>> {
    let names: Vec<&str> = path.split('/').filter(|name| !name.is_empty()).collect();
    let plain = |name: &&str| *name != "." && *name != ".." && !name.contains('\0');
    (!path.starts_with('/') && !names.is_empty() && names.iter().all(plain)).then_some(names)
}

impl Spec {
    /// Why the run's support directory cannot be shown read-only, if it cannot: it must be an
    /// absolute path apart from every tree the run writes (the checkout, `/tmp`, `HOME`, the
    /// cache, `write_paths`, a writable git directory), or a command could change it (Landlock
    /// only adds rights, so a read-only rule inside a writable tree would change nothing).
    pub(super) fn support_conflict(&self) -> Option<String> {
        let support = self.run.support.as_deref()?;
        if !support.is_absolute() {
            return Some(format!("the support directory {} is not an absolute path", support.display()));
        }
        let run = &self.run;
        let mut writable: Vec<&std::path::Path> = vec![&run.checkout, &run.tmp, &run.home];
        writable.extend(run.checkout_source.as_deref());
        writable.extend(run.cache.as_deref());
        match &run.cache_mount {
            Some(CacheMount::Bind { source }) => writable.push(source),
            Some(CacheMount::Overlay { upper, work, .. }) => writable.extend([upper.as_path(), work.as_path()]),
            None => {}
        }
        writable.extend(self.view.write.iter().map(|p| p.as_path()));
        if self.writable_git {
            writable.extend(run.gitdir.as_deref());
        }
        let clash = writable.into_iter().find(|w| support.starts_with(w) || w.starts_with(support))?;
        Some(format!(
            "the support directory {} overlaps {}, which the run writes: it must lie apart (the run directory's support/)",
            support.display(),
            clash.display()
        ))
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::egress::NetworkMode;

    #[test]
    fn only_plain_relative_paths_are_held() {
        assert_eq!(held_names("tests/test_x.py"), Some(vec!["tests", "test_x.py"]));
        assert_eq!(held_names("run.sh"), Some(vec!["run.sh"]));
        for refused in ["", "/etc/passwd", "../outside", "tests/../../x", "./x", "a/\0b"] {
            assert_eq!(held_names(refused), None, "{refused:?}");
        }
    }

    fn spec(support: &str) -> Spec {
        let run = RunPaths {
            checkout: "/run/x/checkout".into(),
            checkout_source: None,
            gitdir: Some("/run/x/git".into()),
            tmp: "/run/x/tmp".into(),
            home: "/run/x/home".into(),
            root: "/run/x/root".into(),
            cache: None,
            cache_env: BTreeMap::new(),
            cache_mount: Some(CacheMount::Overlay {
                lower: "/caches/base".into(),
                upper: "/caches/pr-1/upper".into(),
                work: "/caches/pr-1/work".into(),
            }),
            proxy_ports: BTreeMap::new(),
            held: Vec::new(),
            support: Some(support.into()),
        };
        Spec {
            version: SPEC_VERSION.into(),
            tier: Tier::Landlock,
            view: View { write: vec!["/srv/out".into()], ..View::default() },
            run,
            network: NetworkMode::Off,
            proxy_port: None,
            writable_git: false,
            run_as: None,
            max_processes: 10,
            memory_mb: None,
            probe: false,
            argv: vec!["true".into()],
            env: BTreeMap::new(),
            expect_process_limit: None,
        }
    }

    #[test]
    fn the_support_directory_lies_apart_from_every_tree_the_run_writes() {
        assert_eq!(spec("/run/x/support").support_conflict(), None);
        // The git directory is read-only unless the profile says otherwise.
        assert_eq!(spec("/run/x/git/support").support_conflict(), None);
        for clash in
            ["/run/x/checkout/tools", "/run/x/tmp/s", "/run/x/home", "/run/x", "/caches/pr-1/upper/s", "/srv/out/s"]
        {
            assert!(spec(clash).support_conflict().is_some(), "{clash}");
        }
        assert!(spec("support").support_conflict().is_some_and(|m| m.contains("absolute")));
        let mut writable_git = spec("/run/x/git/support");
        writable_git.writable_git = true;
        assert!(writable_git.support_conflict().is_some());
    }
}
