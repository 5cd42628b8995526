//! The runner's side of the test results channel (issue 57, `crate::results`): the run's
//! support directory, filled before the first command, and for each test command its results
//! directory, its runners' environment, its output's line parser, and what it all gave once the
//! command ended. Setup commands are not tests and get none of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::RunnerError;
use crate::domain::test_results::ids::Renames;
use crate::domain::test_results::{CommandResults, OutputParser};
use crate::results::{Channel, Support};
use crate::sandbox::{Plan, RunPaths};

/// The name of the support directory in a run's directory, beside `tmp` and `home`.
pub const SUPPORT_DIR: &str = "support";

/// A run's channel, when it has directories to put one in.
pub(super) struct Collecting {
    support: Support,
    /// The run's paths with `support` set, for the sandbox (it mounts the directory read-only).
    paths: Option<RunPaths>,
    tmp: PathBuf,
    tmp_inside: PathBuf,
}

impl Collecting {
    /// Fills the support directory: `paths.support`, else `support` beside `paths.tmp`. Sandboxed,
    /// the command sees `tmp` where the plan puts it; unsandboxed (`direct`), at its own path.
    pub(super) fn start(
        sandbox: Option<(&Plan, &RunPaths)>,
        direct: Option<&RunPaths>,
    ) -> Result<Option<Collecting>, RunnerError> {
        let (paths, tmp_inside, sandboxed) = match (sandbox, direct) {
            (Some((plan, paths)), _) => (paths, plan.tmp_in_sandbox(paths), true),
            (None, Some(paths)) => (paths, paths.tmp.clone(), false),
            (None, None) => return Ok(None),
        };
        let dir = match (&paths.support, paths.tmp.parent()) {
            (Some(dir), _) => dir.clone(),
            (None, Some(run)) => run.join(SUPPORT_DIR),
            (None, None) => return Ok(None),
        };
        let support = Support::install(&dir).map_err(|e| RunnerError::Results(e.to_string()))?;
        let tmp = paths.tmp.clone();
        let paths = sandboxed.then(|| RunPaths { support: Some(dir), ..paths.clone() });
        Ok(Some(Collecting { support, paths, tmp, tmp_inside }))
    }

    /// The run's paths for the sandbox, with the support directory.
    pub(super) fn paths(&self) -> Option<&RunPaths> {
        self.paths.as_ref()
    }
}

/// One test command's collection.
pub(super) struct CommandCollect {
    index: usize,
    channel: Option<Channel>,
    notes: Vec<String>,
    pub(super) parser: OutputParser,
}

impl CommandCollect {
    /// Prepares test command `index` (0-based among the test commands): its results directory
    /// emptied and named in `env`, the recorders pointed at it.
    pub(super) fn new(
        collecting: Option<&Collecting>,
        index: usize,
        argv: &[String],
        checkout: &Path,
        env: &mut BTreeMap<String, String>,
    ) -> Result<CommandCollect, RunnerError> {
        let (channel, notes) = match collecting {
            Some(run) => {
                let channel = Channel::prepare(&run.tmp, &run.tmp_inside, index)
                    .map_err(|e| RunnerError::Results(e.to_string()))?;
                let notes = channel.set_env(&run.support, argv, checkout, env);
                (Some(channel), notes)
            }
            None => (None, Vec::new()),
        };
        Ok(CommandCollect { index, channel, notes, parser: OutputParser::new() })
    }

    /// What the command's output and recorders gave.
    pub(super) fn finish(self, argv: Vec<String>, moved: &Renames) -> CommandResults {
        let mut collector = self.parser.finish();
        if let Some(channel) = &self.channel {
            channel.read(&mut collector);
        }
        for note in self.notes {
            collector.note(note);
        }
        collector.finish_moved(self.index, argv, moved)
    }
}

/// A test command that did not run.
pub(super) fn not_run(index: usize, argv: Vec<String>) -> CommandResults {
    CommandResults { not_run: true, ..CommandResults::empty(index, argv) }
}
