//! The Connector screen (design §8.1): whether `forgeloop serve` runs and where, the pairing
//! code the person reads to a client, the grants (revoked from here), and the last calls. Its
//! loads (`load.rs`) read the connector's files and carry out the person's two actions.

use std::path::PathBuf;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::cycle::connector::Overview;
use crate::tui::keymap::{Binding, Cmd, Context};
use crate::tui::model::Roots;
use crate::tui::registry::Screen;

use super::{Draw, PaneWork, Reply, ScreenCx, ScreenPane};

pub mod keys;
pub mod load;
pub mod view;

pub use load::{ConnectorLoad, ConnectorMsg};

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
        super::moved(self.selected, cmd, count).map(|at| self.selected = at).is_some()
    }
}

impl ScreenPane for ConnectorPane {
    type Msg = ConnectorMsg;
    type Load = ConnectorLoad;

    const CONTEXTS: &'static [Context] = &[Context::Screen(Screen::Connector), Context::Browse, Context::Global];
    const KEYS: &'static [Binding] = keys::KEYS;

    fn command(&mut self, cmd: Cmd, cx: &mut ScreenCx<ConnectorLoad>) -> Reply {
        match cmd {
            Cmd::RevokeGrant => match self.selected_live_grant() {
                Some((id, client)) => {
                    cx.confirm(
                        format!("Revoke {client}'s grant?"),
                        format!(
                            "Grant {id} ({client}) stops working at once: its access and refresh tokens are refused, and the client must pair again with a new code to reach forgeloop. Its cycles stay as they are."
                        ),
                        ConnectorLoad::Revoke(id),
                    );
                    Reply::Done
                }
                None => Reply::Refused("no live grant selected".into()),
            },
            Cmd::NewPairingCode => {
                cx.load(ConnectorLoad::NewPairingCode);
                Reply::Done
            }
            other if self.movement(other) => Reply::Done,
            _ => Reply::NotMine,
        }
    }

    fn available(&self, cmd: Cmd) -> Option<bool> {
        match cmd {
            Cmd::RevokeGrant => Some(self.selected_live_grant().is_some()),
            Cmd::NewPairingCode => Some(self.serving()),
            _ => None,
        }
    }

    /// The header says whether `serve` runs, so the files are read from the start.
    fn started(&mut self, cx: &mut ScreenCx<ConnectorLoad>) {
        cx.load(ConnectorLoad::Overview);
    }

    fn shown(&mut self, cx: &mut ScreenCx<ConnectorLoad>) {
        cx.load(ConnectorLoad::Overview);
    }

    fn watched(roots: &Roots) -> Option<PathBuf> {
        Some(roots.connector_dir.clone()).filter(|d| !d.as_os_str().is_empty())
    }

    fn files_changed(&mut self, cx: &mut ScreenCx<ConnectorLoad>) {
        cx.load(ConnectorLoad::Overview);
    }

    fn receive(&mut self, msg: ConnectorMsg, cx: &mut ScreenCx<ConnectorLoad>) -> Reply {
        match msg {
            ConnectorMsg::Read(overview) => {
                self.loaded(overview);
                Reply::Done
            }
            ConnectorMsg::Done(result) => {
                cx.load(ConnectorLoad::Overview);
                match result {
                    Ok(text) => Reply::Note(text),
                    Err(text) => Reply::Refused(text),
                }
            }
        }
    }

    fn badge(&self) -> Option<(&'static str, &'static str)> {
        self.serving().then_some((" ⇄", " ⇄ serving (S) "))
    }

    fn render(&self, draw: &Draw, frame: &mut Frame, area: Rect) {
        view::render(self, draw, frame, area);
    }

    fn work(load: ConnectorLoad, ctx: &crate::cycle::Ctx) -> PaneWork<ConnectorMsg> {
        load::work(load, ctx)
    }
}
