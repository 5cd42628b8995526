//! Test ids as the judgement compares them: the runner's own id, with what changes from one run
//! to the next for the same test taken out — memory addresses in parametrised ids
//! (`test_x[<Obj object at 0x7f…>]`), libtest's doc-test line numbers — control characters made
//! spaces, and a bounded length.

use sha2::{Digest, Sha256};

/// A test id is cut to this many characters (a hash of the whole keeps cut ids apart).
pub const ID_MAX: usize = 300;

/// The id the judgement keeps for `raw`: addresses (`0x` and at least four hex digits) become
/// `0x…`, control characters a space, and an id longer than [`ID_MAX`] characters is cut, with
/// 8 hex digits of its key after the cut so that two long ids stay apart.
pub fn normalise(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(ID_MAX + 16));
    let mut chars = raw.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '0' && raw[at..].starts_with("0x") {
            let digits = raw[at + 2..].bytes().take_while(u8::is_ascii_hexdigit).count();
            if digits >= 4 {
                out.push_str("0x…");
                // Skip the `x` and the digits (all ASCII, one char each).
                for _ in 0..=digits {
                    chars.next();
                }
                continue;
            }
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    if out.chars().count() <= ID_MAX {
        return out;
    }
    let cut: String = out.chars().take(ID_MAX - 10).collect();
    format!("{cut}…{:08x}", key(&out))
}

/// A 32-bit key of an id (the first four bytes of its SHA-256), what a digest keeps of it.
pub fn key(id: &str) -> u32 {
    let digest = Sha256::digest(id.as_bytes());
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// A libtest doc-test's name without its line number (`src/lib.rs - add (line 3)` →
/// `src/lib.rs - add`): a line added above it moves it, and it is still the same test.
pub fn doc_test(name: &str) -> &str {
    match name.rfind(" (line ") {
        Some(at) if name.ends_with(')') && name[at + 7..name.len() - 1].bytes().all(|b| b.is_ascii_digit()) => {
            &name[..at]
        }
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_reprs_normalise() {
        let a = normalise("test_p.py::test_param[<test_p.Obj object at 0x7fac09595f90>]");
        let b = normalise("test_p.py::test_param[<test_p.Obj object at 0x7f11aa00bb22>]");
        assert_eq!(a, b);
        assert_eq!(a, "test_p.py::test_param[<test_p.Obj object at 0x…>]");
        // Short hex values are data, not addresses.
        assert_eq!(normalise("test_hex[0x1f]"), "test_hex[0x1f]");
        assert_eq!(normalise("a\nb\tc"), "a b c");
        assert_eq!(normalise("0x"), "0x");
        assert_eq!(normalise("é0xABCDé"), "é0x…é");
    }

    #[test]
    fn long_ids_are_cut_and_stay_apart() {
        let one = normalise(&format!("{}a", "x".repeat(1000)));
        let two = normalise(&format!("{}b", "x".repeat(1000)));
        assert_ne!(one, two);
        assert!(one.chars().count() <= ID_MAX, "{}", one.chars().count());
        assert_eq!(normalise(&"y".repeat(ID_MAX)), "y".repeat(ID_MAX));
    }

    #[test]
    fn doc_tests_lose_their_line() {
        assert_eq!(doc_test("src/lib.rs - add (line 3)"), "src/lib.rs - add");
        assert_eq!(doc_test("src/lib.rs - add (line x)"), "src/lib.rs - add (line x)");
        assert_eq!(doc_test("plain"), "plain");
    }
}
