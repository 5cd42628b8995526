//! The run's support directory: forgeloop's result recorders, written before the first command
//! and read-only inside the sandbox. Files are readable by every account (the tests may run as
//! another one, design §5.6); the run's own `0700` directory keeps everyone else out.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::ResultsError;
use crate::store::nofollow;

/// The files, by path under the support directory.
const FILES: &[(&str, &str)] = &[
    ("python/sitecustomize.py", include_str!("support/python/sitecustomize.py")),
    ("python/forgeloop_results.py", include_str!("support/python/forgeloop_results.py")),
    ("python/forgeloop_results_pytest.py", include_str!("support/python/forgeloop_results_pytest.py")),
    ("node/forgeloop-reporter.mjs", include_str!("support/node/forgeloop-reporter.mjs")),
];

/// A run's support directory, filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    dir: PathBuf,
}

impl Support {
    /// Creates `dir` (and its `python`, `node` subdirectories) and writes the recorders into
    /// it, replacing what is there; never through a symbolic link.
    pub fn install(dir: &Path) -> Result<Support, ResultsError> {
        let error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ResultsError::Support { path, source }
        };
        for sub in ["", "python", "node"] {
            let path = if sub.is_empty() { dir.to_path_buf() } else { dir.join(sub) };
            match DirBuilder::new().mode(0o755).create(&path) {
                Ok(()) => {}
                Err(e)
                    if e.kind() == std::io::ErrorKind::AlreadyExists
                        && path.symlink_metadata().is_ok_and(|m| m.is_dir()) => {}
                Err(e) => return Err(error(&path)(e)),
            }
            std::fs::set_permissions(&path, Permissions::from_mode(0o755)).map_err(error(&path))?;
        }
        for (name, text) in FILES {
            let path = dir.join(name);
            let mut file =
                nofollow::open(OpenOptions::new().write(true).create(true).truncate(true).mode(0o644), &path)
                    .map_err(error(&path))?;
            file.write_all(text.as_bytes()).map_err(error(&path))?;
            file.set_permissions(Permissions::from_mode(0o644)).map_err(error(&path))?;
        }
        Ok(Support { dir: dir.to_path_buf() })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory put first on `PYTHONPATH`.
    pub fn python(&self) -> PathBuf {
        self.dir.join("python")
    }

    /// The `node --test` reporter.
    pub fn node_reporter(&self) -> PathBuf {
        self.dir.join("node/forgeloop-reporter.mjs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_readable_files_and_replaces_old_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("support");
        let support = Support::install(&dir).unwrap();
        let site = std::fs::read_to_string(support.python().join("sitecustomize.py")).unwrap();
        assert!(site.contains("FORGELOOP_RESULTS"));
        assert!(support.node_reporter().is_file());
        let mode = |p: &Path| p.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o755);
        assert_eq!(mode(&support.python().join("forgeloop_results_pytest.py")), 0o644);
        std::fs::write(support.python().join("sitecustomize.py"), "changed").unwrap();
        Support::install(&dir).unwrap();
        assert_eq!(std::fs::read_to_string(support.python().join("sitecustomize.py")).unwrap(), site);
    }

    #[test]
    fn a_link_in_its_place_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("support");
        std::fs::create_dir_all(dir.join("python")).unwrap();
        let target = tmp.path().join("elsewhere");
        std::fs::write(&target, "mine").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("python/sitecustomize.py")).unwrap();
        assert!(Support::install(&dir).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
    }
}
