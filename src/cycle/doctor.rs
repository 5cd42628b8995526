//! `forgeloop doctor`'s use case: is this machine ready to run the loop? Each check says ok or
//! what is wrong and how to fix it; whether there is a terminal is information, never a
//! problem (an agent has none and needs none). The front end prints it (exit 0 healthy, else 2).

use std::path::Path;

use serde::Serialize;

use crate::checkout;
use crate::domain::word::Word;
use crate::error::Error;
use crate::registry::Registry;
use crate::store::{private, tighten};

use super::context::{Ctx, Engine};

/// One check: what was found and, for a problem, what to do.
#[derive(Debug, Serialize)]
pub struct Check {
    /// The check's name (`git`, `token`, `home`, …).
    pub name: &'static str,
    /// Whether it passed (information-only checks always do).
    pub ok: bool,
    /// Information only: never a problem, whatever it says (the terminal check).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub info: bool,
    /// What was found, in a sentence.
    pub detail: String,
    /// For a problem: what to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// `doctor`'s answer: every check, and whether all passed.
#[derive(Debug, Serialize)]
pub struct Diagnosis {
    /// `OK` when every check passed, else `PROBLEMS`.
    pub status: Word,
    /// Every check, in the order they ran.
    pub checks: Vec<Check>,
}

impl Diagnosis {
    /// Whether every check passed (`doctor` then exits 0).
    pub fn healthy(&self) -> bool {
        self.status == Word::Ok
    }
}

fn ok(name: &'static str, detail: impl Into<String>) -> Check {
    Check { name, ok: true, info: false, detail: detail.into(), fix: None }
}

fn problem(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { name, ok: false, info: false, detail: detail.into(), fix: Some(fix.into()) }
}

/// The coordinator agent runs `doctor` without a terminal, and needs none: only `tui` and the
/// human-only commands do. So the terminal is information, never a problem.
fn terminal_check(is_terminal: bool) -> Check {
    let detail = if is_terminal {
        "stdin and stdout are a terminal: `tui`, `confirm`, `unblock` and `extend` can run here"
    } else {
        "no terminal here (as for an agent): the agent's commands need none; human-only commands need a terminal — a person runs `forgeloop tui`, `confirm`, `unblock` and `extend` in their own"
    };
    Check { name: "terminal", ok: true, info: true, detail: detail.into(), fix: None }
}

/// Every check, in the order a person fixes them; `at_terminal` is the front end's to say.
/// Asks GitHub with the context's token (needs a tokio runtime).
pub async fn diagnose(ctx: &Ctx, at_terminal: bool) -> Diagnosis {
    let mut checks = vec![git_check(), dir_check("home", ctx.home.root()), dir_check("cycles", &ctx.home.cycles_dir())];
    checks.push(permissions_check(ctx.home.root()));
    checks.push(registry_check(ctx));
    checks.push(sandbox_check(ctx));
    checks.push(config_check(ctx));
    checks.push(network_check(&ctx.network_config()));
    checks.push(protect_check(&ctx.config.protect));
    checks.push(connector_check(ctx));
    checks.push(mirrors_check(ctx));
    checks.push(caches_check(ctx));
    checks.extend(github_checks(ctx).await);
    checks.push(terminal_check(at_terminal));
    let healthy = checks.iter().all(|c| c.ok);
    Diagnosis { status: if healthy { Word::Ok } else { Word::Problems }, checks }
}

fn git_check() -> Check {
    let ready = checkout::https_ready();
    let detail = format!(
        "libgit2 {}; https through forgeloop's transport (rustls): {}",
        checkout::libgit2_version(),
        if ready { "ready" } else { "not registered" }
    );
    if ready {
        ok("git", detail)
    } else {
        problem(
            "git",
            detail,
            "git's http transport could not be registered, so fetches over https fail; reinstall forgeloop (`cargo install --locked --path .`) and report it if this stays",
        )
    }
}

/// The directory exists (or can be created, 0700) and a file can be written in it.
fn dir_check(name: &'static str, dir: &Path) -> Check {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let result = private::create_dir_all(dir)
        .and_then(|()| private::new_file().write(true).create_new(true).open(&probe))
        .and_then(|_| std::fs::remove_file(&probe));
    match result {
        Ok(()) => ok(name, format!("{} is writable", dir.display())),
        Err(err) => problem(
            name,
            format!("{}: {err}", dir.display()),
            "fix the permissions, or choose another directory with --home / FORGELOOP_HOME",
        ),
    }
}

/// Whether the home is private (design §2.4), judged as the next command would judge it, so
/// that "run a command" really is the fix: its direct entries, and when no walk is recorded
/// yet, all of it. Changes nothing.
fn permissions_check(home: &Path) -> Check {
    const NAME: &str = "permissions";
    let fix = "run any forgeloop command that uses the home (`forgeloop list`, say): it makes the home's directories \
               0700 and files 0600 once (mirrors' objects stay readable for sandboxed runs) and records that in \
               permissions.json";
    let named = |entries: &[(std::path::PathBuf, u32)]| {
        entries.iter().map(|(path, mode)| format!("{} ({mode:o})", path.display())).collect::<Vec<_>>().join(", ")
    };
    if !home.is_dir() {
        return ok(NAME, format!("{} does not exist yet; forgeloop creates it 0700", home.display()));
    }
    let loose = tighten::top_level_loose(home);
    if !loose.is_empty() {
        return problem(NAME, format!("readable by other accounts: {}", named(&loose)), fix);
    }
    if tighten::due(home).is_some() {
        let survey = tighten::survey_tree(home, &tighten::shared_with_runs);
        if survey.loose > 0 {
            return problem(
                NAME,
                format!(
                    "{} {} readable by other accounts (not made private yet: no {}): {}",
                    survey.loose,
                    if survey.loose == 1 { "entry is" } else { "entries are" },
                    tighten::MARKER,
                    named(&survey.examples)
                ),
                fix,
            );
        }
        return ok(
            NAME,
            format!("{} is private (directories 0700, files 0600); the next command records it", home.display()),
        );
    }
    match tighten::read_marker(home) {
        Some(marker) if marker.failed > 0 => problem(
            NAME,
            format!(
                "{} {} could not be made private on {}: {}",
                marker.failed,
                if marker.failed == 1 { "entry" } else { "entries" },
                marker.checked_at,
                marker.errors.join("; ")
            ),
            format!(
                "as their owner, `chmod 700` each directory and `chmod 600` each file named, then delete {} so the \
                 next command checks again",
                home.join(tighten::MARKER).display()
            ),
        ),
        marker => ok(
            NAME,
            format!(
                "{} is private (directories 0700, files 0600; mirrors' objects readable for sandboxed runs){}",
                home.display(),
                marker
                    .map(|m| format!("; checked {}, {} made private then", m.checked_at, m.changed))
                    .unwrap_or_default()
            ),
        ),
    }
}

/// Builds a sandbox the way a run would and runs `true` in it (design §5.6).
fn sandbox_check(ctx: &Ctx) -> Check {
    if !ctx.sandbox.enabled {
        return problem(
            "sandbox",
            "off in config.toml ([runner] sandbox = \"off\"): PR code runs unsandboxed, with your files and network",
            "remove `sandbox = \"off\"` from the [runner] section of config.toml",
        );
    }
    let profile = crate::domain::commands::CommandsProfile::of(Vec::new());
    match crate::sandbox::prepare(
        &ctx.sandbox,
        &profile,
        crate::domain::egress::NetworkMode::Off,
        &crate::runner::process_env(),
        &ctx.protected_paths(),
    ) {
        Ok(plan) => {
            let info = plan.info();
            let abi = info.landlock_abi.map_or_else(|| "no Landlock".to_owned(), |abi| format!("Landlock ABI {abi}"));
            let limit = info.process_limit.as_deref().unwrap_or("none");
            let detail = format!("{} tier works here ({abi}; processes bounded by {limit})", info.kind);
            if limit == "none" {
                problem(
                    "sandbox",
                    detail,
                    "as root the kernel ignores RLIMIT_NPROC: make the pids cgroup controller writable, or run forgeloop as an ordinary user",
                )
            } else {
                ok("sandbox", detail)
            }
        }
        Err(crate::sandbox::SandboxError::Unavailable { causes, fixes }) => problem(
            "sandbox",
            format!("no sandbox can be built here, so no PR would be tested: {}", causes.join("; ")),
            fixes.join("; "),
        ),
        Err(other) => problem("sandbox", other.to_string(), "see the message"),
    }
}

/// The person's `[network]` entries for addresses that are not public (loopback, private,
/// link-local, …): forgeloop never proposes one, so each was written by hand; still ok (the
/// person may trust a local service), but named, since every PR's tests may reach it.
/// Which config shapes the runs: information.
fn config_check(ctx: &Ctx) -> Check {
    let detail = match &ctx.config_path {
        Some(path) if path.is_file() => {
            format!("{} shapes the runs (below: network, protect, cache, connector)", path.display())
        }
        Some(path) => format!(
            "no config file at {}: the defaults (tests without network, no protected paths, caches up to {:.0} GB, no connector)",
            path.display(),
            ctx.config.cache.max_bytes() as f64 / 1e9
        ),
        None => "no config file: the defaults".to_owned(),
    };
    Check { name: "config", ok: true, info: true, detail, fix: None }
}

/// What the tests may reach: every allow list, and a warning for an address that is not
/// public (each was written by hand).
fn network_check(network: &crate::config::NetworkConfig) -> Check {
    let own = network.repositories.iter().map(|(repo, own)| (format!("[network.repositories.\"{repo}\"]"), &own.allow));
    let mut named = Vec::new();
    let mut lists = Vec::new();
    for (table, list) in std::iter::once(("[network]".to_owned(), &network.allow)).chain(own) {
        let entries: Vec<String> = list.entries().iter().map(ToString::to_string).collect();
        if !entries.is_empty() {
            lists.push(format!("{table} allow {}", entries.join(", ")));
        }
        for entry in list.entries() {
            if let Some(class) = entry.non_public() {
                named.push(format!("{entry} ({class}) in {table}"));
            }
        }
    }
    let open: Vec<&str> = network.repositories.iter().filter(|(_, r)| r.open).map(|(repo, _)| repo.as_str()).collect();
    if !open.is_empty() {
        lists.push(format!("\"open\" permitted for {}", open.join(", ")));
    }
    let shown =
        if lists.is_empty() { "nothing is allowed: every run has no network".to_owned() } else { lists.join("; ") };
    if named.is_empty() {
        return ok("network", format!("{shown}; no allow entry names an address that is not public"));
    }
    Check {
        name: "network",
        ok: true,
        info: false,
        detail: format!(
            "{shown}; warning: {} allow {} an address that is not public, which the tests of every PR it covers may reach: {}",
            named.len(),
            if named.len() == 1 { "entry names" } else { "entries name" },
            named.join("; ")
        ),
        fix: Some(
            "keep only those you trust (forgeloop never proposes such an entry: each was written by hand)".into(),
        ),
    }
}

/// What a passing PR may not change without a person's review: information.
fn protect_check(protect: &crate::config::ProtectConfig) -> Check {
    let mode = |m: Option<crate::domain::protect::ProtectMode>| match m.unwrap_or_default() {
        crate::domain::protect::ProtectMode::Hold => "hold",
        crate::domain::protect::ProtectMode::Flag => "flag",
    };
    let mut parts = vec![match protect.paths.as_slice() {
        [] => "[protect] paths: none for every repository".to_owned(),
        paths => format!("[protect] paths {} (mode {})", paths.join(", "), mode(protect.mode)),
    }];
    for (repo, own) in &protect.repositories {
        parts.push(format!("{repo} adds {} (mode {})", own.paths.join(", "), mode(own.mode.or(protect.mode))));
    }
    Check { name: "protect", ok: true, info: true, detail: parts.join("; "), fix: None }
}

/// The remote connector (`forgeloop serve`): which repositories it may test and with which
/// profile; a repository it may use without a profile that exists is a problem.
fn connector_check(ctx: &Ctx) -> Check {
    let connector = &ctx.config.connector;
    let configured =
        !connector.repositories.is_empty() || connector.default_profile.is_some() || !connector.profiles.is_empty();
    if !configured {
        return Check {
            name: "connector",
            ok: true,
            info: true,
            detail: "not set up: `forgeloop serve` tests nothing until [connector] lists repositories and names a profile (docs/connector.md)".into(),
            fix: None,
        };
    }
    let rows = super::connector::repositories(ctx);
    let mut shown = Vec::new();
    let mut missing = Vec::new();
    for row in &rows {
        match row.profile.as_deref() {
            Some(name) if ctx.config.mcp.profiles.contains_key(name) => {
                shown.push(format!("{} runs {name}", row.repository))
            }
            Some(name) => missing
                .push(format!("{} names the profile {name:?}, which [mcp.profiles] does not define", row.repository)),
            None => missing.push(format!("{} has no profile", row.repository)),
        }
    }
    let detail = match (rows.is_empty(), shown.is_empty()) {
        (true, _) => "no repository is allowed: list them in [connector] repositories".to_owned(),
        (false, true) => String::new(),
        (false, false) => shown.join("; "),
    };
    if missing.is_empty() {
        return ok("connector", detail);
    }
    problem(
        "connector",
        [detail, missing.join("; ")].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; "),
        "name a profile for each: [connector] default_profile = \"NAME\", or [connector.profiles] \"OWNER/REPO\" = \"NAME\", with [mcp.profiles.NAME] commands = [[...]] defined",
    )
}

/// The git mirrors: information (they are a cache), with what `forgeloop gc` would free.
fn mirrors_check(ctx: &Ctx) -> Check {
    let root = ctx.home.mirrors_dir();
    match checkout::survey_mirrors(&root, std::time::SystemTime::now()) {
        Ok(mirrors) => {
            let days = checkout::DEFAULT_UNUSED_DAYS;
            let total: u64 = mirrors.iter().map(|m| m.bytes).sum();
            let unused: Vec<_> = mirrors.iter().filter(|m| m.unused_days >= days).collect();
            let unused_bytes: u64 = unused.iter().map(|m| m.bytes).sum();
            let shallow = mirrors.iter().filter(|m| m.shallow).count();
            let detail = format!(
                "{} mirrors ({shallow} shallow), {} in {}; {} unused for {days}+ days ({}): `forgeloop gc` deletes those",
                mirrors.len(),
                mebibytes(total),
                root.display(),
                unused.len(),
                mebibytes(unused_bytes),
            );
            Check { name: "mirrors", ok: true, info: true, detail, fix: None }
        }
        Err(err) => {
            problem("mirrors", err.to_string(), "see the message; the mirrors are a cache, deleting them is safe")
        }
    }
}

/// The warm caches: information, with their size against `[cache] max_gb`.
fn caches_check(ctx: &Ctx) -> Check {
    let root = ctx.home.caches_dir();
    let usage = crate::cache::usage(&root);
    let max = ctx.config.cache.max_bytes();
    let repositories: std::collections::BTreeSet<&str> =
        usage.slots.iter().filter_map(|s| s.slot.rsplit_once('/').map(|(repo, _)| repo)).collect();
    let base = usage.slots.iter().filter(|s| s.slot.ends_with("/base")).count();
    let detail = format!(
        "{} in {} ({} repositories: {} base layers, {} cycle layers) of [cache] max_gb {:.1} GB: `forgeloop gc` trims the least recently used above that; a base layer is warmed again {} commits behind its branch ([cache] base_max_behind)",
        mebibytes(usage.bytes),
        root.display(),
        repositories.len(),
        base,
        usage.slots.len() - base,
        max as f64 / 1e9,
        ctx.config.cache.base_max_behind(),
    );
    Check { name: "caches", ok: true, info: true, detail, fix: None }
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn registry_check(ctx: &Ctx) -> Check {
    if !ctx.registry.exists() {
        return ok(
            "registry",
            format!("{} does not exist yet (created by the first `project bind`)", ctx.registry.display()),
        );
    }
    let records = Registry::new(ctx.registry.clone()).list();
    match records {
        Ok(listed) => {
            let invalid = listed.iter().filter(|r| r.outcome.is_err()).count();
            let detail = format!("{}: {} records, {invalid} invalid", ctx.registry.display(), listed.len());
            if invalid == 0 {
                ok("registry", detail)
            } else {
                problem(
                    "registry",
                    detail,
                    "run `forgeloop project list` to see the invalid records and fix or unbind them",
                )
            }
        }
        Err(err) => problem(
            "registry",
            err.to_string(),
            "check --registry / FORGELOOP_REGISTRY and the directory's permissions",
        ),
    }
}

async fn github_checks(ctx: &Ctx) -> Vec<Check> {
    use crate::github::GithubError as G;
    use crate::github::token::HOW_TO_GIVE_ONE;
    let (engine, source) = match Engine::discover(ctx) {
        Ok(found) => found,
        Err(Error::NoToken(missing)) => {
            return vec![
                problem(
                    "token",
                    format!(
                        "no GitHub token for {}; forgeloop looks, in order, at: {}",
                        missing.web_host,
                        missing.looked_at()
                    ),
                    HOW_TO_GIVE_ONE,
                ),
                problem(
                    "github",
                    format!("{} not checked: no token to ask it with", ctx.github_api),
                    format!("{HOW_TO_GIVE_ONE}; then run `forgeloop doctor` again"),
                ),
            ];
        }
        Err(err) => {
            return vec![problem(
                "github",
                err.to_string(),
                "check --github-api / FORGELOOP_GITHUB_API / config github.api (GitHub Enterprise: https://HOST/api/v3)",
            )];
        }
    };
    let mut checks = vec![ok("token", format!("found in {source}"))];
    let access = engine.github.access().await;
    match access {
        Ok(access) => {
            checks.push(ok("github", format!("{} reachable; authenticated as {}", ctx.github_api, access.login)));
            checks.push(match &access.scopes {
                Some(scopes) if !scopes.iter().any(|s| s == "repo") => problem(
                    "scopes",
                    format!("token scopes: {}", scopes.join(", ")),
                    "private repositories need the `repo` scope (or a fine-grained token with contents and pull requests access)",
                ),
                Some(scopes) => ok("scopes", format!("token scopes: {}", scopes.join(", "))),
                None => ok("scopes", "fine-grained token (no classic scopes reported)"),
            });
            checks.push(match (access.rate_remaining, access.rate_limit) {
                (Some(0), _) => problem(
                    "rate_limit",
                    format!("rate limit exhausted; resets at unix time {}", access.rate_reset.unwrap_or(0)),
                    "wait for the reset, or use another token",
                ),
                (Some(left), Some(limit)) => ok("rate_limit", format!("{left} of {limit} requests left")),
                _ => ok("rate_limit", "not reported"),
            });
        }
        Err(err) => {
            let fix = match &err {
                G::Unauthorized { .. } => format!(
                    "GitHub rejected the token from {source} (expired, revoked or mistyped): make a new one and {HOW_TO_GIVE_ONE}; then run `forgeloop doctor` again"
                ),
                G::Forbidden { .. } | G::NotFound { .. } => format!(
                    "give the token from {source} read access to your user and repositories (a classic token with `repo`, or a fine-grained one with Contents and Pull requests), or use another; then run `forgeloop doctor` again"
                ),
                G::RateLimited { .. } => "wait for the reset the message names, or use another token".to_owned(),
                G::Timeout { .. } | G::Unreachable { .. } => format!(
                    "check the network and any proxy, and that {} is the API you mean (--github-api / FORGELOOP_GITHUB_API / config github.api; GitHub Enterprise: https://HOST/api/v3); then run `forgeloop doctor` again",
                    ctx.github_api
                ),
                G::Server { .. } => {
                    "GitHub is having trouble: run `forgeloop doctor` again in a few minutes".to_owned()
                }
                _ => format!(
                    "check that {} is GitHub's API (--github-api / FORGELOOP_GITHUB_API / config github.api; GitHub Enterprise: https://HOST/api/v3); then run `forgeloop doctor` again",
                    ctx.github_api
                ),
            };
            checks.push(problem("github", err.to_string(), fix));
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn an_allow_entry_for_an_address_that_is_not_public_is_named() {
        let config: crate::config::NetworkConfig = toml::from_str(
            "allow = [\"registries\", \"151.101.0.223:443\"]\n[repositories.\"acme/widget\"]\nallow = [\"169.254.169.254:80\", \"127.0.0.1:5432\"]\n",
        )
        .unwrap();
        let check = network_check(&config);
        assert!(check.ok && check.fix.is_some(), "{check:?}");
        assert!(check.detail.starts_with("[network] allow registries, 151.101.0.223:443; "), "{}", check.detail);
        let warning = check.detail.split_once("warning: ").map(|(_, w)| w).unwrap_or_default();
        assert!(warning.starts_with("2 allow entries"), "{}", check.detail);
        assert!(
            check
                .detail
                .contains("169.254.169.254:80 (link-local (cloud metadata)) in [network.repositories.\"acme/widget\"]"),
            "{}",
            check.detail
        );
        assert!(check.detail.contains("127.0.0.1:5432 (loopback)"), "{}", check.detail);
        assert!(!warning.contains("151.101"), "the public address is not warned about: {}", check.detail);
        let clean = network_check(&toml::from_str("allow = [\"pypi.org\"]").unwrap());
        assert!(clean.ok && clean.fix.is_none(), "{clean:?}");
    }

    #[test]
    fn the_permissions_check_says_what_a_start_would_find() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        assert!(permissions_check(&home).ok, "no home yet");
        private::create_dir_all(&home.join("cycles")).unwrap();
        assert!(permissions_check(&home).ok, "made by forgeloop, nothing recorded yet, nothing loose");

        // Deep and unrecorded: found by the survey.
        let state = home.join("cycles/c.json");
        fs::write(&state, "{}").unwrap();
        fs::set_permissions(&state, fs::Permissions::from_mode(0o644)).unwrap();
        let check = permissions_check(&home);
        assert!(!check.ok && check.detail.contains("c.json (644)"), "{}", check.detail);
        assert!(check.fix.unwrap().contains("forgeloop list"));

        // Recorded with a failure: named, with the chmod to do by hand.
        fs::set_permissions(&state, fs::Permissions::from_mode(0o600)).unwrap();
        let marker = r#"{"version":1,"checked_at":"2026-01-01T00:00:00Z","visited":3,"changed":1,"failed":1,
            "errors":["/h/cycles/theirs.json: Operation not permitted (os error 1)"],"complete":true}"#;
        fs::write(home.join(tighten::MARKER), marker).unwrap();
        fs::set_permissions(home.join(tighten::MARKER), fs::Permissions::from_mode(0o600)).unwrap();
        let check = permissions_check(&home);
        assert!(!check.ok && check.detail.contains("theirs.json: Operation not permitted"), "{}", check.detail);
        assert!(check.fix.unwrap().contains("chmod 600"));

        let clean = marker.replace("\"failed\":1", "\"failed\":0");
        fs::write(home.join(tighten::MARKER), clean).unwrap();
        let check = permissions_check(&home);
        assert!(check.ok && check.detail.contains("checked 2026-01-01T00:00:00Z"), "{}", check.detail);
        fs::set_permissions(&home, fs::Permissions::from_mode(0o711)).unwrap();
        let check = permissions_check(&home);
        assert!(!check.ok && check.detail.contains("(711)"), "{}", check.detail);
    }
}
