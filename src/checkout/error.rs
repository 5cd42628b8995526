//! What can go wrong while preparing a checkout, each with the fix in its message.
//!
//! Messages never contain the token: URLs are refused when they carry credentials, the
//! token only travels through the credentials callback, and every libgit2 message is scrubbed
//! of the token before it is stored here (defence in depth).

use std::path::PathBuf;

/// Why a PR's head could not be checked out (design §5.2.2); the message says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// A diff needs a commit the mirror does not have, and fetching was not allowed.
    #[error("commit {sha} is not in the mirror; it must be fetched from the repository first")]
    CommitMissing {
        /// The commit that is missing (40 hex digits).
        sha: String,
    },
    /// The clone URL failed the URL policy (credentials in it, wrong scheme or host, …).
    #[error("clone URL {url} refused: {reason}")]
    UrlRefused {
        /// The refused URL.
        url: String,
        /// Which rule it broke.
        reason: String,
    },

    /// `forgeloop show`: the path is not in the commit's tree.
    #[error("{path} is not in the tree of {sha}; list its directory with --list")]
    NotInTree {
        /// The path asked for.
        path: String,
        /// The commit read (40 hex digits).
        sha: String,
    },
    /// `forgeloop show`: the path is not what was asked for (a directory to read, a file to list).
    #[error("{path} is {what}")]
    WrongKind {
        /// The path asked for.
        path: String,
        /// What it is, and what to do instead.
        what: &'static str,
    },

    /// The API's head SHA is not 40 hex digits.
    #[error("invalid head SHA {0:?}: expected 40 hexadecimal characters from the pull request API")]
    InvalidSha(String),

    /// The PR number is 0.
    #[error("invalid pull request number 0: numbers start at 1")]
    InvalidPrNumber,

    /// The repository wants a login and there is no token.
    #[error(
        "{url} requires authentication and no GitHub token was given: set GH_TOKEN or GITHUB_TOKEN \
         (or log in with `gh auth login`)"
    )]
    AuthRequired {
        /// The URL that asked for credentials.
        url: String,
    },

    /// The repository refused the token.
    #[error(
        "the GitHub token was rejected by {url}: it lacks access to this repository or has expired; \
         grant it read access to the repository (contents: read) or use another token"
    )]
    AuthFailed {
        /// The URL that refused it.
        url: String,
        /// How many times libgit2 asked for credentials before giving up.
        credential_requests: u32,
    },

    /// The repository does not exist, or the token cannot see it.
    #[error(
        "repository {url} not found: check the repository name, and that the GitHub token can see it \
         (GitHub answers 404 for private repositories the token cannot access)"
    )]
    RepoNotFound {
        /// The repository URL.
        url: String,
        /// libgit2's message, scrubbed of the token.
        detail: String,
    },

    /// The base repository has no `refs/pull/N/head` for this PR.
    #[error(
        "refs/pull/{pr_number}/head not found on {url}: check that pull request #{pr_number} exists in this \
         base repository ({detail})"
    )]
    PrRefMissing {
        /// The base repository URL.
        url: String,
        /// The PR number.
        pr_number: u64,
        /// libgit2's message, scrubbed of the token.
        detail: String,
    },

    /// The fetched head is not the commit the API reported: the PR moved meanwhile.
    #[error(
        "the pull request head moved: the API said {expected} but the fetched head is {found}; \
         resolve the pull request again and retry"
    )]
    HeadMoved {
        /// The head SHA the API gave.
        expected: String,
        /// The head SHA the fetch brought.
        found: String,
    },

    /// TLS verification failed against the host.
    #[error(
        "the TLS certificate of {url} is not trusted ({detail}); install the CA certificates \
         (ca-certificates) or point SSL_CERT_FILE at the right bundle before starting forgeloop"
    )]
    Certificate {
        /// The URL being fetched.
        url: String,
        /// libgit2's message.
        detail: String,
    },

    /// The connection failed or was cut off.
    #[error("network error talking to {url}: {detail}; check connectivity and proxy settings, then retry")]
    Network {
        /// The URL being fetched.
        url: String,
        /// libgit2's message, scrubbed of the token.
        detail: String,
    },

    /// The PR's head does not merge cleanly into the tip of its base branch (design §5.2.1):
    /// not the machine's trouble but the PR's, so the run records `MERGE_CONFLICT`.
    #[error(
        "the pull request's head {head_sha} does not merge cleanly into {base_ref} at {base_sha}: conflicts in {}; bring the branch up to date with {base_ref} and resolve them",
        paths.join(", ")
    )]
    MergeConflict {
        /// The base branch.
        base_ref: String,
        /// Its tip when the merge was tried.
        base_sha: String,
        /// The PR's head.
        head_sha: String,
        /// The paths that conflicted (at most [`super::tested::MAX_CONFLICTS`] listed).
        paths: Vec<String>,
    },

    /// forgeloop could not make a merge it can show is the one GitHub would test (design
    /// §5.2.1): no current `refs/pull/N/merge`, no usable git, and a change libgit2's merge may
    /// place otherwise than git's. Not the PR's doing, so an infrastructure failure (no
    /// iteration, nothing sent to WebGPT), never `MERGE_CONFLICT`.
    #[error(
        "forgeloop cannot make the merge GitHub would test of the pull request's head {head_sha} into {base_ref} at {base_sha}: {why}; install git 2.40 or newer where forgeloop runs (it merges with `git merge-tree`, as GitHub does), or wait until GitHub has computed the pull request's merge against this tip of {base_ref} (its `mergeable` is no longer null) and run again"
    )]
    MergeUnproven {
        /// The base branch.
        base_ref: String,
        /// Its tip when the merge was tried.
        base_sha: String,
        /// The PR's head.
        head_sha: String,
        /// Why neither GitHub's merge nor git's was there, and why libgit2's may differ.
        why: String,
    },

    /// A stop request or signal ended the checkout early.
    #[error("the checkout was cancelled")]
    Cancelled,

    /// A file system operation on the checkout or mirror failed.
    #[error("{action} {path} failed: {source}; check free disk space and permissions")]
    Disk {
        /// What was being done ("creating", "locking", …), as the message's first words.
        action: &'static str,
        /// The file or directory it was done to.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A git operation on the shared mirror failed.
    #[error("git {step} failed in {path}: {detail}; the mirror is a cache, deleting it is safe")]
    Mirror {
        /// The git step that failed.
        step: &'static str,
        /// The mirror's directory.
        path: PathBuf,
        /// libgit2's message, scrubbed of the token.
        detail: String,
    },

    /// A git operation on the checkout failed.
    #[error("git {step} failed: {detail}")]
    Git {
        /// The git step that failed.
        step: &'static str,
        /// libgit2's message, scrubbed of the token.
        detail: String,
    },

    /// A submodule could not be checked out.
    #[error("submodule {name:?}: {detail}")]
    Submodule {
        /// The submodule's name in `.gitmodules`.
        name: String,
        /// What went wrong.
        detail: String,
    },
}

/// Removes the token from libgit2 text before it goes anywhere.
pub(crate) fn scrub(text: &str, token: Option<&str>) -> String {
    match token {
        Some(t) if !t.is_empty() => text.replace(t, "[REDACTED]"),
        _ => text.to_owned(),
    }
}
