//! `forgeloop project …`: the ChatGPT Project registry (design §5.1, design §12.5). Same
//! subcommands, flags and JSON as the reference `project_context.py`, plus `unbind`, `list`
//! and `sources`. `--registry DIR` is the global option and may follow the subcommand.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Map, Value, json};

use crate::cycle::Ctx;
use crate::cycle::projects::sources::{self, NewSource, Observation, Origin, SourceStatus};
use crate::cycle::projects::{self, Record, Registry, RegistryError, RepoKey, linked};
use crate::domain::word::Word;
use crate::error::{Error, Result};

use crate::output;

// A doc comment on a clap field or value is its help text: those shown without one are
// `pub(crate)` rather than documented, so `--help` says what it always said.

/// `forgeloop project`'s options: just the subcommand.
#[derive(Debug, Args)]
pub struct ProjectArgs {
    /// The registry operation to run.
    #[command(subcommand)]
    pub command: ProjectCommand,
}

/// The `project` subcommands; each variant's doc comment is its `--help` line.
#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// The ChatGPT Project linked to a repository (PROJECT_LINKED), or what to do (PROJECT_NOT_LINKED)
    Lookup(RepositoryArgs),
    /// Record the browser-observed Project of a repository; never overwrites another Project
    Bind(BindArgs),
    /// Remove a repository's link; needs the currently bound Project URL
    Unbind(UnbindArgs),
    /// Merge the repository's Project (and conversation) into an existing task state
    Attach(AttachArgs),
    /// Every record in the registry, invalid ones with their error
    List,
    /// The repository's Project source manifest (<owner>/<repo>/sources.json)
    Sources(SourcesArgs),
}

/// The subcommands that name only a repository (`lookup`, `sources list`).
#[derive(Debug, Args)]
pub struct RepositoryArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
}

/// `project bind`: link a repository to the Project the browser showed.
#[derive(Debug, Args)]
pub struct BindArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
    /// Project home URL as seen in the browser: https://chatgpt.com/g/g-p-<id>/project
    #[arg(long, value_name = "URL")]
    pub project_url: String,
    /// Project name as shown in the browser
    #[arg(long, value_name = "NAME")]
    pub project_name: String,
}

/// `project unbind`: remove a repository's link.
#[derive(Debug, Args)]
pub struct UnbindArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
    /// The currently bound Project URL (compared by Project ID), so nothing is unbound by accident
    #[arg(long, value_name = "URL")]
    pub project_url: String,
}

/// `project attach`: put a repository's Project into a task state.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
    /// Task state: a forgeloop cycle or any JSON task record (path, or bare cycle name)
    #[arg(long, value_name = "STATE")]
    pub state: String,
    /// The task's conversation: https://chatgpt.com/g/g-p-<id>/c/<id> (or /c/<id>)
    #[arg(long, value_name = "URL")]
    pub conversation_url: Option<String>,
}

/// `project sources`'s options: just the subcommand.
#[derive(Debug, Args)]
pub struct SourcesArgs {
    /// The manifest operation to run.
    #[command(subcommand)]
    pub command: SourcesCommand,
}

/// The `project sources` subcommands.
#[derive(Debug, Subcommand)]
pub enum SourcesCommand {
    /// Record a source to upload (status pending); local files get their sha256
    Add(SourceAddArgs),
    /// Every item of the manifest
    List(RepositoryArgs),
    /// Record what the Project's Sources list showed: verified or failed
    Verify(SourceVerifyArgs),
    /// Mark an item superseded (items are never deleted)
    Supersede(SourceSupersedeArgs),
}

/// `project sources add`: record a source to upload.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("origin").required(true).args(["path", "url"])))]
pub struct SourceAddArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
    /// A local file (its sha256 is computed and recorded)
    #[arg(long, value_name = "FILE")]
    pub path: Option<PathBuf>,
    /// A web reference
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Why WebGPT needs it
    #[arg(long, value_name = "TEXT")]
    pub purpose: String,
    /// The label or ID the Project's Sources list shows for it
    #[arg(long, value_name = "LABEL")]
    pub observed_label: Option<String>,
    /// The source's version (tag, date, revision), recorded beside the sha256
    #[arg(long, value_name = "TEXT")]
    pub revision: Option<String>,
    /// Web references: the relevant excerpt
    #[arg(long, value_name = "TEXT", requires = "url")]
    pub excerpt: Option<String>,
    /// Web references: when it was retrieved [default: now]
    #[arg(long, value_name = "DATE", requires = "url")]
    pub retrieved_at: Option<String>,
}

/// What the Project's Sources list showed for an item (`--status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ObservedStatus {
    Verified,
    Failed,
}

/// `project sources verify`: record what the Sources list showed.
#[derive(Debug, Args)]
pub struct SourceVerifyArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
    /// The item id (s1, s2, …)
    #[arg(long, value_name = "ID")]
    pub id: String,
    #[arg(long, value_enum)]
    pub(crate) status: ObservedStatus,
    #[arg(long, value_name = "LABEL")]
    pub(crate) observed_label: Option<String>,
    /// What was seen (e.g. the quota or permission message of a failure)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}

/// `project sources supersede`: retire an item.
#[derive(Debug, Args)]
pub struct SourceSupersedeArgs {
    /// GitHub repository OWNER/REPO (stored lowercase)
    #[arg(long, value_name = "OWNER/REPO")]
    pub repository: String,
    #[arg(long, value_name = "ID")]
    pub(crate) id: String,
    /// The item that replaces it
    #[arg(long, value_name = "ID")]
    pub by: Option<String>,
}

fn fields(record: &Record) -> Map<String, Value> {
    let mut doc = linked(Word::ProjectLinked, record);
    doc.remove("status");
    doc
}

/// Runs one `forgeloop project …` subcommand, printing its JSON; returns the exit code.
pub fn run(ctx: &Ctx, args: ProjectArgs) -> Result<i32> {
    let registry = Registry::new(&ctx.registry);
    let r = &ctx.redactor;
    match args.command {
        ProjectCommand::Lookup(args) => Ok(output::json(r, &projects::lookup(ctx, &args.repository)?)),
        ProjectCommand::Bind(args) => {
            Ok(output::json(r, &projects::bind(ctx, &args.repository, &args.project_url, &args.project_name)?))
        }
        ProjectCommand::Unbind(args) => {
            // A record the reference tool accepted but forgeloop cannot use (a name GitHub never
            // allows, or contents that do not parse) goes with the exact URL stored in it.
            let unusable = match RepoKey::parse(&args.repository) {
                Err(key_error) => Some(registry.unusable_file(&args.repository).ok_or(RegistryError::Key(key_error))?),
                Ok(key) => match registry.lookup(&key) {
                    Err(RegistryError::Record { path, .. }) => Some(path),
                    _ => None,
                },
            };
            if let Some(path) = unusable {
                let url = registry.remove_unusable(&path, &args.project_url)?;
                let doc = json!({"status": Word::ProjectUnbound, "repository": args.repository, "project_url": url,
                    "next_action": format!("The unusable record {} is removed. Bind the right repository with: forgeloop project bind --repository <owner/repo> --project-url <Project home URL> --project-name <Project name>", path.display())});
                return Ok(output::json(r, &doc));
            }
            let key = RepoKey::parse(&args.repository).map_err(RegistryError::from)?;
            let removed = registry.unbind(&key, &args.project_url)?;
            let mut doc = linked(Word::ProjectUnbound, &removed);
            doc.insert(
                "next_action".into(),
                Value::from(format!(
                    "{key} is no longer linked. Bind the right Project with: forgeloop project bind --repository {key} --project-url <Project home URL> --project-name <Project name>"
                )),
            );
            Ok(output::json(r, &doc))
        }
        ProjectCommand::Attach(args) => Ok(output::json(
            r,
            &projects::attach(ctx, &args.repository, &args.state, args.conversation_url.as_deref())?,
        )),
        ProjectCommand::List => list(ctx, &registry),
        ProjectCommand::Sources(args) => run_sources(ctx, &registry, args.command),
    }
}

fn list(ctx: &Ctx, registry: &Registry) -> Result<i32> {
    let rows = registry.list()?;
    let mut by_project: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for row in &rows {
        if let Ok(record) = &row.outcome {
            by_project.entry(record.project_id()).or_default().push(row.repository.clone());
        }
    }
    let mut invalid = 0;
    let records: Vec<Value> = rows
        .iter()
        .map(|row| match &row.outcome {
            Ok(record) => {
                let mut doc = fields(record);
                let id = record.project_id();
                let shared: Vec<&String> =
                    by_project.get(&id).into_iter().flatten().filter(|r| **r != row.repository).collect();
                doc.insert("project_id".into(), Value::from(id.as_str()));
                if !shared.is_empty() {
                    doc.insert("shared_with".into(), json!(shared));
                }
                doc.insert("path".into(), Value::from(row.path.display().to_string()));
                Value::Object(doc)
            }
            Err(error) => {
                invalid += 1;
                json!({"repository": row.repository, "path": row.path.display().to_string(), "error": error})
            }
        })
        .collect();
    Ok(output::json(
        &ctx.redactor,
        &json!({
            "status": Word::Projects,
            "registry": registry.root().display().to_string(),
            "records": records,
            "invalid": invalid,
        }),
    ))
}

fn run_sources(ctx: &Ctx, registry: &Registry, command: SourcesCommand) -> Result<i32> {
    let r = &ctx.redactor;
    let parse = |text: &str| RepoKey::parse(text).map_err(RegistryError::from);
    match command {
        SourcesCommand::Add(args) => {
            let key = parse(&args.repository)?;
            let origin = match (args.path, args.url) {
                (Some(path), _) => Origin::Path(path),
                (None, Some(url)) => Origin::Url(url),
                // clap's required group makes this impossible; an error, never a panic.
                (None, None) => return Err(Error::Invalid("sources add needs --path FILE or --url URL".into())),
            };
            let item = sources::add(
                registry,
                &key,
                NewSource {
                    origin,
                    purpose: args.purpose,
                    observed_label: args.observed_label,
                    version: args.revision,
                    excerpt: args.excerpt,
                    retrieved_at: args.retrieved_at,
                },
                &ctx.now(),
                r,
            )?;
            Ok(output::json(r, &json!({"status": Word::SourceAdded, "repository": key.to_string(), "item": item})))
        }
        SourcesCommand::List(args) => {
            let key = parse(&args.repository)?;
            let manifest = sources::list(registry, &key)?;
            Ok(output::json(
                r,
                &json!({"status": Word::Sources, "repository": key.to_string(), "items": manifest.items}),
            ))
        }
        SourcesCommand::Verify(args) => {
            let key = parse(&args.repository)?;
            let status = match args.status {
                ObservedStatus::Verified => SourceStatus::Verified,
                ObservedStatus::Failed => SourceStatus::Failed,
            };
            let seen = Observation {
                id: &args.id,
                status,
                observed_label: args.observed_label.as_deref(),
                note: args.note.as_deref(),
            };
            let verified = sources::verify(registry, &key, seen, &ctx.now(), r)?;
            let word = if status == SourceStatus::Verified { Word::SourceVerified } else { Word::SourceFailed };
            let mut doc = Map::new();
            doc.insert("status".into(), Value::from(word.as_str()));
            doc.insert("repository".into(), Value::from(key.to_string()));
            doc.insert("item".into(), serde_json::to_value(&verified.item).unwrap_or(Value::Null));
            if let Some(changed) = verified.changed {
                doc.insert("changed_since_added".into(), Value::from(changed));
                doc.insert("current_sha256".into(), json!(verified.current_sha256));
                if changed {
                    doc.insert(
                        "warning".into(),
                        Value::from(format!(
                            "the file changed since it was added, so the uploaded copy may be stale: supersede {} and add the file again",
                            verified.item.id
                        )),
                    );
                }
            }
            if let Some(error) = verified.file_error {
                doc.insert("file_error".into(), Value::from(error));
            }
            Ok(output::json(r, &doc))
        }
        SourcesCommand::Supersede(args) => {
            let key = parse(&args.repository)?;
            let item = sources::supersede(registry, &key, &args.id, args.by.as_deref(), &ctx.now())?;
            Ok(output::json(r, &json!({"status": Word::SourceSuperseded, "repository": key.to_string(), "item": item})))
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, Command};

    use super::*;
    use crate::cycle::projects::not_linked_advice;

    #[test]
    fn the_subcommands_pass_clap_debug_asserts_under_a_versioned_parent() {
        let cmd = ProjectArgs::augment_args(Command::new("project").version("1").propagate_version(true));
        cmd.debug_assert();
    }

    #[test]
    fn the_not_linked_advice_names_the_search_and_the_bind_command() {
        let advice = not_linked_advice(&RepoKey::parse("Acme/Widget").unwrap());
        for needle in ["existing ChatGPT Projects", "descriptive names", "acme/widget", "forgeloop project bind"] {
            assert!(advice.contains(needle), "{needle}");
        }
    }
}
