//! prepare() against real local repositories: detached checkout, incremental mirror fetches,
//! forks, deleted head branches, a moved head, URL policy and input validation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/checkout_fixture.rs"]
mod fixture;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use fixture::{Fixture, git, head_is_detached, status};
use forgeloop::checkout::{CheckoutError, prepare};

#[test]
fn checks_out_the_pr_head_detached_and_clean() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    fx.commit("src/lib.rs", "pub fn f() {}\n", "add lib");
    let sha = fx.push_pr(1);
    let url = fx.base_url();

    let co = prepare(&fx.request(&url, 1, &sha)).unwrap();
    assert_eq!(co.head_sha, sha);
    assert_eq!(co.pr_ref_sha, sha);
    let container = co.path().parent().unwrap();
    assert!(container.file_name().unwrap().to_str().unwrap().starts_with("forgeloop-checkout-"));
    // The working tree's .git is a file naming the git directory beside it, which a sandbox
    // can keep read-only while the tree is writable.
    assert!(co.path().join(".git").is_file());
    assert!(co.gitdir().join("HEAD").is_file());
    assert!(!co.gitdir().starts_with(co.path()));
    assert_eq!(std::fs::read_to_string(co.path().join("src/lib.rs")).unwrap(), "pub fn f() {}\n");
    assert_eq!(std::fs::read_to_string(co.path().join("README.md")).unwrap(), "hello\n");
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), sha);
    assert_eq!(git(co.path(), &["rev-parse", "HEAD^{tree}"]), co.tree_sha);
    assert!(head_is_detached(co.path()));
    assert_eq!(status(co.path()), "", "checkout must be clean");
    // libgit2 cannot fetch shallow from a local repository: file:// URLs fetch in full.
    assert_eq!((co.fetch.depth, co.fetch.shallow), (None, false));
    assert_eq!(git(co.path(), &["rev-list", "--count", "HEAD"]), "2");
    // No active hooks from a template directory end up in a checkout that tests run in
    // (libgit2's built-in template only writes inert `*.sample` files).
    for hook in std::fs::read_dir(co.gitdir().join("hooks")).unwrap() {
        let name = hook.unwrap().file_name().into_string().unwrap();
        assert!(name.ends_with(".sample"), "active hook {name} in the checkout");
    }
    // Full history is reachable through the mirror (tests may run git log/describe).
    assert_eq!(git(co.path(), &["rev-list", "--count", "HEAD"]), "2");
    // The mirror key is lowercase and the mirror is bare.
    assert_eq!(co.mirror, fx.mirrors.join("acme").join("widget.git"));
    assert_eq!(git(&co.mirror, &["rev-parse", "--is-bare-repository"]), "true");
    assert!(co.fetch.mirror_created && co.fetch.fetched && co.fetch.received_objects > 0);

    let dir = co.path().to_path_buf();
    drop(co);
    assert!(!dir.exists(), "dropping the checkout removes it");
    assert_eq!(fx.leftover_checkouts(), 0);
}

#[test]
fn later_iterations_fetch_only_new_objects() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    for i in 0..20 {
        fx.commit(&format!("dir{i}/file{i}.txt"), &format!("content {i}\n"), &format!("commit {i}"));
    }
    let first_sha = fx.push_pr(1);
    let url = fx.base_url();

    let first = prepare(&fx.request(&url, 1, &first_sha)).unwrap();
    assert!(first.fetch.fetched && first.fetch.mirror_created);
    // 21 commits, 21 root trees, 20 subtrees, 21 blobs.
    assert_eq!(first.fetch.received_objects, 83, "{:?}", first.fetch);
    drop(first);

    fx.commit("dir0/file0.txt", "changed\n", "fix");
    let second_sha = fx.push_pr(1);
    let second = prepare(&fx.request(&url, 1, &second_sha)).unwrap();
    assert!(second.fetch.fetched && !second.fetch.mirror_created);
    // Only the new commit, its root tree, the changed subtree and the new blob.
    assert_eq!(second.fetch.received_objects, 4, "{:?}", second.fetch);
    assert_eq!(std::fs::read_to_string(second.path().join("dir0/file0.txt")).unwrap(), "changed\n");
    assert_eq!(git(second.path(), &["rev-parse", "HEAD"]), second_sha);
    drop(second);

    let third = prepare(&fx.request(&url, 1, &second_sha)).unwrap();
    assert_eq!(third.fetch.received_objects, 0, "{:?}", third.fetch);
    assert!(!third.fetch.fetched, "nothing changed: {:?}", third.fetch);
    assert_eq!(status(third.path()), "");
}

#[test]
fn fork_pr_whose_commits_exist_only_in_the_fork_works() {
    let fx = Fixture::new();
    // The fork is a separate repository; its commit reaches the base only as refs/pull/7/head.
    let fork = fx.tmp.path().join("fork");
    git(fx.tmp.path(), &["clone", "-q", fx.base.to_str().unwrap(), fork.to_str().unwrap()]);
    std::fs::write(fork.join("fork.txt"), "from the fork\n").unwrap();
    git(&fork, &["add", "fork.txt"]);
    git(&fork, &["commit", "-q", "-m", "fork change"]);
    let sha = git(&fork, &["rev-parse", "HEAD"]);
    git(&fork, &["push", "-q", fx.base.to_str().unwrap(), "HEAD:refs/pull/7/head"]);
    assert!(git(&fx.base, &["branch", "--list"]).lines().all(|b| !b.contains("fork")));

    let url = fx.base_url();
    let co = prepare(&fx.request(&url, 7, &sha)).unwrap();
    assert_eq!(std::fs::read_to_string(co.path().join("fork.txt")).unwrap(), "from the fork\n");
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), sha);
}

#[test]
fn deleted_head_branch_still_works_through_the_pull_ref() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "topic"]);
    fx.commit("topic.txt", "topic\n", "topic");
    git(&fx.work, &["push", "-q", "base", "topic"]);
    let sha = fx.push_pr(3);
    git(&fx.work, &["push", "-q", "base", "--delete", "topic"]);
    assert_eq!(git(&fx.base, &["branch", "--list", "topic"]), "");

    let url = fx.base_url();
    let co = prepare(&fx.request(&url, 3, &sha)).unwrap();
    assert_eq!(std::fs::read_to_string(co.path().join("topic.txt")).unwrap(), "topic\n");
}

#[test]
fn moved_head_is_reported_and_leaves_no_checkout_behind() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    let old = fx.commit("a.txt", "1\n", "one");
    fx.push_pr(1);
    let new = fx.commit("a.txt", "2\n", "two");
    fx.push_pr(1);
    let url = fx.base_url();

    match prepare(&fx.request(&url, 1, &old)) {
        Err(CheckoutError::HeadMoved { expected, found }) => {
            assert_eq!(expected, old);
            assert_eq!(found, new);
        }
        other => panic!("expected HeadMoved, got {other:?}"),
    }
    assert_eq!(fx.leftover_checkouts(), 0);
    let err = prepare(&fx.request(&url, 1, &old)).unwrap_err().to_string();
    assert!(err.contains("moved") && err.contains("retry"), "{err}");

    // An upper-case SHA from the API is the same commit.
    let co = prepare(&fx.request(&url, 1, &new.to_uppercase())).unwrap();
    assert_eq!(co.head_sha, new);
}

#[test]
fn exact_sha_option_tests_an_older_head_the_mirror_already_has() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    let old = fx.commit("a.txt", "old\n", "one");
    fx.push_pr(1);
    let new = fx.commit("a.txt", "new\n", "two");
    fx.push_pr(1); // moved forward: `old` arrives as an ancestor of the new head

    let url = fx.base_url();
    assert!(matches!(prepare(&fx.request(&url, 1, &old)), Err(CheckoutError::HeadMoved { .. })));
    let mut req = fx.request(&url, 1, &old);
    req.fetch_exact_sha = true;
    let co = prepare(&req).unwrap();
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), old);
    assert_eq!(co.pr_ref_sha, new, "the caller learns the PR has moved on");
    assert_eq!(std::fs::read_to_string(co.path().join("a.txt")).unwrap(), "old\n");
    drop(co);

    // A SHA the server does not have still ends as HeadMoved (the local transport only serves
    // advertised history; fetching an unadvertised SHA is covered over HTTPS in checkout_https).
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let mut req = fx.request(&url, 1, missing);
    req.fetch_exact_sha = true;
    assert!(matches!(prepare(&req), Err(CheckoutError::HeadMoved { .. })));
    assert_eq!(fx.leftover_checkouts(), 0);
}

#[test]
fn refused_urls_touch_nothing() {
    let fx = Fixture::new();
    let sha = fx.push_pr(1);
    let local = fx.base_url();
    let path = fx.base.to_str().unwrap().to_owned();
    for (url, allow) in [
        ("ssh://git@github.com/acme/widget.git", true),
        ("git@github.com:acme/widget.git", true),
        ("ext::sh -c touch% /tmp/x", true),
        ("ext::git-remote-x", true),
        ("--upload-pack=/bin/false", true),
        (local.as_str(), false),
        (path.as_str(), false),
        ("http://127.0.0.1:1/r.git", false),
    ] {
        let mut req = fx.request(url, 1, &sha);
        req.allow_insecure_local = allow;
        match prepare(&req) {
            Err(CheckoutError::UrlRefused { .. }) => {}
            other => panic!("{url}: expected UrlRefused, got {other:?}"),
        }
    }
    assert!(!fx.mirrors.exists(), "no mirror (or lock) may be created for a refused URL");
    assert_eq!(fx.leftover_checkouts(), 0);

    // https is accepted by the policy: the failure comes later, from the network.
    let mut req = fx.request("https://127.0.0.1:1/acme/widget.git", 1, &sha);
    req.allow_insecure_local = false;
    match prepare(&req) {
        Err(CheckoutError::Network { .. }) => {}
        other => panic!("expected a network error, got {other:?}"),
    }
}

#[test]
fn bad_inputs_and_missing_things_get_clear_errors() {
    let fx = Fixture::new();
    let sha = fx.push_pr(1);
    let url = fx.base_url();

    assert!(matches!(prepare(&fx.request(&url, 1, "abc")), Err(CheckoutError::InvalidSha(_))));
    assert!(matches!(prepare(&fx.request(&url, 0, &sha)), Err(CheckoutError::InvalidPrNumber)));

    match prepare(&fx.request(&url, 99, &sha)) {
        Err(e @ CheckoutError::PrRefMissing { .. }) => assert!(e.to_string().contains("refs/pull/99/head"), "{e}"),
        other => panic!("expected PrRefMissing, got {other:?}"),
    }
    let gone = format!("file://{}/nope.git", fx.tmp.path().display());
    match prepare(&fx.request(&gone, 1, &sha)) {
        Err(CheckoutError::RepoNotFound { .. }) => {}
        other => panic!("expected RepoNotFound, got {other:?}"),
    }
    assert_eq!(fx.leftover_checkouts(), 0);
}

#[test]
fn a_set_cancel_flag_stops_before_fetching() {
    let fx = Fixture::new();
    let sha = fx.push_pr(1);
    let url = fx.base_url();
    let mut req = fx.request(&url, 1, &sha);
    req.cancel = Some(Arc::new(AtomicBool::new(true)));
    assert!(matches!(prepare(&req), Err(CheckoutError::Cancelled)));
    assert_eq!(fx.leftover_checkouts(), 0);
}

#[test]
fn keep_leaves_a_working_checkout_on_disk() {
    let fx = Fixture::new();
    let sha = fx.push_pr(1);
    let url = fx.base_url();
    let co = prepare(&fx.request(&url, 1, &sha)).unwrap();
    let dest = fx.checkouts.with_file_name("kept").join("one");
    let kept = co.keep(&dest).unwrap();
    assert_eq!(kept, dest);
    assert!(kept.join("README.md").is_file());
    // A .git of its own (no longer a file naming the run's git directory, which is gone).
    assert!(kept.join(".git").is_dir());
    assert_eq!(git(&kept, &["rev-parse", "HEAD"]), sha);
    assert_eq!(status(&kept), "");
    assert_eq!(fx.leftover_checkouts(), 0);
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn gitattributes_filters_still_apply() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    std::fs::create_dir_all(fx.work.join("docs")).unwrap();
    std::fs::write(fx.work.join("docs/.gitattributes"), "*.txt text eol=crlf\nid.c ident\n").unwrap();
    std::fs::write(fx.work.join("docs/a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(fx.work.join("docs/id.c"), "/* $Id$ */\n").unwrap();
    std::fs::write(fx.work.join("plain.txt"), "lf\n").unwrap();
    git(&fx.work, &["add", "-A"]);
    git(&fx.work, &["commit", "-q", "-m", "attributes"]);
    let sha = fx.push_pr(1);
    let url = fx.base_url();

    let co = prepare(&fx.request(&url, 1, &sha)).unwrap();
    assert_eq!(std::fs::read(co.path().join("docs/a.txt")).unwrap(), b"one\r\ntwo\r\n");
    let ident = std::fs::read_to_string(co.path().join("docs/id.c")).unwrap();
    assert!(ident.starts_with("/* $Id: ") && ident.len() > 50, "{ident}");
    assert_eq!(std::fs::read(co.path().join("plain.txt")).unwrap(), b"lf\n");
    assert_eq!(status(co.path()), "", "git agrees the filtered files are unmodified");
}
