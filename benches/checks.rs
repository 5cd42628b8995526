//! What 50 concurrent `github-checks` waits cost (issue 16, "Scale, measured"): 50
//! `forgeloop forge --pr … --commands-json ci.json` processes of the release binary wait for a
//! `test` check run on 50 PR heads of the GitHub emulator (in-process, real HTTP on 127.0.0.1),
//! with the default poll settings (`[checks] poll_min_s` 5 s, `poll_max_s` 60 s; no config).
//!
//! After a warm-up, over a measurement window, it measures: API requests per minute (all, and
//! to the check-runs endpoint) and how many were `304 Not Modified` (an `If-None-Match` hit,
//! which GitHub does not count against the rate limit); the CPU seconds the 50 processes used
//! (`utime + stime` from `/proc/PID/stat`) and that as a share of one core; their memory
//! (`VmRSS`, and `RssAnon`, the part no other process shares, from `/proc/PID/status`). Then it
//! completes the checks (half `success`, half `failure` with an output title and summary),
//! waits for every process and checks every verdict: `READY_TO_MERGE` for a pass,
//! `AWAITING_WEBGPT_FIX` with that PR's failure summary in the handoff for a failure. A wrong
//! verdict, a process that exits early, or one that never decides makes the bench fail
//! (non-zero exit); every child is killed on any failure (and by `PR_SET_PDEATHSIG` if the
//! bench itself is killed).
//!
//! The warm-up (default 30 s) leaves out what each wait pays once at its start: 50 release
//! binaries started at once on a small machine, their read of the PR, and the first check-runs
//! reads, close together (at 0, 5 and 15 s: the pause starts at `poll_min_s` and doubles while
//! nothing changes). The window then starts while the back-off still ramps up (reads at ~35 s
//! and ~75 s, then every 60 s), which is part of every wait; the per-minute rows show when it
//! settles at one read per wait per minute.
//!
//! Run: `cargo bench --bench checks` (about 30 s + the window + up to 60 s for the verdicts),
//! or `scripts/bench.sh checks`. Knobs: FORGELOOP_BENCH_CHECKS_SECS (window, default 180),
//! FORGELOOP_BENCH_CHECKS_WARMUP_SECS (default 30), FORGELOOP_BENCH_CHECKS_PRS (default 50, an
//! even number); FORGELOOP_BENCH_DUMP=FILE also writes the numbers to FILE as JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "../tests/support/mod.rs"]
mod support;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::thread::sleep;
use std::time::{Duration, Instant};

use github_emulator::{CheckOutput, CheckRun, LoggedRequest};
use serde_json::{Value, json};
use support::world::{CALC_FIXED, World};

const CI_PROFILE: &str = r#"{"executor": "github-checks", "checks": ["test"]}"#;
/// The app of the published check runs: not GitHub Actions, so a failure's text is the check
/// run's output (no job log to fetch).
const APP: &str = "bench-ci";
/// How long the processes get to decide once the checks completed: a wait reads again within
/// `poll_max_s` (60 s by default), plus room for a loaded machine.
const DECIDE_WITHIN: Duration = Duration::from_secs(180);

fn knob(name: &str, default: u64, min: u64) -> Result<u64, String> {
    let Some(raw) = std::env::var_os(name) else { return Ok(default) };
    let text = raw.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("{name}={text:?}: a whole number of at least {min} (default {default})")),
    }
}

fn progress(what: &str) {
    eprintln!("[checks bench] {what}");
}

/// The spawned waits; dropping it kills and reaps every one still running, so no failure
/// (an error, a panic) leaves a process behind.
struct Waits {
    children: Vec<Child>,
    exited: Vec<Option<(ExitStatus, Duration)>>,
}

impl Waits {
    fn pids(&self) -> Vec<i32> {
        self.children.iter().map(|c| c.id() as i32).collect()
    }

    /// Records the exits so far (with `since`'s elapsed time); how many are still running.
    fn reap(&mut self, since: Instant) -> Result<usize, String> {
        for (child, exited) in self.children.iter_mut().zip(self.exited.iter_mut()) {
            if exited.is_none()
                && let Some(status) = child.try_wait().map_err(|e| format!("waiting for a child: {e}"))?
            {
                *exited = Some((status, since.elapsed()));
            }
        }
        Ok(self.exited.iter().filter(|e| e.is_none()).count())
    }
}

impl Drop for Waits {
    fn drop(&mut self) {
        for (child, exited) in self.children.iter_mut().zip(&self.exited) {
            if exited.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// `utime + stime` of `pid` in clock ticks (all its threads), from `/proc/PID/stat`.
fn cpu_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// A `/proc/PID/status` field (`VmRSS`, `VmHWM`, `RssAnon` in KiB; `Threads`).
fn status_field(pid: i32, name: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))?.split_whitespace().next()?.parse().ok()
}

/// Processes whose parent is one of `pids` (their CPU would not be in the parents' figures).
fn children_of(pids: &[i32]) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid).is_some_and(|ppid| pids.contains(&ppid)))
        .count()
}

fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

fn median(values: &[u64]) -> u64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn is_check_runs(r: &LoggedRequest) -> bool {
    r.path.ends_with("/check-runs")
}

/// Counts over a slice of the request log.
#[derive(Default)]
struct Counts {
    total: usize,
    not_modified: usize,
    check_runs: usize,
    check_runs_not_modified: usize,
}

fn count(requests: &[LoggedRequest]) -> Counts {
    let mut c = Counts::default();
    for r in requests {
        c.total += 1;
        let nm = r.status == 304;
        c.not_modified += usize::from(nm);
        if is_check_runs(r) {
            c.check_runs += 1;
            c.check_runs_not_modified += usize::from(nm);
        }
    }
    c
}

fn per_min(n: usize, secs: f64) -> f64 {
    n as f64 * 60.0 / secs
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 }
}

fn counts_json(c: &Counts, secs: f64) -> Value {
    json!({
        "seconds": secs,
        "total": c.total,
        "total_per_min": per_min(c.total, secs),
        "not_modified": c.not_modified,
        "counted_per_min": per_min(c.total - c.not_modified, secs),
        "check_runs": c.check_runs,
        "check_runs_per_min": per_min(c.check_runs, secs),
        "check_runs_not_modified": c.check_runs_not_modified,
        "check_runs_not_modified_percent": percent(c.check_runs_not_modified, c.check_runs),
    })
}

/// Sleeps until `until`, checking every second that no wait has exited.
fn watch_until(waits: &mut Waits, start: Instant, until: Instant, out_dir: &Path) -> Result<(), String> {
    while Instant::now() < until {
        sleep(until.saturating_duration_since(Instant::now()).min(Duration::from_secs(1)));
        let running = waits.reap(start)?;
        if running < waits.children.len() {
            let i = waits.exited.iter().position(Option::is_some).unwrap_or_default();
            let out = std::fs::read_to_string(out_dir.join(format!("{i:02}.out"))).unwrap_or_default();
            let err = std::fs::read_to_string(out_dir.join(format!("{i:02}.err"))).unwrap_or_default();
            return Err(format!(
                "wait {i} exited before its check completed ({:?}):\nstdout: {out}\nstderr: {err}",
                waits.exited[i]
            ));
        }
    }
    Ok(())
}

fn run() -> Result<Value, String> {
    let window_secs = knob("FORGELOOP_BENCH_CHECKS_SECS", 180, 1)?;
    let warmup_secs = knob("FORGELOOP_BENCH_CHECKS_WARMUP_SECS", 30, 0)?;
    let prs = knob("FORGELOOP_BENCH_CHECKS_PRS", 50, 2)? as usize;
    if !prs.is_multiple_of(2) {
        return Err(format!("FORGELOOP_BENCH_CHECKS_PRS={prs}: an even number (half pass, half fail)"));
    }
    let tck = clock_ticks_per_second();

    let w = World::new();
    std::fs::write(w.path("ci.json"), CI_PROFILE).map_err(|e| format!("ci.json: {e}"))?;
    let out_dir = w.path("out");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let setup = Instant::now();
    let repo = w.project("acme", "widget", false);
    let mut pulls = Vec::with_capacity(prs);
    for i in 0..prs {
        let n = w.pr(&repo, &format!("change-{i:02}"), CALC_FIXED);
        let head = w.emu.pr_head(&repo, n).ok_or_else(|| format!("PR {n} has no head"))?;
        w.cycle(&format!("pr-{i:02}.json"), &[]);
        let run = CheckRun {
            name: "test".into(),
            status: "in_progress".into(),
            app: Some(APP.into()),
            ..CheckRun::default()
        };
        let id = w.emu.publish_check_run(&head, run).map_err(|e| format!("publishing a check run: {e}"))?;
        pulls.push((n, head, id));
    }
    let mut heads: Vec<&str> = pulls.iter().map(|(_, head, _)| head.as_str()).collect();
    heads.sort_unstable();
    heads.dedup();
    if heads.len() != prs {
        return Err("two PRs share a head commit; their check runs would be the same".into());
    }
    progress(&format!(
        "{prs} PRs, {prs} cycles and a `test` check run in progress on every head in {:.1?}",
        setup.elapsed()
    ));

    // The waits, with the default poll settings: XDG_CONFIG_HOME has no forgeloop config.
    if w.path("xdg-config/forgeloop").exists() {
        return Err("a forgeloop config exists in the bench's XDG_CONFIG_HOME".into());
    }
    let log_start = w.emu.requests().len();
    let mut waits = Waits { children: Vec::with_capacity(prs), exited: vec![None; prs] };
    let spawned = Instant::now();
    for (i, (n, _, _)) in pulls.iter().enumerate() {
        let pr = format!("acme/widget#{n}");
        let state = format!("pr-{i:02}.json");
        let mut cmd = w.command(&["forge", "--pr", &pr, "--state", &state, "--commands-json", "ci.json"]);
        let stdout = File::create(out_dir.join(format!("{i:02}.out"))).map_err(|e| format!("stdout file: {e}"))?;
        let stderr = File::create(out_dir.join(format!("{i:02}.err"))).map_err(|e| format!("stderr file: {e}"))?;
        cmd.stdout(stdout).stderr(stderr);
        // SAFETY: prctl is async-signal-safe; the child dies with this (main) thread, so even a
        // killed bench leaves no process behind.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        waits.children.push(cmd.spawn().map_err(|e| format!("spawning forgeloop: {e}"))?);
    }
    progress(&format!("spawned {prs} waits in {:.1?}; warming up for {warmup_secs} s", spawned.elapsed()));

    // Warm-up: every wait must be polling its head by its end.
    let window_start_at = spawned + Duration::from_secs(warmup_secs);
    watch_until(&mut waits, spawned, window_start_at, &out_dir)?;
    let pids = waits.pids();
    let cpu_start: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p).unwrap_or_default()).collect();
    let window_started = Instant::now();
    let warmup_log = w.emu.requests();
    let window_from = warmup_log.len();
    let silent: Vec<usize> = (0..prs)
        .filter(|&i| {
            let head = &pulls[i].1;
            !warmup_log[log_start..].iter().any(|r| is_check_runs(r) && r.path.contains(head.as_str()))
        })
        .collect();
    if !silent.is_empty() && warmup_secs > 0 {
        return Err(format!("after the warm-up, waits {silent:?} had not read their check runs"));
    }
    progress(&format!("measuring for {window_secs} s"));

    // The window, with a mark in the request log at every minute.
    let window = Duration::from_secs(window_secs);
    let mut marks = vec![(0.0, window_from)];
    let mut minute = 1;
    loop {
        let next = Duration::from_secs(60 * minute).min(window);
        watch_until(&mut waits, spawned, window_started + next, &out_dir)?;
        marks.push((next.as_secs_f64(), w.emu.requests().len()));
        if next >= window {
            break;
        }
        minute += 1;
    }
    let cpu_end: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p).unwrap_or_default()).collect();
    let window_real = window_started.elapsed().as_secs_f64();
    let rss: Vec<u64> = pids.iter().map(|&p| status_field(p, "VmRSS").unwrap_or_default()).collect();
    let anon: Vec<u64> = pids.iter().map(|&p| status_field(p, "RssAnon").unwrap_or_default()).collect();
    let hwm: Vec<u64> = pids.iter().map(|&p| status_field(p, "VmHWM").unwrap_or_default()).collect();
    let threads: Vec<u64> = pids.iter().map(|&p| status_field(p, "Threads").unwrap_or_default()).collect();
    let grandchildren = children_of(&pids);
    if waits.reap(spawned)? < prs {
        return Err("a wait exited during the window".into());
    }

    // The checks complete: the first half pass, the second half fail with an output.
    let completed = Instant::now();
    for (i, (_, head, id)) in pulls.iter().enumerate() {
        if i < prs / 2 {
            w.emu.update_check_run(*id, "completed", Some("success")).map_err(|e| format!("completing: {e}"))?;
        } else {
            // update_check_run sets no output; the run is replaced by itself, completed, with
            // one (same id and start), as GitHub's PATCH of a check run does.
            let mut runs = w.emu.check_runs(head);
            let run = runs.iter_mut().find(|r| r.id == Some(*id)).ok_or("the check run is gone")?;
            run.status = "completed".into();
            run.conclusion = Some("failure".into());
            run.output = Some(CheckOutput {
                title: Some("3 tests failed".into()),
                summary: Some(format!("bench failure of PR {i}: calc_test expected 5, got -1")),
                text: None,
            });
            w.emu.set_check_runs(head, runs).map_err(|e| format!("completing: {e}"))?;
        }
    }
    progress("checks completed; waiting for every verdict");
    let deadline = completed + DECIDE_WITHIN;
    while waits.reap(completed)? > 0 {
        if Instant::now() > deadline {
            let left: Vec<usize> = (0..prs).filter(|&i| waits.exited[i].is_none()).collect();
            return Err(format!("waits {left:?} gave no verdict within {DECIDE_WITHIN:?} of their checks completing"));
        }
        sleep(Duration::from_millis(50));
    }

    // Every verdict, checked.
    let mut wrong = Vec::new();
    let mut latencies = Vec::new();
    for (i, ((_, head, _), exited)) in pulls.iter().zip(&waits.exited).enumerate() {
        let (status, after) = exited.ok_or("a wait was not reaped")?;
        latencies.push(after.as_millis() as u64);
        let stdout = std::fs::read_to_string(out_dir.join(format!("{i:02}.out"))).unwrap_or_default();
        let stderr = std::fs::read_to_string(out_dir.join(format!("{i:02}.err"))).unwrap_or_default();
        let out: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        let pass = i < prs / 2;
        let expected = if pass { "READY_TO_MERGE" } else { "AWAITING_WEBGPT_FIX" };
        let handoff = out["webgpt_handoff"].as_str().unwrap_or_default();
        let summary = format!("bench failure of PR {i}:");
        let right = status.success()
            && out["status"] == expected
            && out["report"]["head_sha"] == head.as_str()
            && out["report"]["checks"][0]["conclusion"] == if pass { "success" } else { "failure" }
            && (pass || handoff.contains(&summary));
        if !right {
            wrong.push(format!("wait {i}: expected {expected} ({status}):\nstdout: {stdout}\nstderr: {stderr}"));
        }
    }
    if !wrong.is_empty() {
        return Err(format!("{} of {prs} verdicts are wrong:\n{}", wrong.len(), wrong.join("\n")));
    }

    // The request log, read once every request has its status.
    let log = w.emu.requests();
    let window_to = marks.last().map_or(window_from, |m| m.1);
    let warm = count(&log[log_start..window_from]);
    let measured = count(&log[window_from..window_to]);
    let after = count(&log[window_to..]);
    let minutes: Vec<Value> = marks
        .windows(2)
        .map(|pair| {
            let c = count(&log[pair[0].1..pair[1].1]);
            let secs = pair[1].0 - pair[0].0;
            json!({ "from_s": pair[0].0, "to_s": pair[1].0, "total": c.total, "check_runs": c.check_runs,
                    "not_modified": c.not_modified, "check_runs_per_min": per_min(c.check_runs, secs) })
        })
        .collect();

    let ticks: Vec<u64> = cpu_start.iter().zip(&cpu_end).map(|(a, b)| b.saturating_sub(*a)).collect();
    let cpu_secs = ticks.iter().sum::<u64>() as f64 / tck;
    let warmup_cpu_secs = cpu_start.iter().sum::<u64>() as f64 / tck;
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned()))
        .unwrap_or_default();
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let sorted_latency = {
        let mut l = latencies.clone();
        l.sort_unstable();
        l
    };
    Ok(json!({
        "date": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "machine": { "cpu": model, "nproc": nproc },
        "processes": prs,
        "poll": { "min_s": 5, "max_s": 60, "config": "defaults (no [checks] table)" },
        "warmup_s": warmup_secs,
        "window_s": window_real,
        "requests": {
            "window": counts_json(&measured, window_real),
            "window_minutes": minutes,
            "warmup": counts_json(&warm, window_started.duration_since(spawned).as_secs_f64()),
            "after_window": { "total": after.total, "check_runs": after.check_runs },
        },
        "cpu": {
            "clock_ticks_per_s": tck,
            "window_s": cpu_secs,
            "window_percent_of_one_core": cpu_secs * 100.0 / window_real,
            "window_max_process_s": ticks.iter().max().copied().unwrap_or_default() as f64 / tck,
            "warmup_s": warmup_cpu_secs,
            "child_processes_of_the_waits": grandchildren,
        },
        "memory_kib": {
            "rss_median": median(&rss), "rss_max": rss.iter().max(), "rss_sum": rss.iter().sum::<u64>(),
            "rss_anon_median": median(&anon), "rss_anon_sum": anon.iter().sum::<u64>(),
            "hwm_max": hwm.iter().max(), "threads_median": median(&threads),
        },
        "verdicts": {
            "correct": prs, "ready_to_merge": prs / 2, "awaiting_webgpt_fix": prs / 2,
            "after_completion_ms": { "median": median(&latencies), "max": sorted_latency.last() },
        },
    }))
}

fn mib(kib: &Value) -> f64 {
    kib.as_f64().unwrap_or_default() / 1024.0
}

fn print(r: &Value) {
    let win = &r["requests"]["window"];
    let warm = &r["requests"]["warmup"];
    let cpu = &r["cpu"];
    let mem = &r["memory_kib"];
    let n = &r["processes"];
    let f = |v: &Value| v.as_f64().unwrap_or_default();
    println!(
        "{n} github-checks waits, default polling (5 s doubling to 60 s); window {:.1} s after a {} s warm-up",
        f(&r["window_s"]),
        r["warmup_s"]
    );
    println!("  requests/min, total:        {:.1} ({} requests)", f(&win["total_per_min"]), win["total"]);
    println!(
        "  requests/min, check-runs:   {:.1} ({} requests, {} were 304 = {:.1}%)",
        f(&win["check_runs_per_min"]),
        win["check_runs"],
        win["check_runs_not_modified"],
        f(&win["check_runs_not_modified_percent"])
    );
    println!(
        "  requests/min, not 304:      {:.1} (what GitHub counts against 5,000/h = 83.3/min)",
        f(&win["counted_per_min"])
    );
    for m in r["requests"]["window_minutes"].as_array().into_iter().flatten() {
        println!(
            "    {:>4.0}-{:<4.0} s: {} check-runs reads ({} were 304) = {:.1}/min",
            f(&m["from_s"]),
            f(&m["to_s"]),
            m["check_runs"],
            m["not_modified"],
            f(&m["check_runs_per_min"])
        );
    }
    println!(
        "  warm-up ({:.1} s):           {} requests, {} to check-runs",
        f(&warm["seconds"]),
        warm["total"],
        warm["check_runs"]
    );
    println!(
        "  CPU, {n} processes:          {:.2} s in the window = {:.3}% of one core (max {:.2} s one process; warm-up {:.2} s; {} child processes)",
        f(&cpu["window_s"]),
        f(&cpu["window_percent_of_one_core"]),
        f(&cpu["window_max_process_s"]),
        f(&cpu["warmup_s"]),
        cpu["child_processes_of_the_waits"]
    );
    println!(
        "  RSS per process:            median {:.1} MiB, max {:.1} MiB, sum {:.1} MiB",
        mib(&mem["rss_median"]),
        mib(&mem["rss_max"]),
        mib(&mem["rss_sum"])
    );
    println!(
        "  RssAnon (unshared):         median {:.1} MiB, sum {:.1} MiB; peak RSS max {:.1} MiB; {} threads (median)",
        mib(&mem["rss_anon_median"]),
        mib(&mem["rss_anon_sum"]),
        mib(&mem["hwm_max"]),
        mem["threads_median"]
    );
    let v = &r["verdicts"];
    println!(
        "  verdicts:                   {}/{n} correct ({} READY_TO_MERGE, {} AWAITING_WEBGPT_FIX), {:.1} s median / {:.1} s max after the checks completed",
        v["correct"],
        v["ready_to_merge"],
        v["awaiting_webgpt_fix"],
        f(&v["after_completion_ms"]["median"]) / 1e3,
        f(&v["after_completion_ms"]["max"]) / 1e3
    );
}

fn main() {
    match run() {
        Ok(report) => {
            print(&report);
            if let Some(path) = std::env::var_os("FORGELOOP_BENCH_DUMP") {
                let text = serde_json::to_string_pretty(&report).unwrap_or_default();
                if let Err(e) = std::fs::write(&path, text + "\n") {
                    eprintln!("[checks bench] cannot write {}: {e}", Path::new(&path).display());
                    std::process::exit(1);
                }
            }
        }
        Err(e) => {
            eprintln!("[checks bench] FAILED: {e}");
            std::process::exit(1);
        }
    }
}
