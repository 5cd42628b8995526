//! `forgeloop review …`, `attest` and `triage`: the review cycle's commands (docs/review.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cycle::Ctx;
use crate::cycle::review::{self, ChangeSpec, StartReview};
use crate::domain::review::{Decision, Seen};
use crate::domain::state::Actor;
use crate::error::{Error, Result};
use crate::output;

use super::args::StateArgs;
use super::{human, net, read_text};

/// `forgeloop review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub(crate) command: ReviewCommand,
}

impl ReviewArgs {
    /// Only `start` talks to GitHub (the rest read the mirror `start` filled).
    pub fn needs_github(&self) -> bool {
        matches!(self.command, ReviewCommand::Start(_))
    }
}

/// The review subcommands.
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Start a review cycle of a PR (--pr) or of BASE..HEAD of a repository
    Start(StartArgs),
    /// The packet for the chat when its connector is not proven; --dry-run says what it would hold
    Prepare(PrepareArgs),
    /// Human only, on a terminal: let the packet leave the machine
    Approve(StateArgs),
    /// Record the reviewer's reply: its findings wait for triage
    Reply(FileArgs),
    /// The review: attestation, packet, findings and their triage, the FIX list
    Show(StateArgs),
    /// Record that a FIX finding was fixed by a PR cycle whose last run passed
    Fixed(FixedArgs),
}

/// `review start`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("change").required(true).args(["pr", "repository"])))]
pub struct StartArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The PR to review: its head against its base branch's tip
    #[arg(long, value_name = "REF")]
    pub pr: Option<String>,
    /// The repository of --range (OWNER/REPO)
    #[arg(long, value_name = "OWNER/REPO", requires = "range")]
    pub repository: Option<String>,
    /// BASE..HEAD: branch names or 40-hex commits
    #[arg(long, value_name = "BASE..HEAD", requires = "repository")]
    pub range: Option<String>,
    /// What the person most wants the reviewer to look at
    #[arg(long, value_name = "TEXT")]
    pub question: Option<String>,
}

/// `review prepare`.
#[derive(Debug, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// Say what the packet would hold (each file in or out and why, bytes, tokens, risks); write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// `review reply`.
#[derive(Debug, Args)]
pub struct FileArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The reviewer's whole reply; `-` or omitted reads stdin
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `review fixed`.
#[derive(Debug, Args)]
pub struct FixedArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The finding's number
    #[arg(long, value_name = "N")]
    pub finding: u32,
    /// The PR cycle whose last passing run fixed it
    #[arg(long = "by", value_name = "STATE")]
    pub by_cycle: String,
}

/// `forgeloop attest`.
#[derive(Debug, Args)]
pub struct AttestArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The model picker's text, as shown
    #[arg(long, value_name = "TEXT", required_unless_present = "answer")]
    pub model: Option<String>,
    /// The reasoning mode shown, if the surface shows one
    #[arg(long, value_name = "TEXT", conflicts_with = "answer")]
    pub mode: Option<String>,
    /// Where the chat runs
    #[arg(long, value_name = "NAME", default_value = "chatgpt-web", conflicts_with = "answer")]
    pub surface: String,
    /// Whether the GitHub connector shows as attached to the conversation: attached or absent
    #[arg(long, value_name = "attached|absent", required_unless_present = "answer")]
    pub connector: Option<String>,
    /// The conversation's URL (with --answer: the conversation the answer was read in)
    #[arg(long, value_name = "URL")]
    pub conversation_url: String,
    /// The chat's reply to the challenge: check it against the commit (`-` reads stdin)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["model", "connector"])]
    pub answer: Option<PathBuf>,
}

/// `forgeloop triage`.
#[derive(Debug, Args)]
pub struct TriageArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The finding's number
    #[arg(long, value_name = "N")]
    pub finding: u32,
    /// FIX, DEFER, DISMISS or QUESTION
    #[arg(long = "as", value_name = "DECISION")]
    pub decision: String,
    /// Why; for QUESTION, the question to ask the reviewer
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}

pub(super) fn review(ctx: &Ctx, args: ReviewArgs) -> Result<i32> {
    let r = &ctx.redactor;
    match args.command {
        ReviewCommand::Start(args) => {
            let change = match (args.pr, args.repository, args.range) {
                (Some(pr), _, _) => ChangeSpec::Pr(pr),
                (None, Some(repository), Some(range)) => ChangeSpec::Range { repository, range },
                _ => return Err(Error::Invalid("review start needs --pr, or --repository with --range".into())),
            };
            let net = net::connect(ctx)?;
            let req = StartReview { state: args.cycle.state, change, question: args.question };
            let started = net.runtime.block_on(review::start(ctx, &net.engine, req))?;
            Ok(output::json(r, &started.state))
        }
        ReviewCommand::Prepare(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            let (_, prepared) = review::prepare(ctx, &paths, args.dry_run)?;
            Ok(output::json(r, &prepared))
        }
        ReviewCommand::Approve(args) => {
            human::require_terminal("review approve")?;
            let paths = ctx.cycle(&args.state)?;
            let shown = review::show(&paths)?;
            let packet = shown.review.packet.as_ref().ok_or_else(|| {
                Error::Invalid("no packet waits for a yes (`forgeloop review prepare` makes one)".into())
            })?;
            let summary = format!(
                "Review {}: the packet {} ({} files, {} bytes, about {} tokens, {} risks; its manifest {}).\nRead `forgeloop review prepare --state {} --dry-run` for each file and risk.\n",
                paths.state.display(),
                packet.path,
                packet.files,
                packet.bytes,
                packet.tokens,
                packet.risks,
                packet.manifest,
                paths.state.display()
            );
            human::ask(r, &summary, "Let it be uploaded into the chat?")?;
            Ok(output::json(r, &review::approve(ctx, &paths, "terminal")?.state))
        }
        ReviewCommand::Reply(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            let text = read_text(args.file.as_deref(), review::MAX_REPLY_BYTES, "reply")?;
            let (_, replied) = review::reply(ctx, &paths, &text)?;
            Ok(output::json(r, &replied))
        }
        ReviewCommand::Show(args) => Ok(output::json(r, &review::show(&ctx.cycle(&args.state)?)?)),
        ReviewCommand::Fixed(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            Ok(output::json(r, &review::fixed(ctx, &paths, args.finding, &args.by_cycle)?.state))
        }
    }
}

pub(super) fn attest(ctx: &Ctx, args: AttestArgs) -> Result<i32> {
    let r = &ctx.redactor;
    let paths = ctx.cycle(&args.cycle.state)?;
    if let Some(answer) = args.answer {
        let text = read_text(Some(&answer), review::MAX_ANSWER_BYTES, "answer")?;
        let (_, answered) = review::answer(ctx, &paths, &text, &args.conversation_url)?;
        return Ok(output::json(r, &answered));
    }
    let connector_attached = match args.connector.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("attached") => true,
        Some("absent") => false,
        other => {
            return Err(Error::Invalid(format!(
                "--connector must be attached or absent, not {:?}",
                other.unwrap_or_default()
            )));
        }
    };
    let seen = Seen {
        surface: args.surface,
        model: args.model.unwrap_or_default(),
        mode: args.mode,
        connector_attached,
        conversation_url: args.conversation_url,
    };
    let (_, attested) = review::attest(ctx, &paths, seen)?;
    Ok(output::json(r, &attested))
}

pub(super) fn triage(ctx: &Ctx, args: TriageArgs) -> Result<i32> {
    let decision = Decision::parse(&args.decision).ok_or_else(|| {
        Error::Invalid(format!("--as must be FIX, DEFER, DISMISS or QUESTION, not {:?}", args.decision))
    })?;
    let paths = ctx.cycle(&args.cycle.state)?;
    // Typed by a person at a terminal, else relayed by the agent (with the person's words).
    let by = if human::at_terminal() { Actor::Human } else { Actor::Agent };
    review::triage(ctx, &paths, args.finding, decision, args.note.as_deref(), by)?;
    Ok(output::json(&ctx.redactor, &review::show(&paths)?))
}
