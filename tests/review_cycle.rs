//! Review cycles through the real binary against the emulator (docs/review.md): the challenge
//! validates only a right answer read in the attested conversation at the reviewed commit; the
//! packet carries no secret of any format and no excluded file, names each in the dry run, and
//! its manifest's hashes are the commit's; each triage does what it says and is journaled.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/redact_secrets.rs"]
mod redact_secrets;
mod support;

use serde_json::Value;
use sha2::{Digest, Sha256};
use support::world::{World, fresh_secret};

const CHAT: &str = "https://chatgpt.com/c/review-1";

/// `git` in the emulator's repository.
fn git(repo: &github_emulator::RepoHandle, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .current_dir(&repo.path)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn blob_at(repo: &github_emulator::RepoHandle, commit: &str, path: &str) -> String {
    String::from_utf8(git(repo, &["rev-parse", &format!("{commit}:{path}")])).unwrap().trim().to_owned()
}

fn file_at(repo: &github_emulator::RepoHandle, commit: &str, path: &str) -> Vec<u8> {
    git(repo, &["show", &format!("{commit}:{path}")])
}

/// A repository whose `feature` branch changes three source files with lines worth asking about.
fn world() -> (World, github_emulator::RepoHandle) {
    let w = World::new();
    let repo = w.project("acme", "widget", true);
    w.commit(
        &repo,
        "feature",
        &[
            ("src/lib.rs", &source("lib", 1)),
            ("src/parse.rs", &source("parse", 1)),
            ("README.md", "# widget\n\nThe widget library and its parser, documented.\n"),
        ],
        "feature",
    );
    (w, repo)
}

fn source(name: &str, version: u32) -> String {
    (1..=30)
        .map(|i| format!("pub fn {name}_step_{i}_v{version}(input: &str) -> usize {{ input.len() * {i} }}\n"))
        .collect()
}

fn start(w: &World, state: &str) -> Value {
    let run = w.run(&["review", "start", "--state", state, "--repository", "acme/widget", "--range", "main..feature"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn attest(w: &World, state: &str) -> Value {
    let run = w.run(&[
        "attest",
        "--state",
        state,
        "--model",
        "GPT-5 Pro",
        "--connector",
        "attached",
        "--conversation-url",
        CHAT,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(w.run(&["sent", "--state", state]).code, 0);
    run.json()
}

/// The answers a reader of `commit` gives to the challenge's questions.
fn answers(repo: &github_emulator::RepoHandle, commit: &str, questions: &Value) -> String {
    let mut text = String::from("Here are my answers, read through the connector:\n\n");
    for (i, q) in questions.as_array().unwrap().iter().enumerate() {
        let path = q["path"].as_str().unwrap();
        let answer = match q["kind"].as_str().unwrap() {
            "blob_id" => blob_at(repo, commit, path),
            "line" => {
                let content = String::from_utf8(file_at(repo, commit, path)).unwrap();
                let n = q["line"].as_u64().unwrap() as usize;
                content.lines().nth(n - 1).unwrap().to_owned()
            }
            other => panic!("{other}"),
        };
        text.push_str(&format!("**ANSWER {}:** `{answer}`\n", i + 1));
    }
    text
}

fn answer(w: &World, state: &str, text: &str, from: &str) -> Value {
    let file = w.path(&format!("{state}-answer.txt"));
    std::fs::write(&file, text).unwrap();
    let run = w.run(&["attest", "--state", state, "--answer", file.to_str().unwrap(), "--conversation-url", from]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn next(w: &World, state: &str) -> Value {
    let run = w.run(&["next", "--state", state]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn journal_kinds(w: &World, state: &str) -> Vec<Value> {
    let run = w.run(&["log", "--state", state]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["events"].as_array().unwrap().clone()
}

#[test]
fn a_right_answer_validates_and_a_wrong_stale_or_foreign_one_does_not() {
    let (w, repo) = world();
    let head = w.tip(&repo, "feature");

    // Right: the route is the connector and the review request names the commit.
    let started = start(&w, "right");
    assert_eq!(started["status"], "AWAITING_ATTESTATION");
    assert_eq!(started["review"]["target"]["head"], head.as_str());
    let step = next(&w, "right");
    assert_eq!(step["command"][1], "attest", "{step}");
    let challenge = attest(&w, "right");
    assert_eq!(challenge["questions"].as_array().unwrap().len(), 3, "{challenge}");
    assert!(challenge["challenge"].as_str().unwrap().contains(&head), "{challenge}");
    let judged = answer(&w, "right", &answers(&repo, &head, &challenge["questions"]), CHAT);
    assert_eq!(judged["verdict"]["verdict"], "valid", "{judged}");
    assert_eq!(judged["route"], "CONNECTOR");
    let step = next(&w, "right");
    assert_eq!((step["action"].as_str(), step["route"].as_str()), (Some("send"), Some("CONNECTOR")), "{step}");
    assert!(step["text"].as_str().unwrap().contains(&head), "{step}");
    let kinds: Vec<String> =
        journal_kinds(&w, "right").iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect();
    for kind in ["review_started", "attestation_recorded", "attestation_judged", "review_requested"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} missing from {kinds:?}");
    }

    // Wrong: made-up answers send the review to the packet.
    start(&w, "wrong");
    let challenge = attest(&w, "wrong");
    let made_up: String =
        (1..=3).map(|i| format!("ANSWER {i}: {}\n", "0123456789abcdef0123456789abcdef01234567")).collect();
    let _ = challenge;
    let judged = answer(&w, "wrong", &made_up, CHAT);
    assert_eq!(judged["verdict"]["verdict"], "invalid", "{judged}");
    assert_eq!(judged["route"], "LOCAL_BUNDLE");
    assert_eq!(judged["status"], "AWAITING_PACKET");
    assert_eq!(next(&w, "wrong")["route"], "LOCAL_BUNDLE");

    // Foreign: right answers, read in another conversation, prove nothing about this one.
    start(&w, "foreign");
    let challenge = attest(&w, "foreign");
    let judged = answer(&w, "foreign", &answers(&repo, &head, &challenge["questions"]), "https://chatgpt.com/c/other");
    assert_eq!(judged["verdict"]["verdict"], "invalid", "{judged}");
    assert!(judged["verdict"]["why"].as_str().unwrap().contains("another conversation"), "{judged}");

    // Stale: the branch moved; answers read at the old commit do not match the new one.
    w.commit(
        &repo,
        "feature",
        &[
            ("src/lib.rs", &source("lib", 2)),
            ("src/parse.rs", &source("parse", 2)),
            ("README.md", "# widget\n\nThe widget library, its parser, and a second version.\n"),
        ],
        "v2",
    );
    let new_head = w.tip(&repo, "feature");
    let started = start(&w, "stale");
    assert_eq!(started["review"]["target"]["head"], new_head.as_str());
    let challenge = attest(&w, "stale");
    let judged = answer(&w, "stale", &answers(&repo, &head, &challenge["questions"]), CHAT);
    assert_eq!(judged["verdict"]["verdict"], "invalid", "{judged}");
    assert!(judged["judged"].as_array().unwrap().iter().all(|j| j["correct"] == false), "{judged}");
    // And the right answers at the new commit pass: the test could fail.
    start(&w, "fresh");
    let challenge = attest(&w, "fresh");
    let judged = answer(&w, "fresh", &answers(&repo, &new_head, &challenge["questions"]), CHAT);
    assert_eq!(judged["verdict"]["verdict"], "valid", "{judged}");
}

#[test]
fn the_packet_carries_no_secret_and_no_excluded_file_and_names_each() {
    let w = World::new();
    let repo = w.project("acme", "widget", true);
    let mut rng = redact_secrets::Rng::new(43);
    let samples = redact_secrets::all_families(&mut rng);
    let mut settings = String::from("# settings for the widget service\nDEBUG = False\n");
    let mut lines = Vec::new();
    for sample in &samples {
        lines.push((sample, settings.lines().count() + 1));
        settings.push_str(&sample.text);
        settings.push('\n');
    }
    let env_secret = fresh_secret("ghp_");
    let app = "fn main() {\n    println!(\"the widget service starts here\");\n}\n";
    w.commit(
        &repo,
        "feature",
        &[
            ("config/settings.py", &settings),
            (".env", &format!("GITHUB_TOKEN={env_secret}\nPLAIN_PASSWORD_FOR_DB=correct-horse\n")),
            ("src/main.rs", app),
            ("Cargo.lock", "# This file is automatically @generated by Cargo.\nversion = 4\n"),
        ],
        "feature with secrets",
    );
    let head = w.tip(&repo, "feature");
    start(&w, "pkt");
    let run =
        w.run(&["attest", "--state", "pkt", "--model", "GPT-5", "--connector", "absent", "--conversation-url", CHAT]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["status"], "AWAITING_PACKET");

    let dry = w.run(&["review", "prepare", "--state", "pkt", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    let doc = dry.json();
    for sample in &samples {
        assert!(!dry.stdout.contains(&sample.secret), "the dry run printed a {} secret", sample.family);
    }
    assert!(!dry.stdout.contains(&env_secret));
    let risks = doc["risks"].as_array().unwrap();
    for (sample, line) in &lines {
        let named = risks.iter().any(|r| {
            r["kind"] == "secret"
                && r["path"] == "config/settings.py"
                && r["detail"].as_str().unwrap().contains(&format!("in the file at line {line}"))
        });
        assert!(named, "the {} secret at line {line} is not named: {risks:?}", sample.family);
    }
    let file = |path: &str| doc["files"].as_array().unwrap().iter().find(|f| f["path"] == path).cloned().unwrap();
    assert_eq!(file(".env")["included"], false);
    assert!(
        file(".env").get("sha256").is_none() && file(".env").get("blob").is_none(),
        "a hash of .env is a guess oracle"
    );
    assert_eq!(file(".env")["exclusion"]["name"], "env-file", "{}", file(".env"));
    assert!(risks.iter().any(|r| r["path"] == ".env" && r["kind"] == "excluded"), "{risks:?}");
    assert_eq!(file("Cargo.lock")["included"], false);
    assert!(risks.iter().any(|r| r["path"] == "Cargo.lock" && r["kind"] == "generated"), "{risks:?}");
    assert_eq!(file("src/main.rs")["included"], true);
    assert!(doc["needs_approval"].as_bool().unwrap());
    assert!(doc["tokens"].as_u64().unwrap() > 0 && doc["bytes"].as_u64().unwrap() > 0);
    assert!(!w.sb.home().join("cycles/pkt.d/review").exists(), "the dry run wrote a packet");

    let made = w.run(&["review", "prepare", "--state", "pkt"]);
    assert_eq!(made.code, 0, "{}\n{}", made.stdout, made.stderr);
    let made = made.json();
    let packet = std::fs::read_to_string(made["packet"].as_str().unwrap()).unwrap();
    for sample in &samples {
        assert!(!packet.contains(&sample.secret), "the packet holds a {} secret", sample.family);
    }
    assert!(!packet.contains(&env_secret) && !packet.contains("correct-horse"), "the packet holds .env");
    assert!(packet.contains("the widget service starts here") && packet.contains(&head));
    let sha = format!("{:x}", Sha256::digest(packet.as_bytes()));
    assert_eq!(made["sha256"], sha.as_str());

    // The manifest binds the packet to the commit: each file's blob and hash are the commit's.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(made["manifest"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(manifest["head"], head.as_str());
    assert_eq!(manifest["base"], w.tip(&repo, "main").as_str());
    assert_eq!(manifest["repository"], "acme/widget");
    assert_eq!(manifest["packet"]["sha256"], sha.as_str());
    for f in manifest["files"].as_array().unwrap().iter().filter(|f| f["included"] == true) {
        let path = f["path"].as_str().unwrap();
        assert_eq!(f["blob"], blob_at(&repo, &head, path).as_str(), "{path}");
        let bytes = file_at(&repo, &head, path);
        assert_eq!(f["sha256"], format!("{:x}", Sha256::digest(&bytes)).as_str(), "{path}");
    }
    assert!(
        manifest["redactions"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>()
            >= samples.len() as u64
    );

    // The first packet for a repository waits for the person: an agent's pipe cannot say yes.
    let step = next(&w, "pkt");
    assert_eq!(step["action"], "wait_for_human", "{step}");
    let refused = w.run(&["review", "approve", "--state", "pkt"]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(refused.stdout.contains("terminal"), "{}", refused.stdout);
    let paths = w.ctx().cycle("pkt").unwrap();
    forgeloop::cycle::review::approve(&w.ctx(), &paths, "test").unwrap();
    let step = next(&w, "pkt");
    assert_eq!(step["action"], "send", "{step}");
    assert_eq!(step["upload"], made["packet"], "{step}");
    assert!(step["text"].as_str().unwrap().contains("FINDING n:"), "{step}");
}

#[test]
fn each_triage_does_what_it_says_and_is_journaled() {
    let (w, _repo) = world();
    start(&w, "tri");
    assert_eq!(
        w.run(&["attest", "--state", "tri", "--model", "GPT-5", "--connector", "absent", "--conversation-url", CHAT])
            .code,
        0
    );
    let made = w.run(&["review", "prepare", "--state", "tri"]);
    assert_eq!(made.code, 0, "{}", made.stdout);
    let paths = w.ctx().cycle("tri").unwrap();
    forgeloop::cycle::review::approve(&w.ctx(), &paths, "test").unwrap();
    assert_eq!(w.run(&["sent", "--state", "tri"]).code, 0);

    let reply = "Overall this looks careful. My findings:\n\n\
        1. **FINDING 1: [HIGH] src/lib.rs:3 — lib_step_3 multiplies without an overflow check**\n\
        - FINDING 2: [medium] `src/parse.rs` - the parser ignores empty input\n\
        FINDING 3: [low] README.md:1 — the title could say what a widget is\n\
        FINDING 4 [info] src/parse.rs:10: why step 10?\n\
        FINDING five: this line is not in the format\n";
    let file = w.path("reply.txt");
    std::fs::write(&file, reply).unwrap();
    let replied = w.run(&["review", "reply", "--state", "tri", "--file", file.to_str().unwrap()]);
    assert_eq!(replied.code, 0, "{}\n{}", replied.stdout, replied.stderr);
    let replied = replied.json();
    assert_eq!(replied["added"], 4, "{replied}");
    assert_eq!(replied["status"], "AWAITING_TRIAGE");
    assert!(
        replied["unparsed"].as_array().unwrap().iter().any(|u| u["text"].as_str().unwrap().contains("FINDING five")),
        "{replied}"
    );
    assert_eq!(next(&w, "tri")["action"], "wait_for_human");

    let triage = |n: &str, d: &str, note: Option<&str>| {
        let mut args = vec!["triage", "--state", "tri", "--finding", n, "--as", d];
        if let Some(note) = note {
            args.extend(["--note", note]);
        }
        w.run(&args)
    };
    assert_eq!(triage("1", "FIX", Some("check with checked_mul")).code, 0);
    assert_eq!(triage("2", "defer", None).code, 0);
    assert_eq!(triage("3", "DISMISS", Some("the README says it")).code, 0);
    let no_question = triage("4", "QUESTION", None);
    assert_eq!(no_question.code, 2, "{}", no_question.stdout);
    assert_eq!(triage("9", "FIX", None).code, 2);
    assert_eq!(triage("1", "MAYBE", None).code, 2);
    let asked = triage("4", "QUESTION", Some("Is step 10 special, or an example?"));
    assert_eq!(asked.code, 0, "{}", asked.stdout);

    // The question is the next message to the chat; its answer with no new finding ends it.
    let step = next(&w, "tri");
    assert_eq!(step["action"], "send");
    let text = step["text"].as_str().unwrap();
    assert!(text.contains("FINDING 4") && text.contains("Is step 10 special"), "{text}");
    assert!(step.get("upload").is_none(), "the packet is uploaded once: {step}");
    assert_eq!(w.run(&["sent", "--state", "tri"]).code, 0);
    std::fs::write(&file, "Step 10 is only an example.\n\nNO FINDINGS\n").unwrap();
    let done = w.run(&["review", "reply", "--state", "tri", "--file", file.to_str().unwrap()]).json();
    assert_eq!(done["status"], "REVIEW_DONE", "{done}");
    assert_eq!(next(&w, "tri")["action"], "done");

    let events = journal_kinds(&w, "tri");
    let triaged: Vec<(u64, String)> = events
        .iter()
        .filter(|e| e["kind"] == "finding_triaged")
        .map(|e| (e["data"]["finding"].as_u64().unwrap(), e["data"]["decision"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        triaged,
        [(1, "FIX".to_owned()), (2, "DEFER".to_owned()), (3, "DISMISS".to_owned()), (4, "QUESTION".to_owned())]
    );
    assert!(events.iter().filter(|e| e["kind"] == "finding_triaged").all(|e| e["actor"] == "agent"), "{events:?}");

    // FIX becomes a PR cycle's request; it is not called fixed without a passing run.
    let shown = w.run(&["review", "show", "--state", "tri"]).json();
    let request = shown["fix_request"].as_str().unwrap();
    assert!(request.contains("src/lib.rs:3") && request.contains("checked_mul"), "{request}");
    assert!(!request.contains("parser ignores") && !request.contains("title could say"), "{request}");
    let forged = w.run(&[
        "forge",
        "--request-from-review",
        "tri",
        "--state",
        "fix",
        "--intent-brief",
        support::BRIEF,
        "--await-confirmation",
    ]);
    assert_eq!(forged.code, 0, "{}\n{}", forged.stdout, forged.stderr);
    let forged = forged.json();
    assert!(forged["request"].as_str().unwrap().contains("lib_step_3"), "{forged}");
    assert_eq!(forged["repository"], "acme/widget");
    let fixed = w.run(&["review", "fixed", "--state", "tri", "--finding", "1", "--by", "fix"]);
    assert_eq!(fixed.code, 2, "{}", fixed.stdout);
    assert!(fixed.stdout.contains("no passing run"), "{}", fixed.stdout);
}

/// The rule table of docs/review.md is the code's: each built-in rule is a row naming every
/// glob it keeps out, so the documented exclusions cannot drift from the ones applied.
#[test]
fn the_documented_rules_are_the_ones_applied() {
    let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/review.md")).unwrap();
    for rule in forgeloop::domain::packet::RULES {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", rule.name)))
            .unwrap_or_else(|| panic!("docs/review.md has no row for the rule {}", rule.name));
        let globs: Vec<&str> = row.split('|').nth(2).unwrap().split(',').map(|g| g.trim().trim_matches('`')).collect();
        assert_eq!(globs, rule.globs, "the {} row lists other globs than the code", rule.name);
        assert!(row.contains(rule.why), "the {} row does not say why: {row}", rule.name);
    }
}
