//! forgeloop's files are private (design §2.4, docs/files.md "Private files"), through the real
//! binary against the GitHub emulator: what a cycle, a `forge --pr` run and a one-shot `test`
//! leave is 0700/0600 under any umask (mirror objects aside, readable behind a 0700 mirror
//! directory); a home left loose is tightened once by the first command, recorded, not walked
//! again, and `doctor` says problem, then ok.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::Run;
use support::world::{CALC_FIXED, World};

const PROJECT_URL: &str = "https://chatgpt.com/g/g-p-6743a1b2c3d4e5f6/project";

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// `cmd` run through `sh` with `umask` set first, so the binary starts with that umask.
fn with_umask(cmd: &Command, umask: u32) -> Run {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(format!("umask {umask:03o}; exec \"$0\" \"$@\"")).arg(cmd.get_program()).args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => sh.env(key, value),
            None => sh.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        sh.current_dir(dir);
    }
    let out = sh.stdin(std::process::Stdio::null()).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(run: Run) -> Run {
    assert!(run.code == 0 || run.code == 1, "exit {}\n{}\n{}", run.code, run.stdout, run.stderr);
    run
}

/// Whether `rel` (relative to the home) is inside a mirror's `objects/`.
fn in_mirror_objects(rel: &Path) -> bool {
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    parts.len() >= 4 && parts[0] == "mirrors" && parts[2].ends_with(".git") && parts[3] == "objects"
}

/// Every entry under `root` (itself included) whose mode is not private, as `path (mode)`.
/// Mirror objects are held to their own rule: readable by all, writable by nobody else.
fn not_private(root: &Path, home: bool) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let objects = home && in_mirror_objects(rel);
        // overlayfs makes its own scratch directory in a cycle layer's `work`, mode 000.
        let overlay_scratch = home && rel.starts_with("caches") && rel.ends_with("work/work") && mode == 0;
        let fine = match (objects, meta.is_dir()) {
            (false, true) => mode == 0o700 || overlay_scratch,
            (false, false) => mode == 0o600,
            (true, true) => mode & 0o555 == 0o555,
            (true, false) => mode & 0o444 == 0o444 && mode & 0o022 == 0,
        };
        if !fine {
            wrong.push(format!("{} ({mode:o})", path.display()));
        }
        // overlayfs's scratch directory is its own (mode 000: only root may look inside).
        if meta.is_dir() && !overlay_scratch {
            stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    wrong.sort();
    wrong
}

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            files.push(path);
        }
    }
    files
}

/// A cycle outside the home (in a directory the test made 0755), one inside it, a `sent`, a
/// `forge --pr` run (mirror, checkout, run log, report, comment), a one-shot `test`, a registry
/// binding: all under `umask`, and `check` after each, so that what a command made is seen
/// before any later walk of the home could tighten it.
fn exercise(w: &World, umask: u32, check: &dyn Fn(&str)) {
    fs::create_dir(w.path("work")).unwrap();
    chmod(&w.path("work"), 0o755);
    let brief = support::BRIEF;
    let q = support::QUESTION;
    let run = |args: &[&str]| {
        let run = ok(with_umask(&w.command(args), umask));
        check(&args.join(" "));
        run
    };
    for state in ["work/c.json", "in-home"] {
        run(&[
            "forge",
            "--request",
            "Add dark mode",
            "--intent-brief",
            brief,
            "--webgpt-question",
            q,
            "--state",
            state,
        ]);
    }
    run(&["sent", "--state", "work/c.json"]);
    let forged = run(&["forge", "--pr", "acme/widget#1", "--state", "work/c.json", "--commands-json", "commands.json"]);
    assert_eq!(forged.json()["status"], "READY_TO_MERGE", "{}", forged.stderr);
    let once = run(&["test", "--pr", "acme/widget#1", "--commands-json", "commands.json"]);
    assert_eq!(once.json()["status"], "TEST_PASSED", "{}", once.stderr);
    let bind =
        ["project", "bind", "--repository", "acme/widget", "--project-url", PROJECT_URL, "--project-name", "widget"];
    run(&bind);
    run(&["list"]);
}

fn private_under_umask(umask: u32) {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    assert_eq!(w.pr(&repo, "dark-mode", CALC_FIXED), 1);
    let home = w.sb.home();
    // A home already recorded as private, so no command walks it (a walk would tighten what a
    // command made too loose, and hide it): every mode seen is the mode a file was made with.
    fs::create_dir(&home).unwrap();
    chmod(&home, 0o700);
    let marker =
        r#"{"version": 1, "checked_at": "2026-01-01T00:00:00Z", "visited": 1, "changed": 0, "complete": true}"#;
    fs::write(home.join("permissions.json"), marker).unwrap();
    chmod(&home.join("permissions.json"), 0o600);
    let each = |after: &str| {
        assert_eq!(not_private(&home, true), Vec::<String>::new(), "after `{after}`, umask {umask:03o}");
        let sidecar = w.path("work/c.d");
        if sidecar.exists() {
            assert_eq!(not_private(&sidecar, false), Vec::<String>::new(), "after `{after}`, umask {umask:03o}");
        }
    };
    exercise(&w, umask, &each);
    assert_eq!(fs::read_to_string(home.join("permissions.json")).unwrap(), marker, "the home was never walked");
    // What the runs made, so that "all private" is about something.
    for rel in ["cycles/in-home.json", "task-spaces", "mirrors/acme/widget.git/config", "tests", "permissions.json"] {
        assert!(home.join(rel).exists(), "{rel} was not made");
    }
    assert!(files_under(&home.join("tests")).iter().any(|p| p.extension().is_some_and(|e| e == "log")));
    assert!(files_under(&w.path("work/c.d/runs")).len() >= 2, "a run log and a report");
    let objects = files_under(&home.join("mirrors/acme/widget.git/objects"));
    assert!(!objects.is_empty(), "the mirror has objects");

    assert_eq!(not_private(&home, true), Vec::<String>::new(), "umask {umask:03o}");
    assert_eq!(not_private(&w.path("work/c.d"), false), Vec::<String>::new(), "umask {umask:03o}");
    assert_eq!((mode(&w.path("work/c.json")), mode(&w.path("work/c.lock"))), (0o600, 0o600));
    assert_eq!(mode(&w.path("work")), 0o755, "the directory the person chose keeps its mode");
    assert_eq!(mode(&home.join("mirrors/acme/widget.git")), 0o700);
    assert!(objects.iter().all(|p| mode(p) & 0o444 == 0o444), "objects stay readable for the sandboxed run");
    assert_eq!(not_private(&w.path("registry"), false), Vec::<String>::new(), "umask {umask:03o}");

    // The observation can fail: a file the test makes 0644 is caught.
    let planted = home.join("cycles/planted.json");
    fs::write(&planted, "{}").unwrap();
    chmod(&planted, 0o644);
    assert_eq!(not_private(&home, true), vec![format!("{} (644)", planted.display())]);
}

#[test]
fn what_forgeloop_writes_is_private_under_umask_022() {
    private_under_umask(0o022);
}

#[test]
fn what_forgeloop_writes_is_private_under_umask_000() {
    private_under_umask(0o000);
}

fn doctor_permissions(w: &World) -> Value {
    let out = w.run(&["doctor"]).json();
    out["checks"].as_array().unwrap().iter().find(|c| c["name"] == "permissions").cloned().unwrap()
}

/// Makes every directory of `root` 0755 and every file 0644, as an older forgeloop left them
/// (mirror objects left as libgit2 wrote them).
fn loosen(root: &Path) -> usize {
    let mut changed = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        // The run directories are the sandbox's (`<home>/run`, made private by each run).
        if in_mirror_objects(&rel) || rel == Path::new("run") {
            continue;
        }
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            chmod(&path, 0o755);
            stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            chmod(&path, 0o644);
        }
        changed += 1;
    }
    changed
}

#[test]
fn a_loose_home_is_tightened_once_recorded_and_doctor_says_problem_then_ok() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    w.pr(&repo, "dark-mode", CALC_FIXED);
    w.cycle("in-home", &[]);
    assert_eq!(w.forge_pr("in-home", "acme/widget#1", &[]).code, 0);
    let home = w.sb.home();
    assert_eq!(doctor_permissions(&w)["ok"], true, "a home forgeloop made is private");

    // As an older forgeloop left it: no record, everything 0755/0644.
    fs::remove_file(home.join("permissions.json")).unwrap();
    let loosened = loosen(&home);
    assert!(loosened > 20, "{loosened}");
    let check = doctor_permissions(&w);
    assert_eq!(check["ok"], false, "{check:#}");
    assert!(check["detail"].as_str().unwrap().contains("(755)"), "{check:#}");
    assert!(check["fix"].as_str().unwrap().contains("forgeloop list"), "{check:#}");
    assert!(!home.join("permissions.json").exists(), "doctor changes nothing");
    assert_eq!(mode(&home), 0o755, "doctor changes nothing");

    let first = w.run(&["list"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stderr.contains(&format!("made {loosened} entries private")), "{}", first.stderr);
    assert!(first.stderr.contains("permissions.json"), "{}", first.stderr);
    assert_eq!(not_private(&home, true), Vec::<String>::new());
    let marker_path = home.join("permissions.json");
    let marker: Value = serde_json::from_slice(&fs::read(&marker_path).unwrap()).unwrap();
    assert_eq!(
        (marker["changed"].as_u64(), marker["failed"].as_u64(), marker["complete"].as_bool()),
        (Some(loosened as u64), Some(0), Some(true))
    );
    assert!(marker["checked_at"].as_str().is_some_and(|t| t.len() >= 20), "{marker}");
    let bytes = fs::read(&marker_path).unwrap();
    let mtime = fs::metadata(&marker_path).unwrap().modified().unwrap();

    // Not walked again: a loose file deep inside stays loose, the record is untouched, nothing said.
    let deep = home.join("cycles/in-home.d/events.jsonl");
    chmod(&deep, 0o644);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = w.run(&["list"]);
    assert_eq!(second.code, 0);
    assert!(!second.stderr.contains("private"), "told once: {}", second.stderr);
    assert_eq!(mode(&deep), 0o644, "the second command did not walk the home");
    assert_eq!(
        (fs::read(&marker_path).unwrap(), fs::metadata(&marker_path).unwrap().modified().unwrap()),
        (bytes, mtime)
    );
    chmod(&deep, 0o600);
    let check = doctor_permissions(&w);
    assert_eq!(check["ok"], true, "{check:#}");
    assert!(check.get("fix").is_none(), "{check:#}");

    // A direct entry loose again makes it due again.
    chmod(&home.join("cycles"), 0o750);
    assert_eq!(doctor_permissions(&w)["ok"], false);
    let third = w.run(&["list"]);
    assert!(third.stderr.contains("made 1 entry private"), "{}", third.stderr);
    assert_eq!(mode(&home.join("cycles")), 0o700);
    assert_eq!(doctor_permissions(&w)["ok"], true);
}

#[test]
fn a_loose_sidecar_beside_a_state_outside_the_home_is_made_private_when_the_cycle_changes() {
    let w = World::new();
    w.sb.start("c.json", &[]);
    let sidecar = w.path("c.d");
    loosen(&sidecar);
    chmod(&w.path("c.json"), 0o644);
    assert!(!not_private(&sidecar, false).is_empty());
    assert_eq!(w.sb.run(&["sent", "--state", "c.json"]).code, 0);
    assert_eq!(not_private(&sidecar, false), Vec::<String>::new());
    assert_eq!(mode(&w.path("c.json")), 0o600, "the rewrite made it 0600");
}
