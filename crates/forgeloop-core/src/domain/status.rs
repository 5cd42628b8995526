//! Cycle statuses (design §3). The strings are the on-disk contract shared with the
//! reference tool, so they are spelled out explicitly rather than derived.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where a cycle stands (design §3); the order is the one lists show them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// The brief was proposed; a person confirms it before any prompt is issued.
    AwaitingBriefConfirmation,
    /// The prompt was issued; waiting for WebGPT to open a PR.
    AwaitingWebgptPr,
    /// The last run failed and its handoff was issued; waiting for a fix.
    AwaitingWebgptFix,
    /// The last run passed at `head_sha`; a person merges outside forgeloop.
    ReadyToMerge,
    /// A pass a person must look at first (it changed what judges it, its evidence is short,
    /// or the change looks like gaming the tests): a person approves it or answers.
    NeedsReview,
    /// WebGPT says the tests contradict the brief, or its fix failed only on held tests it
    /// corrected: a person decides which is right (issue 57); no fix is asked for meanwhile.
    TestsDisputed,
    /// The iteration cap is reached; only `extend` moves on.
    BlockedMaxIterations,
    /// A second reply without a usable PR, or a second unchanged head (rule 8).
    BlockedNoPr,
    /// WebGPT's GitHub connector was denied access.
    BlockedConnectorDenied,
    /// The coordinator could not use the model it needs in the chat (`block`).
    BlockedModelUnavailable,
    /// The ChatGPT Project or its registry record is unusable.
    BlockedProjectUnavailable,
    /// The Project's source manifest is unusable.
    BlockedProjectSources,
    /// The brief or question is blank or incomplete.
    BlockedDelegationUnconfirmed,
    /// Three runs in a row could not complete (rule 3).
    BlockedInfra,
    /// The PR was closed or merged; it is not tested (rule 5).
    BlockedPrClosed,
    /// Stopped for good.
    Aborted,
    /// Carried on in a successor (`--continue-from`); final.
    Superseded,
    /// A review cycle (docs/review.md): the chat's connector is being attested (a challenge).
    AwaitingAttestation,
    /// A review cycle without a valid attestation: the review packet is made, or awaits the
    /// person's yes.
    AwaitingPacket,
    /// A review cycle: the review request was issued; waiting for WebGPT's findings.
    AwaitingWebgptReview,
    /// A review cycle: findings were recorded; each awaits a decision (`triage`).
    AwaitingTriage,
    /// A review cycle whose every finding is triaged and whose questions are answered.
    ReviewDone,
}

impl Status {
    /// Every status, in declaration order.
    pub const ALL: [Status; 22] = [
        Status::AwaitingBriefConfirmation,
        Status::AwaitingWebgptPr,
        Status::AwaitingWebgptFix,
        Status::ReadyToMerge,
        Status::NeedsReview,
        Status::TestsDisputed,
        Status::BlockedMaxIterations,
        Status::BlockedNoPr,
        Status::BlockedConnectorDenied,
        Status::BlockedModelUnavailable,
        Status::BlockedProjectUnavailable,
        Status::BlockedProjectSources,
        Status::BlockedDelegationUnconfirmed,
        Status::BlockedInfra,
        Status::BlockedPrClosed,
        Status::Aborted,
        Status::Superseded,
        Status::AwaitingAttestation,
        Status::AwaitingPacket,
        Status::AwaitingWebgptReview,
        Status::AwaitingTriage,
        Status::ReviewDone,
    ];

    /// The string state files hold (shared with the reference tool).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::AwaitingBriefConfirmation => "AWAITING_BRIEF_CONFIRMATION",
            Status::AwaitingWebgptPr => "AWAITING_WEBGPT_PR",
            Status::AwaitingWebgptFix => "AWAITING_WEBGPT_FIX",
            Status::ReadyToMerge => "READY_TO_MERGE",
            Status::NeedsReview => "NEEDS_REVIEW",
            Status::TestsDisputed => "TESTS_DISPUTED",
            Status::BlockedMaxIterations => "BLOCKED_MAX_ITERATIONS",
            Status::BlockedNoPr => "BLOCKED_NO_PR",
            Status::BlockedConnectorDenied => "BLOCKED_CONNECTOR_DENIED",
            Status::BlockedModelUnavailable => "BLOCKED_MODEL_UNAVAILABLE",
            Status::BlockedProjectUnavailable => "BLOCKED_PROJECT_UNAVAILABLE",
            Status::BlockedProjectSources => "BLOCKED_PROJECT_SOURCES",
            Status::BlockedDelegationUnconfirmed => "BLOCKED_DELEGATION_UNCONFIRMED",
            Status::BlockedInfra => "BLOCKED_INFRA",
            Status::BlockedPrClosed => "BLOCKED_PR_CLOSED",
            Status::Aborted => "ABORTED",
            Status::Superseded => "SUPERSEDED",
            Status::AwaitingAttestation => "AWAITING_ATTESTATION",
            Status::AwaitingPacket => "AWAITING_PACKET",
            Status::AwaitingWebgptReview => "AWAITING_WEBGPT_REVIEW",
            Status::AwaitingTriage => "AWAITING_TRIAGE",
            Status::ReviewDone => "REVIEW_DONE",
        }
    }

    /// Final statuses never change again; their task space is free for reuse.
    pub fn is_final(self) -> bool {
        matches!(self, Status::Aborted | Status::Superseded | Status::ReviewDone)
    }

    /// A `BLOCKED_*` status: only a person moves it on.
    pub fn is_blocked(self) -> bool {
        self.as_str().starts_with("BLOCKED_")
    }

    /// Blocked statuses a person may lift with `unblock`. The cap is lifted with `extend`
    /// instead, so that raising it is always an explicit number.
    pub fn is_unblockable(self) -> bool {
        self.is_blocked() && self != Status::BlockedMaxIterations
    }

    /// Whether the cycle is waiting for the human rather than for the agent or WebGPT.
    pub fn needs_human(self) -> bool {
        matches!(
            self,
            Status::AwaitingBriefConfirmation
                | Status::ReadyToMerge
                | Status::NeedsReview
                | Status::TestsDisputed
                | Status::AwaitingTriage
        ) || self.is_blocked()
    }

    /// Sort rank for "who needs attention first" (lower comes first).
    pub fn attention_rank(self) -> u8 {
        match self {
            Status::AwaitingBriefConfirmation => 0,
            Status::BlockedMaxIterations | Status::NeedsReview | Status::TestsDisputed | Status::AwaitingTriage => 1,
            s if s.is_blocked() => 2,
            Status::ReadyToMerge => 3,
            Status::AwaitingWebgptFix => 4,
            Status::AwaitingWebgptPr | Status::AwaitingPacket => 5,
            Status::AwaitingAttestation | Status::AwaitingWebgptReview => 5,
            _ => 6,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status string no version of forgeloop writes (the string).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cycle status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL.into_iter().find(|status| status.as_str() == s).ok_or_else(|| UnknownStatus(s.to_owned()))
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_through_its_string() {
        for status in Status::ALL {
            assert_eq!(status.as_str().parse::<Status>(), Ok(status));
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(serde_json::from_str::<Status>(&json).unwrap(), status);
        }
    }

    #[test]
    fn unknown_status_is_an_error_not_a_default() {
        assert!("BLOCKED".parse::<Status>().is_err());
        assert!("awaiting_webgpt_pr".parse::<Status>().is_err());
    }

    #[test]
    fn classification_is_consistent() {
        assert!(Status::BlockedMaxIterations.is_blocked());
        assert!(!Status::BlockedMaxIterations.is_unblockable());
        assert!(Status::BlockedInfra.is_unblockable());
        assert!(Status::Aborted.is_final() && Status::Superseded.is_final());
        assert!(!Status::ReadyToMerge.is_final());
        assert!(Status::ReadyToMerge.needs_human());
        assert!(!Status::AwaitingWebgptFix.needs_human());
    }
}
