//! A change between two commits as GitHub shows it: the unified diff text (`git diff -M
//! --full-index`), a patch series (`git format-patch`), the changed files with their counts and
//! hunks, and the commits in between. Only full commit SHAs ever reach git's command line
//! ([`git::oid`]), never a name a client sent. Used by `api`; uses `git` and `error`.

use std::path::Path;

use crate::error::EmulatorError;
use crate::git;

/// The most diff text one answer holds: far beyond anything GitHub serves, a bound on memory.
const OUTPUT_LIMIT: usize = 256 * 1024 * 1024;

/// The diff options every view shares, so the text, the file list and the counts agree.
const DIFF_OPTIONS: [&str; 5] = ["--no-color", "--no-ext-diff", "--no-textconv", "--full-index", "-M"];

/// The unified diff from `from` to `to` (full SHAs), as `git diff` prints it.
pub(crate) async fn unified(dir: &Path, from: &str, to: &str) -> Result<Vec<u8>, EmulatorError> {
    let (from, to) = (git::oid(from)?, git::oid(to)?);
    let mut args = vec!["diff"];
    args.extend(DIFF_OPTIONS);
    args.extend([from, to, "--"]);
    git::run_bytes(dir, &args, OUTPUT_LIMIT).await
}

/// One mail per commit reachable from `to` and not from `from`, as GitHub's patch media type.
pub(crate) async fn patch_series(dir: &Path, from: &str, to: &str) -> Result<Vec<u8>, EmulatorError> {
    let range = format!("{}..{}", git::oid(from)?, git::oid(to)?);
    let args = ["format-patch", "--stdout", "--no-color", "--full-index", "-M", &range, "--"];
    git::run_bytes(dir, &args, OUTPUT_LIMIT).await
}

/// One changed file, as GitHub's `files` entries describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    pub filename: String,
    /// The old path of a rename (or copy).
    pub previous_filename: Option<String>,
    /// `added`, `removed`, `modified`, `renamed`, `copied` or `changed` (mode or type only).
    pub status: &'static str,
    /// The blob before and after (all zeros when absent).
    pub old_sha: String,
    pub new_sha: String,
    pub additions: u64,
    pub deletions: u64,
    pub binary: bool,
    /// The hunks (from the first `@@`), when the file has any and is not binary.
    pub patch: Option<String>,
}

/// Every file changed from `from` to `to`, in git's order, with counts and hunks.
pub(crate) async fn files(dir: &Path, from: &str, to: &str) -> Result<Vec<FileChange>, EmulatorError> {
    let (from, to) = (git::oid(from)?, git::oid(to)?);
    let mut args = vec!["diff", "--raw", "--numstat", "-z", "--no-abbrev"];
    args.extend(DIFF_OPTIONS);
    args.extend([from, to, "--"]);
    let meta = git::run_bytes(dir, &args, OUTPUT_LIMIT).await?;
    let mut changes = parse_meta(&meta).ok_or_else(|| EmulatorError::Git {
        args: args.join(" "),
        dir: dir.display().to_string(),
        stderr: "unexpected --raw --numstat output".to_owned(),
    })?;
    let text = unified(dir, from, to).await?;
    let chunks = split_files(&text);
    // Same options, same order: the n-th chunk is the n-th file.
    if chunks.len() == changes.len() {
        for (change, chunk) in changes.iter_mut().zip(chunks) {
            change.patch = if change.binary { None } else { hunks(chunk) };
        }
    }
    Ok(changes)
}

/// Parses `git diff --raw --numstat -z`: every raw entry, then one numstat entry per file in
/// the same order. `None` when the two do not line up.
fn parse_meta(bytes: &[u8]) -> Option<Vec<FileChange>> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut tokens = bytes.split(|b| *b == 0).peekable();
    let mut changes = Vec::new();
    while let Some(header) = tokens.next_if(|t| t.first() == Some(&b':')) {
        let fields: Vec<&[u8]> = header[1..].split(|b| *b == b' ').collect();
        let [old_mode, new_mode, old_sha, new_sha, letter] = fields.as_slice() else { return None };
        let two_paths = matches!(letter.first(), Some(b'R' | b'C'));
        let first = text(tokens.next()?);
        let (filename, previous_filename) = if two_paths { (text(tokens.next()?), Some(first)) } else { (first, None) };
        let status = match letter.first() {
            Some(b'A') => "added",
            Some(b'D') => "removed",
            Some(b'R') => "renamed",
            Some(b'C') => "copied",
            Some(b'T') => "changed",
            Some(b'M') if old_sha == new_sha && old_mode != new_mode => "changed",
            _ => "modified",
        };
        changes.push(FileChange {
            filename,
            previous_filename,
            status,
            old_sha: text(old_sha),
            new_sha: text(new_sha),
            additions: 0,
            deletions: 0,
            binary: false,
            patch: None,
        });
    }
    for change in &mut changes {
        let entry = tokens.next()?;
        let mut parts = entry.splitn(3, |b| *b == b'\t');
        let (added, deleted, path) = (parts.next()?, parts.next()?, parts.next()?);
        if path.is_empty() {
            // A rename: its two paths follow as tokens of their own.
            tokens.next()?;
            tokens.next()?;
        }
        let count = |n: &[u8]| std::str::from_utf8(n).ok().and_then(|n| n.parse::<u64>().ok());
        match (count(added), count(deleted)) {
            (Some(a), Some(d)) => (change.additions, change.deletions) = (a, d),
            _ => change.binary = true,
        }
    }
    tokens.all(|t| t.is_empty()).then_some(changes)
}

/// The diff text cut at each `diff --git ` line (no hunk line starts that way).
fn split_files(text: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if text[at..].starts_with(b"diff --git ") {
            starts.push(at);
        }
        at = match text[at..].iter().position(|b| *b == b'\n') {
            Some(end) => at + end + 1,
            None => text.len(),
        };
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| &text[start..starts.get(i + 1).copied().unwrap_or(text.len())])
        .collect()
}

/// A file chunk's hunks, from its first `@@` line, without the last newline (as GitHub's
/// `patch`); `None` when there is none (a binary, empty, or mode-only change).
fn hunks(chunk: &[u8]) -> Option<String> {
    let mut at = 0;
    while at < chunk.len() {
        if chunk[at..].starts_with(b"@@ ") {
            let body = &chunk[at..];
            return Some(String::from_utf8_lossy(body.strip_suffix(b"\n").unwrap_or(body)).into_owned());
        }
        at += chunk[at..].iter().position(|b| *b == b'\n').map_or(chunk.len(), |end| end + 1);
    }
    None
}

/// A commit as the compare API lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitInfo {
    pub sha: String,
    pub tree: String,
    pub parents: Vec<String>,
    pub author: (String, String, String),
    pub committer: (String, String, String),
    pub message: String,
}

const LOG_FIELDS: usize = 10;

/// The commits reachable from `to` and not from `from`, oldest first (`from` may be `None`:
/// just `to` itself).
pub(crate) async fn commits(dir: &Path, from: Option<&str>, to: &str) -> Result<Vec<CommitInfo>, EmulatorError> {
    let range = match from {
        Some(from) => format!("{}..{}", git::oid(from)?, git::oid(to)?),
        None => git::oid(to)?.to_owned(),
    };
    let format = "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B%x00";
    let mut args = vec!["log", "--reverse", format];
    if from.is_none() {
        args.push("--no-walk");
    }
    args.extend([range.as_str(), "--"]);
    let out = git::run_bytes(dir, &args, OUTPUT_LIMIT).await?;
    Ok(parse_log(&out))
}

/// Parses the `log` format above: ten NUL-ended fields a commit, each commit on a new line.
fn parse_log(out: &[u8]) -> Vec<CommitInfo> {
    let fields: Vec<String> =
        out.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).trim_start_matches('\n').to_owned()).collect();
    fields
        .chunks_exact(LOG_FIELDS)
        .map(|f| CommitInfo {
            sha: f[0].clone(),
            tree: f[1].clone(),
            parents: f[2].split_whitespace().map(str::to_owned).collect(),
            author: (f[3].clone(), f[4].clone(), utc(&f[5])),
            committer: (f[6].clone(), f[7].clone(), utc(&f[8])),
            message: f[9].trim_end().to_owned(),
        })
        .collect()
}

/// An ISO date as GitHub writes it (UTC, `Z`); left as it is when unreadable.
fn utc(date: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(date)
        .map(|d| d.with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| date.to_owned())
}

/// How many commits `base` has that `head` lacks, and the other way round.
pub(crate) async fn behind_ahead(dir: &Path, base: &str, head: &str) -> Result<(u64, u64), EmulatorError> {
    let range = format!("{}...{}", git::oid(base)?, git::oid(head)?);
    let out = git::run(dir, &["rev-list", "--left-right", "--count", &range, "--"], &[], None).await?;
    let mut counts = out.split_whitespace().map(|n| n.parse::<u64>().ok());
    match (counts.next().flatten(), counts.next().flatten()) {
        (Some(behind), Some(ahead)) => Ok((behind, ahead)),
        _ => Err(EmulatorError::Invalid(format!("unexpected rev-list count {out:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: &str = "0000000000000000000000000000000000000000";
    const A: &str = "45b983be36b73c0788dc9cbcb76cbb80fc7bb057";
    const B: &str = "0ff3bbb9c8bba2291654cd64067fa417ff54c508";

    #[test]
    fn raw_and_numstat_line_up_with_renames_and_binaries() {
        let meta = format!(
            ":000000 100644 {Z} {A} A\0added.txt\0:100644 100644 {B} {A} R094\0old.txt\0new name.txt\0\
             :000000 100644 {Z} {B} A\0bin.dat\0:100644 100755 {A} {A} M\0run.sh\0:100644 000000 {B} {Z} D\0gone\0\
             1\t0\tadded.txt\x001\t0\t\0old.txt\0new name.txt\0-\t-\tbin.dat\x000\t0\trun.sh\x000\t3\tgone\0"
        );
        let changes = parse_meta(meta.as_bytes()).unwrap();
        let view: Vec<_> = changes
            .iter()
            .map(|c| {
                (c.status, c.filename.as_str(), c.previous_filename.as_deref(), c.additions, c.deletions, c.binary)
            })
            .collect();
        assert_eq!(
            view,
            [
                ("added", "added.txt", None, 1, 0, false),
                ("renamed", "new name.txt", Some("old.txt"), 1, 0, false),
                ("added", "bin.dat", None, 0, 0, true),
                ("changed", "run.sh", None, 0, 0, false),
                ("removed", "gone", None, 0, 3, false),
            ]
        );
        assert_eq!((changes[1].old_sha.as_str(), changes[1].new_sha.as_str()), (B, A));
        assert_eq!(parse_meta(b""), Some(Vec::new()));
        assert_eq!(parse_meta(format!(":000000 100644 {Z} {A} A\0a\0").as_bytes()), None, "numstat missing");
        assert_eq!(parse_meta(b":1 2 3 A\0a\0"), None, "short header");
    }

    #[test]
    fn the_text_splits_per_file_and_hunks_start_at_the_first_at_at() {
        let text = b"diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+diff --git y\n\
                     diff --git a/b b/b\nnew file mode 100644\nindex 0..3\nBinary files /dev/null and b/b differ\n";
        let chunks = split_files(text);
        assert_eq!(chunks.len(), 2);
        assert_eq!(hunks(chunks[0]).as_deref(), Some("@@ -1 +1 @@\n-x\n+diff --git y"));
        assert_eq!(hunks(chunks[1]), None);
        assert!(split_files(b"").is_empty());
    }

    #[test]
    fn log_records_parse_and_dates_become_utc() {
        let out = format!(
            "{A}\0{B}\0\0Ann\0a@x\x002024-01-02T03:04:05+02:00\0Cy\0c@x\x002024-01-02T01:04:05Z\0Subject\n\nBody\n\0\n\
             {B}\0{A}\0{A}\0Ann\0a@x\x00bad-date\0Cy\0c@x\x00bad\0Two\n\0\n"
        );
        let commits = parse_log(out.as_bytes());
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].sha, A);
        assert!(commits[0].parents.is_empty());
        assert_eq!(commits[0].author.2, "2024-01-02T01:04:05Z");
        assert_eq!(commits[0].message, "Subject\n\nBody");
        assert_eq!(
            (commits[1].parents.as_slice(), commits[1].author.2.as_str()),
            ([A.to_owned()].as_slice(), "bad-date")
        );
    }
}
