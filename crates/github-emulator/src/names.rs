//! GitHub's rules for the identifiers the emulator accepts: logins (users and organizations),
//! repository names and commit SHAs. The emulator emulates GitHub, so these follow GitHub,
//! not any client of it; where they are stricter than GitHub it is said below, and why.
//! Leaf module: it uses nothing else of the crate.

use std::fmt;

/// GitHub logins are at most 39 characters.
const MAX_LOGIN_LEN: usize = 39;
/// GitHub repository names are at most 100 characters.
const MAX_REPO_LEN: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("expected GitHub OWNER/REPO, got {0:?}")]
    Shape(String),
    #[error("invalid GitHub owner {0:?}: use 1-39 ASCII letters, digits, '-' or '_', not starting with '-'")]
    Owner(String),
    #[error(
        "invalid GitHub repository name {0:?}: use 1-100 ASCII letters, digits, '.', '-' or '_', not starting with '-' and not only dots"
    )]
    Repo(String),
}

/// A valid `owner/name`, keeping the spelling it was given (GitHub compares names without
/// regard to case but answers with the spelling the repository was created with).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepoName {
    owner: String,
    name: String,
}

impl RepoName {
    pub fn new(owner: &str, name: &str) -> Result<Self, NameError> {
        validate_login(owner)?;
        validate_repo(name)?;
        Ok(RepoName { owner: owner.to_owned(), name: name.to_owned() })
    }

    /// Parses exactly `OWNER/REPO` (surrounding whitespace is ignored).
    pub fn parse(text: &str) -> Result<Self, NameError> {
        let mut parts = text.trim().split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(owner), Some(name), None) => RepoName::new(owner, name),
            _ => Err(NameError::Shape(text.to_owned())),
        }
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `owner/name` as given.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// `owner/name` in lowercase: one key for every spelling GitHub treats as the same repository.
    pub fn key(&self) -> String {
        self.full_name().to_ascii_lowercase()
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

impl std::str::FromStr for RepoName {
    type Err = NameError;

    fn from_str(text: &str) -> Result<Self, NameError> {
        RepoName::parse(text)
    }
}

/// A user or organization login: 1-39 ASCII letters, digits, `-` and `_`, not starting with
/// `-`. GitHub's sign-up form today also refuses consecutive and trailing hyphens, but older
/// accounts have them, and `_` appears in the logins of Enterprise managed users
/// (`name_shortcode`); an emulator must accept every login GitHub can answer with.
pub fn validate_login(login: &str) -> Result<(), NameError> {
    let ok = !login.is_empty()
        && login.len() <= MAX_LOGIN_LEN
        && !login.starts_with('-')
        && login.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok { Ok(()) } else { Err(NameError::Owner(login.to_owned())) }
}

/// A repository name: 1-100 ASCII letters, digits, `.`, `-` and `_` (GitHub replaces anything
/// else with `-` on creation). Stricter than GitHub in two ways, because the emulator uses
/// names as path segments on disk and in git URLs: no leading `-`, and no name made only of
/// dots (GitHub reserves `.` and `..` too).
pub fn validate_repo(name: &str) -> Result<(), NameError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_REPO_LEN
        && !name.starts_with('-')
        && !name.bytes().all(|b| b == b'.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok { Ok(()) } else { Err(NameError::Repo(name.to_owned())) }
}

/// A full commit SHA as GitHub accepts it in a path or body (40 hex digits, either case), in
/// the lowercase GitHub answers with; `None` for anything else (GitHub resolves short SHAs in
/// some places, but nothing the emulator serves needs that).
pub fn normalize_sha(sha: &str) -> Option<String> {
    (sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_follow_github() {
        for ok in ["octocat", "forgeloop-user", "a", "A1-b-", "x--y", "jane_acme", &"a".repeat(39)] {
            assert_eq!(validate_login(ok), Ok(()), "{ok}");
        }
        for bad in ["", "-lead", "has space", "dot.ted", "slash/ed", "ünï", &"a".repeat(40)] {
            assert_eq!(validate_login(bad), Err(NameError::Owner(bad.to_owned())), "{bad}");
        }
    }

    #[test]
    fn repository_names_follow_github_and_stay_safe_path_segments() {
        for ok in ["widget", "Widget.rs", "a_b-c", ".github", "x..y", "1", &"r".repeat(100)] {
            assert_eq!(validate_repo(ok), Ok(()), "{ok}");
        }
        for bad in ["", ".", "..", "...", "-rf", "a/b", "a b", "a%2Fb", "naïve", &"r".repeat(101)] {
            assert_eq!(validate_repo(bad), Err(NameError::Repo(bad.to_owned())), "{bad}");
        }
    }

    #[test]
    fn full_names_parse_keep_their_spelling_and_compare_by_key() {
        let repo = RepoName::parse("  Acme/Widget\n").unwrap();
        assert_eq!((repo.owner(), repo.name()), ("Acme", "Widget"));
        assert_eq!(repo.full_name(), "Acme/Widget");
        assert_eq!(repo.to_string(), "Acme/Widget");
        assert_eq!(repo.key(), "acme/widget");
        assert_eq!(repo.key(), "acme/widget".parse::<RepoName>().unwrap().key());
        for shape in ["acme", "acme/widget/extra", "", "/"] {
            assert!(RepoName::parse(shape).is_err(), "{shape}");
        }
        assert_eq!(RepoName::parse("a/b/c"), Err(NameError::Shape("a/b/c".into())));
        assert_eq!(RepoName::parse("-a/b"), Err(NameError::Owner("-a".into())));
        assert_eq!(RepoName::parse("a/.."), Err(NameError::Repo("..".into())));
    }

    #[test]
    fn shas_are_full_hex_and_come_back_lowercase() {
        assert_eq!(normalize_sha(&"AbC0".repeat(10)), Some("abc0".repeat(10)));
        assert_eq!(normalize_sha(&"a".repeat(39)), None);
        assert_eq!(normalize_sha(&"a".repeat(41)), None);
        assert_eq!(normalize_sha(&"g".repeat(40)), None);
        assert_eq!(normalize_sha(""), None);
    }
}
