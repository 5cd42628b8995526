//! Progress of a `webgpt_pr_test` run as MCP progress notifications (sent only when the
//! client asked for them with a progressToken).
//!
//! The runner says when each command starts (`runner::CommandStarted`); progress is
//! informational only, nothing is decided from it.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

use crate::cycle::pr_test::CommandStarted;
use crate::redact::Redactor;

/// Sends progress notifications for one request; every message is redacted.
#[derive(Clone)]
pub struct Reporter {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    redactor: Redactor,
}

impl Reporter {
    /// A reporter for one request; `token` is the client's `progressToken`, if it sent one.
    pub fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>, redactor: Redactor) -> Reporter {
        Reporter { peer, token, redactor }
    }

    /// `progress` must grow from one call to the next (MCP requires it).
    pub async fn report(&self, progress: f64, total: f64, message: &str) {
        let Some(token) = self.token.clone() else { return };
        let param = ProgressNotificationParam::new(token, progress)
            .with_total(total)
            .with_message(self.redactor.redact(message).into_owned());
        if let Err(err) = self.peer.notify_progress(param).await {
            tracing::debug!("cannot send a progress notification: {err}");
        }
    }

    /// Whether the client asked for progress (sent a `progressToken`).
    pub fn wanted(&self) -> bool {
        self.token.is_some()
    }
}

/// Reports "running command i/N" as the runner starts each command (or a wait for CI's
/// progress lines), until the run ends
/// (its sender is dropped).
pub async fn forward(
    mut started: tokio::sync::mpsc::UnboundedReceiver<CommandStarted>,
    reporter: Reporter,
    first_step: f64,
    total: f64,
) {
    while let Some(command) = started.recv().await {
        if let Some(line) = &command.status_line {
            // A wait for CI: progress creeps forward within its one step.
            let within = 1.0 - 1.0 / (command.index as f64 + 2.0);
            reporter.report(first_step + within, total, line).await;
            continue;
        }
        let message = format!("running command {}/{}: {}", command.index + 1, command.total, command.argv.join(" "));
        reporter.report(first_step + command.index as f64, total, &message).await;
    }
}
