//! User rules: an organisation's own token formats, from config (`[[redact.rules]]`, the
//! gitleaks shape). Each is checked where one of its keywords occurs (any case), by a regex
//! anchored there; the first capture group (or the whole match) is masked as
//! `[REDACTED:<id>]`, if it starts on a token boundary and clears the rule's entropy floor.
//! Rules are validated when they are compiled, with an error that names the rule.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer};

use super::Redactor;
use super::formats::{Checks, FORMATS};
use super::kinds::Named;
use super::table::{Action, Prefilter, RowRegex};

/// One rule as written in config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Names the rule in masks and `--explain`: lowercase letters, digits and `-`.
    pub id: String,
    /// Tried where a keyword starts, anchored there; ASCII classes (`\w`, `\b`, `(?i)` are
    /// ASCII).
    pub regex: String,
    /// Literals (3 characters or more, any case) of which one starts every match.
    pub keywords: Vec<String>,
    /// Minimum Shannon entropy of the masked text, in bits per character (0 to 8).
    #[serde(default)]
    pub entropy: Option<f64>,
}

/// Why a rule was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    /// The id is not a short lowercase dashed name.
    #[error(
        "redact rule {id:?}: the id must be 1 to 40 lowercase letters, digits and single dashes, from a letter to a letter or digit"
    )]
    BadId {
        /// The rule's id as written.
        id: String,
    },
    /// The id names a built-in format.
    #[error("redact rule {id:?}: the id is taken by a built-in rule")]
    BuiltinId {
        /// The rule's id.
        id: String,
    },
    /// Two rules share an id.
    #[error("redact rule {id:?}: the id is used by an earlier rule")]
    DuplicateId {
        /// The repeated id.
        id: String,
    },
    /// The rule lists no keyword, so it could never be tried.
    #[error("redact rule {id:?}: needs at least one keyword")]
    NoKeywords {
        /// The rule's id.
        id: String,
    },
    /// A keyword too short to find matches cheaply.
    #[error("redact rule {id:?}: keyword {keyword:?} is shorter than 3 characters")]
    ShortKeyword {
        /// The rule's id.
        id: String,
        /// The short keyword.
        keyword: String,
    },
    /// The regex does not compile, or cannot be anchored at a keyword.
    #[error("redact rule {id:?}: the regex does not compile: {reason}")]
    BadRegex {
        /// The rule's id.
        id: String,
        /// The regex engine's message.
        reason: String,
    },
    /// The entropy floor is outside 0 to 8 bits per character.
    #[error("redact rule {id:?}: entropy must be between 0 and 8 bits per character, not {entropy}")]
    BadEntropy {
        /// The rule's id.
        id: String,
        /// The floor given.
        entropy: f64,
    },
    /// The rule's own mask would be masked again, so redacting twice would change the text.
    #[error("redact rule {id:?}: its mask [REDACTED:{id}] would itself be masked; choose another id")]
    MaskIsMasked {
        /// The rule's id.
        id: String,
    },
    /// More rules than the table can number (65,535).
    #[error("at most {} redact rules", u16::MAX)]
    TooMany,
}

/// Validated, compiled user rules; cheap to clone. Empty by default.
#[derive(Clone, Default)]
pub struct UserRules {
    set: Option<Arc<UserSet>>,
}

pub(crate) struct UserSet {
    specs: Vec<RuleSpec>,
    rules: Vec<UserRule>,
    pub(crate) prefilter: Prefilter,
}

struct UserRule {
    mask: String,
    regex: RowRegex,
    entropy: Option<f64>,
}

impl UserRules {
    /// Checks and compiles `specs`; the first bad rule is the error.
    pub fn compile(specs: &[RuleSpec]) -> Result<UserRules, RuleError> {
        if specs.is_empty() {
            return Ok(UserRules::default());
        }
        if specs.len() > usize::from(u16::MAX) {
            return Err(RuleError::TooMany);
        }
        let mut rules = Vec::with_capacity(specs.len());
        let mut keywords: Vec<(&str, bool, Action)> = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let id = spec.id.clone();
            if !valid_id(&spec.id) {
                return Err(RuleError::BadId { id });
            }
            if is_builtin_id(&spec.id) {
                return Err(RuleError::BuiltinId { id });
            }
            if specs[..i].iter().any(|s| s.id == spec.id) {
                return Err(RuleError::DuplicateId { id });
            }
            if spec.keywords.is_empty() {
                return Err(RuleError::NoKeywords { id });
            }
            if let Some(short) = spec.keywords.iter().find(|k| k.len() < 3) {
                return Err(RuleError::ShortKeyword { id, keyword: short.clone() });
            }
            if let Some(entropy) = spec.entropy.filter(|e| !(0.0..=8.0).contains(e)) {
                return Err(RuleError::BadEntropy { id, entropy });
            }
            let regex = RowRegex::compile(&spec.regex, true).map_err(|e| RuleError::BadRegex {
                id: id.clone(),
                // The message about the rule's own text, not the anchored form compiled.
                reason: match regex::bytes::RegexBuilder::new(&spec.regex).unicode(false).build() {
                    Err(own) => own.to_string(),
                    Ok(_) => format!("it cannot be anchored at its keyword: {e}"),
                },
            })?;
            let Ok(row) = u16::try_from(i) else { return Err(RuleError::TooMany) };
            keywords.extend(spec.keywords.iter().map(|k| (k.as_str(), true, Action::Row(row))));
            rules.push(UserRule { mask: format!("[REDACTED:{id}]"), regex, entropy: spec.entropy });
        }
        // Teddy over a folded copy of the text while a few passes take the keywords (it is
        // faster per pass); past that, one pass like the built-in table's.
        let mut prefilter = Prefilter::new(&keywords);
        if prefilter.lanes.len() > 2
            && let Some(one) = Prefilter::single_pass(&keywords)
        {
            prefilter = one;
        }
        let compiled = UserRules { set: Some(Arc::new(UserSet { specs: specs.to_vec(), rules, prefilter })) };
        // Redacting twice must change nothing, so no mask may look like a secret.
        let redactor = Redactor::builder().user_rules(compiled.clone()).build();
        for spec in specs {
            let mask = format!("[REDACTED:{}]", spec.id);
            if redactor.redact(&mask) != mask {
                return Err(RuleError::MaskIsMasked { id: spec.id.clone() });
            }
        }
        Ok(compiled)
    }

    /// No user rule is configured.
    pub fn is_empty(&self) -> bool {
        self.set.is_none()
    }

    /// The rules as written.
    pub fn specs(&self) -> &[RuleSpec] {
        self.set.as_ref().map_or(&[], |s| s.specs.as_slice())
    }

    pub(crate) fn set(&self) -> Option<&UserSet> {
        self.set.as_deref()
    }
}

impl UserSet {
    /// The secret rule `row` finds at keyword `[s, e)`.
    pub(crate) fn find(&self, row: u16, t: &[u8], s: usize, e: usize) -> Option<(usize, usize)> {
        let rule = self.rules.get(row as usize)?;
        rule.regex.find(t, s, e, Checks { entropy: rule.entropy, ..Checks::NONE })
    }

    pub(crate) fn name(&self, row: u16) -> &str {
        self.specs.get(row as usize).map_or("secret", |s| s.id.as_str())
    }

    pub(crate) fn mask(&self, row: u16) -> &str {
        self.rules.get(row as usize).map_or("[REDACTED:secret]", |r| r.mask.as_str())
    }
}

/// What a mask may say: lowercase letters, digits and single dashes, starting with a letter,
/// so a mask never looks like a key, an assignment or a path.
fn valid_id(id: &str) -> bool {
    (1..=40).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && !id.ends_with('-')
        && !id.contains("--")
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Built-in row ids and kind names (and the known values' kinds) cannot be reused: a mask
/// must say which rule made it.
fn is_builtin_id(id: &str) -> bool {
    FORMATS.iter().any(|f| f.id == id || f.kind == id)
        || Named::ALL.iter().any(|n| n.name() == id)
        || id == "env-secret"
}

impl PartialEq for UserRules {
    fn eq(&self, other: &UserRules) -> bool {
        self.specs() == other.specs()
    }
}

impl fmt::Debug for UserRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.specs().iter().map(|s| &s.id)).finish()
    }
}

/// Config holds compiled rules: a bad rule fails the load, with the rule named.
impl<'de> Deserialize<'de> for UserRules {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UserRules, D::Error> {
        let specs = Vec::<RuleSpec>::deserialize(deserializer)?;
        UserRules::compile(&specs).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, regex: &str, keywords: &[&str]) -> RuleSpec {
        RuleSpec {
            id: id.to_owned(),
            regex: regex.to_owned(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            entropy: None,
        }
    }

    #[test]
    fn bad_rules_are_refused_by_name() {
        let cases = [
            (spec("Acme", "acme_[a-z]{8}", &["acme_"]), "the id must be"),
            (spec("acme", "acme_[a-z]{8}", &[]), "needs at least one keyword"),
            (spec("acme", "acme_[a-z]{8}", &["ac"]), "shorter than 3"),
            (spec("acme", "acme_[a-z", &["acme_"]), "does not compile"),
            (spec("github-token", "acme_[a-z]{8}", &["acme_"]), "taken by a built-in"),
            (spec("private-key", "acme_[a-z]{8}", &["acme_"]), "taken by a built-in"),
            (RuleSpec { entropy: Some(9.0), ..spec("acme", "acme_[a-z]{8}", &["acme_"]) }, "entropy"),
        ];
        for (spec, expected) in cases {
            let err = UserRules::compile(std::slice::from_ref(&spec)).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
            assert!(err.contains(&format!("{:?}", spec.id)), "{err}");
        }
        let twice = [spec("acme", "acme_[a-z]{8}", &["acme_"]), spec("acme", "acme_[0-9]{8}", &["acme_"])];
        assert!(matches!(UserRules::compile(&twice), Err(RuleError::DuplicateId { .. })));
    }

    #[test]
    fn a_mask_that_would_be_masked_is_refused() {
        let id = format!("sk-ant-{}", "a".repeat(30));
        let err = UserRules::compile(&[spec(&id, "acme_[a-z]{8}", &["acme_"])]).unwrap_err();
        assert!(matches!(err, RuleError::MaskIsMasked { .. }), "{err}");
        let err = UserRules::compile(&[spec("acme-tok", r"acme-[a-z]{3}", &["acme-"])]).unwrap_err();
        assert!(matches!(err, RuleError::MaskIsMasked { .. }), "{err}");
    }

    fn acme() -> Redactor {
        let rules = UserRules::compile(&[
            RuleSpec { entropy: Some(3.0), ..spec("acme-token", r"(acme_[A-Za-z0-9]{32})\b", &["acme_"]) },
            spec("corp-secret", r"corp(?:_|-)key\s*[:=]\s*([A-Za-z0-9/+]{20,})", &["corp_key", "corp-key"]),
        ])
        .unwrap();
        Redactor::builder().user_rules(rules).build()
    }

    const TOKEN: &str = "k9Xq2LmZ7vB4nR8tW3yHk9Xq2LmZ7vB4";

    #[test]
    fn many_rules_share_one_pass_and_still_match_in_any_case() {
        let specs: Vec<RuleSpec> = (0..200)
            .map(|i| spec(&format!("org-{i}"), &format!(r"(org{i}x_[A-Za-z0-9]{{32}})\b"), &[&format!("org{i}x_")]))
            .collect();
        let rules = UserRules::compile(&specs).unwrap();
        let set = rules.set().unwrap();
        assert_eq!(set.prefilter.lanes.len(), 1, "200 keywords in one pass");
        let r = Redactor::builder().user_rules(rules).build();
        assert_eq!(r.redact(&format!("a org137x_{TOKEN} b")), "a [REDACTED:org-137] b");
        // The keyword matches in any case; this regex does not.
        assert_eq!(r.redact(&format!("ORG137X_{TOKEN}")), format!("ORG137X_{TOKEN}"));
        // A few rules keep Teddy, over a folded copy.
        let few = UserRules::compile(&specs[..3]).unwrap();
        assert!(few.set().unwrap().prefilter.lanes.iter().all(|l| l.folded));
    }

    #[test]
    fn user_rules_mask_as_their_id() {
        let r = acme();
        assert_eq!(r.redact(&format!("push acme_{TOKEN} done")), "push [REDACTED:acme-token] done");
        // The first group is the secret; keywords match in any case, the regex decides.
        assert_eq!(r.redact(&format!("ACME_{TOKEN}")), format!("ACME_{TOKEN}"));
        assert_eq!(r.redact("corp_key = Zq8vN3kL7xB2mR5tW9pQ\n"), "corp_key = [REDACTED:corp-secret]\n");
        // Over the generic rule, which also sees `-key`.
        assert_eq!(r.redact("MY_corp-key: Zq8vN3kL7xB2mR5tW9pQ"), "MY_corp-key: [REDACTED:corp-secret]");
        let (_, findings) = r.explain(&format!("x\n  acme_{TOKEN}"));
        assert_eq!((findings[0].kind.as_str(), findings[0].line, findings[0].column), ("acme-token", 2, 3));
    }

    #[test]
    fn user_rules_keep_boundaries_and_entropy_floors() {
        let r = acme();
        for text in [
            format!("xacme_{TOKEN}"),
            format!("acme_{TOKEN}Z"),
            format!("acme_{}", &TOKEN[..31]),
            format!("acme_{}", "a".repeat(32)),
            "acme_ is our prefix".to_owned(),
        ] {
            assert_eq!(r.redact(&text), text);
        }
    }

    #[test]
    fn a_regex_is_tried_only_where_a_keyword_starts() {
        let rules = UserRules::compile(&[
            spec("deploy-key", r"(acme_[A-Za-z0-9]{32})", &["deploy"]),
            spec("whole-match", r"zeta_\w{8}\b", &["zeta_"]),
        ])
        .unwrap();
        let r = Redactor::builder().user_rules(rules).build();
        // The keyword is there, but the regex does not match where it starts.
        let text = format!("deploy acme_{TOKEN}");
        assert_eq!(r.redact(&text), text);
        // Without a capture group the whole match goes; `\w` is ASCII.
        assert_eq!(r.redact("zeta_Ab3dE6gH done"), "[REDACTED:whole-match] done");
        assert_eq!(r.redact("zeta_Ab3dé6gH"), "zeta_Ab3dé6gH");
    }

    #[test]
    fn user_rules_survive_with_checkout_and_streams() {
        let r = acme().with_checkout(std::path::Path::new("/tmp/run/checkout"));
        let text = format!("/tmp/run/checkout/a.rs: acme_{TOKEN}\n");
        assert_eq!(r.redact(&text), "<checkout>/a.rs: [REDACTED:acme-token]\n");
        let mut stream = r.stream(Vec::new());
        for chunk in text.as_bytes().chunks(7) {
            std::io::Write::write_all(&mut stream, chunk).unwrap();
        }
        assert_eq!(String::from_utf8(stream.finish().unwrap()).unwrap(), r.redact(&text));
        assert_eq!(r.redact(&r.redact(&text)), r.redact(&text));
    }

    #[test]
    fn a_built_in_format_names_a_span_a_user_rule_also_finds() {
        let rules = UserRules::compile(&[spec("ghp-copy", r"(ghp_[A-Za-z0-9]{36})", &["ghp_"])]).unwrap();
        let r = Redactor::builder().user_rules(rules).build();
        assert_eq!(r.redact(&format!("ghp_{}AbCd", TOKEN)), "[REDACTED:github-token]");
    }

    #[test]
    fn a_regex_error_quotes_the_rule_not_the_anchored_form() {
        let err = UserRules::compile(&[spec("acme", "acme_(x", &["acme_"])]).unwrap_err().to_string();
        assert!(!err.contains(r"\A"), "{err}");
    }
}
