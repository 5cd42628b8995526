//! Conversation tab: the journal as a timeline — prompt issued, what was sent and when, each
//! reply with its classification and text, a person's messages with their words, follow-ups,
//! handoffs, blocks — and the message waiting to be sent.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::Value;

use crate::domain::event::EventKind;
use crate::domain::state::Actor;
use crate::tui::load::summarize;
use crate::tui::model::CycleEntry;
use crate::tui::panes::Draw;
use crate::tui::theme::Theme;
use crate::tui::widgets::outbox_kind_name;

use crate::tui::widgets::short_time;

const REPLY_LINES: usize = 12;

/// Draws the Conversation tab of `entry` from its journal, once loaded.
pub fn render(pane: &super::ConversationPane, d: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let Some(state) = &entry.state else { return };
    let mut lines: Vec<Line> = Vec::new();
    match &d.loaded.journal {
        Some((path, Ok(events))) if path == &entry.path => {
            if events.is_empty() {
                lines.push(Line::from(Span::styled("The journal is empty.", theme.muted)));
            }
            for event in events {
                let kind = event.event_kind();
                let style = event_style(theme, kind, &event.data);
                lines.push(Line::from(vec![
                    Span::styled(format!("{} ", short_time(&event.at)), theme.muted),
                    Span::styled(format!("{:<6} ", event.actor.as_str()), actor_style(theme, event.actor)),
                    Span::styled(summarize(&event.kind, &event.data), style),
                ]));
                if kind == Some(EventKind::ReplyRecorded) {
                    if let Some(reason) = event.data.get("reason").and_then(Value::as_str) {
                        lines
                            .push(Line::from(Span::styled(format!("                     why: {reason}"), theme.muted)));
                    }
                    if let Some(text) = event.data.get("text").and_then(Value::as_str) {
                        quote(&mut lines, theme, text, REPLY_LINES, area.width);
                    }
                }
                // A person's words to WebGPT, as journaled (redacted like every outgoing text).
                if kind == Some(EventKind::MessageWritten)
                    && let Some(text) = event.data.get("text").and_then(Value::as_str)
                {
                    quote(&mut lines, theme, text, REPLY_LINES, area.width);
                }
            }
        }
        Some((path, Err(error))) if path == &entry.path => {
            lines.push(Line::from(Span::styled(format!("The journal cannot be read: {error}"), theme.error)));
        }
        _ => lines.push(Line::from(Span::styled("Loading the journal…", theme.muted))),
    }
    lines.push(Line::from(""));
    match &state.outbox {
        Some(outbox) => {
            let kind = outbox_kind_name(outbox.kind);
            let when = match &outbox.sent_at {
                Some(at) => Span::styled(format!("sent at {}", short_time(at)), theme.ok),
                None => Span::styled("waiting to be sent (y copies it, X drops it)", theme.attention),
            };
            lines.push(Line::from(vec![Span::styled(format!("Outbox: {kind}, "), theme.header), when]));
            quote(&mut lines, theme, &outbox.text, usize::MAX, area.width);
        }
        None => match &state.withdrawn {
            Some(w) => lines.push(Line::from(Span::styled(
                format!(
                    "Outbox: nothing to send; the {} was taken out unsent at {} by {} ({}).",
                    outbox_kind_name(w.kind),
                    short_time(&w.at),
                    w.by.as_str(),
                    w.why
                ),
                theme.muted,
            ))),
            None => lines.push(Line::from(Span::styled("Outbox: nothing to send.", theme.muted))),
        },
    }
    frame.render_widget(pane.text.scrolled(Paragraph::new(lines).wrap(Wrap { trim: false }), area), area);
}

fn quote(lines: &mut Vec<Line>, theme: &Theme, text: &str, max: usize, width: u16) {
    let all: Vec<&str> = text.lines().collect();
    let room = usize::from(width).saturating_sub(4).max(8);
    for line in all.iter().take(max) {
        // Untrusted text: escape sequences go, other controls show as escapes.
        for part in crate::tui::widgets::wrap_words(&crate::tui::sanitize::clean(line), room) {
            lines.push(Line::from(vec![Span::styled("  │ ", theme.border), Span::styled(part, theme.text)]));
        }
    }
    if all.len() > max {
        lines.push(Line::from(Span::styled(format!("  │ … {} more lines", all.len() - max), theme.muted)));
    }
}

fn actor_style(theme: &Theme, actor: Actor) -> Style {
    match actor {
        Actor::Human => theme.attention,
        Actor::Agent => theme.info,
        Actor::System => theme.muted,
    }
}

fn event_style(theme: &Theme, kind: Option<EventKind>, data: &Value) -> Style {
    use EventKind as K;
    match kind {
        Some(K::Blocked | K::Aborted) => theme.error,
        Some(K::BriefConfirmed | K::Unblocked | K::CapExtended) => theme.ok,
        Some(K::ReplyRecorded) => match data.get("class").and_then(Value::as_str) {
            Some("PR_FOUND") => theme.ok,
            _ => theme.warn,
        },
        Some(K::RunFinished) => match data.get("status").and_then(Value::as_str) {
            Some("TEST_PASSED") => theme.ok,
            _ => theme.error,
        },
        _ => theme.text,
    }
}
