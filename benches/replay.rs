//! Whether issue 57's checks flag honest work (Deliver item 8): real commits of real projects,
//! each replayed as a PR against its first parent, through the real `forgeloop` binary (release
//! build) and the GitHub emulator (in-process, real HTTP on 127.0.0.1).
//!
//! The plan (`benches/replay-plan.json`) names the projects, which of their commits to take and
//! the commands their tests run with. For each commit C with parent P, P is pushed to the
//! emulator repository's `main` and C to a branch of its own, a PR is opened and a new cycle
//! runs `forge --pr` on it, as a person's would: the repository's base layer is warmed by its
//! first run (and again when the base moved more than `base_max_behind`), the baseline comes
//! from that warming or from the base run on demand, and a pass is followed by the tripwire.
//! Commits are replayed oldest first, so `main` moves forward as it did.
//!
//! What counts: every completed run (a report), every pass by exit code (`TEST_PASSED`), and,
//! of the passes, those held by each of the new checks — `evidence` (the runners' own results
//! against the base's), `baseline` (there was none), `tripwire`, `held_changed` and `gaming` —
//! with the words each said. What integrity's older test-file rules say (removed assertions,
//! protected paths) is not this measurement and is listed apart. A failing run whose output
//! says the machine lacks what the commit needs (`could_not_run` in the plan: a dependency
//! missing from the offline registry) could not run; other failures are failures at the merge.
//!
//! Every commit's outcome is written as it ends to `$FORGELOOP_REPLAY_OUT/<project>.jsonl`, and
//! a flagged commit's cycle directory (its logs, the base run's and the tripwire's) and the
//! baselines are copied to `$FORGELOOP_REPLAY_OUT/flagged/<project>-<sha12>/`. The table is
//! printed at the end. Run: `cargo bench --bench replay` or `scripts/replay.sh`. Knobs:
//! FORGELOOP_REPLAY_PLAN (default benches/replay-plan.json), FORGELOOP_REPLAY_PROJECTS (names,
//! comma-separated; default all, one after another), FORGELOOP_REPLAY_LIMIT (at most this many
//! commits per project, the newest of the selection), FORGELOOP_REPLAY_ONLY (of the selection,
//! only the commits whose ids begin so, comma-separated: to replay the flagged ones again after
//! a change), FORGELOOP_REPLAY_MIRRORS (where
//! `<owner>+<name>/repo` git directories are; default /work/.mirror), FORGELOOP_REPLAY_OUT
//! (default target/bench-logs/replay). A project's `prepare` commands run on this machine first
//! (what its tests read through `read_paths`: tape for deepmerge); wcwidth's pytest is the venv
//! `.ci/run` makes (`target/pytest-venv`; its prepare adds pytest-cov, which its `addopts` need).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use forgeloop::domain::report::{Report, TestStatus};
use forgeloop::domain::test_results::{Finding, Tripwire};
use serde::Deserialize;
use serde_json::{Value, json};
use support::world::World;

type Result<T> = std::result::Result<T, String>;

/// The new checks of issue 57, in the order the table shows them.
const CHECKS: [&str; 5] = ["evidence", "baseline", "tripwire", "held_changed", "gaming"];
/// The emulator's owner of every replayed repository.
const OWNER: &str = "replay";
/// What every project's config holds beside its own lines: the cycle layers are removed by the
/// bench after each commit, so this only bounds a run that leaves more.
const CONFIG_BASE: &str = "[cache]\nmax_gb = 20\n";

#[derive(Deserialize)]
struct Plan {
    projects: Vec<Project>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Project {
    name: String,
    repository: String,
    language: String,
    #[serde(default)]
    why: String,
    #[serde(default)]
    last: Option<usize>,
    #[serde(default)]
    tests_contain: Option<TestsContain>,
    commands: Value,
    #[serde(default)]
    config: String,
    #[serde(default)]
    could_not_run: Vec<String>,
    #[serde(default)]
    prepare: Vec<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestsContain {
    path: String,
    text: String,
}

/// One commit to replay.
struct Commit {
    sha: String,
    parent: Option<String>,
    subject: String,
}

/// What one replay came to.
#[derive(Default)]
struct Replayed {
    /// A report was written (any verdict).
    completed: bool,
    /// `TEST_PASSED`.
    passed: bool,
    /// A failure whose output says the machine lacks what the commit needs.
    could_not_run: bool,
    /// The new checks that held the pass, each with its words.
    flags: Vec<(&'static str, String)>,
    /// A pass held by integrity's older rules only (not measured here).
    older: Option<String>,
    /// The tripwire's word after a pass: `faithful`, `not_run`, `tampered`, or `none`.
    tripwire: &'static str,
    /// Where the baseline came from: `warming`, `on_demand`, or `none`.
    baseline: &'static str,
    /// The JSON line kept for this commit.
    record: Value,
}

/// A project's counts.
#[derive(Default)]
struct Tally {
    commits: usize,
    no_parent: usize,
    completed: usize,
    could_not_run: usize,
    passed: usize,
    failed: usize,
    not_completed: usize,
    flagged: BTreeMap<&'static str, usize>,
    flagged_any: usize,
    older: usize,
    tripwire: BTreeMap<&'static str, usize>,
    baseline: BTreeMap<&'static str, usize>,
    seconds: f64,
    listed: Vec<String>,
}

fn knob(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn progress(what: &str) {
    eprintln!("[replay] {what}");
}

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("git {args:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The project's commits to replay, oldest first: its first-parent non-merge commits from
/// `HEAD`, those whose tests contain the plan's text when it names one, the newest `last`.
fn commits(dir: &Path, project: &Project, limit: Option<usize>) -> Result<Vec<Commit>> {
    let listed = git(dir, &["rev-list", "--first-parent", "--no-merges", "HEAD"])?;
    let want = match (project.last, limit) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut out = Vec::new();
    for sha in listed.lines().map(str::trim).filter(|s| !s.is_empty()) {
        if want.is_some_and(|n| out.len() >= n) {
            break;
        }
        if let Some(contain) = &project.tests_contain {
            let found = Command::new("git")
                .arg("-C")
                .arg(dir)
                .args(["grep", "-q", "-F", &contain.text, sha, "--", &contain.path])
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .map_err(|e| e.to_string())?;
            if !found.success() {
                continue;
            }
        }
        let meta = git(dir, &["log", "-1", "--format=%P%x00%s", sha])?;
        let (parents, subject) = meta.trim_end().split_once('\0').unwrap_or((meta.trim_end(), ""));
        out.push(Commit {
            sha: sha.to_owned(),
            parent: parents.split_whitespace().next().map(str::to_owned),
            subject: subject.to_owned(),
        });
    }
    out.reverse();
    Ok(out)
}

/// The plan's commands with `{workspace}` made this checkout.
fn commands_text(project: &Project) -> Result<String> {
    let text = serde_json::to_string_pretty(&project.commands).map_err(|e| e.to_string())?;
    Ok(text.replace("{workspace}", env!("CARGO_MANIFEST_DIR")))
}

/// The plan's config with each `{addr:HOST:PORT}` made the `IP:PORT` HOST resolves to here.
fn config_text(project: &Project) -> Result<String> {
    let mut text = project.config.clone();
    while let Some(at) = text.find("{addr:") {
        let end = text[at..].find('}').map(|e| at + e).ok_or(format!("{}: an unclosed {{addr:", project.name))?;
        let host_port = &text[at + 6..end];
        let addr = std::net::ToSocketAddrs::to_socket_addrs(host_port)
            .map_err(|e| format!("{}: {host_port} does not resolve: {e}", project.name))?
            .find(std::net::SocketAddr::is_ipv4)
            .ok_or(format!("{}: {host_port} has no IPv4 address", project.name))?;
        text.replace_range(at..=end, &addr.to_string());
    }
    Ok(text)
}

/// A new cycle `state`, past its first `sent`; errors instead of panicking, so one bad
/// commit does not end a run of hours.
fn start_cycle(world: &World, state: &str) -> Result<()> {
    let run = world.sb.start(state, &["--max-iterations", "50"]);
    if run.code != 0 {
        return Err(format!("forge --request: {}\n{}", run.stdout, run.stderr));
    }
    let sent = world.sb.run(&["sent", "--state", state]);
    if sent.code != 0 {
        return Err(format!("sent: {}\n{}", sent.stdout, sent.stderr));
    }
    Ok(())
}

/// The first `max` characters of `text`, on a character boundary.
fn head(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The last `max` characters of `text`.
fn tail(text: &str, max: usize) -> String {
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(max)).collect()
}

/// What held a pass, check by check: the words the report gives for each (issue 57's checks
/// only; integrity's older rules are the caller's).
fn flags(report: &Report) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(evidence) = report.evidence.as_ref().filter(|e| !e.stands) {
        let holding = |f: &&Finding| f.holds() && **f != Finding::NoBaseline;
        if evidence.findings.iter().any(|f| holding(&f)) {
            out.push(("evidence", evidence.summary.clone()));
        }
        if evidence.findings.contains(&Finding::NoBaseline) {
            let why = report.baseline.as_ref().and_then(|b| b.none.clone()).unwrap_or_else(|| evidence.summary.clone());
            out.push(("baseline", why));
        }
    }
    if let Some(Tripwire::Tampered(why)) = &report.tripwire {
        out.push(("tripwire", format!("the test framework does not report failures faithfully: {why}")));
    }
    if !report.held_changed.is_empty() {
        out.push(("held_changed", format!("held files changed during the run: {}", report.held_changed.join(", "))));
    }
    if let Some(words) = report.integrity.as_ref().and_then(|i| i.gaming_words()) {
        out.push(("gaming", words));
    }
    out
}

/// Copies a flagged commit's cycle directory and the repository's baselines for a person to read.
fn keep_artifacts(world: &World, project: &Project, state: &str, sha: &str, out: &Path) {
    let dest = out.join("flagged").join(format!("{}-{}", project.name, &sha[..12]));
    let _ = std::fs::create_dir_all(&dest);
    let cycle_dir = world.path(&format!("{}.d", state.trim_end_matches(".json")));
    let baselines = world.sb.home().join("baselines").join(OWNER).join(project.name.to_ascii_lowercase());
    for from in [cycle_dir, baselines] {
        let copied = Command::new("cp").arg("-r").arg(&from).arg(&dest).status();
        if !copied.is_ok_and(|s| s.success()) {
            progress(&format!("could not keep {}", from.display()));
        }
    }
}

/// Replays one commit: pushes its parent to `main` and itself to a branch, opens a PR and runs
/// it in a new cycle.
#[allow(clippy::too_many_arguments)]
fn replay(
    world: &World,
    project: &Project,
    source: &Path,
    emu_dir: &Path,
    repo: &github_emulator::RepoHandle,
    commands: &Path,
    commit: &Commit,
    parent: &str,
    index: usize,
    out: &Path,
) -> Result<Replayed> {
    let sha12 = &commit.sha[..12];
    let branch = format!("c-{sha12}");
    let dest = emu_dir.display().to_string();
    git(
        source,
        &[
            "push",
            "--force",
            "--quiet",
            &dest,
            &format!("{parent}:refs/heads/main"),
            &format!("{}:refs/heads/{branch}", commit.sha),
        ],
    )?;
    let number = world
        .rt
        .block_on(world.emu.open_pr(repo, &branch, "main", &commit.subject))
        .map_err(|e| format!("open_pr: {e:?}"))?;
    let state = format!("{}-{index:03}.json", project.name);
    start_cycle(world, &state)?;
    let pr = format!("{OWNER}/{}#{number}", project.name);
    let started = Instant::now();
    let run = world.run(&["forge", "--pr", &pr, "--state", &state, "--commands-json", &commands.display().to_string()]);
    let seconds = started.elapsed().as_secs_f64();
    // What this cycle's layer holds is no other commit's: it goes (the base layer stays).
    let layer =
        world.sb.home().join("caches").join(OWNER).join(project.name.to_ascii_lowercase()).join(format!("pr-{number}"));
    let _ = std::fs::remove_dir_all(&layer);

    let mut replayed = Replayed { tripwire: "none", baseline: "none", ..Replayed::default() };
    let mut record = json!({
        "project": project.name,
        "index": index,
        "sha": commit.sha,
        "parent": parent,
        "subject": commit.subject,
        "pr": number,
        "seconds": (seconds * 1000.0).round() / 1000.0,
        "exit": run.code,
    });
    let output: Option<Value> = serde_json::from_str(&run.stdout).ok();
    let cycle_status = output.as_ref().and_then(|o| o["status"].as_str()).unwrap_or("").to_owned();
    record["cycle_status"] = json!(cycle_status);
    let report_value = output.as_ref().map(|o| o["report"].clone()).filter(Value::is_object);
    let Some(report_value) = report_value else {
        record["infra"] = json!(format!("{}\n{}", tail(&run.stdout, 2000), tail(&run.stderr, 2000)));
        replayed.record = record;
        return Ok(replayed);
    };
    let report: Report = serde_json::from_value(report_value.clone())
        .map_err(|e| format!("the report does not read ({e}): {}", head(&report_value.to_string(), 2000)))?;
    replayed.completed = true;
    replayed.passed = report.status == TestStatus::Passed;
    record["status"] = json!(report.status.as_str());
    record["exit_codes"] = json!(report.commands.iter().map(|c| c.exit_code).collect::<Vec<_>>());
    record["setup_exit_codes"] = json!(report.setup.iter().map(|c| c.exit_code).collect::<Vec<_>>());
    record["command_seconds"] = json!(report.commands.iter().map(|c| c.duration_seconds).collect::<Vec<_>>());
    let layers = report.environment.as_ref().and_then(|e| e.sandbox.as_ref()).and_then(|s| s.cache_layers.as_ref());
    record["cache_layers"] = serde_json::to_value(layers).unwrap_or(Value::Null);
    if !replayed.passed {
        let failure = report.failure_output.clone().unwrap_or_default();
        replayed.could_not_run = project.could_not_run.iter().any(|w| failure.contains(w.as_str()));
        record["could_not_run"] = json!(replayed.could_not_run);
        record["failure_tail"] = json!(tail(&failure, 1500));
    } else {
        replayed.flags = flags(&report);
        replayed.tripwire = match &report.tripwire {
            Some(Tripwire::Faithful) => "faithful",
            Some(Tripwire::Tampered(_)) => "tampered",
            Some(Tripwire::NotRun(_)) => "not_run",
            None => "none",
        };
        replayed.baseline = match report.baseline.as_ref().and_then(|b| b.source.as_deref()) {
            Some("warming") => "warming",
            Some("on_demand") => "on_demand",
            _ => "none",
        };
        if replayed.flags.is_empty() && cycle_status != "READY_TO_MERGE" {
            replayed.older = Some(report.review_reason().unwrap_or_else(|| format!("cycle status {cycle_status}")));
        }
        record["evidence"] = serde_json::to_value(&report.evidence).unwrap_or(Value::Null);
        record["baseline"] = serde_json::to_value(&report.baseline).unwrap_or(Value::Null);
        record["tripwire"] = serde_json::to_value(&report.tripwire).unwrap_or(Value::Null);
        record["held_changed"] = json!(report.held_changed);
        record["gaming"] = serde_json::to_value(report.integrity.as_ref().map(|i| &i.gaming)).unwrap_or(Value::Null);
        record["flags"] =
            json!(replayed.flags.iter().map(|(c, w)| json!({"check": c, "words": w})).collect::<Vec<_>>());
        record["older_review"] = json!(replayed.older);
        record["review_reason"] = json!(report.review_reason());
        if !replayed.flags.is_empty() {
            keep_artifacts(world, project, &state, &commit.sha, out);
        }
    }
    replayed.record = record;
    Ok(replayed)
}

fn run_project(world: &World, project: &Project, mirrors: &Path, limit: Option<usize>, out: &Path) -> Result<Tally> {
    let (owner, name) =
        project.repository.split_once('/').ok_or(format!("{}: repository is owner/name", project.name))?;
    let source = mirrors.join(format!("{owner}+{name}")).join("repo");
    if !source.exists() {
        return Err(format!("{}: no git directory at {}", project.name, source.display()));
    }
    let mut selected = commits(&source, project, limit)?;
    if let Some(only) = knob("FORGELOOP_REPLAY_ONLY") {
        let only: Vec<&str> = only.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        selected.retain(|c| only.iter().any(|o| c.sha.starts_with(o)));
    }
    for argv in &project.prepare {
        let argv: Vec<String> = argv.iter().map(|a| a.replace("{workspace}", env!("CARGO_MANIFEST_DIR"))).collect();
        let (program, args) = argv.split_first().ok_or(format!("{}: an empty prepare command", project.name))?;
        progress(&format!("{}: preparing: {}", project.name, argv.join(" ")));
        let status = Command::new(program).args(args).status().map_err(|e| format!("{program}: {e}"))?;
        if !status.success() {
            return Err(format!("{}: {} ended with {status}", project.name, argv.join(" ")));
        }
    }
    progress(&format!("{} ({}): {} commits, {}", project.name, project.language, selected.len(), project.why));
    let config = config_text(project)?;
    world.config(&format!("{CONFIG_BASE}{config}"));
    let commands = world.path(&format!("{}-commands.json", project.name));
    std::fs::write(&commands, commands_text(project)?).map_err(|e| e.to_string())?;
    let repo = world.rt.block_on(world.emu.create_repo(OWNER, &project.name, false)).map_err(|e| format!("{e:?}"))?;
    let emu_dir = world.emu.repo_dir(&repo).map_err(|e| format!("{e:?}"))?;
    let jsonl = out.join(format!("{}.jsonl", project.name));
    let mut lines = std::fs::File::create(&jsonl).map_err(|e| format!("{}: {e}", jsonl.display()))?;

    let mut tally = Tally { commits: selected.len(), ..Tally::default() };
    let started = Instant::now();
    for (i, commit) in selected.iter().enumerate() {
        let sha12 = &commit.sha[..12];
        let Some(parent) = &commit.parent else {
            tally.no_parent += 1;
            progress(&format!(
                "{} {}/{} {sha12}: no parent (the root commit), not replayed",
                project.name,
                i + 1,
                selected.len()
            ));
            let _ = writeln!(lines, "{}", json!({"project": project.name, "sha": commit.sha, "no_parent": true}));
            continue;
        };
        let replayed = match replay(world, project, &source, &emu_dir, &repo, &commands, commit, parent, i + 1, out) {
            Ok(replayed) => replayed,
            Err(e) => Replayed {
                tripwire: "none",
                baseline: "none",
                record: json!({"project": project.name, "sha": commit.sha, "subject": commit.subject, "error": e}),
                ..Replayed::default()
            },
        };
        let _ = writeln!(lines, "{}", replayed.record);
        let _ = lines.flush();
        let said = match (replayed.completed, replayed.passed, replayed.could_not_run) {
            (false, _, _) => format!(
                "NOT COMPLETED: {}",
                head(replayed.record["error"].as_str().or(replayed.record["infra"].as_str()).unwrap_or("?"), 300)
            ),
            (true, false, true) => "could not run (the machine lacks what it needs)".to_owned(),
            (true, false, false) => format!(
                "{} (exit codes {})",
                replayed.record["status"].as_str().unwrap_or("?"),
                replayed.record["exit_codes"]
            ),
            (true, true, _) => {
                let evidence = replayed.record["evidence"]["summary"].as_str().unwrap_or("no evidence judged");
                let flags: Vec<String> = replayed.flags.iter().map(|(c, w)| format!("FLAG {c}: {w}")).collect();
                let older = replayed.older.as_ref().map(|o| format!(" [older rules: {o}]")).unwrap_or_default();
                format!(
                    "passed, {}; tripwire {}, baseline {}; {evidence}{older}{}",
                    replayed.record["cycle_status"].as_str().unwrap_or("?"),
                    replayed.tripwire,
                    replayed.baseline,
                    if flags.is_empty() { String::new() } else { format!(" — {}", flags.join("; ")) }
                )
            }
        };
        progress(&format!(
            "{} {}/{} {sha12} {:.1} s: {said}",
            project.name,
            i + 1,
            selected.len(),
            replayed.record["seconds"].as_f64().unwrap_or(0.0)
        ));
        if !replayed.completed {
            tally.not_completed += 1;
            continue;
        }
        tally.completed += 1;
        if replayed.could_not_run {
            tally.could_not_run += 1;
        } else if !replayed.passed {
            tally.failed += 1;
        }
        if !replayed.passed {
            continue;
        }
        tally.passed += 1;
        *tally.tripwire.entry(replayed.tripwire).or_default() += 1;
        *tally.baseline.entry(replayed.baseline).or_default() += 1;
        if replayed.older.is_some() {
            tally.older += 1;
        }
        if !replayed.flags.is_empty() {
            tally.flagged_any += 1;
            for check in CHECKS {
                if replayed.flags.iter().any(|(c, _)| *c == check) {
                    *tally.flagged.entry(check).or_default() += 1;
                }
            }
            let words: Vec<String> = replayed.flags.iter().map(|(c, w)| format!("**{c}**: {w}")).collect();
            tally.listed.push(format!("- {} `{sha12}` {}: {}", project.name, commit.subject, words.join("; ")));
        }
    }
    tally.seconds = started.elapsed().as_secs_f64();
    Ok(tally)
}

fn counts(map: &BTreeMap<&'static str, usize>) -> String {
    let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if parts.is_empty() { "-".to_owned() } else { parts.join(", ") }
}

/// One row of the table: `what`, its commits column, its counts and its wall time.
fn table_row(what: &str, commits: &str, t: &Tally, wall: f64) {
    let rate =
        if t.passed > 0 { format!("{:.1}%", 100.0 * t.flagged_any as f64 / t.passed as f64) } else { "-".into() };
    let flagged = |check: &str| t.flagged.get(check).copied().unwrap_or(0);
    println!(
        "| {what} | {commits} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {rate} | {wall:.0} s |",
        t.completed,
        t.could_not_run,
        t.passed,
        flagged("evidence"),
        flagged("baseline"),
        flagged("tripwire"),
        flagged("held_changed"),
        flagged("gaming"),
        t.flagged_any,
    );
}

fn print_table(done: &[(&Project, Tally)], wall: f64) {
    println!();
    println!(
        "| project | commits | completed | could not run | passed (exit code) | evidence | baseline | tripwire | held_changed | gaming | flagged (any) | flag rate of passes | wall |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut total = Tally::default();
    for (project, t) in done {
        let commits =
            if t.no_parent > 0 { format!("{} ({} root)", t.commits, t.no_parent) } else { t.commits.to_string() };
        table_row(&format!("{} ({})", project.repository, project.language), &commits, t, t.seconds);
        total.commits += t.commits;
        total.completed += t.completed;
        total.could_not_run += t.could_not_run;
        total.passed += t.passed;
        total.flagged_any += t.flagged_any;
        for (k, v) in &t.flagged {
            *total.flagged.entry(k).or_default() += v;
        }
    }
    table_row("all", &total.commits.to_string(), &total, wall);
    println!();
    for (project, t) in done {
        println!(
            "{}: {} failed at the merge, {} not completed; passes held by older rules only {}; tripwire after a pass: {}; baseline: {}",
            project.name,
            t.failed,
            t.not_completed,
            t.older,
            counts(&t.tripwire),
            counts(&t.baseline)
        );
    }
    println!();
    println!("Flagged commits:");
    let mut any = false;
    for (_, t) in done {
        for line in &t.listed {
            println!("{line}");
            any = true;
        }
    }
    if !any {
        println!("(none)");
    }
    println!();
    println!("total wall time: {wall:.0} s");
}

fn main() {
    let result = (|| -> Result<()> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let plan_path =
            knob("FORGELOOP_REPLAY_PLAN").map(PathBuf::from).unwrap_or_else(|| root.join("benches/replay-plan.json"));
        let plan: Plan =
            serde_json::from_slice(&std::fs::read(&plan_path).map_err(|e| format!("{}: {e}", plan_path.display()))?)
                .map_err(|e| format!("{}: {e}", plan_path.display()))?;
        let wanted: Option<Vec<String>> =
            knob("FORGELOOP_REPLAY_PROJECTS").map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
        if let Some(wanted) = &wanted
            && let Some(unknown) = wanted.iter().find(|w| !plan.projects.iter().any(|p| &p.name == *w))
        {
            return Err(format!("FORGELOOP_REPLAY_PROJECTS: no project {unknown:?} in {}", plan_path.display()));
        }
        let limit = match knob("FORGELOOP_REPLAY_LIMIT") {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or(format!("FORGELOOP_REPLAY_LIMIT={v:?}: a whole number ≥ 1"))?,
            ),
        };
        let mirrors =
            knob("FORGELOOP_REPLAY_MIRRORS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/work/.mirror"));
        let out =
            knob("FORGELOOP_REPLAY_OUT").map(PathBuf::from).unwrap_or_else(|| root.join("target/bench-logs/replay"));
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let world = World::new();
        let started = Instant::now();
        let mut done = Vec::new();
        for project in &plan.projects {
            if wanted.as_ref().is_some_and(|w| !w.contains(&project.name)) {
                continue;
            }
            let tally = run_project(&world, project, &mirrors, limit, &out)?;
            done.push((project, tally));
        }
        print_table(&done, started.elapsed().as_secs_f64());
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("replay bench failed: {e}");
        std::process::exit(1);
    }
}
