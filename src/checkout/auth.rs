//! The GitHub token, handed to libgit2 only through the credentials callback.
//!
//! libgit2 calls the callback again after every 401 and gives up only after 15 replays, so the
//! callback counts: a second call means the first credential was rejected, and it stops there.
//! The token is only offered to the host of the clone URL, so a `.gitmodules` entry or a redirect
//! pointing elsewhere never receives it.

use std::cell::Cell;

use git2::{Cred, CredentialType};

use super::url_policy::host_of;

/// The user name GitHub expects with a token over HTTPS (any non-empty name works).
const TOKEN_USER: &str = "x-access-token";

/// What the server asked for and what the callback answered, for error classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthOutcome {
    /// The server never asked (public repository, or a local transport).
    NotAsked,
    /// The token was offered once; the fetch went on.
    Offered,
    /// The server asked but there is no token.
    NoToken,
    /// The server asked again after the token was offered: it was rejected.
    Rejected,
    /// The server asked for something else than user/password (e.g. ssh keys).
    Unsupported,
    /// A host other than the clone URL's asked; the token was withheld.
    ForeignHost,
}

pub(crate) struct Auth<'a> {
    token: Option<&'a str>,
    host: Option<String>,
    calls: Cell<u32>,
    outcome: Cell<AuthOutcome>,
}

impl<'a> Auth<'a> {
    /// `host`: the only host the token may be sent to (the clone URL's).
    pub(crate) fn new(token: Option<&'a str>, host: Option<&str>) -> Self {
        Auth {
            token: token.filter(|t| !t.is_empty()),
            host: host.map(str::to_owned),
            calls: Cell::new(0),
            outcome: Cell::new(AuthOutcome::NotAsked),
        }
    }

    pub(crate) fn calls(&self) -> u32 {
        self.calls.get()
    }

    pub(crate) fn outcome(&self) -> AuthOutcome {
        self.outcome.get()
    }

    /// The body of `RemoteCallbacks::credentials`.
    pub(crate) fn credentials(&self, url: &str, allowed: CredentialType) -> Result<Cred, git2::Error> {
        self.calls.set(self.calls.get() + 1);
        let refuse = |outcome: AuthOutcome, why: &str| {
            self.outcome.set(outcome);
            Err(git2::Error::from_str(why))
        };
        if self.calls.get() > 1 {
            return refuse(AuthOutcome::Rejected, "the GitHub token was rejected");
        }
        if !allowed.contains(CredentialType::USER_PASS_PLAINTEXT) {
            return refuse(AuthOutcome::Unsupported, "the server asked for credentials other than a token");
        }
        let Some(token) = self.token else {
            return refuse(AuthOutcome::NoToken, "authentication required and no GitHub token given");
        };
        if self.host.is_none() || host_of(url) != self.host {
            return refuse(AuthOutcome::ForeignHost, "credentials requested by another host; token withheld");
        }
        self.outcome.set(AuthOutcome::Offered);
        Cred::userpass_plaintext(TOKEN_USER, token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_the_token_once_then_gives_up() {
        let auth = Auth::new(Some("t0ken"), Some("github.com"));
        assert!(auth.credentials("https://github.com/a/b.git", CredentialType::USER_PASS_PLAINTEXT).is_ok());
        assert_eq!(auth.outcome(), AuthOutcome::Offered);
        assert!(auth.credentials("https://github.com/a/b.git", CredentialType::USER_PASS_PLAINTEXT).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::Rejected);
        assert_eq!(auth.calls(), 2);
    }

    #[test]
    fn withholds_the_token_from_other_hosts_and_other_credential_types() {
        let auth = Auth::new(Some("t0ken"), Some("github.com"));
        assert!(auth.credentials("https://evil.example/a.git", CredentialType::USER_PASS_PLAINTEXT).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::ForeignHost);

        let auth = Auth::new(Some("t0ken"), Some("github.com"));
        assert!(auth.credentials("https://github.com/a.git", CredentialType::SSH_KEY).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::Unsupported);

        let auth = Auth::new(Some("t0ken"), None);
        assert!(auth.credentials("file:///tmp/a.git", CredentialType::USER_PASS_PLAINTEXT).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::ForeignHost);
    }

    #[test]
    fn no_token_is_reported_as_such() {
        let auth = Auth::new(Some(""), Some("github.com"));
        assert!(auth.credentials("https://github.com/a.git", CredentialType::USER_PASS_PLAINTEXT).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::NoToken);
    }
}
