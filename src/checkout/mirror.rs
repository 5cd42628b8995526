//! The per-repository bare mirror: where it lives, who may use it, and fetching into it.
//!
//! One mirror per base repository at `<root>/<owner>/<repo>.git` (lowercase, as GitHub names are
//! case-insensitive), guarded by an exclusive lock on `<root>/<owner>/<repo>.git.lock`. While in
//! use it only grows: fetches add packs, and `gc.auto=0` keeps a stray `git gc` from dropping
//! objects that a checkout borrows through `objects/info/alternates`. It starts shallow (PR heads
//! fetched at depth 1) and is deepened in place when a profile asks for full history (design
//! §5.2.2); `forgeloop gc` deletes whole mirrors unused for 30 days, under their lock.
//!
//! Private like the rest of the home (design §2.4): the mirror directory and its lock are
//! created 0700/0600, and what libgit2 writes with umask-dependent modes (`config`, `HEAD`,
//! refs, `shallow`, `FETCH_HEAD`) is made 0700/0600 after each init and fetch. Not `objects/`:
//! a sandboxed run as another user reads the objects its checkout borrows (libgit2 writes them
//! read-only, 0444), and nobody else can reach them through the 0700 mirror directory.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use git2::{AutotagOption, FetchOptions, FetchPrune, Oid, RemoteCallbacks, Repository, RepositoryInitOptions};

use super::FetchStats;
use super::auth::{Auth, TokenScope};
use super::error::{CheckoutError, scrub};
use crate::domain::pr_ref::RepoName;
use crate::store::{private, tighten};

const LOCK_POLL: Duration = Duration::from_millis(25);

pub(crate) struct MirrorPaths {
    pub dir: PathBuf,
    pub lock: PathBuf,
}

/// Where `repo`'s mirror and lock file live under `root`.
pub(crate) fn mirror_paths(root: &Path, repo: &RepoName) -> Result<MirrorPaths, CheckoutError> {
    let owner = repo.owner().to_ascii_lowercase();
    let name = repo.name().to_ascii_lowercase();
    // RepoName already forbids separators and dot-only names; this keeps the guarantee local.
    let stays_inside = |part: &str| {
        let mut parts = Path::new(part).components();
        matches!((parts.next(), parts.next()), (Some(Component::Normal(_)), None))
    };
    if !stays_inside(&owner) || !stays_inside(&format!("{name}.git")) {
        return Err(CheckoutError::Mirror {
            step: "mirror path",
            path: root.to_path_buf(),
            detail: format!("repository name {repo} would leave the mirrors directory"),
        });
    }
    let owner_dir = root.join(owner);
    Ok(MirrorPaths { dir: owner_dir.join(format!("{name}.git")), lock: owner_dir.join(format!("{name}.git.lock")) })
}

/// Held while the mirror is fetched into and read from; released on drop (closing the file).
pub(crate) struct MirrorLock {
    _file: File,
}

/// Takes the exclusive lock, waiting for other processes or threads; gives up when cancelled.
pub(crate) fn lock(path: &Path, cancel: Option<&AtomicBool>) -> Result<MirrorLock, CheckoutError> {
    let disk = |action, source| CheckoutError::Disk { action, path: path.to_path_buf(), source };
    if let Some(parent) = path.parent() {
        private::create_dir_all(parent).map_err(|e| disk("creating the mirrors directory for", e))?;
    }
    let file = private::open(OpenOptions::new().create(true).truncate(false).write(true), path)
        .map_err(|e| disk("opening the mirror lock", e))?;
    let Some(cancel) = cancel else {
        file.lock().map_err(|e| disk("locking", e))?;
        return Ok(MirrorLock { _file: file });
    };
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(CheckoutError::Cancelled);
        }
        match file.try_lock() {
            Ok(()) => return Ok(MirrorLock { _file: file }),
            Err(TryLockError::WouldBlock) => std::thread::sleep(LOCK_POLL),
            Err(TryLockError::Error(e)) => return Err(disk("locking", e)),
        }
    }
}

/// Takes the mirror for fetching and reading: its lock, then the git lock files a killed holder
/// left behind cleared (below). Every user of a mirror comes in here.
pub(crate) fn take(paths: &MirrorPaths, cancel: Option<&AtomicBool>) -> Result<MirrorLock, CheckoutError> {
    let held = lock(&paths.lock, cancel)?;
    clear_stale_git_locks(&paths.dir)?;
    Ok(held)
}

/// Removes the lock files git leaves in the mirror when a process dies mid-fetch
/// (`shallow.lock`, `packed-refs.lock`, `FETCH_HEAD.lock`, a ref's `.lock` under `refs/`).
/// Call with the mirror lock held: only its holder writes in the mirror, so any such file is
/// stale. Left in place, each one fails every later fetch ("failed to lock file …
/// shallow.lock"), and three in a row block the cycle. Returns how many were removed.
fn clear_stale_git_locks(dir: &Path) -> Result<usize, CheckoutError> {
    fn sweep(dir: &Path, recurse: bool, removed: &mut usize) -> std::io::Result<()> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            // Not followed: a symlink is neither descended into nor taken for a directory.
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                if recurse {
                    sweep(&path, true, removed)?;
                }
            } else if path.extension().is_some_and(|e| e == "lock") {
                fs::remove_file(&path)?;
                *removed += 1;
            }
        }
        Ok(())
    }
    let mut removed = 0;
    sweep(dir, false, &mut removed).and_then(|()| sweep(&dir.join("refs"), true, &mut removed)).map_err(|source| {
        CheckoutError::Disk { action: "removing a stale git lock in", path: dir.to_path_buf(), source }
    })?;
    Ok(removed)
}

/// Opens the bare mirror, creating (or re-initialising a half-created) one; true if created.
pub(crate) fn open_or_init(dir: &Path) -> Result<(Repository, bool), CheckoutError> {
    let fail = |step, e: git2::Error| CheckoutError::Mirror { step, path: dir.to_path_buf(), detail: e.to_string() };
    if let Ok(repo) = Repository::open_bare(dir) {
        return Ok((repo, false));
    }
    // Created 0700 first: libgit2 would make it 0755 (or looser, under a loose umask).
    private::create_dir_all(dir).map_err(|source| CheckoutError::Disk {
        action: "creating the mirror",
        path: dir.to_path_buf(),
        source,
    })?;
    let repo = Repository::init_opts(dir, RepositoryInitOptions::new().bare(true).external_template(false))
        .map_err(|e| fail("init", e))?;
    repo.config().and_then(|mut c| c.set_i32("gc.auto", 0)).map_err(|e| fail("config", e))?;
    keep_private(dir);
    Ok((repo, true))
}

/// Makes the mirror's metadata 0700/0600 again after libgit2 wrote to it; leaves `objects/`
/// readable (see the module doc). Best effort: the 0700 mirror directory already keeps others
/// out, so a failure here does not fail the run.
pub(crate) fn keep_private(dir: &Path) {
    let _ = tighten::tighten_tree(dir, &|rel| rel == Path::new("objects"));
}

/// The file whose mtime says when the mirror was last used (touched under the lock on each use;
/// atime is not trusted: `noatime`/`relatime` mounts do not keep it).
pub(crate) const LAST_USED_FILE: &str = "forgeloop-last-used";

/// Records that the mirror is being used now (call with the lock held).
pub(crate) fn touch_last_used(dir: &Path) -> Result<(), CheckoutError> {
    let path = dir.join(LAST_USED_FILE);
    let file = private::open(OpenOptions::new().create(true).truncate(false).write(true), &path)
        .map_err(|source| CheckoutError::Disk { action: "recording the last use of", path: path.clone(), source })?;
    file.set_modified(std::time::SystemTime::now()).map_err(|source| CheckoutError::Disk {
        action: "recording the last use of",
        path,
        source,
    })
}

/// True if the mirror has no refs yet (new, or its first fetch failed).
pub(crate) fn has_no_refs(repo: &Repository) -> bool {
    repo.references().map(|mut refs| refs.next().is_none()).unwrap_or(true)
}

/// How much history a fetch asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Everything the mirror lacks (a full mirror, or a transport without shallow support).
    Full,
    /// The wanted commit alone (its parents become shallow roots).
    One,
    /// Everything, removing the mirror's shallow roots (`git fetch --unshallow`).
    Unshallow,
    /// The wanted commits and this many generations in all (`git fetch --depth N`): deepens a
    /// shallow mirror until two commits meet (the merge base, design §5.2.1).
    Of(u16),
}

impl Depth {
    fn libgit2(self) -> i32 {
        match self {
            Depth::Full => 0,
            Depth::One => 1,
            // GIT_FETCH_DEPTH_UNSHALLOW
            Depth::Unshallow => i32::MAX,
            Depth::Of(n) => i32::from(n),
        }
    }
}

/// The local ref a PR head is fetched into.
pub(crate) fn pr_ref_name(pr_number: u64) -> String {
    format!("refs/forgeloop/pull/{pr_number}")
}

/// The local ref GitHub's merge of a PR (`refs/pull/N/merge`) is fetched into.
pub(crate) fn merge_ref_name(pr_number: u64) -> String {
    format!("refs/forgeloop/merge/{pr_number}")
}

/// Removes ref `name` from the mirror; one that is not there is no error.
pub(crate) fn delete_ref(repo: &Repository, name: &str) -> Result<(), CheckoutError> {
    match repo.find_reference(name) {
        Ok(mut found) => found.delete().map_err(|e| CheckoutError::Mirror {
            step: "removing an old ref",
            path: repo.path().to_path_buf(),
            detail: e.message().to_owned(),
        }),
        Err(_) => Ok(()),
    }
}

/// Takes `commit` out of the mirror's shallow roots when every one of `parents` is in the
/// mirror. A depth-1 fetch marks GitHub's merge commit shallow although its parents (the base
/// tip and the head, fetched beside it) are there; git in the checkout, which is given the
/// mirror's roots, would then see a merge without parents (`HEAD^1` unknown).
pub(crate) fn unshallow_with_parents(repo: &Repository, commit: Oid, parents: &[Oid]) -> Result<(), CheckoutError> {
    if parents.iter().any(|p| repo.find_commit(*p).is_err()) {
        return Ok(());
    }
    let path = repo.path().join("shallow");
    let disk = |source| CheckoutError::Disk { action: "updating the shallow roots of", path: path.clone(), source };
    let roots = match fs::read_to_string(&path) {
        Ok(roots) => roots,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(disk(e)),
    };
    let wanted = commit.to_string();
    if !roots.lines().any(|line| line.trim() == wanted) {
        return Ok(());
    }
    let kept: String = roots.lines().filter(|line| line.trim() != wanted).map(|line| format!("{line}\n")).collect();
    if kept.trim().is_empty() {
        fs::remove_file(&path).map_err(disk)
    } else {
        crate::store::atomic::write_atomic(&path, kept.as_bytes()).map_err(disk)
    }
}

/// Reads a ref's commit, if it exists.
pub(crate) fn ref_target(repo: &Repository, name: &str) -> Option<Oid> {
    repo.find_reference(name).ok().and_then(|r| r.target())
}

/// Makes sure `wanted` is in the mirror: fetched by its SHA at depth 1 over the network (the
/// whole history from a local path, which has no shallow support) when it is not. `None` for
/// `clone_url` works offline and says the commit is missing.
pub(crate) fn fetch_commit(
    repo: &Repository,
    wanted: Oid,
    clone_url: Option<&str>,
    token: Option<&str>,
    step: &'static str,
) -> Result<(), CheckoutError> {
    if repo.find_commit(wanted).is_ok() {
        return Ok(());
    }
    let Some(clone_url) = clone_url else {
        return Err(CheckoutError::CommitMissing { sha: wanted.to_string() });
    };
    fetch_at_depth_one(repo, &format!("+{wanted}:refs/forgeloop/sha/{wanted}"), clone_url, token, step)?;
    repo.find_commit(wanted).map(|_| ()).map_err(|_| CheckoutError::Git {
        step,
        detail: format!("{wanted} is not on the server any more (a force-push and a garbage collection?)"),
    })
}

/// What the server's `remote` ref points at now, fetched at depth 1 into `local`.
pub(crate) fn fetch_ref_tip(
    repo: &Repository,
    (remote, local): (&str, &str),
    clone_url: &str,
    token: Option<&str>,
    step: &'static str,
) -> Result<Oid, CheckoutError> {
    fetch_at_depth_one(repo, &format!("+{remote}:{local}"), clone_url, token, step)?;
    ref_target(repo, local).ok_or_else(|| CheckoutError::Git { step, detail: format!("no {remote} on the server") })
}

/// One refspec at depth 1 over the network (the whole history from a local path, which has no
/// shallow support), the token only to the clone URL's origin.
fn fetch_at_depth_one(
    repo: &Repository,
    refspec: &str,
    clone_url: &str,
    token: Option<&str>,
    step: &'static str,
) -> Result<(), CheckoutError> {
    let network = clone_url.starts_with("https://") || clone_url.starts_with("http://");
    let depth = if network { Depth::One } else { Depth::Full };
    let auth = Auth::new(token, TokenScope::origin_of(clone_url));
    fetch(repo, clone_url, &[refspec], depth, &auth, None, &mut FetchStats::default())
        .map_err(|e| CheckoutError::Git { step, detail: scrub(e.message(), token) })
}

/// Fetches `refspecs` from `url` into the mirror; adds what was transferred to `stats`.
pub(crate) fn fetch(
    mirror: &Repository,
    url: &str,
    refspecs: &[&str],
    depth: Depth,
    auth: &Auth,
    cancel: Option<&AtomicBool>,
    stats: &mut FetchStats,
) -> Result<(), git2::Error> {
    let mut callbacks = RemoteCallbacks::new();
    let not_cancelled = move || !cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    callbacks.transfer_progress(move |_| not_cancelled());
    callbacks.sideband_progress(move |_| not_cancelled());

    let mut options = FetchOptions::new();
    options.remote_callbacks(callbacks).download_tags(AutotagOption::None).prune(FetchPrune::Off);
    options.depth(depth.libgit2());

    // Anonymous: the URL is not stored in the mirror's config, so a renamed repository needs no repair.
    let mut remote = mirror.remote_anonymous(url)?;
    // http(s) goes through `http_transport`, which answers a 401 with `auth`.
    let result = super::http_transport::with_auth(auth, || remote.fetch(refspecs, Some(&mut options), None));
    // Refs, packed-refs, shallow and FETCH_HEAD are new files in libgit2's modes.
    keep_private(mirror.path());
    let progress = remote.stats();
    stats.received_objects += progress.received_objects();
    stats.indexed_objects += progress.indexed_objects();
    stats.local_objects += progress.local_objects();
    stats.received_bytes += progress.received_bytes();
    stats.total_objects += progress.total_objects();
    result
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    #[test]
    fn stale_git_locks_go_and_nothing_else_does_not_even_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m.git");
        open_or_init(&dir).unwrap();
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("keep.lock"), "").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("refs/elsewhere")).unwrap();
        fs::create_dir_all(dir.join("refs/forgeloop/pull")).unwrap();
        for stale in ["shallow.lock", "packed-refs.lock", "refs/forgeloop/pull/7.lock", "refs/heads/main.lock"] {
            fs::write(dir.join(stale), "").unwrap();
        }
        assert_eq!(clear_stale_git_locks(&dir).unwrap(), 4);
        assert!(outside.join("keep.lock").exists(), "a symlink is not followed");
        assert!(dir.join("HEAD").exists() && dir.join("config").exists());
        assert_eq!(clear_stale_git_locks(&dir).unwrap(), 0);
        assert_eq!(clear_stale_git_locks(&tmp.path().join("absent.git")).unwrap(), 0, "a new mirror has none");
    }

    #[test]
    fn mirror_paths_are_lowercase_and_inside_the_root() {
        let repo = RepoName::parse("Acme/Widget.JS").unwrap();
        let paths = mirror_paths(Path::new("/m"), &repo).unwrap();
        assert_eq!(paths.dir, Path::new("/m/acme/widget.js.git"));
        assert_eq!(paths.lock, Path::new("/m/acme/widget.js.git.lock"));
        let dotted = RepoName::parse("a/..x").unwrap();
        assert_eq!(mirror_paths(Path::new("/m"), &dotted).unwrap().dir, Path::new("/m/a/..x.git"));
    }

    #[test]
    fn the_lock_is_exclusive_until_dropped() {
        let tmp = tempfile::TempDir::new().unwrap();
        let path = tmp.path().join("o").join("r.git.lock");
        let held = lock(&path, None).unwrap();
        let other = File::open(&path).unwrap();
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        let cancel = AtomicBool::new(true);
        assert!(matches!(lock(&path, Some(&cancel)), Err(CheckoutError::Cancelled)));
        drop(held);
        assert!(crate::checkout::lock_frees_soon(&other));
    }

    #[test]
    fn a_cancelled_transfer_stops_the_fetch() {
        let tmp = tempfile::TempDir::new().unwrap();
        let base = tmp.path().join("base.git");
        let work = tmp.path().join("work");
        let git = |dir: &Path, args: &[&str]| {
            let ok = Command::new("git")
                .current_dir(dir)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .args(["-c", "user.name=T", "-c", "user.email=t@e.invalid"])
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        git(tmp.path(), &["init", "-q", "--bare", base.to_str().unwrap()]);
        git(tmp.path(), &["init", "-q", work.to_str().unwrap()]);
        std::fs::write(work.join("a.txt"), "a\n").unwrap();
        git(&work, &["add", "a.txt"]);
        git(&work, &["commit", "-q", "-m", "a"]);
        git(&work, &["push", "-q", base.to_str().unwrap(), "HEAD:refs/pull/1/head"]);

        let (mirror, created) = open_or_init(&tmp.path().join("mirror.git")).unwrap();
        assert!(created);
        let url = format!("file://{}", base.display());
        let auth = Auth::new(None, crate::checkout::auth::TokenScope::origin_of(&url));
        let cancel = AtomicBool::new(true);
        let mut stats = FetchStats::default();
        let spec = "+refs/pull/1/head:refs/forgeloop/pull/1";
        assert!(fetch(&mirror, &url, &[spec], Depth::Full, &auth, Some(&cancel), &mut stats).is_err());
        assert_eq!(ref_target(&mirror, "refs/forgeloop/pull/1"), None);

        cancel.store(false, Ordering::Relaxed);
        fetch(&mirror, &url, &[spec], Depth::Full, &auth, Some(&cancel), &mut stats).unwrap();
        assert!(ref_target(&mirror, "refs/forgeloop/pull/1").is_some());
        assert_eq!(mirror.config().unwrap().get_i32("gc.auto").unwrap(), 0);
    }
}
