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

pub const TEST_USER: &str = "forgeloop-sbx";

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

fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The ordinary user's ids, creating the user when running as root.
fn ordinary_user() -> (u32, u32) {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, TEST_USER]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        // Several test binaries may race to create it; a second useradd failing is fine.
        let _ = Command::new("useradd").args(["--no-create-home", "--shell", "/bin/sh", TEST_USER]).output();
    }
    (id("-u").expect("could not create the test user"), id("-g").expect("no gid for the test user"))
}

fn chown_tree(path: &Path, uid: u32, gid: u32) {
    let status = Command::new("chown").args(["-R", &format!("{uid}:{gid}")]).arg(path).status().unwrap();
    assert!(status.success());
}

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

    /// Processes on the machine whose command line contains `needle`.
    pub fn processes_with(needle: &str) -> Vec<i32> {
        crate::support::processes_with(needle)
    }
}
