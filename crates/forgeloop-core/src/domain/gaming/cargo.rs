//! `Cargo.toml`'s ways to change what `cargo test` builds or runs before the tests: no
//! automatic tests (`autotests = false`), a build script by any name (`build = "…"`), no
//! library unit tests (`[lib] test = false`), a test target's own `main` (`harness = false`),
//! a proc-macro crate, and a path dependency on a crate of the repository that the base did not
//! have (code that is compiled with the tests and can rewrite them).

use super::lexer::Value;
use super::view::FileView;
use super::{Category, Finding};

/// What kind of table a line is in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Table {
    /// Not known (a hunk read alone, above its first header).
    Unknown,
    /// `[name]` or `[[name]]`, dotted as written (`target.'cfg(unix)'.dependencies`).
    Named(String),
}

impl Table {
    fn is(&self, name: &str) -> bool {
        matches!(self, Table::Named(n) if n == name)
    }

    /// A table of dependencies (any kind, any target, the workspace's, a patch): the crate the
    /// table itself names when it is `[dependencies.x]`.
    fn dependencies(&self) -> Option<Option<String>> {
        let Table::Named(name) = self else { return None };
        let parts: Vec<&str> = name.split('.').collect();
        let kinds =
            ["dependencies", "dev-dependencies", "dev_dependencies", "build-dependencies", "build_dependencies"];
        if let Some(k) = parts.iter().position(|p| kinds.contains(p) || *p == "patch" || *p == "replace") {
            let rest = &parts[k + 1..];
            let named = if parts[k] == "patch" { rest.get(1) } else { rest.first() };
            return Some(named.map(|n| n.trim_matches(['"', '\'']).to_owned()));
        }
        None
    }
}

/// The build configuration a `Cargo.toml`'s added lines change.
pub(crate) fn scan(
    view: &FileView,
    base_text: &dyn Fn(&str) -> Option<String>,
    exists: &dyn Fn(&str) -> bool,
    out: &mut Vec<Finding>,
) {
    let mut table = if view.whole { Table::Named(String::new()) } else { Table::Unknown };
    let dir = view.path.rsplit_once('/').map_or("", |(d, _)| d);
    for (i, line) in view.lines.iter().enumerate() {
        if line.fresh {
            table = if i == 0 && view.whole { Table::Named(String::new()) } else { Table::Unknown };
        }
        let code = line.lexed.trimmed();
        if let Some(header) = code.strip_prefix("[[").and_then(|h| h.split_once("]]")).map(|(h, _)| h) {
            table = Table::Named(header.trim().to_owned());
        } else if let Some(header) = code.strip_prefix('[').and_then(|h| h.split_once(']')).map(|(h, _)| h) {
            table = Table::Named(header.trim().to_owned());
        }
        if !line.scanned() {
            continue;
        }
        let Some((key, value)) = key_value(line) else { continue };
        let mut push =
            |says: String| out.push(Finding { anchored: false, category: Category::BuildConfig, at: i, says });
        let string = |v: &str| v.starts_with('"') || v.starts_with('\'');
        let in_package = matches!(&table, Table::Unknown) || table.is("package") || table.is("project");
        match key.as_str() {
            "autotests" if value == "false" => {
                push("sets autotests = false: cargo test no longer builds tests/".to_owned());
            }
            "build" if in_package && string(&value) => {
                push(format!("sets build = {value}: a build script runs before the tests compile"));
            }
            "test" if table.is("lib") && value == "false" => {
                push("sets [lib] test = false: cargo test no longer runs the library's unit tests".to_owned());
            }
            "harness" if value == "false" && !table.is("bench") && !table.is("example") => {
                push("sets harness = false: the test target runs its own main instead of libtest".to_owned());
            }
            "proc-macro" | "proc_macro" if value == "true" => {
                push("makes the crate a proc-macro: its code runs while the tests compile".to_owned());
            }
            _ => {}
        }
        // Path dependencies: `x = { path = "…" }`, `x.path = "…"`, or `path = "…"` in `[dependencies.x]`.
        let Some(named) = table.dependencies() else { continue };
        let path = if (key == "path" && named.is_some()) || key.ends_with(".path") {
            literal(line)
        } else if value.starts_with('{') {
            inline_path(line)
        } else {
            None
        };
        let Some(path) = path else { continue };
        // Outside the repository (absolute, or above its root) the sandbox has no such crate:
        // the build fails, nothing is planted.
        let Some(target) = join(dir, &path) else { continue };
        let manifest = if target.is_empty() { "Cargo.toml".to_owned() } else { format!("{target}/Cargo.toml") };
        if exists(&manifest) && base_text(&manifest).is_none() {
            out.push(Finding {
                anchored: false,
                category: Category::BuildConfig,
                at: i,
                says: format!(
                    "adds a path dependency on {path}, a crate the base does not have: code built with the tests"
                ),
            });
        }
    }
}

/// `key = value` of a line (the key unquoted, the value's code trimmed).
fn key_value(line: &super::view::ViewLine) -> Option<(String, String)> {
    let text = line.lexed.text.trim();
    if text.starts_with('[') {
        return None;
    }
    let eq = line.lexed.code.find('=')?;
    let key = line.lexed.text.get(..eq)?.trim().replace(['"', '\''], "");
    let value = line.lexed.text.get(eq + 1..)?.trim().to_owned();
    (!key.is_empty()).then_some((key, value))
}

/// The last string on a line (the value of `key = "…"`).
fn literal(line: &super::view::ViewLine) -> Option<String> {
    line.lexed.literals.iter().rev().find_map(|l| match &l.value {
        Value::Str(s) => Some(s.clone()),
        Value::Num(_) => None,
    })
}

/// `{ path = "…", … }`: the path.
fn inline_path(line: &super::view::ViewLine) -> Option<String> {
    let code = &line.lexed.code;
    let text = &line.lexed.text;
    let bytes = code.as_bytes();
    code.match_indices("path").find_map(|(at, _)| {
        let before = at.checked_sub(1).and_then(|p| bytes.get(p)).copied();
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return None;
        }
        let rest = code.get(at + 4..)?.trim_start();
        if !rest.starts_with('=') {
            return None;
        }
        let value_at = code.len() - rest.len() + 1;
        line.lexed.literals.iter().find(|l| l.start >= value_at).and_then(|l| match &l.value {
            Value::Str(s) => {
                Some(s.clone()).filter(|_| text.get(value_at..l.start).is_some_and(|g| g.trim().is_empty()))
            }
            Value::Num(_) => None,
        })
    })
}

/// `dir` joined with a relative `path`, `..` resolved (`crates/a` + `../b` → `crates/b`);
/// `None` for an absolute path or one above the repository's root.
fn join(dir: &str, path: &str) -> Option<String> {
    let drive = path.get(1..3).is_some_and(|d| d == ":/" || d == ":\\");
    if path.starts_with(['/', '\\']) || drive {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_like_cargo_resolves_them() {
        assert_eq!(join("crates/a", "../b").as_deref(), Some("crates/b"));
        assert_eq!(join("", "helper").as_deref(), Some("helper"));
        assert_eq!(join("", "./vendor/x/").as_deref(), Some("vendor/x"));
        assert_eq!(join("", "../elsewhere"), None);
        assert_eq!(join("crates/a", "/home/me/src/x"), None);
    }

    #[test]
    fn dependency_tables_are_recognised() {
        let t = |s: &str| Table::Named(s.to_owned()).dependencies();
        assert_eq!(t("dependencies"), Some(None));
        assert_eq!(t("dependencies.helper"), Some(Some("helper".to_owned())));
        assert_eq!(t("target.'cfg(unix)'.dev-dependencies"), Some(None));
        assert_eq!(t("workspace.dependencies"), Some(None));
        assert_eq!(t("patch.crates-io"), Some(None));
        assert_eq!(t("patch.crates-io.serde"), Some(Some("serde".to_owned())));
        assert_eq!(t("package"), None);
        assert_eq!(t("lib"), None);
    }
}
