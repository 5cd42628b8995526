//! What the process prints, for the CLI and the demo: one JSON document on stdout, or the
//! error document `{"status", "error", ...}` with exit code 2, or text for a person. Every
//! printer here redacts, and none lets a control character out raw: PR data (test output,
//! file names and contents) may hold escape sequences that would write the person's clipboard
//! or retitle their terminal (`domain::terminal`). Printing anywhere else would skip that.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use crate::domain::terminal;
use crate::error::Error;
use crate::redact::Redactor;

/// Prints `value` as pretty JSON (2-space indent, trailing newline) after redacting every
/// string in it.
pub fn json<T: Serialize>(redactor: &Redactor, value: &T) -> i32 {
    let mut value = match serde_json::to_value(value) {
        Ok(v) => v,
        Err(e) => return error(redactor, &Error::Invalid(format!("cannot encode the output: {e}"))),
    };
    redactor.redact_json(&mut value);
    print_value(&value);
    0
}

/// The JSON text `json` prints: serde_json escapes C0 controls, and DEL, C1 and bidi controls
/// are escaped after it (`\u009b`), so no string can reach a terminal raw.
fn json_text(value: &Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".into());
    terminal::escape_controls_in_json(&text).into_owned()
}

fn print_value(value: &Value) {
    let mut text = json_text(value);
    text.push('\n');
    write_stdout(&text);
}

/// Prints `value` redacted on one line (a long-running command's first line, read by a
/// program as soon as it appears: `serve`'s `SERVING`).
pub fn line(redactor: &Redactor, value: &Value) {
    let mut value = value.clone();
    redactor.redact_json(&mut value);
    let mut text = terminal::escape_controls_in_json(&value.to_string()).into_owned();
    text.push('\n');
    write_stdout(&text);
}

/// Prints plain text (handoff/iterate) and a newline.
pub fn text(redactor: &Redactor, text: &str) -> i32 {
    let mut shown = for_terminal(redactor, text);
    shown.push('\n');
    write_stdout(&shown);
    0
}

/// Prints text with no newline added (the diff, which stays a patch `git apply` takes as long
/// as it holds no control characters).
pub fn body(redactor: &Redactor, text: &str) {
    write_stdout(&for_terminal(redactor, text));
}

/// A line for the person on stderr, beside the result on stdout.
pub fn note(redactor: &Redactor, text: &str) {
    write_stderr(&format!("{}\n", for_terminal(redactor, text)));
}

/// A question on stderr, left on the line for the answer.
pub fn prompt(redactor: &Redactor, text: &str) {
    write_stderr(&for_terminal(redactor, text));
}

/// `text` redacted, then with its control characters made visible.
fn for_terminal(redactor: &Redactor, text: &str) -> String {
    terminal::escape_controls(&redactor.redact(text)).into_owned()
}

fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) is not worth a panic.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn write_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Prints `err`'s JSON error document, redacted, on stdout; returns its exit code (2).
pub fn error(redactor: &Redactor, err: &Error) -> i32 {
    let mut value = err.document();
    redactor.redact_json(&mut value);
    print_value(&value);
    err.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_escapes_what_serde_json_leaves_raw_and_keeps_the_value() {
        let value = serde_json::json!({"out": "\u{1b}]52;c;ZXZpbA==\u{7} \u{9b}31m \u{9d}0;t\u{9c} \u{7f} \u{202e} ✓"});
        let text = json_text(&value);
        for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{9d}', '\u{9c}', '\u{7f}', '\u{202e}'] {
            assert!(!text.contains(raw), "{raw:?} raw in {text}");
        }
        for escaped in ["\\u001b]52", "\\u0007", "\\u009b31m", "\\u009d0", "\\u009c", "\\u007f", "\\u202e", "✓"] {
            assert!(text.contains(escaped), "{escaped} missing from {text}");
        }
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }
}
