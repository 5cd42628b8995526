//! The demo's project: a tiny calculator whose tests need only `sh` (and `git` to fetch it),
//! so the demo runs on any machine without a toolchain.

/// The repository the scripted WebGPT works in (owned by the emulator's user).
pub const REPO_NAME: &str = "calc";

/// The emulator's authenticated user, and so the repository owner.
pub const LOGIN: &str = "forgeloop-demo";

/// The operations `calc.sh` knows on `main`; each task adds one.
const BASE_OPERATIONS: &[(&str, &str)] = &[("add", "echo $((a + b))")];

const README: &str = "# calc\n\nA tiny calculator for the forgeloop demo: `sh calc.sh OP A B`.\n\
Run the tests with `sh test.sh` (only `sh` is needed).\n";

const TEST_SH: &str = r##"#!/bin/sh
# Runs every tests/*.sh. Each prints one line per check and fails when a check failed.
failed=0
for t in tests/*.sh; do
    echo "# $t"
    if ! sh "$t"; then
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "FAILED: see the lines marked FAIL above"
    exit 1
fi
echo "all tests passed"
"##;

const CHECK_SH: &str = r#"# check EXPECTED OP A B: runs calc.sh and compares its answer (stdout and stderr).
fails=0
check() {
    want=$1
    shift
    got=$(sh calc.sh "$@" 2>&1)
    if [ "$got" = "$want" ]; then
        echo "ok   calc $* = $got"
    else
        echo "FAIL calc $*: expected $want, got $got"
        fails=$((fails + 1))
    fi
}
"#;

const ADD_TEST: &str = "check 5 add 2 3\ncheck 0 add -4 4\n";

/// `calc.sh` with the base operations plus `extra` (operation, shell body).
pub fn calc_sh(extra: &[(&str, &str)]) -> String {
    let mut out = String::from(
        "#!/bin/sh\n# calc.sh OP A B: a tiny calculator for the forgeloop demo.\nop=$1\na=$2\nb=$3\ncase \"$op\" in\n",
    );
    for (op, body) in BASE_OPERATIONS.iter().chain(extra) {
        out.push_str(&format!("{op})\n    {body}\n    ;;\n"));
    }
    out.push_str("*)\n    echo \"calc.sh: unknown operation '$op'\" >&2\n    exit 2\n    ;;\nesac\n");
    out
}

/// A test file: the shared `check` helper, then `checks` (lines of `check WANT OP A B`).
pub fn test_file(checks: &str) -> String {
    format!(". ./lib/check.sh\n{checks}[ \"$fails\" -eq 0 ]\n")
}

/// What `main` holds: the calculator with `add`, its test, and the test runner.
pub fn main_files() -> Vec<(&'static str, String)> {
    vec![
        ("README.md", README.to_owned()),
        ("calc.sh", calc_sh(&[])),
        ("test.sh", TEST_SH.to_owned()),
        ("lib/check.sh", CHECK_SH.to_owned()),
        ("tests/add.sh", test_file(ADD_TEST)),
    ]
}

/// checklib: the team's extra shell checks, a dependency the demo's package index serves as a
/// git repository (`add-average-with-deps` clones it in its setup).
pub const CHECKLIB_SH: &str = r#"# checklib: extra checks for calc's shell tests.
# check_one_of "A|B" OP X Y: the answer is one of the listed values.
check_one_of() {
    want=$1
    shift
    got=$(sh calc.sh "$@" 2>&1)
    case "|$want|" in
        *"|$got|"*) echo "ok   calc $* = $got (one of $want)" ;;
        *)
            echo "FAIL calc $*: expected one of $want, got $got"
            fails=$((fails + 1))
            ;;
    esac
}
"#;

/// The dependency cycle's commands file: `setup` clones checklib from `url` into `vendor/`
/// (through the run's egress proxy), then the tests run without network.
pub fn dependency_commands_json(url: &str) -> String {
    serde_json::json!({
        "setup": [{"argv": ["git", "clone", "--quiet", url, "vendor/checklib"], "timeout_s": 60}],
        "commands": [{"argv": ["sh", "test.sh"], "timeout_s": 60}],
    })
    .to_string()
}

/// The person's config in the demo's sandbox: the public registries only, so the package index
/// on 127.0.0.1 is refused (by policy: it is not public) until the person writes its entry by hand; and the profile `forgeloop serve`'s
/// `test_pr` runs for the demo repository (design §8.1).
pub const CONFIG_TOML: &str = "# The demo's config.toml: what test runs may reach (design §5.6).\n\
[network]\nallow = [\"registries\"]\n\n\
# What forgeloop serve's test_pr runs (design §8.1): the person's profile, never the client's.\n\
[mcp.profiles.calc-tests]\ncommands = [{ argv = [\"sh\", \"test.sh\"], timeout_s = 60 }]\n\n\
[connector]\ndefault_profile = \"calc-tests\"\n";

/// What a person does by hand for an address forgeloop will not propose: the exact entries in
/// `[network.repositories."owner/repo"] allow` of the demo's config.toml (appended once).
pub fn write_entries_by_hand(
    ctx: &crate::cycle::Ctx,
    repository: &str,
    entries: &[String],
) -> crate::error::Result<()> {
    let Some(path) = &ctx.config_path else {
        return Err(crate::error::Error::Invalid("the demo has no config file".into()));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::error::Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
    let table = format!("[network.repositories.\"{repository}\"]");
    if text.contains(&table) {
        return Ok(());
    }
    let quoted: Vec<String> = entries.iter().map(|e| format!("\"{e}\"")).collect();
    let added = format!(
        "{text}\n# Written by hand (forgeloop proposes no entry for an address that is not public).\n{table}\nallow = [{}]\n",
        quoted.join(", ")
    );
    crate::store::atomic::write_atomic(path, added.as_bytes())
        .map_err(|e| crate::error::Error::Invalid(format!("cannot write {}: {e}", path.display())))
}

/// Whether `entries` are all in `repository`'s allowlist in the demo's config.toml: what the
/// stand-in agent checks for, where a person would tell it they wrote them.
pub fn entries_written(ctx: &crate::cycle::Ctx, repository: &str, entries: &[String]) -> bool {
    let Some(path) = &ctx.config_path else { return false };
    let Ok(config) = crate::config::Config::load(path, true) else { return false };
    let allow = config.network.for_repository(repository).allow;
    entries.iter().all(|entry| {
        crate::domain::egress::AllowEntry::parse(entry).is_ok_and(|parsed| allow.entries().contains(&parsed))
    })
}

/// The Project the demo repository is bound to in the demo's registry (a made-up address: the
/// demo opens no ChatGPT page), so `forgeloop serve` may use it.
pub const PROJECT_URL: &str = "https://chatgpt.com/g/g-p-forgeloop-demo/project";

/// The commands file of the demo (the object form, with a timeout a stuck test cannot exceed).
pub const COMMANDS_JSON: &str = r#"{"commands": [{"argv": ["sh", "test.sh"], "timeout_s": 60}]}"#;

/// The CI cycle's profile (design §5.7): nothing runs here; the emulator's CI worker runs
/// `sh test.sh` as the repository's `test` check.
pub const CI_COMMANDS_JSON: &str =
    r#"{"executor": "github-checks", "checks": ["test"], "timeout_s": 300, "appear_timeout_s": 120}"#;

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The project's own tests pass on `main` and fail on a wrong operation, with `sh` only.
    #[test]
    fn main_passes_and_a_wrong_operation_fails() {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in main_files() {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let run = || Command::new("sh").arg("test.sh").current_dir(dir.path()).output().unwrap();
        let out = run();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(String::from_utf8_lossy(&out.stdout).contains("ok   calc add 2 3 = 5"));

        std::fs::write(dir.path().join("calc.sh"), calc_sh(&[("sub", "echo $((a + b))")])).unwrap();
        std::fs::write(dir.path().join("tests/sub.sh"), test_file("check 2 sub 5 3\n")).unwrap();
        let out = run();
        assert!(!out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("FAIL calc sub 5 3: expected 2, got 8"), "{stdout}");
        assert!(stdout.contains("ok   calc add 2 3 = 5"), "{stdout}");
    }

    /// With checklib in vendor/ (as the setup clones it), a test using it passes; without, fails.
    #[test]
    fn the_dependency_s_check_works_and_its_absence_fails_the_tests() {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in main_files() {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::write(dir.path().join("calc.sh"), calc_sh(&[("avg", "echo $(((a + b) / 2))")])).unwrap();
        std::fs::write(
            dir.path().join("tests/avg.sh"),
            test_file(". ./vendor/checklib/lib.sh\ncheck_one_of '2|3' avg 2 3\n"),
        )
        .unwrap();
        let run = || Command::new("sh").arg("test.sh").current_dir(dir.path()).output().unwrap();
        assert!(!run().status.success(), "passes without the dependency");
        std::fs::create_dir_all(dir.path().join("vendor/checklib")).unwrap();
        std::fs::write(dir.path().join("vendor/checklib/lib.sh"), CHECKLIB_SH).unwrap();
        let out = run();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(String::from_utf8_lossy(&out.stdout).contains("ok   calc avg 2 3 = 2 (one of 2|3)"));
    }
}
