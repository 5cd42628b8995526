//! Checkout adapter (design §5.2.2): the PR's exact head commit, detached, in a fresh
//! temporary directory, fetched through a per-repository mirror that later iterations reuse.
//!
//! Flow of [`prepare`]: URL policy → lock the mirror → fetch `+refs/pull/N/head` from the base
//! repository into `refs/forgeloop/pull/N` (with the base branch and GitHub's own
//! `refs/pull/N/merge` when the merge is tested, [`tested`]) → verify it is the API's SHA (else
//! [`CheckoutError::HeadMoved`]) → make what is tested → `git init` a temp dir whose object store borrows the mirror's (alternates) → detached checkout
//! → unlock → submodules if asked. Blocking; call it from `spawn_blocking`.
//!
//! How much is fetched ([`fetch_depth`]): with the default `history: shallow` a new mirror gets
//! the PR head at depth 1, and a shallow mirror keeps being fetched at depth 1 (measured cheapest,
//! design §5.2.2); `history: full` deepens a shallow mirror in place (`--unshallow`). A mirror
//! that already has full history stays full (its incremental fetches are small). libgit2's local
//! transport (`file://`, paths) cannot fetch shallow, so local URLs always fetch in full.

mod auth;
pub mod base_tip;
mod error;
mod git_merge;
mod http_transport;
pub mod lockfiles;
mod merge_proof;
mod mirror;
mod objects;
mod prune;
pub mod review_change;
pub mod scan_sources;
pub mod show;
mod submodules;
pub mod test_script;
pub mod tested;
mod tree_diff;
mod url_policy;
mod worktree;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use std::os::unix::fs::DirBuilderExt;

use git2::{ErrorClass, ErrorCode, Oid, Repository};
use tempfile::TempDir;

pub use error::CheckoutError;
pub use http_transport::add_trusted_certificates;
pub use prune::{DEFAULT_UNUSED_DAYS, GcOutcome, MirrorInfo, collect as collect_mirrors, survey as survey_mirrors};
pub use tested::{Tested, TestedSpec};
pub use tree_diff::{TreeDiffRequest, tree_diff};
pub use url_policy::{AllowedUrl, check_clone_url};

use crate::domain::commands::{History, TreeMode};
use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;
use auth::{Auth, AuthOutcome, TokenScope};
use error::scrub;

/// Prefix of every checkout directory (the redactor and cleanup tools can recognise them).
pub const CHECKOUT_PREFIX: &str = "forgeloop-checkout-";

const TAGS_REFSPEC: &str = "+refs/tags/*:refs/tags/*";

const CONNECT_TIMEOUT_MS: i32 = 30_000;
const IO_TIMEOUT_MS: i32 = 300_000;

/// Everything [`prepare`] needs. `token` is only ever sent to the clone URL's host.
#[derive(Clone)]
pub struct CheckoutRequest<'a> {
    /// `<home>/mirrors`; the mirror is `<mirrors_root>/<owner>/<repo>.git` (lowercase).
    pub mirrors_root: &'a Path,
    /// The **base** repository (the one the PR was opened against).
    pub repo: &'a RepoName,
    /// The base repository's clone URL (checked by [`check_clone_url`]).
    pub clone_url: &'a str,
    /// The PR number; its head is fetched as `refs/pull/N/head`.
    pub pr_number: u64,
    /// The head SHA the API reported; the only commit that will be checked out.
    pub expected_sha: &'a str,
    /// The GitHub token, for private repositories.
    pub token: Option<&'a str>,
    /// Allow `http` to loopback, `file://` and absolute paths: only when the API base is loopback.
    pub allow_insecure_local: bool,
    /// Also check out the PR's submodules.
    pub submodules: bool,
    /// The PR's base branch: with `submodules`, its `.gitmodules` says which submodules get the
    /// token (those it already names; the PR cannot add or redirect one). `None`: none do.
    pub base_ref: Option<&'a str>,
    /// Owners whose repositories on the same scheme, host and port get the token as submodules
    /// (config `[checkout] submodule_token_owners`); any other submodule is fetched without
    /// credentials.
    pub submodule_token_owners: &'a [String],
    /// If `refs/pull/N/head` has moved on, try fetching the expected SHA itself before giving up
    /// with [`CheckoutError::HeadMoved`] (servers that allow fetching any reachable SHA, e.g. GitHub).
    pub fetch_exact_sha: bool,
    /// Where the temporary checkout directory is created; `None` = the system temp directory.
    pub checkouts_root: Option<&'a Path>,
    /// Instead, exactly this directory (it must not exist; removed with the checkout): a run
    /// with a warm cache keeps its sources at the same paths from one iteration to the next.
    pub exact_dir: Option<&'a Path>,
    /// The commands profile's `history`: the PR head alone (depth 1) or all of its history.
    pub history: History,
    /// Set to true to abort: fetch transfers stop at the next progress callback.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The test will run as another account (forgeloop is root): make sure the mirror's
    /// objects, which the checkout borrows, are readable by others (the mirror itself stays
    /// private: nobody else can reach it but through the sandbox's bind mount).
    pub objects_for_others: bool,
    /// What to test and judge (design §5.2.1): the merge of the head into `base_ref`'s tip, or
    /// the head; the held paths. `None` checks out the head alone and judges nothing (tests
    /// of the fetch itself, the benchmark's baseline).
    pub tested: Option<TestedSpec<'a>>,
}

/// Shows everything but the token.
impl std::fmt::Debug for CheckoutRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckoutRequest")
            .field("mirrors_root", &self.mirrors_root)
            .field("repo", &self.repo)
            .field("clone_url", &self.clone_url)
            .field("pr_number", &self.pr_number)
            .field("expected_sha", &self.expected_sha)
            .field("token", &self.token.map(|_| "[REDACTED]"))
            .field("allow_insecure_local", &self.allow_insecure_local)
            .field("submodules", &self.submodules)
            .field("base_ref", &self.base_ref)
            .field("submodule_token_owners", &self.submodule_token_owners)
            .field("fetch_exact_sha", &self.fetch_exact_sha)
            .field("checkouts_root", &self.checkouts_root)
            .field("exact_dir", &self.exact_dir)
            .field("history", &self.history)
            .field("cancel", &self.cancel)
            .field("objects_for_others", &self.objects_for_others)
            .field("tested", &self.tested)
            .finish()
    }
}

/// What the mirror fetch transferred (summed over the fetches of one [`prepare`] call).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchStats {
    /// Objects received from the server.
    pub received_objects: usize,
    /// Objects indexed into the mirror.
    pub indexed_objects: usize,
    /// Objects taken from the mirror to complete thin packs the server sent.
    pub local_objects: usize,
    /// Bytes received from the server.
    pub received_bytes: usize,
    /// Objects in the packs the server sent.
    pub total_objects: usize,
    /// The fetch created or moved the mirror's PR ref (false: the mirror was already current).
    pub fetched: bool,
    /// The mirror was created by this call (first iteration for this repository).
    pub mirror_created: bool,
    /// The depth asked of the server: `Some(1)` for a shallow fetch, `None` for full history.
    pub depth: Option<u32>,
    /// A shallow mirror was deepened to full history by this call (not recloned).
    pub deepened: bool,
    /// The mirror is shallow after the fetch (the checkout has no history beyond its roots).
    pub shallow: bool,
}

/// A prepared checkout: a working tree and, beside it, its git directory (the working tree's
/// `.git` is a file naming it), so a sandbox can give a test the working tree to write and
/// the git directory to read only (design §5.6). Dropping it deletes both (use
/// [`Checkout::keep`] to keep the working tree).
#[derive(Debug)]
pub struct Checkout {
    /// Holds the working tree and the git directory; removed on drop.
    _dir: Container,
    tree: PathBuf,
    gitdir: PathBuf,
    /// The PR's head (40 hex digits): the `expected_sha`.
    pub head_sha: String,
    /// The commit checked out: the head, or what [`CheckoutRequest::tested`] made of it.
    pub commit_sha: String,
    /// The tree of that commit.
    pub tree_sha: String,
    /// What the run tests and the change it is judged on, when asked for.
    pub tested: Option<Tested>,
    /// Where `refs/pull/N/head` pointed after the fetch; differs from `head_sha` only when
    /// `fetch_exact_sha` rescued a moved head (the PR has newer commits than the one tested).
    pub pr_ref_sha: String,
    /// What the fetch transferred.
    pub fetch: FetchStats,
    /// The mirror the checkout borrows its objects from.
    pub mirror: PathBuf,
    /// The lockfiles in the tested commit's tree (`lockfiles::in_commit`).
    pub lockfiles: Vec<String>,
    /// `package.json`'s `scripts.test` in the tested commit (`test_script::in_commit`).
    pub test_script: Option<String>,
}

impl Checkout {
    /// The working tree, HEAD detached at `head_sha`.
    pub fn path(&self) -> &Path {
        &self.tree
    }

    /// The git directory (outside the working tree).
    pub fn gitdir(&self) -> &Path {
        &self.gitdir
    }

    /// Marks every file and directory of the working tree modified now (never through a
    /// link). For a build that ran after the checkout was written — the base layer's warming:
    /// build tools that compare times (cargo, make) would otherwise take the artifacts it left,
    /// newer than the PR's sources, for the PR's own, and test the base's code.
    pub fn touch_all(&self) -> std::io::Result<()> {
        touch_tree(&self.tree, std::time::SystemTime::now())
    }

    /// Keeps the working tree (`--keep-checkout`), moved to `dest` (which must not exist, on the
    /// same filesystem), and returns `dest`. What the test wrote into the working tree stays;
    /// its `.git` — which the test could have replaced with hooks, an `fsmonitor` or an alias —
    /// is thrown away and written anew by forgeloop ([`worktree::fresh_gitdir`]). It borrows
    /// objects from the mirror, so it stays valid as long as the mirror does.
    pub fn keep(self, dest: &Path) -> Result<PathBuf, CheckoutError> {
        let head = Oid::from_str(&self.commit_sha).map_err(|_| CheckoutError::InvalidSha(self.commit_sha.clone()))?;
        // What the PR's code wrote stays, but nothing git would run, nothing set-id.
        defuse(&self.tree).map_err(|source| CheckoutError::Disk {
            action: "clearing nested repositories and set-id bits in",
            path: self.tree.clone(),
            source,
        })?;
        worktree::fresh_gitdir(&self.mirror, &self.tree, head)?;
        if let Some(parent) = dest.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|source| CheckoutError::Disk { action: "creating", path: parent.to_path_buf(), source })?;
        }
        std::fs::rename(&self.tree, dest).map_err(|source| CheckoutError::Disk {
            action: "moving the kept checkout to",
            path: dest.to_path_buf(),
            source,
        })?;
        Ok(dest.to_path_buf())
    }
}

/// The directory holding a checkout's working tree and git directory, removed on drop.
#[derive(Debug)]
enum Container {
    Temp(TempDir),
    Exact(PathBuf),
}

impl Container {
    fn exact(dir: &Path) -> Result<Container, CheckoutError> {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map(|()| Container::Exact(dir.to_path_buf()))
            .map_err(|source| CheckoutError::Disk { action: "creating", path: dir.to_path_buf(), source })
    }

    fn create(req: &CheckoutRequest<'_>) -> Result<Container, CheckoutError> {
        if let Some(dir) = req.exact_dir {
            return Container::exact(dir);
        }
        let mut builder = tempfile::Builder::new();
        builder.prefix(CHECKOUT_PREFIX);
        match req.checkouts_root {
            Some(root) => builder.tempdir_in(root),
            None => builder.tempdir(),
        }
        .map(Container::Temp)
        .map_err(|source| CheckoutError::Disk {
            action: "creating a checkout directory in",
            path: req.checkouts_root.map_or_else(std::env::temp_dir, Path::to_path_buf),
            source,
        })
    }

    fn path(&self) -> &Path {
        match self {
            Container::Temp(dir) => dir.path(),
            Container::Exact(dir) => dir,
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if let Container::Exact(dir) = self {
            let _ = crate::store::tree::remove_tree(dir);
        }
    }
}

/// Initialises libgit2 once, before any thread fetches (`cli::main` calls it first, for the
/// commands that may use git; every entry point of this module calls it again): registers
/// [`http_transport`] for `http` and `https` (libgit2 has no TLS of its own), isolates libgit2
/// from the user's git config (`insteadOf` rewrites, `core.autocrlf` would change what is
/// fetched or checked out) and sets its timeouts. Idempotent.
pub fn init_git_early() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let timeouts = http_transport::Timeouts {
            connect: std::time::Duration::from_millis(CONNECT_TIMEOUT_MS.unsigned_abs().into()),
            io: std::time::Duration::from_millis(IO_TIMEOUT_MS.unsigned_abs().into()),
        };
        // SAFETY: these write libgit2 globals without synchronisation; `Once` makes this the only
        // writer, and `cli::main` calls it before starting threads. Failures leave the defaults.
        unsafe {
            for level in [
                git2::ConfigLevel::System,
                git2::ConfigLevel::XDG,
                git2::ConfigLevel::Global,
                git2::ConfigLevel::ProgramData,
            ] {
                let _ = git2::opts::set_search_path(level, "");
            }
            let _ = git2::opts::set_server_connect_timeout_in_milliseconds(CONNECT_TIMEOUT_MS);
            let _ = git2::opts::set_server_timeout_in_milliseconds(IO_TIMEOUT_MS);
            match http_transport::register(timeouts, http_transport::Proxies::from_env()) {
                Ok(()) => TRANSPORT_READY.store(true, Ordering::Relaxed),
                // Then http(s) fetches fail with libgit2's "unsupported URL protocol"; `doctor` says so.
                Err(e) => tracing::error!("cannot register git's http transport: {}", e.message()),
            }
        }
    });
}

/// The transport is registered for `http` and `https` (`init_git_early` did it).
static TRANSPORT_READY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether git can fetch over http and https (forgeloop's transport is registered).
pub fn https_ready() -> bool {
    init_git_early();
    TRANSPORT_READY.load(Ordering::Relaxed)
}

/// The linked libgit2 version, e.g. `1.9.7`, for the report's environment capsule.
pub fn libgit2_version() -> String {
    let (major, minor, patch) = git2::Version::get().libgit2_version();
    format!("{major}.{minor}.{patch}")
}

/// The mirror after the fetch, still locked, with what the run tests made in it.
struct Fetched {
    paths: mirror::MirrorPaths,
    lock: mirror::MirrorLock,
    repo: Repository,
    fetch: FetchStats,
    expected: String,
    expected_oid: Oid,
    found: Oid,
    base_submodules: Vec<String>,
    tested: Option<Tested>,
}

/// What a `github-checks` run is judged on (design §5.7): the PR's head and its base branch
/// fetched into the mirror, and what [`CheckoutRequest::tested`] makes of them, without a
/// working tree. Blocking.
pub fn judge(req: &CheckoutRequest<'_>) -> Result<Tested, CheckoutError> {
    let fetched = fetch_and_make(req)?;
    fetched
        .tested
        .ok_or_else(|| CheckoutError::Git { step: "judging", detail: "nothing to judge was asked for".into() })
}

/// Fetches the PR head into the mirror, verifies it, and checks it out detached in a new
/// temporary directory. Blocking.
pub fn prepare(req: &CheckoutRequest<'_>) -> Result<Checkout, CheckoutError> {
    let Fetched { paths, lock, repo: mirror_repo, mut fetch, expected, expected_oid, found, base_submodules, tested } =
        fetch_and_make(req)?;
    let cancel = req.cancel.as_deref();
    let token = req.token.filter(|t| !t.is_empty());
    let checked_out = match &tested {
        Some(t) => Oid::from_str(&t.commit_sha).map_err(|_| CheckoutError::InvalidSha(t.commit_sha.clone()))?,
        None => expected_oid,
    };

    let dir = Container::create(req)?;
    let work = dir.path().join("tree");
    let gitdir = dir.path().join("git");
    let tree = worktree::materialize(&paths.dir, &work, &gitdir, req.clone_url, checked_out)?;
    fetch.shallow = mirror_repo.is_shallow();
    if fetch.shallow {
        worktree::copy_shallow_roots(&paths.dir, &gitdir)?;
    }
    if req.history == History::Full {
        worktree::copy_tags(&mirror_repo, &gitdir)?;
    }
    if req.objects_for_others {
        objects::open_to_others(&paths.dir.join("objects"))?;
    }
    let lockfiles = lockfiles::in_commit(&mirror_repo, checked_out);
    let test_script = test_script::in_commit(&mirror_repo, checked_out);
    drop(mirror_repo);
    drop(lock);

    if req.submodules {
        let repo = Repository::open(&work)
            .map_err(|e| CheckoutError::Git { step: "open of the checkout", detail: e.to_string() })?;
        // The token goes to the submodules the base branch already names (and to the configured
        // owners) on the clone URL's scheme, host and port only: the PR's .gitmodules is the PR
        // author's choice, and may name any private repository the token can read.
        let sub = submodules::SubmoduleContext {
            token,
            token_scope: TokenScope::submodules_of(
                req.clone_url,
                base_submodules,
                req.submodule_token_owners.iter().cloned(),
            ),
            allow_insecure_local: req.allow_insecure_local,
            cancel,
        };
        submodules::update_all(&repo, &sub)?;
    }

    Ok(Checkout {
        _dir: dir,
        tree: work,
        gitdir,
        head_sha: expected,
        commit_sha: checked_out.to_string(),
        tree_sha: tree.to_string(),
        tested,
        pr_ref_sha: found.to_string(),
        fetch,
        mirror: paths.dir,
        lockfiles,
        test_script,
    })
}

fn fetch_and_make(req: &CheckoutRequest<'_>) -> Result<Fetched, CheckoutError> {
    check_clone_url(req.clone_url, req.allow_insecure_local)?;
    let expected = normalize_sha(req.expected_sha).ok_or_else(|| CheckoutError::InvalidSha(req.expected_sha.into()))?;
    let expected_oid = Oid::from_str(&expected).map_err(|_| CheckoutError::InvalidSha(req.expected_sha.into()))?;
    if req.pr_number == 0 {
        return Err(CheckoutError::InvalidPrNumber);
    }
    init_git_early();
    let cancel = req.cancel.as_deref();
    let token = req.token.filter(|t| !t.is_empty());

    let paths = mirror::mirror_paths(req.mirrors_root, req.repo)?;
    let lock = mirror::take(&paths, cancel)?;
    let (mirror_repo, mirror_created) = mirror::open_or_init(&paths.dir)?;
    mirror::touch_last_used(&paths.dir)?;

    let depth = fetch_depth(req.clone_url, req.history, mirror::has_no_refs(&mirror_repo), mirror_repo.is_shallow());
    let mut fetch = FetchStats {
        mirror_created,
        depth: (depth == mirror::Depth::One).then_some(1),
        deepened: depth == mirror::Depth::Unshallow,
        ..FetchStats::default()
    };
    let local_ref = mirror::pr_ref_name(req.pr_number);
    let before = mirror::ref_target(&mirror_repo, &local_ref);
    let refspec = format!("+refs/pull/{}/head:{local_ref}", req.pr_number);
    let ctx = FetchContext { url: req.clone_url, pr_number: req.pr_number, token, cancel };

    let auth = Auth::new(token, TokenScope::origin_of(req.clone_url));
    // Full history brings the tags too, so `git describe` works in the checkout.
    let mut refspecs: Vec<&str> = vec![&refspec];
    if req.history == History::Full {
        refspecs.push(TAGS_REFSPEC);
    }
    // The base branch too: the merge is tested against its tip (design §5.2.1), and with
    // submodules its .gitmodules decides which get the token.
    let base = match (req.submodules || req.tested.is_some(), req.base_ref) {
        (true, Some(base)) => Some(submodules::base_refspec(base)?),
        (false, _) => None,
        (true, None) if req.tested.is_some() => {
            return Err(CheckoutError::Git {
                step: "base branch",
                detail: "the pull request names no base branch".into(),
            });
        }
        (true, None) => None,
    };
    if let Some((spec, _)) = &base {
        refspecs.push(spec);
    }
    // GitHub's own merge of the head into the base tip, in the same fetch at the same depth,
    // when it has one (none while it conflicts or `mergeable` is null: then nothing comes).
    // Only what this fetch brings counts, so an older copy goes first.
    let merge_ref = mirror::merge_ref_name(req.pr_number);
    let merge_refspec = format!("+refs/pull/{}/merge:{merge_ref}", req.pr_number);
    let wants_merge = req.tested.is_some_and(|t| t.tree == TreeMode::Merge) && base.is_some();
    if wants_merge {
        mirror::delete_ref(&mirror_repo, &merge_ref)?;
        refspecs.push(&merge_refspec);
    }
    mirror::fetch(&mirror_repo, req.clone_url, &refspecs, depth, &auth, cancel, &mut fetch)
        .map_err(|e| ctx.classify(&e, &auth))?;
    let base_submodules = match &base {
        Some((_, local)) => submodules::named_by(&mirror_repo, local, req.clone_url)?,
        None => Vec::new(),
    };
    let found = mirror::ref_target(&mirror_repo, &local_ref).ok_or_else(|| CheckoutError::PrRefMissing {
        url: req.clone_url.to_owned(),
        pr_number: req.pr_number,
        detail: "the fetch did not create it".to_owned(),
    })?;
    fetch.fetched = before != Some(found);

    if found != expected_oid {
        let moved = CheckoutError::HeadMoved { expected: expected.clone(), found: found.to_string() };
        if !req.fetch_exact_sha {
            return Err(moved);
        }
        // Already here when the PR only moved forward (the old head is an ancestor).
        if mirror_repo.find_commit(expected_oid).is_err() {
            let by_sha = format!("+{expected}:refs/forgeloop/sha/{expected}");
            let auth = Auth::new(token, TokenScope::origin_of(req.clone_url));
            // Depth 1 unless deepening (the deepening fetch above already brought full history).
            let by_sha_depth = if depth == mirror::Depth::Unshallow { mirror::Depth::Full } else { depth };
            if let Err(e) =
                mirror::fetch(&mirror_repo, req.clone_url, &[&by_sha], by_sha_depth, &auth, cancel, &mut fetch)
            {
                return Err(match ctx.classify(&e, &auth) {
                    e @ (CheckoutError::Cancelled
                    | CheckoutError::AuthFailed { .. }
                    | CheckoutError::AuthRequired { .. }) => e,
                    _ => moved,
                });
            }
            if mirror_repo.find_commit(expected_oid).is_err() {
                return Err(moved);
            }
        }
    }

    // What the run tests: the merge (or the head) with the held paths, made in the mirror.
    let tested = match (&req.tested, &base) {
        (Some(spec), Some((spec_base, local))) => {
            let base_oid = mirror::ref_target(&mirror_repo, local).ok_or_else(|| CheckoutError::Git {
                step: "base branch",
                detail: format!("the fetch of {spec_base} brought no commit"),
            })?;
            let base_name = req.base_ref.unwrap_or_default();
            let specs: Vec<&str> = vec![&refspec, spec_base];
            let mut deepen = |depth: mirror::Depth| {
                let auth = Auth::new(token, TokenScope::origin_of(req.clone_url));
                mirror::fetch(&mirror_repo, req.clone_url, &specs, depth, &auth, cancel, &mut fetch)
                    .map_err(|e| ctx.classify(&e, &auth))
            };
            let github_merge = mirror::ref_target(&mirror_repo, &merge_ref).filter(|_| wants_merge);
            let commits = (expected_oid, base_oid, github_merge);
            Some(tested::make(&mirror_repo, commits, base_name, spec, &mut deepen)?)
        }
        _ => None,
    };
    Ok(Fetched { paths, lock, repo: mirror_repo, fetch, expected, expected_oid, found, base_submodules, tested })
}

/// What to ask the server for (design §5.2.2). `empty`: the mirror has no refs yet.
fn fetch_depth(url: &str, history: History, empty: bool, shallow: bool) -> mirror::Depth {
    let network = url.starts_with("https://") || url.starts_with("http://");
    match history {
        _ if !network => mirror::Depth::Full,
        History::Full if shallow => mirror::Depth::Unshallow,
        History::Full => mirror::Depth::Full,
        History::Shallow if empty || shallow => mirror::Depth::One,
        History::Shallow => mirror::Depth::Full,
    }
}

struct FetchContext<'a> {
    url: &'a str,
    pr_number: u64,
    token: Option<&'a str>,
    cancel: Option<&'a AtomicBool>,
}

impl FetchContext<'_> {
    /// Names the cause of a failed fetch from what the callbacks saw and libgit2's error.
    fn classify(&self, e: &git2::Error, auth: &Auth) -> CheckoutError {
        let url = self.url.to_owned();
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return CheckoutError::Cancelled;
        }
        let detail = scrub(e.message(), self.token);
        match auth.outcome() {
            AuthOutcome::NoToken => return CheckoutError::AuthRequired { url },
            AuthOutcome::Rejected => return CheckoutError::AuthFailed { url, credential_requests: auth.calls() },
            AuthOutcome::Unsupported => {
                return CheckoutError::Git {
                    step: "fetch",
                    detail: format!("{url} asked for credentials other than a token (ssh keys?): {detail}"),
                };
            }
            AuthOutcome::OutOfScope => {
                return CheckoutError::Git {
                    step: "fetch",
                    detail: format!(
                        "credentials were requested outside {} (the clone URL {url}'s); the token was withheld",
                        auth.scope().describe()
                    ),
                };
            }
            AuthOutcome::NotAsked | AuthOutcome::Offered => {}
        }
        let lower = detail.to_ascii_lowercase();
        if let Some(untrusted) = auth.untrusted() {
            CheckoutError::Certificate { url, detail: untrusted }
        } else if e.code() == ErrorCode::Certificate || e.class() == ErrorClass::Ssl {
            CheckoutError::Certificate { url, detail }
        } else if lower.contains("remote ref") || lower.contains("refs/pull/") {
            CheckoutError::PrRefMissing { url, pr_number: self.pr_number, detail }
        } else if lower.contains("404")
            || lower.contains("failed to resolve path")
            || (e.code() == ErrorCode::NotFound && matches!(e.class(), ErrorClass::Repository | ErrorClass::Os))
        {
            CheckoutError::RepoNotFound { url, detail }
        } else if matches!(e.class(), ErrorClass::Net | ErrorClass::Http | ErrorClass::Os | ErrorClass::Ssh) {
            CheckoutError::Network { url, detail }
        } else {
            CheckoutError::Git { step: "fetch", detail }
        }
    }
}

/// Whether `file`'s flock can be taken within a couple of seconds. A test's freed lock can stay
/// held for a moment: another test's thread may fork while the lock is open, and the child
/// shares the open file description (so the flock) until it execs and close-on-exec drops it.
#[cfg(test)]
pub(crate) fn lock_frees_soon(file: &std::fs::File) -> bool {
    for _ in 0..200 {
        match file.try_lock() {
            Ok(()) => return true,
            Err(std::fs::TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(std::fs::TryLockError::Error(_)) => return false,
        }
    }
    false
}

/// Removes every `.git` below `dir` (a directory, a file pointing elsewhere, a link: a
/// repository whose config git would obey when a person works in that directory; the working
/// tree's own is written afterwards) and every set-id bit, never following a link. A directory
/// the test left unreadable is opened up for its owner first, as removal does.
fn defuse(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_name() == ".git" {
            crate::store::tree::remove_tree(&path).map_err(|left| std::io::Error::other(left.to_string()))?;
            continue;
        }
        let meta = path.symlink_metadata()?;
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode();
        let wanted = if meta.is_dir() { (mode & 0o1777) | 0o700 } else { mode & 0o1777 };
        if wanted != mode & 0o7777 {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(wanted))?;
        }
        if meta.is_dir() {
            defuse(&path)?;
        }
    }
    Ok(())
}

/// Names `worktree` as the working tree of the checkout's git directory `gitdir` (whose
/// config libgit2 gave the host path): where the sandbox shows the checkout at a path of its
/// own (design §5.6). A kept checkout gets a git directory of its own afterwards.
pub fn set_worktree(gitdir: &Path, worktree: &Path) -> Result<(), CheckoutError> {
    let git = |step: &'static str| move |e: git2::Error| CheckoutError::Git { step, detail: e.message().to_owned() };
    let path = worktree.to_str().ok_or_else(|| CheckoutError::Git {
        step: "naming the working tree",
        detail: format!("{} is not UTF-8", worktree.display()),
    })?;
    let mut config = git2::Config::open(&gitdir.join("config")).map_err(git("opening the checkout's git config"))?;
    config.set_str("core.worktree", path).map_err(git("naming the working tree"))
}

fn touch_tree(path: &Path, now: std::time::SystemTime) -> std::io::Result<()> {
    let meta = path.symlink_metadata()?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            touch_tree(&entry?.path(), now)?;
        }
    }
    let file = std::fs::File::open(path)?;
    file.set_modified(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_isolates_libgit2_from_user_and_system_git_config() {
        init_git_early();
        for level in [git2::ConfigLevel::Global, git2::ConfigLevel::XDG, git2::ConfigLevel::System] {
            // SAFETY: reading the global option; init_git_early (a Once) is its only writer.
            let path = unsafe { git2::opts::get_search_path(level) }.unwrap();
            assert_eq!(path.to_str().unwrap(), "", "{level:?}");
        }
    }

    #[test]
    fn debug_output_hides_the_token() {
        let repo = RepoName::parse("a/b").unwrap();
        let req = CheckoutRequest {
            mirrors_root: Path::new("/m"),
            repo: &repo,
            clone_url: "https://github.com/a/b.git",
            pr_number: 1,
            expected_sha: "0123456789abcdef0123456789abcdef01234567",
            token: Some("tok-value-123"),
            allow_insecure_local: false,
            submodules: false,
            base_ref: None,
            submodule_token_owners: &[],
            fetch_exact_sha: false,
            checkouts_root: None,
            exact_dir: None,
            history: History::Shallow,
            cancel: None,
            objects_for_others: false,
            tested: None,
        };
        let text = format!("{req:?}");
        assert!(!text.contains("tok-value-123") && text.contains("[REDACTED]"), "{text}");
    }

    #[test]
    fn depth_follows_history_mirror_and_transport() {
        use mirror::Depth;
        let https = "https://github.com/a/b.git";
        assert_eq!(fetch_depth(https, History::Shallow, true, false), Depth::One);
        assert_eq!(fetch_depth(https, History::Shallow, false, true), Depth::One);
        assert_eq!(fetch_depth(https, History::Shallow, false, false), Depth::Full);
        assert_eq!(fetch_depth(https, History::Full, true, false), Depth::Full);
        assert_eq!(fetch_depth(https, History::Full, false, true), Depth::Unshallow);
        assert_eq!(fetch_depth("http://127.0.0.1:9/a/b.git", History::Shallow, true, false), Depth::One);
        assert_eq!(fetch_depth("file:///srv/b.git", History::Shallow, true, false), Depth::Full);
        assert_eq!(fetch_depth("/srv/b.git", History::Full, false, true), Depth::Full);
    }

    #[test]
    fn libgit2_has_no_tls_of_its_own_and_https_goes_through_forgeloops_transport() {
        let version = git2::Version::get();
        assert!(!version.https(), "libgit2 is built without TLS (no OpenSSL)");
        assert!(!version.ssh());
        assert_eq!(super::libgit2_version().split('.').count(), 3);
        init_git_early();
        let tmp = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(tmp.path()).unwrap();
        for scheme in ["https", "http"] {
            let mut remote = repo.remote_anonymous(&format!("{scheme}://127.0.0.1:9/x.git")).unwrap();
            let err = remote.fetch(&["+refs/heads/*:refs/x/*"], None, None).unwrap_err();
            // Port 9 refuses: the words are the transport's, not libgit2's "unsupported URL".
            assert!(err.message().contains("cannot connect to 127.0.0.1:9"), "{scheme}: {}", err.message());
        }
    }
}
