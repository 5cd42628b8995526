//! `forgeloop show`: a file or a directory's listing of a PR's head, its base branch, or a
//! repository's default branch, read from the mirror (fetched over the emulator's git HTTP),
//! redacted and size-bounded; a path outside the repository is refused before anything is read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use support::world::{World, fresh_secret};

fn world() -> (World, github_emulator::RepoHandle, u64) {
    let w = World::new();
    let repo = w.project("acme", "widget", true);
    w.commit(&repo, "main", &[("README.md", "# widget\n\nRun the tests with `sh test.sh`.\n")], "readme");
    w.commit(
        &repo,
        "fix",
        &[
            ("README.md", "# widget\n\nRun the tests with `make check`.\n"),
            ("scripts/check.sh", "#!/bin/sh\nsh test.sh\n"),
            ("scripts/lib/util.sh", "true\n"),
        ],
        "fix",
    );
    let n = w.rt.block_on(w.emu.open_pr(&repo, "fix", "main", "fix")).unwrap();
    (w, repo, n)
}

#[test]
fn a_prs_head_its_base_and_the_default_branch_each_show_their_own_file() {
    let (w, repo, n) = world();
    let pr = format!("acme/widget#{n}");
    let head = w.run(&["show", "--pr", &pr, "README.md"]);
    assert_eq!(head.code, 0, "{}\n{}", head.stdout, head.stderr);
    assert_eq!(head.stdout, "# widget\n\nRun the tests with `make check`.\n");
    let sha = w.emu.pr_head(&repo, n).unwrap();
    assert!(head.stderr.contains(&sha[..12]) && head.stderr.contains("head of acme/widget#"), "{}", head.stderr);

    let base = w.run(&["show", "--pr", &pr, "--base", "README.md"]);
    assert_eq!(base.code, 0, "{}", base.stderr);
    assert_eq!(base.stdout, "# widget\n\nRun the tests with `sh test.sh`.\n");
    assert!(base.stderr.contains("base branch main"), "{}", base.stderr);

    let default = w.run(&["show", "--repository", "acme/widget", "--json", "test.sh"]);
    assert_eq!(default.code, 0, "{}", default.stderr);
    let doc = default.json();
    assert_eq!(doc["kind"], "file");
    assert_eq!(doc["commit"], w.tip(&repo, "main"));
    assert_eq!(doc["at"], "default branch main");
    assert_eq!(doc["text"], support::world::TEST_SH);
    // Read from forgeloop's own mirror, not a clone of the caller's.
    assert!(w.sb.home().join("mirrors/acme/widget.git").is_dir());
}

#[test]
fn a_directory_is_listed_and_a_file_is_not() {
    let (w, _repo, n) = world();
    let pr = format!("acme/widget#{n}");
    let root = w.run(&["show", "--pr", &pr, "--list"]);
    assert_eq!(root.code, 0, "{}", root.stderr);
    let lines: Vec<&str> = root.stdout.lines().collect();
    assert!(lines.contains(&"scripts/"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("README.md\t")), "{lines:?}");
    let scripts = w.run(&["show", "--pr", &pr, "--list", "--json", "scripts"]).json();
    let names: Vec<(&str, &str)> = scripts["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(names, [("check.sh", "file"), ("lib", "dir")]);
    assert_eq!(scripts["entries"][0]["size"], "#!/bin/sh\nsh test.sh\n".len());

    let dir = w.run(&["show", "--pr", &pr, "scripts"]);
    assert_eq!(dir.code, 2);
    assert!(dir.json()["error"].as_str().unwrap().contains("a directory: list it with --list"), "{}", dir.stdout);
    let missing = w.run(&["show", "--pr", &pr, "nope.txt"]);
    assert_eq!(missing.code, 2);
    assert!(missing.json()["error"].as_str().unwrap().contains("is not in the tree of"), "{}", missing.stdout);
}

#[test]
fn a_path_outside_the_repository_is_refused_before_anything_is_read() {
    let (w, _repo, n) = world();
    let pr = format!("acme/widget#{n}");
    for path in ["../../etc/passwd", "/etc/passwd", "scripts/../../x"] {
        let run = w.run(&["show", "--pr", &pr, path]);
        assert_eq!(run.code, 2, "{path}: {}", run.stdout);
        assert!(
            run.json()["error"].as_str().unwrap().contains("is not a path inside the repository"),
            "{}",
            run.stdout
        );
    }
    assert!(!w.sb.home().join("mirrors/acme/widget.git").exists(), "something was fetched");
}

#[test]
fn secrets_are_masked_big_files_cut_and_binary_files_not_printed() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let secret = fresh_secret("ghp_");
    let big: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
    w.commit(
        &repo,
        "main",
        &[
            (".env.example", &format!("GITHUB_TOKEN={secret}\n")),
            ("big.txt", &big),
            ("blob.bin", "GIF89a\0\0\u{1}binary"),
        ],
        "files",
    );
    let env = w.run(&["show", "--repository", "acme/widget", "--json", ".env.example"]);
    assert!(!env.stdout.contains(&secret) && !env.stderr.contains(&secret), "the secret was printed");
    assert_eq!(env.json()["masked"], 1, "{}", env.stdout);

    let cut = w.run(&["show", "--repository", "acme/widget", "big.txt"]);
    assert_eq!(cut.code, 0);
    assert!(cut.stdout.len() <= 256 * 1024 && cut.stdout.len() > 200 * 1024, "{}", cut.stdout.len());
    assert!(cut.stdout.ends_with('\n') && cut.stdout.lines().last().unwrap().starts_with("line "), "cut mid-line");
    assert!(cut.stderr.contains("cut after 256 KiB"), "{}", cut.stderr);

    let bin = w.run(&["show", "--repository", "acme/widget", "--json", "blob.bin"]).json();
    assert_eq!((bin["binary"].as_bool(), bin["text"].as_str()), (Some(true), Some("")), "{bin}");
}
