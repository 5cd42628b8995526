//! What the blocking checkout task needs, owned: a PR's head fetched into the mirror and
//! checked out for a local run, or only judged in the mirror for a `github-checks` run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::checkout::{CheckoutRequest, TestedSpec};
use crate::domain::commands::{CommandsProfile, TreeMode};
use crate::domain::pr_ref::RepoName;
use crate::domain::protect::ProtectMode;
use crate::github::PullInfo;

use super::super::context::{Ctx, Engine};

/// What the blocking checkout task needs, owned.
pub(super) struct CheckoutJob {
    mirrors: PathBuf,
    repo: RepoName,
    clone_url: String,
    number: u64,
    sha: String,
    token: Option<String>,
    allow_insecure_local: bool,
    pub(super) submodules: bool,
    pub(super) cancel: Arc<AtomicBool>,
    owners: Vec<String>,
    history: crate::domain::commands::History,
    pub(super) into: PathBuf,
    pub(super) objects_for_others: bool,
    base_ref: String,
    /// What to test and judge: the merge or the head, the commands, the held paths.
    tree: TreeMode,
    commands: CommandsProfile,
    protect: Vec<String>,
    pub(super) hold: bool,
    /// Held paths' versions the person accepted from the PR (path, blob).
    pub(super) accepted: Vec<(String, String)>,
}

impl CheckoutJob {
    /// A job for `pull` with `commands`, the person's protected paths and mode for its repository.
    pub(super) fn new(ctx: &Ctx, engine: &Engine, pull: &PullInfo, commands: &CommandsProfile) -> CheckoutJob {
        let repository = pull.repository.full_name();
        CheckoutJob {
            mirrors: ctx.home.mirrors_dir(),
            repo: pull.repository.clone(),
            clone_url: pull.base_clone_url.clone(),
            number: pull.number,
            sha: pull.head_sha.clone(),
            token: engine.token.clone(),
            allow_insecure_local: engine.github.is_loopback(),
            submodules: false,
            cancel: Arc::new(AtomicBool::new(false)),
            owners: ctx.config.checkout.submodule_token_owners.clone(),
            history: commands.history,
            into: PathBuf::new(),
            objects_for_others: false,
            base_ref: pull.base_ref.clone(),
            tree: commands.tree,
            commands: commands.clone(),
            protect: ctx.config.protect.for_repository(&repository),
            hold: ctx.config.protect.mode_for(&repository) == ProtectMode::Hold,
            accepted: Vec::new(),
        }
    }

    /// The checkout request this job makes.
    pub(super) fn request(&self) -> CheckoutRequest<'_> {
        CheckoutRequest {
            mirrors_root: &self.mirrors,
            repo: &self.repo,
            clone_url: &self.clone_url,
            pr_number: self.number,
            expected_sha: &self.sha,
            token: self.token.as_deref(),
            allow_insecure_local: self.allow_insecure_local,
            submodules: self.submodules,
            base_ref: Some(&self.base_ref),
            submodule_token_owners: &self.owners,
            fetch_exact_sha: false,
            checkouts_root: None,
            exact_dir: Some(&self.into),
            history: self.history,
            cancel: Some(self.cancel.clone()),
            objects_for_others: self.objects_for_others,
            tested: Some(TestedSpec {
                tree: self.tree,
                commands: &self.commands,
                protect: &self.protect,
                hold: self.hold,
                accepted: &self.accepted,
            }),
        }
    }
}
