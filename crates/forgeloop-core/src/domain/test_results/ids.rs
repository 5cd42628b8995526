//! Test ids as the judgement compares them: the runner's own id, with what changes from one run
//! to the next for the same test taken out — memory addresses in parametrised ids
//! (`test_x[<Obj object at 0x7f…>]`), libtest's doc-test line numbers — control characters made
//! spaces, and a bounded length.

use sha2::{Digest, Sha256};

/// A test id is cut to this many characters (a hash of the whole keeps cut ids apart).
pub const ID_MAX: usize = 300;

/// The id the judgement keeps for `raw`: addresses (`0x` and at least four hex digits) become
/// `0x…`, control characters a space, and an id longer than [`ID_MAX`] characters is cut, with
/// 8 hex digits of its key after the cut so that two long ids stay apart.
pub fn normalise(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(ID_MAX + 16));
    let mut chars = raw.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '0' && raw[at..].starts_with("0x") {
            let digits = raw[at + 2..].bytes().take_while(u8::is_ascii_hexdigit).count();
            if digits >= 4 {
                out.push_str("0x…");
                // Skip the `x` and the digits (all ASCII, one char each).
                for _ in 0..=digits {
                    chars.next();
                }
                continue;
            }
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    if out.chars().count() <= ID_MAX {
        return out;
    }
    let cut: String = out.chars().take(ID_MAX - 10).collect();
    format!("{cut}…{:08x}", key(&out))
}

/// A 32-bit key of an id (the first four bytes of its SHA-256), what a digest keeps of it.
pub fn key(id: &str) -> u32 {
    let digest = Sha256::digest(id.as_bytes());
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// A libtest doc-test's name without its line number (`src/lib.rs - add (line 3)` →
/// `src/lib.rs - add`): a line added above it moves it, and it is still the same test.
pub fn doc_test(name: &str) -> &str {
    match name.rfind(" (line ") {
        Some(at) if name.ends_with(')') && name[at + 7..name.len() - 1].bytes().all(|b| b.is_ascii_digit()) => {
            &name[..at]
        }
        _ => name,
    }
}

/// Whether `id` is a module the runner could not load rather than a test: unittest reports one
/// as a failing `unittest.loader._FailedTest.<module>` (`ModuleImportFailure` before Python 3.5).
/// That it is gone at the merge says the module loads now — its tests then run and are counted —
/// or that it is gone, with no test of it having run at the base either.
pub fn is_load_failure(id: &str) -> bool {
    id.starts_with("unittest.loader._FailedTest.") || id.starts_with("unittest.loader.ModuleImportFailure.")
}

/// The test files a change moved, for telling a test that moved with its file from one that
/// stopped running: a test the merge ran under a moved file's name counts, at the base, as the
/// same test under the file's old name. Only what really ran at the merge is renamed back, so a
/// move can hide no test: one dropped in the move is missing under its old name still.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Renames {
    /// (new form, old form), longest new form first: each file's path (`tests/test_b.py`, as
    /// pytest and node name tests) and, for a Python file, its dotted module
    /// (`tests.test_b`, as unittest does).
    forms: Vec<(String, String)>,
}

impl Renames {
    /// The moves `(old path, new path)` of a change.
    pub fn new<'a>(moves: impl IntoIterator<Item = (&'a str, &'a str)>) -> Renames {
        let mut forms = Vec::new();
        for (old, new) in moves {
            if old == new || old.is_empty() || new.is_empty() {
                continue;
            }
            forms.push((new.to_owned(), old.to_owned()));
            if let (Some(new_module), Some(old_module)) = (python_module(new), python_module(old)) {
                forms.push((new_module, old_module));
            }
        }
        forms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        Renames { forms }
    }

    /// No file moved.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// `id` as the base named it, when it names a moved file (its path or module, whole: not
    /// inside a longer name) — `None` when it names none.
    pub fn back(&self, id: &str) -> Option<String> {
        self.forms
            .iter()
            .find_map(|(new, old)| whole_at(id, new).map(|at| format!("{}{old}{}", &id[..at], &id[at + new.len()..])))
    }
}

/// The files a change edited in the tree that ran (modified, removed or moved; a held file is
/// not: the base's version ran), for saying which of the tests that did not run are tests the
/// change itself rewrote — a person's call still, said so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edited {
    /// The paths, as the change names them.
    paths: Vec<String>,
    /// Each path and, for a Python file, its dotted module.
    forms: Vec<String>,
}

impl Edited {
    /// The files `paths` the change edited.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Edited {
        let mut edited = Edited::default();
        for path in paths.into_iter().filter(|p| !p.is_empty()) {
            edited.paths.push(path.to_owned());
            edited.forms.push(path.to_owned());
            edited.forms.extend(python_module(path));
        }
        edited.paths.sort();
        edited.paths.dedup();
        edited
    }

    /// `id` names one of the files (whole, as [`Renames::back`] reads it).
    pub fn names(&self, id: &str) -> bool {
        self.forms.iter().any(|form| whole_at(id, form).is_some())
    }

    /// The edited files whose name says they are tests (`test` in the path), for the words.
    pub fn test_paths(&self) -> Vec<&str> {
        self.paths.iter().map(String::as_str).filter(|p| p.to_ascii_lowercase().contains("test")).collect()
    }
}

/// Where `form` stands whole in `id` (not inside a longer name), the first such place.
fn whole_at(id: &str, form: &str) -> Option<usize> {
    if form.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(at) = id[from..].find(form).map(|i| i + from) {
        let end = at + form.len();
        let before = id[..at].chars().next_back();
        // A module form ends with its `.`: what follows is the class or test in it.
        let after = if form.ends_with('.') { None } else { id[end..].chars().next() };
        if !before.is_some_and(name_char) && !after.is_some_and(name_char) {
            return Some(at);
        }
        from = end;
    }
    None
}

/// A character that continues a name: a path or module cut at one is another file's.
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// `a/b/test_c.py` → `a.b.test_c.`, as a unittest id names what is in the module (the `.`
/// keeps a short module name from matching a word in a parameter); `None` for what is not a
/// Python file.
fn python_module(path: &str) -> Option<String> {
    let stem = path.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    (!stem.is_empty()).then(|| format!("{}.", stem.replace('/', ".")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_files_tests_are_named_back_as_the_base_named_them() {
        let renames = Renames::new([("tests/test_idna_tr46.py", "tests/test_idna_uts46.py"), ("a.js", "b.js")]);
        assert_eq!(
            renames.back("test_uts46_7 (tests.test_idna_uts46.UTS46Tests.test_uts46_7)").as_deref(),
            Some("test_uts46_7 (tests.test_idna_tr46.UTS46Tests.test_uts46_7)")
        );
        assert_eq!(
            renames.back("tests/test_idna_uts46.py::test_x[1]").as_deref(),
            Some("tests/test_idna_tr46.py::test_x[1]")
        );
        // Whole names only: a longer module that begins the same is another file.
        assert_eq!(renames.back("tests.test_idna_uts46_more.T.test"), None);
        assert_eq!(renames.back("xb.js > works"), None);
        assert_eq!(renames.back("b.js > works").as_deref(), Some("a.js > works"));
        assert_eq!(renames.back("tests.test_other.T.test"), None);
        assert!(Renames::new([("same.py", "same.py")]).is_empty());
        assert_eq!(python_module("pkg/__init__.py").as_deref(), Some("pkg."));
        // A root module's short name is not a word in another test's parameters.
        let short = Renames::new([("a.py", "b.py")]);
        assert_eq!(short.back("tests/test_c.py::t[b]"), None);
        assert_eq!(short.back("test_x (b.T.test_x)").as_deref(), Some("test_x (a.T.test_x)"));
    }

    #[test]
    fn tests_in_edited_files_are_known_by_path_or_module() {
        let edited = Edited::new(["tests/test_clip.py", "src/lib.rs", "tests/test_identifier.rs"]);
        assert!(edited.names("tests/test_clip.py::test_strip[a-b]"));
        assert!(edited.names("test_x (tests.test_clip.T.test_x)"));
        assert!(edited.names("test_identifier tests/test_identifier.rs: test_comparator"));
        assert!(!edited.names("tests/test_clip_more.py::test_strip"));
        assert!(!edited.names("tests/test_width.py::test_w"));
        assert!(!Edited::new(["a.py"]).names("tests/test_c.py::t[a]"));
        assert_eq!(edited.test_paths(), ["tests/test_clip.py", "tests/test_identifier.rs"]);
    }

    #[test]
    fn a_module_that_did_not_load_is_no_test() {
        assert!(is_load_failure("unittest.loader._FailedTest.tests.test_idna"));
        assert!(!is_load_failure("test_load (tests.test_unittest.loader._FailedTest)"));
    }

    #[test]
    fn addresses_and_reprs_normalise() {
        let a = normalise("test_p.py::test_param[<test_p.Obj object at 0x7fac09595f90>]");
        let b = normalise("test_p.py::test_param[<test_p.Obj object at 0x7f11aa00bb22>]");
        assert_eq!(a, b);
        assert_eq!(a, "test_p.py::test_param[<test_p.Obj object at 0x…>]");
        // Short hex values are data, not addresses.
        assert_eq!(normalise("test_hex[0x1f]"), "test_hex[0x1f]");
        assert_eq!(normalise("a\nb\tc"), "a b c");
        assert_eq!(normalise("0x"), "0x");
        assert_eq!(normalise("é0xABCDé"), "é0x…é");
    }

    #[test]
    fn long_ids_are_cut_and_stay_apart() {
        let one = normalise(&format!("{}a", "x".repeat(1000)));
        let two = normalise(&format!("{}b", "x".repeat(1000)));
        assert_ne!(one, two);
        assert!(one.chars().count() <= ID_MAX, "{}", one.chars().count());
        assert_eq!(normalise(&"y".repeat(ID_MAX)), "y".repeat(ID_MAX));
    }

    #[test]
    fn doc_tests_lose_their_line() {
        assert_eq!(doc_test("src/lib.rs - add (line 3)"), "src/lib.rs - add");
        assert_eq!(doc_test("src/lib.rs - add (line x)"), "src/lib.rs - add (line x)");
        assert_eq!(doc_test("plain"), "plain");
    }
}
