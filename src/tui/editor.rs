//! Editing in `$EDITOR`: a brief (question and brief under two headings, validated on return)
//! and a person's message to WebGPT (a commented template, the words below it). Spawning the
//! editor is the runtime's job; these functions are pure.

use std::path::Path;
use std::process::Command;

use crate::domain::brief::Brief;

const QUESTION_HEADING: &str = "== WebGPT question ==";
const BRIEF_HEADING: &str = "== Intent brief ==";

/// The file the person edits.
pub fn compose(question: &str, brief: &str) -> String {
    format!(
        "# Edit the WebGPT question and the delegation brief, then save and quit.\n\
         # Lines starting with '#' are ignored. Keep both headings. The brief needs\n\
         # Goal:, Success:, Scope / non-goals:, Constraints: and Validation:.\n\
         # Nothing changes until you confirm in the control room.\n\
         {QUESTION_HEADING}\n{}\n\n{BRIEF_HEADING}\n{}\n",
        question.trim(),
        brief.trim()
    )
}

/// Why an edited brief is refused (the dialog shows it; nothing changes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// A heading the file needs was deleted.
    #[error("the edited file lost its {0:?} heading")]
    MissingHeading(&'static str),
    /// Nothing is left under the question's heading.
    #[error("the WebGPT question is empty")]
    EmptyQuestion,
    /// The brief is empty, lacks a field, or gives one twice.
    #[error("{0}")]
    Brief(#[from] crate::domain::brief::BriefError),
}

/// Splits and validates an edited file: (question, brief).
pub fn parse(text: &str) -> Result<(String, Brief), EditError> {
    let kept: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
    let find =
        |heading: &'static str| kept.iter().position(|l| l.trim() == heading).ok_or(EditError::MissingHeading(heading));
    let q = find(QUESTION_HEADING)?;
    let b = find(BRIEF_HEADING)?;
    let (question, brief) = if q < b {
        (kept[q + 1..b].join("\n"), kept[b + 1..].join("\n"))
    } else {
        (kept[q + 1..].join("\n"), kept[b + 1..q].join("\n"))
    };
    let question = question.trim().to_owned();
    if question.is_empty() {
        return Err(EditError::EmptyQuestion);
    }
    Ok((question, Brief::parse(&brief)?))
}

/// The file the person edits to write to WebGPT: a commented header saying where the words go
/// (`notes` add what is particular to this cycle, one line each), then room for them.
pub fn compose_message(cycle: &str, notes: &[String]) -> String {
    let one_line = |text: &str| text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let mut out = format!(
        "# Your message to WebGPT for {}: review feedback, a scope breach, a clarification.\n\
         # Write it below these lines, then save and quit. Lines starting with '#' are\n\
         # ignored; an empty file cancels.\n\
         # It goes to WebGPT in this cycle's chat: once you send it in the control room it\n\
         # waits in the outbox and the coordinator sends it next. It is journaled with your\n\
         # name (human) and is not an iteration: nothing is tested until WebGPT pushes.\n",
        one_line(cycle)
    );
    for note in notes {
        out.push_str(&format!("# {}\n", one_line(note)));
    }
    out.push('\n');
    out
}

/// The words of an edited message: every line not starting with '#', trimmed. Empty means
/// the person cancelled.
pub fn parse_message(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n").trim().to_owned()
}

/// A private (0600) file in the temp directory holding `text`, named after what is edited
/// (`brief`, `message`); the caller removes it.
pub fn temp_file(what: &str, text: &str) -> std::io::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let path = std::env::temp_dir().join(format!("forgeloop-{what}-{}-{nanos}.md", std::process::id()));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
    file.write_all(text.as_bytes())?;
    Ok(path)
}

/// `$VISUAL`, then `$EDITOR`, then `vi`, split on whitespace (`code -w` works).
pub fn editor_command(file: &Path) -> Command {
    let spec = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| std::env::var("EDITOR").ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let mut parts = spec.split_whitespace();
    let mut command = Command::new(parts.next().unwrap_or("vi"));
    command.args(parts).arg(file);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRIEF: &str = "Goal: a\nSuccess: b\nScope: c\nConstraints: d\nValidation: e";

    #[test]
    fn compose_parses_back() {
        let (question, brief) = parse(&compose("Do it?", BRIEF)).unwrap();
        assert_eq!(question, "Do it?");
        assert_eq!(brief.validation, "e");
    }

    #[test]
    fn edits_are_validated() {
        let text = compose("q", "Goal: a\nSuccess: b");
        assert!(matches!(parse(&text), Err(EditError::Brief(_))));
        assert_eq!(parse(&compose("  ", BRIEF)), Err(EditError::EmptyQuestion));
        assert_eq!(parse("Goal: a"), Err(EditError::MissingHeading(QUESTION_HEADING)));
    }

    #[test]
    fn a_message_is_the_lines_below_the_comments() {
        let template = compose_message("dark\nmode", &["The handoff waiting to be sent goes after your words.".into()]);
        assert!(template.lines().all(|l| l.is_empty() || l.starts_with('#')), "{template}");
        assert!(template.contains("for dark mode:"), "a control character cannot end a comment line");
        assert_eq!(parse_message(&template), "", "the template alone cancels");
        let written = format!("{template}Please revert the README change.\n\n  # kept: indented\n\n");
        assert_eq!(parse_message(&written), "Please revert the README change.\n\n  # kept: indented");
    }
}
