//! The sandbox around every test command (design §5.6). PR code is hostile: it must not see the
//! user's files or forgeloop's, reach the network, see or signal other processes, or outlive
//! its run.
//!
//! How it is built: the runner does not start a test command itself but the forgeloop binary's
//! hidden helper (`forgeloop __sandbox-exec`, its spec on a descriptor), single-threaded, which builds the
//! sandbox and runs the command in it ([`helper`]). The forgeloop process decides everything
//! ([`view`], [`prepare`]); the helper only carries it out. Two tiers:
//!
//! * **namespaces** ([`ns_tier`], [`mounts`]): user, mount, PID, network, IPC and UTS
//!   namespaces, a new root holding only the view, the command as uid 1000 inside — an
//!   unprivileged account outside, even when forgeloop is root — with Landlock on top.
//! * **landlock** ([`landlock_tier`]), where user namespaces are refused (and never for root):
//!   Landlock for the files and for signals/ptrace, a seccomp filter refusing non-Unix sockets,
//!   and the helper as child subreaper killing every descendant.
//!
//! Both tiers: a run directory private to the person ([`rundir`]), the git directory read-only,
//! the spec on a sealed descriptor ([`spec_fd`]), and a seccomp filter ([`seccomp`]) against
//! keyrings, setuid files, device nodes and io_uring.
//!
//! Held files (issue 57, [`RunPaths::held`]): the first tier makes them read-only and their
//! directories immovable (`hold`); the second can only see them change ([`HeldSnapshot`]).
//! Both show the run's support directory ([`RunPaths::support`]) read-only.
//!
//! Where neither can be built nothing runs: [`SandboxError::Unavailable`].

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
pub mod connects;
#[cfg(target_os = "linux")]
mod exec;
pub mod fdpass;
mod held_snapshot;
#[cfg(target_os = "linux")]
pub mod helper;
#[cfg(target_os = "linux")]
mod hold;
#[cfg(target_os = "linux")]
mod landlock_tier;
#[cfg(target_os = "linux")]
mod mount_calls;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod ns_tier;
#[cfg(target_os = "linux")]
mod reaper;
#[cfg(target_os = "linux")]
mod restrict;
pub mod rundir;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod spec;
pub mod spec_fd;
pub mod view;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::domain::commands::CommandsProfile;
use crate::domain::egress::{NetworkMode, proxy_environment};
pub use crate::domain::report::SandboxInfo;
pub use held_snapshot::{HeldChange, HeldSnapshot};
pub use rundir::RunDir;
pub use spec::{Account, Built, CacheMount, Phase, RunPaths, Spec, Tier};
pub use view::{PathRefused, View};

/// The argument that turns the forgeloop binary into the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox-exec";
/// Test seam: tiers to treat as unavailable (`namespaces`, `landlock`, comma-separated). It can
/// only take defences away until nothing runs; it can never turn the sandbox off.
pub const REFUSE_ENV: &str = "FORGELOOP_SANDBOX_REFUSE";
/// Test seam: the highest Landlock ABI to believe the kernel has (an older kernel's), so the
/// refusals that depend on it are tested here. It only ever leads to refusing a run.
pub const LANDLOCK_ABI_ENV: &str = "FORGELOOP_SANDBOX_LANDLOCK_ABI";
/// Default bound on the processes (and threads) of one run.
pub const DEFAULT_MAX_PROCESSES: u64 = 4096;
/// The account PR code runs as when forgeloop is root and `[runner] run_as` says nothing.
pub const DEFAULT_RUN_AS: &str = "nobody";
/// Exit code of the helper when the sandbox could not be built around a command.
pub const EXIT_SANDBOX_FAILED: i32 = 125;
/// Names, in the helper's own environment (never the command's), the descriptor on which it
/// reports that the sandbox could not be built: the runner then records an infra failure
/// instead of a failed test.
pub const REPORT_FD_ENV: &str = "FORGELOOP_SANDBOX_REPORT_FD";
/// Names, in the helper's own environment, the descriptor holding its spec (design §5.6).
pub const SPEC_FD_ENV: &str = "FORGELOOP_SANDBOX_SPEC_FD";
/// Names, in the helper's own environment, the Unix socket on which it hands back the egress
/// proxy's listener made inside the command's network namespace.
pub const PROXY_FD_ENV: &str = "FORGELOOP_SANDBOX_PROXY_FD";
/// Second tier, held `.py` files: where Python keeps compiled modules (`PYTHONPYCACHEPREFIX`).
/// Below a device, so no one can ever make it: Python reads no compiled form from any
/// `__pycache__` and writes none, and runs every module from its source.
pub const NO_BYTECODE: &str = "/dev/null/forgeloop-no-bytecode";
/// The Landlock ABI with TCP port rules (Linux 6.7): the second tier's `allowlist` needs it.
const TCP_ABI: u32 = 4;
/// The Landlock ABI that scopes abstract Unix sockets and signals (Linux 6.12).
const SCOPES_ABI: u32 = 6;

/// The person's settings (`[runner]` in config.toml).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `false` only by `[runner] sandbox = "off"`.
    pub enabled: bool,
    /// The program that understands [`HELPER_ARG`]: `forgeloop-sandbox` beside this binary
    /// (small: it starts in a fraction of the time), else this binary (`/proc/self/exe`, which
    /// stays right even if the file is replaced by an upgrade while the control room runs).
    pub helper: PathBuf,
    /// The bound on processes and threads one run may have (`[runner] max_processes`).
    pub max_processes: u64,
    /// Where run directories are made (`<home>/run`): private to the person.
    pub run_root: PathBuf,
    /// Who PR code runs as when forgeloop is root (`[runner] run_as`, resolved).
    pub run_as: Account,
}

impl Settings {
    /// The defaults, with run directories below `run_root`.
    pub fn new(run_root: PathBuf) -> Settings {
        Settings {
            enabled: true,
            helper: default_helper(),
            max_processes: DEFAULT_MAX_PROCESSES,
            run_root,
            run_as: resolve_account(DEFAULT_RUN_AS).unwrap_or(Account { uid: 65534, gid: 65534 }),
        }
    }
}

/// `forgeloop-sandbox` beside the running binary when it is there, else the binary itself.
/// A helper of another version refuses the spec (see [`spec::SPEC_VERSION`]), so a stale one
/// fails loudly at the probe rather than building less than asked.
fn default_helper() -> PathBuf {
    let beside = std::env::current_exe().ok().map(|exe| exe.with_file_name("forgeloop-sandbox"));
    match beside {
        Some(path) if path.is_file() => path,
        _ => PathBuf::from("/proc/self/exe"),
    }
}

/// `[runner] run_as`: an account name, or `uid` or `uid:gid`. Root is refused: the point is to
/// run PR code as somebody who owns nothing of the person's.
pub fn resolve_account(name: &str) -> Result<Account, String> {
    let account = if let Some((uid, gid)) = name.split_once(':') {
        match (uid.parse(), gid.parse()) {
            (Ok(uid), Ok(gid)) => Account { uid, gid },
            _ => return Err(format!("run_as {name:?}: expected NAME, UID or UID:GID")),
        }
    } else if let Ok(uid) = name.parse::<u32>() {
        Account { uid, gid: uid }
    } else {
        lookup_user(name).ok_or_else(|| format!("run_as {name:?}: no such account in /etc/passwd"))?
    };
    if account.uid == 0 || account.gid == 0 {
        return Err(format!("run_as {name:?} is root; name an unprivileged account (the default is {DEFAULT_RUN_AS})"));
    }
    Ok(account)
}

/// An account's uid and primary gid from `/etc/passwd` (read directly: no NSS, no threads).
fn lookup_user(name: &str) -> Option<Account> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == name).then_some(())?;
        let _password = fields.next()?;
        Some(Account { uid: fields.next()?.parse().ok()?, gid: fields.next()?.parse().ok()? })
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Why nothing ran: no sandbox could be built, or a commands file asked for a path it may not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// Neither tier of the sandbox can be built on this machine.
    #[error("no sandbox can be built on this machine, so nothing was run: {}. Fixes: {}", causes.join("; "), fixes.join("; "))]
    Unavailable {
        /// Why each tier could not be built.
        causes: Vec<String>,
        /// What the person can do about it.
        fixes: Vec<String>,
    },
    /// A `read_paths`/`write_paths` entry is refused.
    #[error(transparent)]
    PathRefused(#[from] PathRefused),
}

impl SandboxError {
    /// The `status` word of the error document.
    pub fn status(&self) -> crate::domain::word::Word {
        use crate::domain::word::Word;
        match self {
            SandboxError::Unavailable { .. } => Word::SandboxUnavailable,
            SandboxError::PathRefused(_) => Word::SandboxPathRefused,
        }
    }
}

/// A sandbox ready to wrap the commands of one run (or the decision to run unsandboxed).
#[derive(Debug, Clone)]
pub struct Plan {
    tier: Option<Tier>,
    helper: PathBuf,
    view: View,
    /// The profile's grants as written (the view holds them resolved).
    extra_read: Vec<PathBuf>,
    extra_write: Vec<PathBuf>,
    /// What the test commands may reach, and the setup commands.
    network: NetworkMode,
    setup_network: NetworkMode,
    writable_git: bool,
    /// First tier, forgeloop started by root: who the commands run as.
    run_as: Option<Account>,
    max_processes: u64,
    memory_mb: Option<u64>,
    built: Built,
    run_root: PathBuf,
}

/// How a command reaches the run's egress proxy, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyAccess {
    /// Not an `allowlist` command (or no sandbox).
    None,
    /// First tier: the helper binds [`spec::INSIDE_PROXY_PORT`] in the command's own network
    /// namespace and hands the socket over ([`Started::proxy_channel`]).
    Inside,
    /// Second tier: a listener on the host's loopback that the runner makes (its port in
    /// [`RunPaths::proxy_port`]), the only TCP port Landlock lets the command connect to.
    HostLoopback,
}

impl Plan {
    /// What `phase`'s commands may reach.
    pub fn network(&self, phase: Phase) -> NetworkMode {
        match phase {
            Phase::Setup => self.setup_network,
            Phase::Test => self.network,
        }
    }

    /// How `phase`'s commands reach the egress proxy.
    pub fn proxy_access(&self, phase: Phase) -> ProxyAccess {
        match (self.tier, self.network(phase)) {
            (Some(Tier::Namespaces), NetworkMode::Allowlist) => ProxyAccess::Inside,
            (Some(Tier::Landlock), NetworkMode::Allowlist) => ProxyAccess::HostLoopback,
            _ => ProxyAccess::None,
        }
    }

    /// What the run's report says about its sandbox.
    pub fn info(&self) -> SandboxInfo {
        let Some(tier) = self.tier else { return SandboxInfo::off() };
        let strings = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
        SandboxInfo {
            kind: tier.as_str().to_owned(),
            network: self.network,
            setup_network: None,
            network_hosts: None,
            landlock_abi: Some(self.built.landlock_abi).filter(|abi| *abi > 0),
            max_processes: Some(self.max_processes),
            process_limit: Some(self.built.process_limit.clone()),
            memory_mb: self.memory_mb,
            memory_limit: self.memory_mb.map(|_| self.built.memory_limit.clone()),
            read_paths: strings(&self.extra_read),
            write_paths: strings(&self.extra_write),
            writable_git: self.writable_git,
            run_as: self.run_as.map(|a| format!("uid {} gid {}", a.uid, a.gid)),
            cache: None,
            cache_layers: None,
        }
    }

    /// The tier the commands run in; `None` when the person turned the sandbox off.
    pub fn tier(&self) -> Option<Tier> {
        self.tier
    }

    /// Whether commands run inside a sandbox (false only when the person turned it off).
    pub fn is_sandboxed(&self) -> bool {
        self.tier.is_some()
    }

    /// The account the commands run as, when it is not forgeloop's own (forgeloop is root).
    pub fn run_as(&self) -> Option<Account> {
        self.run_as
    }

    /// Where run directories are made.
    pub fn run_root(&self) -> &Path {
        &self.run_root
    }

    /// The plan for one checkout: the object stores its git directory borrows through git
    /// alternates (its repository's mirror, under forgeloop's home) become readable, nothing
    /// else of the home. Without them `git` inside the run could not read a single commit.
    /// Read before any command runs, from a git directory the run cannot write (unless
    /// `writable_git`), so a test cannot point it elsewhere.
    pub fn for_checkout(&self, gitdir: &Path) -> Plan {
        let mut plan = self.clone();
        let mut files = vec![gitdir.join("objects/info/alternates")];
        if let Ok(modules) = std::fs::read_dir(gitdir.join("modules")) {
            files.extend(modules.flatten().map(|m| m.path().join("objects/info/alternates")));
        }
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            for line in text.lines().map(str::trim) {
                let path = Path::new(line);
                if path.is_absolute()
                    && path.ends_with("objects")
                    && path.is_dir()
                    && !plan.view.read.iter().any(|p| p == path)
                {
                    plan.view.read.push(path.to_path_buf());
                }
            }
        }
        plan
    }

    /// Where the run's private temporary directory (`run.tmp` on the host) is inside the
    /// sandbox: `/tmp` in the first tier, its host path otherwise.
    pub fn tmp_in_sandbox(&self, run: &RunPaths) -> PathBuf {
        match self.tier {
            Some(Tier::Namespaces) => PathBuf::from("/tmp"),
            _ => run.tmp.clone(),
        }
    }

    /// How to start `argv` with the command environment `env`. Sandboxed, the process started
    /// is the helper, with an empty environment and `/` as its directory: the command's own
    /// environment (the private `HOME` and temporary directory, toolchain homes) travels in
    /// the spec, on a descriptor, and applies only inside, so nothing a commands file sets
    /// (`LD_PRELOAD`, say) reaches the unsandboxed helper, and no other account can read it in
    /// the helper's command line.
    pub fn wrap(&self, argv: &[String], run: &RunPaths, mut env: BTreeMap<String, String>, phase: Phase) -> Started {
        // The warm cache's variables win over the person's (which point into their home).
        let Some(tier) = self.tier else {
            env.extend(run.cache_env.clone());
            return Started::direct(argv, &run.checkout, env);
        };
        for name in crate::domain::environment::dropped_in_sandbox() {
            env.remove(name);
        }
        env.extend(self.view.env_set.clone());
        env.extend(run.cache_env.clone());
        let home = match (tier, &self.view.home) {
            (Tier::Namespaces, Some(home)) => home.clone(),
            _ => run.home.clone(),
        };
        env.insert("HOME".into(), home.display().to_string());
        env.insert("TMPDIR".into(), self.tmp_in_sandbox(run).display().to_string());
        if tier == Tier::Landlock && run.held.iter().any(|path| path.ends_with(".py")) {
            // The second tier cannot make a held module's `__pycache__` read-only: Python keeps
            // its compiled forms where none can be, so none planted there is ever read.
            env.insert("PYTHONPYCACHEPREFIX".into(), NO_BYTECODE.to_owned());
        }
        let access = self.proxy_access(phase);
        let proxy_port = match access {
            ProxyAccess::Inside => Some(spec::INSIDE_PROXY_PORT),
            ProxyAccess::HostLoopback => run.proxy_ports.get(phase.as_str()).copied(),
            ProxyAccess::None => None,
        };
        if let Some(port) = proxy_port {
            // Every common client finds the proxy; nothing bypasses it (NO_PROXY is empty).
            env.extend(proxy_environment("127.0.0.1", port).into_iter().map(|(k, v)| (k.to_owned(), v)));
        }
        let mut spec = self.spec(tier, argv, run, false);
        spec.network = self.network(phase);
        spec.proxy_port = (access == ProxyAccess::HostLoopback).then_some(proxy_port).flatten();
        spec.env = env;
        spec.expect_process_limit = Some(self.built.process_limit.clone());
        Started {
            program: self.helper.clone(),
            args: vec![HELPER_ARG.to_owned()],
            env: BTreeMap::new(),
            cwd: PathBuf::from("/"),
            reports: true,
            spec: Some(serde_json::to_vec(&spec).unwrap_or_default()),
            proxy_channel: access == ProxyAccess::Inside,
        }
    }

    fn spec(&self, tier: Tier, argv: &[String], run: &RunPaths, probe: bool) -> Spec {
        Spec {
            version: spec::SPEC_VERSION.to_owned(),
            tier,
            view: self.view.clone(),
            run: run.clone(),
            network: self.network,
            proxy_port: None,
            writable_git: self.writable_git,
            run_as: if tier == Tier::Namespaces && is_root() { self.run_as } else { None },
            max_processes: self.max_processes,
            memory_mb: self.memory_mb,
            probe,
            argv: argv.to_vec(),
            env: BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin:/usr/sbin:/sbin".to_owned())]),
            expect_process_limit: None,
        }
    }
}

/// A process to start for one command: the command itself, or the sandbox helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// The program to start: the command's `argv[0]`, or the sandbox helper.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment (empty for the helper: the command's travels in the spec).
    pub env: BTreeMap<String, String>,
    /// Its working directory (the checkout, or `/` for the helper).
    pub cwd: PathBuf,
    /// The program is the helper, which takes a report pipe ([`REPORT_FD_ENV`]).
    pub reports: bool,
    /// The helper's spec, to pass on a sealed descriptor ([`SPEC_FD_ENV`], [`spec_fd`]).
    pub spec: Option<Vec<u8>>,
    /// The helper hands back a listening socket made inside the command's network namespace
    /// for the egress proxy, over a Unix socket named by [`PROXY_FD_ENV`] ([`fdpass`]).
    pub proxy_channel: bool,
}

impl Started {
    /// The command as is (no sandbox).
    pub fn direct(argv: &[String], cwd: &Path, env: BTreeMap<String, String>) -> Started {
        let (program, args) = match argv.split_first() {
            Some((program, args)) => (PathBuf::from(program), args.to_vec()),
            None => (PathBuf::new(), Vec::new()),
        };
        Started { program, args, env, cwd: cwd.to_path_buf(), reports: false, spec: None, proxy_channel: false }
    }
}

/// Decides how the commands of `profile` will run: checks the extra paths, then builds a
/// sandbox of the best tier that works here (running `true` in it), before anything is fetched.
/// `protected` are forgeloop's own files (home, registry, config), never visible to a test.
pub fn prepare(
    settings: &Settings,
    profile: &CommandsProfile,
    setup_network: NetworkMode,
    env: &BTreeMap<String, String>,
    protected: &[PathBuf],
) -> Result<Plan, SandboxError> {
    let view = view::build(env, profile, protected)?;
    let mut plan = Plan {
        tier: None,
        helper: settings.helper.clone(),
        extra_read: profile.read_paths.iter().map(PathBuf::from).collect(),
        extra_write: profile.write_paths.iter().map(PathBuf::from).collect(),
        view,
        network: profile.network,
        setup_network,
        writable_git: profile.writable_git,
        run_as: None,
        max_processes: settings.max_processes,
        memory_mb: profile.memory_mb,
        built: Built::default(),
        run_root: settings.run_root.clone(),
    };
    if !settings.enabled {
        return Ok(plan);
    }
    if is_root() {
        plan.run_as = Some(settings.run_as);
        writable_by(&plan.view, &profile.write_paths, settings.run_as)?;
    }
    let (tier, built) = choose_tier(&plan)?;
    let abi = believed_abi(built.landlock_abi);
    let modes = [plan.network, plan.setup_network];
    if tier == Tier::Namespaces && modes.contains(&NetworkMode::Open) && abi < SCOPES_ABI {
        // Sharing the host's network namespace shares its abstract Unix sockets (X11, D-Bus):
        // only Landlock's scopes keep them closed.
        return Err(SandboxError::Unavailable {
            causes: vec![format!(
                "\"network\": \"open\" shares the host's network, and with it the abstract Unix sockets of your session (X11, D-Bus); only Landlock ABI {SCOPES_ABI} (Linux 6.12) can keep those closed, and this kernel has ABI {abi}"
            )],
            fixes: vec![
                "run the tests with \"network\": \"allowlist\" or without network".into(),
                format!("or run forgeloop on a kernel with Landlock ABI {SCOPES_ABI} or newer (Linux 6.12)"),
            ],
        });
    }
    if tier == Tier::Landlock && modes.contains(&NetworkMode::Allowlist) && abi < TCP_ABI {
        // Without a network namespace, only Landlock's TCP port rules keep the run from going
        // around the proxy.
        return Err(SandboxError::Unavailable {
            causes: vec![format!(
                "\"network\": \"allowlist\" in the landlock tier needs Landlock ABI {TCP_ABI} (Linux 6.7) to let the run reach nothing but its proxy, and this kernel has ABI {abi}"
            )],
            fixes: vec![
                "allow unprivileged user namespaces (the first tier gives the run a network of its own)".into(),
                format!("or run forgeloop on a kernel with Landlock ABI {TCP_ABI} or newer (Linux 6.7)"),
                "or install the dependencies without network (\"setup\" runs with \"off\" when [network] allow is empty)".into(),
            ],
        });
    }
    plan.tier = Some(tier);
    plan.built = built;
    Ok(plan)
}

/// The kernel's Landlock ABI, or less when the test seam says so.
fn believed_abi(kernel: u32) -> u32 {
    let seam = std::env::var(LANDLOCK_ABI_ENV).ok().and_then(|v| v.parse::<u32>().ok());
    seam.map_or(kernel, |max| kernel.min(max))
}

/// As root, `write_paths` must be writable by the account the commands run as: its own, or
/// writable by everybody. forgeloop never changes the owner of a directory of the person's.
fn writable_by(view: &View, raw: &[String], account: Account) -> Result<(), PathRefused> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    for (path, raw) in view.write.iter().zip(raw) {
        let Ok(meta) = path.metadata() else { continue };
        if meta.uid() != account.uid && meta.permissions().mode() & 0o002 == 0 {
            return Err(PathRefused {
                what: "write_paths",
                path: raw.clone(),
                reason: format!(
                    "forgeloop runs as root, so tests run as uid {}, which cannot write it; give it to that account (chown {}:{}) or grant another directory",
                    account.uid, account.uid, account.gid
                ),
            });
        }
    }
    Ok(())
}

/// What this process learned about the machine: the tier that works (or why none does), per
/// helper, refusal seam, and whether memory and the network were asked for. The kernel's abilities do not change
/// under a running process, so each run after the first skips the probe.
type Probed = Result<(Tier, Built), Vec<String>>;
/// Helper, refusal seam, memory asked for, network shared, the account runs drop to.
type ProbeKey = (PathBuf, String, bool, bool, Option<Account>);
static PROBED: std::sync::Mutex<Vec<(ProbeKey, Probed)>> = std::sync::Mutex::new(Vec::new());

/// Probes the tiers in order of strength; the first that runs `true` wins.
fn choose_tier(plan: &Plan) -> Result<(Tier, Built), SandboxError> {
    let refused = std::env::var(REFUSE_ENV).unwrap_or_default();
    let key = (
        plan.helper.clone(),
        refused.clone(),
        plan.memory_mb.is_some(),
        plan.network == NetworkMode::Open,
        plan.run_as,
    );
    let cached = PROBED.lock().ok().and_then(|seen| seen.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone()));
    let probed = match cached {
        Some(probed) => probed,
        None => {
            let probed = probe_tiers(plan, &refused);
            if let Ok(mut seen) = PROBED.lock() {
                seen.push((key, probed.clone()));
            }
            probed
        }
    };
    probed.map_err(|causes| SandboxError::Unavailable { causes, fixes: fixes() })
}

fn probe_tiers(plan: &Plan, refused: &str) -> Probed {
    let refused: Vec<&str> = refused.split(',').map(str::trim).collect();
    let mut causes = Vec::new();
    if !cfg!(target_os = "linux") {
        causes.push(format!(
            "{} has no sandbox in forgeloop yet (macOS: planned, a Seatbelt profile)",
            std::env::consts::OS
        ));
    } else {
        for tier in [Tier::Namespaces, Tier::Landlock] {
            if refused.contains(&tier.as_str()) {
                causes.push(format!("the {} tier is refused by {REFUSE_ENV} (a test seam)", tier.as_str()));
                continue;
            }
            if tier == Tier::Landlock && is_root() {
                // Without a user namespace the test would keep root's uid (and own every
                // root-only file), or run as another account that cannot reach the run's own
                // files (the home is private): neither is acceptable.
                causes.push(
                    "the landlock tier: forgeloop runs as root, and without user namespaces a test would run as root; \
                     PR code never does"
                        .to_owned(),
                );
                continue;
            }
            match probe(plan, tier) {
                Ok(built) => return Ok((tier, built)),
                Err(cause) => causes.push(format!("the {} tier: {cause}", tier.as_str())),
            }
        }
    }
    Err(causes)
}

fn fixes() -> Vec<String> {
    if !cfg!(target_os = "linux") {
        return vec![
            "run forgeloop on Linux (a Linux VM or container will do)".into(),
            "or, at your own risk, set [runner] sandbox = \"off\" in config.toml (every report then says unsandboxed)"
                .into(),
        ];
    }
    let mut fixes: Vec<String> = Vec::new();
    if is_root() {
        fixes.push(
            "run forgeloop as an ordinary user (in a container: add one with useradd and run forgeloop as it)".into(),
        );
    }
    fixes.extend([
        "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for forgeloop)".into(),
        "or boot a kernel with Landlock (CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= list)".into(),
        "or, at your own risk, set [runner] sandbox = \"off\" in config.toml (every report then says unsandboxed)".into(),
    ]);
    fixes
}

/// How long a probe may take before the tier counts as broken.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Builds a sandbox of `tier` around `true` and reads back what the helper could build.
fn probe(plan: &Plan, tier: Tier) -> Result<Built, String> {
    let run = RunDir::create(&plan.run_root)
        .map_err(|e| format!("cannot create a run directory in {}: {e}", plan.run_root.display()))?;
    let paths = run.paths(&run.tmp(), None);
    let mut spec = plan.spec(tier, &["true".to_owned()], &paths, true);
    // The probe checks what the machine allows; it has no proxy to hand a socket to.
    spec.network = if plan.network == NetworkMode::Open { NetworkMode::Open } else { NetworkMode::Off };
    if let Some(account) = spec.run_as {
        run.hand_over(&paths, account).map_err(|e| format!("cannot hand the probe's directory over: {e}"))?;
    }
    let spec = spec_fd::sealed(&serde_json::to_vec(&spec).map_err(|e| e.to_string())?)
        .map_err(|e| format!("cannot pass the spec to the helper: {e}"))?;
    let spec_fd = std::os::fd::AsRawFd::as_raw_fd(&spec);
    let mut command = Command::new(&plan.helper);
    command
        .arg(HELPER_ARG)
        .env_clear()
        .env(SPEC_FD_ENV, spec_fd.to_string())
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: fcntl on a descriptor this process owns, in the child before exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || spec_fd::inherit(spec_fd));
    }
    let mut child =
        command.spawn().map_err(|e| format!("cannot start the sandbox helper {}: {e}", plan.helper.display()))?;
    drop(spec);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < PROBE_TIMEOUT => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the sandbox helper did not answer".into());
            }
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    if !status.success() {
        let reason = err.lines().last().unwrap_or("").trim();
        return Err(if reason.is_empty() { format!("it could not run `true` ({status})") } else { reason.to_owned() });
    }
    serde_json::from_str(out.trim()).map_err(|_| format!("unexpected probe answer {:?}", out.trim()))
}
