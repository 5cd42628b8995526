//! The formats layer as data: one row per secret format. A row names the kind its mask shows,
//! the keywords that trigger it (the prefilter looks for nothing else), and how to confirm a
//! hit: an anchored `regex`, or a named hand-written shape where a regex cannot say it (PEM
//! blocks, JWTs, URL userinfo, `Authorization` headers, the generic assignment). Each row also
//! generates its own sample and near misses, which the table tests check; so adding a format
//! is adding a row. Shapes follow the public gitleaks/trufflehog rule sets.
//!
//! Regex rows: the regex is tried where a keyword starts, anchored there. Its first capture
//! group (or the whole match) is the secret, which must start on a token boundary. A row
//! that must see where a token ends says so with a trailing `(?:[^…]|\z)`, outside the group.

use std::sync::LazyLock;

#[allow(unused_imports)]
use super::alphabets::{
    AWS_ID, B62, B64, B64URL, DIGITS, HEX, HEX_ANY_CASE, LOWER, LOWER_DIGITS, LOWER_DIGITS_DASH, UPPER, UPPER_DIGITS,
};
use super::kinds::{Cand, Kind};
#[cfg(test)]
use super::samples::{Sample, Seed};
use super::scan::{has_upper_and_lower, left_boundary};
use super::{generic, pem, shapes};

/// One secret format.
pub(crate) struct Format {
    /// Unique among built-in and user rules.
    pub(crate) id: &'static str,
    /// What the mask says (`[REDACTED:<kind>]`); several formats may share a kind.
    pub(crate) kind: &'static str,
    /// Literals (3 bytes or more); the pattern is tried only where one occurs. Case-sensitive
    /// unless `any_case`.
    pub(crate) keywords: &'static [&'static str],
    /// The keywords match in any ASCII case (a provider's name in `ACME_KEY`, `acmeKey`).
    pub(crate) any_case: bool,
    pub(crate) pattern: Pattern,
    /// Character classes the secret must show after its keyword (real tokens are mixed).
    pub(crate) classes: Classes,
    /// Minimum Shannon entropy of the secret, in bits per byte.
    pub(crate) entropy: Option<f64>,
    /// Longest secret after the keyword; a longer one is something else (for regexes whose
    /// parts a counted repetition cannot bound together).
    pub(crate) max_len: Option<usize>,
    /// How many bytes after the keyword the regex sees (`\z` matches where its view ends);
    /// `None` is `table::MATCH_WINDOW`. A format that judges a long run by its first bytes
    /// says how many.
    pub(crate) window: Option<usize>,
    /// The row's generated sample and near misses, for the table tests only.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) gens: Gens,
}

/// A row's generators: a sample, which must be masked as the row's kind, and text close to
/// the format that must be left alone (a wrong prefix, too short, a wrong alphabet, embedded
/// in an identifier). Written beside each row, built only for the table tests: the product's
/// table carries none (the `gens!` macro drops them).
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct Gens {
    sample: fn(&mut Seed) -> Sample,
    near_misses: fn(&mut Seed) -> Vec<String>,
}

/// Without the table tests, a row's generators are nothing.
#[cfg(not(test))]
#[derive(Clone, Copy)]
pub(crate) struct Gens;

#[cfg(test)]
macro_rules! gens {
    ($sample:expr, $near_misses:expr) => {
        Gens { sample: $sample, near_misses: $near_misses }
    };
}

#[cfg(not(test))]
macro_rules! gens {
    ($sample:expr, $near_misses:expr) => {
        Gens
    };
}

/// A regex row: `regex!(id, kind, keywords, regex, sample, near_misses)`. Every constructor
/// takes the sample and the near misses, so a row without them cannot be written.
macro_rules! regex {
    ($id:expr, $kind:expr, $keywords:expr, $re:expr, $sample:expr, $near_misses:expr $(,)?) => {
        regex_row($id, $kind, $keywords, $re, gens!($sample, $near_misses))
    };
}

/// A row checked by a hand-written shape: `shape!(id, kind, keywords, shape, sample, near_misses)`.
macro_rules! shape {
    ($id:expr, $kind:expr, $keywords:expr, $shape:expr, $sample:expr, $near_misses:expr $(,)?) => {
        shape_row($id, $kind, $keywords, $shape, gens!($sample, $near_misses))
    };
}

/// A context row whose value has a structure of its own, with its samples and near misses.
macro_rules! context_written {
    ($id:expr, $kind:expr, $keywords:expr, $value:expr, $sample:expr, $near_misses:expr $(,)?) => {
        context_written_row($id, $kind, $keywords, $value, gens!($sample, $near_misses))
    };
}

// The families' rows, after the macros they are written with.
mod business;
mod cloud;
mod developer;
mod structural;
mod tokens;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// Anchored at the keyword; capture group 1 (if any) is the secret.
    Regex(&'static str),
    Shape(Shape),
    /// A token without a prefix of its own, known by the provider's name (a keyword) before
    /// an assignment: `ACME_API_KEY = "…"`, `"acmeSecret": "…"`, `acme-token: …`.
    Context(Context),
}

/// The value of a [`Pattern::Context`] row, as the provider documents it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Context {
    /// The value as a regex: a class and a count, `[a-z0-9]{32}`. Case-insensitive like the
    /// rest of the row's regex unless it says `(?-i:…)`.
    pub(crate) value: &'static str,
    /// The names as a regex, where the keywords (escaped) do not say them all
    /// (`mailchimpsdk.initialize`, with any byte for the dot).
    pub(crate) names: Option<&'static str>,
    pub(crate) samples: ContextSamples,
}

/// How a context row's samples and near misses are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContextSamples {
    /// Drawn from `alphabet`, between the shortest and longest lengths, in the syntaxes of
    /// [`context_sample`]; the near misses of [`context_near_misses`] come with them.
    Drawn { alphabet: &'static str, len: (usize, usize) },
    /// Written by the row (a value with a structure of its own).
    Written,
}

/// Between the provider's name and the assignment: the rest of the identifier (`_API_KEY`,
/// `Token`, `.secret`, ` client secret`), at most 24 bytes.
const CONTEXT_NAME_TAIL: &str = r"[0-9a-z_.	 -]{0,24}?";
/// The assignment: closing quotes or spaces, an operator (`=`, `:`, `:=`, `=>`, `?=`, `||:`,
/// `<-`, `,` as in a Python tuple or a CSV), then opening quotes or spaces.
const CONTEXT_ASSIGN: &str = r#"[\s'"`\]]{0,3}(?:=|:{1,3}=?|=>|\?=|\|\|:?|<-|<=|>|,)[\s'"`=]{0,5}"#;
/// After the value: a quote, a space, a separator or the end.
const CONTEXT_END: &str = r#"(?:[\s'"`;,)\]}<&]|\\[nrt]|\z)"#;

/// The regex a context row is checked with, anchored at one of its keywords.
pub(crate) fn context_regex(keywords: &[&str], ctx: Context) -> String {
    let names = match ctx.names {
        Some(names) => names.to_owned(),
        None => keywords.iter().map(|k| regex::escape(k)).collect::<Vec<_>>().join("|"),
    };
    format!("(?i)(?:{names}){CONTEXT_NAME_TAIL}{CONTEXT_ASSIGN}({}){CONTEXT_END}", ctx.value)
}

/// The formats a regex cannot say: they look behind the keyword, span lines, or decide by
/// context whether a value is a secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `eyJ….eyJ….sig`, triggered by the `.eyJ` between header and payload.
    Jwt,
    /// A private-key block from BEGIN to END, across lines.
    Pem,
    /// The password in `scheme://user:password@host`.
    UrlCredentials,
    /// The credential of an `Authorization:` header.
    AuthorizationHeader,
    /// A bare `Bearer <token>`.
    Bearer,
    /// `password = value` and friends, with an entropy floor; the kind comes from the name.
    Assignment,
    /// A MaxMind license key, which its keyword `_mmk` ends: read backwards from it.
    MaxMind,
}

/// Character classes a token must mix: a run of one case is usually a word or identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Classes {
    Any,
    UpperAndLower,
    UpperLowerDigit,
}

impl Classes {
    pub(crate) fn accepts(self, v: &[u8]) -> bool {
        match self {
            Classes::Any => true,
            Classes::UpperAndLower => has_upper_and_lower(v),
            Classes::UpperLowerDigit => has_upper_and_lower(v) && v.iter().any(u8::is_ascii_digit),
        }
    }
}

impl Pattern {
    /// Lower wins when spans of different kinds overlap: a token format names a span better
    /// than the header or URL around it, and any of those beats the generic assignment.
    pub(crate) fn priority(self) -> u8 {
        match self {
            Pattern::Regex(_) | Pattern::Context(_) | Pattern::Shape(Shape::Jwt | Shape::Pem | Shape::MaxMind) => 1,
            Pattern::Shape(Shape::UrlCredentials | Shape::AuthorizationHeader | Shape::Bearer) => 2,
            Pattern::Shape(Shape::Assignment) => 3,
        }
    }
}

/// Checks a hand-written shape at a keyword hit `[s, e)` and records what it found as `kind`
/// (the assignment names its own kind).
pub(crate) fn verify_shape(shape: Shape, kind: Kind, t: &[u8], s: usize, e: usize, out: &mut Vec<Cand>) {
    let span = match shape {
        Shape::Jwt => shapes::jwt(t, s),
        Shape::Pem => pem::verify(t, s, None),
        Shape::UrlCredentials => shapes::url_credentials(t, s, e),
        Shape::AuthorizationHeader => shapes::authorization_header(t, s, e),
        Shape::Bearer => shapes::bearer(t, s, e),
        Shape::Assignment => return generic::verify(t, s, e, out),
        Shape::MaxMind => shapes::maxmind(t, s, e),
    };
    if let Some((start, end)) = span {
        out.push(Cand { start, end, kind });
    }
}

/// What a regex row checks besides its regex, and how far its regex sees.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checks {
    pub(crate) classes: Classes,
    pub(crate) entropy: Option<f64>,
    pub(crate) max_len: Option<usize>,
    pub(crate) window: Option<usize>,
}

impl Checks {
    pub(crate) const NONE: Checks = Checks { classes: Classes::Any, entropy: None, max_len: None, window: None };

    /// Does the secret `[start, end)`, found at a keyword ending at `kw_end`, start on a
    /// token boundary and pass the row's class, entropy and length checks?
    pub(crate) fn accept(self, t: &[u8], kw_end: usize, start: usize, end: usize) -> bool {
        if end <= start || end > t.len() {
            return false;
        }
        let after_keyword = &t[kw_end.clamp(start, end)..end];
        left_boundary(t, start)
            && self.classes.accepts(after_keyword)
            && self.max_len.is_none_or(|max| after_keyword.len() <= max)
            && self.entropy.is_none_or(|floor| super::scan::entropy(&t[start..end]) >= floor)
    }
}

impl Format {
    pub(crate) fn checks(&self) -> Checks {
        Checks { classes: self.classes, entropy: self.entropy, max_len: self.max_len, window: self.window }
    }

    /// A generated example of this format (context rows make theirs from their value).
    #[cfg(test)]
    pub(crate) fn make_sample(&self, seed: &mut Seed) -> Sample {
        match self.pattern {
            Pattern::Context(Context { samples: ContextSamples::Drawn { alphabet, len }, .. }) => {
                context_sample(self.keywords, alphabet, len, seed)
            }
            _ => (self.gens.sample)(seed),
        }
    }

    /// Text close to this format that must be left alone.
    #[cfg(test)]
    pub(crate) fn make_near_misses(&self, seed: &mut Seed) -> Vec<String> {
        let mut misses = (self.gens.near_misses)(seed);
        if let Pattern::Context(Context { samples: ContextSamples::Drawn { alphabet, len }, .. }) = self.pattern {
            misses.extend(context_near_misses(self.keywords, alphabet, len, seed));
        }
        misses
    }
}

/// The syntaxes a context sample is written in (configs, env files, code, JSON, YAML).
#[cfg(test)]
fn context_sample(keywords: &[&str], alphabet: &str, (lo, hi): (usize, usize), seed: &mut Seed) -> Sample {
    let name = keywords.first().copied().unwrap_or("acme");
    let len = lo + seed.below(hi.saturating_sub(lo) + 1);
    let value = seed.mixed(alphabet, len);
    context_assignment(name, value, seed)
}

/// `value` assigned to a name of `name`'s provider, in one of the syntaxes configs, env files,
/// code, JSON and YAML use.
#[cfg(test)]
pub(crate) fn context_assignment(name: &str, value: String, seed: &mut Seed) -> Sample {
    let upper = name.to_ascii_uppercase().replace(['-', '.', ' '], "_");
    let text = match seed.below(9) {
        0 => format!("{name}_api_key = \"{value}\""),
        1 => format!("export {upper}_TOKEN={value}"),
        2 => format!("\"{name}Secret\": \"{value}\","),
        3 => format!("{name}-token: {value}"),
        4 => format!("{name}Token := \"{value}\""),
        5 => format!("{upper}_KEY='{value}'"),
        6 => format!("{name}.secret || '{value}'"),
        7 => format!("{{\"{name}_key\": \"{value}\\n\"}}"),
        _ => format!("const {name}_secret = `{value}`;"),
    };
    Sample::carried(value, text)
}

/// A context row leaves alone: the name without an assignment, a placeholder, a value of one
/// repeated pair (no entropy), a value one byte too short or too long. (Names that end in
/// `_key` or `_token` would meet the generic assignment rule, which masks any random value.)
#[cfg(test)]
fn context_near_misses(keywords: &[&str], alphabet: &str, (lo, hi): (usize, usize), seed: &mut Seed) -> Vec<String> {
    let name = keywords.first().copied().unwrap_or("acme");
    let mut misses = vec![
        format!("see the {name} documentation for how to create one"),
        format!("{name}_value = \"${{{}_VALUE}}\"", name.to_ascii_uppercase()),
        format!("{name}_value = \"{}\"", "ab".repeat(lo.div_ceil(2)).get(..lo).unwrap_or_default()),
    ];
    if lo > 1 {
        misses.push(format!("{name}_value = \"{}\"", seed.mixed(alphabet, lo - 1)));
    }
    if hi < 512 {
        misses.push(format!("{name}_value = \"{}\"", seed.mixed(alphabet, hi + 1)));
    }
    misses
}

/// A context row: the provider's name (any case), an assignment, then the value it documents.
/// Its samples and near misses are made from `value`; `entropy` defaults to 2.5 bits per
/// byte, which only a value of a few repeated characters fails.
pub(crate) const fn context(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    value: &'static str,
    alphabet: &'static str,
    len: (usize, usize),
) -> Format {
    Format {
        id,
        kind,
        keywords,
        any_case: true,
        pattern: Pattern::Context(Context { value, names: None, samples: ContextSamples::Drawn { alphabet, len } }),
        classes: Classes::Any,
        entropy: Some(2.5),
        max_len: None,
        window: Some(CONTEXT_WINDOW),
        gens: NO_GENS,
    }
}

/// A context row whose value has a structure of its own, with samples and near misses written
/// for it (the near misses should include the name without an assignment).
const fn context_written_row(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    value: &'static str,
    gens: Gens,
) -> Format {
    let row = context(id, kind, keywords, value, "", (0, 0));
    Format { pattern: Pattern::Context(Context { value, names: None, samples: ContextSamples::Written }), gens, ..row }
}

/// `row` (a context row) with its names said by a regex (every keyword must start a match).
pub(crate) const fn with_names(names: &'static str, row: Format) -> Format {
    match row.pattern {
        Pattern::Context(ctx) => Format { pattern: Pattern::Context(Context { names: Some(names), ..ctx }), ..row },
        _ => row,
    }
}

/// How far a context row's regex looks past its keyword.
const CONTEXT_WINDOW: usize = 1024;

/// A drawn context row's generators come from its value (`context_sample`).
#[cfg(test)]
const NO_GENS: Gens = Gens { sample: |_| Sample::token(String::new()), near_misses: |_| Vec::new() };
#[cfg(not(test))]
const NO_GENS: Gens = Gens;

/// A regex row (written through [`regex!`]).
const fn regex_row(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    re: &'static str,
    gens: Gens,
) -> Format {
    Format {
        id,
        kind,
        keywords,
        any_case: false,
        pattern: Pattern::Regex(re),
        classes: Classes::Any,
        entropy: None,
        max_len: None,
        window: None,
        gens,
    }
}

/// A row checked by a hand-written shape (written through [`shape!`]).
const fn shape_row(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    shape: Shape,
    gens: Gens,
) -> Format {
    Format {
        id,
        kind,
        keywords,
        any_case: false,
        pattern: Pattern::Shape(shape),
        classes: Classes::Any,
        entropy: None,
        max_len: None,
        window: None,
        gens,
    }
}

/// Every built-in format, family by family. Order matters only between rows that find the
/// same span: the earlier row names it; the structural rows (headers, URLs, the generic
/// assignment) come last.
pub(crate) static FORMATS: LazyLock<Vec<&'static Format>> =
    LazyLock::new(|| FAMILIES.iter().flat_map(|(_, rows)| rows.iter()).collect());

/// The table by family, in table order; the list of formats in docs/redaction.md is made from it.
pub(crate) static FAMILIES: &[(&str, &[Format])] = &[
    ("Code hosts, first cloud and AI providers", tokens::ROWS),
    ("Cloud and infrastructure", cloud::ROWS),
    ("Developer tools", developer::ROWS),
    ("Business APIs", business::ROWS),
    ("By structure", structural::ROWS),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use crate::redact::table::RowRegex;

    #[test]
    fn ids_are_unique_and_every_regex_compiles() {
        for (i, f) in FORMATS.iter().enumerate() {
            assert!(FORMATS[..i].iter().all(|g| g.id != f.id), "{} twice", f.id);
            if let Pattern::Regex(re) = f.pattern {
                assert!(RowRegex::compile(re, false).is_ok(), "{}: {:?}", f.id, RowRegex::compile(re, false).err());
            }
            if let Pattern::Context(ctx) = f.pattern {
                let re = context_regex(f.keywords, ctx);
                assert!(RowRegex::compile(&re, true).is_ok(), "{}: {:?}", f.id, RowRegex::compile(&re, true).err());
                assert!(f.any_case, "{}: a context row's keywords are names, matched in any case", f.id);
            }
        }
    }

    /// The constructors take a sample and near misses, so no row lacks them; this checks
    /// that none is empty either.
    #[test]
    fn every_row_has_a_sample_and_near_misses() {
        let mut seed = Seed::new(1);
        for f in FORMATS.iter() {
            let sample = f.make_sample(&mut seed);
            assert!(!sample.secret.is_empty() && sample.text.contains(&sample.secret), "{}", f.id);
            assert!(!f.make_near_misses(&mut seed).is_empty(), "{} has no near misses", f.id);
        }
    }

    #[test]
    fn every_sample_is_masked_as_its_kind_and_no_near_miss_is() {
        let r = Redactor::default();
        for n in 0..24 {
            let mut seed = Seed::new(n);
            for f in FORMATS.iter() {
                let sample = f.make_sample(&mut seed);
                let mask = format!("[REDACTED:{}]", f.kind);
                for text in [sample.text.clone(), format!("before {} after\n", sample.text)] {
                    let out = r.redact(&text);
                    assert!(!out.contains(&sample.secret), "{}: {text:?} -> {out:?}", f.id);
                    assert!(out.contains(&mask), "{}: expected {mask} in {out:?}", f.id);
                    assert_eq!(r.redact(&out), out, "{}: not idempotent", f.id);
                }
                for miss in f.make_near_misses(&mut seed) {
                    assert_eq!(r.redact(&miss), miss, "{}: near miss {miss:?} was masked", f.id);
                }
            }
        }
    }
}
