//! Tightening a forgeloop home that an older version, a copy or a loose umask left readable by
//! other accounts (design §2.4): every directory becomes 0700 and every file 0600.
//!
//! The walk goes top down and tightens a directory before it reads it, so once it is inside no
//! other account can swap an entry for a symlink; a symlink is never followed (each change is
//! made through a descriptor opened with `O_NOFOLLOW`), and a directory that cannot be tightened
//! is not entered. It is bounded ([`MAX_ENTRIES`], [`MAX_DEPTH`]) and never fails: what went
//! wrong is counted and the first errors kept.
//!
//! A home is walked once, recorded in `<home>/permissions.json` ([`Marker`]), and walked again
//! only when [`due`] says so: the marker is missing, unreadable or of an older version, or the
//! home or one of its direct entries has group or other bits again. So a start costs one
//! directory listing of the home, not a walk of it.
//!
//! Left alone on purpose ([`shared_with_runs`]): a mirror's `objects/` (a sandboxed run as
//! another user reads the objects its checkout borrows, so they stay readable; the mirror
//! directory around them is 0700) and `run/` (the runner's per-run directories).

use std::fs::{self, Metadata, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::write_atomic;
use super::private::{DIR_MODE, FILE_MODE, is_loose};

/// The marker's file name in the home.
pub const MARKER: &str = "permissions.json";
/// Raised when the rules change, so that every home is walked once more.
const VERSION: u32 = 1;
/// Entries a walk looks at before it stops (a big home takes well under a second).
pub const MAX_ENTRIES: u64 = 200_000;
/// Directory levels a walk descends (a home is a handful deep; a mirror's refs a few more).
pub const MAX_DEPTH: usize = 32;
/// Errors and loose entries a walk keeps by name.
const MAX_NAMED: usize = 10;

/// `<home>/permissions.json`: when the home was last walked and what the walk did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// The rule set the walk applied; an older one makes the next start walk again.
    pub version: u32,
    /// When the walk ran (RFC 3339, UTC).
    pub checked_at: String,
    /// Entries looked at.
    pub visited: u64,
    /// Entries made private.
    pub changed: u64,
    /// Entries that could not be made private (the first are in `errors`).
    #[serde(default)]
    pub failed: u64,
    /// The first few failures, `PATH: ERROR`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// False when the walk stopped at a bound.
    pub complete: bool,
}

/// What one walk found (surveying) or did (tightening).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Entries looked at.
    pub visited: u64,
    /// Entries with group or other bits.
    pub loose: u64,
    /// The first of them, with their mode as found.
    pub examples: Vec<(PathBuf, u32)>,
    /// Entries made private (tightening only).
    pub changed: u64,
    /// Entries that could not be made private.
    pub failed: u64,
    /// The first errors, `PATH: ERROR`.
    pub errors: Vec<String>,
    /// The walk stopped at a bound.
    pub truncated: bool,
}

/// Why a home is walked again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// No marker, or one this version does not accept.
    Unrecorded,
    /// The home or these direct entries of it have group or other bits (with their modes).
    Loose(Vec<(PathBuf, u32)>),
}

/// A walk of the home and its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tightened {
    /// Why the home was walked.
    pub due: Due,
    /// What the walk found and did.
    pub walk: Walk,
    /// The record's path, `<home>/permissions.json`.
    pub marker: PathBuf,
    /// The marker could not be written (the next start walks again).
    pub marker_error: Option<String>,
}

/// Paths (relative to the home) that are shared with sandboxed runs and so left as they are:
/// `mirrors/OWNER/REPO.git/objects` and `run`.
pub fn shared_with_runs(rel: &Path) -> bool {
    let parts: Vec<&str> = rel
        .components()
        .map(|c| match c {
            Component::Normal(name) => name.to_str().unwrap_or(""),
            _ => "",
        })
        .collect();
    match parts.as_slice() {
        ["run"] => true,
        ["mirrors", _, repo, "objects"] => repo.ends_with(".git"),
        _ => false,
    }
}

/// The marker, if it is there and readable.
pub fn read_marker(home: &Path) -> Option<Marker> {
    let bytes = fs::read(home.join(MARKER)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The home itself and its direct entries (symlinks and [`shared_with_runs`] aside) that have
/// group or other bits, with their modes. Empty when the home does not exist.
pub fn top_level_loose(home: &Path) -> Vec<(PathBuf, u32)> {
    let mut loose = Vec::new();
    let Ok(meta) = fs::metadata(home) else { return loose };
    if meta.is_dir() && is_loose(mode_of(&meta)) {
        loose.push((home.to_path_buf(), mode_of(&meta)));
    }
    let Ok(entries) = fs::read_dir(home) else { return loose };
    for entry in entries.flatten() {
        if shared_with_runs(Path::new(&entry.file_name())) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let kind = meta.file_type();
        if (kind.is_dir() || kind.is_file()) && is_loose(mode_of(&meta)) {
            loose.push((entry.path(), mode_of(&meta)));
        }
    }
    loose.sort();
    loose
}

/// Whether the home is to be walked (None when it is not, or does not exist).
pub fn due(home: &Path) -> Option<Due> {
    if !home.is_dir() {
        return None;
    }
    let loose = top_level_loose(home);
    if !loose.is_empty() {
        return Some(Due::Loose(loose));
    }
    match read_marker(home) {
        Some(marker) if marker.version >= VERSION => None,
        _ => Some(Due::Unrecorded),
    }
}

/// Walks the home when [`due`], making it private, and records the walk in the marker. Never
/// fails; None when nothing was due.
pub fn tighten_home(home: &Path, now: &str) -> Option<Tightened> {
    let due = due(home)?;
    let walk = tighten_tree(home, &shared_with_runs);
    let marker = Marker {
        version: VERSION,
        checked_at: now.to_owned(),
        visited: walk.visited,
        changed: walk.changed,
        failed: walk.failed,
        errors: walk.errors.clone(),
        complete: !walk.truncated,
    };
    let path = home.join(MARKER);
    let text = serde_json::to_string_pretty(&marker).unwrap_or_default() + "\n";
    let marker_error = write_atomic(&path, text.as_bytes()).err().map(|e| e.to_string());
    Some(Tightened { due, walk, marker: path, marker_error })
}

/// Makes `root` and everything under it private, except what `skip` (given the path relative
/// to `root`) names. `root` itself may be a symlink to a directory (the person's choice of
/// home); nothing under it is followed.
pub fn tighten_tree(root: &Path, skip: &dyn Fn(&Path) -> bool) -> Walk {
    Walker { apply: true, skip, out: Walk::default() }.run(root)
}

/// Makes `dir` and everything in it private when `dir` itself is loose: the mark of one an
/// older forgeloop made (one made now is 0700 and not walked again). For a cycle's sidecar
/// beside a state outside the home, which the home's walk does not reach.
pub fn tighten_if_loose(dir: &Path) -> Option<Walk> {
    let meta = fs::symlink_metadata(dir).ok()?;
    (meta.is_dir() && is_loose(mode_of(&meta))).then(|| tighten_tree(dir, &|_| false))
}

/// What [`tighten_tree`] would change, changing nothing.
pub fn survey_tree(root: &Path, skip: &dyn Fn(&Path) -> bool) -> Walk {
    Walker { apply: false, skip, out: Walk::default() }.run(root)
}

fn mode_of(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

struct Walker<'a> {
    apply: bool,
    skip: &'a dyn Fn(&Path) -> bool,
    out: Walk,
}

impl Walker<'_> {
    fn run(mut self, root: &Path) -> Walk {
        match fs::metadata(root) {
            Ok(meta) => self.entry(root, Path::new(""), &meta, 0),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => self.fail(root, &err),
        }
        self.out
    }

    fn entry(&mut self, path: &Path, rel: &Path, meta: &Metadata, depth: usize) {
        self.out.visited += 1;
        let kind = meta.file_type();
        // Symlinks, sockets, pipes and devices are left alone.
        let (is_dir, target) = match (kind.is_dir(), kind.is_file()) {
            (true, _) => (true, DIR_MODE),
            (_, true) => (false, FILE_MODE),
            _ => return,
        };
        let mode = mode_of(meta);
        let mut enter = is_dir;
        if is_loose(mode) {
            self.out.loose += 1;
            if self.out.examples.len() < MAX_NAMED {
                self.out.examples.push((path.to_path_buf(), mode));
            }
            if self.apply {
                match set_mode(path, is_dir, target, depth == 0) {
                    Ok(()) => self.out.changed += 1,
                    Err(err) => {
                        // Not entered: others may still write in it.
                        self.fail(path, &err);
                        enter = false;
                    }
                }
            }
        }
        if enter {
            if depth >= MAX_DEPTH {
                self.out.truncated = true;
            } else {
                self.dir(path, rel, depth + 1);
            }
        }
    }

    fn dir(&mut self, dir: &Path, rel: &Path, depth: usize) {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) => return self.fail(dir, &err),
        };
        for entry in entries {
            if self.out.visited >= MAX_ENTRIES {
                self.out.truncated = true;
                return;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    self.fail(dir, &err);
                    continue;
                }
            };
            let rel = rel.join(entry.file_name());
            if (self.skip)(&rel) {
                continue;
            }
            let path = entry.path();
            // `DirEntry::metadata` does not follow a symlink.
            match entry.metadata() {
                Ok(meta) => self.entry(&path, &rel, &meta, depth),
                Err(err) => self.fail(&path, &err),
            }
        }
    }

    fn fail(&mut self, path: &Path, err: &io::Error) {
        self.out.failed += 1;
        if self.out.errors.len() < MAX_NAMED {
            self.out.errors.push(format!("{}: {err}", path.display()));
        }
    }
}

/// Sets `path`'s mode through a descriptor: opened with `O_NOFOLLOW` (unless it is the walk's
/// root) and checked to be still the kind of entry the listing said.
fn set_mode(path: &Path, is_dir: bool, mode: u32, root: bool) -> io::Result<()> {
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if !root {
        flags |= libc::O_NOFOLLOW;
    }
    if is_dir {
        flags |= libc::O_DIRECTORY;
    }
    let file = OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() != is_dir || !(meta.is_dir() || meta.is_file()) {
        return Err(io::Error::other("it changed while being made private; left as it is"));
    }
    file.set_permissions(Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, Permissions::from_mode(mode)).unwrap();
    }

    /// A home as an older forgeloop left it: 0755 directories, 0644 files, a mirror.
    fn loose_home(root: &Path) -> PathBuf {
        let home = root.join("home");
        for dir in
            ["cycles/c.d/runs", "mirrors/acme/widget.git/objects/ab", "mirrors/acme/widget.git/refs/heads", "run/x"]
        {
            fs::create_dir_all(home.join(dir)).unwrap();
        }
        for file in [
            "cycles/c.json",
            "cycles/c.d/events.jsonl",
            "cycles/c.d/runs/1-abc.log",
            "mirrors/acme/widget.git/config",
            "mirrors/acme/widget.git/refs/heads/main",
            "mirrors/acme/widget.git/objects/ab/cdef",
            "run/x/file",
        ] {
            fs::write(home.join(file), "x").unwrap();
            chmod(&home.join(file), 0o644);
        }
        chmod(&home.join("mirrors/acme/widget.git/objects/ab/cdef"), 0o444);
        for dir in [
            "",
            "cycles",
            "cycles/c.d",
            "cycles/c.d/runs",
            "mirrors",
            "mirrors/acme",
            "mirrors/acme/widget.git",
            "mirrors/acme/widget.git/refs",
            "mirrors/acme/widget.git/refs/heads",
        ] {
            chmod(&home.join(dir), 0o755);
        }
        home
    }

    #[test]
    fn a_loose_home_is_made_private_once_and_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let home = loose_home(tmp.path());
        assert!(matches!(due(&home), Some(Due::Loose(ref l)) if l.len() == 3), "{:?}", due(&home));

        let done = tighten_home(&home, "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(done.walk.changed, 14, "{:?}", done.walk);
        assert_eq!((done.walk.failed, done.marker_error.as_deref()), (0, None));
        for dir in ["", "cycles", "cycles/c.d/runs", "mirrors/acme/widget.git", "mirrors/acme/widget.git/refs/heads"] {
            assert_eq!(mode(&home.join(dir)), 0o700, "{dir}");
        }
        for file in ["cycles/c.json", "cycles/c.d/runs/1-abc.log", "mirrors/acme/widget.git/config", MARKER] {
            assert_eq!(mode(&home.join(file)), 0o600, "{file}");
        }
        // Shared with sandboxed runs: as they were.
        assert_eq!(mode(&home.join("mirrors/acme/widget.git/objects/ab/cdef")), 0o444);
        assert_eq!(mode(&home.join("run/x/file")), 0o644);
        let marker = read_marker(&home).unwrap();
        assert_eq!((marker.changed, marker.complete, marker.checked_at.as_str()), (14, true, "2026-01-01T00:00:00Z"));

        // Recorded: not walked again, even though a deep file is loose again.
        chmod(&home.join("cycles/c.d/runs/1-abc.log"), 0o644);
        assert_eq!(due(&home), None);
        assert!(tighten_home(&home, "later").is_none());
        assert_eq!(mode(&home.join("cycles/c.d/runs/1-abc.log")), 0o644);
        // A loose direct entry makes it due again.
        chmod(&home.join("cycles"), 0o750);
        assert!(tighten_home(&home, "later").is_some());
        assert_eq!(mode(&home.join("cycles/c.d/runs/1-abc.log")), 0o600);
    }

    #[test]
    fn symlinks_are_never_followed_and_a_survey_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        fs::create_dir_all(home.join("cycles")).unwrap();
        let outside = tmp.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("theirs"), "x").unwrap();
        chmod(&outside.join("theirs"), 0o644);
        chmod(&outside, 0o755);
        symlink(&outside, home.join("cycles/dir-link")).unwrap();
        symlink(outside.join("theirs"), home.join("cycles/file-link")).unwrap();
        fs::write(home.join("cycles/mine.json"), "x").unwrap();
        chmod(&home.join("cycles/mine.json"), 0o644);
        chmod(&home, 0o700);
        chmod(&home.join("cycles"), 0o700);

        let survey = survey_tree(&home, &shared_with_runs);
        assert_eq!((survey.loose, survey.changed), (1, 0));
        assert_eq!(survey.examples, vec![(home.join("cycles/mine.json"), 0o644)]);
        assert_eq!(mode(&home.join("cycles/mine.json")), 0o644, "a survey changes nothing");

        let walk = tighten_tree(&home, &shared_with_runs);
        assert_eq!((walk.changed, walk.failed), (1, 0));
        assert_eq!((mode(&outside), mode(&outside.join("theirs"))), (0o755, 0o644));
        assert!(set_mode(&home.join("cycles/file-link"), false, 0o600, false).is_err(), "O_NOFOLLOW refuses a link");
        assert_eq!(mode(&outside.join("theirs")), 0o644);
    }

    #[test]
    fn a_missing_home_is_not_created_and_only_mirror_objects_and_run_are_shared() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(due(&tmp.path().join("none")), None);
        assert!(tighten_home(&tmp.path().join("none"), "now").is_none());
        assert!(!tmp.path().join("none").exists());
        assert!(shared_with_runs(Path::new("mirrors/acme/widget.git/objects")));
        assert!(shared_with_runs(Path::new("run")));
        assert!(!shared_with_runs(Path::new("mirrors/acme/widget.git/refs")));
        assert!(!shared_with_runs(Path::new("cycles/objects")));
        assert!(!shared_with_runs(Path::new("mirrors/acme/widget/objects")));
    }

    #[test]
    fn a_loose_sidecar_is_walked_once_and_a_private_one_not_at_all() {
        let tmp = tempfile::tempdir().unwrap();
        let sidecar = tmp.path().join("c.d");
        fs::create_dir_all(sidecar.join("runs")).unwrap();
        fs::write(sidecar.join("runs/1-abc.log"), "x").unwrap();
        chmod(&sidecar.join("runs/1-abc.log"), 0o644);
        chmod(&sidecar.join("runs"), 0o755);
        chmod(&sidecar, 0o700);
        assert_eq!(tighten_if_loose(&sidecar), None, "a 0700 sidecar is not walked");
        assert_eq!(mode(&sidecar.join("runs/1-abc.log")), 0o644);
        chmod(&sidecar, 0o755);
        assert_eq!(tighten_if_loose(&sidecar).unwrap().changed, 3);
        assert_eq!(
            (mode(&sidecar), mode(&sidecar.join("runs")), mode(&sidecar.join("runs/1-abc.log"))),
            (0o700, 0o700, 0o600)
        );
    }

    #[test]
    fn an_empty_home_is_recorded_without_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("h");
        fs::create_dir(&home).unwrap();
        chmod(&home, 0o700);
        assert_eq!(due(&home), Some(Due::Unrecorded));
        let done = tighten_home(&home, "now").unwrap();
        assert_eq!((done.walk.changed, done.walk.loose), (0, 0));
        assert_eq!(due(&home), None);
    }
}
