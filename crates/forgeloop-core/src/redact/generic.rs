//! The generic assignment rule: `password = value`, `"api_key": "value"`, `TOKEN=value`,
//! `--token value`. An identifier containing a credential keyword, an assignment, and a value
//! that clears an entropy floor and is not a placeholder (`${VAR}`, `<token>`, `changeme`, …)
//! or a piece of code (`tokens.next()`, `Option<String>`, `settings.SECRET_KEY`).

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use super::kinds::{Cand, Kind, Named};
use super::scan::{self, class_count, contains, entropy, left_boundary, run_end, run_start, skip_ansi};

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
    // `passwordPrompt = 'npm password: '`, `PASSWORD_PROMPT`, `_prompt`.
    "prompt",
    "_policy",
    "_length",
    "_format",
    // `KeyError: 'refresh_token'`, `TokenError: expired`: an error type, then its message.
    "error",
    "exception",
    "keyword",
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
    let colon = t.get(p) == Some(&b':');
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
    let colon = colon && t.get(p - 1) == Some(&b':');

    let a = run_start(t, s, IDENT_CAP, is_ident);
    if (a > 0 && is_ident(t[a - 1]) && s - a >= IDENT_CAP) || (spaced_flag && t[a] != b'-') {
        return None;
    }
    // `$TOKEN` is a reference; `https://x-access-token:…@host` is URL userinfo (its own rule).
    if !left_boundary(t, a) || (a > 0 && t[a - 1] == b'$') || t[..a].ends_with(b"://") {
        return None;
    }
    let p_after = p;
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
    // `name: Type,` `fn f(name: Type)`, `let name: Type = …`: a type annotation, not a value.
    // `Error::Token => "invalid token"`: an enum variant, not a name being given a value.
    if t[..a].ends_with(b"::") {
        return None;
    }
    let arrow = t.get(p_after.wrapping_sub(2)..p_after) == Some(&b"=>"[..]);
    if !quoted
        && is_identifier_path(value)
        && ((colon && ends_annotation(t, ve)) || arrow || t[..a].ends_with(b"type "))
    {
        return None;
    }
    let ident = t[a..b].to_ascii_lowercase();
    let passphrase = contains(&ident, b"pass");
    let spaces = value.iter().filter(|&&b| b == b' ').count();
    if quoted && (is_stand_in(value) || (spaces > 0 && is_command(value)) || (!passphrase && spaces >= 2)) {
        return None;
    }
    if not_secret_ident(&ident) {
        return None;
    }
    let rule = rule_for(&ident);
    let aws_shape = rule == Named::AwsSecretKey
        && value.len() == 40
        && value.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+');
    let words_are_secret = words_may_be_secret(&ident);
    let code = if quoted {
        names_code(value, words_are_secret)
    } else {
        looks_like_code(value) || is_operator_expression(value, words_are_secret) || names_itself(&t[a..b], value)
    };
    if !aws_shape && (!looks_secret(value) || is_reference(value) || code || is_env_name(value)) {
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
    if !keyword
        || excluded
        || !looks_secret(value)
        || is_env_name(value)
        || is_reference(value)
        || names_code(value, words_may_be_secret(ident.as_bytes()))
        || is_command(value)
    {
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
    if template || has_template(v) {
        return true;
    }
    if v.iter().all(|&b| b == first) {
        return true;
    }
    PLACEHOLDER_VALUES.iter().any(|p| v.eq_ignore_ascii_case(p.as_bytes())) || any_word(&PLACEHOLDER_PART_SET, v)
}

/// `%s` or `%d` standing as a slot: at the end or before a character that is not alphanumeric
/// (`"%s:%s"`, `"Bearer %s"`). Inside a random value (`e8C^%saOe`) it is chance, not a slot.
fn printf_slot(v: &[u8]) -> bool {
    v.windows(2)
        .enumerate()
        .any(|(i, w)| matches!(w, b"%s" | b"%d") && v.get(i + 2).is_none_or(|b| !b.is_ascii_alphanumeric()))
}

/// A format or template slot anywhere in the value: `${X}`, `{{ x }}`, `{}`, `{token}`,
/// `{0}`, `%s`, `%d`, `#{x}` (`"Bearer {token}"`, `"sk-{}"`, `"%s:%s"`).
fn has_template(v: &[u8]) -> bool {
    if contains(v, b"${") || contains(v, b"{{") || contains(v, b"#{") || printf_slot(v) {
        return true;
    }
    let mut rest = v;
    while let Some(open) = memchr::memchr(b'{', rest) {
        let after = &rest[open + 1..];
        let slot = after.iter().take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':')).count();
        if after.get(slot) == Some(&b'}') {
            return true;
        }
        rest = after;
    }
    false
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
    // `token_start..token_end` (a range), `49187u32`, `quoted-key` (a grammar's or a CLI's
    // lowercase names).
    if contains(v, b"..")
        || is_number_literal(v)
        || (v.first().is_some_and(u8::is_ascii_lowercase) && v.iter().all(|&b| b.is_ascii_lowercase() || b == b'-'))
    {
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
    // `self.token`, `this.#headersList.cookies` (a private field), `vm.$store.token`.
    let member = |p: &[u8]| {
        let p = p.strip_prefix(b"#").unwrap_or(p);
        p.first().is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$'))
            && p.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
    };
    let mut parts = v.split(|&b| b == b'.');
    v.contains(&b'.') && parts.next().is_some_and(is_identifier) && parts.all(member)
}

/// A command line (`package.json`'s `scripts`): a program's name, then arguments that are
/// flags, paths, globs, quoted arguments or lowercase words, at least one of them a flag, a
/// path or quoted (`node scripts/rotate-token.mjs`, `secretlint \"**/*\"`, `vitest run
/// src/password`). A passphrase of words has none of those.
fn is_command(v: &[u8]) -> bool {
    let mut words = v.split(|&b| b == b' ');
    let program = |w: &[u8]| {
        w.first().is_some_and(u8::is_ascii_lowercase)
            && w.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
    };
    let quoted = |w: &[u8]| matches!(w, [b'"' | b'\'', ..] | [b'\\', b'"', ..]);
    let flag = |w: &[u8]| {
        w.len() >= 2 && w[0] == b'-' && w[1..].iter().all(|&b| b.is_ascii_alphanumeric() || b"-=_.:/,".contains(&b))
    };
    let path = |w: &[u8]| {
        w.contains(&b'/')
            && (is_file_path(w)
                || w.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-/*".contains(&b)))
    };
    let plain = |w: &[u8]| w.iter().all(|&b| b.is_ascii_lowercase() || b"-:&|".contains(&b));
    if !words.next().is_some_and(program) {
        return false;
    }
    let mut argument = false;
    for w in words {
        if quoted(w) || flag(w) || path(w) {
            argument = true;
        } else if !plain(w) {
            return false;
        }
    }
    argument
}

/// Is a value of words a possible secret under this (lowercased) name? A password or a
/// passphrase is words (`"MonkeyBusiness"`, `correct.horse.battery`); a name ending in `key`
/// (`PASSWORD_KEY`, `passwordStorageKey`) names where one is kept, not the password.
fn words_may_be_secret(ident: &[u8]) -> bool {
    contains(ident, b"pass") && !ident.ends_with(b"key")
}

/// An unquoted value without the operators code puts around names: Rust's `?`
/// (`async_token?`), TypeScript's `!` and `?.` (`this.token!`, `config?.secret`), Kotlin's
/// `!!`, and `!` before (`!!key.emitKey`).
fn without_operators(v: &[u8]) -> Vec<u8> {
    let v = &v[v.iter().take_while(|&&b| b == b'!').count()..];
    let mut names = Vec::with_capacity(v.len());
    for (i, &b) in v.iter().enumerate() {
        let postfix = matches!(b, b'?' | b'!') && v.get(i + 1).is_none_or(|n| matches!(n, b'.' | b'?' | b'!'));
        if !postfix {
            names.push(b);
        }
    }
    names
}

/// Names with operators around them, an expression rather than a literal (see
/// [`without_operators`]). Without them what is left must be code as `looks_like_code` says
/// (`Summer2024?` is a password with a `?`). Under a password's name the names must also read
/// as code, not as a word with a `!` after it (`Goldfishcrackers!`): snake_case, a dotted
/// path, or naming a password.
fn is_operator_expression(v: &[u8], words_are_secret: bool) -> bool {
    let names = without_operators(v);
    if names.len() == v.len() || names.is_empty() || !looks_like_code(&names) {
        return false;
    }
    !words_are_secret || names.iter().any(|&b| b == b'_' || b == b'.') || words(&names).any(is_credential_word)
}

/// `let async_token = async_token?;`, `exports.X509KeyUsageExtension = X509KeyUsageExtension;`:
/// a name given itself (or its own value unwrapped, re-exported) is code whatever its shape.
fn names_itself(ident: &[u8], v: &[u8]) -> bool {
    let last = ident.rsplit(|&b| b == b'.').next().unwrap_or(ident);
    let names = without_operators(v);
    names == ident || names == last
}

/// A quoted value that names something in code rather than being a literal secret: a
/// camelCase identifier of two words or more (`"extensionConfigurations"`), or a dotted path
/// of identifiers (`"evaluatePredicate.lastInput"`, `"settings.SECRET_KEY"`). Neither has a
/// digit: a token of the same length has digits and random case changes. Where a password
/// may be words, the value must also name a credential (`"confirmPassword"`, `"form.password"`).
fn names_code(v: &[u8], words_are_secret: bool) -> bool {
    let shaped = if v.contains(&b'.') {
        v.split(|&b| b == b'.').all(is_word_name)
    } else {
        is_camel_words(v) && camel_humps(v).nth(1).is_some()
    };
    shaped && (!words_are_secret || words(v).any(is_credential_word))
}

/// One name of letters without digits: `_`/`$`-separated parts (`SECRET_KEY`, `last_input`,
/// `$scope`), each in one case or camelCase made of words (`lastInput`, `kMaxLength`).
fn is_word_name(p: &[u8]) -> bool {
    p.first().is_some_and(|&b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$'))
        && p.iter().all(|&b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$'))
        && p.split(|&b| matches!(b, b'_' | b'$')).all(|part| !scan::has_upper_and_lower(part) || is_camel_words(part))
}

/// camelCase made of words: the shape of [`is_camel_case`] (each capital starts a word, none
/// last) with at most one word, bar a one-letter prefix (`kMaxLength`), that has no vowel
/// (`stateMsg`; `xmlHttpRequest` has two and is not taken). Of 18,000 camelCase identifiers
/// of 8 letters or more in npm's and the cargo registry's sources, 30 fail this, mostly
/// random test data; of random base62 strings, 1 in 2,000 passes at 16 characters, 1 in
/// 16,000 at 20, none of 300,000 at 24.
fn is_camel_words(v: &[u8]) -> bool {
    let prefix = |i: usize, hump: &[u8]| i == 0 && hump.len() == 1;
    let has_vowel = |hump: &[u8]| hump.iter().any(|b| b"aeiouyAEIOUY".contains(b));
    let vowelless = camel_humps(v).enumerate().filter(|&(i, hump)| !prefix(i, hump) && !has_vowel(hump)).count();
    is_camel_case(v) && vowelless <= 1
}

/// The words of a camelCase run: a new word starts at each capital.
fn camel_humps(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= v.len() {
            return None;
        }
        let len = v[start + 1..].iter().take_while(|b| !b.is_ascii_uppercase()).count() + 1;
        let hump = &v[start..start + len];
        start += len;
        Some(hump)
    })
}

/// The lowercase words of a name: split at `.`, `_`, `-`, `$` and at each capital.
fn words(v: &[u8]) -> impl Iterator<Item = Vec<u8>> {
    v.split(|&b| matches!(b, b'.' | b'_' | b'-' | b'$')).flat_map(camel_humps).map(<[u8]>::to_ascii_lowercase)
}

fn is_credential_word(w: Vec<u8>) -> bool {
    STAND_IN_WORDS.contains(&w.as_slice())
}

/// An identifier or a path of them (`Token`, `SyntaxToken`, `ast::Lifetime`, `Sha256Digest`).
fn is_identifier_path(v: &[u8]) -> bool {
    v.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && v.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

/// What follows `name: Type` in code and never a YAML or log value: `,` (a struct field, a
/// parameter), `)`, `;`, `=` (`let name: Type = …`), `{`, `>`, `|`, `]`.
fn ends_annotation(t: &[u8], ve: usize) -> bool {
    let p = skip_blanks(t, ve);
    matches!(t.get(p), Some(b',' | b')' | b';' | b'=' | b'{' | b'>' | b'|' | b']'))
}

/// A value that names or points at something rather than being a credential: a Rust or C++
/// path (`crate::auth::Key`), a version range (`^9.0.0`, `~1.2`, `>=3`), a template
/// (`Bearer {token}`, `%s`), a file path, a URL without credentials (the URL rule masks
/// those), or an npm package (`@scope/name`, `npm:…`, `workspace:*`).
fn is_reference(v: &[u8]) -> bool {
    contains(v, b"::")
        || is_version_range(v)
        || is_file_path(v)
        || (contains(v, b"://") && !url_has_userinfo(v))
        || (v.first() == Some(&b'@') && v.contains(&b'/'))
        || [&b"npm:"[..], b"workspace:", b"file:", b"link:", b"git+", b"github:"].iter().any(|p| v.starts_with(p))
}

/// `^9.0.0`, `~1.2`, `>=3`, `1.x`, `2.0.0-beta.1`, `>=1.2 <2`, `^1 || ^2`, `v1.4.2`: each
/// part an optional operator, digits, then dotted numbers or `x`/`*` and an optional
/// pre-release; the first part has an operator or a dot (`8f3b…` is no version).
fn is_version_range(v: &[u8]) -> bool {
    let mut parts = 0;
    for part in v.split(|&b| b == b' ') {
        if part.is_empty() || part == b"||" || part == b"-" {
            continue;
        }
        let ops = part.iter().take_while(|b| matches!(b, b'^' | b'~' | b'>' | b'<' | b'=')).count();
        let mut body = &part[ops..];
        if let [b'v', d, ..] = body
            && d.is_ascii_digit()
        {
            body = &body[1..];
        }
        let digits = body.iter().take_while(|b| b.is_ascii_digit()).count();
        let rest = &body[digits..];
        if digits == 0 || (parts == 0 && ops == 0 && rest.first() != Some(&b'.')) {
            return false;
        }
        let mut prerelease = false;
        for &b in rest {
            let ok = match b {
                b'0'..=b'9' | b'.' => true,
                b'x' | b'X' | b'*' => !prerelease,
                b'-' | b'+' => {
                    prerelease = true;
                    true
                }
                _ => prerelease && b.is_ascii_alphanumeric(),
            };
            if !ok {
                return false;
            }
        }
        // `-beta.1`, `-RC1`, `+build.5`: one case, as pre-releases are written.
        if prerelease && scan::has_upper_and_lower(rest) {
            return false;
        }
        parts += 1;
    }
    parts > 0
}

/// `./x`, `../x`, `~/x`, `C:\x`, or an absolute or relative path of plain segments
/// (`/run/secrets/db`, `bin/secretlint.js`), not a base64 value that happens to have a `/`.
fn is_file_path(v: &[u8]) -> bool {
    if v.starts_with(b"./") || v.starts_with(b"../") || v.starts_with(b"~/") {
        return true;
    }
    if let [d, b':', b'\\', ..] = v {
        return d.is_ascii_alphabetic();
    }
    let Some(rest) = v.strip_prefix(b"/") else { return is_relative_path(v) };
    let segments = rest.split(|&b| b == b'/');
    let plain = |s: &[u8]| !s.is_empty() && s.iter().all(|&b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let extension = rest.rsplit(|&b| b == b'.').next().filter(|e| e.len() < rest.len());
    let has_extension = extension.is_some_and(|e| (1..=5).contains(&e.len()) && e.iter().all(u8::is_ascii_lowercase));
    rest.contains(&b'/')
        && segments.clone().all(plain)
        && (rest.iter().all(|b| !b.is_ascii_uppercase()) || has_extension)
}

/// A relative path of plain segments, two or more, ending in a file extension
/// (`bin/secretlint.js`, `dist/types/index.d.ts`, `src/UserAvatar.tsx`) or all lowercase
/// without digits (`node_modules/.bin`). Base64 has no `.`, and mixes case and digits.
fn is_relative_path(v: &[u8]) -> bool {
    let plain = |s: &[u8]| !s.is_empty() && s.iter().all(|&b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let last = v.rsplit(|&b| b == b'/').next().unwrap_or_default();
    let has_extension = last.iter().rposition(|&b| b == b'.').is_some_and(|dot| {
        let ext = &last[dot + 1..];
        dot > 0
            && (1..=5).contains(&ext.len())
            && ext.first().is_some_and(u8::is_ascii_lowercase)
            && ext.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    v.contains(&b'/')
        && v.split(|&b| b == b'/').all(plain)
        && (has_extension || v.iter().all(|b| b.is_ascii_lowercase() || b"/._-".contains(b)))
}

/// Does a URL carry `user[:password]@` before its host?
fn url_has_userinfo(v: &[u8]) -> bool {
    let Some(i) = memchr::memmem::find(v, b"://") else { return false };
    let authority = &v[i + 3..];
    let end = authority.iter().position(|&b| matches!(b, b'/' | b'?' | b'#')).unwrap_or(authority.len());
    authority[..end].contains(&b'@')
}

/// A header or bearer value that is a name in code rather than a credential: a reference
/// (path, version, template, URL), `self.token`, `this.accessToken`, `settings.SECRET_KEY`,
/// or a short identifier without digits (`accessToken`; real tokens that short have digits).
pub(crate) fn is_name(v: &[u8]) -> bool {
    let identifier = |p: &[u8]| {
        p.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && p.iter().all(|&b| b.is_ascii_alphabetic() || b == b'_')
    };
    is_reference(v) || (identifier(v) && v.len() < 20) || (v.contains(&b'.') && v.split(|&b| b == b'.').all(identifier))
}

/// A CamelCase identifier: letters only, words that each start with one capital
/// (`pHalSetSystemInformation`, `AccessTokenValue`). A random token of mixed-case letters
/// almost always has two capitals in a row or a capital at its end.
pub(crate) fn is_camel_case(v: &[u8]) -> bool {
    v.len() >= 2
        && v.iter().all(u8::is_ascii_alphabetic)
        && v.iter().any(u8::is_ascii_uppercase)
        && v.iter().any(u8::is_ascii_lowercase)
        && v.windows(2).all(|w| !w[0].is_ascii_uppercase() || w[1].is_ascii_lowercase())
        && v.last().is_some_and(u8::is_ascii_lowercase)
}

/// Unquoted code: what `looks_like_code` says, for the header rule.
pub(crate) fn is_code(v: &[u8]) -> bool {
    looks_like_code(v)
}

/// Words that name a credential or stand in for one.
const STAND_IN_WORDS: &[&[u8]] = &[
    b"token",
    b"tok",
    b"secret",
    b"key",
    b"pass",
    b"password",
    b"passwd",
    b"pw",
    b"pwd",
    b"cred",
    b"credential",
    b"credentials",
    b"auth",
    b"value",
    b"bearer",
    b"api",
    b"access",
    b"refresh",
];

/// A value that describes a credential instead of being one: words naming one
/// (`"refresh-token"`, `"my_webhook_secret"`, `"client-secret-value"`, `"token123"`,
/// `"meta form value 1"`, a header's name `"X-CSRF-Token"`, a label `"Access token"`), or a
/// snake_case name (`"error_description="`). A word is in one case or capitalised, never in
/// a token's random case.
pub(crate) fn is_stand_in(v: &[u8]) -> bool {
    if !v.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b' ' | b'=')) {
        return false;
    }
    let name = v.strip_suffix(b"=").unwrap_or(v);
    if name.contains(&b'_') && name.iter().all(|&b| b.is_ascii_lowercase() || b == b'_') {
        return true;
    }
    // Every part a word with at most a short number after it (`key-3f9a…` is a key).
    let mut parts = name.split(|&b| matches!(b, b'-' | b'_' | b' '));
    parts.clone().all(|p| stand_in_word(p).is_some())
        && parts.any(|p| stand_in_word(p).is_some_and(|w| STAND_IN_WORDS.contains(&w.as_slice())))
}

/// The letters of a part that is a word with at most three digits after it, lowercased: the
/// word in lowercase, capitalised, or in capitals (`token`, `Token`, `CSRF`, `SECRET`).
fn stand_in_word(part: &[u8]) -> Option<Vec<u8>> {
    let digits = part.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let letters = &part[..part.len() - digits];
    let rest = letters.get(1..).unwrap_or_default();
    let lower = letters.to_ascii_lowercase();
    // In capitals, an acronym (`CSRF`, `JWT`) or a credential's word, not a base32 run.
    let capitals = letters.iter().all(u8::is_ascii_uppercase)
        && (letters.len() <= 5 || STAND_IN_WORDS.contains(&lower.as_slice()));
    let word = letters.iter().all(u8::is_ascii_lowercase)
        || capitals
        || (letters.first().is_some_and(u8::is_ascii_uppercase) && rest.iter().all(u8::is_ascii_lowercase));
    (digits <= 3 && word).then_some(lower)
}

/// A number as code writes it: `1448101956u32`, `-2147483648i32`, `0x2f736d64` (a short hex
/// literal; a 64-digit `0x…` private key is no number).
fn is_number_literal(v: &[u8]) -> bool {
    let v = v.strip_prefix(b"-").unwrap_or(v);
    if let Some(hex) = v.strip_prefix(b"0x") {
        return (1..=16).contains(&hex.len()) && hex.iter().all(u8::is_ascii_hexdigit);
    }
    let digits = v.iter().take_while(|b| b.is_ascii_digit() || **b == b'_').count();
    let suffix = &v[digits..];
    digits > 0
        && [&b"u8"[..], b"u16", b"u32", b"u64", b"u128", b"usize", b"i8", b"i16", b"i32", b"i64", b"i128", b"isize"]
            .contains(&suffix)
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
        let hit = ["token", "TOKEN", "passw", "secret", "_key", "_KEY", "Key", "SECRET", "PASSW", "Token", "cookie"]
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

    /// A SplitMix64 stream of characters from `alphabet`, for the shape tests below.
    fn random_strings(seed: u64, alphabet: &[u8], count: usize) -> Vec<Vec<u8>> {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        (0..count)
            .map(|_| {
                let len = 12 + (next() % 37) as usize;
                (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect()
            })
            .collect()
    }

    /// The name tests must never take a random token for a name: over 400,000 random
    /// strings of the alphabets tokens use (with a digit), none is a name or a reference.
    #[test]
    fn random_tokens_are_never_names() {
        let b62 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let upper = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        let hex = b"0123456789abcdef";
        let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_";
        // Hex and base32 tokens are one case and digits; the others show both cases and digits.
        for (seed, alphabet, cased) in
            [(1, &b62[..], true), (2, &upper[..], false), (3, &hex[..], false), (4, &b64[..], true)]
        {
            for v in random_strings(seed, alphabet, 100_000) {
                let shown = String::from_utf8_lossy(&v);
                let mixed = v.iter().any(u8::is_ascii_digit) && (!cased || scan::has_upper_and_lower(&v));
                assert!(!mixed || !is_name(&v), "random {shown:?} taken for a name");
            }
        }
    }

    #[test]
    fn names_in_code_are_recognised() {
        for reference in [
            "^9.0.0",
            "~1.2",
            ">=3",
            "1.x",
            "2.0.0-beta.1",
            ">=1.2 <2",
            "^1 || ^2",
            "v1.4.2",
            "crate::auth::Key",
            "./secrets/token.txt",
            "/run/secrets/db_password",
            "https://api.example.com/v1/token",
            "@secretlint/core",
            "workspace:*",
        ] {
            assert!(is_reference(reference.as_bytes()), "{reference}");
        }
        for literal in ["8f3b2a9c1d", "a8F3kL0pQz7Xw2Nv", "/aB3xK9mQ2vL7pR4", "https://u:p4ssw0rd@host/", "1234abcd"] {
            assert!(!is_reference(literal.as_bytes()) && !is_name(literal.as_bytes()), "{literal}");
        }
    }

    /// Each way code is told from a credential, both ways: the code (from compiler output
    /// and real sources) left alone, a real secret in the same syntax still found.
    #[test]
    fn code_is_left_alone_and_secrets_in_the_same_syntax_are_not() {
        let secret = "q7Vb2Lx9Kd4Rt8Zm";
        for (code, masked) in [
            ("let token: Sha256Digest = token.parse()?;", format!("token: {secret}")),
            ("    lifetime_token: ast::Lifetime,", format!("    lifetime_token: {secret}")),
            ("    lifetime_token: Aes256GcmKey,", format!("    lifetime_token: \"{secret}\",")),
            ("fn verify(token: &str, secret_key: OAuth2Token) -> bool {", format!("secret_key: {secret}")),
            ("  apiKey: OAuth2Client;", format!("  apiKey: '{secret}';")),
            ("pub type EXTENDED_KEY_USAGE = stack_st_ASN1_OBJECT;", format!("EXTENDED_KEY = {secret}")),
            ("pub const ID_CE_KEY_USAGE: crate::ObjectIdentifier =", format!("ID_CE_KEY = \"{secret}\"")),
            ("KeyError: 'refresh_token'", format!("refresh_token: '{secret}'")),
            ("\"secretlint\": \"^9.0.0\",", format!("\"secret\": \"{secret}\",")),
            ("\"@secretlint/core\": \"~9.1.2-beta.1\"", format!("\"secret_id2\": \"{secret}\"")),
            ("token = \"Bearer {token}\"", format!("token = \"Bearer {secret}\"")),
            ("api_key = \"{prefix}-{key}\"", format!("api_key = \"{secret}-{secret}\"")),
            ("password = \"%s:%s\" % (user, pw)", format!("password = \"{secret}\" % x")),
            ("password = \"%d\"", "password = \"e8COI^%saOeXo!BE\"".to_owned()),
            ("secret: \"/run/secrets/github_token\"", format!("secret: \"/{secret}\"")),
            ("secret: \"./config/secret.json\"", format!("secret: \"{secret}.json\"")),
            (
                "api_key: \"https://vault.internal/v1/kv/api\"",
                format!("api_key: \"https://u:{secret}@vault.internal/\""),
            ),
            // Issue 29, item 7: four masks in a Rust + TypeScript tree, each code.
            // An expression (Rust's `?`), not a literal.
            ("let async_token = async_token?;", format!("let async_token = {secret};")),
            ("let async_token = async_token?;", "password = Summer2024Xk?".to_owned()),
            // A relative path (package.json's `bin`), not base64 with a `/` in it.
            ("\"secretlint\": \"bin/secretlint.js\"", "\"secret\": \"q7Vb2Lx9/Kd4Rt8Zm+w=\"".to_owned()),
            // A dotted identifier (a storage key), not a token with a `.` in it.
            (
                "const LAST_INPUT_KEY = \"evaluatePredicate.lastInput\";",
                format!("const LAST_INPUT_KEY = \"{secret}.x\";"),
            ),
            // A camelCase identifier, made of words; a token has digits and random case.
            ("stateKey = \"extensionConfigurations\"", format!("stateKey = \"{secret}\"")),
            ("stateKey = \"extensionConfigurations\"", "apiKey = \"kQxLmPzRtWvBnMcXzLkJhGfDsAqWeRtY\"".to_owned()),
            // Their kind: more expressions, paths and names.
            ("const token = this.session!.token!;", format!("const token = {secret}!;")),
            ("secret = config?.secret;", format!("secret = {secret};")),
            ("let api_key = api_key!!", "api_key = 9fK2mL7qX4vB8nR3!!".to_owned()),
            ("\"types\": \"dist/types/secret-store.d.ts\",", format!("\"secret\": \"{secret}/{secret}\",")),
            ("\"token-cli\": \"./bin/token-cli.mjs\",", format!("\"token-cli\": \"{secret}.mjs\",")),
            ("apiKey: \"settings.apiKey\",", format!("apiKey: \"{secret}\",")),
            ("TOKEN_STORAGE_KEY = \"auth.refreshToken\"", format!("TOKEN_STORAGE_KEY = \"auth.{secret}\"")),
            ("sessionKey: \"kMaxSessionLength\",", format!("sessionKey: \"k{secret}\",")),
            // A password is words: under its name the words must name a field.
            ("passwordField = \"confirmPassword\"", "password = \"MonkeyBusiness\"".to_owned()),
            ("password: \"loginForm.password\",", "password: \"correct.horse.battery\",".to_owned()),
            ("let password = old_password?;", "password = Goldfishcrackers!".to_owned()),
            ("PASSWORD_KEY = \"session.lastLogin\"", "db_password = \"session.lastLogin\"".to_owned()),
            // Words naming a credential in any of the cases words come in, not a token's.
            ("const CSRF_TOKEN_HEADER = \"X-CSRF-Token\";", format!("const CSRF_TOKEN = \"X-CSRF-{secret}\";")),
            ("accessToken: \"Access token\",", format!("accessToken: \"Access {secret}\",")),
            ("API_KEY_HEADER = \"X-Api-Key\"", "API_KEY = \"KEY-QWERTYUIOPASDFGH\"".to_owned()),
            // npm's own sources: a name given itself, `!` before names, a private field, a prompt.
            ("exports.X509KeyUsageExtension = X509KeyUsageExtension;", format!("exports.X509Key = {secret};")),
            ("emitKey = !!key.emitKey", format!("emitKey = !{secret}")),
            ("const cookies = this.#headersList.cookies", format!("const cookies = {secret}")),
            ("const passwordPrompt = 'npm password: '", "const password = 'npm password: '".to_owned()),
            // A command line (`package.json`'s scripts), not a passphrase.
            (
                "\"rotate-token\": \"node scripts/rotate-token.mjs\",",
                "\"password\": \"node serve quickly\",".to_owned(),
            ),
            ("\"lint:secrets\": \"secretlint \\\"**/*\\\"\",", format!("\"secrets\": \"{secret} x\",")),
            ("\"test:password\": \"vitest run src/password\",", "\"password\": \"vivid otter copper\",".to_owned()),
            ("\"secret\": \"secretlint --format=json\"", format!("\"secret\": \"{secret} --format=json\"")),
        ] {
            assert_eq!(value_of(code), None, "{code}");
            assert!(value_of(&masked).is_some(), "{masked}");
        }
        // The classic forms keep working.
        assert_eq!(value_of("password = \"hunter2-but-long-and-random-7Qx\""), Some("hunter2-but-long-and-random-7Qx"));
        assert_eq!(value_of(&format!("export GITHUB_TOKEN={secret}")), Some(secret));
        assert_eq!(value_of(&format!("token: {secret}  # yaml")), Some(secret));
        assert_eq!(value_of(&format!("--password {secret}")), Some(secret));
        assert_eq!(value_of("API_KEY=8f3b2a9c1d7e4f60"), Some("8f3b2a9c1d7e4f60"));
        assert_eq!(value_of("api_key = \"key-3f9a8b7c6d5e4f30\""), Some("key-3f9a8b7c6d5e4f30"));
        assert_eq!(value_of("db_password = \"vivid otter copper lantern\""), Some("vivid otter copper lantern"));
        for code in [
            "Self::KeyValSep => \"key-value separator\",",
            "Error::Token => \"invalid token\",",
            "ECDHKeyExchangeStandardX963SHA512 => kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA512,",
            "pub const DH_MAGIC: BCRYPT_DH_KEY_BLOB_MAGIC = 1448101956u32;",
            "token_pos: token_start..token_start + token_len,",
            "/// simple-key = quoted-key / unquoted-key",
            "\"access_token\": \"initial-access-token\",",
            "let secret = \"my_webhook_secret\";",
            "\"oidc_token\": \"token123\"",
            "let desc_key = \"error_description=\";",
            "let kw: Keywords = \"ca-gregory-hc-h12\".parse().unwrap();",
            "AuthOutcome::NoToken => \"it requires authentication and no GitHub token was given\".to_owned(),",
            "let token = fetch_token(client)?;",
            "secret_key = a.b?",
            "token = cached_token ?? fallback_token",
            "const token = await refreshAccessToken(session);",
            "const apiKey = process.env.API_KEY!;",
            "\"bin\": { \"secretlint\": \"bin/secretlint\" },",
        ] {
            assert_eq!(value_of(code), None, "{code}");
        }
    }

    /// The name tests added for code (paths, dotted and camelCase names) never take a random
    /// token for a name: none of 100,000 base62 tokens of 24 to 48 characters (digits or not),
    /// and no base64 token with a digit, whatever its length.
    #[test]
    fn random_tokens_are_not_identifiers_or_paths() {
        let b62 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for v in random_strings(5, b62, 100_000).into_iter().filter(|v| v.len() >= 24) {
            assert!(!names_code(&v, false), "random {:?} taken for a name", String::from_utf8_lossy(&v));
            let key = format!("api_key = \"{}\"", String::from_utf8_lossy(&v));
            assert!(looks_secret(&v) == value_of(&key).is_some(), "{key}");
        }
        for v in random_strings(6, b64, 100_000).into_iter().filter(|v| v.iter().any(u8::is_ascii_digit)) {
            let shown = String::from_utf8_lossy(&v);
            assert!(!names_code(&v, false) && !is_file_path(&v), "random {shown:?} taken for a name or a path");
        }
    }

    #[test]
    fn camel_case_is_told_from_mixed_case_tokens() {
        for ident in ["pHalSetSystemInformation", "AccessTokenValue", "myEtsyKey"] {
            assert!(is_camel_case(ident.as_bytes()), "{ident}");
        }
        for token in ["kQ7xLmPz2Rt9", "ABcdEFghIJkl", "abcdefghijklmnopqrstuvwx", "aBcDeFgHiJkL", "xYzzyW"] {
            assert!(!is_camel_case(token.as_bytes()), "{token}");
        }
        for ident in ["extensionConfigurations", "lastInput", "stateKey", "kMaxLength", "stagedMsg", "ExtensionHost"] {
            assert!(is_camel_words(ident.as_bytes()), "{ident}");
        }
        // Words have vowels; random letters mostly do not.
        for token in ["kQxLmPzRtWvB", "xmlHttpRsc", "QwRtzPlkMnbv"] {
            assert!(!is_camel_words(token.as_bytes()), "{token}");
        }
    }
}
