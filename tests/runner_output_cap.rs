//! 100 MB of output: the log stays under its cap with head, tail and an exact cut count, and
//! this process's memory does not grow with the output. Alone in its binary so that no other
//! test's allocations show up in the measurement.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod runner_support;

use forgeloop::domain::report::TestStatus;
use forgeloop::runner::DEFAULT_LOG_CAP;
use runner_support::{Fixture, profile};

const OUTPUT_BYTES: u64 = 100_000_000;

/// Peak resident set size of this process so far, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_megabytes_of_output_is_capped_in_file_and_memory() {
    let fx = Fixture::new();
    assert_eq!(fx.log_cap_bytes, DEFAULT_LOG_CAP);
    // `yes` repeats a 100-byte line; 100 MB is exactly a million of them, and `echo` then
    // adds an empty line.
    let script = format!("echo FIRST-LINE; yes \"$0\" | head -c {OUTPUT_BYTES}; echo; echo LAST-LINE");
    let line = "y".repeat(99);
    let commands = profile(&serde_json::json!([["sh", "-c", script, line]]).to_string());

    let before = peak_rss();
    let outcome = fx.run(&commands).await;
    let growth = peak_rss().saturating_sub(before);

    assert_eq!(outcome.status, TestStatus::Passed);
    assert!(outcome.log_truncated);
    let log = fx.log();
    assert_eq!(outcome.log_bytes_written, log.len() as u64);
    assert!(log.len() as u64 <= DEFAULT_LOG_CAP, "log is {} bytes", log.len());

    // Head and tail are there.
    let header_end = log.find('\n').unwrap() + 1;
    assert!(log[..header_end].starts_with("$ sh -c "));
    assert!(log[header_end..].starts_with(&format!("FIRST-LINE\n{line}\n{line}\n")));
    let footer_start = log.trim_end_matches('\n').rfind('\n').unwrap() + 1;
    assert!(log[footer_start..].starts_with("[exit 0 after "), "{}", &log[footer_start..]);
    assert!(log[..footer_start].ends_with(&format!("{line}\n{line}\n\nLAST-LINE\n")));

    // The marker says how much was cut, and the count is right: what is kept plus what was
    // cut is everything the run wrote (give or take the newline added before the marker
    // when the head ends mid-line).
    let marker_start = log.find("[... forgeloop cut ").unwrap();
    let marker_end = marker_start + log[marker_start..].find('\n').unwrap() + 1;
    let cut: u64 = log[marker_start + 19..].split(' ').next().unwrap().parse().unwrap();
    assert_eq!(&log[marker_start..marker_end], format!("[... forgeloop cut {cut} bytes of output here ...]\n"));
    let kept = (log.len() - (marker_end - marker_start)) as u64;
    let written = header_end as u64 + 11 + OUTPUT_BYTES + 1 + 10 + (log.len() - footer_start) as u64;
    assert!(kept + cut == written || kept + cut == written + 1, "kept {kept} + cut {cut} != written {written}");

    // Memory: the design holds well under 1 MiB of buffers; keeping the 32 MiB tail in memory
    // would break this bound.
    eprintln!("peak RSS growth during the run: {} KiB", growth / 1024);
    assert!(growth < 16 * 1024 * 1024, "peak RSS grew by {growth} bytes");
}
