//! The false-positive budget's corpora (design §7.2): text with no secret in it, on which every
//! secret mask is a false one. This repository's own source (read at run time), committed
//! fixtures of compiler errors, stack traces, CI logs and `cargo test` output
//! (`tests/fixtures/redact_fp/`) and of TypeScript and `package.json` files
//! (`tests/fixtures/redact_fp/ts-source/`), a larger corpus generated from templates of the same, and
//! (for the bench only) the third-party Rust sources in the local cargo registry.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use forgeloop::redact::{Finding, Redactor};

use super::redact_secrets::{HEX, Rng};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files of this repository that are *about* secrets, left out of the source corpus on
/// purpose: they hold generated or fake credentials (and near misses of them) so the
/// redactor has something to find. Everything else must stay within the budget.
pub const SOURCE_EXCLUDED: &[(&str, &str)] = &[
    ("crates/forgeloop-core/src/redact/", "the rules themselves: samples, near misses and unit tests of every format"),
    ("tests/redact_", "redaction tests: secrets generated in every context on purpose"),
    ("tests/support/redact_", "the generators of those secrets and the contexts they are shown in"),
    ("tests/stderr_redaction.rs", "puts a generated token on every output channel and checks it is masked"),
    ("tests/cleartext_token.rs", "stores a generated token and checks it never reaches disk in clear"),
    ("fuzz/", "fuzz targets and corpora: hostile bytes by design"),
];

/// Extensions of the source corpus.
pub const SOURCE_EXTENSIONS: &[&str] = &["rs", "md", "toml", "py", "sh"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules") {
                walk(&path, out);
            }
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

/// This repository's `*.rs`, `*.md`, `*.toml`, `*.py` and `*.sh` files outside
/// `SOURCE_EXCLUDED`, as (path relative to the root, text).
pub fn repo_sources() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    walk(&root, &mut files);
    files
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&root).ok()?.to_string_lossy().replace('\\', "/");
            let ext = path.extension()?.to_str()?;
            if !SOURCE_EXTENSIONS.contains(&ext) || SOURCE_EXCLUDED.iter().any(|(p, _)| rel.starts_with(p)) {
                return None;
            }
            Some((rel, std::fs::read_to_string(&path).ok()?))
        })
        .collect()
}

/// The committed fixtures of source code, in `tests/fixtures/redact_fp/ts-source/`.
pub const SOURCE_FIXTURES: &str = "tests/fixtures/redact_fp/ts-source";

/// The committed files under `dir` (relative to the root), as (path, text).
fn committed(dir: &str) -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    walk(&root.join(dir), &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&root).ok()?.to_string_lossy().replace('\\', "/");
            Some((rel, std::fs::read_to_string(&p).ok()?))
        })
        .collect()
}

/// The committed fixtures: compiler errors, stack traces, CI logs, `cargo test` output.
pub fn fixtures() -> Vec<(String, String)> {
    let mut docs = committed("tests/fixtures/redact_fp");
    docs.retain(|(path, _)| !path.starts_with(SOURCE_FIXTURES));
    docs
}

/// The committed TypeScript and `package.json` fixtures (with the Rust half of one addon):
/// an editor extension's state keys, an OAuth client, package manifests with `bin` paths and
/// `@secretlint/*` packages, each name holding `token`, `secret`, `key` or `password`.
pub fn ts_fixtures() -> Vec<(String, String)> {
    committed(SOURCE_FIXTURES)
}

/// Every `*.rs` file under the local cargo registry's unpacked sources (`~/.cargo/registry/src`,
/// or `$CARGO_HOME/registry/src`): real third-party code, for the bench. Empty when absent.
pub fn registry_sources(limit_bytes: usize) -> Vec<(String, String)> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(home) = home else { return Vec::new() };
    let base = home.join("registry/src");
    let mut files = Vec::new();
    walk(&base, &mut files);
    let mut total = 0;
    let mut out = Vec::new();
    for path in files {
        if total >= limit_bytes || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        total += text.len();
        let rel = path.strip_prefix(&base).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        out.push((rel, text));
    }
    out
}

/// Secret masks only: the paths' `<checkout>`, `~` and `[LOCAL_PATH]` are not secrets.
pub fn secret_findings(r: &Redactor, text: &str) -> Vec<Finding> {
    let (_, findings) = r.explain(text);
    findings.into_iter().filter(|f| !matches!(f.kind.as_str(), "checkout-dir" | "home-dir" | "local-path")).collect()
}

/// The line a finding sits on, for a report (these corpora hold no secret).
pub fn line_of(text: &str, f: &Finding) -> String {
    let start = text[..f.start.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let end = text[f.start.min(text.len())..].find('\n').map_or(text.len(), |i| f.start + i);
    let line = text.get(start..end).unwrap_or_default().trim();
    line.chars().take(160).collect()
}

/// Masks found in a corpus: (bytes, findings as `file:line: kind: the line`).
pub fn scan(r: &Redactor, docs: &[(String, String)]) -> (usize, Vec<String>) {
    let mut bytes = 0;
    let mut found = Vec::new();
    for (name, text) in docs {
        bytes += text.len();
        for f in secret_findings(r, text) {
            found.push(format!("{name}:{}: {}: {}", f.line, f.kind, line_of(text, &f)));
        }
    }
    (bytes, found)
}

/// Masks per MB (10^6 bytes).
pub fn per_mb(masks: usize, bytes: usize) -> f64 {
    if bytes == 0 { 0.0 } else { masks as f64 / (bytes as f64 / 1e6) }
}

// ---------------------------------------------------------------------------------------
// Generated compiler errors, stack traces and CI logs. Identifiers and types are the ones
// code about credentials uses (`token: Token`, `secret_key: &str`, `ApiKey`); no value is a
// credential.

const IDENTS: &[&str] = &[
    "token",
    "access_token",
    "refresh_token",
    "lifetime_token",
    "secret",
    "secret_key",
    "client_secret",
    "api_key",
    "password",
    "password_hash",
    "auth_token",
    "session_token",
    "signing_key",
    "private_key",
    "credentials",
    "bearer_token",
    "csrf_token",
    "next_token",
    "id_token",
    "master_key",
];
const CAMEL: &[&str] = &[
    "token",
    "accessToken",
    "refreshToken",
    "apiKey",
    "secretKey",
    "clientSecret",
    "password",
    "authToken",
    "sessionToken",
    "privateKey",
    "credentials",
    "idToken",
];
const TYPES: &[&str] = &[
    "Token",
    "SyntaxToken",
    "ast::Lifetime",
    "SecretString",
    "Secret<String>",
    "&str",
    "&'a str",
    "String",
    "Option<String>",
    "ApiKey",
    "SigningKey",
    "PasswordHash<'static>",
    "Sha256Digest",
    "Hmac<Sha256>",
    "jsonwebtoken::EncodingKey",
    "oauth2::AccessToken",
    "Arc<dyn TokenProvider>",
    "Vec<u8>",
    "[u8; 32]",
    "SecretKey",
    "TokenKind",
    "crate::auth::Credentials",
    "U256",
    "Aes256GcmKey",
    "OAuth2Token",
];
const TS_TYPES: &[&str] = &[
    "string",
    "string | undefined",
    "AuthToken",
    "Promise<TokenResponse>",
    "SecretKey",
    "ApiKeyConfig",
    "Record<string, string>",
    "OAuth2Client",
];
const MODULES: &[&str] = &["auth", "session", "config", "client", "token_store", "crypto", "api/keys", "oauth"];

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

fn pascal(ident: &str) -> String {
    ident
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

fn rust_error(rng: &mut Rng, out: &mut String) {
    let id = pick(rng, IDENTS);
    let ty = pick(rng, TYPES);
    let ty2 = pick(rng, TYPES);
    let module = pick(rng, MODULES);
    let (l, c) = (rng.below(900) + 1, rng.below(40) + 1);
    let _ = match rng.below(10) {
        0 => writeln!(
            out,
            "error[E0308]: mismatched types\n  --> src/{module}.rs:{l}:{c}\n   |\n{l} |     let {id}: {ty} = {id}.parse()?;\n   |         {}   ^^^^^^^^^^^^^ expected `{ty}`, found `{ty2}`\n   |         |\n   |         expected due to this\n   |\n   = note: expected struct `{ty}`\n              found struct `{ty2}`\n",
            "-".repeat(id.len())
        ),
        1 => writeln!(
            out,
            "error[E0061]: this function takes 2 arguments but 1 argument was supplied\n  --> src/{module}.rs:{l}:5\n   |\n{l} |     verify_{id}({id});\n   |     ^^^^^^^^^^^^ an argument of type `{ty}` is missing\n   |\nnote: function defined here\n  --> src/{module}.rs:40:4\n   |\n40 | fn verify_{id}({id}: &str, secret_key: {ty}) -> Result<Claims, AuthError> {{\n   |    ^^^^^^^^^^^^ ----------  ----------------------\n"
        ),
        2 => writeln!(
            out,
            "error[E0063]: missing field `{id}` in initializer of `{}`\n  --> src/{module}.rs:{l}:9\n   |\n{l} |         {} {{ {id}: {id}.clone(), expires_at }}\n   |         ^^^^^^^ missing `{id}`\n",
            pascal(id),
            pascal(id)
        ),
        3 => writeln!(
            out,
            "warning: unused variable: `{id}`\n  --> src/{module}.rs:{l}:{c}\n   |\n{l} |     let {id} = {}::from_env()?;\n   |         ^^^^^ help: if this is intentional, prefix it with an underscore: `_{id}`\n   |\n   = note: `#[warn(unused_variables)]` on by default\n",
            pascal(id)
        ),
        4 => writeln!(
            out,
            "error[E0277]: the trait bound `{ty}: Serialize` is not satisfied\n   --> src/{module}.rs:{l}:5\n    |\n{l}  |     pub {id}: {ty},\n    |     ^^^ the trait `Serialize` is not implemented for `{ty}`\n    |\n    = help: the following other types implement trait `Serialize`:\n              &'a T\n              ()\n              (T0, T1)\n"
        ),
        5 => writeln!(
            out,
            "error[E0599]: no method named `expose_secret` found for struct `{}` in the current scope\n  --> src/{module}.rs:{l}:{c}\n   |\n{l} |     let raw = self.{id}.expose_secret();\n   |                    ^^^^^^^^^^^^^ method not found in `{}`\n",
            pascal(id),
            pascal(id)
        ),
        6 => writeln!(
            out,
            "thread '{module}::tests::rejects_expired_{id}' panicked at src/{module}.rs:{l}:9:\nassertion `left == right` failed\n  left: Err(Expired {{ {id}: {}Id(42) }})\n right: Ok(Claims {{ sub: \"user-42\", exp: 1700000000 }})\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
            pascal(id)
        ),
        7 => writeln!(
            out,
            "error[E0382]: borrow of moved value: `{id}`\n  --> src/{module}.rs:{l}:{c}\n   |\n{} |     fn new({id}: {ty}, signing_key: {ty2}) -> Self {{\n   |            ----- move occurs because `{id}` has type `{ty}`, which does not implement the `Copy` trait\n{l} |         let header = format!(\"Authorization: Bearer {{{id}}}\");\n",
            l.saturating_sub(3)
        ),
        8 => writeln!(
            out,
            "error[E0425]: cannot find value `{id}` in this scope\n   --> src/{module}.rs:{l}:{c}\n    |\n{l}  |     Ok(Config {{ {id}, lifetime_token: {ty}, ..Default::default() }})\n    |                 ^^^^^ help: a local variable with a similar name exists: `{id}s`\n"
        ),
        _ => writeln!(
            out,
            "error: could not compile `forgeloop-{module}` (lib) due to 2 previous errors; 1 warning emitted\nwarning: field `{id}` is never read\n  --> src/{module}.rs:{l}:5\n   |\n{} | pub struct {} {{\n   |            {} field in this struct\n{l} |     {id}: {ty},\n   |     ^^^^^\n",
            l.saturating_sub(1),
            pascal(id),
            "-".repeat(pascal(id).len())
        ),
    };
}

fn ts_error(rng: &mut Rng, out: &mut String) {
    let id = pick(rng, CAMEL);
    let ty = pick(rng, TS_TYPES);
    let module = pick(rng, MODULES);
    let (l, c) = (rng.below(400) + 1, rng.below(40) + 1);
    let _ = match rng.below(5) {
        0 => writeln!(
            out,
            "src/{module}.ts({l},{c}): error TS2322: Type 'string | undefined' is not assignable to type '{ty}'.\n  Type 'undefined' is not assignable to type 'string'."
        ),
        1 => writeln!(
            out,
            "src/{module}.ts:{l}:{c} - error TS2339: Property '{id}' does not exist on type 'AuthResponse'.\n\n{l}   const {{ {id}, expiresIn }} = await login(credentials);\n    {}~~~~~~~~~~~\n",
            " ".repeat(c.min(20))
        ),
        2 => writeln!(
            out,
            "src/{module}.ts({l},{c}): error TS2741: Property '{id}' is missing in type '{{ baseUrl: string; }}' but required in type 'ClientOptions'.\n\n  src/types.ts:8:3\n    8   {id}: {ty};\n        ~~~~~~\n    '{id}' is declared here."
        ),
        3 => writeln!(
            out,
            "src/{module}.ts:{l}:{c} - error TS7006: Parameter '{id}' implicitly has an 'any' type.\n\n{l} export async function refresh({id}, options: RefreshOptions = {{}}) {{\n"
        ),
        _ => writeln!(
            out,
            "src/{module}.ts:{l}:{c} - error TS2345: Argument of type '{{ {id}: {ty}; }}' is not assignable to parameter of type 'Headers'.\n    headers: {{ Authorization: `Bearer ${{{id}}}`, 'X-Api-Key': {id} }},\n"
        ),
    };
}

fn python_traceback(rng: &mut Rng, out: &mut String) {
    let id = pick(rng, IDENTS);
    let module = pick(rng, MODULES).replace('/', "_");
    let l = rng.below(400) + 1;
    let _ = match rng.below(4) {
        0 => writeln!(
            out,
            "Traceback (most recent call last):\n  File \"/usr/lib/python3.12/site-packages/requests/sessions.py\", line 589, in request\n    resp = self.send(prep, **send_kwargs)\n  File \"app/{module}.py\", line {l}, in refresh\n    {id} = self._client.fetch_token(token_url, client_secret=self.client_secret)\nKeyError: '{id}'"
        ),
        1 => writeln!(
            out,
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings\n{id}\n  Field required [type=missing, input_value={{'debug': True}}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.7/v/missing"
        ),
        2 => writeln!(
            out,
            "    def test_{id}_rotation(client, user):\n        resp = client.post(\"/auth/refresh\", json={{\"{id}\": user.{id}}})\n>       assert resp.status_code == 200\nE       assert 401 == 200\nE        +  where 401 = <Response [401]>.status_code\n\ntests/test_{module}.py:{l}: AssertionError"
        ),
        _ => writeln!(
            out,
            "  File \"app/{module}.py\", line {l}, in __init__\n    self.{id}: Optional[str] = kwargs.get(\"{id}\") or os.environ[\"{}\"]\nTypeError: __init__() missing 1 required positional argument: '{id}'",
            id.to_uppercase()
        ),
    };
}

fn java_trace(rng: &mut Rng, out: &mut String) {
    let id = pascal(pick(rng, IDENTS));
    let l = rng.below(300) + 1;
    let _ = writeln!(
        out,
        "Exception in thread \"main\" java.lang.IllegalStateException: {id} has expired\n\tat com.acme.auth.{id}Service.validate({id}Service.java:{l})\n\tat com.acme.auth.JwtFilter.doFilterInternal(JwtFilter.java:54)\n\tat org.springframework.web.filter.OncePerRequestFilter.doFilter(OncePerRequestFilter.java:117)\nCaused by: io.jsonwebtoken.ExpiredJwtException: JWT expired at 2026-11-29T10:12:33Z. Current time: 2026-11-29T11:00:00Z, a difference of 2847000 milliseconds.\n\t... 42 more"
    );
}

fn go_panic(rng: &mut Rng, out: &mut String) {
    let id = pascal(pick(rng, IDENTS));
    let addr = rng.chars(HEX, 6);
    let _ = writeln!(
        out,
        "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x{addr}]\n\ngoroutine 1 [running]:\ngithub.com/acme/api/internal/auth.(*{id}Store).Get(0x0, {{0xc0000b4000, 0x24}})\n\t/src/api/internal/auth/store.go:42 +0x2a\nmain.main()\n\t/src/api/cmd/server/main.go:31 +0x1d4\nexit status 2"
    );
}

fn ci_log(rng: &mut Rng, out: &mut String) {
    let sec = rng.below(60);
    let frac = rng.below(10_000_000);
    let ts = format!("2026-11-29T10:12:{sec:02}.{frac:07}Z");
    let id = pick(rng, IDENTS);
    let _ = match rng.below(8) {
        0 => writeln!(
            out,
            "{ts} ##[group]Run actions/checkout@v4\n{ts} with:\n{ts}   repository: acme/widget\n{ts}   token: ***\n{ts}   ssh-strict: true\n{ts}   persist-credentials: true\n{ts} env:\n{ts}   NODE_AUTH_TOKEN: XXXXX-XXXXX-XXXXX-XXXXX\n{ts} ##[endgroup]"
        ),
        1 => writeln!(
            out,
            "npm ERR! code E401\nnpm ERR! Unable to authenticate, need: Basic realm=\"GitHub Package Registry\"\nnpm WARN config `//registry.npmjs.org/:_authToken` is set but the registry is not\nnpm WARN deprecated @secretlint/secretlint-rule-preset-recommend@8.1.0: use ^9.0.0\nadded 1032 packages, and audited 1033 packages in 21s"
        ),
        2 => writeln!(
            out,
            "Collecting cryptography>=41.0.0 (from secretstorage>=3.2->keyring>=15.1->twine)\n  Downloading cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl (4.6 MB)\nRequirement already satisfied: python-jose[cryptography]~=3.3 in ./venv/lib/python3.12/site-packages\nSuccessfully installed PyJWT-2.8.0 itsdangerous-2.2.0 secretstorage-3.3.3"
        ),
        3 => writeln!(
            out,
            "   Compiling secrecy v0.8.0\n   Compiling jsonwebtoken v9.3.0\n   Compiling token-cache v0.{}.1 (/src/widget/crates/token-cache)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 41.27s\n     Running unittests src/lib.rs (target/debug/deps/token_cache-{})",
            rng.below(9),
            rng.chars(HEX, 16)
        ),
        4 => writeln!(
            out,
            "  ● AuthService › refresh › rejects an expired {id}\n\n    expect(received).toEqual(expected) // deep equality\n\n    - Expected  - 1\n    + Received  + 1\n\n      Object {{\n    -   \"{id}\": Any<String>,\n    +   \"{id}\": undefined,\n      }}\n\n      at Object.<anonymous> (src/auth/__tests__/refresh.test.ts:{}:27)",
            rng.below(200)
        ),
        5 => writeln!(
            out,
            "FAILED tests/test_auth.py::test_{id}_is_rotated - KeyError: '{id}'\nFAILED tests/test_auth.py::test_login_with_bad_password - assert 403 == 401\n========================= 2 failed, 118 passed in 4.21s ========================="
        ),
        6 => writeln!(
            out,
            "{ts} Run cargo test --workspace\n{ts} env:\n{ts}   CARGO_TERM_COLOR: always\n{ts}   GITHUB_TOKEN: ***\n{ts}   {}: ${{{{ secrets.{} }}}}\n{ts} ##[error]Process completed with exit code 101.",
            id.to_uppercase(),
            id.to_uppercase()
        ),
        _ => writeln!(
            out,
            "{ts} Warning: The `set-output` command is deprecated and will be disabled soon.\n{ts} Post job cleanup.\n{ts} [command]/usr/bin/git config --local --name-only --get-regexp http\\.https\\:\\/\\/github\\.com\\/\\.extraheader\n{ts} http.https://github.com/.extraheader\n{ts} [command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader"
        ),
    };
}

/// Generated compiler errors, stack traces and CI logs, about `size` bytes.
pub fn generated_tool_output(seed: u64, size: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        match rng.below(10) {
            0..=3 => rust_error(&mut rng, &mut out),
            4 => ts_error(&mut rng, &mut out),
            5 => python_traceback(&mut rng, &mut out),
            6 => java_trace(&mut rng, &mut out),
            7 => go_panic(&mut rng, &mut out),
            _ => ci_log(&mut rng, &mut out),
        }
    }
    out
}
