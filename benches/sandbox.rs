//! What the sandbox (design §5.6) costs per test command: `true` started directly, and through
//! the sandbox helper in each tier, exactly as the runner starts it (the release binary, the
//! plan's argv and environment). design §10: at most 15 ms more than unsandboxed.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use forgeloop::domain::commands::parse_commands;
use forgeloop::sandbox::{self, PrivateDirs, Settings, Started};

fn run(started: &Started) {
    let status = Command::new(&started.program)
        .args(&started.args)
        .env_clear()
        .envs(&started.env)
        .current_dir(&started.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{started:?} failed");
}

fn bench(c: &mut Criterion) {
    let profile = parse_commands(r#"[["true"]]"#).unwrap();
    let parent = forgeloop::runner::process_env();
    let base_env = forgeloop::runner::build_env(&parent, &profile, 0);
    let settings = Settings { helper: PathBuf::from(env!("CARGO_BIN_EXE_forgeloop")), ..Settings::default() };
    let checkout = tempfile::tempdir().unwrap();
    let private = PrivateDirs::new().unwrap();
    let argv = vec!["true".to_owned()];

    let mut group = c.benchmark_group("sandbox");
    group.sample_size(50);
    let direct = sandbox::prepare(&Settings { enabled: false, ..settings.clone() }, &profile, &parent, &[]).unwrap();
    let started = direct.wrap(&argv, checkout.path(), &private, base_env.clone());
    group.bench_function("unsandboxed_true", |b| b.iter(|| run(&started)));

    for (name, refuse) in [("namespaces_true", ""), ("landlock_true", "namespaces")] {
        // SAFETY: set before any thread of this bench starts a child; read by prepare below.
        unsafe { std::env::set_var(sandbox::REFUSE_ENV, refuse) };
        let plan = sandbox::prepare(&settings, &profile, &parent, &[]).unwrap();
        eprintln!("{name}: {:?}", plan.info());
        let started = plan.wrap(&argv, checkout.path(), &private, base_env.clone());
        group.bench_function(name, |b| b.iter(|| run(&started)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
