//! The control room's state machine, without rendering: actions in, state and effects out.
//! Cycles are real files made with the use-case functions; loads run synchronously.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod tui_support;

use crossterm::event::KeyCode;
use forgeloop::domain::status::Status;
use forgeloop::tui::app::{Ask, Effect, Event, Focus, InputPurpose, Popup, Screen, SearchState, Tab};
use forgeloop::tui::keymap::Cmd;
use forgeloop::tui::pager::diff::DiffEvent;
use forgeloop::tui::pager::log::LogRequest;
use forgeloop::tui::panes::connector::ConnectorLoad;
use forgeloop::tui::panes::diff::{DiffLoad, DiffState, MARGIN as DIFF_MARGIN};
use forgeloop::tui::panes::{PaneLoad, PaneMsg, ScreenLoad};
use tui_support::*;

/// await-fix (failed run), ready (passed), confirm, await-pr, blocked, aborted.
fn mixed() -> Fixture {
    let mut fx = Fixture::new();
    fx.at(50).start("await-pr", false, 5);
    fx.at(40).start("await-fix", false, 5);
    fx.sent("await-fix");
    fx.reply("await-fix", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.run("await-fix", false, "0123456789abcdef0123456789abcdef01234567", &failing_log());
    fx.at(30).start("ready", false, 5);
    fx.run("ready", true, "fedcba9876543210fedcba9876543210fedcba98", "$ pytest -q\n41 passed\n[exit 0 after 3.0s]\n");
    fx.at(20).start("confirm-me", true, 5);
    fx.at(10).start("blocked", false, 5);
    fx.block("blocked", Status::BlockedModelUnavailable, "no GPT-5 in the model picker");
    fx.at(5).start("gone", false, 5);
    fx.abort("gone");
    fx
}

fn names(app: &forgeloop::tui::App) -> Vec<String> {
    app.list.visible.iter().map(|&i| app.list.cycles[i].name()).collect()
}

#[test]
fn the_list_puts_what_needs_a_person_first() {
    let fx = mixed();
    let (app, _) = fx.app("dark");
    assert_eq!(names(&app), ["confirm-me", "blocked", "ready", "await-fix", "await-pr", "gone"]);
    assert_eq!(selected_name(&app), "confirm-me");
    // Last event comes from each journal's end.
    let blocked = app.list.cycles.iter().find(|c| c.name() == "blocked").unwrap();
    assert!(blocked.last_event.as_ref().unwrap().summary.contains("no GPT-5"), "{:?}", blocked.last_event);
}

#[test]
fn navigation_moves_the_selection_and_loads_its_detail() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    key(&mut app, &mut d, KeyCode::Char('j'));
    assert_eq!(selected_name(&app), "blocked");
    key(&mut app, &mut d, KeyCode::Down);
    assert_eq!(selected_name(&app), "ready");
    key(&mut app, &mut d, KeyCode::Char('G'));
    assert_eq!(selected_name(&app), "gone");
    key(&mut app, &mut d, KeyCode::Char('j'));
    assert_eq!(selected_name(&app), "gone", "stops at the bottom");
    key(&mut app, &mut d, KeyCode::Char('k'));
    assert_eq!(selected_name(&app), "await-pr");
    key(&mut app, &mut d, KeyCode::Char('g'));
    assert_eq!(selected_name(&app), "confirm-me");
    key(&mut app, &mut d, KeyCode::PageDown);
    assert_ne!(selected_name(&app), "confirm-me");
    // The selection's journal was loaded for the Conversation tab.
    let (path, events) = app.tabs.loaded.journal.as_ref().unwrap();
    assert_eq!(path, &app.list.selected.clone().unwrap());
    assert!(!events.as_ref().unwrap().is_empty());
}

#[test]
fn selection_follows_the_cycle_when_the_order_changes() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    for _ in 0..4 {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    assert_eq!(selected_name(&app), "await-pr");
    // Someone else confirms confirm-me: it moves down, the selection stays on await-pr.
    forgeloop::cycle::actions::confirm(
        &fx.ctx,
        &fx.paths("confirm-me"),
        None,
        "terminal",
        forgeloop::domain::state::Actor::Human,
    )
    .unwrap();
    d.apply(&mut app, Event::FilesChanged(vec![fx.state_path("confirm-me")]));
    assert_eq!(selected_name(&app), "await-pr");
    assert_eq!(names(&app)[0], "blocked");
}

#[test]
fn the_filter_narrows_and_escape_clears_it() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    key(&mut app, &mut d, KeyCode::Char('/'));
    assert!(app.list.filter_editing);
    chars(&mut app, &mut d, "await-");
    assert_eq!(names(&app), ["await-fix", "await-pr"]);
    assert_eq!(selected_name(&app), "await-fix", "the selection moves into the filtered rows");
    let (journal_of, _) = app.tabs.loaded.journal.as_ref().unwrap();
    assert_eq!(journal_of, &fx.state_path("await-fix"), "and its detail is loaded");
    key(&mut app, &mut d, KeyCode::Backspace);
    key(&mut app, &mut d, KeyCode::Enter);
    assert!(!app.list.filter_editing);
    assert_eq!(app.list.filter, "await");
    // Status words and repositories match too.
    key(&mut app, &mut d, KeyCode::Char('/'));
    for _ in 0..5 {
        key(&mut app, &mut d, KeyCode::Backspace);
    }
    chars(&mut app, &mut d, "ready_to acme");
    assert_eq!(names(&app), ["ready"]);
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Esc);
    assert!(app.list.filter.is_empty());
    assert_eq!(app.list.visible.len(), 6);
}

#[test]
fn n_jumps_to_the_next_cycle_needing_a_person() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    let mut seen = Vec::new();
    for _ in 0..4 {
        key(&mut app, &mut d, KeyCode::Char('n'));
        seen.push(selected_name(&app));
    }
    assert_eq!(seen, ["blocked", "ready", "confirm-me", "blocked"]);
}

#[test]
fn tabs_switch_and_load_what_they_show() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    // Select await-fix, open its detail, go to the Log tab.
    while selected_name(&app) != "await-fix" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.focus, Focus::Detail);
    key(&mut app, &mut d, KeyCode::Char('3'));
    assert_eq!(app.tabs.tab, Tab::Runs);
    assert_eq!(app.run_rows().len(), 1);
    let effects = app.update(Event::Cmd(Cmd::Tab(Tab::Log)));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Pane(PaneLoad::Log(LogRequest::Open { path, .. })) if path.ends_with("1-0123456789ab.log")))
    );
    d.settle(&mut app, effects);
    assert_eq!(app.tabs.tab, Tab::Log);
    assert!(app.tabs.log.loaded);
    assert_eq!(app.tabs.log.window.lines[0].text, "$ pytest -q");
    key(&mut app, &mut d, KeyCode::Char(']'));
    assert_eq!(app.tabs.tab, Tab::Diff);
    key(&mut app, &mut d, KeyCode::Char(']'));
    assert_eq!(app.tabs.tab, Tab::Project);
    for _ in 0..3 {
        key(&mut app, &mut d, KeyCode::Char('['));
    }
    assert_eq!(app.tabs.tab, Tab::Runs);
    key(&mut app, &mut d, KeyCode::Tab);
    assert_eq!(app.focus, Focus::List);
    key(&mut app, &mut d, KeyCode::Char('p'));
    assert_eq!(app.screen, Screen::Projects);
    key(&mut app, &mut d, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Cycles);
}

#[test]
fn the_log_searches_and_finds_the_first_error() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "await-fix" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    app.tabs.log.height.set(5);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Log));
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.focus, Focus::Detail);
    key(&mut app, &mut d, KeyCode::Char('e'));
    assert!(app.tabs.log.window.lines.iter().any(|l| l.text.contains("FAILED")), "{:?}", app.tabs.log.window.lines);
    assert!(!app.tabs.log.window.lines.iter().any(|l| l.text.contains('\u{1b}')), "ANSI is stripped");
    key(&mut app, &mut d, KeyCode::Char('g'));
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "assertionerror");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.log.search.state, SearchState::Found);
    let current = app.tabs.log.search.current.unwrap();
    let line = app.tabs.log.window.lines.iter().find(|l| l.offset == current).unwrap();
    assert!(line.text.contains("AssertionError"));
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert!(app.tabs.log.search.wrapped, "the only match is found again after wrapping");
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "no such text");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.log.search.state, SearchState::NotFound);
    key(&mut app, &mut d, KeyCode::Char('w'));
    assert!(app.tabs.log.wrap);
    key(&mut app, &mut d, KeyCode::Char('f'));
    assert!(app.tabs.log.follow);
    assert!(app.tabs.log.window.at_eof);
    key(&mut app, &mut d, KeyCode::Char('k'));
    assert!(!app.tabs.log.follow, "scrolling up stops following");
}

#[test]
fn confirming_a_brief_with_an_edit_that_fails_validation_changes_nothing() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    let path = fx.state_path("confirm-me");
    let before = std::fs::read(&path).unwrap();
    assert_eq!(selected_name(&app), "confirm-me");
    key(&mut app, &mut d, KeyCode::Char('c'));
    let Some(Popup::ConfirmBrief(dialog)) = app.popups.last() else { panic!("no dialog") };
    assert_eq!(dialog.question, QUESTION);
    assert_eq!(dialog.fields.len(), 5);
    // e asks the runtime to open the editor on the question and the brief.
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('e'))));
    let Some(Effect::EditBrief { text, .. }) = effects.first() else { panic!("{effects:?}") };
    assert!(text.contains("== WebGPT question ==") && text.contains("Goal: add dark mode."));
    // The person deletes two fields: the dialog says so and nothing changes.
    let broken = text
        .replace("Constraints: keep accessibility contrast.\n", "")
        .replace("Validation: run the frontend test suite.\n", "");
    d.apply(&mut app, Event::EditorFinished { path: path.clone(), result: Ok(broken) });
    let Some(Popup::ConfirmBrief(dialog)) = app.popups.last() else { panic!("dialog closed") };
    let error = dialog.error.clone().unwrap();
    assert!(error.contains("Constraints") && error.contains("Validation"), "{error}");
    assert!(dialog.edited.is_none());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Reopening the editor keeps the person's draft.
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('e'))));
    let Some(Effect::EditBrief { text: draft, .. }) = effects.first() else { panic!() };
    assert!(!draft.contains("Constraints: keep"));
    // Esc cancels: still nothing changed.
    key(&mut app, &mut d, KeyCode::Esc);
    assert!(app.popups.is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn confirming_an_edited_brief_goes_through_the_use_case_as_human_via_tui() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    let path = fx.state_path("confirm-me");
    key(&mut app, &mut d, KeyCode::Char('c'));
    let edited =
        forgeloop::tui::editor::compose("A sharper question?", &BRIEF.replace("add dark mode.", "add a dark theme."));
    d.apply(&mut app, Event::EditorFinished { path: path.clone(), result: Ok(edited) });
    let Some(Popup::ConfirmBrief(dialog)) = app.popups.last() else { panic!() };
    assert!(dialog.error.is_none());
    assert_eq!(dialog.fields[0].1, "add a dark theme.");
    key(&mut app, &mut d, KeyCode::Char('y'));
    assert!(app.popups.is_empty(), "the dialog closes on success");
    let state = read_state(&path);
    assert_eq!(state["status"], "AWAITING_WEBGPT_PR");
    assert_eq!(state["brief_confirmation"]["by"], "human");
    assert_eq!(state["brief_confirmation"]["via"], "tui");
    assert_eq!(state["webgpt_question"], "A sharper question?");
    assert_eq!(state["brief"]["goal"], "add a dark theme.");
    let entry = app.selected_entry().unwrap();
    assert_eq!(entry.status(), Some(Status::AwaitingWebgptPr), "the row shows the result");
    let events = forgeloop::store::journal::read(&fx.paths("confirm-me").journal()).unwrap().events;
    let confirmed =
        events.iter().find(|e| e.kind == "brief_confirmed" && e.actor == forgeloop::domain::state::Actor::Human);
    assert_eq!(confirmed.unwrap().data["edited"], true);
}

#[test]
fn confirm_is_refused_for_other_statuses() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    key(&mut app, &mut d, KeyCode::Char('j'));
    key(&mut app, &mut d, KeyCode::Char('c'));
    assert!(app.popups.is_empty());
    assert!(app.toast.as_ref().unwrap().error);
    assert!(!app.available(Cmd::ConfirmBrief));
}

#[test]
fn rerun_is_guarded_by_status() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    for name in ["await-pr", "confirm-me", "blocked", "gone"] {
        select(&mut app, &mut d, name);
        assert!(!app.available(Cmd::Rerun), "{name}");
        key(&mut app, &mut d, KeyCode::Char('r'));
        assert!(app.popups.is_empty(), "{name}");
        assert!(app.toast.as_ref().unwrap().text.contains("AWAITING_WEBGPT_FIX"), "{name}");
    }
    select(&mut app, &mut d, "ready");
    key(&mut app, &mut d, KeyCode::Char('r'));
    let Some(Popup::YesNo { ask: Ask::Rerun(_), body, .. }) = app.popups.last() else { panic!() };
    assert!(body.contains("override"), "{body}");
    assert!(body.contains("iteration 2 of 5"), "{body}");
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert!(app.live_runs.is_empty());
    select(&mut app, &mut d, "await-fix");
    key(&mut app, &mut d, KeyCode::Char('r'));
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('y'))));
    assert!(effects.contains(&Effect::Rerun { path: fx.state_path("await-fix") }));
    assert!(app.is_running(&fx.state_path("await-fix")));
    assert!(app.animating(), "the spinner ticks while it runs");
    // A second rerun of the same cycle is refused while the first runs.
    key(&mut app, &mut d, KeyCode::Char('r'));
    assert!(app.popups.is_empty());
    d.apply(
        &mut app,
        Event::RunFinished { path: fx.state_path("await-fix"), result: Ok("TEST_FAILED at iteration 2".into()) },
    );
    assert!(!app.animating());
}

#[test]
fn quitting_while_a_rerun_runs_asks_first_and_cancels_it() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "await-fix");
    key(&mut app, &mut d, KeyCode::Char('r'));
    key(&mut app, &mut d, KeyCode::Char('y'));
    key(&mut app, &mut d, KeyCode::Char('q'));
    assert!(!app.quit);
    assert!(matches!(app.popups.last(), Some(Popup::YesNo { ask: Ask::Quit, .. })));
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert!(!app.quit && app.popups.is_empty());
    key(&mut app, &mut d, KeyCode::Char('q'));
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('y'))));
    assert!(app.quit);
    assert_eq!(effects, vec![Effect::CancelRun { path: fx.state_path("await-fix") }, Effect::Quit]);
    // Without a run, q quits at once.
    let (mut idle, _) = fx.app("dark");
    let effects = idle.update(Event::Cmd(Cmd::Quit));
    assert_eq!(effects, vec![Effect::Quit]);
}

#[test]
fn abort_asks_for_a_reason_and_is_journaled_as_human() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "await-pr");
    let path = fx.state_path("await-pr");
    key(&mut app, &mut d, KeyCode::Char('a'));
    assert!(matches!(app.popups.last(), Some(Popup::Input { purpose: InputPurpose::Abort(_), .. })));
    key(&mut app, &mut d, KeyCode::Esc);
    assert_eq!(read_state(&path)["status"], "AWAITING_WEBGPT_PR", "Esc changes nothing");
    key(&mut app, &mut d, KeyCode::Char('a'));
    // An empty reason is refused in the dialog.
    for _ in 0..60 {
        key(&mut app, &mut d, KeyCode::Backspace);
    }
    key(&mut app, &mut d, KeyCode::Enter);
    let Some(Popup::Input { error, .. }) = app.popups.last() else { panic!() };
    assert!(error.is_some());
    chars(&mut app, &mut d, "wrong repository");
    key(&mut app, &mut d, KeyCode::Enter);
    let state = read_state(&path);
    assert_eq!(state["status"], "ABORTED");
    assert_eq!(state["abort"]["by"], "human");
    assert_eq!(state["abort"]["reason"], "wrong repository");
    assert!(!app.available(Cmd::Abort), "an ended cycle cannot be aborted again");
}

#[test]
fn aborting_a_running_cycle_cancels_the_run_then_aborts() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "await-fix");
    let path = fx.state_path("await-fix");
    key(&mut app, &mut d, KeyCode::Char('r'));
    key(&mut app, &mut d, KeyCode::Char('y'));
    key(&mut app, &mut d, KeyCode::Char('a'));
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Enter)));
    assert_eq!(effects, vec![Effect::CancelRun { path: path.clone() }], "the run holds the lock: cancel first");
    let effects = app.update(Event::RunFinished { path: path.clone(), result: Err("cancelled".into()) });
    assert!(effects.iter().any(|e| matches!(e, Effect::Abort { path: p, .. } if p == &path)));
    d.settle(&mut app, effects);
    assert_eq!(read_state(&path)["status"], "ABORTED");
}

#[test]
fn unblock_and_extend_go_through_the_human_use_cases() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "blocked");
    let path = fx.state_path("blocked");
    key(&mut app, &mut d, KeyCode::Char('u'));
    let Some(Popup::YesNo { body, .. }) = app.popups.last() else { panic!() };
    assert!(body.contains("no GPT-5") && body.contains("AWAITING_WEBGPT_PR"), "{body}");
    key(&mut app, &mut d, KeyCode::Char('y'));
    assert_eq!(read_state(&path)["status"], "AWAITING_WEBGPT_PR");
    key(&mut app, &mut d, KeyCode::Char('+'));
    chars(&mut app, &mut d, "x2");
    let Some(Popup::Input { value, .. }) = app.popups.last() else { panic!() };
    assert_eq!(value, "12", "only digits are typed");
    key(&mut app, &mut d, KeyCode::Backspace);
    key(&mut app, &mut d, KeyCode::Backspace);
    chars(&mut app, &mut d, "3");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(read_state(&path)["max_iterations"], 8);
    let events = forgeloop::store::journal::read(&fx.paths("blocked").journal()).unwrap().events;
    for kind in ["unblocked", "cap_extended"] {
        let event = events.iter().find(|e| e.kind == kind).unwrap();
        assert_eq!(event.actor, forgeloop::domain::state::Actor::Human, "{kind}");
    }
}

#[test]
fn file_changes_reload_only_what_changed() {
    let fx = mixed();
    let (mut app, _) = fx.app("dark");
    let state = fx.state_path("await-pr");
    let effects = app.update(Event::FilesChanged(vec![state.clone()]));
    assert_eq!(effects, vec![Effect::LoadCycles(vec![state.clone()])]);
    let journal = fx.paths("await-pr").journal();
    let effects = app.update(Event::FilesChanged(vec![journal]));
    assert_eq!(effects, vec![Effect::LoadCycles(vec![state])]);
    let new = fx.ctx.home.cycles_dir().join("new.json");
    assert_eq!(app.update(Event::FilesChanged(vec![new])), vec![Effect::Discover]);
    let record = fx.ctx.registry.join("acme/widget.json");
    assert_eq!(app.update(Event::FilesChanged(vec![record])), vec![Effect::LoadRegistry]);
    assert!(app.update(Event::FilesChanged(vec![fx.root().join("elsewhere.txt")])).is_empty());
}

#[test]
fn malformed_half_written_and_vanished_files_are_rows_not_crashes() {
    let fx = mixed();
    let garbage = fx.garbage("torn.json", b"{\"status\": \"AWAIT");
    let empty = fx.garbage("empty.json", b"");
    let binary = fx.garbage("binary.json", &[0xff, 0xfe, 0x00, 0x1b]);
    let (mut app, mut d) = fx.app("dark");
    for path in [&garbage, &empty, &binary] {
        let entry = app.list.cycles.iter().find(|c| &c.path == path).unwrap();
        assert!(entry.state.is_none() && entry.error.is_some(), "{path:?}");
    }
    assert_eq!(app.counts()[forgeloop::tui::app::StatusGroup::Unreadable as usize].1, 3);
    // The torn file is completed: it becomes a cycle row… or here, still an error (no request).
    std::fs::write(&garbage, b"{\"status\": \"AWAITING_WEBGPT_PR\", \"request\": \"r\"}").unwrap();
    d.apply(&mut app, Event::FilesChanged(vec![garbage.clone()]));
    let entry = app.list.cycles.iter().find(|c| c.path == garbage).unwrap();
    assert_eq!(entry.status(), Some(Status::AwaitingWebgptPr));
    // A vanished file is removed from the list.
    std::fs::remove_file(&empty).unwrap();
    d.apply(&mut app, Event::FilesChanged(vec![empty.clone()]));
    assert!(!app.list.cycles.iter().any(|c| c.path == empty));
    // Nothing panics drawing any of it, at any size.
    for (w, h) in [(80, 24), (40, 12), (12, 5), (200, 60)] {
        let _ = screen(&app, w, h);
    }
}

#[test]
fn help_and_hints_come_from_the_keymap() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    let hints: Vec<&str> = app.hints().iter().map(|(_, h)| *h).collect();
    assert!(hints.contains(&"confirm brief"), "{hints:?}");
    assert!(!hints.contains(&"rerun"), "rerun is not offered for a brief awaiting confirmation");
    key(&mut app, &mut d, KeyCode::Char('?'));
    assert!(matches!(app.popups.last(), Some(Popup::Help { .. })));
    let hints: Vec<&str> = app.hints().iter().map(|(_, h)| *h).collect();
    assert_eq!(hints, ["close"]);
    key(&mut app, &mut d, KeyCode::Esc);
    assert!(app.popups.is_empty());
}

/// A state the reference tool wrote (no timestamps, no binding, the SHA only in its report):
/// the control room shows its repository, tested SHA and an age from the file.
#[test]
fn a_reference_tool_state_shows_its_repository_and_age() {
    let fx = Fixture::new();
    let sha = "c".repeat(40);
    let state = serde_json::json!({
        "status": "READY_TO_MERGE", "request": "r", "intent_brief": "b", "webgpt_question": "q",
        "pr_ref": "https://github.com/acme/widget/pull/7", "iteration": 1, "max_iterations": 5,
        "task_space": "webgpt-orchestrator:old", "next_action": "n", "webgpt_handoff": "",
        "report": {"status": "TEST_PASSED", "repository": "acme/widget", "pull_request": 7, "head_sha": sha,
                   "commands": [], "comment_markdown": "", "comment_published": false}
    });
    fx.garbage("old.json", serde_json::to_string(&state).unwrap().as_bytes());
    let (app, _) = fx.app("dark");
    let entry = app.list.cycles.iter().find(|c| c.name() == "old").unwrap();
    assert!(entry.updated_at().is_some_and(|t| t.ends_with('Z')), "the file's age: {entry:?}");
    let loaded = entry.state.as_ref().unwrap();
    assert_eq!(loaded.effective_repository().as_deref(), Some("acme/widget"));
    assert_eq!(loaded.tested_head_sha(), Some(sha.as_str()));
}

fn notifications(d: &mut forgeloop::tui::sync::SyncDriver) -> Vec<String> {
    let found = d.unhandled.iter().filter_map(|e| if let Effect::Notify(text) = e { Some(text.clone()) } else { None });
    let found: Vec<String> = found.collect();
    d.unhandled.retain(|e| !matches!(e, Effect::Notify(_)));
    found
}

#[test]
fn a_cycle_that_starts_needing_the_person_rings_once_and_old_news_never_rings() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    assert_eq!(notifications(&mut d), Vec::<String>::new(), "what needed the person at startup is not news");
    let path = fx.state_path("await-pr");
    fx.block("await-pr", Status::BlockedModelUnavailable, "the model picker has no GPT-5");
    let effects = app.update(Event::FilesChanged(vec![path.clone()]));
    d.settle(&mut app, effects);
    assert_eq!(notifications(&mut d), ["await-pr needs you: BLOCKED_MODEL_UNAVAILABLE"]);
    // The same status loaded again (a journal append, a watcher repeat) does not ring again.
    let effects = app.update(Event::FilesChanged(vec![path.clone()]));
    d.settle(&mut app, effects);
    assert_eq!(notifications(&mut d), Vec::<String>::new());
    // A new cycle that waits for its brief rings; leaving a person-status does not.
    let new = fx.start("late-brief", true, 5);
    let effects = app.update(Event::Discovered(vec![new]));
    d.settle(&mut app, effects);
    assert_eq!(notifications(&mut d), ["late-brief needs you: a brief to confirm"]);
    forgeloop::cycle::actions::unblock(&fx.ctx, &fx.paths("await-pr")).unwrap();
    let effects = app.update(Event::FilesChanged(vec![path]));
    d.settle(&mut app, effects);
    assert_eq!(notifications(&mut d), Vec::<String>::new());
}

#[test]
fn notifications_are_off_with_the_config_switch() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    app.attention.enabled = false;
    fx.block("await-pr", Status::BlockedModelUnavailable, "x");
    let effects = app.update(Event::FilesChanged(vec![fx.state_path("await-pr")]));
    d.settle(&mut app, effects);
    assert_eq!(notifications(&mut d), Vec::<String>::new());
}

#[test]
fn a_run_another_process_holds_shows_as_testing_and_x_asks_that_process_to_stop() {
    let fx = mixed();
    let paths = fx.paths("await-pr");
    // The kernel names this process as the lock holder, and the state says it is testing.
    let _lock = forgeloop::store::lock::FileLock::try_acquire(&paths.lock()).unwrap();
    let mut state = read_state(&paths.state);
    let started = (t0() - chrono::Duration::seconds(65)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    state["running"] = serde_json::json!({"pid": std::process::id(), "started_at": started, "pr": "acme/widget#7",
        "head_sha": "ab".repeat(20), "iteration": 1, "log_path": "runs/1-abababababab.log", "actor": "agent"});
    std::fs::write(&paths.state, state.to_string()).unwrap();
    std::fs::create_dir_all(paths.runs()).unwrap();
    std::fs::write(paths.runs().join("1-abababababab.log"), "$ cargo test --workspace\nrunning 12 tests\n").unwrap();
    let (mut app, mut d) = fx.app("dark");
    let text = screen(&app, 160, 30);
    let row = text.lines().find(|l| l.contains("await-pr")).unwrap_or_default().to_owned();
    assert!(row.contains("▶ TESTING 1:05") && row.contains("$ cargo test --workspace"), "{row}");
    select(&mut app, &mut d, "await-pr");
    assert!(
        app.available(Cmd::CancelRun) && !app.available(Cmd::Rerun),
        "a run in progress is cancellable, not rerunnable"
    );
    key(&mut app, &mut d, KeyCode::Char('x'));
    let Some(Popup::YesNo { body, .. }) = app.popups.last() else { panic!("no popup: {:?}", app.toast) };
    assert!(
        body.contains(&format!("forgeloop pid {}", std::process::id())) && body.contains("`cargo test --workspace`"),
        "{body}"
    );
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('y'))));
    assert_eq!(effects, vec![Effect::StopRun { path: paths.state.clone() }]);
}

#[test]
fn a_wait_for_the_repositorys_ci_shows_as_ci_with_each_checks_state() {
    let fx = mixed();
    let paths = fx.paths("await-pr");
    let _lock = forgeloop::store::lock::FileLock::try_acquire(&paths.lock()).unwrap();
    let mut state = read_state(&paths.state);
    let started = (t0() - chrono::Duration::seconds(192)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    state["running"] = serde_json::json!({"pid": std::process::id(), "started_at": started, "pr": "acme/widget#7",
        "head_sha": "ab".repeat(20), "iteration": 1, "log_path": "runs/1-abababababab.log", "actor": "agent",
        "executor": "github-checks"});
    std::fs::write(&paths.state, state.to_string()).unwrap();
    std::fs::create_dir_all(paths.runs()).unwrap();
    std::fs::write(
        paths.runs().join("1-abababababab.log"),
        "forgeloop: waiting for the repository's CI on abab (checks: test, lint)\n\
check test: not_reported\ncheck lint: queued\ncheck test: in_progress 3m12s\n",
    )
    .unwrap();
    let (mut app, mut d) = fx.app("dark");
    let text = screen(&app, 160, 30);
    let row = text.lines().find(|l| l.contains("await-pr")).unwrap_or_default().to_owned();
    assert!(row.contains("▶ CI 3:12") && row.contains("test: in_progress · lint: queued"), "{row}");
    assert!(!row.contains("TESTING"), "{row}");
    // Cancel stops the wait the same way it stops a local run.
    select(&mut app, &mut d, "await-pr");
    assert!(app.available(Cmd::CancelRun));
}

// ----- the Diff tab (design §6.7) -----

const SHA_A: &str = "aaaaaaaaaaaa1111111111111111111111111111";
const SHA_B: &str = "bbbbbbbbbbbb2222222222222222222222222222";
const SHA_C: &str = "cccccccccccc3333333333333333333333333333";

/// ready (one passed run at A, its whole-PR diff cached) and fixing (failed runs at B then C,
/// both whole-PR diffs and the since-last one cached).
fn diffs() -> Fixture {
    let mut fx = Fixture::new();
    fx.at(30).start("ready", false, 5);
    fx.run("ready", true, SHA_A, "$ pytest -q\n41 passed\n[exit 0 after 3.0s]\n");
    fx.diff_cache("ready", None, SHA_A, &sample_diff());
    fx.at(20).start("fixing", false, 5);
    fx.run("fixing", false, SHA_B, &failing_log());
    fx.run("fixing", false, SHA_C, &failing_log());
    fx.diff_cache("fixing", None, SHA_B, &sample_diff());
    fx.diff_cache("fixing", None, SHA_C, &sample_diff().replace("Light and dark.", "Light, dark and auto."));
    fx.diff_cache(
        "fixing",
        Some(SHA_B),
        SHA_C,
        "diff --git a/docs/appearance.md b/docs/appearance.md\nindex 6666666..8888888 100644\n--- a/docs/appearance.md\n+++ b/docs/appearance.md\n@@ -1,3 +1,3 @@\n # Appearance\n-Light and dark.\n+Light, dark and auto.\n See the settings page.\n",
    );
    fx
}

fn open_diff(app: &mut forgeloop::tui::App, d: &mut forgeloop::tui::sync::SyncDriver, name: &str) {
    select(app, d, name);
    key(app, d, KeyCode::Enter);
    key(app, d, KeyCode::Char('5'));
    assert_eq!(app.tabs.tab, Tab::Diff);
}

fn shown_lines(app: &forgeloop::tui::App) -> Vec<String> {
    let height = usize::from(app.tabs.diff.height.get());
    (app.tabs.diff.top..app.tabs.diff.top + height)
        .filter_map(|n| app.tabs.diff.line(n).map(|l| l.text.clone()))
        .collect()
}

#[test]
fn the_diff_tab_moves_between_files_and_hunks() {
    let fx = diffs();
    let (mut app, mut d) = fx.app("dark");
    app.tabs.diff.height.set(6);
    open_diff(&mut app, &mut d, "ready");
    assert_eq!(app.tabs.diff.state, DiffState::Ready);
    let doc = app.tabs.diff.doc.clone().unwrap();
    let files: Vec<(&str, Option<&str>, bool)> =
        doc.files.iter().map(|f| (f.path.as_str(), f.old_path.as_deref(), f.binary)).collect();
    assert_eq!(
        files,
        [
            ("app/theme.py", None, false),
            ("tests/test_theme.py", None, false),
            ("app/legacy_colors.py", None, false),
            ("docs/appearance.md", Some("docs/themes.md"), false),
            ("static/moon.png", None, true),
        ]
    );
    assert_eq!(doc.size.words(), "5 files +10 −5");
    assert_eq!(shown_lines(&app)[0], "diff --git a/app/theme.py b/app/theme.py");
    // Hunks: the first, the second, then on into the next file.
    key(&mut app, &mut d, KeyCode::Char('}'));
    assert_eq!((app.tabs.diff.file, app.tabs.diff.hunk), (0, Some(0)));
    assert_eq!(shown_lines(&app)[0], "@@ -1,5 +1,6 @@");
    key(&mut app, &mut d, KeyCode::Char('}'));
    assert_eq!((app.tabs.diff.file, app.tabs.diff.hunk), (0, Some(1)));
    assert!(shown_lines(&app).contains(&"@@ -20,3 +21,5 @@ def save(prefs, theme):".to_owned()));
    key(&mut app, &mut d, KeyCode::Char('}'));
    assert_eq!((app.tabs.diff.file, app.tabs.diff.hunk), (1, Some(0)));
    key(&mut app, &mut d, KeyCode::Char('{'));
    assert_eq!((app.tabs.diff.file, app.tabs.diff.hunk), (0, Some(1)), "back into the previous file's last hunk");
    // Files, and the lines shown are always the selected file's.
    key(&mut app, &mut d, KeyCode::Char('J'));
    key(&mut app, &mut d, KeyCode::Char('J'));
    assert_eq!((app.tabs.diff.file, app.tabs.diff.hunk), (2, None));
    let lines = shown_lines(&app);
    assert_eq!(lines[0], "diff --git a/app/legacy_colors.py b/app/legacy_colors.py");
    key(&mut app, &mut d, KeyCode::Char('G'));
    let lines = shown_lines(&app);
    assert!(
        lines.iter().all(|l| !l.contains('\u{1b}') && !l.contains('\u{7}')),
        "control sequences stripped: {lines:?}"
    );
    assert!(lines.contains(&"-gone".to_owned()), "{lines:?}");
    key(&mut app, &mut d, KeyCode::Char('J'));
    key(&mut app, &mut d, KeyCode::Char('J'));
    key(&mut app, &mut d, KeyCode::Char('J'));
    assert_eq!(app.tabs.diff.file, 4, "stops at the last file");
    key(&mut app, &mut d, KeyCode::Char('K'));
    assert_eq!(app.tabs.diff.file, 3);
    // Scrolling by lines stays in the file and forgets the current hunk.
    let (start, end) = app.tabs.diff.section();
    for _ in 0..20 {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    assert_eq!(app.tabs.diff.top, end - 6, "the last line reaches the bottom, no further");
    key(&mut app, &mut d, KeyCode::Char('g'));
    assert_eq!((app.tabs.diff.top, app.tabs.diff.hunk), (start, None));
    // Wrap and the keys of the tab are in the footer, from the one key table.
    key(&mut app, &mut d, KeyCode::Char('w'));
    assert!(app.tabs.diff.wrap);
    let hints: Vec<&str> = app.hints().iter().map(|(_, h)| *h).collect();
    for hint in ["next file", "prev file", "next hunk", "prev hunk", "whole PR/since last", "search", "wrap"] {
        assert!(hints.contains(&hint), "{hint} missing from {hints:?}");
    }
}

#[test]
fn the_diff_tab_searches_every_file_and_wraps_around() {
    let fx = diffs();
    let (mut app, mut d) = fx.app("dark");
    app.tabs.diff.height.set(5);
    open_diff(&mut app, &mut d, "ready");
    key(&mut app, &mut d, KeyCode::Char('/'));
    assert_eq!(app.contexts(), [forgeloop::tui::keymap::Context::SearchInput]);
    chars(&mut app, &mut d, "settings");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.diff.search.state, SearchState::Found);
    assert_eq!(app.tabs.diff.file, 3, "the match's file is selected");
    let current = app.tabs.diff.search.current.unwrap() as usize;
    assert_eq!(app.tabs.diff.line(current).unwrap().text, " See the settings page.");
    assert!(shown_lines(&app).contains(&" See the settings page.".to_owned()));
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert_eq!(app.tabs.diff.search.state, SearchState::Found);
    assert!(app.tabs.diff.search.wrapped, "the only match is found again after wrapping");
    // Smart case: an uppercase letter makes it exact.
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "SUPPORTED");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.diff.file, 0);
    key(&mut app, &mut d, KeyCode::Char('N'));
    assert_eq!(app.tabs.diff.search.state, SearchState::Found);
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "no such text");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.diff.search.state, SearchState::NotFound);
}

#[test]
fn whole_pr_and_since_last_run_toggle_and_a_first_run_says_why_not() {
    let fx = diffs();
    let (mut app, mut d) = fx.app("dark");
    open_diff(&mut app, &mut d, "fixing");
    let target = app.tabs.diff.target.clone().unwrap();
    assert_eq!((target.iteration, target.head_sha.as_str(), target.old.is_none()), (2, SHA_C, true));
    for _ in 0..3 {
        key(&mut app, &mut d, KeyCode::Char('J'));
    }
    assert!(shown_lines(&app).iter().any(|l| l == "+Light, dark and auto."), "the last run's head");
    key(&mut app, &mut d, KeyCode::Char('s'));
    let target = app.tabs.diff.target.clone().unwrap();
    assert_eq!(target.old, Some((1, SHA_B.to_owned())));
    assert_eq!(app.tabs.diff.doc.as_ref().unwrap().size.words(), "1 file +1 −1");
    let text = screen(&app, 120, 40);
    assert!(text.contains("Since the last run: run 1 · bbbbbbbbbbbb → run 2 · cccccccccccc"), "{text}");
    // The same mode on a cycle with one run: unavailable, and the pane says so.
    key(&mut app, &mut d, KeyCode::Tab);
    select(&mut app, &mut d, "ready");
    assert!(app.tabs.diff.since_last);
    let DiffState::Empty(reason) = &app.tabs.diff.state else { panic!("{:?}", app.tabs.diff.state) };
    assert!(reason.contains("run 1 is the cycle's first") && reason.contains("Press s"), "{reason}");
    assert!(screen(&app, 120, 40).contains("the cycle's first"));
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('s'));
    assert_eq!(app.tabs.diff.state, DiffState::Ready);
    assert!(app.tabs.diff.target.as_ref().unwrap().old.is_none());
}

#[test]
fn a_diff_not_cached_yet_is_made_through_github_and_its_error_is_shown() {
    let fx = diffs();
    let (mut app, mut d) = fx.app("dark");
    std::fs::remove_file(
        forgeloop::cycle::diff::whole_pr_cache(&fx.paths("ready"), SHA_A, None).with_extension("json"),
    )
    .unwrap();
    d.unhandled.clear();
    open_diff(&mut app, &mut d, "ready");
    assert_eq!(app.tabs.diff.state, DiffState::Making);
    let made: Vec<&Effect> =
        d.unhandled.iter().filter(|e| matches!(e, Effect::Pane(PaneLoad::Diff(DiffLoad::Make { .. })))).collect();
    let [Effect::Pane(PaneLoad::Diff(DiffLoad::Make { generation, path, iteration: 1, since_last: false }))] =
        made.as_slice()
    else {
        panic!("{:?}", d.unhandled)
    };
    assert_eq!(path, &fx.state_path("ready"));
    assert!(app.animating(), "the spinner turns while GitHub answers");
    assert!(screen(&app, 120, 40).contains("loading… asking GitHub for the diff of run 1"));
    let generation = *generation;
    d.apply(
        &mut app,
        Event::Pane(PaneMsg::Diff(DiffEvent::Opened {
            generation,
            result: Err("GitHub answered 404: no such PR".into()),
        })),
    );
    assert_eq!(app.tabs.diff.state, DiffState::Failed("GitHub answered 404: no such PR".into()));
    assert!(screen(&app, 120, 40).contains("GitHub answered 404: no such PR"));
    // Showing the tab again tries again.
    d.unhandled.clear();
    key(&mut app, &mut d, KeyCode::Char('5'));
    assert!(
        d.unhandled.iter().any(|e| matches!(e, Effect::Pane(PaneLoad::Diff(DiffLoad::Make { .. })))),
        "{:?}",
        d.unhandled
    );
}

#[test]
fn d_in_the_runs_tab_opens_the_diff_at_that_run() {
    let fx = diffs();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "fixing");
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('3'));
    let hints: Vec<&str> = app.hints().iter().map(|(_, h)| *h).collect();
    assert!(hints.contains(&"show diff"), "{hints:?}");
    key(&mut app, &mut d, KeyCode::Char('j'));
    assert_eq!(app.run_rows()[app.tabs.loaded.run].iteration, Some(1));
    key(&mut app, &mut d, KeyCode::Char('d'));
    assert_eq!(app.tabs.tab, Tab::Diff);
    let target = app.tabs.diff.target.clone().unwrap();
    assert_eq!((target.iteration, target.head_sha.as_str()), (1, SHA_B));
    assert_eq!(app.tabs.diff.state, DiffState::Ready);
    for _ in 0..3 {
        key(&mut app, &mut d, KeyCode::Char('J'));
    }
    assert!(shown_lines(&app).iter().any(|l| l == "+Light and dark."), "run 1's head");
}

#[test]
fn ready_rows_show_the_size_of_the_change_and_a_missing_size_is_made_once() {
    let mut fx = diffs();
    fx.at(10).start("ready-unsized", false, 5);
    fx.run("ready-unsized", true, SHA_B, "$ pytest -q\n[exit 0 after 1.0s]\n");
    let (mut app, mut d) = fx.app("dark");
    let sized = app.list.cycles.iter().find(|c| c.name() == "ready").unwrap();
    assert_eq!(sized.diff_size.map(|s| s.words()).as_deref(), Some("5 files +10 −5"));
    let text = screen(&app, 160, 30);
    let row = text.lines().find(|l| l.contains("READY") && !l.contains("ready-unsized")).unwrap_or_default();
    assert!(row.contains("5 files +10 −5"), "{row}");
    // The other ready cycle has no diff yet: it is made in the background, once.
    let asked: Vec<&Effect> = d.unhandled.iter().filter(|e| matches!(e, Effect::SizeDiff { .. })).collect();
    assert_eq!(asked, [&Effect::SizeDiff { path: fx.state_path("ready-unsized"), iteration: 1 }]);
    let path = fx.state_path("ready-unsized");
    d.apply(&mut app, Event::FilesChanged(vec![path.clone()]));
    assert_eq!(d.unhandled.iter().filter(|e| matches!(e, Effect::SizeDiff { .. })).count(), 1, "not asked twice");
    fx.diff_cache("ready-unsized", None, SHA_B, &sample_diff());
    d.apply(&mut app, Event::DiffSized { path: path.clone(), result: Ok(()) });
    let entry = app.list.cycles.iter().find(|c| c.path == path).unwrap();
    assert_eq!(entry.diff_size.map(|s| s.words()).as_deref(), Some("5 files +10 −5"));
    assert!(app.sizing.is_none());
    // Other statuses never show or make one.
    let fixing = app.list.cycles.iter().find(|c| c.name() == "fixing").unwrap();
    assert!(fixing.diff_size.is_none());
    assert!(!d.unhandled.iter().any(|e| matches!(e, Effect::SizeDiff { path, .. } if path == &fixing.path)));
    // At most a budget of them a session.
    std::fs::remove_file(
        forgeloop::cycle::diff::whole_pr_cache(&fx.paths("ready-unsized"), SHA_B, None).with_extension("json"),
    )
    .unwrap();
    app.sized = (0..forgeloop::tui::app::SIZE_BUDGET).map(|i| (fx.root().join(i.to_string()), String::new())).collect();
    d.unhandled.clear();
    d.apply(&mut app, Event::FilesChanged(vec![path.clone()]));
    assert!(app.list.cycles.iter().find(|c| c.path == path).unwrap().diff_size.is_none());
    assert!(!d.unhandled.iter().any(|e| matches!(e, Effect::SizeDiff { .. })), "{:?}", d.unhandled);
}

#[test]
fn a_50000_line_diff_opens_without_holding_its_lines() {
    let fx = diffs();
    let mut text = String::new();
    for f in 0..50 {
        text.push_str(&format!(
            "diff --git a/src/f{f}.rs b/src/f{f}.rs\nindex 1..2 100644\n--- a/src/f{f}.rs\n+++ b/src/f{f}.rs\n"
        ));
        for h in 0..10 {
            text.push_str(&format!("@@ -{0},99 +{0},99 @@\n", h * 100 + 1));
            for l in 0..99 {
                text.push_str(&format!("{}line {l} of hunk {h} of file {f}\n", if l % 3 == 0 { '+' } else { ' ' }));
            }
        }
    }
    let total = text.lines().count();
    assert!(total >= 50_000, "{total}");
    fx.diff_cache("ready", None, SHA_A, &text);
    drop(text);
    let (mut app, mut d) = fx.app("dark");
    open_diff(&mut app, &mut d, "ready");
    let _ = screen(&app, 120, 40);
    let height = usize::from(app.tabs.diff.height.get());
    let doc = app.tabs.diff.doc.clone().unwrap();
    assert_eq!((doc.lines, doc.files.len(), doc.size.additions), (total, 50, 50 * 10 * 33));
    // What the tab keeps: the index (per file, per hunk), one offset every 64 lines, and
    // the lines around the viewport — never the whole text.
    assert_eq!(doc.checkpoints.len(), total.div_ceil(forgeloop::tui::pager::diff::STRIDE));
    let bound = height + 2 * DIFF_MARGIN.max(height);
    assert!(app.tabs.diff.window.len() <= bound, "{} lines kept", app.tabs.diff.window.len());
    // Far into the diff: the last file's last lines, read from the nearest checkpoint.
    key(&mut app, &mut d, KeyCode::Char('G'));
    for _ in 0..49 {
        key(&mut app, &mut d, KeyCode::Char('J'));
    }
    key(&mut app, &mut d, KeyCode::Char('G'));
    assert!(app.tabs.diff.window.len() <= bound);
    let lines = shown_lines(&app);
    assert_eq!(lines.len(), height);
    assert_eq!(lines.last().unwrap(), " line 98 of hunk 9 of file 49");
    let text = screen(&app, 120, 40);
    assert!(text.contains("line 98 of hunk 9 of file 49") && text.contains("file 50/50"), "{text}");
}

/// The status line names the waiting brief and the keys that confirm it; following them,
/// from another selection, confirms it as the person, via the control room.
#[test]
fn the_status_line_says_how_to_confirm_a_waiting_brief_and_its_keys_do_it() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "await-pr");
    let status_line = |app: &forgeloop::tui::App| screen(app, 100, 30).lines().nth(28).unwrap_or_default().to_owned();
    let line = status_line(&app);
    // Briefs to confirm sort first: the key to the top reaches it (n would visit other rows first).
    assert!(line.contains("confirm-me: confirm its brief — g select · c review · y confirm"), "{line}");
    key(&mut app, &mut d, KeyCode::Char('g'));
    assert_eq!(selected_name(&app), "confirm-me");
    assert!(status_line(&app).contains("— c review · y confirm"), "{}", status_line(&app));
    key(&mut app, &mut d, KeyCode::Char('c'));
    assert!(matches!(app.popups.last(), Some(Popup::ConfirmBrief(_))));
    key(&mut app, &mut d, KeyCode::Char('y'));
    let state = read_state(&fx.state_path("confirm-me"));
    assert_eq!(state["status"], "AWAITING_WEBGPT_PR");
    assert_eq!(state["brief_confirmation"]["via"], "tui");
    assert!(!status_line(&app).contains("confirm its brief"), "nothing waits any more: {}", status_line(&app));
}

/// `G` in a text tab stops at its last full screen (it used to scroll to line 2000 and show an
/// empty pane, with `k` climbing back one line at a time).
#[test]
fn g_in_a_text_tab_shows_the_end_and_k_climbs_at_once() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "await-fix");
    key(&mut app, &mut d, KeyCode::Char('2'));
    key(&mut app, &mut d, KeyCode::Tab);
    let _ = screen(&app, 80, 24);
    key(&mut app, &mut d, KeyCode::Char('G'));
    let end = screen(&app, 80, 24);
    let max = app.tabs.conversation.text.max_scroll.get();
    assert!(max > 0 && max < 500, "the conversation is longer than a screen, and its end is near: {max}");
    assert_eq!(app.tabs.conversation.text.scroll, max);
    assert!(
        end.contains("`PR_URL: <url>`."),
        "the end of the conversation (the outbox's last line) is on screen:\n{end}"
    );
    key(&mut app, &mut d, KeyCode::Char('k'));
    assert_eq!(app.tabs.conversation.text.scroll, max - 1);
}

/// On the selection bar every cell takes the bar's colours: a blue `AWAIT PR` or a cyan gauge
/// on a cyan bar could not be read (the recording of the demo showed it).
#[test]
fn the_selected_row_reads_in_the_bars_colours() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "await-pr");
    let terminal = draw(&app, 120, 30);
    let buffer = terminal.backend().buffer();
    let bar = app.theme.selection;
    let y =
        (0..30).find(|&y| (0..120).map(|x| buffer[(x, y)].symbol()).collect::<String>().contains("await-pr")).unwrap();
    let row: String = (0..120).map(|x| buffer[(x, y)].symbol()).collect();
    assert!(row.contains("AWAIT PR"), "{row}");
    for x in 1..119 {
        let cell = &buffer[(x, y)];
        if cell.symbol().trim().is_empty() || "┃│".contains(cell.symbol()) {
            continue;
        }
        assert_eq!((cell.fg, cell.bg), (bar.fg.unwrap(), bar.bg.unwrap()), "column {x} ({:?}) of {row}", cell.symbol());
    }
}

#[test]
fn a_run_refused_network_shows_its_hosts_and_a_allows_them_in_the_persons_config() {
    let mut fx = Fixture::new();
    let config = fx.root().join("config.toml");
    std::fs::write(&config, "# mine\n[network]\nallow = [\"registries\"]\n").unwrap();
    fx.ctx.config_path = Some(config.clone());
    fx.start("deps", false, 5);
    fx.sent("deps");
    fx.reply("deps", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.needs_network(
        "deps",
        "0123456789abcdef0123456789abcdef01234567",
        &["index.example.com:8931", "pypi.example.com"],
    );
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "deps");
    cmd(&mut app, &mut d, Cmd::SwitchFocus);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let text = screen(&app, 100, 24);
    assert!(text.contains("needs network"), "{text}");
    assert!(text.contains("refused: index.example.com:8931, pypi.example.com — A allows them"), "{text}");

    key(&mut app, &mut d, KeyCode::Char('A'));
    let Some(Popup::YesNo { body, ask, .. }) = app.popups.last() else { panic!("no dialog") };
    assert_eq!(ask, &Ask::AllowHosts(fx.state_path("deps")));
    assert!(
        body.contains(
            "[network.repositories.\"acme/widget\"]\nallow = [\"index.example.com:8931\", \"pypi.example.com\"]"
        ),
        "{body}"
    );
    // No: nothing written.
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "# mine\n[network]\nallow = [\"registries\"]\n");
    // An agent blocked in `forgeloop wait` wakes when the person allows (the status stays).
    let paths = fx.paths("deps");
    let waiter = std::thread::spawn(move || {
        forgeloop::cycle::wait::wait(&paths, &[], Some(std::time::Duration::from_secs(30))).map(|s| s.needs_network)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    key(&mut app, &mut d, KeyCode::Char('A'));
    key(&mut app, &mut d, KeyCode::Char('y'));
    let woke = waiter.join().unwrap().expect("wait returned on the person's allow");
    assert!(woke.is_some_and(|n| n.allowed_at.is_some()));
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.starts_with("# mine\n[network]\nallow = [\"registries\"]\n"), "{written}");
    let loaded = forgeloop::config::Config::load(&config, true).unwrap();
    assert_eq!(loaded.network.for_repository("acme/widget").allow.entries().len(), 3, "{written}");
    let state = read_state(&fx.state_path("deps"));
    assert!(state["needs_network"]["allowed_at"].is_string(), "{state:#}");
    assert_eq!(state["iteration"], 0);
    let events = forgeloop::store::journal::read(&fx.paths("deps").journal()).unwrap().events;
    let allowed = events.iter().find(|e| e.kind == "network_allowed").expect("journaled");
    assert_eq!(allowed.actor, forgeloop::domain::state::Actor::Human);
    assert_eq!(allowed.data["allow"], serde_json::json!(["index.example.com:8931", "pypi.example.com"]));
    assert!(!app.available(Cmd::AllowHosts), "allowed once");
    let text = screen(&app, 100, 24);
    assert!(text.contains("allowed by you"), "{text}");

    // Never for an agent, whatever calls the use case.
    let refused = forgeloop::cycle::allow_network::allow_refused_hosts(
        &fx.ctx,
        &fx.paths("deps"),
        forgeloop::domain::state::Actor::Agent,
    );
    assert!(refused.is_err());
}

/// A cycle started without a question: the Brief tab says forgeloop proposed it from the
/// brief, for the person to confirm or edit; confirming keeps it.
#[test]
fn a_question_proposed_from_the_brief_says_so_until_confirmed() {
    let fx = Fixture::new();
    let request = forgeloop::cycle::start::StartRequest {
        state: "proposed".into(),
        request: "Add dark mode".into(),
        webgpt_question: None,
        intent_brief: Some(tui_support::BRIEF.into()),
        max_iterations: 5,
        await_confirmation: true,
        continue_from: None,
        new_repository: None,
        repository: None,
        driver: None,
    };
    forgeloop::cycle::start::start(&fx.ctx, request).unwrap();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "proposed");
    let text = screen(&app, 120, 40);
    assert!(text.contains("proposed by forgeloop from the brief: confirm or edit it"), "{text}");
    assert!(text.contains("Implement this and open a pull request with it"), "{text}");
    let path = fx.state_path("proposed");
    forgeloop::cycle::actions::confirm(
        &fx.ctx,
        &fx.paths("proposed"),
        None,
        "tui",
        forgeloop::domain::state::Actor::Human,
    )
    .unwrap();
    let state = read_state(&path);
    assert_eq!(state["webgpt_question_proposed"], true, "{state:#}");
    assert!(state["outbox"]["text"].as_str().unwrap().contains("Implement this and open a pull request with it"));
}

/// A run that ended NEEDS_NETWORK keeps its own log: after the next run of the same head
/// counted, the Runs tab still has both, each with its own log.
#[test]
fn an_earlier_needs_network_run_keeps_its_row_and_log_after_the_run_that_counted() {
    let fx = Fixture::new();
    fx.start("deps", false, 5);
    fx.sent("deps");
    fx.reply("deps", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let first = fx.needs_network("deps", sha, &["pypi.example.com"]);
    let second = fx.run("deps", true, sha, "$ pytest -q\n3 passed\n");
    assert_ne!(first, second, "the second run overwrote the first's log");
    assert!(first.exists() && second.exists());
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "deps");
    cmd(&mut app, &mut d, Cmd::SwitchFocus);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let text = screen(&app, 120, 24);
    assert!(text.contains("passed"), "{text}");
    assert!(text.contains("needs network"), "{text}");
    let logs: Vec<_> = app.run_rows().iter().map(|r| (r.result, r.log.clone())).collect();
    use forgeloop::tui::app::RunResult;
    assert_eq!(logs, [(RunResult::Passed, Some(second.clone())), (RunResult::NeedsNetwork, Some(first.clone()))]);
    // The earlier run, selected, says what was refused.
    cmd(&mut app, &mut d, Cmd::Down);
    let text = screen(&app, 120, 24);
    assert!(text.contains("refused: pypi.example.com"), "{text}");
}

/// An attack the third hostile review found: a PR asked for the metadata endpoint, an older
/// forgeloop proposed `169.254.169.254:80`, and `A`, `y` added it. A state file holding such an
/// entry (written by that older release) offers no `A`; the key does nothing, the config stays.
#[test]
fn a_is_never_offered_for_an_address_that_is_not_public() {
    let mut fx = Fixture::new();
    let config = fx.root().join("config.toml");
    std::fs::write(&config, "[network]\nallow = [\"registries\"]\n").unwrap();
    fx.ctx.config_path = Some(config.clone());
    fx.start("probe", false, 5);
    fx.sent("probe");
    fx.reply("probe", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.needs_network("probe", "0123456789abcdef0123456789abcdef01234567", &["169.254.169.254:80", "10.0.0.7:5432"]);
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "probe");
    assert!(!app.available(Cmd::AllowHosts));
    key(&mut app, &mut d, KeyCode::Char('A'));
    key(&mut app, &mut d, KeyCode::Char('y'));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[network]\nallow = [\"registries\"]\n");
    cmd(&mut app, &mut d, Cmd::SwitchFocus);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let text = screen(&app, 120, 24);
    assert!(text.contains("refused: 169.254.169.254:80, 10.0.0.7:5432 — by policy"), "{text}");
    // The use case refuses it whoever calls it.
    let refused = forgeloop::cycle::allow_network::allow_refused_hosts(
        &fx.ctx,
        &fx.paths("probe"),
        forgeloop::domain::state::Actor::Human,
    );
    assert!(refused.is_err());
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[network]\nallow = [\"registries\"]\n");
}

/// A person reviewing a ready PR's diff (prompt sent, PR found, tests passed, diff cached).
fn reviewing() -> Fixture {
    let mut fx = Fixture::new();
    fx.at(30).start("review", false, 5);
    fx.sent("review");
    fx.reply("review", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.run("review", true, SHA_A, "$ pytest -q\n41 passed\n[exit 0 after 3.0s]\n");
    fx.diff_cache("review", None, SHA_A, &sample_diff());
    fx
}

fn journal(fx: &Fixture, name: &str) -> Vec<forgeloop::store::journal::Event> {
    forgeloop::store::journal::read(&fx.paths(name).journal()).unwrap().events
}

#[test]
fn m_is_offered_only_where_a_message_for_webgpt_would_be_taken() {
    let mut fx = mixed();
    fx.at(4).start("capped", false, 1);
    fx.run("capped", false, SHA_B, &failing_log());
    let (mut app, mut d) = fx.app("dark");
    for (name, offered) in [
        ("await-pr", true),
        ("await-fix", true),
        ("ready", true),
        ("capped", false),
        ("confirm-me", false),
        ("blocked", false),
        ("gone", false),
    ] {
        select(&mut app, &mut d, name);
        assert_eq!(app.available(Cmd::MessageWebgpt), offered, "{name}");
        assert_eq!(app.hints().iter().any(|(k, h)| k == "m" && *h == "message WebGPT"), offered, "{name}");
        let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
        let editing = effects.iter().any(|e| matches!(e, Effect::EditMessage { .. }));
        assert_eq!(editing, offered, "{name}: {effects:?}");
        if !offered {
            let toast = app.toast.clone().unwrap();
            assert!(toast.error, "{name}: {toast:?}");
            assert!(app.popups.is_empty());
        }
    }
    // The capped cycle is still AWAITING_WEBGPT_FIX: the cap, not the status, refuses it.
    select(&mut app, &mut d, "capped");
    assert_eq!(app.selected_state().unwrap().status, Status::AwaitingWebgptFix);
    key(&mut app, &mut d, KeyCode::Char('m'));
    assert!(app.toast.as_ref().unwrap().text.contains("iteration cap"), "{:?}", app.toast);
    // Every detail tab offers it, the Diff tab included.
    select(&mut app, &mut d, "await-fix");
    key(&mut app, &mut d, KeyCode::Enter);
    for tab in Tab::ALL {
        cmd(&mut app, &mut d, Cmd::Tab(*tab));
        assert_eq!(app.focus, Focus::Detail);
        assert!(app.hints().iter().any(|(k, _)| k == "m"), "{tab:?}: {:?}", app.hints());
        let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
        assert!(matches!(effects.first(), Some(Effect::EditMessage { .. })), "{tab:?}: {effects:?}");
    }
}

#[test]
fn a_message_written_on_the_diff_tab_goes_to_the_outbox_as_the_persons() {
    let fx = reviewing();
    let (mut app, mut d) = fx.app("dark");
    let path = fx.state_path("review");
    open_diff(&mut app, &mut d, "review");
    assert_eq!(app.tabs.diff.state, DiffState::Ready);
    // m asks the runtime for $EDITOR on the template: where the words go, and what this
    // cycle's status means for them.
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
    let Some(Effect::EditMessage { path: edited, text }) = effects.first() else { panic!("{effects:?}") };
    assert_eq!(edited, &path);
    for needle in [
        "WebGPT in this cycle's chat",
        "journaled with your",
        "not an iteration",
        "an empty file cancels",
        "READY_TO_MERGE",
    ] {
        assert!(text.contains(needle), "{needle} missing from the template:\n{text}");
    }
    assert!(text.lines().all(|l| l.is_empty() || l.starts_with('#')), "{text}");
    // The person writes below the comments; one line tries to drive the terminal.
    let words = "The PR also rewrites docs/appearance.md, outside the brief's scope.\nPlease revert that file.\n\u{1b}]0;pwned\u{7}keep the rest";
    d.apply(&mut app, Event::MessageEdited { path: path.clone(), result: Ok(format!("{text}{words}\n")) });
    let Some(Popup::Say(dialog)) = app.popups.last() else { panic!("no dialog: {:?}", app.popups.last()) };
    assert_eq!(dialog.text, words);
    assert!(dialog.notes.iter().any(|n| n.contains("AWAITING_WEBGPT_FIX")), "{:?}", dialog.notes);
    let shown = screen(&app, 120, 40);
    assert!(shown.contains("Message for WebGPT — review"), "{shown}");
    assert!(shown.contains("│ The PR also rewrites docs/appearance.md"), "{shown}");
    assert!(shown.contains("keep the rest") && !shown.contains("pwned"), "escape sequences are dropped:\n{shown}");
    assert!(shown.contains("[y] send"), "{shown}");
    // y sends it through `cycle::say` as the person.
    key(&mut app, &mut d, KeyCode::Char('y'));
    assert!(app.popups.is_empty(), "the dialog closes once it is sent");
    let toast = app.toast.clone().unwrap();
    assert!(!toast.error);
    assert_eq!(toast.text, "message for WebGPT is in the outbox; the coordinator sends it next");
    assert!(app.message_drafts.is_empty(), "a sent message leaves no draft");
    let state = read_state(&path);
    assert_eq!(state["outbox"]["kind"], "message");
    assert_eq!(state["outbox"]["text"], words);
    assert_eq!(state["status"], "AWAITING_WEBGPT_FIX", "review feedback sends a ready cycle back");
    assert_eq!(state["iteration"], 1, "not an iteration");
    let events = journal(&fx, "review");
    let written = events.iter().find(|e| e.kind == "message_written").expect("journaled");
    assert_eq!(written.actor, forgeloop::domain::state::Actor::Human);
    assert_eq!(written.data["text"], words);
    assert_eq!(written.data["before"], serde_json::Value::Null);
    // The row and the Conversation tab show it: the words quoted, the outbox named.
    assert_eq!(app.selected_entry().unwrap().status(), Some(Status::AwaitingWebgptFix));
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Conversation));
    let shown = screen(&app, 120, 40);
    assert!(shown.contains("human  message for WebGPT"), "{shown}");
    assert!(shown.contains("│ Please revert that file."), "{shown}");
    assert!(shown.contains("Outbox: the person's message, waiting to be sent"), "{shown}");
    assert!(!shown.contains("pwned"), "{shown}");
}

#[test]
fn a_refused_message_keeps_the_words_and_m_reopens_them() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    let path = fx.state_path("await-fix");
    select(&mut app, &mut d, "await-fix");
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
    let Some(Effect::EditMessage { text, .. }) = effects.first() else { panic!("{effects:?}") };
    // The failure handoff waits unsent: the person's words go before it.
    assert!(text.contains("The handoff waiting to be sent goes after these words"), "{text}");
    let file = format!("{text}Before you fix the test: keep the public API unchanged.\n");
    d.apply(&mut app, Event::MessageEdited { path: path.clone(), result: Ok(file.clone()) });
    assert!(matches!(app.popups.last(), Some(Popup::Say(_))));
    // Meanwhile an agent blocks the cycle: the use case refuses, the dialog says so.
    fx.block("await-fix", Status::BlockedInfra, "the runner is down");
    let before = std::fs::read(&path).unwrap();
    key(&mut app, &mut d, KeyCode::Char('y'));
    let Some(Popup::Say(dialog)) = app.popups.last() else { panic!("the dialog stays open") };
    let error = dialog.error.clone().unwrap();
    assert!(error.contains("blocked or finished") && error.contains("Nothing was sent"), "{error}");
    assert!(!dialog.busy);
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing changed");
    assert!(!journal(&fx, "await-fix").iter().any(|e| e.kind == "message_written"));
    // e reopens the editor on the words; Esc sets them aside.
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('e'))));
    assert_eq!(effects, vec![Effect::EditMessage { path: path.clone(), text: file.clone() }]);
    key(&mut app, &mut d, KeyCode::Esc);
    assert!(app.popups.is_empty());
    // Once the cycle is unblocked, m brings the same words back, and they are sent before the
    // handoff, as one message.
    forgeloop::cycle::actions::unblock(&fx.ctx, &fx.paths("await-fix")).unwrap();
    d.apply(&mut app, Event::FilesChanged(vec![path.clone()]));
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
    assert_eq!(effects, vec![Effect::EditMessage { path: path.clone(), text: file.clone() }]);
    d.apply(&mut app, Event::MessageEdited { path: path.clone(), result: Ok(file) });
    key(&mut app, &mut d, KeyCode::Enter);
    assert!(app.popups.is_empty(), "{:?}", app.popups.last());
    let state = read_state(&path);
    assert_eq!(state["outbox"]["kind"], "handoff");
    let text = state["outbox"]["text"].as_str().unwrap();
    assert!(text.starts_with("Before you fix the test: keep the public API unchanged.\n\n---\n\n"), "{text}");
    assert!(text.contains("Push a fix to the same pull request"), "{text}");
    let events = journal(&fx, "await-fix");
    let written = events.iter().find(|e| e.kind == "message_written").unwrap();
    assert_eq!(written.data["before"], "handoff");
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Conversation));
    let shown = screen(&app, 120, 40);
    assert!(shown.contains("message for WebGPT, put before the pending handoff"), "{shown}");
    assert!(shown.contains("│ Before you fix the test"), "{shown}");
}

#[test]
fn an_empty_message_or_a_failed_editor_sends_nothing() {
    let fx = mixed();
    let (mut app, mut d) = fx.app("dark");
    let path = fx.state_path("await-pr");
    select(&mut app, &mut d, "await-pr");
    let before = std::fs::read(&path).unwrap();
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
    let Some(Effect::EditMessage { text, .. }) = effects.first() else { panic!("{effects:?}") };
    // Saved as it came: only comments, so it is cancelled.
    d.apply(&mut app, Event::MessageEdited { path: path.clone(), result: Ok(text.clone()) });
    assert!(app.popups.is_empty());
    assert_eq!(app.toast.as_ref().unwrap().text, "the message is empty: nothing was sent");
    assert!(app.message_drafts.is_empty());
    // The editor could not run (no terminal, a non-zero exit): said, nothing kept or sent.
    d.apply(&mut app, Event::MessageEdited { path: path.clone(), result: Err("editing needs a terminal".into()) });
    let toast = app.toast.clone().unwrap();
    assert!(toast.error && toast.text == "editing needs a terminal", "{toast:?}");
    assert!(app.popups.is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

// ----- Trust, then verify (design §5.2): the PR's tests, protected paths, NEEDS_REVIEW -----

fn row_names_with(app: &forgeloop::tui::App, needle: &str) -> Vec<String> {
    app.list.cycles.iter().filter(|c| forgeloop_badge(c).contains(needle)).map(|c| c.name()).collect()
}

fn forgeloop_badge(entry: &forgeloop::tui::model::CycleEntry) -> String {
    let theme = forgeloop::tui::Theme::builtin("dark").unwrap();
    forgeloop::tui::views::entry_tests_flag(entry)
        .map(|flag| forgeloop::tui::views::tests_badge(flag, &theme).0)
        .unwrap_or_default()
}

#[test]
fn a_needs_review_cycle_sorts_with_what_needs_you_and_its_row_and_filter_name_the_tests() {
    let fx = trust_home();
    let (mut app, mut d) = fx.app("dark");
    assert_eq!(names(&app)[0], "guarded", "a pass waiting for review comes first");
    assert_eq!(app.counts()[forgeloop::tui::app::StatusGroup::Review as usize].1, 1);
    assert_eq!(row_names_with(&app, "⚠ assertions removed"), ["guarded", "rewrote"]);
    assert_eq!(row_names_with(&app, "+ tests added"), ["added"]);
    assert!(forgeloop_badge(app.list.cycles.iter().find(|c| c.name() == "code-only").unwrap()).is_empty());
    // The filter finds them by the badge's words.
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "assertions removed");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(names(&app), ["guarded", "rewrote"]);
}

#[test]
fn the_runs_tab_has_each_runs_flag_and_reads_an_earlier_runs_report_when_selected() {
    let fx = trust_home();
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "guarded");
    key(&mut app, &mut d, KeyCode::Enter);
    let effects = app.update(Event::Cmd(Cmd::Tab(Tab::Runs)));
    assert!(effects.is_empty(), "the last run's integrity is in the state: {effects:?}");
    let flags: Vec<_> = app.run_rows().iter().map(|r| (r.iteration, r.tests)).collect();
    use forgeloop::domain::integrity::Flag;
    assert_eq!(flags, [(Some(2), Some(Flag::AssertionsRemoved)), (Some(1), None)]);
    let entry = app.selected_entry().unwrap().clone();
    let integrity = forgeloop::tui::panes::run_rows::integrity(&app.tabs.loaded, &entry, 2).unwrap().unwrap().clone();
    assert_eq!(integrity.protected, ["test.sh"]);
    // The earlier run: its report is read once, from the file the run saved.
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('j'))));
    let [Effect::LoadRunReport { iteration: 1, report, .. }] = effects.as_slice() else { panic!("{effects:?}") };
    assert!(report.ends_with("runs/1-111111111111.json"), "{report:?}");
    d.settle(&mut app, effects);
    assert_eq!(
        app.tabs.loaded.reports.get(&1),
        Some(&forgeloop::tui::app::RunReport::Loaded(Some(Default::default())))
    );
    let effects = app.update(Event::Cmd(Cmd::Up));
    assert!(effects.is_empty(), "{effects:?}");
    let effects = app.update(Event::Cmd(Cmd::Down));
    assert!(effects.is_empty(), "read once: {effects:?}");
}

#[test]
fn v_approves_a_needs_review_pass_after_a_confirmation_and_is_journaled_as_human_via_tui() {
    let fx = trust_home();
    let (mut app, mut d) = fx.app("dark");
    let path = fx.state_path("guarded");
    // Offered (and in the footer) only on a NEEDS_REVIEW cycle.
    for name in ["rewrote", "added", "code-only"] {
        select(&mut app, &mut d, name);
        assert!(!app.available(Cmd::Approve), "{name}");
        assert!(!app.hints().iter().any(|(_, h)| *h == "approve"), "{name}: {:?}", app.hints());
        key(&mut app, &mut d, KeyCode::Char('v'));
        assert!(app.popups.is_empty(), "{name}");
        assert!(app.toast.as_ref().unwrap().text.contains("only a NEEDS_REVIEW cycle"), "{:?}", app.toast);
    }
    select(&mut app, &mut d, "guarded");
    assert!(app.available(Cmd::Approve));
    assert!(app.hints().iter().any(|(k, h)| k == "v" && *h == "approve"), "{:?}", app.hints());
    // No: nothing changes.
    key(&mut app, &mut d, KeyCode::Char('v'));
    let Some(Popup::YesNo { ask: Ask::Approve(asked), title, body }) = app.popups.last() else {
        panic!("{:?}", app.popups.last())
    };
    assert_eq!(asked, &path);
    assert_eq!(title, "Approve guarded?");
    for needle in [
        "it changes paths you protect: test.sh.",
        "test.sh (+1 −1, 1 assertion removed)",
        "READY_TO_MERGE",
        "answer with m",
    ] {
        assert!(body.contains(needle), "{needle} missing from\n{body}");
    }
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert!(app.popups.is_empty());
    assert_eq!(read_state(&path)["status"], "NEEDS_REVIEW");
    // Yes: the use case, as the person, via tui.
    key(&mut app, &mut d, KeyCode::Char('v'));
    key(&mut app, &mut d, KeyCode::Char('y'));
    assert_eq!(read_state(&path)["status"], "READY_TO_MERGE");
    assert_eq!(app.toast.as_ref().map(|t| t.text.as_str()), Some("approved; now READY_TO_MERGE"));
    let approved = journal(&fx, "guarded").into_iter().find(|e| e.kind == "approved").expect("journaled");
    assert_eq!(approved.actor, forgeloop::domain::state::Actor::Human);
    assert_eq!((approved.data["via"].as_str(), approved.data["protected"][0].as_str()), (Some("tui"), Some("test.sh")));
    assert_eq!(app.selected_state().unwrap().status, Status::ReadyToMerge, "reloaded at once");
    assert!(!app.available(Cmd::Approve));
}

#[test]
fn a_pass_that_changed_protected_paths_rings_and_says_why_and_m_says_it_answers_the_review() {
    let mut fx = Fixture::new();
    fx.at(10).start("guarded", false, 5);
    fx.sent("guarded");
    fx.reply("guarded", "Opened it.\nPR_URL: https://github.com/acme/widget/pull/7");
    let (mut app, mut d) = fx.app("dark");
    fx.run_with("guarded", true, TRUST_SHA_2, "ok\n", Some(rewrite_integrity(&["test.sh"])));
    let effects = app.update(Event::FilesChanged(vec![fx.state_path("guarded")]));
    d.settle(&mut app, effects);
    assert_eq!(
        notifications(&mut d),
        [
            "guarded needs your review: it passed, but the PR changes protected paths: test.sh (v approves, m answers WebGPT)"
        ]
    );
    // The message dialog says what sending does here.
    let effects = app.update(Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
    let Some(Effect::EditMessage { path, text }) = effects.first() else { panic!("{effects:?}") };
    assert!(text.contains("NEEDS_REVIEW"), "{text}");
    d.apply(&mut app, Event::MessageEdited { path: path.clone(), result: Ok(format!("{text}Leave test.sh alone.\n")) });
    let Some(Popup::Say(dialog)) = app.popups.last() else { panic!() };
    assert!(dialog.notes.iter().any(|n| n.contains("instead of approving it")), "{:?}", dialog.notes);
    key(&mut app, &mut d, KeyCode::Char('y'));
    assert_eq!(read_state(&fx.state_path("guarded"))["status"], "AWAITING_WEBGPT_FIX");
}

#[test]
fn t_in_the_diff_tab_shows_only_the_files_that_decide_the_verdict() {
    let fx = trust_home();
    let (mut app, mut d) = fx.app("dark");
    app.tabs.diff.height.set(6);
    open_diff(&mut app, &mut d, "guarded");
    let paths = |app: &forgeloop::tui::App| -> Vec<String> {
        let doc = app.tabs.diff.doc.as_ref().unwrap();
        app.tabs.diff.shown_files().iter().map(|&i| doc.files[i].path.clone()).collect()
    };
    assert_eq!(paths(&app), ["calc.sh", "test.sh", "tests/test_calc.py", "README.md"]);
    assert!(app.hints().iter().any(|(k, h)| k == "t" && *h == "tests only"), "{:?}", app.hints());
    // test.sh because the run's integrity names it (the commands are pytest's), the new test by
    // the rules; the selection moves off calc.sh.
    key(&mut app, &mut d, KeyCode::Char('t'));
    assert!(app.tabs.diff.tests_only);
    assert_eq!(paths(&app), ["test.sh", "tests/test_calc.py"]);
    assert_eq!(app.tabs.diff.file, 1);
    assert_eq!(shown_lines(&app)[0], "diff --git a/test.sh b/test.sh");
    key(&mut app, &mut d, KeyCode::Char('J'));
    assert_eq!(app.tabs.diff.file, 2);
    key(&mut app, &mut d, KeyCode::Char('J'));
    assert_eq!(app.tabs.diff.file, 2, "README.md is not a test: the list ends here");
    key(&mut app, &mut d, KeyCode::Char('{'));
    assert_eq!((app.tabs.diff.file, app.tabs.diff.hunk), (1, Some(0)), "back into test.sh's hunk");
    key(&mut app, &mut d, KeyCode::Char('{'));
    assert_eq!(app.tabs.diff.file, 1, "calc.sh is hidden: no further back");
    // A search skips the files the filter hides: "Calc" is only in README.md.
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "Calc");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.diff.search.state, SearchState::NotFound);
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "calc");
    key(&mut app, &mut d, KeyCode::Enter);
    assert_eq!(app.tabs.diff.search.state, SearchState::Found);
    let line = app.tabs.diff.search.current.unwrap() as usize;
    assert!(
        app.tabs.diff.is_shown(app.tabs.diff.doc.as_ref().unwrap().file_of(line).unwrap()),
        "found in a shown file"
    );
    // Since the last run: the run's since-last list.
    key(&mut app, &mut d, KeyCode::Char('s'));
    assert_eq!(paths(&app), ["test.sh"]);
    assert!(app.tabs.diff.tests_only, "the filter stays on");
    // A diff with no test file: nothing shown, and said so; t shows every file again.
    key(&mut app, &mut d, KeyCode::Char('s'));
    key(&mut app, &mut d, KeyCode::Tab);
    open_diff(&mut app, &mut d, "code-only");
    assert!(app.tabs.diff.nothing_shown());
    assert!(!app.available(Cmd::NextFile));
    key(&mut app, &mut d, KeyCode::Char('t'));
    assert!(!app.tabs.diff.nothing_shown());
    assert_eq!(paths(&app), ["calc.sh"]);
}

/// The Connector screen (`S`) shows what `forgeloop serve` serves, the pairing code, the grants
/// and the calls, read from the connector's files; `x` revokes the selected grant after a yes,
/// and its tokens are gone from grants.json.
#[test]
fn the_connector_screen_shows_serve_and_revokes_a_grant() {
    let fx = mixed();
    let dir = fx.ctx.home.connector_dir();
    std::fs::create_dir_all(&dir).unwrap();
    // A record naming a live process that is not `forgeloop serve` (this test, as a stale
    // record's recycled pid would) is not a server.
    let stale = serde_json::json!({"pid": std::process::id(), "url": "http://127.0.0.1:1", "mcp_url": "x",
        "pairing_code": "ABCD-EFGH", "started_at": "2026-12-02T10:00:00Z"});
    std::fs::write(dir.join("serving.json"), stale.to_string()).unwrap();
    let (app, _) = fx.app("dark");
    assert!(!app.screens.connector.serving(), "a pid that is not forgeloop serve is not serving");
    // A real `forgeloop serve` (on a home of its own), which this record names.
    let other_home = tempfile::tempdir().unwrap();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_forgeloop"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("FORGELOOP_HOME", other_home.path())
        .env("XDG_CONFIG_HOME", other_home.path().join("xdg"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(server.stdout.take().unwrap()), &mut first).unwrap();
    assert!(first.contains("SERVING"), "{first}");
    let serving = serde_json::json!({
        "pid": server.id(),
        "url": "http://127.0.0.1:8787",
        "mcp_url": "https://forge.example.com/mcp",
        "pairing_code": "ABCD-EFGH",
        "pairing_expires_at": "2026-12-02T10:10:00Z",
        "started_at": "2026-12-02T10:00:00Z",
    });
    std::fs::write(dir.join("serving.json"), serving.to_string()).unwrap();
    // The real client, and another that calls itself the same but sends access elsewhere.
    let grant = serde_json::json!({ "grants": [{
        "id": "g_0123456789ab", "client_id": "fl_x", "client_name": "ChatGPT",
        "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
        "resource": "https://forge.example.com/mcp", "created_at": "2026-12-02T10:01:00Z",
        "access": [{ "hash": "00", "expires_at": 4_102_444_800i64 }],
        "refresh": { "hash": "11", "expires_at": 4_102_444_800i64 },
        "cycles": ["widget-abc"],
    }, {
        "id": "g_ba9876543210", "client_id": "fl_y", "client_name": "ChatGPT",
        "redirect_uris": ["https://evil.example/cb"],
        "resource": "https://forge.example.com/mcp", "created_at": "2026-12-02T10:04:00Z",
    }]});
    std::fs::write(dir.join("grants.json"), grant.to_string()).unwrap();
    let call = serde_json::json!({"at": "2026-12-02T10:02:00Z", "kind": "tool", "grant": "g_0123456789ab",
        "client": "ChatGPT", "tool": "start_cycle", "ok": true});
    // A granted client's own method name, with a terminal escape in it.
    let hostile = serde_json::json!({"at": "2026-12-02T10:03:00Z", "kind": "request", "grant": "g_0123456789ab",
        "client": "ChatGPT", "http": "POST", "method": "tools/\u{1b}]52;c;aGk=\u{7}list"});
    std::fs::write(dir.join("journal.jsonl"), format!("{call}\n{hostile}\n")).unwrap();

    let (mut app, mut d) = fx.app("dark");
    assert!(app.screens.connector.serving(), "serving.json names a live process");
    assert!(screen(&app, 120, 30).contains("⇄ serving"), "the header says serve runs");
    key(&mut app, &mut d, KeyCode::Char('S'));
    assert_eq!(app.screen, Screen::Connector);
    let shown = screen(&app, 120, 30);
    for expected in [
        "https://forge.example.com/mcp",
        "ABCD-EFGH",
        "g_0123456789ab",
        "ChatGPT",
        "start_cycle ok",
        "chatgpt.com",
        "evil.example",
        "ChatGPT ⚠ same name",
    ] {
        assert!(shown.contains(expected), "{expected:?} on the Connector screen:\n{shown}");
    }
    assert!(shown.contains("tools/"), "the client's method is shown:\n{shown}");
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "no control character reaches the screen");
    key(&mut app, &mut d, KeyCode::Char('x'));
    assert!(
        matches!(app.popups.last(), Some(Popup::YesNo { ask: Ask::Screen(ScreenLoad::Connector(ConnectorLoad::Revoke(id))), .. }) if id == "g_0123456789ab")
    );
    key(&mut app, &mut d, KeyCode::Char('y'));
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("grants.json")).unwrap()).unwrap();
    let grant = &written["grants"][0];
    assert_eq!(grant["revoked"]["reason"], "person", "its tokens are refused from now on");
    assert!(screen(&app, 120, 30).contains("revoked"), "the screen shows it revoked");
    key(&mut app, &mut d, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Cycles);
    let _ = server.kill();
    let _ = server.wait();
}

/// A failure handoff still queued when the person allows the hosts a later run lacked is moot:
/// withdrawn with why, and `next` says to run.
#[test]
fn allowing_the_hosts_withdraws_the_failure_handoff_still_queued() {
    let mut fx = Fixture::new();
    let config = fx.root().join("config.toml");
    std::fs::write(&config, "[network]\nallow = []\n").unwrap();
    fx.ctx.config_path = Some(config);
    fx.start("deps", false, 5);
    fx.sent("deps");
    fx.reply("deps", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    let sha = "0123456789abcdef0123456789abcdef01234567";
    fx.run("deps", false, sha, &failing_log());
    let pending = read_state(&fx.state_path("deps"))["outbox"].clone();
    assert_eq!((pending["kind"].as_str(), pending["sent_at"].is_null()), (Some("handoff"), true), "{pending:#}");
    fx.needs_network("deps", sha, &["pypi.example.com"]);

    forgeloop::cycle::allow_network::allow_refused_hosts(
        &fx.ctx,
        &fx.paths("deps"),
        forgeloop::domain::state::Actor::Human,
    )
    .unwrap();
    let state = read_state(&fx.state_path("deps"));
    assert!(state["outbox"].is_null(), "{state:#}");
    assert!(state["withdrawn"]["why"].as_str().unwrap().contains("allowed the hosts"), "{state:#}");
    let events = forgeloop::store::journal::read(&fx.paths("deps").journal()).unwrap().events;
    let withdrawn = events.iter().find(|e| e.kind == "message_withdrawn").expect("journaled");
    assert_eq!(withdrawn.data["sha256"], pending["sha256"]);
    let parsed: forgeloop::domain::state::CycleState = serde_json::from_value(state).unwrap();
    let next = forgeloop::domain::next::next_step(&parsed, "deps");
    assert_eq!(next.action, forgeloop::domain::next::Action::Run, "{}", next.explanation);
}

/// `X` drops the pending handoff after a yes: journaled as the person's, the Conversation tab
/// says what was taken out and why; the first prompt is never dropped.
#[test]
fn x_drops_the_pending_handoff_and_the_conversation_says_so() {
    let fx = Fixture::new();
    fx.start("fail", false, 5);
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "fail");
    assert!(!app.available(Cmd::DropMessage), "the prompt that starts the cycle is not droppable");
    fx.sent("fail");
    fx.reply("fail", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.run("fail", false, "0123456789abcdef0123456789abcdef01234567", &failing_log());
    let (mut app, mut d) = fx.app("dark");
    select(&mut app, &mut d, "fail");
    cmd(&mut app, &mut d, Cmd::SwitchFocus);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Conversation));
    assert!(screen(&app, 120, 40).contains("X drops it"));
    key(&mut app, &mut d, KeyCode::Char('X'));
    let Some(Popup::YesNo { ask, title, .. }) = app.popups.last() else { panic!("no dialog") };
    assert_eq!(ask, &Ask::DropMessage(fx.state_path("fail")));
    assert!(title.contains("handoff"), "{title}");
    key(&mut app, &mut d, KeyCode::Char('y'));
    let state = read_state(&fx.state_path("fail"));
    assert!(state["outbox"].is_null(), "{state:#}");
    assert_eq!(state["withdrawn"]["by"], "human");
    let events = forgeloop::store::journal::read(&fx.paths("fail").journal()).unwrap().events;
    let dropped = events.iter().find(|e| e.kind == "message_withdrawn").expect("journaled");
    assert_eq!(dropped.actor, forgeloop::domain::state::Actor::Human);
    let text = screen(&app, 120, 40);
    assert!(text.contains("the handoff was taken out unsent"), "{text}");
    assert!(!app.available(Cmd::DropMessage));
}

/// A review cycle waiting for triage (its first finding untriaged) and a PR cycle.
fn review_home() -> (Fixture, std::path::PathBuf) {
    let mut fx = Fixture::new();
    fx.at(30).start("pr-cycle", false, 5);
    let packet = fx.root().join("home/cycles/review-widget.d/review/packet.md");
    let path = fx.at(10).review("review-widget", Status::AwaitingTriage, review_json(&packet.display().to_string()));
    (fx, path)
}

/// The fixture's review with none of its findings decided or fixed yet.
fn untriaged_review() -> serde_json::Value {
    let mut review = review_json("/tmp/packet.md");
    for finding in review["findings"].as_array_mut().unwrap() {
        finding.as_object_mut().unwrap().remove("triage");
        finding.as_object_mut().unwrap().remove("fixed");
    }
    review
}

/// Opens the Review tab of `name` with the keys in the detail.
fn review_tab(app: &mut forgeloop::tui::App, d: &mut forgeloop::tui::sync::SyncDriver, name: &str) {
    select(app, d, name);
    key(app, d, KeyCode::Enter);
    key(app, d, KeyCode::Char('8'));
    assert_eq!((app.focus, app.tabs.tab), (Focus::Detail, Tab::Review));
}

#[test]
fn f_in_the_review_tab_triages_the_selected_finding_fix_as_the_person() {
    let (fx, path) = review_home();
    let (mut app, mut d) = fx.app("dark");
    review_tab(&mut app, &mut d, "review-widget");
    assert!(app.available(Cmd::TriageFix) && app.available(Cmd::TriageDefer) && app.available(Cmd::TriageDismiss));
    assert!(app.hints().iter().any(|(k, h)| k == "F" && *h == "fix"), "{:?}", app.hints());
    assert!(!app.available(Cmd::ApprovePacket), "the packet was approved already");
    key(&mut app, &mut d, KeyCode::Char('F'));
    // At once, through the use case: no question first.
    assert!(app.popups.is_empty(), "{:?}", app.popups.last());
    let state = read_state(&path);
    let first = &state["review"]["findings"][0];
    assert_eq!(first["number"], 1);
    assert_eq!(first["triage"]["decision"], "FIX");
    assert_eq!(first["triage"]["by"], "human");
    assert_eq!(state["review"]["findings"][2]["triage"]["decision"], "DEFER", "the others are left alone");
    let triaged = journal(&fx, "review-widget").into_iter().rfind(|e| e.kind == "finding_triaged").expect("journaled");
    assert_eq!(triaged.actor, forgeloop::domain::state::Actor::Human);
    assert_eq!(triaged.data["finding"], 1);
    assert_eq!(triaged.data["decision"], "FIX");
    let toast = app.toast.clone().unwrap();
    assert!(!toast.error && toast.text.starts_with("finding 1: FIX"), "{toast:?}");
    // Every finding decided: the triage keys are no longer offered, and a stray key is refused by
    // the use case and said, never a panic.
    assert_ne!(read_state(&path)["status"], "AWAITING_TRIAGE");
    assert!(!app.available(Cmd::TriageFix));
    key(&mut app, &mut d, KeyCode::Char('D'));
    let toast = app.toast.clone().unwrap();
    assert!(toast.error && toast.text.starts_with("triage failed:"), "{toast:?}");
    assert_eq!(read_state(&path)["review"]["findings"][0]["triage"]["decision"], "FIX");
}

#[test]
fn the_selection_picks_the_finding_d_and_i_decide() {
    let (fx, path) = review_home();
    let review = untriaged_review();
    let other = fx.review("three-open", Status::AwaitingTriage, review);
    let (mut app, mut d) = fx.app("dark");
    review_tab(&mut app, &mut d, "three-open");
    key(&mut app, &mut d, KeyCode::Char('j'));
    key(&mut app, &mut d, KeyCode::Char('D'));
    key(&mut app, &mut d, KeyCode::Char('j'));
    key(&mut app, &mut d, KeyCode::Char('I'));
    let state = read_state(&other);
    let decisions: Vec<_> = (0..5).map(|i| state["review"]["findings"][i]["triage"]["decision"].clone()).collect();
    assert_eq!(
        decisions,
        [serde_json::Value::Null, "DEFER".into(), "DISMISS".into(), serde_json::Value::Null, serde_json::Value::Null]
    );
    assert_eq!(
        read_state(&path)["review"]["findings"][0]["triage"],
        serde_json::Value::Null,
        "another cycle is untouched"
    );
}

#[test]
fn q_asks_for_the_question_and_triages_the_finding_question_with_its_words() {
    let fx = Fixture::new();
    let review = untriaged_review();
    let path = fx.review("asks", Status::AwaitingTriage, review);
    let (mut app, mut d) = fx.app("dark");
    review_tab(&mut app, &mut d, "asks");
    assert!(app.available(Cmd::TriageQuestion));
    assert!(app.hints().iter().any(|(k, h)| k == "Q" && *h == "question"), "{:?}", app.hints());
    key(&mut app, &mut d, KeyCode::Char('Q'));
    let Some(Popup::Input { title, prompt, purpose: InputPurpose::Pane(_), .. }) = app.popups.last() else {
        panic!("{:?}", app.popups.last())
    };
    assert_eq!(title, "Ask about finding 1");
    assert!(prompt.starts_with("Finding 1 ("), "{prompt}");
    // Esc decides nothing; an empty question is refused in the dialog.
    key(&mut app, &mut d, KeyCode::Esc);
    assert!(app.popups.is_empty());
    key(&mut app, &mut d, KeyCode::Char('Q'));
    key(&mut app, &mut d, KeyCode::Enter);
    let Some(Popup::Input { error: Some(_), .. }) = app.popups.last() else { panic!("{:?}", app.popups.last()) };
    assert_eq!(read_state(&path)["review"]["findings"][0]["triage"], serde_json::Value::Null);
    chars(&mut app, &mut d, "what overflows, and when?");
    key(&mut app, &mut d, KeyCode::Enter);
    assert!(app.popups.is_empty(), "{:?}", app.popups.last());
    let state = read_state(&path);
    let first = &state["review"]["findings"][0]["triage"];
    assert_eq!(
        (&first["decision"], &first["note"], &first["by"]),
        (&"QUESTION".into(), &"what overflows, and when?".into(), &"human".into())
    );
    let triaged = journal(&fx, "asks").into_iter().rfind(|e| e.kind == "finding_triaged").expect("journaled");
    assert_eq!(triaged.actor, forgeloop::domain::state::Actor::Human);
    assert_eq!(triaged.data["decision"], "QUESTION");
    let toast = app.toast.clone().unwrap();
    assert!(!toast.error && toast.text.starts_with("finding 1: QUESTION"), "{toast:?}");
}

#[test]
fn the_review_tabs_keys_on_a_pr_cycle_are_refused_with_why() {
    let (fx, _) = review_home();
    let (mut app, mut d) = fx.app("dark");
    review_tab(&mut app, &mut d, "pr-cycle");
    assert!(!app.available(Cmd::TriageFix) && !app.available(Cmd::ApprovePacket));
    key(&mut app, &mut d, KeyCode::Char('F'));
    let toast = app.toast.clone().unwrap();
    assert!(toast.error && toast.text.contains("PR cycle"), "{toast:?}");
    key(&mut app, &mut d, KeyCode::Char('P'));
    let toast = app.toast.clone().unwrap();
    assert!(toast.error && toast.text.contains("no packet waits for your yes"), "{toast:?}");
    assert!(app.popups.is_empty());
}

#[test]
fn p_approves_a_waiting_packet_after_a_confirmation_as_the_person_via_tui() {
    let fx = Fixture::new();
    let mut review = review_json("/tmp/packet.md");
    review["packet"].as_object_mut().unwrap().remove("approved");
    review["findings"] = serde_json::json!([]);
    review["unparsed"] = serde_json::json!([]);
    review["replies"] = 0.into();
    let path = fx.review("packet-waits", Status::AwaitingPacket, review);
    let (mut app, mut d) = fx.app("dark");
    review_tab(&mut app, &mut d, "packet-waits");
    assert!(app.available(Cmd::ApprovePacket));
    assert!(app.hints().iter().any(|(k, h)| k == "P" && *h == "approve packet"), "{:?}", app.hints());
    // No: nothing changes.
    key(&mut app, &mut d, KeyCode::Char('P'));
    let Some(Popup::YesNo { ask: Ask::Pane(_), title, body }) = app.popups.last() else {
        panic!("{:?}", app.popups.last())
    };
    assert_eq!(title, "Approve packet-waits's review packet?");
    assert!(body.contains("3 files, 5120 bytes, about 1280 tokens, 1 risk."), "{body}");
    assert!(body.contains("forgeloop review prepare --state packet-waits --dry-run"), "{body}");
    key(&mut app, &mut d, KeyCode::Char('n'));
    assert!(app.popups.is_empty());
    assert_eq!(read_state(&path)["review"]["packet"]["approved"], serde_json::Value::Null);
    // Yes: the use case, as the person, via tui.
    key(&mut app, &mut d, KeyCode::Char('P'));
    key(&mut app, &mut d, KeyCode::Char('y'));
    let state = read_state(&path);
    assert_eq!(state["review"]["packet"]["approved"]["by"], "human");
    let approved = journal(&fx, "packet-waits").into_iter().find(|e| e.kind == "packet_approved").expect("journaled");
    assert_eq!(approved.actor, forgeloop::domain::state::Actor::Human);
    assert_eq!(approved.data["via"], "tui");
    let toast = app.toast.clone().unwrap();
    assert!(!toast.error && toast.text.starts_with("packet approved"), "{toast:?}");
    assert!(!app.available(Cmd::ApprovePacket), "asked once");
}

#[test]
fn a_click_on_a_tab_title_shows_that_tab_with_or_without_dividers() {
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let (fx, _) = review_home();
    // 80 columns: the titles go without dividers; 160: between them.
    for (width, divided) in [(80, false), (160, true)] {
        let (mut app, mut d) = fx.app("dark");
        app.mouse = true;
        select(&mut app, &mut d, "review-widget");
        for title in ["8 Review", "2 Conversation", "7 Files"] {
            let text = screen(&app, width, 40);
            let (row, line) = text.lines().enumerate().find(|(_, l)| l.contains(title)).unwrap();
            assert_eq!(line.contains("Brief │"), divided, "{line}");
            let column = line[..line.find(title).unwrap()].chars().count() + 3;
            let click = MouseEvent {
                kind: MouseEventKind::Down(MouseButton::Left),
                column: column as u16,
                row: row as u16,
                modifiers: KeyModifiers::NONE,
            };
            d.apply(&mut app, Event::Mouse(click));
            assert_eq!(app.tabs.tab.title(), &title[2..], "{width} columns: {line}");
        }
    }
}
