//! The connector's answers as the chat reads them: the use cases' typed answers
//! (`cycle::connector`) shaped into the documents the output schemas describe
//! ([`super::schemas`]), each text bounded, since a chat's context is small.

use serde_json::{Value, json};

use crate::cycle::connector::{DiffAnswer, TestAnswer};
use crate::cycle::review::shared::ReviewAnswer;
use crate::domain::report::Report;

/// The most a tool's text answer carries (a failure output, a diff, a handoff).
pub const MAX_ANSWER_BYTES: usize = 24 * 1024;

/// `text` cut to [`MAX_ANSWER_BYTES`] (at a character boundary), saying so.
pub fn bound_text(text: &str) -> String {
    if text.len() <= MAX_ANSWER_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_ANSWER_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… {} more bytes cut: the whole log is on the person's machine]", &text[..end], text.len() - end)
}

/// `test_pr`'s document.
pub fn test_pr(answer: &TestAnswer) -> Value {
    let mut out = json!({ "cycle": answer.cycle, "profile": answer.profile });
    if let Some(report) = &answer.report {
        out["report"] = report_for_chat(report);
        if let Some(tail) = &answer.output_tail {
            out["report"]["output_tail"] = json!(tail);
        }
    }
    if let Some(iteration) = answer.already_tested {
        out["already_tested"] =
            json!(format!("this head was tested already (iteration {iteration}): push a new commit to test again"));
    }
    if let Some(handoff) = &answer.handoff {
        out["handoff"] = json!(bound_text(handoff));
    }
    if let Some(needs) = &answer.needs_network {
        out["needs_network"] = json!(needs);
    }
    out
}

/// A report for the chat: its verdict, head, each command's argv and exit code, the failure
/// output (bounded) and what the PR did to its own tests.
fn report_for_chat(report: &Report) -> Value {
    let commands: Vec<Value> = report
        .commands
        .iter()
        .map(|c| json!({ "argv": c.argv, "exit_code": c.exit_code, "duration_seconds": c.duration_seconds }))
        .collect();
    json!({
        "status": report.status.as_str(),
        "repository": report.repository,
        "pull_request": report.pull_request,
        "head_sha": report.head_sha,
        "commands": commands,
        "failure_output": report.failure_output.as_deref().map(bound_text),
        "integrity": report.integrity,
    })
}

/// `get_diff`'s document.
pub fn diff(answer: &DiffAnswer) -> Value {
    json!({
        "kind": if answer.since_last_run { "since_last_run" } else { "whole_pr" },
        "files": answer
            .files
            .iter()
            .map(|(path, additions, deletions)| json!({"path": path, "additions": additions, "deletions": deletions}))
            .collect::<Vec<_>>(),
        "diff": bound_text(&answer.text),
    })
}

/// `get_handoff`'s document.
pub fn handoff(text: &str) -> Value {
    json!({ "handoff": bound_text(text) })
}

/// The most files of a packet's manifest `get_review` lists (the rest are counted).
pub const MAX_MANIFEST_FILES: usize = 200;

/// `get_review`'s document: the answer, its manifest's file list bounded, each finding's text
/// bounded (a reply is bounded already; a manifest grows with the change).
pub fn review(answer: &ReviewAnswer) -> Value {
    let mut out = serde_json::to_value(answer).unwrap_or_else(|e| json!({ "error": e.to_string() }));
    if let Some(files) = out.pointer_mut("/manifest/files").and_then(Value::as_array_mut)
        && files.len() > MAX_MANIFEST_FILES
    {
        let cut = files.len() - MAX_MANIFEST_FILES;
        files.truncate(MAX_MANIFEST_FILES);
        out["manifest"]["files_not_listed"] = json!(cut);
    }
    if let Some(findings) = out.get_mut("findings").and_then(Value::as_array_mut) {
        for finding in findings {
            if let Some(text) = finding.get("text").and_then(Value::as_str).map(bound_text) {
                finding["text"] = json!(text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_lists_at_most_so_many_files_and_counts_the_rest() {
        let files: Vec<Value> = (0..MAX_MANIFEST_FILES + 3).map(|i| json!({ "path": format!("f{i}") })).collect();
        let answer = ReviewAnswer {
            review: "r".into(),
            status: "AWAITING_TRIAGE",
            repository: "acme/widget".into(),
            base: "a".repeat(40),
            head: "b".repeat(40),
            pr: None,
            route: None,
            attestation: None,
            manifest: Some(json!({ "files": files })),
            packet_awaits_approval: Some(false),
            findings: Vec::new(),
            untriaged: Vec::new(),
        };
        let doc = review(&answer);
        assert_eq!(doc["manifest"]["files"].as_array().map(Vec::len), Some(MAX_MANIFEST_FILES));
        assert_eq!(doc["manifest"]["files_not_listed"], 3);
    }

    #[test]
    fn long_text_is_cut_at_a_character_and_says_so() {
        let text = "é".repeat(MAX_ANSWER_BYTES);
        let cut = bound_text(&text);
        assert!(cut.len() < text.len() && cut.contains("more bytes cut"), "{}", cut.len());
        assert_eq!(bound_text("short"), "short");
    }
}
