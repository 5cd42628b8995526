//! The merge a run tests is the one GitHub would test (issue 57, item 6), through the real
//! binary against the GitHub emulator, which computes `refs/pull/N/merge` with git's own
//! algorithm as GitHub does: a PR that adds a file under a directory its base branch renamed
//! is git's conflict, not the pass libgit2's placement gave (with the merge ref missing, and
//! with a stale one that predates the rename); GitHub's merge is tested when it was computed
//! against the base tip fetched, and not once the base moved; and without git on PATH a merge
//! forgeloop cannot prove equal to git's is an infrastructure outcome — no iteration, nothing
//! for WebGPT — while one it can (no renames, or the head on the base tip) still runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::path::PathBuf;

use github_emulator::RepoHandle;
use serde_json::Value;
use support::git;
use support::world::World;

const LIB_A: &str = "def answer():\n    return 42\n";
const TEST_A: &str = "import unittest\n\nfrom lib.a import answer\n\n\nclass A(unittest.TestCase):\n    def test_answer(self):\n        self.assertEqual(answer(), 42)\n";
const TEST_A_RENAMED: &str = "import unittest\n\nfrom pkg.a import answer\n\n\nclass A(unittest.TestCase):\n    def test_answer(self):\n        self.assertEqual(answer(), 42)\n";
const LIB_B: &str = "def double(n):\n    return 2 * n\n";
/// The PR's test of its own module, imported from where the PR put it: `lib/`.
const TEST_B: &str = "import unittest\n\nfrom lib.b import double\n\n\nclass B(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(21), 42)\n";

/// `python3 -m unittest`, by its absolute path so it runs with any PATH.
const COMMANDS: &str = r#"[["/usr/bin/python3", "-m", "unittest", "-v"]]"#;

/// acme/widget: `lib/a.py` and a test importing it on main.
fn project(w: &World) -> RepoHandle {
    let repo = w.rt.block_on(w.emu.create_repo("acme", "widget", false)).unwrap();
    w.commit(&repo, "main", &[("lib/__init__.py", ""), ("lib/a.py", LIB_A), ("test_a.py", TEST_A)], "the project");
    repo
}

/// The PR's branch, from main as it is now: `lib/b.py` and its test.
fn branch_adding_lib_b(w: &World, repo: &RepoHandle) {
    w.commit(repo, "feature", &[("lib/b.py", LIB_B), ("test_b.py", TEST_B)], "add lib/b.py");
}

/// Main renames `lib/` to `pkg/` (and its test follows), pushed with the git CLI.
fn rename_lib_on_main(w: &World, repo: &RepoHandle) -> String {
    let work = w.path("work-rename");
    git(&w.path(""), &["clone", "-q", "-b", "main", repo.path.to_str().unwrap(), work.to_str().unwrap()]);
    git(&work, &["mv", "lib", "pkg"]);
    std::fs::write(work.join("test_a.py"), TEST_A_RENAMED).unwrap();
    git(&work, &["commit", "-q", "-am", "rename lib/ to pkg/"]);
    git(&work, &["push", "-q", "origin", "main"]);
    w.tip(repo, "main")
}

fn open(w: &World, repo: &RepoHandle, branch: &str) -> u64 {
    w.rt.block_on(w.emu.open_pr(repo, branch, "main", branch)).unwrap()
}

/// `forge --pr` of PR `n` in a new cycle `name`; the run and its JSON.
fn forge_with(w: &World, name: &str, n: u64, env: &[(&str, &str)]) -> (i32, Value) {
    let file = w.path(&format!("{name}-commands.json"));
    std::fs::write(&file, COMMANDS).unwrap();
    let state = format!("{name}.json");
    w.cycle(&state, &[]);
    let mut all = vec![("GH_TOKEN", w.token.as_str())];
    all.extend_from_slice(env);
    let pr = format!("acme/widget#{n}");
    let args = ["forge", "--pr", &pr, "--state", &state, "--commands-json", file.to_str().unwrap()];
    let run = w.run_env(&args, &all);
    (run.code, run.json())
}

fn forge(w: &World, name: &str, n: u64) -> Value {
    let (code, out) = forge_with(w, name, n, &[]);
    assert!(code == 0 || code == 1, "{out:#}");
    out
}

#[test]
fn a_file_added_under_a_directory_the_base_renamed_is_git_s_conflict_not_a_pass() {
    let w = World::new();
    let repo = project(&w);
    branch_adding_lib_b(&w, &repo);
    // Opened before the rename: GitHub's merge (then clean) is at refs/pull/1/merge, stale once
    // main renames lib/; one opened after it conflicts, and GitHub has no merge ref for it.
    let stale = open(&w, &repo, "feature");
    assert!(w.emu.pr_merge(&repo, stale).is_some());
    let renamed = rename_lib_on_main(&w, &repo);
    git(&repo.path, &["branch", "feature-late", "feature"]);
    let late = open(&w, &repo, "feature-late");
    assert_eq!(w.emu.pr_merge(&repo, late), None, "git's merge conflicts, so GitHub has none");

    for (name, n) in [("stale", stale), ("late", late)] {
        let out = forge(&w, name, n);
        // libgit2 put lib/b.py in lib/ beside nothing else, and both tests passed; git moves it
        // to pkg/ and calls that a conflict, and so does GitHub.
        assert_eq!(out["report"]["status"], "MERGE_CONFLICT", "{name}: {out:#}");
        assert_ne!(out["status"], "READY_TO_MERGE", "{name}");
        assert_eq!(out["report"]["base_sha"], renamed.as_str(), "{name}");
        assert_eq!(out["report"]["tested"]["conflicts"], serde_json::json!(["lib/b.py", "pkg/b.py"]), "{name}");
        // The PR's to resolve: an iteration, handed back.
        assert_eq!((out["status"].as_str(), out["iteration"].as_u64()), (Some("AWAITING_WEBGPT_FIX"), Some(1)));
    }
}

#[test]
fn github_s_merge_is_tested_when_current_and_not_once_the_base_moved() {
    let w = World::new();
    let repo = project(&w);
    branch_adding_lib_b(&w, &repo);
    let n = open(&w, &repo, "feature");
    let github = w.emu.pr_merge(&repo, n).unwrap();
    let main = w.tip(&repo, "main");
    let head = w.emu.pr_head(&repo, n).unwrap();
    assert_eq!(
        git(&repo.path, &["rev-parse", "refs/pull/1/merge^1", "refs/pull/1/merge^2"]),
        format!("{main}\n{head}")
    );

    let current = forge(&w, "current", n);
    assert_eq!(current["report"]["status"], "TEST_PASSED", "{current:#}");
    assert_eq!(current["report"]["tested"]["merge_sha"], github.as_str(), "GitHub's own merge commit ran");

    // Main moves; GitHub has not recomputed: its merge is of the old tip, so git's is tested.
    let moved = w.commit(&repo, "main", &[("README.md", "moved on\n")], "main moves");
    let stale = forge(&w, "stale", n);
    assert_eq!(stale["report"]["base_sha"], moved.as_str());
    let merge = stale["report"]["tested"]["merge_sha"].as_str().unwrap().to_owned();
    assert_ne!(merge, github, "{stale:#}");
    let mirror = w.sb.home().join("mirrors/acme/widget.git");
    assert_eq!(git(&mirror, &["rev-parse", &format!("{merge}^1"), &format!("{merge}^2")]), format!("{moved}\n{head}"));
    assert_eq!(git(&mirror, &["log", "-1", "--format=%an", &merge]), "forgeloop");

    // Recomputed against the new tip: GitHub's again.
    let recomputed = w.rt.block_on(w.emu.recompute_pr_merge(&repo, n)).unwrap().unwrap();
    let again = forge(&w, "recomputed", n);
    assert_eq!(again["report"]["tested"]["merge_sha"], recomputed.as_str(), "{again:#}");
}

/// A directory of links to every program on this PATH but git: PATH for a forgeloop without
/// git. (The tests it runs name their interpreter by absolute path.)
fn path_without_git(w: &World) -> PathBuf {
    let farm = w.path("bin-without-git");
    std::fs::create_dir_all(&farm).unwrap();
    let path = std::env::var_os("PATH").unwrap();
    for dir in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let link = farm.join(&name);
            if name.to_string_lossy().starts_with("git") || link.symlink_metadata().is_ok() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), link).unwrap();
        }
    }
    assert!(!farm.join("git").exists());
    farm
}

#[test]
fn without_git_an_unprovable_merge_is_an_infra_failure_and_a_provable_one_runs() {
    let w = World::new();
    let repo = project(&w);
    branch_adding_lib_b(&w, &repo);
    let renamed_pr = open(&w, &repo, "feature");
    w.commit(
        &repo,
        "plain",
        &[("test_c.py", "import unittest\n\n\nclass C(unittest.TestCase):\n    def test_c(self):\n        pass\n")],
        "plain",
    );
    let plain_pr = open(&w, &repo, "plain");
    rename_lib_on_main(&w, &repo);
    let farm = path_without_git(&w);
    let path = farm.to_str().unwrap();

    // GitHub's merge predates the rename, git is not there, and libgit2 would place lib/b.py
    // where git would not: forgeloop says so rather than guess.
    let (code, out) = forge_with(&w, "renamed", renamed_pr, &[("PATH", path)]);
    assert_eq!(code, 2, "{out:#}");
    assert_eq!((out["status"].as_str(), out["infra_failures"].as_u64()), (Some("INFRA_FAILURE"), Some(1)), "{out:#}");
    let error = out["error"].as_str().unwrap();
    for said in [
        "forgeloop cannot make the merge GitHub would test",
        "git is not installed here",
        "the base branch renamed lib/",
        "install git 2.40 or newer",
        "wait until GitHub has computed the pull request's merge",
    ] {
        assert!(error.contains(said), "{said:?} in {error}");
    }
    let state = w.sb.read_json(&w.path("renamed.json"));
    assert_eq!((state["iteration"].as_u64(), state["status"].as_str()), (Some(0), Some("AWAITING_WEBGPT_PR")));
    assert!(state["report"].is_null(), "no report, so nothing to hand WebGPT: {state:#}");

    // The same PR with git: git's conflict, the PR's to resolve.
    assert_eq!(forge(&w, "renamed-with-git", renamed_pr)["report"]["status"], "MERGE_CONFLICT");

    // A PR that touches nothing under lib/ is no easier: main renamed files since its merge
    // base, and that alone is what libgit2 cannot be shown to merge as git does.
    let (code, out) = forge_with(&w, "plain", plain_pr, &[("PATH", path)]);
    assert_eq!((code, out["status"].as_str()), (2, Some("INFRA_FAILURE")), "{out:#}");

    // A PR branched after the rename, main moved on since (GitHub's merge stale): no renames on
    // either side since the merge base, so libgit2's merge is git's, and it runs.
    w.commit(&repo, "after", &[("pkg/c.py", "C = 3\n")], "after the rename");
    let after_pr = open(&w, &repo, "after");
    w.commit(&repo, "main", &[("README.md", "moved on\n")], "main moves");
    let (code, out) = forge_with(&w, "after", after_pr, &[("PATH", path)]);
    assert_eq!((code, out["report"]["status"].as_str()), (0, Some("TEST_PASSED")), "{out:#}");
    let tested = out["report"]["tested"]["merge_sha"].as_str().unwrap();
    assert_ne!(Some(tested), w.emu.pr_merge(&repo, after_pr).as_deref());

    // The head on main's tip with no merge ref at all (GitHub's `mergeable: null`): trivial.
    w.commit(&repo, "on-tip", &[("pkg/d.py", "D = 4\n")], "on the tip");
    let on_tip = open(&w, &repo, "on-tip");
    git(&repo.path, &["update-ref", "-d", &format!("refs/pull/{on_tip}/merge")]);
    let (code, out) = forge_with(&w, "on-tip", on_tip, &[("PATH", path)]);
    assert_eq!((code, out["report"]["status"].as_str()), (0, Some("TEST_PASSED")), "{out:#}");
}
