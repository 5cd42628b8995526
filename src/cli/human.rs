//! Human-only actions (design §6.4): refused unless a person is at a terminal, and each asks
//! for an explicit yes on that terminal before changing anything.

use std::io::{BufRead, IsTerminal};

use crate::error::{Error, Result};
use crate::output;
use crate::redact::Redactor;

/// Whether a person may be typing: stdin is a terminal, not an agent's pipe.
pub(super) fn at_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// Refuses when stdin is not a terminal (an agent's pipe).
pub(super) fn require_terminal(action: &'static str) -> Result<()> {
    if at_terminal() { Ok(()) } else { Err(Error::NotATerminal(action)) }
}

/// Shows `summary` on stderr (redacted, controls made visible: it quotes the cycle's data)
/// and asks `question`; only `y`/`yes` proceeds.
pub(super) fn ask(redactor: &Redactor, summary: &str, question: &str) -> Result<()> {
    output::note(redactor, summary);
    output::prompt(redactor, &format!("{question} [y/N] "));
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).map_err(|e| Error::io("cannot read the answer", e))?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(Error::Declined),
    }
}
