//! Redaction throughput on a generated realistic test log (cargo, pytest, npm, git and JSON
//! log lines with the run's checkout and home paths) of 100 MB with about one secret per
//! 10 KB, whole-text and streaming, with the full rule set and a session's known values;
//! then again with 20 user rules (`[[redact.rules]]`) added.
//!
//! `cargo bench --bench redact -- --warm-up-time 1 --measurement-time 5` runs criterion.
//! `FORGELOOP_BENCH_QUICK=1 cargo bench --bench redact` just prints MB/s (3 runs each).
//! `FORGELOOP_BENCH_MB=20` changes the log size, `FORGELOOP_BENCH_RUNS=10` the quick runs;
//! `FORGELOOP_BENCH_NO_CHECK=1` skips the check that no secret survived (for profiling);
//! `FORGELOOP_BENCH_DUMP=FILE` writes the log to FILE and stops (to profile parts on it);
//! `FORGELOOP_BENCH_ONLY=whole-text` runs only the quick case of that name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "../tests/support/redact_corpus.rs"]
mod redact_corpus;
#[path = "../tests/support/redact_secrets.rs"]
mod redact_secrets;

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use forgeloop::redact::{Redactor, RuleSpec, UserRules};
use redact_secrets::{B62, Rng};

const CHUNK: usize = 64 * 1024;

fn session() -> Redactor {
    let mut rng = Rng::new(77);
    let token = format!("ghs_{}", rng.mixed(B62, 36));
    let npm = rng.mixed(B62, 30);
    let db = rng.mixed(B62, 16);
    Redactor::builder()
        .known_value("github-token", &token)
        .env_vars([("NPM_TOKEN", npm.as_str()), ("DB_PASSWORD", db.as_str()), ("PATH", "/usr/bin:/bin")])
        .home_dir(Path::new("/home/dev"))
        .build()
        .with_checkout(Path::new("/tmp/forgeloop-run/checkout"))
}

/// Twenty organisation formats of the kinds people add: prefixed tokens (most), plus
/// `name = value` rules keyed on words logs are full of, whose regex runs at every hit.
fn user_rules() -> UserRules {
    let prefixes = [
        "acme_",
        "corp-key-",
        "ztok_",
        "orgsec_",
        "xyzzy-",
        "tenant_",
        "mycorp.",
        "intra-",
        "vault:v1:",
        "hvs.",
        "dop_v1_",
        "shpat_",
        "lin_api_",
        "pk_prod_",
        "svc-tok-",
        "ak-prod-",
        "bot_tok_",
        "glsa_",
    ];
    let mut specs: Vec<RuleSpec> = prefixes
        .iter()
        .enumerate()
        .map(|(i, prefix)| {
            let escaped: String =
                prefix.chars().map(|c| if c == '.' { "\\.".to_owned() } else { c.to_string() }).collect();
            RuleSpec {
                id: format!("org-format-{i}"),
                regex: format!(r"({escaped}[A-Za-z0-9]{{32}})\b"),
                keywords: vec![(*prefix).to_owned()],
                entropy: Some(3.0),
            }
        })
        .collect();
    specs.push(RuleSpec {
        id: "org-session".into(),
        regex: r"(?i)session[_-]?(?:id|token)\s*[:=]\s*([A-Za-z0-9]{40})\b".into(),
        keywords: vec!["session".into()],
        entropy: Some(3.5),
    });
    specs.push(RuleSpec {
        id: "org-service-token".into(),
        regex: r#"(?i)token["']?\s*[:=]\s*["']?(svc\.[A-Za-z0-9]{24})\b"#.into(),
        keywords: vec!["token".into()],
        entropy: None,
    });
    UserRules::compile(&specs).unwrap_or_else(|e| panic!("bench user rules: {e}"))
}

fn stream(r: &Redactor, log: &str) -> usize {
    let mut s = r.stream(std::io::sink());
    for chunk in log.as_bytes().chunks(CHUNK) {
        s.write_all(chunk).unwrap_or_default();
    }
    s.finish().map(|_| log.len()).unwrap_or_default()
}

/// CPU time this thread has used, from `/proc/thread-self/schedstat` (Linux): on a machine
/// shared with other work, wall time overstates the cost of one core's work.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn quick(r: &Redactor, with_rules: &Redactor, log: &str) {
    let mb = log.len() as f64 / 1e6;
    let runs: usize = std::env::var("FORGELOOP_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    for (name, run) in [
        ("whole-text", &(|| r.redact(log).len()) as &dyn Fn() -> usize),
        ("stream (64 KiB writes)", &|| stream(r, log)),
        ("whole-text + 20 user rules", &|| with_rules.redact(log).len()),
        ("stream + 20 user rules", &|| stream(with_rules, log)),
    ] {
        if std::env::var("FORGELOOP_BENCH_ONLY").is_ok_and(|only| only != name) {
            continue;
        }
        let (mut best_wall, mut best_cpu) = (f64::MAX, f64::MAX);
        for _ in 0..runs {
            let cpu_start = thread_cpu_seconds();
            let start = Instant::now();
            black_box(run());
            best_wall = best_wall.min(start.elapsed().as_secs_f64());
            if let (Some(a), Some(b)) = (cpu_start, thread_cpu_seconds()) {
                best_cpu = best_cpu.min(b - a);
            }
        }
        let cpu =
            if best_cpu < f64::MAX { format!("{:8.1} MB/s per CPU-second", mb / best_cpu) } else { String::new() };
        println!("{name:>26}: {:8.1} MB/s wall  {cpu}  ({mb:.0} MB, best of {runs})", mb / best_wall);
    }
}

fn main() {
    let mb: usize = std::env::var("FORGELOOP_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let (log, secrets) = redact_corpus::realistic_log(1, mb * 1_000_000, 10 * 1024);
    let r = session();
    let with_rules = r.with_user_rules(&user_rules());
    println!("log: {} bytes, {} secrets, {} lines", log.len(), secrets.len(), log.lines().count());
    if let Some(path) = std::env::var_os("FORGELOOP_BENCH_DUMP") {
        std::fs::write(&path, &log).unwrap_or_else(|e| panic!("cannot write the log: {e}"));
        return;
    }
    if std::env::var_os("FORGELOOP_BENCH_NO_CHECK").is_none() {
        let any_secret = aho_corasick::AhoCorasick::new(&secrets).unwrap_or_else(|e| panic!("secret automaton: {e}"));
        for redactor in [&r, &with_rules] {
            let out = redactor.redact(&log);
            if let Some(m) = any_secret.find(out.as_ref()) {
                let line_start = out[..m.start()].rfind('\n').map_or(0, |i| i + 1);
                let line_end = out[m.end()..].find('\n').map_or(out.len(), |i| m.end() + i);
                panic!("a secret survived redaction, in the line {:?}", &out[line_start..line_end]);
            }
        }
    }

    if std::env::var_os("FORGELOOP_BENCH_QUICK").is_some() {
        quick(&r, &with_rules, &log);
        return;
    }
    let mut c = Criterion::default().sample_size(10).configure_from_args();
    let mut group = c.benchmark_group("redact");
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.bench_function("whole_text", |b| b.iter(|| black_box(r.redact(black_box(&log))).len()));
    group.bench_function("stream_64k_writes", |b| b.iter(|| stream(&r, black_box(&log))));
    group
        .bench_function("whole_text_20_user_rules", |b| b.iter(|| black_box(with_rules.redact(black_box(&log))).len()));
    group.bench_function("stream_64k_writes_20_user_rules", |b| b.iter(|| stream(&with_rules, black_box(&log))));
    group.finish();
    c.final_summary();
}
