//! The detail pane's tabs. Their order, count, titles and the tab bar's numbers all come from
//! [`Tab::ALL`]: adding a tab is one variant here, its pane's folder under `tui/panes/` (a
//! [`crate::tui::panes::Pane`], reached through `panes::Tabs`) and one keymap row for its
//! number key.

/// A tab of the detail pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tab {
    /// The question for WebGPT and the delegation brief, and whether it is confirmed.
    Brief,
    /// The journal as a conversation: prompts, replies, runs, the person's actions.
    Conversation,
    /// The cycle's runs, newest first.
    Runs,
    /// The selected run's log, paged from disk.
    Log,
    /// The change a run tested (design §6.7).
    Diff,
    /// The repository's Project, conversation and sources.
    Project,
}

impl Tab {
    /// Every tab, in the tab bar's order (its number key is its position + 1).
    pub const ALL: &'static [Tab] = &[Tab::Brief, Tab::Conversation, Tab::Runs, Tab::Log, Tab::Diff, Tab::Project];

    /// Its name in the tab bar.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Brief => "Brief",
            Tab::Conversation => "Conversation",
            Tab::Runs => "Runs",
            Tab::Log => "Log",
            Tab::Diff => "Diff",
            Tab::Project => "Project",
        }
    }

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
}
