//! What each journal event records, typed: writers build an [`EventData`], readers match on
//! it. On disk a line keeps its `kind` and `data` as journals have always held them (the hash
//! chain is over that JSON), so a journal written before these types reads the same; a field
//! an older forgeloop did not write is `None`/empty, and a kind or shape this version does not
//! know is `None` from [`EventData::parse`] (the reader shows the kind's name).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::EventKind;
use super::integrity::Flag;
use super::reply::ReplyClass;
use super::report::TestStatus;
use super::state::{Outbox, OutboxKind};
use super::status::Status;

/// A message put in the outbox or sent: its kind and the hash of its (redacted) text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OutboxKind>,
    #[serde(default)]
    pub sha256: String,
}

impl Message {
    pub fn of(outbox: &Outbox) -> Message {
        Message { kind: Some(outbox.kind), sha256: outbox.sha256.clone() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum EventData {
    Created {
        request: String,
        #[serde(default)]
        task_space: String,
        #[serde(default)]
        iteration: u32,
        #[serde(default)]
        max_iterations: u32,
        #[serde(default)]
        predecessor: Option<String>,
        #[serde(default)]
        repository: Option<String>,
    },
    BriefConfirmed {
        via: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edited: Option<bool>,
    },
    PromptIssued(Message),
    FollowupIssued(Message),
    HandoffIssued(Message),
    MessageSent(Message),
    OutboxAdopted {
        #[serde(default)]
        kind: Option<OutboxKind>,
        #[serde(default)]
        from: String,
    },
    ReplyRecorded {
        class: ReplyClass,
        #[serde(default)]
        reason: String,
        #[serde(default)]
        pr: Option<String>,
        #[serde(default)]
        sha256: String,
        #[serde(default)]
        overridden: bool,
        #[serde(default)]
        text: String,
        #[serde(default)]
        truncated: bool,
    },
    StatusChanged {
        from: Status,
        to: Status,
    },
    Blocked {
        status: Status,
        #[serde(default)]
        reason: Option<String>,
    },
    Unblocked {
        from: Status,
    },
    CapExtended {
        from: u32,
        to: u32,
    },
    Approved {
        #[serde(default)]
        via: String,
        #[serde(default)]
        head_sha: Option<String>,
        #[serde(default)]
        protected: Vec<String>,
    },
    Aborted {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
    },
    Superseded {
        successor: String,
    },
    RunStarted {
        pr: String,
        head_sha: String,
        iteration: u32,
        #[serde(default)]
        log: String,
    },
    RunFinished {
        iteration: u32,
        pr: String,
        head_sha: String,
        status: TestStatus,
        #[serde(default)]
        log: String,
        #[serde(default)]
        report: String,
        #[serde(default)]
        log_truncated: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        executor: Option<String>,
        /// What the fetch did (`mirror_created`, `received_bytes`, …); `null` for a CI run.
        #[serde(default)]
        fetch: Value,
        /// What the head did to the PR's own tests (design §5.2).
        #[serde(default)]
        tests: Option<Flag>,
        #[serde(default)]
        protected: Vec<String>,
    },
    RunFailed {
        pr: String,
        error: String,
        #[serde(default)]
        infra_failures: u32,
    },
    RunCancelled {
        pr: String,
        iteration: u32,
        reason: String,
        #[serde(default)]
        counted: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requested_by_pid: Option<u32>,
    },
    RunNeedsNetwork {
        pr: String,
        head_sha: String,
        #[serde(default)]
        phase: String,
        #[serde(default)]
        allow: Vec<String>,
        #[serde(default)]
        sign: Option<String>,
        #[serde(default)]
        log: String,
        #[serde(default)]
        counted: bool,
    },
    CommentPublished {
        url: String,
        #[serde(default)]
        created: bool,
        #[serde(default)]
        iteration: Option<u32>,
    },
    CommentFailed {
        error: String,
    },
    Attached {
        repository: String,
        #[serde(default)]
        project_url: Option<String>,
        #[serde(default)]
        project_name: Option<String>,
        #[serde(default)]
        conversation_url: Option<String>,
    },
    NetworkAllowed {
        repository: String,
        allow: Vec<String>,
        #[serde(default)]
        added: Vec<String>,
        #[serde(default)]
        config: String,
        #[serde(default)]
        table: String,
    },
    PrUnchanged {
        via: String,
        pr: String,
        head_sha: String,
        #[serde(default)]
        branch: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tested_in: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tested: Option<TestStatus>,
    },
    MessageWritten {
        text: String,
        /// The pending message the words were put before, in words (`follow-up`).
        #[serde(default)]
        before: Option<String>,
    },
    CommandsChanged {
        #[serde(default)]
        before_sha256: Option<String>,
        after_sha256: String,
        #[serde(default)]
        widened: Vec<String>,
    },
}

impl EventData {
    pub fn kind(&self) -> EventKind {
        match self {
            EventData::Created { .. } => EventKind::Created,
            EventData::BriefConfirmed { .. } => EventKind::BriefConfirmed,
            EventData::PromptIssued(_) => EventKind::PromptIssued,
            EventData::FollowupIssued(_) => EventKind::FollowupIssued,
            EventData::HandoffIssued(_) => EventKind::HandoffIssued,
            EventData::MessageSent(_) => EventKind::MessageSent,
            EventData::OutboxAdopted { .. } => EventKind::OutboxAdopted,
            EventData::ReplyRecorded { .. } => EventKind::ReplyRecorded,
            EventData::StatusChanged { .. } => EventKind::StatusChanged,
            EventData::Blocked { .. } => EventKind::Blocked,
            EventData::Unblocked { .. } => EventKind::Unblocked,
            EventData::CapExtended { .. } => EventKind::CapExtended,
            EventData::Approved { .. } => EventKind::Approved,
            EventData::Aborted { .. } => EventKind::Aborted,
            EventData::Superseded { .. } => EventKind::Superseded,
            EventData::RunStarted { .. } => EventKind::RunStarted,
            EventData::RunFinished { .. } => EventKind::RunFinished,
            EventData::RunFailed { .. } => EventKind::RunFailed,
            EventData::RunCancelled { .. } => EventKind::RunCancelled,
            EventData::RunNeedsNetwork { .. } => EventKind::RunNeedsNetwork,
            EventData::CommentPublished { .. } => EventKind::CommentPublished,
            EventData::CommentFailed { .. } => EventKind::CommentFailed,
            EventData::Attached { .. } => EventKind::Attached,
            EventData::NetworkAllowed { .. } => EventKind::NetworkAllowed,
            EventData::PrUnchanged { .. } => EventKind::PrUnchanged,
            EventData::MessageWritten { .. } => EventKind::MessageWritten,
            EventData::CommandsChanged { .. } => EventKind::CommandsChanged,
        }
    }

    /// The line's `data`, as the journal stores it.
    pub fn to_value(&self) -> Value {
        match serde_json::to_value(self) {
            Ok(Value::Object(mut tagged)) => tagged.remove("data").unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    /// A line's `kind` and `data` read back; `None` for a kind or a shape this version does
    /// not know.
    pub fn parse(kind: &str, data: &Value) -> Option<EventData> {
        EventKind::parse(kind)?;
        let mut tagged = serde_json::Map::new();
        tagged.insert("kind".into(), Value::from(kind));
        tagged.insert("data".into(), data.clone());
        serde_json::from_value(Value::Object(tagged)).ok()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn data_keeps_the_shape_journals_have_always_held() {
        let data = EventData::StatusChanged { from: Status::AwaitingWebgptPr, to: Status::AwaitingWebgptFix };
        assert_eq!(data.kind(), EventKind::StatusChanged);
        assert_eq!(data.to_value(), json!({"from": "AWAITING_WEBGPT_PR", "to": "AWAITING_WEBGPT_FIX"}));
        let issued = EventData::HandoffIssued(Message { kind: Some(OutboxKind::Handoff), sha256: "ab".into() });
        assert_eq!(issued.to_value(), json!({"kind": "handoff", "sha256": "ab"}));
        assert_eq!(EventData::parse("handoff_issued", &issued.to_value()), Some(issued));
    }

    #[test]
    fn older_lines_read_with_defaults_and_unknown_ones_do_not() {
        // A run_finished from before `tests` and `executor` existed.
        let old = json!({"iteration": 1, "pr": "acme/widget#1", "head_sha": "a", "status": "TEST_PASSED", "log": "runs/1.log"});
        match EventData::parse("run_finished", &old) {
            Some(EventData::RunFinished { tests: None, protected, executor: None, .. }) => {
                assert!(protected.is_empty())
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(EventData::parse("from_the_future", &json!({})), None);
        assert_eq!(EventData::parse("status_changed", &json!({"from": "NOT_A_STATUS", "to": "ABORTED"})), None);
    }

    #[test]
    fn every_kind_has_its_variant() {
        let mut seen: Vec<EventKind> = Vec::new();
        let samples = [
            EventData::CommentFailed { error: "x".into() },
            EventData::Superseded { successor: "s".into() },
            EventData::CapExtended { from: 1, to: 2 },
        ];
        for sample in samples {
            let kind = sample.kind();
            assert_eq!(EventData::parse(kind.as_str(), &sample.to_value()).map(|d| d.kind()), Some(kind));
            seen.push(kind);
        }
        assert_eq!(seen.len(), 3);
    }
}
