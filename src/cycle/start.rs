//! `forge --request`: create a cycle (design §3 rules 1 and 7, §4).

use std::path::PathBuf;

use crate::domain::event_data::{EventData, Message};
use crate::domain::machine::{self, Carry, NewCycle};
use crate::domain::state::{Actor, CycleState, DEFAULT_MAX_ITERATIONS, NewRepository};
use crate::error::{Error, Result};
use crate::store::atomic::create_new_atomic;
use crate::store::journal::NewEvent;
use crate::store::layout::CyclePaths;
use crate::store::task_index::{self, IndexError};
use crate::store::{journal, lock::FileLock, state_file};

use super::context::Ctx;
use super::session::{self, redact_state};

/// What `forge --request` (or the control room, or the demo) asks to start.
pub struct StartRequest {
    /// The state file to create: a path, or a bare name under the home's cycles.
    pub state: String,
    /// What to implement, in the user's words.
    pub request: String,
    /// The confirmed question for WebGPT (required unless awaiting confirmation).
    pub webgpt_question: Option<String>,
    /// The confirmed brief (required unless awaiting confirmation).
    pub intent_brief: Option<String>,
    /// The iteration cap.
    pub max_iterations: u32,
    /// Start in `AWAITING_BRIEF_CONFIRMATION`, for a person to confirm the brief.
    pub await_confirmation: bool,
    /// A cycle this one continues and supersedes (its cap, binding, brief, commands and PR carry over).
    pub continue_from: Option<String>,
    /// A repository already provisioned for this cycle (`--new-repo`).
    pub new_repository: Option<NewRepository>,
    /// A bound repository (`owner/repo`) the cycle is for from its start: the connector's
    /// `start_cycle`. Its `[protect]` paths apply from the first run.
    pub repository: Option<String>,
    /// Who drives the cycle when it is not the coordinator (`connector:<client>`).
    pub driver: Option<String>,
}

impl StartRequest {
    /// A cycle started by an agent that cannot confirm (the MCP server's `forge_start`): it
    /// always waits for a person to confirm the brief, with the default cap (only a person
    /// raises it, with `extend`), no predecessor and no new repository.
    pub fn awaiting_person(state: &str, request: &str, webgpt_question: &str, intent_brief: &str) -> StartRequest {
        StartRequest {
            state: state.to_owned(),
            request: request.to_owned(),
            webgpt_question: Some(webgpt_question.to_owned()),
            intent_brief: Some(intent_brief.to_owned()),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            await_confirmation: true,
            continue_from: None,
            new_repository: None,
            repository: None,
            driver: None,
        }
    }
}

/// The cycle that was created.
pub struct Started {
    /// Its state file.
    pub path: PathBuf,
    /// Its state as written (redacted).
    pub state: CycleState,
}

struct Prepared {
    paths: CyclePaths,
    predecessor: Option<(CyclePaths, CycleState)>,
    state: CycleState,
}

/// Every check `start` makes before it writes anything: inputs, brief, predecessor, an
/// existing state, a taken task space. `forge --request --new-repo` runs it before it
/// creates the repository, so a refusal never leaves a stray repository behind.
pub fn check(ctx: &Ctx, req: &StartRequest) -> Result<()> {
    prepare(ctx, req, &ctx.now()).map(|_| ())
}

fn prepare(ctx: &Ctx, req: &StartRequest, now: &str) -> Result<Prepared> {
    let paths = ctx.cycle(&req.state)?;
    let predecessor = match &req.continue_from {
        Some(old) => Some(load_predecessor(ctx, old, &paths)?),
        None => None,
    };
    let carry = predecessor.as_ref().map(|(p, s)| Carry::from_state(s, p.state.display().to_string()));
    // The repository is known now only when it was provisioned or carried; the global
    // patterns always apply.
    let repository = req
        .new_repository
        .as_ref()
        .map(|r| r.repository.clone())
        .or_else(|| carry.as_ref().and_then(|c| c.repository.clone()))
        .or_else(|| req.repository.as_ref().map(|r| r.to_ascii_lowercase()));
    let protected_paths = match &repository {
        Some(repo) => ctx.config.protect.for_repository(repo),
        None => ctx.config.protect.paths.clone(),
    };
    let state = machine::start(
        NewCycle {
            request: &req.request,
            webgpt_question: req.webgpt_question.as_deref(),
            intent_brief: req.intent_brief.as_deref(),
            max_iterations: req.max_iterations,
            task_space: paths.task_space(),
            await_confirmation: req.await_confirmation,
            new_repository: req.new_repository.clone(),
            carry,
            protected_paths,
        },
        now,
    )?;
    let mut state = state;
    if state.repository.is_none() {
        state.repository = repository;
    }
    state.driver = req.driver.clone();
    let mut state = redact_state(ctx, &state);
    session::refresh_next_action(ctx, &paths, &mut state);
    if paths.state.exists() {
        return Err(Error::StateExists(paths.state.clone()));
    }
    if let Some(owner) = task_index::live_owner(&ctx.home.task_spaces_dir(), &paths.stem, &paths.state) {
        return Err(IndexError::Taken { task_space: paths.task_space(), owner }.into());
    }
    Ok(Prepared { paths, predecessor, state })
}

/// Validates everything first, so a refusal changes no file; then creates the state
/// exclusively (never overwriting), claims the task space, and journals the start.
pub fn start(ctx: &Ctx, req: StartRequest) -> Result<Started> {
    let now = ctx.now();
    let Prepared { paths, predecessor, state } = prepare(ctx, &req, &now)?;
    // The predecessor stays locked until it is marked superseded.
    let predecessor_lock = match &predecessor {
        Some((old, _)) => Some(session::lock(old)?),
        None => None,
    };
    let events = first_events(&state);
    create(ctx, &paths, &state, &now, events)?;
    if let (Some((old_paths, _)), Some(_guard)) = (&predecessor, predecessor_lock) {
        supersede(ctx, old_paths, &paths, &now)?;
    }
    Ok(Started { path: paths.state.clone(), state })
}

fn load_predecessor(ctx: &Ctx, old: &str, new: &CyclePaths) -> Result<(CyclePaths, CycleState)> {
    let old_paths = ctx.cycle(old)?;
    if old_paths.state == new.state {
        return Err(Error::Invalid("--continue-from must name another state file than --state".into()));
    }
    let old_state = state_file::load(&old_paths.state)?;
    if old_state.status.is_final() {
        return Err(Error::Invalid(format!(
            "{} is {} and cannot be continued",
            old_paths.state.display(),
            old_state.status
        )));
    }
    Ok((old_paths, old_state))
}

/// Creates the state exclusively (never overwriting), claims its task space, and journals
/// `events`. Refuses an existing state or a task space another live cycle holds.
pub(super) fn create(
    ctx: &Ctx,
    paths: &CyclePaths,
    state: &CycleState,
    now: &str,
    events: Vec<NewEvent>,
) -> Result<()> {
    let index = ctx.home.task_spaces_dir();
    let _index_lock = task_index::lock(&index)?;
    if let Some(owner) = task_index::live_owner(&index, &paths.stem, &paths.state) {
        return Err(IndexError::Taken { task_space: paths.task_space(), owner }.into());
    }
    let _cycle_lock = FileLock::try_acquire(&paths.lock())?;
    let created = create_new_atomic(&paths.state, state.to_json().as_bytes())
        .map_err(|e| Error::io(format!("cannot create the state {}", paths.state.display()), e))?;
    if !created {
        return Err(Error::StateExists(paths.state.clone()));
    }
    task_index::record(&index, &paths.stem, &paths.task_space(), &paths.state, now)?;
    journal::append(&paths.journal(), &events, now)?;
    Ok(())
}

fn first_events(state: &CycleState) -> Vec<NewEvent> {
    let mut events = vec![NewEvent::of(
        Actor::Agent,
        EventData::Created {
            request: state.request.clone(),
            task_space: state.task_space.clone(),
            iteration: state.iteration,
            max_iterations: state.max_iterations,
            predecessor: state.predecessor.clone(),
            repository: state.repository.clone(),
            driver: state.driver.clone(),
        },
    )];
    if let Some(confirmation) = &state.brief_confirmation {
        events.push(NewEvent::of(
            confirmation.by,
            EventData::BriefConfirmed { via: confirmation.via.clone(), edited: None },
        ));
    }
    if let Some(outbox) = &state.outbox {
        events.push(NewEvent::of(Actor::System, EventData::PromptIssued(Message::of(outbox))));
    }
    events
}

fn supersede(ctx: &Ctx, old: &CyclePaths, new: &CyclePaths, now: &str) -> Result<()> {
    let before = state_file::load(&old.state)?;
    let mut state = before.clone();
    machine::supersede(&mut state, &new.state.display().to_string(), now)?;
    let event = NewEvent::of(Actor::Agent, EventData::Superseded { successor: new.state.display().to_string() });
    session::persist(ctx, old, Some(&before), &state, Actor::Agent, vec![event], now)?;
    Ok(())
}
