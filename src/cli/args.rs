//! The command line (design §5). Flag names and meanings of the reference tool are kept.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

// A doc comment on a clap field is its help text: fields shown without one are `pub(crate)`
// rather than documented, so `--help` says what it always said.

/// The whole command line: the global options and one subcommand.
#[derive(Debug, Parser)]
#[command(
    name = "forgeloop",
    version,
    about = "Run the WebGPT pull-request loop: test each PR head in isolation, relay failures, never merge.",
    long_about = "Run the WebGPT pull-request loop: test each PR head in isolation, relay failures, never merge.\n\n\
Every subcommand prints one JSON document on stdout (handoff/iterate print the text to paste). \
Exit codes: 0 done, 1 tests failed (test only), 2 blocked, refused or bad input.",
    propagate_version = true
)]
pub struct Cli {
    /// forgeloop home: cycles, task-space index, git mirrors [default: $XDG_STATE_HOME/forgeloop]
    #[arg(long, global = true, env = "FORGELOOP_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// ChatGPT Project registry [default: ~/.local/share/webgpt-orchestrator/projects]
    #[arg(long, global = true, env = "FORGELOOP_REGISTRY", value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Config file [default: $XDG_CONFIG_HOME/forgeloop/config.toml]
    #[arg(long, global = true, env = "FORGELOOP_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// GitHub REST API base URL (GitHub Enterprise: https://HOST/api/v3) [default: https://api.github.com]
    #[arg(long, global = true, env = "FORGELOOP_GITHUB_API", value_name = "URL")]
    pub github_api: Option<String>,
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand; each variant's doc comment is its `--help` line.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a cycle (--request) or test its PR and advance it (--pr)
    #[command(visible_alias = "cycle")]
    Forge(ForgeArgs),
    /// PR metadata: head SHA, open/closed/merged, draft, base, head repository, checks
    Status(StatusArgs),
    /// What WebGPT changed: a tested head's diff (redacted), or the change since the last run
    Diff(DiffArgs),
    /// A file (or --list a directory) of a PR's head, its base, or a repository's default
    /// branch, from the mirror: redacted, size-bounded
    Show(ShowArgs),
    /// Test a PR's head SHA once, outside any cycle (exit 0 passed, 1 failed, 2 blocked)
    Test(TestArgs),
    /// Retry publishing the last run's PR comment of a cycle
    Comment(StateArgs),
    /// Print the handoff text of a test report (header + comment)
    Handoff(ResultArgs),
    /// Print the text to send WebGPT after a failed report (comment + PR_URL request)
    Iterate(ResultArgs),
    /// Classify WebGPT's finished reply and apply the ask-once rule
    Reply(ReplyArgs),
    /// The single next action for a cycle: what to send, what to run, or why to stop
    Next(StateArgs),
    /// Record that the pending message was typed into the chat (refused the second time)
    Sent(StateArgs),
    /// The pending message, the last one sent, and what was withdrawn; --drop (human only, on a
    /// terminal) takes the pending one out unsent
    Outbox(OutboxArgs),
    /// Put a person's words to WebGPT in the outbox (review feedback, scope, a clarification)
    Say(SayArgs),
    /// Replace a cycle's stored commands between runs; widening the sandbox needs a terminal
    Commands(CommandsArgs),
    /// Block until the cycle's status changes (or reaches one of --until)
    Wait(WaitArgs),
    /// Every known cycle, those needing a person first
    List(ListArgs),
    /// The cycle's journal; --verify checks its hash chain
    Log(LogArgs),
    /// Stop a cycle for good
    Abort(AbortArgs),
    /// Move a cycle to a BLOCKED_* status (e.g. BLOCKED_MODEL_UNAVAILABLE)
    Block(BlockArgs),
    /// Human only, on a terminal: confirm a brief awaiting confirmation
    Confirm(StateArgs),
    /// Human only, on a terminal: lift a BLOCKED_* status
    Unblock(StateArgs),
    /// Human only, on a terminal: raise the iteration cap
    Extend(ExtendArgs),
    /// Human only, on a terminal: approve a pass that changed protected paths (NEEDS_REVIEW)
    Approve(StateArgs),
    /// Review cycles: WebGPT reviews a change (start, prepare the packet, approve it, reply, show, fixed)
    Review(ReviewArgs),
    /// A review's connector attestation: what the browser shows and a challenge bound to the
    /// commit; --answer checks the chat's reply against the mirror
    Attest(AttestArgs),
    /// Decide a review finding: FIX, DEFER, DISMISS or QUESTION (--note is the question)
    Triage(TriageArgs),
    /// The ChatGPT Project registry: lookup, bind, unbind, attach, list, sources
    Project(super::project::ProjectArgs),
    /// Redact secrets and local paths from a file or stdin (a filter for any log)
    Redact(RedactArgs),
    /// Check git, GitHub access, the token, the registry and the home directory
    Doctor,
    /// Delete the git mirrors no cycle has used for 30 days (--unused-days); ones in use are kept
    Gc(GcArgs),
    /// Print shell completions
    Completions(CompletionsArgs),
    /// Print a manual page (roff): forgeloop(1), or forgeloop-COMMAND(1)
    Man(ManArgs),
    /// Test infrastructure: serve the GitHub emulator on 127.0.0.1 (tests and the demo only)
    #[cfg(feature = "demo")]
    #[command(hide = true)]
    GithubEmulator(EmulatorArgs),
    /// The control room: watch every cycle live, confirm briefs, rerun, abort, unblock, extend
    Tui(TuiArgs),
    // The help line counts the scenario table's cycles (`demo::scenarios::about`).
    /// `forgeloop demo`: the scenario cycles against the built-in GitHub emulator.
    #[cfg(feature = "demo")]
    #[command(about = crate::demo::scenarios::about())]
    Demo(DemoArgs),
    /// MCP server on stdin/stdout: PR status, test with a configured profile, handoff, cycles, the relay loop
    Mcp(McpArgs),
    /// The remote connector: MCP over Streamable HTTP with OAuth, for ChatGPT's connectors
    Serve(ServeArgs),
}

impl Command {
    /// Whether this command may reach libgit2 (a checkout, a rerun, the emulator's git side).
    /// The others only read and write forgeloop's own files, so they skip its start-up cost.
    pub fn may_use_git(&self) -> bool {
        match self {
            Command::Forge(args) => args.pr.is_some(),
            Command::Handoff(_)
            | Command::Iterate(_)
            | Command::Reply(_)
            | Command::Next(_)
            | Command::Sent(_)
            | Command::Outbox(_)
            | Command::Say(_)
            | Command::Commands(_)
            | Command::Wait(_)
            | Command::List(_)
            | Command::Log(_)
            | Command::Abort(_)
            | Command::Block(_)
            | Command::Confirm(_)
            | Command::Unblock(_)
            | Command::Extend(_)
            | Command::Approve(_)
            | Command::Project(_)
            | Command::Redact(_)
            | Command::Gc(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Triage(_) => false,
            Command::Review(_) | Command::Attest(_) => true,
            Command::Status(_)
            | Command::Diff(_)
            | Command::Show(_)
            | Command::Test(_)
            | Command::Comment(_)
            | Command::Doctor
            | Command::Tui(_)
            | Command::Mcp(_)
            | Command::Serve(_) => true,
            #[cfg(feature = "demo")]
            Command::GithubEmulator(_) | Command::Demo(_) => true,
        }
    }

    /// Whether this command may talk to GitHub, so its context is built with the token found
    /// first (design §2: token, then redactor, then context). The others never look for one
    /// (no `gh auth token` for `list`).
    pub fn may_use_github(&self) -> bool {
        match self {
            Command::Forge(args) => args.pr.is_some() || args.new_repo.is_some(),
            Command::Review(args) => args.needs_github(),
            Command::Status(_)
            | Command::Diff(_)
            | Command::Show(_)
            | Command::Test(_)
            | Command::Comment(_)
            | Command::Reply(_)
            | Command::Next(_)
            | Command::Doctor
            | Command::Tui(_)
            | Command::Mcp(_) => true,
            Command::Serve(args) => {
                !args.grants
                    && args.revoke.is_none()
                    && !args.new_code
                    && args.share.is_none()
                    && args.unshare.is_none()
            }
            _ => false,
        }
    }

    /// Whether this command opens the home, and so tightens one left readable by others (design
    /// §2.4). Not `doctor`, which reports a loose home and changes nothing; not the filters and
    /// tools that never touch it; not the demo, which makes a home of its own.
    pub fn opens_home(&self) -> bool {
        match self {
            Command::Doctor | Command::Redact(_) | Command::Completions(_) | Command::Man(_) => false,
            #[cfg(feature = "demo")]
            Command::GithubEmulator(_) | Command::Demo(_) => false,
            _ => true,
        }
    }
}

/// `forgeloop forge`: start a cycle, or test its PR and advance it.
#[derive(Debug, Args)]
pub struct ForgeArgs {
    /// The cycle (`--state`).
    #[command(flatten)]
    pub cycle: StateArgs,
    /// What to implement (request mode)
    #[arg(long, conflicts_with = "request_from_review")]
    pub request: Option<String>,
    /// Request mode with the FIX findings of a finished review cycle as the request
    #[arg(long, value_name = "REVIEW_STATE")]
    pub request_from_review: Option<String>,
    /// The exact question for WebGPT, confirmed with the user
    #[arg(long, value_name = "TEXT")]
    pub webgpt_question: Option<String>,
    /// The confirmed brief: Goal, Success, Scope / non-goals, Constraints, Validation
    #[arg(long, value_name = "TEXT")]
    pub intent_brief: Option<String>,
    /// Pull request to test: https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N (PR mode)
    #[arg(long, value_name = "REF")]
    pub pr: Option<String>,
    /// Commands file: [["argv", ...], ...] or {"commands": [...], ...}
    #[arg(long, value_name = "FILE")]
    pub commands_json: Option<PathBuf>,
    /// Publish the result as a PR comment (idempotent)
    #[arg(long)]
    pub post_comment: bool,
    /// Provision a new repository for the cycle (private unless --public)
    #[arg(long, value_name = "NAME")]
    pub new_repo: Option<String>,
    /// Organization for --new-repo [default: the token's user]
    #[arg(long, value_name = "ORG")]
    pub owner: Option<String>,
    /// Make the --new-repo repository public
    #[arg(long)]
    pub public: bool,
    /// Iteration cap (request mode) [default: 5]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_iterations: Option<i64>,
    /// Start in AWAITING_BRIEF_CONFIRMATION: a person confirms the brief in the control room
    #[arg(long)]
    pub await_confirmation: bool,
    /// Continue OLD (carrying iteration, cap, binding, confirmed brief, commands and PR) and supersede it
    #[arg(long, value_name = "OLD")]
    pub continue_from: Option<String>,
    /// Also check out submodules (PR mode)
    #[arg(long)]
    pub submodules: bool,
    /// Keep the checkout for debugging (PR mode), under <home>/kept/: its working tree holds
    /// files the PR's code wrote; its .git is rewritten by forgeloop
    #[arg(long)]
    pub keep_checkout: bool,
    /// Run without the repository's warm cache, as on a fresh machine (PR mode)
    #[arg(long)]
    pub fresh: bool,
    /// Human only, on a terminal: test the head again even if it was already tested (PR mode)
    #[arg(long)]
    pub rerun: bool,
}

/// `forgeloop say`: a person's words for WebGPT.
#[derive(Debug, Args)]
pub struct SayArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The message; `-` or omitted reads stdin
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `forgeloop commands`: replace a cycle's stored commands.
#[derive(Debug, Args)]
pub struct CommandsArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The corrected commands file; a change that widens the sandbox needs a terminal
    #[arg(long, value_name = "FILE")]
    pub commands_json: PathBuf,
}

/// `forgeloop status`: a PR's metadata.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N
    #[arg(long, value_name = "REF")]
    pub pr: String,
}

/// `forgeloop diff`: what a cycle's PR changed, or a PR's whole change.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["state", "pr"])))]
pub struct DiffArgs {
    /// A cycle: the diff of its last tested head (or --iteration K's)
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// A PR outside any cycle: its whole change at its current head
    #[arg(long, value_name = "REF", conflicts_with_all = ["iteration", "since_last"])]
    pub pr: Option<String>,
    /// The run whose head to show (default: the last)
    #[arg(long, value_name = "K", requires = "state")]
    pub iteration: Option<u32>,
    /// The change from the previous tested head to this one (what came back after the handoff)
    #[arg(long, requires = "state")]
    pub since_last: bool,
    /// The file list with +/- counts instead of the diff
    #[arg(long, conflicts_with = "json")]
    pub stat: bool,
    /// One JSON document: the files with their counts, the SHAs, masked spots and the diff
    #[arg(long)]
    pub json: bool,
}

/// `forgeloop outbox`: see, or as a person drop, the cycle's pending message.
#[derive(Debug, Args)]
pub struct OutboxArgs {
    /// The cycle (`--state`).
    #[command(flatten)]
    pub cycle: StateArgs,
    /// Human only, on a terminal: take the pending message out unsent (not the first prompt)
    #[arg(long)]
    pub drop: bool,
}

/// `forgeloop show`: one file or directory of a repository's tree, from the mirror.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("tree").required(true).args(["pr", "repository"])))]
pub struct ShowArgs {
    /// A PR: its head (or, with --base, the tip of the branch it targets)
    #[arg(long, value_name = "REF")]
    pub pr: Option<String>,
    /// With --pr: the base branch's tip instead of the PR's head
    #[arg(long, requires = "pr")]
    pub base: bool,
    /// A repository (OWNER/REPO): its default branch's tip
    #[arg(long, value_name = "OWNER/REPO", conflicts_with = "pr")]
    pub repository: Option<String>,
    /// List the directory PATH (the root when PATH is left out)
    #[arg(long)]
    pub list: bool,
    /// One JSON document: the repository, the commit, the path, and the text or the entries
    #[arg(long)]
    pub json: bool,
    /// The file (or with --list the directory), relative to the repository's root
    #[arg(value_name = "PATH", default_value = "")]
    pub path: String,
}

/// `forgeloop test`: one run of a PR's head outside any cycle.
#[derive(Debug, Args)]
pub struct TestArgs {
    #[arg(long, value_name = "REF")]
    pub(crate) pr: String,
    #[arg(long, value_name = "FILE")]
    pub(crate) commands_json: PathBuf,
    /// Also write the report to FILE
    #[arg(long, value_name = "FILE")]
    pub result: Option<PathBuf>,
    /// Publish the result as a PR comment (idempotent)
    #[arg(long)]
    pub post_comment: bool,
    /// Also check out submodules
    #[arg(long)]
    pub submodules: bool,
    /// Keep the checkout for debugging, under <home>/kept/: its working tree holds files the
    /// PR's code wrote; its .git is rewritten by forgeloop
    #[arg(long)]
    pub keep_checkout: bool,
    /// Run without the repository's warm cache, as on a fresh machine
    #[arg(long)]
    pub fresh: bool,
}

/// `forgeloop gc`: delete unused git mirrors.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Delete mirrors unused for at least this many days
    #[arg(long, value_name = "DAYS", default_value_t = crate::cycle::gc::DEFAULT_UNUSED_DAYS)]
    pub unused_days: u64,
    /// Only list what would be deleted
    #[arg(long)]
    pub dry_run: bool,
}

/// `forgeloop redact`: the redactor as a filter.
#[derive(Debug, Args)]
pub struct RedactArgs {
    /// The file to redact [default: stdin]
    pub file: Option<PathBuf>,
    /// Print what was masked (kind and position, never the value) as JSON instead
    #[arg(long)]
    pub explain: bool,
}

/// `forgeloop github-emulator`: serve the emulator for tests and the demo.
#[cfg(feature = "demo")]
#[derive(Debug, Args)]
pub struct EmulatorArgs {
    /// Directory for the emulator's bare repositories
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// The chosen port is written here once listening
    #[arg(long, value_name = "FILE")]
    pub port_file: PathBuf,
    /// Require this token (REST and git)
    #[arg(long, value_name = "TOKEN", env = "FORGELOOP_EMULATOR_TOKEN")]
    pub token: Option<String>,
}

/// The commands that read a test report (`handoff`, `iterate`).
#[derive(Debug, Args)]
pub struct ResultArgs {
    /// A report written by `test --result` (or a cycle's runs/*.json)
    #[arg(long, value_name = "FILE")]
    pub result: PathBuf,
}

/// `--state`, declared once: the commands that name only a cycle (`next`, `sent`, `confirm`,
/// …) take it alone, the others flatten it in.
#[derive(Debug, Args)]
pub struct StateArgs {
    /// State file path, or a bare name for <home>/cycles/NAME.json
    #[arg(long, value_name = "STATE")]
    pub state: String,
}

/// `forgeloop reply`: classify WebGPT's reply.
#[derive(Debug, Args)]
pub struct ReplyArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The reply text; `-` or omitted reads stdin
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Override the classification: PR_FOUND, PR_NOT_CREATED, CONNECTOR_DENIED, PR_WRONG_REPOSITORY, NO_PR_REFERENCE
    /// (PR_UNCHANGED is decided from the PR's head on GitHub)
    #[arg(long = "as", value_name = "CLASS", requires = "reason")]
    pub as_class: Option<String>,
    /// Why the override is right (journaled)
    #[arg(long, value_name = "TEXT", requires = "as_class")]
    pub reason: Option<String>,
    /// The PR, with --as PR_FOUND
    #[arg(long, value_name = "REF", requires = "as_class")]
    pub pr: Option<String>,
}

/// `forgeloop wait`: block until the cycle changes.
#[derive(Debug, Args)]
pub struct WaitArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// Return when the status is one of these (repeatable); default: any change
    #[arg(long, value_name = "STATUS")]
    pub until: Vec<String>,
    /// Give up after SECS seconds (exit 2, status TIMEOUT)
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
}

/// `forgeloop list`: every known cycle.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Also look for state files in DIR (repeatable)
    #[arg(long, value_name = "DIR")]
    pub dir: Vec<PathBuf>,
}

/// `forgeloop log`: a cycle's journal.
#[derive(Debug, Args)]
pub struct LogArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// Check the hash chain instead of printing events
    #[arg(long)]
    pub verify: bool,
}

/// `forgeloop abort`: stop a cycle for good.
#[derive(Debug, Args)]
pub struct AbortArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    #[arg(long, value_name = "TEXT")]
    pub(crate) reason: String,
}

/// `forgeloop block`: move a cycle to a `BLOCKED_*` status.
#[derive(Debug, Args)]
pub struct BlockArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// A BLOCKED_* status, e.g. BLOCKED_MODEL_UNAVAILABLE, BLOCKED_CONNECTOR_DENIED
    #[arg(long, value_name = "STATUS")]
    pub status: String,
    #[arg(long, value_name = "TEXT")]
    pub(crate) reason: String,
}

/// `forgeloop extend`: raise a cycle's iteration cap.
#[derive(Debug, Args)]
pub struct ExtendArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// How many more iterations to allow
    #[arg(long, value_name = "N")]
    pub by: u32,
}

/// `forgeloop completions`: a shell's completion script.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    pub(crate) shell: clap_complete::Shell,
}

/// `forgeloop man`: a manual page.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command, or a command and its subcommand (`forgeloop man review start` is
    /// forgeloop-review-start(1)); none: forgeloop(1)
    pub(crate) command: Vec<String>,
}

/// `forgeloop tui`: the control room.
#[derive(Debug, Args)]
pub struct TuiArgs {
    /// Also watch state files in DIR (repeatable; config tui.watch adds more)
    #[arg(long, value_name = "DIR")]
    pub dir: Vec<PathBuf>,
    /// Theme: dark, light, high-contrast, or a TOML file [default: config tui.theme, else dark]
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,
    /// Enable mouse support (click to select, wheel to scroll)
    #[arg(long)]
    pub mouse: bool,
}

/// `forgeloop demo`'s options.
#[cfg(feature = "demo")]
#[derive(Debug, Args)]
#[command(after_help = "The sandbox is a temporary directory, removed at the end; with --home DIR it is kept \
(DIR must be new, empty, or a previous demo sandbox) and `forgeloop tui --home DIR` opens it again.")]
pub struct DemoArgs {
    /// No control room: run to the end and print a JSON summary (exit 0 only if every cycle ended as expected)
    #[arg(long)]
    pub headless: bool,
    /// Pace: N times faster than the default (about 1.5 s per step; --headless default: no pauses)
    #[arg(long, value_name = "N")]
    pub speed: Option<f64>,
}

/// `forgeloop serve`: serve the remote connector, or manage its grants.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (a loopback address unless you confirm on a terminal)
    #[arg(long, default_value = crate::serve::DEFAULT_LISTEN)]
    pub listen: std::net::SocketAddr,
    /// The tunnel's public https URL (cloudflared, Tailscale Funnel, ngrok) clients reach
    #[arg(long)]
    pub public_url: Option<String>,
    /// List the grants (clients the person allowed) and exit
    #[arg(long, conflicts_with_all = ["revoke", "new_code"])]
    pub grants: bool,
    /// Revoke a grant (its id from --grants) or `all`, and exit
    #[arg(long, value_name = "GRANT|all", conflicts_with = "new_code")]
    pub revoke: Option<String>,
    /// Ask the running serve for a new pairing code, and exit
    #[arg(long)]
    pub new_code: bool,
    /// Let the client of --grant read a review cycle (get_review: status, manifest, findings), and exit
    #[arg(long, value_name = "REVIEW", requires = "grant", conflicts_with_all = ["grants", "revoke", "new_code", "unshare"])]
    pub share: Option<String>,
    /// Stop sharing a review cycle with the client of --grant, and exit
    #[arg(long, value_name = "REVIEW", requires = "grant", conflicts_with_all = ["grants", "revoke", "new_code"])]
    pub unshare: Option<String>,
    /// The grant (its id from --grants) --share or --unshare is for
    #[arg(long, value_name = "GRANT")]
    pub grant: Option<String>,
}

/// `forgeloop mcp` takes no options.
#[derive(Debug, Args)]
pub struct McpArgs {}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Cli;

    fn may_use_git(args: &[&str]) -> bool {
        Cli::try_parse_from([&["forgeloop"], args].concat()).unwrap().command.may_use_git()
    }

    #[test]
    fn doctor_and_the_filters_leave_the_home_as_it_is() {
        let opens = |args: &[&str]| Cli::try_parse_from([&["forgeloop"], args].concat()).unwrap().command.opens_home();
        assert!(opens(&["list"]) && opens(&["next", "--state", "c.json"]) && opens(&["tui"]) && opens(&["mcp"]));
        assert!(!opens(&["doctor"]) && !opens(&["redact"]) && !opens(&["completions", "bash"]));
    }

    #[test]
    fn only_commands_that_can_reach_a_checkout_start_libgit2() {
        assert!(may_use_git(&["forge", "--pr", "acme/widget#1", "--state", "c.json"]));
        assert!(may_use_git(&["tui"]));
        assert!(may_use_git(&["mcp"]));
        assert!(!may_use_git(&["forge", "--request", "x", "--state", "c.json"]));
        assert!(!may_use_git(&["next", "--state", "c.json"]));
        assert!(!may_use_git(&["list"]));
    }
}

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
    Start(ReviewStartArgs),
    /// The packet for the chat when its connector is not proven; --dry-run says what it would hold
    Prepare(ReviewPrepareArgs),
    /// Human only, on a terminal: let the packet leave the machine
    Approve(StateArgs),
    /// Record the reviewer's reply: its findings wait for triage
    Reply(ReviewReplyArgs),
    /// The review: attestation, packet, findings and their triage, the FIX list
    Show(StateArgs),
    /// Record that a FIX finding was fixed by a PR cycle whose last run passed
    Fixed(ReviewFixedArgs),
}

/// `review start`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("change").required(true).args(["pr", "repository"])))]
pub struct ReviewStartArgs {
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
pub struct ReviewPrepareArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// Say what the packet would hold (each file in or out and why, bytes, tokens, risks); write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// `review reply`.
#[derive(Debug, Args)]
pub struct ReviewReplyArgs {
    #[command(flatten)]
    pub(crate) cycle: StateArgs,
    /// The reviewer's whole reply; `-` or omitted reads stdin
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `review fixed`.
#[derive(Debug, Args)]
pub struct ReviewFixedArgs {
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
