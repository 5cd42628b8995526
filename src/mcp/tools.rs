//! The tools' inputs (their JSON schemas are generated from these types) and bodies.
//! Bodies return a JSON document or a [`Failure`]; the server redacts both before anything
//! leaves the process.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rmcp::schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::cycle::Ctx;
use crate::cycle::files;
use crate::cycle::files::task_index;
use crate::cycle::handoff::HandoffError;
use crate::cycle::list;
use crate::cycle::reply::HeadLookup;
use crate::cycle::start::StartRequest;
use crate::domain::state::CycleState;
use crate::domain::word::Word;
use crate::error::Error;

use super::policy::PolicyError;

// A doc comment on a tool's input type is read by schemars, and rmcp's removal of it reorders
// the schema's keys in `tools/list`: the input types without one are `pub(crate)` instead.

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct PrInput {
    /// The pull request: https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N
    pub(crate) pr: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct PrTestInput {
    /// The pull request: https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N
    pub(crate) pr: String,
    /// A test profile named in the forgeloop config under [mcp.profiles.NAME] (never caller-given commands)
    pub(crate) profile: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffInput {
    /// A test report as returned by webgpt_pr_test (or written by `forgeloop test --result`)
    pub(crate) report: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct CycleInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    #[serde(default)]
    pub(crate) state: Option<String>,
    /// The cycle's task space, e.g. webgpt-orchestrator:add-dark-mode (give this or state)
    #[serde(default)]
    pub(crate) task_space: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct StartInput {
    /// The new cycle's name: a bare name (letters, digits, dashes), created in the cycles directory
    pub(crate) state: String,
    /// Your own short statement of the task in the repository (which repository and branch, what to change): the working context the confirmed wording may leave out, nothing the user did not agree to
    pub(crate) request: String,
    /// The exact question for WebGPT, as agreed with the user (a person confirms it before it is sent)
    pub(crate) webgpt_question: String,
    /// The five-field brief (Goal, Success, Scope / non-goals, Constraints, Validation), as agreed with the user
    pub(crate) intent_brief: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct StateInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplyInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// WebGPT's whole finished reply, as copied from the chat
    pub(crate) text: String,
    /// Override the classification (with reason): PR_FOUND, PR_NOT_CREATED, CONNECTOR_DENIED, PR_WRONG_REPOSITORY, NO_PR_REFERENCE, TESTS_CONTRADICT
    #[serde(default, rename = "as")]
    pub(crate) as_class: Option<String>,
    /// Why the override is right (journaled); only with as
    #[serde(default)]
    pub(crate) reason: Option<String>,
    /// The PR, with as PR_FOUND: https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N
    #[serde(default)]
    pub(crate) pr: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct CycleTestInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// The cycle's pull request: https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N
    pub(crate) pr: String,
    /// A test profile named in the forgeloop config under [mcp.profiles.NAME] (never caller-given commands); leave it out after the first run to reuse the cycle's stored commands
    #[serde(default)]
    pub(crate) profile: Option<String>,
    /// Post the result as a comment on the PR, as the runbook's `forge --pr … --post-comment` does (default true)
    #[serde(default)]
    pub(crate) post_comment: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct RepositoryInput {
    /// GitHub repository OWNER/REPO (stored lowercase)
    pub(crate) repository: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct BindInput {
    /// GitHub repository OWNER/REPO (stored lowercase)
    pub(crate) repository: String,
    /// Project home URL as seen in the browser: https://chatgpt.com/g/g-p-ID/project
    pub(crate) project_url: String,
    /// Project name as shown in the browser
    pub(crate) project_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct AttachInput {
    /// GitHub repository OWNER/REPO (stored lowercase)
    pub(crate) repository: String,
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// The task's conversation: https://chatgpt.com/g/g-p-ID/c/ID (or /c/ID)
    #[serde(default)]
    pub(crate) conversation_url: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub(crate) struct BlockInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    pub(crate) state: String,
    /// The BLOCKED_* status the runbook names for why: BLOCKED_MODEL_UNAVAILABLE, BLOCKED_CONNECTOR_DENIED, BLOCKED_PROJECT_UNAVAILABLE, BLOCKED_PROJECT_SOURCES, BLOCKED_NO_PR (never BLOCKED_MAX_ITERATIONS: the cap is forgeloop's)
    pub(crate) status: String,
    /// Why, in a sentence the person reads (journaled)
    pub(crate) reason: String,
}

/// `forge_diff`'s input: a cycle, and whether to show the change since its previous run.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct DiffInput {
    /// The cycle's state: a bare name in the cycles directory or the path forge_cycles lists
    #[serde(default)]
    pub state: Option<String>,
    /// The cycle's task space, e.g. webgpt-orchestrator:add-dark-mode (give this or state)
    #[serde(default)]
    pub task_space: Option<String>,
    /// The change from the previous tested head to the last one, instead of the whole PR
    #[serde(default)]
    pub since_last: bool,
}

/// The state file of a known cycle (as `forge_cycle` resolves it).
pub fn known_cycle(ctx: &Ctx, state: Option<String>, task_space: Option<String>) -> Result<PathBuf, Failure> {
    resolve(ctx, &CycleInput { state, task_space })
}

/// A tool that could not do its job: the CLI's error document, `{"status", "error", ...}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The `status` word agents branch on.
    pub status: Word,
    /// The error message.
    pub message: String,
    /// Extra machine-readable fields (a pid, the causes, …).
    pub details: Map<String, Value>,
}

impl Failure {
    /// A failure with `status` and `message` and no details.
    pub fn new(status: Word, message: impl Into<String>) -> Failure {
        Failure { status, message: message.into(), details: Map::new() }
    }

    /// The error document `{"status", "error", ...details}`, not yet redacted.
    pub fn document(&self) -> Value {
        crate::error::document(self.status, &self.message, self.details.clone())
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure { status: err.status(), message: err.to_string(), details: err.details() }
    }
}

impl From<PolicyError> for Failure {
    fn from(err: PolicyError) -> Failure {
        Failure::new(Word::Refused, err.to_string())
    }
}

/// What a tool body returns: its JSON document, or why it failed.
pub type Outcome = Result<Value, Failure>;

pub(crate) fn to_value<T: serde::Serialize>(value: &T) -> Outcome {
    serde_json::to_value(value).map_err(|e| Failure::new(Word::Blocked, format!("cannot encode the result: {e}")))
}

/// `forge_cycles`: what `forgeloop list` prints, plus the control room's watched directories.
pub fn cycles(ctx: &Ctx) -> Outcome {
    Ok(json!({ "cycles": to_value(&list::list(ctx, &ctx.config.tui.watch))? }))
}

/// `forge_cycle`: the state document.
pub(crate) fn cycle(ctx: &Ctx, input: &CycleInput) -> Outcome {
    let (_, state) = load(ctx, input)?;
    to_value(&state)
}

/// `forge_next`: the single next action, as `forgeloop next` prints it (the same use case,
/// with the server's look at a PR's head).
pub(crate) fn next(ctx: &Ctx, input: &CycleInput, lookup: Option<HeadLookup<'_>>) -> Outcome {
    let paths = paths(resolve(ctx, input)?)?;
    to_value(&crate::cycle::next::next(ctx, &paths, lookup)?)
}

/// `forge_start`: `forge --request --await-confirmation`, always waiting for a person, with
/// the default cap, and only under a bare name (the MCP server creates no file elsewhere).
pub(crate) fn start(ctx: &Ctx, input: &StartInput) -> Outcome {
    let name = input.state.trim();
    if name.is_empty() || name.contains(['/', '\\']) || name.ends_with(".json") || name.starts_with('~') {
        return Err(Failure::new(
            Word::Refused,
            format!(
                "forge_start takes a bare cycle name, created in the cycles directory, not a path: {:?}",
                input.state
            ),
        ));
    }
    let request = StartRequest::awaiting_person(name, &input.request, &input.webgpt_question, &input.intent_brief);
    to_value(&crate::cycle::start::start(ctx, request)?.state)
}

/// `project_lookup`: the repository's Project, or what to do (`forgeloop project lookup`).
pub(crate) fn project_lookup(ctx: &Ctx, input: &RepositoryInput) -> Outcome {
    Ok(Value::Object(crate::cycle::projects::lookup(ctx, &input.repository)?))
}

/// `project_bind`: the Project the agent saw in the browser (`forgeloop project bind`); the
/// registry never overwrites another Project's binding, and nothing here unbinds.
pub(crate) fn project_bind(ctx: &Ctx, input: &BindInput) -> Outcome {
    let doc = crate::cycle::projects::bind(ctx, &input.repository, &input.project_url, &input.project_name)?;
    Ok(Value::Object(doc))
}

/// `project_attach`: the Project, and the conversation, into a cycle the server knows
/// (`forgeloop project attach`); never another task file.
pub(crate) fn project_attach(ctx: &Ctx, input: &AttachInput) -> Outcome {
    let path = known_cycle(ctx, Some(input.state.clone()), None)?;
    let state = path.display().to_string();
    let doc = crate::cycle::projects::attach(ctx, &input.repository, &state, input.conversation_url.as_deref())?;
    Ok(Value::Object(doc))
}

/// `forge_block`: the cycle stops for a reason the runbook names (`forgeloop block`), as the
/// agent; a person unblocks it. The cap is not a reason anyone may give (the domain refuses).
pub(crate) fn block(ctx: &Ctx, input: &BlockInput) -> Outcome {
    let paths = paths(known_cycle(ctx, Some(input.state.clone()), None)?)?;
    let status = input
        .status
        .trim()
        .parse::<crate::domain::status::Status>()
        .map_err(|e| Failure::from(Error::Invalid(e.to_string())))?;
    let reason = input.reason.trim();
    if reason.is_empty() {
        return Err(Failure::from(Error::Invalid("forge_block needs a reason the person can read".into())));
    }
    let by = crate::domain::state::Actor::Agent;
    to_value(&crate::cycle::actions::block(ctx, &paths, status, reason, by)?.state)
}

/// `forge_sent`: the outbox message was typed into the chat (`forgeloop sent`).
pub(crate) fn sent(ctx: &Ctx, input: &StateInput) -> Outcome {
    let paths = paths(known_cycle(ctx, Some(input.state.clone()), None)?)?;
    to_value(&crate::cycle::actions::sent(ctx, &paths)?.state)
}

/// `forge_reply`: WebGPT's reply classified and recorded (`forgeloop reply`).
pub(crate) fn reply(ctx: &Ctx, input: ReplyInput, lookup: Option<HeadLookup<'_>>) -> Outcome {
    use crate::cycle::reply::{MAX_REPLY_BYTES, Override};
    let paths = paths(known_cycle(ctx, Some(input.state.clone()), None)?)?;
    if input.text.len() as u64 > MAX_REPLY_BYTES {
        return Err(Failure::from(Error::Invalid(format!("the reply is larger than {MAX_REPLY_BYTES} bytes"))));
    }
    let correction = Override::from_parts(input.as_class.as_deref(), input.reason, input.pr)?;
    let (outcome, _) = crate::cycle::reply::reply(ctx, &paths, &input.text, correction, lookup)?;
    to_value(&outcome)
}

pub(crate) fn paths(path: PathBuf) -> Result<files::CyclePaths, Failure> {
    files::CyclePaths::new(path).map_err(|e| Failure::from(Error::from(e)))
}

fn load(ctx: &Ctx, input: &CycleInput) -> Result<(PathBuf, CycleState), Failure> {
    let path = resolve(ctx, input)?;
    let state = files::load_state(&path).map_err(Error::from)?;
    Ok((path, state))
}

/// Only cycles forgeloop knows (the cycles directory, the task-space index, config
/// `tui.watch`): these read-only tools are not a way to read arbitrary files.
fn resolve(ctx: &Ctx, input: &CycleInput) -> Result<PathBuf, Failure> {
    let nonempty = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    match (nonempty(&input.state), nonempty(&input.task_space)) {
        (Some(state), None) => {
            let path = ctx.home.resolve_state(&state).map_err(Error::from)?;
            let known: BTreeSet<PathBuf> =
                list::state_paths(ctx, &ctx.config.tui.watch).iter().map(|p| canonical(p)).collect();
            if known.contains(&canonical(&path)) {
                Ok(path)
            } else {
                Err(Failure::new(
                    Word::NoState,
                    format!(
                        "{state:?} is not a known cycle; these tools read only the cycles that forge_cycles lists (the cycles directory, the task-space index and config tui.watch)"
                    ),
                ))
            }
        }
        (None, Some(task_space)) => {
            let prefixed = format!("webgpt-orchestrator:{task_space}");
            task_index::entries(&ctx.home.task_spaces_dir())
                .into_iter()
                .find(|e| e.task_space == task_space || e.task_space == prefixed)
                .map(|e| e.state_path())
                .ok_or_else(|| {
                    Failure::new(
                        Word::NoState,
                        format!("no cycle owns the task space {task_space:?}; forge_cycles lists the known ones"),
                    )
                })
        }
        _ => Err(Failure::new(Word::Blocked, "give exactly one of state and task_space")),
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `webgpt_pr_handoff`: what `forgeloop iterate` prints for a failed report. A report without
/// `comment_markdown` (the reference tool's shape, or another client's) gets its comment built
/// from `status`, `repository`, `pull_request`, `head_sha`, `commands` and `failure_output`,
/// as the reference tool does; the server redacts the result like every other.
pub(crate) fn handoff(input: HandoffInput) -> Outcome {
    let handoff = crate::cycle::handoff::read(Value::Object(input.report)).map_err(refusal)?;
    let message = handoff.message().map_err(refusal)?;
    Ok(json!({
        "status": handoff.report.status,
        "repository": handoff.report.repository,
        "pull_request": handoff.report.pull_request,
        "head_sha": handoff.report.head_sha,
        "handoff": message,
    }))
}

fn refusal(err: HandoffError) -> Failure {
    let word = match err {
        HandoffError::Passed => Word::NothingToSend,
        HandoffError::NotAReport(_) => Word::Blocked,
    };
    Failure::new(word, err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(status: &str) -> Map<String, Value> {
        let value = json!({"status": status, "repository": "acme/widget", "pull_request": 7,
            "head_sha": "c".repeat(40), "commands": [{"argv": ["sh", "test.sh"], "exit_code": 1, "duration_seconds": 0.1}],
            "comment_markdown": "## Forge Loop PR test: TEST_FAILED\nboom"});
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_failed_report_becomes_the_handoff_text() {
        let doc = handoff(HandoffInput { report: report("TEST_FAILED") }).unwrap();
        let text = doc["handoff"].as_str().unwrap();
        assert!(text.starts_with("## Forge Loop PR test: TEST_FAILED\nboom"), "{text}");
        assert!(text.contains("PR_URL:"), "{text}");
        assert_eq!(doc["pull_request"], 7);
    }

    #[test]
    fn a_report_without_comment_markdown_gets_it_built_from_its_fields() {
        let mut bare = report("TEST_FAILED");
        bare.remove("comment_markdown");
        bare.insert("failure_output".into(), json!("AssertionError: expected 1 got 2"));
        let doc = handoff(HandoffInput { report: bare }).unwrap();
        let text = doc["handoff"].as_str().unwrap();
        assert!(text.contains("## Forge Loop PR test: TEST_FAILED"), "{text}");
        assert!(text.contains("| `sh` `test.sh` | 1 | 0.1s |"), "{text}");
        assert!(text.contains("AssertionError: expected 1 got 2"), "{text}");
        assert!(text.trim_end().ends_with("`PR_URL: <url>`."), "{text}");
    }

    #[test]
    fn partial_and_passing_reports_are_tool_errors() {
        let mut partial = report("TEST_FAILED");
        partial.remove("commands");
        let err = handoff(HandoffInput { report: partial }).unwrap_err();
        assert!(err.message.contains("commands"), "{}", err.message);
        let mut odd = report("TEST_FAILED");
        odd.insert("pull_request".into(), json!("seven"));
        assert_eq!(handoff(HandoffInput { report: odd }).unwrap_err().status, "BLOCKED");
        assert_eq!(handoff(HandoffInput { report: report("TEST_PASSED") }).unwrap_err().status, "NOTHING_TO_SEND");
        assert_eq!(handoff(HandoffInput { report: report("BLOCKED") }).unwrap_err().status, "BLOCKED");
    }

    #[test]
    fn cycles_are_resolved_only_among_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::for_home(dir.path().join("home"));
        let outside = dir.path().join("elsewhere.json");
        std::fs::write(&outside, r#"{"status":"AWAITING_WEBGPT_PR","request":"r"}"#).unwrap();
        let by_path = CycleInput { state: Some(outside.display().to_string()), task_space: None };
        assert_eq!(cycle(&ctx, &by_path).unwrap_err().status, "NO_STATE");
        let neither = CycleInput { state: None, task_space: None };
        assert!(cycle(&ctx, &neither).unwrap_err().message.contains("exactly one"));
        let unknown = CycleInput { state: None, task_space: Some("nope".into()) };
        assert_eq!(next(&ctx, &unknown, None).unwrap_err().status, "NO_STATE");

        std::fs::create_dir_all(ctx.home.cycles_dir()).unwrap();
        std::fs::copy(&outside, ctx.home.cycles_dir().join("known.json")).unwrap();
        let bare = CycleInput { state: Some("known".into()), task_space: None };
        assert_eq!(cycle(&ctx, &bare).unwrap()["status"], "AWAITING_WEBGPT_PR");
        assert_eq!(cycles(&ctx).unwrap()["cycles"].as_array().unwrap().len(), 1);
    }
}
