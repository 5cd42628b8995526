//! PR metadata GitHub (or something posing as it) could send, served by the emulator's
//! `override_pr_json` (design §5.2.1, §10). Outcomes:
//! * an uppercase head SHA is accepted and normalised to lowercase everywhere;
//! * a short head SHA, or a clone URL with another scheme, git's `ext::` transport, another
//!   host, or credentials, is refused as an infra failure with a message naming the field,
//!   before anything is fetched (no mirror) or run, and the cycle's iteration is unchanged;
//! * `head.repo: null` (a deleted fork) is still testable through `refs/pull/N/head`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;

use serde_json::{Value, json};
use support::world::{CALC_FIXED, World};

fn setup() -> (World, github_emulator::RepoHandle, u64, String) {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    (w, repo, n, head)
}

#[test]
fn an_uppercase_head_sha_is_accepted_and_normalised() {
    let (w, repo, n, head) = setup();
    w.emu.override_pr_json(&repo, n, json!({"head": {"sha": head.to_uppercase()}})).unwrap();
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "READY_TO_MERGE");
    assert_eq!(out["head_sha"], head.as_str());
    assert_eq!(out["report"]["head_sha"], head.as_str());
    assert_eq!(out["history"][0]["head_sha"], head.as_str());
    assert!(w.path(&format!("c.d/runs/1-{}.log", &head[..12])).is_file(), "the log is named by the lowercase SHA");
    let comments = w.comments(&repo, n);
    assert_eq!(comments.len(), 1);
    assert!(comments[0].lines().next().unwrap().contains(&format!("sha={head}")));
    assert!(!comments[0].contains(&head.to_uppercase()));
}

/// Runs `forge --pr` with the patch made by `patch(head_sha, api_host)` applied and expects an
/// infra failure whose message contains `needle`, with nothing fetched, run or posted.
fn refused(patch: impl Fn(&str, &str) -> Value, needle: &str) {
    let (w, repo, n, head) = setup();
    let api = w.emu.api_base();
    let host = api.split("://").nth(1).unwrap().split('/').next().unwrap().to_owned();
    let patch = patch(&head, &host);
    w.emu.override_pr_json(&repo, n, patch.clone()).unwrap();
    let before = w.sb.read_json(&w.path("c.json"));
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 2, "{patch}: {}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "INFRA_FAILURE", "{patch}");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains(needle), "{patch}: the error does not say {needle:?}: {error}");
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!(state["iteration"], 0);
    assert_eq!(state["infra_failures"], 1);
    assert_eq!(state["status"], before["status"], "an infra failure leaves the status");
    assert!(state["last_error"].as_str().unwrap().contains(needle));
    assert!(!w.sb.home().join("mirrors/acme/widget.git").exists(), "{patch}: something was fetched");
    assert!(w.comments(&repo, n).is_empty());
    assert!(!w.path("pwned").exists(), "{patch}: a transport ran a command");
    eprintln!("refused {patch}: {error}");
}

#[test]
fn a_short_head_sha_is_an_infra_failure_naming_the_field() {
    refused(|head, _| json!({"head": {"sha": &head[..7]}}), "head.sha");
    refused(|head, _| json!({"head": {"sha": format!("{}zz", &head[..38])}}), "40-hex-digit");
}

#[test]
fn clone_urls_with_another_scheme_host_or_credentials_are_refused_before_any_fetch() {
    for (url, needle) in [
        ("file:///etc", "is not http(s)"),
        ("ssh://git@HOST/acme/widget.git", "is not http(s)"),
        ("git://HOST/acme/widget.git", "is not http(s)"),
        ("ext::sh -c touch% pwned", "base.repo.clone_url"),
        ("ext::sh", "is not an absolute URL"),
        ("https://evil.example.com/acme/widget.git", "is not on"),
        ("http://user:pass@HOST/acme/widget.git", "carries credentials"),
    ] {
        refused(|_, host| json!({"base": {"repo": {"clone_url": url.replace("HOST", host)}}}), needle);
    }
}

#[test]
fn a_null_head_repository_is_still_testable() {
    let (w, repo, n, head) = setup();
    w.emu.override_pr_json(&repo, n, json!({"head": {"repo": null}})).unwrap();
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "READY_TO_MERGE", "{}", run.stdout);
    assert_eq!(out["report"]["head_sha"], head.as_str());
    assert!(out["report"]["head_repository"].is_null());
    let status = w.run(&["status", "--pr", &format!("acme/widget#{n}")]);
    assert_eq!(status.code, 0, "{}", status.stdout);
    assert!(fs::read_to_string(w.path(&format!("c.d/runs/1-{}.log", &head[..12]))).unwrap().contains("ok - 2+3=5"));
}
