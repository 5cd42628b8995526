//! How a command's output bytes travel: decoded to UTF-8 (invalid bytes become U+FFFD, never
//! an error), read by the test results' line parser (a test command's; before redaction, since
//! an id must be compared as the runner printed it), through the streaming redactor, then both
//! into the log and into a bounded ring that keeps the newest characters for
//! `failure_output`. Nothing here grows with the amount of output.

use std::collections::VecDeque;
use std::io::{self, Write};

use super::log::CappedLog;
use crate::domain::test_results::OutputParser;
use crate::domain::text::failure_tail;
use crate::redact::{Redactor, StreamRedactor};

/// Lossy UTF-8 decoding across reads: a character split between two reads is joined, and
/// anything invalid becomes U+FFFD as `String::from_utf8_lossy` would.
#[derive(Debug, Default)]
pub(super) struct Utf8Decoder {
    /// An incomplete sequence at the end of the last read (at most 3 bytes).
    carry: Vec<u8>,
    scratch: Vec<u8>,
}

impl Utf8Decoder {
    pub(super) fn decode(&mut self, input: &[u8], out: &mut String) {
        let mut rest = if self.carry.is_empty() {
            input
        } else {
            self.scratch.clear();
            self.scratch.append(&mut self.carry);
            self.scratch.extend_from_slice(input);
            &self.scratch[..]
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    out.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len..];
                        }
                        None => {
                            self.carry = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
    }

    /// An incomplete sequence left at the end of the output is invalid.
    pub(super) fn finish(&mut self, out: &mut String) {
        if !self.carry.is_empty() {
            self.carry.clear();
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// The newest bytes of one command's (redacted, valid UTF-8) output, enough for `chars`
/// characters.
#[derive(Debug)]
pub(super) struct TailRing {
    bytes: VecDeque<u8>,
    max_bytes: usize,
    chars: usize,
}

impl TailRing {
    pub(super) fn new(chars: usize) -> TailRing {
        // A character is at most 4 bytes in UTF-8; the margin lets `failure_tail` trim
        // surrounding whitespace and still have `chars` characters.
        let max_bytes = chars.saturating_mul(4).saturating_add(1024);
        TailRing { bytes: VecDeque::new(), max_bytes, chars }
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        if data.len() >= self.max_bytes {
            self.bytes.clear();
            self.bytes.extend(&data[data.len() - self.max_bytes..]);
            return;
        }
        let overflow = (self.bytes.len() + data.len()).saturating_sub(self.max_bytes);
        self.bytes.drain(..overflow);
        self.bytes.extend(data);
    }

    /// The failure tail (design §5.2.6 and design §12.4), or `None` when only whitespace was
    /// printed.
    pub(super) fn text(&mut self) -> Option<String> {
        let bytes = self.bytes.make_contiguous();
        // The ring may have cut a character in half at its start.
        let start = bytes.iter().position(|&b| (b & 0xC0) != 0x80).unwrap_or(bytes.len());
        let text = String::from_utf8_lossy(&bytes[start..]);
        let tail = failure_tail(&text, self.chars);
        (!tail.is_empty()).then_some(tail)
    }
}

/// Writes to the log and the tail ring at once.
pub(super) struct Tee<'a> {
    log: &'a mut CappedLog,
    tail: &'a mut TailRing,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.log.write_all(buf)?;
        self.tail.push(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.log.flush()
    }
}

/// One command's output path: decode, read the test results, redact, log and remember the
/// tail.
pub(super) struct OutputSink<'a> {
    decoder: Utf8Decoder,
    text: String,
    stream: StreamRedactor<Tee<'a>>,
    results: Option<&'a mut OutputParser>,
}

impl<'a> OutputSink<'a> {
    pub(super) fn new(
        redactor: &Redactor,
        log: &'a mut CappedLog,
        tail: &'a mut TailRing,
        results: Option<&'a mut OutputParser>,
    ) -> OutputSink<'a> {
        OutputSink {
            decoder: Utf8Decoder::default(),
            text: String::new(),
            stream: redactor.stream(Tee { log, tail }),
            results,
        }
    }

    /// Takes one read of raw output and makes it visible in the log (complete lines at least;
    /// the redactor may hold back a partial line until it is complete).
    pub(super) fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.text.clear();
        self.decoder.decode(bytes, &mut self.text);
        if let Some(results) = self.results.as_deref_mut() {
            results.feed(&self.text);
        }
        self.stream.write_all(self.text.as_bytes())?;
        self.stream.flush()
    }

    /// A line forgeloop itself adds to the command's output (e.g. why it could not start).
    pub(super) fn push_line(&mut self, line: &str) -> io::Result<()> {
        self.stream.write_all(line.as_bytes())?;
        self.stream.write_all(b"\n")?;
        self.stream.flush()
    }

    pub(super) fn finish(mut self) -> io::Result<()> {
        self.text.clear();
        self.decoder.finish(&mut self.text);
        if let Some(results) = self.results.as_deref_mut() {
            results.feed(&self.text);
        }
        self.stream.write_all(self.text.as_bytes())?;
        self.stream.finish()?.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> String {
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        for chunk in input.chunks(piece) {
            decoder.decode(chunk, &mut out);
        }
        decoder.finish(&mut out);
        out
    }

    #[test]
    fn decoding_matches_lossy_whatever_the_split() {
        let mut input = "héllo wörld ✓ 𝄞 ".repeat(3).into_bytes();
        input.extend_from_slice(b"\xff\xfe bad \xe2\x9c tail \xf0\x9d");
        let expected = String::from_utf8_lossy(&input).into_owned();
        for piece in 1..=input.len() {
            assert_eq!(decode_in_pieces(&input, piece), expected, "piece size {piece}");
        }
    }

    #[test]
    fn tail_keeps_the_newest_characters() {
        let mut ring = TailRing::new(10);
        for i in 0..10_000 {
            ring.push(format!("é{i}\n").as_bytes());
        }
        let text = ring.text().unwrap();
        assert!(text.ends_with("é9999"));
        assert!(text.chars().count() <= 10);
        assert!(ring.bytes.len() <= ring.max_bytes);
        // A single huge push is bounded too.
        ring.push(&vec![b'z'; 1 << 20]);
        assert_eq!(ring.text().unwrap(), "z".repeat(10));
        assert!(TailRing::new(10).text().is_none());
    }
}
