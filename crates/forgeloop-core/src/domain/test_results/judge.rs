//! Whether a run's pass rests on its tests having run (issue 57): the merge's per-test
//! results against the same commands' results at the base commit it merged with.
//!
//! For each test command: an exit status of 0 with failures reported (or a runner that itself
//! ended failing) **disagrees**; a command the base itemised that reports nothing at the merge
//! (no record, or only a run that began and never ended) is **held**; a reporting process that
//! began a run and never ended it **ended early** (beyond as many as the base's); a test that ran
//! at the base (passed, failed, erred, xfailed, xpassed — not skipped) and at the merge is
//! missing, skipped, or started and never finished is **named**: it did not run. A base that
//! stopped at a first failure says only what ran before it. Tests only the merge has are new:
//! counted, not flagged. Every test counts, held or not. A command whose runner forgeloop
//! does not read is "results not itemised": said, not held. Without a baseline nothing can be
//! compared: said, and held for the person.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::ids;
use super::model::{CommandResults, Outcome, RunResults};

/// The most tests [`Evidence::named`] lists.
pub const NAMED_MAX: usize = 20;
/// The most tests one sentence names.
const WORDS_NAMED: usize = 3;

/// What the judgement found about one command (or the run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// It exited 0 and its runner reported failures (or ended failing itself).
    Disagrees,
    /// The base itemised it; the merge reported nothing.
    NothingReported,
    /// A reporting process began a run and never ended it.
    EndedEarly,
    /// Tests that ran at the base did not run.
    DidNotRun,
    /// Fewer tests ran than at the base, by the runner's totals (where it names none).
    FewerRan,
    /// No runner forgeloop reads reported anything: said, not held.
    NotItemised,
    /// There is no baseline to compare with.
    NoBaseline,
}

impl Finding {
    /// It keeps a pass from standing.
    pub fn holds(self) -> bool {
        self != Finding::NotItemised
    }
}

/// Why a test is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// It failed in a run that exited 0.
    FailedButExit0,
    /// It ran at the base and was not collected (or not reported at all) at the merge.
    Missing,
    /// As `Missing`, in a file the change edited: the change rewrote or removed it, the
    /// tests' meaning is what changed (still the person's call).
    Edited,
    /// It ran at the base and was skipped at the merge.
    Skipped,
    /// It ran at the base and at the merge started and never finished.
    Unfinished,
}

impl Why {
    fn words(self) -> &'static str {
        match self {
            Why::FailedButExit0 => "failed",
            Why::Missing => "not run",
            Why::Edited => "its file edited by the change",
            Why::Skipped => "skipped",
            Why::Unfinished => "started, never finished",
        }
    }
}

/// A test the judgement names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedTest {
    /// The test command's index ([`CommandResults::command`]).
    pub command: usize,
    /// The test's id; `None` when only a digest of the base's tests knew it.
    pub id: Option<String>,
    /// Why it is named.
    pub why: Why,
}

/// The judgement of one test command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandEvidence {
    /// The test command's index.
    pub command: usize,
    /// What was found, in order of weight.
    pub findings: Vec<Finding>,
    /// What a person reads about this command.
    pub words: String,
    /// Tests the merge reported (any outcome).
    pub total: u64,
    /// Of them, ran and did not fail.
    pub ok: u64,
    /// Of them, failed or erred.
    pub failures: u64,
    /// Tests that ran at the base, when there is a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ran: Option<u64>,
    /// Tests that ran at the base and did not run at the merge.
    pub did_not_run: u64,
    /// Tests that ran at the merge and not at the base.
    pub new: u64,
    /// Tests that ran at both, in a file the change moved (under its new name at the merge).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub moved: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether a run's pass stands on its tests' own results, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Nothing found keeps the pass from standing (a failing run does not pass either way).
    pub stands: bool,
    /// The words a person reads in five seconds.
    pub summary: String,
    /// Every finding, once, in order of weight.
    pub findings: Vec<Finding>,
    /// A baseline was compared with.
    pub baseline: bool,
    /// Per test command.
    pub commands: Vec<CommandEvidence>,
    /// The tests named, worst first, at most [`NAMED_MAX`].
    pub named: Vec<NamedTest>,
    /// How many more were named than listed.
    #[serde(default)]
    pub named_more: u64,
}

/// Judges the merge's results (`merge_exits`: each test command's exit code, in order, `None`
/// for one that timed out or did not run) against the base's, when there is a baseline.
pub fn judge(base: Option<&RunResults>, merge: &RunResults, merge_exits: &[Option<i32>]) -> Evidence {
    judge_edited(base, merge, merge_exits, &ids::Edited::default())
}

/// [`judge`], saying which of the tests that did not run are in files the change `edited`.
pub fn judge_edited(
    base: Option<&RunResults>,
    merge: &RunResults,
    merge_exits: &[Option<i32>],
    edited: &ids::Edited,
) -> Evidence {
    let several = merge.commands.len() > 1;
    let mut commands = Vec::new();
    let mut named: Vec<NamedTest> = Vec::new();
    for (position, results) in merge.commands.iter().enumerate() {
        let exit = merge_exits.get(position).copied().flatten();
        let base_results = base.and_then(|b| b.command(results.command)).filter(|b| b.argv == results.argv);
        let (evidence, mut names) = judge_command(base.is_some(), base_results, results, exit, several, edited);
        named.append(&mut names);
        commands.push(evidence);
    }
    let mut findings: Vec<Finding> = commands.iter().flat_map(|c| c.findings.iter().copied()).collect();
    if base.is_none() && !merge.commands.is_empty() {
        findings.push(Finding::NoBaseline);
    }
    findings.sort();
    findings.dedup();
    let stands = !findings.iter().any(|f| f.holds());
    let held: Vec<&str> =
        commands.iter().filter(|c| c.findings.iter().any(|f| f.holds())).map(|c| c.words.as_str()).collect();
    let all: Vec<&str> = commands.iter().map(|c| c.words.as_str()).collect();
    let summary = match (base.is_some(), held.is_empty()) {
        (_, false) => held.join("; "),
        (true, true) => all.join("; "),
        (false, true) => format!(
            "no baseline: {}; the base's results are not known, so a test that stopped running cannot be seen",
            if all.is_empty() { "no test command".to_owned() } else { all.join("; ") }
        ),
    };
    named.sort_by(|a, b| a.why.cmp(&b.why).then_with(|| a.command.cmp(&b.command)).then_with(|| a.id.cmp(&b.id)));
    let named_more = named.len().saturating_sub(NAMED_MAX) as u64;
    named.truncate(NAMED_MAX);
    Evidence { stands, summary, findings, baseline: base.is_some(), commands, named, named_more }
}

fn judge_command(
    has_baseline: bool,
    base: Option<&CommandResults>,
    merge: &CommandResults,
    exit: Option<i32>,
    several: bool,
    edited: &ids::Edited,
) -> (CommandEvidence, Vec<NamedTest>) {
    let prefix = if several { format!("{}: ", shown(&merge.argv)) } else { String::new() };
    let mut evidence = CommandEvidence {
        command: merge.command,
        findings: Vec::new(),
        words: String::new(),
        total: merge.counts.total(),
        ok: merge.counts.ok(),
        failures: merge.counts.failures(),
        base_ran: base.map(CommandResults::ran),
        did_not_run: 0,
        new: 0,
        moved: 0,
    };
    let mut named = Vec::new();
    if merge.not_run {
        evidence.words = format!("{prefix}did not run (an earlier command failed)");
        return (evidence, named);
    }
    // What holds the pass comes first; then what the run was.
    let mut holding: Vec<String> = Vec::new();
    let mut info: Vec<String> = Vec::new();

    // Exit 0 and failures reported.
    if exit == Some(0) {
        let failures: Vec<&str> = merge.failures().map(|t| t.id.as_str()).collect();
        if merge.counts.failures() > 0 {
            evidence.findings.push(Finding::Disagrees);
            let n = merge.counts.failures();
            holding.push(format!(
                "the run exited 0 but reported {}: {}",
                plural(n, "failure", "failures"),
                list(&failures, n)
            ));
            named.extend(failures.iter().map(|id| NamedTest {
                command: merge.command,
                id: Some((*id).to_owned()),
                why: Why::FailedButExit0,
            }));
        } else if let Some(code) = merge.runner_exit.filter(|c| *c != 0) {
            evidence.findings.push(Finding::Disagrees);
            holding.push(format!("the run exited 0 but {} itself ended with status {code}", runner_names(merge)));
        }
    }

    // Nothing reported.
    if !merge.itemised() {
        match base {
            Some(base) if base.itemised() => {
                evidence.findings.push(Finding::NothingReported);
                holding.push(format!(
                    "{} reported no test results (the base reported {}): the run ended before its runner said anything",
                    shown(&merge.argv),
                    plural(base.counts.total().max(base.ran()), "test", "tests")
                ));
            }
            _ if merge.processes.begun > 0 => info.push("no tests ran".to_owned()),
            _ => {
                evidence.findings.push(Finding::NotItemised);
                info.push(format!("results not itemised ({}: no runner forgeloop reads)", shown(&merge.argv)));
            }
        }
    }

    // A run begun and never ended (more of them than the base had: a custom test harness
    // that prints no summary leaves one at both).
    let base_unended = base.map_or(0, |b| b.processes.unended());
    if merge.processes.unended() > base_unended {
        evidence.findings.push(Finding::EndedEarly);
        let runner = runner_names(merge);
        holding.push(match merge.processes.unended() - base_unended {
            1 => format!("a {runner} run began and never ended: its process stopped before the runner finished"),
            n => format!("{n} {runner} runs began and never ended: their processes stopped before the runner finished"),
        });
    }

    // Tests that ran at the base and not at the merge; tests new at the merge.
    if let Some(base) = base
        && base.counts.total() > 0
        && merge.counts.total() > 0
    {
        // A module unittest could not load at the base is no test that ran there.
        let load_failures: BTreeSet<u32> =
            base.tests.iter().filter(|t| ids::is_load_failure(&t.id)).map(|t| ids::key(&t.id)).collect();
        let base_keys: BTreeSet<u32> = base.ran_keys().difference(&load_failures).copied().collect();
        let merge_keys = merge.ran_keys();
        // A test that ran in a file the change moved ran at the base under its old name.
        let moved: BTreeSet<u32> = merge.moved_keys().intersection(&base_keys).copied().collect();
        let by_key_merge: BTreeMap<u32, (&str, Outcome)> =
            merge.tests.iter().map(|t| (ids::key(&t.id), (t.id.as_str(), t.outcome))).collect();
        let by_key_base: BTreeMap<u32, &str> = base.tests.iter().map(|t| (ids::key(&t.id), t.id.as_str())).collect();
        let mut missing: Vec<(Option<String>, Why)> = Vec::new();
        for key in base_keys.difference(&merge_keys).filter(|k| !moved.contains(k)) {
            let (id, why) = match by_key_merge.get(key) {
                Some((id, Outcome::Skipped)) => (Some(*id), Why::Skipped),
                Some((id, Outcome::Unfinished)) => (Some(*id), Why::Unfinished),
                Some((id, _)) => (Some(*id), Why::Missing),
                None => match by_key_base.get(key).copied() {
                    Some(id) if edited.names(id) => (Some(id), Why::Edited),
                    id => (id, Why::Missing),
                },
            };
            missing.push((id.map(str::to_owned), why));
        }
        evidence.did_not_run = missing.len() as u64;
        evidence.new = (merge_keys.difference(&base_keys).count() as u64).saturating_sub(moved.len() as u64);
        evidence.moved = moved.len() as u64;
        if !missing.is_empty() {
            evidence.findings.push(Finding::DidNotRun);
            missing.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
            let shown_ids: Vec<String> = missing
                .iter()
                .filter_map(|(id, why)| id.as_ref().map(|id| format!("{id} ({})", why.words())))
                .collect();
            let unnamed = missing.iter().filter(|(id, _)| id.is_none()).count();
            let shown_refs: Vec<&str> = shown_ids.iter().map(String::as_str).collect();
            let mut sentence = format!(
                "{} that ran at the base did not run: {}",
                plural(missing.len() as u64, "test", "tests"),
                list(&shown_refs, shown_ids.len() as u64)
            );
            if unnamed > 0 {
                let tests = edited.test_paths();
                let edits = match tests.len() {
                    0 => String::new(),
                    n => format!("; the change edits {}", list(&tests, n as u64)),
                };
                sentence.push_str(&format!(
                    "{}{unnamed} not named (the base's suite is kept as a digest{edits})",
                    if shown_ids.is_empty() { "" } else { "; " }
                ));
            }
            holding.push(sentence);
            named.extend(missing.into_iter().map(|(id, why)| NamedTest { command: merge.command, id, why }));
        }
    } else if let Some(base) = base
        && merge.itemised()
        && base.itemised()
        && merge.ran() < base.ran()
    {
        // One side itemised no test by name: the runners' totals still compare.
        evidence.findings.push(Finding::FewerRan);
        holding.push(format!("fewer tests ran than at the base: {} (the base ran {})", merge.ran(), base.ran()));
    }

    // The count a person reads first.
    if merge.itemised() && merge.counts.total() > 0 {
        let mut count =
            format!("{} of {} ran and passed", merge.counts.ok(), plural(merge.counts.total(), "test", "tests"));
        if merge.counts.failures() > 0 {
            count.push_str(&format!(", {} failed", merge.counts.failures()));
        }
        if merge.counts.skipped > 0 {
            count.push_str(&format!(", {} skipped", merge.counts.skipped));
        }
        count.push_str(&base_words(base, has_baseline, evidence.new, evidence.moved));
        info.insert(0, count);
    } else if merge.itemised() {
        let ran = merge.ran();
        info.insert(0, format!("{} ran{}", plural(ran, "test", "tests"), base_words(base, has_baseline, 0, 0)));
    }
    if let Some(why) = &merge.stopped_early {
        info.push(format!("the runner stopped at a first failure ({why})"));
    }
    evidence.findings.sort();
    holding.extend(info);
    evidence.words = format!("{prefix}{}", holding.join("; "));
    (evidence, named)
}

fn base_words(base: Option<&CommandResults>, has_baseline: bool, new: u64, moved: u64) -> String {
    match base {
        Some(base) => {
            let stopped = if base.stopped_early.is_some() { " before it stopped at a first failure" } else { "" };
            let new = if new > 0 { format!("; {new} new") } else { String::new() };
            let moved = match moved {
                0 => String::new(),
                1 => "; 1 in a file the change moved".to_owned(),
                n => format!("; {n} in files the change moved"),
            };
            format!(" (the base ran {}{stopped}{new}{moved})", base.ran())
        }
        None if has_baseline => " (the base ran other commands)".to_owned(),
        None => String::new(),
    }
}

fn runner_names(results: &CommandResults) -> String {
    match results.runners.as_slice() {
        [] => "the test runner".to_owned(),
        runners => runners.iter().map(|r| r.as_str()).collect::<Vec<_>>().join("/"),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first few of `items` (of `total`), then how many more.
fn list(items: &[&str], total: u64) -> String {
    let mut out = items.iter().take(WORDS_NAMED).copied().collect::<Vec<_>>().join(", ");
    let more = total.saturating_sub(items.len().min(WORDS_NAMED) as u64);
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

/// A command as a person recognises it, short.
fn shown(argv: &[String]) -> String {
    let text = argv.join(" ");
    if text.chars().count() <= 60 { text } else { format!("{}…", text.chars().take(59).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::super::collect::{Collector, Reported};
    use super::super::model::{LIST_ALL, Runner};
    use super::*;

    const PY: Runner = Runner::Pytest;

    /// A command's results from `(id, outcome)` pairs, with a begun and ended run.
    fn results(index: usize, argv: &str, tests: &[(&str, Outcome)]) -> CommandResults {
        let mut c = Collector::new();
        c.begin(PY);
        for (id, outcome) in tests {
            c.start(PY, id);
            if *outcome != Outcome::Unfinished {
                c.result(PY, id, Reported::Outcome(*outcome));
            }
        }
        c.end(PY);
        c.finish(index, argv.split(' ').map(str::to_owned).collect())
    }

    fn run(commands: Vec<CommandResults>) -> RunResults {
        RunResults::new(commands)
    }

    fn honest(n: usize) -> Vec<(String, Outcome)> {
        (0..n).map(|i| (format!("tests/test_m.py::test_{i}"), Outcome::Passed)).collect()
    }

    fn as_refs(tests: &[(String, Outcome)]) -> Vec<(&str, Outcome)> {
        tests.iter().map(|(id, o)| (id.as_str(), *o)).collect()
    }

    #[test]
    fn an_honest_run_stands_with_its_count() {
        let tests = honest(12);
        let base = run(vec![results(0, "python3 -m pytest", &as_refs(&tests))]);
        let merge = base.clone();
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(e.stands, "{e:?}");
        assert_eq!(e.summary, "12 of 12 tests ran and passed (the base ran 12)");
        assert!(e.named.is_empty());
    }

    #[test]
    fn exit_0_with_a_failure_disagrees() {
        let base = run(vec![results(0, "python3 -m pytest", &as_refs(&honest(2)))]);
        let merge = run(vec![results(
            0,
            "python3 -m pytest",
            &[("tests/test_m.py::test_0", Outcome::Passed), ("tests/test_m.py::test_big", Outcome::Failed)],
        )]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(!e.stands);
        assert!(e.findings.contains(&Finding::Disagrees));
        assert!(
            e.summary.starts_with("the run exited 0 but reported 1 failure: tests/test_m.py::test_big"),
            "{}",
            e.summary
        );
        assert_eq!(e.named[0].why, Why::FailedButExit0);
        // The same failure with a failing exit is just a failing run: nothing disagrees.
        let failing = judge(Some(&base), &merge, &[Some(1)]);
        assert!(!failing.findings.contains(&Finding::Disagrees));
    }

    #[test]
    fn expected_failures_are_not_failures() {
        let tests = [("t::a", Outcome::Passed), ("t::xf", Outcome::Xfailed), ("t::xp", Outcome::Xpassed)];
        let base = run(vec![results(0, "pytest", &tests)]);
        let e = judge(Some(&base), &base.clone(), &[Some(0)]);
        assert!(e.stands, "{e:?}");
        assert_eq!(e.summary, "3 of 3 tests ran and passed (the base ran 3)");
    }

    #[test]
    fn nothing_reported_where_the_base_itemised_is_held() {
        let base = run(vec![results(0, "python3 -m unittest", &as_refs(&honest(3)))]);
        let merge = run(vec![CommandResults::empty(0, vec!["python3".into(), "-m".into(), "unittest".into()])]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(!e.stands);
        assert_eq!(e.findings, vec![Finding::NothingReported]);
        assert!(e.summary.contains("reported no test results (the base reported 3 tests)"), "{}", e.summary);
    }

    #[test]
    fn a_run_begun_and_never_ended_is_held_and_its_test_named() {
        let base = run(vec![results(0, "python3 -m unittest", &as_refs(&honest(3)))]);
        let mut c = Collector::new();
        c.begin(PY);
        c.start(PY, "tests/test_m.py::test_0");
        c.result(PY, "tests/test_m.py::test_0", Reported::Outcome(Outcome::Passed));
        c.start(PY, "tests/test_m.py::test_1");
        let merge = run(vec![c.finish(0, vec!["python3".into(), "-m".into(), "unittest".into()])]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(!e.stands);
        assert!(e.findings.contains(&Finding::EndedEarly) && e.findings.contains(&Finding::DidNotRun), "{e:?}");
        assert!(e.summary.contains("tests/test_m.py::test_1 (started, never finished)"), "{}", e.summary);
        assert!(e.summary.contains("tests/test_m.py::test_2 (not run)"), "{}", e.summary);
        assert_eq!(e.commands[0].did_not_run, 2);
    }

    #[test]
    fn a_harness_that_never_sums_up_at_the_base_too_did_not_end_early() {
        let mut custom = results(0, "cargo test", &[("a", Outcome::Passed)]);
        custom.processes.begun += 1;
        let base = run(vec![custom.clone()]);
        let e = judge(Some(&base), &run(vec![custom.clone()]), &[Some(0)]);
        assert!(e.stands, "{e:?}");
        // One more at the merge did.
        custom.processes.begun += 1;
        let e = judge(Some(&base), &run(vec![custom]), &[Some(0)]);
        assert_eq!(e.findings, vec![Finding::EndedEarly]);
        assert!(e.summary.starts_with("a pytest run began and never ended"), "{}", e.summary);
    }

    #[test]
    fn tests_that_ran_at_the_base_and_were_skipped_or_dropped_are_named() {
        let base = run(vec![results(0, "pytest", &as_refs(&honest(4)))]);
        let merge = run(vec![results(
            0,
            "pytest",
            &[
                ("tests/test_m.py::test_0", Outcome::Passed),
                ("tests/test_m.py::test_1", Outcome::Skipped),
                ("tests/test_m.py::test_new", Outcome::Passed),
            ],
        )]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(!e.stands);
        assert_eq!(e.findings, vec![Finding::DidNotRun]);
        assert!(
            e.summary.starts_with(
                "3 tests that ran at the base did not run: tests/test_m.py::test_2 (not run), \
                 tests/test_m.py::test_3 (not run), tests/test_m.py::test_1 (skipped)"
            ),
            "{}",
            e.summary
        );
        assert!(e.summary.contains("2 of 3 tests ran and passed, 1 skipped (the base ran 4; 1 new)"), "{}", e.summary);
        assert_eq!(e.commands[0].new, 1);
    }

    #[test]
    fn tests_skipped_at_the_base_are_not_missed() {
        let base = run(vec![results(0, "pytest", &[("a", Outcome::Passed), ("b", Outcome::Skipped)])]);
        let merge = run(vec![results(0, "pytest", &[("a", Outcome::Passed)])]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(e.stands, "{e:?}");
    }

    #[test]
    fn a_first_failure_stop_at_the_base_limits_what_it_says() {
        let mut base_results = results(0, "pytest -x", &[("a", Outcome::Passed), ("b", Outcome::Failed)]);
        base_results.stopped_early = Some("stopping after 1 failures".into());
        let base = run(vec![base_results]);
        // The fix makes b pass; c and d, which the base never reached, are new.
        let merge = run(vec![results(
            0,
            "pytest -x",
            &[("a", Outcome::Passed), ("b", Outcome::Passed), ("c", Outcome::Passed), ("d", Outcome::Passed)],
        )]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(e.stands, "{e:?}");
        assert_eq!(
            e.summary,
            "4 of 4 tests ran and passed (the base ran 2 before it stopped at a first failure; 2 new)"
        );
    }

    #[test]
    fn retried_and_renamed_parametrised_tests_are_not_flagged() {
        let base = run(vec![results(
            0,
            "pytest",
            &[("t.py::test_p[<Obj object at 0x7f00aa11>]", Outcome::Passed), ("t.py::flaky", Outcome::Passed)],
        )]);
        let mut c = Collector::new();
        c.begin(PY);
        c.start(PY, "t.py::test_p[<Obj object at 0x7f99bb22>]");
        c.result(PY, "t.py::test_p[<Obj object at 0x7f99bb22>]", Reported::Outcome(Outcome::Passed));
        c.start(PY, "t.py::flaky");
        c.result(PY, "t.py::flaky", Reported::Rerun);
        c.start(PY, "t.py::flaky");
        c.result(PY, "t.py::flaky", Reported::Outcome(Outcome::Passed));
        c.end(PY);
        let merge = run(vec![c.finish(0, vec!["pytest".into()])]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(e.stands, "{e:?}");
    }

    #[test]
    fn tests_that_moved_with_their_file_ran_and_a_test_dropped_in_the_move_did_not() {
        // Many tests, so that both sides keep a digest only, as a big suite does.
        let n = LIST_ALL + 10;
        let named = |module: &str, i: usize| format!("test_{i} (tests.{module}.T.test_{i})");
        let base: Vec<(String, Outcome)> = (0..n).map(|i| (named("test_old", i), Outcome::Passed)).collect();
        let base = run(vec![results(0, "unittest", &as_refs(&base))]);
        let renames = ids::Renames::new([("tests/test_old.py", "tests/test_new.py")]);
        let merge_with = |skip: Option<usize>| {
            let mut c = Collector::new();
            c.begin(Runner::Unittest);
            for i in (0..n).filter(|i| Some(*i) != skip) {
                c.start(Runner::Unittest, &named("test_new", i));
                c.result(Runner::Unittest, &named("test_new", i), Reported::Outcome(Outcome::Passed));
            }
            c.end(Runner::Unittest);
            run(vec![c.finish_moved(0, vec!["unittest".into()], &renames)])
        };
        let e = judge(Some(&base), &merge_with(None), &[Some(0)]);
        assert!(e.stands, "{e:?}");
        assert_eq!((e.commands[0].moved, e.commands[0].new), (n as u64, 0));
        assert!(e.summary.contains(&format!("{n} in files the change moved")), "{}", e.summary);
        let e = judge(Some(&base), &merge_with(Some(7)), &[Some(0)]);
        assert!(!e.stands, "{e:?}");
        assert_eq!(e.commands[0].did_not_run, 1, "{e:?}");
        // Without the moves, every test is missing: what a move looked like before.
        let mut c = Collector::new();
        c.begin(Runner::Unittest);
        c.start(Runner::Unittest, &named("test_new", 0));
        c.result(Runner::Unittest, &named("test_new", 0), Reported::Outcome(Outcome::Passed));
        c.end(Runner::Unittest);
        let e = judge(Some(&base), &run(vec![c.finish(0, vec!["unittest".into()])]), &[Some(0)]);
        assert_eq!(e.commands[0].did_not_run, n as u64);
    }

    #[test]
    fn a_module_that_failed_to_load_at_the_base_and_loads_now_is_no_missing_test() {
        let failed = "unittest.loader._FailedTest.tests.test_a";
        let base = run(vec![results(0, "unittest", &[(failed, Outcome::Error), ("t.T.test_b", Outcome::Passed)])]);
        let merge = run(vec![results(
            0,
            "unittest",
            &[("test_a (tests.test_a.T.test_a)", Outcome::Passed), ("t.T.test_b", Outcome::Passed)],
        )]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(e.stands, "{e:?}");
        // A real test that failed at the base and is gone is still missing.
        let base =
            run(vec![results(0, "unittest", &[("t.T.test_c", Outcome::Failed), ("t.T.test_b", Outcome::Passed)])]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert!(!e.stands, "{e:?}");
    }

    #[test]
    fn a_test_the_change_rewrote_is_said_so_and_still_held() {
        let base = run(vec![results(
            0,
            "pytest",
            &[("tests/test_a.py::t[2-4]", Outcome::Passed), ("tests/test_b.py::u", Outcome::Passed)],
        )]);
        let merge = run(vec![results(
            0,
            "pytest",
            &[("tests/test_a.py::t[2-6]", Outcome::Passed), ("tests/test_b.py::u", Outcome::Passed)],
        )]);
        let edited = ids::Edited::new(["tests/test_a.py", "src/a.py"]);
        let e = judge_edited(Some(&base), &merge, &[Some(0)], &edited);
        assert!(!e.stands, "{e:?}");
        assert!(
            e.summary.starts_with(
                "1 test that ran at the base did not run: tests/test_a.py::t[2-4] (its file edited by the change)"
            ),
            "{}",
            e.summary
        );
        assert_eq!(e.named[0].why, Why::Edited);
        // A test in a file the change did not edit is plainly not run.
        let e = judge_edited(Some(&base), &merge, &[Some(0)], &ids::Edited::new(["src/a.py"]));
        assert!(e.summary.contains("tests/test_a.py::t[2-4] (not run)"), "{}", e.summary);
    }

    #[test]
    fn an_unknown_runner_is_said_not_held() {
        let base = run(vec![CommandResults::empty(0, vec!["sh".into(), "test.sh".into()])]);
        let e = judge(Some(&base), &base.clone(), &[Some(0)]);
        assert!(e.stands);
        assert_eq!(e.findings, vec![Finding::NotItemised]);
        assert_eq!(e.summary, "results not itemised (sh test.sh: no runner forgeloop reads)");
    }

    #[test]
    fn no_baseline_is_said_and_held() {
        let merge = run(vec![results(0, "pytest", &as_refs(&honest(12)))]);
        let e = judge(None, &merge, &[Some(0)]);
        assert!(!e.stands);
        assert!(!e.baseline);
        assert_eq!(e.findings, vec![Finding::NoBaseline]);
        assert!(e.summary.starts_with("no baseline: 12 of 12 tests ran and passed"), "{}", e.summary);
    }

    #[test]
    fn totals_compare_where_no_test_is_named() {
        let mut base_results = CommandResults::empty(0, vec!["cargo".into(), "test".into(), "-q".into()]);
        base_results.totals = Some(super::super::model::Totals { tests: 7, failed: 0, skipped: 2 });
        let mut merge_results = base_results.clone();
        merge_results.totals = Some(super::super::model::Totals { tests: 4, failed: 0, skipped: 2 });
        let e = judge(Some(&run(vec![base_results])), &run(vec![merge_results]), &[Some(0)]);
        assert_eq!(e.findings, vec![Finding::FewerRan]);
        assert!(e.summary.contains("fewer tests ran than at the base: 2 (the base ran 5)"), "{}", e.summary);
    }

    #[test]
    fn several_commands_are_named_by_their_argv() {
        let base = run(vec![
            results(0, "pytest", &as_refs(&honest(2))),
            CommandResults::empty(1, vec!["sh".into(), "lint.sh".into()]),
        ]);
        let merge = run(vec![results(0, "pytest", &as_refs(&honest(1))), base.commands[1].clone()]);
        let e = judge(Some(&base), &merge, &[Some(0), Some(0)]);
        assert!(!e.stands);
        assert!(e.summary.starts_with("pytest: 1 test that ran at the base did not run"), "{}", e.summary);
        assert!(!e.summary.contains("lint.sh"), "only what holds the pass is summarised: {}", e.summary);
        assert!(e.commands[1].words.contains("results not itemised (sh lint.sh"));
    }

    #[test]
    fn names_are_bounded() {
        let tests = honest(100);
        let base = run(vec![results(0, "pytest", &as_refs(&tests))]);
        let merge = run(vec![results(0, "pytest", &[("tests/test_m.py::test_0", Outcome::Passed)])]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert_eq!(e.named.len(), NAMED_MAX);
        assert_eq!(e.named_more, 99 - NAMED_MAX as u64);
        assert!(e.summary.contains("and 96 more"), "{}", e.summary);
    }

    #[test]
    fn a_digest_base_still_counts_what_did_not_run() {
        let tests: Vec<(String, Outcome)> =
            (0..3000).map(|i| (format!("tests/test_big.py::test_{i}"), Outcome::Passed)).collect();
        let base = run(vec![results(0, "pytest", &as_refs(&tests))]);
        assert!(!base.commands[0].listed_all);
        let fewer: Vec<(&str, Outcome)> = as_refs(&tests).into_iter().skip(5).collect();
        let merge = run(vec![results(0, "pytest", &fewer)]);
        let e = judge(Some(&base), &merge, &[Some(0)]);
        assert_eq!(e.commands[0].did_not_run, 5);
        assert!(e.summary.contains("5 not named (the base's suite is kept as a digest)"), "{}", e.summary);
    }
}
