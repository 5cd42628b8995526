//! The Projects screen (the registry's records) and the sources manifests the Project tab
//! shows, loaded per repository.

use std::collections::HashMap;

use crate::tui::keymap::Cmd;
use crate::tui::model::{ProjectRecord, Sources};

/// The Projects screen: the registry's records and the selection, and the sources manifests
/// read for the Project tab.
#[derive(Debug, Default)]
pub struct ProjectsPane {
    /// The registry's records, valid or not.
    pub records: Vec<ProjectRecord>,
    /// The registry has been read at least once (until then "loading", not "empty").
    pub loaded: bool,
    /// The selected record (an index into `records`).
    pub selected: usize,
    /// `owner/repo` → its sources manifest.
    pub sources: HashMap<String, Sources>,
}

impl ProjectsPane {
    /// Takes a fresh read of the registry; the selection stays in range.
    pub fn loaded(&mut self, records: Vec<ProjectRecord>) {
        self.records = records;
        self.loaded = true;
        self.selected = self.selected.min(self.records.len().saturating_sub(1));
    }

    /// The selected Project's home page.
    pub fn selected_url(&self) -> Option<String> {
        self.records.get(self.selected).and_then(|p| p.project_url.clone())
    }

    /// Moves the selection; `false` for a command that is not movement.
    pub fn movement(&mut self, cmd: Cmd) -> bool {
        let last = self.records.len().saturating_sub(1);
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
