//! Log tab: the selected run's redacted log, read from disk a window at a time; follow, wrap,
//! search with highlighted matches.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::tui::pager::lines::{LineView, styled_line};
use crate::tui::pager::log::LogLine;
use crate::tui::panes::Draw;
use crate::tui::panes::SearchState;
use crate::tui::theme::Theme;

/// Draws the Log tab: its title and search line over the window read; notes the height it had,
/// for paging.
pub fn render(pane: &super::LogPane, d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    pane.height.set(body.height.max(1));
    if pane.path.is_none() {
        let text =
            if d.sel.rows.is_empty() { "No run log yet." } else { "Select a run in the Runs tab (3) and press Enter." };
        frame.render_widget(Paragraph::new(Span::styled(text, theme.muted)), area);
        return;
    }
    frame.render_widget(Paragraph::new(status_line(pane, d)), head);
    if let Some(error) = &pane.error {
        frame.render_widget(Paragraph::new(Span::styled(error.clone(), theme.error)).wrap(Wrap { trim: false }), body);
        return;
    }
    if !pane.loaded {
        frame.render_widget(Paragraph::new(Span::styled("Loading…", theme.muted)), body);
        return;
    }
    if pane.window.lines.is_empty() {
        frame.render_widget(Paragraph::new(Span::styled("(empty so far)", theme.muted)), body);
        return;
    }
    let query = if pane.search.query.is_empty() { None } else { Some(pane.search.query.as_str()) };
    let lines: Vec<Line> = pane
        .window
        .lines
        .iter()
        .map(|line| {
            let current = pane.search.current == Some(line.offset);
            render_line(line, query, current, pane.hscroll, pane.wrap, theme)
        })
        .collect();
    let mut paragraph = Paragraph::new(lines).style(theme.text);
    if pane.wrap {
        paragraph = paragraph.wrap(Wrap { trim: false });
    }
    frame.render_widget(paragraph, body);
}

fn status_line(pane: &super::LogPane, d: &Draw) -> Line<'static> {
    let theme = d.theme;
    let mut spans = vec![Span::styled(format!("{} · ", pane.title), theme.title)];
    let percent = if pane.window.len == 0 || pane.window.at_eof {
        100
    } else {
        (pane.window.top.saturating_mul(100) / pane.window.len.max(1)).min(99)
    };
    spans.push(Span::styled(format!("{} · {percent}% ", human_bytes(pane.window.len)), theme.muted));
    if pane.follow {
        spans.push(Span::styled("[follow] ", theme.running));
    }
    if pane.wrap {
        spans.push(Span::styled("[wrap] ", theme.accent));
    }
    if pane.finding_error {
        spans.push(Span::styled(format!("{} finding the first error… ", d.spinner), theme.muted));
    }
    if pane.search.editing {
        spans.push(Span::styled(format!("/{}█", pane.search.input), theme.accent));
    } else if !pane.search.query.is_empty() {
        let (text, style) = match pane.search.state {
            SearchState::Searching => (format!("{} searching", d.spinner), theme.muted),
            SearchState::Found if pane.search.wrapped => ("found (wrapped)".to_owned(), theme.warn),
            SearchState::Found => ("found".to_owned(), theme.ok),
            SearchState::NotFound => ("not found".to_owned(), theme.error),
            SearchState::Idle => (String::new(), theme.muted),
        };
        spans.push(Span::styled(format!("/{} ", pane.search.query), theme.accent));
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn render_line(
    line: &LogLine,
    query: Option<&str>,
    current: bool,
    hscroll: usize,
    wrap: bool,
    theme: &Theme,
) -> Line<'static> {
    let base = if is_footer(&line.text) { footer_style(&line.text, theme) } else { theme.text };
    let view = LineView { query, current, hscroll, wrap, pinned: 0 };
    styled_line(&line.text, line.truncated, base, &view, theme)
}

/// The runner's section lines: `$ argv`, `[exit N after Ts]`, `[not run] …`.
fn is_footer(text: &str) -> bool {
    text.starts_with("$ ")
        || (text.starts_with('[')
            && (text.contains(" after ") || text.starts_with("[not run]") || text.starts_with("[... forgeloop")))
}

fn footer_style(text: &str, theme: &Theme) -> Style {
    if text.starts_with("$ ") {
        theme.accent
    } else if text.starts_with("[exit 0 ") {
        theme.ok
    } else if text.starts_with("[not run]") || text.starts_with("[... forgeloop") {
        theme.muted
    } else {
        theme.error
    }
}
