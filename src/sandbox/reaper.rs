//! The second tier's guarantee that nothing outlives a run: the helper is a child subreaper, so
//! every orphan of the run (a `setsid` daemon, a double fork) becomes its child; when the
//! command ends, every descendant is killed and reaped.

use std::collections::HashMap;

/// Upper bound on kill rounds (each round kills all descendants found; a fork bomb may need a
/// few while its last members start).
const MAX_ROUNDS: usize = 10_000;

/// Kills and reaps every descendant of this process.
pub(super) fn kill_descendants() {
    let me = std::process::id() as i32;
    for _ in 0..MAX_ROUNDS {
        reap_all();
        let found = descendants(me);
        if found.is_empty() {
            return;
        }
        for pid in found {
            // SAFETY: kill with integer arguments; every pid is a live descendant we reap.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Reaps every child that has exited, without blocking.
pub(super) fn reap_all() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status we own.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// Live (not zombie) descendants of `root`, from the parent links in `/proc`.
fn descendants(root: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut parent_of: HashMap<i32, i32> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let mut fields = after.split_whitespace();
        let (Some(state), Some(ppid)) = (fields.next(), fields.next().and_then(|p| p.parse().ok())) else {
            continue;
        };
        if state != "Z" && state != "X" {
            parent_of.insert(pid, ppid);
        }
    }
    parent_of
        .keys()
        .copied()
        .filter(|&pid| {
            let mut at = pid;
            for _ in 0..4096 {
                match parent_of.get(&at) {
                    Some(&parent) if parent == root => return true,
                    Some(&parent) if parent > 1 => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}
