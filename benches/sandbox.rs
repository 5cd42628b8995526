//! What the sandbox (design §5.6) costs per test command: `true` started directly, and through
//! the sandbox helper in each tier, exactly as the runner starts it (the release binary, the
//! plan's argv and environment, the spec on a sealed descriptor); and, as a yardstick, the same
//! `true` in bubblewrap (`bwrap --unshare-all --die-with-parent`) where it is installed.
//! design §10: at most 15 ms more than unsandboxed. The landlock tier never runs a test for
//! root, so as root only the namespaces tier is measured.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use forgeloop::domain::commands::parse_commands;
use forgeloop::domain::egress::NetworkMode;
use forgeloop::sandbox::{self, Phase, RunDir, Settings, Started, spec_fd};

fn run(started: &Started) {
    let spec = started.spec.as_deref().map(|bytes| spec_fd::sealed(bytes).unwrap());
    let mut command = Command::new(&started.program);
    command
        .args(&started.args)
        .env_clear()
        .envs(&started.env)
        .current_dir(&started.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(fd) = spec.as_ref().map(AsRawFd::as_raw_fd) {
        command.env(sandbox::SPEC_FD_ENV, fd.to_string());
        // SAFETY: fcntl on a descriptor of this process, between fork and exec.
        unsafe { command.pre_exec(move || spec_fd::inherit(fd)) };
    }
    let status = command.status().unwrap();
    assert!(status.success(), "{started:?} failed");
}

fn bench(c: &mut Criterion) {
    let profile = parse_commands(r#"[["true"]]"#).unwrap();
    let parent = forgeloop::runner::process_env();
    let base_env = forgeloop::runner::build_env(&parent, &profile, &profile.commands[0]);
    let home = tempfile::tempdir().unwrap();
    let mut settings = Settings::new(home.path().join("run"));
    settings.helper = PathBuf::from(env!("CARGO_BIN_EXE_forgeloop-sandbox"));
    let run_dir = RunDir::create(&settings.run_root).unwrap();
    let checkout = run_dir.path().join("checkout");
    std::fs::create_dir(&checkout).unwrap();
    let paths = run_dir.paths(&checkout, None);
    let argv = vec!["true".to_owned()];
    // SAFETY: geteuid has no arguments and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        run_dir.hand_over(&paths, settings.run_as).unwrap();
    }

    let mut group = c.benchmark_group("sandbox");
    group.sample_size(50);
    let direct =
        sandbox::prepare(&Settings { enabled: false, ..settings.clone() }, &profile, NetworkMode::Off, &parent, &[])
            .unwrap();
    let started = direct.wrap(&argv, &paths, base_env.clone(), Phase::Test);
    group.bench_function("unsandboxed_true", |b| b.iter(|| run(&started)));

    let tiers: &[(&str, &str)] =
        if root { &[("namespaces_true", "")] } else { &[("namespaces_true", ""), ("landlock_true", "namespaces")] };
    for (name, refuse) in tiers {
        // SAFETY: set before any thread of this bench starts a child; read by prepare below.
        unsafe { std::env::set_var(sandbox::REFUSE_ENV, refuse) };
        let plan = sandbox::prepare(&settings, &profile, NetworkMode::Off, &parent, &[]).unwrap();
        eprintln!("{name}: {:?}", plan.info());
        let started = plan.wrap(&argv, &paths, base_env.clone(), Phase::Test);
        group.bench_function(*name, |b| b.iter(|| run(&started)));
    }
    let bwrap = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-all"];
    let bwrap_works =
        Command::new("bwrap").args(bwrap).args(["--die-with-parent", "true"]).status().is_ok_and(|s| s.success());
    if bwrap_works {
        group.bench_function("bwrap_true", |b| {
            b.iter(|| {
                let status = Command::new("bwrap")
                    .args(bwrap)
                    .args(["--die-with-parent", "true"])
                    .stdin(Stdio::null())
                    .status()
                    .unwrap();
                assert!(status.success());
            })
        });
    } else {
        eprintln!("bwrap_true: bubblewrap is not installed (apt-get install bubblewrap); not measured");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
