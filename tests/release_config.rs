//! The release machinery agrees with itself and with the README. Cargo.toml's `repository` is
//! the one place the project's public URL is written: dist's release workflow, its installer
//! script, `cargo binstall` and the README's install paths all follow from it, so the README
//! may name a release only when there is one to name (docs/releasing.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn toml_of(rel: &str) -> toml::Table {
    read(rel).parse().unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The README's install section: from its heading to the next.
fn install_section() -> String {
    let readme = read("README.md");
    let start = readme.find("\n## Install\n").expect("README has an Install section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_owned()
}

#[test]
fn one_dist_version_everywhere_it_is_installed() {
    let dist = toml_of("dist-workspace.toml");
    let version = dist["dist"]["cargo-dist-version"].as_str().unwrap();
    let pinned = format!("cargo install cargo-dist --locked --version {version}");
    for file in [".ci/run", "docs/releasing.md"] {
        let text = read(file);
        let installs = text.matches("cargo install cargo-dist").count();
        assert!(installs >= 1, "{file} does not install dist");
        // Each install names the pinned version (`.ci/run` reads it from the config).
        let ok = text.matches(&pinned).count() + text.matches("--version \"$dist_version\"").count();
        assert_eq!(ok, installs, "{file} installs a dist other than {version} (dist-workspace.toml)");
    }
}

#[test]
fn every_release_target_is_linux_and_binstall_takes_only_ours() {
    let dist = toml_of("dist-workspace.toml");
    let targets: Vec<&str> = dist["dist"]["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    // The sandbox is Linux's (namespaces, Landlock): an archive for another OS would refuse all PR code.
    assert!(targets.iter().all(|t| t.contains("-linux-")), "{targets:?}");
    for arch in ["x86_64", "aarch64"] {
        for libc in ["gnu", "musl"] {
            let target = format!("{arch}-unknown-linux-{libc}");
            assert!(targets.contains(&target.as_str()), "{target} is not released: {targets:?}");
        }
    }
    let manifest = toml_of("Cargo.toml");
    let binstall = manifest["package"]["metadata"]["binstall"].as_table().unwrap();
    let disabled = binstall["disabled-strategies"].as_array().unwrap();
    assert!(disabled.iter().any(|s| s.as_str() == Some("quick-install")), "binstall may take a third party's build");
    assert!(binstall["pkg-url"].as_str().unwrap().starts_with("{ repo }/releases/download/v{ version }/"));
    assert_eq!(manifest["profile"]["dist"]["inherits"].as_str(), Some("release"));
}

#[test]
fn the_readme_names_a_release_only_when_the_repository_is_set() {
    let manifest = toml_of("Cargo.toml");
    let dist = toml_of("dist-workspace.toml");
    let install = install_section();
    let release_workflow = root().join(".github/workflows/release.yml");
    match manifest["package"].get("repository").and_then(|r| r.as_str()) {
        None => {
            // No public home yet: nothing may point at a release, and dist is configured only
            // for what it can do without one (it refuses a GitHub workflow or an installer
            // script that has no URL to download from).
            assert!(install.contains("No release is published yet"), "{install}");
            for absent in ["binstall", "/releases/", "installer.sh"] {
                assert!(
                    !install.contains(absent),
                    "the README's install section names {absent:?} with no repository set"
                );
            }
            assert!(dist["dist"].get("ci").is_none(), "dist-workspace.toml asks for CI with no repository set");
            let installers = dist["dist"]["installers"].as_array().unwrap();
            assert!(installers.is_empty(), "an installer needs the repository's release URL");
            assert!(!Path::new(&release_workflow).exists(), "a release workflow with no repository for it");
        }
        Some(url) => {
            let parsed = url::Url::parse(url).unwrap();
            assert_eq!(parsed.host_str(), Some("github.com"), "dist's releases are GitHub's: {url}");
            assert_eq!(parsed.path_segments().map(|s| s.count()), Some(2), "{url} is not github.com/OWNER/NAME");
            assert!(!install.contains("No release is published yet"), "{install}");
            for present in
                [format!("{url}/releases/latest/download/forgeloop-installer.sh"), "cargo binstall".to_owned()]
            {
                assert!(install.contains(&present), "the README's install section lacks {present}");
            }
            assert_eq!(dist["dist"]["ci"].as_str(), Some("github"));
            assert!(dist["dist"]["installers"].as_array().unwrap().iter().any(|i| i.as_str() == Some("shell")));
            assert!(release_workflow.is_file(), "dist's release workflow is not committed (`dist init`)");
        }
    }
}
