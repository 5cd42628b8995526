//! The local-path layer: the run's checkout directory becomes `<checkout>` (so `file:line`
//! stays useful), the user's home becomes `~`, and other user-identifying prefixes
//! (`/home/<u>`, `/Users/<u>`, `C:\Users\<u>`, macOS `/private/var/folders/…`, `/root`) become
//! `[LOCAL_PATH]`. Only the prefix goes; the rest of the path stays readable. Every match is
//! anchored on path-segment boundaries (`/homepage/x` is not `/home/…`) and stops before
//! quotes and backticks.

use std::path::{Path, PathBuf};

use super::kinds::{Cand, Kind, Named};
use super::scan::{is_word, run_end};

/// The prefixes that start a user-identifying path, searched with the formats' keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathTrig {
    Home,
    Users,
    Root,
    VarFolders,
    WinUsers,
}

pub(crate) const TRIGGERS: &[(&str, PathTrig)] = &[
    ("/home/", PathTrig::Home),
    ("/Users/", PathTrig::Users),
    ("/root", PathTrig::Root),
    ("/var/folders/", PathTrig::VarFolders),
    ("\\Users\\", PathTrig::WinUsers),
];

/// Checks the path around a trigger hit `[s, e)`.
pub(crate) fn verify(trig: PathTrig, t: &[u8], s: usize, e: usize) -> Option<Cand> {
    match trig {
        PathTrig::Home | PathTrig::Users => user_dir(t, s, e),
        PathTrig::Root => root_dir(t, s, e),
        PathTrig::VarFolders => var_folders(t, s, e),
        PathTrig::WinUsers => windows_users(t, s, e),
    }
}

/// Bytes that continue a file name, so a path prefix must not be followed or preceded by one.
fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-')
}

/// Bytes of one path segment (a user name, a temp directory name).
fn is_segment(b: u8) -> bool {
    !(b.is_ascii_whitespace()
        || b < 0x20
        || matches!(
            b,
            b'/' | b'\\' | b'"' | b'\'' | b'`' | b'<' | b'>' | b'|' | b':' | b';' | b',' | b'(' | b')' | b'[' | b']'
        )
        || matches!(b, b'{' | b'}' | b'*' | b'?' | b'=' | b'@'))
}

/// May an absolute path start at `pos`? Not in the middle of a name or of a longer path
/// (`/srv/home/u`), but right after a `scheme://` (`file:///home/u`).
fn path_start(t: &[u8], pos: usize) -> bool {
    match pos.checked_sub(1).map(|i| t[i]) {
        None => true,
        Some(b'/') => t[..pos].ends_with(b"://"),
        Some(b) => !is_name(b),
    }
}

fn path_end(t: &[u8], pos: usize) -> bool {
    t.get(pos).is_none_or(|&b| !is_name(b))
}

fn local(start: usize, end: usize) -> Option<Cand> {
    Some(Cand { start, end, kind: Kind::Named(Named::LocalPath) })
}

/// `/home/<u>` and `/Users/<u>` (also `C:/Users/<u>`); the trigger is `/home/` or `/Users/`.
fn user_dir(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    let start = match drive_before(t, s, 0) {
        Some(drive) if t[s + 1] == b'U' => drive,
        _ if path_start(t, s) => s,
        _ => return None,
    };
    let end = run_end(t, e, 128, is_segment);
    if end == e || end - e > 128 {
        return None;
    }
    local(start, end)
}

/// `C:` (a drive letter and colon) ending `skip` bytes before `pos`, on a word boundary.
fn drive_before(t: &[u8], pos: usize, skip: usize) -> Option<usize> {
    let colon = pos.checked_sub(skip + 1)?;
    let letter = colon.checked_sub(1)?;
    let clean_before = letter == 0 || !(is_word(t[letter - 1]) || matches!(t[letter - 1], b'/' | b'\\' | b':'));
    (t[colon] == b':' && t[letter].is_ascii_alphabetic() && clean_before).then_some(letter)
}

fn root_dir(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    (path_start(t, s) && path_end(t, e)).then_some(())?;
    local(s, e)
}

/// macOS per-user temp: `/var/folders/xx/yyyy…` with or without `/private` in front.
fn var_folders(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    let start = if s >= 8 && &t[s - 8..s] == b"/private" { s - 8 } else { s };
    if !path_start(t, start) {
        return None;
    }
    let first = run_end(t, e, 64, is_segment);
    if first == e || first - e > 64 {
        return None;
    }
    let mut end = first;
    if t.get(first) == Some(&b'/') {
        let second = run_end(t, first + 1, 64, is_segment);
        if second > first + 1 && second - (first + 1) <= 64 {
            end = second;
        }
    }
    local(start, end)
}

/// `C:\Users\<u>`, also JSON-escaped `C:\\Users\\<u>`; the trigger is `\Users\`.
fn windows_users(t: &[u8], s: usize, e: usize) -> Option<Cand> {
    let (start, from) = if let Some(drive) = drive_before(t, s, 0) {
        (drive, e)
    } else if s >= 1 && t[s - 1] == b'\\' && t.get(e) == Some(&b'\\') {
        (drive_before(t, s, 1)?, e + 1)
    } else {
        return None;
    };
    let end = run_end(t, from, 128, is_segment);
    if end == from || end - from > 128 {
        return None;
    }
    local(start, end)
}

/// The per-redactor literal paths (checkout directories and home). They are searched
/// together with the known values (`engine::Rules::new`).
#[derive(Default)]
pub(crate) struct PathSet {
    patterns: Vec<String>,
    rules: Vec<Named>,
}

impl PathSet {
    pub(crate) fn new(home: Option<&Path>, checkouts: &[PathBuf]) -> PathSet {
        let mut patterns: Vec<(String, Named)> = Vec::new();
        for dir in checkouts {
            for form in forms(dir) {
                patterns.push((form, Named::CheckoutDir));
            }
        }
        if let Some(home) = home {
            for form in forms(home) {
                patterns.push((form, Named::HomeDir));
            }
        }
        let mut seen = std::collections::HashSet::new();
        patterns.retain(|(p, _)| seen.insert(p.clone()));
        let (patterns, rules) = patterns.into_iter().unzip();
        PathSet { patterns, rules }
    }

    /// A literal hit counts only on path-segment boundaries (`/tmp/x` is not in `/tmp/xy`).
    pub(crate) fn verify(&self, pattern: usize, t: &[u8], s: usize, e: usize) -> Option<Cand> {
        let rule = *self.rules.get(pattern)?;
        (path_start(t, s) && path_end(t, e)).then_some(Cand { start: s, end: e, kind: Kind::Named(rule) })
    }

    pub(crate) fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// The spellings a directory shows up in: as given, without a trailing separator, with and
/// without macOS's `/private` prefix, and JSON-escaped or slash-separated on Windows.
fn forms(dir: &Path) -> Vec<String> {
    let Some(raw) = dir.to_str() else { return Vec::new() };
    let trimmed = raw.trim_end_matches(['/', '\\']);
    if trimmed.len() < 2 || !(trimmed.starts_with('/') || trimmed.contains(":\\") || trimmed.contains(":/")) {
        return Vec::new();
    }
    let mut out = vec![trimmed.to_owned()];
    if let Some(rest) = trimmed.strip_prefix("/private") {
        if rest.starts_with("/var/") || rest.starts_with("/tmp/") || rest == "/tmp" {
            out.push(rest.to_owned());
        }
    } else if trimmed.starts_with("/var/") || trimmed.starts_with("/tmp/") || trimmed == "/tmp" {
        out.push(format!("/private{trimmed}"));
    }
    if trimmed.contains('\\') {
        out.push(trimmed.replace('\\', "\\\\"));
        out.push(trimmed.replace('\\', "/"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_forms() {
        assert_eq!(forms(Path::new("/tmp/run/checkout/")), ["/tmp/run/checkout", "/private/tmp/run/checkout"]);
        assert_eq!(
            forms(Path::new("/private/var/folders/ab/cd")),
            ["/private/var/folders/ab/cd", "/var/folders/ab/cd"]
        );
        assert!(forms(Path::new("/")).is_empty());
        assert!(forms(Path::new("relative/dir")).is_empty());
        assert_eq!(forms(Path::new("C:\\Users\\me")), ["C:\\Users\\me", "C:\\\\Users\\\\me", "C:/Users/me"]);
    }
}
