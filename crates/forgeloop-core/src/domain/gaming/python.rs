//! Python's shortcuts: reading the caller's frame or source, exits and hooks (an exit counts
//! when it runs at import: module level, not under `if __name__ == "__main__":` nor in a
//! function), tampering with `unittest`/`pytest`/`builtins` and the import machinery, an
//! `__eq__` that ignores its argument, and a `global` counter that decides the answer.

use super::lexer::has_word;
use super::patterns::{After, LineRule, apply, call_arguments};
use super::view::FileView;
use super::{Category, Finding, names_test_file};

/// Needles that hold wherever they are.
const RULES: &[LineRule] = &[
    LineRule {
        category: Category::ReadsCaller,
        needle: "inspect.stack(",
        dot: false,
        after: After::Any,
        says: "reads the call stack (inspect.stack): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "currentframe(",
        dot: true,
        after: After::Any,
        says: "reads the current frame (inspect.currentframe): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "_getframe(",
        dot: true,
        after: After::Any,
        says: "reads a caller's frame (sys._getframe): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: ".f_back",
        dot: true,
        after: After::Any,
        says: "walks to the caller's frame (.f_back): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "extract_stack(",
        dot: true,
        after: After::Any,
        says: "reads the call stack (traceback.extract_stack): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "getouterframes(",
        dot: true,
        after: After::Any,
        says: "reads the callers' frames (inspect.getouterframes): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ReadsCaller,
        needle: "walk_stack(",
        dot: true,
        after: After::Any,
        says: "reads the call stack (traceback.walk_stack): code that can tell which test calls it",
    },
    LineRule {
        category: Category::ExitsEarly,
        needle: "os._exit(",
        dot: false,
        after: After::Any,
        says: "calls os._exit: a test run that ends early reports success",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "atexit.register",
        dot: false,
        after: After::Any,
        says: "registers an exit hook (atexit.register): it runs after the tests and can change how the run ends",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "sys.excepthook",
        dot: false,
        after: After::Assigned,
        says: "replaces sys.excepthook: an uncaught failure no longer ends the run as one",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "threading.excepthook",
        dot: false,
        after: After::Assigned,
        says: "replaces threading.excepthook: a failing thread no longer reports as one",
    },
    LineRule {
        category: Category::ExitHook,
        needle: "sys.unraisablehook",
        dot: false,
        after: After::Assigned,
        says: "replaces sys.unraisablehook: errors the interpreter reports are swallowed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "unittest.",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "TestCase.",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "pytest.",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "_pytest.",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: the test framework itself is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "builtins.",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: what every test sees is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "__builtins__",
        dot: false,
        after: After::Assigned,
        says: "assigns {target}: what every test sees is changed",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "AssertionError",
        dot: false,
        after: After::Assigned,
        says: "rebinds AssertionError: a failed assertion may no longer fail",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "sys.meta_path",
        dot: false,
        after: After::Mutated,
        says: "changes sys.meta_path: imports, the tests' included, can be redirected",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "sys.path_hooks",
        dot: false,
        after: After::Mutated,
        says: "changes sys.path_hooks: imports, the tests' included, can be redirected",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "settrace(",
        dot: true,
        after: After::Any,
        says: "installs a trace function (settrace): it sees and can change every test's execution",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "sys.setprofile(",
        dot: false,
        after: After::Any,
        says: "installs a profile hook (sys.setprofile): it sees every call the tests make",
    },
    LineRule {
        category: Category::TampersWithOracle,
        needle: "sys.pycache_prefix",
        dot: false,
        after: After::Assigned,
        says: "sets sys.pycache_prefix: bytecode is read from elsewhere than the sources",
    },
];

/// Exits that count only when they run at import.
const AT_IMPORT: &[LineRule] = &[
    LineRule {
        category: Category::ExitsEarly,
        needle: "sys.exit(",
        dot: false,
        after: After::Any,
        says: "calls sys.exit at import: a test run that ends early reports success",
    },
    LineRule {
        category: Category::ExitsEarly,
        needle: "exit(",
        dot: false,
        after: After::Any,
        says: "calls exit at import: a test run that ends early reports success",
    },
    LineRule {
        category: Category::ExitsEarly,
        needle: "quit(",
        dot: false,
        after: After::Any,
        says: "calls quit at import: a test run that ends early reports success",
    },
    LineRule {
        category: Category::ExitsEarly,
        needle: "raise SystemExit",
        dot: false,
        after: After::Any,
        says: "raises SystemExit at import: a test run that ends early reports success",
    },
];

/// Test-framework modules a `sys.modules[…] =` must not replace.
const FRAMEWORK_MODULES: &[&str] = &["unittest", "pytest", "_pytest", "doctest", "nose", "nose2"];

/// Python's shortcuts in one file.
pub(crate) fn scan(view: &FileView, out: &mut Vec<Finding>) {
    apply(view, RULES, |i, _| !is_definition(view, i), out);
    if !is_script(view) {
        let from = out.len();
        apply(view, AT_IMPORT, |i, _| !is_definition(view, i) && at_import(view, i) == Some(true), out);
        // Where such an exit is decides what it does: one moved out of a function or from
        // under `if __name__ == "__main__":` is new, though its text is not.
        for f in out.iter_mut().skip(from) {
            f.anchored = true;
        }
    }
    for (i, line) in view.lines.iter().enumerate() {
        if !line.scanned() {
            continue;
        }
        let lexed = &line.lexed;
        for at in lexed.find("sys.modules[", false) {
            let rest = lexed.text.get(at..).unwrap_or("");
            let replaced = lexed.literals.iter().any(|l| {
                l.start > at
                    && matches!(&l.value, super::lexer::Value::Str(s) if FRAMEWORK_MODULES.iter().any(|m| s == m || s.starts_with(&format!("{m}."))))
            });
            if replaced && super::patterns::assigned(rest.get("sys.modules".len()..).unwrap_or("")) {
                out.push(Finding {
                    anchored: false,
                    category: Category::TampersWithOracle,
                    at: i,
                    says: "replaces a test-framework module in sys.modules: the tests import a fake".to_owned(),
                });
            }
        }
        for at in lexed.find("setattr(", false) {
            let args = call_arguments(&lexed.code, at + "setattr".len()).unwrap_or("");
            let target = args.split(',').next().unwrap_or("").trim();
            let root = target.split('.').next().unwrap_or("");
            if ["unittest", "TestCase", "pytest", "_pytest", "builtins", "__builtins__"].contains(&root) {
                out.push(Finding {
                    anchored: false,
                    category: Category::TampersWithOracle,
                    at: i,
                    says: format!("sets an attribute of {root}: the test framework itself is changed"),
                });
            }
        }
        let reads = ["open(", "read_text(", "read_bytes(", "getsource(", "Path("].iter().any(|n| lexed.has(n, true));
        let names_test =
            lexed.literals.iter().any(|l| matches!(&l.value, super::lexer::Value::Str(s) if names_test_file(s)));
        if reads && names_test {
            out.push(Finding {
                anchored: false,
                category: Category::ReadsCaller,
                at: i,
                says: "opens a test file: code that reads the tests can answer them".to_owned(),
            });
        }
        if lexed.literals.iter().any(|l| matches!(&l.value, super::lexer::Value::Str(s) if s == "PYTEST_CURRENT_TEST"))
        {
            out.push(Finding {
                anchored: false,
                category: Category::ReadsCaller,
                at: i,
                says: "reads PYTEST_CURRENT_TEST: code that knows which test is running".to_owned(),
            });
        }
    }
    comparisons(view, out);
    counters(view, out);
}

/// A `def name(` or `class` line: defining `exit` is not calling it.
fn is_definition(view: &FileView, i: usize) -> bool {
    let code = view.lines[i].lexed.trimmed();
    code.starts_with("def ") || code.starts_with("async def ") || code.starts_with("class ")
}

/// A file run as a program rather than imported by tests: `__main__.py`, `setup.py`, a
/// script with a `#!` line or under `bin/`/`scripts/`.
fn is_script(view: &FileView) -> bool {
    let path = view.path.as_str();
    let name = path.rsplit('/').next().unwrap_or(path);
    let dirs: Vec<&str> = path.split('/').rev().skip(1).collect();
    matches!(name, "__main__.py" | "setup.py" | "noxfile.py" | "fabfile.py" | "manage.py" | "conftest.py")
        || dirs.iter().any(|d| matches!(*d, "bin" | "scripts" | "script"))
        || view.lines.first().is_some_and(|l| l.no == 1 && l.raw.starts_with("#!"))
}

/// Whether line `i` starts a logical line (not inside brackets, a string or after a `\`).
fn logical_start(view: &FileView, i: usize) -> bool {
    let line = &view.lines[i];
    let after_backslash = i > 0 && !line.fresh && view.lines[i - 1].lexed.code.trim_end().ends_with('\\');
    line.depth <= 0 && !line.lexed.starts_inside && !after_backslash
}

/// The block headers enclosing line `i`, innermost first; `None` when the view does not reach
/// back to the module level.
fn enclosing(view: &FileView, i: usize) -> Option<Vec<usize>> {
    let mut indent = view.lines[i].indent;
    let mut out = Vec::new();
    if indent == 0 {
        return Some(out);
    }
    let mut j = i;
    loop {
        if j == 0 || view.lines[j].fresh {
            return None;
        }
        j -= 1;
        let line = &view.lines[j];
        if line.blank() || !logical_start(view, j) || line.indent >= indent {
            continue;
        }
        out.push(j);
        indent = line.indent;
        if indent == 0 {
            return Some(out);
        }
    }
}

/// Whether line `i` runs when the module is imported: `Some(false)` inside a function or under
/// `if __name__ == "__main__":`, `None` when the view cannot tell.
fn at_import(view: &FileView, i: usize) -> Option<bool> {
    let headers = enclosing(view, i)?;
    Some(!headers.iter().any(|&h| {
        let code = view.lines[h].lexed.trimmed();
        let text = &view.lines[h].lexed.text;
        code.starts_with("def ")
            || code.starts_with("async def ")
            || code.contains("lambda")
            || (text.contains("__name__") && text.contains("__main__"))
    }))
}

/// A function's body: its lines and its code (a one-line body's is what follows the colon).
struct Body {
    first: usize,
    last: usize,
    code: String,
}

/// The body of the `def` at line `def`; `None` when it is not all in the view.
fn body(view: &FileView, def: usize) -> Option<Body> {
    let d = view.lines[def].depth;
    let mut k = def;
    while view.depth_after(k) > d {
        k += 1;
        if k >= view.lines.len() || view.lines[k].fresh {
            return None;
        }
    }
    let header = &view.lines[k].lexed.code;
    if let Some(colon) = header.rfind(':') {
        let inline = header[colon + 1..].trim();
        if !inline.is_empty() {
            return Some(Body { first: k, last: k, code: inline.to_owned() });
        }
    }
    let indent = view.lines[def].indent;
    let mut last = k;
    for j in k + 1..view.lines.len() {
        let line = &view.lines[j];
        if line.fresh {
            return None;
        }
        if !line.blank() && logical_start(view, j) && line.indent <= indent {
            break;
        }
        last = j;
    }
    if last + 1 >= view.lines.len() && !view.whole {
        return None;
    }
    let code = view.lines[k + 1..=last].iter().map(|l| l.lexed.code.as_str()).collect::<Vec<_>>().join("\n");
    Some(Body { first: k + 1, last, code })
}

/// The parameter names in `def f(a, b: int = 1, *args)` → `["a", "b", "args"]`.
fn parameters(signature: &str) -> Vec<String> {
    let Some(open) = signature.find('(') else { return Vec::new() };
    let Some(inner) = call_arguments(signature, open) else { return Vec::new() };
    inner
        .split(',')
        .map(|p| {
            let p = p.trim().trim_start_matches('*');
            let end = p.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(p.len());
            p[..end].to_owned()
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// `__eq__`/`__ne__` that never look at what they compare with.
fn comparisons(view: &FileView, out: &mut Vec<Finding>) {
    for (i, line) in view.lines.iter().enumerate() {
        if line.test {
            continue;
        }
        let code = line.lexed.trimmed();
        let name = ["__eq__", "__ne__"]
            .into_iter()
            .find(|n| code.starts_with(&format!("def {n}(")) || code.starts_with(&format!("async def {n}(")));
        if let Some(name) = name {
            let Some(body) = body(view, i) else { continue };
            // The signature, which may run over several lines.
            let signature: String = view.lines[i..body.first.max(i + 1)]
                .iter()
                .map(|l| l.lexed.code.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let params = parameters(&signature);
            let Some(other) = params.get(1) else { continue };
            let touched = view.lines[i..=body.last].iter().any(|l| l.scanned());
            let returns = body.code.lines().chain([body.code.as_str()]).any(|l| {
                let l = l.trim();
                (l.starts_with("return ") || l.starts_with("return("))
                    && l.trim_start_matches("return").trim() != "NotImplemented"
            });
            if touched && returns && !has_word(&body.code, other) {
                out.push(Finding {
                    anchored: false,
                    category: Category::OverloadsComparison,
                    at: i,
                    says: format!(
                        "defines {name} that ignores what it is compared with: any equality assertion passes"
                    ),
                });
            }
            continue;
        }
        // `__eq__ = lambda self, other: True`
        if line.scanned()
            && let Some(rest) = ["__eq__", "__ne__"].iter().find_map(|n| code.strip_prefix(n))
            && let Some(lambda) = rest.trim_start().strip_prefix('=').map(str::trim_start)
            && let Some(params) = lambda.strip_prefix("lambda")
            && let Some((params, expression)) = params.split_once(':')
        {
            let names: Vec<&str> = params.split(',').map(|p| p.trim().trim_start_matches('*')).collect();
            if let Some(other) = names.get(1)
                && !other.is_empty()
                && !has_word(expression, other)
            {
                out.push(Finding {
                    anchored: false,
                    category: Category::OverloadsComparison,
                    at: i,
                    says: "defines an equality that ignores what it is compared with: any equality assertion passes"
                        .to_owned(),
                });
            }
        }
    }
}

/// `global n` + `n += 1` + `n` in a condition (or indexing the answer): the answer depends on
/// how many times the function was called. A counter that only counts, an id generator that
/// returns it, and a cache are not.
fn counters(view: &FileView, out: &mut Vec<Finding>) {
    for (i, line) in view.lines.iter().enumerate() {
        if line.test {
            continue;
        }
        let Some(names) = line.lexed.trimmed().strip_prefix("global ") else { continue };
        let Some(def) = enclosing(view, i).and_then(|h| {
            h.into_iter().find(|&j| {
                let c = view.lines[j].lexed.trimmed();
                c.starts_with("def ") || c.starts_with("async def ")
            })
        }) else {
            continue;
        };
        let Some(body) = body(view, def) else { continue };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let lines = body.first..=body.last;
            let Some(increment) = lines.clone().find(|&j| increments(view.lines[j].lexed.trimmed(), name)) else {
                continue;
            };
            let decision = lines.clone().find(|&j| decides(view.lines[j].lexed.trimmed(), name));
            // The change added the counting or the deciding (to a counter that only counted).
            let at = match decision {
                Some(d) if view.lines[d].scanned() => d,
                Some(_) if view.lines[increment].scanned() || line.scanned() => increment,
                _ => continue,
            };
            out.push(Finding {
                anchored: false,
                category: Category::RecordsState,
                at,
                says: format!(
                    "counts calls in module-level {name} and answers by it: the result changes from one test call to the next?"
                ),
            });
        }
    }
}

/// `n += 1`, `n -= 1`, `n = n + 1`.
fn increments(code: &str, name: &str) -> bool {
    let Some(rest) = code.strip_prefix(name) else { return false };
    let rest = rest.trim_start();
    rest.starts_with("+=")
        || rest.starts_with("-=")
        || rest.strip_prefix('=').is_some_and(|r| {
            let r = r.trim_start();
            r.strip_prefix(name).is_some_and(|r| r.trim_start().starts_with(['+', '-']))
        })
}

/// `n` in a condition (`if`, `elif`, `while`, a conditional expression), or indexing what is
/// returned (`return ANSWERS[n]`).
fn decides(code: &str, name: &str) -> bool {
    let condition = code.starts_with("if ")
        || code.starts_with("elif ")
        || code.starts_with("while ")
        || code.starts_with("match ")
        || (has_word(code, "if") && has_word(code, "else"));
    if condition && has_word(code, name) {
        return true;
    }
    code.starts_with("return")
        && code.split('[').skip(1).any(|inside| has_word(inside.split(']').next().unwrap_or(""), name))
}
