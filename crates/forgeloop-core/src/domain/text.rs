//! Text forgeloop hands to WebGPT and publishes on GitHub (design §5.5).
//!
//! The structure (headings, `PR_URL: <url>` trailer, comment heading and hidden marker) is
//! the reference tool's, so agents and humans used to it recognise it. Unlike the reference,
//! nothing a test prints can escape its code block, break the command table, or pass for
//! forgeloop's own marker.

use super::commands::TreeMode;
use super::integrity::Integrity;
use super::report::{CheckResult, CommandResult, TestStatus, TestedTree};

/// The trailer WebGPT is asked to end its reply with; `reply` looks for it.
pub const PR_URL_PLACEHOLDER: &str = "PR_URL: <url>";
/// How forgeloop's PR comment begins: the hidden marker (the reference tool's prefix).
pub const MARKER_PREFIX: &str = "<!-- webgpt-orchestrator:forge-loop";
/// The comment's heading, followed by the verdict.
pub const COMMENT_HEADING: &str = "## Forge Loop PR test:";
/// Default length of the failure tail shown in comments and handoffs.
pub const FAILURE_TAIL_CHARS: usize = 6000;

const PR_URL_REQUEST: &str = "End your reply with the pull request URL on its own line, exactly as `PR_URL: <url>`.";
/// What the first prompt says about the tests (issue 57): what is not a fix, that it is
/// caught, and the honest way out, which costs no iteration.
pub const HONESTY: &str = "The tests decide whether the change works, so fix the code, not the result: special-casing the tests' inputs, detecting or reading the tests, changing or deleting tests, overriding comparisons or the test framework, or exiting early is not a fix, and forgeloop checks for each and stops the pull request for a person. If the tests contradict this request, do not work around them: reply with a line `TESTS_CONTRADICT: <test file>:<line>: <what the test expects>, but <what the request says instead>` (and no pull request, or your pull request as it is). A person decides; it costs no iteration.";
/// The same, shorter, after every failure.
pub const HONESTY_AGAIN: &str = "Fix the code, not the tests: special-casing test inputs, editing tests or exiting early is not a fix and will be caught. If a test contradicts the request, answer with a `TESTS_CONTRADICT: <test file>:<line>: …` line instead of a workaround.";

/// What the first prompt is built from.
pub struct PromptInput<'a> {
    /// The confirmed WebGPT question.
    pub question: &'a str,
    /// The confirmed delegation brief.
    pub intent_brief: &'a str,
    /// The implementation request.
    pub request: &'a str,
    /// `owner/repo` and its web URL when forgeloop provisioned the repository.
    pub new_repository: Option<(&'a str, &'a str)>,
    /// The PR an earlier cycle left (`--continue-from`): the work goes on there.
    pub continue_pr: Option<&'a str>,
    /// The person's protected paths: WebGPT is told not to change them.
    pub protected_paths: &'a [String],
}

/// The first message of a cycle.
pub fn prompt(input: &PromptInput<'_>) -> String {
    let mut text = String::new();
    if let Some((repo, url)) = input.new_repository {
        text.push_str(&format!(
            "Work in the existing repository {repo} ({url}), which was created for this task. Do not create a new repository.\n\n"
        ));
    }
    match input.continue_pr {
        Some(pr) => text.push_str(&format!(
            "Continue on pull request {pr} with your GitHub connector: carry out the confirmed WebGPT question and user intent below by pushing commits to that pull request's branch (do not open another pull request), and report its exact URL and new head commit SHA. Do not merge it.\n\n"
        )),
        None => text.push_str(
            "Carry out the confirmed WebGPT question and user intent below with your GitHub connector: open a pull request and report its exact URL and head commit SHA. Do not merge it.\n\n",
        ),
    }
    text.push_str("## Confirmed WebGPT question\n");
    text.push_str(input.question);
    text.push_str("\n\n## Confirmed user intent\n");
    text.push_str(input.intent_brief);
    text.push_str("\n\n## Implementation request\n");
    text.push_str(input.request);
    text.push_str("\n\n");
    if !input.protected_paths.is_empty() {
        let paths: Vec<String> = input.protected_paths.iter().map(|p| code_span(p)).collect();
        text.push_str(&format!(
            "Do not change: {} (the person protects these paths; a pull request that changes them waits for their review, and changing tests to make them pass is not a fix).\n\n",
            paths.join(", ")
        ));
    }
    text.push_str(HONESTY);
    text.push_str("\n\n");
    text.push_str(PR_URL_REQUEST);
    text
}

/// The message sent back after a failed run: the comment plus the chat-only trailer, which
/// asks for a fix, or after a merge conflict for the branch to be brought up to date.
pub fn handoff(comment_markdown: &str, status: TestStatus) -> String {
    let ask = match status {
        TestStatus::MergeConflict => {
            "Bring the branch up to date with its base branch: merge the base branch into it (or rebase it onto the base branch), resolve the conflicts, and push to the same pull request."
        }
        _ => "Push a fix to the same pull request.",
    };
    match status {
        TestStatus::MergeConflict => format!("{comment_markdown}\n\n{ask} {PR_URL_REQUEST}"),
        _ => format!("{comment_markdown}\n\n{ask} {HONESTY_AGAIN} {PR_URL_REQUEST}"),
    }
}

/// The one follow-up sent when a reply carried no usable PR reference.
pub fn followup() -> String {
    format!(
        "I could not find a pull request in your last reply. If you opened one, reply with its URL on its own line as `{PR_URL_PLACEHOLDER}`. If you could not open one, reply `PR_URL: NOT_CREATED` and explain why."
    )
}

/// The note sent when WebGPT pointed at a head already tested (`PR_UNCHANGED`): one that
/// `failed` (as reported), or one that passed before the person asked for changes.
pub fn unchanged(pr: &str, head_sha: &str, branch: Option<&str>, failed: bool) -> String {
    let short = head_sha.get(..12).unwrap_or(head_sha);
    let target = match branch {
        Some(branch) => format!("to its branch `{branch}`"),
        None => "to its branch".to_owned(),
    };
    let (what, push) = match failed {
        true => ("which failed as reported", "Push your fix"),
        false => ("which was already tested before the changes asked for", "Push the changes"),
    };
    format!(
        "The head of {pr} is still {short}, {what}; nothing new was tested. {push} {target} (the same pull request), then reply with its URL on its own line as `{PR_URL_PLACEHOLDER}`."
    )
}

/// Whether `text` is the note [`unchanged`] writes after a failed run (its fixed words).
pub fn is_unchanged_note(text: &str) -> bool {
    text.starts_with("The head of ") && text.contains(", which failed as reported; nothing new was tested.")
}

/// A person's words put before a message that was waiting to be sent: one message, theirs first.
pub fn before_pending(words: &str, pending: &str) -> String {
    format!("{}\n\n---\n\n{pending}", words.trim())
}

/// The follow-up when WebGPT linked a PR of another repository than the cycle's.
pub fn followup_wrong_repository(found: &str, expected: &str) -> String {
    format!(
        "The pull request in your last reply, {found}, is not in {expected}, the repository of this task. Open the pull request in {expected} and reply with its URL on its own line as `{PR_URL_PLACEHOLDER}`, or reply `PR_URL: NOT_CREATED` and explain why you cannot."
    )
}

/// Identifies forgeloop's own comment so a retry updates it instead of posting twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// The cycle's task space; absent outside a cycle (a one-shot `test`, `handoff`).
    pub task_space: Option<String>,
    /// The iteration the comment reports; absent outside a cycle.
    pub iteration: Option<u32>,
    /// The commit tested.
    pub head_sha: String,
}

impl Marker {
    /// The marker line, its values percent-encoded so nothing ends the HTML comment early.
    pub fn render(&self) -> String {
        let mut text = String::from(MARKER_PREFIX);
        if let Some(task_space) = &self.task_space {
            text.push_str(" task-space=");
            text.push_str(&marker_escape(task_space));
        }
        if let Some(iteration) = self.iteration {
            text.push_str(&format!(" iteration={iteration}"));
        }
        text.push_str(" sha=");
        text.push_str(&marker_escape(&self.head_sha));
        text.push_str(" -->");
        text
    }

    /// The marker of a comment body, recognised only as the body's first line, which only
    /// forgeloop writes; anything inside the failure output is ignored.
    pub fn find(body: &str) -> Option<Marker> {
        let first = body.lines().next()?.trim_end();
        let inner = first.strip_prefix(MARKER_PREFIX)?.strip_suffix("-->")?;
        let mut marker = Marker { task_space: None, iteration: None, head_sha: String::new() };
        for word in inner.split_whitespace() {
            let (key, value) = word.split_once('=')?;
            match key {
                "task-space" => marker.task_space = Some(marker_unescape(value)?),
                "iteration" => marker.iteration = Some(value.parse().ok()?),
                "sha" => marker.head_sha = marker_unescape(value)?,
                _ => {}
            }
        }
        (!marker.head_sha.is_empty()).then_some(marker)
    }
}

/// Percent-encodes everything outside a small safe set, so `-->` or spaces in a state file
/// name can never end the HTML comment early.
fn marker_escape(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b':' | b'-') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out.replace("--", "-%2D")
}

fn marker_unescape(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What a run's PR comment is built from (design §5.5).
pub struct CommentInput<'a> {
    /// The marker to put on the first line.
    pub marker: &'a Marker,
    /// The verdict.
    pub status: TestStatus,
    /// The base repository (`owner/repo`).
    pub repository: &'a str,
    /// The PR's number.
    pub pull_request: u64,
    /// The commit tested.
    pub head_sha: &'a str,
    /// The profile's setup commands (design §5.2.3), listed before the tests.
    pub setup: &'a [CommandResult],
    /// The test commands, with how each ended.
    pub commands: &'a [CommandResult],
    /// The failing command's redacted output tail; `None` after a pass.
    pub failure_output: Option<&'a str>,
    /// Where the full log is kept, e.g. "run log `3-0123456789ab.log` of cycle `x`".
    pub log_hint: Option<&'a str>,
    /// What the commands ran in ("isolated, no network", "unsandboxed"); `None` omits the line.
    pub sandbox: Option<&'a str>,
    /// A `github-checks` run's checks (design §5.7): listed instead of the commands.
    pub checks: &'a [CheckResult],
    /// What the PR did to its tests and protected paths (design §5.2); `None` omits the lines.
    pub integrity: Option<&'a Integrity>,
    /// What the commands ran in (design §5.2.1) and the base tip it was merged into or judged
    /// against; `None` omits the line (a CI run, an older report).
    pub tested: Option<(&'a TestedTree, &'a str)>,
    /// What the verdict rests on (issue 57): the evidence, the tripwire, a confirmation, a
    /// dispute; `None` omits the lines.
    pub proof: Option<Proof<'a>>,
}

/// What a verdict rests on beyond the exit codes (issue 57), as the comment says it.
#[derive(Default)]
pub struct Proof<'a> {
    /// The runners' own results judged against the base's.
    pub evidence: Option<&'a super::test_results::Evidence>,
    /// Where the base's results came from, or why there were none.
    pub baseline: Option<&'a super::report::BaselineUsed>,
    /// The tripwire's word on the test framework.
    pub tripwire: Option<&'a super::test_results::Tripwire>,
    /// A pass on the cycle's layer confirmed from the base layer alone.
    pub confirmation: Option<&'a super::report::Confirmation>,
    /// Held tests the PR corrected, on which alone the run failed.
    pub disputed: &'a [super::dispute::DisputedTest],
    /// Why a pass waits for a person, every reason ([`super::report::Report::review_reason`]).
    pub review_reason: Option<String>,
}

impl<'a> Proof<'a> {
    /// What `report` says of it.
    pub fn of(report: &'a super::report::Report) -> Proof<'a> {
        Proof {
            evidence: report.evidence.as_ref(),
            baseline: report.baseline.as_ref(),
            tripwire: report.tripwire.as_ref(),
            confirmation: report.confirmation.as_ref(),
            disputed: &report.disputed,
            review_reason: report.review_reason(),
        }
    }
}

/// The comment's lines about what the verdict rests on.
fn proof_lines(proof: &Proof<'_>, lines: &mut Vec<String>) {
    if let Some(evidence) = proof.evidence {
        let base = match proof.baseline.and_then(|b| b.none.as_deref()) {
            Some(why) => format!(" (no baseline: {why})"),
            None => String::new(),
        };
        lines.push(format!("- Evidence: {}{base}", table_cell(&evidence.summary)));
    }
    if let Some(confirmation) = proof.confirmation {
        let runs = if confirmation.layer_runs == 1 {
            "1 earlier run".to_owned()
        } else {
            format!("{} earlier runs", confirmation.layer_runs)
        };
        lines.push(format!(
            "- Confirmed: it passed on this cycle's cache (written by {runs}), then again from the base branch's cache alone; this second run is the verdict"
        ));
    }
    match proof.tripwire {
        Some(super::test_results::Tripwire::Tampered(why)) => lines
            .push(format!("- Tripwire: the test framework does not report failures faithfully: {}", table_cell(why))),
        Some(super::test_results::Tripwire::Faithful) => {
            lines.push("- Tripwire: the test framework reports failures faithfully".to_owned())
        }
        _ => {}
    }
    for test in proof.disputed.iter().take(5) {
        lines.push(format!("- Disputed (the person decides, no fix is asked): {}", table_cell(&test.words())));
    }
}

/// The PR comment. It never contains the chat-only `PR_URL` trailer.
pub fn comment_markdown(input: &CommentInput<'_>) -> String {
    let mut lines = vec![
        input.marker.render(),
        format!("{COMMENT_HEADING} {}", input.status.as_str()),
        format!("- Repository: {}", code_span(input.repository)),
        format!("- PR: {}", code_span(&format!("#{}", input.pull_request))),
        format!("- Head SHA: {}", code_span(input.head_sha)),
    ];
    if let Some((tested, base_sha)) = input.tested {
        lines.push(tested_line(tested, base_sha));
    }
    if let Some(sandbox) = input.sandbox {
        lines.push(format!("- Sandbox: {}", table_cell(sandbox)));
    }
    if let Some(integrity) = input.integrity {
        if let Some(words) = integrity.words() {
            let look = input.status == TestStatus::Passed && integrity.flag.is_some_and(|f| f.needs_a_look());
            let look = if look { " (passed with its own tests changed: review before merging)" } else { "" };
            lines.push(format!("- Tests: {}{look}", table_cell(&words)));
        }
        for (path, line) in integrity.removed_lines().take(3) {
            lines.push(format!("  - removed from {}: {}", code_span(path), code_span(line)));
        }
        for hit in integrity.gaming.iter().take(5) {
            lines.push(format!("- Looks like a shortcut: {}", table_cell(&hit.words)));
        }
    }
    if let Some(proof) = &input.proof {
        proof_lines(proof, &mut lines);
    }
    let reason = match &input.proof {
        Some(proof) => proof.review_reason.clone(),
        None => input.integrity.and_then(Integrity::review_reason),
    };
    if let Some(reason) = reason.filter(|_| input.status == TestStatus::Passed || input.proof.is_none()) {
        lines.push(format!("- Needs a person's review: {}", table_cell(&reason)));
    }
    if !input.checks.is_empty() {
        lines.push("- Tested by: the repository's own CI (forgeloop ran nothing locally)".to_owned());
        lines.extend([
            String::new(),
            "| Check | Result | Duration | App |".to_owned(),
            "|---|---|---:|---|".to_owned(),
        ]);
        for check in input.checks {
            let name = table_cell(&code_span(&check.name));
            let name = match &check.url {
                Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
                    format!("{name} ([details]({}))", table_cell(&url.replace([' ', ')', '('], "")))
                }
                _ => name,
            };
            lines.push(format!(
                "| {name} | {} | {} | {} |",
                table_cell(check.conclusion.as_deref().unwrap_or(&check.status)),
                check.duration_seconds.map_or_else(|| "-".to_owned(), format_duration),
                table_cell(check.app.as_deref().unwrap_or("-")),
            ));
        }
    }
    if !input.commands.is_empty() || input.checks.is_empty() {
        lines.extend([String::new(), "| Command | Exit | Duration |".to_owned(), "|---|---:|---:|".to_owned()]);
    }
    let setup = input.setup.iter().map(|c| ("setup: ", c));
    for (label, command) in setup.chain(input.commands.iter().map(|c| ("", c))) {
        lines.push(format!(
            "| {label}{} | {} | {} |",
            command.argv.iter().map(|part| table_cell(&code_span(part))).collect::<Vec<_>>().join(" "),
            exit_cell(command),
            if command.not_run { "-".to_owned() } else { format_duration(command.duration_seconds) },
        ));
    }
    if let Some(output) = input.failure_output.filter(|o| !o.is_empty()) {
        lines.push(String::new());
        lines.push(match input.log_hint {
            Some(hint) => format!("Failure output (redacted, last part; full log: {hint}):"),
            None => "Failure output (redacted):".to_owned(),
        });
        let fence = fence_for(output);
        lines.push(fence.clone());
        lines.push(output.trim_end_matches('\n').to_owned());
        lines.push(fence);
    }
    lines.join("\n")
}

/// `- Tested: the merge into `main` at `0123456789ab`, with `t.sh` as `main` has it`, or the
/// conflict that kept anything from running.
fn tested_line(tested: &TestedTree, base_sha: &str) -> String {
    let base = code_span(&tested.base_ref);
    let at = code_span(base_sha.get(..12).unwrap_or(base_sha));
    if !tested.conflicts.is_empty() {
        let paths: Vec<String> = tested.conflicts.iter().map(|p| code_span(p)).collect();
        return format!("- Merge: conflicts with {base} at {at} in {}: nothing ran", table_cell(&paths.join(", ")));
    }
    let what = match tested.tree {
        TreeMode::Merge => format!("the merge into {base} at {at}"),
        TreeMode::Head => format!("the head alone (not merged into {base}, judged against it at {at})"),
    };
    let held = match tested.held.as_slice() {
        [] => String::new(),
        held => {
            let shown: Vec<String> = held.iter().take(5).map(|p| code_span(p)).collect();
            let more = held.len().saturating_sub(5);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!(", with {}{more} as {base} has them (protected: the PR's version did not run)", shown.join(", "))
        }
    };
    format!("- Tested: {}", table_cell(&format!("{what}{held}")))
}

fn exit_cell(command: &CommandResult) -> String {
    if command.not_run {
        "not run".to_owned()
    } else if command.timed_out {
        "timed out".to_owned()
    } else {
        match command.exit_code {
            Some(code) => code.to_string(),
            None => "?".to_owned(),
        }
    }
}

/// `0.25` → `0.25s`, `1.0` → `1.0s`: three decimals at most, at least one.
pub fn format_duration(seconds: f64) -> String {
    let fixed = format!("{:.3}", seconds.max(0.0));
    let trimmed = fixed.trim_end_matches('0');
    let trimmed = if trimmed.ends_with('.') { format!("{trimmed}0") } else { trimmed.to_owned() };
    format!("{trimmed}s")
}

fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut current = 0;
    for c in text.chars() {
        if c == '`' {
            current += 1;
            longest = longest.max(current);
        } else {
            current = 0;
        }
    }
    longest
}

/// A backtick fence longer than any backtick run in `text`, so the text cannot close it.
fn fence_for(text: &str) -> String {
    "`".repeat((longest_backtick_run(text) + 1).max(3))
}

/// An inline code span that survives backticks inside the text; newlines become spaces.
fn code_span(text: &str) -> String {
    let flat = text.replace(['\r', '\n'], " ");
    let ticks = "`".repeat(longest_backtick_run(&flat) + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') { " " } else { "" };
    format!("{ticks}{pad}{flat}{pad}{ticks}")
}

/// Escapes `|` so a cell cannot split the table row (GFM honours `\|` inside code spans).
fn table_cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The last `max_chars` characters of `text`, starting at a line boundary when one is near.
pub fn failure_tail(text: &str, max_chars: usize) -> String {
    let trimmed = text.trim();
    let count = trimmed.chars().count();
    if count <= max_chars {
        return trimmed.to_owned();
    }
    let start = trimmed.char_indices().nth(count - max_chars).map_or(0, |(i, _)| i);
    let tail = &trimmed[start..];
    match tail.find('\n') {
        Some(newline) if newline < tail.len() / 4 => tail[newline + 1..].to_owned(),
        _ => tail.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUESTION: &str = "Implement dark mode in the existing web app, open a PR, and report its URL.";
    const BRIEF: &str = "Goal: add dark mode.\nSuccess: preferences persist across reloads.\nScope: existing web app only.\nConstraints: keep accessibility contrast.\nValidation: run the frontend test suite.";

    fn prompt_for(new_repository: Option<(&str, &str)>) -> String {
        prompt(&PromptInput {
            question: QUESTION,
            intent_brief: BRIEF,
            request: "Add dark mode",
            new_repository,
            continue_pr: None,
            protected_paths: &[],
        })
    }

    fn marker() -> Marker {
        Marker { task_space: Some("webgpt-orchestrator:cycle".into()), iteration: Some(1), head_sha: "a".repeat(40) }
    }

    fn failing(output: &str) -> String {
        let commands = vec![CommandResult {
            argv: vec!["pytest".into(), "-q".into()],
            exit_code: Some(1),
            duration_seconds: 0.25,
            timed_out: false,
            signal: None,
            not_run: false,
        }];
        comment_markdown(&CommentInput {
            marker: &marker(),
            status: TestStatus::Failed,
            repository: "acme/widget",
            pull_request: 42,
            head_sha: &"a".repeat(40),
            setup: &[],
            commands: &commands,
            failure_output: Some(output),
            log_hint: None,
            sandbox: Some("isolated, no network"),
            checks: &[],
            integrity: None,
            tested: None,
            proof: None,
        })
    }

    #[test]
    fn reference_f9_f10_f37_prompt_structure() {
        let text = prompt_for(None);
        assert!(text.contains(&format!("## Confirmed WebGPT question\n{QUESTION}")));
        assert!(text.contains(&format!("## Confirmed user intent\n{BRIEF}")));
        assert!(text.contains("## Implementation request\nAdd dark mode"));
        assert!(text.contains("PR_URL: <url>"));
        assert!(!text.contains("Do not create a new repository"));
    }

    #[test]
    fn reference_f30_new_repository_notice() {
        let text = prompt_for(Some(("acme/widget", "https://github.com/acme/widget")));
        assert!(text.starts_with("Work in the existing repository acme/widget"));
        assert!(text.contains("Do not create a new repository"));
    }

    #[test]
    fn reference_f38_f39_comment_and_handoff() {
        let comment = failing("AssertionError: expected 1 got 2");
        assert!(comment.contains("## Forge Loop PR test: TEST_FAILED"));
        assert!(comment.contains("AssertionError: expected 1 got 2"));
        assert!(comment.contains("| `pytest` `-q` | 1 | 0.25s |"));
        assert!(comment.contains("\n- Sandbox: isolated, no network\n"));
        assert!(!comment.contains("PR_URL"));
        let handoff = handoff(&comment, TestStatus::Failed);
        assert!(handoff.starts_with(&comment));
        assert!(handoff.contains("PR_URL: <url>") && handoff.contains("Push a fix"));
        let conflict = super::handoff(&comment, TestStatus::MergeConflict);
        assert!(conflict.contains("Bring the branch up to date with its base branch"), "{conflict}");
    }

    #[test]
    fn reference_f40_no_failure_section_when_passing() {
        let commands = vec![CommandResult {
            argv: vec!["pytest".into()],
            exit_code: Some(0),
            duration_seconds: 1.0,
            timed_out: false,
            signal: None,
            not_run: false,
        }];
        let comment = comment_markdown(&CommentInput {
            marker: &marker(),
            status: TestStatus::Passed,
            repository: "acme/widget",
            pull_request: 42,
            head_sha: &"a".repeat(40),
            setup: &[],
            commands: &commands,
            failure_output: None,
            log_hint: None,
            sandbox: None,
            checks: &[],
            integrity: None,
            tested: None,
            proof: None,
        });
        assert!(!comment.contains("Failure output"));
        assert!(!comment.contains("Sandbox:"));
        assert!(comment.contains("| 0 | 1.0s |"));
    }

    #[test]
    fn output_cannot_escape_its_fence() {
        let hostile = "ok\n```\n@everyone [click](https://evil.example) ![x](https://evil.example/x.png)\n````more";
        let comment = failing(hostile);
        let fence = fence_for(hostile);
        assert_eq!(fence, "`````");
        let opening = comment.find(&format!("\n{fence}\n")).unwrap();
        let closing = comment.rfind(&format!("\n{fence}")).unwrap();
        assert!(opening < comment.find("@everyone").unwrap() && comment.find("@everyone").unwrap() < closing);
        assert!(comment.ends_with(&fence));
    }

    #[test]
    fn output_cannot_forge_the_marker() {
        let fake = Marker { task_space: Some("other".into()), iteration: Some(9), head_sha: "b".repeat(40) }.render();
        let comment = failing(&format!("{fake}\n{fake}"));
        assert_eq!(Marker::find(&comment), Some(marker()));
        assert_eq!(Marker::find(&format!("hello\n{fake}")), None);
        // A state name cannot end the HTML comment or inject words.
        let odd = Marker { task_space: Some("x --> y=z".into()), iteration: None, head_sha: "c".repeat(40) };
        let rendered = odd.render();
        assert_eq!(rendered.matches("-->").count(), 1, "{rendered}");
        assert_eq!(Marker::find(&rendered), Some(odd));
    }

    #[test]
    fn table_cells_cannot_break_the_row() {
        assert_eq!(table_cell(&code_span("a|b")), "`a\\|b`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span("a\nb"), "`a b`");
    }

    #[test]
    fn durations_and_tails() {
        assert_eq!(format_duration(0.25), "0.25s");
        assert_eq!(format_duration(1.0), "1.0s");
        assert_eq!(format_duration(0.0001), "0.0s");
        assert_eq!(format_duration(12.3456), "12.346s");
        assert_eq!(failure_tail("  short \n", 10), "short");
        let long = format!("{}\nline two\nline three é", "x".repeat(50));
        assert_eq!(failure_tail(&long, 22), "line two\nline three é");
        assert_eq!(failure_tail("ééééé", 2), "éé");
    }
}
