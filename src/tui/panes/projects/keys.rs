//! The Projects screen's own keys: its rows of the keymap, in the help's order.

use crossterm::event::KeyCode;

use crate::tui::keymap::{Binding, Cmd, Context, code, k};
use crate::tui::registry::Screen;

/// Its rows (the keymap adds them to the built-in table).
pub static KEYS: &[Binding] = &[
    Binding {
        contexts: &[Context::Screen(Screen::Projects)],
        keys: &[code(KeyCode::Esc), k('p')],
        cmd: Cmd::Screen(Screen::Projects),
        hint: "back",
        help: "Back to the cycles",
    },
    Binding {
        contexts: &[Context::Screen(Screen::Projects)],
        keys: &[k('o'), code(KeyCode::Enter)],
        cmd: Cmd::Open,
        hint: "open Project",
        help: "Open the selected Project in the browser",
    },
];
