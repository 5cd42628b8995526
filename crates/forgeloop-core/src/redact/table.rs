//! The formats table and the user rules, compiled: keyword searchers (the prefilter), what a
//! hit on each keyword asks to be checked, and the rows' regexes.
//!
//! The built-in table's keywords, exact and any-case, go to one single-pass searcher
//! (`fdr.rs`). User rules' keywords go to Teddy, the SIMD searcher inside `aho-corasick`,
//! split by how they are searched: Teddy keys on the first four bytes of every pattern (so one
//! three-byte keyword would slow all of them down), so three-byte keywords get their own
//! searcher, and it takes at most 64 patterns, so a longer list is split over several
//! searchers rather than falling back to a slower automaton. Case-insensitive keywords are
//! lowercased and searched, the same way, over a case-folded copy of the text. A hit runs the
//! actions of its keyword and of every shorter keyword of its searcher it starts with;
//! searches restart after each hit's start (`engine::Lane`), so keywords that overlap are all
//! seen.

use std::sync::{LazyLock, OnceLock};

use regex::bytes::{Regex, RegexBuilder};

use super::fdr::Fdr;
use super::formats::{Checks, FORMATS, Pattern, Shape, context_regex};
use super::matcher::Matcher;
use super::paths::{self, PathTrig};
use super::scan::left_boundary;

/// How far past its keyword a regex looks by default: longer than any built-in match and
/// the byte after it.
pub(crate) const MATCH_WINDOW: usize = 8 * 1024;
/// Teddy's pattern limit.
const CHUNK: usize = 64;

/// What a keyword hit asks to be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// A row of the table the prefilter was built for.
    Row(u16),
    Path(PathTrig),
}

/// Keyword searchers; pattern indices are global across the searchers.
pub(crate) struct Prefilter {
    pub(crate) lanes: Vec<Lane>,
    actions: Vec<Vec<Action>>,
}

pub(crate) struct Lane {
    pub(crate) matcher: Matcher,
    /// The global index of the searcher's first pattern.
    pub(crate) base: u32,
    /// Searches the text with ASCII letters lowercased (its keywords are lowercase): Teddy
    /// matches bytes exactly, and folding a block in cache costs less than an automaton
    /// that ignores case.
    pub(crate) folded: bool,
}

impl Prefilter {
    /// `keywords`: (keyword, any case, what a hit means). A keyword listed twice merges its
    /// actions; a hit also runs the actions of every shorter keyword of its searcher that it
    /// starts with, since a leftmost-longest search reports only the longest one.
    pub(crate) fn new(keywords: &[(&str, bool, Action)]) -> Prefilter {
        // Exact long, exact short, folded long, folded short.
        let mut groups: [Vec<(String, Vec<Action>)>; 4] = Default::default();
        for &(keyword, any_case, action) in keywords {
            let keyword = if any_case { keyword.to_ascii_lowercase() } else { keyword.to_owned() };
            let group = if any_case { 2 } else { 0 } + usize::from(keyword.len() < 4);
            match groups[group].iter_mut().find(|(k, _)| *k == keyword) {
                Some((_, actions)) if !actions.contains(&action) => actions.push(action),
                Some(_) => {}
                None => groups[group].push((keyword, vec![action])),
            }
        }
        let mut lanes = Vec::new();
        let mut actions = Vec::new();
        for (group, entries) in groups.iter().enumerate() {
            for chunk in entries.chunks(CHUNK) {
                let literals: Vec<&str> = chunk.iter().map(|(k, _)| k.as_str()).collect();
                let (Some(matcher), Ok(base)) = (Matcher::new(&literals), u32::try_from(actions.len())) else {
                    continue;
                };
                for (keyword, own) in chunk {
                    let mut all = own.clone();
                    for (shorter, theirs) in chunk {
                        if keyword.len() > shorter.len() && keyword.starts_with(shorter.as_str()) {
                            all.extend(theirs.iter().filter(|a| !own.contains(a)));
                        }
                    }
                    actions.push(all);
                }
                lanes.push(Lane { matcher, base, folded: group >= 2 });
            }
        }
        Prefilter { lanes, actions }
    }

    /// Every keyword in one searcher that folds case itself ([`Fdr`]); `None` when it cannot
    /// take them (a keyword under three bytes). A keyword that matches in any case takes over
    /// the actions of the exact ones it covers, and a hit runs the actions of every shorter
    /// keyword its folded text starts with (at worst a row checked that does not match).
    pub(crate) fn single_pass(keywords: &[(&str, bool, Action)]) -> Option<Prefilter> {
        let mut entries: Vec<(String, bool, Vec<Action>)> = Vec::new();
        let mut add = |keyword: String, any_case: bool, action: Action| {
            let same = |(k, c, _): &&mut (String, bool, Vec<Action>)| {
                if *c { k.eq_ignore_ascii_case(&keyword) } else { !any_case && *k == keyword }
            };
            match entries.iter_mut().find(|e| same(e)) {
                Some((_, _, actions)) if !actions.contains(&action) => actions.push(action),
                Some(_) => {}
                None => entries.push((keyword, any_case, vec![action])),
            }
        };
        for &(keyword, any_case, action) in keywords.iter().filter(|k| k.1) {
            add(keyword.to_ascii_lowercase(), any_case, action);
        }
        for &(keyword, any_case, action) in keywords.iter().filter(|k| !k.1) {
            add(keyword.to_owned(), any_case, action);
        }
        let literals: Vec<(&[u8], bool)> = entries.iter().map(|(k, c, _)| (k.as_bytes(), *c)).collect();
        let matcher = Matcher::SinglePass(Fdr::new(&literals)?);
        let actions = entries
            .iter()
            .map(|(keyword, _, own)| {
                let mut all = own.clone();
                let folded = keyword.to_ascii_lowercase();
                for (shorter, _, theirs) in &entries {
                    if shorter.len() < keyword.len() && folded.starts_with(&shorter.to_ascii_lowercase()) {
                        all.extend(theirs.iter().filter(|a| !all.contains(a)).copied().collect::<Vec<_>>());
                    }
                }
                all
            })
            .collect();
        Some(Prefilter { lanes: vec![Lane { matcher, base: 0, folded: false }], actions })
    }

    pub(crate) fn actions(&self, pattern: u32) -> &[Action] {
        self.actions.get(pattern as usize).map_or(&[], Vec::as_slice)
    }
}

/// A row's regex, compiled anchored (`\A(?:…)`), so a search never runs past the match that
/// starts at its keyword.
pub(crate) struct RowRegex {
    re: Regex,
    /// The secret is capture group 1 rather than the whole match.
    group: bool,
    /// The secret starts at the keyword, so its boundary can be checked before the search.
    secret_at_keyword: bool,
    /// Search without capture slots first: for keywords that are common words, where most
    /// hits do not match. A token prefix's hits nearly all do, so its rows go straight on.
    probe: bool,
}

impl RowRegex {
    /// ASCII only (`\w`, `\b`, `(?i)` are ASCII; the Unicode tables are not built in).
    pub(crate) fn compile(pattern: &str, probe: bool) -> Result<RowRegex, regex::Error> {
        let re = RegexBuilder::new(&format!(r"\A(?:{pattern})")).unicode(false).build()?;
        let group = re.captures_len() > 1;
        let secret_at_keyword = !group || (pattern.starts_with('(') && !pattern.starts_with("(?"));
        Ok(RowRegex { re, group, secret_at_keyword, probe })
    }

    /// The secret this regex finds at keyword `[s, e)` of `t`, if it passes `checks`.
    pub(crate) fn find(&self, t: &[u8], s: usize, e: usize, checks: Checks) -> Option<(usize, usize)> {
        if self.secret_at_keyword && !left_boundary(t, s) {
            return None;
        }
        let window = checks.window.unwrap_or(MATCH_WINDOW);
        let hay = t.get(s..t.len().min(e.saturating_add(window)))?;
        if self.probe && !self.re.is_match(hay) {
            return None;
        }
        let (a, b) = if self.group {
            let caps = self.re.captures(hay)?;
            let m = caps.get(1).or_else(|| caps.get(0))?;
            (m.start(), m.end())
        } else {
            let m = self.re.find(hay)?;
            (m.start(), m.end())
        };
        let (start, end) = (s + a, s + b);
        checks.accept(t, e, start, end).then_some((start, end))
    }
}

/// The built-in table, compiled once per process. Regexes compile on their first hit, so a
/// process that never meets a keyword never pays for its row.
pub(crate) struct Builtin {
    pub(crate) prefilter: Prefilter,
    masks: Vec<String>,
    regexes: Vec<OnceLock<Option<RowRegex>>>,
    /// Per keyword pattern: does a hit open a PEM block (the engine groups its lines)?
    pem: Vec<bool>,
    pem_row: u16,
}

pub(crate) static BUILTIN: LazyLock<Builtin> = LazyLock::new(Builtin::new);

impl Builtin {
    fn new() -> Builtin {
        let mut keywords: Vec<(&str, bool, Action)> = Vec::new();
        for (row, format) in FORMATS.iter().enumerate() {
            let Ok(row) = u16::try_from(row) else { break };
            keywords.extend(format.keywords.iter().map(|k| (*k, format.any_case, Action::Row(row))));
        }
        keywords.extend(paths::TRIGGERS.iter().map(|(k, trig)| (*k, false, Action::Path(*trig))));
        let prefilter = Prefilter::single_pass(&keywords).unwrap_or_else(|| Prefilter::new(&keywords));
        let pem_row = FORMATS.iter().position(|f| f.pattern == Pattern::Shape(Shape::Pem));
        let pem_row = pem_row.and_then(|r| u16::try_from(r).ok()).unwrap_or(u16::MAX);
        let pem = prefilter.actions.iter().map(|a| a.contains(&Action::Row(pem_row))).collect();
        Builtin {
            prefilter,
            masks: FORMATS.iter().map(|f| format!("[REDACTED:{}]", f.kind)).collect(),
            regexes: FORMATS.iter().map(|_| OnceLock::new()).collect(),
            pem,
            pem_row,
        }
    }

    pub(crate) fn is_pem(&self, pattern: u32) -> bool {
        self.pem.get(pattern as usize).copied().unwrap_or(false)
    }

    pub(crate) fn pem_row(&self) -> u16 {
        self.pem_row
    }

    pub(crate) fn mask(&self, row: u16) -> &str {
        self.masks.get(row as usize).map_or("[REDACTED:secret]", String::as_str)
    }

    /// A row's regex; `None` for shape rows (and, never in a tested build, a regex that does
    /// not compile: the table test compiles every one).
    pub(crate) fn regex(&self, row: u16) -> Option<&RowRegex> {
        let format = FORMATS.get(row as usize)?;
        let compile = || match format.pattern {
            Pattern::Regex(pattern) => RowRegex::compile(pattern, false).ok(),
            // A provider's name is a common word: most hits are prose, so probe first.
            Pattern::Context(ctx) => RowRegex::compile(&context_regex(format.keywords, ctx), true).ok(),
            Pattern::Shape(_) => None,
        };
        self.regexes.get(row as usize)?.get_or_init(compile).as_ref()
    }
}

pub(crate) fn kind_name(row: u16) -> &'static str {
    FORMATS.get(row as usize).map_or("secret", |f| f.kind)
}

pub(crate) fn priority(row: u16) -> u8 {
    FORMATS.get(row as usize).map_or(1, |f| f.pattern.priority())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not a test: `FORGELOOP_LANE_PROFILE=log.txt cargo test --release -p forgeloop-core
    /// lane_profile -- --ignored --nocapture` prints each keyword searcher's pass time and hits
    /// (`FORGELOOP_BENCH_DUMP` makes the bench's log).
    #[test]
    #[ignore]
    fn lane_profile() {
        let Some(path) = std::env::var_os("FORGELOOP_LANE_PROFILE") else { return };
        let text = std::fs::read(path).unwrap();
        let folded: Vec<u8> = text.iter().map(u8::to_ascii_lowercase).collect();
        for (i, lane) in BUILTIN.prefilter.lanes.iter().enumerate() {
            let hay = if lane.folded { &folded } else { &text };
            let (mut hits, mut seconds) = (0usize, f64::MAX);
            for _ in 0..5 {
                let started = std::time::Instant::now();
                let mut pos = 0;
                hits = 0;
                while let Some((s, _, _)) = lane.matcher.find(hay, pos) {
                    hits += 1;
                    pos = s + 1;
                }
                seconds = seconds.min(started.elapsed().as_secs_f64());
            }
            if let Matcher::SinglePass(fdr) = &lane.matcher {
                let (n, took) = fdr.candidates(hay);
                eprintln!("  shift-or alone: {n} candidates, {:.0} MB/s", text.len() as f64 / 1e6 / took.as_secs_f64());
            }
            eprintln!(
                "searcher {i} (folded: {}): {hits} hits, {:.0} MB/s",
                lane.folded,
                text.len() as f64 / 1e6 / seconds
            );
        }
    }

    #[test]
    fn the_whole_table_is_searched_in_one_pass() {
        // Every searcher is a pass over the text: the table's ~300 keywords, exact and any
        // case, share one, which folds case itself (no folded copy of the text).
        let b = &*BUILTIN;
        assert_eq!(b.prefilter.lanes.len(), 1);
        assert!(matches!(b.prefilter.lanes[0].matcher, Matcher::SinglePass(_)));
        assert!(!b.prefilter.lanes[0].folded);
    }

    #[test]
    fn in_one_pass_a_hit_runs_the_actions_of_the_keywords_it_covers() {
        let p = Prefilter::single_pass(&[
            ("passw", false, Action::Row(0)),
            ("password", true, Action::Row(1)),
            ("PASSWORD", false, Action::Row(2)),
            ("TOKEN", false, Action::Row(3)),
        ])
        .unwrap();
        let lane = &p.lanes[0];
        // `PASSWORD` (exact) is covered by `password` (any case): one keyword, both actions.
        let (s, e, k) = lane.matcher.find(b"x PASSWORD", 0).unwrap();
        assert_eq!((s, e), (2, 10));
        assert_eq!(p.actions(k), &[Action::Row(1), Action::Row(2), Action::Row(0)]);
        let (_, e, k) = lane.matcher.find(b"passw0rd", 0).unwrap();
        assert_eq!((e, p.actions(k)), (5, &[Action::Row(0)][..]));
        assert!(lane.matcher.find(b"token", 0).is_none(), "an exact keyword matched in another case");
    }

    #[test]
    fn every_keyword_is_three_bytes_or_more() {
        for f in FORMATS.iter() {
            assert!(!f.keywords.is_empty(), "{} has no keyword", f.id);
            assert!(f.keywords.iter().all(|k| k.len() >= 3), "{}", f.id);
        }
    }

    #[test]
    fn shorter_keywords_of_a_searcher_run_with_the_longer_one() {
        let p = Prefilter::new(&[
            ("acme", true, Action::Row(0)),
            ("ACME_corp", true, Action::Row(1)),
            ("acme", true, Action::Row(2)),
        ]);
        let lane = &p.lanes[0];
        assert!(lane.folded);
        let (_, _, pattern) = lane.matcher.find(b"x acme_corp y", 0).unwrap();
        assert_eq!(p.actions(lane.base + pattern), [Action::Row(1), Action::Row(0), Action::Row(2)]);
    }

    #[test]
    fn more_than_64_keywords_take_a_second_searcher() {
        let words: Vec<String> = (0..100).map(|i| format!("kw{i:03}_")).collect();
        let keywords: Vec<(&str, bool, Action)> =
            words.iter().enumerate().map(|(i, w)| (w.as_str(), false, Action::Row(i as u16))).collect();
        let p = Prefilter::new(&keywords);
        assert_eq!(p.lanes.len(), 2);
        let lane = &p.lanes[1];
        let (_, _, pattern) = lane.matcher.find(b"..kw077_..", 0).unwrap();
        assert_eq!(p.actions(lane.base + pattern), [Action::Row(77)]);
    }
}
