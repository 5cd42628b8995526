//! `forgeloop diff` (design §6.7) through the binary against the emulator: a cycle's whole PR
//! at a tested head, the change since the last run (the same change `git diff OLD NEW` shows,
//! redacted), `--stat`, `--json`, the cache, and a PR outside any cycle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use serde_json::Value;
use support::world::{CALC_FIXED, World, fresh_secret};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=WebGPT", "-c", "user.email=webgpt@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

/// The +/- lines per file: what `git diff` and forgeloop must agree on.
fn changes(diff: &str) -> Vec<(String, Vec<String>)> {
    forgeloop::domain::diff::index(diff.lines())
        .iter()
        .map(|f| {
            let body = diff.lines().skip(f.start_line).take(f.end_line - f.start_line).filter(|l| {
                (l.starts_with('+') && !l.starts_with("+++")) || (l.starts_with('-') && !l.starts_with("---"))
            });
            (format!("{:?} {:?} {} bin={}", f.status, f.old_path, f.path, f.binary), body.map(str::to_owned).collect())
        })
        .collect()
}

/// A cycle whose first run failed on head A and whose second passed on head B, B pushed with
/// real git: calc.sh fixed, a rename, a deletion, a binary file and a secret-looking line.
struct Fixed {
    w: World,
    bare: std::path::PathBuf,
    old: String,
    new: String,
    secret: String,
}

fn fixed_cycle() -> Fixed {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let notes: String = (1..=30).map(|i| format!("note {i}\n")).collect();
    w.commit(&repo, "main", &[("notes.md", &notes), ("old.txt", "gone soon\n")], "more files");
    let n = w.pr(&repo, "fix", "echo $(($1 * $2))\n");
    let old = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    let first = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(first.json()["status"], "AWAITING_WEBGPT_FIX", "{}", first.stdout);

    // WebGPT's fix, pushed over smart HTTP.
    let work = w.path("work");
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{}", w.token));
    let header = format!("http.extraHeader=Authorization: Basic {auth}");
    git(&w.path(""), &["clone", "--quiet", &repo.clone_url, work.to_str().unwrap()]);
    git(&work, &["checkout", "--quiet", "fix"]);
    std::fs::write(work.join("calc.sh"), CALC_FIXED).unwrap();
    git(&work, &["mv", "notes.md", "docs.md"]);
    git(&work, &["rm", "--quiet", "old.txt"]);
    std::fs::write(work.join("logo.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let secret = fresh_secret("ghp_");
    std::fs::write(work.join("deploy.env"), format!("GITHUB_TOKEN={secret}\n")).unwrap();
    git(&work, &["add", "--all"]);
    git(&work, &["commit", "--quiet", "-m", "fix: add, and tidy up"]);
    git(&work, &["-c", &header, "push", "--quiet", "origin", "fix"]);
    let new = git(&work, &["rev-parse", "HEAD"]);
    assert_eq!(w.emu.pr_head(&repo, n).as_deref(), Some(new.as_str()));
    let second = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(second.json()["status"], "READY_TO_MERGE", "{}", second.stdout);
    Fixed { bare: repo.path.clone(), w, old, new, secret }
}

#[test]
fn since_last_is_the_change_git_diff_shows_between_the_tested_heads_redacted() {
    let f = fixed_cycle();
    let w = &f.w;
    let run = w.run(&["diff", "--state", "c.json", "--since-last"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let theirs = git(&f.bare, &["diff", "-M", &f.old, &f.new]) + "\n";
    let redacted_theirs = forgeloop::redact::Redactor::default().redact(&theirs).into_owned();
    assert_eq!(changes(&run.stdout), changes(&redacted_theirs), "ours:\n{}\ngit's:\n{theirs}", run.stdout);
    assert!(run.stdout.contains("-echo $(($1 * $2))\n+echo $(($1 + $2))\n"), "{}", run.stdout);
    assert!(!run.stdout.contains(&f.secret) && run.stdout.contains("[REDACTED"), "{}", run.stdout);
    assert!(run.stderr.contains("the change from run 1") && run.stderr.contains("1 spot masked"), "{}", run.stderr);
    let statuses: Vec<String> = changes(&run.stdout).into_iter().map(|(f, _)| f).collect();
    assert!(statuses.contains(&"Renamed Some(\"notes.md\") docs.md bin=false".to_owned()), "{statuses:?}");
    assert!(statuses.contains(&"Removed None old.txt bin=false".to_owned()), "{statuses:?}");
    assert!(statuses.contains(&"Added None logo.bin bin=true".to_owned()), "{statuses:?}");

    // Cached, redacted, under the cycle's directory: a second call asks GitHub for no diff.
    let cache = w.path(&format!("c.d/diffs/{}..{}.diff", f.old, f.new));
    let cached = std::fs::read_to_string(&cache).unwrap();
    assert!(!cached.contains(&f.secret));
    w.emu.clear_requests();
    let again = w.run(&["diff", "--state", "c.json", "--since-last", "--json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(w.emu.requests().iter().all(|r| !r.path.contains("/compare") && !r.path.ends_with("/pulls/1")));
    let doc = again.json();
    assert_eq!(doc["kind"], "since_last");
    assert_eq!((doc["old_iteration"].as_u64(), doc["iteration"].as_u64()), (Some(1), Some(2)));
    assert_eq!(doc["masked"], 1);
    assert_eq!(doc["diff"].as_str().unwrap(), run.stdout);
    assert_eq!(doc["size"]["files"], doc["files"].as_array().unwrap().len());

    // The first run has nothing before it.
    let first = w.run(&["diff", "--state", "c.json", "--iteration", "1", "--since-last"]);
    assert_eq!(first.code, 2);
    assert!(first.json()["error"].as_str().unwrap().contains("first"), "{}", first.stdout);
}

#[test]
fn the_whole_pr_at_a_tested_head_and_its_stat_and_a_pr_outside_any_cycle() {
    let f = fixed_cycle();
    let w = &f.w;
    let whole = w.run(&["diff", "--state", "c.json"]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    // Against the base branch: calc.sh from main's version, not from the first try.
    assert!(whole.stdout.contains("-echo $(($1 - $2))\n+echo $(($1 + $2))\n"), "{}", whole.stdout);
    assert!(!whole.stdout.contains(&f.secret));
    assert!(whole.stderr.contains("at run 2") && whole.stderr.contains("against its base branch"), "{}", whole.stderr);

    let stat = w.run(&["diff", "--state", "c.json", "--stat"]);
    assert_eq!(stat.code, 0, "{}", stat.stderr);
    assert!(
        stat.stdout.contains(" calc.sh ") && stat.stdout.contains(" logo.bin ") && stat.stdout.contains("| Bin"),
        "{}",
        stat.stdout
    );
    assert!(stat.stdout.contains("notes.md => docs.md"), "{}", stat.stdout);
    assert!(stat.stdout.trim_end().ends_with("deletions(-)"), "{}", stat.stdout);

    // Run 1's whole PR was cached when run 1 judged its integrity; made again now, it comes
    // from the mirror (what run 1 was judged on: its merge against the base tip it recorded),
    // and once the mirror is gone from GitHub's compare API.
    let diffs = w.path("c.d/diffs");
    let cached: Vec<_> = std::fs::read_dir(&diffs).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(cached.iter().any(|n| n.to_string_lossy().starts_with("pr-")), "{cached:?}");
    std::fs::remove_dir_all(&diffs).unwrap();
    let first = w.run(&["diff", "--state", "c.json", "--iteration", "1"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stdout.contains("+echo $(($1 * $2))"), "{}", first.stdout);
    assert_eq!(w.requests_to("/compare/"), 0);
    std::fs::remove_dir_all(&diffs).unwrap();
    std::fs::remove_dir_all(w.sb.home().join("mirrors")).unwrap();
    let again = w.run(&["diff", "--state", "c.json", "--iteration", "1"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("+echo $(($1 * $2))"), "{}", again.stdout);
    assert!(w.requests_to("/compare/") >= 1);

    // Outside a cycle.
    let pr = w.run(&["diff", "--pr", "acme/widget#1", "--json"]);
    assert_eq!(pr.code, 0, "{}", pr.stderr);
    let doc: Value = pr.json();
    assert_eq!(doc["kind"], "whole_pr");
    assert_eq!(doc["head_sha"], f.new.as_str());
    assert_eq!(doc["diff"].as_str().unwrap(), whole.stdout);
}

#[test]
fn a_fifty_thousand_line_diff_comes_through_whole() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let big: String = (1..=50_000).map(|i| format!("line {i}\n")).collect();
    w.commit(&repo, "big", &[("big.txt", &big)], "a big file");
    w.rt.block_on(w.emu.open_pr(&repo, "big", "main", "big")).unwrap();
    let run = w.run(&["diff", "--pr", "acme/widget#1", "--stat"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(" big.txt | 50000 +"), "{}", run.stdout);
    assert!(run.stdout.contains("1 file changed, 50000 insertions(+), 0 deletions(-)"), "{}", run.stdout);
    // GitHub refuses the diff media type past 20,000 lines (406): the file list's patches.
    w.inject(github_emulator::Fault::Status {
        method: Some("GET".into()),
        path: "/repos/acme/widget/pulls/1".into(),
        status: 406,
        times: 1,
    });
    let rebuilt = w.run(&["diff", "--pr", "acme/widget#1", "--stat"]);
    assert_eq!(rebuilt.code, 0, "{}", rebuilt.stderr);
    assert_eq!(rebuilt.stdout, run.stdout);
    assert_eq!(w.requests_to("/pulls/1/files"), 1);
}
