//! `redact` as a filter, `doctor` against the emulator, what the commands that need GitHub do
//! without any token (`NO_TOKEN`), and the help's demo count.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::io::Write;
use std::process::Stdio;

use support::world::{CALC_FIXED, World, fresh_secret};

/// An environment with no token source at all: no GH_TOKEN or GITHUB_TOKEN (the sandbox
/// removes them), and a PATH that is an empty directory, so no `gh` can answer either.
fn no_token_env(w: &World) -> Vec<(&'static str, String)> {
    let empty = w.path("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    vec![("PATH", empty.to_string_lossy().into_owned())]
}

fn run_without_token(w: &World, args: &[&str]) -> support::Run {
    let env = no_token_env(w);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    w.run_env(args, &env)
}

/// The NO_TOKEN message names every source and `doctor`.
fn assert_no_token(run: &support::Run, what: &str) {
    assert_eq!(run.code, 2, "{what}: {}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    assert_eq!(doc["status"], "NO_TOKEN", "{what}: {doc:#}");
    let error = doc["error"].as_str().unwrap();
    for needle in [
        "GH_TOKEN or GITHUB_TOKEN",
        "`gh auth login",
        "`gh auth token`",
        "`[github] token_command`",
        "`forgeloop doctor`",
    ] {
        assert!(error.contains(needle), "{what}: {needle} missing from {error}");
    }
    assert!(!error.contains("INFRA") && !error.contains("in a row"), "{what}: not an infrastructure failure: {error}");
}

fn pipe(w: &World, args: &[&str], input: &[u8]) -> (i32, String) {
    let mut child = w.sb.command(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn redact_filters_stdin_and_files_and_explains_without_values() {
    let w = World::new();
    let token = fresh_secret("ghp_");
    let mut log =
        format!("ok 1 - task-runner\nremote: https://x-access-token:{token}@github.com/acme/widget.git\n").into_bytes();
    log.extend_from_slice(b"\xff invalid\n");
    let (code, out) = pipe(&w, &["redact"], &log);
    assert_eq!(code, 0);
    assert!(!out.contains(&token));
    assert!(out.contains("[REDACTED:"));
    assert!(out.contains("ok 1 - task-runner"), "harmless words are untouched");
    assert!(out.contains('\u{fffd}'), "invalid UTF-8 is replaced, not an error");
    std::fs::write(w.path("log.txt"), &log).unwrap();
    let run = w.sb.run(&["redact", "log.txt"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, out);
    let explain = w.sb.run(&["redact", "--explain", "log.txt"]);
    assert_eq!(explain.code, 0);
    assert!(!explain.stdout.contains(&token));
    let report = explain.json();
    assert!(report["count"].as_u64().unwrap() >= 1);
    let first = &report["findings"][0];
    assert_eq!(first["line"], 2);
    assert!(first["kind"].is_string() && first["start"].is_u64());
    assert_eq!(w.sb.run(&["redact", "missing.txt"]).code, 2);
}

#[test]
fn doctor_reports_each_check_with_a_fix() {
    let w = World::new();
    let run = w.run(&["doctor"]);
    let out = run.json();
    let checks = out["checks"].as_array().unwrap();
    let get = |name: &str| {
        checks.iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("no {name} check: {out:#}")).clone()
    };
    assert_eq!(get("git")["ok"], true);
    assert_eq!(get("home")["ok"], true);
    assert_eq!(get("token")["ok"], true);
    assert_eq!(get("github")["ok"], true, "{out:#}");
    assert!(get("github")["detail"].as_str().unwrap().contains(support::world::LOGIN));
    // Tests have no terminal, as an agent has none: that is information, not a problem, so
    // an agent whose checks all pass gets exit 0 and `OK`.
    let terminal = get("terminal");
    assert_eq!((terminal["ok"].as_bool(), terminal["info"].as_bool()), (Some(true), Some(true)), "{terminal:#}");
    assert!(terminal.get("fix").is_none(), "{terminal:#}");
    assert!(terminal["detail"].as_str().unwrap().contains("human-only commands need a terminal"), "{terminal:#}");
    let problems: Vec<&str> =
        checks.iter().filter(|c| c["ok"] != true).map(|c| c["name"].as_str().unwrap_or("?")).collect();
    assert_eq!(problems, Vec::<&str>::new(), "every check an agent needs works here: {out:#}");
    assert_eq!((run.code, out["status"].as_str()), (0, Some("OK")), "{out:#}");
    // A real problem (no token) is still one: PROBLEMS and exit 2.
    let no_token = w.run_env(&["doctor"], &[("GH_TOKEN", "")]);
    assert_eq!((no_token.code, no_token.json()["status"].as_str()), (2, Some("PROBLEMS")));
    // With the token present (and no `gh` on a bare PATH) the token path runs to GitHub and
    // back, and the token appears on no output channel.
    let bare = w.run_env(&["doctor"], &[("PATH", "/usr/bin:/bin"), ("GH_TOKEN", &w.token)]);
    let checks = bare.json()["checks"].as_array().unwrap().clone();
    let check = |name: &str| checks.iter().find(|c| c["name"] == name).cloned().unwrap_or_default();
    assert_eq!(check("token")["ok"], true, "{checks:?}");
    assert!(check("token")["detail"].as_str().unwrap().contains("GH_TOKEN"), "{checks:?}");
    assert_eq!(check("github")["ok"], true, "the token reached GitHub: {checks:?}");
    assert!(check("scopes")["detail"].is_string(), "{checks:?}");
    assert!(!bare.stdout.contains(&w.token) && !bare.stderr.contains(&w.token));
    // Without any token source: the token and GitHub checks both say what to do (the three
    // sources), and GitHub is not asked without a token.
    w.emu.clear_requests();
    let out = run_without_token(&w, &["doctor"]).json();
    let check = |name: &str| out["checks"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    for name in ["token", "github"] {
        let check = check(name);
        assert_eq!(check["ok"], false, "{check:#}");
        let fix = check["fix"].as_str().unwrap();
        for source in ["GH_TOKEN or GITHUB_TOKEN", "`gh auth login`", "`[github] token_command`"] {
            assert!(fix.contains(source), "{name}: {source} missing from the fix {fix:?}");
        }
        assert!(!fix.contains("see the message"), "{name}: {fix}");
    }
    assert!(check("token")["detail"].as_str().unwrap().contains("`gh` is not on PATH"), "{out:#}");
    assert!(w.emu.requests().is_empty(), "no request without a token: {:?}", w.emu.requests());
    // A token GitHub rejects: the fix says to replace it, through the same sources.
    let rejected = w.run_env(&["doctor"], &[("PATH", "/usr/bin:/bin"), ("GH_TOKEN", &fresh_secret("ghp_"))]).json();
    let github = rejected["checks"].as_array().unwrap().iter().find(|c| c["name"] == "github").unwrap().clone();
    assert_eq!(github["ok"], false, "{rejected:#}");
    let fix = github["fix"].as_str().unwrap();
    assert!(fix.contains("rejected the token from GH_TOKEN") && fix.contains("`gh auth login`"), "{fix}");
}

/// No token from any source: `forge --pr`, `test`, `status`, `diff` and `comment` stop at once
/// with NO_TOKEN (exit 2), ask GitHub nothing, and leave the cycle byte-identical (no infra
/// failure counted, no journal event). A diff already made (a run makes its whole-PR diff for
/// its integrity check) is read from its cache.
#[test]
fn without_any_token_the_github_commands_stop_with_no_token_and_record_nothing() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", CALC_FIXED);
    let pr = format!("acme/widget#{n}");
    w.cycle("c.json", &[]);
    // A second cycle with a completed run, for `diff --state` and `comment`.
    w.cycle("ran.json", &[]);
    let ran = w.forge_pr("ran.json", &pr, &[]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    let files = |name: &str| {
        let d = format!("{}.d", name.trim_end_matches(".json"));
        (std::fs::read(w.path(name)).unwrap(), std::fs::read(w.path(&format!("{d}/events.jsonl"))).unwrap())
    };
    let (before_c, before_ran) = (files("c.json"), files("ran.json"));
    w.emu.clear_requests();

    // The run cached its whole-PR diff: read without a token, asking GitHub nothing.
    let cached = run_without_token(&w, &["diff", "--state", "ran.json"]);
    assert_eq!(cached.code, 0, "{}", cached.stderr);
    assert!(cached.stdout.contains("+++ b/calc.sh"), "{}", cached.stdout);
    assert!(w.emu.requests().is_empty(), "GitHub was asked nothing: {:?}", w.emu.requests());
    let diffs = w.path("ran.d/diffs");
    std::fs::rename(&diffs, w.path("diffs-aside")).unwrap();

    let commands: [(&str, Vec<&str>); 6] = [
        ("forge --pr", vec!["forge", "--pr", &pr, "--state", "c.json", "--commands-json", "commands.json"]),
        ("forge --pr (stored commands)", vec!["forge", "--pr", &pr, "--state", "ran.json"]),
        ("test", vec!["test", "--pr", &pr, "--commands-json", "commands.json"]),
        ("status", vec!["status", "--pr", &pr]),
        ("diff --pr", vec!["diff", "--pr", &pr]),
        ("diff --state", vec!["diff", "--state", "ran.json"]),
    ];
    for (what, args) in &commands {
        assert_no_token(&run_without_token(&w, args), what);
    }
    assert_no_token(&run_without_token(&w, &["comment", "--state", "ran.json"]), "comment");
    // Twice more, as a retrying agent would: still nothing counted (three infra failures
    // would have blocked the cycle).
    for _ in 0..2 {
        assert_no_token(&run_without_token(&w, &commands[0].1), "forge --pr again");
    }
    assert_eq!(files("c.json"), before_c, "the cycle's state and journal are byte-identical");
    assert_eq!(files("ran.json"), before_ran, "the cycle's state and journal are byte-identical");
    assert!(w.emu.requests().is_empty(), "GitHub was asked nothing: {:?}", w.emu.requests());

    // With a token the diff is made again, the same as the run's.
    let made = w.run(&["diff", "--state", "ran.json"]);
    assert_eq!((made.code, &made.stdout), (0, &cached.stdout), "{}", made.stderr);
}

/// `forgeloop --help` counts the demo's cycles from its scenario table, and the README says
/// the same number.
#[test]
fn the_demos_cycle_count_comes_from_the_scenario_table() {
    let count = forgeloop::demo::scenarios::all().len();
    let words =
        ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    let word = words[count];
    assert_eq!(forgeloop::demo::scenarios::count_in_words(), word);
    let help = w_help().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains(&format!("a scripted WebGPT, {word} live cycles")), "{help}");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(readme.contains(&format!("runs {word} cycles through the real code")), "README's demo paragraph");
    assert!(readme.contains(&format!("forgeloop demo: {word} cycles")), "README's demo picture's alt text");
}

fn w_help() -> String {
    let sb = support::Sandbox::new();
    let run = sb.run(&["--help"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn gc_deletes_mirrors_unused_for_30_days_unless_in_use_and_doctor_reports_them() {
    let w = World::new();
    let repo = w.project("acme", "widget", false);
    let n = w.pr(&repo, "x", support::world::CALC_FIXED);
    w.cycle("c.json", &[]);
    assert_eq!(w.forge_pr("c.json", &format!("acme/widget#{n}"), &[]).code, 0);
    let mirror = w.sb.home().join("mirrors/acme/widget.git");
    assert!(mirror.join("shallow").is_file(), "the first iteration made a shallow mirror");
    let mirrors_check = || {
        let out = w.run(&["doctor"]).json();
        let check = out["checks"].as_array().unwrap().iter().find(|c| c["name"] == "mirrors").cloned();
        check.unwrap_or_else(|| panic!("no mirrors check: {out:#}"))
    };
    let fresh = mirrors_check();
    assert_eq!((fresh["ok"].as_bool(), fresh["info"].as_bool()), (Some(true), Some(true)), "{fresh:#}");
    let detail = fresh["detail"].as_str().unwrap().to_owned();
    assert!(detail.starts_with("1 mirrors (1 shallow), ") && detail.contains("; 0 unused for 30+ days"), "{detail}");

    // Used just now: kept.
    let kept = w.run(&["gc"]);
    assert_eq!(kept.code, 0, "{}", kept.stderr);
    assert_eq!((kept.json()["status"].as_str(), kept.json()["kept"].as_u64()), (Some("GC_DONE"), Some(1)));
    assert!(mirror.exists());

    // Last used 40 days ago: doctor counts it, gc deletes it — but not while a cycle holds its lock.
    let marker = std::fs::File::options().write(true).open(mirror.join("forgeloop-last-used")).unwrap();
    marker.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 24 * 3600)).unwrap();
    assert!(mirrors_check()["detail"].as_str().unwrap().contains("; 1 unused for 30+ days"));
    let lock = std::fs::File::open(w.sb.home().join("mirrors/acme/widget.git.lock")).unwrap();
    lock.lock().unwrap();
    let busy = w.run(&["gc"]).json();
    assert_eq!(
        (busy["removed"].as_array().unwrap().len(), busy["in_use"][0]["repository"].as_str()),
        (0, Some("acme/widget"))
    );
    assert!(mirror.exists());
    drop(lock);
    let dry = w.run(&["gc", "--dry-run"]).json();
    assert_eq!(dry["removed"][0]["repository"], "acme/widget");
    assert!(mirror.exists());
    let done = w.run(&["gc"]).json();
    assert_eq!(done["removed"][0]["repository"], "acme/widget");
    assert!(done["freed_bytes"].as_u64().unwrap() > 0 && done["removed"][0]["unused_days"] == 40);
    assert!(!mirror.exists());
}

/// `forgeloop … | head` closes the pipe early; no command may panic over it (clap_complete's
/// generator did, with a backtrace on the terminal).
#[test]
fn a_closed_stdout_is_no_panic() {
    let w = World::new();
    for args in [&["completions", "bash"][..], &["completions", "zsh"], &["list"], &["gc", "--dry-run"]] {
        let mut child =
            w.command(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {stderr}");
    }
}

/// `doctor` shows what shapes the runs — the allow lists, the protected paths, the cache bound,
/// the connector's repositories and profiles — and a connector repository without a profile
/// that exists is a problem with its fix.
#[test]
fn doctor_shows_the_persons_config_and_a_connector_without_a_profile_is_a_problem() {
    let w = World::new();
    let check = |out: &serde_json::Value, name: &str| {
        out["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name}: {out:#}"))
    };
    let plain = w.run(&["doctor"]).json();
    assert!(check(&plain, "network")["detail"].as_str().unwrap().contains("nothing is allowed"), "{plain:#}");
    assert!(check(&plain, "connector")["detail"].as_str().unwrap().contains("not set up"), "{plain:#}");
    assert_eq!(plain["status"], "OK");

    w.config(
        "[network]\nallow = [\"registries\"]\n[network.repositories.\"acme/widget\"]\nallow = [\"10.0.0.5:8080\"]\n\n\
         [protect]\npaths = [\"tests/\"]\n[protect.repositories.\"acme/widget\"]\npaths = [\"*.snap\"]\nmode = \"flag\"\n\n\
         [cache]\nmax_gb = 3\n\n[mcp.profiles.unit]\ncommands = [[\"sh\", \"test.sh\"]]\n\n\
         [connector]\nrepositories = [\"acme/widget\", \"acme/other\"]\n[connector.profiles]\n\"acme/widget\" = \"unit\"\n",
    );
    let run = w.run(&["doctor"]);
    let out = run.json();
    let network = check(&out, "network")["detail"].as_str().unwrap().to_owned();
    assert!(network.contains("[network] allow registries"), "{network}");
    assert!(network.contains("[network.repositories.\"acme/widget\"] allow 10.0.0.5:8080"), "{network}");
    assert!(network.contains("not public"), "the hand-written private address is flagged: {network}");
    let protect = check(&out, "protect")["detail"].as_str().unwrap().to_owned();
    assert!(protect.contains("tests/") && protect.contains("acme/widget adds *.snap (mode flag)"), "{protect}");
    assert!(check(&out, "caches")["detail"].as_str().unwrap().contains("max_gb 3.0 GB"), "{out:#}");
    let connector = check(&out, "connector");
    assert_eq!(connector["ok"], false, "{connector:#}");
    let detail = connector["detail"].as_str().unwrap();
    assert!(detail.contains("acme/widget runs unit") && detail.contains("acme/other has no profile"), "{detail}");
    assert!(connector["fix"].as_str().unwrap().contains("[connector] default_profile"), "{connector:#}");
    assert_eq!((run.code, out["status"].as_str()), (2, Some("PROBLEMS")));
    assert!(check(&out, "config")["detail"].as_str().unwrap().contains("config.toml"), "{out:#}");
}
