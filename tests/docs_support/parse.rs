//! From a Markdown file to what the doc-example test does with it, in document order: the
//! commands to run with their expectations, the files to write, and what is skipped. The
//! convention itself is described in `tests/docs_examples.rs`. Pure text in, pure data out, so
//! the rules are unit-tested without running anything.

use super::markdown::{Fence, Segment, segments};

/// Info-string languages whose blocks are run.
pub const COMMAND_LANGUAGES: &[&str] = &["sh", "bash", "shell", "console"];

/// One logical command of a command block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// 1-based line of its first line.
    pub line: usize,
    /// What bash runs: the logical command as written (its comment included), prompt stripped.
    pub text: String,
    /// `→ TEXT`: stdout must contain TEXT.
    pub stdout_contains: Option<String>,
    /// `(exit N)`, else 0.
    pub exit: i32,
    /// `<!-- doctest: tty INPUT -->` on its block: run under a terminal, typing INPUT.
    pub tty: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Command(Command),
    /// A `file=NAME` block: written to NAME in the working directory when reached.
    File {
        line: usize,
        name: String,
        contents: String,
    },
    /// A block under `<!-- doctest: skip REASON -->`.
    Skipped {
        line: usize,
        language: String,
        reason: String,
    },
    /// An `export …` line: for real users; the harness provides the environment.
    Export {
        line: usize,
        text: String,
    },
    /// A broken rule of the convention.
    Problem {
        line: usize,
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Directive {
    Skip(String),
    Tty(String),
    /// A malformed directive (already reported): its block is left alone.
    Broken,
}

/// `<!-- doctest: … -->` on a line of its own: `None` when the line is no directive at all,
/// `Some(Err)` when it is a malformed one.
fn directive(line: &str) -> Option<Result<Directive, String>> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let rest = inner.strip_prefix("doctest:")?.trim();
    let (word, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let arg = arg.trim();
    Some(match word {
        "skip" if arg.is_empty() => {
            Err("`<!-- doctest: skip -->` without a reason (write `<!-- doctest: skip WHY -->`)".into())
        }
        "skip" => Ok(Directive::Skip(arg.to_owned())),
        "tty" => unescape(arg).map(Directive::Tty),
        other => Err(format!("unknown doctest directive `{other}` (known: `skip REASON`, `tty INPUT`)")),
    })
}

/// The tty input's escapes: `\n`, `\r`, `\t`, `\e` (Escape), `\\`.
fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('e') => out.push('\u{1b}'),
            Some('\\') => out.push('\\'),
            other => {
                return Err(format!("tty input: unknown escape `\\{}`", other.map(String::from).unwrap_or_default()));
            }
        }
    }
    Ok(out)
}

/// What a shell would make of a command's text so far.
#[derive(Debug, Default, PartialEq, Eq)]
struct Scan {
    /// A quoted string is still open at the end.
    open_quote: bool,
    /// The text ends with an unquoted backslash: the line continues.
    continues: bool,
    /// Byte offset of an unquoted `#` that starts a comment (at a word's start).
    comment: Option<usize>,
}

/// Quotes, escapes and comments as bash reads them (`'…'`, `"…"` with `\` escapes, `$'…'`,
/// `\` outside quotes, `#` at the start of a word). Command substitutions nesting quotes inside
/// double quotes are beyond it; the docs do not need them.
fn scan(text: &str) -> Scan {
    #[derive(PartialEq)]
    enum Q {
        None,
        Single,
        AnsiC,
        Double,
    }
    let mut q = Q::None;
    let mut comment = None;
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if comment.is_some() {
            if c == '\n' {
                comment = None;
            }
            prev = Some(c);
            continue;
        }
        match q {
            Q::None => match c {
                '\\' => {
                    if chars.next().is_none() {
                        return Scan { open_quote: false, continues: true, comment: None };
                    }
                    prev = Some('x');
                    continue;
                }
                '\'' if prev == Some('$') => q = Q::AnsiC,
                '\'' => q = Q::Single,
                '"' => q = Q::Double,
                '#' if prev.is_none_or(|p| p.is_whitespace() || ";|&()".contains(p)) => comment = Some(i),
                _ => {}
            },
            Q::Single if c == '\'' => q = Q::None,
            Q::AnsiC | Q::Double if c == '\\' => {
                chars.next();
            }
            Q::AnsiC if c == '\'' => q = Q::None,
            Q::Double if c == '"' => q = Q::None,
            _ => {}
        }
        prev = Some(c);
    }
    Scan { open_quote: q != Q::None, continues: false, comment }
}

/// `→ TEXT` and `(exit N)` from a command's comment (the text after `#`).
fn expectations(comment: &str) -> Result<(Option<String>, i32), String> {
    let exit = match comment.find("(exit") {
        None => 0,
        Some(at) => {
            let rest = &comment[at + "(exit".len()..];
            let digits = rest.trim_start().split(')').next().unwrap_or("");
            digits.trim().parse::<i32>().map_err(|_| format!("`(exit N)` wants a number: `{}`", &comment[at..]))?
        }
    };
    let stdout = match comment.find('→') {
        None => None,
        Some(at) => {
            let rest = &comment[at + '→'.len_utf8()..];
            let text = rest.split(" (exit").next().unwrap_or("").trim();
            if text.is_empty() {
                return Err("`→` without the text stdout must contain".into());
            }
            Some(text.to_owned())
        }
    };
    Ok((stdout, exit))
}

/// The logical commands of a command block (lines joined by `\` and open quotes).
fn commands(fence: &Fence, tty: Option<&str>, out: &mut Vec<Item>) {
    let mut current: Option<(usize, String)> = None;
    for (number, line) in &fence.body {
        let (start, mut text) = match current.take() {
            Some((start, mut text)) => {
                text.push('\n');
                text.push_str(line);
                (start, text)
            }
            None => {
                let trimmed = line.trim_start();
                if trimmed.is_empty() || trimmed.starts_with('#') {
                    continue;
                }
                let body = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
                (*number, body.to_owned())
            }
        };
        let scanned = scan(&text);
        if scanned.open_quote || scanned.continues {
            current = Some((start, text));
            continue;
        }
        if text.starts_with("export ") {
            out.push(Item::Export { line: start, text });
            continue;
        }
        let comment = scanned.comment.map(|at| &text[at + 1..]).unwrap_or("");
        match expectations(comment) {
            Ok((stdout_contains, exit)) => {
                // A trailing comment is for the reader and the harness; bash ignores it anyway.
                text.truncate(text.trim_end().len());
                out.push(Item::Command(Command {
                    line: start,
                    text,
                    stdout_contains,
                    exit,
                    tty: tty.map(str::to_owned),
                }))
            }
            Err(message) => out.push(Item::Problem { line: start, message }),
        }
    }
    if let Some((start, _)) = current {
        out.push(Item::Problem {
            line: start,
            message: "a command that never ends (a quote left open or a trailing `\\` at the end of the block)".into(),
        });
    }
}

/// A `file=NAME` name that stays inside the working directory.
fn file_name(name: &str) -> Result<String, String> {
    let path = std::path::Path::new(name);
    let inside = !name.is_empty()
        && path.is_relative()
        && path.components().all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    if inside { Ok(name.to_owned()) } else { Err(format!("`file={name}` must be a relative path without `..`")) }
}

/// Everything the test does with one Markdown file, in document order.
pub fn items(markdown: &str) -> Vec<Item> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, Directive)> = None;
    for segment in segments(markdown) {
        let fence = match segment {
            Segment::Text(number, line) => {
                if let Some((at, d)) = pending.take()
                    && d != Directive::Broken
                {
                    out.push(Item::Problem {
                        line: at,
                        message: "a doctest directive must be the line directly before a code block's opening fence"
                            .into(),
                    });
                }
                match directive(&line) {
                    None => {}
                    Some(Ok(d)) => pending = Some((number, d)),
                    Some(Err(message)) => {
                        out.push(Item::Problem { line: number, message });
                        pending = Some((number, Directive::Broken));
                    }
                }
                continue;
            }
            Segment::Block(fence) => fence,
        };
        let directive = pending.take().map(|(_, d)| d);
        if !fence.closed {
            out.push(Item::Problem { line: fence.line, message: "a code block that is never closed".into() });
        }
        let mut words = fence.info.split_whitespace();
        let Some(language) = words.next() else {
            out.push(Item::Problem { line: fence.line, message: "a code block without a language".into() });
            continue;
        };
        let file = words.find_map(|w| w.strip_prefix("file="));
        let runs = COMMAND_LANGUAGES.contains(&language);
        match directive {
            Some(Directive::Broken) => continue,
            Some(Directive::Skip(reason)) => {
                if runs || file.is_some() {
                    out.push(Item::Skipped { line: fence.line, language: language.to_owned(), reason });
                }
                continue;
            }
            Some(Directive::Tty(_)) if file.is_some() || !runs => {
                out.push(Item::Problem {
                    line: fence.line,
                    message: format!("`doctest: tty` on a `{language}` block, which is not run"),
                });
                continue;
            }
            _ => {}
        }
        if let Some(name) = file {
            match file_name(name) {
                Ok(name) => {
                    let mut contents: String =
                        fence.body.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
                    contents.push('\n');
                    out.push(Item::File { line: fence.line, name, contents });
                }
                Err(message) => out.push(Item::Problem { line: fence.line, message }),
            }
        } else if runs {
            let tty = match &directive {
                Some(Directive::Tty(input)) => Some(input.as_str()),
                _ => None,
            };
            commands(&fence, tty, &mut out);
        }
    }
    if let Some((at, d)) = pending
        && d != Directive::Broken
    {
        out.push(Item::Problem {
            line: at,
            message: "a doctest directive must be the line directly before a code block's opening fence".into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(line: usize, text: &str, stdout: Option<&str>, exit: i32) -> Item {
        Item::Command(Command { line, text: text.into(), stdout_contains: stdout.map(Into::into), exit, tty: None })
    }

    #[test]
    fn continuations_quotes_prompts_and_comments() {
        let doc = "```sh\n# a comment\n$ forgeloop a \\\n  --b c   # → OK\n\nforgeloop x --brief \"Goal: a.\nit's: b\" # → X (exit 2)\necho '#not a comment' && echo a#b\n```\n";
        assert_eq!(
            items(doc),
            vec![
                cmd(3, "forgeloop a \\\n  --b c   # → OK", Some("OK"), 0),
                cmd(6, "forgeloop x --brief \"Goal: a.\nit's: b\" # → X (exit 2)", Some("X"), 2),
                cmd(8, "echo '#not a comment' && echo a#b", None, 0),
            ]
        );
    }

    #[test]
    fn a_comment_is_prose_unless_it_has_an_arrow_or_an_exit_code() {
        let doc =
            "```bash\nforgeloop doctor   # checks git, it's fine\nprintf 'x' | forgeloop redact  # → REDACTED\n```\n";
        let found = items(doc);
        assert_eq!(found[0], cmd(2, "forgeloop doctor   # checks git, it's fine", None, 0));
        assert_eq!(found[1], cmd(3, "printf 'x' | forgeloop redact  # → REDACTED", Some("REDACTED"), 0));
    }

    #[test]
    fn exports_are_reported_not_run() {
        let doc = "```sh\nexport GH_TOKEN=…   # or GITHUB_TOKEN\nforgeloop doctor\n```\n";
        let found = items(doc);
        assert_eq!(found[0], Item::Export { line: 2, text: "export GH_TOKEN=…   # or GITHUB_TOKEN".into() });
        assert!(matches!(found[1], Item::Command(_)));
    }

    #[test]
    fn directives_skip_and_tty() {
        let doc = "<!-- doctest: skip needs GitHub -->\n```sh\nforgeloop doctor\n```\n<!-- doctest: tty y\\n -->\n```console\nforgeloop confirm --state s\n```\n";
        let found = items(doc);
        assert_eq!(found[0], Item::Skipped { line: 2, language: "sh".into(), reason: "needs GitHub".into() });
        let Item::Command(c) = &found[1] else { panic!("{found:?}") };
        assert_eq!((c.line, c.tty.as_deref()), (7, Some("y\n")));
    }

    #[test]
    fn broken_rules_are_problems() {
        let doc = "```\nx\n```\n<!-- doctest: skip -->\n```sh\nls\n```\n<!-- doctest: skip far away -->\n\n```sh\nls\n```\n```sh\necho \"open\n```\n```json file=../x\n{}\n```\n<!-- doctest: tty q -->\n```json\n{}\n```\n```sh\nls # → \n```\n";
        let problems: Vec<(usize, String)> = items(doc)
            .into_iter()
            .filter_map(|i| match i {
                Item::Problem { line, message } => Some((line, message)),
                _ => None,
            })
            .collect();
        let lines: Vec<usize> = problems.iter().map(|p| p.0).collect();
        assert_eq!(lines, vec![1, 4, 8, 14, 16, 20, 24], "{problems:#?}");
        assert_eq!(problems[0].1, "a code block without a language");
        assert!(problems[1].1.contains("without a reason"));
    }

    #[test]
    fn file_blocks_are_written_whatever_their_language() {
        let doc = "```json file=commands.json\n[[\"python3\", \"-m\", \"unittest\", \"-v\"]]\n```\n```text file=sub/reply.txt\nPR_URL: x\n```\n";
        assert_eq!(
            items(doc),
            vec![
                Item::File {
                    line: 1,
                    name: "commands.json".into(),
                    contents: "[[\"python3\", \"-m\", \"unittest\", \"-v\"]]\n".into()
                },
                Item::File { line: 4, name: "sub/reply.txt".into(), contents: "PR_URL: x\n".into() },
            ]
        );
    }

    #[test]
    fn other_languages_are_not_run() {
        assert!(items("```text\nforgeloop doctor\n```\n```toml\na = 1\n```\n").is_empty());
    }
}
