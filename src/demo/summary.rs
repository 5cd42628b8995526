//! The demo's verdict: where every cycle ended against where its scenario says it must, with
//! the evidence (iterations, PR, comments on the emulator, journal check, confirmation).

use serde::Serialize;
use serde_json::{Value, json};

use crate::domain::status::Status;
use crate::domain::word::Word;
use crate::store::journal;
use crate::store::state_file;

use super::coordinator::{Confirmer, Demo, Finished};
use super::scenarios::Scenario;

/// One demo cycle in the summary: where it ended, where its scenario says it must, and the evidence.
#[derive(Debug, Clone, Serialize)]
pub struct CycleSummary {
    /// The cycle's state name: its scenario's name, or the one `forgeloop serve` gave a
    /// connector cycle.
    pub name: String,
    /// What the scenario shows, in a few words.
    pub scenario: String,
    /// The status the scenario must end in.
    pub expected: String,
    /// The status it ended in (`UNREADABLE` when the state could not be read).
    pub status: String,
    /// Iterations used.
    pub iteration: u32,
    /// The cycle's iteration cap.
    pub max_iterations: u32,
    /// The cycle's PR reference, once WebGPT opened one.
    pub pr: Option<String>,
    /// The PR's page on the emulator.
    pub pr_url: Option<String>,
    /// forgeloop's comments on the PR, counted on the emulator.
    pub comments: usize,
    /// `{via, by}` when the brief was confirmed.
    pub brief_confirmation: Option<Value>,
    /// Who drove the cycle when it was not the relay loop (`connector:<client name>`).
    pub driver: Option<String>,
    /// Whether the cycle's journal passed its hash-chain check.
    pub journal_ok: bool,
    /// What each run's commands ran in, in order ("isolated, no network", …).
    pub sandboxes: Vec<String>,
    /// The state file's path in the demo's sandbox.
    pub state: String,
    /// Whether the cycle ended exactly as its scenario says.
    pub ok: bool,
    /// What differs from the scenario; empty when `ok`.
    pub problems: Vec<String>,
}

/// What `forgeloop demo --headless` prints, and what the control-room demo prints on exit.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `DEMO_OK` when every cycle ended where expected; `DEMO_STOPPED` when the demo was stopped
    /// (the person quit the control room, Ctrl-C) before every cycle ended; else `DEMO_UNEXPECTED`.
    pub status: Word,
    /// `headless` or `tui`.
    pub mode: &'static str,
    /// The demo's sandbox directory (temporary, or the `--home` given).
    pub sandbox: String,
    /// `false`: the temporary sandbox was removed (pass `--home DIR` to keep one).
    pub sandbox_kept: bool,
    /// The emulator's API base, what it is, and whether it was stopped cleanly.
    pub emulator: Value,
    /// Wall time of the whole demo, to a tenth of a second.
    pub elapsed_seconds: f64,
    /// One entry per scenario, in the scenario table's order.
    pub cycles: Vec<CycleSummary>,
}

impl Summary {
    /// The few lines the control-room demo leaves in the terminal when the person quits (the
    /// JSON summary is `--headless`'s): how it ended and each cycle in a line.
    pub fn brief(&self) -> String {
        let ok = self.cycles.iter().filter(|c| c.ok).count();
        let mut out = format!(
            "forgeloop demo: {} after {:.1} s; {ok} of {} cycles ended as their scenario says.\n",
            self.status.as_str(),
            self.elapsed_seconds,
            self.cycles.len()
        );
        for cycle in &self.cycles {
            let mark = if cycle.ok { "✓" } else { "·" };
            out.push_str(&format!("  {mark} {:<28} {:<24} {}\n", cycle.name, cycle.status, cycle.scenario));
        }
        out.push_str(if self.sandbox_kept {
            "The sandbox is kept: "
        } else {
            "The sandbox was removed (--home DIR keeps one): "
        });
        out.push_str(&format!(
            "{}\n`forgeloop demo --headless` runs it to the end and prints the JSON summary.\n",
            self.sandbox
        ));
        out
    }

    /// Whether every cycle ended as its scenario says (and there was at least one).
    pub fn all_ok(&self) -> bool {
        !self.cycles.is_empty() && self.cycles.iter().all(|c| c.ok)
    }
}

/// Reads each cycle's state, journal and PR comments (the emulator must still be running).
pub fn cycles(demo: &Demo, scenarios: &[Scenario], finished: &[Finished]) -> Vec<CycleSummary> {
    scenarios
        .iter()
        .zip(finished.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(scenario, done)| cycle(demo, scenario, done))
        .collect()
}

fn cycle(demo: &Demo, scenario: &Scenario, finished: Option<&Finished>) -> CycleSummary {
    let mut problems = Vec::new();
    let name = finished.and_then(|f| f.cycle.clone()).unwrap_or_else(|| scenario.name.to_owned());
    let paths = demo.ctx.cycle(&name).ok();
    // Stopped before its scenario began: nothing to read, and nothing is wrong with a file.
    let never_started = finished.is_none_or(|f| f.stopped) && paths.as_ref().is_some_and(|p| !p.state.exists());
    if never_started {
        return CycleSummary {
            name,
            scenario: scenario.shows.to_owned(),
            expected: scenario.expect.status.as_str().to_owned(),
            status: Word::NotStarted.as_str().to_owned(),
            iteration: 0,
            max_iterations: 0,
            pr: None,
            pr_url: None,
            comments: 0,
            brief_confirmation: None,
            driver: None,
            journal_ok: false,
            sandboxes: Vec::new(),
            state: String::new(),
            ok: false,
            problems: vec!["the demo was stopped before this cycle started".into()],
        };
    }
    let state = paths.as_ref().map(|p| state_file::load(&p.state));
    let state = match state {
        Some(Ok(state)) => Some(state),
        Some(Err(err)) => {
            problems.push(format!("cannot read the state: {err}"));
            None
        }
        None => {
            problems.push("no state path".into());
            None
        }
    };
    let journal_ok = match paths.as_ref().map(|p| journal::verify(&p.journal())) {
        Some(Ok(_)) => true,
        Some(Err(err)) => {
            problems.push(format!("journal: {err}"));
            false
        }
        None => false,
    };
    if let Some(done) = finished {
        if let Some(error) = &done.error {
            problems.push(format!("the scripted coordinator gave up: {error}"));
        }
        if done.stopped {
            problems.push("stopped before the cycle ended".into());
        }
    }
    let pr = state.as_ref().and_then(|s| s.pr_ref.clone());
    let number = state.as_ref().and_then(|s| s.report.as_ref()).map(|r| r.pull_request);
    let comments = number.map_or(0, |n| demo.emulator.comments(&demo.repo, n).len());
    let pr_url = number.map(|n| format!("{}/pull/{n}", demo.repo.html_url));
    let expected = scenario.expect;
    let confirmation = state.as_ref().and_then(|s| s.brief_confirmation.as_ref());
    if let Some(state) = &state {
        if state.status != expected.status {
            problems.push(format!("ended {} instead of {}", state.status, expected.status));
        }
        if state.iteration != expected.iteration {
            problems.push(format!("used {} iterations instead of {}", state.iteration, expected.iteration));
        }
        if comments != expected.comments {
            problems.push(format!("{comments} comments on the PR instead of {}", expected.comments));
        }
        // The connector's test_pr posts no comment: the client reads the report itself.
        if !scenario.connector && state.history.iter().any(|run| run.comment_url.is_none()) {
            problems.push("a run's comment was not published".into());
        }
        if scenario.connector {
            let want = format!("connector:{}", super::connector::CLIENT_NAME);
            if state.driver.as_deref() != Some(want.as_str()) {
                problems.push(format!("its driver is {:?} instead of {want}", state.driver));
            }
        }
        if let Some(run) = state.history.iter().find(|run| match run.sandbox.as_deref() {
            Some(label) if scenario.on_ci => label != crate::domain::report::ON_CI_LABEL,
            Some(label) => !label.starts_with("isolated"),
            None => true,
        }) {
            problems.push(format!(
                "run {} was not sandboxed ({})",
                run.iteration,
                run.sandbox.as_deref().unwrap_or("unknown")
            ));
        }
        if expected.needs_network {
            let kinds: Vec<String> = paths
                .as_ref()
                .and_then(|p| journal::read(&p.journal()).ok())
                .map(|j| j.events.into_iter().map(|e| e.kind).collect())
                .unwrap_or_default();
            for kind in ["run_needs_network", "run_finished"] {
                if !kinds.iter().any(|k| k == kind) {
                    problems.push(format!("the journal has no {kind} event"));
                }
            }
        }
        if let Some(route) = scenario.review {
            let want = match route {
                super::scenarios::ReviewRoute::ConnectorVerified => crate::domain::review::Route::Connector,
                super::scenarios::ReviewRoute::ConnectorFails => crate::domain::review::Route::LocalBundle,
            };
            let got = state.review.as_ref().and_then(|r| r.route);
            if got != Some(want) {
                problems.push(format!("its route is {got:?} instead of {want:?}"));
            }
        }
        match confirmation {
            // A review cycle has no brief: the person decides its packet and findings instead.
            _ if scenario.review.is_some() => {}
            None if state.status != Status::AwaitingBriefConfirmation => {
                problems.push("the brief was never confirmed".into())
            }
            Some(c) if scenario.await_confirmation && demo.confirmer == Confirmer::StandIn && c.via != "demo" => {
                problems.push(format!("the brief was confirmed via {} instead of the demo's stand-in", c.via))
            }
            _ => {}
        }
    }
    CycleSummary {
        name,
        scenario: scenario.shows.to_owned(),
        expected: expected.status.as_str().to_owned(),
        status: state.as_ref().map_or_else(|| Word::Unreadable.as_str().to_owned(), |s| s.status.as_str().to_owned()),
        iteration: state.as_ref().map_or(0, |s| s.iteration),
        max_iterations: state.as_ref().map_or(0, |s| s.max_iterations),
        pr,
        pr_url,
        comments,
        brief_confirmation: confirmation.map(|c| json!({"via": c.via, "by": c.by.as_str()})),
        driver: state.as_ref().and_then(|s| s.driver.clone()),
        journal_ok,
        sandboxes: state.as_ref().map_or_else(Vec::new, |s| {
            s.history.iter().map(|run| run.sandbox.clone().unwrap_or_else(|| "unknown".into())).collect()
        }),
        state: paths.map(|p| p.state.display().to_string()).unwrap_or_default(),
        ok: problems.is_empty(),
        problems,
    }
}
