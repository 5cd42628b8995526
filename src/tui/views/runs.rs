//! Runs tab: the run history (iteration, SHA, result, duration, sandbox, comment link), plus logs in
//! `runs/` that are not in the history yet (a run in progress, or one that never finished).

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::tui::app::{App, Focus, RunResult, RunRow, run_result_word};
use crate::tui::keymap::Cmd;

use super::short_time;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let rows = app.run_rows();
    if rows.is_empty() {
        let text = vec![
            Line::from(Span::styled("No test run yet.", theme.muted)),
            Line::from(Span::styled(
                "Runs appear here when the coordinator tests a PR (forge --pr) or you rerun (r).",
                theme.muted,
            )),
        ];
        frame.render_widget(Paragraph::new(text), area);
        return;
    }
    let selected = app.detail.run_sel.min(rows.len() - 1);
    // The selected run's refused destinations, on the last line (design §5.6).
    let area = match refused_line(app, &rows[selected]) {
        Some(line) if area.height > 3 => {
            let [table, bottom] =
                ratatui::layout::Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
            frame.render_widget(Paragraph::new(line), bottom);
            table
        }
        _ => area,
    };
    let height = usize::from(area.height.saturating_sub(1)).max(1);
    let offset = selected.saturating_sub(height - 1);
    let table_rows: Vec<Row> = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, r)| {
            let picked = i == selected && app.focus == Focus::Detail;
            let on_bar;
            let theme = if picked {
                on_bar = theme.on_selection();
                &on_bar
            } else {
                theme
            };
            let (glyph, style) = match r.result {
                RunResult::Passed => ("✓", theme.ok),
                RunResult::Failed => ("✗", theme.error),
                RunResult::Live => (app.spinner_frame(), theme.running),
                RunResult::Incomplete => ("?", theme.warn),
                RunResult::NeedsNetwork => ("⚠", theme.warn),
            };
            let row = Row::new(vec![
                Cell::from(r.iteration.map_or("—".into(), |i| i.to_string())),
                Cell::from(Span::styled(r.sha12.clone(), theme.accent)),
                Cell::from(Span::styled(format!("{glyph} {}", run_result_word(r.result)), style)),
                Cell::from(r.duration.map_or("—".into(), |d| format!("{d:.1}s"))),
                Cell::from(r.started_at.as_deref().map_or("—".into(), short_time)),
                Cell::from(Span::styled(r.actor.clone().unwrap_or_default(), theme.muted)),
                Cell::from({
                    let (text, warn) = sandbox_cell(r.sandbox.as_deref());
                    Span::styled(text, if warn { theme.warn } else { theme.muted })
                }),
                Cell::from(Span::styled(r.comment_url.clone().unwrap_or_else(|| "—".into()), theme.info)),
            ]);
            if picked { row.style(theme.selection) } else { row }
        })
        .collect();
    let header =
        Row::new(["#", "SHA", "Result", "Duration", "Started", "By", "Sandbox", "Comment"]).style(theme.header);
    let widths = [
        Constraint::Length(3),
        Constraint::Length(12),
        Constraint::Length(15),
        Constraint::Length(9),
        Constraint::Length(11),
        Constraint::Length(6),
        Constraint::Length(13),
        Constraint::Fill(1),
    ];
    frame.render_widget(Table::new(table_rows, widths).header(header).column_spacing(1), area);
}

/// "refused: a:443, b:80 — A allows them for acme/widget", for a run whose proxy refused
/// destinations.
fn refused_line<'a>(app: &'a App, row: &RunRow) -> Option<Line<'a>> {
    if row.refused.is_empty() {
        return None;
    }
    let theme = &app.theme;
    let mut spans = vec![Span::styled("refused: ", theme.warn), Span::styled(row.refused.join(", "), theme.accent)];
    match (&row.allowed_at, row.result == RunResult::NeedsNetwork && app.available(Cmd::AllowHosts)) {
        (Some(at), _) => spans.push(Span::styled(format!(" — allowed by you at {}", short_time(at)), theme.ok)),
        (None, true) => spans.push(Span::styled(" — A allows them for this repository", theme.muted)),
        (None, false) => {}
    }
    Some(Line::from(spans))
}

/// The Runs table's short form of a run's sandbox label (the tier and whether it had the
/// network), and whether it is a warning: an unsandboxed run always is.
fn sandbox_cell(label: Option<&str>) -> (String, bool) {
    match label {
        None => ("—".to_owned(), false),
        Some("unsandboxed") => ("⚠ unsandboxed".to_owned(), true),
        Some(label) => {
            let tier = if label.starts_with("isolated (Landlock)") { "landlock" } else { "isolated" };
            let net = if label.contains("host network") {
                " +net"
            } else if label.contains("allowlist") {
                " +allow"
            } else {
                ""
            };
            (format!("{tier}{net}"), false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sandbox_cell;

    #[test]
    fn the_sandbox_column_warns_about_an_unsandboxed_run() {
        assert_eq!(sandbox_cell(Some("unsandboxed")), ("⚠ unsandboxed".to_owned(), true));
        assert_eq!(sandbox_cell(Some("isolated, no network")), ("isolated".to_owned(), false));
        assert_eq!(sandbox_cell(Some("isolated (Landlock), host network")), ("landlock +net".to_owned(), false));
        assert_eq!(sandbox_cell(None), ("—".to_owned(), false));
        assert_eq!(
            sandbox_cell(Some("isolated, network: allowlist for setup (2 hosts), none for the tests")),
            ("isolated +allow".to_owned(), false)
        );
    }
}
