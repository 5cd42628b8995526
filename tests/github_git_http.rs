//! Smart-HTTP git against the emulator with the real git CLI: anonymous reads of public
//! repositories, token-only access to private ones, pushes that move PR heads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod github_support;

use base64::Engine;
use github_support::{forge_repo, git, git_ok, setup};

fn basic_header(token: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"));
    format!("http.extraHeader=Authorization: Basic {encoded}")
}

#[tokio::test]
async fn a_public_repository_clones_and_fetches_the_pull_ref_anonymously() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let sha = s.emulator.commit_files(&repo, "feature", &[("src/a.txt", "hello\n")], "Add a").await.unwrap();
    s.emulator.open_pr(&repo, "feature", "main", "Add a").await.unwrap();
    s.emulator.delete_branch(&repo, "feature").await.unwrap();

    let work = s.dir.path();
    git_ok(work, &["clone", "--quiet", &repo.clone_url, "checkout"]).await;
    let checkout = work.join("checkout");
    assert_eq!(std::fs::read_to_string(checkout.join("README.md")).unwrap(), "# widget\n");
    git_ok(&checkout, &["fetch", "--quiet", "origin", "refs/pull/1/head"]).await;
    assert_eq!(git_ok(&checkout, &["rev-parse", "FETCH_HEAD"]).await, sha);
    git_ok(&checkout, &["checkout", "--quiet", "--detach", &sha]).await;
    assert_eq!(std::fs::read_to_string(checkout.join("src/a.txt")).unwrap(), "hello\n");
    let git_requests = s.emulator.requests().into_iter().filter(|r| r.path.starts_with("/acme/widget.git/")).count();
    assert!(git_requests >= 4, "clone and fetch went over HTTP: {:?}", s.emulator.requests());
}

#[tokio::test]
async fn a_private_repository_needs_the_token() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "secret", true).await.unwrap();
    let sha = s.emulator.commit_files(&repo, "feature", &[("a", "a")], "A").await.unwrap();
    s.emulator.open_pr(&repo, "feature", "main", "A").await.unwrap();
    let work = s.dir.path();

    let anonymous = git(work, &["clone", "--quiet", &repo.clone_url, "anon"]).await;
    assert!(!anonymous.status.success());
    let wrong = git(work, &["-c", &basic_header("not-the-token"), "clone", "--quiet", &repo.clone_url, "wrong"]).await;
    assert!(!wrong.status.success());
    assert!(s.emulator.requests().iter().any(|r| r.status == 401));

    git_ok(work, &["-c", &basic_header(&s.token), "clone", "--quiet", &repo.clone_url, "header"]).await;
    let checkout = work.join("header");
    git_ok(&checkout, &["-c", &basic_header(&s.token), "fetch", "--quiet", "origin", "refs/pull/1/head"]).await;
    assert_eq!(git_ok(&checkout, &["rev-parse", "FETCH_HEAD"]).await, sha);

    // Credentials in the URL: git first asks anonymously, gets 401, then retries with them.
    let with_credentials = repo.clone_url.replacen("http://", &format!("http://x-access-token:{}@", s.token), 1);
    git_ok(work, &["clone", "--quiet", &with_credentials, "url"]).await;
    assert!(work.join("url/README.md").exists());
}

#[tokio::test]
async fn an_authenticated_push_moves_the_pr_head_and_an_anonymous_one_is_refused() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let first = s.emulator.commit_files(&repo, "feature", &[("a", "1")], "1").await.unwrap();
    s.emulator.open_pr(&repo, "feature", "main", "A").await.unwrap();
    let work = s.dir.path();
    git_ok(work, &["clone", "--quiet", "--branch", "feature", &repo.clone_url, "checkout"]).await;
    let checkout = work.join("checkout");
    std::fs::write(checkout.join("a"), "2").unwrap();
    git_ok(&checkout, &["commit", "--quiet", "-am", "2"]).await;
    let second = git_ok(&checkout, &["rev-parse", "HEAD"]).await;

    let anonymous = git(&checkout, &["push", "--quiet", "origin", "feature"]).await;
    assert!(!anonymous.status.success(), "pushing needs the token even to a public repository");
    assert_eq!(s.emulator.pr_head(&repo, 1), Some(first));

    git_ok(&checkout, &["-c", &basic_header(&s.token), "push", "--quiet", "origin", "feature"]).await;
    assert_eq!(s.emulator.pr_head(&repo, 1), Some(second.clone()));
    assert_eq!(git_ok(&repo.path, &["rev-parse", "refs/pull/1/head"]).await, second);
    let pr = s.client().pull_request(&forge_repo(&repo), 1).await.unwrap();
    assert_eq!(pr.head_sha, second);
}

#[tokio::test]
async fn unknown_and_deleted_repositories_are_not_served() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "gone", false).await.unwrap();
    let url = repo.clone_url.clone();
    s.emulator.delete_repo(&repo).await.unwrap();
    let work = s.dir.path();
    assert!(!git(work, &["ls-remote", &url]).await.status.success());
    let missing = url.replace("gone", "never");
    assert!(!git(work, &["ls-remote", &missing]).await.status.success());
    // A repository path escaping the root is not a repository name.
    let escape = format!("{}/acme/..%2F..%2Fetc.git/info/refs?service=git-upload-pack", s.emulator.api_base());
    assert!(!git(work, &["ls-remote", &escape]).await.status.success());
}
