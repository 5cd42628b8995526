//! Properties of the redactor over generated text: idempotence, streaming equals whole-text
//! for every chunking, and no registered known value survives in any encoding.
//! `REDACT_CASES=5000 cargo test --test redact_props` runs a longer search; fewer than 32 cases
//! are refused (the test fails rather than pass on next to nothing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/knob.rs"]
mod knob;
#[path = "support/redact_corpus.rs"]
mod redact_corpus;
#[path = "support/redact_secrets.rs"]
mod redact_secrets;

use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use forgeloop::redact::Redactor;
use proptest::prelude::*;
use redact_corpus::{CARRIED_CONTEXTS, CONTEXTS, benign_lines, embed};
use redact_secrets::{Rng, all_families};

const TOKEN: &str = "k9Xq2LmZ7vB4nR8tW3yH";

/// Generated inputs per property: REDACT_CASES (default 384; under 32 is refused).
fn cases() -> u32 {
    knob::knob("REDACT_CASES", 384, 32, "a property checked on a handful of inputs is barely checked")
        .min(u64::from(u32::MAX)) as u32
}

#[test]
fn a_case_count_that_would_empty_the_properties_is_refused() {
    for value in ["0", "31", "lots"] {
        let (passed, out) = knob::run_self_with("redaction_is_idempotent", "REDACT_CASES", value);
        assert!(!passed && out.contains("REDACT_CASES"), "REDACT_CASES={value} passed:\n{out}");
    }
}

fn redactor() -> Redactor {
    Redactor::builder()
        .known_value("github-token", TOKEN)
        .env_vars([("DEPLOY_PASSWORD", "hunter2-Corr3ct-horse")])
        .home_dir(Path::new("/home/dev"))
        .build()
        .with_checkout(Path::new("/tmp/forgeloop-run/checkout"))
}

/// Pieces text is built from: secrets in context, benign lines, the syntax rules key on,
/// colour codes, line breaks and arbitrary characters, so pieces combine into near-misses.
fn fragment() -> impl Strategy<Value = String> {
    let benign = benign_lines();
    prop_oneof![
        (any::<u64>(), 0..CONTEXTS.len()).prop_map(|(seed, c)| {
            let mut rng = Rng::new(seed);
            let samples = all_families(&mut rng);
            let sample = &samples[rng.below(samples.len())];
            let context = if sample.standalone { CONTEXTS[c] } else { CARRIED_CONTEXTS[c % CARRIED_CONTEXTS.len()] };
            embed(context, sample)
        }),
        proptest::sample::select(benign).prop_map(|l| format!("{l}\n")),
        proptest::sample::select(vec![
            "token=",
            "password: ",
            "\"api_key\": \"",
            "Authorization: Bearer ",
            "Bearer ",
            "https://",
            "user:",
            "@",
            "-----BEGIN RSA PRIVATE KEY-----\n",
            "-----END RSA PRIVATE KEY-----\n",
            "MIIEowIBAAKCAQEA7x\n",
            "/home/",
            "/Users/",
            "C:\\Users\\",
            "/tmp/forgeloop-run/checkout",
            "/home/dev",
            "~",
            "ghp_",
            "sk-",
            "eyJ",
            ".eyJ",
            "\x1b[31m",
            "\x1b[0m",
            "\n",
            "\r\n",
            " ",
            "\"",
            "'",
            "`",
            "=",
            ":",
            "[REDACTED:secret]",
            "<checkout>",
            "[LOCAL_PATH]",
            TOKEN,
            "hunter2-Corr3ct-horse",
        ])
        .prop_map(str::to_owned),
        "[ -~]{0,24}",
        "\\PC{0,12}",
        "[A-Za-z0-9+/=_-]{8,60}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(fragment(), 0..24).prop_map(|parts| parts.concat())
}

fn stream(r: &Redactor, bytes: &[u8], sizes: &[usize]) -> String {
    let mut s = r.stream(Vec::new());
    let mut pos = 0;
    let mut i = 0;
    while pos < bytes.len() {
        let n = sizes.get(i % sizes.len().max(1)).copied().unwrap_or(7).clamp(1, bytes.len() - pos);
        s.write_all(&bytes[pos..pos + n]).unwrap();
        pos += n;
        i += 1;
    }
    String::from_utf8(s.finish().unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn redaction_is_idempotent(input in text()) {
        let r = redactor();
        let once = r.redact(&input).into_owned();
        let twice = r.redact(&once).into_owned();
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn streaming_equals_whole_text_for_every_chunking(
        input in text(),
        junk in proptest::collection::vec(any::<u8>(), 0..6),
        at in any::<prop::sample::Index>(),
        sizes in proptest::collection::vec(1usize..40, 1..8),
    ) {
        let r = redactor();
        let mut bytes = input.into_bytes();
        let at = at.index(bytes.len() + 1);
        bytes.splice(at..at, junk);
        let expected = r.redact(&String::from_utf8_lossy(&bytes)).into_owned();
        prop_assert_eq!(stream(&r, &bytes, &sizes), expected);
    }

    #[test]
    fn no_known_value_survives_in_any_encoding(
        value in "[A-Za-z0-9!#%&()*+,./:;=?@^_~ -]{8,40}".prop_filter("varied", |v| {
            let mut b: Vec<u8> = v.trim().bytes().collect();
            b.sort_unstable();
            b.dedup();
            b.len() >= 6 && v.trim().len() >= 8
        }),
        before in "[ -~]{0,20}",
        after in "[ -~]{0,20}",
        shift in 0usize..3,
    ) {
        let value = value.trim().to_owned();
        let r = Redactor::builder().env_vars([("SERVICE_API_KEY", value.as_str())]).build();
        let json = serde_json::to_string(&value).unwrap();
        let url: String = value
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let standalone = [
            value.clone(),
            json[1..json.len() - 1].to_owned(),
            url,
            STANDARD.encode(&value),
            URL_SAFE_NO_PAD.encode(&value),
        ];
        for form in standalone {
            let input = format!("{before}{form}{after}");
            let out = r.redact(&input);
            prop_assert!(!out.contains(&form), "form {:?} survived in {:?}", form, out);
            prop_assert!(!out.contains(&value), "value survived in {:?}", out);
        }
        let embedded = STANDARD.encode(format!("{}{value}{after}", "x".repeat(shift)));
        let out = r.redact(&embedded);
        prop_assert!(out.contains("[REDACTED:env-secret]"), "inside longer base64: {:?}", out);
    }
}
