//! The names of journal events: one enum, so a writer cannot misspell one and a reader can
//! match every kind exhaustively. They serialise to the strings journals have always held.

/// What a journal line records. Unknown names (a newer forgeloop's) stay readable as text;
/// [`EventKind::parse`] returns `None` for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A cycle was started.
    Created,
    /// The delegation brief was confirmed.
    BriefConfirmed,
    /// The first prompt went into the outbox.
    PromptIssued,
    /// A follow-up asking for a usable PR (or a push) went into the outbox.
    FollowupIssued,
    /// A failed run's handoff went into the outbox.
    HandoffIssued,
    /// The coordinator typed the outbox message into the chat.
    MessageSent,
    /// A reference-tool state's pending message was moved into the outbox.
    OutboxAdopted,
    /// WebGPT's reply was classified and recorded.
    ReplyRecorded,
    /// The status moved (written with every change that moves it).
    StatusChanged,
    /// The cycle was blocked.
    Blocked,
    /// A person lifted a block.
    Unblocked,
    /// A person raised the iteration cap.
    CapExtended,
    /// A person approved a pass that changed protected paths (`NEEDS_REVIEW`).
    Approved,
    /// The cycle was stopped for good.
    Aborted,
    /// A successor took the cycle over (`--continue-from`).
    Superseded,
    /// A test run began.
    RunStarted,
    /// A test run completed and counted an iteration.
    RunFinished,
    /// A test run could not complete (an infra failure).
    RunFailed,
    /// A test run was stopped before its verdict; not counted.
    RunCancelled,
    /// A test run failed for want of network; not counted.
    RunNeedsNetwork,
    /// The run's result was posted on the PR.
    CommentPublished,
    /// Posting the run's result on the PR failed.
    CommentFailed,
    /// A ChatGPT Project was attached to the cycle.
    Attached,
    /// A person allowed a `NEEDS_NETWORK` run's hosts in their config.
    NetworkAllowed,
    /// WebGPT pointed at the head already tested (from `reply` or `forge --pr`): no run.
    PrUnchanged,
    /// A person's (or, with their words, the agent's) message put in the outbox (`say`).
    MessageWritten,
    /// The cycle's stored commands were replaced between runs (`forgeloop commands`).
    CommandsChanged,
    /// A pending message was taken out of the outbox unsent: a person made it moot.
    MessageWithdrawn,
    /// A review cycle was started (`review start`).
    ReviewStarted,
    /// What the agent saw in the browser, with the challenge issued (`attest`).
    AttestationRecorded,
    /// The challenge's answer was checked against the mirror (`attest --answer`).
    AttestationJudged,
    /// A review packet was made (`review prepare`).
    PacketPrepared,
    /// A person said yes to the packet leaving the machine.
    PacketApproved,
    /// The review request (or questions about findings) went into the outbox.
    ReviewRequested,
    /// The reviewer's reply was parsed into findings (`review reply`).
    FindingsRecorded,
    /// A finding was decided (`triage`).
    FindingTriaged,
    /// A `FIX` finding was fixed by a PR cycle's passing run (`review fixed`).
    FindingFixed,
}

impl EventKind {
    /// Every kind, in the order they were introduced.
    pub const ALL: [EventKind; 37] = [
        EventKind::Created,
        EventKind::BriefConfirmed,
        EventKind::PromptIssued,
        EventKind::FollowupIssued,
        EventKind::HandoffIssued,
        EventKind::MessageSent,
        EventKind::OutboxAdopted,
        EventKind::ReplyRecorded,
        EventKind::StatusChanged,
        EventKind::Blocked,
        EventKind::Unblocked,
        EventKind::CapExtended,
        EventKind::Approved,
        EventKind::Aborted,
        EventKind::Superseded,
        EventKind::RunStarted,
        EventKind::RunFinished,
        EventKind::RunFailed,
        EventKind::RunCancelled,
        EventKind::RunNeedsNetwork,
        EventKind::CommentPublished,
        EventKind::CommentFailed,
        EventKind::Attached,
        EventKind::NetworkAllowed,
        EventKind::PrUnchanged,
        EventKind::MessageWritten,
        EventKind::CommandsChanged,
        EventKind::MessageWithdrawn,
        EventKind::ReviewStarted,
        EventKind::AttestationRecorded,
        EventKind::AttestationJudged,
        EventKind::PacketPrepared,
        EventKind::PacketApproved,
        EventKind::ReviewRequested,
        EventKind::FindingsRecorded,
        EventKind::FindingTriaged,
        EventKind::FindingFixed,
    ];

    /// The name written to `events.jsonl` (part of each line's hash: never change one).
    pub const fn as_str(self) -> &'static str {
        match self {
            EventKind::Created => "created",
            EventKind::BriefConfirmed => "brief_confirmed",
            EventKind::PromptIssued => "prompt_issued",
            EventKind::FollowupIssued => "followup_issued",
            EventKind::HandoffIssued => "handoff_issued",
            EventKind::MessageSent => "message_sent",
            EventKind::OutboxAdopted => "outbox_adopted",
            EventKind::ReplyRecorded => "reply_recorded",
            EventKind::StatusChanged => "status_changed",
            EventKind::Blocked => "blocked",
            EventKind::Unblocked => "unblocked",
            EventKind::CapExtended => "cap_extended",
            EventKind::Approved => "approved",
            EventKind::Aborted => "aborted",
            EventKind::Superseded => "superseded",
            EventKind::RunStarted => "run_started",
            EventKind::RunFinished => "run_finished",
            EventKind::RunFailed => "run_failed",
            EventKind::RunCancelled => "run_cancelled",
            EventKind::RunNeedsNetwork => "run_needs_network",
            EventKind::CommentPublished => "comment_published",
            EventKind::CommentFailed => "comment_failed",
            EventKind::Attached => "attached",
            EventKind::NetworkAllowed => "network_allowed",
            EventKind::PrUnchanged => "pr_unchanged",
            EventKind::MessageWritten => "message_written",
            EventKind::CommandsChanged => "commands_changed",
            EventKind::MessageWithdrawn => "message_withdrawn",
            EventKind::ReviewStarted => "review_started",
            EventKind::AttestationRecorded => "attestation_recorded",
            EventKind::AttestationJudged => "attestation_judged",
            EventKind::PacketPrepared => "packet_prepared",
            EventKind::PacketApproved => "packet_approved",
            EventKind::ReviewRequested => "review_requested",
            EventKind::FindingsRecorded => "findings_recorded",
            EventKind::FindingTriaged => "finding_triaged",
            EventKind::FindingFixed => "finding_fixed",
        }
    }

    /// The kind a journal line names; `None` for a name this version does not know.
    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// An event that puts a new message in the outbox for the coordinator to send.
    pub fn issues_message(self) -> bool {
        matches!(
            self,
            EventKind::PromptIssued
                | EventKind::FollowupIssued
                | EventKind::HandoffIssued
                | EventKind::MessageWritten
                | EventKind::AttestationRecorded
                | EventKind::ReviewRequested
        )
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::parse("from_the_future"), None);
    }

    #[test]
    fn names_are_the_ones_existing_journals_hold() {
        let names: Vec<_> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "created",
                "brief_confirmed",
                "prompt_issued",
                "followup_issued",
                "handoff_issued",
                "message_sent",
                "outbox_adopted",
                "reply_recorded",
                "status_changed",
                "blocked",
                "unblocked",
                "cap_extended",
                "approved",
                "aborted",
                "superseded",
                "run_started",
                "run_finished",
                "run_failed",
                "run_cancelled",
                "run_needs_network",
                "comment_published",
                "comment_failed",
                "attached",
                "network_allowed",
                "pr_unchanged",
                "message_written",
                "commands_changed",
                "message_withdrawn",
                "review_started",
                "attestation_recorded",
                "attestation_judged",
                "packet_prepared",
                "packet_approved",
                "review_requested",
                "findings_recorded",
                "finding_triaged",
                "finding_fixed",
            ]
        );
    }
}
