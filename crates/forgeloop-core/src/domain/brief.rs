//! The five-field delegation brief (design §4).
//!
//! Labels are recognised at the start of a line (after an optional list marker or bold
//! markup) and also inline after a sentence end, because the reference README writes the
//! whole brief on one line: `Goal: … . Success: … . Scope: …`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One of the brief's five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// What the change is for.
    Goal,
    /// How to tell it worked.
    Success,
    /// What is in scope, and what is not (`Scope / non-goals`).
    Scope,
    /// What must not be broken or used.
    Constraints,
    /// How the change is checked (the tests to run).
    Validation,
}

impl Field {
    /// The five, in the order a brief lists them.
    pub const ALL: [Field; 5] = [Field::Goal, Field::Success, Field::Scope, Field::Constraints, Field::Validation];

    /// The label used when the brief is written out.
    pub fn label(self) -> &'static str {
        match self {
            Field::Goal => "Goal",
            Field::Success => "Success",
            Field::Scope => "Scope / non-goals",
            Field::Constraints => "Constraints",
            Field::Validation => "Validation",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Accepted spellings, longest first so `scope / non-goals` wins over `scope`.
const LABELS: &[(&str, Field)] = &[
    ("scope and non-goals", Field::Scope),
    ("scope / non-goals", Field::Scope),
    ("scope/non-goals", Field::Scope),
    ("success criteria", Field::Success),
    ("constraints", Field::Constraints),
    ("constraint", Field::Constraints),
    ("validation", Field::Validation),
    ("success", Field::Success),
    ("scope", Field::Scope),
    ("goal", Field::Goal),
];

/// A brief's five fields, parsed (design §4); none is empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Brief {
    /// `Goal:`.
    pub goal: String,
    /// `Success:`.
    pub success: String,
    /// `Scope / non-goals:` (or `Scope:`).
    pub scope: String,
    /// `Constraints:`.
    pub constraints: String,
    /// `Validation:`.
    pub validation: String,
}

/// Why a brief was refused: the cycle is `BLOCKED_DELEGATION_UNCONFIRMED`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BriefError {
    /// The brief is blank.
    #[error("the intent brief is empty; it must state Goal, Success, Scope / non-goals, Constraints and Validation")]
    Empty,
    /// These fields are absent or empty.
    #[error("the intent brief is missing {}: write each as a line such as `Goal: …`", join_fields(.0))]
    Missing(Vec<Field>),
    /// This field is given twice.
    #[error("the intent brief gives {0} more than once")]
    Duplicate(Field),
}

fn join_fields(fields: &[Field]) -> String {
    fields.iter().map(|f| f.label()).collect::<Vec<_>>().join(", ")
}

impl Brief {
    /// The question for WebGPT forgeloop proposes from the brief when none was given: what to
    /// do (the Goal) and when it is done (Success), as a request for a pull request. Only ever
    /// used with a person's confirmation in the control room (`--await-confirmation`), who may
    /// edit it there.
    pub fn proposed_question(&self) -> String {
        let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        let goal = one_line(&self.goal);
        let goal = goal.trim_end_matches('.');
        let success = one_line(&self.success);
        let success = success.trim_end_matches('.');
        format!("Implement this and open a pull request with it: {goal}. It is done when {success}.")
    }

    /// The text of `field`.
    pub fn get(&self, field: Field) -> &str {
        match field {
            Field::Goal => &self.goal,
            Field::Success => &self.success,
            Field::Scope => &self.scope,
            Field::Constraints => &self.constraints,
            Field::Validation => &self.validation,
        }
    }

    fn slot(&mut self, field: Field) -> &mut String {
        match field {
            Field::Goal => &mut self.goal,
            Field::Success => &mut self.success,
            Field::Scope => &mut self.scope,
            Field::Constraints => &mut self.constraints,
            Field::Validation => &mut self.validation,
        }
    }

    /// Parses the brief text; every field must be present and non-blank.
    pub fn parse(text: &str) -> Result<Brief, BriefError> {
        if text.trim().is_empty() {
            return Err(BriefError::Empty);
        }
        let marks = find_labels(text);
        let mut brief = Brief {
            goal: String::new(),
            success: String::new(),
            scope: String::new(),
            constraints: String::new(),
            validation: String::new(),
        };
        let mut seen = Vec::new();
        for (i, mark) in marks.iter().enumerate() {
            if seen.contains(&mark.field) {
                return Err(BriefError::Duplicate(mark.field));
            }
            seen.push(mark.field);
            let end = marks.get(i + 1).map_or(text.len(), |next| next.label_start);
            *brief.slot(mark.field) = tidy(&text[mark.content_start..end]);
        }
        let missing: Vec<Field> = Field::ALL.into_iter().filter(|f| brief.get(*f).is_empty()).collect();
        if missing.is_empty() { Ok(brief) } else { Err(BriefError::Missing(missing)) }
    }

    /// The canonical text form, one labelled field per line (continuations indented).
    pub fn render(&self) -> String {
        Field::ALL
            .iter()
            .map(|f| format!("{}: {}", f.label(), self.get(*f).replace('\n', "\n  ")))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

struct Mark {
    field: Field,
    label_start: usize,
    content_start: usize,
}

/// Trims the field and the indentation of its continuation lines.
fn tidy(raw: &str) -> String {
    raw.lines().map(str::trim).collect::<Vec<_>>().join("\n").trim().to_owned()
}

fn find_labels(text: &str) -> Vec<Mark> {
    let mut marks = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut at_line_start = true;
    while i < bytes.len() {
        // A line-start label owns its list marker, so the previous field does not end in "-".
        let candidate = if at_line_start {
            Some((i, skip_list_marker(text, i)))
        } else if i > 0 && matches!(bytes[i - 1], b' ' | b'\t') && sentence_ended_before(text, i) {
            Some((i, i))
        } else {
            None
        };
        if let Some((label_start, pos)) = candidate
            && let Some((field, content_start)) = match_label(text, pos)
        {
            marks.push(Mark { field, label_start, content_start });
            i = content_start;
            at_line_start = false;
            continue;
        }
        at_line_start = bytes[i] == b'\n';
        i += 1;
    }
    marks
}

/// True when the text before `i` (ignoring spaces) ends a sentence or clause.
fn sentence_ended_before(text: &str, i: usize) -> bool {
    matches!(text[..i].trim_end().chars().last(), Some('.' | ';' | '!' | '?'))
}

/// Indentation is any whitespace but a newline: the same set `tidy` trims from a line, so a
/// line that `tidy` turns into `Goal: …` is a label here too (render/parse round trip).
fn skip_indent(text: &str, i: usize) -> usize {
    i + text[i..].find(|c: char| c == '\n' || !c.is_whitespace()).unwrap_or(text.len() - i)
}

fn skip_list_marker(text: &str, mut i: usize) -> usize {
    i = skip_indent(text, i);
    let rest = &text[i..];
    let marker_len = if rest.starts_with("- ") || rest.starts_with("* ") {
        2
    } else if rest.starts_with("• ") {
        "• ".len()
    } else {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(". ") { digits + 2 } else { 0 }
    };
    skip_indent(text, i + marker_len)
}

fn match_label(text: &str, pos: usize) -> Option<(Field, usize)> {
    let mut rest = &text[pos..];
    rest = rest.strip_prefix("**").or_else(|| rest.strip_prefix("__")).unwrap_or(rest);
    for (label, field) in LABELS {
        let Some(head) = rest.get(..label.len()) else { continue };
        if !head.eq_ignore_ascii_case(label) {
            continue;
        }
        let mut after = &rest[label.len()..];
        after = after.strip_prefix("**").unwrap_or(after);
        after = after.trim_start_matches([' ', '\t']);
        let Some(after_colon) = after.strip_prefix(':') else { continue };
        let after_colon = after_colon.strip_prefix("**").unwrap_or(after_colon);
        return Some((*field, text.len() - after_colon.len()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proposed_question_asks_for_the_goal_as_a_pull_request_done_when_success_holds() {
        let brief = Brief::parse(
            "Goal: add dark mode.\nSuccess: preferences persist\n  across reloads.\nScope: the web app.\nConstraints: none.\nValidation: npm test.",
        )
        .unwrap();
        assert_eq!(
            brief.proposed_question(),
            "Implement this and open a pull request with it: add dark mode. It is done when preferences persist across reloads."
        );
    }

    pub(super) const REFERENCE_BRIEF: &str = "Goal: add dark mode.\nSuccess: preferences persist across reloads.\nScope: existing web app only.\nConstraints: keep accessibility contrast.\nValidation: run the frontend test suite.";

    #[test]
    fn parses_the_reference_test_brief() {
        let brief = Brief::parse(REFERENCE_BRIEF).unwrap();
        assert_eq!(brief.goal, "add dark mode.");
        assert_eq!(brief.success, "preferences persist across reloads.");
        assert_eq!(brief.scope, "existing web app only.");
        assert_eq!(brief.constraints, "keep accessibility contrast.");
        assert_eq!(brief.validation, "run the frontend test suite.");
    }

    #[test]
    fn parses_the_reference_readme_one_line_brief() {
        let text = "Goal: document PR conventions. Success: contributors can follow the contribution flow. Scope: CONTRIBUTING.md only. Constraints: preserve existing repository practices. Validation: review the rendered Markdown.";
        let brief = Brief::parse(text).unwrap();
        assert_eq!(brief.goal, "document PR conventions.");
        assert_eq!(brief.scope, "CONTRIBUTING.md only.");
        assert_eq!(brief.validation, "review the rendered Markdown.");
    }

    #[test]
    fn labels_are_case_insensitive_and_fields_span_lines() {
        let text = "GOAL: ship it\n  and document it\n- success criteria: tests pass\n* **Scope / non-goals:** only src/\n1. constraints: none\nvalidation : cargo test";
        let brief = Brief::parse(text).unwrap();
        assert_eq!(brief.goal, "ship it\nand document it");
        assert_eq!(brief.success, "tests pass");
        assert_eq!(brief.scope, "only src/");
        assert_eq!(brief.constraints, "none");
        assert_eq!(brief.validation, "cargo test");
    }

    #[test]
    fn a_label_word_inside_a_sentence_is_not_a_label() {
        let text = "Goal: raise the success: rate of builds\nSuccess: ok\nScope: x\nConstraints: y\nValidation: z";
        let brief = Brief::parse(text).unwrap();
        assert_eq!(brief.goal, "raise the success: rate of builds");
    }

    #[test]
    fn missing_fields_are_named() {
        let err = Brief::parse("Goal: a\nScope: b").unwrap_err();
        assert_eq!(err, BriefError::Missing(vec![Field::Success, Field::Constraints, Field::Validation]));
        let message = err.to_string();
        assert!(message.contains("Success") && message.contains("Validation"), "{message}");
        assert_eq!(Brief::parse("   \n ").unwrap_err(), BriefError::Empty);
        let blank = "Goal:\nSuccess: a\nScope: b\nConstraints: c\nValidation: d";
        assert_eq!(Brief::parse(blank).unwrap_err(), BriefError::Missing(vec![Field::Goal]));
        assert!(matches!(Brief::parse("no labels at all"), Err(BriefError::Missing(f)) if f.len() == 5));
    }

    #[test]
    fn duplicate_fields_are_refused() {
        let text = "Goal: a\nGoal: b\nSuccess: a\nScope: b\nConstraints: c\nValidation: d";
        assert_eq!(Brief::parse(text).unwrap_err(), BriefError::Duplicate(Field::Goal));
    }

    #[test]
    fn render_parses_back_to_the_same_brief() {
        let brief = Brief::parse("Goal: a\n b\nSuccess: c\nScope: d\nConstraints: e\nValidation: f").unwrap();
        assert_eq!(Brief::parse(&brief.render()).unwrap(), brief);
    }

    /// Found by the `brief_parse` fuzz target: `tidy` trimmed the vertical tab of a
    /// continuation line, which rendered as a second `Goal:` label.
    #[test]
    fn a_label_after_unusual_indentation_is_a_label_both_ways() {
        for indent in ["\u{b}", "\u{c}", "\u{a0}", " \u{2003}"] {
            let text = format!("Success: b\nScope: c\nConstraints: d\nValidation: .\n{indent}Goal:\nGoal: a");
            assert_eq!(Brief::parse(&text), Err(BriefError::Duplicate(Field::Goal)), "{indent:?}");
            let text = format!("Goal: a\n{indent}Success: b\nScope: c\nConstraints: d\nValidation: e");
            let brief = Brief::parse(&text).unwrap();
            assert_eq!(brief.get(Field::Success), "b");
            assert_eq!(Brief::parse(&brief.render()).unwrap(), brief);
        }
    }
}
