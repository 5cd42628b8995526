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

use super::kinds::{Cand, Kind};
use super::samples::{AWS_ID, B62, B64, B64URL, DIGITS, HEX, LOWER, Sample, Seed, UPPER};
use super::scan::{has_upper_and_lower, left_boundary};
use super::{generic, pem, shapes};

/// One secret format.
pub(crate) struct Format {
    /// Unique among built-in and user rules.
    pub(crate) id: &'static str,
    /// What the mask says (`[REDACTED:<kind>]`); several formats may share a kind.
    pub(crate) kind: &'static str,
    /// Case-sensitive literals (3 bytes or more); the pattern is tried only where one occurs.
    pub(crate) keywords: &'static [&'static str],
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
    /// A generated example, which must be masked as `kind`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) sample: fn(&mut Seed) -> Sample,
    /// Text close to the format that must be left alone: a wrong prefix, too short, a wrong
    /// alphabet, embedded in an identifier.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) near_misses: fn(&mut Seed) -> Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// Anchored at the keyword; capture group 1 (if any) is the secret.
    Regex(&'static str),
    Shape(Shape),
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
            Pattern::Regex(_) | Pattern::Shape(Shape::Jwt | Shape::Pem) => 1,
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
}

/// A regex row. Every constructor takes the sample and the near misses, so a row without
/// them cannot be written.
const fn regex(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    re: &'static str,
    sample: fn(&mut Seed) -> Sample,
    near_misses: fn(&mut Seed) -> Vec<String>,
) -> Format {
    Format {
        id,
        kind,
        keywords,
        pattern: Pattern::Regex(re),
        classes: Classes::Any,
        entropy: None,
        max_len: None,
        window: None,
        sample,
        near_misses,
    }
}

/// A row checked by a hand-written shape.
const fn shape(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    shape: Shape,
    sample: fn(&mut Seed) -> Sample,
    near_misses: fn(&mut Seed) -> Vec<String>,
) -> Format {
    Format {
        id,
        kind,
        keywords,
        pattern: Pattern::Shape(shape),
        classes: Classes::Any,
        entropy: None,
        max_len: None,
        window: None,
        sample,
        near_misses,
    }
}

/// Every built-in format. Order matters only between rows that find the same span: the
/// earlier row names it.
pub(crate) static FORMATS: &[Format] = &[
    Format {
        max_len: Some(251),
        ..regex(
            "github-classic-token",
            "github-token",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            r"(gh[pousr]_[A-Za-z0-9]{30,})(?:[^A-Za-z0-9]|\z)",
            |s| Sample::token(format!("{}{}", s.pick(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), s.mixed(B62, 36))),
            |s| {
                vec![
                    format!("ghx_{}", s.mixed(B62, 36)),
                    format!("ghp_{}", s.mixed(B62, 29)),
                    format!("ghp_{}", s.mixed(B62, 252)),
                    format!("ghp_{}-{}", s.mixed(B62, 20), s.mixed(B62, 16)),
                    format!("xghp_{}", s.mixed(B62, 36)),
                ]
            },
        )
    },
    Format {
        max_len: Some(244),
        ..regex(
            "github-fine-grained-token",
            "github-token",
            &["github_pat_"],
            r"(github_pat_[A-Za-z0-9_]{22,})(?:[^A-Za-z0-9_]|\z)",
            |s| Sample::token(format!("github_pat_{}_{}", s.mixed(B62, 22), s.mixed(B62, 59))),
            |s| {
                vec![
                    format!("github_pat_{}", s.mixed(B62, 21)),
                    format!("github_pad_{}_{}", s.mixed(B62, 22), s.mixed(B62, 59)),
                    format!("my_github_pat_{}_{}", s.mixed(B62, 22), s.mixed(B62, 59)),
                    format!("github_pat_{}-{}", s.mixed(B62, 12), s.mixed(B62, 40)),
                ]
            },
        )
    },
    Format {
        max_len: Some(247),
        ..regex(
            "stripe-key",
            "stripe-key",
            &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
            r"([sr]k_(?:live|test)_[A-Za-z0-9]{10,})(?:[^A-Za-z0-9]|\z)",
            |s| {
                let prefix = s.pick(&["sk_live_", "sk_test_", "rk_live_", "rk_test_"]);
                let len = 10 + s.below(100);
                Sample::token(format!("{prefix}{}", s.mixed(B62, len)))
            },
            |s| {
                vec![
                    format!("sk_prod_{}", s.mixed(B62, 24)),
                    format!("sk_live_{}", s.mixed(B62, 9)),
                    format!("sk_live_{}/{}", s.mixed(B62, 6), s.mixed(B62, 20)),
                    format!("task_live_{}", s.mixed(B62, 24)),
                ]
            },
        )
    },
    Format {
        max_len: Some(249),
        ..regex(
            "stripe-webhook-secret",
            "stripe-key",
            &["whsec_"],
            r"(whsec_[A-Za-z0-9]{24,})(?:[^A-Za-z0-9]|\z)",
            |s| Sample::token(format!("whsec_{}", s.mixed(B62, 32))),
            |s| {
                vec![
                    format!("whsec_{}", s.mixed(B62, 23)),
                    format!("whsek_{}", s.mixed(B62, 32)),
                    format!("xwhsec_{}", s.mixed(B62, 32)),
                ]
            },
        )
    },
    regex(
        "aws-access-key",
        "aws-access-key",
        &["AKIA", "ASIA"],
        r"((?:AKIA|ASIA)[A-Z0-9]{16})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("{}{}", s.pick(&["AKIA", "ASIA"]), s.chars(AWS_ID, 16))),
        |s| {
            vec![
                format!("AKIA{}", s.chars(AWS_ID, 15)),
                format!("AKIA{}", s.chars(AWS_ID, 17)),
                format!("AKIA{}", s.chars(LOWER, 16)),
                format!("AKIB{}", s.chars(AWS_ID, 16)),
                format!("XAKIA{}", s.chars(AWS_ID, 16)),
            ]
        },
    ),
    regex(
        "google-api-key",
        "google-api-key",
        &["AIza"],
        r"(AIza[A-Za-z0-9_-]{35})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("AIza{}", s.mixed(B64URL, 35))),
        |s| {
            vec![
                format!("AIza{}", s.mixed(B62, 34)),
                format!("AIza{}", s.mixed(B62, 36)),
                format!("AIzb{}", s.mixed(B62, 35)),
                format!("xAIza{}", s.mixed(B62, 35)),
            ]
        },
    ),
    Format {
        max_len: Some(2048),
        ..regex(
            "google-oauth-token",
            "google-oauth-token",
            &["ya29."],
            r"(ya29\.[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("ya29.{}", s.mixed(B64URL, 120))),
            |s| {
                vec![
                    format!("ya29.{}", s.mixed(B62, 19)),
                    format!("ya28.{}", s.mixed(B62, 120)),
                    format!("xya29.{}", s.mixed(B62, 120)),
                ]
            },
        )
    },
    regex(
        "google-client-secret",
        "google-client-secret",
        &["GOCSPX-"],
        r"(GOCSPX-[A-Za-z0-9_-]{24,40})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("GOCSPX-{}", s.mixed(B64URL, 28))),
        |s| {
            vec![
                format!("GOCSPX-{}", s.mixed(B62, 23)),
                format!("GOCSPX-{}", s.mixed(B62, 41)),
                format!("GOCSPY-{}", s.mixed(B62, 28)),
                format!("xGOCSPX-{}", s.mixed(B62, 28)),
            ]
        },
    ),
    Format {
        max_len: Some(250),
        ..regex(
            "slack-app-token",
            "slack-token",
            &["xapp-"],
            r"(xapp-[A-Za-z0-9-]{10,})(?:[^A-Za-z0-9-]|\z)",
            |s| {
                let app = s.chars(&format!("{UPPER}{DIGITS}"), 10);
                Sample::token(format!("xapp-1-A{app}-{}-{}", s.chars(DIGITS, 13), s.chars(HEX, 64)))
            },
            |s| {
                vec![
                    format!("xapp-{}", s.mixed(B62, 9)),
                    format!("xapq-1-A{}-{}", s.chars(DIGITS, 10), s.chars(HEX, 64)),
                    format!("myxapp-1-A{}-{}", s.chars(DIGITS, 10), s.chars(HEX, 64)),
                ]
            },
        )
    },
    // `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe.xoxp-…`; dots and dashes at the end
    // are punctuation, not token. A run is judged by its first 513 characters.
    Format {
        max_len: Some(514),
        window: Some(2 + 513),
        ..regex(
            "slack-token",
            "slack-token",
            &["xox"],
            r"(xox[abeoprs][.-][A-Za-z0-9.-]{9,}[A-Za-z0-9])[.-]*(?:[^A-Za-z0-9.-]|\z)",
            |s| {
                let kind = s.pick(&["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"]);
                Sample::token(format!("{kind}-{}-{}-{}", s.chars(DIGITS, 12), s.chars(DIGITS, 13), s.mixed(B62, 24)))
            },
            |s| {
                vec![
                    format!("xoxz-{}-{}", s.chars(DIGITS, 12), s.mixed(B62, 24)),
                    format!("xoxb-{}", s.mixed(B62, 8)),
                    format!("xoxb_{}-{}", s.chars(DIGITS, 12), s.mixed(B62, 24)),
                    format!("axoxb-{}-{}", s.chars(DIGITS, 12), s.mixed(B62, 24)),
                ]
            },
        )
    },
    // The path is the secret; the host stays readable.
    Format {
        max_len: Some(512),
        ..regex(
            "slack-webhook",
            "slack-webhook",
            &["hooks.slack.com"],
            r"hooks\.slack\.com/((?:services/|triggers/)[A-Za-z0-9_/+-]{11,}|workflows/[A-Za-z0-9_/+-]{10,})(?:[^A-Za-z0-9_/+-]|\z)",
            |s| {
                let path = format!("services/T{}/B{}/{}", s.chars(UPPER, 8), s.chars(UPPER, 10), s.mixed(B62, 24));
                Sample::carried(path.clone(), format!("https://hooks.slack.com/{path}"))
            },
            |s| {
                vec![
                    "https://hooks.slack.com/services/T1".to_owned(),
                    format!(
                        "https://hooks.slack.com/api/T{}/B{}/{}",
                        s.chars(UPPER, 8),
                        s.chars(UPPER, 10),
                        s.mixed(B62, 24)
                    ),
                    format!("https://hooks.slack.company/services/T{}/B{}", s.chars(UPPER, 8), s.chars(UPPER, 10)),
                ]
            },
        )
    },
    regex(
        "npm-token",
        "npm-token",
        &["npm_"],
        r"(npm_[A-Za-z0-9]{36,40})(?:[^A-Za-z0-9]|\z)",
        |s| Sample::token(format!("npm_{}", s.mixed(B62, 36))),
        |s| {
            vec![
                format!("npm_{}", s.mixed(B62, 35)),
                format!("npm_{}", s.mixed(B62, 41)),
                format!("npm-{}", s.mixed(B62, 36)),
                format!("xnpm_{}", s.mixed(B62, 36)),
            ]
        },
    ),
    Format {
        max_len: Some(4096),
        ..regex(
            "pypi-token",
            "pypi-token",
            &["pypi-AgEIcHlwaS5vcmc"],
            r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{16,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("pypi-AgEIcHlwaS5vcmc{}", s.mixed(B64URL, 70))),
            |s| {
                vec![
                    format!("pypi-AgEIcHlwaS5vcmc{}", s.mixed(B62, 15)),
                    format!("pypi-AgEIcHlwaS5vcmd{}", s.mixed(B62, 70)),
                    format!("xpypi-AgEIcHlwaS5vcmc{}", s.mixed(B62, 70)),
                ]
            },
        )
    },
    // With the optional `.01.xxxxxxx` suffix of the newer format: every `.` followed by a
    // letter or digit continues the token, 255 characters at most (judged on the first 256).
    Format {
        max_len: Some(255),
        window: Some(256),
        ..regex(
            "gitlab-token",
            "gitlab-token",
            &["glpat-", "gldt-", "glrt-", "glptt-"],
            r"(gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9][A-Za-z0-9_-]*)*)(?:[^A-Za-z0-9_.-]|\.[^A-Za-z0-9]|\.?\z)",
            |s| {
                let prefix = s.pick(&["glpat-", "gldt-", "glrt-", "glptt-"]);
                let len = 20 + s.below(20);
                let token = s.mixed(B64URL, len);
                let suffix = if s.below(2) == 0 { String::new() } else { format!(".01.{}", s.mixed(B62, 9)) };
                Sample::token(format!("{prefix}{token}{suffix}"))
            },
            |s| {
                vec![
                    format!("glpat-{}", s.mixed(B62, 19)),
                    format!("glpad-{}", s.mixed(B62, 20)),
                    format!("xglpat-{}", s.mixed(B62, 20)),
                ]
            },
        )
    },
    // Before the OpenAI rows, which also take `sk-ant-…` and must not name it.
    Format {
        max_len: Some(512),
        ..regex(
            "anthropic-key",
            "anthropic-key",
            &["sk-"],
            r"(sk-ant-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let kind = s.pick(&["api03", "oat01"]);
                Sample::token(format!("sk-ant-{kind}-{}AA", s.mixed(B64URL, 93)))
            },
            |s| {
                vec![
                    format!("sk-ant-{}", s.mixed(B62, 19)),
                    format!("sk-ant-{}", s.mixed(B62, 509)),
                    format!("xsk-ant-api03-{}", s.mixed(B62, 93)),
                ]
            },
        )
    },
    // Project, service-account and admin keys: up to 512 characters after the second dash.
    Format {
        max_len: Some("proj-".len() + 512),
        ..regex(
            "openai-project-key",
            "openai-key",
            &["sk-"],
            r"(sk-(?:proj|None)-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let kind = s.pick(&["proj", "None"]);
                let len = 20 + s.below(140);
                Sample::token(format!("sk-{kind}-{}", s.mixed(B64URL, len)))
            },
            |s| {
                vec![
                    format!("sk-proj-{}", s.mixed(B62, 19)),
                    format!("sk-proj-{}", s.mixed(B62, 513)),
                    format!("xsk-proj-{}", s.mixed(B62, 156)),
                ]
            },
        )
    },
    Format {
        max_len: Some("svcacct-".len() + 512),
        ..regex(
            "openai-service-account-key",
            "openai-key",
            &["sk-"],
            r"(sk-svcacct-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-svcacct-{}", s.mixed(B64URL, 80))),
            |s| {
                vec![
                    format!("sk-svcacct-{}", s.mixed(B62, 19)),
                    format!("sk-svcacct-{}", s.mixed(B62, 513)),
                    format!("mysk-svcacct-{}", s.mixed(B62, 80)),
                ]
            },
        )
    },
    Format {
        max_len: Some("admin-".len() + 512),
        ..regex(
            "openai-admin-key",
            "openai-key",
            &["sk-"],
            r"(sk-admin-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-admin-{}", s.mixed(B64URL, 60))),
            |s| {
                vec![
                    format!("sk-admin-{}", s.mixed(B62, 19)),
                    format!("sk-admin-{}", s.mixed(B62, 513)),
                    format!("xsk-admin-{}", s.mixed(B62, 60)),
                ]
            },
        )
    },
    Format {
        max_len: Some(512),
        ..regex(
            "openai-key",
            "openai-key",
            &["sk-"],
            r"(sk-[A-Za-z0-9]{32,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-{}T3BlbkFJ{}", s.mixed(B62, 20), s.mixed(B62, 20))),
            |s| {
                vec![
                    format!("sk-{}", s.mixed(B62, 31)),
                    format!("task-{}", s.mixed(B62, 40)),
                    format!("sk-{}_x", s.mixed(B62, 32)),
                ]
            },
        )
    },
    // Dashed keys that reuse `sk-`: mixed case and digits, as a package name
    // (`sk-learn-…`) never is.
    Format {
        max_len: Some(512),
        classes: Classes::UpperLowerDigit,
        ..regex(
            "openai-dashed-key",
            "openai-key",
            &["sk-"],
            r"(sk-[A-Za-z0-9_-]{40,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-{}-{}", s.mixed(B62, 20), s.mixed(B62, 25))),
            |s| {
                vec![
                    format!("sk-{}-{}", s.chars(LOWER, 20), s.chars(LOWER, 25)),
                    format!("sk-{}-{}", s.mixed(B62, 20), s.mixed(B62, 10)),
                    format!("xsk-{}-{}", s.mixed(B62, 20), s.mixed(B62, 25)),
                ]
            },
        )
    },
    // Mixed case: a lowercase-only run is an identifier (`hf_hub_download…`).
    Format {
        max_len: Some(64),
        classes: Classes::UpperAndLower,
        ..regex(
            "huggingface-token",
            "huggingface-token",
            &["hf_"],
            r"(hf_[A-Za-z0-9]{30,})(?:[^A-Za-z0-9]|\z)",
            |s| {
                let rest = s.chars(&format!("{UPPER}{LOWER}"), 32);
                Sample::token(format!("hf_{}{}{rest}", s.chars(UPPER, 1), s.chars(LOWER, 1)))
            },
            |s| {
                vec![
                    format!("hf_{}", s.chars(LOWER, 34)),
                    format!("hf_{}", s.mixed(B62, 29)),
                    format!("xhf_{}", s.mixed(B62, 34)),
                ]
            },
        )
    },
    // Databricks personal access tokens: 32 hex digits, sometimes a `-N` suffix.
    regex(
        "databricks-token",
        "databricks-token",
        &["dapi"],
        r"(dapi[0-9a-f]{32}(?:-[0-9])?)(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let suffix = if s.below(2) == 0 { String::new() } else { format!("-{}", s.below(10)) };
            Sample::token(format!("dapi{}{suffix}", s.chars(HEX, 32)))
        },
        |s| {
            vec![
                format!("dapi{}", s.chars(HEX, 31)),
                format!("dapi{}", s.chars(HEX, 33)),
                format!("dapi{}", s.chars(UPPER, 32)),
                format!("dapl{}", s.chars(HEX, 32)),
                format!("rapidapi{}", s.chars(HEX, 32)),
            ]
        },
    ),
    // Doppler personal, CLI, service (with an optional config slug), service-account, SCIM
    // and audit tokens. One three-byte keyword (`dp.`, in the short searcher) rather than
    // six prefixes in the long one.
    regex(
        "doppler-token",
        "doppler-token",
        &["dp."],
        r"(dp\.(?:pt|ct|sa|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44})(?:[^A-Za-z0-9_]|\z)",
        |s| {
            let kind = s.pick(&["pt", "ct", "sa", "scim", "audit", "st", "st.prd", "st.dev_eu"]);
            Sample::token(format!("dp.{kind}.{}", s.mixed(B62, 43)))
        },
        |s| {
            vec![
                format!("dp.pt.{}", s.mixed(B62, 39)),
                format!("dp.pt.{}", s.mixed(B62, 45)),
                format!("dp.xx.{}", s.mixed(B62, 43)),
                format!("dp.pt.{}-{}", s.mixed(B62, 20), s.mixed(B62, 23)),
                format!("udp.pt.{}", s.mixed(B62, 43)),
            ]
        },
    ),
    shape(
        "jwt",
        "jwt",
        &[".eyJ"],
        Shape::Jwt,
        |s| {
            let header = b64url_json("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
            let iat = 1_700_000_000 + s.below(1000);
            let payload = b64url_json(&format!("{{\"sub\":\"{}\",\"iat\":{iat}}}", s.mixed(B62, 12)));
            Sample::token(format!("{header}.{payload}.{}", s.mixed(B64URL, 43)))
        },
        |s| {
            let header = b64url_json("{\"alg\":\"HS256\"}");
            vec![
                header.clone(),
                format!("{header}.eyJ{}", s.mixed(B62, 5)),
                format!("x{header}.eyJ{}", s.mixed(B62, 30)),
            ]
        },
    ),
    shape(
        "private-key",
        "private-key",
        &["-----BEGIN"],
        Shape::Pem,
        |s| {
            let label = s.pick(&["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"]);
            let pem = pem_block(s, label, 6);
            Sample::carried(pem.clone(), pem)
        },
        |s| vec![pem_block(s, "PUBLIC KEY", 4), pem_block(s, "CERTIFICATE", 4)],
    ),
    shape(
        "url-credentials",
        "url-credentials",
        &["://"],
        Shape::UrlCredentials,
        |s| {
            let password = s.mixed(&format!("{B62}!*-_.~"), 18);
            Sample::carried(password.clone(), format!("https://deploy:{password}@git.example.com/acme/widget.git"))
        },
        |_| {
            vec![
                "https://deploy:${DEPLOY_PASSWORD}@git.example.com/acme/widget.git".to_owned(),
                "https://git.example.com/acme/widget.git".to_owned(),
                "https://deploy@git.example.com/acme/widget.git".to_owned(),
            ]
        },
    ),
    shape(
        "authorization-header",
        "authorization",
        &["uthorization", "UTHORIZATION"],
        Shape::AuthorizationHeader,
        |s| {
            let token = s.chars(HEX, 40);
            Sample::carried(token.clone(), format!("Authorization: token {token}"))
        },
        |_| {
            vec![
                "Authorization: Bearer ${TOKEN}".to_owned(),
                "Authorization: token abc".to_owned(),
                "the authorization header is required".to_owned(),
            ]
        },
    ),
    shape(
        "bearer-token",
        "authorization",
        &["Bearer", "bearer", "BEARER"],
        Shape::Bearer,
        |s| {
            let token = s.mixed(B64URL, 40);
            Sample::carried(token.clone(), format!("Bearer {token}"))
        },
        |s| {
            vec![
                "bearer authentication".to_owned(),
                "Bearer abcdefghij".to_owned(),
                format!("xBearer {}", s.mixed(B64URL, 40)),
            ]
        },
    ),
    // The kind comes from the name (`password`, `aws-secret-key`, else `secret`); the floor
    // (3 bits per byte, no placeholder, no code) is `generic::looks_secret`. Keywords are in
    // the spellings identifiers use (snake_case, SCREAMING_CASE, camelCase/PascalCase);
    // `"auth"` is a JSON key (Docker's `config.json`).
    shape(
        "generic-assignment",
        "secret",
        &[
            "token",
            "TOKEN",
            "Token",
            "secret",
            "SECRET",
            "Secret",
            "passw",
            "PASSW",
            "Passw",
            "passphrase",
            "PASSPHRASE",
            "_key",
            "_KEY",
            "-key",
            "-KEY",
            "apikey",
            "APIKEY",
            "credential",
            "CREDENTIAL",
            "Credential",
            "cookie",
            "COOKIE",
            "Cookie",
            "_auth",
            "_AUTH",
            "\"auth\"",
            "Key",
        ],
        Shape::Assignment,
        |s| {
            let value = s.mixed(B62, 20);
            Sample::carried(value.clone(), format!("client_secret: {value}"))
        },
        |_| {
            vec![
                "client_secret: ${CLIENT_SECRET}".to_owned(),
                "secret = changeme".to_owned(),
                "max_tokens = 4096".to_owned(),
                "secret_key = settings.SECRET_KEY".to_owned(),
            ]
        },
    ),
];

fn b64url_json(json: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

fn pem_block(s: &mut Seed, label: &str, lines: usize) -> String {
    let mut pem = format!("-----BEGIN {label}-----\n");
    for _ in 0..lines {
        pem.push_str(&s.chars(B64, 64));
        pem.push('\n');
    }
    pem.push_str(&s.chars(B64, 20));
    pem.push_str("==\n");
    pem.push_str(&format!("-----END {label}-----"));
    pem
}

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
        }
    }

    /// The constructors take a sample and near misses, so no row lacks them; this checks
    /// that none is empty either.
    #[test]
    fn every_row_has_a_sample_and_near_misses() {
        let mut seed = Seed::new(1);
        for f in FORMATS {
            let sample = (f.sample)(&mut seed);
            assert!(!sample.secret.is_empty() && sample.text.contains(&sample.secret), "{}", f.id);
            assert!(!(f.near_misses)(&mut seed).is_empty(), "{} has no near misses", f.id);
        }
    }

    #[test]
    fn every_sample_is_masked_as_its_kind_and_no_near_miss_is() {
        let r = Redactor::default();
        for n in 0..24 {
            let mut seed = Seed::new(n);
            for f in FORMATS {
                let sample = (f.sample)(&mut seed);
                let mask = format!("[REDACTED:{}]", f.kind);
                for text in [sample.text.clone(), format!("before {} after\n", sample.text)] {
                    let out = r.redact(&text);
                    assert!(!out.contains(&sample.secret), "{}: {text:?} -> {out:?}", f.id);
                    assert!(out.contains(&mask), "{}: expected {mask} in {out:?}", f.id);
                    assert_eq!(r.redact(&out), out, "{}: not idempotent", f.id);
                }
                for miss in (f.near_misses)(&mut seed) {
                    assert_eq!(r.redact(&miss), miss, "{}: near miss {miss:?} was masked", f.id);
                }
            }
        }
    }
}
