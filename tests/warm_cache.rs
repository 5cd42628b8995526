//! Warm caches per repository (design §5.6): what one run of a repository leaves in its cache
//! is there for the next run of that repository, at the same paths; never for another
//! repository; not with `"cache": false` or `--fresh`; and `gc` trims the caches to
//! `[cache] max_gb`. Through `forgeloop test` against the GitHub emulator, in both tiers, as root
//! and as an ordinary user.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[macro_use]
mod sandbox_support;
mod support;

use sandbox_support::{Lab, Tier, Who};

/// A test that records where it ran and what the previous run of the same cache left.
const PROBE: &str = "echo \"seen: $(cat \"$XDG_CACHE_HOME/marker\" 2>/dev/null || echo nothing)\"\n\
                     echo \"$PWD $CARGO_TARGET_DIR\" > \"$XDG_CACHE_HOME/marker\"\n\
                     mkdir -p \"$CARGO_TARGET_DIR\" && echo built > \"$CARGO_TARGET_DIR/artifact\"\n";

fn marker(lab: &Lab, repo: &str) -> Option<String> {
    std::fs::read_to_string(lab.forgeloop_home().join(format!("caches/acme/{repo}/0/xdg/marker"))).ok()
}

every_way!(a_repositorys_second_run_finds_what_its_first_left_at_the_same_paths, |lab: Lab| {
    let n = lab.hostile_pr(&[("probe.sh", PROBE)], &[]);
    let first = lab.test(n, r#"[["sh", "probe.sh"]]"#);
    assert!(first.log.contains("seen: nothing"), "{}", first.log);
    let left = marker(&lab, "widget").expect("the first run wrote nothing into the cache");
    let second = lab.test(n, r#"[["sh", "probe.sh"]]"#);
    assert!(second.log.contains("seen: "), "{}", second.log);
    assert!(!second.log.contains("seen: nothing"), "the cache was not kept:\n{}", second.log);
    // Same checkout path and target directory from one run to the next: builds stay incremental.
    assert_eq!(marker(&lab, "widget").unwrap(), left);
    assert!(left.contains("/caches/acme/widget/0/cargo-target"), "{left}");
    assert_eq!(second.report["environment"]["sandbox"]["cache"], "acme/widget/0", "{}", second.run.stdout);

    // Cold on request: the commands file, or --fresh.
    let cold = lab.test(n, r#"{"commands": [["sh", "-c", "echo cache=${XDG_CACHE_HOME:-none}"]], "cache": false}"#);
    assert!(!cold.log.contains("/caches/"), "{}", cold.log);
    assert!(cold.report["environment"]["sandbox"]["cache"].is_null(), "{}", cold.run.stdout);
});

#[test]
fn another_repository_never_sees_a_repositorys_cache() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    let n = lab.hostile_pr(&[("probe.sh", PROBE)], &[]);
    lab.test(n, r#"[["sh", "probe.sh"]]"#);
    assert!(marker(&lab, "widget").is_some());
    let other = lab.w.rt.block_on(lab.w.emu.create_repo("acme", "gadget", false)).unwrap();
    lab.w.commit(&other, "main", &[("README", "other\n")], "start");
    lab.w.commit(&other, "probe", &[("probe.sh", PROBE), ("attack.sh", "ls -la /proc/self/cwd\n")], "probe");
    let m = lab.w.rt.block_on(lab.w.emu.open_pr(&other, "probe", "main", "probe")).unwrap();
    let file = lab.w.path("commands-gadget.json");
    std::fs::write(&file, r#"[["sh", "probe.sh"]]"#).unwrap();
    let run = lab.run(&["test", "--pr", &format!("acme/gadget#{m}"), "--commands-json", file.to_str().unwrap()]);
    let log = std::fs::read_to_string(run.json()["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("seen: nothing"), "another repository's cache was visible:\n{log}");
    // --fresh: nothing from the cache either, for the same repository.
    let fresh =
        lab.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", file.to_str().unwrap(), "--fresh"]);
    let log = std::fs::read_to_string(fresh.json()["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("seen: nothing"), "--fresh used the cache:\n{log}");
}

#[test]
fn gc_trims_the_caches_to_max_gb_least_recently_used_first_and_doctor_shows_their_size() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    let n = lab.hostile_pr(&[("fill.sh", "head -c 3000000 /dev/zero > \"$XDG_CACHE_HOME/blob\"\n")], &[]);
    lab.test(n, r#"[["sh", "fill.sh"]]"#);
    let slot = lab.forgeloop_home().join("caches/acme/widget/0");
    assert!(slot.join("xdg/blob").is_file());
    let doctor = lab.run(&["doctor"]).json();
    let caches = doctor["checks"].as_array().unwrap().iter().find(|c| c["name"] == "caches").cloned().unwrap();
    assert!(caches["detail"].as_str().unwrap().contains("1 repositories, 1 slots"), "{caches}");
    // Under the bound: kept.
    assert!(lab.run(&["gc"]).json()["caches"]["removed"].as_array().unwrap().is_empty());
    lab.config("[cache]\nmax_gb = 0.001\n");
    let dry = lab.run(&["gc", "--dry-run"]).json();
    assert_eq!(dry["caches"]["removed"][0], "acme/widget/0", "{dry}");
    assert!(slot.exists());
    let done = lab.run(&["gc"]).json();
    assert_eq!(done["caches"]["removed"][0], "acme/widget/0", "{done}");
    assert!(done["caches"]["freed_bytes"].as_u64().unwrap() >= 3_000_000, "{done}");
    assert!(!slot.exists());
}
