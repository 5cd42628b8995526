//! Warm caches per repository (design §5.6): what a repository's builds download and produce —
//! crates and a cargo target directory, pip's, npm's, Go's, Gradle's and Maven's caches, ccache —
//! kept between its runs under `<home>/caches/<owner>/<repo>/<slot>/`, so an iteration after a
//! one-line change is an incremental build, not a cold one. Never shared between repositories:
//! a PR can at worst poison its own repository's cache for its later runs (still inside the
//! sandbox), and a run without the cache (`"cache": false`, `forge --pr --fresh`) removes the
//! doubt. A slot is one run at a time (the run directory of the same slot holds its lock), so
//! two runs of one repository at once never share a target directory.
//!
//! The person's own `CARGO_HOME` stays read-only: the cache's writable cargo home starts with
//! links to what is already downloaded there ([`Cache::seed_cargo`]), and only new downloads
//! land in the cache.

mod usage;

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub use usage::{Trimmed, Usage, trim, usage};

use crate::domain::pr_ref::RepoName;
use crate::store::tree::{self, Leftover};

/// Touched by every run that uses a slot's cache: `gc` trims the least recently used first.
const LAST_USED: &str = "last-used";
/// Each ecosystem's cache variable and where it points in a slot.
const VARIABLES: &[(&str, &str)] = &[
    ("CARGO_TARGET_DIR", "cargo-target"),
    ("CARGO_HOME", "cargo-home"),
    ("PIP_CACHE_DIR", "pip"),
    ("UV_CACHE_DIR", "uv"),
    ("npm_config_cache", "npm"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("npm_config_store_dir", "pnpm-store"),
    ("GOMODCACHE", "go/mod"),
    ("GOCACHE", "go/build"),
    ("GRADLE_USER_HOME", "gradle"),
    ("XDG_CACHE_HOME", "xdg"),
    ("CCACHE_DIR", "ccache"),
    ("SCCACHE_DIR", "sccache"),
];
/// Maven's local repository (set through `MAVEN_OPTS`).
const MAVEN_REPOSITORY: &str = "m2/repository";
/// Runs of one repository at once, each with a slot (and so a cache) of its own.
const MAX_SLOTS: u32 = 16;

/// The cache of one repository's slot, claimed by a run: its lock is held until the run drops
/// it, so the slot's paths (its run directory's too) are the run's alone.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    slot: u32,
    _lock: std::fs::File,
}

impl Cache {
    /// The first free slot of `repo` below `root`: `<root>/<owner>/<repo>/<slot>` (lowercase,
    /// `0700` with its parents), locked through `<slot>.lock` beside it, marked used now.
    pub fn claim(root: &Path, repo: &RepoName) -> io::Result<Cache> {
        let repo_dir = root.join(repo.owner().to_ascii_lowercase()).join(repo.name().to_ascii_lowercase());
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&repo_dir)?;
        for slot in 0..MAX_SLOTS {
            let lock = crate::store::nofollow::open(
                std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600),
                &repo_dir.join(format!("{slot}.lock")),
            )?;
            if lock.try_lock().is_err() {
                continue;
            }
            let dir = repo_dir.join(slot.to_string());
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
            // The run may write its cache: never follow a link it left in the marker's place.
            let marker = crate::store::nofollow::open(
                std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600),
                &dir.join(LAST_USED),
            )?;
            marker.set_modified(std::time::SystemTime::now())?;
            let cache = Cache { dir, slot, _lock: lock };
            // Every directory a variable names exists: a tool may expect it to.
            for path in cache.dirs() {
                std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path)?;
            }
            return Ok(cache);
        }
        Err(io::Error::other(format!("all {MAX_SLOTS} cache slots of {repo} are in use")))
    }

    /// The slot's directory, `<root>/<owner>/<repo>/<slot>`.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `<owner>/<repo>/<slot>`: the stable name of the run directory that goes with the slot,
    /// so a build sees the same paths from one iteration to the next.
    pub fn key(&self) -> PathBuf {
        let mut key = PathBuf::new();
        for part in self.dir.iter().rev().take(3).collect::<Vec<_>>().into_iter().rev() {
            key.push(part);
        }
        key
    }

    /// The slot's number among the repository's caches.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The variables that point each ecosystem's cache into this one. Set after the person's
    /// own (which point into their home, where the run cannot write) are dropped.
    pub fn env(&self) -> BTreeMap<String, String> {
        let at = |rel: &str| self.dir.join(rel).display().to_string();
        let mut env: BTreeMap<String, String> =
            VARIABLES.iter().map(|(name, rel)| ((*name).to_owned(), at(rel))).collect();
        // Maven has no variable for its repository: a system property every mvn reads.
        env.insert("MAVEN_OPTS".to_owned(), format!("-Dmaven.repo.local={}", at(MAVEN_REPOSITORY)));
        env
    }

    fn dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        VARIABLES.iter().map(|(_, rel)| *rel).chain([MAVEN_REPOSITORY]).map(|rel| self.dir.join(rel))
    }

    /// Gives the cache to `uid:gid` (the account tests run as when forgeloop is root), once:
    /// only when its top directory is someone else's.
    pub fn hand_over(&self, uid: u32, gid: u32) -> Result<(), Leftover> {
        let owned = self.dir.metadata().is_ok_and(|m| m.uid() == uid && m.gid() == gid);
        if owned { Ok(()) } else { tree::chown_tree(&self.dir, uid, gid) }
    }

    /// Links what the person's cargo home (`person`, read-only to the run) has downloaded —
    /// crate archives, unpacked sources, the index cache — into the cache's cargo home, where
    /// they are missing: offline builds find them, and cargo writes only new downloads (a write
    /// through a link fails on the read-only original, never changes it; cargo treats its index
    /// cache as best effort). Git dependencies are not linked (cargo fetches into those
    /// repositories). Returns how many links were made.
    pub fn seed_cargo(&self, person: &Path) -> io::Result<usize> {
        let mine = self.dir.join("cargo-home");
        let mut made = 0;
        // (part, directory levels recreated before entries are linked)
        for (part, depth) in [("registry/cache", 2), ("registry/src", 2), ("registry/index", usize::MAX)] {
            let from = person.join(part);
            if !from.is_dir() {
                continue;
            }
            made += link_missing(&from, &mine.join(part), depth)?;
        }
        Ok(made)
    }
}

/// Below `to`, a symlink to each entry `depth` levels below `from` that `to` lacks (the levels
/// above are real directories, so cargo can add beside them).
fn link_missing(from: &Path, to: &Path, depth: usize) -> io::Result<usize> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(to)?;
    let mut made = 0;
    for entry in std::fs::read_dir(from)?.flatten() {
        let source = entry.path();
        let target = to.join(entry.file_name());
        if depth > 1 && source.is_dir() && !source.is_symlink() {
            made += link_missing(&source, &target, depth - 1)?;
        } else if target.symlink_metadata().is_err() {
            std::os::unix::fs::symlink(&source, &target)?;
            made += 1;
        }
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_per_repository_and_slot_with_every_ecosystems_variable_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = RepoName::parse("Acme/Widget").unwrap();
        let cache = Cache::claim(dir.path(), &repo).unwrap();
        assert_eq!(cache.path(), dir.path().join("acme/widget/0"));
        assert_eq!(cache.key(), Path::new("acme/widget/0"));
        // A second run of the same repository at once gets a slot of its own.
        let second = Cache::claim(dir.path(), &repo).unwrap();
        assert_eq!((second.slot(), second.key()), (1, PathBuf::from("acme/widget/1")));
        drop(second);
        assert_eq!(Cache::claim(dir.path(), &repo).unwrap().slot(), 1, "slot 0 is still held");
        let other = Cache::claim(dir.path(), &RepoName::parse("acme/gadget").unwrap()).unwrap();
        assert_ne!(cache.path(), other.path());
        let env = cache.env();
        for (name, value) in &env {
            assert!(value.contains(&cache.path().display().to_string()), "{name}={value}");
        }
        assert!(
            env.contains_key("CARGO_TARGET_DIR") && env.contains_key("PIP_CACHE_DIR") && env.contains_key("GOCACHE")
        );
    }

    #[test]
    fn seeding_links_what_is_missing_and_never_replaces_what_the_cache_has() {
        let dir = tempfile::tempdir().unwrap();
        let person = dir.path().join("person");
        for file in
            ["registry/cache/idx/a-1.0.crate", "registry/cache/idx/b-1.0.crate", "registry/src/idx/a-1.0/lib.rs"]
        {
            std::fs::create_dir_all(person.join(file).parent().unwrap()).unwrap();
            std::fs::write(person.join(file), "x").unwrap();
        }
        let cache = Cache::claim(&dir.path().join("caches"), &RepoName::parse("a/b").unwrap()).unwrap();
        let mine = cache.path().join("cargo-home/registry/cache/idx");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(mine.join("b-1.0.crate"), "own").unwrap();
        assert_eq!(cache.seed_cargo(&person).unwrap(), 2);
        assert!(mine.join("a-1.0.crate").is_symlink());
        assert_eq!(std::fs::read_to_string(mine.join("b-1.0.crate")).unwrap(), "own");
        assert!(cache.path().join("cargo-home/registry/src/idx/a-1.0").is_symlink());
        assert_eq!(cache.seed_cargo(&person).unwrap(), 0, "a second seeding makes nothing");
    }
}
