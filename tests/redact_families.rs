//! Every secret family of design §7, generated at test time, in realistic contexts: none
//! survives, the mask names the kind, and benign text comes out byte-for-byte unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/redact_corpus.rs"]
mod redact_corpus;
#[path = "support/redact_secrets.rs"]
mod redact_secrets;

use std::borrow::Cow;
use std::path::Path;

use forgeloop::redact::{RULE_KINDS, Redactor, explain_report};
use redact_corpus::{CARRIED_CONTEXTS, CONTEXTS, benign_lines, embed, path_cases, realistic_log};
use redact_secrets::{Rng, all_families, known_value};

/// The output around `needle`, short enough for an assertion message.
fn excerpt(out: &str, needle: &str) -> String {
    let at = out.find(needle).unwrap_or(0);
    let mut start = at.saturating_sub(120);
    while !out.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + needle.len() + 120).min(out.len());
    while !out.is_char_boundary(end) {
        end += 1;
    }
    format!("{:?}", &out[start..end])
}

/// Neither the secret nor any 12-character piece of it is in `out`.
fn assert_gone(out: &str, secret: &str, what: &str) {
    assert!(!out.contains(secret), "{what}: secret survived in {}", excerpt(out, secret));
    for window in secret.as_bytes().windows(12) {
        let Ok(window) = std::str::from_utf8(window) else { continue };
        assert!(!out.contains(window), "{what}: part {window:?} survived in {}", excerpt(out, window));
    }
}

/// `assert_gone` for many secrets in a large output, with one index of the output.
fn assert_all_gone(out: &str, secrets: &[String], what: &str) {
    let pieces: std::collections::HashSet<&[u8]> = out.as_bytes().windows(12).collect();
    for secret in secrets {
        for window in secret.as_bytes().windows(12) {
            assert!(
                !pieces.contains(window),
                "{what}: part {:?} survived in {}",
                String::from_utf8_lossy(window),
                excerpt(out, &String::from_utf8_lossy(window))
            );
        }
    }
}

fn session() -> Redactor {
    Redactor::builder().home_dir(Path::new("/home/dev")).build().with_checkout(Path::new("/tmp/forgeloop-run/checkout"))
}

#[test]
fn reference_f4() {
    let out = Redactor::default().redact("token ghp_abcdefghijklmnopqrstuvwxyz1234567890 /Users/kjun/private/file.txt");
    assert!(!out.contains("ghp_"));
    assert!(!out.contains("/Users/"));
    assert!(out.contains("[REDACTED"));
}

#[test]
fn every_family_in_every_context() {
    let redactor = session();
    for seed in 0..4 {
        let mut rng = Rng::new(seed);
        for sample in all_families(&mut rng) {
            let contexts = if sample.standalone { CONTEXTS } else { CARRIED_CONTEXTS };
            for context in contexts {
                let input = embed(context, &sample);
                let out = redactor.redact(&input);
                let what = format!("{} in {context:?}", sample.family);
                assert_gone(&out, &sample.secret, &what);
                assert!(out.contains("[REDACTED:"), "{what}: no mask in {out:?}");
                assert_eq!(redactor.redact(&out), out, "{what}: not idempotent");
            }
        }
    }
}

#[test]
fn masks_name_the_family() {
    let redactor = Redactor::default();
    let mut rng = Rng::new(7);
    for sample in all_families(&mut rng) {
        let out = redactor.redact(&sample.text);
        let mask = format!("[REDACTED:{}]", sample.family);
        assert!(out.contains(&mask), "{}: expected {mask} in {out:?}", sample.family);
        assert!(RULE_KINDS.contains(&sample.family), "{} is not a listed kind", sample.family);
    }
}

#[test]
fn masks_do_not_reveal_length() {
    let redactor = Redactor::default();
    let mut rng = Rng::new(3);
    let short = format!("sk_live_{}", rng.mixed(redact_secrets::B62, 12));
    let long = format!("sk_live_{}", rng.mixed(redact_secrets::B62, 90));
    assert_eq!(redactor.redact(&short), redactor.redact(&long));
}

#[test]
fn private_keys_in_json_and_yaml() {
    let redactor = Redactor::default();
    let mut rng = Rng::new(11);
    let pem = redact_secrets::private_key_pem(&mut rng, "EC PRIVATE KEY", 5);
    let body_line = pem.lines().nth(2).unwrap().to_owned();

    let json = serde_json::json!({"private_key": pem, "user": "ci"}).to_string();
    let out = redactor.redact(&json);
    assert_gone(&out, &body_line, "JSON-escaped PEM");
    assert!(out.contains("\"user\":\"ci\""), "{out}");

    let yaml = format!(
        "deploy:\n  key: |\n{}\n  user: ci\n",
        pem.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
    );
    let out = redactor.redact(&yaml);
    assert_gone(&out, &body_line, "YAML PEM");
    assert!(out.ends_with("  user: ci\n"), "{out}");
    assert!(out.starts_with("deploy:\n  key: |\n    [REDACTED:private-key]\n"), "{out}");

    let truncated: String =
        pem.lines().take(4).map(|l| format!("{l}\n")).collect::<String>() + "error: log truncated\n";
    let out = redactor.redact(&truncated);
    assert_gone(&out, &body_line, "truncated PEM");
    assert!(out.ends_with("\nerror: log truncated\n"), "{out}");
}

#[test]
fn known_values_in_every_encoding() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let mut rng = Rng::new(5);
    for _ in 0..20 {
        let token = known_value(&mut rng);
        let env_secret = known_value(&mut rng);
        let redactor = Redactor::builder()
            .known_value("github-token", &token)
            .env_vars([("MY_API_TOKEN", env_secret.as_str()), ("PATH", "/usr/bin:/bin"), ("CI", "true")])
            .build();
        for (value, kind) in [(&token, "github-token"), (&env_secret, "env-secret")] {
            let json = serde_json::to_string(value).unwrap();
            let percent = |upper: bool| -> String {
                value
                    .bytes()
                    .map(|b| match b {
                        _ if b.is_ascii_alphanumeric() || b"-._~".contains(&b) => (b as char).to_string(),
                        _ if upper => format!("%{b:02X}"),
                        _ => format!("%{b:02x}"),
                    })
                    .collect()
            };
            let mut forms = vec![
                value.to_string(),
                json[1..json.len() - 1].to_owned(),
                percent(true),
                percent(false),
                STANDARD.encode(value),
                STANDARD_NO_PAD.encode(value),
                URL_SAFE.encode(value),
                URL_SAFE_NO_PAD.encode(value),
            ];
            for prefix in ["", "x", "xy", "x-access-token:", "user:"] {
                forms.push(STANDARD.encode(format!("{prefix}{value}:suffix")));
                forms.push(URL_SAFE_NO_PAD.encode(format!("{prefix}{value}")));
            }
            for form in forms {
                let input = format!("before {form} after\n");
                let out = redactor.redact(&input);
                assert!(out.contains(&format!("[REDACTED:{kind}]")), "{kind} form {form:?}: {out:?}");
                assert!(!out.contains(value.as_str()), "{kind} raw value survived: {out:?}");
                assert_eq!(redactor.redact(&out), out);
            }
        }
        assert!(!redactor.redact("PATH=/usr/bin:/bin CI=true").contains("REDACTED"));
    }
}

#[test]
fn short_and_trivial_known_values_are_ignored() {
    let redactor = Redactor::builder()
        .known_value("github-token", "abc")
        .env_vars([("FEATURE_TOKEN_ENABLED", "true"), ("SESSION_COUNT", "00000000"), ("API_KEY", "1")])
        .build();
    let text = "abc true 1 00000000 enabled\n";
    assert!(matches!(redactor.redact(text), Cow::Borrowed(_)));
}

#[test]
fn benign_corpus_is_unchanged() {
    let redactor = session();
    for line in benign_lines() {
        let out = redactor.redact(&line);
        assert_eq!(out, line, "benign line changed");
        assert!(matches!(out, Cow::Borrowed(_)));
    }
    let joined = benign_lines().join("\n");
    assert_eq!(redactor.redact(&joined), joined);
}

#[test]
fn local_paths() {
    let redactor = session();
    for (input, expected) in path_cases() {
        assert_eq!(redactor.redact(input), expected, "input {input:?}");
        assert_eq!(redactor.redact(expected), expected, "not idempotent for {input:?}");
    }
}

#[test]
fn checkout_is_cheap_to_swap_and_does_not_leak_between_runs() {
    let base = Redactor::builder().known_value("github-token", "k9Xq2LmZ7vB4nR8tW3yH").build();
    let a = base.with_checkout(Path::new("/tmp/run-a/checkout"));
    let b = base.with_checkout(Path::new("/tmp/run-b/checkout"));
    assert_eq!(a.redact("/tmp/run-a/checkout/x k9Xq2LmZ7vB4nR8tW3yH"), "<checkout>/x [REDACTED:github-token]");
    assert_eq!(b.redact("/tmp/run-a/checkout/x"), "/tmp/run-a/checkout/x");
    assert_eq!(b.redact("/tmp/run-b/checkout/x"), "<checkout>/x");
}

#[test]
fn redactor_is_send_sync_clone() {
    fn check<T: Send + Sync + Clone + 'static>() {}
    check::<Redactor>();
    let r = session();
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let r = r.clone();
            std::thread::spawn(move || r.redact(&format!("/home/dev/{i}")).into_owned())
        })
        .collect();
    let outs: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(outs, ["~/0", "~/1"]);
}

#[test]
fn realistic_log_loses_every_secret_and_keeps_its_lines() {
    let redactor = session();
    let (log, secrets) = realistic_log(42, 2 << 20, 10 * 1024);
    assert!(secrets.len() > 150);
    let (out, findings) = redactor.explain(&log);
    assert_all_gone(&out, &secrets, "realistic log");
    assert!(!out.contains("/tmp/forgeloop-run/checkout"));
    assert!(!out.contains("/home/dev"));
    assert!(out.contains("<checkout>/src/cycle/mod.rs:"));
    let secret_findings = findings.iter().filter(|f| !f.kind.ends_with("-dir") && f.kind != "local-path").count();
    assert!(secret_findings >= secrets.len(), "{secret_findings} findings for {} secrets", secrets.len());
    let report = explain_report(&findings);
    let text = report.to_string();
    for secret in secrets.iter().take(20) {
        assert!(!text.contains(secret.as_str()));
    }
    for f in findings.iter().take(50) {
        let line_start = log[..f.start].rfind('\n').map_or(0, |i| i + 1);
        assert_eq!(log[..f.start].matches('\n').count() + 1, f.line);
        assert_eq!(log[line_start..f.start].chars().count() + 1, f.column);
    }
}
