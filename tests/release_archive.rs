//! The release archive as a person downloads it: `dist build` made it (`.ci/run` does, then runs
//! this test with `FORGELOOP_RELEASE_ARCHIVE` set). Its checksum matches, it holds what
//! `cargo binstall`'s metadata says it holds, it needs no OpenSSL, and from an empty directory,
//! with nothing of this checkout on `PATH`, its `forgeloop demo --headless` runs the whole loop —
//! PR code in the sandbox through the `forgeloop-sandbox` it ships beside the binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

const ARCHIVE_VAR: &str = "FORGELOOP_RELEASE_ARCHIVE";

/// The archive named by `FORGELOOP_RELEASE_ARCHIVE`; this test is run on purpose, so a missing
/// archive fails rather than skips.
fn archive() -> PathBuf {
    let path = std::env::var_os(ARCHIVE_VAR).unwrap_or_else(|| {
        panic!("set {ARCHIVE_VAR} to the archive `dist build --artifacts=local` made (target/distrib/forgeloop-TARGET.tar.xz)")
    });
    let path = PathBuf::from(path);
    assert!(path.is_file(), "{ARCHIVE_VAR}={} is not a file", path.display());
    path
}

/// The target triple in the archive's name: `forgeloop-<target>.tar.xz`.
fn target_of(archive: &Path) -> String {
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let target = name.strip_prefix("forgeloop-").and_then(|rest| rest.strip_suffix(".tar.xz"));
    target.unwrap_or_else(|| panic!("{name} is not named forgeloop-TARGET.tar.xz")).to_owned()
}

/// `[package.metadata.binstall]` of Cargo.toml, the one place `cargo binstall` reads.
fn binstall_metadata() -> toml::Table {
    let manifest: toml::Table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap().parse().unwrap();
    manifest["package"]["metadata"]["binstall"].as_table().expect("[package.metadata.binstall]").clone()
}

/// A binstall template with the values it has for this archive (`{ repo }` left as it is: the
/// file name part is what the archive must match).
fn render(template: &str, target: &str, bin: &str) -> String {
    template
        .replace("{ name }", "forgeloop")
        .replace("{ version }", env!("CARGO_PKG_VERSION"))
        .replace("{ target }", target)
        .replace("{ bin }", bin)
        .replace("{ binary-ext }", "")
        .replace("{ archive-suffix }", ".tar.xz")
}

fn unpack(archive: &Path, into: &Path) {
    let out = Command::new("tar").arg("-xJf").arg(archive).arg("-C").arg(into).output().unwrap();
    assert!(out.status.success(), "tar failed: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
#[ignore = "needs the release archive: .ci/run builds it with `dist build` and sets FORGELOOP_RELEASE_ARCHIVE"]
fn the_release_archive_installs_and_runs_the_demo_from_an_empty_directory() {
    let archive = archive();
    let target = target_of(&archive);

    // The checksum dist publishes beside the archive is the archive's.
    let sums = std::fs::read_to_string(format!("{}.sha256", archive.display())).unwrap();
    let published = sums.split_whitespace().next().unwrap().to_owned();
    let actual = format!("{:x}", Sha256::digest(std::fs::read(&archive).unwrap()));
    assert_eq!(published, actual, "the .sha256 beside the archive does not match it");

    // binstall's URL template names this file, and its bin-dir finds both binaries inside.
    let meta = binstall_metadata();
    let url = render(meta["pkg-url"].as_str().unwrap(), &target, "");
    assert!(
        url.ends_with(&format!("/{}", archive.file_name().unwrap().to_string_lossy())),
        "binstall's pkg-url {url} does not name the archive dist made"
    );
    assert_eq!(meta["pkg-fmt"].as_str(), Some("txz"), "dist's archives are .tar.xz");

    let dir = tempfile::tempdir().unwrap();
    let unpacked = dir.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    unpack(&archive, &unpacked);
    let bin_dir = meta["bin-dir"].as_str().unwrap();
    let [forgeloop, helper] =
        ["forgeloop", "forgeloop-sandbox"].map(|bin| unpacked.join(render(bin_dir, &target, bin)));
    for bin in [&forgeloop, &helper] {
        assert!(bin.is_file(), "binstall's bin-dir {bin_dir} names {}, which the archive lacks", bin.display());
    }
    for doc in ["README.md", "LICENSE"] {
        assert!(forgeloop.with_file_name(doc).is_file(), "the archive lacks {doc}");
    }

    // git over HTTPS is rustls: no libssl or libcrypto to install beside it.
    let ldd = Command::new("ldd").arg(&forgeloop).output().unwrap();
    let linked = String::from_utf8_lossy(&ldd.stdout).into_owned();
    assert!(!linked.contains("libssl") && !linked.contains("libcrypto"), "the release binary links OpenSSL:\n{linked}");
    if target.ends_with("-musl") {
        // The musl archives are for any distribution: nothing loaded at run time, the helper too.
        for bin in [&forgeloop, &helper] {
            let ldd = Command::new("ldd").arg(bin).output().unwrap();
            let said = format!("{}{}", String::from_utf8_lossy(&ldd.stdout), String::from_utf8_lossy(&ldd.stderr));
            assert!(
                said.contains("not a dynamic executable") || said.contains("statically linked"),
                "{} is not static:\n{said}",
                bin.display()
            );
        }
    }

    // From an empty directory with a fresh HOME and a PATH of the system's alone.
    let (home, tmp, cwd) = (dir.path().join("home"), dir.path().join("tmp"), dir.path().join("empty"));
    for d in [&home, &tmp, &cwd] {
        std::fs::create_dir(d).unwrap();
    }
    let run = |args: &[&str]| {
        Command::new(&forgeloop)
            .args(args)
            .current_dir(&cwd)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .env("HOME", &home)
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let version = run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("forgeloop {}", env!("CARGO_PKG_VERSION")),
        "{}",
        String::from_utf8_lossy(&version.stderr)
    );

    let demo = run(&["demo", "--headless"]);
    let stdout = String::from_utf8_lossy(&demo.stdout);
    let stderr = String::from_utf8_lossy(&demo.stderr);
    assert_eq!(demo.status.code(), Some(0), "the demo failed:\n{stdout}\n{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["status"], "DEMO_OK", "{summary:#}");
    let cycles = summary["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 10, "{summary:#}");
    for cycle in cycles {
        assert_eq!((&cycle["ok"], &cycle["status"]), (&serde_json::Value::Bool(true), &cycle["expected"]), "{cycle:#}");
    }
    // The demo's runs happened in sandboxes (the shipped helper's): its summary lists them.
    let isolated = |c: &&serde_json::Value| {
        c["sandboxes"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s.as_str().is_some_and(|s| s.starts_with("isolated"))))
    };
    let sandboxed = cycles.iter().filter(isolated).count();
    assert!(sandboxed >= 3, "few cycles ran in a sandbox: {summary:#}");
    // Nothing was written into the directory it ran from.
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0, "the demo wrote into its working directory");
}
