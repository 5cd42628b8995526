//! Popups: the confirm-brief review, a message for WebGPT before it is sent, yes/no
//! confirmations, small inputs, messages, help.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::tui::app::{App, ConfirmDialog, Popup, SayDialog};
use crate::tui::sanitize;

use super::{centered, popup_block, wrap_words, wrapped_field};

pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    for popup in &app.popups {
        match popup {
            Popup::Help { scroll } => {
                crate::tui::panes::help::view::render(&app.theme, crate::tui::keys::active(), frame, area, *scroll)
            }
            Popup::ConfirmBrief(dialog) => confirm(app, dialog, frame, area),
            Popup::Say(dialog) => say(app, dialog, frame, area),
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
    let inner_width = usize::from(width.saturating_sub(2)).max(1);
    let mut lines: Vec<Line> = Vec::new();
    for text in body.lines() {
        for part in wrap_words(text, inner_width) {
            lines.push(Line::from(Span::styled(part, theme.popup)));
        }
    }
    if let Some((value, error)) = input {
        lines.push(Line::from(""));
        lines.push(Line::from(vec![Span::styled("> ", theme.key), Span::styled(format!("{value}█"), theme.accent)]));
        if let Some(error) = error {
            lines.push(Line::from(Span::styled(error.to_owned(), theme.error)));
        }
    }
    lines.push(Line::from(""));
    framed(app, frame, area, width, title, lines, 0, Line::from(keys));
}

/// A popup of `width` sized to its lines, with the key line pinned to its bottom so it
/// stays visible however small the terminal is.
#[allow(clippy::too_many_arguments)]
fn framed(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    width: u16,
    title: &str,
    lines: Vec<Line>,
    scroll: u16,
    keys: Line,
) {
    let rect = centered(area, width, lines.len() as u16 + 3);
    frame.render_widget(Clear, rect);
    let block = popup_block(&app.theme, &format!(" {title} "));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if inner.height == 0 {
        return;
    }
    let [body, bottom] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(inner);
    let max = (lines.len() as u16).saturating_sub(body.height);
    frame.render_widget(Paragraph::new(lines).style(app.theme.popup).scroll((scroll.min(max), 0)), body);
    frame.render_widget(Paragraph::new(keys).style(app.theme.popup), bottom);
}

fn confirm(app: &App, dialog: &ConfirmDialog, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let width = 96.min(area.width);
    let inner = width.saturating_sub(2);
    let mut lines: Vec<Line> = Vec::new();
    if dialog.edited.is_some() {
        lines.push(Line::from(Span::styled(
            "Edited: this wording replaces the proposed one when you confirm.",
            theme.warn,
        )));
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
    let what = match dialog.driver.as_deref().and_then(|d| d.strip_prefix("connector:")) {
        Some(client) => format!(
            "Confirming lets {} (through forgeloop serve) open its PR and test it with your profile; it is journaled as you (human, via tui).",
            crate::tui::sanitize::clean(client)
        ),
        None => "Confirming issues the prompt for the coordinator to send; it is journaled as you (human, via tui)."
            .to_owned(),
    };
    for part in wrap_words(&what, usize::from(inner)) {
        lines.push(Line::from(Span::styled(part, theme.muted)));
    }
    if let Some(error) = &dialog.error {
        lines.push(Line::from(""));
        for part in wrap_words(error, usize::from(inner)) {
            lines.push(Line::from(Span::styled(part, theme.error)));
        }
    }
    lines.push(Line::from(""));
    let keys = if dialog.busy {
        Line::from(Span::styled(format!("{} confirming…", app.spinner_frame()), theme.running))
    } else {
        let narrow = inner < 50;
        Line::from(vec![
            key(app, "y", "confirm"),
            Span::raw(if narrow { " " } else { "   " }),
            key(app, "e", if narrow { "edit" } else { "edit in $EDITOR" }),
            Span::raw(if narrow { " " } else { "   " }),
            key(app, "Esc", "cancel"),
        ])
    };
    let title = format!("Confirm the delegation brief — {}", dialog.name);
    framed(app, frame, area, width, &title, lines, dialog.scroll, keys);
}

/// The person's words as they will go to WebGPT, drawn like any untrusted text (controls shown
/// as escapes, secrets masked), what sending does, and the keys.
fn say(app: &App, dialog: &SayDialog, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let width = 96.min(area.width);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let mut lines: Vec<Line> = vec![Line::from(Span::styled("To WebGPT, in this cycle's chat:", theme.header))];
    for text in dialog.text.lines() {
        let shown = app.redactor.redact(&sanitize::clean(text)).into_owned();
        for part in wrap_words(&shown, inner.saturating_sub(4).max(8)) {
            lines.push(Line::from(vec![Span::styled("  │ ", theme.border), Span::styled(part, theme.popup)]));
        }
    }
    lines.push(Line::from(""));
    let mut about = vec![
        "Sending puts it in the outbox: the coordinator sends it next. It is journaled as you (human); it is not an iteration.".to_owned(),
    ];
    about.extend(dialog.notes.iter().cloned());
    for note in about {
        for part in wrap_words(&note, inner) {
            lines.push(Line::from(Span::styled(part, theme.muted)));
        }
    }
    if let Some(error) = &dialog.error {
        lines.push(Line::from(""));
        for part in wrap_words(error, inner) {
            lines.push(Line::from(Span::styled(part, theme.error)));
        }
    }
    lines.push(Line::from(""));
    let keys = if dialog.busy {
        Line::from(Span::styled(format!("{} sending…", app.spinner_frame()), theme.running))
    } else {
        let narrow = inner < 50;
        Line::from(vec![
            key(app, "y", "send"),
            Span::raw(if narrow { " " } else { "   " }),
            key(app, "e", if narrow { "edit" } else { "edit in $EDITOR" }),
            Span::raw(if narrow { " " } else { "   " }),
            key(app, "Esc", "cancel"),
        ])
    };
    let title = format!("Message for WebGPT — {}", dialog.name);
    framed(app, frame, area, width, &title, lines, dialog.scroll, keys);
}
