//! A changed file as the scan reads it: its new version, line by line, each line marked added
//! or not and lexed. When the base version is at hand and the diff applies to it, the whole new
//! file is rebuilt (so an added line's enclosing `if __name__ == "__main__":`, function or
//! table is known however far above it is); otherwise the hunks alone (added and context
//! lines), each starting afresh.

use super::lexer::{Lang, Lexed, Lexer, has_word};
use crate::domain::diff::{FileDiff, FileStatus};

/// The largest file rebuilt whole (bytes of the base version); a larger one is read by hunks.
const WHOLE_FILE_LIMIT: usize = 8 << 20;

/// One line of a file's new version.
#[derive(Debug, Clone)]
pub(crate) struct ViewLine {
    /// 1-based line number in the new file.
    pub(crate) no: u32,
    /// The change added it.
    pub(crate) added: bool,
    /// The first line after a gap (the start of a hunk read alone): what came before is unknown.
    pub(crate) fresh: bool,
    /// The line as written.
    pub(crate) raw: String,
    /// The line lexed.
    pub(crate) lexed: Lexed,
    /// Bracket depth at the line's start (Python: all brackets; the others: braces).
    pub(crate) depth: i32,
    /// Columns of leading whitespace (a tab counts 8).
    pub(crate) indent: usize,
    /// Inside test code of a source file (Rust `#[cfg(test)]`/`#[test]` items, vitest's
    /// in-source tests): not code under test.
    pub(crate) test: bool,
}

impl ViewLine {
    /// Added code under test.
    pub(crate) fn scanned(&self) -> bool {
        self.added && !self.test
    }

    /// Nothing but whitespace, comments or the inside of a string.
    pub(crate) fn blank(&self) -> bool {
        self.lexed.code.trim().is_empty()
    }
}

/// A changed file's new version, as far as it is known.
#[derive(Debug, Clone)]
pub(crate) struct FileView {
    pub(crate) path: String,
    pub(crate) lang: Lang,
    /// The whole new file is here (else only the hunks).
    pub(crate) whole: bool,
    pub(crate) lines: Vec<ViewLine>,
}

impl FileView {
    /// The depth just after line `i` (the next line's start, or the end's).
    pub(crate) fn depth_after(&self, i: usize) -> i32 {
        match self.lines.get(i + 1) {
            Some(next) if !next.fresh => next.depth,
            _ => self.lines.get(i).map_or(0, |l| l.depth + depth_change(self.lang, &l.lexed.code)),
        }
    }

    /// Whether lines `a..=b` are one stretch of the file (no gap between them).
    pub(crate) fn contiguous(&self, a: usize, b: usize) -> bool {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        !self.lines.get(a + 1..=b).is_some_and(|ls| ls.iter().any(|l| l.fresh))
    }
}

/// A hunk's header numbers and where its body is in the change.
#[derive(Debug, Clone, Copy)]
struct Hunk {
    old_start: usize,
    old_len: usize,
    new_start: usize,
    new_len: usize,
    body: (usize, usize),
}

/// `@@ -a,b +c,d @@ …` → (a, b, c, d); a missing count is 1.
fn parse_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

fn hunks(change: &[&str], file: &FileDiff) -> Vec<Hunk> {
    let end = file.end_line.min(change.len());
    let mut out = Vec::new();
    for (k, &at) in file.hunks.iter().enumerate() {
        let body_end = file.hunks.get(k + 1).copied().unwrap_or(end).min(end);
        let Some(header) = change.get(at) else { continue };
        if let Some((old_start, old_len, new_start, new_len)) = parse_header(header) {
            out.push(Hunk { old_start, old_len, new_start, new_len, body: ((at + 1).min(body_end), body_end) });
        }
    }
    out
}

/// The lines a file's section removes.
pub(crate) fn removed_lines<'a>(change: &[&'a str], file: &FileDiff) -> Vec<&'a str> {
    let mut out = Vec::new();
    for h in hunks(change, file) {
        for line in change.get(h.body.0..h.body.1).unwrap_or(&[]) {
            if let Some(rest) = line.strip_prefix('-') {
                out.push(rest);
            }
        }
    }
    out
}

/// The new file rebuilt from the base version and the hunks: each line and whether it was
/// added. `None` when the hunks do not apply (a redacted line, a stale base).
fn rebuild(change: &[&str], hunks: &[Hunk], base: &[&str]) -> Option<Vec<(String, bool)>> {
    let mut out: Vec<(String, bool)> = Vec::with_capacity(base.len() + 16);
    let mut cur = 0usize;
    for h in hunks {
        let start = if h.old_len == 0 { h.old_start } else { h.old_start.checked_sub(1)? };
        if start < cur || start > base.len() {
            return None;
        }
        out.extend(base[cur..start].iter().map(|l| ((*l).to_owned(), false)));
        cur = start;
        if h.new_len > 0 && out.len() + 1 != h.new_start {
            return None;
        }
        let (mut old_seen, mut new_seen) = (0, 0);
        for line in change.get(h.body.0..h.body.1)? {
            if old_seen >= h.old_len && new_seen >= h.new_len {
                break;
            }
            match line.as_bytes().first() {
                Some(b'+') => {
                    out.push((line[1..].to_owned(), true));
                    new_seen += 1;
                }
                Some(b'-') => {
                    if base.get(cur) != Some(&&line[1..]) {
                        return None;
                    }
                    cur += 1;
                    old_seen += 1;
                }
                Some(b' ') | None => {
                    let text = line.get(1..).unwrap_or("");
                    if base.get(cur) != Some(&text) {
                        return None;
                    }
                    out.push((text.to_owned(), false));
                    cur += 1;
                    old_seen += 1;
                    new_seen += 1;
                }
                Some(b'\\') => {}
                Some(_) => return None,
            }
        }
        if old_seen != h.old_len || new_seen != h.new_len {
            return None;
        }
    }
    out.extend(base.get(cur..)?.iter().map(|l| ((*l).to_owned(), false)));
    Some(out)
}

/// The hunks alone: context and added lines, numbered, each hunk starting afresh.
fn by_hunks(change: &[&str], hunks: &[Hunk]) -> Vec<(String, bool, u32, bool)> {
    let mut out = Vec::new();
    for h in hunks {
        let mut no = h.new_start;
        let mut first = true;
        for line in change.get(h.body.0..h.body.1).unwrap_or(&[]) {
            let (text, added) = match line.as_bytes().first() {
                Some(b'+') => (&line[1..], true),
                Some(b' ') => (&line[1..], false),
                None => ("", false),
                _ => continue,
            };
            out.push((text.to_owned(), added, u32::try_from(no).unwrap_or(u32::MAX), first));
            first = false;
            no += 1;
        }
    }
    out
}

/// Whether the scan reads a changed file of a language it knows: not deleted, not binary,
/// something added.
/// A minified file (`*.min.js`: built, one line a person cannot read) is not.
pub(crate) fn wanted(file: &FileDiff) -> bool {
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    file.status != FileStatus::Removed && !file.binary && file.additions > 0 && !name.contains(".min.")
}

/// The view of a changed file the scan reads, or `None` when it reads no such file (another
/// language, a deleted or binary file, nothing added).
/// `base` is the file's text at the base tip (by its old path), if known.
pub(crate) fn build(change: &[&str], file: &FileDiff, base: Option<&str>) -> Option<FileView> {
    let lang = Lang::of(&file.path)?;
    if !wanted(file) {
        return None;
    }
    let hunks = hunks(change, file);
    let base_text = match file.status {
        FileStatus::Added => Some(""),
        _ => base.filter(|t| t.len() <= WHOLE_FILE_LIMIT),
    };
    let rebuilt = base_text.and_then(|text| rebuild(change, &hunks, &text.lines().collect::<Vec<_>>()));
    let whole = rebuilt.is_some();
    let rows: Vec<(String, bool, u32, bool)> = match rebuilt {
        Some(lines) => lines
            .into_iter()
            .enumerate()
            .map(|(i, (text, added))| (text, added, u32::try_from(i + 1).unwrap_or(u32::MAX), i == 0))
            .collect(),
        None => by_hunks(change, &hunks),
    };
    let mut lexer = Lexer::new(lang);
    let mut depth = 0i32;
    let mut lines = Vec::with_capacity(rows.len());
    for (raw, added, no, fresh) in rows {
        if fresh {
            lexer.reset();
            depth = 0;
        }
        let lexed = lexer.line(&raw);
        let line_depth = depth;
        depth += depth_change(lang, &lexed.code);
        let indent = raw.chars().take_while(|c| c.is_whitespace()).map(|c| if c == '\t' { 8 } else { 1 }).sum();
        lines.push(ViewLine { no, added, fresh, raw, lexed, depth: line_depth, indent, test: false });
    }
    let mut view = FileView { path: file.path.clone(), lang, whole, lines };
    mark_tests(&mut view);
    Some(view)
}

/// How a line's code changes the bracket depth.
fn depth_change(lang: Lang, code: &str) -> i32 {
    let (open, close): (&[u8], &[u8]) = match lang {
        Lang::Python => (b"([{", b")]}"),
        _ => (b"{", b"}"),
    };
    code.bytes().map(|b| i32::from(open.contains(&b)) - i32::from(close.contains(&b))).sum()
}

/// Marks the test code inside a source file: Rust items under a test attribute
/// (`#[cfg(test)] mod tests { … }`, `#[test] fn …`, `proptest! { … }`), a file that is all
/// tests (`#![cfg(test)]`, `tests.rs`), and vitest's `if (import.meta.vitest) { … }`.
fn mark_tests(view: &mut FileView) {
    let name = view.path.rsplit('/').next().unwrap_or(&view.path);
    if view.lang == Lang::Rust
        && (matches!(name, "tests.rs" | "test.rs")
            || view.lines.iter().any(|l| l.lexed.code.trim_start().starts_with("#![cfg(test)]")))
    {
        for line in &mut view.lines {
            line.test = true;
        }
        return;
    }
    let mut i = 0;
    while i < view.lines.len() {
        let code = view.lines[i].lexed.code.trim();
        let starts_test = match view.lang {
            Lang::Rust => {
                (code.starts_with("#[")
                    && (has_word(code, "test")
                        || code.contains("rstest")
                        || code.contains("test_case")
                        || code.contains("quickcheck")
                        || code.starts_with("#[case")))
                    || code.starts_with("proptest!")
            }
            Lang::JavaScript => code.contains("import.meta.vitest"),
            _ => false,
        };
        if !starts_test {
            i += 1;
            continue;
        }
        let end = item_end(view, i);
        for line in &mut view.lines[i..=end] {
            line.test = true;
        }
        i = end + 1;
    }
}

/// The last line of the item that starts at line `i`: up to its first `;` at its own level,
/// or to the brace that closes its first `{`.
fn item_end(view: &FileView, i: usize) -> usize {
    let d = view.lines[i].depth;
    let last = view.lines.len().saturating_sub(1);
    for k in i..view.lines.len() {
        if k > i && view.lines[k].fresh {
            return k - 1;
        }
        let code = &view.lines[k].lexed.code;
        // An attribute's own brackets are not the item's.
        let body = if k == i && code.trim_start().starts_with("#[") {
            code.rfind(']').map_or(code.as_str(), |p| &code[p + 1..])
        } else {
            code.as_str()
        };
        let brace = body.find('{');
        let semi = body.find(';');
        match (brace, semi) {
            (Some(b), Some(s)) if s < b => return k,
            (None, Some(_)) => return k,
            (Some(_), _) => {
                for m in k..view.lines.len() {
                    if m > k && view.lines[m].fresh {
                        return m - 1;
                    }
                    if view.depth_after(m) <= d {
                        return m;
                    }
                }
                return last;
            }
            (None, None) => {}
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::diff::index;

    fn view_of(diff: &str, base: Option<&str>) -> FileView {
        let lines: Vec<&str> = diff.lines().collect();
        let files = index(lines.iter().copied());
        build(&lines, &files[0], base).unwrap()
    }

    const DIFF: &str = "diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -2,3 +2,4 @@ def f():
     a = 1
-    b = 2
+    b = 3
+    c = 4
     return a
@@ -9,2 +10,2 @@
 x
-y
+z
";

    const BASE: &str = "def f():\n    a = 1\n    b = 2\n    return a\n\n\n\n\nx\ny\n";

    #[test]
    fn the_whole_file_is_rebuilt_when_the_base_is_known() {
        let v = view_of(DIFF, Some(BASE));
        assert!(v.whole);
        let text: Vec<(&str, bool, u32)> = v.lines.iter().map(|l| (l.raw.as_str(), l.added, l.no)).collect();
        assert_eq!(text[0], ("def f():", false, 1));
        assert_eq!(text[2], ("    b = 3", true, 3));
        assert_eq!(text[3], ("    c = 4", true, 4));
        assert_eq!(text[10], ("z", true, 11));
        assert_eq!(v.lines.len(), 11);
    }

    #[test]
    fn hunks_alone_when_the_base_does_not_match() {
        let v = view_of(DIFF, Some("something else\n"));
        assert!(!v.whole);
        let text: Vec<(&str, bool, u32, bool)> =
            v.lines.iter().map(|l| (l.raw.as_str(), l.added, l.no, l.fresh)).collect();
        assert_eq!(
            text,
            [
                ("    a = 1", false, 2, true),
                ("    b = 3", true, 3, false),
                ("    c = 4", true, 4, false),
                ("    return a", false, 5, false),
                ("x", false, 10, true),
                ("z", true, 11, false),
            ]
        );
        assert!(!view_of(DIFF, None).whole);
    }

    #[test]
    fn rust_test_items_are_marked() {
        let diff = "diff --git a/src/lib.rs b/src/lib.rs
new file mode 100644
--- /dev/null
+++ b/src/lib.rs
@@ -0,0 +1,12 @@
+pub fn triple(n: u64) -> u64 {
+    n * 3
+}
+
+#[cfg(test)]
+mod tests {
+    #[test]
+    fn big() {
+        assert_eq!(super::triple(1000), 3000);
+    }
+}
+pub fn after() {}
";
        let v = view_of(diff, None);
        let tests: Vec<bool> = v.lines.iter().map(|l| l.test).collect();
        assert_eq!(tests, [false, false, false, false, true, true, true, true, true, true, true, false]);
    }
}
