//! Review tab: the target, the route, the attestation, the packet, then the findings (the
//! selected one with its whole text and decision) and what the replies held that was not a
//! finding. One column of lines wrapped here, so the selected finding can be kept in view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::domain::findings::Severity;
use crate::domain::review::{Attestation, Finding, Packet, Review, Route, Verdict};
use crate::domain::review_step::packet_waits_for_yes;
use crate::domain::state::CycleState;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::panes::Draw;
use crate::tui::registry::Tab;
use crate::tui::sanitize::clean;
use crate::tui::theme::Theme;
use crate::tui::widgets::{field, short_time, truncate, wrap_words, wrapped_field};

/// The labels' column.
const PAD: usize = 13;

/// Draws the Review tab of `entry`.
pub fn render(pane: &super::ReviewPane, d: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let Some(state) = &entry.state else { return };
    let Some(review) = &state.review else {
        let lines = vec![Line::from(vec![
            Span::styled("This is a PR cycle: it has no review. ", theme.text),
            Span::styled(
                "A review of a change starts with `forgeloop review start --state NAME --pr OWNER/REPO#N`.",
                theme.muted,
            ),
        ])];
        let paragraph = Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false });
        frame.render_widget(paragraph, area);
        return;
    };
    let width = area.width;
    let text = |s: &str| clean(&d.redactor.redact(s));
    let mut lines: Vec<Line> = Vec::new();
    head(d, state, review, &text, &mut lines, width);
    lines.push(Line::from(""));
    let untriaged = review.untriaged().count();
    lines.push(Line::from(Span::styled(
        format!("Findings: {}, {untriaged} untriaged", review.findings.len()),
        theme.header,
    )));
    if review.findings.is_empty() {
        let why = if review.replies == 0 { "no reply was recorded yet" } else { "the replies held none" };
        lines.push(Line::from(Span::styled(format!("none: {why}"), theme.muted)));
    }
    let selected = pane.selected.min(review.findings.len().saturating_sub(1));
    let mut shown = (0, 0);
    for (i, finding) in review.findings.iter().enumerate() {
        let start = lines.len();
        lines.push(row(theme, finding, i == selected, &text, width));
        if i == selected {
            detail(theme, finding, &text, &mut lines, width);
            shown = (start, lines.len());
        }
    }
    if !review.unparsed.is_empty() {
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(
            format!(
                "{} part{} of the replies {} not read as findings (forgeloop review show lists them)",
                review.unparsed.len(),
                if review.unparsed.len() == 1 { "" } else { "s" },
                if review.unparsed.len() == 1 { "was" } else { "were" }
            ),
            theme.warn,
        )));
    }
    if !review.findings.is_empty() {
        lines.push(Line::from(""));
        let keys = [Cmd::TriageFix, Cmd::TriageDefer, Cmd::TriageDismiss, Cmd::TriageQuestion]
            .map(|cmd| d.keys.key_for(Context::Tab(Tab::Review), cmd).unwrap_or_else(|| "?".into()));
        let hint = format!(
            "{} FIX · {} DEFER · {} DISMISS · {} QUESTION (you write the question) the selected finding",
            keys[0], keys[1], keys[2], keys[3]
        );
        for piece in wrap_words(&hint, usize::from(width)) {
            lines.push(Line::from(Span::styled(piece, theme.muted)));
        }
    }
    // Keep the selected finding (its row and its text) in view: scroll no further than needed.
    let height = usize::from(area.height);
    let (start, end) = shown;
    let offset = end.saturating_sub(height).min(start);
    let offset = u16::try_from(offset).unwrap_or(u16::MAX);
    frame.render_widget(Paragraph::new(lines).scroll((offset, 0)), area);
}

/// The target, question, route, attestation and packet.
fn head<'a>(
    d: &Draw,
    state: &CycleState,
    review: &Review,
    text: &dyn Fn(&str) -> String,
    lines: &mut Vec<Line<'a>>,
    width: u16,
) {
    let theme = d.theme;
    let target = &review.target;
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    let mut what = format!("{} {}..{}", target.repository, short(&target.base), short(&target.head));
    if let Some(pr) = &target.pr {
        what.push_str(&format!(" · PR {pr}"));
    }
    if let Some(range) = &target.range {
        what.push_str(&format!(" · {range}"));
    }
    let what = text(&what);
    lines.extend(wrapped_field(theme, "Target", PAD, &what, theme.text, width));
    if let Some(question) = &review.question {
        lines.extend(wrapped_field(theme, "Question", PAD, &text(question), theme.text, width));
    }
    let (route, style) = match review.route {
        Some(Route::Connector) => ("CONNECTOR: the chat reads the commit through its connector", theme.ok),
        Some(Route::LocalBundle) => ("LOCAL_BUNDLE: the chat reads the packet uploaded to it", theme.text),
        None => ("not decided yet (the attestation decides it)", theme.muted),
    };
    lines.extend(wrapped_field(theme, "Route", PAD, route, style, width));
    match &review.attestation {
        Some(attestation) => attestation_lines(d, attestation, text, lines, width),
        None => lines.push(field(theme, "Attestation", PAD, "none yet (forgeloop attest)", theme.muted)),
    }
    match &review.packet {
        Some(packet) => packet_lines(d, state, packet, text, lines, width),
        None => lines.push(field(theme, "Packet", PAD, "none", theme.muted)),
    }
}

/// What was seen, the verdict with its why, and the expiry.
fn attestation_lines<'a>(
    d: &Draw,
    attestation: &Attestation,
    text: &dyn Fn(&str) -> String,
    lines: &mut Vec<Line<'a>>,
    width: u16,
) {
    let theme = d.theme;
    let seen = &attestation.seen;
    let connector = if seen.connector_attached { "connector attached" } else { "connector NOT attached" };
    let mode = seen.mode.as_deref().map_or_else(|| "no mode shown".to_owned(), |m| format!("mode {}", text(m)));
    let what = format!("model {} · {mode} · {connector} · {}", text(&seen.model), text(&seen.surface));
    lines.extend(wrapped_field(theme, "Attestation", PAD, &what, theme.text, width));
    lines.extend(wrapped_field(theme, "Conversation", PAD, &text(&seen.conversation_url), theme.accent, width));
    let (verdict, style) = match &attestation.verdict {
        Verdict::Valid { at } => (format!("✓ valid (judged {})", short_time(at)), theme.ok),
        Verdict::Invalid { at, why } => (format!("✗ invalid (judged {}): {}", short_time(at), text(why)), theme.error),
        Verdict::Pending => ("… pending: the challenge is not answered yet".to_owned(), theme.warn),
    };
    lines.extend(wrapped_field(theme, "Verdict", PAD, &verdict, style, width));
    let expired = d.now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true) >= attestation.expires_at;
    let expires = format!("{}{}", short_time(&attestation.expires_at), if expired { " (expired)" } else { "" });
    lines.push(field(theme, "Expires", PAD, expires, if expired { theme.warn } else { theme.text }));
}

/// Where the packet is, its size and risks, and the person's yes.
fn packet_lines<'a>(
    d: &Draw,
    state: &CycleState,
    packet: &Packet,
    text: &dyn Fn(&str) -> String,
    lines: &mut Vec<Line<'a>>,
    width: u16,
) {
    let theme = d.theme;
    lines.extend(wrapped_field(theme, "Packet", PAD, &text(&packet.path), theme.text, width));
    let size = format!(
        "{} files · {} bytes · about {} tokens · {} risk{}",
        packet.files,
        packet.bytes,
        packet.tokens,
        packet.risks,
        if packet.risks == 1 { "" } else { "s" }
    );
    let style = if packet.risks > 0 { theme.warn } else { theme.text };
    lines.push(field(theme, "", PAD, size, style));
    let (approval, style) = match &packet.approved {
        Some(approval) => (format!("✓ approved by {} at {}", approval.by.as_str(), short_time(&approval.at)), theme.ok),
        None if packet_waits_for_yes(state) => {
            let key = d.keys.key_for(Context::Tab(Tab::Review), Cmd::ApprovePacket).unwrap_or_else(|| "?".into());
            (format!("◆ needs your yes before it leaves the machine ({key})"), theme.attention)
        }
        None if packet.needs_approval => ("needs a person's yes".to_owned(), theme.attention),
        None => ("no yes needed (this repository's packets were approved before, no risks)".to_owned(), theme.muted),
    };
    lines.extend(wrapped_field(theme, "Approval", PAD, &approval, style, width));
}

/// A severity's word and look: words first, colour second.
fn severity(theme: &Theme, severity: Severity) -> (&'static str, Style) {
    match severity {
        Severity::Critical => ("CRITICAL", theme.error),
        Severity::High => ("HIGH", theme.attention),
        Severity::Medium => ("MEDIUM", theme.warn),
        Severity::Low => ("LOW", theme.info),
        Severity::Info => ("INFO", theme.muted),
    }
}

/// The decision's word, and "fixed" once a tested run fixed it.
fn decision(finding: &Finding) -> String {
    let mut word = finding.triage.as_ref().map_or("untriaged", |t| t.decision.as_str()).to_owned();
    if finding.fixed.is_some() {
        word.push_str(" ✓ fixed");
    }
    word
}

/// The columns before a finding's location: marker, number, severity, decision.
const LEAD: usize = 2 + 5 + 9 + 12;

/// A finding's row: number, severity, decision, location, the start of its text; the
/// location's column shrinks on a narrow screen so the decision stays in view.
fn row<'a>(theme: &Theme, finding: &Finding, selected: bool, text: &dyn Fn(&str) -> String, width: u16) -> Line<'a> {
    let width = usize::from(width);
    let (word, style) = severity(theme, finding.severity);
    let marker = if selected { "▸ " } else { "  " };
    let room = width.saturating_sub(LEAD + 12).clamp(8, 24);
    let location = truncate(&text(&finding.location()), room);
    let decided_style = match &finding.triage {
        _ if finding.fixed.is_some() => theme.ok,
        Some(_) => theme.text,
        None => theme.attention,
    };
    // Too little room for words leaves the text to the selected finding's lines below.
    let rest_room = width.saturating_sub(LEAD + room + 1);
    let rest = if rest_room < 8 { String::new() } else { truncate(&text(&finding.text), rest_room) };
    let base = if selected { theme.selection } else { Style::default() };
    Line::from(vec![
        Span::styled(marker, base),
        Span::styled(format!("#{:<4}", finding.number), base.patch(theme.text)),
        Span::styled(format!("{word:<9}"), base.patch(style)),
        Span::styled(format!("{:<12}", decision(finding)), base.patch(decided_style)),
        Span::styled(format!("{location:<room$} "), base.patch(theme.text)),
        Span::styled(rest, base.patch(theme.muted)),
    ])
}

/// The selected finding's whole text, its decision with who and when, and what fixed it.
fn detail<'a>(theme: &Theme, finding: &Finding, text: &dyn Fn(&str) -> String, lines: &mut Vec<Line<'a>>, width: u16) {
    let room = usize::from(width).saturating_sub(6).max(8);
    for piece in wrap_words(&text(&finding.text), room) {
        lines.push(Line::from(Span::styled(format!("      {piece}"), theme.text)));
    }
    if let Some(triage) = &finding.triage {
        let mut said = format!("{} by {} at {}", triage.decision.as_str(), triage.by.as_str(), short_time(&triage.at));
        if let Some(note) = &triage.note {
            said.push_str(&format!(": {}", text(note)));
        }
        if triage.asked {
            said.push_str(" (asked in the chat)");
        }
        for piece in wrap_words(&said, room) {
            lines.push(Line::from(Span::styled(format!("      {piece}"), theme.muted)));
        }
    }
    if let Some(fixed) = &finding.fixed {
        let head = fixed.head_sha.get(..12).unwrap_or(&fixed.head_sha);
        let said = format!("✓ fixed by {} at {head} ({})", text(&fixed.pr), short_time(&fixed.at));
        lines.push(Line::from(Span::styled(format!("      {said}"), theme.ok)));
    }
}
