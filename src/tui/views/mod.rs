//! Drawing: a pure function of the [`App`]. One file per view, tab or popup; this one lays
//! out the screen and holds the small helpers they share.

mod dialogs;

use super::panes::list;
pub use super::widgets::*;
mod footer;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Tabs};

use std::path::Path;

use super::app::{App, Focus, Screen};
use super::panes::Draw;

/// Below this height the list and the detail are not shown together.
const SPLIT_MIN_HEIGHT: u16 = 18;

/// Draws the whole screen for `app`: header, the screen shown, status line, hints and popups.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if area.width < 10 || area.height < 4 {
        frame.render_widget(Paragraph::new("forgeloop: enlarge the terminal"), area);
        return;
    }
    let [header, body, status, hints] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1), Constraint::Length(1)])
            .areas(area);
    footer::header(app, frame, header);
    let rows = app.run_rows();
    let running = |path: &Path| app.is_running(path);
    let available = |cmd| app.available_with(cmd, &rows);
    let d = app.draw(&rows, &running, &available);
    match app.screen {
        Screen::Cycles => cycles_screen(app, &d, frame, body),
        other => app.screens.render(other, &d, frame, body),
    }
    footer::status_line(app, frame, status);
    footer::hints(app, frame, hints);
    dialogs::render(app, frame, area);
}

fn cycles_screen(app: &App, d: &Draw, frame: &mut Frame, body: Rect) {
    if app.list.cycles.is_empty() {
        list::view::render(d, frame, body);
        return;
    }
    let single = app.zoom || body.height < SPLIT_MIN_HEIGHT;
    if single {
        app.hits.list.set(Rect::default());
        app.hits.detail.set(Rect::default());
        match app.focus {
            Focus::List => list::view::render(d, frame, body),
            Focus::Detail => detail(app, d, frame, body),
        }
        return;
    }
    let rows = app.list.visible.len() as u16 + 3;
    let list_height = rows.clamp(5, (body.height * 2 / 5).max(5));
    let [top, bottom] = Layout::vertical([Constraint::Length(list_height), Constraint::Min(1)]).areas(body);
    list::view::render(d, frame, top);
    detail(app, d, frame, bottom);
}

fn detail(app: &App, d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Focus::Detail;
    let title = match app.selected_entry() {
        Some(entry) => {
            let (glyph, word, style) = entry_badge(entry, theme);
            Line::from(vec![
                Span::styled(format!(" {} ", entry.name()), theme.title),
                Span::styled(format!("{glyph} {word} "), style),
            ])
        }
        None => Line::from(Span::styled(" No cycle selected ", theme.title)),
    };
    let block = pane_block(theme, focused).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    app.hits.detail.set(area);
    if inner.height == 0 {
        return;
    }
    let [tabs_area, content] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
    app.hits.tabs.set(tabs_area);
    let (titles, dividers) = tab_bar(tabs_area.width);
    let divider = if dividers { "│" } else { "" };
    let tabs = Tabs::new(titles.into_iter().map(Line::from))
        .select(app.tabs.tab.index())
        .style(theme.tab_inactive)
        .highlight_style(theme.tab_active)
        .divider(Span::styled(divider, theme.border));
    frame.render_widget(tabs, tabs_area);
    let Some(entry) = app.selected_entry() else {
        let text = if app.list.cycles.is_empty() {
            empty_text(&app.theme, app.shown(&app.roots.cycles_dir))
        } else {
            vec![Line::from("Select a cycle in the list.")]
        };
        frame.render_widget(Paragraph::new(text).style(theme.muted), content);
        return;
    };
    if let Some(error) = &entry.error {
        let text = vec![
            Line::from(Span::styled("This state file cannot be read.", theme.error)),
            Line::from(""),
            Line::from(Span::styled(error.clone(), theme.text)),
            Line::from(""),
            Line::from(Span::styled(app.shown(&entry.path), theme.muted)),
            Line::from(Span::styled("It reloads by itself when the file changes.", theme.muted)),
        ];
        frame.render_widget(Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: false }), content);
        return;
    }
    app.tabs.render(d, entry, frame, content);
}
