//! The ten cycles of the demo: what each asks WebGPT for, how the scripted WebGPT behaves,
//! what the demo's stand-in for the user does, and where each must end. Seven are driven by the
//! scripted coordinator through the relay loop; one by a scripted chat client through
//! `forgeloop serve` (the remote connector, design §8.1); two are review cycles (docs/review.md),
//! one whose chat proves its connector and one whose chat gets the packet.

use crate::domain::status::Status;

use super::project::{LOGIN, REPO_NAME, calc_sh, test_file};
use super::webgpt::{Attempt, Persona};

/// What the demo's stand-in for the user does besides confirming briefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserAct {
    /// Nothing beyond confirming briefs.
    Nothing,
    /// Aborts the cycle with this reason once its first run has failed.
    AbortAfterFailedRun(String),
}

/// One demo cycle: what it asks for, how its WebGPT and user behave, and where it must end.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The state name (and so the task space `webgpt-orchestrator:<name>`).
    pub name: &'static str,
    /// One line for people: what this cycle shows.
    pub shows: &'static str,
    /// The implementation request (`forge --request`).
    pub request: String,
    /// The confirmed question for WebGPT (`--webgpt-question`).
    pub question: String,
    /// The confirmed brief (`--intent-brief`).
    pub brief: String,
    /// The iteration cap (`--max-iterations`).
    pub max_iterations: u32,
    /// Start awaiting confirmation, for a person (or the stand-in) to confirm the brief.
    pub await_confirmation: bool,
    /// How the scripted WebGPT answers.
    pub persona: Persona,
    /// What the demo's stand-in for the user does besides confirming.
    pub user: UserAct,
    /// Tested by the repository's own CI (the `github-checks` executor) instead of locally.
    pub on_ci: bool,
    /// Tested with the commands file whose setup clones a library from the demo's package
    /// index, which the person's allowlist does not name at first (design §5.6).
    pub dependency: bool,
    /// Driven through `forgeloop serve` by a scripted chat client (OAuth with the pairing code,
    /// MCP over HTTP) instead of the coordinator: its cycle's name is the one `serve` gives it,
    /// its driver `connector:<client name>`, and its runs post no PR comment (the client reads
    /// the report itself).
    pub connector: bool,
    /// A review cycle (docs/review.md) instead of a PR cycle: the scripted WebGPT reviews the
    /// branch of `persona.attempts[0]`, proving its connector or not.
    pub review: Option<ReviewRoute>,
    /// When it starts, in steps after the demo began (so cycles appear one by one).
    pub start_after: f64,
    /// Where the cycle must end.
    pub expect: Expect,
}

/// How a review scenario's chat reads the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewRoute {
    /// Its connector reads the commit: the challenge passes, the route is CONNECTOR.
    ConnectorVerified,
    /// Its connector shows as attached but reads nothing: the challenge fails, the route is
    /// LOCAL_BUNDLE and the packet goes out after the person's yes.
    ConnectorFails,
}

/// Where a scenario must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// The status the cycle must end in.
    pub status: Status,
    /// The iterations it must have used.
    pub iteration: u32,
    /// forgeloop's comments on the PR (one per completed run).
    pub comments: usize,
    /// A run ended NEEDS_NETWORK and the person allowed its hosts on the way.
    pub needs_network: bool,
}

/// One task: add operation `op` to calc.sh, with its checks.
struct Task {
    op: &'static str,
    what: &'static str,
    example: &'static str,
    checks: &'static str,
}

impl Task {
    fn attempt(&self, body: &str) -> Attempt {
        vec![
            ("calc.sh".to_owned(), calc_sh(&[(self.op, body)])),
            (format!("tests/{}.sh", self.op), test_file(self.checks)),
        ]
    }

    fn request(&self) -> String {
        format!("Add {} to calc.sh as the `{}` operation, with tests.", self.what, self.op)
    }

    fn question(&self) -> String {
        format!(
            "In {LOGIN}/{REPO_NAME}, add a `{op}` operation ({what}) to calc.sh with a test file tests/{op}.sh, open a pull request, and reply with its URL.",
            op = self.op,
            what = self.what
        )
    }

    fn brief(&self) -> String {
        format!(
            "Goal: calc.sh supports {what} as `sh calc.sh {op} A B`.\n\
Success: {example}, and tests/{op}.sh checks it.\n\
Scope: calc.sh and a new tests/{op}.sh only; the other operations stay as they are.\n\
Constraints: POSIX sh only, no new tools; never merge.\n\
Validation: `sh test.sh` passes on the pull request's head commit.",
            what = self.what,
            op = self.op,
            example = self.example
        )
    }

    fn persona(&self, summary: &str, attempts: Vec<Attempt>, forgets_link_once: bool) -> Persona {
        Persona {
            branch: format!("webgpt/{}", self.op),
            title: format!("Add the {} operation", self.op),
            summary: summary.to_owned(),
            attempts,
            forgets_link_once,
        }
    }
}

fn scenario(task: &Task, name: &'static str, shows: &'static str, persona: Persona, expect: Expect) -> Scenario {
    Scenario {
        name,
        shows,
        request: task.request(),
        question: task.question(),
        brief: task.brief(),
        max_iterations: 5,
        await_confirmation: false,
        persona,
        user: UserAct::Nothing,
        on_ci: false,
        dependency: false,
        connector: false,
        review: None,
        start_after: 0.0,
        expect,
    }
}

/// The demo's cycles, in the order they start.
pub fn all() -> Vec<Scenario> {
    let sub = Task {
        op: "sub",
        what: "subtraction",
        example: "`sh calc.sh sub 5 3` prints 2",
        checks: "check 2 sub 5 3\ncheck -1 sub 2 3\n",
    };
    let pow = Task {
        op: "pow",
        what: "exponentiation",
        example: "`sh calc.sh pow 2 3` prints 8",
        checks: "check 8 pow 2 3\ncheck 1 pow 7 0\n",
    };
    let mul = Task {
        op: "mul",
        what: "multiplication",
        example: "`sh calc.sh mul 2 3` prints 6",
        checks: "check 6 mul 2 3\ncheck 0 mul 9 0\n",
    };
    let div = Task {
        op: "div",
        what: "integer division that refuses division by zero",
        example: "`sh calc.sh div 7 2` prints 3 and `sh calc.sh div 1 0` fails with a clear message",
        checks: "check 3 div 7 2\ncheck 'calc.sh: division by zero' div 1 0\n",
    };
    let rem = Task {
        op: "mod",
        what: "the remainder of a division",
        example: "`sh calc.sh mod 7 3` prints 1",
        checks: "check 1 mod 7 3\ncheck 0 mod 6 3\n",
    };

    let mut out = Vec::new();

    let persona = sub.persona(
        "I added the `sub` operation to calc.sh and tests/sub.sh.",
        vec![sub.attempt("echo $((a + b))"), sub.attempt("echo $((a - b))")],
        false,
    );
    let expect = Expect { status: Status::ReadyToMerge, iteration: 2, comments: 2, needs_network: false };
    out.push(scenario(
        &sub,
        "add-subtraction",
        "fails, gets the failure handoff, pushes a fix, passes",
        persona,
        expect,
    ));

    let persona = pow.persona(
        "I added the `pow` operation to calc.sh and tests/pow.sh.",
        vec![
            pow.attempt("echo $((a * b))"),
            pow.attempt("r=1; i=0; while [ \"$i\" -le \"$b\" ]; do r=$((r * a)); i=$((i + 1)); done; echo \"$r\""),
        ],
        false,
    );
    let expect = Expect { status: Status::BlockedMaxIterations, iteration: 2, comments: 2, needs_network: false };
    let mut cap = scenario(&pow, "add-power", "never gets it right and hits its cap of 2 iterations", persona, expect);
    cap.max_iterations = 2;
    cap.start_after = 0.5;
    out.push(cap);

    let persona = mul.persona(
        "I added the `mul` operation to calc.sh and tests/mul.sh.",
        vec![mul.attempt("echo $((a * b))")],
        false,
    );
    let expect = Expect { status: Status::ReadyToMerge, iteration: 1, comments: 1, needs_network: false };
    let mut confirm =
        scenario(&mul, "add-multiplication", "waits until a person confirms its brief, then passes", persona, expect);
    confirm.await_confirmation = true;
    confirm.start_after = 1.0;
    out.push(confirm);

    let persona = div.persona(
        "I added the `div` operation to calc.sh, with a clear error on division by zero, and tests/div.sh.",
        vec![
            div.attempt("if [ \"$b\" -eq 0 ]; then echo 'calc.sh: division by zero' >&2; exit 1; fi; echo $((a / b))"),
        ],
        true,
    );
    let expect = Expect { status: Status::ReadyToMerge, iteration: 1, comments: 1, needs_network: false };
    let mut followup =
        scenario(&div, "add-division", "replies without a PR link, is asked once, gives it, passes", persona, expect);
    followup.start_after = 1.5;
    out.push(followup);

    let persona = rem.persona(
        "I added the `mod` operation to calc.sh and tests/mod.sh.",
        vec![rem.attempt("echo $((a / b))")],
        false,
    );
    let expect = Expect { status: Status::Aborted, iteration: 1, comments: 1, needs_network: false };
    let mut abort = scenario(&rem, "add-modulo", "is aborted by the user after its first failing run", persona, expect);
    abort.user = UserAct::AbortAfterFailedRun(
        "The user decided calc does not need a modulo operation after all (the demo's stand-in for the user)".into(),
    );
    abort.start_after = 2.0;
    out.push(abort);

    let max = Task {
        op: "max",
        what: "the larger of two numbers",
        example: "`sh calc.sh max 2 3` prints 3",
        checks: "check 3 max 2 3\ncheck 7 max 7 -1\n",
    };
    let persona = max.persona(
        "I added the `max` operation to calc.sh and tests/max.sh.",
        vec![
            max.attempt("echo \"$a\""),
            max.attempt("if [ \"$a\" -gt \"$b\" ]; then echo \"$a\"; else echo \"$b\"; fi"),
        ],
        false,
    );
    let expect = Expect { status: Status::ReadyToMerge, iteration: 2, comments: 2, needs_network: false };
    let mut ci = scenario(
        &max,
        "add-maximum-on-ci",
        "is tested by the repository's own CI (nothing runs here): fails there, gets the failing step's log, passes",
        persona,
        expect,
    );
    ci.on_ci = true;
    ci.start_after = 2.5;
    out.push(ci);

    let avg = Task {
        op: "avg",
        what: "the average of two numbers, rounded down",
        example: "`sh calc.sh avg 2 4` prints 3",
        checks: ". ./vendor/checklib/lib.sh\ncheck 3 avg 2 4\ncheck_one_of '2|3' avg 2 3\n",
    };
    let persona = avg.persona(
        "I added the `avg` operation to calc.sh and tests/avg.sh, which uses checklib (the team's test helpers; the setup step clones it into vendor/).",
        vec![avg.attempt("echo $(((a + b) / 2))")],
        false,
    );
    let expect = Expect { status: Status::ReadyToMerge, iteration: 1, comments: 1, needs_network: true };
    let mut dependency = scenario(
        &avg,
        "add-average-with-deps",
        "its setup clones a test library from a package index on this machine: refused by policy, NEEDS_NETWORK (no iteration spent, nothing sent to WebGPT, no entry proposed), the person writes the entry by hand, passes",
        persona,
        expect,
    );
    dependency.dependency = true;
    dependency.start_after = 3.0;
    out.push(dependency);

    let min = Task {
        op: "min",
        what: "the smaller of two numbers",
        example: "`sh calc.sh min 2 3` prints 2",
        checks: "check 2 min 2 3\ncheck -1 min 7 -1\n",
    };
    let persona = min.persona(
        "I added the `min` operation to calc.sh and tests/min.sh.",
        vec![
            min.attempt("echo \"$b\""),
            min.attempt("if [ \"$a\" -lt \"$b\" ]; then echo \"$a\"; else echo \"$b\"; fi"),
        ],
        false,
    );
    let expect = Expect { status: Status::ReadyToMerge, iteration: 2, comments: 0, needs_network: false };
    let mut connector = scenario(
        &min,
        "add-minimum-via-connector",
        "is driven by a chat client through forgeloop serve, no relay: it pairs with the code serve printed (OAuth, PKCE), starts its cycle, which waits for a person to confirm the brief, then calls test_pr, reads the failure, pushes a fix, and test_pr passes",
        persona,
        expect,
    );
    connector.connector = true;
    connector.await_confirmation = true;
    connector.start_after = 3.5;
    out.push(connector);

    let shows = [
        (
            "review-with-connector",
            "review/notes",
            ReviewRoute::ConnectorVerified,
            "WebGPT reviews a branch: its connector answers the challenge from the commit (route CONNECTOR), two findings, triaged FIX and DISMISS",
        ),
        (
            "review-with-packet",
            "review/usage",
            ReviewRoute::ConnectorFails,
            "WebGPT reviews a branch, but its connector cannot read the commit: the challenge fails, the change goes as a DLP-checked packet after the person's yes, two findings triaged",
        ),
    ];
    for (i, (name, branch, route, shows)) in shows.into_iter().enumerate() {
        let change: Attempt = vec![
            (
                "NOTES.md".to_owned(),
                format!(
                    "# Notes on calc.sh\n\nEach operation reads two integers: `sh calc.sh OP A B`.\nThis branch is {branch}, written for a review.\n"
                ),
            ),
            (
                "scripts/usage.sh".to_owned(),
                "#!/bin/sh\n# Prints how to call calc.sh.\necho 'usage: sh calc.sh add|sub A B'\nexit 2\n".to_owned(),
            ),
        ];
        let persona = Persona {
            branch: branch.to_owned(),
            title: format!("{branch}: notes and a usage script"),
            summary: String::new(),
            attempts: vec![change],
            forgets_link_once: false,
        };
        let expect = Expect { status: Status::ReviewDone, iteration: 0, comments: 0, needs_network: false };
        let mut review = scenario(&sub, name, shows, persona, expect);
        review.request = format!("Review {LOGIN}/{REPO_NAME} main..{branch}");
        review.question = "Is the usage script's exit status right for a usage error?".into();
        review.review = Some(route);
        review.start_after = 4.0 + i as f64 * 0.5;
        out.push(review);
    }

    out
}

/// How many cycles the demo runs, as a word for prose ("eight"): `forgeloop --help` takes it
/// from here, so the count it states is the table's.
pub fn count_in_words() -> String {
    const WORDS: [&str; 13] =
        ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    let count = all().len();
    WORDS.get(count).map_or_else(|| count.to_string(), |word| (*word).to_owned())
}

/// The demo's one-line help (`forgeloop --help`), with the scenario table's count.
pub fn about() -> String {
    format!(
        "See it all work offline: a sandbox, a built-in GitHub emulator, a scripted WebGPT, {} live cycles",
        count_in_words()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::brief::Brief;

    #[test]
    fn ten_distinct_cycles_with_complete_briefs() {
        let all = all();
        assert_eq!(all.len(), 10);
        let mut names: Vec<_> = all.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 10);
        let reviews: Vec<_> = all.iter().filter_map(|s| s.review).collect();
        assert_eq!(reviews, [ReviewRoute::ConnectorVerified, ReviewRoute::ConnectorFails]);
        // One through the connector: a brief awaiting confirmation, as every connector cycle.
        let connector: Vec<_> = all.iter().filter(|s| s.connector).collect();
        assert_eq!(connector.len(), 1);
        assert!(connector[0].await_confirmation && !connector[0].on_ci && !connector[0].dependency);
        assert_eq!(all.iter().filter(|s| s.on_ci).count(), 1);
        assert_eq!(all.iter().filter(|s| s.dependency && s.expect.needs_network).count(), 1);
        for s in &all {
            Brief::parse(&s.brief).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert!(!s.persona.attempts.is_empty());
        }
        let statuses: Vec<_> = all.iter().map(|s| s.expect.status).collect();
        for wanted in [Status::ReadyToMerge, Status::BlockedMaxIterations, Status::Aborted] {
            assert!(statuses.contains(&wanted));
        }
        assert!(all.iter().any(|s| s.await_confirmation));
        assert!(all.iter().any(|s| s.persona.forgets_link_once));
    }
}
