//! A synchronous driver for tests and benchmarks: carries out effects at once, on the calling
//! thread, through the same [`Executor`] as the runtime (same loaders, use cases, messages,
//! log reader), so an [`App`] reaches a settled state without a terminal, threads or timing.
//! What needs a terminal, a process or the network (rerun, browser, clipboard, quit) is
//! left in [`SyncDriver::unhandled`] for the test to look at.

use std::collections::VecDeque;
use std::path::PathBuf;

use crate::cycle::Ctx;

use super::app::{App, Effect, Event};
use super::exec::{Executor, Work};
use crate::tui::pager::log::LogReader;
use crate::tui::panes::PaneMsg;

/// Carries out an app's effects at once, on the calling thread (tests and benches).
pub struct SyncDriver {
    exec: Executor,
    log: LogReader,
    /// Effects the driver does not carry out (rerun, copy, open, quit…), in order.
    pub unhandled: Vec<Effect>,
}

impl SyncDriver {
    /// A driver with the context the effects run in.
    pub fn new(ctx: Ctx, extra_dirs: Vec<PathBuf>) -> SyncDriver {
        let log = LogReader::new(ctx.redactor.clone());
        SyncDriver { exec: Executor::new(ctx, extra_dirs), log, unhandled: Vec::new() }
    }

    /// Applies `event`, then every effect it causes, until nothing is left to do.
    pub fn apply(&mut self, app: &mut App, event: Event) {
        let effects = app.update(event);
        self.settle(app, effects);
    }

    /// Starts the app (watch set, discovery, registry) and settles it.
    pub fn start(&mut self, app: &mut App) {
        let effects = app.init();
        self.settle(app, effects);
    }

    /// Carries out `effects` and every effect their outcomes cause, until none is left (at most
    /// 10,000).
    pub fn settle(&mut self, app: &mut App, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        let mut budget = 10_000;
        while let Some(effect) = queue.pop_front() {
            budget -= 1;
            if budget == 0 {
                break;
            }
            if let Some(event) = self.carry_out(effect) {
                queue.extend(app.update(event));
            }
        }
        let live = &app.live_runs;
        self.exec.retain_runs(|path| live.contains_key(path));
    }

    /// The executor's work for `effect`, done now; its outcome, if any.
    fn carry_out(&mut self, effect: Effect) -> Option<Event> {
        let kept = effect.clone();
        match self.exec.plan(effect) {
            Work::Done | Work::Watch(_) => None,
            Work::Load(job) | Work::Blocking(job) => Some(job()),
            Work::Log(request) => self
                .log
                .handle(request, &mut |_| false)
                .and_then(|answer| PaneMsg::from_reader(&answer))
                .map(Event::Pane),
            Work::Task(_) | Work::Copy(_) | Work::Notify(_) | Work::Terminal(_) => {
                self.unhandled.push(kept);
                None
            }
        }
    }
}
