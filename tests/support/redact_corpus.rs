//! Realistic text for redaction tests and benchmarks: contexts secrets show up in, a benign
//! corpus that must come out unchanged, and a generated test log.
#![allow(dead_code)]

use super::redact_secrets::{self as secrets, B62, HEX, Rng, Sample};

/// Where a shape-recognisable secret `{S}` appears in practice.
pub const CONTEXTS: &[&str] = &[
    "{S}",
    "{S} was rejected\n",
    "error: authentication failed using {S}",
    "  File \"/tmp/forgeloop-run/checkout/tests/test_api.py\", line 42, in test_push\n    client = Client(token=\"{S}\")\nE   AssertionError: push failed for {S}\n",
    "thread 'upload::tests::push' panicked at src/upload.rs:88:9:\ncalled `Result::unwrap()` on an `Err` value: Unauthorized(\"{S}\")\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    "origin\thttps://{S}@github.com/acme/widget.git (fetch)\norigin\thttps://{S}@github.com/acme/widget.git (push)\n",
    "{\"token\": \"{S}\", \"ok\": false}\n",
    "{\"config\":{\"registry\":\"https://registry.npmjs.org/\",\"auth\":\"{S}\"}}",
    "credentials:\n  api_key: {S}\n  quoted: \"{S}\"\n",
    "curl -sS -H \"Authorization: Bearer {S}\" https://api.example.com/v1/models\n",
    "GITHUB_TOKEN={S}\nPATH=/usr/local/bin:/usr/bin\n",
    "'{S}'",
    "\"{S}\"",
    "`{S}`",
    "({S})",
    "[{S}]",
    "<{S}>",
    "\x1b[31m{S}\x1b[0m\n",
    "\x1b[1;33mwarning\x1b[0m: leaked \x1b[4m{S}\x1b[24m in output\n",
    "value:{S};next",
    "{S}\r\n",
    "export TOKEN='{S}'",
    "echo {S} | docker login --username ci --password-stdin\n",
    "2026-11-29T10:12:33.123Z DEBUG request headers={\"authorization\":\"Bearer {S}\"}\n",
];

/// Where a secret that needs its surrounding line (`password = …`, a PEM block) appears.
pub const CARRIED_CONTEXTS: &[&str] = &[
    "{T}",
    "{T}\n",
    "    {T}\n",
    "[INFO] loading config\n{T}\n[INFO] done\n",
    "\x1b[2m{T}\x1b[0m\n",
    "first\r\n{T}\r\nlast\r\n",
];

pub fn embed(context: &str, sample: &Sample) -> String {
    if sample.standalone { context.replace("{S}", &sample.text) } else { context.replace("{T}", &sample.text) }
}

/// Text that must come out byte-for-byte unchanged: ordinary test output and source code,
/// including everything that looks a little like a secret or a user path but is not.
pub fn benign_lines() -> Vec<String> {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut v: Vec<String> = [
        "running 12 tests",
        "test domain::brief::tests::parses_the_minimal_brief ... ok",
        "test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.42s",
        "thread 'cycle::tests::cap_is_enforced' panicked at src/cycle/mod.rs:211:5:",
        "assertion `left == right` failed\n  left: 3\n right: 4",
        "warning: unused variable: `key`\n  --> src/store/journal.rs:42:9",
        "error[E0308]: mismatched types: expected `&str`, found `String`",
        "   Compiling serde_json v1.0.154",
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in 12.34s",
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0",
        "tests/test_api.py::test_fetch_token FAILED                                 [ 50%]",
        "E       KeyError: 'session_id'",
        "E       AssertionError: assert 401 == 200",
        "FAILED tests/test_api.py::test_fetch_token - AssertionError: expected 1 got 2",
        "commit 3f9a1c0e2b7d4a6f8e1c3b5d7f9a0c2e4b6d8f10",
        "Author: Jane Doe <jane@example.com>",
        "Merge: 1a2b3c4 5d6e7f8",
        "HEAD is now at 9b2c7d1e0f3a4b5c6d7e8f90a1b2c3d4e5f6a7b8 fix: handle empty token list",
        "request_id=4f1c2a9e-8b7d-4c1e-9f3a-2b6c8d0e1f22 trace=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "GET https://api.github.com/repos/acme/widget/pulls/12 -> 200 (34 ms)",
        "Cloning into 'widget'... https://github.com/acme/widget.git",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
        "task-runner started; disk-usage 41%; ask-me-anything enabled",
        "see /homepage/x and /usersguide/intro and /rooted/tree and /home",
        "sk-a is too short, so is sk-ab12, and sk-learn is a package name",
        "key = value",
        "password = changeme",
        "token = ${GITHUB_TOKEN}",
        "api_key: <your-api-key>",
        "secret: ****",
        "export AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY",
        "Authorization: Bearer $TOKEN",
        "Bearer authentication is required for this endpoint",
        "the token expired at 2026-11-29T10:12:33Z; refresh it",
        "    let token = tokens.next().ok_or(Error::UnexpectedEof)?;",
        "    fn api_key(&self) -> Option<&str> { self.api_key.as_deref() }",
        "    pub password: String,",
        "    secret_key = settings.SECRET_KEY",
        "    token_type: \"Bearer\".to_owned(),",
        "    max_tokens = 4096",
        "def test_login(client, password_hash):",
        "    assert client.post('/login', data={'password': password}).status_code == 200",
        "    response = requests.get(url, headers=headers, timeout=5)",
        "import os; token = os.environ['GITHUB_TOKEN']",
        "ghp_ is the prefix of a classic token and github_pat_ of a fine-grained one",
        "-----BEGIN CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqjvYQ3mXq2mHh5pKQ8vJ9H2k5Yl3v1bW0nG7cJt8sX user@host",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "version 1.2.3-beta.4+build.5, rustc 1.95.0 (59807616e 2026-11-20)",
        "/tmp/pytest-of-dev/pytest-3/test_x0/data.json and /usr/lib/python3/dist-packages and /opt/app",
        "mailto:dev@example.com and git@github.com:acme/widget.git",
        "ssh://git@github.com/acme/widget.git",
        "x = {'a': 1, 'b': [1, 2, 3]}",
        "DEBUG cache key=deps-linux-x64-3f9a1c0e hit=true",
        "max-tokens: 128, session: 42",
        "    at Object.<anonymous> (/app/node_modules/jest-circus/build/utils.js:298:28)",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.push(format!("payload={}", b64("The quick brown fox jumps over the lazy dog, twice.")));
    v.push(format!("echo {} | base64 -d", b64("hello world from the forgeloop test suite")));
    v
}

/// Path cases: (input, expected) with `/home/dev` as home and `/tmp/forgeloop-run/checkout`
/// as the checkout.
pub fn path_cases() -> Vec<(&'static str, &'static str)> {
    vec![
        ("/tmp/forgeloop-run/checkout/src/lib.rs:42:9", "<checkout>/src/lib.rs:42:9"),
        ("  File \"/tmp/forgeloop-run/checkout/tests/t.py\", line 3", "  File \"<checkout>/tests/t.py\", line 3"),
        ("/private/tmp/forgeloop-run/checkout/a.rs", "<checkout>/a.rs"),
        ("/tmp/forgeloop-run/checkout2/a.rs", "/tmp/forgeloop-run/checkout2/a.rs"),
        ("/home/dev/.cargo/registry/src/x.rs", "~/.cargo/registry/src/x.rs"),
        ("cd /home/dev && ls", "cd ~ && ls"),
        ("/home/alice/project/x.py", "[LOCAL_PATH]/project/x.py"),
        ("`/home/u/x`", "`[LOCAL_PATH]/x`"),
        ("'/Users/kjun/private/file.txt'", "'[LOCAL_PATH]/private/file.txt'"),
        ("\"/Users/kjun\"", "\"[LOCAL_PATH]\""),
        ("C:\\Users\\me\\src\\x.rs", "[LOCAL_PATH]\\src\\x.rs"),
        ("{\"path\": \"C:\\\\Users\\\\me\\\\x\"}", "{\"path\": \"[LOCAL_PATH]\\\\x\"}"),
        ("C:/Users/me/x", "[LOCAL_PATH]/x"),
        ("/private/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/tmp.x", "[LOCAL_PATH]/T/tmp.x"),
        ("/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/", "[LOCAL_PATH]/T/"),
        ("/root/.bashrc", "[LOCAL_PATH]/.bashrc"),
        ("file:///home/alice/x.html", "file://[LOCAL_PATH]/x.html"),
        ("PATH=/usr/bin:/home/alice/bin", "PATH=/usr/bin:[LOCAL_PATH]/bin"),
        ("/homepage/x", "/homepage/x"),
        ("/srv/home/alice/x", "/srv/home/alice/x"),
        ("https://example.com/home/about", "https://example.com/home/about"),
        ("/rootfs/etc", "/rootfs/etc"),
        ("/Users", "/Users"),
        ("~/x and /tmp/other", "~/x and /tmp/other"),
    ]
}

/// Lines of a realistic CI log (cargo, pytest, npm, git, JSON logging), with the run's
/// checkout and home paths where real logs have them.
fn log_line(rng: &mut Rng, out: &mut String) {
    let n = rng.below(24);
    let sha = rng.chars(HEX, 40);
    let id = rng.below(100_000);
    match n {
        0 => out.push_str(&format!("test domain::state::tests::case_{id} ... ok\n")),
        1 => out.push_str(&format!("test cycle::tests::retries_{id} ... FAILED\n")),
        2 => out.push_str(&format!(
            "thread 'cycle::tests::retries_{id}' panicked at /tmp/forgeloop-run/checkout/src/cycle/mod.rs:{}:5:\nassertion `left == right` failed\n  left: 3\n right: 4\n",
            rng.below(900)
        )),
        3 => out.push_str("   Compiling serde_json v1.0.154\n   Compiling forgeloop v0.1.0 (/tmp/forgeloop-run/checkout)\n"),
        4 => out.push_str(&format!(
            "warning: unused variable: `key`\n  --> src/store/journal.rs:{}:9\n   |\n42 |     let key = entry.key();\n   |         ^^^ help: if this is intentional, prefix it with an underscore: `_key`\n",
            rng.below(500)
        )),
        5 => out.push_str(&format!(
            "  File \"/tmp/forgeloop-run/checkout/tests/test_api.py\", line {}, in test_fetch_{id}\n    response = client.get(url, headers=headers)\n",
            rng.below(400)
        )),
        6 => out.push_str("E       AssertionError: assert 401 == 200\nE        +  where 401 = <Response [401]>.status_code\n"),
        7 => out.push_str(&format!("tests/test_api.py::test_case_{id} PASSED                                  [ {}%]\n", rng.below(100))),
        8 => out.push_str(&format!(
            "{{\"ts\":\"2026-11-29T10:{:02}:{:02}.{:03}Z\",\"level\":\"info\",\"msg\":\"request finished\",\"request_id\":\"{}-{}\",\"status\":200,\"elapsed_ms\":{}}}\n",
            rng.below(60), rng.below(60), rng.below(1000), rng.chars(HEX, 8), rng.chars(HEX, 12), rng.below(900)
        )),
        9 => out.push_str(&format!("commit {sha}\nAuthor: Jane Doe <jane@example.com>\nDate:   Sat Nov 29 10:12:33 2026 +0000\n\n    fix: retry on {id}\n\n")),
        10 => out.push_str(&format!("GET https://api.github.com/repos/acme/widget/pulls/{} -> 200 ({} ms)\n", rng.below(500), rng.below(300))),
        11 => out.push_str("npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n"),
        12 => out.push_str(&format!("    at Object.<anonymous> (/home/dev/work/app/node_modules/jest-circus/build/utils.js:{}:28)\n", rng.below(400))),
        13 => out.push_str(&format!("HEAD is now at {} Merge pull request #{} from acme/feature-{}\n", &sha[..7], rng.below(900), id)),
        14 => out.push_str("    let token = tokens.next().ok_or(Error::UnexpectedEof)?;\n"),
        15 => out.push_str(&format!("DEBUG cache key=deps-linux-x64-{} hit=true size={}\n", &sha[..12], rng.below(1 << 20))),
        16 => out.push_str("============================= test session starts ==============================\nplatform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0\n"),
        17 => out.push_str(&format!("test result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.{}s\n", rng.below(300), rng.below(100))),
        18 => out.push_str(&format!("  {} | {} | {}\n", rng.chars(B62, 20), rng.chars(HEX, 16), id)),
        19 => out.push_str("\x1b[32m✓\x1b[0m renders the dashboard (12 ms)\n\x1b[31m✗\x1b[0m handles an expired session (4 ms)\n"),
        20 => out.push_str(&format!("remote: Counting objects: {id}, done.\nReceiving objects: 100% ({id}/{id}), 1.20 MiB | 3.40 MiB/s, done.\n")),
        21 => out.push_str(&format!("2026-11-29 10:12:33,123 WARNING urllib3.connectionpool Retrying (Retry(total=2)) after connection broken: /simple/{}/\n", rng.chars(B62, 8).to_lowercase())),
        22 => out.push_str("    def test_login(self, client, password_hash):\n        assert client.post('/login', data={'user': 'a'}).ok\n"),
        _ => out.push_str(&format!("[{:>5}] Downloaded {} bytes from https://static.crates.io/crates/serde/serde-1.0.{}.crate\n", id, rng.below(1 << 20), rng.below(230))),
    }
}

/// A generated test log of about `size` bytes with one secret about every `secret_every`
/// bytes, drawn from every family. Returns the log and the secrets embedded in it.
pub fn realistic_log(seed: u64, size: usize, secret_every: usize) -> (String, Vec<String>) {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    let mut embedded = Vec::new();
    let mut next_secret = secret_every;
    let mut pool: Vec<Sample> = Vec::new();
    while out.len() < size {
        if out.len() >= next_secret {
            if pool.is_empty() {
                pool = secrets::all_families(&mut rng);
            }
            let sample = pool.swap_remove(rng.below(pool.len()));
            let context = if sample.standalone { *rng.pick(CONTEXTS) } else { *rng.pick(CARRIED_CONTEXTS) };
            let mut text = embed(context, &sample);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            out.push_str(&text);
            embedded.push(sample.secret);
            next_secret += secret_every;
        }
        log_line(&mut rng, &mut out);
    }
    (out, embedded)
}
