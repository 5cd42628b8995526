//! What every use case needs: where files live, the redactor, the clock, accepted hosts.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::config::Config;
use crate::domain::pr_ref::WebHosts;
use crate::redact::Redactor;
use crate::store::layout::{CyclePaths, Home};

use crate::error::{Error, Result};
use crate::github::{GithubClient, GithubConfig};

/// What the composition root and the front ends name of the adapters' settings: GitHub's API
/// base and web host, and libgit2's one-time start (before any thread).
pub use crate::checkout::init_git_early;
pub use crate::github::{DEFAULT_API_BASE, web_base_for};

/// Where use cases get the time from, so tests and snapshots can fix it.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The real clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that always says the same time (tests, snapshots).
pub struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

/// The redactor of a forgeloop process: the GitHub token in use (from the environment, or
/// `token` when it was discovered elsewhere), every credential-like environment value, and the
/// user's home directory.
pub fn process_redactor(token: Option<&str>) -> Redactor {
    let mut builder = Redactor::builder().env_vars(std::env::vars());
    for name in ["GH_TOKEN", "GITHUB_TOKEN"] {
        if let Ok(value) = std::env::var(name) {
            builder = builder.known_value("github-token", &value);
        }
    }
    if let Some(value) = token {
        builder = builder.known_value("github-token", value);
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        builder = builder.home_dir(std::path::Path::new(&home));
    }
    builder.build()
}

/// What a front end resolved from its command line, environment and config file, before
/// anything is built from it: the one input of [`Ctx::new`].
#[derive(Debug, Clone)]
pub struct Settings {
    /// The forgeloop home (cycles, index, mirrors, runs).
    pub home: PathBuf,
    /// The ChatGPT Project registry directory.
    pub registry: PathBuf,
    /// The parsed config file (the default when there is none).
    pub config: Config,
    /// The config file in use, if any.
    pub config_path: Option<PathBuf>,
    /// The GitHub REST API base.
    pub github_api: String,
}

impl Settings {
    /// A home with the default registry beside it, no config, github.com: tests and the demo.
    pub fn for_home(home: PathBuf) -> Settings {
        Settings {
            registry: home.join("registry"),
            home,
            config: Config::default(),
            config_path: None,
            github_api: crate::github::DEFAULT_API_BASE.to_owned(),
        }
    }

    /// The same, against another GitHub API (the emulator).
    pub fn with_github_api(mut self, api_base: &str) -> Settings {
        self.github_api = api_base.to_owned();
        self
    }

    /// The GitHub token for this API, looked for in design §2's order (`GH_TOKEN`,
    /// `GITHUB_TOKEN`, `gh auth token`, config `[github] token_command`): found before the
    /// context is built, so its redactor masks it from the start. `None` when there is none
    /// (commands that need one then say `NO_TOKEN`). May run `gh` (bounded by a short timeout).
    pub fn find_token(&self) -> Option<crate::github::token::Token> {
        let web_host = crate::github::web_host_for(&self.github_api).ok()?;
        let env = |name: &str| std::env::var(name).ok();
        crate::github::token::discover(&env, &web_host, self.config.github.token_command.as_deref())
    }
}

/// What every use case is given: the home and registry, the config, the redactor, the clock,
/// the accepted GitHub hosts, the sandbox settings and the token.
#[derive(Clone)]
pub struct Ctx {
    /// The forgeloop home and the paths inside it.
    pub home: Home,
    /// The ChatGPT Project registry directory.
    pub registry: PathBuf,
    /// The config file as it was when the process started.
    pub config: Config,
    /// Masks the token, credential-like environment values, the home path and `[[redact.rules]]`.
    pub redactor: Redactor,
    /// The time source; [`SystemClock`] except in tests.
    pub clock: Arc<dyn Clock>,
    /// The web hosts a PR URL may name: github.com and the configured API's web host.
    pub hosts: WebHosts,
    /// The GitHub REST API base (`--github-api`, `FORGELOOP_GITHUB_API`, config).
    pub github_api: String,
    /// How test commands are sandboxed (config `[runner]`).
    pub sandbox: crate::sandbox::Settings,
    /// The config file in use, if any: never visible to a test.
    pub config_path: Option<PathBuf>,
    /// The GitHub token found when the context was built ([`Settings::find_token`]).
    pub token: Option<crate::github::token::Token>,
}

impl Ctx {
    /// The composition root (design §2): settings resolved, token found, then the redactor
    /// (the process's secrets, the token, the config's `[[redact.rules]]`), the sandbox's
    /// settings (config `[runner]`) and the accepted web hosts — built once; nothing patches
    /// a context afterwards.
    pub fn new(settings: Settings, token: Option<crate::github::token::Token>) -> Result<Ctx> {
        use crate::config::SandboxSwitch;
        let config = settings.config;
        let redactor = process_redactor(token.as_ref().map(|t| t.value.as_str())).with_user_rules(&config.redact.rules);
        let home = Home::new(std::path::absolute(&settings.home).unwrap_or(settings.home));
        let mut sandbox = crate::sandbox::Settings::new(home.runs_dir());
        sandbox.enabled = config.runner.sandbox != Some(SandboxSwitch::Off);
        if let Some(max) = config.runner.max_processes {
            sandbox.max_processes = max;
        }
        if let Some(name) = &config.runner.run_as {
            sandbox.run_as =
                crate::sandbox::resolve_account(name).map_err(|e| Error::Invalid(format!("config [runner] {e}")))?;
        }
        let web_host = crate::github::web_host_for(&settings.github_api)?;
        Ok(Ctx {
            home,
            registry: settings.registry,
            config,
            redactor,
            clock: Arc::new(SystemClock),
            hosts: WebHosts::with(Some(&web_host)),
            github_api: settings.github_api,
            sandbox,
            config_path: settings.config_path,
            token,
        })
    }

    /// A context rooted at `home` with the default registry beside it, no token, github.com:
    /// for tests and the demo (`Ctx::new(Settings::for_home(home), None)`).
    pub fn for_home(home: PathBuf) -> Ctx {
        let settings = Settings::for_home(home.clone());
        Ctx::new(settings, None).unwrap_or_else(|_| Ctx {
            sandbox: crate::sandbox::Settings::new(home.join("run")),
            registry: home.join("registry"),
            home: Home::new(home),
            config: Config::default(),
            redactor: Redactor::default(),
            clock: Arc::new(SystemClock),
            hosts: WebHosts::default(),
            github_api: crate::github::DEFAULT_API_BASE.to_owned(),
            config_path: None,
            token: None,
        })
    }

    /// The cycle's next step as every front end shows it: `unsandboxed` is said when the
    /// person turned the sandbox off.
    pub fn next_step(
        &self,
        state: &crate::domain::state::CycleState,
        state_ref: &str,
    ) -> crate::domain::next::NextStep {
        // The first run's setup proposal reads the repository's lockfiles from its mirror (as
        // forgeloop last fetched it); nothing is fetched for it.
        let first_run = state.commands.is_none() && state.needs_network.is_none();
        let reported = state.last_reply.as_ref().and_then(|r| r.pr.as_deref()).and_then(|pr| pr.split_once('#'));
        let repository = reported.map(|(repo, _)| repo.to_owned()).or_else(|| state.effective_repository());
        let lockfiles = match (first_run, repository) {
            (true, Some(repository)) => crate::domain::pr_ref::RepoName::parse(&repository)
                .ok()
                .and_then(|repo| crate::checkout::lockfiles::last_fetched(&self.home.mirrors_dir(), &repo))
                .map(|(_, found)| found)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let mut step = crate::domain::next::next_step_knowing(state, state_ref, &lockfiles);
        if !self.sandbox.enabled {
            step.sandbox = Some("unsandboxed");
        }
        step
    }

    /// The person's `[network]` settings as their config file says now: the control room and
    /// the MCP server live long, and the person may have allowed hosts since they started
    /// (design §5.6). A file that no longer loads leaves the settings this process started with.
    pub fn network_config(&self) -> crate::config::NetworkConfig {
        self.config_path
            .as_deref()
            .and_then(|path| crate::config::Config::load(path, false).ok())
            .map_or_else(|| self.config.network.clone(), |config| config.network)
    }

    /// forgeloop's own files, which no test may see or be granted: its home (cycles, mirrors,
    /// logs, task-space index), the registry and the config.
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.home.root().to_path_buf(), self.registry.clone()];
        paths.extend(self.config_path.clone());
        paths
    }

    /// RFC 3339 UTC with seconds, the format of every timestamp forgeloop writes.
    pub fn now(&self) -> String {
        self.clock.now().to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    /// The paths of the cycle `state_arg` names (a path, or a bare name under the home's cycles).
    pub fn cycle(&self, state_arg: &str) -> Result<CyclePaths> {
        Ok(CyclePaths::new(self.home.resolve_state(state_arg)?)?)
    }
}

/// GitHub access for one process: the REST client and the token git uses for https.
pub struct Engine {
    /// The REST client.
    pub github: GithubClient,
    /// The token git sends over https (`None` for public repositories without one).
    pub token: Option<String>,
}

impl Engine {
    /// Needs a tokio runtime (octocrab's client is built on it).
    pub fn connect(api_base: &str, token: Option<String>) -> Result<Engine> {
        let github = GithubClient::new(GithubConfig {
            api_base: api_base.to_owned(),
            token: token.clone(),
            ..GithubConfig::default()
        })?;
        Ok(Engine { github, token })
    }

    /// Connects to `ctx.github_api` with the token the context was built with; returns where
    /// it came from. Needs a tokio runtime.
    ///
    /// No token is [`Error::NoToken`], before any request: GitHub is never tried without one
    /// (it would fail later as an infrastructure failure, or on DNS, and never say that the
    /// token is what is missing).
    pub fn discover(ctx: &Ctx) -> Result<(Engine, &'static str)> {
        let Some(found) = &ctx.token else {
            let web_host = crate::github::web_host_for(&ctx.github_api)?;
            let env = |name: &str| std::env::var(name).ok();
            let token_command = ctx.config.github.token_command.as_deref();
            return Err(Error::NoToken(crate::github::token::Missing::seen(&env, &web_host, token_command)));
        };
        Ok((Engine::connect(&ctx.github_api, Some(found.value.clone()))?, found.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::{RuleSpec, UserRules};

    /// The config's rules reach the process redactor, and stay when a discovered token
    /// makes it rebuilt.
    #[test]
    fn user_rules_and_the_token_reach_the_redactor_of_a_new_context() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = Settings::for_home(dir.path().to_path_buf());
        let spec = RuleSpec {
            id: "acme-token".into(),
            regex: r"(acme_[A-Za-z0-9]{20})\b".into(),
            keywords: vec!["acme_".into()],
            entropy: None,
        };
        settings.config.redact.rules = UserRules::compile(&[spec]).unwrap();
        let token = "k9Xq2LmZ7vB4nR8tW3yH";
        let found = crate::github::token::Token { value: token.into(), source: "GH_TOKEN" };
        let ctx = Ctx::new(settings, Some(found)).unwrap();
        let secret = "acme_Zq8vN3kL7xB2mR5tW9pQ";
        let text = format!("{token} {secret}");
        assert_eq!(ctx.redactor.redact(&text), "[REDACTED:github-token] [REDACTED:acme-token]");
    }
}
