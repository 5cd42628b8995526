//! Registry keys (design §12.5): `owner/repo`, lowercased, naming the record file
//! `<registry>/<owner>/<repo>.json`.
//!
//! The input must be exactly a GitHub `OWNER/REPO` ([`RepoName`]'s rules: no dot-only
//! names, no leading `-`, length limits) and, as in the reference tool, each side must
//! start with a letter or digit. That last rule also guarantees a key can never name a
//! hidden file, so it can never collide with a temp file (`.NAME.tmp-…`) or a lock.

use std::fmt;

use crate::domain::pr_ref::RepoName;

/// Why a text is not a registry key, in GitHub's own rules (owners never have a `.`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a GitHub owner/repo: {reason}")]
pub struct KeyError {
    /// The text refused.
    pub text: String,
    /// The rule it breaks.
    pub reason: String,
}

/// A lowercase `owner/repo` that is safe to use as two path components.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoKey {
    owner: String,
    repo: String,
}

impl RepoKey {
    /// Parses the exact text: surrounding whitespace or control characters are refused,
    /// not trimmed, so what is stored is what was asked for.
    pub fn parse(text: &str) -> Result<RepoKey, KeyError> {
        let err = |reason: String| KeyError { text: text.to_owned(), reason };
        if text.trim() != text {
            return Err(err("it has surrounding whitespace or control characters".into()));
        }
        let Some((owner, repo)) = text.split_once('/').filter(|(_, repo)| !repo.contains('/')) else {
            return Err(err("expected exactly one '/' between the owner and the repository".into()));
        };
        if let Some(reason) = owner_problem(owner) {
            return Err(err(format!("the owner {reason}")));
        }
        if let Some(reason) = repo_problem(repo) {
            return Err(err(format!("the repository name {reason}")));
        }
        let name = RepoName::parse(text).map_err(|e| err(e.to_string()))?;
        Ok(RepoKey { owner: name.owner().to_ascii_lowercase(), repo: name.name().to_ascii_lowercase() })
    }

    /// The owner, lowercase.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The repository's name, lowercase.
    pub fn repo(&self) -> &str {
        &self.repo
    }
}

/// GitHub's owner rule, said precisely: 1-39 ASCII letters, digits, `-` or `_` (no `.`),
/// starting with a letter or digit.
fn owner_problem(owner: &str) -> Option<String> {
    if owner.is_empty() {
        return Some("is empty".into());
    }
    if owner.len() > MAX_OWNER {
        return Some(format!("is {} characters long; GitHub allows at most {MAX_OWNER}", owner.len()));
    }
    if owner.contains('.') {
        return Some("contains '.', which GitHub never allows in an owner (only in a repository name)".into());
    }
    if let Some(bad) = owner.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return Some(format!("contains {bad:?}; owners use only ASCII letters, digits, '-' and '_'"));
    }
    if !owner.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some("must start with a letter or digit".into());
    }
    None
}

/// GitHub's repository rule: 1-100 ASCII letters, digits, `.`, `-` or `_`, starting with a
/// letter or digit here (which also keeps keys from naming hidden files).
fn repo_problem(repo: &str) -> Option<String> {
    if repo.is_empty() {
        return Some("is empty".into());
    }
    if repo.len() > MAX_REPO {
        return Some(format!("is {} characters long; GitHub allows at most {MAX_REPO}", repo.len()));
    }
    if let Some(bad) = repo.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
        return Some(format!("contains {bad:?}; names use only ASCII letters, digits, '.', '-' and '_'"));
    }
    if !repo.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some("must start with a letter or digit".into());
    }
    None
}

const MAX_OWNER: usize = 39;
const MAX_REPO: usize = 100;

/// The reference tool's looser key rule (each side a letter or digit, then letters, digits,
/// `_`, `.` or `-`, any length): what its registries may hold on disk. Only used to find and
/// remove such records; nothing new is ever written under it.
pub fn reference_key(text: &str) -> Option<(String, String)> {
    let (owner, repo) = text.split_once('/')?;
    let ok = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphanumeric())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    (ok(owner) && ok(repo) && !repo.contains('/')).then(|| (owner.to_ascii_lowercase(), repo.to_ascii_lowercase()))
}

impl fmt::Display for RepoKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.repo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_lowercased() {
        let key = RepoKey::parse("Acme/Widget").unwrap();
        assert_eq!(key.to_string(), "acme/widget");
        assert_eq!((key.owner(), key.repo()), ("acme", "widget"));
        assert_eq!(RepoKey::parse("my_org/a.b-c_d").unwrap().to_string(), "my_org/a.b-c_d");
    }

    #[test]
    fn reference_p3_and_injection_keys_are_refused() {
        let long_owner = format!("{}/r", "o".repeat(40));
        let long_repo = format!("o/{}", "r".repeat(101));
        for bad in [
            "../widget",
            "acme/..",
            "/acme/widget",
            "acme/widget/extra",
            "a/b/c",
            "a/..",
            "-rf/x",
            "acme/-rf",
            "_acme/widget",
            "acme/.github",
            "acme/.widget.json.tmp-1-2",
            "acme/wid\nget",
            "acme/widget\n",
            " acme/widget",
            "acme/wid\0get",
            "acme\\widget",
            "acme/wid get",
            "acme/",
            "/widget",
            "acme",
            "",
            "acme.co/widget",
            "acme/wid%2fget",
            "acme/widgét",
            long_owner.as_str(),
            long_repo.as_str(),
        ] {
            assert!(RepoKey::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn the_error_names_the_rule_that_was_broken() {
        let reason = |text: &str| RepoKey::parse(text).unwrap_err().reason;
        assert!(reason("acme.co/widget").contains("'.'"), "{}", reason("acme.co/widget"));
        assert!(reason(&format!("{}/r", "o".repeat(40))).contains("40 characters long; GitHub allows at most 39"));
        assert!(reason(&format!("o/{}", "r".repeat(101))).contains("101 characters long; GitHub allows at most 100"));
        assert!(reason(" acme/widget").contains("whitespace"));
        assert!(reason("a/b/c").contains("exactly one '/'"));
        assert!(reason("_acme/widget").contains("start with a letter or digit"));
        // The old message listed '.' as allowed in both parts; it is not allowed in an owner.
        assert!(!RepoKey::parse("x y/z").unwrap_err().to_string().contains("'.'"));
        assert_eq!(reference_key("Acme.co/Widget"), Some(("acme.co".into(), "widget".into())));
        assert_eq!(reference_key("../x"), None);
    }
}
