//! Runs tab: the run history (iteration, SHA, result, what the head did to the PR's tests,
//! duration, sandbox, comment link), plus logs in `runs/` that are not in the history yet (a
//! run in progress, or one that never finished). Under the table, the selected run's refused
//! hosts and its `integrity` (design §5.2): the test files it changed against the base and
//! since the run before, the assertion lines it removed, the protected paths it touched and,
//! on a `NEEDS_REVIEW` cycle, why it waits for you.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use crate::domain::diff::FileStatus;
use crate::domain::integrity::{Flag, TestFileChange};
use crate::domain::status::Status;
use crate::domain::test_files::TestFileKind;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::panes::run_rows::{RunResult, RunRow, integrity, run_result_word};
use crate::tui::panes::{Draw, Focus};
use crate::tui::sanitize::clean;
use crate::tui::theme::Theme;

use crate::tui::widgets::{short_tests_badge, short_time, tests_badge, wrap_words};

/// Draws the Runs tab: the runs table, and under it the selected run's refused hosts and
/// `integrity`.
pub fn render(d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let rows = d.sel.rows;
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
    let selected = d.loaded.run.min(rows.len() - 1);
    // Under the table: the selected run's refused destinations (design §5.6), then what it did
    // to the PR's tests and protected paths (design §5.2), below a rule.
    let mut below: Vec<Line> = refused_line(d, &rows[selected]).into_iter().collect();
    let tests = match d.sel.entry {
        Some(entry) => integrity_lines(d, entry, &rows[selected], area.width),
        None => Vec::new(),
    };
    let rule = !tests.is_empty();
    below.extend(tests);
    let area = if !below.is_empty() && area.height > 3 {
        // Right under the table; the table keeps at least half the tab (or all its rows).
        let rows_height = rows.len() as u16 + 1;
        let table_min = rows_height.min((area.height / 2).max(2));
        let height = (below.len() as u16 + u16::from(rule)).min(area.height - table_min);
        let table_height = rows_height.min(area.height - height);
        let [table, bottom, _] = ratatui::layout::Layout::vertical([
            Constraint::Length(table_height),
            Constraint::Length(height),
            Constraint::Fill(1),
        ])
        .areas(area);
        let block = match rows[selected].iteration.filter(|_| rule) {
            Some(k) => Block::default()
                .borders(Borders::TOP)
                .border_style(theme.border)
                .title(Span::styled(format!(" Run {k} "), theme.header)),
            None => Block::default(),
        };
        let inner = block.inner(bottom);
        frame.render_widget(block, bottom);
        frame.render_widget(Paragraph::new(below), inner);
        table
    } else {
        area
    };
    // The Tests column is there when a run changed the PR's tests.
    let wide = area.width >= 110;
    let badge =
        |flag: Flag, theme: &Theme| if wide { tests_badge(flag, theme) } else { short_tests_badge(flag, theme) };
    let tests_width = rows.iter().filter_map(|r| r.tests).map(|f| badge(f, theme).0.chars().count()).max();
    let height = usize::from(area.height.saturating_sub(1)).max(1);
    let offset = selected.saturating_sub(height - 1);
    let table_rows: Vec<Row> = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, r)| {
            let picked = i == selected && d.focus == Focus::Detail;
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
                RunResult::Live => (d.spinner, theme.running),
                RunResult::Incomplete => ("?", theme.warn),
                RunResult::NeedsNetwork => ("⚠", theme.warn),
            };
            let mut cells = vec![
                Cell::from(r.iteration.map_or("—".into(), |i| i.to_string())),
                Cell::from(Span::styled(r.sha12.clone(), theme.accent)),
                Cell::from(Span::styled(format!("{glyph} {}", run_result_word(r.result)), style)),
            ];
            if tests_width.is_some() {
                cells.push(match r.tests {
                    Some(flag) => {
                        let (badge, style) = badge(flag, theme);
                        Cell::from(Span::styled(badge, style))
                    }
                    None => Cell::from(Span::styled("—", theme.muted)),
                });
            }
            cells.extend([
                Cell::from(r.duration.map_or("—".into(), |d| format!("{d:.1}s"))),
                Cell::from(r.started_at.as_deref().map_or("—".into(), short_time)),
                Cell::from(Span::styled(r.actor.clone().unwrap_or_default(), theme.muted)),
                Cell::from({
                    let (text, warn) = sandbox_cell(r.sandbox.as_deref());
                    Span::styled(text, if warn { theme.warn } else { theme.muted })
                }),
                Cell::from(Span::styled(r.comment_url.clone().unwrap_or_else(|| "—".into()), theme.info)),
            ]);
            let row = Row::new(cells);
            if picked { row.style(theme.selection) } else { row }
        })
        .collect();
    let mut header = vec!["#", "SHA", "Result"];
    let mut widths = vec![Constraint::Length(3), Constraint::Length(12), Constraint::Length(15)];
    if let Some(width) = tests_width {
        header.push("Tests");
        widths.push(Constraint::Length(width as u16));
    }
    header.extend(["Duration", "Started", "By", "Sandbox", "Comment"]);
    widths.extend([
        Constraint::Length(9),
        Constraint::Length(11),
        Constraint::Length(6),
        Constraint::Length(13),
        Constraint::Fill(1),
    ]);
    let header = Row::new(header).style(theme.header);
    frame.render_widget(Table::new(table_rows, widths).header(header).column_spacing(1), area);
}

/// What the last run's verdict rests on (issue 57): the runners' own results against the base's,
/// the tripwire, a confirmation from the base layer, held tests the PR corrected.
fn proof_lines(lines: &mut Vec<Line<'static>>, report: &crate::domain::report::Report, theme: &Theme, width: usize) {
    use crate::domain::test_results::Tripwire;
    if let Some(evidence) = &report.evidence {
        let label = "Evidence: ";
        let style = if evidence.stands { theme.ok } else { theme.attention };
        let none = report.baseline.as_ref().and_then(|b| b.none.as_deref()).map(|w| format!(" (no baseline: {w})"));
        let text = format!("{}{}", evidence.summary, none.unwrap_or_default());
        wrapped(lines, vec![Span::styled(label, theme.header)], label.len(), &clean(&text), style, width);
    }
    match &report.tripwire {
        Some(Tripwire::Tampered(why)) => {
            let label = "Tripwire: ";
            let text = format!("the test framework does not report failures faithfully: {why}");
            wrapped(lines, vec![Span::styled(label, theme.header)], label.len(), &clean(&text), theme.error, width);
        }
        Some(Tripwire::Faithful) => lines.push(Line::from(vec![
            Span::styled("Tripwire: ", theme.header),
            Span::styled("the test framework reports failures faithfully", theme.muted),
        ])),
        _ => {}
    }
    if let Some(confirmation) = &report.confirmation {
        let label = "Confirmed: ";
        let text = format!(
            "passed on this cycle's cache ({} earlier run(s) wrote it), then again from the base's cache alone: the second run is the verdict",
            confirmation.layer_runs
        );
        wrapped(lines, vec![Span::styled(label, theme.header)], label.len(), &text, theme.muted, width);
    }
    for test in &report.disputed {
        let label = "◆ Disputed: ";
        wrapped(
            lines,
            vec![Span::styled(label, theme.attention)],
            label.chars().count(),
            &clean(&test.words()),
            theme.attention,
            width,
        );
    }
}

/// The selected run's `integrity`, when it is at hand (the last run's report is in the state;
/// an earlier run's is read from its file): nothing for a run forgeloop did not check.
fn integrity_lines(d: &Draw, entry: &CycleEntry, row: &RunRow, width: u16) -> Vec<Line<'static>> {
    let theme = d.theme;
    let Some(iteration) = row.iteration.filter(|_| matches!(row.result, RunResult::Passed | RunResult::Failed)) else {
        return Vec::new();
    };
    let head = || Span::styled("Tests: ", theme.header);
    let integrity = match integrity(d.loaded, entry, iteration) {
        Ok(Some(integrity)) => integrity,
        Ok(None) => {
            // Not checked (a report from before), or only the journal's word on it.
            return row.tests.map_or_else(Vec::new, |flag| {
                let (badge, style) = tests_badge(flag, theme);
                vec![Line::from(vec![head(), Span::styled(badge, style)])]
            });
        }
        Err(why) => return vec![Line::from(vec![head(), Span::styled(clean(&why), theme.muted)])],
    };
    let width = usize::from(width).max(20);
    let mut lines = Vec::new();
    // Why a NEEDS_REVIEW pass waits, first: the one thing that needs you.
    let last = entry.state.as_ref().and_then(|s| s.history.last()).map(|r| r.iteration);
    let waits = entry.status() == Some(Status::NeedsReview) && last == Some(iteration);
    // The last run's report is in the state: what its verdict rests on (issue 57).
    let report = entry.state.as_ref().and_then(|s| s.report.as_ref()).filter(|_| last == Some(iteration));
    let reason = match report {
        Some(report) => report.review_reason(),
        None => integrity.review_reason(),
    };
    if let Some(reason) = reason.filter(|_| waits) {
        let keys =
            match (d.keys.key_for(Context::Cycle, Cmd::Approve), d.keys.key_for(Context::Cycle, Cmd::MessageWebgpt)) {
                (Some(approve), Some(answer)) => format!(" — {approve} approve · {answer} answer WebGPT"),
                _ => String::new(),
            };
        let label = "◆ Waits for your review: ";
        wrapped(
            &mut lines,
            vec![Span::styled(label, theme.attention)],
            label.chars().count(),
            &format!("{}{keys}", clean(&reason)),
            theme.attention,
            width,
        );
    }
    let first = match (&integrity.error, integrity.flag) {
        (Some(error), _) => vec![head(), Span::styled(format!("not checked — {}", clean(error)), theme.warn)],
        (None, Some(flag)) => {
            let (badge, style) = tests_badge(flag, theme);
            // A fix that removed the assertions that failed is said first, wherever the flag is.
            let words = integrity.fix_words().map_or_else(|| what(flag).to_owned(), |fix| clean(&fix));
            vec![head(), Span::styled(badge, style), Span::styled(format!(" — {words}"), theme.muted)]
        }
        (None, None) => vec![head(), Span::styled("the PR leaves its tests alone", theme.muted)],
    };
    lines.push(Line::from(first));
    if let Some(report) = report {
        proof_lines(&mut lines, report, theme, width);
    }
    for hit in &integrity.gaming {
        let label = "Looks like a shortcut: ";
        wrapped(
            &mut lines,
            vec![Span::styled(label, theme.error)],
            label.len(),
            &clean(&hit.words),
            theme.error,
            width,
        );
    }
    if !integrity.protected.is_empty() {
        let label = "Protected paths changed: ";
        let text = integrity
            .protected
            .iter()
            .map(|p| match integrity.guarded.iter().find(|g| &g.path == p) {
                Some(g) => format!("{} ({})", clean(p), clean(&g.why)),
                None => clean(p),
            })
            .collect::<Vec<_>>()
            .join(", ");
        wrapped(&mut lines, vec![Span::styled(label, theme.attention)], label.len(), &text, theme.attention, width);
    }
    if !integrity.against_base.is_empty() {
        lines.push(Line::from(Span::styled("Against the base:", theme.muted)));
        for file in &integrity.against_base {
            file_lines(&mut lines, file, theme, width);
        }
    }
    if let Some(since) = &integrity.since_last {
        let sha: String = since.head_sha.chars().take(12).collect();
        let label = format!("Since run {} ({sha}): ", since.iteration);
        let text = if since.files.is_empty() {
            "no test file changed".to_owned()
        } else {
            since.files.iter().map(|f| clean(&f.words())).collect::<Vec<_>>().join(", ")
        };
        wrapped(
            &mut lines,
            vec![Span::styled(label.clone(), theme.muted)],
            label.chars().count(),
            &text,
            theme.text,
            width,
        );
    }
    lines
}

/// `the PR changed its tests and removed assertions`.
fn what(flag: Flag) -> &'static str {
    match flag {
        Flag::TestsAdded => "the PR added tests",
        Flag::TestsChanged => "the PR changed its tests",
        Flag::AssertionsRemoved => "the PR changed its tests and removed assertions",
    }
}

/// `  M test.sh  +1 −1 · 1 assertion removed · run by the commands`, then the removed
/// assertion lines the report quotes.
fn file_lines(lines: &mut Vec<Line<'static>>, file: &TestFileChange, theme: &Theme, width: usize) {
    let (letter, style) = match file.status {
        FileStatus::Added => ("A", theme.diff_add),
        FileStatus::Removed => ("D", theme.diff_remove),
        FileStatus::Modified => ("M", theme.warn),
        FileStatus::Renamed => ("R", theme.info),
    };
    let sourced;
    let kind = match file.kind {
        TestFileKind::Run => "run by the commands",
        TestFileKind::Test => "test",
        TestFileKind::Config => "runner, build or CI configuration",
        TestFileKind::Fixture => "fixture",
        TestFileKind::Shadow => "shadows a module tests import",
        TestFileKind::Sourced => {
            let via = file.via.as_deref().unwrap_or("sourced");
            sourced = format!("{via} by {}", clean(file.by.as_deref().unwrap_or("a test")));
            sourced.as_str()
        }
    };
    let net = file.removed_assertions.saturating_sub(file.added_assertions);
    let mut spans = vec![
        Span::raw("  "),
        Span::styled(letter, style),
        Span::raw(" "),
        Span::styled(clean(&file.path), theme.text),
        Span::styled(format!("  +{}", file.additions), theme.diff_add),
        Span::styled(format!(" −{}", file.deletions), theme.diff_remove),
    ];
    match net {
        0 => {}
        1 => spans.push(Span::styled(" · 1 assertion removed", theme.error)),
        n => spans.push(Span::styled(format!(" · {n} assertions removed"), theme.error)),
    }
    spans.push(Span::styled(format!(" · {kind}"), theme.muted));
    lines.push(Line::from(spans));
    for removed in &file.removed_lines {
        let removed = clean(removed);
        wrapped(
            lines,
            vec![Span::raw("      "), Span::styled("− ", theme.diff_remove)],
            8,
            &removed,
            theme.text,
            width,
        );
    }
}

/// `prefix` (of `indent` cells) then `text` wrapped to `width`, continued under itself.
fn wrapped(
    lines: &mut Vec<Line<'static>>,
    prefix: Vec<Span<'static>>,
    indent: usize,
    text: &str,
    style: Style,
    width: usize,
) {
    // A label wider than half the line goes on a line of its own, the text under it.
    let (mut prefix, indent) = if indent * 2 > width {
        lines.push(Line::from(prefix));
        (None, 2)
    } else {
        (Some(prefix), indent)
    };
    let room = width.saturating_sub(indent).max(8);
    for piece in wrap_words(text, room) {
        let mut spans = prefix.take().unwrap_or_else(|| vec![Span::raw(" ".repeat(indent))]);
        spans.push(Span::styled(piece, style));
        lines.push(Line::from(spans));
    }
}

/// "refused: a:443, b:80 — A allows them for acme/widget", for a run whose proxy refused
/// destinations.
fn refused_line<'a>(d: &'a Draw, row: &RunRow) -> Option<Line<'a>> {
    if row.refused.is_empty() {
        return None;
    }
    let theme = d.theme;
    let mut spans = vec![Span::styled("refused: ", theme.warn), Span::styled(row.refused.join(", "), theme.accent)];
    match (&row.allowed_at, row.result == RunResult::NeedsNetwork && d.available(Cmd::AllowHosts)) {
        (Some(at), _) => spans.push(Span::styled(format!(" — allowed by you at {}", short_time(at)), theme.ok)),
        (None, true) => spans.push(Span::styled(" — A allows them for this repository", theme.muted)),
        (None, false) if row.result == RunResult::NeedsNetwork => spans.push(Span::styled(
            " — by policy: not public, so no key adds it (a person who trusts it writes it by hand)",
            theme.muted,
        )),
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
