//! Brief tab: the request, the WebGPT question, the five fields and how (and whether) they
//! were confirmed, with the next step.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::domain::brief::Field;
use crate::domain::next::next_step;
use crate::domain::status::Status;
use crate::tui::model::CycleEntry;
use crate::tui::panes::Draw;

use crate::tui::widgets::{entry_badge, field, short_time, wrapped_field};

/// Draws the Brief tab of `entry`: its question and brief, how they were confirmed, the next step.
pub fn render(pane: &super::BriefPane, d: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let Some(state) = &entry.state else { return };
    let pad = 18;
    let mut lines: Vec<Line> = Vec::new();
    // The row's badge, so the two never disagree (a run refused network shows NEEDS NET in both).
    let (glyph, word, style) = entry_badge(entry, theme);
    lines.push(field(theme, "Status", pad, format!("{glyph} {word} ({})", state.status), style));
    let next = next_step(state, &entry.path.display().to_string());
    let w = area.width;
    lines.extend(wrapped_field(theme, "Next", pad, &d.redactor.redact(&next.explanation), theme.text, w));
    lines.extend(wrapped_field(theme, "Request", pad, &state.request, theme.text, w));
    if let Some(driver) = &state.driver {
        // A cycle a remote client started through `forgeloop serve` (design §8.1).
        lines.push(field(theme, "Driven by", pad, d.redactor.redact(driver).into_owned(), theme.info));
    }
    lines.push(field(
        theme,
        "Iteration",
        pad,
        format!(
            "{} of {}{}",
            state.iteration,
            state.max_iterations,
            if state.cap_reached() { " (cap reached)" } else { "" }
        ),
        theme.text,
    ));
    if let Some(error) = &state.last_error {
        lines.extend(wrapped_field(theme, "Last error", pad, error, theme.error, w));
    }
    lines.push(Line::from(""));
    let heading = match (state.webgpt_question_proposed, state.status == Status::AwaitingBriefConfirmation) {
        (true, true) => "WebGPT question (proposed by forgeloop from the brief: confirm or edit it)",
        (true, false) => "WebGPT question (proposed by forgeloop from the brief)",
        (false, _) => "WebGPT question",
    };
    lines.push(Line::from(Span::styled(heading, theme.header)));
    for text in state.webgpt_question.lines() {
        lines.push(Line::from(Span::styled(format!("  {text}"), theme.text)));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("Delegation brief", theme.header)));
    match &state.brief {
        Some(brief) => {
            for f in Field::ALL {
                lines.extend(wrapped_field(theme, f.label(), pad, brief.get(f), theme.text, w));
            }
        }
        None => {
            for text in state.intent_brief.lines() {
                lines.push(Line::from(Span::styled(format!("  {text}"), theme.text)));
            }
        }
    }
    lines.push(Line::from(""));
    match &state.brief_confirmation {
        Some(c) => lines.push(field(
            theme,
            "Confirmed",
            pad,
            format!("by {} via {} at {}", c.by.as_str(), c.via, short_time(&c.at)),
            theme.ok,
        )),
        None if state.status == Status::AwaitingBriefConfirmation => {
            lines.push(Line::from(vec![
                Span::styled(format!("{:<pad$} ", "Confirmed"), theme.muted),
                Span::styled("not yet — press ", theme.attention),
                Span::styled("c", theme.key),
                Span::styled(" to review and confirm", theme.attention),
            ]));
        }
        None => lines.push(field(theme, "Confirmed", pad, "no confirmation recorded", theme.muted)),
    }
    if let Some(abort) = &state.abort {
        lines.push(field(
            theme,
            "Aborted",
            pad,
            format!("by {} at {}: {}", abort.by.as_str(), short_time(&abort.at), abort.reason),
            theme.muted,
        ));
    }
    frame.render_widget(pane.text.scrolled(Paragraph::new(lines).wrap(Wrap { trim: false }), area), area);
}
