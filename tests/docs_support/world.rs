//! The world every doc file runs in: the GitHub emulator with `acme/widget` and its two PRs,
//! a token made for the run, and a clean environment whose homes are all in a temp dir, so
//! the docs can say `acme/widget#1` and mean it, and nothing reaches the developer's files.

use std::path::{Path, PathBuf};

use crate::support::world::World;

/// `main`: a tiny standard-library Python project whose tests pass.
pub const WIDGET_MAIN: &str = "\"\"\"A tiny widget library.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n";
pub const TEST_MAIN: &str = "import unittest\n\nimport widget\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(widget.add(2, 3), 5)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
pub const README: &str = "# widget\n\nA tiny widget library. Run the tests with `python3 -m unittest -v`.\n";

/// PR #1 (`webgpt/dark-mode`): adds dark mode with a test; everything passes.
pub const WIDGET_DARK: &str = "\"\"\"A tiny widget library.\"\"\"\n\nTHEMES = (\"light\", \"dark\")\n\n\ndef add(a, b):\n    return a + b\n\n\ndef theme(dark_mode):\n    \"\"\"The theme name for the user's dark-mode preference.\"\"\"\n    return \"dark\" if dark_mode else \"light\"\n";
pub const TEST_DARK: &str = "import unittest\n\nimport widget\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(widget.add(2, 3), 5)\n\n\nclass ThemeTest(unittest.TestCase):\n    def test_dark_mode(self):\n        self.assertEqual(widget.theme(True), \"dark\")\n        self.assertEqual(widget.theme(False), \"light\")\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";

/// PR #2 (`webgpt/broken`): `add` subtracts; `test_add` fails with an AssertionError.
pub const WIDGET_BROKEN: &str = "\"\"\"A tiny widget library.\"\"\"\n\n\ndef add(a, b):\n    return a - b\n";

pub const DARK_BRANCH: &str = "webgpt/dark-mode";
pub const BROKEN_BRANCH: &str = "webgpt/broken";

/// Toolchain homes kept at their real paths although `HOME` moves: the `PATH` shims (pyenv's
/// `python3`, rustup's `cargo`) need them, and forgeloop's sandbox binds exactly these
/// read-only for the test commands.
const TOOLCHAIN_HOMES: &[(&str, &str)] =
    &[("PYENV_ROOT", ".pyenv"), ("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")];

pub struct DocWorld {
    pub world: World,
    /// The doc's working directory.
    pub work: PathBuf,
    /// The harness's own files (scripts of tty commands), outside the working directory.
    pub scratch: PathBuf,
    env: Vec<(String, String)>,
}

impl DocWorld {
    pub fn new() -> DocWorld {
        let world = World::new();
        let repo = world.rt.block_on(world.emu.create_repo("acme", "widget", false)).expect("creating acme/widget");
        world.commit(
            &repo,
            "main",
            &[("widget.py", WIDGET_MAIN), ("test_widget.py", TEST_MAIN), ("README.md", README)],
            "widget: add() with a unittest suite",
        );
        world.commit(&repo, DARK_BRANCH, &[("widget.py", WIDGET_DARK), ("test_widget.py", TEST_DARK)], "Add dark mode");
        let dark = world.rt.block_on(world.emu.open_pr(&repo, DARK_BRANCH, "main", "Add dark mode")).unwrap();
        world.commit(&repo, BROKEN_BRANCH, &[("widget.py", WIDGET_BROKEN)], "Refactor add()");
        let broken = world.rt.block_on(world.emu.open_pr(&repo, BROKEN_BRANCH, "main", "Refactor add()")).unwrap();
        assert_eq!((dark, broken), (1, 2), "the docs name acme/widget#1 (passes) and #2 (fails)");

        let root = world.sb.dir.path().to_path_buf();
        let dir = |name: &str| {
            let path = root.join(name);
            std::fs::create_dir_all(&path).unwrap();
            path
        };
        let work = dir("work");
        let scratch = dir("harness");
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_forgeloop")).parent().unwrap().to_path_buf();
        let path = std::env::join_paths(
            std::iter::once(bin_dir).chain(std::env::var_os("PATH").iter().flat_map(std::env::split_paths)),
        )
        .unwrap();
        let mut env: Vec<(String, String)> = vec![
            ("PATH".into(), path.to_string_lossy().into_owned()),
            ("HOME".into(), display(&dir("home"))),
            // Not made here: forgeloop makes its home itself (0700), as on a new machine.
            ("FORGELOOP_HOME".into(), display(&root.join("forgeloop"))),
            ("FORGELOOP_REGISTRY".into(), display(&dir("registry"))),
            ("XDG_CONFIG_HOME".into(), display(&dir("xdg-config"))),
            ("XDG_STATE_HOME".into(), display(&dir("xdg-state"))),
            ("XDG_DATA_HOME".into(), display(&dir("xdg-data"))),
            ("FORGELOOP_GITHUB_API".into(), world.emu.api_base()),
            ("GH_TOKEN".into(), world.token.clone()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        for name in ["USER", "LOGNAME"] {
            if let Ok(value) = std::env::var(name) {
                env.push((name.into(), value));
            }
        }
        let real_home = std::env::var_os("HOME").map(PathBuf::from);
        for (name, default) in TOOLCHAIN_HOMES {
            let value =
                std::env::var_os(name).map(PathBuf::from).or_else(|| real_home.as_ref().map(|h| h.join(default)));
            if let Some(value) = value.filter(|v| v.is_dir()) {
                env.push(((*name).into(), display(&value)));
            }
        }
        DocWorld { world, work, scratch, env }
    }

    /// The environment of a command; a tty command also gets a terminal type and size.
    pub fn env(&self, tty: bool) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        if tty {
            env.push(("TERM".into(), "xterm-256color".into()));
            env.push(("COLUMNS".into(), super::exec::TTY_COLUMNS.to_string()));
            env.push(("LINES".into(), super::exec::TTY_ROWS.to_string()));
        }
        env
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
