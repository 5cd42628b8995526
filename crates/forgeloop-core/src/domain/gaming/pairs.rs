//! Special-cased test input: the input/expected pairs the tests' assertions name
//! (`self.assertEqual(f(1000), 3000)`, `expect(f(1000)).toBe(3000)`, `assert_eq!(f(1000), 3000)`,
//! parametrised rows), found together in the lines a change adds to the code under test.
//!
//! Two shapes count. A **condition**: the input compared for equality (`if n == 1000`,
//! `case 1000`, a match arm `1000 =>`) with the expected value on the same line or as the value
//! of the next few; one is enough. A **table**: pairs side by side on lines (`{1000: 3000, 7: 21}`,
//! or a chain of three or more such conditions); it needs two pairs from assertions the base
//! tests already had, and half the table's literals being test pairs, so a new row added to a
//! big table (Unicode widths, time-zone offsets) the tests also check is not one. A pair that
//! the base version of the file, or a line the change removes, already had on one line is
//! never counted: a moved table is not a new one.

use std::collections::{HashMap, HashSet};

use super::lexer::{Lang, Lexed, Literal, Value, ident_byte, lex_all};
use super::view::FileView;
use super::{Category, Finding};

/// The most pairs kept from the tests.
const MAX_PAIRS: usize = 4096;
/// The most bytes of one test file read.
const MAX_TEST_BYTES: usize = 4 << 20;
/// How many lines below a condition its value may be.
const VALUE_REACH: usize = 3;
/// How many lines around a condition are looked at for a chain of them.
const CHAIN_REACH: usize = 8;
/// How many conditions make a chain (a table written as `if`s or match arms).
const CHAIN_LEN: usize = 3;
/// Literals longer than this are shortened in words.
const SHOWN_CHARS: usize = 40;

/// One input/expected pair a test's assertion names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pair {
    pub(crate) input: Value,
    pub(crate) expected: Value,
    /// The test file.
    pub(crate) test: String,
    /// The assertion was already in the base version of the test file (a held test's always is).
    pub(crate) held: bool,
}

/// The pairs of all the tests, indexed by input.
#[derive(Debug, Default)]
pub(crate) struct Pairs {
    pub(crate) list: Vec<Pair>,
    by_input: HashMap<Value, Vec<usize>>,
}

impl Pairs {
    /// The pairs the tests' assertions name.
    pub(crate) fn from_tests(tests: &[(String, String)], base_text: &dyn Fn(&str) -> Option<String>) -> Pairs {
        let mut pairs = Pairs::default();
        let mut seen: HashMap<(Value, Value), usize> = HashMap::new();
        for (path, text) in tests {
            let Some(lang @ (Lang::Python | Lang::JavaScript | Lang::Rust)) = Lang::of(path) else { continue };
            if text.len() > MAX_TEST_BYTES {
                continue;
            }
            let base: HashSet<String> =
                base_text(path).map(|t| t.lines().map(|l| l.trim().to_owned()).collect()).unwrap_or_default();
            let file = TestText::new(lang, text);
            for (inputs, expected, at) in file.assertions() {
                let held = base.contains(file.line_of(at).trim());
                for input in inputs {
                    if input.trivial() || expected.trivial() || input == expected || (input.weak() && expected.weak()) {
                        continue;
                    }
                    if let Some(&known) = seen.get(&(input.clone(), expected.clone())) {
                        // Named by a new assertion and by one the base had: the base's.
                        if held && let Some(pair) = pairs.list.get_mut(known) {
                            pair.held = true;
                            pair.test.clone_from(path);
                        }
                        continue;
                    }
                    if pairs.list.len() >= MAX_PAIRS {
                        return pairs;
                    }
                    seen.insert((input.clone(), expected.clone()), pairs.list.len());
                    pairs.by_input.entry(input.clone()).or_default().push(pairs.list.len());
                    pairs.list.push(Pair { input, expected: expected.clone(), test: path.clone(), held });
                }
            }
        }
        pairs
    }

    fn with_input(&self, value: &Value) -> &[usize] {
        self.by_input.get(value).map_or(&[], Vec::as_slice)
    }

    /// No pairs: nothing to look for.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// A test file lexed as one text: code with offsets, and its literals in order.
struct TestText<'a> {
    lang: Lang,
    raw: &'a str,
    code: String,
    literals: Vec<Literal>,
    line_starts: Vec<usize>,
}

impl<'a> TestText<'a> {
    fn new(lang: Lang, raw: &'a str) -> TestText<'a> {
        let lines: Vec<&str> = raw.split('\n').collect();
        let lexed = lex_all(lang, lines.iter().copied());
        let mut code = String::with_capacity(raw.len());
        let mut literals = Vec::new();
        let mut line_starts = Vec::with_capacity(lines.len());
        for l in &lexed {
            let base = code.len();
            line_starts.push(base);
            literals.extend(l.literals.iter().map(|lit| Literal {
                value: lit.value.clone(),
                start: lit.start + base,
                end: lit.end + base,
            }));
            code.push_str(&l.code);
            code.push('\n');
        }
        TestText { lang, raw, code, literals, line_starts }
    }

    /// The raw line holding offset `at`.
    fn line_of(&self, at: usize) -> &str {
        let n = self.line_starts.partition_point(|&s| s <= at).saturating_sub(1);
        self.raw.split('\n').nth(n).unwrap_or("")
    }

    fn literals_in(&self, (from, to): (usize, usize)) -> &[Literal] {
        let a = self.literals.partition_point(|l| l.start < from);
        let b = self.literals.partition_point(|l| l.start < to);
        let slice = self.literals.get(a..b).unwrap_or(&[]);
        let keep = slice.iter().take_while(|l| l.end <= to).count();
        &slice[..keep]
    }

    /// Every assertion's (inputs, expected, offset).
    fn assertions(&self) -> Vec<(Vec<Value>, Value, usize)> {
        let mut out = Vec::new();
        let sides = |a: (usize, usize), b: (usize, usize), at: usize, out: &mut Vec<_>| {
            if let Some((inputs, expected)) = self.actual_expected(a, b).or_else(|| self.actual_expected(b, a)) {
                out.push((inputs, expected, at));
            }
        };
        let calls: &[&str] = match self.lang {
            Lang::Python => &["assertEqual(", "assertEquals(", "assertAlmostEqual(", "assert_equal("],
            Lang::JavaScript => &["strictEqual(", "deepStrictEqual(", "deepEqual(", "equal(", "t.is(", "t.same("],
            _ => &["assert_eq!(", "debug_assert_eq!("],
        };
        for needle in calls {
            for at in find(&self.code, needle, true) {
                let args = self.args(at + needle.len() - 1);
                if let [a, b, ..] = args.as_slice() {
                    sides(*a, *b, at, &mut out);
                }
            }
        }
        match self.lang {
            Lang::Python => {
                for at in find(&self.code, "assert", false) {
                    let line_start = self.code[..at].rfind('\n').map_or(0, |p| p + 1);
                    if !self.code[line_start..at].trim().is_empty() || !self.code[at + 6..].starts_with([' ', '(']) {
                        continue;
                    }
                    let end = statement_end(&self.code, at + 6);
                    let first = split_top(&self.code, (at + 6, end), ",");
                    if let Some(&expr) = first.first()
                        && let [a, b] = split_top(&self.code, expr, "==").as_slice()
                    {
                        sides(*a, *b, at, &mut out);
                    }
                }
                for at in find(&self.code, "parametrize(", true) {
                    let args = self.args(at + "parametrize(".len() - 1);
                    if let Some(&table) = args.get(1) {
                        out.extend(self.rows(table).into_iter().map(|(i, e)| (i, e, at)));
                    }
                }
            }
            Lang::JavaScript => {
                for at in find(&self.code, "expect(", false) {
                    if self.code[..at].ends_with('.') {
                        continue;
                    }
                    let open = at + "expect(".len() - 1;
                    let Some(close) = matching(&self.code, open) else { continue };
                    if let Some(b) = self.matcher_argument(close + 1) {
                        sides((open + 1, close), b, at, &mut out);
                    }
                }
                for at in find(&self.code, "each(", true) {
                    if !self.code[..at].ends_with('.') {
                        continue;
                    }
                    if let Some(&table) = self.args(at + "each(".len() - 1).first() {
                        out.extend(self.rows(table).into_iter().map(|(i, e)| (i, e, at)));
                    }
                }
            }
            _ => {
                for at in find(&self.code, "assert!(", false) {
                    if let Some(&expr) = self.args(at + "assert!(".len() - 1).first()
                        && let [a, b] = split_top(&self.code, expr, "==").as_slice()
                    {
                        sides(*a, *b, at, &mut out);
                    }
                }
                for at in find(&self.code, "#[case(", false) {
                    let args = self.args(at + "#[case(".len() - 1);
                    out.extend(self.row(&args).map(|(i, e)| (i, e, at)));
                }
                for at in find(&self.code, "#[test_case(", false) {
                    let open = at + "#[test_case(".len() - 1;
                    let Some(close) = matching(&self.code, open) else { continue };
                    let inner = (open + 1, close);
                    if let [left, right] = split_top(&self.code, inner, "=>").as_slice() {
                        let right = split_top(&self.code, *right, ";").first().copied().unwrap_or(*right);
                        let inputs: Vec<Value> = split_top(&self.code, *left, ",")
                            .into_iter()
                            .filter_map(|part| self.sole_literal(part))
                            .collect();
                        if let Some(expected) = self.sole_literal(right)
                            && !inputs.is_empty()
                        {
                            out.push((inputs, expected, at));
                        }
                    }
                }
            }
        }
        out
    }

    /// `(a, b)` where `a` calls something with literals and `b` is one literal: the literals
    /// `a` passes, and `b`.
    fn actual_expected(&self, a: (usize, usize), b: (usize, usize)) -> Option<(Vec<Value>, Value)> {
        let expected = self.sole_literal(b)?;
        let inputs: Vec<Value> = self
            .literals_in(a)
            .iter()
            .filter(|l| bracket_depth(&self.code[a.0..l.start.max(a.0)], b"(") > 0)
            .map(|l| l.value.clone())
            .collect();
        (!inputs.is_empty()).then_some((inputs, expected))
    }

    /// The one literal a range holds, allowing wrappers (`Some(3000)`, `String::from("x")`,
    /// `"x".to_string()`); `None` for anything else.
    fn sole_literal(&self, range: (usize, usize)) -> Option<Value> {
        let [lit] = self.literals_in(range) else { return None };
        let mut rest = String::new();
        rest.push_str(self.code.get(range.0..lit.start)?);
        rest.push(' ');
        rest.push_str(self.code.get(lit.end..range.1)?);
        const WRAPPERS: &[&str] = &[
            "Some",
            "Ok",
            "String",
            "from",
            "to_string",
            "to_owned",
            "into",
            "str",
            "int",
            "float",
            "Decimal",
            "BigInt",
            "Number",
        ];
        let words_ok = rest
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .all(|w| WRAPPERS.contains(&w));
        let punct_ok = rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || " \t\n()&.:!".contains(c));
        (words_ok && punct_ok).then(|| lit.value.clone())
    }

    /// The top-level arguments of the call whose `(` is at `open`.
    fn args(&self, open: usize) -> Vec<(usize, usize)> {
        match matching(&self.code, open) {
            Some(close) => split_top(&self.code, (open + 1, close), ","),
            None => Vec::new(),
        }
    }

    /// After `expect(…)`: the argument of its matcher (`.toBe(3000)`, `.to.equal(3000)`), unless
    /// negated.
    fn matcher_argument(&self, mut at: usize) -> Option<(usize, usize)> {
        const MATCHERS: &[&str] = &["toBe", "toEqual", "toStrictEqual", "toBeCloseTo", "equal", "equals", "eql", "eq"];
        let bytes = self.code.as_bytes();
        for _ in 0..6 {
            while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            if bytes.get(at) != Some(&b'.') {
                return None;
            }
            at += 1;
            let start = at;
            while bytes.get(at).copied().is_some_and(ident_byte) {
                at += 1;
            }
            let name = &self.code[start..at];
            if name == "not" {
                return None;
            }
            if bytes.get(at) == Some(&b'(') {
                if !MATCHERS.contains(&name) {
                    return None;
                }
                return self.args(at).first().copied();
            }
        }
        None
    }

    /// The rows of a parametrised table (`[(1000, 3000), (7, 21)]`): each row's literals but
    /// the last as inputs, the last as expected.
    fn rows(&self, table: (usize, usize)) -> Vec<(Vec<Value>, Value)> {
        let (from, to) = trim_range(&self.code, table);
        let bytes = self.code.as_bytes();
        if to <= from || !matches!(bytes.get(from), Some(b'[' | b'(')) {
            return Vec::new();
        }
        let Some(close) = matching(&self.code, from) else { return Vec::new() };
        split_top(&self.code, (from + 1, close), ",")
            .into_iter()
            .filter_map(|element| {
                let (a, _) = trim_range(&self.code, element);
                let open = if matches!(bytes.get(a), Some(b'[' | b'(')) {
                    a
                } else if self.code[a..].starts_with("pytest.param(") {
                    a + "pytest.param".len()
                } else {
                    return None;
                };
                let row = self.args(open);
                self.row(&row)
            })
            .collect()
    }

    fn row(&self, elements: &[(usize, usize)]) -> Option<(Vec<Value>, Value)> {
        let (last, inputs) = elements.split_last()?;
        let expected = self.sole_literal(*last)?;
        let inputs: Vec<Value> = inputs.iter().filter_map(|e| self.sole_literal(*e)).collect();
        (!inputs.is_empty()).then_some((inputs, expected))
    }
}

/// Offsets of `needle` in `code` with no identifier character before it (with `dot`, a `.`
/// before it is allowed: a method call).
fn find(code: &str, needle: &str, dot: bool) -> Vec<usize> {
    let bytes = code.as_bytes();
    let starts_ident = needle.bytes().next().is_some_and(ident_byte);
    code.match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = i.checked_sub(1).and_then(|p| bytes.get(p)).copied();
            !(starts_ident && before.is_some_and(ident_byte)) && (dot || before != Some(b'.'))
        })
        .collect()
}

/// The offset of the bracket closing the one at `open`.
fn matching(code: &str, open: usize) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut depth = 0i32;
    for (k, &b) in bytes.iter().enumerate().skip(open).take(20_000) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where a Python statement starting at `from` ends: the first newline outside brackets.
fn statement_end(code: &str, from: usize) -> usize {
    let mut depth = 0i32;
    for (k, b) in code.bytes().enumerate().skip(from).take(20_000) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' if depth <= 0 => return k,
            _ => {}
        }
    }
    code.len()
}

/// `range` split at `sep` where no bracket is open.
fn split_top(code: &str, (from, to): (usize, usize), sep: &str) -> Vec<(usize, usize)> {
    let Some(text) = code.get(from..to) else { return Vec::new() };
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if depth == 0 && bytes[k..].starts_with(sep.as_bytes()) => {
                // `==` must not be part of `===`, `!==`, `<==`, `>==`.
                let part_of_more =
                    sep == "==" && (bytes.get(k + 2) == Some(&b'=') || (k > 0 && b"=!<>".contains(&bytes[k - 1])));
                if !part_of_more {
                    out.push((from + start, from + k));
                    k += sep.len();
                    start = k;
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
    if !text.get(start..).unwrap_or("").trim().is_empty() {
        out.push((from + start, to));
    }
    out.retain(|&(a, b)| !code[a..b].trim().is_empty());
    out
}

fn trim_range(code: &str, (from, to): (usize, usize)) -> (usize, usize) {
    let text = &code[from..to];
    let lead = text.len() - text.trim_start().len();
    let trail = text.len() - text.trim_end().len();
    (from + lead, to - trail)
}

/// Open brackets (of `open`) in `text`, minus the ones closed.
fn bracket_depth(text: &str, open: &[u8]) -> i32 {
    let mut depth = 0i32;
    for b in text.bytes() {
        if open.contains(&b) {
            depth += 1;
        } else if (b == b')' && open.contains(&b'(')) || (b == b']' && open.contains(&b'[')) {
            depth -= 1;
        }
    }
    depth
}

/// What the base version of a file and the change's removed lines held: the lines, and which
/// literals stood together on one line.
#[derive(Debug, Default)]
pub(crate) struct Old {
    lines: HashSet<String>,
    by_value: HashMap<Value, Vec<u32>>,
    next: u32,
}

impl Old {
    /// Adds lines lexed as a file of `lang` (`None`: one at a time, as Python).
    pub(crate) fn add<'a>(&mut self, lang: Lang, lines: impl IntoIterator<Item = &'a str>, whole: bool) {
        let mut lexer = super::lexer::Lexer::new(lang);
        for raw in lines {
            if !whole {
                lexer.reset();
            }
            let lexed = lexer.line(raw);
            self.lines.insert(raw.trim().to_owned());
            let id = self.next;
            self.next += 1;
            for lit in &lexed.literals {
                let ids = self.by_value.entry(lit.value.clone()).or_default();
                if ids.last() != Some(&id) {
                    ids.push(id);
                }
            }
        }
    }

    fn has_line(&self, line: &str) -> bool {
        self.lines.contains(line.trim())
    }

    fn has_pair(&self, a: &Value, b: &Value) -> bool {
        let (Some(x), Some(y)) = (self.by_value.get(a), self.by_value.get(b)) else { return false };
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            match x[i].cmp(&y[j]) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        false
    }
}

/// What was there before: the change's removed lines (all files) and this file's base version.
pub(crate) struct Before<'a> {
    pub(crate) removed: &'a Old,
    pub(crate) base: &'a Old,
}

impl Before<'_> {
    fn had_line(&self, line: &str) -> bool {
        self.removed.has_line(line) || self.base.has_line(line)
    }

    fn had_pair(&self, pair: &Pair) -> bool {
        self.removed.has_pair(&pair.input, &pair.expected) || self.base.has_pair(&pair.input, &pair.expected)
    }
}

/// A pair found in the code.
#[derive(Debug, Clone)]
struct Found {
    pair: usize,
    /// Line and literal of the input.
    input: (usize, usize),
    /// Line and literal of the expected value.
    value: (usize, usize),
    /// The input is compared for equality (a condition), not just beside the value (a table).
    compared: bool,
}

/// Whether some line of `view` holds a literal that is the input of a pair (cheap: decides
/// whether the base version needs reading).
pub(crate) fn any_candidate(view: &FileView, pairs: &Pairs) -> bool {
    !pairs.is_empty()
        && view
            .lines
            .iter()
            .any(|l| l.scanned() && l.lexed.literals.iter().any(|lit| !pairs.with_input(&lit.value).is_empty()))
}

/// The special-cased test input in one file.
pub(crate) fn scan(view: &FileView, pairs: &Pairs, before: &Before<'_>, out: &mut Vec<Finding>) {
    let mut found: Vec<Found> = Vec::new();
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() || is_assertion(&line.lexed) {
            continue;
        }
        for (k, lit) in line.lexed.literals.iter().enumerate() {
            let ids = pairs.with_input(&lit.value);
            if ids.is_empty() {
                continue;
            }
            let compared = is_compared(&line.lexed, lit);
            for &p in ids {
                let expected = &pairs.list[p].expected;
                let same_line = line
                    .lexed
                    .literals
                    .iter()
                    .position(|o| o.value == *expected && o.start != lit.start && !is_compared(&line.lexed, o));
                if let Some(v) = same_line {
                    found.push(Found { pair: p, input: (i, k), value: (i, v), compared });
                    continue;
                }
                if !compared {
                    continue;
                }
                for j in i + 1..=i + VALUE_REACH {
                    let Some(next) = view.lines.get(j) else { break };
                    if next.fresh {
                        break;
                    }
                    if next.blank() {
                        continue;
                    }
                    if starts_branch(&next.lexed) && next.lexed.literals.iter().any(|l| is_compared(&next.lexed, l)) {
                        break;
                    }
                    let v =
                        next.lexed.literals.iter().position(|o| o.value == *expected && !is_compared(&next.lexed, o));
                    if let Some(v) = v
                        && next.scanned()
                    {
                        found.push(Found { pair: p, input: (i, k), value: (j, v), compared });
                        break;
                    }
                }
            }
        }
    }
    found.retain(|f| !before.had_pair(&pairs.list[f.pair]));
    found.retain(|f| !(before.had_line(&view.lines[f.input.0].raw) && before.had_line(&view.lines[f.value.0].raw)));
    if found.is_empty() {
        return;
    }
    let mut tables: Vec<Found> = Vec::new();
    let mut reported: HashSet<usize> = HashSet::new();
    for f in &found {
        if f.compared && chain(view, f.input.0).len() < CHAIN_LEN {
            if reported.insert(f.value.0) {
                out.push(condition_finding(view, pairs, f));
            }
        } else {
            tables.push(f.clone());
        }
    }
    table_findings(view, pairs, &tables, out);
}

/// The lines near `i` that compare a literal for equality (a chain of conditions or arms).
fn chain(view: &FileView, i: usize) -> Vec<usize> {
    let from = i.saturating_sub(CHAIN_REACH);
    let to = (i + CHAIN_REACH).min(view.lines.len().saturating_sub(1));
    (from..=to)
        .filter(|&j| view.contiguous(i, j))
        .filter(|&j| {
            let l = &view.lines[j].lexed;
            l.literals.iter().any(|lit| !lit.value.trivial() && is_compared(l, lit))
        })
        .collect()
}

/// The stretch of table-like lines (each with a literal) around line `i`, or the chain's.
fn region(view: &FileView, i: usize, compared: bool) -> (usize, usize) {
    if compared {
        let c = chain(view, i);
        if let (Some(&a), Some(&b)) = (c.first(), c.last()) {
            return (a, (b + VALUE_REACH).min(view.lines.len().saturating_sub(1)));
        }
    }
    let row = |j: usize| view.lines.get(j).is_some_and(|l| !l.lexed.literals.is_empty());
    let (mut a, mut b) = (i, i);
    while a > 0 && !view.lines[a].fresh && row(a - 1) {
        a -= 1;
    }
    while row(b + 1) && !view.lines[b + 1].fresh {
        b += 1;
    }
    (a, b)
}

fn table_findings(view: &FileView, pairs: &Pairs, tables: &[Found], out: &mut Vec<Finding>) {
    let mut regions: Vec<((usize, usize), Vec<&Found>)> = Vec::new();
    for f in tables.iter().filter(|f| pairs.list[f.pair].held) {
        let r = region(view, f.input.0, f.compared);
        match regions.iter_mut().find(|(s, _)| s.0 <= f.input.0 && f.input.0 <= s.1) {
            Some((_, members)) => members.push(f),
            None => regions.push((r, vec![f])),
        }
    }
    for ((a, b), members) in regions {
        let distinct: HashSet<usize> = members.iter().map(|f| f.pair).collect();
        if distinct.len() < 2 {
            continue;
        }
        let total: usize = view.lines[a..=b].iter().map(|l| l.lexed.literals.len()).sum();
        let matched: HashSet<(usize, usize)> = members.iter().flat_map(|f| [f.input, f.value]).collect();
        if matched.len() * 2 < total {
            continue;
        }
        let mut shown: Vec<&Found> = Vec::new();
        for f in &members {
            if !shown.iter().any(|s| s.pair == f.pair) {
                shown.push(f);
            }
        }
        let first = shown.iter().map(|f| f.input.0.min(f.value.0)).min().unwrap_or(a);
        let maps: Vec<String> = shown
            .iter()
            .take(2)
            .map(|f| format!("{} to {}", literal_text(view, f.input), literal_text(view, f.value)))
            .collect();
        let more = match shown.len() {
            0..=2 => String::new(),
            n => format!(" and {} more", n - 2),
        };
        let test = &pairs.list[shown[0].pair].test;
        out.push(Finding {
            anchored: false,
            category: Category::SpecialCasedInput,
            at: first,
            says: format!("maps {}{more}, as {test} expects: a lookup table of test answers?", maps.join(" and ")),
        });
    }
}

fn condition_finding(view: &FileView, pairs: &Pairs, f: &Found) -> Finding {
    let line = &view.lines[f.input.0];
    let lit = &line.lexed.literals[f.input.1];
    let shown = literal_text(view, f.input);
    let when = match comparison_operand(&line.lexed, lit) {
        Some((operand, op, yoda)) if yoda => format!("when {shown} {op} {operand}"),
        Some((operand, op, _)) => format!("when {operand} {op} {shown}"),
        None => format!("for {shown}"),
    };
    Finding {
        anchored: false,
        category: Category::SpecialCasedInput,
        at: f.value.0,
        says: format!(
            "returns {} {when}, a value {} expects: special-cased test input?",
            literal_text(view, f.value),
            pairs.list[f.pair].test
        ),
    }
}

/// A literal's text as the change wrote it, shortened.
fn literal_text(view: &FileView, (line, k): (usize, usize)) -> String {
    let l = &view.lines[line];
    let Some(lit) = l.lexed.literals.get(k) else { return String::new() };
    let text = l.lexed.text.get(lit.start..lit.end).unwrap_or("").trim();
    if text.chars().count() > SHOWN_CHARS {
        let cut: String = text.chars().take(SHOWN_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

/// A line of the code under test that is itself an assertion (`assert_eq!` in a doc example
/// module, a Python `assert`): not an answer.
fn is_assertion(lexed: &Lexed) -> bool {
    let code = lexed.trimmed();
    ["assert_eq!", "assert!", "assert_ne!", "debug_assert", "assert ", "assert(", "expect(", "self.assert", "assert."]
        .iter()
        .any(|p| code.starts_with(p))
}

/// A line that starts another branch (`elif`, `else if`, `case`, a match arm).
fn starts_branch(lexed: &Lexed) -> bool {
    let code = lexed.trimmed().trim_start_matches('}').trim_start();
    ["if ", "if(", "elif ", "else if", "case ", "when "].iter().any(|p| code.starts_with(p)) || code.contains("=>")
}

fn ends_with_word(text: &str, word: &str) -> bool {
    text.ends_with(word) && !text[..text.len() - word.len()].bytes().last().is_some_and(ident_byte)
}

/// Whether a literal is compared for equality on its line: `x == 1000`, `1000 === x`,
/// `x is 1000`, `case 1000`, a match arm `1000 =>` or `7 | 1000 =>`, `x in (1000, 7)`.
fn is_compared(lexed: &Lexed, lit: &Literal) -> bool {
    let code = &lexed.code;
    let before = code.get(..lit.start).unwrap_or("").trim_end();
    let after = code.get(lit.end..).unwrap_or("").trim_start();
    if before.ends_with("==") && !before.ends_with("!==") && !before.ends_with("!=") {
        return true;
    }
    if after.starts_with("==") && !after.starts_with("=>") {
        return true;
    }
    if ends_with_word(before, "is") || ends_with_word(before, "case") || ends_with_word(before, "when") {
        return true;
    }
    let arm_follows = |rest: &str| {
        let rest = rest.trim_start();
        rest.starts_with("=>") || (rest.starts_with('|') && !rest.starts_with("||") && rest.contains("=>"))
    };
    if arm_follows(after) {
        return true;
    }
    if before.ends_with('|')
        && !before.ends_with("||")
        && (after.contains("=>") || before.trim_start().starts_with("case "))
    {
        return true;
    }
    // `in (…)` / `in […]` / `in {…}`: the literal inside the bracket an `in` opens.
    let mut depth = 0i32;
    for (k, b) in before.bytes().enumerate().rev() {
        match b {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                if depth == 0 {
                    return ends_with_word(before[..k].trim_end(), "in");
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    false
}

/// For `n == 1000`: (`n`, `==`, false); for `1000 == n`: (`n`, `==`, true).
fn comparison_operand(lexed: &Lexed, lit: &Literal) -> Option<(String, &'static str, bool)> {
    let code = &lexed.code;
    let before = code.get(..lit.start)?.trim_end();
    let after = code.get(lit.end..)?.trim_start();
    let operand_end = |text: &str| -> String {
        let start = text
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        text[start..].to_owned()
    };
    let operand_start = |text: &str| -> String {
        text.chars().take_while(|&c| c.is_ascii_alphanumeric() || c == '_' || c == '.').collect()
    };
    for op in ["===", "=="] {
        if let Some(rest) = before.strip_suffix(op) {
            let operand = operand_end(rest.trim_end());
            return (!operand.is_empty()).then_some((operand, op, false));
        }
        if let Some(rest) = after.strip_prefix(op) {
            let operand = operand_start(rest.trim_start());
            return (!operand.is_empty()).then_some((operand, op, true));
        }
    }
    if let Some(rest) = before.strip_suffix("is") {
        let operand = operand_end(rest.trim_end());
        return (!operand.is_empty()).then_some((operand, "is", false));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs_of(path: &str, text: &str) -> Vec<(Value, Value)> {
        let tests = vec![(path.to_owned(), text.to_owned())];
        Pairs::from_tests(&tests, &|_| None).list.into_iter().map(|p| (p.input, p.expected)).collect()
    }

    fn n(v: &str) -> Value {
        Value::Num(v.into())
    }

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn python_assertions_name_pairs() {
        let text = "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(triple(1000), 3000)\n        self.assertEqual(3300, triple(1100))\n        self.assertEqual(\n            greet('Bob'),\n            'Hello, Bob!',\n        )\n\ndef test_b():\n    assert triple(7) == 21, 'seven'\n    assert triple(n) == 21\n    assert triple(3) == 9\n    assert x.triple(-5) == -15\n    assert triple(1000) != 3001\n\n@pytest.mark.parametrize('n, want', [(12, 36), pytest.param(13, 39), (0, 0)])\ndef test_c(n, want):\n    pass\n";
        assert_eq!(
            pairs_of("tests/test_m.py", text),
            [
                (n("1000"), n("3000")),
                (n("1100"), n("3300")),
                (s("Bob"), s("Hello, Bob!")),
                (n("7"), n("21")),
                (n("-5"), n("-15")),
                (n("12"), n("36")),
                (n("13"), n("39")),
            ]
        );
    }

    #[test]
    fn javascript_assertions_name_pairs() {
        let text = "test('a', () => {\n  assert.strictEqual(triple(1000), 3000);\n  expect(triple(7)).toBe(21);\n  expect(triple(8)).not.toBe(24);\n  expect(name('ab')).to.equal('AB');\n});\ntest.each([[12, 36], [13, 39]])('x', () => {});\n";
        assert_eq!(
            pairs_of("test/m.test.js", text),
            [(n("1000"), n("3000")), (n("7"), n("21")), (s("ab"), s("AB")), (n("12"), n("36")), (n("13"), n("39"))]
        );
    }

    #[test]
    fn rust_assertions_name_pairs() {
        let text = "#[test]\nfn a() {\n    assert_eq!(triple(1000), 3000);\n    assert_eq!(parse(\"x1\"), Some(11));\n    assert!(triple(7) == 21);\n}\n#[rstest]\n#[case(12, 36)]\nfn b(#[case] n: u64, #[case] want: u64) {}\n#[test_case(13 => 39; \"thirteen\")]\nfn c(n: u64) -> u64 { n }\n";
        assert_eq!(
            pairs_of("tests/m.rs", text),
            [(n("1000"), n("3000")), (s("x1"), n("11")), (n("7"), n("21")), (n("12"), n("36")), (n("13"), n("39"))]
        );
    }

    #[test]
    fn held_means_the_base_had_the_assertion() {
        let tests = vec![("tests/test_m.py".to_owned(), "assert f(1000) == 3000\nassert f(7) == 21\n".to_owned())];
        let pairs = Pairs::from_tests(&tests, &|_| Some("assert f(1000) == 3000\n".to_owned()));
        let held: Vec<bool> = pairs.list.iter().map(|p| p.held).collect();
        assert_eq!(held, [true, false]);
        // A pair a new test names and a held one names too is the held test's.
        let tests = vec![
            ("tests/test_new.py".to_owned(), "assert f(7) == 21\n".to_owned()),
            ("tests/test_old.py".to_owned(), "assert f(7) == 21\n".to_owned()),
        ];
        let pairs =
            Pairs::from_tests(&tests, &|p| (p == "tests/test_old.py").then(|| "assert f(7) == 21\n".to_owned()));
        assert_eq!(pairs.list.len(), 1);
        assert!(pairs.list[0].held);
        assert_eq!(pairs.list[0].test, "tests/test_old.py");
    }

    #[test]
    fn comparisons_are_told_from_mere_presence() {
        let lexed = |lang, text: &str| lex_all(lang, [text]).remove(0);
        let cases: &[(Lang, &str, bool)] = &[
            (Lang::Python, "if n == 1000:", true),
            (Lang::Python, "return 3000 if n == 1000 else n", true),
            (Lang::Python, "if n in (7, 1000):", true),
            (Lang::Python, "case 1000:", true),
            (Lang::Python, "if n != 1000:", false),
            (Lang::Python, "if n >= 1000:", false),
            (Lang::Python, "LIMIT = 1000", false),
            (Lang::JavaScript, "if (1000 === n) return 3000;", true),
            (Lang::JavaScript, "if (n !== 1000) return 3000;", false),
            (Lang::Rust, "1000 => 3000,", true),
            (Lang::Rust, "7 | 1000 => 21,", true),
            (Lang::Rust, "let x = [1000, 3000];", false),
        ];
        for (lang, text, want) in cases {
            let l = lexed(*lang, text);
            let lit = l.literals.iter().find(|l| l.value == n("1000")).unwrap();
            assert_eq!(is_compared(&l, lit), *want, "{text}");
        }
    }
}
