//! What can go wrong while preparing a checkout, each with the fix in its message.
//!
//! Messages never contain the token: URLs are refused when they carry credentials, the
//! token only travels through the credentials callback, and every libgit2 message is scrubbed
//! of the token before it is stored here (defence in depth).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// A diff needs a commit the mirror does not have, and fetching was not allowed.
    #[error("commit {sha} is not in the mirror; it must be fetched from the repository first")]
    CommitMissing { sha: String },
    #[error("clone URL {url} refused: {reason}")]
    UrlRefused { url: String, reason: String },

    #[error("invalid head SHA {0:?}: expected 40 hexadecimal characters from the pull request API")]
    InvalidSha(String),

    #[error("invalid pull request number 0: numbers start at 1")]
    InvalidPrNumber,

    #[error(
        "{url} requires authentication and no GitHub token was given: set GH_TOKEN or GITHUB_TOKEN \
         (or log in with `gh auth login`)"
    )]
    AuthRequired { url: String },

    #[error(
        "the GitHub token was rejected by {url}: it lacks access to this repository or has expired; \
         grant it read access to the repository (contents: read) or use another token"
    )]
    AuthFailed { url: String, credential_requests: u32 },

    #[error(
        "repository {url} not found: check the repository name, and that the GitHub token can see it \
         (GitHub answers 404 for private repositories the token cannot access)"
    )]
    RepoNotFound { url: String, detail: String },

    #[error(
        "refs/pull/{pr_number}/head not found on {url}: check that pull request #{pr_number} exists in this \
         base repository ({detail})"
    )]
    PrRefMissing { url: String, pr_number: u64, detail: String },

    #[error(
        "the pull request head moved: the API said {expected} but the fetched head is {found}; \
         resolve the pull request again and retry"
    )]
    HeadMoved { expected: String, found: String },

    #[error(
        "the TLS certificate of {url} is not trusted ({detail}); install the CA certificates \
         (ca-certificates) or point SSL_CERT_FILE at the right bundle before starting forgeloop"
    )]
    Certificate { url: String, detail: String },

    #[error("network error talking to {url}: {detail}; check connectivity and proxy settings, then retry")]
    Network { url: String, detail: String },

    #[error("the checkout was cancelled")]
    Cancelled,

    #[error("{action} {path} failed: {source}; check free disk space and permissions")]
    Disk {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("git {step} failed in {path}: {detail}; the mirror is a cache, deleting it is safe")]
    Mirror { step: &'static str, path: PathBuf, detail: String },

    #[error("git {step} failed: {detail}")]
    Git { step: &'static str, detail: String },

    #[error("submodule {name:?}: {detail}")]
    Submodule { name: String, detail: String },
}

/// Removes the token from libgit2 text before it goes anywhere.
pub(crate) fn scrub(text: &str, token: Option<&str>) -> String {
    match token {
        Some(t) if !t.is_empty() => text.replace(t, "[REDACTED]"),
        _ => text.to_owned(),
    }
}
