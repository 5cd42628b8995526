//! `forgeloop demo --headless`, the real binary with no GitHub token and an empty HOME: every
//! cycle ends where its scenario says, through real fetches, test processes and PR comments on
//! the emulator; nothing is left running or lying around afterwards; with `--home` the sandbox
//! stays behind for inspection and holds what the summary claims.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply
#![cfg(target_os = "linux")]

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/accounts.rs"]
mod accounts;

/// The leftover-process check looks at every child of this test process, so the tests of
/// this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Env {
    dir: tempfile::TempDir,
    /// Runs the binary as this ordinary account (a copy it can reach) instead of as the tests.
    user: Option<(u32, u32, PathBuf)>,
}

impl Env {
    fn new() -> Env {
        let env = Env { dir: tempfile::tempdir().unwrap(), user: None };
        for sub in ["home", "tmp"] {
            std::fs::create_dir_all(env.path(sub)).unwrap();
        }
        env
    }

    /// An environment whose demo runs as the ordinary test account (as the developer
    /// themselves when they are not root: they are the ordinary user).
    fn as_ordinary_user() -> Env {
        let mut env = Env::new();
        if unsafe { libc::geteuid() } != 0 {
            return env;
        }
        let (uid, gid) = accounts::account(accounts::TEST_USER);
        let bin = env.path("forgeloop");
        std::fs::copy(env!("CARGO_BIN_EXE_forgeloop"), &bin).unwrap();
        std::fs::set_permissions(env.dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        for path in [env.path("home"), env.path("tmp"), bin.clone()] {
            accounts::chown_tree(&path, uid, gid);
        }
        env.user = Some((uid, gid, bin));
        env
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The binary with an empty HOME, a private TMPDIR, and nothing of the developer's
    /// forgeloop or GitHub setup.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = match &self.user {
            Some((uid, gid, bin)) => accounts::as_account(*uid, *gid, bin),
            None => Command::new(env!("CARGO_BIN_EXE_forgeloop")),
        };
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .env_remove("FORGELOOP_HOME")
            .env_remove("FORGELOOP_REGISTRY")
            .env_remove("FORGELOOP_CONFIG")
            .env_remove("FORGELOOP_GITHUB_API")
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> (i32, Value, String) {
        self.run_env(args, &[])
    }

    fn run_env(&self, args: &[&str], vars: &[(&str, &Path)]) -> (i32, Value, String) {
        let mut cmd = self.command(args);
        for (name, value) in vars {
            cmd.env(name, value);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let json = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
        (out.status.code().unwrap_or(-1), json, stderr)
    }
}

/// Orphaned descendants of the demo are re-parented to this process, so they can be found.
fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only changes who adopts our orphans.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(rc, 0, "prctl(PR_SET_CHILD_SUBREAPER) failed");
}

/// `(pid, state, command line)` of every process whose parent is this test process.
fn my_children() -> Vec<(u32, char, String)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (Some(state), Some(ppid)) = (fields.first(), fields.get(1).and_then(|p| p.parse::<u32>().ok())) else {
            continue;
        };
        if ppid == me {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            out.push((pid, state.chars().next().unwrap_or('?'), cmdline));
        }
    }
    out
}

/// Nothing the demo started may outlive it: no adopted orphan, running or exited.
fn assert_nothing_left_running() {
    let start = Instant::now();
    loop {
        let left = my_children();
        let running: Vec<_> = left.iter().filter(|(_, state, _)| *state != 'Z').collect();
        if running.is_empty() {
            // An exited orphan (zombie) still means it outlived the demo.
            assert!(left.is_empty(), "processes outlived the demo: {left:?}");
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "processes outlived the demo: {running:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_leftover_check_sees_an_orphan_it_adopted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    become_subreaper();
    let status = Command::new("sh").args(["-c", "sleep 30 & exit 0"]).status().unwrap();
    assert!(status.success());
    let start = Instant::now();
    let orphan = loop {
        if let Some((pid, _, _)) = my_children().into_iter().find(|(_, _, cmd)| cmd.starts_with("sleep 30")) {
            break pid;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "the orphan was not adopted: {:?}", my_children());
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: signalling and reaping our own adopted child.
    unsafe {
        libc::kill(orphan as i32, libc::SIGKILL);
        libc::waitpid(orphan as i32, std::ptr::null_mut(), 0);
    }
    assert!(my_children().iter().all(|(pid, _, _)| *pid != orphan));
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
}

/// The connector cycle of a summary: the one a chat client drove through `forgeloop serve`.
fn connector_cycle(summary: &Value) -> &Value {
    let cycles = summary["cycles"].as_array().unwrap();
    let mut driven = cycles.iter().filter(|c| c["driver"].as_str().is_some_and(|d| d.starts_with("connector:")));
    let cycle = driven.next().unwrap_or_else(|| panic!("no connector cycle: {summary:#}"));
    assert!(driven.next().is_none(), "one connector cycle: {summary:#}");
    cycle
}

/// Checks the summary: ten cycles, each ended where expected, with the scenario statuses of
/// design §9 and the issues all present (the sixth tested on the repository's CI, design §5.7;
/// the seventh refused network by policy, its entry written by hand by the stand-in, design §5.6; the eighth
/// driven through `forgeloop serve` by a scripted chat client, design §8.1; the last two review
/// cycles, one through a proven connector and one through the packet, docs/review.md).
fn assert_summary_ok(summary: &Value) {
    assert_eq!(summary["status"], "DEMO_OK", "{summary:#}");
    let cycles = summary["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 10, "{summary:#}");
    let is_review = |c: &Value| c["name"].as_str().is_some_and(|n| n.starts_with("review-"));
    for cycle in cycles {
        assert_eq!(cycle["ok"], true, "{cycle:#}");
        assert_eq!(cycle["status"], cycle["expected"], "{cycle:#}");
        assert_eq!(cycle["journal_ok"], true, "{cycle:#}");
        if is_review(cycle) {
            // A review tests nothing: no run, no comment, no sandbox.
            assert_eq!(cycle["status"], "REVIEW_DONE", "{cycle:#}");
            assert_eq!((cycle["iteration"].as_u64(), cycle["comments"].as_u64()), (Some(0), Some(0)), "{cycle:#}");
            assert!(cycle["sandboxes"].as_array().unwrap().is_empty(), "{cycle:#}");
            continue;
        }
        if cycle["driver"].is_null() {
            assert!(cycle["comments"].as_u64().unwrap() >= 1, "every cycle had a run, so a comment: {cycle:#}");
        }
        assert!(cycle["problems"].as_array().unwrap().is_empty(), "{cycle:#}");
        // Every local run ran in the sandbox (design §5.6); the CI cycle ran nothing here.
        let sandboxes = cycle["sandboxes"].as_array().unwrap();
        let here = |s: &Value| s.as_str().unwrap().starts_with("isolated");
        let on_ci = |s: &Value| s == "on the repository's CI (nothing ran here)";
        let all = |f: &dyn Fn(&Value) -> bool| !sandboxes.is_empty() && sandboxes.iter().all(f);
        if cycle["name"] == "add-maximum-on-ci" {
            assert!(all(&on_ci), "{cycle:#}");
        } else {
            assert!(all(&here), "{cycle:#}");
        }
    }
    let by_name = |name: &str| cycles.iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("{name} missing"));
    let fixed = by_name("add-subtraction");
    assert_eq!((fixed["status"].as_str(), fixed["iteration"].as_u64()), (Some("READY_TO_MERGE"), Some(2)));
    let capped = by_name("add-power");
    assert_eq!(capped["status"], "BLOCKED_MAX_ITERATIONS");
    assert_eq!((capped["iteration"].as_u64(), capped["max_iterations"].as_u64()), (Some(2), Some(2)));
    let confirmed = by_name("add-multiplication");
    assert_eq!(confirmed["status"], "READY_TO_MERGE");
    assert_eq!(confirmed["brief_confirmation"]["via"], "demo");
    assert_eq!(confirmed["brief_confirmation"]["by"], "system");
    let asked_once = by_name("add-division");
    assert_eq!(asked_once["status"], "READY_TO_MERGE");
    let aborted = by_name("add-modulo");
    assert_eq!((aborted["status"].as_str(), aborted["iteration"].as_u64()), (Some("ABORTED"), Some(1)));
    let on_ci = by_name("add-maximum-on-ci");
    assert_eq!((on_ci["status"].as_str(), on_ci["iteration"].as_u64()), (Some("READY_TO_MERGE"), Some(2)));
    // NEEDS_NETWORK cost no iteration and posted nothing; the passing run's setup had the
    // allowlist (the package index, allowed), its tests no network.
    let dependency = by_name("add-average-with-deps");
    assert_eq!(
        (dependency["status"].as_str(), dependency["iteration"].as_u64(), dependency["comments"].as_u64()),
        (Some("READY_TO_MERGE"), Some(1), Some(1))
    );
    let label = dependency["sandboxes"][0].as_str().unwrap();
    assert!(label.ends_with("network: allowlist for setup (1 host), none for the tests"), "{label}");
    // The chat client's cycle: named by serve, driven by the client, confirmed by the stand-in
    // for the person, a failing then a passing test_pr, both in the sandbox; test_pr posts no
    // comment (the client reads the report).
    let remote = connector_cycle(summary);
    assert_eq!(remote["driver"], "connector:demo-chat", "{remote:#}");
    assert_eq!(
        (remote["status"].as_str(), remote["iteration"].as_u64(), remote["comments"].as_u64()),
        (Some("READY_TO_MERGE"), Some(2), Some(0)),
        "{remote:#}"
    );
    assert!(remote["name"].as_str().unwrap().starts_with("calc-"), "serve names it: {remote:#}");
    assert_eq!(remote["brief_confirmation"]["via"], "demo");
    assert_eq!(remote["brief_confirmation"]["by"], "system");
    assert_eq!(remote["sandboxes"].as_array().unwrap().len(), 2, "{remote:#}");
    for cycle in cycles.iter().filter(|c| c["name"] != remote["name"]) {
        assert!(cycle["driver"].is_null(), "the relay loop's cycles have no driver: {cycle:#}");
    }
}

fn emulator_addr(summary: &Value) -> SocketAddr {
    let api = summary["emulator"]["api"].as_str().unwrap();
    let addr: SocketAddr = api.strip_prefix("http://").unwrap().parse().unwrap();
    assert!(addr.ip().is_loopback(), "{api}");
    addr
}

#[test]
fn headless_demo_ends_every_cycle_as_expected_and_leaves_nothing_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    become_subreaper();
    let env = Env::new();
    // The person's real forgeloop home (FORGELOOP_HOME) is not a sandbox: only --home is.
    let real_home = env.path("real-forgeloop-home");
    std::fs::create_dir_all(real_home.join("cycles")).unwrap();
    let (code, summary, stderr) = env.run_env(&["demo", "--headless"], &[("FORGELOOP_HOME", &real_home)]);
    assert_eq!(code, 0, "{summary:#}\n{stderr}");
    assert_summary_ok(&summary);
    assert_eq!(summary["mode"], "headless");
    assert_eq!(entries(&real_home), ["cycles"]);
    assert!(entries(&real_home.join("cycles")).is_empty());
    assert_eq!(summary["emulator"]["stopped"], true);

    // Nothing left: no process, no listening emulator, no sandbox, no checkout.
    assert_nothing_left_running();
    assert!(TcpStream::connect_timeout(&emulator_addr(&summary), Duration::from_secs(2)).is_err());
    assert_eq!(summary["sandbox_kept"], false);
    let sandbox = PathBuf::from(summary["sandbox"].as_str().unwrap());
    assert!(sandbox.starts_with(env.path("tmp")), "the sandbox is a temporary directory: {}", sandbox.display());
    assert!(!sandbox.exists(), "the temporary sandbox was removed");
    assert!(entries(&env.path("tmp")).is_empty(), "left in TMPDIR: {:?}", entries(&env.path("tmp")));
    // The user's HOME was not touched (no token, no config, no state).
    assert!(entries(&env.path("home")).is_empty(), "{:?}", entries(&env.path("home")));
    // The generated token never reaches the output.
    assert!(!summary.to_string().contains("ghp_"), "{summary}");
}

/// Where unprivileged user namespaces are refused (forced here through the test seam), the
/// demo run by an ordinary user runs every cycle in the second tier and ends the same way; run
/// by root it refuses (the second tier never runs a test as root), saying how to run it.
#[test]
fn headless_demo_works_without_user_namespaces() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    become_subreaper();
    if unsafe { libc::geteuid() } == 0 {
        let env = Env::new();
        let refuse = PathBuf::from("namespaces");
        let (code, out, stderr) = env.run_env(&["demo", "--headless"], &[("FORGELOOP_SANDBOX_REFUSE", &refuse)]);
        assert_eq!(code, 2, "{out:#}\n{stderr}");
        assert_eq!(out["status"], "DEMO_FAILED", "{out:#}");
        assert!(out["causes"].to_string().contains("forgeloop runs as root"), "{out:#}");
        assert!(out["fixes"].to_string().contains("ordinary user"), "{out:#}");
        assert_nothing_left_running();
    }
    let env = Env::as_ordinary_user();
    let refuse = PathBuf::from("namespaces");
    let (code, summary, stderr) = env.run_env(&["demo", "--headless"], &[("FORGELOOP_SANDBOX_REFUSE", &refuse)]);
    assert_eq!(code, 0, "{summary:#}\n{stderr}");
    assert_summary_ok(&summary);
    for cycle in summary["cycles"].as_array().unwrap() {
        // The CI cycle ran nothing here; its CI's runs used the Landlock tier too (a failure
        // to build the sandbox would have failed its check).
        let want = match cycle["name"].as_str().unwrap() {
            "add-maximum-on-ci" => "on the repository's CI (nothing ran here)",
            "add-average-with-deps" => "isolated (Landlock), network: allowlist for setup (1 host), none for the tests",
            _ => "isolated (Landlock), no network",
        };
        for label in cycle["sandboxes"].as_array().unwrap() {
            assert_eq!(label, want, "{cycle:#}");
        }
    }
    assert_nothing_left_running();
}

#[test]
fn with_home_the_sandbox_is_kept_and_holds_what_the_summary_says() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    become_subreaper();
    let env = Env::new();
    let home = env.path("sandbox");
    let home_arg = home.display().to_string();
    let (code, summary, stderr) = env.run(&["demo", "--headless", "--home", &home_arg]);
    assert_eq!(code, 0, "{summary:#}\n{stderr}");
    assert_summary_ok(&summary);
    assert_eq!(summary["sandbox_kept"], true);
    assert_nothing_left_running();

    let remote = connector_cycle(&summary)["name"].as_str().unwrap().to_owned();
    for cycle in summary["cycles"].as_array().unwrap() {
        let name = cycle["name"].as_str().unwrap();
        let state_path = home.join("cycles").join(format!("{name}.json"));
        let state: Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
        assert_eq!(state["status"], cycle["status"], "{name}");
        assert_eq!(state["iteration"], cycle["iteration"], "{name}");
        assert_eq!(state["driver"], cycle["driver"], "{name}");
        // The journal's hash chain holds.
        let journal = home.join("cycles").join(format!("{name}.d/events.jsonl"));
        let contents = forgeloop::store::journal::verify(&journal).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!contents.torn_tail);
        let kinds: Vec<&str> = contents.events.iter().map(|e| e.kind.as_str()).collect();
        if name.starts_with("review-") {
            // One review proved its connector; the other's challenge failed and its packet
            // went out after the stand-in's yes. Both were triaged, nothing ran.
            let judged = contents.events.iter().find(|e| e.kind == "attestation_judged").unwrap();
            let verdict = judged.data["verdict"]["verdict"].as_str().unwrap();
            let route = state["review"]["route"].as_str().unwrap();
            match name {
                "review-with-connector" => {
                    assert_eq!((verdict, route), ("valid", "CONNECTOR"), "{name}");
                    assert!(!kinds.contains(&"packet_prepared"), "{name}: {kinds:?}");
                }
                _ => {
                    assert_eq!((verdict, route), ("invalid", "LOCAL_BUNDLE"), "{name}");
                    let approved = contents.events.iter().find(|e| e.kind == "packet_approved").unwrap();
                    assert_eq!((approved.actor.as_str(), approved.data["via"].as_str()), ("system", Some("demo")));
                    let packet = state["review"]["packet"]["path"].as_str().unwrap();
                    assert!(std::path::Path::new(packet).is_file(), "{name}: {packet}");
                }
            }
            assert_eq!(kinds.iter().filter(|k| **k == "finding_triaged").count(), 2, "{name}: {kinds:?}");
            assert!(!kinds.contains(&"run_started"), "{name}: {kinds:?}");
            continue;
        }
        // The connector's test_pr answers the client and posts no comment.
        let commented = name != remote;
        assert!(kinds.contains(&"run_finished"), "{name}: {kinds:?}");
        assert_eq!(kinds.contains(&"comment_published"), commented, "{name}: {kinds:?}");
        // Every run has its redacted log and report, and a published comment.
        let history = state["history"].as_array().unwrap();
        assert_eq!(history.len() as u64, cycle["iteration"].as_u64().unwrap(), "{name}");
        let comments = if commented { history.len() as u64 } else { 0 };
        assert_eq!(comments, cycle["comments"].as_u64().unwrap(), "{name}: one comment per run");
        for run in history {
            let log = home.join("cycles").join(format!("{name}.d")).join(run["log_path"].as_str().unwrap());
            let text = std::fs::read_to_string(&log).unwrap();
            let ran = if name == "add-maximum-on-ci" { "check test: " } else { "$ sh test.sh" };
            assert!(text.contains(ran), "{name}: {text}");
            if commented {
                assert!(run["comment_url"].as_str().unwrap().contains("#issuecomment-"), "{name}");
            }
        }
    }

    // The connector cycle went through serve: the grant the person allowed with the pairing
    // code reaches it; every call is in the connector's journal with the client's name; serve
    // was stopped (its serving.json is gone) and logged to serve.log.
    let grants: Value = serde_json::from_slice(&std::fs::read(home.join("connector/grants.json")).unwrap()).unwrap();
    let grants = grants["grants"].as_array().unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0]["client_name"], "demo-chat");
    assert_eq!(grants[0]["cycles"], serde_json::json!([remote]));
    let journal = std::fs::read_to_string(home.join("connector/journal.jsonl")).unwrap();
    let calls: Vec<Value> = journal.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let tools: Vec<&str> = calls.iter().filter(|c| c["kind"] == "tool").filter_map(|c| c["tool"].as_str()).collect();
    assert_eq!(tools.first(), Some(&"list_repositories"), "{tools:?}");
    assert_eq!(tools.iter().filter(|t| **t == "test_pr").count(), 2, "{tools:?}");
    assert!(tools.contains(&"start_cycle") && tools.contains(&"cycle_status"), "{tools:?}");
    assert!(calls.iter().all(|c| c["client"] == "demo-chat" && c["ok"] != false), "{journal}");
    assert!(!home.join("connector/serving.json").exists(), "serve was stopped");
    let log = std::fs::read_to_string(home.join("serve.log")).unwrap();
    assert!(log.contains("the pairing code was entered"), "{log}");
    let driven: Value =
        serde_json::from_slice(&std::fs::read(home.join(format!("cycles/{remote}.json"))).unwrap()).unwrap();
    assert_eq!(driven["driver"], "connector:demo-chat");
    assert_eq!(driven["repository"], "forgeloop-demo/calc");

    let awaited: Value =
        serde_json::from_slice(&std::fs::read(home.join("cycles/add-multiplication.json")).unwrap()).unwrap();
    assert_eq!(awaited["brief_confirmation"]["via"], "demo");
    assert_eq!(awaited["brief_confirmation"]["by"], "system", "the demo's stand-in is not a human");
    let journal = forgeloop::store::journal::verify(&home.join("cycles/add-multiplication.d/events.jsonl")).unwrap();
    let confirmed = journal.events.iter().find(|e| e.kind == "brief_confirmed").unwrap();
    assert_eq!(confirmed.actor, forgeloop::domain::state::Actor::System);
    assert_eq!(confirmed.data["via"], "demo");

    // The dependency cycle: the package index on 127.0.0.1 was refused by policy (NEEDS_NETWORK,
    // no iteration, nothing proposed, nothing allowed with a key); the stand-in for the person
    // wrote its exact entry into the sandbox's config.toml by hand; then it passed with
    // checklib cloned in its setup through the egress proxy.
    let journal = forgeloop::store::journal::verify(&home.join("cycles/add-average-with-deps.d/events.jsonl")).unwrap();
    let kinds: Vec<&str> = journal.events.iter().map(|e| e.kind.as_str()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap_or_else(|| panic!("{kind}: {kinds:?}"));
    assert!(at("run_needs_network") < at("run_finished"), "{kinds:?}");
    assert!(!kinds.contains(&"network_allowed"), "a non-public address was allowed through forgeloop: {kinds:?}");
    let needed = journal.events.iter().find(|e| e.kind == "run_needs_network").unwrap();
    assert!(needed.data["allow"].as_array().is_none_or(|a| a.is_empty()), "proposed: {:?}", needed.data);
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(config.contains("# Written by hand") && config.contains("allow = [\"127.0.0.1:"), "{config}");
    let passed: Value =
        serde_json::from_slice(&std::fs::read(home.join("cycles/add-average-with-deps.json")).unwrap()).unwrap();
    let log = passed["report"]["network_log"].as_array().unwrap();
    assert!(log.iter().any(|e| e["allowed"] == true && e["phase"] == "setup"), "{log:?}");
    let text = std::fs::read_to_string(
        home.join("cycles/add-average-with-deps.d").join(passed["history"][0]["log_path"].as_str().unwrap()),
    )
    .unwrap();
    assert!(text.contains("ok   calc avg 2 3 = 2 (one of 2|3)"), "{text}");

    // The failing runs' comments carry the failure, the passing ones say so.
    let fixed: Value =
        serde_json::from_slice(&std::fs::read(home.join("cycles/add-subtraction.json")).unwrap()).unwrap();
    assert!(fixed["report"]["comment_markdown"].as_str().unwrap().contains("TEST_PASSED"));
    let capped: Value = serde_json::from_slice(&std::fs::read(home.join("cycles/add-power.json")).unwrap()).unwrap();
    assert!(capped["report"]["comment_markdown"].as_str().unwrap().contains("FAIL calc pow 2 3"));
    // The CI cycle's failure came from the CI's job log: the failing step and its output.
    let journal = forgeloop::store::journal::verify(&home.join("cycles/add-maximum-on-ci.d/events.jsonl")).unwrap();
    assert!(journal.events.iter().any(|e| e.kind == "run_finished" && e.data["executor"] == "github-checks"));
    let first_report =
        home.join("cycles/add-maximum-on-ci.d").join(
            serde_json::from_slice::<Value>(&std::fs::read(home.join("cycles/add-maximum-on-ci.json")).unwrap())
                .unwrap()["history"][0]["report_path"]
                .as_str()
                .unwrap(),
        );
    let first: Value = serde_json::from_slice(&std::fs::read(first_report).unwrap()).unwrap();
    let failure = first["failure_output"].as_str().unwrap();
    assert!(failure.contains("Failing step: Run sh test.sh") && failure.contains("FAIL calc max"), "{failure}");
    assert_eq!(first["checks"][0]["app"], "github-actions");

    // The same directory can hold the demo again: the previous sandbox is replaced.
    let (code, summary, stderr) = env.run(&["demo", "--headless", "--home", &home_arg]);
    assert_eq!(code, 0, "{summary:#}\n{stderr}");
    assert_summary_ok(&summary);
    assert_nothing_left_running();
}

#[test]
fn refuses_a_foreign_home_a_bad_speed_and_a_missing_terminal() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let mine = env.path("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep me").unwrap();
    let (code, doc, _) = env.run(&["demo", "--headless", "--home", &mine.display().to_string()]);
    assert_eq!(code, 2);
    assert_eq!(doc["status"], "REFUSED");
    assert!(doc["error"].as_str().unwrap().contains("not a previous demo sandbox"), "{doc}");
    assert_eq!(entries(&mine), ["notes.txt"]);

    let (code, doc, _) = env.run(&["demo", "--headless", "--speed", "0"]);
    assert_eq!(code, 2);
    assert!(doc["error"].as_str().unwrap().contains("--speed"), "{doc}");

    // Without a terminal the control room cannot open; the error says what to run instead.
    let (code, doc, _) = env.run(&["demo"]);
    assert_eq!(code, 2);
    assert!(doc["error"].as_str().unwrap().contains("--headless"), "{doc}");
    assert!(entries(&env.path("tmp")).is_empty(), "a refused demo creates no sandbox");
}

/// The emulator serves git through `git http-backend`: without git on PATH the demo refuses at
/// once, saying so, and starts nothing.
#[test]
fn without_git_on_path_the_demo_says_it_needs_git() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let empty = env.path("no-git-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out, stderr) = env.run_env(&["demo", "--headless"], &[("PATH", &empty)]);
    assert_eq!(code, 2, "{out}\n{stderr}");
    assert_eq!(out["status"], "REFUSED", "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("needs `git` on PATH") && error.contains("http-backend"), "{error}");
    let tmp: Vec<_> = std::fs::read_dir(env.path("tmp")).unwrap().collect();
    assert!(tmp.is_empty(), "no sandbox was made: {tmp:?}");
}

/// The demo's `add-subtraction` fix, as `forgeloop diff --since-last` shows it afterwards: the
/// one line WebGPT changed after the failing run, from the mirror alone (the demo's emulator
/// is gone by then).
#[test]
fn the_demos_fix_is_its_since_last_diff() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let home = env.path("sandbox");
    let home_arg = home.display().to_string();
    let (code, summary, stderr) = env.run(&["demo", "--headless", "--home", &home_arg]);
    assert_eq!(code, 0, "{summary:#}\n{stderr}");
    let out =
        env.command(&["--home", &home_arg, "diff", "--state", "add-subtraction", "--since-last"]).output().unwrap();
    let diff = String::from_utf8_lossy(&out.stdout);
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{diff}\n{note}");
    let files = forgeloop::domain::diff::index(diff.lines());
    assert_eq!(files.len(), 1, "only calc.sh changed: {diff}");
    assert_eq!((files[0].path.as_str(), files[0].additions, files[0].deletions), ("calc.sh", 1, 1));
    assert!(diff.contains("-    echo $((a + b))\n+    echo $((a - b))\n"), "{diff}");
    assert!(note.contains("the change from run 1") && note.contains("to run 2"), "{note}");
    assert_nothing_left_running();
}
