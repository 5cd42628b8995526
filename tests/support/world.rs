//! A GitHub emulator plus a forgeloop sandbox: the real binary talks to the emulator over
//! HTTP on 127.0.0.1, and tests build repositories and PRs through the emulator's API.
#![allow(dead_code)]

use std::path::PathBuf;

use github_emulator::{Emulator, EmulatorConfig, Fault, RepoHandle};
use tokio::runtime::Runtime;

use super::{Run, Sandbox};

pub const LOGIN: &str = "forgeloop-bot";

/// The test project: `calc.sh A B` should print A+B; `test.sh` checks it with `sh` only.
pub const TEST_SH: &str = "#!/bin/sh\nout=$(sh calc.sh 2 3)\nif [ \"$out\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $out\"; exit 1; fi\n";
pub const CALC_BUGGY: &str = "echo $(($1 - $2))\n";
pub const CALC_FIXED: &str = "echo $(($1 + $2))\n";
pub const COMMANDS: &str = r#"[["sh", "test.sh"]]"#;

pub struct World {
    pub sb: Sandbox,
    pub rt: Runtime,
    pub emu: Emulator,
    pub token: String,
}

/// A token-shaped secret made at run time (never committed).
pub fn fresh_secret(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let mut state = nanos as u64 ^ (u64::from(std::process::id()) << 32);
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut out = String::from(prefix);
    for _ in 0..36 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        out.push(alphabet[(state >> 33) as usize % alphabet.len()] as char);
    }
    out
}

impl World {
    pub fn new() -> World {
        let sb = Sandbox::new();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let token = fresh_secret("ghp_");
        let emu = rt
            .block_on(Emulator::start(EmulatorConfig {
                root: sb.path("emulator"),
                token: Some(token.clone()),
                login: LOGIN.to_owned(),
                admin_secret: None,
            }))
            .unwrap();
        std::fs::write(sb.path("commands.json"), COMMANDS).unwrap();
        World { sb, rt, emu, token }
    }

    /// Runs forgeloop against the emulator with the token in GH_TOKEN.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[("GH_TOKEN", &self.token)])
    }

    /// A forgeloop command pointed at the emulator with the token in GH_TOKEN, for tests that
    /// spawn it themselves (to kill it, race it, or talk to its stdin).
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.sb.command(args);
        cmd.env("FORGELOOP_GITHUB_API", self.emu.api_base()).env("GH_TOKEN", &self.token);
        cmd
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.sb.command(args);
        cmd.env("FORGELOOP_GITHUB_API", self.emu.api_base());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let output = cmd.output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// A repository with the test project on `main` (calc.sh buggy).
    pub fn project(&self, owner: &str, name: &str, private: bool) -> RepoHandle {
        let repo = self.rt.block_on(self.emu.create_repo(owner, name, private)).unwrap();
        self.commit(&repo, "main", &[("test.sh", TEST_SH), ("calc.sh", CALC_BUGGY)], "project");
        repo
    }

    /// A public repository `owner/name` whose `main` holds `files`.
    pub fn repo_with(&self, owner: &str, name: &str, files: &[(&str, &str)]) -> RepoHandle {
        let repo = self.rt.block_on(self.emu.create_repo(owner, name, false)).unwrap();
        self.commit(&repo, "main", files, "the project");
        repo
    }

    pub fn commit(&self, repo: &RepoHandle, branch: &str, files: &[(&str, &str)], message: &str) -> String {
        self.rt.block_on(self.emu.commit_files(repo, branch, files, message)).unwrap()
    }

    /// The commit `branch` of `repo` points at.
    pub fn tip(&self, repo: &RepoHandle, branch: &str) -> String {
        let out = std::process::Command::new("git")
            .current_dir(&repo.path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["rev-parse", &format!("refs/heads/{branch}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// A PR from `branch` whose calc.sh is `calc`; returns its number.
    pub fn pr(&self, repo: &RepoHandle, branch: &str, calc: &str) -> u64 {
        self.commit(repo, branch, &[("calc.sh", calc)], &format!("{branch}: change calc.sh"));
        self.rt.block_on(self.emu.open_pr(repo, branch, "main", branch)).unwrap()
    }

    /// A PR from `branch` with `files` committed on top of `main` as it is now; its number.
    pub fn open_pr_with(&self, repo: &RepoHandle, branch: &str, files: &[(&str, &str)]) -> u64 {
        self.commit(repo, branch, files, branch);
        self.rt.block_on(self.emu.open_pr(repo, branch, "main", branch)).unwrap()
    }

    /// `forge --pr` of `repo`'s PR `n` in a new cycle `<name>.json` with `commands` (a commands
    /// file's text): its JSON. The run must complete (exit 0 or 1).
    pub fn forge_new(&self, name: &str, repo: &str, n: u64, commands: &str) -> serde_json::Value {
        let file = self.path(&format!("{name}-commands.json"));
        std::fs::write(&file, commands).unwrap();
        let state = format!("{name}.json");
        self.cycle(&state, &[]);
        let pr = format!("{repo}#{n}");
        let run = self.run(&["forge", "--pr", &pr, "--state", &state, "--commands-json", file.to_str().unwrap()]);
        assert!(run.code == 0 || run.code == 1, "{}\n{}", run.stdout, run.stderr);
        run.json()
    }

    pub fn inject(&self, fault: Fault) {
        self.emu.inject(fault);
    }

    /// Bodies of the PR's comments.
    pub fn comments(&self, repo: &RepoHandle, number: u64) -> Vec<String> {
        self.emu.comments(repo, number).into_iter().map(|c| c.body).collect()
    }

    pub fn requests_to(&self, needle: &str) -> usize {
        self.emu.requests().iter().filter(|r| r.path.contains(needle)).count()
    }

    /// Starts a cycle already past its first `sent` (WebGPT has the prompt).
    pub fn cycle(&self, state: &str, extra: &[&str]) {
        let run = self.sb.start(state, extra);
        assert_eq!(run.code, 0, "{}", run.stdout);
        assert_eq!(self.sb.run(&["sent", "--state", state]).code, 0);
    }

    pub fn forge_pr(&self, state: &str, pr: &str, extra: &[&str]) -> Run {
        let mut args = vec!["forge", "--pr", pr, "--state", state, "--commands-json", "commands.json"];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.sb.path(rel)
    }

    /// A shell line for a real terminal (tmux) running forgeloop `args` on this world's home,
    /// config and emulator: its JSON goes to `out.json`, then `EXIT=<code>` is printed.
    pub fn terminal(&self, args: &str) -> String {
        self.terminal_line(&format!("{args} > out.json"))
    }

    /// The same for a command that draws on the terminal itself (`tui`): nothing redirected.
    pub fn terminal_line(&self, args: &str) -> String {
        use super::tmux::sh_quote;
        format!(
            "cd {} && FORGELOOP_HOME={} FORGELOOP_REGISTRY={} XDG_CONFIG_HOME={} FORGELOOP_GITHUB_API={} GH_TOKEN={} {} {args}; echo EXIT=$?; sleep 30",
            sh_quote(&self.sb.dir.path().display().to_string()),
            sh_quote(&self.sb.home().display().to_string()),
            sh_quote(&self.path("registry").display().to_string()),
            sh_quote(&self.path("xdg-config").display().to_string()),
            sh_quote(&self.emu.api_base()),
            sh_quote(&self.token),
            sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
        )
    }

    /// Writes the person's config file (`$XDG_CONFIG_HOME/forgeloop/config.toml`).
    pub fn config(&self, toml: &str) {
        let dir = self.path("xdg-config").join("forgeloop");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    /// A directory test commands may write to (tests grant it with `write_paths`): the
    /// sandbox hides everything else outside the checkout.
    pub fn shared_dir(&self) -> PathBuf {
        let dir = self.sb.path("shared");
        std::fs::create_dir_all(&dir).unwrap();
        // Writable by the account tests run as when forgeloop is root (`[runner] run_as`).
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        dir
    }

    /// An in-process context on this world's home and emulator; its sandbox helper is the
    /// forgeloop binary (in-process, `/proc/self/exe` would be the test binary).
    pub fn ctx(&self) -> forgeloop::cycle::Ctx {
        let settings =
            forgeloop::cycle::context::Settings::for_home(self.sb.home()).with_github_api(&self.emu.api_base());
        let mut ctx = forgeloop::cycle::Ctx::new(settings, None).unwrap();
        ctx.sandbox.helper = PathBuf::from(env!("CARGO_BIN_EXE_forgeloop"));
        ctx
    }
}
