//! A lab for attacking the sandbox (design §5.6): a GitHub emulator, a user home with planted
//! credentials, forgeloop's own home with a planted file, and hostile PRs whose test scripts
//! attack. Every outcome is read from outside the sandbox (files, listeners, the process
//! table), never from the attacking test's exit code.
#![allow(dead_code)]

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;

use github_emulator::RepoHandle;
use serde_json::Value;

use crate::support::Run;
use crate::support::world::{World, fresh_secret};

/// Generates one test per tier and user for an attack: `fn(lab: Lab)`. The landlock tier never
/// runs PR code for a forgeloop started by root (design §5.6), so there the attack is shown not
/// to start at all.
macro_rules! every_way {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn namespaces_as_root() {
                if crate::sandbox_support::root_or_skip() {
                    ($body)(Lab::new(Tier::Namespaces, Who::Root));
                }
            }
            #[test]
            fn landlock_as_root() {
                if crate::sandbox_support::root_or_skip() {
                    Lab::new(Tier::Landlock, Who::Root).assert_refused_for_root();
                }
            }
            #[test]
            fn namespaces_as_user() {
                ($body)(Lab::new(Tier::Namespaces, Who::User));
            }
            #[test]
            fn landlock_as_user() {
                ($body)(Lab::new(Tier::Landlock, Who::User));
            }
        }
    };
}

/// Which tier a test forces (through the test seam) and expects in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Namespaces,
    Landlock,
}

impl Tier {
    pub fn kind(self) -> &'static str {
        match self {
            Tier::Namespaces => "namespaces",
            Tier::Landlock => "landlock",
        }
    }
}

/// Who runs forgeloop: root (CI and these sessions) or an ordinary user created for the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Root,
    User,
}

pub use crate::support::accounts::TEST_USER;

pub struct Lab {
    pub w: World,
    pub repo: RepoHandle,
    /// The HOME forgeloop runs with: planted credentials and a `.bashrc`.
    pub user_home: PathBuf,
    /// A value planted in every credential file and in forgeloop's own environment: it must
    /// never show up in anything the run produces.
    pub canary: String,
    pub tier: Tier,
    /// uid/gid when forgeloop runs as the ordinary user.
    pub user: Option<(u32, u32)>,
    bin: PathBuf,
    branches: Cell<u32>,
    extra_env: Vec<(String, String)>,
}

pub struct Attack {
    pub run: Run,
    /// The report (forgeloop test prints it).
    pub report: Value,
    /// The run's redacted log, read from forgeloop's home.
    pub log: String,
}

impl Attack {
    /// Everything the run let out: stdout, stderr and the log.
    pub fn everything(&self) -> String {
        format!("{}\n{}\n{}", self.run.stdout, self.run.stderr, self.log)
    }
}

/// The real home of the account running the tests (toolchains live there).
fn real_home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"))
}

/// For the `*_as_root` half of [`every_way!`]: a developer who is not root runs the `*_as_user`
/// half as themselves, and the root half says it skipped.
pub fn root_or_skip() -> bool {
    let root = is_root();
    if !root {
        eprintln!("skipped: this test runs forgeloop as root (the *_as_user tests run it as you)");
    }
    root
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub use crate::support::accounts::OTHER_USER;

/// The ordinary user's ids, creating the user when running as root.
fn ordinary_user() -> (u32, u32) {
    crate::support::accounts::account(TEST_USER)
}

/// [`OTHER_USER`]'s ids, creating it when running as root; `None` (the test skips, saying
/// why) for an ordinary user, who cannot act as another account.
pub fn other_user() -> Option<(u32, u32)> {
    crate::support::accounts::account_if_root(OTHER_USER)
}

/// Root's Rust toolchain (the real `cargo` and `rustc`, not rustup's proxies) hard-linked into
/// the lab, where an ordinary user can reach it; returns its `bin` directory. Only what
/// building a crate needs is linked (no sources or docs): a few hundred links, no copying.
pub fn link_toolchain(lab: &Lab) -> PathBuf {
    let out = Command::new("rustc").args(["--print", "sysroot"]).output().unwrap();
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let target = String::from_utf8(Command::new("rustc").args(["-vV"]).output().unwrap().stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .unwrap();
    let dest = lab.w.path("shared/toolchain");
    std::fs::create_dir_all(dest.join("lib/rustlib")).unwrap();
    let link = |from: &Path, to: &Path| {
        let status = Command::new("cp").arg("-al").arg(from).arg(to).status().unwrap();
        assert!(status.success(), "cp -al {}", from.display());
    };
    link(&sysroot.join("bin"), &dest);
    for entry in std::fs::read_dir(sysroot.join("lib")).unwrap().flatten() {
        if entry.path().is_file() {
            link(&entry.path(), &dest.join("lib"));
        }
    }
    link(&sysroot.join("lib/rustlib").join(&target), &dest.join("lib/rustlib"));
    // Reachable, read-only, by everybody.
    let mut dir = dest.clone();
    while dir != lab.w.sb.dir.path() {
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        dir.pop();
    }
    dest.join("bin")
}

use crate::support::accounts::chown_tree;

impl Lab {
    pub fn new(tier: Tier, who: Who) -> Lab {
        let w = World::new();
        let canary = format!("canary{}", fresh_secret("").to_lowercase());
        let user_home = w.path("userhome");
        for (rel, text) in [
            (".ssh/id_ed25519", format!("{canary}-ssh\n")),
            (".config/gh/hosts.yml", format!("github.com:\n    oauth_user: {canary}-gh\n")),
            (".aws/credentials", format!("[default]\nnote = {canary}-aws\n")),
            (".netrc", format!("machine example.org note {canary}-netrc\n")),
            (".bashrc", "# the user's own bashrc\n".to_owned()),
        ] {
            let path = user_home.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        // forgeloop's home holds a file whose name is the canary: listing the home leaks it.
        let cycles = w.sb.home().join("cycles");
        std::fs::create_dir_all(&cycles).unwrap();
        std::fs::write(cycles.join(format!("{canary}.json")), "{}").unwrap();

        let repo = w.rt.block_on(w.emu.create_repo("acme", "widget", false)).unwrap();
        w.commit(&repo, "main", &[("README", "hostile lab\n")], "start");

        let mut extra_env = vec![("HOSTILE_CANARY".to_owned(), canary.clone())];
        let (user, bin) = if who == Who::User && is_root() {
            let (uid, gid) = ordinary_user();
            // The binary must be reachable for the user wherever the checkout lives.
            let bin = w.path("forgeloop");
            std::fs::copy(env!("CARGO_BIN_EXE_forgeloop"), &bin).unwrap();
            // The lab's root stays root's (the emulator's repositories live there); the user gets
            // a way in and the directories forgeloop uses.
            std::fs::set_permissions(w.sb.dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            for dir in ["home", "registry", "xdg-config", "userhome", "shared"] {
                std::fs::create_dir_all(w.path(dir)).unwrap();
                chown_tree(&w.path(dir), uid, gid);
            }
            chown_tree(&bin, uid, gid);
            (Some((uid, gid)), bin)
        } else {
            (None, PathBuf::from(env!("CARGO_BIN_EXE_forgeloop")))
        };
        if user.is_none() {
            // Root's toolchains stay where they are even though HOME moved.
            let home = real_home();
            for (name, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup"), ("PYENV_ROOT", ".pyenv")] {
                let value = std::env::var(name).unwrap_or_else(|_| home.join(default).display().to_string());
                extra_env.push((name.to_owned(), value));
            }
        }
        if tier == Tier::Landlock {
            extra_env.push(("FORGELOOP_SANDBOX_REFUSE".to_owned(), "namespaces".to_owned()));
        }
        Lab { w, repo, user_home, canary, tier, user, bin, branches: Cell::new(0), extra_env }
    }

    /// forgeloop's home (cycles, mirrors, logs).
    pub fn forgeloop_home(&self) -> PathBuf {
        self.w.sb.home()
    }

    pub fn set_env(&mut self, name: &str, value: &str) {
        self.extra_env.push((name.to_owned(), value.to_owned()));
    }

    /// Writes the person's config.toml.
    pub fn config(&self, text: &str) {
        let dir = self.w.path("xdg-config/forgeloop");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
        self.give_back(&dir);
    }

    pub fn give_back(&self, path: &Path) {
        if let Some((uid, gid)) = self.user {
            chown_tree(path, uid, gid);
        }
    }

    /// Opens a PR whose branch holds `files` (and symlinks `(name, target)`), committed with
    /// real git; returns its number.
    pub fn hostile_pr(&self, files: &[(&str, &str)], symlinks: &[(&str, &str)]) -> u64 {
        self.hostile_pr_with_gitlinks(files, symlinks, &[])
    }

    /// [`Lab::hostile_pr`] with submodule entries (gitlinks) at `gitlinks`, pointing at the base
    /// commit: a checkout without `--submodules` makes each an empty directory.
    pub fn hostile_pr_with_gitlinks(
        &self,
        files: &[(&str, &str)],
        symlinks: &[(&str, &str)],
        gitlinks: &[&str],
    ) -> u64 {
        let n = self.branches.get() + 1;
        self.branches.set(n);
        let branch = format!("attack-{n}");
        let bare = self.w.emu.repo_dir(&self.repo).unwrap();
        let work = self.w.path(&format!("work-{n}"));
        let git = |args: &[&str], dir: &Path| {
            let out = Command::new("git")
                .args(["-c", "user.name=WebGPT", "-c", "user.email=webgpt@example.invalid", "-c", "safe.directory=*"])
                .args(args)
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        git(&["clone", "-q", bare.to_str().unwrap(), work.to_str().unwrap()], self.w.sb.dir.path());
        for (name, text) in files {
            std::fs::write(work.join(name), text).unwrap();
        }
        for (name, target) in symlinks {
            std::os::unix::fs::symlink(target, work.join(name)).unwrap();
        }
        git(&["add", "-A"], &work);
        for path in gitlinks {
            let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(&work).output().unwrap();
            let head = String::from_utf8(out.stdout).unwrap();
            git(&["update-index", "--add", "--cacheinfo", &format!("160000,{},{path}", head.trim())], &work);
        }
        git(&["commit", "-qm", "hostile change"], &work);
        git(&["push", "-q", "origin", &format!("HEAD:refs/heads/{branch}")], &work);
        std::fs::remove_dir_all(&work).unwrap();
        self.w.rt.block_on(self.w.emu.open_pr(&self.repo, &branch, "main", &branch)).unwrap()
    }

    /// A forgeloop command as the lab's user, with the lab's environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = match self.user {
            Some((uid, gid)) => {
                let mut cmd = Command::new("setpriv");
                cmd.args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups"]).arg(&self.bin);
                cmd
            }
            None => Command::new(&self.bin),
        };
        let path = if self.user.is_some() {
            "/usr/local/bin:/usr/bin:/bin".to_owned()
        } else {
            std::env::var("PATH").unwrap_or_default()
        };
        cmd.args(args)
            .current_dir(self.w.sb.dir.path())
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.user_home)
            .env("LC_ALL", "C")
            .env("FORGELOOP_HOME", self.forgeloop_home())
            .env("FORGELOOP_REGISTRY", self.w.path("registry"))
            .env("XDG_CONFIG_HOME", self.w.path("xdg-config"))
            .env("FORGELOOP_GITHUB_API", self.w.emu.api_base())
            .env("GH_TOKEN", &self.w.token)
            .stdin(std::process::Stdio::null());
        for (name, value) in &self.extra_env {
            cmd.env(name, value);
        }
        cmd
    }

    /// A forgeloop command started through `wrapper` (a program and its arguments, which end by
    /// exec'ing the rest of its command line), as the lab's user, with the lab's environment.
    pub fn command_via(&self, wrapper: &[&str], args: &[&str]) -> Command {
        let mut cmd = match self.user {
            Some((uid, gid)) => {
                let mut cmd = Command::new("setpriv");
                cmd.args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups"]).args(wrapper);
                cmd
            }
            None => {
                let mut cmd = Command::new(wrapper[0]);
                cmd.args(&wrapper[1..]);
                cmd
            }
        };
        let plain = self.command(args);
        cmd.arg(&self.bin).args(args).current_dir(self.w.sb.dir.path()).env_clear().stdin(std::process::Stdio::null());
        for (name, value) in plain.get_envs() {
            if let Some(value) = value {
                cmd.env(name, value);
            }
        }
        cmd
    }

    /// `forgeloop test` of PR `n` with `commands` and `extra` arguments, started in the
    /// background: the caller watches the run from outside while it lasts.
    pub fn spawn_test(&self, n: u64, commands: &str, extra: &[&str]) -> std::process::Child {
        let file = self.w.path(&format!("commands-{n}.json"));
        std::fs::write(&file, commands).unwrap();
        self.give_back(&file);
        let pr = format!("acme/widget#{n}");
        let mut args = vec!["test", "--pr", &pr, "--commands-json", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.command(&args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
    }

    /// Waits for a background `forgeloop test` and reads its report and log, as [`Lab::test`].
    pub fn finish(&self, child: std::process::Child) -> Attack {
        let output = child.wait_with_output().unwrap();
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(run.code == 0 || run.code == 1, "forgeloop test failed to run:\n{}\n{}", run.stdout, run.stderr);
        let report = run.json();
        assert_eq!(report["environment"]["sandbox"]["kind"], self.tier.kind(), "{}", run.stdout);
        let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
        Attack { run, report, log }
    }

    /// The live log of the lab's one-shot runs so far (all of them, concatenated).
    pub fn live_logs(&self) -> String {
        let dir = self.forgeloop_home().join("tests");
        let mut text = String::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "log") {
                text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
            }
        }
        text
    }

    /// Waits (up to two minutes) until a live log holds `needle`.
    pub fn wait_for_log(&self, needle: &str) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while std::time::Instant::now() < deadline {
            if self.live_logs().contains(needle) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        false
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let output = self.command(args).output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Starts a cycle (the reference test brief) at `state`.
    pub fn start_cycle(&self, state: &str) {
        let run = self.run(&[
            "forge",
            "--request",
            "Add dark mode",
            "--intent-brief",
            crate::support::BRIEF,
            "--webgpt-question",
            crate::support::QUESTION,
            "--state",
            state,
        ]);
        assert_eq!(run.code, 0, "{}", run.stdout);
    }

    /// `forgeloop test` of PR `n` with `commands` (JSON); the report must name the lab's tier.
    pub fn test(&self, n: u64, commands: &str) -> Attack {
        let file = self.w.path(&format!("commands-{n}.json"));
        std::fs::write(&file, commands).unwrap();
        self.give_back(&file);
        let pr = format!("acme/widget#{n}");
        let run = self.run(&["test", "--pr", &pr, "--commands-json", file.to_str().unwrap()]);
        assert!(run.code == 0 || run.code == 1, "forgeloop test failed to run:\n{}\n{}", run.stdout, run.stderr);
        let report = run.json();
        assert_eq!(report["environment"]["sandbox"]["kind"], self.tier.kind(), "{}", run.stdout);
        let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
        Attack { run, report, log }
    }

    /// A hostile PR whose `attack.sh` is `script`, tested with `sh attack.sh`.
    pub fn attack(&self, script: &str) -> Attack {
        let n = self.hostile_pr(&[("attack.sh", script)], &[]);
        self.test(n, r#"[["sh", "attack.sh"]]"#)
    }

    /// As root, the landlock tier refuses: the PR is not even fetched, and the refusal says why
    /// and how to run instead.
    pub fn assert_refused_for_root(&self) {
        assert!(self.user.is_none() && self.tier == Tier::Landlock);
        let n = self.hostile_pr(&[("attack.sh", "echo the attack ran\n")], &[]);
        let file = self.w.path("commands-refused.json");
        std::fs::write(&file, r#"[["sh", "attack.sh"]]"#).unwrap();
        let run = self.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", file.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
        let out = run.json();
        assert_eq!(out["status"], "SANDBOX_UNAVAILABLE", "{out:#}");
        let causes = out["causes"].to_string();
        assert!(causes.contains("forgeloop runs as root"), "{causes}");
        assert!(out["fixes"].to_string().contains("ordinary user"), "{out:#}");
        assert!(!self.forgeloop_home().join("mirrors").exists(), "the PR was fetched");
    }

    /// Where forgeloop makes its run directories.
    pub fn run_root(&self) -> PathBuf {
        self.forgeloop_home().join("run")
    }

    /// The run directories below [`Lab::run_root`] (a run with a cache slot has its directory at
    /// `<owner>/<repo>/<slot>`; the parents it leaves are not run directories).
    pub fn run_dirs(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if ["lock", "tmp", "home", "root"].iter().any(|n| path.join(n).symlink_metadata().is_ok()) {
                    out.push(path);
                } else if path.is_dir() && !path.is_symlink() {
                    walk(&path, out);
                } else {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.run_root(), &mut out);
        out
    }

    /// Processes on the machine whose command line contains `needle`.
    pub fn processes_with(needle: &str) -> Vec<i32> {
        crate::support::processes_with(needle)
    }
}
