//! The key reference in docs/control-room.md is made from the control room's one keymap (the
//! same one the footer hints and the `?` overlay are drawn from): a key added, moved or
//! relabelled without the docs following fails here. `UPDATE_DOCS=1` rewrites the reference.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use forgeloop::tui::keymap::{Cmd, Context};
use forgeloop::tui::keys::{help_sections, resolve};

const BEGIN: &str = "<!-- keys:begin (generated from src/tui/keymap.rs; UPDATE_DOCS=1 cargo test --test keys_doc) -->";
const END: &str = "<!-- keys:end -->";

/// One table per context, in the order of the `?` overlay. Keys in backticks; a `|` in a key
/// or a help text is escaped so the table keeps its columns.
fn rendered() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for (title, rows) in help_sections() {
        out.push_str(&format!("\n**{title}**\n\n| keys | |\n|---|---|\n"));
        for (keys, help) in rows {
            let keys: Vec<String> = keys.split(' ').map(|k| format!("`{}`", cell(k))).collect();
            out.push_str(&format!("| {} | {} |\n", keys.join(" "), cell(help)));
        }
    }
    out.push('\n');
    out
}

#[test]
fn the_docs_key_reference_is_the_keymap() {
    files::check_generated("docs/control-room.md", BEGIN, END, &rendered(), "keys_doc");
}

/// The names `[tui.keys]` takes, each with its built-in keys and what it does (its first help
/// line), once per command.
fn names() -> String {
    use forgeloop::tui::key_overrides::name;
    use forgeloop::tui::keymap::KeySpec;
    use forgeloop::tui::keys::rows as bindings;
    let cell = |s: &str| s.replace('|', "\\|");
    let mut seen = Vec::new();
    let mut out = String::from("\n| name | built-in keys | |\n|---|---|---|\n");
    for binding in bindings() {
        let Some(name) = name(binding.cmd) else { continue };
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        let keys: Vec<String> = binding.keys.iter().map(|k: &KeySpec| format!("`{}`", cell(&k.label()))).collect();
        out.push_str(&format!("| `{name}` | {} | {} |\n", keys.join(" "), cell(binding.help)));
    }
    out
}

#[test]
fn the_docs_list_every_name_the_config_takes() {
    files::check_generated(
        "docs/control-room.md",
        "<!-- key-names:begin (generated from src/tui/keymap.rs; UPDATE_DOCS=1 cargo test --test keys_doc) -->",
        "<!-- key-names:end -->",
        &names(),
        "keys_doc",
    );
}

#[test]
fn the_reference_has_the_keys_a_newcomer_needs() {
    let text = rendered();
    for needle in ["`c`", "`q`", "`?`", "`n`", "`y` `Enter`", "Confirm the brief", "Confirm-brief dialog"] {
        assert!(text.contains(needle), "{needle} missing from the rendered key reference:\n{text}");
    }
}

/// The prose above the reference names the first keys by hand; each claim there is checked
/// against the keymap in the contexts the control room really uses.
#[test]
fn the_first_keys_the_docs_name_do_what_they_say() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use forgeloop::tui::keymap::{Cmd, Context as C};
    use forgeloop::tui::keys::resolve;
    use forgeloop::tui::registry::Tab;

    let list = [C::List, C::Cycle, C::Global];
    let log = [C::Tab(Tab::Log), C::Detail, C::Cycle, C::Global];
    let key = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
    let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(resolve(&list, &key('n')), Some(Cmd::NextAttention));
    assert_eq!(resolve(&list, &enter), Some(Cmd::Open));
    assert_eq!(resolve(&list, &key('1')), Some(Cmd::Tab(Tab::Brief)));
    assert_eq!(resolve(&list, &key('6')), Some(Cmd::Tab(Tab::Project)));
    assert_eq!(resolve(&list, &key('c')), Some(Cmd::ConfirmBrief));
    assert_eq!(resolve(&[C::ConfirmBrief], &key('y')), Some(Cmd::Yes));
    assert_eq!(resolve(&[C::ConfirmBrief], &enter), Some(Cmd::Yes));
    assert_eq!(resolve(&[C::ConfirmBrief], &key('e')), Some(Cmd::Edit));
    assert_eq!(resolve(&[C::ConfirmBrief], &esc), Some(Cmd::Cancel));
    assert_eq!(resolve(&list, &key('r')), Some(Cmd::Rerun));
    let diff = [C::Tab(Tab::Diff), C::Detail, C::Cycle, C::Global];
    assert_eq!(resolve(&list, &key('m')), Some(Cmd::MessageWebgpt));
    assert_eq!(resolve(&diff, &key('m')), Some(Cmd::MessageWebgpt), "m works while reviewing the diff");
    assert_eq!(resolve(&[C::Say], &key('y')), Some(Cmd::Yes));
    assert_eq!(resolve(&list, &key('x')), Some(Cmd::CancelRun));
    assert_eq!(resolve(&list, &key('a')), Some(Cmd::Abort));
    assert_eq!(resolve(&list, &key('?')), Some(Cmd::Help));
    assert_eq!(resolve(&list, &key('q')), Some(Cmd::Quit));
    assert_eq!(resolve(&list, &key('y')), Some(Cmd::CopyOutbox));
    assert_eq!(resolve(&log, &key('n')), Some(Cmd::NextMatch));
    assert_eq!(resolve(&list, &key('v')), Some(Cmd::Approve));
    assert_eq!(resolve(&[C::Tab(Tab::Runs), C::Detail, C::Cycle, C::Global], &key('v')), Some(Cmd::Approve));
    assert_eq!(resolve(&diff, &key('t')), Some(Cmd::TestsOnly));
    assert_eq!(resolve(&[C::YesNo], &key('y')), Some(Cmd::Yes), "y approves in the dialog `v` opens");
}

/// What the README's prose says a key does, where it says: each phrase is in the README and its
/// key resolves, in the contexts the control room has there, to that command ("`y` confirms"
/// was once written where `y` copies the outbox).
#[test]
fn the_keys_the_readme_names_do_what_it_says_where_it_says() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let list = [Context::List, Context::Cycle, Context::Global];
    let detail = [Context::Detail, Context::Cycle, Context::Global];
    let cases: &[(&str, &[Context], char, Cmd)] = &[
        ("so `g` selects the first", &list, 'g', Cmd::Top),
        ("`c` opens its brief", &list, 'c', Cmd::ConfirmBrief),
        ("in that dialog `y` confirms", &[Context::ConfirmBrief], 'y', Cmd::Yes),
        ("`A` says the index", &list, 'A', Cmd::AllowHosts),
        ("`c` on the cycle opens the brief; `y` there confirms", &list, 'c', Cmd::ConfirmBrief),
        ("`c` on the cycle opens the brief; `y` there confirms", &[Context::ConfirmBrief], 'y', Cmd::Yes),
        ("only you rerun one (`r` in the control", &detail, 'r', Cmd::Rerun),
        ("`n` next needing you", &list, 'n', Cmd::NextAttention),
        ("go through the loop too, not around it: `m` in the control room", &detail, 'm', Cmd::MessageWebgpt),
        ("go through the loop too, not around it: `m` in the control room", &list, 'm', Cmd::MessageWebgpt),
        ("`r` rerun", &list, 'r', Cmd::Rerun),
        ("`m` message WebGPT", &list, 'm', Cmd::MessageWebgpt),
        ("`a` abort", &list, 'a', Cmd::Abort),
        ("`?` every key", &list, '?', Cmd::Help),
        ("`q` quit", &list, 'q', Cmd::Quit),
    ];
    for (phrase, contexts, key, cmd) in cases {
        let phrase_in_readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(phrase_in_readme.contains(phrase), "the README no longer says {phrase:?}");
        let event = KeyEvent::new(KeyCode::Char(*key), KeyModifiers::NONE);
        assert_eq!(resolve(contexts, &event), Some(*cmd), "{phrase:?}: `{key}` in {contexts:?}");
    }
}
