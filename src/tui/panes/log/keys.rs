//! The Log tab's own keys: its rows of the keymap, in the help's order.

use crossterm::event::KeyCode;

use crate::tui::keymap::{Binding, Cmd, Context, code, k};
use crate::tui::registry::Tab;

/// Its rows (the keymap adds them to the built-in table).
pub static KEYS: &[Binding] = &[
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('h'), code(KeyCode::Left)],
        cmd: Cmd::Left,
        hint: "",
        help: "Scroll left (when not wrapping)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('l'), code(KeyCode::Right)],
        cmd: Cmd::Right,
        hint: "",
        help: "Scroll right (when not wrapping)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('/')],
        cmd: Cmd::Search,
        hint: "search",
        help: "Search the log (smart case)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('n')],
        cmd: Cmd::NextMatch,
        hint: "next",
        help: "Next match",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('N')],
        cmd: Cmd::PrevMatch,
        hint: "prev",
        help: "Previous match",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('e')],
        cmd: Cmd::FirstError,
        hint: "first error",
        help: "Jump to the first error line (error, FAILED, panicked, Traceback, non-zero exit)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('f')],
        cmd: Cmd::Follow,
        hint: "follow",
        help: "Follow the end of the log as it grows",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Log)],
        keys: &[k('w')],
        cmd: Cmd::Wrap,
        hint: "wrap",
        help: "Toggle line wrapping",
    },
];
