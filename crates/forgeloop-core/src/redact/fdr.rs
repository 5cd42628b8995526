//! One pass over the text for the whole keyword table (design §7.4). Teddy, the SIMD searcher
//! the rest of redaction uses, takes 64 keywords at a time, and the table has a few hundred:
//! seven passes, plus a case-folded copy of the text for the keywords that match in any case.
//! This searcher does them all in one pass, the way Hyperscan's FDR does: every keyword's first
//! four bytes, read as three overlapping byte pairs (case folded, hashed to 13 bits), clear
//! bits in a "cannot start here" mask; a shift-or over the text combines the masks of three
//! consecutive pairs, eight positions at a time, and a position whose mask is not all ones is
//! checked against the keywords that start with its three bytes. Keywords of three bytes leave
//! their third pair free. Case is checked last, per keyword.

/// Pairs hash to this many bits: 8192 masks of four bytes stay in the L1 cache.
const DOMAIN_BITS: u32 = 13;
const DOMAINS: usize = 1 << DOMAIN_BITS;
/// Keywords are spread over this many buckets (one bit each in a mask byte).
const BUCKETS: usize = 8;
/// Buckets for three-byte keywords, whose third pair matches anything.
const SHORT_BUCKETS: usize = 2;

struct Literal {
    /// As given (exact keywords) or lowercased (`any_case` ones).
    bytes: Box<[u8]>,
    any_case: bool,
}

pub(crate) struct Fdr {
    /// Per pair hash: byte `2 - j` has bit `b` set when no keyword of bucket `b` has this pair
    /// at offset `j` (so a shift by the position lines a start's three bytes up).
    reach: Box<[u32; DOMAINS]>,
    /// The first three bytes (folded) of each keyword, with its index; longest keyword first
    /// among equal keys.
    starts: Vec<(u32, u32)>,
    /// Where each hash of the first three bytes begins in `starts` (sorted by hash first):
    /// most positions the shift-or lets through (pairs that collide, or that start different
    /// keywords) find an empty range and stop there.
    start_index: Box<[u16; START_SLOTS + 1]>,
    literals: Vec<Literal>,
}

const START_SLOTS: usize = 4096;

#[inline]
fn start_hash(key: u32) -> usize {
    (key.wrapping_mul(0x9e37_79b1) >> 20) as usize & (START_SLOTS - 1)
}

/// ASCII lowercase without a branch.
#[inline]
fn fold(b: u8) -> u8 {
    b | (u8::from(b.is_ascii_uppercase()) << 5)
}

#[inline]
fn domain(a: u8, b: u8) -> usize {
    ((usize::from(fold(a)) << 6) ^ usize::from(fold(b))) & (DOMAINS - 1)
}

#[inline]
fn start_key(a: u8, b: u8, c: u8) -> u32 {
    u32::from_le_bytes([fold(a), fold(b), fold(c), 0])
}

impl Fdr {
    /// `keywords`: (bytes, any case). `None` when there are none, one is shorter than three
    /// bytes, or there are more than `u32` can count.
    pub(crate) fn new<K: AsRef<[u8]>>(keywords: &[(K, bool)]) -> Option<Fdr> {
        if keywords.is_empty() || u32::try_from(keywords.len()).is_err() {
            return None;
        }
        let literals: Vec<Literal> = keywords
            .iter()
            .map(|(k, any_case)| {
                let k = k.as_ref();
                let bytes = if *any_case { k.to_ascii_lowercase() } else { k.to_vec() };
                Literal { bytes: bytes.into_boxed_slice(), any_case: *any_case }
            })
            .collect();
        if literals.iter().any(|l| l.bytes.len() < 3) {
            return None;
        }
        // Keywords sharing their first pair share a bucket, so they clear the same bits.
        let mut order: Vec<usize> = (0..literals.len()).collect();
        order.sort_by_key(|&i| (literals[i].bytes.len() < 4, literals[i].bytes.to_ascii_lowercase()));
        let long = order.iter().filter(|&&i| literals[i].bytes.len() >= 4).count();
        let short = order.len() - long;
        let mut bucket = vec![0usize; literals.len()];
        for (n, &i) in order.iter().enumerate() {
            bucket[i] = if n < long {
                n * (BUCKETS - SHORT_BUCKETS) / long.max(1)
            } else {
                BUCKETS - SHORT_BUCKETS + (n - long) * SHORT_BUCKETS / short.max(1)
            };
        }
        let mut reach = Box::new([0x00ff_ffffu32; DOMAINS]);
        for (i, lit) in literals.iter().enumerate() {
            let b = lit.bytes.as_ref();
            let pairs = (b.len() - 1).min(3);
            for j in 0..pairs {
                reach[domain(b[j], b[j + 1])] &= !(1u32 << (8 * (2 - j) + bucket[i]));
            }
            if pairs < 3 {
                for mask in reach.iter_mut() {
                    *mask &= !(1u32 << bucket[i]);
                }
            }
        }
        let mut starts: Vec<(u32, u32)> = literals
            .iter()
            .enumerate()
            .filter_map(|(i, l)| Some((start_key(l.bytes[0], l.bytes[1], l.bytes[2]), u32::try_from(i).ok()?)))
            .collect();
        starts.sort_by_key(|&(key, i)| (start_hash(key), key, std::cmp::Reverse(literals[i as usize].bytes.len())));
        let count = u16::try_from(starts.len()).ok()?;
        let mut start_index = Box::new([count; START_SLOTS + 1]);
        for (n, &(key, _)) in starts.iter().enumerate().rev() {
            start_index[start_hash(key)] = n as u16;
        }
        // An empty slot begins where the next one does.
        for slot in (0..START_SLOTS).rev() {
            start_index[slot] = start_index[slot].min(start_index[slot + 1]);
        }
        Some(Fdr { reach, starts, start_index, literals })
    }

    /// The first keyword starting at or after `from`, the longest of those starting there:
    /// (start, end, keyword index).
    pub(crate) fn find(&self, hay: &[u8], from: usize) -> Option<(usize, usize, u32)> {
        let mut base = from;
        // Starts before `from` (the two the first block also sees) never match.
        let mut carry: u64 = 0xffff;
        while let Some(block) = hay.get(base..base + 9) {
            let m: [u64; 8] = std::array::from_fn(|k| u64::from(self.reach[domain(block[k], block[k + 1])]));
            // Byte `i` of `y` is the start `base - 2 + i`; the last two positions' masks reach
            // two starts past this block, which the next block completes.
            let y =
                carry | m[0] | m[1] << 8 | m[2] << 16 | m[3] << 24 | m[4] << 32 | m[5] << 40 | m[6] << 48 | m[7] << 56;
            carry = (m[6] >> 16) | (m[7] >> 8);
            // The bytes with a bucket still open, in order.
            let mut open = !y;
            while open != 0 {
                let i = open.trailing_zeros() as usize / 8;
                open &= !(0xff << (8 * i));
                if let Some(found) = (base + i).checked_sub(2).filter(|&s| s >= from).and_then(|s| self.confirm(hay, s))
                {
                    return Some(found);
                }
            }
            base += 8;
        }
        // The last few starts (and those of a short text), one by one.
        (base.saturating_sub(2).max(from)..hay.len()).find_map(|s| self.confirm(hay, s))
    }

    /// Positions the shift-or lets through to `confirm` (for profiling).
    #[cfg(test)]
    pub(crate) fn candidates(&self, hay: &[u8]) -> (usize, std::time::Duration) {
        let started = std::time::Instant::now();
        let (mut n, mut base, mut carry) = (0usize, 0usize, 0xffffu64);
        while let Some(block) = hay.get(base..base + 9) {
            let m: [u64; 8] = std::array::from_fn(|k| u64::from(self.reach[domain(block[k], block[k + 1])]));
            let y =
                carry | m[0] | m[1] << 8 | m[2] << 16 | m[3] << 24 | m[4] << 32 | m[5] << 40 | m[6] << 48 | m[7] << 56;
            carry = (m[6] >> 16) | (m[7] >> 8);
            n += (0..8).filter(|i| (y >> (8 * i)) as u8 != 0xff).count();
            base += 8;
        }
        (n, started.elapsed())
    }

    /// The longest keyword that starts at `s`, with its case checked.
    #[inline]
    fn confirm(&self, hay: &[u8], s: usize) -> Option<(usize, usize, u32)> {
        let key = match hay.get(s..s + 3) {
            Some(&[a, b, c]) => start_key(a, b, c),
            _ => return None,
        };
        let h = start_hash(key);
        let (first, end) = (usize::from(self.start_index[h]), usize::from(self.start_index[h + 1]));
        self.starts.get(first..end)?.iter().filter(|&&(k, _)| k == key).find_map(|&(_, i)| {
            let lit = &self.literals[i as usize];
            let text = hay.get(s..s + lit.bytes.len())?;
            // Keywords are short: a loop beats a call to `memcmp`.
            let same = if lit.any_case {
                text.eq_ignore_ascii_case(&lit.bytes)
            } else {
                text.iter().zip(lit.bytes.iter()).all(|(a, b)| a == b)
            };
            same.then_some((s, s + lit.bytes.len(), i))
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What `find` must say, by brute force.
    fn naive(keywords: &[(&[u8], bool)], hay: &[u8], from: usize) -> Option<(usize, usize, u32)> {
        (from..hay.len()).find_map(|s| {
            let mut best: Option<(usize, usize, u32)> = None;
            for (i, (k, any_case)) in keywords.iter().enumerate() {
                let Some(text) = hay.get(s..s + k.len()) else { continue };
                let same = if *any_case { text.eq_ignore_ascii_case(k) } else { text == *k };
                if same && best.is_none_or(|b| k.len() > b.1 - b.0) {
                    best = Some((s, s + k.len(), i as u32));
                }
            }
            best
        })
    }

    fn all(fdr: &Fdr, hay: &[u8]) -> Vec<(usize, usize, u32)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(hit) = fdr.find(hay, pos) {
            out.push(hit);
            pos = hit.0 + 1;
        }
        out
    }

    #[test]
    fn every_start_yields_its_longest_keyword_in_the_right_case() {
        let keywords: &[(&[u8], bool)] =
            &[(b"ghp_", false), (b"passw", false), (b"password", true), (b"sk-", false), (b"TOKEN", false)];
        let fdr = Fdr::new(keywords).unwrap();
        let hay = b"x ghp_abc PASSWORD passw0rd sk-1 token TOKEN Ghp_ ghp";
        let found: Vec<(usize, usize)> = all(&fdr, hay).iter().map(|h| (h.0, h.1)).collect();
        let want: Vec<(usize, usize)> = all_naive(keywords, hay);
        assert_eq!(found, want);
        assert_eq!(found, vec![(2, 6), (10, 18), (19, 24), (28, 31), (39, 44)]);
    }

    fn all_naive(keywords: &[(&[u8], bool)], hay: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(hit) = naive(keywords, hay, pos) {
            out.push((hit.0, hit.1));
            pos = hit.0 + 1;
        }
        out
    }

    #[test]
    fn keywords_shorter_than_three_bytes_are_refused() {
        assert!(Fdr::new(&[(b"ab".as_slice(), false)]).is_none());
        assert!(Fdr::new::<&[u8]>(&[]).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn agrees_with_brute_force(
            keywords in proptest::collection::vec(("[a-dA-D_/:.-]{3,9}", any::<bool>()), 1..40),
            hay in "[a-dA-D_/:. -]{0,300}",
            from in 0usize..40,
        ) {
            let keywords: Vec<(&[u8], bool)> = keywords.iter().map(|(k, c)| (k.as_bytes(), *c)).collect();
            let fdr = Fdr::new(&keywords).unwrap();
            let hay = hay.as_bytes();
            let found = fdr.find(hay, from).map(|h| (h.0, h.1));
            prop_assert_eq!(found, naive(&keywords, hay, from).map(|h| (h.0, h.1)));
        }
    }
}
