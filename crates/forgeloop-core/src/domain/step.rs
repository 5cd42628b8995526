//! `forgeloop next`'s answer (design §5.3): one action and what it needs. Its own module so a
//! kind of cycle (`review_step`) can fill one without importing `next`.

use serde::Serialize;

use super::needs_network::NeedsNetwork;
use super::status::Status;
use super::validation::NotProposed;

/// What the coordinator does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Type `text` into the cycle's chat, then run `command` (`forgeloop sent`).
    Send,
    /// The message was sent; wait for WebGPT's reply to finish, then run `command`.
    WaitForReply,
    /// Run `command` (test the PR WebGPT reported).
    Run,
    /// A person must act (confirm the brief); `command` blocks until the state changes.
    WaitForHuman,
    /// Stop the loop and report `explanation` to the user.
    Stop,
    /// The cycle has ended; nothing to do.
    Done,
}

/// `forgeloop next`'s answer: one action, with what it needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NextStep {
    /// The cycle's status.
    pub status: Status,
    /// What to do.
    pub action: Action,
    /// Why, in a sentence or two (also stored as the state's `next_action`).
    pub explanation: String,
    /// The forgeloop command to run, as argv.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The exact message to type into the chat (`send`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The hash of `text`, which `sent` checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_sha256: Option<String>,
    /// When the message was sent (`wait_for_reply`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_since: Option<String>,
    /// Completed runs so far.
    pub iteration: u32,
    /// The iteration cap.
    pub max_iterations: u32,
    /// The PR the cycle works on (`owner/repo#N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// `"unsandboxed"` when the person turned the sandbox off: the agent must see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<&'static str>,
    /// The first `run` (no stored commands): the commands the brief's Validation names in
    /// backticks, as argv arrays for the commands file. The agent checks them; none is run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_commands: Option<Vec<Vec<String>>>,
    /// Setup commands for the commands file's `"setup"` (run first, through the person's
    /// allowlist): the Validation's install commands, then installs for the lockfiles in
    /// `lockfiles`. The agent checks them; none is run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_setup: Option<Vec<Vec<String>>>,
    /// The lockfiles the proposals come from (repository-relative paths).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lockfiles: Vec<String>,
    /// Backticked Validation spans that are not proposed, each with why (a shell operator, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_proposed: Vec<NotProposed>,
    /// The last run needed network the person has not allowed: what to allow, and the exact
    /// lines for their config.toml (design §5.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_network: Option<NeedsNetwork>,
    /// The cycle's ChatGPT conversation, on every step that types into it or reads from it
    /// (`send`, `wait_for_reply`): with several cycles at once, the chat to open. `None` there
    /// means none is recorded yet (the explanation says how to attach it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_url: Option<String>,
    /// Whether the PR's head moved since its failed run (`unchanged: …`, `changed: …`, or
    /// `could not check: …`), when the step would test that PR again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_check: Option<String>,
    /// A review cycle's route: `CONNECTOR` (a verified attestation) or `LOCAL_BUNDLE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<&'static str>,
    /// A file to upload into the chat with `text` (a review packet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upload: Option<String>,
}
