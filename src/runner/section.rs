//! The lines forgeloop writes around each command's output in the run log, so a reader sees
//! what ran and how it ended. The log is for humans; verdicts come from the returned results,
//! never from parsing these lines (a test could print a fake footer).

use std::time::Duration;

/// Before the first setup command (design §5.2.3): what follows installs what the tests need.
pub(super) const SETUP: &str = "# setup\n";
/// Before the first test command of a run that had setup commands.
pub(super) const TESTS: &str = "# tests\n";

/// `$ argv...`, quoted so it can be pasted into a POSIX shell.
pub(super) fn header(argv: &[String]) -> String {
    let words: Vec<String> = argv.iter().map(|arg| shell_word(arg)).collect();
    format!("$ {}\n", words.join(" "))
}

fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if plain {
        arg.to_owned()
    } else if arg.chars().any(char::is_control) {
        // Keeps the header on one line; readable, if not pasteable.
        format!("{arg:?}")
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

pub(super) fn exited(code: i32, elapsed: Duration) -> String {
    format!("[exit {code} after {:.2}s]\n", elapsed.as_secs_f64())
}

pub(super) fn signalled(signal: i32, elapsed: Duration) -> String {
    format!("[killed by signal {signal} after {:.2}s]\n", elapsed.as_secs_f64())
}

pub(super) fn timed_out(timeout_s: u64) -> String {
    format!("[timed out after {timeout_s}s: process group killed]\n")
}

pub(super) fn cancelled(elapsed: Duration) -> String {
    format!("[cancelled after {:.2}s: process group killed]\n", elapsed.as_secs_f64())
}

pub(super) fn status_unknown(elapsed: Duration) -> String {
    format!("[exit status unknown after {:.2}s]\n", elapsed.as_secs_f64())
}

pub(super) fn not_started(code: i32) -> String {
    format!("[not started: exit {code}]\n")
}

pub(super) fn not_run(argv: &[String]) -> String {
    format!("[not run] {}", header(argv))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn headers_quote_like_a_shell() {
        assert_eq!(header(&argv(&["cargo", "test", "--", "-q"])), "$ cargo test -- -q\n");
        assert_eq!(header(&argv(&["sh", "-c", "echo 'a'; x"])), "$ sh -c 'echo '\\''a'\\''; x'\n");
        assert_eq!(header(&argv(&["a", "", "two\nlines"])), "$ a '' \"two\\nlines\"\n");
    }

    #[test]
    fn footers() {
        assert_eq!(exited(1, Duration::from_millis(250)), "[exit 1 after 0.25s]\n");
        assert_eq!(timed_out(900), "[timed out after 900s: process group killed]\n");
        assert_eq!(signalled(9, Duration::from_secs(2)), "[killed by signal 9 after 2.00s]\n");
        assert_eq!(not_run(&argv(&["npm", "test"])), "[not run] $ npm test\n");
    }
}
