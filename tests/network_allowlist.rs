//! Real projects' dependencies through the person's allowlist (design §5.6): a `setup` step
//! installs from a package index on 127.0.0.1 (allowed by its exact `IP:port`) through the
//! run's egress proxy, and the tests then pass with no network; what is not allowed — another
//! local listener, the cloud metadata address, another loopback port, a name resolving to
//! loopback — is refused and on the record; a run that fails only for that is `NEEDS_NETWORK`,
//! not an iteration; `"open"` needs the person's config. In both tiers, as root and as an
//! ordinary user.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[macro_use]
mod sandbox_support;
mod support;

use std::net::TcpListener;

use forgeloop::demo::package_index::{Package, PackageIndex};
use sandbox_support::{Lab, Tier, Who};

fn index() -> PackageIndex {
    PackageIndex::start(&[Package {
        name: "tinydep".into(),
        version: "1.0".into(),
        files: vec![("tinydep/__init__.py".into(), "VALUE = 42\n".into())],
    }])
    .unwrap()
}

/// The project's tests import what setup installed into `vendor/`.
const TEST_PY: &str = "import sys\nsys.path.insert(0, 'vendor')\nimport tinydep\nassert tinydep.VALUE == 42\nprint('tinydep works', tinydep.VALUE)\n";

fn setup_commands(index: &PackageIndex) -> String {
    format!(
        r#"{{"setup": [["/usr/bin/python3", "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--index-url", "{}", "--target", "vendor", "tinydep"]],
            "commands": [["python3", "test_tinydep.py"], ["sh", "-c", "python3 -m pip download --no-cache-dir --index-url {} -d dl tinydep 2>&1 | tail -1; echo tests-offline"]]}}"#,
        index.url(),
        index.url()
    )
}

every_way!(setup_installs_through_the_allowlist_and_the_tests_run_without_network, |lab: Lab| {
    let index = index();
    lab.config(&format!("[network]\nallow = [\"{}\"]\n", index.addr()));
    let n = lab.hostile_pr(&[("test_tinydep.py", TEST_PY), ("requirements.txt", "tinydep\n")], &[]);
    let attack = lab.test(n, &setup_commands(&index));
    assert_eq!(attack.report["status"], "TEST_PASSED", "{}", attack.log);
    assert_eq!(attack.report["lockfiles"], serde_json::json!(["requirements.txt"]));
    let comment = attack.report["comment_markdown"].as_str().unwrap();
    assert!(comment.contains("network: allowlist for setup (1 host), none for the tests"), "{comment}");
    assert!(attack.log.contains("tinydep works 42"), "{}", attack.log);
    assert!(attack.log.contains("# setup") && attack.log.contains("# tests"), "{}", attack.log);
    let sandbox = &attack.report["environment"]["sandbox"];
    assert_eq!((sandbox["network"].as_str(), sandbox["setup_network"].as_str()), (Some("off"), Some("allowlist")));
    // The setup's requests are on the record, allowed; the tests' later try had no network.
    let log = attack.report["network_log"].as_array().unwrap();
    let target = index.addr().to_string();
    assert!(
        log.iter().any(|e| e["allowed"] == true
            && e["phase"] == "setup"
            && format!("{}:{}", e["host"].as_str().unwrap(), e["port"]) == target),
        "{log:?}"
    );
    // The tests' own try never reached the proxy: the sandbox recorded it, refused.
    let recorded = |e: &serde_json::Value| {
        e["allowed"] == false && e["reason"].as_str().is_some_and(|r| r.starts_with("recorded by the sandbox"))
    };
    assert!(log.iter().all(|e| e["phase"] == "setup" || recorded(e)), "the tests reached the proxy: {log:?}");
    assert!(
        log.iter().any(|e| e["phase"] == "test" && recorded(e) && e["by_policy"] == target.as_str()),
        "the tests' try is not on the record: {log:?}\n{}",
        attack.log
    );
    assert!(index.served() >= 2, "the index served {}", index.served());
    assert!(attack.log.contains("tests-offline"), "{}", attack.log);
});

every_way!(what_the_allowlist_does_not_name_is_refused_on_the_record_and_never_reached, |lab: Lab| {
    let index = index();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let other_port = other.local_addr().unwrap().port();
    // `localhost:OTHER` is allowed by name, but the name resolves to loopback, which only an
    // exact IP:port entry permits: refused (DNS rebinding). The index by its exact address: allowed.
    lab.config(&format!("[network]\nallow = [\"{}\", \"localhost:{other_port}\"]\n", index.addr()));
    let probe = format!(
        "for url in http://127.0.0.1:{other_port}/ http://169.254.169.254/latest/meta-data/ http://127.0.0.1:{}/simple/ http://localhost:{other_port}/ https://example.com/; do\n\
         python3 -c \"import sys, urllib.request\ntry:\n    urllib.request.urlopen(sys.argv[1], timeout=10); print('reached', sys.argv[1])\nexcept Exception as e:\n    print('refused', sys.argv[1], e)\" \"$url\"\ndone\n",
        index.addr().port(),
    );
    let n = lab.hostile_pr(&[("probe.sh", &probe)], &[]);
    let attack = lab.test(n, r#"{"commands": [["sh", "probe.sh"]], "network": "allowlist"}"#);
    assert!(
        attack.log.contains(&format!("reached http://127.0.0.1:{}/simple/", index.addr().port())),
        "{}",
        attack.log
    );
    assert!(other.accept().is_err(), "the listener that is not allowed was reached:\n{}", attack.log);
    let log = attack.report["network_log"].as_array().unwrap().clone();
    let refused =
        |host: &str, port: u16| log.iter().any(|e| e["allowed"] == false && e["host"] == host && e["port"] == port);
    assert!(refused("127.0.0.1", other_port), "{log:?}");
    assert!(refused("169.254.169.254", 80), "{log:?}");
    // A name the allowlist names, resolving to loopback: refused all the same (DNS rebinding).
    assert!(refused("localhost", other_port), "{log:?}");
    assert!(refused("example.com", 443), "{log:?}");
    for line in ["refused http://127.0.0.1", "refused http://169.254.169.254", "refused http://localhost"] {
        assert!(attack.log.contains(line), "{line}:\n{}", attack.log);
    }
    assert_eq!(attack.report["environment"]["sandbox"]["network"], "allowlist");
    assert!(
        attack.report["comment_markdown"].as_str().unwrap().contains("network: allowlist (1 host)"),
        "{}",
        attack.run.stdout
    );
});

every_way!(a_run_that_fails_only_because_a_host_was_refused_needs_network_and_costs_no_iteration, |lab: Lab| {
    let index = index();
    // The person allows nothing yet.
    let n = lab.hostile_pr(&[("test_tinydep.py", TEST_PY)], &[]);
    std::fs::create_dir_all(lab.w.path("shared")).unwrap();
    lab.give_back(&lab.w.path("shared"));
    lab.start_cycle("shared/c.json");
    let commands = lab.w.path("shared/commands-nn.json");
    std::fs::write(&commands, setup_commands(&index)).unwrap();
    lab.give_back(&commands);
    let state_path = lab.w.path("shared/c.json");
    let pr = format!("acme/widget#{n}");
    let run =
        lab.run(&["forge", "--pr", &pr, "--state", "shared/c.json", "--commands-json", commands.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "NEEDS_NETWORK", "{out:#}");
    // No network at all in setup (the allowlist is empty): the client's own words say so.
    assert!(out["needs_network"]["sign"].is_string(), "{out:#}");
    let state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert_eq!(state["iteration"], 0, "counted as an iteration: {state:#}");
    assert!(state["outbox"].is_null() || state["outbox"]["kind"] == "prompt", "{state:#}");
    assert_eq!(state["infra_failures"].as_u64().unwrap_or(0), 0);
    assert!(lab.w.comments(&lab.repo, n).is_empty(), "something was posted");
    let next = lab.run(&["next", "--state", "shared/c.json"]).json();
    assert_eq!(next["action"], "wait_for_human", "{next:#}");
    assert!(next["explanation"].as_str().unwrap().contains("Do not send this failure to WebGPT"), "{next:#}");
    assert!(
        next["needs_network"]["config"].as_str().unwrap().contains("[network.repositories.\"acme/widget\"]"),
        "{next:#}"
    );

    // With the allowlist naming another host only, the proxy refuses the index. It is on
    // loopback, as a metadata endpoint or a service on the host's network would be not public:
    // refused by policy, named exactly, and never proposed (an older release proposed it, and
    // the control room's `A` added it; a PR asking for 169.254.169.254 then read the
    // instance's credentials).
    lab.config("[network]\nallow = [\"registries\"]\n");
    let run = lab.run(&["forge", "--pr", &pr, "--state", "shared/c.json"]);
    let out = run.json();
    assert_eq!(out["status"], "NEEDS_NETWORK", "{out:#}");
    let needs = &out["needs_network"];
    assert!(needs["allow"].as_array().is_none_or(|a| a.is_empty()), "proposed: {out:#}");
    assert_eq!(needs["refused_by_policy"][0], index.addr().to_string(), "{out:#}");
    let config = needs["config"].as_str().unwrap().to_owned();
    assert!(config.lines().all(|l| l.starts_with('#')), "{config}");
    assert!(config.contains("by hand"), "{config}");
    let next = lab.run(&["next", "--state", "shared/c.json"]).json();
    let explanation = next["explanation"].as_str().unwrap();
    assert!(explanation.contains(&format!("refused by policy {}", index.addr())), "{next:#}");
    assert!(!explanation.contains("one key"), "{next:#}");
    let state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert_eq!(state["iteration"], 0, "counted as an iteration: {state:#}");

    // The person trusts it and writes the exact entry by hand: the run completes and counts.
    lab.config(&format!(
        "[network]\nallow = [\"registries\"]\n\n[network.repositories.\"acme/widget\"]\nallow = [\"{}\"]\n",
        index.addr()
    ));
    let run = lab.run(&["forge", "--pr", &pr, "--state", "shared/c.json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let state = run.json();
    assert_eq!(state["iteration"], 1);
    assert_eq!(state["report"]["status"], "TEST_PASSED", "{state:#}");
    assert!(state["needs_network"].is_null());

    // Three runs of one head and one iteration, each with its own log: the two that needed
    // network (journaled with their logs) and the one that counted (in the history). An older
    // release wrote all three to `runs/1-<sha>.log`, so only the last was left. (The one that
    // counted passed on a layer the runs before it wrote, so it was confirmed from the base
    // layer: its layered run's log is kept beside it.)
    let runs = lab.w.path("shared/c.d/runs");
    let mut logs: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log") && !n.ends_with(".layered.log"))
        .collect();
    logs.sort();
    assert_eq!(logs.len(), 3, "{logs:?}");
    let counted = state["history"][0]["log_path"].as_str().unwrap().to_owned();
    let journal = std::fs::read_to_string(lab.w.path("shared/c.d/events.jsonl")).unwrap();
    let needed: Vec<String> = journal
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["kind"] == "run_needs_network")
        .map(|e| e["data"]["log"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(needed.len(), 2, "{journal}");
    let mut named: Vec<String> =
        needed.iter().chain([&counted]).map(|l| l.trim_start_matches("runs/").to_owned()).collect();
    named.sort();
    assert_eq!(named, logs);
    for log in &logs {
        assert!(std::fs::metadata(runs.join(log)).unwrap().len() > 0, "{log} is empty");
    }
});

#[test]
fn network_open_needs_the_persons_config_for_that_repository() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    let n = lab.hostile_pr(&[("noop", "")], &[]);
    for word in ["true", "\"open\""] {
        let file = lab.w.path("commands-open.json");
        std::fs::write(&file, format!(r#"{{"commands": [["true"]], "network": {word}}}"#)).unwrap();
        let run = lab.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", file.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}", run.stdout);
        let out = run.json();
        assert_eq!(out["status"], "BLOCKED", "{out:#}");
        assert!(
            out["error"].as_str().unwrap().contains("[network.repositories.\\\"acme/widget\\\"] open = true")
                || out["error"].as_str().unwrap().contains("[network.repositories.\"acme/widget\"] open = true"),
            "{out:#}"
        );
        assert!(!lab.forgeloop_home().join("mirrors").exists(), "the PR was fetched");
    }
    lab.config("[network.repositories.\"acme/widget\"]\nopen = true\n");
    let attack = lab.test(n, r#"{"commands": [["true"]], "network": "open"}"#);
    assert_eq!(attack.report["environment"]["sandbox"]["network"], "open");
}
