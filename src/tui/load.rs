//! Blocking readers the runtime calls on background threads. Each returns data already
//! passed through the redactor; none panics or fails on a malformed, half-written, huge or
//! vanished file: the problem becomes part of the result.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::cycle::files::{self, Event, StateFileError};
use crate::cycle::{Ctx, list};
use crate::domain::diff::DiffSize;
use crate::domain::event::EventKind;
use crate::domain::integrity::Integrity;
use crate::domain::state::CycleState;
use crate::redact::Redactor;

use super::model::{CycleEntry, EventLine, ProjectRecord, RunFile, SourceItem, Sources};

/// Journals larger than this are not read whole for the Conversation tab.
pub const MAX_JOURNAL_BYTES: u64 = 64 * 1024 * 1024;
/// Registry records and source manifests larger than this are flagged, not read.
pub const MAX_RECORD_BYTES: u64 = 1024 * 1024;
/// How much of a journal's end is read to find its last event.
const TAIL_PROBE: u64 = 256 * 1024;

/// Every state path the control room should show (cycles dir, extra dirs, task-space index).
pub fn discover(ctx: &Ctx, extra_dirs: &[PathBuf]) -> Vec<PathBuf> {
    list::state_paths(ctx, extra_dirs)
}

/// Loads one state file and its journal's last event. `None` when the file is gone.
pub fn load_entry(redactor: &Redactor, path: &Path) -> Option<CycleEntry> {
    let mut entry = CycleEntry {
        path: path.to_path_buf(),
        state: None,
        view: None,
        error: None,
        last_event: None,
        modified_at: crate::cycle::list::modified_at(path),
        live: None,
        diff_size: None,
    };
    match files::read_state_bytes(path) {
        Err(StateFileError::Missing(_)) => return None,
        Err(err) => entry.error = Some(redactor.redact(&err.to_string()).into_owned()),
        Ok(bytes) => match parse_state(redactor, &bytes) {
            Ok(state) => {
                entry.view = Some(crate::cycle::list::CycleView::of(&state));
                entry.state = Some(state);
            }
            Err(err) => entry.error = Some(redactor.redact(&err).into_owned()),
        },
    }
    if let Ok(paths) = crate::cycle::files::CyclePaths::new(path.to_path_buf()) {
        entry.last_event = last_event(&paths.journal()).map(|e| event_line(redactor, &e));
        entry.live = entry.state.as_ref().and_then(|state| crate::cycle::live::probe(&paths, state)).map(|mut run| {
            run.command = run.command.map(|c| redactor.redact(&c).into_owned());
            run
        });
        entry.diff_size = entry.state.as_ref().and_then(|state| ready_diff_size(&paths, state));
    }
    Some(entry)
}

/// The size of a `READY_TO_MERGE` (or `NEEDS_REVIEW`) cycle's change, from the meta beside
/// its whole-PR diff at the last tested head, when that diff was made (a small JSON file; the
/// diff is not read).
fn ready_diff_size(paths: &crate::cycle::files::CyclePaths, state: &CycleState) -> Option<DiffSize> {
    use crate::domain::status::Status;
    if !matches!(state.status, Status::ReadyToMerge | Status::NeedsReview) {
        return None;
    }
    let run = state.history.last()?;
    crate::cycle::diff::cached_meta(&crate::cycle::diff::whole_pr_cache(paths, &run.head_sha, run.base_sha.as_deref()))
        .map(|m| m.size)
}

/// Parses and redacts a state document (a hand-written file may hold what the tool never would).
fn parse_state(redactor: &Redactor, bytes: &[u8]) -> Result<CycleState, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the state file is not valid UTF-8".to_owned())?;
    if text.trim().is_empty() {
        return Err("the state file is empty (being written, or truncated)".into());
    }
    let mut value: Value = serde_json::from_str(text).map_err(|e| format!("the state file is not valid JSON: {e}"))?;
    redactor.redact_json(&mut value);
    CycleState::from_value(value).map_err(|e| e.to_string())
}

/// The `integrity` of a run's report file (design §5.2), redacted: `None` for a report made
/// before forgeloop checked it.
pub fn load_integrity(redactor: &Redactor, path: &Path) -> Result<Option<Box<Integrity>>, String> {
    let shown = || redactor.redact(&path.display().to_string()).into_owned();
    match fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_RECORD_BYTES * 8 => {
            return Err(format!("the run's report {} is too large to read here", shown()));
        }
        Ok(_) => {}
        // A run recorded without its report (kept elsewhere, or collected): nothing to show.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(redactor.redact(&format!("cannot read the run's report {}: {e}", shown())).into_owned()),
    }
    let bytes = fs::read(path).map_err(|e| redactor.redact(&format!("cannot read {}: {e}", shown())).into_owned())?;
    let unreadable = |what: &str, e: serde_json::Error| {
        redactor.redact(&format!("the run's report {} {what}: {e}", shown())).into_owned()
    };
    let mut value: Value = serde_json::from_slice(&bytes).map_err(|e| unreadable("is not valid JSON", e))?;
    let Some(mut integrity) = value.get_mut("integrity").map(Value::take).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    redactor.redact_json(&mut integrity);
    serde_json::from_value(integrity).map_err(|e| unreadable("has an unreadable integrity", e))
}

/// The last complete event of a journal, reading only its end.
pub fn last_event(path: &Path) -> Option<Event> {
    let mut file = File::open(path).ok()?;
    let len = file.seek(SeekFrom::End(0)).ok()?;
    let start = len.saturating_sub(TAIL_PROBE);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL_PROBE).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut recent =
        text.split('\n').rev().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str::<Event>(l).ok());
    let last = recent.next()?;
    // A transition journals its own event, then `status_changed`: the former says more.
    let status_changed = |e: &Event| e.event_kind() == Some(EventKind::StatusChanged);
    if status_changed(&last)
        && let Some(before) = recent.next().filter(|e| e.at == last.at && !status_changed(e))
    {
        return Some(before);
    }
    Some(last)
}

/// Reads a whole journal for the Conversation tab, redacted.
pub fn load_journal(redactor: &Redactor, path: &Path) -> Result<Vec<Event>, String> {
    match fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_JOURNAL_BYTES => {
            return Err(format!(
                "the journal is larger than {} MiB; read it with `forgeloop log`",
                MAX_JOURNAL_BYTES >> 20
            ));
        }
        _ => {}
    }
    let contents = files::read_journal(path).map_err(|e| redactor.redact(&e.to_string()).into_owned())?;
    let mut events = contents.events;
    for event in &mut events {
        redactor.redact_json(&mut event.data);
    }
    Ok(events)
}

fn text_field<'a>(data: &'a Value, key: &str) -> Option<&'a str> {
    data.get(key).and_then(Value::as_str)
}

/// A one-line description of an event, for the list and the timeline. A kind this version
/// does not know (a newer forgeloop's) is shown as its name.
pub fn summarize(kind: &str, data: &Value) -> String {
    use EventKind as K;
    let s = |key| text_field(data, key).unwrap_or("?");
    match EventKind::parse(kind) {
        Some(K::Created) => format!("created: {}", s("request")),
        Some(K::BriefConfirmed) => format!("brief confirmed via {}", s("via")),
        Some(K::PromptIssued) => format!("{} issued", text_field(data, "kind").unwrap_or("prompt")),
        Some(K::FollowupIssued) => "follow-up issued (asks for PR_URL)".into(),
        Some(K::MessageSent) => format!("{} sent", text_field(data, "kind").unwrap_or("message")),
        Some(K::ReplyRecorded) => match text_field(data, "pr") {
            Some(pr) => format!("reply {} {pr}", s("class")),
            None => format!("reply {}", s("class")),
        },
        Some(K::StatusChanged) => format!("{} → {}", s("from"), s("to")),
        Some(K::Blocked) => format!("blocked: {}", s("reason")),
        Some(K::Unblocked) => format!("unblocked (was {})", s("from")),
        Some(K::CapExtended) => {
            format!("cap {} → {}", data.get("from").unwrap_or(&Value::Null), data.get("to").unwrap_or(&Value::Null))
        }
        Some(K::Aborted) => format!("aborted: {}", s("reason")),
        Some(K::Superseded) => format!("continued in {}", s("successor")),
        Some(K::RunStarted) => match text_field(data, "head_sha") {
            Some(sha) => format!("run started at {}", &sha[..sha.len().min(12)]),
            None => "run started".into(),
        },
        Some(K::RunFinished) => match text_field(data, "tests") {
            Some(flag) => format!("run finished: {} ({})", s("status"), flag.replace('_', " ")),
            None => format!("run finished: {}", s("status")),
        },
        Some(K::Approved) => "person approved the pass (protected paths changed)".into(),
        Some(K::CommentPublished) => "comment published".into(),
        Some(K::Attached) => "attached to a Project".into(),
        Some(K::RunNeedsNetwork) => match data.get("allow").and_then(Value::as_array).filter(|a| !a.is_empty()) {
            Some(hosts) => format!(
                "run needs network: refused {}",
                hosts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
            ),
            None => "run needs network (it had none)".into(),
        },
        Some(K::NetworkAllowed) => format!(
            "person allowed {} for {}",
            data.get("allow")
                .and_then(Value::as_array)
                .map_or(String::new(), |a| { a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ") }),
            s("repository")
        ),
        Some(K::PrUnchanged) => {
            let sha = s("head_sha");
            format!("PR unchanged: head {} already tested, nothing run", &sha[..sha.len().min(12)])
        }
        Some(K::MessageWritten) => match text_field(data, "before") {
            Some(kind) => format!("message for WebGPT, put before the pending {kind}"),
            None => "message for WebGPT".into(),
        },
        Some(K::MessageWithdrawn) => format!(
            "{} withdrawn unsent: {}",
            text_field(data, "kind").unwrap_or("message"),
            text_field(data, "why").unwrap_or("it was moot")
        ),
        Some(K::CommandsChanged) => {
            let short = |key| {
                let sha = text_field(data, key).unwrap_or("none");
                sha[..sha.len().min(12)].to_owned()
            };
            let widened = data.get("widened").and_then(Value::as_array).filter(|w| !w.is_empty());
            match widened {
                Some(w) => format!(
                    "commands changed {} → {}, widening: {}",
                    short("before_sha256"),
                    short("after_sha256"),
                    w.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
                ),
                None => format!("commands changed {} → {}", short("before_sha256"), short("after_sha256")),
            }
        }
        // An infrastructure failure (GitHub, the fetch, the PR moved): the tests never ran, so
        // it must not read as "the tests failed".
        Some(K::RunFailed) => match (data.get("infra_failures").and_then(Value::as_u64), text_field(data, "error")) {
            (Some(n), Some(error)) => format!("could not run ({n} in a row): {error}"),
            (None, Some(error)) => format!("could not run: {error}"),
            (_, None) => "could not run".into(),
        },
        Some(K::ReviewStarted) => {
            let target = data.get("target");
            let field = |k| target.and_then(|t| t.get(k)).and_then(Value::as_str).unwrap_or("?");
            let head = field("head");
            format!("review started: {} at {}", field("repository"), &head[..head.len().min(12)])
        }
        Some(K::AttestationRecorded) => {
            let seen = data.get("seen");
            let attached = seen.and_then(|s| s.get("connector_attached")).and_then(Value::as_bool).unwrap_or(false);
            let model = seen.and_then(|s| s.get("model")).and_then(Value::as_str).unwrap_or("?");
            if attached {
                format!("attestation: {model}, connector attached; challenge issued")
            } else {
                format!("attestation: {model}, no connector")
            }
        }
        Some(K::AttestationJudged) => {
            let verdict = data.get("verdict");
            match verdict.and_then(|v| v.get("verdict")).and_then(Value::as_str) {
                Some("valid") => "challenge passed: route CONNECTOR".into(),
                _ => format!(
                    "challenge failed: {}",
                    verdict.and_then(|v| v.get("why")).and_then(Value::as_str).unwrap_or("?")
                ),
            }
        }
        Some(K::PacketPrepared) => format!(
            "packet made: {} files, {} bytes, {} risks",
            data.get("files").unwrap_or(&Value::Null),
            data.get("bytes").unwrap_or(&Value::Null),
            data.get("risks").unwrap_or(&Value::Null)
        ),
        Some(K::PacketApproved) => format!("person approved the packet ({})", s("via")),
        Some(K::ReviewRequested) => format!("review request issued ({})", s("route")),
        Some(K::FindingsRecorded) => format!(
            "reply: {} finding(s), {} unparsed",
            data.get("added").unwrap_or(&Value::Null),
            data.get("unparsed").unwrap_or(&Value::Null)
        ),
        Some(K::FindingTriaged) => {
            format!("finding {} triaged {}", data.get("finding").unwrap_or(&Value::Null), s("decision"))
        }
        Some(K::FindingFixed) => format!("finding {} fixed", data.get("finding").unwrap_or(&Value::Null)),
        Some(K::HandoffIssued | K::OutboxAdopted | K::RunCancelled | K::CommentFailed) | None => kind.replace('_', " "),
    }
}

fn event_line(redactor: &Redactor, event: &Event) -> EventLine {
    let mut data = event.data.clone();
    redactor.redact_json(&mut data);
    let summary: String = summarize(&event.kind, &data).chars().take(200).collect();
    EventLine { at: event.at.clone(), kind: event.kind.clone(), actor: event.actor, summary }
}

/// Every `<registry>/<owner>/<repo>.json`, read by the registry (`cycle::projects`), redacted.
pub fn load_registry(redactor: &Redactor, dir: &Path) -> Vec<ProjectRecord> {
    let shown = |text: &str| redactor.redact(text).into_owned();
    let listed = match crate::cycle::projects::records(dir) {
        Ok(listed) => listed,
        Err(err) => {
            return vec![ProjectRecord {
                path: dir.to_path_buf(),
                key: "(registry)".into(),
                repository: None,
                project_url: None,
                project_name: None,
                error: Some(shown(&err)),
            }];
        }
    };
    listed
        .into_iter()
        .map(|row| {
            let (record, error) = match row.outcome {
                Ok(record) => (Some(record), None),
                Err(err) => (None, Some(shown(&err))),
            };
            ProjectRecord {
                path: row.path,
                key: row.repository,
                repository: record.as_ref().map(|r| shown(&r.repository)),
                project_url: record.as_ref().map(|r| shown(&r.project_url)),
                project_name: record.as_ref().map(|r| shown(&r.project_name)),
                error,
            }
        })
        .collect()
}

/// The project id (`g-p-…`) of a Project or conversation URL.
pub fn project_id(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("https://chatgpt.com/g/")?;
    let id = rest.split('/').next()?;
    id.starts_with("g-p-").then_some(id)
}

/// `<registry>/<owner>/<repo>/sources.json`, read by the registry (`cycle::projects`), redacted.
pub fn load_sources(redactor: &Redactor, registry: &Path, repository: &str) -> Sources {
    let shown = |text: &str| redactor.redact(text).into_owned();
    match crate::cycle::projects::sources(registry, repository) {
        crate::cycle::projects::Manifest::Missing => Sources::Missing,
        crate::cycle::projects::Manifest::Invalid(err) => Sources::Invalid(shown(&err)),
        crate::cycle::projects::Manifest::Items(items) => Sources::Items(
            items
                .iter()
                .map(|item| SourceItem {
                    what: shown(item.path.as_deref().or(item.url.as_deref()).unwrap_or("")),
                    purpose: shown(&item.purpose),
                    status: item.status.as_str().to_owned(),
                    label: shown(item.observed_label.as_deref().unwrap_or(&item.id)),
                    verified: item.last_verified.clone().unwrap_or_default(),
                })
                .collect(),
        ),
    }
}

/// The files of a cycle's `runs/` directory, newest first by name order of iteration.
pub fn list_runs(dir: &Path) -> Vec<RunFile> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let now = SystemTime::now();
    let mut runs: Vec<RunFile> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // A run's side logs (`.layered.log`, `.base.log`, `.tripwire.log`: issue 57) are
            // not runs of their own.
            let side = name.trim_end_matches(".log").contains('.');
            if !name.ends_with(".log") || name.starts_with('.') || side {
                return None;
            }
            let meta = e.metadata().ok()?;
            let idle_secs = meta.modified().ok().and_then(|m| now.duration_since(m).ok()).map(|d| d.as_secs());
            Some(RunFile { path: e.path(), name, len: meta.len(), idle_secs })
        })
        .collect();
    runs.sort_by(|a, b| run_order(&a.name).cmp(&run_order(&b.name)).then_with(|| a.name.cmp(&b.name)));
    runs
}

/// `<iteration>-<sha12>[-<n>].log` sorts by iteration number, then by run (`n`, the first
/// run of an iteration and head having none).
fn run_order(name: &str) -> (u64, u64) {
    let stem = name.trim_end_matches(".log");
    let mut parts = stem.split('-');
    let iteration = parts.next().and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
    let run = parts.nth(1).and_then(|n| n.parse().ok()).unwrap_or(1);
    (iteration, run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_runs_of_one_iteration_and_head_sort_after_the_first() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "2-abcdef012345.log",
            "1-abcdef012345-3.log",
            "1-abcdef012345.log",
            "1-abcdef012345-2.log",
            "10-0123.log",
            "2-abcdef012345.layered.log",
            "2-abcdef012345.tripwire.log",
            "2-abcdef012345.base.log",
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let names: Vec<String> = list_runs(dir.path()).into_iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            ["1-abcdef012345.log", "1-abcdef012345-2.log", "1-abcdef012345-3.log", "2-abcdef012345.log", "10-0123.log"]
        );
    }

    #[test]
    fn a_runs_integrity_is_read_from_its_report_and_its_absence_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let redactor = Redactor::default();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            fs::write(&path, text).unwrap();
            path
        };
        assert_eq!(load_integrity(&redactor, &dir.path().join("gone.json")), Ok(None));
        assert_eq!(load_integrity(&redactor, &write("old.json", r#"{"status": "TEST_PASSED"}"#)), Ok(None));
        let with = write(
            "new.json",
            r#"{"status": "TEST_PASSED", "integrity": {"flag": "tests_changed", "against_base": [], "protected": ["test.sh"]}}"#,
        );
        let integrity = load_integrity(&redactor, &with).unwrap().unwrap();
        assert_eq!(
            (integrity.flag, integrity.protected),
            (Some(crate::domain::integrity::Flag::TestsChanged), vec!["test.sh".to_owned()])
        );
        assert!(
            load_integrity(&redactor, &write("torn.json", r#"{"integrity": {"#))
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}
