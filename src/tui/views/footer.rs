//! The header (counts per status group, runs in progress), the status line (messages, what is
//! watched) and the footer hints, which come from the keymap for the active context.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::domain::status::Status;
use crate::tui::app::{App, StatusGroup};
use crate::tui::keymap::{Cmd, Context};
use crate::tui::keys::key_for;

use super::truncate;

pub(super) fn header(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let groups: Vec<_> = app
        .counts()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(group, count)| {
            let (glyph, word, style) = match group {
                StatusGroup::Confirm => ("◆", "confirm", theme.attention),
                StatusGroup::Review => ("◆", "review", theme.attention),
                StatusGroup::Blocked => ("✗", "blocked", theme.error),
                StatusGroup::Ready => ("✓", "ready", theme.ok),
                StatusGroup::Waiting => ("◐", "waiting", theme.warn),
                StatusGroup::Ended => ("⊘", "ended", theme.muted),
                StatusGroup::Unreadable => ("!", "unreadable", theme.error),
            };
            (glyph, word, style, count)
        })
        .collect();
    let running =
        (!app.live_runs.is_empty()).then(|| format!(" {} {} running ", app.spinner_frame(), app.live_runs.len()));
    let full: usize = 11
        + groups.iter().map(|(_, w, _, n)| w.len() + n.to_string().len() + 5).sum::<usize>()
        + running.as_ref().map_or(0, |r| r.chars().count());
    let compact = full > usize::from(area.width);
    let mut spans = vec![Span::styled(" forgeloop ", theme.title)];
    for (glyph, word, style, count) in groups {
        let text = if compact { format!(" {glyph}{count}") } else { format!(" {glyph} {count} {word} ") };
        spans.push(Span::styled(text, style));
    }
    if let Some(running) = running {
        spans.push(Span::styled(
            if compact { format!(" {} {}", app.spinner_frame(), app.live_runs.len()) } else { running },
            theme.running,
        ));
    }
    for (short, full) in app.screens.badges() {
        spans.push(Span::styled(if compact { short } else { full }, theme.info));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(theme.status_bar), area);
}

pub(super) fn status_line(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let width = usize::from(area.width);
    let line = match &app.toast {
        Some(toast) => Line::from(Span::styled(
            format!(" {} ", truncate(&toast.text, width.saturating_sub(2))),
            if toast.error { theme.toast_error } else { theme.toast_info },
        )),
        None if app.watching.1.is_empty()
            && let Some(nudge) = brief_nudge(app).or_else(|| review_nudge(app)) =>
        {
            Line::from(Span::styled(truncate(&nudge, width), theme.attention))
        }
        None => {
            let (dirs, problems) = &app.watching;
            let noun = if *dirs == 1 { "dir" } else { "dirs" };
            let mut text = format!(" watching {dirs} {noun}: {}", app.shown(&app.roots.cycles_dir));
            if !app.roots.extra_dirs.is_empty() {
                text.push_str(&format!(" +{} extra", app.roots.extra_dirs.len()));
            }
            text.push_str(&format!(" · registry {}", app.shown(&app.roots.registry)));
            let mut spans = vec![Span::styled(truncate(&text, width), theme.muted)];
            if !problems.is_empty() {
                spans.push(Span::styled(format!(" · {} not watchable: {}", problems.len(), problems[0]), theme.warn));
            }
            Line::from(spans)
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

pub(super) fn hints(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let mut spans = Vec::new();
    let width = usize::from(area.width);
    let cost = |key: &str, label: &str| key.chars().count() + label.chars().count() + 3;
    let mut hints = app.hints();
    // The help hint is the way to every other key: when the row is too narrow it is the one
    // kept, at the end, and the others give way (marked with an ellipsis).
    let help = hints.iter().position(|(_, label)| *label == "help").map(|at| hints.remove(at));
    let reserved = help.as_ref().map_or(0, |(key, label)| cost(key, label));
    let mut used = 0usize;
    let mut cut = false;
    for (key, label) in &hints {
        if used + cost(key, label) + reserved > width {
            cut = true;
            break;
        }
        used += cost(key, label);
        spans.push(Span::styled(format!(" {key}"), theme.key));
        spans.push(Span::styled(format!(" {label} "), theme.muted));
    }
    if cut && used + 2 + reserved <= width {
        spans.push(Span::styled(" …", theme.muted));
    }
    if let Some((key, label)) = help.filter(|_| reserved <= width) {
        spans.push(Span::styled(format!(" {key}"), theme.key));
        spans.push(Span::styled(format!(" {label} "), theme.muted));
    }
    let [left] = Layout::horizontal([Constraint::Fill(1)]).areas(area);
    frame.render_widget(Paragraph::new(Line::from(spans)), left);
}

/// On a `NEEDS_REVIEW` cycle, the status line says why it waits and the keys that answer it
/// (from the keymap): approve, or send WebGPT your words.
fn review_nudge(app: &App) -> Option<String> {
    let entry = app.selected_entry()?;
    let state = entry.state.as_ref().filter(|s| s.status == Status::NeedsReview)?;
    let why = state
        .report
        .as_ref()
        .and_then(|r| r.review_reason())
        .unwrap_or_else(|| "its pass changed protected paths".to_owned());
    let approve = key_for(Context::Cycle, Cmd::Approve)?;
    let answer = key_for(Context::Cycle, Cmd::MessageWebgpt)?;
    let why = crate::tui::sanitize::clean(&why);
    Some(format!(" ◆ {} waits for your review — {approve} approve · {answer} answer WebGPT — {why}", entry.name()))
}

/// While a brief waits for a person, the status line says which cycle and the keys that confirm
/// it (from the keymap): the one thing the control room cannot do without you.
fn brief_nudge(app: &App) -> Option<String> {
    let waiting: Vec<String> = app
        .list
        .cycles
        .iter()
        .filter(|e| e.state.as_ref().is_some_and(|s| s.status == Status::AwaitingBriefConfirmation))
        .map(|e| e.name())
        .collect();
    let first = waiting.first()?;
    let selected = app.selected_state().is_some_and(|s| s.status == Status::AwaitingBriefConfirmation);
    let review = key_for(Context::Cycle, Cmd::ConfirmBrief)?;
    let yes = key_for(Context::ConfirmBrief, Cmd::Yes)?;
    let who = match waiting.len() {
        1 => format!("{first}: confirm its brief"),
        n => format!("{n} briefs to confirm, {first} first"),
    };
    Some(if selected {
        format!(" ◆ {who} — {review} review · {yes} confirm")
    } else {
        // Briefs to confirm sort first, so unless a filter moved it the top row is one: the
        // key to the top reaches it at once, where `n` would visit other rows first.
        let on_top = app
            .list
            .visible
            .first()
            .and_then(|&i| app.list.cycles[i].state.as_ref())
            .is_some_and(|s| s.status == Status::AwaitingBriefConfirmation);
        let select =
            if on_top { key_for(Context::List, Cmd::Top)? } else { key_for(Context::List, Cmd::NextAttention)? };
        format!(" ◆ {who} — {select} select · {review} review · {yes} confirm")
    })
}
