//! User redaction rules from a real config file, through the real binary: `[[redact.rules]]`
//! masks as `[REDACTED:<id>]` in `forgeloop redact` and its `--explain`, and a bad rule stops
//! the command with an error that names it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::io::Write;
use std::process::Stdio;

use support::Sandbox;

const CONFIG: &str = r#"
[[redact.rules]]
id = "acme-token"
regex = '(acme_[A-Za-z0-9]{32})\b'
keywords = ["acme_"]
entropy = 3.0

[[redact.rules]]
id = "corp-session"
regex = '(?i)corp_session\s*=\s*([a-f0-9]{40})'
keywords = ["corp_session"]
"#;

/// Random characters from `alphabet`, made at run time (no token is committed); never the
/// same twice in a process.
fn random(alphabet: &[u8], len: usize) -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let mut state =
        (nanos as u64 ^ (u64::from(std::process::id()) << 32)).wrapping_add(call.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            alphabet[(state >> 33) as usize % alphabet.len()] as char
        })
        .collect()
}

fn acme_token() -> String {
    // Three fixed characters make the mixed classes (and the entropy) certain.
    format!("acme_aZ9{}", random(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 29))
}

fn pipe(sb: &Sandbox, args: &[&str], input: &str) -> (i32, String, String) {
    let mut child =
        sb.command(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn user_rules_from_config_mask_and_are_explained() {
    let sb = Sandbox::new();
    let config = sb.path("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let config = config.to_str().unwrap();
    let token = acme_token();
    let session = random(b"0123456789abcdef", 40);
    let glued = format!("x{}", acme_token());
    let log = format!(
        "deploy with {token}\nCORP_SESSION = {session}\n{glued} stays: not on a token boundary\ntask-runner ok\n"
    );

    let (code, out, err) = pipe(&sb, &["--config", config, "redact"], &log);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(&token) && !out.contains(&session), "{out}");
    assert!(out.starts_with("deploy with [REDACTED:acme-token]\nCORP_SESSION = [REDACTED:corp-session]\n"), "{out}");
    assert!(out.contains(&glued), "{out}");
    assert!(out.contains("task-runner ok"), "{out}");

    let (code, out, err) = pipe(&sb, &["--config", config, "redact", "--explain"], &log);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(&token) && !out.contains(&session), "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["by_kind"]["acme-token"], 1, "{report:#}");
    assert_eq!(report["by_kind"]["corp-session"], 1, "{report:#}");
    assert_eq!(report["findings"][0]["kind"], "acme-token");
    assert_eq!((report["findings"][1]["line"].as_u64(), report["findings"][1]["column"].as_u64()), (Some(2), Some(16)));
    assert_eq!(report["user_rules"], serde_json::json!(["acme-token", "corp-session"]));
}

#[test]
fn the_default_config_file_brings_its_rules_too() {
    let sb = Sandbox::new();
    let dir = sb.path("xdg-config/forgeloop");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), CONFIG).unwrap();
    let token = acme_token();
    let (code, out, err) = pipe(&sb, &["redact"], &format!("{token}\n"));
    assert_eq!((code, out.as_str()), (0, "[REDACTED:acme-token]\n"), "{err}");
}

#[test]
fn a_bad_rule_stops_the_command_and_is_named() {
    let sb = Sandbox::new();
    let config = sb.path("config.toml");
    for (rule, problem) in [
        ("id = \"acme-token\"\nregex = 'acme_[a-z'\nkeywords = [\"acme_\"]", "the regex does not compile"),
        ("id = \"acme-token\"\nregex = 'acme_[a-z]+'\nkeywords = []", "needs at least one keyword"),
        ("id = \"github-token\"\nregex = 'acme_[a-z]+'\nkeywords = [\"acme_\"]", "the id is taken by a built-in rule"),
        ("id = \"Acme Token\"\nregex = 'acme_[a-z]+'\nkeywords = [\"acme_\"]", "the id must be"),
    ] {
        std::fs::write(&config, format!("[[redact.rules]]\n{rule}\n")).unwrap();
        let (code, out, _) = pipe(&sb, &["--config", config.to_str().unwrap(), "redact"], "acme_abcdefgh\n");
        assert_eq!(code, 2, "{out}");
        let error: serde_json::Value = serde_json::from_str(&out).unwrap();
        let message = error["error"].as_str().unwrap();
        assert!(message.contains("redact rule") && message.contains(problem), "{message}");
    }
    let twice = format!("{CONFIG}\n[[redact.rules]]\nid = \"acme-token\"\nregex = 'x'\nkeywords = [\"xyz\"]\n");
    std::fs::write(&config, twice).unwrap();
    let (code, out, _) = pipe(&sb, &["--config", config.to_str().unwrap(), "redact"], "");
    assert_eq!(code, 2);
    assert!(out.contains("redact rule \\\"acme-token\\\": the id is used by an earlier rule"), "{out}");
}
