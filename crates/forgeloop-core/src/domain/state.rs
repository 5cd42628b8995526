//! The cycle state document (design §3). Field names of the reference tool are kept so its
//! files load; keys forgeloop does not know are carried through every rewrite in `extra`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::brief::Brief;
use super::commands::CommandsProfile;
use super::reply::ReplyClass;
use super::report::{Report, TestStatus};
use super::status::Status;

/// Written into every state forgeloop saves; reference-tool files have none (version 0).
pub const SCHEMA_VERSION: u32 = 1;
/// The iteration cap of a cycle started without `--max-iterations` (the reference tool's).
pub const DEFAULT_MAX_ITERATIONS: u32 = 5;
/// Consecutive runs that could not complete before the cycle is `BLOCKED_INFRA`.
pub const INFRA_FAILURE_LIMIT: u32 = 3;

fn default_max_iterations() -> u32 {
    DEFAULT_MAX_ITERATIONS
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

pub use super::actor::Actor;

/// Who confirmed the delegation brief, where and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BriefConfirmation {
    /// How it was confirmed: `cli` (the coordinator confirmed it in its own chat), `tui`,
    /// `terminal` (`forgeloop confirm`), `continued` (carried from a predecessor), `demo`.
    pub via: String,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Who confirmed it.
    pub by: Actor,
}

/// What the pending outbox message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutboxKind {
    /// The first prompt, asking WebGPT to open a PR.
    Prompt,
    /// A failed run's result, asking for a fix.
    Handoff,
    /// A request for a usable `PR_URL:` line, or for a push to an unchanged head (rule 8).
    Followup,
    /// A person's own words (`forgeloop say`, the control room's `m`): review feedback, a
    /// scope breach, a clarification. Not an iteration.
    Message,
    /// A review cycle's challenge: questions only a reader of the commit can answer.
    Challenge,
    /// A review cycle's request for findings (or questions about them).
    Review,
}

/// The message the coordinator must type into the chat next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outbox {
    /// What the message is.
    pub kind: OutboxKind,
    /// The exact text to type into the chat (redacted).
    pub text: String,
    /// The sha256 of `text`, so `sent` and the journal can name it without repeating it.
    pub sha256: String,
    /// When it was put in the outbox.
    pub created_at: String,
    /// When the coordinator said it was typed in (`sent`); `None` while it is still pending.
    #[serde(default)]
    pub sent_at: Option<String>,
}

impl Outbox {
    /// A pending message of `kind` holding `text`, hashed, created at `now`.
    pub fn new(kind: OutboxKind, text: String, now: &str) -> Self {
        let sha256 = sha256_hex(text.as_bytes());
        Outbox { kind, text, sha256, created_at: now.to_owned(), sent_at: None }
    }
}

/// A message taken out of the outbox before it was sent, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withdrawn {
    /// What it was.
    pub kind: OutboxKind,
    /// The sha256 of its text (the journal has the event).
    pub sha256: String,
    /// Why it was moot, or that a person dropped it.
    pub why: String,
    /// Who took it out.
    pub by: Actor,
    /// When.
    pub at: String,
}

pub use super::hash::sha256_hex;

/// One line of run history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The iteration the run counted as.
    pub iteration: u32,
    /// The PR tested (`owner/repo#N`).
    pub pr: String,
    /// The commit tested (40 hex digits).
    pub head_sha: String,
    /// The run's verdict.
    pub status: TestStatus,
    /// When it began (RFC 3339, UTC).
    pub started_at: String,
    /// When it ended (RFC 3339, UTC).
    pub finished_at: String,
    /// How long it took, in seconds.
    pub duration_seconds: f64,
    /// Who asked for the run.
    pub actor: Actor,
    /// Its redacted output, relative to the cycle's `NAME.d/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_path: Option<String>,
    /// Its report, relative to the cycle's `NAME.d/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_path: Option<String>,
    /// The PR comment that published its result, once posted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_url: Option<String>,
    /// What the commands ran in: "isolated, no network", "unsandboxed", … (design §5.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The hash of the commands that ran ([`CommandsProfile::sha256`]): the same head with
    /// corrected commands is a new test, not an already-tested one. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands_sha256: Option<String>,
    /// The base branch's tip the head was tested against (design §5.2.1); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    /// The merge commit forgeloop tested, whose change against `base_sha` is the PR's change
    /// as merging would make it; absent for the head alone and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_sha: Option<String>,
}

/// A test run in progress (written when it starts, removed when it ends), so the control
/// room can show it live; a leftover entry names a process that was killed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningInfo {
    /// The process running it: dead means the entry is a leftover.
    pub pid: u32,
    /// When it began (RFC 3339, UTC).
    pub started_at: String,
    /// The PR under test (`owner/repo#N`).
    pub pr: String,
    /// The commit under test.
    pub head_sha: String,
    /// The iteration it will count as.
    pub iteration: u32,
    /// Its live log, relative to the cycle's `NAME.d/`.
    pub log_path: String,
    /// Who asked for the run.
    pub actor: Actor,
    /// `github-checks` when the run waits for the repository's CI (design §5.7); absent for
    /// a local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
}

/// The last classified WebGPT reply (`forgeloop reply`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastReply {
    /// What the reply was taken to say.
    pub class: ReplyClass,
    /// The PR it pointed at (`owner/repo#N`), when it had a usable one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// Why it was classified so, in words.
    pub reason: String,
    /// The sha256 of the reply's text.
    pub sha256: String,
    /// When it was recorded (RFC 3339, UTC).
    pub at: String,
    /// The coordinator overrode the classifier (`reply --as`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overridden: bool,
    /// What the reply's `TESTS_CONTRADICT:` line said, redacted (issue 57).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contradiction: Option<String>,
}

/// Why, when and by whom a cycle was aborted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortInfo {
    /// Why, in the aborter's words.
    pub reason: String,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Who aborted it.
    pub by: Actor,
}

/// A repository forgeloop provisioned for the cycle (`--new-repo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRepository {
    /// Its name, `owner/repo`.
    pub repository: String,
    /// Its page on GitHub.
    pub html_url: String,
    /// Whether it was created private (`--public` not given).
    pub private: bool,
}

/// One cycle's state document, `NAME.json` (design §3): the reference tool's fields, then forgeloop's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleState {
    /// Where the cycle stands (design §3).
    pub status: Status,
    /// The implementation request the cycle was started with.
    pub request: String,
    /// The delegation brief as given (`--intent-brief`), or as a person edited it on confirming.
    #[serde(default)]
    pub intent_brief: String,
    /// The question WebGPT is asked (`--webgpt-question`).
    #[serde(default)]
    pub webgpt_question: String,
    /// forgeloop proposed the question from the brief (none was given; a person confirms it
    /// in the control room, where it says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub webgpt_question_proposed: bool,
    /// The PR the cycle works on: the raw `--pr` text in a reference state, `owner/repo#N` once forgeloop set it.
    #[serde(default)]
    pub pr_ref: Option<String>,
    /// Completed runs so far (each counts one, pass or fail).
    #[serde(default)]
    pub iteration: u32,
    /// The cap on `iteration`; only `extend` raises it.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: u32,
    /// The browser conversation key, `webgpt-orchestrator:<state file stem>` (rule 7).
    #[serde(default)]
    pub task_space: String,
    /// What `forgeloop next` says for the state as written, rewritten on every write (for the
    /// reference tool's readers; forgeloop itself recomputes it).
    #[serde(default)]
    pub next_action: String,
    /// The prompt issued to WebGPT (a reference state's pending prompt lives only here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webgpt_prompt: Option<String>,
    /// The last completed run's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// The last failed run's handoff text; empty after a pass (a reference state's pending handoff lives only here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webgpt_handoff: Option<String>,
    /// The repository the cycle is bound to (`owner/repo`, lowercase): PRs of any other are refused (rule 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Who drives the cycle when it is not the coordinator agent: `connector:<client name>` for a
    /// cycle a remote client started through `forgeloop serve` (design §8.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The ChatGPT Project the repository's conversations live in (from the registry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_url: Option<String>,
    /// That Project's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_name: Option<String>,
    /// The ChatGPT conversation the cycle uses, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_url: Option<String>,
    /// The state format's version; 0 for a reference-tool file, [`SCHEMA_VERSION`] once forgeloop wrote it.
    #[serde(default)]
    pub schema_version: u32,
    /// When forgeloop created the cycle (RFC 3339, UTC); absent in a reference state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When the state was last written (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// The brief's five fields, parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief: Option<Brief>,
    /// Who confirmed the brief; `None` while it awaits confirmation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief_confirmation: Option<BriefConfirmation>,
    /// The commit the last completed run tested (40 hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// The commands every run executes, with their sandbox settings (what a rerun repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<CommandsProfile>,
    /// The person's protected paths when the cycle started (`[protect]`): the prompt names
    /// them; each run checks the ones in force then (design §5.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<String>,
    /// One summary per completed run, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<RunSummary>,
    /// The message the coordinator must type into the chat next, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbox: Option<Outbox>,
    /// The last pending message taken out of the outbox unsent, while nothing replaced it:
    /// `next` waits for the person instead of guessing what to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Withdrawn>,
    /// The run in progress, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<RunningInfo>,
    /// WebGPT's last classified reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reply: Option<LastReply>,
    /// Follow-ups issued since the last usable answer; at 1, the next unusable reply (or unchanged
    /// head) blocks (rule 8).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub followups: u32,
    /// Runs in a row that could not complete; the third blocks with `BLOCKED_INFRA` (rule 3).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub infra_failures: u32,
    /// What last went wrong or blocked the cycle, in words; cleared by a completed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The last run needed network the person has not allowed (design §5.6); cleared by the
    /// next completed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_network: Option<super::needs_network::NeedsNetwork>,
    /// The status the cycle was in before a block: where `unblock` returns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_from: Option<Status>,
    /// Why and when the cycle was aborted, once it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<AbortInfo>,
    /// The repository created for the cycle by `--new-repo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_repository: Option<NewRepository>,
    /// The state this one continues (absolute path), and the one that continued it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predecessor: Option<String>,
    /// The state that continued this one (`--continue-from`), once one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// A review cycle's own record (`forgeloop review start`); `None` for a PR cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<super::review::Review>,
    /// What the person is asked to decide while `TESTS_DISPUTED` (issue 57).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispute: Option<super::dispute::Dispute>,
    /// Versions of held paths the person accepted from the PR (`approve` on a dispute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_tests: Vec<super::dispute::AcceptedTest>,
    /// Keys forgeloop does not know, kept in order on every rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why a state file could not be read as a cycle state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The file is empty or only whitespace.
    #[error("the state file is empty")]
    Empty,
    /// The file's bytes are not UTF-8.
    #[error("the state file is not valid UTF-8")]
    NotUtf8,
    /// The text is not JSON (serde's message).
    #[error("the state file is not valid JSON: {0}")]
    Json(String),
    /// The JSON is not an object (what it is instead).
    #[error("the state file must hold a JSON object, found {0}")]
    NotAnObject(&'static str),
    /// An object, but a field is missing or of the wrong type (serde's message).
    #[error("the state file is not a forgeloop cycle state: {0}")]
    Invalid(String),
    /// A newer forgeloop wrote it: its `schema_version` is above [`SCHEMA_VERSION`].
    #[error("the state file was written by a newer forgeloop (schema_version {0}); upgrade forgeloop")]
    Newer(u32),
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl CycleState {
    /// Parses a state file's bytes; every failure is a typed error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<CycleState, StateError> {
        let text = std::str::from_utf8(bytes).map_err(|_| StateError::NotUtf8)?;
        if text.trim().is_empty() {
            return Err(StateError::Empty);
        }
        let value: Value = serde_json::from_str(text).map_err(|e| StateError::Json(e.to_string()))?;
        CycleState::from_value(value)
    }

    /// Reads an already-parsed JSON value as a state; refuses a non-object or a newer schema.
    pub fn from_value(value: Value) -> Result<CycleState, StateError> {
        if !value.is_object() {
            return Err(StateError::NotAnObject(kind_of(&value)));
        }
        let state: CycleState = serde_json::from_value(value).map_err(|e| StateError::Invalid(e.to_string()))?;
        if state.schema_version > SCHEMA_VERSION {
            return Err(StateError::Newer(state.schema_version));
        }
        Ok(state)
    }

    /// Pretty JSON with a trailing newline, as the reference tool writes it.
    pub fn to_json(&self) -> String {
        let mut state = self.clone();
        state.schema_version = SCHEMA_VERSION;
        let mut text = serde_json::to_string_pretty(&state).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Every allowed iteration is used: the next test run records `BLOCKED_MAX_ITERATIONS`.
    pub fn cap_reached(&self) -> bool {
        self.iteration >= self.max_iterations
    }

    /// The repository the cycle works on: its binding, else the repository of its last report
    /// or of its PR reference (a reference-tool state has no binding until `project attach`).
    pub fn effective_repository(&self) -> Option<String> {
        let nonempty = |s: &String| !s.trim().is_empty();
        self.repository
            .clone()
            .filter(nonempty)
            .or_else(|| self.report.as_ref().map(|r| r.repository.clone()).filter(nonempty))
            .or_else(|| {
                let pr = super::pr_ref::parse_pr_ref(self.pr_ref.as_deref()?, &super::pr_ref::WebHosts::default());
                pr.ok().map(|pr| pr.repo.full_name())
            })
    }

    /// The head SHA the last run tested (a reference-tool state has it only in its report).
    pub fn tested_head_sha(&self) -> Option<&str> {
        self.head_sha.as_deref().or_else(|| self.report.as_ref().map(|r| r.head_sha.as_str()).filter(|s| !s.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_state_loads_and_unknown_keys_survive() {
        let text = r#"{"status":"AWAITING_WEBGPT_PR","request":"Fix widget","intent_brief":"b","webgpt_question":"q",
            "pr_ref":null,"iteration":0,"max_iterations":5,"task_space":"webgpt-orchestrator:x","next_action":"n",
            "webgpt_prompt":"p","custom":{"keep":true},"zzz":[1,2]}"#;
        let state = CycleState::from_bytes(text.as_bytes()).unwrap();
        assert_eq!(state.schema_version, 0);
        assert_eq!(state.status, Status::AwaitingWebgptPr);
        let back: Value = serde_json::from_str(&state.to_json()).unwrap();
        assert_eq!(back["custom"]["keep"], true);
        assert_eq!(back["zzz"], serde_json::json!([1, 2]));
        assert_eq!(back["schema_version"], SCHEMA_VERSION);
        assert_eq!(back["pr_ref"], Value::Null);
    }

    /// Found by the state_load fuzz target: a number beyond u64 in an unknown key is an f64;
    /// without serde_json's `float_roundtrip` its shortest form re-parsed to a neighbouring
    /// f64, so every rewrite drifted.
    #[test]
    fn an_unknown_key_holding_a_huge_number_rewrites_stably() {
        let big = format!("{}1", "2".repeat(93));
        let text = format!(r#"{{"status":"AWAITING_WEBGPT_FIX","request":"r","unknown_key":{{"kept":[{big},2]}}}}"#);
        let json = CycleState::from_bytes(text.as_bytes()).unwrap().to_json();
        let again = CycleState::from_bytes(json.as_bytes()).unwrap().to_json();
        assert_eq!(again, json);
        for value in [0.1, 1e300, 2.2250738585072014e-308, 123456789.12345679] {
            let text = format!(r#"{{"status":"AWAITING_WEBGPT_FIX","request":"r","f":{value:e}}}"#);
            let back: Value =
                serde_json::from_str(&CycleState::from_bytes(text.as_bytes()).unwrap().to_json()).unwrap();
            assert_eq!(back["f"].as_f64(), Some(value));
        }
    }

    #[test]
    fn minimal_reference_state_gets_defaults() {
        let state = CycleState::from_bytes(br#"{"status":"AWAITING_WEBGPT_FIX","request":"r"}"#).unwrap();
        assert_eq!(state.iteration, 0);
        assert_eq!(state.max_iterations, DEFAULT_MAX_ITERATIONS);
    }

    #[test]
    fn malformed_states_are_typed_errors() {
        type Case<'a> = (&'a [u8], fn(&StateError) -> bool);
        let cases: &[Case] = &[
            (b"", |e| matches!(e, StateError::Empty)),
            (b"  \n", |e| matches!(e, StateError::Empty)),
            (b"\xff\xfe{}", |e| matches!(e, StateError::NotUtf8)),
            (b"{\"status\":", |e| matches!(e, StateError::Json(_))),
            (b"[1,2]", |e| matches!(e, StateError::NotAnObject("an array"))),
            (b"null", |e| matches!(e, StateError::NotAnObject("null"))),
            (br#"{"status":"AWAITING_WEBGPT_PR","request":"r","iteration":null}"#, |e| {
                matches!(e, StateError::Invalid(_))
            }),
            (br#"{"status":"AWAITING_WEBGPT_PR","request":"r","iteration":-1}"#, |e| {
                matches!(e, StateError::Invalid(_))
            }),
            (br#"{"status":"AWAITING_WEBGPT_PR","request":"r","iteration":"2"}"#, |e| {
                matches!(e, StateError::Invalid(_))
            }),
            (br#"{"status":"AWAITING_WEBGPT_PR"}"#, |e| matches!(e, StateError::Invalid(_))),
            (br#"{"status":"NOPE","request":"r"}"#, |e| matches!(e, StateError::Invalid(_))),
            (br#"{"status":"AWAITING_WEBGPT_PR","request":"r","repository":4}"#, |e| {
                matches!(e, StateError::Invalid(_))
            }),
            (br#"{"status":"AWAITING_WEBGPT_PR","request":"r","schema_version":99}"#, |e| {
                matches!(e, StateError::Newer(99))
            }),
        ];
        for (bytes, expected) in cases {
            let err = CycleState::from_bytes(bytes).unwrap_err();
            assert!(expected(&err), "{:?} gave {err:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn outbox_hash_is_the_text_sha256() {
        let outbox = Outbox::new(OutboxKind::Prompt, "abc".into(), "t");
        assert_eq!(outbox.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
