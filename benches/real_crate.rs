//! What a real project's iteration costs through forgeloop (issue 28), side by side with the
//! same work done locally, in one run:
//!
//! - **A real crate as a PR.** The newest `semver` in the local cargo registry (no
//!   dependencies; its dev-dependency `criterion` and that one's come from the registry too,
//!   offline) becomes a repository on the GitHub emulator (in-process, real HTTP on 127.0.0.1)
//!   and PRs whose heads change one line of `src/lib.rs`. Each PR is a cycle: `forgeloop forge
//!   --pr` runs `cargo test --offline` (the release binary, sandboxed, with the repository's
//!   base layer and the cycle's own layer) and then `false`, so the cycle goes on to its next
//!   iteration; locally, the same tree runs the same `cargo test` with a target directory of its
//!   own. Measured in one run: the base layer's warming (a cold build of the base branch, paid by
//!   the repository's first run) against the cold local build; iteration 1 of a second PR on
//!   the warm base layer against the warm local `cargo test` after the same change (target
//!   ≤ 2×); and later iterations of the first PR, one more line each round, against the warm
//!   local `cargo test` (the median of the rounds; target ≤ 1.5×).
//! - **The egress proxy.** A package index on 127.0.0.1 serves a 50 MiB file and a wheel with
//!   50 MiB of data. Two steps fetch them: `curl` of the file (the proxy's worst case: a
//!   loopback download at memory speed, where its two extra copies show) and `pip install` of
//!   the wheel (what a setup does). Each runs as a setup step, through the run's proxy
//!   (`allowlist`, the index allowed by its exact `IP:port`), and as the test command of an
//!   `open` run (the host network, which the person's config permits for the bench's
//!   repository; a setup step always has the allowlist). The step's own duration is compared
//!   (median of the rounds, alternating); target: the proxy adds at most 5%.
//!
//! Every run must pass (and the proxy's must show the download on its record), or the bench
//! fails. Run: `cargo bench --bench real_crate` or `scripts/bench.sh real_crate`. Knobs:
//! FORGELOOP_BENCH_CRATE (a crate's source directory instead of the registry's semver),
//! FORGELOOP_BENCH_ROUNDS (incremental rounds, default 5), FORGELOOP_BENCH_PROXY_ROUNDS (default 7).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use forgeloop::demo::package_index::{Blob, Package, PackageIndex};
use serde_json::Value;
use support::world::World;

type Result<T> = std::result::Result<T, String>;

/// `cargo test`, then a failure, so a cycle goes on to its next iteration.
const CARGO_TEST: &str = r#"{"commands": [["cargo", "test", "--offline"], ["false"]]}"#;
const BLOB_MIB: usize = 50;

fn knob(name: &str, default: usize) -> Result<usize> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(text) => text.trim().parse().ok().filter(|n| *n >= 1).ok_or(format!("{name}={text:?}: a whole number ≥ 1")),
    }
}

fn progress(what: &str) {
    eprintln!("[real_crate bench] {what}");
}

/// The crate to test: the knob's directory, else the newest `semver-1.*` in the cargo registry.
fn crate_source() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("FORGELOOP_BENCH_CRATE") {
        return Some(PathBuf::from(dir));
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|index| std::fs::read_dir(index.path()).into_iter().flatten().flatten())
        .map(|entry| entry.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("semver-1.")))
        .collect();
    found.sort();
    found.pop()
}

/// Every text file below `dir`, repository-relative (`target/` and `.git` left out).
fn text_files(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "target" || name == ".git" {
            continue;
        }
        let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        if kind.is_dir() {
            text_files(&entry.path(), &path, out)?;
        } else if kind.is_file()
            && let Ok(text) = std::fs::read_to_string(entry.path())
        {
            out.push((path, text));
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let status = Command::new("cp").arg("-r").arg(from).arg(to).status().map_err(|e| e.to_string())?;
    status.success().then_some(()).ok_or(format!("cp -r {} failed", from.display()))
}

/// Seconds `cargo test --offline` takes in `dir` with `target` as its target directory.
fn local_cargo_test(dir: &Path, target: &Path) -> Result<f64> {
    let start = Instant::now();
    let out = Command::new("cargo")
        .args(["test", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .output()
        .map_err(|e| e.to_string())?;
    let took = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!("local cargo test failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(took)
}

/// One `forgeloop test --pr` run: its wall time and its report (which must say `TEST_PASSED`).
fn forgeloop_test(world: &World, pr: &str, commands: &Path) -> Result<(f64, Value)> {
    let start = Instant::now();
    let run = world.run(&["test", "--pr", pr, "--commands-json", &commands.display().to_string()]);
    let took = start.elapsed().as_secs_f64();
    let report: Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("forgeloop test printed no report ({e}): {}\n{}", run.stdout, run.stderr))?;
    if report["status"] != "TEST_PASSED" {
        return Err(format!("forgeloop test did not pass: {}\n{}", run.stdout, run.stderr));
    }
    Ok((took, report))
}

/// One iteration of the cycle at `state` on `pr`: its wall time and report. `cargo test` must
/// pass; the `false` after it fails the run, so the cycle takes another iteration.
fn forge_iteration(world: &World, state: &str, pr: &str, commands: &Path) -> Result<(f64, Value)> {
    let start = Instant::now();
    let run = world.run(&["forge", "--pr", pr, "--state", state, "--commands-json", &commands.display().to_string()]);
    let took = start.elapsed().as_secs_f64();
    let out: Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("forge --pr printed no JSON ({e}): {}\n{}", run.stdout, run.stderr))?;
    let report = out["report"].clone();
    if report["commands"][0]["exit_code"] != 0 {
        return Err(format!("cargo test did not pass in {pr}: {}\n{}", run.stdout, run.stderr));
    }
    Ok((took, report))
}

fn cargo_seconds(report: &Value) -> f64 {
    report["commands"][0]["duration_seconds"].as_f64().unwrap_or(0.0)
}

fn command_seconds(report: &Value, phase: &str) -> f64 {
    report[phase].as_array().into_iter().flatten().filter_map(|c| c["duration_seconds"].as_f64()).sum()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// `src/lib.rs` with `round` one-line changes appended (one more line each round).
fn edited_lib(original: &str, round: usize) -> String {
    let mut text = original.to_owned();
    for n in 1..=round {
        text.push_str(&format!("// forgeloop bench: change {n}\n"));
    }
    text
}

fn real_crate(world: &World, source: &Path, rounds: usize) -> Result<()> {
    let local = world.path("local");
    copy_tree(source, &local)?;
    let lock = Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(&local)
        .output()
        .map_err(|e| e.to_string())?;
    if !lock.status.success() {
        return Err(format!("cargo generate-lockfile --offline: {}", String::from_utf8_lossy(&lock.stderr)));
    }
    let mut files = Vec::new();
    text_files(&local, "", &mut files)?;
    let lib = std::fs::read_to_string(local.join("src/lib.rs")).map_err(|e| e.to_string())?;
    let name = source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    progress(&format!("{name}: {} files as bench/crate on the emulator", files.len()));

    let repo = world.rt.block_on(world.emu.create_repo("bench", "crate", false)).map_err(|e| format!("{e:?}"))?;
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    world.commit(&repo, "main", &refs, "the crate");
    let commands = world.path("cargo-test.json");
    std::fs::write(&commands, CARGO_TEST).map_err(|e| e.to_string())?;
    // Each PR's branch gets its own one-line change; locally the tree takes the same text.
    let push = |branch: &str, text: String, message: &str| -> Result<()> {
        std::fs::write(local.join("src/lib.rs"), &text).map_err(|e| e.to_string())?;
        world.commit(&repo, branch, &[("src/lib.rs", &text)], message);
        Ok(())
    };
    let open = |branch: &str, state: &str| -> Result<String> {
        let number =
            world.rt.block_on(world.emu.open_pr(&repo, branch, "main", branch)).map_err(|e| format!("{e:?}"))?;
        world.cycle(state, &["--max-iterations", "50"]);
        Ok(format!("bench/crate#{number}"))
    };
    push("change-a", edited_lib(&lib, 1), "change 1")?;
    let pr_a = open("change-a", "a.json")?;

    let target = world.path("local-target");
    progress("local cold cargo test");
    let local_cold = local_cargo_test(&local, &target)?;
    progress("PR A, iteration 1: the base layer is warmed first");
    let (fl_first, report) = forge_iteration(world, "a.json", &pr_a, &commands)?;
    let layers = &report["environment"]["sandbox"]["cache_layers"];
    if layers["base"]["warmed_now"] != true {
        return Err(format!("the first run did not warm the base layer: {report}"));
    }
    let warm = layers["base"]["warm_ms"].as_f64().unwrap_or(0.0) / 1000.0;
    let sandbox = &report["environment"]["sandbox"];
    let sandbox = format!(
        "{} tier, {} stack, network {}",
        sandbox["kind"].as_str().unwrap_or("?"),
        layers["stack"].as_str().unwrap_or("?"),
        sandbox["network"]
    );
    println!("crate: {name}");
    println!("sandbox: {sandbox}");
    println!("warming: the base layer {warm:.3} s; local cold {local_cold:.3} s; ratio {:.2}", warm / local_cold);
    println!(
        "iteration 1 of the first PR, with the warming: forgeloop {fl_first:.3} s (cargo test inside: {:.3} s); local cold {local_cold:.3} s; ratio {:.2}",
        cargo_seconds(&report),
        fl_first / local_cold
    );

    // A second PR, iteration 1, on the warm base layer: its own change, built on the base's.
    let mut text_b = lib.clone();
    text_b.push_str("// forgeloop bench: another PR\n");
    push("change-b", text_b, "another change")?;
    let pr_b = open("change-b", "b.json")?;
    progress("local warm cargo test after PR B's change");
    let local_b = local_cargo_test(&local, &target)?;
    progress("PR B, iteration 1, on the warm base layer");
    let (fl_b, report_b) = forge_iteration(world, "b.json", &pr_b, &commands)?;
    if report_b["environment"]["sandbox"]["cache_layers"]["base"]["warmed_now"] == true {
        return Err(format!("the second PR warmed the base layer again: {report_b}"));
    }
    println!(
        "iteration 1 of a new PR on the warm base layer: forgeloop {fl_b:.3} s (cargo test inside: {:.3} s); local warm after the same change {local_b:.3} s; ratio {:.2}",
        cargo_seconds(&report_b),
        fl_b / local_b
    );

    let (mut fl_warm, mut local_warm, mut inside) = (Vec::new(), Vec::new(), Vec::new());
    for round in 2..=rounds + 1 {
        push("change-a", edited_lib(&lib, round), &format!("change {round}"))?;
        let local_took = local_cargo_test(&local, &target)?;
        let (took, report) = forge_iteration(world, "a.json", &pr_a, &commands)?;
        let command = cargo_seconds(&report);
        progress(&format!(
            "PR A, iteration {round}: forgeloop {took:.3} s (inside {command:.3} s), local warm {local_took:.3} s"
        ));
        fl_warm.push(took);
        local_warm.push(local_took);
        inside.push(command);
    }
    let (fl, local_m, inside_m) = (median(&mut fl_warm), median(&mut local_warm), median(&mut inside));
    println!(
        "iteration 2+ ({rounds} rounds, one more line each): forgeloop median {fl:.3} s (cargo test inside: {inside_m:.3} s); local warm median {local_m:.3} s; ratio {:.2}",
        fl / local_m
    );

    // From a pushed fix to READY_TO_MERGE: each PR's first iteration fails a test of its own on
    // a wrong value, the second fixes the value (the test stays, as a real fix leaves it) — on the cycle's layer, then confirmed from the base layer and
    // an empty layer (issue 57), both inside the one `forge --pr`.
    let passing = world.path("cargo-test-only.json");
    std::fs::write(&passing, r#"{"commands": [["cargo", "test", "--offline"]]}"#).map_err(|e| e.to_string())?;
    let with_value = |round: usize, value: u32| {
        format!(
            "// forgeloop bench: fix {round}\n/// The bench's value.\npub fn forgeloop_bench_value() -> u32 {{\n    {value}\n}}\n#[cfg(test)]\nmod forgeloop_bench_value_test {{\n    #[test]\n    fn is_two() {{\n        assert_eq!(super::forgeloop_bench_value(), 2);\n    }}\n}}\n"
        )
    };
    let (mut fl_ready, mut local_ready, mut layered) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds.min(3) {
        let branch = format!("fix-{round}");
        let mut broken = lib.clone();
        broken.push_str(&with_value(round, 1));
        push(&branch, broken, "a change that fails a test")?;
        let state = format!("fix-{round}.json");
        let pr = open(&branch, &state)?;
        let start = Instant::now();
        let run =
            world.run(&["forge", "--pr", &pr, "--state", &state, "--commands-json", &passing.display().to_string()]);
        if !run.stdout.contains("AWAITING_WEBGPT_FIX") {
            return Err(format!("the failing iteration did not fail: {}\n{}", run.stdout, run.stderr));
        }
        let failed_took = start.elapsed().as_secs_f64();
        let mut fixed = lib.clone();
        fixed.push_str(&with_value(round, 2));
        push(&branch, fixed, "the fix")?;
        let local_took = local_cargo_test(&local, &target)?;
        let start = Instant::now();
        let run = world.run(&["forge", "--pr", &pr, "--state", &state]);
        let took = start.elapsed().as_secs_f64();
        let out: Value = serde_json::from_str(&run.stdout)
            .map_err(|e| format!("forge --pr printed no JSON ({e}): {}\n{}", run.stdout, run.stderr))?;
        if out["status"] != "READY_TO_MERGE" {
            return Err(format!("the fix did not reach READY_TO_MERGE: {}\n{}", run.stdout, run.stderr));
        }
        let first = out["report"]["confirmation"]["first_seconds"].as_f64().unwrap_or(0.0);
        progress(&format!(
            "fix {round}: failing iteration {failed_took:.3} s; the fix to READY {took:.3} s (the layered run {first:.3} s, then the confirming run), local warm {local_took:.3} s"
        ));
        fl_ready.push(took);
        local_ready.push(local_took);
        layered.push(first);
    }
    let (fl, local_m, first_m) = (median(&mut fl_ready), median(&mut local_ready), median(&mut layered));
    println!(
        "from a pushed fix to READY_TO_MERGE ({} PRs, the pass confirmed from the base layer): forgeloop median {fl:.3} s (the layered run {first_m:.3} s); local warm median {local_m:.3} s; ratio {:.2}",
        fl_ready.len(),
        fl / local_m
    );
    Ok(())
}

fn proxy(world: &World, rounds: usize) -> Result<()> {
    // Incompressible enough that nothing on the way can shortcut it.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let bytes: Vec<u8> = (0..BLOB_MIB * 1024 * 1024).map(|_| next() as u8).collect();
    let hex = b"0123456789abcdef";
    let data: String = (0..BLOB_MIB * 1024 * 1024).map(|_| hex[(next() % 16) as usize] as char).collect();
    let wheel = Package {
        name: "bigdep".into(),
        version: "1.0".into(),
        files: vec![("bigdep/__init__.py".into(), "VALUE = 1\n".into()), ("bigdep/data.txt".into(), data)],
    };
    let index = PackageIndex::start_serving(&[wheel], &[], &[Blob { name: "big.bin".into(), bytes }])
        .map_err(|e| e.to_string())?;
    let config = world.path("xdg-config/forgeloop/config.toml");
    std::fs::create_dir_all(config.parent().unwrap_or(Path::new("."))).map_err(|e| e.to_string())?;
    std::fs::write(
        &config,
        format!("[network]\nallow = [\"{}\"]\n\n[network.repositories.\"bench/fetch\"]\nopen = true\n", index.addr()),
    )
    .map_err(|e| e.to_string())?;
    let repo = world.rt.block_on(world.emu.create_repo("bench", "fetch", false)).map_err(|e| format!("{e:?}"))?;
    world.commit(&repo, "main", &[("README", "fetch\n")], "base");
    world.commit(&repo, "change", &[("README", "fetch more\n")], "change");
    let number =
        world.rt.block_on(world.emu.open_pr(&repo, "change", "main", "fetch")).map_err(|e| format!("{e:?}"))?;
    let pr = format!("bench/fetch#{number}");
    let curl = format!(
        r#"["curl", "--silent", "--show-error", "--fail", "--output", "/dev/null", "{}"]"#,
        index.blob_url("big.bin")
    );
    let pip = format!(
        r#"["/usr/bin/python3", "-m", "pip", "install", "--quiet", "--no-cache-dir", "--disable-pip-version-check", "--index-url", "{}", "--target", "vendor", "bigdep"]"#,
        index.url()
    );
    for (what, step) in [("curl of a 50 MiB file", curl), ("pip install of a 50 MiB wheel", pip)] {
        // A setup step always goes through the allowlist: the host-network side runs the same
        // step as the test command of an "open" run.
        let files = [
            ("allowlist", format!(r#"{{"setup": [{step}], "commands": [["true"]]}}"#), "setup"),
            ("open", format!(r#"{{"commands": [{step}], "network": "open"}}"#), "commands"),
        ];
        let mut seconds: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for round in 0..rounds {
            for (i, (mode, text, phase)) in files.iter().enumerate() {
                let commands = world.path(&format!("fetch-{mode}.json"));
                std::fs::write(&commands, text).map_err(|e| e.to_string())?;
                let (_, report) = forgeloop_test(world, &pr, &commands)?;
                let sandbox = &report["environment"]["sandbox"];
                let network = match *phase {
                    "setup" => sandbox["setup_network"].as_str(),
                    _ => sandbox["network"].as_str(),
                };
                if network != Some(*mode) {
                    return Err(format!("the {mode} run's {phase} had network {network:?}: {report}"));
                }
                let proxied =
                    report["network_log"].as_array().is_some_and(|log| log.iter().any(|e| e["allowed"] == true));
                if proxied != (*mode == "allowlist") {
                    return Err(format!("the {mode} run's network record is not what the mode means: {report}"));
                }
                let took = command_seconds(&report, phase);
                progress(&format!("proxy round {}: {what}, {mode}: {took:.3} s", round + 1));
                seconds[i].push(took);
            }
        }
        let allow = median(&mut seconds[0]);
        let open = median(&mut seconds[1]);
        println!(
            "setup step, {what} ({rounds} rounds each): allowlist (through the proxy) median {allow:.3} s; open (host network) median {open:.3} s; ratio {:.3}",
            allow / open
        );
    }
    Ok(())
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let result = (|| -> Result<()> {
        let rounds = knob("FORGELOOP_BENCH_ROUNDS", 5)?;
        let proxy_rounds = knob("FORGELOOP_BENCH_PROXY_ROUNDS", 7)?;
        let world = World::new();
        match crate_source() {
            Some(source) => real_crate(&world, &source, rounds)?,
            None => println!("skipped the real crate: no semver-1.* in the cargo registry (set FORGELOOP_BENCH_CRATE)"),
        }
        proxy(&world, proxy_rounds)
    })();
    if let Err(e) = result {
        eprintln!("real_crate bench failed: {e}");
        std::process::exit(1);
    }
}
