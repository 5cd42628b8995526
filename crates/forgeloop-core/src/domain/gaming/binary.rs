//! Bytecode and native modules where an import finds them before the source: any `*.pyc` or
//! file under `__pycache__/` (Python imports a stale or planted one instead of the reviewed
//! `.py`), and `*.so`/`*.pyd`/`*.node`/`*.dylib` at the repository's root, in `src/` or `lib/`,
//! or in a Python package directory. Read from the file list, not the lines: a binary file
//! has none (`Binary files … differ`), and a test directory's bytecode counts too.

use super::{Category, Hit};
use crate::domain::diff::{FileDiff, FileStatus};

/// Extensions of native modules a Python or Node import loads.
const NATIVE: &[&str] = &["so", "pyd", "node", "dylib"];

/// The hit a changed file is, if it is one.
pub(crate) fn hit(change: &[&str], file: &FileDiff, exists: &dyn Fn(&str) -> bool) -> Option<Hit> {
    if file.status == FileStatus::Removed {
        return None;
    }
    let path = file.path.as_str();
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let bytecode = ext == "pyc" || ext == "pyo" || path.split('/').any(|p| p == "__pycache__");
    let native =
        NATIVE.contains(&ext.as_str()) && (matches!(dir, "" | "src" | "lib") || exists(&format!("{dir}/__init__.py")));
    let says = if bytecode {
        "adds Python bytecode: Python can import it instead of the reviewed source"
    } else if native {
        "adds a native module at an import root: it is imported instead of the source"
    } else {
        return None;
    };
    let section = change.get(file.start_line..file.end_line.min(change.len())).unwrap_or(&[]);
    let excerpt = section
        .iter()
        .find(|l| l.starts_with("Binary files ") || l.starts_with("+++ "))
        .map(|l| super::excerpt(l))
        .unwrap_or_default();
    Some(Hit {
        category: Category::BinaryAtImportRoot,
        path: path.to_owned(),
        line: None,
        words: format!("{path} {says}"),
        excerpt,
    })
}
