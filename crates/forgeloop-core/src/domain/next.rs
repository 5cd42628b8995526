//! The single deterministic next step of a cycle (`forgeloop next`, design §5.3): what to
//! send, what to run, or why to stop. The coordinator agent follows it instead of judging.

use super::brief::Brief;
use super::lockfiles;
use super::machine;
use super::reply::ReplyClass;
use super::review_step;
use super::state::{CycleState, OutboxKind};
use super::status::Status;
use super::validation;

pub use super::step::{Action, NextStep};

/// The `next_action` sentence a state stores (the reference tool's field): exactly what `next`
/// says now. The use cases set it on every write (design §3), so it is never stale.
pub fn next_action(state: &CycleState, state_ref: &str) -> String {
    next_step(state, state_ref).explanation
}

fn cmd(parts: &[&str]) -> Option<Vec<String>> {
    Some(parts.iter().map(|p| (*p).to_owned()).collect())
}

/// `state_ref` is how commands should name the state (its path).
pub fn next_step(state: &CycleState, state_ref: &str) -> NextStep {
    next_step_knowing(state, state_ref, &[])
}

/// Whether the cycle waits for a person (`next` says `wait_for_human`): a brief to confirm, a
/// pass to review, hosts to allow. `wait` blocks only then: once the person acted, there is
/// nothing left to wait for, even when they acted before `wait` started.
/// A cycle a remote client drives waits for the same things, though its `next` says `stop`.
pub fn waits_for_person(state: &CycleState) -> bool {
    match state.status {
        Status::AwaitingBriefConfirmation | Status::NeedsReview | Status::TestsDisputed => true,
        Status::AwaitingTriage => state.review.is_some(),
        Status::AwaitingPacket => review_step::packet_waits_for_yes(state),
        Status::AwaitingWebgptPr | Status::AwaitingWebgptFix => {
            state.needs_network.as_ref().is_some_and(|n| n.allowed_at.is_none()) || withdrawn_and_waiting(state)
        }
        _ => false,
    }
}

/// A pending message was taken out unsent (a person dropped it, or a rerun they asked for was
/// stopped) and nothing replaced it: the person decides what comes next. Not after they
/// corrected the commands, which says to run.
fn withdrawn_and_waiting(state: &CycleState) -> bool {
    state.outbox.is_none()
        && state.withdrawn.is_some()
        && state.needs_network.is_none()
        && !commands_changed_since_failure(state)
}

/// [`next_step`], knowing the repository's `lockfiles` (as forgeloop last fetched it) for the
/// first run's setup proposal.
pub fn next_step_knowing(state: &CycleState, state_ref: &str, lockfiles: &[String]) -> NextStep {
    let mut step = NextStep {
        status: state.status,
        action: Action::Stop,
        explanation: String::new(),
        command: None,
        text: None,
        text_sha256: None,
        waiting_since: None,
        iteration: state.iteration,
        max_iterations: state.max_iterations,
        pr: state.pr_ref.clone(),
        sandbox: None,
        proposed_commands: None,
        proposed_setup: None,
        lockfiles: Vec::new(),
        not_proposed: Vec::new(),
        needs_network: None,
        conversation_url: None,
        head_check: None,
        route: None,
        upload: None,
    };
    if state.review.is_some() && review_step::is_review_status(state.status) {
        review_step::next_step(state, state_ref, &mut step);
        return step;
    }
    // A cycle a remote client drives itself (`forgeloop serve`, design §8.1): it tests its own
    // PR; a coordinator relays nothing.
    if let Some(driver) = state.driver.as_deref().filter(|d| d.starts_with("connector:"))
        && matches!(state.status, Status::AwaitingWebgptPr | Status::AwaitingWebgptFix)
    {
        step.action = Action::Stop;
        step.explanation = format!(
            "This cycle is driven by {driver} through forgeloop serve: the client opens its PR and tests it with test_pr itself. Nothing to send or run; the person watches it in the control room."
        );
        return step;
    }
    match state.status {
        Status::AwaitingBriefConfirmation => {
            step.action = Action::WaitForHuman;
            step.explanation = "A person must confirm the delegation brief in `forgeloop tui` (or `forgeloop confirm` on a terminal). Wait for it; do not send anything.".into();
            step.command = cmd(&["forgeloop", "wait", "--state", state_ref]);
        }
        // The cap is spent by a failed run: the handoff is pointless. Running forge --pr now
        // records BLOCKED_MAX_ITERATIONS without fetching or testing (design §3 rule 2).
        Status::AwaitingWebgptFix if state.cap_reached() => {
            let pr = state.pr_ref.clone().unwrap_or_default();
            step.action = Action::Run;
            step.explanation = format!(
                "The last run failed and the iteration cap ({}) is reached. Do not send the handoff. Run the command: it records BLOCKED_MAX_ITERATIONS without fetching or testing anything; then stop and report.",
                state.max_iterations
            );
            step.command = cmd(&["forgeloop", "forge", "--pr", &pr, "--state", state_ref]);
        }
        Status::AwaitingWebgptPr | Status::AwaitingWebgptFix => {
            conversation_step(state, state_ref, lockfiles, &mut step)
        }
        Status::ReadyToMerge => {
            let integrity = state.report.as_ref().and_then(|r| r.integrity.as_ref());
            let tests = match integrity.and_then(|i| Some((i.flag?, i.words()?))) {
                Some((flag, words)) if flag.needs_a_look() => {
                    format!(" It passed, and the PR changed its tests: review before merging ({words}).")
                }
                Some((_, words)) => format!(" It passed; {words}."),
                None => String::new(),
            };
            let evidence = match state.report.as_ref().and_then(|r| r.evidence.as_ref()) {
                Some(evidence) => format!(" Evidence: {}.", evidence.summary),
                None => String::new(),
            };
            step.explanation = format!(
                "Stop and report READY_TO_MERGE: {} passed at head SHA {}.{evidence}{tests} Do not merge; a person reviews and merges.",
                state.pr_ref.as_deref().unwrap_or("the PR"),
                state.tested_head_sha().unwrap_or("?")
            );
        }
        Status::NeedsReview => {
            let integrity = state.report.as_ref().and_then(|r| r.integrity.as_ref());
            let why = state
                .report
                .as_ref()
                .and_then(|r| r.review_reason())
                .unwrap_or_else(|| "it changes protected paths".into());
            let mut tests = integrity.and_then(|i| i.change_words()).map(|w| format!(" ({w})")).unwrap_or_default();
            if let Some(evidence) = state.report.as_ref().and_then(|r| r.evidence.as_ref()).filter(|e| e.stands) {
                tests.push_str(&format!(" (evidence: {})", evidence.summary));
            }
            step.action = Action::WaitForHuman;
            step.explanation = format!(
                "Stop and tell the person: {} passed at head SHA {}, but {why}{tests}. NEEDS_REVIEW is a person's gate: they approve it (`forgeloop approve`, on a terminal, or the control room) or answer WebGPT (`forgeloop say`). Do not send anything; wait for their decision.",
                state.pr_ref.as_deref().unwrap_or("the PR"),
                state.tested_head_sha().unwrap_or("?")
            );
            step.command = cmd(&["forgeloop", "wait", "--state", state_ref]);
        }
        Status::TestsDisputed => {
            let dispute = state.dispute.as_ref();
            let words = dispute.map(|d| d.words()).unwrap_or_else(|| "the tests are disputed".into());
            let choices = match dispute.is_some_and(|d| d.acceptable()) {
                true => {
                    "they accept the PR's version of those tests (`forgeloop approve` on a terminal, or the control room; the same head is then tested again with them) or tell WebGPT which is right (`forgeloop say`)"
                }
                false => {
                    "they tell WebGPT what holds (`forgeloop say`), or correct the tests on the base branch themselves and say so"
                }
            };
            step.action = Action::WaitForHuman;
            step.explanation = format!(
                "Stop and tell the person: {words}. TESTS_DISPUTED is the person's call, not a fix to ask of WebGPT: {choices}. Do not send anything; wait for their decision."
            );
            step.command = cmd(&["forgeloop", "wait", "--state", state_ref]);
        }
        Status::BlockedMaxIterations => {
            step.explanation = format!(
                "Stop and report BLOCKED_MAX_ITERATIONS: {} of {} iterations used (max_iterations reached). Do not retry; only a person can raise the cap.",
                state.iteration, state.max_iterations
            );
        }
        Status::Aborted | Status::Superseded => {
            step.action = Action::Done;
            step.explanation = match (&state.successor, &state.abort) {
                (Some(successor), _) => format!("The cycle continues in {successor}."),
                (_, Some(abort)) => format!("The cycle was aborted: {}", abort.reason),
                _ => "The cycle has ended.".into(),
            };
        }
        status => {
            step.explanation = format!(
                "Stop and report {status}{}. A person must resolve it and run `forgeloop unblock`.",
                state.last_error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
            );
        }
    }
    step
}

fn conversation_step(state: &CycleState, state_ref: &str, lockfiles: &[String], step: &mut NextStep) {
    if let Some(needs) = &state.needs_network {
        step.action = Action::WaitForHuman;
        // The stored commands install nothing first: the lockfiles the run found say what would.
        let has_setup = state.commands.as_ref().is_some_and(|c| !c.setup.is_empty());
        let setup = if has_setup { Vec::new() } else { lockfiles::setup_for(&needs.lockfiles) };
        if let Some(at) = &needs.allowed_at {
            step.action = Action::Run;
            step.explanation = format!(
                "The person allowed {} for {} at {at} (the last run of {} needed them): run the command again.",
                needs.allow.join(", "),
                needs.pr.split_once('#').map_or(needs.pr.as_str(), |(repo, _)| repo),
                needs.pr
            );
            step.command = cmd(&["forgeloop", "forge", "--pr", &needs.pr, "--state", state_ref, "--post-comment"]);
            step.pr = Some(needs.pr.clone());
            step.needs_network = Some(needs.clone());
            return;
        }
        let setup_hint = if setup.is_empty() {
            String::new()
        } else {
            step.lockfiles = needs.lockfiles.clone();
            step.proposed_setup = Some(setup);
            " proposed_setup holds setup commands for the lockfiles the run found: to use them, run the command with --commands-json naming a commands file whose \"setup\" lists them beside the cycle's commands.".to_owned()
        };
        let what = needs.what();
        if !needs.has_proposal() && !needs.refused_by_policy.is_empty() && needs.sign.is_none() {
            step.explanation = format!(
                "The last run of {} ({} phase) failed because {what}: NEEDS_NETWORK, not an iteration. Do not send this failure to WebGPT, and do not propose an entry for it: a PR asking for such an address may be probing for credentials. Tell the person what was refused; if they trust it, they write the exact IP:port into config.toml by hand and tell you (needs_network.config says where). Then run the command again.{setup_hint}",
                needs.pr, needs.phase
            );
        } else {
            step.explanation = format!(
                "The last run of {} ({} phase) failed because {what}: NEEDS_NETWORK, not the PR's fault and not an iteration. Do not send this failure to WebGPT. Ask the person whether the tests may reach it: they allow hosts in their config.toml (needs_network.config holds the exact lines; `forgeloop tui` allows them with one key, and `forgeloop wait --state {state_ref}` returns when they do), or give the commands file a \"setup\" step that installs the dependencies through the allowlist. Then run the command again.{setup_hint}",
                needs.pr, needs.phase
            );
        }
        step.command = cmd(&["forgeloop", "forge", "--pr", &needs.pr, "--state", state_ref, "--post-comment"]);
        step.pr = Some(needs.pr.clone());
        step.needs_network = Some(needs.clone());
        return;
    }
    let what = |kind: OutboxKind| match kind {
        OutboxKind::Prompt => "the prompt",
        OutboxKind::Handoff => "the failure handoff",
        OutboxKind::Followup => "the follow-up",
        OutboxKind::Message => "the person's message",
        OutboxKind::Challenge => "the challenge",
        OutboxKind::Review => "the review request",
    };
    // Where to type: the recorded conversation, else a new chat in the repository's Project.
    let send = |kind: OutboxKind| match &state.conversation_url {
        Some(url) => format!(
            "Type {} (text) into the cycle's ChatGPT conversation {url}, submit it, then record it with the command.",
            what(kind)
        ),
        None if kind == OutboxKind::Prompt => format!(
            "Open a new chat inside the repository's ChatGPT Project (check or establish it first: `forgeloop project lookup`/`bind`/`attach`), type {} (text), submit it, then record it with the command.",
            what(kind)
        ),
        None => format!(
            "Type {} (text) into the cycle's ChatGPT conversation ({}), submit it, then record it with the command.",
            what(kind),
            state.task_space
        ),
    };
    let attach_hint = match (&state.conversation_url, state.effective_repository()) {
        (Some(_), _) => String::new(),
        (None, repository) => format!(
            " The cycle records no conversation URL yet: attach the chat's URL with `forgeloop project attach --repository {} --state {state_ref} --conversation-url <URL>`.",
            repository.as_deref().unwrap_or("OWNER/REPO")
        ),
    };
    let reported_pr = state.last_reply.as_ref().filter(|r| r.class == ReplyClass::PrFound).and_then(|r| r.pr.clone());
    // The person corrected the commands after a failed run (its handoff was withdrawn): the
    // tested PR runs again with them, whoever reported it.
    let rerun_pr = state
        .pr_ref
        .clone()
        .filter(|_| commands_changed_since_failure(state) || machine::accepted_since_last_run(state));
    let reported_pr = reported_pr.or(rerun_pr);
    match &state.outbox {
        None if withdrawn_and_waiting(state) => {
            let withdrawn = state.withdrawn.as_ref().map(|w| (what(w.kind), w.why.as_str(), w.at.as_str()));
            let (kind, why, at) = withdrawn.unwrap_or_default();
            step.action = Action::WaitForHuman;
            step.explanation = format!(
                "The pending {kind} was taken out of the outbox unsent at {at} ({why}) and nothing replaced it. Send WebGPT nothing; wait for the person: they run the PR again, correct the commands, or put their own words in the outbox (`forgeloop say`)."
            );
            step.command = cmd(&["forgeloop", "wait", "--state", state_ref]);
        }
        None if reported_pr.is_some() => {
            let pr = reported_pr.unwrap_or_default();
            step.action = Action::Run;
            let mut command = vec!["forgeloop", "forge", "--pr", &pr, "--state", state_ref, "--post-comment"];
            if state.commands.is_none() {
                command.extend(["--commands-json", "COMMANDS.json"]);
                let proposal = validation_commands(state);
                let setup = setup_proposal(&proposal.setup, lockfiles);
                let setup_hint = match (setup.is_empty(), lockfiles.is_empty()) {
                    (true, _) => "",
                    (false, true) => {
                        " proposed_setup holds the Validation's install commands: they go in the file's \"setup\" (run first, through the person's network allowlist; the tests then run without network)."
                    }
                    (false, false) => {
                        " proposed_setup holds setup commands (the Validation's install commands, then installs for the lockfiles in `lockfiles`, as forgeloop last fetched the repository): they go in the file's \"setup\" (run first, through the person's network allowlist; the tests then run without network)."
                    }
                };
                step.explanation = if proposal.commands.is_empty() {
                    format!(
                        "Test {pr}, the PR WebGPT reported, with the project's commands file (replace COMMANDS.json): argv arrays for the commands the brief's Validation asks for.{setup_hint}"
                    )
                } else {
                    format!(
                        "Test {pr}, the PR WebGPT reported, with a commands file (replace COMMANDS.json). proposed_commands holds the commands the brief's Validation names in backticks, split into argv arrays (never run through a shell): check them, write them to the file's \"commands\", then run the command.{setup_hint}"
                    )
                };
                step.proposed_commands = (!proposal.commands.is_empty()).then_some(proposal.commands);
                if !setup.is_empty() {
                    step.lockfiles = lockfiles.to_vec();
                    step.proposed_setup = Some(setup);
                }
                step.not_proposed = proposal.not_proposed;
            } else if commands_changed_since_failure(state) {
                step.explanation = format!(
                    "The person corrected the commands after the last run of {pr} failed: run it again with them (the same head is a new test). Send WebGPT nothing about the earlier failure; the failure handoff was withdrawn."
                );
            } else {
                step.explanation =
                    format!("Test {pr}, the PR WebGPT reported (the cycle's stored commands are reused).");
            }
            step.command = cmd(&command);
            step.pr = Some(pr.clone());
        }
        Some(outbox) if outbox.sent_at.is_none() => {
            step.conversation_url = state.conversation_url.clone();
            step.action = Action::Send;
            step.explanation = send(outbox.kind);
            step.text = Some(outbox.text.clone());
            step.text_sha256 = Some(outbox.sha256.clone());
            step.command = cmd(&["forgeloop", "sent", "--state", state_ref]);
        }
        Some(outbox) => {
            step.conversation_url = state.conversation_url.clone();
            step.action = Action::WaitForReply;
            step.waiting_since = outbox.sent_at.clone();
            let chat = match &state.conversation_url {
                Some(url) => format!(" in the cycle's ChatGPT conversation {url}"),
                None => format!(" in the cycle's ChatGPT conversation ({})", state.task_space),
            };
            step.explanation = format!(
                "Waiting for WebGPT's reply{chat} to {} since {}. When the reply is finished, save it to a file and classify it with the command.{attach_hint}",
                what(outbox.kind),
                outbox.sent_at.as_deref().unwrap_or("?")
            );
            step.command = cmd(&["forgeloop", "reply", "--state", state_ref, "--file", "REPLY.txt"]);
        }
        None => match crate::domain::machine::reference_message(state) {
            // A reference-tool state: no outbox yet, the text is in its old fields. `sent` (or
            // `next` in the CLI) gives it an outbox first, so the command below never refuses.
            Some((kind, text)) => {
                step.conversation_url = state.conversation_url.clone();
                step.action = Action::Send;
                step.explanation = send(kind);
                step.text = Some(text.to_owned());
                step.text_sha256 = Some(super::state::sha256_hex(text.as_bytes()));
                step.command = cmd(&["forgeloop", "sent", "--state", state_ref]);
            }
            None => {
                step.explanation = format!(
                    "Stop and report {}: the cycle has no message to send and no reported PR to test. Test the PR WebGPT opened with `forgeloop forge --pr <PR> --state {state_ref} --commands-json <file>`, or start a new cycle.",
                    state.status
                );
            }
        },
    }
}

/// The last run failed and the stored commands are not the ones it ran (`forgeloop commands`
/// since): the next run is a new test, not a fix for WebGPT to make.
fn commands_changed_since_failure(state: &CycleState) -> bool {
    let Some(last) = state.history.last() else { return false };
    let failed = state.report.as_ref().is_some_and(|r| r.status.is_failure() && r.head_sha == last.head_sha);
    let now = state.commands.as_ref().map(|c| c.sha256());
    failed && last.commands_sha256.is_some() && last.commands_sha256 != now
}

/// The PR and the head of its failed run, when the step is to test that PR again (WebGPT
/// reported it after the failure): whether its head moved is worth asking GitHub.
pub fn recheck_target(state: &CycleState) -> Option<(String, String)> {
    let reported = state.last_reply.as_ref().filter(|r| r.class == ReplyClass::PrFound)?.pr.clone()?;
    if state.outbox.is_some() {
        return None;
    }
    recheck_target_after(state, &reported).map(|tested| (reported, tested))
}

/// The head of the failed run of `pr`, when WebGPT reporting `pr` now would mean testing it
/// again (the cycle waits for a fix of that PR, below its cap).
pub fn recheck_target_after(state: &CycleState, pr: &str) -> Option<String> {
    let report = state.report.as_ref().filter(|r| r.status.is_failure())?;
    let same_pr = state.pr_ref.as_deref().is_some_and(|tested| tested.eq_ignore_ascii_case(pr));
    (state.status == Status::AwaitingWebgptFix && !state.cap_reached() && state.needs_network.is_none() && same_pr)
        .then(|| report.head_sha.clone())
}

/// What GitHub said of the PR's head (`current`, or why it could not be read), for a step
/// [`recheck_target`] named: the same head is not tested again.
pub fn note_head(step: &mut NextStep, pr: &str, tested: &str, current: Result<&str, &str>) {
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    match current {
        Ok(head) if head.eq_ignore_ascii_case(tested) => {
            step.head_check = Some(format!("unchanged: {}", short(head)));
            step.explanation = format!(
                "PR_UNCHANGED: the head of {pr} is still {}, which failed as reported; nothing new to test. Run the command: it records that without running the tests or counting an iteration (ALREADY_TESTED) and puts a note for WebGPT in the outbox; then send it.",
                short(head)
            );
        }
        Ok(head) => step.head_check = Some(format!("changed: {} (last tested {})", short(head), short(tested))),
        Err(why) => {
            step.head_check = Some(format!("could not check: {why}"));
            step.explanation.push_str(&format!(
                " (forgeloop could not check the PR's head: {why}. If it is still {}, the command answers ALREADY_TESTED and runs nothing.)",
                short(tested)
            ));
        }
    }
}

/// The Validation's install commands, then the lockfiles' — but not a lockfile's when the
/// Validation already installs with that tool (`npm install` over the lockfile's `npm ci`).
fn setup_proposal(validation: &[Vec<String>], lockfiles: &[String]) -> Vec<Vec<String>> {
    let mut setup = validation.to_vec();
    for command in lockfiles::setup_for(lockfiles) {
        let tool = command.first();
        if !setup.iter().any(|s| s.first() == tool) {
            setup.push(command);
        }
    }
    setup
}

/// The commands the brief's Validation names in backticks (a reference-tool state has only
/// the brief's text: it is parsed here; a brief that does not parse proposes nothing).
fn validation_commands(state: &CycleState) -> validation::Proposal {
    let parsed;
    let brief = match &state.brief {
        Some(brief) => brief,
        None => match Brief::parse(&state.intent_brief) {
            Ok(brief) => {
                parsed = brief;
                &parsed
            }
            Err(_) => return validation::Proposal::default(),
        },
    };
    validation::propose(&brief.validation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::machine::{self, NewCycle};
    use crate::domain::needs_network::NeedsNetwork;

    const BRIEF: &str = "Goal: a\nSuccess: b\nScope: c\nConstraints: d\nValidation: e";

    fn state(await_confirmation: bool) -> CycleState {
        machine::start(
            NewCycle {
                request: "r",
                webgpt_question: Some("q"),
                intent_brief: Some(BRIEF),
                max_iterations: 2,
                task_space: "webgpt-orchestrator:x".into(),
                await_confirmation,
                new_repository: None,
                carry: None,
                protected_paths: Vec::new(),
            },
            "t0",
        )
        .unwrap()
    }

    #[test]
    fn a_cycle_a_connector_drives_has_nothing_for_a_coordinator() {
        let mut s = state(false);
        s.driver = Some("connector:ChatGPT".into());
        let step = next_step(&s, "x");
        assert_eq!(step.action, Action::Stop);
        assert!(step.explanation.contains("connector:ChatGPT"), "{}", step.explanation);
        assert!(step.text.is_none(), "no prompt to type into a chat");
        // What a person does stays the person's.
        let mut waiting = state(true);
        waiting.driver = Some("connector:ChatGPT".into());
        assert_eq!(next_step(&waiting, "x").action, Action::WaitForHuman);
    }

    #[test]
    fn send_then_wait_then_stop() {
        let mut s = state(false);
        let step = next_step(&s, "/c/x.json");
        assert_eq!(step.action, Action::Send);
        assert_eq!(step.text.as_deref(), s.webgpt_prompt.as_deref());
        assert_eq!(step.command.unwrap(), ["forgeloop", "sent", "--state", "/c/x.json"]);
        machine::mark_sent(&mut s, "t1").unwrap();
        let step = next_step(&s, "/c/x.json");
        assert_eq!(step.action, Action::WaitForReply);
        assert_eq!(step.waiting_since.as_deref(), Some("t1"));
        s.status = Status::ReadyToMerge;
        assert_eq!(next_step(&s, "x").action, Action::Stop);
        s.status = Status::AwaitingWebgptFix;
        s.iteration = 2;
        s.pr_ref = Some("acme/widget#3".into());
        let step = next_step(&s, "x");
        assert_eq!(step.action, Action::Run, "running once more records the cap without testing");
        assert!(step.explanation.contains("cap"));
        assert_eq!(step.command.unwrap(), ["forgeloop", "forge", "--pr", "acme/widget#3", "--state", "x"]);
    }

    #[test]
    fn next_action_says_what_next_says_and_where_to_type() {
        let mut s = state(false);
        assert_eq!(next_action(&s, "x"), next_step(&s, "x").explanation);
        assert!(next_action(&s, "x").contains("new chat inside the repository's ChatGPT Project"));
        machine::mark_sent(&mut s, "t1").unwrap();
        let waiting = next_action(&s, "/c/x.json");
        assert!(waiting.contains("--state /c/x.json --conversation-url <URL>"), "{waiting}");
        assert_eq!(next_step(&s, "x").conversation_url, None);
        assert!(waiting.contains("conversation (webgpt-orchestrator:"), "{waiting}");
        s.conversation_url = Some("https://chatgpt.com/g/g-p-x/c/1".into());
        assert!(!next_action(&s, "x").contains("conversation-url"));
        // With several cycles at once, every chat step names its chat.
        let step = next_step(&s, "x");
        assert_eq!(
            (step.action, step.conversation_url.as_deref()),
            (Action::WaitForReply, Some("https://chatgpt.com/g/g-p-x/c/1"))
        );
        assert!(step.explanation.contains("reply in the cycle's ChatGPT conversation https://chatgpt.com/g/g-p-x/c/1"));
        s.status = Status::ReadyToMerge;
        assert!(next_action(&s, "x").contains("Do not merge"));
        s.status = Status::BlockedMaxIterations;
        assert!(next_action(&s, "x").contains("BLOCKED_MAX_ITERATIONS"));
    }

    fn reported(validation: &str) -> CycleState {
        let brief = format!("Goal: a\nSuccess: b\nScope: c\nConstraints: d\nValidation: {validation}");
        let mut s = machine::start(
            NewCycle {
                request: "r",
                webgpt_question: Some("q"),
                intent_brief: Some(&brief),
                max_iterations: 2,
                task_space: "webgpt-orchestrator:x".into(),
                await_confirmation: false,
                new_repository: None,
                carry: None,
                protected_paths: Vec::new(),
            },
            "t0",
        )
        .unwrap();
        s.outbox = None;
        s.last_reply = Some(crate::domain::state::LastReply {
            class: ReplyClass::PrFound,
            pr: Some("acme/widget#3".into()),
            reason: "r".into(),
            sha256: String::new(),
            at: "t1".into(),
            overridden: false,
            contradiction: None,
        });
        s
    }

    #[test]
    fn the_first_run_proposes_the_validation_commands_as_argv() {
        let s = reported("run `cargo test --workspace`, `pytest -k 'not slow'` and `npm test | tee t.log`.");
        let step = next_step(&s, "x");
        assert_eq!(step.action, Action::Run);
        assert_eq!(
            step.proposed_commands,
            Some(vec![
                vec!["cargo".to_owned(), "test".into(), "--workspace".into()],
                vec!["pytest".to_owned(), "-k".into(), "not slow".into()],
            ])
        );
        assert_eq!(step.not_proposed.len(), 1);
        assert_eq!(step.not_proposed[0].text, "npm test | tee t.log");
        assert!(step.explanation.contains("proposed_commands"), "{}", step.explanation);
        // Nothing in backticks: nothing proposed; stored commands: nothing to propose.
        assert_eq!(next_step(&reported("run the test suite"), "x").proposed_commands, None);
        let mut stored = s.clone();
        stored.commands = Some(crate::domain::commands::CommandsProfile::of(Vec::new()));
        let step = next_step(&stored, "x");
        assert_eq!((step.proposed_commands, step.not_proposed.len()), (None, 0));
    }

    #[test]
    fn the_first_run_proposes_setup_from_the_validation_and_the_lockfiles() {
        let s = reported("`npm install` then `npm test`");
        let lockfiles = vec!["package-lock.json".to_owned(), "requirements.txt".to_owned()];
        let step = next_step_knowing(&s, "x", &lockfiles);
        // The Validation's own npm install wins over the lockfile's npm ci.
        assert_eq!(
            step.proposed_setup,
            Some(vec![
                vec!["npm".to_owned(), "install".into()],
                vec!["python3".to_owned(), "-m".into(), "venv".into(), ".venv".into()],
                vec![".venv/bin/pip".to_owned(), "install".into(), "-r".into(), "requirements.txt".into()],
            ])
        );
        assert_eq!(step.proposed_commands, Some(vec![vec!["npm".to_owned(), "test".into()]]));
        assert_eq!(step.lockfiles, lockfiles);
        assert!(step.explanation.contains("proposed_setup"), "{}", step.explanation);
        // No lockfiles, no install in the Validation: no setup proposed.
        let step = next_step_knowing(&reported("`npm test`"), "x", &[]);
        assert_eq!((step.proposed_setup, step.lockfiles.len()), (None, 0));
        assert!(!step.explanation.contains("proposed_setup"));
    }

    fn spec(argv: &[&str]) -> crate::domain::commands::CommandSpec {
        crate::domain::commands::CommandSpec {
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            timeout_s: None,
            env: Default::default(),
        }
    }

    /// A run of acme/widget#3 refused the registries, not yet allowed.
    fn refused_registries(lockfiles: Vec<String>) -> NeedsNetwork {
        NeedsNetwork {
            pr: "acme/widget#3".into(),
            head_sha: "a".repeat(40),
            phase: "test".into(),
            allow: vec!["registries".into()],
            sign: None,
            refused_by_policy: Vec::new(),
            config: String::new(),
            lockfiles,
            allowed_at: None,
            decided_by: None,
            at: "t2".into(),
        }
    }

    #[test]
    fn a_refusal_by_policy_is_named_and_nothing_is_proposed() {
        let mut s = reported("`pytest`");
        s.needs_network = Some(NeedsNetwork {
            allow: Vec::new(),
            refused_by_policy: vec!["169.254.169.254:80".into()],
            ..refused_registries(Vec::new())
        });
        let step = next_step(&s, "x");
        assert_eq!(step.action, Action::WaitForHuman);
        assert!(step.explanation.contains("refused by policy 169.254.169.254:80"), "{}", step.explanation);
        assert!(step.explanation.contains("by hand") && !step.explanation.contains("one key"), "{}", step.explanation);
        let mut state = s.clone();
        let refusal = crate::domain::machine::network_allowed(&mut state, "t3").unwrap_err();
        assert!(refusal.hint.contains("refused by policy only (169.254.169.254:80)"), "{}", refusal.hint);
    }

    #[test]
    fn needs_network_proposes_setup_from_the_run_s_lockfiles_unless_the_commands_have_one() {
        let mut s = reported("`npm test`");
        s.commands = Some(crate::domain::commands::CommandsProfile::of(vec![spec(&["npm", "test"])]));
        s.needs_network = Some(refused_registries(vec!["package-lock.json".into()]));
        let step = next_step(&s, "x");
        assert_eq!(step.action, Action::WaitForHuman);
        assert_eq!(step.proposed_setup, Some(vec![vec!["npm".to_owned(), "ci".into()]]));
        assert!(step.explanation.contains("--commands-json"), "{}", step.explanation);
        if let Some(commands) = &mut s.commands {
            commands.setup = vec![spec(&["npm", "ci"])];
        }
        assert_eq!(next_step(&s, "x").proposed_setup, None, "the commands install first already");
        // The person allowed the hosts: run again, no question to ask.
        machine::network_allowed(&mut s, "t3").unwrap();
        let step = next_step(&s, "x");
        assert_eq!(step.action, Action::Run);
        assert!(
            step.explanation.contains("The person allowed registries for acme/widget at t3"),
            "{}",
            step.explanation
        );
        assert_eq!(step.command.unwrap()[..4], ["forgeloop", "forge", "--pr", "acme/widget#3"]);
    }

    #[test]
    fn every_status_has_an_answer() {
        for status in Status::ALL {
            let mut s = state(false);
            s.status = status;
            let step = next_step(&s, "x");
            assert!(!step.explanation.is_empty(), "{status}");
            assert_eq!(step.status, status);
        }
        assert_eq!(next_step(&state(true), "x").action, Action::WaitForHuman);
    }

    #[test]
    fn a_cycle_waits_for_a_person_exactly_when_next_says_so() {
        let mut s = reported("`npm test`");
        s.commands = Some(crate::domain::commands::CommandsProfile::of(vec![spec(&["npm", "test"])]));
        let mut cases: Vec<CycleState> = Status::ALL
            .iter()
            .map(|status| {
                let mut one = s.clone();
                one.status = *status;
                one
            })
            .collect();
        let mut refused = s.clone();
        refused.needs_network = Some(refused_registries(Vec::new()));
        let mut allowed = refused.clone();
        machine::network_allowed(&mut allowed, "t3").unwrap();
        cases.extend([state(true), refused.clone(), allowed]);
        for case in &cases {
            let says = next_step(case, "x").action == Action::WaitForHuman;
            assert_eq!(waits_for_person(case), says, "{} {:?}", case.status, case.needs_network);
        }
        // A cycle a remote client drives: its `next` says stop, but the person still owes it
        // the confirmation or the hosts.
        for mut driven in [state(true), refused] {
            driven.driver = Some("connector:ChatGPT".into());
            assert!(waits_for_person(&driven), "{}", driven.status);
        }
    }
}

#[cfg(test)]
mod review_tests {
    use super::*;
    use crate::domain::review_machine::fixtures::*;
    use crate::domain::review_machine::{approve_packet, record_packet};

    #[test]
    fn a_packet_with_risks_waits_for_the_persons_yes() {
        let mut state = cycle();
        record_packet(&mut state, packet(true), NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingPacket);
        let mut step = next_step(&state, "s.json");
        assert_eq!(step.action, Action::WaitForHuman);
        approve_packet(&mut state, crate::domain::state::Actor::Human, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptReview);
        step = next_step(&state, "s.json");
        assert_eq!(step.action, Action::Send);
        assert_eq!(step.upload.as_deref(), Some("/home/x/review.txt"));
        assert!(step.text.unwrap().contains("review.txt"));
    }

    #[test]
    fn a_review_waits_for_a_person_exactly_when_next_says_so() {
        let mut cases = vec![cycle()];
        let mut s = cycle();
        attested(&mut s);
        cases.push(s.clone());
        for needs in [true, false] {
            let mut p = cycle();
            record_packet(&mut p, packet(needs), NOW).unwrap();
            cases.push(p);
        }
        cases.push(replied("FINDING 1: [low] a.rs — x"));
        cases.push(replied("NO FINDINGS"));
        for case in &cases {
            let says = next_step(case, "x").action == Action::WaitForHuman;
            assert_eq!(waits_for_person(case), says, "{}", case.status);
        }
    }
}
