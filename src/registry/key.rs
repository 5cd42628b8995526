//! Registry keys (reference §7.1): `owner/repo`, lowercased, naming the record file
//! `<registry>/<owner>/<repo>.json`.
//!
//! The input must be exactly a GitHub `OWNER/REPO` ([`RepoName`]'s rules: no dot-only
//! names, no leading `-`, length limits) and, as in the reference tool, each side must
//! start with a letter or digit. That last rule also guarantees a key can never name a
//! hidden file, so it can never collide with a temp file (`.NAME.tmp-…`) or a lock.

use std::fmt;

use crate::domain::pr_ref::RepoName;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected GitHub owner/repo (each side starting with a letter or digit, then letters, digits, '-', '_' or '.'), got {0:?}"
)]
pub struct KeyError(pub String);

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
        let err = || KeyError(text.to_owned());
        if text.trim() != text {
            return Err(err());
        }
        let name = RepoName::parse(text).map_err(|_| err())?;
        let starts_well = |s: &str| s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
        if !starts_well(name.owner()) || !starts_well(name.name()) {
            return Err(err());
        }
        Ok(RepoKey { owner: name.owner().to_ascii_lowercase(), repo: name.name().to_ascii_lowercase() })
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn repo(&self) -> &str {
        &self.repo
    }

    pub fn as_string(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }
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
    fn the_error_names_the_expected_shape() {
        assert!(RepoKey::parse("../widget").unwrap_err().to_string().contains("expected GitHub owner/repo"));
    }
}
