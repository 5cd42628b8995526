//! The cycle state machine (design §3) as pure functions: each takes the current document and
//! the time as text and either changes the document or refuses with a reason. The use-case
//! layer does the locking, the I/O and the journal.

use serde_json::Map;

use super::brief::{Brief, BriefError};
use super::commands::CommandsProfile;
use super::dispute::{AcceptedTest, Dispute, DisputeSource};
use super::pr_ref::{PrRef, RepoName};
use super::reply::ReplyClass;
use super::report::{Report, TestStatus};
use super::state::{
    AbortInfo, Actor, BriefConfirmation, CycleState, INFRA_FAILURE_LIMIT, LastReply, NewRepository, Outbox, OutboxKind,
    RunSummary, SCHEMA_VERSION, Withdrawn,
};
use super::status::Status;
use super::text::{self, PromptInput};

/// Why a new cycle was refused; nothing is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// `--request` is blank.
    #[error("the request must not be empty")]
    EmptyRequest,
    /// The brief is blank or lacks a field (`BLOCKED_DELEGATION_UNCONFIRMED`).
    #[error("{0}")]
    Brief(#[from] BriefError),
    #[error(
        "the confirmed WebGPT question is empty; pass --webgpt-question with the exact question confirmed with the user"
    )]
    /// The WebGPT question is blank (`BLOCKED_DELEGATION_UNCONFIRMED`).
    EmptyQuestion,
    /// `--max-iterations` is 0.
    #[error("max_iterations must be at least 1")]
    MaxIterations,
}

impl StartError {
    /// An empty or incomplete brief or question means delegation was not confirmed.
    pub fn is_unconfirmed_delegation(&self) -> bool {
        matches!(self, StartError::Brief(_) | StartError::EmptyQuestion)
    }
}

/// What a predecessor passes on to its successor (`--continue-from`).
#[derive(Debug, Clone, PartialEq)]
pub struct Carry {
    /// The predecessor's state file (absolute path).
    pub predecessor: String,
    /// The iterations it used: the successor does not start from 0 (rule 1).
    pub iteration: u32,
    /// Its cap, kept.
    pub max_iterations: u32,
    /// Its repository binding.
    pub repository: Option<String>,
    /// Its ChatGPT Project.
    pub project_url: Option<String>,
    /// That Project's name.
    pub project_name: Option<String>,
    /// The predecessor's confirmed question and brief, used when none are given.
    pub webgpt_question: String,
    /// The predecessor's brief, as confirmed or given.
    pub intent_brief: String,
    /// Whether the predecessor's brief was confirmed: unchanged wording then skips confirmation.
    pub confirmed: bool,
    /// The predecessor's commands (and so their grants: paths, network, memory), reused.
    pub commands: Option<CommandsProfile>,
    /// The predecessor's PR: the successor's prompt says to continue on it.
    pub pr_ref: Option<String>,
}

impl Carry {
    /// What `state`, stored at `path`, passes on.
    pub fn from_state(state: &CycleState, path: String) -> Carry {
        Carry {
            predecessor: path,
            iteration: state.iteration,
            max_iterations: state.max_iterations,
            repository: state.repository.clone(),
            project_url: state.project_url.clone(),
            project_name: state.project_name.clone(),
            webgpt_question: state.webgpt_question.clone(),
            intent_brief: state.intent_brief.clone(),
            confirmed: state.brief_confirmation.is_some(),
            commands: state.commands.clone(),
            pr_ref: state.pr_ref.clone(),
        }
    }
}

/// What `forge --request` asks for, before validation.
pub struct NewCycle<'a> {
    /// The implementation request.
    pub request: &'a str,
    /// The confirmed question (`--webgpt-question`); a successor may take its predecessor's.
    pub webgpt_question: Option<&'a str>,
    /// The brief (`--intent-brief`); a successor may take its predecessor's.
    pub intent_brief: Option<&'a str>,
    /// The cap (`--max-iterations`); a successor keeps its predecessor's.
    pub max_iterations: u32,
    /// The browser conversation key.
    pub task_space: String,
    /// Wait for a person to confirm the brief before issuing the prompt (`--await-confirmation`).
    pub await_confirmation: bool,
    /// The repository created for the cycle (`--new-repo`), which binds it.
    pub new_repository: Option<NewRepository>,
    /// What a predecessor passes on (`--continue-from`).
    pub carry: Option<Carry>,
    /// The person's protected paths (`[protect]`), named in the prompt.
    pub protected_paths: Vec<String>,
}

/// Creates a cycle. Validation order follows the reference tool: request, brief, question,
/// cap; then the brief's five fields.
pub fn start(input: NewCycle<'_>, now: &str) -> Result<CycleState, StartError> {
    let request = input.request.trim();
    if request.is_empty() {
        return Err(StartError::EmptyRequest);
    }
    let carry = input.carry.as_ref();
    let brief_text = input.intent_brief.map(str::trim).or(carry.map(|c| c.intent_brief.trim())).unwrap_or("");
    if brief_text.is_empty() {
        return Err(StartError::Brief(BriefError::Empty));
    }
    let question = input.webgpt_question.map(str::trim).or(carry.map(|c| c.webgpt_question.trim())).unwrap_or("");
    // No question, and a person confirms in the control room: forgeloop proposes one from the
    // brief, shown (and editable) with it there. Otherwise the question is the agent's to bring.
    if question.is_empty() && !input.await_confirmation {
        return Err(StartError::EmptyQuestion);
    }
    let max_iterations = carry.map_or(input.max_iterations, |c| c.max_iterations);
    if max_iterations < 1 {
        return Err(StartError::MaxIterations);
    }
    let brief = Brief::parse(brief_text)?;
    let proposed = question.is_empty().then(|| brief.proposed_question());
    let question = proposed.as_deref().unwrap_or(question);
    // A carried brief that was confirmed stays confirmed; new wording needs the usual route.
    let carried_confirmation =
        carry.filter(|c| c.confirmed && input.intent_brief.is_none() && input.webgpt_question.is_none()).is_some();

    let mut state = CycleState {
        schema_version: SCHEMA_VERSION,
        status: Status::AwaitingBriefConfirmation,
        request: request.to_owned(),
        intent_brief: brief_text.to_owned(),
        webgpt_question: question.to_owned(),
        webgpt_question_proposed: proposed.is_some(),
        pr_ref: carry.and_then(|c| c.pr_ref.clone()),
        iteration: carry.map_or(0, |c| c.iteration),
        max_iterations,
        task_space: input.task_space,
        next_action: String::new(),
        webgpt_prompt: None,
        report: None,
        webgpt_handoff: None,
        repository: input
            .new_repository
            .as_ref()
            .map(|r| r.repository.to_ascii_lowercase())
            .or(carry.and_then(|c| c.repository.clone())),
        driver: None,
        project_url: carry.and_then(|c| c.project_url.clone()),
        project_name: carry.and_then(|c| c.project_name.clone()),
        conversation_url: None,
        created_at: Some(now.to_owned()),
        updated_at: Some(now.to_owned()),
        brief: Some(brief),
        brief_confirmation: None,
        head_sha: None,
        commands: carry.and_then(|c| c.commands.clone()),
        protected_paths: input.protected_paths,
        history: Vec::new(),
        outbox: None,
        withdrawn: None,
        running: None,
        last_reply: None,
        followups: 0,
        infra_failures: 0,
        last_error: None,
        needs_network: None,
        blocked_from: None,
        abort: None,
        new_repository: input.new_repository,
        predecessor: carry.map(|c| c.predecessor.clone()),
        successor: None,
        review: None,
        dispute: None,
        accepted_tests: Vec::new(),
        extra: Map::new(),
    };
    if carried_confirmation {
        issue_prompt(&mut state, "continued", Actor::Agent, now);
    } else if !input.await_confirmation {
        issue_prompt(&mut state, "cli", Actor::Agent, now);
    }
    Ok(state)
}

/// Records the confirmation and produces the first prompt.
fn issue_prompt(state: &mut CycleState, via: &str, by: Actor, now: &str) {
    let new_repository = state.new_repository.as_ref().map(|r| (r.repository.as_str(), r.html_url.as_str()));
    let prompt = text::prompt(&PromptInput {
        question: &state.webgpt_question,
        intent_brief: &state.intent_brief,
        request: &state.request,
        new_repository,
        continue_pr: state.predecessor.as_ref().and(state.pr_ref.as_deref()),
        protected_paths: &state.protected_paths,
    });
    state.brief_confirmation = Some(BriefConfirmation { via: via.to_owned(), at: now.to_owned(), by });
    put_outbox(state, Outbox::new(OutboxKind::Prompt, prompt.clone(), now));
    state.webgpt_prompt = Some(prompt);
    state.status = Status::AwaitingWebgptPr;
}

/// A transition refused in the cycle's status; the state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{action} is not possible while the cycle is {status}: {hint}")]
pub struct Refusal {
    /// The status that refused it.
    pub status: Status,
    /// What was refused, in words (`testing a PR`).
    pub action: &'static str,
    /// What to do instead.
    pub hint: String,
}

fn refuse(state: &CycleState, action: &'static str, hint: impl Into<String>) -> Refusal {
    Refusal { status: state.status, action, hint: hint.into() }
}

/// Only a brief awaiting confirmation can be confirmed (every front end asks this first).
pub fn can_confirm(state: &CycleState) -> Result<(), Refusal> {
    if state.status != Status::AwaitingBriefConfirmation {
        return Err(refuse(state, "confirming the brief", "only a brief awaiting confirmation can be confirmed"));
    }
    Ok(())
}

/// What a person's rerun will be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rerun {
    /// The last run failed: an ordinary next iteration.
    AfterFailure,
    /// The last run passed: re-testing overrides `READY_TO_MERGE`.
    OverridePass,
}

/// Whether the status lets a person rerun the tests (the control room's footer shows the key
/// only then); [`can_rerun`] adds what the run itself needs.
pub fn rerun_allowed(state: &CycleState) -> Result<Rerun, Refusal> {
    match state.status {
        Status::AwaitingWebgptFix => Ok(Rerun::AfterFailure),
        Status::ReadyToMerge | Status::NeedsReview => Ok(Rerun::OverridePass),
        other => Err(refuse(
            state,
            "rerunning the tests",
            format!(
                "rerun is allowed on AWAITING_WEBGPT_FIX and, as an override, READY_TO_MERGE and NEEDS_REVIEW; this cycle is {other}"
            ),
        )),
    }
}

/// A person's rerun: the status allows it, and there is a PR and stored commands to run.
/// The cap is not checked here: a rerun at the cap records `BLOCKED_MAX_ITERATIONS` (see
/// [`gate_test`]), which the person is told before confirming.
pub fn can_rerun(state: &CycleState) -> Result<Rerun, Refusal> {
    let rerun = rerun_allowed(state)?;
    if state.pr_ref.is_none() {
        return Err(refuse(state, "rerunning the tests", "this cycle has no PR to rerun"));
    }
    if state.commands.is_none() {
        return Err(refuse(
            state,
            "rerunning the tests",
            "this cycle has no stored commands; run `forgeloop forge --pr … --commands-json F` once first",
        ));
    }
    Ok(rerun)
}

/// Confirms a brief awaiting confirmation, optionally with edited wording.
pub fn confirm_brief(
    state: &mut CycleState,
    edited: Option<(String, String)>,
    via: &str,
    by: Actor,
    now: &str,
) -> Result<(), ConfirmError> {
    can_confirm(state)?;
    if let Some((question, brief_text)) = edited {
        let question = question.trim();
        if question.is_empty() {
            return Err(ConfirmError::Start(StartError::EmptyQuestion));
        }
        let brief = Brief::parse(&brief_text).map_err(StartError::from)?;
        // The person's words now, whatever forgeloop proposed.
        state.webgpt_question_proposed &= state.webgpt_question == question;
        state.webgpt_question = question.to_owned();
        state.intent_brief = brief_text.trim().to_owned();
        state.brief = Some(brief);
    }
    issue_prompt(state, via, by, now);
    touch(state, now);
    Ok(())
}

/// Why confirming a brief was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfirmError {
    /// The cycle is not awaiting confirmation.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The edited wording is not a usable brief or question.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// What happens when a test run is requested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestGate {
    /// Fetch and run the tests.
    Proceed,
    /// The cap is reached: record `BLOCKED_MAX_ITERATIONS`, touch nothing remote.
    CapReached,
}

/// Checks a test run against status, binding and cap, in that order, before any network
/// call. `human_override` is the control room's rerun, which may re-test a passed PR.
pub fn gate_test(state: &CycleState, pr: &PrRef, human_override: bool) -> Result<TestGate, Refusal> {
    let action = "testing a PR";
    if state.review.is_some() {
        return Err(refuse(
            state,
            action,
            "this is a review cycle: it tests nothing; `forgeloop forge --request-from-review` starts a PR cycle for its FIX findings",
        ));
    }
    match state.status {
        Status::AwaitingWebgptPr | Status::AwaitingWebgptFix => {}
        Status::ReadyToMerge | Status::NeedsReview if human_override => {}
        Status::ReadyToMerge => {
            return Err(refuse(
                state,
                action,
                "the last run passed; review and merge the PR yourself, or rerun from `forgeloop tui` to re-test it",
            ));
        }
        Status::NeedsReview => {
            return Err(refuse(
                state,
                action,
                "the last run passed but changed protected paths; stop and tell the person, who approves it (`forgeloop approve`) or answers WebGPT (`forgeloop say`)",
            ));
        }
        Status::AwaitingBriefConfirmation => {
            return Err(refuse(
                state,
                action,
                "the brief must be confirmed first (forgeloop tui, or forgeloop confirm on a terminal)",
            ));
        }
        Status::BlockedMaxIterations => {
            return Err(refuse(
                state,
                action,
                "the iteration cap is reached; stop and report, a person may raise it with `forgeloop extend`",
            ));
        }
        Status::Aborted | Status::Superseded => {
            return Err(refuse(state, action, "the cycle is finished; start a new one with forge --request"));
        }
        _ => {
            return Err(refuse(
                state,
                action,
                "the cycle is blocked; stop and report, a person may lift it with `forgeloop unblock`",
            ));
        }
    }
    check_binding(state, &pr.repo)?;
    if state.cap_reached() {
        return Ok(TestGate::CapReached);
    }
    Ok(TestGate::Proceed)
}

/// design §3 rule 4: once bound, a cycle only ever touches its own repository.
fn check_binding(state: &CycleState, repo: &RepoName) -> Result<(), Refusal> {
    match &state.repository {
        Some(bound) if !bound.eq_ignore_ascii_case(&repo.full_name()) => Err(refuse(
            state,
            "using a PR of another repository",
            format!(
                "this cycle is bound to {bound:?} and {} is not it; the pull request repository does not match the task's project binding",
                repo.full_name()
            ),
        )),
        _ => Ok(()),
    }
}

/// Records `BLOCKED_MAX_ITERATIONS` for a run requested at the cap (rule 2); nothing is run.
pub fn reach_cap(state: &mut CycleState, pr: &PrRef, now: &str) {
    state.blocked_from = Some(state.status);
    state.status = Status::BlockedMaxIterations;
    state.pr_ref = Some(pr.shorthand());
    touch(state, now);
}

/// The PR is closed or merged: nothing is tested or posted.
pub fn pr_closed(state: &mut CycleState, pr: &PrRef, why: &str, now: &str) {
    state.blocked_from = Some(state.status);
    state.status = Status::BlockedPrClosed;
    state.pr_ref = Some(pr.shorthand());
    state.last_error = Some(why.to_owned());
    touch(state, now);
}

/// A completed run (pass or fail) counts as an iteration and resets the infra counter.
pub fn record_run(state: &mut CycleState, pr: &PrRef, report: Report, summary: RunSummary, now: &str) {
    state.iteration = state.iteration.saturating_add(1);
    state.infra_failures = 0;
    state.last_error = None;
    state.needs_network = None;
    state.pr_ref = Some(pr.shorthand());
    state.head_sha = Some(report.head_sha.clone());
    if state.repository.is_none() {
        state.repository = Some(pr.repo.key());
    }
    state.followups = 0;
    state.dispute = None;
    match report.status {
        TestStatus::Passed => {
            let review = report.needs_review();
            state.status = if review { Status::NeedsReview } else { Status::ReadyToMerge };
            state.webgpt_handoff = Some(String::new());
            state.outbox = None;
            state.withdrawn = None;
        }
        // It failed only on held tests the PR corrected: which version is right is the
        // person's call, never a fix to ask of the model (issue 57).
        TestStatus::Failed if !report.disputed.is_empty() => {
            state.status = Status::TestsDisputed;
            state.dispute = Some(Dispute {
                source: DisputeSource::HeldRun,
                at: now.to_owned(),
                says: state.last_reply.as_ref().and_then(|r| r.contradiction.clone()),
                iteration: Some(state.iteration),
                head_sha: Some(report.head_sha.clone()),
                tests: report.disputed.clone(),
            });
            state.webgpt_handoff = Some(String::new());
            state.outbox = None;
            state.withdrawn = None;
        }
        TestStatus::Failed | TestStatus::SetupFailed | TestStatus::MergeConflict => {
            let handoff = text::handoff(&report.comment_markdown, report.status);
            state.status = Status::AwaitingWebgptFix;
            put_outbox(state, Outbox::new(OutboxKind::Handoff, handoff.clone(), now));
            state.webgpt_handoff = Some(handoff);
        }
    }
    state.history.push(summary);
    state.report = Some(report);
    touch(state, now);
}

/// A run that could not complete: status unchanged, unless it keeps happening.
pub fn record_infra_failure(state: &mut CycleState, message: &str, now: &str) {
    state.infra_failures = state.infra_failures.saturating_add(1);
    state.last_error = Some(message.to_owned());
    if state.infra_failures >= INFRA_FAILURE_LIMIT && !state.status.is_blocked() && !state.status.is_final() {
        state.blocked_from = Some(state.status);
        state.status = Status::BlockedInfra;
    }
    touch(state, now);
}

/// A run that failed for want of network (design §5.6): the status, the iteration and the
/// outbox stay as they were (nothing goes to WebGPT); the cycle remembers what to allow, for
/// `next`, until a run completes.
pub fn needs_network(state: &mut CycleState, needs: super::needs_network::NeedsNetwork, now: &str) {
    state.last_error = Some(format!("the last run of {} failed because {}", needs.pr, needs.what()));
    state.needs_network = Some(needs);
    touch(state, now);
}

/// The person allowed the hosts the last run was refused (human-only, design §5.6).
pub fn network_allowed(state: &mut CycleState, now: &str) -> Result<Vec<String>, Refusal> {
    let allow = match &mut state.needs_network {
        Some(needs) if needs.has_proposal() => {
            needs.allowed_at = Some(now.to_owned());
            needs.allow.clone()
        }
        Some(needs) if !needs.refused_by_policy.is_empty() => {
            let hint = format!(
                "the last run was refused by policy only ({}): forgeloop adds no entry for an address that is not public; a person who trusts it writes the exact IP:port into config.toml by hand",
                needs.refused_by_policy.join(", ")
            );
            return Err(refuse(state, "allowing hosts", hint));
        }
        Some(_) => {
            return Err(refuse(
                state,
                "allowing hosts",
                "the last run had no network at all, so no host was refused: give the commands file a \"setup\" step (or \"network\": \"allowlist\")",
            ));
        }
        None => return Err(refuse(state, "allowing hosts", "no run of this cycle is waiting for network")),
    };
    touch(state, now);
    Ok(allow)
}

/// A person approves a pass that changed protected paths (`forgeloop approve`, the control
/// room): the cycle becomes `READY_TO_MERGE`. Human-only; nothing is run or posted.
pub fn approve(state: &mut CycleState, now: &str) -> Result<(), Refusal> {
    if state.status == Status::TestsDisputed {
        return accept_disputed_tests(state, now);
    }
    if state.status != Status::NeedsReview {
        return Err(refuse(
            state,
            "approving a pass",
            "only a NEEDS_REVIEW cycle (a pass a person must look at) or a TESTS_DISPUTED one waits for approval",
        ));
    }
    state.status = Status::ReadyToMerge;
    touch(state, now);
    Ok(())
}

/// `approve` on `TESTS_DISPUTED`: the person takes the PR's version of the disputed held tests
/// as theirs; the same head is tested again with them (`next` says run), and a pass then is
/// judged like any other.
fn accept_disputed_tests(state: &mut CycleState, now: &str) -> Result<(), Refusal> {
    let Some(dispute) = state.dispute.clone().filter(Dispute::acceptable) else {
        return Err(refuse(
            state,
            "accepting the PR's tests",
            "WebGPT only said the tests contradict the brief; there is no version of them to accept: tell it what holds with `forgeloop say`, or correct the tests on the base branch yourself and say so",
        ));
    };
    let after_iteration = dispute.iteration.unwrap_or(state.iteration);
    for test in &dispute.tests {
        state.accepted_tests.retain(|a| a.path != test.path);
        state.accepted_tests.push(AcceptedTest {
            path: test.path.clone(),
            blob: test.pr_blob.clone(),
            at: now.to_owned(),
            after_iteration,
        });
    }
    state.dispute = None;
    state.outbox = None;
    state.status = Status::AwaitingWebgptFix;
    touch(state, now);
    Ok(())
}

/// Whether the person accepted a PR's version of a held test after the last run: the same
/// head is tested again with it (no handoff went out).
pub fn accepted_since_last_run(state: &CycleState) -> bool {
    let last = state.history.last().map_or(0, |r| r.iteration);
    state.accepted_tests.iter().any(|a| a.after_iteration >= last)
}

/// Stops a live cycle for good (`ABORTED`), recording why and by whom.
pub fn abort(state: &mut CycleState, reason: &str, by: Actor, now: &str) -> Result<(), Refusal> {
    if state.status.is_final() {
        return Err(refuse(state, "aborting", "the cycle has already ended"));
    }
    state.abort = Some(AbortInfo { reason: reason.to_owned(), at: now.to_owned(), by });
    state.status = Status::Aborted;
    touch(state, now);
    Ok(())
}

/// Blocks a live, unblocked cycle with a `BLOCKED_*` status other than the cap's, remembering where it was.
pub fn block(state: &mut CycleState, status: Status, reason: &str, now: &str) -> Result<(), Refusal> {
    if !status.is_blocked() {
        return Err(refuse(state, "blocking", format!("{status} is not a BLOCKED_* status")));
    }
    if status == Status::BlockedMaxIterations {
        return Err(refuse(
            state,
            "blocking",
            "BLOCKED_MAX_ITERATIONS is set by forgeloop when the cap is reached; a person raises the cap with `forgeloop extend`",
        ));
    }
    if state.status.is_final() || state.status.is_blocked() {
        return Err(refuse(state, "blocking", "only a live, unblocked cycle can be blocked"));
    }
    state.blocked_from = Some(state.status);
    state.status = status;
    state.last_error = Some(reason.to_owned());
    touch(state, now);
    Ok(())
}

/// Lifts a block (not the cap, which is raised with `extend`).
pub fn unblock(state: &mut CycleState, now: &str) -> Result<Status, Refusal> {
    if !state.status.is_unblockable() {
        let hint = if state.status == Status::BlockedMaxIterations {
            "raise the cap with `forgeloop extend --by N` instead"
        } else {
            "only a BLOCKED_* cycle can be unblocked"
        };
        return Err(refuse(state, "unblocking", hint));
    }
    let from = state.status;
    state.status = resume_status(state);
    state.blocked_from = None;
    state.infra_failures = 0;
    state.last_error = None;
    if from == Status::BlockedNoPr {
        state.followups = 0;
    }
    touch(state, now);
    Ok(from)
}

fn resume_status(state: &CycleState) -> Status {
    match state.blocked_from {
        Some(status) if !status.is_blocked() && !status.is_final() => status,
        _ if state.brief_confirmation.is_none() => Status::AwaitingBriefConfirmation,
        _ if state.report.is_some() => Status::AwaitingWebgptFix,
        _ => Status::AwaitingWebgptPr,
    }
}

/// Raises the cap; a cycle blocked by the cap resumes where it was.
pub fn extend(state: &mut CycleState, by: u32, now: &str) -> Result<(), Refusal> {
    if by == 0 {
        return Err(refuse(state, "extending the cap", "--by must be at least 1"));
    }
    if state.status.is_final() {
        return Err(refuse(state, "extending the cap", "the cycle has already ended"));
    }
    state.max_iterations = state.max_iterations.saturating_add(by);
    if state.status == Status::BlockedMaxIterations {
        state.status = resume_status(state);
        state.blocked_from = None;
    }
    touch(state, now);
    Ok(())
}

/// Marks a cycle as continued elsewhere (`forge --request --continue-from`).
pub fn supersede(state: &mut CycleState, successor: &str, now: &str) -> Result<(), Refusal> {
    if state.status.is_final() {
        return Err(refuse(state, "continuing this cycle", "it has already ended"));
    }
    state.status = Status::Superseded;
    state.successor = Some(successor.to_owned());
    touch(state, now);
    Ok(())
}

/// What a recorded reply did to the cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyEffect {
    /// A PR to test: the next step is `forge --pr`.
    Test,
    /// One follow-up asking for `PR_URL: <url>` is now in the outbox.
    FollowUp,
    /// The cycle is blocked (connector denied, or no PR after the follow-up).
    Blocked,
    /// WebGPT says the tests contradict the brief: the person decides (`TESTS_DISPUTED`).
    Disputed,
}

/// Applies a classified reply (design §3 rule 8: one follow-up, then `BLOCKED_NO_PR`).
pub fn record_reply(state: &mut CycleState, reply: LastReply, now: &str) -> Result<ReplyEffect, Refusal> {
    accept_reply(state)?;
    let class = reply.class;
    let pr = reply.pr.clone();
    state.last_reply = Some(reply);
    let effect = match class {
        ReplyClass::PrFound => {
            state.outbox = None;
            state.withdrawn = None;
            ReplyEffect::Test
        }
        // Decided by the use case from the PR's head (see `record_unchanged_reply`); a
        // correction that says so names no branch.
        ReplyClass::PrUnchanged => {
            let head = state.head_sha.clone().unwrap_or_default();
            let pr = pr.or_else(|| state.pr_ref.clone()).unwrap_or_default();
            nudge(state, &pr, &head, None, true, now)
        }
        ReplyClass::TestsContradict => {
            state.outbox = None;
            state.withdrawn = None;
            let says = state.last_reply.as_ref().and_then(|r| r.contradiction.clone());
            state.dispute = Some(Dispute {
                source: DisputeSource::Reply,
                at: now.to_owned(),
                says,
                iteration: None,
                head_sha: None,
                tests: Vec::new(),
            });
            state.status = Status::TestsDisputed;
            ReplyEffect::Disputed
        }
        ReplyClass::ConnectorDenied => {
            state.blocked_from = Some(state.status);
            state.status = Status::BlockedConnectorDenied;
            state.last_error =
                Some("WebGPT's GitHub connector cannot reach the repository; a person must grant access".into());
            ReplyEffect::Blocked
        }
        _ if state.followups >= 1 => {
            state.blocked_from = Some(state.status);
            state.status = Status::BlockedNoPr;
            state.last_error = Some(format!("no usable PR reference after one follow-up ({})", class.as_str()));
            ReplyEffect::Blocked
        }
        _ => {
            state.followups += 1;
            let text = match (class, pr, state.repository.as_deref()) {
                (ReplyClass::PrWrongRepository, Some(found), Some(bound)) => {
                    text::followup_wrong_repository(&found, bound)
                }
                _ => text::followup(),
            };
            put_outbox(state, Outbox::new(OutboxKind::Followup, text, now));
            ReplyEffect::FollowUp
        }
    };
    touch(state, now);
    Ok(effect)
}

/// A reply whose PR link points at `head`, the commit already tested and failed
/// (`PR_UNCHANGED`): no run; the outbox gets a note asking for a push to `branch`.
pub fn record_unchanged_reply(
    state: &mut CycleState,
    reply: LastReply,
    head: &str,
    branch: Option<&str>,
    now: &str,
) -> Result<ReplyEffect, Refusal> {
    accept_reply(state)?;
    let pr = reply.pr.clone().or_else(|| state.pr_ref.clone()).unwrap_or_default();
    state.last_reply = Some(reply);
    let effect = nudge(state, &pr, head, branch, true, now);
    touch(state, now);
    Ok(effect)
}

/// The last run of `pr` on `head` with these commands (`commands_sha256`), if the cycle has
/// one: testing it again would spend an iteration on a known result. A run recorded before
/// runs kept their commands' hash counts as the same commands.
pub fn tested_run<'a>(state: &'a CycleState, pr: &str, head: &str, commands_sha256: &str) -> Option<&'a RunSummary> {
    // A run before the person accepted a held test's new version tested other tests.
    let accepted = state.accepted_tests.iter().map(|a| a.after_iteration).max();
    state.history.iter().rev().find(|run| {
        accepted.is_none_or(|after| run.iteration > after)
            && run.pr.eq_ignore_ascii_case(pr)
            && run.head_sha.eq_ignore_ascii_case(head)
            && run.commands_sha256.as_deref().is_none_or(|sha| sha == commands_sha256)
    })
}

/// `forge --pr` found `head` already tested in `run` (see [`tested_run`]). When the cycle waits
/// for a fix (of that head, of another, or of what a person asked for after a pass) and
/// nothing is waiting to be sent, WebGPT gets the same note as for `PR_UNCHANGED`, so the
/// loop cannot go round asking for the same run; otherwise nothing changes (`None`).
pub fn already_tested(
    state: &mut CycleState,
    pr: &PrRef,
    head: &str,
    branch: Option<&str>,
    run: &RunSummary,
    now: &str,
) -> Option<ReplyEffect> {
    if state.status != Status::AwaitingWebgptFix || state.outbox.as_ref().is_some_and(|o| o.sent_at.is_none()) {
        return None;
    }
    let effect = nudge(state, &pr.shorthand(), head, branch, run.status.is_failure(), now);
    touch(state, now);
    Some(effect)
}

/// The note for an unchanged head, under the ask-once rule (design §3 rule 8): the second
/// time in a row the cycle is `BLOCKED_NO_PR`, for a person to look at.
fn nudge(state: &mut CycleState, pr: &str, head: &str, branch: Option<&str>, failed: bool, now: &str) -> ReplyEffect {
    if state.followups >= 1 {
        state.blocked_from = Some(state.status);
        state.status = Status::BlockedNoPr;
        state.last_error = Some(format!(
            "WebGPT pointed at {pr} with the head already tested ({}) again after a follow-up: no fix was pushed",
            head.get(..12).unwrap_or(head)
        ));
        return ReplyEffect::Blocked;
    }
    state.followups += 1;
    put_outbox(state, Outbox::new(OutboxKind::Followup, text::unchanged(pr, head, branch, failed), now));
    ReplyEffect::FollowUp
}

/// What a person's message did to the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// The outbox holds the message alone.
    Alone,
    /// A message was waiting to be sent: the person's words now open it (one message).
    BeforePending(OutboxKind),
}

/// A person's words to WebGPT (`forgeloop say`, the control room's `m`): review feedback, a
/// scope breach, a clarification. Not an iteration. Review feedback on a passed PR puts the
/// cycle back to waiting for a fix; a blocked, finished or unconfirmed cycle refuses, and so
/// does one at its cap (whatever WebGPT pushes could not be tested).
pub fn say(state: &mut CycleState, words: &str, now: &str) -> Result<Said, Refusal> {
    let action = "sending a message to WebGPT";
    let words = words.trim();
    if words.is_empty() {
        return Err(refuse(state, action, "the message is empty"));
    }
    match state.status {
        Status::AwaitingWebgptPr
        | Status::AwaitingWebgptFix
        | Status::ReadyToMerge
        | Status::NeedsReview
        | Status::TestsDisputed => {}
        Status::AwaitingBriefConfirmation => {
            return Err(refuse(state, action, "the brief must be confirmed first; it becomes the first message"));
        }
        _ if state.review.is_some() => {
            return Err(refuse(
                state,
                action,
                "a review cycle's messages are its challenge, its request and the questions about its findings: ask the reviewer with `forgeloop triage --as QUESTION --note …`",
            ));
        }
        _ => return Err(refuse(state, action, "the cycle is blocked or finished; nothing goes to WebGPT")),
    }
    if state.cap_reached() {
        return Err(refuse(
            state,
            action,
            "the iteration cap is reached, so a fix could not be tested; a person may raise it with `forgeloop extend`",
        ));
    }
    let said = match &state.outbox {
        Some(pending) if pending.sent_at.is_none() => {
            let kind = pending.kind;
            let combined = text::before_pending(words, &pending.text);
            put_outbox(state, Outbox::new(kind, combined, now));
            Said::BeforePending(kind)
        }
        _ => {
            put_outbox(state, Outbox::new(OutboxKind::Message, words.to_owned(), now));
            Said::Alone
        }
    };
    state.dispute = None;
    if matches!(state.status, Status::ReadyToMerge | Status::NeedsReview | Status::TestsDisputed) {
        state.status = Status::AwaitingWebgptFix;
    }
    touch(state, now);
    Ok(said)
}

/// Replaces the cycle's stored commands between runs (`forgeloop commands`); the next run uses
/// them. Returns the hash of the commands replaced, if there were any. Whether the change
/// widens the sandbox ([`CommandsProfile::widening`]) is the front end's to gate.
pub fn replace_commands(
    state: &mut CycleState,
    commands: CommandsProfile,
    now: &str,
) -> Result<Option<String>, Refusal> {
    if state.status.is_final() {
        return Err(refuse(state, "changing the commands", "the cycle is finished"));
    }
    let before = state.commands.as_ref().map(CommandsProfile::sha256);
    state.commands = Some(commands);
    // What the last run lacked may be what the new commands bring (a setup step): `next`
    // proposes the run again instead of waiting for the person's allowlist.
    state.needs_network = None;
    touch(state, now);
    Ok(before)
}

/// A new pending message: what was withdrawn before it is history now.
fn put_outbox(state: &mut CycleState, outbox: Outbox) {
    state.outbox = Some(outbox);
    state.withdrawn = None;
}

/// Takes a pending (unsent) message about the last failed run out of the outbox — its
/// failure handoff, or the note that its head is unchanged (`PR_UNCHANGED`): the person made
/// that run moot (its commands changed, the hosts it lacked allowed, a rerun asked for), so
/// WebGPT must not be asked to fix what the next run may not show. `next` then proposes the
/// run again. An unchanged-head note never sent does not count toward the ask-once rule.
pub fn withdraw_pending_handoff(state: &mut CycleState, why: &str, by: Actor, now: &str) -> Option<Outbox> {
    let failed = state.report.as_ref().is_some_and(|r| r.status.is_failure());
    let moot = |o: &Outbox| {
        o.sent_at.is_none()
            && (o.kind == OutboxKind::Handoff || (o.kind == OutboxKind::Followup && text::is_unchanged_note(&o.text)))
    };
    if !failed || !state.outbox.as_ref().is_some_and(moot) {
        return None;
    }
    take_pending(state, why, by, now)
}

/// A person drops the pending message (`forgeloop outbox --drop`, the control room): WebGPT
/// is not sent it, and `next` waits for the person until something new is queued or run. The
/// prompt that starts the cycle is not dropped (abort the cycle instead).
pub fn drop_pending(state: &mut CycleState, by: Actor, now: &str) -> Result<Outbox, Refusal> {
    let pending = state.outbox.as_ref().filter(|o| o.sent_at.is_none()).map(|o| o.kind);
    match pending {
        Some(OutboxKind::Prompt) => Err(refuse(
            state,
            "dropping the pending message",
            "it is the prompt that starts the cycle; to stop the cycle, abort it",
        )),
        Some(_) => take_pending(state, "a person dropped it", by, now)
            .ok_or_else(|| refuse(state, "dropping the pending message", "no message is waiting to be sent")),
        None => Err(refuse(state, "dropping the pending message", "no message is waiting to be sent")),
    }
}

fn take_pending(state: &mut CycleState, why: &str, by: Actor, now: &str) -> Option<Outbox> {
    let taken = state.outbox.take()?;
    if taken.kind == OutboxKind::Followup {
        state.followups = state.followups.saturating_sub(1);
    }
    // The reference tool's copy of a handoff too, or it would be adopted back as pending.
    state.webgpt_handoff = None;
    state.withdrawn =
        Some(Withdrawn { kind: taken.kind, sha256: taken.sha256.clone(), why: why.to_owned(), by, at: now.to_owned() });
    touch(state, now);
    Some(taken)
}

/// Only a cycle waiting for WebGPT takes a reply, and only once its last message was sent.
fn accept_reply(state: &CycleState) -> Result<(), Refusal> {
    if !matches!(state.status, Status::AwaitingWebgptPr | Status::AwaitingWebgptFix) {
        return Err(refuse(state, "recording a reply", "only a cycle waiting for WebGPT takes a reply"));
    }
    if state.outbox.as_ref().is_some_and(|o| o.sent_at.is_none()) {
        return Err(refuse(
            state,
            "recording a reply",
            "the pending message was never recorded as sent: if you typed it, run `forgeloop sent` first; otherwise send it",
        ));
    }
    Ok(())
}

/// The message a reference-tool state is waiting to have sent, which it keeps in its old
/// fields instead of an outbox: the prompt of a fresh cycle (no reply recorded yet), or the
/// failure handoff after a failed run. `None` when the state has an outbox or nothing to send.
pub fn reference_message(state: &CycleState) -> Option<(OutboxKind, &str)> {
    if state.outbox.is_some() || state.last_reply.is_some() {
        return None;
    }
    fn text(t: &Option<String>) -> Option<&str> {
        t.as_deref().filter(|t| !t.trim().is_empty())
    }
    match state.status {
        Status::AwaitingWebgptPr => text(&state.webgpt_prompt).map(|t| (OutboxKind::Prompt, t)),
        Status::AwaitingWebgptFix if state.report.as_ref().is_some_and(|r| r.status.is_failure()) => {
            text(&state.webgpt_handoff).map(|t| (OutboxKind::Handoff, t))
        }
        _ => None,
    }
}

/// Gives a reference-tool state the outbox its pending message belongs in (design §3: files of
/// the reference tool keep working). Returns the adopted kind, or `None` when there was nothing
/// to adopt.
pub fn adopt_reference_outbox(state: &mut CycleState, now: &str) -> Option<OutboxKind> {
    let (kind, text) = reference_message(state)?;
    let text = text.to_owned();
    put_outbox(state, Outbox::new(kind, text, now));
    touch(state, now);
    Some(kind)
}

/// Marks the outbox message as typed into the chat; refused the second time.
pub fn mark_sent(state: &mut CycleState, now: &str) -> Result<Outbox, SentError> {
    let Some(outbox) = state.outbox.as_mut() else {
        return Err(SentError::Nothing);
    };
    if let Some(at) = &outbox.sent_at {
        return Err(SentError::AlreadySent { at: at.clone(), sha256: outbox.sha256.clone() });
    }
    outbox.sent_at = Some(now.to_owned());
    let sent = outbox.clone();
    touch(state, now);
    Ok(sent)
}

/// Why `sent` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SentError {
    /// The outbox is empty.
    #[error("there is no message to send for this cycle")]
    Nothing,
    #[error("this message (sha256 {sha256}) was already recorded as sent at {at}; do not send it again")]
    /// The message was already recorded as sent: sending it again would duplicate it.
    AlreadySent {
        /// When it was recorded as sent.
        at: String,
        /// The message's hash.
        sha256: String,
    },
}

/// A state's `next_action` is set by the use case that writes it, from `next::next_action`.
fn touch(state: &mut CycleState, now: &str) {
    state.updated_at = Some(now.to_owned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::pr_ref::{WebHosts, parse_pr_ref};
    use crate::domain::report::CommandResult;

    const BRIEF: &str = "Goal: add dark mode.\nSuccess: preferences persist across reloads.\nScope: existing web app only.\nConstraints: keep accessibility contrast.\nValidation: run the frontend test suite.";
    const QUESTION: &str = "Implement dark mode in the existing web app, open a PR, and report its URL.";
    const NOW: &str = "2026-11-29T12:00:00Z";

    fn new_cycle(max: u32) -> NewCycle<'static> {
        NewCycle {
            request: "Add dark mode",
            webgpt_question: Some(QUESTION),
            intent_brief: Some(BRIEF),
            max_iterations: max,
            task_space: "webgpt-orchestrator:cycle".into(),
            await_confirmation: false,
            new_repository: None,
            carry: None,
            protected_paths: Vec::new(),
        }
    }

    fn pr(text: &str) -> PrRef {
        parse_pr_ref(text, &WebHosts::default()).unwrap()
    }

    fn report(status: TestStatus) -> (Report, RunSummary) {
        let report = Report {
            kept_checkout: None,
            kept_checkout_warning: None,
            network_log: Vec::new(),
            network_log_dropped: 0,
            lockfiles: Vec::new(),
            integrity: None,
            disputed: Vec::new(),
            held_changed: Vec::new(),
            confirmation: None,
            evidence: None,
            baseline: None,
            tripwire: None,
            checks: Vec::new(),
            status,
            repository: "acme/widget".into(),
            pull_request: 42,
            head_sha: "e".repeat(40),
            base_sha: None,
            tested: None,
            setup: Vec::new(),
            commands: vec![CommandResult {
                argv: vec!["pytest".into()],
                exit_code: Some(if status == TestStatus::Passed { 0 } else { 1 }),
                duration_seconds: 0.1,
                timed_out: false,
                signal: None,
                not_run: false,
            }],
            comment_markdown: "## Forge Loop PR test: X".into(),
            failure_output: None,
            comment_published: false,
            head_repository: None,
            timed_out: false,
            log_path: None,
            environment: None,
            comment_url: None,
            comment_error: None,
            extra: Map::new(),
        };
        let summary = RunSummary {
            iteration: 0,
            pr: "acme/widget#42".into(),
            head_sha: "e".repeat(40),
            status,
            started_at: NOW.into(),
            finished_at: NOW.into(),
            duration_seconds: 0.1,
            actor: Actor::Agent,
            log_path: None,
            report_path: None,
            comment_url: None,
            sandbox: None,
            commands_sha256: Some("c".repeat(64)),
            base_sha: None,
            merge_sha: None,
        };
        (report, summary)
    }

    fn reply_found(pr: &str) -> LastReply {
        LastReply {
            class: ReplyClass::PrFound,
            pr: Some(pr.into()),
            reason: "r".into(),
            sha256: "s".into(),
            at: NOW.into(),
            overridden: false,
            contradiction: None,
        }
    }

    /// A cycle whose run of acme/widget#42 at `eee…` failed, the handoff sent.
    fn failed_and_sent() -> CycleState {
        let mut state = start(new_cycle(5), NOW).unwrap();
        mark_sent(&mut state, NOW).unwrap();
        let (report, summary) = report(TestStatus::Failed);
        record_run(&mut state, &pr("acme/widget#42"), report, summary, NOW);
        mark_sent(&mut state, NOW).unwrap();
        state
    }

    #[test]
    fn a_reply_that_says_the_tests_contradict_the_brief_goes_to_the_person_and_costs_nothing() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        mark_sent(&mut state, NOW).unwrap();
        let mut reply = reply_found("acme/widget#42");
        reply.class = ReplyClass::TestsContradict;
        reply.pr = None;
        reply.contradiction = Some("tests/test_area.py:12 expects 1090, but the brief says 1080".into());
        assert_eq!(record_reply(&mut state, reply, NOW).unwrap(), ReplyEffect::Disputed);
        assert_eq!((state.status, state.iteration), (Status::TestsDisputed, 0));
        assert!(state.outbox.is_none() && state.status.needs_human());
        let dispute = state.dispute.clone().unwrap();
        assert_eq!(dispute.source, DisputeSource::Reply);
        assert!(dispute.words().contains("expects 1090, but the brief says 1080"), "{}", dispute.words());
        // Nothing to accept: the person answers instead.
        assert!(approve(&mut state, NOW).is_err());
        say(&mut state, "The test is right: the area includes the border.", NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        assert!(state.dispute.is_none() && state.outbox.is_some());
    }

    #[test]
    fn a_held_run_failing_only_on_tests_the_pr_corrected_is_the_persons_and_approving_tests_them_again() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        mark_sent(&mut state, NOW).unwrap();
        let (mut failed, summary) = report(TestStatus::Failed);
        failed.disputed = vec![crate::domain::dispute::DisputedTest {
            path: "tests/test_area.py".into(),
            base_blob: "1".repeat(40),
            pr_blob: "2".repeat(40),
            failing: vec!["tests/test_area.py::test_big".into()],
            yours: Some("assert area(3) == 1090".into()),
            theirs: Some("assert area(3) == 1080".into()),
        }];
        record_run(&mut state, &pr("acme/widget#42"), failed, summary, NOW);
        assert_eq!((state.status, state.iteration), (Status::TestsDisputed, 1), "the run counts; no fix is asked");
        assert!(state.outbox.is_none(), "nothing goes to WebGPT");
        assert!(state.dispute.as_ref().unwrap().words().contains("the PR says `assert area(3) == 1080`"));
        let head = "e".repeat(40);
        assert!(tested_run(&state, "acme/widget#42", &head, &"c".repeat(64)).is_some());
        approve(&mut state, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        assert_eq!(state.accepted_tests.len(), 1);
        assert_eq!(
            (state.accepted_tests[0].blob.as_str(), state.accepted_tests[0].after_iteration),
            ("2".repeat(40).as_str(), 1)
        );
        assert!(accepted_since_last_run(&state));
        // The same head is a new test now: it ran with the person's old version.
        assert!(tested_run(&state, "acme/widget#42", &head, &"c".repeat(64)).is_none());
        let (passed, mut summary) = report(TestStatus::Passed);
        summary.iteration = 2;
        record_run(&mut state, &pr("acme/widget#42"), passed, summary, NOW);
        assert_eq!(state.status, Status::ReadyToMerge);
        assert!(!accepted_since_last_run(&state) && state.dispute.is_none());
    }

    #[test]
    fn a_head_already_tested_with_the_same_commands_is_known_and_other_commands_are_a_new_test() {
        let state = failed_and_sent();
        let head = "e".repeat(40);
        assert!(tested_run(&state, "ACME/widget#42", &head.to_uppercase(), &"c".repeat(64)).is_some());
        assert!(tested_run(&state, "acme/widget#42", &head, &"d".repeat(64)).is_none(), "other commands");
        assert!(tested_run(&state, "acme/widget#42", &"f".repeat(40), &"c".repeat(64)).is_none(), "another head");
        assert!(tested_run(&state, "acme/widget#43", &head, &"c".repeat(64)).is_none(), "another PR");
        let mut old = state.clone();
        old.history[0].commands_sha256 = None;
        assert!(tested_run(&old, "acme/widget#42", &head, &"d".repeat(64)).is_some(), "an older run: same commands");
    }

    #[test]
    fn an_unchanged_head_gets_one_note_then_blocks_and_nothing_changes_while_a_message_waits() {
        let mut state = failed_and_sent();
        let head = "e".repeat(40);
        let waiting = {
            let mut s = start(new_cycle(5), NOW).unwrap();
            let (report, summary) = report(TestStatus::Failed);
            mark_sent(&mut s, NOW).unwrap();
            record_run(&mut s, &pr("acme/widget#42"), report, summary, NOW);
            s
        };
        let mut unsent = waiting.clone();
        let run = waiting.history[0].clone();
        assert_eq!(already_tested(&mut unsent, &pr("acme/widget#42"), &head, Some("fix"), &run, NOW), None);
        assert_eq!(unsent, waiting, "the handoff is still to send: nothing changes");

        let effect = already_tested(&mut state, &pr("acme/widget#42"), &head, Some("fix"), &run, NOW);
        assert_eq!(effect, Some(ReplyEffect::FollowUp));
        let note = &state.outbox.as_ref().unwrap().text;
        assert!(note.contains("still eeeeeeeeeeee") && note.contains("`fix`"), "{note}");
        assert_eq!((state.iteration, state.status), (1, Status::AwaitingWebgptFix));
        mark_sent(&mut state, NOW).unwrap();
        let effect = record_unchanged_reply(&mut state, reply_found("acme/widget#42"), &head, Some("fix"), NOW);
        assert_eq!(effect, Ok(ReplyEffect::Blocked));
        assert_eq!(state.status, Status::BlockedNoPr);
        assert!(state.last_error.as_deref().unwrap().contains("no fix was pushed"));
    }

    #[test]
    fn a_tested_head_after_review_feedback_or_a_revert_gets_the_note_too() {
        // Review feedback on a pass, and WebGPT answers with the same head: told, not re-run.
        let mut state = start(new_cycle(5), NOW).unwrap();
        mark_sent(&mut state, NOW).unwrap();
        let (report, summary) = report(TestStatus::Passed);
        record_run(&mut state, &pr("acme/widget#42"), report, summary, NOW);
        say(&mut state, "Add a test for zero.", NOW).unwrap();
        mark_sent(&mut state, NOW).unwrap();
        let run = state.history[0].clone();
        let effect = already_tested(&mut state, &pr("acme/widget#42"), &"e".repeat(40), None, &run, NOW);
        assert_eq!(effect, Some(ReplyEffect::FollowUp));
        let note = &state.outbox.as_ref().unwrap().text;
        assert!(
            note.contains("already tested before the changes asked for") && note.contains("Push the changes"),
            "{note}"
        );
    }

    #[test]
    fn a_pass_that_changed_a_protected_path_waits_for_a_persons_approval_or_words() {
        use crate::domain::integrity::Integrity;
        let passed_with = |integrity: Option<Integrity>| {
            let mut state = start(new_cycle(5), NOW).unwrap();
            mark_sent(&mut state, NOW).unwrap();
            let (mut report, summary) = report(TestStatus::Passed);
            report.integrity = integrity;
            record_run(&mut state, &pr("acme/widget#42"), report, summary, NOW);
            state
        };
        let protected = Integrity {
            protected: vec!["test.sh".into()],
            protect_patterns: vec!["test.sh".into()],
            ..Integrity::default()
        };
        let mut state = passed_with(Some(protected.clone()));
        assert_eq!(state.status, Status::NeedsReview);
        assert!(state.status.needs_human());
        // The agent may not test past the gate; a person's rerun may.
        assert!(gate_test(&state, &pr("acme/widget#42"), false).unwrap_err().hint.contains("forgeloop approve"));
        assert_eq!(gate_test(&state, &pr("acme/widget#42"), true), Ok(TestGate::Proceed));
        approve(&mut state, NOW).unwrap();
        assert_eq!(state.status, Status::ReadyToMerge);
        assert!(approve(&mut state, NOW).unwrap_err().hint.contains("only a NEEDS_REVIEW cycle"));
        // Words instead of an approval send the PR back for a fix.
        let mut state = passed_with(Some(protected));
        assert_eq!(say(&mut state, "Leave test.sh alone.", NOW), Ok(Said::Alone));
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        // Nothing protected changed, or no integrity at all (an older report): READY_TO_MERGE.
        assert_eq!(passed_with(Some(Integrity::default())).status, Status::ReadyToMerge);
        assert_eq!(passed_with(None).status, Status::ReadyToMerge);
    }

    #[test]
    fn the_persons_words_go_first_and_review_feedback_reopens_a_passed_cycle() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        assert_eq!(say(&mut state, "Keep it small.", NOW), Ok(Said::BeforePending(OutboxKind::Prompt)));
        assert!(state.outbox.as_ref().unwrap().text.starts_with("Keep it small.\n\n---\n\n"));
        mark_sent(&mut state, NOW).unwrap();
        let (report, summary) = report(TestStatus::Passed);
        record_run(&mut state, &pr("acme/widget#42"), report, summary, NOW);
        assert_eq!(state.status, Status::ReadyToMerge);
        assert_eq!(say(&mut state, "  Add a test for zero.  ", NOW), Ok(Said::Alone));
        let outbox = state.outbox.as_ref().unwrap();
        assert_eq!((outbox.kind, outbox.text.as_str()), (OutboxKind::Message, "Add a test for zero."));
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        assert!(say(&mut state, "   ", NOW).is_err());
        let mut at_cap = state.clone();
        at_cap.iteration = at_cap.max_iterations;
        assert!(say(&mut at_cap, "more", NOW).unwrap_err().to_string().contains("cap"));
        let mut blocked = state.clone();
        block(&mut blocked, Status::BlockedModelUnavailable, "x", NOW).unwrap();
        assert!(say(&mut blocked, "more", NOW).is_err());
    }

    #[test]
    fn corrected_commands_replace_the_stored_ones_and_clear_what_the_last_run_lacked() {
        let mut state = failed_and_sent();
        let old = crate::domain::commands::parse_commands(r#"[["pytest"]]"#).unwrap();
        state.commands = Some(old.clone());
        let new = crate::domain::commands::parse_commands(
            r#"{"setup": [["pip", "install", "-r", "r.txt"]], "commands": [["pytest"]]}"#,
        )
        .unwrap();
        assert_eq!(replace_commands(&mut state, new.clone(), NOW), Ok(Some(old.sha256())));
        assert_eq!(state.commands.as_ref(), Some(&new));
        assert!(state.needs_network.is_none());
        abort(&mut state, "done", Actor::Agent, NOW).unwrap();
        assert!(replace_commands(&mut state, old, NOW).is_err());
    }

    #[test]
    fn a_successor_carries_the_commands_and_continues_on_the_pr() {
        let mut old = failed_and_sent();
        old.commands = Some(crate::domain::commands::parse_commands(r#"[["pytest"]]"#).unwrap());
        let mut input = new_cycle(5);
        input.carry = Some(Carry::from_state(&old, "old.json".into()));
        input.intent_brief = None;
        input.webgpt_question = None;
        let state = start(input, NOW).unwrap();
        assert_eq!(state.commands, old.commands);
        assert_eq!(state.pr_ref.as_deref(), Some("acme/widget#42"));
        assert!(state.outbox.as_ref().unwrap().text.starts_with("Continue on pull request acme/widget#42"));
    }

    #[test]
    fn reference_f8_f9_f10_f21_start() {
        let state = start(new_cycle(5), NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptPr);
        assert_eq!(state.request, "Add dark mode");
        assert_eq!(state.iteration, 0);
        assert_eq!(state.max_iterations, 5);
        assert_eq!(state.intent_brief, BRIEF);
        assert_eq!(state.webgpt_question, QUESTION);
        let prompt = state.webgpt_prompt.as_deref().unwrap();
        assert!(prompt.contains(&format!("## Confirmed user intent\n{BRIEF}")));
        assert_eq!(state.outbox.as_ref().unwrap().text, prompt);
        assert_eq!(state.brief_confirmation.as_ref().unwrap().via, "cli");
    }

    #[test]
    fn reference_f19_f20_f23_validation_order() {
        let mut input = new_cycle(5);
        input.intent_brief = Some("   ");
        input.webgpt_question = None;
        assert!(start(input, NOW).unwrap_err().to_string().contains("intent brief"));
        let mut input = new_cycle(5);
        input.webgpt_question = Some("   ");
        assert!(start(input, NOW).unwrap_err().to_string().contains("WebGPT question"));
        assert!(start(new_cycle(0), NOW).unwrap_err().to_string().contains("max_iterations"));
        let mut input = new_cycle(5);
        input.request = "  ";
        assert_eq!(start(input, NOW).unwrap_err(), StartError::EmptyRequest);
        let mut input = new_cycle(5);
        input.intent_brief = Some("Goal: only a goal");
        let err = start(input, NOW).unwrap_err();
        assert!(err.is_unconfirmed_delegation());
        assert!(err.to_string().contains("Validation"));
    }

    #[test]
    fn awaiting_confirmation_has_no_prompt_until_confirmed() {
        let mut input = new_cycle(5);
        input.await_confirmation = true;
        let mut state = start(input, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingBriefConfirmation);
        assert!(state.webgpt_prompt.is_none() && state.outbox.is_none());
        assert!(gate_test(&state, &pr("acme/widget#1"), false).is_err());
        let edited = BRIEF.replace("add dark mode", "add a dark theme");
        confirm_brief(&mut state, Some((QUESTION.into(), edited)), "tui", Actor::Human, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptPr);
        assert_eq!(state.brief.as_ref().unwrap().goal, "add a dark theme.");
        assert!(state.webgpt_prompt.as_deref().unwrap().contains("add a dark theme"));
        assert_eq!(state.brief_confirmation.as_ref().unwrap().by, Actor::Human);
        assert!(confirm_brief(&mut state, None, "tui", Actor::Human, NOW).is_err());
    }

    #[test]
    fn reference_f24_cap_then_blocked() {
        let mut state = start(new_cycle(1), NOW).unwrap();
        let pr = pr("acme/widget#42");
        assert_eq!(gate_test(&state, &pr, false), Ok(TestGate::Proceed));
        let (report, summary) = report(TestStatus::Failed);
        record_run(&mut state, &pr, report, summary, NOW);
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        assert_eq!(state.iteration, 1);
        assert!(state.webgpt_handoff.as_deref().unwrap().contains("PR_URL: <url>"));
        assert!(!state.report.as_ref().unwrap().comment_markdown.contains("PR_URL"));
        assert_eq!(gate_test(&state, &pr, false), Ok(TestGate::CapReached));
        reach_cap(&mut state, &pr, NOW);
        assert_eq!(state.status, Status::BlockedMaxIterations);
        assert!(gate_test(&state, &pr, false).is_err());
        extend(&mut state, 2, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        assert_eq!(state.max_iterations, 3);
        assert_eq!(gate_test(&state, &pr, false), Ok(TestGate::Proceed));
    }

    #[test]
    fn reference_f11_pass_reaches_the_merge_gate_and_binds() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        let pr = pr("acme/widget#42");
        let (report, summary) = report(TestStatus::Passed);
        record_run(&mut state, &pr, report, summary, NOW);
        assert_eq!(state.status, Status::ReadyToMerge);
        assert_eq!(state.repository.as_deref(), Some("acme/widget"));
        assert_eq!(state.webgpt_handoff.as_deref(), Some(""));
        let refusal = gate_test(&state, &pr, false).unwrap_err();
        assert!(refusal.hint.contains("merge"));
        assert_eq!(gate_test(&state, &pr, true), Ok(TestGate::Proceed));
    }

    #[test]
    fn reference_f1_binding_refuses_other_repositories_case_insensitively() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        state.repository = Some("acme/widget".into());
        let err = gate_test(&state, &pr("acme/other#1"), false).unwrap_err();
        assert!(err.to_string().contains("repository"));
        assert_eq!(gate_test(&state, &pr("ACME/Widget#3"), false), Ok(TestGate::Proceed));
        state.repository = Some(String::new());
        assert!(gate_test(&state, &pr("acme/widget#3"), false).is_err());
    }

    #[test]
    fn binding_is_checked_before_the_cap() {
        let mut state = start(new_cycle(1), NOW).unwrap();
        state.iteration = 1;
        state.repository = Some("acme/widget".into());
        assert!(gate_test(&state, &pr("acme/other#1"), false).is_err());
    }

    #[test]
    fn infra_failures_block_after_three_and_a_run_resets_them() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        record_infra_failure(&mut state, "fetch failed", NOW);
        record_infra_failure(&mut state, "fetch failed", NOW);
        assert_eq!(state.status, Status::AwaitingWebgptPr);
        assert_eq!(state.iteration, 0);
        let (report, summary) = report(TestStatus::Failed);
        record_run(&mut state, &pr("acme/widget#42"), report, summary, NOW);
        assert_eq!(state.infra_failures, 0);
        for _ in 0..3 {
            record_infra_failure(&mut state, "GitHub unreachable", NOW);
        }
        assert_eq!(state.status, Status::BlockedInfra);
        assert_eq!(state.blocked_from, Some(Status::AwaitingWebgptFix));
        assert_eq!(unblock(&mut state, NOW), Ok(Status::BlockedInfra));
        assert_eq!(state.status, Status::AwaitingWebgptFix);
        assert_eq!(state.infra_failures, 0);
    }

    #[test]
    fn every_blocked_or_final_status_refuses_a_test_run() {
        let base = start(new_cycle(5), NOW).unwrap();
        for status in Status::ALL {
            let mut state = base.clone();
            state.status = status;
            let allowed = matches!(status, Status::AwaitingWebgptPr | Status::AwaitingWebgptFix);
            assert_eq!(gate_test(&state, &pr("acme/widget#1"), false).is_ok(), allowed, "{status}");
        }
    }

    #[test]
    fn only_a_brief_awaiting_confirmation_can_be_confirmed() {
        let base = start(new_cycle(5), NOW).unwrap();
        for status in Status::ALL {
            let mut state = base.clone();
            state.status = status;
            let refusal = can_confirm(&state).err();
            assert_eq!(refusal.is_none(), status == Status::AwaitingBriefConfirmation, "{status}");
            if let Some(refusal) = refusal {
                assert_eq!(refusal.hint, "only a brief awaiting confirmation can be confirmed");
                assert_eq!(refusal.status, status);
            }
        }
    }

    #[test]
    fn a_rerun_needs_a_finished_run_a_pr_and_stored_commands() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        for status in Status::ALL {
            state.status = status;
            let expected = match status {
                Status::AwaitingWebgptFix => Some(Rerun::AfterFailure),
                Status::ReadyToMerge | Status::NeedsReview => Some(Rerun::OverridePass),
                _ => None,
            };
            assert_eq!(rerun_allowed(&state).ok(), expected, "{status}");
            if expected.is_none() {
                assert!(rerun_allowed(&state).unwrap_err().hint.ends_with(&format!("this cycle is {status}")));
            }
        }
        state.status = Status::AwaitingWebgptFix;
        assert_eq!(can_rerun(&state).unwrap_err().hint, "this cycle has no PR to rerun");
        state.pr_ref = Some("acme/widget#42".into());
        assert!(can_rerun(&state).unwrap_err().hint.starts_with("this cycle has no stored commands"));
        state.commands = Some(crate::domain::commands::parse_commands(r#"[["pytest"]]"#).unwrap());
        assert_eq!(can_rerun(&state), Ok(Rerun::AfterFailure));
    }

    #[test]
    fn only_forgeloop_sets_the_cap_block() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        let refusal = block(&mut state, Status::BlockedMaxIterations, "x", NOW).unwrap_err();
        assert!(refusal.hint.contains("set by forgeloop when the cap is reached"), "{refusal}");
        assert_eq!(state.status, Status::AwaitingWebgptPr);
    }

    #[test]
    fn abort_block_unblock_and_supersede_rules() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        assert!(block(&mut state, Status::ReadyToMerge, "x", NOW).is_err());
        block(&mut state, Status::BlockedModelUnavailable, "6 Pro missing", NOW).unwrap();
        assert!(block(&mut state, Status::BlockedInfra, "again", NOW).is_err());
        assert_eq!(unblock(&mut state, NOW), Ok(Status::BlockedModelUnavailable));
        assert_eq!(state.status, Status::AwaitingWebgptPr);
        assert!(unblock(&mut state, NOW).is_err());
        abort(&mut state, "user changed their mind", Actor::Human, NOW).unwrap();
        assert_eq!(state.status, Status::Aborted);
        assert!(abort(&mut state, "again", Actor::Human, NOW).is_err());
        assert!(extend(&mut state, 1, NOW).is_err());
        assert!(supersede(&mut state, "/x.json", NOW).is_err());
    }

    #[test]
    fn continuation_carries_the_count_the_cap_and_the_binding() {
        let mut old = start(new_cycle(4), NOW).unwrap();
        old.iteration = 3;
        old.repository = Some("acme/widget".into());
        let carry = Carry::from_state(&old, "/c/old.json".into());
        let mut input = new_cycle(99);
        input.webgpt_question = None;
        input.intent_brief = None;
        input.carry = Some(carry);
        let state = start(input, NOW).unwrap();
        assert_eq!((state.iteration, state.max_iterations), (3, 4));
        assert_eq!(state.repository.as_deref(), Some("acme/widget"));
        assert_eq!(state.status, Status::AwaitingWebgptPr);
        assert_eq!(state.brief_confirmation.as_ref().unwrap().via, "continued");
        assert_eq!(state.predecessor.as_deref(), Some("/c/old.json"));
        supersede(&mut old, "/c/new.json", NOW).unwrap();
        assert_eq!(old.status, Status::Superseded);
    }

    #[test]
    fn sent_is_recorded_once() {
        let mut state = start(new_cycle(5), NOW).unwrap();
        let sent = mark_sent(&mut state, NOW).unwrap();
        assert_eq!(sent.kind, OutboxKind::Prompt);
        assert!(matches!(mark_sent(&mut state, NOW), Err(SentError::AlreadySent { .. })));
    }
}
