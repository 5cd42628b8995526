//! Which of the person's environment variables a test command sees (design §5.2.4, §5.6): one
//! table, read by the runner (what passes from the parent at all) and by the sandbox (what it
//! drops, and which toolchain homes it binds back read-only). PR code is untrusted, so it never
//! inherits the coordinator's environment: only this allowlist passes, plus what a commands
//! file names, and nothing whose name looks like a credential, whatever a list says.
//!
//! Deliberately not in the table (a commands file can still name them in `env_passthrough`):
//! `PYTHONPATH` and `NODE_PATH` (they change which code a test imports), `HTTP_PROXY` and the
//! like (proxy URLs often embed a password), `XDG_RUNTIME_DIR`, `SSH_AUTH_SOCK`,
//! `DBUS_SESSION_BUS_ADDRESS`, `DISPLAY` (doors to agents and keyrings), and everything `GH_*`,
//! `GITHUB_*`, `AWS_*`.

/// What the sandbox does with a variable that passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InSandbox {
    /// Passed as it is.
    Keep,
    /// Dropped: it points into the real home for writing (caches, configuration), so tools
    /// fall back to the private `HOME`.
    Drop,
    /// A toolchain's home: bound back read-only at its real path and set explicitly, so a tool
    /// finds it when `HOME` is private; the path under `HOME` it defaults to when unset.
    Toolchain(Option<&'static str>),
}

/// One row: a variable passed from the parent's environment when set there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Var {
    /// The variable's name.
    pub name: &'static str,
    /// What the sandbox does with it.
    pub in_sandbox: InSandbox,
}

const fn keep(name: &'static str) -> Var {
    Var { name, in_sandbox: InSandbox::Keep }
}
const fn drop(name: &'static str) -> Var {
    Var { name, in_sandbox: InSandbox::Drop }
}
const fn toolchain(name: &'static str, default: Option<&'static str>) -> Var {
    Var { name, in_sandbox: InSandbox::Toolchain(default) }
}

/// The table.
pub const VARS: &[Var] = &[
    // Shell and user basics (`HOME` and `TMPDIR` are the sandbox's own inside).
    keep("PATH"),
    keep("HOME"),
    keep("USER"),
    keep("LOGNAME"),
    keep("SHELL"),
    keep("TERM"),
    keep("TZ"),
    drop("TMPDIR"),
    keep("LANG"),
    keep("LANGUAGE"),
    // Where tools keep caches and configuration, so unsandboxed builds reuse them.
    drop("XDG_CACHE_HOME"),
    drop("XDG_CONFIG_HOME"),
    drop("XDG_DATA_HOME"),
    // Certificate bundles, needed behind corporate TLS proxies; paths, not secrets.
    toolchain("SSL_CERT_FILE", None),
    toolchain("SSL_CERT_DIR", None),
    // Rust.
    toolchain("CARGO_HOME", Some(".cargo")),
    toolchain("RUSTUP_HOME", Some(".rustup")),
    keep("RUSTUP_TOOLCHAIN"),
    // Go.
    toolchain("GOPATH", None),
    toolchain("GOROOT", None),
    toolchain("GOBIN", None),
    drop("GOCACHE"),
    toolchain("GOMODCACHE", None),
    // JVM.
    toolchain("JAVA_HOME", None),
    drop("GRADLE_USER_HOME"),
    toolchain("MAVEN_HOME", None),
    toolchain("M2_HOME", None),
    // Python.
    toolchain("VIRTUAL_ENV", None),
    toolchain("PYENV_ROOT", Some(".pyenv")),
    toolchain("CONDA_PREFIX", None),
    // JavaScript runtimes.
    toolchain("NVM_DIR", Some(".nvm")),
    toolchain("NVM_BIN", None),
    toolchain("PNPM_HOME", None),
    toolchain("BUN_INSTALL", Some(".bun")),
    toolchain("VOLTA_HOME", Some(".volta")),
    drop("DENO_DIR"),
    toolchain("DENO_INSTALL_ROOT", None),
    // Ruby and .NET.
    toolchain("GEM_HOME", None),
    keep("GEM_PATH"),
    toolchain("RBENV_ROOT", Some(".rbenv")),
    toolchain("DOTNET_ROOT", None),
];

/// Name prefixes passed like the table's names (the locale categories), kept in the sandbox.
pub const PREFIXES: &[&str] = &["LC_"];

/// Whether the parent's variable `name` passes (before the credential-name check).
pub fn passes(name: &str) -> bool {
    VARS.iter().any(|v| v.name == name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The variables the sandbox drops.
pub fn dropped_in_sandbox() -> impl Iterator<Item = &'static str> {
    VARS.iter().filter(|v| v.in_sandbox == InSandbox::Drop).map(|v| v.name)
}

/// The toolchain homes the sandbox binds back, with their default under `HOME`.
pub fn toolchains() -> impl Iterator<Item = (&'static str, Option<&'static str>)> {
    VARS.iter().filter_map(|v| match v.in_sandbox {
        InSandbox::Toolchain(default) => Some((v.name, default)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_name_and_the_sandbox_reads_the_same_table() {
        let mut names: Vec<&str> = VARS.iter().map(|v| v.name).collect();
        let all = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all, "a name appears twice");
        assert!(passes("XDG_CACHE_HOME") && passes("LC_ALL") && !passes("GH_TOKEN") && !passes("PYTHONPATH"));
        let dropped: Vec<&str> = dropped_in_sandbox().collect();
        assert!(dropped.contains(&"XDG_CACHE_HOME") && dropped.contains(&"TMPDIR"), "{dropped:?}");
        assert!(toolchains().any(|(name, default)| name == "CARGO_HOME" && default == Some(".cargo")));
        assert!(!toolchains().any(|(name, _)| name == "PATH"));
    }
}
