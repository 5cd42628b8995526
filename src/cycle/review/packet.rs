//! `forgeloop review prepare`: the packet that hands the chat the change when its connector is
//! not proven. `--dry-run` says what it would hold; without it the packet (one text file) and
//! its manifest are written under the cycle's directory. Both come from one [`Plan`], so the
//! dry run cannot promise what the packet does not keep. Everything in either passed the
//! redactor; the first packet for a repository, or one with risks, waits for a person's yes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::event_data::EventData;
use crate::domain::hash::sha256_hex;
use crate::domain::packet::{self as dlp, EntryKind, MAX_PACKET_BYTES};
use crate::domain::review::{Packet, Route, Target};
use crate::domain::review_machine;
use crate::domain::state::Actor;
use crate::error::{Error, Result};
use crate::store::atomic::write_atomic;
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::private;

use super::super::context::Ctx;
use super::super::session::{Saved, mutate};
use super::{change_of, excluded, load};

/// One changed path: in or out, and why.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedFile {
    /// The path at the head (redacted).
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed`, `type-changed`.
    pub status: &'static str,
    /// The path it was renamed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// Its blob id at the head (files the packet holds only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// The sha256 of its bytes at the head, as the commit holds them (files the packet holds only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its size at the head.
    pub bytes: u64,
    /// Whether the packet holds it.
    pub included: bool,
    /// Why it is in or out.
    pub why: String,
    /// The rule that keeps it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusion: Option<dlp::Exclusion>,
    /// Spots the redactor masked in its text and patch, by kind.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub redactions: BTreeMap<String, usize>,
}

/// Something the person should know before the packet leaves the machine.
#[derive(Debug, Clone, Serialize)]
pub struct Risk {
    /// `secret`, `excluded`, `binary`, `generated`, `too-large`, `outside-the-change`.
    pub kind: String,
    /// The file.
    pub path: String,
    /// What, in words (a secret's kind and line; never its value).
    pub detail: String,
}

/// What the packet holds (the dry run prints it; the manifest is it).
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The manifest's format.
    pub schema: u32,
    /// `owner/repo`.
    pub repository: String,
    /// The base commit.
    pub base: String,
    /// The head commit.
    pub head: String,
    /// The PR, when the review is of one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// Every changed path.
    pub files: Vec<PlannedFile>,
    /// Files the packet holds.
    pub included: u32,
    /// The packet's size.
    pub bytes: u64,
    /// An estimate of its tokens.
    pub tokens: u64,
    /// Spots masked, by kind.
    pub redactions: BTreeMap<String, usize>,
    /// What the person should know.
    pub risks: Vec<Risk>,
    /// Whether it waits for the person's yes, and why.
    pub needs_approval: bool,
    /// Why it needs (or does not need) the yes.
    pub approval: String,
    /// The packet's text (not in the manifest or the dry run's JSON).
    #[serde(skip)]
    pub text: String,
}

/// What `prepare` did.
#[derive(Debug, Clone, Serialize)]
pub struct Prepared {
    /// Only said what it would do.
    pub dry_run: bool,
    /// The plan.
    #[serde(flatten)]
    pub plan: Plan,
    /// The packet file written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<PathBuf>,
    /// Its manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<PathBuf>,
    /// The packet's sha256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The cycle's status now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<crate::domain::status::Status>,
}

fn approved_marker(ctx: &Ctx, repository: &str) -> PathBuf {
    ctx.home.reviews_dir().join("approved").join(format!("{}.json", repository.replace('/', "__")))
}

/// The plan for the review at `paths`: every changed file's verdict, the text, the risks.
fn plan(ctx: &Ctx, target: &Target) -> Result<Plan> {
    let change = change_of(ctx, target)?;
    let mut files = Vec::new();
    let mut risks = Vec::new();
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    let mut diff = String::new();
    let mut bodies = String::new();
    for file in &change.files {
        let path = ctx.redactor.redact(&file.path).into_owned();
        let out = excluded(ctx, &change, file);
        let mut planned = PlannedFile {
            path: path.clone(),
            status: file.status,
            renamed_from: file.old_path.as_ref().map(|p| ctx.redactor.redact(p).into_owned()),
            blob: file.blob.clone(),
            sha256: file.sha256.clone(),
            bytes: file.bytes,
            included: out.is_none(),
            why: String::new(),
            exclusion: out.clone(),
            redactions: BTreeMap::new(),
        };
        if let Some(exclusion) = out {
            // A hash of a file kept out is a way to test guesses of its content (a short
            // password in `.env`): neither its blob id nor its sha256 is written.
            planned.blob = None;
            planned.sha256 = None;
            planned.why = exclusion.describe();
            risks.push(Risk { kind: exclusion.risk().to_owned(), path: path.clone(), detail: planned.why.clone() });
            files.push(planned);
            continue;
        }
        planned.why = match file.kind {
            EntryKind::Deleted => "deleted by the change: its patch only".into(),
            EntryKind::Link => "a link within the change".into(),
            _ => "changed by the change".into(),
        };
        let mut masked = |text: &str, what: &str, risks: &mut Vec<Risk>| -> String {
            let (clean, findings) = ctx.redactor.explain(text);
            for finding in &findings {
                *planned.redactions.entry(finding.kind.clone()).or_default() += 1;
                risks.push(Risk {
                    kind: "secret".into(),
                    path: path.clone(),
                    detail: format!("a {} masked in the {what} at line {}", finding.kind, finding.line),
                });
            }
            clean.into_owned()
        };
        diff.push_str(&masked(&file.patch, "patch", &mut risks));
        if file.kind == EntryKind::File {
            let text = String::from_utf8_lossy(&file.content).into_owned();
            let clean = masked(&text, "file", &mut risks);
            bodies.push_str(&format!(
                "\n===== FILE {} (blob {}, {} bytes) =====\n{clean}{}",
                one_line(&path),
                file.blob.as_deref().unwrap_or("?"),
                file.bytes,
                if clean.ends_with('\n') || clean.is_empty() { "" } else { "\n" }
            ));
        }
        for (kind, n) in &planned.redactions {
            *totals.entry(kind.clone()).or_default() += n;
        }
        files.push(planned);
    }
    let included = files.iter().filter(|f| f.included).count() as u32;
    let excluded_list: Vec<String> =
        files.iter().filter(|f| !f.included).map(|f| format!("- {} ({})", one_line(&f.path), f.why)).collect();
    let mut text = format!(
        "# forgeloop review packet\nrepository: {}\nbase: {}\nhead: {}\n{}files: {included} (each with its blob id; secrets are masked as [REDACTED:kind])\n",
        target.repository,
        target.base,
        target.head,
        target.pr.as_ref().map(|pr| format!("pull request: {pr}\n")).unwrap_or_default()
    );
    if !excluded_list.is_empty() {
        text.push_str(&format!("left out of this packet:\n{}\n", excluded_list.join("\n")));
    }
    text.push_str("\n===== DIFF (base..head, the files this packet holds) =====\n");
    text.push_str(&diff);
    text.push_str(&bodies);
    let bytes = text.len() as u64;
    let first = !approved_marker(ctx, &target.repository).exists();
    let needs_approval = first || !risks.is_empty();
    let approval = match (first, risks.is_empty()) {
        (true, true) => format!("the first packet for {}: a person says yes once", target.repository),
        (true, false) => format!("the first packet for {}, with {} risk(s)", target.repository, risks.len()),
        (false, false) => format!("{} risk(s): a person reads them and says yes", risks.len()),
        (false, true) => "no risk and the person has said yes for this repository before".into(),
    };
    Ok(Plan {
        schema: 1,
        repository: target.repository.clone(),
        base: target.base.clone(),
        head: target.head.clone(),
        pr: target.pr.clone(),
        files,
        included,
        bytes,
        tokens: dlp::estimate_tokens(bytes),
        redactions: totals,
        risks,
        needs_approval,
        approval,
        text,
    })
}

/// The dry run (`dry_run`) or the packet: written under `NAME.d/review/`, with its manifest,
/// recorded in the cycle (and the request that carries it issued, when no yes is needed).
pub fn prepare(ctx: &Ctx, paths: &CyclePaths, dry_run: bool) -> Result<(Option<Saved>, Prepared)> {
    let (state, review) = load(paths)?;
    review_machine::can_prepare(&state)?;
    let plan = plan(ctx, &review.target)?;
    if plan.included == 0 {
        return Err(Error::Invalid(
            "every changed file is excluded: there is nothing a packet could hold (see --dry-run)".into(),
        ));
    }
    if plan.bytes > MAX_PACKET_BYTES {
        return Err(Error::Invalid(format!(
            "the packet would be {} bytes, over {MAX_PACKET_BYTES}: keep files out with [review] exclude (see --dry-run)",
            plan.bytes
        )));
    }
    if dry_run {
        let prepared =
            Prepared { dry_run, plan, packet: None, manifest: None, sha256: None, status: Some(state.status) };
        return Ok((None, prepared));
    }
    let dir = paths.sidecar().join("review");
    private::create_dir_all(&dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let short = &review.target.head[..12];
    let packet_path = dir.join(format!("packet-{short}.txt"));
    let manifest_path = dir.join(format!("manifest-{short}.json"));
    let sha256 = sha256_hex(plan.text.as_bytes());
    let mut manifest = serde_json::to_value(&plan).map_err(|e| Error::Invalid(format!("the manifest: {e}")))?;
    manifest["packet"] = serde_json::json!({
        "file": packet_path.file_name().map(|n| n.to_string_lossy().into_owned()),
        "sha256": sha256,
        "bytes": plan.bytes,
        "tokens": plan.tokens,
    });
    ctx.redactor.redact_json(&mut manifest);
    write(&packet_path, plan.text.as_bytes())?;
    let manifest_text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    write(&manifest_path, manifest_text.as_bytes())?;
    let packet = Packet {
        path: packet_path.display().to_string(),
        manifest: manifest_path.display().to_string(),
        sha256: sha256.clone(),
        files: plan.included,
        bytes: plan.bytes,
        tokens: plan.tokens,
        risks: plan.risks.len() as u32,
        needs_approval: plan.needs_approval,
        approved: None,
        prepared_at: ctx.now(),
    };
    let saved = mutate(ctx, paths, Actor::Agent, |state, events, now| {
        let mut packet = packet.clone();
        packet.prepared_at = now.to_owned();
        review_machine::record_packet(state, packet.clone(), now)?;
        events.push(NewEvent::of(
            Actor::Agent,
            EventData::PacketPrepared {
                path: packet.path.clone(),
                sha256: packet.sha256.clone(),
                files: packet.files,
                bytes: packet.bytes,
                risks: packet.risks,
                needs_approval: packet.needs_approval,
            },
        ));
        if !packet.needs_approval {
            events.push(NewEvent::of(
                Actor::System,
                EventData::ReviewRequested { sha256: String::new(), route: Route::LocalBundle },
            ));
        }
        Ok(())
    })?;
    let status = Some(saved.state.status);
    let prepared = Prepared {
        dry_run,
        plan,
        packet: Some(packet_path),
        manifest: Some(manifest_path),
        sha256: Some(sha256),
        status,
    };
    Ok((Some(saved), prepared))
}

/// A path as one line of the packet: git allows a newline in a path, which would otherwise
/// start a line of the packet's own structure (`===== FILE …`).
fn one_line(path: &str) -> String {
    path.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// A person's yes to the packet (`via`: `terminal`, `tui`): the request that carries it is
/// issued, and later packets for the repository need a yes only when they carry risks.
pub fn approve(ctx: &Ctx, paths: &CyclePaths, via: &str) -> Result<Saved> {
    approve_as(ctx, paths, Actor::Human, via)
}

/// [`approve`] by `by`: the demo's stand-in for the person says yes as `System`, via `demo`.
pub fn approve_as(ctx: &Ctx, paths: &CyclePaths, by: Actor, via: &str) -> Result<Saved> {
    let saved = mutate(ctx, paths, by, |state, events, now| {
        review_machine::approve_packet(state, by, now)?;
        let sha256 =
            state.review.as_ref().and_then(|r| r.packet.as_ref()).map(|p| p.sha256.clone()).unwrap_or_default();
        events.push(NewEvent::of(by, EventData::PacketApproved { sha256, via: via.to_owned() }));
        events.push(NewEvent::of(
            Actor::System,
            EventData::ReviewRequested { sha256: String::new(), route: Route::LocalBundle },
        ));
        Ok(())
    })?;
    if let Some(review) = saved.state.review.as_ref() {
        let marker = approved_marker(ctx, &review.target.repository);
        if let Some(dir) = marker.parent() {
            private::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        }
        let record = serde_json::json!({"repository": review.target.repository, "approved_at": saved.state.updated_at});
        write(&marker, format!("{record}\n").as_bytes())?;
    }
    Ok(saved)
}
