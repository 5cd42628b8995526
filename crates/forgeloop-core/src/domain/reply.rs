//! Classifying WebGPT's finished reply (design §5.3): did it open a PR, refuse, lose access to
//! the repository, or say nothing usable? Deterministic, so the coordinator agent does not
//! have to judge prose.
//!
//! Rules, in order:
//! 1. Text inside fenced code blocks and `>` quotes is ignored (WebGPT quoting the prompt or a
//!    log must not count).
//! 2. The last `PR_URL:` line wins: a PR reference, or `NOT_CREATED`. The prompt's own
//!    placeholder `PR_URL: <url>` is not an answer.
//! 3. Without a usable trailer, pull-request links in the prose count if they all name the
//!    same PR; several different PRs are ambiguous.
//! 4. Phrases saying the GitHub connector cannot reach the repository make it
//!    `CONNECTOR_DENIED` (also when WebGPT answered `NOT_CREATED` because of that).
//! 5. A PR of another repository than the cycle's binding is `PR_WRONG_REPOSITORY`.
//! 6. A `TESTS_CONTRADICT:` line (the honest way out the prompt offers, issue 57) is kept with
//!    the classification; a reply that has it and no PR is `TESTS_CONTRADICT`: it goes to the
//!    person and costs no iteration.

use serde::{Deserialize, Serialize};

use super::pr_ref::{PrRef, WebHosts, parse_pr_ref};

/// What a WebGPT reply was taken to say; the strings are the journal's and `reply`'s output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReplyClass {
    /// It names one PR (of the cycle's repository, when it is bound): `next` says run.
    PrFound,
    /// It ends with `PR_URL: NOT_CREATED`: WebGPT says it opened none.
    PrNotCreated,
    /// It says the GitHub connector cannot reach the repository: the cycle blocks.
    ConnectorDenied,
    /// It names a PR of another repository than the cycle's binding.
    PrWrongRepository,
    /// No usable PR reference (none, several different ones, or only the placeholder).
    NoPrReference,
    /// A PR link whose head is the commit already tested and failed: nothing new to test.
    /// forgeloop decides it from the PR's head on GitHub, never the classifier.
    PrUnchanged,
    /// No PR, and a `TESTS_CONTRADICT:` line: WebGPT says the tests contradict the brief. A
    /// person decides; no iteration is spent.
    TestsContradict,
}

impl ReplyClass {
    /// Every class, in declaration order.
    pub const ALL: [ReplyClass; 7] = [
        ReplyClass::PrFound,
        ReplyClass::PrNotCreated,
        ReplyClass::ConnectorDenied,
        ReplyClass::PrWrongRepository,
        ReplyClass::NoPrReference,
        ReplyClass::PrUnchanged,
        ReplyClass::TestsContradict,
    ];

    /// The class's name, `SCREAMING_SNAKE_CASE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyClass::PrFound => "PR_FOUND",
            ReplyClass::PrNotCreated => "PR_NOT_CREATED",
            ReplyClass::ConnectorDenied => "CONNECTOR_DENIED",
            ReplyClass::PrWrongRepository => "PR_WRONG_REPOSITORY",
            ReplyClass::NoPrReference => "NO_PR_REFERENCE",
            ReplyClass::PrUnchanged => "PR_UNCHANGED",
            ReplyClass::TestsContradict => "TESTS_CONTRADICT",
        }
    }

    /// The class a name stands for, in any case (`reply --as`).
    pub fn parse(text: &str) -> Option<ReplyClass> {
        ReplyClass::ALL.into_iter().find(|c| c.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// The classifier's verdict on one reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// What the reply was taken to say.
    pub class: ReplyClass,
    /// The PR found (also for `PR_WRONG_REPOSITORY`).
    pub pr: Option<PrRef>,
    /// Why, in one sentence, for the journal and the coordinator.
    pub reason: String,
    /// What a `TESTS_CONTRADICT:` line (and the lines right after it) says, when the reply has
    /// one: the test it quotes and what the brief says instead.
    pub contradiction: Option<String>,
}

/// The line that starts WebGPT's honest way out (the prompt offers it, issue 57).
pub const CONTRADICTION_LINE: &str = "TESTS_CONTRADICT:";
/// How much of a contradiction is kept: the line and the few after it that quote the test.
const CONTRADICTION_LINES: usize = 6;
const CONTRADICTION_CHARS: usize = 1_200;

/// Phrases (lowercase) by which a reply says the connector cannot reach the repository.
const DENIAL_PHRASES: &[&str] = &[
    "don't have access to",
    "do not have access to",
    "don't have permission",
    "do not have permission",
    "doesn't have access to",
    "does not have access to",
    "no access to the repo",
    "can't access the repo",
    "cannot access the repo",
    "unable to access the repo",
    "not able to access the repo",
    "couldn't access the repo",
    "could not access the repo",
    "isn't accessible",
    "is not accessible",
    "not installed on",
    "connector is not enabled",
    "connector isn't enabled",
    "connector is not connected",
    "connector isn't connected",
    "connector is disconnected",
    "connector doesn't have",
    "connector does not have",
    "grant access",
    "grant the github",
    "permission to push",
    "permission to create a pull request",
    "permission to open a pull request",
    "not authorized to",
    "403 forbidden",
    "resource not accessible by integration",
];

/// Classifies a finished reply by the rules above; `bound_repository` is the cycle's binding, if any.
pub fn classify(reply: &str, hosts: &WebHosts, bound_repository: Option<&str>) -> Classification {
    let visible = visible_lines(reply);
    let contradiction = contradiction_in(reply);
    let mut found = classify_visible(&visible, hosts, bound_repository);
    if let Some(text) = contradiction {
        if matches!(found.class, ReplyClass::PrNotCreated | ReplyClass::NoPrReference) {
            found.class = ReplyClass::TestsContradict;
            found.reason =
                "the reply says the tests contradict the brief (TESTS_CONTRADICT) and names no pull request".into();
        }
        found.contradiction = Some(text);
    }
    found
}

/// What the reply's `TESTS_CONTRADICT:` line says, with the lines after it up to a blank line
/// (a quoted test is often a fenced block: its lines count here, unlike a PR link in one).
fn contradiction_in(reply: &str) -> Option<String> {
    let lines: Vec<&str> = reply.lines().collect();
    let start = lines.iter().position(|line| {
        let text = line.trim().trim_start_matches(['-', '*', '•', ' ', '`', '_']);
        strip_prefix_ci(text, CONTRADICTION_LINE).is_some_and(|rest| !rest.trim().is_empty())
    })?;
    let mut kept: Vec<&str> = Vec::new();
    for line in lines.iter().skip(start).take(CONTRADICTION_LINES) {
        if !kept.is_empty() && line.trim().is_empty() {
            break;
        }
        kept.push(line.trim_end());
    }
    let text = kept.join("\n");
    let text = text.trim().trim_start_matches(['-', '*', '•', ' ', '`', '_']);
    let text = strip_prefix_ci(text, CONTRADICTION_LINE).unwrap_or(text).trim();
    Some(text.chars().take(CONTRADICTION_CHARS).collect())
}

fn classify_visible(visible: &[String], hosts: &WebHosts, bound_repository: Option<&str>) -> Classification {
    let denied = mentions_denial(visible);

    if let Some(trailer) = last_trailer(visible, hosts) {
        match trailer {
            Trailer::NotCreated if denied => {
                return result(
                    ReplyClass::ConnectorDenied,
                    None,
                    "PR_URL: NOT_CREATED, and the reply says the connector cannot reach the repository",
                );
            }
            Trailer::NotCreated => {
                return result(ReplyClass::PrNotCreated, None, "the reply ends with PR_URL: NOT_CREATED");
            }
            Trailer::Pr(pr) => return found(pr, bound_repository, "the last PR_URL line"),
        }
    }

    let mut prs: Vec<PrRef> = Vec::new();
    for line in visible {
        for pr in links_in(line, hosts) {
            if !prs.iter().any(|p| p.repo.same_as(&pr.repo) && p.number == pr.number) {
                prs.push(pr);
            }
        }
    }
    match prs.len() {
        1 => found(prs.remove(0), bound_repository, "the only pull-request link in the reply"),
        0 if denied => {
            result(ReplyClass::ConnectorDenied, None, "the reply says the GitHub connector cannot reach the repository")
        }
        0 => result(ReplyClass::NoPrReference, None, "the reply has no PR_URL line and no pull-request link"),
        n => result(
            ReplyClass::NoPrReference,
            None,
            &format!("the reply links {n} different pull requests and has no PR_URL line to say which one"),
        ),
    }
}

fn result(class: ReplyClass, pr: Option<PrRef>, reason: &str) -> Classification {
    Classification { class, pr, reason: reason.to_owned(), contradiction: None }
}

fn found(pr: PrRef, bound_repository: Option<&str>, source: &str) -> Classification {
    match bound_repository {
        Some(bound) if !bound.eq_ignore_ascii_case(&pr.repo.full_name()) => {
            let reason = format!("{source} names {pr}, but this cycle is bound to {bound}");
            Classification { class: ReplyClass::PrWrongRepository, pr: Some(pr), reason, contradiction: None }
        }
        _ => {
            let reason = format!("{source} names {pr}");
            Classification { class: ReplyClass::PrFound, pr: Some(pr), reason, contradiction: None }
        }
    }
}

/// Lines outside fenced code blocks and block quotes.
fn visible_lines(reply: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for raw in reply.lines() {
        let line = raw.trim_start();
        let fence_char = line.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| line.chars().take_while(|&x| x == c).count());
        match (fence, fence_char) {
            (None, Some(c)) if run >= 3 => {
                fence = Some((c, run));
                continue;
            }
            (Some((c, n)), Some(d)) if c == d && run >= n && line[run * c.len_utf8()..].trim().is_empty() => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            _ => {}
        }
        if line.starts_with('>') {
            continue;
        }
        lines.push(raw.to_owned());
    }
    lines
}

fn mentions_denial(lines: &[String]) -> bool {
    lines.iter().any(|line| {
        let lower = line.to_lowercase().replace('\u{2019}', "'");
        DENIAL_PHRASES.iter().any(|phrase| lower.contains(phrase))
    })
}

enum Trailer {
    Pr(PrRef),
    NotCreated,
}

/// The last line of the form `PR_URL: value` whose value is usable.
fn last_trailer(lines: &[String], hosts: &WebHosts) -> Option<Trailer> {
    lines.iter().rev().find_map(|line| {
        let value = trailer_value(line)?;
        if value.eq_ignore_ascii_case("NOT_CREATED") || value.eq_ignore_ascii_case("NOT CREATED") {
            return Some(Trailer::NotCreated);
        }
        parse_pr_ref(&trim_pr_url(&value), hosts).ok().map(Trailer::Pr)
    })
}

fn trailer_value(line: &str) -> Option<String> {
    let mut text = line.trim();
    text = text.trim_start_matches(['-', '*', '•', ' ']);
    text = text.trim_start_matches(['*', '_', '`']);
    let rest = strip_prefix_ci(text, "PR_URL")?;
    let rest = rest.trim_start_matches(['*', '_', '`']).trim_start();
    let rest = rest.strip_prefix(':')?;
    let mut value = rest.trim().trim_start_matches(['*', '_']).trim();
    value = value.trim_matches(|c: char| c == '`' || c == '<' || c == '>' || c == '*' || c == '_' || c == '"');
    // Markdown link: [text](url)
    if let (Some(open), true) = (value.find("]("), value.ends_with(')')) {
        value = &value[open + 2..value.len() - 1];
    }
    let value = value.trim_end_matches(['.', ',', ';', ')', '!']).trim();
    if value.is_empty() || value.eq_ignore_ascii_case("url") || value.contains(char::is_whitespace) {
        return None;
    }
    Some(value.to_owned())
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// Pull-request links on accepted hosts anywhere in a line.
fn links_in(line: &str, hosts: &WebHosts) -> Vec<PrRef> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(start) = find_scheme(rest) {
        let candidate = &rest[start..];
        let end = candidate
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '>' | '<' | '"' | '\'' | '`' | ','))
            .unwrap_or(candidate.len());
        let url = candidate[..end].trim_end_matches(['.', ';', ':', '!', '?']);
        if let Ok(pr) = parse_pr_ref(&trim_pr_url(url), hosts) {
            found.push(pr);
        }
        rest = &candidate[end.max(1)..];
    }
    found
}

fn find_scheme(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    match (lower.find("https://"), lower.find("http://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `…/pull/7/files` or `…/pull/7/commits` still names PR 7.
fn trim_pr_url(url: &str) -> String {
    let Some(at) = url.find("/pull/") else { return url.to_owned() };
    let after = &url[at + "/pull/".len()..];
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    match after[digits..].chars().next() {
        Some('/') if digits > 0 => url[..at + "/pull/".len() + digits].to_owned(),
        _ => url.to_owned(),
    }
}
