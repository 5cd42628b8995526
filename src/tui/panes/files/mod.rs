//! The Files tab: where the selected cycle's files are on disk (the state, its journal, its
//! runs, the last run's log and report, its lock), to open them in an editor or a pager.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::model::CycleEntry;

use super::Pane;
use super::text::TextScroll;

pub mod view;

/// The Files tab: text that scrolls.
#[derive(Debug, Default)]
pub struct FilesPane {
    /// Its scroll.
    pub text: TextScroll,
}

impl Pane for FilesPane {
    super::text::text_pane!();

    fn render(&self, draw: &super::Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, entry, frame, area);
    }
}
