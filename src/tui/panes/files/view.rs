//! Files tab: one line per file of the cycle, its path as it may be shown (secrets masked).

use std::path::{Path, PathBuf};

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::cycle::files::CyclePaths;
use crate::tui::model::CycleEntry;
use crate::tui::panes::{Draw, RunRow};
use crate::tui::widgets::field;

/// The files of `entry`, each with what it is: the cycle's own from the state file's path, the
/// newest run's log and report as the run rows found them (`rows`, newest first).
pub fn files_of(entry: &CycleEntry, rows: &[RunRow]) -> Vec<(&'static str, PathBuf)> {
    let mut files = vec![("State", entry.path.clone())];
    let Ok(paths) = CyclePaths::new(entry.path.clone()) else { return files };
    files.push(("Journal", paths.journal()));
    files.push(("Runs", paths.runs()));
    if let Some(log) = rows.first().and_then(|r| r.log.clone()) {
        files.push(("Last run's log", log));
    }
    if let Some(report) = rows.first().and_then(|r| r.report.clone()) {
        files.push(("Last run's report", report));
    }
    files.push(("Lock", paths.lock()));
    files
}

/// Draws the Files tab of `entry`.
pub fn render(pane: &super::FilesPane, d: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let pad = 19;
    let mut lines: Vec<Line> = files_of(entry, d.sel.rows)
        .into_iter()
        .map(|(what, path)| field(theme, what, pad, d.shown(Path::new(&path)), theme.text))
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "Files a run writes are in Runs; the journal is one JSON event per line.",
        theme.muted,
    )));
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    frame.render_widget(pane.text.scrolled(paragraph, area), area);
}
