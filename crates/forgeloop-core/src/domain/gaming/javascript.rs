//! JavaScript's and TypeScript's shortcuts: reading the caller (stacks, `arguments.callee`,
//! `module.parent`), exits and exit hooks in library code (a `bin/` or CLI entry point may
//! exit), tampering with `assert`, the module loader or the test globals, `valueOf`/
//! `Symbol.toPrimitive` returning a constant and `asymmetricMatch` accepting anything, and a
//! top-level `let` counter that decides the answer.

use super::lexer::{Lexed, Value, braces, has_word, ident_byte};
use super::patterns::{After, LineRule, apply, assigned, call_arguments, failure_status, success_status};
use super::view::FileView;
use super::{Category, Finding, names_test_file};

/// Needles that hold anywhere.
const RULES: &[LineRule] = &[
    LineRule {
        category: Category::ReadsCaller,
        needle: "Error.prepareStackTrace",
        dot: false,
        after: After::Any,
        says: "reads structured call stacks (Error.prepareStackTrace): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "arguments.callee",
        dot: false,
        after: After::Any,
        says: "reads arguments.callee: code that can tell who calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "expect.getState(",
        dot: false,
        after: After::Any,
        says: "reads the test runner's state (expect.getState): code that knows which test is running",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "currentTestName",
        dot: true,
        after: After::Any,
        says: "reads the current test's name: code that knows which test is running",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "assert.",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "Object.defineProperty(assert",
        dot: false,
        after: After::Any,
        says: "redefines a property of assert: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "Object.assign(assert",
        dot: false,
        after: After::Any,
        says: "overwrites properties of assert: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "Module._load",
        dot: false,
        after: After::Assigned,
        says: "replaces Module._load: every require, the tests' included, can be redirected",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "Module._resolveFilename",
        dot: false,
        after: After::Assigned,
        says: "replaces Module._resolveFilename: every require, the tests' included, can be redirected",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "Module.prototype.require",
        dot: false,
        after: After::Assigned,
        says: "replaces Module.prototype.require: every require, the tests' included, can be redirected",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "require.cache",
        dot: false,
        after: After::Assigned,
        says: "writes into require.cache: a module the tests require can be swapped",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "require.extensions",
        dot: false,
        after: After::Assigned,
        says: "writes into require.extensions: how the tests are loaded can be changed",
    },
];

/// Needles that count only outside an entry point (a CLI may exit and handle its own errors).
const LIBRARY_RULES: &[LineRule] = &[
    LineRule {
        category: Category::ExitsEarly,
        needle: "process.kill(process.pid",
        dot: false,
        after: After::Any,
        says: "kills its own process: a test run that ends early can report success",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "process.exit",
        dot: false,
        after: After::Assigned,
        says: "replaces process.exit: how the run ends is no longer the runner's",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "process.reallyExit",
        dot: false,
        after: After::Assigned,
        says: "replaces process.reallyExit: how the run ends is no longer the runner's",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "process.setUncaughtExceptionCaptureCallback(",
        dot: false,
        after: After::Any,
        says: "captures uncaught exceptions: a failure no longer ends the run as one",
    },
];

/// The process events a hook on which can change how a failing run ends.
const EXIT_EVENTS: &[&str] =
    &["exit", "beforeExit", "uncaughtException", "uncaughtExceptionMonitor", "unhandledRejection"];
/// The names test runners put in the global scope.
const TEST_GLOBALS: &[&str] = &[
    "it",
    "test",
    "describe",
    "expect",
    "assert",
    "beforeEach",
    "afterEach",
    "beforeAll",
    "afterAll",
    "before",
    "after",
    "jest",
    "vi",
];
/// Modules whose exports are the oracle.
const ASSERT_MODULES: &[&str] =
    &["assert", "node:assert", "assert/strict", "node:assert/strict", "node:test", "chai", "expect"];

/// JavaScript's shortcuts in one file.
pub(crate) fn scan(view: &FileView, out: &mut Vec<Finding>) {
    let entry = is_entry_point(view);
    // A library that already exits (with a status it is handed) exits by design.
    let base_exits = view.lines.iter().any(|l| !l.added && l.lexed.has("process.exit(", false));
    apply(view, RULES, |_, _| true, out);
    if !entry {
        apply(view, LIBRARY_RULES, |_, _| true, out);
    }
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() {
            continue;
        }
        let lexed = &line.lexed;
        let mut push = |category, says: String| out.push(Finding { anchored: false, category, at: i, says });
        if reads_caller(view, i) {
            push(Category::ReadsCaller, "reads the call stack: code that can tell which test calls it".to_owned());
        }
        let reads_file = ["readFileSync(", "readFile(", "createReadStream("].iter().any(|n| lexed.has(n, true));
        if reads_file && lexed.literals.iter().any(|l| matches!(&l.value, Value::Str(s) if names_test_file(s))) {
            push(Category::ReadsCaller, "opens a test file: code that reads the tests can answer them".to_owned());
        }
        if let Some(what) = assert_module_assigned(lexed) {
            push(
                Category::TampersWithOracle,
                format!("assigns to require('{what}'): the test framework itself is changed"),
            );
        }
        if let Some(name) = test_global_assigned(lexed) {
            push(
                Category::TampersWithOracle,
                format!("reassigns the test global {name}: the test framework itself is changed"),
            );
        }
        if entry {
            continue;
        }
        for at in lexed.find("process.exit(", false) {
            let args = call_arguments(&lexed.code, at + "process.exit".len()).unwrap_or("");
            if !failure_status(args) && (success_status(args) || !base_exits) {
                push(Category::ExitsEarly, "calls process.exit: a test run that ends early reports success".to_owned());
            }
        }
        for at in lexed.find("process.exitCode", false) {
            let rest = lexed.code.get(at + "process.exitCode".len()..).unwrap_or("").trim_start();
            if let Some(value) = rest.strip_prefix('=').filter(|r| !r.starts_with('='))
                && value.split([';', ',', ')', '}']).next().unwrap_or("").trim() == "0"
            {
                push(Category::ExitsEarly, "sets process.exitCode = 0: a failing run ends with success".to_owned());
            }
        }
        if let Some(event) = exit_event_hook(lexed) {
            push(Category::ExitHook, format!("listens for process '{event}': it can change how a failing run ends"));
        }
    }
    comparisons(view, out);
    counters(view, out);
}

/// A CLI or entry point: a `#!` line, under `bin/`/`scripts/`/`cli/`, or named `cli`, `bin`,
/// `main` or `server`.
fn is_entry_point(view: &FileView) -> bool {
    let path = view.path.as_str();
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    let dirs: Vec<&str> = path.split('/').rev().skip(1).collect();
    matches!(stem, "cli" | "bin" | "main" | "server")
        || dirs.iter().any(|d| matches!(*d, "bin" | "scripts" | "cli"))
        || view.lines.first().is_some_and(|l| l.no == 1 && l.raw.starts_with("#!"))
}

/// A stack read to decide something: `new Error().stack.includes(…)`, `(new Error).stack[2]`,
/// or `const s = new Error().stack` examined in the next lines; `Error.captureStackTrace(obj)`
/// (not `this`: an error class does that), `fn.caller.…`, `module.parent.…`, `require.main.…`.
/// A stack printed with a warning is not read.
fn reads_caller(view: &FileView, i: usize) -> bool {
    let lexed = &view.lines[i].lexed;
    let text = &lexed.text;
    let code = &lexed.code;
    let after = |at: usize| code.get(at..).unwrap_or("");
    for at in lexed.find("new Error", false) {
        let mut rest = after(at + "new Error".len()).trim_start();
        if rest.starts_with('(') {
            let Some(args) = call_arguments(rest, 0) else { continue };
            rest = rest.get(args.len() + 2..).unwrap_or("").trim_start();
        }
        let rest = rest.strip_prefix(')').unwrap_or(rest).trim_start();
        let Some(tail) = rest.strip_prefix(".stack") else { continue };
        if tail.bytes().next().is_some_and(ident_byte) {
            continue;
        }
        if examined(tail) {
            return true;
        }
        // `const stack = new Error().stack;` then `stack.includes(…)` below.
        let before = code.get(..at).unwrap_or("").trim();
        let declared = ["const ", "let ", "var "].iter().find_map(|k| before.strip_prefix(k));
        if let Some(name) = declared.and_then(|d| d.strip_suffix('=')).map(str::trim)
            && !name.is_empty()
            && name.bytes().all(ident_byte)
        {
            let to = (i + 5).min(view.lines.len() - 1);
            let used = (i + 1..=to).any(|j| {
                view.contiguous(i, j)
                    && view.lines[j]
                        .lexed
                        .find(name, false)
                        .into_iter()
                        .any(|k| examined(view.lines[j].lexed.code.get(k + name.len()..).unwrap_or("")))
            });
            if used {
                return true;
            }
        }
    }
    for at in lexed.find("Error.captureStackTrace(", false) {
        let first = call_arguments(code, at + "Error.captureStackTrace".len()).unwrap_or("");
        if first.split(',').next().unwrap_or("").trim() != "this" {
            return true;
        }
    }
    for at in lexed.find(".caller", true) {
        let before = text.get(..at).unwrap_or("");
        if before.ends_with("callee") || after(at + ".caller".len()).trim_start().starts_with('.') {
            return true;
        }
    }
    for needle in ["module.parent", "require.main"] {
        for at in lexed.find(needle, false) {
            let rest = after(at + needle.len());
            if rest.starts_with('.') || rest.starts_with("?.") {
                return true;
            }
        }
    }
    false
}

/// `require('assert').ok = …`: the module's name.
fn assert_module_assigned(lexed: &Lexed) -> Option<String> {
    for at in lexed.find("require(", false) {
        let open = at + "require".len();
        let args = call_arguments(&lexed.code, open)?;
        let close = open + args.len() + 1;
        let module = lexed.literals.iter().find(|l| l.start > open && l.end <= close).and_then(|l| match &l.value {
            Value::Str(s) if ASSERT_MODULES.contains(&s.as_str()) => Some(s.clone()),
            _ => None,
        });
        let rest = lexed.text.get(close + 1..).unwrap_or("");
        if let Some(module) = module
            && rest.starts_with('.')
            && assigned(rest)
        {
            return Some(module);
        }
    }
    None
}

/// `global.it = …`, `globalThis.expect = …`: the name.
fn test_global_assigned(lexed: &Lexed) -> Option<&'static str> {
    for prefix in ["global.", "globalThis.", "window."] {
        for at in lexed.find(prefix, false) {
            let rest = lexed.text.get(at + prefix.len()..).unwrap_or("");
            let name_len = rest.bytes().take_while(|&b| ident_byte(b)).count();
            let name = &rest[..name_len];
            if let Some(known) = TEST_GLOBALS.iter().find(|g| **g == name)
                && assigned(&rest[name_len..])
            {
                return Some(known);
            }
        }
    }
    None
}

/// `process.on('exit', …)` and its kin: the event.
fn exit_event_hook(lexed: &Lexed) -> Option<String> {
    for method in ["on(", "once(", "addListener(", "prependListener(", "prependOnceListener("] {
        let needle = format!("process.{method}");
        for at in lexed.find(&needle, false) {
            let open = at + needle.len() - 1;
            let event = lexed.literals.iter().find(|l| l.start > open).and_then(|l| match &l.value {
                Value::Str(s) if EXIT_EVENTS.contains(&s.as_str()) => Some(s.clone()),
                _ => None,
            });
            let first_arg_is_it = lexed.text.get(open + 1..).unwrap_or("").trim_start().starts_with(['\'', '"', '`']);
            if let Some(event) = event
                && first_arg_is_it
            {
                return Some(event);
            }
        }
    }
    None
}

/// What follows a stack (`.includes(`, `.split(`, `[2]`): it is searched or taken apart.
fn examined(tail: &str) -> bool {
    let tail = tail.trim_start();
    if tail.starts_with('[') {
        return true;
    }
    let Some(method) = tail.strip_prefix('.') else { return false };
    let len = method.bytes().take_while(|&b| ident_byte(b)).count();
    len > 0 && method[len..].trim_start().starts_with('(')
}

/// The code from line `i` at `from` on, over the following lines of the same stretch (at most
/// 80), joined with newlines; and the line each offset is on.
fn code_from(view: &FileView, i: usize, from: usize) -> (String, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut starts = Vec::new();
    for (k, line) in view.lines.iter().enumerate().skip(i).take(80) {
        if k > i && line.fresh {
            break;
        }
        starts.push((text.len(), k));
        let code = if k == i { line.lexed.code.get(from..).unwrap_or("") } else { line.lexed.code.as_str() };
        text.push_str(code);
        text.push('\n');
    }
    (text, starts)
}

fn line_at(starts: &[(usize, usize)], offset: usize) -> usize {
    let n = starts.partition_point(|&(s, _)| s <= offset).saturating_sub(1);
    starts.get(n).map_or(0, |&(_, k)| k)
}

/// A function's parameters and body after its name: `(params) { body }`, `: function (params)
/// { body }`, `= (params) => expression`, `: x => { body }`. Returns (params, body, end offset).
fn function_after(code: &str) -> Option<(String, String, usize)> {
    let mut rest = code.trim_start();
    let mut at = code.len() - rest.len();
    if let Some(r) = rest.strip_prefix(':').or_else(|| rest.strip_prefix('=').filter(|r| !r.starts_with(['=', '>']))) {
        let r2 = r.trim_start();
        let r2 = r2.strip_prefix("async").map(str::trim_start).unwrap_or(r2);
        let r2 = r2.strip_prefix("function").map(str::trim_start).unwrap_or(r2);
        at = code.len() - r2.len();
        rest = r2;
    }
    let (params, after_params) = if rest.starts_with('(') {
        let inner = call_arguments(rest, 0)?;
        (inner.to_owned(), at + inner.len() + 2)
    } else {
        let name_len = rest.bytes().take_while(|&b| ident_byte(b)).count();
        if name_len == 0 {
            return None;
        }
        (rest[..name_len].to_owned(), at + name_len)
    };
    let tail = code.get(after_params..)?;
    // A TypeScript return type: skip to the body.
    let trimmed = tail.trim_start();
    let trimmed = match trimmed.strip_prefix(':') {
        Some(typed) => &typed[typed.find(['{', '='])?..],
        None => trimmed,
    };
    let body_at = code.len() - trimmed.len();
    if let Some(arrow) = trimmed.strip_prefix("=>") {
        let expression = arrow.trim_start();
        if expression.starts_with('{') {
            let open = code.len() - expression.len();
            let body = braces(code, open)?;
            return Some((params, body.to_owned(), open + body.len() + 2));
        }
        let end = expression.find(['\n', ';']).unwrap_or(expression.len());
        let expression = expression[..end].trim_end_matches([',', ' ', '}']);
        return Some((params, format!("return {expression}"), code.len() - arrow.len() + end));
    }
    if trimmed.starts_with('{') {
        let body = braces(code, body_at)?;
        return Some((params, body.to_owned(), body_at + body.len() + 2));
    }
    None
}

/// `valueOf`/`[Symbol.toPrimitive]` that never read `this`, and `asymmetricMatch` that never
/// reads what it is matched against.
fn comparisons(view: &FileView, out: &mut Vec<Finding>) {
    for (i, line) in view.lines.iter().enumerate() {
        if line.test {
            continue;
        }
        for (needle, matcher) in [("valueOf", false), ("Symbol.toPrimitive]", false), ("asymmetricMatch", true)] {
            for at in line.lexed.find(needle, true) {
                if !defines(&line.lexed.code, at, needle) {
                    continue;
                }
                let (code, starts) = code_from(view, i, at + needle.len());
                let Some((params, body, end)) = function_after(&code) else { continue };
                let last = line_at(&starts, end.saturating_sub(1)).max(i);
                if !view.lines[i..=last.min(view.lines.len() - 1)].iter().any(|l| l.scanned()) {
                    continue;
                }
                let returns = body.contains("return");
                let constant = if matcher {
                    let first = params.split(',').next().unwrap_or("").trim();
                    let first = first.split(':').next().unwrap_or("").trim();
                    returns && has_word(&body, "true") && (first.is_empty() || !has_word(&body, first))
                } else {
                    returns && !has_word(&body, "this")
                };
                if constant {
                    let what = if matcher { "asymmetricMatch" } else { needle.trim_end_matches(']') };
                    out.push(Finding {
                anchored: false,
                        category: Category::OverloadsComparison,
                        at: i,
                        says: format!(
                            "defines {what} that ignores the value it stands for: an assertion comparing it can pass whatever the result"
                        ),
                    });
                }
            }
        }
    }
}

/// Whether the name at `at` is being defined (a method, a property of an object literal, an
/// assignment), not called (`input.valueOf()`, `x[Symbol.toPrimitive]('number')`).
fn defines(code: &str, at: usize, needle: &str) -> bool {
    let rest = code.get(at + needle.len()..).unwrap_or("").trim_start();
    if rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>") {
        return true;
    }
    let before = code.get(..at).unwrap_or("").trim_end();
    let before =
        if needle.starts_with("Symbol") { before.strip_suffix('[').unwrap_or(before).trim_end() } else { before };
    before.is_empty()
        || before.ends_with(['{', ','])
        || ["static", "async", "get", "public", "override"]
            .iter()
            .any(|w| before.strip_suffix(w).is_some_and(|b| !b.bytes().last().is_some_and(ident_byte)))
}

/// The names a line declares at the top level with `let`/`var`.
fn top_level_names(view: &FileView) -> Vec<String> {
    view.lines
        .iter()
        .filter(|l| if view.whole { l.depth == 0 } else { l.indent == 0 && l.depth == 0 })
        .filter_map(|l| {
            let code = l.lexed.trimmed();
            let code = code.strip_prefix("export ").unwrap_or(code);
            let rest = code.strip_prefix("let ").or_else(|| code.strip_prefix("var "))?;
            let rest = rest.trim_start();
            let len = rest.bytes().take_while(|&b| ident_byte(b)).count();
            rest.get(..len).filter(|n| !n.is_empty()).map(str::to_owned)
        })
        .collect()
}

/// `n++`, `++n`, `n += 1`, `n = n + 1` (and the same with `-`).
fn increments(code: &str, name: &str) -> bool {
    let bytes = code.as_bytes();
    code.match_indices(name).any(|(at, _)| {
        let before = at.checked_sub(1).and_then(|p| bytes.get(p)).copied();
        let after_at = at + name.len();
        if before.is_some_and(|b| ident_byte(b) || b == b'.') || bytes.get(after_at).copied().is_some_and(ident_byte) {
            return false;
        }
        let prefix = code[..at].trim_end();
        let rest = code[after_at..].trim_start();
        prefix.ends_with("++")
            || prefix.ends_with("--")
            || rest.starts_with("++")
            || rest.starts_with("--")
            || rest.starts_with("+=")
            || rest.starts_with("-=")
            || rest.strip_prefix('=').is_some_and(|r| {
                !r.starts_with('=')
                    && r.trim_start().strip_prefix(name).is_some_and(|r| r.trim_start().starts_with(['+', '-']))
            })
    })
}

/// `name` in a condition (`if`, `while`, `switch`, `? :`) or indexing what is returned.
fn decides(code: &str, name: &str) -> bool {
    if !has_word(code, name) {
        return false;
    }
    let condition = has_word(code, "if") || has_word(code, "while") || has_word(code, "switch") || {
        let q = code.find('?');
        q.is_some_and(|q| !code[q..].starts_with("?.") && !code[q..].starts_with("??") && code[q..].contains(':'))
    };
    condition
        || (has_word(code, "return")
            && code.split('[').skip(1).any(|inside| has_word(inside.split(']').next().unwrap_or(""), name)))
}

/// A top-level `let` counted up inside a function and used to decide the answer (the change
/// added the counting or the deciding).
fn counters(view: &FileView, out: &mut Vec<Finding>) {
    let names = top_level_names(view);
    if names.is_empty() {
        return;
    }
    for (i, line) in view.lines.iter().enumerate() {
        if line.test || line.depth <= 0 {
            continue;
        }
        for name in &names {
            if !increments(&line.lexed.code, name) {
                continue;
            }
            let from = i.saturating_sub(15);
            let to = (i + 15).min(view.lines.len() - 1);
            let decision = (from..=to).find(|&j| {
                let l = &view.lines[j];
                view.contiguous(i, j)
                    && !l.test
                    && l.depth > 0
                    && decides(&l.lexed.code, name)
                    && (l.scanned() || line.scanned())
            });
            if let Some(d) = decision {
                out.push(Finding {
                    anchored: false,
                    category: Category::RecordsState,
                    at: if view.lines[d].scanned() { d } else { i },
                    says: format!(
                        "counts calls in the module-level {name} and answers by it: the result changes from one test call to the next?"
                    ),
                });
                break;
            }
        }
    }
}
