//! The hand-written shapes of the formats table (`formats::Shape`): what a regex anchored at
//! a keyword cannot say. Each returns the span to mask.

use super::generic;
use super::scan::{is_alnum, is_b64url, left_boundary, run_end, run_start};

/// `eyJ….eyJ….sig`: the trigger is the `.eyJ` between header and payload, so ordinary base64
/// that merely starts with `eyJ` (JSON) does not stop the prefilter.
pub(crate) fn jwt(t: &[u8], dot: usize) -> Option<(usize, usize)> {
    let run = run_start(t, dot, 4096, is_b64url);
    // The run may have swallowed a glued-on colour code's final letter (`\e[31meyJ…`).
    let start = memchr::memmem::find_iter(&t[run..dot], b"eyJ").map(|i| run + i).find(|&i| left_boundary(t, i))?;
    if dot - start < 10 {
        return None;
    }
    let payload = dot + 1;
    let payload_end = run_end(t, payload, 8192, is_b64url);
    if payload_end - payload < 10 || payload_end - payload > 8192 {
        return None;
    }
    let mut end = payload_end;
    if t.get(end) == Some(&b'.') {
        let sig_end = run_end(t, end + 1, 4096, is_b64url);
        if sig_end - (end + 1) <= 4096 {
            end = sig_end;
        }
    }
    Some((start, end))
}

/// A MaxMind license key: six letters or digits, `_`, 29 more, then the keyword `_mmk` at
/// `[s, e)`, standing alone as a token.
pub(crate) fn maxmind(t: &[u8], s: usize, e: usize) -> Option<(usize, usize)> {
    let start = s.checked_sub(36)?;
    let key = t.get(start..s)?;
    let shaped = key[..6].iter().all(|&b| is_alnum(b)) && key[6] == b'_' && key[7..].iter().all(|&b| is_alnum(b));
    let ends = t.get(e).is_none_or(|&b| !is_b64url(b));
    (shaped && ends && left_boundary(t, start)).then_some((start, e))
}

/// `scheme://user:password@host`: the password (or a lone secret-looking user) is masked, the
/// rest of the URL stays readable. Covers `https://x-access-token:…@github.com`.
pub(crate) fn url_credentials(t: &[u8], s: usize, e: usize) -> Option<(usize, usize)> {
    let scheme_start = run_start(t, s, 32, |b| is_alnum(b) || matches!(b, b'+' | b'.' | b'-'));
    if s - scheme_start < 2 || !t[scheme_start..s].iter().any(u8::is_ascii_alphabetic) {
        return None;
    }
    let stop = |b: u8| {
        matches!(b, b'/' | b'?' | b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\') || b.is_ascii_whitespace() || b < 0x20
    };
    let end = run_end(t, e, 512, |b| !stop(b));
    if end - e > 512 {
        return None;
    }
    let userinfo = &t[e..end];
    let at = e + memchr::memrchr(b'@', userinfo)?;
    if !t.get(at + 1).is_some_and(|&b| is_alnum(b) || b == b'[') {
        return None;
    }
    let user_end = memchr::memchr(b':', &t[e..at]).map(|i| e + i);
    match user_end {
        Some(colon) => {
            let password = &t[colon + 1..at];
            if url_placeholder(password) || super::scan::contains(password, b"[REDACTED") {
                return None;
            }
            Some((colon + 1, at))
        }
        None => {
            let user = &t[e..at];
            (user.len() >= 16 && generic::looks_secret(user)).then_some(())?;
            Some((e, at))
        }
    }
}

/// A URL password that stands in for one (`$PASS`, `${TOKEN}`, `<password>`, `***`); real
/// passwords may start with any character, so this is narrower than the generic check.
fn url_placeholder(p: &[u8]) -> bool {
    matches!(p.first(), None | Some(b'$' | b'{' | b'<' | b'['))
        || p.iter().all(|&b| matches!(b, b'*' | b'x' | b'X'))
        || generic::is_placeholder_word(p)
}

/// Characters of an RFC 7235 `token68` credential (plus `:` for `user:pass` forms).
fn is_token68(b: u8) -> bool {
    is_alnum(b) || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=' | b':')
}

const AUTH_SCHEMES: &[&[u8]] =
    &[b"bearer", b"token", b"basic", b"bot", b"jwt", b"apikey", b"key", b"sso-key", b"negotiate", b"ntlm", b"oauth"];

/// `Authorization: Bearer|token|Basic …` (also `Proxy-Authorization`, JSON and `=` forms):
/// the credential is masked, the header name and scheme stay.
pub(crate) fn authorization_header(t: &[u8], s: usize, e: usize) -> Option<(usize, usize)> {
    let a = s.checked_sub(1)?;
    if !matches!(t[a], b'A' | b'a') || !left_boundary(t, a) {
        return None;
    }
    let mut p = e;
    if t.get(p) == Some(&b'\\') && t.get(p + 1) == Some(&b'"') {
        p += 2;
    } else if matches!(t.get(p), Some(b'"' | b'\'')) {
        p += 1;
    }
    p = skip_blanks(t, p);
    // `Authorization::default()`, `Security::Authorization::{…}`: a Rust path, not a header.
    if !matches!(t.get(p), Some(b':' | b'=')) || t.get(p + 1) == Some(&b':') {
        return None;
    }
    p = skip_blanks(t, p + 1);
    if t.get(p) == Some(&b'\\') && t.get(p + 1) == Some(&b'"') {
        p += 2;
    } else if matches!(t.get(p), Some(b'"' | b'\'')) {
        p += 1;
    }
    p = super::scan::skip_ansi(t, p);
    let word_end = run_end(t, p, 10, |b| b.is_ascii_alphabetic() || b == b'-');
    let scheme = &t[p..word_end];
    let has_scheme = t.get(word_end).is_some_and(|&b| b == b' ' || b == b'\t')
        && AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme));
    if has_scheme {
        let vs = skip_blanks(t, word_end);
        let ve = run_end(t, vs, 8192, is_token68);
        let value = &t[vs..ve];
        if value.len() < 8 || value.len() > 8192 || !credential_shaped(t, value, ve) {
            return None;
        }
        return Some((vs, ve));
    }
    // Without a scheme the value is the credential itself: token68 characters only.
    let ve = run_end(t, p, 8192, is_token68);
    let value = &t[p..ve];
    (value.len() <= 8192
        && generic::looks_secret(value)
        && credential_shaped(t, value, ve)
        && !generic::is_code(value))
    .then_some(())?;
    Some((p, ve))
}

/// A bare `Bearer <token>` outside a header: the token must look like one, so prose such as
/// "bearer authentication" passes.
pub(crate) fn bearer(t: &[u8], s: usize, e: usize) -> Option<(usize, usize)> {
    if !left_boundary(t, s) || !matches!(t.get(e), Some(b' ' | b'\t')) {
        return None;
    }
    let vs = skip_blanks(t, e);
    let ve = run_end(t, vs, 8192, is_token68);
    let value = &t[vs..ve];
    if value.len() > 8192 || !credential_shaped(t, value, ve) {
        return None;
    }
    (generic::looks_secret(value) && (value.len() >= 20 || super::scan::class_count(value) >= 3)).then_some(())?;
    Some((vs, ve))
}

/// A header or bearer value that is a credential, not a template or a name standing for one:
/// `Bearer {token}`, `Bearer ${TOKEN}`, `Bearer %s`, `Bearer $TOKEN`, `Bearer abc{}` (the
/// value stops where the slot starts), `Bearer accessToken`, `Bearer self.token`,
/// `Bearer credentials` are all left alone.
fn credential_shaped(t: &[u8], value: &[u8], ve: usize) -> bool {
    let templated = matches!(t.get(ve), Some(b'{' | b'$' | b'%' | b'<' | b'(' | b'[' | b'#'));
    let one_word = value.iter().all(u8::is_ascii_lowercase);
    !(templated || one_word || generic::is_placeholder(value) || generic::is_name(value) || generic::is_stand_in(value))
}

fn skip_blanks(t: &[u8], mut p: usize) -> usize {
    let limit = (p + 8).min(t.len());
    while p < limit && matches!(t[p], b' ' | b'\t') {
        p += 1;
    }
    p
}
