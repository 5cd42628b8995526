//! The line patterns the languages share: a needle in code (never in a string or comment),
//! alone, assigned to (`unittest.TestCase.assertEqual = …`) or changed in place
//! (`sys.meta_path.insert(…)`), and a rule that says what a match means.

use super::lexer::{Lexed, ident_byte};
use super::{Category, Finding};

/// What must follow a needle for it to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Nothing: the needle alone.
    Any,
    /// An assignment to it, or to something under it (`x.y.z = `, `x[k] = `, `x += `).
    Assigned,
    /// An assignment, or a call that changes a list in place (`.insert(`, `.append(`, …).
    Mutated,
}

/// One row of a language's line rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineRule {
    pub(crate) category: Category,
    pub(crate) needle: &'static str,
    /// A `.` may come right before the needle (`inspect.currentframe(` for `currentframe(`).
    pub(crate) dot: bool,
    pub(crate) after: After,
    /// The words after `path:line`.
    pub(crate) says: &'static str,
}

impl LineRule {
    /// Where the rule matches on a line (the needle's offsets).
    pub(crate) fn matches(&self, lexed: &Lexed) -> Vec<usize> {
        lexed
            .find(self.needle, self.dot)
            .into_iter()
            .filter(|&at| {
                let rest = lexed.text.get(at + self.needle.len()..).unwrap_or("");
                match self.after {
                    After::Any => true,
                    After::Assigned => assigned(rest),
                    After::Mutated => mutated(rest),
                }
            })
            .collect()
    }
}

/// Applies `rules` to every scanned line for which `applies` says yes.
pub(crate) fn apply(
    view: &super::view::FileView,
    rules: &[LineRule],
    applies: impl Fn(usize, &LineRule) -> bool,
    out: &mut Vec<Finding>,
) {
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() {
            continue;
        }
        for rule in rules {
            let Some(&at) = rule.matches(&line.lexed).first() else { continue };
            if applies(i, rule) {
                let says = rule.says.replace("{target}", &target(&line.lexed, at, rule.needle));
                out.push(Finding { anchored: false, category: rule.category, at: i, says });
            }
        }
    }
}

/// What a match at `at` names: the needle and the rest of its dotted or subscripted target
/// (`unittest.TestCase.assertEqual`), shortened.
fn target(lexed: &Lexed, at: usize, needle: &str) -> String {
    let rest = lexed.text.get(at + needle.len()..).unwrap_or("");
    let consumed = rest.len() - skip_target(rest).len();
    let whole = lexed.text.get(at..at + needle.len() + consumed).unwrap_or(needle).trim();
    if whole.chars().count() > 60 {
        let cut: String = whole.chars().take(59).collect();
        format!("{cut}…")
    } else {
        whole.to_owned()
    }
}

/// The text after a name: the rest of a dotted or subscripted target, then an assignment.
pub(crate) fn assigned(rest: &str) -> bool {
    let rest = skip_target(rest).trim_start();
    (rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>"))
        || ["+=", "-=", "|=", "&=", "*=", "||=", "&&=", "??="].iter().any(|op| rest.starts_with(op))
}

/// An assignment, or an in-place change of a list (`.insert(`, `.append(`, `.push(`, …).
pub(crate) fn mutated(rest: &str) -> bool {
    const CALLS: &[&str] =
        &[".insert(", ".append(", ".extend(", ".remove(", ".pop(", ".clear(", ".push(", ".unshift(", ".splice("];
    CALLS.iter().any(|c| rest.trim_start().starts_with(c)) || assigned(rest)
}

/// `rest` past the rest of an assignment target: identifier characters, dots and subscripts.
fn skip_target(rest: &str) -> &str {
    let bytes = rest.as_bytes();
    let mut k = 0;
    while k < bytes.len() {
        let b = bytes[k];
        if ident_byte(b) || b == b'.' {
            k += 1;
        } else if b == b'[' {
            let mut depth = 0;
            while k < bytes.len() {
                match bytes[k] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            k += 1;
        } else {
            break;
        }
    }
    rest.get(k.min(rest.len())..).unwrap_or("")
}

/// The arguments of the call whose name ends at `at` (the offset of its `(`), as code.
pub(crate) fn call_arguments(code: &str, open: usize) -> Option<&str> {
    let bytes = code.as_bytes();
    if bytes.get(open) != Some(&b'(') {
        return None;
    }
    let mut depth = 0i32;
    for (k, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
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

/// An exit status that is a failure (`1`, `2`, `-1`): an exit with it ends a test run in
/// failure, which is no shortcut. Anything else (`0`, nothing, a variable) could be success.
pub(crate) fn failure_status(arguments: &str) -> bool {
    arguments.trim().parse::<i64>().is_ok_and(|n| n != 0)
}

/// An exit status that is plainly success: none, or `0`.
pub(crate) fn success_status(arguments: &str) -> bool {
    matches!(arguments.trim(), "" | "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_are_told_from_comparisons_and_reads() {
        assert!(assigned(".TestCase.assertEqual = f"));
        assert!(assigned("['unittest'] = fake"));
        assert!(assigned(" += [x]"));
        assert!(!assigned(".TestCase.assertEqual == f"));
        assert!(!assigned(".TestCase.assertEqual(a, b)"));
        assert!(!assigned(" => 1"));
        assert!(mutated(".insert(0, Finder())"));
        assert!(!mutated("[0]"));
    }

    #[test]
    fn exit_statuses() {
        assert!(failure_status("1") && failure_status(" 2 "));
        assert!(!failure_status("0") && !failure_status("") && !failure_status("code"));
        assert!(success_status(" 0 ") && success_status("") && !success_status("code"));
    }
}
