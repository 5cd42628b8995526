//! `forgeloop-sandbox`, the helper binary installed beside `forgeloop` (design §5.6): it runs a
//! spec of its own release only. A helper left behind by an older release must not run a newer
//! spec (whose defences it may not know) as if it had built them: it refuses, and says why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use forgeloop::domain::commands::parse_commands;
use forgeloop::domain::egress::NetworkMode;
use forgeloop::sandbox::{self, Phase, RunDir, Settings, spec_fd};

/// Runs `forgeloop-sandbox` with `spec` on a sealed descriptor, as the runner does.
fn run_helper(
    program: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    spec: &[u8],
) -> std::process::Output {
    let fd = spec_fd::sealed(spec).unwrap();
    let raw = fd.as_raw_fd();
    let mut command = Command::new(program);
    command.args(args).env_clear().envs(env).env(sandbox::SPEC_FD_ENV, raw.to_string());
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: fcntl on a descriptor of this process, between fork and exec.
    unsafe { command.pre_exec(move || spec_fd::inherit(raw)) };
    command.output().unwrap()
}

#[test]
fn the_helper_refuses_a_spec_of_another_release_and_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let witness = home.path().join("ran");
    let profile = parse_commands(&format!(r#"[["touch", "{}"]]"#, witness.display())).unwrap();
    let parent = forgeloop::runner::process_env();
    let env = forgeloop::runner::build_env(&parent, &profile, &profile.commands[0]);
    let mut settings = Settings::new(home.path().join("run"));
    settings.helper = PathBuf::from(env!("CARGO_BIN_EXE_forgeloop-sandbox"));
    let run_dir = RunDir::create(&settings.run_root).unwrap();
    let checkout = run_dir.path().join("checkout");
    std::fs::create_dir(&checkout).unwrap();
    let paths = run_dir.paths(&checkout, None);
    let plan = match sandbox::prepare(&settings, &profile, NetworkMode::Off, &parent, &[]) {
        Ok(plan) => plan,
        // No sandbox on this machine: nothing to refuse here (the sandbox suites say why).
        Err(err) => panic!("no sandbox here: {err}"),
    };
    let started = plan.wrap(&profile.commands[0].argv, &paths, env, Phase::Test);
    let spec = started.spec.clone().expect("a sandboxed command has a spec");
    let mut json: serde_json::Value = serde_json::from_slice(&spec).unwrap();
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"), "the runner writes its version");
    let program = started.program.to_str().unwrap().to_owned();

    for stale in [serde_json::json!("0.0.1"), serde_json::Value::Null] {
        match &stale {
            serde_json::Value::Null => json.as_object_mut().unwrap().remove("version"),
            other => json.as_object_mut().unwrap().insert("version".into(), other.clone()),
        };
        let out = run_helper(&program, &started.args, &started.env, &serde_json::to_vec(&json).unwrap());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{stderr}");
        assert!(stderr.contains("install both binaries of one release"), "{stderr}");
        assert!(!witness.exists(), "the command ran under a helper of another release");
    }
    // Of this release but another build: a field it does not know is refused, not skipped.
    json.as_object_mut().unwrap().insert("version".into(), env!("CARGO_PKG_VERSION").into());
    json.as_object_mut().unwrap().insert("a_defence_from_a_later_build".into(), true.into());
    let out = run_helper(&program, &started.args, &started.env, &serde_json::to_vec(&json).unwrap());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("unknown field") && stderr.contains("another build"), "{stderr}");
    assert!(!witness.exists(), "the command ran with a defence skipped");
}
