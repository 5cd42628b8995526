//! A request to stop a run held by another process (design §6.6): what the control room or
//! `forgeloop abort` leaves next to the cycle before it signals the holder. The holder reads it,
//! checks it is meant for its own run, and answers by deleting it.

use serde::{Deserialize, Serialize};

use super::state::Actor;

/// What the person asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopAction {
    /// Stop the test; the cycle stays where it was and the run is not an iteration.
    Cancel,
    /// Stop the test and end the cycle (`ABORTED`).
    Abort,
}

impl StopAction {
    /// The word the request file and the journal use.
    pub fn as_str(self) -> &'static str {
        match self {
            StopAction::Cancel => "cancel",
            StopAction::Abort => "abort",
        }
    }
}

/// A stop request (`NAME.d/stop-request.json`) for the process running the cycle's test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopRequest {
    /// Names the request in the holder's journal entry, so the requester can tell its own
    /// request's outcome from a run that ended by itself.
    pub id: String,
    /// Cancel the run, or abort the cycle.
    pub action: StopAction,
    /// Who asked.
    pub by: Actor,
    /// Journaled with the cancellation or the abort.
    pub reason: String,
    /// When (RFC 3339, UTC).
    pub requested_at: String,
    /// The process that asked (journaled, so it can find its answer).
    pub requester_pid: u32,
    /// The run this is meant for: a request left over from an earlier run is ignored.
    pub target_pid: u32,
    /// The iteration the target run will count as.
    pub iteration: u32,
}

impl StopRequest {
    /// Whether the run of `pid` testing `iteration` should obey this request.
    pub fn is_for(&self, pid: u32, iteration: u32) -> bool {
        self.target_pid == pid && self.iteration == iteration
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_obeyed_only_by_the_run_it_names() {
        let request = StopRequest {
            id: "r1".into(),
            action: StopAction::Abort,
            by: Actor::Human,
            reason: "runaway".into(),
            requested_at: "2026-12-01T00:00:00Z".into(),
            requester_pid: 7,
            target_pid: 42,
            iteration: 3,
        };
        assert!(request.is_for(42, 3));
        assert!(!request.is_for(43, 3), "another process");
        assert!(!request.is_for(42, 4), "a later run of the same process");
        let text = serde_json::to_string(&request).unwrap();
        assert!(text.contains(r#""action":"abort""#) && text.contains(r#""by":"human""#), "{text}");
        assert_eq!(serde_json::from_str::<StopRequest>(&text).unwrap(), request);
    }
}
