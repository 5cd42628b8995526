//! GitHub repository names and pull-request references (design §5.1).
//!
//! Validation is deliberately stricter than the reference tool: names made only of dots,
//! names starting with `-` (option injection), non-ASCII digits and PR number zero are all
//! refused, because these strings end up in API paths, file paths and git URLs.

use std::fmt;

/// The web host of public GitHub; configured Enterprise hosts are added beside it.
pub const GITHUB_WEB_HOST: &str = "github.com";

const MAX_OWNER_LEN: usize = 39;
const MAX_REPO_LEN: usize = 100;

/// Why a repository name was refused (the text refused).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoNameError {
    /// Not exactly `OWNER/REPO`.
    #[error("expected GitHub OWNER/REPO, got {0:?}")]
    Shape(String),
    /// The owner breaks GitHub's rules.
    #[error("invalid GitHub owner {0:?}: use 1-39 ASCII letters, digits, '-' or '_', not starting with '-'")]
    Owner(String),
    #[error(
        "invalid GitHub repository name {0:?}: use 1-100 ASCII letters, digits, '.', '-' or '_', not starting with '-' and not only dots"
    )]
    /// The repository name breaks GitHub's rules (or is only dots).
    Repo(String),
}

/// A validated `owner/repo`, keeping the spelling it was given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepoName {
    owner: String,
    name: String,
}

impl RepoName {
    /// A name from its two halves, each checked against GitHub's rules.
    pub fn new(owner: &str, name: &str) -> Result<Self, RepoNameError> {
        validate_owner(owner)?;
        validate_repo(name)?;
        Ok(RepoName { owner: owner.to_owned(), name: name.to_owned() })
    }

    /// Parses exactly `OWNER/REPO` (surrounding whitespace is ignored).
    pub fn parse(text: &str) -> Result<Self, RepoNameError> {
        let trimmed = text.trim();
        let mut parts = trimmed.split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(owner), Some(name), None) => RepoName::new(owner, name),
            _ => Err(RepoNameError::Shape(text.to_owned())),
        }
    }

    /// The owner, as given.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The repository's name, as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `owner/repo` as given.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// The lowercase key GitHub treats as identical (registry file names, bindings).
    pub fn key(&self) -> String {
        self.full_name().to_ascii_lowercase()
    }

    /// The same repository, whatever the case of either spelling.
    pub fn same_as(&self, other: &RepoName) -> bool {
        self.key() == other.key()
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// Checks an owner: 1–39 ASCII letters, digits, `-` or `_`, not starting with `-`.
pub fn validate_owner(owner: &str) -> Result<(), RepoNameError> {
    let ok = !owner.is_empty()
        && owner.len() <= MAX_OWNER_LEN
        && !owner.starts_with('-')
        && owner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok { Ok(()) } else { Err(RepoNameError::Owner(owner.to_owned())) }
}

/// Checks a repository name: 1–100 ASCII letters, digits, `.`, `-` or `_`, not starting with `-`, not only dots.
pub fn validate_repo(name: &str) -> Result<(), RepoNameError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_REPO_LEN
        && !name.starts_with('-')
        && !name.bytes().all(|b| b == b'.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok { Ok(()) } else { Err(RepoNameError::Repo(name.to_owned())) }
}

/// A pull request: base repository and number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrRef {
    /// The base repository, where the PR is opened.
    pub repo: RepoName,
    /// The PR's number (at least 1).
    pub number: u64,
}

impl PrRef {
    /// The canonical shorthand `owner/repo#N`.
    pub fn shorthand(&self) -> String {
        format!("{}#{}", self.repo, self.number)
    }
}

impl fmt::Display for PrRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.repo, self.number)
    }
}

/// Why a pull-request reference was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrRefError {
    #[error("pull request URL must be on {expected}, got host {host:?}")]
    /// A URL on a host forgeloop does not accept (not github.com or the configured one).
    Host {
        /// The URL's host (with its port, if any).
        host: String,
        /// The accepted hosts, in words.
        expected: String,
    },
    /// A URL on an accepted host that is not a pull request's (the text refused).
    #[error("expected a GitHub pull request URL like https://github.com/OWNER/REPO/pull/N, got {0:?}")]
    NotPullUrl(String),
    /// Neither a PR URL nor `OWNER/REPO#N` (the text refused).
    #[error("expected a pull request as https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N, got {0:?}")]
    Unrecognized(String),
    /// The repository part is not a valid name.
    #[error("invalid pull request repository: {0}")]
    Repo(#[from] RepoNameError),
    /// The number is not ASCII digits, or is 0 (the text refused).
    #[error("invalid pull request number {0:?}: expected ASCII digits, at least 1")]
    Number(String),
}

/// The web hosts whose pull-request URLs are accepted (lowercase, `host` or `host:port`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebHosts(Vec<String>);

impl Default for WebHosts {
    fn default() -> Self {
        WebHosts(vec![GITHUB_WEB_HOST.to_owned()])
    }
}

impl WebHosts {
    /// github.com plus `extra` (an Enterprise or emulator web host).
    pub fn with(extra: Option<&str>) -> Self {
        let mut hosts = WebHosts::default();
        if let Some(host) = extra {
            let host = host.to_ascii_lowercase();
            if !hosts.0.contains(&host) {
                hosts.0.push(host);
            }
        }
        hosts
    }

    /// Whether `host` is one of them, whatever its case.
    pub fn contains(&self, host: &str) -> bool {
        self.0.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// The accepted hosts, github.com first.
    pub fn hosts(&self) -> &[String] {
        &self.0
    }
}

/// Parses `https://HOST/OWNER/REPO/pull/N` (trailing slash, query and fragment ignored)
/// or `OWNER/REPO#N`.
pub fn parse_pr_ref(input: &str, hosts: &WebHosts) -> Result<PrRef, PrRefError> {
    let text = input.trim();
    if let Some(url) = web_url(text) {
        return parse_url(text, &url, hosts);
    }
    if let Some((repo, number)) = text.rsplit_once('#')
        && repo.contains('/')
        && !repo.contains(char::is_whitespace)
    {
        let repo = RepoName::parse(repo)?;
        return Ok(PrRef { repo, number: parse_number(number)? });
    }
    Err(PrRefError::Unrecognized(input.to_owned()))
}

/// `text` as an http(s) URL, read by the `url` crate (what a browser reads).
fn web_url(text: &str) -> Option<url::Url> {
    url::Url::parse(text).ok().filter(|url| matches!(url.scheme(), "https" | "http"))
}

fn parse_url(original: &str, url: &url::Url, hosts: &WebHosts) -> Result<PrRef, PrRefError> {
    let host = url.host_str().unwrap_or_default();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    if !url.username().is_empty() || url.password().is_some() || !hosts.contains(&authority) {
        return Err(PrRefError::Host { host: authority, expected: hosts.0.join(" or ") });
    }
    let segments: Vec<&str> = url.path_segments().into_iter().flatten().filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [owner, repo, "pull", number] => Ok(PrRef { repo: RepoName::new(owner, repo)?, number: parse_number(number)? }),
        _ => Err(PrRefError::NotPullUrl(original.to_owned())),
    }
}

fn parse_number(text: &str) -> Result<u64, PrRefError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PrRefError::Number(text.to_owned()));
    }
    match text.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(PrRefError::Number(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PrRef, PrRefError> {
        parse_pr_ref(text, &WebHosts::default())
    }

    fn ok(text: &str) -> (String, u64) {
        let pr = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        (pr.repo.full_name(), pr.number)
    }

    #[test]
    fn reference_f2_url_gives_repository_and_number() {
        assert_eq!(ok("https://github.com/acme/widget/pull/42"), ("acme/widget".into(), 42));
    }

    #[test]
    fn reference_f3_non_pull_url_is_refused_naming_a_pull_request() {
        let err = parse("https://github.com/acme/widget/issues/42").unwrap_err();
        assert!(err.to_string().contains("pull request"), "{err}");
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(ok("acme/widget#7"), ("acme/widget".into(), 7));
        assert_eq!(ok("  acme/widget#7\n"), ("acme/widget".into(), 7));
        assert_eq!(ok("https://github.com/acme/widget/pull/42/"), ("acme/widget".into(), 42));
        assert_eq!(ok("https://github.com/acme/widget/pull/42?x=1#frag"), ("acme/widget".into(), 42));
        assert_eq!(ok("http://github.com/acme/widget/pull/42"), ("acme/widget".into(), 42));
        assert_eq!(ok("HTTPS://GitHub.com/Acme/Widget/pull/3"), ("Acme/Widget".into(), 3));
        assert_eq!(ok("acme/.github#1"), ("acme/.github".into(), 1));
        assert_eq!(ok("acme/widget#007"), ("acme/widget".into(), 7));
        assert_eq!(ok("my_org/a.b-c_d#1"), ("my_org/a.b-c_d".into(), 1));
    }

    #[test]
    fn refused_forms() {
        for bad in [
            "42",
            "#42",
            "github.com/acme/widget/pull/1",
            "https://www.github.com/acme/widget/pull/1",
            "https://github.com.evil/acme/widget/pull/1",
            "https://user@github.com/acme/widget/pull/1",
            "https://github.com/acme/widget/pull/42/files",
            "https://github.com/acme/widget/pull/abc",
            "ftp://github.com/acme/widget/pull/1",
            "../..#1",
            "acme/..#1",
            "https://github.com/../../pull/1",
            "-rf/widget#1",
            "acme/-widget#1",
            "acme/widget#0",
            "acme/widget#",
            "acme/widget#-1",
            "acme/widget#+1",
            "acme/widget#\u{0664}\u{0662}",
            "https://github.com/acme/widget/pull/\u{0664}\u{0662}",
            "acme/widget#\u{00b2}",
            "acme/widget#99999999999999999999999",
            "acme/wid get#1",
            "acme/widget/extra#1",
            "acme.co/widget#1",
            "acme/wid%2Fget#1",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    /// The URL parser reads the scheme's default port as none written, as a browser does.
    #[test]
    fn a_default_port_written_out_is_the_same_host() {
        assert_eq!(parse("https://github.com:443/acme/widget/pull/1").unwrap().to_string(), "acme/widget#1");
        assert!(parse("https://github.com:8443/acme/widget/pull/1").is_err());
    }

    #[test]
    fn enterprise_host_is_accepted_only_when_configured() {
        let url = "https://ghe.example.com/acme/widget/pull/5";
        assert!(parse(url).is_err());
        let hosts = WebHosts::with(Some("ghe.example.com"));
        assert_eq!(parse_pr_ref(url, &hosts).unwrap().number, 5);
        let emulator = WebHosts::with(Some("127.0.0.1:8080"));
        assert!(parse_pr_ref("http://127.0.0.1:8080/a/b/pull/1", &emulator).is_ok());
    }

    #[test]
    fn repo_name_limits() {
        assert!(RepoName::parse(&format!("{}/r", "o".repeat(39))).is_ok());
        assert!(RepoName::parse(&format!("{}/r", "o".repeat(40))).is_err());
        assert!(RepoName::parse(&format!("o/{}", "r".repeat(100))).is_ok());
        assert!(RepoName::parse(&format!("o/{}", "r".repeat(101))).is_err());
        for bad in ["../widget", "acme/..", "/acme/widget", "acme/widget/extra", "acme/wid\nget", "acme/wi\0", "a/"] {
            assert!(RepoName::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(RepoName::parse("Acme/Widget").unwrap().key(), "acme/widget");
    }
}
