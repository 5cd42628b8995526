//! Reading a command's output as it streams, before redaction: the text is cut into lines
//! (a line longer than [`LINE_MAX`] bytes is skipped whole: no runner prints a result line that
//! long), and each line goes to every output format forgeloop reads — libtest, nextest, go test,
//! TAP — which each recognise their own. Memory stays bounded whatever the command prints, and
//! nothing here panics on any input.

use super::collect::Collector;
use super::gotest::GoTest;
use super::libtest::Libtest;
use super::model::CommandResults;
use super::nextest::Nextest;
use super::tap::Tap;

/// The longest line read, in bytes.
pub const LINE_MAX: usize = 16 * 1024;

/// The first characters (after indentation) of every line a format reads: libtest's `running`,
/// `Running`, `Doc-tests`, `test`, `error:`, `failures:`, `ok`/`FAILED`/`ignored` and JSON;
/// nextest's statuses (`PASS`, `FAIL`, `SKIP`, `SIG…`, `TIMEOUT`, `TRY`, `RETRY`, `START`,
/// `SLOW`, `LEAK`, `FLAKY`, `ABORT`), `Starting`, `Summary`, `Cancelling`; go's `=== RUN`,
/// `--- PASS`, `ok`, `FAIL`, `?` and JSON; TAP's `ok`, `not ok`, `1..`, `TAP version`, `Bail
/// out!`, `#`, `---` and `...`.
const STARTS: &[u8] = b"RDrtefoiFTB1#=-?PSLCA.{n";

/// One command's output, read as it comes, into its results.
#[derive(Debug, Default)]
pub struct OutputParser {
    collector: Collector,
    line: String,
    /// The current line passed [`LINE_MAX`]: it is skipped up to its end.
    overlong: bool,
    libtest: Libtest,
    nextest: Nextest,
    go: GoTest,
    tap: Tap,
}

impl OutputParser {
    /// A parser for a new command.
    pub fn new() -> OutputParser {
        OutputParser::default()
    }

    /// Takes the next piece of the output (any split: a line may come in many pieces).
    pub fn feed(&mut self, text: &str) {
        let mut rest = text;
        while let Some(at) = rest.find('\n') {
            let piece = &rest[..at];
            if self.line.is_empty() && !self.overlong {
                // A whole line in this piece: read in place.
                if piece.len() <= LINE_MAX {
                    self.dispatch(piece.strip_suffix('\r').unwrap_or(piece));
                }
            } else {
                self.append(piece);
                if !self.overlong {
                    let line = std::mem::take(&mut self.line);
                    self.dispatch(line.strip_suffix('\r').unwrap_or(&line));
                    self.line = line;
                }
                self.line.clear();
            }
            self.overlong = false;
            rest = &rest[at + 1..];
        }
        self.append(rest);
    }

    fn append(&mut self, piece: &str) {
        if self.overlong {
            return;
        }
        if self.line.len() + piece.len() > LINE_MAX {
            self.overlong = true;
            self.line.clear();
            return;
        }
        self.line.push_str(piece);
    }

    fn dispatch(&mut self, line: &str) {
        // Most output is no runner's: a line whose first character begins no line any format
        // reads is skipped at once (unless libtest waits for a result its test's output
        // interrupted, or for the names of a `failures:` list).
        let first = line.bytes().find(|b| *b != b' ' && *b != b'\t');
        let wanted = first.is_some_and(|b| STARTS.contains(&b));
        if !wanted && !self.libtest.wants_every_line() {
            return;
        }
        let into = &mut self.collector;
        self.nextest.line(line, into);
        // nextest prints each failing test's own libtest output: not a second run.
        if !self.nextest.is_open() {
            self.libtest.line(line, into);
        }
        self.go.line(line, into);
        self.tap.line(line, into);
    }

    /// The output ended: what the formats hold back is settled, and the collector (to which a
    /// command's recorded records may still be added) is handed over.
    pub fn finish(mut self) -> Collector {
        if !self.overlong && !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.dispatch(line.strip_suffix('\r').unwrap_or(&line));
        }
        let into = &mut self.collector;
        self.libtest.finish(into);
        self.nextest.finish(into);
        self.go.finish(into);
        self.tap.finish(into);
        self.collector
    }

    /// The results of a command whose only source is its output.
    pub fn results(self, command: usize, argv: Vec<String>) -> CommandResults {
        self.finish().finish(command, argv)
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{Outcome, Runner};
    use super::*;

    #[test]
    fn lines_may_come_in_any_pieces() {
        let text = include_str!("fixtures/libtest_pass.txt");
        let whole = {
            let mut p = OutputParser::new();
            p.feed(text);
            p.results(0, vec![])
        };
        for piece in [1, 2, 3, 7, 64] {
            let mut p = OutputParser::new();
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(piece) {
                p.feed(&chunk.iter().collect::<String>());
            }
            assert_eq!(p.results(0, vec![]), whole, "pieces of {piece}");
        }
        assert_eq!(whole.runners, vec![Runner::Libtest]);
        assert_eq!(whole.counts.total(), 7);
    }

    #[test]
    fn crlf_and_a_last_line_without_newline() {
        let mut p = OutputParser::new();
        p.feed("TAP version 13\r\nok 1 - a\r\n1..1");
        let r = p.results(0, vec![]);
        assert_eq!(r.test("a").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.processes.unended(), 0);
    }

    #[test]
    fn an_overlong_line_is_skipped_whole() {
        let mut p = OutputParser::new();
        p.feed("running 1 test\ntest ");
        p.feed(&"x".repeat(LINE_MAX * 2));
        p.feed(" ... ok\ntest short ... ok\n");
        let r = p.results(0, vec![]);
        assert_eq!(r.counts.total(), 1);
        assert!(r.test("short").is_some());
    }

    #[test]
    fn nextest_failure_output_is_not_a_libtest_run() {
        let mut p = OutputParser::new();
        p.feed(include_str!("fixtures/nextest.txt"));
        let r = p.results(0, vec![]);
        assert_eq!(r.runners, vec![Runner::Nextest]);
    }

    #[test]
    fn output_of_no_known_runner_gives_nothing() {
        let mut p = OutputParser::new();
        p.feed("ok - 2+3=5\nPASS\nRan 3 tests in 0.001s\n\nOK\n");
        let r = p.results(0, vec!["sh".into(), "test.sh".into()]);
        assert!(!r.itemised());
        assert!(r.runners.is_empty());
    }

    mod props {
        use proptest::collection::vec;
        use proptest::prelude::*;

        use super::super::super::records::RecordReader;
        use super::*;

        /// Lines that start the way the formats' lines do, then anything.
        fn runner_like() -> impl Strategy<Value = String> {
            let starts = prop_oneof![
                Just("test "),
                Just("running "),
                Just("test result: "),
                Just("     Running "),
                Just("   Doc-tests "),
                Just("failures:"),
                Just("    "),
                Just("ok "),
                Just("not ok "),
                Just("1.."),
                Just("# Subtest: "),
                Just("TAP version "),
                Just("  ---"),
                Just("Bail out!"),
                Just("=== RUN   "),
                Just("--- FAIL: "),
                Just("ok  \t"),
                Just("FAIL\t"),
                Just("{\"Action\":"),
                Just("{ \"type\": \"test\", "),
                Just("    Starting 3 tests across "),
                Just("        PASS ["),
                Just("   TRY 2 FAIL ["),
                Just("     Summary ["),
                Just(""),
            ];
            (starts, any::<String>()).prop_map(|(start, rest)| format!("{start}{rest}"))
        }

        proptest! {
            #[test]
            fn parsers_never_panic_on_any_text(pieces in vec(any::<String>(), 0..16)) {
                let mut p = OutputParser::new();
                for piece in &pieces {
                    p.feed(piece);
                }
                let r = p.results(0, vec![]);
                prop_assert!(r.processes.ended <= r.processes.begun);
            }

            #[test]
            fn parsers_never_panic_on_runner_like_lines(lines in vec(runner_like(), 0..40), split in 1usize..9) {
                let text = lines.join("\n");
                let chars: Vec<char> = text.chars().collect();
                let mut p = OutputParser::new();
                for chunk in chars.chunks(split) {
                    p.feed(&chunk.iter().collect::<String>());
                }
                let r = p.results(0, vec![]);
                prop_assert!(r.counts.total() <= lines.len() as u64);
            }

            #[test]
            fn the_record_reader_never_panics(lines in vec(prop_oneof![
                any::<String>(),
                any::<String>().prop_map(|s| format!("{{\"v\":1,\"r\":\"pytest\",\"k\":\"result\",\"id\":{s:?},\"o\":\"passed\"}}")),
                Just("{\"v\":1,\"r\":\"unittest\",\"k\":\"end\",\"exit\":99999999999}".to_owned()),
                Just("{\"v\":1,\"r\":\"node\",\"k\":\"begin\"}".to_owned()),
            ], 0..30)) {
                let mut c = super::super::super::collect::Collector::new();
                let mut reader = RecordReader::new();
                for line in &lines {
                    reader.line(line, &mut c);
                }
                let r = c.finish(0, vec![]);
                prop_assert!(r.counts.total() <= lines.len() as u64);
            }
        }
    }
}
