//! The demo's review cycles (docs/review.md): the scripted coordinator starts a review of a
//! branch, follows `next` through the same use cases as the CLI (`review start`, `attest`,
//! `attest --answer`, `review prepare`, `sent`, `review reply`, `triage`), and a scripted
//! WebGPT answers as a chat would: one whose connector really reads the repository answers
//! the challenge from the commit (the route is CONNECTOR); one whose connector shows as attached
//! but reads nothing says it cannot (the route is LOCAL_BUNDLE, and the packet goes out after
//! the person's yes). The stand-in for the user says yes and triages (headless); in the control
//! room the person does.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::cycle::Ctx;
use crate::cycle::actions;
use crate::cycle::review::{self, ChangeSpec, StartReview};
use crate::domain::challenge::Question;
use crate::domain::next::{Action, next_step};
use crate::domain::review::{Decision, Seen};
use crate::domain::state::{Actor, CycleState, OutboxKind};
use crate::domain::status::Status;
use crate::error::Error;
use crate::store::layout::CyclePaths;
use crate::store::state_file;

use super::coordinator::{Confirmer, Demo, Finished};
use super::project::{LOGIN, REPO_NAME};
use super::scenarios::{ReviewRoute, Scenario};

/// More steps than a review needs.
const MAX_STEPS: u32 = 40;

/// The scripted reviewer's findings: one to fix, one to dismiss.
const FINDINGS: &str = "I read the change; here is what I would change.\n\n\
FINDING 1: [medium] calc.sh:3 — `usage` prints to stdout; errors belong on stderr so scripts can tell them apart\n\
FINDING 2: [low] NOTES.md:1 — the notes could name the operations calc.sh supports\n";

/// Runs one review scenario until it ends, fails, or the demo stops.
pub async fn drive(demo: Arc<Demo>, scenario: Scenario, stop: watch::Receiver<bool>) -> Finished {
    let Some(route) = scenario.review else {
        return Finished { error: Some("not a review scenario".into()), ..Finished::default() };
    };
    let paths = match demo.ctx.cycle(scenario.name) {
        Ok(paths) => paths,
        Err(err) => return Finished { error: Some(err.to_string()), ..Finished::default() },
    };
    let conversation = format!("https://chatgpt.com/c/demo-{}", scenario.name);
    let mut driver = Driver { demo, scenario, route, paths, stop, conversation, steps: 0 };
    let result = driver.run().await;
    let steps = driver.steps;
    match result {
        Ok(()) => Finished { error: None, stopped: false, steps, cycle: None },
        Err(Failure::Stopped) => Finished { error: None, stopped: true, steps, cycle: None },
        Err(Failure::Fatal(message)) => Finished { error: Some(message), stopped: false, steps, cycle: None },
    }
}

enum Failure {
    Stopped,
    Fatal(String),
}

struct Driver {
    demo: Arc<Demo>,
    scenario: Scenario,
    route: ReviewRoute,
    paths: CyclePaths,
    stop: watch::Receiver<bool>,
    conversation: String,
    steps: u32,
}

impl Driver {
    async fn pause(&mut self, steps: f64) -> Result<(), Failure> {
        let pace = self.demo.pace;
        pace.pause(steps, &mut self.stop).await.map_err(|_| Failure::Stopped)
    }

    /// Runs a store-touching use case off the async workers.
    async fn blocking<T, F>(&self, f: F) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(&Ctx, &CyclePaths) -> crate::error::Result<T> + Send + 'static,
    {
        let (ctx, paths) = (self.demo.ctx.clone(), self.paths.clone());
        let fatal = |ctx: &Ctx, e: Error| Failure::Fatal(ctx.redactor.redact(&e.to_string()).into_owned());
        match tokio::task::spawn_blocking(move || f(&ctx, &paths).map_err(|e| fatal(&ctx, e))).await {
            Ok(result) => result,
            Err(join) => Err(Failure::Fatal(format!("a demo step stopped unexpectedly: {join}"))),
        }
    }

    async fn run(&mut self) -> Result<(), Failure> {
        self.pause(1.0 + self.scenario.start_after).await?;
        self.start().await?;
        loop {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(Failure::Fatal(format!("the review did not end within {MAX_STEPS} steps")));
            }
            if *self.stop.borrow() {
                return Err(Failure::Stopped);
            }
            let state = self.blocking(|_, paths| Ok(state_file::load(&paths.state)?)).await?;
            if !self.step(&state).await? {
                return Ok(());
            }
        }
    }

    /// The branch the review is about, then `review start --range main..BRANCH`.
    async fn start(&mut self) -> Result<(), Failure> {
        let persona = &self.scenario.persona;
        let files = persona.attempts.first().cloned().unwrap_or_default();
        let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        self.demo
            .emulator
            .commit_files(&self.demo.repo, &persona.branch, &files, &persona.title)
            .await
            .map_err(|e| Failure::Fatal(e.to_string()))?;
        let req = StartReview {
            state: self.scenario.name.to_owned(),
            change: ChangeSpec::Range {
                repository: format!("{LOGIN}/{REPO_NAME}"),
                range: format!("{}..{}", self.demo.repo.default_branch, persona.branch),
            },
            question: Some(self.scenario.question.clone()),
        };
        let demo = self.demo.clone();
        review::start(&demo.ctx, &demo.engine, req)
            .await
            .map(|_| ())
            .map_err(|e| Failure::Fatal(demo.ctx.redactor.redact(&e.to_string()).into_owned()))
    }

    /// One answer of `next`, carried out; `false` once the review is done.
    async fn step(&mut self, state: &CycleState) -> Result<bool, Failure> {
        let step = next_step(state, &self.paths.state.display().to_string());
        let command = step.command.clone().unwrap_or_default();
        match step.action {
            Action::Run if command.get(1).is_some_and(|c| c == "attest") => {
                self.pause(1.0).await?;
                let seen = Seen {
                    surface: "chatgpt-web".into(),
                    model: "GPT-5 Pro".into(),
                    mode: None,
                    // Both chats show the connector attached; only one of them reads through it.
                    connector_attached: true,
                    conversation_url: self.conversation.clone(),
                };
                self.blocking(move |ctx, paths| review::attest(ctx, paths, seen).map(|_| ())).await?;
            }
            Action::Run => {
                self.pause(1.0).await?;
                self.blocking(|ctx, paths| review::prepare(ctx, paths, false).map(|_| ())).await?;
            }
            Action::Send => {
                self.pause(1.0).await?;
                self.blocking(|ctx, paths| actions::sent(ctx, paths).map(|_| ())).await?;
            }
            Action::WaitForReply => {
                self.pause(2.0).await?;
                let kind = state.outbox.as_ref().map(|o| o.kind);
                if kind == Some(OutboxKind::Challenge) {
                    let answer = self.challenge_answer(state)?;
                    let from = self.conversation.clone();
                    self.blocking(move |ctx, paths| review::answer(ctx, paths, &answer, &from).map(|_| ())).await?;
                } else {
                    let reply = if state.review.as_ref().is_some_and(|r| r.replies == 0) {
                        FINDINGS.to_owned()
                    } else {
                        "Nothing further.\n\nNO FINDINGS\n".to_owned()
                    };
                    self.blocking(move |ctx, paths| review::reply(ctx, paths, &reply).map(|_| ())).await?;
                }
            }
            Action::WaitForHuman => self.person(state).await?,
            Action::Stop | Action::Done => return Ok(false),
        }
        Ok(true)
    }

    /// What the scripted chat answers to the challenge: read from the repository through its
    /// connector, or that it cannot read it.
    fn challenge_answer(&self, state: &CycleState) -> Result<String, Failure> {
        let review = state.review.as_ref().ok_or_else(|| Failure::Fatal("not a review cycle".into()))?;
        let questions = review.attestation.as_ref().map(|a| a.questions.clone()).unwrap_or_default();
        if self.route == ReviewRoute::ConnectorFails {
            return Ok("I tried the GitHub connector, but it does not give me that repository in this conversation.\n\nCANNOT READ\n".into());
        }
        let git = git2::Repository::open(&self.demo.repo.path).map_err(|e| Failure::Fatal(e.to_string()))?;
        let mut text = String::from("I read these through the GitHub connector:\n\n");
        for (i, question) in questions.iter().enumerate() {
            let spec = format!("{}:{}", review.target.head, question.path());
            let object = git.revparse_single(&spec).map_err(|e| Failure::Fatal(e.to_string()))?;
            let answer = match question {
                Question::BlobId { .. } => object.id().to_string(),
                Question::Line { line, .. } => {
                    let blob = object.peel_to_blob().map_err(|e| Failure::Fatal(e.to_string()))?;
                    let content = String::from_utf8_lossy(blob.content()).into_owned();
                    content.lines().nth((*line as usize).saturating_sub(1)).unwrap_or_default().to_owned()
                }
            };
            text.push_str(&format!("ANSWER {}: {answer}\n", i + 1));
        }
        Ok(text)
    }

    /// The packet's yes and the findings' triage: the stand-in headless, else the person.
    async fn person(&mut self, state: &CycleState) -> Result<(), Failure> {
        if self.demo.confirmer == Confirmer::Person {
            return self.wait_for_change().await;
        }
        self.pause(2.0).await?;
        match state.status {
            Status::AwaitingPacket => {
                self.blocking(|ctx, paths| review::approve_as(ctx, paths, Actor::System, "demo").map(|_| ())).await
            }
            _ => {
                let open: Vec<u32> =
                    state.review.as_ref().map(|r| r.untriaged().map(|f| f.number).collect()).unwrap_or_default();
                for number in open {
                    let (decision, note) = match number {
                        1 => (Decision::Fix, "right: usage goes to stderr (the demo's stand-in)"),
                        _ => (Decision::Dismiss, "the README says it already (the demo's stand-in)"),
                    };
                    self.blocking(move |ctx, paths| {
                        review::triage(ctx, paths, number, decision, Some(note), Actor::System).map(|_| ())
                    })
                    .await?;
                }
                Ok(())
            }
        }
    }

    /// Waits like `forgeloop wait --state S` until the person changes the cycle.
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
