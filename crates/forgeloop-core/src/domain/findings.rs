//! Reading WebGPT's code review as findings. The review request asks for lines of the form
//! [`FORMAT`]; a model never follows a format exactly, so the reader is tolerant (markdown,
//! severity synonyms, other location styles), and what it cannot read is kept and named in
//! [`ParsedReview::unparsed`], never dropped, so nothing the reviewer said is lost.
//!
//! How a reply is read, line by line:
//! 1. A finding line, after markdown decoration (`#`, `>`, `-`, `1.`, `**`), begins with the
//!    word `finding`, then an optional number, the severity, an optional location and the text.
//! 2. The following non-blank lines, up to the next finding line or the next blank line, continue
//!    its text (a line of markdown punctuation only, such as `---`, counts as blank).
//! 3. A fenced block holding a finding line is read line by line (the model fenced its whole
//!    answer); any other fenced block is code and stays whole with the text it follows.
//! 4. Other prose is kept paragraph by paragraph as text outside a finding.

use serde::{Deserialize, Serialize};

use super::repo_path::RepoPath;

/// The finding line the review request quotes, so the request and this reader agree.
pub const FORMAT: &str = "FINDING n: [severity] path:line — text";

/// Findings kept; more means a reply gone wrong, kept as text instead.
const MAX_FINDINGS: usize = 500;
/// Longest text kept per finding or unparsed block, in chars, so a runaway reply stays small.
const MAX_TEXT_CHARS: usize = 4000;
/// Bytes a block collects before later lines are left out: past it the block holds more than
/// `MAX_TEXT_CHARS` chars, so the cut (and its `…`) always shows.
const COLLECT_BYTES: usize = MAX_TEXT_CHARS * 4;

const WHY_OUTSIDE: &str = "text outside a finding";
const WHY_NO_SEVERITY: &str = "no severity (critical, high, medium, low or info)";
const WHY_NO_TEXT: &str = "no text";
const WHY_TOO_MANY: &str = "more than 500 findings";

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Must be fixed before merging: wrong results, data loss, a security hole.
    Critical,
    /// A real bug or risk that should be fixed.
    High,
    /// Worth fixing, not blocking.
    Medium,
    /// A small issue.
    Low,
    /// A remark: style, naming, a suggestion.
    Info,
}

impl Severity {
    /// Every severity, most serious first.
    pub const ALL: [Severity; 5] =
        [Severity::Critical, Severity::High, Severity::Medium, Severity::Low, Severity::Info];

    /// The severity's word, as the request names it and serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }

    /// The severity a reviewer's word stands for, in any case, synonyms and `P0`–`P3` included
    /// (models answer in the vocabulary of the tools they learnt from).
    pub fn parse(word: &str) -> Option<Severity> {
        match word.trim().to_ascii_lowercase().as_str() {
            "critical" | "blocker" | "severe" | "p0" => Some(Severity::Critical),
            "high" | "major" | "error" | "p1" => Some(Severity::High),
            "medium" | "moderate" | "warning" | "warn" | "p2" => Some(Severity::Medium),
            "low" | "minor" | "p3" => Some(Severity::Low),
            "info" | "nit" | "nitpick" | "note" | "suggestion" | "style" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// What the request says about severities: "critical, high, medium, low or info".
pub fn severity_words() -> String {
    let words: Vec<&str> = Severity::ALL.iter().map(|s| s.as_str()).collect();
    match words.split_last() {
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// One finding as the reviewer wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedFinding {
    /// forgeloop's number: 1, 2, 3… in order of appearance (the model's own may repeat or skip).
    pub number: u32,
    /// The number the model wrote, when it wrote one.
    pub label: Option<u32>,
    /// How serious the reviewer says it is.
    pub severity: Severity,
    /// Repository-relative path (no quotes, no leading `./` or `/`); `None` when no file is named.
    pub path: Option<String>,
    /// The line named, the first of a range.
    pub line: Option<u32>,
    /// The finding's words, trimmed; continuation lines joined with `'\n'`.
    pub text: String,
}

/// Text the parser could not read as a finding, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unparsed {
    /// The text as the reviewer wrote it (cut at 4000 chars).
    pub text: String,
    /// Why it is not a finding.
    pub why: String,
}

/// A reply read as findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedReview {
    /// The findings, in order of appearance.
    pub findings: Vec<ParsedFinding>,
    /// Everything else with words in it, so nothing is lost silently.
    pub unparsed: Vec<Unparsed>,
    /// The reviewer said there is nothing to report (a line like `NO FINDINGS`, case-insensitive,
    /// optional trailing period/markdown).
    pub no_findings: bool,
}

/// Reads a reviewer's reply by the rules in the module's documentation; never fails.
pub fn parse_findings(text: &str) -> ParsedReview {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut reader =
        Reader { review: ParsedReview { findings: Vec::new(), unparsed: Vec::new(), no_findings: false }, open: None };
    for item in items(&lines) {
        match item {
            Item::Line(line) => reader.line(line),
            Item::Break => reader.flush(),
            Item::Code(block) => reader.code(block),
        }
    }
    reader.flush();
    reader.review
}

/// A reply's lines with fenced blocks resolved.
enum Item<'a> {
    Line(&'a str),
    /// Ends the block being collected (a fence around findings).
    Break,
    /// A fenced block of code, fence lines included.
    Code(&'a [&'a str]),
}

struct Fence {
    ch: char,
    run: usize,
}

fn fence_open(line: &str) -> Option<Fence> {
    let t = line.trim_start();
    let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = t.chars().take_while(|&c| c == ch).count();
    (run >= 3).then_some(Fence { ch, run })
}

fn fence_closes(line: &str, open: &Fence) -> bool {
    let t = line.trim();
    let run = t.chars().take_while(|&c| c == open.ch).count();
    run >= open.run && run == t.len()
}

/// A fence around a finding (or `NO FINDINGS`) line is the model fencing its answer: its lines
/// are read. Any other fenced block is code, kept whole.
fn items<'a>(lines: &'a [&'a str]) -> Vec<Item<'a>> {
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        let Some(fence) = fence_open(line) else {
            out.push(Item::Line(line));
            i += 1;
            continue;
        };
        let rest = lines.get(i + 1..).unwrap_or(&[]);
        let close = rest.iter().position(|l| fence_closes(l, &fence));
        let inner = close.map_or(rest, |c| rest.get(..c).unwrap_or(rest));
        let after = close.map_or(lines.len(), |c| i + 1 + c + 1);
        if inner.iter().any(|l| is_no_findings(l) || finding_start(l).is_some()) {
            out.push(Item::Break);
            out.extend(inner.iter().map(|l| Item::Line(l)));
            out.push(Item::Break);
        } else {
            out.push(Item::Code(lines.get(i..after).unwrap_or(&[])));
        }
        i = after;
    }
    out
}

/// The block being collected.
enum Block {
    Finding { head: Head, text: String, raw: String },
    Other { text: String, why: &'static str },
}

impl Block {
    fn push(&mut self, line: &str) {
        match self {
            Block::Finding { text, raw, .. } => {
                append(text, line);
                append(raw, line);
            }
            Block::Other { text, .. } => append(text, line),
        }
    }
}

fn append(buf: &mut String, line: &str) {
    if buf.len() > COLLECT_BYTES {
        return;
    }
    let line = line.trim_end();
    if buf.is_empty() {
        buf.push_str(line.trim_start());
    } else {
        buf.push('\n');
        buf.push_str(line);
    }
}

struct Reader {
    review: ParsedReview,
    open: Option<Block>,
}

impl Reader {
    fn line(&mut self, line: &str) {
        if is_blank(line) || fence_open(line).is_some() {
            self.flush();
        } else if is_no_findings(line) {
            self.flush();
            self.review.no_findings = true;
        } else if let Some(rest) = finding_start(line) {
            self.flush();
            let mut raw = String::new();
            append(&mut raw, line);
            self.open = Some(match read_head(rest) {
                Ok((head, text)) => {
                    let mut collected = String::new();
                    append(&mut collected, text);
                    Block::Finding { head, text: collected, raw }
                }
                Err(why) => Block::Other { text: raw, why },
            });
        } else {
            self.open.get_or_insert_with(|| Block::Other { text: String::new(), why: WHY_OUTSIDE }).push(line.trim());
        }
    }

    fn code(&mut self, block: &[&str]) {
        let words = block.iter().skip(1).any(|l| !l.trim().is_empty() && fence_open(l).is_none());
        if !words {
            self.flush();
            return;
        }
        let open = self.open.get_or_insert_with(|| Block::Other { text: String::new(), why: WHY_OUTSIDE });
        for line in block {
            open.push(line);
        }
    }

    fn flush(&mut self) {
        match self.open.take() {
            None => {}
            Some(Block::Other { text, why }) => self.keep(&text, why),
            Some(Block::Finding { head, text, raw }) => {
                let text = text.trim();
                if text.is_empty() {
                    self.keep(&raw, WHY_NO_TEXT);
                } else if self.review.findings.len() >= MAX_FINDINGS {
                    self.keep(&raw, WHY_TOO_MANY);
                } else {
                    let number = u32::try_from(self.review.findings.len() + 1).unwrap_or(u32::MAX);
                    let (path, line) = head.location.map_or((None, None), |l| (Some(l.path), l.line));
                    self.review.findings.push(ParsedFinding {
                        number,
                        label: head.label,
                        severity: head.severity,
                        path,
                        line,
                        text: cap(text),
                    });
                }
            }
        }
    }

    fn keep(&mut self, text: &str, why: &str) {
        let text = text.trim();
        if !text.is_empty() {
            self.review.unparsed.push(Unparsed { text: cap(text), why: why.to_owned() });
        }
    }
}

/// At most `MAX_TEXT_CHARS` chars, the last one `…` when cut.
fn cap(text: &str) -> String {
    if text.chars().nth(MAX_TEXT_CHARS).is_none() {
        return text.to_owned();
    }
    let cut = text.char_indices().nth(MAX_TEXT_CHARS - 1).map_or(text.len(), |(i, _)| i);
    format!("{}…", text.get(..cut).unwrap_or(text))
}

/// Blank, or markdown punctuation only (`---`, `***`, `|---|`): nothing to keep, ends a block.
fn is_blank(line: &str) -> bool {
    line.chars().all(|c| c.is_whitespace() || matches!(c, '-' | '*' | '_' | '=' | '#' | '>' | '|' | '~' | ':' | '+'))
}

/// The line without leading quote marks, headings, bullets, list numbers and bold.
fn strip_decoration(line: &str) -> &str {
    let mut s = line.trim_start();
    loop {
        let before = s.len();
        if let Some(r) = s.strip_prefix('>') {
            s = r;
        } else if s.starts_with('#') {
            s = s.trim_start_matches('#');
        } else if let Some(r) = s.strip_prefix("**") {
            s = r;
        } else if let Some(r) = bullet(s) {
            s = r;
        } else if let Some(r) = s.strip_prefix('*') {
            s = r;
        } else if let Some(r) = list_number(s) {
            s = r;
        }
        s = s.trim_start();
        if s.len() == before {
            return s;
        }
    }
}

fn bullet(s: &str) -> Option<&str> {
    let r = s.strip_prefix(['-', '*', '+', '•'])?;
    r.starts_with(char::is_whitespace).then_some(r)
}

fn list_number(s: &str) -> Option<&str> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let r = s.get(digits..)?.strip_prefix(['.', ')'])?;
    r.starts_with(char::is_whitespace).then_some(r)
}

/// `NO FINDINGS`, in any case, with markdown or a period around it.
fn is_no_findings(line: &str) -> bool {
    let s = strip_decoration(line)
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '`' | '_' | '.' | '!' | '"'));
    let mut words = s.split(|c: char| c.is_whitespace() || c == '_' || c == '-').filter(|w| !w.is_empty());
    matches!(
        (words.next(), words.next(), words.next()),
        (Some(a), Some(b), None) if a.eq_ignore_ascii_case("no") && b.eq_ignore_ascii_case("findings")
    )
}

/// What follows the word `finding` on a finding line. Unless written in capitals as the format
/// asks, the word must be followed by a number, punctuation or `word:`, so prose such as
/// "Finding the cause took long" is not one; a "Findings" heading never is.
fn finding_start(line: &str) -> Option<&str> {
    let s = strip_decoration(line);
    let rest = strip_word_ci(s, "finding")?;
    if s.starts_with("FINDING") {
        return Some(rest);
    }
    let next = rest.trim_start();
    let word = next.bytes().take_while(u8::is_ascii_alphanumeric).count();
    match next.chars().next() {
        None => Some(rest),
        Some(c)
            if c.is_ascii_digit()
                || matches!(c, '#' | ':' | '.' | ')' | '*' | '[' | '(' | '-' | '—' | '–' | '`' | '|') =>
        {
            Some(rest)
        }
        Some(_) if next.get(word..).is_some_and(|r| r.starts_with(':')) => Some(rest),
        _ => None,
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) { s.get(prefix.len()..) } else { None }
}

/// `prefix` as a whole word.
fn strip_word_ci<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    strip_prefix_ci(s, word).filter(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
}

/// What a finding line says before its text.
struct Head {
    label: Option<u32>,
    severity: Severity,
    location: Option<Location>,
}

struct Location {
    path: String,
    line: Option<u32>,
}

/// Reads `[n][:] severity [location] [—] text`; the location may also come before the severity.
fn read_head(rest: &str) -> Result<(Head, &str), &'static str> {
    let mut s = skip_stars(rest);
    if let Some(r) = s.strip_prefix('#') {
        s = r.trim_start();
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let label = if digits > 0 { s.get(..digits).and_then(|d| d.parse::<u32>().ok()) } else { None };
    s = skip_stars(s.get(digits..).unwrap_or(""));
    s = s.strip_prefix(['.', ')']).unwrap_or(s);
    s = skip_separator(s);

    let (severity, location, after) = if let Some((severity, after)) = take_severity(s) {
        let after = skip_separator(skip_soft(after));
        match take_location(after) {
            Some((location, after)) => (severity, Some(location), after),
            None => (severity, None, after),
        }
    } else if let Some((location, after)) = take_location(s) {
        let (severity, after) = take_severity(skip_separator(skip_soft(after))).ok_or(WHY_NO_SEVERITY)?;
        (severity, Some(location), after)
    } else {
        return Err(WHY_NO_SEVERITY);
    };
    let text = clean_text(skip_separator(skip_soft(after)));
    Ok((Head { label, severity, location }, text))
}

fn skip_stars(s: &str) -> &str {
    s.trim_start().trim_start_matches('*').trim_start()
}

/// A bold marker's closing `**`, not the opening of bold text.
fn skip_closing_stars(s: &str) -> &str {
    let r = s.trim_start_matches('*');
    match r.chars().next() {
        None => r,
        Some(c) if c.is_whitespace() || matches!(c, ':' | ',' | ';' | '|' | '—' | '–' | '-' | ')' | ']' | '.') => r,
        Some(_) => s,
    }
}

fn skip_soft(s: &str) -> &str {
    let s = skip_closing_stars(s.trim_start()).trim_start();
    s.strip_prefix([',', ';']).unwrap_or(s).trim_start()
}

/// One separator before the text: `—`, `–`, `--`, ` - `, `:` or `|`.
fn skip_separator(s: &str) -> &str {
    let s = skip_closing_stars(s.trim_start()).trim_start();
    let r = if let Some(r) = s.strip_prefix("--") {
        r.trim_start_matches('-')
    } else if let Some(r) = s.strip_prefix(['—', '–', '−']) {
        r.trim_start_matches(['—', '–', '−'])
    } else if let Some(r) = s.strip_prefix([':', '|']) {
        r
    } else if let Some(r) = s.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with(char::is_whitespace)) {
        r
    } else {
        return s;
    };
    skip_closing_stars(r.trim_start()).trim_start()
}

fn starts_with_separator(s: &str) -> bool {
    s.starts_with(['—', '–', '−', ':', '|'])
        || s.starts_with("--")
        || s.strip_prefix('-').is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace))
}

/// The text, without the closing `**` of a line written all in bold.
fn clean_text(s: &str) -> &str {
    let t = s.trim();
    match t.strip_suffix("**") {
        Some(r) if t.matches("**").count() % 2 == 1 => r.trim_end(),
        _ => t,
    }
}

/// A severity: `[high]`, `(high)`, `**[HIGH]**`, `severity: high`, or a bare word when it is a
/// canonical name or written in capitals (a bare "error" or "note" may be the text's first word).
fn take_severity(s: &str) -> Option<(Severity, &str)> {
    let s = skip_stars(s);
    let (severity, rest) = bracketed_severity(s).or_else(|| named_severity(s)).or_else(|| word_severity(s, false))?;
    // "High severity", "[P1] priority"
    let r = rest.trim_start().trim_start_matches('-').trim_start();
    let rest = strip_word_ci(r, "severity").or_else(|| strip_word_ci(r, "priority")).unwrap_or(rest);
    Some((severity, skip_closing_stars(rest)))
}

fn bracketed_severity(s: &str) -> Option<(Severity, &str)> {
    let close = match s.chars().next()? {
        '[' => ']',
        '(' => ')',
        _ => return None,
    };
    let end = s.find(close)?;
    let inner = s.get(1..end)?;
    let severity = inner
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .find(|w| !["severity", "sev", "priority", "level"].iter().any(|k| w.eq_ignore_ascii_case(k)))
        .and_then(Severity::parse)?;
    Some((severity, skip_closing_stars(s.get(end + 1..).unwrap_or(""))))
}

fn named_severity(s: &str) -> Option<(Severity, &str)> {
    let r = ["severity", "priority", "sev"].iter().find_map(|k| strip_word_ci(s, k))?;
    let r = skip_stars(r);
    let r = skip_stars(r.strip_prefix([':', '=']).unwrap_or(r));
    bracketed_severity(r).or_else(|| word_severity(r, true))
}

fn word_severity(s: &str, any_spelling: bool) -> Option<(Severity, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_alphanumeric).count();
    let word = s.get(..n).filter(|w| !w.is_empty())?;
    let severity = Severity::parse(word)?;
    let canonical = severity.as_str().eq_ignore_ascii_case(word)
        || (word.len() == 2 && (word.starts_with('p') || word.starts_with('P')));
    let capitals = !word.bytes().any(|b| b.is_ascii_lowercase());
    (any_spelling || canonical || capitals).then(|| (severity, skip_closing_stars(s.get(n..).unwrap_or(""))))
}

/// A location at the start of `s`: `path`, `path:line[:col]`, `path#L12[-L20]`, `` `path`:line ``,
/// `path (line 12)`, `path, line 12`, `[path:line](url)`. A token counts only when it is clearly
/// one: it names a line, is followed by a separator or nothing, or is a file under a directory;
/// otherwise it stays in the text (`self.items is never cleared` names no file).
fn take_location(s: &str) -> Option<(Location, &str)> {
    let (token, mut after, quoted) = location_token(skip_stars(s))?;
    let mut spot = split_marker(token)?;
    if !spot.marked {
        // `path`:42 after a quoted path, or (line 42) after any path
        let found = if quoted { read_marker(after) } else { None }.or_else(|| line_suffix(after));
        if let Some((line, r)) = found {
            spot.line = line;
            spot.marked = true;
            after = r;
        }
    }
    let path = clean_path(spot.path, spot.marked)?;
    let next = skip_closing_stars(after.trim_start()).trim_start();
    let in_directory = spot.path.contains('/') && path.rsplit('/').next().is_some_and(has_extension);
    let clear = spot.marked || spot.colon || next.is_empty() || starts_with_separator(next) || in_directory;
    clear.then_some((Location { path, line: spot.line }, after))
}

/// The location's token, what follows it, and whether it was quoted.
fn location_token(s: &str) -> Option<(&str, &str, bool)> {
    let first = s.chars().next()?;
    if matches!(first, '`' | '"' | '\'') {
        let body = s.get(1..)?;
        let end = body.find(first)?;
        return Some((body.get(..end)?, body.get(end + 1..)?, true));
    }
    if first == '[' {
        // A markdown link: [src/lib.rs:42](https://…)
        if let Some(mid) = s.find("](") {
            let label = s.get(1..mid)?;
            if !label.contains(char::is_whitespace) && !label.contains(']') {
                let url = s.get(mid + 2..)?;
                let close = url.find(')')?;
                return Some((label.trim_matches('`'), url.get(close + 1..)?, true));
            }
        }
    }
    let end = s.find(|c: char| c.is_whitespace() || c == '—' || c == '–').unwrap_or(s.len());
    let token = s.get(..end)?.trim_matches('*');
    let token = token.strip_prefix(['(', '[']).unwrap_or(token);
    Some((token, s.get(end..)?, false))
}

struct Spot<'a> {
    path: &'a str,
    line: Option<u32>,
    /// A line marker was written (even an unreadable one, such as `:0`).
    marked: bool,
    /// The token ends with `:`, the separator before the text.
    colon: bool,
}

/// Splits `path:line…` or `path#L…`; `None` when something other than punctuation follows.
fn split_marker(token: &str) -> Option<Spot<'_>> {
    for (i, c) in token.char_indices() {
        if c != ':' && c != '#' {
            continue;
        }
        let Some((line, rest)) = token.get(i..).and_then(read_marker) else { continue };
        if !rest.chars().all(|c| matches!(c, ',' | ';' | '.' | ')' | ']' | ':' | '*')) {
            return None;
        }
        return Some(Spot { path: token.get(..i)?, line, marked: true, colon: rest.contains(':') });
    }
    let mut path = token;
    let mut colon = false;
    while let Some(last) = path.chars().last() {
        let unbalanced = (last == ')' && !path.contains('(')) || (last == ']' && !path.contains('['));
        // A final `.` ends a sentence, unless it is part of a `..` segment.
        let full_stop = last == '.' && !path.ends_with("..") && path.len() > 1;
        if !(matches!(last, ':' | ',' | ';') || unbalanced || full_stop) {
            break;
        }
        colon |= last == ':';
        path = path.get(..path.len() - last.len_utf8())?;
    }
    Some(Spot { path, line: None, marked: false, colon })
}

/// `:42`, `:L42`, `:42:7`, `:42-50`, `#L12`, `#L12-L20` at the start of `s`: the first line
/// (`None` when it is 0 or too large) and what follows.
fn read_marker(s: &str) -> Option<(Option<u32>, &str)> {
    let r = match s.strip_prefix(':') {
        Some(r) => r.strip_prefix(['L', 'l']).unwrap_or(r),
        None => s.strip_prefix("#L").or_else(|| s.strip_prefix("#l"))?,
    };
    let (line, mut r) = line_number(r)?;
    if let Some((_, x)) = r.strip_prefix(':').and_then(line_number) {
        r = x;
    } else if let Some((_, x)) =
        r.strip_prefix(['-', '–']).map(|x| x.strip_prefix(['L', 'l']).unwrap_or(x)).and_then(line_number)
    {
        r = x;
    }
    Some((line, r))
}

fn line_number(s: &str) -> Option<(Option<u32>, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    let digits = s.get(..n).filter(|d| !d.is_empty())?;
    Some((digits.parse::<u32>().ok().filter(|&l| l > 0), s.get(n..).unwrap_or("")))
}

/// ` (line 12)`, `, line 12`, ` lines 12-20`, ` (L12)` after a path.
fn line_suffix(s: &str) -> Option<(Option<u32>, &str)> {
    let r = s.trim_start();
    let r = r.strip_prefix(',').unwrap_or(r).trim_start();
    let paren = r.starts_with('(');
    let r = r.strip_prefix('(').unwrap_or(r).trim_start();
    let r = match strip_word_ci(r, "lines").or_else(|| strip_word_ci(r, "line")) {
        Some(r) => r.trim_start().strip_prefix(':').unwrap_or(r).trim_start(),
        None => r.strip_prefix(['L', 'l']).filter(|x| x.starts_with(|c: char| c.is_ascii_digit()))?,
    };
    let (line, mut r) = line_number(r)?;
    if let Some((_, x)) = r.trim_start().strip_prefix(['-', '–']).and_then(|x| line_number(x.trim_start())) {
        r = x;
    }
    if paren {
        r = r.trim_start().strip_prefix(')').unwrap_or(r);
    }
    Some((line, r))
}

/// A repository path, or `None`: URLs, `..`, and words that do not look like a file are refused.
fn clean_path(path: &str, marked: bool) -> Option<String> {
    let lower_start = path.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("www."));
    let odd = |c: char| {
        c.is_whitespace()
            || c.is_control()
            || matches!(c, '`' | '"' | '\'' | '<' | '>' | '*' | '|' | ':' | '\\' | '?' | '#')
    };
    if path.contains("://") || lower_start || path.chars().any(odd) {
        return None;
    }
    let path = path.trim_start_matches('/');
    let checked = RepoPath::parse(path).ok()?;
    let clean = checked.as_str();
    let name = clean.rsplit('/').next().unwrap_or(clean);
    let plain_name = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    let looks = path.contains('/') || has_extension(name) || (marked && plain_name);
    (!clean.is_empty() && looks).then(|| clean.to_owned())
}

/// `lib.rs`, `.gitignore`: a dot and an extension-like word after it.
fn has_extension(name: &str) -> bool {
    name.rfind('.').and_then(|i| name.get(i + 1..)).is_some_and(|ext| {
        !ext.is_empty()
            && ext.len() <= 10
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn one(text: &str) -> ParsedFinding {
        let review = parse_findings(text);
        assert_eq!(review.findings.len(), 1, "{text:?} gave {review:#?}");
        review.findings[0].clone()
    }

    fn finding(
        number: u32,
        label: Option<u32>,
        severity: Severity,
        path: Option<&str>,
        line: Option<u32>,
        text: &str,
    ) -> ParsedFinding {
        ParsedFinding { number, label, severity, path: path.map(str::to_owned), line, text: text.to_owned() }
    }

    fn place(f: &ParsedFinding) -> (Option<&str>, Option<u32>) {
        (f.path.as_deref(), f.line)
    }

    #[test]
    fn the_canonical_line_is_read() {
        let review = parse_findings("FINDING 1: [high] src/lib.rs:42 — unchecked index");
        assert_eq!(
            review,
            ParsedReview {
                findings: vec![finding(1, Some(1), Severity::High, Some("src/lib.rs"), Some(42), "unchecked index")],
                unparsed: vec![],
                no_findings: false,
            }
        );
    }

    #[test]
    fn every_separator_before_the_text_is_read() {
        for sep in ["—", "–", "-", "--", ":"] {
            let line = format!("FINDING 1: [high] src/lib.rs:42 {sep} unchecked index");
            let f = one(&line);
            assert_eq!((place(&f), f.text.as_str()), ((Some("src/lib.rs"), Some(42)), "unchecked index"), "{line}");
        }
        let f = one("FINDING 1: [high] src/lib.rs:42: unchecked index");
        assert_eq!((place(&f), f.text.as_str()), ((Some("src/lib.rs"), Some(42)), "unchecked index"));
        let f = one("FINDING 1: [high] src/lib.rs:42—unchecked index");
        assert_eq!((place(&f), f.text.as_str()), ((Some("src/lib.rs"), Some(42)), "unchecked index"));
        // A hyphen inside the text is not a separator.
        assert_eq!(one("FINDING 1: [low] a.rs:1 — off-by-one in x - y").text, "off-by-one in x - y");
    }

    #[test]
    fn markdown_decoration_around_the_line_is_ignored() {
        for line in [
            "**FINDING 1:** [high] src/lib.rs:42 — unchecked index",
            "### FINDING 1: [high] src/lib.rs:42 — unchecked index",
            "### FINDING 1 — [high] src/lib.rs:42 — unchecked index",
            "- FINDING 1: [high] src/lib.rs:42 — unchecked index",
            "* FINDING 1: [high] src/lib.rs:42 — unchecked index",
            "1. FINDING 1: [high] src/lib.rs:42 — unchecked index",
            "> FINDING 1: [high] src/lib.rs:42 — unchecked index",
            "> - **FINDING 1**: [high] src/lib.rs:42 — unchecked index",
            "  FINDING 1: [high] src/lib.rs:42 — unchecked index  ",
            "**FINDING 1: [high] src/lib.rs:42 — unchecked index**",
            "FINDING 1: [high] `src/lib.rs:42` — unchecked index",
            "FINDING 1: [high] `src/lib.rs`:42 — unchecked index",
            "FINDING 1: [high] **src/lib.rs:42** — unchecked index",
            "FINDING 1: [high] [src/lib.rs:42](https://github.com/o/r/blob/main/src/lib.rs#L42) — unchecked index",
            "FINDING 1: [high] (src/lib.rs:42) — unchecked index",
            "FINDING 1: **[HIGH]** src/lib.rs:42 — unchecked index",
            "FINDING 1: [**high**] src/lib.rs:42 — unchecked index",
            "FINDING 1: (high) src/lib.rs:42 — unchecked index",
            "FINDING 1: HIGH src/lib.rs:42 — unchecked index",
            "FINDING 1: **HIGH** — src/lib.rs:42 — unchecked index",
            "FINDING 1: severity: high, src/lib.rs:42 — unchecked index",
            "FINDING 1: **Severity:** High — src/lib.rs:42 — unchecked index",
            "FINDING 1 (severity: high): src/lib.rs:42 — unchecked index",
            "FINDING 1: [High severity] src/lib.rs:42 — unchecked index",
            "FINDING 1: src/lib.rs:42 [high] — unchecked index",
            "FINDING 1 — HIGH — src/lib.rs:42 — unchecked index",
        ] {
            assert_eq!(
                one(line),
                finding(1, Some(1), Severity::High, Some("src/lib.rs"), Some(42), "unchecked index"),
                "{line}"
            );
        }
    }

    #[test]
    fn bare_severity_words_need_capitals_or_the_canonical_name() {
        assert_eq!(one("FINDING 1: Low — x").severity, Severity::Low);
        assert_eq!(one("FINDING 1: NIT — x").severity, Severity::Info);
        assert_eq!(one("FINDING 1: P0 a.rs:1 — x").severity, Severity::Critical);
        assert_eq!(one("FINDING 1: [note] x").severity, Severity::Info);
        // "error" as the text's first word is not a severity.
        let review = parse_findings("FINDING 1: error handling is missing");
        assert!(review.findings.is_empty());
        assert_eq!(review.unparsed[0].why, WHY_NO_SEVERITY);
    }

    #[test]
    fn severity_words_and_synonyms() {
        for (word, want) in [
            ("critical", Severity::Critical),
            ("BLOCKER", Severity::Critical),
            ("Severe", Severity::Critical),
            ("P0", Severity::Critical),
            ("high", Severity::High),
            ("major", Severity::High),
            ("Error", Severity::High),
            ("p1", Severity::High),
            ("medium", Severity::Medium),
            ("moderate", Severity::Medium),
            ("warning", Severity::Medium),
            ("WARN", Severity::Medium),
            ("P2", Severity::Medium),
            ("low", Severity::Low),
            ("minor", Severity::Low),
            ("P3", Severity::Low),
            ("info", Severity::Info),
            ("nit", Severity::Info),
            ("nitpick", Severity::Info),
            ("note", Severity::Info),
            ("suggestion", Severity::Info),
            ("Style", Severity::Info),
        ] {
            assert_eq!(Severity::parse(word), Some(want), "{word}");
        }
        for word in ["", "bug", "p4", "hi", "highest", "crítical"] {
            assert_eq!(Severity::parse(word), None, "{word}");
        }
        for s in Severity::ALL {
            assert_eq!(Severity::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<Severity>(&format!("\"{}\"", s.as_str())).unwrap(), s);
        }
    }

    #[test]
    fn the_request_and_the_parser_agree() {
        assert_eq!(severity_words(), "critical, high, medium, low or info");
        assert_eq!(WHY_NO_SEVERITY, format!("no severity ({})", severity_words()));
        assert_eq!(WHY_TOO_MANY, format!("more than {MAX_FINDINGS} findings"));
        // The format line itself, quoted back, is not a finding.
        let review = parse_findings(FORMAT);
        assert!(review.findings.is_empty());
        assert_eq!(review.unparsed, vec![Unparsed { text: FORMAT.to_owned(), why: WHY_NO_SEVERITY.to_owned() }]);
    }

    #[test]
    fn the_word_finding_in_any_case_with_or_without_a_number() {
        let f = one("Finding 2 - [medium] src/a.py:3 - slow loop");
        assert_eq!((f.label, f.severity, f.text.as_str()), (Some(2), Severity::Medium, "slow loop"));
        let f = one("FINDING: [low] src/a.py:3 — typo");
        assert_eq!((f.number, f.label, f.severity), (1, None, Severity::Low));
        let f = one("finding #3: [info] docs/x.md — wording");
        assert_eq!((f.label, f.path.as_deref()), (Some(3), Some("docs/x.md")));
        let f = one("FINDING 99999999999: [low] a.rs:1 — huge label");
        assert_eq!((f.label, f.text.as_str()), (None, "huge label"));
    }

    #[test]
    fn numbers_are_forgeloops_and_labels_the_models() {
        let review = parse_findings(
            "FINDING 3: [high] a.rs:1 — one\nFINDING 3: [low] b.rs:2 — two\nFINDING: [info] — three\nFINDING 1: [medium] c.rs — four",
        );
        let got: Vec<(u32, Option<u32>)> = review.findings.iter().map(|f| (f.number, f.label)).collect();
        assert_eq!(got, vec![(1, Some(3)), (2, Some(3)), (3, None), (4, Some(1))]);
    }

    #[test]
    fn locations_in_other_styles() {
        for (rest, path, line) in [
            ("src/lib.rs:42", Some("src/lib.rs"), Some(42)),
            ("src/lib.rs:42:7", Some("src/lib.rs"), Some(42)),
            ("src/lib.rs:L42", Some("src/lib.rs"), Some(42)),
            ("src/lib.rs:42-50", Some("src/lib.rs"), Some(42)),
            ("src/lib.rs#L12", Some("src/lib.rs"), Some(12)),
            ("src/lib.rs#L12-L20", Some("src/lib.rs"), Some(12)),
            ("src/lib.rs (line 12)", Some("src/lib.rs"), Some(12)),
            ("src/lib.rs (lines 12-20)", Some("src/lib.rs"), Some(12)),
            ("src/lib.rs, line 12", Some("src/lib.rs"), Some(12)),
            ("`src/lib.rs`, line 12", Some("src/lib.rs"), Some(12)),
            ("src/lib.rs (L12)", Some("src/lib.rs"), Some(12)),
            ("src/lib.rs", Some("src/lib.rs"), None),
            ("Cargo.toml:3", Some("Cargo.toml"), Some(3)),
            ("Dockerfile:3", Some("Dockerfile"), Some(3)),
            (".github/workflows/ci.yml:9", Some(".github/workflows/ci.yml"), Some(9)),
            ("src/:1", Some("src"), Some(1)),
            ("./src/lib.rs:4", Some("src/lib.rs"), Some(4)),
            ("/src/lib.rs:4", Some("src/lib.rs"), Some(4)),
            ("src//lib.rs:4", Some("src/lib.rs"), Some(4)),
            ("web/pages/[id].tsx:5", Some("web/pages/[id].tsx"), Some(5)),
            ("src/lib.rs:0", Some("src/lib.rs"), None),
            ("src/lib.rs:99999999999", Some("src/lib.rs"), None),
        ] {
            let line_text = format!("FINDING 1: [high] {rest} — the text");
            let f = one(&line_text);
            assert_eq!((place(&f), f.text.as_str()), ((path, line), "the text"), "{line_text}");
        }
        // A file under a directory needs no separator after it.
        let f = one("FINDING 1: [high] src/lib.rs unchecked index");
        assert_eq!((place(&f), f.text.as_str()), ((Some("src/lib.rs"), None), "unchecked index"));
    }

    #[test]
    fn findings_without_a_file() {
        let f = one("FINDING 4: [info] — general: the naming is inconsistent");
        assert_eq!((place(&f), f.text.as_str()), ((None, None), "general: the naming is inconsistent"));
        for (line, text) in [
            ("FINDING 1: [low] self.items is never cleared", "self.items is never cleared"),
            ("FINDING 1: [low] e.g. the naming", "e.g. the naming"),
            ("FINDING 1: [low] `unwrap()` on user input", "`unwrap()` on user input"),
            ("FINDING 1: [low] Summary: fine", "Summary: fine"),
            ("FINDING 1: [low] line 42: wrong", "line 42: wrong"),
            ("FINDING 1: [low] **bold** claim", "**bold** claim"),
        ] {
            let f = one(line);
            assert_eq!((place(&f), f.text.as_str()), ((None, None), text), "{line}");
        }
    }

    #[test]
    fn urls_and_climbing_paths_are_not_paths() {
        for (line, text) in [
            (
                "FINDING 1: [high] https://github.com/o/r/blob/main/src/lib.rs#L42 — unchecked",
                "https://github.com/o/r/blob/main/src/lib.rs#L42 — unchecked",
            ),
            ("FINDING 1: [high] www.example.com/a.js — tracker", "www.example.com/a.js — tracker"),
            ("FINDING 1: [high] ../etc/passwd:1 — escapes", "../etc/passwd:1 — escapes"),
            ("FINDING 1: [high] src/../../x.rs:3 — escapes", "src/../../x.rs:3 — escapes"),
            ("FINDING 1: [high] `a/..` — escapes", "`a/..` — escapes"),
        ] {
            let f = one(line);
            assert_eq!((place(&f), f.text.as_str()), ((None, None), text), "{line}");
        }
    }

    #[test]
    fn continuation_lines_join_the_text_until_a_blank_line_or_the_next_finding() {
        let review = parse_findings(
            "FINDING 1: [high] src/lib.rs:42 — unchecked index\n  `v[i]` panics when i >= len.\n- use `v.get(i)`\nFINDING 2: [low] b.rs:1 — two\nmore on two\n\nSummary: fix the first.",
        );
        assert_eq!(review.findings[0].text, "unchecked index\n`v[i]` panics when i >= len.\n- use `v.get(i)`");
        assert_eq!(review.findings[1].text, "two\nmore on two");
        assert_eq!(review.unparsed, vec![Unparsed { text: "Summary: fix the first.".into(), why: WHY_OUTSIDE.into() }]);
        // A rule line ends a finding like a blank line.
        let review = parse_findings("FINDING 1: [high] a.rs:1 — one\n---\nAfterwards.");
        assert_eq!(review.findings[0].text, "one");
        assert_eq!(review.unparsed[0].text, "Afterwards.");
    }

    #[test]
    fn the_text_may_start_on_the_next_line() {
        let f = one("### FINDING 1: [high] src/lib.rs:42\nThe index is unchecked.\nIt panics.");
        assert_eq!(
            (place(&f), f.text.as_str()),
            ((Some("src/lib.rs"), Some(42)), "The index is unchecked.\nIt panics.")
        );
    }

    #[test]
    fn unreadable_finding_lines_are_kept_with_the_reason() {
        let review = parse_findings(
            "FINDING 1: src/lib.rs:42 — unchecked index\nsecond line\n\nFINDING 2: [bug] a.rs — x\n\n**FINDING 3:** [high] src/lib.rs:42\n\nFINDING 4: [low] b.rs:1 — fine",
        );
        assert_eq!(
            review.unparsed,
            vec![
                Unparsed {
                    text: "FINDING 1: src/lib.rs:42 — unchecked index\nsecond line".into(),
                    why: WHY_NO_SEVERITY.into()
                },
                Unparsed { text: "FINDING 2: [bug] a.rs — x".into(), why: WHY_NO_SEVERITY.into() },
                Unparsed { text: "**FINDING 3:** [high] src/lib.rs:42".into(), why: WHY_NO_TEXT.into() },
            ]
        );
        assert_eq!(review.findings, vec![finding(1, Some(4), Severity::Low, Some("b.rs"), Some(1), "fine")]);
        assert_eq!(parse_findings("### FINDING 1").unparsed[0].why, WHY_NO_SEVERITY);
        assert_eq!(parse_findings("Finding one: a.rs — x").unparsed[0].why, WHY_NO_SEVERITY);
        assert_eq!(parse_findings("FINDING ABOUT a.rs").unparsed[0].why, WHY_NO_SEVERITY);
        assert_eq!(parse_findings("FINDING 1: [high]").unparsed[0].why, WHY_NO_TEXT);
    }

    #[test]
    fn prose_outside_findings_is_kept_by_paragraph() {
        let review = parse_findings(
            "Here is my review of the change.\nI looked at every file.\n\n## Findings\n\nFINDING 1: [medium] a.rs:3 — x\n\nOverall it looks good.\n\nFinding the cause took a while.",
        );
        assert_eq!(review.findings.len(), 1);
        let texts: Vec<(&str, &str)> = review.unparsed.iter().map(|u| (u.text.as_str(), u.why.as_str())).collect();
        assert_eq!(
            texts,
            vec![
                ("Here is my review of the change.\nI looked at every file.", WHY_OUTSIDE),
                ("## Findings", WHY_OUTSIDE),
                ("Overall it looks good.", WHY_OUTSIDE),
                ("Finding the cause took a while.", WHY_OUTSIDE),
            ]
        );
    }

    #[test]
    fn no_findings_is_recognised() {
        for text in
            ["NO FINDINGS", "No findings.", "**NO FINDINGS**", "`NO_FINDINGS`", "> no findings!", "  NO  FINDINGS  "]
        {
            let review = parse_findings(text);
            assert!(review.no_findings, "{text}");
            assert!(review.findings.is_empty() && review.unparsed.is_empty(), "{text}: {review:?}");
        }
        let review = parse_findings("I reviewed the diff.\nNO FINDINGS");
        assert!(review.no_findings);
        assert_eq!(review.unparsed, vec![Unparsed { text: "I reviewed the diff.".into(), why: WHY_OUTSIDE.into() }]);
        for text in ["No findings, but see below.", "There are no findings.", "FINDINGS: none"] {
            assert!(!parse_findings(text).no_findings, "{text}");
        }
    }

    #[test]
    fn fenced_findings_are_read_and_fence_lines_never_kept_alone() {
        let review = parse_findings(
            "Here:\n```text\nFINDING 1: [high] a.rs:1 — one\nFINDING 2: [low] b.rs:2 — two\n```\nThanks.",
        );
        assert_eq!(review.findings.len(), 2);
        assert_eq!(review.findings[1].text, "two");
        let texts: Vec<&str> = review.unparsed.iter().map(|u| u.text.as_str()).collect();
        assert_eq!(texts, vec!["Here:", "Thanks."]);
        // An unclosed fence around findings, and one around NO FINDINGS.
        assert_eq!(parse_findings("```\nFINDING 1: [high] a.rs:1 — one").findings.len(), 1);
        let review = parse_findings("```\nNO FINDINGS\n```");
        assert!(review.no_findings && review.unparsed.is_empty());
        // Empty blocks leave nothing.
        assert_eq!(parse_findings("```rust\n\n```\n~~~\n~~~").unparsed, vec![]);
    }

    #[test]
    fn code_stays_whole_with_the_text_it_follows() {
        let review = parse_findings(
            "FINDING 1: [high] src/lib.rs:42 — unchecked index. Use:\n```rust\n    v.get(i)\n\n    // FINDING? no\n```\nafter the code\n\n```\nlone code\n```",
        );
        assert_eq!(
            review.findings[0].text,
            "unchecked index. Use:\n```rust\n    v.get(i)\n\n    // FINDING? no\n```\nafter the code"
        );
        assert_eq!(review.unparsed, vec![Unparsed { text: "```\nlone code\n```".into(), why: WHY_OUTSIDE.into() }]);
    }

    #[test]
    fn crlf_tabs_and_a_bom_are_read() {
        let review = parse_findings(
            "\u{feff}FINDING 1:\t[high]\tsrc/lib.rs:42\t—\tunchecked index\r\n\tmore\r\n\r\nFINDING 2: [low] b.rs:1 — two\r\n",
        );
        assert_eq!(
            review.findings[0],
            finding(1, Some(1), Severity::High, Some("src/lib.rs"), Some(42), "unchecked index\nmore")
        );
        assert_eq!(review.findings[1].text, "two");
        assert!(review.unparsed.is_empty());
    }

    #[test]
    fn long_texts_are_cut_on_a_char_boundary() {
        let long = "é".repeat(10_000);
        let f = one(&format!("FINDING 1: [high] a.rs:1 — {long}"));
        assert_eq!(f.text.chars().count(), MAX_TEXT_CHARS);
        assert!(f.text.ends_with("é…"));
        let many_lines = format!("FINDING 1: [high] a.rs:1 — start\n{}", "word\n".repeat(20_000));
        let f = one(&many_lines);
        assert_eq!(f.text.chars().count(), MAX_TEXT_CHARS);
        assert!(f.text.starts_with("start\nword") && f.text.ends_with('…'));
        let review = parse_findings(&"x".repeat(50_000));
        assert_eq!(review.unparsed[0].text.chars().count(), MAX_TEXT_CHARS);
        assert_eq!(cap("short"), "short");
        assert_eq!(cap(&"a".repeat(MAX_TEXT_CHARS)), "a".repeat(MAX_TEXT_CHARS));
    }

    #[test]
    fn at_most_500_findings() {
        let text: String = (1..=502).map(|k| format!("FINDING {k}: [low] a.rs:{k} — n{k}\n")).collect();
        let review = parse_findings(&text);
        assert_eq!(review.findings.len(), MAX_FINDINGS);
        assert_eq!(review.findings[499].number, 500);
        assert_eq!(
            review.unparsed,
            vec![
                Unparsed { text: "FINDING 501: [low] a.rs:501 — n501".into(), why: WHY_TOO_MANY.into() },
                Unparsed { text: "FINDING 502: [low] a.rs:502 — n502".into(), why: WHY_TOO_MANY.into() },
            ]
        );
    }

    #[test]
    fn big_awkward_replies_stay_linear() {
        let colons = format!("FINDING 1: [high] {} — x", "a:".repeat(200_000));
        assert_eq!(parse_findings(&colons).findings.len(), 1);
        let fences: String = (0..20_000).map(|k| format!("{}\n", "`".repeat(3 + (20_000 - k) % 50))).collect();
        let _ = parse_findings(&fences);
        let brackets = format!("FINDING 1: {}", "[(".repeat(200_000));
        assert_eq!(parse_findings(&brackets).unparsed.len(), 1);
    }

    #[test]
    fn a_review_round_trips_through_json() {
        let review = parse_findings("Intro.\n\nFINDING 1: [high] a.rs:1 — one\nNO FINDINGS");
        let json = serde_json::to_string(&review).unwrap();
        assert!(json.contains("\"severity\":\"high\""));
        assert_eq!(serde_json::from_str::<ParsedReview>(&json).unwrap(), review);
    }

    const FRAGMENTS: &[&str] = &[
        "FINDING",
        "finding",
        "1",
        "42",
        "#",
        ":",
        "[high]",
        "(low)",
        "[",
        "]",
        "(",
        ")",
        "**",
        "`",
        "src/lib.rs",
        ":42",
        ":0",
        "#L3-L9",
        "—",
        "–",
        "-",
        "--",
        "```",
        "~~~",
        "NO FINDINGS",
        "> ",
        "### ",
        "1. ",
        "- ",
        "https://x.y/a.rs#L2",
        "../a.rs",
        "./b.py",
        "line",
        "(line 7)",
        ", line",
        ",",
        "é",
        "\t",
        "\u{feff}",
        "text",
        "severity:",
        "P1",
        "HIGH",
        "…",
        "\r",
        "'",
        "\"",
        "](",
        "/",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn any_text_parses_and_numbers_run_from_one(text in "(?s).{0,600}") {
            let review = parse_findings(&text);
            for (i, f) in review.findings.iter().enumerate() {
                prop_assert_eq!(f.number as usize, i + 1);
                prop_assert!(!f.text.is_empty() && f.text.chars().count() <= MAX_TEXT_CHARS);
            }
            for u in &review.unparsed {
                prop_assert!(!u.text.is_empty() && u.text.chars().count() <= MAX_TEXT_CHARS);
            }
        }

        #[test]
        fn finding_like_soup_parses(
            parts in prop::collection::vec(
                (prop::sample::select(FRAGMENTS), prop::sample::select(&["", " ", "\n", "\r\n", "\n\n", " — "][..])),
                0..60,
            ),
        ) {
            let text: String = parts.iter().map(|(a, b)| format!("{a}{b}")).collect();
            let review = parse_findings(&text);
            for (i, f) in review.findings.iter().enumerate() {
                prop_assert_eq!(f.number as usize, i + 1);
                prop_assert!(!f.text.is_empty());
                if let Some(path) = &f.path {
                    prop_assert!(!path.is_empty() && !path.starts_with('/') && !path.starts_with("./"));
                    prop_assert!(!path.split('/').any(|s| s == ".."), "{}", path);
                    prop_assert!(!path.contains("://"));
                }
            }
        }

        #[test]
        fn canonical_lines_round_trip(
            lines in prop::collection::vec(
                (
                    any::<u32>(),
                    prop::sample::select(&Severity::ALL[..]),
                    any::<bool>(),
                    "[a-z][a-z0-9_]{0,7}(/[a-z0-9_][a-z0-9_.-]{0,7}){0,3}\\.[a-z]{1,4}",
                    1u32..1_000_000,
                    "[A-Za-z][A-Za-z0-9 ,;()'.-]{0,80}",
                ),
                1..8,
            ),
        ) {
            let text: String = lines
                .iter()
                .map(|(k, sev, shout, path, line, words)| {
                    let sev = if *shout { sev.as_str().to_uppercase() } else { sev.as_str().to_owned() };
                    format!("FINDING {k}: [{sev}] {path}:{line} — {words}\n")
                })
                .collect();
            let review = parse_findings(&text);
            prop_assert!(review.unparsed.is_empty(), "{:?}", review.unparsed);
            prop_assert_eq!(review.findings.len(), lines.len());
            for (i, (f, (k, sev, _, path, line, words))) in review.findings.iter().zip(&lines).enumerate() {
                let want = finding(i as u32 + 1, Some(*k), *sev, Some(path), Some(*line), words.trim());
                prop_assert_eq!(f, &want);
            }
        }
    }
}
