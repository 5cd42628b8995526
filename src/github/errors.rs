//! What can go wrong talking to GitHub, each case with the fix in its message.
//!
//! Messages name the action (`reading pull request acme/widget#7`) and never contain the token:
//! every text that came from the network or a transport error is scrubbed before it lands here.

use chrono::{DateTime, Utc};

/// Why a GitHub request failed, or could not be made; the message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    /// The configured API base is not a usable http(s) URL.
    #[error(
        "invalid GitHub API base URL {url:?}: {reason}; use an http(s) URL such as https://api.github.com or https://HOST/api/v3 (--github-api, FORGELOOP_GITHUB_API)"
    )]
    InvalidApiBase {
        /// The API base as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },

    /// `http://` to anything but loopback: the token would cross the network in clear text.
    #[error(
        "refusing the GitHub API base {url:?}: plain http:// to a host that is not loopback would send the token in clear text; use https:// (plain http is accepted only for 127.0.0.0/8, ::1 and localhost, as for a local emulator) (--github-api, FORGELOOP_GITHUB_API, config github.api)"
    )]
    CleartextApiBase {
        /// The API base as given.
        url: String,
    },

    /// The GitHub client could not be built (outside a tokio runtime, or octocrab refused its setup).
    #[error("could not set up the GitHub client: {0}")]
    Setup(String),

    /// A value forgeloop was about to send is not acceptable to GitHub.
    #[error("invalid {what}: {detail}")]
    InvalidInput {
        /// Which input ("commit SHA", …).
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },

    /// HTTP 401: the token is missing, expired or invalid.
    #[error(
        "{action}: GitHub rejected the credentials (HTTP 401: {message}); the token is missing, expired or invalid: set GH_TOKEN or GITHUB_TOKEN, or run `gh auth login`"
    )]
    Unauthorized {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// GitHub's own message, scrubbed of the token.
        message: String,
    },

    /// The rate limit is spent (HTTP 429, or 403 saying so).
    #[error("{action}: GitHub API rate limit exceeded (HTTP {status}); {}", reset_phrase(.reset_at))]
    RateLimited {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// The HTTP status of the answer.
        status: u16,
        /// When GitHub says the limit resets, if it said.
        reset_at: Option<DateTime<Utc>>,
    },

    /// HTTP 403 for another reason: the token lacks a permission.
    #[error(
        "{action}: GitHub refused access (HTTP 403: {message}); the token lacks a permission or scope needed for {resource}"
    )]
    Forbidden {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// The resource the call was about (usually the `OWNER/REPO`).
        resource: String,
        /// GitHub's own message, scrubbed of the token.
        message: String,
    },

    /// HTTP 404: the thing does not exist, or the token cannot see it.
    #[error(
        "{action}: not found or the token cannot access {resource} (HTTP 404); check the name, and that the token can read {resource} (private repositories need the `repo` scope or a fine-grained token that includes them)"
    )]
    NotFound {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// What was asked for.
        resource: String,
    },

    /// HTTP 422: GitHub understood the request and refused it.
    #[error("{action}: GitHub refused the request (HTTP 422: {message})")]
    Unprocessable {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// GitHub's own message, scrubbed of the token.
        message: String,
    },

    /// HTTP 5xx: GitHub's own trouble; worth retrying.
    #[error("{action}: GitHub server error (HTTP {status}: {message}); GitHub may be having trouble, retry later")]
    Server {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// The HTTP status.
        status: u16,
        /// GitHub's own message, scrubbed of the token.
        message: String,
    },

    /// Any other unexpected HTTP status.
    #[error("{action}: unexpected HTTP {status} from GitHub: {message}")]
    Http {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// The HTTP status.
        status: u16,
        /// GitHub's own message, scrubbed of the token.
        message: String,
    },

    /// No answer within the request timeout.
    #[error(
        "{action}: no answer from {api} within {} s; check the network or proxy, or raise the timeout",
        .after.as_secs_f64()
    )]
    Timeout {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// The API base that did not answer.
        api: String,
        /// How long forgeloop waited.
        after: std::time::Duration,
    },

    /// The connection could not be made (DNS, refused, TLS, proxy).
    #[error("{action}: cannot reach {api}: {detail}; check the network, proxy and --github-api")]
    Unreachable {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// The API base it tried.
        api: String,
        /// The transport error, scrubbed of the token.
        detail: String,
    },

    /// GitHub's answer did not parse, or held a name, SHA or URL forgeloop refuses to use.
    #[error("{action}: GitHub returned invalid or unsafe data: {detail}")]
    InvalidResponse {
        /// What forgeloop was doing ("reading pull request acme/widget#7").
        action: String,
        /// Which field was wrong and why.
        detail: String,
    },

    /// `--new-repo` found the repository already there with the other visibility.
    #[error(
        "repository {repo} exists but is {actual}, not {wanted} as requested; change its visibility on GitHub or request the visibility it has"
    )]
    Visibility {
        /// The repository's `OWNER/REPO`.
        repo: String,
        /// The visibility asked for (`private` or `public`).
        wanted: &'static str,
        /// The visibility it has.
        actual: &'static str,
    },

    /// `--new-repo` found a repository by that name that cannot be reused.
    #[error("repository {repo} already exists but {reason}; pick another name")]
    RepoConflict {
        /// The repository's `OWNER/REPO`.
        repo: String,
        /// Why it cannot be used (renamed, transferred, no push access).
        reason: String,
    },
}

impl GithubError {
    /// The HTTP status GitHub answered with, when the failure was an HTTP answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            GithubError::Unauthorized { .. } => Some(401),
            GithubError::Forbidden { .. } => Some(403),
            GithubError::NotFound { .. } => Some(404),
            GithubError::Unprocessable { .. } => Some(422),
            GithubError::RateLimited { status, .. }
            | GithubError::Server { status, .. }
            | GithubError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// True when trying again later may succeed without anyone changing anything (network,
    /// GitHub outage, rate limit). Use cases count these as infrastructure failures (design §3 rule 3).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            GithubError::Timeout { .. }
                | GithubError::Unreachable { .. }
                | GithubError::Server { .. }
                | GithubError::RateLimited { .. }
        )
    }
}

fn reset_phrase(reset_at: &Option<DateTime<Utc>>) -> String {
    match reset_at {
        Some(at) => {
            let wait = (*at - Utc::now()).num_seconds().max(0);
            format!(
                "the limit resets at {} (in {wait} s); wait until then or use a token with a higher limit",
                at.format("%Y-%m-%d %H:%M:%S UTC")
            )
        }
        None => "GitHub did not say when the limit resets; wait a few minutes and retry".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_message_names_the_reset_time() {
        let at = DateTime::from_timestamp(4_102_444_800, 0).unwrap();
        let err = GithubError::RateLimited { action: "reading x".into(), status: 403, reset_at: Some(at) };
        let text = err.to_string();
        assert!(text.contains("2100-01-01 00:00:00 UTC"), "{text}");
        assert!(err.is_transient());
        assert_eq!(err.status(), Some(403));
    }

    #[test]
    fn unauthorized_message_says_how_to_fix() {
        let err = GithubError::Unauthorized { action: "reading the user".into(), message: "Bad credentials".into() };
        assert!(err.to_string().contains("GH_TOKEN"));
        assert!(!err.is_transient());
    }
}
