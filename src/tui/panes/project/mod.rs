//! The Project tab: the cycle's ChatGPT project, its binding and its sources.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::model::CycleEntry;

use super::text::TextScroll;
use super::{Cx, Pane, SharedLoad};

pub mod view;

/// The Project tab: text that scrolls.
#[derive(Debug, Default)]
pub struct ProjectPane {
    /// Its scroll.
    pub text: TextScroll,
}

impl Pane for ProjectPane {
    super::text::text_pane!();

    /// The repository's sources are read once, when first shown.
    fn shown(&mut self, cx: &mut Cx<Self::Load>) {
        if let Some(repo) = cx.sel.entry.and_then(|e| e.state.as_ref()).and_then(|s| s.repository.clone())
            && !cx.sel.sources.contains_key(&repo)
        {
            cx.read(SharedLoad::Sources(repo));
        }
    }

    fn render(&self, draw: &super::Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
        view::render(self, draw, entry, frame, area);
    }
}
