//! The Runs tab: the selected cycle's runs (the rows are shared: `panes::run_rows`), moving
//! the selected run, reading an earlier run's report for its integrity, and asking for its
//! log or its diff.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::registry::Tab;

use super::run_rows::{RunReport, RunResult};
use super::{Cx, Loaded, Nothing, Pane, PaneWork, Reply, Request, Selection, SharedLoad, moved};

pub mod keys;
pub mod view;

/// The Runs tab. The run it selects is shared ([`Loaded::run`]): the Log tab opens its log.
#[derive(Debug, Default)]
pub struct RunsPane;

/// Reads the selected run's report for its `integrity` when it is an earlier run's (the last
/// run's is in the state), once per selection of the cycle.
fn read_report(cx: &mut Cx<Nothing>) {
    let Some(entry) = cx.sel.entry else { return };
    let Some(row) = cx.selected_run() else { return };
    let (Some(iteration), Some(report)) = (row.iteration, row.report.clone()) else { return };
    let last = entry.state.as_ref().and_then(|s| s.history.last()).map(|r| r.iteration);
    if last == Some(iteration) || cx.loaded.reports.contains_key(&iteration) {
        return;
    }
    cx.loaded.reports.insert(iteration, RunReport::Loading);
    cx.read(SharedLoad::Report { path: entry.path.clone(), iteration, report });
}

impl Pane for RunsPane {
    type Msg = Nothing;
    type Load = Nothing;

    const CONTEXTS: &'static [Context] = &[Context::Tab(Tab::Runs), Context::Detail, Context::Cycle, Context::Global];
    const KEYS: &'static [crate::tui::keymap::Binding] = keys::KEYS;

    fn command(&mut self, cmd: Cmd, cx: &mut Cx<Nothing>) -> Reply {
        match cmd {
            Cmd::Up | Cmd::Down | Cmd::PageUp | Cmd::PageDown | Cmd::Top | Cmd::Bottom => {
                let before = cx.loaded.run;
                cx.loaded.run = moved(before, cmd, cx.sel.rows.len()).unwrap_or(before);
                if cx.loaded.run != before {
                    read_report(cx);
                    return Reply::Ask(Request::RunChosen);
                }
                Reply::Done
            }
            Cmd::Open if !cx.sel.rows.is_empty() => Reply::Ask(Request::OpenRunLog),
            Cmd::ShowDiff => match cx.selected_run() {
                Some(row) if matches!(row.result, RunResult::Passed | RunResult::Failed) => {
                    Reply::Ask(Request::DiffOf(row.iteration))
                }
                Some(_) => Reply::Refused("this run did not finish: it has no diff".into()),
                None => Reply::Done,
            },
            _ => Reply::NotMine,
        }
    }

    fn available(&self, cmd: Cmd, sel: &Selection, loaded: &Loaded) -> Option<bool> {
        match cmd {
            Cmd::ShowDiff => Some(
                sel.rows.get(loaded.run).is_some_and(|r| matches!(r.result, RunResult::Passed | RunResult::Failed)),
            ),
            Cmd::Open => Some(!sel.rows.is_empty()),
            _ => None,
        }
    }

    fn shown(&mut self, cx: &mut Cx<Nothing>) {
        read_report(cx);
    }

    fn follows_runs(&self) -> bool {
        true
    }

    fn render(&self, draw: &super::Draw, _entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(draw, frame, area);
    }

    fn work(load: Nothing, _ctx: &crate::cycle::Ctx) -> PaneWork<Nothing> {
        match load {}
    }
}
