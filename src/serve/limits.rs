//! Request limits (design §8.1): a minute's window, 60 requests without a grant in all and
//! 600 per grant. A tunnel makes every caller look like 127.0.0.1, so the budget is not per
//! address: an unauthenticated flood can slow pairing for a minute, never reach a tool.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Requests without a grant a minute, all callers together.
pub const UNAUTHENTICATED_PER_MINUTE: u32 = 60;
/// Requests a minute per grant.
pub const PER_GRANT_PER_MINUTE: u32 = 600;

/// The counts of the current minute.
#[derive(Debug)]
pub struct Limits {
    started: Instant,
    unauthenticated: u32,
    per_grant: HashMap<String, u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { started: Instant::now(), unauthenticated: 0, per_grant: HashMap::new() }
    }
}

impl Limits {
    fn roll(&mut self, now: Instant) {
        if now.duration_since(self.started) >= Duration::from_secs(60) {
            *self = Limits { started: now, ..Limits::default() };
        }
    }

    /// Counts a request without a grant; `false` when over the budget.
    pub fn unauthenticated(&mut self, now: Instant) -> bool {
        self.roll(now);
        self.unauthenticated = self.unauthenticated.saturating_add(1);
        self.unauthenticated <= UNAUTHENTICATED_PER_MINUTE
    }

    /// Counts a request of `grant`; `false` when over its budget.
    pub fn granted(&mut self, grant: &str, now: Instant) -> bool {
        self.roll(now);
        let count = self.per_grant.entry(grant.to_owned()).or_insert(0);
        *count = count.saturating_add(1);
        *count <= PER_GRANT_PER_MINUTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_hold_within_a_minute_and_refill_after() {
        let t0 = Instant::now();
        let mut limits = Limits::default();
        for _ in 0..UNAUTHENTICATED_PER_MINUTE {
            assert!(limits.unauthenticated(t0));
        }
        assert!(!limits.unauthenticated(t0));
        assert!(limits.granted("g1", t0), "a grant has its own budget");
        assert!(limits.unauthenticated(t0 + Duration::from_secs(61)));
    }
}
