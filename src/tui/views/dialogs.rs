//! Popups: the confirm-brief review, yes/no confirmations, small inputs, messages, help.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use crate::tui::app::{App, ConfirmDialog, Popup};
use crate::tui::theme::Theme;

use super::{centered, wrap_words, wrapped_field};

pub fn popup_block(theme: &Theme, title: &str) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.popup_border)
        .title(Span::styled(title.to_owned(), theme.popup_border))
        .style(theme.popup)
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    for popup in &app.popups {
        match popup {
            Popup::Help { scroll } => super::help::render(app, frame, area, *scroll),
            Popup::ConfirmBrief(dialog) => confirm(app, dialog, frame, area),
            Popup::YesNo { title, body, .. } => {
                let keys = vec![key(app, "y", "yes"), Span::raw("   "), key(app, "n", "no")];
                simple(app, frame, area, title, body, None, keys);
            }
            Popup::Input { title, prompt, value, error, .. } => {
                let keys = vec![key(app, "Enter", "ok"), Span::raw("   "), key(app, "Esc", "cancel")];
                simple(app, frame, area, title, prompt, Some((value, error.as_deref())), keys);
            }
            Popup::Message { title, text, copy } => {
                let mut keys = vec![key(app, "Esc", "close")];
                if copy.is_some() {
                    keys.extend([Span::raw("   "), key(app, "y", "copy")]);
                }
                simple(app, frame, area, title, text, None, keys);
            }
        }
    }
}

fn key(app: &App, k: &str, label: &str) -> Span<'static> {
    Span::styled(format!("[{k}] {label}"), app.theme.key)
}

fn simple(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    title: &str,
    body: &str,
    input: Option<(&String, Option<&str>)>,
    keys: Vec<Span<'static>>,
) {
    let theme = &app.theme;
    let width = 64.min(area.width);
    let inner_width = usize::from(width.saturating_sub(4)).max(1);
    let mut lines: Vec<Line> = Vec::new();
    for text in body.lines() {
        lines.push(Line::from(Span::styled(text.to_owned(), theme.popup)));
    }
    if let Some((value, error)) = input {
        lines.push(Line::from(""));
        lines.push(Line::from(vec![Span::styled("> ", theme.key), Span::styled(format!("{value}█"), theme.accent)]));
        if let Some(error) = error {
            lines.push(Line::from(Span::styled(error.to_owned(), theme.error)));
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(keys));
    let wrapped: u16 = lines.iter().map(|l| (l.width().max(1).div_ceil(inner_width)) as u16).sum();
    let rect = centered(area, width, wrapped + 2);
    frame.render_widget(Clear, rect);
    let block = popup_block(theme, &format!(" {title} "));
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), rect);
}

fn confirm(app: &App, dialog: &ConfirmDialog, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let width = 96.min(area.width);
    let inner = width.saturating_sub(2);
    let mut lines: Vec<Line> = Vec::new();
    if dialog.edited.is_some() {
        lines.push(Line::from(Span::styled("Edited: this wording replaces the proposed one when you confirm.", theme.warn)));
        lines.push(Line::from(""));
    }
    lines.push(Line::from(Span::styled("WebGPT question", theme.header)));
    for part in wrap_words(&dialog.question.replace('\n', " "), usize::from(inner.saturating_sub(2))) {
        lines.push(Line::from(Span::styled(format!("  {part}"), theme.popup)));
    }
    lines.push(Line::from(""));
    for (label, text) in &dialog.fields {
        lines.extend(wrapped_field(theme, &format!("{label}:"), 19, text, theme.popup, inner).into_iter().map(|l| {
            let mut spans = l.spans;
            if let Some(first) = spans.first_mut() {
                first.style = theme.accent;
            }
            Line::from(spans)
        }));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "Confirming issues the prompt for the coordinator to send; it is journaled as you (human, via tui).",
        theme.muted,
    )));
    if let Some(error) = &dialog.error {
        lines.push(Line::from(""));
        for part in wrap_words(error, usize::from(inner)) {
            lines.push(Line::from(Span::styled(part, theme.error)));
        }
    }
    lines.push(Line::from(""));
    if dialog.busy {
        lines.push(Line::from(Span::styled(format!("{} confirming…", app.spinner_frame()), theme.running)));
    } else {
        lines.push(Line::from(vec![
            key(app, "y", "confirm"),
            Span::raw("   "),
            key(app, "e", "edit in $EDITOR"),
            Span::raw("   "),
            key(app, "Esc", "cancel"),
        ]));
    }
    let rect = centered(area, width, lines.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    let block = popup_block(theme, &format!(" Confirm the delegation brief — {} ", dialog.name));
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }).scroll((dialog.scroll, 0)), rect);
}
