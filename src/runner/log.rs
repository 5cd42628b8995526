//! The run log file with a size cap (design §5.2.5): the head and the tail of the output are
//! kept, a marker line says how much was cut, and memory stays constant however much a test
//! prints, because the tail lives in the file itself rather than in a buffer.
//!
//! Layout while live, once the output outgrows the head (`cap / 2` bytes):
//!
//! ```text
//! [head: the first cap/2 bytes]
//! [... forgeloop is cutting output here while the run is live; ...]   <- placeholder marker
//! [window: the newest output, at most `cap - head - marker` bytes]
//! ```
//!
//! When the window is full its older half is dropped by copying the newer half down and
//! truncating the file (amortised one extra write per byte), so the file never exceeds the cap
//! and a follower always sees the newest output. A follower that finds the file shorter than
//! its read offset should re-read from the start: that happens at each compaction and once
//! at [`CappedLog::finish`], which writes the final marker `[... forgeloop cut N bytes of output
//! here ...]` (or removes the placeholder if nothing was cut) and starts the kept tail at a line
//! boundary.
//!
//! Memory: one write buffer of [`WRITE_BUFFER`] bytes plus, during a compaction, one copy buffer
//! of the same size.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

/// Bytes gathered before a write to the file; [`CappedLog::flush`] writes sooner.
pub(super) const WRITE_BUFFER: usize = 64 * 1024;
/// Smaller caps are raised to this, so head, marker and window all fit.
pub(super) const MIN_CAP: u64 = 4096;

const LIVE_MARKER: &str =
    "[... forgeloop is cutting output here while the run is live; the count follows when it ends ...]\n";

fn final_marker(cut: u64) -> String {
    format!("[... forgeloop cut {cut} bytes of output here ...]\n")
}

/// What the finished log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LogSummary {
    /// Final size of the file.
    pub bytes: u64,
    /// Output bytes left out (0 when everything fit).
    pub cut: u64,
}

#[derive(Debug)]
struct Window {
    /// Where the marker line (with its leading newline, if any) starts: the end of the head.
    marker_at: u64,
    /// Whether a newline was inserted before the marker because the head ended mid-line.
    newline_before_marker: bool,
    start: u64,
    len: u64,
    max: u64,
}

#[derive(Debug)]
pub(super) struct CappedLog {
    file: File,
    cap: u64,
    head_len: u64,
    window: Option<Window>,
    pending: Vec<u8>,
    cut: u64,
    /// Last byte given to `write`, so sections can start on a fresh line.
    last_byte: Option<u8>,
    /// Last byte that reached the head, to decide whether the marker needs a newline first.
    head_last_byte: Option<u8>,
}

impl CappedLog {
    /// Writes into `file` (expected empty) from offset 0.
    pub(super) fn new(file: File, cap: u64) -> CappedLog {
        CappedLog {
            file,
            cap: cap.max(MIN_CAP),
            head_len: 0,
            window: None,
            pending: Vec::with_capacity(WRITE_BUFFER),
            cut: 0,
            last_byte: None,
            head_last_byte: None,
        }
    }

    /// True when nothing was written yet or the last byte was a newline.
    pub(super) fn at_line_start(&self) -> bool {
        self.last_byte.is_none_or(|b| b == b'\n')
    }

    pub(super) fn is_empty(&self) -> bool {
        self.last_byte.is_none()
    }

    /// Flushes, then writes the final marker and trims the file. Returns what the file holds.
    pub(super) fn finish(mut self) -> io::Result<LogSummary> {
        self.commit_pending()?;
        let Some(window) = self.window.take() else {
            return Ok(LogSummary { bytes: self.head_len, cut: 0 });
        };
        let prefix = if window.newline_before_marker { "\n" } else { "" };
        let (marker, skip) = if self.cut == 0 {
            // Everything fit after all: drop the placeholder (and the newline added for it),
            // which leaves the output exactly as it was printed.
            (String::new(), 0)
        } else {
            // The window starts wherever the last compaction cut; begin at the next line.
            let skip = self.line_start_in_window(&window)?;
            self.cut += skip;
            (format!("{prefix}{}", final_marker(self.cut)), skip)
        };
        let reserved = window.start - window.marker_at;
        debug_assert!(marker.len() as u64 <= reserved, "final marker longer than the placeholder");
        self.file.write_all_at(marker.as_bytes(), window.marker_at)?;
        let kept_start = window.marker_at + marker.len() as u64;
        copy_down(&self.file, window.start + skip, kept_start, window.len - skip)?;
        let bytes = kept_start + window.len - skip;
        self.file.set_len(bytes)?;
        self.file.flush()?;
        Ok(LogSummary { bytes, cut: self.cut })
    }

    /// Offset (within the window) just after the first newline in its first [`WRITE_BUFFER`]
    /// bytes; 0 when there is none (a very long line is kept rather than dropped).
    fn line_start_in_window(&self, window: &Window) -> io::Result<u64> {
        let probe = window.len.min(WRITE_BUFFER as u64);
        let mut buf = vec![0; usize::try_from(probe).unwrap_or(WRITE_BUFFER)];
        self.file.read_exact_at(&mut buf, window.start)?;
        Ok(match buf.iter().position(|&b| b == b'\n') {
            Some(pos) if (pos as u64) + 1 < window.len => pos as u64 + 1,
            _ => 0,
        })
    }

    fn commit_pending(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let result = self.commit(&pending);
        self.pending = pending;
        self.pending.clear();
        result
    }

    fn commit(&mut self, mut data: &[u8]) -> io::Result<()> {
        if self.window.is_none() {
            let room = self.cap / 2 - self.head_len;
            let n = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            if n > 0 {
                self.file.write_all_at(&data[..n], self.head_len)?;
                self.head_len += n as u64;
                self.head_last_byte = Some(data[n - 1]);
                data = &data[n..];
            }
            if data.is_empty() {
                return Ok(());
            }
            self.open_window()?;
        }
        while !data.is_empty() {
            let Some(window) = self.window.as_mut() else { break };
            if window.len == window.max {
                let keep = window.max / 2;
                copy_down(&self.file, window.start + window.len - keep, window.start, keep)?;
                self.file.set_len(window.start + keep)?;
                self.cut += window.len - keep;
                window.len = keep;
            }
            let room = window.max - window.len;
            let n = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            self.file.write_all_at(&data[..n], window.start + window.len)?;
            window.len += n as u64;
            data = &data[n..];
        }
        Ok(())
    }

    fn open_window(&mut self) -> io::Result<()> {
        let newline_before_marker = self.head_last_byte.is_some_and(|b| b != b'\n');
        let marker = format!("{}{LIVE_MARKER}", if newline_before_marker { "\n" } else { "" });
        self.file.write_all_at(marker.as_bytes(), self.head_len)?;
        let start = self.head_len + marker.len() as u64;
        // MIN_CAP keeps this positive: cap/2 + marker < cap.
        let max = self.cap.saturating_sub(start).max(2);
        self.window = Some(Window { marker_at: self.head_len, newline_before_marker, start, len: 0, max });
        Ok(())
    }
}

impl Write for CappedLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(&last) = buf.last() else { return Ok(0) };
        self.last_byte = Some(last);
        if self.pending.is_empty() && buf.len() >= WRITE_BUFFER {
            self.commit(buf)?;
        } else {
            self.pending.extend_from_slice(buf);
            if self.pending.len() >= WRITE_BUFFER {
                self.commit_pending()?;
            }
        }
        Ok(buf.len())
    }

    /// Makes everything written so far visible to a follower of the file.
    fn flush(&mut self) -> io::Result<()> {
        self.commit_pending()
    }
}

/// Copies `len` bytes from `from` down to `to` (`to <= from`) within one file, front to back,
/// which is safe for overlapping ranges in that direction.
fn copy_down(file: &File, from: u64, to: u64, len: u64) -> io::Result<()> {
    debug_assert!(to <= from);
    if from == to || len == 0 {
        return Ok(());
    }
    let mut buf = vec![0; WRITE_BUFFER];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(WRITE_BUFFER as u64) as usize;
        file.read_exact_at(&mut buf[..n], from + done)?;
        file.write_all_at(&buf[..n], to + done)?;
        done += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_with(cap: u64) -> (tempfile::NamedTempFile, CappedLog) {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let file = tmp.reopen().unwrap();
        (tmp, CappedLog::new(file, cap))
    }

    fn lines(count: usize) -> Vec<u8> {
        // 16 bytes a line, so the head (half a power-of-two cap) ends on a line boundary.
        (0..count).map(|i| format!("line {i:010}\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn small_output_is_kept_exactly() {
        let (tmp, mut log) = log_with(1 << 20);
        log.write_all(b"hello\nworld").unwrap();
        log.flush().unwrap();
        // A follower sees flushed bytes before the end.
        assert_eq!(std::fs::read(tmp.path()).unwrap(), b"hello\nworld");
        let summary = log.finish().unwrap();
        assert_eq!(summary, LogSummary { bytes: 11, cut: 0 });
    }

    #[test]
    fn output_that_fits_after_the_head_drops_the_placeholder() {
        // More than the head, less than the cap: no byte is cut and no marker remains, even
        // though the head ended mid-line and a newline was inserted before the placeholder.
        let cap = 8192;
        let data: Vec<u8> = (0..6000u32).map(|i| b"abcdefghij\n"[(i % 11) as usize]).collect();
        let (tmp, mut log) = log_with(cap);
        for chunk in data.chunks(777) {
            log.write_all(chunk).unwrap();
        }
        let summary = log.finish().unwrap();
        assert_eq!(summary.cut, 0);
        assert_eq!(std::fs::read(tmp.path()).unwrap(), data);
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_counts_the_cut() {
        let cap = 8192;
        let data = lines(20_000); // 320,000 bytes
        let (tmp, mut log) = log_with(cap);
        for chunk in data.chunks(1000) {
            log.write_all(chunk).unwrap();
            log.flush().unwrap();
            // The cap holds at every moment, not only at the end.
            assert!(std::fs::metadata(tmp.path()).unwrap().len() <= cap);
        }
        let summary = log.finish().unwrap();
        let text = String::from_utf8(std::fs::read(tmp.path()).unwrap()).unwrap();
        assert_eq!(text.len() as u64, summary.bytes);
        assert!(summary.bytes <= cap);
        assert!(text.starts_with("line 0000000000\nline 0000000001\n"));
        assert!(text.ends_with("line 0000019999\n"));
        let marker_start = text.find("[... forgeloop cut ").unwrap();
        let marker_end = marker_start + text[marker_start..].find('\n').unwrap() + 1;
        let marker = &text[marker_start..marker_end];
        assert_eq!(marker, final_marker(summary.cut));
        // Head (first half of the cap) + kept tail + cut == everything written, byte for byte.
        let head = &text[..marker_start];
        let tail = &text[marker_end..];
        assert_eq!(head.len() as u64, cap / 2);
        assert_eq!(head.len() as u64 + tail.len() as u64 + summary.cut, data.len() as u64);
        // The kept tail is a contiguous suffix starting at a line boundary.
        assert!(tail.starts_with("line "));
        assert!(data.ends_with(tail.as_bytes()));
        // The head is the exact prefix.
        assert!(data.starts_with(head.as_bytes()));
    }

    #[test]
    fn head_ending_mid_line_gets_a_newline_before_the_marker() {
        let cap = MIN_CAP;
        let data = vec![b'x'; 100_000];
        let (tmp, mut log) = log_with(cap);
        log.write_all(&data).unwrap();
        let summary = log.finish().unwrap();
        let text = String::from_utf8(std::fs::read(tmp.path()).unwrap()).unwrap();
        let head = "x".repeat((cap / 2) as usize);
        let expected_marker = format!("\n{}", final_marker(summary.cut));
        assert!(text.starts_with(&format!("{head}{expected_marker}")), "{text:?}");
        let tail = &text[head.len() + expected_marker.len()..];
        assert!(!tail.is_empty() && tail.bytes().all(|b| b == b'x'));
        assert_eq!(head.len() as u64 + tail.len() as u64 + summary.cut, data.len() as u64);
    }

    #[test]
    fn tiny_caps_are_raised() {
        let (tmp, mut log) = log_with(10);
        log.write_all(&lines(5_000)).unwrap();
        let summary = log.finish().unwrap();
        assert!(summary.bytes <= MIN_CAP && summary.cut > 0);
        assert_eq!(std::fs::metadata(tmp.path()).unwrap().len(), summary.bytes);
    }
}
