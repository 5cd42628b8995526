//! The streaming redactor never lets a known value through, wherever it sits in the text and
//! however the text is cut into writes (design §7).
//!
//! Input layout: byte 0 = secret length (8..=47), byte 1 = first write size, then the secret's
//! raw bytes (mapped onto a token alphabet), then the surrounding text, into which the secret
//! is spliced at three places decided by the input.
#![no_main]

use std::io::Write;

use forgeloop::redact::Redactor;
use libfuzzer_sys::fuzz_target;

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let len = 8 + usize::from(data[0] % 40);
    let first_write = 1 + usize::from(data[1]);
    let rest = &data[2..];
    if rest.len() < len {
        return;
    }
    let secret: String = rest[..len].iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect();
    let redactor = Redactor::builder().known_value("github-token", &secret).build();
    // Values the redactor deliberately ignores (too plain to be secrets) prove nothing here.
    if redactor.redact(&secret).contains(&secret) {
        return;
    }
    let text = &rest[len..];
    let cut = |k: usize| if text.is_empty() { 0 } else { usize::from(rest[k % len]) * 7919 % (text.len() + 1) };
    let mut points = [cut(0), cut(1), cut(2)];
    points.sort_unstable();
    let mut input = Vec::with_capacity(text.len() + 3 * len);
    let mut last = 0;
    for p in points {
        input.extend_from_slice(&text[last..p]);
        input.extend_from_slice(secret.as_bytes());
        last = p;
    }
    input.extend_from_slice(&text[last..]);

    let mut stream = redactor.stream(Vec::new());
    let mut at = 0;
    let mut size = first_write;
    while at < input.len() {
        let end = (at + size).min(input.len());
        stream.write_all(&input[at..end]).expect("writing to a Vec cannot fail");
        at = end;
        size = 1 + (size * 31 + 7) % 97;
    }
    let out = stream.finish().expect("finishing into a Vec cannot fail");
    let out = String::from_utf8_lossy(&out);
    assert!(!out.contains(&secret), "the known value survived streaming redaction");
});
