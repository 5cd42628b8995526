//! Environment knobs that size a test (`FORGELOOP_CRASH_KILLS`, `REDACT_CASES`,
//! `FORGELOOP_HOSTILE_OUTPUT_MB`): a knob may make a test longer or shorter, never empty, so a
//! value that would make it prove nothing fails the test loudly instead of letting it pass.
#![allow(dead_code)]

/// `name` from the environment, else `default`. A value that is not a whole number, or is
/// under `min`, panics naming the knob and why `min` is the floor.
pub fn knob(name: &str, default: u64, min: u64, why: &str) -> u64 {
    let Some(raw) = std::env::var_os(name) else { return default };
    let text = raw.to_string_lossy().into_owned();
    match text.trim().parse::<u64>() {
        Ok(n) if n >= min => n,
        Ok(n) => {
            panic!("{name}={n} would make this test prove nothing ({why}): use at least {min} (default {default})")
        }
        Err(_) => panic!("{name}={text:?} is not a whole number (default {default}, at least {min})"),
    }
}

/// Runs the test `test` of this same test binary, alone, with `name=value` in its
/// environment: whether it passed, and what it printed. How a test shows that its knob
/// refuses a vacuous value.
pub fn run_self_with(test: &str, name: &str, value: &str) -> (bool, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads", "1", "--nocapture"])
        .env(name, value)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}
