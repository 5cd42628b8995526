//! The directory of one run (design §5.6): `<home>/run/<random>/`, holding the checkout, the
//! private `/tmp` and `HOME`, and the first tier's new root. The run root and each run
//! directory are `0700`: no other account can reach a file a test leaves there, not even a
//! setuid one. A run directory holds a `lock` file locked while its run lives, so `gc` can
//! sweep the directories of runs whose process is gone.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::spec::{Account, RunPaths};
use crate::store::nofollow;
use crate::store::tree::{self, Leftover};

/// The file locked by a live run.
const LOCK: &str = "lock";
/// A run directory without a `lock` younger than this is never swept: its run may not have
/// locked it yet.
const SWEEP_GRACE: Duration = Duration::from_secs(60);

/// One run's directory; removed (whatever the test left in it) when dropped.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    _lock: File,
    removed: bool,
}

impl RunDir {
    /// Creates a fresh run directory below `root` (made `0700` if needed) and locks it.
    pub fn create(root: &Path) -> io::Result<RunDir> {
        private_root(root)?;
        let dir = tempfile::Builder::new().prefix("").rand_bytes(16).tempdir_in(root)?.keep();
        RunDir::fill(dir)
    }

    /// A fresh run directory at the stable `<root>/<key>`, for a run that holds the lock of a
    /// repository's cache slot (`key` names the slot): the same paths from one run of the
    /// slot to the next, so incremental builds recognise their sources. What a dead run of the
    /// slot left there is removed first (the caller's slot lock says nobody else is using it).
    pub fn create_at(root: &Path, key: &Path) -> io::Result<RunDir> {
        private_root(root)?;
        let dir = root.join(key);
        if let Some(parent) = dir.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
        }
        tree::remove_tree(&dir).map_err(|left| io::Error::other(left.to_string()))?;
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        RunDir::fill(dir)
    }

    fn fill(dir: PathBuf) -> io::Result<RunDir> {
        let made = (|| {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
            // Locked before it gets its name: a `lock` file that `sweep` finds free is a dead run's.
            let fresh = dir.join("lock.new");
            let lock = nofollow::open(OpenOptions::new().create_new(true).write(true).mode(0o600), &fresh)?;
            lock.try_lock().map_err(io::Error::other)?;
            std::fs::rename(&fresh, dir.join(LOCK))?;
            for sub in ["tmp", "home"] {
                std::fs::DirBuilder::new().mode(0o700).create(dir.join(sub))?;
            }
            // The first tier's `/`: every account inside must be able to walk it (the run
            // directory around it keeps everyone else out).
            std::fs::DirBuilder::new().mode(0o755).create(dir.join("root"))?;
            std::fs::set_permissions(dir.join("root"), std::fs::Permissions::from_mode(0o755))?;
            Ok(lock)
        })();
        match made {
            Ok(lock) => Ok(RunDir { dir, _lock: lock, removed: false }),
            Err(e) => {
                let _ = tree::remove_tree(&dir);
                Err(e)
            }
        }
    }

    /// The run directory itself.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The run's private temporary directory.
    pub fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// The run's private `HOME`.
    pub fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// The run's support directory (`support/`, made when missing) for forgeloop's own files
    /// of the run, to name in [`RunPaths::support`]: apart from every tree the run writes, as
    /// the sandbox requires, and open to every account (`0755`; its files should be `0644`),
    /// so the account tests run as reads it (inside the sandbox, read-only).
    pub fn support(&self) -> io::Result<PathBuf> {
        let dir = self.dir.join("support");
        match std::fs::DirBuilder::new().mode(0o755).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.symlink_metadata()?.is_dir() => {}
            Err(e) => return Err(e),
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        Ok(dir)
    }

    /// The run's paths, with the checkout made in it (a directory of its own).
    pub fn paths(&self, checkout: &Path, gitdir: Option<&Path>) -> RunPaths {
        RunPaths {
            checkout: checkout.to_path_buf(),
            checkout_source: None,
            gitdir: gitdir.map(Path::to_path_buf),
            tmp: self.tmp(),
            home: self.home(),
            root: self.dir.join("root"),
            cache: None,
            cache_env: BTreeMap::new(),
            cache_mount: None,
            proxy_ports: BTreeMap::new(),
            held: Vec::new(),
            support: None,
        }
    }

    /// Gives what the test may write (the checkout, its git directory, `/tmp`, `HOME`) to the
    /// account it runs as, when forgeloop is root (design §5.6): its files then belong to that
    /// account, and the kernel's own permissions keep it out of root's.
    pub fn hand_over(&self, paths: &RunPaths, to: Account) -> Result<(), Leftover> {
        for path in
            [Some(&paths.checkout), paths.gitdir.as_ref(), Some(&paths.tmp), Some(&paths.home)].into_iter().flatten()
        {
            tree::chown_tree(path, to.uid, to.gid)?;
        }
        Ok(())
    }

    /// Removes the directory and everything the run left in it.
    pub fn remove(mut self) -> Result<(), Leftover> {
        self.removed = true;
        tree::remove_tree(&self.dir)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.removed {
            let _ = tree::remove_tree(&self.dir);
        }
    }
}

/// Creates `root` (and its parents) `0700` and refuses one that is a link, belongs to another
/// account, or that others could enter.
fn private_root(root: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(root)?;
    let meta = root.symlink_metadata()?;
    // SAFETY: geteuid has no arguments and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} must be a directory of yours (not a link); remove it and retry", root.display()),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// What [`sweep`] did.
#[derive(Debug, Default, serde::Serialize)]
pub struct Swept {
    /// Run directories of runs that are gone, removed.
    pub removed: usize,
    /// Run directories whose run still lives.
    pub live: usize,
    /// What could not be removed.
    pub failed: Vec<String>,
}

/// Removes the run directories below `root` whose run is over: a killed forgeloop leaves its
/// run directory behind, and only an unlocked (or lockless, older) one is taken. `dry_run`
/// counts them without removing. Run directories of cache slots sit deeper
/// (`<owner>/<repo>/<slot>`): a directory that holds none of a run's files is walked into.
pub fn sweep(root: &Path, dry_run: bool) -> Swept {
    let mut swept = Swept::default();
    sweep_in(root, dry_run, 0, &mut swept);
    swept
}

fn sweep_in(dir: &Path, dry_run: bool, depth: usize, swept: &mut Swept) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = path.symlink_metadata() else { continue };
        if !meta.is_dir() {
            continue;
        }
        let is_run =
            ["lock", "lock.new", "tmp", "home", "root"].iter().any(|n| path.join(n).symlink_metadata().is_ok());
        if !is_run && depth < 2 && std::fs::read_dir(&path).is_ok_and(|mut e| e.next().is_some()) {
            sweep_in(&path, dry_run, depth + 1, swept);
            continue;
        }
        let young = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_none_or(|age| age < SWEEP_GRACE);
        let stale = match nofollow::open(OpenOptions::new().read(true), &path.join(LOCK)) {
            Ok(file) => file.try_lock().is_ok(),
            Err(_) => !young,
        };
        if !stale {
            swept.live += 1;
            continue;
        }
        if dry_run {
            swept.removed += 1;
            continue;
        }
        match tree::remove_tree(&path) {
            Ok(()) => swept.removed += 1,
            Err(left) => swept.failed.push(format!("{}: {left}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_directory_is_private_and_gone_after_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run");
        let run = RunDir::create(&root).unwrap();
        let path = run.path().to_path_buf();
        for p in [&root, &path] {
            assert_eq!(p.metadata().unwrap().permissions().mode() & 0o777, 0o700, "{}", p.display());
        }
        std::fs::create_dir_all(run.tmp().join("a/b")).unwrap();
        std::fs::set_permissions(run.tmp().join("a"), std::fs::Permissions::from_mode(0o000)).unwrap();
        run.remove().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_sweep_takes_only_the_directories_of_runs_that_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run");
        let live = RunDir::create(&root).unwrap();
        // What a killed run leaves: its directory, and a lock file nobody holds.
        let dead = root.join("dead");
        std::fs::create_dir_all(dead.join("tmp/x")).unwrap();
        std::fs::write(dead.join(LOCK), "").unwrap();
        let young = root.join("young");
        std::fs::create_dir_all(&young).unwrap();
        let old = std::fs::FileTimes::new().set_modified(SystemTime::now() - Duration::from_secs(3600));
        for d in [&dead, &live.path().to_path_buf()] {
            File::open(d).unwrap().set_times(old).unwrap();
        }
        assert_eq!(sweep(&root, true).removed, 1);
        assert!(dead.exists(), "a dry run removed something");
        let swept = sweep(&root, false);
        assert_eq!((swept.removed, swept.live), (1, 2), "{swept:?}");
        // A dead run's directory goes at once, however young: its lock file is free.
        let killed = root.join("killed");
        std::fs::create_dir_all(&killed).unwrap();
        std::fs::write(killed.join(LOCK), "").unwrap();
        assert_eq!(sweep(&root, false).removed, 1);
        assert!(!killed.exists());
        // A cache slot's run directory, deeper down, is found too.
        let slot = RunDir::create_at(&root, Path::new("acme/widget/0")).unwrap();
        let dead_slot = root.join("acme/widget/1");
        std::fs::create_dir_all(dead_slot.join("tmp")).unwrap();
        std::fs::write(dead_slot.join(LOCK), "").unwrap();
        let swept = sweep(&root, false);
        assert_eq!(swept.removed, 1, "{swept:?}");
        assert!(slot.path().exists() && !dead_slot.exists());
        assert!(!dead.exists());
        assert!(live.path().exists() && young.exists());
    }
}
