//! The known-values layer: secrets this process holds (the GitHub token in use, the values of
//! credential-like environment variables) are masked wherever they appear, in the encodings
//! they travel in: raw, JSON-escaped, URL-encoded, base64 (standard and URL-safe, padded
//! or not, and at each of the three byte alignments inside a longer base64 string, as in
//! `Authorization: Basic base64("x-access-token:" + token)`), hex (either case) and reversed;
//! a URL's password (`postgres://u:PASS@h`) is a value of its own, printed alone or encoded.
//! A safety net for honest output: code that means to leak a value can always print it in a
//! form nobody lists (split, XORed), which is why the sandbox, not the redactor, keeps secrets
//! from a run.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};

use super::kinds::sanitize_kind;

/// Shorter values are too likely to be ordinary words or numbers.
pub(crate) const MIN_LEN: usize = 8;
/// Longest pattern registered; longer encodings of huge values are skipped (their lines are
/// still registered one by one).
pub(crate) const MAX_PATTERN: usize = 8 * 1024;

/// Values that are configuration, not secrets, even under a credential-like name.
const NOT_SECRETS: &[&str] = &[
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "none",
    "nil",
    "undefined",
    "enabled",
    "disabled",
    "default",
    "changeme",
    "password",
    "placeholder",
    "redacted",
    "required",
    "optional",
];

pub(crate) struct KnownSet {
    patterns: Vec<String>,
    pattern_kind: Vec<u16>,
    kinds: Vec<String>,
    masks: Vec<String>,
    /// The values as given, so a redactor can be extended with more.
    values: Vec<(String, String)>,
}

impl KnownSet {
    pub(crate) fn new(values: &[(String, String)]) -> KnownSet {
        let mut kinds: Vec<String> = Vec::new();
        let mut patterns: Vec<(String, u16)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (kind, value) in values {
            let kind = sanitize_kind(kind);
            let kind_index = match kinds.iter().position(|k| *k == kind) {
                Some(i) => i,
                None => {
                    kinds.push(kind);
                    kinds.len() - 1
                }
            };
            let Ok(kind_index) = u16::try_from(kind_index) else { continue };
            for pattern in value_patterns(value) {
                if seen.insert(pattern.clone()) {
                    patterns.push((pattern, kind_index));
                }
            }
        }
        let masks = kinds.iter().map(|k| format!("[REDACTED:{k}]")).collect();
        let (patterns, pattern_kind) = patterns.into_iter().unzip();
        KnownSet { patterns, pattern_kind, kinds, masks, values: values.to_vec() }
    }

    /// The values this set was made of.
    pub(crate) fn values(&self) -> &[(String, String)] {
        &self.values
    }

    pub(crate) fn patterns(&self) -> &[String] {
        &self.patterns
    }

    pub(crate) fn kind_of(&self, pattern: usize) -> u16 {
        self.pattern_kind.get(pattern).copied().unwrap_or(0)
    }

    pub(crate) fn kind_name(&self, kind: u16) -> &str {
        self.kinds.get(kind as usize).map_or("secret", String::as_str)
    }

    pub(crate) fn mask(&self, kind: u16) -> &str {
        self.masks.get(kind as usize).map_or("[REDACTED:secret]", String::as_str)
    }

    pub(crate) fn pattern_count(&self) -> usize {
        self.patterns.len()
    }
}

/// Is this value worth masking everywhere it appears?
pub(crate) fn worth_masking(value: &str) -> bool {
    let bytes = value.as_bytes();
    if value.chars().count() < MIN_LEN || bytes.len() > MAX_PATTERN {
        return false;
    }
    let mut distinct = [false; 256];
    bytes.iter().for_each(|&b| distinct[b as usize] = true);
    if distinct.iter().filter(|&&d| d).count() < 4 {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    !NOT_SECRETS.contains(&lower.as_str())
}

/// Every pattern registered for one value.
pub(crate) fn value_patterns(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut forms = vec![value];
    let trimmed = value.trim();
    if trimmed != value {
        forms.push(trimmed);
    }
    let password = url_password(value);
    forms.extend(password.as_deref());
    for form in forms {
        if worth_masking(form) {
            encodings(form, &mut out);
        }
        if form.contains('\n') {
            for line in form.lines().map(str::trim) {
                if worth_masking(line) {
                    out.push(line.to_owned());
                }
            }
        }
    }
    out.retain(|p| p.len() >= MIN_LEN && p.len() <= MAX_PATTERN && !p.contains('\n'));
    out
}

fn encodings(value: &str, out: &mut Vec<String>) {
    out.push(value.to_owned());
    if let Ok(json) = serde_json::to_string(value) {
        let inner = &json[1..json.len() - 1];
        if inner != value {
            out.push(inner.to_owned());
        }
        if inner.contains('/') {
            out.push(inner.replace('/', "\\/"));
        }
    }
    let url = percent_encode(value, true);
    if url != value {
        out.push(url);
        out.push(percent_encode(value, false));
        if value.contains(' ') {
            out.push(percent_encode(&value.replace(' ', "+"), true).replace("%2B", "+"));
        }
    }
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    out.push(hex.to_ascii_uppercase());
    out.push(hex);
    out.push(value.chars().rev().collect());
    for engine in [&STANDARD, &URL_SAFE] {
        let full = engine.encode(value.as_bytes());
        out.push(full.trim_end_matches('=').to_owned());
        out.push(full);
        for shift in 0..3 {
            if let Some(core) = aligned_core(engine, value.as_bytes(), shift) {
                out.push(core);
            }
        }
    }
}

/// The base64 characters that depend only on `value` when it sits `shift` bytes into a
/// longer encoded string: whatever precedes or follows it, these characters appear.
fn aligned_core(engine: &base64::engine::GeneralPurpose, value: &[u8], shift: usize) -> Option<String> {
    let mut buf = vec![0u8; shift];
    buf.extend_from_slice(value);
    let encoded = engine.encode(&buf);
    let first = (8 * shift).div_ceil(6);
    let last = (8 * (shift + value.len())).checked_sub(6)? / 6;
    encoded.get(first..=last).map(str::to_owned)
}

/// The password of a URL with user information (`scheme://user:PASSWORD@host…`), decoded.
fn url_password(value: &str) -> Option<String> {
    let (_, rest) = value.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    Some(percent_decode(password)).filter(|p| !p.is_empty())
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn percent_encode(value: &str, upper: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for &b in value.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else if upper {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_trivial_values_are_skipped() {
        assert!(!worth_masking("abc"));
        assert!(!worth_masking("00000000"));
        assert!(!worth_masking("disabled"));
        assert!(worth_masking("k9Xq2LmZ"));
    }

    #[test]
    fn aligned_cores_appear_inside_longer_base64() {
        let value = b"s3cr3t-V4lue!";
        for shift in 0..3 {
            let core = aligned_core(&STANDARD, value, shift).unwrap();
            for prefix_len in [shift, shift + 3, shift + 6] {
                let mut buf = vec![b'x'; prefix_len];
                buf.extend_from_slice(value);
                buf.extend_from_slice(b"tail");
                assert!(STANDARD.encode(&buf).contains(&core), "shift {shift} prefix {prefix_len}");
            }
        }
    }

    #[test]
    fn hex_reversed_and_a_urls_password_alone_are_forms_of_the_value() {
        let patterns = value_patterns("postgres://app:Pa%24s-w0rd-9f3k@db.internal/app");
        // The password alone, reversed, in hex (both cases) and in base64.
        for form in [
            "Pa$s-w0rd-9f3k",
            "k3f9-dr0w-s$aP",
            "506124732d773072642d3966336b",
            "506124732D773072642D3966336B",
            "UGEkcy13MHJkLTlmM2s",
        ] {
            assert!(patterns.iter().any(|p| p == form), "{form} missing from {patterns:?}");
        }
        assert_eq!(url_password("https://example.com/a:b@c"), None, "no user information");
        assert_eq!(url_password("redis://:only-pass@h:6379"), Some("only-pass".to_owned()));
    }

    #[test]
    fn encodings_cover_url_and_json() {
        let patterns = value_patterns("p@ss/w\"rd 123");
        assert!(patterns.contains(&"p%40ss%2Fw%22rd%20123".to_owned()));
        assert!(patterns.contains(&"p%40ss%2fw%22rd%20123".to_owned()));
        assert!(patterns.contains(&"p@ss/w\\\"rd 123".to_owned()));
        assert!(patterns.contains(&"p@ss\\/w\\\"rd 123".to_owned()));
    }
}
