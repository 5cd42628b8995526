//! Warm caches, scoped like CI caches (design §5.6): what a repository's builds download and
//! produce — crates and a cargo target directory, pip's, npm's, Go's, Gradle's and Maven's
//! caches, ccache — kept between runs so an iteration after a one-line change is an
//! incremental build, in two kinds of layer under `<home>/caches/<owner>/<repo>/`:
//!
//! * `base/`: the **base layer**, warmed by the base branch's own code (its setup and tests at
//!   the base tip, run by forgeloop when the layer is missing or too far behind), read-only to
//!   every PR's run. `base/base.json` says which commit and when.
//! * `pr-<N>/`: a **cycle layer**, one PR's writes, seen by that PR's later runs alone. In the
//!   first tier an overlay mount puts it on top of the base layer; in the second it is a copy
//!   of the base layer. A one-shot `forgeloop test` gets a throw-away `tmp-…` layer instead.
//!
//! Whatever a run writes stays in its own layer, and what configures a tool or is a program to
//! run ([`carry::NEVER_CARRIED`]) is removed before the next run even of that layer. Runs hold
//! the base layer's lock shared; warming takes it exclusively, so a layer is never rewarmed
//! under a run. Nothing here follows a link a run may have planted ([`fsx`]).
//!
//! The person's own `CARGO_HOME` stays read-only: before every run the writable layer's cargo
//! home gets links to what is already downloaded there ([`seed::seed_cargo`]).

mod carry;
mod fsx;
mod seed;
mod usage;

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

pub use carry::{NEVER_CARRIED, NeverCarried};
pub use fsx::Owner;
pub use usage::{Trimmed, Usage, trim, usage};

use crate::domain::pr_ref::RepoName;
use crate::store::tree;

/// Touched by every run that uses a layer: `gc` trims the least recently used first.
const LAST_USED: &str = "last-used";
/// The base layer's directory (and, with `.lock`, its lock) below a repository's.
const BASE: &str = "base";
/// Each ecosystem's cache variable and where it points in a layer.
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

/// Throw-away layers of this process, numbered.
static THROWAWAY_SEQ: AtomicU64 = AtomicU64::new(0);

/// Which writable layer a run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The PR's own, kept for its cycle's later runs.
    Cycle(u64),
    /// One run's, removed after it (a one-shot `forgeloop test`).
    Throwaway,
}

/// How the writable layer sits on the base layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// An overlay mount (first tier): the base layer stays read-only below.
    Overlay,
    /// A copy of the base layer, made when the layer is (second tier: no mounts there).
    Copy,
}

impl Stack {
    fn as_str(self) -> &'static str {
        match self {
            Stack::Overlay => "overlay",
            Stack::Copy => "copy",
        }
    }
}

/// The base layer's record, `base/base.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseRecord {
    /// The base branch commit the warming ran at.
    pub commit: String,
    /// When (RFC 3339).
    pub warmed_at: String,
    /// How long the warming took, in milliseconds.
    pub millis: u64,
    /// The base branch's own tests' status (`TEST_PASSED`, `TEST_FAILED`…): the layer is
    /// kept either way, for what its build left.
    pub outcome: String,
    /// Keys a later forgeloop wrote, kept through a rewrite.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A writable layer's record, `<layer>/layer.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct LayerRecord {
    runs: u32,
    #[serde(flatten)]
    extra: BTreeMap<String, serde_json::Value>,
}

/// How the first tier shows a run its layers at [`Prepared::view`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    /// One layer, read-write.
    Bind {
        /// The layer.
        source: PathBuf,
    },
    /// The base layer read-only under the writable layer.
    Overlay {
        /// The base layer.
        lower: PathBuf,
        /// The writable layer.
        upper: PathBuf,
        /// overlayfs's scratch directory beside it.
        work: PathBuf,
    },
}

/// What a run mounts and where its variables point.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The path the run's tools see the cache at (the variables point below it).
    pub view: PathBuf,
    /// First tier: what is mounted at `view` (it exists only inside the sandbox).
    pub mount: Option<Mount>,
    /// The variables.
    pub env: BTreeMap<String, String>,
}

/// One run's layers of a repository's cache: its writable layer (locked: the run's alone) and
/// the base layer's lock.
#[derive(Debug)]
pub struct Layers {
    repo_dir: PathBuf,
    name: String,
    stack: Stack,
    owner: Owner,
    throwaway: bool,
    base_lock: File,
    base_hold: Hold,
    _own_lock: File,
}

/// How this run holds the base layer's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    No,
    /// Using it (runs share it).
    Shared,
    /// Warming it (no run uses it meanwhile).
    Exclusive,
}

impl Layers {
    /// The writable layer of `scope` for `repo` below `root` (lowercase, `0700`), locked. A
    /// cycle layer another run holds (two cycles of one PR) gives a throw-away layer instead.
    /// `owner` is the account tests run as, when forgeloop is root: what is made for the run
    /// is theirs.
    pub fn claim(root: &Path, repo: &RepoName, scope: Scope, stack: Stack, owner: Owner) -> io::Result<Layers> {
        let repo_dir = root.join(repo.owner().to_ascii_lowercase()).join(repo.name().to_ascii_lowercase());
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&repo_dir)?;
        let base_lock = open_lock(&repo_dir.join(format!("{BASE}.lock")))?;
        let mut claimed = None;
        if let Scope::Cycle(number) = scope {
            let name = format!("pr-{number}");
            let lock = open_lock(&repo_dir.join(format!("{name}.lock")))?;
            if lock.try_lock().is_ok() {
                claimed = Some((name, lock, false));
            }
        }
        let (name, lock, throwaway) = match claimed {
            Some(claimed) => claimed,
            None => {
                let seq = THROWAWAY_SEQ.fetch_add(1, Ordering::Relaxed);
                let name = format!("tmp-{}-{seq}", std::process::id());
                let lock = open_lock(&repo_dir.join(format!("{name}.lock")))?;
                lock.try_lock().map_err(io::Error::other)?;
                // A dead process with the same pid may have left one.
                tree::remove_tree(&repo_dir.join(&name)).map_err(|left| io::Error::other(left.to_string()))?;
                (name, lock, true)
            }
        };
        let layers =
            Layers { repo_dir, name, stack, owner, throwaway, base_lock, base_hold: Hold::No, _own_lock: lock };
        fsx::ensure_dir(&layers.repo_dir, Path::new(&layers.name), None)?;
        touch(&layers.own_dir().join(LAST_USED))?;
        Ok(layers)
    }

    /// `<owner>/<repo>/<layer>`: the stable name of the run directory that goes with the
    /// layer (a build sees the same paths from one iteration to the next) and the report's.
    pub fn key(&self) -> PathBuf {
        let mut key = PathBuf::new();
        for part in self.repo_dir.iter().rev().take(2).collect::<Vec<_>>().into_iter().rev() {
            key.push(part);
        }
        key.push(&self.name);
        key
    }

    /// The base layer's run directory name, `<owner>/<repo>/base`.
    pub fn base_key(&self) -> PathBuf {
        self.key().with_file_name(BASE)
    }

    /// `cycle` or `throwaway`.
    pub fn kind(&self) -> &'static str {
        if self.throwaway { "throwaway" } else { "cycle" }
    }

    fn own_dir(&self) -> PathBuf {
        self.repo_dir.join(&self.name)
    }

    fn base_dir(&self) -> PathBuf {
        self.repo_dir.join(BASE)
    }

    /// The base layer's own tree.
    fn base_layer(&self) -> PathBuf {
        self.base_dir().join("layer")
    }

    /// What the run writes: the overlay's upper directory, or the copy.
    fn writable(&self) -> PathBuf {
        match self.stack {
            Stack::Overlay => self.own_dir().join("upper"),
            Stack::Copy => self.own_dir().join("layer"),
        }
    }

    /// The base layer's record, when it has been warmed.
    pub fn base_record(&self) -> Option<BaseRecord> {
        let text = std::fs::read_to_string(self.base_dir().join("base.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Whether the base layer was (re)warmed after `time`: a checkout made before then is older
    /// than what the warming built.
    pub fn base_warmed_after(&self, time: std::time::SystemTime) -> bool {
        let warmed = std::fs::metadata(self.base_dir().join("base.json")).and_then(|m| m.modified());
        warmed.is_ok_and(|warmed| warmed >= time)
    }

    /// Takes the base layer for warming, when no run holds it. `false`: another run uses or
    /// warms it; the caller goes on with it as it is.
    pub fn try_warm(&mut self) -> bool {
        self.release_base();
        if self.base_lock.try_lock().is_ok() {
            self.base_hold = Hold::Exclusive;
        }
        self.base_hold == Hold::Exclusive
    }

    fn release_base(&mut self) {
        if self.base_hold != Hold::No {
            let _ = self.base_lock.unlock();
            self.base_hold = Hold::No;
        }
    }

    /// The base layer made ready for its warming (which holds it exclusively): what no run
    /// may keep removed, every variable's directory present, the person's crates linked.
    pub fn prepare_base(&self, person_cargo: Option<&Path>) -> io::Result<Prepared> {
        let dir = fsx::ensure_dir(&self.repo_dir, Path::new(BASE), None)?;
        let layer = fsx::ensure_dir(&dir, Path::new("layer"), self.owner)?;
        carry::scrub(&layer, None)?;
        self.variable_dirs(&layer)?;
        if let Some(person) = person_cargo {
            seed::seed_cargo(person, &layer, None, self.owner)?;
        }
        touch(&dir.join(LAST_USED))?;
        Ok(match self.stack {
            Stack::Overlay => self.prepared(Some(Mount::Bind { source: layer })),
            Stack::Copy => self.prepared_at(layer, None),
        })
    }

    /// After warming: the record written, what configures a tool removed, and the base layer
    /// held shared for the run that goes on to use it.
    pub fn finish_warm(&mut self, record: &BaseRecord) -> io::Result<()> {
        carry::scrub(&self.base_layer(), None)?;
        let json = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
        crate::store::atomic::write_atomic(&self.base_dir().join("base.json"), &json)?;
        self.hold_base();
        Ok(())
    }

    /// Holds the base layer shared for this run (ending a warming this run did); `false` when
    /// another run's warming holds it (this run goes on without it).
    pub fn hold_base(&mut self) -> bool {
        if self.base_hold == Hold::Exclusive {
            self.release_base();
        }
        if self.base_hold == Hold::No && self.base_lock.try_lock_shared().is_ok() {
            self.base_hold = Hold::Shared;
        }
        self.base_hold == Hold::Shared
    }

    /// How many runs wrote the writable layer before this one.
    pub fn runs(&self) -> u32 {
        std::fs::read_to_string(self.own_dir().join("layer.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<LayerRecord>(&t).ok())
            .map_or(0, |r| r.runs)
    }

    /// The writable layer made ready for a run: made (a copy of the base layer, for the copy
    /// stack), what no run may keep removed, every variable's directory present, the person's
    /// crates linked where neither layer has them. Uses the base layer only if held.
    pub fn prepare(&self, person_cargo: Option<&Path>) -> io::Result<Prepared> {
        let own = self.own_dir();
        let base = self.base_layer();
        let base =
            (self.base_hold == Hold::Shared && base.symlink_metadata().is_ok_and(|m| m.is_dir())).then_some(base);
        let writable = self.writable();
        if self.stack == Stack::Copy
            && writable.symlink_metadata().is_err()
            && let Some(base) = &base
        {
            // Through a temporary name: a copy cut short is never taken for a layer.
            let partial = own.join("layer.partial");
            tree::remove_tree(&partial).map_err(|left| io::Error::other(left.to_string()))?;
            fsx::copy_nofollow(base, &partial)?;
            std::fs::rename(&partial, &writable)?;
        }
        let writable = fsx::ensure_dir(&own, Path::new(writable.file_name().unwrap_or_default()), self.owner)?;
        carry::scrub(&writable, base.as_deref().filter(|_| self.stack == Stack::Copy))?;
        self.variable_dirs(&writable)?;
        if let Some(person) = person_cargo {
            let below = base.as_deref().filter(|_| self.stack == Stack::Overlay);
            seed::seed_cargo(person, &writable, below, self.owner)?;
        }
        touch(&own.join(LAST_USED))?;
        Ok(match (self.stack, base) {
            (Stack::Overlay, Some(lower)) => {
                // overlayfs's scratch directory: emptied by the kernel at mount, the mounter's.
                let work = fsx::ensure_dir(&own, Path::new("work"), self.owner)?;
                self.prepared(Some(Mount::Overlay { lower, upper: writable, work }))
            }
            (Stack::Overlay, None) => self.prepared(Some(Mount::Bind { source: writable })),
            (Stack::Copy, _) => self.prepared_at(writable, None),
        })
    }

    /// After the run: what configures a tool removed, one more run counted. Returns the count.
    pub fn finish(&self) -> io::Result<u32> {
        carry::scrub(&self.writable(), None)?;
        let path = self.own_dir().join("layer.json");
        let mut record: LayerRecord =
            std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        record.runs = record.runs.saturating_add(1);
        let json = serde_json::to_vec_pretty(&record).map_err(io::Error::other)?;
        crate::store::atomic::write_atomic(&path, &json)?;
        Ok(record.runs)
    }

    /// First tier: the layers are mounted at `<repo>/live`, a path only the sandbox has.
    fn prepared(&self, mount: Option<Mount>) -> Prepared {
        self.prepared_at(self.repo_dir.join("live"), mount)
    }

    fn prepared_at(&self, view: PathBuf, mount: Option<Mount>) -> Prepared {
        Prepared { env: env(&view), view, mount }
    }

    fn variable_dirs(&self, layer: &Path) -> io::Result<()> {
        for rel in VARIABLES.iter().map(|(_, rel)| *rel).chain([MAVEN_REPOSITORY]) {
            fsx::ensure_dir(layer, Path::new(rel), self.owner)?;
        }
        Ok(())
    }

    /// `overlay` or `copy`.
    pub fn stack_name(&self) -> &'static str {
        self.stack.as_str()
    }
}

impl Drop for Layers {
    fn drop(&mut self) {
        if self.throwaway {
            let _ = tree::remove_tree(&self.own_dir());
            let _ = std::fs::remove_file(self.repo_dir.join(format!("{}.lock", self.name)));
        }
    }
}

/// The variables that point each ecosystem's cache below `view`. Set after the person's own
/// (which point into their home, where the run cannot write) are dropped.
fn env(view: &Path) -> BTreeMap<String, String> {
    let at = |rel: &str| view.join(rel).display().to_string();
    let mut env: BTreeMap<String, String> = VARIABLES.iter().map(|(name, rel)| ((*name).to_owned(), at(rel))).collect();
    // Maven has no variable for its repository: a system property every mvn reads.
    env.insert("MAVEN_OPTS".to_owned(), format!("-Dmaven.repo.local={}", at(MAVEN_REPOSITORY)));
    env
}

fn open_lock(path: &Path) -> io::Result<File> {
    crate::store::nofollow::open(std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600), path)
}

/// Marks a layer used now (never through a link).
fn touch(path: &Path) -> io::Result<()> {
    let marker = crate::store::nofollow::open(
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600),
        path,
    )?;
    marker.set_modified(std::time::SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(name: &str) -> RepoName {
        RepoName::parse(name).unwrap()
    }

    #[test]
    fn a_layer_per_cycle_a_throwaway_when_held_and_every_variable_below_the_view() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut first = Layers::claim(root, &repo("Acme/Widget"), Scope::Cycle(7), Stack::Copy, None).unwrap();
        assert_eq!((first.key(), first.kind()), (PathBuf::from("acme/widget/pr-7"), "cycle"));
        assert_eq!(first.base_key(), PathBuf::from("acme/widget/base"));
        // A second run of the same PR at once cannot share the layer: it gets one of its own.
        let second = Layers::claim(root, &repo("acme/widget"), Scope::Cycle(7), Stack::Copy, None).unwrap();
        assert_eq!(second.kind(), "throwaway");
        let second_dir = root.join(second.key());
        assert!(second_dir.is_dir());
        drop(second);
        assert!(!second_dir.exists(), "a throw-away layer outlived its run");
        assert!(first.hold_base());
        let prepared = first.prepare(None).unwrap();
        assert_eq!(prepared.view, root.join("acme/widget/pr-7/layer"));
        for (name, value) in &prepared.env {
            assert!(value.contains(&prepared.view.display().to_string()), "{name}={value}");
        }
        assert!(prepared.view.join("cargo-home").is_dir() && prepared.view.join("m2/repository").is_dir());
        assert_eq!(first.runs(), 0);
        assert_eq!(first.finish().unwrap(), 1);
        assert_eq!(first.runs(), 1);
    }

    #[test]
    fn the_copy_stack_starts_from_the_base_layer_and_the_overlay_names_it_as_lower() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut warm = Layers::claim(root, &repo("a/b"), Scope::Throwaway, Stack::Copy, None).unwrap();
        assert!(warm.try_warm());
        let base = warm.prepare_base(None).unwrap();
        std::fs::write(base.view.join("cargo-target/built"), "x").unwrap();
        std::fs::write(base.view.join("cargo-home/config.toml"), "[build]\nrustc-wrapper = \"/x\"\n").unwrap();
        let record = BaseRecord {
            commit: "a".repeat(40),
            warmed_at: "2026-12-04T00:00:00Z".into(),
            millis: 3_000,
            outcome: "passed".into(),
            extra: BTreeMap::new(),
        };
        warm.finish_warm(&record).unwrap();
        assert_eq!(warm.base_record().unwrap(), record);
        assert!(!base.view.join("cargo-home/config.toml").exists(), "warming left a configuration");
        drop(warm);

        let mut copy = Layers::claim(root, &repo("a/b"), Scope::Cycle(1), Stack::Copy, None).unwrap();
        assert!(copy.hold_base());
        let prepared = copy.prepare(None).unwrap();
        assert_eq!(std::fs::read_to_string(prepared.view.join("cargo-target/built")).unwrap(), "x");
        // Shared holders block a warming.
        let mut other = Layers::claim(root, &repo("a/b"), Scope::Cycle(2), Stack::Overlay, None).unwrap();
        assert!(!other.try_warm(), "a warming got the base layer under a run");
        assert!(other.hold_base());
        match other.prepare(None).unwrap().mount {
            Some(Mount::Overlay { lower, upper, work }) => {
                assert_eq!(lower, root.join("a/b/base/layer"));
                assert_eq!((upper, work), (root.join("a/b/pr-2/upper"), root.join("a/b/pr-2/work")));
            }
            other => panic!("expected an overlay, got {other:?}"),
        }
    }
}
