//! What the `github-checks` executor reads and asks of GitHub (design §5.7): a commit's check
//! runs (conditionally, so an unchanged answer is a free `304`), an Actions job's steps and
//! log, the base branch's required checks, a workflow dispatch and a re-run of failed jobs.

use std::collections::BTreeMap;

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::client::{GithubClient, MAX_PAGES, PER_PAGE, too_many_pages};
use super::errors::GithubError;
use super::transport::Call;
use crate::domain::checks::ObservedCheck;
use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;

/// A conditional read: unchanged since the ETag given, or the new value and its ETag.
#[derive(Debug, Clone, PartialEq)]
pub enum Polled<T> {
    /// `304`: nothing changed since the ETag given.
    NotModified,
    /// A new answer.
    Changed {
        /// The answer's ETag, for the next conditional read.
        etag: Option<String>,
        /// The new value.
        value: T,
    },
}

/// One check run with what a report and a handoff need beyond the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRunInfo {
    /// What the verdict needs: id, name, status, conclusion, times, link.
    pub observed: ObservedCheck,
    /// `output.title`, `output.summary`, `output.text` (any may be empty).
    pub output: [String; 3],
    /// The Actions job behind it: GitHub Actions check runs share their job's id.
    pub actions_job: Option<u64>,
}

/// An Actions job's steps, to name the failing one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSteps {
    /// The Actions workflow run the job belongs to.
    pub run_id: Option<u64>,
    /// `(name, conclusion)` in order.
    pub steps: Vec<(String, Option<String>)>,
}

impl JobSteps {
    /// The first step that failed.
    pub fn first_failing(&self) -> Option<&str> {
        self.steps
            .iter()
            .find(|(_, conclusion)| {
                matches!(conclusion.as_deref(), Some("failure" | "timed_out" | "cancelled" | "action_required"))
            })
            .map(|(name, _)| name.as_str())
    }
}

#[derive(Deserialize)]
struct WirePage {
    #[serde(default)]
    check_runs: Vec<WireRun>,
}

#[derive(Deserialize)]
struct WireRun {
    id: u64,
    name: String,
    status: String,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    started_at: Option<String>,
    #[serde(default)]
    completed_at: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    details_url: Option<String>,
    #[serde(default)]
    app: Option<WireApp>,
    #[serde(default)]
    output: Option<WireOutput>,
}

#[derive(Deserialize)]
struct WireApp {
    #[serde(default)]
    slug: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireOutput {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct WireJob {
    #[serde(default)]
    run_id: Option<u64>,
    #[serde(default)]
    steps: Vec<WireStep>,
}

#[derive(Deserialize)]
struct WireStep {
    name: String,
    #[serde(default)]
    conclusion: Option<String>,
}

#[derive(Deserialize)]
struct WireProtection {
    #[serde(default)]
    contexts: Vec<String>,
    #[serde(default)]
    checks: Vec<WireContext>,
}

#[derive(Deserialize)]
struct WireContext {
    context: String,
}

#[derive(Deserialize)]
struct WireRule {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    parameters: Option<WireRuleParameters>,
}

#[derive(Deserialize)]
struct WireRuleParameters {
    #[serde(default)]
    required_status_checks: Vec<WireContext>,
}

impl GithubClient {
    /// Every check run of commit `sha` (re-runs included), unless unchanged since `etag`. Only
    /// the first page is asked conditionally; more than one page is read in full.
    pub async fn poll_check_runs(
        &self,
        repo: &RepoName,
        sha: &str,
        etag: Option<&str>,
    ) -> Result<Polled<Vec<CheckRunInfo>>, GithubError> {
        let sha = normalize_sha(sha).ok_or_else(|| GithubError::InvalidInput {
            what: "commit SHA",
            detail: format!("{sha:?} is not 40 hex digits"),
        })?;
        let action = format!("reading check runs of {repo}@{}", &sha[..12]);
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let first =
            format!("/repos/{}/{}/commits/{sha}/check-runs?filter=all&per_page={PER_PAGE}", repo.owner(), repo.name());
        let Some(reply) = self.transport.get_if_changed(&first, etag, &call).await? else {
            return Ok(Polled::NotModified);
        };
        let new_etag = reply.headers.get(http::header::ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let mut runs = Vec::new();
        let mut reply = reply;
        for _ in 0..MAX_PAGES {
            let page: WirePage = reply.json(&call)?;
            let empty = page.check_runs.is_empty();
            runs.extend(page.check_runs.into_iter().map(WireRun::into_info));
            match reply.next_link() {
                Some(link) if !empty => reply = self.transport.get(&link, &call).await?,
                _ => return Ok(Polled::Changed { etag: new_etag, value: runs }),
            }
        }
        Err(too_many_pages(&call))
    }

    /// The steps of Actions job `job_id`.
    pub async fn actions_job(&self, repo: &RepoName, job_id: u64) -> Result<JobSteps, GithubError> {
        let action = format!("reading Actions job {job_id} of {repo}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/actions/jobs/{job_id}", repo.owner(), repo.name());
        let job: WireJob = self.transport.get(&path, &call).await?.json(&call)?;
        Ok(JobSteps { run_id: job.run_id, steps: job.steps.into_iter().map(|s| (s.name, s.conclusion)).collect() })
    }

    /// The plain-text log of Actions job `job_id`. GitHub answers with a redirect to a signed
    /// URL on another host; the token is not sent there (see the transport).
    pub async fn job_log(&self, repo: &RepoName, job_id: u64) -> Result<String, GithubError> {
        let action = format!("downloading the log of Actions job {job_id} of {repo}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/actions/jobs/{job_id}/logs", repo.owner(), repo.name());
        let reply = self.transport.get(&path, &call).await?;
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }

    /// The status checks branch `branch` requires: branch protection's, then the rulesets'
    /// (both when both exist), each name once. A 403/404 from one source is not an error when
    /// the other answers; a 403 from both is (the token may not read them).
    pub async fn required_checks(&self, repo: &RepoName, branch: &str) -> Result<Vec<String>, GithubError> {
        let resource = repo.full_name();
        let segment = path_segment(branch);
        let action = format!("reading the required status checks of {repo} branch {branch}");
        let call = Call { action: &action, resource: &resource };
        let protection_path =
            format!("/repos/{}/{}/branches/{segment}/protection/required_status_checks", repo.owner(), repo.name());
        let rules_path = format!("/repos/{}/{}/rules/branches/{segment}", repo.owner(), repo.name());
        let mut names: Vec<String> = Vec::new();
        let mut push = |name: String| {
            if !names.contains(&name) {
                names.push(name);
            }
        };
        let protection = match self.transport.get(&protection_path, &call).await {
            Ok(reply) => {
                let wire: WireProtection = reply.json(&call)?;
                wire.contexts.into_iter().chain(wire.checks.into_iter().map(|c| c.context)).for_each(&mut push);
                None
            }
            Err(err @ (GithubError::NotFound { .. } | GithubError::Forbidden { .. })) => Some(err),
            Err(err) => return Err(err),
        };
        let rules = match self.transport.get(&rules_path, &call).await {
            Ok(reply) => {
                let wire: Vec<WireRule> = reply.json(&call)?;
                wire.into_iter()
                    .filter(|rule| rule.kind == "required_status_checks")
                    .filter_map(|rule| rule.parameters)
                    .flat_map(|p| p.required_status_checks)
                    .for_each(|c| push(c.context));
                None
            }
            Err(err @ (GithubError::NotFound { .. } | GithubError::Forbidden { .. })) => Some(err),
            Err(err) => return Err(err),
        };
        match (protection, rules) {
            (Some(a), Some(b)) => match (a, b) {
                (err @ GithubError::Forbidden { .. }, _) | (_, err @ GithubError::Forbidden { .. }) => Err(err),
                // Neither protection nor a ruleset: nothing is required.
                _ => Ok(names),
            },
            _ => Ok(names),
        }
    }

    /// Starts workflow `workflow` (file name or id) on `git_ref` with `inputs`.
    pub async fn dispatch_workflow(
        &self,
        repo: &RepoName,
        workflow: &str,
        git_ref: &str,
        inputs: &BTreeMap<String, String>,
    ) -> Result<(), GithubError> {
        let action = format!("dispatching workflow {workflow} of {repo} on {git_ref}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path =
            format!("/repos/{}/{}/actions/workflows/{}/dispatches", repo.owner(), repo.name(), path_segment(workflow));
        self.transport.send(Method::POST, &path, &json!({"ref": git_ref, "inputs": inputs}), &call).await?;
        Ok(())
    }

    /// Asks GitHub to re-run the failed jobs of Actions run `run_id`.
    pub async fn rerun_failed_jobs(&self, repo: &RepoName, run_id: u64) -> Result<(), GithubError> {
        let action = format!("re-running the failed jobs of Actions run {run_id} of {repo}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/actions/runs/{run_id}/rerun-failed-jobs", repo.owner(), repo.name());
        self.transport.send(Method::POST, &path, &json!({}), &call).await?;
        Ok(())
    }
}

impl WireRun {
    fn into_info(self) -> CheckRunInfo {
        let app = self.app.and_then(|a| a.slug);
        let actions_job = (app.as_deref() == Some("github-actions")).then_some(self.id);
        let output = self.output.unwrap_or_default();
        CheckRunInfo {
            observed: ObservedCheck {
                id: self.id,
                name: self.name,
                status: self.status,
                conclusion: self.conclusion,
                started_at: self.started_at,
                completed_at: self.completed_at,
                url: self.html_url.or(self.details_url),
                app,
            },
            output: [
                output.title.unwrap_or_default(),
                output.summary.unwrap_or_default(),
                output.text.unwrap_or_default(),
            ],
            actions_job,
        }
    }
}

/// A URL path segment: unreserved characters as they are, everything else percent-encoded
/// (a branch `feature/x` becomes `feature%2Fx`).
pub(super) fn path_segment(text: &str) -> String {
    /// Every byte but the unreserved ones (RFC 3986): a `/`, `?` or `#` cannot leave the segment.
    const SEGMENT: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    if text == "." || text == ".." {
        return text.replace('.', "%2E");
    }
    percent_encoding::utf8_percent_encode(text, SEGMENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_cannot_leave_their_place_in_the_url() {
        assert_eq!(path_segment("feature/x"), "feature%2Fx");
        assert_eq!(path_segment("ci.yml"), "ci.yml");
        assert_eq!(path_segment("../a?b#c"), "..%2Fa%3Fb%23c");
        assert_eq!(path_segment(".."), "%2E%2E");
    }

    #[test]
    fn the_first_failing_step_is_named() {
        let steps = JobSteps {
            run_id: Some(1),
            steps: vec![
                ("Set up job".into(), Some("success".into())),
                ("Run sh test.sh".into(), Some("failure".into())),
                ("Post".into(), Some("skipped".into())),
            ],
        };
        assert_eq!(steps.first_failing(), Some("Run sh test.sh"));
    }
}
