//! Every `status` word a command can print (design §5): the cycle statuses, the test
//! verdicts, and the words below. Every printer names its word through [`Word`], so a new word
//! is a new variant here, and `tests/statuses.rs` fails until the status table in docs/commands.md
//! has a row for it.

use std::fmt;

use serde::{Serialize, Serializer};

use super::reply::ReplyClass;
use super::report::TestStatus;
use super::status::Status;

macro_rules! words {
    ($($(#[$doc:meta])* $variant:ident => $text:literal,)*) => {
        /// A `status` word of a printed document. `Cycle` and `Test` carry the words of the
        /// state machine and of a test report; the others are spelled out here.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Word {
            Cycle(Status),
            Test(TestStatus),
            /// `reply`'s classification of WebGPT's reply.
            Reply(ReplyClass),
            $($(#[$doc])* $variant,)*
        }

        impl Word {
            /// The words that are neither a cycle status nor a test verdict.
            const OWN: &'static [Word] = &[$(Word::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    Word::Cycle(status) => status.as_str(),
                    Word::Test(verdict) => verdict.as_str(),
                    Word::Reply(class) => class.as_str(),
                    $(Word::$variant => $text,)*
                }
            }
        }
    };
}

words! {
    /// `doctor`: every check passed.
    Ok => "OK",
    /// `doctor`: at least one check is a problem (each says its fix).
    Problems => "PROBLEMS",
    /// `gc`: the unused mirrors were deleted (or listed, with `--dry-run`).
    GcDone => "GC_DONE",
    /// The generic failure: bad input, unreadable file, I/O, a GitHub error outside a cycle.
    Blocked => "BLOCKED",
    Refused => "REFUSED",
    AlreadySent => "ALREADY_SENT",
    NothingToSend => "NOTHING_TO_SEND",
    StateExists => "STATE_EXISTS",
    InvalidState => "INVALID_STATE",
    NoState => "NO_STATE",
    CycleBusy => "CYCLE_BUSY",
    TaskSpaceTaken => "TASK_SPACE_TAKEN",
    JournalOk => "JOURNAL_OK",
    JournalDamaged => "JOURNAL_DAMAGED",
    NotATerminal => "NOT_A_TERMINAL",
    Declined => "DECLINED",
    Timeout => "TIMEOUT",
    InfraFailure => "INFRA_FAILURE",
    /// No GitHub token from any source: a command that needs GitHub stopped before asking it,
    /// and recorded nothing.
    NoToken => "NO_TOKEN",
    /// A run failed because its network was missing or a host was refused (design §5.6): not
    /// an iteration, nothing for WebGPT; the person decides what the tests may reach.
    NeedsNetwork => "NEEDS_NETWORK",
    SandboxUnavailable => "SANDBOX_UNAVAILABLE",
    SandboxPathRefused => "SANDBOX_PATH_REFUSED",
    /// The MCP server: a run cancelled before it started.
    Cancelled => "CANCELLED",
    /// `forge --pr` on a head already tested with the same commands: nothing ran or counted.
    AlreadyTested => "ALREADY_TESTED",
    /// A run stopped before its verdict (design §6.6): not an iteration.
    RunCancelled => "RUN_CANCELLED",
    /// Nothing to cancel: no run in progress, or it ended first.
    NoRun => "NO_RUN",
    /// The process testing the cycle did not take or carry out the stop request.
    StopUnanswered => "STOP_UNANSWERED",
    /// The process testing the cycle died without recording its run.
    HolderGone => "HOLDER_GONE",
    ProjectLinked => "PROJECT_LINKED",
    ProjectNotLinked => "PROJECT_NOT_LINKED",
    ProjectUnbound => "PROJECT_UNBOUND",
    Projects => "PROJECTS",
    SourceAdded => "SOURCE_ADDED",
    Sources => "SOURCES",
    SourceVerified => "SOURCE_VERIFIED",
    SourceFailed => "SOURCE_FAILED",
    SourceSuperseded => "SOURCE_SUPERSEDED",
    DemoOk => "DEMO_OK",
    DemoStopped => "DEMO_STOPPED",
    DemoUnexpected => "DEMO_UNEXPECTED",
    DemoFailed => "DEMO_FAILED",
    /// A demo cycle whose state could not be read, in the demo's summary.
    Unreadable => "UNREADABLE",
}

impl Word {
    /// Every word a command can print, each once, in a stable order.
    pub fn all() -> Vec<Word> {
        let mut all: Vec<Word> = Status::ALL.into_iter().map(Word::Cycle).collect();
        all.extend(TestStatus::ALL.into_iter().map(Word::Test));
        all.extend(ReplyClass::ALL.into_iter().map(Word::Reply));
        all.extend_from_slice(Word::OWN);
        all
    }
}

impl From<Status> for Word {
    fn from(status: Status) -> Word {
        Word::Cycle(status)
    }
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Word {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Word {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_screaming_snake_case_and_said_once() {
        let all = Word::all();
        let mut texts: Vec<&str> = all.iter().map(|w| w.as_str()).collect();
        for text in &texts {
            assert!(text.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{text}");
        }
        let count = texts.len();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), count, "a word is listed twice");
        assert!(texts.contains(&"PROBLEMS") && texts.contains(&"READY_TO_MERGE") && texts.contains(&"TEST_FAILED"));
    }

    #[test]
    fn own_words_never_repeat_a_cycle_status_or_verdict() {
        for word in Word::OWN {
            assert!(word.as_str().parse::<Status>().is_err(), "{word} is a cycle status: use Word::Cycle");
            assert!(TestStatus::ALL.iter().all(|t| t.as_str() != word.as_str()), "{word}");
        }
    }
}
