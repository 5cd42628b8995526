//! Commands that talk to GitHub: `forge --pr`, `forge --request --new-repo`, `test`,
//! `status`, `comment`, and the hidden emulator used by tests and the demo.

use crate::cycle::Ctx;
use crate::cycle::commands;
use crate::cycle::files::write_atomic;
use crate::cycle::pr_test::{self, OneShot, RunOptions};
use crate::cycle::start::{self, StartRequest};
use crate::domain::pr_ref::parse_pr_ref;
use crate::domain::report::TestStatus;
use crate::domain::state::{Actor, NewRepository};
use crate::error::{Error, Result};

#[cfg(feature = "demo")]
use super::args::EmulatorArgs;
use super::args::{DiffArgs, ForgeArgs, ShowArgs, StateArgs, StatusArgs, TestArgs};
use super::net;
use crate::output;

/// `forge --pr`: exit 0 when a run was recorded, 2 when the cycle ended up blocked.
pub(super) fn forge_pr(ctx: &Ctx, args: &ForgeArgs) -> Result<i32> {
    let paths = ctx.cycle(&args.cycle.state)?;
    // Refusals that need no network come first, so they never wait for GitHub.
    let commands = args.commands_json.as_deref().map(|path| commands::load(&ctx.redactor, path)).transpose()?;
    let pr = args.pr.clone().unwrap_or_default();
    parse_pr_ref(&pr, &ctx.hosts)?;
    // Testing an already-tested head again is a person's call (flaky tests), on a terminal.
    if args.rerun {
        super::human::require_terminal("forge --pr --rerun")?;
    }
    let net = net::connect(ctx)?;
    let cancel = net::cancel_on_signals(&net.runtime);
    let mut opts = RunOptions::new(pr, if args.rerun { Actor::Human } else { Actor::Agent });
    opts.rerun = args.rerun;
    opts.human_override = args.rerun;
    opts.commands = commands;
    opts.post_comment = args.post_comment;
    opts.submodules = args.submodules;
    opts.keep_checkout = args.keep_checkout;
    opts.fresh = args.fresh;
    opts.cancel = Some(cancel);
    let outcome = net.runtime.block_on(pr_test::forge_pr(ctx, &net.engine, &paths, opts))?;
    let code = output::json(&ctx.redactor, &outcome.document(ctx, &paths)?);
    Ok(if outcome.blocked() { 2 } else { code })
}

/// `forge --request --new-repo`: every local check first, then the repository (private unless
/// `--public`, with an initial commit), then the cycle bound to it.
pub(super) fn new_repo_request(ctx: &Ctx, args: &ForgeArgs, mut request: StartRequest) -> Result<i32> {
    start::check(ctx, &request)?;
    let name = args.new_repo.clone().unwrap_or_default();
    let private = !args.public;
    let net = net::connect(ctx)?;
    let repo = net.runtime.block_on(net.engine.github.create_repository(args.owner.as_deref(), &name, private))?;
    request.new_repository = Some(NewRepository {
        repository: repo.full_name.full_name(),
        html_url: repo.html_url.clone(),
        private: repo.private,
    });
    let started = start::start(ctx, request)?;
    Ok(output::json(&ctx.redactor, &started.state))
}

/// `test`: exit 0 passed, 1 failed, 2 blocked (as in the reference tool).
pub(super) fn test(ctx: &Ctx, args: &TestArgs) -> Result<i32> {
    let commands = commands::load(&ctx.redactor, &args.commands_json)?;
    parse_pr_ref(&args.pr, &ctx.hosts)?;
    let net = net::connect(ctx)?;
    let cancel = net::cancel_on_signals(&net.runtime);
    let report = net.runtime.block_on(pr_test::test_once(
        ctx,
        &net.engine,
        OneShot {
            pr: args.pr.clone(),
            commands,
            post_comment: args.post_comment,
            submodules: args.submodules,
            keep_checkout: args.keep_checkout,
            fresh: args.fresh,
            cancel: Some(cancel),
            progress: None,
        },
    ))?;
    if let Some(path) = &args.result {
        let mut value = serde_json::to_value(&report).map_err(|e| Error::Invalid(e.to_string()))?;
        ctx.redactor.redact_json(&mut value);
        let text = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
        write_atomic(path, text.as_bytes()).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    }
    output::json(&ctx.redactor, &report);
    Ok(if report.status == TestStatus::Passed { 0 } else { 1 })
}

/// `status --pr`: what the reference printed plus state, draft, base and checks.
pub(super) fn status(ctx: &Ctx, args: &StatusArgs) -> Result<i32> {
    let pr = parse_pr_ref(&args.pr, &ctx.hosts)?;
    let net = net::connect(ctx)?;
    let doc = net.runtime.block_on(crate::cycle::pr_status::pr_status(&net.engine, &pr))?;
    Ok(output::json(&ctx.redactor, &doc))
}

/// `diff`: the redacted unified diff on stdout (or `--stat`, or `--json`); a note on stderr
/// says what is shown and how many spots were masked.
pub(super) fn diff(ctx: &Ctx, args: &DiffArgs) -> Result<i32> {
    let paths = args.state.as_deref().map(|s| ctx.cycle(s)).transpose()?;
    if let Some(pr) = &args.pr {
        parse_pr_ref(pr, &ctx.hosts)?;
    }
    // A cycle's diff made before is read from its cache: no GitHub, so no token needed.
    let cached = match &paths {
        Some(paths) => crate::cycle::diff::cached_of_cycle(ctx, paths, args.iteration, args.since_last)?,
        None => None,
    };
    let view = match (cached, &paths, &args.pr) {
        (Some(view), _, _) => view,
        (None, Some(paths), _) => {
            // The since-last diff is made from the mirror: without a token it is still tried
            // there, and the missing token is the answer only if GitHub turns out to be needed.
            let (net, missing) = match net::connect(ctx) {
                Err(Error::NoToken(missing)) if args.since_last => (net::connect_without_token(ctx)?, Some(missing)),
                other => (other?, None),
            };
            let made = net.runtime.block_on(crate::cycle::diff::of_cycle(
                ctx,
                &net.engine,
                paths,
                args.iteration,
                args.since_last,
            ));
            match (made, missing) {
                (Ok(view), _) => view,
                (Err(_), Some(missing)) => return Err(Error::NoToken(missing)),
                (Err(err), None) => return Err(err),
            }
        }
        (None, None, Some(pr)) => {
            let net = net::connect(ctx)?;
            net.runtime.block_on(crate::cycle::diff::of_pr(ctx, &net.engine, pr))?
        }
        (None, None, None) => return Err(Error::Invalid("diff needs --state or --pr".into())),
    };
    if args.json {
        let mut doc = serde_json::to_value(&view).unwrap_or_default();
        doc["diff"] = serde_json::Value::String(view.text.clone());
        return Ok(output::json(&ctx.redactor, &doc));
    }
    let what = match (&view.old_sha, view.iteration) {
        (Some(old), Some(k)) => format!(
            "{}: the change from run {} ({}) to run {k} ({})",
            view.pr,
            view.old_iteration.unwrap_or_default(),
            &old[..12],
            &view.head_sha[..12.min(view.head_sha.len())]
        ),
        (None, Some(k)) => format!(
            "{} at run {k} ({}) against its base branch",
            view.pr,
            &view.head_sha[..12.min(view.head_sha.len())]
        ),
        _ => format!(
            "{} at its head ({}) against its base branch",
            view.pr,
            &view.head_sha[..12.min(view.head_sha.len())]
        ),
    };
    let masked = match view.masked {
        0 => "redacted, nothing masked".to_owned(),
        1 => "redacted: 1 spot masked as [REDACTED:…]".to_owned(),
        n => format!("redacted: {n} spots masked as [REDACTED:…]"),
    };
    let note = format!("forgeloop diff: {what}; {}; {masked}", view.size.words());
    output::note(&ctx.redactor, &note);
    // As the diff is (already redacted), without a line added: it stays a patch `git apply`
    // takes, unless it holds control characters, which are shown as escapes instead.
    let body = if args.stat { crate::domain::diff::stat(&view.files, 80) } else { view.text.clone() };
    output::body(&ctx.redactor, &body);
    Ok(0)
}

pub(super) fn show(ctx: &Ctx, args: &ShowArgs) -> Result<i32> {
    use crate::cycle::show::{self, Content, Target};
    let target = match (&args.pr, &args.repository) {
        (Some(pr), _) => Target::Pr { pr: pr.clone(), base: args.base },
        (None, Some(repository)) => Target::Repository(repository.clone()),
        (None, None) => return Err(Error::Invalid("show needs --pr or --repository".into())),
    };
    if args.path.is_empty() && !args.list {
        return Err(Error::Invalid("show needs a PATH (or --list for the root)".into()));
    }
    let net = net::connect(ctx)?;
    let shown = net.runtime.block_on(show::show(ctx, &net.engine, &target, &args.path, args.list))?;
    if args.json {
        return Ok(output::json(&ctx.redactor, &shown));
    }
    let sha = &shown.commit[..12.min(shown.commit.len())];
    let what = format!("{} {} at {} ({sha})", shown.repository, shown.path, shown.at);
    match &shown.content {
        Content::Dir { entries } => {
            output::note(&ctx.redactor, &format!("forgeloop show: {what}; {} entries", entries.len()));
            let lines: Vec<String> = entries
                .iter()
                .map(|e| match (e.kind, e.size) {
                    ("dir", _) => format!("{}/", e.name),
                    (_, Some(size)) => format!("{}\t{size}", e.name),
                    (kind, None) => format!("{}\t{kind}", e.name),
                })
                .collect();
            output::body(&ctx.redactor, &(lines.join("\n") + "\n"));
        }
        Content::File { size, truncated, binary, symlink, masked, text } => {
            let mut notes = vec![format!("{size} bytes")];
            if *symlink {
                notes.push("a symbolic link: its target follows".into());
            }
            if *binary {
                notes.push("binary: not shown".into());
            }
            if *truncated {
                notes.push(format!("cut after {} KiB, at a line's end", show::MAX_BYTES / 1024));
            }
            notes.push(match masked {
                0 => "redacted, nothing masked".to_owned(),
                1 => "redacted: 1 spot masked as [REDACTED:…]".to_owned(),
                n => format!("redacted: {n} spots masked as [REDACTED:…]"),
            });
            output::note(&ctx.redactor, &format!("forgeloop show: {what}; {}", notes.join("; ")));
            output::body(&ctx.redactor, text);
        }
    }
    Ok(0)
}

pub(super) fn comment(ctx: &Ctx, args: &StateArgs) -> Result<i32> {
    let paths = ctx.cycle(&args.state)?;
    let net = net::connect(ctx)?;
    let saved = net.runtime.block_on(pr_test::retry_comment(ctx, &net.engine, &paths))?;
    Ok(output::json(&ctx.redactor, &saved.state))
}

/// The hidden `github-emulator`: the GitHub emulator as a process of its own, for tests that
/// drive it over HTTP (built with the `demo` feature, like `forgeloop demo`). Its admin API
/// requires the secret in `FORGELOOP_EMULATOR_SECRET` (the environment, not the command line,
/// so it never shows in a process list).
#[cfg(feature = "demo")]
pub(super) fn emulator(args: &EmulatorArgs) -> Result<i32> {
    let secret = std::env::var("FORGELOOP_EMULATOR_SECRET").ok().filter(|s| !s.is_empty()).ok_or_else(|| {
        Error::Invalid(
            "set FORGELOOP_EMULATOR_SECRET (16 or more characters): the emulator's admin API requires it".into(),
        )
    })?;
    let runtime = net::runtime()?;
    runtime
        .block_on(github_emulator::run_standalone(&args.root, &args.port_file, args.token.clone(), secret))
        .map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(0)
}
