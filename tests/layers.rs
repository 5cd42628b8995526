//! The layers of docs/design.md ("Layers"), kept by a test: every `crate::…` path in `src/`
//! (in `use` items, grouped imports included, and inline paths) must point to a module the
//! table below lets its module use, and no two files of one directory may import each other
//! in a circle. A failure names the file, the line and the import.
//!
//! The parser is deliberately small: it strips comments, strings and char literals, then reads
//! identifiers and `::`, `{`, `}`, `,` tokens. That is enough for `use` trees and paths, and it
//! cannot be fooled by a path written in a comment or a string.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which top-level modules each top-level module may use (besides itself). Lower layers never
/// name higher ones: domain ← redact ← store ← adapters ← use cases ← front ends.
const ALLOWED: &[(&str, &[&str])] = &[
    // Pure: no I/O, no clock, no network.
    ("domain", &[]),
    ("redact", &["domain"]),
    ("store", &["domain", "redact"]),
    // Adapters: the outside world, each on its own.
    ("registry", &["domain", "redact", "store"]),
    ("config", &["domain", "redact", "store"]),
    ("config_edit", &["domain", "redact", "store", "config"]),
    ("sandbox", &["domain", "redact", "store"]),
    ("egress", &["domain", "redact", "store"]),
    ("results", &["domain", "redact", "store"]),
    ("runner", &["domain", "redact", "store", "sandbox", "egress", "results"]),
    ("checkout", &["domain", "redact", "store"]),
    ("github", &["domain", "redact", "store"]),
    ("cache", &["domain", "redact", "store"]),
    // Use cases, and the one map from every adapter's error to the error document.
    (
        "error",
        &[
            "domain",
            "redact",
            "store",
            "registry",
            "config",
            "config_edit",
            "sandbox",
            "egress",
            "runner",
            "results",
            "checkout",
            "github",
            "cache",
        ],
    ),
    (
        "cycle",
        &[
            "domain",
            "redact",
            "store",
            "registry",
            "config",
            "config_edit",
            "sandbox",
            "egress",
            "runner",
            "results",
            "checkout",
            "github",
            "cache",
            "error",
        ],
    ),
    // What any front end may share: stdout and stderr (redacted, controls made visible), stop
    // signals.
    ("output", &["domain", "redact", "error"]),
    ("signals", &[]),
    // Front ends. The CLI starts the others; the demo opens the control room. The CLI, the
    // control room and the MCP server reach the adapters (files, registry, git, GitHub, the
    // sandbox, the runner) only through `cycle`: they parse, call one use case and render.
    ("tui", &["domain", "redact", "config", "error", "cycle"]),
    ("mcp", &["domain", "redact", "config", "error", "cycle"]),
    // The remote connector: as the MCP server, plus its first line on stdout and the MCP
    // server's redacting stderr log.
    ("serve", &["domain", "redact", "config", "error", "cycle", "output", "mcp"]),
    (
        "demo",
        &[
            "domain", "redact", "store", "registry", "config", "sandbox", "egress", "runner", "results", "checkout",
            "github", "cache", "error", "cycle", "output", "signals", "tui",
        ],
    ),
    ("cli", &["domain", "redact", "config", "error", "cycle", "output", "signals", "tui", "mcp", "serve", "demo"]),
];

/// One `crate::…` (or escaping `super::…`) reference.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Import {
    line: usize,
    /// The top-level module it names (`domain` for `crate::domain::state::Status`).
    target: String,
    /// The path as written, for the failure message.
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Other,
}

/// Comments, string and char literals become spaces (newlines kept, so lines still count).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) && !prev_is_ident(b, i) {
            // Raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && b[j + 1..].iter().take(hashes).filter(|&&h| h == b'#').count() == hashes {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &x in &b[i..j.min(b.len())] {
                blank(&mut out, x);
            }
            i = j;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            for &x in &b[i..(j + 1).min(b.len())] {
                blank(&mut out, x);
            }
            i = j + 1;
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            let close = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&x| x == b'\'').map(|p| i + 2 + p)
            } else {
                let len =
                    std::str::from_utf8(&b[i + 1..]).ok().and_then(|s| s.chars().next()).map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
            };
            match close {
                Some(end) => {
                    for &x in &b[i..=end] {
                        blank(&mut out, x);
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn prev_is_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

fn tokens(code: &str) -> Vec<(usize, Tok)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = code.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let mut end = start + c.len_utf8();
                while let Some(&(i, n)) = chars.peek() {
                    if n.is_alphanumeric() || n == '_' {
                        end = i + n.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push((line, Tok::Ident(code[start..end].to_owned())));
            }
            ':' if chars.peek().map(|&(_, n)| n) == Some(':') => {
                chars.next();
                out.push((line, Tok::Colons));
            }
            '{' => out.push((line, Tok::Open)),
            '}' => out.push((line, Tok::Close)),
            ',' => out.push((line, Tok::Comma)),
            _ => out.push((line, Tok::Other)),
        }
    }
    out
}

/// For each token, the inline modules (`mod tests { … }`) it sits in, so `super::` inside
/// them climbs from the right place.
fn inline_mods(toks: &[(usize, Tok)]) -> Vec<Vec<String>> {
    let mut out = Vec::with_capacity(toks.len());
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending: Option<String> = None;
    for (i, (_, tok)) in toks.iter().enumerate() {
        match tok {
            Tok::Open => {
                depth += 1;
                if let Some(name) = pending.take() {
                    stack.push((name, depth));
                }
            }
            Tok::Close => {
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(word) if word == "mod" => {
                if let (Some((_, Tok::Ident(name))), Some((_, Tok::Open))) = (toks.get(i + 1), toks.get(i + 2)) {
                    pending = Some(name.clone());
                }
            }
            _ => {}
        }
        out.push(stack.iter().map(|(n, _)| n.clone()).collect());
    }
    out
}

/// Every top-level module a file names through `crate::` (and `super::` chains that climb to
/// the crate root). `module` is the file's own module path, e.g. `["tui", "app", "dialogs"]`.
fn imports(src: &str, module: &[String]) -> Vec<Import> {
    let toks = tokens(&strip(src));
    let inline = inline_mods(&toks);
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let (line, tok) = &toks[i];
        let ident = |k: usize| match toks.get(k) {
            Some((_, Tok::Ident(s))) => Some(s.as_str()),
            _ => None,
        };
        let colons = |k: usize| matches!(toks.get(k), Some((_, Tok::Colons)));
        let after_colons = i > 0 && colons(i - 1);
        match tok {
            Tok::Ident(word) if word == "crate" && !after_colons && colons(i + 1) => {
                if let Some(name) = ident(i + 2) {
                    found.push(Import { line: *line, target: name.to_owned(), text: format!("crate::{name}") });
                } else if matches!(toks.get(i + 2), Some((_, Tok::Open))) {
                    for (l, name) in group_heads(&toks, i + 2) {
                        found.push(Import { line: l, target: name.clone(), text: format!("crate::{{{name}, …}}") });
                    }
                }
                i += 2;
            }
            Tok::Ident(word) if word == "super" && !after_colons => {
                // `super::super::x`: climb from the file's parent module.
                let mut ups = 0;
                let mut k = i;
                while ident(k) == Some("super") && colons(k + 1) {
                    ups += 1;
                    k += 2;
                }
                // A file's own `super` is its parent module: `a/b/c.rs` is module a::b::c.
                let depth = module.len() + inline[i].len();
                if ups >= depth {
                    if let Some(name) = ident(k) {
                        found
                            .push(Import { line: *line, target: name.to_owned(), text: format!("super::…::{name}") });
                    } else if matches!(toks.get(k), Some((_, Tok::Open))) {
                        for (l, name) in group_heads(&toks, k) {
                            found.push(Import { line: l, target: name, text: "super::…::{…}".into() });
                        }
                    }
                }
                i = k.max(i + 1);
            }
            _ => i += 1,
        }
    }
    found
}

/// The first segment of each item of a `{ … }` group starting at `open`.
fn group_heads(toks: &[(usize, Tok)], open: usize) -> Vec<(usize, String)> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for (line, tok) in &toks[open..] {
        match tok {
            Tok::Open => {
                depth += 1;
                if depth == 1 {
                    expect_head = true;
                }
            }
            Tok::Close => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Tok::Comma if depth == 1 => expect_head = true,
            Tok::Ident(name) if depth == 1 && expect_head => {
                if name != "self" {
                    heads.push((*line, name.clone()));
                }
                expect_head = false;
            }
            _ => {
                if depth == 1 {
                    expect_head = false;
                }
            }
        }
    }
    heads
}

/// The module path of a file under `src/`: `tui/app/mod.rs` → `["tui", "app"]`.
fn module_path(rel: &Path) -> Vec<String> {
    // `src/bin/<name>.rs` is the root of a binary of its own, like `main.rs`.
    if rel.starts_with("bin") {
        return Vec::new();
    }
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_owned();
        if stem != "mod" && stem != "lib" && stem != "main" {
            parts.push(stem);
        }
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Violations of [`ALLOWED`] in the files of `root` (a `src/` directory).
fn layer_violations(root: &Path, allowed: &[(&str, &[&str])]) -> Vec<String> {
    let table: BTreeMap<&str, BTreeSet<&str>> =
        allowed.iter().map(|(m, deps)| (*m, deps.iter().copied().collect())).collect();
    let mut problems = Vec::new();
    let mut files = Vec::new();
    rust_files(root, &mut files);
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        let module = module_path(&rel);
        let Some(top) = module.first() else { continue }; // lib.rs, main.rs: the crate root
        let Some(may) = table.get(top.as_str()) else {
            problems.push(format!("src/{}: module `{top}` has no row in the layers table", rel.display()));
            continue;
        };
        let src = std::fs::read_to_string(&file).unwrap_or_default();
        for import in imports(&src, &module) {
            if import.target != *top && !may.contains(import.target.as_str()) {
                problems.push(format!(
                    "src/{}:{}: `{top}` may not use `{}` ({}); allowed: {:?}",
                    rel.display(),
                    import.line,
                    import.target,
                    import.text,
                    may
                ));
            }
        }
    }
    problems
}

/// Sibling files and directories of one directory that import each other in a circle. A
/// directory's `mod.rs` is its parent and may be used by all (that is what `super::` means).
fn sibling_circles(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    // dir module path → sibling name → siblings it imports.
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(root).unwrap_or(file);
        let module = module_path(rel);
        let src = std::fs::read_to_string(file).unwrap_or_default();
        let code = strip(&src);
        let toks = tokens(&code);
        let inline = inline_mods(&toks);
        // Absolute paths of everything the file names: crate::a::b and super::x.
        let mut targets: Vec<Vec<String>> = Vec::new();
        for (i, (_, tok)) in toks.iter().enumerate() {
            let Tok::Ident(word) = tok else { continue };
            if i > 0 && matches!(toks[i - 1].1, Tok::Colons) {
                continue;
            }
            // A unit-test module may borrow a sibling's fixtures; that is not a dependency of
            // the code itself.
            if inline[i].iter().any(|m| m == "tests") {
                continue;
            }
            let start: Option<Vec<String>> = match word.as_str() {
                "crate" => Some(Vec::new()),
                // `super` is the parent of the (inline) module the token sits in; a mod.rs's
                // own module path is its directory, so this holds for it too.
                "super" => {
                    let mut base = module.clone();
                    base.extend(inline[i].iter().cloned());
                    base.pop();
                    Some(base)
                }
                _ => None,
            };
            let Some(mut path) = start else { continue };
            let mut k = i + 1;
            while matches!(toks.get(k), Some((_, Tok::Colons))) {
                match toks.get(k + 1) {
                    Some((_, Tok::Ident(s))) if s == "super" => {
                        path.pop();
                    }
                    Some((_, Tok::Ident(s))) => path.push(s.clone()),
                    Some((_, Tok::Open)) => {
                        for (_, head) in group_heads(&toks, k + 1) {
                            let mut p = path.clone();
                            p.push(head);
                            targets.push(p);
                        }
                        break;
                    }
                    _ => break,
                }
                k += 2;
            }
            targets.push(path);
        }
        // Attribute the edge at every directory level the file sits in.
        for depth in 0..module.len() {
            let dir = module[..depth].to_vec();
            let me = &module[depth];
            for target in &targets {
                if target.len() > depth && target[..depth] == dir[..] && &target[depth] != me {
                    graphs.entry(dir.clone()).or_default().entry(me.clone()).or_default().insert(target[depth].clone());
                }
            }
        }
    }
    let mut problems = Vec::new();
    for (dir, graph) in graphs {
        for (a, uses) in &graph {
            for b in uses {
                if a < b && reaches(&graph, b, a) {
                    let dir = if dir.is_empty() { "src".to_owned() } else { format!("src/{}", dir.join("/")) };
                    problems.push(format!("{dir}: `{a}` and `{b}` import each other (directly or through siblings)"));
                }
            }
        }
    }
    problems
}

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(node) = stack.pop() {
        if node == to {
            return true;
        }
        if seen.insert(node.clone())
            && let Some(next) = graph.get(&node)
        {
            stack.extend(next.iter().cloned());
        }
    }
    false
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The core crate's modules (domain, redact, store, registry) follow the same table; the
/// compiler already keeps them from reaching up, the table keeps them in order among themselves.
fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/forgeloop-core/src")
}

/// The layer each top-level module belongs to, as design §2.2's table names it.
const LAYER: &[(&str, &str)] = &[
    ("domain", "pure"),
    ("redact", "pure"),
    ("store", "files"),
    ("registry", "adapter"),
    ("config", "adapter"),
    ("config_edit", "adapter"),
    ("sandbox", "adapter"),
    ("egress", "adapter"),
    ("results", "adapter"),
    ("runner", "adapter"),
    ("checkout", "adapter"),
    ("github", "adapter"),
    ("cache", "adapter"),
    ("error", "use cases"),
    ("cycle", "use cases"),
    ("output", "shared by front ends"),
    ("signals", "shared by front ends"),
    ("tui", "front end"),
    ("mcp", "front end"),
    ("serve", "front end"),
    ("demo", "front end"),
    ("cli", "front end"),
];

const DESIGN_BEGIN: &str =
    "<!-- layers:begin (generated from tests/layers.rs' ALLOWED; UPDATE_DOCS=1 cargo test --test layers) -->";
const DESIGN_END: &str = "<!-- layers:end -->";

/// Design §2.2's table, made from [`ALLOWED`]: modules that may use the same modules share a
/// row, in the table's order.
fn design_table() -> String {
    let layer =
        |m: &str| LAYER.iter().find(|(n, _)| *n == m).map(|(_, l)| *l).unwrap_or_else(|| panic!("{m} has no layer"));
    let mut rows: Vec<(Vec<&str>, &[&str])> = Vec::new();
    for (module, deps) in ALLOWED {
        match rows.iter_mut().find(|(modules, d)| d == deps && layer(modules[0]) == layer(module)) {
            Some((modules, _)) => modules.push(module),
            None => rows.push((vec![module], deps)),
        }
    }
    let mut out = String::from("\n| module | may use | layer |\n|---|---|---|\n");
    for (modules, deps) in rows {
        let names: Vec<String> = modules.iter().map(|m| format!("`{m}`")).collect();
        let uses = if deps.is_empty() { "—".to_owned() } else { deps.join(", ") };
        out.push_str(&format!("| {} | {uses} | {} |\n", names.join(", "), layer(modules[0])));
    }
    out.push('\n');
    out
}

/// The design's table is this test's: a module added or allowed more without the design
/// following fails here.
#[test]
fn the_designs_layer_table_is_the_tests() {
    for (module, _) in ALLOWED {
        assert!(LAYER.iter().any(|(m, _)| m == module), "{module} has no layer in LAYER");
    }
    files::check_generated("docs/design.md", DESIGN_BEGIN, DESIGN_END, &design_table(), "layers");
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let mut problems = layer_violations(&src(), ALLOWED);
    problems.extend(layer_violations(&core_src(), ALLOWED).into_iter().map(|p| format!("crates/forgeloop-core/{p}")));
    assert!(problems.is_empty(), "layer violations:\n{}", problems.join("\n"));
}

#[test]
fn no_two_files_of_a_directory_import_each_other() {
    let mut problems = sibling_circles(&src());
    // The workspace's other crates keep the same rule.
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for krate in std::fs::read_dir(crates).into_iter().flatten().flatten() {
        let root = krate.path().join("src");
        let name = krate.file_name().to_string_lossy().into_owned();
        problems.extend(sibling_circles(&root).into_iter().map(|p| format!("crates/{name}/{p}")));
    }
    assert!(problems.is_empty(), "circles:\n{}", problems.join("\n"));
}

#[test]
fn every_top_level_module_has_a_row() {
    let rows: BTreeSet<&str> = ALLOWED.iter().map(|(m, _)| *m).collect();
    let entries = std::fs::read_dir(src()).unwrap().chain(std::fs::read_dir(core_src()).unwrap());
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().trim_end_matches(".rs").to_owned();
        if name != "lib" && name != "main" && name != "bin" {
            assert!(rows.contains(name.as_str()), "src/{name} has no row in ALLOWED");
        }
    }
}

/// `forgeloop-sandbox` exists to be small and quick to start: it reaches only the sandbox.
#[test]
fn the_sandbox_binary_uses_only_the_sandbox() {
    let src = std::fs::read_to_string(src().join("bin/forgeloop-sandbox.rs")).unwrap();
    let used: BTreeSet<&str> = src
        .match_indices("forgeloop::")
        .filter_map(|(at, m)| src[at + m.len()..].split(|c: char| !c.is_alphanumeric() && c != '_').next())
        .collect();
    assert_eq!(used, BTreeSet::from(["sandbox"]), "forgeloop-sandbox reaches only forgeloop::sandbox");
}

// ---- the checker itself ----

fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn checker_names_the_file_line_and_import_of_a_violation() {
    let dir = fixture(&[
        ("domain/mod.rs", "//! pure\nuse crate::{\n    redact::Redactor,\n    domain::x,\n};\n"),
        ("redact/mod.rs", "use crate::domain::state::Status;\n"),
        ("store/mod.rs", "fn f() { let _ = crate::cli::run(); }\n"),
    ]);
    let problems = layer_violations(dir.path(), &[("domain", &[]), ("redact", &["domain"]), ("store", &["domain"])]);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("src/domain/mod.rs:3: `domain` may not use `redact`"), "{}", problems[0]);
    assert!(problems[1].starts_with("src/store/mod.rs:1: `store` may not use `cli`"), "{}", problems[1]);
}

#[test]
fn checker_ignores_comments_strings_and_chars() {
    let src = "// use crate::cli;\n/* crate::tui */ let s = \"crate::mcp\"; let r = r#\"crate::demo\"#; let c = '\"'; fn f<'a>(x: &'a str) {}\nuse crate::domain::x;\n";
    let found: Vec<_> = imports(src, &["store".into()]).into_iter().map(|i| (i.line, i.target)).collect();
    assert_eq!(found, [(3, "domain".to_owned())]);
}

#[test]
fn checker_follows_super_out_of_the_crate_root_only() {
    let inner = imports("use super::app::App;\nuse super::super::cli;\n", &["tui".into(), "log_view".into()]);
    assert_eq!(inner.iter().map(|i| i.target.as_str()).collect::<Vec<_>>(), ["cli"]);
}

#[test]
fn checker_knows_super_inside_an_inline_module_is_the_file() {
    let found =
        imports("mod tests {\n    use super::libgit2_version;\n}\nuse super::super::cli;\n", &["checkout".into()]);
    assert_eq!(found.iter().map(|i| i.target.as_str()).collect::<Vec<_>>(), ["cli"]);
}

#[test]
fn checker_finds_a_circle_between_siblings() {
    let dir = fixture(&[
        ("tui/mod.rs", "pub mod app;\npub mod log_view;\n"),
        ("tui/app/mod.rs", "use super::log_view::Worker;\n"),
        ("tui/log_view.rs", "use crate::tui::app::App;\n"),
        ("tui/views.rs", "use super::app::App;\n"),
    ]);
    let problems = sibling_circles(dir.path());
    assert_eq!(problems, ["src/tui: `app` and `log_view` import each other (directly or through siblings)"]);
    // A unit test borrowing a sibling's fixture is no circle.
    let dir = fixture(&[
        ("redact/table.rs", "use super::formats::Row;\n"),
        ("redact/formats.rs", "mod tests {\n    use crate::redact::table::RowRegex;\n}\n"),
    ]);
    assert!(sibling_circles(dir.path()).is_empty());
}
