//! Running one command: argv only, its own process group, one pipe for stdout and stderr (so
//! the log shows them in the order they were written), a timeout that takes down the whole
//! group (SIGTERM, then SIGKILL after a grace period), and no stragglers: once the main
//! process exits, whatever is left of its group is terminated the same way, and a pipe held
//! open by an escaped grandchild stops being read after a short drain.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};

use super::output::OutputSink;
use crate::egress::EgressProxy;
use crate::sandbox::connects;
use crate::sandbox::fdpass as sandbox_fdpass;
use crate::sandbox::{EXIT_SANDBOX_FAILED, PROXY_FD_ENV, REPORT_FD_ENV, SPEC_FD_ENV, spec_fd};

/// Bytes read from the pipe at a time.
const READ_CHUNK: usize = 64 * 1024;
/// How long to keep reading after the group is gone or killed, for a pipe still held open by a
/// process that left the group (e.g. a daemon that called `setsid`).
pub(super) const DRAIN: Duration = Duration::from_millis(500);
/// How often to look whether leftover group members have exited.
const GROUP_POLL: Duration = Duration::from_millis(25);

pub(super) struct Spawn<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, String>,
    pub cwd: &'a Path,
    pub timeout: Duration,
    pub grace: Duration,
    /// The program is the sandbox helper: give it a report pipe (design §5.6).
    pub reports: bool,
    /// The helper's spec, passed on a sealed descriptor (never in its command line).
    pub spec: Option<&'a [u8]>,
    /// The helper hands back the egress proxy's socket made inside the command's network
    /// namespace; served by this proxy for this phase.
    pub proxy: Option<(&'a EgressProxy, &'a str)>,
}

#[derive(Debug)]
pub(super) enum Outcome {
    /// The program could not be started (not found, not executable, ...).
    NotStarted(io::Error),
    Finished {
        /// `None` when the exit status could not be collected.
        status: Option<ExitStatus>,
        timed_out: bool,
        cancelled: bool,
        /// From spawn until the main process exited.
        elapsed: Duration,
        /// What the sandbox helper reported on its pipe: the sandbox could not be built, so
        /// the command never ran.
        sandbox_failure: Option<String>,
        /// The destinations outside the sandbox the command tried to reach (design §5.6).
        tried: Vec<SocketAddr>,
    },
}

#[derive(Debug, thiserror::Error)]
pub(super) enum ExecError {
    #[error("could not create the pipe for a test command's output: {0}; the process may be out of file descriptors")]
    Pipe(#[source] io::Error),
    #[error("could not write a test command's output to the log: {0}")]
    Log(#[source] io::Error),
}

/// Cancellation as seen by the runner: fires once the channel holds `true`. A dropped sender
/// never cancels.
pub(super) struct Cancel {
    rx: Option<watch::Receiver<bool>>,
}

impl Cancel {
    pub(super) fn new(rx: Option<watch::Receiver<bool>>) -> Cancel {
        Cancel { rx }
    }

    pub(super) fn is_cancelled(&self) -> bool {
        self.rx.as_ref().is_some_and(|rx| *rx.borrow())
    }

    async fn cancelled(&mut self) {
        loop {
            let Some(rx) = self.rx.as_mut() else { return std::future::pending().await };
            if *rx.borrow_and_update() {
                return;
            }
            if rx.changed().await.is_err() {
                self.rx = None;
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Timeout,
    Cancel,
    LogFailed,
}

/// Runs one command to the end, streaming its output into `sink`.
pub(super) async fn execute(
    spec: Spawn<'_>,
    cancel: &mut Cancel,
    sink: &mut OutputSink<'_>,
) -> Result<Outcome, ExecError> {
    if spec.program.as_os_str().is_empty() {
        return Ok(Outcome::NotStarted(io::Error::new(io::ErrorKind::InvalidInput, "empty argv")));
    }
    let (reader, writer) = io::pipe().map_err(ExecError::Pipe)?;
    let mut output = pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(ExecError::Pipe)?;
    // Both ends are close-on-exec; the helper's copy of the write end is made inheritable in
    // the child only.
    let report = if spec.reports { Some(io::pipe().map_err(ExecError::Pipe)?) } else { None };
    let spec_file = spec.spec.map(spec_fd::sealed).transpose().map_err(ExecError::Pipe)?;
    let proxy_pair = match spec.proxy {
        Some(_) => Some(std::os::unix::net::UnixStream::pair().map_err(ExecError::Pipe)?),
        None => None,
    };
    let spawned = {
        let writer_for_stderr = writer.try_clone().map_err(ExecError::Pipe)?;
        let mut command = tokio::process::Command::new(spec.program);
        command
            .args(spec.args)
            .current_dir(spec.cwd)
            .env_clear()
            .envs(spec.env)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(writer_for_stderr)
            .kill_on_drop(true);
        let report_fd = report.as_ref().map(|(_, w)| w.as_raw_fd());
        if let Some(fd) = report_fd {
            command.env(REPORT_FD_ENV, fd.to_string());
        }
        let spec_raw = spec_file.as_ref().map(AsRawFd::as_raw_fd);
        if let Some(fd) = spec_raw {
            command.env(SPEC_FD_ENV, fd.to_string());
        }
        let proxy_raw = proxy_pair.as_ref().map(|(_, theirs)| theirs.as_raw_fd());
        if let Some(fd) = proxy_raw {
            command.env(PROXY_FD_ENV, fd.to_string());
        }
        // A session of its own (and so a process group whose id is its pid): no controlling
        // terminal, so a test cannot open /dev/tty and push keystrokes (TIOCSTI) into the
        // person's shell.
        // SAFETY: setsid and fcntl are async-signal-safe and touch no memory of the parent.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(fd) = report_fd
                    && libc::fcntl(fd, libc::F_SETFD, 0) < 0
                {
                    return Err(io::Error::last_os_error());
                }
                for fd in [spec_raw, proxy_raw].into_iter().flatten() {
                    spec_fd::inherit(fd)?;
                }
                Ok(())
            });
        }
        command.spawn()
        // `command` drops here, closing our copies of the write end: EOF then means every
        // process holding the pipe has exited.
    };
    drop(spec_file);
    let proxy_channel = proxy_pair.map(|(ours, _theirs)| ours);
    let report = report.map(|(reader, _writer)| reader);
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => return Ok(Outcome::NotStarted(error)),
    };
    let started = Instant::now();
    // The egress proxy's socket, made inside the command's network namespace before the
    // command starts: served from here (the helper closes the channel either way).
    if let (Some((proxy, phase)), Some(channel)) = (spec.proxy, proxy_channel) {
        let received = tokio::task::spawn_blocking(move || sandbox_fdpass::receive(&channel)).await;
        if let Ok(Ok(Some(fd))) = received {
            let _ = proxy.serve(std::net::TcpListener::from(fd), phase);
        }
    }
    // The child is the leader of a new group whose id is its pid.
    let mut group = Group { pgid: child.id().and_then(|id| i32::try_from(id).ok()).unwrap_or(0), armed: true };
    let deadline = started.checked_add(spec.timeout).unwrap_or_else(far_future);

    let mut buf = vec![0u8; READ_CHUNK];
    let mut status: Option<Option<ExitStatus>> = None;
    let mut elapsed = Duration::ZERO;
    let mut stop: Option<Stop> = None;
    let mut log_error: Option<io::Error> = None;
    let mut term_sent: Option<Instant> = None;
    let mut killed = false;
    let mut group_empty = false;
    // Looking for group members scans /proc, so it is rate-limited (and done at once on EOF).
    let mut next_group_check = started;
    let mut eof = false;
    let mut drain_until: Option<Instant> = None;
    let mut cancel_seen = false;

    loop {
        let now = Instant::now();
        if status.is_some() && !group_empty && now >= next_group_check {
            next_group_check = now + GROUP_POLL;
            if !group.has_live_members() {
                group_empty = true;
            } else if term_sent.is_none() {
                // The main process is done; its leftovers (a background daemon, say) go too.
                group.signal(libc::SIGTERM);
                term_sent = Some(now);
            }
        }
        if status.is_some() && (group_empty || killed) {
            // Done once the group is gone and the pipe is drained. After SIGKILL, wait (briefly)
            // to see the group gone too: the pipe closes a moment before a killed process
            // finishes exiting, and a caller may check right away that nothing is left.
            if group_empty && eof {
                break;
            }
            let until = *drain_until.get_or_insert(now + DRAIN);
            if now >= until {
                break;
            }
        }

        let mut wake = far_future();
        if status.is_none() && stop.is_none() {
            wake = wake.min(deadline);
        }
        if let Some(sent) = term_sent.filter(|_| !killed) {
            wake = wake.min(sent + spec.grace);
        }
        if status.is_some() && !group_empty {
            wake = wake.min(next_group_check);
        }
        if let Some(until) = drain_until {
            wake = wake.min(until);
        }

        tokio::select! {
            read = output.read(&mut buf), if !eof => match read {
                Ok(0) => {
                    eof = true;
                    next_group_check = Instant::now();
                }
                Ok(n) => {
                    if log_error.is_none()
                        && let Err(error) = sink.push(&buf[..n])
                    {
                        // Nothing can be recorded any more: stop the command (SIGTERM first, so
                        // the sandbox helper can take down what the command left, then SIGKILL
                        // after the grace period).
                        log_error = Some(error);
                        stop.get_or_insert(Stop::LogFailed);
                        if term_sent.is_none() {
                            group.signal(libc::SIGTERM);
                            term_sent = Some(Instant::now());
                        }
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    eof = true;
                    next_group_check = Instant::now();
                }
            },
            waited = child.wait(), if status.is_none() => {
                status = Some(waited.ok());
                elapsed = started.elapsed();
            }
            () = sleep_until(wake) => {
                let now = Instant::now();
                if status.is_none() && stop.is_none() && now >= deadline {
                    stop = Some(Stop::Timeout);
                    group.signal(libc::SIGTERM);
                    term_sent = Some(now);
                }
                if let Some(sent) = term_sent
                    && !killed
                    && now >= sent + spec.grace
                {
                    group.signal(libc::SIGKILL);
                    killed = true;
                }
            }
            () = cancel.cancelled(), if !cancel_seen => {
                cancel_seen = true;
                stop.get_or_insert(Stop::Cancel);
                if term_sent.is_none() {
                    group.signal(libc::SIGTERM);
                    term_sent = Some(Instant::now());
                }
            }
        }
    }
    group.armed = false;

    if let Some(error) = log_error {
        return Err(ExecError::Log(error));
    }
    let status = status.flatten();
    let report = report.as_ref().map(read_report).unwrap_or_default();
    let tried = report.lines().filter_map(connects::parse_report_line).collect();
    // Only a helper that ended with its own exit code can have failed to build the sandbox.
    let sandbox_failure = match status.and_then(|s| s.code()) {
        Some(EXIT_SANDBOX_FAILED) => report
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && connects::parse_report_line(line).is_none())
            .map(str::to_owned),
        _ => None,
    };
    Ok(Outcome::Finished {
        status,
        timed_out: stop == Some(Stop::Timeout),
        cancelled: stop == Some(Stop::Cancel),
        elapsed,
        sandbox_failure,
        tried,
    })
}

/// What the helper wrote on its report pipe, without blocking (a writer left open would be a
/// helper's fork that never reached `exec`; the group is gone by now): a failure line, or the
/// destinations the command tried ([`connects::report_lines`]).
fn read_report(reader: &io::PipeReader) -> String {
    let fd = reader.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let mut bytes = Vec::new();
    let mut reader = reader;
    let mut chunk = [0u8; 1024];
    while bytes.len() < 16 * 1024 {
        match io::Read::read(&mut reader, &mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}

/// A command's process group. Dropped while armed (the run's future was dropped mid-command),
/// it SIGKILLs the whole group so nothing outlives the run.
struct Group {
    pgid: i32,
    armed: bool,
}

impl Group {
    fn signal(&self, signal: libc::c_int) {
        // pgid 0 or 1 would mean our own group or init's: never signal those.
        if self.pgid > 1 {
            // SAFETY: killpg only reads its two integer arguments. The group id was the
            // leader's pid; it cannot be reused while any member is alive, and a dead group's
            // id could only be reused after a pid wraparound within this short window.
            unsafe {
                libc::killpg(self.pgid, signal);
            }
        }
    }

    /// Whether any process of the group still runs. Zombies do not count: an orphan's zombie
    /// lingers when init does not reap (some containers), yet it holds nothing open.
    fn has_live_members(&self) -> bool {
        if self.pgid <= 1 {
            return false;
        }
        // SAFETY: as above; signal 0 only checks for existence.
        let exists = unsafe { libc::killpg(self.pgid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        exists && any_live_process_in_group(self.pgid)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            // SIGTERM lets the sandbox helper kill what the command left behind; SIGKILL
            // follows shortly from a thread of its own (a drop cannot wait).
            self.signal(libc::SIGTERM);
            let pgid = self.pgid;
            let _ = std::thread::Builder::new().name("forgeloop-group-kill".into()).spawn(move || {
                std::thread::sleep(Duration::from_millis(500));
                Group { pgid, armed: false }.signal(libc::SIGKILL);
            });
        }
    }
}

#[cfg(target_os = "linux")]
fn any_live_process_in_group(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return true };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) {
            return false;
        }
        std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
            .is_some_and(|(state, group)| group == pgid && !matches!(state, 'Z' | 'X'))
    })
}

/// Elsewhere a zombie counts as alive; the kill after the grace period still bounds the wait.
#[cfg(not(target_os = "linux"))]
fn any_live_process_in_group(_pgid: i32) -> bool {
    true
}

/// State and process group from `/proc/<pid>/stat`: `pid (comm) state ppid pgrp ...`, where
/// `comm` may itself contain spaces and parentheses.
#[cfg(target_os = "linux")]
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_even_with_odd_command_names() {
        assert_eq!(parse_stat("42 (sleep) S 1 42 42 0 -1"), Some(('S', 42)));
        assert_eq!(parse_stat("42 (a) b (c)) Z 1 77 42 0"), Some(('Z', 77)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
