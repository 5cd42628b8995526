//! Diff tab (design §6.7): what a run tested — the whole PR at its head, or the change since
//! the run before. A file list (status letter, path, `old → new` for a rename, +/− counts or
//! `bin`) beside the selected file's section, drawn from the lines the pane read around the
//! viewport. Added lines green, removed red, hunk headers their own colour, never colour
//! alone: the `+`/`-` column is always drawn, even when scrolled sideways. With the filter
//! "tests only" on, the list holds only the files that decide the verdict (design §5.2) and
//! the title says so.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::domain::diff::{FileDiff, FileStatus};
use crate::tui::panes::SearchState;
use crate::tui::panes::{Draw, Focus};
use crate::tui::registry::Tab;

use super::{DiffPane, DiffState};
use crate::tui::keymap::{Cmd, Context};
use crate::tui::pager::diff::{DiffDoc, DiffLine};
use crate::tui::pager::lines::{LineView, styled_line};
use crate::tui::theme::Theme;

/// From this width the file list sits beside the lines; below it, above them.
const SIDE_BY_SIDE: u16 = 70;

/// Draws the Diff tab: its status line, then the file list beside the selected file's lines (or
/// why there is nothing to show); notes the height it had, for paging.
pub fn render(pane: &DiffPane, d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(status_line(pane, d)), head);
    let message = |text: String, style: Style| Paragraph::new(Span::styled(text, style)).wrap(Wrap { trim: false });
    let doc = match (&pane.state, &pane.doc) {
        (DiffState::Ready, Some(doc)) => doc,
        (DiffState::Empty(reason), _) => {
            frame.render_widget(message(reason.clone(), theme.muted), body);
            return;
        }
        (DiffState::Making, _) => {
            let what = pane.target.as_ref().map_or_else(String::new, |t| format!(" of run {}", t.iteration));
            let text = format!("{} loading… asking GitHub for the diff{what}", d.spinner);
            frame.render_widget(message(text, theme.muted), body);
            return;
        }
        (DiffState::Failed(error), _) => {
            let key = Tab::Diff.key();
            let text = vec![
                Line::from(Span::styled(error.clone(), theme.error)),
                Line::from(""),
                Line::from(Span::styled(format!("Press {key} to try again."), theme.muted)),
            ];
            frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), body);
            return;
        }
        _ => {
            frame.render_widget(message("loading…".to_owned(), theme.muted), body);
            return;
        }
    };
    if doc.files.is_empty() && doc.lines == 0 {
        frame.render_widget(message("The diff is empty: this head changes nothing.".into(), theme.muted), body);
        return;
    }
    if pane.nothing_shown() {
        let key = d.keys.key_for(Context::Tab(Tab::Diff), Cmd::TestsOnly).unwrap_or_default();
        let n = doc.files.len();
        let text = vec![
            Line::from(Span::styled("Tests only: no test file here.", theme.title)),
            Line::from(""),
            Line::from(Span::styled(
                format!(
                    "{} a test or validation file (a test, a script the commands run, runner or CI configuration, a fixture).",
                    if n == 1 {
                        "The one file this diff changes is not".to_owned()
                    } else {
                        format!("None of the {n} files this diff changes is")
                    }
                ),
                theme.muted,
            )),
            Line::from(""),
            Line::from(Span::styled(format!("Press {key} to show every file."), theme.muted)),
        ];
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), body);
        return;
    }
    let (list_area, lines_area) = if body.width >= SIDE_BY_SIDE {
        let width = (body.width / 3).clamp(24, 56);
        let [list, lines] = Layout::horizontal([Constraint::Length(width), Constraint::Min(1)]).areas(body);
        (list, lines)
    } else {
        let height = (pane.shown_count() as u16 + 1).min(body.height / 3).max(2);
        let [list, lines] = Layout::vertical([Constraint::Length(height), Constraint::Min(1)]).areas(body);
        (list, lines)
    };
    let side = body.width >= SIDE_BY_SIDE;
    let block =
        Block::default().borders(if side { Borders::RIGHT } else { Borders::BOTTOM }).border_style(theme.border);
    let list_inner = block.inner(list_area);
    frame.render_widget(block, list_area);
    file_list(pane, d, doc, frame, list_inner);
    let lines_area = if side {
        Rect { x: lines_area.x + 1, width: lines_area.width.saturating_sub(1), ..lines_area }
    } else {
        lines_area
    };
    pane.height.set(lines_area.height.max(1));
    hunk_lines(pane, d, doc, frame, lines_area);
}

/// `Whole PR at run 3 · 0123456789ab · 3 files +40 −2 · file 1/3 · hunk 2/4 …`
fn status_line(pane: &DiffPane, d: &Draw) -> Line<'static> {
    let theme = d.theme;
    let short = |sha: &str| sha.chars().take(12).collect::<String>();
    let mut spans = Vec::new();
    let title = match (&pane.target, pane.since_last) {
        (Some(t), _) => match &t.old {
            Some((k, old)) => {
                format!("Since the last run: run {k} · {} → run {} · {}", short(old), t.iteration, short(&t.head_sha))
            }
            None => format!("Whole PR at run {} · {}", t.iteration, short(&t.head_sha)),
        },
        (None, true) => "Since the last run".to_owned(),
        (None, false) => "Whole PR".to_owned(),
    };
    spans.push(Span::styled(title, theme.title));
    if pane.tests_only {
        let what = match (&pane.state, &pane.doc) {
            (DiffState::Ready, Some(doc)) => {
                let n = doc.files.len();
                format!(" · tests only ({} of {n} file{})", pane.test_files.len(), if n == 1 { "" } else { "s" })
            }
            _ => " · tests only".to_owned(),
        };
        spans.push(Span::styled(what, theme.accent));
    }
    if let (DiffState::Ready, Some(doc)) = (&pane.state, &pane.doc) {
        spans.push(Span::styled(format!(" · {}", doc.size.words()), theme.muted));
        if doc.masked > 0 {
            spans.push(Span::styled(format!(" · {} masked", doc.masked), theme.warn));
        }
        if let Some(file) = doc.files.get(pane.file).filter(|_| !pane.nothing_shown()) {
            let shown = pane.shown_files();
            let position = shown.iter().position(|&i| i == pane.file).map_or(0, |p| p + 1);
            spans.push(Span::styled(format!(" · file {position}/{}", shown.len()), theme.muted));
            let hunks = file.hunks.len();
            let hunk = pane.hunk.map_or_else(|| current_hunk(file, pane.top), |h| h + 1);
            let text = match (hunks, hunk) {
                (0, _) => String::new(),
                (1, 0) => " · 1 hunk".to_owned(),
                (n, 0) => format!(" · {n} hunks"),
                (n, k) => format!(" · hunk {k}/{n}"),
            };
            spans.push(Span::styled(text, theme.muted));
        }
    }
    spans.push(Span::raw(" "));
    if pane.wrap {
        spans.push(Span::styled("[wrap] ", theme.accent));
    }
    let search = &pane.search;
    if !pane.is_ready() {
        // No search line over a message.
    } else if search.editing {
        spans.push(Span::styled(format!("/{}█", search.input), theme.accent));
    } else if !search.query.is_empty() {
        let (text, style) = match search.state {
            SearchState::Searching => (format!("{} searching", d.spinner), theme.muted),
            SearchState::Found if search.wrapped => ("found (wrapped)".to_owned(), theme.warn),
            SearchState::Found => ("found".to_owned(), theme.ok),
            SearchState::NotFound => ("not found".to_owned(), theme.error),
            SearchState::Idle => (String::new(), theme.muted),
        };
        spans.push(Span::styled(format!("/{} ", search.query), theme.accent));
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

/// The hunk at the top of the view after scrolling by lines (1-based; 0 above the first).
fn current_hunk(file: &FileDiff, top: usize) -> usize {
    file.hunks.partition_point(|&line| line <= top)
}

fn file_list(pane: &DiffPane, d: &Draw, doc: &DiffDoc, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let height = usize::from(area.height).max(1);
    // The files listed (all, or the tests only), as indices into the doc's.
    let shown = pane.shown_files();
    let selected = shown.iter().position(|&i| i == pane.file).unwrap_or(0);
    let offset = selected.saturating_sub(height - 1);
    let counts =
        |f: &FileDiff| if f.binary { "bin".to_owned() } else { format!("+{} −{}", f.additions, f.deletions) };
    let visible = || shown.iter().skip(offset).take(height).filter_map(|&i| doc.files.get(i).map(|f| (i, f)));
    let counts_width = visible().map(|(_, f)| counts(f).width()).max().unwrap_or(0).max(3) as u16;
    let path_width = usize::from(area.width.saturating_sub(counts_width + 4));
    let rows: Vec<Row> = visible()
        .map(|(i, f)| {
            let bar = match (i == pane.file, d.focus == Focus::Detail) {
                (false, _) => None,
                (true, true) => Some(theme.selection),
                (true, false) => Some(theme.accent),
            };
            // Only the selection bar has a background the text's own colours could vanish on.
            let on_bar;
            let theme = if bar == Some(theme.selection) {
                on_bar = theme.on_selection();
                &on_bar
            } else {
                theme
            };
            let (letter, style) = match f.status {
                FileStatus::Added => ("A", theme.diff_add),
                FileStatus::Removed => ("D", theme.diff_remove),
                FileStatus::Modified => ("M", theme.warn),
                FileStatus::Renamed => ("R", theme.info),
            };
            let name = match &f.old_path {
                Some(old) => format!("{old} → {}", f.path),
                None => f.path.clone(),
            };
            let count = if f.binary {
                Line::from(Span::styled("bin", theme.muted))
            } else {
                Line::from(vec![
                    Span::styled(format!("+{}", f.additions), theme.diff_add),
                    Span::styled(format!(" −{}", f.deletions), theme.diff_remove),
                ])
            };
            let row = Row::new(vec![
                Cell::from(Span::styled(letter, style)),
                Cell::from(Span::styled(cut_left(&name, path_width), theme.text)),
                Cell::from(count.right_aligned()),
            ]);
            match bar {
                Some(style) => row.style(style),
                None => row,
            }
        })
        .collect();
    let widths = [Constraint::Length(1), Constraint::Fill(1), Constraint::Length(counts_width)];
    frame.render_widget(Table::new(rows, widths).column_spacing(1), area);
}

/// Cuts `text` to `width` cells from the left, so a path keeps its file name: `…/b/c.rs`.
fn cut_left(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut kept = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

fn hunk_lines(pane: &DiffPane, d: &Draw, doc: &DiffDoc, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let (_, end) = pane.section();
    let file = doc.files.get(pane.file);
    let current_hunk = file.zip(pane.hunk).and_then(|(f, h)| f.hunks.get(h).copied());
    let query = Some(pane.search.query.as_str()).filter(|q| !q.is_empty());
    let bottom = (pane.top + usize::from(area.height)).min(end);
    let lines: Vec<Line> = (pane.top..bottom)
        .map(|number| match pane.line(number) {
            Some(line) => {
                let kind = kind_of(file, number, &line.text);
                let mut style = kind.style(theme);
                if Some(number) == current_hunk {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                let current = pane.search.current == Some(number as u64);
                render_line(line, style, query, current, pane.hscroll, pane.wrap, theme)
            }
            None => Line::from(Span::styled("…", theme.muted)),
        })
        .collect();
    let mut paragraph = Paragraph::new(lines).style(theme.text);
    if pane.wrap {
        paragraph = paragraph.wrap(Wrap { trim: false });
    }
    frame.render_widget(paragraph, area);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `diff --git …`
    FileHeader,
    /// `index …`, `--- a/…`, `+++ b/…`, mode and rename lines.
    Meta,
    Hunk,
    Added,
    Removed,
    Context,
    /// `\ No newline at end of file`
    Note,
}

impl Kind {
    fn style(self, theme: &Theme) -> Style {
        match self {
            Kind::FileHeader => theme.diff_meta,
            Kind::Meta | Kind::Note => theme.muted,
            Kind::Hunk => theme.diff_hunk,
            Kind::Added => theme.diff_add,
            Kind::Removed => theme.diff_remove,
            Kind::Context => theme.text,
        }
    }
}

/// What line `number` of the diff is, from its file's index (a `+++` header is not an added
/// line) and its first character.
fn kind_of(file: Option<&FileDiff>, number: usize, text: &str) -> Kind {
    let Some(file) = file else { return Kind::Context };
    if number == file.start_line {
        return Kind::FileHeader;
    }
    if file.hunks.first().is_none_or(|&first| number < first) {
        return Kind::Meta;
    }
    if file.hunks.binary_search(&number).is_ok() {
        return Kind::Hunk;
    }
    match text.chars().next() {
        Some('+') => Kind::Added,
        Some('-') => Kind::Removed,
        Some('\\') => Kind::Note,
        _ => Kind::Context,
    }
}

/// One line: its first character (the `+`/`-`/space column) always, the rest scrolled by
/// `hscroll` columns unless wrapping, with search matches highlighted.
fn render_line(
    line: &DiffLine,
    base: Style,
    query: Option<&str>,
    current: bool,
    hscroll: usize,
    wrap: bool,
    theme: &Theme,
) -> Line<'static> {
    let view = LineView { query, current, hscroll, wrap, pinned: 1 };
    styled_line(&line.text, line.truncated, base, &view, theme)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_keep_their_file_name_when_cut() {
        assert_eq!(cut_left("src/deep/path/file.rs", 12), "…ath/file.rs");
        assert_eq!(cut_left("short.rs", 12), "short.rs");
    }

    #[test]
    fn the_sign_column_stays_when_scrolled_sideways() {
        let theme = Theme::builtin("dark").unwrap();
        let line = DiffLine { text: "+abcdefghij".into(), truncated: false };
        let drawn = render_line(&line, theme.diff_add, None, false, 4, false, &theme);
        let text: String = drawn.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "+efghij");
        let wrapped = render_line(&line, theme.diff_add, Some("cd"), false, 4, true, &theme);
        let text: String = wrapped.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "+abcdefghij");
        assert!(wrapped.spans.iter().any(|s| s.content == "cd" && s.style == theme.r#match));
    }
}
