//! The Project registry as the front ends show it (the control room's Projects tab and a
//! cycle's sources): read only through `registry`, the one reader of its files, so the
//! control room validates a record and a manifest exactly as `forgeloop project` does.

use std::path::Path;

use crate::registry::sources::{MANIFEST_NAME, SourceItem};

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
