//! The GitHub token, offered only as the answer to a server's 401 (`http_transport` asks).
//!
//! A server asks again when the token it was given is wrong; the answer counts: a second 401
//! means the token was rejected, and it stops there (libgit2's own transport replayed 15 times).
//! The token is only offered inside its [`TokenScope`]: the clone URL's scheme, host and port,
//! and for submodules only a repository the base branch's `.gitmodules` already names, or one
//! of an owner the person's config allows, so a `.gitmodules` entry the PR adds or redirects
//! (a relative `../other-private-repo.git` included) never receives it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use base64::Engine as _;

use super::url_policy::{Origin, origin_of, owner_of, repository_key};

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

/// Where the token may go: URLs of exactly this origin (scheme, host, port) and, when
/// `repositories` is set (submodules), only those repositories or repositories of `owners`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenScope {
    pub origin: Option<Origin>,
    /// `None`: any repository of the origin.
    pub repositories: Option<Vec<String>>,
    pub owners: Vec<String>,
}

impl TokenScope {
    /// Any repository of `clone_url`'s origin (the main fetch: the URL the API gave).
    pub(crate) fn origin_of(clone_url: &str) -> TokenScope {
        TokenScope { origin: origin_of(clone_url), repositories: None, owners: Vec::new() }
    }

    /// Submodules: the repositories of `named` (the base branch's `.gitmodules`, resolved) and
    /// any repository of `owners` (compared without case), on `clone_url`'s origin.
    pub(crate) fn submodules_of(
        clone_url: &str,
        named: impl IntoIterator<Item = String>,
        owners: impl IntoIterator<Item = String>,
    ) -> TokenScope {
        let mut repositories: Vec<String> = named.into_iter().filter_map(|url| repository_key(&url)).collect();
        repositories.sort();
        repositories.dedup();
        let mut owners: Vec<String> = owners.into_iter().map(|o| o.to_ascii_lowercase()).collect();
        owners.sort();
        owners.dedup();
        TokenScope { origin: origin_of(clone_url), repositories: Some(repositories), owners }
    }

    pub(crate) fn allows(&self, url: &str) -> bool {
        let Some(origin) = &self.origin else { return false };
        if origin_of(url).as_ref() != Some(origin) {
            return false;
        }
        match &self.repositories {
            None => true,
            Some(named) => {
                repository_key(url).is_some_and(|key| named.contains(&key))
                    || owner_of(url).is_some_and(|owner| self.owners.contains(&owner))
            }
        }
    }

    /// For messages: `the submodules the base branch names (1) and repositories of acme-libs
    /// on https://github.com:443`.
    pub(crate) fn describe(&self) -> String {
        let origin = self.origin.as_ref().map_or_else(|| "no host".to_owned(), Origin::to_string);
        match &self.repositories {
            None => format!("repositories on {origin}"),
            Some(named) => {
                let mut parts = vec![format!("the submodules the base branch's .gitmodules names ({})", named.len())];
                if !self.owners.is_empty() {
                    parts.push(format!("repositories of {}", self.owners.join(", ")));
                }
                format!("{} on {origin}", parts.join(" and "))
            }
        }
    }
}

/// The token for one fetch and what became of it. Clones share the record: the transport
/// answers with a clone while the fetch's caller reads the outcome from its own.
#[derive(Clone)]
pub(crate) struct Auth {
    inner: Rc<Inner>,
}

struct Inner {
    token: Option<String>,
    scope: TokenScope,
    calls: Cell<u32>,
    outcome: Cell<AuthOutcome>,
    /// The TLS failure of a server whose certificate is not trusted, in rustls' words.
    untrusted: RefCell<Option<String>>,
}

impl Auth {
    /// `scope`: where the token may be sent.
    pub(crate) fn new(token: Option<&str>, scope: TokenScope) -> Self {
        Auth {
            inner: Rc::new(Inner {
                token: token.filter(|t| !t.is_empty()).map(str::to_owned),
                scope,
                calls: Cell::new(0),
                outcome: Cell::new(AuthOutcome::NotAsked),
                untrusted: RefCell::new(None),
            }),
        }
    }

    /// How many times a server asked.
    pub(crate) fn calls(&self) -> u32 {
        self.inner.calls.get()
    }

    pub(crate) fn outcome(&self) -> AuthOutcome {
        self.inner.outcome.get()
    }

    pub(crate) fn scope(&self) -> &TokenScope {
        &self.inner.scope
    }

    /// A server's certificate was not trusted (noted by the transport, read by the classifier).
    pub(crate) fn note_untrusted(&self, detail: &str) {
        *self.inner.untrusted.borrow_mut() = Some(detail.to_owned());
    }

    /// Why a server's certificate was not trusted, if one was not.
    pub(crate) fn untrusted(&self) -> Option<String> {
        self.inner.untrusted.borrow().clone()
    }

    /// The answer to `url`'s 401: the `Authorization` header to retry with, or why there is
    /// none. `basic`: the server offered HTTP Basic authentication (the only kind a token is).
    pub(crate) fn answer(&self, url: &str, basic: bool) -> Result<String, &'static str> {
        let inner = &self.inner;
        inner.calls.set(inner.calls.get() + 1);
        let refuse = |outcome: AuthOutcome, why: &'static str| {
            inner.outcome.set(outcome);
            Err(why)
        };
        if inner.calls.get() > 1 {
            return refuse(AuthOutcome::Rejected, "the GitHub token was rejected");
        }
        if !basic {
            return refuse(AuthOutcome::Unsupported, "the server asked for credentials other than a token");
        }
        let Some(token) = &inner.token else {
            return refuse(AuthOutcome::NoToken, "authentication required and no GitHub token given");
        };
        if !inner.scope.allows(url) {
            return refuse(AuthOutcome::OutOfScope, "credentials requested outside the token's scope; token withheld");
        }
        inner.outcome.set(AuthOutcome::Offered);
        let pair = base64::engine::general_purpose::STANDARD.encode(format!("{TOKEN_USER}:{token}"));
        Ok(format!("Basic {pair}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASK: bool = true;

    fn github() -> TokenScope {
        TokenScope::origin_of("https://github.com/acme/widget.git")
    }

    #[test]
    fn offers_the_token_once_then_gives_up() {
        let auth = Auth::new(Some("t0ken"), github());
        let header = auth.answer("https://github.com/a/b.git", ASK).unwrap();
        assert_eq!(
            header,
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("x-access-token:t0ken"))
        );
        assert_eq!(auth.outcome(), AuthOutcome::Offered);
        assert!(auth.answer("https://github.com/a/b.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::Rejected);
        assert_eq!(auth.calls(), 2);
    }

    #[test]
    fn withholds_the_token_from_other_hosts_and_other_credential_types() {
        let auth = Auth::new(Some("t0ken"), github());
        assert!(auth.answer("https://evil.example/a.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::OutOfScope);

        let auth = Auth::new(Some("t0ken"), github());
        assert!(auth.answer("https://github.com/a.git", false).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::Unsupported);

        let auth = Auth::new(Some("t0ken"), TokenScope::origin_of("/tmp/base.git"));
        assert!(auth.answer("file:///tmp/a.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::OutOfScope);
    }

    #[test]
    fn the_scope_is_scheme_host_port_and_for_submodules_the_base_branchs_or_the_configured_owners() {
        let base = "http://127.0.0.1:4000/Acme/widget.git";
        let named = [
            "http://127.0.0.1:4000/acme/lib.git".to_owned(),
            super::super::url_policy::resolve_submodule_url(base, "../vendored"),
        ];
        let scope = TokenScope::submodules_of(base, named, ["Libs".to_owned()]);
        for inside in [
            "http://127.0.0.1:4000/acme/lib.git",
            "http://127.0.0.1:4000/ACME/Lib",
            "http://127.0.0.1:4000/acme/lib.git/",
            "http://127.0.0.1:4000/Acme/vendored.git",
            "http://127.0.0.1:4000/LIBS/x.git",
        ] {
            assert!(scope.allows(inside), "{inside}");
        }
        for outside in [
            // Same owner, not named by the base branch: a PR's `../other-private-repo.git`.
            "http://127.0.0.1:4000/acme/other-private-repo.git",
            "http://127.0.0.1:4000/mallory/secret.git",
            "http://127.0.0.1:4001/acme/lib.git",
            "https://127.0.0.1:4000/acme/lib.git",
            "http://localhost:4000/acme/lib.git",
            "http://127.0.0.1:4000/acme/../mallory/secret.git",
            "http://127.0.0.1:4000/acme/lib.git/../../mallory/secret.git",
            "http://127.0.0.1:4000",
        ] {
            assert!(!scope.allows(outside), "{outside}");
        }
        assert_eq!(
            scope.describe(),
            "the submodules the base branch's .gitmodules names (2) and repositories of libs on http://127.0.0.1:4000"
        );
        assert!(github().allows("https://github.com:443/anyone/x.git"));
        assert!(!github().allows("https://github.com:8443/acme/widget.git"));
    }

    #[test]
    fn relative_submodule_urls_resolve_as_git_does() {
        use super::super::url_policy::resolve_submodule_url as resolve;
        let base = "https://github.com/acme/widget.git";
        assert_eq!(resolve(base, "../lib.git"), "https://github.com/acme/lib.git");
        assert_eq!(resolve(base, "../../other/x.git"), "https://github.com/other/x.git");
        assert_eq!(resolve(base, "./sub"), "https://github.com/acme/widget.git/sub");
        assert_eq!(resolve(base, "../../../../x.git"), "https://github.com/x.git");
        assert_eq!(resolve(base, "https://example.org/a.git"), "https://example.org/a.git");
    }

    #[test]
    fn no_token_is_reported_as_such() {
        let auth = Auth::new(Some(""), github());
        assert!(auth.answer("https://github.com/a.git", ASK).is_err());
        assert_eq!(auth.outcome(), AuthOutcome::NoToken);
    }
}
