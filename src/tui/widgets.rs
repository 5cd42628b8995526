//! Small drawing helpers every view and pane shares: frames, badges, times, wrapping.

use std::cell::Cell;

use chrono::{DateTime, Utc};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};
use unicode_width::UnicodeWidthChar;

use crate::domain::integrity::Flag;
use crate::domain::status::Status;

use super::model::CycleEntry;
use super::registry::Tab;
use super::theme::Theme;

/// The frame of a pane: thick and in the focus colour when it has the keys.
pub fn pane_block(theme: &Theme, focused: bool) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused { BorderType::Thick } else { BorderType::Plain })
        .border_style(if focused { theme.border_focus } else { theme.border })
}

/// The frame of every popup (dialogs and the help overlay).
pub fn popup_block(theme: &Theme, title: &str) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.popup_border)
        .title(Span::styled(title.to_owned(), theme.popup_border))
        .style(theme.popup)
}

/// Glyph, word and style of a status; never colour alone.
pub fn status_badge(status: Option<Status>, theme: &Theme) -> (&'static str, &'static str, Style) {
    match status {
        None => ("!", "UNREADABLE", theme.error),
        Some(status) => match status {
            Status::AwaitingBriefConfirmation => ("◆", "CONFIRM BRIEF", theme.attention),
            Status::AwaitingWebgptPr => ("○", "AWAIT PR", theme.info),
            Status::AwaitingWebgptFix => ("◐", "AWAIT FIX", theme.warn),
            Status::ReadyToMerge => ("✓", "READY", theme.ok),
            Status::NeedsReview => ("◆", "REVIEW", theme.attention),
            Status::TestsDisputed => ("◆", "TESTS DISPUTED", theme.attention),
            Status::BlockedMaxIterations => ("■", "CAP REACHED", theme.error),
            Status::BlockedNoPr => ("✗", "NO PR", theme.error),
            Status::BlockedConnectorDenied => ("✗", "CONNECTOR", theme.error),
            Status::BlockedModelUnavailable => ("✗", "NO MODEL", theme.error),
            Status::BlockedProjectUnavailable => ("✗", "NO PROJECT", theme.error),
            Status::BlockedProjectSources => ("✗", "SOURCES", theme.error),
            Status::BlockedDelegationUnconfirmed => ("✗", "UNCONFIRMED", theme.error),
            Status::BlockedInfra => ("✗", "INFRA", theme.error),
            Status::BlockedPrClosed => ("✗", "PR CLOSED", theme.error),
            Status::Aborted => ("⊘", "ABORTED", theme.muted),
            Status::Superseded => ("↷", "SUPERSEDED", theme.muted),
            Status::AwaitingAttestation => ("?", "ATTEST", theme.info),
            Status::AwaitingPacket => ("◇", "PACKET", theme.attention),
            Status::AwaitingWebgptReview => ("○", "AWAIT REVIEW", theme.info),
            Status::AwaitingTriage => ("◆", "TRIAGE", theme.attention),
            Status::ReviewDone => ("✓", "REVIEWED", theme.ok),
        },
    }
}

/// A cycle's badge: its status's, unless its last run was refused network the person has
/// not allowed yet (design §5.6) — the one thing it waits for then.
pub fn entry_badge(entry: &CycleEntry, theme: &Theme) -> (&'static str, &'static str, Style) {
    if entry.needs_network() {
        return ("⚠", "NEEDS NET", theme.attention);
    }
    status_badge(entry.status(), theme)
}

/// What the last run's head did to the PR's tests (design §5.2), as the row and the Runs tab
/// show it: words and a glyph, never colour alone; a milder look for tests only added.
pub fn tests_badge(flag: Flag, theme: &Theme) -> (String, Style) {
    let style = match flag {
        Flag::AssertionsRemoved => theme.error,
        Flag::TestsChanged => theme.warn,
        Flag::TestsAdded => theme.muted,
    };
    let glyph = if flag.needs_a_look() { "⚠" } else { "+" };
    (format!("{glyph} {}", flag.badge()), style)
}

/// The badge in a narrow column: `⚠ −asserts`, `⚠ tests`, `+ tests`.
pub fn short_tests_badge(flag: Flag, theme: &Theme) -> (String, Style) {
    let (_, style) = tests_badge(flag, theme);
    let text = match flag {
        Flag::AssertionsRemoved => "⚠ −asserts",
        Flag::TestsChanged => "⚠ tests",
        Flag::TestsAdded => "+ tests",
    };
    (text.to_owned(), style)
}

/// The flag of a cycle's last run, if its `integrity` has one.
pub fn entry_tests_flag(entry: &CycleEntry) -> Option<Flag> {
    entry.view.as_ref()?.tests.as_ref().map(|t| t.flag)
}

/// The status word for narrow lists (at most 10 cells).
pub fn short_word(word: &'static str) -> &'static str {
    match word {
        "CONFIRM BRIEF" => "CONFIRM",
        "CAP REACHED" => "CAP",
        "UNCONFIRMED" => "UNCONFIRM",
        "UNREADABLE" => "UNREADABLE",
        "SUPERSEDED" => "SUPERSEDED",
        "AWAIT REVIEW" => "REVIEW?",
        other => other,
    }
}

/// "now", "5m", "3h", "2d" since an RFC 3339 time.
pub fn age(now: DateTime<Utc>, at: Option<&str>) -> String {
    let Some(at) = at.and_then(|a| DateTime::parse_from_rfc3339(a).ok()) else { return "—".into() };
    let secs = (now - at.with_timezone(&Utc)).num_seconds();
    match secs {
        s if s < 60 => "now".into(),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// Time since `at` as a stopwatch: `0:42`, `12:05`, `1:02:03`; empty when unknown.
pub fn elapsed(now: DateTime<Utc>, at: &str) -> String {
    let Ok(at) = DateTime::parse_from_rfc3339(at) else { return String::new() };
    let secs = (now - at.with_timezone(&Utc)).num_seconds().max(0);
    match secs {
        s if s < 3600 => format!("{}:{:02}", s / 60, s % 60),
        s => format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
    }
}

/// `2026-11-29T10:00:00Z` → `11-29 10:00` (UTC), compact for tables.
pub fn short_time(at: &str) -> String {
    match DateTime::parse_from_rfc3339(at) {
        Ok(t) => t.with_timezone(&Utc).format("%m-%d %H:%M").to_string(),
        Err(_) => at.chars().take(16).collect(),
    }
}

/// Cuts `text` to `width` terminal cells, ending in "…" when cut.
pub fn truncate(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let total: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return text.to_owned();
    }
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// A centered rectangle of at most `width` × `height` inside `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

/// A labelled value wrapped to `width` with a hanging indent, so long values stay in their
/// column: `Goal               first part…` / `                   continued`.
pub fn wrapped_field<'a>(
    theme: &Theme,
    label: &str,
    pad: usize,
    value: &str,
    style: Style,
    width: u16,
) -> Vec<Line<'a>> {
    let room = usize::from(width).saturating_sub(pad + 1).max(8);
    let mut lines = Vec::new();
    let mut first = true;
    for paragraph in value.split('\n') {
        for piece in wrap_words(paragraph, room) {
            let label = if first { label } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{label:<pad$} "), theme.muted),
                Span::styled(piece, style),
            ]));
            first = false;
        }
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(format!("{label:<pad$} "), theme.muted)));
    }
    lines
}

/// Greedy word wrap by terminal cells; words longer than the width are cut.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split(' ') {
        let w: usize = word.chars().map(|c| c.width().unwrap_or(0)).sum();
        if used > 0 && used + 1 + w > width {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        if w > width {
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if used + cw > width {
                    lines.push(std::mem::take(&mut line));
                    used = 0;
                }
                line.push(c);
                used += cw;
            }
        } else {
            line.push_str(word);
            used += w;
        }
    }
    lines.push(line);
    lines
}

/// A labelled line: `label` padded to `pad`, then the value.
pub fn field<'a>(theme: &Theme, label: &str, pad: usize, value: impl Into<String>, style: Style) -> Line<'a> {
    Line::from(vec![Span::styled(format!("{label:<pad$} "), theme.muted), Span::styled(value.into(), style)])
}

/// The tab bar: its titles (`1 Brief`), and whether they go between dividers (` 1 Brief │`)
/// or, when that does not fit `width`, without them (` 1 Brief  2 Conversation `), so every
/// tab's name stays readable on an 80-column terminal.
pub fn tab_bar(width: u16) -> (Vec<String>, bool) {
    let titles: Vec<String> = Tab::ALL.iter().map(|t| format!("{} {}", t.key(), t.title())).collect();
    let full: usize = titles.iter().map(|t| t.chars().count() + 3).sum::<usize>().saturating_sub(1);
    let dividers = full <= usize::from(width);
    (titles, dividers)
}

/// The cells `tab`'s title takes in the tab bar, its padding and the divider after it included.
pub fn tab_cells(tab: Tab, dividers: bool) -> u16 {
    let title = u16::try_from(tab.title().chars().count()).unwrap_or(u16::MAX);
    title.saturating_add(if dividers { 5 } else { 4 })
}

/// Screen areas from the last draw, for mouse hits.
#[derive(Debug, Default, Clone)]
pub struct Hits {
    /// The cycle list's area.
    pub list: Cell<Rect>,
    /// The list's first row shown (its scroll), so a click's row maps to a cycle.
    pub list_offset: Cell<usize>,
    /// The tab bar's area.
    pub tabs: Cell<Rect>,
    /// The detail pane's area.
    pub detail: Cell<Rect>,
}

/// What an empty home says: how to start a cycle, and where the control room looks.
pub fn empty_text(theme: &Theme, watching: String) -> Vec<Line<'static>> {
    vec![
        Line::from(Span::styled("No cycles yet.", theme.title)),
        Line::from(""),
        Line::from(Span::styled("Start one from the coordinator agent:", theme.text)),
        Line::from(Span::styled("  forgeloop forge --request … --state NAME --await-confirmation", theme.accent)),
        Line::from(""),
        Line::from(Span::styled(format!("Watching {watching}"), theme.muted)),
        Line::from(Span::styled("New cycles appear here by themselves.", theme.muted)),
    ]
}

/// What an outbox holds, as the control room names it.
pub fn outbox_kind_name(kind: crate::domain::state::OutboxKind) -> &'static str {
    match kind {
        crate::domain::state::OutboxKind::Prompt => "prompt",
        crate::domain::state::OutboxKind::Handoff => "handoff",
        crate::domain::state::OutboxKind::Followup => "follow-up",
        crate::domain::state::OutboxKind::Message => "the person's message",
        crate::domain::state::OutboxKind::Challenge => "challenge",
        crate::domain::state::OutboxKind::Review => "review request",
    }
}
