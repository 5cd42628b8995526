//! Checkout cost over smart HTTP (design §5.2.2, §10): forgeloop's first iteration (new mirror,
//! the PR head at depth 1) and second iteration (warm shallow mirror, one new commit) against
//! the depth-1 floor (`git init` + `git fetch --depth 1 URL refs/pull/N/head` + `git checkout
//! --detach`) and the reference tool's full clone (`git clone --no-checkout URL` + `git checkout
//! --detach`), all served by the GitHub emulator (`git http-backend` on 127.0.0.1).
//!
//! The repository is generated with `git fast-import`: FORGELOOP_BENCH_COMMITS (default 2000)
//! commits over FORGELOOP_BENCH_FILES (default 500) files of about 2 KB each, in a temp dir
//! under FORGELOOP_BENCH_DIR (default: the system temp dir). FORGELOOP_BENCH_REPO=PATH serves
//! a local repository instead (its HEAD is the PR head). The emulator's repository borrows the
//! source's objects (alternates), so nothing is copied.
//!
//! Testing the merge (design §5.2.1) is measured on PR 2 — one commit on top of `main`, as a
//! PR's first push is — with a new mirror each round: the head alone (`tested: None`, the
//! baseline) and the merge into `main`; and on PR 3, branched 100 commits before `main`'s tip,
//! whose merge base the mirror must deepen to reach.
//!
//! Every method runs once per round, in turn (FORGELOOP_BENCH_ROUNDS rounds, default 5); it
//! prints the medians, the bytes the server sent for each method and the objects each received.
//! It asserts what the README says: the first iteration receives no more objects than the
//! depth-1 floor, the second only the new commit's (a few objects, never the history or the
//! tree again), an unchanged head none. Run: `cargo bench --bench checkout`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use forgeloop::checkout::{CheckoutRequest, TestedSpec, prepare};
use forgeloop::domain::commands::{CommandsProfile, History, TreeMode, parse_commands};
use forgeloop::domain::pr_ref::RepoName;
use git2::{ObjectType, Oid, Repository, Signature, Tree};
use github_emulator::{Emulator, EmulatorConfig};
use tempfile::TempDir;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn git_cmd(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir).env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").args([
        "-c",
        "advice.detachedHead=false",
        "-c",
        "init.defaultBranch=main",
    ]);
    cmd
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir).args(args).stderr(Stdio::inherit()).output().expect("git runs");
    assert!(out.status.success(), "git {args:?} failed in {}", dir.display());
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn file_path(i: usize) -> String {
    format!("src/d{:02}/f{:03}.txt", i % 25, i)
}

fn file_body(i: usize, version: usize) -> String {
    (0..40).map(|line| format!("file {i} line {line} version {version} lorem ipsum dolor sit amet\n")).collect()
}

/// A bare repository: commit 1 adds every file, each later commit rewrites one file.
fn generate(root: &Path, commits: usize, files: usize) -> (PathBuf, String) {
    let base = root.join("base.git");
    git(root, &["init", "-q", "--bare", base.to_str().unwrap()]);
    let mut child = Command::new("git")
        .current_dir(&base)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    let mut stream = std::io::BufWriter::new(child.stdin.take().unwrap());
    let data = |out: &mut dyn Write, text: &str| write!(out, "data {}\n{text}\n", text.len()).unwrap();
    for c in 0..commits {
        writeln!(stream, "commit refs/heads/main\ncommitter Bench <bench@example.invalid> {} +0000", 1_700_000_000 + c)
            .unwrap();
        data(&mut stream, &format!("commit {c}"));
        if c == 0 {
            for i in 0..files {
                writeln!(stream, "M 100644 inline {}", file_path(i)).unwrap();
                data(&mut stream, &file_body(i, 0));
            }
        } else {
            let i = (c * 7) % files;
            writeln!(stream, "M 100644 inline {}", file_path(i)).unwrap();
            data(&mut stream, &file_body(i, c));
        }
    }
    drop(stream);
    assert!(child.wait().unwrap().success(), "fast-import failed");
    let head = Repository::open_bare(&base).unwrap().refname_to_id("refs/heads/main").unwrap().to_string();
    (base, head)
}

/// The emulator, serving `bench/repo` whose object store borrows `source`'s, with `main` and
/// `refs/pull/1/head` at `head`.
struct Served {
    rt: tokio::runtime::Runtime,
    emulator: Emulator,
    dir: PathBuf,
    url: String,
}

fn serve(root: &Path, source: &Path, head: &str) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let config = EmulatorConfig { root: root.join("emulator"), token: None, login: "bench".into(), admin_secret: None };
    let emulator = rt.block_on(Emulator::start(config)).unwrap();
    let handle = rt.block_on(emulator.create_repo("bench", "repo", false)).unwrap();
    let source_repo = Repository::open(source).expect("the source is a git repository");
    let objects = std::fs::canonicalize(source_repo.commondir().join("objects")).unwrap();
    let alternates = handle.path.join("objects").join("info").join("alternates");
    std::fs::write(&alternates, format!("{}\n", objects.display())).unwrap();
    git(&handle.path, &["update-ref", "refs/heads/main", head]);
    git(&handle.path, &["update-ref", "refs/pull/1/head", head]);
    Served { rt, emulator, dir: handle.path.clone(), url: handle.clone_url.clone() }
}

impl Served {
    /// Bytes the server sent since the last call (git requests only).
    fn take_bytes(&self) -> u64 {
        let sent = self.emulator.requests().iter().filter(|r| r.path.contains(".git/")).map(|r| r.response_bytes).sum();
        self.emulator.clear_requests();
        sent
    }
}

/// A path to a blob at most three levels down (first entries first), for the new commits.
fn blob_path(repo: &Repository, tree: &Tree<'_>, depth: usize) -> Option<Vec<String>> {
    let name = |e: &git2::TreeEntry<'_>| e.name().ok().map(str::to_owned);
    if depth < 2 {
        for entry in tree.iter().filter(|e| e.kind() == Some(ObjectType::Tree)) {
            let sub = repo.find_tree(entry.id()).ok()?;
            if let Some(mut rest) = blob_path(repo, &sub, depth + 1) {
                rest.insert(0, name(&entry)?);
                return Some(rest);
            }
        }
    }
    let blob = tree.iter().find(|e| e.kind() == Some(ObjectType::Blob) && e.filemode() == 0o100644)?;
    Some(vec![name(&blob)?])
}

/// `tree` with the blob at `path` replaced by `blob`; returns the new tree.
fn replace(repo: &Repository, tree: &Tree<'_>, path: &[String], blob: Oid) -> Oid {
    let mut builder = repo.treebuilder(Some(tree)).unwrap();
    match path {
        [file] => builder.insert(file, blob, 0o100644).unwrap(),
        [dir, rest @ ..] => {
            let sub = repo.find_tree(tree.get_name(dir).unwrap().id()).unwrap();
            builder.insert(dir, replace(repo, &sub, rest, blob), 0o040000).unwrap()
        }
        [] => unreachable!("a path has at least the file"),
    };
    builder.write().unwrap()
}

/// One more commit on top of refs/pull/1/head (one file rewritten), made in the served
/// repository; returns it and how many objects it added (blob, one tree per level, commit).
fn push_new_pr_commit(served: &Repository, path: &[String], counter: usize) -> (String, usize) {
    let parent = served.find_commit(served.refname_to_id("refs/pull/1/head").unwrap()).unwrap();
    let blob = served.blob(format!("forgeloop bench round {counter}\n").as_bytes()).unwrap();
    let tree = served.find_tree(replace(served, &parent.tree().unwrap(), path, blob)).unwrap();
    let sig = Signature::new("Bench", "bench@example.invalid", &git2::Time::new(1_800_000_000, 0)).unwrap();
    let oid = served.commit(None, &sig, &sig, &format!("pr update {counter}"), &tree, &[&parent]).unwrap();
    served.reference("refs/pull/1/head", oid, true, "bench").unwrap();
    (oid.to_string(), path.len() + 2)
}

fn request<'a>(
    mirrors: &'a Path,
    checkouts: &'a Path,
    repo: &'a RepoName,
    url: &'a str,
    sha: &'a str,
) -> CheckoutRequest<'a> {
    pr_request(mirrors, checkouts, repo, url, 1, sha, None)
}

/// The request for PR `number` at `sha`, testing `merge` (the merge into `main`) when given.
fn pr_request<'a>(
    mirrors: &'a Path,
    checkouts: &'a Path,
    repo: &'a RepoName,
    url: &'a str,
    number: u64,
    sha: &'a str,
    merge: Option<&'a CommandsProfile>,
) -> CheckoutRequest<'a> {
    CheckoutRequest {
        mirrors_root: mirrors,
        repo,
        clone_url: url,
        pr_number: number,
        expected_sha: sha,
        token: None,
        allow_insecure_local: true,
        submodules: false,
        submodule_token_owners: &[],
        fetch_exact_sha: false,
        history: History::Shallow,
        checkouts_root: Some(checkouts),
        exact_dir: None,
        cancel: None,
        objects_for_others: false,
        base_ref: merge.map(|_| "main"),
        tested: merge.map(|commands| TestedSpec {
            tree: TreeMode::Merge,
            commands,
            protect: &[],
            hold: false,
            accepted: &[],
        }),
    }
}

/// A PR `number` of one commit (one file rewritten) on top of `parent`; returns its head.
fn open_pr_on(served: &Repository, number: u64, parent: Oid, path: &[String]) -> String {
    let parent = served.find_commit(parent).unwrap();
    let blob = served.blob(format!("forgeloop bench PR {number}\n").as_bytes()).unwrap();
    let tree = served.find_tree(replace(served, &parent.tree().unwrap(), path, blob)).unwrap();
    let sig = Signature::new("Bench", "bench@example.invalid", &git2::Time::new(1_800_000_000, 0)).unwrap();
    let oid = served.commit(None, &sig, &sig, &format!("PR {number}"), &tree, &[&parent]).unwrap();
    served.reference(&format!("refs/pull/{number}/head"), oid, true, "bench").unwrap();
    oid.to_string()
}

/// Objects in the repository at `dir` (loose and packed).
fn object_count(dir: &Path) -> usize {
    let counts = git(dir, &["count-objects", "-v"]);
    counts
        .lines()
        .filter_map(|l| l.strip_prefix("count: ").or_else(|| l.strip_prefix("in-pack: ")))
        .filter_map(|n| n.trim().parse::<usize>().ok())
        .sum()
}

/// The floor: a depth-1 fetch of the PR ref by the git CLI, then a detached checkout.
fn depth1_floor(url: &str, sha: &str, dir: &Path) -> PathBuf {
    let dest = dir.join("w");
    git(dir, &["init", "-q", dest.to_str().unwrap()]);
    git(&dest, &["fetch", "-q", "--no-tags", "--depth", "1", url, "refs/pull/1/head"]);
    git(&dest, &["checkout", "-q", "--detach", sha]);
    dest
}

/// The reference tool's method: a full clone without checkout, then a detached checkout.
fn reference_clone(url: &str, sha: &str, dir: &Path) -> PathBuf {
    let dest = dir.join("w");
    git(dir, &["clone", "-q", "--no-checkout", url, dest.to_str().unwrap()]);
    git(&dest, &["checkout", "-q", "--detach", sha]);
    dest
}

fn tree_checkout_only(mirror: &Repository, commit: Oid, dir: &Path) {
    let commit = mirror.find_commit(commit).unwrap();
    let mut opts = git2::build::CheckoutBuilder::new();
    opts.force().target_dir(dir);
    mirror.checkout_tree(commit.as_object(), Some(&mut opts)).unwrap();
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

const NAMES: [&str; 9] = [
    "first_iteration_prepare",
    "second_iteration_prepare",
    "unchanged_prepare",
    "depth1_floor_git_cli",
    "reference_git_cli_full_clone",
    "tree_checkout_only",
    "first_iteration_head_alone_pr2",
    "first_iteration_merge_pr2",
    "first_iteration_merge_stale_pr3",
];

fn bench_checkout(_c: &mut Criterion) {
    let rounds = env_usize("FORGELOOP_BENCH_ROUNDS", 5).max(1);
    let root = match std::env::var_os("FORGELOOP_BENCH_DIR") {
        Some(dir) => TempDir::new_in(dir).unwrap(),
        None => TempDir::new().unwrap(),
    };
    let (source, head, label) = match std::env::var_os("FORGELOOP_BENCH_REPO").filter(|p| !p.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            let head = git(&path, &["rev-parse", "HEAD"]);
            let label = format!("repository {}", path.display());
            (path, head, label)
        }
        None => {
            let commits = env_usize("FORGELOOP_BENCH_COMMITS", 2000);
            let files = env_usize("FORGELOOP_BENCH_FILES", 500);
            let started = Instant::now();
            let (base, head) = generate(root.path(), commits, files);
            eprintln!("generated {commits} commits x {files} files in {:.1?}", started.elapsed());
            (base, head, format!("generated {commits} commits x {files} files"))
        }
    };
    let served = serve(root.path(), &source, &head);
    let url = served.url.clone();
    let repo = RepoName::parse("bench/repo").unwrap();
    let checkouts = root.path().join("checkouts");
    std::fs::create_dir_all(&checkouts).unwrap();
    let served_repo = Repository::open_bare(&served.dir).unwrap();
    let head_commit = served_repo.find_commit(Oid::from_str(&head).unwrap()).unwrap();
    let path = blob_path(&served_repo, &head_commit.tree().unwrap(), 0).expect("a file to rewrite");
    eprintln!("{label}, served at {url}; each round rewrites {}", path.join("/"));

    // PR 2: one commit on main's tip; PR 3: one commit on main 100 commits back.
    let main = head_commit.id();
    let pr2 = open_pr_on(&served_repo, 2, main, &path);
    let mut stale = head_commit.clone();
    for _ in 0..100 {
        match stale.parent(0) {
            Ok(parent) => stale = parent,
            Err(_) => break,
        }
    }
    let pr3 = open_pr_on(&served_repo, 3, stale.id(), &path);
    let commands = parse_commands(r#"[["true"]]"#).unwrap();

    let warm = root.path().join("warm-mirrors");
    drop(prepare(&request(&warm, &checkouts, &repo, &url, &head)).unwrap());
    let mirror = Repository::open_bare(warm.join("bench").join("repo.git")).unwrap();
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); NAMES.len()];
    let mut bytes = [0u64; NAMES.len()];
    let mut objects = [0usize; NAMES.len()];
    let mut deepened = 0;
    for round in 0..rounds {
        let (sha, new_objects) = push_new_pr_commit(&served_repo, &path, round);
        let oid = Oid::from_str(&sha).unwrap();
        served.take_bytes();
        for (k, slot) in times.iter_mut().enumerate() {
            let scratch = TempDir::new_in(&checkouts).unwrap();
            let started = Instant::now();
            let (kept, cli) = match k {
                0 => (Some(prepare(&request(scratch.path(), &checkouts, &repo, &url, &sha)).unwrap()), None),
                1 | 2 => (Some(prepare(&request(&warm, &checkouts, &repo, &url, &sha)).unwrap()), None),
                3 => (None, Some(depth1_floor(&url, &sha, scratch.path()))),
                // The reference clones branches only, so it checks out `main`'s tip (same size).
                4 => (None, Some(reference_clone(&url, &head, scratch.path()))),
                5 => {
                    tree_checkout_only(&mirror, oid, scratch.path());
                    (None, None)
                }
                6 => {
                    (Some(prepare(&pr_request(scratch.path(), &checkouts, &repo, &url, 2, &pr2, None)).unwrap()), None)
                }
                7 => {
                    let req = pr_request(scratch.path(), &checkouts, &repo, &url, 2, &pr2, Some(&commands));
                    (Some(prepare(&req).unwrap()), None)
                }
                _ => {
                    let req = pr_request(scratch.path(), &checkouts, &repo, &url, 3, &pr3, Some(&commands));
                    (Some(prepare(&req).unwrap()), None)
                }
            };
            slot.push(started.elapsed());
            bytes[k] = served.take_bytes();
            objects[k] = match (&kept, &cli) {
                (Some(co), _) => co.fetch.received_objects,
                (None, Some(dir)) => object_count(dir),
                _ => 0,
            };
            if let Some(co) = &kept {
                assert_eq!(co.fetch.depth, Some(1), "{} fetched at depth 1", NAMES[k]);
                // The merge of a PR up to date with main needs nothing beyond the first fetch;
                // a stale branch's, the deepening to its merge base.
                match (k, co.tested.as_ref()) {
                    (7, Some(t)) => assert_eq!(t.deepen_fetches, 0, "PR 2 descends from main's tip"),
                    (8, Some(t)) => deepened = t.deepen_fetches,
                    (7 | 8, None) => panic!("{} made no merge", NAMES[k]),
                    _ => {}
                }
            }
            // What the README claims: a warm mirror receives only the new commit's objects,
            // nothing of the tree or the history again; the same head again receives nothing.
            match k {
                1 => assert!(
                    (1..=new_objects).contains(&objects[1]),
                    "second iteration received {} objects for one new commit of {new_objects}",
                    objects[1]
                ),
                2 => assert_eq!(objects[2], 0, "an unchanged head received {} objects", objects[2]),
                _ => {}
            }
            drop(kept);
        }
        // The first iteration fetches what the depth-1 floor fetches, not the history.
        assert!(
            objects[0] <= objects[3] + 2,
            "first iteration received {} objects, the depth-1 floor {}",
            objects[0],
            objects[3]
        );
    }
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    eprintln!("interleaved medians over {rounds} rounds ({label}):");
    for (name, m) in NAMES.iter().zip(&medians) {
        eprintln!("  {name:<34} {:>9.1} ms", m.as_secs_f64() * 1e3);
    }
    eprintln!("received in the last round (bytes the server sent, objects the client got):");
    for (k, name) in NAMES.iter().enumerate() {
        if k != 5 {
            eprintln!("  received {name:<34} {:>12} bytes {:>8} objects", bytes[k], objects[k]);
        }
    }
    eprintln!("  the stale PR's merge deepened the mirror in {deepened} more fetches");
    let ratio = |a: usize, b: usize| medians[a].as_secs_f64() / medians[b].as_secs_f64();
    eprintln!("  first_iteration / depth1_floor = {:.2} (target <= 1.5)", ratio(0, 3));
    eprintln!("  second_iteration / depth1_floor = {:.2} (target <= 1.5)", ratio(1, 3));
    eprintln!("  first_iteration / reference_full_clone = {:.2}", ratio(0, 4));
    eprintln!("  merge / head alone, first iteration = {:.2} (target <= 1.1)", ratio(7, 6));
    eprintln!("  stale merge / head alone, first iteration = {:.2}", ratio(8, 6));
    drop(mirror);
    served.rt.block_on(served.emulator.shutdown());
}

criterion_group!(benches, bench_checkout);
criterion_main!(benches);
