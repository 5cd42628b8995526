//! Who did something: the journal and the state name every actor, and human-only actions must
//! say `human`.

use serde::{Deserialize, Serialize};

/// Who performed an action; human-only actions must say `human`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    /// The coordinator agent driving the browser.
    Agent,
    /// A person at a terminal or in the control room.
    Human,
    /// forgeloop itself, as a consequence of another action.
    System,
}

impl Actor {
    /// The name written to state files and the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::Human => "human",
            Actor::System => "system",
        }
    }
}
