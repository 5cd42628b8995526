//! `application/x-www-form-urlencoded`, the OAuth endpoints' and query strings' encoding:
//! one encoder and one decoder for the remote connector's server and the demo's client.

use std::collections::HashMap;

/// `k=v&k=v`: `form_urlencoded`'s serializer (a space as `+`, every byte outside
/// `A-Z a-z 0-9 * - . _` as `%XX`).
pub fn encode(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs.iter().copied()).finish()
}

/// The pairs of a query string or a form body; a name given twice keeps its first value
/// (`+` is a space, `%XX` a byte, a bad escape stays as it is, bad UTF-8 is replaced).
pub fn decode(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (k, v) in form_urlencoded::parse(text.as_bytes()) {
        out.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    out
}

/// The value of `name` in a query string, if it is there (its first).
pub fn value(text: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(text.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
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
