//! One test command's results directory: made empty before the command, named to its runners
//! through the environment, read after it. The directory lies in the run's private `tmp`, which
//! the tests write: every step here assumes an earlier command (or this one) planted links,
//! pipes or huge files there. Nothing is followed, opened blocking, or read without a bound.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::ResultsError;
use super::support::Support;
use crate::domain::test_results::{Collector, RecordReader};
use crate::store::tree;

/// Names the command's results directory (inside the sandbox) to the recorders.
pub const RESULTS_ENV: &str = "FORGELOOP_RESULTS";
/// Set by the recorders while a recorded test runs: a Python started by that test records
/// nothing (its tests are that test's business).
pub const IN_TEST_ENV: &str = "FORGELOOP_RESULTS_IN_TEST";
/// The directory under the run's `tmp` holding one directory per test command.
const DIR: &str = "forgeloop-results";
/// The pytest plugin's module.
const PYTEST_PLUGIN: &str = "forgeloop_results_pytest";
/// The most record files read for one command.
const MAX_FILES: usize = 4_096;
/// The most bytes read for one command, all files together.
const MAX_BYTES: u64 = 256 * 1024 * 1024;
/// The longest record line read.
const MAX_LINE: usize = 64 * 1024;
/// The most bytes of `package.json` read to see whether a script chooses its own reporter.
const MAX_PACKAGE_JSON: u64 = 1024 * 1024;

/// One test command's results directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// The run's `tmp` on the host.
    tmp: PathBuf,
    /// The command's directory's name under [`DIR`].
    name: String,
    /// The command's directory as the command sees it.
    inside: PathBuf,
}

impl Channel {
    /// Makes `<tmp>/forgeloop-results/<index>` empty (whatever an earlier command left at
    /// either name is removed, a link as a link), owned like `tmp` (the tests may run as
    /// another account). `tmp_inside` is where the command sees `tmp`.
    pub fn prepare(tmp: &Path, tmp_inside: &Path, index: usize) -> Result<Channel, ResultsError> {
        let base = tmp.join(DIR);
        let name = index.to_string();
        let error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ResultsError::Directory { path, source }
        };
        tree::remove_tree(&base).map_err(|left| error(&base)(io::Error::other(left.to_string())))?;
        let owner = tmp.symlink_metadata().map_err(error(tmp))?;
        for path in [base.clone(), base.join(&name)] {
            std::fs::DirBuilder::new().mode(0o700).create(&path).map_err(error(&path))?;
            if owner.uid() != effective_uid() || owner.gid() != effective_gid() {
                std::os::unix::fs::lchown(&path, Some(owner.uid()), Some(owner.gid())).map_err(error(&path))?;
            }
        }
        Ok(Channel { tmp: tmp.to_path_buf(), inside: tmp_inside.join(DIR).join(&name), name })
    }

    /// The directory on the host.
    pub fn dir(&self) -> PathBuf {
        self.tmp.join(DIR).join(&self.name)
    }

    /// Points the command's runners at the channel: `FORGELOOP_RESULTS`; the support
    /// directory's `python` first on `PYTHONPATH`; the pytest plugin added to `PYTEST_PLUGINS`;
    /// the node reporter added to `NODE_OPTIONS` beside `spec` on stdout — unless the command
    /// chooses its own `--test-reporter` (in its arguments, in `NODE_OPTIONS`, or in a
    /// `package.json` script `npm`, `yarn` or `pnpm` would run from `checkout`), since node
    /// refuses reporters without as many destinations, or the reporter's path cannot be written
    /// in `NODE_OPTIONS`. Returns notes on what was left out, for the report.
    pub fn set_env(
        &self,
        support: &Support,
        argv: &[String],
        checkout: &Path,
        env: &mut BTreeMap<String, String>,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        env.insert(RESULTS_ENV.to_owned(), self.inside.display().to_string());
        env.remove(IN_TEST_ENV);
        let python = support.python().display().to_string();
        prepend(env, "PYTHONPATH", &python, ":");
        append(env, "PYTEST_PLUGINS", PYTEST_PLUGIN, ",");
        let reporter = support.node_reporter().display().to_string();
        if reporter.contains(['"', '\\']) {
            notes.push("node's results are not read: the reporter's path cannot be written in NODE_OPTIONS".to_owned());
        } else if chooses_reporter(argv, env.get("NODE_OPTIONS").map(String::as_str), checkout) {
            notes.push(
                "node's results are not read: the command chooses its own --test-reporter (its TAP output is read)"
                    .to_owned(),
            );
        } else {
            let ours = format!("--test-reporter={reporter}");
            let ours = if ours.contains(' ') { format!("\"{ours}\"") } else { ours };
            let options = format!(
                "--test-reporter=spec --test-reporter-destination=stdout {ours} --test-reporter-destination=/dev/null"
            );
            append(env, "NODE_OPTIONS", &options, " ");
        }
        notes
    }

    /// Reads what the command's recorders left into `into`: every `py-*.jsonl` and
    /// `node-*.jsonl` regular file of the directory (a link, a pipe, anything else is skipped),
    /// bounded ([`MAX_FILES`], [`MAX_BYTES`], [`MAX_LINE`]). A directory the command removed or
    /// replaced by a link gives nothing (and the judgement then sees no records).
    pub fn read(&self, into: &mut Collector) {
        let Ok(dir) = self.open_dir() else {
            into.note("the results directory was gone after the command (removed or replaced)");
            return;
        };
        let listing = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let Ok(entries) = std::fs::read_dir(&listing) else { return };
        let mut names: Vec<Vec<u8>> = entries
            .flatten()
            .map(|entry| entry.file_name().as_bytes().to_vec())
            .filter(|name| is_record_file(name))
            .take(MAX_FILES + 1)
            .collect();
        if names.len() > MAX_FILES {
            into.note(format!("more than {MAX_FILES} processes recorded results; the rest were not read"));
            names.truncate(MAX_FILES);
        }
        names.sort();
        let mut budget = MAX_BYTES;
        for name in names {
            let Some(file) = open_at(&dir, &name, libc::O_RDONLY | libc::O_NONBLOCK) else { continue };
            let file = File::from(file);
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                continue;
            }
            budget = read_records(file, budget, into);
            if budget == 0 {
                into.note(format!("the records passed {} MiB; the rest were not read", MAX_BYTES >> 20));
                break;
            }
        }
    }

    fn open_dir(&self) -> io::Result<OwnedFd> {
        let tmp = File::open(&self.tmp)?;
        let tmp = OwnedFd::from(tmp);
        let base =
            open_at(&tmp, DIR.as_bytes(), libc::O_RDONLY | libc::O_DIRECTORY).ok_or_else(io::Error::last_os_error)?;
        open_at(&base, self.name.as_bytes(), libc::O_RDONLY | libc::O_DIRECTORY).ok_or_else(io::Error::last_os_error)
    }
}

/// Reads one file's records; returns the budget left.
fn read_records(file: File, budget: u64, into: &mut Collector) -> u64 {
    let mut reader = BufReader::new(file.take(budget));
    let mut records = RecordReader::new();
    let mut line = Vec::new();
    let mut used = 0u64;
    loop {
        line.clear();
        let Ok(n) = (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) else { break };
        if n == 0 {
            break;
        }
        used += n as u64;
        if line.last() != Some(&b'\n') && n > MAX_LINE {
            // Too long to be a record: skip to its end.
            into.drop_some(1);
            let mut rest = Vec::new();
            loop {
                rest.clear();
                match (&mut reader).take(MAX_LINE as u64).read_until(b'\n', &mut rest) {
                    Ok(0) | Err(_) => break,
                    Ok(m) => {
                        used += m as u64;
                        if rest.last() == Some(&b'\n') {
                            break;
                        }
                    }
                }
            }
            continue;
        }
        records.line(&String::from_utf8_lossy(&line), into);
    }
    budget.saturating_sub(used)
}

fn is_record_file(name: &[u8]) -> bool {
    (name.starts_with(b"py-") || name.starts_with(b"node-")) && name.ends_with(b".jsonl")
}

/// `openat` without following a link at `name`, close-on-exec; `None` when it fails.
fn open_at(dir: &impl AsRawFd, name: &[u8], flags: libc::c_int) -> Option<OwnedFd> {
    if name.is_empty() || name.contains(&b'/') || name.contains(&0) {
        return None;
    }
    let mut path = name.to_vec();
    path.push(0);
    // SAFETY: `path` is NUL-terminated and outlives the call; `dir` is an open descriptor.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), path.as_ptr().cast(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    // SAFETY: a descriptor `openat` just returned is ours alone.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn effective_gid() -> u32 {
    // SAFETY: getegid has no preconditions.
    unsafe { libc::getegid() }
}

fn prepend(env: &mut BTreeMap<String, String>, name: &str, value: &str, separator: &str) {
    let joined = match env.get(name).filter(|old| !old.is_empty()) {
        Some(old) => format!("{value}{separator}{old}"),
        None => value.to_owned(),
    };
    env.insert(name.to_owned(), joined);
}

fn append(env: &mut BTreeMap<String, String>, name: &str, value: &str, separator: &str) {
    let joined = match env.get(name).filter(|old| !old.trim().is_empty()) {
        Some(old) => format!("{old}{separator}{value}"),
        None => value.to_owned(),
    };
    env.insert(name.to_owned(), joined);
}

/// Whether the command picks node's test reporters itself, so that adding ours would make
/// node refuse to start (`--test-reporter` and `--test-reporter-destination` must pair up).
fn chooses_reporter(argv: &[String], node_options: Option<&str>, checkout: &Path) -> bool {
    const FLAG: &str = "--test-reporter";
    if argv.iter().any(|arg| arg.contains(FLAG)) || node_options.is_some_and(|o| o.contains(FLAG)) {
        return true;
    }
    let runs_scripts = argv.first().is_some_and(|program| {
        let name = program.rsplit('/').next().unwrap_or(program);
        matches!(name, "npm" | "yarn" | "pnpm" | "npx" | "bun" | "corepack")
    });
    runs_scripts && package_scripts(checkout).is_some_and(|scripts| scripts.contains(FLAG))
}

/// The `scripts` of the checkout's `package.json`, as text; read without following a link.
fn package_scripts(checkout: &Path) -> Option<String> {
    let dir = OwnedFd::from(File::open(checkout).ok()?);
    let file = File::from(open_at(&dir, b"package.json", libc::O_RDONLY | libc::O_NONBLOCK)?);
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_PACKAGE_JSON).read_to_string(&mut text).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(value.get("scripts")?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::test_results::Outcome;

    fn setup() -> (tempfile::TempDir, Support, Channel) {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let support = Support::install(&dir.path().join("support")).unwrap();
        let channel = Channel::prepare(&tmp, Path::new("/tmp"), 3).unwrap();
        (dir, support, channel)
    }

    #[test]
    fn prepare_empties_and_unlinks_what_was_planted() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let victim = dir.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("keep"), "mine").unwrap();
        // An earlier command points forgeloop-results at a directory of the person's.
        std::os::unix::fs::symlink(&victim, tmp.join(DIR)).unwrap();
        let channel = Channel::prepare(&tmp, &tmp, 0).unwrap();
        assert!(victim.join("keep").is_file(), "the link's target was touched");
        assert!(channel.dir().is_dir() && !tmp.join(DIR).symlink_metadata().unwrap().file_type().is_symlink());
        std::fs::write(channel.dir().join("py-1.jsonl"), "old").unwrap();
        let again = Channel::prepare(&tmp, &tmp, 0).unwrap();
        assert_eq!(std::fs::read_dir(again.dir()).unwrap().count(), 0);
    }

    #[test]
    fn environment_adds_to_what_the_command_sets() {
        let (dir, support, channel) = setup();
        let mut env = BTreeMap::from([
            ("PYTHONPATH".to_owned(), "/project/src".to_owned()),
            ("PYTEST_PLUGINS".to_owned(), "theirs".to_owned()),
            ("NODE_OPTIONS".to_owned(), "--max-old-space-size=4096".to_owned()),
            (IN_TEST_ENV.to_owned(), "1".to_owned()),
        ]);
        let notes = channel.set_env(&support, &["npm".into(), "test".into()], dir.path(), &mut env);
        assert!(notes.is_empty());
        assert_eq!(env[RESULTS_ENV], "/tmp/forgeloop-results/3");
        assert_eq!(env["PYTHONPATH"], format!("{}:/project/src", support.python().display()));
        assert_eq!(env["PYTEST_PLUGINS"], "theirs,forgeloop_results_pytest");
        assert!(
            env["NODE_OPTIONS"].starts_with("--max-old-space-size=4096 --test-reporter=spec "),
            "{}",
            env["NODE_OPTIONS"]
        );
        assert!(env["NODE_OPTIONS"].ends_with("forgeloop-reporter.mjs --test-reporter-destination=/dev/null"));
        assert!(!env.contains_key(IN_TEST_ENV));
    }

    #[test]
    fn a_command_that_chooses_its_reporter_keeps_it() {
        let (dir, support, channel) = setup();
        let mut env = BTreeMap::new();
        let argv: Vec<String> = ["node", "--test", "--test-reporter=dot"].map(String::from).to_vec();
        assert_eq!(channel.set_env(&support, &argv, dir.path(), &mut env).len(), 1);
        assert!(!env.contains_key("NODE_OPTIONS"));
        // Through a package.json script.
        std::fs::write(dir.path().join("package.json"), r#"{"scripts":{"test":"node --test --test-reporter=tap"}}"#)
            .unwrap();
        let mut env = BTreeMap::new();
        assert_eq!(channel.set_env(&support, &["npm".into(), "test".into()], dir.path(), &mut env).len(), 1);
        assert!(!env.contains_key("NODE_OPTIONS"));
        assert!(env.contains_key("PYTHONPATH"));
    }

    #[test]
    fn reads_records_and_skips_what_is_not_a_file() {
        let (dir, _support, channel) = setup();
        let records = channel.dir();
        std::fs::write(
            records.join("py-10.jsonl"),
            "{\"v\":1,\"r\":\"pytest\",\"k\":\"begin\"}\n{\"v\":1,\"r\":\"pytest\",\"k\":\"result\",\"id\":\"t::a\",\"o\":\"passed\"}\n",
        )
        .unwrap();
        // A link to someone's file, a pipe, and an overlong line are not read.
        let secret = dir.path().join("secret.jsonl");
        std::fs::write(&secret, "{\"v\":1,\"r\":\"pytest\",\"k\":\"result\",\"id\":\"stolen\",\"o\":\"passed\"}\n")
            .unwrap();
        std::os::unix::fs::symlink(&secret, records.join("py-11.jsonl")).unwrap();
        let fifo = std::ffi::CString::new(records.join("node-12.jsonl").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let mut long = "x".repeat(MAX_LINE * 3);
        long.push_str("\n{\"v\":1,\"r\":\"pytest\",\"k\":\"result\",\"id\":\"t::b\",\"o\":\"failed\"}\n");
        std::fs::write(records.join("py-13.jsonl"), long).unwrap();
        let mut c = Collector::new();
        channel.read(&mut c);
        let r = c.finish(0, vec![]);
        assert_eq!(r.test("t::a").unwrap().outcome, Outcome::Passed);
        assert_eq!(r.test("t::b").unwrap().outcome, Outcome::Failed);
        assert!(r.test("stolen").is_none());
        assert_eq!(r.dropped, 1);
        assert_eq!(r.processes.unended(), 1);
    }

    #[test]
    fn a_directory_replaced_by_a_link_gives_nothing() {
        let (dir, _support, channel) = setup();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(
            elsewhere.join("py-1.jsonl"),
            "{\"v\":1,\"r\":\"pytest\",\"k\":\"result\",\"id\":\"a\",\"o\":\"passed\"}\n",
        )
        .unwrap();
        std::fs::remove_dir(channel.dir()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, channel.dir()).unwrap();
        let mut c = Collector::new();
        channel.read(&mut c);
        let r = c.finish(0, vec![]);
        assert_eq!(r.counts.total(), 0);
        assert_eq!(r.notes.len(), 1);
    }
}
