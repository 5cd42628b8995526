//! Bounds on a whole run that `RLIMIT_NPROC` cannot give: the kernel never applies that limit
//! to root, so a run started by root is moved (the command's process, before it runs anything)
//! into a cgroup of its own with `pids.max` (and `memory.max` when the profile asks for memory_mb).
//! cgroup v2 at the hierarchy's root, or the v1 `pids`/`memory` hierarchies below the current
//! group. Best effort: what could not be set is reported, never hidden.

use std::fs;
use std::path::{Path, PathBuf};

const V2_ROOT: &str = "/sys/fs/cgroup";
const PREFIX: &str = "forgeloop-sandbox-";

/// Removes the groups left by helpers that died before they could clean up. Only a group whose
/// helper (the pid in its name) is gone: a live helper's group is empty for a moment between
/// `mkdir` and joining it, and removing it then made that run fail (`rmdir` alone does not
/// protect it).
fn sweep(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner(&name.to_string_lossy()) else { continue };
        if !alive(pid) {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// The helper pid in a group name made by [`Limits::enter`].
fn owner(name: &str) -> Option<i32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

fn alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

pub(super) struct Limits {
    /// Groups created for this run.
    created: Vec<PathBuf>,
    pids: bool,
    memory: bool,
    /// RLIMIT_NPROC means nothing: the command keeps root's uid, which the kernel exempts.
    unbounded_uid: bool,
}

impl Limits {
    /// Enters a fresh cgroup when running as root; otherwise rlimits do the job. `drops`: the
    /// command will run as another, unprivileged account, whose RLIMIT_NPROC the kernel applies.
    pub(super) fn enter(max_processes: u64, memory_mb: Option<u64>, drops: bool) -> Limits {
        // SAFETY: geteuid has no arguments and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let mut limits = Limits { created: Vec::new(), pids: false, memory: false, unbounded_uid: root && !drops };
        if !root {
            return limits;
        }
        // Unique even when pids are reused; a helper killed before it could clean up leaves an
        // empty group behind, which the next run removes (`sweep`).
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let name = format!("{PREFIX}{}-{nanos}", std::process::id());
        let memory_bytes = memory_mb.map(|mb| mb.saturating_mul(1024 * 1024));
        let root_dir = Path::new(V2_ROOT);
        if root_dir.join("cgroup.controllers").exists() {
            let enabled = fs::read_to_string(root_dir.join("cgroup.subtree_control")).unwrap_or_default();
            if enabled.split_whitespace().any(|c| c == "pids") {
                let mut settings = vec![("pids.max", max_processes.to_string())];
                settings.extend(memory_bytes.map(|b| ("memory.max", b.to_string())));
                let took = limits.group(root_dir, &name, &settings);
                limits.pids = took[0];
                limits.memory = took.get(1).copied().unwrap_or(false);
            }
        } else {
            if let Some(group) = own_group("pids") {
                let origin = root_dir.join("pids").join(group.trim_start_matches('/'));
                let settings = [("pids.max", max_processes.to_string())];
                limits.pids = limits.group(&origin, &name, &settings)[0];
            }
            if let (Some(bytes), Some(group)) = (memory_bytes, own_group("memory")) {
                let origin = root_dir.join("memory").join(group.trim_start_matches('/'));
                let settings = [("memory.limit_in_bytes", bytes.to_string())];
                limits.memory = limits.group(&origin, &name, &settings)[0];
            }
        }
        limits
    }

    /// Creates `<parent>/<name>` (after sweeping `parent`) and writes `settings` into it.
    /// Which settings took: none when the group could not be made. The command's process is
    /// moved in by [`Limits::admit`]; the helper itself never joins, so it never has to move
    /// back out (a migration costs a grace period of the kernel's cgroup lock, ~1 ms or more).
    fn group(&mut self, parent: &Path, name: &str, settings: &[(&str, String)]) -> Vec<bool> {
        sweep(parent);
        let dir = parent.join(name);
        if fs::create_dir(&dir).is_err() {
            return vec![false; settings.len()];
        }
        let written: Vec<bool> =
            settings.iter().map(|(file, value)| fs::write(dir.join(file), value).is_ok()).collect();
        self.created.push(dir);
        written
    }

    /// Moves `pid` (the command's process, before it runs anything) into every group made for
    /// the run. Its children inherit them.
    pub(super) fn admit(&self, pid: libc::pid_t) -> Result<(), String> {
        for dir in &self.created {
            fs::write(dir.join("cgroup.procs"), pid.to_string())
                .map_err(|e| format!("cannot move the command into its cgroup {}: {e}", dir.display()))?;
        }
        Ok(())
    }

    pub(super) fn process_limit(&self) -> &'static str {
        match (self.pids, self.unbounded_uid) {
            (true, _) => "cgroup",
            // The kernel exempts root from RLIMIT_NPROC.
            (false, true) => "none",
            (false, false) => "rlimit",
        }
    }

    pub(super) fn memory_by_cgroup(&self) -> bool {
        self.memory
    }

    pub(super) fn memory_limit(&self) -> &'static str {
        if self.memory { "cgroup" } else { "rlimit" }
    }

    /// Removes the run's groups, empty once the command's process and all it started are
    /// gone (the kernel may take a moment to release them).
    pub(super) fn leave(self) {
        for dir in &self.created {
            for _ in 0..50 {
                if fs::remove_dir(dir).is_ok() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}

/// This process's group in the hierarchy of `controller` (`""`: the v2 unified hierarchy).
fn own_group(controller: &str) -> Option<String> {
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = if controller.is_empty() {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        matches.then(|| path.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_leaves_the_empty_group_of_a_live_helper_and_removes_a_dead_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = dir.path().join(format!("{PREFIX}{}-1", std::process::id()));
        let left = dir.path().join(format!("{PREFIX}{dead}-2"));
        let other = dir.path().join("someone-elses");
        for d in [&live, &left, &other] {
            fs::create_dir(d).unwrap();
        }
        sweep(dir.path());
        assert!(live.is_dir(), "a group being set up by a live helper was removed");
        assert!(!left.exists(), "a dead helper's group was kept");
        assert!(other.is_dir());
        assert_eq!(owner("forgeloop-sandbox-42-1700000000"), Some(42));
        assert_eq!(owner("forgeloop-sandbox-x-1"), None);
    }
}
