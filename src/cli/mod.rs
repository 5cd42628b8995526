//! The headless front end: parse, build the context once, call one use case, print one
//! redacted JSON document, exit 0/1/2.

pub mod args;
mod forge;
mod github_cmds;
mod human;
pub(crate) mod net;
pub mod project;
mod redact_cmd;
pub mod review_cmds;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{CommandFactory, Parser};
use serde_json::Value;

use crate::config::Config;
use crate::cycle::context::Settings;
use crate::cycle::files;
use crate::cycle::{Ctx, actions, list, wait};
use crate::domain::state::Actor;
use crate::domain::status::Status;
use crate::error::{Error, Result};
use crate::output;
use crate::redact::Redactor;

use args::{Cli, Command};

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    // Still single-threaded here: libgit2's first initialisation may set SSL_CERT_* variables.
    if cli.command.may_use_git() {
        crate::cycle::context::init_git_early();
    }
    // The demo builds its own sandboxed context; the user's config and home play no part.
    #[cfg(feature = "demo")]
    if let Command::Demo(args) = &cli.command {
        let home = cli.home.clone();
        return crate::demo::main(crate::demo::DemoOptions { home, headless: args.headless, speed: args.speed });
    }
    let redactor = redactor_with_token(None);
    let ctx = match context(&cli) {
        Ok(ctx) => ctx,
        Err(err) => return output::error(&redactor, &err),
    };
    let opens_home = cli.command.opens_home();
    let fresh = opens_home && !ctx.home.root().exists();
    if opens_home {
        tell(&ctx, crate::cycle::home::open(&ctx));
    }
    let code = match dispatch(&ctx, cli.command) {
        Ok(code) => code,
        Err(err) => output::error(&ctx.redactor, &err),
    };
    // A home this command created is private already: recorded now, it is never walked.
    if fresh {
        tell(&ctx, crate::cycle::home::open(&ctx));
    }
    code
}

/// A note on stderr (stdout is the command's one document), redacted.
fn tell(ctx: &Ctx, note: Option<String>) {
    if let Some(note) = note {
        eprintln!("{}", ctx.redactor.redact(&note));
    }
}

/// clap's message for a command line it refused. Help and version go to stdout as clap
/// prints them; an error goes to stderr through the process's redactor, since clap echoes
/// what it refused (`invalid value 'ghp_…'`). The config (and so the user's own rules) is not
/// read yet: the command line that names it did not parse.
fn usage_error(err: &clap::Error) -> i32 {
    use std::io::{IsTerminal, Write};
    if !err.use_stderr() {
        let _ = err.print();
        return err.exit_code();
    }
    let styled = err.render();
    let text = if std::io::stderr().is_terminal() { styled.ansi().to_string() } else { styled.to_string() };
    let redacted = redactor_with_token(None).redact(&text).into_owned();
    let _ = std::io::stderr().lock().write_all(redacted.as_bytes());
    err.exit_code()
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn user_home() -> Option<PathBuf> {
    env_path("HOME")
}

pub(crate) fn redactor_with_token(token: Option<&str>) -> Redactor {
    crate::cycle::context::process_redactor(token)
}

fn xdg(var: &str, fallback: &str) -> Result<PathBuf> {
    env_path(var)
        .or_else(|| user_home().map(|h| h.join(fallback)))
        .ok_or_else(|| Error::Invalid(format!("neither {var} nor HOME is set; pass --home/--config/--registry")))
}

fn context(cli: &Cli) -> Result<Ctx> {
    let (config_path, explicit) = match &cli.config {
        Some(path) => (path.clone(), true),
        None => (xdg("XDG_CONFIG_HOME", ".config")?.join("forgeloop/config.toml"), false),
    };
    let config = Config::load(&config_path, explicit)?;
    let home = match cli.home.clone().or_else(|| config.paths.home.clone()) {
        Some(home) => home,
        None => xdg("XDG_STATE_HOME", ".local/state")?.join("forgeloop"),
    };
    let registry = match cli.registry.clone().or_else(|| config.paths.registry.clone()) {
        Some(registry) => registry,
        None => user_home()
            .map(|h| h.join(".local/share/webgpt-orchestrator/projects"))
            .ok_or_else(|| Error::Invalid("HOME is not set; pass --registry".into()))?,
    };
    let github_api = cli
        .github_api
        .clone()
        .filter(|a| !a.is_empty())
        .or_else(|| config.github.api.clone())
        .unwrap_or_else(|| crate::cycle::context::DEFAULT_API_BASE.to_owned());
    let settings = Settings { home, registry, config, config_path: Some(config_path), github_api };
    let token = if cli.command.may_use_github() { settings.find_token() } else { None };
    Ctx::new(settings, token)
}

fn dispatch(ctx: &Ctx, command: Command) -> Result<i32> {
    let r = &ctx.redactor;
    match command {
        Command::Forge(args) => {
            let mut args = args;
            if let Some(review) = args.request_from_review.clone() {
                // The FIX findings become the request, bound to the reviewed repository.
                let (request, _) = crate::cycle::review::fix_request_of(ctx, &review)?;
                args.request = Some(request);
            }
            forge::validate(&args)?;
            if args.request.as_deref().is_some_and(|r| !r.is_empty()) {
                let mut request = forge::start_request(&args);
                if let Some(review) = args.request_from_review.as_deref() {
                    request.repository = Some(crate::cycle::review::fix_request_of(ctx, review)?.1);
                }
                if args.new_repo.is_some() {
                    return github_cmds::new_repo_request(ctx, &args, request);
                }
                let started = crate::cycle::start::start(ctx, request)?;
                Ok(output::json(r, &started.state))
            } else {
                github_cmds::forge_pr(ctx, &args)
            }
        }
        Command::Status(args) => github_cmds::status(ctx, &args),
        Command::Diff(args) => github_cmds::diff(ctx, &args),
        Command::Show(args) => github_cmds::show(ctx, &args),
        Command::Test(args) => github_cmds::test(ctx, &args),
        Command::Comment(args) => github_cmds::comment(ctx, &args),
        #[cfg(feature = "demo")]
        Command::GithubEmulator(args) => github_cmds::emulator(&args),
        Command::Redact(args) => redact_cmd::run(ctx, &args),
        Command::Review(args) => review_cmds::review(ctx, args),
        Command::Attest(args) => review_cmds::attest(ctx, args),
        Command::Triage(args) => review_cmds::triage(ctx, args),
        Command::Doctor => {
            use std::io::IsTerminal;
            let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
            let diagnosis = net::runtime()?.block_on(crate::cycle::doctor::diagnose(ctx, terminal));
            output::json(r, &diagnosis);
            Ok(if diagnosis.healthy() { 0 } else { 2 })
        }
        Command::Gc(args) => Ok(output::json(r, &crate::cycle::gc::collect(ctx, args.unused_days, args.dry_run)?)),
        Command::Reply(args) => reply(ctx, args),
        Command::Handoff(args) => handoff(ctx, &args.result, false),
        Command::Iterate(args) => handoff(ctx, &args.result, true),
        Command::Next(args) => {
            let paths = ctx.cycle(&args.state)?;
            let lookup = |pr: &crate::domain::pr_ref::PrRef| net::pull_head(ctx, pr);
            Ok(output::json(r, &crate::cycle::next::next(ctx, &paths, Some(&lookup))?))
        }
        Command::Sent(args) => Ok(output::json(r, &actions::sent(ctx, &ctx.cycle(&args.state)?)?.state)),
        Command::Say(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            let words = read_text(args.file.as_deref(), crate::cycle::say::MAX_MESSAGE_CHARS as u64 * 4, "message")?;
            // Typed by a person at a terminal, else relayed by the agent (with the person's words).
            let by = if human::at_terminal() { Actor::Human } else { Actor::Agent };
            Ok(output::json(r, &crate::cycle::say::say(ctx, &paths, &words, by)?.state))
        }
        Command::Commands(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            let commands = crate::cycle::commands::load(r, &args.commands_json)?;
            let widened = crate::cycle::correct_commands::widening(&paths, &commands)?;
            let (by, confirmed) = if widened.is_empty() {
                (Actor::Agent, false)
            } else {
                if !human::at_terminal() {
                    return Err(Error::Widening(widened.join(", ")));
                }
                human::ask(
                    r,
                    &format!(
                        "The new commands for {} widen the sandbox: {}",
                        paths.state.display(),
                        widened.join(", ")
                    ),
                    "Let the tests have that?",
                )?;
                (Actor::Human, true)
            };
            Ok(output::json(r, &crate::cycle::correct_commands::replace(ctx, &paths, commands, by, confirmed)?.state))
        }
        Command::Wait(args) => {
            let until = args.until.iter().map(|s| parse_status(s)).collect::<Result<Vec<_>>>()?;
            let state = wait::wait(&ctx.cycle(&args.cycle.state)?, &until, args.timeout.map(Duration::from_secs))?;
            Ok(output::json(r, &state))
        }
        Command::List(args) => Ok(output::json(r, &list::list(ctx, &args.dir))),
        Command::Log(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            match args.verify {
                true => Ok(output::json(r, &crate::cycle::log::verify(&paths)?)),
                false => Ok(output::json(r, &crate::cycle::log::read(&paths)?)),
            }
        }
        Command::Abort(args) => {
            // A run in progress elsewhere is asked to stop first (design §6.6).
            Ok(output::json(
                r,
                &crate::cycle::stop::abort(ctx, &ctx.cycle(&args.cycle.state)?, &args.reason, Actor::Agent)?.state,
            ))
        }
        Command::Block(args) => {
            let status = parse_status(&args.status)?;
            Ok(output::json(
                r,
                &actions::block(ctx, &ctx.cycle(&args.cycle.state)?, status, &args.reason, Actor::Agent)?.state,
            ))
        }
        Command::Outbox(args) => {
            let paths = ctx.cycle(&args.cycle.state)?;
            if !args.drop {
                return Ok(output::json(r, &crate::cycle::outbox::view(&paths)?));
            }
            human::require_terminal("outbox --drop")?;
            let view = crate::cycle::outbox::view(&paths)?;
            let pending = view.pending.ok_or_else(|| Error::Invalid("no message is waiting to be sent".into()))?;
            let summary = format!(
                "Cycle {}: the pending {:?} message:\n\n{}\n",
                paths.state.display(),
                pending.kind,
                pending.text
            );
            human::ask(r, &summary, "Drop it, so WebGPT is never sent it?")?;
            let saved = crate::cycle::outbox::drop_pending(ctx, &paths, Actor::Human)?;
            Ok(output::json(r, &crate::cycle::outbox::view_of(&saved.state)))
        }
        Command::Confirm(args) => {
            human::require_terminal("confirm")?;
            let paths = ctx.cycle(&args.state)?;
            let state = files::load_state(&paths.state)?;
            crate::domain::machine::can_confirm(&state)?;
            let summary = format!(
                "Cycle {}\n\nWebGPT question:\n{}\n\nIntent brief:\n{}\n",
                paths.state.display(),
                state.webgpt_question,
                state.brief.as_ref().map(|b| b.render()).unwrap_or_else(|| state.intent_brief.clone())
            );
            human::ask(r, &summary, "Confirm this brief and let the coordinator send it?")?;
            Ok(output::json(r, &actions::confirm(ctx, &paths, None, "terminal", Actor::Human)?.state))
        }
        Command::Unblock(args) => {
            human::require_terminal("unblock")?;
            let paths = ctx.cycle(&args.state)?;
            let state = files::load_state(&paths.state)?;
            let why = state.last_error.as_deref().unwrap_or("no reason recorded");
            human::ask(r, &format!("Cycle {} is {}: {why}", paths.state.display(), state.status), "Unblock it?")?;
            Ok(output::json(r, &actions::unblock(ctx, &paths)?.state))
        }
        Command::Extend(args) => {
            human::require_terminal("extend")?;
            let paths = ctx.cycle(&args.cycle.state)?;
            let state = files::load_state(&paths.state)?;
            let summary = format!(
                "Cycle {} has used {} of {} iterations.",
                paths.state.display(),
                state.iteration,
                state.max_iterations
            );
            human::ask(r, &summary, &format!("Allow {} more?", args.by))?;
            Ok(output::json(r, &actions::extend(ctx, &paths, args.by)?.state))
        }
        Command::Approve(args) => {
            human::require_terminal("approve")?;
            let paths = ctx.cycle(&args.state)?;
            let state = files::load_state(&paths.state)?;
            if let Some(dispute) = state.dispute.as_ref() {
                let summary = format!(
                    "Cycle {} is {}: {}.\nApproving takes the PR's version of those tests as yours; the same head is then tested again with them.",
                    paths.state.display(),
                    state.status,
                    dispute.words(),
                );
                human::ask(r, &summary, "Accept the PR's version of the disputed tests?")?;
                return Ok(output::json(r, &actions::approve(ctx, &paths, "terminal")?.state));
            }
            let integrity = state.report.as_ref().and_then(|r| r.integrity.as_ref());
            let why =
                state.report.as_ref().and_then(|r| r.review_reason()).unwrap_or_else(|| "no reason recorded".into());
            let tests = integrity.and_then(|i| i.change_words()).map(|w| format!("\n{w}")).unwrap_or_default();
            let summary = format!(
                "Cycle {} is {}: {} passed at {}, but {why}.{tests}\nReview the change first (`forgeloop diff --state {}`).",
                paths.state.display(),
                state.status,
                state.pr_ref.as_deref().unwrap_or("the PR"),
                state.tested_head_sha().unwrap_or("?"),
                args.state,
            );
            human::ask(r, &summary, "Approve it (READY_TO_MERGE)?")?;
            Ok(output::json(r, &actions::approve(ctx, &paths, "terminal")?.state))
        }
        Command::Project(args) => project::run(ctx, args),
        Command::Tui(args) => {
            let opts = crate::tui::TuiOptions { dirs: args.dir, theme: args.theme, mouse: args.mouse };
            crate::tui::run(ctx.clone(), opts).map_err(|e| Error::Invalid(e.to_string()))?;
            Ok(0)
        }
        #[cfg(feature = "demo")]
        Command::Demo(_) => Err(Error::Invalid("`forgeloop demo` runs before a context is built".into())),
        Command::Mcp(_) => crate::mcp::run(ctx.clone()),
        Command::Serve(args) => serve(ctx, args),
        Command::Man(args) => {
            let page = man_page(&args.command)?;
            let mut out = std::io::stdout().lock();
            let _ = std::io::Write::write_all(&mut out, &page).and_then(|()| std::io::Write::flush(&mut out));
            Ok(0)
        }
        Command::Completions(args) => {
            // Into a buffer first: clap_complete panics when its writer fails (`| head`).
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "forgeloop", &mut script);
            let mut out = std::io::stdout().lock();
            let _ = std::io::Write::write_all(&mut out, &script).and_then(|()| std::io::Write::flush(&mut out));
            Ok(0)
        }
    }
}

/// The roff of forgeloop(1), or of the page of the command at `path` (`["review", "start"]`:
/// forgeloop-review-start(1)), its own subcommands listed in it: what `forgeloop man` prints.
pub fn man_page(path: &[String]) -> Result<Vec<u8>> {
    let mut command = Cli::command().name("forgeloop");
    let mut name = "forgeloop".to_owned();
    for part in path {
        let found = command.get_subcommands().find(|c| c.get_name() == part.as_str() && !c.is_hide_set()).cloned();
        command = found.ok_or_else(|| {
            Error::Invalid(format!("{:?} is not a forgeloop command (see forgeloop --help)", path.join(" ")))
        })?;
        name = format!("{name}-{part}");
    }
    let command = command.name(name.clone()).bin_name(name.replace('-', " "));
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page).map_err(|e| Error::io("cannot render the manual page", e))?;
    Ok(page)
}

/// Every page `man/` holds: forgeloop(1) and one per command and subcommand `--help` lists,
/// by file name (`forgeloop-review-start.1`).
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>> {
    fn walk(command: &clap::Command, path: &mut Vec<String>, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
        let file = std::iter::once("forgeloop").chain(path.iter().map(String::as_str)).collect::<Vec<_>>().join("-");
        pages.push((format!("{file}.1"), man_page(path)?));
        for sub in command.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
            path.push(sub.get_name().to_owned());
            walk(sub, path, pages)?;
            path.pop();
        }
        Ok(())
    }
    let mut pages = Vec::new();
    walk(&Cli::command(), &mut Vec::new(), &mut pages)?;
    Ok(pages)
}

/// The text of `--file` (`-` or none: stdin), at most `limit` bytes.
fn read_text(file: Option<&std::path::Path>, limit: u64, what: &str) -> Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let source = file.filter(|p| p.as_os_str() != "-");
    let read = match source {
        Some(path) => std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes)),
        None => std::io::stdin().lock().take(limit + 1).read_to_end(&mut bytes),
    };
    read.map_err(|e| match source {
        Some(path) => Error::io(format!("cannot read the {what} {}", path.display()), e),
        None => Error::io(format!("cannot read the {what} from stdin"), e),
    })?;
    if bytes.len() as u64 > limit {
        return Err(Error::Invalid(format!("the {what} is larger than {limit} bytes")));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn reply(ctx: &Ctx, args: args::ReplyArgs) -> Result<i32> {
    use crate::cycle::reply::{MAX_REPLY_BYTES, Override};
    let paths = ctx.cycle(&args.cycle.state)?;
    let text = read_text(args.file.as_deref(), MAX_REPLY_BYTES, "reply")?;
    let correction = Override::from_parts(args.as_class.as_deref(), args.reason, args.pr)?;
    let lookup = |pr: &crate::domain::pr_ref::PrRef| net::pull_head(ctx, pr);
    let (outcome, _) = crate::cycle::reply::reply(ctx, &paths, &text, correction, Some(&lookup))?;
    Ok(output::json(&ctx.redactor, &outcome))
}

fn parse_status(text: &str) -> Result<Status> {
    text.parse::<Status>().map_err(|e| Error::Invalid(e.to_string()))
}

/// `handoff` prints the header and the comment; `iterate` prints what to send WebGPT after a
/// failure (comment plus the PR_URL request) and refuses a report that passed.
fn handoff(ctx: &Ctx, path: &Path, iterate: bool) -> Result<i32> {
    let read_err = |reason: String| Error::Invalid(format!("cannot read the report {}: {reason}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| read_err(e.to_string()))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| read_err(e.to_string()))?;
    let handoff = crate::cycle::handoff::read(value).map_err(|e| read_err(e.to_string()))?;
    if iterate {
        let message = handoff.message().map_err(|e| Error::Invalid(e.to_string()))?;
        return Ok(output::text(&ctx.redactor, &message));
    }
    Ok(output::text(&ctx.redactor, &format!("{}\n{}", handoff.header(), handoff.comment)))
}

/// `forgeloop serve`: its grant commands, or the server, after the exposure check (a
/// non-loopback address needs an https public URL and the person's yes on a terminal).
fn serve(ctx: &Ctx, args: args::ServeArgs) -> Result<i32> {
    let r = &ctx.redactor;
    if args.grants {
        return Ok(output::json(r, &crate::serve::grants(ctx)?));
    }
    if let Some(which) = &args.revoke {
        return Ok(output::json(r, &crate::serve::revoke(ctx, which)?));
    }
    if args.new_code {
        return Ok(output::json(r, &crate::serve::new_code(ctx)?));
    }
    if let (Some(review), Some(grant)) = (args.share.as_deref().or(args.unshare.as_deref()), args.grant.as_deref()) {
        return Ok(output::json(r, &crate::serve::share(ctx, grant, review, args.share.is_some())?));
    }
    if args.grant.is_some() {
        return Err(Error::Invalid("--grant names the grant of --share or --unshare".into()));
    }
    let public_url = args.public_url.as_deref().map(crate::serve::check_public_url).transpose()?;
    if crate::serve::exposure(&args.listen, public_url.as_deref())? {
        human::require_terminal("serve on a non-loopback address")?;
        let summary = format!(
            "forgeloop serve would listen on {}, reachable from other machines, for {}.\nOnly clients you pair with the code can use it, but prefer a loopback address behind your tunnel.",
            args.listen,
            public_url.as_deref().unwrap_or("?")
        );
        human::ask(r, &summary, "Listen there?")?;
    }
    crate::serve::run(ctx.clone(), crate::serve::ServeOptions { listen: args.listen, public_url })
}
