//! The Projects screen: the registry's records (read by the app, which the Project tab shares:
//! [`RegistryRead`]) and the one selected, opened in the browser.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::keymap::{Binding, Cmd, Context};
use crate::tui::registry::Screen;

use super::{Draw, Nothing, PaneWork, RegistryRead, Reply, ScreenCx, ScreenPane, SharedLoad};

pub mod keys;
pub mod view;

/// The Projects screen: the selected record.
#[derive(Debug, Default)]
pub struct ProjectsPane {
    /// The selected record (an index into the registry's records).
    pub selected: usize,
}

impl ProjectsPane {
    /// The selected Project's home page.
    pub fn selected_url(&self, registry: &RegistryRead) -> Option<String> {
        registry.records.get(self.selected).and_then(|p| p.project_url.clone())
    }

    /// Moves the selection among `count` records; `false` for a command that is not movement.
    pub fn movement(&mut self, cmd: Cmd, count: usize) -> bool {
        super::moved(self.selected, cmd, count).map(|at| self.selected = at).is_some()
    }
}

impl ScreenPane for ProjectsPane {
    type Msg = Nothing;
    type Load = Nothing;

    const CONTEXTS: &'static [Context] = &[Context::Screen(Screen::Projects), Context::Browse, Context::Global];
    const KEYS: &'static [Binding] = keys::KEYS;

    fn command(&mut self, cmd: Cmd, cx: &mut ScreenCx<Nothing>) -> Reply {
        match cmd {
            Cmd::Open => match self.selected_url(cx.registry) {
                Some(url) => Reply::OpenUrl(url),
                None => Reply::Done,
            },
            other if self.movement(other, cx.registry.records.len()) => Reply::Done,
            _ => Reply::NotMine,
        }
    }

    /// The registry is read again each time the screen is shown.
    fn shown(&mut self, cx: &mut ScreenCx<Nothing>) {
        cx.read(SharedLoad::Registry);
    }

    /// The selection stays in range of what was read.
    fn registry_read(&mut self, registry: &RegistryRead) {
        self.selected = self.selected.min(registry.records.len().saturating_sub(1));
    }

    fn available_with(&self, cmd: Cmd, registry: &RegistryRead) -> Option<bool> {
        match cmd {
            Cmd::Open => Some(self.selected_url(registry).is_some()),
            _ => None,
        }
    }

    fn render(&self, draw: &Draw, frame: &mut Frame, area: Rect) {
        view::render(self, draw, frame, area);
    }

    fn work(load: Nothing, _ctx: &crate::cycle::Ctx) -> PaneWork<Nothing> {
        match load {}
    }
}
