//! What can go wrong talking to GitHub, each case with the fix in its message.
//!
//! Messages name the action (`reading pull request acme/widget#7`) and never contain the token:
//! every text that came from the network or a transport error is scrubbed before it lands here.

use chrono::{DateTime, Utc};

#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error(
        "invalid GitHub API base URL {url:?}: {reason}; use an http(s) URL such as https://api.github.com or https://HOST/api/v3 (--github-api, FORGELOOP_GITHUB_API)"
    )]
    InvalidApiBase { url: String, reason: String },

    /// `http://` to anything but loopback: the token would cross the network in clear text.
    #[error(
        "refusing the GitHub API base {url:?}: plain http:// to a host that is not loopback would send the token in clear text; use https:// (plain http is accepted only for 127.0.0.0/8, ::1 and localhost, as for a local emulator) (--github-api, FORGELOOP_GITHUB_API, config github.api)"
    )]
    CleartextApiBase { url: String },

    #[error("could not set up the GitHub client: {0}")]
    Setup(String),

    #[error("invalid {what}: {detail}")]
    InvalidInput { what: &'static str, detail: String },

    #[error(
        "{action}: GitHub rejected the credentials (HTTP 401: {message}); the token is missing, expired or invalid: set GH_TOKEN or GITHUB_TOKEN, or run `gh auth login`"
    )]
    Unauthorized { action: String, message: String },

    #[error("{action}: GitHub API rate limit exceeded (HTTP {status}); {}", reset_phrase(.reset_at))]
    RateLimited { action: String, status: u16, reset_at: Option<DateTime<Utc>> },

    #[error(
        "{action}: GitHub refused access (HTTP 403: {message}); the token lacks a permission or scope needed for {resource}"
    )]
    Forbidden { action: String, resource: String, message: String },

    #[error(
        "{action}: not found or the token cannot access {resource} (HTTP 404); check the name, and that the token can read {resource} (private repositories need the `repo` scope or a fine-grained token that includes them)"
    )]
    NotFound { action: String, resource: String },

    #[error("{action}: GitHub refused the request (HTTP 422: {message})")]
    Unprocessable { action: String, message: String },

    #[error("{action}: GitHub server error (HTTP {status}: {message}); GitHub may be having trouble, retry later")]
    Server { action: String, status: u16, message: String },

    #[error("{action}: unexpected HTTP {status} from GitHub: {message}")]
    Http { action: String, status: u16, message: String },

    #[error(
        "{action}: no answer from {api} within {} s; check the network or proxy, or raise the timeout",
        .after.as_secs_f64()
    )]
    Timeout { action: String, api: String, after: std::time::Duration },

    #[error("{action}: cannot reach {api}: {detail}; check the network, proxy and --github-api")]
    Unreachable { action: String, api: String, detail: String },

    #[error("{action}: GitHub returned invalid or unsafe data: {detail}")]
    InvalidResponse { action: String, detail: String },

    #[error(
        "repository {repo} exists but is {actual}, not {wanted} as requested; change its visibility on GitHub or request the visibility it has"
    )]
    Visibility { repo: String, wanted: &'static str, actual: &'static str },

    #[error("repository {repo} already exists but {reason}; pick another name")]
    RepoConflict { repo: String, reason: String },
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
