//! The honest way out (issue 57): when the tests contradict the brief, no fix is asked of
//! WebGPT that it could not honestly make. A held run that fails only on held tests the PR
//! corrected is `TESTS_DISPUTED` — both versions and the failing assertion shown, nothing sent,
//! the person decides; accepting the PR's version tests the same head again with it and a pass is
//! `READY_TO_MERGE`. A reply that says `TESTS_CONTRADICT:` goes to the person the same way and
//! costs no iteration. Through the real binary against the GitHub emulator.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use serde_json::Value;
use support::world::World;

const AREA: &str = "def area(cells):\n    \"\"\"Each cell is 360 square metres: area(3) is 1080.\"\"\"\n    return 0\n";
const TEST: &str = "import unittest\n\nfrom area import area\n\n\nclass AreaTest(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(area(1), 360)\n\n    def test_three(self):\n        # three cells of 360 each: 1080\n        self.assertEqual(area(3), 1090)\n";
const COMMANDS: &str = r#"[["python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v"]]"#;

fn project(w: &World) -> github_emulator::RepoHandle {
    w.config("[protect]\npaths = [\"tests/\"]\n");
    let repo = w.rt.block_on(w.emu.create_repo("acme", "area", false)).unwrap();
    w.commit(&repo, "main", &[("area.py", AREA), ("tests/__init__.py", ""), ("tests/test_area.py", TEST)], "area");
    repo
}

fn next(w: &World, state: &str) -> Value {
    w.run(&["next", "--state", state]).json()
}

#[test]
fn a_held_run_failing_only_on_a_test_the_pr_corrected_is_the_persons_call_and_accepting_it_retests() {
    let w = World::new();
    let repo = project(&w);
    let fixed =
        "def area(cells):\n    \"\"\"Each cell is 360 square metres: area(3) is 1080.\"\"\"\n    return 360 * cells\n";
    let corrected = TEST.replace("1090", "1080");
    let n = w.open_pr_with(&repo, "fix", &[("area.py", fixed), ("tests/test_area.py", &corrected)]);
    let out = w.forge_new("disputed", "acme/area", n, COMMANDS);
    assert_eq!(out["status"], "TESTS_DISPUTED", "{out:#}");
    assert_eq!(out["report"]["status"], "TEST_FAILED");
    assert_eq!(out["iteration"], 1, "the run counts");
    assert!(out["outbox"].is_null(), "nothing goes to WebGPT: {:#}", out["outbox"]);
    let disputed = &out["report"]["disputed"][0];
    assert_eq!(disputed["path"], "tests/test_area.py");
    assert_eq!(disputed["yours"], "self.assertEqual(area(3), 1090)");
    assert_eq!(disputed["theirs"], "self.assertEqual(area(3), 1080)");
    let step = next(&w, "disputed.json");
    assert_eq!(step["action"], "wait_for_human", "{step:#}");
    let explanation = step["explanation"].as_str().unwrap();
    assert!(
        explanation.contains(
            "the PR says `self.assertEqual(area(3), 1080)`, your test says `self.assertEqual(area(3), 1090)`"
        ),
        "{explanation}"
    );
    assert!(!explanation.contains("push a fix"), "{explanation}");
    let comment = out["report"]["comment_markdown"].as_str().unwrap();
    assert!(comment.contains("- Disputed (the person decides, no fix is asked): tests/test_area.py"), "{comment}");

    // The agent cannot take the person's decision: `approve` wants a terminal.
    let refused = w.run(&["approve", "--state", "disputed.json"]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);

    // The person accepts the PR's version: the same head is tested again with it.
    let ctx = w.ctx();
    let paths = forgeloop::cycle::files::CyclePaths::new(w.path("disputed.json")).unwrap();
    let saved = forgeloop::cycle::actions::approve(&ctx, &paths, "test").unwrap();
    assert_eq!(saved.state.status.as_str(), "AWAITING_WEBGPT_FIX");
    let step = next(&w, "disputed.json");
    assert_eq!(step["action"], "run", "{step:#}");
    let run = w.run(&["forge", "--pr", &format!("acme/area#{n}"), "--state", "disputed.json"]);
    let again = run.json();
    assert_eq!(again["status"], "READY_TO_MERGE", "{}\n{}", run.stdout, run.stderr);
    assert_eq!(again["iteration"], 2);
    assert!(again["report"]["tested"]["held"].as_array().is_none_or(|h| h.is_empty()), "{:#}", again["report"]);
}

#[test]
fn a_failure_beside_the_corrected_test_is_an_ordinary_failure_handed_back() {
    let w = World::new();
    let repo = project(&w);
    // The test is "corrected", but the code is still wrong for one cell too.
    let wrong = "def area(cells):\n    return 350 * cells\n";
    let corrected = TEST.replace("1090", "1050");
    let n = w.open_pr_with(&repo, "wrong", &[("area.py", wrong), ("tests/test_area.py", &corrected)]);
    let out = w.forge_new("wrong", "acme/area", n, COMMANDS);
    assert_eq!(out["status"], "AWAITING_WEBGPT_FIX", "{out:#}");
    assert!(out["report"]["disputed"].is_null(), "{:#}", out["report"]);
    assert!(out["outbox"]["text"].as_str().unwrap().contains("Fix the code, not the tests"), "{:#}", out["outbox"]);
}

#[test]
fn a_reply_that_says_the_tests_contradict_the_brief_waits_for_the_person_and_costs_no_iteration() {
    let w = World::new();
    project(&w);
    w.cycle("said.json", &[]);
    let reply = w.path("reply.txt");
    std::fs::write(
        &reply,
        "I did not open a pull request.\n\nTESTS_CONTRADICT: tests/test_area.py:12: the test expects 1090, but its own comment and the docstring say 1080.\n\nPR_URL: NOT_CREATED\n",
    )
    .unwrap();
    let out = w.run(&["reply", "--state", "said.json", "--file", reply.to_str().unwrap()]).json();
    assert_eq!(
        (out["status"].as_str(), out["cycle_status"].as_str()),
        (Some("TESTS_CONTRADICT"), Some("TESTS_DISPUTED"))
    );
    let step = next(&w, "said.json");
    assert_eq!((step["action"].as_str(), step["iteration"].as_u64()), (Some("wait_for_human"), Some(0)));
    assert!(step["explanation"].as_str().unwrap().contains("the test expects 1090"), "{step:#}");
    // The person's words answer it: WebGPT is told what holds.
    let words = w.path("words.txt");
    std::fs::write(&words, "The test is right: the border cell counts as well. Please fix area().").unwrap();
    let said = w.run(&["say", "--state", "said.json", "--file", words.to_str().unwrap()]).json();
    assert_eq!(said["status"], "AWAITING_WEBGPT_FIX", "{said:#}");
    assert!(said["dispute"].is_null(), "{said:#}");
}
