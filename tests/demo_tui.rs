//! `forgeloop demo` in a real terminal (tmux): the cycles appear and progress with no key
//! pressed, the ones awaiting confirmation wait for the person, who confirms them with keys —
//! the connector cycle a chat client started through `forgeloop serve` first, then the relay
//! loop's; each then passes; quitting stops everything (serve too) and removes the temporary
//! sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply
#![cfg(target_os = "linux")]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::tmux::{Tmux, sh_quote};

const LIMIT: Duration = Duration::from_secs(60);

/// Waits until one screen line contains every one of `needles`; returns the screen.
fn wait_for_line(tmux: &Tmux, needles: &[&str]) -> String {
    let start = Instant::now();
    loop {
        let screen = tmux.capture();
        if screen.lines().any(|line| needles.iter().all(|n| line.contains(n))) {
            return screen;
        }
        assert!(start.elapsed() < LIMIT, "no line with {needles:?}; screen:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The sandbox the demo made in our TMPDIR.
fn sandbox_in(tmp: &Path) -> PathBuf {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("forgeloop-demo-")))
        .unwrap_or_else(|| panic!("no demo sandbox in {}", tmp.display()))
}

/// Processes whose working directory is inside `dir` (test commands run in checkouts under
/// the demo's TMPDIR; the emulator's git in the sandbox).
fn processes_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd"))
            && cwd.starts_with(dir)
        {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            out.push(format!("{} {}", entry.file_name().to_string_lossy(), String::from_utf8_lossy(&cmdline)));
        }
    }
    out
}

fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rfind(')').map(|i| stat[i + 1..].trim_start().starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

#[test]
fn the_demo_runs_live_and_the_person_confirms_the_waiting_brief() {
    let dir = tempfile::tempdir().unwrap();
    let (home, tmp) = (dir.path().join("home"), dir.path().join("tmp"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let pid_file = dir.path().join("demo.pid");
    let command = format!(
        "cd / && env -u GH_TOKEN -u GITHUB_TOKEN -u FORGELOOP_HOME -u FORGELOOP_CONFIG -u FORGELOOP_REGISTRY \
         -u FORGELOOP_GITHUB_API -u XDG_CONFIG_HOME -u XDG_STATE_HOME HOME={home} TMPDIR={tmp} \
         sh -c 'echo $$ > {pid}; exec {bin} demo --speed 4'; echo EXIT=$?; sleep 30",
        home = sh_quote(&home.display().to_string()),
        tmp = sh_quote(&tmp.display().to_string()),
        pid = pid_file.display(),
        bin = sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
    );
    let tmux = Tmux::start(&command, 120, 40);

    // No key pressed: the cycles appear and move on by themselves.
    wait_for_line(&tmux, &["✓ READY"]);
    wait_for_line(&tmux, &["■ CAP REACHED", "add-power"]);
    wait_for_line(&tmux, &["⊘ ABORTED", "add-modulo"]);
    wait_for_line(&tmux, &["◆ CONFIRM BRIEF", "add-multiplication"]);
    wait_for_line(&tmux, &["add-maximum-on-ci"]);
    // The chat client paired with serve and started its cycle, named by serve: it waits for
    // the person too, and the header says serve runs.
    wait_for_line(&tmux, &["◆ CONFIRM BRIEF", "calc-", "forgeloop-demo/calc"]);
    // The two review cycles start last; every cycle is listed.
    let screen = wait_for_line(&tmux, &["Cycles 10/10"]);
    assert!(screen.contains("⇄ serving (S)"), "{screen}");

    // The waiting cycles really wait for the person.
    let sandbox = sandbox_in(&tmp);
    let state_path = sandbox.join("cycles/add-multiplication.json");
    let state: Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert_eq!(state["status"], "AWAITING_BRIEF_CONFIRMATION");
    let remote = std::fs::read_dir(sandbox.join("cycles"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("calc-") && n.ends_with(".json"))
        .unwrap();
    let remote_path = sandbox.join("cycles").join(&remote);
    let remote = remote.trim_end_matches(".json").to_owned();
    let state: Value = serde_json::from_slice(&std::fs::read(&remote_path).unwrap()).unwrap();
    assert_eq!(state["status"], "AWAITING_BRIEF_CONFIRMATION");
    assert_eq!(state["driver"], "connector:demo-chat");

    // The person finds the connector cycle (filter to it), reads its brief (it says who drives
    // it) and confirms; the client, waiting on serve, tests its PR, pushes a fix and tests
    // again. Esc clears the filter.
    let hint = tmux.wait_for("c review · y confirm", LIMIT);
    assert!(hint.contains("2 briefs to confirm"), "{hint}");
    tmux.send_keys(&["/"]);
    tmux.send_keys(&["-l", &remote]);
    tmux.send_keys(&["Enter"]);
    let screen = wait_for_line(&tmux, &[&remote, "CONFIRM BRIEF", "─"]);
    assert!(screen.contains("Cycles 1/10"), "{screen}");
    let screen = tmux.wait_for("Driven by          connector:demo-chat", LIMIT);
    assert!(screen.contains("(asked by demo-chat through"), "{screen}");
    tmux.send_keys(&["c"]);
    let dialog = tmux.wait_for("Confirm the delegation brief", LIMIT);
    assert!(dialog.contains(&remote), "{dialog}");
    tmux.send_keys(&["y"]);
    wait_for_line(&tmux, &["✓ READY", &remote]);
    let state: Value = serde_json::from_slice(&std::fs::read(&remote_path).unwrap()).unwrap();
    assert_eq!((state["status"].as_str(), state["iteration"].as_u64()), (Some("READY_TO_MERGE"), Some(2)));
    assert_eq!(state["brief_confirmation"]["via"], "tui");
    assert_eq!(state["brief_confirmation"]["by"], "human");
    tmux.send_keys(&["Escape"]);
    let screen = tmux.wait_for("Cycles 10/10", LIMIT);
    assert!(!screen.contains("2 briefs to confirm"), "{screen}");

    // Then the relay loop's brief sorts first, and the status line says which keys confirm it:
    // go to the top, review, confirm.
    // (`g select` is left out once the brief is the selected row.)
    let hint = tmux.wait_for("add-multiplication: confirm its brief", LIMIT);
    assert!(hint.contains("add-multiplication: confirm its brief —"), "{hint}");
    tmux.send_keys(&["g"]);
    wait_for_line(&tmux, &["add-multiplication", "CONFIRM BRIEF", "─"]);
    tmux.send_keys(&["c"]);
    let dialog = tmux.wait_for("Confirm the delegation brief", LIMIT);
    assert!(dialog.contains("add-multiplication"), "{dialog}");
    tmux.send_keys(&["y"]);
    wait_for_line(&tmux, &["✓ READY", "add-multiplication"]);

    let state: Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert_eq!(state["status"], "READY_TO_MERGE");
    assert_eq!(state["brief_confirmation"]["via"], "tui");
    assert_eq!(state["brief_confirmation"]["by"], "human");
    assert_eq!(state["iteration"], 1);

    // The dependency cycle's setup was refused the team's package index: it waits for the
    // person (NEEDS NET, right after briefs in the list). The index is on 127.0.0.1, not a
    // public address: A proposes nothing and says what to write where; the person writes the
    // entry into the sandbox's config.toml by hand, and the cycle runs again and passes.
    wait_for_line(&tmux, &["⚠ NEEDS NET", "add-average-with-deps"]);
    tmux.send_keys(&["g"]);
    wait_for_line(&tmux, &["add-average-with-deps", "NEEDS NET", "─"]);
    tmux.send_keys(&["A"]);
    let toast = tmux.wait_for("is not public: no key allows it", LIMIT);
    assert!(toast.contains("127.0.0.1:"), "{toast}");
    assert!(!toast.contains("Allow these hosts"), "no dialog offers to add it: {toast}");
    let cycle_path = sandbox.join("cycles/add-average-with-deps.json");
    let state: Value = serde_json::from_slice(&std::fs::read(&cycle_path).unwrap()).unwrap();
    let refused = state["needs_network"]["refused_by_policy"][0].as_str().unwrap().to_owned();
    let entry = refused.rsplit(" → ").next().unwrap().to_owned();
    assert!(entry.starts_with("127.0.0.1:"), "{refused}");
    let config_path = sandbox.join("config.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(!config.contains("[network.repositories."), "A wrote nothing: {config}");
    std::fs::write(
        &config_path,
        format!("{config}\n[network.repositories.\"forgeloop-demo/calc\"]\nallow = [\"{entry}\"]\n"),
    )
    .unwrap();
    wait_for_line(&tmux, &["✓ READY", "add-average-with-deps"]);
    let state: Value =
        serde_json::from_slice(&std::fs::read(sandbox.join("cycles/add-average-with-deps.json")).unwrap()).unwrap();
    assert_eq!((state["iteration"].as_u64(), state["status"].as_str()), (Some(1), Some("READY_TO_MERGE")));

    // What WebGPT changed after add-subtraction's failing run: filter to it, the Diff tab, then
    // "since the last run" shows exactly the fix (design §6.7).
    wait_for_line(&tmux, &["✓ READY", "add-subtraction"]);
    tmux.send_keys(&["/"]);
    tmux.send_keys(&["-l", "add-subtraction"]);
    tmux.send_keys(&["Enter"]);
    tmux.send_keys(&["5"]);
    wait_for_line(&tmux, &["Whole PR at run 2"]);
    // Focus the tab (Tab), then `s`: since the last run.
    tmux.send_keys(&["Tab"]);
    tmux.send_keys(&["s"]);
    wait_for_line(&tmux, &["Since the last run", "1 file +1 −1"]);
    // The title comes first; the lines follow once their window is read from disk.
    let fix_shown = |screen: &str| {
        let lines: Vec<&str> = screen.lines().collect();
        let removed = lines.iter().position(|l| l.contains(" -    echo $((a + b))"));
        let added = lines.iter().position(|l| l.contains(" +    echo $((a - b))"));
        matches!((removed, added), (Some(r), Some(a)) if a == r + 1)
    };
    let start = Instant::now();
    loop {
        let screen = tmux.capture();
        if fix_shown(&screen) {
            assert!(screen.contains("Since the last run") && screen.contains("1 file +1 −1"), "{screen}");
            break;
        }
        assert!(start.elapsed() < LIMIT, "exactly the fix, one line out and one in: {screen}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // Quit: no rerun was started from the control room, so nothing to confirm. serve stops
    // with the demo.
    let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    tmux.send_keys(&["q"]);
    let screen = tmux.wait_for("EXIT=0", LIMIT);
    // A few lines in the person's terminal, not the headless JSON; cycles the quit cut short
    // are said to be stopped, never unreadable.
    assert!(
        screen.contains("forgeloop demo: DEMO_") && screen.contains("cycles ended as their scenario says"),
        "{screen}"
    );
    assert!(screen.contains("--headless` runs it to the end"), "{screen}");
    assert!(!screen.contains("\"cycles\"") && !screen.contains("UNREADABLE"), "{screen}");
    assert!(!pid_alive(pid), "the demo process is still running");
    let left = processes_in(&tmp);
    assert!(left.is_empty(), "still running: {left:?}");
    assert!(!sandbox.exists(), "the temporary sandbox was removed");
    let rest: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert!(rest.is_empty(), "left in TMPDIR: {rest:?}");
}
