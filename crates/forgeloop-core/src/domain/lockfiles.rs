//! Lockfiles and the setup commands that install what they pin (design §5.6): what `next`
//! proposes for a commands file's `"setup"`, so the tests find their dependencies installed
//! through the person's allowlist and then run without network. The table is the whole
//! knowledge; a lockfile in a subdirectory gets the tool's own "run there" flag, never a shell
//! `cd`. Nothing here is run: the agent checks each proposal.

/// A lockfile and the argv that installs what it pins, for the repository's root and for a
/// subdirectory (`None`: the tool has no flag for another directory; not proposed there).
struct Entry {
    /// The file name (for `requirements*.txt`, see [`is_requirements`]).
    name: &'static str,
    root: &'static [&'static str],
    in_dir: Option<fn(&str) -> Vec<String>>,
}

fn words(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_owned()).collect()
}

const ENTRIES: &[Entry] = &[
    Entry { name: "package-lock.json", root: &["npm", "ci"], in_dir: Some(|d| words(&["npm", "ci", "--prefix", d])) },
    Entry { name: "npm-shrinkwrap.json", root: &["npm", "ci"], in_dir: Some(|d| words(&["npm", "ci", "--prefix", d])) },
    Entry {
        name: "yarn.lock",
        root: &["yarn", "install", "--frozen-lockfile"],
        in_dir: Some(|d| words(&["yarn", "--cwd", d, "install", "--frozen-lockfile"])),
    },
    Entry {
        name: "pnpm-lock.yaml",
        root: &["pnpm", "install", "--frozen-lockfile"],
        in_dir: Some(|d| words(&["pnpm", "--dir", d, "install", "--frozen-lockfile"])),
    },
    Entry {
        name: "bun.lock",
        root: &["bun", "install", "--frozen-lockfile"],
        in_dir: Some(|d| words(&["bun", "install", "--cwd", d, "--frozen-lockfile"])),
    },
    Entry {
        name: "bun.lockb",
        root: &["bun", "install", "--frozen-lockfile"],
        in_dir: Some(|d| words(&["bun", "install", "--cwd", d, "--frozen-lockfile"])),
    },
    Entry {
        name: "uv.lock",
        root: &["uv", "sync", "--frozen"],
        in_dir: Some(|d| words(&["uv", "sync", "--frozen", "--directory", d])),
    },
    Entry {
        name: "poetry.lock",
        root: &["poetry", "install", "--no-interaction"],
        in_dir: Some(|d| words(&["poetry", "install", "--no-interaction", "--directory", d])),
    },
    Entry { name: "Pipfile.lock", root: &["pipenv", "sync", "--dev"], in_dir: None },
    Entry {
        name: "Cargo.lock",
        root: &["cargo", "fetch", "--locked"],
        in_dir: Some(|d| {
            let manifest = format!("{d}/Cargo.toml");
            words(&["cargo", "fetch", "--locked", "--manifest-path", &manifest])
        }),
    },
    Entry {
        name: "go.sum",
        root: &["go", "mod", "download"],
        in_dir: Some(|d| words(&["go", "-C", d, "mod", "download"])),
    },
    Entry { name: "Gemfile.lock", root: &["bundle", "install"], in_dir: None },
    Entry {
        name: "composer.lock",
        root: &["composer", "install", "--no-interaction"],
        in_dir: Some(|d| {
            let dir = format!("--working-dir={d}");
            words(&["composer", "install", "--no-interaction", &dir])
        }),
    },
    Entry {
        name: "pom.xml",
        root: &["mvn", "--batch-mode", "dependency:go-offline"],
        in_dir: Some(|d| words(&["mvn", "--batch-mode", "--file", d, "dependency:go-offline"])),
    },
    Entry {
        name: "gradlew",
        root: &["./gradlew", "--no-daemon", "dependencies"],
        in_dir: Some(|d| words(&["./gradlew", "--no-daemon", "--project-dir", d, "dependencies"])),
    },
    Entry { name: "mix.lock", root: &["mix", "deps.get"], in_dir: None },
    Entry {
        name: "Package.resolved",
        root: &["swift", "package", "resolve"],
        in_dir: Some(|d| words(&["swift", "package", "--package-path", d, "resolve"])),
    },
];

/// Where a requirements file's packages go: a virtual environment in the checkout.
pub const VENV: &str = ".venv";
const VENV_PIP: &str = ".venv/bin/pip";

/// `requirements.txt`, `requirements-dev.txt`, `requirements_test.txt`…: pip's files.
fn is_requirements(name: &str) -> bool {
    name.starts_with("requirements") && name.ends_with(".txt")
}

/// Whether `name` (a file name, no directory) is one of the files the table knows.
pub fn is_lockfile(name: &str) -> bool {
    is_requirements(name) || ENTRIES.iter().any(|e| e.name == name)
}

/// The setup commands for `paths` (repository-relative, `/`-separated), in the order found;
/// one command per lockfile, and for requirements files a virtual environment in the checkout
/// (`.venv`) with one `pip install` per directory naming its files: the toolchain's own
/// directories are read-only in the sandbox (and PEP 668 or pyenv's shims refuse a plain
/// `pip install` anyway), so the tests run `.venv/bin/python`. A lockfile in a directory the
/// tool cannot be pointed at is skipped.
pub fn setup_for(paths: &[String]) -> Vec<Vec<String>> {
    let mut commands: Vec<Vec<String>> = Vec::new();
    let push = |argv: Vec<String>, commands: &mut Vec<Vec<String>>| {
        if !commands.contains(&argv) {
            commands.push(argv);
        }
    };
    let mut pip: Vec<(String, Vec<String>)> = Vec::new();
    for path in paths {
        let (dir, name) = match path.rsplit_once('/') {
            Some((dir, name)) => (Some(dir), name),
            None => (None, path.as_str()),
        };
        if is_requirements(name) {
            let key = dir.unwrap_or("").to_owned();
            match pip.iter_mut().find(|(d, _)| *d == key) {
                Some((_, files)) => files.push(path.clone()),
                None => pip.push((key, vec![path.clone()])),
            }
            continue;
        }
        let Some(entry) = ENTRIES.iter().find(|e| e.name == name) else { continue };
        match (dir, entry.in_dir) {
            (None, _) => push(words(entry.root), &mut commands),
            (Some(dir), Some(in_dir)) => push(in_dir(dir), &mut commands),
            (Some(_), None) => {}
        }
    }
    if !pip.is_empty() {
        push(words(&["python3", "-m", "venv", VENV]), &mut commands);
    }
    for (_, files) in pip {
        let mut argv = words(&[VENV_PIP, "install"]);
        for file in files {
            argv.push("-r".into());
            argv.push(file);
        }
        push(argv, &mut commands);
    }
    commands
}

/// The package managers' install verbs: a Validation command that installs dependencies
/// belongs in `"setup"` (network through the allowlist), not among the tests (no network).
pub fn is_install(argv: &[String]) -> bool {
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let program = args.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    let rest = args.get(1..).unwrap_or_default();
    let sub = rest.iter().find(|a| !a.starts_with('-')).copied();
    match (program, sub) {
        (Some("npm"), Some("ci" | "install" | "i")) => true,
        (Some("yarn"), None | Some("install")) => true,
        (Some("pnpm" | "bun"), Some("install" | "i")) => true,
        (Some("pip" | "pip3"), Some("install" | "download")) => true,
        (Some(python), _) if python.starts_with("python") => {
            matches!(rest, ["-m", "pip", "install", ..] | ["-m", "pip", "download", ..] | ["-m", "venv", ..])
        }
        (Some("uv"), Some("sync")) => true,
        (Some("uv"), Some("pip")) => rest.get(1) == Some(&"install"),
        (Some("poetry"), Some("install")) => true,
        (Some("pipenv"), Some("install" | "sync")) => true,
        (Some("cargo"), Some("fetch")) => true,
        (Some("go"), Some("mod")) => rest.contains(&"download"),
        (Some("bundle"), None | Some("install")) => true,
        (Some("composer"), Some("install")) => true,
        (Some("mix"), Some("deps.get")) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| (*p).to_owned()).collect()
    }

    fn argv(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn each_lockfile_proposes_its_install_at_the_root_and_in_a_directory() {
        let found = paths(&["package-lock.json", "Cargo.lock", "web/yarn.lock", "tools/go.sum", "api/Cargo.lock"]);
        assert_eq!(
            setup_for(&found),
            [
                argv("npm ci"),
                argv("cargo fetch --locked"),
                argv("yarn --cwd web install --frozen-lockfile"),
                argv("go -C tools mod download"),
                argv("cargo fetch --locked --manifest-path api/Cargo.toml"),
            ]
        );
    }

    #[test]
    fn requirements_files_go_into_one_virtual_environment_one_pip_install_per_directory() {
        let found = paths(&["requirements.txt", "requirements-dev.txt", "docs/requirements.txt", "README.md"]);
        assert_eq!(
            setup_for(&found),
            [
                argv("python3 -m venv .venv"),
                argv(".venv/bin/pip install -r requirements.txt -r requirements-dev.txt"),
                argv(".venv/bin/pip install -r docs/requirements.txt"),
            ]
        );
    }

    #[test]
    fn a_lockfile_the_tool_cannot_be_pointed_at_is_not_proposed_and_repeats_are_once() {
        assert!(setup_for(&paths(&["app/Gemfile.lock", "app/Pipfile.lock"])).is_empty());
        assert_eq!(setup_for(&paths(&["package-lock.json", "npm-shrinkwrap.json"])), [argv("npm ci")]);
        assert!(is_lockfile("go.sum") && is_lockfile("requirements-test.txt") && !is_lockfile("package.json"));
    }

    #[test]
    fn install_commands_are_told_from_test_commands() {
        for install in [
            "npm ci",
            "npm install --no-audit",
            "yarn",
            "pnpm install --frozen-lockfile",
            "pip install -r requirements.txt",
            "python3 -m pip install -e .",
            "/usr/bin/python3 -m pip install pytest",
            "python3 -m venv .venv",
            ".venv/bin/pip install -r requirements.txt",
            "uv sync",
            "uv pip install ruff",
            "poetry install",
            "cargo fetch",
            "go mod download",
            "bundle install",
            "bundle",
        ] {
            assert!(is_install(&argv(install)), "{install}");
        }
        for test in [
            "npm test",
            "npm run build",
            "yarn test",
            "python3 -m pytest",
            "pytest",
            "cargo test --workspace",
            "go test ./...",
            "bundle exec rspec",
            "uv run pytest",
            "make check",
        ] {
            assert!(!is_install(&argv(test)), "{test}");
        }
    }
}
