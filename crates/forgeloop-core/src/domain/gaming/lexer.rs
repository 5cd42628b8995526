//! A small lexer per language, so that strings and comments never trigger a code pattern (a
//! docstring that mentions `os._exit(` is not a hit) and so that the literals of a line (the
//! numbers and strings special-cased test input is made of) are known with their values.
//! It works a line at a time and carries its state (a block comment, a triple-quoted string)
//! from one line to the next; it never fails: text it does not understand is code.

/// The languages the scan reads, by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// `.py`, `.pyi`.
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.ts`, `.tsx`, `.jsx`, `.mts`, `.cts`.
    JavaScript,
    /// `.rs`.
    Rust,
    /// `Cargo.toml`.
    Toml,
    /// `.c`, `.h`, `.cc`, `.cpp`, `.cxx`, `.hpp` (constructors only).
    C,
    /// `.sh`, `.bash` (exit traps only).
    Shell,
}

impl Lang {
    /// The language of a path, if the scan reads it.
    pub(crate) fn of(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if name == "Cargo.toml" {
            return Some(Lang::Toml);
        }
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "py" | "pyi" => Lang::Python,
            "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" | "mts" | "cts" => Lang::JavaScript,
            "rs" => Lang::Rust,
            "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" => Lang::C,
            "sh" | "bash" => Lang::Shell,
            _ => return None,
        })
    }
}

/// A literal's value, normalised so that `1_000`, `1000`, `0x3e8` and `1000.0` are equal, and
/// `'a'` and `"a"` too.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Value {
    /// A number: an integer in decimal, else the float's shortest form, else the text.
    Num(String),
    /// A string's content, escapes decoded (raw strings as written).
    Str(String),
}

impl Value {
    /// A literal that never makes a pair on its own: 0, 1, -1, 2, an empty or one-character
    /// string (booleans, `None` and `null` are not literals here at all).
    pub(crate) fn trivial(&self) -> bool {
        match self {
            Value::Num(n) => matches!(n.as_str(), "0" | "1" | "-1" | "2" | "-0"),
            Value::Str(s) => s.trim().chars().count() <= 1,
        }
    }

    /// A small integer (|n| < 10): common enough that two of them together mean nothing.
    pub(crate) fn weak(&self) -> bool {
        match self {
            Value::Num(n) => n.parse::<i64>().is_ok_and(|v| v.abs() < 10),
            Value::Str(_) => false,
        }
    }
}

/// One literal of a line: its value and where its text is (byte offsets in the line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Literal {
    pub(crate) value: Value,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A line taken apart: `text` is the line with its comments blanked (strings kept), `code`
/// the same with the contents of strings blanked too (their quotes kept); both have the
/// line's length, so an offset means the same in either.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Lexed {
    pub(crate) text: String,
    pub(crate) code: String,
    pub(crate) literals: Vec<Literal>,
    /// The line started inside a string or a block comment.
    pub(crate) starts_inside: bool,
}

impl Lexed {
    /// Whether byte `at` is code (not inside a string's content or a comment).
    pub(crate) fn is_code(&self, at: usize) -> bool {
        match (self.code.as_bytes().get(at), self.text.as_bytes().get(at)) {
            (Some(c), Some(t)) => c == t && *c != b' ',
            _ => false,
        }
    }

    /// The offsets where `needle` starts in code (its first byte is code) with no identifier
    /// character right before it (nor a `.`, unless `dot`: a method call) and, when it ends
    /// with one, none right after. Matched against `text`, so a needle may run on into a string
    /// (`process.on('exit'`).
    pub(crate) fn find(&self, needle: &str, dot: bool) -> Vec<usize> {
        let bytes = self.text.as_bytes();
        let ends_ident = needle.bytes().last().is_some_and(ident_byte);
        let starts_ident = needle.bytes().next().is_some_and(ident_byte);
        self.text
            .match_indices(needle)
            .map(|(i, _)| i)
            .filter(|&i| self.is_code(i))
            .filter(|&i| {
                let before = i.checked_sub(1).and_then(|b| bytes.get(b)).copied();
                !(starts_ident && before.is_some_and(ident_byte)) && (dot || before != Some(b'.'))
            })
            .filter(|&i| !ends_ident || !bytes.get(i + needle.len()).copied().is_some_and(ident_byte))
            .collect()
    }

    /// Whether `needle` occurs in code (see [`Lexed::find`]).
    pub(crate) fn has(&self, needle: &str, dot: bool) -> bool {
        !self.find(needle, dot).is_empty()
    }

    /// The code, trimmed.
    pub(crate) fn trimmed(&self) -> &str {
        self.code.trim()
    }
}

/// Whether a byte can be part of an identifier.
pub(crate) fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Whether `word` occurs in `text` as a whole identifier.
/// The inside of the braces opening at `open` in `code` (`None` when no `{` opens there or it
/// never closes). Callers give it code with strings and comments already blanked.
pub(crate) fn braces(code: &str, open: usize) -> Option<&str> {
    let bytes = code.as_bytes();
    if bytes.get(open) != Some(&b'{') {
        return None;
    }
    let mut depth = 0i32;
    for (k, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return code.get(open + 1..k);
                }
            }
            _ => {}
        }
    }
    None
}

pub(crate) fn has_word(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(i, _)| {
        let before = i.checked_sub(1).and_then(|b| bytes.get(b)).copied();
        let after = bytes.get(i + word.len()).copied();
        !before.is_some_and(ident_byte) && !after.is_some_and(ident_byte)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    /// Inside a block comment (Rust's nest: the depth).
    Block(u32),
    /// Inside a string.
    Str(Quote),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Quote {
    /// The closing quote byte.
    quote: u8,
    /// `"""`/`'''`.
    triple: bool,
    /// Backslashes escape nothing (Python `r""`, TOML `'…'`, shell `'…'`).
    raw: bool,
    /// Rust raw string: the number of `#`s after the closing quote (`r#"…"#`).
    hashes: Option<usize>,
    /// May run on to the next line.
    multiline: bool,
}

/// Lexes a file's lines in order, carrying state from one to the next.
#[derive(Debug, Clone)]
pub(crate) struct Lexer {
    lang: Lang,
    state: State,
}

impl Lexer {
    /// A lexer at the start of a file.
    pub(crate) fn new(lang: Lang) -> Lexer {
        Lexer { lang, state: State::Code }
    }

    /// Back to the start-of-file state: after a gap in the text, what came before is unknown.
    pub(crate) fn reset(&mut self) {
        self.state = State::Code;
    }

    /// The next line.
    pub(crate) fn line(&mut self, line: &str) -> Lexed {
        let starts_inside = self.state != State::Code;
        let bytes = line.as_bytes();
        let mut text = bytes.to_vec();
        let mut code = bytes.to_vec();
        let mut literals = Vec::new();
        let mut i = 0;
        // Where the current string opened and where its content starts, when it opened on
        // this line (a string carried over from an earlier line is not a literal).
        let mut str_start: Option<(usize, usize)> = None;
        while i < bytes.len() {
            match self.state {
                State::Block(depth) => {
                    if bytes[i..].starts_with(b"*/") {
                        blank(&mut text, &mut code, i, i + 2);
                        i += 2;
                        self.state = if depth > 1 { State::Block(depth - 1) } else { State::Code };
                    } else if self.lang == Lang::Rust && bytes[i..].starts_with(b"/*") {
                        blank(&mut text, &mut code, i, i + 2);
                        i += 2;
                        self.state = State::Block(depth + 1);
                    } else {
                        blank(&mut text, &mut code, i, i + 1);
                        i += 1;
                    }
                }
                State::Str(q) => {
                    let b = bytes[i];
                    if b == b'\\' && !q.raw {
                        let end = (i + 2).min(bytes.len());
                        blank_code(&mut code, i, end);
                        i = end;
                        if end == bytes.len() && !q.multiline {
                            // A backslash at the end of the line continues the string.
                            return self.finish(text, code, literals, starts_inside);
                        }
                        continue;
                    }
                    if let Some(close) = closes(bytes, i, q) {
                        if let Some((open, start)) = str_start.take() {
                            let raw = &line[start..i];
                            literals.push(Literal {
                                value: Value::Str(if q.raw || q.hashes.is_some() {
                                    raw.to_owned()
                                } else {
                                    unescape(raw)
                                }),
                                start: open,
                                end: close,
                            });
                        }
                        i = close;
                        self.state = State::Code;
                        continue;
                    }
                    blank_code(&mut code, i, i + 1);
                    i += 1;
                }
                State::Code => {
                    let rest = &bytes[i..];
                    let b = bytes[i];
                    // Comments.
                    if self.line_comment_at(bytes, i) {
                        blank(&mut text, &mut code, i, bytes.len());
                        break;
                    }
                    if matches!(self.lang, Lang::JavaScript | Lang::Rust | Lang::C) && rest.starts_with(b"/*") {
                        blank(&mut text, &mut code, i, i + 2);
                        i += 2;
                        self.state = State::Block(1);
                        continue;
                    }
                    // Strings.
                    if let Some((q, open_len)) = self.string_at(bytes, i) {
                        str_start = Some((i, i + open_len));
                        i += open_len;
                        self.state = State::Str(q);
                        continue;
                    }
                    if self.lang == Lang::JavaScript
                        && b == b'/'
                        && let Some(end) = regex_literal(bytes, i)
                    {
                        blank_code(&mut code, i + 1, end - 1);
                        i = end;
                        continue;
                    }
                    // Numbers.
                    if b.is_ascii_digit() && !i.checked_sub(1).is_some_and(|p| ident_byte(bytes[p]) || bytes[p] == b'.')
                    {
                        let end = number_end(bytes, i);
                        let negative = negative_before(&code[..i]);
                        let value = number_value(&line[i..end], negative.is_some());
                        literals.push(Literal { value, start: negative.unwrap_or(i), end });
                        i = end;
                        continue;
                    }
                    // An identifier: skipped whole, so `r`, `b` or a digit inside it start nothing.
                    if ident_byte(b) {
                        while i < bytes.len() && ident_byte(bytes[i]) && !self.string_prefix_ends_at(bytes, i) {
                            i += 1;
                        }
                        continue;
                    }
                    i += 1;
                }
            }
        }
        // End of line inside a one-line string: the string ends (unterminated).
        if let State::Str(q) = self.state
            && !q.multiline
        {
            self.state = State::Code;
        }
        self.finish(text, code, literals, starts_inside)
    }

    fn finish(&self, text: Vec<u8>, code: Vec<u8>, literals: Vec<Literal>, starts_inside: bool) -> Lexed {
        let text = String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let code = String::from_utf8(code).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Lexed { text, code, literals, starts_inside }
    }

    fn line_comment_at(&self, bytes: &[u8], i: usize) -> bool {
        match self.lang {
            Lang::Python | Lang::Toml => bytes[i] == b'#',
            Lang::Shell => {
                bytes[i] == b'#' && i.checked_sub(1).is_none_or(|p| bytes[p].is_ascii_whitespace() || bytes[p] == b';')
            }
            Lang::JavaScript | Lang::Rust | Lang::C => bytes[i..].starts_with(b"//"),
        }
    }

    /// Whether an identifier being skipped ends at `i` because a string starts there (`r"`,
    /// `b'`, `f"`: the prefix letters are the identifier).
    fn string_prefix_ends_at(&self, bytes: &[u8], i: usize) -> bool {
        self.string_at(bytes, i).is_some()
    }

    /// A string opening at `i`: its quote and the length of the opening (prefix included).
    fn string_at(&self, bytes: &[u8], i: usize) -> Option<(Quote, usize)> {
        let b = bytes[i];
        let one = |quote: u8, raw: bool, multiline: bool| Quote { quote, triple: false, raw, hashes: None, multiline };
        let triple_at = |j: usize, quote: u8| bytes.get(j..j + 3).is_some_and(|s| s.iter().all(|&c| c == quote));
        match self.lang {
            Lang::Python => {
                // Prefixes: r, b, u, f and pairs of them (rb, br, fr, rf), any case.
                let mut j = i;
                while j < bytes.len() && j - i < 2 && matches!(bytes[j].to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f')
                {
                    j += 1;
                }
                if j > i && i.checked_sub(1).is_some_and(|p| ident_byte(bytes[p])) {
                    return None;
                }
                let quote = *bytes.get(j)?;
                if quote != b'"' && quote != b'\'' {
                    return None;
                }
                let raw = bytes[i..j].iter().any(|c| c.eq_ignore_ascii_case(&b'r'));
                if triple_at(j, quote) {
                    Some((Quote { quote, triple: true, raw, hashes: None, multiline: true }, j - i + 3))
                } else {
                    Some((one(quote, raw, false), j - i + 1))
                }
            }
            Lang::JavaScript => match b {
                b'"' | b'\'' => Some((one(b, false, false), 1)),
                b'`' => Some((one(b, false, true), 1)),
                _ => None,
            },
            Lang::Rust => {
                if i.checked_sub(1).is_some_and(|p| ident_byte(bytes[p])) && matches!(b, b'r' | b'b') {
                    return None;
                }
                let mut j = i;
                if bytes.get(j) == Some(&b'b') {
                    j += 1;
                }
                if bytes.get(j) == Some(&b'r') {
                    let mut k = j + 1;
                    while bytes.get(k) == Some(&b'#') {
                        k += 1;
                    }
                    if bytes.get(k) == Some(&b'"') {
                        let hashes = k - j - 1;
                        let q = Quote { quote: b'"', triple: false, raw: true, hashes: Some(hashes), multiline: true };
                        return Some((q, k - i + 1));
                    }
                    return None;
                }
                match bytes.get(j) {
                    Some(b'"') => Some((one(b'"', false, true), j - i + 1)),
                    Some(b'\'') => {
                        // A char literal, not a lifetime: 'x', '\n', '\u{1F600}'.
                        char_literal_end(bytes, j)?;
                        Some((one(b'\'', false, false), j - i + 1))
                    }
                    _ => None,
                }
            }
            Lang::C => match b {
                b'"' | b'\'' => Some((one(b, false, false), 1)),
                _ => None,
            },
            Lang::Toml => {
                if b != b'"' && b != b'\'' {
                    return None;
                }
                let raw = b == b'\'';
                if triple_at(i, b) {
                    Some((Quote { quote: b, triple: true, raw, hashes: None, multiline: true }, 3))
                } else {
                    Some((one(b, raw, false), 1))
                }
            }
            Lang::Shell => match b {
                b'\'' => Some((one(b, true, true), 1)),
                b'"' => Some((one(b, false, true), 1)),
                _ => None,
            },
        }
    }
}

/// Where a string closing at `i` ends (just past its closing quote), if it closes there.
fn closes(bytes: &[u8], i: usize, q: Quote) -> Option<usize> {
    if bytes[i] != q.quote {
        return None;
    }
    if q.triple {
        return bytes.get(i..i + 3).filter(|s| s.iter().all(|&c| c == q.quote)).map(|_| i + 3);
    }
    if let Some(n) = q.hashes {
        let end = i + 1 + n;
        return bytes.get(i + 1..end).filter(|s| s.iter().all(|&c| c == b'#')).map(|_| end);
    }
    Some(i + 1)
}

/// The end (past the closing quote) of a Rust char literal opening at `j`, or `None` for a
/// lifetime or label (`'a`, `'static`).
fn char_literal_end(bytes: &[u8], j: usize) -> Option<usize> {
    let next = *bytes.get(j + 1)?;
    if next == b'\\' {
        let limit = (j + 14).min(bytes.len());
        return (j + 2..limit).find(|&k| bytes[k] == b'\'').map(|k| k + 1);
    }
    let width = match next {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (bytes.get(j + 1 + width) == Some(&b'\'')).then_some(j + 2 + width)
}

/// A JavaScript regular-expression literal starting at `i` (a `/` where an operand is
/// expected): its end, past the closing `/` and flags. `None`: a division.
fn regex_literal(bytes: &[u8], i: usize) -> Option<usize> {
    if matches!(bytes.get(i + 1), Some(b'/' | b'*') | None) {
        return None;
    }
    let before = bytes[..i].iter().rposition(|b| !b.is_ascii_whitespace());
    let operand_expected = match before {
        None => true,
        Some(p) => {
            let c = bytes[p];
            if b"(,=:[!&|?{};+-*%<>~^".contains(&c) {
                true
            } else if ident_byte(c) {
                let start = bytes[..=p].iter().rposition(|b| !ident_byte(*b)).map_or(0, |s| s + 1);
                matches!(&bytes[start..=p], b"return" | b"typeof" | b"case" | b"in" | b"of" | b"yield" | b"await")
            } else {
                false
            }
        }
    };
    if !operand_expected {
        return None;
    }
    let mut k = i + 1;
    let mut class = false;
    while k < bytes.len() {
        match bytes[k] {
            b'\\' => k += 1,
            b'[' => class = true,
            b']' => class = false,
            b'/' if !class => {
                let mut end = k + 1;
                while end < bytes.len() && bytes[end].is_ascii_alphabetic() {
                    end += 1;
                }
                return Some(end);
            }
            _ => {}
        }
        k += 1;
    }
    None
}

fn number_end(bytes: &[u8], i: usize) -> usize {
    let mut k = i;
    let hex = bytes.get(i) == Some(&b'0') && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
    while k < bytes.len() {
        let c = bytes[k];
        let exponent_sign = matches!(c, b'+' | b'-')
            && !hex
            && k > i
            && matches!(bytes[k - 1], b'e' | b'E')
            && bytes.get(k + 1).is_some_and(u8::is_ascii_digit);
        let fraction = c == b'.' && bytes.get(k + 1).is_some_and(u8::is_ascii_digit) && !bytes[i..k].contains(&b'.');
        if c.is_ascii_alphanumeric() || c == b'_' || exponent_sign || fraction {
            k += 1;
        } else {
            break;
        }
    }
    k
}

/// A unary minus right before a number (`f(-5)`, `== -1`): where it is.
fn negative_before(code: &[u8]) -> Option<usize> {
    let p = code.iter().rposition(|b| !b.is_ascii_whitespace())?;
    if code[p] != b'-' {
        return None;
    }
    match code[..p].iter().rposition(|b| !b.is_ascii_whitespace()) {
        None => Some(p),
        Some(q) if ident_byte(code[q]) || matches!(code[q], b')' | b']' | b'"' | b'\'' | b'-') => None,
        Some(_) => Some(p),
    }
}

/// A number's value: `1_000`, `0x3e8`, `1000u32`, `1000n` and `1000.0` are all `1000`.
fn number_value(text: &str, negative: bool) -> Value {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let sign = if negative { -1 } else { 1 };
    let radix = |prefix: &str, radix: u32| {
        let digits = lower.strip_prefix(prefix)?;
        let digits: String = digits.chars().take_while(|c| c.is_digit(radix)).collect();
        i128::from_str_radix(&digits, radix).ok()
    };
    let int = radix("0x", 16).or_else(|| radix("0o", 8)).or_else(|| radix("0b", 2)).or_else(|| {
        // Decimal, with a type suffix (`u32`, `i64`, `usize`, `n`, `l`) allowed.
        let digits: String = lower.chars().take_while(char::is_ascii_digit).collect();
        let rest = &lower[digits.len()..];
        let suffix_ok = rest.is_empty()
            || matches!(rest, "n" | "l" | "u" | "ul" | "ull" | "ll")
            || (rest.len() <= 5
                && matches!(rest.as_bytes().first(), Some(b'u' | b'i'))
                && rest[1..].chars().all(|c| c.is_ascii_alphanumeric()));
        if suffix_ok && !digits.is_empty() { digits.parse::<i128>().ok() } else { None }
    });
    if let Some(n) = int {
        return Value::Num((sign * n).to_string());
    }
    let float_text = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic() && c != 'e');
    let float_text = float_text.strip_suffix("f32").or_else(|| float_text.strip_suffix("f64")).unwrap_or(float_text);
    match float_text.parse::<f64>() {
        Ok(f) if f.is_finite() => {
            let f = if negative { -f } else { f };
            if f.fract() == 0.0 && f.abs() < 1e15 {
                Value::Num(format!("{}", f as i64))
            } else {
                Value::Num(format!("{f}"))
            }
        }
        _ => Value::Num(if negative { format!("-{lower}") } else { lower }),
    }
}

/// The common escapes of Python, JavaScript, Rust, C and TOML strings decoded; anything else
/// kept as written.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| {
            let mut digits = String::new();
            while digits.len() < n && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                digits.extend(chars.next());
            }
            u32::from_str_radix(&digits, 16).ok().and_then(char::from_u32)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            '\\' | '\'' | '"' | '`' => out.push(e),
            'x' => match hex(&mut chars, 2) {
                Some(c) => out.push(c),
                None => out.push_str("\\x"),
            },
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let decoded = hex(&mut chars, 6);
                if chars.peek() == Some(&'}') {
                    chars.next();
                }
                match decoded {
                    Some(c) => out.push(c),
                    None => out.push_str("\\u"),
                }
            }
            'u' => match hex(&mut chars, 4) {
                Some(c) => out.push(c),
                None => out.push_str("\\u"),
            },
            'U' => match hex(&mut chars, 8) {
                Some(c) => out.push(c),
                None => out.push_str("\\U"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// Comments blanked in both views.
fn blank(text: &mut [u8], code: &mut [u8], from: usize, to: usize) {
    let to = to.min(text.len());
    for k in from..to {
        text[k] = b' ';
        code[k] = b' ';
    }
}

/// A string's content blanked in the code view only.
fn blank_code(code: &mut [u8], from: usize, to: usize) {
    let to = to.min(code.len());
    for b in code.iter_mut().take(to).skip(from) {
        *b = b' ';
    }
}

/// The lines of a whole text, lexed in order.
pub(crate) fn lex_all<'a>(lang: Lang, lines: impl IntoIterator<Item = &'a str>) -> Vec<Lexed> {
    let mut lexer = Lexer::new(lang);
    lines.into_iter().map(|l| lexer.line(l)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(l: &Lexed) -> Vec<Value> {
        l.literals.iter().map(|l| l.value.clone()).collect()
    }

    #[test]
    fn python_strings_and_comments_are_not_code() {
        let lines = lex_all(
            Lang::Python,
            [
                "x = 1000  # os._exit(0)",
                "\"\"\"calls os._exit(",
                "still a docstring\"\"\" ; os._exit(1)",
                "y = r'\\d' + f\"{x}\"",
            ],
        );
        assert!(!lines[0].has("os._exit(", false));
        assert_eq!(nums(&lines[0]), [Value::Num("1000".into())]);
        assert!(!lines[1].has("os._exit(", false));
        assert!(lines[2].starts_inside);
        assert!(lines[2].has("os._exit(", false));
        assert_eq!(nums(&lines[3]), [Value::Str("\\d".into()), Value::Str("{x}".into())]);
    }

    #[test]
    fn numbers_are_normalised() {
        let line = lex_all(Lang::Rust, ["f(1_000, 0x3e8, 1000u32, 1000.0, -5, 2.5e3, x-1)"]).remove(0);
        let v: Vec<String> = nums(&line)
            .into_iter()
            .map(|v| match v {
                Value::Num(n) => n,
                Value::Str(s) => s,
            })
            .collect();
        assert_eq!(v, ["1000", "1000", "1000", "1000", "-5", "2500", "1"]);
        let js = lex_all(Lang::JavaScript, ["const big = 1000n; x = 'a\\u00e9' + \"\\x41\";"]).remove(0);
        assert_eq!(nums(&js), [Value::Num("1000".into()), Value::Str("a\u{e9}".into()), Value::Str("A".into())]);
    }

    #[test]
    fn rust_lifetimes_raw_strings_and_nested_comments() {
        let lines = lex_all(
            Lang::Rust,
            [
                "fn f<'a>(x: &'a str) -> char { 'x' }",
                "let s = r#\"process::exit(0)\"#; /* a /* nested */ comment */ process::exit(1);",
                "let t = \"multi",
                "line process::exit(\" ; '\\n'",
            ],
        );
        assert_eq!(nums(&lines[0]), [Value::Str("x".into())]);
        assert_eq!(lines[1].find("process::exit(", false).len(), 1);
        assert!(lines[3].starts_inside);
        assert!(!lines[3].has("process::exit(", false));
        assert_eq!(nums(&lines[3]), [Value::Str("\n".into())]);
    }

    #[test]
    fn javascript_regexes_templates_and_block_comments() {
        let lines = lex_all(
            Lang::JavaScript,
            ["const re = /['\"]/g; const t = `process.exit(0)", "${x}`; /* process.exit(0) */ a / b / c"],
        );
        assert!(!lines[0].has("process.exit(", false));
        assert!(!lines[1].has("process.exit(", false));
        assert!(lines[1].code.contains("a / b / c"));
    }

    #[test]
    fn shell_and_toml_comments() {
        let sh = lex_all(Lang::Shell, ["echo a#b # trap 'exit 0' EXIT"]).remove(0);
        assert!(sh.text.contains("a#b") && !sh.text.contains("trap"));
        let toml = lex_all(Lang::Toml, ["build = \"gen.rs\" # autotests = false"]).remove(0);
        assert_eq!(nums(&toml), [Value::Str("gen.rs".into())]);
        assert!(!toml.has("autotests", false));
    }

    #[test]
    fn trivial_and_weak_literals() {
        assert!(Value::Num("1".into()).trivial() && Value::Num("-1".into()).trivial());
        assert!(Value::Str("x".into()).trivial() && Value::Str(" ".into()).trivial());
        assert!(!Value::Num("1000".into()).trivial() && !Value::Str("ab".into()).trivial());
        assert!(Value::Num("7".into()).weak() && !Value::Num("21".into()).weak());
    }
}
