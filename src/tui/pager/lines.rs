//! How a paged line (of a log or a diff) is drawn: its search matches highlighted, scrolled
//! sideways unless wrapped, a cut line marked.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use crate::tui::pager::log::highlight_ranges;
use crate::tui::theme::Theme;

/// How a paged line is shown.
pub struct LineView<'q> {
    /// The search to highlight.
    pub query: Option<&'q str>,
    /// The line holds the current match.
    pub current: bool,
    /// Columns scrolled sideways (unless wrapping).
    pub hscroll: usize,
    /// Long lines wrap.
    pub wrap: bool,
    /// Leading characters that stay put when scrolled (a diff's `+`/`-` column).
    pub pinned: usize,
}

/// A line of text in `base` with its search matches highlighted and a cut line marked.
pub fn styled_line(text: &str, truncated: bool, base: Style, view: &LineView, theme: &Theme) -> Line<'static> {
    let chars: Vec<char> = text.chars().collect();
    let ranges = view.query.map(|q| highlight_ranges(text, q)).unwrap_or_default();
    let pinned = view.pinned.min(chars.len());
    let rest_from = if view.wrap { pinned } else { pinned + skip_columns(&chars[pinned..], view.hscroll) };
    let match_style = if view.current { theme.match_current } else { theme.r#match };
    let style_at = |i: usize| if ranges.iter().any(|&(s, e)| s <= i && i < e) { match_style } else { base };
    let mut spans: Vec<Span<'static>> = Vec::new();
    for i in (0..pinned).chain(rest_from..chars.len()) {
        let style = style_at(i);
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push(chars[i]),
            _ => spans.push(Span::styled(chars[i].to_string(), style)),
        }
    }
    if truncated {
        spans.push(Span::styled(" …[line cut]", theme.muted));
    }
    Line::from(spans)
}

/// The index of the first char after `columns` display columns.
fn skip_columns(chars: &[char], columns: usize) -> usize {
    let mut used = 0;
    for (i, c) in chars.iter().enumerate() {
        if used >= columns {
            return i;
        }
        used += c.width().unwrap_or(0);
    }
    chars.len()
}
