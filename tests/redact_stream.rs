//! The streaming redactor: for every chunking its output equals whole-text redaction of the
//! same bytes (decoded as `from_utf8_lossy` would), secrets split across writes or across a
//! long line's windows are caught, and memory stays bounded on a line with no newline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/redact_corpus.rs"]
mod redact_corpus;
#[path = "support/redact_secrets.rs"]
mod redact_secrets;

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use forgeloop::redact::Redactor;
use redact_corpus::{CARRIED_CONTEXTS, CONTEXTS, embed, realistic_log};
use redact_secrets::{B62, Rng, all_families, private_key_pem};

const TOKEN: &str = "k9Xq2LmZ7vB4nR8tW3yH";

fn redactor() -> Redactor {
    Redactor::builder()
        .known_value("github-token", TOKEN)
        .home_dir(Path::new("/home/dev"))
        .build()
        .with_checkout(Path::new("/tmp/forgeloop-run/checkout"))
}

fn whole(r: &Redactor, input: &[u8]) -> String {
    r.redact(&String::from_utf8_lossy(input)).into_owned()
}

fn streamed(r: &Redactor, input: &[u8], sizes: &mut dyn FnMut(usize) -> usize) -> String {
    let mut s = r.stream(Vec::new());
    let mut pos = 0;
    while pos < input.len() {
        let n = sizes(pos).clamp(1, input.len() - pos);
        s.write_all(&input[pos..pos + n]).unwrap();
        pos += n;
    }
    String::from_utf8(s.finish().unwrap()).unwrap()
}

/// Inputs with every awkward feature: secrets, a PEM block, colour codes, CRLF, invalid and
/// split UTF-8, a partial last line.
fn tricky_inputs() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(99);
    let pem = private_key_pem(&mut rng, "RSA PRIVATE KEY", 3);
    let gh = format!("ghp_{}", rng.mixed(B62, 36));
    let mut inputs: Vec<Vec<u8>> = vec![
        format!("push with {gh} failed\nnext line\n").into_bytes(),
        format!("log start\n{pem}\nlog end\n").into_bytes(),
        format!("\x1b[31m{gh}\x1b[0m and \x1b[32mok\x1b[0m\r\nsecond {TOKEN}\r\n").into_bytes(),
        format!(
            "  File \"/tmp/forgeloop-run/checkout/t.py\", line 1\npassword = \"Xk9#mQ2$vL7pZ4\"\nno newline at end {gh}"
        )
        .into_bytes(),
        format!("key: -----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0B\n{gh}\nunterminated block\n").into_bytes(),
    ];
    let mut bad = b"caf\xc3\xa9 \xff\xfe broken \xe2\x82 euro \xe2\x82\xac ".to_vec();
    bad.extend_from_slice(format!("{gh} ").as_bytes());
    bad.extend_from_slice(b"\xf0\x9f\x98");
    inputs.push(bad);
    inputs
}

#[test]
fn every_single_split_point_gives_the_whole_text_result() {
    let r = redactor();
    for input in tricky_inputs() {
        let expected = whole(&r, &input);
        for split in 0..=input.len() {
            let got = streamed(&r, &input, &mut |pos| if pos == 0 { split.max(1) } else { usize::MAX });
            assert_eq!(got, expected, "split at {split}");
        }
        assert_eq!(streamed(&r, &input, &mut |_| 1), expected, "one byte at a time");
        let mut rng = Rng::new(input.len() as u64);
        for _ in 0..20 {
            assert_eq!(streamed(&r, &input, &mut |_| 1 + rng.below(9)), expected, "random small chunks");
        }
    }
}

#[test]
fn secrets_split_across_writes_are_caught() {
    let r = Redactor::default();
    let mut rng = Rng::new(1);
    for sample in all_families(&mut rng) {
        let context = if sample.standalone { CONTEXTS[2] } else { CARRIED_CONTEXTS[1] };
        let input = embed(context, &sample);
        let bytes = input.as_bytes();
        for split in 1..bytes.len() {
            let got = streamed(&r, bytes, &mut |pos| if pos == 0 { split } else { usize::MAX });
            assert!(!got.contains(&sample.secret), "{} split at {split}", sample.family);
            assert_eq!(got, r.redact(&input), "{} split at {split}", sample.family);
        }
    }
}

#[test]
fn realistic_log_streams_like_whole_text() {
    let r = redactor();
    let (log, secrets) = realistic_log(7, 1 << 20, 8 * 1024);
    let expected = r.redact(&log).into_owned();
    let mut rng = Rng::new(5);
    for max in [1usize << 4, 1 << 9, 1 << 13, 1 << 17] {
        let got = streamed(&r, log.as_bytes(), &mut |_| 1 + rng.below(max));
        assert!(got == expected, "chunks up to {max} bytes differ from whole-text output");
    }
    for secret in &secrets {
        assert!(!expected.contains(secret.as_str()));
    }
}

/// A writer whose contents the test can read while the stream still owns it.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn ten_megabyte_line_is_windowed_and_secrets_on_window_edges_are_caught() {
    let r = redactor();
    let mut rng = Rng::new(3);
    let filler_unit = "abc;";
    let mut line = String::with_capacity(10 << 20);
    let mut secrets = Vec::new();
    // Secrets around every place a window could be cut or end.
    let window: isize = 1 << 20;
    let overlap: isize = 96 * 1024;
    let mut marks: Vec<usize> = Vec::new();
    for k in 1..10 {
        for delta in [-overlap - 40, -overlap - 5, -overlap, -60, -25, -3, 0, 7] {
            marks.push((k * window + delta) as usize);
        }
    }
    marks.sort_unstable();
    for mark in marks {
        while line.len() < mark {
            line.push_str(filler_unit);
        }
        let secret = match secrets.len() % 4 {
            0 => format!("ghp_{}", rng.mixed(B62, 36)),
            1 => TOKEN.to_owned(),
            2 => format!("AKIA{}", rng.chars(redact_secrets::AWS_ID, 16)),
            _ => format!("sk-ant-api03-{}AA", rng.mixed(redact_secrets::B64URL, 93)),
        };
        line.push_str(&secret);
        line.push(';');
        secrets.push(secret);
    }
    while line.len() < 10 << 20 {
        line.push_str(filler_unit);
    }
    line.push_str(" /home/dev/end");

    let expected = r.redact(&line).into_owned();
    for secret in &secrets {
        assert!(!expected.contains(secret.as_str()), "whole text kept a secret");
    }
    assert!(expected.ends_with(" ~/end"));

    for chunk in [4093usize, 65_536 + 7] {
        let sink = Shared::default();
        let mut s = r.stream(sink.clone());
        let half = line.len() / 2;
        let mut pos = 0;
        while pos < half {
            let n = chunk.min(half - pos);
            s.write_all(&line.as_bytes()[pos..pos + n]).unwrap();
            pos += n;
        }
        let emitted = sink.0.borrow().len();
        assert!(emitted > half - (3 << 20), "only {emitted} bytes out after {half} in: the line is being buffered");
        while pos < line.len() {
            let n = chunk.min(line.len() - pos);
            s.write_all(&line.as_bytes()[pos..pos + n]).unwrap();
            pos += n;
        }
        s.finish().unwrap();
        let got = String::from_utf8(sink.0.borrow().clone()).unwrap();
        assert!(got == expected, "stream with {chunk}-byte chunks differs from whole text");
    }
}

#[test]
fn pem_block_split_across_chunks_is_masked_whole() {
    let r = Redactor::default();
    let mut rng = Rng::new(8);
    let pem = private_key_pem(&mut rng, "OPENSSH PRIVATE KEY", 20);
    let input = format!("before\n{pem}\nafter\n");
    let body = pem.lines().nth(5).unwrap().to_owned();
    for chunk in [1usize, 3, 64, 65, 500] {
        let got = streamed(&r, input.as_bytes(), &mut |_| chunk);
        assert_eq!(got, "before\n[REDACTED:private-key]\nafter\n", "chunk {chunk}");
        assert!(!got.contains(&body));
    }
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let r = Redactor::default();
    let input = b"ok \xff\xfe \xe2\x82 end \xf0\x9f";
    let got = streamed(&r, input, &mut |_| 1);
    assert_eq!(got, String::from_utf8_lossy(input));
    assert_eq!(got.matches('\u{FFFD}').count(), 4);
}

#[test]
fn colour_codes_are_kept_outside_secrets() {
    let r = Redactor::default();
    let mut rng = Rng::new(2);
    let gh = format!("ghp_{}", rng.mixed(B62, 36));
    let input = format!("\x1b[32mPASS\x1b[0m tests/a.rs\n\x1b[1;31mFAIL\x1b[0m token \x1b[33m{gh}\x1b[0m\n");
    let got = streamed(&r, input.as_bytes(), &mut |_| 5);
    assert_eq!(
        got,
        "\x1b[32mPASS\x1b[0m tests/a.rs\n\x1b[1;31mFAIL\x1b[0m token \x1b[33m[REDACTED:github-token]\x1b[0m\n"
    );
}

#[test]
fn dropping_the_stream_writes_the_last_line() {
    let r = Redactor::default();
    let mut out = Vec::new();
    {
        let mut s = r.stream(&mut out);
        s.write_all(b"first\n/home/alice/x").unwrap();
        s.flush().unwrap();
    }
    assert_eq!(String::from_utf8(out).unwrap(), "first\n[LOCAL_PATH]/x");
}

#[test]
fn a_closed_pem_block_is_written_without_waiting_for_more_input() {
    let r = Redactor::default();
    let mut rng = Rng::new(4);
    let input = format!("{}\n", private_key_pem(&mut rng, "RSA PRIVATE KEY", 4));
    let end_marker = input.find("-----END").unwrap();
    for split in [end_marker - 1, end_marker + 3, input.len() - 10, input.len() - 1] {
        let sink = Shared::default();
        let mut s = r.stream(sink.clone());
        s.write_all(&input.as_bytes()[..split]).unwrap();
        assert!(sink.0.borrow().is_empty(), "wrote part of an open block");
        s.write_all(&input.as_bytes()[split..]).unwrap();
        assert_eq!(String::from_utf8(sink.0.borrow().clone()).unwrap(), "[REDACTED:private-key]\n", "split {split}");
    }
}
