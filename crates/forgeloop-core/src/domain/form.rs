//! `application/x-www-form-urlencoded`, the OAuth endpoints' and query strings' encoding:
//! one encoder and one decoder for the remote connector's server and the demo's client.

use std::collections::HashMap;

/// `k=v&k=v`, each byte outside the unreserved set as `%XX` and a space as `+`.
pub fn encode(pairs: &[(&str, &str)]) -> String {
    pairs.iter().map(|(k, v)| format!("{}={}", escape(k), escape(v))).collect::<Vec<_>>().join("&")
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(char::from(b)),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The pairs of a query string or a form body; a name given twice keeps its first value
/// (`+` is a space, `%XX` a byte, a bad escape stays as it is, bad UTF-8 is replaced).
pub fn decode(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.entry(unescape(k)).or_insert_with(|| unescape(v));
    }
    out
}

/// The value of `name` in a query string, if it is there.
pub fn value(text: &str, name: &str) -> Option<String> {
    text.split('&').filter_map(|pair| pair.split_once('=')).find(|(k, _)| unescape(k) == name).map(|(_, v)| unescape(v))
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match text.get(i + 1..i + 3).and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_round_trip_and_bad_escapes_stay() {
        let encoded = encode(&[("code", "a b/c"), ("state", "x&y=z")]);
        assert_eq!(decode(&encoded)["code"], "a b/c");
        assert_eq!(decode(&encoded)["state"], "x&y=z");
        assert_eq!(decode("a=%zz&b=%4")["a"], "%zz");
        assert_eq!(decode("a=%zz&b=%4")["b"], "%4");
        assert_eq!(decode("a=1&a=2")["a"], "1");
        assert_eq!(value("code=x%2By&state=s+t", "state").as_deref(), Some("s t"));
        assert_eq!(value("code=x", "state"), None);
    }
}
