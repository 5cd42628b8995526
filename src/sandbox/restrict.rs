//! The restrictions a sandboxed command takes on itself just before `exec`, in both tiers:
//! resource limits, a fresh empty session keyring, no capabilities, no_new_privs, Landlock
//! (files, and signals/ptrace to processes outside the run) and the seccomp filter
//! ([`super::seccomp`]). Called only in a freshly forked child of the single-threaded helper.

use std::collections::BTreeMap;
use std::path::Path;

use super::connects;
use super::seccomp::{self, SocketFamilies, Sockets};
use super::spec::{Spec, Tier};
use super::view::Pin;
use crate::domain::egress::NetworkMode;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope,
};

/// The newest Landlock ABI handled; older kernels enforce what they know (best effort). ABI 9
/// adds `ResolveUnix`: connecting to a Unix socket outside the allowed trees is then refused.
const NEWEST: ABI = ABI::V9;
/// Device files a test may read and write. Not `/dev/tty`: a run has no controlling terminal
/// (the runner starts it in a session of its own), and never the person's.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// The kernel's Landlock ABI version, 0 without Landlock.
pub(super) fn landlock_abi() -> u32 {
    // SAFETY: the documented version query; no pointer is dereferenced.
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, 1u32) };
    u32::try_from(v).unwrap_or(0)
}

/// Everything of this module, in order. `Err` is a message for the log.
/// `memory_by_cgroup`: the run's cgroup already caps memory (else a per-process rlimit does).
/// `connects`: the channel for the connection record's listener, when the helper made one.
pub(super) fn apply(spec: &Spec, memory_by_cgroup: bool, connects: Option<i32>) -> Result<(), String> {
    set_limits(spec, memory_by_cgroup)?;
    fresh_session_keyring();
    drop_capabilities()?;
    let abi = landlock_abi();
    landlock(spec, abi)?;
    // Second tier: Unix sockets by path (the session bus, ssh-agent, docker.sock) are out of
    // Landlock's reach before ABI 9, so creating them is refused then, whatever `network` says.
    // Without a network namespace, seccomp keeps the families Landlock's TCP rules cannot see
    // (UDP above all) away from an `allowlist` run, and every family but Unix from an `off` one.
    let second = spec.tier == Tier::Landlock;
    // An `off` run may make TCP sockets where Landlock refuses every TCP connect and bind
    // (ABI 4), so its attempts reach the connection record; before that, none at all.
    let network = match (second, spec.network) {
        (false, _) | (true, NetworkMode::Open) => SocketFamilies::Any,
        (true, NetworkMode::Allowlist) => SocketFamilies::TcpAndUnix,
        (true, NetworkMode::Off) if abi >= 4 => SocketFamilies::TcpAndUnix,
        (true, NetworkMode::Off) => SocketFamilies::UnixOnly,
    };
    seccomp::install(Sockets { network, unix: second && abi < 9, refuse_fast_open: second })?;
    // The record is evidence, not a fence: a kernel that cannot give it leaves the printed
    // signs to decide (docs/sandbox.md).
    if let Some(channel) = connects {
        let _ = connects::install(channel);
    }
    Ok(())
}

/// Leaves the session keyring inherited from the person's login for a new, empty one, so even
/// a kernel without the seccomp refusals would show the test no key of theirs.
fn fresh_session_keyring() {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl with a null name creates and joins an anonymous keyring; no memory is
    // passed. Failing (keyrings compiled out) leaves nothing to hide.
    unsafe {
        libc::syscall(libc::SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, std::ptr::null::<libc::c_char>());
    }
}

fn set_limits(spec: &Spec, memory_by_cgroup: bool) -> Result<(), String> {
    set_rlimit(libc::RLIMIT_NPROC, spec.max_processes)?;
    set_rlimit(libc::RLIMIT_CORE, 0)?;
    if let (Some(mb), false) = (spec.memory_mb, memory_by_cgroup) {
        set_rlimit(libc::RLIMIT_DATA, mb.saturating_mul(1024 * 1024))?;
    }
    Ok(())
}

/// `setrlimit`'s resource type: glibc's own, a plain int in musl.
#[cfg(target_env = "gnu")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type Resource = libc::c_int;

/// Lowers a limit (never raises the hard one).
fn set_rlimit(resource: Resource, value: u64) -> Result<(), String> {
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit write/read the struct we own.
    unsafe {
        if libc::getrlimit(resource, &mut current) != 0 {
            return Err(format!("getrlimit: {}", std::io::Error::last_os_error()));
        }
        let hard = current.rlim_max.min(value);
        let limit = libc::rlimit { rlim_cur: hard, rlim_max: hard };
        if libc::setrlimit(resource, &limit) != 0 {
            return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// A run started by root keeps uid 0 in the second tier: without capabilities it cannot read
/// other processes' memory or environment, override file permissions, or regain them on exec.
fn drop_capabilities() -> Result<(), String> {
    use caps::CapSet;
    // The bounding set first (needs CAP_SETPCAP); an ordinary user has nothing to drop.
    if caps::has_cap(None, CapSet::Effective, caps::Capability::CAP_SETPCAP).unwrap_or(false) {
        caps::clear(None, CapSet::Bounding).map_err(|e| format!("dropping the bounding set: {e}"))?;
    }
    for set in [CapSet::Ambient, CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        caps::clear(None, set).map_err(|e| format!("dropping capabilities: {e}"))?;
    }
    Ok(())
}

/// Read-only and read-write trees of the run, and the scopes (no signals to, ptrace of, or
/// abstract sockets of processes outside the run). Sets no_new_privs.
fn landlock(spec: &Spec, abi: u32) -> Result<(), String> {
    if abi == 0 {
        // The first tier stands without it; the second was refused at the probe.
        return if spec.tier == Tier::Landlock { Err("the kernel has no Landlock".into()) } else { no_new_privs() };
    }
    let read = AccessFs::from_read(NEWEST);
    let write = AccessFs::from_all(NEWEST);
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(NEWEST))
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .map_err(|e| e.to_string())?;
    // Second tier: TCP `bind` and `connect` are refused, but for `allowlist` the connection to
    // the run's proxy on the host's loopback (ABI 4; an older kernel refused `allowlist` here).
    let tcp_rules = spec.tier == Tier::Landlock && spec.network != NetworkMode::Open && abi >= 4;
    if tcp_rules {
        ruleset = ruleset.handle_access(AccessNet::from_all(NEWEST)).map_err(|e| e.to_string())?;
    }
    let mut created = ruleset.create().map_err(|e| e.to_string())?;
    if let (true, Some(port)) = (tcp_rules, spec.proxy_port) {
        created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp)).map_err(|e| e.to_string())?;
    }

    let mut rules: BTreeMap<std::path::PathBuf, BitFlags<AccessFs>> = BTreeMap::new();
    for dir in &spec.view.system {
        match spec.tier {
            // The first tier's root already covers each hidden entry with a mount (an empty
            // tmpfs, `/dev/null`) the command cannot remove: the tree is granted whole. Entry by
            // entry it was ~180 rules and ~1,500 system calls per command, half the setup.
            Tier::Namespaces => {
                rules.insert(dir.clone(), read);
            }
            Tier::Landlock => grant_except_hidden(dir, read, &spec.view.hidden, &mut rules, 0),
        }
    }
    for path in &spec.view.read {
        rules.insert(path.clone(), read);
    }
    // forgeloop's own files for the run: readable, never writable (the helper made sure they
    // lie apart from every writable tree, where a read-only rule would add nothing).
    if let Some(support) = &spec.run.support {
        rules.insert(support.clone(), read);
    }
    rules.insert("/proc".into(), AccessFs::ReadFile | AccessFs::ReadDir);
    rules.insert("/dev".into(), AccessFs::ReadDir.into());
    for device in DEVICES {
        rules.insert((*device).into(), AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev);
    }
    let mut writable: Vec<&Path> = vec![&spec.run.checkout];
    writable.extend(spec.view.write.iter().map(|p| p.as_path()));
    writable.extend(spec.run.cache.as_deref());
    if let Some(gitdir) = &spec.run.gitdir {
        if spec.writable_git {
            writable.push(gitdir);
        } else {
            rules.insert(gitdir.clone(), read);
        }
    }
    if spec.tier == Tier::Namespaces {
        // Private by construction in the first tier.
        writable.extend([Path::new("/tmp"), Path::new("/dev/shm"), Path::new("/dev/pts")]);
        if let Some(home) = &spec.view.home {
            writable.push(home);
        }
    } else {
        writable.extend([spec.run.tmp.as_path(), spec.run.home.as_path()]);
    }
    for path in writable {
        rules.insert(path.to_path_buf(), write);
    }
    for (path, access) in rules {
        // A path that does not exist here (a missing device, say) is simply not granted.
        let Ok(fd) = PathFd::new(&path) else {
            if pin_of(spec, &path).is_some() {
                return Err(format!("{} is gone since the run began", path.display()));
            }
            continue;
        };
        let meta = fd_metadata(&fd).map_err(|e| format!("{}: {e}", path.display()))?;
        // The rule is added on the very file checked here, so a grant swapped for a link
        // since the run began is refused, not followed.
        if let Some(pin) = pin_of(spec, &path)
            && !pin.matches(&meta)
        {
            return Err(format!("{} is no longer the file it was when the run began", path.display()));
        }
        let access = if meta.is_dir() { access } else { access & AccessFs::from_file(NEWEST) };
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let status = created.restrict_self().map_err(|e| e.to_string())?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock refused the ruleset".into());
    }
    Ok(())
}

/// Grants `access` beneath `path`, except beneath the hidden paths: Landlock can only allow,
/// never carve out, so a directory holding a hidden entry is granted entry by entry (its own
/// listing stays readable: names only).
fn grant_except_hidden(
    path: &Path,
    access: BitFlags<AccessFs>,
    hidden: &[std::path::PathBuf],
    rules: &mut BTreeMap<std::path::PathBuf, BitFlags<AccessFs>>,
    depth: usize,
) {
    if hidden.iter().any(|h| h == path) {
        return;
    }
    // Only a directory that holds a hidden entry is expanded, so only such a path is looked at
    // (one stat); every other entry is granted as it is listed.
    let holds_hidden = hidden.iter().any(|h| h.starts_with(path));
    if !(holds_hidden && depth < 16 && path.symlink_metadata().is_ok_and(|m| m.is_dir())) {
        rules.insert(path.to_path_buf(), access);
        return;
    }
    rules.insert(path.to_path_buf(), AccessFs::ReadDir.into());
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            grant_except_hidden(&entry.path(), access, hidden, rules, depth + 1);
        }
    }
}

fn no_new_privs() -> Result<(), String> {
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!("no_new_privs: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn pin_of<'a>(spec: &'a Spec, path: &Path) -> Option<&'a Pin> {
    spec.view.pins.iter().find(|pin| pin.path == path)
}

/// What an open `O_PATH` descriptor refers to: one `statx` on it (no duplicate descriptor to
/// open and close, once per rule).
fn fd_metadata(fd: &PathFd) -> std::io::Result<std::fs::Metadata> {
    use std::os::fd::{AsFd, AsRawFd, FromRawFd};
    // SAFETY: the File borrows the descriptor `fd` owns and is never dropped (ManuallyDrop),
    // so the descriptor is neither closed here nor used after `fd` closes it.
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd.as_fd().as_raw_fd()) });
    file.metadata()
}

/// Brings up `lo` in the run's own network namespace, so a test can serve and reach itself.
pub(super) fn loopback_up() -> Result<(), String> {
    // SAFETY: a datagram socket used only for two interface ioctls on a zeroed ifreq.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(format!("socket: {}", std::io::Error::last_os_error()));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        let mut result = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req);
        if result == 0 {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            result = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &req);
        }
        let error = std::io::Error::last_os_error();
        libc::close(fd);
        if result != 0 {
            return Err(format!("bringing up lo: {error}"));
        }
    }
    Ok(())
}
