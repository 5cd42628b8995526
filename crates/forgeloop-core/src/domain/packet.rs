//! What a review packet may hold (docs/review.md, "The packet"): the DLP rules that keep a
//! file out, decided per changed file before anything is read into the packet. The use case
//! reads the commit and redacts what goes in; this module only decides, so the dry run and the
//! packet cannot disagree.

use serde::Serialize;

use super::protect::glob_matches;

/// A file larger than this stays out (a review reads source, not data).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// A packet larger than this is refused: a chat upload, not an archive.
pub const MAX_PACKET_BYTES: u64 = 4 * 1024 * 1024;

/// One built-in exclusion: a name the dry run and the manifest use, its globs (read as
/// `.gitignore` reads them), and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The rule's name.
    pub name: &'static str,
    /// The paths it keeps out.
    pub globs: &'static [&'static str],
    /// Why, in words.
    pub why: &'static str,
}

/// The built-in exclusions, in the order they are checked (docs/review.md keeps the same table).
pub const RULES: &[Rule] = &[
    Rule {
        name: "env-file",
        globs: &[".env", ".env.*", "*.env", ".envrc"],
        why: "environment files hold secrets by convention",
    },
    Rule {
        name: "key-file",
        globs: &[
            "*.pem",
            "*.key",
            "*.p12",
            "*.pfx",
            "*.jks",
            "*.keystore",
            "*.gpg",
            "*.asc",
            "id_rsa*",
            "id_dsa*",
            "id_ecdsa*",
            "id_ed25519*",
            "*.ppk",
        ],
        why: "private keys and keystores",
    },
    Rule {
        name: "credentials",
        globs: &[
            ".netrc",
            ".npmrc",
            ".pypirc",
            ".git-credentials",
            ".dockercfg",
            "**/.docker/config.json",
            "**/.aws/credentials",
            "credentials",
            "credentials.*",
            "*.credentials",
            "secrets.*",
            "*.secret",
            "*.tfvars",
            "*.tfstate",
            "service-account*.json",
        ],
        why: "credential and secret stores",
    },
];

/// Why a changed file stays out of the packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Exclusion {
    /// A built-in rule.
    BuiltIn {
        /// The rule's name.
        name: &'static str,
        /// The glob that matched.
        glob: &'static str,
    },
    /// A `[review] exclude` glob.
    Config {
        /// The glob.
        glob: String,
    },
    /// The repository's `.gitignore` at the head ignores it.
    Gitignored {
        /// The pattern that ignores it.
        pattern: String,
    },
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// Not text.
    Binary,
    /// Made by a tool (a lockfile, minified code, a header saying so).
    Generated {
        /// How it was recognised.
        sign: String,
    },
    /// A link whose target leaves the change (another file, or outside the repository).
    LinkOutside {
        /// The target.
        target: String,
    },
    /// A submodule: another repository.
    Submodule,
}

impl Exclusion {
    /// Why, in words, for the dry run.
    pub fn describe(&self) -> String {
        match self {
            Exclusion::BuiltIn { name, glob } => {
                let why = RULES.iter().find(|r| r.name == *name).map_or("", |r| r.why);
                format!("excluded by the built-in rule {name} ({glob}: {why})")
            }
            Exclusion::Config { glob } => format!("excluded by [review] exclude ({glob})"),
            Exclusion::Gitignored { pattern } => format!("ignored by the repository's .gitignore ({pattern})"),
            Exclusion::TooLarge { bytes } => format!("{bytes} bytes, over the {MAX_FILE_BYTES}-byte limit"),
            Exclusion::Binary => "binary".into(),
            Exclusion::Generated { sign } => format!("generated ({sign})"),
            Exclusion::LinkOutside { target } => format!("a link to {target}, outside the change"),
            Exclusion::Submodule => "a submodule (another repository)".into(),
        }
    }

    /// The kind of risk it is, as the dry run counts risks.
    pub fn risk(&self) -> &'static str {
        match self {
            Exclusion::BuiltIn { .. } | Exclusion::Config { .. } | Exclusion::Gitignored { .. } => "excluded",
            Exclusion::TooLarge { .. } => "too-large",
            Exclusion::Binary => "binary",
            Exclusion::Generated { .. } => "generated",
            Exclusion::LinkOutside { .. } | Exclusion::Submodule => "outside-the-change",
        }
    }
}

/// What kind of entry a changed path is at the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular or executable file.
    File,
    /// A symbolic link.
    Link,
    /// A submodule.
    Submodule,
    /// Deleted at the head.
    Deleted,
}

/// A changed path as the use case read it from the commit.
#[derive(Debug, Clone)]
pub struct Changed<'a> {
    /// The path at the head (or the deleted path).
    pub path: &'a str,
    /// What it is at the head.
    pub kind: EntryKind,
    /// Its size at the head (0 when deleted).
    pub bytes: u64,
    /// Its first bytes at the head (the link's target for a link).
    pub head: &'a [u8],
}

/// `.gitignore` patterns from the head, each with the directory of the file it came from.
#[derive(Debug, Clone, Default)]
pub struct Ignores {
    rules: Vec<(String, String, bool)>,
}

impl Ignores {
    /// Adds the patterns of the `.gitignore` in `dir` (`""` for the root).
    pub fn add(&mut self, dir: &str, text: &str) {
        for line in text.lines() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (negated, pattern) = match line.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            self.rules.push((dir.trim_matches('/').to_owned(), pattern.to_owned(), negated));
        }
    }

    /// The pattern that ignores `path`, if one does (the last matching pattern wins, as in git).
    pub fn ignoring(&self, path: &str) -> Option<String> {
        let mut verdict = None;
        for (dir, pattern, negated) in &self.rules {
            let relative = match dir.as_str() {
                "" => path,
                dir => match path.strip_prefix(dir).and_then(|p| p.strip_prefix('/')) {
                    Some(rest) => rest,
                    None => continue,
                },
            };
            if matches_or_under(pattern, relative) {
                verdict = (!negated).then(|| pattern.clone());
            }
        }
        verdict
    }
}

/// A pattern matches the path itself or one of its directories (`build` ignores `build/x`).
fn matches_or_under(pattern: &str, path: &str) -> bool {
    if glob_matches(pattern, path) {
        return true;
    }
    let mut prefix = String::new();
    for part in path.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        if prefix.len() < path.len() && glob_matches(pattern.trim_end_matches('/'), &prefix) {
            return true;
        }
    }
    false
}

/// Why `file` stays out of the packet, or `None` when it goes in. `excludes` are the
/// person's `[review] exclude` globs; `changed` says whether a link's target is in the change.
pub fn exclusion(
    file: &Changed<'_>,
    excludes: &[String],
    ignores: &Ignores,
    changed: &dyn Fn(&str) -> bool,
) -> Option<Exclusion> {
    for rule in RULES {
        if let Some(glob) = rule.globs.iter().find(|g| glob_matches(g, file.path)) {
            return Some(Exclusion::BuiltIn { name: rule.name, glob });
        }
    }
    if let Some(glob) = excludes.iter().find(|g| glob_matches(g, file.path)) {
        return Some(Exclusion::Config { glob: glob.clone() });
    }
    if let Some(pattern) = ignores.ignoring(file.path) {
        return Some(Exclusion::Gitignored { pattern });
    }
    match file.kind {
        EntryKind::Submodule => return Some(Exclusion::Submodule),
        EntryKind::Link => {
            let target = String::from_utf8_lossy(file.head).into_owned();
            return match resolve_link(file.path, &target) {
                Some(resolved) if changed(&resolved) => None,
                _ => Some(Exclusion::LinkOutside { target }),
            };
        }
        EntryKind::Deleted | EntryKind::File => {}
    }
    if file.bytes > MAX_FILE_BYTES {
        return Some(Exclusion::TooLarge { bytes: file.bytes });
    }
    if file.kind == EntryKind::File && is_binary(file.head) {
        return Some(Exclusion::Binary);
    }
    generated_sign(file.path, file.head).map(|sign| Exclusion::Generated { sign })
}

/// A link's target as a repository path, `None` when it leaves the repository.
fn resolve_link(path: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Text has no NUL in its first bytes and reads as UTF-8 (a cut multi-byte tail allowed).
pub fn is_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some(),
    }
}

const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "composer.lock",
    "Gemfile.lock",
    "go.sum",
    "flake.lock",
];

/// How a file shows it was made by a tool, if it does.
pub fn generated_sign(path: &str, head: &[u8]) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if LOCKFILES.contains(&name) {
        return Some(format!("{name} is a lockfile"));
    }
    for suffix in [".min.js", ".min.css", ".map", ".pb.go", "_pb2.py"] {
        if name.ends_with(suffix) {
            return Some(format!("*{suffix}"));
        }
    }
    let start = &head[..head.len().min(1024)];
    let text = String::from_utf8_lossy(start);
    for marker in ["@generated", "DO NOT EDIT", "Code generated by", "autogenerated"] {
        if text.contains(marker) {
            return Some(format!("its header says {marker:?}"));
        }
    }
    None
}

/// An estimate of a text's tokens for a chat model: about four bytes each.
pub fn estimate_tokens(bytes: u64) -> u64 {
    bytes.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(path: &'a str, head: &'a [u8]) -> Changed<'a> {
        Changed { path, kind: EntryKind::File, bytes: head.len() as u64, head }
    }

    fn out(path: &str, head: &[u8]) -> Option<Exclusion> {
        exclusion(&file(path, head), &[], &Ignores::default(), &|_| true)
    }

    #[test]
    fn every_built_in_rule_keeps_its_files_out() {
        for path in [
            ".env",
            ".env.production",
            "config/prod.env",
            "deploy/server.pem",
            "keys/id_ed25519",
            "home/.ssh/id_rsa.pub",
            ".npmrc",
            "app/.docker/config.json",
            "credentials.json",
            "infra/prod.tfvars",
        ] {
            assert!(matches!(out(path, b"x"), Some(Exclusion::BuiltIn { .. })), "{path}");
        }
        assert_eq!(out("src/env.rs", b"fn main() {}"), None);
        assert_eq!(out("src/keys.rs", b"fn main() {}"), None);
    }

    #[test]
    fn config_globs_and_gitignore_keep_files_out() {
        let mut ignores = Ignores::default();
        ignores.add("", "# build output\ntarget/\n*.log\n!keep.log\n");
        ignores.add("web", "/dist\n");
        let check = |path| exclusion(&file(path, b"x"), &["fixtures/**".to_owned()], &ignores, &|_| true);
        assert!(matches!(check("fixtures/a/b.json"), Some(Exclusion::Config { .. })));
        assert!(matches!(check("target/debug/x"), Some(Exclusion::Gitignored { .. })));
        assert!(matches!(check("logs/run.log"), Some(Exclusion::Gitignored { .. })));
        assert_eq!(check("logs/keep.log"), None);
        assert!(matches!(check("web/dist/app.js"), Some(Exclusion::Gitignored { .. })));
        assert_eq!(check("dist/app.js"), None);
        assert_eq!(check("src/main.rs"), None);
    }

    #[test]
    fn binary_large_generated_links_and_submodules_stay_out() {
        assert_eq!(out("img.png", b"\x89PNG\r\n\x1a\n\0\0"), Some(Exclusion::Binary));
        assert_eq!(out("latin1.txt", b"caf\xe9 au lait"), Some(Exclusion::Binary));
        let big = Changed { path: "data.csv", kind: EntryKind::File, bytes: MAX_FILE_BYTES + 1, head: b"a,b" };
        assert!(matches!(exclusion(&big, &[], &Ignores::default(), &|_| true), Some(Exclusion::TooLarge { .. })));
        assert!(matches!(out("Cargo.lock", b"# x"), Some(Exclusion::Generated { .. })));
        assert!(matches!(out("gen/api.rs", b"// @generated by prost\n"), Some(Exclusion::Generated { .. })));
        let link = |target: &'static [u8]| Changed { path: "src/link", kind: EntryKind::Link, bytes: 4, head: target };
        let inside = |p: &str| p == "src/real.rs";
        assert_eq!(exclusion(&link(b"real.rs"), &[], &Ignores::default(), &inside), None);
        assert!(matches!(
            exclusion(&link(b"../../etc/passwd"), &[], &Ignores::default(), &inside),
            Some(Exclusion::LinkOutside { .. })
        ));
        assert!(matches!(
            exclusion(&link(b"/etc/passwd"), &[], &Ignores::default(), &inside),
            Some(Exclusion::LinkOutside { .. })
        ));
        let sub = Changed { path: "vendor/x", kind: EntryKind::Submodule, bytes: 0, head: b"" };
        assert_eq!(exclusion(&sub, &[], &Ignores::default(), &|_| true), Some(Exclusion::Submodule));
    }

    #[test]
    fn a_cut_utf8_tail_is_still_text() {
        let text = "héllo".as_bytes();
        assert!(!is_binary(&text[..2]));
        assert_eq!(estimate_tokens(9), 3);
    }
}
