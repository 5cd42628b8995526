//! The formats layer: one Aho-Corasick prefilter over every rule's prefix or keyword, then a
//! small hand-written matcher per trigger that checks the shape (prefix + charset + length,
//! anchored on token boundaries). Shapes follow the public gitleaks/trufflehog rule sets.
//!
//! Triggers are split by length: Teddy (the SIMD prefilter inside `aho-corasick`) keys on the
//! first four bytes of every pattern, so one three-byte pattern would slow down all of them.

use std::sync::LazyLock;

use super::kinds::{Cand, Kind, Rule};
use super::matcher::Matcher;
use super::scan::{has_upper_and_lower, is_alnum, is_b64url, left_boundary, run_end, run_start};
use super::{generic, paths, pem};

/// What a trigger hit asks to be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trig {
    GhClassic,
    GhPat,
    Stripe,
    StripeWebhook,
    AwsKeyId,
    GoogleApiKey,
    GoogleOauth,
    GoogleSecret,
    SlackApp,
    SlackHook,
    Npm,
    Pypi,
    Gitlab,
    JwtDot,
    PemBegin,
    PathHome,
    PathUsers,
    PathRoot,
    PathVarFolders,
    PathWinUsers,
    AuthHeader,
    Bearer,
    Keyword,
    /// `"auth"` as a JSON key (Docker's `config.json`); the keyword is inside the quotes.
    QuotedAuth,
    SkDash,
    HfUnderscore,
    UrlScheme,
    Xox,
}

/// Four bytes or longer. At most 64 patterns, so Teddy stays on.
const LONG: &[(&str, Trig)] = &[
    ("ghp_", Trig::GhClassic),
    ("gho_", Trig::GhClassic),
    ("ghu_", Trig::GhClassic),
    ("ghs_", Trig::GhClassic),
    ("ghr_", Trig::GhClassic),
    ("github_pat_", Trig::GhPat),
    ("sk_live_", Trig::Stripe),
    ("sk_test_", Trig::Stripe),
    ("rk_live_", Trig::Stripe),
    ("rk_test_", Trig::Stripe),
    ("whsec_", Trig::StripeWebhook),
    ("AKIA", Trig::AwsKeyId),
    ("ASIA", Trig::AwsKeyId),
    ("AIza", Trig::GoogleApiKey),
    ("ya29.", Trig::GoogleOauth),
    ("GOCSPX-", Trig::GoogleSecret),
    ("xapp-", Trig::SlackApp),
    ("hooks.slack.com", Trig::SlackHook),
    ("npm_", Trig::Npm),
    ("pypi-AgEIcHlwaS5vcmc", Trig::Pypi),
    ("glpat-", Trig::Gitlab),
    ("gldt-", Trig::Gitlab),
    ("glrt-", Trig::Gitlab),
    ("glptt-", Trig::Gitlab),
    (".eyJ", Trig::JwtDot),
    ("-----BEGIN", Trig::PemBegin),
    ("/home/", Trig::PathHome),
    ("/Users/", Trig::PathUsers),
    ("/root", Trig::PathRoot),
    ("/var/folders/", Trig::PathVarFolders),
    ("\\Users\\", Trig::PathWinUsers),
    ("uthorization", Trig::AuthHeader),
    ("UTHORIZATION", Trig::AuthHeader),
    ("Bearer", Trig::Bearer),
    ("bearer", Trig::Bearer),
    ("BEARER", Trig::Bearer),
    // Keywords of the generic assignment rule, in the spellings identifiers use
    // (snake_case, SCREAMING_CASE, camelCase/PascalCase).
    ("token", Trig::Keyword),
    ("TOKEN", Trig::Keyword),
    ("Token", Trig::Keyword),
    ("secret", Trig::Keyword),
    ("SECRET", Trig::Keyword),
    ("Secret", Trig::Keyword),
    ("passw", Trig::Keyword),
    ("PASSW", Trig::Keyword),
    ("Passw", Trig::Keyword),
    ("passphrase", Trig::Keyword),
    ("PASSPHRASE", Trig::Keyword),
    ("_key", Trig::Keyword),
    ("_KEY", Trig::Keyword),
    ("-key", Trig::Keyword),
    ("-KEY", Trig::Keyword),
    ("apikey", Trig::Keyword),
    ("APIKEY", Trig::Keyword),
    ("credential", Trig::Keyword),
    ("CREDENTIAL", Trig::Keyword),
    ("Credential", Trig::Keyword),
    ("cookie", Trig::Keyword),
    ("COOKIE", Trig::Keyword),
    ("Cookie", Trig::Keyword),
    ("_auth", Trig::Keyword),
    ("_AUTH", Trig::Keyword),
    ("\"auth\"", Trig::QuotedAuth),
];

const SHORT: &[(&str, Trig)] = &[
    ("sk-", Trig::SkDash),
    ("hf_", Trig::HfUnderscore),
    ("://", Trig::UrlScheme),
    ("Key", Trig::Keyword),
    ("xox", Trig::Xox),
];

pub(crate) struct Triggers {
    pub(crate) long: Option<Matcher>,
    pub(crate) short: Option<Matcher>,
}

fn matcher(patterns: &[(&str, Trig)]) -> Option<Matcher> {
    let literals: Vec<&str> = patterns.iter().map(|(p, _)| *p).collect();
    Matcher::new(&literals)
}

/// Compiled once per process.
pub(crate) static TRIGGERS: LazyLock<Triggers> =
    LazyLock::new(|| Triggers { long: matcher(LONG), short: matcher(SHORT) });

pub(crate) fn long_trig(pattern: usize) -> Trig {
    LONG[pattern].1
}

pub(crate) fn short_trig(pattern: usize) -> Trig {
    SHORT[pattern].1
}

/// Checks the text around a trigger hit `[s, e)` and records any secret found.
pub(crate) fn verify(trig: Trig, t: &[u8], s: usize, e: usize, out: &mut Vec<Cand>) {
    let found = match trig {
        Trig::GhClassic => tail(t, s, e, 30, 251, is_alnum, Rule::GithubToken),
        Trig::GhPat => tail(t, s, e, 22, 244, |b| is_alnum(b) || b == b'_', Rule::GithubToken),
        Trig::Stripe => tail(t, s, e, 10, 247, is_alnum, Rule::StripeKey),
        Trig::StripeWebhook => tail(t, s, e, 24, 249, is_alnum, Rule::StripeKey),
        Trig::AwsKeyId => exact(t, s, e, 16, |b| b.is_ascii_uppercase() || b.is_ascii_digit(), Rule::AwsAccessKey),
        Trig::GoogleApiKey => exact(t, s, e, 35, is_b64url, Rule::GoogleApiKey),
        Trig::GoogleOauth => tail(t, s, e, 20, 2048, is_b64url, Rule::GoogleOauthToken),
        Trig::GoogleSecret => tail(t, s, e, 24, 40, is_b64url, Rule::GoogleClientSecret),
        Trig::SlackApp => tail(t, s, e, 10, 250, |b| is_alnum(b) || b == b'-', Rule::SlackToken),
        Trig::SlackHook => slack_webhook(t, e),
        Trig::Npm => tail(t, s, e, 36, 40, is_alnum, Rule::NpmToken),
        Trig::Pypi => tail(t, s, e, 16, 4096, is_b64url, Rule::PypiToken),
        Trig::Gitlab => gitlab(t, s, e),
        Trig::JwtDot => jwt(t, s),
        Trig::SkDash => sk_dash(t, s, e),
        Trig::HfUnderscore => huggingface(t, s, e),
        Trig::Xox => slack_token(t, s, e),
        Trig::UrlScheme => url_credentials(t, s, e),
        Trig::AuthHeader => authorization_header(t, s, e),
        Trig::Bearer => bearer(t, s, e),
        Trig::Keyword => return generic::verify(t, s, e, out),
        Trig::QuotedAuth => return generic::verify(t, s + 1, e - 1, out),
        Trig::PemBegin => pem::verify(t, s, None),
        Trig::PathHome | Trig::PathUsers => paths::user_dir(t, s, e),
        Trig::PathRoot => paths::root_dir(t, s, e),
        Trig::PathVarFolders => paths::var_folders(t, s, e),
        Trig::PathWinUsers => paths::windows_users(t, s, e),
    };
    if let Some(c) = found {
        out.push(c);
    }
}

fn cand(start: usize, end: usize, rule: Rule) -> Option<Cand> {
    Some(Cand { start, end, kind: Kind::Rule(rule) })
}

/// Prefix at `[s, e)` followed by `min..=max` bytes of `class`, on token boundaries.
fn tail(t: &[u8], s: usize, e: usize, min: usize, max: usize, class: fn(u8) -> bool, rule: Rule) -> Option<Cand> {
    if !left_boundary(t, s) {
        return None;
    }
    let end = run_end(t, e, max, class);
    let len = end - e;
    (min..=max).contains(&len).then_some(())?;
    cand(s, end, rule)
}

/// Prefix followed by exactly `len` bytes of `class`, with no further token byte after them.
fn exact(t: &[u8], s: usize, e: usize, len: usize, class: fn(u8) -> bool, rule: Rule) -> Option<Cand> {
    if !left_boundary(t, s) {
        return None;
    }
    let end = run_end(t, e, len, class);
    if end - e != len || t.get(end).is_some_and(|&b| is_b64url(b)) {
        return None;
    }
    cand(s, end, rule)
}

fn starts_with_at(t: &[u8], pos: usize, lit: &[u8]) -> bool {
    t.get(pos..).is_some_and(|rest| rest.starts_with(lit))
}

/// `sk-ant-…` (Anthropic), `sk-proj-…`/`sk-svcacct-…`/`sk-admin-…` and the older bare
/// `sk-` + 32+ alphanumerics (OpenAI and look-alikes).
fn sk_dash(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    if !left_boundary(t, s) {
        return None;
    }
    if starts_with_at(t, e, b"ant-") {
        let end = run_end(t, e + 4, 512, is_b64url);
        return (end - (e + 4) >= 20 && end - e <= 512).then_some(Cand {
            start: s,
            end,
            kind: Kind::Rule(Rule::AnthropicKey),
        });
    }
    for prefix in [&b"proj-"[..], b"svcacct-", b"admin-", b"None-"] {
        if starts_with_at(t, e, prefix) {
            let from = e + prefix.len();
            let end = run_end(t, from, 512, is_b64url);
            return (end - from >= 20 && end - from <= 512).then_some(Cand {
                start: s,
                end,
                kind: Kind::Rule(Rule::OpenaiKey),
            });
        }
    }
    let alnum_end = run_end(t, e, 512, is_alnum);
    let alnum_len = alnum_end - e;
    let dashed_end = run_end(t, e, 512, is_b64url);
    if (32..=512).contains(&alnum_len) && dashed_end == alnum_end {
        return cand(s, alnum_end, Rule::OpenaiKey);
    }
    let value = &t[e..dashed_end];
    if (40..=512).contains(&value.len()) && has_upper_and_lower(value) && value.iter().any(u8::is_ascii_digit) {
        return cand(s, dashed_end, Rule::OpenaiKey);
    }
    None
}

/// `hf_` + 30+ letters and digits in mixed case (lowercase-only runs are identifiers).
fn huggingface(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    if !left_boundary(t, s) {
        return None;
    }
    let end = run_end(t, e, 64, is_alnum);
    let value = &t[e..end];
    ((30..=64).contains(&value.len()) && has_upper_and_lower(value)).then_some(())?;
    cand(s, end, Rule::HuggingfaceToken)
}

/// `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe.xoxp-…`.
fn slack_token(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    if !left_boundary(t, s) || !t.get(e).is_some_and(|b| b"abeoprs".contains(b)) {
        return None;
    }
    if !matches!(t.get(e + 1), Some(b'-' | b'.')) {
        return None;
    }
    let from = e + 2;
    let mut end = run_end(t, from, 512, |b| is_alnum(b) || b == b'-' || b == b'.');
    while end > from && matches!(t[end - 1], b'-' | b'.') {
        end -= 1;
    }
    (end - from >= 10 && end - from <= 512).then_some(())?;
    cand(s, end, Rule::SlackToken)
}

/// `hooks.slack.com/services/…` (also workflows and triggers): the path is the secret.
fn slack_webhook(t: &[u8], e: usize) -> Option<Cand> {
    if t.get(e) != Some(&b'/') {
        return None;
    }
    let from = e + 1;
    [&b"services/"[..], b"workflows/", b"triggers/"].iter().any(|p| starts_with_at(t, from, p)).then_some(())?;
    let end = run_end(t, from, 512, |b| is_b64url(b) || b == b'/' || b == b'+');
    (end - from >= 20 && end - from <= 512).then_some(())?;
    cand(from, end, Rule::SlackWebhook)
}

/// `glpat-` and friends, with the optional `.01.xxxxxxx` suffix of the newer format.
fn gitlab(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    if !left_boundary(t, s) {
        return None;
    }
    let mut end = run_end(t, e, 255, is_b64url);
    if end - e < 20 {
        return None;
    }
    while t.get(end) == Some(&b'.') && t.get(end + 1).is_some_and(|&b| is_alnum(b)) && end - e < 255 {
        end = run_end(t, end + 1, 255, is_b64url);
    }
    (end - e <= 255).then_some(())?;
    cand(s, end, Rule::GitlabToken)
}

/// `eyJ….eyJ….sig`: the trigger is the `.eyJ` between header and payload, so ordinary base64
/// that merely starts with `eyJ` (JSON) does not stop the prefilter.
fn jwt(t: &[u8], dot: usize) -> Option<Cand> {
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
    cand(start, end, Rule::Jwt)
}

/// `scheme://user:password@host`: the password (or a lone secret-looking user) is masked, the
/// rest of the URL stays readable. Covers `https://x-access-token:…@github.com`.
fn url_credentials(t: &[u8], s: usize, e: usize) -> Option<Cand> {
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
            cand(colon + 1, at, Rule::UrlCredentials)
        }
        None => {
            let user = &t[e..at];
            (user.len() >= 16 && generic::looks_secret(user)).then_some(())?;
            cand(e, at, Rule::UrlCredentials)
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
fn authorization_header(t: &[u8], s: usize, e: usize) -> Option<Cand> {
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
    if !matches!(t.get(p), Some(b':' | b'=')) {
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
        if value.len() < 8 || value.len() > 8192 || generic::is_placeholder(value) {
            return None;
        }
        return cand(vs, ve, Rule::Authorization);
    }
    let ve = run_end(t, p, 8192, |b| !(b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'`' | b',' | b';')));
    let value = &t[p..ve];
    (value.len() <= 8192 && generic::looks_secret(value)).then_some(())?;
    cand(p, ve, Rule::Authorization)
}

/// A bare `Bearer <token>` outside a header: the token must look like one, so prose such as
/// "bearer authentication" passes.
fn bearer(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    if !left_boundary(t, s) || !matches!(t.get(e), Some(b' ' | b'\t')) {
        return None;
    }
    let vs = skip_blanks(t, e);
    let ve = run_end(t, vs, 8192, is_token68);
    let value = &t[vs..ve];
    if value.len() > 8192 || generic::is_placeholder(value) {
        return None;
    }
    (generic::looks_secret(value) && (value.len() >= 20 || super::scan::class_count(value) >= 3)).then_some(())?;
    cand(vs, ve, Rule::Authorization)
}

fn skip_blanks(t: &[u8], mut p: usize) -> usize {
    let limit = (p + 8).min(t.len());
    while p < limit && matches!(t[p], b' ' | b'\t') {
        p += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_sets_keep_teddy() {
        assert!(LONG.len() <= 64);
        assert!(LONG.iter().all(|(p, _)| p.len() >= 4));
        assert!(SHORT.iter().all(|(p, _)| p.len() == 3));
    }
}
