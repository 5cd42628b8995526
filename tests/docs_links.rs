//! Every relative link in the docs leads somewhere: the file exists, and a `#anchor` names a
//! heading of it. The README is being split into pages that link to each other, so a renamed
//! heading or a moved page must fail here, not on GitHub.
//!
//! Checked: `README.md`, `CONTRIBUTING.md` (if present), `docs/*.md` and
//! `skills/webgpt-orchestrator/SKILL.md`. A link is `[text](target)`, `![alt](target)`, a
//! reference definition `[label]: target`, or an HTML `href="…"`/`src="…"`. Links with a scheme
//! (`https:`, `mailto:`) are not followed; links inside fenced code blocks and inline code are
//! not links. A target is relative to the linking file (`/x` to the repository root). An anchor
//! must match a heading of the target Markdown file by GitHub's rule ([`slug`]), or an HTML
//! `id="…"`/`name="…"` in it. Only ATX headings (`## Title`) count; the docs use no other kind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;
#[path = "docs_support/markdown.rs"]
mod markdown;

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use markdown::{Segment, segments};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// GitHub's heading anchor: lowercase; drop everything but letters, digits, spaces, `-` and
/// `_`; spaces become `-`. Takes the heading's text as written (inline Markdown is unwrapped).
fn slug(heading: &str) -> String {
    heading_text(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// What a heading renders as text: links and images become their text, HTML tags go, the
/// common entities are decoded (all of which the slug then drops as punctuation or keeps).
fn heading_text(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some(end) = rest.find('>')
        {
            rest = &rest[end + 1..];
            continue;
        }
        if c == ']'
            && rest[1..].starts_with('(')
            && let Some(end) = rest.find(')')
        {
            // `[text](target)`: the brackets are dropped as punctuation, the target skipped.
            rest = &rest[end + 1..];
            continue;
        }
        text.push(c);
        rest = &rest[c.len_utf8()..];
    }
    for (entity, plain) in [("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'")] {
        text = text.replace(entity, plain);
    }
    text
}

/// The heading of an ATX heading line (`## Title ##` → `Title`), if it is one.
fn atx_heading(line: &str) -> Option<&str> {
    let rest =
        line.strip_prefix("   ").or_else(|| line.strip_prefix("  ")).or_else(|| line.strip_prefix(' ')).unwrap_or(line);
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let text = &rest[hashes..];
    if !text.is_empty() && !text.starts_with([' ', '\t']) {
        return None;
    }
    let text = text.trim();
    // An optional closing sequence of `#`s after a space.
    let stripped = text.trim_end_matches('#');
    Some(if stripped.is_empty() || stripped.ends_with([' ', '\t']) { stripped.trim_end() } else { text })
}

/// The values of `attr="…"` (or `'…'`) in a line.
fn attribute_values<'a>(line: &'a str, attr: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let needle = format!("{attr}=");
    let mut from = 0;
    while let Some(at) = line[from..].find(&needle) {
        let start = from + at;
        from = start + needle.len();
        // A whole attribute name: `id=` but not `data-id=`.
        if line[..start].chars().next_back().is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        let rest = &line[from..];
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else { continue };
        if let Some(end) = rest[1..].find(quote) {
            found.push(&rest[1..1 + end]);
        }
    }
    found
}

/// Every anchor a Markdown file offers: its headings' slugs (duplicates numbered `-1`, `-2`, …
/// as GitHub numbers them) and its HTML `id`/`name` attributes.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for segment in segments(text) {
        let Segment::Text(_, line) = segment else { continue };
        if let Some(heading) = atx_heading(&line) {
            let base = slug(heading);
            let count = seen.entry(base.clone()).or_insert(0);
            out.insert(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
            *count += 1;
        }
        for attr in ["id", "name"] {
            out.extend(attribute_values(&line, attr).into_iter().map(str::to_owned));
        }
    }
    out
}

/// A line without its inline code spans (a span's backtick run closes at the next run of the
/// same length; an unmatched run is literal).
fn without_inline_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|c| *c == '`').count();
        let after = &rest[at + run..];
        let mut search = 0;
        let close = loop {
            let Some(i) = after[search..].find('`') else { break None };
            let i = search + i;
            let len = after[i..].chars().take_while(|c| *c == '`').count();
            if len == run {
                break Some(i);
            }
            search = i + len;
        };
        match close {
            Some(i) => {
                out.push_str("code");
                rest = &after[i + run..];
            }
            None => {
                out.push_str(&rest[at..at + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The link targets of one prose line: inline links and images, reference definitions, HTML
/// `href`/`src`.
fn targets(line: &str) -> Vec<String> {
    let line = without_inline_code(line);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find("](") {
        let start = from + at + 2;
        let rest = &line[start..];
        let target = if let Some(inner) = rest.strip_prefix('<') {
            inner.split('>').next().unwrap_or("").to_owned()
        } else {
            // Up to the `)` that balances, or a space before a title.
            let mut depth = 0usize;
            let mut end = rest.len();
            for (i, c) in rest.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => {
                        end = i;
                        break;
                    }
                    ')' => depth -= 1,
                    ' ' => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            rest[..end].to_owned()
        };
        found.push(target);
        from = start;
    }
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() <= 3
        && trimmed.starts_with('[')
        && let Some(close) = trimmed.find("]:")
        && !trimmed[1..close].is_empty()
    {
        let target = trimmed[close + 2..].split_whitespace().next().unwrap_or("");
        found.push(target.trim_start_matches('<').trim_end_matches('>').to_owned());
    }
    if line.contains('<') {
        for attr in ["href", "src"] {
            found.extend(attribute_values(&line, attr).into_iter().map(str::to_owned));
        }
    }
    found
}

/// `%20` and friends.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn has_scheme(target: &str) -> bool {
    let scheme: String = target.chars().take_while(|c| c.is_ascii_alphanumeric() || "+.-".contains(*c)).collect();
    !scheme.is_empty()
        && target[scheme.len()..].starts_with(':')
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
}

/// `a/./b/../c` → `a/c`, without touching the disk (the target may not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Checks links in Markdown files under one repository root, caching target files' anchors.
struct Checker<'a> {
    root: &'a Path,
    anchors: HashMap<PathBuf, Option<HashSet<String>>>,
    /// Relative links checked so far (a parser that finds none must not pass).
    checked: usize,
}

impl<'a> Checker<'a> {
    fn new(root: &'a Path) -> Checker<'a> {
        Checker { root, anchors: HashMap::new(), checked: 0 }
    }

    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(self.root).unwrap_or(path).display().to_string()
    }

    fn anchors_of(&mut self, path: &Path) -> Option<&HashSet<String>> {
        self.anchors
            .entry(path.to_path_buf())
            .or_insert_with(|| std::fs::read_to_string(path).ok().map(|text| anchors(&text)))
            .as_ref()
    }

    /// What is wrong with `target` linked from `file`, if anything.
    fn check(&mut self, file: &Path, target: &str) -> Option<String> {
        if target.is_empty() {
            return Some("an empty link target".into());
        }
        if has_scheme(target) {
            return None;
        }
        self.checked += 1;
        let (path_part, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target, None),
        };
        let path_part = path_part.split('?').next().unwrap_or("");
        let resolved = if path_part.is_empty() {
            file.to_path_buf()
        } else {
            let decoded = percent_decode(path_part);
            let base = match decoded.strip_prefix('/') {
                Some(rooted) => self.root.join(rooted),
                None => file.parent().unwrap_or(self.root).join(&decoded),
            };
            normalize(&base)
        };
        if !resolved.starts_with(self.root) {
            return Some(format!("leads outside the repository ({})", resolved.display()));
        }
        if !path_part.is_empty() && !resolved.exists() {
            return Some(format!("{} does not exist", self.shown(&resolved)));
        }
        let anchor = percent_decode(anchor?);
        if anchor.is_empty() {
            return Some("an empty `#` anchor".into());
        }
        if resolved.extension().is_none_or(|x| x != "md") {
            return None;
        }
        let shown = self.shown(&resolved);
        match self.anchors_of(&resolved) {
            None => Some(format!("{shown} cannot be read")),
            Some(found) if found.contains(&anchor) => None,
            Some(_) => Some(format!("no heading of {shown} has the anchor `#{anchor}` (GitHub's slug of the heading)")),
        }
    }

    /// `file:line: …` for every broken link in `text`, the content of `file`.
    fn check_text(&mut self, file: &Path, text: &str) -> Vec<String> {
        let mut broken = Vec::new();
        let shown = self.shown(file);
        // Same-file anchors come from the text being checked.
        self.anchors.insert(file.to_path_buf(), Some(anchors(text)));
        for segment in segments(text) {
            let Segment::Text(number, line) = segment else { continue };
            for target in targets(&line) {
                if let Some(why) = self.check(file, &target) {
                    broken.push(format!("{shown}:{number}: link `{target}`: {why}"));
                }
            }
        }
        broken
    }
}

/// The files whose links must resolve.
fn doc_files() -> Vec<PathBuf> {
    let mut files = files::markdown_docs(root());
    files.insert(files.len().min(2), root().join("skills/webgpt-orchestrator/SKILL.md"));
    files
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let files = doc_files();
    assert!(files.iter().any(|f| f.ends_with("README.md")), "no README.md at {}", root().display());
    let mut checker = Checker::new(root());
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        broken.extend(checker.check_text(file, &text));
    }
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
    assert!(checker.checked > 0, "no relative link found in {} files: the link parser finds nothing", files.len());
    eprintln!("{} relative links checked in {} files", checker.checked, files.len());
}

#[test]
fn slug_follows_github() {
    for (heading, expected) in [
        ("On the repository's own CI (`github-checks`)", "on-the-repositorys-own-ci-github-checks"),
        ("The control room (`forgeloop tui`)", "the-control-room-forgeloop-tui"),
        ("Threat model: the sandbox", "threat-model-the-sandbox"),
        ("See it work: two commands", "see-it-work-two-commands"),
        ("What WebGPT changed (`forgeloop diff`)", "what-webgpt-changed-forgeloop-diff"),
        ("MCP server (`forgeloop mcp`)", "mcp-server-forgeloop-mcp"),
        ("Files / paths, v1.2", "files--paths-v12"),
        ("snake_case & more", "snake_case--more"),
        ("snake_case &amp; more", "snake_case--more"),
        ("[Linked](docs/x.md) heading", "linked-heading"),
        ("Ünïcode Wörds", "ünïcode-wörds"),
    ] {
        assert_eq!(slug(heading), expected, "{heading}");
    }
}

#[test]
fn anchors_number_duplicates_and_skip_code_blocks() {
    let text = "# Top\n## Setup ##\n## Setup\n```sh\n# Setup\n```\n<a id=\"custom-anchor\"></a>\n## Setup\n#hashtag\n";
    let found = anchors(text);
    let mut found: Vec<&str> = found.iter().map(String::as_str).collect();
    found.sort();
    assert_eq!(found, vec!["custom-anchor", "setup", "setup-1", "setup-2", "top"]);
}

#[test]
fn link_targets_skip_inline_code_and_read_every_form() {
    assert_eq!(
        targets("see [a](docs/a.md#x), `[not](a link)`, ![img](img/p.png \"title\") and [b](<with space.md>)"),
        vec!["docs/a.md#x", "img/p.png", "with space.md"]
    );
    assert_eq!(targets("[ref]: docs/b.md#y \"T\""), vec!["docs/b.md#y"]);
    assert_eq!(targets("<img src=\"logo.png\" alt=\"\"> <a href=\"#top\" data-id=\"no\">"), vec!["#top", "logo.png"]);
    assert_eq!(targets("[x](https://example.com/a_(b)) ``code ` [y](z)``"), vec!["https://example.com/a_(b)"]);
}

#[test]
fn broken_files_and_anchors_are_reported_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/cli.md"), "# CLI\n## The control room (`forgeloop tui`)\n").unwrap();
    let readme = "# Top\n\
        [ok](docs/cli.md#the-control-room-forgeloop-tui) [ok](#top) [ok](https://x.invalid/#nope)\n\
        [gone](docs/missing.md)\n\
        [bad anchor](docs/cli.md#the-control-room)\n\
        ```sh\n[in code](nowhere.md)\n```\n\
        [same file](#nowhere) `[inline](nowhere.md)`\n\
        [up](../outside.md)\n";
    let mut checker = Checker::new(root);
    let broken = checker.check_text(&root.join("README.md"), readme);
    let lines: Vec<&str> = broken.iter().map(|b| b.split(": link").next().unwrap()).collect();
    assert_eq!(lines, vec!["README.md:3", "README.md:4", "README.md:8", "README.md:9"], "{broken:#?}");
    assert!(broken[0].ends_with("docs/missing.md does not exist"), "{}", broken[0]);
    assert!(broken[1].contains("no heading of docs/cli.md has the anchor `#the-control-room`"), "{}", broken[1]);
}

/// The README is what a newcomer reads first, in five minutes: at most 200 lines, everything
/// else one link away in docs/.
#[test]
fn the_readme_stays_short() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines: move a section to docs/ and link it");
}
