//! The cycle list (k9s-style): status glyph and word, task space, repository#PR, iteration
//! gauge, age and last event; what needs the person first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::tui::model::CycleEntry;
use crate::tui::panes::{Draw, Focus};
use crate::tui::theme::Theme;

use crate::tui::widgets::{
    age, elapsed, entry_badge, entry_tests_flag, pane_block, short_tests_badge, tests_badge, truncate,
};

/// Draws the cycle list (or, with no cycles, how to start one); notes where it drew and its
/// height, for the mouse and paging.
pub fn render(d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let focused = d.focus == Focus::List;
    let mut title =
        vec![Span::styled(format!(" Cycles {}/{} ", d.list.visible.len(), d.list.cycles.len()), theme.title)];
    if d.unsandboxed {
        title.push(Span::styled(" ⚠ unsandboxed: PR code runs with your files and network ", theme.warn));
    }
    if d.list.filter_editing || !d.list.filter.is_empty() {
        let cursor = if d.list.filter_editing { "█" } else { "" };
        title.push(Span::styled(format!(" /{}{cursor} ", d.list.filter), theme.accent));
    }
    let block = pane_block(theme, focused).title(Line::from(title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    d.hits.list.set(area);
    if d.list.cycles.is_empty() {
        let text = if d.discovered {
            crate::tui::widgets::empty_text(d.theme, d.shown(d.cycles_dir))
        } else {
            vec![Line::from("Loading…")]
        };
        frame.render_widget(Paragraph::new(text), inner);
        return;
    }
    if d.list.visible.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled("No cycle matches the filter (Esc clears it).", theme.muted)),
            inner,
        );
        return;
    }
    let height = usize::from(inner.height.saturating_sub(1)).max(1);
    d.list.height.set(inner.height.saturating_sub(1));
    let selected = d.list.selected_row().unwrap_or(0);
    let mut offset = d.hits.list_offset.get().min(d.list.visible.len().saturating_sub(1));
    if selected < offset {
        offset = selected;
    } else if selected >= offset + height {
        offset = selected + 1 - height;
    }
    d.hits.list_offset.set(offset);

    let width = inner.width;
    let wide = width >= 100;
    let medium = width >= 60;
    let (header, widths): (Vec<&str>, Vec<Constraint>) = if wide {
        (
            vec!["Status", "Task space", "Repository#PR", "Iteration", "Age", "Last event"],
            vec![
                Constraint::Length(16),
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Length(11),
                Constraint::Length(4),
                Constraint::Fill(3),
            ],
        )
    } else if medium {
        (
            vec!["Status", "Task space", "Iter", "Age", "Repository#PR"],
            vec![
                Constraint::Length(16),
                Constraint::Fill(2),
                Constraint::Length(5),
                Constraint::Length(4),
                Constraint::Fill(2),
            ],
        )
    } else {
        (vec!["Status", "Task space", "Iter"], vec![Constraint::Length(12), Constraint::Fill(1), Constraint::Length(5)])
    };
    // The last column's width, as the table will lay it out: its text is cut there with an
    // ellipsis rather than mid-word by the table.
    let columns = Layout::horizontal(widths.clone()).spacing(1).split(Rect { x: 0, y: 0, width, height: 1 });
    let last_width = columns.last().map_or(usize::from(width), |c| usize::from(c.width));
    let rows: Vec<Row> = d.list.visible[offset..(offset + height).min(d.list.visible.len())]
        .iter()
        .enumerate()
        .map(|(i, &index)| {
            let entry = &d.list.cycles[index];
            if offset + i == selected {
                row(d, entry, wide, medium, last_width, &theme.on_selection()).style(theme.selection)
            } else {
                row(d, entry, wide, medium, last_width, theme)
            }
        })
        .collect();
    let header = Row::new(header.into_iter().map(Cell::from)).style(theme.header);
    let table = Table::new(rows, widths).header(header).column_spacing(1);
    frame.render_widget(table, inner);
}

fn row<'a>(d: &Draw, entry: &'a CycleEntry, wide: bool, medium: bool, last_width: usize, theme: &Theme) -> Row<'a> {
    let running = d.is_running(&entry.path);
    let (glyph, word, style) = entry_badge(entry, theme);
    // A run in progress, whoever started it (design §6.6): `▶ TESTING 1:05`.
    let clock = entry.live.as_ref().map(|run| elapsed(d.now, &run.info.started_at)).unwrap_or_default();
    // Waiting for the repository's CI (design §5.7): `▶ CI 3:12`, each check's state beside it.
    let on_ci = entry.live.as_ref().and_then(|run| run.checks.as_ref());
    let status = if running {
        let label = if on_ci.is_some() { "▶ CI" } else { "▶ TESTING" };
        let word = if clock.is_empty() || !(wide || medium) { label.to_owned() } else { format!("{label} {clock}") };
        Line::from(Span::styled(word, theme.running))
    } else if wide || medium {
        Line::from(Span::styled(format!("{glyph} {word}"), style))
    } else {
        Line::from(Span::styled(format!("{glyph} {}", truncate(crate::tui::widgets::short_word(word), 10)), style))
    };
    let name = Span::styled(entry.name(), if entry.error.is_some() { theme.error } else { theme.text });
    let view = entry.view.as_ref();
    // The PR WebGPT's reply named (recorded by `reply`), before a run records it as the cycle's.
    let reported = entry
        .state
        .as_ref()
        .and_then(|s| s.last_reply.as_ref())
        .filter(|r| r.class == crate::domain::reply::ReplyClass::PrFound)
        .and_then(|r| r.pr.clone());
    // A review names its PR, else its repository and range; it has no iterations.
    let review = entry.state.as_ref().and_then(|s| s.review.as_ref());
    let repo = match (review, view) {
        (Some(r), _) => r.target.pr.clone().unwrap_or_else(|| match &r.target.range {
            Some(range) => format!("{} {range}", r.target.repository),
            None => r.target.repository.clone(),
        }),
        (None, None) => "—".into(),
        (None, Some(v)) => match (&v.pr_ref, reported, &v.repository) {
            (Some(pr), _, _) => pr.clone(),
            (None, Some(pr), _) => pr,
            (None, None, Some(repo)) => repo.clone(),
            // A first run has not recorded its PR yet; the live run knows it.
            (None, None, None) => entry.live.as_ref().map_or_else(|| "—".into(), |run| run.info.pr.clone()),
        },
    };
    let iteration = view.filter(|_| review.is_none()).map(|v| (v.iteration, v.max_iterations));
    let short_iter = iteration.map_or("—".into(), |(k, n)| format!("{k}/{n}"));
    let command = entry.live.as_ref().map(|run| match (&run.checks, &run.command) {
        (Some(checks), _) if checks.is_empty() => "waiting for CI…".to_owned(),
        (Some(checks), _) => {
            checks.iter().map(|(name, state)| format!("{name}: {state}")).collect::<Vec<_>>().join(" · ")
        }
        (None, Some(c)) => format!("$ {c}"),
        (None, None) => "fetching…".to_owned(),
    });
    // A ready PR's size, once its diff was made (design §6.7): `3 files +40 −2`.
    let size = entry.diff_size.filter(|_| command.is_none() && entry.error.is_none()).map(|size| size.words());
    let last = match (&entry.error, &entry.last_event) {
        (Some(error), _) => Span::styled(error.clone(), theme.error),
        (None, _) if command.is_some() => Span::styled(command.unwrap_or_default(), theme.running),
        (None, Some(event)) => Span::styled(event.summary.clone(), theme.muted),
        (None, None) => Span::styled("—", theme.muted),
    };
    // What the last run's head did to the PR's tests (design §5.2): `⚠ tests changed`.
    let tests = entry_tests_flag(entry).filter(|_| entry.error.is_none()).map(|flag| tests_badge(flag, theme));
    let mut spans = Vec::new();
    if let Some((badge, style)) = &tests {
        spans.push(Span::styled(badge.clone(), *style));
        spans.push(Span::styled(" · ", theme.muted));
    }
    if let Some(size) = &size {
        spans.push(Span::styled(format!("{size} · "), theme.text));
    }
    spans.push(last);
    let last = Line::from(fit_spans(spans, last_width));
    let age = Span::styled(age(d.now, entry.updated_at()), theme.muted);
    if wide {
        Row::new(vec![
            Cell::from(status),
            Cell::from(name),
            Cell::from(Span::styled(repo, theme.text)),
            Cell::from(gauge(iteration, theme)),
            Cell::from(age),
            Cell::from(last),
        ])
    } else if medium {
        let mut spans = Vec::new();
        if let Some((badge, style)) = &tests {
            spans.push(Span::styled(badge.clone(), *style));
            spans.push(Span::styled(" · ", theme.muted));
        }
        spans.push(Span::styled(
            match &size {
                Some(size) => format!("{repo} · {size}"),
                None => repo,
            },
            theme.muted,
        ));
        let spans = fit_spans(spans, last_width);
        Row::new(vec![
            Cell::from(status),
            Cell::from(name),
            Cell::from(Span::styled(short_iter, theme.text)),
            Cell::from(age),
            Cell::from(Line::from(spans)),
        ])
    } else {
        let mut name = vec![name];
        if let Some((badge, style)) =
            entry_tests_flag(entry).filter(|_| entry.error.is_none()).map(|f| short_tests_badge(f, theme))
        {
            name.push(Span::styled(format!(" {badge}"), style));
        }
        Row::new(vec![
            Cell::from(status),
            Cell::from(Line::from(name)),
            Cell::from(Span::styled(short_iter, theme.text)),
        ])
    }
}

/// `▰▰▱▱▱ 2/5`: five cells, red when the cap is reached.
fn gauge(iteration: Option<(u32, u32)>, theme: &Theme) -> Line<'static> {
    let Some((k, n)) = iteration else { return Line::from(Span::styled("—", theme.muted)) };
    let cells = 5u32;
    let filled = if n == 0 { cells } else { (k.min(n) * cells).div_ceil(n).min(cells) };
    let full = k >= n;
    let fill_style = if full { theme.gauge_full } else { theme.gauge_filled };
    Line::from(vec![
        Span::styled("▰".repeat(filled as usize), fill_style),
        Span::styled("▱".repeat((cells - filled) as usize), theme.gauge_empty),
        Span::styled(
            format!(" {k}/{n}"),
            if full { theme.gauge_full.add_modifier(Modifier::BOLD) } else { theme.text },
        ),
    ])
}

/// `spans` cut to `width` columns, the cut marked with an ellipsis (what [`truncate`] does to
/// one string, across several styled ones).
fn fit_spans(spans: Vec<Span<'_>>, width: usize) -> Vec<Span<'_>> {
    use unicode_width::UnicodeWidthStr;
    let mut left = width;
    let mut out = Vec::with_capacity(spans.len());
    for span in spans {
        let w = span.content.width();
        if w <= left {
            left -= w;
            out.push(span);
            continue;
        }
        out.push(Span::styled(truncate(&span.content, left), span.style));
        break;
    }
    out
}
