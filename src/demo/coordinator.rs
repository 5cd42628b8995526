//! The scripted coordinator agent: for one cycle it does what the runbook says — start the
//! cycle, then ask `next` and do exactly what it answers, through the same use-case functions
//! the CLI calls (`forge --request`, `sent`, `reply`, `forge --pr --post-comment`, `wait`).
//! The demo's stand-in for the user confirms briefs (headless) and aborts one cycle.

use std::sync::Arc;
use std::time::Duration;

use github_emulator::{Emulator, RepoHandle};
use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::cycle::actions;
use crate::cycle::pr_test::{Engine, RunOptions, forge_pr};
use crate::cycle::start::{StartRequest, start};
use crate::domain::commands::CommandsProfile;
use crate::domain::next::{Action, next_step};
use crate::domain::state::{Actor, CycleState};
use crate::domain::status::Status;
use crate::error::Error;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::pace::{Pace, Stopped};
use super::scenarios::{Scenario, UserAct};
use super::webgpt::WebGpt;

/// More steps than any scenario needs: a loop that goes round this often is a bug.
const MAX_STEPS: u32 = 60;
/// Refusals and busy locks in a row before the cycle's driver gives up (a person acting in
/// the control room between our `next` and our action causes one; a bug causes many).
const MAX_TRANSIENT: u32 = 5;

/// Who confirms a brief awaiting confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmer {
    /// `--headless`: the demo's stand-in, journaled as `system` via `demo`.
    StandIn,
    /// The person watching the control room (`c`, `y`).
    Person,
}

/// Everything the drivers share.
pub struct Demo {
    /// The demo's context: its sandbox home, the emulator's API, the redactor.
    pub ctx: Ctx,
    /// GitHub access, pointed at the emulator.
    pub engine: Engine,
    /// The emulator itself, for what WebGPT and the summary do on it directly.
    pub emulator: Arc<Emulator>,
    /// The demo repository.
    pub repo: RepoHandle,
    /// The profile of cycles tested locally.
    pub commands: CommandsProfile,
    /// The profile of cycles tested on the repository's own CI.
    pub ci_commands: CommandsProfile,
    /// The dependency cycle's profile: its setup clones checklib from `package_index`.
    pub dependency_commands: CommandsProfile,
    /// The package index the dependency cycle's setup fetches from.
    pub package_index: super::package_index::PackageIndex,
    /// How long a step's pause is.
    pub pace: Pace,
    /// Who confirms briefs awaiting confirmation.
    pub confirmer: Confirmer,
}

/// How one driver ended.
#[derive(Debug, Clone, Default)]
pub struct Finished {
    /// Why it gave up, when it did.
    pub error: Option<String>,
    /// It was stopped (the person quit, or Ctrl-C) before its cycle ended.
    pub stopped: bool,
    /// How many steps the driver took.
    pub steps: u32,
    /// The cycle's state name when it is not the scenario's (a connector cycle is named by
    /// `forgeloop serve`); `None` for the others.
    pub cycle: Option<String>,
}

enum Failure {
    Stopped,
    /// Worth asking `next` again.
    Transient(String),
    Fatal(String),
}

impl From<Stopped> for Failure {
    fn from(_: Stopped) -> Self {
        Failure::Stopped
    }
}

impl Failure {
    fn from_error(ctx: &Ctx, err: Error) -> Failure {
        let message = ctx.redactor.redact(&err.to_string()).into_owned();
        use crate::domain::word::Word;
        match err.status() {
            Word::CycleBusy | Word::Refused | Word::InfraFailure => Failure::Transient(message),
            _ => Failure::Fatal(message),
        }
    }
}

enum Flow {
    Continue,
    End,
}

/// Runs one scenario's cycle until it ends, fails, or the demo stops.
pub async fn drive(demo: Arc<Demo>, scenario: Scenario, stop: watch::Receiver<bool>) -> Finished {
    let webgpt = WebGpt::new(demo.emulator.clone(), demo.repo.clone(), scenario.persona.clone());
    let paths = match demo.ctx.cycle(scenario.name) {
        Ok(paths) => paths,
        Err(err) => return Finished { error: Some(err.to_string()), ..Finished::default() },
    };
    let mut driver = Driver {
        state_ref: paths.state.display().to_string(),
        demo,
        scenario,
        webgpt,
        stop,
        paths,
        last_sent: None,
        steps: 0,
    };
    let result = driver.run().await;
    let steps = driver.steps;
    match result {
        Ok(()) => Finished { error: None, stopped: false, steps, cycle: None },
        Err(Failure::Stopped) => Finished { error: None, stopped: true, steps, cycle: None },
        Err(Failure::Transient(message) | Failure::Fatal(message)) => {
            Finished { error: Some(message), stopped: false, steps, cycle: None }
        }
    }
}

struct Driver {
    demo: Arc<Demo>,
    scenario: Scenario,
    webgpt: WebGpt,
    stop: watch::Receiver<bool>,
    paths: CyclePaths,
    state_ref: String,
    /// The last message "typed into the chat", which WebGPT answers.
    last_sent: Option<String>,
    steps: u32,
}

impl Driver {
    async fn pause(&mut self, steps: f64) -> Result<(), Failure> {
        let pace = self.demo.pace;
        pace.pause(steps, &mut self.stop).await.map_err(Failure::from)
    }

    /// Runs a store-touching use case off the async workers (locks, fsync).
    async fn blocking<T, F>(&self, f: F) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(&Ctx, &CyclePaths) -> crate::error::Result<T> + Send + 'static,
    {
        let (ctx, paths) = (self.demo.ctx.clone(), self.paths.clone());
        match tokio::task::spawn_blocking(move || f(&ctx, &paths).map_err(|e| Failure::from_error(&ctx, e))).await {
            Ok(result) => result,
            Err(join) => Err(Failure::Fatal(format!("a demo step stopped unexpectedly: {join}"))),
        }
    }

    async fn load(&self) -> Result<CycleState, Failure> {
        self.blocking(|_, paths| Ok(state_file::load(&paths.state)?)).await
    }

    async fn run(&mut self) -> Result<(), Failure> {
        self.pause(1.0 + self.scenario.start_after).await?;
        self.start().await?;
        let mut transient = 0;
        loop {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(Failure::Fatal(format!("the cycle did not end within {MAX_STEPS} steps")));
            }
            if *self.stop.borrow() {
                return Err(Failure::Stopped);
            }
            let state = self.load().await?;
            match self.step(&state).await {
                Ok(Flow::Continue) => transient = 0,
                Ok(Flow::End) => return Ok(()),
                Err(Failure::Transient(message)) => {
                    transient += 1;
                    if transient > MAX_TRANSIENT {
                        return Err(Failure::Fatal(message));
                    }
                    self.pause(1.0).await?;
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// `forge --request` with the confirmed brief (or `--await-confirmation`).
    async fn start(&mut self) -> Result<(), Failure> {
        let s = &self.scenario;
        let request = StartRequest {
            state: s.name.to_owned(),
            request: s.request.clone(),
            webgpt_question: Some(s.question.clone()),
            intent_brief: Some(s.brief.clone()),
            max_iterations: s.max_iterations,
            await_confirmation: s.await_confirmation,
            continue_from: None,
            new_repository: None,
            repository: None,
            driver: None,
        };
        self.blocking(move |ctx, _| start(ctx, request).map(|_| ())).await
    }

    /// One answer of `next`, carried out.
    async fn step(&mut self, state: &CycleState) -> Result<Flow, Failure> {
        let step = next_step(state, &self.state_ref);
        match step.action {
            Action::Send => {
                let text = step.text.ok_or_else(|| Failure::Fatal("`next` said send but gave no text".into()))?;
                // Typing it into the chat.
                self.pause(1.0).await?;
                self.blocking(|ctx, paths| actions::sent(ctx, paths).map(|_| ())).await?;
                self.last_sent = Some(text);
                Ok(Flow::Continue)
            }
            Action::WaitForReply => {
                let message = match self.last_sent.clone() {
                    Some(text) => text,
                    None => state.outbox.as_ref().map(|o| o.text.clone()).unwrap_or_default(),
                };
                // WebGPT works on it for a while.
                self.pause(2.0).await?;
                let reply = self.webgpt.answer(&message).await.map_err(|e| Failure::Fatal(e.to_string()))?;
                self.blocking(move |ctx, paths| crate::cycle::reply::reply(ctx, paths, &reply, None, None).map(|_| ()))
                    .await?;
                Ok(Flow::Continue)
            }
            Action::Run => {
                let pr = step.pr.ok_or_else(|| Failure::Fatal("`next` said run but named no PR".into()))?;
                self.pause(1.0).await?;
                let after = self.test(&pr, state.commands.is_none()).await?;
                if let UserAct::AbortAfterFailedRun(reason) = &self.scenario.user
                    && after.status == Status::AwaitingWebgptFix
                {
                    let reason = reason.clone();
                    self.pause(1.5).await?;
                    self.blocking(move |ctx, paths| actions::abort(ctx, paths, &reason, Actor::System).map(|_| ()))
                        .await?;
                }
                Ok(Flow::Continue)
            }
            Action::WaitForHuman if state.needs_network.is_some() => {
                self.wait_for_allowed_hosts(state).await?;
                Ok(Flow::Continue)
            }
            Action::WaitForHuman => {
                self.wait_for_confirmation().await?;
                Ok(Flow::Continue)
            }
            Action::Stop | Action::Done => Ok(Flow::End),
        }
    }

    /// `forge --pr PR --state S --post-comment [--commands-json F]`.
    async fn test(&mut self, pr: &str, with_commands: bool) -> Result<CycleState, Failure> {
        let mut opts = RunOptions::new(pr, Actor::Agent);
        opts.post_comment = true;
        let profile = match (self.scenario.on_ci, self.scenario.dependency) {
            (true, _) => &self.demo.ci_commands,
            (false, true) => &self.demo.dependency_commands,
            (false, false) => &self.demo.commands,
        };
        opts.commands = with_commands.then(|| profile.clone());
        opts.cancel = Some(self.stop.clone());
        let demo = self.demo.clone();
        match forge_pr(&demo.ctx, &demo.engine, &self.paths, opts).await {
            Ok(outcome) => Ok(outcome.saved.state),
            // Not a failure of the loop: the cycle records it and `next` asks the person.
            Err(Error::NeedsNetwork { .. }) => self.load().await,
            Err(err) => Err(Failure::from_error(&demo.ctx, err)),
        }
    }

    /// `wait_for_human` after NEEDS_NETWORK. The package index is on 127.0.0.1, which is not
    /// public: refused by policy, so forgeloop proposes no entry and no key adds one (design
    /// §5.6). The person trusts it and writes the exact entry into the sandbox's config.toml by
    /// hand (the stand-in after a moment; with the control room, the person, whose `A` says
    /// what to write where), then tells the agent, which runs again.
    async fn wait_for_allowed_hosts(&mut self, state: &CycleState) -> Result<(), Failure> {
        let needs = state.needs_network.clone().ok_or_else(|| Failure::Fatal("no NEEDS_NETWORK run".into()))?;
        let entries: Vec<String> = needs
            .refused_by_policy
            .iter()
            .map(|line| line.rsplit(" → ").next().unwrap_or(line).to_owned())
            .chain(needs.allow.iter().cloned())
            .collect();
        let repository = needs.pr.split_once('#').map_or(needs.pr.as_str(), |(r, _)| r).to_owned();
        match self.demo.confirmer {
            Confirmer::StandIn => {
                self.pause(2.0).await?;
                let (repository, entries) = (repository.clone(), entries.clone());
                self.blocking(move |ctx, _| super::project::write_entries_by_hand(ctx, &repository, &entries)).await?;
                self.pause(1.0).await?;
            }
            // "Tell the agent": the stand-in agent sees the entries in config.toml; any other
            // change to the cycle (an abort, say) hands back to the loop instead.
            Confirmer::Person => loop {
                let (repo, wanted) = (repository.clone(), entries.clone());
                if self.blocking(move |ctx, _| Ok(super::project::entries_written(ctx, &repo, &wanted))).await? {
                    break;
                }
                if *self.stop.borrow() {
                    return Err(Failure::Stopped);
                }
                let changed = self
                    .blocking(|_, paths| match crate::cycle::wait::wait(paths, &[], Some(Duration::from_secs(1))) {
                        Ok(_) => Ok(true),
                        Err(Error::WaitTimeout(_)) => Ok(false),
                        Err(err) => Err(err),
                    })
                    .await?;
                if changed {
                    return Ok(());
                }
            },
        }
        self.test(&needs.pr, false).await.map(|_| ())
    }

    /// `wait_for_human`: the stand-in confirms after a moment; with the control room, the
    /// person does, and this waits like `forgeloop wait --state S` (a directory watch).
    async fn wait_for_confirmation(&mut self) -> Result<(), Failure> {
        match self.demo.confirmer {
            Confirmer::StandIn => {
                self.pause(2.0).await?;
                self.blocking(|ctx, paths| actions::confirm(ctx, paths, None, "demo", Actor::System).map(|_| ())).await
            }
            Confirmer::Person => self.wait_for_change().await,
        }
    }

    /// Waits like `forgeloop wait --state S` (a directory watch) until the person changes the
    /// cycle, or the demo stops.
    async fn wait_for_change(&mut self) -> Result<(), Failure> {
        loop {
            if *self.stop.borrow() {
                return Err(Failure::Stopped);
            }
            let waited = self
                .blocking(|_, paths| match crate::cycle::wait::wait(paths, &[], Some(Duration::from_secs(1))) {
                    Ok(_) => Ok(true),
                    Err(Error::WaitTimeout(_)) => Ok(false),
                    Err(err) => Err(err),
                })
                .await?;
            if waited {
                return Ok(());
            }
        }
    }
}
