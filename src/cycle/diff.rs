//! What WebGPT changed (design §6.7), for `forgeloop diff`, the control room's Diff tab and
//! MCP `forge_diff`: a tested head's whole change against the base branch, as GitHub shows
//! it, or the change between two tested heads ("what came back in answer to the handoff").
//!
//! The whole-PR diff comes from the GitHub API (the PR's diff media type while the tested SHA
//! is still the head, else the compare API from the base branch), so shallow mirrors are
//! enough. The since-last diff is a tree-to-tree diff of the two tested commits in the mirror,
//! so a force-pushed fix shows its true change. Both are redacted before anything else sees
//! them and cached, redacted, per SHA pair under the cycle's directory.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::checkout::{self, TreeDiffRequest};
use crate::domain::diff::{self, DiffSize, FileDiff};
use crate::domain::pr_ref::{PrRef, parse_pr_ref};
use crate::domain::report::normalize_sha;
use crate::domain::state::RunSummary;
use crate::error::{Error, Result};
use crate::store::atomic::write_atomic;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::context::Ctx;
use super::context::Engine;

/// The marker the redactor leaves; counted to say how many spots were masked.
const MASK: &str = "[REDACTED";

/// Which change a [`DiffView`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    /// The PR's change at a tested head, against its base branch.
    WholePr,
    /// The change from the previous tested head to this one.
    SinceLast,
}

/// A diff ready to show: redacted text and its index.
#[derive(Debug, Clone, Serialize)]
pub struct DiffView {
    /// Which change this is.
    pub kind: DiffKind,
    /// The PR, as `OWNER/REPO#N`.
    pub pr: String,
    /// The run whose head this is (`None` outside a cycle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    /// The head the diff ends at (40 hex digits).
    pub head_sha: String,
    /// Since-last: the previous tested head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_sha: Option<String>,
    /// Since-last: the run that tested `old_sha`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_iteration: Option<u32>,
    /// Files, lines added and removed, in total.
    pub size: DiffSize,
    /// Each file's path, change kind and line counts.
    pub files: Vec<FileDiff>,
    /// Spots the redactor masked (`[REDACTED:…]` in the text).
    pub masked: usize,
    /// The redacted diff, cached here (a cycle's diffs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<PathBuf>,
    /// The redacted unified diff (not serialized: `diff --json` adds it as `diff`).
    #[serde(skip)]
    pub text: String,
}

/// The diff of run `iteration` (default: the last) of the cycle at `paths`.
pub async fn of_cycle(
    ctx: &Ctx,
    engine: &Engine,
    paths: &CyclePaths,
    iteration: Option<u32>,
    since_last: bool,
) -> Result<DiffView> {
    let plan = plan(ctx, paths, iteration, since_last)?;
    made(ctx, engine, &plan).await
}

/// The whole-PR diff a run's `integrity` is judged on (design §5.2): the change the checkout
/// made in the mirror — the tested tree against the base branch's tip — redacted and cached
/// where the Diff tab reads it, before the run is recorded.
pub fn whole_of_run(
    ctx: &Ctx,
    paths: &CyclePaths,
    pr: &PrRef,
    iteration: u32,
    tested: &checkout::Tested,
    head: &str,
) -> Result<DiffView> {
    let head = sha(head)?;
    let cache = whole_pr_cache(paths, &head, Some(&tested.base_sha));
    let plan = Plan {
        kind: DiffKind::WholePr,
        pr: pr.clone(),
        iteration,
        head,
        old: None,
        against: Some((tested.base_sha.clone(), tested.merge_sha.clone())),
        cache,
    };
    let (text, masked) = redact(ctx, &tested.change);
    keep(&plan.cache, &text, masked)?;
    Ok(plan.view(text, masked))
}

/// The change from the cycle's previous tested head to this one (design §5.2: what came back
/// in answer to the handoff), from the mirror, cached like every cycle diff; `None` when it
/// cannot be made (the earlier head is gone from the server).
pub async fn since_last_of_run(
    ctx: &Ctx,
    engine: &Engine,
    paths: &CyclePaths,
    pr: &PrRef,
    iteration: u32,
    head: &str,
    previous: (&str, u32),
) -> Option<DiffView> {
    let head = sha(head).ok()?;
    let old = sha(previous.0).ok().filter(|old| *old != head)?;
    let cache = since_last_cache(paths, &old, &head);
    let plan = Plan {
        kind: DiffKind::SinceLast,
        pr: pr.clone(),
        iteration,
        head,
        old: Some((old, previous.1)),
        against: None,
        cache,
    };
    made(ctx, engine, &plan).await.ok()
}

/// The planned diff, from its cache or made (fetched, redacted, indexed and cached).
async fn made(ctx: &Ctx, engine: &Engine, plan: &Plan) -> Result<DiffView> {
    if let Some(view) = plan.cached() {
        return Ok(view);
    }
    let raw = match (&plan.old, &plan.against) {
        (Some((old_sha, _)), _) => since_last_raw(ctx, engine, &plan.pr, old_sha, &plan.head).await?,
        // What the run judged: the tested tree against the base tip, from the mirror; GitHub's
        // view of the PR when the mirror no longer has it.
        (None, Some((base, changed))) => {
            let changed = changed.clone().unwrap_or_else(|| plan.head.clone());
            match tree_diff(ctx, engine, plan.pr.repo.clone(), None, base, &changed).await {
                Ok(raw) => raw,
                Err(_) => whole_pr_raw(engine, &plan.pr, &plan.head).await?,
            }
        }
        (None, None) => whole_pr_raw(engine, &plan.pr, &plan.head).await?,
    };
    let (text, masked) = redact(ctx, &raw);
    keep(&plan.cache, &text, masked)?;
    Ok(plan.view(text, masked))
}

/// Writes a redacted diff and its meta where the Diff tab reads them.
fn keep(cache: &Path, text: &str, masked: usize) -> Result<()> {
    save(cache, text)?;
    let size = DiffSize::of(&diff::index(text.lines()));
    let meta = serde_json::to_string(&DiffMeta { masked, size }).unwrap_or_default();
    save(&meta_path(cache), &meta)
}

/// The diff [`of_cycle`] would give, when it is cached already: made without GitHub, so
/// without a token (`None`: it must be fetched).
pub fn cached_of_cycle(
    ctx: &Ctx,
    paths: &CyclePaths,
    iteration: Option<u32>,
    since_last: bool,
) -> Result<Option<DiffView>> {
    Ok(plan(ctx, paths, iteration, since_last)?.cached())
}

/// Which diff of a cycle is wanted and where it is cached.
struct Plan {
    kind: DiffKind,
    pr: PrRef,
    iteration: u32,
    head: String,
    old: Option<(String, u32)>,
    /// The whole PR of a run that recorded what it was judged against: the base tip and the
    /// merge commit (`None`: the head itself).
    against: Option<(String, Option<String>)>,
    cache: PathBuf,
}

fn plan(ctx: &Ctx, paths: &CyclePaths, iteration: Option<u32>, since_last: bool) -> Result<Plan> {
    let state = state_file::load(&paths.state)?;
    let (run, previous) = pick_runs(&state.history, iteration, since_last)?;
    let pr = parse_pr_ref(&run.pr, &ctx.hosts)?;
    let head = sha(&run.head_sha)?;
    let (kind, old) = match previous {
        Some(prev) => (DiffKind::SinceLast, Some((sha(&prev.head_sha)?, prev.iteration))),
        None => (DiffKind::WholePr, None),
    };
    let base = run.base_sha.as_deref().map(sha).transpose()?;
    let cache = match &old {
        Some((old_sha, _)) => since_last_cache(paths, old_sha, &head),
        None => whole_pr_cache(paths, &head, base.as_deref()),
    };
    let merge = run.merge_sha.as_deref().map(sha).transpose()?;
    let against = match (&old, base) {
        (None, Some(base)) => Some((base, merge)),
        _ => None,
    };
    Ok(Plan { kind, pr, iteration: run.iteration, head, old, against, cache })
}

impl Plan {
    fn cached(&self) -> Option<DiffView> {
        let text = std::fs::read_to_string(&self.cache).ok()?;
        let meta = read_meta(&meta_path(&self.cache))?;
        Some(self.view(text, meta.masked))
    }

    fn view(&self, text: String, masked: usize) -> DiffView {
        let mut view = view(
            self.kind,
            &self.pr,
            Some(self.iteration),
            self.head.clone(),
            self.old.clone(),
            text,
            Some(self.cache.clone()),
        );
        view.masked = masked;
        view
    }
}

/// What is kept beside a cached diff: read without indexing the diff again (a control-room
/// row shows the size of a `READY_TO_MERGE` PR's change).
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct DiffMeta {
    /// Spots the redactor masked in the cached diff.
    pub masked: usize,
    /// Files, lines added and removed, in total.
    pub size: DiffSize,
}

/// Where the whole-PR diff of `head_sha` is cached for the cycle at `paths` (it may not exist):
/// per base tip for a run that recorded the one it was tested against, so a head tested again
/// on a newer base keeps each run's evidence.
pub fn whole_pr_cache(paths: &CyclePaths, head_sha: &str, base_sha: Option<&str>) -> PathBuf {
    let name = match base_sha {
        Some(base) => format!("pr-{}-on-{}.diff", head_sha.to_ascii_lowercase(), base.to_ascii_lowercase()),
        None => format!("pr-{}.diff", head_sha.to_ascii_lowercase()),
    };
    paths.sidecar().join("diffs").join(name)
}

/// Where the change from tested head `old_sha` to `new_sha` is cached for the cycle at `paths`
/// (it may not exist).
pub fn since_last_cache(paths: &CyclePaths, old_sha: &str, new_sha: &str) -> PathBuf {
    paths.sidecar().join("diffs").join(format!(
        "{}..{}.diff",
        old_sha.to_ascii_lowercase(),
        new_sha.to_ascii_lowercase()
    ))
}

/// The cached diff's meta (masked spots, size), if that diff was made.
pub fn cached_meta(diff_file: &Path) -> Option<DiffMeta> {
    read_meta(&meta_path(diff_file))
}

fn meta_path(diff_file: &Path) -> PathBuf {
    diff_file.with_extension("json")
}

fn read_meta(path: &Path) -> Option<DiffMeta> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The redacted text and how many spots the redactor masked in it.
fn redact(ctx: &Ctx, raw: &str) -> (String, usize) {
    let text = ctx.redactor.redact(raw).into_owned();
    let masked = text.matches(MASK).count().saturating_sub(raw.matches(MASK).count());
    (text, masked)
}

/// The whole change a one-shot run (`forgeloop test`) was judged on: the checkout's, redacted,
/// not cached.
pub fn whole_of_change(ctx: &Ctx, pr: &PrRef, head: &str, tested: &checkout::Tested) -> DiffView {
    let (text, masked) = redact(ctx, &tested.change);
    let mut view = view(DiffKind::WholePr, pr, None, head.to_owned(), None, text, None);
    view.masked = masked;
    view
}

/// The whole change of a PR at its current head (`forgeloop diff --pr`, outside any cycle).
pub async fn of_pr(ctx: &Ctx, engine: &Engine, pr: &str) -> Result<DiffView> {
    let pr = parse_pr_ref(pr, &ctx.hosts)?;
    let raw = engine.github.pull_diff(&pr.repo, pr.number).await?;
    let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
    let (text, masked) = redact(ctx, &raw);
    let mut view = view(DiffKind::WholePr, &pr, None, pull.head_sha, None, text, None);
    view.masked = masked;
    Ok(view)
}

fn view(
    kind: DiffKind,
    pr: &PrRef,
    iteration: Option<u32>,
    head_sha: String,
    old: Option<(String, u32)>,
    text: String,
    cache: Option<PathBuf>,
) -> DiffView {
    let files = diff::index(text.lines());
    DiffView {
        kind,
        pr: pr.shorthand(),
        iteration,
        head_sha,
        old_iteration: old.as_ref().map(|(_, k)| *k),
        old_sha: old.map(|(s, _)| s),
        size: DiffSize::of(&files),
        files,
        masked: 0,
        cache,
        text,
    }
}

/// The run to show and, for since-last, the run before it.
fn pick_runs(
    history: &[RunSummary],
    iteration: Option<u32>,
    since_last: bool,
) -> Result<(&RunSummary, Option<&RunSummary>)> {
    let position = match iteration {
        Some(k) => history.iter().position(|r| r.iteration == k).ok_or_else(|| {
            let known: Vec<String> = history.iter().map(|r| r.iteration.to_string()).collect();
            Error::Invalid(format!(
                "the cycle has no run {k}; its runs are: {}",
                if known.is_empty() { "none yet".to_owned() } else { known.join(", ") }
            ))
        })?,
        None => history
            .len()
            .checked_sub(1)
            .ok_or_else(|| Error::Invalid("the cycle has no tested run yet; there is no diff to show".into()))?,
    };
    let run = &history[position];
    if !since_last {
        return Ok((run, None));
    }
    let previous = position.checked_sub(1).map(|p| &history[p]).ok_or_else(|| {
        Error::Invalid(format!(
            "run {} is the cycle's first; there is no earlier tested head to compare with (drop --since-last for the whole PR)",
            run.iteration
        ))
    })?;
    Ok((run, Some(previous)))
}

fn sha(text: &str) -> Result<String> {
    normalize_sha(text).ok_or_else(|| Error::Invalid(format!("{text:?} in the cycle's history is not a commit SHA")))
}

/// GitHub's view of the PR at `head`: the PR's diff while `head` is its head, else the
/// three-dot compare from the base branch.
async fn whole_pr_raw(engine: &Engine, pr: &PrRef, head: &str) -> Result<String> {
    let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
    let text = if pull.head_sha == head {
        engine.github.pull_diff(&pr.repo, pr.number).await?
    } else {
        engine.github.compare_diff(&pr.repo, &pull.base_ref, head).await?
    };
    Ok(text)
}

/// From the mirror alone when it has both commits (offline); else from GitHub's clone URL.
async fn since_last_raw(ctx: &Ctx, engine: &Engine, pr: &PrRef, old: &str, new: &str) -> Result<String> {
    match tree_diff(ctx, engine, pr.repo.clone(), None, old, new).await {
        Err(Error::Checkout(checkout::CheckoutError::CommitMissing { .. })) => {
            let pull = engine.github.pull_request(&pr.repo, pr.number).await?;
            tree_diff(ctx, engine, pull.repository.clone(), Some(pull.base_clone_url.clone()), old, new).await
        }
        other => other,
    }
}

async fn tree_diff(
    ctx: &Ctx,
    engine: &Engine,
    repo: crate::domain::pr_ref::RepoName,
    clone_url: Option<String>,
    old: &str,
    new: &str,
) -> Result<String> {
    let request = (
        ctx.home.mirrors_dir(),
        repo,
        clone_url,
        engine.token.clone(),
        engine.github.is_loopback(),
        old.to_owned(),
        new.to_owned(),
    );
    tokio::task::spawn_blocking(move || {
        let (mirrors, repo, url, token, loopback, old, new) = request;
        checkout::tree_diff(&TreeDiffRequest {
            mirrors_root: &mirrors,
            repo: &repo,
            clone_url: url.as_deref(),
            token: token.as_deref(),
            allow_insecure_local: loopback,
            old_sha: &old,
            new_sha: &new,
        })
    })
    .await
    .map_err(|e| Error::Invalid(format!("the diff task failed: {e}")))?
    .map_err(Error::Checkout)
}

fn save(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::store::private::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    write_atomic(path, text.as_bytes()).map_err(|e| Error::io(format!("cannot write the diff {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::report::TestStatus;
    use crate::domain::state::Actor;

    fn run(iteration: u32, sha: char) -> RunSummary {
        RunSummary {
            iteration,
            pr: "acme/widget#7".into(),
            head_sha: sha.to_string().repeat(40),
            status: TestStatus::Failed,
            started_at: String::new(),
            finished_at: String::new(),
            duration_seconds: 0.0,
            actor: Actor::Agent,
            log_path: None,
            report_path: None,
            comment_url: None,
            sandbox: None,
            commands_sha256: None,
            base_sha: None,
            merge_sha: None,
        }
    }

    #[test]
    fn runs_are_picked_by_iteration_and_the_first_has_no_since_last() {
        let history = [run(1, 'a'), run(2, 'b'), run(3, 'c')];
        let (last, prev) = pick_runs(&history, None, true).unwrap();
        assert_eq!((last.iteration, prev.map(|p| p.iteration)), (3, Some(2)));
        let (second, none) = pick_runs(&history, Some(2), false).unwrap();
        assert_eq!((second.iteration, none.is_none()), (2, true));
        let first = pick_runs(&history, Some(1), true).unwrap_err().to_string();
        assert!(first.contains("run 1 is the cycle's first"), "{first}");
        let missing = pick_runs(&history, Some(9), false).unwrap_err().to_string();
        assert!(missing.contains("its runs are: 1, 2, 3"), "{missing}");
        assert!(pick_runs(&[], None, false).unwrap_err().to_string().contains("no tested run yet"));
    }
}
