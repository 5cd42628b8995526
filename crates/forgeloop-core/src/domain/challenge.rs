//! Proving that a conversation's GitHub connector really reads repository R at commit C.
//!
//! A model picker naming the right model, or a connector shown "attached", proves nothing: an
//! old conversation or a public copy of the repository can look the same. So forgeloop asks
//! questions only a reader of that exact commit can answer (a file's git blob id, the exact
//! text of a line) about files it picks at random.
//!
//! The expected answers are never stored: only the questions are. When the reply comes back,
//! the caller re-reads the commit from its git mirror and hands the candidates in again, and
//! [`judge`] decides. Nothing here touches I/O, a clock or a randomness source: [`pick`] is
//! driven by the caller's seed.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

/// A file of the commit a question may be about, as the caller read it from the mirror.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// The file's path in the repository.
    pub path: String,
    /// The file's git blob id: 40 hexadecimal characters, lowercase.
    pub blob: String,
    /// The file's lines without line endings; empty for a binary or non-UTF-8 file.
    pub lines: Vec<String>,
}

/// One question of a challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Question {
    /// The git blob id of a file: only a reader of that commit's tree knows it.
    BlobId {
        /// The file's path.
        path: String,
    },
    /// The exact text of one line of a file.
    Line {
        /// The file's path.
        path: String,
        /// The line's number, 1-based.
        line: u32,
    },
}

impl Question {
    /// The path of the file the question is about.
    pub fn path(&self) -> &str {
        match self {
            Question::BlobId { path } | Question::Line { path, .. } => path,
        }
    }
}

/// How many questions a challenge asks: enough that a lucky guess cannot pass.
pub const QUESTIONS: usize = 3;

/// Shortest trimmed line worth asking: a short line can be guessed from the file's kind.
const MIN_LINE_CHARS: usize = 12;
/// Longest trimmed line worth asking: a model copies a long line inexactly.
const MAX_LINE_CHARS: usize = 200;

/// Characters [`parse_answers`] strips from both ends of a value (markdown emphasis, code
/// spans, quotes); a line starting or ending with one is never asked, so stripping is safe.
const VALUE_WRAPPERS: &[char] = &['*', '_', '`', '"', '\'', '\u{201C}', '\u{201D}', '\u{2018}', '\u{2019}'];

/// Ways a reply says it cannot read the repository (lowercase, `_` and `’` normalised).
const CANNOT_READ_PHRASES: &[&str] = &["cannot read", "can not read", "can't read"];

/// SplitMix64: tiny, self-contained, and the same on every platform, so a seed replays.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0), without modulo bias worth mentioning.
    fn below(&mut self, n: usize) -> usize {
        let wide = (u128::from(self.next()) * n as u128) >> 64;
        usize::try_from(wide).unwrap_or(0)
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 0
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// The files a challenge may ask about, with their distinctive lines worked out on demand
/// (the veto may be costly, so only files actually considered pay for it).
struct Pool<'a> {
    files: Vec<&'a Candidate>,
    lines: Vec<Option<Vec<u32>>>,
    used: Vec<bool>,
    usable: &'a dyn Fn(&str, &str) -> bool,
}

impl Pool<'_> {
    fn distinctive(&mut self, i: usize) -> &[u32] {
        let (Some(file), Some(slot)) = (self.files.get(i), self.lines.get_mut(i)) else { return &[] };
        slot.get_or_insert_with(|| distinctive_lines(file, self.usable))
    }

    fn has_lines(&mut self, i: usize) -> bool {
        !self.distinctive(i).is_empty()
    }

    fn has_blob(&self, i: usize) -> bool {
        self.files.get(i).is_some_and(|c| is_blob_id(&c.blob))
    }

    fn ask_line(&mut self, i: usize, rng: &mut SplitMix64) -> Option<Question> {
        let lines = self.distinctive(i);
        let line = *lines.get(rng.below(lines.len()))?;
        let path = self.files.get(i)?.path.clone();
        Some(Question::Line { path, line })
    }

    fn ask_blob(&self, i: usize) -> Option<Question> {
        let file = self.files.get(i)?;
        is_blob_id(&file.blob).then(|| Question::BlobId { path: file.path.clone() })
    }

    fn take(&mut self, i: usize, question: Option<Question>, questions: &mut Vec<Question>) -> bool {
        let Some(question) = question else { return false };
        if let Some(used) = self.used.get_mut(i) {
            *used = true;
        }
        questions.push(question);
        true
    }
}

/// Picks `count` questions deterministically from `seed`: distinct files; at least one BlobId
/// and at least one Line question when `count >= 2` and a text file exists. Line questions
/// only ask "distinctive" lines (trimmed length >= 12, not only punctuation, its trimmed text
/// once in the file), so a guess from the file's shape fails. `usable(path, line_text)` lets
/// the caller veto lines (those the redactor would change: answers travel through the chat).
/// Returns fewer than `count` only when the candidates cannot supply them.
pub fn pick(candidates: &[Candidate], seed: u64, count: usize, usable: &dyn Fn(&str, &str) -> bool) -> Vec<Question> {
    // Sorted, so the same commit and seed give the same questions whatever order the mirror
    // listed the files in; the first of a duplicated path is the one `judge` will use too.
    let mut files: Vec<&Candidate> = candidates.iter().filter(|c| askable_path(&c.path)).collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    if files.is_empty() || count == 0 {
        return Vec::new();
    }
    let mut rng = SplitMix64(seed);
    rng.shuffle(&mut files);
    let n = files.len();
    let mut pool = Pool { files, lines: vec![None; n], used: vec![false; n], usable };
    let mut questions = Vec::new();

    let want_line = count >= 2 || rng.coin();
    let want_blob = count >= 2 || !want_line;
    if want_line {
        // Prefer a text file that leaves another file for the BlobId question.
        let blob_files = (0..n).filter(|&i| pool.has_blob(i)).count();
        let mut first = None;
        let mut chosen = None;
        for i in 0..n {
            if !pool.has_lines(i) {
                continue;
            }
            first.get_or_insert(i);
            if !want_blob || blob_files > usize::from(pool.has_blob(i)) {
                chosen = Some(i);
                break;
            }
        }
        if let Some(i) = chosen.or(first) {
            let question = pool.ask_line(i, &mut rng);
            pool.take(i, question, &mut questions);
        }
    }
    if want_blob
        && questions.len() < count
        && let Some(i) = (0..n).find(|&i| !pool.used[i] && pool.has_blob(i))
    {
        let question = pool.ask_blob(i);
        pool.take(i, question, &mut questions);
    }
    for i in 0..n {
        if questions.len() >= count {
            break;
        }
        if pool.used[i] {
            continue;
        }
        let question = if rng.coin() {
            pool.ask_line(i, &mut rng).or_else(|| pool.ask_blob(i))
        } else {
            pool.ask_blob(i).or_else(|| pool.ask_line(i, &mut rng))
        };
        pool.take(i, question, &mut questions);
    }
    questions.truncate(count);
    rng.shuffle(&mut questions);
    questions
}

/// A path the chat can carry on one line.
fn askable_path(path: &str) -> bool {
    !path.trim().is_empty() && !path.chars().any(char::is_control)
}

/// The 1-based numbers of the file's lines a Line question may ask.
fn distinctive_lines(file: &Candidate, usable: &dyn Fn(&str, &str) -> bool) -> Vec<u32> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in &file.lines {
        *seen.entry(normalize(line)).or_default() += 1;
    }
    file.lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let number = u32::try_from(i.checked_add(1)?).ok()?;
            let once = seen.get(&normalize(line)) == Some(&1);
            (once && askable_line(line) && usable(&file.path, line)).then_some(number)
        })
        .collect()
}

/// Whether a line could be asked at all: long enough, not just punctuation, and such that
/// its answer survives [`parse_answers`] unchanged and cannot read as `CANNOT READ`.
fn askable_line(line: &str) -> bool {
    let text = line.trim();
    let chars = text.chars().count();
    (MIN_LINE_CHARS..=MAX_LINE_CHARS).contains(&chars)
        && text.chars().any(char::is_alphanumeric)
        && !text.chars().any(|c| c.is_control() && c != '\t')
        && !text.starts_with(VALUE_WRAPPERS)
        && !text.ends_with(VALUE_WRAPPERS)
        && !says_cannot_read(text)
}

fn is_blob_id(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Code span for a path, wide enough that a backtick in the path cannot end it.
fn code(text: &str) -> String {
    if text.contains('`') { format!("`` {text} ``") } else { format!("`{text}`") }
}

/// The message to type into the chat: which repository and commit, read through the GitHub
/// connector (not memory, not another copy), and one `ANSWER n: <value>` line per question,
/// or `CANNOT READ`.
pub fn render(repository: &str, commit: &str, questions: &[Question]) -> String {
    let mut text = format!(
        "forgeloop is checking that your GitHub connector reads the repository {repository} at commit {commit}.\n\n\
         Use your GitHub connector to read the files below from {repository} at exactly commit {commit}. \
         Do not answer from memory, from an earlier conversation, or from any other copy of the repository \
         (a fork, a mirror, another branch or another commit).\n\n"
    );
    for (i, question) in questions.iter().enumerate() {
        let number = i.saturating_add(1);
        match question {
            Question::BlobId { path } => {
                text.push_str(&format!("{number}. What is the git blob id of the file {}?\n", code(path)));
            }
            Question::Line { path, line } => {
                text.push_str(&format!(
                    "{number}. What is the exact text of line {line} of the file {}?\n",
                    code(path)
                ));
            }
        }
    }
    text.push_str(
        "\nAnswer each question on its own line, exactly as `ANSWER n: <value>`, where n is the question's number:\n\
         - for a blob id, the full 40-character blob id (not a shortened one);\n\
         - for a line, the line's exact text, without the line number.\n\
         If you cannot read the repository at that commit, write `CANNOT READ` on a line of its own instead, and do not guess.\n",
    );
    text
}

/// The answers a reply holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answers {
    /// Each answer by question number; the last line for a number wins (a reply may quote
    /// the prompt or correct itself before answering).
    pub by_number: BTreeMap<u32, String>,
    /// Whether the reply says it cannot read the repository: the challenge then fails.
    pub cannot_read: bool,
}

/// Reads the `ANSWER n: value` lines of a reply, tolerating what chat models add: any case,
/// markdown bold, bullets and `>` quotes, backticks or quotes around the value, `#n`, `n.` or
/// `n)`, a code fence, CRLF. Also notes a `CANNOT READ` anywhere.
pub fn parse_answers(reply: &str) -> Answers {
    let mut answers = Answers::default();
    // Fence lines need no care: their backticks are stripped like any other decoration, so the
    // lines inside a fence are read as usual.
    for line in reply.lines() {
        let line = line.trim();
        if says_cannot_read(line) {
            answers.cannot_read = true;
        }
        if let Some((number, value)) = answer_line(line) {
            answers.by_number.insert(number, value);
        }
    }
    answers
}

fn answer_line(line: &str) -> Option<(u32, String)> {
    let rest = strip_decorations(line);
    let rest = strip_prefix_ci(rest, "answer")?;
    if rest.starts_with(char::is_alphabetic) {
        return None;
    }
    let rest = rest.trim_start_matches(['*', '_', ' ', '\t']);
    let rest = rest.strip_prefix('#').unwrap_or(rest).trim_start_matches([' ', '\t']);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number: u32 = rest.get(..digits)?.parse().ok()?;
    let rest = rest.get(digits..)?.trim_start_matches(['*', '_', ' ', '\t']);
    let mut chars = rest.chars();
    let separator = chars.next()?;
    if !matches!(separator, ':' | '.' | ')') {
        return None;
    }
    let mut rest = chars.as_str();
    if separator != ':' {
        rest = rest.strip_prefix(':').unwrap_or(rest);
    }
    let value = clean_value(rest);
    (!value.is_empty()).then(|| (number, value.to_owned()))
}

/// The line without its leading quotes, bullets, headings, emphasis and list number.
fn strip_decorations(line: &str) -> &str {
    let mut rest = line;
    loop {
        let before = rest.len();
        rest = rest.trim_start().trim_start_matches(['>', '-', '+', '\u{2022}', '*', '_', '`', '#']);
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0
            && let Some(after) = rest.get(digits..).and_then(|r| r.strip_prefix(['.', ')']))
            && after.starts_with(char::is_whitespace)
        {
            rest = after;
        }
        if rest.len() == before {
            return rest;
        }
    }
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| text.get(prefix.len()..)).flatten()
}

fn clean_value(value: &str) -> &str {
    value.trim_matches(|c: char| c.is_whitespace() || VALUE_WRAPPERS.contains(&c))
}

/// Whether a line says it cannot read, as a phrase of its own (`cannot ready` is not one).
fn says_cannot_read(line: &str) -> bool {
    let lower: String = line
        .chars()
        .map(|c| match c {
            '_' | '\t' => ' ',
            '\u{2019}' => '\'',
            c => c,
        })
        .collect::<String>()
        .to_lowercase();
    let lower = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    CANNOT_READ_PHRASES.iter().any(|phrase| {
        lower.match_indices(phrase).any(|(at, _)| {
            let before = lower.get(..at).and_then(|s| s.chars().next_back());
            let after = lower.get(at + phrase.len()..).and_then(|s| s.chars().next());
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

/// The judgement of one question; `why` never holds the expected answer, since it is shown
/// in the chat and the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    /// The question's number in the challenge, from 1.
    pub number: u32,
    /// The question.
    pub question: Question,
    /// What the reply answered, if anything.
    pub given: Option<String>,
    /// Whether the answer is right.
    pub correct: bool,
    /// Why, in a few words.
    pub why: String,
}

/// Judges every question against the candidates re-read from the commit. A blob id must be the
/// full 40 characters (any case; a prefix is refused: it could have come from a short log).
/// A line must match after trimming and collapsing runs of spaces and tabs; a `12: ` or
/// `12 | ` line-number prefix the line itself does not have is forgiven once.
pub fn judge(questions: &[Question], candidates: &[Candidate], answers: &Answers) -> Vec<Judged> {
    questions
        .iter()
        .enumerate()
        .map(|(i, question)| {
            let number = u32::try_from(i.saturating_add(1)).unwrap_or(u32::MAX);
            let given = answers.by_number.get(&number).cloned();
            let (correct, why) = verdict(question, candidates, given.as_deref(), answers.cannot_read);
            Judged { number, question: question.clone(), given, correct, why: why.to_owned() }
        })
        .collect()
}

fn verdict(
    question: &Question,
    candidates: &[Candidate],
    given: Option<&str>,
    cannot_read: bool,
) -> (bool, &'static str) {
    let Some(file) = candidates.iter().find(|c| c.path == question.path()) else {
        return (false, "the file is not in the commit");
    };
    let given = given.map(clean_value).filter(|g| !g.is_empty());
    let Some(given) = given else {
        return (false, if cannot_read { "the reply says it cannot read the repository" } else { "no answer" });
    };
    match question {
        Question::BlobId { .. } => judge_blob(&file.blob, given),
        Question::Line { line, .. } => {
            let expected = usize::try_from(*line).ok().and_then(|n| n.checked_sub(1)).and_then(|n| file.lines.get(n));
            match expected {
                Some(expected) => judge_line(expected, given),
                None => (false, "the file has no such line"),
            }
        }
    }
}

fn judge_blob(expected: &str, given: &str) -> (bool, &'static str) {
    if !is_blob_id(expected) {
        return (false, "the commit's blob id for the file is unusable");
    }
    let given = given.to_ascii_lowercase();
    let all_hex = given.bytes().all(|b| b.is_ascii_hexdigit());
    if all_hex && given.len() == 40 {
        if given == expected.to_ascii_lowercase() { (true, "correct") } else { (false, "wrong blob id") }
    } else if all_hex && given.len() < 40 {
        (false, "a blob id must be the full 40 characters")
    } else {
        (false, "not a blob id: a blob id is 40 hexadecimal characters")
    }
}

fn judge_line(expected: &str, given: &str) -> (bool, &'static str) {
    let expected = normalize(expected);
    let given = normalize(given);
    if given == expected {
        return (true, "correct");
    }
    if strip_line_number(&expected).is_none() && strip_line_number(&given) == Some(expected.as_str()) {
        return (true, "correct");
    }
    (false, "wrong line text")
}

/// Trimmed, with runs of spaces and tabs collapsed to one space: chats and copies reflow
/// whitespace, and that proves nothing either way.
fn normalize(text: &str) -> String {
    text.trim().split([' ', '\t']).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The text after a `12: ` or `12 | ` line-number prefix, if it has one (on normalized text).
fn strip_line_number(text: &str) -> Option<&str> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = text.get(digits..)?.trim_start();
    let rest = rest.strip_prefix([':', '|'])?;
    Some(rest.trim_start())
}

/// Whether a challenge passes: at least one question, every one correct, and no `CANNOT READ`.
pub fn passes(judged: &[Judged], answers: &Answers) -> bool {
    !judged.is_empty() && !answers.cannot_read && judged.iter().all(|j| j.correct)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    const REPO: &str = "octo/widgets";
    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    fn blob(n: u32) -> String {
        format!("{:040x}", 0xabc0_0000_u64 + u64::from(n))
    }

    fn cand(path: &str, n: u32, lines: &[&str]) -> Candidate {
        Candidate { path: path.to_owned(), blob: blob(n), lines: lines.iter().map(|l| (*l).to_owned()).collect() }
    }

    fn all_usable(_: &str, _: &str) -> bool {
        true
    }

    /// A text file whose every line is distinctive.
    fn text_file(n: u32) -> Candidate {
        let lines: Vec<String> = (0..8).map(|k| format!("    let value_{n}_{k} = compute_thing({k});")).collect();
        Candidate { path: format!("src/file_{n:02}.rs"), blob: blob(n), lines }
    }

    fn many() -> Vec<Candidate> {
        (0..30).map(text_file).collect()
    }

    fn line_of<'a>(candidates: &'a [Candidate], q: &Question) -> Option<&'a str> {
        let Question::Line { path, line } = q else { return None };
        let file = candidates.iter().find(|c| &c.path == path)?;
        file.lines.get(*line as usize - 1).map(String::as_str)
    }

    #[test]
    fn pick_is_deterministic_per_seed() {
        let c = many();
        for seed in 0..50 {
            assert_eq!(pick(&c, seed, QUESTIONS, &all_usable), pick(&c, seed, QUESTIONS, &all_usable));
        }
        let mut reversed = c.clone();
        reversed.reverse();
        assert_eq!(pick(&c, 9, QUESTIONS, &all_usable), pick(&reversed, 9, QUESTIONS, &all_usable));
    }

    #[test]
    fn pick_differs_across_seeds() {
        let c = many();
        let outcomes: BTreeSet<String> =
            (0..40).map(|seed| format!("{:?}", pick(&c, seed, QUESTIONS, &all_usable))).collect();
        assert!(outcomes.len() > 20, "only {} different challenges", outcomes.len());
    }

    #[test]
    fn pick_asks_distinct_files_and_both_kinds() {
        let c = many();
        for seed in 0..200 {
            let questions = pick(&c, seed, QUESTIONS, &all_usable);
            assert_eq!(questions.len(), QUESTIONS);
            let paths: BTreeSet<&str> = questions.iter().map(Question::path).collect();
            assert_eq!(paths.len(), QUESTIONS, "seed {seed}: {questions:?}");
            assert!(questions.iter().any(|q| matches!(q, Question::BlobId { .. })), "seed {seed}");
            assert!(questions.iter().any(|q| matches!(q, Question::Line { .. })), "seed {seed}");
        }
    }

    #[test]
    fn two_questions_take_the_only_text_file_and_a_binary_one() {
        let mut c: Vec<Candidate> = (0..10).map(|n| cand(&format!("img/{n}.png"), n, &[])).collect();
        c.push(cand("README.md", 99, &["forgeloop tests pull requests safely"]));
        for seed in 0..100 {
            let questions = pick(&c, seed, 2, &all_usable);
            assert_eq!(questions.len(), 2);
            assert!(questions.contains(&Question::Line { path: "README.md".into(), line: 1 }), "seed {seed}");
            assert!(questions.iter().any(|q| matches!(q, Question::BlobId { path } if path != "README.md")));
        }
        // With the text file alone, both kinds cannot be had from distinct files: one question.
        let alone = [cand("README.md", 99, &["forgeloop tests pull requests safely"])];
        assert_eq!(pick(&alone, 3, 2, &all_usable).len(), 1);
    }

    #[test]
    fn a_file_of_braces_and_short_lines_yields_no_line_question() {
        let shape = cand(
            "src/shape.rs",
            1,
            &["}", "    }", "{", "fn a() {", "  ", "", "////////////////////", "}); });  }); });", "let x = 1;"],
        );
        let c = [shape, cand("logo.png", 2, &[]), cand("data.bin", 3, &[])];
        for seed in 0..100 {
            let questions = pick(&c, seed, QUESTIONS, &all_usable);
            assert_eq!(questions.len(), 3);
            assert!(questions.iter().all(|q| matches!(q, Question::BlobId { .. })), "seed {seed}: {questions:?}");
        }
    }

    #[test]
    fn a_duplicated_line_is_never_asked() {
        let file = cand(
            "src/dup.rs",
            1,
            &[
                "let value = compute_something();",
                "fn unique_function_name() -> u32 {",
                "    let value  =  compute_something();",
                "let other_value = compute_else();",
                "let other_value = compute_else();",
            ],
        );
        let c = [file, cand("a.png", 2, &[]), cand("b.png", 3, &[])];
        let mut asked = BTreeSet::new();
        for seed in 0..200 {
            for q in pick(&c, seed, QUESTIONS, &all_usable) {
                if let Question::Line { line, .. } = q {
                    asked.insert(line);
                }
            }
        }
        assert_eq!(asked, BTreeSet::from([2]));
    }

    #[test]
    fn every_asked_line_follows_the_rule() {
        let c = many();
        for seed in 0..100 {
            for q in pick(&c, seed, QUESTIONS, &all_usable) {
                if let Some(text) = line_of(&c, &q) {
                    assert!(text.trim().chars().count() >= MIN_LINE_CHARS);
                    let file = c.iter().find(|f| f.path == q.path()).map(|f| &f.lines);
                    let same = file.map_or(0, |lines| lines.iter().filter(|l| l.trim() == text.trim()).count());
                    assert_eq!(same, 1);
                }
            }
        }
    }

    #[test]
    fn the_veto_is_honoured() {
        let file = cand("config.py", 1, &["api_key = secret_value_here_123", "harmless_setting = enabled_value"]);
        let c = [file, cand("a.png", 2, &[]), cand("b.png", 3, &[])];
        let veto = |path: &str, line: &str| path == "config.py" && !line.contains("secret");
        for seed in 0..100 {
            let questions = pick(&c, seed, QUESTIONS, &veto);
            assert!(questions.contains(&Question::Line { path: "config.py".into(), line: 2 }), "seed {seed}");
        }
        let none = |_: &str, _: &str| false;
        for seed in 0..50 {
            assert!(pick(&c, seed, QUESTIONS, &none).iter().all(|q| matches!(q, Question::BlobId { .. })));
        }
    }

    #[test]
    fn pick_returns_fewer_only_when_it_must() {
        assert!(pick(&[], 1, QUESTIONS, &all_usable).is_empty());
        assert!(pick(&many(), 1, 0, &all_usable).is_empty());
        let two = [text_file(1), text_file(2)];
        assert_eq!(pick(&two, 5, QUESTIONS, &all_usable).len(), 2);
        let same_path = [text_file(1), text_file(1), text_file(1)];
        assert_eq!(pick(&same_path, 5, QUESTIONS, &all_usable).len(), 1);
        let bad_blob = [Candidate { path: "a.png".into(), blob: "nope".into(), lines: vec![] }];
        assert!(pick(&bad_blob, 5, QUESTIONS, &all_usable).is_empty());
        for seed in 0..20 {
            assert_eq!(pick(&many(), seed, 1, &all_usable).len(), 1);
        }
    }

    #[test]
    fn lines_the_parser_would_alter_are_never_asked() {
        let file = cand(
            "src/x.rs",
            1,
            &[
                "\"quoted string literal\"",
                "`code span around it`",
                "**bold text in markdown**",
                "I cannot read this file now",
            ],
        );
        let c = [file, cand("a.png", 2, &[])];
        for seed in 0..50 {
            assert!(pick(&c, seed, QUESTIONS, &all_usable).iter().all(|q| matches!(q, Question::BlobId { .. })));
        }
    }

    #[test]
    fn render_names_repository_commit_and_paths() {
        let questions = vec![
            Question::BlobId { path: "src/main.rs".into() },
            Question::Line { path: "docs/a b.md".into(), line: 12 },
        ];
        let text = render(REPO, COMMIT, &questions);
        assert!(text.contains(REPO));
        assert!(text.contains(COMMIT));
        assert!(text.contains("`src/main.rs`"));
        assert!(text.contains("`docs/a b.md`"));
        assert!(text.contains("1. What is the git blob id"));
        assert!(text.contains("2. What is the exact text of line 12"));
        assert!(text.contains("ANSWER n: <value>"));
        assert!(text.contains("CANNOT READ"));
        assert!(text.contains("GitHub connector"));
        assert!(text.contains("40-character"));
        // Echoing the prompt must not count as answers.
        assert!(parse_answers(&text).by_number.is_empty());
    }

    #[test]
    fn parse_tolerates_what_chats_add() {
        let reply = "Here you go:\r\n\
            **ANSWER 1:** `0123456789abcdef0123456789abcdef01234567`\r\n\
            - answer #2: \"let x = compute_thing(3);\"\r\n\
            > Answer 3) fn main() {\r\n\
            ANSWER 4. plain value\r\n\
            ```text\r\n\
            ANSWER 5: fenced value\r\n\
            ```\r\n\
            **ANSWER 6: bold all over**\r\n\
            * ANSWER 7 : 'single quoted'\r\n\
            1. Answer 8: listed\r\n\
            ANSWER 9: .map(|x| x + 1)\r\n\
            ANSWER 10: ::std::io::Result\r\n\
            ANSWERS 11: not an answer\r\n\
            ANSWER: 12\r\n";
        let a = parse_answers(reply);
        assert_eq!(a.by_number.get(&1).map(String::as_str), Some("0123456789abcdef0123456789abcdef01234567"));
        assert_eq!(a.by_number.get(&2).map(String::as_str), Some("let x = compute_thing(3);"));
        assert_eq!(a.by_number.get(&3).map(String::as_str), Some("fn main() {"));
        assert_eq!(a.by_number.get(&4).map(String::as_str), Some("plain value"));
        assert_eq!(a.by_number.get(&5).map(String::as_str), Some("fenced value"));
        assert_eq!(a.by_number.get(&6).map(String::as_str), Some("bold all over"));
        assert_eq!(a.by_number.get(&7).map(String::as_str), Some("single quoted"));
        assert_eq!(a.by_number.get(&8).map(String::as_str), Some("listed"));
        assert_eq!(a.by_number.get(&9).map(String::as_str), Some(".map(|x| x + 1)"));
        assert_eq!(a.by_number.get(&10).map(String::as_str), Some("::std::io::Result"));
        assert_eq!(a.by_number.len(), 10, "{:?}", a.by_number);
        assert!(!a.cannot_read);
    }

    #[test]
    fn the_last_answer_for_a_number_wins() {
        let a = parse_answers("ANSWER 1: first\nANSWER 1: second\nANSWER 2:\n");
        assert_eq!(a.by_number, BTreeMap::from([(1, "second".to_owned())]));
    }

    #[test]
    fn parse_sees_cannot_read() {
        assert!(parse_answers("CANNOT READ").cannot_read);
        assert!(parse_answers("Sorry.\r\n**cannot read**\r\n").cannot_read);
        assert!(parse_answers("I cannot read the repository at that commit.").cannot_read);
        assert!(parse_answers("I can\u{2019}t read it").cannot_read);
        assert!(parse_answers("```\nCANNOT_READ\n```").cannot_read);
        assert!(!parse_answers("ANSWER 1: abc\nI can read it fine.").cannot_read);
        assert!(!parse_answers("it cannot ready itself").cannot_read);
    }

    fn fixture() -> (Vec<Candidate>, Vec<Question>) {
        let c = vec![
            cand("src/lib.rs", 1, &["//! The library.", "pub fn answer_to_everything() -> u32 {", "    42", "}"]),
            cand("logo.png", 2, &[]),
            cand("docs/guide.md", 3, &["# Guide", "12: starts with a number, really"]),
        ];
        let q = vec![
            Question::BlobId { path: "logo.png".into() },
            Question::Line { path: "src/lib.rs".into(), line: 2 },
            Question::Line { path: "docs/guide.md".into(), line: 2 },
        ];
        (c, q)
    }

    fn reply(answers: &[&str]) -> Answers {
        let text: Vec<String> = answers.iter().enumerate().map(|(i, a)| format!("ANSWER {}: {a}", i + 1)).collect();
        parse_answers(&text.join("\n"))
    }

    fn assert_why_hides_answers(judged: &[Judged], c: &[Candidate]) {
        for j in judged {
            for file in c {
                assert!(!j.why.contains(&file.blob), "{}", j.why);
                assert!(!j.why.contains(&file.blob[..12]), "{}", j.why);
                for line in file.lines.iter().filter(|l| l.trim().len() >= 4) {
                    assert!(!j.why.contains(line.trim()), "{}", j.why);
                }
            }
        }
    }

    #[test]
    fn correct_answers_pass() {
        let (c, q) = fixture();
        let a = reply(&[&blob(2), "pub fn answer_to_everything() -> u32 {", "12: starts with a number, really"]);
        let judged = judge(&q, &c, &a);
        assert!(judged.iter().all(|j| j.correct && j.why == "correct"), "{judged:?}");
        assert!(passes(&judged, &a));
        assert_eq!(judged.iter().map(|j| j.number).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn tolerated_forms_pass() {
        let (c, q) = fixture();
        let upper = blob(2).to_uppercase();
        let a =
            reply(&[&upper, "2 |   pub fn  answer_to_everything()\t-> u32 {  ", "12: starts with a number, really"]);
        let judged = judge(&q, &c, &a);
        assert!(passes(&judged, &a), "{judged:?}");
    }

    #[test]
    fn a_line_number_prefix_is_kept_when_the_line_has_one() {
        let (c, q) = fixture();
        let a = reply(&[&blob(2), "pub fn answer_to_everything() -> u32 {", "starts with a number, really"]);
        let judged = judge(&q, &c, &a);
        assert!(!judged[2].correct);
        assert_eq!(judged[2].why, "wrong line text");
        assert!(!passes(&judged, &a));
    }

    #[test]
    fn wrong_answers_fail_without_revealing_the_expected_ones() {
        let (c, q) = fixture();
        let right_line = "pub fn answer_to_everything() -> u32 {";
        let right_guide = "12: starts with a number, really";
        let cases: Vec<(Answers, usize, &str)> = vec![
            (reply(&[&blob(7), right_line, right_guide]), 0, "wrong blob id"),
            (reply(&[&blob(2)[..12], right_line, right_guide]), 0, "a blob id must be the full 40 characters"),
            (reply(&["main", right_line, right_guide]), 0, "not a blob id: a blob id is 40 hexadecimal characters"),
            (reply(&[&blob(2), "pub fn answer_to_everything() -> u64 {", right_guide]), 1, "wrong line text"),
            (parse_answers(&format!("ANSWER 1: {}\nANSWER 3: {right_guide}", blob(2))), 1, "no answer"),
        ];
        for (answers, wrong, why) in cases {
            let judged = judge(&q, &c, &answers);
            assert!(!passes(&judged, &answers));
            assert!(!judged[wrong].correct);
            assert_eq!(judged[wrong].why, why);
            assert_why_hides_answers(&judged, &c);
        }
    }

    #[test]
    fn a_file_missing_from_the_commit_fails() {
        let (c, q) = fixture();
        let a = reply(&[&blob(2), "pub fn answer_to_everything() -> u32 {", "12: starts with a number, really"]);
        let without: Vec<Candidate> = c.iter().filter(|f| f.path != "src/lib.rs").cloned().collect();
        let judged = judge(&q, &without, &a);
        assert!(!judged[1].correct);
        assert_eq!(judged[1].why, "the file is not in the commit");
        assert!(!passes(&judged, &a));
        let beyond = [
            Question::Line { path: "src/lib.rs".into(), line: 99 },
            Question::Line { path: "src/lib.rs".into(), line: 0 },
        ];
        let judged = judge(&beyond, &c, &reply(&["x", "y"]));
        assert!(judged.iter().all(|j| !j.correct && j.why == "the file has no such line"));
    }

    #[test]
    fn cannot_read_fails_even_with_right_answers() {
        let (c, q) = fixture();
        let mut text = format!("ANSWER 1: {}\nANSWER 2: pub fn answer_to_everything() -> u32 {{\n", blob(2));
        text.push_str("ANSWER 3: 12: starts with a number, really\nCANNOT READ\n");
        let a = parse_answers(&text);
        assert!(a.cannot_read);
        let judged = judge(&q, &c, &a);
        assert!(!passes(&judged, &a));
        let only = parse_answers("CANNOT READ");
        let judged = judge(&q, &c, &only);
        assert!(judged.iter().all(|j| !j.correct && j.why == "the reply says it cannot read the repository"));
        assert_why_hides_answers(&judged, &c);
        assert!(!passes(&judged, &only));
    }

    #[test]
    fn no_questions_never_pass() {
        assert!(!passes(&[], &Answers::default()));
    }

    #[test]
    fn questions_serialize_with_a_kind_tag() {
        let q = Question::Line { path: "a.rs".into(), line: 3 };
        let json = serde_json::to_string(&q).unwrap();
        assert_eq!(json, r#"{"kind":"line","path":"a.rs","line":3}"#);
        let b: Question = serde_json::from_str(r#"{"kind":"blob_id","path":"b"}"#).unwrap();
        assert_eq!(b, Question::BlobId { path: "b".into() });
        assert_eq!(b.path(), "b");
    }

    fn any_candidate() -> impl Strategy<Value = Candidate> {
        ("[ab]\\.rs|c|", "[0-9a-fA-F]{38,41}|.{0,5}", proptest::collection::vec(".{0,30}", 0..6))
            .prop_map(|(path, blob, lines)| Candidate { path, blob, lines })
    }

    fn any_question() -> impl Strategy<Value = Question> {
        prop_oneof![
            "[ab]\\.rs|c|".prop_map(|path| Question::BlobId { path }),
            ("[ab]\\.rs|c|", any::<u32>()).prop_map(|(path, line)| Question::Line { path, line }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn parse_judge_and_pick_never_panic(
            reply in "(ANSWER|answer|\\*\\*|`|#|>|- |[0-9]{1,12}|[:.)| ]|\r\n|\n|cannot read|\u{2019}|.){0,40}",
            candidates in proptest::collection::vec(any_candidate(), 0..5),
            questions in proptest::collection::vec(any_question(), 0..5),
            extra in proptest::collection::btree_map(any::<u32>(), ".{0,20}", 0..4),
            seed in any::<u64>(),
            count in 0usize..6,
        ) {
            let mut answers = parse_answers(&reply);
            let judged = judge(&questions, &candidates, &answers);
            prop_assert_eq!(judged.len(), questions.len());
            answers.by_number.extend(extra);
            let judged = judge(&questions, &candidates, &answers);
            let _ = passes(&judged, &answers);
            let picked = pick(&candidates, seed, count, &|_, _| true);
            prop_assert!(picked.len() <= count);
        }
    }
}
