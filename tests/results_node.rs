//! Node's own per-test results through forgeloop's `node --test` reporter (issue 57), on real
//! `node` processes: an honest suite is itemised with its suites in each test's id and stands;
//! `process.exit(0)` at import, or inside a test run in-process, no longer passes unseen; a
//! command that chooses its own reporter keeps it (its TAP is read instead); the tripwire
//! catches a monkeypatched `assert.strictEqual`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod results_support;

use forgeloop::domain::report::TestStatus;
use forgeloop::domain::test_results::tripwire::{self, Tripwire};
use forgeloop::domain::test_results::{Finding, Outcome, Runner};
use results_support::{Project, judged};

const NODE_TEST: &str = r#"[["node", "--test"]]"#;

const MATHX: &str = "export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n";

const TESTS: &str = "import { describe, it } from 'node:test';\nimport assert from 'node:assert';\n\
    import { add, mul } from '../lib/mathx.mjs';\n\n\
    describe('mathx', () => {\n\
    \x20 it('adds', () => { assert.strictEqual(add(2, 3), 5); });\n\
    \x20 describe('mul', () => {\n\
    \x20   it('small', () => { assert.strictEqual(mul(2, 3), 6); });\n\
    \x20   it('big', () => { assert.strictEqual(mul(1000, 3), 3000); });\n\
    \x20 });\n\
    });\n";

/// Whether `node` is here; CI must have it (the test fails there without it).
fn node() -> bool {
    let works = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(works || std::env::var("CI").is_err(), "CI runs the node tests: install nodejs (20 or later)");
    if !works {
        eprintln!("skipped: no node");
    }
    works
}

fn project() -> Project {
    Project::new(&[("lib/mathx.mjs", MATHX), ("test/mathx.test.mjs", TESTS)])
}

#[tokio::test]
async fn an_honest_suite_is_itemised_with_its_suites_and_stands() {
    if !node() {
        return;
    }
    let p = project();
    let (outcome, merge, evidence) = judged(&p, NODE_TEST, |_| {}).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    let results = &merge.commands[0];
    assert_eq!(results.runners, vec![Runner::Node]);
    assert_eq!(results.test("test/mathx.test.mjs > mathx > mul > big").unwrap().outcome, Outcome::Passed);
    assert_eq!(results.counts.total(), 3, "{:?}", results.tests);
    assert!(evidence.stands, "{evidence:?}");
    assert_eq!(evidence.summary, "3 of 3 tests ran and passed (the base ran 3)");
    // The person still sees node's spec output in the log.
    assert!(p.log(2).contains("✔ big"), "{}", p.log(2));
}

#[tokio::test]
async fn exit_0_at_import_is_held() {
    if !node() {
        return;
    }
    let p = project();
    let (outcome, _, evidence) =
        judged(&p, NODE_TEST, |p| p.write("lib/mathx.mjs", &format!("process.exit(0);\n{MATHX}"))).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    assert!(!evidence.stands);
    assert!(evidence.findings.contains(&Finding::NothingReported), "{evidence:?}");
}

#[tokio::test]
async fn exit_0_inside_an_in_process_test_run_ended_early() {
    if !node() {
        return;
    }
    let p = project();
    let json = r#"[["node", "test/mathx.test.mjs"]]"#;
    let special = "export const add = (a, b) => a + b;\n\
                   export const mul = (a, b) => { if (a === 1000) process.exit(0); return a * b; };\n";
    let (outcome, merge, evidence) = judged(&p, json, |p| p.write("lib/mathx.mjs", special)).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    assert_eq!(merge.commands[0].processes.unended(), 1);
    assert!(!evidence.stands);
    assert!(evidence.findings.contains(&Finding::EndedEarly), "{evidence:?}");
}

#[tokio::test]
async fn a_command_that_chooses_its_reporter_keeps_it_and_its_tap_is_read() {
    if !node() {
        return;
    }
    let p = project();
    let json = r#"[["node", "--test", "--test-reporter=tap"]]"#;
    let (outcome, results) = p.run(json).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(1));
    let results = &results.commands[0];
    assert_eq!(results.runners, vec![Runner::Tap]);
    assert_eq!(results.test("mathx > mul > big").unwrap().outcome, Outcome::Passed);
    assert!(results.notes.iter().any(|n| n.contains("chooses its own --test-reporter")), "{:?}", results.notes);
}

async fn tripwire(p: &Project, modules: &[&str]) -> Tripwire {
    let modules: Vec<String> = modules.iter().map(|m| m.to_string()).collect();
    p.write(tripwire::NODE_FILE, &tripwire::node_file(&modules));
    let argv = tripwire::node_argv(&["node".to_owned(), "--test".to_owned()], tripwire::NODE_FILE);
    let (outcome, results) = p.run(&serde_json::to_string(&[argv]).unwrap()).await;
    p.remove(tripwire::NODE_FILE);
    tripwire::judge(&results.commands[0], outcome.commands[0].exit_code)
}

#[tokio::test]
async fn the_tripwire_catches_a_monkeypatched_assert() {
    if !node() {
        return;
    }
    let p = project();
    assert_eq!(tripwire(&p, &["lib/mathx.mjs"]).await, Tripwire::Faithful);
    let tampered = format!("import assert from 'node:assert';\nassert.strictEqual = () => {{}};\n{MATHX}");
    p.write("lib/mathx.mjs", &tampered);
    let verdict = tripwire(&p, &["lib/mathx.mjs"]).await;
    let Tripwire::Tampered(why) = verdict else { panic!("{verdict:?}") };
    assert!(why.contains("must fail: assert.strictEqual passed"), "{why}");
}
