//! `cargo test`'s own per-test results, read from libtest's output as it streams (issue 57),
//! on a real crate built in a temporary directory: an honest suite is itemised per target and
//! stands; a `.init_array` constructor that exits 0 leaves its target begun and never ended,
//! and `autotests = false` (the integration tests never build) names the tests that did not
//! run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod results_support;

use forgeloop::domain::report::TestStatus;
use forgeloop::domain::test_results::{Finding, Runner, Why};
use results_support::{Project, judged};

const CARGO_TOML: &str = "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n";

const LIB: &str = "/// Adds.\n///\n/// ```\n/// assert_eq!(tiny::add(1, 2), 3);\n/// ```\n\
    pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n\
    #[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n";

const INTEGRATION: &str = "#[test]\nfn integration_adds() {\n    assert_eq!(tiny::add(2, 2), 4);\n}\n";

/// The crate builds into a target directory of its own (not the workspace's, which other
/// builds lock).
fn commands(p: &Project) -> String {
    let target = p.dir.path().join("target");
    serde_json::json!({"commands": [{"argv": ["cargo", "test"], "env": {"CARGO_TARGET_DIR": target}}], "timeout_s": 600})
        .to_string()
}

fn project() -> Project {
    Project::new(&[("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB), ("tests/t.rs", INTEGRATION)])
}

#[tokio::test]
async fn an_honest_crate_is_itemised_per_target_and_stands() {
    let p = project();
    let json = commands(&p);
    let (outcome, merge, evidence) = judged(&p, &json, |_| {}).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    let results = &merge.commands[0];
    assert_eq!(results.runners, vec![Runner::Libtest]);
    assert!(results.test("tiny src/lib.rs: tests::adds").is_some(), "{:?}", results.tests);
    assert!(results.test("t tests/t.rs: integration_adds").is_some(), "{:?}", results.tests);
    assert!(results.test("tiny doc-tests: src/lib.rs - add").is_some(), "{:?}", results.tests);
    assert!(evidence.stands, "{evidence:?}");
    assert_eq!(evidence.summary, "3 of 3 tests ran and passed (the base ran 3)");
}

#[tokio::test]
async fn a_constructor_that_exits_0_is_held() {
    let p = project();
    let json = commands(&p);
    let constructor = "\n#[used]\n#[unsafe(link_section = \".init_array\")]\n\
        static EXIT_EARLY: extern \"C\" fn() = {\n    extern \"C\" fn exit_early() {\n        std::process::exit(0)\n    }\n    exit_early\n};\n";
    let (outcome, _, evidence) =
        judged(&p, &json, |p| p.write("tests/t.rs", &format!("{INTEGRATION}{constructor}"))).await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    assert!(!evidence.stands);
    assert!(evidence.findings.contains(&Finding::EndedEarly), "{evidence:?}");
    assert!(
        evidence
            .named
            .iter()
            .any(|n| n.id.as_deref() == Some("t tests/t.rs: integration_adds") && n.why == Why::Missing)
    );
}

#[tokio::test]
async fn autotests_false_names_the_tests_that_did_not_run() {
    let p = project();
    let json = commands(&p);
    let (outcome, _, evidence) = judged(&p, &json, |p| {
        p.write("Cargo.toml", &CARGO_TOML.replace("edition = \"2024\"\n", "edition = \"2024\"\nautotests = false\n"))
    })
    .await;
    assert_eq!(outcome.status, TestStatus::Passed, "{}", p.log(2));
    assert!(!evidence.stands);
    assert_eq!(evidence.findings, vec![Finding::DidNotRun]);
    assert!(
        evidence
            .summary
            .starts_with("1 test that ran at the base did not run: t tests/t.rs: integration_adds (not run)"),
        "{}",
        evidence.summary
    );
}
