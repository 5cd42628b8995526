//! 100 MB printed as one line. The runner itself holds no more than one read of it; whether
//! memory stays bounded then depends on the streaming redactor holding back a bounded amount
//! of a line (design §5.2.5 and §7). Alone in its binary so the measurement is this test's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod runner_support;

use forgeloop::domain::report::TestStatus;
use runner_support::{Fixture, profile};

fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_endless_line_does_not_grow_memory() {
    let mut fx = Fixture::new();
    fx.log_cap_bytes = 4 * 1024 * 1024;
    let commands = profile(r#"[["sh", "-c", "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo END"]]"#);
    let before = peak_rss();
    let outcome = fx.run(&commands).await;
    let growth = peak_rss().saturating_sub(before);
    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(outcome.log_truncated);
    assert!(fx.log().contains("\nEND\n[exit 0 after "));
    eprintln!("peak RSS growth: {} KiB", growth / 1024);
    assert!(growth < 16 * 1024 * 1024, "peak RSS grew by {growth} bytes");
}
