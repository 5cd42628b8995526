//! Ordinary accounts for tests that run forgeloop (or attack its files) as someone other than
//! root, created when the tests run as root (CI does).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The account forgeloop runs as in the "as an ordinary user" tests.
pub const TEST_USER: &str = "forgeloop-sbx";
/// Another local account, which never runs forgeloop: what it can do to a run's files is what
/// any other account on the machine can.
pub const OTHER_USER: &str = "forgeloop-sbx2";

/// `name`'s uid and gid, creating the account when missing.
pub fn account(name: &str) -> (u32, u32) {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, name]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    let mut why = String::new();
    if id("-u").is_none() {
        // Several test binaries may race to create it; a second useradd failing is fine (the
        // account is there afterwards), so its error is kept only to say why when it is not.
        match Command::new(useradd()).args(["--no-create-home", "--shell", "/bin/sh", name]).output() {
            Ok(out) => why = String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            Err(e) => why = format!("cannot run {}: {e}", useradd().display()),
        }
    }
    match (id("-u"), id("-g")) {
        (Some(uid), Some(gid)) => (uid, gid),
        _ => panic!(
            "the test account {name} is missing and could not be created ({why}); these tests run forgeloop as \
             another account: run them as root (which creates {TEST_USER} and {OTHER_USER}), or create the \
             accounts once: useradd --no-create-home --shell /bin/sh {name}"
        ),
    }
}

/// `useradd`, also where a root shell with a short `PATH` (no `/usr/sbin`) would not look.
fn useradd() -> std::path::PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("useradd")).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(["/usr/sbin/useradd", "/sbin/useradd"].map(std::path::PathBuf::from))
        .find(|p| p.is_file())
        .unwrap_or_else(|| "useradd".into())
}

/// [`account`] for a test that acts as another account (`setpriv` to another uid needs root):
/// for an ordinary user, `None`, and the test says why it skips rather than fail.
pub fn account_if_root(name: &str) -> Option<(u32, u32)> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return Some(account(name));
    }
    eprintln!("skipped: this test acts as the account {name}, which takes root (setpriv to another uid)");
    None
}

/// `program` run as `uid:gid` with no supplementary groups.
pub fn as_account(uid: u32, gid: u32, program: &Path) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups"]).arg(program);
    cmd
}

pub fn chown_tree(path: &Path, uid: u32, gid: u32) {
    let status = Command::new("chown").args(["-R", &format!("{uid}:{gid}")]).arg(path).status().unwrap();
    assert!(status.success());
}
