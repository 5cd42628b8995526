//! Warm caches scoped like CI caches (design §5.6): a read-only base layer per repository, warmed
//! from the base branch, and a writable layer per cycle. What one run of a cycle leaves is there
//! for the cycle's next run, at the same paths; never for another PR's, another repository's,
//! or a one-shot's; what configures a tool never carries over, even within a cycle; nothing
//! forgeloop walks in a layer follows a link; `"cache": false` and `--fresh` run cold; `gc` and
//! `doctor` show and trim both kinds. Through the real binary against the GitHub emulator, in
//! both tiers, as root and as an ordinary user.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[macro_use]
mod sandbox_support;
mod support;

use std::path::{Path, PathBuf};

use sandbox_support::{Attack, Lab, Tier, Who};
use serde_json::Value;

/// A test that records where it ran and what the previous run of the same cache left.
const PROBE: &str = "echo \"seen: $(cat \"$XDG_CACHE_HOME/marker\" 2>/dev/null || echo nothing)\"\n\
                     echo \"$(cat NOTES 2>/dev/null || echo base) $PWD $CARGO_TARGET_DIR\" > \"$XDG_CACHE_HOME/marker\"\n\
                     mkdir -p \"$CARGO_TARGET_DIR\" && echo built > \"$CARGO_TARGET_DIR/artifact\"\n";

/// The writable layer of PR `n`'s cycle as forgeloop keeps it: an overlay's upper directory in
/// the first tier, the copy in the second.
fn cycle_layer(lab: &Lab, n: u64) -> PathBuf {
    let dir = lab.forgeloop_home().join(format!("caches/acme/widget/pr-{n}"));
    if lab.tier == Tier::Namespaces { dir.join("upper") } else { dir.join("layer") }
}

/// A cycle for PR `n` at `shared/<state>.json` (made on first use), then `forge --pr` with
/// `commands`: the output, and the run's log.
fn forge(lab: &Lab, state: &str, n: u64, commands: &str) -> Attack {
    let shared = lab.w.path("shared");
    if !shared.exists() {
        std::fs::create_dir_all(&shared).unwrap();
        lab.give_back(&shared);
    }
    let state_file = format!("shared/{state}.json");
    if !lab.w.path(&state_file).exists() {
        lab.start_cycle(&state_file);
    }
    let file = lab.w.path(&format!("shared/commands-{state}.json"));
    std::fs::write(&file, commands).unwrap();
    lab.give_back(&file);
    let pr = format!("acme/widget#{n}");
    let run = lab.run(&["forge", "--pr", &pr, "--state", &state_file, "--commands-json", file.to_str().unwrap()]);
    assert!(run.code == 0 || run.code == 1, "forge --pr failed to run:\n{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    let report = out["report"].clone();
    assert_eq!(report["environment"]["sandbox"]["kind"], lab.tier.kind(), "{}", run.stdout);
    let (iteration, head) = (out["iteration"].as_u64().unwrap(), report["head_sha"].as_str().unwrap().to_owned());
    let log = lab.w.path(&format!("shared/{state}.d/runs/{iteration}-{}.log", &head[..12]));
    let log = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}\n{}", log.display(), run.stdout));
    Attack { run, report, log }
}

/// A new commit on PR `n`'s branch (the lab names PR `n`'s branch `attack-n`).
fn push(lab: &Lab, n: u64, files: &[(&str, &str)]) {
    lab.w.commit(&lab.repo, &format!("attack-{n}"), files, "another iteration");
}

fn cache_of(report: &Value) -> &Value {
    &report["environment"]["sandbox"]
}

every_way!(a_cycles_runs_build_on_the_base_layer_and_their_own_and_a_one_shot_leaves_nothing, |lab: Lab| {
    // The base branch has the probe too: warming the base layer runs it there first.
    let main = lab.w.commit(&lab.repo, "main", &[("probe.sh", PROBE)], "probe");
    let n = lab.hostile_pr(&[("NOTES", "a change\n")], &[]);
    // The probe fails, so the cycle goes on to a second iteration.
    let commands = r#"[["sh", "probe.sh"], ["sh", "-c", "git rev-parse HEAD^2 && git status --porcelain && echo git-ok"], ["false"]]"#;
    let first = forge(&lab, "c", n, commands);
    // git finds its working tree wherever the sandbox shows the checkout.
    assert!(first.log.contains("git-ok"), "{}", first.log);
    let base_marker = lab.forgeloop_home().join("caches/acme/widget/base/layer/xdg/marker");
    let from_base = std::fs::read_to_string(&base_marker).expect("warming left nothing in the base layer");
    // The first tier shows every run of the repository its checkout at one path (the base
    // layer's warming included); the second shows each layer's run directory.
    let checkout_of = |layer: &str| {
        if lab.tier == Tier::Namespaces {
            "/acme/widget/checkout ".to_owned()
        } else {
            format!("/acme/widget/{layer}/")
        }
    };
    assert!(from_base.starts_with("base ") && from_base.contains(&checkout_of("base")), "{from_base}");
    // The PR's first run starts from what the base branch built (the log redacts the paths)...
    assert!(first.log.contains("seen: base "), "{}", first.log);
    // ...and writes into its own layer, never the base layer.
    let marker = cycle_layer(&lab, n).join("xdg/marker");
    let left = std::fs::read_to_string(&marker).expect("the first run wrote nothing into its cycle layer");
    assert!(left.starts_with("a change ") && left.contains(&checkout_of(&format!("pr-{n}"))), "{left}");
    assert_eq!(std::fs::read_to_string(&base_marker).unwrap(), from_base, "a PR's run wrote the base layer");
    let sandbox = cache_of(&first.report);
    assert_eq!(sandbox["cache"], format!("acme/widget/pr-{n}"), "{sandbox:#}");
    let layers = &sandbox["cache_layers"];
    let stack = if lab.tier == Tier::Namespaces { "overlay" } else { "copy" };
    assert_eq!((layers["layer"].as_str(), layers["stack"].as_str()), (Some("cycle"), Some(stack)), "{layers:#}");
    assert_eq!(layers["layer_runs"], 0, "{layers:#}");
    // The base layer was warmed first, at main's tip, by the base branch's own run.
    assert_eq!(layers["base"]["commit"], main, "{layers:#}");
    assert_eq!((layers["base"]["warmed_now"].as_bool(), layers["base"]["behind"].as_u64()), (Some(true), Some(0)));
    assert!(layers["warm_error"].is_null(), "{layers:#}");
    let record: Value =
        serde_json::from_slice(&std::fs::read(lab.forgeloop_home().join("caches/acme/widget/base/base.json")).unwrap())
            .unwrap();
    assert_eq!(record["commit"], main, "{record:#}");

    push(&lab, n, &[("NOTES", "iteration 2\n")]);
    let second = forge(&lab, "c", n, commands);
    assert!(second.log.contains("seen: a change <checkout>"), "the cycle's layer was not kept:\n{}", second.log);
    // Same checkout path and target directory from one run to the next: builds stay incremental.
    let now = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(now.strip_prefix("iteration 2 "), left.strip_prefix("a change "), "{now} / {left}");
    let layers = &cache_of(&second.report)["cache_layers"];
    assert_eq!(layers["layer_runs"], 1, "{layers:#}");
    assert_eq!((layers["base"]["warmed_now"].as_bool(), layers["base"]["behind"].as_u64()), (None, Some(0)));

    // A one-shot test of the same PR gets a throw-away layer on the base layer: nothing of the
    // cycle's, and nothing left behind.
    let once = lab.test(n, commands);
    assert!(once.log.contains("seen: base "), "{}", once.log);
    let sandbox = cache_of(&once.report);
    assert!(sandbox["cache"].as_str().unwrap().starts_with("acme/widget/tmp-"), "{sandbox:#}");
    assert_eq!(sandbox["cache_layers"]["layer"], "throwaway");
    let repo_dir = lab.forgeloop_home().join("caches/acme/widget");
    let leftovers: Vec<String> = std::fs::read_dir(&repo_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "a throw-away layer outlived its run: {leftovers:?}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), now, "a one-shot wrote the cycle's layer");

    // Cold on request: the commands file, or --fresh.
    let cold = lab.test(n, r#"{"commands": [["sh", "-c", "echo cache=${XDG_CACHE_HOME:-none}"]], "cache": false}"#);
    assert!(!cold.log.contains("/caches/"), "{}", cold.log);
    assert!(cache_of(&cold.report)["cache"].is_null(), "{}", cold.run.stdout);
});

const CARGO_TOML: &str = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n";
const TEST: &str = "#[test]\nfn adds() { assert_eq!(calc::add(2, 3), 5); }\n";

/// A build script that poisons the cache for whoever builds next: a cargo `runner` that runs no
/// test and passes, writing down the environment of the run it hijacks; an installed program;
/// and links into a directory outside, where forgeloop (root, perhaps) walks.
fn poisoning_build_rs(outside: &Path) -> String {
    let outside = outside.display();
    format!(
        r####"use std::os::unix::fs::symlink;
fn main() {{
    let home = std::env::var("CARGO_HOME").unwrap();
    let xdg = std::env::var("XDG_CACHE_HOME").unwrap();
    let capture = format!("{{home}}/bin/capture");
    std::fs::create_dir_all(format!("{{home}}/bin")).unwrap();
    std::fs::write(&capture, format!("#!/bin/sh\nenv > {{xdg}}/captured\nexit 0\n")).unwrap();
    std::process::Command::new("chmod").args(["755", &capture]).status().unwrap();
    std::fs::write(format!("{{home}}/config.toml"), format!("[target.'cfg(all())']\nrunner = \"{{capture}}\"\n")).unwrap();
    let _ = std::fs::remove_dir_all(format!("{{home}}/registry"));
    let _ = symlink("{outside}", format!("{{home}}/registry"));
    let _ = std::fs::remove_dir_all(format!("{{xdg}}/pre-commit"));
    let _ = symlink("{outside}", format!("{{xdg}}/pre-commit"));
    let _ = std::fs::remove_dir_all(format!("{{xdg}}/../m2"));
    let _ = symlink("{outside}", format!("{{xdg}}/../m2"));
}}
"####
    )
}

/// The commands both PRs' cycles use: what the cache holds, then the tests (with the person's
/// value passed through, and the lab's toolchain for the ordinary user).
fn cargo_commands(lab: &mut Lab) -> String {
    let mut grant = String::new();
    if lab.user.is_some() {
        let bin = sandbox_support::link_toolchain(lab);
        lab.set_env("PATH", &format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()));
        grant = format!(r#", "read_paths": ["{}"]"#, bin.parent().unwrap().display());
    }
    format!(
        r#"{{"commands": [["sh", "-c", "ls -a \"$CARGO_HOME\" \"$XDG_CACHE_HOME\""], ["cargo", "test", "--offline", "-q"]], "env_passthrough": ["PERSON_VALUE"]{grant}}}"#
    )
}

/// Every file below `dir` whose bytes hold `needle` (links are not followed).
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = path.symlink_metadata() else { continue };
        if meta.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if meta.is_file()
            && std::fs::read(&path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        {
            found.push(path);
        }
    }
    found
}

every_way!(a_poisoned_cycle_layer_never_reaches_another_prs_verdict_its_environment_or_root, |lab: Lab| {
    let mut lab = lab;
    let value = format!("person{}", support::world::fresh_secret("").to_lowercase());
    lab.set_env("PERSON_VALUE", &value);
    let commands = cargo_commands(&mut lab);
    lab.w.commit(&lab.repo, "main", &[("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB), ("tests/add.rs", TEST)], "calc");
    // A directory outside every layer that forgeloop could reach: links point there.
    let outside = lab.w.path("outside");
    std::fs::create_dir_all(outside.join("kept")).unwrap();
    std::fs::write(outside.join("kept/file"), "untouched\n").unwrap();
    let before = support::snapshot(&outside);

    // PR 1 fails (so its cycle goes on) and poisons its own layer on the way.
    let poison = lab.hostile_pr(
        &[("build.rs", &poisoning_build_rs(&outside)), ("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a * b }\n")],
        &[],
    );
    let first = forge(&lab, "poison", poison, &commands);
    assert_eq!(first.report["status"], "TEST_FAILED", "{}", first.log);
    // What configures cargo or is a program is gone from its layer before anyone runs again.
    let layer = cycle_layer(&lab, poison);
    for gone in ["cargo-home/config.toml", "cargo-home/bin"] {
        assert!(layer.join(gone).symlink_metadata().is_err(), "{gone} outlived the run");
    }

    // PR 2: an honest, broken change in a cycle of its own keeps its true verdict.
    let broken = lab.hostile_pr(&[("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a - b }\n")], &[]);
    let second = forge(&lab, "honest", broken, &commands);
    assert_eq!(second.report["status"], "TEST_FAILED", "the poisoned cache flipped PR 2's verdict:\n{}", second.log);
    assert!(!second.log.contains("config.toml") && !second.log.contains("captured"), "{}", second.log);
    // Its environment stayed its own: the value passed through is nowhere in the caches.
    let caches = lab.forgeloop_home().join("caches");
    assert_eq!(files_holding(&caches, &value), Vec::<PathBuf>::new(), "PR 2's environment was captured");

    // PR 1's own next run does not get its configuration back either, and the links it planted
    // were replaced, never followed.
    push(&lab, poison, &[("NOTES", "iteration 2\n")]);
    let again = forge(&lab, "poison", poison, &commands);
    assert_eq!(again.report["status"], "TEST_FAILED", "its own runner hid its failure:\n{}", again.log);
    assert!(!again.log.contains("config.toml") && !again.log.contains("captured"), "{}", again.log);
    assert_eq!(support::snapshot(&outside), before, "something was made or changed through a planted link");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "{:?}", support::snapshot(&outside));

    // The same broken change, cold, fails the same way: the cache changed nothing.
    let fresh = lab.run(&[
        "test",
        "--pr",
        &format!("acme/widget#{broken}"),
        "--commands-json",
        lab.w.path("shared/commands-honest.json").to_str().unwrap(),
        "--fresh",
    ]);
    assert_eq!(fresh.json()["status"], "TEST_FAILED", "{}", fresh.stdout);
});

/// As root, a crate the person downloads between two runs is there, readable by the account the
/// tests run as, for the second run (an offline build resolves it).
#[test]
fn as_root_a_crate_downloaded_between_two_runs_resolves_in_the_second() {
    if !sandbox_support::root_or_skip() {
        return;
    }
    let mut lab = Lab::new(Tier::Namespaces, Who::Root);
    let bin = sandbox_support::link_toolchain(&lab);
    lab.set_env("PATH", &format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()));
    let grant = bin.parent().unwrap().display().to_string();
    // The person's cargo home: the lab's, with root's index and crates copied in on demand.
    let real = PathBuf::from(
        std::env::var("CARGO_HOME")
            .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_else(|_| "/root".into()))),
    );
    let person = lab.w.path("person-cargo");
    lab.set_env("CARGO_HOME", person.to_str().unwrap());
    let index = std::fs::read_dir(real.join("registry/index"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .find(|n| n.to_string_lossy().starts_with("index.crates.io-"))
        .expect("root's cargo home has no crates.io index");
    let crate_file = std::fs::read_dir(real.join("registry/cache").join(&index))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("itoa-1.") && n.ends_with(".crate"))
        .expect("root's cargo home has no itoa crate");
    let version = crate_file.trim_start_matches("itoa-").trim_end_matches(".crate").to_owned();
    let copy = |rel: &Path| {
        let to = person.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(real.join(rel), &to).unwrap();
    };
    let index_dir = Path::new("registry/index").join(&index);
    copy(&index_dir.join("config.json"));
    // Root's own files, in root's own private directories, as a person's cargo home is.
    std::fs::create_dir_all(person.join("registry/cache").join(&index)).unwrap();

    let cargo_toml = format!("{CARGO_TOML}\n[dependencies]\nitoa = \"={version}\"\n");
    let lib = "pub fn add(a: i32, b: i32) -> i32 { a + b }\npub fn show(n: i32) -> String { itoa::Buffer::new().format(n).to_owned() }\n";
    // The first iteration is broken, so the cycle goes on to the second.
    let broken = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n";
    lab.w.commit(&lab.repo, "main", &[("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB), ("tests/add.rs", TEST)], "calc");
    let n = lab.hostile_pr(&[("src/lib.rs", broken)], &[]);
    let commands = format!(r#"{{"commands": [["cargo", "test", "--offline", "-q"]], "read_paths": ["{grant}"]}}"#);
    let first = forge(&lab, "c", n, &commands);
    assert_eq!(first.report["status"], "TEST_FAILED", "{}\n{:#}", first.log, first.report);
    assert!(first.log.contains("left: -1"), "{}", first.log);

    // The person downloads itoa; the PR starts using it.
    copy(&index_dir.join(".cache/it/oa/itoa"));
    copy(&Path::new("registry/cache").join(&index).join(&crate_file));
    push(&lab, n, &[("Cargo.toml", &cargo_toml), ("src/lib.rs", lib)]);
    let second = forge(&lab, "c", n, &commands);
    assert_eq!(second.report["status"], "TEST_PASSED", "the new crate did not resolve:\n{}", second.log);
    // What forgeloop made in the layer is the tests' account's, not root's.
    let made = cycle_layer(&lab, n).join("cargo-home/registry/cache").join(&index);
    let owner = std::os::unix::fs::MetadataExt::uid(&made.symlink_metadata().unwrap());
    assert_ne!(owner, 0, "{} is root's", made.display());
}

#[test]
fn another_repository_never_sees_a_repositorys_cache() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    let n = lab.hostile_pr(&[("probe.sh", PROBE)], &[]);
    forge(&lab, "c", n, r#"[["sh", "probe.sh"]]"#);
    assert!(cycle_layer(&lab, n).join("xdg/marker").is_file());
    let other = lab.w.rt.block_on(lab.w.emu.create_repo("acme", "gadget", false)).unwrap();
    lab.w.commit(&other, "main", &[("README", "other\n")], "start");
    lab.w.commit(&other, "probe", &[("probe.sh", PROBE)], "probe");
    let m = lab.w.rt.block_on(lab.w.emu.open_pr(&other, "probe", "main", "probe")).unwrap();
    let file = lab.w.path("commands-gadget.json");
    std::fs::write(&file, r#"[["sh", "probe.sh"]]"#).unwrap();
    let run = lab.run(&["test", "--pr", &format!("acme/gadget#{m}"), "--commands-json", file.to_str().unwrap()]);
    let log = std::fs::read_to_string(run.json()["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("seen: nothing"), "another repository's cache was visible:\n{log}");
}

#[test]
fn gc_trims_base_and_cycle_layers_to_max_gb_least_recently_used_first_and_doctor_shows_both() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    let n = lab.hostile_pr(&[("fill.sh", "head -c 3000000 /dev/zero > \"$XDG_CACHE_HOME/blob\"\n")], &[]);
    forge(&lab, "c", n, r#"[["sh", "fill.sh"]]"#);
    let cycle = lab.forgeloop_home().join(format!("caches/acme/widget/pr-{n}"));
    assert!(cycle.join("upper/xdg/blob").is_file());
    let doctor = lab.run(&["doctor"]).json();
    let caches = doctor["checks"].as_array().unwrap().iter().find(|c| c["name"] == "caches").cloned().unwrap();
    assert!(caches["detail"].as_str().unwrap().contains("1 repositories: 1 base layers, 1 cycle layers"), "{caches}");
    // Under the bound: kept.
    assert!(lab.run(&["gc"]).json()["caches"]["removed"].as_array().unwrap().is_empty());
    lab.config("[cache]\nmax_gb = 0.001\n");
    let dry = lab.run(&["gc", "--dry-run"]).json();
    let mut removed: Vec<String> =
        dry["caches"]["removed"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    removed.sort();
    assert_eq!(removed, ["acme/widget/base".to_owned(), format!("acme/widget/pr-{n}")], "{dry}");
    assert!(cycle.exists());
    let done = lab.run(&["gc"]).json();
    assert!(done["caches"]["freed_bytes"].as_u64().unwrap() >= 3_000_000, "{done}");
    assert!(!cycle.exists() && !lab.forgeloop_home().join("caches/acme/widget/base").exists());
}

/// The base layer is warmed again once the base branch has moved more than
/// `[cache] base_max_behind` commits past it, and not before.
#[test]
fn the_base_layer_is_rewarmed_once_the_base_branch_is_too_far_ahead() {
    let lab = Lab::new(Tier::Namespaces, Who::User);
    lab.config("[cache]\nbase_max_behind = 1\n");
    let n = lab.hostile_pr(&[("NOTES", "a change\n")], &[]);
    // The run fails, so the cycle goes on.
    let commands = r#"[["false"]]"#;
    let base = |attack: &Attack| cache_of(&attack.report)["cache_layers"]["base"].clone();
    // A one-shot test never warms: with no base layer yet, it has none.
    let once = lab.test(n, commands);
    assert!(cache_of(&once.report)["cache_layers"]["base"].is_null(), "{}", once.run.stdout);
    let first = base(&forge(&lab, "c", n, commands));
    assert_eq!(first["warmed_now"], true, "{first:#}");
    lab.w.commit(&lab.repo, "main", &[("one", "1\n")], "one ahead");
    push(&lab, n, &[("NOTES", "iteration 2\n")]);
    let second = base(&forge(&lab, "c", n, commands));
    assert_eq!((second["warmed_now"].as_bool(), second["behind"].as_u64()), (None, Some(1)), "{second:#}");
    assert_eq!(second["commit"], first["commit"]);
    lab.w.commit(&lab.repo, "main", &[("two", "2\n")], "two ahead");
    // Due, but a one-shot uses the base layer as it is.
    let once = base(&lab.test(n, commands));
    assert_eq!((once["deferred"].as_bool(), once["commit"].clone()), (Some(true), first["commit"].clone()), "{once:#}");
    push(&lab, n, &[("NOTES", "iteration 3\n")]);
    let third = base(&forge(&lab, "c", n, commands));
    assert_eq!(third["warmed_now"], true, "{third:#}");
    assert_eq!(third["commit"], lab.w.tip(&lab.repo, "main"), "{third:#}");
}

/// The person's test builds `calc` from calc.sh into the cache unless the build there is newer,
/// as make and cargo decide (by modification time).
const MTIME_TEST: &str = "#!/bin/sh\nout=\"$XDG_CACHE_HOME/build/calc\"\n\
if [ ! -e \"$out\" ] || [ calc.sh -nt \"$out\" ]; then mkdir -p \"$XDG_CACHE_HOME/build\" && cp calc.sh \"$out\"; fi\n\
got=$(sh \"$out\" 2 3)\n\
if [ \"$got\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $got\"; exit 1; fi\n";
/// Iteration 1's calc.sh: still wrong, and it leaves a right answer as its layer's build, dated
/// 2100, so no later change of calc.sh looks newer.
const PLANTER: &str = "b=\"$XDG_CACHE_HOME/build\"\nprintf 'echo $(($1 + $2))\\n' > \"$b/calc.new\"\n\
touch -d 2100-01-01 \"$b/calc.new\" && mv \"$b/calc.new\" \"$b/calc\"\necho $(($1 - $2))\n";

every_way!(
    a_pass_an_earlier_iteration_planted_in_its_own_layer_is_confirmed_from_the_base_layer_and_fails,
    |lab: Lab| {
        lab.w.commit(
            &lab.repo,
            "main",
            &[("t.sh", MTIME_TEST), ("calc.sh", support::world::CALC_FIXED)],
            "the project",
        );
        let n = lab.hostile_pr(&[("calc.sh", PLANTER)], &[]);
        let commands = r#"[["sh", "t.sh"]]"#;
        let first = forge(&lab, "c", n, commands);
        assert_eq!(first.report["status"], "TEST_FAILED", "{}", first.log);
        assert!(first.report["confirmation"].is_null(), "{:#}", first.report);
        // Iteration 2 is clean and still wrong: only the planted build can make it pass.
        push(&lab, n, &[("calc.sh", "echo $(($1 - $2))\n# tidied\n")]);
        let second = forge(&lab, "c", n, commands);
        assert_eq!(second.report["status"], "TEST_FAILED", "the planted build decided the verdict:\n{}", second.log);
        assert!(second.log.contains("not ok - expected 5, got -1"), "{}", second.log);
        // The layered run passed on what iteration 1 left; its log is kept beside the run's.
        let confirmation = &second.report["confirmation"];
        assert_eq!(
            (confirmation["layer_runs"].as_u64(), confirmation["first_status"].as_str()),
            (Some(1), Some("TEST_PASSED"))
        );
        let head = second.report["head_sha"].as_str().unwrap();
        let layered = lab.w.path(&format!("shared/c.d/runs/2-{}.layered.log", &head[..12]));
        let layered = std::fs::read_to_string(&layered).unwrap_or_else(|e| panic!("{}: {e}", layered.display()));
        assert!(layered.contains("ok - 2+3=5"), "{layered}");
        // The confirming run's layer is gone; the cycle's is the one iteration 1 and 2 wrote.
        assert_eq!(cache_of(&second.report)["cache_layers"]["layer"], "throwaway", "{:#}", second.report);
    }
);

/// The person's test checks with a helper from a crate the person downloaded (a registry
/// source, which the run's layer reaches through the link forgeloop seeds).
const SOURCING_REGISTRY: &str = "#!/bin/sh\n. \"$CARGO_HOME/registry/src/idx/checks-1.0.0/check.sh\"\n\
check \"$(sh calc.sh 2 3)\" 5\n";
const CHECK: &str = "check() { if [ \"$1\" = \"$2\" ]; then echo \"ok - $1\"; else echo \"not ok - expected $2, got $1\"; exit 1; fi; }\n";
/// Iteration 1's calc.sh: wrong, and it swaps the seeded crate for a copy whose check passes.
const SEED_SWAPPER: &str = "src=\"$CARGO_HOME/registry/src/idx/checks-1.0.0\"\nrm -f \"$src\" && mkdir -p \"$src\" && \
echo 'check() { echo \"ok - $1\"; }' > \"$src/check.sh\"\necho $(($1 - $2))\n";

every_way!(a_registry_source_an_earlier_iteration_swapped_is_the_persons_again_before_the_next_run, |lab: Lab| {
    let mut lab = lab;
    // The person's cargo home holds the crate; a Cargo.toml makes forgeloop seed it.
    let person = lab.w.path("person-cargo");
    let crate_dir = person.join("registry/src/idx/checks-1.0.0");
    std::fs::create_dir_all(&crate_dir).unwrap();
    std::fs::write(crate_dir.join("check.sh"), CHECK).unwrap();
    lab.give_back(&person);
    for dir in [person.as_path(), person.parent().unwrap()] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    lab.set_env("CARGO_HOME", person.to_str().unwrap());
    let files = [("Cargo.toml", CARGO_TOML), ("t.sh", SOURCING_REGISTRY), ("calc.sh", support::world::CALC_FIXED)];
    lab.w.commit(&lab.repo, "main", &files, "the project");
    let n = lab.hostile_pr(&[("calc.sh", SEED_SWAPPER)], &[]);
    let commands = r#"[["sh", "t.sh"]]"#;
    let first = forge(&lab, "c", n, commands);
    assert_eq!(first.report["status"], "TEST_FAILED", "{}", first.log);
    push(&lab, n, &[("calc.sh", "echo $(($1 - $2))\n# tidied\n")]);
    let second = forge(&lab, "c", n, commands);
    // The seed was made again before the run: the layered run itself failed, nothing to confirm.
    assert_eq!(second.report["status"], "TEST_FAILED", "the swapped crate decided the verdict:\n{}", second.log);
    assert!(second.log.contains("not ok - expected 5, got -1"), "{}", second.log);
    assert!(second.report["confirmation"].is_null(), "the seed check did not run: {:#}", second.report);
});

/// Iteration 1's lib.rs: still wrong, and while the held test runs it swaps that test's binary
/// in its layer's target directory for `exit 0` and dates every build output in 2100, so cargo
/// takes the next iteration's build as fresh and runs the swapped binary.
const TARGET_PLANTER: &str = r##"pub fn add(a: i32, b: i32) -> i32 {
    plant();
    a - b
}

fn plant() {
    let Ok(target) = std::env::var("CARGO_TARGET_DIR") else { return };
    let deps = std::path::Path::new(&target).join("debug/deps");
    for entry in std::fs::read_dir(&deps).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("add-") && !name.contains('.') {
            let swap = deps.join("swap");
            let _ = std::fs::write(&swap, "#!/bin/sh\nexit 0\n");
            let _ = std::process::Command::new("chmod").arg("755").arg(&swap).status();
            let _ = std::fs::rename(&swap, entry.path());
        }
    }
    let _ = std::process::Command::new("find")
        .arg(&target)
        .args(["-exec", "touch", "-h", "-d", "2100-01-01", "{}", "+"])
        .status();
}
"##;

every_way!(a_test_binary_an_earlier_iteration_swapped_and_dated_in_2100_never_decides_the_verdict, |lab: Lab| {
    let mut lab = lab;
    let commands = cargo_commands(&mut lab);
    lab.w.commit(&lab.repo, "main", &[("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB), ("tests/add.rs", TEST)], "calc");
    let n = lab.hostile_pr(&[("src/lib.rs", TARGET_PLANTER)], &[]);
    let first = forge(&lab, "c", n, &commands);
    assert_eq!(first.report["status"], "TEST_FAILED", "{}", first.log);
    // Clean and still wrong.
    push(&lab, n, &[("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n")]);
    let second = forge(&lab, "c", n, &commands);
    assert_eq!(second.report["status"], "TEST_FAILED", "the swapped test binary decided the verdict:\n{}", second.log);
    assert!(second.log.contains("left: -1"), "{}", second.log);
    assert_eq!(second.report["confirmation"]["first_status"], "TEST_PASSED", "{:#}", second.report);
});
