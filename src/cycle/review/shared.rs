//! A review the person shares with a connected client (`forgeloop serve --share`): the one
//! way the connector reaches a cycle it did not start. Sharing is the person's act on their
//! terminal, for one grant and one review; the client then reads what `get_review` answers —
//! the review's status, its target, the attestation's verdict, the packet's manifest and each
//! finding's decision — and nothing else (no packet text, no challenge, no triage notes).

use serde::Serialize;

use crate::domain::connector::Grant;
use crate::domain::findings::Severity;
use crate::domain::review::{Attestation, Verdict};
use crate::error::{Error, Result};
use crate::store::layout::CyclePaths;

use super::super::connector::files;
use super::super::context::Ctx;
use super::load;

/// What `serve --share` or `--unshare` did.
#[derive(Debug, Clone, Serialize)]
pub struct Sharing {
    /// The grant.
    pub grant: String,
    /// The client it was given to.
    pub client: String,
    /// The reviews it may read now.
    pub shared: Vec<String>,
}

/// Shares the review `name` with grant `grant_id` (`share`), or stops sharing it. Refused for
/// anything but a review cycle in the home, named by its bare name, and for a revoked grant.
pub fn share(ctx: &Ctx, grant_id: &str, name: &str, share: bool) -> Result<Sharing> {
    let name = name.trim();
    if name.is_empty() || name.contains(['/', '\\']) || name.ends_with(".json") {
        return Err(Error::Invalid(format!(
            "{name:?}: a review is shared by its name in forgeloop's home (as `forgeloop list` shows it), not a path"
        )));
    }
    if share {
        // Only a review: a PR cycle shared would hand the client its tools' reach.
        load(&ctx.cycle(name)?)?;
    }
    let name = name.to_owned();
    files(ctx)
        .update_grants(|grants| {
            let Some(grant) = grants.get_mut(grant_id) else {
                return Err(format!("no grant {grant_id:?}: see forgeloop serve --grants"));
            };
            if grant.revoked.is_some() {
                return Err(format!("the grant {grant_id} is revoked: the client must pair again"));
            }
            let held = grant.shared.contains(&name);
            match (share, held) {
                (true, false) => grant.shared.push(name),
                (false, true) => grant.shared.retain(|s| *s != name),
                (false, false) => return Err(format!("{name:?} is not shared with {grant_id}")),
                (true, true) => {}
            }
            Ok(Sharing { grant: grant.id.clone(), client: grant.client_name.clone(), shared: grant.shared.clone() })
        })
        .map_err(|e| Error::Invalid(e.to_string()))?
        .map_err(Error::Invalid)
}

/// The review `name` if the person shared it with `grant`.
pub fn shared_with(ctx: &Ctx, grant: &Grant, name: &str) -> Result<CyclePaths> {
    if !grant.shared.iter().any(|s| s == name) {
        return Err(Error::Invalid(format!(
            "{name:?} is not a review the person shared with this client (they share one with `forgeloop serve --share`)"
        )));
    }
    ctx.cycle(name)
}

/// A finding as a connected client reads it: what the reviewer said and what the person
/// decided, never their note.
#[derive(Debug, Clone, Serialize)]
pub struct FindingStatus {
    /// Its number in the reply.
    pub number: u32,
    /// Its severity.
    pub severity: Severity,
    /// Where: `path:line`, a path, or `—`.
    pub location: String,
    /// What the reviewer said.
    pub text: String,
    /// `FIX`, `DEFER`, `DISMISS`, `QUESTION`; `None` while untriaged.
    pub decision: Option<&'static str>,
    /// The PR whose tested run fixed it, and its head.
    pub fixed_by: Option<String>,
}

/// The attestation's outcome, without its questions or the answers judged.
#[derive(Debug, Clone, Serialize)]
pub struct AttestationStatus {
    /// `pending`, `valid` or `invalid`.
    pub verdict: &'static str,
    /// Why it is invalid.
    pub why: Option<String>,
    /// The commit it is about.
    pub commit: String,
    /// When it stops counting.
    pub expires_at: String,
}

/// `get_review`'s answer (typed here; `serve` shapes and bounds it).
#[derive(Debug, Clone, Serialize)]
pub struct ReviewAnswer {
    /// The review's name.
    pub review: String,
    /// Its status word.
    pub status: &'static str,
    /// `owner/repo`.
    pub repository: String,
    /// The base commit.
    pub base: String,
    /// The head commit: the commit reviewed.
    pub head: String,
    /// The PR, when the review is of one.
    pub pr: Option<String>,
    /// `CONNECTOR` or `LOCAL_BUNDLE`, once decided.
    pub route: Option<&'static str>,
    /// The attestation's outcome.
    pub attestation: Option<AttestationStatus>,
    /// The packet's manifest as written (redacted when it was made), when there is a packet.
    pub manifest: Option<serde_json::Value>,
    /// Whether the packet waits for the person's yes.
    pub packet_awaits_approval: Option<bool>,
    /// Every finding and its decision.
    pub findings: Vec<FindingStatus>,
    /// Findings still waiting for the person's decision.
    pub untriaged: Vec<u32>,
}

/// The review at `paths`, as a connected client may read it.
pub fn answer(name: &str, paths: &CyclePaths) -> Result<ReviewAnswer> {
    let (state, review) = load(paths)?;
    let manifest =
        match &review.packet {
            Some(packet) => {
                let text = std::fs::read(&packet.manifest)
                    .map_err(|e| Error::io(format!("cannot read the packet's manifest {}", packet.manifest), e))?;
                Some(serde_json::from_slice(&text).map_err(|e| {
                    Error::Invalid(format!("the packet's manifest {} is not JSON: {e}", packet.manifest))
                })?)
            }
            None => None,
        };
    Ok(ReviewAnswer {
        review: name.to_owned(),
        status: state.status.as_str(),
        repository: review.target.repository.clone(),
        base: review.target.base.clone(),
        head: review.target.head.clone(),
        pr: review.target.pr.clone(),
        route: review.route.map(|r| r.as_str()),
        attestation: review.attestation.as_ref().map(attestation_status),
        manifest,
        packet_awaits_approval: review.packet.as_ref().map(|p| p.needs_approval && p.approved.is_none()),
        untriaged: review.untriaged().map(|f| f.number).collect(),
        findings: review
            .findings
            .iter()
            .map(|f| FindingStatus {
                number: f.number,
                severity: f.severity,
                location: f.location(),
                text: f.text.clone(),
                decision: f.triage.as_ref().map(|t| t.decision.as_str()),
                fixed_by: f.fixed.as_ref().map(|x| format!("{} at {}", x.pr, x.head_sha)),
            })
            .collect(),
    })
}

fn attestation_status(a: &Attestation) -> AttestationStatus {
    let (verdict, why) = match &a.verdict {
        Verdict::Pending => ("pending", None),
        Verdict::Valid { .. } => ("valid", None),
        Verdict::Invalid { why, .. } => ("invalid", Some(why.clone())),
    };
    AttestationStatus { verdict, why, commit: a.commit.clone(), expires_at: a.expires_at.clone() }
}
