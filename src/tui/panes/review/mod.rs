//! The Review tab (docs/review.md): a review cycle's target, route, attestation and packet, and
//! its findings as a list the person triages with one key each (`FIX`, `DEFER`, `DISMISS`, and
//! `QUESTION` with the question written in a dialog; through `cycle::review::triage` as
//! `human`) and approves the packet from (asks first,
//! `cycle::review::approve` via `tui`). A PR cycle's tab says how a review starts. Its loads
//! (`load.rs`) carry out the person's actions.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::domain::review::{Decision, Review};
use crate::domain::review_step::packet_waits_for_yes;
use crate::domain::state::CycleState;
use crate::domain::status::Status;
use crate::tui::keymap::{Binding, Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::registry::Tab;

use super::{Cx, Draw, Loaded, Pane, PaneWork, Reply, Selection, moved};

pub mod keys;
pub mod load;
pub mod view;

pub use load::{ReviewLoad, ReviewMsg};

/// The Review tab's state: the selected finding (an index into the review's findings).
#[derive(Debug, Default)]
pub struct ReviewPane {
    /// The selected finding.
    pub selected: usize,
}

/// The review of the selected cycle, when it is a review cycle that could be read.
fn review_of<'a>(sel: &Selection<'a>) -> Option<(&'a CycleState, &'a Review)> {
    let state = sel.entry?.state.as_ref()?;
    Some((state, state.review.as_ref()?))
}

impl ReviewPane {
    /// The decision `cmd` stands for, if it is one of the tab's triage keys.
    fn decision(cmd: Cmd) -> Option<Decision> {
        match cmd {
            Cmd::TriageFix => Some(Decision::Fix),
            Cmd::TriageDefer => Some(Decision::Defer),
            Cmd::TriageDismiss => Some(Decision::Dismiss),
            Cmd::TriageQuestion => Some(Decision::Question),
            _ => None,
        }
    }

    /// Asks for the selected finding to be decided `decision`: at once, or for `QUESTION` once
    /// the person has written the question.
    fn triage(&self, decision: Decision, cx: &mut Cx<ReviewLoad>) -> Reply {
        let Some(entry) = cx.sel.entry else { return Reply::Done };
        let Some(state) = &entry.state else {
            return Reply::Refused("this state file cannot be read".into());
        };
        let Some(review) = &state.review else {
            return Reply::Refused("this is a PR cycle: it has no findings to triage".into());
        };
        let Some(finding) = review.findings.get(self.selected.min(review.findings.len().saturating_sub(1))) else {
            return Reply::Refused("no finding is selected: this review has none yet".into());
        };
        let load = ReviewLoad::Triage { path: entry.path.clone(), number: finding.number, decision, note: None };
        if decision == Decision::Question {
            let prompt = format!(
                "Finding {} ({}): {}\nYour question for the reviewer (sent once every finding is decided; journaled):",
                finding.number,
                finding.location(),
                finding.text
            );
            cx.ask_text(format!("Ask about finding {}", finding.number), prompt, load);
        } else {
            cx.load(load);
        }
        Reply::Done
    }

    /// Asks the person first, then says yes to the packet.
    fn approve_packet(cx: &mut Cx<ReviewLoad>) -> Reply {
        let Some(entry) = cx.sel.entry else { return Reply::Done };
        let Some(state) = &entry.state else {
            return Reply::Refused("this state file cannot be read".into());
        };
        let packet = state.review.as_ref().and_then(|r| r.packet.as_ref());
        let Some(packet) = packet.filter(|_| packet_waits_for_yes(state)) else {
            return Reply::Refused(format!(
                "no packet waits for your yes (`forgeloop review prepare` makes one); this cycle is {}",
                state.status
            ));
        };
        let name = entry.name();
        let body = format!(
            "The review packet of {name} (its path is in the Review tab) leaves this machine for the chat once you say yes:\n  {} files, {} bytes, about {} tokens, {} risk{}.\n\nRead what it holds first: forgeloop review prepare --state {name} --dry-run\n\nThe review request is issued; later packets for this repository ask again only when they carry risks. Journaled as you (human, via tui).",
            packet.files,
            packet.bytes,
            packet.tokens,
            packet.risks,
            if packet.risks == 1 { "" } else { "s" }
        );
        cx.confirm(
            format!("Approve {name}'s review packet?"),
            body,
            ReviewLoad::ApprovePacket { path: entry.path.clone() },
        );
        Reply::Done
    }
}

impl Pane for ReviewPane {
    type Msg = ReviewMsg;
    type Load = ReviewLoad;

    const CONTEXTS: &'static [Context] = &[Context::Tab(Tab::Review), Context::Detail, Context::Cycle, Context::Global];
    const KEYS: &'static [Binding] = keys::KEYS;

    fn command(&mut self, cmd: Cmd, cx: &mut Cx<ReviewLoad>) -> Reply {
        if let Some(decision) = Self::decision(cmd) {
            return self.triage(decision, cx);
        }
        if cmd == Cmd::ApprovePacket {
            return Self::approve_packet(cx);
        }
        let count = review_of(cx.sel).map_or(0, |(_, r)| r.findings.len());
        match moved(self.selected, cmd, count) {
            Some(at) => {
                self.selected = at;
                Reply::Done
            }
            None => Reply::NotMine,
        }
    }

    fn available(&self, cmd: Cmd, sel: &Selection, _loaded: &Loaded) -> Option<bool> {
        let review = review_of(sel);
        match cmd {
            Cmd::TriageFix | Cmd::TriageDefer | Cmd::TriageDismiss | Cmd::TriageQuestion => {
                Some(review.is_some_and(|(state, review)| {
                    state.status == Status::AwaitingTriage && !review.findings.is_empty()
                }))
            }
            Cmd::ApprovePacket => Some(review.is_some_and(|(state, _)| packet_waits_for_yes(state))),
            _ => None,
        }
    }

    fn with_text(load: ReviewLoad, text: String) -> ReviewLoad {
        match load {
            ReviewLoad::Triage { path, number, decision, .. } => {
                ReviewLoad::Triage { path, number, decision, note: Some(text) }
            }
            other => other,
        }
    }

    fn forget(&mut self, _cx: &mut Cx<ReviewLoad>) {
        self.selected = 0;
    }

    fn receive(&mut self, msg: ReviewMsg, _cx: &mut Cx<ReviewLoad>) -> Reply {
        match msg {
            ReviewMsg::Done { path, result: Ok(text) } => Reply::Saved(path, text),
            ReviewMsg::Done { result: Err(text), .. } => Reply::Refused(text),
        }
    }

    fn render(&self, draw: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, entry, frame, area);
    }

    fn work(load: ReviewLoad, ctx: &crate::cycle::Ctx) -> PaneWork<ReviewMsg> {
        load::work(load, ctx)
    }
}
