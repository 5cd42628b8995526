//! Submodules on request: recursive init+update (relative URLs resolved against the base
//! repository), and `.gitmodules` URLs from the PR go through the same URL policy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

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

/// `--submodules` against the GitHub emulator, which requires the token for private
/// repositories and records which requests carried credentials.
mod token_scope {
    use super::*;
    use github_emulator::{Emulator, EmulatorConfig, RepoHandle};
    use tokio::runtime::Runtime;

    struct Env {
        tmp: tempfile::TempDir,
        rt: Runtime,
        main: Emulator,
        other_port: Emulator,
        token: String,
        widget: RepoHandle,
        repo: forgeloop::domain::pr_ref::RepoName,
    }

    /// A token made at run time (never a literal in the repository).
    fn fresh_token() -> String {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        format!("tok{}x{nanos}", std::process::id())
    }

    fn start(rt: &Runtime, root: PathBuf, token: &str) -> Emulator {
        let config = EmulatorConfig { root, token: Some(token.to_owned()), login: "acme".into(), admin_secret: None };
        rt.block_on(Emulator::start(config)).unwrap()
    }

    impl Env {
        fn new() -> Env {
            let tmp = tempfile::tempdir().unwrap();
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let token = fresh_token();
            // Two emulators with the same token: the same host, two ports.
            let main = start(&rt, tmp.path().join("main"), &token);
            let other_port = start(&rt, tmp.path().join("other"), &token);
            let widget = rt.block_on(main.create_repo("acme", "widget", true)).unwrap();
            let repo = forgeloop::domain::pr_ref::RepoName::parse("acme/widget").unwrap();
            Env { tmp, rt, main, other_port, token, widget, repo }
        }

        /// A private repository with one commit; returns its clone URL and head SHA.
        fn private_repo(&self, emulator: &Emulator, owner: &str, name: &str, private: bool) -> (String, String) {
            let handle = self.rt.block_on(emulator.create_repo(owner, name, private)).unwrap();
            (handle.clone_url.clone(), git(&handle.path, &["rev-parse", "refs/heads/main"]))
        }

        /// Opens PR `branch` on acme/widget whose only change is a submodule `vendor/sub` at
        /// `url`, recorded at `sha`; returns the PR's number and head SHA.
        fn pr_with_submodule(&self, branch: &str, url: &str, sha: &str) -> (u64, String) {
            self.commit_submodule(branch, url, sha);
            let number = self.rt.block_on(self.main.open_pr(&self.widget, branch, "main", branch)).unwrap();
            (number, self.main.pr_head(&self.widget, number).unwrap())
        }

        /// Commits `vendor/sub` at `url` (recorded at `sha`) on `branch` of acme/widget, made
        /// from main (or main itself).
        fn commit_submodule(&self, branch: &str, url: &str, sha: &str) {
            let work = self.tmp.path().join(format!("work-{branch}"));
            git(self.tmp.path(), &["clone", "-q", self.widget.path.to_str().unwrap(), work.to_str().unwrap()]);
            if branch != "main" {
                git(&work, &["checkout", "-q", "-b", branch]);
            }
            let gitmodules = format!("[submodule \"vendor/sub\"]\n\tpath = vendor/sub\n\turl = {url}\n");
            std::fs::write(work.join(".gitmodules"), gitmodules).unwrap();
            // Something of the branch's own, so a PR on a base with this submodule has a change.
            std::fs::write(work.join(format!("{branch}.txt")), branch).unwrap();
            git(&work, &["add", ".gitmodules", &format!("{branch}.txt")]);
            git(&work, &["update-index", "--add", "--cacheinfo", &format!("160000,{sha},vendor/sub")]);
            git(&work, &["commit", "-q", "-m", "add a submodule"]);
            git(&work, &["push", "-q", "origin", branch]);
        }

        fn checkout(
            &self,
            number: u64,
            sha: &str,
            owners: &[String],
        ) -> Result<forgeloop::checkout::Checkout, CheckoutError> {
            let checkouts = self.tmp.path().join("checkouts");
            std::fs::create_dir_all(&checkouts).unwrap();
            let mirrors = self.tmp.path().join("mirrors");
            prepare(&forgeloop::checkout::CheckoutRequest {
                mirrors_root: &mirrors,
                repo: &self.repo,
                clone_url: &self.widget.clone_url,
                pr_number: number,
                expected_sha: sha,
                token: Some(&self.token),
                allow_insecure_local: true,
                submodules: true,
                base_ref: Some("main"),
                submodule_token_owners: owners,
                fetch_exact_sha: false,
                history: forgeloop::domain::commands::History::Shallow,
                checkouts_root: Some(&checkouts),
                exact_dir: None,
                cancel: None,
                objects_for_others: false,
                tested: None,
            })
        }
    }

    /// (requests to `path_part`, how many of them carried credentials)
    fn seen(emulator: &Emulator, path_part: &str) -> (usize, usize) {
        let requests: Vec<_> = emulator.requests().into_iter().filter(|r| r.path.contains(path_part)).collect();
        (requests.len(), requests.iter().filter(|r| r.credentials).count())
    }

    fn out_of_scope(result: Result<forgeloop::checkout::Checkout, CheckoutError>) -> String {
        match result {
            Err(e @ CheckoutError::Submodule { .. }) => e.to_string(),
            other => panic!("expected the submodule to fail without the token, got {other:?}"),
        }
    }

    #[test]
    fn a_submodule_the_base_branch_already_names_gets_the_token() {
        let env = Env::new();
        let (url, sha) = env.private_repo(&env.main, "acme", "lib", true);
        env.commit_submodule("main", &url, &sha);
        let (n, head) = env.pr_with_submodule("same-submodule", &url, &sha);
        let co = env.checkout(n, &head, &[]).unwrap();
        assert_eq!(read(&co.path().join("vendor/sub/README.md")), "# lib\n");
        assert!(seen(&env.main, "/acme/lib.git").1 > 0, "the token went to acme/lib");
    }

    /// The review's attack: the PR's `.gitmodules` names `../other-private-repo.git` — same
    /// owner, same host, resolved against the clone URL — to pull another private repository
    /// into the test's output. The base branch names no such submodule: no token.
    #[test]
    fn a_submodule_the_pr_adds_never_gets_the_token_not_even_by_a_relative_url_of_the_same_owner() {
        let env = Env::new();
        let (_, sha) = env.private_repo(&env.main, "acme", "other-private-repo", true);
        let (n, head) = env.pr_with_submodule("relative", "../other-private-repo.git", &sha);
        let msg = out_of_scope(env.checkout(n, &head, &[]));
        let (requests, with_credentials) = seen(&env.main, "/acme/other-private-repo.git");
        assert!(requests > 0, "the submodule was asked for anonymously");
        assert_eq!(with_credentials, 0, "no request to acme/other-private-repo carried the token");
        assert!(msg.contains("base branch's .gitmodules"), "{msg}");
        assert!(!msg.contains(&env.token), "{msg}");
        // The person may allow the owner in config; the same PR then checks out.
        let co = env.checkout(n, &head, &["acme".to_owned()]).unwrap();
        assert_eq!(read(&co.path().join("vendor/sub/README.md")), "# other-private-repo\n");
    }

    #[test]
    fn a_private_submodule_of_another_owner_on_the_same_host_never_gets_the_token() {
        let env = Env::new();
        let (url, sha) = env.private_repo(&env.main, "mallory", "secret", true);
        let (n, head) = env.pr_with_submodule("other-owner", &url, &sha);
        let msg = out_of_scope(env.checkout(n, &head, &[]));
        let (requests, with_credentials) = seen(&env.main, "/mallory/secret.git");
        assert!(requests > 0, "the submodule was asked for anonymously");
        assert_eq!(with_credentials, 0, "no request to mallory/secret carried the token");
        assert!(msg.contains("names (0) on http://127.0.0.1:"), "{msg}");
        assert!(msg.contains("submodule_token_owners"), "{msg}");
        assert!(!msg.contains(&env.token), "{msg}");

        // Once the person names the owner in the config, the same PR checks out.
        let co = env.checkout(n, &head, &["Mallory".to_owned()]).unwrap();
        assert_eq!(read(&co.path().join("vendor/sub/README.md")), "# secret\n");
        assert!(seen(&env.main, "/mallory/secret.git").1 > 0);
    }

    #[test]
    fn a_private_submodule_on_the_same_host_but_another_port_never_gets_the_token() {
        let env = Env::new();
        let (url, sha) = env.private_repo(&env.other_port, "acme", "lib", true);
        let (n, head) = env.pr_with_submodule("other-port", &url, &sha);
        let msg = out_of_scope(env.checkout(n, &head, &[]));
        let (requests, with_credentials) = seen(&env.other_port, "/acme/lib.git");
        assert!(requests > 0, "the submodule was asked for anonymously");
        assert_eq!(with_credentials, 0, "no request to the other port carried the token");
        assert!(msg.contains(&format!("on http://127.0.0.1:{}", env.main.addr().port())), "{msg}");
    }

    #[test]
    fn a_public_submodule_of_another_owner_is_fetched_without_credentials() {
        let env = Env::new();
        let (url, sha) = env.private_repo(&env.main, "oss", "public", false);
        let (n, head) = env.pr_with_submodule("public", &url, &sha);
        let co = env.checkout(n, &head, &[]).unwrap();
        assert_eq!(read(&co.path().join("vendor/sub/README.md")), "# public\n");
        let (requests, with_credentials) = seen(&env.main, "/oss/public.git");
        assert!(requests > 0);
        assert_eq!(with_credentials, 0);
    }
}
