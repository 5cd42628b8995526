//! Whole screens on ratatui's TestBackend at 80×24, 120×40 and 40×12 with a fixed clock,
//! plus checks on cell styles (snapshots keep only the text).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod tui_support;

use crossterm::event::KeyCode;
use forgeloop::domain::status::Status;
use forgeloop::tui::Theme;
use forgeloop::tui::keymap::Cmd;
use forgeloop::tui::registry::Tab;
use ratatui::style::{Color, Modifier};
use tui_support::*;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (40, 12)];

fn snap(name: &str, app: &forgeloop::tui::App) {
    for (w, h) in SIZES {
        let terminal = draw(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), terminal.backend());
    }
}

/// One cycle in every status, plus an unreadable file.
fn every_status_home() -> Fixture {
    let mut fx = Fixture::new();
    let sha = "0123456789abcdef0123456789abcdef01234567";
    fx.at(300).start("await-pr", false, 5);
    fx.at(240).start("await-fix", false, 5);
    fx.sent("await-fix");
    fx.reply("await-fix", "Opened it.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.run("await-fix", false, sha, &failing_log());
    fx.at(200).start("ready-to-merge", false, 5);
    fx.run("ready-to-merge", true, sha, "$ pytest -q\n41 passed\n[exit 0 after 3.0s]\n");
    fx.at(180).start("cap-reached", false, 1);
    fx.run("cap-reached", false, sha, &failing_log());
    fx.reach_cap("cap-reached");
    let blocked = [
        ("no-pr", Status::BlockedNoPr),
        ("connector", Status::BlockedConnectorDenied),
        ("model", Status::BlockedModelUnavailable),
        ("project", Status::BlockedProjectUnavailable),
        ("sources", Status::BlockedProjectSources),
        ("unconfirmed", Status::BlockedDelegationUnconfirmed),
        ("infra", Status::BlockedInfra),
        ("pr-closed", Status::BlockedPrClosed),
    ];
    for (i, (name, status)) in blocked.iter().enumerate() {
        fx.at(170 - i as i64 * 10).start(name, false, 5);
        fx.block(name, *status, &format!("reason for {name}"));
    }
    fx.at(60).start("aborted", false, 5);
    fx.abort("aborted");
    fx.at(50).start("old-run", false, 5);
    fx.at(45).continue_from("old-run", "continued");
    fx.at(3).start("confirm-brief", true, 5);
    fx.garbage("torn.json", b"{\"status\": \"AWAITING_");
    fx.record("acme", "widget", r#"{"repository":"acme/widget","project_url":"https://chatgpt.com/g/g-p-widget/project","project_name":"Widget"}"#);
    fx
}

#[test]
fn empty_home() {
    let fx = Fixture::new();
    let (app, _) = fx.app("dark");
    snap("empty_home", &app);
}

#[test]
fn every_status() {
    let fx = every_status_home();
    let (app, _) = fx.app("dark");
    assert_eq!(app.list.cycles.len(), 17);
    snap("every_status", &app);
}

#[test]
fn every_status_in_the_wide_list_shows_glyph_and_word() {
    let fx = every_status_home();
    let (app, _) = fx.app("dark");
    let text = screen(&app, 200, 60);
    for word in [
        "◆ CONFIRM BRIEF",
        "○ AWAIT PR",
        "◐ AWAIT FIX",
        "✓ READY",
        "■ CAP REACHED",
        "✗ NO PR",
        "✗ CONNECTOR",
        "✗ NO MODEL",
        "✗ NO PROJECT",
        "✗ SOURCES",
        "✗ UNCONFIRMED",
        "✗ INFRA",
        "✗ PR CLOSED",
        "⊘ ABORTED",
        "↷ SUPERSEDED",
        "! UNREADABLE",
    ] {
        assert!(text.contains(word), "{word} missing:\n{text}");
    }
    assert!(text.contains("▰▱▱▱▱ 1/5"), "{text}");
    assert!(text.contains("▰▰▰▰▰ 1/1"), "{text}");
}

#[test]
fn brief_awaiting_confirmation_with_its_dialog() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    assert_eq!(selected_name(&app), "confirm-brief");
    key(&mut app, &mut d, KeyCode::Char('c'));
    snap("confirm_dialog", &app);
}

#[test]
fn brief_tab_of_a_confirmed_cycle() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "await-fix" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Enter);
    snap("brief_tab", &app);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Conversation));
    snap("conversation_tab", &app);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    snap("runs_tab", &app);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Project));
    snap("project_tab", &app);
}

#[test]
fn failing_log_with_a_search() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "await-fix" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Enter);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Log));
    // Lay the screen out once, as the runtime does before any request is answered.
    draw(&app, 120, 40);
    cmd(&mut app, &mut d, Cmd::Top);
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "dark mode");
    key(&mut app, &mut d, KeyCode::Enter);
    snap("log_search", &app);
    // The match is highlighted with the match style.
    let terminal = draw(&app, 120, 40);
    let buffer = terminal.backend().buffer();
    let theme = Theme::builtin("dark").unwrap();
    let highlighted = (0..40).flat_map(|y| (0..120).map(move |x| (x, y))).filter(|&(x, y)| {
        let cell = &buffer[(x, y)];
        cell.bg == theme.match_current.bg.unwrap() || cell.bg == theme.r#match.bg.unwrap()
    });
    assert!(highlighted.count() >= "dark mode".len());
}

#[test]
fn help_overlay() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    key(&mut app, &mut d, KeyCode::Char('?'));
    snap("help", &app);
}

#[test]
fn projects_view() {
    let fx = every_status_home();
    fx.record("acme", "broken", r#"{"repository":"acme/other","project_url":"x","project_name":""}"#);
    fx.record("acme", "torn", r#"{"repository":"#);
    let (mut app, mut d) = fx.app("dark");
    key(&mut app, &mut d, KeyCode::Char('p'));
    snap("projects", &app);
}

/// The Files tab: where the cycle's state, journal, runs, last log and report are.
#[test]
fn files_tab() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "await-fix" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Char('7'));
    snap("files_tab", &app);
}

/// A home with a review cycle (findings in every state) and a PR cycle.
fn review_home() -> Fixture {
    let mut fx = Fixture::new();
    fx.at(30).start("pr-cycle", false, 5);
    let packet = fx.root().join("home/cycles/review-widget.d/review/packet.md");
    fx.at(10).review("review-widget", Status::AwaitingTriage, review_json(&packet.display().to_string()));
    fx
}

/// The review cycle selected, the detail focused, its Review tab shown.
fn open_review_tab(app: &mut forgeloop::tui::App, d: &mut forgeloop::tui::sync::SyncDriver) {
    while selected_name(app) != "review-widget" {
        key(app, d, KeyCode::Char('j'));
    }
    key(app, d, KeyCode::Enter);
    key(app, d, KeyCode::Char('8'));
}

/// The Review tab: the target, the route, the attestation (invalid, with why), the approved
/// packet, then the findings (severity in words, location, decision or "untriaged", fixed),
/// the selected one's whole text, and the part of the reply that was not a finding.
#[test]
fn review_tab() {
    let fx = review_home();
    let (mut app, mut d) = fx.app("dark");
    open_review_tab(&mut app, &mut d);
    assert_eq!(app.tabs.tab, Tab::Review);
    snap("review_tab", &app);
    let text = screen(&app, 120, 40);
    for needle in [
        "acme/widget 0a0a0a0a0a0a..1b1b1b1b1b1b · PR acme/widget#7",
        "LOCAL_BUNDLE",
        "model GPT-5 Thinking · mode thinking · connector NOT attached",
        "✗ invalid (judged 11-29 11:01): the GitHub connector is not attached",
        "11-29 12:00 (expired)",
        "3 files · 5120 bytes · about 1280 tokens · 1 risk",
        "✓ approved by human at 11-29 11:10",
        "Findings: 5, 1 untriaged",
        "▸ #1   CRITICAL untriaged   app/theme.py:21",
        "#2   HIGH     FIX ✓ fixed app/theme.py:3",
        "#3   MEDIUM   DEFER       tests/test_theme.py",
        "#4   LOW      DISMISS     docs/appearance.md:2",
        "#5   INFO     QUESTION    —",
        "1 part of the replies was not read as findings",
        "F FIX · D DEFER · I DISMISS · Q QUESTION (you write the question)",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    // Severity is a word first; its colour only repeats it.
    let theme = Theme::builtin("dark").unwrap();
    let terminal = draw(&app, 120, 40);
    let buffer = terminal.backend().buffer();
    let at = |word: &str| {
        (0..40u16).find_map(|y| {
            let row: String = (0..120u16).map(|x| buffer[(x, y)].symbol().to_owned()).collect();
            row.find(word).map(|x| buffer[(row[..x].chars().count() as u16, y)].fg)
        })
    };
    assert_eq!(at("CRITICAL"), theme.error.fg);
    assert_eq!(at("MEDIUM"), theme.warn.fg);
    // The selection moves over the findings; the selected one shows its whole decision.
    for _ in 0..3 {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    let text = screen(&app, 120, 40);
    assert!(text.contains("▸ #4"), "{text}");
    assert!(text.contains("DISMISS by human at 11-29 11:40: the wording is the product's"), "{text}");
}

/// `Q` on an untriaged finding: the dialog that takes the question, the finding above it.
#[test]
fn review_question_dialog() {
    let fx = review_home();
    let (mut app, mut d) = fx.app("dark");
    open_review_tab(&mut app, &mut d);
    key(&mut app, &mut d, KeyCode::Char('Q'));
    for c in "what overflows?".chars() {
        key(&mut app, &mut d, KeyCode::Char(c));
    }
    snap("review_question_dialog", &app);
    let text = screen(&app, 120, 40);
    assert!(text.contains("Ask about finding 1"), "{text}");
    assert!(text.contains("what overflows?"), "{text}");
}

/// A PR cycle's Review tab says how a review starts.
#[test]
fn review_tab_of_a_pr_cycle() {
    let fx = review_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "pr-cycle" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Char('8'));
    let text = screen(&app, 120, 40);
    assert!(text.contains("This is a PR cycle: it has no review."), "{text}");
    assert!(text.contains("forgeloop review start"), "{text}");
}

/// The Connector screen before `forgeloop serve` ever ran: what to run, no grant, no call.
#[test]
fn connector_view() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    key(&mut app, &mut d, KeyCode::Char('S'));
    snap("connector", &app);
}

#[test]
fn themes() {
    let fx = every_status_home();
    for name in ["dark", "light", "high-contrast"] {
        let (app, _) = fx.app(name);
        let terminal = draw(&app, 120, 40);
        insta::assert_snapshot!(format!("theme_{name}"), terminal.backend());
        // Status colour comes from the theme's role, and the selected row uses `selection`.
        let theme = Theme::builtin(name).unwrap();
        let buffer = terminal.backend().buffer();
        // Row 0 is the header (counts); the list starts below it.
        let glyph =
            (2..40).flat_map(|y| (0..120).map(move |x| (x, y))).find(|&(x, y)| buffer[(x, y)].symbol() == "◆").unwrap();
        let cell = &buffer[glyph];
        assert_eq!(cell.bg, theme.selection.bg.unwrap(), "{name}: the first row is selected");
        let blocked =
            (2..40).flat_map(|y| (0..120).map(move |x| (x, y))).find(|&(x, y)| buffer[(x, y)].symbol() == "✗").unwrap();
        assert_eq!(buffer[blocked].fg, theme.error.fg.unwrap(), "{name}");
    }
}

#[test]
fn no_color_keeps_status_readable_without_colour() {
    let fx = every_status_home();
    let (mut app, _) = fx.app("dark");
    app.theme = Theme::builtin("dark").unwrap().without_color();
    let terminal = draw(&app, 120, 40);
    let buffer = terminal.backend().buffer();
    for cell in buffer.content() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "a cell has colour");
    }
    let glyph = buffer.content().iter().skip(120 * 2).find(|c| c.symbol() == "◆").unwrap();
    assert!(glyph.modifier.contains(Modifier::REVERSED), "the selection is reversed");
    let text = screen(&app, 120, 40);
    assert!(text.contains("◆ CONFIRM BRIEF") && text.contains("✗ NO MODEL"));
}

#[test]
fn wide_characters_keep_columns_aligned() {
    let fx = Fixture::new();
    fx.start("テーマ-暗い", false, 5);
    fx.start("emoji-🚀-launch", false, 5);
    fx.start("plain", false, 5);
    let (app, _) = fx.app("dark");
    let text = screen(&app, 120, 40);
    // The Iteration column starts at the same cell on every row.
    let columns: Vec<usize> = text
        .lines()
        .filter(|l| l.contains("0/5"))
        .map(|l| unicode_width::UnicodeWidthStr::width(&l[..l.find("0/5").unwrap()]))
        .collect();
    assert_eq!(columns.len(), 3, "{text}");
    assert!(columns.windows(2).all(|w| w[0] == w[1]), "{columns:?}\n{text}");
    insta::assert_snapshot!("wide_characters", draw(&app, 80, 24).backend());
}

/// With the person's `[runner] sandbox = "off"` every screen says so: the cycle list's title
/// and the run's Sandbox column.
#[test]
fn an_unsandboxed_control_room_says_so() {
    let fx = every_status_home();
    let (mut app, mut d) = fx.app("dark");
    app.unsandboxed = true;
    let terminal = draw(&app, 120, 40);
    insta::assert_snapshot!("unsandboxed_list_120x40", terminal.backend());
    while selected_name(&app) != "await-fix" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Enter);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let text = format!("{:?}", draw(&app, 120, 40).backend());
    assert!(text.contains("⚠ unsandboxed: PR code runs with your files and network"), "{text}");
}

/// The Diff tab (design §6.7) at three sizes, from a diff written where `cycle::diff` caches
/// it (no network).
const DIFF_SIZES: [(u16, u16); 3] = [(80, 24), (120, 36), (200, 60)];

const SHA_A: &str = "aaaaaaaaaaaa1111111111111111111111111111";
const SHA_B: &str = "bbbbbbbbbbbb2222222222222222222222222222";

fn diff_home() -> Fixture {
    let mut fx = Fixture::new();
    fx.at(30).start("dark-mode", false, 5);
    fx.sent("dark-mode");
    fx.reply("dark-mode", "Opened it.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.run("dark-mode", false, SHA_A, &failing_log());
    fx.run("dark-mode", true, SHA_B, "$ pytest -q\n42 passed\n[exit 0 after 3.0s]\n");
    fx.diff_cache("dark-mode", None, SHA_B, &sample_diff());
    fx.diff_cache(
        "dark-mode",
        Some(SHA_A),
        SHA_B,
        "diff --git a/app/theme.py b/app/theme.py\nindex 2222222..9999999 100644\n--- a/app/theme.py\n+++ b/app/theme.py\n@@ -21,3 +21,5 @@ def save(prefs, theme):\n     prefs[\"theme\"] = theme\n-    write(prefs)\n+    if theme not in SUPPORTED:\n+        raise ValueError(theme)\n+    write_atomic(prefs)\n",
    );
    fx.at(20).start("first-run", false, 5);
    fx.run("first-run", false, SHA_A, &failing_log());
    fx
}

fn snap_diff(name: &str, app: &forgeloop::tui::App) {
    for (w, h) in DIFF_SIZES {
        // Lay the screen out once (the pane learns its height), then draw what it shows.
        draw(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), draw(app, w, h).backend());
    }
}

#[test]
fn diff_tab() {
    let fx = diff_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "dark-mode" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    // The READY row shows the size of the change.
    let list = screen(&app, 120, 36);
    assert!(list.contains("5 files +10 −5"), "{list}");
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('5'));
    snap_diff("diff_tab", &app);
    // The second hunk of the first file is current: its header is marked.
    key(&mut app, &mut d, KeyCode::Char('}'));
    key(&mut app, &mut d, KeyCode::Char('}'));
    snap_diff("diff_tab_second_hunk", &app);
    // A rename, with a search match in it.
    key(&mut app, &mut d, KeyCode::Char('/'));
    chars(&mut app, &mut d, "dark");
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('n'));
    key(&mut app, &mut d, KeyCode::Char('n'));
    key(&mut app, &mut d, KeyCode::Char('n'));
    key(&mut app, &mut d, KeyCode::Char('n'));
    key(&mut app, &mut d, KeyCode::Char('n'));
    snap_diff("diff_tab_rename_search", &app);
    // Since the last run.
    key(&mut app, &mut d, KeyCode::Char('s'));
    snap_diff("diff_tab_since_last", &app);
    // The same mode for a cycle with one run: unavailable, and said so.
    key(&mut app, &mut d, KeyCode::Tab);
    while selected_name(&app) != "first-run" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    insta::assert_snapshot!("diff_tab_since_last_unavailable_80x24", draw(&app, 80, 24).backend());
}

#[test]
fn diff_lines_are_coloured_and_keep_their_signs() {
    let fx = diff_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "dark-mode" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('5'));
    key(&mut app, &mut d, KeyCode::Char('z'));
    let theme = Theme::builtin("dark").unwrap();
    let terminal = draw(&app, 120, 36);
    let buffer = terminal.backend().buffer();
    let text = screen(&app, 120, 36);
    // The first cell of a line starting with `text`, as drawn.
    let find = |needle: &str| {
        let (y, line) =
            text.lines().enumerate().find(|(_, l)| l.contains(needle)).unwrap_or_else(|| panic!("{needle}\n{text}"));
        let x = unicode_width::UnicodeWidthStr::width(&line[..line.find(needle).unwrap()]);
        &buffer[(x as u16, y as u16)]
    };
    let added = find("+DEFAULT = \"dark\"");
    assert_eq!((added.symbol(), added.fg), ("+", theme.diff_add.fg.unwrap()));
    let removed = find("-DEFAULT = \"light\"");
    assert_eq!((removed.symbol(), removed.fg), ("-", theme.diff_remove.fg.unwrap()));
    let hunk = find("@@ -1,5 +1,6 @@");
    assert_eq!(hunk.fg, theme.diff_hunk.fg.unwrap());
    // `+++ b/…` is a header, not an added line.
    assert_ne!(find("+++ b/app/theme.py").fg, theme.diff_add.fg.unwrap());
    // The current hunk's header is marked without colour too (reversed).
    assert!(!hunk.modifier.contains(Modifier::REVERSED));
    key(&mut app, &mut d, KeyCode::Char('}'));
    let terminal = draw(&app, 120, 36);
    let buffer = terminal.backend().buffer();
    let (y, line) = text.lines().enumerate().find(|(_, l)| l.contains("@@ -1,5 +1,6 @@")).unwrap();
    let x = unicode_width::UnicodeWidthStr::width(&line[..line.find("@@ -1,5").unwrap()]);
    assert!(buffer[(x as u16, y as u16)].modifier.contains(Modifier::REVERSED));
    // Without colour the signs still say what each line is.
    app.theme = Theme::builtin("dark").unwrap().without_color();
    let plain = screen(&app, 120, 36);
    assert!(plain.contains("+DEFAULT = \"dark\"") && plain.contains("-DEFAULT = \"light\""), "{plain}");
}

#[test]
fn a_run_refused_network_in_the_list_and_the_runs_tab() {
    let fx = Fixture::new();
    fx.start("deps", false, 5);
    fx.sent("deps");
    fx.reply("deps", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.needs_network(
        "deps",
        "0123456789abcdef0123456789abcdef01234567",
        &["index.example.com:8931", "pypi.example.com"],
    );
    let (mut app, mut d) = fx.app("dark");
    cmd(&mut app, &mut d, Cmd::SwitchFocus);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let terminal = draw(&app, 100, 20);
    insta::assert_snapshot!("runs_tab_needs_network_100x20", terminal.backend());
}

#[test]
fn an_infrastructure_failure_reads_could_not_run_not_failed() {
    let fx = Fixture::new();
    fx.start("flaky-net", false, 5);
    fx.sent("flaky-net");
    fx.reply("flaky-net", "Done.\nPR_URL: https://github.com/acme/widget/pull/7");
    fx.infra_failure("flaky-net", "reading pull request acme/widget#7: cannot reach https://api.github.com: dns error");
    let (mut app, mut d) = fx.app("dark");
    let list = screen(&app, 120, 12);
    assert!(list.contains("could not run (1 in a row)"), "{list}");
    assert!(!list.contains("run failed"), "an infrastructure failure is not a failed test run:\n{list}");
    insta::assert_snapshot!("infra_failure_list_120x12", draw(&app, 120, 12).backend());
    cmd(&mut app, &mut d, Cmd::SwitchFocus);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Conversation));
    let conversation = screen(&app, 120, 30);
    assert!(conversation.contains("could not run (1 in a row)"), "{conversation}");
}

/// `m` on the Diff tab of a ready PR: the person's words reviewed before they go to the
/// outbox, then shown in the Conversation tab.
#[test]
fn a_message_for_webgpt_from_the_diff_tab() {
    let fx = diff_home();
    let (mut app, mut d) = fx.app("dark");
    while selected_name(&app) != "dark-mode" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('5'));
    let effects = app.update(forgeloop::tui::app::Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char('m'))));
    let Some(forgeloop::tui::app::Effect::EditMessage { path, text }) = effects.first() else { panic!("{effects:?}") };
    let words = "docs/appearance.md is outside the brief's scope (existing web app only).\nPlease revert it and keep the change to app/ and tests/.";
    d.apply(
        &mut app,
        forgeloop::tui::app::Event::MessageEdited { path: path.clone(), result: Ok(format!("{text}{words}\n")) },
    );
    snap_diff("say_dialog", &app);
    key(&mut app, &mut d, KeyCode::Char('y'));
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Conversation));
    insta::assert_snapshot!("conversation_with_message_120x40", draw(&app, 120, 40).backend());
}

/// Trust, then verify (design §5.2): the rows' badges for what the last run did to the PR's
/// tests, the Runs tab's account of it, the Diff tab's filter "tests only" and the approval
/// of a `NEEDS_REVIEW` pass.
#[test]
fn the_prs_tests_in_the_list_the_runs_tab_and_the_approve_dialog() {
    let fx = trust_home();
    let (mut app, mut d) = fx.app("dark");
    let wide = screen(&app, 200, 30);
    for word in ["◆ REVIEW", "◆ 1 review", "⚠ assertions removed · ", "+ tests added · "] {
        assert!(wide.contains(word), "{word} missing:\n{wide}");
    }
    assert!(
        wide.contains(
            "◆ guarded waits for your review — v approve · m answer WebGPT — the PR changes protected paths: test.sh"
        ),
        "{wide}"
    );
    // Without colour the badges still say it in words.
    app.theme = Theme::builtin("dark").unwrap().without_color();
    assert!(screen(&app, 120, 40).contains("⚠ assertions removed"));
    app.theme = Theme::builtin("dark").unwrap();
    snap("trust_list", &app);

    assert_eq!(selected_name(&app), "guarded");
    key(&mut app, &mut d, KeyCode::Enter);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    snap("runs_tab_integrity", &app);
    key(&mut app, &mut d, KeyCode::Char('v'));
    snap("approve_dialog", &app);
    key(&mut app, &mut d, KeyCode::Esc);
    // The earlier run: its report read from its file; it left the tests alone.
    key(&mut app, &mut d, KeyCode::Char('j'));
    insta::assert_snapshot!("runs_tab_integrity_earlier_run_120x40", draw(&app, 120, 40).backend());
}

/// What a verdict rests on (issue 57): a pass held for its evidence and a shortcut, named in the
/// header and the Runs tab; a disputed run with both versions of the corrected test.
#[test]
fn what_a_verdict_rests_on_in_the_list_and_the_runs_tab() {
    let fx = proof_home();
    let (mut app, mut d) = fx.app("dark");
    let wide = screen(&app, 200, 30);
    assert!(wide.contains("TESTS DISPUTED"), "{wide}");
    select(&mut app, &mut d, "held-pass");
    key(&mut app, &mut d, KeyCode::Enter);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let runs = screen(&app, 120, 40);
    for words in [
        "Evidence: 1 test that ran at the base did not run",
        "Looks like a shortcut: mathx.py:4 returns 3000 when n == 1000",
        "Tripwire: the test framework reports failures faithfully",
    ] {
        assert!(runs.contains(words), "{words} missing:\n{runs}");
    }
    snap("runs_tab_evidence", &app);
    key(&mut app, &mut d, KeyCode::Esc);
    select(&mut app, &mut d, "disputed");
    key(&mut app, &mut d, KeyCode::Enter);
    cmd(&mut app, &mut d, Cmd::Tab(Tab::Runs));
    let runs = screen(&app, 120, 40);
    assert!(runs.contains("the PR says `self.assertEqual(area(3), 1080)`, your test says"), "{runs}");
    snap("runs_tab_disputed", &app);
}

#[test]
fn the_diff_tabs_filter_tests_only() {
    let fx = trust_home();
    let (mut app, mut d) = fx.app("dark");
    assert_eq!(selected_name(&app), "guarded");
    key(&mut app, &mut d, KeyCode::Enter);
    key(&mut app, &mut d, KeyCode::Char('5'));
    key(&mut app, &mut d, KeyCode::Char('t'));
    snap_diff("diff_tab_tests_only", &app);
    // A diff without a test file: the filter says so, and how to leave it.
    key(&mut app, &mut d, KeyCode::Tab);
    while selected_name(&app) != "code-only" {
        key(&mut app, &mut d, KeyCode::Char('j'));
    }
    insta::assert_snapshot!("diff_tab_tests_only_empty_80x24", draw(&app, 80, 24).backend());
}
