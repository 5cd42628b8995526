//! The Conversation tab: the cycle's journal as the exchange with WebGPT.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::model::CycleEntry;

use super::Pane;
use super::text::TextScroll;

pub mod view;

/// The Conversation tab: text that scrolls.
#[derive(Debug, Default)]
pub struct ConversationPane {
    /// Its scroll.
    pub text: TextScroll,
}

impl Pane for ConversationPane {
    super::text::text_pane!();

    fn render(&self, draw: &super::Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, entry, frame, area);
    }
}
