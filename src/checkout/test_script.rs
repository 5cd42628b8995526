//! `package.json`'s `scripts.test` in a commit's tree, read from git objects (never from a
//! working tree a test may have changed): the file that script runs is one of the PR's test
//! files (design §5.2, `domain::test_files`).

use git2::{ObjectType, Oid, Repository};

/// A `package.json` larger than this is not read (a hostile tree cannot make forgeloop parse
/// a large file).
const MAX_BYTES: usize = 1 << 20;

/// The root `package.json`'s `scripts.test` at `commit`, if there is one.
pub fn in_commit(repo: &Repository, commit: Oid) -> Option<String> {
    let tree = repo.find_commit(commit).ok()?.tree().ok()?;
    let entry = tree.get_name("package.json")?;
    if entry.kind() != Some(ObjectType::Blob) {
        return None;
    }
    let blob = repo.find_blob(entry.id()).ok()?;
    if blob.size() > MAX_BYTES {
        return None;
    }
    of_package_json(blob.content())
}

/// `scripts.test` of a `package.json`'s bytes.
fn of_package_json(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let script = value.get("scripts")?.get("test")?.as_str()?;
    Some(script.chars().take(4096).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_script_is_read_and_anything_else_is_none() {
        let json = br#"{"name": "x", "scripts": {"test": "node scripts/run-tests.mjs", "build": "tsc"}}"#;
        assert_eq!(of_package_json(json).as_deref(), Some("node scripts/run-tests.mjs"));
        assert_eq!(of_package_json(br#"{"scripts": {"build": "tsc"}}"#), None);
        assert_eq!(of_package_json(br#"{"scripts": {"test": 3}}"#), None);
        assert_eq!(of_package_json(b"not json"), None);
    }
}
