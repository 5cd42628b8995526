//! `forge` (alias `cycle`): argument validation in the reference tool's order, then request
//! mode. Flags the reference tool silently ignored are refused here.

use crate::cycle::start::StartRequest;
use crate::domain::state::DEFAULT_MAX_ITERATIONS;
use crate::error::{Error, Result};

use super::args::ForgeArgs;

fn present(value: &Option<String>) -> bool {
    value.as_deref().is_some_and(|v| !v.is_empty())
}

/// The reference order (design §12.2): the first failure wins; empty counts as absent.
pub(super) fn validate(args: &ForgeArgs) -> Result<()> {
    let invalid = |msg: &str| Err(Error::Invalid(msg.to_owned()));
    let request = present(&args.request);
    let pr = present(&args.pr);
    let continuing = args.continue_from.is_some();
    if request && pr {
        return invalid("use either --request or --pr, not both");
    }
    if request && !present(&args.intent_brief) && !continuing {
        return invalid(
            "--request needs --intent-brief: the brief (Goal, Success, Scope / non-goals, Constraints, Validation) confirmed with the user",
        );
    }
    if request && !present(&args.webgpt_question) && !continuing && !args.await_confirmation {
        return invalid(
            "--request needs --webgpt-question: the exact question for WebGPT, confirmed with the user (or --await-confirmation: forgeloop proposes one from the brief for a person to confirm in the control room)",
        );
    }
    if !request && args.intent_brief.is_some() {
        return invalid("--intent-brief is only valid with --request");
    }
    if !request && args.webgpt_question.is_some() {
        return invalid("--webgpt-question is only valid with --request");
    }
    if pr && (args.new_repo.is_some() || args.public || args.owner.is_some()) {
        return invalid("--new-repo, --owner and --public are only valid with --request");
    }
    if !request && !pr {
        return invalid("forge requires --request or --pr: --request starts a cycle, --pr tests its pull request");
    }
    // Flags the reference tool ignored silently.
    let only_with = |flag: &str, mode: &str| Err(Error::Invalid(format!("{flag} is only valid with {mode}")));
    if request {
        if args.commands_json.is_some()
            || args.post_comment
            || args.submodules
            || args.keep_checkout
            || args.fresh
            || args.rerun
        {
            return only_with(
                "--commands-json, --post-comment, --submodules, --keep-checkout, --fresh and --rerun",
                "--pr",
            );
        }
        if args.public && args.new_repo.is_none() {
            return only_with("--public", "--new-repo");
        }
        if args.owner.is_some() && args.new_repo.is_none() {
            return only_with("--owner", "--new-repo");
        }
        if args.new_repo.as_deref() == Some("") {
            return invalid("--new-repo needs a repository name");
        }
        // Checked before any network call: the name goes into API paths (reference F27/F28).
        if let Some(name) = &args.new_repo {
            crate::domain::pr_ref::validate_repo(name)?;
        }
        if let Some(owner) = &args.owner {
            crate::domain::pr_ref::validate_owner(owner)?;
        }
        if continuing && args.max_iterations.is_some() {
            return invalid(
                "--max-iterations cannot be combined with --continue-from: the cap is carried over (a person may raise it with `forgeloop extend`)",
            );
        }
    } else {
        if args.max_iterations.is_some() {
            return only_with("--max-iterations", "--request (the cap is fixed when the cycle starts)");
        }
        if args.await_confirmation || continuing {
            return only_with("--await-confirmation and --continue-from", "--request");
        }
    }
    Ok(())
}

/// The use-case request of request mode (validated by [`validate`] already).
pub(super) fn start_request(args: &ForgeArgs) -> StartRequest {
    let max_iterations = match args.max_iterations {
        None => DEFAULT_MAX_ITERATIONS,
        Some(n) if (1..=i64::from(u32::MAX)).contains(&n) => n as u32,
        Some(_) => 0, // refused by the domain with its max_iterations message
    };
    StartRequest {
        state: args.cycle.state.clone(),
        request: args.request.clone().unwrap_or_default(),
        webgpt_question: args.webgpt_question.clone(),
        intent_brief: args.intent_brief.clone(),
        max_iterations,
        await_confirmation: args.await_confirmation,
        continue_from: args.continue_from.clone(),
        new_repository: None,
        repository: None,
        driver: None,
    }
}
