//! The kinds of span the redactor masks: each kind's name (what `--explain` and the masks
//! show), its mask and its priority when spans overlap; and the candidate span every rule
//! reports. Every rule module depends on this one, never on the engine.

/// What a masked span is: a known value (with the kind its caller gave) or a built-in rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Known(u16),
    Rule(Rule),
}

impl Kind {
    pub(crate) fn priority(self) -> u8 {
        match self {
            Kind::Known(_) => 0,
            Kind::Rule(rule) => rule.priority(),
        }
    }
}

/// A span a rule wants masked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cand {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

/// A built-in rule's kind. Known values carry the kind their caller gave instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Rule {
    GithubToken,
    OpenaiKey,
    AnthropicKey,
    AwsAccessKey,
    AwsSecretKey,
    GoogleApiKey,
    GoogleOauthToken,
    GoogleClientSecret,
    SlackToken,
    SlackWebhook,
    StripeKey,
    NpmToken,
    PypiToken,
    GitlabToken,
    HuggingfaceToken,
    Jwt,
    PrivateKey,
    UrlCredentials,
    Authorization,
    Password,
    Secret,
    CheckoutDir,
    HomeDir,
    LocalPath,
}

macro_rules! rule_table {
    ($($rule:ident => $name:literal, $prio:literal;)*) => {
        impl Rule {
            pub(crate) fn name(self) -> &'static str {
                match self { $(Rule::$rule => $name,)* }
            }
            /// Lower wins when spans of different kinds overlap: a specific format names the
            /// merged span better than the generic rule, and any secret beats a path.
            pub(crate) fn priority(self) -> u8 {
                match self { $(Rule::$rule => $prio,)* }
            }
            fn redacted_mask(self) -> &'static str {
                match self { $(Rule::$rule => concat!("[REDACTED:", $name, "]"),)* }
            }
        }
        /// Every kind name a built-in rule can report, for documentation and `--explain`.
        /// Known values use the kind their caller registered (`github-token`, `env-secret`, …).
        pub const RULE_KINDS: &[&str] = &[$($name,)*];
    };
}

rule_table! {
    GithubToken => "github-token", 1;
    OpenaiKey => "openai-key", 1;
    AnthropicKey => "anthropic-key", 1;
    AwsAccessKey => "aws-access-key", 1;
    AwsSecretKey => "aws-secret-key", 1;
    GoogleApiKey => "google-api-key", 1;
    GoogleOauthToken => "google-oauth-token", 1;
    GoogleClientSecret => "google-client-secret", 1;
    SlackToken => "slack-token", 1;
    SlackWebhook => "slack-webhook", 1;
    StripeKey => "stripe-key", 1;
    NpmToken => "npm-token", 1;
    PypiToken => "pypi-token", 1;
    GitlabToken => "gitlab-token", 1;
    HuggingfaceToken => "huggingface-token", 1;
    Jwt => "jwt", 1;
    PrivateKey => "private-key", 1;
    UrlCredentials => "url-credentials", 2;
    Authorization => "authorization", 2;
    Password => "password", 3;
    Secret => "secret", 3;
    CheckoutDir => "checkout-dir", 4;
    HomeDir => "home-dir", 5;
    LocalPath => "local-path", 6;
}

impl Rule {
    /// What replaces the span. Paths keep their shape so `file:line` stays readable.
    pub(crate) fn mask(self) -> &'static str {
        match self {
            Rule::CheckoutDir => "<checkout>",
            Rule::HomeDir => "~",
            Rule::LocalPath => "[LOCAL_PATH]",
            other => other.redacted_mask(),
        }
    }
}

/// Makes a caller's kind safe to put in a mask: lowercase ASCII letters, digits and `-`, so
/// a mask can never itself look like a key, an assignment or a path.
pub(crate) fn sanitize_kind(kind: &str) -> String {
    let mut out: String =
        kind.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(40).collect();
    while out.starts_with('-') {
        out.remove(0);
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() { "secret".to_owned() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_name_the_kind() {
        assert_eq!(Rule::GithubToken.mask(), "[REDACTED:github-token]");
        assert_eq!(Rule::LocalPath.mask(), "[LOCAL_PATH]");
        assert!(RULE_KINDS.contains(&"private-key"));
    }

    #[test]
    fn kinds_are_sanitized() {
        assert_eq!(sanitize_kind("GitHub Token"), "github-token");
        assert_eq!(sanitize_kind("token = x]"), "token---x");
        assert_eq!(sanitize_kind("::"), "secret");
    }
}
