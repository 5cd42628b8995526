//! The handoff of a report (`forgeloop handoff`/`iterate`, MCP `webgpt_pr_handoff`): the
//! message that goes back to WebGPT after a failed run. One reader of a report for both front
//! ends, typed: a report written by forgeloop, by the reference tool (no `comment_markdown`),
//! or sent by another MCP client with the fields a run writes.

use serde_json::{Map, Value};

use crate::domain::report::{Report, TestStatus};
use crate::domain::text;

/// Why a report has no handoff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandoffError {
    /// Not a JSON object with a test report's fields.
    #[error(
        "the report is not a test report: {0}; give the object a run wrote, or at least status, repository, pull_request, head_sha and commands (argv, exit_code, duration_seconds), with failure_output or comment_markdown"
    )]
    NotAReport(String),
    /// A pass has nothing for WebGPT.
    #[error("the report passed: there is nothing to send WebGPT; the PR is ready for a person to review")]
    Passed,
}

/// A report read for its handoff: the report and its comment (the one it carries, or one
/// built as a run builds it when it carries none).
#[derive(Debug, Clone)]
pub struct Handoff {
    /// The report as read (a forgeloop report, or one in the reference tool's shape).
    pub report: Report,
    /// The PR comment the handoff carries: the report's own, or one built from its fields.
    pub comment: String,
}

impl Handoff {
    /// The message for WebGPT: the comment and the request to push a fix. A pass has none.
    pub fn message(&self) -> Result<String, HandoffError> {
        match self.report.status {
            TestStatus::Passed => Err(HandoffError::Passed),
            status => Ok(text::handoff(&self.comment, status)),
        }
    }

    /// `WebGPT handoff: TEST_FAILED for acme/widget#7 at <sha>`: what `forgeloop handoff` prints
    /// above the comment.
    pub fn header(&self) -> String {
        format!(
            "WebGPT handoff: {} for {}#{} at {}",
            self.report.status.as_str(),
            self.report.repository,
            self.report.pull_request,
            self.report.head_sha
        )
    }
}

/// Reads a report's JSON (the file a run wrote, or an MCP argument).
pub fn read(value: Value) -> Result<Handoff, HandoffError> {
    let Value::Object(fields) = value else {
        return Err(HandoffError::NotAReport("it is not a JSON object".into()));
    };
    of_fields(fields)
}

fn of_fields(mut fields: Map<String, Value>) -> Result<Handoff, HandoffError> {
    let given = match fields.get("comment_markdown") {
        Some(Value::String(text)) if !text.trim().is_empty() => true,
        None | Some(Value::Null) | Some(Value::String(_)) => false,
        Some(_) => return Err(HandoffError::NotAReport("comment_markdown is not text".into())),
    };
    fields.insert(
        "comment_markdown".into(),
        fields.get("comment_markdown").filter(|_| given).cloned().unwrap_or_else(|| Value::from("")),
    );
    let report: Report =
        serde_json::from_value(Value::Object(fields)).map_err(|e| HandoffError::NotAReport(e.to_string()))?;
    let comment = if given { report.comment_markdown.clone() } else { built_comment(&report) };
    Ok(Handoff { report, comment })
}

/// The PR comment of a report that came without one, built as a run builds it (the failure
/// output cut to the same tail), without the sandbox line the report cannot vouch for.
fn built_comment(report: &Report) -> String {
    let tail = report.failure_output.as_deref().map(|o| text::failure_tail(o, text::FAILURE_TAIL_CHARS));
    let marker = text::Marker { task_space: None, iteration: None, head_sha: report.head_sha.clone() };
    text::comment_markdown(&text::CommentInput {
        marker: &marker,
        status: report.status,
        repository: &report.repository,
        pull_request: report.pull_request,
        head_sha: &report.head_sha,
        setup: &report.setup,
        commands: &report.commands,
        failure_output: tail.as_deref(),
        log_hint: None,
        sandbox: None,
        checks: &report.checks,
        integrity: report.integrity.as_ref(),
        tested: report.tested.as_ref().zip(report.base_sha.as_deref()),
        proof: Some(text::Proof::of(report)),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn report(status: &str) -> Value {
        json!({"status": status, "repository": "acme/widget", "pull_request": 7,
            "head_sha": "c".repeat(40), "commands": [{"argv": ["sh", "test.sh"], "exit_code": 1, "duration_seconds": 0.1}],
            "comment_markdown": "## Forge Loop PR test: TEST_FAILED\nboom"})
    }

    #[test]
    fn a_failed_or_setup_failed_report_has_a_handoff_and_a_pass_has_none() {
        let failed = read(report("TEST_FAILED")).unwrap();
        let message = failed.message().unwrap();
        assert!(message.starts_with("## Forge Loop PR test: TEST_FAILED\nboom") && message.contains("PR_URL:"));
        assert_eq!(failed.header(), format!("WebGPT handoff: TEST_FAILED for acme/widget#7 at {}", "c".repeat(40)));
        assert!(read(report("SETUP_FAILED")).unwrap().message().is_ok(), "a failed setup is handed off too");
        assert_eq!(read(report("TEST_PASSED")).unwrap().message(), Err(HandoffError::Passed));
    }

    #[test]
    fn a_report_without_its_comment_gets_one_built_and_junk_is_refused() {
        let mut bare = report("TEST_FAILED");
        bare.as_object_mut().unwrap().remove("comment_markdown");
        bare["failure_output"] = json!("AssertionError: expected 5");
        let built = read(bare).unwrap();
        assert!(
            built.comment.contains("AssertionError: expected 5") && built.comment.contains("`sh`"),
            "{}",
            built.comment
        );
        assert!(matches!(read(json!([1, 2])), Err(HandoffError::NotAReport(_))));
        assert!(matches!(read(report("BLOCKED")), Err(HandoffError::NotAReport(_))));
        let mut odd = report("TEST_FAILED");
        odd["comment_markdown"] = json!(3);
        assert!(matches!(read(odd), Err(HandoffError::NotAReport(_))));
    }
}
