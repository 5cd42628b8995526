//! The person's own keys (`[tui.keys]` in the config, as gitui and yazi allow): a command's
//! name and the keys that should mean it instead of the built-in ones, e.g.
//! `confirm_brief = "C"` or `quit = ["q", "Ctrl-q"]`. Checked when the control room starts: an
//! unknown name, a key that cannot be read, or a key that would mean two commands where both
//! work is refused with what to change. The help overlay and the footer show the keys in force.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyModifiers};

use crate::config::KeyList;

use super::keymap::{Cmd, Context, KeySpec, Keymap};
use super::keys;

/// The name a person writes for `cmd` (snake case, as the help says it); `None` for typing.
pub fn name(cmd: Cmd) -> Option<&'static str> {
    Some(match cmd {
        Cmd::Quit => "quit",
        Cmd::Help => "help",
        Cmd::Suspend => "suspend",
        Cmd::Screen(screen) => screen.override_name(),
        Cmd::RevokeGrant => "revoke_grant",
        Cmd::NewPairingCode => "new_pairing_code",
        Cmd::SwitchFocus => "switch_focus",
        Cmd::Zoom => "zoom",
        Cmd::Tab(tab) => tab.override_name(),
        Cmd::PrevTab => "prev_tab",
        Cmd::NextTab => "next_tab",
        Cmd::Up => "up",
        Cmd::Down => "down",
        Cmd::PageUp => "page_up",
        Cmd::PageDown => "page_down",
        Cmd::Top => "top",
        Cmd::Bottom => "bottom",
        Cmd::Left => "left",
        Cmd::Right => "right",
        Cmd::Back => "back",
        Cmd::Open => "open",
        Cmd::Filter => "filter",
        Cmd::NextAttention => "next_attention",
        Cmd::ConfirmBrief => "confirm_brief",
        Cmd::Rerun => "rerun",
        Cmd::CancelRun => "cancel_run",
        Cmd::Abort => "abort",
        Cmd::Unblock => "unblock",
        Cmd::Extend => "extend",
        Cmd::AllowHosts => "allow_hosts",
        Cmd::DropMessage => "drop_message",
        Cmd::MessageWebgpt => "message_webgpt",
        Cmd::CopyOutbox => "copy",
        Cmd::OpenPr => "open_pr",
        Cmd::OpenConversation => "open_conversation",
        Cmd::Follow => "follow",
        Cmd::Wrap => "wrap",
        Cmd::Search => "search",
        Cmd::NextMatch => "next_match",
        Cmd::PrevMatch => "prev_match",
        Cmd::FirstError => "first_error",
        Cmd::NextFile => "next_file",
        Cmd::PrevFile => "prev_file",
        Cmd::NextHunk => "next_hunk",
        Cmd::PrevHunk => "prev_hunk",
        Cmd::ToggleSinceLast => "since_last",
        Cmd::TestsOnly => "tests_only",
        Cmd::Approve => "approve",
        Cmd::ShowDiff => "show_diff",
        Cmd::TriageFix => "triage_fix",
        Cmd::TriageDefer => "triage_defer",
        Cmd::TriageDismiss => "triage_dismiss",
        Cmd::TriageQuestion => "triage_question",
        Cmd::ApprovePacket => "approve_packet",
        Cmd::Yes => "yes",
        Cmd::No => "no",
        Cmd::Edit => "edit",
        Cmd::Submit => "submit",
        Cmd::Cancel => "cancel",
        Cmd::Backspace => "backspace",
        Cmd::Insert(_) => return None,
    })
}

/// A key as the help writes it: `a`, `G`, `?`, `Ctrl-x`, `Enter`, `Esc`, `Tab`, `Space`, `↑`
/// or `Up`, `PgUp`, `Home`, `Bksp` or `Backspace`, …
fn parse_key(text: &str) -> Result<KeySpec, String> {
    let text = text.trim();
    let (mods, base) = match text.strip_prefix("Ctrl-").or_else(|| text.strip_prefix("ctrl-")) {
        Some(rest) => (KeyModifiers::CONTROL, rest),
        None => (KeyModifiers::NONE, text),
    };
    let code = match base {
        "Space" | "space" => KeyCode::Char(' '),
        "Enter" | "enter" => KeyCode::Enter,
        "Esc" | "esc" => KeyCode::Esc,
        "Tab" | "tab" => KeyCode::Tab,
        "Bksp" | "Backspace" | "backspace" => KeyCode::Backspace,
        "↑" | "Up" | "up" => KeyCode::Up,
        "↓" | "Down" | "down" => KeyCode::Down,
        "←" | "Left" | "left" => KeyCode::Left,
        "→" | "Right" | "right" => KeyCode::Right,
        "PgUp" | "PageUp" => KeyCode::PageUp,
        "PgDn" | "PageDown" => KeyCode::PageDown,
        "Home" | "home" => KeyCode::Home,
        "End" | "end" => KeyCode::End,
        one if one.chars().count() == 1 => match one.chars().next() {
            Some(c) if !c.is_control() && !c.is_whitespace() => KeyCode::Char(c),
            _ => return Err(format!("{text:?} is not a key")),
        },
        _ => {
            return Err(format!(
                "{text:?} is not a key: write one character (`a`, `G`, `?`), `Ctrl-x`, or Enter, Esc, Tab, Space, Up, Down, Left, Right, PgUp, PgDn, Home, End, Backspace"
            ));
        }
    };
    Ok(KeySpec { code, mods })
}

/// The built-in keymap with `overrides` (command name → its keys) applied and checked.
pub fn keymap(overrides: &BTreeMap<String, KeyList>) -> Result<Keymap, String> {
    let mut keymap = keys::builtin();
    let mut changed: Vec<Cmd> = Vec::new();
    for (wanted, keys) in overrides {
        let specs = keys.as_slice().iter().map(|k| parse_key(k)).collect::<Result<Vec<_>, _>>();
        let specs = specs.map_err(|e| format!("[tui.keys] {wanted}: {e}"))?;
        if specs.is_empty() {
            return Err(format!("[tui.keys] {wanted}: give at least one key"));
        }
        let mut found = false;
        for (binding, keys) in keymap.rows_mut() {
            if name(binding.cmd) == Some(wanted.as_str()) {
                *keys = specs.clone();
                found = true;
                changed.push(binding.cmd);
            }
        }
        if !found {
            return Err(format!(
                "[tui.keys] {wanted:?} is not a command of the control room; the names are the help's, in snake case (confirm_brief, rerun, approve, tests_only, …; docs/control-room.md lists them)"
            ));
        }
    }
    if let Some(clash) = clash(&keymap, &changed) {
        return Err(clash);
    }
    Ok(keymap)
}

/// A key a changed command shares with another command where both are active: in one popup
/// or input line, or in contexts the control room stacks (the list's, each tab's: the first
/// would hide the other). The built-in table shadows on purpose (`←` scrolls the log and
/// elsewhere goes to the previous tab); only what the person changed is checked.
fn clash(keymap: &Keymap, changed: &[Cmd]) -> Option<String> {
    let stacks = keys::stacks();
    let alone: Vec<Vec<Context>> =
        Context::all().into_iter().filter(|c| !stacks.iter().any(|s| s.contains(c))).map(|c| vec![c]).collect();
    for stack in stacks.iter().copied().chain(alone.iter().map(Vec::as_slice)) {
        let mut seen: Vec<(KeySpec, Cmd, Context)> = Vec::new();
        for context in stack {
            for (binding, keys) in keymap.rows().filter(|(b, _)| b.contexts.contains(context)) {
                for spec in keys {
                    let involved = |other: Cmd| changed.contains(&other) || changed.contains(&binding.cmd);
                    if let Some((_, other, where_other)) =
                        seen.iter().find(|(s, c, _)| s == spec && *c != binding.cmd && involved(*c))
                    {
                        return Some(format!(
                            "[tui.keys]: {} would mean both {} ({}) and {} ({}); give one of them another key",
                            spec.label(),
                            name(*other).unwrap_or("?"),
                            where_other.title(),
                            name(binding.cmd).unwrap_or("?"),
                            context.title()
                        ));
                    }
                    seen.push((*spec, binding.cmd, *context));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyEvent;

    use super::*;
    use crate::tui::keys::rows;

    fn overrides(pairs: &[(&str, &[&str])]) -> BTreeMap<String, KeyList> {
        pairs
            .iter()
            .map(|(name, keys)| ((*name).to_owned(), KeyList::Many(keys.iter().map(|k| (*k).to_owned()).collect())))
            .collect()
    }

    #[test]
    fn no_overrides_is_the_built_in_keymap() {
        let keymap = keymap(&BTreeMap::new()).unwrap();
        assert_eq!(keymap.help_sections(), keys::builtin().help_sections());
    }

    #[test]
    fn every_command_a_key_means_has_a_name_and_every_label_reads_back() {
        for binding in rows() {
            assert!(name(binding.cmd).is_some(), "{:?}", binding.cmd);
            for spec in binding.keys {
                assert_eq!(parse_key(&spec.label()).as_ref(), Ok(spec), "{}", spec.label());
            }
        }
    }

    #[test]
    fn an_override_replaces_the_keys_and_the_help_and_footer_follow() {
        let keymap = keymap(&overrides(&[("confirm_brief", &["C"]), ("quit", &["Ctrl-q"])])).unwrap();
        let at = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        let list = [Context::List, Context::Cycle, Context::Global];
        assert_eq!(keymap.resolve(&list, &at('C')), Some(Cmd::ConfirmBrief));
        assert_eq!(keymap.resolve(&list, &at('c')), None, "the built-in key no longer means it");
        assert_eq!(keymap.key_for(Context::Cycle, Cmd::ConfirmBrief).as_deref(), Some("C"));
        let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
        assert_eq!(keymap.resolve(&list, &ctrl_q), Some(Cmd::Quit));
        let help = keymap.help_sections();
        assert!(
            help.iter().any(|(_, rows)| rows.iter().any(|(k, h)| k == "C" && h.contains("confirm a brief"))),
            "{help:?}"
        );
    }

    #[test]
    fn unknown_names_unreadable_keys_and_clashes_are_refused_with_what_to_change() {
        let err = keymap(&overrides(&[("confirm", &["C"])])).unwrap_err();
        assert!(err.contains("\"confirm\" is not a command"), "{err}");
        let err = keymap(&overrides(&[("rerun", &["Hyper-x"])])).unwrap_err();
        assert!(err.contains("[tui.keys] rerun: \"Hyper-x\" is not a key"), "{err}");
        // `q` already quits everywhere: giving it to abort would make one key mean two things.
        let err = keymap(&overrides(&[("abort", &["q"])])).unwrap_err();
        assert!(err.contains("q would mean both") && err.contains("abort") && err.contains("quit"), "{err}");
        assert!(keymap(&overrides(&[("rerun", &[])])).unwrap_err().contains("at least one key"));
    }
}
