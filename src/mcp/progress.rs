//! Progress of a `webgpt_pr_test` run as MCP progress notifications (sent only when the
//! client asked for them with a progressToken).
//!
//! The test use case has no progress hook, so which command is running is read from the
//! run's live log: the runner writes a `$ argv…` header line before each command's output
//! (`runner::section::header`). Progress is informational only; nothing is decided from it,
//! and a header that cannot be found (say, redacted differently) only means fewer messages.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

use crate::redact::Redactor;

/// Sends progress notifications for one request; every message is redacted.
#[derive(Clone)]
pub struct Reporter {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    redactor: Redactor,
}

impl Reporter {
    pub fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>, redactor: Redactor) -> Reporter {
        Reporter { peer, token, redactor }
    }

    /// `progress` must grow from one call to the next (MCP requires it).
    pub async fn report(&self, progress: f64, total: f64, message: &str) {
        let Some(token) = self.token.clone() else { return };
        let param = ProgressNotificationParam::new(token, progress)
            .with_total(total)
            .with_message(self.redactor.redact(message).into_owned());
        if let Err(err) = self.peer.notify_progress(param).await {
            tracing::debug!("cannot send a progress notification: {err}");
        }
    }

    pub fn wanted(&self) -> bool {
        self.token.is_some()
    }
}

/// Where `cycle::pr_test::test_once` writes the run's log: `<home>/tests/<prefix><stamp>.log`,
/// `prefix` being `owner-repo-N-sha12-` (lowercase) and `stamp` the UTC start second.
#[derive(Debug, Clone)]
pub struct LogSpot {
    pub dir: PathBuf,
    pub prefix: String,
    /// The stamp taken just before the run started; the run's own log is the first one at or
    /// after it (older runs of the same head have earlier stamps).
    pub since: String,
}

pub const STAMP_FORMAT: &str = "%Y%m%dT%H%M%SZ";

/// Follows the log and reports "running command i/N" as each command's header appears.
/// Returns once every header was seen, or after one last look when `done` fires (so a
/// command that ran between two polls is still reported).
pub async fn follow(
    spot: LogSpot,
    argv: Vec<Vec<String>>,
    reporter: Reporter,
    first_step: f64,
    total: f64,
    mut done: tokio::sync::oneshot::Receiver<()>,
) {
    let headers: Vec<String> = argv.iter().map(|a| reporter.redactor.redact(&header(a)).into_owned()).collect();
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut path = None;
    let mut offset = 0u64;
    let mut pending: Vec<u8> = Vec::new();
    let mut next = 0usize;
    let mut last_look = false;
    while next < headers.len() && !last_look {
        tokio::select! {
            _ = tick.tick() => {}
            _ = &mut done => last_look = true,
        }
        if path.is_none() {
            let spot = spot.clone();
            path = tokio::task::spawn_blocking(move || find(&spot)).await.ok().flatten();
        }
        let Some(log) = path.clone() else { continue };
        let Ok(Ok(chunk)) = tokio::task::spawn_blocking(move || read_to_end(&log, offset)).await else { continue };
        offset += chunk.len() as u64;
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]);
            if next < headers.len() && line == headers[next].trim_end_matches('\n') {
                let message = format!("running command {}/{}: {}", next + 1, headers.len(), argv[next].join(" "));
                reporter.report(first_step + next as f64, total, &message).await;
                next += 1;
            }
        }
        // A header is one short line; a huge partial line is output, not a header.
        if pending.len() > 64 * 1024 {
            pending.clear();
        }
    }
}

fn find(spot: &LogSpot) -> Option<PathBuf> {
    let mut best: Option<(String, PathBuf)> = None;
    for entry in std::fs::read_dir(&spot.dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stamp) = name.strip_prefix(&spot.prefix).and_then(|rest| rest.strip_suffix(".log")) else {
            continue;
        };
        if stamp >= spot.since.as_str() && best.as_ref().is_none_or(|(b, _)| stamp < b.as_str()) {
            best = Some((stamp.to_owned(), entry.path()));
        }
    }
    best.map(|(_, path)| path)
}

/// At most 1 MiB per poll, so a chatty test costs bounded memory here.
fn read_to_end(path: &Path, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(std::io::SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    file.take(1024 * 1024).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The runner's header line (`runner::section::header`, which is private to the runner).
fn header(argv: &[String]) -> String {
    let words: Vec<String> = argv.iter().map(|arg| shell_word(arg)).collect();
    format!("$ {}\n", words.join(" "))
}

fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if plain {
        arg.to_owned()
    } else if arg.chars().any(char::is_control) {
        format!("{arg:?}")
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_match_the_runners_quoting() {
        let argv = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(header(&argv(&["git", "diff", "--check"])), "$ git diff --check\n");
        assert_eq!(header(&argv(&["sh", "-c", "it's"])), "$ sh -c 'it'\\''s'\n");
    }

    #[test]
    fn the_runs_own_log_is_the_first_at_or_after_its_start() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "a-b-1-cccccccccccc-20250101T000000Z.log",
            "a-b-1-cccccccccccc-20250101T000005Z.log",
            "a-b-1-cccccccccccc-20250101T000009Z.log",
            "a-b-1-cccccccccccc-20250101T000005Z.json",
            "a-b-2-x.log",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let spot = LogSpot {
            dir: dir.path().to_path_buf(),
            prefix: "a-b-1-cccccccccccc-".into(),
            since: "20250101T000003Z".into(),
        };
        assert_eq!(find(&spot).unwrap().file_name().unwrap(), "a-b-1-cccccccccccc-20250101T000005Z.log");
    }
}
