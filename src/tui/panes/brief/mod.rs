//! The Brief tab: the request, the WebGPT question, the five fields and how they were confirmed.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::event::Effect;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;

use super::text::TextScroll;
use super::{Pane, Reply, Selection};

pub mod view;

/// The Brief tab: text that scrolls.
#[derive(Debug, Default)]
pub struct BriefPane {
    /// Its scroll.
    pub text: TextScroll,
}

impl Pane for BriefPane {
    fn contexts(&self) -> &'static [Context] {
        TextScroll::CONTEXTS
    }

    fn command(&mut self, cmd: Cmd, _sel: &Selection, _fx: &mut Vec<Effect>) -> Reply {
        if self.text.scroll_by(cmd) { Reply::Done } else { Reply::NotMine }
    }

    fn opened(&mut self) {
        self.text.scroll = 0;
    }

    fn forget(&mut self, _fx: &mut Vec<Effect>) {
        self.text.scroll = 0;
    }

    fn render(&self, draw: &super::Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, entry, frame, area);
    }
}
