//! A tab's search line (the Log and Diff tabs have one): what is typed, the query searched,
//! and where the search stands.

use crate::tui::keymap::Cmd;

/// Where a search of the Log or Diff tab stands (the search line says it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchState {
    /// No search, or an empty query.
    #[default]
    Idle,
    /// Asked; the reader scans (the spinner turns).
    Searching,
    /// The last search found a match.
    Found,
    /// The last search found none, anywhere.
    NotFound,
}

/// A tab's search: the line being typed and the query searched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchLine {
    /// The query searched (smart case); empty for none.
    pub query: String,
    /// The search line as typed, before `Submit`.
    pub input: String,
    /// The search line is open and takes the keys.
    pub editing: bool,
    /// Offset of the line with the current match.
    pub current: Option<u64>,
    /// Where the search stands.
    pub state: SearchState,
    /// The last match was found past the end (or start), from the other side.
    pub wrapped: bool,
}

impl SearchLine {
    /// Edits the search line; true when a non-empty query
    /// was just submitted and the search should start.
    pub fn edit(&mut self, cmd: Cmd) -> bool {
        match cmd {
            Cmd::Insert(c) => self.input.push(c),
            Cmd::Backspace => {
                self.input.pop();
            }
            Cmd::Cancel => {
                self.editing = false;
                self.input.clear();
            }
            Cmd::Submit => {
                self.editing = false;
                self.query = std::mem::take(&mut self.input);
                self.current = None;
                if self.query.is_empty() {
                    self.state = SearchState::Idle;
                } else {
                    return true;
                }
            }
            _ => {}
        }
        false
    }
}
