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
    /// The token itself; masked by every redactor and never shown by `Debug`.
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

/// What to do when there is no token: the three sources, in the words `doctor`'s fixes and the
/// `NO_TOKEN` error share.
pub const HOW_TO_GIVE_ONE: &str = "set GH_TOKEN or GITHUB_TOKEN, run `gh auth login` (forgeloop then asks `gh auth token`), or set `[github] token_command` in the config (an argv that prints the token, e.g. [\"pass\", \"show\", \"github/token\"])";

/// What discovery saw when it found no token (design §2), so the message says what to do
/// about each source instead of letting a command try GitHub without one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The host a token is needed for (`github.com`, or an Enterprise host).
    pub web_host: String,
    /// `gh` is on PATH (so `gh auth token` ran and printed no token).
    pub gh_on_path: bool,
    /// `[github] token_command` is configured (so it ran and printed no token).
    pub token_command: bool,
}

impl Missing {
    /// What [`discover`] looked at; call it after `discover` returned `None` (nothing is run).
    pub fn seen(env: &dyn Fn(&str) -> Option<String>, web_host: &str, token_command: Option<&[String]>) -> Missing {
        Missing {
            web_host: web_host.to_owned(),
            gh_on_path: env("PATH").and_then(|path| find_on_path(&path, "gh")).is_some(),
            token_command: token_command.is_some_and(|argv| argv.first().is_some_and(|p| !p.is_empty())),
        }
    }

    /// Each source in discovery's order, with what was seen of it.
    pub fn looked_at(&self) -> String {
        let enterprise = !self.web_host.eq_ignore_ascii_case(crate::domain::pr_ref::GITHUB_WEB_HOST);
        let login = if enterprise {
            format!("`gh auth login --hostname {}`", self.web_host)
        } else {
            "`gh auth login`".to_owned()
        };
        let gh = if self.gh_on_path {
            "`gh` is on PATH but `gh auth token` printed none: not logged in?"
        } else {
            "`gh` is not on PATH"
        };
        let command = if self.token_command {
            "it is set but printed no token: it failed, timed out after 5 s, or printed more than one word"
        } else {
            "not set"
        };
        format!(
            "GH_TOKEN or GITHUB_TOKEN in the environment (neither is set); {login}, after which forgeloop asks `gh auth token` ({gh}); `[github] token_command` in the config, an argv that prints the token ({command})"
        )
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no GitHub token for {}, so forgeloop asked GitHub nothing and recorded nothing. It looks, in order, at: {}. Give it one, then run `forgeloop doctor` to check it",
            self.web_host,
            self.looked_at()
        )
    }
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
    fn no_token_names_every_source_and_what_was_seen() {
        let nothing = Missing::seen(&env_of(&[("PATH", "/nonexistent-forgeloop-bin")]), "github.com", None);
        assert_eq!(nothing, Missing { web_host: "github.com".into(), gh_on_path: false, token_command: false });
        let text = nothing.to_string();
        for needle in [
            "GH_TOKEN or GITHUB_TOKEN",
            "`gh auth login`",
            "`gh auth token`",
            "`[github] token_command`",
            "`forgeloop doctor`",
            "`gh` is not on PATH",
            "(not set)",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let dir = tempfile::tempdir().unwrap();
        fake_gh(dir.path(), "exit 1");
        let path = dir.path().to_string_lossy().into_owned();
        let command = vec!["false".to_owned()];
        let seen = Missing::seen(&env_of(&[("PATH", &path)]), "ghe.example.com", Some(&command));
        assert!(seen.gh_on_path && seen.token_command, "{seen:?}");
        let text = seen.to_string();
        assert!(
            text.contains("`gh auth login --hostname ghe.example.com`") && text.contains("not logged in?"),
            "{text}"
        );
        assert!(text.contains("set but printed no token"), "{text}");
        for source in ["GH_TOKEN", "GITHUB_TOKEN", "gh auth login", "[github] token_command"] {
            assert!(HOW_TO_GIVE_ONE.contains(source), "{source}");
        }
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
