//! `NEEDS_NETWORK` decided from what a run did, not from what it printed (design §5.6): the
//! sandbox records every connection a test command tries to a destination outside it. A test
//! kit downloaded inside `test.sh` with the network off, whose failure message is in no table,
//! is `NEEDS_NETWORK` naming the exact address — no iteration, nothing for WebGPT — in both
//! tiers, as root and as an ordinary user; a test's own loopback server is not a destination.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[macro_use]
mod sandbox_support;
mod support;

use forgeloop::demo::package_index::{Package, PackageIndex};
use sandbox_support::{Lab, Tier, Who};

fn index() -> PackageIndex {
    PackageIndex::start(&[Package {
        name: "testkit".into(),
        version: "1.0".into(),
        files: vec![("testkit/__init__.py".into(), "OK = True\n".into())],
    }])
    .unwrap()
}

/// A `test.sh` that fetches its kit from the team's index and, failing, says so in words no
/// table of client messages holds.
fn fetching_test_sh(index: &PackageIndex) -> String {
    format!(
        "python3 -c \"import urllib.request; urllib.request.urlopen('{}testkit/', timeout=10)\" >/dev/null 2>&1 \\\n\
         || {{ echo 'kit: not installed (code 7)'; exit 3; }}\necho kit ready\n",
        index.url()
    )
}

every_way!(a_download_inside_the_tests_needs_network_naming_the_address_whatever_it_printed, |lab: Lab| {
    let index = index();
    let n = lab.hostile_pr(&[("test.sh", &fetching_test_sh(&index))], &[]);
    std::fs::create_dir_all(lab.w.path("shared")).unwrap();
    lab.give_back(&lab.w.path("shared"));
    lab.start_cycle("shared/c.json");
    let commands = lab.w.path("shared/commands.json");
    std::fs::write(&commands, r#"[["sh", "test.sh"]]"#).unwrap();
    lab.give_back(&commands);
    let pr = format!("acme/widget#{n}");
    let run =
        lab.run(&["forge", "--pr", &pr, "--state", "shared/c.json", "--commands-json", commands.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let out = run.json();
    assert_eq!(out["status"], "NEEDS_NETWORK", "{out:#}");
    let needs = &out["needs_network"];
    assert_eq!(needs["decided_by"], "connection_record", "{out:#}");
    assert!(needs["sign"].is_null(), "nothing it printed is a sign: {out:#}");
    // The index is on loopback: not public, so named exactly and never proposed.
    assert_eq!(needs["refused_by_policy"][0], index.addr().to_string(), "{out:#}");
    assert!(needs["allow"].as_array().is_none_or(|a| a.is_empty()), "{out:#}");
    assert!(out["error"].as_str().unwrap().contains("recorded by the sandbox"), "{out:#}");
    assert_eq!(index.served(), 0, "the index was reached");

    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(lab.w.path("shared/c.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 0, "counted as an iteration: {state:#}");
    assert!(state["outbox"].is_null() || state["outbox"]["kind"] == "prompt", "a failure was queued: {state:#}");
    assert!(lab.w.comments(&lab.repo, n).is_empty(), "something was posted");
    let next = lab.run(&["next", "--state", "shared/c.json"]).json();
    assert_eq!(next["action"], "wait_for_human", "{next:#}");
    assert!(next["explanation"].as_str().unwrap().contains(&index.addr().to_string()), "{next:#}");
});

every_way!(a_failing_test_that_tried_nothing_outside_is_an_ordinary_failure, |lab: Lab| {
    let n = lab.hostile_pr(&[("test.sh", "echo 'assertion failed: 2 + 2 == 5'\nexit 1\n")], &[]);
    let attack = lab.test(n, r#"[["sh", "test.sh"]]"#);
    assert_eq!(attack.report["status"], "TEST_FAILED", "{}", attack.log);
    assert!(attack.report["network_log"].as_array().is_none_or(|l| l.is_empty()), "{:#}", attack.report);
});

/// The first tier gives each run a loopback of its own, so a test may serve itself there (the
/// second tier's Landlock rules refuse a TCP bind). Its connections to that server — one made
/// before the server listened included — are not destinations outside the sandbox: the run
/// fails for its own reasons and is an iteration.
#[test]
fn a_tests_own_loopback_server_is_not_a_destination() {
    for who in [Who::Root, Who::User] {
        let lab = Lab::new(Tier::Namespaces, who);
        let script = "import socket, threading, time\n\
            def client():\n    s = socket.socket(); s.connect(('127.0.0.1', 18765)); s.sendall(b'hi'); s.close()\n\
            try:\n    client()\nexcept OSError as e:\n    print('early connect:', e)\n\
            srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
            srv.bind(('127.0.0.1', 18765)); srv.listen(1)\n\
            threading.Thread(target=client).start()\n\
            conn, _ = srv.accept(); print('served', conn.recv(2)); conn.close()\n\
            raise SystemExit('assertion failed: the answer is wrong')\n";
        let n = lab.hostile_pr(&[("serve_test.py", script)], &[]);
        let attack = lab.test(n, r#"[["python3", "serve_test.py"]]"#);
        assert_eq!(attack.report["status"], "TEST_FAILED", "{}", attack.log);
        assert!(attack.log.contains("served b'hi'"), "{}", attack.log);
        assert!(attack.log.contains("early connect:"), "{}", attack.log);
        assert!(
            attack.report["network_log"].as_array().is_none_or(|l| l.is_empty()),
            "its own server was recorded: {:#}",
            attack.report
        );
    }
}
