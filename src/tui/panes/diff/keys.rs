//! The Diff tab's own keys: its rows of the keymap, in the help's order.

use crossterm::event::KeyCode;

use crate::tui::keymap::{Binding, Cmd, Context, code, k};
use crate::tui::registry::Tab;

/// Its rows (the keymap adds them to the built-in table).
pub static KEYS: &[Binding] = &[
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('J')],
        cmd: Cmd::NextFile,
        hint: "next file",
        help: "Next file of the diff",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('K')],
        cmd: Cmd::PrevFile,
        hint: "prev file",
        help: "Previous file of the diff",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('}')],
        cmd: Cmd::NextHunk,
        hint: "next hunk",
        help: "Next hunk (on into the next file after the last)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('{')],
        cmd: Cmd::PrevHunk,
        hint: "prev hunk",
        help: "Previous hunk (back into the previous file before the first)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('s')],
        cmd: Cmd::ToggleSinceLast,
        hint: "whole PR/since last",
        help: "Toggle between the whole PR and the change since the run before",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('t')],
        cmd: Cmd::TestsOnly,
        hint: "tests only",
        help: "Show only the test and validation files (tests, scripts the commands run, runner and CI config, fixtures) or every file",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('/')],
        cmd: Cmd::Search,
        hint: "search",
        help: "Search the diff, every file (smart case)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('n')],
        cmd: Cmd::NextMatch,
        hint: "next",
        help: "Next match",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('N')],
        cmd: Cmd::PrevMatch,
        hint: "prev",
        help: "Previous match",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('w')],
        cmd: Cmd::Wrap,
        hint: "wrap",
        help: "Toggle line wrapping",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('h'), code(KeyCode::Left)],
        cmd: Cmd::Left,
        hint: "",
        help: "Scroll left (when not wrapping; the +/- column stays)",
    },
    Binding {
        contexts: &[Context::Tab(Tab::Diff)],
        keys: &[k('l'), code(KeyCode::Right)],
        cmd: Cmd::Right,
        hint: "",
        help: "Scroll right (when not wrapping)",
    },
];
