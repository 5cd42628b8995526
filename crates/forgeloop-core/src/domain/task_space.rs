//! The browser conversation key of a cycle (design §3 rule 7).

use std::path::Path;

/// What every task-space key starts with (the reference tool's name, kept for its files).
pub const TASK_SPACE_PREFIX: &str = "webgpt-orchestrator:";

/// The state file's name without its last extension, as the reference tool computes it
/// (`a.b.json` → `a.b`, `x.tar.gz` → `x.tar`, `.hidden.json` → `.hidden`, `state` → `state`).
pub fn stem(state_path: &Path) -> Option<String> {
    let name = state_path.file_name()?.to_str()?;
    let stem = match name.rfind('.') {
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    };
    (!stem.is_empty()).then(|| stem.to_owned())
}

/// The task-space key of a state file's stem.
pub fn task_space(stem: &str) -> String {
    format!("{TASK_SPACE_PREFIX}{stem}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_follow_the_reference_table() {
        for (path, expected) in [
            ("add-dark-mode.json", "add-dark-mode"),
            ("/tmp/cycles/forge.json", "forge"),
            ("a.b.json", "a.b"),
            ("x.tar.gz", "x.tar"),
            (".hidden.json", ".hidden"),
            ("state", "state"),
            (".hidden", ".hidden"),
        ] {
            assert_eq!(stem(Path::new(path)).as_deref(), Some(expected), "{path}");
        }
        assert_eq!(task_space("add-dark-mode"), "webgpt-orchestrator:add-dark-mode");
        assert_eq!(stem(Path::new("/")), None);
    }
}
