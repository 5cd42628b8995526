//! Commands the brief's **Validation** names in backticks, proposed as argv arrays for the
//! first run's commands file (design §5.3). Each span is split into words the way a POSIX shell
//! splits them (quotes and backslashes), and nothing is ever run through a shell: a span the
//! shell would do more with — pipes, `&&`, `;`, redirections, expansions, globs, a leading
//! `VAR=value` — is not proposed but listed with the reason, never split wrongly.

use serde::Serialize;

/// A backticked span that is not proposed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotProposed {
    /// The span as written.
    pub text: String,
    /// Why it is not proposed (a pipe, a redirection, …).
    pub reason: String,
}

/// What `next` proposes for the commands file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    /// Install commands (`npm ci`, `pip install -r …`): they belong in `"setup"`, which may
    /// reach the person's allowlist, while the tests run without network.
    pub setup: Vec<Vec<String>>,
    /// The test commands, for `"commands"`.
    pub commands: Vec<Vec<String>>,
    /// The spans left out, each with why.
    pub not_proposed: Vec<NotProposed>,
}

/// Every backticked span of `validation`, in order: proposed when it splits into argv words,
/// else listed with its reason. Empty spans and repeats are skipped.
pub fn propose(validation: &str) -> Proposal {
    let mut proposal = Proposal::default();
    for span in code_spans(validation) {
        match split_words(&span) {
            Ok(words) if words.is_empty() => {}
            Ok(words) => {
                let list =
                    if super::lockfiles::is_install(&words) { &mut proposal.setup } else { &mut proposal.commands };
                if !list.contains(&words) {
                    list.push(words);
                }
            }
            Err(reason) => {
                if !proposal.not_proposed.iter().any(|n| n.text == span) {
                    proposal.not_proposed.push(NotProposed { text: span, reason });
                }
            }
        }
    }
    proposal
}

/// Markdown inline code spans: a run of N backticks up to the next run of exactly N. One space
/// on each side is stripped when both are there (so `` `` a`b `` `` is "a`b").
fn code_spans(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let open = run_at(i);
        let start = i + open;
        let mut j = start;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let run = run_at(j);
                if run == open {
                    close = Some(j);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        let Some(end) = close else {
            // An unmatched run is literal text, not a span.
            i = start;
            continue;
        };
        let inner: String = chars[start..end].iter().collect();
        let inner = inner.replace(['\r', '\n'], " ");
        let inner = match inner.strip_prefix(' ').and_then(|s| s.strip_suffix(' ')) {
            Some(stripped) if !stripped.trim().is_empty() => stripped.to_owned(),
            _ => inner,
        };
        spans.push(inner);
        i = end + open;
    }
    spans
}

/// Splits `text` into words as `sh` would — whitespace separates, `'…'` is literal, `"…"` is
/// literal but for `\"`, `\\`, `\$`, `` \` ``, a backslash outside quotes escapes the next
/// character — or says why a shell would do more than split it.
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => word.push(inner),
                        None => return Err("it has an unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => word.push(escaped),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("it has an unterminated \" quote".into()),
                        },
                        Some(expansion @ ('$' | '`')) => {
                            return Err(format!("the shell would expand {expansion} inside its \"…\" quote"));
                        }
                        Some(inner) => word.push(inner),
                        None => return Err("it has an unterminated \" quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(escaped) => {
                    in_word = true;
                    word.push(escaped);
                }
                None => return Err("it ends with a lone backslash".into()),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => {
                return Err(format!(
                    "it uses the shell operator {c}: a commands file runs one program per entry, never a shell"
                ));
            }
            '$' | '`' => return Err(format!("the shell would expand {c} (a variable or a command substitution)")),
            '*' | '?' | '[' | '{' | '}' => {
                return Err(format!(
                    "the shell would expand the pattern character {c}; quote it if it is meant literally"
                ));
            }
            '~' if !in_word => return Err("the shell would expand the leading ~".into()),
            '#' if !in_word => return Err("the shell would read # as the start of a comment".into()),
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if let Some(first) = words.first()
        && let Some((name, _)) = first.split_once('=')
        && !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !text.trim_start().starts_with(['\'', '"'])
    {
        return Err(format!(
            "it starts with the variable assignment {name}=…; put the variable in the commands file's \"env\" instead"
        ));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split_words(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn words_split_like_a_shell_splits_them() {
        assert_eq!(words("cargo test --workspace"), ["cargo", "test", "--workspace"]);
        assert_eq!(words("  npm   run\ttest "), ["npm", "run", "test"]);
        assert_eq!(words("pytest -k 'not slow and not net'"), ["pytest", "-k", "not slow and not net"]);
        assert_eq!(words(r#"go test -run "TestA|TestB" ./..."#), ["go", "test", "-run", "TestA|TestB", "./..."]);
        assert_eq!(words(r#"echo "a \"quoted\" word" 'it''s'"#), ["echo", "a \"quoted\" word", "its"]);
        assert_eq!(words(r"grep -r a\ b src"), ["grep", "-r", "a b", "src"]);
        assert_eq!(words(r#"printf "%s\n" x"#), ["printf", "%s\\n", "x"]);
        assert_eq!(words("sh -c 'make && make check'"), ["sh", "-c", "make && make check"]);
        assert_eq!(
            words("python3 -m pytest tests/test_x.py::test_y"),
            ["python3", "-m", "pytest", "tests/test_x.py::test_y"]
        );
        assert_eq!(words("cmake -DX=1 .."), ["cmake", "-DX=1", ".."]);
        assert_eq!(words("'' x"), ["", "x"]);
        assert_eq!(words("   "), Vec::<String>::new());
    }

    #[test]
    fn what_a_shell_would_do_more_with_is_refused_not_split() {
        for (text, needle) in [
            ("npm test | tee out.txt", "operator |"),
            ("make && make check", "operator &"),
            ("cargo build; cargo test", "operator ;"),
            ("pytest > log.txt", "operator >"),
            ("sort < in", "operator <"),
            ("(cd web && npm test)", "operator ("),
            ("echo $HOME", "expand $"),
            ("echo \"$(id)\"", "expand $"),
            ("ls *.rs", "pattern character *"),
            ("cat ~/.ssh/id_rsa", "leading ~"),
            ("# comment", "comment"),
            ("CI=1 npm test", "assignment CI="),
            ("echo 'unterminated", "unterminated '"),
            ("echo \"unterminated", "unterminated \""),
            ("trailing \\", "lone backslash"),
        ] {
            let err = split_words(text).expect_err(text);
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        // Quoted, they are plain words.
        assert_eq!(words("echo '$HOME' \"a|b\" '*.rs' '~'"), ["echo", "$HOME", "a|b", "*.rs", "~"]);
        assert_eq!(words("'CI=1' npm"), ["CI=1", "npm"]);
    }

    #[test]
    fn spans_follow_markdown() {
        assert_eq!(
            code_spans("run `cargo test` and `` echo `x` `` then ```a``` `open"),
            ["cargo test", "echo `x`", "a"]
        );
        assert_eq!(code_spans("no spans here"), Vec::<String>::new());
        assert_eq!(code_spans("`a\nb`"), ["a b"]);
    }

    #[test]
    fn a_validation_field_becomes_a_proposal() {
        let proposal = propose(
            "Run `cargo test --workspace` and `npm run lint | tee lint.log`; `cargo test --workspace` again, then `bash -c 'x'`.",
        );
        assert_eq!(proposal.commands, [vec!["cargo", "test", "--workspace"], vec!["bash", "-c", "x"]]);
        assert_eq!(proposal.not_proposed.len(), 1);
        assert_eq!(proposal.not_proposed[0].text, "npm run lint | tee lint.log");
        assert!(proposal.not_proposed[0].reason.contains('|'));
        assert_eq!(propose("run the frontend test suite"), Proposal::default());
    }

    #[test]
    fn install_commands_are_proposed_for_setup() {
        let proposal = propose("`npm ci`, then `npm test` and `python3 -m pip install -r requirements.txt`");
        assert_eq!(
            proposal.setup,
            [vec!["npm", "ci"], vec!["python3", "-m", "pip", "install", "-r", "requirements.txt"]]
        );
        assert_eq!(proposal.commands, [vec!["npm", "test"]]);
    }
}
