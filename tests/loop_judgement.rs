//! The loop's judgement (issue 29), through the real binary against the GitHub emulator: an
//! unchanged head after a failure is `PR_UNCHANGED` and runs nothing; a head already tested
//! runs once and counts once (`ALREADY_TESTED`); a person's words reach the outbox, `next` and
//! the journal; corrected commands are used by the next run, and a widening needs a terminal;
//! `--continue-from` carries the commands and continues on the PR.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::time::Duration;

use github_emulator::RepoHandle;
use serde_json::Value;
use support::tmux::Tmux;
use support::world::{CALC_BUGGY, CALC_FIXED, World};

fn reply(w: &World, state: &str, text: &str, env: &[(&str, &str)]) -> Value {
    fs::write(w.path("reply.txt"), text).unwrap();
    // The token, unless `env` takes it away.
    let mut all = vec![("GH_TOKEN", w.token.as_str())];
    all.extend_from_slice(env);
    let run = w.run_env(&["reply", "--state", state, "--file", "reply.txt"], &all);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn sent(w: &World, state: &str) {
    let run = w.run(&["sent", "--state", state]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

fn journal_kinds(w: &World, state: &str) -> Vec<String> {
    let log = w.run(&["log", "--state", state]).json();
    log["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect()
}

/// A cycle whose first run of PR `n` (calc.sh buggy) failed; the handoff was sent.
fn failed_once(w: &World) -> (RepoHandle, u64, String) {
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", &[]);
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["report"]["status"], "TEST_FAILED");
    sent(w, "c.json");
    let head = w.emu.pr_head(&repo, n).unwrap();
    (repo, n, head)
}

fn pr_url(w: &World, n: u64) -> String {
    format!("http://{}/acme/widget/pull/{n}", w.emu.web_host())
}

#[test]
fn an_unchanged_head_after_a_failure_is_pr_unchanged_and_runs_nothing() {
    let w = World::new();
    let (_, n, head) = failed_once(&w);
    let r = reply(
        &w,
        "c.json",
        &format!("That failure is the environment's, I pushed nothing.\nPR_URL: {}", pr_url(&w, n)),
        &[],
    );
    assert_eq!((r["status"].as_str(), r["cycle_status"].as_str()), (Some("PR_UNCHANGED"), Some("AWAITING_WEBGPT_FIX")));
    assert_eq!(r["head_check"], format!("unchanged: {}", &head[..12]));
    assert!(r["reason"].as_str().unwrap().contains(&head[..12]), "{r:#}");
    // No run is proposed: the note for WebGPT is what to send.
    assert_eq!(r["next"]["action"], "send");
    let note = r["next"]["text"].as_str().unwrap();
    assert!(
        note.contains(&format!("still {}", &head[..12]))
            && note.contains("failed as reported")
            && note.contains("`fix-calc`"),
        "{note}"
    );
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!((state["iteration"].as_u64(), state["history"].as_array().unwrap().len()), (Some(1), 1));
    assert!(journal_kinds(&w, "c.json").contains(&"pr_unchanged".to_owned()));
    assert_eq!(w.requests_to("/check-runs"), 0);

    // Asked again with nothing pushed: the ask-once rule blocks the cycle for a person.
    sent(&w, "c.json");
    let r = reply(&w, "c.json", &format!("Still the environment.\nPR_URL: {}", pr_url(&w, n)), &[]);
    assert_eq!((r["status"].as_str(), r["cycle_status"].as_str()), (Some("PR_UNCHANGED"), Some("BLOCKED_NO_PR")));
    assert_eq!(r["next"]["action"], "stop");
}

#[test]
fn a_pushed_fix_is_pr_found_and_the_head_check_says_it_moved() {
    let w = World::new();
    let (repo, n, head) = failed_once(&w);
    let fixed = w.commit(&repo, "fix-calc", &[("calc.sh", CALC_FIXED)], "use addition");
    let r = reply(&w, "c.json", &format!("Pushed a fix.\nPR_URL: {}", pr_url(&w, n)), &[]);
    assert_eq!(r["status"], "PR_FOUND");
    assert_eq!(r["head_check"], format!("changed: {} (last tested {})", &fixed[..12], &head[..12]));
    assert_eq!(r["next"]["action"], "run");
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    assert_eq!(run.json()["status"], "READY_TO_MERGE", "{}", run.stdout);
}

#[test]
fn without_a_token_reply_and_next_say_they_could_not_check_and_forge_still_refuses_a_rerun() {
    let w = World::new();
    let (_, n, head) = failed_once(&w);
    // No token anywhere: the reply is classified as before, with the reason the head was not read.
    let r = reply(&w, "c.json", &format!("PR_URL: {}", pr_url(&w, n)), &[("GH_TOKEN", "")]);
    assert_eq!(r["status"], "PR_FOUND");
    assert!(r["head_check"].as_str().unwrap().starts_with("could not check: "), "{r:#}");
    let next = w.run_env(&["next", "--state", "c.json"], &[("GH_TOKEN", "")]).json();
    assert_eq!(next["action"], "run");
    assert!(next["head_check"].as_str().unwrap().starts_with("could not check: "), "{next:#}");
    assert!(next["explanation"].as_str().unwrap().contains("ALREADY_TESTED"), "{next:#}");
    // With the token, `next` sees the head did not move.
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["head_check"], format!("unchanged: {}", &head[..12]));
    assert!(next["explanation"].as_str().unwrap().starts_with("PR_UNCHANGED"), "{next:#}");
    // Following it: nothing runs or counts; the note is in the outbox.
    let run = w.forge_pr("c.json", &format!("acme/widget#{n}"), &["--post-comment"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let out = run.json();
    assert_eq!((out["status"].as_str(), out["tested"].as_str()), (Some("ALREADY_TESTED"), Some("TEST_FAILED")));
    assert_eq!((out["iteration"].as_u64(), out["cycle_status"].as_str()), (Some(1), Some("AWAITING_WEBGPT_FIX")));
    assert!(std::path::Path::new(out["report_path"].as_str().unwrap()).is_file(), "{out:#}");
    assert_eq!(out["next"]["action"], "send");
    assert!(out["next"]["text"].as_str().unwrap().contains("failed as reported"));
    assert_eq!(w.requests_to("/comments"), 0, "nothing is posted for a run that did not happen");
}

#[test]
fn forge_pr_twice_on_one_head_runs_once_and_counts_once() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", &[]);
    let pr = format!("acme/widget#{n}");
    assert_eq!(w.forge_pr("c.json", &pr, &[]).json()["iteration"], 1);
    // The handoff is still unsent: the second call changes nothing at all.
    let before = fs::read(w.path("c.json")).unwrap();
    let journal_before = fs::read(w.path("c.d/events.jsonl")).unwrap();
    let again = w.forge_pr("c.json", &pr, &[]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert_eq!(again.json()["status"], "ALREADY_TESTED");
    assert_eq!(again.json()["tested_in_iteration"], 1);
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before, "the state changed");
    assert_eq!(fs::read(w.path("c.d/events.jsonl")).unwrap(), journal_before, "the journal changed");
    let runs = fs::read_dir(w.path("c.d/runs")).unwrap().count();
    assert_eq!(runs, 2, "one log and one report");
    // A rerun is a person's call: not without a terminal.
    let rerun = w.forge_pr("c.json", &pr, &["--rerun"]);
    assert_eq!((rerun.code, rerun.json()["status"].as_str()), (2, Some("NOT_A_TERMINAL")), "{}", rerun.stdout);
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before);
}

#[test]
fn the_persons_words_reach_the_outbox_next_and_the_journal_before_anything_pending() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", &[]);
    w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    // The handoff waits; the person's words go first, in the same message.
    fs::write(w.path("say.txt"), "Also: the PR changes README.md, which is out of scope. Revert it.\n").unwrap();
    let run = w.run(&["say", "--state", "c.json", "--file", "say.txt"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let state = run.json();
    assert_eq!(state["outbox"]["kind"], "handoff");
    let text = state["outbox"]["text"].as_str().unwrap();
    assert!(text.starts_with("Also: the PR changes README.md"), "{text}");
    assert!(text.contains("## Forge Loop PR test: TEST_FAILED"), "{text}");
    assert_eq!(state["iteration"], 1, "a message is not an iteration");
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!((next["action"].as_str(), next["text"].as_str()), (Some("send"), Some(text)));
    let log = w.run(&["log", "--state", "c.json"]).json();
    let written = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "message_written").unwrap().clone();
    assert_eq!((written["actor"].as_str(), written["data"]["before"].as_str()), (Some("agent"), Some("handoff")));
    assert!(written["data"]["text"].as_str().unwrap().contains("out of scope"));

    // Sent, then a message on its own: the outbox holds it alone, `next` sends it.
    sent(&w, "c.json");
    fs::write(w.path("say.txt"), "Keep the public API unchanged.").unwrap();
    let state = w.run(&["say", "--state", "c.json", "--file", "say.txt"]).json();
    assert_eq!(
        (state["outbox"]["kind"].as_str(), state["outbox"]["text"].as_str()),
        (Some("message"), Some("Keep the public API unchanged."))
    );
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "send");
    assert!(next["explanation"].as_str().unwrap().contains("the person's message"), "{next:#}");
    // A secret in the words never reaches the outbox or the journal.
    sent(&w, "c.json");
    let token = support::world::fresh_secret("ghp_");
    fs::write(w.path("say.txt"), format!("use the token {token} for the API")).unwrap();
    let run = w.run(&["say", "--state", "c.json", "--file", "say.txt"]);
    assert!(!run.stdout.contains(&token));
    assert!(!fs::read_to_string(w.path("c.json")).unwrap().contains(&token));
    assert!(!fs::read_to_string(w.path("c.d/events.jsonl")).unwrap().contains(&token));
}

#[test]
fn review_feedback_on_a_passed_pr_reopens_the_loop_and_a_blocked_cycle_refuses() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_FIXED);
    w.cycle("c.json", &[]);
    assert_eq!(w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]).json()["status"], "READY_TO_MERGE");
    fs::write(w.path("say.txt"), "Please add a test for negative numbers.").unwrap();
    let state = w.run(&["say", "--state", "c.json", "--file", "say.txt"]).json();
    assert_eq!(
        (state["status"].as_str(), state["outbox"]["kind"].as_str()),
        (Some("AWAITING_WEBGPT_FIX"), Some("message"))
    );
    // WebGPT says it is done but pushed nothing: the tested head is not run again, it is told.
    sent(&w, "c.json");
    reply(&w, "c.json", &format!("Done.\nPR_URL: {}", pr_url(&w, n)), &[]);
    let out = w.run(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "c.json"]).json();
    assert_eq!(
        (out["status"].as_str(), out["tested"].as_str()),
        (Some("ALREADY_TESTED"), Some("TEST_PASSED")),
        "{out:#}"
    );
    assert_eq!(out["iteration"], 1);
    assert!(out["next"]["text"].as_str().unwrap().contains("Push the changes"), "{out:#}");
    assert_eq!(
        w.run(&["block", "--state", "c.json", "--status", "BLOCKED_MODEL_UNAVAILABLE", "--reason", "x"]).code,
        0
    );
    let before = fs::read(w.path("c.json")).unwrap();
    let refused = w.run(&["say", "--state", "c.json", "--file", "say.txt"]);
    assert_eq!((refused.code, refused.json()["status"].as_str()), (2, Some("REFUSED")), "{}", refused.stdout);
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before);
}

#[test]
fn corrected_commands_are_used_by_the_next_run_even_on_the_same_head() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    // The first commands file is wrong: it runs a script that does not exist.
    let n = w.pr(&repo, "fix-calc", CALC_FIXED);
    w.cycle("c.json", &[]);
    fs::write(w.path("commands.json"), r#"[["sh", "tests.sh"]]"#).unwrap();
    let pr = format!("acme/widget#{n}");
    assert_eq!(w.forge_pr("c.json", &pr, &[]).json()["report"]["status"], "TEST_FAILED");
    // The failure's handoff is queued for WebGPT...
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "send", "{next:#}");
    let handoff_sha = next["text_sha256"].as_str().unwrap().to_owned();
    fs::write(w.path("fixed.json"), r#"[["sh", "test.sh"]]"#).unwrap();
    let run = w.run(&["commands", "--state", "c.json", "--commands-json", "fixed.json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // ...and the correction makes it moot: withdrawn unsent, journaled with why, and `next`
    // says to run again instead of sending it.
    assert!(run.json()["outbox"].is_null(), "{}", run.stdout);
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "run", "{next:#}");
    assert!(next["explanation"].as_str().unwrap().contains("corrected the commands"), "{next:#}");
    assert_eq!(next["command"][2], "--pr", "{next:#}");
    assert_eq!(run.json()["commands"]["commands"][0]["argv"], serde_json::json!(["sh", "test.sh"]));
    let log = w.run(&["log", "--state", "c.json"]).json();
    let changed = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "commands_changed").unwrap().clone();
    let (before, after) =
        (changed["data"]["before_sha256"].as_str().unwrap(), changed["data"]["after_sha256"].as_str().unwrap());
    assert!(before.len() == 64 && after.len() == 64 && before != after, "{changed:#}");
    let withdrawn = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "message_withdrawn").unwrap();
    assert_eq!(withdrawn["data"]["kind"], "handoff", "{withdrawn:#}");
    assert_eq!(withdrawn["data"]["sha256"], handoff_sha.as_str(), "{withdrawn:#}");
    assert!(withdrawn["data"]["why"].as_str().unwrap().contains("commands changed"), "{withdrawn:#}");
    // The same head with other commands is a new test, with the stored (corrected) commands.
    let out = w.run(&["forge", "--pr", &pr, "--state", "c.json"]).json();
    assert_eq!((out["status"].as_str(), out["iteration"].as_u64()), (Some("READY_TO_MERGE"), Some(2)), "{out:#}");
    assert_eq!(out["report"]["environment"]["commands_sha256"], after);
}

#[test]
fn commands_that_widen_the_sandbox_need_a_person_on_a_terminal() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", &[]);
    w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]);
    fs::write(
        w.path("wider.json"),
        r#"{"commands": [["sh", "test.sh"]], "network": "allowlist", "write_paths": ["/srv/cache"]}"#,
    )
    .unwrap();
    let before = fs::read(w.path("c.json")).unwrap();
    let run = w.run(&["commands", "--state", "c.json", "--commands-json", "wider.json"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "NOT_A_TERMINAL");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("network allowlist instead of off") && error.contains("writes /srv/cache"), "{error}");
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before, "nothing changed");
    // A setup step reaches the allowlist too: adding one from a pipe is refused alike.
    fs::write(
        w.path("setup.json"),
        r#"{"setup": [["pip", "install", "-r", "req.txt"]], "commands": [["sh", "test.sh"]]}"#,
    )
    .unwrap();
    let run = w.run(&["commands", "--state", "c.json", "--commands-json", "setup.json"]);
    assert_eq!((run.code, run.json()["status"].as_str()), (2, Some("NOT_A_TERMINAL")), "{}", run.stdout);
    let error = run.json()["error"].as_str().unwrap().to_owned();
    assert!(error.contains("runs setup step `pip install -r req.txt` with the network allowlist"), "{error}");
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before, "nothing changed");

    let tmux = Tmux::start(&w.terminal("commands --state c.json --commands-json wider.json"), 160, 40);
    let screen = tmux.wait_for("[y/N]", Duration::from_secs(20));
    assert!(screen.contains("widen the sandbox") && screen.contains("network allowlist"), "{screen}");
    tmux.send_keys(&["y", "Enter"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(20));
    let state = w.sb.read_json(&w.path("c.json"));
    assert_eq!(state["commands"]["network"], "allowlist");
    let log = w.run(&["log", "--state", "c.json"]).json();
    let changed = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "commands_changed").unwrap().clone();
    assert_eq!(changed["actor"], "human");
    assert_eq!(
        changed["data"]["widened"],
        serde_json::json!(["network allowlist instead of off", "writes /srv/cache"])
    );
}

#[test]
fn continue_from_carries_the_commands_and_continues_on_the_pr() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("old.json", &[]);
    w.forge_pr("old.json", &format!("acme/widget#{n}"), &[]);
    let run = w.run(&[
        "forge",
        "--state",
        "new.json",
        "--request",
        "Also keep the README in scope",
        "--continue-from",
        "old.json",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let state = run.json();
    let old = w.sb.read_json(&w.path("old.json"));
    assert_eq!(state["commands"], old["commands"]);
    let prompt = state["outbox"]["text"].as_str().unwrap();
    assert!(prompt.starts_with(&format!("Continue on pull request acme/widget#{n}")), "{prompt}");
    assert!(!prompt.contains("open a pull request"), "{prompt}");
    // The successor tests without a commands file: the carried ones run.
    sent(&w, "new.json");
    w.commit(&repo, "fix-calc", &[("calc.sh", CALC_FIXED)], "use addition");
    reply(&w, "new.json", &format!("Done.\nPR_URL: {}", pr_url(&w, n)), &[]);
    let out = w.run(&["forge", "--pr", &format!("acme/widget#{n}"), "--state", "new.json"]).json();
    assert_eq!(out["status"], "READY_TO_MERGE", "{out:#}");
}

#[test]
fn a_person_sees_and_drops_the_pending_handoff_and_next_waits_for_them() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    w.cycle("c.json", &[]);
    assert_eq!(w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]).json()["report"]["status"], "TEST_FAILED");
    let view = w.run(&["outbox", "--state", "c.json"]).json();
    assert_eq!(view["pending"]["kind"], "handoff", "{view:#}");
    let handoff_sha = view["pending"]["sha256"].as_str().unwrap().to_owned();
    // Dropping is a person's: from an agent's pipe it is refused and nothing changes.
    let before = fs::read(w.path("c.json")).unwrap();
    let refused = w.run(&["outbox", "--state", "c.json", "--drop"]);
    assert_eq!((refused.code, refused.json()["status"].as_str()), (2, Some("NOT_A_TERMINAL")), "{}", refused.stdout);
    assert_eq!(fs::read(w.path("c.json")).unwrap(), before);

    let tmux = Tmux::start(&w.terminal("outbox --state c.json --drop"), 160, 40);
    let screen = tmux.wait_for("[y/N]", Duration::from_secs(20));
    assert!(screen.contains("Drop it"), "{screen}");
    tmux.send_keys(&["y", "Enter"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(20));
    let view = w.run(&["outbox", "--state", "c.json"]).json();
    assert!(view["pending"].is_null(), "{view:#}");
    assert_eq!(view["withdrawn"]["sha256"], handoff_sha.as_str(), "{view:#}");
    assert_eq!(view["withdrawn"]["by"], "human", "{view:#}");
    // Nothing to send, nothing to run: the person decides what comes next.
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "wait_for_human", "{next:#}");
    assert!(next["explanation"].as_str().unwrap().contains("a person dropped it"), "{next:#}");
    let log = w.run(&["log", "--state", "c.json"]).json();
    let withdrawn = log["events"].as_array().unwrap().iter().find(|e| e["kind"] == "message_withdrawn").unwrap();
    assert_eq!(
        (withdrawn["actor"].as_str(), withdrawn["data"]["sha256"].as_str()),
        (Some("human"), Some(handoff_sha.as_str()))
    );
    // Their own words are what goes next.
    fs::write(w.path("say.txt"), "Please keep the old behaviour for negative numbers.").unwrap();
    assert_eq!(w.run(&["say", "--state", "c.json", "--file", "say.txt"]).code, 0);
    let next = w.run(&["next", "--state", "c.json"]).json();
    assert_eq!(next["action"], "send", "{next:#}");
    assert!(w.run(&["outbox", "--state", "c.json"]).json()["withdrawn"].is_null());
}

#[test]
fn a_rerun_a_person_asks_for_withdraws_the_handoff_it_makes_moot() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "fix-calc", CALC_BUGGY);
    let pr = format!("acme/widget#{n}");
    w.cycle("c.json", &[]);
    assert_eq!(w.forge_pr("c.json", &pr, &[]).json()["report"]["status"], "TEST_FAILED");
    let first = w.run(&["outbox", "--state", "c.json"]).json()["pending"]["sha256"].as_str().unwrap().to_owned();
    let tmux = Tmux::start(&w.terminal(&format!("forge --pr {pr} --state c.json --rerun")), 160, 40);
    tmux.wait_for("EXIT=", Duration::from_secs(60));
    let log = w.run(&["log", "--state", "c.json"]).json();
    let events = log["events"].as_array().unwrap();
    let withdrawn = events.iter().position(|e| e["kind"] == "message_withdrawn").expect("withdrawn");
    assert_eq!(events[withdrawn]["data"]["sha256"], first.as_str());
    assert!(
        events[withdrawn]["data"]["why"].as_str().unwrap().contains("asked for the run again"),
        "{:#}",
        events[withdrawn]
    );
    let started: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| e["kind"] == "run_started").map(|(i, _)| i).collect();
    assert!(started.len() == 2 && started[0] < withdrawn && withdrawn <= started[1] + 1, "{events:#?}");
    // The rerun's own result is what is queued now.
    let view = w.run(&["outbox", "--state", "c.json"]).json();
    assert_eq!(view["pending"]["kind"], "handoff", "{view:#}");
    assert_ne!(view["pending"]["sha256"], first.as_str());
}
