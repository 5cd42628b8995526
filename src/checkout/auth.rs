//! The GitHub token, handed to libgit2 only through the credentials callback.
//!
//! libgit2 calls the callback again after every 401 and gives up only after 15 replays, so the
//! callback counts: a second call means the first credential was rejected, and it stops there.
//! The token is only offered inside its [`TokenScope`]: the clone URL's scheme, host and port,
//! and for submodules also an owner of the PR's repository (or one the config allows), so a
//! `.gitmodules` entry or a redirect pointing elsewhere never receives it.

use std::cell::Cell;

use git2::{Cred, CredentialType};

use super::url_policy::{Origin, origin_of, owner_of};

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
    /// A URL outside the token's scope asked; the token was withheld.
    OutOfScope,
}

/// Where the token may go: URLs of exactly this origin (scheme, host, port) and, when `owners`
/// is set, whose first path segment is one of them (lowercase).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenScope {
    pub origin: Option<Origin>,
    pub owners: Option<Vec<String>>,
}

impl TokenScope {
    /// Any repository of `clone_url`'s origin (the main fetch: the URL the API gave).
    pub(crate) fn origin_of(clone_url: &str) -> TokenScope {
        TokenScope { origin: origin_of(clone_url), owners: None }
    }

    /// Repositories of `owners` (compared without case) on `clone_url`'s origin (submodules).
    pub(crate) fn owners_on(clone_url: &str, owners: impl IntoIterator<Item = String>) -> TokenScope {
        let mut owners: Vec<String> = owners.into_iter().map(|o| o.to_ascii_lowercase()).collect();
        owners.sort();
        owners.dedup();
        TokenScope { origin: origin_of(clone_url), owners: Some(owners) }
    }

    pub(crate) fn allows(&self, url: &str) -> bool {
        let Some(origin) = &self.origin else { return false };
        if origin_of(url).as_ref() != Some(origin) {
            return false;
        }
        match &self.owners {
            None => true,
            Some(owners) => owner_of(url).is_some_and(|owner| owners.contains(&owner)),
        }
    }

    /// For messages: `the owners acme, acme-libs on https://github.com:443`.
    pub(crate) fn describe(&self) -> String {
        let origin = self.origin.as_ref().map_or_else(|| "no host".to_owned(), Origin::to_string);
        match &self.owners {
            None => format!("repositories on {origin}"),
            Some(owners) => format!("repositories of {} on {origin}", owners.join(", ")),
        }
    }
}

pub(crate) struct Auth<'a> {
    token: Option<&'a str>,
    scope: TokenScope,
    calls: Cell<u32>,
    outcome: Cell<AuthOutcome>,
}

impl<'a> Auth<'a> {
    /// `scope`: where the token may be sent.
    pub(crate) fn new(token: Option<&'a str>, scope: TokenScope) -> Self {
        Auth {
            token: token.filter(|t| !t.is_empty()),
            scope,
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

    pub(crate) fn scope(&self) -> &TokenScope {
        &self.scope
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
        if !self.scope.allows(url) {
            return refuse(AuthOutcome::OutOfScope, "credentials requested outside the token's scope; token withheld");
        }
        self.outcome.set(AuthOutcome::Offered);
        Cred::userpass_plaintext(TOKEN_USER, token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASK: CredentialType = CredentialType::USER_PASS_PLAINTEXT;

    fn github() -> TokenScope {
        TokenScope::origin_of("https://github.com/acme/widget.git")
    }

    #[test]
    fn offers_the_token_once_then_gives_up() {
        let auth = Auth::new(Some("t0ken"), github());
        assert!(auth.credentials("https://github.com/a/b.git", ASK).is_ok());
        assert_eq!(auth.outcome(), AuthOutcome::Offered);
        assert!(auth.credentials("https://github.com/a/b.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::Rejected);
        assert_eq!(auth.calls(), 2);
    }

    #[test]
    fn withholds_the_token_from_other_hosts_and_other_credential_types() {
        let auth = Auth::new(Some("t0ken"), github());
        assert!(auth.credentials("https://evil.example/a.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::OutOfScope);

        let auth = Auth::new(Some("t0ken"), github());
        assert!(auth.credentials("https://github.com/a.git", CredentialType::SSH_KEY).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::Unsupported);

        let auth = Auth::new(Some("t0ken"), TokenScope::origin_of("/tmp/base.git"));
        assert!(auth.credentials("file:///tmp/a.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::OutOfScope);
    }

    #[test]
    fn the_scope_is_scheme_host_port_and_for_submodules_the_owner() {
        let scope = TokenScope::owners_on("http://127.0.0.1:4000/Acme/widget.git", ["Acme".to_owned(), "libs".into()]);
        assert!(scope.allows("http://127.0.0.1:4000/acme/lib.git"));
        assert!(scope.allows("http://127.0.0.1:4000/LIBS/x.git"));
        for outside in [
            "http://127.0.0.1:4000/mallory/secret.git",
            "http://127.0.0.1:4001/acme/lib.git",
            "https://127.0.0.1:4000/acme/lib.git",
            "http://localhost:4000/acme/lib.git",
            "http://127.0.0.1:4000/acme/../mallory/secret.git",
            "http://127.0.0.1:4000",
        ] {
            assert!(!scope.allows(outside), "{outside}");
        }
        assert_eq!(scope.describe(), "repositories of acme, libs on http://127.0.0.1:4000");
        assert!(github().allows("https://github.com:443/anyone/x.git"));
        assert!(!github().allows("https://github.com:8443/acme/widget.git"));
    }

    #[test]
    fn no_token_is_reported_as_such() {
        let auth = Auth::new(Some(""), github());
        assert!(auth.credentials("https://github.com/a.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::NoToken);
    }
}
