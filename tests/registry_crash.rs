//! A `project bind` killed at any moment leaves no record or a complete one, never a torn
//! record, and the next bind removes whatever temp file the killed one left (reference
//! design §12.11 item 25). Children are SIGKILLed at pseudo-random moments in a loop.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use std::fs;
use std::process::Stdio;
use std::thread::sleep;
use std::time::Duration;

use forgeloop::registry::{Registry, RepoKey};
use forgeloop::store::atomic::is_temp_name;
use support::Sandbox;

const URL: &str = "https://chatgpt.com/g/g-p-example/project";

/// Small deterministic generator for kill delays.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

#[test]
fn killed_binds_leave_no_torn_record_and_no_lasting_temp_file() {
    let sb = Sandbox::new();
    let root = sb.path("projects");
    let registry = Registry::new(&root);
    let key = RepoKey::parse("acme/widget").unwrap();
    let mut rng = Lcg(0x0b1d);
    let (mut complete, mut absent) = (0, 0);
    for _ in 0..30 {
        let mut child = sb
            .command(&[
                "project",
                "bind",
                "--repository",
                "acme/widget",
                "--project-url",
                URL,
                "--project-name",
                "Widget",
                "--registry",
                root.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        sleep(Duration::from_micros(rng.next(25_000)));
        let _ = child.kill();
        let _ = child.wait();
        // Either outcome is fine; a torn record would be an error here.
        match registry.lookup(&key).unwrap() {
            Some(record) => {
                assert_eq!(record.project_url, URL);
                complete += 1;
                registry.unbind(&key, URL).unwrap();
            }
            None => absent += 1,
        }
    }
    assert_eq!(complete + absent, 30);
    // The next bind cleans up every temp file of a dead process.
    let owner = root.join("acme");
    registry.bind(&key, URL, "Widget").unwrap();
    let names: Vec<String> =
        fs::read_dir(&owner).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !is_temp_name(n)), "{names:?}");
    assert_eq!(names, ["widget.json"]);
}
