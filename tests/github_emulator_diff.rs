//! What a client reads to show a PR's change, served by the emulator as GitHub does, over real
//! HTTP on 127.0.0.1: the PR's diff (`Accept: application/vnd.github.diff`, three-dot from the
//! merge base), its file list, and the compare API; large diffs whole; unknown or option-looking
//! names refused before git sees them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod github_support;

use std::collections::HashMap;

use base64::Engine;
use github_support::{Answer, Setup, get_raw, git_ok, setup};
use serde_json::Value;

const DIFF: &str = "Accept: application/vnd.github.diff";

async fn get(s: &Setup, path: &str, extra: &[&str]) -> Answer {
    let extra: Vec<String> = extra.iter().map(|h| (*h).to_owned()).collect();
    get_raw(s.emulator.addr().port(), Some(&s.token), path, &extra).await
}

/// A 200 answer's body, or a failure naming what came back.
async fn ok(s: &Setup, path: &str, extra: &[&str]) -> Answer {
    let answer = get(s, path, extra).await;
    assert_eq!(answer.status, 200, "{path}: {}", answer.body);
    answer
}

fn basic_header(token: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"));
    format!("http.extraHeader=Authorization: Basic {encoded}")
}

fn numbered(prefix: &str, lines: usize) -> String {
    (1..=lines).map(|i| format!("{prefix} {i}\n")).collect()
}

/// The files of a `files` list by name.
fn by_name(list: &Value) -> HashMap<String, Value> {
    list.as_array().unwrap().iter().map(|f| (f["filename"].as_str().unwrap().to_owned(), f.clone())).collect()
}

/// `main` with four files; `feature` (pushed over smart HTTP) modifies, adds, deletes, renames
/// and changes a binary; `main` then moves on, which the PR's diff must not show.
#[tokio::test]
async fn a_prs_diff_and_files_are_githubs_three_dot_change() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let lib = numbered("fn line", 10);
    let old_doc = numbered("doc line", 20);
    let base_files =
        [("src/lib.rs", lib.as_str()), ("docs/old.md", &old_doc), ("gone.txt", "bye\n"), ("logo.bin", "\0PNG\x01v1")];
    s.emulator.commit_files(&repo, "main", &base_files, "Base").await.unwrap();

    let work = s.dir.path();
    git_ok(work, &["clone", "--quiet", &repo.clone_url, "checkout"]).await;
    let co = work.join("checkout");
    git_ok(&co, &["checkout", "--quiet", "-b", "feature"]).await;
    std::fs::write(co.join("src/lib.rs"), lib.replace("fn line 3\n", "fn line three\n")).unwrap();
    std::fs::write(co.join("src/new.rs"), "pub fn new() {}\n").unwrap();
    git_ok(&co, &["rm", "--quiet", "gone.txt"]).await;
    git_ok(&co, &["mv", "docs/old.md", "docs/new.md"]).await;
    std::fs::write(co.join("docs/new.md"), format!("{old_doc}doc line 21\n")).unwrap();
    std::fs::write(co.join("logo.bin"), b"\0PNG\x01v2\xff").unwrap();
    git_ok(&co, &["add", "--all"]).await;
    git_ok(&co, &["commit", "--quiet", "-m", "Change everything"]).await;
    git_ok(&co, &["-c", &basic_header(&s.token), "push", "--quiet", "origin", "feature"]).await;
    let head = git_ok(&co, &["rev-parse", "HEAD"]).await;
    let merge_base = git_ok(&co, &["rev-parse", "origin/main"]).await;
    let number = s.emulator.open_pr(&repo, "feature", "main", "Change").await.unwrap();
    s.emulator.commit_files(&repo, "main", &[("main-only.txt", "later\n")], "Later on main").await.unwrap();

    let pull = format!("/repos/acme/widget/pulls/{number}");
    let diff = ok(&s, &pull, &[DIFF]).await;
    assert!(diff.header("content-type").starts_with("application/vnd.github.diff"), "{:?}", diff.headers);
    let expected = git_ok(&co, &["diff", "--no-color", "--full-index", "-M", &merge_base, &head]).await;
    assert_eq!(diff.body.trim_end(), expected, "the diff is git's, from the merge base");
    assert!(diff.body.ends_with('\n'));
    for part in [
        "diff --git a/src/lib.rs b/src/lib.rs\nindex ",
        "-fn line 3\n+fn line three\n",
        "diff --git a/src/new.rs b/src/new.rs\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..",
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n",
        "diff --git a/docs/old.md b/docs/new.md\nsimilarity index ",
        "rename from docs/old.md\nrename to docs/new.md\n",
        "Binary files a/logo.bin and b/logo.bin differ\n",
    ] {
        assert!(diff.body.contains(part), "missing {part:?} in\n{}", diff.body);
    }
    assert!(!diff.body.contains("main-only.txt"), "base-branch commits after the fork point are not the PR's");
    let v3 = ok(&s, &pull, &["Accept: application/vnd.github.v3.diff"]).await;
    assert_eq!(v3.body, diff.body);
    let patch = ok(&s, &pull, &["Accept: application/vnd.github.patch"]).await;
    assert!(patch.body.starts_with(&format!("From {head} ")), "{}", patch.body);
    assert!(patch.body.contains("Subject: [PATCH] Change everything"), "{}", patch.body);
    let json = ok(&s, &pull, &[]).await;
    assert_eq!((json.json()["number"].as_u64(), json.json()["head"]["sha"].as_str()), (Some(number), Some(&*head)));

    let files = ok(&s, &format!("{pull}/files"), &[]).await;
    let list = files.json();
    assert_eq!(list.as_array().unwrap().len(), 5, "{list:#}");
    let files = by_name(&list);
    let view = |name: &str| {
        let f = &files[name];
        (f["status"].as_str().unwrap(), f["additions"].as_u64().unwrap(), f["deletions"].as_u64().unwrap())
    };
    assert_eq!(view("src/lib.rs"), ("modified", 1, 1));
    assert_eq!(view("src/new.rs"), ("added", 1, 0));
    assert_eq!(view("gone.txt"), ("removed", 0, 1));
    assert_eq!(view("docs/new.md"), ("renamed", 1, 0));
    assert_eq!(view("logo.bin"), ("modified", 0, 0));
    assert_eq!(files["docs/new.md"]["previous_filename"], "docs/old.md");
    assert!(files["src/lib.rs"].get("previous_filename").is_none());
    assert!(files["logo.bin"].get("patch").is_none(), "no patch for a binary file");
    assert_eq!(files["src/lib.rs"]["changes"], 2);
    let lib_patch = files["src/lib.rs"]["patch"].as_str().unwrap();
    assert!(lib_patch.starts_with("@@ -1,6 +1,6 @@") && lib_patch.contains("\n+fn line three"), "{lib_patch}");
    assert_eq!(files["src/new.rs"]["patch"], "@@ -0,0 +1 @@\n+pub fn new() {}");
    assert_eq!(files["src/new.rs"]["sha"], git_ok(&co, &["rev-parse", "HEAD:src/new.rs"]).await);
    assert_eq!(files["gone.txt"]["sha"], git_ok(&co, &["rev-parse", &format!("{merge_base}:gone.txt")]).await);
    let web = s.emulator.api_base();
    assert_eq!(files["src/new.rs"]["blob_url"], format!("{web}/acme/widget/blob/{head}/src/new.rs"));
    assert_eq!(files["src/new.rs"]["raw_url"], format!("{web}/acme/widget/raw/{head}/src/new.rs"));
    assert_eq!(files["src/new.rs"]["contents_url"], format!("{web}/repos/acme/widget/contents/src/new.rs?ref={head}"));

    let page = ok(&s, &format!("{pull}/files?per_page=2"), &[]).await;
    assert_eq!(page.json().as_array().unwrap().len(), 2);
    let link = page.header("link");
    assert!(link.contains("per_page=2&page=2>; rel=\"next\"") && link.contains("page=3>; rel=\"last\""), "{link}");
    let next = link.split(", ").find(|l| l.ends_with("rel=\"next\"")).unwrap();
    let next = next.trim_start_matches('<').split('>').next().unwrap().trim_start_matches(&web).to_owned();
    assert_eq!(ok(&s, &next, &[]).await.json().as_array().unwrap().len(), 2, "the Link URL works");
    let last = ok(&s, &format!("{pull}/files?per_page=2&page=3"), &[]).await;
    assert_eq!(last.json().as_array().unwrap().len(), 1);
    let mut paged: Vec<Value> = Vec::new();
    for p in 1..=3 {
        paged
            .extend(ok(&s, &format!("{pull}/files?per_page=2&page={p}"), &[]).await.json().as_array().unwrap().clone());
    }
    assert_eq!(Value::Array(paged), list, "the pages together are the whole list");
}

/// A force-push: the new head is not a descendant of the old one. The three-dot comparison shows
/// what the new head changes since the merge base; the two-dot one the straight difference.
#[tokio::test]
async fn compare_shows_a_force_push_from_the_merge_base() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let fork_point = git_ok(&repo.path, &["rev-parse", "refs/heads/main"]).await;
    let old = s.emulator.commit_files(&repo, "feature", &[("a.txt", "one\n")], "First try").await.unwrap();
    let number = s.emulator.open_pr(&repo, "feature", "main", "Try").await.unwrap();
    // The force-push, over smart HTTP: `feature` rewritten from the fork point.
    let work = s.dir.path();
    git_ok(work, &["clone", "--quiet", &repo.clone_url, "checkout"]).await;
    let co = work.join("checkout");
    git_ok(&co, &["checkout", "--quiet", "-B", "feature", &fork_point]).await;
    std::fs::write(co.join("a.txt"), "two\n").unwrap();
    std::fs::write(co.join("b.txt"), "bee\n").unwrap();
    git_ok(&co, &["add", "--all"]).await;
    git_ok(&co, &["commit", "--quiet", "-m", "Second try", "-m", "Body."]).await;
    git_ok(&co, &["-c", &basic_header(&s.token), "push", "--quiet", "--force", "origin", "feature"]).await;
    let new = git_ok(&co, &["rev-parse", "HEAD"]).await;
    assert_eq!(s.emulator.pr_head(&repo, number), Some(new.clone()), "the push moved the PR");
    s.emulator.commit_files(&repo, "main", &[("main-only.txt", "later\n")], "Later on main").await.unwrap();
    assert!(!github_support::git(&repo.path, &["merge-base", "--is-ancestor", &old, &new]).await.status.success());

    let three = ok(&s, &format!("/repos/acme/widget/compare/{old}...{new}"), &[]).await.json();
    assert_eq!(three["status"], "diverged");
    assert_eq!((three["ahead_by"].as_u64(), three["behind_by"].as_u64()), (Some(1), Some(1)));
    assert_eq!(three["total_commits"], 1);
    assert_eq!(three["merge_base_commit"]["sha"], fork_point.as_str());
    assert_eq!(three["base_commit"]["sha"], old.as_str());
    let commits = three["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1);
    assert_eq!(
        (commits[0]["sha"].as_str(), commits[0]["commit"]["message"].as_str()),
        (Some(&*new), Some("Second try\n\nBody."))
    );
    assert_eq!(commits[0]["parents"][0]["sha"], fork_point.as_str());
    let files = by_name(&three["files"]);
    assert_eq!(files.len(), 2);
    assert_eq!(
        (files["a.txt"]["status"].as_str(), files["a.txt"]["patch"].as_str()),
        (Some("added"), Some("@@ -0,0 +1 @@\n+two"))
    );
    assert_eq!(files["b.txt"]["status"], "added");

    let diff = ok(&s, &format!("/repos/acme/widget/compare/{old}...{new}"), &[DIFF]).await;
    assert!(diff.body.contains("diff --git a/a.txt b/a.txt\nnew file mode 100644\n"), "{}", diff.body);
    assert!(diff.body.contains("+two\n") && !diff.body.contains("-one"), "{}", diff.body);
    let pull = ok(&s, &format!("/repos/acme/widget/pulls/{number}"), &[DIFF]).await;
    assert_eq!(pull.body, diff.body, "the PR's diff follows the force-push, from the merge base");
    assert!(!pull.body.contains("main-only.txt"));

    let two = ok(&s, &format!("/repos/acme/widget/compare/{old}..{new}"), &[]).await.json();
    let files = by_name(&two["files"]);
    assert_eq!(
        (files["a.txt"]["status"].as_str(), files["a.txt"]["patch"].as_str()),
        (Some("modified"), Some("@@ -1 +1 @@\n-one\n+two"))
    );
    assert_eq!((two["status"].as_str(), two["ahead_by"].as_u64()), (Some("diverged"), Some(1)));
    let two_diff = ok(&s, &format!("/repos/acme/widget/compare/{old}..{new}"), &[DIFF]).await;
    assert!(two_diff.body.contains("-one\n+two\n"), "{}", two_diff.body);

    // Branch names, short SHAs, and the other statuses.
    let ahead = ok(&s, &format!("/repos/acme/widget/compare/{}...feature", &fork_point[..7]), &[]).await.json();
    assert_eq!(
        (ahead["status"].as_str(), ahead["ahead_by"].as_u64(), ahead["behind_by"].as_u64()),
        (Some("ahead"), Some(1), Some(0))
    );
    let behind = ok(&s, &format!("/repos/acme/widget/compare/main...{fork_point}"), &[]).await.json();
    assert_eq!(
        (behind["status"].as_str(), behind["behind_by"].as_u64(), behind["total_commits"].as_u64()),
        (Some("behind"), Some(1), Some(0))
    );
    assert_eq!(behind["files"], Value::Array(Vec::new()));
    let same = ok(&s, "/repos/acme/widget/compare/main...main", &[]).await.json();
    assert_eq!((same["status"].as_str(), same["ahead_by"].as_u64()), (Some("identical"), Some(0)));
    s.emulator.commit_files(&repo, "topic/x", &[("t.txt", "t\n")], "Topic").await.unwrap();
    for path in ["/repos/acme/widget/compare/main...topic/x", "/repos/acme/widget/compare/main...topic%2Fx"] {
        let topic = ok(&s, path, &[]).await.json();
        assert_eq!(
            (topic["status"].as_str(), topic["files"][0]["filename"].as_str()),
            (Some("ahead"), Some("t.txt")),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_fork_prs_diff_comes_from_its_pull_ref() {
    let s = setup().await;
    let upstream = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let fork = s.emulator.fork_repo(&upstream, "contributor").await.unwrap();
    s.emulator.commit_files(&fork, "fix", &[("fix.txt", "fixed\n")], "Fix").await.unwrap();
    let number = s.emulator.open_fork_pr(&upstream, &fork, "fix", "main", "Fix").await.unwrap();
    let diff = ok(&s, &format!("/repos/acme/widget/pulls/{number}"), &[DIFF]).await;
    assert!(diff.body.starts_with("diff --git a/fix.txt b/fix.txt\nnew file mode 100644\n"), "{}", diff.body);
    let files = ok(&s, &format!("/repos/acme/widget/pulls/{number}/files"), &[]).await.json();
    assert_eq!((files[0]["filename"].as_str(), files[0]["additions"].as_u64()), (Some("fix.txt"), Some(1)));
}

/// A 50,000-line file comes through whole: in the diff, the file list and the comparison.
#[tokio::test]
async fn a_fifty_thousand_line_diff_is_served_whole() {
    const LINES: usize = 50_000;
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let big = numbered("generated line", LINES);
    s.emulator.commit_files(&repo, "big", &[("big.txt", &big)], "Generate").await.unwrap();
    let number = s.emulator.open_pr(&repo, "big", "main", "Big").await.unwrap();

    let diff = ok(&s, &format!("/repos/acme/widget/pulls/{number}"), &[DIFF]).await;
    let added = diff.body.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++ ")).count();
    assert_eq!(added, LINES);
    assert!(diff.body.contains(&format!("@@ -0,0 +1,{LINES} @@\n+generated line 1\n")));
    assert!(diff.body.ends_with(&format!("+generated line {LINES}\n")));
    assert_eq!(diff.header("content-length").parse::<usize>().unwrap(), diff.body.len());

    let files = ok(&s, &format!("/repos/acme/widget/pulls/{number}/files"), &[]).await.json();
    assert_eq!((files[0]["additions"].as_u64(), files[0]["deletions"].as_u64()), (Some(LINES as u64), Some(0)));
    assert_eq!(files[0]["patch"].as_str().unwrap().lines().count(), LINES + 1);
    let compare = ok(&s, "/repos/acme/widget/compare/main...big", &[DIFF]).await;
    assert_eq!(compare.body, diff.body);
}

#[tokio::test]
async fn unknown_and_option_looking_names_are_refused_before_git() {
    let s = setup().await;
    let repo = s.emulator.create_repo("acme", "widget", false).await.unwrap();
    s.emulator.commit_files(&repo, "feature", &[("a.txt", "a\n")], "A").await.unwrap();
    let number = s.emulator.open_pr(&repo, "feature", "main", "A").await.unwrap();
    ok(&s, &format!("/repos/acme/widget/pulls/{number}"), &[DIFF]).await;

    for (path, accept) in [
        ("/repos/acme/widget/pulls/99", Some(DIFF)),
        ("/repos/acme/widget/pulls/99/files", None),
        ("/repos/acme/nothing/pulls/1", Some(DIFF)),
        ("/repos/acme/nothing/pulls/1/files", None),
        ("/repos/acme/widget/compare/main...nope", None),
        ("/repos/acme/widget/compare/nope...main", Some(DIFF)),
        ("/repos/acme/widget/compare/main...deadbeef", None),
        ("/repos/acme/widget/compare/main", None),
        ("/repos/acme/nothing/compare/main...feature", None),
    ] {
        let answer = get(&s, path, accept.as_slice()).await;
        assert_eq!(answer.status, 404, "{path}: {}", answer.body);
        assert_eq!(answer.json()["message"], "Not Found", "{path}");
    }

    let cwd = std::env::current_dir().unwrap();
    let hostile = [
        "/repos/acme/widget/compare/--output=x...main",
        "/repos/acme/widget/compare/main...--output=x",
        "/repos/acme/widget/compare/main..--output=x",
        "/repos/acme/widget/compare/--output%3Dx...main",
        "/repos/acme/widget/compare/main...-p",
        "/repos/acme/widget/compare/main...--no-index",
        "/repos/acme/widget/compare/main...main~1",
        "/repos/acme/widget/compare/main...main@%7B0%7D",
        "/repos/acme/widget/pulls/--output=x",
        "/repos/acme/widget/pulls/--output=x/files",
    ];
    for path in hostile {
        for accept in [None, Some(DIFF)] {
            let answer = get(&s, path, accept.as_slice()).await;
            assert!(matches!(answer.status, 404 | 422), "{path}: {} {}", answer.status, answer.body);
        }
    }
    for dir in [repo.path.as_path(), cwd.as_path(), s.dir.path(), s.emulator.root()] {
        assert!(!dir.join("x").exists(), "git wrote {}", dir.join("x").display());
    }
}
