//! A pull request's change as GitHub shows it (design §6.7): the PR's diff media type, or the
//! compare API's three-dot diff from the base branch to a tested SHA that is no longer the head.

use super::client::GithubClient;
use super::errors::GithubError;
use super::transport::Call;
use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;

const DIFF_MEDIA_TYPE: &str = "application/vnd.github.diff";

impl GithubClient {
    /// The unified diff of PR `number` at its current head, against its base branch.
    pub async fn pull_diff(&self, repo: &RepoName, number: u64) -> Result<String, GithubError> {
        let action = format!("reading the diff of {repo}#{number}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/pulls/{number}", repo.owner(), repo.name());
        let reply = self.transport.get_as(&path, DIFF_MEDIA_TYPE, &call).await?;
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }

    /// The three-dot diff from branch `base` to commit `sha` (what the PR showed when `sha` was
    /// its head).
    pub async fn compare_diff(&self, repo: &RepoName, base: &str, sha: &str) -> Result<String, GithubError> {
        let sha = normalize_sha(sha).ok_or_else(|| GithubError::InvalidInput {
            what: "commit SHA",
            detail: format!("{sha:?} is not 40 hex digits"),
        })?;
        let action = format!("comparing {repo} {base}...{}", &sha[..12]);
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        // Slashes stay: GitHub reads `feature/x...sha` as the branch `feature/x`.
        let base = super::checks::path_segment(base).replace("%2F", "/");
        let path = format!("/repos/{}/{}/compare/{base}...{sha}", repo.owner(), repo.name());
        let reply = self.transport.get_as(&path, DIFF_MEDIA_TYPE, &call).await?;
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }
}
