//! The engine every entry point shares. Text is cut into *units* — a line; the lines of a PEM
//! block; a window of an over-long line — by one deterministic procedure (`process`) that a
//! whole text and a stream both run, so streaming output equals whole-text output for every
//! chunking. Within a unit: prefilter hits → candidate spans → overlapping spans merged →
//! masks applied, repeated until nothing changes (idempotence).
//!
//! Fast path: the searchers scan each block of input once; units without a hit are never
//! looked at and, if no unit changes, the input comes back borrowed.

use std::borrow::Cow;
use std::sync::Arc;

use memchr::{memchr, memrchr};

use super::formats::{self, FORMATS, Pattern};
use super::generic;
use super::kinds::{Cand, Kind};
use super::known::KnownSet;
use super::matcher::Matcher;
use super::paths::{self, PathSet};
use super::pem::{self, GroupEnd};
use super::scan::{ceil_boundary, floor_boundary};
use super::table::{self, Action, BUILTIN};
use super::user::UserRules;

/// Lines longer than this are redacted in windows, so memory stays bounded.
pub(crate) const WINDOW: usize = 1 << 20;
/// How far a window's cut stays from its end: longer than any match and its look-ahead, so
/// every span starting before the cut was seen whole.
pub(crate) const OVERLAP: usize = 96 * 1024;
/// Look-behind carried from one window into the next (keywords, boundaries, escapes).
pub(crate) const CONTEXT: usize = 512;
/// A masked span can change how text this close to it is read; only then is a unit rescanned.
const NEARBY: usize = 512;
const MAX_PASSES: usize = 4;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit {
    start: usize,
    end: usize,
    src: Src,
}

#[derive(Clone, Copy, Debug)]
enum Src {
    /// A keyword of the built-in formats table (or a path prefix).
    Builtin(u32),
    /// A keyword of a user rule.
    User(u32),
    /// A known value or a literal path (`Rules::dynamic`).
    Dynamic(u32),
}

/// A masked span reported to `explain`, in input byte offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Masked {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The compiled per-redactor rules (the built-in formats are process-wide).
pub(crate) struct Rules {
    pub(crate) known: Arc<KnownSet>,
    pub(crate) paths: PathSet,
    pub(crate) user: UserRules,
    /// Known-value patterns, then path patterns, in chunks of at most 64 (what Teddy takes);
    /// each with the index of its first pattern.
    dynamic: Vec<(Matcher, usize)>,
}

/// Teddy, the SIMD searcher, takes at most 64 patterns; more go into further searchers.
const CHUNK: usize = 64;

/// Reusable buffers, so a unit with hits allocates nothing unless it changes.
#[derive(Default)]
pub(crate) struct Scratch {
    hits: Vec<Hit>,
    cands: Vec<Cand>,
    spans: Vec<Cand>,
}

/// Where the segmenter is between calls: inside an over-long line, with its look-behind.
#[derive(Default)]
pub(crate) struct Segmenter {
    ctx: Option<String>,
}

/// Collects the output: untouched text is copied lazily, so an unchanged input is borrowed.
/// `process` works on a slice of `src` starting at `base`; positions it reports are
/// relative to that slice.
pub(crate) struct Sink<'t> {
    src: &'t str,
    base: usize,
    out: Option<String>,
    copied: usize,
    findings: Option<Vec<Masked>>,
}

impl<'t> Sink<'t> {
    pub(crate) fn new(src: &'t str, want_findings: bool) -> Sink<'t> {
        Sink { src, base: 0, out: None, copied: 0, findings: want_findings.then(Vec::new) }
    }

    /// Where the slice handed to the next `process` call starts in `src`.
    pub(crate) fn set_base(&mut self, base: usize) {
        self.base = base;
    }

    fn replace(&mut self, start: usize, end: usize, with: &str) {
        let (src, start, end) = (self.src, self.base + start, self.base + end);
        // Masks are at most a few dozen bytes longer than what they hide.
        let out = self.out.get_or_insert_with(|| String::with_capacity(src.len() + src.len() / 32 + 64));
        out.push_str(&src[self.copied..start]);
        out.push_str(with);
        self.copied = end;
    }

    fn record(&mut self, masked: &[Masked], offset: usize) {
        let shift = self.base + offset;
        if let Some(f) = self.findings.as_mut() {
            f.extend(masked.iter().map(|m| Masked { start: m.start + shift, end: m.end + shift, ..*m }));
        }
    }

    /// Copies untouched text up to `end` (absolute) now, while it is still in cache.
    pub(crate) fn flush_to(&mut self, end: usize) {
        if let Some(out) = self.out.as_mut()
            && end > self.copied
        {
            out.push_str(&self.src[self.copied..end]);
            self.copied = end;
        }
    }

    /// The output for `src[..end]` (absolute), and what was masked.
    pub(crate) fn finish(mut self, end: usize) -> (Cow<'t, str>, Vec<Masked>) {
        let findings = self.findings.take().unwrap_or_default();
        match self.out {
            None => (Cow::Borrowed(&self.src[..end]), findings),
            Some(mut out) => {
                out.push_str(&self.src[self.copied..end]);
                (Cow::Owned(out), findings)
            }
        }
    }
}

enum Step {
    Done(usize),
    More(usize),
}

/// The rewritten text of a unit, and its masked spans relative to the unit's start.
struct Rewrite {
    text: String,
    masked: Vec<Masked>,
}

impl Rules {
    /// One search covers known values and paths; rebuilt per checkout (Teddy builds in
    /// microseconds), so `with_checkout` stays cheap.
    pub(crate) fn new(known: Arc<KnownSet>, paths: PathSet, user: UserRules) -> Rules {
        let all: Vec<&str> = known.patterns().iter().chain(paths.patterns()).map(String::as_str).collect();
        let dynamic = all
            .chunks(CHUNK)
            .enumerate()
            .filter_map(|(i, chunk)| Matcher::new(chunk).map(|m| (m, i * CHUNK)))
            .collect();
        Rules { known, paths, user, dynamic }
    }

    pub(crate) fn mask(&self, kind: Kind) -> &str {
        match kind {
            Kind::Known(k) => self.known.mask(k),
            Kind::Format(row) => BUILTIN.mask(row),
            Kind::User(row) => self.user.set().map_or("[REDACTED:secret]", |u| u.mask(row)),
            Kind::Named(named) => named.mask(),
        }
    }

    pub(crate) fn kind_name(&self, kind: Kind) -> &str {
        match kind {
            Kind::Known(k) => self.known.kind_name(k),
            Kind::Format(row) => table::kind_name(row),
            Kind::User(row) => self.user.set().map_or("secret", |u| u.name(row)),
            Kind::Named(named) => named.name(),
        }
    }

    /// Lower wins when spans of different kinds overlap: a known value beats everything, a
    /// token format (built-in or user) the context around it (`formats::Pattern::priority`).
    fn priority(kind: Kind) -> u8 {
        match kind {
            Kind::Known(_) => 0,
            Kind::Format(row) => table::priority(row),
            Kind::User(_) => 1,
            Kind::Named(named) => named.priority(),
        }
    }

    /// Redacts the complete units at the front of `text` and returns how many bytes it
    /// consumed. With `eof` false it stops before anything more input could change: a line
    /// without its newline, a PEM block without its end, the unsettled tail of a long line.
    pub(crate) fn process(
        &self,
        seg: &mut Segmenter,
        text: &str,
        eof: bool,
        sink: &mut Sink<'_>,
        sc: &mut Scratch,
    ) -> usize {
        let t = text.as_bytes();
        let mut pos = 0;
        if seg.ctx.is_some() {
            match self.long_line(seg, text, 0, eof, sink, sc) {
                Step::Done(p) => pos = p,
                Step::More(p) => return p,
            }
        }
        let mut hits = self.hit_iter(t, pos);
        let mut next = hits.next();
        loop {
            while next.is_some_and(|h| h.start < pos) {
                next = hits.next();
            }
            let Some(first) = next else { break };
            let line_start = memrchr(b'\n', &t[pos..first.start]).map_or(pos, |i| pos + i + 1);
            let mut unit_end = match memchr(b'\n', &t[line_start..t.len().min(line_start + WINDOW)]) {
                Some(i) => line_start + i + 1,
                None if t.len() - line_start > WINDOW => {
                    seg.ctx = Some(String::new());
                    match self.long_line(seg, text, line_start, eof, sink, sc) {
                        Step::Done(p) => {
                            pos = p;
                            continue;
                        }
                        Step::More(p) => return p,
                    }
                }
                None if eof => t.len(),
                None => return line_start,
            };
            sc.hits.clear();
            while let Some(h) = next.filter(|h| h.start < unit_end) {
                sc.hits.push(h);
                next = hits.next();
            }
            let opens_pem = sc.hits.iter().any(|h| matches!(h.src, Src::Builtin(p) if BUILTIN.is_pem(p)))
                && pem::opens_block(&t[line_start..unit_end]);
            if opens_pem {
                match pem::group_end(t, line_start, unit_end, eof) {
                    GroupEnd::Done(end) => unit_end = end,
                    GroupEnd::NeedMore => return line_start,
                }
                while let Some(h) = next.filter(|h| h.start < unit_end) {
                    sc.hits.push(h);
                    next = hits.next();
                }
            }
            for h in &mut sc.hits {
                h.start -= line_start;
                h.end -= line_start;
            }
            let unit = &text[line_start..unit_end];
            let hits_here = std::mem::take(&mut sc.hits);
            let rewrite = self.redact_unit(unit, 0, &hits_here, sc, sink.findings.is_some());
            sc.hits = hits_here;
            if let Some(rw) = rewrite {
                sink.replace(line_start, unit_end, &rw.text);
                sink.record(&rw.masked, line_start);
            }
            pos = unit_end;
        }
        if eof {
            return t.len();
        }
        let tail = memrchr(b'\n', &t[pos..]).map_or(pos, |i| pos + i + 1);
        if t.len() - tail > WINDOW {
            seg.ctx = Some(String::new());
            return match self.long_line(seg, text, tail, eof, sink, sc) {
                Step::Done(p) | Step::More(p) => p,
            };
        }
        tail
    }

    /// An over-long line from `start` (or from where the previous call left it): windows of
    /// `WINDOW` bytes, each cut well before its end, then the final piece.
    fn long_line(
        &self,
        seg: &mut Segmenter,
        text: &str,
        start: usize,
        eof: bool,
        sink: &mut Sink<'_>,
        sc: &mut Scratch,
    ) -> Step {
        let t = text.as_bytes();
        let mut pos = start;
        loop {
            let ctx = seg.ctx.take().unwrap_or_default();
            if let Some(i) = memchr(b'\n', &t[pos..t.len().min(pos + WINDOW)]) {
                let end = pos + i + 1;
                self.piece(&ctx, &text[pos..end], pos, sink, sc);
                return Step::Done(end);
            }
            if t.len() - pos > WINDOW {
                let window_end = floor_boundary(text, pos + WINDOW);
                let cut = self.window(&ctx, &text[pos..window_end], pos, sink, sc);
                let mut joined = ctx;
                joined.push_str(&text[pos..pos + cut]);
                let keep = ceil_boundary(&joined, joined.len().saturating_sub(CONTEXT));
                seg.ctx = Some(joined[keep..].to_owned());
                pos += cut;
                continue;
            }
            if eof {
                self.piece(&ctx, &text[pos..], pos, sink, sc);
                return Step::Done(t.len());
            }
            seg.ctx = Some(ctx);
            return Step::More(pos);
        }
    }

    /// The last piece of a long line, read with the look-behind of the window before it.
    fn piece(&self, ctx: &str, piece: &str, abs: usize, sink: &mut Sink<'_>, sc: &mut Scratch) {
        let mut buf = String::with_capacity(ctx.len() + piece.len());
        buf.push_str(ctx);
        buf.push_str(piece);
        let mut hits = std::mem::take(&mut sc.hits);
        hits.clear();
        hits.extend(self.hit_iter(buf.as_bytes(), 0));
        let rewrite = self.redact_unit(&buf, ctx.len(), &hits, sc, sink.findings.is_some());
        sc.hits = hits;
        if let Some(rw) = rewrite {
            sink.replace(abs, abs + piece.len(), &rw.text);
            sink.record(&rw.masked, abs);
        }
    }

    /// One window of a long line: detects on the whole window, emits up to a cut that no
    /// masked span crosses, and returns the cut (bytes of `win` consumed, never 0).
    fn window(&self, ctx: &str, win: &str, abs: usize, sink: &mut Sink<'_>, sc: &mut Scratch) -> usize {
        let mut buf = String::with_capacity(ctx.len() + win.len());
        buf.push_str(ctx);
        buf.push_str(win);
        let min = ctx.len();
        let mut hits = std::mem::take(&mut sc.hits);
        hits.clear();
        hits.extend(self.hit_iter(buf.as_bytes(), 0));
        self.detect(&buf, min, &hits, sc);
        let target = floor_boundary(&buf, min + win.len().saturating_sub(OVERLAP)).max(min + 1);
        let cut = choose_cut(&buf, &sc.spans, min, target);
        let cut = ceil_boundary(&buf, cut);
        sc.spans.retain(|s| s.start < cut);
        hits.retain(|h| h.start < cut);
        let spans = std::mem::take(&mut sc.spans);
        let rewrite = self.rewrite(&buf[..cut], min, &spans, &hits, sc, sink.findings.is_some());
        sc.spans = spans;
        sc.hits = hits;
        if let Some(rw) = rewrite {
            sink.replace(abs, abs + cut - min, &rw.text);
            sink.record(&rw.masked, abs);
        }
        cut - min
    }

    /// Redacts `t[min_start..]`, reading `t[..min_start]` only as look-behind.
    fn redact_unit(&self, t: &str, min_start: usize, hits: &[Hit], sc: &mut Scratch, want: bool) -> Option<Rewrite> {
        self.detect(t, min_start, hits, sc);
        if sc.spans.is_empty() {
            return None;
        }
        let spans = std::mem::take(&mut sc.spans);
        let rewrite = self.rewrite(t, min_start, &spans, hits, sc, want);
        sc.spans = spans;
        rewrite
    }

    /// Applies `spans`, then rescans the result until it is stable: a mask can complete a
    /// boundary that hid a neighbouring secret, and redacting twice must change nothing.
    fn rewrite(
        &self,
        t: &str,
        min_start: usize,
        spans: &[Cand],
        hits: &[Hit],
        sc: &mut Scratch,
        want: bool,
    ) -> Option<Rewrite> {
        if spans.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(t.len() - min_start + 64);
        self.apply(t, min_start, spans, &mut out);
        let mut pieces =
            want.then(|| Pieces::identity(t.len() - min_start).apply(spans, min_start, |k| self.mask(k).len()));
        let mut again = needs_another_pass(hits, spans);
        let mut passes = 1;
        let mut hits2 = Vec::new();
        while again && passes < MAX_PASSES {
            let mut buf = String::with_capacity(min_start + out.len());
            buf.push_str(&t[..min_start]);
            buf.push_str(&out);
            hits2.clear();
            hits2.extend(self.hit_iter(buf.as_bytes(), 0));
            self.detect(&buf, min_start, &hits2, sc);
            if sc.spans.is_empty() {
                break;
            }
            let mut next = String::with_capacity(out.len());
            self.apply(&buf, min_start, &sc.spans, &mut next);
            pieces = pieces.map(|p| p.apply(&sc.spans, min_start, |k| self.mask(k).len()));
            again = needs_another_pass(&hits2, &sc.spans);
            out = next;
            passes += 1;
        }
        let masked = pieces.map(|p| p.masked()).unwrap_or_default();
        Some(Rewrite { text: out, masked })
    }

    fn apply(&self, t: &str, min_start: usize, spans: &[Cand], out: &mut String) {
        let mut p = min_start;
        for s in spans {
            out.push_str(&t[p..s.start]);
            out.push_str(self.mask(s.kind));
            p = s.end;
        }
        out.push_str(&t[p..]);
    }

    /// Candidates from every hit, merged: overlapping spans become one span (so no part of
    /// a secret survives next to a mask), named by the most specific kind among them.
    fn detect(&self, t: &str, min_start: usize, hits: &[Hit], sc: &mut Scratch) {
        let bytes = t.as_bytes();
        sc.cands.clear();
        let mut pem_ends: Option<Vec<(usize, usize)>> = None;
        for h in hits {
            match h.src {
                // One search for END markers serves every BEGIN marker in the unit.
                Src::Builtin(p) if BUILTIN.is_pem(p) => {
                    let ends = pem_ends.get_or_insert_with(|| pem::end_markers(bytes));
                    if let Some((start, end)) = pem::verify(bytes, h.start, Some(ends)) {
                        sc.cands.push(Cand { start, end, kind: Kind::Format(BUILTIN.pem_row()) });
                    }
                }
                _ => self.verify_hit(h, bytes, &mut sc.cands),
            }
        }
        sc.spans.clear();
        if sc.cands.is_empty() {
            return;
        }
        for c in &mut sc.cands {
            c.end = ceil_boundary(t, c.end.min(t.len()));
            c.start = floor_boundary(t, c.start.min(c.end));
        }
        sc.cands.retain(|c| c.start >= min_start && c.end > c.start);
        // Stable: of equal spans with equal priority, the one found first names the span (the
        // earlier keyword, then the earlier table row; a built-in before a user rule).
        sc.cands.sort_by(|a, b| {
            a.start.cmp(&b.start).then(b.end.cmp(&a.end)).then(Self::priority(a.kind).cmp(&Self::priority(b.kind)))
        });
        for c in &sc.cands {
            match sc.spans.last_mut() {
                Some(last) if c.start < last.end => {
                    last.end = last.end.max(c.end);
                    if Self::priority(c.kind) < Self::priority(last.kind) {
                        last.kind = c.kind;
                    }
                }
                _ => sc.spans.push(*c),
            }
        }
    }

    fn verify_hit(&self, h: &Hit, t: &[u8], out: &mut Vec<Cand>) {
        let (s, e) = (h.start, h.end);
        match h.src {
            Src::Builtin(p) => {
                for &action in BUILTIN.prefilter.actions(p) {
                    match action {
                        Action::Row(row) => verify_row(row, t, s, e, out),
                        Action::Path(trig) => out.extend(paths::verify(trig, t, s, e)),
                    }
                }
            }
            Src::User(p) => {
                let Some(user) = self.user.set() else { return };
                for &action in user.prefilter.actions(p) {
                    if let Action::Row(row) = action
                        && let Some((start, end)) = user.find(row, t, s, e)
                    {
                        out.push(Cand { start, end, kind: Kind::User(row) });
                    }
                }
            }
            Src::Dynamic(p) => match (p as usize).checked_sub(self.known.pattern_count()) {
                None => {
                    out.push(Cand { start: h.start, end: h.end, kind: Kind::Known(self.known.kind_of(p as usize)) })
                }
                Some(path) => out.extend(self.paths.verify(path, t, h.start, h.end)),
            },
        }
    }

    /// Every prefilter hit in `hay[from..]`, in order of position.
    fn hit_iter<'a>(&'a self, hay: &'a [u8], from: usize) -> HitIter<'a> {
        let mut lanes = Vec::with_capacity(3 + self.dynamic.len());
        let mut add = |matcher: &'a Matcher, folded: bool, base: u32, src: fn(u32) -> Src| {
            lanes.push(Lane { matcher, folded, pos: from, base, src, head: None });
        };
        for lane in &BUILTIN.prefilter.lanes {
            add(&lane.matcher, lane.folded, lane.base, Src::Builtin);
        }
        if let Some(user) = self.user.set() {
            for lane in &user.prefilter.lanes {
                add(&lane.matcher, lane.folded, lane.base, Src::User);
            }
        }
        for (matcher, base) in &self.dynamic {
            add(matcher, false, *base as u32, Src::Dynamic);
        }
        let folded = if lanes.iter().any(|l| l.folded) { fold(hay) } else { Vec::new() };
        for lane in &mut lanes {
            lane.advance(if lane.folded { &folded } else { hay });
        }
        HitIter { hay, folded, lanes }
    }
}

/// `hay` with ASCII letters lowercased, in one branch-free pass the compiler vectorizes.
fn fold(hay: &[u8]) -> Vec<u8> {
    hay.iter().map(|&b| b | (u8::from(b.is_ascii_uppercase()) << 5)).collect()
}

/// Checks built-in row `row` at keyword `[s, e)`.
fn verify_row(row: u16, t: &[u8], s: usize, e: usize, out: &mut Vec<Cand>) {
    let Some(format) = FORMATS.get(row as usize) else { return };
    let kind = Kind::Format(row);
    match format.pattern {
        Pattern::Shape(shape) => formats::verify_shape(shape, kind, t, s, e, out),
        Pattern::Regex(_) | Pattern::Context(_) => {
            let found = BUILTIN.regex(row).and_then(|re| re.find(t, s, e, format.checks()));
            // A provider's name can sit inside a longer identifier (`HalSetSystemInformation:
            // pHalSetSystemInformation` reads as `etsy: …`); a CamelCase value there is code.
            let code = |(start, end): (usize, usize)| {
                matches!(format.pattern, Pattern::Context(_)) && generic::is_camel_case(&t[start..end])
            };
            if let Some((start, end)) = found.filter(|&span| !code(span)) {
                out.push(Cand { start, end, kind });
            }
        }
    }
}

/// Is there a hit, not itself masked, close enough to a mask that the mask may change how
/// it reads? Only then can another pass find something.
fn needs_another_pass(hits: &[Hit], spans: &[Cand]) -> bool {
    hits.iter().any(|h| {
        let lo = h.start.saturating_sub(NEARBY);
        let hi = h.end + NEARBY;
        let first = spans.partition_point(|s| s.end <= lo);
        let mut near = false;
        for s in spans[first..].iter().take_while(|s| s.start < hi) {
            if s.start <= h.start && h.end <= s.end {
                return false;
            }
            near = true;
        }
        near
    })
}

/// A cut at or before `target` that no span crosses, preferring one just after a blank so a
/// token is not split between windows.
fn choose_cut(buf: &str, spans: &[Cand], min: usize, target: usize) -> usize {
    let t = buf.as_bytes();
    let inside = |p: usize| {
        let i = spans.partition_point(|s| s.end <= p);
        spans.get(i).is_some_and(|s| s.start < p)
    };
    let lowest = target.saturating_sub(4096).max(min + 1);
    for p in (lowest..=target).rev() {
        if matches!(t[p - 1], b' ' | b'\t' | b',' | b';') && !inside(p) {
            return p;
        }
    }
    let i = spans.partition_point(|s| s.end <= target);
    match spans.get(i) {
        Some(s) if s.start < target && s.start > min => s.start,
        Some(s) if s.start < target => s.end,
        _ => target,
    }
}

struct HitIter<'a> {
    hay: &'a [u8],
    /// `hay` with ASCII letters lowercased, for folded lanes (empty without them).
    folded: Vec<u8>,
    lanes: Vec<Lane<'a>>,
}

/// One searcher's matches. Each search restarts just after the last match's start, so every
/// start position yields its longest match: overlapping values are all seen, a keyword never
/// hides one that starts inside it (`npm_auth` is `npm_` and `_auth`; adding a format's
/// keyword cannot hide another's), and the set does not depend on where the scan began.
struct Lane<'a> {
    matcher: &'a Matcher,
    folded: bool,
    pos: usize,
    base: u32,
    src: fn(u32) -> Src,
    head: Option<Hit>,
}

impl Lane<'_> {
    #[inline]
    fn advance(&mut self, hay: &[u8]) {
        self.head = self.matcher.find(hay, self.pos).map(|(start, end, pattern)| {
            self.pos = start + 1;
            Hit { start, end, src: (self.src)(self.base + pattern) }
        });
        if self.head.is_none() {
            self.pos = hay.len() + 1;
        }
    }
}

impl Iterator for HitIter<'_> {
    type Item = Hit;

    fn next(&mut self) -> Option<Hit> {
        let (index, _) =
            self.lanes.iter().enumerate().filter_map(|(i, l)| l.head.map(|h| (i, h.start))).min_by_key(|&(_, s)| s)?;
        let lane = &mut self.lanes[index];
        let hit = lane.head;
        lane.advance(if lane.folded { &self.folded } else { self.hay });
        hit
    }
}

/// How a unit's output maps back to its input, for `explain`: contiguous pieces, each
/// either copied text or a mask standing for an input range.
#[derive(Clone, Debug)]
struct Pieces(Vec<Piece>);

#[derive(Clone, Copy, Debug)]
struct Piece {
    out_start: usize,
    out_end: usize,
    in_start: usize,
    in_end: usize,
    kind: Option<Kind>,
}

impl Pieces {
    fn identity(len: usize) -> Pieces {
        Pieces(vec![Piece { out_start: 0, out_end: len, in_start: 0, in_end: len, kind: None }])
    }

    /// Input offset of output position `pos`; inside a mask, the start or end of what it hides.
    fn map(&self, pos: usize, is_end: bool) -> usize {
        let i = if is_end {
            self.0.partition_point(|p| p.out_end < pos)
        } else {
            self.0.partition_point(|p| p.out_end <= pos)
        };
        let Some(p) = self.0.get(i) else { return self.0.last().map_or(pos, |p| p.in_end) };
        match p.kind {
            Some(_) if is_end => p.in_end,
            Some(_) => p.in_start,
            None => (p.in_start + pos.saturating_sub(p.out_start)).min(p.in_end),
        }
    }

    /// The mapping after masking `spans` (given in the current output, offset by `min`).
    fn apply(&self, spans: &[Cand], min: usize, mask_len: impl Fn(Kind) -> usize) -> Pieces {
        let total = self.0.last().map_or(0, |p| p.out_end);
        let mut out = Vec::new();
        let mut cursor = 0;
        let mut new_pos = 0;
        for s in spans {
            let (start, end) = (s.start - min, s.end - min);
            self.copy_range(cursor, start, &mut new_pos, &mut out);
            let len = mask_len(s.kind);
            out.push(Piece {
                out_start: new_pos,
                out_end: new_pos + len,
                in_start: self.map(start, false),
                in_end: self.map(end, true),
                kind: Some(s.kind),
            });
            new_pos += len;
            cursor = end;
        }
        self.copy_range(cursor, total, &mut new_pos, &mut out);
        Pieces(out)
    }

    fn copy_range(&self, from: usize, to: usize, new_pos: &mut usize, out: &mut Vec<Piece>) {
        for p in &self.0 {
            let (a, b) = (p.out_start.max(from), p.out_end.min(to));
            if a >= b {
                continue;
            }
            let piece = match p.kind {
                Some(_) => Piece { out_start: *new_pos, out_end: *new_pos + (b - a), ..*p },
                None => Piece {
                    out_start: *new_pos,
                    out_end: *new_pos + (b - a),
                    in_start: p.in_start + (a - p.out_start),
                    in_end: p.in_start + (b - p.out_start),
                    kind: None,
                },
            };
            *new_pos += b - a;
            out.push(piece);
        }
    }

    fn masked(&self) -> Vec<Masked> {
        let mut out: Vec<Masked> = Vec::new();
        for p in &self.0 {
            let Some(kind) = p.kind else { continue };
            match out.last_mut() {
                Some(last) if last.end > p.in_start => last.end = last.end.max(p.in_end),
                _ => out.push(Masked { kind, start: p.in_start, end: p.in_end }),
            }
        }
        out
    }
}
