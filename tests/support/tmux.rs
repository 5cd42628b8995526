//! A real terminal for tests: a private tmux server running one command.
#![allow(dead_code)]

use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` (a shell command line) in a detached session of the given size.
    pub fn start(command: &str, width: u16, height: u16) -> Tmux {
        let socket = format!("forgeloop-test-{}-{}", std::process::id(), rand_suffix());
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg(command)
            .status()
            .expect("tmux must be installed for terminal tests");
        assert!(status.success(), "tmux new-session failed");
        // Keep the pane after the command exits so its last screen can be read.
        let _ = Command::new("tmux").args(["-L", &socket, "set-option", "-t", "t", "remain-on-exit", "on"]).status();
        Tmux { socket }
    }

    pub fn send_keys(&self, keys: &[&str]) {
        let status =
            Command::new("tmux").args(["-L", &self.socket, "send-keys", "-t", "t"]).args(keys).status().unwrap();
        assert!(status.success());
    }

    /// Copies every byte the program writes to the terminal from now on into `file` (to see
    /// what a screen capture cannot: bells, OSC sequences).
    pub fn record_output(&self, file: &std::path::Path) {
        let sink = format!("cat >> {}", sh_quote(&file.display().to_string()));
        let status =
            Command::new("tmux").args(["-L", &self.socket, "pipe-pane", "-o", "-t", "t", &sink]).status().unwrap();
        assert!(status.success());
    }

    pub fn capture(&self) -> String {
        let out = Command::new("tmux").args(["-L", &self.socket, "capture-pane", "-p", "-t", "t"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (up to `limit`) until the screen contains `needle`; returns the screen.
    pub fn wait_for(&self, needle: &str, limit: Duration) -> String {
        self.wait_until(&format!("{needle:?}"), limit, |screen| screen.contains(needle))
    }

    /// Waits (up to `limit`) until the screen is as `done` says (`what` names it in the
    /// failure): the screen redraws in parts, so a test asserting two things of one screen
    /// waits for both at once.
    pub fn wait_until(&self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if done(&screen) {
                return screen;
            }
            if start.elapsed() > limit {
                panic!("{what} did not appear within {limit:?}; screen:\n{screen}");
            }
            sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// Quotes a string for a POSIX shell command line.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
