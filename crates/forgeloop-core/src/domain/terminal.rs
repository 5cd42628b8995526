//! Text from a PR (test output, file names, file contents) made safe to write to a terminal.
//! Written raw, ESC and the C1 introducers start sequences that set the clipboard (OSC 52),
//! the window title (OSC 0), hyperlinks (OSC 8) or move the cursor to hide what was printed,
//! and bidi overrides reorder what the person reads (Trojan Source). Such characters are not
//! dropped but written as visible escapes, so the person sees that something was there and what.
//!
//! The notation is Python's `repr`: `\xHH` for a code point below U+0100 (ESC is `\x1b`, DEL
//! `\x7f`, the C1 CSI U+009B `\x9b`) and `\uHHHH` for a bidi control (RLO is `\u202e`). It is
//! for the eye, not reversible: a backslash already in the text is left as it is, so `\x1b`
//! typed as four characters looks the same. The JSON outputs are the exact form.

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for what must not reach a terminal raw: C0 controls except tab and newline (ESC, BEL,
/// CR, backspace, …), DEL, C1 controls (U+0080–U+009F) and the explicit bidi controls. The one
/// classification the CLI, the JSON outputs and the control room share.
pub fn is_control(c: char) -> bool {
    match c {
        '\t' | '\n' => false,
        '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        c => is_bidi_control(c),
    }
}

/// Explicit direction embeddings, overrides, isolates and marks: they reorder what follows on
/// the screen, so code can read differently from what it does.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Appends the visible escape of `c` (`\x1b`, `\x9b`, `\u202e`) to `out`.
pub fn push_escape(out: &mut String, c: char) {
    let code = c as u32;
    let _ = if code < 0x100 { write!(out, "\\x{code:02x}") } else { write!(out, "\\u{code:04x}") };
}

/// `text` with every control character (see [`is_control`]) written as its visible escape and
/// everything else, non-ASCII included, kept. Newlines and tabs stay, and so does a CR right
/// before a newline (a CRLF line ending moves nothing the person could miss, and a diff of a
/// CRLF file stays a patch); a lone CR, which would let later text overwrite a line, does not.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`escape_controls`] for a value shown inside one line (a file name in `--stat`): newlines,
/// tabs and every CR are escaped too, so the value cannot start a line of its own.
pub fn escape_controls_in_line(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, one_line: bool) -> Cow<'_, str> {
    let escaped = |c: char, next: Option<char>| {
        if one_line {
            is_control(c) || c == '\n' || c == '\t'
        } else {
            is_control(c) && !(c == '\r' && next == Some('\n'))
        }
    };
    let mut chars = text.char_indices().peekable();
    let mut out: Option<String> = None;
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if escaped(c, next) {
            let out = out.get_or_insert_with(|| {
                let mut s = String::with_capacity(text.len() + 16);
                s.push_str(&text[..i]);
                s
            });
            push_escape(out, c);
        } else if let Some(out) = out.as_mut() {
            out.push(c);
        }
    }
    match out {
        Some(out) => Cow::Owned(out),
        None => Cow::Borrowed(text),
    }
}

/// JSON text (as serde_json writes it) with every control character written as `\uHHHH`.
/// serde_json escapes C0 but leaves DEL, C1 and bidi controls raw; they can only stand inside a
/// string, and never right after an escaping backslash, so the result is the same JSON value.
pub fn escape_controls_in_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_control) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_control(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a terminal must not receive raw from `escape_controls`.
    fn raw_control(text: &str) -> Option<(usize, char)> {
        let chars: Vec<char> = text.chars().collect();
        chars.iter().enumerate().find_map(|(i, &c)| {
            let crlf = c == '\r' && chars.get(i + 1) == Some(&'\n');
            (is_control(c) && !crlf).then_some((i, c))
        })
    }

    #[test]
    fn osc_52_cannot_reach_the_clipboard() {
        assert_eq!(escape_controls("a\u{1b}]52;c;ZXZpbA==\u{7}b"), "a\\x1b]52;c;ZXZpbA==\\x07b");
        assert_eq!(escape_controls("\u{1b}]52;c;ZXZpbA==\u{1b}\\"), "\\x1b]52;c;ZXZpbA==\\x1b\\");
    }

    #[test]
    fn osc_0_title_and_osc_8_hyperlinks_are_shown_not_run() {
        assert_eq!(escape_controls("\u{1b}]0;pwned\u{7}ok"), "\\x1b]0;pwned\\x07ok");
        assert_eq!(
            escape_controls("\u{1b}]8;;https://evil.example\u{1b}\\docs\u{1b}]8;;\u{1b}\\"),
            "\\x1b]8;;https://evil.example\\x1b\\docs\\x1b]8;;\\x1b\\"
        );
    }

    #[test]
    fn csi_and_c1_csi_are_escaped() {
        assert_eq!(escape_controls("\u{1b}[2J\u{1b}[31mred\u{1b}[0m"), "\\x1b[2J\\x1b[31mred\\x1b[0m");
        assert_eq!(escape_controls("\u{9b}2J\u{9d}0;t\u{9c}"), "\\x9b2J\\x9d0;t\\x9c");
        assert_eq!(escape_controls("del\u{7f} nul\0 bs\u{8}"), "del\\x7f nul\\x00 bs\\x08");
    }

    #[test]
    fn bidi_overrides_are_escaped() {
        assert_eq!(escape_controls("if admin\u{202e} {\u{2066}"), "if admin\\u202e {\\u2066");
        assert_eq!(escape_controls("\u{200f}\u{61c}"), "\\u200f\\u061c");
    }

    #[test]
    fn text_layout_and_non_ascii_are_kept() {
        let text = "naïve 日本語 ✓ — é\n\tindented\r\nnext\n";
        assert!(matches!(escape_controls(text), Cow::Borrowed(_)));
        assert_eq!(escape_controls(text), text);
        assert_eq!(escape_controls("10%\r50%\rdone"), "10%\\x0d50%\\x0ddone");
        assert_eq!(escape_controls("end\r"), "end\\x0d");
    }

    #[test]
    fn a_value_in_one_line_cannot_break_it() {
        assert_eq!(escape_controls_in_line("a\nb\tc\r\nd\u{1b}e"), "a\\x0ab\\x09c\\x0d\\x0ad\\x1be");
        assert_eq!(escape_controls_in_line("src/main.rs"), "src/main.rs");
    }

    #[test]
    fn json_keeps_its_value_and_loses_its_raw_controls() {
        let value = serde_json::json!({"k\u{9b}": "a\u{7f}b\u{9b}c\u{202e}d\u{1b}e\"\\\u{85}"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        assert!(text.contains('\u{9b}') && text.contains('\u{7f}'), "serde_json leaves them raw");
        let escaped = escape_controls_in_json(&text);
        assert!(escaped.contains("\\u009b") && escaped.contains("\\u007f") && escaped.contains("\\u202e"));
        assert!(!escaped.chars().any(is_control), "{escaped}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&escaped).unwrap(), value);
    }

    proptest! {
        #[test]
        fn no_raw_control_survives(text in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]){0,64}") {
            let out = escape_controls(&text);
            prop_assert_eq!(raw_control(&out), None, "{:?} -> {:?}", text, out);
            let line = escape_controls_in_line(&text);
            prop_assert!(!line.chars().any(|c| is_control(c) || c == '\n' || c == '\t'), "{:?}", line);
        }

        #[test]
        fn text_without_controls_is_unchanged(text in "[^\\x00-\\x08\\x0b-\\x1f\\x7f-\\u{9f}\\u{200e}\\u{200f}\\u{61c}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]{0,64}") {
            prop_assert_eq!(escape_controls(&text), text.as_str());
        }

        #[test]
        fn every_control_is_shown_where_it_was(prefix in "[a-z]{0,8}", c in "[\\x00-\\x08\\x0b-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}]", suffix in "[a-z]{0,8}") {
            let c = c.chars().next().unwrap();
            let mut expected = prefix.clone();
            push_escape(&mut expected, c);
            expected.push_str(&suffix);
            let text = format!("{prefix}{c}{suffix}");
            prop_assert_eq!(escape_controls(&text), expected);
        }

        #[test]
        fn json_stays_the_same_value(text in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202e}\"\\\\]){0,32}") {
            let value = serde_json::json!({"s": text, "list": [text.clone()]});
            let json = serde_json::to_string_pretty(&value).unwrap();
            let escaped = escape_controls_in_json(&json);
            prop_assert!(!escaped.chars().any(is_control));
            prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&escaped).unwrap(), value);
        }
    }
}
