//! The `?` overlay, generated from the keymap.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;

use crate::tui::widgets::{centered, wrap_words};

/// Draws the `?` overlay from the keymap in force, scrolled by `scroll` lines.
pub fn render(theme: &Theme, keys: &Keymap, frame: &mut Frame, area: Rect, scroll: u16) {
    let rect = centered(area, 84, area.height.saturating_sub(2).max(6));
    let mut lines = Vec::new();
    for (title, rows) in keys.help_sections() {
        lines.push(Line::from(Span::styled(title, theme.header)));
        for (keys, help) in rows {
            let room = usize::from(rect.width.saturating_sub(2)).saturating_sub(22).max(10);
            for (i, part) in wrap_words(help, room).into_iter().enumerate() {
                let keys = if i == 0 { keys.as_str() } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("  {keys:<19} "), theme.key),
                    Span::styled(part, theme.text),
                ]));
            }
        }
        lines.push(Line::from(""));
    }
    let legend = "Status: ◆ confirm brief · ○ await PR · ◐ await fix · ✓ ready · ■ cap reached · ✗ blocked · ⊘ aborted · ↷ superseded · ! unreadable";
    for part in wrap_words(legend, usize::from(rect.width.saturating_sub(2))) {
        lines.push(Line::from(Span::styled(part, theme.muted)));
    }
    let max = (lines.len() as u16).saturating_sub(rect.height.saturating_sub(2));
    let block = crate::tui::widgets::popup_block(theme, " Keys (Esc closes) ");
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.popup).scroll((scroll.min(max), 0)), rect);
}
