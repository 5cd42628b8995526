//! The human actions on the selected cycle: each asks first (a popup built from the cycle's
//! state and the domain's rules), then its answer becomes an effect; their results come
//! back here as toasts.

use std::path::PathBuf;

use crate::cycle::allow_network;
use crate::domain::machine;
use crate::domain::state::{CycleState, OutboxKind};
use crate::domain::status::Status;
use crate::tui::editor;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::keys::key_for;
use crate::tui::sanitize;

use super::{
    App, Ask, ConfirmDialog, DEFAULT_ABORT_REASON, Effect, InputPurpose, LiveRun, Popup, SayDialog, Toast, UseCase,
    outbox_kind_name, say_refusal,
};

impl App {
    pub(super) fn open_confirm(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let Some(state) = &entry.state else {
            self.toast_error("this state file cannot be read; nothing to confirm");
            return;
        };
        if let Err(refusal) = machine::can_confirm(state) {
            self.toast_error(format!("{}; this cycle is {}", refusal.hint, refusal.status));
            return;
        }
        let fields = match &state.brief {
            Some(brief) => {
                crate::domain::brief::Field::ALL.iter().map(|f| (f.label(), brief.get(*f).to_owned())).collect()
            }
            None => vec![("Intent brief", state.intent_brief.clone())],
        };
        let dialog = ConfirmDialog {
            path: entry.path.clone(),
            name: entry.name(),
            question: state.webgpt_question.clone(),
            fields,
            driver: state.driver.clone(),
            edited: None,
            draft: None,
            error: None,
            busy: false,
            scroll: 0,
        };
        self.popups.push(Popup::ConfirmBrief(dialog));
    }

    pub(super) fn ask_rerun(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let path = entry.path.clone();
        let Some(state) = &entry.state else {
            self.toast_error("this state file cannot be read");
            return;
        };
        if self.is_running(&path) {
            self.toast_error("a test run is already in progress for this cycle (x cancels it)");
            return;
        }
        // The domain's rule, so the toast says what `forge --pr` would refuse.
        let (rerun, pr) = match machine::can_rerun(state) {
            Ok(rerun) => (rerun, state.pr_ref.clone().unwrap_or_default()),
            Err(refusal) => {
                self.toast_error(refusal.hint);
                return;
            }
        };
        let mut body = format!(
            "Test {pr} again at its current head with the stored commands.\nThis counts as iteration {} of {}.",
            state.iteration.saturating_add(1),
            state.max_iterations
        );
        if rerun == machine::Rerun::OverridePass {
            body.push_str(&format!("\n\nThe last run PASSED: this is a human override of {}.", state.status));
        }
        if state.cap_reached() {
            body.push_str(
                "\n\nThe cap is already reached: the cycle will move to BLOCKED_MAX_ITERATIONS instead of running.",
            );
        }
        self.popups.push(Popup::YesNo { ask: Ask::Rerun(path), title: "Rerun the tests?".into(), body });
    }

    pub(super) fn ask_cancel_run(&mut self) {
        let Some(path) = self.list.selected.clone() else { return };
        if self.running_here(&path) {
            self.popups.push(Popup::YesNo {
                ask: Ask::CancelRun(path),
                title: "Cancel the rerun?".into(),
                body: "The test process group is stopped (SIGTERM, then SIGKILL). A cancelled run is not a verdict on the PR.".into(),
            });
        } else if let Some(run) = self.run_elsewhere(&path) {
            let body = format!(
                "{} is running iteration {} for the {} (forgeloop pid {}).\n\nThat process is asked to stop: it kills the test's process group and journals the run as cancelled by you. A cancelled run is not an iteration and not a verdict on the PR.",
                run.command.as_deref().map_or_else(|| "The fetch".to_owned(), |c| format!("`{c}`")),
                run.info.iteration,
                run.info.actor.as_str(),
                run.info.pid,
            );
            self.popups.push(Popup::YesNo { ask: Ask::CancelRun(path), title: "Cancel the run?".into(), body });
        } else {
            self.toast_error("no test is running for this cycle");
        }
    }

    pub(super) fn ask_abort(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        match entry.status() {
            Some(s) if !s.is_final() => {}
            Some(s) => {
                self.toast_error(format!("this cycle has already ended ({s})"));
                return;
            }
            None => {
                self.toast_error("this state file cannot be read");
                return;
            }
        }
        let first = if self.running_here(&entry.path) {
            " The rerun started here is cancelled first.".to_owned()
        } else if let Some(run) = self.run_elsewhere(&entry.path) {
            format!(" The run of forgeloop pid {} ({}) is stopped first.", run.info.pid, run.info.actor.as_str())
        } else {
            String::new()
        };
        let prompt = format!("Abort {} for good? This cannot be undone.{first}\nReason (journaled):", entry.name());
        self.popups.push(Popup::Input {
            purpose: InputPurpose::Abort(entry.path.clone()),
            title: "Abort the cycle".into(),
            prompt,
            value: DEFAULT_ABORT_REASON.into(),
            error: None,
        });
    }

    pub(super) fn ask_unblock(&mut self) {
        let Some(state) = self.selected_state() else { return };
        let status = state.status;
        if !status.is_unblockable() {
            let hint = if status == Status::BlockedMaxIterations {
                "the cap is lifted with extend (+), not unblock"
            } else {
                "only a BLOCKED_* cycle can be unblocked"
            };
            self.toast_error(format!("{hint}; this cycle is {status}"));
            return;
        }
        let why = state.last_error.clone().unwrap_or_else(|| "no reason recorded".into());
        let back = state.blocked_from.map_or("the status before the block".to_owned(), |s| s.as_str().to_owned());
        let path = self.list.selected.clone().unwrap_or_default();
        self.popups.push(Popup::YesNo {
            ask: Ask::Unblock(path),
            title: "Unblock the cycle?".into(),
            body: format!("It is {status}: {why}\n\nIt returns to {back}. Journaled as you (human)."),
        });
    }

    /// `v`: approve a pass that changed protected paths, after reading why it waits and what
    /// it changed (the last run's `integrity`).
    pub(super) fn ask_approve(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let Some(state) = &entry.state else {
            self.toast_error("this state file cannot be read");
            return;
        };
        if let Err(refusal) = machine::approve(&mut state.clone(), "") {
            self.toast_error(format!("{}; this cycle is {}", refusal.hint, refusal.status));
            return;
        }
        if self.is_running(&entry.path) {
            self.toast_error("a test run is in progress for this cycle: approve once it has finished");
            return;
        }
        let body = approve_body(state);
        let path = entry.path.clone();
        self.popups.push(Popup::YesNo { ask: Ask::Approve(path), title: format!("Approve {}?", entry.name()), body });
    }

    pub(super) fn ask_drop_message(&mut self) {
        let Some(outbox) = self.selected_state().and_then(super::droppable).cloned() else {
            self.toast_error(
                "no message is waiting to be sent (the first prompt is not dropped: abort the cycle instead)",
            );
            return;
        };
        let kind = crate::tui::widgets::outbox_kind_name(outbox.kind);
        let preview: Vec<&str> = outbox.text.lines().take(8).collect();
        let path = self.list.selected.clone().unwrap_or_default();
        self.popups.push(Popup::YesNo {
            ask: Ask::DropMessage(path),
            title: format!("Drop the pending {kind}?"),
            body: format!(
                "It was never sent, and WebGPT will never be sent it:\n\n{}\n\nThe agent then waits for you: rerun, correct the commands, or write your own message (m). Journaled as you (human).",
                crate::tui::sanitize::clean(&preview.join("\n"))
            ),
        });
    }

    pub(super) fn ask_allow_hosts(&mut self) {
        let Some(state) = self.selected_state() else { return };
        let Some((repository, entries)) = allow_network::refused_hosts(state) else {
            // An address that is not public is never proposed (design §5.6): say what to do.
            match state.needs_network.as_ref().filter(|n| n.allowed_at.is_none() && !n.refused_by_policy.is_empty()) {
                Some(needs) => {
                    let repository = needs.pr.split_once('#').map_or(needs.pr.as_str(), |(repo, _)| repo);
                    self.toast_error(format!(
                        "{} is not public: no key allows it; if you trust it, write it by hand into [network.repositories.\"{repository}\"] allow in config.toml",
                        needs.refused_by_policy.join(", ")
                    ))
                }
                None => {
                    self.toast_error("no run of this cycle was refused a host (NEEDS_NETWORK) that is not allowed yet")
                }
            }
            return;
        };
        let pr = state.needs_network.as_ref().map_or_else(String::new, |n| n.pr.clone());
        let lines = crate::domain::needs_network::config_lines(&repository, &entries);
        let path = self.list.selected.clone().unwrap_or_default();
        self.popups.push(Popup::YesNo {
            ask: Ask::AllowHosts(path),
            title: format!("Allow these hosts for {repository}?"),
            body: format!(
                "The last run of {pr} needed network: its egress proxy refused\n  {}\n\nThis adds to your config.toml:\n\n{}\nEvery later run of {repository}'s tests may reach them (setup, or tests with \"network\": \"allowlist\"); the PR's code runs there. Journaled as you (human).",
                entries.join("\n  "),
                lines.trim_end()
            ),
        });
    }

    /// `m`: `$EDITOR` on a message for WebGPT (the last draft, else the template), when the
    /// domain would take one; the dialog follows when the editor returns.
    pub(super) fn ask_message(&mut self, fx: &mut Vec<Effect>) {
        let Some(entry) = self.selected_entry() else { return };
        let Some(state) = &entry.state else {
            self.toast_error("this state file cannot be read; nothing can be sent");
            return;
        };
        if let Some(refusal) = say_refusal(state) {
            self.toast_error(format!("{}; this cycle is {}", refusal.hint, refusal.status));
            return;
        }
        let path = entry.path.clone();
        let text = match self.message_drafts.get(&path) {
            Some(draft) => draft.clone(),
            None => editor::compose_message(&entry.name(), &message_notes(state)),
        };
        fx.push(Effect::EditMessage { path, text });
    }

    /// The editor returned on a message: empty cancels (and forgets the draft), words open
    /// (or refresh) the dialog that sends them; the file is kept as the draft either way.
    pub(super) fn message_edited(&mut self, path: PathBuf, result: Result<String, String>) {
        self.dirty = true;
        let file = match result {
            Ok(file) => file,
            Err(error) => {
                match self.popups.say_dialog(&path) {
                    Some(dialog) => dialog.error = Some(error),
                    None => self.toast_error(error),
                }
                return;
            }
        };
        let words = editor::parse_message(&file);
        if words.is_empty() {
            self.message_drafts.remove(&path);
            if self.popups.say_dialog(&path).is_some() {
                self.popups.pop();
            }
            self.toast = Some(Toast { text: "the message is empty: nothing was sent".into(), error: false });
            return;
        }
        self.message_drafts.insert(path.clone(), file.clone());
        if let Some(dialog) = self.popups.say_dialog(&path) {
            dialog.text = words;
            dialog.draft = file;
            dialog.error = None;
            dialog.scroll = 0;
            return;
        }
        let Some(entry) = self.list.cycles.iter().find(|c| c.path == path) else {
            self.toast_error("this cycle is gone; nothing was sent");
            return;
        };
        let notes = entry.state.as_ref().map(message_notes).unwrap_or_default();
        let dialog = SayDialog {
            name: entry.name(),
            path,
            text: words,
            draft: file,
            notes,
            error: None,
            busy: false,
            scroll: 0,
        };
        self.popups.push(Popup::Say(dialog));
    }

    pub(super) fn ask_extend(&mut self) {
        let Some(entry) = self.selected_entry() else { return };
        let Some(state) = &entry.state else { return };
        if state.status.is_final() {
            self.toast_error(format!("this cycle has already ended ({})", state.status));
            return;
        }
        let prompt = format!(
            "{} has used {} of {} iterations. Allow how many more?",
            entry.name(),
            state.iteration,
            state.max_iterations
        );
        self.popups.push(Popup::Input {
            purpose: InputPurpose::Extend(entry.path.clone()),
            title: "Extend the iteration cap".into(),
            prompt,
            value: "1".into(),
            error: None,
        });
    }

    pub(super) fn ask_quit(&mut self, fx: &mut Vec<Effect>) {
        if self.live_runs.is_empty() {
            self.quit = true;
            fx.push(Effect::Quit);
        } else {
            let n = self.live_runs.len();
            self.popups.push(Popup::YesNo {
                ask: Ask::Quit,
                title: "Quit while a rerun is running?".into(),
                body: format!(
                    "{n} rerun{} started here {} still running. Quitting cancels {}.",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "is" } else { "are" },
                    if n == 1 { "it" } else { "them" }
                ),
            });
        }
    }

    pub(super) fn answer_yes(&mut self, ask: Ask, fx: &mut Vec<Effect>) {
        match ask {
            Ask::Quit => {
                for path in self.live_runs.keys() {
                    fx.push(Effect::CancelRun { path: path.clone() });
                }
                self.quit = true;
                fx.push(Effect::Quit);
            }
            Ask::Rerun(path) => {
                self.live_runs.insert(path.clone(), LiveRun { cancel_requested: false, abort_after: None });
                self.toast = Some(Toast { text: "rerun started; its log appears in the Log tab".into(), error: false });
                fx.push(Effect::Rerun { path: path.clone() });
                if self.list.selected.as_ref() == Some(&path) {
                    fx.push(Effect::ListRuns(path));
                }
            }
            Ask::CancelRun(path) => match self.live_runs.get_mut(&path) {
                Some(run) => {
                    run.cancel_requested = true;
                    fx.push(Effect::CancelRun { path });
                }
                None => {
                    self.toast =
                        Some(Toast { text: "asking the process that runs the test to stop…".into(), error: false });
                    fx.push(Effect::StopRun { path });
                }
            },
            Ask::Unblock(path) => fx.push(Effect::Unblock { path }),
            Ask::AllowHosts(path) => fx.push(Effect::AllowHosts { path }),
            Ask::DropMessage(path) => fx.push(Effect::DropMessage { path }),
            Ask::Approve(path) => fx.push(Effect::Approve { path }),
            Ask::Screen(load) => fx.push(Effect::Screen(load)),
            Ask::Pane(load) => fx.push(Effect::Pane(load)),
        }
    }

    pub(super) fn abort(&mut self, path: PathBuf, reason: String, fx: &mut Vec<Effect>) {
        match self.live_runs.get_mut(&path) {
            Some(run) => {
                // The run holds the cycle lock: cancel it, abort when it has stopped.
                run.cancel_requested = true;
                run.abort_after = Some(reason);
                fx.push(Effect::CancelRun { path });
                self.toast = Some(Toast {
                    text: "cancelling the rerun; the cycle is aborted when it stops".into(),
                    error: false,
                });
            }
            None => fx.push(Effect::Abort { path, reason }),
        }
    }

    pub(super) fn use_case_done(
        &mut self,
        what: UseCase,
        path: PathBuf,
        result: Result<String, String>,
        fx: &mut Vec<Effect>,
    ) {
        self.dirty = true;
        // A confirmation's or a message's outcome belongs to its dialog: success closes it, a
        // failure is shown in it.
        let in_dialog = match what {
            UseCase::Confirm => self.popups.confirm_done(&path, &result),
            UseCase::Say => self.popups.say_done(&path, &result),
            _ => false,
        };
        if what == UseCase::Say && result.is_ok() {
            self.message_drafts.remove(&path);
        }
        match result {
            Ok(message) => {
                self.toast = Some(Toast { text: message, error: false });
                // The watcher reloads it too; this makes the result visible at once.
                fx.push(Effect::LoadCycles(vec![path.clone()]));
                if self.list.selected.as_ref() == Some(&path) {
                    fx.push(Effect::LoadJournal(path));
                }
            }
            Err(_) if in_dialog => {}
            Err(error) => self.toast_error(format!("{} failed: {error}", what.as_str())),
        }
    }

    pub(super) fn run_finished(&mut self, path: PathBuf, result: Result<String, String>, fx: &mut Vec<Effect>) {
        self.dirty = true;
        let run = self.live_runs.remove(&path);
        match &result {
            Ok(summary) => self.toast = Some(Toast { text: format!("rerun finished: {summary}"), error: false }),
            Err(error) if run.as_ref().is_some_and(|r| r.cancel_requested) => {
                self.toast = Some(Toast { text: format!("rerun cancelled: {error}"), error: false })
            }
            Err(error) => self.toast_error(format!("rerun failed: {error}")),
        }
        if let Some(reason) = run.and_then(|r| r.abort_after) {
            fx.push(Effect::Abort { path: path.clone(), reason });
        }
        fx.push(Effect::LoadCycles(vec![path.clone()]));
        if self.list.selected.as_ref() == Some(&path) {
            fx.push(Effect::ListRuns(path));
        }
    }
}

/// What sending a message does to this cycle besides the outbox, one sentence each (the
/// editor's template and the dialog say them).
pub(super) fn message_notes(state: &CycleState) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(pending) = state.outbox.as_ref().filter(|o| o.sent_at.is_none()) {
        notes.push(match pending.kind {
            OutboxKind::Message => {
                "Your earlier message, still waiting to be sent, goes after these words, as one message.".to_owned()
            }
            kind => {
                format!("The {} waiting to be sent goes after these words, as one message.", outbox_kind_name(kind))
            }
        });
    }
    if state.status == Status::ReadyToMerge {
        notes.push("The cycle is READY_TO_MERGE: sending this puts it back to AWAITING_WEBGPT_FIX.".to_owned());
    }
    if state.status == Status::TestsDisputed {
        notes.push(
            "The cycle is TESTS_DISPUTED: sending this tells WebGPT what holds, and puts it back to AWAITING_WEBGPT_FIX."
                .to_owned(),
        );
    }
    if state.status == Status::NeedsReview {
        notes.push(
            "The cycle is NEEDS_REVIEW: sending this answers the review instead of approving it, and puts it back to AWAITING_WEBGPT_FIX."
                .to_owned(),
        );
    }
    notes
}

/// Most protected paths the approval dialog names before "and N more".
const APPROVE_PATHS: usize = 6;

/// What the approval dialog says: why the pass waits, what the PR did to its tests, what
/// approving does and the other way out (the person's words).
fn approve_body(state: &CycleState) -> String {
    let pr = state.pr_ref.as_deref().unwrap_or("The PR");
    if let Some(dispute) = state.dispute.as_ref().filter(|d| d.acceptable()) {
        let tests: Vec<String> = dispute.tests.iter().map(|t| format!("\n{}", sanitize::clean(&t.words()))).collect();
        return format!(
            "{pr}'s run failed only on held tests it corrected:{}\n\nApproving takes the PR's version of {} as yours: the same head is tested again with it, and a pass then is READY_TO_MERGE. Journaled as you (human, via tui).\n\nTo tell WebGPT your test is right instead, answer with your words.",
            tests.concat(),
            if dispute.tests.len() == 1 { "this test" } else { "these tests" }
        );
    }
    let run = state.history.last();
    let integrity = state
        .report
        .as_ref()
        .filter(|r| run.is_some_and(|run| run.head_sha == r.head_sha))
        .and_then(|r| r.integrity.as_ref());
    let at = run.map_or_else(String::new, |r| {
        format!(" at {} (run {})", r.head_sha.chars().take(12).collect::<String>(), r.iteration)
    });
    let mut body = format!("{pr} passed its tests{at}, but it waits for you:");
    let fix = integrity.and_then(|i| i.fix_words());
    if let Some(fix) = &fix {
        body.push_str(&format!("\n{}.", sanitize::clean(fix)));
    }
    let reason = state.report.as_ref().and_then(|r| r.review_reason());
    match (integrity, reason) {
        (Some(integrity), _) if !integrity.protected.is_empty() => {
            let mut paths: Vec<String> =
                integrity.protected.iter().take(APPROVE_PATHS).map(|p| sanitize::clean(p)).collect();
            let more = integrity.protected.len().saturating_sub(APPROVE_PATHS);
            if more > 0 {
                paths.push(format!("and {more} more"));
            }
            body.push_str(&format!("\nit changes paths you protect: {}.", paths.join(", ")));
        }
        _ if fix.is_some() => {}
        (_, Some(reason)) => body.push_str(&format!("\n{}.", sanitize::clean(&reason))),
        _ => body.push_str("\nits pass changed protected paths."),
    }
    body.push_str("\nApproving makes it READY_TO_MERGE; nothing is run or posted. Journaled as you (human, via tui).");
    if let Some(words) = integrity.and_then(|i| i.change_words()) {
        body.push_str(&format!("\n\nTests: {}.\n", sanitize::clean(&words)));
    }
    if let Some(key) = key_for(Context::Cycle, Cmd::MessageWebgpt) {
        body.push_str(&format!("\nTo send it back instead, answer with {key}: your words go to WebGPT."));
    }
    body
}
