//! Sample secrets for the rows of the formats table, generated at run time from a seed: the
//! right prefix, then random characters of the right class and length. The table tests mask
//! every row's sample and leave its near misses alone; no full-length token is ever written in
//! the repository.
// Built only for the table tests (`#[cfg(test)] mod samples`): nothing here ships.

/// SplitMix64: tiny, deterministic, good enough for test data.
#[derive(Clone, Debug)]
pub(crate) struct Seed(u64);

/// Substrings the generic rule treats as placeholders: generated values avoid them, so a
/// sample never passes or fails by luck.
const PLACEHOLDER_PARTS: &[&str] = &[
    "xxxx", "test", "fake", "mock", "todo", "dummy", "sample", "insert", "lorem", "foobar", "example", "change", "your",
];

impl Seed {
    pub(crate) fn new(seed: u64) -> Seed {
        Seed(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next_u64() % n as u64) as usize }
    }

    /// `len` characters drawn from `alphabet` (ASCII).
    pub(crate) fn chars(&mut self, alphabet: &str, len: usize) -> String {
        let a = alphabet.as_bytes();
        (0..len).map(|_| a.get(self.below(a.len())).map_or('a', |&b| b as char)).collect()
    }

    /// Like `chars`, but with at least one uppercase letter, lowercase letter and digit where
    /// the alphabet has them (as real tokens of any length almost always have) and no
    /// placeholder word. Gives up after many tries (a tiny `len`) and returns the last draw.
    pub(crate) fn mixed(&mut self, alphabet: &str, len: usize) -> String {
        let has = |pred: fn(&u8) -> bool| alphabet.as_bytes().iter().any(pred);
        let wants = [has(u8::is_ascii_uppercase), has(u8::is_ascii_lowercase), has(u8::is_ascii_digit)];
        let mut s = String::new();
        for _ in 0..10_000 {
            s = self.chars(alphabet, len);
            let ok = (!wants[0] || s.bytes().any(|b| b.is_ascii_uppercase()))
                && (!wants[1] || s.bytes().any(|b| b.is_ascii_lowercase()))
                && (!wants[2] || s.bytes().any(|b| b.is_ascii_digit()));
            let lower = s.to_ascii_lowercase();
            if ok && !PLACEHOLDER_PARTS.iter().any(|p| lower.contains(p)) {
                break;
            }
        }
        s
    }

    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or_default()
    }
}

/// A generated example of one format: the text to redact and the secret in it that must not
/// survive (the whole text for a bare token).
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub(crate) text: String,
    pub(crate) secret: String,
}

impl Sample {
    /// A token recognisable by its shape alone.
    pub(crate) fn token(secret: String) -> Sample {
        Sample { text: secret.clone(), secret }
    }

    /// A secret that needs its surrounding text (`password = …`, a header, a URL).
    pub(crate) fn carried(secret: String, text: String) -> Sample {
        Sample { text, secret }
    }
}
