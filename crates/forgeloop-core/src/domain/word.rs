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
            /// A cycle's status.
            Cycle(Status),
            /// A test report's verdict.
            Test(TestStatus),
            /// `reply`'s classification of WebGPT's reply.
            Reply(ReplyClass),
            $($(#[$doc])* $variant,)*
        }

        impl Word {
            /// The words that are neither a cycle status nor a test verdict.
            const OWN: &'static [Word] = &[$(Word::$variant,)*];

            /// The word as printed.
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
    /// The action is not possible in the cycle's status.
    Refused => "REFUSED",
    /// `sent`: this message was already recorded as sent.
    AlreadySent => "ALREADY_SENT",
    /// `sent`: the outbox is empty (also the MCP handoff of a passing report).
    NothingToSend => "NOTHING_TO_SEND",
    /// `forge --request` on an existing state: it is never overwritten.
    StateExists => "STATE_EXISTS",
    /// The state file is malformed.
    InvalidState => "INVALID_STATE",
    /// The state file is missing.
    NoState => "NO_STATE",
    /// Another process is changing this cycle; nothing waited, nothing was lost.
    CycleBusy => "CYCLE_BUSY",
    /// Another live cycle uses the same state name, hence the same chat.
    TaskSpaceTaken => "TASK_SPACE_TAKEN",
    /// `log --verify`: the hash chain is intact.
    JournalOk => "JOURNAL_OK",
    /// `log --verify`: a line was edited, inserted or removed.
    JournalDamaged => "JOURNAL_DAMAGED",
    /// A human-only action asked for without a terminal.
    NotATerminal => "NOT_A_TERMINAL",
    /// The person answered no.
    Declined => "DECLINED",
    /// `wait` gave up.
    Timeout => "TIMEOUT",
    /// A test run could not complete (GitHub, fetch, the PR moved); retried next time.
    InfraFailure => "INFRA_FAILURE",
    /// No GitHub token from any source: a command that needs GitHub stopped before asking it,
    /// and recorded nothing.
    NoToken => "NO_TOKEN",
    /// A run failed because its network was missing or a host was refused (design §5.6): not
    /// an iteration, nothing for WebGPT; the person decides what the tests may reach.
    NeedsNetwork => "NEEDS_NETWORK",
    /// No sandbox can be built here, so nothing ran; the cycle does not move.
    SandboxUnavailable => "SANDBOX_UNAVAILABLE",
    /// The commands file's `read_paths`/`write_paths` names a path a test may never see.
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
    /// `project lookup`, `bind`, `attach`: the repository has a Project.
    ProjectLinked => "PROJECT_LINKED",
    /// `project lookup`: no record yet.
    ProjectNotLinked => "PROJECT_NOT_LINKED",
    /// `project unbind`: the record was removed.
    ProjectUnbound => "PROJECT_UNBOUND",
    /// `project list`.
    Projects => "PROJECTS",
    /// `project sources add`.
    SourceAdded => "SOURCE_ADDED",
    /// `project sources list`.
    Sources => "SOURCES",
    /// `project sources verify`: the browser showed the source.
    SourceVerified => "SOURCE_VERIFIED",
    /// `project sources verify`: the browser did not show it.
    SourceFailed => "SOURCE_FAILED",
    /// `project sources supersede`.
    SourceSuperseded => "SOURCE_SUPERSEDED",
    /// `serve`: its first line; it serves until stopped.
    Serving => "SERVING",
    /// `serve --revoke`: the grants named no longer work.
    Revoked => "REVOKED",
    /// `demo`: every cycle ended where expected.
    DemoOk => "DEMO_OK",
    /// `demo`: stopped before the end.
    DemoStopped => "DEMO_STOPPED",
    /// `demo`: a cycle ended somewhere else.
    DemoUnexpected => "DEMO_UNEXPECTED",
    /// `demo`: the demo could not run.
    DemoFailed => "DEMO_FAILED",
    /// A demo cycle whose state could not be read, in the demo's summary.
    Unreadable => "UNREADABLE",
    /// A demo cycle the demo was stopped before it started, in the demo's summary.
    NotStarted => "NOT_STARTED",
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
