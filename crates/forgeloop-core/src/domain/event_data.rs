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
    /// Prompt, follow-up, handoff or a person's message; absent in lines that never said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OutboxKind>,
    /// The sha256 of the text, matching the outbox's `sha256` (the text itself is in the state).
    #[serde(default)]
    pub sha256: String,
}

impl Message {
    /// The record of `outbox`'s message: its kind and hash, not its text.
    pub fn of(outbox: &Outbox) -> Message {
        Message { kind: Some(outbox.kind), sha256: outbox.sha256.clone() }
    }
}

/// One journal event's kind with its `data` (design §5.4), one variant per [`EventKind`].
/// PR fields are shorthands (`owner/repo#N`); `log` and `report` paths are relative to the
/// cycle's `NAME.d/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum EventData {
    /// The cycle was started (`forge --request`), with what it started from.
    Created {
        /// The implementation request as given.
        request: String,
        /// The browser conversation key, `webgpt-orchestrator:<stem>`.
        #[serde(default)]
        task_space: String,
        /// The iterations already used (non-zero when carried over by `--continue-from`).
        #[serde(default)]
        iteration: u32,
        /// The cap on completed runs.
        #[serde(default)]
        max_iterations: u32,
        /// The state file this cycle continues, when started with `--continue-from`.
        #[serde(default)]
        predecessor: Option<String>,
        /// The repository bound at the start (`owner/repo`), if any.
        #[serde(default)]
        repository: Option<String>,
        /// Who drives the cycle when it is not the coordinator (`connector:<client>`); absent
        /// for a coordinator's cycle, as in every journal written before it existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        driver: Option<String>,
    },
    /// The delegation brief was confirmed, by a person or at the start.
    BriefConfirmed {
        /// Where it was confirmed (`terminal`, `tui`, …).
        via: String,
        /// Whether the person changed the wording; absent when confirmed at the start.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edited: Option<bool>,
    },
    /// The first prompt went into the outbox.
    PromptIssued(Message),
    /// A follow-up asking for a usable PR (or a push) went into the outbox (rule 8).
    FollowupIssued(Message),
    /// A failed run's handoff went into the outbox.
    HandoffIssued(Message),
    /// The coordinator said it typed the outbox message into the chat (`sent`).
    MessageSent(Message),
    /// A reference-tool state's pending message was moved into the outbox (design §12.1).
    OutboxAdopted {
        /// The kind of message adopted.
        #[serde(default)]
        kind: Option<OutboxKind>,
        /// Where the message came from, in words.
        #[serde(default)]
        from: String,
    },
    /// WebGPT's reply was classified and recorded (`reply`).
    ReplyRecorded {
        /// What the reply was taken to say.
        class: ReplyClass,
        /// Why it was classified so, in words.
        #[serde(default)]
        reason: String,
        /// The PR the reply pointed at, when it had a usable one.
        #[serde(default)]
        pr: Option<String>,
        /// The sha256 of the whole reply text.
        #[serde(default)]
        sha256: String,
        /// The coordinator forced the class instead of leaving it to the classifier.
        #[serde(default)]
        overridden: bool,
        /// The reply's (redacted) text, cut at the journal's limit.
        #[serde(default)]
        text: String,
        /// `text` is shorter than the reply.
        #[serde(default)]
        truncated: bool,
    },
    /// The cycle's status moved (added by every write that moves it).
    StatusChanged {
        /// The status before the write.
        from: Status,
        /// The status after it.
        to: Status,
    },
    /// The cycle was blocked: by `block`, or by a rule (the cap, a closed PR, no usable PR, a
    /// denied connector). `BLOCKED_INFRA` shows as `run_failed` and `status_changed` instead.
    Blocked {
        /// The `BLOCKED_*` status set.
        status: Status,
        /// Why, in words, when one was given.
        #[serde(default)]
        reason: Option<String>,
    },
    /// A person unblocked the cycle (`unblock`).
    Unblocked {
        /// The blocked status the cycle left.
        from: Status,
    },
    /// A person raised the iteration cap (`extend`).
    CapExtended {
        /// The cap before.
        from: u32,
        /// The cap after.
        to: u32,
    },
    /// A person approved a pass that changed protected paths (`NEEDS_REVIEW` → `READY_TO_MERGE`).
    Approved {
        /// Where they approved (`terminal`, `tui`, …).
        #[serde(default)]
        via: String,
        /// The head commit they approved.
        #[serde(default)]
        head_sha: Option<String>,
        /// The protected paths that head changed.
        #[serde(default)]
        protected: Vec<String>,
    },
    /// The cycle was stopped for good (`abort`, or a stop request during a run).
    Aborted {
        /// Why, in words.
        reason: String,
        /// The id of the stop request that asked for it, when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
    },
    /// A successor took the cycle over (`--continue-from`).
    Superseded {
        /// The successor's state file.
        successor: String,
    },
    /// A test run of a PR head began.
    RunStarted {
        /// The PR under test.
        pr: String,
        /// The commit under test.
        head_sha: String,
        /// The iteration the run will count as.
        iteration: u32,
        /// Its log.
        #[serde(default)]
        log: String,
    },
    /// A test run completed (pass or fail) and counted one iteration.
    RunFinished {
        /// The iteration it counted as.
        iteration: u32,
        /// The PR tested.
        pr: String,
        /// The commit tested.
        head_sha: String,
        /// Its verdict.
        status: TestStatus,
        /// Its log.
        #[serde(default)]
        log: String,
        /// Its report.
        #[serde(default)]
        report: String,
        /// The log hit its size cap and was cut.
        #[serde(default)]
        log_truncated: bool,
        /// What ran the commands (`local`, `github-checks`); absent in older lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        executor: Option<String>,
        /// What the fetch did (`mirror_created`, `received_bytes`, …); `null` for a CI run.
        #[serde(default)]
        fetch: Value,
        /// What the head did to the PR's own tests (design §5.2).
        #[serde(default)]
        tests: Option<Flag>,
        /// The protected paths the head changed (a pass then needs review).
        #[serde(default)]
        protected: Vec<String>,
        /// The base branch's tip the head was merged into (or judged against); absent in older
        /// lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_sha: Option<String>,
        /// `head` when the commands ran on the head alone rather than its merge (design
        /// §5.2.1: a person's widening); absent for the merge.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
        /// The paths held as the base tip has them (`[protect] mode = "hold"`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        held: Vec<String>,
    },
    /// A run could not complete (rule 3): nothing counted, `infra_failures` went up.
    RunFailed {
        /// The PR the run was for.
        pr: String,
        /// What went wrong (redacted).
        error: String,
        /// Infra failures in a row, this one included.
        #[serde(default)]
        infra_failures: u32,
    },
    /// A run was stopped before its verdict (the control room, `abort`, Ctrl-C).
    RunCancelled {
        /// The PR the run was for.
        pr: String,
        /// The iteration it would have counted as.
        iteration: u32,
        /// Why, in words.
        reason: String,
        /// Whether it counted as an iteration (a cancelled run does not).
        #[serde(default)]
        counted: bool,
        /// The id of the stop request that cancelled it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
        /// The process that asked to stop it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requested_by_pid: Option<u32>,
    },
    /// A run failed for want of network (design §5.6): not counted, nothing for WebGPT.
    RunNeedsNetwork {
        /// The PR the run was for.
        pr: String,
        /// The commit it ran.
        head_sha: String,
        /// `setup` or `test`: the phase whose command failed.
        #[serde(default)]
        phase: String,
        /// The `[network] allow` entries that would have let it through.
        #[serde(default)]
        allow: Vec<String>,
        /// Without network: the client message that showed it.
        #[serde(default)]
        sign: Option<String>,
        /// What the proxy refused by policy (not public): never proposed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        refused_by_policy: Vec<String>,
        /// Its log.
        #[serde(default)]
        log: String,
        /// Whether it counted as an iteration (it does not).
        #[serde(default)]
        counted: bool,
    },
    /// The run's result was posted on the PR.
    CommentPublished {
        /// The comment's web address.
        url: String,
        /// A new comment (`false`: the run's earlier comment was kept or edited).
        #[serde(default)]
        created: bool,
        /// The iteration the comment reports.
        #[serde(default)]
        iteration: Option<u32>,
    },
    /// Posting the run's result on the PR failed; `comment` retries it.
    CommentFailed {
        /// What GitHub or the network said (redacted).
        error: String,
    },
    /// A Project was attached to the cycle (`project attach`).
    Attached {
        /// The repository it binds (`owner/repo`).
        repository: String,
        /// The ChatGPT Project's address.
        #[serde(default)]
        project_url: Option<String>,
        /// The Project's name.
        #[serde(default)]
        project_name: Option<String>,
        /// The conversation recorded for it, if any.
        #[serde(default)]
        conversation_url: Option<String>,
    },
    /// A person allowed a `NEEDS_NETWORK` run's hosts in their config (design §5.6).
    NetworkAllowed {
        /// The repository whose runs may now reach them.
        repository: String,
        /// The entries allowed.
        allow: Vec<String>,
        /// Those of `allow` the config did not hold before.
        #[serde(default)]
        added: Vec<String>,
        /// The config file written.
        #[serde(default)]
        config: String,
        /// The TOML table the entries went into.
        #[serde(default)]
        table: String,
    },
    /// WebGPT pointed at the head whose run failed, unchanged (rule 8): nothing run.
    PrUnchanged {
        /// What noticed it: `reply` or `forge`.
        via: String,
        /// The PR.
        pr: String,
        /// Its head, the commit already tested.
        head_sha: String,
        /// The PR's branch, to name in the note asking for a push.
        #[serde(default)]
        branch: Option<String>,
        /// The iteration that tested this head (from `forge --pr`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tested_in: Option<u32>,
        /// That run's verdict (from `forge --pr`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tested: Option<TestStatus>,
    },
    /// A person's words were put in the outbox (`say`).
    MessageWritten {
        /// The words, trimmed.
        text: String,
        /// The pending message the words were put before, in words (`follow-up`).
        #[serde(default)]
        before: Option<String>,
    },
    /// The stored commands were replaced between runs (`forgeloop commands`).
    CommandsChanged {
        /// The hash of the commands before, if the cycle had any.
        #[serde(default)]
        before_sha256: Option<String>,
        /// The hash of the commands now.
        after_sha256: String,
        /// How the change widened the sandbox (empty: it did not).
        #[serde(default)]
        widened: Vec<String>,
    },
    /// A pending message was taken out of the outbox unsent.
    MessageWithdrawn {
        /// What it was (`handoff`, …).
        kind: super::state::OutboxKind,
        /// The sha256 of its text.
        sha256: String,
        /// Why it was moot.
        why: String,
    },
    /// A review cycle was started.
    ReviewStarted {
        /// The change, bound to its commits.
        target: super::review::Target,
        /// The person's question for the reviewer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question: Option<String>,
        /// The browser conversation key.
        #[serde(default)]
        task_space: String,
    },
    /// What the agent saw, and the challenge issued (its questions; never their answers).
    AttestationRecorded {
        /// What the agent saw in the browser.
        seen: super::review::Seen,
        /// The repository asked about.
        repository: String,
        /// The commit asked about.
        commit: String,
        /// The questions.
        #[serde(default)]
        questions: Vec<super::challenge::Question>,
        /// When it stops being valid.
        expires_at: String,
        /// The sha256 of the challenge message, when one was issued (no connector: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha256: Option<String>,
    },
    /// The challenge's answer was judged against the mirror.
    AttestationJudged {
        /// The verdict.
        verdict: super::review::Verdict,
        /// The conversation the answer was read in.
        from: String,
        /// Each answer's judgement (what was given; never what was expected).
        #[serde(default)]
        judged: Vec<super::challenge::Judged>,
        /// The sha256 of the answer file's text.
        answer_sha256: String,
    },
    /// A review packet was made.
    PacketPrepared {
        /// The packet file.
        path: String,
        /// Its sha256.
        sha256: String,
        /// Files in it.
        files: u32,
        /// Its bytes.
        bytes: u64,
        /// Risks found.
        risks: u32,
        /// Whether it waits for the person's yes.
        needs_approval: bool,
    },
    /// A person said yes to the packet.
    PacketApproved {
        /// The sha256 of the packet approved.
        sha256: String,
        /// Where (`terminal`, `tui`).
        via: String,
    },
    /// The review request (or the questions about findings) went into the outbox.
    ReviewRequested {
        /// The sha256 of the message's (redacted) text.
        #[serde(default)]
        sha256: String,
        /// The route: `CONNECTOR` or `LOCAL_BUNDLE`.
        route: super::review::Route,
    },
    /// The reviewer's reply was parsed.
    FindingsRecorded {
        /// The sha256 of the reply's text.
        reply_sha256: String,
        /// Findings it added.
        added: usize,
        /// Parts it held that are not findings.
        unparsed: usize,
        /// It said `NO FINDINGS`.
        #[serde(default)]
        no_findings: bool,
    },
    /// A finding was decided.
    FindingTriaged {
        /// The finding's number.
        finding: u32,
        /// The decision.
        decision: super::review::Decision,
        /// The note (a `QUESTION`'s question).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A `FIX` finding was fixed by a PR cycle's passing run.
    FindingFixed {
        /// The finding's number.
        finding: u32,
        /// The run that says so.
        fixed: super::review::Fixed,
    },
}

impl EventData {
    /// The kind this data is written under.
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
            EventData::MessageWithdrawn { .. } => EventKind::MessageWithdrawn,
            EventData::ReviewStarted { .. } => EventKind::ReviewStarted,
            EventData::AttestationRecorded { .. } => EventKind::AttestationRecorded,
            EventData::AttestationJudged { .. } => EventKind::AttestationJudged,
            EventData::PacketPrepared { .. } => EventKind::PacketPrepared,
            EventData::PacketApproved { .. } => EventKind::PacketApproved,
            EventData::ReviewRequested { .. } => EventKind::ReviewRequested,
            EventData::FindingsRecorded { .. } => EventKind::FindingsRecorded,
            EventData::FindingTriaged { .. } => EventKind::FindingTriaged,
            EventData::FindingFixed { .. } => EventKind::FindingFixed,
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
