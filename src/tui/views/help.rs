//! The `?` overlay, generated from the keymap.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::keymap::help_sections;

use super::centered;

pub fn render(app: &App, frame: &mut Frame, area: Rect, scroll: u16) {
    let theme = &app.theme;
    let rect = centered(area, 84, area.height.saturating_sub(2).max(6));
    let mut lines = Vec::new();
    for (title, rows) in help_sections() {
        lines.push(Line::from(Span::styled(title, theme.header)));
        for (keys, help) in rows {
            lines.push(Line::from(vec![Span::styled(format!("  {keys:<18} "), theme.key), Span::styled(help, theme.text)]));
        }
        lines.push(Line::from(""));
    }
    lines.push(Line::from(Span::styled(
        "Status: ◆ confirm brief · ○ await PR · ◐ await fix · ✓ ready · ■ cap · ✗ blocked · ⊘ aborted · ↷ superseded · ! unreadable",
        theme.muted,
    )));
    let max = (lines.len() as u16).saturating_sub(rect.height.saturating_sub(2));
    let block = super::dialogs::popup_block(theme, " Keys (Esc closes) ");
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(block).style(theme.popup).wrap(Wrap { trim: false }).scroll((scroll.min(max), 0)),
        rect,
    );
}
