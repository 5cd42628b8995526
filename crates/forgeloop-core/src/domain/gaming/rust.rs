//! Rust's shortcuts: reading the caller (`Location::caller()`, backtraces, the thread's name —
//! libtest names each test's thread after the test), exits and panic hooks outside `main.rs`
//! and `src/bin/`, a crate-local `assert_eq!` that shadows the standard one, `PartialEq` that
//! ignores `other`, a `static` counter that decides the answer, and constructors that run
//! before `main` and before any test (`.init_array`, `#[ctor]`).

use super::lexer::{Lexed, Value, braces, has_word, ident_byte};
use super::patterns::{After, LineRule, apply, call_arguments, failure_status, success_status};
use super::view::FileView;
use super::{Category, Finding, names_test_file};

/// Needles that hold anywhere.
const RULES: &[LineRule] = &[
    LineRule {
        category: Category::ReadsCaller,
        needle: "Location::caller()",
        dot: false,
        after: After::Any,
        says: "reads its caller's location (Location::caller): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "Backtrace::capture(",
        dot: false,
        after: After::Any,
        says: "captures a backtrace: code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "Backtrace::force_capture(",
        dot: false,
        after: After::Any,
        says: "captures a backtrace: code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "Backtrace::new(",
        dot: false,
        after: After::Any,
        says: "captures a backtrace: code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "thread::current().name()",
        dot: false,
        after: After::Any,
        says: "reads the thread's name, which libtest sets to the test's: code that knows which test is running",
    },
];

/// Needles that count outside `main.rs`, `src/bin/`, examples and benches.
const LIBRARY_RULES: &[LineRule] = &[
    LineRule {
        category: Category::ExitsEarly,
        needle: "libc::_exit(",
        dot: false,
        after: After::Any,
        says: "calls libc::_exit: a test run that ends early reports success",
    },
    LineRule {
        category: Category::ExitsEarly,
        needle: "libc::exit(",
        dot: false,
        after: After::Any,
        says: "calls libc::exit: a test run that ends early reports success",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "panic::set_hook(",
        dot: false,
        after: After::Any,
        says: "installs a panic hook: a failing test's panic is handled by the code under test",
    },
];

/// Macros of the standard library's test oracle, which a `macro_rules!` of the crate shadows.
const ORACLE_MACROS: &[&str] =
    &["assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne", "panic", "unreachable"];

/// Link sections whose functions run before `main`.
pub(crate) const INIT_SECTIONS: &[&str] = &[".init_array", ".preinit_array", ".ctors", "__mod_init_func", ".CRT$XC"];

/// Rust's shortcuts in one file.
pub(crate) fn scan(view: &FileView, out: &mut Vec<Finding>) {
    apply(view, RULES, |_, _| true, out);
    let program = is_program(&view.path);
    // A library that already exits (with a status it is handed) exits by design.
    let base_exits = view.lines.iter().any(|l| !l.added && l.lexed.has("process::exit(", false));
    if !program {
        apply(view, LIBRARY_RULES, |_, _| true, out);
    }
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() {
            continue;
        }
        let lexed = &line.lexed;
        let mut push = |category, says: String| out.push(Finding { anchored: false, category, at: i, says });
        if !program {
            for at in lexed.find("process::exit(", false) {
                let args = call_arguments(&lexed.code, at + "process::exit".len()).unwrap_or("");
                if !failure_status(args) && (success_status(args) || !base_exits) {
                    push(
                        Category::ExitsEarly,
                        "calls process::exit: a test run that ends early reports success".to_owned(),
                    );
                }
            }
        }
        for at in lexed.find("macro_rules!", false) {
            let rest = lexed.code.get(at + "macro_rules!".len()..).unwrap_or("").trim_start();
            let len = rest.bytes().take_while(|&b| ident_byte(b)).count();
            let name = rest.get(..len).unwrap_or("");
            if ORACLE_MACROS.contains(&name) {
                push(
                    Category::TampersWithOracle,
                    format!(
                        "defines its own {name}!: the tests' assertions are the crate's, not the standard library's"
                    ),
                );
            }
        }
        if let Some(section) = init_section(lexed) {
            push(Category::Constructor, format!("places code in {section}: it runs before main and before any test"));
        }
        if is_ctor_attribute(lexed) {
            push(
                Category::Constructor,
                "marks a constructor (#[ctor]): it runs before main and before any test".to_owned(),
            );
        }
        let reads =
            ["include_str!(", "include_bytes!(", "read_to_string(", "fs::read("].iter().any(|n| lexed.has(n, true));
        if reads && lexed.literals.iter().any(|l| matches!(&l.value, Value::Str(s) if names_test_file(s))) {
            push(Category::ReadsCaller, "reads a test file: code that reads the tests can answer them".to_owned());
        }
    }
    comparisons(view, out);
    counters(view, out);
}

/// A binary's own code: `main.rs`, `src/bin/`, examples, benches, a build script.
fn is_program(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let dirs: Vec<&str> = path.split('/').rev().skip(1).collect();
    matches!(name, "main.rs" | "build.rs") || dirs.iter().any(|d| matches!(*d, "bin" | "examples" | "benches"))
}

/// A string literal naming a section that runs code before `main`.
pub(crate) fn init_section(lexed: &Lexed) -> Option<&'static str> {
    lexed.literals.iter().find_map(|l| match &l.value {
        Value::Str(s) => INIT_SECTIONS.iter().find(|sec| s.contains(**sec)).copied(),
        Value::Num(_) => None,
    })
}

/// `#[ctor]`, `#[ctor::ctor]`, `#[dtor]`, `#[ctor::dtor(…)]`.
fn is_ctor_attribute(lexed: &Lexed) -> bool {
    let code = lexed.trimmed();
    code.starts_with("#[") && (has_word(code, "ctor") || has_word(code, "dtor"))
}

/// The code of lines `i..` (the same stretch, at most 120 lines) joined, and the line each
/// offset is on.
fn code_from(view: &FileView, i: usize) -> (String, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut starts = Vec::new();
    for (k, line) in view.lines.iter().enumerate().skip(i).take(120) {
        if k > i && line.fresh {
            break;
        }
        starts.push((text.len(), k));
        text.push_str(&line.lexed.code);
        text.push('\n');
    }
    (text, starts)
}

fn line_at(starts: &[(usize, usize)], offset: usize) -> usize {
    let n = starts.partition_point(|&(s, _)| s <= offset).saturating_sub(1);
    starts.get(n).map_or(0, |&(_, k)| k)
}

/// `fn eq(&self, other: &Self) -> bool { true }` and `fn ne`: the body never reads `other`.
fn comparisons(view: &FileView, out: &mut Vec<Finding>) {
    for (i, line) in view.lines.iter().enumerate() {
        if line.test {
            continue;
        }
        for name in ["eq", "ne"] {
            let needle = format!("fn {name}(");
            if line.lexed.find(&needle, false).is_empty() {
                continue;
            }
            let (code, starts) = code_from(view, i);
            let Some(at) = code.find(&needle) else { continue };
            let open = at + needle.len() - 1;
            let Some(params) = call_arguments(&code, open) else { continue };
            let Some(other) = params.split(',').nth(1).and_then(|p| p.split(':').next()).map(str::trim) else {
                continue;
            };
            let after = open + params.len() + 2;
            let Some(brace) = code.get(after..).and_then(|r| r.find('{')).map(|b| b + after) else { continue };
            if code.get(after..brace).is_some_and(|sig| sig.contains(';')) {
                continue; // a declaration in a trait, no body
            }
            let Some(body) = braces(&code, brace) else { continue };
            let last = line_at(&starts, brace + body.len() + 1);
            if !view.lines[i..=last.min(view.lines.len() - 1)].iter().any(|l| l.scanned()) {
                continue;
            }
            let ignored = other == "_" || other.starts_with('_') || !has_word(body, other);
            if ignored && !body.trim().is_empty() {
                out.push(Finding {
                    anchored: false,
                    category: Category::OverloadsComparison,
                    at: i,
                    says: format!("implements {name} without reading what it is compared with: any assert_eq! passes"),
                });
            }
        }
    }
}

/// The names declared `static` (atomics or `static mut`) anywhere in the file.
fn statics(view: &FileView) -> Vec<String> {
    view.lines
        .iter()
        .filter_map(|l| {
            let code = l.lexed.trimmed();
            let at = code.find("static ")?;
            if at > 0 && !code[..at].trim_end().ends_with("pub") && !code[..at].trim_end().ends_with(')') {
                return None;
            }
            let rest = code[at + "static ".len()..].trim_start();
            let rest = rest.strip_prefix("mut ").unwrap_or(rest).trim_start();
            let len = rest.bytes().take_while(|&b| ident_byte(b)).count();
            let name = rest.get(..len)?;
            let typed = rest.get(len..)?.trim_start().starts_with(':');
            (typed && !name.is_empty()).then(|| name.to_owned())
        })
        .collect()
}

/// `N.fetch_add(`, `N.fetch_sub(`, `N.fetch_update(`, `N += `: the value bound from it, if any
/// (`let n = N.fetch_add(1, …)`).
fn increment(code: &str, name: &str) -> Option<Option<String>> {
    let counts = ["fetch_add(", "fetch_sub(", "fetch_update("].iter().any(|m| code.contains(&format!("{name}.{m}")))
        || code.match_indices(name).any(|(at, _)| {
            let before = at.checked_sub(1).and_then(|p| code.as_bytes().get(p)).copied();
            !before.is_some_and(ident_byte) && {
                let rest = code[at + name.len()..].trim_start();
                rest.starts_with("+=") || rest.starts_with("-=")
            }
        });
    if !counts {
        return None;
    }
    let bound = code.trim_start().strip_prefix("let ").and_then(|r| {
        let r = r.trim_start().strip_prefix("mut ").unwrap_or(r.trim_start());
        let len = r.bytes().take_while(|&b| ident_byte(b)).count();
        r.get(..len).filter(|n| !n.is_empty()).map(str::to_owned)
    });
    Some(bound)
}

/// A `static` counter counted up and then used in a condition (`if`, `match`, `while`); the
/// change added the counting or the deciding.
fn counters(view: &FileView, out: &mut Vec<Finding>) {
    let names = statics(view);
    if names.is_empty() {
        return;
    }
    for (i, line) in view.lines.iter().enumerate() {
        if line.test {
            continue;
        }
        for name in &names {
            let Some(bound) = increment(&line.lexed.code, name) else { continue };
            let condition = |code: &str| {
                (has_word(code, "if") || has_word(code, "match") || has_word(code, "while"))
                    && (has_word(code, name) || bound.as_deref().is_some_and(|b| has_word(code, b)))
            };
            let to = (i + 15).min(view.lines.len() - 1);
            let decision = (i..=to).find(|&j| {
                let l = &view.lines[j];
                view.contiguous(i, j) && !l.test && condition(&l.lexed.code) && (l.scanned() || line.scanned())
            });
            if let Some(d) = decision {
                out.push(Finding {
                    anchored: false,
                    category: Category::RecordsState,
                    at: if line.scanned() { i } else { d },
                    says: format!(
                        "counts calls in the static {name} and answers by it: the result changes from one test call to the next?"
                    ),
                });
                break;
            }
        }
    }
}
