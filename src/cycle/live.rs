//! Whether a cycle is being tested right now, by any process (design §6.6). Nothing new is
//! stored for this: a run is live when the state's `running` entry names the process the
//! kernel says holds the cycle lock. A crashed holder drops its lock with its life, so a stale
//! `running` entry never shows as live. The command being run is read from the live log.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::domain::state::{CycleState, RunningInfo};
use crate::store::holder::lock_holder;
use crate::store::layout::CyclePaths;

/// How much of the log's end is read to find the command in progress.
const LOG_TAIL: u64 = 64 * 1024;

/// A run in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRun {
    /// Who runs it, since when, and on which head, as the cycle's live record says.
    pub info: RunningInfo,
    /// The run log being written (absolute).
    pub log: PathBuf,
    /// The command in progress as its log header shows it (already redacted by the runner);
    /// `None` while the PR is still being fetched.
    pub command: Option<String>,
    /// A wait for the repository's CI (design §5.7): each wanted check's last state from the
    /// log's progress lines, in the order they first showed.
    pub checks: Option<Vec<(String, String)>>,
}

/// The run `state` records, if its process still holds the cycle lock.
pub fn probe(paths: &CyclePaths, state: &CycleState) -> Option<LiveRun> {
    let info = state.running.clone()?;
    if holder(paths)? != info.pid {
        return None;
    }
    let log = paths.sidecar().join(&info.log_path);
    if info.executor.as_deref() == Some("github-checks") {
        let checks = Some(check_states(&log));
        return Some(LiveRun { info, log, command: None, checks });
    }
    let command = current_command(&log);
    Some(LiveRun { info, log, command, checks: None })
}

/// The pid holding the cycle lock. Where the kernel publishes no lock table, the pid recorded
/// in the lock file is trusted while that process lives.
pub fn holder(paths: &CyclePaths) -> Option<u32> {
    let lock = paths.lock();
    match lock_holder(&lock) {
        Ok(pid) => pid,
        Err(_) => recorded_pid(&lock).filter(|pid| is_alive(*pid)),
    }
}

fn recorded_pid(lock: &Path) -> Option<u32> {
    let mut text = String::new();
    File::open(lock).ok()?.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Whether a process with this pid exists (signal 0 checks without sending anything).
pub fn is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// The last `$ …` section header of a run log.
fn current_command(log: &Path) -> Option<String> {
    let text = log_tail(log)?;
    text.lines().rev().find_map(|line| line.strip_prefix("$ ")).map(str::to_owned)
}

/// Each check's last state in a CI wait's log (`check test: in_progress 3m12s` → `test`,
/// `in_progress`), in the order the checks first showed.
fn check_states(log: &Path) -> Vec<(String, String)> {
    let Some(text) = log_tail(log) else { return Vec::new() };
    let mut states: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let Some((name, rest)) = line.strip_prefix("check ").and_then(|l| l.rsplit_once(": ")) else { continue };
        let Some(word) = rest.split_whitespace().next() else { continue };
        match states.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = word.to_owned(),
            None => states.push((name.to_owned(), word.to_owned())),
        }
    }
    states
}

fn log_tail(log: &Path) -> Option<String> {
    let mut file = File::open(log).ok()?;
    let len = file.seek(SeekFrom::End(0)).ok()?;
    file.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.take(LOG_TAIL).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_the_last_section_header() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("1-abc.log");
        assert_eq!(current_command(&log), None, "no log yet: still fetching");
        std::fs::write(&log, "$ cargo build\nok\n[exit 0 after 1.00s]\n\n$ cargo test -- -q\nrunning 3 tests\n")
            .unwrap();
        assert_eq!(current_command(&log).as_deref(), Some("cargo test -- -q"));
    }

    #[test]
    fn a_ci_waits_checks_are_read_from_its_progress_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("1-abc.log");
        assert!(check_states(&log).is_empty());
        std::fs::write(
            &log,
            "forgeloop: waiting for the repository's CI on abc (checks: test, lint)\n\
check test: not_reported\ncheck lint: queued\ncheck test: in_progress 3m12s\ncheck a: b: queued\n",
        )
        .unwrap();
        let states = check_states(&log);
        let pairs: Vec<(&str, &str)> = states.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
        assert_eq!(pairs, [("test", "in_progress"), ("lint", "queued"), ("a: b", "queued")]);
    }

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(is_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_alive(pid));
        assert!(!is_alive(0), "pid 0 would mean our own process group");
        assert!(!is_alive(u32::MAX));
    }
}
