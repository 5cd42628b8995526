//! File watching (design §6.1): `notify` on directories only — never on files, whose inodes
//! atomic renames replace. A directory that does not exist yet is covered by watching its
//! nearest existing ancestor until it appears. Events are debounced into batches of paths.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Events closer together than this are delivered as one batch.
pub const DEBOUNCE: Duration = Duration::from_millis(20);

/// Why watching could not begin (the footer says so; the control room runs without it).
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The watcher could not be created (usually the inotify instance limit).
    #[error("cannot start the file watcher: {0}; check the inotify limits (fs.inotify.max_user_instances)")]
    Start(String),
}

/// A directory the runtime should watch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchDir {
    /// The directory.
    pub path: PathBuf,
    /// Its subdirectories too (the registry); others are watched flat.
    pub recursive: bool,
}

/// What the watcher reports (raw, then debounced); the runtime turns these into app events.
#[derive(Debug)]
pub enum WatchEvent {
    /// Paths that changed (created, written, renamed, removed).
    Paths(Vec<PathBuf>),
    /// The kernel queue overflowed: everything must be re-read.
    Rescan,
    /// The watcher failed; what it said.
    Error(String),
}

/// The directories watched: those asked for, or the nearest existing ancestor of one missing.
pub struct DirWatcher {
    inner: RecommendedWatcher,
    desired: Vec<WatchDir>,
    /// What is actually watched: directory → recursive.
    active: BTreeMap<PathBuf, bool>,
    /// Desired directories that do not exist yet.
    pending: BTreeSet<PathBuf>,
    problems: Vec<String>,
}

impl DirWatcher {
    /// A watcher sending what it sees to `tx`; it watches nothing until [`DirWatcher::set`].
    pub fn new(tx: UnboundedSender<WatchEvent>) -> Result<DirWatcher, WatchError> {
        let inner = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
            let message = match result {
                Ok(event) if event.need_rescan() => WatchEvent::Rescan,
                Ok(event) => match event.kind {
                    EventKind::Access(_) => return,
                    _ => WatchEvent::Paths(event.paths),
                },
                Err(err) => WatchEvent::Error(err.to_string()),
            };
            let _ = tx.send(message);
        })
        .map_err(|e| WatchError::Start(e.to_string()))?;
        Ok(DirWatcher {
            inner,
            desired: Vec::new(),
            active: BTreeMap::new(),
            pending: BTreeSet::new(),
            problems: Vec::new(),
        })
    }

    /// Watches exactly `dirs` (plus ancestors standing in for missing ones). Returns the
    /// directories that were missing and now exist (see [`DirWatcher::reconcile`]).
    pub fn set(&mut self, dirs: Vec<WatchDir>) -> Vec<PathBuf> {
        self.desired = dirs;
        self.reconcile()
    }

    /// Whether a batch may have created or removed a directory we care about.
    pub fn affects(&self, paths: &[PathBuf]) -> bool {
        paths.iter().any(|p| self.active.contains_key(p) || self.pending.iter().any(|d| d.starts_with(p)))
    }

    /// Brings the watches in line with the desired directories. Returns the desired
    /// directories that were missing before and exist now: files created in them before
    /// their watch was added raised no event, so the caller must look at them once.
    pub fn reconcile(&mut self) -> Vec<PathBuf> {
        let mut target: BTreeMap<PathBuf, bool> = BTreeMap::new();
        let was_pending = std::mem::take(&mut self.pending);
        for dir in &self.desired {
            if dir.path.is_dir() {
                let slot = target.entry(dir.path.clone()).or_insert(false);
                *slot |= dir.recursive;
            } else {
                self.pending.insert(dir.path.clone());
                if let Some(ancestor) = dir.path.ancestors().skip(1).find(|a| a.is_dir()) {
                    target.entry(ancestor.to_path_buf()).or_insert(false);
                }
            }
        }
        let stale: Vec<PathBuf> =
            self.active.iter().filter(|(p, r)| target.get(*p) != Some(r)).map(|(p, _)| p.clone()).collect();
        for path in stale {
            let _ = self.inner.unwatch(&path);
            self.active.remove(&path);
        }
        self.problems.clear();
        for (path, recursive) in target {
            if self.active.contains_key(&path) {
                continue;
            }
            let mode = if recursive { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive };
            match self.inner.watch(&path, mode) {
                Ok(()) => {
                    self.active.insert(path, recursive);
                }
                Err(err) => self.problems.push(format!("{}: {err}", path.display())),
            }
        }
        was_pending.into_iter().filter(|p| !self.pending.contains(p) && self.active.contains_key(p)).collect()
    }

    /// How many directories are watched now.
    pub fn watched(&self) -> usize {
        self.active.len()
    }

    /// The directories that could not be watched at the last change, and why.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

/// Collects raw events into batches: the first event opens a window of [`DEBOUNCE`].
pub fn debounce(mut raw: UnboundedReceiver<WatchEvent>, out: impl Fn(WatchEvent) + Send + 'static) {
    tokio::spawn(async move {
        while let Some(first) = raw.recv().await {
            let mut paths = BTreeSet::new();
            let mut rescan = false;
            let mut absorb = |message: WatchEvent, out: &dyn Fn(WatchEvent)| match message {
                WatchEvent::Paths(p) => paths.extend(p),
                WatchEvent::Rescan => rescan = true,
                WatchEvent::Error(e) => out(WatchEvent::Error(e)),
            };
            absorb(first, &out);
            let deadline = tokio::time::Instant::now() + DEBOUNCE;
            while let Ok(Some(message)) = tokio::time::timeout_at(deadline, raw.recv()).await {
                absorb(message, &out);
            }
            if rescan {
                out(WatchEvent::Rescan);
            }
            if !paths.is_empty() {
                out(WatchEvent::Paths(paths.into_iter().collect()));
            }
        }
    });
}

/// A channel for [`DirWatcher::new`] and [`debounce`].
pub fn channel() -> (UnboundedSender<WatchEvent>, UnboundedReceiver<WatchEvent>) {
    unbounded_channel()
}
