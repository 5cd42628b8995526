//! Streaming redaction for logs: bytes in, redacted lines out, in bounded memory.
//!
//! The stream runs the same segmenter as whole-text redaction (`engine::Rules::process`),
//! holding back only what more input could change: an unfinished line, an unclosed PEM block
//! (up to 64 KiB), the last window of an over-long line. Invalid UTF-8 becomes U+FFFD exactly
//! as `String::from_utf8_lossy` would on the whole input, even when a character is split
//! across writes. So the output equals `redact(from_utf8_lossy(all input))` for any chunking.

use std::io::{self, Write};

use super::Redactor;
use super::engine::{Scratch, Segmenter, Sink, WINDOW};
use super::pem::GROUP_MAX;

/// Input is taken in slices of this size, so one huge `write` does not balloon the buffer.
const FEED: usize = 64 * 1024;
const PEM_END: &[u8] = b"-----END";

/// Bytes in, redacted lines out. A line is written once its newline arrives; `finish` (or
/// drop) writes the last partial line. `flush` flushes the inner writer but does not force
/// out a partial line, which could end in half a secret.
pub struct StreamRedactor<W: Write> {
    redactor: Redactor,
    out: Option<W>,
    pending: String,
    /// The first bytes of a UTF-8 character whose remaining bytes have not arrived yet.
    partial_char: Vec<u8>,
    seg: Segmenter,
    scratch: Scratch,
    /// The buffer holds complete lines: an unclosed PEM block is waiting for its END.
    holding_block: bool,
    end_marker_seen: bool,
    end_scan_from: usize,
}

impl<W: Write> StreamRedactor<W> {
    pub(crate) fn new(redactor: Redactor, out: W) -> StreamRedactor<W> {
        StreamRedactor {
            redactor,
            out: Some(out),
            pending: String::new(),
            partial_char: Vec::new(),
            seg: Segmenter::default(),
            scratch: Scratch::default(),
            holding_block: false,
            end_marker_seen: false,
            end_scan_from: 0,
        }
    }

    /// Writes everything still held back and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.finish_inner()?;
        match self.out.take() {
            Some(out) => Ok(out),
            None => Err(io::Error::other("the stream redactor's writer was already taken")),
        }
    }

    fn finish_inner(&mut self) -> io::Result<()> {
        if !self.partial_char.is_empty() {
            self.partial_char.clear();
            self.pending.push('\u{FFFD}');
        }
        self.run(true)?;
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
        let appended_from = self.pending.len();
        self.decode(bytes);
        let new = &self.pending.as_bytes()[appended_from..];
        let has_newline = memchr::memchr(b'\n', new).is_some();
        if self.holding_block && !self.end_marker_seen {
            let from = self.end_scan_from.saturating_sub(PEM_END.len());
            self.end_marker_seen = memchr::memmem::find(&self.pending.as_bytes()[from..], PEM_END).is_some();
            self.end_scan_from = self.pending.len();
        }
        let ready = if self.holding_block {
            (has_newline && self.end_marker_seen) || self.pending.len() >= GROUP_MAX
        } else {
            has_newline
        };
        if ready || self.pending.len() > WINDOW { self.run(false) } else { Ok(()) }
    }

    fn decode(&mut self, bytes: &[u8]) {
        let joined;
        let input: &[u8] = if self.partial_char.is_empty() {
            bytes
        } else {
            self.partial_char.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.partial_char);
            &joined
        };
        if let Ok(valid) = std::str::from_utf8(input) {
            self.pending.push_str(valid);
            return;
        }
        let mut chunks = input.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            self.pending.push_str(chunk.valid());
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            let incomplete = std::str::from_utf8(invalid).err().is_some_and(|e| e.error_len().is_none());
            if chunks.peek().is_none() && incomplete {
                self.partial_char = invalid.to_vec();
            } else {
                self.pending.push('\u{FFFD}');
            }
        }
    }

    fn run(&mut self, eof: bool) -> io::Result<()> {
        let StreamRedactor { redactor, out, pending, seg, scratch, .. } = self;
        let Some(out) = out.as_mut() else { return Ok(()) };
        let mut sink = Sink::new(pending, false);
        let consumed = redactor.inner.rules.process(seg, pending, eof, &mut sink, scratch);
        let (text, _) = sink.finish(consumed);
        let written = out.write_all(text.as_bytes());
        pending.drain(..consumed);
        // Whatever is still held ends with an unfinished line; an END marker arriving in it
        // must still be noticed, so the next scan starts at that line.
        let last_line = memchr::memrchr(b'\n', self.pending.as_bytes());
        self.holding_block = last_line.is_some();
        self.end_marker_seen = false;
        self.end_scan_from = last_line.map_or(0, |i| i + 1);
        written
    }
}

impl<W: Write> Write for StreamRedactor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for slice in buf.chunks(FEED) {
            self.feed(slice)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}

/// A stream dropped without `finish` still writes its last line (errors cannot be reported
/// from a drop, so they are ignored).
impl<W: Write> Drop for StreamRedactor<W> {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = self.finish_inner();
        }
    }
}
