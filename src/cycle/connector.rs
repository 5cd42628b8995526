//! The remote connector's use cases (design §8.1): what `forgeloop serve`'s tools do, each the
//! CLI's own use case with the connector's limits around it. A client reaches only the
//! repositories bound in the registry and only the cycles it started; it never names a command,
//! a profile or a cap, and what a person decides (the brief, a review, a block) stays theirs.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::domain::brief::Field;
use crate::domain::commands::CommandsProfile;
use crate::domain::connector::{CallRecord, Grant, Grants};
use crate::domain::pr_ref::RepoName;
use crate::domain::report::Report;
use crate::domain::state::{Actor, CycleState, DEFAULT_MAX_ITERATIONS};
use crate::domain::status::Status;
use crate::error::{Error, Result};
use crate::registry::{Registry, RepoKey};
pub use crate::store::connector::{ConnectorFiles, Serving};
pub use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::context::{Ctx, Engine};
use super::pr_test::{self, RunOptions};
use super::start::{self, StartRequest};

/// The connector's files in this home.
pub fn files(ctx: &Ctx) -> ConnectorFiles {
    ConnectorFiles::new(ctx.home.connector_dir())
}

/// A bound repository as `list_repositories` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositoryRow {
    /// `owner/repo`.
    pub repository: String,
    /// The profile `test_pr` runs for it; `None`: none is configured, so `test_pr` refuses.
    pub profile: Option<String>,
    /// What that profile runs; `None` when there is no profile or `[mcp.profiles]` lacks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<ProfileRuns>,
}

/// What a profile runs, as a client reads it before its first `test_pr`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileRuns {
    /// Setup commands, as argv arrays, run first through the person's allowlist.
    pub setup: Vec<Vec<String>>,
    /// The test commands, as argv arrays.
    pub commands: Vec<Vec<String>>,
    /// The tests' network: `off`, `allowlist` or `open`.
    pub network: String,
}

impl ProfileRuns {
    fn of(profile: &CommandsProfile) -> ProfileRuns {
        let argvs = |specs: &[crate::domain::commands::CommandSpec]| specs.iter().map(|s| s.argv.clone()).collect();
        ProfileRuns {
            setup: argvs(&profile.setup),
            commands: argvs(&profile.commands),
            network: profile.network.as_str().to_owned(),
        }
    }
}

/// The repositories the connector may use — bound in the registry (readable records only), or
/// listed in `[connector] repositories` — each once, with its profile.
pub fn repositories(ctx: &Ctx) -> Vec<RepositoryRow> {
    let listed = Registry::new(ctx.registry.clone()).list().unwrap_or_default();
    let mut names: Vec<String> = listed.into_iter().filter(|l| l.outcome.is_ok()).map(|l| l.repository).collect();
    for configured in &ctx.config.connector.repositories {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(configured)) {
            names.push(configured.clone());
        }
    }
    names
        .into_iter()
        .map(|repository| {
            let profile = ctx.config.connector.profile_for(&repository).map(str::to_owned);
            let runs = profile.as_deref().and_then(|name| ctx.config.mcp.profiles.get(name)).map(ProfileRuns::of);
            RepositoryRow { profile, runs, repository }
        })
        .collect()
}

/// Refuses a repository the person did not allow: neither bound in the registry nor listed in
/// `[connector] repositories` (before anything is written).
fn bound(ctx: &Ctx, repository: &str) -> Result<RepoName> {
    let refused = || {
        Error::Invalid(format!(
            "{repository} is not a repository this connector may use: only those the person listed in [connector] repositories or bound in the Project registry are (list_repositories)"
        ))
    };
    let repo = RepoName::parse(repository).map_err(|_| refused())?;
    if ctx.config.connector.lists(&repo.full_name()) {
        return Ok(repo);
    }
    let key = RepoKey::parse(&repo.full_name()).map_err(|_| refused())?;
    match Registry::new(ctx.registry.clone()).lookup(&key) {
        Ok(Some(_)) => Ok(repo),
        _ => Err(refused()),
    }
}

/// The person's profile for `repository`: `[connector]` names it, `[mcp.profiles]` holds it.
pub fn profile_for(ctx: &Ctx, repository: &str) -> Result<(String, CommandsProfile)> {
    let Some(name) = ctx.config.connector.profile_for(repository) else {
        return Err(Error::Invalid(format!(
            "no test profile is configured for {repository}: the person names one in the forgeloop config ([connector] default_profile, or [connector.profiles] \"{repository}\" = NAME)"
        )));
    };
    let Some(profile) = ctx.config.mcp.profiles.get(name) else {
        return Err(Error::Invalid(format!(
            "[connector] names the profile {name:?}, which [mcp.profiles] does not define: the person fixes the forgeloop config"
        )));
    };
    let profile = super::commands::accept(&ctx.redactor, profile.clone())
        .map_err(|e| Error::Invalid(format!("the profile {name:?} cannot be run: {e}")))?;
    Ok((name.to_owned(), profile))
}

/// What `start_cycle` is given: the repository, the brief's five fields and the question.
#[derive(Debug, Clone)]
pub struct StartInput {
    /// `owner/repo`, bound in the registry.
    pub repository: String,
    /// The brief's fields, in [`Field::ALL`]'s order.
    pub fields: [String; 5],
    /// The question for WebGPT (the client itself, here).
    pub question: String,
}

/// A cycle as the connector's tools answer about it.
#[derive(Debug, Clone, Serialize)]
pub struct CycleAnswer {
    /// Its name (what the tools take as `cycle`).
    pub cycle: String,
    /// Its status word.
    pub status: String,
    /// Runs so far.
    pub iteration: u32,
    /// The cap.
    pub max_iterations: u32,
    /// The PR it tests, once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// What it waits for, in a sentence: who acts next and what they do.
    pub waiting_for: String,
}

impl CycleAnswer {
    fn of(ctx: &Ctx, name: &str, state: &CycleState) -> CycleAnswer {
        CycleAnswer {
            cycle: name.to_owned(),
            status: client_status(state.status).to_owned(),
            iteration: state.iteration,
            max_iterations: state.max_iterations,
            pr: state.pr_ref.clone(),
            waiting_for: ctx.redactor.redact(&waiting_for(name, state)).into_owned(),
        }
    }

    /// What the client has now seen of the cycle, for a later `wait`.
    pub fn seen(&self) -> Option<Seen> {
        Some(Seen { status: parse_client_status(&self.status)?, iteration: Some(self.iteration) })
    }
}

/// A status word as the connector's client reads it. The cycle's own words speak of "WebGPT",
/// the chat as the coordinator agent sees it; to the chat itself the PR and the fix are its own.
pub fn client_status(status: Status) -> &'static str {
    match status {
        Status::AwaitingWebgptPr => "AWAITING_PR",
        Status::AwaitingWebgptFix => "AWAITING_FIX",
        other => other.as_str(),
    }
}

/// The status a client names (`wait`'s `since`): its own words, or the cycle's.
pub fn parse_client_status(word: &str) -> Option<Status> {
    match word.trim() {
        "AWAITING_PR" => Some(Status::AwaitingWebgptPr),
        "AWAITING_FIX" => Some(Status::AwaitingWebgptFix),
        other => other.parse().ok(),
    }
}

/// What a client last saw of a cycle: `wait` answers `changed` against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The status it saw.
    pub status: Status,
    /// The iteration it saw, when known (a `since` the client passes names only a status).
    pub iteration: Option<u32>,
}

impl Seen {
    fn differs_from(&self, state: &CycleState) -> bool {
        self.status != state.status || self.iteration.is_some_and(|k| k != state.iteration)
    }
}

/// What the cycle waits for, said to the remote client: every status has its own sentence
/// (the agent's explanations speak of WebGPT and of commands the client cannot run). What the
/// person does is named (the control room's keys, or the command), so the client can tell them.
fn waiting_for(name: &str, state: &CycleState) -> String {
    let pr = state.pr_ref.as_deref().unwrap_or("the pull request");
    let network_pending = state.needs_network.as_ref().is_some_and(|n| n.allowed_at.is_none());
    match state.status {
        Status::AwaitingWebgptPr | Status::AwaitingWebgptFix if network_pending => format!(
            "the person: the last run of {pr} needed a network address the tests may not reach (not your PR's fault; no run was counted). Tell them; they decide whether to allow it in their config.toml (the control room shows the run). Call wait, then test_pr again once they have"
        ),
        Status::AwaitingWebgptPr | Status::AwaitingWebgptFix if crate::domain::next::waits_for_person(state) => {
            format!(
                "the person: a message for you was taken back and they decide what comes next (the control room, `forgeloop tui`, cycle {name}); call wait"
            )
        }
        Status::AwaitingBriefConfirmation => format!(
            "the person to confirm the brief in forgeloop's control room: tell them to run `forgeloop tui`, select the cycle {name}, press c and then y (or run `forgeloop confirm --state {name}` in a terminal); call wait, then test_pr once it is confirmed"
        ),
        Status::NeedsReview => format!(
            "the person to review the tests this PR changed: in the control room (`forgeloop tui`) they select the cycle {name} and press v to approve, or tell you what to change (or run `forgeloop approve --state {name}` in a terminal)"
        ),
        Status::AwaitingWebgptPr => format!(
            "you: open a pull request in {} for this change, then call test_pr with the cycle and the PR",
            state.repository.as_deref().unwrap_or("the cycle's repository")
        ),
        Status::AwaitingWebgptFix => format!(
            "you: push a fix to {pr} (read the report or get_handoff), then call test_pr again; {} of {} runs used",
            state.iteration, state.max_iterations
        ),
        Status::ReadyToMerge => format!(
            "nothing more from you: the tests passed on {pr}; the person reviews and merges it (forgeloop never merges)"
        ),
        Status::BlockedMaxIterations => format!(
            "the person: all {} runs of this cycle are used and only they can allow more (`forgeloop extend --state {name} --by N` in a terminal); tell them, then call wait",
            state.max_iterations
        ),
        Status::Aborted => "nothing: the person stopped this cycle; start a new cycle for further work".to_owned(),
        Status::Superseded => "nothing: another cycle replaced this one".to_owned(),
        review if crate::domain::review_step::is_review_status(review) => format!(
            "nothing from you here: {name} is a review cycle ({}) that the local coordinator drives in the chat",
            review.as_str()
        ),
        blocked => format!(
            "the person: the cycle is blocked ({}); they see why in the control room (`forgeloop tui`, cycle {name}) and can unblock it (`forgeloop unblock --state {name}`); call wait",
            blocked.as_str()
        ),
    }
}

/// A cycle name for a new connector cycle: `<repo>-<random>`, a bare state name.
fn cycle_name(repo: &RepoName, random: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(24).collect()
    };
    format!("{}-{}", clean(repo.name()), clean(random))
}

/// `start_cycle`: a cycle that waits for the person's confirmation, bound to `repository`,
/// driven by `connector:<client name>`, recorded in the grant (so the grant reaches it).
pub fn start_cycle(ctx: &Ctx, grant: &Grant, input: StartInput, random: &str) -> Result<CycleAnswer> {
    let repo = bound(ctx, &input.repository)?;
    // The five fields as a brief is written, so the brief is parsed and checked as any other.
    let brief: Vec<String> = Field::ALL
        .iter()
        .zip(&input.fields)
        .map(|(field, value)| format!("{}: {}", field.label(), value.trim().replace('\n', "\n  ")))
        .collect();
    let name = cycle_name(&repo, random);
    let request = format!("{} (asked by {} through forgeloop serve)", input.fields[0].trim(), grant.client_name);
    let started = start::start(
        ctx,
        StartRequest {
            state: name.clone(),
            request,
            webgpt_question: Some(input.question),
            intent_brief: Some(brief.join("\n")),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            await_confirmation: true,
            continue_from: None,
            new_repository: None,
            repository: Some(repo.full_name()),
            driver: Some(format!("connector:{}", grant.client_name)),
        },
    )?;
    let grant_id = grant.id.clone();
    let cycle = name.clone();
    files(ctx)
        .update_grants(|grants: &mut Grants| match grants.get_mut(&grant_id) {
            Some(g) => {
                g.cycles.push(cycle);
                Ok(())
            }
            None => Err(()),
        })
        .map_err(|e| Error::Invalid(format!("cannot record the cycle in the grant: {e}")))?
        .map_err(|()| Error::Invalid("the grant is gone".into()))?;
    Ok(CycleAnswer::of(ctx, &name, &started.state))
}

/// The cycle `name` if `grant` started it.
pub fn cycle_of(ctx: &Ctx, grant: &Grant, name: &str) -> Result<CyclePaths> {
    if !grant.cycles.iter().any(|c| c == name) {
        return Err(Error::Invalid(format!(
            "{name:?} is not a cycle this client started: a connector reaches only its own cycles"
        )));
    }
    ctx.cycle(name)
}

/// `cycle_status`.
pub fn status(ctx: &Ctx, name: &str, paths: &CyclePaths) -> Result<CycleAnswer> {
    let state = state_file::load(&paths.state)?;
    Ok(CycleAnswer::of(ctx, name, &state))
}

/// `wait`'s answer: the cycle, and whether it differs from what the client saw before.
#[derive(Debug, Clone, Serialize)]
pub struct WaitAnswer {
    /// The cycle now.
    #[serde(flatten)]
    pub cycle: CycleAnswer,
    /// The status now differs from `since` (or the iteration from the one seen with it).
    pub changed: bool,
    /// The status the answer compares with: the client's `since`, else the last status this
    /// client was told, else the status when `wait` was called.
    pub since: String,
}

/// `wait`: returns at once when the cycle differs from `seen` (what the client last saw, or
/// its `since`) or waits for nothing from the person; else when it changes, or at `timeout`
/// (bounded to a minute by the caller). Polls the state file: it is small and local.
pub async fn wait(
    ctx: &Ctx,
    name: &str,
    paths: &CyclePaths,
    timeout: Duration,
    seen: Option<Seen>,
) -> Result<WaitAnswer> {
    let first = state_file::load(&paths.state)?;
    let baseline = seen.unwrap_or(Seen { status: first.status, iteration: Some(first.iteration) });
    let answer = |state: &CycleState| WaitAnswer {
        cycle: CycleAnswer::of(ctx, name, state),
        changed: baseline.differs_from(state),
        since: client_status(baseline.status).to_owned(),
    };
    // Changed already, or nothing the person owes (the client acts next): the answer at once.
    if baseline.differs_from(&first) || !crate::domain::next::waits_for_person(&first) {
        return Ok(answer(&first));
    }
    let deadline = Instant::now() + timeout;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = state_file::load(&paths.state)?;
        if baseline.differs_from(&now) || Instant::now() >= deadline {
            return Ok(answer(&now));
        }
    }
}

/// What `test_pr` found: the cycle after the call and what the run left, redacted; `serve`
/// shapes it for the client and bounds its text.
#[derive(Debug, Clone)]
pub struct TestAnswer {
    /// The cycle after the call.
    pub cycle: CycleAnswer,
    /// The profile that ran.
    pub profile: String,
    /// The run's report, when a run was made.
    pub report: Option<Report>,
    /// The last lines of the run's log, a pass's too.
    pub output_tail: Option<String>,
    /// The iteration that tested this head already: nothing ran.
    pub already_tested: Option<u32>,
    /// After a failure: what forgeloop would type to the chat.
    pub handoff: Option<String>,
    /// The run needed network its tests may not have: nothing was counted.
    pub needs_network: Option<NetworkNeeded>,
}

/// A run that needed the network, as the client is told of it.
#[derive(Debug, Clone, Serialize)]
pub struct NetworkNeeded {
    /// `setup` or `test`.
    pub phase: String,
    /// What it tried to reach.
    pub destinations: Vec<String>,
    /// Always false: such a run is not an iteration.
    pub counted: bool,
}

/// `test_pr`: `forge --pr` on the cycle with the person's profile for its repository, within
/// the cap and in the sandbox, as the agent's CLI run is.
pub async fn test_pr(ctx: &Ctx, engine: &Engine, name: &str, paths: &CyclePaths, pr: &str) -> Result<TestAnswer> {
    let state = state_file::load(&paths.state)?;
    let repository = state.repository.clone().unwrap_or_default();
    let (profile, commands) = profile_for(ctx, &repository)?;
    let mut opts = RunOptions::new(pr, Actor::Agent);
    opts.commands = Some(commands);
    let redact = |text: &str| ctx.redactor.redact(text).into_owned();
    let outcome = match pr_test::forge_pr(ctx, engine, paths, opts).await {
        Ok(outcome) => outcome,
        // Not the PR's fault and not an iteration: an answer, not an error, whose cycle says
        // the person decides (the agent's message speaks of config files the client cannot see).
        Err(Error::NeedsNetwork { needs, .. }) => {
            let state = state_file::load(&paths.state)?;
            return Ok(TestAnswer {
                cycle: CycleAnswer::of(ctx, name, &state),
                profile,
                report: None,
                output_tail: None,
                already_tested: None,
                handoff: None,
                needs_network: Some(NetworkNeeded {
                    phase: needs.phase.clone(),
                    destinations: needs.allow.iter().chain(&needs.refused_by_policy).map(|d| redact(d)).collect(),
                    counted: false,
                }),
            });
        }
        Err(e) => return Err(e),
    };
    Ok(TestAnswer {
        cycle: CycleAnswer::of(ctx, name, &outcome.saved.state),
        profile,
        output_tail: outcome.report.as_ref().and_then(|r| output_tail(paths, r)).map(|t| redact(&t)),
        report: outcome.report,
        already_tested: outcome.already_tested.map(|a| a.iteration),
        handoff: outcome.saved.state.webgpt_handoff.as_deref().map(redact),
        needs_network: None,
    })
}

/// How much of a run's log `output_tail` carries: what a person reads as evidence, not the log.
const OUTPUT_TAIL_BYTES: u64 = 4 * 1024;

/// The last lines of the run's log (already redacted when written; redacted again by the
/// caller), so a pass shows its evidence too. `None` when the run kept no log.
fn output_tail(paths: &CyclePaths, report: &Report) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let relative = std::path::Path::new(report.log_path.as_deref()?);
    // A log name from a report is the cycle's own: nothing that climbs out of `NAME.d/`.
    if relative.is_absolute() || relative.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
        return None;
    }
    let mut file = std::fs::File::open(paths.sidecar().join(relative)).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(OUTPUT_TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(OUTPUT_TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // Cut inside a line: start at the next whole one.
    let text = match (start > 0, text.find('\n')) {
        (true, Some(at)) => &text[at + 1..],
        _ => &text[..],
    };
    let text = text.trim_end();
    (!text.is_empty()).then(|| text.to_owned())
}

/// What `get_diff` found: the change of the last tested head, redacted.
#[derive(Debug, Clone)]
pub struct DiffAnswer {
    /// The change since the run before (`true`), or the whole PR after a first run.
    pub since_last_run: bool,
    /// Each file with its added and removed lines.
    pub files: Vec<(String, u64, u64)>,
    /// The unified diff, redacted.
    pub text: String,
}

/// `get_diff`: what the last tested run's head changed since the run before (the whole PR
/// after a first run), redacted.
pub async fn diff(ctx: &Ctx, engine: &Engine, paths: &CyclePaths) -> Result<DiffAnswer> {
    let state = state_file::load(&paths.state)?;
    if state.history.is_empty() {
        return Err(Error::Invalid("no run was tested yet: call test_pr first".into()));
    }
    let since_last = state.history.len() > 1;
    let view = super::diff::of_cycle(ctx, engine, paths, None, since_last).await?;
    Ok(DiffAnswer {
        since_last_run: since_last,
        files: view.files.iter().map(|f| (f.path.clone(), f.additions, f.deletions)).collect(),
        text: view.text,
    })
}

/// `get_handoff`: the text the last failed run hands the chat, redacted.
pub fn handoff(ctx: &Ctx, paths: &CyclePaths) -> Result<String> {
    let state = state_file::load(&paths.state)?;
    match &state.webgpt_handoff {
        Some(text) if !text.is_empty() => Ok(ctx.redactor.redact(text).into_owned()),
        _ => Err(Error::Invalid(format!("there is no handoff: the cycle is {}", state.status))),
    }
}

/// A grant as the person sees it (`serve --grants`, the control room): never a token hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantRow {
    /// Its id.
    pub grant: String,
    /// The client's registered name.
    pub client: String,
    /// Where its authorization sends the browser back (each redirect URI's host): who gets
    /// the grant, whatever the client calls itself.
    pub redirect_hosts: Vec<String>,
    /// When the person allowed it.
    pub created_at: String,
    /// The cycles it started.
    pub cycles: Vec<String>,
    /// The reviews the person shared with it (`serve --share`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// Access tokens still live.
    pub live_access_tokens: usize,
    /// When and why it was revoked.
    pub revoked: Option<crate::domain::connector::Revoked>,
}

/// What the connector looks like now: whether `serve` runs, the grants, the last calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overview {
    /// What a running `serve` serves (`None`: not running, or its record is stale).
    pub serving: Option<Serving>,
    /// Every grant, newest last.
    pub grants: Vec<GrantRow>,
    /// The journal's last lines, oldest first.
    pub calls: Vec<CallRecord>,
    /// Why the grants could not be read, if they could not.
    pub error: Option<String>,
}

/// Seconds since the epoch.
fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The grants as rows.
pub fn grant_rows(grants: &Grants, now: i64) -> Vec<GrantRow> {
    grants
        .grants
        .iter()
        .map(|g| GrantRow {
            grant: g.id.clone(),
            client: g.client_name.clone(),
            redirect_hosts: g.redirect_uris.iter().map(|u| crate::domain::connector::redirect_host(u)).collect(),
            created_at: g.created_at.clone(),
            cycles: g.cycles.clone(),
            shared: g.shared.clone(),
            live_access_tokens: g.access.iter().filter(|t| t.expires_at > now).count(),
            revoked: g.revoked.clone(),
        })
        .collect()
}

/// The connector in the home whose connector directory is `dir`, read now.
pub fn overview(dir: &std::path::Path, calls: usize) -> Overview {
    let files = ConnectorFiles::new(dir.to_path_buf());
    let serving = files.read_serving().filter(|s| process_alive(s.pid));
    let (grants, error) = match files.load_grants() {
        Ok(grants) => (grant_rows(&grants, unix_now()), None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    Overview { serving, grants, calls: files.journal_tail(calls), error }
}

/// Whether process `pid` is a `forgeloop serve`: it exists, and its command line has the
/// `serve` subcommand. A record left by a server that died may name a pid the system gave to
/// another program since; that one must neither be shown as serving nor sent SIGUSR1 (whose
/// default action ends a process).
fn process_alive(pid: u32) -> bool {
    let Ok(signed) = i32::try_from(pid) else { return false };
    if signed <= 0 {
        return false;
    }
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
    let mut args = cmdline.split(|b| *b == 0);
    let program = args.next().unwrap_or_default();
    let is_forgeloop = String::from_utf8_lossy(program).contains("forgeloop");
    is_forgeloop && args.any(|arg| arg == b"serve")
}

/// Revokes grant `which` (or every live one, for `all`): its tokens stop working at once.
/// Returns the ids revoked.
pub fn revoke(ctx: &Ctx, which: &str) -> Result<Vec<String>> {
    let at = ctx.now();
    files(ctx)
        .update_grants(|grants| {
            let mut ids = Vec::new();
            for grant in &mut grants.grants {
                if grant.revoked.is_none() && (which == "all" || grant.id == which) {
                    // The hashes stay: a token of a revoked grant is refused as revoked, not
                    // as unknown (the client is told why).
                    grant.revoked = Some(crate::domain::connector::Revoked { at: at.clone(), reason: "person".into() });
                    ids.push(grant.id.clone());
                }
            }
            if ids.is_empty() { Err(()) } else { Ok(ids) }
        })
        .map_err(|e| Error::Invalid(e.to_string()))?
        .map_err(|()| Error::Invalid(format!("no live grant {which:?}: see forgeloop serve --grants")))
}

/// Asks the running `serve` for a new pairing code (SIGUSR1); it prints it and records it in
/// `serving.json`.
pub fn new_pairing_code(ctx: &Ctx) -> Result<()> {
    let files = files(ctx);
    let serving = files.read_serving().ok_or_else(|| Error::Invalid("forgeloop serve is not running".into()))?;
    let pid = i32::try_from(serving.pid).map_err(|_| Error::Invalid("serving.json names no valid pid".into()))?;
    // SAFETY: kill(2) with a pid and a signal number; no memory is shared.
    if !process_alive(serving.pid) || unsafe { libc::kill(pid, libc::SIGUSR1) } != 0 {
        files.remove_serving();
        return Err(Error::Invalid("forgeloop serve is not running (its serving.json was stale)".into()));
    }
    Ok(())
}
