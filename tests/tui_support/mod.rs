//! Fixtures for the control-room tests: real cycles made with the use-case functions in a
//! temporary home, a fixed clock, and a synchronous driver to settle the app.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use forgeloop::cycle::session::mutate;
use forgeloop::cycle::start::{StartRequest, start};
use forgeloop::cycle::{Ctx, FixedClock, actions, reply};
use forgeloop::domain::commands::parse_commands;
use forgeloop::domain::event::EventKind;
use forgeloop::domain::machine;
use forgeloop::domain::pr_ref::parse_pr_ref;
use forgeloop::domain::report::{Report, TestStatus};
use forgeloop::domain::state::{Actor, RunSummary};
use forgeloop::domain::status::Status;
use forgeloop::redact::Redactor;
use forgeloop::store::journal::NewEvent;
use forgeloop::store::layout::CyclePaths;
use forgeloop::tui::app::{App, Event, Roots};
use forgeloop::tui::keymap::Cmd;
use forgeloop::tui::sync::SyncDriver;
use forgeloop::tui::{Theme, views};

pub const BRIEF: &str = "Goal: add dark mode.\nSuccess: preferences persist across reloads.\nScope: existing web app only.\nConstraints: keep accessibility contrast.\nValidation: run the frontend test suite.";
pub const QUESTION: &str = "Implement dark mode in the existing web app, open a PR, and report its URL.";

/// Retries a fixture mutation that lost a lock race: a child process spawned by another
/// test thread (insta runs `cargo metadata`) briefly inherits the lock descriptor between
/// fork and exec, so a lock taken and released here can look held for a moment.
pub fn retry<T>(mut call: impl FnMut() -> forgeloop::error::Result<T>) -> T {
    for _ in 0..100 {
        match call() {
            Err(forgeloop::error::Error::Lock(forgeloop::store::lock::LockError::Busy { .. })) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            other => return other.unwrap(),
        }
    }
    call().unwrap()
}

pub fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z").unwrap().with_timezone(&Utc)
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub ctx: Ctx,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut ctx = Ctx::for_home(root.join("home"));
        ctx.registry = root.join("registry");
        // The sandbox root plays the user's home: paths render as `~/…` whatever the temp dir.
        ctx.redactor = Redactor::builder().home_dir(&root).build();
        ctx.clock = Arc::new(FixedClock(t0()));
        Fixture { dir, ctx }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Makes later use-case calls happen `minutes` before t0.
    pub fn at(&mut self, minutes: i64) -> &mut Self {
        self.ctx.clock = Arc::new(FixedClock(t0() - Duration::minutes(minutes)));
        self
    }

    pub fn paths(&self, name: &str) -> CyclePaths {
        self.ctx.cycle(name).unwrap()
    }

    pub fn state_path(&self, name: &str) -> PathBuf {
        self.paths(name).state
    }

    pub fn start(&self, name: &str, await_confirmation: bool, max: u32) -> PathBuf {
        retry(|| {
            start(
                &self.ctx,
                StartRequest {
                    state: name.into(),
                    request: format!("Request for {name}"),
                    webgpt_question: Some(QUESTION.into()),
                    intent_brief: Some(BRIEF.into()),
                    max_iterations: max,
                    await_confirmation,
                    continue_from: None,
                    new_repository: None,
                    repository: None,
                    driver: None,
                },
            )
        })
        .path
    }

    pub fn continue_from(&self, old: &str, name: &str) {
        start(
            &self.ctx,
            StartRequest {
                state: name.into(),
                request: format!("Request for {name}"),
                webgpt_question: None,
                intent_brief: None,
                max_iterations: 5,
                await_confirmation: false,
                continue_from: Some(old.into()),
                new_repository: None,
                repository: None,
                driver: None,
            },
        )
        .unwrap();
    }

    pub fn sent(&self, name: &str) {
        retry(|| actions::sent(&self.ctx, &self.paths(name)));
    }

    pub fn reply(&self, name: &str, text: &str) {
        retry(|| reply::reply(&self.ctx, &self.paths(name), text, None, None));
    }

    /// Records a completed test run of `acme/widget#7` (as the test use case will) and writes
    /// its log to `runs/<iteration>-<sha12>.log`.
    pub fn run(&self, name: &str, passed: bool, sha: &str, log: &str) -> PathBuf {
        self.run_with(name, passed, sha, log, None)
    }

    /// A run whose report carries `integrity` (design §5.2, as `Integrity` serializes): the
    /// report is also saved beside the log (`runs/<iteration>-<sha12>.json`) as the test use
    /// case saves it, and `run_finished` journals its flag. A pass whose integrity names
    /// protected paths ends `NEEDS_REVIEW`.
    pub fn run_with(
        &self,
        name: &str,
        passed: bool,
        sha: &str,
        log: &str,
        integrity: Option<serde_json::Value>,
    ) -> PathBuf {
        self.run_with_report(name, passed, sha, log, integrity, json!({}))
    }

    /// [`Fixture::run_with`], with `extra` fields merged into the report (evidence, tripwire, …).
    pub fn run_with_report(
        &self,
        name: &str,
        passed: bool,
        sha: &str,
        log: &str,
        integrity: Option<serde_json::Value>,
        extra: serde_json::Value,
    ) -> PathBuf {
        let paths = self.paths(name);
        let mut log_path = PathBuf::new();
        retry(|| {
            mutate(&self.ctx, &paths, Actor::Agent, |state, events, now| {
                let pr = parse_pr_ref("acme/widget#7", &self.ctx.hosts)?;
                let iteration = state.iteration + 1;
                let sha12 = &sha[..12];
                // As the test use case names them: a later run of one iteration and head
                // (after NEEDS_NETWORK) adds `-2`, so no log is overwritten.
                let stem = match paths.runs().join(format!("{iteration}-{sha12}.log")).exists() {
                    true => format!("{iteration}-{sha12}-2"),
                    false => format!("{iteration}-{sha12}"),
                };
                log_path = paths.runs().join(format!("{stem}.log"));
                let status = if passed { TestStatus::Passed } else { TestStatus::Failed };
                let mut report = json!({
                    "status": status.as_str(),
                    "repository": "acme/widget",
                    "pull_request": 7,
                    "head_sha": sha,
                    "commands": [{"argv": ["pytest", "-q"], "exit_code": if passed {0} else {1}, "duration_seconds": 12.5}],
                    "comment_markdown": format!("## Forge Loop PR test: {}\n\nSee the log.", status.as_str()),
                    "failure_output": if passed { serde_json::Value::Null } else { json!("E   AssertionError: dark mode not persisted") },
                    "comment_published": true,
                    "log_path": log_path.display().to_string(),
                    "integrity": integrity.clone(),
                });
                if let (Some(report), Some(extra)) = (report.as_object_mut(), extra.as_object()) {
                    report.extend(extra.clone());
                }
                let report: Report = serde_json::from_value(report).unwrap();
                let report_rel = format!("runs/{stem}.json");
                std::fs::create_dir_all(paths.runs()).unwrap();
                std::fs::write(paths.sidecar().join(&report_rel), serde_json::to_vec(&report).unwrap()).unwrap();
                let flag = report.integrity.as_ref().and_then(|i| i.flag);
                let summary = RunSummary {
                    iteration,
                    pr: pr.shorthand(),
                    head_sha: sha.into(),
                    status,
                    started_at: now.into(),
                    finished_at: now.into(),
                    duration_seconds: 12.5,
                    actor: Actor::Agent,
                    log_path: Some(log_path.display().to_string()),
                    report_path: Some(report_rel),
                    comment_url: Some(format!("https://github.com/acme/widget/pull/7#issuecomment-{iteration}00")),
                    sandbox: Some("isolated, no network".into()),
                    commands_sha256: None,
                    base_sha: None,
                    merge_sha: None,
                };
                state.commands = Some(parse_commands(r#"[["pytest","-q"]]"#).unwrap());
                events.push(NewEvent::new(
                    EventKind::RunStarted,
                    Actor::Agent,
                    json!({"head_sha": sha, "iteration": iteration}),
                ));
                machine::record_run(state, &pr, report, summary, now);
                events.push(NewEvent::new(
                    EventKind::RunFinished,
                    Actor::Agent,
                    json!({"status": status.as_str(), "iteration": iteration, "tests": flag}),
                ));
                Ok(())
            })
        });
        std::fs::create_dir_all(paths.runs()).unwrap();
        std::fs::write(&log_path, log).unwrap();
        log_path
    }

    /// Records a run of `acme/widget#7` that ended NEEDS_NETWORK because its egress proxy
    /// refused `refused` (as the test use case does), with its log.
    pub fn needs_network(&self, name: &str, sha: &str, refused: &[&str]) -> PathBuf {
        let paths = self.paths(name);
        let mut log_path = PathBuf::new();
        retry(|| {
            mutate(&self.ctx, &paths, Actor::Agent, |state, events, now| {
                log_path = paths.runs().join(format!("{}-{}.log", state.iteration + 1, &sha[..12]));
                let allow: Vec<String> = refused.iter().map(|r| (*r).to_owned()).collect();
                let needs = forgeloop::domain::needs_network::NeedsNetwork {
                    pr: "acme/widget#7".into(),
                    head_sha: sha.into(),
                    phase: "setup".into(),
                    config: forgeloop::domain::needs_network::config_lines("acme/widget", &allow),
                    allow: allow.clone(),
                    sign: None,
                    refused_by_policy: Vec::new(),
                    lockfiles: vec!["requirements.txt".into()],
                    allowed_at: None,
                    decided_by: None,
                    at: now.into(),
                };
                machine::needs_network(state, needs, now);
                let log = format!("runs/{}", log_path.file_name().unwrap().to_string_lossy());
                events.push(NewEvent::new(
                    EventKind::RunNeedsNetwork,
                    Actor::System,
                    json!({"allow": allow, "log": log}),
                ));
                Ok(())
            })
        });
        std::fs::create_dir_all(paths.runs()).unwrap();
        std::fs::write(&log_path, "# setup\n$ pip install -r requirements.txt\nERROR: 403 Forbidden\n").unwrap();
        log_path
    }

    /// Records a run that could not complete (as the test use case does when GitHub or the
    /// fetch fails): no iteration, a `run_failed` event.
    pub fn infra_failure(&self, name: &str, error: &str) {
        retry(|| {
            mutate(&self.ctx, &self.paths(name), Actor::Agent, |state, events, now| {
                machine::record_infra_failure(state, error, now);
                events.push(NewEvent::new(
                    EventKind::RunFailed,
                    Actor::System,
                    json!({"pr": "acme/widget#7", "error": error, "infra_failures": state.infra_failures}),
                ));
                Ok(())
            })
        });
    }

    pub fn block(&self, name: &str, status: Status, reason: &str) {
        retry(|| actions::block(&self.ctx, &self.paths(name), status, reason, Actor::Agent));
    }

    pub fn reach_cap(&self, name: &str) {
        retry(|| {
            mutate(&self.ctx, &self.paths(name), Actor::System, |state, events, now| {
                let pr = parse_pr_ref("acme/widget#7", &self.ctx.hosts)?;
                machine::reach_cap(state, &pr, now);
                events.push(NewEvent::new(
                    EventKind::Blocked,
                    Actor::System,
                    json!({"status": "BLOCKED_MAX_ITERATIONS", "reason": "cap"}),
                ));
                Ok(())
            })
        });
    }

    pub fn abort(&self, name: &str) {
        retry(|| actions::abort(&self.ctx, &self.paths(name), "the user changed their mind", Actor::Agent));
    }

    /// Writes a cycle's diff where `cycle::diff::of_cycle` caches it, with the meta beside it
    /// (masked spots, size), as if it had been made: the whole PR at `sha`, or since `old`.
    pub fn diff_cache(&self, name: &str, old: Option<&str>, sha: &str, text: &str) -> PathBuf {
        let paths = self.paths(name);
        let path = match old {
            Some(old) => forgeloop::cycle::diff::since_last_cache(&paths, old, sha),
            None => forgeloop::cycle::diff::whole_pr_cache(&paths, sha, None),
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let size = forgeloop::domain::diff::DiffSize::of(&forgeloop::domain::diff::index(text.lines()));
        let meta = forgeloop::cycle::diff::DiffMeta { masked: 0, size };
        std::fs::write(path.with_extension("json"), serde_json::to_string(&meta).unwrap()).unwrap();
        path
    }

    /// A review cycle (docs/review.md) in `status` holding `review` (as `Review` serializes),
    /// written as the review use cases leave one: no PR of its own, nothing in the outbox.
    pub fn review(&self, name: &str, status: Status, review: serde_json::Value) -> PathBuf {
        let path = self.start(name, false, 5);
        let review: forgeloop::domain::review::Review = serde_json::from_value(review).unwrap();
        retry(|| {
            mutate(&self.ctx, &self.paths(name), Actor::Agent, |state, _events, _now| {
                state.review = Some(review.clone());
                state.status = status;
                state.outbox = None;
                Ok(())
            })
        });
        path
    }

    /// A file in the cycles directory that is not a valid state.
    pub fn garbage(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.ctx.home.cycles_dir().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// A registry record (the registry module writes these; here they are plain files).
    pub fn record(&self, owner: &str, repo: &str, body: &str) {
        let dir = self.ctx.registry.join(owner);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{repo}.json")), body).unwrap();
    }

    pub fn roots(&self) -> Roots {
        Roots {
            cycles_dir: self.ctx.home.cycles_dir(),
            task_spaces_dir: self.ctx.home.task_spaces_dir(),
            registry: self.ctx.registry.clone(),
            extra_dirs: Vec::new(),
            connector_dir: self.ctx.home.connector_dir(),
        }
    }

    /// An app started on this home and settled (every load done).
    pub fn app(&self, theme: &str) -> (App, SyncDriver) {
        let theme = Theme::builtin(theme).unwrap();
        let mut app = App::new(self.roots(), theme, false, t0(), self.ctx.redactor.clone());
        let mut driver = SyncDriver::new(self.ctx.clone(), Vec::new());
        driver.start(&mut app);
        (app, driver)
    }
}

/// A long realistic failing log with ANSI colour, a secret-free body and a runner footer.
pub fn failing_log() -> String {
    let mut log = String::from("$ pytest -q\n");
    for i in 0..40 {
        log.push_str(&format!("tests/test_theme.py::test_case_{i:02} \u{1b}[32mPASSED\u{1b}[0m\n"));
    }
    log.push_str("tests/test_theme.py::test_dark_mode_persists \u{1b}[31mFAILED\u{1b}[0m\n");
    log.push_str("    def test_dark_mode_persists(page):\n>       assert page.theme == \"dark\"\n");
    log.push_str("E   AssertionError: dark mode not persisted after reload\n");
    log.push_str("progress 10%\r50%\r100%\n");
    log.push_str("=========== 1 failed, 40 passed in 12.50s ===========\n[exit 1 after 12.5s]\n");
    log
}

/// A PR's diff as GitHub sends it: a modified file with two hunks, an added file, a removed
/// one, a rename, a binary file, and a line that tries to drive the terminal.
pub fn sample_diff() -> String {
    "diff --git a/app/theme.py b/app/theme.py
index 1111111..2222222 100644
--- a/app/theme.py
+++ b/app/theme.py
@@ -1,5 +1,6 @@
 import json
-DEFAULT = \"light\"
+DEFAULT = \"dark\"
+SUPPORTED = (\"light\", \"dark\")
 
 def load(prefs):
     return prefs.get(\"theme\", DEFAULT)
@@ -20,3 +21,5 @@ def save(prefs, theme):
     prefs[\"theme\"] = theme
-    write(prefs)
+    if theme not in SUPPORTED:
+        raise ValueError(theme)
+    write_atomic(prefs)
     return prefs
diff --git a/tests/test_theme.py b/tests/test_theme.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/test_theme.py
@@ -0,0 +1,4 @@
+def test_dark_mode_persists(page):
+    page.set_theme(\"dark\")
+    page.reload()
+    assert page.theme == \"dark\"
diff --git a/app/legacy_colors.py b/app/legacy_colors.py
deleted file mode 100644
index 4444444..0000000
--- a/app/legacy_colors.py
+++ /dev/null
@@ -1,2 +0,0 @@
-COLORS = {}
-\u{1b}]0;pwned\u{7}\u{1b}[2Jgone
diff --git a/docs/themes.md b/docs/appearance.md
similarity index 90%
rename from docs/themes.md
rename to docs/appearance.md
index 5555555..6666666 100644
--- a/docs/themes.md
+++ b/docs/appearance.md
@@ -1,3 +1,3 @@
 # Appearance
-Light only.
+Light and dark.
 See the settings page.
diff --git a/static/moon.png b/static/moon.png
new file mode 100644
index 0000000..7777777
Binary files /dev/null and b/static/moon.png differ
"
    .to_owned()
}

pub fn key(app: &mut App, driver: &mut SyncDriver, code: crossterm::event::KeyCode) {
    let event = crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
    driver.apply(app, Event::Key(event));
}

pub fn chars(app: &mut App, driver: &mut SyncDriver, text: &str) {
    for c in text.chars() {
        key(app, driver, crossterm::event::KeyCode::Char(c));
    }
}

pub fn cmd(app: &mut App, driver: &mut SyncDriver, cmd: Cmd) {
    driver.apply(app, Event::Cmd(cmd));
}

pub fn draw(app: &App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| views::render(app, f)).unwrap();
    terminal
}

pub fn screen(app: &App, width: u16, height: u16) -> String {
    let terminal = draw(app, width, height);
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut skip = 0;
        for x in 0..buffer.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buffer[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(symbol).saturating_sub(1);
            out.push_str(symbol);
        }
        out.push('\n');
    }
    out
}

/// The review's base and head commits (`review_json`).
pub const REVIEW_BASE: &str = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";
pub const REVIEW_HEAD: &str = "1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b";

/// A review of acme/widget#7 read from a packet (the connector was not attached), the packet
/// approved, one reply recorded: five findings, one of each severity, in every state a finding
/// can be in (untriaged, FIX and fixed, DEFER, DISMISS with a note, a QUESTION asked), and one
/// part of the reply that was not a finding. `packet` is the packet file's path.
pub fn review_json(packet: &str) -> serde_json::Value {
    let by = |decision: &str, note: Option<&str>, asked: bool| json!({"decision": decision, "note": note, "by": "human", "at": "2026-11-29T11:40:00Z", "asked": asked});
    json!({
        "target": {"repository": "acme/widget", "base": REVIEW_BASE, "head": REVIEW_HEAD, "pr": "acme/widget#7"},
        "question": "Is the theme written atomically?",
        "route": "LOCAL_BUNDLE",
        "attestation": {
            "seen": {"surface": "chatgpt-web", "model": "GPT-5 Thinking", "mode": "thinking",
                     "connector_attached": false, "conversation_url": "https://chatgpt.com/c/review-42"},
            "repository": "acme/widget", "commit": REVIEW_HEAD, "questions": [],
            "recorded_at": "2026-11-29T11:00:00Z", "expires_at": "2026-11-29T12:00:00Z",
            "verdict": {"verdict": "invalid", "at": "2026-11-29T11:01:00Z", "why": "the GitHub connector is not attached"}
        },
        "packet": {
            "path": packet, "manifest": format!("{packet}.manifest.json"), "sha256": "ab".repeat(32),
            "files": 3, "bytes": 5120, "tokens": 1280, "risks": 1, "needs_approval": true,
            "approved": {"by": "human", "at": "2026-11-29T11:10:00Z"}, "prepared_at": "2026-11-29T11:05:00Z"
        },
        "findings": [
            {"number": 1, "severity": "critical", "path": "app/theme.py", "line": 21,
             "text": "save() writes the preferences in place: a crash mid-write loses every setting."},
            {"number": 2, "severity": "high", "path": "app/theme.py", "line": 3,
             "text": "SUPPORTED is a tuple but is checked with `in` on user input without normalising case.",
             "triage": by("FIX", None, false),
             "fixed": {"cycle": "fix-theme.json", "pr": "acme/widget#8", "head_sha": "2c".repeat(20), "at": "2026-11-29T11:50:00Z"}},
            {"number": 3, "severity": "medium", "path": "tests/test_theme.py",
             "text": "The test reloads the page but never checks the stored file.",
             "triage": by("DEFER", None, false)},
            {"number": 4, "severity": "low", "path": "docs/appearance.md", "line": 2,
             "text": "The docs say 'Light and dark' but the setting is called 'theme'.",
             "triage": by("DISMISS", Some("the wording is the product's"), false)},
            {"number": 5, "severity": "info",
             "text": "Consider a system theme that follows the OS.",
             "triage": by("QUESTION", Some("Which OS setting would it follow?"), true)}
        ],
        "unparsed": [{"text": "Overall this is a careful change.", "why": "no severity"}],
        "replies": 1
    })
}

/// Selects the cycle `name` in the list (from the top, one row at a time).
pub fn select(app: &mut App, d: &mut SyncDriver, name: &str) {
    key(app, d, crossterm::event::KeyCode::Char('g'));
    for _ in 0..app.list.visible.len() {
        if selected_name(app) == name {
            return;
        }
        key(app, d, crossterm::event::KeyCode::Char('j'));
    }
    panic!("no cycle {name}");
}

pub fn selected_name(app: &App) -> String {
    app.selected_entry().map(|e| e.name()).unwrap_or_default()
}

pub fn read_state(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Heads of the "Trust, then verify" fixtures (design §5.2): a first run, then a second head
/// that rewrote its test script.
pub const TRUST_SHA_1: &str = "1111111111119999999999999999999999999999";
pub const TRUST_SHA_2: &str = "2222222222228888888888888888888888888888";

/// The check the second head's test script lost.
pub const REMOVED_CHECK: &str = "if [ \"$out\" = 5 ]; then echo ok; else exit 1; fi";

/// The whole PR at the second head: calc.sh (code), test.sh rewritten to pass (the commands'
/// script, named by the run's integrity), a new test, a README line.
pub fn rewrite_diff() -> String {
    format!(
        "diff --git a/calc.sh b/calc.sh
index 3333333..4444444 100644
--- a/calc.sh
+++ b/calc.sh
@@ -1 +1 @@
-echo $(($1 - $2))
+echo $(($1 + $2))
diff --git a/test.sh b/test.sh
index 1111111..2222222 100644
--- a/test.sh
+++ b/test.sh
@@ -1,3 +1,2 @@
 out=$(sh calc.sh 2 3)
-{REMOVED_CHECK}
+echo \"ok toggle persists across reloads\"; exit 0
diff --git a/tests/test_calc.py b/tests/test_calc.py
new file mode 100644
index 0000000..5555555
--- /dev/null
+++ b/tests/test_calc.py
@@ -0,0 +1,2 @@
+def test_add():
+    assert add(2, 3) == 5
diff --git a/README.md b/README.md
index 6666666..7777777 100644
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-Calc.
+Calc: adds two numbers.
"
    )
}

/// The change since the first head: only test.sh.
pub fn rewrite_since_last_diff() -> String {
    format!(
        "diff --git a/test.sh b/test.sh
index 1111111..2222222 100644
--- a/test.sh
+++ b/test.sh
@@ -1,3 +1,2 @@
 out=$(sh calc.sh 2 3)
-{REMOVED_CHECK}
+echo \"ok toggle persists across reloads\"; exit 0
"
    )
}

/// The second run's `integrity` (as `Integrity` serializes): test.sh lost its check, a test
/// was added; `protected` are the person's protected paths it changed.
pub fn rewrite_integrity(protected: &[&str]) -> serde_json::Value {
    let test_sh = json!({
        "path": "test.sh", "kind": "run", "status": "modified", "additions": 1, "deletions": 1,
        "removed_assertions": 1, "added_assertions": 0, "removed_lines": [REMOVED_CHECK],
    });
    json!({
        "flag": "assertions_removed",
        "against_base": [
            test_sh,
            {"path": "tests/test_calc.py", "kind": "test", "status": "added", "additions": 2, "deletions": 0,
             "removed_assertions": 0, "added_assertions": 1},
        ],
        "since_last": {"iteration": 1, "head_sha": TRUST_SHA_1, "files": [test_sh]},
        "protected": protected,
        "protect_patterns": protected,
    })
}

/// `guarded`: its second run passed but rewrote test.sh, which the person protects
/// (`NEEDS_REVIEW`); `rewrote`: the same without protection (`READY_TO_MERGE`, assertions
/// removed); `added`: a pass that only added a test; `code-only`: a pass that left its tests
/// alone (its diff has no test file). Every diff is cached where the Diff tab reads it.
/// What a verdict rests on (issue 57): a pass held because tests that ran at the base did not
/// run and the change special-cases a test's input, and a held run disputed by a corrected test.
pub fn proof_home() -> Fixture {
    let mut fx = Fixture::new();
    fx.at(20).start("held-pass", false, 5);
    fx.sent("held-pass");
    fx.reply("held-pass", "Opened it.\nPR_URL: https://github.com/acme/widget/pull/7");
    let integrity = json!({"against_base": [], "gaming": [{"category": "special_cased_input", "path": "mathx.py",
        "line": 4, "words": "mathx.py:4 returns 3000 when n == 1000, a value tests/test_mathx.py expects: special-cased test input?",
        "excerpt": "if n == 1000: return 3000"}]});
    let evidence = json!({"evidence": {"stands": false,
        "summary": "1 test that ran at the base did not run: tests/test_mathx.py::test_big (not run)",
        "findings": ["did_not_run"], "baseline": true, "commands": [], "named": [], "named_more": 0},
        "baseline": {"commit": TRUST_SHA_1, "source": "warming", "status": "TEST_FAILED"},
        "tripwire": {"tripwire": "faithful"}});
    fx.run_with_report("held-pass", true, TRUST_SHA_2, "$ pytest -q\n2 passed\n", Some(integrity), evidence);
    fx.at(10).start("disputed", false, 5);
    fx.sent("disputed");
    fx.reply("disputed", "Opened it.\nPR_URL: https://github.com/acme/widget/pull/7");
    let disputed = json!({"disputed": [{"path": "tests/test_area.py", "base_blob": "1".repeat(40),
        "pr_blob": "2".repeat(40), "failing": ["tests/test_area.py::AreaTest::test_three"],
        "yours": "self.assertEqual(area(3), 1090)", "theirs": "self.assertEqual(area(3), 1080)"}]});
    fx.run_with_report("disputed", false, TRUST_SHA_2, &failing_log(), Some(json!({"against_base": []})), disputed);
    fx
}

pub fn trust_home() -> Fixture {
    let mut fx = Fixture::new();
    let first = json!({"against_base": []});
    for (minutes, name, protected) in [(40, "guarded", &["test.sh"][..]), (30, "rewrote", &[][..])] {
        fx.at(minutes).start(name, false, 5);
        fx.sent(name);
        fx.reply(name, "Opened it.\nPR_URL: https://github.com/acme/widget/pull/7");
        fx.run_with(name, false, TRUST_SHA_1, &failing_log(), Some(first.clone()));
        fx.run_with(
            name,
            true,
            TRUST_SHA_2,
            "$ sh test.sh\nok\n[exit 0 after 0.1s]\n",
            Some(rewrite_integrity(protected)),
        );
        fx.diff_cache(name, None, TRUST_SHA_2, &rewrite_diff());
        fx.diff_cache(name, Some(TRUST_SHA_1), TRUST_SHA_2, &rewrite_since_last_diff());
    }
    fx.at(20).start("added", false, 5);
    let added = json!({
        "flag": "tests_added",
        "against_base": [{"path": "tests/test_calc.py", "kind": "test", "status": "added", "additions": 2,
                          "deletions": 0, "removed_assertions": 0, "added_assertions": 1}],
    });
    fx.run_with("added", true, TRUST_SHA_2, "$ sh test.sh\nok\n", Some(added));
    fx.at(10).start("code-only", false, 5);
    fx.run_with("code-only", true, TRUST_SHA_2, "$ sh test.sh\nok\n", Some(json!({"against_base": []})));
    let code = rewrite_diff().split("diff --git a/test.sh").next().unwrap_or_default().to_owned();
    fx.diff_cache("code-only", None, TRUST_SHA_2, &code);
    fx
}
