//! The one keymap. Keys resolve to commands through it, and both the footer hints and the `?`
//! help overlay are generated from it, so what is shown is always what works.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::registry::{Screen, Tab};

/// Where the keyboard is: the top popup, an input line, or the focused view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Everywhere outside popups and input lines.
    Global,
    /// The cycle list has the keys.
    List,
    /// Actions on the selected cycle (list and detail).
    Cycle,
    /// A detail tab has the keys.
    Detail,
    /// A tab's own keys (each tab's folder declares its rows).
    Tab(Tab),
    /// A screen's own keys (each screen's folder declares its rows).
    Screen(Screen),
    /// Any screen besides the cycles: moving through what it lists.
    Browse,
    /// The list's filter line is open: printable keys type.
    FilterInput,
    /// The Log or Diff tab's search line is open: printable keys type.
    SearchInput,
    /// The confirm-brief dialog.
    ConfirmBrief,
    /// The review of a message for WebGPT written with `m`.
    Say,
    /// A yes-or-no question.
    YesNo,
    /// A one-line input dialog (an abort's reason, how far to extend the cap).
    TextInput,
    /// The `?` overlay.
    Help,
    /// A message popup (a browser that would not open, with the URL to copy).
    Message,
}

impl Context {
    /// Every context, in the order the help overlay lists them (each tab's after the detail's).
    pub fn all() -> Vec<Context> {
        let mut all = vec![Context::Global, Context::List, Context::Cycle, Context::Detail];
        all.extend(Tab::ALL.iter().map(|&tab| Context::Tab(tab)));
        all.extend(Screen::OTHERS.iter().map(|&screen| Context::Screen(screen)));
        all.push(Context::Browse);
        all.extend([
            Context::FilterInput,
            Context::SearchInput,
            Context::ConfirmBrief,
            Context::Say,
            Context::YesNo,
            Context::TextInput,
            Context::Message,
            Context::Help,
        ]);
        all
    }

    /// Its heading in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::List => "Cycle list",
            Context::Cycle => "Selected cycle",
            Context::Detail => "Detail tabs",
            Context::Tab(tab) => tab.help(),
            Context::Screen(screen) => screen.help(),
            Context::Browse => "Screens",
            Context::FilterInput => "Filter input",
            Context::SearchInput => "Search input (Log and Diff tabs)",
            Context::ConfirmBrief => "Confirm-brief dialog",
            Context::Say => "Message-for-WebGPT dialog",
            Context::YesNo => "Confirmation dialog",
            Context::TextInput => "Input dialog",
            Context::Help => "Help",
            Context::Message => "Message",
        }
    }
}

/// What a key means: the app, the panes and the popups act on commands, never on keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmd {
    /// Leave (asks first while a rerun started here runs).
    Quit,
    /// Show the key help overlay.
    Help,
    /// Suspend to the shell.
    Suspend,
    /// Show a screen, or leave it for the cycles.
    Screen(Screen),
    /// Revoke the selected grant (the Connector screen).
    RevokeGrant,
    /// Ask the running `serve` for a new pairing code.
    NewPairingCode,
    /// Give the keys to the other half of the cycles screen.
    SwitchFocus,
    /// Let the focused pane fill the screen, or stop.
    Zoom,
    /// Show this detail tab.
    Tab(Tab),
    /// Show the previous tab.
    PrevTab,
    /// Show the next tab.
    NextTab,
    /// Up a row or a line.
    Up,
    /// Down a row or a line.
    Down,
    /// Up a page.
    PageUp,
    /// Down a page.
    PageDown,
    /// To the first row or line.
    Top,
    /// To the last row or line (the Log tab: the end of the file).
    Bottom,
    /// Scroll left (Log and Diff tabs, when not wrapping).
    Left,
    /// Scroll right (Log and Diff tabs, when not wrapping).
    Right,
    /// Step back: from the detail to the list; in the list, clear the filter.
    Back,
    /// Open what is selected: a cycle's detail, a run's log, a Project in the browser.
    Open,
    /// Open the list's filter line.
    Filter,
    /// Select the next cycle that needs a person.
    NextAttention,
    /// Review and confirm a brief awaiting confirmation.
    ConfirmBrief,
    /// Rerun the tests at the PR's current head.
    Rerun,
    /// Cancel the test run in progress, whoever started it.
    CancelRun,
    /// Abort the cycle for good (asks for a reason).
    Abort,
    /// Lift a `BLOCKED_*` status.
    Unblock,
    /// Raise the iteration cap.
    Extend,
    /// Allow the hosts a NEEDS_NETWORK run was refused, for the repository (design §5.6).
    AllowHosts,
    /// Drop the message waiting to be sent (`forgeloop outbox --drop`).
    DropMessage,
    /// Write a message to WebGPT in `$EDITOR` (`forgeloop say`): review feedback, a scope
    /// breach, a clarification.
    MessageWebgpt,
    /// Copy the message to send (the outbox) to the clipboard; in a message popup, its text.
    CopyOutbox,
    /// Open the PR in the browser.
    OpenPr,
    /// Open the ChatGPT conversation in the browser.
    OpenConversation,
    /// Log tab: follow the end of the log as it grows.
    Follow,
    /// Log and Diff tabs: wrap long lines, or not.
    Wrap,
    /// Log and Diff tabs: open the search line.
    Search,
    /// The search's next match.
    NextMatch,
    /// The search's previous match.
    PrevMatch,
    /// Log tab: jump to the first error line.
    FirstError,
    /// Diff tab: the next or previous file, hunk; whole PR ⇄ since the last run.
    NextFile,
    /// Diff tab: the previous file.
    PrevFile,
    /// Diff tab: the next hunk (on into the next file after the last).
    NextHunk,
    /// Diff tab: the previous hunk.
    PrevHunk,
    /// Diff tab: the whole PR ⇄ the change since the run before.
    ToggleSinceLast,
    /// Diff tab: only the files that decide the verdict (tests, the scripts the commands run,
    /// runner and CI configuration, fixtures) ⇄ every file (design §5.2).
    TestsOnly,
    /// Approve a `NEEDS_REVIEW` pass (it changed a protected path): `READY_TO_MERGE`.
    Approve,
    /// Runs tab: the selected run's diff.
    ShowDiff,
    /// Review tab: triage the selected finding FIX.
    TriageFix,
    /// Review tab: triage the selected finding DEFER.
    TriageDefer,
    /// Review tab: triage the selected finding DISMISS.
    TriageDismiss,
    /// Review tab: triage the selected finding QUESTION (asks for the question).
    TriageQuestion,
    /// Review tab: a person's yes to the review packet (asks first).
    ApprovePacket,
    /// Yes: confirm, send, do it.
    Yes,
    /// No: close the question, nothing done.
    No,
    /// Edit the brief or the message again in `$EDITOR`.
    Edit,
    /// Apply the input line.
    Submit,
    /// Close the popup, or clear and leave the input line.
    Cancel,
    /// Delete the input's last character.
    Backspace,
    /// A character typed into an input line.
    Insert(char),
}

/// A key as the keymap names it: a key code and the modifiers it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    /// The key.
    pub code: KeyCode,
    /// The modifiers held (Shift is in a character itself: `G`, not Shift-`g`).
    pub mods: KeyModifiers,
}

/// A character key.
pub const fn k(c: char) -> KeySpec {
    KeySpec { code: KeyCode::Char(c), mods: KeyModifiers::NONE }
}
/// Ctrl and a character.
pub const fn ctrl(c: char) -> KeySpec {
    KeySpec { code: KeyCode::Char(c), mods: KeyModifiers::CONTROL }
}
/// A key that is not a character.
pub const fn code(code: KeyCode) -> KeySpec {
    KeySpec { code, mods: KeyModifiers::NONE }
}

impl KeySpec {
    fn matches(&self, key: &KeyEvent) -> bool {
        let mods = match key.code {
            // The shifted character already says Shift ('G', '?', '+').
            KeyCode::Char(_) => key.modifiers - KeyModifiers::SHIFT,
            KeyCode::BackTab => KeyModifiers::NONE,
            _ => key.modifiers,
        };
        let code = match key.code {
            KeyCode::BackTab => KeyCode::Tab,
            other => other,
        };
        code == self.code && mods == self.mods
    }

    /// How the footer and the help name it: `Ctrl-d`, `PgUp`, `↑`.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_owned(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::Backspace => "Bksp".into(),
            other => format!("{other:?}"),
        };
        if self.mods.contains(KeyModifiers::CONTROL) { format!("Ctrl-{base}") } else { base }
    }
}

/// One row of the keymap: keys, where they work, and what they mean.
pub struct Binding {
    /// Where the keys work.
    pub contexts: &'static [Context],
    /// The built-in keys, the first shown in the footer (`[tui.keys]` may replace them).
    pub keys: &'static [KeySpec],
    /// What the keys mean.
    pub cmd: Cmd,
    /// Short label for the footer; empty keeps the binding out of the footer.
    pub hint: &'static str,
    /// Its line in the `?` overlay.
    pub help: &'static str,
}

use Context as C;

/// The contexts active together, first first: the list, each detail tab, the Projects view.
/// A popup or an input line is active alone.
pub const LIST_STACK: &[Context] = &[C::List, C::Cycle, C::Global];
/// Any other detail tab's contexts, first first.
pub const DETAIL_STACK: &[Context] = &[C::Detail, C::Cycle, C::Global];
/// The stacks outside the tabs' own (a key overridden in `[tui.keys]` must not clash within
/// any stack; `tui::keys::stacks` adds each tab's).
pub const STACKS: &[&[Context]] = &[LIST_STACK, DETAIL_STACK];

const MOVE: &[Context] = &[C::List, C::Detail, C::Browse, C::Help, C::ConfirmBrief, C::Say];

/// Each tab's number key, from the registry (`tui/registry.rs`).
macro_rules! tab_rows {
    ($( $variant:ident $module:ident :: $pane:ident $title:literal $key:literal $name:literal; )*) => {
        &[$(Binding {
            contexts: &[C::List, C::Detail],
            keys: &[k($key)],
            cmd: Cmd::Tab(Tab::$variant),
            hint: "",
            help: concat!($title, " tab"),
        }),*]
    };
}

/// The tabs' number keys.
pub static TAB_BINDINGS: &[Binding] = crate::tui::registry::for_each_tab!(tab_rows);

/// Each screen's key, from the registry.
macro_rules! screen_rows {
    ($( $variant:ident $module:ident :: $pane:ident $title:literal $key:literal $name:literal $hint:literal $help:literal; )*) => {
        &[$(Binding {
            contexts: &[C::Global],
            keys: &[k($key)],
            cmd: Cmd::Screen(Screen::$variant),
            hint: $hint,
            help: $help,
        }),*]
    };
}

/// The keys that show the screens.
pub static SCREEN_BINDINGS: &[Binding] = crate::tui::registry::for_each_screen!(screen_rows);

/// The rows outside the tabs' own, in the help's order: the tabs' number keys come after
/// switching focus (`tui::keys::rows` adds each tab's own rows).
pub fn bindings() -> impl Iterator<Item = &'static Binding> {
    let at = BINDINGS.iter().position(|b| b.cmd == Cmd::SwitchFocus).map_or(0, |i| i + 1);
    let global = BINDINGS.iter().position(|b| b.contexts == [C::Global]).unwrap_or(BINDINGS.len());
    BINDINGS[..at]
        .iter()
        .chain(TAB_BINDINGS)
        .chain(&BINDINGS[at..global])
        .chain(SCREEN_BINDINGS)
        .chain(&BINDINGS[global..])
}

/// The built-in keymap; the help lists each context's rows in this order.
pub static BINDINGS: &[Binding] = &[
    // Popups first: they are modal.
    Binding {
        contexts: &[C::ConfirmBrief],
        keys: &[k('y'), code(KeyCode::Enter)],
        cmd: Cmd::Yes,
        hint: "confirm",
        help: "Confirm the brief (journaled as you, via tui); the prompt is issued",
    },
    Binding {
        contexts: &[C::ConfirmBrief],
        keys: &[k('e')],
        cmd: Cmd::Edit,
        hint: "edit in $EDITOR",
        help: "Edit the question and brief in $EDITOR; re-validated on return",
    },
    Binding {
        contexts: &[C::Say],
        keys: &[k('y'), code(KeyCode::Enter)],
        cmd: Cmd::Yes,
        hint: "send",
        help: "Put the message in the outbox (journaled as you, not an iteration); the coordinator sends it next",
    },
    Binding {
        contexts: &[C::Say],
        keys: &[k('e')],
        cmd: Cmd::Edit,
        hint: "edit in $EDITOR",
        help: "Edit the message again in $EDITOR",
    },
    Binding {
        contexts: &[C::ConfirmBrief, C::Say, C::YesNo, C::TextInput, C::Message],
        keys: &[code(KeyCode::Esc)],
        cmd: Cmd::Cancel,
        hint: "cancel",
        help: "Close without changing anything",
    },
    Binding { contexts: &[C::ConfirmBrief, C::Say], keys: &[k('n')], cmd: Cmd::No, hint: "", help: "No" },
    // A yes/no dialog's body offers `[y] yes  [n] no`: its footer says both.
    Binding { contexts: &[C::YesNo], keys: &[k('n')], cmd: Cmd::No, hint: "no", help: "No" },
    Binding {
        contexts: &[C::YesNo],
        keys: &[k('y'), code(KeyCode::Enter)],
        cmd: Cmd::Yes,
        hint: "yes",
        help: "Yes, do it",
    },
    Binding {
        contexts: &[C::TextInput, C::FilterInput, C::SearchInput],
        keys: &[code(KeyCode::Enter)],
        cmd: Cmd::Submit,
        hint: "apply",
        help: "Apply the input",
    },
    Binding {
        contexts: &[C::FilterInput, C::SearchInput],
        keys: &[code(KeyCode::Esc)],
        cmd: Cmd::Cancel,
        hint: "clear",
        help: "Clear and leave the input",
    },
    Binding {
        contexts: &[C::TextInput, C::FilterInput, C::SearchInput],
        keys: &[code(KeyCode::Backspace)],
        cmd: Cmd::Backspace,
        hint: "",
        help: "Delete a character",
    },
    Binding {
        contexts: &[C::Message],
        keys: &[code(KeyCode::Enter), k('q')],
        cmd: Cmd::Cancel,
        hint: "close",
        help: "Close the message",
    },
    Binding {
        contexts: &[C::Message],
        keys: &[k('y')],
        cmd: Cmd::CopyOutbox,
        hint: "copy",
        help: "Copy the shown text to the clipboard (OSC 52)",
    },
    Binding {
        contexts: &[C::Help],
        keys: &[code(KeyCode::Esc), k('?'), k('q')],
        cmd: Cmd::Cancel,
        hint: "close",
        help: "Close help",
    },
    // Movement.
    Binding { contexts: MOVE, keys: &[k('j'), code(KeyCode::Down)], cmd: Cmd::Down, hint: "", help: "Move down" },
    Binding { contexts: MOVE, keys: &[k('k'), code(KeyCode::Up)], cmd: Cmd::Up, hint: "", help: "Move up" },
    Binding {
        contexts: MOVE,
        keys: &[code(KeyCode::PageDown), ctrl('d'), ctrl('f')],
        cmd: Cmd::PageDown,
        hint: "",
        help: "Page down",
    },
    Binding {
        contexts: MOVE,
        keys: &[code(KeyCode::PageUp), ctrl('u'), ctrl('b')],
        cmd: Cmd::PageUp,
        hint: "",
        help: "Page up",
    },
    Binding { contexts: MOVE, keys: &[k('g'), code(KeyCode::Home)], cmd: Cmd::Top, hint: "", help: "Go to the top" },
    Binding {
        contexts: MOVE,
        keys: &[k('G'), code(KeyCode::End)],
        cmd: Cmd::Bottom,
        hint: "",
        help: "Go to the bottom (Log: end of file)",
    },
    // List.
    Binding {
        contexts: &[C::List],
        keys: &[k('/')],
        cmd: Cmd::Filter,
        hint: "filter",
        help: "Filter cycles by name, status, repository or PR",
    },
    Binding {
        contexts: &[C::List],
        keys: &[k('n')],
        cmd: Cmd::NextAttention,
        hint: "next needing you",
        help: "Jump to the next cycle that needs a person",
    },
    Binding {
        contexts: &[C::List],
        keys: &[code(KeyCode::Enter)],
        cmd: Cmd::Open,
        hint: "",
        help: "Open the selected cycle's detail",
    },
    Binding { contexts: &[C::List], keys: &[code(KeyCode::Esc)], cmd: Cmd::Back, hint: "", help: "Clear the filter" },
    // Log.
    // Diff (design §6.7).
    // Runs.
    // Detail.
    Binding {
        contexts: &[C::Detail],
        keys: &[code(KeyCode::Esc)],
        cmd: Cmd::Back,
        hint: "back",
        help: "Back to the cycle list",
    },
    Binding { contexts: &[C::Detail], keys: &[code(KeyCode::Left)], cmd: Cmd::PrevTab, hint: "", help: "Previous tab" },
    Binding { contexts: &[C::Detail], keys: &[code(KeyCode::Right)], cmd: Cmd::NextTab, hint: "", help: "Next tab" },
    // Actions on the selected cycle.
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('c')],
        cmd: Cmd::ConfirmBrief,
        hint: "confirm brief",
        help: "Review and confirm a brief awaiting confirmation",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('v')],
        cmd: Cmd::Approve,
        hint: "approve",
        help: "Approve a NEEDS_REVIEW pass after reading why: it becomes READY_TO_MERGE; on TESTS_DISPUTED, accept the PR's version of the disputed tests, tested again (journaled as you, via tui)",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('r')],
        cmd: Cmd::Rerun,
        hint: "rerun",
        help: "Rerun the tests at the PR's current head (AWAITING_WEBGPT_FIX; READY_TO_MERGE and NEEDS_REVIEW as an override)",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('m')],
        cmd: Cmd::MessageWebgpt,
        hint: "message WebGPT",
        help: "Write a message to WebGPT in $EDITOR (review feedback, a scope breach); it is sent before anything pending, and a READY_TO_MERGE or NEEDS_REVIEW cycle goes back to AWAITING_WEBGPT_FIX",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('x')],
        cmd: Cmd::CancelRun,
        hint: "cancel run",
        help: "Cancel the test run in progress, whoever started it",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('a')],
        cmd: Cmd::Abort,
        hint: "abort",
        help: "Abort the cycle for good (asks for a reason)",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('u')],
        cmd: Cmd::Unblock,
        hint: "unblock",
        help: "Lift a BLOCKED_* status",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('A')],
        cmd: Cmd::AllowHosts,
        hint: "allow hosts",
        help: "Allow the hosts the last run was refused (NEEDS_NETWORK) for the repository's tests: writes your config.toml",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('+')],
        cmd: Cmd::Extend,
        hint: "extend cap",
        help: "Raise the iteration cap",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('y')],
        cmd: Cmd::CopyOutbox,
        hint: "copy message",
        help: "Copy the message to send (outbox) to the clipboard (OSC 52)",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('o')],
        cmd: Cmd::OpenPr,
        hint: "open PR",
        help: "Open the PR in the browser",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('O')],
        cmd: Cmd::OpenConversation,
        hint: "",
        help: "Open the ChatGPT conversation in the browser",
    },
    Binding {
        contexts: &[C::Cycle],
        keys: &[k('X')],
        cmd: Cmd::DropMessage,
        hint: "",
        help: "Drop the message waiting to be sent (a handoff, a follow-up, your words), so WebGPT is never sent it; the agent then waits for you",
    },
    // Tabs and screens.
    Binding {
        contexts: &[C::List, C::Detail],
        keys: &[code(KeyCode::Tab)],
        cmd: Cmd::SwitchFocus,
        hint: "",
        help: "Switch focus between the list and the detail",
    },
    Binding { contexts: &[C::List, C::Detail], keys: &[k('[')], cmd: Cmd::PrevTab, hint: "", help: "Previous tab" },
    Binding { contexts: &[C::List, C::Detail], keys: &[k(']')], cmd: Cmd::NextTab, hint: "", help: "Next tab" },
    Binding {
        contexts: &[C::List, C::Detail],
        keys: &[k('z')],
        cmd: Cmd::Zoom,
        hint: "",
        help: "Zoom the focused pane to the full screen",
    },
    Binding { contexts: &[C::Global], keys: &[k('?')], cmd: Cmd::Help, hint: "help", help: "Show this help" },
    Binding {
        contexts: &[C::Global],
        keys: &[ctrl('z')],
        cmd: Cmd::Suspend,
        hint: "",
        help: "Suspend to the shell (resume with fg)",
    },
    Binding {
        contexts: &[C::Global],
        keys: &[k('q'), ctrl('c')],
        cmd: Cmd::Quit,
        hint: "quit",
        help: "Quit (asks first while a rerun started here is running)",
    },
];

/// The keymap in force: the built-in [`BINDINGS`], with the keys the person's config
/// (`[tui.keys]`) gives some commands instead ([`super::key_overrides`]).
#[derive(Debug, Clone)]
pub struct Keymap {
    rows: Vec<Row>,
}

#[derive(Debug, Clone)]
struct Row {
    binding: &'static Binding,
    keys: Vec<KeySpec>,
}

impl std::fmt::Debug for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binding").field("cmd", &self.cmd).finish_non_exhaustive()
    }
}

impl Keymap {
    /// A table of these rows, each with its built-in keys.
    pub fn of(rows: impl Iterator<Item = &'static Binding>) -> Keymap {
        Keymap { rows: rows.map(|binding| Row { binding, keys: binding.keys.to_vec() }).collect() }
    }

    /// Every row's command and keys, for the overrides to rewrite and check.
    pub(super) fn rows_mut(&mut self) -> impl Iterator<Item = (&'static Binding, &mut Vec<KeySpec>)> {
        self.rows.iter_mut().map(|row| (row.binding, &mut row.keys))
    }

    pub(super) fn rows(&self) -> impl Iterator<Item = (&'static Binding, &[KeySpec])> {
        self.rows.iter().map(|row| (row.binding, row.keys.as_slice()))
    }

    /// The command a key means in the active contexts (first context first). In text inputs
    /// an unbound printable character is typed.
    pub fn resolve(&self, contexts: &[Context], key: &KeyEvent) -> Option<Cmd> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        for context in contexts {
            if let Some((binding, _)) =
                self.rows().find(|(b, keys)| b.contexts.contains(context) && keys.iter().any(|s| s.matches(key)))
            {
                return Some(binding.cmd);
            }
            if matches!(context, C::FilterInput | C::SearchInput | C::TextInput)
                && let KeyCode::Char(c) = key.code
                && !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            {
                return Some(Cmd::Insert(c));
            }
        }
        None
    }

    /// Footer hints for the active contexts, in context order, skipping unavailable commands.
    pub fn hints(&self, contexts: &[Context], available: impl Fn(Cmd) -> bool) -> Vec<(String, &'static str)> {
        let mut seen: Vec<Cmd> = Vec::new();
        let mut out = Vec::new();
        for context in contexts {
            for (binding, keys) in self.rows().filter(|(b, _)| b.contexts.contains(context) && !b.hint.is_empty()) {
                let Some(first) = keys.first() else { continue };
                if seen.contains(&binding.cmd) || !available(binding.cmd) {
                    continue;
                }
                seen.push(binding.cmd);
                out.push((first.label(), binding.hint));
            }
        }
        out
    }

    /// The first key that means `cmd` in `context`, as the footer would show it.
    pub fn key_for(&self, context: Context, cmd: Cmd) -> Option<String> {
        self.rows()
            .find(|(b, _)| b.cmd == cmd && b.contexts.contains(&context))
            .and_then(|(_, k)| k.first())
            .map(KeySpec::label)
    }

    /// The help overlay: for each context, every key that works there (a key shared by
    /// several dialogs, such as `Esc`, is listed under each), movement once.
    pub fn help_sections(&self) -> Vec<(&'static str, Vec<(String, &'static str)>)> {
        let row =
            |(b, keys): (&Binding, &[KeySpec])| (keys.iter().map(KeySpec::label).collect::<Vec<_>>().join(" "), b.help);
        let mut sections =
            vec![("Moving (lists, tabs, dialogs)", self.rows().filter(|(b, _)| b.contexts == MOVE).map(row).collect())];
        for context in Context::all() {
            let rows: Vec<_> =
                self.rows().filter(|(b, _)| b.contexts != MOVE && b.contexts.contains(&context)).map(row).collect();
            if !rows.is_empty() {
                sections.push((context.title(), rows));
            }
        }
        sections
    }
}
