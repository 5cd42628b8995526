//! Pull-request metadata through GithubClient from the emulator: forks, deleted branches and
//! forks, closed/merged/draft PRs, odd SHAs, a head that moves between calls.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod github_support;

use forgeloop::github::{GithubError, PrState};
use github_emulator::Fault;
use github_support::{forge_repo, git_ok, setup};
use serde_json::json;

#[tokio::test]
async fn a_fork_pr_names_the_fork_and_its_commit_is_in_the_base_repository() {
    let s = setup().await;
    let base = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let fork = s.emulator.fork_repo(&base, "contrib").await.unwrap();
    let sha = s.emulator.commit_files(&fork, "fix", &[("fix.txt", "fixed\n")], "Fix").await.unwrap();
    let number = s.emulator.open_fork_pr(&base, &fork, "fix", "main", "Fix from a fork").await.unwrap();

    let pr = s.client().pull_request(&forge_repo(&base), number).await.unwrap();
    assert_eq!(pr.repository, forge_repo(&base));
    assert_eq!(pr.head_repository, Some(forge_repo(&fork)));
    assert_eq!(pr.head_sha, sha);
    assert_eq!(pr.base_clone_url, base.clone_url);
    // GitHub keeps refs/pull/N/head in the base repository, even for forks.
    assert_eq!(git_ok(&base.path, &["rev-parse", &format!("refs/pull/{number}/head")]).await, sha);

    // A later push to the fork's branch moves the PR.
    let next = s.emulator.commit_files(&fork, "fix", &[("fix.txt", "fixed again\n")], "Fix 2").await.unwrap();
    assert_eq!(s.client().pull_request(&forge_repo(&base), number).await.unwrap().head_sha, next);
    assert_eq!(git_ok(&base.path, &["rev-parse", &format!("refs/pull/{number}/head")]).await, next);
}

#[tokio::test]
async fn a_deleted_head_branch_keeps_the_pr_and_its_pull_ref() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let sha = s.emulator.commit_files(&repo, "feature", &[("a.txt", "a\n")], "A").await.unwrap();
    let number = s.emulator.open_pr(&repo, "feature", "main", "A").await.unwrap();
    s.emulator.delete_branch(&repo, "feature").await.unwrap();

    let pr = s.client().pull_request(&forge_repo(&repo), number).await.unwrap();
    assert_eq!((pr.head_ref.as_str(), pr.head_sha.as_str()), ("feature", sha.as_str()));
    assert!(git_ok(&repo.path, &["branch", "--list", "feature"]).await.is_empty());
    assert_eq!(git_ok(&repo.path, &["rev-parse", "refs/pull/1/head"]).await, sha);
}

#[tokio::test]
async fn a_deleted_fork_gives_no_head_repository_not_an_error() {
    let s = setup().await;
    let base = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let fork = s.emulator.fork_repo(&base, "contrib").await.unwrap();
    let sha = s.emulator.commit_files(&fork, "fix", &[("f", "1")], "Fix").await.unwrap();
    let number = s.emulator.open_fork_pr(&base, &fork, "fix", "main", "Fix").await.unwrap();
    s.emulator.delete_repo(&fork).await.unwrap();

    let pr = s.client().pull_request(&forge_repo(&base), number).await.unwrap();
    assert_eq!(pr.head_repository, None);
    assert_eq!(pr.head_sha, sha);
    assert_eq!(git_ok(&base.path, &["rev-parse", "refs/pull/1/head"]).await, sha);
}

#[tokio::test]
async fn closed_merged_and_draft_states_are_reported() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    for (i, branch) in ["one", "two", "three"].iter().enumerate() {
        s.emulator.commit_files(&repo, branch, &[(*branch, "x")], branch).await.unwrap();
        assert_eq!(s.emulator.open_pr(&repo, branch, "main", branch).await.unwrap(), i as u64 + 1);
    }
    s.emulator.close_pr(&repo, 1).unwrap();
    s.emulator.merge_pr(&repo, 2).unwrap();
    s.emulator.set_pr_draft(&repo, 3, true).unwrap();
    let client = s.client();

    let closed = client.pull_request(&forge_repo(&repo), 1).await.unwrap();
    assert_eq!((closed.state, closed.merged, closed.is_open()), (PrState::Closed, false, false));
    let merged = client.pull_request(&forge_repo(&repo), 2).await.unwrap();
    assert_eq!((merged.state, merged.merged), (PrState::Closed, true));
    let draft = client.pull_request(&forge_repo(&repo), 3).await.unwrap();
    assert_eq!((draft.state, draft.draft), (PrState::Open, true));
}

#[tokio::test]
async fn an_uppercase_sha_is_accepted_and_normalized() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let sha = s.emulator.commit_files(&repo, "feature", &[("a", "a")], "A").await.unwrap();
    s.emulator.open_pr(&repo, "feature", "main", "A").await.unwrap();
    s.emulator.override_pr_json(&repo, 1, json!({ "head": { "sha": sha.to_uppercase() } })).unwrap();
    assert_eq!(s.client().pull_request(&forge_repo(&repo), 1).await.unwrap().head_sha, sha);
}

#[tokio::test]
async fn unsafe_metadata_is_refused_with_a_clear_message() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let client = s.client();
    let cases = [
        (json!({ "head": { "sha": "abc1234" } }), "head.sha"),
        (json!({ "head": { "sha": "g".repeat(40) } }), "head.sha"),
        (json!({ "head": { "repo": { "full_name": "../etc" } } }), "head.repo.full_name"),
        (json!({ "head": { "ref": "--upload-pack=evil" } }), "head.ref"),
        (json!({ "base": { "repo": { "clone_url": "https://evil.example/acme/widget.git" } } }), "base.repo.clone_url"),
        (json!({ "state": "weird" }), "state"),
        (json!({ "head": { "sha": 42 } }), "expected"),
    ];
    for (i, (patch, needle)) in cases.into_iter().enumerate() {
        let branch = format!("case{i}");
        s.emulator.commit_files(&repo, &branch, &[("a", &branch)], "A").await.unwrap();
        let number = s.emulator.open_pr(&repo, &branch, "main", "A").await.unwrap();
        assert!(client.pull_request(&forge_repo(&repo), number).await.is_ok());
        s.emulator.override_pr_json(&repo, number, patch.clone()).unwrap();
        let err = client.pull_request(&forge_repo(&repo), number).await.unwrap_err();
        assert!(matches!(err, GithubError::InvalidResponse { .. }), "{patch}: {err}");
        assert!(err.to_string().contains(needle), "{patch}: {err}");
    }
}

#[tokio::test]
async fn the_head_can_move_between_two_reads() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let old = s.emulator.commit_files(&repo, "feature", &[("a", "1")], "1").await.unwrap();
    s.emulator.open_pr(&repo, "feature", "main", "A").await.unwrap();
    let new = s.emulator.commit_files(&repo, "other", &[("a", "2")], "2").await.unwrap();
    s.emulator.inject(Fault::MovePrHead { repo: "acme/widget".into(), number: 1, after_gets: 1, to_sha: new.clone() });
    let client = s.client();
    assert_eq!(client.pull_request(&forge_repo(&repo), 1).await.unwrap().head_sha, old);
    // Already moved before the next read: what a fetch right after the first read would see.
    assert_eq!(git_ok(&repo.path, &["rev-parse", "refs/pull/1/head"]).await, new);
    assert_eq!(client.pull_request(&forge_repo(&repo), 1).await.unwrap().head_sha, new);
    assert_eq!(s.emulator.pr_head(&repo, 1), Some(new));
}
