//! Finding the GitHub token (design §2): `GH_TOKEN`, then `GITHUB_TOKEN`, then `gh auth token`
//! when `gh` is on PATH, then the configured `github.token_command`.
//!
//! The environment is a parameter so tests never mutate the process environment. Commands run
//! as argv (never a shell) with a short timeout, so a hung credential helper cannot hang us.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long `gh auth token` or the token command may take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

/// Token output larger than this is not a token.
const MAX_OUTPUT: u64 = 64 * 1024;

/// A token and where it came from. `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub value: String,
    /// `GH_TOKEN`, `GITHUB_TOKEN`, `gh auth token` or `github.token_command`.
    pub source: &'static str,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token").field("value", &"[REDACTED]").field("source", &self.source).finish()
    }
}

/// Looks for a token in the documented order and returns the first non-blank one.
///
/// `env` reads one environment variable (`|k| std::env::var(k).ok()` in production).
/// `web_host` is the host the token is for (`github.com`, or an Enterprise host, see
/// `GithubClient::web_host`); for any other host than github.com, `gh` is asked with
/// `--hostname`. `token_command` is config `github.token_command`. Failing commands are skipped.
pub fn discover(
    env: &dyn Fn(&str) -> Option<String>,
    web_host: &str,
    token_command: Option<&[String]>,
) -> Option<Token> {
    for name in ["GH_TOKEN", "GITHUB_TOKEN"] {
        if let Some(value) = env(name).and_then(|v| clean(&v)) {
            let source = if name == "GH_TOKEN" { "GH_TOKEN" } else { "GITHUB_TOKEN" };
            return Some(Token { value, source });
        }
    }
    if let Some(gh) = env("PATH").and_then(|path| find_on_path(&path, "gh")) {
        let mut argv = vec![gh.to_string_lossy().into_owned(), "auth".to_owned(), "token".to_owned()];
        if !web_host.eq_ignore_ascii_case(crate::domain::pr_ref::GITHUB_WEB_HOST) {
            argv.push("--hostname".to_owned());
            argv.push(web_host.to_owned());
        }
        if let Some(value) = run_capture(&argv, COMMAND_TIMEOUT).and_then(|out| clean(&out)) {
            return Some(Token { value, source: "gh auth token" });
        }
    }
    let argv = token_command.filter(|argv| argv.first().is_some_and(|program| !program.is_empty()))?;
    let value = run_capture(argv, COMMAND_TIMEOUT).and_then(|out| clean(&out))?;
    Some(Token { value, source: "github.token_command" })
}

/// A usable token is one trimmed line without inner whitespace; anything else is not a token
/// (for example an error message printed on stdout).
fn clean(raw: &str) -> Option<String> {
    let value = raw.trim();
    (!value.is_empty() && !value.chars().any(|c| c.is_whitespace() || c.is_control())).then(|| value.to_owned())
}

fn find_on_path(path: &str, program: &str) -> Option<PathBuf> {
    std::env::split_paths(path).filter(|dir| dir.is_absolute()).map(|dir| dir.join(program)).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Runs `argv` with stdin and stderr closed and returns its stdout if it exits 0 in time.
fn run_capture(argv: &[String], timeout: Duration) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.take(MAX_OUTPUT).read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    // A grandchild may hold the pipe open after the command exited; do not wait for it long.
    let out =
        rx.recv_timeout(deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(200))).ok()?;
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |key| map.get(key).cloned()
    }

    /// Installs the script as `gh` through another process (`install`): had this process
    /// written it, a thread of another test forking meanwhile could hold the write descriptor
    /// until it execs, and running the script would fail with "Text file busy" (a flake seen
    /// under load).
    fn fake_gh(dir: &Path, script: &str) {
        let source = dir.join("gh.source");
        std::fs::write(&source, format!("#!/bin/sh\n{script}\n")).unwrap();
        let status = std::process::Command::new("install")
            .args(["-m", "755"])
            .arg(&source)
            .arg(dir.join("gh"))
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn secret(tag: &str) -> String {
        format!("test-{tag}-{}", std::process::id())
    }

    #[test]
    fn gh_token_wins_over_github_token() {
        let (a, b) = (secret("a"), secret("b"));
        let token = discover(&env_of(&[("GH_TOKEN", &a), ("GITHUB_TOKEN", &b)]), "github.com", None).unwrap();
        assert_eq!((token.value.as_str(), token.source), (a.as_str(), "GH_TOKEN"));
        let token = discover(&env_of(&[("GH_TOKEN", "  "), ("GITHUB_TOKEN", &b)]), "github.com", None).unwrap();
        assert_eq!((token.value.as_str(), token.source), (b.as_str(), "GITHUB_TOKEN"));
    }

    #[test]
    fn debug_never_shows_the_value() {
        let token = Token { value: secret("dbg"), source: "GH_TOKEN" };
        assert!(!format!("{token:?}").contains(&token.value));
    }

    #[test]
    fn gh_on_path_is_asked_with_the_enterprise_hostname() {
        let dir = tempfile::tempdir().unwrap();
        let value = secret("gh");
        // Prints the token only when asked for the configured host, so the argv is checked too.
        fake_gh(
            dir.path(),
            &format!(
                "if [ \"$1 $2 $3 $4\" = 'auth token --hostname ghe.example.com' ]; then echo ' {value} '; else exit 1; fi"
            ),
        );
        let path = dir.path().to_string_lossy().into_owned();
        let token = discover(&env_of(&[("PATH", &path)]), "ghe.example.com", None).unwrap();
        assert_eq!((token.value.as_str(), token.source), (value.as_str(), "gh auth token"));
        assert_eq!(discover(&env_of(&[("PATH", &path)]), "github.com", None), None);
    }

    #[test]
    fn failing_gh_falls_through_to_the_token_command() {
        let dir = tempfile::tempdir().unwrap();
        fake_gh(dir.path(), "echo 'not logged in'; exit 1");
        let path = dir.path().to_string_lossy().into_owned();
        let value = secret("cmd");
        let command = vec!["printf".to_owned(), format!("{value}\\n")];
        let token = discover(&env_of(&[("PATH", &path)]), "github.com", Some(&command)).unwrap();
        assert_eq!((token.value.as_str(), token.source), (value.as_str(), "github.token_command"));
    }

    #[test]
    fn hung_or_garbage_commands_give_no_token() {
        // Would print a valid token after 3 s; the timeout must win.
        let hung = vec!["sh".to_owned(), "-c".to_owned(), "sleep 3; echo late-token".to_owned()];
        assert_eq!(run_capture(&hung, Duration::from_millis(200)), None);
        let two_words = vec!["echo".to_owned(), "error: nope".to_owned()];
        assert_eq!(discover(&env_of(&[]), "github.com", Some(&two_words)), None);
        assert_eq!(discover(&env_of(&[]), "github.com", Some(&[])), None);
        let missing = vec!["/nonexistent/forgeloop-token-helper".to_owned()];
        assert_eq!(discover(&env_of(&[]), "github.com", Some(&missing)), None);
    }
}
