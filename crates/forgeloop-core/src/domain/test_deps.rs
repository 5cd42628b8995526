//! The files a test reads from the checkout by its own words (design §5.2, "What counts as
//! tests"): what a shell script sources (`. ./testlib.sh`) or runs as one of its own commands
//! (`sh check.sh`, `./check.sh`, `python3 check.py`), what a Makefile includes, and the
//! test-support modules a Python, JavaScript or Ruby test imports. A PR that neuters such a
//! helper changes what the test means without touching the test, so these files count as
//! tests too, and a protected test's helpers are protected with it.
//!
//! Imports are followed only into test support — a path whose directories or name say
//! `test`, `spec`, `conftest`, `helper`, `fixture`, `mock`, `fake`, `stub` or `support` — because
//! a test also imports the code it tests, and that code is the PR's to change. For the same
//! reason a program a test runs for its output (`out=$(sh calc.sh 2 3)`, piped or redirected)
//! is the code under test, followed only into test support; one it runs as a command of its
//! own, whose exit status and output are the test's (`sh check.sh`, `if ./check.sh; then`,
//! `exec python3 check.py`), is a helper, followed whatever its name, as are sourced files and
//! Makefile includes. A Python module is reached in every form that would answer its import:
//! the package ahead of the module (as Python looks), and its compiled and native forms
//! (`helpers.pyc`, `__pycache__/helpers.cpython-311.pyc`, `helpers.cpython-311-x86_64-linux-gnu.so`).
//! The walk is bounded ([`MAX_DEPTH`] levels, [`MAX_FILES`] files, [`MAX_READ`] bytes a file):
//! a limit, said in docs/testing.md, not a proof.

use std::collections::{BTreeSet, VecDeque};

/// How many levels of sourcing or importing are followed from a root.
pub const MAX_DEPTH: usize = 3;
/// How many files the walk reaches at most.
pub const MAX_FILES: usize = 64;
/// How much of a file is read for its references.
pub const MAX_READ: usize = 256 * 1024;

/// What a tree offers the walk: whether a path is a file, and its text. Implemented by the
/// checkout adapter over git objects.
pub trait Files {
    /// Whether `path` (repository-relative) is a file in the tree.
    fn is_file(&self, path: &str) -> bool;
    /// The file's text (lossy UTF-8, at most [`MAX_READ`] bytes), if it is a file.
    fn read(&self, path: &str) -> Option<String>;
    /// The names of the files directly in `dir` (`""`: the root) that start with `prefix`:
    /// how compiled and native modules are found under the names the interpreter tags them
    /// with (`m.cpython-311.pyc`). A tree that cannot list finds them by their untagged names
    /// only.
    fn names_in(&self, dir: &str, prefix: &str) -> Vec<String> {
        let _ = (dir, prefix);
        Vec::new()
    }
}

/// How a reference reaches its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum How {
    /// Read as part of the script (`. file`, `source file`, `include file`): followed always.
    Sourced,
    /// A language's import: followed only into test support ([`is_test_support`]).
    Imported,
    /// Run as one of the test's own commands (`sh check.sh`, `./check.sh`, `exec ./x`,
    /// `python3 check.py`): its exit status and output are the test's, so it is a helper,
    /// followed always.
    Run,
    /// Run for its output (`out=$(sh calc.sh 2 3)`, `sh calc.sh | grep 5`, `> out.txt`): how a
    /// test exercises the code under test, so, like an import, followed only into test support.
    RunForOutput,
}

impl How {
    /// The verb a report uses: `check.sh (run by t.sh)`, `testlib.sh (sourced by t.sh)`.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Sourced => "sourced",
            How::Imported => "imported",
            How::Run | How::RunForOutput => "run",
        }
    }

    /// Whether the file is followed whatever its name.
    fn always(self) -> bool {
        matches!(self, How::Sourced | How::Run)
    }
}

/// One reference a file makes: the paths it may mean, in the order the language tries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// How it reads the file.
    pub how: How,
    /// Repository-relative candidates; the first that is a file is the one read.
    pub candidates: Vec<String>,
    /// For a Python import, the module's paths without an extension (`tests/helpers`,
    /// `tests/helpers/__init__`): each of their compiled and native forms that is present
    /// ([`compiled_forms`]) answers the import too, so each is reached.
    pub compiled: Vec<String>,
}

impl Reference {
    fn to(how: How, candidates: Vec<String>) -> Reference {
        Reference { how, candidates, compiled: Vec::new() }
    }
}

/// A file the walk reached.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reached {
    /// Its repository-relative path.
    pub path: String,
    /// The file that sources or imports it.
    pub by: String,
    /// The root the chain started from.
    pub root: String,
    /// Levels from the root (1: the root names it).
    pub depth: usize,
    /// How `by` reaches it (a report says "run by", "sourced by", "imported by").
    pub how: How,
}

/// The files reachable from `roots` in `files`, breadth first, each once (a root itself is not
/// listed). Bounded by [`MAX_DEPTH`] and [`MAX_FILES`].
pub fn closure(roots: &[String], files: &dyn Files) -> Vec<Reached> {
    let mut seen: BTreeSet<String> = roots.iter().cloned().collect();
    let mut queue: VecDeque<(String, String, usize)> = roots.iter().map(|r| (r.clone(), r.clone(), 0)).collect();
    let mut out = Vec::new();
    while let Some((path, root, depth)) = queue.pop_front() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let Some(text) = files.read(&path) else { continue };
        for reference in references(&path, &text) {
            let first = reference.candidates.iter().find(|c| files.is_file(c)).cloned();
            // A module's compiled forms are looked for only where its source would be followed.
            let compiled = reference
                .compiled
                .iter()
                .filter(|stem| reference.how.always() || is_test_support(stem))
                .flat_map(|stem| compiled_forms(stem, files));
            for found in first.into_iter().chain(compiled) {
                if !reference.how.always() && !is_test_support(&found) {
                    continue;
                }
                if !seen.insert(found.clone()) {
                    continue;
                }
                if out.len() >= MAX_FILES {
                    return out;
                }
                out.push(Reached {
                    path: found.clone(),
                    by: path.clone(),
                    root: root.clone(),
                    depth: depth + 1,
                    how: reference.how,
                });
                queue.push_back((found, root.clone(), depth + 1));
            }
        }
    }
    out
}

/// Whether `path` is test support by its directories or its name (see the module's doc).
pub fn is_test_support(path: &str) -> bool {
    const WORDS: &[&str] = &["test", "spec", "conftest", "helper", "fixture", "mock", "fake", "stub", "support"];
    path.to_ascii_lowercase().split('/').any(|part| WORDS.iter().any(|w| part.contains(w)))
}

/// The compiled and native forms of the Python module at `stem` (`pkg/mod`, or
/// `pkg/mod/__init__` for a package) that are files in `files`: `mod.pyc` (imported when no
/// source is beside it), `__pycache__/mod.cpython-311.pyc` (a source's compiled form, read
/// instead of the source when it is marked unchecked), and the native `mod.so`,
/// `mod.cpython-311-x86_64-linux-gnu.so`, `mod.abi3.so`, `mod.pyd` (imported ahead of the
/// source). Tagged names are found through [`Files::names_in`].
pub fn compiled_forms(stem: &str, files: &dyn Files) -> Vec<String> {
    let dir = dir_of(stem);
    let cache = if dir.is_empty() { "__pycache__".to_owned() } else { format!("{dir}/__pycache__") };
    let prefix = format!("{}.", stem.rsplit('/').next().unwrap_or(stem));
    let mut out: Vec<String> =
        ["pyc", "so", "pyd"].iter().map(|ext| format!("{stem}.{ext}")).filter(|p| files.is_file(p)).collect();
    for (dir, names) in [(dir, files.names_in(dir, &prefix)), (cache.as_str(), files.names_in(&cache, &prefix))] {
        for name in names {
            let path = if dir.is_empty() { name } else { format!("{dir}/{name}") };
            if is_compiled_form(stem, &path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `path` is a compiled or native form of the Python module at `stem` (see
/// [`compiled_forms`]).
pub fn is_compiled_form(stem: &str, path: &str) -> bool {
    let (dir, name) = (dir_of(stem), stem.rsplit('/').next().unwrap_or(stem));
    let (in_dir, file) = (dir_of(path), path.rsplit('/').next().unwrap_or(path));
    let Some((module, ext)) = file.split_once('.') else { return false };
    if module != name {
        return false;
    }
    // What is between the name and the extension: nothing, or one interpreter tag.
    let tag = ext.rsplit_once('.').map(|(tag, _)| tag);
    let ext = ext.rsplit('.').next().unwrap_or(ext);
    let tag_ok = tag.is_none_or(|t| !t.is_empty());
    let cache = if dir.is_empty() { "__pycache__".to_owned() } else { format!("{dir}/__pycache__") };
    match ext {
        "pyc" if in_dir == cache => tag.is_some() && tag_ok,
        "pyc" => in_dir == dir && tag.is_none(),
        "so" | "pyd" => in_dir == dir && tag_ok,
        _ => false,
    }
}

/// The references `path` makes in `text`, by its language (its extension, or its shebang).
pub fn references(path: &str, text: &str) -> Vec<Reference> {
    let text = text.get(..MAX_READ).unwrap_or(text);
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let shebang = text.lines().next().filter(|l| l.starts_with("#!")).unwrap_or("");
    match ext.as_str() {
        "sh" | "bash" | "bats" | "ksh" | "zsh" => shell(path, text),
        "py" => python(path, text),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => javascript(path, text),
        "rb" => ruby(path, text),
        "mk" => make(text),
        _ if matches!(lower.as_str(), "makefile" | "gnumakefile") => make(text),
        _ if shebang.contains("python") => python(path, text),
        _ if shebang.contains("node") => javascript(path, text),
        _ if shebang.contains("ruby") => ruby(path, text),
        _ if shebang.contains("sh") => shell(path, text),
        _ => Vec::new(),
    }
}

/// The directory of a repository path (`""` at the root).
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `base/rel` with `.` and `..` resolved; `None` when it climbs out of the repository.
fn join(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn unquote(word: &str) -> &str {
    word.trim_matches(|c| c == '"' || c == '\'')
}

/// What a shell script sources (`. file`, `source file`) and the files it runs (`sh x`,
/// `bash x`, `./x`, `exec ./x`, `python3 x`, `node x`, `perl x`, `ruby x`), each command read
/// by [`shell_commands`]: quotes, comments and heredocs are not commands.
fn shell(path: &str, text: &str) -> Vec<Reference> {
    let dir = dir_of(path);
    shell_commands(text).iter().filter_map(|command| shell_reference(dir, command)).collect()
}

/// The words that may come before a command without being it.
const SHELL_KEYWORDS: &[&str] = &["if", "then", "elif", "else", "do", "while", "until", "!", "{", "time"];

/// Programs that run the command after them (their options skipped): `exec ./x`, `env X=1 sh x`.
const SHELL_WRAPPERS: &[&str] = &["exec", "command", "builtin", "nohup", "time", "env", "timeout", "nice"];

/// The reference one command makes, if it sources or runs a file of the repository.
fn shell_reference(dir: &str, command: &ShellCommand) -> Option<Reference> {
    let mut words: &[String] = &command.words;
    loop {
        let first = words.first()?;
        let program = unquote(first).rsplit('/').next().unwrap_or("");
        if SHELL_KEYWORDS.contains(&first.as_str()) || is_assignment(first) {
            words = &words[1..];
        } else if SHELL_WRAPPERS.contains(&program) {
            words = &words[1..];
            // The wrapper's own options (`env -i`, `timeout -s KILL 10`, `nice -n 5`) and, for
            // `timeout`, its duration.
            while let Some(word) = words.first() {
                if !word.starts_with('-') || word == "--" {
                    words = &words[usize::from(word == "--")..];
                    break;
                }
                let takes_value = matches!(word.as_str(), "-u" | "-s" | "-k" | "-n" | "-a" | "-C" | "-S");
                words = words.get(if takes_value { 2 } else { 1 }..).unwrap_or_default();
            }
            if program == "timeout" {
                words = words.get(1..).unwrap_or_default();
            }
        } else {
            break;
        }
    }
    let first = words.first()?;
    if first == "." || first == "source" {
        return Some(Reference::to(How::Sourced, shell_target(dir, words.get(1)?)?));
    }
    let how = match command.captured || command.piped || command.redirected {
        true => How::RunForOutput,
        false => How::Run,
    };
    let program = unquote(first);
    let script = match Interpreter::of(program.rsplit('/').next().unwrap_or(program)) {
        Some(interpreter) => interpreter.script(&words[1..])?,
        None if program.contains('/') => first.as_str(),
        None => return None,
    };
    Some(Reference::to(how, shell_target(dir, script)?))
}

/// `NAME=value` (also `NAME+=value`, `a[1]=x`): an assignment before a command, or alone.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else { return false };
    let name = name.trim_end_matches('+');
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A program that runs a script file named among its arguments.
struct Interpreter {
    /// Short options after which there is no script file (`sh -c '…'`, `python3 -m pytest`).
    no_file: &'static str,
    /// Short options that take a value (`python3 -W error x.py`, `bash -o pipefail x.sh`).
    with_value: &'static str,
    /// Long options that take a value (`node --require ./setup.js x.js`).
    long_with_value: &'static [&'static str],
    /// Long options after which there is no script file (`node --eval '…'`).
    long_no_file: &'static [&'static str],
}

impl Interpreter {
    fn of(program: &str) -> Option<Interpreter> {
        let python = program.strip_prefix("python").or_else(|| program.strip_prefix("pypy"));
        if python.is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.')) {
            return Some(Interpreter {
                no_file: "cm",
                with_value: "WX",
                long_with_value: &["--check-hash-based-pycs"],
                long_no_file: &[],
            });
        }
        Some(match program {
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh" | "bats" => Interpreter {
                no_file: "cs",
                with_value: "oO",
                long_with_value: &["--rcfile", "--init-file"],
                long_no_file: &[],
            },
            "node" | "nodejs" => Interpreter {
                no_file: "ep",
                with_value: "rC",
                long_with_value: &["--require", "--import", "--loader", "--experimental-loader", "--conditions"],
                long_no_file: &["--eval", "--print"],
            },
            "perl" => Interpreter { no_file: "eE", with_value: "IM", long_with_value: &[], long_no_file: &[] },
            "ruby" => Interpreter { no_file: "e", with_value: "IrC", long_with_value: &[], long_no_file: &[] },
            _ => return None,
        })
    }

    /// The script among `args` (the words after the program), if the command runs one.
    fn script<'w>(&self, args: &'w [String]) -> Option<&'w str> {
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let arg = arg.as_str();
            if arg == "--" {
                return args.next().map(String::as_str);
            }
            if arg == "-" || self.long_no_file.contains(&arg) {
                return None;
            }
            if let Some(long) = arg.strip_prefix("--") {
                if !long.contains('=') && self.long_with_value.contains(&arg) {
                    args.next();
                }
                continue;
            }
            let Some(flags) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+')) else { return Some(arg) };
            for (k, flag) in flags.char_indices() {
                if self.no_file.contains(flag) {
                    return None;
                }
                if self.with_value.contains(flag) {
                    // `-Wall`: the value is attached; `-W all`: it is the next word.
                    if k + flag.len_utf8() == flags.len() {
                        args.next();
                    }
                    break;
                }
            }
        }
        None
    }
}

/// One simple command of a shell script: its words (quotes kept) and how its output is used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ShellCommand {
    words: Vec<String>,
    /// Inside `$( … )`, backquotes or `<( … )`: its output is a value the test reads.
    captured: bool,
    /// Piped into another command.
    piped: bool,
    /// Its standard output redirected (`> file`, `>> file`, `&> file`).
    redirected: bool,
}

/// The simple commands of a shell script, substitutions' included: quotes, `#` comments and
/// heredoc bodies are read as such, `;`, `&&`, `||`, `|`, `&`, newlines and parentheses end a
/// command.
fn shell_commands(text: &str) -> Vec<ShellCommand> {
    let mut scan =
        ShellScan { chars: text.chars().collect(), pos: 0, out: Vec::new(), heredocs: Vec::new(), nesting: 0 };
    scan.list(false, None);
    scan.out
}

/// How deep subshells and substitutions are read for their commands; deeper, their text is
/// skipped (a script of a thousand nested `$(` must not exhaust the stack).
const MAX_NESTING: usize = 32;

struct ShellScan {
    chars: Vec<char>,
    pos: usize,
    out: Vec<ShellCommand>,
    /// Heredocs announced on the current line: (delimiter, leading tabs stripped).
    heredocs: Vec<(String, bool)>,
    /// How many subshells and substitutions [`ShellScan::list`] is inside.
    nesting: usize,
}

/// What a word being read is for.
#[derive(Default)]
struct Word {
    text: String,
    started: bool,
    /// The word after a redirection operator: its target, not an argument.
    target: bool,
}

impl ShellScan {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Reads a subshell's or a substitution's commands up to `close` (the opener already
    /// read); past [`MAX_NESTING`], skips to `close`.
    fn nested(&mut self, captured: bool, close: char) {
        if self.nesting >= MAX_NESTING {
            while let Some(c) = self.peek(0) {
                self.pos += 1;
                if c == close {
                    break;
                }
            }
            return;
        }
        self.nesting += 1;
        self.list(captured, Some(close));
        self.nesting -= 1;
    }

    /// Reads commands until `close` (consumed) or the end of the text.
    fn list(&mut self, captured: bool, close: Option<char>) {
        let mut command = ShellCommand { captured, ..ShellCommand::default() };
        let mut word = Word::default();
        while let Some(c) = self.peek(0) {
            if Some(c) == close {
                self.pos += 1;
                break;
            }
            match c {
                ' ' | '\t' | '\r' => {
                    self.end_word(&mut command, &mut word);
                    self.pos += 1;
                }
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.end_command(&mut command, &mut word, captured);
                    self.pos += 1;
                    self.skip_heredocs();
                }
                '#' if !word.started => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                ';' | '&' if !(c == '&' && self.peek(1) == Some('>')) => {
                    self.end_command(&mut command, &mut word, captured);
                    self.pos += 1;
                }
                '|' => {
                    let or = self.peek(1) == Some('|');
                    command.piped |= !or;
                    self.end_command(&mut command, &mut word, captured);
                    self.pos += if or { 2 } else { 1 };
                }
                '(' if word.started && word.text.ends_with('=') => self.array(&mut word),
                '(' => {
                    // A subshell (or a function's `()`): its commands are the script's.
                    self.end_command(&mut command, &mut word, captured);
                    self.pos += 1;
                    self.nested(captured, ')');
                }
                ')' => {
                    // A `case` pattern's end, or a stray parenthesis.
                    self.end_command(&mut command, &mut word, captured);
                    self.pos += 1;
                }
                '<' | '>' | '&' if self.peek(1) != Some('(') => self.redirection(&mut command, &mut word),
                _ => self.word_part(&mut word),
            }
        }
        self.end_command(&mut command, &mut word, captured);
    }

    fn end_word(&mut self, command: &mut ShellCommand, word: &mut Word) {
        if word.started {
            let text = std::mem::take(&mut word.text);
            if !std::mem::take(&mut word.target) {
                command.words.push(text);
            }
            word.started = false;
        }
    }

    fn end_command(&mut self, command: &mut ShellCommand, word: &mut Word, captured: bool) {
        self.end_word(command, word);
        let done = std::mem::replace(command, ShellCommand { captured, ..ShellCommand::default() });
        if !done.words.is_empty() {
            self.out.push(done);
        }
    }

    /// `>`, `>>`, `>|`, `&>`, `N>`, `<`, `<<<`, `<<DELIM`, `>&2`, …
    fn redirection(&mut self, command: &mut ShellCommand, word: &mut Word) {
        // `2>file`: the digits before the operator are its file descriptor, not a word.
        let fd = match word.started && !word.text.is_empty() && word.text.chars().all(|c| c.is_ascii_digit()) {
            true => std::mem::take(&mut word.text),
            false => {
                self.end_word(command, word);
                String::new()
            }
        };
        word.started = false;
        let c = self.peek(0).unwrap_or(' ');
        if c == '<' && self.peek(1) == Some('<') && self.peek(2) != Some('<') {
            self.pos += 2;
            let strip = self.peek(0) == Some('-');
            if strip {
                self.pos += 1;
            }
            while matches!(self.peek(0), Some(' ' | '\t')) {
                self.pos += 1;
            }
            let mut delimiter = String::new();
            while let Some(c) = self.peek(0).filter(|c| !c.is_whitespace() && !";&|<>()".contains(*c)) {
                if !matches!(c, '\'' | '"' | '\\') {
                    delimiter.push(c);
                }
                self.pos += 1;
            }
            if !delimiter.is_empty() {
                self.heredocs.push((delimiter, strip));
            }
            return;
        }
        let start = self.pos;
        while matches!(self.peek(0), Some('<' | '>' | '&' | '|')) && self.pos - start < 3 {
            self.pos += 1;
        }
        let operator: String = self.chars[start..self.pos].iter().collect();
        // `>&2`, `2>&1`: a descriptor duplicated, its digits the target.
        let duplicates = operator.ends_with('&') && operator != "&";
        let stdout = operator.contains('>') && (fd.is_empty() || fd == "1");
        let to_stderr = duplicates && self.peek(0) == Some('2');
        if stdout && !to_stderr || operator.starts_with("&>") {
            command.redirected = true;
        }
        word.target = true;
    }

    /// One piece of a word: a quoted string, a substitution, an escape, or a character.
    fn word_part(&mut self, word: &mut Word) {
        word.started = true;
        let start = self.pos;
        let c = self.peek(0).unwrap_or(' ');
        match c {
            '\\' => self.pos += 2,
            '\'' => {
                self.pos += 1;
                while self.peek(0).is_some_and(|c| c != '\'') {
                    self.pos += 1;
                }
                self.pos += 1;
            }
            '"' => {
                self.pos += 1;
                while let Some(c) = self.peek(0) {
                    match c {
                        '"' => break,
                        '\\' => self.pos += 2,
                        '$' if self.peek(1) == Some('(') => self.dollar_paren(),
                        '`' => {
                            self.pos += 1;
                            self.nested(true, '`');
                        }
                        _ => self.pos += 1,
                    }
                }
                self.pos += 1;
            }
            '$' if self.peek(1) == Some('(') => self.dollar_paren(),
            '$' if self.peek(1) == Some('{') => {
                self.pos += 2;
                let mut depth = 1;
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 1 => break,
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
            }
            '$' if self.peek(1) == Some('\'') => {
                self.pos += 2;
                while let Some(c) = self.peek(0) {
                    self.pos += if c == '\\' { 2 } else { 1 };
                    if c == '\'' {
                        break;
                    }
                }
            }
            '`' => {
                self.pos += 1;
                self.nested(true, '`');
            }
            '<' | '>' => {
                // `<( … )`, `>( … )`: a process substitution, read for its commands.
                self.pos += 2;
                self.nested(true, ')');
            }
            _ => self.pos += 1,
        }
        let end = self.pos.min(self.chars.len());
        word.text.extend(&self.chars[start.min(end)..end]);
    }

    /// `name=( … )`: an array's words, part of the assignment.
    fn array(&mut self, word: &mut Word) {
        let start = self.pos;
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            match c {
                ')' => {
                    self.pos += 1;
                    break;
                }
                '\\' => self.pos += 2,
                '\'' | '"' => {
                    self.pos += 1;
                    while self.peek(0).is_some_and(|q| q != c) {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
        let end = self.pos.min(self.chars.len());
        word.text.extend(&self.chars[start..end]);
    }

    /// `$( … )`, read for its commands, or `$(( … ))`, arithmetic, skipped.
    fn dollar_paren(&mut self) {
        if self.peek(2) == Some('(') {
            self.pos += 3;
            let mut depth = 2;
            while let Some(c) = self.peek(0) {
                self.pos += 1;
                match c {
                    '(' => depth += 1,
                    ')' if depth == 1 => break,
                    ')' => depth -= 1,
                    _ => {}
                }
            }
            return;
        }
        self.pos += 2;
        self.nested(true, ')');
    }

    /// After a newline: the bodies of the heredocs the line announced.
    fn skip_heredocs(&mut self) {
        for (delimiter, strip) in std::mem::take(&mut self.heredocs) {
            while self.pos < self.chars.len() {
                let end =
                    self.chars[self.pos..].iter().position(|c| *c == '\n').map_or(self.chars.len(), |n| self.pos + n);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let line = if strip { line.trim_start_matches('\t') } else { line.as_str() };
                if line == delimiter {
                    break;
                }
            }
        }
    }
}

/// Where a sourced or run word points: relative to the working directory (the checkout's root,
/// where the commands run) or, written through the script's own directory
/// (`$(dirname "$0")/x`, `"$DIR"/x`, `${BASH_SOURCE%/*}/x`), relative to the script.
fn shell_target(dir: &str, word: &str) -> Option<Vec<String>> {
    let word = unquote(word);
    if word.is_empty() {
        return None;
    }
    if word.contains('$') {
        // Everything up to the last `/` that follows the expansion is "the script's directory".
        let after = word.rfind([')', '}']).map_or_else(|| word.find('/'), |end| word[end..].find('/').map(|i| end + i));
        let rest = unquote(word.get(after? + 1..)?);
        if rest.is_empty() || rest.contains('$') {
            return None;
        }
        let candidates: Vec<String> = [join(dir, rest), join("", rest)].into_iter().flatten().collect();
        return (!candidates.is_empty()).then_some(candidates);
    }
    if word.starts_with('/') || word.contains(['*', '?', '[']) {
        return None;
    }
    let mut candidates: Vec<String> = [join("", word), join(dir, word)].into_iter().flatten().collect();
    candidates.dedup();
    (!candidates.is_empty()).then_some(candidates)
}

/// `include file` and `-include file` (also `sinclude`).
fn make(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if !matches!(words.next(), Some("include" | "-include" | "sinclude")) {
            continue;
        }
        for word in words.filter(|w| !w.contains(['$', '*', '%'])) {
            if let Some(path) = join("", word) {
                out.push(Reference::to(How::Sourced, vec![path]));
            }
        }
    }
    out
}

/// The import roots a Python test's absolute imports resolve against: its own directory
/// (pytest puts it first), the repository's root (`python -m` puts the working directory
/// first) and `src/`.
fn python_roots(dir: &str) -> Vec<String> {
    let mut roots = vec![dir.to_owned(), String::new(), "src".to_owned()];
    roots.dedup();
    roots
}

/// The import of `module` from `roots`: in each root, the package ahead of the module (as
/// Python's finder looks), and the compiled and native forms of both.
fn python_module(roots: &[String], module: &str) -> Reference {
    let rel = module.replace('.', "/");
    let stems: Vec<String> =
        roots.iter().flat_map(|root| [join(root, &format!("{rel}/__init__")), join(root, &rel)]).flatten().collect();
    Reference { how: How::Imported, candidates: stems.iter().map(|s| format!("{s}.py")).collect(), compiled: stems }
}

/// `import a.b`, `import a, b as c`, `from a.b import c` (also the submodule `a/b/c.py`),
/// `from . import x`, `from ..pkg.mod import y`.
fn python(path: &str, text: &str) -> Vec<Reference> {
    let dir = dir_of(path);
    let roots = python_roots(dir);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let module = part.split_whitespace().next().unwrap_or("");
                if is_module_name(module) {
                    out.push(python_module(&roots, module));
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let mut words = rest.split_whitespace();
            let (Some(module), Some("import")) = (words.next(), words.next()) else { continue };
            let names: Vec<&str> = words
                .flat_map(|w| w.split(','))
                .map(|w| w.trim_matches(|c: char| c == '(' || c == ')'))
                .filter(|w| is_module_name(w) && *w != "as")
                .collect();
            let dots = module.len() - module.trim_start_matches('.').len();
            let module = &module[dots..];
            let bases: Vec<String> = if dots == 0 {
                roots.clone()
            } else {
                let mut base = Some(dir.to_owned());
                for _ in 1..dots {
                    base = base.and_then(|b| join(&b, ".."));
                }
                base.into_iter().collect()
            };
            if !module.is_empty() && !is_module_name(module) {
                continue;
            }
            if !module.is_empty() {
                out.push(python_module(&bases, module));
            }
            for name in names {
                let sub = if module.is_empty() { name.to_owned() } else { format!("{module}.{name}") };
                out.push(python_module(&bases, &sub));
            }
        }
    }
    out
}

fn is_module_name(word: &str) -> bool {
    !word.is_empty() && word.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Relative specifiers only (`./x`, `../x`): a bare name is a package, not the repository's.
/// A native addon (`x.node`) is what `require('./x')` loads when no script of that name is.
fn javascript(path: &str, text: &str) -> Vec<Reference> {
    const EXTENSIONS: &[&str] = &["", ".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts", ".node"];
    let dir = dir_of(path);
    let mut out = Vec::new();
    for spec in quoted_after(text, &["require(", "from ", "import(", "import "]) {
        if !(spec.starts_with("./") || spec.starts_with("../")) {
            continue;
        }
        let Some(base) = join(dir, &spec) else { continue };
        let mut candidates: Vec<String> = EXTENSIONS.iter().map(|e| format!("{base}{e}")).collect();
        candidates.extend(["index.js", "index.ts", "index.mjs"].iter().map(|i| format!("{base}/{i}")));
        out.push(Reference::to(How::Imported, candidates));
    }
    out
}

/// `require_relative 'x'` against the file's directory; `require 'x'` against `test/`,
/// `spec/` and `lib/`.
fn ruby(path: &str, text: &str) -> Vec<Reference> {
    let dir = dir_of(path);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let (relative, rest) = match (line.strip_prefix("require_relative"), line.strip_prefix("require")) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            _ => continue,
        };
        let Some(spec) = first_quoted(rest) else { continue };
        let file = if spec.ends_with(".rb") { spec.clone() } else { format!("{spec}.rb") };
        let candidates: Vec<String> = match relative {
            true => join(dir, &file).into_iter().collect(),
            false => ["test", "spec", "lib"].iter().filter_map(|root| join(root, &file)).collect(),
        };
        if !candidates.is_empty() {
            out.push(Reference::to(How::Imported, candidates));
        }
    }
    out
}

/// The quoted strings that follow any of `openers` in `text`.
fn quoted_after(text: &str, openers: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        for opener in openers {
            let mut rest = line;
            while let Some(at) = rest.find(opener) {
                rest = &rest[at + opener.len()..];
                // `import x from './y'`: the specifier is the first quoted string on the line.
                if let Some(spec) = first_quoted(rest) {
                    out.push(spec);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn first_quoted(text: &str) -> Option<String> {
    let start = text.find(['\'', '"', '`'])?;
    let quote = text[start..].chars().next()?;
    let body = &text[start + 1..];
    let end = body.find(quote)?;
    Some(body[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    struct Tree(BTreeMap<String, String>);

    impl Tree {
        fn of(files: &[(&str, &str)]) -> Tree {
            Tree(files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect())
        }
    }

    impl Files for Tree {
        fn is_file(&self, path: &str) -> bool {
            self.0.contains_key(path)
        }
        fn read(&self, path: &str) -> Option<String> {
            self.0.get(path).cloned()
        }
    }

    fn reached(roots: &[&str], tree: &Tree) -> Vec<(String, String, usize)> {
        let roots: Vec<String> = roots.iter().map(|r| (*r).to_owned()).collect();
        closure(&roots, tree).into_iter().map(|r| (r.path, r.by, r.depth)).collect()
    }

    #[test]
    fn a_test_script_s_sourced_helper_is_reached_whatever_its_name() {
        let tree = Tree::of(&[
            ("t.sh", "#!/bin/sh\n. ./testlib.sh\nsource \"$(dirname \"$0\")/lib/more.sh\"\nout=$(sh calc.sh 2 3)\n"),
            ("testlib.sh", "check() { [ \"$1\" = \"$2\" ] || exit 1; }\n. lib/common.sh\n"),
            ("lib/more.sh", ""),
            ("lib/common.sh", "# . never.sh\n"),
            ("calc.sh", "echo $(($1 + $2))\n"),
            ("never.sh", ""),
        ]);
        assert_eq!(
            reached(&["t.sh"], &tree),
            [
                ("testlib.sh".into(), "t.sh".into(), 1),
                ("lib/more.sh".into(), "t.sh".into(), 1),
                ("lib/common.sh".into(), "testlib.sh".into(), 2),
            ],
            "calc.sh is run for its output: it is the code under test; a comment sources nothing"
        );
    }

    #[test]
    fn a_helper_the_test_runs_as_one_of_its_commands_is_reached_whatever_its_name() {
        let tree = Tree::of(&[
            (
                "t.sh",
                "#!/bin/sh\nset -e\nsh check.sh\nbash -eu ./checks/more.sh --strict\nif ! python3 -u check.py; then exit 1; fi\nnode tools/verify.mjs && perl t/ok.pl || ruby spec/run.rb\n\"$(dirname \"$0\")/local.sh\"\nexec ./last.sh\n",
            ),
            ("check.sh", "out=$(sh calc.sh 2 3)\n[ \"$out\" = 5 ]\n"),
            ("checks/more.sh", "./deeper.sh\n"),
            ("deeper.sh", ""),
            ("check.py", "from testutil import same\n"),
            ("testutil.py", ""),
            ("tools/verify.mjs", ""),
            ("t/ok.pl", ""),
            ("spec/run.rb", ""),
            ("local.sh", ""),
            ("last.sh", ""),
            ("calc.sh", ""),
        ]);
        let roots = vec!["t.sh".to_owned()];
        let got: Vec<(String, String)> = closure(&roots, &tree).into_iter().map(|r| (r.path, r.by)).collect();
        let want = [
            ("check.sh", "t.sh"),
            ("checks/more.sh", "t.sh"),
            ("check.py", "t.sh"),
            ("tools/verify.mjs", "t.sh"),
            ("t/ok.pl", "t.sh"),
            ("spec/run.rb", "t.sh"),
            ("local.sh", "t.sh"),
            ("last.sh", "t.sh"),
            ("deeper.sh", "checks/more.sh"),
            ("testutil.py", "check.py"),
        ];
        let want: Vec<(String, String)> = want.iter().map(|(p, b)| ((*p).to_owned(), (*b).to_owned())).collect();
        assert_eq!(got, want, "calc.sh, which check.sh runs for its output, is the code under test");
        let how: Vec<How> = references("t.sh", &tree.0["t.sh"]).iter().map(|r| r.how).collect();
        assert!(how.iter().all(|h| *h == How::Run) && how.len() == 8, "{how:?}");
        assert_eq!(How::Run.as_str(), "run");
        assert_eq!(How::Sourced.as_str(), "sourced");
    }

    #[test]
    fn what_runs_nothing_of_the_repository_is_not_followed() {
        let script = r#"#!/bin/sh
python3 -m pytest -q
python3 -c 'import check'
sh -c 'sh check.sh'
bash -ec "./check.sh"
node -e "require('./check.js')"
node --test
echo "sh check.sh"
echo 'python3 check.py' # ./check.sh
cat <<END_OF_TEXT
sh check.sh
./check.sh
END_OF_TEXT
printf '%s\n' ./check.sh
sh /usr/share/check.sh
sh ../outside.sh
sh "$t"
for t in tests/*.sh; do sh "$t"; done
check.sh
x=./check.sh
"#;
        let refs = references("t.sh", script);
        assert!(refs.is_empty(), "{refs:?}");
        // A script nothing runs is not reached: `scripts/build.sh` sits beside them.
        let tree = Tree::of(&[("t.sh", script), ("check.sh", ""), ("check.py", ""), ("scripts/build.sh", "")]);
        assert!(reached(&["t.sh"], &tree).is_empty());
    }

    #[test]
    fn a_program_run_for_its_output_is_the_code_under_test_unless_it_is_test_support() {
        let script = "out=$(sh calc.sh 2 3)\nsh calc.sh 2 3 > /dev/null\nsh calc.sh | grep 5\nv=`python3 app.py`\nsh tests/helper.sh >> log\ndiff <(sh gen.sh) expected.txt\nsh check.sh 2>&1 >&2\n";
        let refs = references("t.sh", script);
        let got: Vec<(How, &str)> = refs.iter().map(|r| (r.how, r.candidates[0].as_str())).collect();
        assert_eq!(
            got,
            [
                (How::RunForOutput, "calc.sh"),
                (How::RunForOutput, "calc.sh"),
                (How::RunForOutput, "calc.sh"),
                (How::RunForOutput, "app.py"),
                (How::RunForOutput, "tests/helper.sh"),
                (How::RunForOutput, "gen.sh"),
                (How::Run, "check.sh"),
            ]
        );
        let tree = Tree::of(&[
            ("t.sh", script),
            ("calc.sh", ""),
            ("app.py", ""),
            ("tests/helper.sh", ""),
            ("gen.sh", ""),
            ("check.sh", ""),
        ]);
        let paths: Vec<String> = reached(&["t.sh"], &tree).into_iter().map(|(p, _, _)| p).collect();
        assert_eq!(paths, ["tests/helper.sh", "check.sh"]);
    }

    #[test]
    fn run_forms_resolve_against_the_root_or_the_script_s_directory() {
        for (line, want) in [
            ("sh lib.sh", "lib.sh"),
            ("sh ./scripts/lib.sh", "scripts/lib.sh"),
            ("./lib.sh", "scripts/lib.sh"),
            ("\"$(dirname \"$0\")/lib.sh\" arg", "scripts/lib.sh"),
            ("python3 \"${BASH_SOURCE%/*}/lib.py\"", "scripts/lib.py"),
            ("env FOO=1 timeout 10 sh lib.sh", "lib.sh"),
            ("VAR=1 exec ./lib.sh", "scripts/lib.sh"),
            ("/usr/bin/env python3.12 -W error lib.py", "lib.py"),
            ("python -- lib.py", "lib.py"),
            ("perl -Ilib lib.pl", "lib.pl"),
            ("bash -o pipefail lib.sh", "lib.sh"),
            ("node --require ./setup.js lib.js", "lib.js"),
        ] {
            let refs = references("scripts/t.sh", &format!("{line}\n"));
            assert_eq!(refs.len(), 1, "{line}: {refs:?}");
            assert!(refs[0].candidates.contains(&want.to_owned()), "{line}: {refs:?}");
            assert_eq!(refs[0].how, How::Run, "{line}");
        }
    }

    #[test]
    fn script_relative_forms_resolve_against_the_script_s_directory() {
        for word in [
            "\"$(dirname \"$0\")/lib.sh\"",
            "$(dirname $0)/lib.sh",
            "\"$DIR\"/lib.sh",
            "$DIR/lib.sh",
            "\"${BASH_SOURCE%/*}/lib.sh\"",
            "./scripts/lib.sh",
        ] {
            let text = format!(". {word}\n");
            let refs = references("scripts/t.sh", &text);
            assert_eq!(refs.len(), 1, "{word}");
            assert!(refs[0].candidates.contains(&"scripts/lib.sh".to_owned()), "{word}: {refs:?}");
        }
        assert!(references("t.sh", ". /etc/profile\n. \"$X\"\n").is_empty());
        assert!(references("t.sh", ". ../../outside.sh\n").is_empty(), "nothing outside the repository");
    }

    #[test]
    fn python_imports_are_followed_into_test_support_only() {
        let tree = Tree::of(&[
            (
                "tests/test_calc.py",
                "import unittest\nfrom calc import add\nfrom helpers import check\nfrom .support import fixtures\n",
            ),
            ("calc.py", "def add(a, b): return a + b\n"),
            ("tests/helpers.py", "from testutil.asserts import same\n"),
            ("testutil/asserts.py", ""),
            ("tests/support/__init__.py", ""),
            ("tests/support/fixtures.py", ""),
        ]);
        let got = reached(&["tests/test_calc.py"], &tree);
        let paths: Vec<&str> = got.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["tests/helpers.py", "tests/support/__init__.py", "tests/support/fixtures.py", "testutil/asserts.py"],
            "calc.py is the code under test, not followed: {got:?}"
        );
    }

    #[test]
    fn javascript_ruby_and_make_references() {
        let js = references(
            "test/app.test.js",
            "const h = require('./helpers');\nimport { x } from \"../src/app\";\nimport 'jest';\n",
        );
        let first: Vec<&str> = js.iter().map(|r| r.candidates[0].as_str()).collect();
        assert_eq!(first, ["src/app", "test/helpers"]);
        assert!(js[1].candidates.contains(&"test/helpers.js".to_owned()));
        let rb = references("test/a_test.rb", "require_relative 'support/h'\nrequire 'test_helper'\n");
        assert_eq!(rb[0].candidates, ["test/support/h.rb"]);
        assert_eq!(rb[1].candidates, ["test/test_helper.rb", "spec/test_helper.rb", "lib/test_helper.rb"]);
        let mk = references("Makefile", "include common.mk\n-include $(DEPS)\ntest:\n\tsh t.sh\n");
        assert_eq!(mk, [Reference::to(How::Sourced, vec!["common.mk".into()])]);
    }

    #[test]
    fn the_walk_is_bounded_in_depth_and_size_and_visits_a_file_once() {
        let mut files: Vec<(String, String)> =
            (0..10).map(|i| (format!("l{i}.sh"), format!(". l{}.sh\n", i + 1))).collect();
        files.push(("l10.sh".into(), String::new()));
        let tree = Tree(files.into_iter().collect());
        let got = reached(&["l0.sh"], &tree);
        assert_eq!(got.len(), MAX_DEPTH, "{got:?}");
        let wide: String = (0..200).map(|i| format!(". w{i}.sh\n")).collect();
        let mut files: BTreeMap<String, String> =
            (0..200).map(|i| (format!("w{i}.sh"), ". root.sh\n".into())).collect();
        files.insert("root.sh".into(), wide);
        let got = reached(&["root.sh"], &Tree(files));
        assert_eq!(got.len(), MAX_FILES);
        assert!(got.iter().all(|(p, _, _)| p != "root.sh"), "the root is not listed again");
    }

    #[test]
    fn test_support_is_named_by_its_directories_or_its_name() {
        for yes in ["tests/x.py", "testutil.py", "spec_helper.rb", "conftest.py", "fixtures/a.js", "support/h.sh"] {
            assert!(is_test_support(yes), "{yes}");
        }
        for no in ["calc.py", "src/app.js", "lib/parser.rb"] {
            assert!(!is_test_support(no), "{no}");
        }
    }
    /// A tree that can list its directories, as the checkout's does through the plan.
    struct Listing(Tree);

    impl Files for Listing {
        fn is_file(&self, path: &str) -> bool {
            self.0.is_file(path)
        }
        fn read(&self, path: &str) -> Option<String> {
            self.0.read(path)
        }
        fn names_in(&self, dir: &str, prefix: &str) -> Vec<String> {
            self.0
                .0
                .keys()
                .filter_map(|p| match p.rsplit_once('/') {
                    Some((d, name)) if d == dir => Some(name.to_owned()),
                    None if dir.is_empty() => Some(p.clone()),
                    _ => None,
                })
                .filter(|name| name.starts_with(prefix))
                .collect()
        }
    }

    #[test]
    fn a_python_import_reaches_the_module_s_compiled_and_native_forms() {
        let test = "import unittest\nfrom helpers import check\nimport mathx\n";
        let tree = Tree::of(&[
            ("test_calc.py", test),
            ("unittest.pyc", ""),
            ("helpers.py", ""),
            ("__pycache__/helpers.cpython-311.pyc", ""),
            ("helpers.cpython-311-x86_64-linux-gnu.so", ""),
            ("mathx.pyc", ""),
            ("docs/unittest.pyc.md", ""),
        ]);
        let paths = |files: &dyn Files| -> Vec<String> {
            closure(&["test_calc.py".to_owned()], files).into_iter().map(|r| r.path).collect()
        };
        // By plain names only, the bytecode beside the test is found.
        assert_eq!(paths(&tree), ["unittest.pyc", "helpers.py"]);
        // A tree that lists finds the tagged forms too; mathx is code, not test support.
        assert_eq!(
            paths(&Listing(tree)),
            [
                "unittest.pyc",
                "helpers.py",
                "__pycache__/helpers.cpython-311.pyc",
                "helpers.cpython-311-x86_64-linux-gnu.so"
            ]
        );
    }

    #[test]
    fn a_python_package_is_looked_for_ahead_of_the_module_of_its_name() {
        let tree = Tree::of(&[
            ("tests/test_a.py", "from helpers import x\n"),
            ("tests/helpers.py", ""),
            ("tests/helpers/__init__.py", ""),
        ]);
        let paths: Vec<String> = reached(&["tests/test_a.py"], &tree).into_iter().map(|(p, _, _)| p).collect();
        assert_eq!(paths, ["tests/helpers/__init__.py"], "Python imports the package");
    }

    #[test]
    fn compiled_forms_are_named_by_the_module_they_answer_for() {
        for (stem, path, want) in [
            ("unittest", "unittest.pyc", true),
            ("unittest", "__pycache__/unittest.cpython-311.pyc", true),
            ("unittest", "unittest.cpython-311-x86_64-linux-gnu.so", true),
            ("unittest", "unittest.abi3.so", true),
            ("unittest", "unittest.so", true),
            ("unittest", "unittest.pyd", true),
            ("tests/helpers/__init__", "tests/helpers/__pycache__/__init__.cpython-312.pyc", true),
            ("unittest", "unittest.py", false),
            ("unittest", "unittest.cpython-311.pyc", false),
            ("unittest", "__pycache__/unittest.pyc", false),
            ("unittest", "src/unittest.pyc", false),
            ("unittest", "unittest2.pyc", false),
            ("unittest", "unittest..so", false),
            ("unittest", "docs/unittest.pyc.md", false),
        ] {
            assert_eq!(is_compiled_form(stem, path), want, "{stem} {path}");
        }
    }

    #[test]
    fn a_node_addon_answers_a_require_when_no_script_does() {
        let refs = references("test/a.test.js", "const h = require('./helpers');\n");
        assert!(refs[0].candidates.contains(&"test/helpers.node".to_owned()), "{refs:?}");
        let tree = Tree::of(&[("test/a.test.js", "const h = require('./helpers');\n"), ("test/helpers.node", "")]);
        assert_eq!(reached(&["test/a.test.js"], &tree), [("test/helpers.node".into(), "test/a.test.js".into(), 1)]);
    }
    #[test]
    fn a_script_of_deeply_nested_substitutions_is_read_without_exhausting_the_stack() {
        let deep = format!("{}sh check.sh{}\nsh after.sh\n", "$(".repeat(40_000), ")".repeat(40_000));
        let refs = references("t.sh", &deep);
        let last = refs.last().map(|r| (r.how, r.candidates[0].as_str()));
        assert_eq!(last, Some((How::Run, "after.sh")), "{refs:?}");
        let subshells = format!("{}\n./x.sh\n", "(".repeat(50_000));
        assert!(references("t.sh", &subshells).len() <= 1);
    }
}
