//! PEM private-key blocks, the one rule that spans lines. A block runs from its
//! `-----BEGIN … PRIVATE KEY-----` marker to the matching END marker; a block cut short (a
//! log tail) is masked through its last base64 line. Both the whole-text and the streaming
//! redactor group a block's lines into one unit (`group_end`), so both see it whole.

use memchr::memmem;

/// Longest block the redactor will join lines for (an RSA-8192 key is about 6.5 KB).
pub(crate) const GROUP_MAX: usize = 64 * 1024;

const BEGIN: &[u8] = b"-----BEGIN";
const END: &[u8] = b"-----END";

/// End of a `<word> <label>PRIVATE KEY[ BLOCK]-----` marker starting at `s`, if it is one.
fn marker_end(t: &[u8], s: usize, word: &[u8]) -> Option<usize> {
    let rest = t.get(s..)?.strip_prefix(word)?.strip_prefix(b" ")?;
    let label_len =
        rest.iter().take(48).take_while(|&&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ').count();
    let label = &rest[..label_len];
    if !rest[label_len..].starts_with(b"-----") {
        return None;
    }
    let label = label.strip_suffix(b" BLOCK").unwrap_or(label);
    label.ends_with(b"PRIVATE KEY").then_some(s + word.len() + 1 + label_len + 5)
}

/// The block whose BEGIN marker starts at `s`: through its END marker if one follows within
/// `GROUP_MAX`, else through the base64 lines that follow. `ends` (from `end_markers`) lets
/// many BEGIN markers in one unit share a single search for END markers.
pub(crate) fn verify(t: &[u8], s: usize, ends: Option<&[(usize, usize)]>) -> Option<(usize, usize)> {
    let begin_end = marker_end(t, s, BEGIN)?;
    let limit = t.len().min(s + GROUP_MAX);
    let end = match ends {
        Some(ends) => {
            let i = ends.partition_point(|&(start, _)| start < begin_end);
            ends.get(i).filter(|&&(_, end)| end <= limit).map(|&(_, end)| end)
        }
        None => {
            let region = t.get(begin_end..limit)?;
            memmem::find_iter(region, END).find_map(|i| marker_end(t, begin_end + i, END)).filter(|&end| end <= limit)
        }
    };
    let end = end.unwrap_or_else(|| body_end(t, begin_end));
    Some((s, end))
}

/// Every END marker in `t`, as (start, end), in order.
pub(crate) fn end_markers(t: &[u8]) -> Vec<(usize, usize)> {
    memmem::find_iter(t, END).filter_map(|i| marker_end(t, i, END).map(|end| (i, end))).collect()
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Where a truncated block's body ends: base64 (and `\n` escapes) on the marker's own line,
/// then whole lines of base64 or PEM headers.
fn body_end(t: &[u8], mut p: usize) -> usize {
    loop {
        match t.get(p) {
            Some(&b) if is_b64(b) => p += 1,
            Some(b'\\') if matches!(t.get(p + 1), Some(b'n' | b'r')) => p += 2,
            _ => break,
        }
    }
    loop {
        let line_start = match (t.get(p), t.get(p + 1)) {
            (Some(b'\n'), _) => p + 1,
            (Some(b'\r'), Some(b'\n')) => p + 2,
            _ => return p,
        };
        let line_end = memchr::memchr(b'\n', &t[line_start..]).map_or(t.len(), |i| line_start + i);
        let line = &t[line_start..line_end];
        let content_len = line.len() - line.iter().rev().take_while(|b| b.is_ascii_whitespace()).count();
        let content = &line[..content_len];
        let body = !content.is_empty() && content.iter().all(|&b| is_b64(b));
        let header = [&b"Proc-Type:"[..], b"DEK-Info:", b"Comment:"].iter().any(|h| content.starts_with(h));
        if !(body || header) {
            return p;
        }
        p = line_start + content_len;
    }
}

/// Does this line open a block it does not close? Then its unit extends over the next lines.
pub(crate) fn opens_block(line: &[u8]) -> bool {
    let Some(last_begin) = memmem::rfind_iter(line, BEGIN).find(|&i| marker_end(line, i, BEGIN).is_some()) else {
        return false;
    };
    !closes_block(&line[last_begin..])
}

fn closes_block(text: &[u8]) -> bool {
    memmem::find_iter(text, END).any(|i| marker_end(text, i, END).is_some())
}

pub(crate) enum GroupEnd {
    Done(usize),
    NeedMore,
}

/// End of the unit that starts with an opening line `[start, from)`: through the first later
/// line holding an END marker, or through the last whole line within `GROUP_MAX` of `start`.
/// Decides only what more input could not change, so a stream and a whole text agree.
pub(crate) fn group_end(t: &[u8], start: usize, from: usize, eof: bool) -> GroupEnd {
    let limit = start + GROUP_MAX;
    let mut p = from;
    loop {
        let search_end = t.len().min(limit).max(p);
        match memchr::memchr(b'\n', &t[p..search_end]) {
            Some(i) => {
                let line_end = p + i + 1;
                if closes_block(&t[p..line_end]) {
                    return GroupEnd::Done(line_end);
                }
                p = line_end;
            }
            None if t.len() >= limit => return GroupEnd::Done(p),
            None if eof => return GroupEnd::Done(t.len()),
            None => return GroupEnd::NeedMore,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        assert!(marker_end(b"-----BEGIN RSA PRIVATE KEY-----", 0, BEGIN).is_some());
        assert!(marker_end(b"-----BEGIN PRIVATE KEY-----", 0, BEGIN).is_some());
        assert!(marker_end(b"-----BEGIN PGP PRIVATE KEY BLOCK-----", 0, BEGIN).is_some());
        assert!(marker_end(b"-----BEGIN CERTIFICATE-----", 0, BEGIN).is_none());
        assert!(marker_end(b"-----BEGIN PUBLIC KEY-----", 0, BEGIN).is_none());
    }

    #[test]
    fn opening_lines() {
        assert!(opens_block(b"key: -----BEGIN EC PRIVATE KEY-----\n"));
        assert!(!opens_block(b"\"-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----\"\n"));
        assert!(!opens_block(b"-----BEGIN CERTIFICATE-----\n"));
    }

    #[test]
    fn truncated_block_ends_after_its_body() {
        let t = b"-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkq\nhkiG9w0BAQEFAASC\nerror: cut here\n";
        let c = verify(t, 0, None).unwrap();
        assert_eq!(verify(t, 0, Some(&end_markers(t))).unwrap().1, c.1);
        assert_eq!(&t[c.1..], b"\nerror: cut here\n");
    }
}
