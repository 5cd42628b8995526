use forgeloop::redact::Redactor;
use std::time::Instant;
#[test]
fn pathological() {
    let r = Redactor::builder().known_value("x", "abcdefgh1234").home_dir(std::path::Path::new("/home/dev")).build();
    let cases: Vec<(&str, String)> = vec![
        ("begin lines", "-----BEGIN PRIVATE KEY-----\n".repeat(40_000)),
        ("begin one line", "-----BEGIN PRIVATE KEY-----".repeat(40_000)),
        ("token=", "token=".repeat(200_000)),
        ("password = aB3$", "password = aB3$xY9!qW ".repeat(50_000)),
        ("urls", "https://u:p@h ".repeat(100_000)),
        ("eyJ", "eyJabcdefghijk.eyJabcdefghijk.".repeat(40_000)),
        ("bearer", "Bearer ".repeat(200_000)),
        ("home", "/home/dev/home/x/".repeat(80_000)),
        ("known overlapping", "abcdefgh1234abcdefgh1234".repeat(50_000)),
        ("a", "a".repeat(3_000_000)),
        ("nl", "\n".repeat(3_000_000)),
        ("ansi", "\x1b[31mghp_".repeat(200_000)),
        ("sk-", "sk-".repeat(400_000)),
    ];
    for (name, text) in cases {
        let t = Instant::now();
        let out = r.redact(&text);
        let d = t.elapsed();
        let again = r.redact(&out);
        println!(
            "{name:>20}: {:>8} bytes in {:?} ({:.0} MB/s) idempotent={}",
            text.len(),
            d,
            text.len() as f64 / d.as_secs_f64() / 1e6,
            again == out
        );
    }
}
#[test]
fn build_costs() {
    let vars: Vec<(String, String)> =
        (0..20).map(|i| (format!("SERVICE_{i}_TOKEN"), format!("v{i}-Xk9mQ2vL7pZ4aB3c"))).collect();
    let t = Instant::now();
    let r = Redactor::builder()
        .known_value("github-token", "ghs_abcdefghijklmnopqrstuvwxyz0123456789")
        .env_vars(vars)
        .home_dir(std::path::Path::new("/home/dev"))
        .build();
    println!("build with 21 values: {:?} {:?}", t.elapsed(), r);
    let t = Instant::now();
    for i in 0..100 {
        let _ = r.with_checkout(std::path::Path::new(&format!("/tmp/run-{i}/checkout")));
    }
    println!("with_checkout: {:?} each", t.elapsed() / 100);
}
