//! The system calls a sandboxed command may not make, in both tiers (design §5.6), installed
//! last, just before `exec`:
//!
//! * the kernel keyrings (`keyctl`, `add_key`, `request_key`): the person's session, user and
//!   persistent keyrings (Kerberos credential caches live there) are out of reach, as in
//!   Docker's default profile;
//! * setuid and setgid files (`chmod`, `fchmod`, `fchmodat`, `fchmodat2`, and `open`, `openat`,
//!   `creat` asking for those bits): a file the test makes can never run as its owner for
//!   someone else, `mknod` and `mknodat` included; device nodes (`mknod` of a character or block
//!   device);
//! * io_uring, which can reach files and sockets without the calls above;
//! * IPv4 and IPv6 stream sockets of any protocol but TCP (MPTCP, SCTP), in every tier;
//! * in the second tier, other network sockets (and Unix sockets where Landlock cannot scope
//!   them), and TCP Fast Open's connect inside `sendto`/`sendmsg`.
//!
//! `openat2` is answered "not implemented" (its mode is inside a structure a filter cannot
//! read); C libraries then use `openat`.

use std::collections::BTreeMap;

use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};

/// `fchmodat2` (Linux 6.6), not yet named by every libc release; the same number on x86_64 and
/// aarch64 (the generic table).
const SYS_FCHMODAT2: i64 = 452;
const S_ISUID: u64 = 0o4000;
const S_ISGID: u64 = 0o2000;
const S_IFMT: u64 = 0o170000;
const S_IFCHR: u64 = 0o020000;
const S_IFBLK: u64 = 0o060000;

/// Which socket families a command may create (the second tier has no network namespace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SocketFamilies {
    Any,
    /// Unix, and TCP over IPv4 and IPv6 (which Landlock's port rules confine to the proxy);
    /// no UDP, raw or other families, which Landlock cannot see.
    TcpAndUnix,
    UnixOnly,
}

/// What the filter refuses besides the calls every run loses.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sockets {
    pub network: SocketFamilies,
    /// Unix sockets (second tier where Landlock cannot confine them by path).
    pub unix: bool,
    /// `sendto`/`sendmsg` with `MSG_FASTOPEN`: TCP Fast Open connects inside the send, past the
    /// `connect` the second tier's Landlock rules and connection record see.
    pub refuse_fast_open: bool,
}

/// Installs the filters on this thread (inherited by the command). Needs no_new_privs.
pub(super) fn install(sockets: Sockets) -> Result<(), String> {
    apply(refusals(sockets)?, libc::EPERM)?;
    apply(BTreeMap::from([(libc::SYS_openat2, Vec::new())]), libc::ENOSYS)
}

fn apply(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<(), String> {
    let arch = std::env::consts::ARCH.try_into().map_err(|e: seccompiler::BackendError| e.to_string())?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
        .map_err(|e| e.to_string())?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))
}

fn refusals(sockets: Sockets) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
        rules.insert(call, Vec::new());
    }
    for call in [libc::SYS_io_uring_setup, libc::SYS_io_uring_enter, libc::SYS_io_uring_register] {
        rules.insert(call, Vec::new());
    }
    // (call, index of its mode argument)
    let mut modes = vec![(libc::SYS_fchmod, 1), (libc::SYS_fchmodat, 2), (SYS_FCHMODAT2, 2), (libc::SYS_openat, 3)];
    #[cfg(target_arch = "x86_64")]
    modes.extend([(libc::SYS_chmod, 1), (libc::SYS_open, 2), (libc::SYS_creat, 1)]);
    for (call, arg) in modes {
        rules.insert(call, vec![masked(arg, S_ISUID, S_ISUID)?, masked(arg, S_ISGID, S_ISGID)?]);
    }
    let mut nodes = vec![(libc::SYS_mknodat, 2)];
    #[cfg(target_arch = "x86_64")]
    nodes.push((libc::SYS_mknod, 1));
    for (call, arg) in nodes {
        // A regular file made by mknod carries the mode's set-id bits like one made by open.
        let refused = vec![
            masked(arg, S_IFMT, S_IFCHR)?,
            masked(arg, S_IFMT, S_IFBLK)?,
            masked(arg, S_ISUID, S_ISUID)?,
            masked(arg, S_ISGID, S_ISGID)?,
        ];
        rules.insert(call, refused);
    }
    let on_family = |op, family: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, family as u64).map_err(|e| e.to_string())
    };
    let rule = |conditions: Vec<SeccompCondition>| SeccompRule::new(conditions).map_err(|e| e.to_string());
    let mut socket = Vec::new();
    // A stream socket of IPv4 or IPv6 is TCP or nothing: MPTCP and SCTP are streams too, and
    // Landlock's port rules (the second tier's fence around the proxy) cover TCP alone. Every
    // tier and phase refuses them, so no network mode depends on which protocols a kernel has.
    if sockets.network != SocketFamilies::UnixOnly {
        for family in [libc::AF_INET, libc::AF_INET6] {
            let stream = SeccompCondition::new(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_STREAM as u64,
            )
            .map_err(|e| e.to_string())?;
            let protocol = |op, value: i32| {
                SeccompCondition::new(2, SeccompCmpArgLen::Dword, op, value as u64).map_err(|e| e.to_string())
            };
            socket.push(rule(vec![
                on_family(SeccompCmpOp::Eq, family)?,
                stream,
                protocol(SeccompCmpOp::Ne, 0)?,
                protocol(SeccompCmpOp::Ne, libc::IPPROTO_TCP)?,
            ])?);
        }
    }
    match sockets.network {
        SocketFamilies::Any => {}
        SocketFamilies::UnixOnly => socket.push(rule(vec![on_family(SeccompCmpOp::Ne, libc::AF_UNIX)?])?),
        SocketFamilies::TcpAndUnix => {
            socket.push(rule(vec![
                on_family(SeccompCmpOp::Ne, libc::AF_UNIX)?,
                on_family(SeccompCmpOp::Ne, libc::AF_INET)?,
                on_family(SeccompCmpOp::Ne, libc::AF_INET6)?,
            ])?);
            // The type's low bits (flags such as SOCK_CLOEXEC sit above them): only a stream.
            for family in [libc::AF_INET, libc::AF_INET6] {
                for kind in [libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_SEQPACKET, libc::SOCK_RDM] {
                    let kind =
                        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(0xf), kind as u64)
                            .map_err(|e| e.to_string())?;
                    socket.push(rule(vec![on_family(SeccompCmpOp::Eq, family)?, kind])?);
                }
            }
        }
    }
    if sockets.unix {
        socket.push(rule(vec![on_family(SeccompCmpOp::Eq, libc::AF_UNIX)?])?);
    }
    if !socket.is_empty() {
        rules.insert(libc::SYS_socket, socket);
    }
    if sockets.refuse_fast_open {
        let flags = [(libc::SYS_sendto, 3), (libc::SYS_sendmsg, 2), (libc::SYS_sendmmsg, 3)];
        for (call, arg) in flags {
            let fast_open = libc::MSG_FASTOPEN as u64;
            rules.insert(call, vec![masked(arg, fast_open, fast_open)?]);
        }
    }
    Ok(rules)
}

/// A rule matching when `(argument & mask) == value`.
fn masked(arg: u8, mask: u64, value: u64) -> Result<SeccompRule, String> {
    let condition = SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(mask), value)
        .map_err(|e| e.to_string())?;
    SeccompRule::new(vec![condition]).map_err(|e| e.to_string())
}
