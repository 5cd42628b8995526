//! Effect handlers that reach outside the process: the rerun, making a diff, the browser.

use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::cycle::files::CyclePaths;

/// Runs the tests of a cycle again (design §6.3): same code path as `forge --pr` with the
/// cycle's stored PR and commands, re-resolving the PR's current head; counts as an
/// iteration; writes the live log `NAME.d/runs/<iteration>-<sha12>.log` (the Log tab follows
/// it); stops the process group when `cancel` becomes `true`. Returns a one-line summary.
pub async fn run_rerun(ctx: Ctx, paths: CyclePaths, cancel: watch::Receiver<bool>) -> Result<String, String> {
    let (ctx, engine) = engine(ctx).await?;
    let outcome = crate::cycle::pr_test::rerun(&ctx, &engine, &paths, cancel)
        .await
        .map_err(|e| ctx.redactor.redact(&e.to_string()).into_owned())?;
    let state = &outcome.saved.state;
    Ok(match &outcome.report {
        Some(report) => {
            format!("{} at iteration {} ({})", report.status.as_str(), state.iteration, &report.head_sha[..12])
        }
        None => format!("nothing ran: the cycle is {}", state.status),
    })
}

/// The GitHub engine, with the token the context was built with.
async fn engine(ctx: Ctx) -> Result<(Ctx, crate::cycle::pr_test::Engine), String> {
    crate::cycle::pr_test::Engine::discover(&ctx).map(|(engine, _)| (ctx, engine)).map_err(|e| e.to_string())
}

/// Makes the diff of run `iteration` of a cycle (design §6.7) through `cycle::diff::of_cycle`,
/// which caches it redacted under the cycle's directory, and indexes it for the Diff tab
/// (the text itself is dropped: the tab reads it back from the cache a window at a time).
pub async fn make_diff(
    ctx: Ctx,
    paths: CyclePaths,
    iteration: u32,
    since_last: bool,
) -> Result<crate::tui::pager::diff::DiffDoc, String> {
    let (ctx, engine) = engine(ctx).await?;
    let view = crate::cycle::diff::of_cycle(&ctx, &engine, &paths, Some(iteration), since_last)
        .await
        .map_err(|e| ctx.redactor.redact(&e.to_string()).into_owned())?;
    let cache = view.cache.clone().ok_or("the diff was not cached")?;
    let redactor = ctx.redactor.clone();
    tokio::task::spawn_blocking(move || {
        crate::tui::pager::diff::DiffDoc::from_text(cache, &view.text, view.files, view.masked, &redactor)
    })
    .await
    .map_err(|e| e.to_string())
}

/// Opens a URL with the platform opener, detached; an error says why so the URL can be shown.
pub async fn open_url(url: &str) -> Result<(), String> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(format!("refusing to open {url:?}: not an http(s) URL"));
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let mut child = Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {opener}: {e}"))?;
    let waited = tokio::time::timeout(Duration::from_secs(5), tokio::task::spawn_blocking(move || child.wait())).await;
    match waited {
        Ok(Ok(Ok(status))) if status.success() => Ok(()),
        Ok(Ok(Ok(status))) => Err(format!("{opener} failed ({status})")),
        Ok(Ok(Err(e))) => Err(format!("{opener}: {e}")),
        Ok(Err(e)) => Err(e.to_string()),
        // Still running: it launched something; the child is reaped by the blocking task.
        Err(_) => Ok(()),
    }
}
