//! Table-driven classification of realistic WebGPT replies (issue: the agent side of the
//! loop). Each row: reply text, the cycle's binding, expected class and PR.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use forgeloop::domain::pr_ref::WebHosts;
use forgeloop::domain::reply::{ReplyClass, classify};

use ReplyClass::*;

const BOUND: Option<&str> = Some("acme/widget");

struct Case {
    name: &'static str,
    reply: &'static str,
    bound: Option<&'static str>,
    class: ReplyClass,
    pr: Option<&'static str>,
}

const fn case(name: &'static str, reply: &'static str, class: ReplyClass, pr: Option<&'static str>) -> Case {
    Case { name, reply, bound: BOUND, class, pr }
}

const CASES: &[Case] = &[
    case(
        "clean trailer",
        "I've opened the pull request.\n\nPR_URL: https://github.com/acme/widget/pull/12",
        PrFound,
        Some("acme/widget#12"),
    ),
    case(
        "backticked trailer",
        "Done.\nPR_URL: `https://github.com/acme/widget/pull/12`",
        PrFound,
        Some("acme/widget#12"),
    ),
    case("bold trailer", "Done.\n**PR_URL:** https://github.com/acme/widget/pull/12", PrFound, Some("acme/widget#12")),
    case(
        "markdown link trailer",
        "PR_URL: [#12](https://github.com/acme/widget/pull/12)",
        PrFound,
        Some("acme/widget#12"),
    ),
    case("angle-bracket trailer", "PR_URL: <https://github.com/acme/widget/pull/12>", PrFound, Some("acme/widget#12")),
    case(
        "trailer with period",
        "All set.\nPR_URL: https://github.com/acme/widget/pull/12.",
        PrFound,
        Some("acme/widget#12"),
    ),
    case(
        "bulleted trailer",
        "- Branch: dark-mode\n- PR_URL: https://github.com/acme/widget/pull/12",
        PrFound,
        Some("acme/widget#12"),
    ),
    case("lowercase label", "pr_url: https://github.com/acme/widget/pull/9", PrFound, Some("acme/widget#9")),
    case("shorthand trailer", "PR_URL: acme/widget#12", PrFound, Some("acme/widget#12")),
    case(
        "trailer wins over other links",
        "This supersedes https://github.com/acme/widget/pull/3 (closed).\nSee also https://github.com/acme/widget/pull/4.\n\nPR_URL: https://github.com/acme/widget/pull/12",
        PrFound,
        Some("acme/widget#12"),
    ),
    case(
        "last trailer wins",
        "PR_URL: https://github.com/acme/widget/pull/12\nCorrection:\nPR_URL: https://github.com/acme/widget/pull/13",
        PrFound,
        Some("acme/widget#13"),
    ),
    case("trailer with query", "PR_URL: https://github.com/acme/widget/pull/12?w=1", PrFound, Some("acme/widget#12")),
    case(
        "link only",
        "Here is the PR: https://github.com/acme/widget/pull/7 — it adds the toggle.",
        PrFound,
        Some("acme/widget#7"),
    ),
    case(
        "link to files tab",
        "Review it at https://github.com/acme/widget/pull/7/files please.",
        PrFound,
        Some("acme/widget#7"),
    ),
    case(
        "same PR linked twice",
        "Opened https://github.com/acme/widget/pull/7. Diff: https://github.com/acme/widget/pull/7/files",
        PrFound,
        Some("acme/widget#7"),
    ),
    case(
        "markdown link in prose",
        "I opened [acme/widget#12](https://github.com/acme/widget/pull/12).",
        PrFound,
        Some("acme/widget#12"),
    ),
    case(
        "two different PRs, no trailer",
        "I opened https://github.com/acme/widget/pull/7 and https://github.com/acme/widget/pull/8.",
        NoPrReference,
        None,
    ),
    case(
        "PR in a code block only",
        "Run:\n```sh\ngh pr view https://github.com/acme/widget/pull/7\n```\nI could not finish.",
        NoPrReference,
        None,
    ),
    case("PR in a tilde fence only", "~~~\nhttps://github.com/acme/widget/pull/7\n~~~", NoPrReference, None),
    case("unclosed fence hides the rest", "```\nlog line\nhttps://github.com/acme/widget/pull/7", NoPrReference, None),
    case(
        "trailer inside a code block",
        "Example:\n```\nPR_URL: https://github.com/acme/widget/pull/7\n```",
        NoPrReference,
        None,
    ),
    case(
        "PR in a quote only",
        "> PR_URL: https://github.com/acme/widget/pull/7\nThat was the old one; I have not opened a new PR.",
        NoPrReference,
        None,
    ),
    case(
        "not created",
        "PR_URL: NOT_CREATED\nThe file `docs/theme.md` does not exist on `main`, so I stopped.",
        PrNotCreated,
        None,
    ),
    case("not created backticked", "I could not proceed.\n\nPR_URL: `NOT_CREATED`", PrNotCreated, None),
    case(
        "trailer NOT_CREATED after an old link",
        "Earlier I opened https://github.com/acme/widget/pull/3 but this change needs a decision.\nPR_URL: NOT_CREATED",
        PrNotCreated,
        None,
    ),
    case(
        "not created because of access",
        "I don't have access to acme/widget through the GitHub connector.\nPR_URL: NOT_CREATED",
        ConnectorDenied,
        None,
    ),
    case(
        "denied: no access",
        "I don't have access to the acme/widget repository with the GitHub connector.",
        ConnectorDenied,
        None,
    ),
    case(
        "denied: curly apostrophe",
        "I\u{2019}m sorry, I don\u{2019}t have permission to create branches in acme/widget.",
        ConnectorDenied,
        None,
    ),
    case(
        "denied: not connected",
        "The GitHub connector isn't connected in this conversation. Please enable it.",
        ConnectorDenied,
        None,
    ),
    case(
        "denied: app not installed",
        "It looks like the ChatGPT GitHub app is not installed on the acme organization.",
        ConnectorDenied,
        None,
    ),
    case("denied: unable to access", "I was unable to access the repository acme/widget.", ConnectorDenied, None),
    case("denied: 403", "Pushing the branch failed with 403 Forbidden.", ConnectorDenied, None),
    case("denied: integration", "GitHub said: Resource not accessible by integration.", ConnectorDenied, None),
    case(
        "denied: grant access",
        "Please grant access to acme/widget in Settings → Connectors, then ask me again.",
        ConnectorDenied,
        None,
    ),
    case(
        "denial text only in a log block",
        "```\nerror: 403 Forbidden from a mock server in the tests\n```\nShould I change the test?",
        NoPrReference,
        None,
    ),
    case(
        "clarifying question",
        "Before I start: should the toggle live in the header or on the settings page?",
        NoPrReference,
        None,
    ),
    case("empty reply", "", NoPrReference, None),
    case("whitespace reply", "   \n\n  ", NoPrReference, None),
    case(
        "placeholder quoted back",
        "Understood. I will reply with\nPR_URL: <url>\nonce the PR is open.",
        NoPrReference,
        None,
    ),
    case("issue link is not a PR", "I filed https://github.com/acme/widget/issues/5 instead.", NoPrReference, None),
    case(
        "compare link is not a PR",
        "Branch pushed: https://github.com/acme/widget/compare/main...dark-mode",
        NoPrReference,
        None,
    ),
    case(
        "look-alike host",
        "PR: https://www.github.com/acme/widget/pull/7 and https://github.com.evil.example/acme/widget/pull/7",
        NoPrReference,
        None,
    ),
    case("invalid trailer number, no other link", "PR_URL: https://github.com/acme/widget/pull/0", NoPrReference, None),
    case(
        "another repository",
        "PR_URL: https://github.com/acme/gadget/pull/3",
        PrWrongRepository,
        Some("acme/gadget#3"),
    ),
    case(
        "another repository by link",
        "Opened https://github.com/other/widget/pull/3",
        PrWrongRepository,
        Some("other/widget#3"),
    ),
    case(
        "binding is case-insensitive",
        "PR_URL: https://github.com/ACME/Widget/pull/5",
        PrFound,
        Some("ACME/Widget#5"),
    ),
    Case {
        name: "unbound cycle takes any repository",
        reply: "PR_URL: https://github.com/acme/gadget/pull/3",
        bound: None,
        class: PrFound,
        pr: Some("acme/gadget#3"),
    },
    case("enterprise URL without config", "PR_URL: https://ghe.example.com/acme/widget/pull/4", NoPrReference, None),
];

#[test]
fn realistic_replies_are_classified() {
    assert!(CASES.len() >= 40);
    for case in CASES {
        let got = classify(case.reply, &WebHosts::default(), case.bound);
        assert_eq!(got.class, case.class, "{}: {}", case.name, got.reason);
        assert_eq!(got.pr.map(|p| p.shorthand()).as_deref(), case.pr, "{}", case.name);
        assert!(!got.reason.is_empty());
    }
}

/// The honest way out the prompt offers (issue 57): a `TESTS_CONTRADICT:` line.
#[test]
fn a_reply_that_says_the_tests_contradict_the_brief_is_its_own_class_unless_it_names_a_pr() {
    let hosts = WebHosts::default();
    let says = "I did not change the tests.\n\nTESTS_CONTRADICT: tests/test_area.py:12: the test expects 1090,\nbut the docstring and the test's own comment say 1080.\n\nPR_URL: NOT_CREATED";
    let got = classify(says, &hosts, BOUND);
    assert_eq!(got.class, TestsContradict, "{}", got.reason);
    assert_eq!(
        got.contradiction.as_deref(),
        Some("tests/test_area.py:12: the test expects 1090,\nbut the docstring and the test's own comment say 1080.")
    );
    // No trailer at all: the same.
    assert_eq!(
        classify("TESTS_CONTRADICT: t.sh:3 wants 5 where the brief says 6", &hosts, BOUND).class,
        TestsContradict
    );
    // A PR with it: tested, and the words are kept for the person.
    let with_pr =
        format!("{}\nPR_URL: https://github.com/acme/widget/pull/12", says.replace("PR_URL: NOT_CREATED", ""));
    let got = classify(&with_pr, &hosts, BOUND);
    assert_eq!((got.class, got.pr.map(|p| p.number)), (PrFound, Some(12)));
    assert!(got.contradiction.unwrap().starts_with("tests/test_area.py:12"));
    // The prompt's own placeholder quoted back, or the word in prose, is not one.
    assert_eq!(classify("TESTS_CONTRADICT:", &hosts, BOUND).class, NoPrReference);
    let prose = "The tests_contradict idea does not apply here.\nPR_URL: NOT_CREATED";
    assert_eq!(classify(prose, &hosts, BOUND).class, PrNotCreated);
}

#[test]
fn enterprise_urls_are_found_when_configured() {
    let hosts = WebHosts::with(Some("ghe.example.com"));
    let got = classify("Opened it.\nPR_URL: https://ghe.example.com/acme/widget/pull/4", &hosts, BOUND);
    assert_eq!((got.class, got.pr.unwrap().number), (PrFound, 4));
    let got = classify("See https://ghe.example.com/acme/widget/pull/4/files", &hosts, BOUND);
    assert_eq!(got.class, PrFound);
}

#[test]
fn class_names_round_trip() {
    for class in ReplyClass::ALL {
        assert_eq!(ReplyClass::parse(class.as_str()), Some(class));
        assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
    }
    assert_eq!(ReplyClass::parse("pr_found"), Some(PrFound));
    assert_eq!(ReplyClass::parse("maybe"), None);
}
