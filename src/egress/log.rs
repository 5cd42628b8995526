//! The proxy's record of a run: one event per destination asked for, with byte counters the
//! open connections keep adding to, so a snapshot taken mid-run is current. Bounded: a run
//! that asks for more than [`MAX_EVENTS`] destinations has the rest counted, not kept.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::domain::egress::NetworkEvent;

/// Events kept per proxy; later ones are only counted ([`EventLog::dropped`]).
pub(super) const MAX_EVENTS: usize = 10_000;

/// Bytes one allowed connection moved, updated as they move.
#[derive(Debug, Default)]
pub(super) struct Counters {
    up: AtomicU64,
    down: AtomicU64,
}

impl Counters {
    pub(super) fn add_up(&self, n: usize) {
        self.up.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub(super) fn add_down(&self, n: usize) {
        self.down.fetch_add(n as u64, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct Entry {
    event: NetworkEvent,
    counters: Arc<Counters>,
}

#[derive(Debug, Default)]
pub(super) struct EventLog {
    entries: Mutex<Vec<Entry>>,
    dropped: AtomicU64,
}

impl EventLog {
    /// Records `event` (its byte fields are ignored) and returns the counters its connection
    /// adds to.
    pub(super) fn record(&self, event: NetworkEvent) -> Arc<Counters> {
        let counters = Arc::new(Counters::default());
        let mut entries = self.lock();
        if entries.len() < MAX_EVENTS {
            entries.push(Entry { event, counters: Arc::clone(&counters) });
        } else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        counters
    }

    pub(super) fn snapshot(&self) -> Vec<NetworkEvent> {
        self.lock()
            .iter()
            .map(|entry| NetworkEvent {
                bytes_up: entry.counters.up.load(Ordering::Relaxed),
                bytes_down: entry.counters.down.load(Ordering::Relaxed),
                ..entry.event.clone()
            })
            .collect()
    }

    pub(super) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// A panic elsewhere while holding the lock leaves whole entries behind: keep using them.
    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(host: &str) -> NetworkEvent {
        NetworkEvent {
            host: host.into(),
            port: 443,
            allowed: true,
            reason: None,
            allow_with: None,
            by_policy: None,
            address: None,
            error: None,
            bytes_up: 99,
            bytes_down: 99,
            phase: "setup".into(),
        }
    }

    #[test]
    fn counters_show_in_snapshots_and_the_log_is_bounded() {
        let log = EventLog::default();
        let counters = log.record(event("a.example"));
        counters.add_up(3);
        counters.add_down(5);
        counters.add_down(5);
        let snapshot = log.snapshot();
        assert_eq!((snapshot[0].bytes_up, snapshot[0].bytes_down), (3, 10), "recorded bytes are the counters'");
        for _ in 1..MAX_EVENTS + 5 {
            log.record(event("b.example"));
        }
        assert_eq!(log.snapshot().len(), MAX_EVENTS);
        assert_eq!(log.dropped(), 5);
    }
}
