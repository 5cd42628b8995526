//! A unified diff's table of contents: which files it touches, how, with how many added and
//! removed lines, and where each file's section and hunks start. Pure; works on text as
//! GitHub's diff media type and `git diff` write it, so the same index serves the control
//! room's Diff tab (which pages the text from disk by line), `forgeloop diff --stat` and MCP.

use serde::{Deserialize, Serialize};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    /// A new file.
    Added,
    /// A deleted file.
    Removed,
    /// Changed in place.
    Modified,
    /// Moved (possibly changed too); `old_path` says from where.
    Renamed,
}

/// One file's section of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The path after the change (the old path for a removed file).
    pub path: String,
    /// The path before a rename.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// How it changed.
    pub status: FileStatus,
    /// Git printed no lines for it (`Binary files … differ`).
    pub binary: bool,
    /// Lines added.
    pub additions: u64,
    /// Lines removed.
    pub deletions: u64,
    /// 0-based line of the section's `diff --git` header; the section ends where the next
    /// file's starts (or at the end).
    #[serde(skip)]
    pub start_line: usize,
    /// 0-based line just past the section (the next file's header, or the line count).
    #[serde(skip)]
    pub end_line: usize,
    /// 0-based lines of the section's `@@` hunk headers.
    #[serde(skip)]
    pub hunks: Vec<usize>,
}

/// Totals over the files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffSize {
    /// Files touched.
    pub files: u64,
    /// Lines added, over all files.
    pub additions: u64,
    /// Lines removed, over all files.
    pub deletions: u64,
}

impl DiffSize {
    /// The totals of `files`.
    pub fn of(files: &[FileDiff]) -> DiffSize {
        DiffSize {
            files: files.len() as u64,
            additions: files.iter().map(|f| f.additions).sum(),
            deletions: files.iter().map(|f| f.deletions).sum(),
        }
    }

    /// `3 files +40 −2`: a row's or a title's few words (never colour alone: the signs stay).
    pub fn words(&self) -> String {
        let files = if self.files == 1 { "1 file".to_owned() } else { format!("{} files", self.files) };
        format!("{files} +{} −{}", self.additions, self.deletions)
    }
}

/// The files of a unified diff, in order. Lines outside any `diff --git` section (a preamble)
/// belong to no file. Never fails: text that is not a diff has no files.
pub fn index<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut in_hunk = false;
    let mut count = 0;
    for (n, line) in lines.into_iter().enumerate() {
        count = n + 1;
        if let Some(rest) = line.strip_prefix("diff --git ") {
            if let Some(last) = files.last_mut() {
                last.end_line = n;
            }
            let (old, new) = header_paths(rest);
            files.push(FileDiff {
                path: new.clone().or(old.clone()).unwrap_or_default(),
                old_path: None,
                status: FileStatus::Modified,
                binary: false,
                additions: 0,
                deletions: 0,
                start_line: n,
                end_line: n + 1,
                hunks: Vec::new(),
            });
            in_hunk = false;
            continue;
        }
        let Some(file) = files.last_mut() else { continue };
        if line.starts_with("@@") {
            in_hunk = true;
            file.hunks.push(n);
            continue;
        }
        if in_hunk {
            match line.as_bytes().first() {
                Some(b'+') => file.additions += 1,
                Some(b'-') => file.deletions += 1,
                Some(b' ' | b'\\') | None => {}
                // Anything else ends the hunk (a malformed or truncated diff).
                Some(_) => in_hunk = false,
            }
            if in_hunk {
                continue;
            }
        }
        if line.starts_with("new file mode") {
            file.status = FileStatus::Added;
        } else if line.starts_with("deleted file mode") {
            file.status = FileStatus::Removed;
        } else if let Some(from) = line.strip_prefix("rename from ") {
            file.status = FileStatus::Renamed;
            file.old_path = Some(unquote(from));
        } else if let Some(to) = line.strip_prefix("rename to ") {
            file.status = FileStatus::Renamed;
            file.path = unquote(to);
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            file.binary = true;
        } else if let Some(path) = line.strip_prefix("+++ ") {
            if let Some(path) = side_path(path, "b/") {
                file.path = path;
            }
        } else if let Some(path) = line.strip_prefix("--- ")
            && file.status == FileStatus::Removed
            && let Some(path) = side_path(path, "a/")
        {
            file.path = path;
        }
    }
    if let Some(last) = files.last_mut() {
        last.end_line = count.max(last.start_line + 1);
    }
    files
}

/// `a/x b/x` → the two paths (quoted paths as git writes them, `"a/x y" "b/x y"`, too).
fn header_paths(rest: &str) -> (Option<String>, Option<String>) {
    if rest.starts_with('"') {
        let mut parts = rest.splitn(2, "\" ");
        let old = parts.next().map(|p| unquote(&format!("{p}\"")));
        let new = parts.next().map(unquote);
        return (old.and_then(|p| strip_side(&p, "a/")), new.and_then(|p| strip_side(&p, "b/")));
    }
    // Unquoted: the paths are equal unless renamed, so split at the middle ` b/`.
    match rest.find(" b/") {
        Some(i) => (strip_side(&rest[..i], "a/"), strip_side(&rest[i + 1..], "b/")),
        None => (None, None),
    }
}

fn side_path(text: &str, side: &str) -> Option<String> {
    let text = text.split('\t').next().unwrap_or(text);
    if text == "/dev/null" {
        return None;
    }
    strip_side(&unquote(text), side)
}

fn strip_side(path: &str, side: &str) -> Option<String> {
    path.strip_prefix(side).map(str::to_owned)
}

/// Git's C-style quoting (`"a\tb"`, `\a`, octal escapes for bytes) undone; unquoted text as it is.
fn unquote(text: &str) -> String {
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return text.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'a') => bytes.push(0x07),
            Some(b'b') => bytes.push(0x08),
            Some(b'f') => bytes.push(0x0c),
            Some(b'n') => bytes.push(b'\n'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'v') => bytes.push(0x0b),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(o - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value & 0xff).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `git diff --stat`-like lines: ` path | 12 +++++-----` and the summary line. A name's control
/// characters (git quotes them, `index` unquotes them) are shown as escapes, newlines and tabs
/// included, so a name stays on its line and the columns line up.
pub fn stat(files: &[FileDiff], width: usize) -> String {
    let shown = |path: &str| super::terminal::escape_controls_in_line(path).into_owned();
    let name = |f: &FileDiff| match &f.old_path {
        Some(old) => format!("{} => {}", shown(old), shown(&f.path)),
        None => shown(&f.path),
    };
    let names: Vec<String> = files.iter().map(name).collect();
    let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let most = files.iter().map(|f| f.additions + f.deletions).max().unwrap_or(0);
    let count_width = most.to_string().len();
    let bar_room = width.saturating_sub(name_width + count_width + 6).max(10) as u64;
    let mut out = String::new();
    for (file, name) in files.iter().zip(&names) {
        if file.binary {
            out.push_str(&format!(" {name:<name_width$} | {:>count_width$}\n", "Bin"));
            continue;
        }
        let changes = file.additions + file.deletions;
        let (plus, minus) = if most <= bar_room {
            (file.additions, file.deletions)
        } else {
            let scale = |n: u64| if n == 0 { 0 } else { (n * bar_room / most).max(1) };
            (scale(file.additions), scale(file.deletions))
        };
        out.push_str(&format!(
            " {name:<name_width$} | {changes:>count_width$} {}{}\n",
            "+".repeat(plus as usize),
            "-".repeat(minus as usize)
        ));
    }
    let size = DiffSize::of(files);
    let plural = |n: u64, one: &str, many: &str| if n == 1 { one.to_owned() } else { many.to_owned() };
    out.push_str(&format!(
        " {} {} changed, {} {}(+), {} {}(-)\n",
        size.files,
        plural(size.files, "file", "files"),
        size.additions,
        plural(size.additions, "insertion", "insertions"),
        size.deletions,
        plural(size.deletions, "deletion", "deletions"),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DIFF: &str = "diff --git a/calc.sh b/calc.sh
index 1111111..2222222 100644
--- a/calc.sh
+++ b/calc.sh
@@ -1,3 +1,3 @@
 a=$1
-echo $((a - b))
+echo $((a + b))
 done
@@ -10,2 +10,3 @@ fn
 x
+y
diff --git a/tests/sub.sh b/tests/sub.sh
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/sub.sh
@@ -0,0 +1,2 @@
+check 2 sub 5 3
+check -1 sub 2 3
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 4444444..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/docs/a.md b/docs/b.md
similarity index 90%
rename from docs/a.md
rename to docs/b.md
index 5555555..6666666 100644
--- a/docs/a.md
+++ b/docs/b.md
@@ -1 +1 @@
-old
+new
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..7777777
Binary files /dev/null and b/logo.png differ
diff --git \"a/with space.txt\" \"b/with space.txt\"
index 8888888..9999999 100644
--- \"a/with space.txt\"
+++ \"b/with space.txt\"
@@ -1 +1 @@
--- not a header
++++ not a header either
";

    #[test]
    fn every_kind_of_change_is_indexed_with_its_counts() {
        let files = index(DIFF.lines());
        type Row<'a> = (&'a str, Option<&'a str>, FileStatus, bool, u64, u64);
        let summary: Vec<Row<'_>> = files
            .iter()
            .map(|f| (f.path.as_str(), f.old_path.as_deref(), f.status, f.binary, f.additions, f.deletions))
            .collect();
        assert_eq!(
            summary,
            [
                ("calc.sh", None, FileStatus::Modified, false, 2, 1),
                ("tests/sub.sh", None, FileStatus::Added, false, 2, 0),
                ("old.txt", None, FileStatus::Removed, false, 0, 1),
                ("docs/b.md", Some("docs/a.md"), FileStatus::Renamed, false, 1, 1),
                ("logo.png", None, FileStatus::Added, true, 0, 0),
                ("with space.txt", None, FileStatus::Modified, false, 1, 1),
            ]
        );
        assert_eq!(files[0].hunks, [4, 9]);
        assert_eq!((files[0].start_line, files[0].end_line), (0, 12));
        assert_eq!(files[5].end_line, DIFF.lines().count());
        assert_eq!(DiffSize::of(&files).words(), "6 files +6 −4");
    }

    #[test]
    fn the_stat_reads_like_gits() {
        let files = index(DIFF.lines());
        let text = stat(&files, 80);
        assert!(text.contains(" calc.sh                | 3 ++-\n"), "{text}");
        assert!(text.contains(" docs/a.md => docs/b.md | 2 +-\n"), "{text}");
        assert!(text.contains(" logo.png               | Bin\n"), "{text}");
        assert!(text.ends_with(" 6 files changed, 6 insertions(+), 4 deletions(-)\n"), "{text}");
        // A huge change is scaled to the width, never to nothing.
        let big = format!("diff --git a/x b/x\n@@ -1 +1,500 @@\n{}", "+l\n".repeat(500));
        let line = stat(&index(big.lines()), 40);
        assert!(line.lines().next().unwrap().len() <= 40, "{line}");
    }

    #[test]
    fn a_quoted_name_with_controls_is_shown_escaped_on_its_own_line() {
        let diff = "diff --git \"a/x\\033]0;t\\007\" \"b/x\\033]0;t\\007\"\n--- \"a/x\\033]0;t\\007\"\n+++ \"b/x\\033]0;t\\007\"\n@@ -1 +1 @@\n-a\n+b\n\
                    diff --git \"a/n\\nl\" \"b/n\\nl\"\n--- \"a/n\\nl\"\n+++ \"b/n\\nl\"\n@@ -1 +1 @@\n-a\n+b\n";
        let files = index(diff.lines());
        assert_eq!(files[0].path, "x\u{1b}]0;t\u{7}", "index unquotes to the raw bytes");
        assert_eq!(
            unquote("\"\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\""),
            "\u{7}\u{8}\u{c}\n\r\t\u{b}\\\"",
            "as git's quote_c_style writes them"
        );
        assert_eq!(
            stat(&files, 80),
            " x\\x1b]0;t\\x07 | 2 +-\n n\\x0al        | 2 +-\n 2 files changed, 2 insertions(+), 2 deletions(-)\n"
        );
    }

    #[test]
    fn text_that_is_not_a_diff_has_no_files() {
        assert!(index("hello\nworld".lines()).is_empty());
        assert_eq!(stat(&[], 80), " 0 files changed, 0 insertions(+), 0 deletions(-)\n");
    }

    proptest! {
        #[test]
        fn any_text_indexes_without_panicking_and_sections_tile(text in "(diff --git a/x b/y\n|@@ -1 +1 @@\n|[-+ ].{0,5}\n|rename (from|to) .{0,4}\n|\".{0,6}\n){0,30}") {
            let files = index(text.lines());
            for pair in files.windows(2) {
                prop_assert_eq!(pair[0].end_line, pair[1].start_line);
            }
            let _ = stat(&files, 60);
        }
    }
}
