//! What the Connector screen asks for: a look at the connector's files, a grant revoked, a new
//! pairing code; each answered to it as a [`ConnectorMsg`].

use crate::cycle::Ctx;
use crate::cycle::connector::{self, Overview};
use crate::tui::panes::PaneWork;

/// A load of the Connector screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectorLoad {
    /// Read the connector's files.
    Overview,
    /// Revoke a grant (`forgeloop serve --revoke`).
    Revoke(String),
    /// Ask the running `serve` for a new pairing code.
    NewPairingCode,
}

/// An answer to one of its loads.
#[derive(Debug, Clone)]
pub enum ConnectorMsg {
    /// The connector's files, read.
    Read(Overview),
    /// An action finished: what to say, or why it failed (redacted).
    Done(Result<String, String>),
}

/// The work a load takes.
pub fn work(load: ConnectorLoad, ctx: &Ctx) -> PaneWork<ConnectorMsg> {
    let ctx = ctx.clone();
    match load {
        ConnectorLoad::Overview => {
            let dir = ctx.home.connector_dir();
            PaneWork::Load(Box::new(move || ConnectorMsg::Read(connector::overview(&dir, 200))))
        }
        ConnectorLoad::Revoke(id) => PaneWork::Blocking(Box::new(move || {
            ConnectorMsg::Done(
                connector::revoke(&ctx, &id)
                    .map(|ids| format!("revoked {}: its tokens no longer work", ids.join(", ")))
                    .map_err(|e| ctx.redactor.redact(&e.to_string()).into_owned()),
            )
        })),
        ConnectorLoad::NewPairingCode => PaneWork::Blocking(Box::new(move || {
            ConnectorMsg::Done(
                connector::new_pairing_code(&ctx)
                    .map(|()| "forgeloop serve is making a new pairing code".to_owned())
                    .map_err(|e| ctx.redactor.redact(&e.to_string()).into_owned()),
            )
        })),
    }
}
