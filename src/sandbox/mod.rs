//! The sandbox around every test command (design §5.6). PR code is hostile: it must not see the
//! user's files or forgeloop's, reach the network, see or signal other processes, or outlive
//! its run.
//!
//! How it is built: the runner does not start a test command itself but the forgeloop binary's
//! hidden helper (`forgeloop __sandbox-exec SPEC -- argv`), single-threaded, which builds the
//! sandbox and runs the command in it ([`helper`]). The forgeloop process decides everything
//! ([`view`], [`prepare`]); the helper only carries it out. Two tiers:
//!
//! * **namespaces** ([`ns_tier`], on the `hakoniwa` crate): user, mount, PID, network, IPC and
//!   UTS namespaces, a new root holding only the view, no_new_privs, Landlock on top.
//! * **landlock** ([`landlock_tier`]), where user namespaces are refused: Landlock for the files
//!   and for signals/ptrace, a seccomp filter refusing non-Unix sockets, and the helper as child
//!   subreaper killing every descendant.
//!
//! Where neither can be built nothing runs: [`SandboxError::Unavailable`].

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod exec;
#[cfg(target_os = "linux")]
pub mod helper;
#[cfg(target_os = "linux")]
mod landlock_tier;
#[cfg(target_os = "linux")]
mod ns_tier;
#[cfg(target_os = "linux")]
mod reaper;
#[cfg(target_os = "linux")]
mod restrict;
pub mod spec;
pub mod view;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::domain::commands::CommandsProfile;
pub use crate::domain::report::SandboxInfo;
pub use spec::{Built, Spec, Tier};
pub use view::{PathRefused, View};

/// The argument that turns the forgeloop binary into the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox-exec";
/// Test seam: tiers to treat as unavailable (`namespaces`, `landlock`, comma-separated). It can
/// only take defences away until nothing runs; it can never turn the sandbox off.
pub const REFUSE_ENV: &str = "FORGELOOP_SANDBOX_REFUSE";
/// Default bound on the processes (and threads) of one run.
pub const DEFAULT_MAX_PROCESSES: u64 = 4096;
/// Exit code of the helper when the sandbox could not be built around a command.
pub const EXIT_SANDBOX_FAILED: i32 = 125;
/// Names, in the helper's own environment (never the command's), the descriptor on which it
/// reports that the sandbox could not be built: the runner then records an infra failure
/// instead of a failed test.
pub const REPORT_FD_ENV: &str = "FORGELOOP_SANDBOX_REPORT_FD";

/// The person's settings (`[runner]` in config.toml).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `false` only by `[runner] sandbox = "off"`.
    pub enabled: bool,
    /// The program that understands [`HELPER_ARG`]: this binary (`/proc/self/exe`, which stays
    /// right even if the file is replaced by an upgrade while the control room runs).
    pub helper: PathBuf,
    pub max_processes: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { enabled: true, helper: PathBuf::from("/proc/self/exe"), max_processes: DEFAULT_MAX_PROCESSES }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    #[error("no sandbox can be built on this machine, so nothing was run: {}. Fixes: {}", causes.join("; "), fixes.join("; "))]
    Unavailable { causes: Vec<String>, fixes: Vec<String> },
    #[error(transparent)]
    PathRefused(#[from] PathRefused),
}

impl SandboxError {
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
    /// The profile's `read_paths` as granted (the view's `read` also holds toolchains).
    extra_read: Vec<PathBuf>,
    network: bool,
    max_processes: u64,
    memory_mb: Option<u64>,
    built: Built,
}

impl Plan {
    pub fn info(&self) -> SandboxInfo {
        let Some(tier) = self.tier else { return SandboxInfo::off() };
        let strings = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
        SandboxInfo {
            kind: tier.as_str().to_owned(),
            network: self.network,
            landlock_abi: Some(self.built.landlock_abi).filter(|abi| *abi > 0),
            max_processes: Some(self.max_processes),
            process_limit: Some(self.built.process_limit.clone()),
            memory_mb: self.memory_mb,
            memory_limit: self.memory_mb.map(|_| self.built.memory_limit.clone()),
            read_paths: strings(&self.extra_read),
            write_paths: strings(&self.view.write),
        }
    }

    pub fn is_sandboxed(&self) -> bool {
        self.tier.is_some()
    }

    /// The plan for one checkout: the object stores it borrows through git alternates (its
    /// repository's mirror, under forgeloop's home) become readable, nothing else of the home.
    /// Without them `git` inside the run could not read a single commit.
    pub fn for_checkout(&self, checkout: &Path) -> Plan {
        let mut plan = self.clone();
        let git = checkout.join(".git");
        let mut files = vec![git.join("objects/info/alternates")];
        if let Ok(modules) = std::fs::read_dir(git.join("modules")) {
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

    /// How to start `argv` with the command environment `env`. Sandboxed, the process started
    /// is the helper, with an empty environment and `/` as its directory: the command's own
    /// environment (the private `HOME` and temporary directory, toolchain homes) travels in
    /// the spec and applies only inside, so nothing a commands file sets (`LD_PRELOAD`, say)
    /// reaches the unsandboxed helper.
    pub fn wrap(
        &self,
        argv: &[String],
        checkout: &Path,
        private: &PrivateDirs,
        mut env: BTreeMap<String, String>,
    ) -> Started {
        let Some(tier) = self.tier else { return Started::direct(argv, checkout, env) };
        for name in view::DROPPED_VARS {
            env.remove(*name);
        }
        env.extend(self.view.env_set.clone());
        let home = match (tier, &self.view.home) {
            (Tier::Namespaces, Some(home)) => home.clone(),
            _ => private.home(),
        };
        env.insert("HOME".into(), home.display().to_string());
        let tmp = if tier == Tier::Namespaces { PathBuf::from("/tmp") } else { private.tmp() };
        env.insert("TMPDIR".into(), tmp.display().to_string());
        let mut spec = self.spec(tier, argv, checkout, private, false);
        spec.env = env;
        spec.expect_process_limit = Some(self.built.process_limit.clone());
        let json = serde_json::to_string(&spec).unwrap_or_default();
        Started {
            program: self.helper.clone(),
            args: vec![HELPER_ARG.to_owned(), json],
            env: BTreeMap::new(),
            cwd: PathBuf::from("/"),
            reports: true,
        }
    }

    fn spec(&self, tier: Tier, argv: &[String], checkout: &Path, private: &PrivateDirs, probe: bool) -> Spec {
        Spec {
            tier,
            view: self.view.clone(),
            checkout: checkout.to_path_buf(),
            private_tmp: private.tmp(),
            private_home: private.home(),
            network: self.network,
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
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
    /// The program is the helper, which takes a report pipe ([`REPORT_FD_ENV`]).
    pub reports: bool,
}

impl Started {
    /// The command as is (no sandbox).
    pub fn direct(argv: &[String], cwd: &Path, env: BTreeMap<String, String>) -> Started {
        let (program, args) = match argv.split_first() {
            Some((program, args)) => (PathBuf::from(program), args.to_vec()),
            None => (PathBuf::new(), Vec::new()),
        };
        Started { program, args, env, cwd: cwd.to_path_buf(), reports: false }
    }
}

/// The private `/tmp` and `HOME` of one run: empty, owned by the user, removed afterwards.
pub struct PrivateDirs {
    dir: tempfile::TempDir,
}

impl PrivateDirs {
    pub fn new() -> std::io::Result<PrivateDirs> {
        let dir = tempfile::Builder::new().prefix("forgeloop-run-").tempdir()?;
        for sub in ["tmp", "home"] {
            std::fs::create_dir(dir.path().join(sub))?;
        }
        Ok(PrivateDirs { dir })
    }

    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
}

/// Decides how the commands of `profile` will run: checks the extra paths, then builds a
/// sandbox of the best tier that works here (running `true` in it), before anything is fetched.
/// `protected` are forgeloop's own files (home, registry, config), never visible to a test.
pub fn prepare(
    settings: &Settings,
    profile: &CommandsProfile,
    env: &BTreeMap<String, String>,
    protected: &[PathBuf],
) -> Result<Plan, SandboxError> {
    let view = view::build(env, profile, protected)?;
    let mut plan = Plan {
        tier: None,
        helper: settings.helper.clone(),
        extra_read: profile.read_paths.iter().map(PathBuf::from).collect(),
        view,
        network: profile.network,
        max_processes: settings.max_processes,
        memory_mb: profile.memory_mb,
        built: Built::default(),
    };
    if !settings.enabled {
        return Ok(plan);
    }
    let (tier, built) = choose_tier(&plan)?;
    plan.tier = Some(tier);
    plan.built = built;
    Ok(plan)
}

/// What this process learned about the machine: the tier that works (or why none does), per
/// helper, refusal seam, and whether memory and the network were asked for. The kernel's abilities do not change
/// under a running process, so each run after the first skips the probe.
type Probed = Result<(Tier, Built), Vec<String>>;
/// Helper, refusal seam, memory asked for, network shared.
type ProbeKey = (PathBuf, String, bool, bool);
static PROBED: std::sync::Mutex<Vec<(ProbeKey, Probed)>> = std::sync::Mutex::new(Vec::new());

/// Probes the tiers in order of strength; the first that runs `true` wins.
fn choose_tier(plan: &Plan) -> Result<(Tier, Built), SandboxError> {
    let refused = std::env::var(REFUSE_ENV).unwrap_or_default();
    let key = (plan.helper.clone(), refused.clone(), plan.memory_mb.is_some(), plan.network);
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
    vec![
        "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for forgeloop)".into(),
        "or boot a kernel with Landlock (CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= list)".into(),
        "or, at your own risk, set [runner] sandbox = \"off\" in config.toml (every report then says unsandboxed)".into(),
    ]
}

/// How long a probe may take before the tier counts as broken.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Builds a sandbox of `tier` around `true` and reads back what the helper could build.
fn probe(plan: &Plan, tier: Tier) -> Result<Built, String> {
    let private = PrivateDirs::new().map_err(|e| format!("cannot create a private directory: {e}"))?;
    let checkout = private.tmp();
    let spec = plan.spec(tier, &["true".to_owned()], &checkout, &private, true);
    let json = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
    let mut child = Command::new(&plan.helper)
        .arg(HELPER_ARG)
        .arg(json)
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the sandbox helper {}: {e}", plan.helper.display()))?;
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
