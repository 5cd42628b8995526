//! The Review tab's own keys: its rows of the keymap, in the help's order.

use crate::tui::keymap::{Binding, Cmd, Context, k};
use crate::tui::registry::Tab;

/// Its rows (the keymap adds them to the built-in table).
pub static KEYS: &[Binding] = &[
    Binding {
        contexts: &[Context::Tab(Tab::Review)],
        keys: &[k('F')],
        cmd: Cmd::TriageFix,
        hint: "fix",
        help: "Triage the selected finding FIX: it is right and will be fixed (journaled as you, human)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Review)],
        keys: &[k('D')],
        cmd: Cmd::TriageDefer,
        hint: "defer",
        help: "Triage the selected finding DEFER: it is right, but not now (journaled as you, human)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Review)],
        keys: &[k('I')],
        cmd: Cmd::TriageDismiss,
        hint: "dismiss",
        help: "Triage the selected finding DISMISS: it is wrong or not worth it (journaled as you, human)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Review)],
        keys: &[k('Q')],
        cmd: Cmd::TriageQuestion,
        hint: "question",
        help: "Triage the selected finding QUESTION: write the question for the reviewer; the questions go to the chat once every finding is decided (journaled as you, human)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Review)],
        keys: &[k('P')],
        cmd: Cmd::ApprovePacket,
        hint: "approve packet",
        help: "Say yes to the review packet that waits for you (asks first): it may leave the machine, and the review request is issued (journaled as you, via tui)",
    },
];
