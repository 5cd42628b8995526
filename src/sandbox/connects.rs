//! The record of every connection a run tried (design §5.6): how `NEEDS_NETWORK` is decided
//! from what a test did rather than from what it printed.
//!
//! The command's process installs one more seccomp filter before `exec`: `connect` and `bind`
//! become user notifications, delivered to the helper (outside the run) on a listener the
//! command hands over and then closes. The helper reads the address each call names from the
//! caller's memory, remembers it, and answers:
//!
//! * first tier (own network namespace): always "go on" — the namespace is the fence, so the
//!   kernel gives the caller the answer it would anyway (refused, unreachable); the egress
//!   proxy's socket and the run's own loopback servers (ports it bound) are not destinations;
//! * second tier (the host's network, Landlock's port rules): the proxy's port on loopback goes
//!   on; every other connection is refused here with `ECONNREFUSED`, the answer a client
//!   expects, before Landlock would say `EACCES`.
//!
//! The notification only reports; it never allows what the namespace, Landlock and the other
//! seccomp filter refuse (its "go on" runs the call through them), so a test racing the
//! address it passed can blur the record, never widen the fence.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::spec::{INSIDE_PROXY_PORT, Spec, Tier};
use crate::domain::egress::NetworkMode;

/// The most distinct destinations one command's record keeps.
const MAX_RECORDED: usize = 32;
/// How a recorded destination is written on the report pipe: `connect <ip> <port>`.
pub const REPORT_PREFIX: &str = "connect ";

const AUDIT_ARCH: u32 = if cfg!(target_arch = "x86_64") {
    0xC000_003E
} else if cfg!(target_arch = "aarch64") {
    0xC000_00B7
} else {
    0
};

/// The two ends of the channel the listener crosses, made before the command's process is.
pub(super) struct Channel {
    ours: UnixStream,
    theirs: OwnedFd,
}

/// A channel for a run whose network is not open (an open run has nothing to record), on a
/// kernel that can tell us (the filter is installed anyway; an error there is the report's).
pub(super) fn channel(spec: &Spec) -> Option<Channel> {
    if spec.network == NetworkMode::Open || AUDIT_ARCH == 0 {
        return None;
    }
    let (ours, theirs) = UnixStream::pair().ok()?;
    let theirs = OwnedFd::from(theirs);
    // SAFETY: fcntl on a descriptor we own: the command never holds it past `exec`.
    unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    Some(Channel { ours, theirs })
}

impl Channel {
    /// The end the command's process sends the listener on.
    pub(super) fn theirs(&self) -> RawFd {
        self.theirs.as_raw_fd()
    }

    /// In the helper, once the command's process exists: serve its notifications on a thread
    /// (the helper forks nothing after this).
    pub(super) fn watch(self, spec: &Spec) -> Watcher {
        let Channel { ours, theirs } = self;
        drop(theirs);
        let policy = Policy::of(spec);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread =
            std::thread::Builder::new().name("connects".into()).spawn(move || serve(&ours, &policy, &flag)).ok();
        Watcher { stop, thread }
    }
}

/// The thread serving a run's notifications.
pub(super) struct Watcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Record>>,
}

impl Watcher {
    /// After the command (and everything it started) has ended: the destinations it tried.
    pub(super) fn finish(self) -> Vec<SocketAddr> {
        self.stop.store(true, Ordering::Relaxed);
        let record = self.thread.and_then(|t| t.join().ok()).unwrap_or_default();
        record.destinations()
    }
}

/// Whom a connection may reach without being a destination outside the run.
struct Policy {
    tier: Tier,
    /// The egress proxy's port(s) on loopback (`allowlist`).
    proxy_ports: Vec<u16>,
}

impl Policy {
    fn of(spec: &Spec) -> Policy {
        let proxy_ports = match (spec.network, spec.tier) {
            (NetworkMode::Allowlist, Tier::Namespaces) => vec![INSIDE_PROXY_PORT],
            (NetworkMode::Allowlist, Tier::Landlock) => spec.proxy_port.into_iter().collect(),
            _ => Vec::new(),
        };
        Policy { tier: spec.tier, proxy_ports }
    }

    fn is_proxy(&self, addr: &SocketAddr) -> bool {
        addr.ip().to_canonical().is_loopback() && self.proxy_ports.contains(&addr.port())
    }
}

#[derive(Default)]
struct Record {
    tried: Vec<SocketAddr>,
    /// Ports the run bound: its own servers, on loopback or every address.
    bound: BTreeSet<u16>,
}

impl Record {
    fn tried(&mut self, addr: SocketAddr) {
        if self.tried.len() < MAX_RECORDED && !self.tried.contains(&addr) {
            self.tried.push(addr);
        }
    }

    /// A loopback port the run served itself is not a destination outside it, whether the
    /// connection came before the server was listening or after.
    fn destinations(self) -> Vec<SocketAddr> {
        let bound = self.bound;
        self.tried.into_iter().filter(|a| !(a.ip().to_canonical().is_loopback() && bound.contains(&a.port()))).collect()
    }
}

/// One line per destination, for the report pipe.
pub(super) fn report_lines(tried: &[SocketAddr]) -> String {
    tried.iter().map(|a| format!("{REPORT_PREFIX}{} {}\n", a.ip(), a.port())).collect()
}

/// Reads one report line back (`None` for any other line).
pub fn parse_report_line(line: &str) -> Option<SocketAddr> {
    let rest = line.strip_prefix(REPORT_PREFIX)?;
    let (ip, port) = rest.trim().split_once(' ')?;
    Some(SocketAddr::new(ip.parse().ok()?, port.parse().ok()?))
}

// ---- in the command's process ----

/// Installs the notifying filter on this thread and sends its listener over `channel`, then
/// closes both: the command never holds the listener (it could answer itself). Needs
/// no_new_privs.
pub(super) fn install(channel: RawFd) -> Result<(), String> {
    let program = filter_program();
    let prog = libc::sock_fprog { len: program.len() as u16, filter: program.as_ptr().cast_mut() };
    // SAFETY: the program outlives the call; the kernel copies it.
    let listener = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        )
    };
    let sent = if listener < 0 {
        Err(format!("seccomp (connection record): {}", std::io::Error::last_os_error()))
    } else {
        // SAFETY: the kernel just returned this descriptor to us alone.
        let listener = unsafe { OwnedFd::from_raw_fd(listener as RawFd) };
        super::fdpass::send(channel, listener.as_raw_fd())
            .map_err(|e| format!("cannot hand over the connection record's listener: {e}"))
    };
    // SAFETY: the channel's end is ours to close; nothing uses it after this. Closed either
    // way, so the helper's watcher stops waiting for a listener that will not come.
    unsafe { libc::close(channel) };
    sent
}

/// `connect` and `bind` notify; everything else (and another architecture's calls) passes to
/// the other filter's judgement.
fn filter_program() -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    vec![
        op(LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        op(JEQ_K, 1, 0, AUDIT_ARCH),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        op(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        op(JEQ_K, 2, 0, libc::SYS_connect as u32),
        op(JEQ_K, 1, 0, libc::SYS_bind as u32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        op(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
    ]
}

// ---- in the helper ----

fn serve(channel: &UnixStream, policy: &Policy, stop: &AtomicBool) -> Record {
    let mut record = Record::default();
    let Ok(Some(listener)) = super::fdpass::receive(channel) else { return record };
    while !stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd we own.
        let ready = unsafe { libc::poll(&mut poll, 1, 100) };
        if ready <= 0 {
            continue;
        }
        if poll.revents & libc::POLLIN == 0 {
            // Every process of the run has ended (POLLHUP): nothing more can come.
            break;
        }
        // SAFETY: a zeroed notification the kernel fills (it requires zeroes on input).
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl writes the struct we own.
        if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) } != 0 {
            continue; // the caller died meanwhile (ENOENT), or a signal interrupted
        }
        let addr = read_sockaddr(&notif).filter(|_| still_waiting(&listener, notif.id));
        let refuse = match addr {
            Some(addr) => decide(policy, &mut record, notif.data.nr as i64, addr),
            None => false,
        };
        let resp = libc::seccomp_notif_resp {
            id: notif.id,
            val: 0,
            error: if refuse { -libc::ECONNREFUSED } else { 0 },
            flags: if refuse { 0 } else { libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 },
        };
        // SAFETY: the ioctl reads the struct we own; a caller gone meanwhile is ENOENT.
        unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
    }
    record
}

/// Records the call and says whether to refuse it here (second tier, outside the proxy).
fn decide(policy: &Policy, record: &mut Record, nr: i64, addr: SocketAddr) -> bool {
    if nr == libc::SYS_bind {
        record.bound.insert(addr.port());
        return false;
    }
    if policy.is_proxy(&addr) {
        return false;
    }
    record.tried(addr);
    policy.tier == Tier::Landlock
}

/// The notification is still for a live call (the pid was not reused while we read).
fn still_waiting(listener: &OwnedFd, id: u64) -> bool {
    // SAFETY: the ioctl reads the id we own.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

/// The IPv4 or IPv6 address a `connect`/`bind` names, read from the caller's memory; `None`
/// for other families (Unix sockets are not destinations outside the run).
fn read_sockaddr(notif: &libc::seccomp_notif) -> Option<SocketAddr> {
    let pointer = notif.data.args[1];
    let len = usize::try_from(notif.data.args[2]).ok()?.min(28);
    if pointer == 0 || len < 2 {
        return None;
    }
    let mut bytes = [0u8; 28];
    let local = libc::iovec { iov_base: bytes.as_mut_ptr().cast(), iov_len: len };
    let remote = libc::iovec { iov_base: pointer as *mut libc::c_void, iov_len: len };
    // SAFETY: reads at most `len` bytes of the caller's memory into our buffer of 28.
    let n = unsafe { libc::process_vm_readv(notif.pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    let n = usize::try_from(n).ok()?;
    parse_sockaddr(&bytes[..n])
}

/// `sockaddr_in` / `sockaddr_in6` in the machine's byte order for the family, network order
/// for the port and address.
fn parse_sockaddr(bytes: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]));
    let port = u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?]);
    let ip = match family {
        libc::AF_INET => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes.get(4..8)?).ok()?)),
        libc::AF_INET6 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(bytes.get(8..24)?).ok()?)),
        _ => return None,
    };
    Some(SocketAddr::new(ip.to_canonical(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        b.extend(port.to_be_bytes());
        b.extend(ip);
        b.extend([0u8; 8]);
        b
    }

    #[test]
    fn addresses_are_read_in_both_families_and_others_are_not() {
        assert_eq!(parse_sockaddr(&v4([127, 0, 0, 1], 8080)), Some("127.0.0.1:8080".parse().unwrap()));
        let mut six = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        six.extend(443u16.to_be_bytes());
        six.extend([0u8; 4]);
        six.extend(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets());
        six.extend([0u8; 4]);
        assert_eq!(parse_sockaddr(&six), Some("[2001:db8::1]:443".parse().unwrap()));
        let mut mapped = six.clone();
        mapped[8..24].copy_from_slice(&Ipv4Addr::new(10, 0, 0, 2).to_ipv6_mapped().octets());
        assert_eq!(parse_sockaddr(&mapped), Some("10.0.0.2:443".parse().unwrap()), "v4-mapped reads as IPv4");
        let mut unix = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        unix.extend(b"/run/x.sock");
        assert_eq!(parse_sockaddr(&unix), None);
        assert_eq!(parse_sockaddr(&v4([1, 2, 3, 4], 80)[..6]), None, "a short address is not read");
    }

    #[test]
    fn the_proxy_and_the_runs_own_servers_are_not_destinations() {
        let policy = Policy { tier: Tier::Namespaces, proxy_ports: vec![INSIDE_PROXY_PORT] };
        let mut record = Record::default();
        let proxy = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), INSIDE_PROXY_PORT);
        assert!(!decide(&policy, &mut record, libc::SYS_connect, proxy));
        let own: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        assert!(!decide(&policy, &mut record, libc::SYS_connect, own), "the first tier lets the kernel answer");
        assert!(!decide(&policy, &mut record, libc::SYS_bind, "0.0.0.0:5000".parse().unwrap()));
        let index: SocketAddr = "127.0.0.1:8000".parse().unwrap();
        decide(&policy, &mut record, libc::SYS_connect, index);
        decide(&policy, &mut record, libc::SYS_connect, index);
        decide(&policy, &mut record, libc::SYS_connect, "93.184.215.14:443".parse().unwrap());
        assert_eq!(record.destinations(), vec![index, "93.184.215.14:443".parse().unwrap()]);
    }

    #[test]
    fn the_second_tier_refuses_all_but_the_proxy() {
        let policy = Policy { tier: Tier::Landlock, proxy_ports: vec![41000] };
        let mut record = Record::default();
        assert!(!decide(&policy, &mut record, libc::SYS_connect, "127.0.0.1:41000".parse().unwrap()));
        assert!(decide(&policy, &mut record, libc::SYS_connect, "127.0.0.1:8000".parse().unwrap()));
        assert!(decide(&policy, &mut record, libc::SYS_connect, "10.0.0.1:41000".parse().unwrap()));
        assert_eq!(record.destinations().len(), 2);
    }

    #[test]
    fn report_lines_read_back() {
        let tried: Vec<SocketAddr> = vec!["127.0.0.1:8000".parse().unwrap(), "[2001:db8::1]:443".parse().unwrap()];
        let text = report_lines(&tried);
        assert_eq!(text.lines().filter_map(parse_report_line).collect::<Vec<_>>(), tried);
        assert_eq!(parse_report_line("the sandbox could not be built"), None);
        assert_eq!(parse_report_line("connect nonsense 80"), None);
    }

    #[test]
    fn at_most_the_cap_is_kept() {
        let mut record = Record::default();
        for port in 0..100 {
            record.tried(SocketAddr::new(Ipv4Addr::new(10, 0, 0, 1).into(), port));
        }
        assert_eq!(record.destinations().len(), MAX_RECORDED);
    }
}
