//! What the process prints on stdout, for the CLI and the demo, redacted: one JSON document, or
//! the error document `{"status", "error", ...}` with exit code 2.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

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

fn print_value(value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".into());
    let mut out = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) is not worth a panic.
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Prints plain text (handoff/iterate), redacted.
pub fn text(redactor: &Redactor, text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", redactor.redact(text));
    let _ = out.flush();
    0
}

pub fn error(redactor: &Redactor, err: &Error) -> i32 {
    let mut value = err.document();
    redactor.redact_json(&mut value);
    print_value(&value);
    err.exit_code()
}
