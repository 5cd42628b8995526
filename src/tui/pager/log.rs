//! The log pane's reader: pages a run log from disk so a 1 GB file opens instantly and memory
//! stays flat. Positions are byte offsets of line starts (like `less`), so nothing needs an
//! index of the whole file: a window is found by scanning a few blocks forward or backward
//! from a known line start or from the end. Lines longer than [`MAX_LINE_SCAN`] are split.
//!
//! A live run's log may shrink (the runner compacts it, design §5.2.5): every request re-reads
//! the file's length, an offset past the end restarts from the top, and an offset that no
//! longer starts a line is moved to the start of its line.
//!
//! One worker thread owns all reads; the app sends it [`LogRequest`]s and gets windows and
//! search results back as [`LogEvent`]s. Searches scan in chunks and give way to newer
//! requests.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::redact::Redactor;

use crate::tui::sanitize;

const BLOCK: u64 = 64 * 1024;
/// A "line" longer than this is cut into pieces of this size.
pub const MAX_LINE_SCAN: u64 = 1024 * 1024;
/// At most this many bytes of one line are decoded for display.
pub const MAX_LINE_DISPLAY: usize = 16 * 1024;
const SEARCH_CHUNK: u64 = 4 * 1024 * 1024;

/// Where a window of the log starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    /// The line starting at this byte (moved to its line's start if the file changed).
    Offset(u64),
    /// The last lines of the file.
    Tail,
    /// `delta` lines after (or before, when negative) the line starting at `from`.
    Lines {
        /// A line start (byte offset).
        from: u64,
        /// Lines to move, backwards when negative.
        delta: i64,
    },
}

/// What the app asks of the log reader. Each request but `Close` names the generation it
/// means: one for an older one (a file no longer open) is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRequest {
    /// Open a run log as the current generation.
    Open {
        /// The Log tab's count of files opened, which tells stale answers apart.
        generation: u64,
        /// The run log.
        path: PathBuf,
    },
    /// The lines a pane of `height` shows from `anchor` (`LogEvent::Window`).
    Window {
        /// The generation it is for.
        generation: u64,
        /// Where the window starts.
        anchor: Anchor,
        /// How many lines the pane shows.
        height: usize,
    },
    /// The next (or previous) match of `query` from byte `from`, wrapping around once
    /// (`LogEvent::Found`).
    Search {
        /// The generation it is for.
        generation: u64,
        /// What to find (smart case).
        query: String,
        /// The offset the search starts from.
        from: u64,
        /// Towards the end (`true`) or the start.
        forward: bool,
    },
    /// The first line that reports a failure (`LogEvent::Found`).
    FirstError {
        /// The generation it is for.
        generation: u64,
    },
    /// Forget the open file.
    Close,
}

/// Which request a `LogEvent::Found` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindKind {
    /// A `LogRequest::Search`.
    Search,
    /// A `LogRequest::FirstError`.
    Error,
}

/// One line of a window, ready to draw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogLine {
    /// Where it starts (a byte offset).
    pub offset: u64,
    /// Where the next line starts.
    pub end: u64,
    /// Sanitized and redacted.
    pub text: String,
    /// Longer than [`MAX_LINE_DISPLAY`] bytes: the rest is not shown.
    pub truncated: bool,
}

/// The lines a pane shows, as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogWindow {
    /// The generation it was read for.
    pub generation: u64,
    /// Where its first line starts.
    pub top: u64,
    /// Its lines, at most the height asked for.
    pub lines: Vec<LogLine>,
    /// File length when read.
    pub len: u64,
    /// The window reaches the end of the file.
    pub at_eof: bool,
}

/// Reads one file by offsets, through a tiny block cache valid for one request.
pub struct LogDoc {
    file: File,
    len: u64,
    cache: Vec<(u64, Vec<u8>)>,
}

impl LogDoc {
    /// Opens `path` and notes its length.
    pub fn open(path: &Path) -> io::Result<LogDoc> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(LogDoc { file, len, cache: Vec::new() })
    }

    /// The file's length in bytes when opened or last refreshed.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The file was empty when opened or last refreshed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Re-reads the length and forgets cached blocks (the file may have changed).
    pub fn refresh(&mut self) -> io::Result<()> {
        self.len = self.file.metadata()?.len();
        self.cache.clear();
        Ok(())
    }

    fn block(&mut self, index: u64) -> io::Result<&[u8]> {
        if let Some(pos) = self.cache.iter().position(|(i, _)| *i == index) {
            let entry = self.cache.remove(pos);
            self.cache.push(entry);
        } else {
            let start = index * BLOCK;
            let want = BLOCK.min(self.len.saturating_sub(start)) as usize;
            let mut buf = vec![0; want];
            let mut done = 0;
            while done < want {
                let n = self.file.read_at(&mut buf[done..], start + done as u64)?;
                if n == 0 {
                    break;
                }
                done += n;
            }
            buf.truncate(done);
            if self.cache.len() >= 4 {
                self.cache.remove(0);
            }
            self.cache.push((index, buf));
        }
        Ok(self.cache.last().map(|(_, b)| b.as_slice()).unwrap_or(&[]))
    }

    /// The start of the line holding byte `pos - 1`'s successor: the offset after the last
    /// newline before `pos` (0 when there is none, or `pos - MAX_LINE_SCAN` for a huge line).
    pub fn line_start(&mut self, pos: u64) -> io::Result<u64> {
        let pos = pos.min(self.len);
        let floor = pos.saturating_sub(MAX_LINE_SCAN);
        let mut end = pos;
        while end > floor {
            let index = (end - 1) / BLOCK;
            let block_start = index * BLOCK;
            let from = block_start.max(floor);
            let block = self.block(index)?;
            let lo = (from - block_start) as usize;
            let hi = ((end - block_start) as usize).min(block.len());
            if lo >= hi {
                break;
            }
            if let Some(i) = block[lo..hi].iter().rposition(|&b| b == b'\n') {
                return Ok(block_start + (lo + i) as u64 + 1);
            }
            end = from;
        }
        Ok(floor)
    }

    /// Start of the next line after the line starting at `pos`; `None` at the last line.
    pub fn next_line(&mut self, pos: u64) -> io::Result<Option<u64>> {
        let limit = (pos + MAX_LINE_SCAN).min(self.len);
        let mut at = pos;
        while at < limit {
            let index = at / BLOCK;
            let block_start = index * BLOCK;
            let block = self.block(index)?;
            if block.is_empty() {
                break;
            }
            let lo = (at - block_start) as usize;
            let hi = ((limit - block_start) as usize).min(block.len());
            if lo >= hi {
                break;
            }
            if let Some(i) = block[lo..hi].iter().position(|&b| b == b'\n') {
                let next = block_start + (lo + i) as u64 + 1;
                return Ok((next < self.len).then_some(next));
            }
            at = block_start + hi as u64;
        }
        if limit >= self.len {
            return Ok(None);
        }
        // A split long line that ends right at the cut takes its newline with it.
        let index = limit / BLOCK;
        let at_newline = self.block(index)?.get((limit - index * BLOCK) as usize) == Some(&b'\n');
        let next = if at_newline { limit + 1 } else { limit };
        Ok((next < self.len).then_some(next))
    }

    /// Start of the line before the one starting at `pos`.
    fn prev_line(&mut self, pos: u64) -> io::Result<Option<u64>> {
        if pos == 0 {
            return Ok(None);
        }
        Ok(Some(self.line_start(pos - 1)?))
    }

    /// Where the last line starts.
    pub fn last_line(&mut self) -> io::Result<u64> {
        if self.len == 0 {
            return Ok(0);
        }
        self.line_start(self.len - 1)
    }

    /// Brings an offset from an older version of the file back to a line start in this one.
    fn align(&mut self, offset: u64) -> io::Result<u64> {
        if offset >= self.len {
            return Ok(if offset == 0 || self.len == 0 { 0 } else { self.last_line()? });
        }
        self.line_start(offset)
    }

    fn read_span(&self, start: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len];
        let mut done = 0;
        while done < len {
            let n = self.file.read_at(&mut buf[done..], start + done as u64)?;
            if n == 0 {
                break;
            }
            done += n;
        }
        buf.truncate(done);
        Ok(buf)
    }

    /// Up to `count` display lines from the line starting at `top`.
    pub fn lines(&mut self, top: u64, count: usize, redactor: &Redactor) -> io::Result<(Vec<LogLine>, bool)> {
        let mut lines = Vec::with_capacity(count);
        let mut pos = top;
        while lines.len() < count && pos < self.len {
            let next = self.next_line(pos)?;
            let end = next.unwrap_or(self.len);
            let span = (end - pos) as usize;
            let take = span.min(MAX_LINE_DISPLAY);
            let mut raw = self.read_span(pos, take)?;
            if raw.last() == Some(&b'\n') {
                raw.pop();
            }
            let text = sanitize::display_line(&raw);
            let text = redactor.redact(&text).into_owned();
            lines.push(LogLine { offset: pos, end, text, truncated: span > MAX_LINE_DISPLAY });
            match next {
                Some(n) => pos = n,
                None => pos = self.len,
            }
        }
        Ok((lines, pos >= self.len))
    }

    /// Moves `delta` lines from the line starting at `from`.
    pub fn step(&mut self, from: u64, delta: i64) -> io::Result<u64> {
        let mut pos = self.align(from)?;
        if delta >= 0 {
            for _ in 0..delta {
                match self.next_line(pos)? {
                    Some(n) => pos = n,
                    None => break,
                }
            }
        } else {
            for _ in 0..delta.unsigned_abs() {
                match self.prev_line(pos)? {
                    Some(p) => pos = p,
                    None => break,
                }
            }
        }
        Ok(pos)
    }

    /// The first line of the last `height` lines.
    fn tail_top(&mut self, height: usize) -> io::Result<u64> {
        let last = self.last_line()?;
        self.step(last, -(height.saturating_sub(1) as i64))
    }

    /// The window for an anchor; scrolling down stops when the last line reaches the bottom.
    pub fn window(&mut self, anchor: &Anchor, height: usize, redactor: &Redactor) -> io::Result<LogWindow> {
        self.refresh()?;
        let height = height.max(1);
        let tail = self.tail_top(height)?;
        let top = match anchor {
            Anchor::Tail => tail,
            Anchor::Offset(offset) => self.align(*offset)?.min(tail),
            Anchor::Lines { from, delta } => {
                let from = self.align(*from)?;
                let moved = self.step(from, *delta)?;
                if *delta > 0 { moved.min(tail.max(from)) } else { moved }
            }
        };
        let (lines, at_eof) = self.lines(top, height, redactor)?;
        Ok(LogWindow { generation: 0, top, lines, len: self.len, at_eof })
    }
}

/// Smart case: a query with an uppercase letter is case-sensitive.
fn needle(query: &str) -> (Vec<u8>, bool) {
    let sensitive = query.chars().any(char::is_uppercase);
    let bytes = if sensitive { query.as_bytes().to_vec() } else { query.to_lowercase().into_bytes() };
    (bytes, sensitive)
}

fn find_all(hay: &[u8], needle: &[u8], sensitive: bool) -> Vec<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return Vec::new();
    }
    let lowered;
    let hay = if sensitive {
        hay
    } else {
        lowered = hay.to_ascii_lowercase();
        &lowered
    };
    let first = needle[0];
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        match hay[i..=hay.len() - needle.len()].iter().position(|&b| b == first) {
            Some(p) => {
                let at = i + p;
                if &hay[at..at + needle.len()] == needle {
                    out.push(at);
                }
                i = at + 1;
            }
            None => break,
        }
    }
    out
}

/// Character ranges of `query` in a displayed line (for highlighting), smart case.
pub fn highlight_ranges(line: &str, query: &str) -> Vec<(usize, usize)> {
    if query.is_empty() {
        return Vec::new();
    }
    let sensitive = query.chars().any(char::is_uppercase);
    let (hay, pat): (Vec<char>, Vec<char>) = if sensitive {
        (line.chars().collect(), query.chars().collect())
    } else {
        (line.chars().flat_map(char::to_lowercase).collect(), query.chars().flat_map(char::to_lowercase).collect())
    };
    // Lowercasing may change length for a few scripts; fall back to no highlight then.
    if hay.len() != line.chars().count() || pat.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i + pat.len() <= hay.len() {
        if hay[i..i + pat.len()] == pat[..] {
            out.push((i, i + pat.len()));
            i += pat.len();
        } else {
            i += 1;
        }
    }
    out
}

/// Whether a raw log line reports a failure.
fn is_error_line(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    if text.contains("FAILED") || text.contains("panicked") || text.contains("Traceback") || text.contains("Error:") {
        return true;
    }
    if text.starts_with("[timed out") || text.starts_with("[killed by signal") {
        return true;
    }
    if let Some(rest) = text.strip_prefix("[exit ") {
        let code: String = rest.chars().take_while(|c| *c == '-' || c.is_ascii_digit()).collect();
        return code.parse::<i64>().is_ok_and(|c| c != 0);
    }
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    find_all(bytes, b"error", true).into_iter().any(|at| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 5).copied();
        !before.is_some_and(|b| b.is_ascii_alphanumeric()) && matches!(after, None | Some(b':' | b'[' | b' ' | b'!'))
    })
}

/// What the log reader reports; the app turns these into its own events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    /// A window read (`LogRequest::Window`).
    Window(LogWindow),
    /// What a search, or the look for the first error, found.
    Found {
        /// The generation it was for.
        generation: u64,
        /// Which request it answers.
        kind: FindKind,
        /// Where the line found starts; `None` when there is none.
        offset: Option<u64>,
        /// The search went past the file's end (or start) and on from the other.
        wrapped: bool,
    },
    /// The file could not be read.
    Failed {
        /// The generation it was for.
        generation: u64,
        /// Why, for the person.
        error: String,
    },
}

/// Carries out [`LogRequest`]s on the open file: the same code for the worker thread (which
/// lets newer requests interrupt long scans) and for the synchronous driver of tests.
pub struct LogReader {
    redactor: Redactor,
    generation: u64,
    path: Option<PathBuf>,
}

impl LogReader {
    /// A reader with no file open.
    pub fn new(redactor: Redactor) -> LogReader {
        LogReader { redactor, generation: 0, path: None }
    }

    /// Carries out one request. `interrupted` is asked between chunks of a long scan; when it
    /// says yes the scan is dropped and nothing is reported. Requests for another generation
    /// (a file no longer open) are ignored.
    pub fn handle(&mut self, request: LogRequest, interrupted: &mut dyn FnMut(&LogReader) -> bool) -> Option<LogEvent> {
        match request {
            LogRequest::Close => {
                self.path = None;
                None
            }
            LogRequest::Open { generation, path } => {
                self.generation = generation;
                self.path = Some(path);
                None
            }
            LogRequest::Window { generation, anchor, height } => self.window(generation, &anchor, height),
            LogRequest::Search { generation, query, from, forward } => {
                self.search(generation, &query, from, forward, interrupted)
            }
            LogRequest::FirstError { generation } => self.first_error(generation, interrupted),
        }
    }

    /// The generation of the open file (requests for others are stale).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// `None` for a stale generation; `Some(None)` when no file is open.
    fn doc(&self, generation: u64) -> Option<Option<io::Result<LogDoc>>> {
        (generation == self.generation).then(|| self.path.as_ref().map(|p| LogDoc::open(p)))
    }

    fn failed(generation: u64, error: String) -> Option<LogEvent> {
        Some(LogEvent::Failed { generation, error })
    }

    /// The `height` lines from `anchor` of the open file; `None` for a stale generation or
    /// with no file open.
    pub fn window(&self, generation: u64, anchor: &Anchor, height: usize) -> Option<LogEvent> {
        match self.doc(generation)?? {
            Err(e) => Self::failed(generation, self.redactor.redact(&format!("cannot open the log: {e}")).into_owned()),
            Ok(mut doc) => match doc.window(anchor, height, &self.redactor) {
                Ok(mut window) => {
                    window.generation = generation;
                    Some(LogEvent::Window(window))
                }
                Err(e) => Self::failed(generation, format!("cannot read the log: {e}")),
            },
        }
    }

    fn search(
        &self,
        generation: u64,
        query: &str,
        from: u64,
        forward: bool,
        interrupted: &mut dyn FnMut(&LogReader) -> bool,
    ) -> Option<LogEvent> {
        // With no file open the search finds nothing (it does not hang the spinner).
        let found = match self.doc(generation)? {
            None => Ok(Some((None, false))),
            Some(Err(e)) => Err(e),
            Some(Ok(mut doc)) => search(&mut doc, query, from, forward, &mut || interrupted(self)),
        };
        match found {
            Ok(Some((offset, wrapped))) => {
                Some(LogEvent::Found { generation, kind: FindKind::Search, offset, wrapped })
            }
            Ok(None) => None,
            Err(e) => Self::failed(generation, format!("cannot search the log: {e}")),
        }
    }

    fn first_error(&self, generation: u64, interrupted: &mut dyn FnMut(&LogReader) -> bool) -> Option<LogEvent> {
        let found = match self.doc(generation)? {
            None => Ok(Some(None)),
            Some(Err(e)) => Err(e),
            Some(Ok(doc)) => first_error(&doc, &mut || interrupted(self)),
        };
        match found {
            Ok(Some(offset)) => Some(LogEvent::Found { generation, kind: FindKind::Error, offset, wrapped: false }),
            Ok(None) => None,
            Err(e) => Self::failed(generation, format!("cannot read the log: {e}")),
        }
    }
}

/// The worker thread's side: a [`LogReader`] and the queue of requests not yet served.
struct Worker {
    reader: LogReader,
    rx: mpsc::Receiver<LogRequest>,
    pending: VecDeque<LogRequest>,
    emit: Box<dyn Fn(LogEvent) + Send>,
}

/// Handle to the log worker thread; dropping it ends the thread.
pub struct LogWorker {
    tx: mpsc::Sender<LogRequest>,
}

impl LogWorker {
    /// Starts the worker thread; what it finds goes to `emit`.
    pub fn spawn(redactor: Redactor, emit: Box<dyn Fn(LogEvent) + Send>) -> LogWorker {
        let (tx, rx) = mpsc::channel();
        let mut worker = Worker { reader: LogReader::new(redactor), rx, pending: VecDeque::new(), emit };
        let _ = std::thread::Builder::new().name("forgeloop-log".into()).spawn(move || worker.run());
        LogWorker { tx }
    }

    /// Queues a request; a window not yet read is skipped when a newer request replaces it.
    pub fn send(&self, request: LogRequest) {
        let _ = self.tx.send(request);
    }
}

impl Worker {
    fn run(&mut self) {
        loop {
            let request = match self.pending.pop_front() {
                Some(r) => r,
                None => match self.rx.recv() {
                    Ok(r) => r,
                    Err(_) => return,
                },
            };
            while let Ok(more) = self.rx.try_recv() {
                self.pending.push_back(more);
            }
            // Only the newest window matters.
            if matches!(request, LogRequest::Window { .. })
                && self
                    .pending
                    .iter()
                    .any(|r| matches!(r, LogRequest::Window { .. } | LogRequest::Open { .. } | LogRequest::Close))
            {
                continue;
            }
            let Worker { reader, rx, pending, emit } = self;
            let emit = emit.as_ref();
            if let Some(event) = reader.handle(request, &mut |reader| between_chunks(reader, rx, pending, emit)) {
                emit(event);
            }
        }
    }
}

/// Between chunks of a scan: serve windows at once, give up for a request that replaces it.
fn between_chunks(
    reader: &LogReader,
    rx: &mpsc::Receiver<LogRequest>,
    pending: &mut VecDeque<LogRequest>,
    emit: &dyn Fn(LogEvent),
) -> bool {
    while let Ok(request) = rx.try_recv() {
        match request {
            LogRequest::Window { generation, anchor, height } if generation == reader.generation() => {
                if let Some(event) = reader.window(generation, &anchor, height) {
                    emit(event);
                }
            }
            LogRequest::Window { .. } => {}
            other => {
                let replaces = matches!(other, LogRequest::Open { .. } | LogRequest::Close | LogRequest::Search { .. });
                pending.push_back(other);
                if replaces {
                    return true;
                }
            }
        }
    }
    false
}

/// The line of the next (or previous) match of `query` from `from`, wrapping around once:
/// `Some((line, wrapped))`, or `None` when `interrupted` asked to stop between chunks.
pub fn search(
    doc: &mut LogDoc,
    query: &str,
    from: u64,
    forward: bool,
    interrupted: &mut dyn FnMut() -> bool,
) -> io::Result<Option<(Option<u64>, bool)>> {
    let (pat, sensitive) = needle(query);
    let len = doc.len();
    let from = from.min(len);
    let overlap = pat.len().saturating_sub(1) as u64;
    let ranges: [(u64, u64, bool); 2] =
        if forward { [(from, len, false), (0, from, true)] } else { [(0, from, false), (from, len, true)] };
    for (lo, hi, wrapped) in ranges {
        if forward {
            let mut at = lo;
            while at < hi {
                let end = (at + SEARCH_CHUNK + overlap).min(len);
                let chunk = doc.read_span(at, (end - at) as usize)?;
                if let Some(&i) = find_all(&chunk, &pat, sensitive).iter().find(|&&i| at + (i as u64) < hi) {
                    return Ok(Some((Some(doc.line_start(at + i as u64)?), wrapped)));
                }
                at += SEARCH_CHUNK;
                if interrupted() {
                    return Ok(None);
                }
            }
        } else {
            let mut end = hi;
            while end > lo {
                let start = end.saturating_sub(SEARCH_CHUNK).max(lo);
                let read_end = (end + overlap).min(len);
                let chunk = doc.read_span(start, (read_end - start) as usize)?;
                if let Some(&i) = find_all(&chunk, &pat, sensitive).iter().rev().find(|&&i| start + (i as u64) < end) {
                    return Ok(Some((Some(doc.line_start(start + i as u64)?), wrapped)));
                }
                end = start;
                if interrupted() {
                    return Ok(None);
                }
            }
        }
    }
    Ok(Some((None, false)))
}

/// The first line that reports a failure (see [`is_error_line`]); `None` when interrupted.
pub fn first_error(doc: &LogDoc, interrupted: &mut dyn FnMut() -> bool) -> io::Result<Option<Option<u64>>> {
    let len = doc.len();
    let mut at = 0u64;
    while at < len {
        let chunk = doc.read_span(at, SEARCH_CHUNK.min(len - at) as usize)?;
        // Only whole lines; the last partial line starts the next chunk.
        let whole = match chunk.iter().rposition(|&b| b == b'\n') {
            Some(i) if at + (chunk.len() as u64) < len => i + 1,
            _ => chunk.len(),
        };
        let mut line_start = 0;
        for line in chunk[..whole].split(|&b| b == b'\n') {
            if is_error_line(line) {
                return Ok(Some(Some(at + line_start as u64)));
            }
            line_start += line.len() + 1;
        }
        at += whole.max(1) as u64;
        if interrupted() {
            return Ok(None);
        }
    }
    Ok(Some(None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with(text: &[u8]) -> (tempfile::NamedTempFile, LogDoc) {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), text).unwrap();
        let doc = LogDoc::open(tmp.path()).unwrap();
        (tmp, doc)
    }

    fn texts(window: &LogWindow) -> Vec<&str> {
        window.lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn windows_move_by_lines_and_stop_at_the_end() {
        let body: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (_tmp, mut doc) = doc_with(body.as_bytes());
        let r = Redactor::default();
        let w = doc.window(&Anchor::Offset(0), 3, &r).unwrap();
        assert_eq!(texts(&w), ["line 0", "line 1", "line 2"]);
        let w = doc.window(&Anchor::Lines { from: w.top, delta: 5 }, 3, &r).unwrap();
        assert_eq!(texts(&w), ["line 5", "line 6", "line 7"]);
        let w = doc.window(&Anchor::Lines { from: w.top, delta: 1000 }, 3, &r).unwrap();
        assert_eq!(texts(&w), ["line 97", "line 98", "line 99"]);
        assert!(w.at_eof);
        let w = doc.window(&Anchor::Lines { from: w.top, delta: -2 }, 3, &r).unwrap();
        assert_eq!(texts(&w), ["line 95", "line 96", "line 97"]);
        let w = doc.window(&Anchor::Tail, 2, &r).unwrap();
        assert_eq!(texts(&w), ["line 98", "line 99"]);
        // An offset inside a line moves to that line's start.
        let w = doc.window(&Anchor::Offset(9), 1, &r).unwrap();
        assert_eq!(texts(&w), ["line 1"]);
    }

    #[test]
    fn a_missing_final_newline_and_empty_files_work() {
        let (_tmp, mut doc) = doc_with(b"a\nb");
        let r = Redactor::default();
        assert_eq!(texts(&doc.window(&Anchor::Tail, 5, &r).unwrap()), ["a", "b"]);
        let (_tmp, mut doc) = doc_with(b"");
        let w = doc.window(&Anchor::Tail, 5, &r).unwrap();
        assert!(w.lines.is_empty() && w.at_eof);
    }

    #[test]
    fn shrinking_files_restart_from_the_top() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let r = Redactor::default();
        std::fs::write(tmp.path(), "x\n".repeat(1000)).unwrap();
        let mut doc = LogDoc::open(tmp.path()).unwrap();
        let w = doc.window(&Anchor::Tail, 2, &r).unwrap();
        assert!(w.top > 100);
        std::fs::write(tmp.path(), "new 1\nnew 2\n").unwrap();
        let w = doc.window(&Anchor::Offset(w.top), 2, &r).unwrap();
        assert_eq!(texts(&w), ["new 1", "new 2"]);
    }

    #[test]
    fn huge_lines_are_split_and_display_is_capped() {
        let mut body = vec![b'a'; (MAX_LINE_SCAN as usize) * 2 + 10];
        body.extend_from_slice(b"\nend\n");
        let (_tmp, mut doc) = doc_with(&body);
        let r = Redactor::default();
        let w = doc.window(&Anchor::Offset(0), 5, &r).unwrap();
        assert_eq!(w.lines.len(), 4);
        assert!(w.lines[0].truncated && w.lines[0].text.len() == MAX_LINE_DISPLAY);
        assert_eq!(w.lines[3].text, "end");
        let w = doc.window(&Anchor::Tail, 2, &r).unwrap();
        assert_eq!(w.lines[1].text, "end");
    }

    #[test]
    fn error_lines_are_recognised() {
        for line in [
            "error: could not compile",
            "error[E0308]: mismatched",
            "FAILED tests/x.py",
            "thread 'main' panicked at",
            "Traceback (most recent call last):",
            "[exit 1 after 0.2s]",
            "[timed out after 900s: process group killed]",
            "E   AssertionError: x",
        ] {
            assert!(is_error_line(line.as_bytes()), "{line}");
        }
        for line in ["[exit 0 after 1.0s]", "test result: ok. 0 errors", "error_handling.rs compiled", "all good"] {
            assert!(!is_error_line(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn highlight_is_smart_case() {
        assert_eq!(highlight_ranges("Error error ERROR", "error"), [(0, 5), (6, 11), (12, 17)]);
        assert_eq!(highlight_ranges("Error error", "Error"), [(0, 5)]);
        assert_eq!(find_all(b"abcabc", b"bc", true), [1, 4]);
    }
}
