//! The Connector screen's own keys: its rows of the keymap, in the help's order.

use crossterm::event::KeyCode;

use crate::tui::keymap::{Binding, Cmd, Context, code, k};
use crate::tui::registry::Screen;

/// Its rows (the keymap adds them to the built-in table).
pub static KEYS: &[Binding] = &[
    Binding {
        contexts: &[Context::Screen(Screen::Connector)],
        keys: &[code(KeyCode::Esc), k('S')],
        cmd: Cmd::Screen(Screen::Connector),
        hint: "back",
        help: "Back to the cycles",
    },
    Binding {
        contexts: &[Context::Screen(Screen::Connector)],
        keys: &[k('x')],
        cmd: Cmd::RevokeGrant,
        hint: "revoke",
        help: "Revoke the selected grant (asks first): its tokens stop working at once",
    },
    Binding {
        contexts: &[Context::Screen(Screen::Connector)],
        keys: &[k('n')],
        cmd: Cmd::NewPairingCode,
        hint: "new code",
        help: "Ask forgeloop serve for a new pairing code",
    },
];
