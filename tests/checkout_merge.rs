//! What a run tests (design §5.2.1), made by the checkout adapter over smart HTTP against the
//! GitHub emulator: the merge of the PR's head into its base branch's tip — GitHub's own
//! `refs/pull/N/merge` when it was computed against the tip fetched, else git's, against a
//! merge base found in a shallow mirror through the commits' own headers or by deepening; the
//! head alone on request; the paths the person holds as the base tip has them; the change
//! against the base tip from the mirror; a conflict named path by path, git's conflicts
//! (a directory rename) included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/checkout_fixture.rs"]
mod fixture;

use std::path::{Path, PathBuf};

use fixture::git;
use forgeloop::checkout::{Checkout, CheckoutError, CheckoutRequest, TestedSpec, judge, prepare};
use forgeloop::domain::commands::{CommandsProfile, History, TreeMode, parse_commands};
use forgeloop::domain::pr_ref::RepoName;
use github_emulator::{Emulator, EmulatorConfig, RepoHandle};
use tokio::runtime::Runtime;

struct Env {
    tmp: tempfile::TempDir,
    rt: Runtime,
    emulator: Emulator,
    widget: RepoHandle,
    repo: RepoName,
    commands: CommandsProfile,
}

impl Env {
    /// acme/widget with `t.sh` (sourcing `lib.sh`) and 30 commits of history on main.
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let config =
            EmulatorConfig { root: tmp.path().join("emu"), token: None, login: "acme".into(), admin_secret: None };
        let emulator = rt.block_on(Emulator::start(config)).unwrap();
        let widget = rt.block_on(emulator.create_repo("acme", "widget", false)).unwrap();
        let env = Env {
            tmp,
            rt,
            emulator,
            widget,
            repo: RepoName::parse("acme/widget").unwrap(),
            commands: parse_commands(r#"[["sh", "t.sh"]]"#).unwrap(),
        };
        env.commit("main", &[("t.sh", ". ./lib.sh\ncheck\n"), ("lib.sh", "check() { exit 1; }\n")]);
        for i in 0..30 {
            env.commit("main", &[(&format!("history/{}.txt", i % 6), &format!("{i}\n"))]);
        }
        env
    }

    fn commit(&self, branch: &str, files: &[(&str, &str)]) -> String {
        self.rt.block_on(self.emulator.commit_files(&self.widget, branch, files, "change")).unwrap()
    }

    fn open(&self, branch: &str) -> u64 {
        self.rt.block_on(self.emulator.open_pr(&self.widget, branch, "main", branch)).unwrap()
    }

    fn head(&self, number: u64) -> String {
        self.emulator.pr_head(&self.widget, number).unwrap()
    }

    /// Removes GitHub's merge of PR `number` (as while its `mergeable` is null), so forgeloop
    /// merges itself.
    fn forget_merge(&self, number: u64) {
        git(&self.widget.path, &["update-ref", "-d", &format!("refs/pull/{number}/merge")]);
    }

    fn mirrors(&self) -> PathBuf {
        self.tmp.path().join("mirrors")
    }

    fn prepare(&self, number: u64, tree: TreeMode, protect: &[String], hold: bool) -> Result<Checkout, CheckoutError> {
        let checkouts = self.tmp.path().join("checkouts");
        std::fs::create_dir_all(&checkouts).unwrap();
        let mirrors = self.mirrors();
        let head = self.head(number);
        prepare(&self.request(&mirrors, &checkouts, number, &head, tree, protect, hold))
    }

    #[allow(clippy::too_many_arguments)]
    fn request<'a>(
        &'a self,
        mirrors: &'a Path,
        checkouts: &'a Path,
        number: u64,
        head: &'a str,
        tree: TreeMode,
        protect: &'a [String],
        hold: bool,
    ) -> CheckoutRequest<'a> {
        CheckoutRequest {
            mirrors_root: mirrors,
            repo: &self.repo,
            clone_url: &self.widget.clone_url,
            pr_number: number,
            expected_sha: head,
            token: None,
            allow_insecure_local: true,
            submodules: false,
            base_ref: Some("main"),
            submodule_token_owners: &[],
            fetch_exact_sha: false,
            checkouts_root: Some(checkouts),
            exact_dir: None,
            history: History::Shallow,
            cancel: None,
            objects_for_others: false,
            tested: Some(TestedSpec { tree, commands: &self.commands, protect, hold, accepted: &[] }),
        }
    }
}

fn read(co: &Checkout, path: &str) -> Option<String> {
    std::fs::read_to_string(co.path().join(path)).ok()
}

#[test]
fn a_pr_on_its_base_tip_is_merged_without_a_fetch_more() {
    let env = Env::new();
    let main = git(&env.widget.path, &["rev-parse", "main"]);
    env.commit("fresh", &[("lib.sh", "check() { exit 0; }\n"), ("feature.txt", "new\n")]);
    let n = env.open("fresh");
    let co = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    let tested = co.tested.as_ref().unwrap();
    assert_eq!((tested.base_sha.as_str(), tested.deepen_fetches), (main.as_str(), 0), "{tested:?}");
    // GitHub's own merge, computed against this tip, fetched with the head.
    assert_eq!(tested.merge_by.as_deref(), Some("github"));
    assert_eq!(tested.merge_sha, env.emulator.pr_merge(&env.widget, n));
    assert_eq!(co.fetch.depth, Some(1));
    // HEAD is forgeloop's merge commit: first parent main's tip, second the head.
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), *tested.merge_sha.as_ref().unwrap());
    assert_eq!(git(co.path(), &["rev-parse", "HEAD^1"]), main);
    assert_eq!(git(co.path(), &["rev-parse", "HEAD^2"]), co.head_sha);
    assert_eq!(read(&co, "feature.txt").as_deref(), Some("new\n"));
    // The change against the base tip, from the mirror: both of the PR's files.
    let changed: Vec<String> =
        tested.change.lines().filter_map(|l| l.strip_prefix("+++ b/")).map(str::to_owned).collect();
    assert_eq!(changed, ["feature.txt", "lib.sh"]);
    // The same head and base always give the same commit.
    let again = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    assert_eq!(again.tested.as_ref().unwrap().merge_sha, tested.merge_sha);
    // lib.sh is sourced by t.sh, which the commands run.
    let sourced: Vec<&str> = tested.sourced.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(sourced, ["lib.sh"]);

    // Its next head descends from the one tested: still nothing more to fetch.
    env.commit("fresh", &[("feature.txt", "newer\n")]);
    let next = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    assert_eq!(next.tested.as_ref().unwrap().deepen_fetches, 0);
    // A first push of two commits: the mirror is deepened once to see main's tip below them.
    // Without GitHub's merge, forgeloop merges with git, against the merge base it finds.
    env.commit("two", &[("a.txt", "a\n")]);
    env.commit("two", &[("b.txt", "b\n")]);
    let two = env.open("two");
    env.forget_merge(two);
    let two = env.prepare(two, TreeMode::Merge, &[], false).unwrap();
    assert_eq!(two.tested.as_ref().unwrap().deepen_fetches, 1);
    assert_eq!(two.tested.as_ref().unwrap().merge_by.as_deref(), Some("git"));
    assert_eq!(git(two.path(), &["rev-parse", "HEAD^1"]), main);
}

#[test]
fn a_stale_branch_is_merged_into_the_current_tip_after_deepening_once() {
    let env = Env::new();
    // The branch starts at main~20 (made by pointing a new branch there, then committing).
    let old = git(&env.widget.path, &["rev-parse", "main~20"]);
    git(&env.widget.path, &["update-ref", "refs/heads/stale", &old]);
    env.commit("stale", &[("feature.txt", "new\n")]);
    let n = env.open("stale");
    env.forget_merge(n);
    let main = git(&env.widget.path, &["rev-parse", "main"]);
    let co = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    let tested = co.tested.as_ref().unwrap();
    assert!(tested.deepen_fetches >= 1, "{tested:?}");
    assert_eq!(git(co.path(), &["rev-parse", "HEAD^1"]), main);
    // Main's newest history and the PR's file, together.
    assert_eq!(read(&co, "history/5.txt").as_deref(), Some("29\n"));
    assert_eq!(read(&co, "feature.txt").as_deref(), Some("new\n"));
    let changed: Vec<&str> = tested.change.lines().filter_map(|l| l.strip_prefix("+++ b/")).collect();
    assert_eq!(changed, ["feature.txt"], "main's own newer commits are not the PR's change");
    drop(co);
    // The merge base is in the mirror now: the next iteration fetches no history.
    env.commit("stale", &[("feature.txt", "newer\n")]);
    env.forget_merge(n);
    let next = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    assert_eq!(next.tested.as_ref().unwrap().deepen_fetches, 0);
    assert_eq!(read(&next, "feature.txt").as_deref(), Some("newer\n"));

    // The head alone: its own (old) history files; its change against the tip shows main's
    // newer files as reverted, so a stale test cannot hide.
    let head = env.prepare(n, TreeMode::Head, &[], false).unwrap();
    assert_eq!(git(head.path(), &["rev-parse", "HEAD"]), head.head_sha);
    assert_ne!(read(&head, "history/5.txt").as_deref(), Some("29\n"));
    let tested = head.tested.as_ref().unwrap();
    assert!(tested.merge_sha.is_none() && tested.merge_by.is_none());
    assert!(tested.change.contains("-29\n"), "{}", tested.change);
}

#[test]
fn held_paths_are_the_base_tips_and_what_the_protected_files_source() {
    let env = Env::new();
    env.commit(
        "attack",
        &[("lib.sh", "check() { exit 0; }\n"), ("t.sh", ". ./lib.sh\n. ./extra.sh\ncheck\n"), ("extra.sh", ": \n")],
    );
    let n = env.open("attack");
    let protect = vec!["t.sh".to_owned()];
    let co = env.prepare(n, TreeMode::Merge, &protect, true).unwrap();
    let tested = co.tested.as_ref().unwrap();
    // t.sh, what it sources on either side (lib.sh; extra.sh, which the base does not have).
    assert_eq!(tested.held, ["extra.sh", "lib.sh", "t.sh"]);
    assert_eq!(read(&co, "t.sh").as_deref(), Some(". ./lib.sh\ncheck\n"));
    assert_eq!(read(&co, "lib.sh").as_deref(), Some("check() { exit 1; }\n"));
    assert_eq!(read(&co, "extra.sh"), None);
    // The held commit sits on the merge; the PR's change (what integrity judges) is the merge's.
    assert_eq!(git(co.path(), &["rev-parse", "HEAD^"]), *tested.merge_sha.as_ref().unwrap());
    assert!(tested.change.contains("+check() { exit 0; }"), "{}", tested.change);
    // Flagged instead: nothing held, the PR's files run.
    let flagged = env.prepare(n, TreeMode::Merge, &protect, false).unwrap();
    assert!(flagged.tested.as_ref().unwrap().held.is_empty());
    assert_eq!(read(&flagged, "lib.sh").as_deref(), Some("check() { exit 0; }\n"));
}

#[test]
fn a_conflict_names_its_paths_and_leaves_no_checkout() {
    let env = Env::new();
    env.commit("clash", &[("history/0.txt", "the PR's\n")]);
    let n = env.open("clash");
    env.commit("main", &[("history/0.txt", "main's\n")]);
    match env.prepare(n, TreeMode::Merge, &[], false) {
        Err(CheckoutError::MergeConflict { base_ref, paths, .. }) => {
            assert_eq!((base_ref.as_str(), paths), ("main", vec!["history/0.txt".to_owned()]));
        }
        other => panic!("expected a merge conflict, got {other:?}"),
    }
    assert_eq!(std::fs::read_dir(env.tmp.path().join("checkouts")).unwrap().count(), 0);
    // The head alone still checks out.
    assert!(env.prepare(n, TreeMode::Head, &[], false).is_ok());
}

#[test]
fn judging_fetches_into_the_mirror_and_checks_nothing_out() {
    let env = Env::new();
    env.commit("ci", &[("feature.txt", "new\n")]);
    let n = env.open("ci");
    let head = env.head(n);
    let checkouts = env.tmp.path().join("checkouts");
    std::fs::create_dir_all(&checkouts).unwrap();
    let mirrors = env.mirrors();
    let tested = judge(&env.request(&mirrors, &checkouts, n, &head, TreeMode::Merge, &[], false)).unwrap();
    assert!(tested.change.contains("+++ b/feature.txt"), "{}", tested.change);
    assert_eq!(std::fs::read_dir(&checkouts).unwrap().count(), 0);
    assert!(mirrors.join("acme/widget.git").is_dir());
}

#[test]
fn github_s_merge_is_tested_only_while_it_is_of_the_base_tip_fetched() {
    let env = Env::new();
    env.commit("feature", &[("feature.txt", "new\n")]);
    let n = env.open("feature");
    let github = env.emulator.pr_merge(&env.widget, n).unwrap();
    let co = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    let tested = co.tested.as_ref().unwrap();
    assert_eq!((tested.merge_by.as_deref(), tested.merge_sha.as_deref()), (Some("github"), Some(github.as_str())));
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), github);
    drop(co);

    // Main moves; GitHub has not recomputed, so its merge is of the old tip: git's is tested,
    // made by forgeloop (its author), into the tip fetched.
    let moved = env.commit("main", &[("history/0.txt", "moved\n")]);
    let co = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    let tested = co.tested.as_ref().unwrap();
    assert_eq!(tested.merge_by.as_deref(), Some("git"));
    assert_ne!(tested.merge_sha.as_deref(), Some(github.as_str()));
    assert_eq!(git(co.path(), &["rev-parse", "HEAD^1"]), moved);
    assert_eq!(git(co.path(), &["log", "-1", "--format=%an", "HEAD"]), "forgeloop");
    assert_eq!(read(&co, "history/0.txt").as_deref(), Some("moved\n"));
    assert_eq!(read(&co, "feature.txt").as_deref(), Some("new\n"));
    // git's tree and GitHub's (recomputed now) are the same tree.
    let tree = git(co.path(), &["rev-parse", "HEAD^{tree}"]);
    drop(co);
    let recomputed = env.rt.block_on(env.emulator.recompute_pr_merge(&env.widget, n)).unwrap().unwrap();
    assert_eq!(git(&env.widget.path, &["rev-parse", &format!("{recomputed}^{{tree}}")]), tree);
    let co = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    let tested = co.tested.as_ref().unwrap();
    assert_eq!((tested.merge_by.as_deref(), tested.merge_sha.as_deref()), (Some("github"), Some(recomputed.as_str())));

    // A merge ref whose parents are not exactly [the base tip, the head] is never used: the
    // server's ref pointed at the head itself.
    drop(co);
    let head = env.head(n);
    git(&env.widget.path, &["update-ref", &format!("refs/pull/{n}/merge"), &head]);
    let co = env.prepare(n, TreeMode::Merge, &[], false).unwrap();
    assert_eq!(co.tested.as_ref().unwrap().merge_by.as_deref(), Some("git"));
}

#[test]
fn a_file_added_under_a_directory_the_base_renamed_is_git_s_conflict() {
    let env = Env::new();
    env.commit("main", &[("lib/a.py", "A = 1\n")]);
    env.commit("feature", &[("lib/b.py", "B = 2\n")]);
    let n = env.open("feature");
    // Main renames lib/ to pkg/ (a commit made with git's plumbing in the emulator's repository).
    let dir = &env.widget.path;
    let tree = git(dir, &["rev-parse", "main^{tree}"]);
    let lib = git(dir, &["rev-parse", "main:lib"]);
    let listing = git(dir, &["ls-tree", &tree]);
    let entries: String =
        listing.lines().filter(|l| !l.ends_with("\tlib")).map(|l| format!("{l}\n")).collect::<String>()
            + &format!("040000 tree {lib}\tpkg\n");
    let mut mktree = fixture::git_cmd(dir);
    mktree.args(["mktree"]).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = mktree.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), entries.as_bytes()).unwrap();
    let renamed_tree = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap().trim().to_owned();
    let renamed = git(dir, &["commit-tree", &renamed_tree, "-p", "main", "-m", "rename lib/ to pkg/"]);
    git(dir, &["update-ref", "refs/heads/main", &renamed]);

    // GitHub's merge (before the rename) is stale; libgit2 would leave lib/b.py in lib/ and
    // call it clean; git moves it to pkg/ and calls it a conflict.
    match env.prepare(n, TreeMode::Merge, &[], false) {
        Err(CheckoutError::MergeConflict { base_sha, paths, .. }) => {
            assert_eq!(
                (base_sha.as_str(), paths),
                (renamed.as_str(), vec!["lib/b.py".to_owned(), "pkg/b.py".to_owned()])
            );
        }
        other => panic!("expected git's conflict, got {other:?}"),
    }
    // GitHub agrees once it recomputes: no merge ref.
    assert_eq!(env.rt.block_on(env.emulator.recompute_pr_merge(&env.widget, n)).unwrap(), None);
    assert!(matches!(env.prepare(n, TreeMode::Merge, &[], false), Err(CheckoutError::MergeConflict { .. })));
}
