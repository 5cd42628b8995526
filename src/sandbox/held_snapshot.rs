//! Seeing a held file change, in both tiers (issue 57). The first tier makes held files
//! read-only ([`super::hold`]); the second cannot (Landlock only grants, so a file inside the
//! writable checkout cannot be carved out without breaking honest suites), so there forgeloop
//! compares, before and after each command, what each held path is: its file's device, inode,
//! mode, change time (to the nanosecond: a rewrite restored afterwards still moved it), size
//! and SHA-256 (of a link: of its target), or that nothing is there, or that a link or a file
//! stands where one of its directories should be. For a held `.py` file, its compiled forms
//! in `__pycache__` and the modules beside it that Python would import instead (a package
//! directory of the same name, an extension module) are recorded too.
//!
//! Nothing here follows a link: each name is opened from the checkout one at a time. What it
//! cannot see: a change undone between two snapshots that leaves the file's inode untouched —
//! a directory on the way swapped for another and swapped back while a command ran, say.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::spec::{RunPaths, held_names};

/// Opening a name as itself, for its metadata (a link included, where the platform can).
#[cfg(target_os = "linux")]
const AS_ITSELF: libc::c_int = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
#[cfg(not(target_os = "linux"))]
const AS_ITSELF: libc::c_int = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;

/// The held paths of a run as they were at one moment ([`HeldSnapshot::take`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSnapshot {
    entries: Vec<Entry>,
}

/// One way a held path changed between two snapshots, in words for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldChange {
    /// The held path (relative to the checkout).
    pub path: String,
    /// What happened to it ("rewritten", "removed", "a compiled form appeared: …").
    pub what: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    path: String,
    found: Found,
    /// For a `.py` file: its compiled forms in `__pycache__` (or `__pycache__` itself when it
    /// is not a directory), by path relative to the checkout.
    compiled: Vec<(String, Stamp)>,
    /// For a `.py` file: what Python imports before it (a package directory of its name, an
    /// extension module), by path relative to the checkout.
    shadows: Vec<(String, Stamp)>,
}

/// What stood at a held path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    /// Nothing.
    Absent,
    /// A link or a file stands where the named directory of the path should be: the path
    /// leads elsewhere (not followed).
    Diverted(String),
    /// It could not be read (the error).
    Unreadable(String),
    /// A file, link, directory or other node, and for a file or link a digest of its content.
    Present { stamp: Stamp, sha256: Option<[u8; 32]> },
}

/// A node's identity and the times and size that any change to it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    /// 0 a file, 1 a directory, 2 a link, 3 anything else.
    kind: u8,
    dev: u64,
    ino: u64,
    mode: u32,
    ctime: i64,
    ctime_nsec: i64,
    size: u64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        let kind = match meta.file_type() {
            t if t.is_file() => 0,
            t if t.is_dir() => 1,
            t if t.is_symlink() => 2,
            _ => 3,
        };
        Stamp {
            kind,
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
            size: meta.size(),
        }
    }
}

impl HeldSnapshot {
    /// What each of `run.held` is now, in the checkout as the host sees it
    /// (`run.checkout_source`, else `run.checkout`). Never fails: a path that cannot be read
    /// is recorded as such (and so differs from a readable one).
    pub fn take(run: &RunPaths) -> HeldSnapshot {
        let checkout = run.checkout_source.as_deref().unwrap_or(&run.checkout);
        let root = open_dir_path(checkout);
        let mut listings = Listings::new();
        let mut entries = Vec::new();
        for path in &run.held {
            let Some(names) = held_names(path) else {
                let found = Found::Unreadable("not a path in the checkout".into());
                entries.push(Entry { path: path.clone(), found, compiled: Vec::new(), shadows: Vec::new() });
                continue;
            };
            let entry = match &root {
                Ok(root) => look(root, path, &names, &mut listings),
                Err(error) => Entry {
                    path: path.clone(),
                    found: Found::Unreadable(format!("the checkout: {error}")),
                    compiled: Vec::new(),
                    shadows: Vec::new(),
                },
            };
            entries.push(entry);
        }
        HeldSnapshot { entries }
    }

    /// The held paths that changed since this snapshot (each once, in the order of
    /// `run.held`): their file rewritten, replaced, removed, made, moved out of reach, its
    /// mode or change time moved (a rewrite undone afterwards), or, for a `.py` file, a
    /// compiled form or a module Python would import instead appeared or changed.
    pub fn changed(&self, run: &RunPaths) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for change in self.changes(run) {
            if !paths.contains(&change.path) {
                paths.push(change.path);
            }
        }
        paths
    }

    /// [`HeldSnapshot::changed`], saying how each path changed.
    pub fn changes(&self, run: &RunPaths) -> Vec<HeldChange> {
        let now = HeldSnapshot::take(run);
        let mut changes = Vec::new();
        for after in &now.entries {
            let before = self.entries.iter().find(|e| e.path == after.path);
            let mut say = |what: String| changes.push(HeldChange { path: after.path.clone(), what });
            let Some(before) = before else {
                say("was not held before".into());
                continue;
            };
            if let Some(what) = describe(&before.found, &after.found) {
                say(what);
            }
            for (label, was, is) in [
                ("a compiled form", &before.compiled, &after.compiled),
                ("a module Python imports instead", &before.shadows, &after.shadows),
            ] {
                for (path, stamp) in is {
                    match was.iter().find(|(p, _)| p == path) {
                        None => say(format!("{label} appeared: {path}")),
                        Some((_, old)) if old != stamp => say(format!("{label} changed: {path}")),
                        Some(_) => {}
                    }
                }
            }
        }
        changes
    }

    /// The held `.py` files for which, at this snapshot, a compiled form or a module Python
    /// imports instead already stood beside them (from the tree itself, say): what runs for
    /// such a path may not be its source.
    pub fn shadowed(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| !e.compiled.is_empty() || !e.shadows.is_empty())
            .map(|e| e.path.clone())
            .collect()
    }
}

/// How a held path's own node changed, if it did.
fn describe(before: &Found, after: &Found) -> Option<String> {
    let what = match (before, after) {
        _ if before == after => return None,
        (_, Found::Absent) => "removed".to_owned(),
        (_, Found::Diverted(at)) => format!("now behind a link or a file at {at}"),
        (_, Found::Unreadable(why)) => format!("no longer readable: {why}"),
        (Found::Absent, _) => "made, where the checkout had nothing".to_owned(),
        (Found::Present { stamp: was, sha256: old }, Found::Present { stamp: is, sha256: new }) => {
            if (was.dev, was.ino) != (is.dev, is.ino) {
                "replaced by another file".to_owned()
            } else if was.kind != is.kind || old != new {
                "rewritten".to_owned()
            } else if was.mode != is.mode {
                "its mode changed".to_owned()
            } else {
                "changed and changed back (its change time moved)".to_owned()
            }
        }
        _ => "changed".to_owned(),
    };
    Some(what)
}

/// The names in each directory listed for one snapshot (by its path from the checkout, a
/// `__pycache__` included): a directory of many held modules is read once, not once for each.
type Listings = BTreeMap<String, Vec<String>>;

/// Walks to `names` from the checkout's `root`, never following a link.
fn look(root: &OwnedFd, path: &str, names: &[&str], listings: &mut Listings) -> Entry {
    let mut entry = Entry { path: path.to_owned(), found: Found::Absent, compiled: Vec::new(), shadows: Vec::new() };
    let Some((file, parents)) = names.split_last() else { return entry };
    let mut dir = match root.try_clone() {
        Ok(dir) => dir,
        Err(error) => {
            entry.found = Found::Unreadable(error.to_string());
            return entry;
        }
    };
    for (i, name) in parents.iter().enumerate() {
        let at = || parents[..=i].join("/");
        match open_at(&dir, name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) {
            Ok(next) => dir = next,
            Err(error) => {
                entry.found = match error.raw_os_error() {
                    Some(libc::ENOENT) => Found::Absent,
                    Some(libc::ELOOP | libc::ENOTDIR) => Found::Diverted(at()),
                    _ => Found::Unreadable(format!("{}: {error}", at())),
                };
                return entry;
            }
        }
    }
    entry.found = node(&dir, file);
    if let Some(stem) = file.strip_suffix(".py") {
        let prefix = parents.iter().map(|p| format!("{p}/")).collect::<String>();
        entry.shadows = shadows(&dir, stem, &prefix, listings);
        entry.compiled = compiled(&dir, stem, &prefix, listings);
    }
    entry
}

/// What `name` in `dir` is, with a digest of a file's content or a link's target.
fn node(dir: &OwnedFd, name: &str) -> Found {
    let meta = match stat_at(dir, name) {
        Ok(Some(meta)) => meta,
        Ok(None) => return Found::Absent,
        Err(error) => return Found::Unreadable(error.to_string()),
    };
    let mut stamp = Stamp::of(&meta);
    let sha256 = if meta.file_type().is_symlink() {
        match read_link_at(dir, name) {
            Ok(target) => Some(Sha256::digest(&target).into()),
            Err(error) => return Found::Unreadable(error.to_string()),
        }
    } else if meta.is_file() {
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
        let digest = open_at(dir, name, flags).map(std::fs::File::from).and_then(|mut file| {
            // What was read is what is recorded, should the name have changed in between.
            stamp = Stamp::of(&file.metadata()?);
            let mut hasher = Sha256::new();
            std::io::copy(&mut file, &mut hasher)?;
            Ok(hasher.finalize().into())
        });
        match digest {
            Ok(digest) => Some(digest),
            Err(error) => return Found::Unreadable(error.to_string()),
        }
    } else {
        None
    };
    Found::Present { stamp, sha256 }
}

/// Beside `stem.py` in `dir`: a directory (or anything) named `stem` — a package Python
/// imports first — and extension modules `stem.*so`.
fn shadows(dir: &OwnedFd, stem: &str, prefix: &str, listings: &mut Listings) -> Vec<(String, Stamp)> {
    let dotted = format!("{stem}.");
    let names = listings.entry(prefix.to_owned()).or_insert_with(|| list(dir));
    let names = names.iter().filter(|n| *n == stem || (n.starts_with(&dotted) && n.ends_with(".so")));
    stamped(dir, names.cloned(), prefix)
}

/// `stem`'s compiled forms in `dir/__pycache__` (`stem.cpython-311.pyc`, the test runners'
/// own tags, optimisation levels), or `__pycache__` itself when it is a link or not a directory.
fn compiled(dir: &OwnedFd, stem: &str, prefix: &str, listings: &mut Listings) -> Vec<(String, Stamp)> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    match open_at(dir, "__pycache__", flags) {
        Ok(cache) => {
            let dotted = format!("{stem}.");
            let at = format!("{prefix}__pycache__/");
            let names = listings.entry(at.clone()).or_insert_with(|| list(&cache));
            let names = names.iter().filter(|n| n.starts_with(&dotted) && n.ends_with(".pyc"));
            stamped(&cache, names.cloned(), &at)
        }
        Err(error) if error.raw_os_error() == Some(libc::ENOENT) => Vec::new(),
        Err(_) => stamped(dir, ["__pycache__".to_owned()].into_iter(), prefix),
    }
}

fn stamped(dir: &OwnedFd, names: impl Iterator<Item = String>, prefix: &str) -> Vec<(String, Stamp)> {
    let mut out: Vec<(String, Stamp)> = names
        .filter_map(|name| {
            let meta = stat_at(dir, &name).ok().flatten()?;
            Some((format!("{prefix}{name}"), Stamp::of(&meta)))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The names in `dir` (a fresh open of it, so each listing starts at the beginning).
fn list(dir: &OwnedFd) -> Vec<String> {
    let Ok(fresh) = open_at(dir, ".", libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    // SAFETY: fdopendir takes over the descriptor (released from the OwnedFd first), readdir
    // returns entries valid until the next call, and closedir closes both.
    unsafe {
        let handle = libc::fdopendir(std::os::fd::IntoRawFd::into_raw_fd(fresh));
        if handle.is_null() {
            return names;
        }
        loop {
            let entry = libc::readdir(handle);
            if entry.is_null() {
                break;
            }
            let name = std::ffi::CStr::from_ptr((*entry).d_name.as_ptr());
            let name = name.to_string_lossy();
            if name != "." && name != ".." {
                names.push(name.into_owned());
            }
        }
        libc::closedir(handle);
    }
    names
}

fn open_dir_path(path: &std::path::Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL byte"))?;
    // SAFETY: open reads the NUL-terminated path; a non-negative result is ours.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_at(dir: &OwnedFd, name: &str, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    let c = CString::new(name).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL byte"))?;
    // SAFETY: openat reads the NUL-terminated name; a non-negative result is ours.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The metadata of `name` in `dir` itself (a link is not followed); `None` when nothing is there.
fn stat_at(dir: &OwnedFd, name: &str) -> std::io::Result<Option<std::fs::Metadata>> {
    match open_at(dir, name, AS_ITSELF) {
        Ok(fd) => std::fs::File::from(fd).metadata().map(Some),
        Err(error) if error.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(error) => Err(error),
    }
}

fn read_link_at(dir: &OwnedFd, name: &str) -> std::io::Result<Vec<u8>> {
    let c = CString::new(name).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL byte"))?;
    let mut buffer = vec![0u8; 4096];
    // SAFETY: readlinkat writes at most the buffer's length into the buffer we own.
    let n = unsafe { libc::readlinkat(dir.as_raw_fd(), c.as_ptr(), buffer.as_mut_ptr().cast(), buffer.len()) };
    let n = usize::try_from(n).map_err(|_| std::io::Error::last_os_error())?;
    buffer.truncate(n);
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn run(checkout: &Path, held: &[&str]) -> RunPaths {
        RunPaths {
            checkout: checkout.to_path_buf(),
            checkout_source: None,
            gitdir: None,
            tmp: checkout.join("../tmp"),
            home: checkout.join("../home"),
            root: checkout.join("../root"),
            cache: None,
            cache_env: BTreeMap::new(),
            cache_mount: None,
            proxy_ports: BTreeMap::new(),
            held: held.iter().map(|s| (*s).to_owned()).collect(),
            support: None,
        }
    }

    #[test]
    fn an_untouched_checkout_has_no_change_and_reading_it_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_x.py"), "assert True\n").unwrap();
        let run = run(dir.path(), &["tests/test_x.py", "tests/missing.py", "gone/deeper.sh"]);
        let before = HeldSnapshot::take(&run);
        let _ = std::fs::read(dir.path().join("tests/test_x.py")).unwrap();
        std::fs::write(dir.path().join("tests/other.py"), "").unwrap();
        assert_eq!(before.changed(&run), Vec::<String>::new());
        assert!(before.shadowed().is_empty());
    }

    /// Returns once the kernel stamps change times later than `file`'s: at most one clock tick
    /// on a kernel whose timestamps are coarse, at once on one whose are fine-grained.
    fn after_a_tick(file: &Path) {
        let stamp = |p: &Path| {
            let meta = std::fs::metadata(p).unwrap();
            (meta.ctime(), meta.ctime_nsec())
        };
        let probe = file.with_extension("probe");
        loop {
            std::fs::write(&probe, "").unwrap();
            if stamp(&probe) != stamp(file) {
                break;
            }
        }
        std::fs::remove_file(probe).unwrap();
    }

    #[test]
    fn a_rewrite_undone_is_still_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.sh");
        std::fs::write(&file, "exit 1\n").unwrap();
        let run = run(dir.path(), &["t.sh"]);
        let before = HeldSnapshot::take(&run);
        after_a_tick(&file);
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, "exit 0\n").unwrap();
        std::fs::write(&file, "exit 1\n").unwrap();
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
        let changes = before.changes(&run);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].path, "t.sh");
        assert!(changes[0].what.contains("changed and changed back"), "{changes:?}");
    }

    #[test]
    fn each_kind_of_change_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("d")).unwrap();
        for name in ["a.sh", "b.sh", "c.sh", "d/e.sh"] {
            std::fs::write(p.join(name), "x\n").unwrap();
        }
        let run = run(p, &["a.sh", "b.sh", "c.sh", "d/e.sh", "new.sh"]);
        let before = HeldSnapshot::take(&run);
        std::fs::write(p.join("a.sh"), "y\n").unwrap();
        std::fs::remove_file(p.join("b.sh")).unwrap();
        std::fs::write(p.join("c.tmp"), "x\n").unwrap();
        std::fs::rename(p.join("c.tmp"), p.join("c.sh")).unwrap();
        std::fs::rename(p.join("d"), p.join("d.old")).unwrap();
        std::os::unix::fs::symlink("d.old", p.join("d")).unwrap();
        std::fs::write(p.join("new.sh"), "x\n").unwrap();
        let what: Vec<(String, String)> = before.changes(&run).into_iter().map(|c| (c.path, c.what)).collect();
        assert_eq!(
            what,
            [
                ("a.sh", "rewritten"),
                ("b.sh", "removed"),
                ("c.sh", "replaced by another file"),
                ("d/e.sh", "now behind a link or a file at d"),
                ("new.sh", "made, where the checkout had nothing"),
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
    }

    #[test]
    fn compiled_forms_and_shadowing_modules_of_a_held_module_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("tests")).unwrap();
        std::fs::write(p.join("tests/test_x.py"), "").unwrap();
        let run = run(p, &["tests/test_x.py"]);
        let before = HeldSnapshot::take(&run);
        std::fs::create_dir(p.join("tests/__pycache__")).unwrap();
        // Another module's compiled form is not this one's.
        std::fs::write(p.join("tests/__pycache__/test_xy.cpython-311.pyc"), "").unwrap();
        assert!(before.changed(&run).is_empty());
        std::fs::write(p.join("tests/__pycache__/test_x.cpython-311.pyc"), "").unwrap();
        std::fs::create_dir(p.join("tests/test_x")).unwrap();
        std::fs::write(p.join("tests/test_x.abi3.so"), "").unwrap();
        let what: Vec<String> = before.changes(&run).into_iter().map(|c| c.what).collect();
        assert_eq!(
            what,
            [
                "a compiled form appeared: tests/__pycache__/test_x.cpython-311.pyc",
                "a module Python imports instead appeared: tests/test_x",
                "a module Python imports instead appeared: tests/test_x.abi3.so",
            ]
        );
        assert_eq!(HeldSnapshot::take(&run).shadowed(), ["tests/test_x.py"]);
    }

    #[test]
    fn a_held_link_is_recorded_as_a_link_and_its_target_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "one\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("held.sh")).unwrap();
        let run = run(dir.path(), &["held.sh"]);
        let before = HeldSnapshot::take(&run);
        // The target outside changing is not the held link changing.
        std::fs::write(outside.path().join("secret"), "two\n").unwrap();
        assert!(before.changed(&run).is_empty());
        std::fs::remove_file(dir.path().join("held.sh")).unwrap();
        std::os::unix::fs::symlink("elsewhere", dir.path().join("held.sh")).unwrap();
        assert_eq!(before.changed(&run), ["held.sh"]);
    }
}
