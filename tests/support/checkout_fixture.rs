//! Real git repositories for the checkout tests, made with the git CLI in a temp dir.
//!
//! Layout: `base.git` (bare, the PR's base repository, with `refs/pull/N/head` pushed like
//! GitHub does), `work/` (a clone used to make commits). The git CLI runs with the user's and
//! system config ignored so results do not depend on the machine.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use forgeloop::checkout::CheckoutRequest;
use forgeloop::domain::pr_ref::RepoName;
use tempfile::TempDir;

pub fn git_cmd(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main"])
        .args(["-c", "protocol.file.allow=always", "-c", "advice.detachedHead=false"]);
    cmd
}

/// Runs git and returns trimmed stdout; panics with stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

pub struct Fixture {
    pub tmp: TempDir,
    pub base: PathBuf,
    pub work: PathBuf,
    pub mirrors: PathBuf,
    pub checkouts: PathBuf,
    pub repo: RepoName,
}

impl Fixture {
    /// A base repository with one commit on `main`.
    pub fn new() -> Fixture {
        let tmp = TempDir::new().unwrap();
        let base = tmp.path().join("base.git");
        let work = tmp.path().join("work");
        let mirrors = tmp.path().join("home").join("mirrors");
        let checkouts = tmp.path().join("checkouts");
        std::fs::create_dir_all(&checkouts).unwrap();
        git(tmp.path(), &["init", "-q", "--bare", base.to_str().unwrap()]);
        git(tmp.path(), &["init", "-q", work.to_str().unwrap()]);
        let fx = Fixture { tmp, base, work, mirrors, checkouts, repo: RepoName::parse("Acme/Widget").unwrap() };
        fx.commit("README.md", "hello\n", "initial");
        git(&fx.work, &["remote", "add", "base", fx.base.to_str().unwrap()]);
        git(&fx.work, &["push", "-q", "base", "main"]);
        fx
    }

    /// Writes `file` in the work repo and commits it on the current branch; returns the SHA.
    pub fn commit(&self, file: &str, content: &str, msg: &str) -> String {
        let path = self.work.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", msg]);
        git(&self.work, &["rev-parse", "HEAD"])
    }

    /// Pushes the work repo's HEAD as `refs/pull/N/head` of the base (what GitHub maintains).
    pub fn push_pr(&self, number: u64) -> String {
        git(&self.work, &["push", "-q", "-f", "base", &format!("HEAD:refs/pull/{number}/head")]);
        git(&self.work, &["rev-parse", "HEAD"])
    }

    pub fn base_url(&self) -> String {
        format!("file://{}", self.base.display())
    }

    pub fn request<'a>(&'a self, url: &'a str, pr: u64, sha: &'a str) -> CheckoutRequest<'a> {
        CheckoutRequest {
            mirrors_root: &self.mirrors,
            repo: &self.repo,
            clone_url: url,
            pr_number: pr,
            expected_sha: sha,
            token: None,
            allow_insecure_local: true,
            submodules: false,
            base_ref: None,
            submodule_token_owners: &[],
            fetch_exact_sha: false,
            history: forgeloop::domain::commands::History::Shallow,
            checkouts_root: Some(&self.checkouts),
            exact_dir: None,
            cancel: None,
            objects_for_others: false,
            tested: None,
        }
    }

    /// Entries left in the checkouts directory.
    pub fn leftover_checkouts(&self) -> usize {
        std::fs::read_dir(&self.checkouts).unwrap().count()
    }
}

/// `git status --porcelain` (with untracked files) of a checkout: empty means clean.
pub fn status(dir: &Path) -> String {
    git(dir, &["status", "--porcelain", "--untracked-files=all"])
}

/// True if HEAD is detached (not a symbolic ref to a branch).
pub fn head_is_detached(dir: &Path) -> bool {
    !git_cmd(dir).args(["symbolic-ref", "-q", "HEAD"]).status().unwrap().success()
}
