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
    if id("-u").is_none() {
        // Several test binaries may race to create it; a second useradd failing is fine.
        let _ = Command::new("useradd").args(["--no-create-home", "--shell", "/bin/sh", name]).output();
    }
    (id("-u").expect("could not create the test account"), id("-g").expect("no gid for the test account"))
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
