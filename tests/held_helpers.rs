//! What a protected test runs is held like what it sources, compiled Python shadows like its
//! source, and assertion counts come from the test's code (issue 57, Deliver 5 and 7), through
//! the real binary against the GitHub emulator: a PR that breaks the code and neuters a helper
//! the protected test runs (`sh check.sh`, `python3 check.py`) fails with the person's helper
//! restored, or, flagged, waits for a person who is told which helper; a root `unittest.pyc`
//! and a test's own `__pycache__` bytecode are held or flagged like `unittest.py`; and an
//! `echo "FAIL … expected …"` line is no assertion in the report. Each attack's control (the
//! same breakage without the trick) fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use github_emulator::RepoHandle;
use serde_json::{Value, json};
use support::git;
use support::world::{CALC_BUGGY, World};

const CALC_RIGHT: &str = "echo $(($1 + $2))\n";
/// The person's helper: runs calc.sh and checks its answer.
const CHECK_SH: &str = "out=$(sh calc.sh 2 3)\nif [ \"$out\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $out\"; exit 1; fi\n";
/// The same check in Python.
const CHECK_PY: &str = "import subprocess, sys\nout = subprocess.run(['sh', 'calc.sh', '2', '3'], capture_output=True, text=True).stdout.strip()\nif out != '5':\n    print(f'not ok - expected 5, got {out}')\n    sys.exit(1)\nprint('ok - 2+3=5')\n";

/// Opens a PR from `branch` whose files may be binary, pushed with the git CLI.
fn pr_bytes(w: &World, repo: &RepoHandle, branch: &str, files: &[(&str, Vec<u8>)]) -> u64 {
    let work = w.path(&format!("work-{branch}"));
    git(&w.path(""), &["clone", "-q", "-b", "main", repo.path.to_str().unwrap(), work.to_str().unwrap()]);
    git(&work, &["checkout", "-q", "-b", branch]);
    for (path, bytes) in files {
        let file = work.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", branch]);
    git(&work, &["push", "-q", "origin", branch]);
    w.rt.block_on(w.emu.open_pr(repo, branch, "main", branch)).unwrap()
}

/// `forge --pr` of PR `n` in a new cycle `name` with `commands`; the run's JSON.
fn forge(w: &World, name: &str, n: u64, commands: &str) -> Value {
    let file = w.path(&format!("{name}-commands.json"));
    std::fs::write(&file, commands).unwrap();
    let state = format!("{name}.json");
    w.cycle(&state, &[]);
    let run = w.run(&[
        "forge",
        "--pr",
        &format!("acme/widget#{n}"),
        "--state",
        &state,
        "--commands-json",
        file.to_str().unwrap(),
    ]);
    assert!(run.code == 0 || run.code == 1, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn explanation(w: &World, name: &str) -> String {
    let next = w.run(&["next", "--state", &format!("{name}.json")]).json();
    next["explanation"].as_str().unwrap_or_default().to_owned()
}

/// The report's `integrity.against_base` entry for `path`.
fn entry<'a>(out: &'a Value, path: &str) -> &'a Value {
    let files = out["report"]["integrity"]["against_base"].as_array().unwrap();
    files.iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("{path} not in {files:#?}"))
}

/// `python3` compiles `source` the way `py_compile` does (`mode`: a `PycInvalidationMode`
/// name); returns the `.pyc`'s bytes and the interpreter's cache tag (`cpython-311`).
fn compile(w: &World, name: &str, source: &str, mode: &str) -> (Vec<u8>, String) {
    let dir = w.path(&format!("compile-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("source.py"), source).unwrap();
    let script = format!(
        "import py_compile, sys\npy_compile.compile('source.py', cfile='out.pyc', doraise=True, invalidation_mode=py_compile.PycInvalidationMode.{mode})\nprint(sys.implementation.cache_tag)\n"
    );
    let out = std::process::Command::new("python3").current_dir(&dir).args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (std::fs::read(dir.join("out.pyc")).unwrap(), String::from_utf8(out.stdout).unwrap().trim().to_owned())
}

#[test]
fn a_neutered_helper_that_the_protected_test_runs_with_sh_is_held_or_needs_review() {
    let w = World::new();
    w.config("[protect]\npaths = [\"t.sh\"]\n");
    let repo = w.repo_with(
        "acme",
        "widget",
        &[("t.sh", "#!/bin/sh\nsh check.sh\n"), ("check.sh", CHECK_SH), ("calc.sh", CALC_RIGHT)],
    );
    let attack = w.open_pr_with(&repo, "attack", &[("calc.sh", CALC_BUGGY), ("check.sh", "echo 'ok - 2+3=5'\n")]);
    let control = w.open_pr_with(&repo, "control", &[("calc.sh", CALC_BUGGY)]);
    let commands = r#"[["sh", "t.sh"]]"#;

    // Held (the default): the person's check.sh runs, and the broken code fails.
    let held = forge(&w, "held", attack, commands);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{held:#}");
    assert_eq!(held["report"]["tested"]["held"], json!(["check.sh"]), "{held:#}");
    assert!(held["report"]["failure_output"].as_str().unwrap().contains("expected 5, got -1"), "{held:#}");
    let check = entry(&held, "check.sh");
    assert_eq!((check["kind"].as_str(), check["by"].as_str()), (Some("sourced"), Some("t.sh")), "{check:#}");
    assert_eq!(check["via"], "run", "{check:#}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");

    // Flagged: the PR's helper runs and passes, but the pass waits for a person, told which
    // helper and by which test.
    w.config("[protect]\npaths = [\"t.sh\"]\nmode = \"flag\"\n");
    let flagged = forge(&w, "flagged", attack, commands);
    assert_eq!(
        (flagged["report"]["status"].as_str(), flagged["status"].as_str()),
        (Some("TEST_PASSED"), Some("NEEDS_REVIEW")),
        "{flagged:#}"
    );
    assert_eq!(flagged["report"]["integrity"]["protected"], json!(["check.sh"]));
    let guarded = &flagged["report"]["integrity"]["guarded"][0];
    assert_eq!(guarded["path"], "check.sh");
    assert_eq!(guarded["why"], "run by t.sh", "{guarded:#}");
    let explanation = explanation(&w, "flagged");
    assert!(explanation.contains("protected paths: check.sh (run by t.sh)"), "{explanation}");
}

#[test]
fn a_helper_the_protected_test_runs_with_python3_is_held_and_named_unprotected() {
    let w = World::new();
    w.config("[protect]\npaths = [\"t.sh\"]\n");
    let t = "#!/bin/sh\nset -e\npython3 check.py\n";
    let repo = w.repo_with("acme", "widget", &[("t.sh", t), ("check.py", CHECK_PY), ("calc.sh", CALC_RIGHT)]);
    let attack = w.open_pr_with(&repo, "attack", &[("calc.sh", CALC_BUGGY), ("check.py", "print('ok - 2+3=5')\n")]);
    let control = w.open_pr_with(&repo, "control", &[("calc.sh", CALC_BUGGY)]);
    let commands = r#"[["sh", "t.sh"]]"#;

    let held = forge(&w, "held", attack, commands);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{held:#}");
    assert_eq!(held["report"]["tested"]["held"], json!(["check.py"]), "{held:#}");
    assert!(held["report"]["failure_output"].as_str().unwrap().contains("expected 5, got -1"), "{held:#}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");

    // Nothing protected: the PR's helper runs and the run passes, but integrity names the
    // helper among the tests the PR changed.
    w.config("");
    let open = forge(&w, "open", attack, commands);
    assert_eq!(open["report"]["status"], "TEST_PASSED", "{open:#}");
    let check = entry(&open, "check.py");
    assert_eq!((check["kind"].as_str(), check["by"].as_str()), (Some("sourced"), Some("t.sh")), "{check:#}");
    assert_eq!(check["via"], "run", "{check:#}");
    assert_eq!(open["report"]["integrity"]["flag"], "tests_changed", "{open:#}");
}

#[test]
fn bytecode_that_shadows_the_standard_library_or_a_held_test_is_held_or_needs_review() {
    let w = World::new();
    w.config("[protect]\npaths = [\"test_calc.py\"]\n");
    let test = "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    let repo =
        w.repo_with("acme", "widget", &[("test_calc.py", test), ("calc.py", "def add(a, b):\n    return a + b\n")]);
    let buggy = ("calc.py", b"def add(a, b):\n    return a - b\n".to_vec());
    // A `unittest` that runs nothing, compiled at test time: sourceless bytecode at the root is
    // imported ahead of the standard library's.
    let fake = "def main(*args, **kwargs):\n    print('Ran 0 tests')\n\nclass TestCase:\n    pass\n\nif __name__ == '__main__':\n    main()\n";
    let (fake, tag) = compile(&w, "unittest", fake, "TIMESTAMP");
    let attack = pr_bytes(&w, &repo, "attack", &[buggy.clone(), ("unittest.pyc", fake)]);
    // The held test's own compiled form, neutered and marked unchecked: Python reads it
    // instead of the held source.
    let neutered = test.replace("self.assertEqual(add(2, 3), 5)", "pass");
    let (cached, _) = compile(&w, "test_calc", &neutered, "UNCHECKED_HASH");
    let cache = format!("__pycache__/test_calc.{tag}.pyc");
    let cached_attack = pr_bytes(&w, &repo, "cached", &[buggy.clone(), (cache.as_str(), cached)]);
    let control = pr_bytes(&w, &repo, "control", &[buggy]);
    let commands = r#"[["python3", "-m", "unittest", "-v"]]"#;

    // Held (the default): the bytecode the base tip does not have is taken out; the real
    // unittest runs the person's test, and the broken code fails.
    let held = forge(&w, "held", attack, commands);
    assert_eq!(held["report"]["status"], "TEST_FAILED", "{held:#}");
    assert_eq!(held["report"]["tested"]["held"], json!(["unittest.pyc"]), "{held:#}");
    assert!(held["report"]["failure_output"].as_str().unwrap().contains("AssertionError: -1 != 5"), "{held:#}");
    let held_cache = forge(&w, "held-cache", cached_attack, commands);
    assert_eq!(held_cache["report"]["status"], "TEST_FAILED", "{held_cache:#}");
    assert_eq!(held_cache["report"]["tested"]["held"], json!([cache]), "{held_cache:#}");
    assert_eq!(forge(&w, "control", control, commands)["report"]["status"], "TEST_FAILED");

    // Flagged: the shadows run (and run nothing, or not the assertion) and pass, but the pass
    // waits for a person, who is told why.
    w.config("[protect]\npaths = [\"test_calc.py\"]\nmode = \"flag\"\n");
    for (name, n, path) in [("flag", attack, "unittest.pyc"), ("flag-cache", cached_attack, cache.as_str())] {
        let out = forge(&w, name, n, commands);
        assert_eq!(out["report"]["status"], "TEST_PASSED", "the shadow answered the import: {out:#}");
        assert_eq!(out["status"], "NEEDS_REVIEW", "{out:#}");
        assert_eq!(entry(&out, path)["kind"], "shadow");
        let explanation = explanation(&w, name);
        assert!(explanation.contains(&format!("{path} (shadows a module tests import)")), "{explanation}");
    }
}

#[test]
fn an_echo_that_says_expected_is_no_assertion_in_the_report() {
    let w = World::new();
    let before = "#!/bin/sh\nout=$(sh calc.sh 2 3)\nif [ \"$out\" != 5 ]; then\n    echo \"not ok - 2+3\"\n    exit 1\nfi\necho \"ok - 2+3=5\"\n";
    let after = "#!/bin/sh\nout=$(sh calc.sh 2 3)\nif [ \"$out\" != 5 ]; then\n    echo \"FAIL 2+3: expected 5, got $out\"\n    exit 1\nfi\n[ \"$(sh calc.sh 1 1)\" = 2 ] || { echo \"FAIL 1+1: expected 2\"; exit 1; }\necho \"ok - the theme is dark as expected\"\n";
    let repo = w.repo_with("acme", "widget", &[("t.sh", before), ("calc.sh", CALC_RIGHT)]);
    let n = w.open_pr_with(&repo, "reword", &[("t.sh", after)]);
    let out = forge(&w, "c", n, r#"[["sh", "t.sh"]]"#);
    assert_eq!(out["report"]["status"], "TEST_PASSED", "{out:#}");
    let t = entry(&out, "t.sh");
    // Two echo lines removed, three lines added of which one is a check: the words "expected"
    // in echo's strings are not assertions.
    assert_eq!((t["deletions"].as_u64(), t["additions"].as_u64()), (Some(2), Some(3)), "{t:#}");
    assert_eq!((t["removed_assertions"].as_u64(), t["added_assertions"].as_u64()), (Some(0), Some(1)), "{t:#}");
    assert_eq!(out["report"]["integrity"]["flag"], "tests_changed", "{out:#}");
}
