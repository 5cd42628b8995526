//! Shallow, incremental fetches over smart HTTP (design §5.2.2), through the GitHub emulator
//! (`git http-backend` on 127.0.0.1): the first iteration fetches the PR head at depth 1, later
//! ones only what is new, a full-history profile deepens the mirror in place.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/checkout_fixture.rs"]
mod fixture;

use std::path::{Path, PathBuf};

use fixture::{git, status};
use forgeloop::checkout::{Checkout, CheckoutError, CheckoutRequest, prepare};
use forgeloop::domain::commands::History;
use forgeloop::domain::pr_ref::RepoName;
use github_emulator::{Emulator, EmulatorConfig, RepoHandle};
use tokio::runtime::Runtime;

const HISTORY: usize = 30;

struct Env {
    tmp: tempfile::TempDir,
    rt: Runtime,
    emulator: Emulator,
    widget: RepoHandle,
    repo: RepoName,
}

impl Env {
    /// acme/widget (public) with `HISTORY` commits on main, each changing a few files, plus a
    /// `v1.0` tag on the first of them and PR #1 from `feature` with one commit.
    fn new() -> (Env, u64) {
        let tmp = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let config =
            EmulatorConfig { root: tmp.path().join("emu"), token: None, login: "acme".into(), admin_secret: None };
        let emulator = rt.block_on(Emulator::start(config)).unwrap();
        let widget = rt.block_on(emulator.create_repo("acme", "widget", false)).unwrap();
        for i in 0..HISTORY {
            let (a, b) = (format!("src/m{}.rs", i % 7), format!("docs/{i}.md"));
            let (ca, cb) = (format!("pub const V: usize = {i};\n"), format!("change {i}\n"));
            rt.block_on(emulator.commit_files(&widget, "main", &[(&a, &ca), (&b, &cb)], &format!("c{i}"))).unwrap();
            if i == 0 {
                git(&widget.path, &["tag", "-a", "v1.0", "-m", "first release", "main"]);
            }
        }
        rt.block_on(emulator.commit_files(&widget, "feature", &[("src/feature.rs", "pub fn f() {}\n")], "feature"))
            .unwrap();
        let number = rt.block_on(emulator.open_pr(&widget, "feature", "main", "feature")).unwrap();
        let repo = RepoName::parse("acme/widget").unwrap();
        (Env { tmp, rt, emulator, widget, repo }, number)
    }

    fn mirrors(&self) -> PathBuf {
        self.tmp.path().join("mirrors")
    }

    fn mirror(&self) -> PathBuf {
        self.mirrors().join("acme").join("widget.git")
    }

    fn head(&self, number: u64) -> String {
        self.emulator.pr_head(&self.widget, number).unwrap()
    }

    /// One new commit on the PR's branch; returns the new head.
    fn push(&self, number: u64, file: &str, content: &str) -> String {
        self.rt.block_on(self.emulator.commit_files(&self.widget, "feature", &[(file, content)], file)).unwrap();
        self.head(number)
    }

    fn checkout(&self, number: u64, history: History) -> Checkout {
        self.try_checkout(number, &self.head(number), history, false).unwrap()
    }

    fn try_checkout(&self, number: u64, sha: &str, history: History, exact: bool) -> Result<Checkout, CheckoutError> {
        let checkouts = self.checkouts();
        std::fs::create_dir_all(&checkouts).unwrap();
        let mirrors = self.mirrors();
        prepare(&CheckoutRequest {
            mirrors_root: &mirrors,
            repo: &self.repo,
            clone_url: &self.widget.clone_url,
            pr_number: number,
            expected_sha: sha,
            token: None,
            allow_insecure_local: true,
            submodules: false,
            base_ref: None,
            submodule_token_owners: &[],
            fetch_exact_sha: exact,
            checkouts_root: Some(&checkouts),
            exact_dir: None,
            history,
            cancel: None,
            objects_for_others: false,
            tested: None,
        })
    }

    fn checkouts(&self) -> PathBuf {
        self.tmp.path().join("checkouts")
    }
}

fn commit_count(dir: &Path) -> usize {
    git(dir, &["rev-list", "--count", "HEAD"]).parse().unwrap()
}

#[test]
fn the_first_iteration_fetches_only_the_pr_head_and_later_ones_only_what_is_new() {
    let (env, number) = Env::new();
    let first = env.checkout(number, History::Shallow);
    assert_eq!(first.head_sha, env.head(number));
    assert_eq!(first.fetch.depth, Some(1));
    assert!(first.fetch.mirror_created && first.fetch.shallow && !first.fetch.deepened);
    assert!(git2::Repository::open_bare(env.mirror()).unwrap().is_shallow());
    // One commit, its trees and its blobs: 1 + (root, src, docs) + 7 + 30 + 1 + README.
    eprintln!("first iteration: {:?}", first.fetch);
    assert!(first.fetch.received_objects <= 45, "{:?}", first.fetch);
    // The checkout is a clean, shallow repository: git log stops at the PR head.
    assert_eq!(status(first.path()), "");
    assert_eq!(commit_count(first.path()), 1);
    assert_eq!(git(first.path(), &["rev-parse", "--is-shallow-repository"]), "true");
    assert_eq!(std::fs::read_to_string(first.path().join("src/feature.rs")).unwrap(), "pub fn f() {}\n");
    drop(first);

    // Second iteration: the new head's parent is the old head; only the new commit, the trees
    // on the changed path and the one new blob travel.
    let new_head = env.push(number, "src/feature.rs", "pub fn f() -> u8 { 1 }\n");
    let second = env.checkout(number, History::Shallow);
    eprintln!("second iteration: {:?}", second.fetch);
    assert_eq!(second.head_sha, new_head);
    assert_eq!((second.fetch.depth, second.fetch.mirror_created, second.fetch.fetched), (Some(1), false, true));
    assert!(second.fetch.received_objects <= 4, "{:?}", second.fetch);
    assert_eq!(std::fs::read_to_string(second.path().join("src/feature.rs")).unwrap(), "pub fn f() -> u8 { 1 }\n");
    assert_eq!(status(second.path()), "");
    drop(second);

    // A rerun of the same head fetches next to nothing.
    let again = env.checkout(number, History::Shallow);
    eprintln!("same head again: {:?}", again.fetch);
    assert!(!again.fetch.fetched && again.fetch.received_objects <= 4, "{:?}", again.fetch);
    assert_eq!(status(again.path()), "");
}

#[test]
fn a_full_history_profile_deepens_the_shallow_mirror_in_place() {
    let (env, number) = Env::new();
    let shallow = env.checkout(number, History::Shallow);
    assert!(shallow.fetch.shallow);
    drop(shallow);
    // A marker in the mirror: it survives only if the mirror is deepened, not recloned.
    let marker = env.mirror().join("marker-of-this-test");
    std::fs::write(&marker, "kept\n").unwrap();

    let full = env.checkout(number, History::Full);
    eprintln!("deepening: {:?}", full.fetch);
    assert!(full.fetch.deepened && !full.fetch.shallow && full.fetch.depth.is_none(), "{:?}", full.fetch);
    assert!(!full.fetch.mirror_created);
    assert!(marker.exists(), "the mirror was recloned");
    assert!(!git2::Repository::open_bare(env.mirror()).unwrap().is_shallow());
    // The whole history and the tags: git describe works in the checkout.
    assert_eq!(commit_count(full.path()), HISTORY + 2);
    assert_eq!(git(full.path(), &["rev-parse", "--is-shallow-repository"]), "false");
    let described = git(full.path(), &["describe"]);
    assert!(described.starts_with(&format!("v1.0-{}-g", HISTORY)), "{described}");
    assert_eq!(status(full.path()), "");
    drop(full);

    // A full mirror stays full for shallow profiles too (no re-shallowing, small increments).
    let new_head = env.push(number, "src/feature.rs", "pub fn f() -> u8 { 2 }\n");
    let later = env.checkout(number, History::Shallow);
    assert_eq!(later.head_sha, new_head);
    assert!(!later.fetch.shallow && later.fetch.depth.is_none() && later.fetch.received_objects <= 4);
    assert_eq!(commit_count(later.path()), HISTORY + 3);
}

#[test]
fn a_full_history_profile_on_a_new_mirror_fetches_everything_once() {
    let (env, number) = Env::new();
    let full = env.checkout(number, History::Full);
    assert!(full.fetch.mirror_created && !full.fetch.deepened && !full.fetch.shallow);
    assert_eq!(commit_count(full.path()), HISTORY + 2);
    assert!(git(full.path(), &["describe"]).starts_with("v1.0-"));
}

#[test]
fn a_force_pushed_head_is_fetched_at_depth_one_again() {
    let (env, number) = Env::new();
    drop(env.checkout(number, History::Shallow));
    // The PR is rewritten onto another line of history (a rebase): its new head does not
    // descend from the old one.
    let main = git(&env.widget.path, &["rev-parse", "main~5"]);
    env.rt.block_on(env.emulator.set_pr_head(&env.widget, number, &main)).unwrap();
    let moved = env.checkout(number, History::Shallow);
    assert_eq!(moved.head_sha, main);
    assert!(moved.fetch.shallow && moved.fetch.depth == Some(1));
    assert_eq!(commit_count(moved.path()), 1);
    assert_eq!(status(moved.path()), "");
}

#[test]
fn concurrent_shallow_and_full_checkouts_share_one_new_mirror() {
    let (env, number) = Env::new();
    let head = env.head(number);
    let results: Vec<(History, Checkout)> = std::thread::scope(|scope| {
        let workers: Vec<_> = [History::Shallow, History::Full, History::Shallow, History::Shallow]
            .into_iter()
            .map(|history| {
                let env = &env;
                scope.spawn(move || (history, env.checkout(number, history)))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|(_, co)| co.fetch.mirror_created).count(), 1);
    for (history, co) in &results {
        assert_eq!(co.head_sha, head);
        assert_eq!(status(co.path()), "", "{history:?}");
        if *history == History::Full {
            assert_eq!(commit_count(co.path()), HISTORY + 2);
        }
    }
    // Whichever ran first, the full profile left a mirror with the whole history.
    assert!(!git2::Repository::open_bare(env.mirror()).unwrap().is_shallow());
}

#[test]
fn a_head_that_moved_after_the_api_call_is_refused_or_fetched_by_sha_at_depth_one() {
    let (env, number) = Env::new();
    let old = env.head(number);
    // The PR moves on between the API call and the fetch.
    let new = env.push(number, "src/feature.rs", "pub fn f() -> u8 { 3 }\n");
    match env.try_checkout(number, &old, History::Shallow, false) {
        Err(CheckoutError::HeadMoved { expected, found }) => assert_eq!((expected, found), (old.clone(), new)),
        other => panic!("expected HeadMoved, got {other:?}"),
    }
    assert_eq!(std::fs::read_dir(env.checkouts()).unwrap().count(), 0, "no checkout is left behind");
    // A server that lets clients fetch any reachable commit (as GitHub does): the old head,
    // which a depth-1 mirror does not have, is fetched by its SHA, still at depth 1.
    git(&env.widget.path, &["config", "uploadpack.allowReachableSHA1InWant", "true"]);
    let rescued = env.try_checkout(number, &old, History::Shallow, true).unwrap();
    assert_eq!(rescued.head_sha, old);
    assert!(rescued.fetch.shallow && rescued.fetch.depth == Some(1));
    assert_eq!(commit_count(rescued.path()), 1);
    assert_eq!(status(rescued.path()), "");
}

#[test]
fn a_checkout_kept_from_a_mirror_that_gc_deleted_stops_working() {
    let (env, number) = Env::new();
    let kept = env.checkout(number, History::Shallow).keep(&env.checkouts().with_file_name("kept")).unwrap();
    assert!(fixture::git_cmd(&kept).args(["cat-file", "-e", "HEAD^{tree}"]).status().unwrap().success());
    let outcome = forgeloop::checkout::collect_mirrors(&env.mirrors(), 0, std::time::SystemTime::now(), false).unwrap();
    assert_eq!(outcome.removed.len(), 1);
    assert!(!env.mirror().exists());
    // The kept checkout borrowed its objects from the mirror.
    assert!(!fixture::git_cmd(&kept).args(["cat-file", "-e", "HEAD^{tree}"]).status().unwrap().success());
    std::fs::remove_dir_all(kept).unwrap();
}

/// A fetch killed mid-way (SIGKILL, a power cut) leaves git's lock files in the mirror; the next
/// fetch, under forgeloop's mirror lock, removes them instead of failing on them for ever ("failed
/// to lock file … shallow.lock": the crash test's 500 kills once hit that window and the cycle
/// went to BLOCKED_INFRA).
#[test]
fn lock_files_left_by_a_killed_fetch_do_not_block_the_next_one() {
    let (env, number) = Env::new();
    drop(env.checkout(number, History::Shallow));
    let mirror = env.mirror();
    let stale = [
        mirror.join("shallow.lock"),
        mirror.join("packed-refs.lock"),
        mirror.join("FETCH_HEAD.lock"),
        mirror.join("refs/forgeloop/pull/1.lock"),
    ];
    for path in &stale {
        std::fs::write(path, "").unwrap();
    }
    let new_head = env.push(number, "src/feature.rs", "pub fn f() -> u8 { 2 }\n");
    let next = env.try_checkout(number, &new_head, History::Shallow, false).expect("the next fetch goes through");
    assert_eq!(next.head_sha, new_head);
    assert_eq!(std::fs::read_to_string(next.path().join("src/feature.rs")).unwrap(), "pub fn f() -> u8 { 2 }\n");
    for path in &stale {
        assert!(!path.exists(), "{} is gone", path.display());
    }
    assert!(mirror.join("HEAD").exists() && mirror.join("config").exists(), "git's own files stay");
}
