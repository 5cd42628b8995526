//! The Diff tab's reader (design §6.7): pages a cached, redacted diff from disk like the log,
//! so a 50,000-line diff opens at once and memory stays flat. What the tab keeps is the
//! diff's table of contents ([`FileDiff`]s: paths, counts, hunk lines) and one byte offset
//! every [`STRIDE`] lines; a window of lines is read from the nearest such checkpoint when
//! it is shown, sanitized (terminal control sequences stripped) and redacted again.
//!
//! Line numbers are those of [`crate::domain::diff::index`] (`str::lines`): a line ends at
//! `\n`, and a final newline starts no line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::domain::diff::{self, DiffSize, FileDiff};
use crate::redact::Redactor;

use crate::tui::pager::log::{self as log_view, LogDoc, MAX_LINE_DISPLAY};
use crate::tui::sanitize;

/// One checkpoint (a line's byte offset) every this many lines.
pub const STRIDE: usize = 64;

/// A diff file's table of contents: what the tab keeps while it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffDoc {
    /// The cached diff file windows are read from.
    pub path: PathBuf,
    /// Paths sanitized and redacted for display; line numbers as in the file.
    pub files: Vec<FileDiff>,
    /// Lines in the file.
    pub lines: usize,
    /// Byte offset of line `k * STRIDE`, for every such line.
    pub checkpoints: Arc<[u64]>,
    /// The file's length in bytes.
    pub len: u64,
    /// Files changed and lines added and removed, as a ready row shows them.
    pub size: DiffSize,
    /// Spots the redactor masked when the diff was made.
    pub masked: usize,
}

impl DiffDoc {
    /// Indexes a diff already in memory (just made), then forgets its text.
    pub fn from_text(path: PathBuf, text: &str, files: Vec<FileDiff>, masked: usize, redactor: &Redactor) -> DiffDoc {
        let (lines, checkpoints) = checkpoints(text.as_bytes());
        DiffDoc {
            path,
            size: DiffSize::of(&files),
            files: files.into_iter().map(|f| shown_file(f, redactor)).collect(),
            lines,
            checkpoints: checkpoints.into(),
            len: text.len() as u64,
            masked,
        }
    }

    /// Reads and indexes a cached diff. The file is read whole once, here, on a background
    /// thread (as `cycle::diff` made it); only the index is kept.
    pub fn open(path: &Path, masked: usize, redactor: &Redactor) -> io::Result<DiffDoc> {
        let mut bytes = Vec::new();
        File::open(path)?.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        let files = diff::index(text.lines());
        let mut doc = DiffDoc::from_text(path.to_path_buf(), &text, files, masked, redactor);
        // Lossy decoding may lengthen the text; offsets and length are the file's.
        let (_, checkpoints) = checkpoints(&bytes);
        doc.checkpoints = checkpoints.into();
        doc.len = bytes.len() as u64;
        Ok(doc)
    }

    /// The file (index into `files`) whose section holds `line`.
    pub fn file_of(&self, line: usize) -> Option<usize> {
        let after = self.files.partition_point(|f| f.start_line <= line);
        after.checked_sub(1).filter(|&i| line < self.files[i].end_line)
    }

    /// The nearest checkpoint at or before `line`: (its line, its byte offset).
    pub fn checkpoint(&self, line: usize) -> (usize, u64) {
        checkpoint(&self.checkpoints, line)
    }
}

fn checkpoint(checkpoints: &[u64], line: usize) -> (usize, u64) {
    let k = (line / STRIDE).min(checkpoints.len().saturating_sub(1));
    (k * STRIDE, checkpoints.get(k).copied().unwrap_or(0))
}

/// A file's names as they may be drawn: control sequences stripped, secrets masked.
fn shown_file(mut file: FileDiff, redactor: &Redactor) -> FileDiff {
    file.path = shown_name(&file.path, redactor);
    file.old_path = file.old_path.as_deref().map(|old| shown_name(old, redactor));
    file
}

fn shown_name(name: &str, redactor: &Redactor) -> String {
    redactor.redact(&sanitize::clean(name)).into_owned()
}

/// How many lines `bytes` holds and the offset of every `STRIDE`th line.
fn checkpoints(bytes: &[u8]) -> (usize, Vec<u64>) {
    let mut marks = vec![0u64];
    let mut lines = 0usize;
    let mut start = 0usize;
    for at in memchr::memchr_iter(b'\n', bytes) {
        lines += 1;
        start = at + 1;
        if lines.is_multiple_of(STRIDE) && start < bytes.len() {
            marks.push(start as u64);
        }
    }
    if start < bytes.len() {
        lines += 1;
    }
    (lines, marks)
}

/// What the diff reader reports to the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffEvent {
    /// The cached diff, indexed; `None` when it is not made yet.
    Opened {
        /// The Diff tab's generation it was asked for.
        generation: u64,
        /// The diff, not made yet, or why it could not be read or made.
        result: Result<Option<DiffDoc>, String>,
    },
    /// Lines from `first` on.
    Window {
        /// The Diff tab's generation it was asked for.
        generation: u64,
        /// The line the window starts at.
        first: usize,
        /// The lines read (fewer at the end of the diff).
        lines: Vec<DiffLine>,
    },
    /// A search's answer: the matching line and whether it wrapped around.
    Found {
        /// The Diff tab's generation it was asked for.
        generation: u64,
        /// `(line, wrapped)`, or `None` when nothing matches.
        found: Option<(usize, bool)>,
    },
    /// A window or a search could not be read.
    Failed {
        /// The Diff tab's generation it was asked for.
        generation: u64,
        /// Why, for the person.
        error: String,
    },
}

/// Opens the cached diff at `cache` if it was made (the diff and its meta beside it, as
/// `cycle::diff::of_cycle` writes them).
pub fn open_cached(cache: &Path, redactor: &Redactor) -> Result<Option<DiffDoc>, String> {
    let Some(meta) = crate::cycle::diff::cached_meta(cache) else { return Ok(None) };
    match DiffDoc::open(cache, meta.masked, redactor) {
        Ok(doc) => Ok(Some(doc)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(redactor.redact(&format!("cannot read the diff {}: {e}", cache.display())).into_owned()),
    }
}

/// One line of a window, ready to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// Sanitized and redacted.
    pub text: String,
    /// Longer than [`MAX_LINE_DISPLAY`] bytes: the rest is not shown.
    pub truncated: bool,
}

/// Reads one line from `reader` keeping at most [`MAX_LINE_DISPLAY`] bytes of it; `None` at
/// the end of the file.
fn read_line(reader: &mut impl BufRead, keep: &mut Vec<u8>) -> io::Result<Option<bool>> {
    keep.clear();
    let mut seen = false;
    let mut truncated = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(seen.then_some(truncated));
        }
        seen = true;
        let newline = memchr::memchr(b'\n', buf);
        let end = newline.unwrap_or(buf.len());
        let room = MAX_LINE_DISPLAY.saturating_sub(keep.len());
        truncated |= end > room;
        keep.extend_from_slice(&buf[..end.min(room)]);
        reader.consume(if newline.is_some() { end + 1 } else { end });
        if newline.is_some() {
            return Ok(Some(truncated));
        }
    }
}

/// Up to `count` lines from line `from`, read from the checkpoint `(line, offset)` at or
/// before it.
pub fn read_lines(
    path: &Path,
    checkpoint: (usize, u64),
    from: usize,
    count: usize,
    redactor: &Redactor,
) -> io::Result<Vec<DiffLine>> {
    let (mut line, offset) = checkpoint;
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut raw = Vec::new();
    while line < from {
        if read_line(&mut reader, &mut raw)?.is_none() {
            return Ok(Vec::new());
        }
        line += 1;
    }
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let Some(truncated) = read_line(&mut reader, &mut raw)? else { break };
        // Unlike a log's progress lines, a carriage return is shown (as a space): cutting the
        // line at it would drop the +/- column.
        let line = raw.strip_suffix(b"\r").unwrap_or(&raw);
        let text = sanitize::clean(&String::from_utf8_lossy(line));
        out.push(DiffLine { text: redactor.redact(&text).into_owned(), truncated });
    }
    Ok(out)
}

/// The byte offset where line `line` starts (the file's length past the last line).
fn offset_of(path: &Path, checkpoints: &[u64], line: usize) -> io::Result<u64> {
    let (mut at_line, offset) = checkpoint(checkpoints, line);
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut reader = BufReader::new(file);
    let mut at = offset;
    let mut skip = Vec::new();
    while at_line < line {
        skip.clear();
        let n = reader.read_until(b'\n', &mut skip)?;
        if n == 0 {
            break;
        }
        at += n as u64;
        at_line += 1;
    }
    Ok(at)
}

/// The line holding byte `offset`.
fn line_of(path: &Path, checkpoints: &[u64], offset: u64) -> io::Result<usize> {
    let k = checkpoints.partition_point(|&c| c <= offset).saturating_sub(1);
    let start = checkpoints.get(k).copied().unwrap_or(0);
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(start))?;
    let mut between = Vec::new();
    file.take(offset - start).read_to_end(&mut between)?;
    Ok(k * STRIDE + memchr::memchr_iter(b'\n', &between).count())
}

/// The line of the next (or previous) match of `query` from line `from` (smart case, the
/// raw text as the log's search reads it), wrapping around once: `(line, wrapped)`, or
/// `None` when there is no match.
pub fn search(
    path: &Path,
    checkpoints: &[u64],
    query: &str,
    from: usize,
    forward: bool,
) -> io::Result<Option<(usize, bool)>> {
    let start = offset_of(path, checkpoints, from)?;
    let mut doc = LogDoc::open(path)?;
    let found = log_view::search(&mut doc, query, start, forward, &mut || false)?;
    match found {
        Some((Some(offset), wrapped)) => Ok(Some((line_of(path, checkpoints, offset)?, wrapped))),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), text).unwrap();
        tmp
    }

    fn numbered(n: usize) -> String {
        (0..n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn checkpoints_count_lines_as_str_lines_does() {
        for text in ["", "a", "a\n", "a\nb", "a\n\nb\n", &numbered(200), &format!("{}tail", numbered(128))] {
            let (lines, marks) = checkpoints(text.as_bytes());
            assert_eq!(lines, text.lines().count(), "{text:?}");
            assert_eq!(marks.len(), lines.div_ceil(STRIDE).max(1), "{text:?}");
        }
    }

    #[test]
    fn windows_are_read_from_the_nearest_checkpoint() {
        let text = numbered(1000);
        let tmp = write(&text);
        let doc = DiffDoc::open(tmp.path(), 0, &Redactor::default()).unwrap();
        assert_eq!(doc.lines, 1000);
        assert_eq!(doc.checkpoints.len(), 1000usize.div_ceil(STRIDE));
        let lines = read_lines(tmp.path(), doc.checkpoint(700), 700, 3, &Redactor::default()).unwrap();
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line 700", "line 701", "line 702"]);
        let end = read_lines(tmp.path(), doc.checkpoint(998), 998, 10, &Redactor::default()).unwrap();
        assert_eq!(end.len(), 2);
        assert!(read_lines(tmp.path(), doc.checkpoint(5000), 5000, 3, &Redactor::default()).unwrap().is_empty());
    }

    #[test]
    fn control_sequences_are_stripped_and_long_lines_cut() {
        let long = "+".to_owned() + &"x".repeat(MAX_LINE_DISPLAY * 2);
        let tmp = write(&format!("+\u{1b}[2J\u{1b}]0;pwned\u{7}ok\r\n{long}\nnext\n"));
        let lines = read_lines(tmp.path(), (0, 0), 0, 5, &Redactor::default()).unwrap();
        assert_eq!(lines[0].text, "+ok");
        assert!(lines[1].truncated && lines[1].text.len() == MAX_LINE_DISPLAY);
        assert_eq!(lines[2], DiffLine { text: "next".into(), truncated: false });
    }

    #[test]
    fn search_finds_lines_forward_and_back_and_wraps() {
        let text = numbered(500);
        let tmp = write(&text);
        let doc = DiffDoc::open(tmp.path(), 0, &Redactor::default()).unwrap();
        let found =
            |q: &str, from: usize, forward: bool| search(tmp.path(), &doc.checkpoints, q, from, forward).unwrap();
        assert_eq!(found("line 300", 0, true), Some((300, false)));
        assert_eq!(found("line 29", 301, true), Some((29, true)), "wraps to the top");
        assert_eq!(found("line 299", 300, false), Some((299, false)));
        assert_eq!(found("LINE", 0, true), None, "smart case");
    }

    #[test]
    fn file_of_maps_lines_to_sections() {
        let text = "diff --git a/a b/a\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/b b/b\n@@ -1 +1 @@\n-p\n+q\n";
        let tmp = write(text);
        let doc = DiffDoc::open(tmp.path(), 0, &Redactor::default()).unwrap();
        assert_eq!(doc.size.words(), "2 files +2 −2");
        assert_eq!(
            (doc.file_of(0), doc.file_of(3), doc.file_of(4), doc.file_of(7), doc.file_of(8)),
            (Some(0), Some(0), Some(1), Some(1), None)
        );
    }
}
