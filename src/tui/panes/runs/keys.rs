//! The Runs tab's own keys: its rows of the keymap, in the help's order.

use crossterm::event::KeyCode;

use crate::tui::keymap::{Binding, Cmd, Context, code, k};
use crate::tui::registry::Tab;

/// Its rows (the keymap adds them to the built-in table).
pub static KEYS: &[Binding] = &[
    Binding {
        contexts: &[Context::Tab(Tab::Runs)],
        keys: &[code(KeyCode::Enter)],
        cmd: Cmd::Open,
        hint: "show log",
        help: "Show the selected run's log",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Runs)],
        keys: &[k('d')],
        cmd: Cmd::ShowDiff,
        hint: "show diff",
        help: "Show the change the selected run tested (the Diff tab at that run)",
    },
];
