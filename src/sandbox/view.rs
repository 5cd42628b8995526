//! What a sandboxed run may see (design §5.6), decided in the forgeloop process from its own
//! environment and the commands profile. The sandbox helper only carries this out, so every
//! rule lives here once and both tiers enforce the same view.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::domain::commands::CommandsProfile;
use crate::domain::environment;

/// Read-only system trees (missing ones are skipped; on merged-/usr systems `/bin` and friends
/// are symlinks, which the view recreates as symlinks).
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

/// Entries of `/etc` that hold the machine's own secrets: hidden even though `/etc` is visible
/// (a run started by root would otherwise read them, being their owner).
pub const HIDDEN_ETC: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/forgeloop",
];

/// Credential stores under the user's home: never visible, and no extra path may lead into them.
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".config/gh",
    ".aws",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".config/gcloud",
    ".azure",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".pgpass",
    ".vault-token",
    ".terraformrc",
    ".terraform.d",
    ".config/hub",
    ".password-store",
];

/// Entries of a shared temporary directory that belong to someone: forgeloop's own private
/// directories, agent and multiplexer sockets, systemd's private temporaries.
const PRIVATE_TMP_PREFIXES: &[&str] =
    &["forgeloop-run-", "ssh-", "tmux-", "gpg", ".X11-unix", ".ICE-unix", "systemd-private-", "hakoniwa-"];

/// Only these parts of `CARGO_HOME` are bound: the rest holds the crates.io token
/// (`credentials.toml`) and registry settings.
const CARGO_HOME_PARTS: &[&str] = &["bin", "registry", "git", "env"];

/// The filesystem view of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct View {
    /// Read-only system trees that exist here.
    pub system: Vec<PathBuf>,
    /// Read-only, outside the system trees: toolchain homes, `PATH` directories, the profile's
    /// `read_paths`.
    pub read: Vec<PathBuf>,
    /// Read-write besides the checkout: the profile's `write_paths`.
    pub write: Vec<PathBuf>,
    /// Inside visible trees but hidden (machine secrets under `/etc`).
    pub hidden: Vec<PathBuf>,
    /// The user's `HOME` as the parent process has it; in the first tier the private home
    /// appears at this path.
    pub home: Option<PathBuf>,
    /// Toolchain variables to set explicitly (their defaults lived under the real `HOME`).
    pub env_set: BTreeMap<String, String>,
    /// The identity of each of the profile's grants when the run began: the helper refuses to
    /// build a sandbox in which a granted path is now another file (swapped for a link by a
    /// concurrent run, say), so a grant is resolved once per run, not once per command.
    #[serde(default)]
    pub pins: Vec<Pin>,
}

/// A granted path and the file it was (device and inode) when the run was planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The granted path as the profile gave it, resolved.
    pub path: PathBuf,
    /// The device it was on.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
}

impl Pin {
    /// The identity of `path` now, without following a final symlink.
    pub fn of(path: &Path) -> std::io::Result<Pin> {
        use std::os::unix::fs::MetadataExt;
        let meta = path.symlink_metadata()?;
        Ok(Pin { path: path.to_path_buf(), dev: meta.dev(), ino: meta.ino() })
    }

    /// Whether `meta` (of what is granted now) is still the pinned file.
    pub fn matches(&self, meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        meta.dev() == self.dev && meta.ino() == self.ino
    }
}

/// A `read_paths`/`write_paths` entry that may not be granted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} entry {path:?} is refused: {reason}")]
pub struct PathRefused {
    /// Which list it came from (`read_paths` or `write_paths`).
    pub what: &'static str,
    /// The entry as written.
    pub path: String,
    /// Why it may not be granted.
    pub reason: String,
}

/// Paths no run may see or be granted: the homes, forgeloop's own files (`protected`: its home,
/// the registry, the config) and the credential stores.
pub struct Denied {
    roots: Vec<PathBuf>,
    /// Shared temporary directories: never granted whole (they hold other runs' private
    /// directories and agent sockets); a directory made inside them for a project may be.
    shared_tmp: Vec<PathBuf>,
    /// Where a toolchain lives inside a denied root (e.g. `~/.cargo/bin`): allowed.
    exceptions: Vec<PathBuf>,
    /// Never allowed, exceptions or not.
    stores: Vec<PathBuf>,
}

impl Denied {
    /// The denied paths for a person whose home is `home`, forgeloop's own files being `protected`.
    pub fn new(home: Option<&Path>, protected: &[PathBuf]) -> Denied {
        let mut roots: Vec<PathBuf> =
            ["/root", "/home", "/proc", "/sys", "/dev", "/run", "/var/run"].iter().map(PathBuf::from).collect();
        let mut shared_tmp: Vec<PathBuf> = vec!["/tmp".into(), "/var/tmp".into(), std::env::temp_dir()];
        shared_tmp.extend(shared_tmp.clone().iter().filter_map(|p| p.canonicalize().ok()));
        let mut stores: Vec<PathBuf> = HIDDEN_ETC.iter().map(PathBuf::from).collect();
        if let Some(home) = home {
            roots.push(home.to_path_buf());
            for store in CREDENTIAL_STORES {
                stores.push(home.join(store));
            }
        }
        stores.extend(protected.iter().cloned());
        for path in roots.clone().iter().chain(stores.clone().iter()) {
            if let Ok(real) = path.canonicalize()
                && &real != path
            {
                if roots.contains(path) {
                    roots.push(real);
                } else {
                    stores.push(real);
                }
            }
        }
        Denied { roots, shared_tmp, exceptions: Vec::new(), stores }
    }

    /// Why `path` (absolute, normalised) may not be granted, if it may not.
    fn refusal(&self, path: &Path) -> Option<String> {
        if let Some(store) = self.stores.iter().find(|s| path.starts_with(s) || s.starts_with(path)) {
            return Some(format!("it is or contains {}, which a test never sees", store.display()));
        }
        if self.exceptions.iter().any(|e| path.starts_with(e)) {
            return None;
        }
        if let Some(root) = self.roots.iter().find(|r| path.starts_with(r) || r.starts_with(path)) {
            return Some(format!("it is or contains {}, which a test never sees", root.display()));
        }
        if let Some(tmp) = self.shared_tmp.iter().find(|t| t.starts_with(path)) {
            return Some(format!(
                "it is or contains the shared {}, which holds other runs' private directories; grant a directory made inside it",
                tmp.display()
            ));
        }
        for tmp in &self.shared_tmp {
            let first = path.strip_prefix(tmp).ok().and_then(|rest| rest.components().next());
            let name = first.map(|c| c.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
            if PRIVATE_TMP_PREFIXES.iter().any(|p| name.starts_with(p)) {
                return Some(format!(
                    "{} belongs to another program (an agent socket, a private directory)",
                    tmp.join(&name).display()
                ));
            }
        }
        None
    }

    /// Checks the path as written and where it really leads (symlinks resolved).
    fn check(&self, path: &Path) -> Result<PathBuf, String> {
        let lexical = normalise(path).ok_or_else(|| "it must be an absolute path without ..".to_owned())?;
        if let Some(reason) = self.refusal(&lexical) {
            return Err(reason);
        }
        let real = lexical.canonicalize().map_err(|e| format!("it cannot be resolved here ({e})"))?;
        if let Some(reason) = self.refusal(&real) {
            return Err(format!("it leads to {}: {reason}", real.display()));
        }
        Ok(lexical)
    }
}

/// `/a/./b//c` → `/a/b/c`; `None` for relative paths and any `..`.
fn normalise(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(name) => out.push(name),
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Builds the view from the parent environment (`HOME`, `PATH`, the toolchain variables) and
/// the profile, refusing extra paths inside the denied set.
pub fn build(
    env: &BTreeMap<String, String>,
    profile: &CommandsProfile,
    protected: &[PathBuf],
) -> Result<View, PathRefused> {
    let home = env.get("HOME").map(PathBuf::from).and_then(|h| normalise(&h)).filter(|h| h != Path::new("/"));
    let mut denied = Denied::new(home.as_deref(), protected);
    let mut view = View { home: home.clone(), ..View::default() };

    for dir in SYSTEM_DIRS {
        let path = Path::new(dir);
        if path.symlink_metadata().is_ok() {
            view.system.push(path.to_path_buf());
        }
    }

    // Toolchain homes: allowed even inside the real home, never if they are (or contain) the
    // home itself or a credential store.
    let mut toolchains = Vec::new();
    for (name, default) in environment::toolchains() {
        let (value, defaulted) = match env.get(name).filter(|v| !v.is_empty()) {
            Some(value) => (PathBuf::from(value), false),
            None => match (default, &home) {
                (Some(rel), Some(home)) => (home.join(rel), true),
                _ => continue,
            },
        };
        let Some(path) = normalise(&value) else { continue };
        let parts: Vec<PathBuf> = if name == "CARGO_HOME" {
            CARGO_HOME_PARTS.iter().map(|part| path.join(part)).collect()
        } else {
            vec![path.clone()]
        };
        let parts: Vec<PathBuf> = parts.into_iter().filter(|p| p.exists() && acceptable_tool_dir(p, &denied)).collect();
        if parts.is_empty() {
            continue;
        }
        if defaulted {
            view.env_set.insert((*name).to_owned(), path.display().to_string());
        }
        toolchains.extend(parts);
    }
    denied.exceptions = toolchains.clone();
    // A toolchain inside a system tree (JAVA_HOME=/usr/lib/jvm/…) is visible already.
    let outside_system: Vec<PathBuf> = toolchains.into_iter().filter(|t| !covered(t, &view)).collect();
    push_unique(&mut view.read, outside_system);

    // PATH directories not already visible.
    if let Some(path_var) = env.get("PATH") {
        for entry in path_var.split(':') {
            let Some(dir) = normalise(Path::new(entry)) else { continue };
            if !dir.is_dir() || covered(&dir, &view) || !acceptable_tool_dir(&dir, &denied) {
                continue;
            }
            push_unique(&mut view.read, [dir]);
        }
    }

    // Granted by their real path, resolved here once: a symlink on the way is not followed
    // again for each command.
    let mut granted: Vec<(&'static str, &String, PathBuf)> = Vec::new();
    for (what, list) in [("read_paths", &profile.read_paths), ("write_paths", &profile.write_paths)] {
        for raw in list {
            let refused = |reason: String| PathRefused { what, path: raw.clone(), reason };
            let path = denied.check(Path::new(raw)).map_err(refused)?;
            let real = path.canonicalize().map_err(|e| refused(format!("it cannot be resolved here ({e})")))?;
            let in_system = |p: &Path| view.system.iter().any(|dir| p.starts_with(dir) || dir.starts_with(p));
            if what == "write_paths" && (in_system(&path) || in_system(&real)) {
                return Err(refused("the system trees stay read-only".into()));
            }
            if what == "read_paths" && (in_system(&path) || in_system(&real)) {
                // Already visible (and its hidden parts stay hidden).
                continue;
            }
            let pin = Pin::of(&real).map_err(|e| refused(format!("it cannot be read here ({e})")))?;
            if !view.pins.contains(&pin) {
                view.pins.push(pin);
            }
            let target = if what == "read_paths" { &mut view.read } else { &mut view.write };
            push_unique(target, [real.clone()]);
            granted.push((what, raw, real));
        }
    }
    refuse_nested(&view, &granted)?;
    // A path granted for writing is not also a read grant.
    view.read.retain(|r| !view.write.contains(r));
    view.hidden = hidden_paths(&view, &denied);
    Ok(view)
}

/// A grant inside a write grant is refused: a command could replace it with a link (to
/// `~/.ssh`, say) between two commands, and the next command's sandbox would grant what the
/// link points to. A grant that contains a write grant is fine: its read-only parent cannot be
/// changed by the run.
fn refuse_nested(view: &View, granted: &[(&'static str, &String, PathBuf)]) -> Result<(), PathRefused> {
    for outer in &view.write {
        let Some((_, outer_raw, _)) = granted.iter().find(|(what, _, real)| *what == "write_paths" && real == outer)
        else {
            continue;
        };
        if let Some((what, raw, _)) = granted.iter().find(|(_, _, real)| real != outer && real.starts_with(outer)) {
            return Err(PathRefused {
                what,
                path: (*raw).clone(),
                reason: format!(
                    "it is inside the write_paths entry {outer_raw:?}, where a command could swap it for a link between commands; grant only {outer_raw:?}"
                ),
            });
        }
        if let Some(tool) = view.read.iter().find(|r| r.starts_with(outer) && *r != outer) {
            return Err(PathRefused {
                what: "write_paths",
                path: (*outer_raw).clone(),
                reason: format!(
                    "it contains the toolchain directory {}, which a command could swap for a link between commands; grant a directory beside it",
                    tool.display()
                ),
            });
        }
    }
    Ok(())
}

/// What must stay hidden inside the visible system trees: the machine's secrets under `/etc`;
/// when forgeloop runs as root, every file there that is not world-readable (root owns them,
/// so nothing else would stop it); and any home, credential store or forgeloop file that
/// happens to live inside a system tree (`HOME=/opt/ci`, `FORGELOOP_HOME=/opt/forgeloop`).
fn hidden_paths(view: &View, denied: &Denied) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> =
        HIDDEN_ETC.iter().map(PathBuf::from).filter(|p| p.symlink_metadata().is_ok()).collect();
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        not_world_readable(Path::new("/etc"), &mut hidden, 0);
    }
    let visible = |p: &Path| view.system.iter().any(|dir| p.starts_with(dir) && p != dir.as_path());
    for path in denied.roots.iter().chain(denied.stores.iter()) {
        if visible(path) && path.symlink_metadata().is_ok() && !hidden.contains(path) {
            hidden.push(path.clone());
        }
    }
    // A hidden directory hides what is below it.
    let mut outer: Vec<PathBuf> = Vec::new();
    hidden.sort();
    for path in hidden {
        if !outer.iter().any(|o| path.starts_with(o)) {
            outer.push(path);
        }
    }
    outer
}

/// Entries under `dir` that others may not read (a directory without `o+rx` hides its tree).
fn not_world_readable(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        let mode = meta.permissions().mode();
        if meta.file_type().is_symlink() {
            continue;
        }
        if meta.is_dir() {
            if mode & 0o005 != 0o005 {
                out.push(entry.path());
            } else if depth < 8 {
                not_world_readable(&entry.path(), out, depth + 1);
            }
        } else if mode & 0o004 == 0 {
            out.push(entry.path());
        }
    }
}

/// A toolchain or `PATH` directory is bound unless it would expose a home, a credential store
/// or forgeloop's files: it may sit inside the home, but not be the home or one of its parents.
fn acceptable_tool_dir(path: &Path, denied: &Denied) -> bool {
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    [path, real.as_path()].iter().all(|p| {
        !denied.stores.iter().any(|s| p.starts_with(s) || s.starts_with(p))
            && !denied.roots.iter().any(|r| r.starts_with(p))
            && *p != Path::new("/")
    })
}

/// Already visible through a system tree or an earlier entry.
fn covered(dir: &Path, view: &View) -> bool {
    view.system.iter().chain(view.read.iter()).any(|visible| dir.starts_with(visible))
}

fn push_unique(list: &mut Vec<PathBuf>, items: impl IntoIterator<Item = PathBuf>) {
    for item in items {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::commands::parse_commands;

    fn env(home: &Path, path: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("HOME".to_owned(), home.display().to_string()), ("PATH".to_owned(), path.to_owned())])
    }

    #[test]
    fn normalising_refuses_relative_paths_and_parent_steps() {
        assert_eq!(normalise(Path::new("/a/./b//c")), Some(PathBuf::from("/a/b/c")));
        assert_eq!(normalise(Path::new("a/b")), None);
        assert_eq!(normalise(Path::new("/a/../b")), None);
    }

    #[test]
    fn toolchains_in_the_home_are_bound_but_never_the_home_or_its_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        for sub in [".cargo/bin", ".cargo/registry", ".rustup", "bin", ".ssh"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        std::fs::write(home.join(".cargo/credentials.toml"), "token").unwrap();
        let path = format!(
            "{}:{}:{}:/usr/bin",
            home.join(".cargo/bin").display(),
            home.display(),
            home.join(".ssh").display()
        );
        let profile = parse_commands(r#"[["true"]]"#).unwrap();
        let view = build(&env(&home, &path), &profile, &[]).unwrap();
        assert!(view.read.contains(&home.join(".cargo/bin")));
        assert!(view.read.contains(&home.join(".cargo/registry")));
        assert!(view.read.contains(&home.join(".rustup")));
        assert!(!view.read.contains(&home.join(".cargo")), "{view:?}");
        assert!(!view.read.contains(&home), "the home itself is never bound: {view:?}");
        assert!(!view.read.iter().any(|p| p.starts_with(home.join(".ssh"))), "{view:?}");
        assert_eq!(view.env_set.get("RUSTUP_HOME").map(String::as_str), Some(home.join(".rustup").to_str().unwrap()));
    }

    #[test]
    fn extra_paths_inside_the_denied_set_are_refused_even_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let forgeloop_home = dir.path().join("state");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&forgeloop_home).unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let sneaky = dir.path().join("sneaky");
        std::os::unix::fs::symlink(home.join(".ssh"), &sneaky).unwrap();
        let protected = [forgeloop_home.clone()];
        let grant = |key: &str, path: &Path| {
            let text = serde_json::json!({"commands": [["true"]], key: [path]}).to_string();
            build(&env(&home, "/usr/bin"), &parse_commands(&text).unwrap(), &protected)
        };
        assert_eq!(grant("read_paths", &data).unwrap().read.last(), Some(&data));
        // A directory made inside the shared temporary directory for a project may be granted;
        // an agent's socket directory there may not.
        assert_eq!(grant("write_paths", &data).unwrap().write.last(), Some(&data));
        let agent = std::env::temp_dir().join(format!("ssh-forgeloop-test-{}", std::process::id()));
        std::fs::create_dir_all(&agent).unwrap();
        let refused = grant("read_paths", &agent).unwrap_err();
        std::fs::remove_dir_all(&agent).unwrap();
        assert!(refused.reason.contains("belongs to another program"), "{refused}");
        for (key, path) in [
            ("read_paths", home.join(".ssh")),
            ("read_paths", home.clone()),
            ("write_paths", home.join("project")),
            ("read_paths", sneaky.clone()),
            ("write_paths", forgeloop_home.join("cycles")),
            ("read_paths", dir.path().to_path_buf()),
            ("read_paths", PathBuf::from("/")),
            ("read_paths", PathBuf::from("/proc/1")),
            ("read_paths", PathBuf::from("/tmp")),
            ("write_paths", std::env::temp_dir()),
            ("write_paths", PathBuf::from("/etc")),
            ("read_paths", PathBuf::from("/etc/shadow")),
        ] {
            let err = grant(key, &path).unwrap_err();
            assert_eq!(err.what, key);
            assert!(!err.reason.is_empty());
        }
    }
}
