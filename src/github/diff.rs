//! A pull request's change as GitHub shows it (design §6.7): the PR's diff media type, or the
//! compare API's three-dot diff from the base branch to a tested SHA that is no longer the head.

use serde::Deserialize;

use super::client::{GithubClient, MAX_PAGES, PER_PAGE};
use super::errors::GithubError;
use super::transport::Call;
use crate::domain::pr_ref::RepoName;
use crate::domain::report::normalize_sha;

const DIFF_MEDIA_TYPE: &str = "application/vnd.github.diff";

impl GithubClient {
    /// The unified diff of PR `number` at its current head, against its base branch. GitHub
    /// refuses the diff media type for a very large PR (`406`, over 20,000 lines or 300
    /// files); the diff is then rebuilt from the PR's file list, whose per-file patches GitHub
    /// still gives (up to 3,000 files; a huge file's patch may be missing).
    pub async fn pull_diff(&self, repo: &RepoName, number: u64) -> Result<String, GithubError> {
        let action = format!("reading the diff of {repo}#{number}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/pulls/{number}", repo.owner(), repo.name());
        match self.transport.get_as(&path, DIFF_MEDIA_TYPE, &call).await {
            Ok(reply) => Ok(String::from_utf8_lossy(&reply.body).into_owned()),
            Err(GithubError::Http { status: 406, .. }) => {
                let mut files = Vec::new();
                let mut next = format!("{path}/files?per_page={PER_PAGE}");
                for _ in 0..MAX_PAGES {
                    let reply = self.transport.get(&next, &call).await?;
                    let page: Vec<WireFile> = reply.json(&call)?;
                    let empty = page.is_empty();
                    files.extend(page);
                    match reply.next_link() {
                        Some(link) if !empty => next = link,
                        _ => break,
                    }
                }
                Ok(diff_of_files(&files))
            }
            Err(err) => Err(err),
        }
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
        match self.transport.get_as(&path, DIFF_MEDIA_TYPE, &call).await {
            Ok(reply) => Ok(String::from_utf8_lossy(&reply.body).into_owned()),
            // Too large for the diff media type: the comparison's file list (300 files at most).
            Err(GithubError::Http { status: 406, .. }) => {
                let compare: WireCompare = self.transport.get(&path, &call).await?.json(&call)?;
                Ok(diff_of_files(&compare.files))
            }
            Err(err) => Err(err),
        }
    }
}

#[derive(Deserialize)]
struct WireCompare {
    #[serde(default)]
    files: Vec<WireFile>,
}

#[derive(Deserialize)]
struct WireFile {
    filename: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    previous_filename: Option<String>,
    #[serde(default)]
    patch: Option<String>,
}

/// A unified diff rebuilt from GitHub's per-file patches (the hunks only): the headers `git
/// diff` would write around them. A file without a patch (binary, or too large) says so.
fn diff_of_files(files: &[WireFile]) -> String {
    let mut out = String::new();
    for file in files {
        let old = file.previous_filename.as_deref().unwrap_or(&file.filename);
        out.push_str(&format!("diff --git a/{old} b/{}\n", file.filename));
        match file.status.as_str() {
            "added" => out.push_str("new file mode 100644\n"),
            "removed" => out.push_str("deleted file mode 100644\n"),
            "renamed" => out.push_str(&format!("rename from {old}\nrename to {}\n", file.filename)),
            _ => {}
        }
        let (from, to) = match file.status.as_str() {
            "added" => ("/dev/null".to_owned(), format!("b/{}", file.filename)),
            "removed" => (format!("a/{old}"), "/dev/null".to_owned()),
            _ => (format!("a/{old}"), format!("b/{}", file.filename)),
        };
        match file.patch.as_deref().filter(|p| !p.is_empty()) {
            Some(patch) => {
                out.push_str(&format!("--- {from}\n+++ {to}\n{patch}"));
                if !patch.ends_with('\n') {
                    out.push('\n');
                }
            }
            None if file.status == "renamed" => {}
            None => out.push_str(&format!("Binary files {from} and {to} differ\n")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::diff::{FileStatus, index};

    #[test]
    fn a_diff_rebuilt_from_the_file_list_indexes_like_the_real_one() {
        let files: Vec<WireFile> = serde_json::from_str(
            r#"[
              {"filename": "calc.sh", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b"},
              {"filename": "new.txt", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+x\n+y"},
              {"filename": "old.txt", "status": "removed", "patch": "@@ -1 +0,0 @@\n-gone"},
              {"filename": "docs.md", "previous_filename": "notes.md", "status": "renamed"},
              {"filename": "logo.png", "status": "added"}
            ]"#,
        )
        .unwrap();
        let text = diff_of_files(&files);
        let summary: Vec<(String, FileStatus, bool, u64, u64)> =
            index(text.lines()).into_iter().map(|f| (f.path, f.status, f.binary, f.additions, f.deletions)).collect();
        assert_eq!(
            summary,
            [
                ("calc.sh".into(), FileStatus::Modified, false, 1, 1),
                ("new.txt".into(), FileStatus::Added, false, 2, 0),
                ("old.txt".into(), FileStatus::Removed, false, 0, 1),
                ("docs.md".into(), FileStatus::Renamed, false, 0, 0),
                ("logo.png".into(), FileStatus::Added, true, 0, 0),
            ]
        );
    }
}
