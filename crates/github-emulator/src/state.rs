//! The emulator's in-memory world (repositories, pull requests, comments, check runs, faults,
//! request log) and its rendering as GitHub-shaped JSON. The git objects live on disk. Uses
//! only the public data and names.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::model::{
    ActionsRun, CheckRun, EmulatedComment, Fault, LogHostRequest, LoggedRequest, RequiredChecksSource, WorkflowDispatch,
};
use crate::names::RepoName;

pub(crate) struct RepoRec {
    pub id: u64,
    pub repo: RepoName,
    pub private: bool,
    pub org: bool,
    pub default_branch: String,
    pub fork_of: Option<String>,
    pub next_number: u64,
    pub created_at: String,
    pub dir: PathBuf,
}

impl RepoRec {
    pub fn full_name(&self) -> String {
        self.repo.full_name()
    }

    pub fn owner(&self) -> &str {
        self.repo.owner()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PullState {
    Open,
    Closed,
}

pub(crate) struct PullRec {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub author: String,
    /// Key and id of the head repository; the id tells a deleted fork from a new namesake.
    pub head_repo: (String, u64),
    pub head_ref: String,
    pub head_sha: String,
    pub base_ref: String,
    pub base_sha: String,
    pub state: PullState,
    pub merged: bool,
    pub draft: bool,
    pub created_at: String,
    pub updated_at: String,
    pub closed_at: Option<String>,
    pub merged_at: Option<String>,
    pub gets: u32,
    /// Whether the head merges into the base branch as it was when the test merge was last
    /// computed (on open, on each new head, or when asked); `None` until computed, as GitHub's
    /// `null`.
    pub mergeable: Option<bool>,
    /// The test merge commit at `refs/pull/N/merge` (parents: that base tip, the head).
    pub merge_sha: Option<String>,
}

pub(crate) struct CommentRec {
    pub id: u64,
    pub repo_key: String,
    pub number: u64,
    pub author: String,
    pub body: String,
    pub created_at: String,
    pub updated_at: String,
}

pub(crate) struct ActiveFault {
    pub fault: Fault,
    pub remaining: u32,
}

/// An Actions run as stored: the key of its repository, and its attempt (1, then one more for
/// each re-run, as GitHub's `run_attempt`).
pub(crate) struct RunRec {
    pub repo_key: String,
    pub run: ActionsRun,
    pub attempt: u32,
}

/// The required status checks of one branch from one source; `ruleset_id` names the ruleset
/// (kept across updates, so answers stay stable).
pub(crate) struct RequiredRec {
    pub contexts: Vec<String>,
    pub ruleset_id: u64,
}

#[derive(Default)]
pub(crate) struct State {
    next_id: u64,
    users: BTreeMap<String, u64>,
    pub repos: BTreeMap<String, RepoRec>,
    pub pulls: BTreeMap<(String, u64), PullRec>,
    pub comments: BTreeMap<u64, CommentRec>,
    pub check_runs: HashMap<String, Vec<CheckRun>>,
    pub overrides: HashMap<(String, u64), Value>,
    pub faults: Vec<ActiveFault>,
    pub requests: Vec<LoggedRequest>,
    pub next_request: u64,
    /// API requests counted against the rate limit (every answer but a 304).
    pub rate_used: u64,
    /// Actions job logs by job id, served by the log host.
    pub job_logs: HashMap<u64, String>,
    /// Every request the log host received, oldest first.
    pub log_requests: Vec<LogHostRequest>,
    /// Actions runs by id.
    pub actions_runs: BTreeMap<u64, RunRec>,
    /// Every workflow dispatch accepted, oldest first.
    pub dispatches: Vec<WorkflowDispatch>,
    /// Required status checks by (repository key, branch, source).
    pub required_checks: BTreeMap<(String, String, RequiredChecksSource), RequiredRec>,
    /// The run ids of every accepted `rerun-failed-jobs`, oldest first.
    pub reruns: Vec<u64>,
}

impl State {
    pub fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn user_id(&mut self, login: &str) -> u64 {
        let key = login.to_ascii_lowercase();
        if let Some(id) = self.users.get(&key) {
            return *id;
        }
        let id = self.new_id();
        self.users.insert(key, id);
        id
    }

    pub fn repo_by_id(&self, id: u64) -> Option<&RepoRec> {
        self.repos.values().find(|r| r.id == id)
    }

    pub fn emulated_comment(&self, c: &CommentRec) -> EmulatedComment {
        EmulatedComment { id: c.id, author: c.author.clone(), body: c.body.clone() }
    }
}

/// Renders GitHub-shaped JSON for one request. `api` is the API base the client used
/// (with `/api/v3` when it came that way); `web` is the web base.
pub(crate) struct Render<'a> {
    pub api: &'a str,
    pub web: &'a str,
    pub viewer: &'a str,
}

impl Render<'_> {
    pub fn user(&self, state: &mut State, login: &str, org: bool) -> Value {
        let id = state.user_id(login);
        let api = self.api;
        let u = format!("{api}/users/{login}");
        json!({
            "login": login, "id": id, "node_id": format!("U_emu{id}"),
            "avatar_url": format!("{}/avatars/{login}", self.web), "gravatar_id": "",
            "url": u, "html_url": format!("{}/{login}", self.web),
            "followers_url": format!("{u}/followers"), "following_url": format!("{u}/following{{/other_user}}"),
            "gists_url": format!("{u}/gists{{/gist_id}}"), "starred_url": format!("{u}/starred{{/owner}}{{/repo}}"),
            "subscriptions_url": format!("{u}/subscriptions"), "organizations_url": format!("{u}/orgs"),
            "repos_url": format!("{u}/repos"), "events_url": format!("{u}/events{{/privacy}}"),
            "received_events_url": format!("{u}/received_events"),
            "type": if org { "Organization" } else { "User" }, "site_admin": false,
        })
    }

    pub fn repo(&self, state: &mut State, key: &str) -> Value {
        let Some(rec) = state.repos.get(key) else { return Value::Null };
        let (owner, org, full, id, private) = (rec.owner().to_owned(), rec.org, rec.full_name(), rec.id, rec.private);
        let (branch, created, fork_of) = (rec.default_branch.clone(), rec.created_at.clone(), rec.fork_of.clone());
        let name = rec.repo.name().to_owned();
        let owner_json = self.user(state, &owner, org);
        let can_push = owner.eq_ignore_ascii_case(self.viewer) || org;
        let parent = fork_of.as_deref().map(|k| self.repo_ref(state, k)).unwrap_or(Value::Null);
        let url = format!("{}/repos/{full}", self.api);
        json!({
            "id": id, "node_id": format!("R_emu{id}"), "name": name, "full_name": full,
            "private": private, "visibility": if private { "private" } else { "public" },
            "owner": owner_json, "html_url": format!("{}/{full}", self.web), "description": null,
            "fork": fork_of.is_some(), "url": url, "pulls_url": format!("{url}/pulls{{/number}}"),
            "issues_url": format!("{url}/issues{{/number}}"), "git_url": format!("{}/{full}.git", self.web),
            "clone_url": format!("{}/{full}.git", self.web), "ssh_url": format!("git@emulator:{full}.git"),
            "default_branch": branch, "created_at": created, "updated_at": created, "pushed_at": created,
            "archived": false, "disabled": false,
            "permissions": { "admin": can_push, "maintain": can_push, "push": can_push, "triage": true, "pull": true },
            "parent": parent,
        })
    }

    /// A short repository object (no parent), as embedded in `head.repo` / `base.repo`.
    fn repo_ref(&self, state: &mut State, key: &str) -> Value {
        let mut value = self.repo(state, key);
        if let Some(map) = value.as_object_mut() {
            map.remove("parent");
        }
        value
    }

    pub fn pull(&self, state: &mut State, base_key: &str, number: u64) -> Value {
        let Some(pr) = state.pulls.get(&(base_key.to_owned(), number)) else { return Value::Null };
        let Some(base) = state.repos.get(base_key) else { return Value::Null };
        let full = base.full_name();
        let base_owner = base.owner().to_owned();
        let (head_key, head_id) = pr.head_repo.clone();
        let head_alive = state.repos.get(&head_key).filter(|r| r.id == head_id).map(|r| r.owner().to_owned());
        let pr = PullSnapshot::of(pr);
        let author = self.user(state, &pr.author, false);
        let base_repo = self.repo_ref(state, base_key);
        let head_repo = if head_alive.is_some() { self.repo_ref(state, &head_key) } else { Value::Null };
        let head_label_owner = head_alive.clone().unwrap_or_else(|| "unknown".to_owned());
        let head_user = match &head_alive {
            Some(owner) => self.user(state, owner, false),
            None => Value::Null,
        };
        let base_user = self.user(state, &base_owner, false);
        let url = format!("{}/repos/{full}/pulls/{}", self.api, pr.number);
        let html = format!("{}/{full}/pull/{}", self.web, pr.number);
        let mut value = json!({
            "url": url, "id": pr.id, "node_id": format!("PR_emu{}", pr.id), "html_url": html,
            "diff_url": format!("{html}.diff"), "patch_url": format!("{html}.patch"),
            "issue_url": format!("{}/repos/{full}/issues/{}", self.api, pr.number),
            "number": pr.number, "state": if pr.open { "open" } else { "closed" }, "locked": false,
            "title": pr.title, "user": author, "body": null,
            "created_at": pr.created_at, "updated_at": pr.updated_at,
            "closed_at": pr.closed_at, "merged_at": pr.merged_at,
            "merge_commit_sha": if pr.merged { Value::from(pr.head_sha.clone()) } else { Value::from(pr.merge_sha.clone()) },
            "draft": pr.draft,
            "head": { "label": format!("{head_label_owner}:{}", pr.head_ref), "ref": pr.head_ref,
                      "sha": pr.head_sha, "user": head_user, "repo": head_repo },
            "base": { "label": format!("{base_owner}:{}", pr.base_ref), "ref": pr.base_ref,
                      "sha": pr.base_sha, "user": base_user, "repo": base_repo },
            "author_association": "OWNER", "merged": pr.merged, "mergeable": pr.mergeable,
            "mergeable_state": match pr.mergeable { Some(true) => "clean", Some(false) => "dirty", None => "unknown" },
            "comments": state.comments.values().filter(|c| c.repo_key == base_key && c.number == number).count(),
            "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
        });
        if let Some(patch) = state.overrides.get(&(base_key.to_owned(), number)) {
            merge_json(&mut value, patch);
        }
        value
    }

    pub fn comment(&self, state: &mut State, id: u64) -> Value {
        let Some(c) = state.comments.get(&id) else { return Value::Null };
        let (author, body, number, created, updated, key) = (
            c.author.clone(),
            c.body.clone(),
            c.number,
            c.created_at.clone(),
            c.updated_at.clone(),
            c.repo_key.clone(),
        );
        let full = state.repos.get(&key).map(RepoRec::full_name).unwrap_or(key);
        let user = self.user(state, &author, false);
        json!({
            "id": id, "node_id": format!("IC_emu{id}"),
            "url": format!("{}/repos/{full}/issues/comments/{id}", self.api),
            "html_url": format!("{}/{full}/pull/{number}#issuecomment-{id}", self.web),
            "issue_url": format!("{}/repos/{full}/issues/{number}", self.api),
            "body": body, "user": user, "created_at": created, "updated_at": updated,
            "author_association": if author.eq_ignore_ascii_case(self.viewer) { "OWNER" } else { "CONTRIBUTOR" },
        })
    }

    pub fn check_run(&self, index: usize, sha: &str, run: &CheckRun) -> Value {
        let id = run.id.unwrap_or(index as u64 + 1);
        let html_url = format!("{}/checks/{id}", self.web);
        let details_url = match run.job_id {
            Some(job) => format!("{}/actions/jobs/{job}", self.web),
            None => html_url.clone(),
        };
        let slug = run.app.as_deref().unwrap_or("github-actions");
        let app_name = if slug == "github-actions" { "GitHub Actions".to_owned() } else { slug.to_owned() };
        let output = run.output.clone().unwrap_or_default();
        json!({
            "id": id, "name": run.name, "head_sha": sha, "status": run.status,
            "conclusion": run.conclusion, "started_at": run.started_at, "completed_at": run.completed_at,
            "html_url": html_url, "details_url": details_url,
            "app": { "slug": slug, "name": app_name },
            "output": { "title": output.title, "summary": output.summary, "text": output.text },
        })
    }
}

/// The fields of a PR copied out, so rendering can borrow the state mutably meanwhile.
struct PullSnapshot {
    id: u64,
    number: u64,
    title: String,
    author: String,
    head_ref: String,
    head_sha: String,
    base_ref: String,
    base_sha: String,
    open: bool,
    merged: bool,
    draft: bool,
    created_at: String,
    updated_at: String,
    closed_at: Option<String>,
    merged_at: Option<String>,
    mergeable: Option<bool>,
    merge_sha: Option<String>,
}

impl PullSnapshot {
    fn of(pr: &PullRec) -> Self {
        PullSnapshot {
            id: pr.id,
            number: pr.number,
            title: pr.title.clone(),
            author: pr.author.clone(),
            head_ref: pr.head_ref.clone(),
            head_sha: pr.head_sha.clone(),
            base_ref: pr.base_ref.clone(),
            base_sha: pr.base_sha.clone(),
            open: pr.state == PullState::Open,
            merged: pr.merged,
            draft: pr.draft,
            created_at: pr.created_at.clone(),
            updated_at: pr.updated_at.clone(),
            closed_at: pr.closed_at.clone(),
            merged_at: pr.merged_at.clone(),
            mergeable: pr.mergeable,
            merge_sha: pr.merge_sha.clone(),
        }
    }
}

/// Deep-merges `patch` into `value` (objects merge key by key; anything else replaces).
pub(crate) fn merge_json(value: &mut Value, patch: &Value) {
    match (value, patch) {
        (Value::Object(target), Value::Object(source)) => {
            for (key, item) in source {
                match target.get_mut(key) {
                    Some(slot) => merge_json(slot, item),
                    None => {
                        target.insert(key.clone(), item.clone());
                    }
                }
            }
        }
        (slot, item) => *slot = item.clone(),
    }
}
