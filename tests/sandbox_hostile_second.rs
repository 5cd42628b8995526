//! The sandbox, second round (design §5.6): the ways past the first walls an adversarial review
//! found, each as a hostile PR through `forgeloop test` against the GitHub emulator, in both
//! tiers, as root and as an ordinary user (the landlock tier never runs a test for root: there
//! the attack is shown not to start). Every outcome is observed from outside the sandbox: an
//! ordinary account trying to execute a planted setuid file during the run, keys planted in
//! the person's keyrings before it, a marker that `git status` in a kept checkout would
//! create, every process's command line sampled during the run, file modes, leftover
//! directories. The controls at the end show each observation catching its attack when the
//! sandbox is off.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[macro_use]
mod sandbox_support;
mod support;

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sandbox_support::{Lab, Tier, Who};

/// Every file below `dir` whose name starts with `prefix` (the harness is root: it sees all).
fn find_named(dir: &Path, prefix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = path.symlink_metadata() else { continue };
        if entry.file_name().to_string_lossy().starts_with(prefix) && meta.is_file() {
            out.push(path.clone());
        }
        if meta.is_dir() {
            find_named(&path, prefix, out);
        }
    }
}

/// Runs `argv` as [`sandbox_support::OTHER_USER`]: its combined output. Through a shell that
/// execs it, so the file is looked up by the account itself (setpriv still holds root's
/// capabilities when it execs).
fn as_other_account(argv: &[&str]) -> String {
    let (uid, gid) = sandbox_support::other_user().expect("the test checked for the other account first");
    let out = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={gid}"),
            "--clear-groups",
            "/bin/sh",
            "-c",
            "exec \"$@\"",
            "sh",
        ])
        .args(argv)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .output()
        .unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `root` and every process below it, from the parent links in `/proc/<pid>/stat`.
fn descendants(root: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, ppid) in &parents {
            if found.contains(ppid) && !found.contains(pid) {
                found.push(*pid);
                grew = true;
            }
        }
    }
    found
}

const SETUID_ATTACK: &str = "for d in \"$PWD\" \"$HOME\" \"$TMPDIR\"; do\n\
    cp /bin/bash \"$d/suid-sh\"; chmod 4755 \"$d/suid-sh\"; chmod u+s,g+s \"$d/suid-sh\"; chmod 777 \"$d\"\n\
done\n\
python3 -c \"import os; os.chmod('suid-sh', 0o6755)\" || echo python-chmod-refused\n\
python3 -c \"import os; os.close(os.open('suid-open', os.O_CREAT | os.O_WRONLY, 0o4755))\" || echo python-open-refused\n\
cp /bin/bash suid-open 2>/dev/null\n\
ls -ln suid-sh suid-open \"$HOME/suid-sh\"\n\
echo planted\n\
sleep 3\n";

// The attack of item 1: a setuid copy of a shell for any other account to run while the run
// lasts. Three walls, each checked: no file of the run ever gets a setuid or setgid bit
// (seccomp), no other account can reach the run's files (a private run directory), and a run
// started by root leaves files owned by an unprivileged account, not root.
every_way!(a_setuid_shell_planted_by_the_test_gives_no_other_account_root, |lab: Lab| {
    if sandbox_support::other_user().is_none() {
        return;
    }
    let n = lab.hostile_pr(&[("attack.sh", SETUID_ATTACK)], &[]);
    let child = lab.spawn_test(n, r#"[["sh", "attack.sh"]]"#, &[]);
    assert!(lab.wait_for_log("planted"), "the attack did not get to plant:\n{}", lab.live_logs());
    let mut planted = Vec::new();
    find_named(&lab.run_root(), "suid-", &mut planted);
    assert!(planted.len() >= 3, "the harness found too few planted files: {planted:?}");
    let mut tries = Vec::new();
    for file in &planted {
        let meta = file.symlink_metadata().unwrap();
        assert_eq!(meta.mode() & 0o6000, 0, "{} has a setuid/setgid bit:\n{}", file.display(), lab.live_logs());
        if lab.user.is_none() {
            assert_ne!(meta.uid(), 0, "{} belongs to root", file.display());
        }
        tries.push(as_other_account(&[file.to_str().unwrap(), "-p", "-c", "echo euid=$(id -u)"]));
    }
    let attack = lab.finish(child);
    for out in &tries {
        assert!(!out.contains("euid=0"), "another account became root: {out}");
        assert!(out.contains("Permission denied"), "another account reached a run's file: {out}");
    }
    assert!(attack.log.contains("Operation not permitted"), "{}", attack.log);
});

/// Starts forgeloop (through python) after planting keys in the session, user and (where the
/// kernel has it) persistent keyrings of the account that runs it.
const PLANT_KEYS: &str = r#"
import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = (248, 250) if platform.machine() == "x86_64" else (217, 219)
L = ctypes.c_long
libc.syscall(L(KEYCTL), L(1), ctypes.c_char_p(b"forgeloop-test-session"))
canary = sys.argv[1]
def add(ring, tag):
    payload = f"{canary}-{tag}".encode()
    libc.syscall(L(ADD_KEY), ctypes.c_char_p(b"user"), ctypes.c_char_p(f"forgeloop-key-{tag}".encode()),
                 ctypes.c_char_p(payload), L(len(payload)), L(ring))
add(-3, "session")
add(-4, "user")
persistent = libc.syscall(L(KEYCTL), L(22), L(-1), L(-4))
if persistent > 0:
    add(persistent, "persistent")
os.execv(sys.argv[2], sys.argv[2:])
"#;

/// Inside the run: searches every keyring it can name for the planted keys and prints what it
/// reads, reversed (which no redactor would recognise) and plain.
const READ_KEYS: &str = r#"
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
REQUEST_KEY, KEYCTL = (249, 250) if platform.machine() == "x86_64" else (218, 219)
L = ctypes.c_long
rings = [("session", -3), ("user", -4), ("user-session", -5), ("process", -2)]
persistent = libc.syscall(L(KEYCTL), L(22), L(-1), L(0))
print("get_persistent", persistent, "errno", ctypes.get_errno())
if persistent > 0:
    rings.append(("persistent", persistent))
for ring_name, ring in rings:
    for tag in ("session", "user", "persistent"):
        key = libc.syscall(L(KEYCTL), L(10), L(ring), ctypes.c_char_p(b"user"), ctypes.c_char_p(f"forgeloop-key-{tag}".encode()), L(0))
        if key < 0:
            key = libc.syscall(L(REQUEST_KEY), ctypes.c_char_p(b"user"), ctypes.c_char_p(f"forgeloop-key-{tag}".encode()), None, L(0))
        print(ring_name, tag, "key", key, "errno", ctypes.get_errno())
        if key > 0:
            buf = ctypes.create_string_buffer(512)
            n = libc.syscall(L(KEYCTL), L(11), L(key), buf, L(512))
            if n > 0:
                value = buf.raw[:n].decode(errors="replace")
                print("read", value[::-1])
                print("read plain", value)
print("keyring attack done")
"#;

// Item 2: the keyrings of the person who started forgeloop. The run gets a fresh, empty
// session keyring, and keyctl, add_key and request_key are refused.
every_way!(the_persons_keyrings_stay_out_of_reach, |lab: Lab| {
    let plant = lab.w.path("shared/plant.py");
    std::fs::create_dir_all(plant.parent().unwrap()).unwrap();
    std::fs::write(&plant, PLANT_KEYS).unwrap();
    lab.give_back(&plant);
    let n = lab.hostile_pr(&[("keys.py", READ_KEYS)], &[]);
    let file = lab.w.path("commands-keys.json");
    std::fs::write(&file, r#"[["python3", "keys.py"]]"#).unwrap();
    lab.give_back(&file);
    let pr = format!("acme/widget#{n}");
    let args = ["test", "--pr", &pr, "--commands-json", file.to_str().unwrap()];
    let output = lab.command_via(&["python3", plant.to_str().unwrap(), &lab.canary], &args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}"));
    let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("keyring attack done"), "{log}");
    let everything = format!("{stdout}\n{}\n{log}", String::from_utf8_lossy(&output.stderr));
    let reversed: String = lab.canary.chars().rev().collect();
    assert!(!everything.contains(&lab.canary) && !everything.contains(&reversed), "a key was read:\n{everything}");
    // Refused by seccomp, not merely empty: EPERM is errno 1.
    assert!(log.contains("session session key -1 errno 1"), "{log}");
});

/// A hostile test's traps for whoever later works in a kept checkout: `core.fsmonitor`, an
/// alias, `include.path` and `core.hooksPath` in the git directory's config and in a `.git` it
/// puts in the working tree, hooks, and a repository behind the PR's submodule entry. `M` is
/// the marker a trap would create.
fn git_traps(marker: &Path) -> String {
    format!(
        "M={m}\n\
         gd=$(git rev-parse --git-dir); echo gitdir=$gd\n\
         git config core.fsmonitor \"touch $M\" && echo wrote-config || echo config-refused\n\
         printf '[alias]\\n\\tst = !touch %s\\n' \"$M\" >> \"$gd/config\" || echo append-refused\n\
         mkdir -p \"$gd/hooks\" && printf '#!/bin/sh\\ntouch %s\\n' \"$M\" > \"$gd/hooks/post-checkout\" || echo hook-refused\n\
         printf '[core]\\n\\tfsmonitor = touch %s\\n\\thooksPath = %s/h\\n' \"$M\" \"$PWD\" > evil.cfg\n\
         mkdir -p h; for hook in pre-commit post-checkout post-commit; do printf '#!/bin/sh\\ntouch %s\\n' \"$M\" > h/$hook; chmod +x h/$hook; done\n\
         rm -rf .git; mkdir .git; cp -R \"$gd\"/. .git/ 2>/dev/null\n\
         printf '[core]\\n\\tfsmonitor = touch %s\\n\\thooksPath = %s/h\\n[alias]\\n\\tst = !touch %s\\n[include]\\n\\tpath = %s/evil.cfg\\n' \"$M\" \"$PWD\" \"$M\" \"$PWD\" >> .git/config\n\
         cp h/* .git/hooks/ 2>/dev/null\n\
         rm -rf sub; mkdir sub; git init -q sub; git -C sub config core.fsmonitor \"touch $M\"; git -C sub config core.hooksPath \"$PWD/h\"\n\
         echo trap set\n",
        m = marker.display()
    )
}

/// What a person does in a kept checkout: `git status`, `git diff`, `git log`, the alias, a
/// commit and a checkout (hooks), as the account that ran forgeloop, with no git config of
/// its own.
fn use_git_in(lab: &Lab, dir: &Path) -> String {
    let mut out = String::new();
    for args in [
        &["status"][..],
        &["diff"],
        &["log", "-1", "--stat"],
        &["st"],
        &["-c", "user.name=p", "-c", "user.email=p@example.invalid", "commit", "-q", "--allow-empty", "-m", "x"],
        &["checkout", "-q", "--detach"],
    ] {
        let mut cmd = match lab.user {
            Some((uid, gid)) => {
                let mut cmd = Command::new("setpriv");
                cmd.args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups", "git"]);
                cmd
            }
            None => Command::new("git"),
        };
        let run = cmd
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &lab.user_home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        out.push_str(&format!(
            "$ git {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    out
}

// Item 3: the checkout's git directory is read-only to the test, and a kept checkout comes
// back with a `.git` forgeloop wrote itself, so the person's first `git status` there runs
// nothing the PR planted.
every_way!(a_kept_checkout_runs_nothing_of_the_prs_when_the_person_uses_git, |lab: Lab| {
    let marker = lab.w.path(&format!("shared/marker-{}", lab.canary));
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    lab.give_back(marker.parent().unwrap());
    let n = lab.hostile_pr_with_gitlinks(&[("attack.sh", &git_traps(&marker))], &[], &["sub"]);
    let child = lab.spawn_test(n, r#"[["sh", "attack.sh"]]"#, &["--keep-checkout"]);
    let attack = lab.finish(child);
    assert!(attack.log.contains("trap set"), "{}", attack.log);
    assert!(attack.log.contains("config-refused"), "the git directory was writable:\n{}", attack.log);
    assert!(attack.log.contains("hook-refused"), "{}", attack.log);
    let kept = PathBuf::from(attack.report["kept_checkout"].as_str().expect("no kept_checkout"));
    let warning = attack.report["kept_checkout_warning"].as_str().unwrap_or_default();
    assert!(warning.contains("files the PR's code wrote"), "{}", attack.run.stdout);
    // What the test wrote is still there for the person to look at.
    assert!(kept.join("evil.cfg").is_file() && kept.join("h/pre-commit").is_file());
    let used = use_git_in(&lab, &kept);
    assert!(used.contains("evil.cfg"), "git status should list what the test wrote:\n{used}");
    assert!(!marker.exists(), "the person's git ran the PR's trap:\n{used}");
    std::fs::remove_dir_all(&kept).unwrap();
});

// Item 4: with one write grant, a command swaps a directory in it for a link to `~/.ssh`; the
// next command writes through the link and reaches nothing of the person's.
every_way!(a_link_swapped_into_a_write_grant_reaches_nothing, |lab: Lab| {
    let grant = lab.w.path("shared/grant");
    std::fs::create_dir_all(grant.join("inner")).unwrap();
    lab.give_back(&lab.w.path("shared"));
    std::fs::set_permissions(&grant, std::fs::Permissions::from_mode(0o777)).unwrap();
    let ssh = lab.user_home.join(".ssh");
    // The PR knows where the person's home is; only the commands file may not name it.
    let swap =
        format!("rm -rf {g}/inner && ln -s {ssh} {g}/inner && ls -la {g}\n", g = grant.display(), ssh = ssh.display());
    let write = format!(
        "echo ssh-ed25519 evil >> {g}/inner/authorized_keys; cat {g}/inner/id_ed25519; ls {g}/inner/\nexit 0\n",
        g = grant.display()
    );
    let n = lab.hostile_pr(&[("swap.sh", &swap), ("write.sh", &write)], &[]);
    let commands =
        format!(r#"{{"commands": [["sh", "swap.sh"], ["sh", "write.sh"]], "write_paths": ["{}"]}}"#, grant.display());
    let attack = lab.test(n, &commands);
    assert!(attack.log.contains("inner ->"), "the link was not made:\n{}", attack.log);
    assert!(!ssh.join("authorized_keys").exists(), "a key was planted:\n{}", attack.log);
    assert!(!attack.everything().contains(&lab.canary), "{}", attack.everything());
});

// Item 6: nothing of a command's environment, argv or paths shows in the helper's command
// line, which every local account can read in /proc/<pid>/cmdline. Sampled during the run;
// the command's own argv (which does show, as any process's does) proves the sampler sees.
every_way!(passed_through_values_never_show_in_any_command_line, |lab: Lab| {
    let mut lab = lab;
    let password = support::world::fresh_secret("pw");
    lab.set_env("DATABASE_URL", &format!("postgres://app:{password}@db.internal/app"));
    let marker = format!("argvmarker{}", std::process::id());
    let n =
        lab.hostile_pr(&[("slow.sh", "echo started\nsleep 2\necho url-length ${#DATABASE_URL} host $DB_HOST\n")], &[]);
    let commands = format!(
        r#"{{"commands": [{{"argv": ["sh", "slow.sh", "{marker}"], "env": {{"DB_HOST": "dbhost-sandbox-probe"}}}}],
            "env_passthrough": ["DATABASE_URL"]}}"#
    );
    let child = lab.spawn_test(n, &commands, &[]);
    let root = child.id() as i32;
    let seen = Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (seen, sampling) = (seen.clone(), sampling.clone());
        // Every process of this run (forgeloop, the helper, the command and its children),
        // as any local account can read them.
        std::thread::spawn(move || {
            while sampling.load(Ordering::SeqCst) {
                for pid in descendants(root) {
                    if let Ok(bytes) = std::fs::read(format!("/proc/{pid}/cmdline"))
                        && !bytes.is_empty()
                    {
                        seen.lock().unwrap().insert(String::from_utf8_lossy(&bytes).replace('\0', " "));
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let attack = lab.finish(child);
    sampling.store(false, Ordering::SeqCst);
    sampler.join().unwrap();
    // The command's own `env` reached it (masked in the log, as every given value is).
    assert!(attack.log.contains("host [REDACTED:env-value]"), "{}", attack.log);
    let seen = seen.lock().unwrap();
    assert!(seen.iter().any(|c| c.contains(&marker)), "the sampler never saw the command itself");
    assert!(seen.iter().any(|c| c.contains("__sandbox-exec")), "the sampler never saw the helper");
    let run_root = lab.run_root().display().to_string();
    for cmdline in seen.iter() {
        for secret in [password.as_str(), "dbhost-sandbox-probe", "DATABASE_URL", run_root.as_str(), "\"argv\""] {
            assert!(!cmdline.contains(secret), "{secret:?} was readable in a command line: {cmdline}");
        }
    }
});

// Item 8: a test that leaves `0000` directory trees (in the checkout, HOME and TMPDIR) does
// not keep its run's files on disk.
every_way!(a_tree_the_test_made_unremovable_is_removed_after_the_run, |lab: Lab| {
    let tmp_before: BTreeSet<_> =
        std::fs::read_dir(std::env::temp_dir()).unwrap().flatten().map(|e| e.file_name()).collect();
    let script = "for d in \"$PWD\" \"$HOME\" \"$TMPDIR\"; do\n\
                  mkdir -p \"$d/locked/a/b/c\"; head -c 100000 /dev/zero > \"$d/locked/a/b/c/data\"\n\
                  chmod 000 \"$d/locked/a/b/c\" \"$d/locked/a/b\" \"$d/locked/a\" \"$d/locked\"\n\
                  done\nls -ld \"$PWD/locked\"\necho locked\n";
    let attack = lab.attack(script);
    assert!(attack.log.contains("locked"), "{}", attack.log);
    let left = lab.run_dirs();
    assert!(left.is_empty(), "run directories were left: {left:?}");
    let tmp_after: BTreeSet<_> =
        std::fs::read_dir(std::env::temp_dir()).unwrap().flatten().map(|e| e.file_name()).collect();
    let new: Vec<_> =
        tmp_after.difference(&tmp_before).filter(|n| n.to_string_lossy().starts_with("forgeloop-")).collect();
    assert!(new.is_empty(), "forgeloop left directories in the shared temporary directory: {new:?}");
});

// Item 8: a forgeloop killed during a run (SIGKILL: nothing of it runs again) leaves its run
// directory behind; `gc` removes it, and never the directory of a run that still lives.
#[test]
fn gc_removes_the_run_directory_of_a_killed_forgeloop_and_keeps_a_live_ones() {
    for (tier, who) in [(Tier::Namespaces, Who::Root), (Tier::Landlock, Who::User)] {
        let lab = Lab::new(tier, who);
        let n = lab.hostile_pr(
            &[("killed-run.sh", "mkdir -p locked/a && chmod 000 locked/a locked\necho killed-run started\nsleep 30\n")],
            &[],
        );
        let mut killed = lab.spawn_test(n, r#"[["sh", "killed-run.sh"]]"#, &[]);
        assert!(lab.wait_for_log("killed-run started"), "{}", lab.live_logs());
        let victim = lab.run_dirs();
        assert_eq!(victim.len(), 1, "{victim:?}");
        killed.kill().unwrap();
        killed.wait().unwrap();
        // The command dies with forgeloop (its helper's parent-death signal).
        let left = support::wait_until_gone("killed-run.sh", Duration::from_secs(10));
        assert!(left.is_empty(), "the run outlived forgeloop: {left:?}");
        assert!(victim[0].exists(), "nothing was left to sweep");

        // Without the cache (`--fresh`): a run with it would take the dead run's free slot and
        // clear its directory itself, leaving gc nothing to sweep.
        let live = lab.spawn_test(n, r#"[["sh", "killed-run.sh"]]"#, &["--fresh"]);
        let logs_before = lab.live_logs().matches("killed-run started").count();
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while lab.live_logs().matches("killed-run started").count() == logs_before
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        let gc = lab.run(&["gc"]);
        assert_eq!(gc.code, 0, "{}\n{}", gc.stdout, gc.stderr);
        let runs = &gc.json()["run_dirs"];
        assert_eq!((runs["removed"].as_u64(), runs["live"].as_u64()), (Some(1), Some(1)), "{}", gc.stdout);
        assert!(!victim[0].exists(), "the dead run's directory is still there");
        let mut live = live;
        live.kill().unwrap();
        live.wait().unwrap();
    }
}

// Items 1 and 7: a file only root may read, anywhere the sandbox shows (a PATH directory, a
// toolchain home), stays unreadable: a run started by root runs as an unprivileged account.
every_way!(a_root_only_file_anywhere_visible_stays_unreadable, |lab: Lab| {
    // Only root can make a file the run's account cannot read; for a developer who is not
    // root, the run's account is theirs.
    if !sandbox_support::is_root() {
        eprintln!("skipped: a root-only file takes root to make");
        return;
    }
    let mut lab = lab;
    let (tools, goroot) = (lab.w.path("shared/tools"), lab.w.path("shared/goroot"));
    for dir in [&tools, &goroot] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("secret"), format!("{}-rootonly\n", lab.canary)).unwrap();
        std::fs::set_permissions(dir.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut up = dir.to_path_buf();
        while up != lab.w.sb.dir.path() {
            std::fs::set_permissions(&up, std::fs::Permissions::from_mode(0o755)).unwrap();
            up.pop();
        }
    }
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", tools.display());
    lab.set_env("PATH", &path);
    lab.set_env("GOROOT", goroot.to_str().unwrap());
    let attack =
        lab.attack(&format!("cat {t}/secret; cat \"$GOROOT/secret\"; ls -l {t}\nexit 0\n", t = tools.display()));
    assert!(attack.log.contains("secret"), "the directory was not visible:\n{}", attack.log);
    assert!(!attack.everything().contains(&format!("{}-rootonly", lab.canary)), "{}", attack.everything());
});

// Item 10: where Landlock cannot scope abstract Unix sockets (ABI below 6, an older kernel,
// here through the test seam), `"network": true` in the first tier would share the host's
// (X11, D-Bus): it is refused, saying why. With the scopes, a listener on an abstract socket
// outside the run is not reached even with the host's network.
#[test]
fn abstract_sockets_stay_closed_with_the_hosts_network() {
    let mut lab = Lab::new(Tier::Namespaces, Who::Root);
    let n = lab.hostile_pr(&[("noop", "")], &[]);
    lab.config("[network.repositories.\"acme/widget\"]\nopen = true\n");
    lab.set_env("FORGELOOP_SANDBOX_LANDLOCK_ABI", "5");
    let file = lab.w.path("commands-net.json");
    std::fs::write(&file, r#"{"commands": [["true"]], "network": true}"#).unwrap();
    let run = lab.run(&["test", "--pr", &format!("acme/widget#{n}"), "--commands-json", file.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.json()["status"], "SANDBOX_UNAVAILABLE", "{}", run.stdout);
    assert!(run.stdout.contains("abstract Unix sockets"), "{}", run.stdout);
    // Without the host's network the run needs no scopes (its network namespace has its own).
    assert_eq!(lab.test(n, r#"[["true"]]"#).report["status"], "TEST_PASSED");

    for (tier, who) in [(Tier::Namespaces, Who::Root), (Tier::Landlock, Who::User)] {
        let lab = Lab::new(tier, who);
        lab.config("[network.repositories.\"acme/widget\"]\nopen = true\n");
        let name = format!("forgeloop-abstract-{}", &lab.canary[6..20]);
        let listener = std::os::unix::net::UnixListener::bind_addr(
            &<std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
                name.as_bytes(),
            )
            .unwrap(),
        )
        .unwrap();
        listener.set_nonblocking(true).unwrap();
        let script = format!(
            "python3 - <<'EOF'\nimport socket\n\
             try:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('\\0{name}'); s.sendall(b'hello'); print('abstract connected')\n\
             except OSError as e:\n    print('abstract refused', e)\nEOF\n"
        );
        let n = lab.hostile_pr(&[("attack.sh", &script)], &[]);
        let attack = lab.test(n, r#"{"commands": [["sh", "attack.sh"]], "network": true}"#);
        assert!(attack.log.contains("abstract refused"), "{tier:?}: {}", attack.log);
        assert!(listener.accept().is_err(), "{tier:?}: the host's abstract socket was reached:\n{}", attack.log);
    }
}

// The controls: the same attacks with the person's `[runner] sandbox = "off"`, each caught by
// the observation its test relies on.
mod controls {
    use super::*;

    fn unsandboxed() -> Lab {
        let lab = Lab::new(Tier::Namespaces, Who::Root);
        lab.config("[runner]\nsandbox = \"off\"\n");
        lab
    }

    fn test_off(lab: &Lab, n: u64, commands: &str, extra: &[&str]) -> sandbox_support::Attack {
        let child = lab.spawn_test(n, commands, extra);
        let output = child.wait_with_output().unwrap();
        let run = support::Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        let report = run.json();
        assert_eq!(report["environment"]["sandbox"]["kind"], "off", "{}", run.stdout);
        let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
        sandbox_support::Attack { run, report, log }
    }

    #[test]
    fn a_setuid_shell_planted_without_the_sandbox_makes_another_account_root() {
        if sandbox_support::other_user().is_none() {
            return;
        }
        let lab = unsandboxed();
        // Unsandboxed, the test can also open every directory above its checkout.
        let script = format!(
            "{}\nd=\"$PWD\"; while [ \"$d\" != / ]; do chmod o+x \"$d\"; d=$(dirname \"$d\"); done\nsleep 3\n",
            SETUID_ATTACK.replace("sleep 3\n", "")
        );
        let n = lab.hostile_pr(&[("attack.sh", &script)], &[]);
        let child = lab.spawn_test(n, r#"[["sh", "attack.sh"]]"#, &[]);
        assert!(lab.wait_for_log("planted"));
        std::thread::sleep(Duration::from_millis(300));
        let mut planted = Vec::new();
        find_named(&lab.run_root(), "suid-sh", &mut planted);
        let tries: Vec<String> = planted
            .iter()
            .map(|f| as_other_account(&[f.to_str().unwrap(), "-p", "-c", "echo euid=$(id -u)"]))
            .collect();
        let _ = child.wait_with_output();
        assert!(tries.iter().any(|out| out.contains("euid=0")), "the control did not catch it: {tries:?}");
    }

    #[test]
    fn the_keyrings_are_read_without_the_sandbox() {
        let lab = unsandboxed();
        let plant = lab.w.path("plant.py");
        std::fs::write(&plant, PLANT_KEYS).unwrap();
        let n = lab.hostile_pr(&[("keys.py", READ_KEYS)], &[]);
        let file = lab.w.path("commands-keys.json");
        std::fs::write(&file, r#"[["python3", "keys.py"]]"#).unwrap();
        let pr = format!("acme/widget#{n}");
        let args = ["test", "--pr", &pr, "--commands-json", file.to_str().unwrap()];
        let output = lab.command_via(&["python3", plant.to_str().unwrap(), &lab.canary], &args).output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
        let reversed: String = format!("{}-session", lab.canary).chars().rev().collect();
        assert!(log.contains(&reversed), "the control did not catch it:\n{log}");
    }

    #[test]
    fn the_same_git_trap_in_an_ordinary_repository_fires() {
        let lab = Lab::new(Tier::Namespaces, Who::Root);
        let marker = lab.w.path("shared/marker-control");
        std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
        let repo = lab.w.path("shared/repo");
        std::fs::create_dir_all(&repo).unwrap();
        let out = Command::new("git").args(["init", "-q"]).current_dir(&repo).output().unwrap();
        assert!(out.status.success());
        let gitdir = repo.join(".git");
        let traps = git_traps(&marker).replace("gd=$(git rev-parse --git-dir)", &format!("gd={}", gitdir.display()));
        // Only the trap in the repository's own config, as the test would leave it with a
        // writable git directory and no rewrite.
        let setup = traps.lines().take(5).collect::<Vec<_>>().join("\n");
        let run = Command::new("sh").arg("-c").arg(setup).current_dir(&repo).output().unwrap();
        assert!(run.status.success(), "{run:?}");
        use_git_in(&lab, &repo);
        assert!(marker.exists(), "the control did not catch it");
    }

    #[test]
    fn a_root_only_file_is_read_without_the_sandbox() {
        let mut lab = unsandboxed();
        let tools = lab.w.path("shared/tools");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::write(tools.join("secret"), "rootonly-control\n").unwrap();
        std::fs::set_permissions(tools.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
        lab.set_env("PATH", &format!("{}:/usr/bin:/bin", tools.display()));
        let n = lab.hostile_pr(&[("attack.sh", &format!("cat {}/secret\n", tools.display()))], &[]);
        let attack = test_off(&lab, n, r#"[["sh", "attack.sh"]]"#, &[]);
        assert!(attack.log.contains("rootonly-control"), "the control did not catch it:\n{}", attack.log);
    }

    /// What removed a run's files before (a plain recursive remove, as the ordinary user) stops
    /// at a `0000` tree: the observation of the cleanup test can fail.
    #[test]
    fn a_plain_remove_stops_at_an_unreadable_tree() {
        let Some((uid, gid)) = sandbox_support::other_user() else { return };
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let tree = dir.path().join("t");
        let script = format!(
            "mkdir -p {t}/a/b && touch {t}/a/b/f && chmod 000 {t}/a/b {t}/a && rm -rf {t}; ls -d {t}",
            t = tree.display()
        );
        let out = Command::new("setpriv")
            .args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups", "sh", "-c", &script])
            .output()
            .unwrap();
        assert!(tree.exists(), "{out:?}");
        forgeloop::store::tree::remove_tree(&tree).unwrap();
    }
}

/// Every IPv4/IPv6 stream protocol but TCP, tried by the test: MPTCP (which this kernel has)
/// and SCTP, each then connecting to a listener on the host's loopback that no allowlist names.
const STREAM_PROTOCOLS: &str = r#"import socket, sys
port = int(sys.argv[1])
for family, name, host in ((socket.AF_INET, 'inet', '127.0.0.1'), (socket.AF_INET6, 'inet6', '::1')):
    for proto in (262, 132):
        try:
            s = socket.socket(family, socket.SOCK_STREAM, proto)
        except PermissionError:
            print(f'{name} {proto} refused'); continue
        except OSError as e:
            print(f'{name} {proto} unavailable {e}'); continue
        try:
            s.settimeout(5); s.connect((host, port)); s.sendall(b'stream-walked-past'); print(f'{name} {proto} connected')
        except OSError as e:
            print(f'{name} {proto} made, not connected: {e}')
"#;

// Third review, item 1: MPTCP (a stream socket, so not refused by type, and not TCP, so not
// confined by Landlock's port rules) walked past the egress proxy in the second tier. Every
// stream protocol but TCP is refused in every tier, with the allowlist and without a network.
every_way!(stream_sockets_of_any_protocol_but_tcp_are_refused, |lab: Lab| {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    lab.config("[network]\nallow = [\"127.0.0.1:9\"]\n");
    let n = lab.hostile_pr(&[("streams.py", STREAM_PROTOCOLS)], &[]);
    for network in ["allowlist", "off"] {
        let commands = format!(r#"{{"commands": [["python3", "streams.py", "{port}"]], "network": "{network}"}}"#);
        let attack = lab.test(n, &commands);
        for name in ["inet 262", "inet 132", "inet6 262", "inet6 132"] {
            assert!(attack.log.contains(&format!("{name} refused")), "{network}: {name}:\n{}", attack.log);
        }
        assert!(listener.accept().is_err(), "{network}: the host's listener was reached:\n{}", attack.log);
    }
});

/// TCP Fast Open: `sendto` with `MSG_FASTOPEN` connects inside the send, with no `connect`
/// call for Landlock's port rules or the connection record to see.
const FAST_OPEN: &str = r#"import socket, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    s.settimeout(5); s.sendto(b'fast-open-walked-past', socket.MSG_FASTOPEN, ('127.0.0.1', port)); print('fast open sent')
except OSError as e:
    print('fast open failed:', e)
"#;

// A connect past `connect`: refused in the second tier (seccomp), which has the host's network;
// the first tier's own network namespace has no way to the host's loopback anyway.
every_way!(tcp_fast_open_reaches_nothing_outside, |lab: Lab| {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    lab.config("[network]\nallow = [\"127.0.0.1:9\"]\n");
    let n = lab.hostile_pr(&[("fastopen.py", FAST_OPEN)], &[]);
    for network in ["allowlist", "off"] {
        let commands = format!(r#"{{"commands": [["python3", "fastopen.py", "{port}"]], "network": "{network}"}}"#);
        let attack = lab.test(n, &commands);
        assert!(attack.log.contains("fast open failed"), "{network}:\n{}", attack.log);
        if lab.tier == Tier::Landlock {
            assert!(attack.log.contains("Operation not permitted"), "{network}: refused by seccomp:\n{}", attack.log);
        }
        assert!(listener.accept().is_err(), "{network}: the host's listener was reached:\n{}", attack.log);
    }
});

/// A set-id file by `mknod`, and nested repositories whose config runs a command on `git status`.
fn mknod_and_nested_repositories(marker: &Path) -> String {
    format!(
        "M={m}\n\
         python3 -c \"import os; os.mknod('suid-mknod', 0o104755)\" && echo mknod-suid-made || echo mknod-suid-refused\n\
         python3 -c \"import os; os.mknod('sgid-mknod', 0o102755)\" && echo mknod-sgid-made || echo mknod-sgid-refused\n\
         rm -rf sub; git init -q sub; git -C sub config core.fsmonitor \"touch $M\"\n\
         mkdir -p deep/er; cp -R sub/.git deep/er/.git\n\
         mkdir -p pointer; printf 'gitdir: %s/sub/.git\\n' \"$PWD\" > pointer/.git\n\
         echo planted\n",
        m = marker.display()
    )
}

// Third review, item 2: `mknod` of a regular file with set-id bits, and a nested repository in
// a kept checkout whose `core.fsmonitor` ran when the person used git in it.
every_way!(mknod_makes_no_set_id_file_and_a_kept_checkout_holds_no_repository_of_the_prs, |lab: Lab| {
    let marker = lab.w.path(&format!("shared/marker-{}", lab.canary));
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    lab.give_back(marker.parent().unwrap());
    let n = lab.hostile_pr(&[("attack.sh", &mknod_and_nested_repositories(&marker))], &[]);
    let child = lab.spawn_test(n, r#"[["sh", "attack.sh"]]"#, &["--keep-checkout"]);
    let attack = lab.finish(child);
    assert!(attack.log.contains("planted"), "{}", attack.log);
    for refused in ["mknod-suid-refused", "mknod-sgid-refused"] {
        assert!(attack.log.contains(refused), "{refused}:\n{}", attack.log);
    }
    let kept = PathBuf::from(attack.report["kept_checkout"].as_str().expect("no kept_checkout"));
    for nested in ["sub/.git", "deep/er/.git", "pointer/.git"] {
        assert!(kept.join(nested).symlink_metadata().is_err(), "the kept checkout still holds {nested}");
    }
    let mut every = Vec::new();
    find_named(&kept, "", &mut every);
    for file in &every {
        let mode = file.symlink_metadata().unwrap().mode();
        assert_eq!(mode & 0o6000, 0, "{} has a set-id bit", file.display());
    }
    for dir in ["sub", "deep/er", "pointer"] {
        let used = use_git_in(&lab, &kept.join(dir));
        assert!(!marker.exists(), "the person's git in {dir} ran the PR's trap:\n{used}");
    }
    std::fs::remove_dir_all(&kept).unwrap();
});

/// Prints what the run was given in every common form: as is, URL-encoded, base64, hex,
/// reversed, and the database URL's password alone (plain and base64).
const LEAK_GIVEN: &str = r#"import base64, os, urllib.parse
for name in ("PERSON_VALUE", "DATABASE_URL"):
    value = os.environ[name]
    raw = value.encode()
    print("as-is", value)
    print("url", urllib.parse.quote(value, safe=""))
    print("b64", base64.b64encode(raw).decode())
    print("hex", raw.hex(), raw.hex().upper())
    print("reversed", value[::-1])
print("mode", os.environ["APP_MODE"][::-1])
password = urllib.parse.urlsplit(os.environ["DATABASE_URL"]).password
print("password", password, base64.b64encode(password.encode()).decode())
raise SystemExit(1)
"#;

// Third review, item 4: a value the run is given (`env_passthrough`, a command's `env`, the
// password of a URL) is masked in its common encodings too, in the log and in the comment.
#[test]
fn given_values_are_masked_in_every_common_form_a_test_prints_them() {
    use base64::Engine as _;
    let mut lab = Lab::new(Tier::Namespaces, Who::User);
    let person = format!("person-{}", support::world::fresh_secret("").to_lowercase());
    let password = format!("Pw-{}", support::world::fresh_secret("").to_lowercase());
    let url = format!("postgres://app:{password}@db.internal:5432/app");
    lab.set_env("PERSON_VALUE", &person);
    lab.set_env("DATABASE_URL", &url);
    let n = lab.hostile_pr(&[("leak.py", LEAK_GIVEN)], &[]);
    let commands = r#"{"commands": [{"argv": ["python3", "leak.py"], "env": {"APP_MODE": "integration-tests"}}], "env_passthrough": ["PERSON_VALUE", "DATABASE_URL"]}"#;
    let attack = lab.test(n, commands);
    assert!(attack.log.contains("password [REDACTED:env-value]"), "{}", attack.log);
    let everything = format!("{}\n{}", attack.everything(), attack.report["comment_markdown"]);
    for value in [person.as_str(), url.as_str(), password.as_str()] {
        let raw = value.as_bytes();
        let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let forms = [
            value.to_owned(),
            base64::engine::general_purpose::STANDARD.encode(raw),
            hex.to_uppercase(),
            hex,
            value.chars().rev().collect(),
        ];
        for form in forms {
            assert!(!everything.contains(&form), "{form} (a form of {value}) got out:\n{everything}");
        }
    }
    // A command's own `env` value is given too: masked, reversed or not.
    assert!(attack.log.contains("mode [REDACTED:env-value]"), "{}", attack.log);
    for encoded in ["postgres%3A%2F%2Fapp%3A", "Pw-"] {
        assert!(!everything.contains(encoded), "{encoded} got out:\n{everything}");
    }
}
