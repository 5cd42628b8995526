//! Files forgeloop opens in place — the cycle lock, the journal, a run's log, a mirror's lock —
//! are opened with `O_NOFOLLOW` (`store::nofollow`). Each test plants a symlink at one of those
//! paths pointing at a victim file, as anyone who can write the directory could, and runs the
//! real binary: the command fails with an error naming the path and saying it is a symbolic
//! link, and the victim's bytes are unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::path::Path;

use support::world::{CALC_FIXED, World};

const VICTIM: &str = "precious: the user's own file\n";

fn plant(link: &Path, victim: &Path) {
    if link.exists() || link.symlink_metadata().is_ok() {
        std::fs::remove_file(link).unwrap();
    }
    std::os::unix::fs::symlink(victim, link).unwrap();
}

fn refused(run: &support::Run, path: &Path) {
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    let error = out["error"].as_str().unwrap_or_default().to_owned();
    let text = format!("{error}\n{}", out["last_error"]);
    assert!(text.contains("symbolic link"), "the error says it is a symlink: {}", run.stdout);
    assert!(text.contains(&path.display().to_string()), "the error names {}: {}", path.display(), run.stdout);
}

fn world_with_pr() -> (World, String, String) {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix", CALC_FIXED);
    let head = w.emu.pr_head(&repo, n).unwrap();
    w.cycle("c.json", &[]);
    (w, format!("acme/widget#{n}"), head)
}

#[test]
fn a_symlink_at_the_cycle_lock_is_refused_and_its_target_untouched() {
    let (w, _, _) = world_with_pr();
    let victim = w.path("victim.txt");
    std::fs::write(&victim, VICTIM).unwrap();
    let lock = w.path("c.lock");
    plant(&lock, &victim);
    let before = std::fs::read(w.path("c.json")).unwrap();

    let run = w.run(&["abort", "--state", "c.json", "--reason", "stop"]);
    refused(&run, &lock);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM, "the lock's pid was not written into the victim");
    assert_eq!(std::fs::read(w.path("c.json")).unwrap(), before, "nothing changed without the lock");
}

#[test]
fn a_symlink_at_the_journal_is_refused_and_its_target_untouched() {
    let (w, _, _) = world_with_pr();
    // The victim is a well-formed journal elsewhere: following the link, an append would succeed.
    let journal = w.path("c.d/events.jsonl");
    let victim = w.path("victim-events.jsonl");
    std::fs::rename(&journal, &victim).unwrap();
    let original = std::fs::read(&victim).unwrap();
    plant(&journal, &victim);

    let run = w.run(&["abort", "--state", "c.json", "--reason", "stop"]);
    refused(&run, &journal);
    assert_eq!(std::fs::read(&victim).unwrap(), original, "no event was appended through the link");
}

#[test]
fn a_symlink_at_the_run_log_is_refused_and_its_target_untouched() {
    let (w, pr, head) = world_with_pr();
    let victim = w.path("victim.txt");
    std::fs::write(&victim, VICTIM).unwrap();
    std::fs::create_dir_all(w.path("c.d/runs")).unwrap();
    let log = w.path(&format!("c.d/runs/1-{}.log", &head[..12]));
    plant(&log, &victim);

    let run = w.forge_pr("c.json", &pr, &[]);
    refused(&run, &log);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM, "the log did not truncate or fill the victim");
}

#[test]
fn a_symlink_at_the_mirror_lock_is_refused_and_its_target_untouched() {
    let (w, pr, _) = world_with_pr();
    let victim = w.path("victim.txt");
    std::fs::write(&victim, VICTIM).unwrap();
    let mirrors = w.sb.home().join("mirrors/acme");
    std::fs::create_dir_all(&mirrors).unwrap();
    let lock = mirrors.join("widget.git.lock");
    plant(&lock, &victim);

    let run = w.forge_pr("c.json", &pr, &[]);
    refused(&run, &lock);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM);
}
