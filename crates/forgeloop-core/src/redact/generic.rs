//! The generic assignment rule: `password = value`, `"api_key": "value"`, `TOKEN=value`,
//! `--token value`. An identifier containing a credential keyword, an assignment, and a value
//! that clears an entropy floor and is not a placeholder (`${VAR}`, `<token>`, `changeme`, …)
//! or a piece of code (`tokens.next()`, `Option<String>`, `settings.SECRET_KEY`).

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use super::kinds::{Cand, Kind, Named};
use super::scan::{class_count, contains, entropy, left_boundary, run_end, run_start, skip_ansi};

const IDENT_CAP: usize = 64;
const VALUE_CAP: usize = 256;

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Identifiers that contain a keyword but name something that is not a secret.
const NOT_SECRET_IDENTS: &[&str] = &[
    "tokenizer",
    "tokens",
    "keys",
    "_type",
    "type_",
    "_count",
    "count_",
    "_len",
    "_size",
    "_name",
    "name_",
    "_url",
    "_uri",
    "_path",
    "_file",
    "_dir",
    "_env",
    "_var",
    "_ttl",
    "_expir",
    "expires",
    "_timeout",
    "_at",
    "max_",
    "max-",
    "num_",
    "keyboard",
    "monkey",
    "turkey",
    "hotkey",
    "keymap",
    "keycode",
    "keystroke",
    "public_key",
    "publickey",
    "public-key",
    "author",
    "_hint",
    "_prompt",
    "_policy",
    "_length",
    "_format",
];

/// One case-insensitive pass over a short string for any of `words`.
fn word_set(words: &[&str]) -> Option<AhoCorasick> {
    AhoCorasick::builder().ascii_case_insensitive(true).build(words).ok()
}

static NOT_SECRET_IDENT_SET: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| word_set(NOT_SECRET_IDENTS));
static PLACEHOLDER_PART_SET: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| word_set(PLACEHOLDER_PARTS));

fn any_word(set: &LazyLock<Option<AhoCorasick>>, hay: &[u8]) -> bool {
    set.as_ref().is_some_and(|ac| ac.is_match(hay))
}

/// Identifiers that contain a keyword but do not name a secret (`max_tokens`, `key_id`).
fn not_secret_ident(ident: &[u8]) -> bool {
    any_word(&NOT_SECRET_IDENT_SET, ident)
        || ((ident.ends_with(b"_id") || ident.ends_with(b"-id")) && !contains(ident, b"session"))
}

/// Checks the assignment around keyword `[s, e)`. A keyword in quotes (`"auth"`, a JSON
/// key in Docker's `config.json`) stands for the identifier inside them.
pub(crate) fn verify(t: &[u8], s: usize, e: usize, out: &mut Vec<Cand>) {
    let (s, e) = if t.get(s) == Some(&b'"') && e >= s + 2 { (s + 1, e - 1) } else { (s, e) };
    if let Some(c) = assignment(t, s, e) {
        out.push(c);
    }
}

fn assignment(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    // Cheapest checks first: most keyword hits are prose or code with no assignment.
    let b = run_end(t, e, IDENT_CAP, is_ident);
    if b - e > IDENT_CAP {
        return None;
    }
    let mut p = skip_quote(t, b).unwrap_or(b);
    let blanks_from = p;
    p = skip_blanks(t, p);
    let spaced_flag = match (t.get(p), t.get(p + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => {
            p += 2;
            false
        }
        (Some(b'='), Some(b'=' | b'~')) | (Some(b':'), Some(b':')) => return None,
        (Some(b'=' | b':'), _) => {
            p += 1;
            false
        }
        _ if p > blanks_from => true,
        _ => return None,
    };

    let a = run_start(t, s, IDENT_CAP, is_ident);
    if (a > 0 && is_ident(t[a - 1]) && s - a >= IDENT_CAP) || (spaced_flag && t[a] != b'-') {
        return None;
    }
    // `$TOKEN` is a reference; `https://x-access-token:…@host` is URL userinfo (its own rule).
    if !left_boundary(t, a) || (a > 0 && t[a - 1] == b'$') || t[..a].ends_with(b"://") {
        return None;
    }
    p = skip_ansi(t, skip_blanks(t, p));
    let (vs, ve, quoted) = match quote_at(t, p) {
        Some((quote, open_len)) => {
            let vs = p + open_len;
            let ve = closing_quote(t, vs, quote)?;
            (vs, ve, true)
        }
        None => {
            let ve = run_end(t, p, VALUE_CAP, |b| !is_unquoted_stop(b));
            if ve - p > VALUE_CAP || matches!(t.get(ve), Some(b'(' | b'[' | b'{' | b'<')) {
                return None;
            }
            (p, ve, false)
        }
    };
    let value = &t[vs..ve];
    if value.len() < 8 {
        return None;
    }
    let ident = t[a..b].to_ascii_lowercase();
    if not_secret_ident(&ident) {
        return None;
    }
    let rule = rule_for(&ident);
    let aws_shape = rule == Named::AwsSecretKey
        && value.len() == 40
        && value.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+');
    if !aws_shape && (!looks_secret(value) || (!quoted && looks_like_code(value)) || is_env_name(value)) {
        return None;
    }
    Some(Cand { start: vs, end: ve, kind: Kind::Named(rule) })
}

/// The kind to mask a whole JSON string value with, when its key names a credential and the
/// value looks like one (a bare value has no shape the other rules could recognise).
pub(crate) fn secret_under_key(key: &str, value: &str) -> Option<Named> {
    let ident = key.to_ascii_lowercase();
    let keyword = [
        "token",
        "secret",
        "passw",
        "passphrase",
        "apikey",
        "api_key",
        "api-key",
        "_key",
        "-key",
        "credential",
        "cookie",
        "_auth",
        "auth_",
    ]
    .iter()
    .any(|k| ident.contains(k))
        || key.contains("Key");
    let excluded = not_secret_ident(ident.as_bytes());
    let value = value.as_bytes();
    if !keyword || excluded || !looks_secret(value) || is_env_name(value) {
        return None;
    }
    Some(rule_for(ident.as_bytes()))
}

fn rule_for(ident: &[u8]) -> Named {
    if contains(ident, b"passw") || contains(ident, b"passphrase") {
        Named::Password
    } else if contains(ident, b"secret") && (contains(ident, b"aws") || contains(ident, b"access")) {
        Named::AwsSecretKey
    } else {
        Named::Secret
    }
}

fn skip_blanks(t: &[u8], mut p: usize) -> usize {
    let limit = (p + 8).min(t.len());
    while p < limit && matches!(t[p], b' ' | b'\t') {
        p += 1;
    }
    p
}

/// The closing quote of a quoted key (`"password":`), plain or JSON-escaped.
fn skip_quote(t: &[u8], p: usize) -> Option<usize> {
    quote_at(t, p).map(|(_, len)| p + len)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    Plain(u8),
    Escaped,
}

fn quote_at(t: &[u8], p: usize) -> Option<(Quote, usize)> {
    match t.get(p)? {
        &q @ (b'"' | b'\'' | b'`') => Some((Quote::Plain(q), 1)),
        b'\\' if t.get(p + 1) == Some(&b'"') => Some((Quote::Escaped, 2)),
        _ => None,
    }
}

fn closing_quote(t: &[u8], vs: usize, quote: Quote) -> Option<usize> {
    let limit = t.len().min(vs + VALUE_CAP + 1);
    let mut i = vs;
    while i < limit {
        match (quote, t[i]) {
            (_, b'\n' | b'\r') => return None,
            (Quote::Plain(q), b) if b == q => return Some(i),
            (Quote::Escaped, b'\\') if t.get(i + 1) == Some(&b'"') => return Some(i),
            (Quote::Plain(_), b'\\') => i += 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_unquoted_stop(b: u8) -> bool {
    b.is_ascii_whitespace()
        || b < 0x20
        || b == 0x7f
        || matches!(b, b'"' | b'\'' | b'`' | b',' | b';' | b'&' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>')
        || matches!(b, b'|' | b'\\')
}

/// Exact values (case-insensitive) that are never secrets.
const PLACEHOLDER_VALUES: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "yes",
    "no",
    "on",
    "off",
    "enabled",
    "disabled",
    "required",
    "optional",
    "empty",
    "unset",
    "default",
    "string",
    "secret",
    "password",
    "passwd",
    "token",
    "value",
    "hidden",
    "masked",
    "omitted",
    "private",
    "public",
    "bearer",
];

/// Substrings (case-insensitive) that mark a value as a placeholder or test fixture.
const PLACEHOLDER_PARTS: &[&str] = &[
    "xxxx",
    "****",
    "...",
    "\u{2026}",
    "\u{2022}\u{2022}",
    "changeme",
    "change_me",
    "change-me",
    "example",
    "dummy",
    "redacted",
    "placeholder",
    "your_",
    "your-",
    "yourtoken",
    "yourpass",
    "yoursecret",
    "yourkey",
    "replace_me",
    "replaceme",
    "replace-me",
    "fake",
    "sample",
    "mock",
    "test",
    "secret_here",
    "token_here",
    "notasecret",
    "not-a-secret",
    "not_a_secret",
    "insert",
    "todo",
    "foobar",
    "lorem",
    "local_path",
];

/// Template references and well-known placeholders: `${VAR}`, `$VAR`, `%(x)s`, `{{ x }}`,
/// `<token>`, `[REDACTED:…]`, `xxxx`, `****`, `changeme`, `example`, `true`, `null`, …
pub(crate) fn is_placeholder(v: &[u8]) -> bool {
    let Some(&first) = v.first() else { return true };
    let template = match v {
        [b'$', b'{' | b'(' | b'_', ..] => true,
        [b'$', b, ..] => b.is_ascii_alphabetic(),
        [b'%', b'(' | b'{' | b's' | b'd', ..] => true,
        [b'{' | b'<' | b'[', ..] => true,
        [b'*', b'*', b'*', ..] => true,
        _ => false,
    };
    if template {
        return true;
    }
    if v.iter().all(|&b| b == first) {
        return true;
    }
    PLACEHOLDER_VALUES.iter().any(|p| v.eq_ignore_ascii_case(p.as_bytes())) || any_word(&PLACEHOLDER_PART_SET, v)
}

/// Well-known stand-in values only (`password`, `changeme`, `<your-token>`, `xxxx`), for
/// places where any other value is a real credential.
pub(crate) fn is_placeholder_word(v: &[u8]) -> bool {
    let lower = v.to_ascii_lowercase();
    PLACEHOLDER_VALUES.iter().any(|p| lower == p.as_bytes())
        || ["changeme", "example", "redacted", "placeholder", "your_", "your-", "xxxx", "****"]
            .iter()
            .any(|p| contains(&lower, p.as_bytes()))
}

/// The entropy floor: long enough, varied enough, not a placeholder, not a date or number.
pub(crate) fn looks_secret(v: &[u8]) -> bool {
    if !(8..=VALUE_CAP).contains(&v.len()) || v.iter().all(|b| b.is_ascii_digit() || b" -:.+TZ/_".contains(b)) {
        return false;
    }
    if !(class_count(v) >= 2 || v.len() >= 16) || entropy(v) < 3.0 {
        return false;
    }
    !is_placeholder(v) && !contains(v, b"[REDACTED")
}

/// Unquoted values that are code, not literals: identifiers without digits (`SecretString`),
/// snake/SCREAMING_CASE names, dotted paths (`self.token`), paths and URLs.
fn looks_like_code(v: &[u8]) -> bool {
    if v.starts_with(b"/") || v.starts_with(b"./") || v.starts_with(b"~/") || contains(v, b"://") {
        return true;
    }
    let is_identifier = |p: &[u8]| {
        p.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && p.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
    };
    if is_identifier(v) {
        let no_digits = !v.iter().any(u8::is_ascii_digit);
        let single_case = !(v.iter().any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase));
        return no_digits || (single_case && v.contains(&b'_'));
    }
    v.contains(&b'.') && v.split(|&b| b == b'.').all(is_identifier)
}

/// `GITHUB_TOKEN`-style names: a reference to a secret, not the secret.
fn is_env_name(v: &[u8]) -> bool {
    v.contains(&b'_')
        && v.iter().all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && v.first().is_some_and(u8::is_ascii_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(line: &str) -> Option<&str> {
        let t = line.as_bytes();
        let hit = ["token", "TOKEN", "passw", "secret", "_key", "_KEY", "Key", "SECRET", "PASSW"]
            .iter()
            .find_map(|k| line.find(k).map(|i| (i, i + k.len())))?;
        let mut out = Vec::new();
        verify(t, hit.0, hit.1, &mut out);
        out.first().map(|c| &line[c.start..c.end])
    }

    #[test]
    fn assignments_with_secret_values_are_found() {
        assert_eq!(value_of("password = \"Xk9#mQ2$vL7p\""), Some("Xk9#mQ2$vL7p"));
        assert_eq!(value_of("export API_KEY=a8F3kL0pQz7Xw2Nv"), Some("a8F3kL0pQz7Xw2Nv"));
        assert_eq!(value_of("{\"client_secret\": \"q7Vb2Lx9Kd4Rt8Zm\"}"), Some("q7Vb2Lx9Kd4Rt8Zm"));
        assert_eq!(value_of("db_password: s3cr3tP4ssw0rdZ"), Some("s3cr3tP4ssw0rdZ"));
        assert_eq!(value_of("--token 9fK2mL7qX4vB8nR3"), Some("9fK2mL7qX4vB8nR3"));
        assert_eq!(value_of("{\\\"token\\\":\\\"Zq8vN3kL7xB2mR5t\\\"}"), Some("Zq8vN3kL7xB2mR5t"));
        let docker = "{\"auths\":{\"ghcr.io\":{\"auth\":\"Y2ktYm90OnE3VmIyTHg5S2Q0UnQ4Wm0=\"}}}";
        let at = docker.find("\"auth\"").unwrap();
        let mut out = Vec::new();
        verify(docker.as_bytes(), at, at + 6, &mut out);
        assert_eq!(&docker[out[0].start..out[0].end], "Y2ktYm90OnE3VmIyTHg5S2Q0UnQ4Wm0=");
    }

    #[test]
    fn placeholders_and_code_are_left_alone() {
        for line in [
            "password = ${DB_PASSWORD}",
            "token: $GITHUB_TOKEN",
            "api_key = <token>",
            "secret = xxxxxxxxxxxx",
            "password: ********",
            "password = changeme",
            "key = value",
            "token = tokens.next().ok_or(Error::Eof)?;",
            "    let token = self.tokenizer.next_token();",
            "api_key: Option<String>,",
            "secret: SecretString,",
            "password: String,",
            "secret_key = settings.SECRET_KEY",
            "token_env = \"GITHUB_TOKEN\"",
            "max_tokens = 4096",
            "token_type: Bearer",
            "if token == \"abcdefgh12345\":",
            "secret = [REDACTED:secret]",
            "token_expires_at: 2026-11-29T10:12:33Z",
        ] {
            assert_eq!(value_of(line), None, "{line}");
        }
    }
}
