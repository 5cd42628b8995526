//! The Project registry as the front ends show it (the control room's Projects tab and a
//! cycle's sources): read only through `registry`, the one reader of its files, so the
//! control room validates a record and a manifest exactly as `forgeloop project` does.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::domain::word::Word;
use crate::error::Result;
use crate::registry::sources::{MANIFEST_NAME, SourceItem};

use super::attach::{AttachRequest, attach as attach_state};
use super::context::Ctx;

/// The registry's vocabulary, for the front ends that manage it (`forgeloop project`, the MCP
/// server's repository policy).
pub use crate::registry::sources;
pub use crate::registry::{Listed, Record, Registry, RegistryError, RepoKey};

/// Every record of the registry at `dir`, sorted; an unreadable one carries its error. A
/// registry that cannot be read at all is one error.
pub fn records(dir: &Path) -> Result<Vec<Listed>, String> {
    Registry::new(dir).list().map_err(|e| e.to_string())
}

/// A repository's source manifest, as `forgeloop project sources list` reads it.
#[derive(Debug, Clone)]
pub enum Manifest {
    /// No `sources.json` yet.
    Missing,
    /// The manifest's items, in order.
    Items(Vec<SourceItem>),
    /// Not `owner/repo`, or a manifest the registry refuses (named why).
    Invalid(String),
}

/// The source manifest of `repository` in the registry at `dir`.
pub fn sources(dir: &Path, repository: &str) -> Manifest {
    let registry = Registry::new(dir);
    let key = match RepoKey::parse(repository) {
        Ok(key) => key,
        Err(err) => return Manifest::Invalid(format!("{repository:?} is not owner/repo: {err}")),
    };
    if !registry.repo_dir(&key).join(MANIFEST_NAME).exists() {
        return Manifest::Missing;
    }
    match sources::list(&registry, &key) {
        Ok(manifest) => Manifest::Items(manifest.items),
        Err(err) => Manifest::Invalid(err.to_string()),
    }
}

/// `project lookup` (the CLI and MCP's `project_lookup`): the repository's Project
/// (`PROJECT_LINKED`), or what to do to find or make one (`PROJECT_NOT_LINKED`).
pub fn lookup(ctx: &Ctx, repository: &str) -> Result<Map<String, Value>> {
    let registry = Registry::new(&ctx.registry);
    let key = parse_or_unusable(&registry, repository)?;
    Ok(match registry.lookup(&key)? {
        Some(record) => linked(Word::ProjectLinked, &record),
        None => {
            match json!({"status": Word::ProjectNotLinked, "repository": key.to_string(), "next_action": not_linked_advice(&key)})
            {
                Value::Object(map) => map,
                _ => Map::new(),
            }
        }
    })
}

/// `project bind` (and `project_bind`): records the Project the browser showed; never
/// overwrites another Project's binding (the registry refuses).
pub fn bind(ctx: &Ctx, repository: &str, project_url: &str, project_name: &str) -> Result<Map<String, Value>> {
    let registry = Registry::new(&ctx.registry);
    let key = RepoKey::parse(repository).map_err(RegistryError::from)?;
    let name = ctx.redactor.redact(project_name).into_owned();
    let bound = registry.bind(&key, project_url, &name)?;
    let mut doc = linked(Word::ProjectLinked, &bound.record);
    if let Some(note) = bound.note {
        doc.insert("note".into(), Value::from(note));
    }
    Ok(doc)
}

/// `project attach` (and `project_attach`): the repository's Project, and the conversation
/// when given, merged into the task state at `state`.
pub fn attach(ctx: &Ctx, repository: &str, state: &str, conversation_url: Option<&str>) -> Result<Map<String, Value>> {
    let attached = attach_state(ctx, &AttachRequest { repository, state, conversation_url })?;
    let mut doc = linked(Word::ProjectLinked, &attached.record);
    doc.insert("state".into(), Value::from(attached.state.display().to_string()));
    if let Some(conversation) = attached.conversation_url {
        doc.insert("conversation_url".into(), Value::from(conversation));
    }
    doc.insert("changed".into(), Value::from(attached.changed));
    if let Some(warning) = attached.warning {
        doc.insert("warning".into(), Value::from(warning));
    }
    Ok(doc)
}

/// What to do when a repository has no record (design §12.9), as `next_action`.
pub fn not_linked_advice(key: &RepoKey) -> String {
    format!(
        "No ChatGPT Project is recorded for {key} yet; that does not mean none exists. Search the account's existing ChatGPT Projects thoroughly first (descriptive names, references in Project instructions or sources, and Projects beyond the pinned sidebar all count) and reuse a Project the user names or an unambiguous match, keeping its name. Only if a complete search finds nothing, create a Project named {key}; if the search is ambiguous or the Project cannot be created or opened, stop with BLOCKED_PROJECT_UNAVAILABLE. Verify the account, workspace and Project identity in the browser, then record what you observed: forgeloop project bind --repository {key} --project-url <Project home URL> --project-name <Project name>"
    )
}

/// A record as the answers show it, with `status`.
pub fn linked(status: Word, record: &Record) -> Map<String, Value> {
    let mut doc = Map::new();
    doc.insert("status".into(), Value::from(status.as_str()));
    doc.insert("repository".into(), Value::from(record.repository.as_str()));
    doc.insert("project_url".into(), Value::from(record.project_url.as_str()));
    doc.insert("project_name".into(), Value::from(record.project_name.as_str()));
    doc
}

/// The key, or (for a name GitHub never allows that the registry nevertheless holds, from the
/// reference tool) an error that says what is wrong with the stored record and how to fix it.
pub fn parse_or_unusable(registry: &Registry, text: &str) -> std::result::Result<RepoKey, RegistryError> {
    RepoKey::parse(text).map_err(|key_error| match registry.unusable_file(text) {
        Some(path) => RegistryError::unusable(key_error, path),
        None => RegistryError::Key(key_error),
    })
}
