//! The bytes that reach the person when a cycle needs them: the terminal bell, then a desktop
//! notification as OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty) and OSC 777 (foot,
//! Ghostty, rxvt, VTE). Terminals that know neither ignore them.

use crate::domain::terminal;

/// Longest message sent; desktop notifications show little more.
const MAX_CHARS: usize = 160;

/// BEL, OSC 9 and OSC 777 for `message`, with every control character (`domain::terminal`'s,
/// bidi controls included) removed from it so the text can never end the sequence early or
/// start another.
pub fn sequence(message: &str) -> String {
    let clean: String =
        message.chars().filter(|&c| !terminal::is_control(c) && c != '\n' && c != '\t').take(MAX_CHARS).collect();
    let clean = clean.replace(';', ",");
    format!("\x07\x1b]9;forgeloop: {clean}\x1b\\\x1b]777;notify;forgeloop;{clean}\x1b\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bell_and_two_notifications_whose_text_cannot_escape() {
        let out = sequence("dark-mode is ready\x1b]52;c;evil\x07; merge");
        assert!(out.starts_with('\x07'));
        assert_eq!(out.matches('\x07').count(), 1, "only the bell itself: {out:?}");
        assert_eq!(out.matches('\x1b').count(), 4, "two OSC openings and two ST: {out:?}");
        assert!(out.contains("\x1b]9;forgeloop: dark-mode is ready]52,c,evil, merge\x1b\\"), "{out:?}");
        assert!(out.contains("\x1b]777;notify;forgeloop;dark-mode is ready]52,c,evil, merge\x1b\\"), "{out:?}");
        assert!(sequence("a\u{202e}b\u{9b}c\nd").contains(": abcd\x1b"), "bidi, C1 and newlines are removed");
    }
}
