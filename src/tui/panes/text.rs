//! The scroll of a text tab (Brief, Conversation, Project): each keeps its own, and stops at
//! its last full screen.

use std::cell::Cell;

use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

use crate::tui::keymap::{self, Cmd, Context};

/// A text tab's scroll.
#[derive(Debug)]
pub struct TextScroll {
    /// The first line shown.
    pub scroll: u16,
    /// Lines in the viewport at the last draw (set by the renderer).
    pub height: Cell<u16>,
    /// The furthest it can scroll with its last screenful still full (set by the renderer,
    /// which knows the wrapped height), so `G` stops at the end and `k` climbs at once.
    pub max_scroll: Cell<u16>,
}

impl Default for TextScroll {
    fn default() -> Self {
        TextScroll { scroll: 0, height: Cell::new(10), max_scroll: Cell::new(u16::MAX) }
    }
}

impl TextScroll {
    /// The keys of a text tab: only the detail's own.
    pub const CONTEXTS: &'static [Context] = keymap::DETAIL_STACK;

    /// Scrolls by a movement command; `false` for any other command.
    pub fn scroll_by(&mut self, cmd: Cmd) -> bool {
        let page = self.height.get().max(2) - 1;
        self.scroll = match cmd {
            Cmd::Up => self.scroll.saturating_sub(1),
            Cmd::Down => self.scroll.saturating_add(1),
            Cmd::PageUp => self.scroll.saturating_sub(page),
            Cmd::PageDown => self.scroll.saturating_add(page),
            Cmd::Top => 0,
            Cmd::Bottom => u16::MAX,
            _ => return false,
        }
        .min(self.max_scroll.get());
        true
    }

    /// `paragraph` scrolled no further than its last full screen (`G` shows the end, not an
    /// empty pane), the limit and the page recorded for the keys.
    pub fn scrolled<'a>(&self, paragraph: Paragraph<'a>, area: Rect) -> Paragraph<'a> {
        let lines = u16::try_from(paragraph.line_count(area.width)).unwrap_or(u16::MAX);
        let max = lines.saturating_sub(area.height);
        self.max_scroll.set(max);
        self.height.set(area.height);
        paragraph.scroll((self.scroll.min(max), 0))
    }
}

/// The [`Pane`](super::Pane) methods every text tab shares (its keys are the detail's own, the
/// movement keys scroll it, it starts at the top when chosen or when another cycle is
/// selected, it loads nothing of its own): used inside `impl Pane for X`, where `X` has a
/// `text: TextScroll`.
macro_rules! text_pane {
    () => {
        type Msg = $crate::tui::panes::Nothing;
        type Load = $crate::tui::panes::Nothing;

        const CONTEXTS: &'static [$crate::tui::keymap::Context] = $crate::tui::panes::text::TextScroll::CONTEXTS;

        fn command(
            &mut self,
            cmd: $crate::tui::keymap::Cmd,
            _cx: &mut $crate::tui::panes::Cx<Self::Load>,
        ) -> $crate::tui::panes::Reply {
            if self.text.scroll_by(cmd) { $crate::tui::panes::Reply::Done } else { $crate::tui::panes::Reply::NotMine }
        }

        fn opened(&mut self) {
            self.text.scroll = 0;
        }

        fn forget(&mut self, _cx: &mut $crate::tui::panes::Cx<Self::Load>) {
            self.text.scroll = 0;
        }

        fn work(load: Self::Load, _ctx: &$crate::cycle::Ctx) -> $crate::tui::panes::PaneWork<Self::Msg> {
            match load {}
        }
    };
}
pub(crate) use text_pane;
