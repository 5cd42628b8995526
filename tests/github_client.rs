//! GithubClient (octocrab) against the GitHub emulator over real HTTP on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod github_support;

use std::time::Duration;

use forgeloop::domain::pr_ref::RepoName;
use forgeloop::domain::text::Marker;
use forgeloop::github::{GithubClient, GithubConfig, GithubError, PrState};
use github_emulator::{CheckRun, Fault};
use github_support::{LOGIN, Setup, forge_repo, setup};

async fn repo_with_pr(s: &Setup) -> (RepoName, String) {
    let repo = s.emulator.create_repo("acme", "widget", true).await.unwrap();
    let sha = s.emulator.commit_files(&repo, "feature", &[("src/lib.rs", "fn main() {}\n")], "Add lib").await.unwrap();
    assert_eq!(s.emulator.open_pr(&repo, "feature", "main", "Add lib").await.unwrap(), 1);
    (forge_repo(&repo), sha)
}

fn marker(sha: &str) -> Marker {
    Marker { task_space: Some("webgpt-orchestrator:cycle".into()), iteration: Some(1), head_sha: sha.to_owned() }
}

#[tokio::test]
async fn every_read_method_round_trips() {
    let s = setup().await;
    let (repo, sha) = repo_with_pr(&s).await;
    let client = s.client();
    assert_eq!(client.web_host(), s.emulator.web_host());
    assert!(client.is_loopback());

    assert_eq!(client.authenticated_user().await.unwrap().login, LOGIN);

    let info = client.repository(&repo).await.unwrap();
    assert_eq!(info.full_name, repo);
    assert!(info.private);
    assert_eq!(info.default_branch, "main");
    assert_eq!(info.clone_url, format!("{}/acme/widget.git", s.emulator.api_base()));

    let pr = client.pull_request(&repo, 1).await.unwrap();
    assert_eq!((pr.number, pr.title.as_str(), pr.state), (1, "Add lib", PrState::Open));
    assert_eq!((pr.head_ref.as_str(), pr.base_ref.as_str()), ("feature", "main"));
    assert_eq!(pr.head_sha, sha);
    assert_eq!(pr.head_repository, Some(repo.clone()));
    assert!(!pr.merged && !pr.draft);
    assert_eq!(pr.html_url, format!("{}/acme/widget/pull/1", s.emulator.api_base()));
    assert_eq!(pr.base_clone_url, info.clone_url);

    s.emulator
        .set_check_runs(
            &sha,
            vec![
                CheckRun::completed("build", "success"),
                CheckRun::completed("test", "failure"),
                CheckRun::completed("lint", "neutral"),
                CheckRun { name: "slow".into(), status: "in_progress".into(), ..CheckRun::default() },
            ],
        )
        .unwrap();
    let checks = client.check_runs(&repo, &sha.to_uppercase()).await.unwrap();
    assert_eq!((checks.total, checks.success, checks.failure, checks.pending, checks.other), (4, 1, 1, 1, 1));
}

#[tokio::test]
async fn comments_are_created_updated_and_listed() {
    let s = setup().await;
    let (repo, _) = repo_with_pr(&s).await;
    let client = s.client();
    let created = client.create_comment(&repo, 1, "first").await.unwrap();
    assert_eq!((created.body.as_str(), created.author_login.as_str()), ("first", LOGIN));
    assert!(created.html_url.ends_with(&format!("/acme/widget/pull/1#issuecomment-{}", created.id)));
    let updated = client.update_comment(&repo, created.id, "second").await.unwrap();
    assert_eq!((updated.id, updated.body.as_str()), (created.id, "second"));
    let listed = client.issue_comments(&repo, 1).await.unwrap();
    assert_eq!(listed, vec![updated]);
    assert_eq!(s.emulator.comments(repo.full_name(), 1)[0].body, "second");
}

#[tokio::test]
async fn comment_listing_follows_pagination_across_three_pages() {
    let s = setup().await;
    let (repo, _) = repo_with_pr(&s).await;
    for i in 0..250 {
        s.emulator.add_comment(repo.full_name(), 1, "someone", &format!("comment {i}")).unwrap();
    }
    let comments = s.client().issue_comments(&repo, 1).await.unwrap();
    let bodies: Vec<String> = comments.iter().map(|c| c.body.clone()).collect();
    let expected: Vec<String> = (0..250).map(|i| format!("comment {i}")).collect();
    assert_eq!(bodies, expected);
    let pages: Vec<_> = s.emulator.requests().into_iter().filter(|r| r.path.ends_with("/issues/1/comments")).collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    // Pages 2 and 3 come from GitHub-style `Link` URLs (/repositories/{id}/...).
    assert!(pages[1].path.starts_with("/repositories/") && pages[2].query.contains("page=3"), "{pages:?}");
}

#[tokio::test]
async fn publish_comment_posts_once_then_updates_in_place() {
    let s = setup().await;
    let (repo, sha) = repo_with_pr(&s).await;
    let client = s.client();
    let marker = marker(&sha);
    let first_body = format!("{}\n## Forge Loop PR test: TEST_FAILED\nrun 1", marker.render());
    let second_body = format!("{}\n## Forge Loop PR test: TEST_FAILED\nrun 1, retried", marker.render());

    let first = client.publish_comment(&repo, 1, &marker, &first_body).await.unwrap();
    assert!(first.created);
    let second = client.publish_comment(&repo, 1, &marker, &second_body).await.unwrap();
    assert!(!second.created);
    assert_eq!(second.comment.id, first.comment.id);
    let third = client.publish_comment(&repo, 1, &marker, &second_body).await.unwrap();
    assert_eq!((third.created, third.comment.id), (false, first.comment.id));

    let comments = s.emulator.comments(repo.full_name(), 1);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].body, second_body);
    assert_eq!(s.count("POST", "/repos/acme/widget/issues/1/comments"), 1);
    let patch = format!("/repos/acme/widget/issues/comments/{}", first.comment.id);
    assert_eq!(s.count("PATCH", &patch), 1, "an unchanged body is left alone");

    // Another marker (the next iteration) gets its own comment.
    let next = Marker { iteration: Some(2), ..marker };
    let body = format!("{}\nrun 2", next.render());
    assert!(client.publish_comment(&repo, 1, &next, &body).await.unwrap().created);
    assert_eq!(s.emulator.comments(repo.full_name(), 1).len(), 2);
}

#[tokio::test]
async fn a_forged_marker_by_another_user_is_not_reused() {
    let s = setup().await;
    let (repo, sha) = repo_with_pr(&s).await;
    let marker = marker(&sha);
    let forged = format!("{}\nI am not forgeloop", marker.render());
    let forged_id = s.emulator.add_comment(repo.full_name(), 1, "mallory", &forged).unwrap();
    let body = format!("{}\nreal result", marker.render());
    let published = s.client().publish_comment(&repo, 1, &marker, &body).await.unwrap();
    assert!(published.created);
    assert_ne!(published.comment.id, forged_id);
    let comments = s.emulator.comments(repo.full_name(), 1);
    assert_eq!(comments.len(), 2);
    assert_eq!(comments[0].body, forged, "the other user's comment is untouched");
}

#[tokio::test]
async fn publish_comment_refuses_a_body_without_its_marker() {
    let s = setup().await;
    let (repo, sha) = repo_with_pr(&s).await;
    let err = s.client().publish_comment(&repo, 1, &marker(&sha), "no marker here").await.unwrap_err();
    assert!(matches!(err, GithubError::InvalidInput { .. }), "{err}");
    assert!(s.emulator.requests().is_empty(), "refused before any network call");
}

#[tokio::test]
async fn a_post_that_fails_is_never_retried() {
    let s = setup().await;
    let (repo, _) = repo_with_pr(&s).await;
    let path = "/repos/acme/widget/issues/1/comments";
    s.emulator.inject(Fault::Status { method: Some("POST".into()), path: path.into(), status: 500, times: 1 });
    let err = s.client().create_comment(&repo, 1, "hello").await.unwrap_err();
    assert!(matches!(err, GithubError::Server { status: 500, .. }), "{err}");
    assert!(err.is_transient());
    assert_eq!(s.count("POST", path), 1);
    assert!(s.emulator.comments(repo.full_name(), 1).is_empty());
}

#[tokio::test]
async fn a_get_that_fails_once_is_retried() {
    let s = setup().await;
    let (repo, sha) = repo_with_pr(&s).await;
    let path = "/repos/acme/widget/pulls/1";
    s.emulator.inject(Fault::Status { method: Some("GET".into()), path: path.into(), status: 502, times: 1 });
    assert_eq!(s.client().pull_request(&repo, 1).await.unwrap().head_sha, sha);
    let statuses: Vec<u16> = s.emulator.requests().iter().filter(|r| r.path == path).map(|r| r.status).collect();
    assert_eq!(statuses, vec![502, 200]);
}

#[tokio::test]
async fn a_get_failing_every_time_gives_up_after_three_attempts() {
    let s = setup().await;
    let (repo, _) = repo_with_pr(&s).await;
    s.emulator.inject(Fault::Status { method: None, path: "/repos/acme/*".into(), status: 503, times: 10 });
    let err = s.client().repository(&repo).await.unwrap_err();
    assert!(matches!(err, GithubError::Server { status: 503, .. }), "{err}");
    assert_eq!(s.count("GET", "/repos/acme/widget"), 3);
}

#[tokio::test]
async fn bad_credentials_say_what_to_do_and_never_show_the_token() {
    let s = setup().await;
    let wrong = github_support::fresh_token() + "wrong";
    let client = s.client_with(Some(wrong.clone()), Duration::from_secs(20));
    let err = client.authenticated_user().await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, GithubError::Unauthorized { .. }), "{text}");
    assert!(text.contains("token") && text.contains("GH_TOKEN") && text.contains("Bad credentials"), "{text}");
    assert!(!text.contains(&wrong) && !format!("{err:?}").contains(&wrong));
    assert_eq!(s.count("GET", "/user"), 1, "401 is not retried");

    let anonymous = s.client_with(None, Duration::from_secs(20));
    assert!(matches!(anonymous.authenticated_user().await, Err(GithubError::Unauthorized { .. })));
}

#[tokio::test]
async fn injected_401_is_reported_as_a_token_problem() {
    let s = setup().await;
    s.emulator.inject(Fault::Status { method: None, path: "/user".into(), status: 401, times: 1 });
    let err = s.client().authenticated_user().await.unwrap_err();
    assert!(err.to_string().contains("token is missing, expired or invalid"), "{err}");
}

#[tokio::test]
async fn not_found_mentions_access() {
    let s = setup().await;
    let missing = RepoName::parse("acme/nothing").unwrap();
    let err = s.client().repository(&missing).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, GithubError::NotFound { .. }), "{text}");
    assert!(text.contains("cannot access acme/nothing"), "{text}");
    let err = s.client().pull_request(&missing, 3).await.unwrap_err();
    assert!(err.to_string().contains("reading pull request acme/nothing#3"), "{err}");
}

#[tokio::test]
async fn rate_limit_says_when_it_resets_and_is_not_waited_out() {
    let s = setup().await;
    let (repo, _) = repo_with_pr(&s).await;
    s.emulator.inject(Fault::RateLimit {
        method: None,
        path: "/repos/acme/widget/pulls/1".into(),
        times: 1,
        reset_after_secs: 3600,
        status: 403,
    });
    let err = s.client().pull_request(&repo, 1).await.unwrap_err();
    let text = err.to_string();
    let GithubError::RateLimited { reset_at: Some(at), status: 403, .. } = &err else { panic!("{text}") };
    let minutes = (*at - chrono::Utc::now()).num_minutes();
    assert!((55..=60).contains(&minutes), "{minutes}");
    assert!(text.contains("resets at") && text.contains(&at.format("%H:%M:%S").to_string()), "{text}");
    assert_eq!(s.count("GET", "/repos/acme/widget/pulls/1"), 1);
}

#[tokio::test]
async fn a_429_that_resets_at_once_is_retried_for_gets() {
    let s = setup().await;
    let (repo, _) = repo_with_pr(&s).await;
    let path = "/repos/acme/widget";
    s.emulator.inject(Fault::RateLimit { method: None, path: path.into(), times: 1, reset_after_secs: 0, status: 429 });
    assert!(s.client().repository(&repo).await.is_ok());
    assert_eq!(s.count("GET", path), 2);
}

#[tokio::test]
async fn a_slow_answer_is_a_timeout() {
    let s = setup().await;
    s.emulator.inject(Fault::Delay { method: None, path: "/user".into(), delay_ms: 5_000, times: 1 });
    let client = s.client_with(Some(s.token.clone()), Duration::from_millis(300));
    let err = client.authenticated_user().await.unwrap_err();
    assert!(matches!(err, GithubError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("no answer from"), "{err}");
    assert_eq!(s.count("GET", "/user"), 1, "a timeout is not retried");
}

#[tokio::test]
async fn a_refused_connection_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let client = GithubClient::new(GithubConfig {
        api_base: format!("http://127.0.0.1:{port}"),
        token: None,
        timeout: Duration::from_secs(10),
    })
    .unwrap();
    let err = client.authenticated_user().await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, GithubError::Unreachable { .. }), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")) && text.to_lowercase().contains("refused"), "{text}");
}

#[tokio::test]
async fn create_repository_is_idempotent_and_checks_visibility() {
    let s = setup().await;
    let client = s.client();
    let first = client.create_repository(None, "fresh", true).await.unwrap();
    assert_eq!(first.full_name.full_name(), format!("{LOGIN}/fresh"));
    assert!(first.private);
    let second = client.create_repository(Some(LOGIN), "fresh", true).await.unwrap();
    assert_eq!(second, first);
    assert_eq!(s.count("POST", "/user/repos"), 2);
    // auto_init: a base branch exists.
    let repo = first.full_name.clone();
    assert!(s.emulator.commit_files(repo.full_name(), "feature", &[("a", "b")], "m").await.is_ok());
    assert!(s.emulator.open_pr(repo.full_name(), "feature", "main", "t").await.is_ok());

    let err = client.create_repository(None, "fresh", false).await.unwrap_err();
    assert!(matches!(err, GithubError::Visibility { wanted: "public", actual: "private", .. }), "{err}");

    let org = client.create_repository(Some("acme-org"), "tool", false).await.unwrap();
    assert_eq!((org.full_name.full_name().as_str(), org.private), ("acme-org/tool", false));
    assert_eq!(s.count("POST", "/orgs/acme-org/repos"), 1);

    let err = client.create_repository(None, "../evil", true).await.unwrap_err();
    assert!(matches!(err, GithubError::InvalidInput { .. }), "{err}");
}

#[tokio::test]
async fn an_enterprise_style_api_path_works() {
    let s = setup().await;
    let (repo, sha) = repo_with_pr(&s).await;
    for _ in 0..120 {
        s.emulator.add_comment(repo.full_name(), 1, "someone", "x").unwrap();
    }
    let client = GithubClient::new(GithubConfig {
        api_base: format!("{}/api/v3/", s.emulator.api_base()),
        token: Some(s.token.clone()),
        timeout: Duration::from_secs(20),
    })
    .unwrap();
    assert_eq!(client.web_host(), s.emulator.web_host());
    assert_eq!(client.pull_request(&repo, 1).await.unwrap().head_sha, sha);
    assert_eq!(client.issue_comments(&repo, 1).await.unwrap().len(), 120);
    assert!(s.emulator.requests().iter().all(|r| r.path.starts_with("/api/v3/")), "{:?}", s.emulator.requests());
}
