//! The Conversation tab: the cycle's journal as the exchange with WebGPT.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::domain::state::OutboxKind;
use crate::tui::event::Effect;
use crate::tui::keymap::{Cmd, Context};
use crate::tui::model::CycleEntry;

use super::text::TextScroll;
use super::{Pane, Reply, Selection};

/// What an outbox holds, as the control room names it.
pub fn outbox_kind_name(kind: OutboxKind) -> &'static str {
    match kind {
        OutboxKind::Prompt => "prompt",
        OutboxKind::Handoff => "handoff",
        OutboxKind::Followup => "follow-up",
        OutboxKind::Message => "the person's message",
    }
}

pub mod view;

/// The Conversation tab: text that scrolls.
#[derive(Debug, Default)]
pub struct ConversationPane {
    /// Its scroll.
    pub text: TextScroll,
}

impl Pane for ConversationPane {
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
