//! The Brief tab: the request, the WebGPT question, the five fields and how they were confirmed.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::model::CycleEntry;

use super::Pane;
use super::text::TextScroll;

pub mod view;

/// The Brief tab: text that scrolls.
#[derive(Debug, Default)]
pub struct BriefPane {
    /// Its scroll.
    pub text: TextScroll,
}

impl Pane for BriefPane {
    super::text::text_pane!();

    fn render(&self, draw: &super::Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, entry, frame, area);
    }
}
