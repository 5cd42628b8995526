//! Making untrusted text safe to draw: a test log or a reply may hold ANSI sequences, carriage
//! returns, bells, bidi overrides and other controls that would move the cursor or recolour
//! the terminal if passed through. What is left is printable text with tabs expanded.

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

/// Strips escape sequences and replaces other control characters with visible pictures.
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
            c if (c as u32) < 0x20 => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
                column += 1;
            }
            '\u{7f}' => {
                out.push('\u{2421}');
                column += 1;
            }
            c if ('\u{80}'..='\u{9f}').contains(&c) || is_bidi_control(c) => {
                out.push('\u{fffd}');
                column += 1;
            }
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// Explicit direction controls reorder what follows on the screen (Trojan Source).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
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
        assert_eq!(clean("bell\u{7}"), "bell\u{2407}");
        assert_eq!(clean("a\tb"), "a       b");
        assert_eq!(clean("x\u{202e}y"), "x\u{fffd}y");
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
