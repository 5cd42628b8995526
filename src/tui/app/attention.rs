//! Ringing for the person (design §6.6): when a cycle starts needing them — a brief to confirm,
//! a block, the cap, a PR ready to merge, a pass that changed protected paths (and why) — the
//! control room rings once for that transition.
//! Cycles that already needed them when the control room opened do not ring.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::domain::status::Status;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::keys::key_for;
use crate::tui::model::CycleEntry;

use super::Effect;

/// Which cycles the person was already told about, so each transition rings once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attention {
    /// Config `[tui] notify` (default on).
    pub enabled: bool,
    /// The last status seen per cycle, and whether it was waiting for network then.
    seen: BTreeMap<PathBuf, (Status, bool)>,
    /// Cycles of the first discovery whose first load only sets what was seen.
    startup: Option<BTreeSet<PathBuf>>,
}

impl Default for Attention {
    fn default() -> Self {
        Attention { enabled: true, seen: BTreeMap::new(), startup: None }
    }
}

impl Attention {
    /// The first discovery: what it finds is the starting point, not news.
    pub fn discovered(&mut self, paths: &[PathBuf]) {
        if self.startup.is_none() {
            self.startup = Some(paths.iter().cloned().collect());
        }
    }

    /// Notes the loaded cycles; one notification per cycle that just began to need a person.
    pub fn loaded(&mut self, loaded: &[CycleEntry], fx: &mut Vec<Effect>) {
        for entry in loaded {
            let Some(status) = entry.status() else { continue };
            let network = entry.needs_network();
            let first_look = self.startup.as_mut().is_some_and(|s| s.remove(&entry.path));
            let before = self.seen.insert(entry.path.clone(), (status, network));
            if first_look || before == Some((status, network)) || !self.enabled {
                continue;
            }
            if network && before.is_none_or(|(_, was)| !was) {
                fx.push(Effect::Notify(format!("{} needs you: its tests were refused network", entry.name())));
            } else if status.needs_human() && before.is_none_or(|(was, _)| was != status) {
                fx.push(Effect::Notify(format!("{} {}", entry.name(), what_it_needs(entry, status))));
            }
        }
    }
}

fn what_it_needs(entry: &CycleEntry, status: Status) -> String {
    let integrity = entry.state.as_ref().and_then(|s| s.report.as_ref()).and_then(|r| r.integrity.as_ref());
    match status {
        Status::AwaitingBriefConfirmation => "needs you: a brief to confirm".into(),
        Status::TestsDisputed => {
            let why = entry
                .state
                .as_ref()
                .and_then(|s| s.dispute.as_ref())
                .map(|d| d.words())
                .unwrap_or_else(|| "the tests are disputed".into());
            let why = crate::tui::sanitize::clean(&why);
            format!("needs your decision: {why}")
        }
        Status::NeedsReview => {
            let report = entry.state.as_ref().and_then(|s| s.report.as_ref());
            let why = report.and_then(|r| r.review_reason()).unwrap_or_else(|| "a pass changed protected paths".into());
            let why = crate::tui::sanitize::clean(&why);
            let keys = match (key_for(Context::Cycle, Cmd::Approve), key_for(Context::Cycle, Cmd::MessageWebgpt)) {
                (Some(approve), Some(answer)) => format!(" ({approve} approves, {answer} answers WebGPT)"),
                _ => String::new(),
            };
            format!("needs your review: it passed, but {why}{keys}")
        }
        Status::ReadyToMerge => match integrity.and_then(|i| i.flag).filter(|f| f.needs_a_look()) {
            Some(flag) => format!("is ready to merge, but the PR's tests changed ({}): review the PR", flag.badge()),
            None => "is ready to merge: review the PR".into(),
        },
        Status::BlockedMaxIterations => "needs you: the iteration cap is reached".into(),
        other => format!("needs you: {other}"),
    }
}
