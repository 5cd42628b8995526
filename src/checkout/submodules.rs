//! Recursive submodule init+update with the same URL policy and token scoping as the main fetch.
//!
//! `.gitmodules` comes from the untrusted PR, so every resolved URL goes through the URL policy
//! before libgit2 sees it, and the token is only offered inside the submodule token scope: the
//! main clone URL's scheme, host and port, and a repository the **base** branch's
//! `.gitmodules` already names ([`named_by`], relative URLs resolved) or of an owner the config
//! names (`[checkout] submodule_token_owners`). Any other submodule is fetched without
//! credentials: a public one works, a private one fails saying why.
//! Submodules are cloned straight into the checkout (no mirror), so they are not incremental.

use std::sync::atomic::{AtomicBool, Ordering};

use git2::{AutotagOption, FetchOptions, RemoteCallbacks, Repository, SubmoduleUpdateOptions};

use super::auth::{Auth, AuthOutcome, TokenScope};
use super::error::{CheckoutError, scrub};
use super::url_policy::{check_clone_url, resolve_submodule_url};

/// Nesting deeper than this is refused (a cycle of submodules would otherwise recurse forever).
const MAX_DEPTH: usize = 8;

pub(crate) struct SubmoduleContext<'a> {
    pub token: Option<&'a str>,
    /// Where the token may be sent.
    pub token_scope: TokenScope,
    pub allow_insecure_local: bool,
    pub cancel: Option<&'a AtomicBool>,
}

/// The refspec that fetches the base branch `base` into the mirror, and the local ref it lands
/// in. The name comes from the API: anything that is not a plain branch name is refused.
pub(crate) fn base_refspec(base: &str) -> Result<(String, String), CheckoutError> {
    let full = format!("refs/heads/{base}");
    if base.contains([':', '*', '^', '~', '?', '[', '\\', ' ']) || !git2::Reference::is_valid_name(&full) {
        return Err(CheckoutError::Git { step: "base branch", detail: format!("{base:?} is not a branch name") });
    }
    let local = format!("refs/forgeloop/base/{base}");
    Ok((format!("+{full}:{local}"), local))
}

/// The submodule URLs the base branch's `.gitmodules` names, resolved against `clone_url` as
/// git resolves them. A base without `.gitmodules` names none.
pub(crate) fn named_by(mirror: &Repository, local_ref: &str, clone_url: &str) -> Result<Vec<String>, CheckoutError> {
    let fail =
        |e: git2::Error| CheckoutError::Git { step: "reading the base branch's .gitmodules", detail: e.to_string() };
    let commit = mirror.find_reference(local_ref).and_then(|r| r.peel_to_commit()).map_err(fail)?;
    let tree = commit.tree().map_err(fail)?;
    let Some(entry) = tree.get_name(".gitmodules") else { return Ok(Vec::new()) };
    let blob = mirror.find_blob(entry.id()).map_err(fail)?;
    Ok(urls_in(&String::from_utf8_lossy(blob.content()))
        .iter()
        .map(|url| resolve_submodule_url(clone_url, url))
        .collect())
}

/// The `url = …` values of a `.gitmodules` file (git's config syntax: sections, `key = value`,
/// `#`/`;` comments, optional quotes). Included files are not followed.
fn urls_in(text: &str) -> Vec<String> {
    let mut urls = Vec::new();
    let mut in_submodule = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_submodule = line.trim_start_matches('[').trim_start().starts_with("submodule");
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        if !in_submodule || !key.trim().eq_ignore_ascii_case("url") {
            continue;
        }
        let value = value.split([' ', '\t']).find(|part| !part.is_empty()).unwrap_or("");
        let value = value.split(['#', ';']).next().unwrap_or("").trim_matches('"');
        if !value.is_empty() {
            urls.push(value.to_owned());
        }
    }
    urls
}

/// Initialises and updates every submodule of `repo`, recursively.
pub(crate) fn update_all(repo: &Repository, ctx: &SubmoduleContext<'_>) -> Result<(), CheckoutError> {
    update_level(repo, ctx, 0)
}

fn update_level(repo: &Repository, ctx: &SubmoduleContext<'_>, depth: usize) -> Result<(), CheckoutError> {
    let submodules = repo
        .submodules()
        .map_err(|e| CheckoutError::Git { step: "reading .gitmodules", detail: scrub(e.message(), ctx.token) })?;
    for mut sm in submodules {
        let name = String::from_utf8_lossy(sm.name_bytes()).into_owned();
        let fail = |detail: String| CheckoutError::Submodule { name: name.clone(), detail };
        if depth >= MAX_DEPTH {
            return Err(fail(format!("submodules nested deeper than {MAX_DEPTH} levels are refused")));
        }
        if ctx.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(CheckoutError::Cancelled);
        }
        sm.init(false).map_err(|e| fail(format!("init failed: {}", scrub(e.message(), ctx.token))))?;
        // init resolved a relative URL against origin and stored it; check what will be fetched.
        let url = repo
            .config()
            .and_then(|c| c.get_string(&format!("submodule.{name}.url")))
            .map_err(|e| fail(format!("has no URL: {}", e.message())))?;
        check_clone_url(&url, ctx.allow_insecure_local).map_err(|e| fail(e.to_string()))?;

        let auth = Auth::new(ctx.token, ctx.token_scope.clone());
        let mut callbacks = RemoteCallbacks::new();
        let cancel = ctx.cancel;
        let not_cancelled = move || !cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        callbacks.transfer_progress(move |_| not_cancelled());
        callbacks.sideband_progress(move |_| not_cancelled());
        let mut fetch = FetchOptions::new();
        fetch.remote_callbacks(callbacks).download_tags(AutotagOption::None);
        let mut options = SubmoduleUpdateOptions::new();
        options.fetch(fetch).allow_fetch(true);
        super::http_transport::with_auth(&auth, || sm.update(false, Some(&mut options))).map_err(|e| {
            if !not_cancelled() {
                return CheckoutError::Cancelled;
            }
            let why = match auth.outcome() {
                AuthOutcome::NoToken => "it requires authentication and no GitHub token was given".to_owned(),
                AuthOutcome::Rejected => {
                    "the GitHub token was rejected (it lacks access to this repository)".to_owned()
                }
                AuthOutcome::OutOfScope => format!(
                    "it asked for credentials, and the GitHub token is only offered to {} (a submodule \
                     the PR adds or points elsewhere is fetched without credentials); if this repository \
                     is yours to test, add it to the base branch's .gitmodules, or its owner to \
                     `submodule_token_owners` under `[checkout]` in config.toml",
                    ctx.token_scope.describe()
                ),
                _ => scrub(e.message(), ctx.token),
            };
            fail(format!("update from {url:?} failed: {why}"))
        })?;

        let child = sm.open().map_err(|e| fail(format!("open failed: {}", e.message())))?;
        update_level(&child, ctx, depth + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_urls_of_a_gitmodules_file() {
        let text = "# deps\n[submodule \"a\"]\n\tpath = a\n\turl = ../lib.git\n[submodule \"b\"]\n\tURL = \"https://h/o/b.git\" ; pinned\n[core]\n\turl = nope\n";
        assert_eq!(urls_in(text), ["../lib.git", "https://h/o/b.git"]);
        assert!(base_refspec("main").is_ok());
        for bad in ["a:b", "*", "x y", "../x", ""] {
            assert!(base_refspec(bad).is_err(), "{bad:?}");
        }
    }
}
