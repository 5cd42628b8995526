//! Whole screens on ratatui's TestBackend at 80×24, 120×40 and 40×12 with a fixed clock,
//! plus checks on cell styles (snapshots keep only the text).

mod tui_support;

use crossterm::event::KeyCode;
use forgeloop::domain::status::Status;
use forgeloop::tui::Theme;
use forgeloop::tui::keymap::Cmd;
use forgeloop::tui::tab::Tab;
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
