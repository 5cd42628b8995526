//! The change a pull request or a comparison makes, as GitHub serves it: `GET .../pulls/{n}`
//! with a diff or patch `Accept`, `GET .../pulls/{n}/files`, and `GET .../compare/{base}...{head}`
//! (or `..`). Names a client sends are resolved to full SHAs first (a branch or tag under
//! `refs/`, or hex), so none ever reaches git as an option. Part of the REST handler; the git
//! work is in `diff`.

use std::path::PathBuf;

use http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use super::{Ctx, link_header, lookup, not_found, page_params, query_param};
use crate::diff::{self, CommitInfo, FileChange};
use crate::git;
use crate::http_util::{Resp, bytes_response, error_json, json_response, percent_decode};
use crate::state::PullState;

/// GitHub lists at most 3000 files of a pull request, 300 of a comparison, and 250 commits of
/// an unpaginated comparison.
const MAX_PULL_FILES: usize = 3000;
const MAX_COMPARE_FILES: usize = 300;
const MAX_COMPARE_COMMITS: usize = 250;

/// What a client asked for in `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Media {
    Json,
    /// `application/vnd.github[.v3].diff`: the unified diff.
    Diff,
    /// `application/vnd.github[.v3].patch`: one mail per commit.
    Patch,
}

/// The first of GitHub's diff or patch media types `Accept` names; JSON otherwise.
pub(super) fn media(headers: &HeaderMap) -> Media {
    let types = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    for media_type in types {
        if let Some(rest) = media_type.strip_prefix("application/vnd.github") {
            if rest.ends_with(".diff") {
                return Media::Diff;
            }
            if rest.ends_with(".patch") {
                return Media::Patch;
            }
        }
    }
    Media::Json
}

/// A repository's directory and its names in URLs.
struct Repo {
    dir: PathBuf,
    /// `{web}/{owner}/{name}` and `{api}/repos/{owner}/{name}`.
    web: String,
    api: String,
    id: u64,
}

fn repo(ctx: &Ctx<'_>, owner: &str, name: &str) -> Option<Repo> {
    let key = lookup(ctx, owner, name)?;
    let state = ctx.core.state();
    let rec = state.repos.get(&key)?;
    let full = rec.full_name();
    Some(Repo {
        dir: rec.dir.clone(),
        web: format!("{}/{full}", ctx.core.base_url),
        api: format!("{}/repos/{full}", ctx.api),
        id: rec.id,
    })
}

/// A PR's change: from the merge base of its base and its head (`refs/pull/N/head` in the base
/// repository, a fork's commit included) to the head. The base is the base branch's tip while
/// the PR is open, the recorded base once closed.
async fn pull_span(ctx: &Ctx<'_>, owner: &str, name: &str, number: &str) -> Result<(Repo, String, String), Resp> {
    let (Some(repo), Ok(number)) = (repo(ctx, owner, name), number.parse::<u64>()) else { return Err(not_found()) };
    let found = lookup(ctx, owner, name).and_then(|key| {
        let state = ctx.core.state();
        let pr = state.pulls.get(&(key, number))?;
        Some((pr.base_ref.clone(), pr.base_sha.clone(), pr.head_sha.clone(), pr.state == PullState::Open))
    });
    let Some((base_ref, base_sha, head, open)) = found else { return Err(not_found()) };
    let tip = match open && git::valid_branch(&base_ref) {
        true => git::rev_parse(&repo.dir, &format!("refs/heads/{base_ref}")).await,
        false => None,
    };
    let base = tip.unwrap_or(base_sha);
    match git::merge_base(&repo.dir, &base, &head).await {
        Some(merge_base) => Ok((repo, merge_base, head)),
        None => Err(error_json(StatusCode::NOT_FOUND, "No common ancestor between the base and the head.")),
    }
}

fn git_failed(e: &crate::error::EmulatorError) -> Resp {
    error_json(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())
}

/// The diff text (or patch series) from `from` to `to`.
async fn text(repo: &Repo, from: &str, to: &str, media: Media) -> Resp {
    let (output, content_type) = match media {
        Media::Patch => (diff::patch_series(&repo.dir, from, to).await, "application/vnd.github.patch; charset=utf-8"),
        _ => (diff::unified(&repo.dir, from, to).await, "application/vnd.github.diff; charset=utf-8"),
    };
    match output {
        Ok(bytes) => bytes_response(StatusCode::OK, content_type, bytes),
        Err(e) => git_failed(&e),
    }
}

/// `GET .../pulls/{n}` with a diff or patch `Accept`.
pub(super) async fn pull_text(ctx: &Ctx<'_>, owner: &str, name: &str, number: &str, media: Media) -> Resp {
    match pull_span(ctx, owner, name, number).await {
        Ok((repo, merge_base, head)) => text(&repo, &merge_base, &head, media).await,
        Err(response) => response,
    }
}

/// `GET .../pulls/{n}/files`: paginated (`per_page` at most 100), at most 3000 files.
pub(super) async fn pull_files(ctx: &Ctx<'_>, owner: &str, name: &str, number: &str, query: &str) -> Resp {
    let (repo, merge_base, head) = match pull_span(ctx, owner, name, number).await {
        Ok(span) => span,
        Err(response) => return response,
    };
    let mut files = match diff::files(&repo.dir, &merge_base, &head).await {
        Ok(files) => files,
        Err(e) => return git_failed(&e),
    };
    files.truncate(MAX_PULL_FILES);
    let (per_page, page) = page_params(query);
    let items: Vec<Value> = files
        .iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .map(|file| file_json(file, &repo, &merge_base, &head))
        .collect();
    let mut response = json_response(StatusCode::OK, &Value::Array(items));
    let url = format!("{}/repositories/{}/pulls/{number}/files", ctx.api, repo.id);
    if let Some(link) = link_header(&url, per_page, page, files.len()) {
        response.headers_mut().insert(http::header::LINK, link);
    }
    response
}

/// `GET .../compare/{base}...{head}` (three-dot: the change since their merge base) or
/// `{base}..{head}` (two-dot: straight from base to head). `base` and `head` are branches,
/// tags or SHAs; a branch with `/` may come raw or `%2F`-encoded.
pub(super) async fn compare(ctx: &Ctx<'_>, owner: &str, name: &str, basehead: &[&str], query: &str) -> Resp {
    let Some(repo) = repo(ctx, owner, name) else { return not_found() };
    let spec = percent_decode(&basehead.join("/"), false);
    // A name never holds `..`, so the first `...` (else `..`) is the separator.
    let (base_name, head_name, separator) = match (spec.split_once("..."), spec.split_once("..")) {
        (Some((base, head)), _) => (base, head, "..."),
        (None, Some((base, head))) => (base, head, ".."),
        (None, None) => return not_found(),
    };
    let (Some(base), Some(head)) = (resolve(&repo, base_name).await, resolve(&repo, head_name).await) else {
        return not_found();
    };
    let Some(merge_base) = git::merge_base(&repo.dir, &base, &head).await else {
        return error_json(StatusCode::NOT_FOUND, &format!("No common ancestor between {base_name} and {head_name}."));
    };
    let from = if separator == "..." { merge_base.clone() } else { base.clone() };
    let media = media(ctx.headers);
    if media == Media::Diff {
        return text(&repo, &from, &head, media).await;
    }
    if media == Media::Patch {
        return text(&repo, &base, &head, media).await;
    }
    let gathered = async {
        let (behind, ahead) = diff::behind_ahead(&repo.dir, &base, &head).await?;
        let commits = diff::commits(&repo.dir, Some(&base), &head).await?;
        let base_commit = diff::commits(&repo.dir, None, &base).await?;
        let merge_base_commit = diff::commits(&repo.dir, None, &merge_base).await?;
        let files = diff::files(&repo.dir, &from, &head).await?;
        Ok::<_, crate::error::EmulatorError>((behind, ahead, commits, base_commit, merge_base_commit, files))
    };
    let (behind, ahead, commits, base_commit, merge_base_commit, mut files) = match gathered.await {
        Ok(all) => all,
        Err(e) => return git_failed(&e),
    };
    let status = match (ahead, behind) {
        _ if base == head => "identical",
        (0, 0) => "identical",
        (_, 0) => "ahead",
        (0, _) => "behind",
        _ => "diverged",
    };
    // Unpaginated: the first 250 commits and every file (up to 300). Paginated: a page of
    // commits, the files on the first page only, as GitHub does.
    let paginated = query_param(query, "page").is_some() || query_param(query, "per_page").is_some();
    let (per_page, page) = page_params(query);
    let shown: Vec<&CommitInfo> = if paginated {
        commits.iter().skip((page - 1).saturating_mul(per_page)).take(per_page).collect()
    } else {
        commits.iter().take(MAX_COMPARE_COMMITS).collect()
    };
    if paginated && page > 1 {
        files.clear();
    }
    files.truncate(MAX_COMPARE_FILES);
    let one = |list: &[CommitInfo]| list.first().map(|c| commit_json(c, &repo)).unwrap_or(Value::Null);
    let web = format!("{}/compare/{base_name}{separator}{head_name}", repo.web);
    let owner_name = owner.to_owned();
    let value = json!({
        "url": format!("{}/compare/{base_name}{separator}{head_name}", repo.api),
        "html_url": web,
        "permalink_url": format!("{}/compare/{owner_name}:{base}{separator}{owner_name}:{head}", repo.web),
        "diff_url": format!("{web}.diff"),
        "patch_url": format!("{web}.patch"),
        "base_commit": one(&base_commit),
        "merge_base_commit": one(&merge_base_commit),
        "status": status,
        "ahead_by": ahead,
        "behind_by": behind,
        "total_commits": ahead,
        "commits": shown.iter().map(|c| commit_json(c, &repo)).collect::<Vec<_>>(),
        "files": files.iter().map(|file| file_json(file, &repo, &from, &head)).collect::<Vec<_>>(),
    });
    let mut response = json_response(StatusCode::OK, &value);
    if paginated {
        let url = format!("{}/repositories/{}/compare/{base_name}{separator}{head_name}", ctx.api, repo.id);
        if let Some(link) = link_header(&url, per_page, page, commits.len()) {
            response.headers_mut().insert(http::header::LINK, link);
        }
    }
    response
}

/// The commit a compare side names: a branch, then a tag (both looked up under `refs/`), then
/// a hex SHA of 4 to 40 digits. Anything else, an option-looking name included, is `None`.
async fn resolve(repo: &Repo, name: &str) -> Option<String> {
    if git::valid_branch(name) {
        for full in [format!("refs/heads/{name}"), format!("refs/tags/{name}")] {
            if let Some(sha) = git::rev_parse(&repo.dir, &full).await {
                return Some(sha);
            }
        }
    }
    let hex = (4..=40).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_hexdigit());
    if hex { git::rev_parse(&repo.dir, &name.to_ascii_lowercase()).await } else { None }
}

/// One entry of a `files` list. A removed file's blob and URLs are the old side's.
fn file_json(file: &FileChange, repo: &Repo, from: &str, to: &str) -> Value {
    let (sha, at) = if file.status == "removed" { (&file.old_sha, from) } else { (&file.new_sha, to) };
    let path = encode_path(&file.filename);
    let mut value = json!({
        "sha": sha,
        "filename": file.filename,
        "status": file.status,
        "additions": file.additions,
        "deletions": file.deletions,
        "changes": file.additions.saturating_add(file.deletions),
        "blob_url": format!("{}/blob/{at}/{path}", repo.web),
        "raw_url": format!("{}/raw/{at}/{path}", repo.web),
        "contents_url": format!("{}/contents/{path}?ref={at}", repo.api),
    });
    if let Some(map) = value.as_object_mut() {
        if let Some(patch) = &file.patch {
            map.insert("patch".to_owned(), Value::from(patch.as_str()));
        }
        if let Some(previous) = &file.previous_filename {
            map.insert("previous_filename".to_owned(), Value::from(previous.as_str()));
        }
    }
    value
}

/// A commit as the compare API lists it (no GitHub users are linked: `author` is null).
fn commit_json(commit: &CommitInfo, repo: &Repo) -> Value {
    let person = |(name, email, date): &(String, String, String)| json!({ "name": name, "email": email, "date": date });
    let sha = &commit.sha;
    json!({
        "sha": sha,
        "node_id": format!("C_emu{sha}"),
        "url": format!("{}/commits/{sha}", repo.api),
        "html_url": format!("{}/commit/{sha}", repo.web),
        "comments_url": format!("{}/commits/{sha}/comments", repo.api),
        "commit": {
            "url": format!("{}/git/commits/{sha}", repo.api),
            "author": person(&commit.author),
            "committer": person(&commit.committer),
            "message": commit.message,
            "tree": { "sha": commit.tree, "url": format!("{}/git/trees/{}", repo.api, commit.tree) },
            "comment_count": 0,
        },
        "author": null,
        "committer": null,
        "parents": commit.parents.iter().map(|p| json!({
            "sha": p, "url": format!("{}/commits/{p}", repo.api), "html_url": format!("{}/commit/{p}", repo.web),
        })).collect::<Vec<_>>(),
    })
}

/// A path as a URL path: every byte but unreserved ones and `/` percent-encoded.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accept(values: &[&str]) -> Media {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(http::header::ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        media(&headers)
    }

    #[test]
    fn accept_picks_githubs_diff_and_patch_types() {
        assert_eq!(accept(&[]), Media::Json);
        assert_eq!(accept(&["application/vnd.github+json"]), Media::Json);
        assert_eq!(accept(&["application/vnd.github.diff"]), Media::Diff);
        assert_eq!(accept(&["application/vnd.github.v3.diff; charset=utf-8"]), Media::Diff);
        assert_eq!(accept(&["Application/Vnd.GitHub.V3.Patch"]), Media::Patch);
        assert_eq!(accept(&["application/json, application/vnd.github.patch"]), Media::Patch);
        assert_eq!(accept(&["text/x-diff"]), Media::Json);
    }

    #[test]
    fn paths_are_url_encoded() {
        assert_eq!(encode_path("src/new name.txt"), "src/new%20name.txt");
        assert_eq!(encode_path("a?b#c%d/é"), "a%3Fb%23c%25d/%C3%A9");
    }
}
