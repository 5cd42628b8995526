//! The person allows the hosts a NEEDS_NETWORK run was refused, for that repository's runs
//! (design §5.6): human-only (the control room's one key, or the demo's stand-in for the
//! person; no agent-facing command does it),
//! written into their config.toml in place and journaled in the cycle, so `next` tells the
//! agent to run again instead of asking.

use std::path::{Path, PathBuf};

use crate::config_edit;
use crate::domain::event_data::EventData;
use crate::domain::state::Actor;
use crate::domain::{machine, needs_network};
use crate::error::{Error, Result};
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;

use super::context::Ctx;
use super::session::mutate;

/// What was allowed, where.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// The repository whose runs may now reach the entries, `OWNER/REPO`.
    pub repository: String,
    /// Every entry the refused run named (some may have been in the file already).
    pub entries: Vec<String>,
    /// The config file written.
    pub config: PathBuf,
    /// The table the entries went into, as written in the file.
    pub table: String,
}

/// The entries and repository a cycle's NEEDS_NETWORK run would have needed, for the
/// confirmation a person sees before [`allow_refused_hosts`]: `None` when there is nothing to
/// allow.
pub fn refused_hosts(state: &crate::domain::state::CycleState) -> Option<(String, Vec<String>)> {
    let needs = state.needs_network.as_ref().filter(|n| n.allowed_at.is_none())?;
    // Never an address that is not public, whatever an older state file recorded.
    let entries: Vec<String> = needs.allow.iter().filter(|e| needs_network::proposable(e)).cloned().collect();
    if entries.is_empty() {
        return None;
    }
    let repository = needs.pr.split_once('#').map_or(needs.pr.as_str(), |(repo, _)| repo).to_owned();
    Some((repository, entries))
}

/// Adds the refused entries to `[network.repositories."owner/repo"] allow` in the person's
/// config and records it in the cycle. `by` is the person (`human`), or the demo's stand-in
/// for one (`system`); never the agent.
pub fn allow_refused_hosts(ctx: &Ctx, paths: &CyclePaths, by: Actor) -> Result<Allowed> {
    if by == Actor::Agent {
        return Err(Error::Invalid("only a person allows hosts for a repository's tests".into()));
    }
    let config = ctx.config_path.clone().ok_or_else(|| {
        Error::Invalid("this forgeloop has no config file to write (pass --config or set XDG_CONFIG_HOME)".into())
    })?;
    let mut allowed = None;
    mutate(ctx, paths, by, |state, events, now| {
        let (repository, entries) = refused_hosts(state).ok_or_else(|| {
            // The machine says why (no NEEDS_NETWORK run, or one without a refused host).
            match machine::network_allowed(&mut state.clone(), now) {
                Err(refusal) => Error::Refused(refusal),
                Ok(_) => Error::Invalid("the hosts were allowed already".into()),
            }
        })?;
        let edited = config_edit::allow_for_repository(&config, &repository, &entries)?;
        machine::network_allowed(state, now)?;
        let why = "the person allowed the hosts the last run lacked: the next run decides what WebGPT is told";
        let withdrawn = super::outbox::withdraw_moot_handoff(state, why, by, now);
        events.push(NewEvent::of(
            by,
            EventData::NetworkAllowed {
                repository: repository.clone(),
                allow: entries.clone(),
                added: edited.added.clone(),
                config: display(&edited.path),
                table: edited.table.clone(),
            },
        ));
        events.extend(withdrawn);
        allowed = Some(Allowed { repository, entries, config: edited.path, table: edited.table });
        Ok(())
    })?;
    allowed.ok_or_else(|| Error::Invalid("nothing was allowed".into()))
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
