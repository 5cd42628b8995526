//! The registry of the control room's panes: the detail pane's tabs, in the tab bar's order,
//! and the screens besides the cycles, one line each. Everything that lists them is generated
//! from it: the [`Tab`] and [`Screen`] enums (titles, number keys, the key that shows a screen,
//! their `[tui.keys]` names, here), the keymap rows that choose them (`keymap.rs`), and the
//! panes' side (`panes::tabs`, `panes::screens`: the structs holding every pane, the dispatch
//! of keys, loads and messages to the pane that owns them, the wrapper enums over each pane's
//! own message and load types).
//!
//! A tab's line reads `Variant module::PaneType "Title" 'number key' "override_name"`; a
//! screen's `Variant module::PaneType "Title" 'key' "override_name" "hint" "help"`. Adding a
//! tab or a screen is its folder under `tui/panes/`, its line here and its snapshot test
//! (CONTRIBUTING).
//!
//! Each list is a macro that hands itself to another macro, so the enums (which the keymap
//! needs) and the panes' structs (which need the keymap) come from one list without either
//! module importing the other.

/// Calls `$then!` with the list of tabs.
macro_rules! for_each_tab {
    ($then:ident) => {
        $then! {
            Brief brief::BriefPane "Brief" '1' "tab_brief";
            Conversation conversation::ConversationPane "Conversation" '2' "tab_conversation";
            Runs runs::RunsPane "Runs" '3' "tab_runs";
            Log log::LogPane "Log" '4' "tab_log";
            Diff diff::DiffPane "Diff" '5' "tab_diff";
            Project project::ProjectPane "Project" '6' "tab_project";
            Files files::FilesPane "Files" '7' "tab_files";
            Review review::ReviewPane "Review" '8' "tab_review";
        }
    };
}
pub(crate) use for_each_tab;

/// The [`Tab`] enum and what the keymap and the tab bar read of each tab.
macro_rules! tab_enum {
    ($( $variant:ident $module:ident :: $pane:ident $title:literal $key:literal $name:literal; )*) => {
        /// A tab of the detail pane.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Tab {
            $(
                #[doc = concat!("The ", $title, " tab.")]
                $variant,
            )*
        }

        impl Tab {
            /// Every tab, in the tab bar's order (its number key is its position + 1).
            pub const ALL: &'static [Tab] = &[$(Tab::$variant),*];

            /// Its name in the tab bar.
            pub fn title(self) -> &'static str {
                match self {
                    $(Tab::$variant => $title,)*
                }
            }

            /// Its number key.
            pub fn key(self) -> char {
                match self {
                    $(Tab::$variant => $key,)*
                }
            }

            /// The name of its number key's command in `[tui.keys]`.
            pub fn override_name(self) -> &'static str {
                match self {
                    $(Tab::$variant => $name,)*
                }
            }

            /// Its line in the help overlay.
            pub fn help(self) -> &'static str {
                match self {
                    $(Tab::$variant => concat!($title, " tab"),)*
                }
            }
        }
    };
}

for_each_tab!(tab_enum);

/// Calls `$then!` with the list of screens besides the cycles.
macro_rules! for_each_screen {
    ($then:ident) => {
        $then! {
            Projects projects::ProjectsPane "Projects" 'p' "projects" "projects" "Show the Project registry";
            Connector connector::ConnectorPane "Connector" 'S' "connector" "" "Show the remote connector (forgeloop serve): pairing code, grants, calls";
        }
    };
}
pub(crate) use for_each_screen;

/// The [`Screen`] enum and what the keymap reads of each screen.
macro_rules! screen_enum {
    ($( $variant:ident $module:ident :: $pane:ident $title:literal $key:literal $name:literal $hint:literal $help:literal; )*) => {
        /// Which screen is shown: the cycles (the list and the selected cycle's tabs), or one
        /// of the registry's screens.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Screen {
            /// The cycle list and the selected cycle's tabs.
            Cycles,
            $(
                #[doc = concat!("The ", $title, " screen.")]
                $variant,
            )*
        }

        impl Screen {
            /// Every screen besides the cycles, in the registry's order.
            pub const OTHERS: &'static [Screen] = &[$(Screen::$variant),*];

            /// Its name in the help overlay.
            pub fn title(self) -> &'static str {
                match self {
                    Screen::Cycles => "Cycles",
                    $(Screen::$variant => $title,)*
                }
            }

            /// The name of the command that shows it in `[tui.keys]`.
            pub fn override_name(self) -> &'static str {
                match self {
                    Screen::Cycles => "cycles",
                    $(Screen::$variant => $name,)*
                }
            }

            /// Its heading in the help overlay.
            pub fn help(self) -> &'static str {
                match self {
                    Screen::Cycles => "Cycles view",
                    $(Screen::$variant => concat!($title, " view"),)*
                }
            }
        }
    };
}

for_each_screen!(screen_enum);

impl Tab {
    /// Position in [`Tab::ALL`].
    pub fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The next tab, wrapping after the last.
    pub fn next(self) -> Tab {
        Tab::ALL[(self.index() + 1) % Tab::ALL.len()]
    }

    /// The previous tab, wrapping before the first.
    pub fn prev(self) -> Tab {
        Tab::ALL[(self.index() + Tab::ALL.len() - 1) % Tab::ALL.len()]
    }

    /// The first tab (the one a cycle opens on).
    pub fn first() -> Tab {
        Tab::ALL[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_count_come_from_all() {
        // Each tab once, and `index` is its position.
        for (i, tab) in Tab::ALL.iter().enumerate() {
            assert_eq!(tab.index(), i);
            assert_eq!(Tab::ALL.iter().filter(|t| *t == tab).count(), 1, "{tab:?}");
        }
        // Walking forward visits every tab once and comes back; backward undoes it.
        let mut tab = Tab::ALL[0];
        let mut seen = Vec::new();
        for _ in Tab::ALL {
            seen.push(tab);
            assert_eq!(tab.next().prev(), tab);
            tab = tab.next();
        }
        assert_eq!(seen, Tab::ALL);
        assert_eq!(tab, Tab::ALL[0], "next wraps after the last");
        assert_eq!(Tab::ALL[0].prev(), Tab::ALL[Tab::ALL.len() - 1], "prev wraps before the first");
    }

    #[test]
    fn number_keys_follow_the_tab_bar_and_names_are_unique() {
        for (i, tab) in Tab::ALL.iter().enumerate() {
            assert_eq!(tab.key(), char::from_digit(i as u32 + 1, 10).unwrap_or('?'), "{tab:?}");
            assert_eq!(tab.override_name(), format!("tab_{}", tab.title().to_lowercase()));
        }
    }
}
