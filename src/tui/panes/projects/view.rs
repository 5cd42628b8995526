//! Projects view: every registry record, invalid ones flagged with their error and records
//! that cycles contradict flagged as conflicts.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::tui::load::project_id;
use crate::tui::model::ProjectRecord;
use crate::tui::panes::Draw;

use crate::tui::widgets::pane_block;

/// Why a valid record disagrees with the cycles bound to its repository, if it does.
pub fn conflict(d: &Draw, record: &ProjectRecord) -> Option<String> {
    let id = record.project_url.as_deref().and_then(project_id)?;
    d.list.cycles.iter().filter_map(|c| c.state.as_ref()).find_map(|s| {
        let same_repo = s.repository.as_deref().is_some_and(|r| r.eq_ignore_ascii_case(&record.key));
        let other = s.project_url.as_deref().and_then(project_id).filter(|p| *p != id)?;
        same_repo.then(|| format!("cycle {} uses Project {other}", s.task_space))
    })
}

/// Draws the Projects screen: every registry record, flagged when invalid or contradicted by a
/// cycle.
pub fn render(pane: &super::ProjectsPane, d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let block = pane_block(theme, true).title(Line::from(vec![
        Span::styled(format!(" Projects ({}) ", d.registry.records.len()), theme.title),
        Span::styled(format!(" {} ", d.shown(d.registry_dir)), theme.muted),
    ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if d.registry.records.is_empty() {
        let text = if d.registry.read {
            vec![
                Line::from(Span::styled("The registry has no records.", theme.muted)),
                Line::from(Span::styled(
                    "Bind one with `forgeloop project bind --repository OWNER/REPO …`.",
                    theme.muted,
                )),
            ]
        } else {
            vec![Line::from(Span::styled("Reading the registry…", theme.muted))]
        };
        frame.render_widget(Paragraph::new(text), inner);
        return;
    }
    let height = usize::from(inner.height.saturating_sub(1)).max(1);
    let offset = pane.selected.saturating_sub(height - 1);
    let rows: Vec<Row> = d
        .registry
        .records
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, record)| {
            let on_bar;
            let theme = if i == pane.selected {
                on_bar = theme.on_selection();
                &on_bar
            } else {
                theme
            };
            let bound = d
                .list
                .cycles
                .iter()
                .filter(|c| {
                    c.state
                        .as_ref()
                        .and_then(|s| s.repository.as_deref())
                        .is_some_and(|r| r.eq_ignore_ascii_case(&record.key))
                })
                .count();
            let (check, style) = match (&record.error, conflict(d, record)) {
                (Some(e), _) => (format!("✗ invalid: {e}"), theme.error),
                (None, Some(c)) => (format!("! conflict: {c}"), theme.warn),
                (None, None) => ("✓ ok".to_owned(), theme.ok),
            };
            let row = Row::new(vec![
                Cell::from(Span::styled(record.key.clone(), theme.text)),
                Cell::from(record.project_name.clone().unwrap_or_else(|| "—".into())),
                Cell::from(Span::styled(record.project_url.clone().unwrap_or_else(|| "—".into()), theme.info)),
                Cell::from(bound.to_string()),
                Cell::from(Span::styled(check, style)),
            ]);
            if i == pane.selected { row.style(theme.selection) } else { row }
        })
        .collect();
    let header = Row::new(["Repository", "Project", "URL", "Cycles", "Check"]).style(theme.header);
    let widths =
        [Constraint::Fill(2), Constraint::Fill(2), Constraint::Fill(3), Constraint::Length(6), Constraint::Fill(3)];
    frame.render_widget(Table::new(rows, widths).header(header).column_spacing(1), inner);
}
