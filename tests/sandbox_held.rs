//! Held files cannot be rewritten during a run (issue 57, docs/sandbox.md "Held files are
//! read-only"). The sandbox is driven directly, as the runner drives it — a `Plan`, `RunPaths`
//! with `held`, the real helper, real commands in a fresh checkout — by a driver process
//! running as root or as an ordinary account (forgeloop's two ways to run). Every command is
//! an attack a PR's code could make (a build script, a setup step, a module a test imports),
//! and every outcome is observed from outside the sandbox, after each command: the held files'
//! bytes and mode, what `HeldSnapshot` says changed, what the command printed.
//!
//! First tier: each attempt fails and the file stays byte-identical, while honest work in the
//! checkout goes on. Second tier (Landlock alone cannot make a file of the writable checkout
//! read-only): where an attempt succeeds, `HeldSnapshot::changed` names the path, and an
//! honest suite changes nothing it would name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use forgeloop::domain::commands::parse_commands;
use forgeloop::domain::egress::NetworkMode;
use forgeloop::sandbox::{self, HeldSnapshot, Phase, RunDir, Settings, spec_fd};
use support::accounts::{TEST_USER, account, chown_tree};

/// Names the job file of the driver ([`driver`]); set only by [`drive`].
const JOB_ENV: &str = "FORGELOOP_HELD_TEST_JOB";

/// The project the runs start from: the held test files, a helper they source, code.
const PROJECT: &[(&str, &str)] = &[
    ("run_tests.sh", "#!/bin/sh\n. tests/helper.sh\necho run_tests ran\n"),
    ("tests/test_x.py", "print('held test_x runs')\n"),
    ("tests/helper.sh", "echo helper ran\n"),
    ("tests/other.py", "print('other runs')\n"),
    ("tests/unit/deep/test_deep.py", "print('held deep runs')\n"),
    ("src/calc.py", "def add(a, b):\n    return a + b\n"),
    ("tests/test_calc.py", TEST_CALC),
    ("tools/plant.py", PLANT),
];

/// An ordinary unittest test, not held.
const TEST_CALC: &str = "import os, sys, unittest\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

const HELD: &[&str] = &["run_tests.sh", "tests/test_x.py", "tests/helper.sh", "tests/unit/deep/test_deep.py"];

/// The attack of the issue: Python's compiled form of a held module, with a header matching
/// the held source's modification time and size, so Python runs it instead of the source.
const PLANT: &str = r#"import importlib._bootstrap_external as bx, os, sys
src = sys.argv[1]
stem = os.path.basename(src)[:-3]
target = os.path.join(os.path.dirname(src), '__pycache__', stem + '.' + sys.implementation.cache_tag + '.pyc')
st = os.stat(src)
code = compile("print('PLANTED bytecode runs')\n", src, 'exec')
try:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, 'wb') as f:
        f.write(bx._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))
    print('plant: SUCCEEDED', target)
except OSError as e:
    print('plant: refused', e)
"#;

const IMPORT_HELD: &str = "python3 -c \"import sys; sys.path.insert(0, 'tests'); import test_x\"";

/// Every way to change a held file in place or by name; each prints `<label>: refused` or
/// `<label>: SUCCEEDED`.
const REWRITES: &[(&str, &str)] = &[
    ("write", "printf 'evil\\n' > tests/test_x.py"),
    ("truncate", "truncate -s 0 tests/test_x.py"),
    ("append", "echo evil >> tests/test_x.py"),
    ("python write", "python3 -c \"open('tests/test_x.py', 'w').write('evil')\""),
    ("chmod", "chmod 0777 tests/test_x.py"),
    ("touch", "touch -d 2001-01-01 tests/test_x.py"),
    ("unlink", "rm -f tests/test_x.py && test ! -e tests/test_x.py"),
    ("rename over", "printf 'evil\\n' > tests/evil.py && mv -f tests/evil.py tests/test_x.py"),
    ("hard-link over", "printf 'evil\\n' > tests/evil2.py && ln -f tests/evil2.py tests/test_x.py"),
    ("write the file at the root", "echo 'echo evil' > run_tests.sh"),
    ("unlink the file at the root", "rm -f run_tests.sh && test ! -e run_tests.sh"),
    ("write the sourced helper", "echo 'exit 0' >> tests/helper.sh"),
    ("write the deep one", "printf 'evil\\n' > tests/unit/deep/test_deep.py"),
    // Undoing the mount from a user namespace of the run's own.
    ("umount in a new namespace", "unshare -Urm sh -c 'umount tests/test_x.py; printf evil > tests/test_x.py'"),
];

/// Replacing a directory a held file lives in by another holding a different file.
const DIRECTORY_SWAPS: &[(&str, &str)] = &[
    (
        "rename the parent",
        "mv tests tests.old && mkdir tests && cp -r tests.old/. tests/ && printf 'evil\\n' > tests/test_x.py",
    ),
    (
        "rename a grandparent",
        "mv tests/unit tests/unit.old && mkdir -p tests/unit/deep && printf 'evil\\n' > tests/unit/deep/test_deep.py",
    ),
    ("remove the parent", "rm -rf tests && test ! -e tests"),
    (
        "rename the middle",
        "mv tests/unit/deep tests/unit/deep.old && mkdir tests/unit/deep && printf 'evil\\n' > tests/unit/deep/test_deep.py",
    ),
];

// ---------------------------------------------------------------------------------------------
// The driver: the runner's part, in a process of its own (root, or the ordinary account).

/// One run the driver makes: a fresh checkout from `project`, then `commands` in turn.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RunJob {
    project: PathBuf,
    held: Vec<String>,
    /// Shell scripts, one command each; `@SUPPORT@` is the support directory's path.
    commands: Vec<String>,
    /// The checkout shown at a path only the sandbox has (`checkout_source`), as runs with a
    /// cache are in the first tier.
    stable_view: bool,
    /// A support directory holding `recorder.py`.
    support: bool,
    /// The support directory inside the checkout (which the helper must refuse).
    support_in_checkout: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct Job {
    /// Whether the driver runs as root (else as the ordinary account).
    root: bool,
    run_root: PathBuf,
    tier: String,
    runs: Vec<RunJob>,
    out: PathBuf,
}

/// What one command did, observed from outside.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Ran {
    script: String,
    code: Option<i32>,
    output: String,
    /// `HeldSnapshot::changed` over the command (taken before it, asked after it).
    changed: Vec<String>,
    /// `HeldSnapshot::changes`, as `path: what`.
    changes: Vec<String>,
    /// Each held path after the command: `absent`, `link:<target>` or `file:<mode>:<sha256>`.
    held: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunOut {
    /// The checkout on the host, kept for the test to look at.
    checkout: PathBuf,
    /// The run's private /tmp on the host.
    tmp: PathBuf,
    /// Each held path before the first command.
    before: BTreeMap<String, String>,
    commands: Vec<Ran>,
}

/// Not a test of its own: the driver the tests below start (as root or as the ordinary
/// account), doing what the runner does. Started by the test harness, it has no job and
/// returns at once.
#[test]
fn driver() {
    let Some(job) = std::env::var_os(JOB_ENV) else { return };
    let job: Job = serde_json::from_slice(&std::fs::read(job).unwrap()).unwrap();
    assert_eq!(is_root(), job.root, "the driver runs as the account the test asked for");
    let parent = forgeloop::runner::process_env();
    let mut settings = Settings::new(job.run_root.clone());
    settings.helper = PathBuf::from(env!("CARGO_BIN_EXE_forgeloop-sandbox"));
    let mut outs = Vec::new();
    for run in &job.runs {
        let argvs: Vec<Vec<String>> = run.commands.iter().map(|s| vec!["sh".into(), "-c".into(), s.clone()]).collect();
        let profile = parse_commands(&serde_json::to_string(&argvs).unwrap()).unwrap();
        let plan = sandbox::prepare(&settings, &profile, NetworkMode::Off, &parent, &[]).unwrap();
        assert_eq!(plan.tier().map(|t| t.as_str()), Some(job.tier.as_str()), "the tier asked for");
        let run_dir = RunDir::create(&settings.run_root).unwrap();
        let checkout = run_dir.path().join("checkout");
        let copied = Command::new("cp").arg("-a").arg(&run.project).arg(&checkout).status().unwrap();
        assert!(copied.success());
        let mut paths = run_dir.paths(&checkout, None);
        paths.held = run.held.clone();
        if run.support {
            let dir = run_dir.support().unwrap();
            std::fs::write(dir.join("recorder.py"), "print('recorder')\n").unwrap();
            // Writable by every account on the host: inside, only the sandbox keeps it as it is.
            std::fs::set_permissions(dir.join("recorder.py"), std::fs::Permissions::from_mode(0o666)).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            paths.support = Some(dir);
        }
        if run.support_in_checkout {
            paths.support = Some(checkout.join("tools"));
        }
        if let Some(account) = plan.run_as() {
            run_dir.hand_over(&paths, account).unwrap();
        }
        if run.stable_view {
            let view = settings.run_root.join("acme/widget/checkout");
            paths.checkout_source = Some(std::mem::replace(&mut paths.checkout, view));
        }
        let support = paths.support.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let mut out = RunOut {
            checkout: checkout.clone(),
            tmp: paths.tmp.clone(),
            before: observe(&checkout, &run.held),
            commands: Vec::new(),
        };
        for (script, command) in run.commands.iter().zip(&profile.commands) {
            let argv: Vec<String> = command.argv.iter().map(|a| a.replace("@SUPPORT@", &support)).collect();
            let env = forgeloop::runner::build_env(&parent, &profile, command);
            let started = plan.wrap(&argv, &paths, env, Phase::Test);
            let before = HeldSnapshot::take(&paths);
            let output = run_helper(&started);
            let changes = before.changes(&paths);
            out.commands.push(Ran {
                script: script.clone(),
                code: output.status.code(),
                output: format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ),
                changed: before.changed(&paths),
                changes: changes.iter().map(|c| format!("{}: {}", c.path, c.what)).collect(),
                held: observe(&checkout, &run.held),
            });
        }
        // Kept for the test to look at; the lab's directory goes with the test.
        std::mem::forget(run_dir);
        outs.push(out);
    }
    std::fs::write(&job.out, serde_json::to_vec(&outs).unwrap()).unwrap();
}

/// Starts the helper as the runner does: its spec on a sealed descriptor.
fn run_helper(started: &sandbox::Started) -> std::process::Output {
    let fd = spec_fd::sealed(started.spec.as_ref().expect("a sandboxed command has a spec")).unwrap();
    let raw = fd.as_raw_fd();
    let mut command = Command::new(&started.program);
    command.args(&started.args).env_clear().envs(&started.env).env(sandbox::SPEC_FD_ENV, raw.to_string());
    command.current_dir(&started.cwd).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: fcntl on a descriptor of this process, between fork and exec.
    unsafe { command.pre_exec(move || spec_fd::inherit(raw)) };
    command.output().unwrap()
}

/// Each held path as the host sees it, for comparing.
fn observe(checkout: &Path, held: &[String]) -> BTreeMap<String, String> {
    use sha2::Digest;
    held.iter()
        .map(|path| {
            let full = checkout.join(path);
            let seen = match full.symlink_metadata() {
                Err(_) => "absent".to_owned(),
                Ok(meta) if meta.file_type().is_symlink() => {
                    format!("link:{}", std::fs::read_link(&full).unwrap().display())
                }
                Ok(meta) if meta.is_file() => {
                    let digest = sha2::Sha256::digest(std::fs::read(&full).unwrap());
                    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                    format!("file:{:o}:{hex}", meta.permissions().mode())
                }
                Ok(_) => "other".to_owned(),
            };
            (path.clone(), seen)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The tests' side: a lab directory, the driver started as root or as the ordinary account.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Root,
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    Namespaces,
    Landlock,
}

struct Lab {
    dir: tempfile::TempDir,
    who: Who,
    /// uid and gid of the ordinary account, when the driver runs as it (the tests run as root).
    user: Option<(u32, u32)>,
    projects: std::cell::Cell<usize>,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// For the `as_root` half: a developer who is not root runs the `as_user` half as themselves.
fn root_or_skip() -> bool {
    let root = is_root();
    if !root {
        eprintln!("skipped: this test runs the sandbox as root (the as_user half runs it as you)");
    }
    root
}

impl Lab {
    fn new(who: Who) -> Lab {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let user = (who == Who::User && is_root()).then(|| account(TEST_USER));
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("home")).unwrap();
        if let Some((uid, gid)) = user {
            chown_tree(&work, uid, gid);
        }
        Lab { dir, who, user, projects: std::cell::Cell::new(0) }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A project directory holding `files` and `links` (`(path, target)`) besides [`PROJECT`],
    /// readable by everybody (the driver copies it).
    fn project(&self, files: &[(&str, &str)], links: &[(&str, &str)]) -> PathBuf {
        let n = self.projects.get() + 1;
        self.projects.set(n);
        let dir = self.path(&format!("project-{n}"));
        for (rel, text) in PROJECT.iter().chain(files) {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        for (rel, target) in links {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, &path).unwrap();
        }
        let status = Command::new("chmod").args(["-R", "a+rX"]).arg(&dir).status().unwrap();
        assert!(status.success());
        dir
    }

    /// Runs `runs` through the driver in `tier`, as this lab's account.
    fn drive(&self, tier: Tier, runs: Vec<RunJob>) -> Vec<RunOut> {
        let work = self.path("work");
        let n = self.projects.get() + 1;
        self.projects.set(n);
        let job = Job {
            root: self.who == Who::Root,
            run_root: work.join(format!("run-{n}")),
            tier: match tier {
                Tier::Namespaces => "namespaces".into(),
                Tier::Landlock => "landlock".into(),
            },
            runs,
            out: work.join(format!("out-{n}.json")),
        };
        let job_file = work.join(format!("job-{n}.json"));
        std::fs::write(&job_file, serde_json::to_vec(&job).unwrap()).unwrap();
        if let Some((uid, gid)) = self.user {
            chown_tree(&job_file, uid, gid);
        }
        let exe = std::env::current_exe().unwrap();
        let mut command = match self.user {
            Some((uid, gid)) => {
                let mut c = Command::new("setpriv");
                c.args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        command
            .args(["--exact", "driver", "--nocapture", "--test-threads=1"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", work.join("home"))
            .env("LC_ALL", "C")
            .env(JOB_ENV, &job_file)
            .current_dir(&work);
        if tier == Tier::Landlock {
            command.env("FORGELOOP_SANDBOX_REFUSE", "namespaces");
        }
        let output = command.output().unwrap();
        let text = || format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "the driver failed ({:?}, {:?}):\n{}", self.who, tier, text());
        serde_json::from_slice(&std::fs::read(&job.out).unwrap()).unwrap_or_else(|e| panic!("{e}:\n{}", text()))
    }
}

fn held() -> Vec<String> {
    HELD.iter().map(|s| (*s).to_owned()).collect()
}

/// Each command printing `<label>: refused` for its attempt, none `SUCCEEDED`.
fn attempt(label: &str, script: &str) -> String {
    format!("if {script}; then echo '{label}: SUCCEEDED'; else echo '{label}: refused'; fi")
}

/// Asserts the sandbox was built for each command (the helper's own failure is exit 125).
fn built(run: &RunOut) {
    for ran in &run.commands {
        assert!(
            !ran.output.contains("the sandbox could not be built"),
            "the sandbox was not built for {:?}:\n{}",
            ran.script,
            ran.output
        );
    }
}

/// Runs the body as root and as the ordinary account.
macro_rules! as_root_and_user {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn as_root() {
                if root_or_skip() {
                    ($body)(Lab::new(Who::Root));
                }
            }
            #[test]
            fn as_user() {
                ($body)(Lab::new(Who::User));
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// First tier.

as_root_and_user!(first_tier_a_held_file_cannot_be_changed_in_any_way, |lab: Lab| {
    let project = lab.project(&[], &[]);
    let commands: Vec<String> = REWRITES.iter().map(|(label, script)| attempt(label, script)).collect();
    let run = |stable_view| RunJob {
        project: project.clone(),
        held: held(),
        commands: commands.clone(),
        stable_view,
        ..RunJob::default()
    };
    for out in lab.drive(Tier::Namespaces, vec![run(false), run(true)]) {
        built(&out);
        for ((label, _), ran) in REWRITES.iter().zip(&out.commands) {
            assert!(ran.output.contains(&format!("{label}: refused")), "{label}:\n{}", ran.output);
            assert_eq!(ran.held, out.before, "{label} changed a held file:\n{}", ran.output);
            assert!(ran.changed.is_empty(), "{label}: {:?}", ran.changes);
        }
    }
});

as_root_and_user!(first_tier_the_directory_of_a_held_file_cannot_be_swapped, |lab: Lab| {
    let project = lab.project(&[], &[]);
    let commands = DIRECTORY_SWAPS.iter().map(|(label, script)| attempt(label, script)).collect();
    let out = lab.drive(Tier::Namespaces, vec![RunJob { project, held: held(), commands, ..RunJob::default() }]);
    let out = &out[0];
    built(out);
    for ((label, _), ran) in DIRECTORY_SWAPS.iter().zip(&out.commands) {
        assert!(ran.output.contains(&format!("{label}: refused")), "{label}:\n{}", ran.output);
        assert_eq!(ran.held, out.before, "{label} changed a held file:\n{}", ran.output);
        assert!(ran.changed.is_empty(), "{label}: {:?}", ran.changes);
    }
});

as_root_and_user!(first_tier_no_compiled_form_of_a_held_module_is_planted_or_read, |lab: Lab| {
    // Also a `__pycache__` the tree itself makes a link, to the run's private /tmp, where a
    // command plants the compiled form instead.
    let project = lab.project(&[], &[("tests/unit/deep/__pycache__", "/tmp/pyc")]);
    let plant_in_tmp = "mkdir -p /tmp/pyc && python3 tools/plant.py tests/unit/deep/test_deep.py && ls /tmp/pyc; \
         python3 -c \"import sys; sys.path.insert(0, 'tests/unit/deep'); import test_deep\""
        .to_owned();
    let commands = vec![
        "python3 tools/plant.py tests/test_x.py".to_owned(),
        IMPORT_HELD.to_owned(),
        format!("python3 tools/plant.py tests/test_x.py; {IMPORT_HELD}"),
        plant_in_tmp,
    ];
    let out = lab.drive(Tier::Namespaces, vec![RunJob { project, held: held(), commands, ..RunJob::default() }]);
    let out = &out[0];
    built(out);
    let c = &out.commands;
    assert!(c[0].output.contains("plant: refused"), "{}", c[0].output);
    for ran in &c[1..] {
        assert!(!ran.output.contains("PLANTED"), "the planted bytecode ran:\n{}", ran.output);
    }
    assert!(c[1].output.contains("held test_x runs"), "{}", c[1].output);
    assert!(c[2].output.contains("held test_x runs"), "{}", c[2].output);
    assert!(c[3].output.contains("held deep runs"), "{}", c[3].output);
    // From outside: nothing compiled in the checkout's `__pycache__` (a mount point, empty).
    let cache = out.checkout.join("tests/__pycache__");
    let left: Vec<_> =
        std::fs::read_dir(&cache).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    for ran in c {
        assert!(ran.changed.is_empty(), "{:?}", ran.changes);
    }
});

as_root_and_user!(first_tier_honest_work_goes_on_and_the_support_directory_is_read_only, |lab: Lab| {
    let project = lab.project(&[], &[]);
    let honest = [
        "echo new > tests/new_file.txt && cat tests/new_file.txt",
        "mkdir -p build/out && echo x > build/out/a && rm -r build",
        "echo x > tests/unit/deep/scratch.txt && mv tests/unit/deep/scratch.txt tests/unit/deep/s2.txt && rm tests/unit/deep/s2.txt",
        "mv tests/other.py tests/other2.py && mv tests/other2.py tests/other.py",
        "python3 -c \"import sys; sys.path.insert(0, 'tests'); import test_x, other\"",
        "sh run_tests.sh && ./run_tests.sh",
        "cat tests/test_x.py > /tmp/copy && echo edited >> /tmp/copy",
        "cat @SUPPORT@/recorder.py && python3 @SUPPORT@/recorder.py",
        "python3 -m unittest discover -s tests",
    ];
    let mut commands: Vec<String> = honest.iter().map(|s| format!("set -e; {s}; echo HONEST-OK")).collect();
    commands.push(attempt("append to the support file", "echo x >> @SUPPORT@/recorder.py"));
    commands.push(attempt("remove the support file", "rm -f @SUPPORT@/recorder.py && test ! -e @SUPPORT@/recorder.py"));
    commands.push(attempt("make a file in the support directory", "touch @SUPPORT@/planted"));
    // The executable bit matters here: `./run_tests.sh` needs it.
    let status = Command::new("chmod").arg("0755").arg(project.join("run_tests.sh")).status().unwrap();
    assert!(status.success());
    let run = |stable_view| RunJob {
        project: project.clone(),
        held: held(),
        commands: commands.clone(),
        stable_view,
        support: true,
        ..RunJob::default()
    };
    for out in lab.drive(Tier::Namespaces, vec![run(false), run(true)]) {
        built(&out);
        let (honest_runs, attacks) = out.commands.split_at(honest.len());
        for ran in honest_runs {
            assert!(ran.output.contains("HONEST-OK"), "{}:\n{}", ran.script, ran.output);
            assert_eq!(ran.held, out.before);
            assert!(ran.changed.is_empty(), "an honest command was seen changing a held file: {:?}", ran.changes);
        }
        assert!(honest_runs[4].output.contains("held test_x runs") && honest_runs[4].output.contains("other runs"));
        assert!(honest_runs[5].output.contains("helper ran"), "{}", honest_runs[5].output);
        assert!(honest_runs[7].output.contains("recorder"), "{}", honest_runs[7].output);
        for ran in attacks {
            assert!(ran.output.contains(": refused"), "{}", ran.output);
        }
        assert_eq!(std::fs::read_to_string(out.checkout.join("tests/new_file.txt")).unwrap(), "new\n");
        assert!(honest_runs[8].output.contains("Ran 1 test"), "{}", honest_runs[8].output);
    }
});

as_root_and_user!(first_tier_a_held_link_stays_the_link_it_was, |lab: Lab| {
    let project = lab.project(&[], &[("tests/helper_link.sh", "helper.sh"), ("tests/outside_link", "/etc/passwd")]);
    let held = vec!["tests/helper_link.sh".to_owned(), "tests/helper.sh".to_owned(), "tests/outside_link".to_owned()];
    let commands = vec![
        attempt("remove the link", "rm -f tests/helper_link.sh && test ! -L tests/helper_link.sh"),
        attempt("point it elsewhere", "ln -sfn /etc/group tests/helper_link.sh"),
        attempt("rename over it", "echo 'echo evil' > tests/e.sh && mv -f tests/e.sh tests/helper_link.sh"),
        attempt("write through it", "echo 'exit 0' >> tests/helper_link.sh"),
        attempt("replace the outside link", "rm -f tests/outside_link && ln -s /etc/group tests/outside_link"),
        "sh tests/helper_link.sh && cat tests/outside_link > /dev/null && echo HONEST-OK".to_owned(),
    ];
    let out = lab.drive(Tier::Namespaces, vec![RunJob { project, held: held.clone(), commands, ..RunJob::default() }]);
    let out = &out[0];
    built(out);
    assert_eq!(out.before["tests/helper_link.sh"], "link:helper.sh");
    for ran in &out.commands[..5] {
        assert!(ran.output.contains(": refused"), "{}", ran.output);
        assert_eq!(ran.held, out.before, "{}", ran.output);
    }
    assert!(out.commands[5].output.contains("helper ran") && out.commands[5].output.contains("HONEST-OK"));
});

// ---------------------------------------------------------------------------------------------
// Both tiers: what holds nothing, and is never followed.

/// A held path the base has no file for holds nothing (an honest run may make it), and its
/// appearance is named; no directory is made for it.
fn a_missing_held_path(lab: &Lab, tier: Tier) {
    let project = lab.project(&[], &[]);
    let held = vec!["tests/test_gone.py".to_owned(), "nodir/test_none.py".to_owned()];
    let commands = vec![
        "ls nodir 2>/dev/null; echo built".to_owned(),
        "echo made > tests/test_gone.py".to_owned(),
        "true".to_owned(),
    ];
    let out = lab.drive(tier, vec![RunJob { project, held, commands, ..RunJob::default() }]);
    let out = &out[0];
    built(out);
    assert_eq!(out.before["tests/test_gone.py"], "absent");
    assert!(out.commands[0].output.contains("built"), "{}", out.commands[0].output);
    assert!(out.commands[0].changed.is_empty(), "{:?}", out.commands[0].changes);
    assert!(!out.checkout.join("nodir").exists(), "a directory was made for a missing held path");
    assert_eq!(out.commands[1].changed, ["tests/test_gone.py"], "{:?}", out.commands[1].changes);
    assert!(out.commands[2].changed.is_empty(), "{:?}", out.commands[2].changes);
}

/// A link an earlier command planted where a held file's directory should be leads out of the
/// checkout: nothing follows it (no `__pycache__` made, no mount, as root included), and the
/// change is named.
fn a_planted_link_on_a_held_path(lab: &Lab, tier: Tier) {
    let outside = lab.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("test_y.py"), "print('outside')\n").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
    let project = lab.project(&[], &[]);
    let held = vec!["linked/test_y.py".to_owned(), "tests/test_x.py".to_owned()];
    let commands =
        vec![format!("ln -s {} linked && echo planted", outside.display()), "echo second command ran".to_owned()];
    let out = lab.drive(tier, vec![RunJob { project, held, commands, ..RunJob::default() }]);
    let out = &out[0];
    built(out);
    assert!(out.commands[0].output.contains("planted"), "{}", out.commands[0].output);
    assert!(out.commands[1].output.contains("second command ran"), "{}", out.commands[1].output);
    assert_eq!(out.commands[0].changed, ["linked/test_y.py"], "{:?}", out.commands[0].changes);
    assert!(out.commands[0].changes[0].contains("behind a link"), "{:?}", out.commands[0].changes);
    let entries: Vec<_> = std::fs::read_dir(&outside).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(entries, ["test_y.py"], "something was made outside the checkout");
}

as_root_and_user!(first_tier_a_missing_held_path_holds_nothing_and_its_appearance_is_named, |lab: Lab| {
    a_missing_held_path(&lab, Tier::Namespaces);
});

as_root_and_user!(first_tier_a_link_planted_on_a_held_path_is_never_followed, |lab: Lab| {
    a_planted_link_on_a_held_path(&lab, Tier::Namespaces);
});

// The helper refuses a support directory inside a tree the run writes (there a read-only
// grant would add nothing in the second tier).
as_root_and_user!(a_support_directory_inside_the_checkout_is_refused, |lab: Lab| {
    let project = lab.project(&[], &[]);
    let run = RunJob { project, commands: vec!["echo ran".into()], support_in_checkout: true, ..RunJob::default() };
    let out = lab.drive(Tier::Namespaces, vec![run]);
    let ran = &out[0].commands[0];
    assert_eq!(ran.code, Some(125), "{}", ran.output);
    assert!(ran.output.contains("support directory"), "{}", ran.output);
    assert!(!ran.output.lines().any(|l| l == "ran"), "the command ran:\n{}", ran.output);
});

// ---------------------------------------------------------------------------------------------
// Second tier (Landlock; never for a forgeloop started by root, so as the ordinary account).

#[test]
fn second_tier_every_rewrite_and_swap_that_succeeds_is_named() {
    let lab = Lab::new(Who::User);
    let project = lab.project(&[], &[]);
    let attacks: Vec<&(&str, &str)> = REWRITES.iter().chain(DIRECTORY_SWAPS).collect();
    let runs = attacks
        .iter()
        .map(|(label, script)| RunJob {
            project: project.clone(),
            held: held(),
            commands: vec![attempt(label, script)],
            ..RunJob::default()
        })
        .collect();
    let outs = lab.drive(Tier::Landlock, runs);
    let mut succeeded = 0;
    for ((label, _), out) in attacks.iter().zip(&outs) {
        built(out);
        let ran = &out.commands[0];
        let differ: Vec<&String> = out.before.keys().filter(|p| ran.held[*p] != out.before[*p]).collect();
        if ran.output.contains(&format!("{label}: SUCCEEDED")) {
            succeeded += 1;
        }
        for path in &differ {
            assert!(ran.changed.contains(path), "{label} changed {path} unseen: {:?}\n{}", ran.changes, ran.output);
        }
        if ran.output.contains(&format!("{label}: SUCCEEDED")) {
            assert!(!ran.changed.is_empty(), "{label} succeeded unseen:\n{}", ran.output);
        }
    }
    // The second tier really cannot stop them (so the observation above is of real changes).
    assert!(succeeded >= attacks.len() - 1, "{succeeded} of {} succeeded", attacks.len());
}

#[test]
fn second_tier_a_rewrite_undone_before_the_command_ends_is_named() {
    let lab = Lab::new(Who::User);
    let project = lab.project(&[], &[]);
    let undone = [
        "cp -p tests/test_x.py \"$TMPDIR/keep\" && printf 'evil\\n' > tests/test_x.py && cp -p \"$TMPDIR/keep\" tests/test_x.py",
        "mv tests/test_x.py tests/.aside && printf 'print(1)\\n' > tests/test_x.py && mv -f tests/.aside tests/test_x.py",
        "chmod 0600 tests/test_x.py && chmod 0644 tests/test_x.py",
    ];
    let runs = undone
        .iter()
        .map(|s| RunJob {
            project: project.clone(),
            held: held(),
            commands: vec![format!("{s} && echo undone")],
            ..RunJob::default()
        })
        .collect();
    for (script, out) in undone.iter().zip(lab.drive(Tier::Landlock, runs)) {
        built(&out);
        let ran = &out.commands[0];
        assert!(ran.output.contains("undone"), "{script}:\n{}", ran.output);
        assert_eq!(ran.held, out.before, "{script}: not undone");
        assert_eq!(ran.changed, ["tests/test_x.py"], "{script}: {:?}", ran.changes);
    }
}

#[test]
fn second_tier_a_planted_compiled_form_is_not_read_and_is_named() {
    let lab = Lab::new(Who::User);
    let project = lab.project(&[], &[]);
    let commands = vec![format!("python3 tools/plant.py tests/test_x.py; {IMPORT_HELD}")];
    let out = lab.drive(Tier::Landlock, vec![RunJob { project, held: held(), commands, ..RunJob::default() }]);
    let ran = &out[0].commands[0];
    built(&out[0]);
    assert!(ran.output.contains("plant: SUCCEEDED"), "{}", ran.output);
    assert!(!ran.output.contains("PLANTED"), "the planted bytecode ran:\n{}", ran.output);
    assert!(ran.output.contains("held test_x runs"), "{}", ran.output);
    assert_eq!(ran.changed, ["tests/test_x.py"], "{:?}", ran.changes);
    assert!(ran.changes[0].contains("a compiled form appeared: tests/__pycache__/test_x."), "{:?}", ran.changes);
}

#[test]
fn second_tier_honest_work_changes_nothing_and_the_support_directory_is_read_only() {
    let lab = Lab::new(Who::User);
    let project = lab.project(&[], &[]);
    let honest = [
        "echo new > tests/new_file.txt && rm tests/new_file.txt",
        "python3 -c \"import sys; sys.path.insert(0, 'tests'); import test_x, other\"",
        "python3 -m unittest discover -s tests",
        "sh run_tests.sh",
        "cat @SUPPORT@/recorder.py",
    ];
    let mut commands: Vec<String> = honest.iter().map(|s| format!("set -e; {s}; echo HONEST-OK")).collect();
    commands.push(attempt("append to the support file", "echo x >> @SUPPORT@/recorder.py"));
    commands.push(attempt("make a file in the support directory", "touch @SUPPORT@/planted"));
    let out =
        lab.drive(Tier::Landlock, vec![RunJob { project, held: held(), commands, support: true, ..RunJob::default() }]);
    let out = &out[0];
    built(out);
    for ran in &out.commands[..honest.len()] {
        assert!(ran.output.contains("HONEST-OK"), "{}:\n{}", ran.script, ran.output);
        assert!(ran.changed.is_empty(), "{}: {:?}", ran.script, ran.changes);
    }
    assert!(out.commands[1].output.contains("held test_x runs"), "{}", out.commands[1].output);
    assert!(out.commands[2].output.contains("Ran 1 test"), "{}", out.commands[2].output);
    for ran in &out.commands[honest.len()..] {
        assert!(ran.output.contains(": refused"), "{}", ran.output);
    }
}

#[test]
fn second_tier_a_missing_held_path_holds_nothing_and_its_appearance_is_named() {
    a_missing_held_path(&Lab::new(Who::User), Tier::Landlock);
}

#[test]
fn second_tier_a_link_planted_on_a_held_path_is_never_followed() {
    a_planted_link_on_a_held_path(&Lab::new(Who::User), Tier::Landlock);
}

#[test]
fn second_tier_a_held_link_replaced_is_named() {
    let lab = Lab::new(Who::User);
    let project = lab.project(&[], &[("tests/helper_link.sh", "helper.sh")]);
    let held = vec!["tests/helper_link.sh".to_owned(), "tests/helper.sh".to_owned()];
    let attacks = [
        "rm -f tests/helper_link.sh",
        "ln -sfn /etc/group tests/helper_link.sh",
        "echo 'echo evil' > tests/e.sh && mv -f tests/e.sh tests/helper_link.sh",
        "echo 'exit 0' >> tests/helper_link.sh",
    ];
    let runs = attacks
        .iter()
        .map(|s| RunJob {
            project: project.clone(),
            held: held.clone(),
            commands: vec![format!("{s} && echo done")],
            ..RunJob::default()
        })
        .collect();
    for (script, out) in attacks.iter().zip(lab.drive(Tier::Landlock, runs)) {
        built(&out);
        let ran = &out.commands[0];
        assert!(ran.output.contains("done"), "{script}:\n{}", ran.output);
        let differ: Vec<String> = out.before.keys().filter(|p| ran.held[*p] != out.before[*p]).cloned().collect();
        assert!(!differ.is_empty(), "{script} changed nothing");
        let mut changed = ran.changed.clone();
        changed.sort();
        assert_eq!(changed, differ, "{script}: {:?}", ran.changes);
    }
}
