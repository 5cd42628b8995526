//! Every citation in the repository resolves inside it: `design §N` names a section (or a
//! numbered item of one) of docs/design.md, and nothing points to a document outside the
//! repository. (The Markdown documents' links and anchors: tests/docs_links.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::path::{Path, PathBuf};

use regex::Regex;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "snapshots" | "corpus" | "artifacts" | ".git") {
                files(&path, out);
            }
        } else if [".rs", ".md", ".sh", ".toml", ".py"].iter().any(|e| name.ends_with(e)) || name == "run" {
            out.push(path);
        }
    }
}

fn sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["src", "crates", "tests", "benches", "scripts", "skills", "docs", "fuzz", ".ci"] {
        files(&root().join(dir), &mut out);
    }
    out.extend(["README.md", "CONTRIBUTING.md", "Cargo.toml"].map(|f| root().join(f)));
    out
}

fn design() -> String {
    std::fs::read_to_string(root().join("docs/design.md")).unwrap()
}

/// The text of a section, from its heading to the next heading of the same or a higher level.
fn section(doc: &str, number: &str) -> Option<String> {
    let level = if number.contains('.') { "### " } else { "## " };
    let heading = format!("{level}{number}{}", if number.contains('.') { " " } else { ". " });
    let start = doc.lines().position(|l| l.starts_with(&heading))?;
    let body: Vec<&str> = doc
        .lines()
        .skip(start + 1)
        .take_while(|l| !(l.starts_with("## ") || (level == "### " && l.starts_with("### "))))
        .collect();
    Some(body.join("\n"))
}

fn has_item(body: &str, item: &str) -> bool {
    body.lines().any(|l| l.starts_with(&format!("{item}. ")))
}

#[test]
fn every_design_citation_names_a_section_that_exists() {
    let doc = design();
    let cite = Regex::new(r"design §(\d+)(?:\.(\d+))?(?:\.(\d+))?(?: rule (\d+))?").unwrap();
    let mut problems = Vec::new();
    let mut seen = 0;
    for file in sources() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for c in cite.captures_iter(line) {
                seen += 1;
                let top = &c[1];
                let ok = match (c.get(2), c.get(3), c.get(4)) {
                    (None, _, None) => section(&doc, top).is_some(),
                    (None, _, Some(rule)) => section(&doc, top).is_some_and(|b| has_item(&b, rule.as_str())),
                    (Some(sub), None, _) => section(&doc, &format!("{top}.{}", sub.as_str())).is_some(),
                    (Some(sub), Some(item), _) => {
                        section(&doc, &format!("{top}.{}", sub.as_str())).is_some_and(|b| has_item(&b, item.as_str()))
                    }
                };
                if !ok {
                    problems.push(format!("{}:{}: {} is not in docs/design.md", file.display(), n + 1, &c[0]));
                }
            }
        }
    }
    assert!(seen > 50, "only {seen} citations found: is the pattern right?");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn nothing_points_outside_the_repository() {
    let outside = Regex::new(r"SPEC §|reference §|notes/[a-z0-9-]+\.md|/work/shared|\.\./shared/").unwrap();
    let mut problems = Vec::new();
    for file in sources() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            if let Some(m) = outside.find(line)
                && !file.ends_with("tests/citations.rs")
            {
                problems.push(format!("{}:{}: {}", file.display(), n + 1, m.as_str()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_catches_a_missing_section_and_item() {
    let doc = "## 5. Interface\n\n### 5.2 Testing\n\n1. Resolve.\n2. Fetch.\n\n### 5.3 Other\n\n3. Not here.\n";
    assert!(section(doc, "5").is_some());
    assert!(section(doc, "5.2").is_some_and(|b| has_item(&b, "2")));
    assert!(section(doc, "5.2").is_some_and(|b| !has_item(&b, "3")));
    assert!(section(doc, "5.9").is_none());
    assert!(section(doc, "7").is_none());
}
