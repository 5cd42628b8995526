//! A PR whose test prints terminal escape sequences (OSC 52 writes the person's clipboard,
//! OSC 0 retitles the window, OSC 8 hides a link, CSI clears the screen, C1 CSI/OSC do the
//! same in one character, bidi overrides reorder text) and whose file name and contents hold
//! ESC. Outcome, on the exact bytes the binary writes: `handoff`, `iterate`, `diff --pr` and
//! `diff --pr --stat` show each such character as a visible escape (`\x1b`) and write none
//! raw; the JSON outputs escape them (`\u009b`) and keep their values; `unblock` asks on a
//! terminal without passing them through. Each part also checks that the raw bytes were really
//! there to pass (the run log, the repository's own diff), so the observation can fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;
use support::Sandbox;
use support::tmux::{Tmux, sh_quote};
use support::world::World;

/// The PR's test: one line per kind of sequence, then a failure.
const HOSTILE_SH: &str = r#"printf 'osc52:\033]52;c;cm0gLXJmIH4=\007\n'
printf 'title:\033]0;pwned\007\n'
printf 'link:\033]8;;https://evil.example/\033\\click\033]8;;\033\\\n'
printf 'csi:\033[2J\033[31mred\033[0m\n'
printf 'c1:\302\2332J\302\2350;t\302\234\n'
printf 'del:\177 bidi:\342\200\256txt\n'
printf 'progress 10%%\rhidden\n'
echo 'not ok - hostile'
exit 1
"#;

/// The same lines as a person must see them (Python `repr` notation, domain::terminal).
const SHOWN: &[&str] = &[
    r"osc52:\x1b]52;c;cm0gLXJmIH4=\x07",
    r"title:\x1b]0;pwned\x07",
    r"link:\x1b]8;;https://evil.example/\x1b\click\x1b]8;;\x1b\",
    r"csi:\x1b[2J\x1b[31mred\x1b[0m",
    r"c1:\x9b2J\x9d0;t\x9c",
    r"del:\x7f bidi:\u202etxt",
    r"progress 10%\x0dhidden",
];

/// A file whose name and contents hold escape sequences.
const EVIL_NAME: &str = "x\u{1b}]0;pwned\u{7}.txt";
const EVIL_CONTENT: &str = "clip:\u{1b}]52;c;cm0gLXJmIH4=\u{7} c1:\u{9b}31m bidi:\u{202e}gnp.exe\n";
const EVIL_CONTENT_SHOWN: &str = r"+clip:\x1b]52;c;cm0gLXJmIH4=\x07 c1:\x9b31m bidi:\u202egnp.exe";

/// Characters a terminal acts on, by position: C0 except newline and tab, DEL, C1 and the
/// bidi controls (written out here, not taken from the code under test).
fn raw_controls(bytes: &[u8]) -> Vec<(usize, char)> {
    let text = std::str::from_utf8(bytes).expect("the output is UTF-8");
    text.char_indices()
        .filter(|&(_, c)| {
            matches!(c, '\0'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// No raw ESC, BEL, DEL, C1 CSI/OSC/ST (as UTF-8) or RLO in `bytes`, at the byte level too.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let found = raw_controls(bytes);
    assert!(found.is_empty(), "{what}: raw controls {found:?} in\n{}", String::from_utf8_lossy(bytes));
    for raw in [&b"\x1b"[..], b"\x07", b"\x7f", b"\r", b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x9c", b"\xe2\x80\xae"] {
        assert!(!contains(bytes, raw), "{what}: {raw:?} raw");
    }
}

struct Output {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn run(w: &World, args: &[&str]) -> Output {
    let out = w.command(args).output().unwrap();
    Output { code: out.status.code().unwrap_or(-1), stdout: out.stdout, stderr: out.stderr }
}

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(["-c", "user.name=WebGPT", "-c", "user.email=webgpt@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// PR #1: `hostile.sh` and the file with the hostile name, pushed with real git (the
/// emulator's own commit API refuses control characters in a path, as it should).
fn hostile_pr(w: &World) -> (std::path::PathBuf, String) {
    let repo = w.project("acme", "widget", false);
    let work = w.path("work");
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{}", w.token));
    let header = format!("http.extraHeader=Authorization: Basic {auth}");
    git(&w.path(""), &["clone", "--quiet", &repo.clone_url, work.to_str().unwrap()]);
    git(&work, &["checkout", "--quiet", "-b", "hostile"]);
    std::fs::write(work.join("hostile.sh"), HOSTILE_SH).unwrap();
    std::fs::write(work.join(EVIL_NAME), EVIL_CONTENT).unwrap();
    git(&work, &["add", "--all"]);
    git(&work, &["commit", "--quiet", "-m", "hostile"]);
    git(&work, &["-c", &header, "push", "--quiet", "origin", "hostile"]);
    let n = w.rt.block_on(w.emu.open_pr(&repo, "hostile", "main", "hostile")).unwrap();
    assert_eq!(n, 1);
    let head = w.emu.pr_head(&repo, n).unwrap();
    (repo.path.clone(), head)
}

#[test]
fn pr_text_reaches_the_terminal_as_visible_escapes_and_json_keeps_its_values() {
    let w = World::new();
    let (bare, head) = hostile_pr(&w);
    std::fs::write(w.path("hostile.json"), r#"[["sh", "hostile.sh"]]"#).unwrap();
    w.cycle("c.json", &[]);

    // forge --pr: JSON with no raw control, whose values still hold the raw characters.
    let forge = run(&w, &["forge", "--pr", "acme/widget#1", "--state", "c.json", "--commands-json", "hostile.json"]);
    assert_eq!(forge.code, 0, "{}", String::from_utf8_lossy(&forge.stderr));
    assert_terminal_safe("forge --pr", &forge.stdout);
    assert!(contains(&forge.stdout, br"\u001b]52;c;") && contains(&forge.stdout, br"\u009b2J"));
    assert!(contains(&forge.stdout, br"\u007f") && contains(&forge.stdout, br"\u202e"));
    let doc: Value = serde_json::from_slice(&forge.stdout).unwrap();
    assert_eq!(doc["status"], "AWAITING_WEBGPT_FIX");
    let handoff_value = doc["webgpt_handoff"].as_str().unwrap();
    for raw in ["\u{1b}]52;c;cm0gLXJmIH4=\u{7}", "\u{9b}2J\u{9d}0;t\u{9c}", "del:\u{7f} bidi:\u{202e}txt"] {
        assert!(handoff_value.contains(raw), "the JSON value lost {raw:?}: {handoff_value:?}");
    }

    // Control: the run log on disk holds the raw bytes the outputs must not pass through.
    let log = std::fs::read(w.path(&format!("c.d/runs/1-{}.log", &head[..12]))).unwrap();
    for raw in [&b"\x1b]52;c;cm0gLXJmIH4=\x07"[..], b"\xc2\x9b2J", b"\x7f", b"\xe2\x80\xae", b"10%\rhidden"] {
        assert!(contains(&log, raw), "the log lacks {raw:?}");
    }
    assert!(!raw_controls(&log).is_empty(), "the check finds raw controls where they are");

    // handoff and iterate: every hostile line, shown.
    let report = format!("c.d/runs/1-{}.json", &head[..12]);
    for command in ["handoff", "iterate"] {
        let out = run(&w, &[command, "--result", &report]);
        assert_eq!(out.code, 0, "{command}: {}", String::from_utf8_lossy(&out.stdout));
        assert_terminal_safe(command, &out.stdout);
        let text = String::from_utf8(out.stdout).unwrap();
        for line in SHOWN {
            assert!(text.lines().any(|l| l == *line), "{command}: no line {line:?} in\n{text}");
        }
        assert!(text.contains("not ok - hostile"), "{text}");
    }

    // diff --pr: the file's contents, shown. Control: the repository's own diff has them raw.
    let theirs = git(&bare, &["diff", "main", &head]);
    assert!(contains(&theirs, b"+clip:\x1b]52;c;cm0gLXJmIH4=\x07 c1:\xc2\x9b31m"), "{theirs:?}");
    let diff = run(&w, &["diff", "--pr", "acme/widget#1"]);
    assert_eq!(diff.code, 0, "{}", String::from_utf8_lossy(&diff.stderr));
    assert_terminal_safe("diff --pr", &diff.stdout);
    assert_terminal_safe("diff --pr (stderr)", &diff.stderr);
    let text = String::from_utf8(diff.stdout).unwrap();
    assert!(text.lines().any(|l| l == EVIL_CONTENT_SHOWN), "{text}");
    // The name stays as git quotes it; the rest of the patch is untouched.
    assert!(text.contains(r#"diff --git "a/x\033]0;pwned\a.txt" "b/x\033]0;pwned\a.txt""#), "{text}");
    assert!(text.contains("+printf 'title:\\033]0;pwned\\007\\n'\n"), "{text}");

    // diff --pr --stat: the unquoted name, shown. Control: unquoted, it is raw.
    let files = forgeloop::domain::diff::index(std::str::from_utf8(&theirs).unwrap().lines());
    assert!(files.iter().any(|f| f.path == EVIL_NAME), "{files:?}");
    let stat = run(&w, &["diff", "--pr", "acme/widget#1", "--stat"]);
    assert_eq!(stat.code, 0, "{}", String::from_utf8_lossy(&stat.stderr));
    assert_terminal_safe("diff --stat", &stat.stdout);
    let text = String::from_utf8(stat.stdout).unwrap();
    assert_eq!(
        text,
        " hostile.sh            | 9 +++++++++\n x\\x1b]0;pwned\\x07.txt | 1 +\n 2 files changed, 10 insertions(+), 0 deletions(-)\n"
    );

    // The JSON forms keep the exact text, escaped.
    let json = run(&w, &["diff", "--pr", "acme/widget#1", "--json"]);
    assert_eq!(json.code, 0);
    assert_terminal_safe("diff --json", &json.stdout);
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(doc["diff"].as_str().unwrap().contains(&EVIL_CONTENT[..EVIL_CONTENT.len() - 1]), "{doc}");
    assert!(doc["files"].as_array().unwrap().iter().any(|f| f["path"] == EVIL_NAME), "{doc}");

    let test = run(&w, &["test", "--pr", "acme/widget#1", "--commands-json", "hostile.json"]);
    assert_eq!(test.code, 1, "{}", String::from_utf8_lossy(&test.stderr));
    assert_terminal_safe("test", &test.stdout);
    let doc: Value = serde_json::from_slice(&test.stdout).unwrap();
    assert_eq!(doc["status"], "TEST_FAILED");
    assert!(doc["comment_markdown"].as_str().unwrap().contains("\u{9b}2J\u{9d}0;t\u{9c}"), "{doc}");
}

/// `unblock` shows the cycle's last error on a real terminal before asking: a reason holding
/// an OSC 52 sequence and a C1 CSI reaches stderr as escapes.
#[test]
fn unblock_asks_without_passing_controls_to_the_terminal() {
    let sb = Sandbox::new();
    assert_eq!(sb.start("c.json", &[]).code, 0);
    let reason = "model said \u{1b}]52;c;cm0gLXJmIH4=\u{7} and \u{9b}2J";
    let block = sb.run(&["block", "--state", "c.json", "--status", "BLOCKED_MODEL_UNAVAILABLE", "--reason", reason]);
    assert_eq!(block.code, 0, "{}", block.stdout);
    // Control: the state holds the raw reason.
    assert_eq!(sb.read_json(&sb.path("c.json"))["last_error"], reason);

    let err = sb.path("err.bin");
    let command = format!(
        "cd {} && FORGELOOP_HOME={} FORGELOOP_REGISTRY={} XDG_CONFIG_HOME={} {} unblock --state c.json > out.json 2> {}; echo EXIT=$?; sleep 30",
        sh_quote(&sb.dir.path().display().to_string()),
        sh_quote(&sb.home().display().to_string()),
        sh_quote(&sb.path("registry").display().to_string()),
        sh_quote(&sb.path("xdg").display().to_string()),
        sh_quote(env!("CARGO_BIN_EXE_forgeloop")),
        sh_quote(&err.display().to_string()),
    );
    let tmux = Tmux::start(&command, 120, 40);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read(&err).is_ok_and(|b| contains(&b, b"[y/N] ")) {
        assert!(Instant::now() < deadline, "no question on the terminal: {}", tmux.capture());
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.send_keys(&["n", "Enter"]);
    tmux.wait_for("EXIT=2", Duration::from_secs(20));
    let bytes = std::fs::read(&err).unwrap();
    assert_terminal_safe("unblock", &bytes);
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains(r"is BLOCKED_MODEL_UNAVAILABLE: model said \x1b]52;c;cm0gLXJmIH4=\x07 and \x9b2J"), "{text}");
    assert!(text.ends_with("Unblock it? [y/N] "), "{text:?}");
}
