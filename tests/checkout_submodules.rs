//! Submodules on request: recursive init+update (relative URLs resolved against the base
//! repository), and `.gitmodules` URLs from the PR go through the same URL policy.

#[path = "support/checkout_fixture.rs"]
mod fixture;

use std::path::{Path, PathBuf};

use fixture::{Fixture, git, status};
use forgeloop::checkout::{CheckoutError, prepare};

/// A bare repository beside base.git with one file committed (optionally with a submodule).
fn bare_repo(fx: &Fixture, name: &str, file: &str, submodule: Option<(&str, &str)>) -> PathBuf {
    let bare = fx.tmp.path().join(format!("{name}.git"));
    let work = fx.tmp.path().join(format!("{name}-work"));
    git(fx.tmp.path(), &["init", "-q", "--bare", bare.to_str().unwrap()]);
    git(fx.tmp.path(), &["init", "-q", work.to_str().unwrap()]);
    std::fs::write(work.join(file), format!("{name}\n")).unwrap();
    git(&work, &["add", "-A"]);
    if let Some((url, path)) = submodule {
        git(&work, &["remote", "add", "origin", bare.to_str().unwrap()]);
        git(&work, &["submodule", "add", "-q", url, path]);
    }
    git(&work, &["commit", "-q", "-m", name]);
    git(&work, &["push", "-q", bare.to_str().unwrap(), "HEAD:refs/heads/main"]);
    bare
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn submodules_are_checked_out_recursively_on_request() {
    let fx = Fixture::new();
    bare_repo(&fx, "leaf", "leaf.txt", None);
    // sub.git uses a relative URL for its own submodule: resolved against sub.git's origin.
    let sub = bare_repo(&fx, "sub", "lib.txt", Some(("../leaf.git", "deps/leaf")));
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    git(&fx.work, &["submodule", "add", "-q", sub.to_str().unwrap(), "vendor/sub"]);
    git(&fx.work, &["commit", "-q", "-m", "add submodule"]);
    let sha = fx.push_pr(1);
    let url = fx.base_url();

    let plain = prepare(&fx.request(&url, 1, &sha)).unwrap();
    assert!(plain.path().join(".gitmodules").is_file());
    assert!(!plain.path().join("vendor/sub/lib.txt").exists(), "submodules only on request");
    drop(plain);

    let mut req = fx.request(&url, 1, &sha);
    req.submodules = true;
    let co = prepare(&req).unwrap();
    assert_eq!(read(&co.path().join("vendor/sub/lib.txt")), "sub\n");
    assert_eq!(read(&co.path().join("vendor/sub/deps/leaf/leaf.txt")), "leaf\n");
    assert_eq!(status(co.path()), "", "superproject and submodules at their recorded commits");
    let recorded = git(co.path(), &["rev-parse", "HEAD:vendor/sub"]);
    assert_eq!(git(&co.path().join("vendor/sub"), &["rev-parse", "HEAD"]), recorded);
}

#[test]
fn a_submodule_url_outside_the_policy_is_refused() {
    let fx = Fixture::new();
    let sub = bare_repo(&fx, "sub", "lib.txt", None);
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    git(&fx.work, &["submodule", "add", "-q", sub.to_str().unwrap(), "vendor/sub"]);
    git(&fx.work, &["config", "-f", ".gitmodules", "submodule.vendor/sub.url", "ssh://git@example.invalid/x.git"]);
    git(&fx.work, &["commit", "-q", "-am", "submodule over ssh"]);
    let sha = fx.push_pr(1);
    let url = fx.base_url();

    let mut req = fx.request(&url, 1, &sha);
    req.submodules = true;
    match prepare(&req) {
        Err(e @ CheckoutError::Submodule { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("vendor/sub") && msg.contains("ssh is not supported"), "{msg}");
        }
        other => panic!("expected a refused submodule, got {other:?}"),
    }
    assert_eq!(fx.leftover_checkouts(), 0, "a failed prepare removes its directory");
}
