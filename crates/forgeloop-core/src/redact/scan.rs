//! Byte-level helpers the rules share: token boundaries, character runs, ANSI escapes,
//! entropy. Rules work on bytes because every shape they look for is ASCII.

const ESC: u8 = 0x1b;

/// Letters, digits and `_`: what continues a token, so a match must not start inside a run
/// of them (`task-runner` is not `sk-…`).
#[inline]
pub(crate) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[inline]
pub(crate) fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// The URL-safe base64 alphabet, which most token formats draw from.
#[inline]
pub(crate) fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// True when a token may start at `pos`: start of text, a non-word byte before it, or an
/// ANSI colour code glued on (`\e[31mghp_…`), which is not part of the token.
pub(crate) fn left_boundary(t: &[u8], pos: usize) -> bool {
    match pos.checked_sub(1).and_then(|i| t.get(i)) {
        None => true,
        Some(&b) => !is_word(b) || ansi_ends_at(t, pos),
    }
}

/// Is there a complete CSI escape (`ESC [ params final`) ending right before `pos`?
pub(crate) fn ansi_ends_at(t: &[u8], pos: usize) -> bool {
    let Some(&last) = pos.checked_sub(1).and_then(|i| t.get(i)) else { return false };
    if !(0x40..=0x7e).contains(&last) {
        return false;
    }
    let lowest = pos.saturating_sub(32);
    let mut i = pos - 1;
    while i > lowest {
        i -= 1;
        match t[i] {
            b'[' => return i > 0 && t[i - 1] == ESC,
            0x20..=0x3f => {}
            _ => return false,
        }
    }
    false
}

/// Skips CSI escapes starting at `pos` (a value coloured by a logger is still a value).
pub(crate) fn skip_ansi(t: &[u8], mut pos: usize) -> usize {
    while t.get(pos) == Some(&ESC) && t.get(pos + 1) == Some(&b'[') {
        let mut i = pos + 2;
        let limit = (pos + 32).min(t.len());
        while i < limit && (0x20..=0x3f).contains(&t[i]) {
            i += 1;
        }
        if i < limit && (0x40..=0x7e).contains(&t[i]) {
            pos = i + 1;
        } else {
            break;
        }
    }
    pos
}

/// End of the run of bytes satisfying `pred` that starts at `pos`, looking at no more than
/// `cap + 1` bytes: a result of `pos + cap + 1` means the run is longer than `cap`.
#[inline]
pub(crate) fn run_end(t: &[u8], pos: usize, cap: usize, pred: impl Fn(u8) -> bool) -> usize {
    let limit = t.len().min(pos.saturating_add(cap).saturating_add(1));
    let mut i = pos.min(limit);
    while i < limit && pred(t[i]) {
        i += 1;
    }
    i
}

/// Start of the run of bytes satisfying `pred` that ends at `pos`, at most `cap` bytes back.
#[inline]
pub(crate) fn run_start(t: &[u8], pos: usize, cap: usize, pred: impl Fn(u8) -> bool) -> usize {
    let limit = pos.saturating_sub(cap);
    let mut i = pos.min(t.len());
    while i > limit && pred(t[i - 1]) {
        i -= 1;
    }
    i
}

/// Shannon entropy in bits per byte.
pub(crate) fn entropy(v: &[u8]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in v {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

/// Character classes present (lowercase, uppercase, digit, other), as a count 0–4.
pub(crate) fn class_count(v: &[u8]) -> u32 {
    let (mut lower, mut upper, mut digit, mut other) = (false, false, false, false);
    for &b in v {
        match b {
            b'a'..=b'z' => lower = true,
            b'A'..=b'Z' => upper = true,
            b'0'..=b'9' => digit = true,
            _ => other = true,
        }
    }
    lower as u32 + upper as u32 + digit as u32 + other as u32
}

pub(crate) fn has_upper_and_lower(v: &[u8]) -> bool {
    v.iter().any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase)
}

/// The largest char boundary at or below `i` (`str::floor_char_boundary` is newer than our MSRV).
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub(crate) fn ceil_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Substring test for the short strings rules compare (identifiers, values): a plain scan
/// beats setting up a SIMD searcher per call.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    if hay.len() > 512 {
        return memchr::memmem::find(hay, needle).is_some();
    }
    let Some((&first, rest)) = needle.split_first() else { return true };
    let last_start = (hay.len() + 1).saturating_sub(needle.len());
    hay[..last_start].iter().enumerate().any(|(i, &b)| b == first && hay[i + 1..].starts_with(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_see_through_colour_codes() {
        let t = b"\x1b[31mghp_x";
        assert!(left_boundary(t, 5));
        assert!(!left_boundary(b"xghp_", 1));
        assert!(left_boundary(b"=ghp_", 1));
        assert_eq!(skip_ansi(b"\x1b[1;31mvalue", 0), 7);
        assert_eq!(skip_ansi(b"value", 0), 0);
    }

    #[test]
    fn runs_respect_their_caps() {
        assert_eq!(run_end(b"abc def", 0, 10, is_alnum), 3);
        assert_eq!(run_end(b"abcdef", 0, 3, is_alnum), 4);
        assert_eq!(run_start(b"x abc", 5, 10, is_alnum), 2);
    }

    #[test]
    fn entropy_separates_words_from_keys() {
        assert!(entropy(b"aaaaaaaa") < 0.1);
        assert!(entropy(b"k9Xq2LmZ7vB4nR8t") > 3.5);
    }
}
