//! Effect handlers that reach outside the process: the rerun and the browser.

use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::store::layout::CyclePaths;

/// Runs the tests of a cycle again (SPEC §6.3): same code path as `forge --pr` with the
/// cycle's stored PR and commands, re-resolving the PR's current head; counts as an
/// iteration; writes the live log `NAME.d/runs/<iteration>-<sha12>.log` (the Log tab follows
/// it); stops the process group when `cancel` becomes `true`. Returns a one-line summary.
///
/// LEAD: this is the single place to wire the test use case. Replace the body with
/// `crate::cycle::test::rerun(&ctx, &paths, cancel).await` mapped to a summary string
/// (e.g. "TEST_FAILED at iteration 3") and its error to `e.to_string()`. Everything around it
/// (background task, spinner, live log, cancel, quit guard, abort-after-cancel) is in place.
pub async fn run_rerun(ctx: Ctx, paths: CyclePaths, cancel: watch::Receiver<bool>) -> Result<String, String> {
    let _ = (ctx, paths, cancel);
    Err("rerun is not available in this build yet: the test use case (crate::cycle::test::rerun) is not wired in"
        .into())
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
