//! The doc-example harness: parse a Markdown file (`parse`), build its world (`world`), run
//! its commands in order (`exec`) and collect every failure with its `file:line`.
#![allow(dead_code)]

pub mod exec;
pub mod files;
pub mod markdown;
pub mod parse;
pub mod world;

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use parse::{Command, Item};
use world::DocWorld;

/// How long one command may run: far above the slowest the docs hold (`forgeloop demo
/// --headless`, a few seconds in a debug build), so only a hang reaches it.
const COMMAND_LIMIT: Duration = Duration::from_secs(180);
/// How long a tty command may run.
const TTY_LIMIT: Duration = Duration::from_secs(30);
/// How much of stdout and stderr a failure shows.
const SHOWN_BYTES: usize = 3000;
/// Doc files running at once in this test binary, whichever test runs them: the machine has
/// two cores, and each file runs real test suites in forgeloop's sandbox.
const PARALLEL: usize = 2;

/// What running one Markdown file found.
#[derive(Debug, Default)]
pub struct DocReport {
    /// The file as shown in messages (`README.md`, `docs/cli.md`).
    pub name: String,
    /// `file:line: …` for each broken rule and each failed command.
    pub failures: Vec<String>,
    /// `file:line: …` for each skipped block and `export` line, so the log shows what did not run.
    pub not_run: Vec<String>,
    /// Commands to run (those of skipped blocks and `export` lines not counted).
    pub commands: usize,
    /// Commands that ran and met their expectations.
    pub passed: usize,
}

/// Set (to anything) to print every command with its output, to write `→` expectations.
pub const VERBOSE: &str = "FORGELOOP_DOCTEST_VERBOSE";

/// A counting semaphore over the whole test binary.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

static SLOTS: Slots = Slots { free: Mutex::new(PARALLEL), freed: Condvar::new() };

struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut free = SLOTS.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = SLOTS.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        SLOTS.freed.notify_one();
    }
}

/// The start of `text` (at most `SHOWN_BYTES`), indented under a label.
fn shown(label: &str, text: &str) -> String {
    let trimmed = text.trim_end();
    if trimmed.is_empty() {
        return format!("    {label}: (empty)\n");
    }
    let mut cut = trimmed.len().min(SHOWN_BYTES);
    while !trimmed.is_char_boundary(cut) {
        cut -= 1;
    }
    let more =
        if cut < trimmed.len() { format!("\n      … ({} more bytes)", trimmed.len() - cut) } else { String::new() };
    let body: Vec<String> = trimmed[..cut].lines().map(|l| format!("      {l}")).collect();
    format!("    {label}:\n{}{more}\n", body.join("\n"))
}

/// Runs one command in the world; `Err` is the failure's description.
fn run_command(world: &DocWorld, command: &Command, index: usize) -> Result<(), String> {
    let outcome = match &command.tty {
        None => exec::run_plain(&command.text, &world.work, &world.env(false), COMMAND_LIMIT),
        Some(input) => {
            let script = world.scratch.join(format!("command-{index}.sh"));
            exec::run_tty(&command.text, input, &world.work, &world.env(true), &script, TTY_LIMIT)
        }
    };
    if std::env::var_os(VERBOSE).is_some() {
        eprintln!(
            "--- {}exit {:?} in {:.1} s\n{}\n{}{}",
            if command.tty.is_some() { "(tty) " } else { "" },
            outcome.code,
            outcome.elapsed.as_secs_f64(),
            command.text,
            shown("stdout", &outcome.stdout),
            shown("stderr", &outcome.stderr)
        );
    }
    let mut wrong = Vec::new();
    if outcome.timed_out {
        let limit = if command.tty.is_some() { TTY_LIMIT } else { COMMAND_LIMIT };
        wrong.push(format!("did not finish within {} s (killed)", limit.as_secs()));
    } else if outcome.code != Some(command.exit) {
        let code = outcome.code.map_or_else(|| "killed by a signal".to_owned(), |c| format!("exit code {c}"));
        wrong.push(format!("{code}, expected {}", command.exit));
    }
    if let Some(text) = &command.stdout_contains
        && !outcome.stdout.contains(text.as_str())
    {
        let channel = if command.tty.is_some() { "the terminal output" } else { "stdout" };
        wrong.push(format!("{channel} does not contain `{text}`"));
    }
    if wrong.is_empty() {
        return Ok(());
    }
    let text: Vec<String> = command.text.lines().map(|l| format!("      {l}")).collect();
    let stdout_label = if command.tty.is_some() { "terminal" } else { "stdout" };
    Err(format!(
        "{}\n    command:\n{}\n{}{}",
        wrong.join("; "),
        text.join("\n"),
        shown(stdout_label, &outcome.stdout),
        shown("stderr", &outcome.stderr)
    ))
}

/// Parses `markdown` and runs it top to bottom in a world of its own; `name` prefixes every
/// message. A file with nothing to run or write gets no world.
pub fn run_markdown(name: &str, markdown: &str) -> DocReport {
    let items = parse::items(markdown);
    let mut report = DocReport { name: name.to_owned(), ..DocReport::default() };
    report.commands = items.iter().filter(|i| matches!(i, Item::Command(_))).count();
    let needs_world = items.iter().any(|i| matches!(i, Item::Command(_) | Item::File { .. }));
    let world = needs_world.then(|| (Slot::take(), DocWorld::new()));
    for (index, item) in items.iter().enumerate() {
        match item {
            Item::Problem { line, message } => report.failures.push(format!("{name}:{line}: {message}")),
            Item::Skipped { line, language, reason } => {
                report.not_run.push(format!("{name}:{line}: `{language}` block skipped: {reason}"))
            }
            Item::Export { line, text } => {
                report.not_run.push(format!("{name}:{line}: not run (the harness sets the environment): {text}"))
            }
            Item::File { line, name: file, contents } => {
                let (_, world) = world.as_ref().expect("a world for a file block");
                let path = world.work.join(file);
                let written = path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&path, contents));
                if let Err(e) = written {
                    report.failures.push(format!("{name}:{line}: writing `{file}`: {e}"));
                }
            }
            Item::Command(command) => {
                let (_, world) = world.as_ref().expect("a world for a command");
                match run_command(world, command, index) {
                    Ok(()) => report.passed += 1,
                    Err(why) => report.failures.push(format!("{name}:{}: {why}", command.line)),
                }
            }
        }
    }
    report
}

/// Runs one Markdown file; `root` is what its name is shown relative to.
pub fn run_file(root: &Path, path: &Path) -> DocReport {
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => run_markdown(&name, &text),
        Err(e) => {
            DocReport { name, failures: vec![format!("{}: cannot read: {e}", path.display())], ..Default::default() }
        }
    }
}

/// Runs every file, `PARALLEL` at a time; the reports come back in the order of `files`.
pub fn run_files(root: &Path, files: &[PathBuf]) -> Vec<DocReport> {
    let next = Mutex::new(0usize);
    let reports: Mutex<Vec<Option<DocReport>>> = Mutex::new(files.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL.min(files.len()) {
            scope.spawn(|| {
                loop {
                    let i = {
                        let mut next = next.lock().unwrap();
                        let i = *next;
                        *next += 1;
                        i
                    };
                    let Some(path) = files.get(i) else { return };
                    let report = run_file(root, path);
                    reports.lock().unwrap()[i] = Some(report);
                }
            });
        }
    });
    reports.into_inner().unwrap().into_iter().map(|r| r.expect("every file ran")).collect()
}
