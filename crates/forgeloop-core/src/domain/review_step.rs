//! `forgeloop next` for a review cycle: which of its steps comes now, and whether it waits for
//! a person (docs/review.md).

use super::review::{Route, Verdict, short};
use super::state::{CycleState, Outbox, OutboxKind};
use super::status::Status;
use super::step::{Action, NextStep};

/// The statuses only a review cycle has (its terminal ones are shared with PR cycles).
pub fn is_review_status(status: Status) -> bool {
    matches!(
        status,
        Status::AwaitingAttestation
            | Status::AwaitingPacket
            | Status::AwaitingWebgptReview
            | Status::AwaitingTriage
            | Status::ReviewDone
    )
}

/// The packet is made and waits for the person's yes.
pub fn packet_waits_for_yes(state: &CycleState) -> bool {
    state.status == Status::AwaitingPacket
        && state
            .review
            .as_ref()
            .and_then(|r| r.packet.as_ref())
            .is_some_and(|p| p.needs_approval && p.approved.is_none())
}

/// `forgeloop next` for a review cycle.
pub fn next_step(state: &CycleState, state_ref: &str, step: &mut NextStep) {
    let Some(review) = state.review.as_ref() else { return };
    let cmd = |parts: &[&str]| Some(parts.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>());
    step.route = review.route.map(Route::as_str);
    step.conversation_url = state.conversation_url.clone();
    let pending = state.outbox.as_ref().filter(|o| o.sent_at.is_none());
    let sent = state.outbox.as_ref().filter(|o| o.sent_at.is_some());
    match state.status {
        Status::AwaitingAttestation => match (&review.attestation, pending, sent) {
            (None, _, _) => {
                step.action = Action::Run;
                step.explanation = format!(
                    "Open the review's ChatGPT conversation and record what you see there: the model picker's text, the reasoning mode if shown, whether the GitHub connector is attached, and the conversation URL. forgeloop answers with a challenge only a reader of {} at {} can answer. Without an attached connector the review goes to a local packet.",
                    review.target.repository,
                    short(&review.target.head)
                );
                step.command = cmd(&[
                    "forgeloop",
                    "attest",
                    "--state",
                    state_ref,
                    "--model",
                    "MODEL",
                    "--connector",
                    "attached",
                    "--conversation-url",
                    "URL",
                ]);
            }
            (Some(_), Some(outbox), _) => send(step, outbox, state_ref, "the challenge"),
            (Some(_), None, Some(outbox)) => {
                step.action = Action::WaitForReply;
                step.waiting_since = outbox.sent_at.clone();
                step.explanation = "The challenge was sent. Wait for the chat's whole answer, save it to a file, and run the command with that file and the conversation it came from.".into();
                step.command = cmd(&["forgeloop", "attest", "--state", state_ref, "--answer", "ANSWER.txt"]);
            }
            _ => stop(step, "The attestation is in an unexpected state; run `forgeloop attest` again."),
        },
        Status::AwaitingPacket => match review.packet.as_ref() {
            Some(packet) if packet.approved.is_none() && packet.needs_approval => {
                step.action = Action::WaitForHuman;
                step.explanation = format!(
                    "The review packet ({} files, {} bytes, about {} tokens, {} risks) needs the person's yes before it leaves the machine: they read `forgeloop review prepare --state {state_ref} --dry-run` and approve on a terminal (`forgeloop review approve`) or in the control room. Send nothing until then.",
                    packet.files, packet.bytes, packet.tokens, packet.risks
                );
                step.command = cmd(&["forgeloop", "wait", "--state", state_ref]);
            }
            _ => {
                step.action = Action::Run;
                let why = review
                    .attestation
                    .as_ref()
                    .and_then(|a| match &a.verdict {
                        Verdict::Invalid { why, .. } => Some(format!(" (the attestation failed: {why})")),
                        _ => None,
                    })
                    .unwrap_or_default();
                step.explanation = format!(
                    "Route LOCAL_BUNDLE{why}: the chat gets the change as a packet. Run the command with --dry-run first to see what it would hold, then without it to make it."
                );
                step.command = cmd(&["forgeloop", "review", "prepare", "--state", state_ref]);
            }
        },
        Status::AwaitingWebgptReview => match (pending, sent) {
            (Some(outbox), _) => {
                if review.route == Some(Route::LocalBundle) && outbox.kind == OutboxKind::Review && review.replies == 0
                {
                    step.upload = review.packet.as_ref().map(|p| p.path.clone());
                }
                let what = if step.upload.is_some() {
                    "the review request with the packet (upload)"
                } else {
                    "the review request"
                };
                send(step, outbox, state_ref, what);
            }
            (None, Some(outbox)) => {
                step.action = Action::WaitForReply;
                step.waiting_since = outbox.sent_at.clone();
                step.explanation = "The review request was sent. Wait for the chat's whole reply, save it to a file, and record it with the command.".into();
                step.command = cmd(&["forgeloop", "review", "reply", "--state", state_ref, "--file", "REPLY.txt"]);
            }
            _ => stop(step, "The review request is missing; run `forgeloop review show` and tell the person."),
        },
        Status::AwaitingTriage => {
            let open: Vec<String> = review.untriaged().map(|f| f.number.to_string()).collect();
            step.action = Action::WaitForHuman;
            step.explanation = format!(
                "Findings {} wait for a decision: FIX, DEFER, DISMISS or QUESTION (with the question as --note), by the person or with their words (`forgeloop triage --state {state_ref} --finding N --as DECISION`, or the control room's Review tab). Send nothing meanwhile.",
                open.join(", ")
            );
            step.command = cmd(&["forgeloop", "wait", "--state", state_ref]);
        }
        Status::ReviewDone => {
            step.action = Action::Done;
            let fixes = review.fixes().count();
            step.explanation = if fixes == 0 {
                "The review is done: every finding is triaged and nothing is to be fixed.".into()
            } else {
                format!(
                    "The review is done: {fixes} finding(s) are to be fixed. `forgeloop forge --request-from-review {state_ref}` starts a PR cycle for them; `forgeloop review show --state {state_ref}` lists them for a local agent."
                )
            };
        }
        _ => {}
    }
}

fn send(step: &mut NextStep, outbox: &Outbox, state_ref: &str, what: &str) {
    step.action = Action::Send;
    step.explanation = match &step.conversation_url {
        Some(url) => format!(
            "Type {what} (text) into the review's conversation {url}, submit it, then record it with the command."
        ),
        None => {
            format!("Type {what} (text) into the review's conversation, submit it, then record it with the command.")
        }
    };
    step.text = Some(outbox.text.clone());
    step.text_sha256 = Some(outbox.sha256.clone());
    step.command = Some(vec!["forgeloop".into(), "sent".into(), "--state".into(), state_ref.into()]);
}

fn stop(step: &mut NextStep, why: &str) {
    step.action = Action::Stop;
    step.explanation = why.into();
}
