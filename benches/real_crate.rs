//! What a real project's iteration costs through forgeloop (issue 28), side by side with the
//! same work done locally, in one run:
//!
//! - **A real crate as a PR.** The newest `semver` in the local cargo registry (no
//!   dependencies; its dev-dependency `criterion` and that one's come from the registry too,
//!   offline) becomes a repository on the GitHub emulator (in-process, real HTTP on 127.0.0.1)
//!   and a PR whose head changes one line of `src/lib.rs`. `forgeloop test --pr` runs
//!   `cargo test --offline` on it (the release binary, sandboxed, with the repository's warm
//!   cache); locally, the same tree runs the same command with a target directory of its own.
//!   Iteration 1 is a cold build on both sides; each later round commits one more one-line change
//!   to the PR (and makes it locally), so each later iteration is an incremental build.
//!   Targets: iteration 1 within 1.1× of the cold local build; later iterations at most 1.5× the
//!   warm local `cargo test` (the median of the rounds).
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

const CARGO_TEST: &str = r#"{"commands": [["cargo", "test", "--offline"]]}"#;
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
    let push = |round: usize| -> Result<()> {
        let text = edited_lib(&lib, round);
        std::fs::write(local.join("src/lib.rs"), &text).map_err(|e| e.to_string())?;
        world.commit(&repo, "change", &[("src/lib.rs", &text)], &format!("change {round}"));
        Ok(())
    };
    push(1)?;
    let number = world
        .rt
        .block_on(world.emu.open_pr(&repo, "change", "main", "a one-line change"))
        .map_err(|e| format!("{e:?}"))?;
    let pr = format!("bench/crate#{number}");

    let target = world.path("local-target");
    progress("iteration 1: cold local cargo test");
    let local_cold = local_cargo_test(&local, &target)?;
    progress("iteration 1: forgeloop test (cold cache)");
    let (fl_cold, report) = forgeloop_test(world, &pr, &commands)?;
    let cold_command = command_seconds(&report, "commands");
    let sandbox = &report["environment"]["sandbox"];
    let sandbox = format!("{} tier, network {}", sandbox["kind"].as_str().unwrap_or("?"), sandbox["network"]);
    println!("crate: {name}");
    println!("sandbox: {sandbox}");
    println!(
        "iteration 1: forgeloop {fl_cold:.3} s (cargo test inside: {cold_command:.3} s); local cold {local_cold:.3} s; ratio {:.2}",
        fl_cold / local_cold
    );

    let (mut fl_warm, mut local_warm, mut inside) = (Vec::new(), Vec::new(), Vec::new());
    for round in 2..=rounds + 1 {
        push(round)?;
        let local_took = local_cargo_test(&local, &target)?;
        let (took, report) = forgeloop_test(world, &pr, &commands)?;
        let command = command_seconds(&report, "commands");
        progress(&format!(
            "iteration {round}: forgeloop {took:.3} s (inside {command:.3} s), local warm {local_took:.3} s"
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
