//! The runner with real processes: verdicts, the log format, output handling, environment and
//! redaction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod runner_support;

use std::os::unix::fs::PermissionsExt;

use forgeloop::domain::commands::{CommandSpec, CommandsError, CommandsProfile, parse_commands};
use forgeloop::domain::report::TestStatus;
use forgeloop::redact::Redactor;
use forgeloop::runner::{EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, RunnerError, build_env};
use runner_support::{Fixture, generated_secret, profile};

#[tokio::test]
async fn passing_commands_pass_and_are_logged_in_sections() {
    let fx = Fixture::new();
    let outcome = fx.run(&profile(r#"[["sh", "-c", "echo hello"], ["true"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    assert_eq!(outcome.commands.len(), 2);
    assert!(outcome.commands.iter().all(|c| c.passed() && c.exit_code == Some(0)));
    assert_eq!(outcome.failure_output, None);
    assert!(!outcome.timed_out && !outcome.cancelled && !outcome.log_truncated);
    let log = fx.log();
    assert_eq!(outcome.log_bytes_written, log.len() as u64);
    assert!(log.starts_with("$ sh -c 'echo hello'\nhello\n[exit 0 after "), "{log}");
    assert!(log.contains("s]\n\n$ true\n[exit 0 after "), "{log}");
}

#[tokio::test]
async fn the_first_failure_stops_the_run() {
    let fx = Fixture::new();
    let outcome =
        fx.run(&profile(r#"[["sh", "-c", "echo before; echo boom >&2; exit 3"], ["echo", "never"], ["true"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Failed);
    assert_eq!(outcome.commands[0].exit_code, Some(3));
    assert_eq!(outcome.commands[0].signal, None);
    assert!(outcome.commands[1].not_run && outcome.commands[2].not_run);
    assert_eq!(outcome.commands[1].exit_code, None);
    assert_eq!(outcome.failure_output.as_deref(), Some("before\nboom"));
    let log = fx.log();
    assert!(log.contains("before\nboom\n[exit 3 after "), "{log}");
    assert!(log.ends_with("[not run] $ echo never\n[not run] $ true\n"), "{log}");
    assert!(!log.contains("\nnever\n"));
}

#[tokio::test]
async fn failure_output_is_the_failing_commands_tail_only() {
    let fx = Fixture::new();
    let mut req_profile =
        profile(r#"[["sh", "-c", "echo from-the-passing-command"], ["sh", "-c", "seq 1 5000; exit 1"]]"#);
    req_profile.timeout_s = Some(60);
    let mut req = fx.request(&req_profile);
    req.failure_tail_chars = 100;
    let outcome = forgeloop::runner::run(req).await.unwrap();
    let tail = outcome.failure_output.unwrap();
    assert!(tail.ends_with("4999\n5000"), "{tail}");
    assert!(tail.chars().count() <= 100);
    assert!(!tail.contains("from-the-passing-command"));
    // The log still has everything.
    assert!(fx.log().contains("from-the-passing-command\n"));
    assert!(fx.log().contains("\n1\n2\n3\n"));
}

#[tokio::test]
async fn stdout_and_stderr_are_merged_in_order() {
    let fx = Fixture::new();
    let outcome =
        fx.run(&profile(r#"[["sh", "-c", "echo a; echo b >&2; echo c; echo d >&2; printf 'no newline'"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    let log = fx.log();
    // The last line had no newline: the footer still starts on its own line.
    assert!(log.contains("\na\nb\nc\nd\nno newline\n[exit 0 after "), "{log}");
}

#[tokio::test]
async fn invalid_utf8_is_replaced_not_an_error() {
    let fx = Fixture::new();
    let outcome = fx.run(&profile(r#"[["printf", "ok \\377\\376 end \\342\\234\\223 \\342\\234\\n"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    // Two invalid bytes, a valid check mark, then a truncated sequence.
    assert!(fx.log().contains("ok \u{FFFD}\u{FFFD} end \u{2713} \u{FFFD}\n"), "{}", fx.log());
}

#[tokio::test]
async fn a_command_that_cannot_start_is_a_failed_command_not_an_error() {
    let fx = Fixture::new();
    let outcome = fx.run(&profile(r#"[["definitely-not-a-command-xyz", "--flag"], ["true"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Failed);
    assert_eq!(outcome.commands[0].exit_code, Some(EXIT_NOT_FOUND));
    assert!(outcome.commands[1].not_run);
    let failure = outcome.failure_output.unwrap();
    assert!(failure.contains("could not start \"definitely-not-a-command-xyz\""), "{failure}");
    let log = fx.log();
    assert!(log.contains("$ definitely-not-a-command-xyz --flag\nforgeloop: could not start "), "{log}");
    assert!(log.contains("[not started: exit 127]\n"), "{log}");

    // A file that exists but is not executable: "cannot execute", 126.
    let script = fx.checkout.join("script.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let outcome = fx.run(&profile(r#"[["./script.sh"]]"#)).await;
    assert_eq!(outcome.commands[0].exit_code, Some(EXIT_CANNOT_EXECUTE));
    // Relative programs resolve against the checkout once they are executable.
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let outcome = fx.run(&profile(r#"[["./script.sh"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(fx.log().contains("\nhi\n"));
}

#[tokio::test]
async fn commands_run_in_the_checkout_with_stdin_closed() {
    let fx = Fixture::new();
    std::fs::write(fx.checkout.join("marker.txt"), "in the checkout\n").unwrap();
    // `cat` with no argument reads stdin: /dev/null gives EOF at once instead of hanging.
    let outcome = fx.run(&profile(r#"[["cat", "marker.txt"], ["cat"], ["sh", "-c", "pwd"]]"#)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    let log = fx.log();
    assert!(log.contains("in the checkout\n"));
    // The checkout path itself is shown as <checkout>.
    assert!(log.contains("$ sh -c pwd\n<checkout>\n"), "{log}");
    assert!(!log.contains(&fx.checkout.display().to_string()));
}

#[tokio::test]
async fn the_environment_is_rebuilt_from_the_allowlist() {
    let mut fx = Fixture::new();
    let gh_token = generated_secret("ghp_");
    let api_key = generated_secret("key-");
    fx.parent_env.insert("GH_TOKEN".into(), gh_token.clone());
    fx.parent_env.insert("MY_API_KEY".into(), api_key.clone());
    fx.parent_env.insert("RANDOM_UNLISTED".into(), "unlisted-value".into());
    fx.parent_env.insert("NPM_CONFIG_REGISTRY".into(), "http://registry.invalid".into());
    let text =
        r#"{"commands": [{"argv": ["env"], "env": {"NODE_ENV": "test"}}], "env_passthrough": ["NPM_CONFIG_REGISTRY"]}"#;
    let outcome = fx.run(&profile(text)).await;
    assert_eq!(outcome.status, TestStatus::Passed);
    let log = fx.log();
    let vars: Vec<&str> = log.lines().filter(|l| l.contains('=') && !l.starts_with("$ ")).collect();
    // A passed-through value is given to the run on purpose: the log masks it (design §7.1).
    for expected in ["CI=true", "NODE_ENV=test", "LC_ALL=C", "NPM_CONFIG_REGISTRY=[REDACTED:env-value]"] {
        assert!(vars.contains(&expected), "{expected} missing from {vars:?}");
    }
    assert!(vars.iter().any(|v| v.starts_with("PATH=")) && vars.iter().any(|v| v.starts_with("HOME=")));
    for absent in ["GH_TOKEN", "MY_API_KEY", "RANDOM_UNLISTED"] {
        assert!(!vars.iter().any(|v| v.starts_with(absent)), "{absent} leaked: {vars:?}");
    }
    // Absent, not merely redacted: the default redactor knows neither value.
    assert!(!log.contains(&gh_token) && !log.contains(&api_key));
}

#[tokio::test]
async fn credential_names_are_refused_even_when_passed_through() {
    // The commands file cannot ask for them ...
    let refused = parse_commands(r#"{"commands": [["env"]], "env_passthrough": ["GH_TOKEN"]}"#).unwrap_err();
    assert_eq!(refused, CommandsError::CredentialPassthrough("GH_TOKEN".into()));
    // ... and a profile built in code that does is still not obeyed.
    let mut fx = Fixture::new();
    let gh_token = generated_secret("ghp_");
    fx.parent_env.insert("GH_TOKEN".into(), gh_token.clone());
    fx.parent_env.insert("MY_API_KEY".into(), generated_secret("k"));
    let mut forged =
        CommandsProfile::of(vec![CommandSpec { argv: vec!["env".into()], timeout_s: None, env: Default::default() }]);
    forged.env_passthrough = vec!["GH_TOKEN".into(), "MY_API_KEY".into()];
    let env = build_env(&fx.parent_env, &forged, &forged.commands[0]);
    assert!(!env.contains_key("GH_TOKEN") && !env.contains_key("MY_API_KEY"));
    assert_eq!(env.get("CI").map(String::as_str), Some("true"));
    fx.run(&forged).await;
    let log = fx.log();
    assert!(!log.contains("GH_TOKEN") && !log.contains(&gh_token) && !log.contains("MY_API_KEY"), "{log}");
}

#[tokio::test]
async fn a_known_secret_printed_by_a_test_never_reaches_the_log_or_failure_output() {
    let mut fx = Fixture::new();
    let secret = generated_secret("ghp_");
    fx.redactor = Redactor::builder().known_value("test-secret", &secret).build();
    // The test gets the value through its own env entry (as a leaked token would arrive) and
    // prints it on stdout, on stderr and split across two writes.
    let half = secret.len() / 2;
    let text = serde_json::json!({"commands": [{
        "argv": ["sh", "-c", "echo \"token=$VALUE\"; echo \"again $VALUE\" >&2; printf '%s' \"$A\"; sleep 0.1; printf '%s\\n' \"$B\"; exit 1"],
        "env": {"VALUE": secret, "A": &secret[..half], "B": &secret[half..]}
    }]});
    let outcome = fx.run(&profile(&text.to_string())).await;
    assert_eq!(outcome.status, TestStatus::Failed);
    let log = fx.log();
    let failure = outcome.failure_output.unwrap();
    assert!(!log.contains(&secret), "{log}");
    assert!(!failure.contains(&secret), "{failure}");
    assert!(log.contains("token=[REDACTED") && failure.contains("again [REDACTED"), "{log}");
}

#[tokio::test]
async fn an_empty_profile_fails_without_running_anything() {
    let fx = Fixture::new();
    let empty = CommandsProfile::of(vec![]);
    let outcome = fx.run(&empty).await;
    assert_eq!(outcome.status, TestStatus::Failed);
    assert!(outcome.commands.is_empty());
}

#[tokio::test]
async fn runner_errors_are_for_the_runner_itself() {
    let mut fx = Fixture::new();
    let commands = profile(r#"[["true"]]"#);
    fx.checkout = fx.dir.path().join("missing");
    assert!(matches!(fx.try_run(&commands).await, Err(RunnerError::Checkout(_))));

    let mut fx = Fixture::new();
    let blocker = fx.dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    fx.log_path = blocker.join("run.log");
    let error = fx.try_run(&commands).await.unwrap_err();
    assert!(matches!(error, RunnerError::LogCreate { .. }), "{error:?}");
    assert!(error.to_string().contains("cannot create the run log"));

    // A log that cannot be written (a full disk) is an error too, not a test verdict.
    let mut fx = Fixture::new();
    fx.log_path = "/dev/full".into();
    let error = fx.try_run(&commands).await.unwrap_err();
    assert!(matches!(error, RunnerError::LogWrite { .. }), "{error:?}");
}
