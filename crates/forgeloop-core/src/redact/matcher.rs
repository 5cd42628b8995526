//! Multi-literal search. Teddy (the SIMD searcher inside `aho-corasick`'s `packed` module)
//! is used directly when it can take the pattern set (at most 64 patterns, a CPU with
//! SSSE3/AVX2): it reports matches itself, without the automaton step the general
//! `AhoCorasick` type adds, and keeps its speed for patterns that all start with `/`.
//! Otherwise a full Aho-Corasick automaton does the same job.

use aho_corasick::packed;
use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind, Span};

use super::fdr::Fdr;

pub(crate) enum Matcher {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
    /// The built-in table's keywords, exact and any-case, in one pass.
    SinglePass(Fdr),
}

impl Matcher {
    /// Leftmost-longest matching over `patterns`; `None` for an empty set or one no
    /// searcher could be built for.
    pub(crate) fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Option<Matcher> {
        if patterns.is_empty() {
            return None;
        }
        let packed =
            packed::Config::new().match_kind(packed::MatchKind::LeftmostLongest).builder().extend(patterns).build();
        if let Some(searcher) = packed {
            return Some(Matcher::Packed(searcher));
        }
        let total: usize = patterns.iter().map(|p| p.as_ref().len()).sum();
        let kind = if total > 16 * 1024 { Some(AhoCorasickKind::ContiguousNFA) } else { None };
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(kind)
            .build(patterns)
            .ok()
            .map(Matcher::Automaton)
    }

    /// The leftmost-longest match starting at or after `from`: (start, end, pattern).
    #[inline]
    pub(crate) fn find(&self, hay: &[u8], from: usize) -> Option<(usize, usize, u32)> {
        if from > hay.len() {
            return None;
        }
        match self {
            Matcher::Packed(s) => {
                s.find_in(hay, Span::from(from..hay.len())).map(|m| (m.start(), m.end(), m.pattern().as_u32()))
            }
            Matcher::Automaton(ac) => {
                ac.find(Input::new(hay).span(from..hay.len())).map(|m| (m.start(), m.end(), m.pattern().as_u32()))
            }
            Matcher::SinglePass(fdr) => fdr.find(hay, from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftmost_longest_from_an_offset() {
        let m = Matcher::new(&["/tmp/a", "/tmp/a/checkout", "/home/u"]).unwrap();
        let hay = b"x /tmp/a/checkout/y /home/u";
        assert_eq!(m.find(hay, 0), Some((2, 17, 1)));
        assert_eq!(m.find(hay, 3), Some((20, 27, 2)));
        assert_eq!(m.find(hay, 28), None);
    }

    #[test]
    fn more_than_64_patterns_fall_back_to_an_automaton() {
        let patterns: Vec<String> = (0..100).map(|i| format!("pattern-{i:03}")).collect();
        let m = Matcher::new(&patterns).unwrap();
        assert!(matches!(m, Matcher::Automaton(_)));
        assert_eq!(m.find(b"..pattern-042..", 0), Some((2, 13, 42)));
    }
}
