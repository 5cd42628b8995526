//! Trust, then verify (issues 32 and 38), through the real binary against the GitHub emulator:
//! a PR whose second head (the fix of a failing run) rewrites its test script to pass is
//! `NEEDS_REVIEW` with `integrity` naming the file and the removed assertion, and `next`, the PR
//! comment and `list` say so first; with the path protected (`mode = "flag"`) the pass names
//! it too, `approve` needs a terminal and makes it `READY_TO_MERGE`; a PR that only adds a test
//! is "tests added".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::time::Duration;

use github_emulator::RepoHandle;
use serde_json::Value;
use support::tmux::Tmux;
use support::world::{CALC_BUGGY, CALC_FIXED, World};

/// What WebGPT pushed in the trial: the failing check replaced by a line that always passes.
const TEST_SH_REWRITTEN: &str =
    "#!/bin/sh\nout=$(sh calc.sh 2 3)\necho \"ok toggle persists across reloads\"; exit 0\n";

/// The check line the rewrite removed (`support::world::TEST_SH`).
const REMOVED_CHECK: &str =
    "if [ \"$out\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $out\"; exit 1; fi";

/// A cycle whose first run failed (calc.sh buggy) and whose second head rewrites test.sh;
/// returns the second run's output.
fn rewritten_tests(w: &World, extra: &[&str]) -> (RepoHandle, u64, Value) {
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", extra);
    let pr = format!("acme/widget#{n}");
    let first = w.forge_pr("c.json", &pr, &["--post-comment"]);
    assert_eq!(first.json()["report"]["status"], "TEST_FAILED", "{}", first.stdout);
    assert!(
        first.json()["report"]["integrity"]["flag"].is_null(),
        "the first head left test.sh alone: {}",
        first.stdout
    );
    assert_eq!(w.run(&["sent", "--state", "c.json"]).code, 0);
    w.commit(&repo, "fix-calc", &[("test.sh", TEST_SH_REWRITTEN)], "make the test pass");
    let second = w.forge_pr("c.json", &pr, &["--post-comment"]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    (repo, n, second.json())
}

fn next(w: &World) -> Value {
    let run = w.run(&["next", "--state", "c.json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    run.json()
}

#[test]
fn a_fix_that_rewrites_its_test_script_waits_for_a_person_and_every_decision_point_says_so() {
    let w = World::new();
    let (repo, n, out) = rewritten_tests(&w, &[]);
    assert_eq!(out["status"], "NEEDS_REVIEW", "no [protect]: the fix removed the failing assertion: {out:#}");
    let integrity = &out["report"]["integrity"];
    assert_eq!(integrity["flag"], "assertions_removed", "{integrity:#}");
    let files = integrity["against_base"].as_array().unwrap();
    assert_eq!(files.len(), 1, "calc.sh is unchanged; only test.sh is a test file: {integrity:#}");
    assert_eq!((files[0]["path"].as_str(), files[0]["kind"].as_str()), (Some("test.sh"), Some("run")));
    assert_eq!(files[0]["removed_assertions"], 1);
    assert_eq!(files[0]["removed_lines"][0], REMOVED_CHECK);
    // Since the last tested head: the same rewrite, named against run 1.
    assert_eq!(integrity["since_last"]["iteration"], 1);
    assert_eq!(integrity["since_last"]["files"][0]["path"], "test.sh");

    let said = "the fix removed 1 assertion from test.sh, the test that failed";
    assert_eq!(integrity["since_last"]["after_failure"], true);
    assert_eq!(integrity["since_last"]["failed"], serde_json::json!(["test.sh"]));
    let next = next(&w);
    assert_eq!(next["action"], "wait_for_human");
    let explanation = next["explanation"].as_str().unwrap();
    assert!(
        explanation.contains(&format!("but {said}")) && explanation.contains("test.sh (+1 −1, 1 assertion removed)"),
        "{explanation}"
    );

    let comments = w.comments(&repo, n);
    let last = comments.last().unwrap();
    assert!(
        last.contains(&format!("- Tests: {said}; the PR changed its tests and removed assertions: test.sh")),
        "{last}"
    );
    assert!(last.contains(&format!("- Needs a person's review: {said}")), "{last}");
    assert!(last.contains("removed from `test.sh`:") && last.contains("exit 1; fi"), "{last}");
    assert!(!comments[0].contains("- Tests:"), "the first run changed no test: {}", comments[0]);

    let list = w.run(&["list"]).json();
    let row = &list[0];
    assert_eq!(row["tests"]["flag"], "assertions_removed", "{row:#}");
    assert!(row["tests"]["summary"].as_str().unwrap().starts_with(said), "{row:#}");

    // The journal says it too, and the diff the check read is the Diff tab's, cached.
    let log = w.run(&["log", "--state", "c.json"]).json();
    let finished: Vec<&Value> =
        log["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "run_finished").collect();
    assert_eq!(finished[1]["data"]["tests"], "assertions_removed", "{:#}", finished[1]);
    let diff = w.run(&["diff", "--state", "c.json", "--since-last", "--json"]).json();
    assert_eq!(diff["files"][0]["path"], "test.sh", "{diff:#}");
}

#[test]
fn with_the_test_script_protected_the_pass_needs_a_persons_review_and_approval() {
    let w = World::new();
    // Flagged, not held: the PR's own test.sh runs (held, the person's would, and fail).
    w.config("[protect]\npaths = [\"test.sh\"]\nmode = \"flag\"\n\n[protect.repositories.\"acme/widget\"]\npaths = [\".github/\"]\n");
    let (_, n, out) = rewritten_tests(&w, &[]);
    // The prompt told WebGPT what not to change.
    let state = w.sb.read_json(&w.path("c.json"));
    assert!(state["webgpt_prompt"].as_str().unwrap().contains("Do not change: `test.sh`"), "{state:#}");

    assert_eq!(out["status"], "NEEDS_REVIEW", "{out:#}");
    assert_eq!(out["report"]["integrity"]["protected"], serde_json::json!(["test.sh"]));
    assert_eq!(out["report"]["integrity"]["protect_patterns"], serde_json::json!(["test.sh", ".github/"]));
    let next = next(&w);
    assert_eq!(next["action"], "wait_for_human", "{next:#}");
    let explanation = next["explanation"].as_str().unwrap();
    assert!(
        explanation.contains("protected paths: test.sh") && explanation.contains("forgeloop approve"),
        "{explanation}"
    );
    // The agent cannot test again past the gate, nor approve.
    let again = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_ne!(again.code, 0, "{}", again.stdout);
    let before = std::fs::read(w.path("c.json")).unwrap();
    let approve = w.run(&["approve", "--state", "c.json"]);
    assert_eq!((approve.code, approve.json()["status"].as_str()), (2, Some("NOT_A_TERMINAL")), "{}", approve.stdout);
    assert_eq!(std::fs::read(w.path("c.json")).unwrap(), before, "nothing changed");

    // A person approves on a terminal, after reading why.
    let tmux = Tmux::start(&w.terminal("approve --state c.json"), 160, 40);
    let screen = tmux.wait_for("[y/N]", Duration::from_secs(20));
    assert!(screen.contains("protected paths: test.sh") && screen.contains("1 assertion removed"), "{screen}");
    tmux.send_keys(&["y", "Enter"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(20));
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!(state["status"], "READY_TO_MERGE");
    let log = w.run(&["log", "--state", "c.json"]).json();
    let approved = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "approved").cloned().unwrap();
    assert_eq!(
        (approved["actor"].as_str(), approved["data"]["protected"][0].as_str()),
        (Some("human"), Some("test.sh"))
    );
}

#[test]
fn the_persons_words_answer_a_needs_review_instead_of_approving_it() {
    let w = World::new();
    w.config("[protect]\npaths = [\"test.sh\"]\nmode = \"flag\"\n");
    let (_, _, out) = rewritten_tests(&w, &[]);
    assert_eq!(out["status"], "NEEDS_REVIEW");
    std::fs::write(w.path("say.txt"), "Do not edit test.sh; fix calc.sh instead.").unwrap();
    let said = w.run(&["say", "--state", "c.json", "--file", "say.txt"]);
    assert_eq!(said.code, 0, "{}", said.stdout);
    let next = next(&w);
    assert_eq!((next["status"].as_str(), next["action"].as_str()), (Some("AWAITING_WEBGPT_FIX"), Some("send")));
    assert!(next["text"].as_str().unwrap().contains("fix calc.sh instead"), "{next:#}");
}

#[test]
fn a_pr_that_only_adds_a_test_is_flagged_as_tests_added_not_as_removed_assertions() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    w.commit(
        &repo,
        "more-tests",
        &[("calc.sh", CALC_FIXED), ("tests/test_mul.sh", "out=$(sh calc.sh 2 2)\n[ \"$out\" = 4 ] || exit 1\n")],
        "fix and test",
    );
    let n = w.rt.block_on(w.emu.open_pr(&repo, "more-tests", "main", "more-tests")).unwrap();
    w.cycle("c.json", &[]);
    let out = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]).json();
    assert_eq!(out["status"], "READY_TO_MERGE", "{out:#}");
    let integrity = &out["report"]["integrity"];
    assert_eq!(integrity["flag"], "tests_added", "{integrity:#}");
    assert_eq!(integrity["against_base"][0]["path"], "tests/test_mul.sh");
    assert_eq!(integrity["against_base"][0]["removed_assertions"], 0);
    let explanation = next(&w)["explanation"].as_str().unwrap().to_owned();
    assert!(explanation.contains("the PR added tests: tests/test_mul.sh (added)"), "{explanation}");
    assert!(!explanation.contains("review before merging") && !explanation.contains("removed"), "{explanation}");
    let list = w.run(&["list"]).json();
    assert_eq!(list[0]["tests"]["flag"], "tests_added");
}

#[test]
fn a_failed_run_that_changed_its_tests_says_so_in_the_handoff() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let check = "#!/bin/sh\nout=$(sh calc.sh 2 3)\n[ \"$out\" = 6 ] || exit 1\n";
    w.commit(&repo, "calc", &[("calc.sh", CALC_FIXED), ("test.sh", check)], "a new check");
    let n = w.rt.block_on(w.emu.open_pr(&repo, "calc", "main", "calc")).unwrap();
    w.cycle("c.json", &[]);
    let out = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]).json();
    assert_eq!(out["report"]["status"], "TEST_FAILED", "{out:#}");
    assert_eq!(out["report"]["integrity"]["flag"], "tests_changed", "one check for another: {out:#}");
    let next = next(&w);
    assert_eq!(next["action"], "send");
    let handoff = next["text"].as_str().unwrap();
    assert!(handoff.contains("- Tests: the PR changed its tests: test.sh (+1 −1)"), "{handoff}");
    assert!(!handoff.contains("review before merging"), "a failure is not a pass to review: {handoff}");
}

#[test]
fn a_test_outside_any_cycle_reports_integrity_against_the_base() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    w.commit(&repo, "weaken", &[("test.sh", TEST_SH_REWRITTEN)], "make the test pass");
    let n = w.rt.block_on(w.emu.open_pr(&repo, "weaken", "main", "weaken")).unwrap();
    let run = w.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", "commands.json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["status"], "TEST_PASSED");
    assert_eq!(report["integrity"]["flag"], "assertions_removed", "{report:#}");
    assert_eq!(report["integrity"]["against_base"][0]["removed_lines"][0], REMOVED_CHECK);
    assert!(report["integrity"]["since_last"].is_null());
}
