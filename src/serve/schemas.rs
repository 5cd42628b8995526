//! The output schemas of the remote tools that answer about a cycle: the only place a chat
//! client can read what `status`, `waiting_for` or a report's `integrity` mean. A client (the
//! official SDK does) checks each answer against its schema, so these cannot drift from the
//! answers unnoticed: `tests/mcp/connector_test.py` reads every one through it.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A cycle as `start_cycle`, `cycle_status`, `wait` and `test_pr` describe it.
fn cycle_properties() -> Value {
    json!({
        "cycle": {"type": "string", "description": "The cycle's name: what the other tools take as `cycle`."},
        "status": {"type": "string", "description": "Where the cycle stands. AWAITING_BRIEF_CONFIRMATION: the person confirms the brief. AWAITING_PR: you open the pull request and call test_pr. AWAITING_FIX: the last run failed; you push a fix to the same PR and call test_pr. NEEDS_REVIEW: the tests passed but the PR changed its own tests or paths the person protects; the person reviews. READY_TO_MERGE: the tests passed; the person reviews and merges (forgeloop never merges). BLOCKED_MAX_ITERATIONS: every run is used; only the person allows more. Other BLOCKED_* words: stopped for a reason the person sees and can lift. ABORTED, SUPERSEDED: over."},
        "iteration": {"type": "integer", "description": "Test runs counted so far."},
        "max_iterations": {"type": "integer", "description": "The cap: test_pr is refused after this many counted runs unless the person raises it."},
        "pr": {"type": "string", "description": "The pull request the cycle tests, once known: OWNER/REPO#N."},
        "waiting_for": {"type": "string", "description": "Who acts next and what they do: \"you: ...\", or \"the person ...\" with what to tell them (the control room's keys or their command)."}
    })
}

const CYCLE_REQUIRED: [&str; 5] = ["cycle", "status", "iteration", "max_iterations", "waiting_for"];

/// `start_cycle` and `cycle_status`: the cycle.
pub(super) fn cycle() -> Arc<JsonObject> {
    object(json!({"type": "object", "properties": cycle_properties(), "required": CYCLE_REQUIRED}))
}

/// `wait`: the cycle, and whether it changed since what you last saw.
pub(super) fn wait() -> Arc<JsonObject> {
    let mut properties = cycle_properties();
    properties["changed"] = json!({"type": "boolean", "description": "Whether the cycle differs from `since`: true when the status (or, for a status you were told, the run count) is not the one you saw; never false across a change."});
    properties["since"] = json!({"type": "string", "description": "The status `changed` compares with: the `since` you passed, else the last status forgeloop told you about this cycle, else its status when you called wait."});
    let mut required: Vec<&str> = CYCLE_REQUIRED.to_vec();
    required.extend(["changed", "since"]);
    object(json!({"type": "object", "properties": properties, "required": required}))
}

/// What the PR did to its own tests, as `test_pr`'s report carries it.
fn integrity() -> Value {
    let test_file = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file's path in the repository."},
            "kind": {"type": "string", "description": "Why it counts: a test file, a fixture, configuration that decides what a test run does, a script the commands source, or a module that shadows one the tests import."},
            "status": {"type": "string", "description": "How it changed: added, modified, removed, renamed."},
            "additions": {"type": "integer"},
            "deletions": {"type": "integer"},
            "removed_assertions": {"type": "integer", "description": "Removed lines that look like assertions."},
            "added_assertions": {"type": "integer", "description": "Added lines that look like assertions."},
            "removed_lines": {"type": "array", "items": {"type": "string"}, "description": "The first removed assertion lines, quoted."}
        }
    });
    json!({
        "type": ["object", "null"],
        "description": "What this PR did to its own tests and to paths the person protects, judged against the base branch's tip and against the previous tested head. A pass that removed assertions after a failing run, or changed protected paths, is NEEDS_REVIEW rather than READY_TO_MERGE: the person decides whether the change is honest. Null when the run was not judged.",
        "properties": {
            "flag": {"type": "string", "description": "The worst of what it did: tests_added (test files only added to), tests_changed (test files lost or changed lines, or what decides a test run changed), assertions_removed (more assertion lines removed than added). Absent when the PR left its tests alone."},
            "against_base": {"type": "array", "items": test_file, "description": "Each test or validation file the whole PR changes against the base branch."},
            "since_last": {"type": "object", "description": "The test files changed since the previous tested head (iteration, head_sha, files); after_failure is true when that run failed, so this head is the fix."},
            "protected": {"type": "array", "items": {"type": "string"}, "description": "Changed paths the person protects."},
            "base_sha": {"type": "string", "description": "The base branch's tip the change was judged against."},
            "error": {"type": "string", "description": "Why the change could not be judged; such a pass needs the person's review."}
        }
    })
}

/// `test_pr`: the cycle after the run, and the run's report.
pub(super) fn test_pr() -> Arc<JsonObject> {
    let command = json!({
        "type": "object",
        "properties": {
            "argv": {"type": "array", "items": {"type": "string"}, "description": "The command, as an argument vector (never a shell string)."},
            "exit_code": {"type": ["integer", "null"], "description": "How it exited; null when it timed out or did not run."},
            "duration_seconds": {"type": "number"}
        }
    });
    object(json!({
        "type": "object",
        "properties": {
            "cycle": {"type": "object", "properties": cycle_properties(), "required": CYCLE_REQUIRED, "description": "The cycle after this call."},
            "profile": {"type": "string", "description": "The person's test profile that ran (list_repositories says what it runs)."},
            "report": {
                "type": "object",
                "description": "The run's report, redacted (no secret of the person's leaves their machine) and bounded. Absent when nothing ran (the cap was reached).",
                "properties": {
                    "status": {"type": "string", "description": "The verdict on the PR's head: TEST_PASSED, TEST_FAILED, SETUP_FAILED (the profile's setup failed) or MERGE_CONFLICT (the head does not merge into the base)."},
                    "repository": {"type": "string"},
                    "pull_request": {"type": "integer"},
                    "head_sha": {"type": "string", "description": "The commit that was tested: a later push is a new test."},
                    "commands": {"type": "array", "items": command, "description": "Each test command, in order, with how it ended."},
                    "failure_output": {"type": ["string", "null"], "description": "The failing command's output, its end; null after a pass."},
                    "output_tail": {"type": "string", "description": "The last lines of the whole run's output, a pass's evidence included."},
                    "integrity": integrity()
                },
                "required": ["status", "head_sha", "commands"]
            },
            "needs_network": {
                "type": "object",
                "description": "Present when the run needed network access its tests may not have: not your PR's fault, and no run was counted. The person decides whether to allow it; waiting_for says so. Call wait, then test_pr again.",
                "properties": {
                    "phase": {"type": "string", "description": "setup or test: the phase that needed it."},
                    "destinations": {"type": "array", "items": {"type": "string"}, "description": "What it tried to reach."},
                    "counted": {"type": "boolean"}
                }
            },
            "already_tested": {"type": "string", "description": "Present when this head was tested already: nothing ran and no run was counted; push a new commit to test again."},
            "handoff": {"type": "string", "description": "After a failure: what to fix, as forgeloop would type it to you."}
        },
        "required": ["cycle", "profile"]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_schema_whose_required_fields_are_described() {
        for schema in [cycle(), wait(), test_pr()] {
            assert_eq!(schema.get("type"), Some(&json!("object")));
            let properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
            for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                let name = name.as_str().unwrap_or_default();
                assert!(properties.contains_key(name), "{name} is required but not described");
            }
        }
        let integrity = &test_pr()["properties"]["report"]["properties"]["integrity"];
        assert!(integrity["description"].as_str().is_some_and(|d| d.contains("NEEDS_REVIEW")), "{integrity}");
    }
}
