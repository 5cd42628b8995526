//! Every command line in the docs runs, against the real binary, and does what the docs say.
//!
//! Scanned: `README.md`, `CONTRIBUTING.md` (if present) and every `docs/*.md`. This comment is
//! the contract doc writers follow.
//!
//! # The convention
//!
//! 1. Every fenced code block (```` ``` ```` or `~~~`) has a language in its info string. A block
//!    without one fails: `file:line: a code block without a language`. Prose-only blocks say
//!    `text`.
//! 2. **Command blocks** are those whose language (the info string's first word) is `sh`,
//!    `bash`, `shell` or `console`. Blocks of any other language (`text`, `json`, `toml`,
//!    `yaml`, `rust`, …) are not run.
//! 3. A command block is run unless the line directly before its opening fence (no blank line
//!    between) is `<!-- doctest: skip REASON -->`, with a reason (`<!-- doctest: skip needs
//!    GitHub and a browser -->`). A skip without a reason fails; so does a directive that is not
//!    directly before a block. The test log lists every skipped block with its reason.
//! 4. `<!-- doctest: tty INPUT -->` before a command block runs each of its commands under a
//!    pseudo-terminal (120×36, `TERM=xterm-256color`) and types INPUT into it once the program
//!    had time to start (its output paused for 0.4 s; at the latest after 5 s), then again every
//!    second until the command exits (at most 30 s). INPUT takes the escapes `\n`, `\r`, `\t`,
//!    `\e` and `\\`: `<!-- doctest: tty y\n -->` for `forgeloop confirm`, `<!-- doctest: tty q
//!    -->` for `forgeloop tui`. It applies to every command of the block, so such commands get a
//!    block of their own. There stdout and stderr are one stream, the terminal's, and `→` is
//!    matched against it (escape sequences removed).
//! 5. **Logical commands.** A command continues on the next line while its line ends with `\`
//!    or a `'…'`/`"…"` string is open (a `--intent-brief "Goal: …` over five lines). Blank lines
//!    and lines starting with `#` between commands are comments. A leading `$ ` is stripped
//!    (every other line of a `console` block is a command too: no output lines). Lines starting
//!    with `export ` are not run (the harness provides the environment; `export GH_TOKEN=…` is
//!    for real users) and are listed in the log. No here-documents: write the file with a file
//!    block (rule 7).
//! 6. Each logical command runs as `bash -o pipefail -c COMMAND` (pipes work: `printf … |
//!    forgeloop redact`), with no stdin, in the file's working directory, and must exit 0. Each
//!    command is a bash of its own: `cd` and shell variables do not carry over, files do. Its
//!    comment (an unquoted `#` after a space, on its last line) may carry expectations:
//!    * `→ TEXT`: stdout contains TEXT (trimmed; up to the end of the comment or to ` (exit`):
//!      `forgeloop project lookup --repository acme/widget   # → PROJECT_NOT_LINKED`;
//!    * `(exit N)`: the exit code is N instead of 0:
//!      `forgeloop test --pr acme/widget#2 --commands-json commands.json   # → TEST_FAILED (exit 1)`.
//!
//!    Any other comment text is prose. A failure shows `file:line`, the command, what was wrong,
//!    and the start of stdout and stderr. `FORGELOOP_DOCTEST_VERBOSE=1` prints every command with
//!    its output, to write expectations from.
//! 7. **File blocks**: a block of any language whose info string holds `file=NAME`
//!    (```` ```json file=commands.json ````, ```` ```text file=reply.txt ````) is written to NAME
//!    in the working directory when the walk reaches it, before the commands after it run (it
//!    is never run itself). NAME is relative, without `..`. A skip directive skips writing it.
//! 8. Each file runs top to bottom in one world of its own, so later commands see what earlier
//!    ones did; files do not share anything. At most two files run at once.
//!
//! # The world
//!
//! * The GitHub emulator (`crates/github-emulator`) as `FORGELOOP_GITHUB_API`, with a token made
//!   for the run in `GH_TOKEN`, holding the public repository `acme/widget`: on `main` a
//!   standard-library Python project (`widget.py`, `test_widget.py`, `README.md`) tested by
//!   `python3 -m unittest -v`; PR #1 from `webgpt/dark-mode`, whose tests pass; PR #2 from
//!   `webgpt/broken`, whose `test_add` fails (AssertionError). Docs write `acme/widget#1` or
//!   `https://github.com/acme/widget/pull/1`.
//! * A clean environment: `PATH` (the built `forgeloop` first), `HOME`, `FORGELOOP_HOME`,
//!   `FORGELOOP_REGISTRY`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME`, `XDG_DATA_HOME` all in a fresh
//!   temp dir (so no config file unless a doc writes one and passes `--config`), `LANG=C.UTF-8`,
//!   `USER`/`LOGNAME` if set, and the toolchain homes `PYENV_ROOT`, `CARGO_HOME`, `RUSTUP_HOME` at
//!   their real paths (the `PATH` shims need them once `HOME` moved). The working directory is
//!   an empty temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod docs_support;
mod support;

use std::path::{Path, PathBuf};

use docs_support::DocReport;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files whose commands must run: README.md, CONTRIBUTING.md, docs/*.md
/// (`FORGELOOP_DOCTEST_ONLY=README.md,docs/sandbox.md` narrows it while writing docs).
fn doc_files() -> Vec<PathBuf> {
    let all = docs_support::files::markdown_docs(root());
    match std::env::var("FORGELOOP_DOCTEST_ONLY") {
        Ok(only) => {
            let wanted: Vec<PathBuf> = only.split(',').map(|f| root().join(f.trim())).collect();
            all.into_iter().filter(|f| wanted.contains(f)).collect()
        }
        Err(_) => all,
    }
}

fn fixture(name: &str) -> DocReport {
    let dir = root().join("tests/fixtures/docs");
    docs_support::run_file(&dir, &dir.join(name))
}

/// Prints what did not run, so a reader of the test log sees it.
fn log_not_run(reports: &[DocReport]) {
    for report in reports {
        for line in &report.not_run {
            eprintln!("not run: {line}");
        }
    }
}

#[test]
fn every_command_line_in_the_docs_runs() {
    let files = doc_files();
    let reports = docs_support::run_files(root(), &files);
    log_not_run(&reports);
    for report in &reports {
        eprintln!(
            "{}: {} commands, {} passed, {} failures",
            report.name,
            report.commands,
            report.passed,
            report.failures.len()
        );
    }
    let commands: usize = reports.iter().map(|r| r.commands).sum();
    let failures: Vec<&String> = reports.iter().flat_map(|r| &r.failures).collect();
    assert!(
        commands > 0,
        "the docs hold no runnable command at all ({} files scanned): the parser found nothing, or every block is skipped",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} doc failures (conventions: tests/docs_examples.rs):\n\n{}",
        failures.len(),
        failures.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n\n")
    );
}

#[test]
fn the_world_runs_the_whole_loop() {
    let report = fixture("world.md");
    log_not_run(std::slice::from_ref(&report));
    assert!(report.failures.is_empty(), "{}", report.failures.join("\n\n"));
    assert_eq!(report.passed, report.commands);
    assert!(report.commands >= 20, "{report:?}");
}

/// The failures' `file:line: first line of the message`, to compare whole.
fn headlines(report: &DocReport) -> Vec<String> {
    report.failures.iter().map(|f| f.lines().next().unwrap_or("").to_owned()).collect()
}

#[test]
fn a_passing_doc_yields_no_failure() {
    let report = fixture("passing.md");
    log_not_run(std::slice::from_ref(&report));
    assert!(report.failures.is_empty(), "{}", report.failures.join("\n\n"));
    assert_eq!((report.commands, report.passed), (10, 10), "{report:?}");
    assert_eq!(
        report.not_run,
        vec![
            "passing.md:25: not run (the harness sets the environment): export GH_TOKEN=not-run",
            "passing.md:32: `sh` block skipped: needs a browser and a person",
        ]
    );
}

#[test]
fn a_wrong_arrow_expectation_fails() {
    let report = fixture("wrong_arrow.md");
    assert_eq!(headlines(&report), vec!["wrong_arrow.md:4: stdout does not contain `PROJECT_LINKED`"]);
    let failure = &report.failures[0];
    assert!(failure.contains("forgeloop project lookup --repository acme/widget"), "the command is shown:\n{failure}");
    assert!(failure.contains("\"status\": \"PROJECT_NOT_LINKED\""), "stdout is shown:\n{failure}");
}

#[test]
fn a_wrong_exit_code_fails() {
    let report = fixture("wrong_exit.md");
    assert_eq!(
        headlines(&report),
        vec!["wrong_exit.md:10: exit code 1, expected 0", "wrong_exit.md:16: exit code 0, expected 2"],
        "both are reported: a failure does not stop the walk"
    );
    assert!(report.failures[0].contains("AssertionError"), "{}", report.failures[0]);
}

#[test]
fn a_block_without_a_language_fails() {
    let report = fixture("no_language.md");
    assert_eq!(headlines(&report), vec!["no_language.md:5: a code block without a language"]);
    assert_eq!(report.commands, 0);
}

#[test]
fn a_skip_without_a_reason_fails() {
    let report = fixture("skip_without_reason.md");
    let headlines = headlines(&report);
    assert_eq!(headlines.len(), 1, "{headlines:?}");
    assert!(
        headlines[0].starts_with("skip_without_reason.md:3: `<!-- doctest: skip -->` without a reason"),
        "{headlines:?}"
    );
    assert_eq!(report.passed, 0, "the block meant to be skipped is not run either");
}
