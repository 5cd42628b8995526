//! What `webgpt_pr_test` may run and where (design §12.11 item 2: the reference server ran
//! any PR anyone named). Only profiles named in config `mcp.profiles` run, never caller
//! commands; only repositories bound in the Project registry or listed in config
//! `mcp.allowed_repositories` are tested. Every check here is local: a refusal happens
//! before any network call.

use std::collections::BTreeMap;

use crate::config::McpConfig;
use crate::cycle::commands;
use crate::cycle::projects::{Registry, RepoKey};
use crate::domain::commands::{CommandsError, CommandsProfile};
use crate::domain::pr_ref::RepoName;
use crate::redact::Redactor;

/// Why `webgpt_pr_test` refuses a request; decided locally, before any network call.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The config names no test profiles, so nothing may run.
    #[error(
        "no test profiles are configured, so the MCP server runs nothing: add one to the forgeloop config, e.g. [mcp.profiles.smoke] commands = [[\"git\", \"diff\", \"--check\"]]"
    )]
    NoProfiles,
    /// The requested profile is not in the config.
    #[error("unknown test profile {name:?}; the configured profiles are: {known}")]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The configured names, joined for the message.
        known: String,
    },
    /// The configured profile is not an acceptable commands profile.
    #[error(
        "the config's test profile {name:?} cannot be run: {reason}; fix [mcp.profiles.{name}] in the forgeloop config"
    )]
    BadProfile {
        /// The profile's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The PR's base repository is neither bound in the registry nor allowed in the config.
    #[error(
        "{repository} is not allowed: the MCP server only tests repositories bound in the Project registry (`forgeloop project bind`) or listed in the config's mcp.allowed_repositories{note}"
    )]
    RepositoryNotAllowed {
        /// The repository, `OWNER/REPO`.
        repository: String,
        /// Extra words for the message (an unusable registry record), or empty.
        note: String,
    },
    /// The PR's code comes from a fork that is not allowed itself.
    #[error(
        "{pr}'s code comes from {head}, which is not allowed: the MCP server only tests PRs whose head repository is the base repository or is itself bound or listed in mcp.allowed_repositories"
    )]
    HeadNotAllowed {
        /// The PR, as `OWNER/REPO#N`.
        pr: String,
        /// The head repository, `OWNER/REPO`.
        head: String,
    },
    /// The PR's head repository was deleted, so whose code it is cannot be checked.
    #[error(
        "{pr}'s head repository was deleted, so whose code it is cannot be checked; the MCP server does not test it (a person can run `forgeloop test`)"
    )]
    HeadDeleted {
        /// The PR, as `OWNER/REPO#N`.
        pr: String,
    },
}

/// Why a repository may be tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// Bound to a ChatGPT Project in the registry.
    Registry,
    /// Listed in config `mcp.allowed_repositories`.
    Config,
}

/// What `webgpt_pr_test` may run and where: the config's profiles and allowed repositories,
/// and the registry's bindings.
#[derive(Debug, Clone)]
pub struct Policy {
    profiles: BTreeMap<String, CommandsProfile>,
    allowed: Vec<String>,
    registry: Registry,
}

impl Policy {
    /// The policy of `config`'s `[mcp]` table, with `registry` for the bound repositories.
    pub fn new(config: &McpConfig, registry: Registry) -> Policy {
        Policy { profiles: config.profiles.clone(), allowed: config.allowed_repositories.clone(), registry }
    }

    /// The configured profile names, sorted.
    pub fn profile_names(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    /// What the server may test and how (`forge_profiles`): each profile with what it runs —
    /// setup and test commands as argv arrays, the tests' network mode, the timeout — and the
    /// repositories allowed, with why.
    pub fn describe(&self) -> serde_json::Value {
        let argvs = |specs: &[crate::domain::commands::CommandSpec]| -> Vec<Vec<String>> {
            specs.iter().map(|s| s.argv.clone()).collect()
        };
        let profiles: Vec<serde_json::Value> = self
            .profiles
            .iter()
            .map(|(name, p)| {
                serde_json::json!({
                    "name": name,
                    "setup": argvs(&p.setup),
                    "setup_network": (!p.setup.is_empty())
                        .then_some("allowlist: only the hosts the person allowed ([network] allow and the repository's own list)"),
                    "commands": argvs(&p.commands),
                    "network": p.network.as_str(),
                    "timeout_s": p.timeout_s,
                    "executor": p.executor.as_str(),
                })
            })
            .collect();
        let mut repositories: Vec<serde_json::Value> = self
            .registry
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter(|l| l.outcome.is_ok())
            .map(|l| serde_json::json!({"repository": l.repository, "allowed_by": "registry"}))
            .collect();
        for entry in &self.allowed {
            if let Ok(key) = RepoKey::parse(entry.trim())
                && !repositories
                    .iter()
                    .any(|r| r["repository"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(entry.trim())))
            {
                repositories.push(serde_json::json!({"repository": key.to_string(), "allowed_by": "config"}));
            }
        }
        serde_json::json!({ "profiles": profiles, "repositories": repositories })
    }

    /// The commands of a configured profile (same formats as a commands file, accepted by the
    /// same rule: nothing in it that `redactor` would mask).
    pub fn profile(&self, name: &str, redactor: &Redactor) -> Result<CommandsProfile, PolicyError> {
        if self.profiles.is_empty() {
            return Err(PolicyError::NoProfiles);
        }
        let Some(profile) = self.profiles.get(name) else {
            return Err(PolicyError::UnknownProfile { name: name.to_owned(), known: self.profile_names().join(", ") });
        };
        commands::accept(redactor, profile.clone())
            .map_err(|e: CommandsError| PolicyError::BadProfile { name: name.to_owned(), reason: e.to_string() })
    }

    /// Whether `repo` may be tested: bound in the registry, else listed in config. A registry
    /// record that cannot be read does not count as bound.
    pub fn repository(&self, repo: &RepoName) -> Result<Allowed, PolicyError> {
        let refused = |note: String| PolicyError::RepositoryNotAllowed { repository: repo.full_name(), note };
        let Ok(key) = RepoKey::parse(&repo.full_name()) else {
            return Err(refused(String::new()));
        };
        let registry = self.registry.lookup(&key);
        if matches!(registry, Ok(Some(_))) {
            return Ok(Allowed::Registry);
        }
        let mut invalid = Vec::new();
        for entry in &self.allowed {
            match RepoKey::parse(entry.trim()) {
                Ok(listed) if listed == key => return Ok(Allowed::Config),
                Ok(_) => {}
                Err(_) => invalid.push(format!("{entry:?}")),
            }
        }
        let mut note = String::new();
        if let Err(err) = registry {
            note.push_str(&format!(" (its registry record is unusable: {err})"));
        }
        if !invalid.is_empty() {
            note.push_str(&format!(
                " (ignored entries of mcp.allowed_repositories that are not OWNER/REPO: {})",
                invalid.join(", ")
            ));
        }
        Err(refused(note))
    }

    /// After the PR's metadata is known: the code under test comes from its head repository,
    /// which must be the base repository or allowed itself (a fork of an allowed public
    /// repository can be anyone's).
    pub fn head(&self, pr: &str, base: &RepoName, head: Option<&RepoName>) -> Result<(), PolicyError> {
        let Some(head) = head else {
            return Err(PolicyError::HeadDeleted { pr: pr.to_owned() });
        };
        if head.same_as(base) || self.repository(head).is_ok() {
            Ok(())
        } else {
            Err(PolicyError::HeadNotAllowed { pr: pr.to_owned(), head: head.full_name() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(dir: &std::path::Path, toml_text: &str) -> Policy {
        let config: crate::config::Config = toml::from_str(toml_text).unwrap();
        Policy::new(&config.mcp, Registry::new(dir.join("registry")))
    }

    fn repo(text: &str) -> RepoName {
        RepoName::parse(text).unwrap()
    }

    const CONFIG: &str = r#"
[mcp]
allowed_repositories = ["Acme/Widget", "not a repo"]
[mcp.profiles.smoke]
commands = [["git", "diff", "--check"]]
[mcp.profiles.default]
commands = [["bun", "test"], {argv = ["bun", "run", "typecheck"], timeout_s = 60}]
"#;

    #[test]
    fn profiles_come_from_config_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = policy(dir.path(), CONFIG);
        assert_eq!(p.profile("smoke", &Redactor::default()).unwrap().commands[0].argv, ["git", "diff", "--check"]);
        let default = p.profile("default", &Redactor::default()).unwrap();
        assert_eq!(default.commands.len(), 2);
        assert_eq!(default.commands[1].timeout_s, Some(60));
        let unknown = p.profile("everything", &Redactor::default()).unwrap_err().to_string();
        assert!(unknown.contains("default, smoke"), "{unknown}");
        // A profile that is not a commands profile fails the config's load, naming it.
        let broken = toml::from_str::<crate::config::Config>("[mcp.profiles.broken]\ncommands = \"rm -rf /\"\n");
        let err = broken.unwrap_err().to_string();
        assert!(err.contains("[mcp.profiles.broken] is not a valid commands profile"), "{err}");
        let none = policy(dir.path(), "");
        assert!(matches!(none.profile("smoke", &Redactor::default()), Err(PolicyError::NoProfiles)));
    }

    #[test]
    fn a_github_checks_profile_is_accepted_as_a_named_profile() {
        let dir = tempfile::tempdir().unwrap();
        let p = policy(dir.path(), "[mcp.profiles.ci]\nexecutor = \"github-checks\"\nchecks = [\"test\"]\n");
        let profile = p.profile("ci", &Redactor::default()).unwrap();
        assert_eq!(profile.executor, crate::domain::commands::Executor::GithubChecks);
        assert!(profile.commands.is_empty());
    }

    #[test]
    fn a_profile_with_a_secret_literal_is_refused_without_echoing_it() {
        let dir = tempfile::tempdir().unwrap();
        // Made at run time: a password-shaped value, never a committed literal. Its entropy must
        // not hang on the pid (an all-digit pid hash plus a repeated tail once fell under the
        // generic rule's entropy floor and was not masked, failing CI one run in many).
        let alphabet = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
        let mut state = u64::from(std::process::id()) ^ 0x9e37_79b9_7f4a_7c15;
        let secret: String = (0..28)
            .map(|i| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                // Each character distinct from its neighbours' pattern: position mixed in; every
                // third a digit, so no draw is letters only.
                let pool: &[u8] = if i % 3 == 2 { b"23456789" } else { alphabet };
                pool[((state >> 33) as usize + i * 7) % pool.len()] as char
            })
            .collect();
        let toml_text =
            format!("[mcp.profiles.leaky]\ncommands = [{{argv = [\"make\"], env = {{DB_PASSWORD = \"{secret}\"}}}}]\n");
        let refused = policy(dir.path(), &toml_text).profile("leaky", &Redactor::default()).unwrap_err();
        let text = refused.to_string();
        assert!(matches!(refused, PolicyError::BadProfile { .. }), "{text}");
        assert!(text.contains("env DB_PASSWORD") && text.contains("env_passthrough"), "{text}");
        assert!(!text.contains(&secret), "{text}");
    }

    #[test]
    fn repositories_must_be_listed_or_bound() {
        let dir = tempfile::tempdir().unwrap();
        let p = policy(dir.path(), CONFIG);
        assert_eq!(p.repository(&repo("acme/widget")).unwrap(), Allowed::Config);
        let refused = p.repository(&repo("evil/widget")).unwrap_err().to_string();
        assert!(refused.contains("evil/widget is not allowed"), "{refused}");
        assert!(refused.contains("\"not a repo\""), "invalid entries are named: {refused}");

        let registry = Registry::new(dir.path().join("registry"));
        let key = RepoKey::parse("bound/repo").unwrap();
        registry.bind(&key, "https://chatgpt.com/g/g-p-0123456789abcdef0123456789abcdef/project", "Bound").unwrap();
        assert_eq!(p.repository(&repo("Bound/Repo")).unwrap(), Allowed::Registry);
    }

    #[test]
    fn fork_heads_must_be_allowed_too() {
        let dir = tempfile::tempdir().unwrap();
        let p = policy(dir.path(), CONFIG);
        let base = repo("acme/widget");
        assert!(p.head("acme/widget#1", &base, Some(&repo("ACME/widget"))).is_ok());
        assert!(matches!(
            p.head("acme/widget#1", &base, Some(&repo("stranger/widget"))),
            Err(PolicyError::HeadNotAllowed { .. })
        ));
        assert!(matches!(p.head("acme/widget#1", &base, None), Err(PolicyError::HeadDeleted { .. })));
    }
}
