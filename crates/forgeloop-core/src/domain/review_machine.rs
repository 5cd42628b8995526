//! Review cycles' transitions (docs/review.md): start, attest, route, packet, reply, triage.
//! Each refuses what its status does not allow, as `machine` does for PR cycles.

use serde_json::Map;

use super::challenge::{Judged, Question};
use super::findings::{self, ParsedReview};
use super::machine::Refusal;
use super::review::{
    Approval, Attestation, Decision, Finding, Fixed, Packet, Review, Route, Seen, Target, Triage, Verdict, describe,
    short,
};
use super::state::{Actor, CycleState, Outbox, OutboxKind, SCHEMA_VERSION};
use super::status::Status;
/// What `review start` needs.
#[derive(Debug, Clone)]
pub struct NewReview {
    /// The change.
    pub target: Target,
    /// The person's question, if any.
    pub question: Option<String>,
    /// The browser conversation key.
    pub task_space: String,
}

/// Starts a review cycle: it waits for the connector's attestation first.
pub fn start(input: NewReview, now: &str) -> CycleState {
    let question = input.question.map(|q| q.trim().to_owned()).filter(|q| !q.is_empty());
    let request = format!("Review {} {}", input.target.repository, describe(&input.target));
    CycleState {
        schema_version: SCHEMA_VERSION,
        status: Status::AwaitingAttestation,
        request,
        intent_brief: String::new(),
        webgpt_question: question.clone().unwrap_or_default(),
        webgpt_question_proposed: false,
        pr_ref: input.target.pr.clone(),
        iteration: 0,
        max_iterations: super::state::DEFAULT_MAX_ITERATIONS,
        task_space: input.task_space,
        next_action: String::new(),
        webgpt_prompt: None,
        report: None,
        webgpt_handoff: None,
        repository: Some(input.target.repository.clone()),
        driver: None,
        project_url: None,
        project_name: None,
        conversation_url: None,
        created_at: Some(now.to_owned()),
        updated_at: Some(now.to_owned()),
        brief: None,
        brief_confirmation: None,
        head_sha: Some(input.target.head.clone()),
        commands: None,
        protected_paths: Vec::new(),
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
        new_repository: None,
        predecessor: None,
        successor: None,
        review: Some(Review {
            target: input.target,
            question,
            route: None,
            attestation: None,
            packet: None,
            findings: Vec::new(),
            unparsed: Vec::new(),
            replies: 0,
        }),
        dispute: None,
        accepted_tests: Vec::new(),
        extra: Map::new(),
    }
}

fn refuse(state: &CycleState, action: &'static str, hint: impl Into<String>) -> Refusal {
    Refusal { status: state.status, action, hint: hint.into() }
}

fn review_mut<'a>(state: &'a mut CycleState, action: &'static str) -> Result<&'a mut Review, Refusal> {
    let status = state.status;
    state.review.as_mut().ok_or_else(|| Refusal {
        status,
        action,
        hint: "this is not a review cycle (start one with `forgeloop review start`)".into(),
    })
}

/// Records what the agent saw and the challenge to send. A connector that is not attached
/// cannot be proven: the cycle goes to the packet at once.
pub fn record_attestation(
    state: &mut CycleState,
    seen: Seen,
    questions: Vec<Question>,
    challenge_text: String,
    expires_at: String,
    now: &str,
) -> Result<(), Refusal> {
    if !matches!(state.status, Status::AwaitingAttestation | Status::AwaitingPacket) {
        return Err(refuse(state, "attesting the connector", "the review request was already issued"));
    }
    let review = review_mut(state, "attesting the connector")?;
    let target = review.target.clone();
    let attached = seen.connector_attached;
    let verdict = match (attached, questions.is_empty()) {
        (false, _) => Verdict::Invalid { at: now.to_owned(), why: "the GitHub connector is not attached".into() },
        (true, true) => {
            Verdict::Invalid { at: now.to_owned(), why: "the commit has no file a challenge can ask about".into() }
        }
        (true, false) => Verdict::Pending,
    };
    let conversation = seen.conversation_url.clone();
    review.attestation = Some(Attestation {
        seen,
        repository: target.repository,
        commit: target.head,
        questions,
        recorded_at: now.to_owned(),
        expires_at,
        verdict: verdict.clone(),
        judged: Vec::new(),
    });
    state.conversation_url = Some(conversation);
    state.updated_at = Some(now.to_owned());
    if verdict == Verdict::Pending {
        state.status = Status::AwaitingAttestation;
        state.outbox = Some(Outbox::new(OutboxKind::Challenge, challenge_text, now));
        state.withdrawn = None;
    } else {
        go_local(state);
    }
    Ok(())
}

fn go_local(state: &mut CycleState) {
    if let Some(review) = state.review.as_mut() {
        review.route = Some(Route::LocalBundle);
    }
    state.status = Status::AwaitingPacket;
    state.outbox = None;
}

/// Records the judgement of the challenge's answer. `from` is the conversation the answer was
/// read in: an answer from another conversation proves nothing about this one.
pub fn judge_attestation(
    state: &mut CycleState,
    judged: Vec<Judged>,
    passes: bool,
    from: &str,
    now: &str,
) -> Result<Verdict, Refusal> {
    let sent = state.outbox.as_ref().is_some_and(|o| o.kind == OutboxKind::Challenge && o.sent_at.is_some());
    let pending =
        state.review.as_ref().and_then(|r| r.attestation.as_ref()).is_some_and(|a| a.verdict == Verdict::Pending);
    if state.status != Status::AwaitingAttestation || !pending {
        return Err(refuse(state, "checking a challenge answer", "no challenge is waiting for its answer"));
    }
    if !sent {
        return Err(refuse(
            state,
            "checking a challenge answer",
            "the challenge was not recorded as sent: type it into the chat, then run `forgeloop sent`",
        ));
    }
    let review = review_mut(state, "checking a challenge answer")?;
    let target = review.target.clone();
    let question = review.question.clone();
    let Some(attestation) = review.attestation.as_mut() else {
        return Err(refuse(state, "checking a challenge answer", "no challenge was issued"));
    };
    let wrong = judged.iter().filter(|j| !j.correct).count();
    let mut verdict = if attestation.seen.conversation_url != from {
        Verdict::Invalid {
            at: now.to_owned(),
            why: format!(
                "the answer came from another conversation ({from}), not the attested {}",
                attestation.seen.conversation_url
            ),
        }
    } else if passes {
        Verdict::Valid { at: now.to_owned() }
    } else if judged.is_empty() || wrong == judged.len() && judged.iter().all(|j| j.given.is_none()) {
        Verdict::Invalid {
            at: now.to_owned(),
            why: "the chat did not answer the challenge (or could not read the commit)".into(),
        }
    } else {
        Verdict::Invalid {
            at: now.to_owned(),
            why: format!("{wrong} of {} answers do not match the commit {}", judged.len(), short(&target.head)),
        }
    };
    attestation.judged = judged;
    attestation.verdict = verdict.clone();
    if matches!(verdict, Verdict::Valid { .. }) {
        let conversation = attestation.seen.conversation_url.clone();
        let mode = attestation.seen.mode.clone();
        if let Some(why) = attestation.invalid_for(&conversation, mode.as_deref(), &target, now) {
            verdict = Verdict::Invalid { at: now.to_owned(), why };
            attestation.verdict = verdict.clone();
        }
    }
    state.updated_at = Some(now.to_owned());
    if matches!(verdict, Verdict::Valid { .. }) {
        if let Some(review) = state.review.as_mut() {
            review.route = Some(Route::Connector);
        }
        let text = request_text(&target, question.as_deref(), Route::Connector, None);
        issue(state, OutboxKind::Review, text, now);
    } else {
        go_local(state);
    }
    Ok(verdict)
}

fn issue(state: &mut CycleState, kind: OutboxKind, text: String, now: &str) {
    state.outbox = Some(Outbox::new(kind, text, now));
    state.withdrawn = None;
    state.status = Status::AwaitingWebgptReview;
}

/// Whether a packet may be made now: the cycle routes to the packet (no valid attestation), or
/// a person wants one anyway before the request is sent.
pub fn can_prepare(state: &CycleState) -> Result<(), Refusal> {
    let review = state.review.as_ref().ok_or_else(|| refuse(state, "making a review packet", "not a review cycle"))?;
    match state.status {
        Status::AwaitingPacket => Ok(()),
        Status::AwaitingAttestation if review.attestation.is_none() => Ok(()),
        _ => Err(refuse(
            state,
            "making a review packet",
            "the packet replaces a connector that is not proven; this review already has its request",
        )),
    }
}

/// Records a packet. Without a need for the person's yes, the request that carries it is
/// issued at once; otherwise the cycle waits for them.
pub fn record_packet(state: &mut CycleState, packet: Packet, now: &str) -> Result<(), Refusal> {
    can_prepare(state)?;
    let needs = packet.needs_approval;
    let review = review_mut(state, "making a review packet")?;
    review.route = Some(Route::LocalBundle);
    review.packet = Some(packet);
    state.status = Status::AwaitingPacket;
    state.outbox = None;
    state.updated_at = Some(now.to_owned());
    if !needs {
        issue_packet_request(state, now);
    }
    Ok(())
}

fn issue_packet_request(state: &mut CycleState, now: &str) {
    let Some(review) = state.review.as_ref() else { return };
    let name = review.packet.as_ref().map(|p| file_name(&p.path).to_owned());
    let text = request_text(&review.target, review.question.as_deref(), Route::LocalBundle, name.as_deref());
    issue(state, OutboxKind::Review, text, now);
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// A person's yes to the packet (`by`: the person, or the demo's stand-in as `System`): the
/// request that carries it is issued.
pub fn approve_packet(state: &mut CycleState, by: Actor, now: &str) -> Result<(), Refusal> {
    let waiting = state.review.as_ref().and_then(|r| r.packet.as_ref()).is_some_and(|p| p.approved.is_none());
    if state.status != Status::AwaitingPacket || !waiting {
        return Err(refuse(
            state,
            "approving the packet",
            "no packet waits for a yes (`forgeloop review prepare` makes one)",
        ));
    }
    let review = review_mut(state, "approving the packet")?;
    if let Some(packet) = review.packet.as_mut() {
        packet.approved = Some(Approval { by, at: now.to_owned() });
    }
    issue_packet_request(state, now);
    Ok(())
}

/// Records the reviewer's reply: its findings are numbered after those already recorded.
/// Returns how many findings it added.
pub fn record_findings(state: &mut CycleState, parsed: ParsedReview, now: &str) -> Result<usize, Refusal> {
    let sent = state.outbox.as_ref().is_some_and(|o| o.kind == OutboxKind::Review && o.sent_at.is_some());
    if state.status != Status::AwaitingWebgptReview {
        return Err(refuse(state, "recording the review", "no review request is waiting for its reply"));
    }
    if !sent {
        return Err(refuse(
            state,
            "recording the review",
            "the review request was not recorded as sent: type it into the chat, then run `forgeloop sent`",
        ));
    }
    let review = review_mut(state, "recording the review")?;
    let first = review.findings.len() as u32;
    let added = parsed.findings.len();
    review.findings.extend(parsed.findings.into_iter().map(|f| Finding {
        number: first + f.number,
        severity: f.severity,
        path: f.path,
        line: f.line,
        text: f.text,
        triage: None,
        fixed: None,
    }));
    review.unparsed.extend(parsed.unparsed);
    review.replies += 1;
    state.outbox = None;
    state.updated_at = Some(now.to_owned());
    settle(state, now);
    Ok(added)
}

/// Decides finding `number`. A decision may be changed until the review is done; a `QUESTION`
/// needs its words.
pub fn triage(
    state: &mut CycleState,
    number: u32,
    decision: Decision,
    note: Option<&str>,
    by: Actor,
    now: &str,
) -> Result<(), Refusal> {
    if !matches!(state.status, Status::AwaitingTriage) {
        return Err(refuse(state, "triaging a finding", "findings are triaged once a review reply is recorded"));
    }
    let note = note.map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned);
    if decision == Decision::Question && note.is_none() {
        return Err(refuse(state, "asking about a finding", "give the question to ask with --note"));
    }
    let review = review_mut(state, "triaging a finding")?;
    let count = review.findings.len();
    let Some(finding) = review.findings.iter_mut().find(|f| f.number == number) else {
        let status = state.status;
        return Err(Refusal {
            status,
            action: "triaging a finding",
            hint: format!("there is no finding {number} (this review has {count})"),
        });
    };
    finding.triage = Some(Triage { decision, note, by, at: now.to_owned(), asked: false });
    state.updated_at = Some(now.to_owned());
    settle(state, now);
    Ok(())
}

/// After a reply or a decision: triage waits while a finding has none; then the questions go to
/// the chat as one message; then the review is done.
fn settle(state: &mut CycleState, now: &str) {
    let Some(review) = state.review.as_mut() else { return };
    if review.untriaged().next().is_some() {
        state.status = Status::AwaitingTriage;
        return;
    }
    let questions: Vec<String> = review
        .findings
        .iter_mut()
        .filter_map(|f| {
            let t = f.triage.as_mut().filter(|t| t.decision == Decision::Question && !t.asked)?;
            t.asked = true;
            let note = t.note.clone().unwrap_or_default();
            Some(format!("About FINDING {} ({}): {note}", f.number, f.location()))
        })
        .collect();
    if questions.is_empty() {
        state.status = Status::ReviewDone;
        return;
    }
    let text = format!(
        "Thank you. Questions about your findings:\n\n{}\n\nAnswer each. If an answer changes or adds a finding, write it as a new line `{}`; otherwise write `NO FINDINGS` at the end.",
        questions.join("\n"),
        findings::FORMAT
    );
    issue(state, OutboxKind::Review, text, now);
}

/// Records that `number` (a `FIX`) was fixed by a PR cycle's passing run.
pub fn mark_fixed(state: &mut CycleState, number: u32, fixed: Fixed, now: &str) -> Result<(), Refusal> {
    let status = state.status;
    let review = review_mut(state, "marking a finding fixed")?;
    let finding = review.findings.iter_mut().find(|f| f.number == number);
    let Some(finding) = finding.filter(|f| f.triage.as_ref().is_some_and(|t| t.decision == Decision::Fix)) else {
        return Err(Refusal {
            status,
            action: "marking a finding fixed",
            hint: format!("finding {number} is not triaged FIX"),
        });
    };
    finding.fixed = Some(fixed);
    state.updated_at = Some(now.to_owned());
    Ok(())
}

/// The implementation request of a PR cycle that fixes the review's `FIX` findings.
pub fn fix_request(review: &Review) -> Option<String> {
    let items: Vec<String> = review
        .fixes()
        .map(|f| {
            let note =
                f.triage.as_ref().and_then(|t| t.note.as_deref()).map(|n| format!(" (note: {n})")).unwrap_or_default();
            format!("{}. [{}] {} — {}{note}", f.number, f.severity.as_str(), f.location(), f.text)
        })
        .collect();
    if items.is_empty() {
        return None;
    }
    Some(format!(
        "Fix these review findings on {} at {} (each was checked and accepted locally):\n{}",
        review.target.repository,
        short(&review.target.head),
        items.join("\n")
    ))
}

/// The review request typed into the chat.
pub fn request_text(target: &Target, question: Option<&str>, route: Route, packet: Option<&str>) -> String {
    let what = match &target.pr {
        Some(pr) => format!("pull request {pr}, at head commit {} (base {})", target.head, target.base),
        None => format!("the change {}..{} of {}", target.base, target.head, target.repository),
    };
    let how = match (route, packet) {
        (Route::Connector, _) => format!(
            "Read it through your GitHub connector in {} at exactly commit {} — not from memory or another copy.",
            target.repository, target.head
        ),
        (Route::LocalBundle, Some(name)) => format!(
            "The attached file {name} holds the change (its diff and the changed files at the head, with a manifest); review only what it holds."
        ),
        (Route::LocalBundle, None) => "The change is attached; review only what it holds.".into(),
    };
    let question = question.map(|q| format!("\n\nWhat I want to know most: {q}")).unwrap_or_default();
    format!(
        "Please review {what}. {how} Do not change the repository and do not open a pull request: this is a review only.{question}\n\nWrite each finding on its own line as\n{}\nwhere severity is one of {}, then its explanation. If you find nothing worth changing, write NO FINDINGS.",
        findings::FORMAT,
        findings::severity_words()
    )
}

/// Review cycles at each step, for this module's tests and `next`'s.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::domain::findings::parse_findings;
    use crate::domain::machine::mark_sent;

    pub(crate) const NOW: &str = "2026-12-05T10:00:00Z";
    pub(crate) const LATER: &str = "2026-12-05T12:00:00Z";
    pub(crate) const HEAD: &str = "1111111111111111111111111111111111111111";
    pub(crate) const BASE: &str = "2222222222222222222222222222222222222222";
    pub(crate) const CHAT: &str = "https://chatgpt.com/c/abc";

    pub(crate) fn cycle() -> CycleState {
        let target = Target {
            repository: "o/r".into(),
            base: BASE.into(),
            head: HEAD.into(),
            pr: Some("o/r#1".into()),
            range: None,
        };
        start(NewReview { target, question: Some("is it safe?".into()), task_space: "ts".into() }, NOW)
    }

    pub(crate) fn seen(attached: bool) -> Seen {
        Seen {
            surface: "chatgpt-web".into(),
            model: "GPT-5 Pro".into(),
            mode: None,
            connector_attached: attached,
            conversation_url: CHAT.into(),
        }
    }

    pub(crate) fn attested(state: &mut CycleState) {
        let q = vec![Question::BlobId { path: "a.rs".into() }];
        record_attestation(state, seen(true), q, "challenge".into(), LATER.into(), NOW).unwrap();
        mark_sent(state, NOW).unwrap();
    }

    pub(crate) fn packet(needs: bool) -> Packet {
        Packet {
            path: "/home/x/review.txt".into(),
            manifest: "/home/x/manifest.json".into(),
            sha256: "ab".into(),
            files: 2,
            bytes: 100,
            tokens: 25,
            risks: u32::from(needs),
            needs_approval: needs,
            approved: None,
            prepared_at: NOW.into(),
        }
    }

    pub(crate) fn replied(text: &str) -> CycleState {
        let mut state = cycle();
        record_packet(&mut state, packet(false), NOW).unwrap();
        mark_sent(&mut state, NOW).unwrap();
        record_findings(&mut state, parse_findings(text), NOW).unwrap();
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::challenge::Question;
    use crate::domain::findings::parse_findings;
    use crate::domain::machine::mark_sent;
    use crate::domain::review_machine::fixtures::*;

    fn judged(correct: bool) -> Vec<Judged> {
        vec![Judged {
            number: 1,
            question: Question::BlobId { path: "a.rs".into() },
            given: Some("x".into()),
            correct,
            why: if correct { "correct".into() } else { "wrong blob id".into() },
        }]
    }

    #[test]
    fn a_passed_challenge_routes_to_the_connector_and_issues_the_request() {
        let mut state = cycle();
        attested(&mut state);
        let verdict = judge_attestation(&mut state, judged(true), true, CHAT, NOW).unwrap();
        assert!(matches!(verdict, Verdict::Valid { .. }));
        assert_eq!(state.status, Status::AwaitingWebgptReview);
        assert_eq!(state.review.as_ref().unwrap().route, Some(Route::Connector));
        let outbox = state.outbox.as_ref().unwrap();
        assert_eq!(outbox.kind, OutboxKind::Review);
        assert!(outbox.text.contains(HEAD) && outbox.text.contains("GitHub connector"));
        assert!(outbox.text.contains("is it safe?"));
    }

    #[test]
    fn a_wrong_or_foreign_answer_routes_to_the_packet() {
        let mut state = cycle();
        attested(&mut state);
        judge_attestation(&mut state, judged(false), false, CHAT, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingPacket);
        assert_eq!(state.review.as_ref().unwrap().route, Some(Route::LocalBundle));
        let mut other = cycle();
        attested(&mut other);
        let verdict = judge_attestation(&mut other, judged(true), true, "https://chatgpt.com/c/other", NOW).unwrap();
        assert!(matches!(verdict, Verdict::Invalid { why, .. } if why.contains("another conversation")));
        assert_eq!(other.status, Status::AwaitingPacket);
    }

    #[test]
    fn an_expired_attestation_is_not_valid() {
        let mut state = cycle();
        attested(&mut state);
        judge_attestation(&mut state, judged(true), true, CHAT, LATER).unwrap();
        assert_eq!(state.status, Status::AwaitingPacket);
        let a = state.review.as_ref().unwrap().attestation.clone().unwrap();
        assert!(matches!(a.verdict, Verdict::Invalid { why, .. } if why.contains("expired")));
    }

    #[test]
    fn validity_is_bound_to_conversation_mode_and_commit() {
        let mut state = cycle();
        attested(&mut state);
        judge_attestation(&mut state, judged(true), true, CHAT, NOW).unwrap();
        let review = state.review.clone().unwrap();
        let a = review.attestation.unwrap();
        assert_eq!(a.invalid_for(CHAT, None, &review.target, NOW), None);
        assert!(a.invalid_for("https://chatgpt.com/c/x", None, &review.target, NOW).is_some());
        assert!(a.invalid_for(CHAT, Some("thinking"), &review.target, NOW).is_some());
        let mut other = review.target.clone();
        other.head = BASE.into();
        assert!(a.invalid_for(CHAT, None, &other, NOW).unwrap().contains("not this commit"));
    }

    #[test]
    fn no_connector_goes_straight_to_the_packet() {
        let mut state = cycle();
        record_attestation(&mut state, seen(false), Vec::new(), String::new(), LATER.into(), NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingPacket);
        assert!(state.outbox.is_none());
    }

    #[test]
    fn findings_wait_for_triage_and_questions_go_back_to_the_chat() {
        let mut state = replied("FINDING 1: [high] src/a.rs:3 — unchecked index\nFINDING 2: [low] src/b.rs — naming");
        assert_eq!(state.status, Status::AwaitingTriage);
        triage(&mut state, 1, Decision::Fix, None, Actor::Human, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingTriage);
        assert!(triage(&mut state, 2, Decision::Question, None, Actor::Human, NOW).is_err());
        assert!(triage(&mut state, 9, Decision::Fix, None, Actor::Human, NOW).is_err());
        triage(&mut state, 2, Decision::Question, Some("which names?"), Actor::Agent, NOW).unwrap();
        assert_eq!(state.status, Status::AwaitingWebgptReview);
        let text = &state.outbox.as_ref().unwrap().text;
        assert!(text.contains("FINDING 2") && text.contains("which names?"));
        mark_sent(&mut state, NOW).unwrap();
        record_findings(&mut state, parse_findings("NO FINDINGS"), NOW).unwrap();
        assert_eq!(state.status, Status::ReviewDone);
        let request = fix_request(state.review.as_ref().unwrap()).unwrap();
        assert!(request.contains("src/a.rs:3") && !request.contains("naming"));
    }

    #[test]
    fn no_findings_is_done_at_once_and_nothing_is_fixed_without_a_run() {
        let mut state = replied("NO FINDINGS");
        assert_eq!(state.status, Status::ReviewDone);
        assert!(fix_request(state.review.as_ref().unwrap()).is_none());
        let fixed = Fixed { cycle: "c".into(), pr: "o/r#2".into(), head_sha: HEAD.into(), at: NOW.into() };
        assert!(mark_fixed(&mut state, 1, fixed, NOW).is_err());
    }

    #[test]
    fn a_reply_before_the_request_was_sent_is_refused() {
        let mut state = cycle();
        record_packet(&mut state, packet(false), NOW).unwrap();
        assert!(record_findings(&mut state, parse_findings("NO FINDINGS"), NOW).is_err());
    }
}
