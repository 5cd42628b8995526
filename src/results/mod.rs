//! The channel a run's test runners report their per-test results through (issue 57, design
//! §5.2): a verdict rests on what the runner itself said about each test, not only on the
//! command's exit code, which the code under test can force.
//!
//! * **The support directory** ([`Support`]), one per run, beside the run's `tmp` and `home`
//!   (`RunPaths::support`; read-only inside the sandbox, at the same path), filled before the
//!   first command with forgeloop's recorders: `python/sitecustomize.py` (first on
//!   `PYTHONPATH`; it chains to the `sitecustomize` it shadows and records unittest's
//!   `TestResult` events once unittest is imported), `python/forgeloop_results.py` (the
//!   writer), `python/forgeloop_results_pytest.py` (a pytest plugin, through `PYTEST_PLUGINS`)
//!   and `node/forgeloop-reporter.mjs` (a `node --test` reporter, through `NODE_OPTIONS`, beside
//!   the `spec` reporter the log shows). They are in `src/results/support/`.
//! * **The results directory** ([`Channel`]), one per test command, under the run's private
//!   temporary directory (`<tmp>/forgeloop-results/<k>`, made empty before the command; inside
//!   the sandbox under `Plan::tmp_in_sandbox`), named by `FORGELOOP_RESULTS`. Each recording
//!   process appends its records (the format: `domain::test_results::records`) to a file of
//!   its own; after the command they are read, bounded, without following a link, into the
//!   command's results. What the runners print (libtest, nextest, go test, TAP) is read by the
//!   runner's output sink as it streams (`domain::test_results::lines`).
//!
//! Setup commands get none of this: they are not tests.

mod channel;
mod support;

pub use channel::{Channel, IN_TEST_ENV, RESULTS_ENV};
pub use support::Support;

/// Why the channel could not be set up (forgeloop's own trouble, not the PR's).
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The support directory or one of its files could not be written.
    #[error(
        "cannot write forgeloop's test result recorders to {path}: {source}; check free disk space and permissions"
    )]
    Support {
        /// The file or directory.
        path: std::path::PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A command's results directory could not be made.
    #[error("cannot prepare the test results directory {path}: {source}")]
    Directory {
        /// The directory.
        path: std::path::PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
}
