//! Redaction (design §7): the one redactor everything that leaves the process goes through.
//!
//! Three layers, all in one pass over the text:
//! 1. **Known values** (`known`): the GitHub token in use and the values of credential-like
//!    environment variables, raw and in their base64, URL-encoded and JSON-escaped forms.
//! 2. **Formats** (`formats`, one table row per format; `shapes`, `generic`, `pem` for what a
//!    regex cannot say): token shapes of every common provider, URL credentials,
//!    `Authorization` headers, JWTs, PEM private-key blocks, and a generic `secret = value`
//!    rule with an entropy floor; plus the user's own rules from config ([`UserRules`]).
//! 3. **Local paths** (`paths`): checkout → `<checkout>`, home → `~`, other users' home
//!    prefixes → `[LOCAL_PATH]`.
//!
//! Masks name the kind (`[REDACTED:github-token]`) and never the length; redacting twice
//! changes nothing. [`RULE_KINDS`] lists the built-in kinds.
//!
//! Build one [`Redactor`] per process and derive per-run copies with
//! [`Redactor::with_checkout`]:
//!
//! ```
//! use forgeloop_core::redact::Redactor;
//! # let token = "k9Xq2LmZ7vB4nR8tW3yH";
//! let redactor = Redactor::builder()
//!     .known_value("github-token", token)
//!     .env_vars(std::env::vars())
//!     .home_dir(std::path::Path::new("/home/dev"))
//!     .build();
//! let run = redactor.with_checkout(std::path::Path::new("/tmp/forgeloop-run/checkout"));
//! let log = format!("push failed for {token} in /tmp/forgeloop-run/checkout/src/lib.rs:3");
//! assert_eq!(run.redact(&log), "push failed for [REDACTED:github-token] in <checkout>/src/lib.rs:3");
//! ```

mod alphabets;
mod engine;
mod fdr;
mod formats;
mod generic;
mod kinds;
mod known;
mod matcher;
mod paths;
mod pem;
#[cfg(test)]
mod samples;
mod scan;
mod shapes;
mod stream;
mod table;
mod user;

use std::borrow::Cow;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use engine::{Masked, Rules, Scratch, Segmenter, Sink};
use kinds::{Kind, Named};
use known::KnownSet;
use paths::PathSet;
pub use stream::StreamRedactor;
pub use user::{RuleError, RuleSpec, UserRules};

/// Every kind name a built-in rule can report, for documentation and `--explain`: the
/// formats table's kinds, then the generic assignment's and the paths'. Known values use
/// the kind their caller registered (`github-token`, `env-secret`, …); user rules their id.
pub static RULE_KINDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut kinds: Vec<&'static str> = Vec::new();
    for kind in formats::FORMATS.iter().map(|f| f.kind).chain(Named::ALL.iter().map(|n| n.name())) {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    kinds
});

/// One masked span, reported by `explain` (never the value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The mask's kind, as in `[REDACTED:<kind>]`.
    pub kind: String,
    /// Byte offsets in the input text.
    pub start: usize,
    /// Byte offset just past the masked span.
    pub end: usize,
    /// 1-based line of `start`.
    pub line: usize,
    /// 1-based column of `start`, in characters.
    pub column: usize,
}

/// Gathers what a [`Redactor`] masks beyond the built-in formats: known values, the home,
/// user rules.
#[derive(Default, Clone)]
pub struct RedactorBuilder {
    known: Vec<(String, String)>,
    home: Option<PathBuf>,
    checkouts: Vec<PathBuf>,
    user: UserRules,
}

/// Shows counts only: the builder holds secrets.
impl fmt::Debug for RedactorBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedactorBuilder")
            .field("known_values", &self.known.len())
            .field("home", &self.home.is_some())
            .field("checkouts", &self.checkouts.len())
            .field("user_rules", &self.user)
            .finish()
    }
}

impl RedactorBuilder {
    /// A secret value to mask wherever it appears, in any encoding, as `[REDACTED:<kind>]`.
    /// Values shorter than 8 characters or obviously not secret (`true`, `00000000`) are
    /// ignored; a multi-line value is also masked line by line.
    pub fn known_value(mut self, kind: &str, value: &str) -> Self {
        if !known::value_patterns(value).is_empty() {
            self.known.push((kind.to_owned(), value.to_owned()));
        }
        self
    }

    /// Takes the values of credential-like variables (`*TOKEN*`, `*SECRET*`, `*KEY*`, …, see
    /// `domain::secret_names`) from an environment, as kind `env-secret`.
    pub fn env_vars<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        for (name, value) in vars {
            if crate::domain::secret_names::looks_like_credential(name.as_ref()) {
                self = self.known_value("env-secret", value.as_ref());
            }
        }
        self
    }

    /// The user's home, shown as `~`.
    pub fn home_dir(mut self, home: &Path) -> Self {
        self.home = Some(home.to_path_buf());
        self
    }

    /// The user's own formats (config `[[redact.rules]]`), masked as `[REDACTED:<id>]`.
    pub fn user_rules(mut self, rules: UserRules) -> Self {
        self.user = rules;
        self
    }

    /// The redactor, its searchers compiled once.
    pub fn build(self) -> Redactor {
        let known = Arc::new(KnownSet::new(&self.known));
        let paths = PathSet::new(self.home.as_deref(), &self.checkouts);
        Redactor {
            inner: Arc::new(Inner {
                rules: Rules::new(known, paths, self.user),
                home: self.home,
                checkouts: self.checkouts,
            }),
        }
    }
}

/// Built once per process; cheap to clone and share between threads.
#[derive(Clone)]
pub struct Redactor {
    inner: Arc<Inner>,
}

struct Inner {
    rules: Rules,
    home: Option<PathBuf>,
    checkouts: Vec<PathBuf>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("known_patterns", &self.inner.rules.known.pattern_count())
            .field("path_patterns", &self.inner.rules.paths.patterns().len())
            .field("user_rules", &self.inner.rules.user)
            .finish()
    }
}

impl Default for Redactor {
    fn default() -> Self {
        RedactorBuilder::default().build()
    }
}

impl Redactor {
    /// A builder with nothing added yet: the built-in rules only.
    pub fn builder() -> RedactorBuilder {
        RedactorBuilder::default()
    }

    /// The same rules plus a run's checkout directory, which becomes `<checkout>`. Shares the
    /// known values; only the literal searcher is rebuilt (about 60 µs with 20 secrets).
    pub fn with_checkout(&self, dir: &Path) -> Redactor {
        let mut checkouts = self.inner.checkouts.clone();
        checkouts.push(dir.to_path_buf());
        let paths = PathSet::new(self.inner.home.as_deref(), &checkouts);
        let rules = Rules::new(Arc::clone(&self.inner.rules.known), paths, self.inner.rules.user.clone());
        Redactor { inner: Arc::new(Inner { rules, home: self.inner.home.clone(), checkouts }) }
    }

    /// The same rules plus `values` (kind, value) as known values: what one run is given
    /// (`env_passthrough`, a command's `env`), masked in its log and report in every form
    /// [`RedactorBuilder::known_value`] masks.
    pub fn with_known_values(&self, values: &[(String, String)]) -> Redactor {
        let mut all = self.inner.rules.known.values().to_vec();
        all.extend(values.iter().filter(|(_, v)| !known::value_patterns(v).is_empty()).cloned());
        let known = Arc::new(KnownSet::new(&all));
        let paths = PathSet::new(self.inner.home.as_deref(), &self.inner.checkouts);
        let rules = Rules::new(known, paths, self.inner.rules.user.clone());
        Redactor {
            inner: Arc::new(Inner { rules, home: self.inner.home.clone(), checkouts: self.inner.checkouts.clone() }),
        }
    }

    /// The same known values and paths with `rules` as the user rules (replacing any):
    /// how a process adds its config's rules to the redactor it built before reading it.
    pub fn with_user_rules(&self, rules: &UserRules) -> Redactor {
        let paths = PathSet::new(self.inner.home.as_deref(), &self.inner.checkouts);
        let rules = Rules::new(Arc::clone(&self.inner.rules.known), paths, rules.clone());
        Redactor {
            inner: Arc::new(Inner { rules, home: self.inner.home.clone(), checkouts: self.inner.checkouts.clone() }),
        }
    }

    /// The user rules in effect (config `[[redact.rules]]`).
    pub fn user_rules(&self) -> &UserRules {
        &self.inner.rules.user
    }

    /// The text with every secret and local path masked; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.run(text, false).0
    }

    /// Like `redact`, and also where each mask went and what kind it is.
    pub fn explain<'a>(&self, text: &'a str) -> (Cow<'a, str>, Vec<Finding>) {
        let (out, masked) = self.run(text, true);
        (out, self.findings(text, masked))
    }

    /// Bytes that may not be UTF-8 (invalid sequences become U+FFFD).
    pub fn redact_lossy(&self, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        self.redact(&text).into_owned()
    }

    /// Whole-text redaction runs the streaming segmenter over cache-sized blocks of the
    /// borrowed text: the same decisions as a stream (so the outputs agree), and every pass
    /// over a block finds it in cache.
    fn run<'a>(&self, text: &'a str, want_findings: bool) -> (Cow<'a, str>, Vec<Masked>) {
        self.run_in_blocks(text, want_findings, 256 * 1024)
    }

    fn run_in_blocks<'a>(&self, text: &'a str, want_findings: bool, block_size: usize) -> (Cow<'a, str>, Vec<Masked>) {
        let mut sink = Sink::new(text, want_findings);
        let (mut seg, mut scratch) = (Segmenter::default(), Scratch::default());
        let (mut base, mut block) = (0, block_size.max(1));
        loop {
            let mut end = (base + block).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let eof = end == text.len();
            sink.set_base(base);
            let consumed = self.inner.rules.process(&mut seg, &text[base..end], eof, &mut sink, &mut scratch);
            base += consumed;
            if eof {
                break;
            }
            sink.flush_to(base);
            // No complete unit fit (a long line, an open PEM block): look further ahead.
            block = if consumed == 0 { block * 2 } else { block_size.max(1) };
        }
        sink.finish(text.len())
    }

    fn findings(&self, text: &str, mut masked: Vec<Masked>) -> Vec<Finding> {
        masked.sort_by_key(|m| m.start);
        let bytes = text.as_bytes();
        let (mut line, mut line_start, mut scanned) = (1, 0, 0);
        masked
            .into_iter()
            .map(|m| {
                let start = m.start.min(text.len());
                for nl in memchr::memchr_iter(b'\n', &bytes[scanned..start]) {
                    line += 1;
                    line_start = scanned + nl + 1;
                }
                scanned = start;
                let column = text.get(line_start..start).map_or(1, |s| s.chars().count() + 1);
                Finding { kind: self.kind_name(m.kind).to_owned(), start: m.start, end: m.end, line, column }
            })
            .collect()
    }

    fn kind_name(&self, kind: Kind) -> &str {
        self.inner.rules.kind_name(kind)
    }

    /// Redacts every string in a JSON document in place, object keys included. A string
    /// under a credential-like key (`"password"`, `"apiKey"`) that looks like a secret is
    /// masked whole, since on its own it has no shape to recognise.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(new) = self.redact(s) {
                    *s = new;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            serde_json::Value::Object(map) => {
                for (key, mut v) in std::mem::take(map) {
                    self.redact_json(&mut v);
                    if let serde_json::Value::String(s) = &v
                        && let Some(rule) = generic::secret_under_key(&key, s)
                    {
                        v = serde_json::Value::String(rule.mask().to_owned());
                    }
                    map.insert(self.redact(&key).into_owned(), v);
                }
            }
            _ => {}
        }
    }

    /// What [`Redactor::redact_json`] would mask in the string `value` stored under the object
    /// key `key` (`None` for an array element): the kind of the first mask (`github-token`,
    /// `secret`, `home-dir`, …), never the value; `None` when it would keep `value` as it is.
    /// How a caller refuses input that a redacted file could not keep exactly.
    pub fn mask_kind(&self, key: Option<&str>, value: &str) -> Option<String> {
        let (out, findings) = self.explain(value);
        if let Some(first) = findings.first() {
            return Some(first.kind.clone());
        }
        if out != value {
            return Some("unknown".to_owned());
        }
        key.and_then(|key| generic::secret_under_key(key, value)).map(|rule| rule.name().to_owned())
    }

    /// A writer that redacts line by line into `out`; see [`StreamRedactor`].
    pub fn stream<W: Write>(&self, out: W) -> StreamRedactor<W> {
        StreamRedactor::new(self.clone(), out)
    }
}

/// The built-in formats by family, each as (family, row ids in table order): what docs/redaction.md
/// lists (`tests/redact_formats_doc.rs` keeps it equal).
pub fn format_catalogue() -> Vec<(&'static str, Vec<&'static str>)> {
    formats::FAMILIES.iter().map(|(family, rows)| (*family, rows.iter().map(|f| f.id).collect())).collect()
}

/// What `forgeloop redact --explain` prints: each mask's kind and position (byte offsets,
/// 1-based line and column), never the value, plus a count per kind.
pub fn explain_report(findings: &[Finding]) -> serde_json::Value {
    let mut by_kind = serde_json::Map::new();
    for f in findings {
        let count = by_kind.get(&f.kind).and_then(serde_json::Value::as_u64).unwrap_or(0);
        by_kind.insert(f.kind.clone(), serde_json::Value::from(count + 1));
    }
    serde_json::json!({
        "count": findings.len(),
        "by_kind": by_kind,
        "findings": findings
            .iter()
            .map(|f| serde_json::json!({
                "kind": f.kind,
                "start": f.start,
                "end": f.end,
                "line": f.line,
                "column": f.column,
            }))
            .collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_f4_token_and_user_path() {
        let r = Redactor::default();
        let out = r.redact("token ghp_abcdefghijklmnopqrstuvwxyz1234567890 /Users/kjun/private/file.txt");
        assert!(!out.contains("ghp_"), "{out}");
        assert!(!out.contains("/Users/"), "{out}");
        assert!(out.contains("[REDACTED"), "{out}");
        assert_eq!(out, "token [REDACTED:github-token] [LOCAL_PATH]/private/file.txt");
    }

    #[test]
    fn mask_kind_names_what_redact_json_would_mask() {
        let r = Redactor::builder().home_dir(Path::new("/home/dev")).build();
        let value: String = ["k9Xq2", "LmZ7v", "B4nR8", "tW3yH"].concat();
        assert_eq!(r.mask_kind(None, "pytest"), None);
        assert_eq!(r.mask_kind(None, &value), None, "a bare value has no shape");
        assert_eq!(r.mask_kind(Some("JWT_SECRET"), &value).as_deref(), Some("secret"));
        assert_eq!(r.mask_kind(None, &format!("--password={value}")).as_deref(), Some("password"));
        // Path kinds are the ones the commands check tells apart from secrets.
        let kind = r.mask_kind(None, "/home/dev/bin/x").unwrap();
        assert!(crate::domain::commands::is_local_path_kind(&kind), "{kind}");
        let kind = r.mask_kind(None, "/home/other/x").unwrap();
        assert!(crate::domain::commands::is_local_path_kind(&kind), "{kind}");
        let mut doc = serde_json::json!({"JWT_SECRET": value});
        r.redact_json(&mut doc);
        assert_ne!(doc["JWT_SECRET"], value.as_str());
    }

    /// Whole-text redaction works in blocks; any block size must give what one pass over
    /// the whole text gives, findings included.
    #[test]
    fn block_size_does_not_change_the_result() {
        let r = Redactor::builder()
            .known_value("github-token", "k9Xq2LmZ7vB4nR8tW3yH")
            .home_dir(Path::new("/home/dev"))
            .build()
            .with_checkout(Path::new("/tmp/run/checkout"));
        let texts = [
            "a /home/dev/x k9Xq2LmZ7vB4nR8tW3yH\nno secret here\n/tmp/run/checkout/src/a.rs:1\n".to_owned(),
            "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIBVQIBADANBgkq\nhkiG9w0BAQEFAASC\n-----END RSA PRIVATE KEY-----\ntail k9Xq2LmZ7vB4nR8tW3yH".to_owned(),
            format!("{}password = \"Xk9#mQ2$vL7pZ4\" {}\nend\n", "é".repeat(3000), "ab;".repeat(2000)),
            "\u{1b}[31mghp_abcdefghijklmnopqrstuvwxyz1234567890\u{1b}[0m\r\n".repeat(50),
        ];
        for text in &texts {
            let whole = r.run_in_blocks(text, true, usize::MAX / 2);
            for block in [1, 2, 7, 64, 1000, 4096] {
                assert_eq!(r.run_in_blocks(text, true, block), whole, "block {block}");
            }
        }
    }

    /// A provider's name inside an identifier, with a CamelCase value after it, is code
    /// (windows-sys: `etsy` inside `HalSetSystemInformation`); a real value there is masked.
    #[test]
    fn a_context_row_leaves_an_identifier_value_alone() {
        let r = Redactor::default();
        let code = "    pub HalSetSystemInformation: pHalSetSystemInformation,\n";
        assert_eq!(r.redact(code), code);
        let key = "k3x9q2m7v5b8n4w6z1r0t2y8";
        assert_eq!(r.redact(&format!("ETSY_TOKEN: {key}\n")), "ETSY_TOKEN: [REDACTED:etsy-token]\n");
    }

    /// Keyword searches restart after each hit's start: `npm_` does not hide `_auth`, and a new
    /// format's keyword (`dapi`) does not hide an older one (`apikey`).
    #[test]
    fn a_keyword_never_hides_one_that_starts_inside_it() {
        let r = Redactor::default();
        assert_eq!(r.redact("npm_auth = Zq8vN3kL7xB2mR5t"), "npm_auth = [REDACTED:secret]");
        assert_eq!(r.redact("sendapikey = Zq8vN3kL7xB2mR5t"), "sendapikey = [REDACTED:secret]");
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIBVQIBADANBgkq\n-----END RSA PRIVATE KEY-----";
        assert_eq!(r.redact(&format!("glpat-{pem}")), "glpat-[REDACTED:private-key]");
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let r = Redactor::default();
        assert!(matches!(r.redact("test result: ok. 3 passed; 0 failed\n"), Cow::Borrowed(_)));
        assert!(matches!(r.redact("let token = tokens.next();\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn explain_reports_positions_not_values() {
        let r = Redactor::builder().known_value("github-token", "k9Xq2LmZ7vB4nR8tW3yH").build();
        let text = "first line\n  push k9Xq2LmZ7vB4nR8tW3yH é /home/alice/x\n";
        let (out, findings) = r.explain(text);
        assert_eq!(out, "first line\n  push [REDACTED:github-token] é [LOCAL_PATH]/x\n");
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[0].kind, "github-token");
        assert_eq!((findings[0].line, findings[0].column), (2, 8));
        assert_eq!(&text[findings[0].start..findings[0].end], "k9Xq2LmZ7vB4nR8tW3yH");
        assert_eq!(findings[1].kind, "local-path");
        assert_eq!((findings[1].line, findings[1].column), (2, 31));
        let report = explain_report(&findings);
        assert_eq!(report["count"], 2);
        assert_eq!(report["by_kind"]["github-token"], 1);
        assert!(!report.to_string().contains("k9Xq2"));
    }

    #[test]
    fn json_values_under_secret_keys_are_masked() {
        let r = Redactor::default();
        let mut v = serde_json::json!({"password": "Xk9mQ2vL7pZ4", "user": "alice", "nested": [{"apiKey": "a8F3kL0pQz7Xw2Nv"}]});
        r.redact_json(&mut v);
        assert_eq!(v["password"], "[REDACTED:password]");
        assert_eq!(v["user"], "alice");
        assert_eq!(v["nested"][0]["apiKey"], "[REDACTED:secret]");
    }
}
