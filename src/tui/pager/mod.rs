//! The pagers: read a run log ([`log`]) or a cached diff ([`diff`]) from disk a window at a
//! time, on the executor's worker, and report in their own event types. They do the I/O the
//! Log and Diff panes (pure state, in `panes/`) ask for.

pub mod diff;
pub mod lines;
pub mod log;
