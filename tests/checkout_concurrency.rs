//! One mirror, many users: the per-mirror lock serialises fetch+checkout across threads and
//! processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "support/checkout_fixture.rs"]
mod fixture;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fixture::{Fixture, git, status};
use forgeloop::checkout::{CheckoutError, prepare};

#[test]
fn threads_preparing_from_one_new_mirror_all_succeed() {
    let fx = Fixture::new();
    git(&fx.work, &["checkout", "-q", "-b", "feature"]);
    for i in 0..10 {
        fx.commit(&format!("f{i}.txt"), &format!("{i}\n"), &format!("c{i}"));
    }
    let sha = fx.push_pr(1);
    let url = fx.base_url();

    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| prepare(&fx.request(&url, 1, &sha)))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let checkouts: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    for co in &checkouts {
        assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), sha);
        assert_eq!(status(co.path()), "");
    }
    // Under the lock exactly one caller creates the mirror and moves the ref.
    assert_eq!(checkouts.iter().filter(|c| c.fetch.mirror_created).count(), 1);
    assert_eq!(checkouts.iter().filter(|c| c.fetch.fetched).count(), 1);
    let dirs: std::collections::HashSet<_> = checkouts.iter().map(|c| c.path().to_path_buf()).collect();
    assert_eq!(dirs.len(), 4, "each caller gets its own directory");
}

#[test]
fn another_process_holding_the_lock_makes_prepare_wait() {
    let fx = Fixture::new();
    let sha = fx.push_pr(1);
    let url = fx.base_url();
    let lock = fx.mirrors.join("acme").join("widget.git.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();

    // flock(1) holds an exclusive flock(2) on the lock file until its stdin closes.
    let mut holder = Command::new("flock")
        .arg("-x")
        .arg(&lock)
        .args(["sh", "-c", "echo locked; read _"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("this test needs flock(1) from util-linux");
    let mut line = String::new();
    BufReader::new(holder.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "locked");

    let cancel = Arc::new(AtomicBool::new(false));
    let mut req = fx.request(&url, 1, &sha);
    req.cancel = Some(cancel.clone());
    let result = std::thread::scope(|s| {
        let waiter = s.spawn(|| prepare(&req));
        std::thread::sleep(Duration::from_millis(300));
        cancel.store(true, Ordering::Relaxed);
        waiter.join().unwrap()
    });
    assert!(matches!(result, Err(CheckoutError::Cancelled)), "must still be waiting for the lock: {result:?}");
    assert!(!fx.mirrors.join("acme").join("widget.git").exists(), "nothing touched while locked");

    drop(holder.stdin.take());
    holder.wait().unwrap();
    let co = prepare(&fx.request(&url, 1, &sha)).unwrap();
    assert_eq!(git(co.path(), &["rev-parse", "HEAD"]), sha);
}
