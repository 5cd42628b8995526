//! A verdict the PR cannot forge (issue 38), through the real binary against the GitHub
//! emulator: each way a PR under test could shape the evidence that judges it — branching from
//! before the person hardened a test, neutering a helper the protected test sources, shadowing
//! the standard library's `unittest`, a `.cargo/config.toml` that runs nothing, hiding a
//! protected edit behind 3,001 files, and a fix that deletes the assertions that failed — ends
//! in a failing run or `NEEDS_REVIEW` with the reason named, and its control (the same breakage
//! without the trick) fails. Also: a head that does not merge is `MERGE_CONFLICT`, an iteration
//! whose handoff asks WebGPT to bring the branch up to date.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::path::Path;

use github_emulator::RepoHandle;
use serde_json::Value;
use support::world::{CALC_BUGGY, World};

/// The person's test, before they hardened it: it only runs the code.
const WEAK_TEST: &str = "#!/bin/sh\nsh calc.sh 2 3 > /dev/null\necho 'ok - it runs'\n";
/// The person's test after hardening: it checks the sum.
const HARD_TEST: &str = "#!/bin/sh\nout=$(sh calc.sh 2 3)\nif [ \"$out\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $out\"; exit 1; fi\n";
const CALC_RIGHT: &str = "echo $(($1 + $2))\n";

/// `forge --pr` of PR `n` in a new cycle `name` with `commands`; the run's JSON.
fn forge(w: &World, name: &str, n: u64, commands: &str) -> Value {
    let file = w.path(&format!("{name}-commands.json"));
    std::fs::write(&file, commands).unwrap();
    let state = format!("{name}.json");
    w.cycle(&state, &[]);
    let run = w.run(&[
        "forge",
        "--pr",
        &format!("acme/widget#{n}"),
        "--state",
        &state,
        "--commands-json",
        file.to_str().unwrap(),
        "--post-comment",
    ]);
    assert!(run.code == 0 || run.code == 1, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn next(w: &World, name: &str) -> Value {
    w.run(&["next", "--state", &format!("{name}.json")]).json()
}

fn reason(out: &Value) -> String {
    out["report"]["integrity"].to_string()
}

#[test]
fn a_pr_branched_before_the_test_was_hardened_is_tested_with_the_hardened_test() {
    let w = World::new();
    w.config("[protect]\npaths = [\"t.sh\"]\n");
    let repo = w.repo_with("acme", "widget", &[("t.sh", WEAK_TEST), ("calc.sh", CALC_RIGHT)]);
    // The attack: the branch starts before the person hardens t.sh; its calc.sh is wrong.
    let stale = w.open_pr_with(&repo, "stale", &[("calc.sh", CALC_BUGGY)]);
    let hardened = w.commit(&repo, "main", &[("t.sh", HARD_TEST)], "harden the test");
    // The control: the same breakage, branched after the hardening.
    let control = w.open_pr_with(&repo, "control", &[("calc.sh", CALC_BUGGY)]);
    let commands = r#"[["sh", "t.sh"]]"#;

    let out = forge(&w, "stale", stale, commands);
    assert_eq!(out["report"]["status"], "TEST_FAILED", "the merge carries the hardened test: {out:#}");
    assert_eq!(out["report"]["base_sha"], hardened.as_str());
    assert_eq!(out["report"]["tested"]["tree"], "merge");
    assert!(out["report"]["failure_output"].as_str().unwrap().contains("expected 5, got -1"), "{out:#}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");

    // A repository that tests the head alone: the head's old t.sh is a change against the base
    // tip, so it is protected — held (the person's version runs and fails) or, flagged, a pass
    // that needs a person, with the reason named.
    let head_only = r#"{"commands": [["sh", "t.sh"]], "tree": "head"}"#;
    let held = forge(&w, "held", stale, head_only);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{held:#}");
    assert_eq!(held["report"]["tested"]["tree"], "head");
    assert_eq!(held["report"]["tested"]["held"], serde_json::json!(["t.sh"]), "{held:#}");
    w.config("[protect]\npaths = [\"t.sh\"]\nmode = \"flag\"\n");
    let flagged = forge(&w, "flagged", stale, head_only);
    assert_eq!(flagged["report"]["status"], "TEST_PASSED", "{flagged:#}");
    assert_eq!(flagged["status"], "NEEDS_REVIEW", "{flagged:#}");
    assert_eq!(flagged["report"]["integrity"]["protected"], serde_json::json!(["t.sh"]));
    let removed = &flagged["report"]["integrity"]["against_base"][0];
    assert_eq!((removed["path"].as_str(), removed["removed_assertions"].as_u64()), (Some("t.sh"), Some(1)));
    let explanation = next(&w, "flagged")["explanation"].as_str().unwrap().to_owned();
    assert!(explanation.contains("protected paths: t.sh"), "{explanation}");
}

const TESTLIB: &str =
    "check() { if [ \"$1\" = \"$2\" ]; then echo \"ok - $3\"; else echo \"not ok - $3: got $1\"; exit 1; fi; }\n";
const T_SOURCING: &str = "#!/bin/sh\n. ./testlib.sh\ncheck \"$(sh calc.sh 2 3)\" 5 '2+3=5'\n";

#[test]
fn a_neutered_helper_that_the_protected_test_sources_is_held_or_needs_review() {
    let w = World::new();
    w.config("[protect]\npaths = [\"t.sh\"]\n");
    let repo = w.repo_with("acme", "widget", &[("t.sh", T_SOURCING), ("testlib.sh", TESTLIB), ("calc.sh", CALC_RIGHT)]);
    let attack =
        w.open_pr_with(&repo, "attack", &[("calc.sh", CALC_BUGGY), ("testlib.sh", "check() { echo \"ok - $3\"; }\n")]);
    let control = w.open_pr_with(&repo, "control", &[("calc.sh", CALC_BUGGY)]);
    let commands = r#"[["sh", "t.sh"]]"#;

    // Held (the default): the person's testlib.sh runs, and the broken code fails.
    let held = forge(&w, "held", attack, commands);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{held:#}");
    assert_eq!(held["report"]["tested"]["held"], serde_json::json!(["testlib.sh"]), "{held:#}");
    let sourced = &held["report"]["integrity"]["against_base"][0];
    assert_eq!((sourced["path"].as_str(), sourced["kind"].as_str()), (Some("testlib.sh"), Some("sourced")));
    assert_eq!(sourced["by"], "t.sh");
    let comment = w.comments(&repo, attack).pop().unwrap();
    assert!(comment.contains("with `testlib.sh` as `main` has them"), "{comment}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");

    // Flagged: the PR's helper runs and passes, but the pass waits for a person, who is told why.
    w.config("[protect]\npaths = [\"t.sh\"]\nmode = \"flag\"\n");
    let flagged = forge(&w, "flagged", attack, commands);
    assert_eq!(
        (flagged["report"]["status"].as_str(), flagged["status"].as_str()),
        (Some("TEST_PASSED"), Some("NEEDS_REVIEW"))
    );
    let explanation = next(&w, "flagged")["explanation"].as_str().unwrap().to_owned();
    assert!(explanation.contains("testlib.sh (sourced by t.sh)"), "{explanation}");
}

#[test]
fn a_root_unittest_py_that_shadows_the_standard_library_is_held_or_needs_review() {
    let w = World::new();
    w.config("[protect]\npaths = [\"test_calc.py\"]\n");
    let test = "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    let repo =
        w.repo_with("acme", "widget", &[("test_calc.py", test), ("calc.py", "def add(a, b):\n    return a + b\n")]);
    let buggy = ("calc.py", "def add(a, b):\n    return a - b\n");
    let fake = "def main(*args, **kwargs):\n    print('Ran 0 tests')\n\nclass TestCase:\n    pass\n\nif __name__ == '__main__':\n    main()\n";
    let attack = w.open_pr_with(&repo, "attack", &[buggy, ("unittest.py", fake)]);
    let control = w.open_pr_with(&repo, "control", &[buggy]);
    let commands = r#"[["python3", "-m", "unittest", "-v"]]"#;

    // Held (the default): the protected test imports `unittest`, so the module that would
    // answer that import is the base tip's — none: the real one runs, and the broken code fails.
    let held = forge(&w, "held", attack, commands);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{held:#}");
    assert_eq!(held["report"]["tested"]["held"], serde_json::json!(["unittest.py"]), "{held:#}");
    assert!(held["report"]["failure_output"].as_str().unwrap().contains("AssertionError: -1 != 5"), "{held:#}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");

    // Flagged: the shadow runs (and runs nothing), but the pass waits for a person, who is told why.
    w.config("[protect]\npaths = [\"test_calc.py\"]\nmode = \"flag\"\n");
    let out = forge(&w, "attack", attack, commands);
    assert_eq!(out["report"]["status"], "TEST_PASSED", "the shadow runs nothing: {out:#}");
    assert_eq!(out["status"], "NEEDS_REVIEW", "{out:#}");
    let shadow = out["report"]["integrity"]["against_base"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "unittest.py")
        .cloned();
    assert_eq!(shadow.unwrap()["kind"], "shadow", "{}", reason(&out));
    let explanation = next(&w, "attack")["explanation"].as_str().unwrap().to_owned();
    assert!(explanation.contains("unittest.py (shadows a module tests import)"), "{explanation}");
}

#[test]
fn a_cargo_config_runner_that_runs_nothing_needs_review() {
    let w = World::new();
    w.config("[protect]\npaths = [\"tests/\"]\n");
    let cargo_toml = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let lib = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n";
    let test = "#[test]\nfn adds() { assert_eq!(calc::add(2, 3), 5); }\n";
    let repo =
        w.repo_with("acme", "widget", &[("Cargo.toml", cargo_toml), ("src/lib.rs", lib), ("tests/add.rs", test)]);
    let buggy = ("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a - b }\n");
    let runner = "[target.'cfg(all())']\nrunner = \"true\"\n";
    let attack = w.open_pr_with(&repo, "attack", &[buggy, (".cargo/config.toml", runner)]);
    let control = w.open_pr_with(&repo, "control", &[buggy]);
    let commands = r#"[["cargo", "test", "--offline", "-q"]]"#;

    let out = forge(&w, "attack", attack, commands);
    assert_eq!(out["report"]["status"], "TEST_PASSED", "the runner ran nothing: {out:#}");
    assert_eq!(out["status"], "NEEDS_REVIEW", "{out:#}");
    let explanation = next(&w, "attack")["explanation"].as_str().unwrap().to_owned();
    assert!(explanation.contains(".cargo/config.toml (decides what a test run does)"), "{explanation}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");
}

/// Commits `files` on a new branch `branch` from main, pushed straight into the emulator's
/// repository with the git CLI (thousands of files in one commit).
fn push_branch(w: &World, repo: &RepoHandle, branch: &str, files: &[(String, String)]) {
    let work = w.path(&format!("work-{branch}"));
    let git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid", "-c", "protocol.file.allow=always"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&w.path(""), &["clone", "-q", "-b", "main", repo.path.to_str().unwrap(), work.to_str().unwrap()]);
    git(&work, &["checkout", "-q", "-b", branch]);
    for (path, text) in files {
        let file = work.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", branch]);
    git(&work, &["push", "-q", "origin", branch]);
}

#[test]
fn a_protected_edit_behind_three_thousand_and_one_files_is_seen() {
    let w = World::new();
    w.config("[protect]\npaths = [\"t.sh\"]\nmode = \"flag\"\n");
    let repo = w.repo_with("acme", "widget", &[("t.sh", HARD_TEST), ("calc.sh", CALC_RIGHT)]);
    // 3,001 padding files that sort before t.sh (GitHub's files API stops at 3,000), the broken
    // code, and t.sh made to pass.
    let mut files: Vec<(String, String)> = (0..3001).map(|i| (format!("a/pad{i:04}.txt"), format!("{i}\n"))).collect();
    files.push(("calc.sh".into(), CALC_BUGGY.into()));
    files.push(("t.sh".into(), "#!/bin/sh\necho 'ok - 2+3=5'\n".into()));
    push_branch(&w, &repo, "padded", &files);
    let n = w.rt.block_on(w.emu.open_pr(&repo, "padded", "main", "padded")).unwrap();
    let out = forge(&w, "padded", n, r#"[["sh", "t.sh"]]"#);
    assert_eq!(out["status"], "NEEDS_REVIEW", "{}", out["report"]["integrity"]);
    assert_eq!(out["report"]["integrity"]["protected"], serde_json::json!(["t.sh"]));
    // Held (the default), the person's t.sh runs and fails.
    w.config("[protect]\npaths = [\"t.sh\"]\n");
    let held = forge(&w, "padded-held", n, r#"[["sh", "t.sh"]]"#);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{}", held["report"]["failure_output"]);
}

#[test]
fn a_fix_that_deletes_the_failing_assertions_needs_review_and_every_place_names_them() {
    let w = World::new();
    let repo = w.repo_with("acme", "widget", &[("t.sh", HARD_TEST), ("calc.sh", CALC_RIGHT)]);
    let n = w.open_pr_with(&repo, "fix", &[("calc.sh", CALC_BUGGY)]);
    let first = forge(&w, "c", n, r#"[["sh", "t.sh"]]"#);
    assert_eq!(first["report"]["status"], "TEST_FAILED");
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    // The "fix": the failing check goes; no [protect] is configured at all.
    w.commit(&repo, "fix", &[("t.sh", "#!/bin/sh\nout=$(sh calc.sh 2 3)\necho \"ok - got $out\"\n")], "fix the test");
    let run = w.run(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "c.json", "--post-comment"]);
    let out = run.json();
    assert_eq!(
        (out["report"]["status"].as_str(), out["status"].as_str()),
        (Some("TEST_PASSED"), Some("NEEDS_REVIEW")),
        "{out:#}"
    );
    let said = "the fix removed 1 assertion from t.sh, the test that failed";
    let next = next(&w, "c");
    assert_eq!(next["action"], "wait_for_human");
    assert!(next["explanation"].as_str().unwrap().contains(said), "{next:#}");
    let comment = w.comments(&repo, n).pop().unwrap();
    assert!(comment.contains(&format!("- Tests: {said}")), "{comment}");
    assert!(comment.contains("removed from `t.sh`: `if [ \"$out\" = 5 ]"), "{comment}");
    let list = w.run(&["list"]).json();
    assert!(list[0]["tests"]["summary"].as_str().unwrap().starts_with(said), "{:#}", list[0]);
}

#[test]
fn a_head_that_does_not_merge_is_a_merge_conflict_handed_back_as_an_iteration() {
    let w = World::new();
    let repo = w.repo_with("acme", "widget", &[("t.sh", HARD_TEST), ("calc.sh", CALC_RIGHT)]);
    let n = w.open_pr_with(&repo, "behind", &[("calc.sh", "echo $(( $1 + $2 ))\n")]);
    let base = w.commit(&repo, "main", &[("calc.sh", "printf '%s\\n' $(($1 + $2))\n")], "main moved on");
    let out = forge(&w, "c", n, r#"[["sh", "t.sh"]]"#);
    assert_eq!(out["report"]["status"], "MERGE_CONFLICT", "{out:#}");
    assert_eq!((out["status"].as_str(), out["iteration"].as_u64()), (Some("AWAITING_WEBGPT_FIX"), Some(1)));
    assert_eq!(out["report"]["base_sha"], base.as_str());
    assert_eq!(out["report"]["tested"]["conflicts"], serde_json::json!(["calc.sh"]));
    assert_eq!(out["report"]["commands"][0]["not_run"], true);
    let next = next(&w, "c");
    assert_eq!(next["action"], "send");
    let text = next["text"].as_str().unwrap();
    assert!(text.contains("## Forge Loop PR test: MERGE_CONFLICT"), "{text}");
    assert!(text.contains("- Merge: conflicts with `main`"), "{text}");
    assert!(text.contains("Bring the branch up to date with its base branch"), "{text}");
    let log = std::fs::read_to_string(w.path(&format!("c.d/{}", out["report"]["log_path"].as_str().unwrap()))).unwrap();
    assert!(log.contains("does not merge cleanly into main") && log.contains("calc.sh"), "{log}");
}
