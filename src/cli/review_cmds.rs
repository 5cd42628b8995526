//! `forgeloop review …`, `attest` and `triage`: the review cycle's commands (docs/review.md).

use crate::cycle::Ctx;
use crate::cycle::review::{self, ChangeSpec, StartReview};
use crate::domain::review::{Decision, Seen};
use crate::domain::state::Actor;
use crate::error::{Error, Result};
use crate::output;

use super::args::{AttestArgs, ReviewArgs, ReviewCommand, TriageArgs};
use super::{human, net, read_text};

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
