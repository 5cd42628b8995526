//! The person's downloaded crates, offered to a run: links from the writable layer's cargo
//! home to what the person's own `CARGO_HOME` (read-only to the run) already has, where
//! neither that layer nor the base layer under it has the entry. Offline builds find them;
//! cargo writes only new downloads (a write through a link fails on the read-only original,
//! never changes it). Done before every run, so a crate the person downloads between two runs
//! is there for the second; what it makes is the tests' account's.
//!
//! Before every run each seed is also checked to be the link it was made as (issue 57): a run
//! can replace a link in its own layer with a directory — a copy of the crate whose build
//! script rewrites the held tests — that cargo would then build from in the next run. Whatever
//! stands where the person has the entry and is not exactly the link to it is removed and the
//! link made again.

use std::io;
use std::path::Path;

use super::fsx::{self, Owner};
use crate::store::tree;

/// (part of a cargo home, directory levels recreated before entries are linked)
const PARTS: [(&str, usize); 3] = [("registry/cache", 2), ("registry/src", 2), ("registry/index", usize::MAX)];

/// Links what `person` (a cargo home) has into `layer`'s `cargo-home` where `layer` and
/// `below` lack it. Returns how many links were made.
pub(super) fn seed_cargo(person: &Path, layer: &Path, below: Option<&Path>, owner: Owner) -> io::Result<usize> {
    let mut made = 0;
    for (part, depth) in PARTS {
        let from = person.join(part);
        if !from.is_dir() {
            continue;
        }
        let rel = Path::new("cargo-home").join(part);
        made += link_missing(&from, layer, &rel, depth, below, owner)?;
    }
    Ok(made)
}

fn link_missing(
    from: &Path,
    layer: &Path,
    rel: &Path,
    depth: usize,
    below: Option<&Path>,
    owner: Owner,
) -> io::Result<usize> {
    let dir = fsx::ensure_dir(layer, rel, owner)?;
    let mut made = 0;
    for entry in std::fs::read_dir(from)?.flatten() {
        let source = entry.path();
        let name = entry.file_name();
        let rel = rel.join(&name);
        if depth > 1 && source.is_dir() && !source.is_symlink() {
            made += link_missing(&source, layer, &rel, depth - 1, below, owner)?;
            continue;
        }
        let here = dir.join(&name);
        let present = |top: &Path| top.join(&rel).symlink_metadata().is_ok();
        if here.symlink_metadata().is_ok() {
            if std::fs::read_link(&here).is_ok_and(|to| to == source) {
                continue;
            }
            // Not the seed it was made as (or a crate the run fetched that the person has
            // too): the person's copy is the one to trust.
            tree::remove_tree(&here).map_err(|left| io::Error::other(left.to_string()))?;
        } else if below.is_some_and(present) {
            continue;
        }
        std::os::unix::fs::symlink(&source, &here)?;
        fsx::give(&here, owner)?;
        made += 1;
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::write(root.join(rel), text).unwrap();
    }

    #[test]
    fn links_what_neither_layer_has_and_a_later_download_on_the_next_seeding() {
        let dir = tempfile::tempdir().unwrap();
        let (person, layer, below) = (dir.path().join("person"), dir.path().join("upper"), dir.path().join("base"));
        put(&person, "registry/cache/idx/a-1.0.crate", "x");
        put(&person, "registry/cache/idx/b-1.0.crate", "x");
        put(&person, "registry/src/idx/a-1.0/lib.rs", "x");
        put(&below, "cargo-home/registry/cache/idx/b-1.0.crate", "base's own");
        std::fs::create_dir_all(&layer).unwrap();
        assert_eq!(seed_cargo(&person, &layer, Some(&below), None).unwrap(), 2);
        assert!(layer.join("cargo-home/registry/cache/idx/a-1.0.crate").is_symlink());
        assert!(layer.join("cargo-home/registry/cache/idx/b-1.0.crate").symlink_metadata().is_err());
        assert!(layer.join("cargo-home/registry/src/idx/a-1.0").is_symlink());
        assert_eq!(seed_cargo(&person, &layer, Some(&below), None).unwrap(), 0, "nothing new");
        put(&person, "registry/cache/idx/c-1.0.crate", "x");
        assert_eq!(seed_cargo(&person, &layer, Some(&below), None).unwrap(), 1, "the new download");
    }

    #[test]
    fn a_seed_a_run_replaced_is_made_again_before_the_next_run() {
        let dir = tempfile::tempdir().unwrap();
        let (person, layer) = (dir.path().join("person"), dir.path().join("upper"));
        put(&person, "registry/src/idx/a-1.0/build.rs", "fn main() {}");
        put(&person, "registry/cache/idx/a-1.0.crate", "x");
        std::fs::create_dir_all(&layer).unwrap();
        assert_eq!(seed_cargo(&person, &layer, None, None).unwrap(), 2);
        // The attack: the link becomes a copy whose build script rewrites the held test, and
        // the cached archive a link elsewhere.
        let seeded = layer.join("cargo-home/registry/src/idx/a-1.0");
        std::fs::remove_file(&seeded).unwrap();
        put(&layer, "cargo-home/registry/src/idx/a-1.0/build.rs", "fn main() { /* rewrite tests/held.rs */ }");
        let archive = layer.join("cargo-home/registry/cache/idx/a-1.0.crate");
        std::fs::remove_file(&archive).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &archive).unwrap();
        assert_eq!(seed_cargo(&person, &layer, None, None).unwrap(), 2, "both made again");
        assert_eq!(std::fs::read_link(&seeded).unwrap(), person.join("registry/src/idx/a-1.0"));
        assert_eq!(std::fs::read_link(&archive).unwrap(), person.join("registry/cache/idx/a-1.0.crate"));
        // A crate only the run fetched stays: the person has no copy to trust instead.
        put(&layer, "cargo-home/registry/src/idx/b-2.0/lib.rs", "");
        assert_eq!(seed_cargo(&person, &layer, None, None).unwrap(), 0);
        assert!(layer.join("cargo-home/registry/src/idx/b-2.0/lib.rs").is_file());
    }
}
