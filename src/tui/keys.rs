//! The keymap in force: the built-in table (the rows of `keymap.rs`, each tab's number key and
//! each tab's own rows, from its folder) with the person's `[tui.keys]`, installed once when
//! the control room starts. The app, the footer and the status line ask it; panes get it in
//! their [`Draw`](super::panes::Draw).

use crossterm::event::KeyEvent;

use super::keymap::{self, Binding, Cmd, Context, Keymap};
use super::panes::{Screens, Tabs};

/// Every built-in row: the keymap's, then each tab's own.
pub fn rows() -> impl Iterator<Item = &'static Binding> {
    keymap::bindings().chain(Tabs::keys()).chain(Screens::keys())
}

/// The built-in table as it is.
pub fn builtin() -> Keymap {
    Keymap::of(rows())
}

/// Every stack of contexts active together: a key overridden in `[tui.keys]` must not clash
/// within any of them.
pub fn stacks() -> Vec<&'static [Context]> {
    let mut stacks: Vec<&'static [Context]> = keymap::STACKS.to_vec();
    for stack in Tabs::stacks().into_iter().chain(Screens::stacks()) {
        if !stacks.contains(&stack) {
            stacks.push(stack);
        }
    }
    stacks
}

static ACTIVE: std::sync::OnceLock<Keymap> = std::sync::OnceLock::new();

/// Makes `keymap` the one the control room uses, once per process (the config is read once
/// when `forgeloop tui` starts); a second call changes nothing.
pub fn install(keymap: Keymap) {
    let _ = ACTIVE.set(keymap);
}

/// The keymap in force: the installed one, else the built-in table (tests, the docs).
pub fn active() -> &'static Keymap {
    ACTIVE.get_or_init(builtin)
}

/// [`Keymap::resolve`] of the keymap in force.
pub fn resolve(contexts: &[Context], key: &KeyEvent) -> Option<Cmd> {
    active().resolve(contexts, key)
}

/// [`Keymap::hints`] of the keymap in force.
pub fn hints(contexts: &[Context], available: impl Fn(Cmd) -> bool) -> Vec<(String, &'static str)> {
    active().hints(contexts, available)
}

/// The first key that means `cmd` in `context` in the keymap in force: for prose that names a
/// key (the status line's nudges), so it cannot name a key that does something else.
pub fn key_for(context: Context, cmd: Cmd) -> Option<String> {
    active().key_for(context, cmd)
}

/// [`Keymap::help_sections`] of the keymap in force.
pub fn help_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    active().help_sections()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::KeySpec;
    use crate::tui::registry::Tab;
    use Context as C;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn keys_resolve_by_context_order() {
        let n = key(KeyCode::Char('n'), KeyModifiers::NONE);
        assert_eq!(resolve(&[C::List, C::Cycle, C::Global], &n), Some(Cmd::NextAttention));
        assert_eq!(resolve(&[C::Tab(Tab::Log), C::Detail, C::Cycle, C::Global], &n), Some(Cmd::NextMatch));
        assert_eq!(resolve(&[C::FilterInput], &n), Some(Cmd::Insert('n')));
        let shifted = key(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(resolve(&[C::List], &shifted), Some(Cmd::Bottom));
        assert_eq!(resolve(&[C::Global], &key(KeyCode::Char('c'), KeyModifiers::CONTROL)), Some(Cmd::Quit));
        assert_eq!(resolve(&[C::YesNo], &key(KeyCode::Char('q'), KeyModifiers::NONE)), None);
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        for context in Context::all() {
            let mut keys = Vec::new();
            for binding in rows().filter(|b| b.contexts.contains(&context)) {
                for spec in binding.keys {
                    assert!(!keys.contains(spec), "{spec:?} twice in {context:?}");
                    keys.push(*spec);
                }
            }
        }
    }

    #[test]
    fn hints_and_help_come_from_the_same_table() {
        let hints = hints(&[C::List, C::Cycle, C::Global], |cmd| cmd != Cmd::Rerun);
        assert!(hints.iter().any(|(k, h)| k == "/" && *h == "filter"));
        assert!(!hints.iter().any(|(_, h)| *h == "rerun"));
        let help = help_sections();
        for binding in rows() {
            let keys = binding.keys.iter().map(KeySpec::label).collect::<Vec<_>>().join(" ");
            assert!(help.iter().any(|(_, rows)| rows.contains(&(keys.clone(), binding.help))), "{keys} is in the help");
        }
        // A key shared by dialogs is listed in each: Esc leaves the confirmation dialog too.
        let section = |title: &str| help.iter().find(|(t, _)| *t == title).map(|(_, rows)| rows.clone());
        let yes_no = section("Confirmation dialog").unwrap_or_default();
        assert!(yes_no.iter().any(|(k, _)| k == "Esc") && yes_no.iter().any(|(k, _)| k == "n"), "{yes_no:?}");
        assert!(section("Search input (Log and Diff tabs)").is_some_and(|rows| rows.iter().any(|(k, _)| k == "Esc")));
    }

    #[test]
    fn each_tab_has_one_number_key_matching_the_tab_bar() {
        for tab in Tab::ALL {
            let keys: Vec<KeyCode> =
                rows().filter(|b| b.cmd == Cmd::Tab(*tab)).flat_map(|b| b.keys.iter().map(|k| k.code)).collect();
            let digit = char::from_digit(tab.index() as u32 + 1, 10);
            assert_eq!(keys, digit.map(KeyCode::Char).into_iter().collect::<Vec<_>>(), "{tab:?}");
        }
    }
}
