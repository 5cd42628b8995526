//! Making untrusted text safe to draw: a test log or a reply may hold ANSI sequences, carriage
//! returns, bells, bidi overrides and other controls that would move the cursor or recolour
//! the terminal if passed through. What is left is printable text with tabs expanded. What
//! counts as a control, and how a lone one is shown, is `domain::terminal`'s, as in the CLI;
//! only stripping whole escape sequences (colours are noise on screen) is the control room's.

use crate::domain::terminal;

const TAB_WIDTH: usize = 8;

/// One display line from raw log bytes (no newline inside). Carriage returns keep only the
/// text after the last one, as a terminal would show a progress line.
pub fn display_line(raw: &[u8]) -> String {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let text = String::from_utf8_lossy(raw);
    let visible = match text.rfind('\r') {
        Some(i) => &text[i + 1..],
        None => &text[..],
    };
    clean(visible)
}

/// Strips escape sequences and shows other control characters as escapes (`\x07`, `\u202e`).
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut column = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 CSI and OSC introducers behave like ESC [ and ESC ].
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' => skip_string(&mut chars),
            '\t' => {
                let n = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
            }
            '\n' | '\r' => {
                out.push(' ');
                column += 1;
            }
            c if terminal::is_control(c) => {
                let before = out.len();
                terminal::push_escape(&mut out, c);
                column += out.len() - before;
            }
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars<'_>) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            skip_string(chars);
        }
        // Two-character sequences with an intermediate byte (ESC ( B, ESC # 8, …).
        Some(' '..='/') => {
            chars.next();
            chars.next();
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

/// CSI: parameters and intermediates, ended by a byte in `@`..=`~`.
fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            return;
        }
        if !(' '..='?').contains(&c) {
            return;
        }
    }
}

/// OSC/DCS/PM/APC strings end with BEL or ESC \ (ST).
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_removed_and_controls_made_visible() {
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(clean("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(clean("a\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\b"), "alinkb");
        assert_eq!(clean("bell\u{7}"), "bell\\x07");
        assert_eq!(clean("del\u{7f} nel\u{85}"), "del\\x7f nel\\x85");
        assert_eq!(clean("\u{7}\tb"), "\\x07    b", "an escape is four columns wide");
        assert_eq!(clean("a\tb"), "a       b");
        assert_eq!(clean("x\u{202e}y"), "x\\u202ey");
        assert_eq!(clean("\u{1b}(Bplain"), "plain");
        assert_eq!(clean("\u{9b}2Jz"), "z");
        assert!(!clean("\u{1b}[2J\u{1b}[H\u{1b}[?1049h").contains('\u{1b}'));
    }

    #[test]
    fn carriage_returns_keep_the_last_segment() {
        assert_eq!(display_line(b"10%\r50%\r100%"), "100%");
        assert_eq!(display_line(b"windows line\r"), "windows line");
        assert_eq!(display_line(b"\xff\xfebad"), "\u{fffd}\u{fffd}bad");
    }
}
