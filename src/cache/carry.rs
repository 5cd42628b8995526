//! What never carries over from one run to the next (design §5.6): the places in a cache
//! where a tool reads configuration or finds programs to run. A run may write there (a build
//! may `cargo install` a helper); before the next run of any layer, forgeloop removes what it
//! wrote, so the next run sees the base layer's (the person's own) or nothing. The base layer
//! is scrubbed too, after it is warmed.
//!
//! docs/sandbox.md's table lists every row; a test keeps the two the same.

use std::io;
use std::path::{Component, Path};

use crate::store::tree;

/// One place in a layer (relative to it) that never carries over, with what it would change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeverCarried {
    /// The ecosystem it belongs to.
    pub ecosystem: &'static str,
    /// The path below the layer (a file or a directory).
    pub path: &'static str,
    /// What a run could do to a later one through it.
    pub why: &'static str,
}

const fn row(ecosystem: &'static str, path: &'static str, why: &'static str) -> NeverCarried {
    NeverCarried { ecosystem, path, why }
}

/// Every place, by ecosystem.
pub const NEVER_CARRIED: &[NeverCarried] = &[
    row("Cargo", "cargo-home/config", "a `runner`, `rustflags` or `[target]` linker for every later build"),
    row("Cargo", "cargo-home/config.toml", "the same, in the newer file name"),
    row("Cargo", "cargo-home/credentials", "registry tokens cargo would send"),
    row("Cargo", "cargo-home/credentials.toml", "the same, in the newer file name"),
    row("Cargo", "cargo-home/bin", "programs `cargo install` put on the `PATH` of cargo subcommands"),
    row("Cargo", "cargo-home/.crates.toml", "what cargo believes is installed"),
    row("Cargo", "cargo-home/.crates2.json", "the same, in the newer format"),
    row("Cargo", "cargo-home/env", "a script shells source (rustup's)"),
    row("Gradle", "gradle/init.d", "init scripts every build runs"),
    row("Gradle", "gradle/init.gradle", "an init script every build runs"),
    row("Gradle", "gradle/init.gradle.kts", "the same, in Kotlin"),
    row("Gradle", "gradle/gradle.properties", "JVM arguments and properties of every build"),
    row("Gradle", "gradle/wrapper/dists", "Gradle itself, as the wrapper downloaded it"),
    row("ccache", "ccache/ccache.conf", "`prefix_command` and compiler options of every compile"),
    row("npm", "npm/_npx", "packages `npx` runs without installing"),
    row("Go", "go/mod/golang.org/toolchain@*", "Go toolchains `GOTOOLCHAIN` switches to"),
    row("Go", "go/mod/cache/download/golang.org/toolchain", "their downloads"),
    row("Python", "xdg/pypoetry/virtualenvs", "virtual environments (interpreters and installed programs)"),
    row("Python", "xdg/pre-commit", "hook repositories pre-commit runs"),
];

/// Removes from `layer` every place of [`NEVER_CARRIED`], never following a link: a link or a
/// file where a directory of the path should be is removed itself. Returns what was removed.
/// `restore`, when given, is a layer to copy the same places back from (the base layer, for a
/// layer that is a copy of it).
pub(super) fn scrub(layer: &Path, restore: Option<&Path>) -> io::Result<Vec<String>> {
    let mut removed = Vec::new();
    for row in NEVER_CARRIED {
        let Some(rel) = clean(row.path) else { continue };
        for found in expand(layer, &rel)? {
            remove(layer, &found, &mut removed)?;
            if let Some(base) = restore {
                super::fsx::copy_nofollow(&base.join(&found), &layer.join(&found))?;
            }
        }
    }
    Ok(removed)
}

/// `path` as plain components (`None` for anything else: a row never leaves the layer).
fn clean(path: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for part in Path::new(path).components() {
        match part {
            Component::Normal(p) => out.push(p.to_str()?.to_owned()),
            _ => return None,
        }
    }
    Some(out)
}

/// The relative paths below `layer` a row names: a last component ending in `*` matches
/// every entry with that prefix. Stops at the first component that is not a real directory
/// (that component is what gets removed).
fn expand(layer: &Path, rel: &[String]) -> io::Result<Vec<String>> {
    let Some((last, parents)) = rel.split_last() else { return Ok(Vec::new()) };
    let mut at = layer.to_path_buf();
    let mut prefix = Vec::new();
    for part in parents {
        at.push(part);
        prefix.push(part.clone());
        match at.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Ok(vec![prefix.join("/")]),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        }
    }
    let join = |name: &str| if prefix.is_empty() { name.to_owned() } else { format!("{}/{name}", prefix.join("/")) };
    match last.strip_suffix('*') {
        None => Ok(if at.join(last).symlink_metadata().is_ok() { vec![join(last)] } else { Vec::new() }),
        Some(stem) => {
            let mut found = Vec::new();
            for entry in std::fs::read_dir(&at)? {
                let name = entry?.file_name();
                if let Some(name) = name.to_str().filter(|n| n.starts_with(stem)) {
                    found.push(join(name));
                }
            }
            found.sort();
            Ok(found)
        }
    }
}

fn remove(layer: &Path, rel: &str, removed: &mut Vec<String>) -> io::Result<()> {
    let path = layer.join(rel);
    if path.symlink_metadata().is_err() {
        return Ok(());
    }
    tree::remove_tree(&path).map_err(|left| io::Error::other(left.to_string()))?;
    removed.push(rel.to_owned());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn every_row_is_removed_and_what_else_the_layer_holds_stays() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path();
        put(layer, "cargo-home/config.toml");
        put(layer, "cargo-home/bin/cargo-nextest");
        put(layer, "cargo-home/registry/cache/idx/serde-1.0.crate");
        put(layer, "go/mod/golang.org/toolchain@v0.0.1-go1.99.linux-amd64/bin/go");
        put(layer, "go/mod/golang.org/x/text@v0.1.0/doc.go");
        put(layer, "gradle/init.d/evil.gradle");
        put(layer, "cargo-target/debug/app");
        let mut removed = scrub(layer, None).unwrap();
        removed.sort();
        assert_eq!(
            removed,
            [
                "cargo-home/bin",
                "cargo-home/config.toml",
                "go/mod/golang.org/toolchain@v0.0.1-go1.99.linux-amd64",
                "gradle/init.d"
            ]
        );
        for kept in ["cargo-home/registry/cache/idx/serde-1.0.crate", "go/mod/golang.org/x/text@v0.1.0/doc.go"] {
            assert!(layer.join(kept).is_file(), "{kept}");
        }
        assert!(layer.join("cargo-target/debug/app").is_file());
    }

    #[test]
    fn every_ecosystems_row_as_a_file_or_a_tree_is_removed() {
        for row in NEVER_CARRIED {
            let dir = tempfile::tempdir().unwrap();
            let planted = row.path.replace('*', "v1.2.3");
            put(dir.path(), &format!("{planted}/inside"));
            put(dir.path(), "cargo-target/debug/kept");
            let removed = scrub(dir.path(), None).unwrap();
            assert_eq!(removed, std::slice::from_ref(&planted), "{}: {}", row.ecosystem, row.path);
            assert!(dir.path().join(&planted).symlink_metadata().is_err(), "{planted} survived");
            assert!(dir.path().join("cargo-target/debug/kept").is_file());
        }
    }

    #[test]
    fn a_link_where_a_directory_should_be_is_removed_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        put(&outside, "config.toml");
        let layer = dir.path().join("layer");
        std::fs::create_dir_all(&layer).unwrap();
        std::os::unix::fs::symlink(&outside, layer.join("cargo-home")).unwrap();
        assert_eq!(scrub(&layer, None).unwrap(), ["cargo-home"]);
        assert!(outside.join("config.toml").is_file(), "the link's target was touched");
        assert!(layer.join("cargo-home").symlink_metadata().is_err());
    }

    #[test]
    fn a_copy_gets_the_base_layers_own_back() {
        let dir = tempfile::tempdir().unwrap();
        let (base, layer) = (dir.path().join("base"), dir.path().join("copy"));
        std::fs::create_dir_all(base.join("gradle")).unwrap();
        std::fs::write(base.join("gradle/gradle.properties"), "org.gradle.jvmargs=-Xmx1g\n").unwrap();
        std::fs::create_dir_all(layer.join("gradle")).unwrap();
        std::fs::write(layer.join("gradle/gradle.properties"), "org.gradle.jvmargs=-javaagent:/tmp/x.jar\n").unwrap();
        scrub(&layer, Some(&base)).unwrap();
        assert_eq!(
            std::fs::read_to_string(layer.join("gradle/gradle.properties")).unwrap(),
            "org.gradle.jvmargs=-Xmx1g\n"
        );
    }

    #[test]
    fn docs_sandbox_lists_every_row() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/sandbox.md")).unwrap();
        for row in NEVER_CARRIED {
            let line = format!("| {} | `{}` |", row.ecosystem, row.path);
            assert!(docs.contains(&line), "docs/sandbox.md lacks the row {line}");
        }
    }
}
