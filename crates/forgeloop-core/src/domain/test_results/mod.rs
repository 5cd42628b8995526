//! The test runners' own per-test results (issue 57, design §5.2): a pass rests on them, not
//! on exit codes alone, since the code under test can end the process with exit 0 before or
//! instead of failing. Pure: what the runners said arrives as text (the records forgeloop's
//! recorders write, the lines the runners print), and what it means is decided here.
//!
//! * [`model`]: a command's results ([`CommandResults`]: runners, each test's outcome, runs
//!   begun and ended, a first-failure stop, totals), bounded and serialisable;
//! * [`collect`]: gathering them ([`Collector`]: retries, duplicates, unfinished tests);
//! * [`records`]: the recorders' JSONL format (version 1) and its reader;
//! * [`lines`]: the output formats read as they stream ([`OutputParser`]: libtest, nextest,
//!   go test, TAP);
//! * [`ids`]: test ids as they are compared;
//! * [`judge`](mod@judge): the merge's results against the base's ([`Evidence`]);
//! * [`tripwire`]: forgeloop's own test of the test framework.

pub mod collect;
mod gotest;
pub mod ids;
pub mod judge;
mod libtest;
pub mod lines;
pub mod model;
mod nextest;
pub mod records;
mod tap;
pub mod tripwire;

pub use collect::{Collector, Reported};
pub use judge::{CommandEvidence, Evidence, Finding, NamedTest, Why, judge, judge_edited};
pub use lines::OutputParser;
pub use model::{CommandResults, Counts, Outcome, Processes, RanDigest, RunResults, Runner, Test, Totals};
pub use records::RecordReader;
pub use tripwire::Tripwire;
