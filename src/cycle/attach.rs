//! `project attach` (design §12.8), a use case: merge a repository's Project mapping, and optionally
//! the task's conversation, into an existing JSON task state.
//!
//! The state may be a forgeloop cycle or any task JSON record; every key attach does not
//! set is preserved. The whole read-check-write holds the cycle lock (design §3 rule 6), so
//! attach can never clobber a concurrent `forge` run, and every refusal happens before the
//! write, so a refused attach leaves the state byte-for-byte unchanged.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::Ctx;
use crate::domain::event_data::EventData;
use crate::domain::pr_ref::parse_pr_ref;
use crate::domain::state::{Actor, CycleState};
use crate::store::atomic::write_atomic;
use crate::store::journal::{self, NewEvent};
use crate::store::layout::CyclePaths;
use crate::store::lock::FileLock;
use crate::store::state_file::{self, StateFileError};

use crate::registry::{ConversationUrl, ProjectUrl, Record, Registry, RegistryError, RepoKey};

/// What `project attach` was asked to do.
pub struct AttachRequest<'a> {
    /// The repository, `OWNER/REPO`.
    pub repository: &'a str,
    /// A state path, or a bare cycle name (as everywhere in forgeloop).
    pub state: &'a str,
    /// The task's conversation URL, if one is to be recorded.
    pub conversation_url: Option<&'a str>,
}

/// What `project attach` did.
#[derive(Debug, Clone)]
pub struct Attached {
    /// The repository's registry record that was merged into the state.
    pub record: Record,
    /// The state file.
    pub state: PathBuf,
    /// The conversation now recorded in the state, if any.
    pub conversation_url: Option<String>,
    /// Whether the state file was rewritten (false when it already held all of this).
    pub changed: bool,
    /// Whether an `attached` event went into the cycle's journal.
    pub journaled: bool,
    /// A caution for the coordinator: the conversation URL has no Project segment to check.
    pub warning: Option<String>,
}

/// Python truthiness, which decides in the reference tool whether a state key "is set".
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A set, non-null routing key must be a non-empty string (design §12.8 step 2).
fn routing_str<'m>(map: &'m Map<String, Value>, key: &str) -> Result<Option<&'m str>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
        Some(_) => Err(format!("invalid task {key}: it must be a non-empty string when set")),
    }
}

/// Merges the repository's Project (and the conversation, if given) into the task state,
/// under the cycle lock; a refusal leaves the state unchanged.
pub fn attach(ctx: &Ctx, req: &AttachRequest) -> Result<Attached, RegistryError> {
    let key = RepoKey::parse(req.repository)?;
    let paths = CyclePaths::new(ctx.home.resolve_state(req.state)?)?;
    if !paths.state.exists() {
        return Err(RegistryError::StateMissing(paths.state.clone()));
    }
    let _lock = FileLock::try_acquire(&paths.lock())?;
    let bytes = state_file::read_bytes(&paths.state).map_err(|err| match err {
        StateFileError::Missing(path) => RegistryError::StateMissing(path),
        other => RegistryError::StateRead { path: paths.state.clone(), reason: other.to_string() },
    })?;
    let refuse = |reason: String| RegistryError::Task { path: paths.state.clone(), reason };
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| RegistryError::StateRead { path: paths.state.clone(), reason: format!("not valid JSON: {e}") })?;
    let Value::Object(original) = value else {
        return Err(refuse("task state must be a JSON object".into()));
    };

    // Binding enforcement comes first: a task bound to another repository is never touched,
    // whatever else is wrong with it or whether that repository is linked at all.
    if let Some(bound) = routing_str(&original, "repository").map_err(&refuse)? {
        let bound_key = RepoKey::parse(bound).map_err(|e| refuse(format!("invalid task repository: {e}")))?;
        if bound_key != key {
            return Err(refuse(format!(
                "task belongs to a different repository: it is bound to {bound_key}, not {key}"
            )));
        }
    }
    let state_project = routing_str(&original, "project_url").map_err(&refuse)?;
    let state_conversation = routing_str(&original, "conversation_url").map_err(&refuse)?;

    let record = Registry::new(&ctx.registry).require(&key, "task state can be attached")?;
    let project = record.url()?;

    if let Some(pr_ref) = original.get("pr_ref").filter(|v| truthy(v)) {
        let Value::String(text) = pr_ref else {
            return Err(refuse("invalid task pr_ref: it must be a pull request reference string".into()));
        };
        let pr = parse_pr_ref(text, &ctx.hosts).map_err(|e| refuse(format!("invalid task pr_ref: {e}")))?;
        if pr.repo.key() != key.to_string() {
            return Err(refuse(format!(
                "task PR belongs to a different repository: {} is not in {key}",
                pr.shorthand()
            )));
        }
    }
    if let Some(url) = state_project {
        let state_url = ProjectUrl::parse(url).map_err(|e| refuse(format!("invalid task project_url: {e}")))?;
        if state_url.id() != project.id() {
            return Err(refuse(format!(
                "task belongs to a different project: it records {}, but {key} is linked to {}",
                state_url.id(),
                project.id()
            )));
        }
    }

    let conversation = conversation(req.conversation_url, state_conversation, &project).map_err(&refuse)?;
    let warning = conversation.as_ref().filter(|c| c.project_id().is_none()).map(|c| {
        format!(
            "the conversation {c} has no Project segment: confirm in the browser that it belongs to the Project {:?} before relying on it",
            record.project_name
        )
    });

    let is_cycle = paths.journal().exists() || CycleState::from_value(Value::Object(original.clone())).is_ok();
    let mut merged = original.clone();
    merged.insert("repository".into(), Value::from(key.to_string()));
    merged.insert("project_url".into(), Value::from(record.project_url.as_str()));
    merged.insert("project_name".into(), Value::from(ctx.redactor.redact(&record.project_name).into_owned()));
    if let Some(c) = &conversation
        && state_conversation.is_none()
    {
        merged.insert("conversation_url".into(), Value::from(c.as_str()));
    }
    let recorded_conversation = merged.get("conversation_url").and_then(Value::as_str).map(str::to_owned);
    let changed = merged != original;
    let now = ctx.now();
    if changed && is_cycle {
        merged.insert("updated_at".into(), Value::from(now.as_str()));
        // A cycle's next step may change with the binding (where to type, what to attach).
        if let Ok(mut cycle) = CycleState::from_value(Value::Object(merged.clone())) {
            super::session::refresh_next_action(ctx, &paths, &mut cycle);
            merged.insert("next_action".into(), Value::from(cycle.next_action));
        }
    }

    let mut journaled = false;
    if changed {
        let mut text = serde_json::to_string_pretty(&Value::Object(merged)).unwrap_or_default();
        text.push('\n');
        write_atomic(&paths.state, text.as_bytes())
            .map_err(|source| RegistryError::StateWrite { path: paths.state.clone(), source })?;
        if is_cycle {
            let mut event = NewEvent::of(
                Actor::Agent,
                EventData::Attached {
                    repository: key.to_string(),
                    project_url: Some(record.project_url.clone()),
                    project_name: Some(record.project_name.clone()),
                    conversation_url: recorded_conversation.clone(),
                },
            );
            ctx.redactor.redact_json(&mut event.data);
            journal::append(&paths.journal(), &[event], &now)?;
            journaled = true;
        }
    }
    Ok(Attached {
        record,
        state: paths.state.clone(),
        conversation_url: recorded_conversation,
        changed,
        journaled,
        warning,
    })
}

/// The conversation to record (design §12.8 step 6): from the flag, else the state; valid;
/// inside the mapped Project when it names one; and the same conversation the state
/// already records, if any (a trailing slash does not make it another one).
fn conversation(
    flag: Option<&str>,
    in_state: Option<&str>,
    project: &ProjectUrl,
) -> Result<Option<ConversationUrl>, String> {
    let Some(text) = flag.or(in_state) else { return Ok(None) };
    let url = ConversationUrl::parse(text).map_err(|e| e.to_string())?;
    if let Some(id) = url.project_id()
        && id != project.id()
    {
        return Err(format!("conversation belongs to a different project: {id} is not {}", project.id()));
    }
    if let Some(existing) = in_state {
        let trim = |s: &str| s.strip_suffix('/').unwrap_or(s).to_owned();
        if trim(existing) != url.normalized() {
            return Err(format!(
                "the task already has the conversation {existing}; a different conversation needs a new task state (`forge --request … --continue-from`)"
            ));
        }
    }
    Ok(Some(url))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn truthiness_follows_python() {
        for (value, expected) in [
            (json!(null), false),
            (json!(false), false),
            (json!(0), false),
            (json!(0.0), false),
            (json!(""), false),
            (json!([]), false),
            (json!({}), false),
            (json!(true), true),
            (json!(4), true),
            (json!("a"), true),
            (json!([0]), true),
        ] {
            assert_eq!(truthy(&value), expected, "{value}");
        }
    }

    #[test]
    fn conversation_rules() {
        let project = ProjectUrl::parse("https://chatgpt.com/g/g-p-example/project").unwrap();
        let c1 = "https://chatgpt.com/g/g-p-example/c/task-1";
        assert_eq!(conversation(None, None, &project).unwrap(), None);
        assert_eq!(conversation(Some(c1), None, &project).unwrap().unwrap().as_str(), c1);
        assert!(conversation(Some(c1), Some("https://chatgpt.com/g/g-p-example/c/task-1/"), &project).is_ok());
        let other = conversation(Some("https://chatgpt.com/g/g-p-example/c/task-2"), Some(c1), &project).unwrap_err();
        assert!(other.contains("already has the conversation"), "{other}");
        let foreign = conversation(Some("https://chatgpt.com/g/g-p-other/c/task-2"), None, &project).unwrap_err();
        assert!(foreign.contains("different project"), "{foreign}");
        assert!(conversation(None, Some("https://chatgpt.com/c/plain"), &project).unwrap().is_some());
        assert!(conversation(None, Some("not a url"), &project).is_err());
    }
}
