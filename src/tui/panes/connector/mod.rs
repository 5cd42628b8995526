//! The Connector screen (design §8.1): whether `forgeloop serve` runs and where, the pairing
//! code the person reads to a client, the grants (revoked from here), and the last calls.

use crate::cycle::connector::Overview;
use crate::tui::keymap::Cmd;

/// The Connector screen's state: the last look at the connector's files and the selected grant.
#[derive(Debug, Default)]
pub struct ConnectorPane {
    /// What was read last (`None` until the first read).
    pub overview: Option<Overview>,
    /// The selected grant (an index into the overview's grants).
    pub selected: usize,
}

impl ConnectorPane {
    /// Takes a fresh read; the selection stays in range.
    pub fn loaded(&mut self, overview: Overview) {
        self.selected = self.selected.min(overview.grants.len().saturating_sub(1));
        self.overview = Some(overview);
    }

    /// `forgeloop serve` runs now (as last read).
    pub fn serving(&self) -> bool {
        self.overview.as_ref().is_some_and(|o| o.serving.is_some())
    }

    /// The selected grant's id, when it is live (one that can be revoked).
    pub fn selected_live_grant(&self) -> Option<(String, String)> {
        let grant = self.overview.as_ref()?.grants.get(self.selected)?;
        grant.revoked.is_none().then(|| (grant.grant.clone(), grant.client.clone()))
    }

    /// Moves the selection; `false` for a command that is not movement.
    pub fn movement(&mut self, cmd: Cmd) -> bool {
        let count = self.overview.as_ref().map_or(0, |o| o.grants.len());
        let last = count.saturating_sub(1);
        self.selected = match cmd {
            Cmd::Up => self.selected.saturating_sub(1),
            Cmd::Down => (self.selected + 1).min(last),
            Cmd::Top | Cmd::PageUp => 0,
            Cmd::Bottom | Cmd::PageDown => last,
            _ => return false,
        };
        true
    }
}

pub mod view;
